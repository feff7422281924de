/*
 * oracle.c - testing reduction candidates (see oracle.h): the outcome
 * cache, the worker pool, the signature and its repeats, the fault's
 * confirmation, snapshots, and the report's bookkeeping.
 *
 * Every candidate is written as a trace file under the work directory and
 * replayed by the worker pool (pool.h); nothing here touches the GPU.
 * Outcomes are cached by the candidate file's content hash, so a candidate
 * that two phases happen to build twice runs once.  The compute-sanitizer
 * side is oracle-san.c.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/interrupt.h"
#include "../common/strbuf.h"
#include "../common/util.h"
#include "../common/signature.h"
#include "../addr/place.h"
#include "cand.h"
#include "../diagnose/diagnose.h"
#include "oracle-int.h"
#include "../replay/pool.h"
#include "shrink.h"
#include "shrink-phases.h"

/* ---- bookkeeping ---------------------------------------------------------- */

/* A copy of n bytes that lives until the reduction ends (candidates keep
 * pointers to it). */
uint8_t *oracle_keep_bytes(struct oracle *s, const uint8_t *src, size_t n)
{
	uint8_t *p = xmalloc(n + 8);
	memcpy(p, src, n);
	memset(p + n, 0, 8);
	ALLOC_GROW(s->owned, s->nowned + 1, s->aowned);
	s->owned[s->nowned++] = p;
	return p;
}

int oracle_over_time(struct oracle *s)
{
	if (s->o->time_limit > 0 && now_sec() - s->t0 > s->o->time_limit)
		s->rep->time_limited = 1;
	if (interrupt_signal())
		s->rep->interrupted = interrupt_signal();
	return s->rep->time_limited || s->rep->interrupted;
}

/* When candidates stop: a second past --time-limit.  A batch can hold
 * hundreds of candidates (plain ddmin tests every subset at once) and
 * any one may hang, so jobs not started by then are not run and running
 * ones are stopped; both count as not interesting.  0: no limit. */
static double cand_stop_at(const struct oracle *s)
{
	return s->o->time_limit > 0 ? s->t0 + s->o->time_limit + 1 : 0;
}

/* One line in the --log file: seconds since the start, then the text. */
void oracle_log(struct oracle *s, const char *fmt, ...)
{
	va_list ap;
	if (!s->log)
		return;
	fprintf(s->log, "%8.3f %-8s ", now_sec() - s->t0, s->ph ? s->ph->name : "-");
	va_start(ap, fmt);
	vfprintf(s->log, fmt, ap);
	va_end(ap);
	fputc('\n', s->log);
	fflush(s->log);
}

void oracle_progress(struct oracle *s, const char *fmt, ...)
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

void oracle_measure(const struct cand *c, size_t *launches, size_t *buffers, uint64_t *bytes)
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

/* Replay runs so far that ended their worker (a fault, a crash, a time
 * limit): what a phase costs on a GPU is mostly these (pool.c). */
static long runs_stopped(const struct oracle *s)
{
	long n = s->stopped_released;
	if (s->pool) {
		const struct pool_stats *st = pool_stats(s->pool);
		n += st->faults + st->crashes + st->timeouts;
	}
	return n;
}

/* The current phase's faulted_replays, counted up to now. */
static void phase_count_stops(struct oracle *s, struct shrink_phase *p)
{
	long n = runs_stopped(s) - s->stopped_at_phase;
	p->faulted_replays = n > 0 ? n : 0;
}

