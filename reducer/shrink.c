/*
 * shrink.c - the reduction driver (see shrink.h).
 *
 * Every candidate is written as a trace file under the work directory and
 * replayed by the worker pool (pool.h); nothing here touches the GPU.
 * Outcomes are cached by the candidate file's content hash, so a candidate
 * that two phases happen to build twice runs once.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/child.h"
#include "../common/interrupt.h"
#include "../common/strbuf.h"
#include "../common/util.h"
#include "../replay/drv.h"
#include "../addr/graphs.h"
#include "../addr/memmap.h"
#include "../addr/place.h"
#include "cand.h"
#include "ddmin.h"
#include "diagnose.h"
#include "pool.h"
#include "rate.h"
#include "shrink.h"

#define MAX_SOURCES 64

struct cache_ent {
	uint64_t hash;
	int faults, runs;
};

struct site_ent {
	uint64_t hash;
	char site[700];
	char *output;
};

/* A compute-sanitizer run in the background (bg_start, bg_collect). */
struct bg_san {
	struct child ch;
	struct strbuf bin, out;   /* the trace it runs, the file its output goes to */
	uint64_t hash;            /* bin's content (file_hash) */
	int started, collected;
	double t0;
	char why[300];            /* no site: why (no_site_why, or why it did not start) */
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
	int verify_recoveries;   /* fresh pools for confirmation runs (--keep-going) */
	int kernel_from_replay;   /* the capture could not name the faulting kernel (a graph) */
	FILE *log;                /* --log */
	int have_san;             /* compute-sanitizer found and the site check wanted */
	char ref_site[700];       /* --signature=site: the original's site (diagnose_site_rel) */
	int have_ref;
	/* the base state's (slice's) compute-sanitizer run, started in the
	 * background after the slice and collected once, when first needed */
	struct bg_san base;
	int base_have;
	char base_site[700];
	char *base_output;
	/* the final trace's run, started beside its confirmation runs */
	struct bg_san pre;
	struct site_ent *sites;   /* sanitizer sites found, by trace file content */
	size_t nsites, asites;
	struct cand state[SHRINK_MAX_PHASES];   /* the best candidate after each phase */
	const char *state_name[SHRINK_MAX_PHASES];
	int nstates;
	int cur_state;            /* verify: the state *best is (nstates - 1 until a back-off) */
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
static double cand_stop_at(const struct S *s)
{
	return s->o->time_limit > 0 ? s->t0 + s->o->time_limit + 1 : 0;
}

/* One line in the --log file: seconds since the start, then the text. */
static void slog(struct S *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void slog(struct S *s, const char *fmt, ...)
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

/* The current phase ended on an error (shrink gives up): its time, its
 * sizes as they were, and why. */
static void phase_abandon(struct S *s, const char *outcome)
{
	struct shrink_phase *p = s->ph;
	if (!p || p->outcome)
		return;
	p->launches_after = p->launches_before;
	p->buffers_after = p->buffers_before;
	p->bytes_after = p->bytes_before;
	p->seconds = now_sec() - p->seconds;
	p->outcome = outcome;
}

static int sig_match(const struct S *s, const struct replay_result *r)
{
	return r->status == RS_FAULT && drv_same_fault(r->code, s->rep->code) &&
	       (s->o->sig_code_only || s->kernel_from_replay || !strcmp(r->kernel, s->rep->kernel));
}

/* ---- testing candidates ---------------------------------------------------- */

/*
 * Why a sanitizer run gave no site, in one line for the log and the note.
 * With its output read: the replay's own last line when there is one
 * ("replay: could not replay: ..." says a run was killed or could not
 * start, which compute-sanitizer's "ERROR SUMMARY: 0 errors" does not),
 * else the output's last line.  Without: the error that stopped the
 * reading (err).
 */
static void no_site_why(const char *output, const char *err, char *why, size_t wn)
{
	const char *last = NULL, *mine = NULL, *p;
	int lastn = 0, minen = 0;

	if (!output) {
		snprintf(why, wn, "no report (%s)", err && *err ? err : "its output could not be read");
		return;
	}
	for (p = output; *p;) {
		const char *e = strchr(p, '\n');
		int n = (int)(e ? e - p : (long)strlen(p));
		while (n > 0 && (p[n - 1] == '\r' || p[n - 1] == ' ' || p[n - 1] == '\t'))
			n--;
		if (n > 0) {
			last = p, lastn = n;
			if (strncmp(p, "=========", 9) && strncmp(p, "gpureduce-buffer ", 17))
				mine = p, minen = n;
		}
		if (!e)
			break;
		p = e + 1;
	}
	if (mine)
		snprintf(why, wn, "no report; the replay said: %.*s", minen > 200 ? 200 : minen, mine);
	else if (last)
		snprintf(why, wn, "no report; its output ended: %.*s", lastn > 200 ? 200 : lastn, last);
	else
		snprintf(why, wn, "no report; its output was empty");
}

/*
 * Wait (at most 180 s) for a compute-sanitizer run of the trace at bin
 * whose output goes to out_path; write its site (diagnose_site_rel) into
 * site ("" when none) and, where output is not NULL and the run was read,
 * its whole output (malloc'd).  A run that could not be read is killed.
 * *early: diagnose_collect stopped it after its reports.  When no site is
 * found, why (wn bytes) says what the run ended with instead (no_site_why).
 * 1 when a site was found, else 0.
 */
static int collect_site(struct child *ch, const char *out_path, const char *bin, char *site, size_t n,
			char **output, int *early, char *why, size_t wn)
{
	struct strbuf o = STRBUF_INIT, e = STRBUF_INIT;
	struct trace t;
	int found = 0, was_read = 0;

	site[0] = 0;
	if (diagnose_collect(ch, out_path, 180, &o, early, &e) == 0 &&
	    trace_open(&t, bin, TRACE_OPEN_STRICT, &e) == 0) {
		was_read = 1;
		found = diagnose_site_rel(o.buf, &t, site, n) == 0;
		trace_release(&t);
	} else {
		child_kill(ch);
	}
	if (!found)
		no_site_why(was_read ? o.buf : NULL, e.buf, why, wn);
	if (was_read && output)
		*output = sb_detach(&o, NULL);
	sb_release(&o);
	sb_release(&e);
	return found;
}

static uint64_t file_hash(const char *path);

/*
 * Run compute-sanitizer on each of the n trace files side by side (at most
 * jobs at a time) and write each one's site (diagnose_site_rel) into
 * sites[i]; "" when the run saw no error or failed.  outputs (may be NULL)
 * gets each run's whole output (malloc'd) where it was read.  Results are
 * read in order; with stop_site, the first run found failing there ends
 * the others (their sites stay "").  Returns how many sites were found.
 */
static int sanitize_run(struct S *s, char *const *paths, size_t n, char (*sites)[700], char **outputs,
			const char *stop_site)
{
	size_t next = 0, found = 0;
	size_t width = s->o->jobs > 0 ? (size_t)s->o->jobs : 1;
	double t0 = now_sec();
	int stopped = 0;

	for (size_t i = 0; i < n; i++)
		sites[i][0] = 0;
	while (next < n && !stopped) {
		size_t m = n - next < width ? n - next : width;
		struct child *ch = xcalloc(m, sizeof(*ch));
		char **outs = xcalloc(m, sizeof(char *));
		int *started = xcalloc(m, sizeof(int));
		for (size_t k = 0; k < m; k++) {
			struct strbuf o = STRBUF_INIT, e = STRBUF_INIT;
			sb_addf(&o, "%s.san.txt", paths[next + k]);
			outs[k] = sb_detach(&o, NULL);
			started[k] = diagnose_start(paths[next + k], s->guard, outs[k], &ch[k], &e) == 0;
			sb_release(&e);
		}
		for (size_t k = 0; k < m; k++) {
			double t1 = now_sec();
			char why[300] = "no report (compute-sanitizer did not start)";
			int early = 0;
			if (stopped) {
				if (started[k])
					child_kill(&ch[k]);
				unlink(outs[k]);
				free(outs[k]);
				continue;
			}
			if (started[k])
				found += (size_t)collect_site(&ch[k], outs[k], paths[next + k], sites[next + k],
							      sizeof(sites[0]), outputs ? &outputs[next + k] : NULL,
							      &early, why, sizeof(why));
			slog(s, "sanitizer %s: %s (%.2f s wait%s)", paths[next + k],
			     sites[next + k][0] ? sites[next + k] : why, now_sec() - t1,
			     early ? "; stopped after its reports" : "");
			s->rep->site_runs++;
			if (stop_site && !strcmp(sites[next + k], stop_site))
				stopped = 1;
			unlink(outs[k]);
			free(outs[k]);
		}
		free(ch);
		free(outs);
		free(started);
		next += m;
	}
	s->rep->site_seconds += now_sec() - t0;
	return (int)found;
}

/* Remember a run's site and output by its trace's content. */
static void site_cache_add(struct S *s, uint64_t hash, const char *site, const char *output)
{
	ALLOC_GROW(s->sites, s->nsites + 1, s->asites);
	s->sites[s->nsites].hash = hash;
	snprintf(s->sites[s->nsites].site, sizeof(s->sites[0].site), "%s", site);
	s->sites[s->nsites++].output = xstrdup(output);
}

static void bg_init(struct bg_san *b)
{
	b->ch = (struct child)CHILD_INIT;
	sb_init(&b->bin, 0);
	sb_init(&b->out, 0);
}

/* Kill the run if it was never collected; free the paths. */
static void bg_release(struct bg_san *b)
{
	if (b->started && !b->collected)
		child_kill(&b->ch);
	sb_release(&b->bin);
	sb_release(&b->out);
}

/* Start compute-sanitizer in the background on c, written as
 * WORKDIR/NAME.bin (its output: NAME.txt).  b->hash is set even when the
 * run could not start (b->started stays 0). */
static void bg_start(struct S *s, struct bg_san *b, const struct cand *c, const char *name)
{
	struct strbuf e = STRBUF_INIT;
	sb_reset(&b->bin);
	sb_reset(&b->out);
	sb_addf(&b->bin, "%s/%s.bin", s->o->workdir, name);
	sb_addf(&b->out, "%s/%s.txt", s->o->workdir, name);
	if (cand_write(c, b->bin.buf, &e) == 0) {
		b->hash = file_hash(b->bin.buf);
		if (diagnose_start(b->bin.buf, s->guard, b->out.buf, &b->ch, &e) == 0) {
			b->started = 1;
			b->t0 = now_sec();
		}
	}
	if (!b->started)
		snprintf(b->why, sizeof(b->why), "not run (%s)", e.len ? e.buf : "compute-sanitizer did not start");
	sb_release(&e);
}

/* Wait for a background run (once) and read its site, as collect_site. */
static int bg_collect(struct S *s, struct bg_san *b, char *site, size_t n, char **output, int *early)
{
	int found;
	b->collected = 1;
	found = collect_site(&b->ch, b->out.buf, b->bin.buf, site, n, output, early, b->why, sizeof(b->why));
	s->rep->site_runs++;
	s->rep->site_seconds += now_sec() - b->t0;
	return found;
}

/* The final trace's run, started beside its confirmation runs; not
 * started when the final trace is the base state's (that run serves). */
static void prefetch_start(struct S *s, const struct cand *c)
{
	if (s->pre.started)
		return;
	bg_start(s, &s->pre, c, "final-site");
	if (s->pre.started && s->pre.hash == s->base.hash) {
		child_kill(&s->pre.ch);
		s->pre.started = 0;
	}
}

/* The prefetched run, into the site cache (if it found a site). */
static void prefetch_collect(struct S *s)
{
	char site[700] = "", *output = NULL;
	int early = 0;

	if (!s->pre.started || s->pre.collected)
		return;
	if (bg_collect(s, &s->pre, site, sizeof(site), &output, &early))
		site_cache_add(s, s->pre.hash, site, output);
	slog(s, "sanitizer %s (started with the confirmation runs): %s (%.2f s since it started%s)",
	     s->pre.bin.buf, site[0] ? site : s->pre.why, now_sec() - s->pre.t0,
	     early ? "; stopped after its reports" : "");
	unlink(s->pre.out.buf);
	free(output);
}

/* sanitize_run with a cache by file content: a trace already run (a cut
 * candidate that became the final trace, say) is not run again.  Only runs
 * that found a site are remembered: a racy fault gets its retries. */
static int sanitize_files(struct S *s, char *const *paths, size_t n, char (*sites)[700], char **outputs,
			  const char *stop_site)
{
	char **todo = xcalloc(n + 1, sizeof(char *));
	size_t *at = xcalloc(n + 1, sizeof(size_t)), nt = 0;
	uint64_t *h = xcalloc(n + 1, sizeof(uint64_t));
	int found = 0;

	for (size_t i = 0; i < n; i++) {
		const struct site_ent *e = NULL;
		h[i] = file_hash(paths[i]);
		if (s->pre.started && h[i] == s->pre.hash)
			prefetch_collect(s);
		for (size_t k = 0; k < s->nsites && !e; k++)
			if (s->sites[k].hash == h[i])
				e = &s->sites[k];
		if (e) {
			snprintf(sites[i], sizeof(sites[0]), "%s", e->site);
			if (outputs)
				outputs[i] = xstrdup(e->output);
			slog(s, "sanitizer %s: %s (cached)", paths[i], e->site);
			found++;
			continue;
		}
		at[nt] = i;
		todo[nt++] = paths[i];
	}
	if (nt) {
		char (*ts)[700] = xcalloc(nt, sizeof(*ts));
		char **to = xcalloc(nt, sizeof(char *));
		found += sanitize_run(s, todo, nt, ts, to, stop_site);
		for (size_t q = 0; q < nt; q++) {
			snprintf(sites[at[q]], sizeof(sites[0]), "%s", ts[q]);
			if (ts[q][0] && to[q])
				site_cache_add(s, h[at[q]], ts[q], to[q]);
			if (outputs)
				outputs[at[q]] = to[q];
			else
				free(to[q]);
		}
		free(ts);
		free(to);
	}
	free(todo);
	free(at);
	free(h);
	return found;
}

static uint64_t file_hash(const char *path)
{
	struct strbuf sb = STRBUF_INIT, e = STRBUF_INIT;
	uint64_t h = 0;
	if (read_file(path, &sb, &e) == 0)
		h = tr_file_hash(sb.buf, sb.len);
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

/* A replay job for a candidate's trace file: the shrink's guard mode and
 * per-candidate timeout (test_cands adds the time limit's stop). */
static void cand_job(const struct S *s, struct job *j, const char *path)
{
	j->trace = path;
	j->opts = (struct replay_opts)REPLAY_OPTS_INIT;
	j->opts.guard = s->guard;
	j->timeout = s->o->cand_timeout;
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
			measure(cands[0], &l, &b, &by);
			progress(s, "%s: %ld tested, %zu running; candidates of %zu launch(es), %zu buffer(s), %s",
				 s->ph->name, s->rep->candidates, nj, l, b, fmt_bytes(by, bb));
		}
		double tb = now_sec();
		if (pool_run(s->pool, jobs, nj, s->err) < 0) {
			s->infra_failed = 1;
			slog(s, "batch of %zu jobs: workers lost: %s", nj, s->err->buf);
			goto out;
		}
		slog(s, "batch of %zu jobs (%zu candidates): %.3f s", nj, k, now_sec() - tb);
		for (size_t j = 0; j < nj; j++) {
			char d[300];
			const struct replay_result *r = &jobs[j].res;
			if (r->status == RS_TIMEOUT)
				snprintf(d, sizeof(d), "timeout (%.200s)", r->msg);
			else
				snprintf(d, sizeof(d), "%s", r->status == RS_FAULT ? r->error :
					 r->status == RS_CLEAN ? "clean" : "error");
			slog(s, "  %s: %s%s (%.3f s in the worker)", paths[owner[j]], d,
			     r->status == RS_FAULT ? (sig_match(s, r) ? ", the signature" : ", ANOTHER fault") : "",
			     r->seconds);
			if (sig_match(s, &jobs[j].res))
				faults[owner[j]]++;
			else if (jobs[j].res.status == RS_FAULT)
				s->rep->slipped++;   /* faulted, but not our fault */
		}
		/* --signature=site: what passed the cheap check must also fail at
		 * the original's site under compute-sanitizer */
		if (s->o->sig_site && s->have_ref) {
			char **sp = xcalloc(k + 1, sizeof(char *));
			size_t *si = xcalloc(k + 1, sizeof(size_t)), ns = 0;
			for (size_t i = 0; i < k; i++)
				if (faults[i] >= s->need && !cache_find(s, hashes[i])) {
					sp[ns] = paths[i];
					si[ns++] = i;
				}
			if (ns) {
				char (*sites)[700] = xcalloc(ns, sizeof(*sites));
				sanitize_files(s, sp, ns, sites, NULL, NULL);
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

/* ddmin's split width: as many parts as there are workers to test them
 * side by side (a flaky fault's repeated tests already fill the pool) */
static size_t dd_width(const struct S *s)
{
	if (s->o->strategy == STRATEGY_BASELINE)
		return 2;         /* plain ddmin */
	int w = s->o->jobs / (s->reps > 0 ? s->reps : 1);
	return w > 2 ? (size_t)w : 2;
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
	double tb = now_sec();
	if (pool_run(s->pool, jobs, (size_t)n, s->err) < 0) {
		s->infra_failed = 1;
		slog(s, "%d runs of %s: workers lost: %s", n, path, s->err->buf);
		goto out;
	}
	for (int i = 0; i < n; i++)
		slog(s, "run of %s: %s (%.3f s in the worker)", path,
		     jobs[i].res.status == RS_FAULT ? jobs[i].res.error :
		     jobs[i].res.status == RS_CLEAN ? "clean" : "error/timeout", jobs[i].res.seconds);
	slog(s, "%d runs of %s: %.3f s", n, path, now_sec() - tb);
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
	/* layout-faithful first: where it applies, a wild access lands where
	 * it landed in the original; then guard placements for overruns */
	int modes[4] = { GUARD_LAYOUT, GUARD_END, GUARD_START, GUARD_NONE };
	struct strbuf tried = STRBUF_INIT;
	int runs = s->o->orig_runs > 0 ? s->o->orig_runs : 2;
	int ret = -1;

	/* --cut-buffers: a cut shows as an overrun only against a guard, so
	 * guard placement comes first */
	if (s->o->cut_buffers) {
		modes[0] = GUARD_END;
		modes[1] = GUARD_LAYOUT;
	}
	phase_begin(s, "confirm", NULL);
	for (int m = 0; m < 4; m++) {
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
				struct mm_alloc *a = memmap_pointer_word(&mm, v, &dead);
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
	/* the baseline is plain ddmin; ours splits as wide as the pool */
	ddmin_run_width(keep, fixed, nl, s->o->strategy == STRATEGY_FULL ? dd_width(s) : 2,
			launch_oracle, &d, &st);
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
		if (memmap_pointer_word(&mm, v, &dead)) {
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
	ddmin_run_width(keep, fixed, n, dd_width(s), data_oracle, &d, NULL);
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
			ddmin_run_width(keep, fixed, n, dd_width(s), data_oracle, &d, NULL);
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

/* A buffer of at least this many bytes has its zeros candidate tested
 * before its seeded fill, not beside it (phase_data). */
#define DATA_BIG_BYTES (64ull << 20)

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
		/* zeros and the fill are tested side by side, except for a big
		 * buffer: its fill costs the worker seconds (the generator runs
		 * on the host), and is not needed when zeros already fault */
		if (it->rec.u.copy.size >= DATA_BIG_BYTES ?
		    test_cands(s, two, 1, r) < 0 || (!r[0] && test_cands(s, two + 1, 1, r + 1) < 0) :
		    test_cands(s, two, 2, r) < 0) {
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

/* ---- workers, the final confirmation ------------------------------------ */

/* A fresh pool of workers for this shrink; NULL with err set. */
static struct pool *new_pool(const struct S *s, struct strbuf *err)
{
	struct pool *p = pool_create(s->o->jobs, s->o->strategy == STRATEGY_BASELINE, s->o->cand_timeout, err);
	if (p)
		pool_set_patience(p, s->o->keep_going ? s->o->keep_wait : 0);
	return p;
}

/* Add the pool's worker counts to the report (before it is released). */
static void pool_tally(struct S *s)
{
	const struct pool_stats *st = pool_stats(s->pool);
	s->rep->workers_spawned += st->spawned;
	s->rep->start_failures += st->start_failures;
	s->rep->outage_seconds += st->outage_seconds;
	if (st->devices > s->rep->devices)
		s->rep->devices = st->devices;
}

/* --keep-going: after a phase lost its workers, start a fresh pool and go
 * on with the best candidate so far.  1 when the next phase can run. */
static int recover(struct S *s)
{
	struct strbuf e = STRBUF_INIT;
	if (!s->infra_failed)
		return 1;
	if (!s->o->keep_going)
		return 0;
	s->rep->phase_failures++;
	slog(s, "workers lost (%s); --keep-going: a fresh pool", s->err->buf);
	snprintf(s->rep->note, sizeof(s->rep->note), "phase %s lost its workers (%.300s); went on (--keep-going)",
		 s->ph ? s->ph->name : "?", s->err->buf);
	pool_tally(s);
	pool_release(s->pool);
	s->pool = new_pool(s, &e);
	if (s->pool) {
		s->infra_failed = 0;
		sb_reset(s->err);
	}
	sb_release(&e);
	return s->pool != NULL;
}

/* Write c to out_bin and run it `runs` times: *faults gets how many
 * faulted with the signature.  0, or -1 (s->err says why). */
static int confirm_final(struct S *s, struct cand *c, const char *out_bin, int *faults, int runs)
{
	struct replay_result first;
	struct replay_opts ro = REPLAY_OPTS_INIT;
	ro.guard = s->guard;
	if (cand_write(c, out_bin, s->err) < 0)
		return -1;
	/* --keep-going: runs that lost their workers get a fresh pool (twice
	 * at most in all) */
	while (run_file(s, out_bin, &ro, runs, &first, faults) < 0)
		if (!s->infra_failed || s->verify_recoveries++ >= 2 || !recover(s))
			return -1;
	s->ph->candidates += runs;
	return 0;
}

/*
 * Write states from..to (latest first; from >= to) as
 * WORKDIR/PREFIX-K-NAME.bin for the back-offs, leaving out those whose
 * content hashes to skip1 or skip2.  paths[] (malloc'd) and idx[] get the
 * rest; returns how many, or -1 on a write error (s->err says why).
 */
static int write_states(struct S *s, int from, int to, const char *prefix, uint64_t skip1, uint64_t skip2,
			char **paths, int *idx)
{
	int n = 0;
	for (int k = from; k >= to; k--) {
		struct strbuf p = STRBUF_INIT;
		uint64_t h;
		sb_addf(&p, "%s/%s-%d-%s.bin", s->o->workdir, prefix, k, s->state_name[k]);
		if (cand_write(&s->state[k], p.buf, s->err) < 0) {
			sb_release(&p);
			for (int q = 0; q < n; q++)
				free(paths[q]);
			return -1;
		}
		h = file_hash(p.buf);
		if (h == skip1 || h == skip2) {
			unlink(p.buf);
			sb_release(&p);
			continue;
		}
		idx[n] = k;
		paths[n++] = sb_detach(&p, NULL);
	}
	return n;
}

/*
 * A racy fault can fire less often once reduced: the candidates were
 * judged on a run or a few, and a data or grid cut may have made the race
 * rarer.  When the final confirmation's rate falls well below the
 * original's (fewer than 70 % of it), the states before *best are run as
 * many times side by side, and the latest one whose rate holds replaces
 * it (else the one that faulted most, if it beats *best).  Returns 1 when
 * *best changed (*faults is then its fresh confirmation), 0 when not, -1
 * on a write error or lost workers.
 */
static int rate_check(struct S *s, struct cand *best, const char *out_bin, int *faults, int runs)
{
	struct shrink_report *rep = s->rep;
	int need = rate_need(runs, rep->orig_faults, rep->orig_runs), n = 0, pick, ret = 0;
	int idx[SHRINK_MAX_PHASES], got[SHRINK_MAX_PHASES];
	char *paths[SHRINK_MAX_PHASES];
	struct job *jobs = NULL;
	uint64_t hf = file_hash(out_bin);

	if (*faults >= need || s->cur_state <= 0)
		return 0;
	if ((n = write_states(s, s->cur_state - 1, 0, "rate", hf, hf, paths, idx)) <= 0) {
		ret = n;
		n = 0;
		goto out;
	}
	for (int q = 0; q < n; q++)
		got[q] = 0;
	jobs = xcalloc((size_t)(n * runs), sizeof(*jobs));
	for (int q = 0; q < n * runs; q++)
		cand_job(s, &jobs[q], paths[q / runs]);
	if (pool_run(s->pool, jobs, (size_t)(n * runs), s->err) < 0) {
		s->infra_failed = 1;
		ret = -1;
		goto out;
	}
	s->ph->candidates += n * runs;
	for (int q = 0; q < n * runs; q++)
		got[q / runs] += sig_match(s, &jobs[q].res);
	for (int q = 0; q < n; q++)
		slog(s, "rate of the state after %s: %d/%d (the reduced trace: %d/%d, the original: %d/%d)",
		     s->state_name[idx[q]], got[q], runs, *faults, runs, rep->orig_faults, rep->orig_runs);
	if ((pick = rate_pick(got, n, need, *faults)) < 0)
		goto out;
	{
		size_t l = strlen(rep->note);
		snprintf(rep->note + l, sizeof(rep->note) - l,
			 "%sthe reduced trace faulted in %d of %d runs (the original: %d of %d); backed off to the "
			 "state after %s, which faulted in %d of %d", l ? "; " : "", *faults, runs, rep->orig_faults,
			 rep->orig_runs, s->state_name[idx[pick]], got[pick], runs);
	}
	snprintf(rep->backed_off_to, sizeof(rep->backed_off_to), "%s", s->state_name[idx[pick]]);
	cand_release(best);
	cand_copy(best, &s->state[idx[pick]]);
	s->cur_state = idx[pick];
	ret = confirm_final(s, best, out_bin, faults, runs) < 0 ? -1 : 1;
out:
	for (int q = 0; q < n; q++) {
		unlink(paths[q]);
		free(paths[q]);
	}
	free(jobs);
	return ret;
}

/* ---- the base state's site -------------------------------------------------- */

/* The base state's site (waiting for its run if need be); NULL when it
 * was not run or saw no error (s->base.why says which). */
static const char *base_site(struct S *s)
{
	if (s->base.started && !s->base.collected) {
		int early = 0;
		s->base_have = bg_collect(s, &s->base, s->base_site, sizeof(s->base_site), &s->base_output, &early);
		slog(s, "sanitizer on the %s state: %s (%.2f s since it started%s)",
		     s->nstates ? s->state_name[0] : "base", s->base_have ? s->base_site : s->base.why,
		     now_sec() - s->base.t0, early ? "; stopped after its reports" : "");
	}
	return s->base_have ? s->base_site : NULL;
}

/* ---- buffer sizes ----------------------------------------------------------- */

/* Could buffer `ai` (a TR_ALLOC item) be cut to a smaller size, and to no
 * less than what: every pointer to it (launch parameters, pointer words in
 * kept bytes), and the chunks of bytes kept as captured.  0 when it cannot
 * be cut (a copy reads or writes it device-side, a 2D memset, a kind whose
 * size is not ours to choose). */
static int size_floor(const struct cand *c, size_t ai, uint64_t *floor)
{
	const struct tr_alloc *a = &c->it[ai].rec.u.alloc;
	uint64_t lo = 1, A = a->addr, Z = a->size;
	struct strbuf data = STRBUF_INIT, e = STRBUF_INIT;
	int ok = 1;

#define IN_BUF(v) ((v) >= A && (v) < A + Z)
	if (a->kind != TR_MEM_DEVICE && a->kind != TR_MEM_ASYNC && a->kind != TR_MEM_VMM)
		return 0;
	for (size_t i = 0; i < c->n && ok; i++) {
		const struct item *it = &c->it[i];
		const struct tr_rec *r = &it->rec;
		switch (r->type) {
		case TR_LAUNCH:
			for (uint32_t off = 0; off + 8 <= r->u.launch.argsize; off += 8) {
				uint64_t v;
				memcpy(&v, r->u.launch.args + off, 8);
				if (IN_BUF(v) && v - A + 1 > lo)
					lo = v - A + 1;
			}
			break;
		case TR_MEMCPY_D2D:
			if (IN_BUF(r->u.copy.dst) || IN_BUF(r->u.copy.src))
				ok = 0;
			break;
		case TR_MEMCPY_D2H:
			if (IN_BUF(r->u.copy.src))
				ok = 0;
			break;
		case TR_MEMSET:
			if (IN_BUF(r->u.memset.dst) && r->u.memset.height > 1)
				ok = 0;
			break;
		case TR_MEMCPY_H2D: {
			int mine = IN_BUF(r->u.copy.dst);
			if (mine && it->data_mode == DATA_ORIG) {
				ok = 0;   /* bytes as captured: the data phase did not get to it */
				break;
			}
			if (mine && it->data_mode == DATA_KEEP && it->nkeep) {
				uint64_t end = r->u.copy.dst - A + it->keep[it->nkeep - 1].off +
					       it->keep[it->nkeep - 1].len;
				if (end > lo)
					lo = end;
			}
			/* pointers to this buffer among bytes kept anywhere */
			if (it->data_mode == DATA_ORIG || it->data_mode == DATA_KEEP) {
				sb_reset(&data);
				if (trace_blob_read(it->src, r->u.copy.blob, &data, 0, &e) < 0) {
					ok = 0;
					break;
				}
				for (size_t w = 0; w + 8 <= data.len; w += 8) {
					uint64_t v;
					int kept = it->data_mode == DATA_ORIG;
					for (size_t k = 0; k < it->nkeep && !kept; k++)
						kept = w >= it->keep[k].off && w < it->keep[k].off + it->keep[k].len;
					memcpy(&v, data.buf + w, 8);
					if (kept && IN_BUF(v) && v - A + 1 > lo)
						lo = v - A + 1;
				}
			}
			break;
		}
		default:
			break;
		}
	}
#undef IN_BUF
	sb_release(&data);
	sb_release(&e);
	*floor = (lo + 3) & ~(uint64_t)3;
	if (*floor > Z)
		*floor = Z;
	return ok && *floor < Z;
}

/* out = c with buffer `ai` cut to `size` bytes: copies and memsets into it
 * are clipped (bytes kept as captured become a kept range), those wholly
 * past the new end dropped. */
static void cut_buffer(const struct cand *c, size_t ai, uint64_t size, struct cand *out)
{
	uint64_t A = c->it[ai].rec.u.alloc.addr, Z = c->it[ai].rec.u.alloc.size;
	size_t j = 0;

	cand_copy(out, c);
	out->it[ai].rec.u.alloc.size = size;
	for (size_t i = 0; i < out->n; i++) {
		struct item *it = &out->it[i];
		struct tr_rec *r = &it->rec;
		int drop = 0;
		if (r->type == TR_MEMCPY_H2D && r->u.copy.dst >= A && r->u.copy.dst < A + Z) {
			uint64_t off = r->u.copy.dst - A;
			if (off >= size) {
				drop = 1;
			} else if (off + r->u.copy.size > size) {
				uint64_t len = size - off;
				if (it->data_mode == DATA_ORIG) {
					it->data_mode = DATA_KEEP;
					it->keep = xcalloc(1, sizeof(struct range));
					it->keep[0].off = 0;
					it->keep[0].len = len;
					it->nkeep = 1;
				} else if (it->data_mode == DATA_KEEP) {
					size_t n = 0;
					for (size_t k = 0; k < it->nkeep; k++) {
						struct range g = it->keep[k];
						if (g.off >= len)
							continue;
						if (g.off + g.len > len)
							g.len = len - g.off;
						it->keep[n++] = g;
					}
					it->nkeep = n;
				}
				r->u.copy.size = len;
			}
		} else if (r->type == TR_MEMSET && r->u.memset.dst >= A && r->u.memset.dst < A + Z) {
			uint64_t off = r->u.memset.dst - A, es = r->u.memset.elem_size ? r->u.memset.elem_size : 1;
			if (off >= size)
				drop = 1;
			else if (off + r->u.memset.width * es > size)
				r->u.memset.width = (size - off) / es;
			if (!r->u.memset.width)
				drop = 1;
		}
		if (drop) {
			free(it->keep);
			continue;
		}
		out->it[j++] = *it;
	}
	out->n = j;
}

/* Every distinct site among the reports of a sanitizer run's output
 * (diagnose_sites_all) for the trace at path; "" when none. */
static void all_sites(const char *output, const char *path, char *out, size_t n)
{
	struct trace t;
	struct strbuf e = STRBUF_INIT;
	out[0] = 0;
	if (output && trace_open(&t, path, TRACE_OPEN_STRICT, &e) == 0) {
		diagnose_sites_all(output, &t, out, n);
		trace_release(&t);
	}
	sb_release(&e);
}

/* 1 when every " | "-separated site of a is among those of b. */
static int sites_within(const char *a, const char *b)
{
	while (*a) {
		const char *end = strstr(a, " | ");
		size_t len = end ? (size_t)(end - a) : strlen(a);
		int hit = 0;
		for (const char *p = b; !hit && *p;) {
			const char *pe = strstr(p, " | ");
			size_t pl = pe ? (size_t)(pe - p) : strlen(p);
			hit = pl == len && !memcmp(p, a, len);
			p = pe ? pe + 3 : p + pl;
		}
		if (!hit)
			return 0;
		a = end ? end + 3 : a + len;
	}
	return 1;
}

/*
 * Cut buffers to smaller sizes that keep the fault.  A cut can turn a
 * read that was in bounds into a new overrun in the same kernel, which the
 * cheap signature cannot tell from the bug, so every cut that passes it is
 * also run under compute-sanitizer and kept only when it fails at the base
 * state's site (PC, access, and where the address lies) and reports no
 * kind of error the base state did not (among the first 64 reports, which
 * --cut-buffers asks compute-sanitizer for): the phase runs
 * only where compute-sanitizer is at hand.  For each of the largest
 * buffers, one batch tries the floor (what pointers and kept bytes need),
 * 1/16 and 1/4 of the size; the smallest good size of each buffer is
 * combined into one candidate.
 */
#define SIZES_MAX_BUFFERS 4
#define SIZES_PER_BUFFER 3

static void phase_sizes(struct S *s, struct cand *best)
{
	struct cand cs[SIZES_MAX_BUFFERS * SIZES_PER_BUFFER];
	size_t buf_of[SIZES_MAX_BUFFERS * SIZES_PER_BUFFER];
	uint64_t size_of[SIZES_MAX_BUFFERS * SIZES_PER_BUFFER];
	size_t ai[SIZES_MAX_BUFFERS], na = 0, nc = 0;
	uint64_t pick[SIZES_MAX_BUFFERS] = { 0 };
	int r[SIZES_MAX_BUFFERS * SIZES_PER_BUFFER];
	const char *ref;
	int changed = 0;
	size_t made = 0;
	uint64_t addr[SIZES_MAX_BUFFERS], floor_of[SIZES_MAX_BUFFERS];

	phase_begin(s, "sizes", best);
	if (s->guard == GUARD_LAYOUT) {
		/* whole granules are mapped: a cut buffer's new overrun would not fault */
		phase_end(s, best, "skipped: the fault needs layout placement, where cuts go unseen");
		return;
	}
	if (!s->have_san) {
		phase_end(s, best, "skipped: no compute-sanitizer to check that a cut keeps the site");
		return;
	}
	if (!(ref = base_site(s))) {
		phase_end(s, best, "skipped: compute-sanitizer saw no error in the base state");
		return;
	}
	/* the largest buffers that can be cut (at least 1 KiB), with their floors */
	for (size_t i = 0; i < best->n; i++) {
		uint64_t f;
		if (best->it[i].rec.type != TR_ALLOC || best->it[i].rec.u.alloc.size < 1024 ||
		    !size_floor(best, i, &f))
			continue;
		size_t k = na < SIZES_MAX_BUFFERS ? na++ : SIZES_MAX_BUFFERS;
		if (k == SIZES_MAX_BUFFERS) {
			/* replace the smallest kept one if this one is larger */
			size_t m = 0;
			for (size_t q = 1; q < na; q++)
				if (best->it[ai[q]].rec.u.alloc.size < best->it[ai[m]].rec.u.alloc.size)
					m = q;
			if (best->it[ai[m]].rec.u.alloc.size >= best->it[i].rec.u.alloc.size)
				continue;
			k = m;
		}
		ai[k] = i;
		floor_of[k] = f;
	}
	for (size_t b = 0; b < na; b++) {
		uint64_t z = best->it[ai[b]].rec.u.alloc.size, f = floor_of[b], v[SIZES_PER_BUFFER];
		int nv = 0;
		v[nv++] = f;
		if (((z / 16 + 15) & ~(uint64_t)15) > f)
			v[nv++] = (z / 16 + 15) & ~(uint64_t)15;
		if (((z / 4 + 15) & ~(uint64_t)15) > v[nv - 1] && z / 4 < z)
			v[nv++] = (z / 4 + 15) & ~(uint64_t)15;
		addr[b] = best->it[ai[b]].rec.u.alloc.addr;
		for (int t = 0; t < nv; t++) {
			cut_buffer(best, ai[b], v[t], &cs[nc]);
			buf_of[nc] = b;
			size_of[nc++] = v[t];
		}
	}
	made = nc;
	if (nc) {
		struct cand *ps[SIZES_MAX_BUFFERS * SIZES_PER_BUFFER];
		char *paths[SIZES_MAX_BUFFERS * SIZES_PER_BUFFER];
		char (*sites)[700] = xcalloc(nc, sizeof(*sites));
		size_t np = 0;
		for (size_t c = 0; c < nc; c++)
			ps[c] = &cs[c];
		if (test_cands(s, ps, nc, r) < 0)
			nc = 0;
		/* the cheap survivors under compute-sanitizer, side by side */
		for (size_t c = 0; c < nc; c++) {
			struct strbuf p = STRBUF_INIT;
			if (!r[c])
				continue;
			sb_addf(&p, "%s/size-%zu.bin", s->o->workdir, c);
			if (cand_write(&cs[c], p.buf, s->err) < 0) {
				r[c] = 0;
				sb_release(&p);
				continue;
			}
			paths[np] = sb_detach(&p, NULL);
			buf_of[np] = buf_of[c];     /* compacted alongside */
			size_of[np] = size_of[c];
			np++;
		}
		char **outs = xcalloc(np + 1, sizeof(char *));
		char base_all[4096] = "";
		if (np)
			sanitize_files(s, paths, np, sites, outs, NULL);
		all_sites(s->base_output, s->base.bin.buf, base_all, sizeof(base_all));
		for (size_t q = 0; q < np; q++) {
			char cut_all[4096] = "";
			const char *why;
			int good = !strcmp(sites[q], ref);
			all_sites(outs[q], paths[q], cut_all, sizeof(cut_all));
			if (!good) {
				why = sites[q][0] ? "the site MOVED" : "no sanitizer report";
			} else if (!sites_within(cut_all, base_all)) {
				why = "same first site, but NEW errors behind it";
				good = 0;
			} else {
				why = "same site";
			}
			slog(s, "cut buffer #%zu to %llu bytes: %s%s%s", buf_of[q], (unsigned long long)size_of[q],
			     why, good ? "" : ": ", good ? "" : cut_all);
			if (!good)
				s->rep->slipped++;
			else if (!pick[buf_of[q]] || size_of[q] < pick[buf_of[q]])
				pick[buf_of[q]] = size_of[q];
			unlink(paths[q]);
			free(paths[q]);
			free(outs[q]);
		}
		free(outs);
		free(sites);
	}
	for (size_t c = 0; c < made; c++)
		cand_release(&cs[c]);
	{
		struct cand comb = CAND_INIT, tmp;
		int any = 0;
		cand_copy(&comb, best);
		for (size_t b = 0; b < na; b++) {
			size_t at = (size_t)-1;
			if (!pick[b])
				continue;
			/* cuts drop records: find the buffer again by its address */
			for (size_t i = 0; i < comb.n && at == (size_t)-1; i++)
				if (comb.it[i].rec.type == TR_ALLOC && comb.it[i].rec.u.alloc.addr == addr[b])
					at = i;
			if (at == (size_t)-1)
				continue;
			cut_buffer(&comb, at, pick[b], &tmp);
			cand_release(&comb);
			comb = tmp;
			any++;
		}
		if (any && !s->infra_failed && test_one(s, &comb) == 1) {
			cand_release(best);
			*best = comb;
			changed = 1;
		} else {
			cand_release(&comb);
		}
	}
	phase_end(s, best, changed ? "buffers cut" : "sizes kept");
}

/* ---- scalar parameters ---------------------------------------------------- */

/*
 * Try simpler values for the faulting launch's scalar parameters (4- or
 * 8-byte parameters that are not pointers into a buffer): 0, then 1.  A
 * fault that survives n = 0 says the kernel never looked at n -- a missing
 * bounds check, in the kernel's own terms.  Nothing else is tried: another
 * value that still faults (half a wrapped pitch, say) hides the bug's real
 * number from the reader.  Pointer-sized words that point into buffers are
 * never touched.
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
		uint64_t v = 0, tries[2];
		int nt = 0;
		struct cand cs[2];
		int dead;

		if (size != 4 && size != 8)
			continue;
		memcpy(&v, l->args + off, size);
		if (size == 8 && memmap_pointer_word(&mm, v, &dead))
			continue;   /* a pointer */
		if (v == 0)
			continue;
		tries[nt++] = 0;
		if (v != 1)
			tries[nt++] = 1;
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

/* ---- phase states, the site check ------------------------------------------ */

/* Remember the best candidate at the end of a phase (to back off to). */
static void save_state(struct S *s, const char *name, const struct cand *c)
{
	if (s->nstates >= SHRINK_MAX_PHASES)
		return;
	cand_copy(&s->state[s->nstates], c);
	s->state_name[s->nstates++] = name;
}

/*
 * The final state must fail where the base state (the slice, or the
 * launches phase's result) fails under compute-sanitizer: same PC, access
 * and place relative to the parameters.  If it does not, the states after
 * the earlier phases are checked side by side and the latest one that
 * still fails there replaces *best.  Returns 1 when *best changed, 0 when
 * not, -1 on a write error.  The base state's run must have been started
 * (bg_start on s->base).
 */
static int site_check(struct S *s, struct cand *best, const char *out_bin)
{
	struct shrink_report *rep = s->rep;
	char s0[700] = "", sf[1][700];
	char *fo[1] = { NULL }, *fp = (char *)out_bin;
	const char *b0;
	int have = 0, ret = 0, tries = rep->flaky ? 4 : 1;
	uint64_t hf = file_hash(out_bin), hb = s->base.hash;

	if (!(b0 = base_site(s))) {
		snprintf(rep->note, sizeof(rep->note),
			 "site not checked: compute-sanitizer on the %s state: %s%s", s->state_name[0],
			 s->base.why[0] ? s->base.why : "not run", rep->flaky ? " (a flaky fault)" : "");
		goto out;
	}
	snprintf(s0, sizeof(s0), "%s", b0);
	snprintf(rep->site, sizeof(rep->site), "%s", s0);
	if (hb == hf) {
		/* nothing changed after the base state: its run is the final one's */
		rep->site_confirmed = 1;
		rep->final_sanitizer = xstrdup(s->base_output ? s->base_output : "");
		goto out;
	}
	/* a racy fault may simply not happen in one run: only a different
	 * site counts against the reductions */
	for (int k = 0; k < tries && !have; k++) {
		free(fo[0]);
		fo[0] = NULL;
		have = sanitize_files(s, &fp, 1, sf, fo, NULL) > 0;
	}
	if (have && !strcmp(sf[0], s0)) {
		rep->site_confirmed = 1;
		rep->final_sanitizer = fo[0];
		fo[0] = NULL;
		goto out;
	}
	if (!have) {
		snprintf(rep->note, sizeof(rep->note),
			 "site not confirmed: the reduced trace did not fault under compute-sanitizer in %d run(s)%s",
			 tries, rep->flaky ? " (a flaky fault)" : "");
		goto out;
	}
	{
		/* back off: the intermediate states, latest first */
		char **paths = xcalloc((size_t)s->nstates + 1, sizeof(char *));
		char (*sites)[700] = xcalloc((size_t)s->nstates + 1, sizeof(*sites));
		char **outs = xcalloc((size_t)s->nstates + 1, sizeof(char *));
		int *idx = xcalloc((size_t)s->nstates + 1, sizeof(int)), n, pick = 0;
		/* leave out states that are the final one (moved) or the base (fine) */
		if ((n = write_states(s, s->nstates - 2, 1, "state", hf, hb, paths, idx)) < 0) {
			ret = -1;
			n = 0;
		}
		/* side by side, read latest first: the first match ends the rest */
		if (ret == 0 && n)
			sanitize_files(s, paths, (size_t)n, sites, outs, s0);
		for (int q = 0; q < n && !pick && ret == 0; q++)
			if (!strcmp(sites[q], s0))
				pick = idx[q];
		if (ret == 0) {
			snprintf(rep->note, sizeof(rep->note),
				 "the %s phase moved the fault (sanitizer: '%.180s' vs '%.180s'); backed off to the state after %s",
				 s->state_name[pick + 1], s0, sf[0], s->state_name[pick]);
			snprintf(rep->backed_off_to, sizeof(rep->backed_off_to), "%s", s->state_name[pick]);
			cand_release(best);
			cand_copy(best, &s->state[pick]);
			s->cur_state = pick;
			rep->site_confirmed = 1;
			for (int q = 0; q < n; q++)
				if (idx[q] == pick) {
					rep->final_sanitizer = outs[q];
					outs[q] = NULL;
				}
			if (!pick)
				rep->final_sanitizer = xstrdup(s->base_output ? s->base_output : "");
			ret = 1;
		}
		for (int q = 0; q < n; q++) {
			free(paths[q]);
			free(outs[q]);
		}
		free(paths);
		free(sites);
		free(outs);
		free(idx);
	}
out:
	free(fo[0]);
	return ret;
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

/* SIGINT/SIGTERM (interrupt.h) came: write the best state so far (every
 * state best holds has faulted with the signature) as the result,
 * unconfirmed.  0, or -1 on a write error. */
static int keep_interrupted(struct S *s, struct cand *best, const char *out_bin)
{
	s->rep->interrupted = interrupt_signal();
	phase_abandon(s, "stopped: interrupted");
	if (cand_write(best, out_bin, s->err) < 0)
		return -1;
	measure(best, &s->rep->final_launches, &s->rep->final_buffers, &s->rep->final_bytes);
	return 0;
}

/* ---- the emitted program itself ----------------------------------------- */

/* Make the state after phase `st` the result (a repro.cu check needed
 * it): *best, out_bin and the report follow.  0, or -1 on a write error. */
static int repro_adopt_state(struct S *s, struct cand *best, const char *out_bin, int st, const char *tried)
{
	struct shrink_report *rep = s->rep;
	size_t l = strlen(rep->note);
	if (st == s->cur_state)
		return 0;
	cand_release(best);
	cand_copy(best, &s->state[st]);
	s->cur_state = st;
	snprintf(rep->backed_off_to, sizeof(rep->backed_off_to), "%s", s->state_name[st]);
	snprintf(rep->note + l, sizeof(rep->note) - l, "%sthe reduced trace's repro.cu did not fault as "
		 "replay did (%s); the state after %s's does", l ? "; " : "", tried, s->state_name[st]);
	return cand_write(best, out_bin, s->err);
}

/*
 * Build and run repro.cu as it will be emitted (o->check_repro) and make
 * its count the reproduction figure.  When it does not fault at the rate
 * replay measured for the same trace (every run, for a steady fault), try
 * the other placements for that trace, then the states after earlier
 * phases with replay's placement; keep the first that holds (out_bin is
 * rewritten when the state changes), else the one that faulted most (the
 * fault is then reported flaky, at the program's own rate); when none
 * faulted at all, say plainly that the program does not reproduce and
 * what was tried (the caller exits 1).  Returns 0, or -1 on a write error.
 */
static int phase_repro(struct S *s, struct cand *best, const char *out_bin, int runs)
{
	struct shrink_report *rep = s->rep;
	const int modes[3] = { GUARD_LAYOUT, GUARD_END, GUARD_START };
	int need = rep->final_faults >= rep->final_runs ? runs :
		rate_need(runs, rep->final_faults, rep->final_runs);
	struct strbuf why = STRBUF_INIT, tried = STRBUF_INIT, path = STRBUF_INIT;
	int ret = 0, best_faults = -1, best_guard = s->guard, best_state = s->cur_state;

	rep->repro_guard = s->guard;
	if (!s->o->check_repro)
		return 0;
	phase_begin(s, "repro.cu", best);
	/* attempt 0: replay's placement; 1-2: the other placements; then
	 * earlier states with replay's placement */
	for (int k = 0; k < 3 + s->cur_state; k++) {
		int guard = s->guard, st = s->cur_state, faults = 0, rc;
		const char *bin = out_bin;
		if (k >= 1 && k < 3) {
			int seen = 0, m = -1;
			for (int q = 0; q < 3 && m < 0; q++)
				if (modes[q] != s->guard && ++seen == k)
					m = q;
			if (m < 0)
				continue;
			guard = modes[m];
		} else if (k >= 3) {
			st = s->cur_state - 1 - (k - 3);
			sb_reset(&path);
			sb_addf(&path, "%s/repro-state-%d-%s.bin", s->o->workdir, st, s->state_name[st]);
			if (cand_write(&s->state[st], path.buf, s->err) < 0) {
				ret = -1;
				goto out;
			}
			bin = path.buf;
		}
		sb_reset(&why);
		rc = s->o->check_repro(s->o->check_arg, bin, guard, runs, &faults, &why);
		if (rc == 1) {
			snprintf(rep->repro_why, sizeof(rep->repro_why), "%s", why.buf);
			phase_end(s, best, "not checked: no compiler or driver");
			goto out;
		}
		rep->repro_attempts++;
		s->ph->candidates += runs;
		rep->candidates += runs;
		slog(s, "repro.cu (%s placement, state after %s): %s%d/%d faulted", place_guard_name(guard),
		     s->nstates ? s->state_name[st] : "-", rc < 0 ? why.buf : "", faults, runs);
		sb_addf(&tried, "%s%s placement%s%s: %d/%d", tried.len ? "; " : "", place_guard_name(guard),
			k >= 3 ? ", state after " : "", k >= 3 ? s->state_name[st] : "", faults, runs);
		if (rc < 0) {
			/* a build failure will not go away with another placement */
			snprintf(rep->repro_why, sizeof(rep->repro_why), "%s", why.buf);
			break;
		}
		rep->repro_checked = 1;
		if (faults > best_faults) {
			best_faults = faults;
			best_guard = guard;
			best_state = st;
		}
		if (faults >= need)
			break;
	}
	if (rep->repro_checked) {
		rep->repro_runs = runs;
		rep->repro_faults = best_faults;
		rep->repro_guard = best_guard;
		rep->repro_ok = best_faults > 0;
		if (best_faults > 0 && repro_adopt_state(s, best, out_bin, best_state, tried.buf) < 0) {
			ret = -1;
			goto out;
		}
		if (best_faults > 0 && best_faults < need) {
			size_t l = strlen(rep->note);
			rep->flaky = 1;
			snprintf(rep->note + l, sizeof(rep->note) - l, "%srepro.cu faulted in %d of %d runs, "
				 "below replay's %d of %d (tried %s)", l ? "; " : "", best_faults, runs,
				 rep->final_faults, rep->final_runs, tried.buf);
		}
		if (!best_faults)
			snprintf(rep->repro_why, sizeof(rep->repro_why),
				 "replay faulted %d/%d, but the emitted repro.cu, built and run on its own, never "
				 "faulted with the signature, every way it was tried (%s)", rep->final_faults,
				 rep->final_runs, tried.buf);
	}
	phase_end(s, best, rep->repro_ok ? (best_faults >= need ? "reproduces" : "reproduces, less often") :
		  rep->repro_checked ? "DOES NOT REPRODUCE" : "not built");
out:
	sb_release(&why);
	sb_release(&tried);
	sb_release(&path);
	return ret;
}

int shrink_run(const struct trace *orig, const struct shrink_opts *o, const char *out_bin,
	       struct shrink_report *rep, struct strbuf *err)
{
	struct S s;
	struct cand best = CAND_INIT;
	long fault_ev = -1, frec;
	int ret = -1;

	memset(&s, 0, sizeof(s));
	memset(rep, 0, sizeof(*rep));
	bg_init(&s.base);
	bg_init(&s.pre);
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

	s.have_san = !o->no_site_check && diagnose_find_sanitizer() != NULL;
	/* --cut-buffers compares every report, not just the first */
	diagnose_set_print_limit(o->cut_buffers ? 64 : 1);
	if (o->sig_site && !s.have_san) {
		sb_addf(err, "--signature=site needs compute-sanitizer (set GPUREDUCE_SANITIZER or add it to PATH)%s",
			o->no_site_check ? " and no --no-diagnose" : "");
		return -1;
	}
	if (o->log_path && !(s.log = fopen(o->log_path, "w"))) {
		sb_addf(err, "%s: cannot write the log: %s", o->log_path, strerror(errno));
		return -1;
	}
	s.pool = new_pool(&s, err);
	if (!s.pool) {
		s.infra_failed = 1;
		goto out;
	}
	if (phase_confirm(&s, &fault_ev) < 0)
		goto out;
	if (rep->flaky) {
		/* keep candidates whose rate stays near the original's */
		double rate = (double)rep->orig_faults / rep->orig_runs;
		s.reps = rate >= 0.5 ? 3 : rate >= 0.25 ? 6 : 10;
		s.need = 1;
	}

	if (o->sig_site) {
		/* the reference: the original's own site */
		char *op = (char *)s.orig->path;
		char site[1][700];
		if (sanitize_files(&s, &op, 1, site, NULL, NULL) > 0) {
			snprintf(s.ref_site, sizeof(s.ref_site), "%s", site[0]);
			s.have_ref = 1;
			slog(&s, "reference site: %s", s.ref_site);
		} else {
			snprintf(rep->note, sizeof(rep->note),
				 "--signature=site: compute-sanitizer saw no error in the original's replay; "
				 "candidates were judged by error and kernel");
		}
	}

	if (o->strategy == STRATEGY_BASELINE) {
		/* the same reduction, the plain way: ddmin over every launch, then
		 * the same data, grid and scalar phases (plain ddmin, a fresh
		 * process per candidate; no compute-sanitizer work) */
		static void (*const rest[])(struct S *, struct cand *) = { phase_data, phase_grid, phase_scalars };
		cand_add_all(&best, s.orig);
		phase_launches(&s, &best, "ddmin-launches");
		save_state(&s, "launches", &best);
		for (size_t k = 0; k < sizeof(rest) / sizeof(rest[0]) && !s.infra_failed && !over_time(&s) &&
				   !interrupt_signal(); k++) {
			rest[k](&s, &best);
			save_state(&s, s.ph->name, &best);
		}
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
		save_state(&s, sliced ? "slice" : "launches", &best);
		/* the base state's compute-sanitizer run (for the site check at
		 * the end) goes on in the background while the data, size, grid
		 * and scalar phases run */
		if (s.have_san)
			bg_start(&s, &s.base, &best, "slice-site");
		static void (*const later[])(struct S *, struct cand *) = {
			/* sizes last: its cuts are checked by compute-sanitizer, and
			 * a back-off after it keeps the grid and scalar work */
			phase_data, phase_grid, phase_scalars, phase_sizes
		};
		for (size_t k = 0; k < sizeof(later) / sizeof(later[0]); k++) {
			if (later[k] == phase_sizes && !o->cut_buffers)
				continue;
			if (interrupt_signal())
				break;
			if (s.infra_failed && !recover(&s))
				break;
			later[k](&s, &best);
			save_state(&s, s.ph->name, &best);
		}
		if (s.infra_failed)
			recover(&s);
	}
	if (interrupt_signal()) {
		ret = keep_interrupted(&s, &best, out_bin);
		goto out;
	}
	if (s.infra_failed)
		goto out;

	/* final confirmation; back off to the base state (slice or launches) */
	phase_begin(&s, "verify", &best);
	s.cur_state = s.nstates - 1;
	{
		int runs = o->confirm_runs > 0 ? o->confirm_runs : (rep->flaky ? 10 : 5);
		int faults = 0;
		/* the site check's run of the final trace goes side by side with
		 * its confirmation runs */
		if (s.base.started)
			prefetch_start(&s, &best);
		if (confirm_final(&s, &best, out_bin, &faults, runs) < 0)
			goto out;
		if (interrupt_signal()) {
			ret = keep_interrupted(&s, &best, out_bin);
			goto out;
		}
		if (!faults && s.nstates > 1) {
			snprintf(rep->note, sizeof(rep->note),
				 "the fully reduced candidate did not fault in confirmation; backed off to the state "
				 "after %s", s.state_name[0]);
			snprintf(rep->backed_off_to, sizeof(rep->backed_off_to), "%s", s.state_name[0]);
			cand_release(&best);
			cand_copy(&best, &s.state[0]);
			s.cur_state = 0;
			if (confirm_final(&s, &best, out_bin, &faults, runs) < 0)
				goto out;
		}
		/* the cheap signature (error + kernel) cannot tell two bugs in one
		 * kernel apart: where compute-sanitizer is at hand, the reduced
		 * trace must fail at the base state's site, or we back off */
		if (faults && s.base.started) {
			int moved = site_check(&s, &best, out_bin);
			if (moved < 0)
				goto out;
			if (moved && confirm_final(&s, &best, out_bin, &faults, runs) < 0)
				goto out;
		}
		if (faults && !interrupt_signal() && rate_check(&s, &best, out_bin, &faults, runs) < 0)
			goto out;
		if (interrupt_signal()) {
			/* the state in best has faulted before: keep it as it is */
			ret = keep_interrupted(&s, &best, out_bin);
			goto out;
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
	if (phase_repro(&s, &best, out_bin, rep->final_runs) < 0)
		goto out;
	if (interrupt_signal()) {
		ret = keep_interrupted(&s, &best, out_bin);
		goto out;
	}
	measure(&best, &rep->final_launches, &rep->final_buffers, &rep->final_bytes);
	ret = 0;
out:
	phase_abandon(&s, s.infra_failed ? "stopped: workers lost" : "stopped on an error");
	if (s.pool) {
		pool_tally(&s);
		pool_release(s.pool);
	}
	rep->seconds = now_sec() - s.t0;
	rep->infra_failed = s.infra_failed;
	cand_release(&best);
	for (int k = 0; k < s.nstates; k++)
		cand_release(&s.state[k]);
	if (s.log)
		fclose(s.log);
	for (int i = 0; i < s.nsrc; i++) {
		trace_release(s.src[i]);
		free(s.src[i]);
	}
	bg_release(&s.base);
	bg_release(&s.pre);
	free(s.base_output);
	for (size_t k = 0; k < s.nsites; k++)
		free(s.sites[k].output);
	free(s.sites);
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
