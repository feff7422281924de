/*
 * hunt.c - the search of `gpureduce hunt` (hunt.h): replay a trace with a
 * guard at the end of every allocator block (rounded size) and of every
 * allocation, then at the start, collecting each launch that faults and
 * leaving it out of the next replay, with the later launches from its call
 * site (its repeats: a training loop launches one buggy kernel every step).
 * Trace-to-trace work (rootcause.c writes the traces) and replays through
 * the worker pool; no CUDA here.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../addr/memmap.h"
#include "../addr/place.h"
#include "../common/strbuf.h"
#include "../common/util.h"
#include "../trace/trace.h"
#include "hunt.h"
#include "oracle.h"
#include "../addr/params.h"
#include "../replay/pool.h"

/* Blockify t with rounded sizes, r->skip[0, nskip) left out, cut at `cut`
 * (NULL: to the end). */
static int write_hunt_trace(const struct trace *t, const struct hunt_result *r, size_t nskip,
			    const struct rc_cut *cut, const char *path, struct rc_stats *st, struct strbuf *err)
{
	struct rc_opts ro = { 1, 1, r->skip, nskip };
	return rc_blockify_opts(t, path, cut, &ro, st, err);
}

static const struct tr_launch *launch_of(const struct trace *t, uint64_t seq, size_t *at);

static int str_eq(const char *a, const char *b)
{
	return !strcmp(a ? a : "", b ? b : "");
}

/* 1 when launches a and b come from the same call site: the same kernel and
 * the same Python stack (file and line of every frame); launches without
 * frames (a C++ program) match on the kernel alone. */
static int same_site(const struct tr_launch *a, const struct tr_launch *b)
{
	if (!a->name || !b->name || strcmp(a->name, b->name) || a->nframes != b->nframes)
		return 0;
	for (uint32_t i = 0; i < a->nframes; i++)
		if (a->frames[i].line != b->frames[i].line || !str_eq(a->frames[i].file, b->frames[i].file))
			return 0;
	return 1;
}

/* Append to skip[0, *n) (capacity *cap, grown) every launch after launch
 * seq that comes from its call site (same_site) and is not in it yet.
 * *crash_in is set when crash_seq (the trace's own fault, -1: none) is one
 * of those.  Returns how many were appended. */
static size_t skip_repeats(const struct trace *t, uint64_t seq, long crash_seq, uint64_t **skip, size_t *n,
			   size_t *cap, int *crash_in)
{
	size_t at = 0, n0 = *n;
	const struct tr_launch *f = launch_of(t, seq, &at);
	uint64_t *sorted;
	if (!f)
		return 0;
	sorted = xmalloc((n0 ? n0 : 1) * sizeof(*sorted));
	if (n0)
		memcpy(sorted, *skip, n0 * sizeof(*sorted));
	qsort(sorted, n0, sizeof(*sorted), u64_cmp);
	for (size_t i = at + 1; i < t->nrec; i++) {
		const struct tr_launch *l = &t->rec[i].u.launch;
		if (t->rec[i].type != TR_LAUNCH || (l->flags & TR_F_CAPTURED) || !same_site(f, l) ||
		    bsearch(&l->seq, sorted, n0, sizeof(*sorted), u64_cmp))
			continue;
		ALLOC_GROW(*skip, *n + 1, *cap);
		(*skip)[(*n)++] = l->seq;
		if (crash_seq >= 0 && (uint64_t)crash_seq == l->seq)
			*crash_in = 1;
	}
	free(sorted);
	return *n - n0;
}

/* Replay path once under `guard`. */
static int replay_once(struct pool *p, const char *path, int guard, struct replay_result *res,
		       struct strbuf *err)
{
	struct job job;
	memset(&job, 0, sizeof(job));
	job.trace = path;
	job.opts = (struct replay_opts)REPLAY_OPTS_INIT;
	job.opts.guard = guard;
	if (pool_run(p, &job, 1, err) < 0)
		return -1;
	*res = job.res;
	return 0;
}

/* Fill f (a finding or a note) from the launch res faulted in under
 * `guard` and leave it out of the next replays, appending to skip[0, *n)
 * (capacity *cap): its seq, then its repeats unless o->every_launch. */
