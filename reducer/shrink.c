/*
 * shrink.c - the reduction driver (see shrink.h).
 *
 * Every candidate is written as a trace file under the work directory and
 * replayed by the worker pool (pool.h); nothing here touches the GPU.
 * Outcomes are cached by the candidate file's content hash, so a candidate
 * that two phases happen to build twice runs once.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/child.h"
#include "../common/strbuf.h"
#include "../common/util.h"
#include "../replay/graphs.h"
#include "../replay/memmap.h"
#include "../replay/place.h"
#include "cand.h"
#include "ddmin.h"
#include "diagnose.h"
#include "pool.h"
#include "shrink.h"

#define MAX_SOURCES 64

struct cache_ent {
	uint64_t hash;
	int faults, runs;
};

struct S {
	const struct trace *orig;
	const struct shrink_opts *o;
	struct shrink_report *rep;
	struct pool *pool;
	struct strbuf *err;
	double t0;
	long serial;
	int reps;                 /* runs per candidate (flaky: > 1) */
	int need;                 /* faults needed among reps */
	int guard;
	struct trace *src[MAX_SOURCES];
	int nsrc;
	struct cache_ent *cache;
	size_t ncache, acache;
	struct shrink_phase *ph;  /* current phase */
	void **owned;             /* argument buffers made by phases; freed at the end */
	size_t nowned, aowned;
	int infra_failed;
	int kernel_from_replay;   /* the capture could not name the faulting kernel (a graph) */
};

/* ---- bookkeeping ---------------------------------------------------------- */

/* A copy of n bytes that lives until the reduction ends (candidates keep
 * pointers to it). */
static uint8_t *arena_copy(struct S *s, const uint8_t *src, size_t n)
{
	uint8_t *p = xmalloc(n + 8);
	memcpy(p, src, n);
	memset(p + n, 0, 8);
	ALLOC_GROW(s->owned, s->nowned + 1, s->aowned);
	s->owned[s->nowned++] = p;
	return p;
}

static int over_time(struct S *s)
{
	return s->o->time_limit > 0 && now_sec() - s->t0 > s->o->time_limit;
}

