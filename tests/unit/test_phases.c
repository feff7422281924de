/*
 * test_phases.c - each reduction phase (reducer/phase.h) against a fake
 * oracle (oracle_new_fake): the fake judges candidates in memory by a
 * rule the test picks ("faults while launch 2 is present", "faults while
 * gridDim.x >= 37"...), and the test checks that the phase ends where
 * that rule says it must.  No workers, no files besides the trace.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../common/strbuf.h"
#include "../../reducer/cand.h"
#include "../../reducer/oracle.h"
#include "../../reducer/phase.h"
#include "../../reducer/shrink.h"
#include "../../trace/trace.h"
#include "unit.h"

#define BUF_A 0x7f0000000000ull
#define BUF_B 0x7f0000100000ull
#define NLAUNCH 6
#define GRID_X 1000u
#define N_PARAM 1000u

/* The test trace: two 4 KiB buffers, 256 bytes copied into each (A: no
 * pointers; B: a pointer to A at byte 16), NLAUNCH launches of k(ptr, n)
 * (the last one faults), the fault.  Also a snapshot trace holding only
 * the two buffers. */
struct fixture {
	char path[64], snap_path[64];
	struct trace t, snap;
	long fault_event;
};

static void put_rec(struct trace_writer *w, const struct tr_rec *r, long *idx)
{
	long i = tw_record(w, r);
	CHECK(i >= 0);
	if (idx)
		*idx = i;
}

static void put_alloc(struct trace_writer *w, uint64_t addr)
{
	CHECK(tw_alloc(w, &(struct tr_alloc){ .addr = addr, .size = 4096, .kind = TR_MEM_DEVICE }) >= 0);
}

static void put_copy(struct trace_writer *w, uint64_t dst, const uint8_t *data, size_t n)
{
	CHECK(tw_h2d_data(w, &(struct tr_copy){ .dst = dst, .size = n }, data) >= 0);
}

static int open_path(char *path)
{
	int fd;
	strcpy(path, "/tmp/gpureduce-unit-XXXXXX");
	fd = mkstemp(path);
	if (fd >= 0)
		close(fd);
	return fd >= 0 ? 0 : -1;
}

static void fixture_make(struct fixture *f)
{
	struct trace_writer w = TRACE_WRITER_INIT;
	struct strbuf err = STRBUF_INIT;
	struct tr_param params[2] = { { 0, 8 }, { 8, 4 } };
	uint8_t args[NLAUNCH][12];
	uint8_t a[256], b[256];
	struct tr_rec r;
	uint64_t ptr = BUF_A + 64;

	memset(f, 0, sizeof(*f));
	for (int i = 0; i < 256; i++) {
		a[i] = (uint8_t)(i * 7 + 1);
		b[i] = (uint8_t)(i * 3 + 5);
	}
	memcpy(b + 16, &ptr, 8);
	CHECK(open_path(f->path) == 0);
	CHECK(tw_open(&w, f->path, &err) == 0);
	put_alloc(&w, BUF_A);
	put_alloc(&w, BUF_B);
	put_copy(&w, BUF_A, a, sizeof(a));
	put_copy(&w, BUF_B, b, sizeof(b));
	for (int k = 0; k < NLAUNCH; k++) {
		uint64_t p = BUF_A;
		uint32_t n = N_PARAM;
		memcpy(args[k], &p, 8);
		memcpy(args[k] + 8, &n, 4);
		memset(&r, 0, sizeof(r));
		r.type = TR_LAUNCH;
		r.u.launch.seq = (uint64_t)k;
		r.u.launch.name = "_Z1kPfi";
		r.u.launch.grid = (struct tr_dim3){ GRID_X, 1, 1 };
		r.u.launch.block = (struct tr_dim3){ 128, 1, 1 };
		r.u.launch.nparams = 2;
		r.u.launch.params = params;
		r.u.launch.argsize = 12;
		r.u.launch.args = args[k];
		put_rec(&w, &r, &f->fault_event);
	}
	memset(&r, 0, sizeof(r));
	r.type = TR_FAULT;
	r.u.fault.code = 700;
	r.u.fault.error = "CUDA_ERROR_ILLEGAL_ADDRESS";
	r.u.fault.api = "cuLaunchKernel";
	r.u.fault.launch_seq = NLAUNCH - 1;
	r.u.fault.at_launch = 1;
	r.u.fault.kernel = "_Z1kPfi";
	put_rec(&w, &r, NULL);
	CHECK(tw_close(&w) == 0);
	CHECK(trace_open(&f->t, f->path, TRACE_OPEN_STRICT, &err) == 0);

	CHECK(open_path(f->snap_path) == 0);
	w = (struct trace_writer)TRACE_WRITER_INIT;
	CHECK(tw_open(&w, f->snap_path, &err) == 0);
	put_alloc(&w, BUF_A);
	put_alloc(&w, BUF_B);
	CHECK(tw_close(&w) == 0);
	CHECK(trace_open(&f->snap, f->snap_path, TRACE_OPEN_STRICT, &err) == 0);
	sb_release(&err);
}