static void record_fault(const struct trace *t, const struct hunt_opts *o, struct hunt_finding *f,
			 const struct replay_result *res, int guard, long crash_seq, uint64_t **skip, size_t *n,
			 size_t *cap)
{
	const struct tr_launch *l;
	memset(f, 0, sizeof(*f));
	f->seq = (uint64_t)res->launch_seq;
	f->guard = guard;
	f->code = res->code;
	snprintf(f->error, sizeof(f->error), "%s", res->error);
	snprintf(f->kernel, sizeof(f->kernel), "%s", res->kernel);
	f->is_crash = crash_seq >= 0 && (uint64_t)crash_seq == f->seq;
	f->nskip = *n;
	l = launch_of(t, f->seq, NULL);
	f->has_frames = l && l->nframes > 0;
	ALLOC_GROW(*skip, *n + 1, *cap);
	(*skip)[(*n)++] = f->seq;
	if (!o->every_launch)
		f->repeats = skip_repeats(t, f->seq, crash_seq, skip, n, cap, &f->crash_repeat);
}

/* Record the launch res faulted in as a finding (record_fault). */
static void add_finding(const struct trace *t, const struct hunt_opts *o, struct hunt_result *r,
			const struct replay_result *res, int guard, long crash_seq)
{
	r->f = xrealloc(r->f, (r->n + 1) * sizeof(*r->f));
	record_fault(t, o, &r->f[r->n++], res, guard, crash_seq, &r->skip, &r->nskip, &r->askip);
}

/* One placement's pass: replay, and on each fault leave the launch out and
 * replay again.  1 when the bound was reached, 0 when it ran clean (or
 * stopped for a reason put in r->note), -1 on an error. */
static int hunt_pass(const struct trace *t, struct pool *p, const struct hunt_opts *o, int guard,
		     long crash_seq, struct hunt_result *r, struct strbuf *err)
{
	struct strbuf path = STRBUF_INIT;
	struct replay_result res;
	struct rc_stats st;
	int ret = -1;
	for (;;) {
		if (r->n >= (size_t)o->max_findings) {
			ret = 1;
			break;
		}
		sb_reset(&path);
		sb_addf(&path, "%s/hunt-%zu.bin", o->workdir, r->replays);
		if (write_hunt_trace(t, r, r->nskip, NULL, path.buf, &st, err) < 0)
			goto out;
		if (r->replays == 0)
			r->st = st;
		if (replay_once(p, path.buf, guard, &res, err) < 0)
			goto out;
		r->replays++;
		if (!o->keep)
			remove(path.buf);
		if (res.status == RS_CLEAN) {
			ret = 0;
			break;
		}
		if (res.status != RS_FAULT || res.launch_seq < 0) {
			snprintf(r->note, sizeof(r->note), "%s placement: replay %s%s%s", place_guard_name(guard),
				 replay_status_name(res.status), res.msg[0] ? ": " : "", res.msg);
			ret = 0;
			break;
		}
		add_finding(t, o, r, &res, guard, crash_seq);
	}
out:
	sb_release(&path);
	return ret;
}

/* The tensor-ends pass: guards at each block's requested end (as shrink
 * --root-cause places them), every finding and its repeats left out; each
 * launch that faults is a note, left out of the next replay with its
 * repeats (unless o->every_launch).  0 or -1. */
static int tensor_end_pass(const struct trace *t, struct pool *p, const struct hunt_opts *o,
			   struct hunt_result *r, struct strbuf *err)
{
	struct strbuf path = STRBUF_INIT;
	size_t nskip = r->nskip, askip = r->nskip;
	uint64_t *skip = xmalloc((askip ? askip : 1) * sizeof(*skip));
	struct replay_result res;
	struct rc_stats st;
	int ret = -1;
	if (nskip)
		memcpy(skip, r->skip, nskip * sizeof(*skip));
	while (r->nnotes < (size_t)o->max_findings) {
		struct rc_opts ro = { 0, 1, skip, nskip };
		sb_reset(&path);
		sb_addf(&path, "%s/hunt-%zu.bin", o->workdir, r->replays);
		if (rc_blockify_opts(t, path.buf, NULL, &ro, &st, err) < 0 ||
		    replay_once(p, path.buf, GUARD_END, &res, err) < 0)
			goto out;
		r->replays++;
		if (!o->keep)
			remove(path.buf);
		if (res.status != RS_FAULT || res.launch_seq < 0)
			break;
		r->notes = xrealloc(r->notes, (r->nnotes + 1) * sizeof(*r->notes));
		record_fault(t, o, &r->notes[r->nnotes++], &res, GUARD_END, -1, &skip, &nskip, &askip);
	}
	ret = 0;
out:
	free(skip);
	sb_release(&path);
	return ret;
}

