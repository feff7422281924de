/*
 * oracle-san.c - the oracle's compute-sanitizer runs (see oracle.h): runs
 * side by side, their sites cached by trace content, the base state's run
 * in the background, and the final trace's run started beside its
 * confirmation.  A site is diagnose_site_rel's one-line summary of where
 * the first report lies (PC, access, place relative to the parameters).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/child.h"
#include "../common/strbuf.h"
#include "../common/util.h"
#include "../replay/sidechan.h"
#include "cand.h"
#include "../diagnose/diagnose.h"
#include "oracle-int.h"

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
			if (strncmp(p, "=========", 9) && sidechan_kind(p) == SC_NONE)
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

/*
 * Run compute-sanitizer on each of the n trace files side by side (at most
 * jobs at a time) and write each one's site (diagnose_site_rel) into
 * sites[i]; "" when the run saw no error or failed.  outputs (may be NULL)
 * gets each run's whole output (malloc'd) where it was read.  Results are
 * read in order; with stop_site, the first run found failing there ends
 * the others (their sites stay "").  Returns how many sites were found.
 */
static int sanitize_run(struct oracle *s, char *const *paths, size_t n, char (*sites)[700], char **outputs,
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
			started[k] = diagnose_start(paths[next + k], s->guard, NULL, outs[k], &ch[k], &e) == 0;
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
			oracle_log(s, "sanitizer %s: %s (%.2f s wait%s)", paths[next + k],
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
static void site_cache_add(struct oracle *s, uint64_t hash, const char *site, const char *output)
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
static void bg_start(struct oracle *s, struct bg_san *b, const struct cand *c, const char *name)
{
	struct strbuf e = STRBUF_INIT;
	sb_reset(&b->bin);
	sb_reset(&b->out);
	sb_addf(&b->bin, "%s/%s.bin", s->o->workdir, name);
	sb_addf(&b->out, "%s/%s.txt", s->o->workdir, name);
	if (cand_write(c, b->bin.buf, &e) == 0) {
		b->hash = oracle_file_hash(b->bin.buf);
		if (diagnose_start(b->bin.buf, s->guard, NULL, b->out.buf, &b->ch, &e) == 0) {
			b->started = 1;
			b->t0 = now_sec();
		}
	}
	if (!b->started)
		snprintf(b->why, sizeof(b->why), "not run (%s)", e.len ? e.buf : "compute-sanitizer did not start");
	sb_release(&e);
}

/* Wait for a background run (once) and read its site, as collect_site. */
static int bg_collect(struct oracle *s, struct bg_san *b, char *site, size_t n, char **output, int *early)
{
	int found;
	b->collected = 1;
	if (!b->started)
		return 0;
	found = collect_site(&b->ch, b->out.buf, b->bin.buf, site, n, output, early, b->why, sizeof(b->why));
	s->rep->site_runs++;
	s->rep->site_seconds += now_sec() - b->t0;
	return found;
}

/* The final trace's run, started beside its confirmation runs; not
 * started when the final trace is the base state's (that run serves). */
void oracle_prefetch_start(struct oracle *s, const struct cand *c)
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
static void prefetch_collect(struct oracle *s)
{
	char site[700] = "", *output = NULL;
	int early = 0;

	if (!s->pre.started || s->pre.collected)
		return;
	if (bg_collect(s, &s->pre, site, sizeof(site), &output, &early))
		site_cache_add(s, s->pre.hash, site, output);
	oracle_log(s, "sanitizer %s (started with the confirmation runs): %s (%.2f s since it started%s)",
	     s->pre.bin.buf, site[0] ? site : s->pre.why, now_sec() - s->pre.t0,
	     early ? "; stopped after its reports" : "");
	unlink(s->pre.out.buf);
	free(output);
}

/* sanitize_run with a cache by file content: a trace already run (a cut
 * candidate that became the final trace, say) is not run again.  Only runs
 * that found a site are remembered: a racy fault gets its retries. */
int oracle_sanitize(struct oracle *s, char *const *paths, size_t n, char (*sites)[700], char **outputs,
			  const char *stop_site)
{
	char **todo = xcalloc(n + 1, sizeof(char *));
	size_t *at = xcalloc(n + 1, sizeof(size_t)), nt = 0;
	uint64_t *h = xcalloc(n + 1, sizeof(uint64_t));
	int found = 0;

	for (size_t i = 0; i < n; i++) {
		const struct site_ent *e = NULL;
		h[i] = oracle_file_hash(paths[i]);
		if (s->pre.started && h[i] == s->pre.hash)
			prefetch_collect(s);
		for (size_t k = 0; k < s->nsites && !e; k++)
			if (s->sites[k].hash == h[i])
				e = &s->sites[k];
		if (e) {
			snprintf(sites[i], sizeof(sites[0]), "%s", e->site);
			if (outputs)
				outputs[i] = xstrdup(e->output);
			oracle_log(s, "sanitizer %s: %s (cached)", paths[i], e->site);
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

uint64_t oracle_file_hash(const char *path)
{
	struct strbuf sb = STRBUF_INIT, e = STRBUF_INIT;
	uint64_t h = 0;
	if (read_file(path, &sb, &e) == 0)
		h = tr_file_hash(sb.buf, sb.len);
	sb_release(&sb);
	sb_release(&e);
	return h;
}

/* ---- the base state's site -------------------------------------------------- */

/* The base state's site (waiting for its run if need be); NULL when it
 * was not run or saw no error (s->base.why says which). */
const char *oracle_base_site(struct oracle *s)
{
	if (s->base.started && !s->base.collected) {
		int early = 0;
		s->base_have = bg_collect(s, &s->base, s->base_site, sizeof(s->base_site), &s->base_output, &early);
		oracle_log(s, "sanitizer on the %s state: %s (%.2f s since it started%s)",
		     s->base_name ? s->base_name : "base", s->base_have ? s->base_site : s->base.why,
		     now_sec() - s->base.t0, early ? "; stopped after its reports" : "");
	}
	return s->base_have ? s->base_site : NULL;
}

void oracle_base_start(struct oracle *s, const struct cand *c, const char *name)
{
	if (s->base.started && !s->base.collected) {
		/* started early on a state that did not become the base */
		child_kill(&s->base.ch);
		s->base.ch = (struct child)CHILD_INIT;
		s->base.started = 0;
		s->base.why[0] = 0;
	}
	s->base_name = name;
	bg_start(s, &s->base, c, "slice-site");
}

int oracle_base_started(const struct oracle *s)
{
	return s->base.started;
}

const char *oracle_base_why(const struct oracle *s)
{
	return s->base.why;
}

const char *oracle_base_output(const struct oracle *s)
{
	return s->base_output;
}

const char *oracle_base_bin(const struct oracle *s)
{
	return s->base.bin.buf;
}

uint64_t oracle_base_hash(const struct oracle *s)
{
	return s->base.hash;
}

int oracle_have_san(const struct oracle *s)
{
	return s->have_san;
}

void oracle_take_reference_site(struct oracle *s)
{
	/* the reference: the original's own site */
	char *op = (char *)s->orig->path;
	char site[1][700];
	if (oracle_sanitize(s, &op, 1, site, NULL, NULL) > 0) {
		snprintf(s->ref_site, sizeof(s->ref_site), "%s", site[0]);
		s->have_ref = 1;
		oracle_log(s, "reference site: %s", s->ref_site);
	} else {
		snprintf(s->rep->note, sizeof(s->rep->note),
			 "--signature=site: compute-sanitizer saw no error in the original's replay; "
			 "candidates were judged by error and kernel");
	}
}

void oracle_san_init(struct oracle *s)
{
	bg_init(&s->base);
	bg_init(&s->pre);
}

void oracle_san_release(struct oracle *s)
{
	bg_release(&s->base);
	bg_release(&s->pre);
	free(s->base_output);
	for (size_t k = 0; k < s->nsites; k++)
		free(s->sites[k].output);
	free(s->sites);
}