static void fixture_release(struct fixture *f)
{
	trace_release(&f->t);
	trace_release(&f->snap);
	unlink(f->path);
	unlink(f->snap_path);
}

/* ---- the fake's rules ---------------------------------------------------- */

enum rule { NEEDS_LAUNCH, NEEDS_GRID, NEEDS_BYTE, NEEDS_NONZERO_N, NEEDS_ALL_B, ANY_LAUNCH };

struct fake {
	enum rule rule;
	uint64_t k;              /* the launch seq, grid size or byte offset the rule needs */
	const struct trace *snap;
	long batches, tested;
	int lose;                /* every batch fails, as if the workers were lost */
	long faults;             /* candidates judged interesting: on a GPU each costs a worker */
};

static const struct item *last_launch(const struct cand *c)
{
	for (size_t i = c->n; i-- > 0;)
		if (c->it[i].rec.type == TR_LAUNCH)
			return &c->it[i];
	return NULL;
}

/* Byte `off` of the copy into B keeps its captured value. */
static int keeps_b_byte(const struct cand *c, uint64_t off)
{
	for (size_t i = 0; i < c->n; i++) {
		const struct item *it = &c->it[i];
		if (it->rec.type != TR_MEMCPY_H2D || it->rec.u.copy.dst != BUF_B)
			continue;
		if (it->data_mode == DATA_ORIG)
			return 1;
		for (size_t k = 0; it->data_mode == DATA_KEEP && k < it->nkeep; k++)
			if (off >= it->keep[k].off && off < it->keep[k].off + it->keep[k].len)
				return 1;
		return 0;
	}
	return 0;
}

static int judge(const struct fake *f, const struct cand *c)
{
	const struct item *last = last_launch(c);
	uint32_t n;

	/* every rule: the faulting launch is there, and last */
	if (!last || last->rec.u.launch.seq != NLAUNCH - 1)
		return 0;
	switch (f->rule) {
	case NEEDS_LAUNCH:
		for (size_t i = 0; i < c->n; i++)
			if (c->it[i].rec.type == TR_LAUNCH && c->it[i].rec.u.launch.seq == f->k)
				return 1;
		return 0;
	case NEEDS_GRID:
		return last->rec.u.launch.grid.x >= f->k;
	case NEEDS_BYTE:
		return keeps_b_byte(c, f->k);
	case NEEDS_NONZERO_N:
		memcpy(&n, last->rec.u.launch.args + 8, 4);
		return n != 0;
	case NEEDS_ALL_B:
		for (uint64_t off = 0; off < 256; off++)
			if (!keeps_b_byte(c, off))
				return 0;
		return 1;
	case ANY_LAUNCH:
		return 1;
	}
	return 0;
}

static int fake_test(void *arg, struct cand *const *cands, size_t k, int *interesting)
{
	struct fake *f = arg;
	f->batches++;
	if (f->lose)
		return -1;
	for (size_t i = 0; i < k; i++) {
		interesting[i] = judge(f, cands[i]);
		f->faults += interesting[i];
		f->tested++;
	}
	return 0;
}

static const struct trace *fake_snapshot(void *arg, long at, int mode)
{
	const struct fake *f = arg;
	return f->snap;
}

/* Run one phase against the fake; *best starts as the whole trace unless
 * it already holds something. */
typedef void (*void_phase)(struct oracle *, const struct shrink_opts *, struct cand *);

static struct oracle *fake_oracle(struct fixture *fx, struct fake *f, struct shrink_opts *opts,
				  struct shrink_report *rep, struct strbuf *err, int strategy)
{
	struct oracle_fake fk = { fake_test, fake_snapshot, f, 0 };
	memset(opts, 0, sizeof(*opts));
	memset(rep, 0, sizeof(*rep));
	opts->jobs = 4;
	opts->strategy = strategy;
	opts->quiet = 1;
	opts->workdir = "/tmp";
	opts->guard = -1;
	f->snap = &fx->snap;
	fk.fault_event = fx->fault_event;
	return oracle_new_fake(&fx->t, opts, rep, err, &fk);
}