int hunt_run(const struct trace *t, const struct hunt_opts *o, struct hunt_result *r, struct strbuf *err)
{
	struct pool *p;
	long crash = oracle_fault_record(t);
	long crash_seq = crash >= 0 ? (long)t->rec[crash].u.fault.launch_seq : -1;
	double t0 = now_sec();
	int ret = -1, k;

	memset(r, 0, sizeof(*r));
	r->has_blocks = rc_has_blocks(t);
	p = pool_create(1, 0, o->timeout, err);
	if (!p)
		return -1;
	k = hunt_pass(t, p, o, GUARD_END, crash_seq, r, err);
	if (k == 0 && o->start_pass && !r->note[0])
		k = hunt_pass(t, p, o, GUARD_START, crash_seq, r, err);
	if (k < 0)
		goto out;
	r->bounded = k == 1;
	if (o->tensor_ends && r->has_blocks && tensor_end_pass(t, p, o, r, err) < 0)
		goto out;
	ret = 0;
out:
	r->seconds = now_sec() - t0;
	pool_release(p);
	return ret;
}

int hunt_cut(const struct trace *t, const struct hunt_result *r, size_t k, const char *path,
	     struct strbuf *err)
{
	const struct hunt_finding *f = &r->f[k];
	struct rc_cut cut = { f->seq, (uint32_t)f->code, f->error, f->kernel };
	struct rc_stats st;
	return write_hunt_trace(t, r, f->nskip, &cut, path, &st, err);
}

static const struct tr_launch *launch_of(const struct trace *t, uint64_t seq, size_t *at)
{
	for (size_t i = 0; i < t->nrec; i++)
		if (t->rec[i].type == TR_LAUNCH && t->rec[i].u.launch.seq == seq &&
		    !(t->rec[i].u.launch.flags & TR_F_CAPTURED)) {
			if (at)
				*at = i;
			return &t->rec[i].u.launch;
		}
	return NULL;
}

void hunt_python_line(const struct trace *t, uint64_t seq, struct strbuf *out)
{
	const struct tr_launch *l = launch_of(t, seq, NULL);
	const struct tr_frame *pick = NULL;
	for (uint32_t i = 0; l && i < l->nframes; i++) {
		const struct tr_frame *fr = &l->frames[i];
		if (!fr->file || !*fr->file)
			continue;
		if (!pick)
			pick = fr;
		if (!strstr(fr->file, "site-packages") && !strstr(fr->file, "/torch/") &&
		    !strstr(fr->file, "/triton/")) {
			pick = fr;
			break;
		}
	}
	if (pick)
		sb_addf(out, "%s:%u in %s", pick->file, pick->line, pick->func ? pick->func : "?");
}

void hunt_test_of(const struct trace *t, uint64_t seq, struct strbuf *out)
{
	size_t at = 0;
	const char *name = NULL;
	if (!launch_of(t, seq, &at))
		return;
	for (size_t i = 0; i < at; i++)
		if (t->rec[i].type == TR_NOTE && t->rec[i].u.note.text &&
		    !strncmp(t->rec[i].u.note.text, "test: ", 6))
			name = t->rec[i].u.note.text + 6;
	if (name)
		sb_adds(out, name);
}

/* "tensor 0x.. (N B of a R-byte block, allocated at f:l in fn)" */
static void name_block(struct strbuf *o, const struct tr_block *b)
{
	char sz[32], al[32];
	sb_addf(o, "tensor 0x%llx (%s", (unsigned long long)b->addr, fmt_bytes(b->size, sz));
	if (b->alloc_size > b->size)
		sb_addf(o, " in a %s block", fmt_bytes(b->alloc_size, al));
	if (b->file && *b->file)
		sb_addf(o, ", allocated at %s:%u in %s)", b->file, b->line, b->func ? b->func : "?");
	else
		sb_adds(o, ", allocated before recording began)");
}

/* What pointer word v of launch seq points into: a block, else an allocation. */
static void name_target(const struct trace *t, uint64_t seq, uint64_t v, struct strbuf *o)
{
	struct tr_block b;
	struct memmap mm = MEMMAP_INIT;
	struct mm_alloc *a;
	char sz[32];
	int dead = 0;
	if (rc_block_at(t, seq, v, &b) == 0) {
		name_block(o, &b);
		return;
	}
	for (size_t i = 0; i < t->nrec; i++) {
		if (t->rec[i].type == TR_LAUNCH && t->rec[i].u.launch.seq == seq)
			break;
		memmap_feed(&mm, &t->rec[i], (long)i);
	}
	a = memmap_lookup(&mm, v, &dead);
	if (a)
		sb_addf(o, "allocation 0x%llx (%s%s)", (unsigned long long)a->addr, fmt_bytes(a->size, sz),
			dead ? ", freed" : "");
	else
		sb_adds(o, "no recorded buffer");
	memmap_release(&mm);
}