struct shrink_phase *oracle_phase_begin(struct oracle *s, const char *name, const struct cand *c)
{
	struct shrink_phase *p;
	int id;
	if (s->rep->nphases >= PH__COUNT)
		BUG("phase %s: more report rows than the phase table has (a phase opened twice)", name);
	p = &s->rep->phase[s->rep->nphases++];
	memset(p, 0, sizeof(*p));
	p->name = name;
	if (c)
		oracle_measure(c, &p->launches_before, &p->buffers_before, &p->bytes_before);
	p->seconds = now_sec();
	s->ph = p;
	s->stopped_at_phase = runs_stopped(s);
	oracle_progress(s, "phase %s ...", name);
	cand_release(&s->phase_state);
	if (c && (id = phase_lookup(name)) >= 0 && phase_defs[id].fn) {
		/* a table phase (lost workers show in its first test) */
		oracle_check_state(s, c);
		if (!s->rep->flaky && s->reps == 1 && s->state_checks < STATE_CHECK_MAX &&
		    (s->rechecks_left > 0 || s->cand_flaky))
			cand_copy(&s->phase_state, c);   /* (oracle_recheck_clean may replay it) */
	}
	return p;
}

void oracle_phase_end(struct oracle *s, const struct cand *c, const char *outcome)
{
	struct shrink_phase *p = s->ph;
	if (c)
		oracle_measure(c, &p->launches_after, &p->buffers_after, &p->bytes_after);
	p->seconds = now_sec() - p->seconds;
	p->outcome = outcome;
	phase_count_stops(s, p);
	oracle_progress(s, "phase %s: %s (%ld candidates, %.1f s)", p->name, outcome, p->candidates, p->seconds);
	if (s->o->progress_tty && !s->o->quiet)
		fputc('\n', stderr);
}

/* The current phase ended on an error (shrink gives up): its time, its
 * sizes as they were, and why. */
void oracle_phase_abandon(struct oracle *s, const char *outcome)
{
	struct shrink_phase *p = s->ph;
	if (!p || p->outcome)
		return;
	p->launches_after = p->launches_before;
	p->buffers_after = p->buffers_before;
	p->bytes_after = p->bytes_before;
	p->seconds = now_sec() - p->seconds;
	p->outcome = outcome;
	phase_count_stops(s, p);
}

int oracle_sig_match(const struct oracle *s, const struct replay_result *r)
{
	return r->status == RS_FAULT && sig_same_code(r->code, s->rep->code) &&
	       (s->o->sig_code_only || s->kernel_from_replay || sig_same_kernel(s->rep->kernel, r->kernel, 0));
}

/* ---- testing candidates ---------------------------------------------------- */

static struct cache_ent *cache_find(struct oracle *s, uint64_t h)
{
	for (size_t i = 0; i < s->ncache; i++)
		if (s->cache[i].hash == h)
			return &s->cache[i];
	return NULL;
}

/* A candidate's cached outcome that still holds: not a miss in fewer runs
 * than a candidate gets now (the fault found flaky since: it runs again) */
static struct cache_ent *cache_usable(struct oracle *s, uint64_t h)
{
	struct cache_ent *ce = cache_find(s, h);
	return ce && (ce->faults || ce->runs >= s->reps) ? ce : NULL;
}

/* A replay job for a candidate's trace file: the shrink's guard mode and
 * per-candidate timeout (test_cands adds the time limit's stop). */
static void cand_job(const struct oracle *s, struct job *j, const char *path)
{
	j->trace = path;
	j->opts = (struct replay_opts)REPLAY_OPTS_INIT;
	j->opts.guard = s->guard;
	j->timeout = s->o->cand_timeout;
}

