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
#include "lastslice.h"
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

static int in_list(const uint64_t *a, size_t n, uint64_t v)
{
	for (size_t i = 0; i < n; i++)
		if (a[i] == v)
			return 1;
	return 0;
}

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

/*
 * A pass's replays all run one trace, blockified once (hunt-base.bin, or
 * hunt-ends.bin for the tensor-ends pass), each with a file of the
 * launches it leaves out (hunt-N.skip, replay_opts.skip_path): the replay
 * leaves them out as rc_blockify's skip list would (tests/cli/t5100), and
 * the trace is not written again for every replay (0.66 s for a
 * 7665-launch trace on the build machine, against ~1.5 s a replay of such
 * a loop on the H200).
 */
static int write_skips(const char *path, const uint64_t *a, size_t na, const uint64_t *b, size_t nb,
		       struct strbuf *err)
{
	struct strbuf t = STRBUF_INIT;
	int ret;
	for (size_t i = 0; i < na; i++)
		sb_addf(&t, "%llu\n", (unsigned long long)a[i]);
	for (size_t i = 0; i < nb; i++)
		sb_addf(&t, "%llu\n", (unsigned long long)b[i]);
	ret = write_file(path, t.buf, t.len, err);
	sb_release(&t);
	return ret;
}

/* Whether hunt's replays recycle freed blocks' ranges (replay.h): yes
 * unless GPUREDUCE_HUNT_RECYCLE=0 (side-by-side measurements). */
static int recycle_on(void)
{
	const char *e = getenv("GPUREDUCE_HUNT_RECYCLE");
	return !(e && !strcmp(e, "0"));
}

/* A job: base under `guard`, leaving out a[0, na) and b[0, nb), whose list
 * goes to workdir/hunt-N.skip (N: serial, the replay's number; its path in
 * *skip). */
static int prepare_job(struct job *j, const struct hunt_opts *o, const char *base, int guard, size_t serial,
		       const uint64_t *a, size_t na, const uint64_t *b, size_t nb, struct strbuf *skip,
		       struct strbuf *err)
{
	sb_reset(skip);
	sb_addf(skip, "%s/hunt-%zu.skip", o->workdir, serial);
	if (write_skips(skip->buf, a, na, b, nb, err) < 0)
		return -1;
	memset(j, 0, sizeof(*j));
	j->trace = base;
	j->opts = (struct replay_opts)REPLAY_OPTS_INIT;
	j->opts.guard = guard;
	j->opts.skip_path = skip->buf;
	j->opts.recycle = recycle_on();   /* a freed block's range for the next of its size (replay.h) */
	return 0;
}

/* How a replay runs: under guard, a[0, na) and b[0, nb) left out
 * (hunt_pass: its skips; hunt_both's start pass: the end pass's, then
 * its own). */
struct replay_way {
	int guard;
	const uint64_t *a, *b;
	size_t na, nb;
};

/* Replay trace once `way`, to its end or (stop_before >= 0) to that
 * record; the skip list's file goes unless o->keep. */