/* "; N later launches of it from the same line left out (...)" when f has
 * repeats (add_finding). */
static void describe_repeats(const struct hunt_finding *f, struct strbuf *out)
{
	const char *s = f->repeats == 1 ? "" : "es";
	if (!f->repeats)
		return;
	if (f->has_frames)
		sb_addf(out, "; %zu later launch%s of it from the same line left out", f->repeats, s);
	else
		sb_addf(out, "; %zu later launch%s of the same kernel left out", f->repeats, s);
	if (f->crash_repeat)
		sb_adds(out, ", the trace's own fault among them");
	sb_addf(out, " (%s--every-launch hunts each)",
		f->has_frames ? "" : "no Python line recorded to tell them apart; ");
}

void hunt_describe(const struct trace *t, const struct hunt_finding *f, struct strbuf *out)
{
	const struct tr_launch *l = launch_of(t, f->seq, NULL);
	char *k = params_demangle(f->kernel);
	struct strbuf py = STRBUF_INIT;
	const char *access = "accessed";
	char dist[80];
	int p = rc_diag_param(f->diag, dist, sizeof(dist), &access);

	hunt_python_line(t, f->seq, &py);
	sb_addf(out, "launch #%llu %s", (unsigned long long)f->seq, k);
	if (py.len)
		sb_addf(out, " at %s", py.buf);
	sb_addf(out, " faulted under %s guards (%s)", f->guard == GUARD_START ? "start" : "end", f->error);
	if (f->is_crash)
		sb_adds(out, " [the trace's own fault]");
	if (p >= 0 && l && (uint32_t)p < l->nparams && l->params[p].size >= 8) {
		uint64_t v;
		memcpy(&v, l->args + l->params[p].offset, 8);
		sb_addf(out, ": %s %s %s of param %d = ", access, dist,
			f->guard == GUARD_START ? "before the start" : "past the end", p);
		name_target(t, f->seq, v, out);
	} else {
		int any = 0;
		sb_adds(out, ": how far past which buffer is unknown without compute-sanitizer; its buffers: ");
		for (uint32_t q = 0; l && q < l->nparams; q++) {
			uint64_t v;
			if (l->params[q].size != 8)
				continue;
			memcpy(&v, l->args + l->params[q].offset, 8);
			if (v < 65536)
				continue;
			sb_addf(out, "%sparam %u = ", any++ ? "; " : "", q);
			name_target(t, f->seq, v, out);
		}
		if (!any)
			sb_adds(out, "none recorded");
	}
	describe_repeats(f, out);
	sb_release(&py);
	free(k);
}

void hunt_describe_note(const struct trace *t, const struct hunt_finding *f, struct strbuf *out)
{
	const struct tr_launch *l = launch_of(t, f->seq, NULL);
	char *k = params_demangle(f->kernel);
	struct strbuf py = STRBUF_INIT;
	int any = 0;
	hunt_python_line(t, f->seq, &py);
	sb_addf(out, "launch #%llu %s", (unsigned long long)f->seq, k);
	if (py.len)
		sb_addf(out, " at %s", py.buf);
	sb_adds(out, " goes past a tensor's requested bytes but stays within its allocator block (legal under "
		"the caching allocator: vectorised tails, padding; not reported as a bug)");
	for (uint32_t q = 0; l && q < l->nparams; q++) {
		struct tr_block b;
		uint64_t v;
		if (l->params[q].size != 8)
			continue;
		memcpy(&v, l->args + l->params[q].offset, 8);
		if (v < 65536 || rc_block_at(t, f->seq, v, &b) < 0 || b.alloc_size <= b.size)
			continue;
		sb_addf(out, "%sparam %u = ", any++ ? "; " : ": ", q);
		name_block(out, &b);
	}
	describe_repeats(f, out);
	sb_release(&py);
	free(k);
}

void hunt_result_release(struct hunt_result *r)
{
	if (!r)
		return;
	free(r->notes);
	free(r->skip);
	for (size_t i = 0; i < r->n; i++)
		free(r->f[i].diag);
	free(r->f);
	memset(r, 0, sizeof(*r));
}