int oracle_run_batch(struct oracle *s, struct job *jobs, size_t n, const size_t *owner, const char *const *paths,
		     int *faults)
{
	double tb = now_sec();
	size_t cands = 0;
	for (size_t j = 0; j < n; j++)
		cands += !j || owner[j] != owner[j - 1];
	if (pool_run(s->pool, jobs, n, s->err) < 0) {
		s->infra_failed = 1;
		oracle_log(s, "batch of %zu jobs: workers lost: %s", n, s->err->buf);
		return -1;
	}
	oracle_log(s, "batch of %zu jobs (%zu candidates): %.3f s", n, cands, now_sec() - tb);
	for (size_t j = 0; j < n; j++) {
		char d[300];
		const struct replay_result *r = &jobs[j].res;
		if (r->status == RS_TIMEOUT)
			snprintf(d, sizeof(d), "timeout (%.200s)", r->msg);
		else
			snprintf(d, sizeof(d), "%s", r->status == RS_FAULT ? r->error :
				 r->status == RS_CLEAN ? "clean" : "error");
		oracle_log(s, "  %s: %s%s (%.3f s in the worker)", paths[owner[j]], d,
			   r->status == RS_FAULT ? (oracle_sig_match(s, r) ? ", the signature" : ", ANOTHER fault") : "",
			   r->seconds);
		if (oracle_sig_match(s, r))
			faults[owner[j]]++;
		else if (r->status == RS_FAULT)
			s->rep->slipped++;   /* faulted, but not our fault */
	}
	return 0;
}

/*
 * Test k candidates (each up to `reps` times: for a flaky fault, in rounds
 * until it faults); interesting[i] = 1 when candidate i faulted with the
 * signature at least `need` times.  Returns 0, or -1 when
 * the time limit passed or the workers are gone (then nothing is
 * interesting).
 */