static size_t count_launches(const struct cand *c)
{
	return cand_count(c, TR_LAUNCH);
}

/* One test's pieces: the fixture, the fake's rule, options, report, the
 * current best candidate (the whole trace at first) and the oracle. */
struct rig {
	struct fixture fx;
	struct fake f;
	struct shrink_opts opts;
	struct shrink_report rep;
	struct strbuf err;
	struct cand best;
	struct oracle *o;
};

static void rig_open(struct rig *g, struct fake f, int strategy)
{
	fixture_make(&g->fx);
	g->f = f;
	g->err = (struct strbuf)STRBUF_INIT;
	g->best = (struct cand)CAND_INIT;
	g->o = fake_oracle(&g->fx, &g->f, &g->opts, &g->rep, &g->err, strategy);
	cand_add_all(&g->best, &g->fx.t);
}

/* A fresh oracle (and report) for the same fixture; best as it is. */
static void rig_reopen(struct rig *g, int strategy)
{
	oracle_release(g->o);
	g->o = fake_oracle(&g->fx, &g->f, &g->opts, &g->rep, &g->err, strategy);
}

/* best back to the whole trace */
static void rig_restart(struct rig *g)
{
	cand_release(&g->best);
	cand_add_all(&g->best, &g->fx.t);
}

static void rig_close(struct rig *g)
{
	oracle_release(g->o);
	cand_release(&g->best);
	sb_release(&g->err);
	fixture_release(&g->fx);
}

/* ---- the tests ------------------------------------------------------------ */

UNIT_TEST(phase_slice_one_launch_against_fake)
{
	struct rig g;
	struct fake f = { ANY_LAUNCH, 0, NULL, 0, 0, 0, 0 };
	struct cand plain = CAND_INIT;

	rig_open(&g, f, STRATEGY_FULL);
	CHECK(phase_slice(g.o, &g.opts, &g.best, &plain) == 1);
	CHECK_EQ_U(plain.n, 0);   /* no copies: no zeros planned, none kept */
	CHECK_EQ_U(count_launches(&g.best), 1);
	CHECK(last_launch(&g.best) && last_launch(&g.best)->rec.u.launch.seq == NLAUNCH - 1);
	CHECK_EQ_U(cand_count(&g.best, TR_FAULT), 1);
	CHECK_EQ_U(cand_count(&g.best, TR_ALLOC), 2);     /* from the snapshot */
	CHECK_EQ_U(cand_count(&g.best, TR_MEMCPY_H2D), 0);
	CHECK_EQ_U(g.rep.nphases, 1);
	CHECK_STR(g.rep.phase[0].name, "slice");
	CHECK_EQ_U(g.rep.phase[0].candidates, 1);

	/* a fault that needs launch 2 is lost by the slice: *best stays */
	g.f.rule = NEEDS_LAUNCH;
	g.f.k = 2;
	rig_reopen(&g, STRATEGY_FULL);
	CHECK(phase_slice(g.o, &g.opts, &g.best, &plain) == 0);
	CHECK_EQ_U(count_launches(&g.best), 1);
	rig_restart(&g);
	rig_reopen(&g, STRATEGY_FULL);
	CHECK(phase_slice(g.o, &g.opts, &g.best, &plain) == 0);
	CHECK_EQ_U(count_launches(&g.best), NLAUNCH);
	cand_release(&plain);
	rig_close(&g);
}

static void launches_keep_k(int strategy)
{
	struct rig g;
	struct fake f = { NEEDS_LAUNCH, 2, NULL, 0, 0, 0, 0 };

	rig_open(&g, f, strategy);
	phase_launches(g.o, &g.opts, &g.best);
	/* 1-minimal: launch 2 and the faulting one */
	CHECK_EQ_U(count_launches(&g.best), 2);
	for (size_t i = 0; i < g.best.n; i++)
		if (g.best.it[i].rec.type == TR_LAUNCH)
			CHECK(g.best.it[i].rec.u.launch.seq == 2 || g.best.it[i].rec.u.launch.seq == NLAUNCH - 1);
	CHECK(judge(&g.f, &g.best));
	CHECK_EQ_U(cand_count(&g.best, TR_ALLOC), 2);
	CHECK_EQ_U(cand_count(&g.best, TR_FAULT), 1);
	CHECK_STR(g.rep.phase[0].name, "ddmin-launches");
	CHECK_STR(g.rep.phase[0].outcome, "1-minimal");
	CHECK(g.rep.candidates == g.f.tested && g.f.tested > 0);
	rig_close(&g);
}