static void progress(struct S *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void progress(struct S *s, const char *fmt, ...)
{
	va_list ap;
	if (s->o->quiet)
		return;
	va_start(ap, fmt);
	if (s->o->progress_tty) {
		fprintf(stderr, "\r\033[K[shrink %6.1fs] ", now_sec() - s->t0);
		vfprintf(stderr, fmt, ap);
	} else {
		fprintf(stderr, "[shrink %6.1fs] ", now_sec() - s->t0);
		vfprintf(stderr, fmt, ap);
		fputc('\n', stderr);
	}
	va_end(ap);
	fflush(stderr);
}

static struct trace *add_source(struct S *s, const char *path)
{
	struct trace *t;
	if (s->nsrc >= MAX_SOURCES) {
		sb_addf(s->err, "too many snapshot traces");
		return NULL;
	}
	t = xcalloc(1, sizeof(*t));
	if (trace_open(t, path, TRACE_OPEN_STRICT, s->err) < 0) {
		free(t);
		return NULL;
	}
	s->src[s->nsrc++] = t;
	return t;
}

static void measure(const struct cand *c, size_t *launches, size_t *buffers, uint64_t *bytes)
{
	*launches = *buffers = 0;
	*bytes = 0;
	for (size_t i = 0; i < c->n; i++) {
		const struct tr_rec *r = &c->it[i].rec;
		if (r->type == TR_LAUNCH)
			(*launches)++;
		else if (r->type == TR_ALLOC) {
			(*buffers)++;
			*bytes += r->u.alloc.size;
		}
	}
}

static struct shrink_phase *phase_begin(struct S *s, const char *name, const struct cand *c)
{
	struct shrink_phase *p;
	if (s->rep->nphases >= SHRINK_MAX_PHASES)
		BUG("too many phases");
	p = &s->rep->phase[s->rep->nphases++];
	memset(p, 0, sizeof(*p));
	p->name = name;
	if (c)
		measure(c, &p->launches_before, &p->buffers_before, &p->bytes_before);
	p->seconds = now_sec();
	s->ph = p;
	progress(s, "phase %s ...", name);
	return p;
}

static void phase_end(struct S *s, const struct cand *c, const char *outcome)
{
	struct shrink_phase *p = s->ph;
	if (c)
		measure(c, &p->launches_after, &p->buffers_after, &p->bytes_after);
	p->seconds = now_sec() - p->seconds;
	p->outcome = outcome;
	progress(s, "phase %s: %s (%ld candidates, %.1f s)", p->name, outcome, p->candidates, p->seconds);
	if (s->o->progress_tty && !s->o->quiet)
		fputc('\n', stderr);
}

static int sig_match(const struct S *s, const struct replay_result *r)
{
	return r->status == RS_FAULT && r->code == s->rep->code &&
	       (s->o->sig_code_only || s->kernel_from_replay || !strcmp(r->kernel, s->rep->kernel));
}

/* ---- testing candidates ---------------------------------------------------- */

static uint64_t file_hash(const char *path)
{
	struct strbuf sb = STRBUF_INIT, e = STRBUF_INIT;
	uint64_t h = 0;
	if (read_file(path, &sb, &e) == 0)
		h = tr_hash(sb.buf, sb.len);
	sb_release(&sb);
	sb_release(&e);
	return h;
}

static struct cache_ent *cache_find(struct S *s, uint64_t h)
{
	for (size_t i = 0; i < s->ncache; i++)
		if (s->cache[i].hash == h)
			return &s->cache[i];
	return NULL;
}

/*
 * Test k candidates (each `reps` times); interesting[i] = 1 when candidate i
 * faulted with the signature at least `need` times.  Returns 0, or -1 when
 * the time limit passed or the workers are gone (then nothing is
 * interesting).
 */
static int test_cands(struct S *s, struct cand *const *cands, size_t k, int *interesting)
{
	char **paths = xcalloc(k + 1, sizeof(char *));
	uint64_t *hashes = xcalloc(k + 1, sizeof(uint64_t));
	struct job *jobs = xcalloc(k * (size_t)s->reps + 1, sizeof(struct job));
	size_t *owner = xcalloc(k * (size_t)s->reps + 1, sizeof(size_t));
	int *faults = xcalloc(k + 1, sizeof(int));
	size_t nj = 0;
	int ret = -1;

	for (size_t i = 0; i < k; i++)
		interesting[i] = 0;
	if (over_time(s) || s->infra_failed)
		goto out;
	for (size_t i = 0; i < k; i++) {
		struct strbuf p = STRBUF_INIT;
		sb_addf(&p, "%s/c%05ld.bin", s->o->workdir, ++s->serial);
		paths[i] = sb_detach(&p, NULL);
		if (cand_write(cands[i], paths[i], s->err) < 0)
			goto out;
		hashes[i] = file_hash(paths[i]);
		struct cache_ent *ce = cache_find(s, hashes[i]);
		if (ce) {
			s->rep->cache_hits++;
			faults[i] = ce->faults;
			interesting[i] = ce->faults >= s->need;
			unlink(paths[i]);
			continue;
		}
		for (int r = 0; r < s->reps; r++) {
			jobs[nj].trace = paths[i];
			jobs[nj].opts = (struct replay_opts)REPLAY_OPTS_INIT;
			jobs[nj].opts.guard = s->guard;
			jobs[nj].timeout = s->o->cand_timeout;
			owner[nj++] = i;
		}
	}
	if (nj) {
		if (s->o->progress_tty && s->ph) {
			size_t l, b;
			uint64_t by;
			char bb[32];
			measure(cands[0], &l, &b, &by);
			progress(s, "%s: %ld tested, %zu running; candidates of %zu launch(es), %zu buffer(s), %s",
				 s->ph->name, s->rep->candidates, nj, l, b, fmt_bytes(by, bb));
		}
		if (pool_run(s->pool, jobs, nj, s->err) < 0) {
			s->infra_failed = 1;
			goto out;
		}
		for (size_t j = 0; j < nj; j++) {
			if (sig_match(s, &jobs[j].res))
				faults[owner[j]]++;
			else if (jobs[j].res.status == RS_FAULT)
				s->rep->slipped++;   /* faulted, but not our fault */
		}
		for (size_t i = 0; i < k; i++) {
			if (cache_find(s, hashes[i]))
				continue;
			int ran = 0;
			for (size_t j = 0; j < nj; j++)
				ran += owner[j] == i;
			if (!ran)
				continue;
			ALLOC_GROW(s->cache, s->ncache + 1, s->acache);
			s->cache[s->ncache].hash = hashes[i];
			s->cache[s->ncache].faults = faults[i];
			s->cache[s->ncache].runs = ran;
			s->ncache++;
			interesting[i] = faults[i] >= s->need;
			if (!interesting[i])
				unlink(paths[i]);
		}
	}
	s->rep->candidates += (long)k;
	if (s->ph)
		s->ph->candidates += (long)k;
	ret = 0;
out:
	for (size_t i = 0; i < k; i++)
		free(paths[i]);
	free(paths);
	free(hashes);
	free(jobs);
	free(owner);
	free(faults);
	return ret;
}

static int test_one(struct S *s, struct cand *c)
{
	int r = 0;
	if (test_cands(s, &c, 1, &r) < 0)
		return -1;
	return r;
}

/* Run a whole trace file n times; count signature matches.  *first gets
 * the first result (for messages and the fault's event). */
static int run_file(struct S *s, const char *path, const struct replay_opts *opts, int n,
		    struct replay_result *first, int *matches)
{
	struct job *jobs = xcalloc((size_t)n, sizeof(*jobs));
	int ret = -1;
	*matches = 0;
	for (int i = 0; i < n; i++) {
		jobs[i].trace = path;
		jobs[i].opts = *opts;
		jobs[i].timeout = s->o->cand_timeout > 0 ? s->o->cand_timeout * 10 : 0;
	}
	if (pool_run(s->pool, jobs, (size_t)n, s->err) < 0) {
		s->infra_failed = 1;
		goto out;
	}
	*first = jobs[0].res;
	for (int i = 0; i < n; i++) {
		if (sig_match(s, &jobs[i].res)) {
			if (!*matches)
				*first = jobs[i].res;
			(*matches)++;
		}
	}
	ret = 0;
out:
	free(jobs);
	return ret;
}

/* ---- phases ------------------------------------------------------------- */

static const char *describe(const struct replay_result *r, char *buf, size_t n)
{
	switch (r->status) {
	case RS_CLEAN: snprintf(buf, n, "ran clean (%ld launches)", r->launches); break;
	case RS_FAULT: snprintf(buf, n, "%s in %.200s", r->error, r->kernel); break;
	case RS_TIMEOUT: snprintf(buf, n, "timed out"); break;
	default: snprintf(buf, n, "could not replay: %.300s", r->msg); break;
	}
	return buf;
}

/* Confirm the fault in replay; sets s->guard, rates, *fault_event. */
static int phase_confirm(struct S *s, long *fault_event)
{
	const int modes[3] = { GUARD_END, GUARD_START, GUARD_NONE };
	struct strbuf tried = STRBUF_INIT;
	int runs = s->o->orig_runs > 0 ? s->o->orig_runs : 2;
	int ret = -1;

	phase_begin(s, "confirm", NULL);
	for (int m = 0; m < 3; m++) {
		struct replay_opts ro = REPLAY_OPTS_INIT;
		struct replay_result first;
		int matches = 0;
		char d[600];
		if (s->o->guard >= 0 && modes[m] != s->o->guard)
			continue;
		ro.guard = modes[m];
		if (run_file(s, s->orig->path, &ro, runs, &first, &matches) < 0)
			goto out;
		s->ph->candidates += runs;
		s->rep->candidates += runs;
		if (!matches) {
			sb_addf(&tried, "%sguard=%s, %d runs: %s", tried.len ? "; " : "",
				place_guard_name(modes[m]), runs, describe(&first, d, sizeof(d)));
			continue;
		}
		s->guard = modes[m];
		if (matches < runs) {
			/* flaky: measure the rate on more runs */
			int more = 0;
			struct replay_result f2;
			if (run_file(s, s->orig->path, &ro, 8, &f2, &more) < 0)
				goto out;
			matches += more;
			runs += 8;
			s->rep->flaky = 1;
		}
		s->rep->orig_runs = runs;
		s->rep->orig_faults = matches;
		if (s->kernel_from_replay) {
			/* from now on the signature is the kernel replay saw fault */
			snprintf(s->rep->kernel, sizeof(s->rep->kernel), "%s", first.kernel);
			s->kernel_from_replay = 0;
		}
		s->rep->guard = modes[m];
		*fault_event = first.event;
		ret = 0;
		break;
	}
	if (ret < 0 && !s->infra_failed)
		sb_addf(s->err, "the captured fault (%s in %s) does not reproduce in replay; tried %s. "
			"Nothing was emitted.", s->rep->error, s->rep->kernel, tried.buf);
out:
	phase_end(s, NULL, ret == 0 ? (s->rep->flaky ? "flaky" : "reproduces") : "failed");
	sb_release(&tried);
	return ret;
}

/* Snapshot the state before record `at` of the original into a new source. */
static struct trace *snapshot(struct S *s, long at, int mode)
{
	struct strbuf path = STRBUF_INIT;
	struct replay_result first;
	struct replay_opts ro = REPLAY_OPTS_INIT;
	struct trace *t = NULL;
	int matches;

	sb_addf(&path, "%s/snap%05ld.bin", s->o->workdir, ++s->serial);
	ro.guard = s->guard;
	ro.stop_before = at;
	ro.snap_mode = mode;
	ro.snap_path = path.buf;
	/* a racy program can fault before the snapshot point: try again */
	for (int tries = 0; tries < (s->rep->flaky ? 8 : 2); tries++) {
		if (run_file(s, s->orig->path, &ro, 1, &first, &matches) < 0)
			goto out;
		if (first.status != RS_FAULT)
			break;
	}
	if (first.status != RS_CLEAN) {
		char d[600];
		sb_addf(s->err, "snapshot before event %ld: %s", at, describe(&first, d, sizeof(d)));
		goto out;
	}
	t = add_source(s, path.buf);
out:
	sb_release(&path);
	return t;
}

static long find_fault_record(const struct trace *t)
{
	for (size_t i = 0; i < t->nrec; i++)
		if (t->rec[i].type == TR_FAULT)
			return (long)i;
	return -1;
}

/* Slice: snapshot (reachable) + the faulting launch + the fault record. */
static int phase_slice(struct S *s, long fault_ev, struct cand *best)
{
	struct trace *snap;
	struct cand c = CAND_INIT;
	long frec = find_fault_record(s->orig);
	int r = 0;

	phase_begin(s, "slice", best);
	s->ph->launches_before = s->rep->orig_launches;
	for (size_t i = 0; i < s->orig->nrec; i++)
		if (s->orig->rec[i].type == TR_ALLOC) {
			s->ph->buffers_before++;
			s->ph->bytes_before += s->orig->rec[i].u.alloc.size;
		}
	snap = snapshot(s, fault_ev, SNAP_REACHABLE);
	if (!snap) {
		phase_end(s, best, "skipped: snapshot failed");
		sb_reset(s->err);
		return 0;
	}
	cand_add_all(&c, snap);
	cand_add(&c, s->orig, (size_t)fault_ev);
	if (frec >= 0)
		cand_add(&c, s->orig, (size_t)frec);
	r = test_one(s, &c);
	if (r == 1) {
		cand_release(best);
		*best = c;
		s->rep->one_launch_seconds = now_sec() - s->t0;
		phase_end(s, best, "reduced to one launch");
		return 1;
	}
	cand_release(&c);
	phase_end(s, best, "lost the fault: the launch needs earlier work");
	return 0;
}

/* Suffix: the shortest run of launches ending at the fault that faults
 * from a snapshot of everything live before it. */
static int build_suffix(struct S *s, long start, long fault_ev, struct cand *out)
{
	struct trace *snap = snapshot(s, start, SNAP_ALL);
	long frec = find_fault_record(s->orig);
	if (!snap)
		return -1;
	cand_add_all(out, snap);
	for (long i = start; i <= fault_ev; i++) {
		uint32_t ty = s->orig->rec[i].type;
		if (ty == TR_BLOB || ty == TR_PROCESS || ty == TR_DEVICE || ty == TR_FAULT)
			continue;
		cand_add(out, s->orig, (size_t)i);
	}
	if (frec >= 0)
		cand_add(out, s->orig, (size_t)frec);
	return 0;
}

static int phase_suffix(struct S *s, long fault_ev, struct cand *best)
{
	long *L = NULL;
	size_t nl = 0, al = 0;
	size_t lo = 0, hi;       /* hi: smallest k known to fault (launches before the fault) */
	struct cand found = CAND_INIT;
	int have = 0;

	phase_begin(s, "suffix", best);
	for (long i = 0; i < fault_ev; i++)
		if (s->orig->rec[i].type == TR_LAUNCH) {
			ALLOC_GROW(L, nl + 1, al);
			L[nl++] = i;
		}
	/* exponential search for a k that faults, then bisect */
	hi = 0;
	for (size_t k = 1; k <= nl && !have; k = k * 2 > nl && k < nl ? nl : k * 2) {
		struct cand c = CAND_INIT;
		if (build_suffix(s, L[nl - k], fault_ev, &c) < 0) {
			cand_release(&c);
			break;
		}
		int r = test_one(s, &c);
		if (r == 1) {
			found = c;
			have = 1;
			hi = k;
		} else {
			cand_release(&c);
			lo = k;
			if (r < 0)
				break;
		}
	}
	while (have && hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		struct cand c = CAND_INIT;
		if (build_suffix(s, L[nl - mid], fault_ev, &c) < 0) {
			cand_release(&c);
			break;
		}
		int r = test_one(s, &c);
		if (r == 1) {
			cand_release(&found);
			found = c;
			hi = mid;
		} else {
			cand_release(&c);
			lo = mid;
			if (r < 0)
				break;
		}
	}
	free(L);
	sb_reset(s->err);
	if (have) {
		cand_release(best);
		*best = found;
		phase_end(s, best, "reduced to a suffix");
		return 1;
	}
	phase_end(s, best, "kept the whole trace");
	return 0;
}

/* ddmin over the launches of the candidate, the faulting (last) launch fixed. */
struct launch_dd {
	struct S *s;
	const struct cand *base;
	size_t *idx;             /* item index of each launch */
};

static void apply_launch_mask(const void *dv, const unsigned char *mask, size_t n, struct cand *out)
{
	const struct launch_dd *d = dv;
	size_t j = 0;
	out->it = NULL;
	out->n = out->alloc = 0;
	for (size_t i = 0; i < d->base->n; i++) {
		if (j < n && d->idx[j] == i) {
			if (mask[j++]) {
				ALLOC_GROW(out->it, out->n + 1, out->alloc);
				out->it[out->n++] = d->base->it[i];
				out->it[out->n - 1].keep = NULL;
				out->it[out->n - 1].nkeep = 0;
			}
			continue;
		}
		ALLOC_GROW(out->it, out->n + 1, out->alloc);
		out->it[out->n] = d->base->it[i];
		if (d->base->it[i].nkeep) {
			out->it[out->n].keep = xmalloc(d->base->it[i].nkeep * sizeof(struct range));
			memcpy(out->it[out->n].keep, d->base->it[i].keep,
			       d->base->it[i].nkeep * sizeof(struct range));
		}
		out->n++;
	}
}

typedef void (*apply_mask_fn)(const void *d, const unsigned char *mask, size_t n, struct cand *out);

/* The ddmin oracle's common part: build one candidate per mask with
 * `apply`, test them as one batch, release them. */
static int test_masks(struct S *s, const void *d, apply_mask_fn apply,
		      const unsigned char *const *masks, size_t k, size_t n, int *res)
{
	struct cand *cs = xcalloc(k, sizeof(*cs));
	struct cand **ps = xcalloc(k, sizeof(*ps));
	int ret;
	for (size_t i = 0; i < k; i++) {
		apply(d, masks[i], n, &cs[i]);
		ps[i] = &cs[i];
	}
	ret = test_cands(s, ps, k, res);
	for (size_t i = 0; i < k; i++)
		cand_release(&cs[i]);
	free(cs);
	free(ps);
	return ret;
}

static int launch_oracle(void *arg, const unsigned char *const *masks, size_t k, size_t n, int *res)
{
	struct launch_dd *d = arg;
	return test_masks(d->s, d, apply_launch_mask, masks, k, n, res);
}

/* Which launches can matter to the last one: walk backwards, keeping a
 * launch when it points into a buffer that the fault (or a launch already
 * kept) points into.  Returns a 0/1 mask over the nl launches. */
static unsigned char *relevant_launches(const struct cand *c, const size_t *idx, size_t nl)
{
	struct memmap mm = MEMMAP_INIT;
	size_t **bufs = xcalloc(nl, sizeof(*bufs)), *nb = xcalloc(nl, sizeof(size_t));
	unsigned char *rel = xcalloc(nl, 1), *want;
	size_t j = 0;

	for (size_t i = 0; i < c->n && j < nl; i++) {
		const struct tr_rec *r = &c->it[i].rec;
		if (r->type == TR_ALLOC)
			memmap_add(&mm, r->u.alloc.addr, r->u.alloc.size, r->u.alloc.kind, (long)i);
		else if (r->type == TR_FREE)
			memmap_free(&mm, r->u.free.addr, (long)i);
		else if (r->type == TR_LAUNCH && i == idx[j]) {
			const struct tr_launch *l = &r->u.launch;
			bufs[j] = xcalloc(l->argsize / 8 + 1, sizeof(size_t));
			for (uint32_t off = 0; off + 8 <= l->argsize; off += 8) {
				uint64_t v;
				int dead;
				memcpy(&v, l->args + off, 8);
				struct mm_alloc *a = v >= 65536 ? memmap_lookup(&mm, v, &dead) : NULL;
				if (a)
					bufs[j][nb[j]++] = a->index;
			}
			j++;
		}
	}
	want = xcalloc(mm.n + 1, 1);
	rel[nl - 1] = 1;
	for (size_t k = 0; k < nb[nl - 1]; k++)
		want[bufs[nl - 1][k]] = 1;
	for (size_t l = nl - 1; l-- > 0;) {
		int hit = 0;
		for (size_t k = 0; k < nb[l] && !hit; k++)
			hit = want[bufs[l][k]];
		if (!hit)
			continue;
		rel[l] = 1;
		for (size_t k = 0; k < nb[l]; k++)
			want[bufs[l][k]] = 1;
	}
	for (size_t l = 0; l < nl; l++)
		free(bufs[l]);
	free(bufs);
	free(nb);
	free(want);
	memmap_release(&mm);
	return rel;
}

static void phase_launches(struct S *s, struct cand *best, const char *name)
{
	struct launch_dd d = { s, best, NULL };
	size_t nl = 0;
	unsigned char *keep, *fixed;
	struct ddmin_stats st;

	phase_begin(s, name, best);
	d.idx = xcalloc(best->n + 1, sizeof(size_t));
	for (size_t i = 0; i < best->n; i++)
		if (best->it[i].rec.type == TR_LAUNCH)
			d.idx[nl++] = i;
	if (nl <= 1) {
		free(d.idx);
		phase_end(s, best, "skipped: one launch");
		return;
	}
	keep = xmalloc(nl);
	fixed = xcalloc(nl, 1);
	memset(keep, 1, nl);
	fixed[nl - 1] = 1;   /* the faulting launch */
	/* dependency-aware first cut: launches that touch no buffer the fault
	 * can depend on (backward closure over shared buffers) go in one try */
	if (s->o->strategy == STRATEGY_FULL) {
		unsigned char *rel = relevant_launches(best, d.idx, nl);
		size_t nrel = 0;
		for (size_t i = 0; i < nl; i++)
			nrel += rel[i];
		if (nrel < nl) {
			int r = 0;
			const unsigned char *m = rel;
			if (launch_oracle(&d, &m, 1, nl, &r) == 0 && r)
				memcpy(keep, rel, nl);
			progress(s, "dropping %zu launches that share no buffer with the fault: %s",
				 nl - nrel, r ? "kept the fault" : "lost it");
		}
		free(rel);
	}
	ddmin_run(keep, fixed, nl, launch_oracle, &d, &st);
	{
		struct cand out;
		apply_launch_mask(&d, keep, nl, &out);
		cand_release(best);
		*best = out;
	}
	free(keep);
	free(fixed);
	free(d.idx);
	if (cand_count(best, TR_LAUNCH) == 1 && !s->rep->one_launch_seconds)
		s->rep->one_launch_seconds = now_sec() - s->t0;
	phase_end(s, best, st.aborted ? "stopped (time limit)" : "1-minimal");
}

/* ---- buffer contents ------------------------------------------------------ */

struct data_dd {
	struct S *s;
	const struct cand *base;
	size_t item;             /* the H2D item */
	struct range *chunks;    /* candidate chunks (element i of the mask) */
};

static void apply_data_mask(const void *dv, const unsigned char *mask, size_t n, struct cand *out)
{
	const struct data_dd *d = dv;
	struct item *it;
	cand_copy(out, d->base);
	it = &out->it[d->item];
	free(it->keep);
	it->keep = xcalloc(n + 1, sizeof(struct range));
	it->nkeep = 0;
	it->data_mode = DATA_KEEP;
	for (size_t i = 0; i < n; i++) {
		if (!mask[i])
			continue;
		/* merge adjacent chunks into one range */
		if (it->nkeep && it->keep[it->nkeep - 1].off + it->keep[it->nkeep - 1].len == d->chunks[i].off)
			it->keep[it->nkeep - 1].len += d->chunks[i].len;
		else
			it->keep[it->nkeep++] = d->chunks[i];
	}
}

static int data_oracle(void *arg, const unsigned char *const *masks, size_t k, size_t n, int *res)
{
	struct data_dd *d = arg;
	return test_masks(d->s, d, apply_data_mask, masks, k, n, res);
}

/*
 * Byte offsets (within the H2D payload of `item`) of 8-byte words that hold
 * a pointer into some buffer of the candidate.  Such words are never zeroed
 * or filled: a zeroed pointer array faults too, in the same kernel, for a
 * reason that is not the user's bug.  Returns a 0/1 map of payload words
 * (size/8 + 1 entries), or NULL when there are none.
 */
static unsigned char *pointer_words(const struct cand *c, size_t item)
{
	struct memmap mm = MEMMAP_INIT;
	struct strbuf data = STRBUF_INIT, e = STRBUF_INIT;
	const struct item *it = &c->it[item];
	unsigned char *map = NULL;
	size_t nw, found = 0;

	for (size_t i = 0; i < c->n; i++) {
		const struct tr_rec *r = &c->it[i].rec;
		if (r->type == TR_ALLOC)
			memmap_add(&mm, r->u.alloc.addr, r->u.alloc.size, r->u.alloc.kind, (long)i);
	}
	if (trace_blob_read(it->src, it->rec.u.copy.blob, &data, 0, &e) < 0)
		goto out;
	nw = data.len / 8 + 1;
	map = xcalloc(nw, 1);
	/* words aligned in the device address space */
	for (uint64_t off = (8 - (it->rec.u.copy.dst & 7)) & 7; off + 8 <= data.len; off += 8) {
		uint64_t v;
		int dead;
		memcpy(&v, data.buf + off, 8);
		if (v >= 65536 && memmap_lookup(&mm, v, &dead)) {
			map[off / 8] = 1;
			if (off % 8)
				map[off / 8 + 1] = 1;
			found++;
		}
	}
	if (!found) {
		free(map);
		map = NULL;
	}
out:
	memmap_release(&mm);
	sb_release(&data);
	sb_release(&e);
	return map;
}

/* 1 if [off, off+len) covers a marked pointer word. */
static int covers_pointer(const unsigned char *pw, uint64_t off, uint64_t len)
{
	if (!pw)
		return 0;
	for (uint64_t w = off / 8; w * 8 < off + len; w++)
		if (pw[w])
			return 1;
	return 0;
}

/* Keep only the chunks of one buffer that matter: ddmin over coarse chunks,
 * then over 8-byte words inside the kept ones.  Pointer words stay. */
static void minimize_chunks(struct S *s, struct cand *best, size_t item, const unsigned char *pw)
{
	uint64_t size = best->it[item].rec.u.copy.size;
	struct data_dd d = { s, best, item, NULL };
	size_t n = size / 8 < 64 ? (size_t)((size + 7) / 8) : 64;
	unsigned char *keep, *fixed;

	if (!n)
		return;
	d.chunks = xcalloc(n, sizeof(struct range));
	/* chunk edges on 8-byte boundaries, so words below are whole elements */
	for (size_t i = 0; i < n; i++) {
		uint64_t lo = (size * i / n) & ~(uint64_t)7, hi = i + 1 == n ? size : (size * (i + 1) / n) & ~(uint64_t)7;
		d.chunks[i].off = lo;
		d.chunks[i].len = hi > lo ? hi - lo : 0;
	}
	keep = xmalloc(n);
	memset(keep, 1, n);
	fixed = xcalloc(n, 1);
	for (size_t i = 0; i < n; i++)
		fixed[i] = (unsigned char)covers_pointer(pw, d.chunks[i].off, d.chunks[i].len);
	ddmin_run(keep, fixed, n, data_oracle, &d, NULL);
	free(fixed);
	/* refine: split each kept chunk into 8-byte words */
	{
		struct range *words = NULL;
		size_t nw = 0, aw = 0;
		for (size_t i = 0; i < n; i++) {
			if (!keep[i])
				continue;
			for (uint64_t o = d.chunks[i].off; o < d.chunks[i].off + d.chunks[i].len; o += 8) {
				ALLOC_GROW(words, nw + 1, aw);
				words[nw].off = o;
				words[nw].len = d.chunks[i].off + d.chunks[i].len - o < 8 ?
						d.chunks[i].off + d.chunks[i].len - o : 8;
				nw++;
			}
		}
		free(d.chunks);
		free(keep);
		d.chunks = words;
		n = nw;
		keep = xmalloc(n + 1);
		memset(keep, 1, n);
		fixed = xcalloc(n + 1, 1);
		for (size_t i = 0; i < n; i++)
			fixed[i] = (unsigned char)covers_pointer(pw, d.chunks[i].off, d.chunks[i].len);
		if (n > 1 && n <= 4096)
			ddmin_run(keep, fixed, n, data_oracle, &d, NULL);
		free(fixed);
	}
	{
		struct cand out;
		apply_data_mask(&d, keep, n, &out);
		cand_release(best);
		*best = out;
	}
	free(keep);
	free(d.chunks);
}

static void phase_data(struct S *s, struct cand *best)
{
	int changed = 0;
	phase_begin(s, "data", best);
	for (size_t i = 0; i < best->n && !over_time(s) && !s->infra_failed; i++) {
		struct item *it = &best->it[i];
		if (it->rec.type != TR_MEMCPY_H2D || it->data_mode != DATA_ORIG || !it->rec.u.copy.size)
			continue;
		struct cand z = CAND_INIT, f = CAND_INIT;
		struct cand *two[2] = { &z, &f };
		int r[2] = { 0, 0 };
		unsigned char *pw = pointer_words(best, i);
		if (pw) {
			/* holds pointers: only the chunk search, pointer words fixed */
			minimize_chunks(s, best, i, pw);
			free(pw);
			changed = 1;
			continue;
		}
		cand_copy(&z, best);
		z.it[i].data_mode = DATA_ZERO;
		cand_copy(&f, best);
		f.it[i].data_mode = DATA_FILL;
		f.it[i].seed = 0x1234u + (uint32_t)i;
		if (test_cands(s, two, 2, r) < 0) {
			cand_release(&z);
			cand_release(&f);
			break;
		}
		if (r[0]) {
			cand_release(best);
			*best = z;
			cand_release(&f);
			changed = 1;
			continue;
		}
		cand_release(&z);
		minimize_chunks(s, best, i, NULL);
		changed = 1;
		/* a seeded fill reads better than most of a buffer's bytes
		 * (GPUREDUCE_PREFER_FILL=1: whenever it faults; a test hook) */
		if (r[1] && getenv("GPUREDUCE_PREFER_FILL")) {
			cand_release(best);
			*best = f;
			continue;
		}
		if (r[1]) {
			uint64_t kept = 0;
			for (size_t k = 0; k < best->it[i].nkeep; k++)
				kept += best->it[i].keep[k].len;
			if (kept * 4 > best->it[i].rec.u.copy.size) {
				cand_release(best);
				*best = f;
				continue;
			}
		}
		cand_release(&f);
	}
	phase_end(s, best, changed ? "contents replaced" : "nothing to replace");
}

/*
 * Test the nt candidates as one batch; the first interesting one (in order)
 * replaces *best.  The others are released.  Returns the winner's index,
 * -1 when none was interesting, -2 when testing stopped (time, workers).
 */
static int test_pick_first(struct S *s, struct cand *cs, int nt, struct cand *best)
{
	struct cand *ps[8] = { NULL };
	int r[8] = { 0 }, won = -1;
	if (nt > 8)
		BUG("test_pick_first: %d candidates", nt);
	for (int t = 0; t < nt; t++)
		ps[t] = &cs[t];
	if (test_cands(s, ps, (size_t)nt, r) < 0) {
		for (int t = 0; t < nt; t++)
			cand_release(&cs[t]);
		return -2;
	}
	for (int t = 0; t < nt && won < 0; t++)
		if (r[t])
			won = t;
	for (int t = 0; t < nt; t++)
		if (t != won)
			cand_release(&cs[t]);
	if (won >= 0) {
		cand_release(best);
		*best = cs[won];
	}
	return won;
}

/* ---- scalar parameters ---------------------------------------------------- */

/*
 * Try simpler values for the faulting launch's scalar parameters (4- or
 * 8-byte parameters that are not pointers into a buffer): 0, then 1, then
 * half the value.  A fault that survives n = 0 says the kernel never looked
 * at n -- a missing bounds check, in the kernel's own terms.  Pointer-sized
 * words that point into buffers are never touched.
 */
static void phase_scalars(struct S *s, struct cand *best)
{
	size_t li = (size_t)-1;
	int changed = 0;
	struct memmap mm = MEMMAP_INIT;

	phase_begin(s, "scalars", best);
	for (size_t i = 0; i < best->n; i++) {
		const struct tr_rec *r = &best->it[i].rec;
		if (r->type == TR_ALLOC)
			memmap_add(&mm, r->u.alloc.addr, r->u.alloc.size, r->u.alloc.kind, (long)i);
		else if (r->type == TR_LAUNCH)
			li = i;
	}
	if (li == (size_t)-1) {
		memmap_release(&mm);
		phase_end(s, best, "skipped: no launch");
		return;
	}
	for (uint32_t p = 0; p < best->it[li].rec.u.launch.nparams && !over_time(s) && !s->infra_failed; p++) {
		const struct tr_launch *l = &best->it[li].rec.u.launch;
		uint32_t off = l->params[p].offset, size = l->params[p].size;
		uint64_t v = 0, tries[3];
		int nt = 0;
		struct cand cs[3];
		int dead;

		if (size != 4 && size != 8)
			continue;
		memcpy(&v, l->args + off, size);
		if (size == 8 && v >= 65536 && memmap_lookup(&mm, v, &dead))
			continue;   /* a pointer */
		if (v == 0)
			continue;
		tries[nt++] = 0;
		if (v != 1)
			tries[nt++] = 1;
		if (v / 2 > 1 && (size == 8 || v / 2 < (1ull << 31)))
			tries[nt++] = v / 2;
		for (int t = 0; t < nt; t++) {
			struct tr_launch *cl;
			cand_copy(&cs[t], best);
			cl = &cs[t].it[li].rec.u.launch;
			/* the launch's args point into the source trace: give the
			 * copy its own bytes before changing them */
			uint8_t *args = arena_copy(s, cl->args, cl->argsize);
			memcpy(args + off, &tries[t], size);
			cl->args = args;
		}
		int won = test_pick_first(s, cs, nt, best);
		if (won == -2)
			break;
		if (won >= 0)
			changed = 1;
	}
	memmap_release(&mm);
	phase_end(s, best, changed ? "scalars simplified" : "scalars kept");
}

/* ---- grid ------------------------------------------------------------- */

static void phase_grid(struct S *s, struct cand *best)
{
	size_t li = (size_t)-1;
	int changed = 0;

	phase_begin(s, "grid", best);
	for (size_t i = best->n; i-- > 0;)
		if (best->it[i].rec.type == TR_LAUNCH) {
			li = i;
			break;
		}
	if (li == (size_t)-1) {
		phase_end(s, best, "skipped: no launch");
		return;
	}
	for (int dim = 0; dim < 3 && !over_time(s) && !s->infra_failed; dim++) {
		uint32_t cur = dim == 0 ? best->it[li].rec.u.launch.grid.x :
			       dim == 1 ? best->it[li].rec.u.launch.grid.y : best->it[li].rec.u.launch.grid.z;
		uint32_t lo = 0, hi = cur;     /* hi faults; lo unknown/clean */
		while (hi > 1 && hi - lo > 1) {
			/* one batch: a few evenly spaced sizes below hi */
			uint32_t tries[4];
			int nt = 0;
			struct cand cs[4];
			for (int t = 1; t <= 4; t++) {
				uint32_t v = lo + (uint32_t)((uint64_t)(hi - lo) * (uint64_t)t / 5);
				if (v <= lo || v >= hi || (nt && tries[nt - 1] == v))
					continue;
				tries[nt++] = v;
			}
			if (!nt)
				break;
			for (int t = 0; t < nt; t++) {
				struct tr_launch *l;
				cand_copy(&cs[t], best);
				l = &cs[t].it[li].rec.u.launch;
				if (dim == 0) l->grid.x = tries[t];
				else if (dim == 1) l->grid.y = tries[t];
				else l->grid.z = tries[t];
			}
			int won = test_pick_first(s, cs, nt, best);
			if (won == -2)
				break;
			if (won >= 0) {
				lo = won ? tries[won - 1] : lo;
				hi = tries[won];
				changed = 1;
			} else {
				lo = tries[nt - 1];
			}
		}
	}
	phase_end(s, best, changed ? "grid reduced" : "grid kept");
}

/* ---- final ---------------------------------------------------------------- */

static int confirm_final(struct S *s, struct cand *c, const char *out_bin, int *faults, int runs)
{
	struct replay_result first;
	struct replay_opts ro = REPLAY_OPTS_INIT;
	ro.guard = s->guard;
	if (cand_write(c, out_bin, s->err) < 0)
		return -1;
	if (run_file(s, out_bin, &ro, runs, &first, faults) < 0)
		return -1;
	s->ph->candidates += runs;
	return 0;
}

static int has_graph_launch(const struct trace *t)
{
	for (size_t i = 0; i < t->nrec; i++)
		if (t->rec[i].type == TR_GRAPH_LAUNCH)
			return 1;
	return 0;
}

/* Write `t` with every GRAPH_LAUNCH replaced by copies of its graph's nodes
 * (no longer flagged captured) and the graph records dropped; open it as a
 * source.  NULL with s->err on failure. */
static struct trace *expand_graphs(struct S *s, const struct trace *t)
{
	struct graphs G = GRAPHS_INIT;
	struct cand c = CAND_INIT;
	struct strbuf path = STRBUF_INIT;
	struct trace *ex = NULL;

	for (size_t i = 0; i < t->nrec; i++) {
		const struct tr_rec *r = &t->rec[i];
		if (graphs_feed(&G, r, i))
			continue;
		switch (r->type) {
		case TR_BLOB:
			break;
		case TR_GRAPH_LAUNCH: {
			const struct gcap *g = graphs_find_exec(&G, r->u.graph.exec);
			for (size_t k = 0; g && k < g->n; k++) {
				struct item *it = cand_add(&c, t, g->recs[k]);
				if (it->rec.type == TR_LAUNCH)
					it->rec.u.launch.flags &= ~TR_F_CAPTURED;
				else if (it->rec.type == TR_MEMSET)
					it->rec.u.memset.flags &= ~TR_F_CAPTURED;
				else
					it->rec.u.copy.flags &= ~TR_F_CAPTURED;
			}
			break;
		}
		default:
			cand_add(&c, t, i);
			break;
		}
	}
	sb_addf(&path, "%s/expanded.bin", s->o->workdir);
	if (cand_write(&c, path.buf, s->err) == 0)
		ex = add_source(s, path.buf);
	progress(s, "expanded graph launches into %zu launches", cand_count(&c, TR_LAUNCH));
	cand_release(&c);
	graphs_release(&G);
	sb_release(&path);
	return ex;
}

int shrink_run(const struct trace *orig, const struct shrink_opts *o, const char *out_bin,
	       struct shrink_report *rep, struct strbuf *err)
{
	struct S s;
	struct cand best = CAND_INIT, slice_only = CAND_INIT;
	struct strbuf slice_site_bin = STRBUF_INIT, slice_site_out = STRBUF_INIT;
	struct child site_child = CHILD_INIT;
	int site_started = 0;
	long fault_ev = -1, frec;
	int ret = -1;

	memset(&s, 0, sizeof(s));
	memset(rep, 0, sizeof(*rep));
	s.orig = orig;
	s.o = o;
	s.rep = rep;
	s.err = err;
	s.t0 = now_sec();
	s.reps = 1;
	s.need = 1;

	for (size_t i = 0; i < orig->nrec; i++) {
		if (orig->rec[i].type == TR_LAUNCH)
			rep->orig_launches++;
		if (orig->rec[i].type == TR_MEMCPY_H2D)
			rep->orig_bytes += orig->rec[i].u.copy.size;
	}
	rep->orig_records = orig->nrec;
	frec = find_fault_record(orig);
	if (frec < 0) {
		sb_addf(err, "%s holds no fault: the captured program did not fail with a sticky CUDA "
			"error, so there is nothing to shrink", orig->path);
		return -1;
	}
	rep->code = (int)orig->rec[frec].u.fault.code;
	snprintf(rep->error, sizeof(rep->error), "%s", orig->rec[frec].u.fault.error);
	snprintf(rep->kernel, sizeof(rep->kernel), "%s", orig->rec[frec].u.fault.kernel);

	/* Graph launches: reduce the trace with each launch expanded into its
	 * nodes, so the faulting node can be sliced like any launch. */
	if (has_graph_launch(orig)) {
		struct trace *ex = expand_graphs(&s, orig);
		if (!ex)
			return -1;
		s.orig = ex;
		if (!strncmp(orig->rec[frec].u.fault.api, "cuGraphLaunch", 13))
			s.kernel_from_replay = 1;
		frec = find_fault_record(ex);
	}

	s.pool = pool_create(o->jobs, o->strategy == STRATEGY_BASELINE, o->cand_timeout, err);
	if (!s.pool) {
		rep->infra_failed = 1;
		return -1;
	}
	if (phase_confirm(&s, &fault_ev) < 0)
		goto out;
	if (rep->flaky) {
		/* keep candidates whose rate stays near the original's */
		double rate = (double)rep->orig_faults / rep->orig_runs;
		s.reps = rate >= 0.5 ? 3 : rate >= 0.25 ? 6 : 10;
		s.need = 1;
	}

	if (o->strategy == STRATEGY_BASELINE) {
		cand_add_all(&best, s.orig);
		phase_launches(&s, &best, "ddmin-launches");
	} else {
		int sliced = phase_slice(&s, fault_ev, &best);
		if (!sliced && !s.infra_failed) {
			if (!phase_suffix(&s, fault_ev, &best)) {
				cand_release(&best);
				cand_add_all(&best, s.orig);
			}
			phase_launches(&s, &best, "ddmin-launches");
		}
		if (!best.n) {
			cand_add_all(&best, s.orig);
		}
		cand_copy(&slice_only, &best);
		/* the slice's compute-sanitizer run (for the site check at the
		 * end) goes on in the background while the data, grid and scalar
		 * phases run */
		if (!o->no_site_check && diagnose_find_sanitizer()) {
			struct strbuf e = STRBUF_INIT;
			sb_addf(&slice_site_bin, "%s/slice-site.bin", o->workdir);
			sb_addf(&slice_site_out, "%s/slice-site.txt", o->workdir);
			if (cand_write(&slice_only, slice_site_bin.buf, &e) == 0 &&
			    diagnose_start(slice_site_bin.buf, s.guard, slice_site_out.buf, &site_child, &e) == 0)
				site_started = 1;
			sb_release(&e);
		}
		if (!s.infra_failed)
			phase_data(&s, &best);
		if (!s.infra_failed)
			phase_grid(&s, &best);
		if (!s.infra_failed)
			phase_scalars(&s, &best);
	}
	if (s.infra_failed)
		goto out;

	/* final confirmation; back off to the state before data/grid phases */
	phase_begin(&s, "verify", &best);
	{
		int runs = o->confirm_runs > 0 ? o->confirm_runs : (rep->flaky ? 10 : 5);
		int faults = 0;
		if (confirm_final(&s, &best, out_bin, &faults, runs) < 0)
			goto out;
		if (!faults && slice_only.n) {
			snprintf(rep->note, sizeof(rep->note),
				 "the fully reduced candidate did not fault in confirmation; backed off to the state before the data and grid phases");
			cand_release(&best);
			cand_copy(&best, &slice_only);
			if (confirm_final(&s, &best, out_bin, &faults, runs) < 0)
				goto out;
		}
		/* the cheap signature (error + kernel) cannot tell two bugs in one
		 * kernel apart: where compute-sanitizer is at hand, the reduced
		 * trace must fail at the same site as the plain slice, or we back
		 * off to the slice */
		if (faults && slice_only.n && site_started) {
			struct strbuf o1 = STRBUF_INIT, o2 = STRBUF_INIT, e = STRBUF_INIT;
			char s1[700], s2[700];
			int got1 = diagnose_collect(&site_child, slice_site_out.buf, 180, &o1, &e) == 0;
			site_started = 0;
			if (got1 && file_hash(slice_site_bin.buf) == file_hash(out_bin)) {
				/* nothing changed after the slice: its run is the final one's */
				rep->final_sanitizer = xstrdup(o1.buf);
			} else if (got1 && diagnose_site(o1.buf, s1, sizeof(s1)) == 0) {
				/* a racy fault may simply not happen in this one run: only a
				 * different site counts against the reductions, and a flaky
				 * final trace gets a few tries to show its site */
				int have2 = 0, tries = rep->flaky ? 4 : 1;
				for (int k = 0; k < tries && !have2; k++) {
					sb_reset(&o2);
					have2 = diagnose_run(out_bin, s.guard, &o2, &e) == 0 &&
						diagnose_site(o2.buf, s2, sizeof(s2)) == 0;
				}
				snprintf(rep->site, sizeof(rep->site), "%s", s1);
				if (have2 && !strcmp(s1, s2)) {
					rep->site_confirmed = 1;
					rep->final_sanitizer = xstrdup(o2.buf);
				} else if (have2) {
					snprintf(rep->note, sizeof(rep->note),
						 "the data/grid reductions moved the fault (sanitizer: '%.200s' vs '%.200s'); backed off to the slice",
						 s1, s2);
					cand_release(&best);
					cand_copy(&best, &slice_only);
					if (confirm_final(&s, &best, out_bin, &faults, runs) < 0)
						goto out;
				} else {
					snprintf(rep->note, sizeof(rep->note),
						 "site not confirmed: the reduced trace did not fault under compute-sanitizer in %d run(s)%s",
						 tries, rep->flaky ? " (a flaky fault)" : "");
				}
			}
			sb_release(&o1);
			sb_release(&o2);
			sb_release(&e);
		}
		rep->final_runs = runs;
		rep->final_faults = faults;
		if (faults < runs)
			rep->flaky = 1;   /* the original looked steady in its first runs; the repro says otherwise */
		phase_end(&s, &best, faults ? "confirmed" : "did not reproduce");
		if (!faults) {
			sb_addf(err, "the reduced trace did not fault in %d confirmation runs; nothing was emitted", runs);
			unlink(out_bin);
			goto out;
		}
	}
	measure(&best, &rep->final_launches, &rep->final_buffers, &rep->final_bytes);
	ret = 0;
out:
	if (s.pool) {
		rep->workers_spawned = pool_stats(s.pool)->spawned;
		pool_release(s.pool);
	}
	rep->seconds = now_sec() - s.t0;
	rep->infra_failed = s.infra_failed;
	cand_release(&best);
	cand_release(&slice_only);
	for (int i = 0; i < s.nsrc; i++) {
		trace_release(s.src[i]);
		free(s.src[i]);
	}
	if (site_started)
		child_kill(&site_child);
	sb_release(&slice_site_bin);
	sb_release(&slice_site_out);
	free(s.cache);
	for (size_t i = 0; i < s.nowned; i++)
		free(s.owned[i]);
	free(s.owned);
	return ret;
}

void shrink_print_report(FILE *f, const struct shrink_report *rep)
{
	fprintf(f, "%-15s %-22s %-22s %10s %8s  %s\n", "phase", "launches/buffers before",
		"after", "candidates", "seconds", "outcome");
	for (int i = 0; i < rep->nphases; i++) {
		const struct shrink_phase *p = &rep->phase[i];
		char b1[40], b2[40];
		snprintf(b1, sizeof(b1), "%zu / %zu", p->launches_before, p->buffers_before);
		snprintf(b2, sizeof(b2), "%zu / %zu", p->launches_after, p->buffers_after);
		fprintf(f, "%-15s %-22s %-22s %10ld %8.2f  %s\n", p->name, b1, b2, p->candidates,
			p->seconds, p->outcome ? p->outcome : "");
	}
	if (rep->note[0])
		fprintf(f, "note: %s\n", rep->note);
}