int oracle_test(struct oracle *s, struct cand *const *cands, size_t k, int *interesting)
{
	char **paths = xcalloc(k + 1, sizeof(char *));
	uint64_t *hashes = xcalloc(k + 1, sizeof(uint64_t));
	struct job *jobs = xcalloc(k * (size_t)s->reps + 1, sizeof(struct job));
	size_t *owner = xcalloc(k * (size_t)s->reps + 1, sizeof(size_t));
	int *faults = xcalloc(k + 1, sizeof(int));
	int *reran = xcalloc(k + 1, sizeof(int));   /* oracle_recheck_clean's runs */
	char *hit = xcalloc(k + 1, 1);              /* judged from the cache */
	size_t nj = 0;
	int ret = -1;
	/* a flaky fault's candidate counts once it faults (need 1): its runs
	 * go one round at a time, so one that faults first time costs one
	 * faulting run, not reps side by side (each ends its worker) */
	int one_at_a_time = s->reps > 1 && s->need == 1;

	for (size_t i = 0; i < k; i++)
		interesting[i] = 0;
	if (oracle_over_time(s) || s->infra_failed)
		goto out;
	if (s->fake.test) {
		/* a fake oracle (unit tests): judged in memory */
		if (s->fake.test(s->fake.arg, cands, k, interesting) < 0) {
			for (size_t i = 0; i < k; i++)
				interesting[i] = 0;
			s->infra_failed = 1;
			goto out;
		}
		goto counted;
	}
	for (size_t i = 0; i < k; i++) {
		struct strbuf p = STRBUF_INIT;
		sb_addf(&p, "%s/c%05ld.bin", s->o->workdir, ++s->serial);
		paths[i] = sb_detach(&p, NULL);
		if (cand_write(cands[i], paths[i], s->err) < 0)
			goto out;
		hashes[i] = oracle_file_hash(paths[i]);
		struct cache_ent *ce = cache_usable(s, hashes[i]);
		if (ce) {
			hit[i] = 1;
			s->rep->cache_hits++;
			faults[i] = ce->faults;
			interesting[i] = ce->faults >= s->need;
			unlink(paths[i]);
			continue;
		}
		if (s->prebuild_each && k == 1 && s->o->prebuild_repro && s->o->check_repro) {
			s->o->prebuild_repro(s->o->check_arg, paths[i], s->guard);
			oracle_log(s, "  %s: its repro.cu is built ahead while it runs", paths[i]);
		}
		for (int r = 0; r < (one_at_a_time ? 1 : s->reps); r++) {
			cand_job(s, &jobs[nj], paths[i]);
			jobs[nj].stop_at = cand_stop_at(s);
			owner[nj++] = i;
		}
	}
	if (nj) {
		if (s->o->progress_tty && s->ph) {
			size_t l, b;
			uint64_t by;
			char bb[32];
			oracle_measure(cands[0], &l, &b, &by);
			oracle_progress(s, "%s: %ld tested, %zu running; candidates of %zu launch(es), %zu buffer(s), %s",
				 s->ph->name, s->rep->candidates, nj, l, b, fmt_bytes(by, bb));
		}
		/* one_at_a_time: the candidates that have not faulted yet run
		 * again, round after round, up to s->reps runs each */
		for (size_t from = 0, round = 1;; round++) {
			if (oracle_run_batch(s, jobs + from, nj - from, owner + from, (const char *const *)paths, faults) < 0)
				goto out;
			if (!one_at_a_time || round >= (size_t)s->reps)
				break;
			from = nj;
			for (size_t i = 0; i < k; i++)
				if (!hit[i] && faults[i] < s->need) {
					cand_job(s, &jobs[nj], paths[i]);
					jobs[nj].stop_at = cand_stop_at(s);
					owner[nj++] = i;
				}
			if (nj == from)
				break;
		}
		if (oracle_recheck_clean(s, jobs, nj, owner, faults, reran) < 0)
			goto out;
		/* --signature=site: what passed the cheap check must also fail at
		 * the original's site under compute-sanitizer */
		if (s->o->sig_site && s->have_ref) {
			char **sp = xcalloc(k + 1, sizeof(char *));
			size_t *si = xcalloc(k + 1, sizeof(size_t)), ns = 0;
			for (size_t i = 0; i < k; i++)
				if (faults[i] >= s->need && !hit[i]) {
					sp[ns] = paths[i];
					si[ns++] = i;
				}
			if (ns) {
				char (*sites)[700] = xcalloc(ns, sizeof(*sites));
				oracle_sanitize(s, sp, ns, sites, NULL, NULL);
				for (size_t q = 0; q < ns; q++)
					if (strcmp(sites[q], s->ref_site)) {
						faults[si[q]] = 0;
						s->rep->slipped++;
					}
				free(sites);
			}
			free(sp);
			free(si);
		}
		for (size_t i = 0; i < k; i++) {
			if (hit[i])
				continue;
			int ran = reran[i];
			for (size_t j = 0; j < nj; j++)
				ran += owner[j] == i;
			if (!ran)
				continue;
			/* a stale miss (cache_usable) is overwritten */
			struct cache_ent *ce = cache_find(s, hashes[i]);
			if (!ce) {
				ALLOC_GROW(s->cache, s->ncache + 1, s->acache);
				ce = &s->cache[s->ncache++];
				ce->match = NULL;
			}
			ce->hash = hashes[i];
			ce->faults = faults[i];
			ce->runs = ran;
			ce->guard = s->guard;
			for (size_t j = 0; j < nj && faults[i] && !ce->match; j++)
				if (owner[j] == i && oracle_sig_match(s, &jobs[j].res)) {
					ce->match = xmalloc(sizeof(struct replay_result));
					*ce->match = jobs[j].res;
				}
			interesting[i] = faults[i] >= s->need;
			/* tested: the outcome is cached by content, the phases keep the
			 * candidate in memory; the file stays only for --keep-work */
			if (!interesting[i] || !s->o->keep_work)
				unlink(paths[i]);
		}
	}
counted:
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
	free(reran);
	free(hit);
	return ret;
}

/* ddmin's split width: as many parts as there are workers to test them
 * side by side (a flaky fault's repeated tests already fill the pool) */
size_t oracle_dd_width(const struct oracle *s)
{
	if (s->o->strategy == STRATEGY_BASELINE)
		return 2;         /* plain ddmin */
	int w = s->o->jobs / (s->reps > 0 ? s->reps : 1);
	return w > 2 ? (size_t)w : 2;
}

int oracle_test_one(struct oracle *s, struct cand *c)
{
	int r = 0;
	if (oracle_test(s, &c, 1, &r) < 0)
		return -1;
	return r;
}