UNIT_TEST(phase_launches_keeps_the_needed_launch)
{
	launches_keep_k(STRATEGY_FULL);
	launches_keep_k(STRATEGY_BASELINE);
}

UNIT_TEST(phase_grid_ends_at_the_smallest_faulting_size)
{
	struct rig g;
	struct fake f = { NEEDS_GRID, 37, NULL, 0, 0, 0, 0 };

	rig_open(&g, f, STRATEGY_FULL);
	phase_grid(g.o, &g.opts, &g.best);
	CHECK(last_launch(&g.best) != NULL);
	if (last_launch(&g.best)) {
		CHECK_EQ_U(last_launch(&g.best)->rec.u.launch.grid.x, 37);
		CHECK_EQ_U(last_launch(&g.best)->rec.u.launch.grid.y, 1);
	}
	CHECK_STR(g.rep.phase[0].outcome, "grid reduced");
	/* one size a round, 3/10 up the range: far fewer rounds than a linear
	 * walk; the first is the one-block grid alone (clean here) */
	CHECK(g.f.batches > 1 && g.f.batches < 30);
	CHECK(g.f.tested > g.f.faults);

	/* whatever the threshold, it ends there, and a fault narrows the range
	 * to 3/10 of it: at most 7 faulting sizes in 1000 (four evenly spaced
	 * sizes a round took 10 for 37: 200-800, 40-160, 38, 37) */
	{
		unsigned worst = 0, off = 0;
		for (uint64_t k = 2; k <= GRID_X; k += 37) {
			g.f.k = k;
			g.f.tested = g.f.faults = 0;
			rig_restart(&g);
			rig_reopen(&g, STRATEGY_FULL);
			phase_grid(g.o, &g.opts, &g.best);
			off += !last_launch(&g.best) || last_launch(&g.best)->rec.u.launch.grid.x != k;
			if (g.f.faults > worst)
				worst = (unsigned)g.f.faults;
		}
		CHECK_EQ_U(off, 0);
		CHECK(worst <= 7);
		fprintf(stderr, "    thresholds 2..1000 (every 37th): at most %u faulting sizes\n", worst);
	}

	/* two million blocks, the last 16 faulting (int32 offsets that wrap):
	 * the search ends within 1/1024 of the threshold, in far fewer rounds
	 * than walking to it (41 candidates: 1 + 40 clean probes 3/10 up) */
	{
		struct item *it = NULL;
		g.f.k = (1u << 21) + 1;
		g.f.tested = g.f.faults = 0;
		rig_restart(&g);
		for (size_t i = g.best.n; i-- > 0 && !it;)
			if (g.best.it[i].rec.type == TR_LAUNCH)
				it = &g.best.it[i];
		it->rec.u.launch.grid.x = (1u << 21) + 16;
		rig_reopen(&g, STRATEGY_FULL);
		phase_grid(g.o, &g.opts, &g.best);
		CHECK(last_launch(&g.best) != NULL);
		if (last_launch(&g.best)) {
			uint32_t x = last_launch(&g.best)->rec.u.launch.grid.x;
			CHECK(x >= (1u << 21) + 1 && x <= (1u << 21) + 16);
		}
		CHECK(g.f.tested <= 24);
		fprintf(stderr, "    2097168 blocks, the last 16 faulting: %ld candidates\n", (long)g.f.tested);
	}

	/* every grid faults (one block is enough): the one-block grid is
	 * tried first and is the only candidate, one fault in all */
	g.f.k = 1;
	g.f.tested = g.f.faults = 0;
	rig_restart(&g);
	rig_reopen(&g, STRATEGY_FULL);
	phase_grid(g.o, &g.opts, &g.best);
	if (last_launch(&g.best))
		CHECK_EQ_U(last_launch(&g.best)->rec.u.launch.grid.x, 1);
	CHECK_EQ_U(g.f.tested, 1);
	CHECK_EQ_U(g.f.faults, 1);
	CHECK_STR(g.rep.phase[0].outcome, "grid reduced (one block)");
	rig_close(&g);
}

static const struct item *copy_into(const struct cand *c, uint64_t dst)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->it[i].rec.type == TR_MEMCPY_H2D && c->it[i].rec.u.copy.dst == dst)
			return &c->it[i];
	return NULL;
}

/* The data phase on the whole trace under rule (k), the copies into A and
 * B after it in *a and *b: 1 when both are there. */