static int replay_once(struct pool *p, const struct hunt_opts *o, const char *trace, const struct replay_way *way,
		       long stop_before, size_t serial, struct replay_result *res, struct strbuf *err)
{
	struct strbuf sp = STRBUF_INIT;
	struct job job;
	int ret = -1;
	if (prepare_job(&job, o, trace, way->guard, serial, way->a, way->na, way->b, way->nb, &sp, err) < 0)
		goto out;
	job.opts.stop_before = stop_before;
	if (pool_run(p, &job, 1, err) < 0)
		goto out;
	*res = job.res;
	ret = 0;
out:
	if (!o->keep && sp.len)
		remove(sp.buf);
	sb_release(&sp);
	return ret;
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

/* r->note for a replay under `guard` that neither ran clean nor faulted. */
static void note_replay(struct hunt_result *r, int guard, const struct replay_result *res)
{
	snprintf(r->note, sizeof(r->note), "%s placement: replay %s%s%.511s", place_guard_name(guard),
		 replay_status_name(res->status), res->msg[0] ? ": " : "", res->msg);
}

/*
 * The integer check.  A by-value struct (or a parameter's padding) may put
 * a 4-byte integer beside 4 bytes the host never set; read as one word,
 * {64, high half of a stack address} = 0x00007fd5_00000040 can fall inside
 * a device allocation, and replay "relocates" it: the kernel then reads an
 * address's low half as its integer and runs far out of bounds, a fault
 * the program never had.  The decoder leaves such a word alone when any
 * launch of the kernel shows a small value there (trace_mark_nonptr); when
 * none does (cuDNN's layout kernels in some runs, 2026-12-04), hunt checks
 * each fault before reporting it: the words of the faulting launch that
 * replay relocates and whose low half is under 2^24 (an 8-byte struct of
 * two ints is one parameter, so a whole parameter is no exception; a real
 * pointer meets this one time in 256) are marked integers (t, every
 * launch of the kernel and layout), the base trace is written again and
 * the same replay is run.  When the launch then runs without a fault, it
 * is not a finding (r->ints says why) and the marks stay; when it faults
 * again, or an earlier launch or another launch of the same kernel faults
 * instead (the marks may have unrelocated a real pointer), the marks go
 * and the fault stands.  A real pointer left as captured points where the
 * replay mapped nothing, so a true overrun keeps faulting.  One replay and
 * one trace write per fault with such words; none for the others.
 */
/* The words of launch l that the check would mark (above), from mm (the
 * allocations live at l), less those that hold an allocation's or a
 * block's first byte: their offsets and values, at most HUNT_INT_WORDS.
 * Returns how many. */
static int suspect_words(const struct trace *t, const struct tr_launch *l, const struct memmap *mm, uint32_t *off,
			 uint64_t *val)
{
	int n = 0;
	for (uint32_t o = 0; o + 8 <= l->argsize && n < HUNT_INT_WORDS; o += 8) {
		const struct mm_alloc *a;
		struct tr_block b;
		uint64_t v;
		memcpy(&v, l->args + o, 8);
		if ((v & 0xffffffffu) >= TR_INT_LOW_LIMIT || !(a = memmap_arg_word(mm, l, o, v, NULL)) || a->addr == v ||
		    (rc_block_at(t, l->seq, v, &b) == 0 && b.addr == v))
			continue;   /* (a buffer's first byte: a pointer) */
		off[n] = o;
		val[n++] = v;
	}
	return n;
}

static void memmap_before(const struct trace *t, uint64_t seq, struct memmap *mm);

/* 1 when launch cl is one of l's kernel and layout and one of the marked
 * words off[0, n) holds a pointer there (inside an allocation, a low half
 * of 2^24 or more): its fault may be the marks' doing. */
static int marks_hurt(const struct trace *t, const struct tr_launch *l, uint64_t lay, const struct tr_launch *cl,
		      const uint32_t *off, int n)
{
	struct memmap mm = MEMMAP_INIT;
	int hurt = 0;
	if (!cl->name || strcmp(cl->name, l->name) || tr_launch_layout(cl) != lay)
		return 0;
	memmap_before(t, cl->seq, &mm);
	for (int k = 0; k < n && !hurt; k++) {
		uint64_t v;
		if (!tr_launch_word(cl, off[k], &v))
			continue;
		hurt = (v & 0xffffffffu) >= TR_INT_LOW_LIMIT && memmap_pointer_word(&mm, v, NULL);
	}
	memmap_release(&mm);
	return hurt;
}

/* Mark words off[0, n) of l's kernel and layout integers, write the base
 * trace again (*path) and replay it `way`: 1 when the fault of res went
 * away (the marks stay; *chk is the replay's result), 0 when it stands
 * (the marks go, the file too), -1 on an error. */
static int try_marks(struct trace *t, struct pool *p, const struct hunt_opts *o, const struct replay_way *way,
		     struct hunt_result *r, const struct tr_launch *l, const uint32_t *off, int n,
		     const struct replay_result *res, struct replay_result *chk, struct strbuf *path,
		     struct strbuf *err)
{
	const struct tr_launch *cl;
	uint64_t lay = tr_launch_layout(l);
	size_t keep = t->nnonptr_extra;
	struct rc_stats st;
	int ret = -1;

	trace_add_nonptr(t, l->name, lay, off, (size_t)n);
	sb_reset(path);
	sb_addf(path, "%s/hunt-base-%zu.bin", o->workdir, r->replays);
	if (write_hunt_trace(t, r, 0, NULL, path->buf, &st, err) < 0 ||
	    replay_once(p, o, path->buf, way, -1, r->replays, chk, err) < 0)
		goto out;
	r->replays++;
	cl = chk->status == RS_FAULT && chk->launch_seq >= 0 ? launch_of(t, (uint64_t)chk->launch_seq, NULL) : NULL;
	ret = chk->status == RS_CLEAN ||
	      (chk->status == RS_FAULT && chk->launch_seq > res->launch_seq && cl && !marks_hurt(t, l, lay, cl, off, n));
out:
	if (ret != 1) {
		trace_drop_nonptr(t, keep);
		if (!o->keep && path->len)
			remove(path->buf);
	}
	return ret;
}

/* Check *res (a fault at some launch) as above: 0 when it stands (or is
 * not a fault), 1 when the check explained it (r->ints has it, *base is the
 * new base trace, *res the check replay's result: clean, or a fault at a
 * later launch that the caller checks again), -1 on an error.  The words
 * are tried together, then (when that fails and there are several: a real
 * pointer among them keeps the fault) one at a time. */
static int integer_check(struct trace *t, struct pool *p, const struct hunt_opts *o, struct strbuf *base,
			 const struct replay_way *way, struct hunt_result *r, struct replay_result *res,
			 struct strbuf *err)
{
	struct memmap mm = MEMMAP_INIT;
	struct strbuf path = STRBUF_INIT;
	struct hunt_intword w;
	struct replay_result chk;
	const struct tr_launch *l;
	int k = 0, n;

	if (res->status != RS_FAULT || res->launch_seq < 0 || in_list(r->checked, r->nchecked, (uint64_t)res->launch_seq))
		return 0;
	l = launch_of(t, (uint64_t)res->launch_seq, NULL);
	if (!l || !l->name)
		return 0;
	r->checked = xrealloc(r->checked, (r->nchecked + 1) * sizeof(*r->checked));
	r->checked[r->nchecked++] = l->seq;
	memset(&w, 0, sizeof(w));
	memmap_before(t, l->seq, &mm);
	n = suspect_words(t, l, &mm, w.off, w.val);
	memmap_release(&mm);
	if (n)
		k = try_marks(t, p, o, way, r, l, w.off, n, res, &chk, &path, err);
	w.n = n;
	for (int i = 0; k == 0 && n > 1 && i < n; i++)
		if ((k = try_marks(t, p, o, way, r, l, &w.off[i], 1, res, &chk, &path, err)) == 1) {
			w.off[0] = w.off[i];
			w.val[0] = w.val[i];
			w.n = 1;
		}
	if (k == 1) {
		w.f.seq = l->seq;
		w.f.guard = way->guard;
		w.f.code = res->code;
		snprintf(w.f.error, sizeof(w.f.error), "%s", res->error);
		snprintf(w.f.kernel, sizeof(w.f.kernel), "%s", res->kernel);
		w.f.has_frames = l->nframes > 0;
		r->ints = xrealloc(r->ints, (r->nints + 1) * sizeof(*r->ints));
		r->ints[r->nints++] = w;
		if (!o->keep)
			remove(base->buf);
		sb_reset(base);
		sb_adds(base, path.buf);
		*res = chk;
	}
	sb_release(&path);
	return k;
}

/*
 * The layout check.  The program ran the faulting launch without a fault.
 * Replayed with every buffer where the capture had it relative to the
 * others (layout placement: an overrun lands where it landed in the
 * program, in the neighbouring tensor or the allocator's slack), the
 * launch must run clean too; when it faults there as well, the fault is
 * replay's own (a word taken for a pointer, or a pointer for an integer,
 * and the like), not an overrun the guards exposed: a note
 * (r->artifacts), not a finding.  The replay is of the trace hunt was
 * given (its blocks stay inside their segments, as in the program), with
 * the same launches left out, and stops after the launch.  Not run for the
 * trace's own fault, nor with --no-layout-check; where layout placement
 * cannot apply, or the replay fails or faults before the launch, the
 * fault stands.  One replay per fault that would be a finding.
 */
static int layout_fault(const struct trace *t, struct pool *p, const struct hunt_opts *o,
			const struct replay_way *way, struct hunt_result *r, const struct replay_result *res,
			long crash_seq, struct strbuf *err)
{
	struct replay_way lw = *way;
	struct replay_result lres;
	size_t at = 0;

	if (!o->layout_check || res->status != RS_FAULT || res->launch_seq < 0 || !t->path || !*t->path ||
	    (crash_seq >= 0 && res->launch_seq == crash_seq) || !launch_of(t, (uint64_t)res->launch_seq, &at))
		return 0;
	lw.guard = GUARD_LAYOUT;
	if (replay_once(p, o, t->path, &lw, (long)at + 1, r->replays, &lres, err) < 0)
		return -1;
	r->replays++;
	return lres.status == RS_FAULT && lres.launch_seq == res->launch_seq;
}

/* Record the fault of res as replay's own (r->artifacts), leaving it
 * and its repeats out of the next replays through skip[0, *n), as a
 * finding would be. */
static void add_artifact(const struct trace *t, const struct hunt_opts *o, struct hunt_result *r,
			 const struct replay_result *res, int guard, uint64_t **skip, size_t *n, size_t *cap)
{
	r->artifacts = xrealloc(r->artifacts, (r->nartifacts + 1) * sizeof(*r->artifacts));
	record_fault(t, o, &r->artifacts[r->nartifacts++], res, guard, -1, skip, n, cap);
}

/* integer_check until *res is clean or a fault that stands; *changed
 * (when given) set when the base changed.  0 or -1. */
static int check_fault(struct trace *t, struct pool *p, const struct hunt_opts *o, struct strbuf *base,
		       const struct replay_way *way, struct hunt_result *r, struct replay_result *res,
		       int *changed, struct strbuf *err)
{
	int k;
	while ((k = integer_check(t, p, o, base, way, r, res, err)) == 1)
		if (changed)
			*changed = 1;
	return k;
}

/* One placement's pass: replay, and on each fault leave the launch out and
 * replay again.  1 when the bound was reached, 0 when it ran clean (or
 * stopped for a reason put in r->note), -1 on an error. */
static int hunt_pass(struct trace *t, struct pool *p, const struct hunt_opts *o, struct strbuf *base,
		     int guard, long crash_seq, struct hunt_result *r, struct strbuf *err)
{
	struct replay_result res;
	int ret = -1, k;
	for (;;) {
		struct replay_way way = { guard, r->skip, NULL, r->nskip, 0 };
		if (r->n >= (size_t)o->max_findings) {
			ret = 1;
			break;
		}
		if (replay_once(p, o, base->buf, &way, -1, r->replays, &res, err) < 0)
			goto out;
		r->replays++;
		if (check_fault(t, p, o, base, &way, r, &res, NULL, err) < 0)
			goto out;
		if (res.status == RS_CLEAN) {
			ret = 0;
			break;
		}
		if (res.status != RS_FAULT || res.launch_seq < 0) {
			note_replay(r, guard, &res);
			ret = 0;
			break;
		}
		if ((k = layout_fault(t, p, o, &way, r, &res, crash_seq, err)) < 0)
			goto out;
		if (k)
			add_artifact(t, o, r, &res, guard, &r->skip, &r->nskip, &r->askip);
		else
			add_finding(t, o, r, &res, guard, crash_seq);
	}
out:
	return ret;
}

/*
 * Both placements side by side (issue 28: a clean hunt's two replays take
 * the time of one).  The end pass runs as hunt_pass does; the start pass
 * runs beside it, one replay of each at a time on two workers, leaving out
 * the end pass's findings known so far and its own.  A start-pass finding
 * stays pending until the end pass is done: one whose launch the end pass
 * found too (or left out as a repeat) is dropped, as the start pass run
 * after the end pass would never have replayed it; the rest follow the end
 * pass's findings, as they would.  When the end pass stops at the bound or
 * on a replay that neither ran clean nor faulted, the start pass's
 * findings are dropped, as it would not have run.  (A later launch that
 * reads what a finding's launch wrote sees its data here where the start
 * pass run after the end pass saw it left out.)
 */
struct side {
	struct hunt_finding *f;  /* pending start-pass findings */
	size_t n;
	uint64_t *skip;          /* their launches and repeats (f[k].nskip indexes it) */
	size_t nskip, askip;
};

/* The pending start-pass findings that the end pass did not find, after
 * its own, with their skips. */
static void merge_side(const struct hunt_opts *o, struct hunt_result *r, struct side *sd)
{
	for (size_t k = 0; k < sd->n && r->n < (size_t)o->max_findings; k++) {
		struct hunt_finding f = sd->f[k];
		size_t end = k + 1 < sd->n ? sd->f[k + 1].nskip : sd->nskip;
		if (in_list(r->skip, r->nskip, f.seq))
			continue;
		f.nskip = r->nskip;
		for (size_t i = sd->f[k].nskip; i < end; i++)
			if (!in_list(r->skip, r->nskip, sd->skip[i])) {
				ALLOC_GROW(r->skip, r->nskip + 1, r->askip);
				r->skip[r->nskip++] = sd->skip[i];
			}
		r->f = xrealloc(r->f, (r->n + 1) * sizeof(*r->f));
		r->f[r->n++] = f;
	}
}

/* hunt_pass for both placements side by side (above).  1 when the bound
 * was reached, 0 otherwise, -1 on an error. */
static int hunt_both(struct trace *t, struct pool *p, const struct hunt_opts *o, struct strbuf *base,
		     long crash_seq, struct hunt_result *r, struct strbuf *err)
{
	struct strbuf pe = STRBUF_INIT, ps = STRBUF_INIT;
	struct side sd = { NULL, 0, NULL, 0, 0 };
	/* bounded: 1 the end pass reached the bound (the start pass's findings
	 * go), 2 the start pass stopped at it */
	int end_on = 1, start_on = 1, ret = -1, bounded = 0;

	while (end_on || start_on) {
		struct job jobs[2];
		int nj = 0, je = -1, js = -1, changed = 0, k;
		if (end_on && r->n >= (size_t)o->max_findings) {
			end_on = 0;
			bounded = 1;
			start_on = 0;
			break;
		}
		if (start_on && r->n + sd.n >= (size_t)o->max_findings) {
			start_on = 0;
			bounded = 2;   /* (some may be dropped yet: then say there may be more) */
		}
		memset(jobs, 0, sizeof(jobs));
		if (end_on) {
			je = nj++;
			if (prepare_job(&jobs[je], o, base->buf, GUARD_END, r->replays + (size_t)je, r->skip, r->nskip,
					NULL, 0, &pe, err) < 0)
				goto out;
		}
		if (start_on) {
			/* the end pass's skips, then its own */
			js = nj++;
			if (prepare_job(&jobs[js], o, base->buf, GUARD_START, r->replays + (size_t)js, r->skip, r->nskip,
					sd.skip, sd.nskip, &ps, err) < 0)
				goto out;
		}
		if (!nj)
			break;
		if (pool_run(p, jobs, (size_t)nj, err) < 0)
			goto out;
		r->replays += (size_t)nj;
		if (!o->keep) {
			if (je >= 0)
				remove(pe.buf);
			if (js >= 0)
				remove(ps.buf);
		}
		if (je >= 0) {
			struct replay_result *res = &jobs[je].res;
			struct replay_way way = { GUARD_END, r->skip, NULL, r->nskip, 0 };
			if (check_fault(t, p, o, base, &way, r, res, &changed, err) < 0)
				goto out;
			if (res->status == RS_CLEAN) {
				end_on = 0;
			} else if (res->status != RS_FAULT || res->launch_seq < 0) {
				note_replay(r, GUARD_END, res);
				end_on = start_on = 0;
				sd.n = 0;   /* the start pass would not have run */
			} else if ((k = layout_fault(t, p, o, &way, r, res, crash_seq, err)) < 0) {
				goto out;
			} else if (k) {
				add_artifact(t, o, r, res, GUARD_END, &r->skip, &r->nskip, &r->askip);
			} else {
				add_finding(t, o, r, res, GUARD_END, crash_seq);
			}
		}
		if (js >= 0 && start_on && changed && jobs[js].res.status == RS_FAULT) {
			/* the end pass's check changed the base after this replay
			 * began: its fault may be the one the check explained, so
			 * the start pass replays the new base in the next round */
		} else if (js >= 0 && start_on) {
			struct replay_result *res = &jobs[js].res;
			struct replay_way way = { GUARD_START, r->skip, sd.skip, r->nskip, sd.nskip };
			if (check_fault(t, p, o, base, &way, r, res, &changed, err) < 0)
				goto out;
			if (res->status == RS_CLEAN) {
				start_on = 0;
			} else if (res->status != RS_FAULT || res->launch_seq < 0) {
				if (!r->note[0])
					note_replay(r, GUARD_START, res);
				start_on = 0;
			} else if (in_list(r->skip, r->nskip, (uint64_t)res->launch_seq)) {
				/* the end pass found it in this round: leave it out, not a finding */
				ALLOC_GROW(sd.skip, sd.nskip + 1, sd.askip);
				sd.skip[sd.nskip++] = (uint64_t)res->launch_seq;
			} else if ((k = layout_fault(t, p, o, &way, r, res, crash_seq, err)) < 0) {
				goto out;
			} else if (k) {
				add_artifact(t, o, r, res, GUARD_START, &sd.skip, &sd.nskip, &sd.askip);
			} else {
				sd.f = xrealloc(sd.f, (sd.n + 1) * sizeof(*sd.f));
				record_fault(t, o, &sd.f[sd.n++], res, GUARD_START, crash_seq, &sd.skip, &sd.nskip,
					     &sd.askip);
			}
		}
	}
	if (bounded != 1)
		merge_side(o, r, &sd);
	ret = bounded || r->n >= (size_t)o->max_findings;
out:
	free(sd.f);
	free(sd.skip);
	sb_release(&pe);
	sb_release(&ps);
	return ret;
}

/* Both placements side by side only when two replays fit the GPU the trace
 * was captured on (each block a 2 MiB granule at least, plus the plain
 * allocations, at their peak) with room to spare; GPUREDUCE_HUNT_SERIAL=1
 * runs them one after the other. */
static int side_by_side(const struct trace *t)
{
	const char *e = getenv("GPUREDUCE_HUNT_SERIAL");
	uint64_t total = 0, live = 0, peak = 0, blocks = 0;
	struct memmap mm = MEMMAP_INIT;
	if (e && *e && strcmp(e, "0"))
		return 0;
	for (size_t i = 0; i < t->nrec; i++) {
		const struct tr_rec *x = &t->rec[i];
		if (x->type == TR_DEVICE && x->u.device.total_mem) {
			total = x->u.device.total_mem;
		} else if (x->type == TR_ALLOC) {
			memmap_add(&mm, x->u.alloc.addr, x->u.alloc.size, x->u.alloc.kind, (long)i);
			live += x->u.alloc.size;
		} else if (x->type == TR_FREE) {
			const struct mm_alloc *a = memmap_free(&mm, x->u.free.addr, (long)i);
			if (a)
				live -= a->size;
		} else if (x->type == TR_BLOCK_ALLOC)
			blocks++;
		else if (x->type == TR_BLOCK_FREE && blocks)
			blocks--;
		if (live + blocks * (2ull << 20) > peak)
			peak = live + blocks * (2ull << 20);
	}
	memmap_release(&mm);
	return total && peak <= total / 3;
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
	struct rc_opts ro = { 0, 1, NULL, 0 };
	int ret = -1;
	if (nskip)
		memcpy(skip, r->skip, nskip * sizeof(*skip));
	/* guards at each tensor's requested end: its own trace, written once */
	sb_addf(&path, "%s/hunt-ends.bin", o->workdir);
	if (rc_blockify_opts(t, path.buf, NULL, &ro, &st, err) < 0)
		goto out;
	while (r->nnotes < (size_t)o->max_findings) {
		struct replay_way way = { GUARD_END, skip, NULL, nskip, 0 };
		if (replay_once(p, o, path.buf, &way, -1, r->replays, &res, err) < 0)
			goto out;
		r->replays++;
		if (res.status != RS_FAULT || res.launch_seq < 0)
			break;
		r->notes = xrealloc(r->notes, (r->nnotes + 1) * sizeof(*r->notes));
		record_fault(t, o, &r->notes[r->nnotes++], &res, GUARD_END, -1, &skip, &nskip, &askip);
	}
	ret = 0;
out:
	if (!o->keep)
		remove(path.buf);
	free(skip);
	sb_release(&path);
	return ret;
}

/* Finding k's slice (hunt_finding.slice, lastslice.h): its cut trace
 * (hunt_cut, kept as hunt_finding.cut) sliced at its launch, replayed as
 * the replay that found it ran.  compute-sanitizer then runs one launch,
 * not every launch of the program before it at the sanitizer's pace (a
 * GPU-bound program's 3000 launches: 33 s on an H100, 2026-12-06).  No
 * slice when the cut is better diagnosed whole or it cannot be made. */
static void slice_finding(const struct trace *t, struct pool *p, const struct hunt_opts *o,
			  struct hunt_result *r, size_t k)
{
	struct hunt_finding *f = &r->f[k];
	struct strbuf cut = STRBUF_INIT, snap = STRBUF_INIT, out = STRBUF_INIT, err = STRBUF_INIT;
	struct trace ct;

	sb_addf(&cut, "%s/finding-%zu.bin", o->workdir, k + 1);
	sb_addf(&snap, "%s/slice-%zu-snap.bin", o->workdir, k + 1);
	sb_addf(&out, "%s/slice-%zu.bin", o->workdir, k + 1);
	if (hunt_cut(t, r, k, cut.buf, &err) == 0 && trace_open(&ct, cut.buf, TRACE_OPEN_STRICT, &err) == 0) {
		if (lastslice_write(p, cut.buf, &ct, f->guard, recycle_on(), snap.buf, out.buf, &err) == 1)
			f->slice = sb_detach(&out, NULL);
		trace_release(&ct);
		f->cut = sb_detach(&cut, NULL);
	}
	if (!o->keep)
		remove(snap.buf);
	sb_release(&cut);
	sb_release(&snap);
	sb_release(&out);
	sb_release(&err);
}

int hunt_run(struct trace *t, const struct hunt_opts *o, struct hunt_result *r, struct strbuf *err)
{
	struct pool *p;
	long crash = oracle_fault_record(t);
	long crash_seq = crash >= 0 ? (long)t->rec[crash].u.fault.launch_seq : -1;
	double t0 = now_sec();
	struct strbuf base = STRBUF_INIT;
	int ret = -1, k, both;

	memset(r, 0, sizeof(*r));
	r->has_blocks = rc_has_blocks(t);
	both = o->start_pass && side_by_side(t);
	/* the workers create their contexts while the trace is written */
	p = pool_create(both ? 2 : 1, 0, o->timeout, err);
	if (!p)
		return -1;
	sb_addf(&base, "%s/hunt-base.bin", o->workdir);
	if (write_hunt_trace(t, r, 0, NULL, base.buf, &r->st, err) < 0)
		goto out;
	if (both) {
		k = hunt_both(t, p, o, &base, crash_seq, r, err);
	} else {
		k = hunt_pass(t, p, o, &base, GUARD_END, crash_seq, r, err);
		if (k == 0 && o->start_pass && !r->note[0])
			k = hunt_pass(t, p, o, &base, GUARD_START, crash_seq, r, err);
	}
	if (k < 0)
		goto out;
	r->bounded = k == 1;
	if (o->tensor_ends && r->has_blocks && tensor_end_pass(t, p, o, r, err) < 0)
		goto out;
	r->seconds = now_sec() - t0;
	for (size_t i = 0; o->slices && i < r->n; i++)
		slice_finding(t, p, o, r, i);
	ret = 0;
out:
	if (ret < 0)
		r->seconds = now_sec() - t0;
	pool_release_detached(p);   /* shrink's pool starts beside their teardown */
	if (!o->keep)
		remove(base.buf);
	sb_release(&base);
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

/* The index of l's frame a finding names (its "line"): the innermost one
 * outside site-packages, torch and triton, else the innermost with a file;
 * -1 when none has one. */
static long user_frame(const struct tr_launch *l)
{
	long pick = -1;
	for (uint32_t i = 0; l && i < l->nframes; i++) {
		const struct tr_frame *fr = &l->frames[i];
		if (!fr->file || !*fr->file)
			continue;
		if (pick < 0)
			pick = i;
		if (!strstr(fr->file, "site-packages") && !strstr(fr->file, "/torch/") &&
		    !strstr(fr->file, "/triton/"))
			return i;
	}
	return pick;
}

void hunt_python_line(const struct trace *t, uint64_t seq, struct strbuf *out)
{
	const struct tr_launch *l = launch_of(t, seq, NULL);
	long u = user_frame(l);
	if (u >= 0) {
		const struct tr_frame *pick = &l->frames[u];
		sb_addf(out, "%s:%u in %s", pick->file, pick->line, pick->func ? pick->func : "?");
	}
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
	else if (b->flags & TR_BLK_F_INITIAL)
		sb_adds(o, ", allocated before recording began)");
	else
		sb_adds(o, ", allocated where no Python line was recorded)");
}

/* The allocations as they stand at launch seq (the records before it). */
static void memmap_before(const struct trace *t, uint64_t seq, struct memmap *mm)
{
	for (size_t i = 0; i < t->nrec; i++) {
		if (t->rec[i].type == TR_LAUNCH && t->rec[i].u.launch.seq == seq)
			break;
		memmap_feed(mm, &t->rec[i], (long)i);
	}
}

/* What pointer word v of launch seq points into: a block, else an
 * allocation of mm (memmap_before that launch). */
static void name_target(const struct trace *t, uint64_t seq, const struct memmap *mm, uint64_t v,
			struct strbuf *o)
{
	struct tr_block b;
	struct mm_alloc *a;
	char sz[32];
	int dead = 0;
	if (rc_block_at(t, seq, v, &b) == 0) {
		name_block(o, &b);
		return;
	}
	a = memmap_lookup(mm, v, &dead);
	if (a)
		sb_addf(o, "allocation 0x%llx (%s%s)", (unsigned long long)a->addr, fmt_bytes(a->size, sz),
			dead ? ", freed" : "");
	else
		sb_adds(o, "no recorded buffer");
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

/* The pointer words inside l's by-value struct parameters (PyTorch's
 * elementwise kernels pass their tensors so), "; param P+0xOFF = tensor
 * ...", at most STRUCT_TARGETS of them; returns how many were named. */
#define STRUCT_TARGETS 4
static int struct_targets(const struct trace *t, const struct tr_launch *l, const struct memmap *mm, int any,
			  struct strbuf *out)
{
	int n = 0, more = 0;
	for (uint32_t q = 0; q < l->nparams; q++) {
		const struct tr_param *pp = &l->params[q];
		if (pp->size <= 8)
			continue;
		for (uint32_t off = (pp->offset + 7) & ~7u; off + 8 <= pp->offset + pp->size; off += 8) {
			uint64_t v;
			memcpy(&v, l->args + off, 8);
			if (!memmap_arg_word(mm, l, off, v, NULL))
				continue;
			if (n >= STRUCT_TARGETS) {
				more++;
				continue;
			}
			sb_addf(out, "%sparam %u+0x%x = ", any + n++ ? "; " : "", q, off - pp->offset);
			name_target(t, l->seq, mm, v, out);
		}
	}
	if (more)
		sb_addf(out, "; %d more in the struct", more);
	return n;
}

void hunt_describe(const struct trace *t, const struct hunt_finding *f, struct strbuf *out)
{
	const struct tr_launch *l = launch_of(t, f->seq, NULL);
	char *k = params_demangle(f->kernel);
	struct strbuf py = STRBUF_INIT;
	struct memmap mm = MEMMAP_INIT;
	const char *access = "accessed";
	char dist[80];
	int p = rc_diag_param(f->diag, dist, sizeof(dist), &access);

	memmap_before(t, f->seq, &mm);   /* once: every buffer named below */
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
		name_target(t, f->seq, &mm, v, out);
	} else {
		int any = 0;
		if (f->diag_err)
			sb_addf(out, ": how far past which buffer is unknown (%s%s); its buffers: ",
				strncmp(f->diag_err, "compute-sanitizer", 17) ? "compute-sanitizer: " : "",
				f->diag_err);
		else
			sb_adds(out, ": how far past which buffer is unknown without compute-sanitizer; its buffers: ");
		for (uint32_t q = 0; l && q < l->nparams; q++) {
			uint64_t v;
			if (l->params[q].size != 8)
				continue;
			memcpy(&v, l->args + l->params[q].offset, 8);
			if (v < 65536 || tr_launch_nonptr(l, l->params[q].offset))
				continue;
			sb_addf(out, "%sparam %u = ", any++ ? "; " : "", q);
			name_target(t, f->seq, &mm, v, out);
		}
		if (l)
			any += struct_targets(t, l, &mm, any, out);
		if (!any)
			sb_adds(out, "none recorded");
	}
	describe_repeats(f, out);
	memmap_release(&mm);
	sb_release(&py);
	free(k);
}

void hunt_describe_kin(const struct trace *t, const struct hunt_result *r, size_t k, size_t first,
		       struct strbuf *out)
{
	const struct tr_launch *a = launch_of(t, r->f[k].seq, NULL);
	long u = user_frame(a);
	if (!a || !a->name || u < 0)
		return;
	for (size_t j = 0; j < k; j++) {
		const struct tr_launch *b = launch_of(t, r->f[j].seq, NULL);
		uint32_t d = 0;
		if (!b || !b->name || strcmp(a->name, b->name) || user_frame(b) != u)
			continue;
		/* the same frames up to the line the findings name, then one
		 * that differs */
		while (d < a->nframes && d < b->nframes && a->frames[d].line == b->frames[d].line &&
		       str_eq(a->frames[d].file, b->frames[d].file))
			d++;
		if (d <= (uint32_t)u || d >= a->nframes)
			continue;   /* another line, or no frame of its own to name */
		sb_addf(out, "; the same kernel and line as finding %zu, reached from %s:%u in %s", first + j,
			a->frames[d].file ? a->frames[d].file : "?", a->frames[d].line,
			a->frames[d].func ? a->frames[d].func : "?");
		return;
	}
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

void hunt_describe_artifact(const struct trace *t, const struct hunt_finding *f, struct strbuf *out)
{
	char *k = params_demangle(f->kernel);
	struct strbuf py = STRBUF_INIT;
	hunt_python_line(t, f->seq, &py);
	sb_addf(out, "launch #%llu %s", (unsigned long long)f->seq, k);
	if (py.len)
		sb_addf(out, " at %s", py.buf);
	sb_addf(out, " faulted under %s guards (%s), and also replayed with every buffer where the program had "
		"it, where the program ran it clean: a fault of replay's own, not an overrun (not reported as a "
		"finding; `gpureduce replay --guard=layout` on the trace shows it)", f->guard == GUARD_START ? "start" : "end",
		f->error);
	describe_repeats(f, out);
	sb_release(&py);
	free(k);
}

/* "param P+0xOFF" for the word at byte off of l's arguments, or "bytes
 * A-B" when no parameter starts in it (padding). */
static void name_word(const struct tr_launch *l, uint32_t off, struct strbuf *o)
{
	for (uint32_t q = 0; q < l->nparams; q++) {
		uint32_t a = l->params[q].offset, e = a + l->params[q].size;
		if ((off >= a && off < e) || (a > off && a < off + 8)) {
			if (off >= a)
				sb_addf(o, "param %u+0x%x", q, off - a);
			else
				sb_addf(o, "the padding before param %u (bytes %u-%u)", q, off, off + 7);
			return;
		}
	}
	sb_addf(o, "bytes %u-%u", off, off + 7);
}

void hunt_describe_intword(const struct trace *t, const struct hunt_intword *w, struct strbuf *out)
{
	const struct tr_launch *l = launch_of(t, w->f.seq, NULL);
	char *k = params_demangle(w->f.kernel);
	struct strbuf py = STRBUF_INIT;
	struct memmap mm = MEMMAP_INIT;

	hunt_python_line(t, w->f.seq, &py);
	sb_addf(out, "launch #%llu %s", (unsigned long long)w->f.seq, k);
	if (py.len)
		sb_addf(out, " at %s", py.buf);
	sb_addf(out, " faulted under %s guards (%s) only while replay read ", w->f.guard == GUARD_START ? "start" : "end",
		w->f.error);
	if (l)
		memmap_before(t, w->f.seq, &mm);
	for (int i = 0; l && i < w->n; i++) {
		sb_adds(out, i ? (i + 1 < w->n ? ", " : " and ") : "");
		name_word(l, w->off[i], out);
		sb_addf(out, " = 0x%016llx as a pointer into ", (unsigned long long)w->val[i]);
		name_target(t, w->f.seq, &mm, w->val[i], out);
	}
	sb_addf(out, "; passed as captured (its low half the integer %llu, its high half 0x%llx: bytes the program "
		"may have left unset) it ran on: not a finding (%s left as captured in every launch of the kernel "
		"from here)", (unsigned long long)(w->val[0] & 0xffffffffu), (unsigned long long)(w->val[0] >> 32),
		w->n > 1 ? "those words are" : "the word is");
	memmap_release(&mm);
	sb_release(&py);
	free(k);
}

void hunt_result_release(struct hunt_result *r)
{
	if (!r)
		return;
	free(r->notes);
	free(r->ints);
	free(r->artifacts);
	free(r->checked);
	free(r->skip);
	for (size_t i = 0; i < r->n; i++) {
		free(r->f[i].cut);
		free(r->f[i].slice);
		free(r->f[i].diag);
		free(r->f[i].diag_err);
	}
	free(r->f);
	memset(r, 0, sizeof(*r));
}