/* Run a whole trace file n times; count signature matches.  *first gets
 * the first result (for messages and the fault's event). */
int oracle_run_file(struct oracle *s, const char *path, const struct replay_opts *opts, int n,
		    struct replay_result *first, int *matches)
{
	return oracle_run_file_snap(s, path, opts, n, NULL, NULL, first, matches);
}

void oracle_prebuild_each(struct oracle *s, int on)
{
	s->prebuild_each = on;
}

/* The run of a candidate with the content of the file at path that
 * faulted with the signature (under placement guard; -1: any), or NULL. */
static const struct replay_result *cached_match(struct oracle *s, const char *path, int guard)
{
	uint64_t h = oracle_file_hash(path);
	for (size_t i = 0; i < s->ncache; i++)
		if (s->cache[i].hash == h && (guard < 0 || s->cache[i].guard == guard) && s->cache[i].match &&
		    oracle_sig_match(s, s->cache[i].match))
			return s->cache[i].match;
	return NULL;
}

int oracle_recall(struct oracle *s, const char *path, struct replay_result *res)
{
	const struct replay_result *m = cached_match(s, path, s->guard);
	if (m)
		*res = *m;
	return m != NULL;
}

int oracle_faulted_before(struct oracle *s, const char *path)
{
	return cached_match(s, path, -1) != NULL;
}

/* A job that runs a whole trace file (not a candidate): ten times the
 * candidates' timeout, as it goes through everything. */
static void file_job(const struct oracle *s, struct job *j, const char *path, const struct replay_opts *opts)
{
	j->trace = path;
	j->opts = *opts;
	j->timeout = s->o->cand_timeout > 0 ? s->o->cand_timeout * 10 : 0;
}

/* How a run ended, for the log. */
static const char *run_word(const struct replay_result *r)
{
	return r->status == RS_FAULT ? r->error : r->status == RS_CLEAN ? "clean" : "error/timeout";
}