static int data_phase_on(struct rig *g, enum rule rule, uint64_t k, const struct item **a, const struct item **b)
{
	struct fake f = { rule, k, NULL, 0, 0, 0, 0 };

	rig_open(g, f, STRATEGY_FULL);
	phase_data(g->o, &g->opts, &g->best);
	*a = copy_into(&g->best, BUF_A);
	*b = copy_into(&g->best, BUF_B);
	CHECK(*a && *b);
	return *a && *b;
}

UNIT_TEST(phase_data_replaces_what_the_fault_ignores)
{
	struct rig g;
	const struct item *a, *b;
	uint64_t kept = 0;
	int ptr_kept = 0, byte_kept = 0;

	if (data_phase_on(&g, NEEDS_BYTE, 40, &a, &b)) {
		/* A: the fault does not care: zeros */
		CHECK_EQ_U(a->data_mode, DATA_ZERO);
		/* B: holds a pointer (byte 16), so only the chunk search; the
		 * word the fault needs (byte 40) and the pointer word stay */
		CHECK_EQ_U(b->data_mode, DATA_KEEP);
		for (size_t k = 0; k < b->nkeep; k++) {
			kept += b->keep[k].len;
			ptr_kept |= b->keep[k].off <= 16 && b->keep[k].off + b->keep[k].len >= 24;
			byte_kept |= b->keep[k].off <= 40 && b->keep[k].off + b->keep[k].len > 40;
		}
		CHECK(ptr_kept);
		CHECK(byte_kept);
		CHECK_EQ_U(kept, 16);
	}
	CHECK(judge(&g.f, &g.best));
	CHECK_STR(g.rep.phase[0].outcome, "contents replaced");
	rig_close(&g);
}

/* Every word of B's copy is needed: the copy stays as captured (not
 * rewritten as zeros with all of its bytes written back, which would
 * change the trace's bytes and not its meaning, and make verify run the
 * final trace again instead of recalling the candidate that faulted). */
UNIT_TEST(phase_data_leaves_a_copy_it_needs_whole)
{
	struct rig g;
	const struct item *a, *b;

	if (data_phase_on(&g, NEEDS_ALL_B, 0, &a, &b)) {
		CHECK_EQ_U(a->data_mode, DATA_ZERO);
		CHECK_EQ_U(b->data_mode, DATA_ORIG);
		CHECK_EQ_U(b->nkeep, 0);
	}
	CHECK(judge(&g.f, &g.best));
	CHECK_STR(g.rep.phase[0].outcome, "contents replaced");
	rig_close(&g);
}

UNIT_TEST(phase_scalars_zero_or_one_never_pointers)
{
	struct rig g;
	struct fake f = { ANY_LAUNCH, 0, NULL, 0, 0, 0, 0 };
	uint64_t p = 0;
	uint32_t n = 99;

	/* the fault ignores n: n becomes 0; the pointer stays */
	rig_open(&g, f, STRATEGY_FULL);
	phase_scalars(g.o, &g.opts, &g.best);
	memcpy(&p, last_launch(&g.best)->rec.u.launch.args, 8);
	memcpy(&n, last_launch(&g.best)->rec.u.launch.args + 8, 4);
	CHECK_EQ_U(p, BUF_A);
	CHECK_EQ_U(n, 0);
	CHECK_STR(g.rep.phase[0].outcome, "scalars simplified");

	/* the fault needs n != 0: n becomes 1 (a fresh oracle: the old one
	 * frees the args it changed, so best starts again from the trace) */
	g.f.rule = NEEDS_NONZERO_N;
	rig_reopen(&g, STRATEGY_FULL);
	rig_restart(&g);
	phase_scalars(g.o, &g.opts, &g.best);
	memcpy(&p, last_launch(&g.best)->rec.u.launch.args, 8);
	memcpy(&n, last_launch(&g.best)->rec.u.launch.args + 8, 4);
	CHECK_EQ_U(p, BUF_A);
	CHECK_EQ_U(n, 1);
	rig_close(&g);
}

UNIT_TEST(phase_grid_stops_when_the_workers_are_lost)
{
	struct rig g;
	struct fake f = { NEEDS_GRID, 37, NULL, 0, 0, 1, 0 };

	rig_open(&g, f, STRATEGY_FULL);
	phase_grid(g.o, &g.opts, &g.best);
	CHECK(oracle_failed(g.o));
	CHECK(oracle_stopped(g.o));
	CHECK_EQ_U(g.f.batches, 1);    /* no second batch after the loss */
	if (last_launch(&g.best))
		CHECK_EQ_U(last_launch(&g.best)->rec.u.launch.grid.x, GRID_X);
	CHECK_STR(g.rep.phase[0].outcome, "grid kept");
	rig_close(&g);
}