int oracle_run_file_snap(struct oracle *s, const char *path, const struct replay_opts *opts, int n,
			 const struct replay_opts *snap, int *snapped, struct replay_result *first, int *matches)
{
	struct job *jobs = xcalloc((size_t)n + 1, sizeof(*jobs));
	int ret = -1;
	*matches = 0;
	for (int i = 0; i < n; i++)
		file_job(s, &jobs[i], path, snap && i == 0 ? snap : opts);
	double tb = now_sec();
	if (pool_run(s->pool, jobs, (size_t)n, s->err) < 0) {
		s->infra_failed = 1;
		oracle_log(s, "%d runs of %s: workers lost: %s", n, path, s->err->buf);
		goto out;
	}
	for (int i = 0; i < n; i++)
		oracle_log(s, "run of %s: %s%s (%.3f s in the worker)", path, run_word(&jobs[i].res),
		     !snap || i ? "" : jobs[i].res.snapped ? ", its snapshot written on the way" : ", no snapshot",
		     jobs[i].res.seconds);
	if (snap)
		*snapped = n > 0 && jobs[0].res.snapped;
	oracle_log(s, "%d run%s of %s: %.3f s", n, n == 1 ? "" : "s", path, now_sec() - tb);
	*first = jobs[0].res;
	for (int i = 0; i < n; i++) {
		if (oracle_sig_match(s, &jobs[i].res)) {
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

/* The ddmin oracle's common part: build one candidate per mask with
 * `apply`, test them as one batch, release them. */
int oracle_test_masks(struct oracle *s, const void *d, oracle_apply_fn apply,
		      const unsigned char *const *masks, size_t k, size_t n, int *res)
{
	struct cand *cs = xcalloc(k, sizeof(*cs));
	struct cand **ps = xcalloc(k, sizeof(*ps));
	int ret;
	for (size_t i = 0; i < k; i++) {
		apply(d, masks[i], n, &cs[i]);
		ps[i] = &cs[i];
	}
	ret = oracle_test(s, ps, k, res);
	for (size_t i = 0; i < k; i++)
		cand_release(&cs[i]);
	free(cs);
	free(ps);
	return ret;
}

int oracle_test_chain(struct oracle *s, struct cand *cs, size_t chain, int *top_first, struct cand *best,
		      size_t *kept)
{
	struct cand **ps = xcalloc(chain + 1, sizeof(*ps));
	int *r = xcalloc(chain + 1, sizeof(*r));
	size_t q = 0, nb = chain;
	int ret = -1, top = 0;

	if (*top_first) {
		/* the whole chain alone first: one fault when every step faults */
		ps[0] = &cs[chain - 1];
		if (oracle_test(s, ps, 1, &top) < 0)
			goto out;
		nb = top ? 0 : chain - 1;   /* else the steps below it */
	}
	if (nb) {
		/* one batch: q is the longest prefix that faulted */
		for (size_t j = 0; j < nb; j++)
			ps[j] = &cs[j];
		if (oracle_test(s, ps, nb, r) < 0)
			goto out;
		while (q < nb && r[q])
			q++;
	} else if (top) {
		q = chain;
	}
	if (q) {
		cand_release(best);
		cand_copy(best, &cs[q - 1]);
	}
	*top_first = q == chain;
	ret = 0;
out:
	for (size_t j = 0; j < chain; j++)
		cand_release(&cs[j]);
	free(ps);
	free(r);
	*kept = q;
	return ret;
}

int oracle_test_pick_first(struct oracle *s, struct cand *cs, int nt, struct cand *best)
{
	int won = -1, stopped = 0;
	for (int t = 0; t < nt && won < 0 && !stopped; t++) {
		struct cand *c = &cs[t];
		int r = 0;
		if (oracle_test(s, &c, 1, &r) < 0)
			stopped = 1;
		else if (r)
			won = t;
	}
	for (int t = 0; t < nt; t++)
		if (t != won)
			cand_release(&cs[t]);
	if (won >= 0) {
		cand_release(best);
		*best = cs[won];
	}
	return stopped ? -2 : won;
}

/* ---- workers -------------------------------------------------------------- */

/* A fresh pool of workers for this shrink; NULL with err set. */
static struct pool *new_pool(const struct oracle *s, struct strbuf *err)
{
	struct pool *p = pool_create(s->o->jobs, s->o->strategy == STRATEGY_BASELINE, s->o->cand_timeout, err);
	if (p)
		pool_set_patience(p, s->o->keep_going ? s->o->keep_wait : 0);
	return p;
}

/* Add the pool's worker counts to the report (before it is released). */
static void pool_tally(struct oracle *s)
{
	const struct pool_stats *st = pool_stats(s->pool);
	s->rep->workers_spawned += st->spawned;
	s->stopped_released = runs_stopped(s);   /* the pool is released next */
	s->rep->start_failures += st->start_failures;
	s->rep->outage_seconds += st->outage_seconds;
	if (st->devices > s->rep->devices)
		s->rep->devices = st->devices;
}

void oracle_wind_down(struct oracle *s)
{
	const char *e = getenv("GPUREDUCE_POOL_LAZY");   /* 0: off, to measure what it saves */
	if (s->pool && s->spawned_before_end < 0)
		s->spawned_before_end = (long)pool_stats(s->pool)->spawned;
	if (e && !strcmp(e, "0"))
		return;
	s->winding_down = 1;
	if (s->pool)
		pool_set_lazy(s->pool, 1);
}

/* --keep-going: after a phase lost its workers, start a fresh pool and go
 * on with the best candidate so far.  1 when the next phase can run. */
int oracle_recover(struct oracle *s)
{
	struct strbuf e = STRBUF_INIT;
	if (!s->infra_failed)
		return 1;
	if (!s->o->keep_going)
		return 0;
	s->rep->phase_failures++;
	oracle_log(s, "workers lost (%s); --keep-going: a fresh pool", s->err->buf);
	snprintf(s->rep->note, sizeof(s->rep->note), "phase %s lost its workers (%.300s); went on (--keep-going)",
		 s->ph ? s->ph->name : "?", s->err->buf);
	pool_tally(s);
	pool_release(s->pool);
	s->pool = new_pool(s, &e);
	if (s->pool && s->winding_down)
		pool_set_lazy(s->pool, 1);
	if (s->pool) {
		s->infra_failed = 0;
		sb_reset(s->err);
	}
	sb_release(&e);
	return s->pool != NULL;
}

int oracle_run_files(struct oracle *s, char *const *paths, int n, int runs, int *got)
{
	struct job *jobs = xcalloc((size_t)(n * runs) + 1, sizeof(*jobs));
	int ret = -1;

	for (int q = 0; q < n; q++)
		got[q] = 0;
	for (int q = 0; q < n * runs; q++)
		cand_job(s, &jobs[q], paths[q / runs]);
	if (pool_run(s->pool, jobs, (size_t)(n * runs), s->err) < 0) {
		s->infra_failed = 1;
		goto out;
	}
	s->ph->candidates += n * runs;
	for (int q = 0; q < n * runs; q++)
		got[q / runs] += oracle_sig_match(s, &jobs[q].res);
	ret = 0;
out:
	free(jobs);
	return ret;
}

int oracle_run_file_guards(struct oracle *s, const char *path, const int *guards, int n, int runs,
			   int *got, struct replay_result *first)
{
	struct job *jobs = xcalloc((size_t)(n * runs) + 1, sizeof(*jobs));
	double tb = now_sec();
	int ret = -1;

	for (int q = 0; q < n * runs; q++) {
		struct replay_opts o = REPLAY_OPTS_INIT;
		o.guard = guards[q / runs];
		file_job(s, &jobs[q], path, &o);
	}
	if (pool_run(s->pool, jobs, (size_t)(n * runs), s->err) < 0) {
		s->infra_failed = 1;
		oracle_log(s, "%d runs of %s: workers lost: %s", n * runs, path, s->err->buf);
		goto out;
	}
	for (int g = 0; g < n; g++) {
		got[g] = 0;
		first[g] = jobs[g * runs].res;
	}
	for (int q = 0; q < n * runs; q++) {
		const struct replay_result *r = &jobs[q].res;
		oracle_log(s, "run of %s, %s placement: %s (%.3f s in the worker)", path,
			   place_guard_name(guards[q / runs]), run_word(r), r->seconds);
		if (oracle_sig_match(s, r) && !got[q / runs]++)
			first[q / runs] = *r;
	}
	oracle_log(s, "%d runs of %s under %d placements side by side: %.3f s", n * runs, path, n,
		   now_sec() - tb);
	ret = 0;
out:
	free(jobs);
	return ret;
}

int oracle_failed(const struct oracle *s)
{
	return s->infra_failed;
}

int oracle_stopped(struct oracle *s)
{
	return oracle_over_time(s) || s->infra_failed;
}

/* ---- life cycle and accessors ----------------------------------------------- */

/* Clean candidates oracle_recheck_clean may run again in a shrink:
 * RECHECK_CLEAN_MAX, or GPUREDUCE_RECHECK_CLEAN (0: none, as before
 * 2026-12-07; a test whose double's sequence of launches is its subject) */
static int rechecks_allowed(void)
{
	const char *e = getenv("GPUREDUCE_RECHECK_CLEAN");
	long n = e && *e ? strtol(e, NULL, 10) : RECHECK_CLEAN_MAX;
	return n < 0 ? 0 : n > 1000 ? 1000 : (int)n;
}

struct oracle *oracle_new(const struct trace *orig, const struct shrink_opts *opts, struct shrink_report *rep,
			  struct strbuf *err)
{
	struct oracle *s = xcalloc(1, sizeof(*s));
	oracle_san_init(s);
	s->orig = orig;
	s->o = opts;
	s->rep = rep;
	s->err = err;
	s->t0 = now_sec();
	s->reps = 1;
	s->need = 1;
	s->rechecks_left = rechecks_allowed();
	s->fault_event = -1;
	s->spawned_before_end = -1;
	return s;
}

struct oracle *oracle_new_fake(const struct trace *orig, const struct shrink_opts *opts,
			       struct shrink_report *rep, struct strbuf *err, const struct oracle_fake *fake)
{
	struct oracle *s = oracle_new(orig, opts, rep, err);
	s->fake = *fake;
	s->fault_event = fake->fault_event;
	return s;
}

int oracle_start(struct oracle *s)
{
	s->have_san = !s->o->no_site_check && !s->fake.test && diagnose_find_sanitizer() != NULL;
	/* --cut-buffers compares every report, not just the first */
	diagnose_set_print_limit(s->o->cut_buffers ? 64 : 1);
	if (s->o->sig_site && !s->have_san) {
		sb_addf(s->err, "--signature=site needs compute-sanitizer (set GPUREDUCE_SANITIZER or add it to PATH)%s",
			s->o->no_site_check ? " and no --no-diagnose" : "");
		return -1;
	}
	if (s->o->log_path && !(s->log = fopen(s->o->log_path, "w"))) {
		sb_addf(s->err, "%s: cannot write the log: %s", s->o->log_path, strerror(errno));
		return -1;
	}
	if (s->fake.test)
		return 0;
	s->pool = new_pool(s, s->err);
	if (!s->pool) {
		s->infra_failed = 1;
		return -2;
	}
	return 0;
}

void oracle_finish(struct oracle *s)
{
	if (s->pool) {
		if (s->spawned_before_end >= 0)
			oracle_log(s, "workers started from verify on: %ld (%s)",
				   (long)pool_stats(s->pool)->spawned - s->spawned_before_end,
				   s->winding_down ? "lazy: only for runs that waited" : "replaced at once");
		pool_tally(s);
		/* the results are in: the workers' teardown is nobody's wait */
		pool_release_detached(s->pool);
		s->pool = NULL;
	}
}

void oracle_release(struct oracle *s)
{
	if (!s)
		return;
	oracle_finish(s);
	if (s->log)
		fclose(s->log);
	for (int i = 0; i < s->nsrc; i++) {
		trace_release(s->src[i]);
		free(s->src[i]);
	}
	oracle_san_release(s);
	cand_release(&s->phase_state);
	if (s->presnap.path) {
		if (!s->presnap.used)
			unlink(s->presnap.path);
		free(s->presnap.path);
	}
	for (size_t i = 0; i < s->ncache; i++)
		free(s->cache[i].match);
	free(s->cache);
	for (size_t i = 0; i < s->nowned; i++)
		free(s->owned[i]);
	free(s->owned);
	free(s);
}

void oracle_set_orig(struct oracle *s, const struct trace *t, int kernel_from_replay)
{
	s->orig = t;
	s->kernel_from_replay = kernel_from_replay;
}

long oracle_fault_event(const struct oracle *s)
{
	return s->fault_event;
}

int oracle_guard(const struct oracle *s)
{
	return s->guard;
}

void oracle_set_guard(struct oracle *s, int guard)
{
	s->guard = guard;
	if (s->rep)
		s->rep->guard = guard;
}

const struct trace *oracle_orig(const struct oracle *s)
{
	return s->orig;
}

const struct shrink_opts *oracle_opts(const struct oracle *s)
{
	return s->o;
}

struct shrink_report *oracle_report(struct oracle *s)
{
	return s->rep;
}

struct strbuf *oracle_err(struct oracle *s)
{
	return s->err;
}

struct shrink_phase *oracle_phase(struct oracle *s)
{
	return s->ph;
}

double oracle_elapsed(const struct oracle *s)
{
	return now_sec() - s->t0;
}
