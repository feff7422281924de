/*
 * cmd-hunt.c - `gpureduce hunt [options] TRACE` and `gpureduce hunt
 * [options] -- CMD...`: silent out-of-bounds accesses become findings and
 * the first one a repro.
 *
 * TRACE: reducer/hunt.h replays it with guards at the end of every
 * allocator block (rounded size) and allocation, then at the start; each
 * launch that faults is a finding, printed with its kernel, Python line,
 * test and (with compute-sanitizer) how far past which tensor it went.
 * The first finding's trace (hunt_cut) is then reduced like a crash, guard
 * placement only, and written as repro.cu/.bin/.yaml under -o DIR.
 *
 * -- CMD: `gpureduce capture --tensors` runs CMD first (child process),
 * then every trace it wrote is hunted (one per CUDA process: capture_traces
 * below knows how capture names them).  Exit codes: see usage_str.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../addr/place.h"
#include "../common/child.h"
#include "../common/opts.h"
#include "../common/strbuf.h"
#include "../common/util.h"
#include "../diagnose/diagnose.h"
#include "../reducer/hunt.h"
#include "../reducer/lastslice.h"
#include "../reducer/shrink.h"
#include "../trace/trace.h"
#include "cmds.h"
#include "outputs/outpaths.h"
#include "repro/repro.h"
#include "repro/side-repro.h"
#include "testtimes.h"
#include "outputs/safe-out.h"

static const char usage_str[] =
	"usage: gpureduce hunt [-o DIR] [--max-findings=N] [--every-launch] [--no-start] [--tensor-ends] [--no-shrink]\n"
	"                      [--no-diagnose] [-j N] [--time-limit=S] [--candidate-timeout=S] [--keep-work] [--quiet]\n"
	"                      [--time-tests] [--no-layout-check]\n"
	"                      (TRACE... | -- CMD ARGS...)\n\n"
	"Replays TRACE (a run that ended clean, or the window before its fault) with every\n"
	"buffer and every allocator block (capture --tensors) against an unmapped guard: once\n"
	"flush at the end (the guard where the allocator's rounded block ends, so reads within\n"
	"a block stay legal), once at the start.  Each launch that faults is a finding; it is\n"
	"left out of the next replay, with every later launch of the same kernel from the same\n"
	"Python line (the same kernel alone when no Python line was recorded), and the hunt goes\n"
	"on (at most --max-findings, default 8).\n"
	"The first finding is reduced like a crash (guard placement only): DIR/repro.cu,\n"
	"repro.bin and repro.yaml (-o DIR, default hunt-repro).  `-- CMD`: capture CMD with\n"
	"--tensors into DIR (every CUDA process it starts: one trace each) and hunt them all;\n"
	"each finding names the test that ran (PYTEST_CURRENT_TEST) when there was one.\n"
	"  --max-findings=N     stop after N findings (1 to 1000)\n"
	"  --every-launch       hunt each launch on its own: a finding's later launches from its\n"
	"                       line are replayed, and each that faults is a finding of its own\n"
	"  --no-start           guards at the end only (overruns, not underruns)\n"
	"  --tensor-ends        one more pass with guards at each tensor's requested end: a launch\n"
	"                       that faults only there stays within its allocator block (legal);\n"
	"                       printed as a note, not a finding\n"
	"  --no-layout-check    report a launch that also faults when replayed with every buffer where\n"
	"                       the program had it (by default: a note, replay's own fault)\n"
	"  --no-shrink          report the findings, write no repro\n"
	"  --no-diagnose        no compute-sanitizer run per finding (distance unknown)\n"
	"  --time-tests         (-- pytest ...) run the suite plainly first, then under capture, both\n"
	"                       with pytest's --durations=0, and print each test's seconds side by\n"
	"                       side (all of them in DIR/test-times.txt; the runs' output in\n"
	"                       DIR/plain-run.log and DIR/capture-run.log, printed after each run)\n"
	"Exit: 0 clean (no launch faulted under guards); 1 findings (printed; the repro of the\n"
	"      first written unless --no-shrink, or the reduction failed: said why); 2 usage;\n"
	"      3 bad or incomplete trace (or one replay could not run to its end: no verdict),\n"
	"      an output folder not writable; 4 no GPU/driver,\n"
	"      capture failed (the program's status is said); 5 internal error.\n";

struct hunt_cli {
	struct hunt_opts ho;
	struct shrink_opts so;
	const char *out_dir;
	int no_shrink, no_diag, quiet, keep_work, time_tests;
	int shrunk;               /* the first finding (of all traces) has been shrunk */
	size_t findings;
};

/* 1 when path starts with the trace magic (a sibling that is a trace, not
 * a log or a work file). */
static int is_trace_file(const char *path)
{
	char m[sizeof(TRACE_MAGIC) - 1];
	FILE *f = fopen(path, "rb");
	int ok = f && fread(m, 1, sizeof(m), f) == sizeof(m) && !memcmp(m, TRACE_MAGIC, sizeof(m));
	if (f)
		fclose(f);
	return ok;
}

/* The traces a `capture -o main` run wrote: main itself and, for each
 * further CUDA process, main.rankR, main.rankR.pidP or main.PID (src/
 * capture-ranks.c's naming for -o FILE): every sibling main.SUFFIX that is
 * a trace.  Files older than `since` (an earlier run's, in the same
 * folder) are left out.  Appends malloc'ed paths to *v (n entries). */
static void capture_traces(const char *main, time_t since, char ***v, size_t *n)
{
	char *dir = xstrdup(main), *slash = strrchr(dir, '/');
	const char *base = slash ? slash + 1 : main;
	size_t bl = strlen(base);
	struct stat st;
	DIR *d;
	struct dirent *e;
	if (slash)
		*slash = 0;
	if (stat(main, &st) == 0 && st.st_mtime >= since) {
		*v = xrealloc(*v, (*n + 1) * sizeof(**v));
		(*v)[(*n)++] = xstrdup(main);
	}
	d = opendir(slash ? dir : ".");
	while (d && (e = readdir(d))) {
		const char *p = e->d_name;
		if (strncmp(p, base, bl) || p[bl] != '.' || !p[bl + 1] ||
		    strspn(p + bl + 1, "0123456789rankpid.") != strlen(p + bl + 1))
			continue;
		*v = xrealloc(*v, (*n + 1) * sizeof(**v));
		(*v)[*n] = xmalloc(strlen(dir) + strlen(p) + 2);
		sprintf((*v)[*n], "%s/%s", slash ? dir : ".", p);
		if (stat((*v)[*n], &st) == 0 && S_ISREG(st.st_mode) && st.st_mtime >= since &&
		    is_trace_file((*v)[*n]))
			(*n)++;
		else
			free((*v)[*n]);
	}
	if (d)
		closedir(d);
	free(dir);
}

/* Is diag, the diagnosis of f's slice sl, about f: a report in f's kernel
 * (lastslice.h) and, under end guards, an overrun of one of its
 * parameters?  Else its cut is diagnosed. */
static int slice_diag_fits(const struct hunt_finding *f, const struct trace *sl, const char *diag)
{
	char dist[80];
	const char *access;
	return lastslice_diag_is_last(sl, diag) &&
	       (f->guard != GUARD_END || rc_diag_param(diag, dist, sizeof(dist), &access) >= 0);
}

/* Run compute-sanitizer on finding k's slice (hunt_finding.slice: its
 * launch alone after the state it needs) or, without one or when the
 * slice's report is not about the finding, its cut trace (hunt_finding.cut,
 * else written here): f->diag, or nothing. */
static void diagnose_finding(const struct trace *t, struct hunt_result *r, size_t k, const char *workdir)
{
	struct strbuf path = STRBUF_INIT, diag = STRBUF_INIT, err = STRBUF_INIT;
	struct trace ct;
	if (r->f[k].slice && trace_open(&ct, r->f[k].slice, TRACE_OPEN_STRICT, &err) == 0) {
		if (diagnose_trace(&ct, r->f[k].slice, r->f[k].guard, &diag, &err) == 0 &&
		    slice_diag_fits(&r->f[k], &ct, diag.buf))
			r->f[k].diag = xstrdup(diag.buf);
		trace_release(&ct);
		if (r->f[k].diag)
			goto out;
		sb_reset(&diag);
		sb_reset(&err);
	}
	if (r->f[k].cut) {
		sb_adds(&path, r->f[k].cut);
	} else {
		sb_addf(&path, "%s/finding-%zu.bin", workdir, k + 1);
		if (hunt_cut(t, r, k, path.buf, &err) < 0)
			goto out;
	}
	if (trace_open(&ct, path.buf, TRACE_OPEN_STRICT, &err) < 0)
		goto out;
	if (diagnose_trace(&ct, path.buf, r->f[k].guard, &diag, &err) == 0)
		r->f[k].diag = xstrdup(diag.buf);
	trace_release(&ct);
out:
	if (!r->f[k].diag)
		r->f[k].diag_err = xstrdup(err.len ? err.buf : "no report");
	sb_release(&path);
	sb_release(&diag);
	sb_release(&err);
}

/* Prepend the hunt label to the emitted program (side_repro.label; arg:
 * the finding's one-line description). */
static void label_source(void *arg, const char *diag, struct strbuf *src)
{
	const char *what = arg;
	struct strbuf o = STRBUF_INIT;
	(void)diag;
	sb_adds(&o, "/*\n * HUNT REPRO (gpureduce hunt): this access did not fault in the original run\n"
		" * (it landed inside the allocator's memory); here every tensor is its own buffer\n"
		" * against an unmapped guard (placement: guarded), so it faults where it is made.\n * ");
	for (const char *p = what; *p; p++)
		sb_addch(&o, *p == '*' && p[1] == '/' ? '+' : *p);
	sb_adds(&o, "\n */\n");
	sb_add(&o, src->buf, src->len);
	sb_reset(src);
	sb_add(src, o.buf, o.len);
	sb_release(&o);
}

/* Reduce finding k of t and write DIR/repro.cu, .bin, .yaml.  0, or an exit
 * code with err. */
static int shrink_finding(struct hunt_cli *c, const struct trace *t, const char *path, struct hunt_result *r,
			  size_t k, const char *what, const char *workdir, struct strbuf *err)
{
	struct shrink_opts o = c->so;
	struct shrink_report rep;
	struct strbuf cut = STRBUF_INIT, tmp = STRBUF_INIT;
	struct trace bt;
	char *cu = NULL, *bin = NULL, *yml = NULL;
	int have_bt = 0, ret = EXIT_INTERNAL;

	memset(&rep, 0, sizeof(rep));
	sb_addf(&tmp, "%s/repro.cu", c->out_dir);
	cu = xstrdup(tmp.buf);
	bin = repro_sibling(cu, ".bin");
	yml = repro_sibling(cu, ".yaml");
	if (outpath_is(cu, path) || outpath_is(bin, path) || outpath_is(yml, path)) {
		sb_addf(err, "%s/repro.{cu,bin,yaml} would overwrite the trace %s: pick another -o folder",
			c->out_dir, path);
		ret = EXIT_USAGE;
		goto out;
	}
	if (mkdir(c->out_dir, 0777) < 0 && errno != EEXIST) {
		sb_addf(err, "%s: cannot create the output folder: %s", c->out_dir, strerror(errno));
		ret = EXIT_INPUT;
		goto out;
	}
	sb_addf(&cut, "%s/hunt-cut.bin", workdir);
	if (hunt_cut(t, r, k, cut.buf, err) < 0 || trace_open(&bt, cut.buf, TRACE_OPEN_STRICT, err) < 0)
		goto out;
	have_bt = 1;
	sb_reset(&tmp);
	sb_addf(&tmp, "%s/shrink", workdir);
	if (mkdir(tmp.buf, 0700) < 0) {
		sb_addf(err, "%s: cannot create", tmp.buf);
		ret = EXIT_ENV;
		goto out;
	}
	o.workdir = tmp.buf;
	o.guard = r->f[k].guard;
	o.check_repro = repro_check_trace;
	{
		struct side_repro side = { &bt, path, cu, bin, yml, "gpureduce hunt", c->no_diag,
					   label_source, (void *)what };
		ret = side_repro_run(&side, &o, &rep, err);
		if (ret != EXIT_OK)
			goto out;
		ret = EXIT_INTERNAL;
	}
	sb_reset(&tmp);
	sb_adds(&tmp, "repro_kind: hunt\nhunt_finding: '");
	for (const char *p = what; *p; p++)
		*p == '\'' ? sb_adds(&tmp, "''") : sb_addch(&tmp, *p);
	sb_addf(&tmp, "'\nhunt_kernel: '%s'\nhunt_launch: %llu\nhunt_guard: %s\n", r->f[k].kernel,
		(unsigned long long)r->f[k].seq, place_guard_name(r->f[k].guard));
	if (side_repro_yaml_append(yml, tmp.buf, err) < 0) {
		ret = EXIT_ENV;
		goto out;
	}
	if (!c->quiet)
		shrink_print_report(stderr, &rep);
	if (rep.repro_checked)
		printf("hunt: repro of finding 1 -> %s (%zu launch(es), %zu buffer(s); repro.cu faulted %d/%d, "
		       "%s placement)\n", cu, rep.final_launches, rep.final_buffers, rep.repro_faults,
		       rep.repro_runs, place_guard_name(rep.repro_guard));
	else
		printf("hunt: repro of finding 1 -> %s (%zu launch(es), %zu buffer(s); reproduced %d/%d in replay; "
		       "repro.cu not built: %s)\n", cu, rep.final_launches, rep.final_buffers, rep.final_faults,
		       rep.final_runs, rep.repro_why[0] ? rep.repro_why : "no compiler");
	ret = EXIT_OK;
	if (rep.repro_checked && !rep.repro_ok) {
		sb_addf(err, "the emitted %s does NOT fault: %s", cu, rep.repro_why);
		ret = EXIT_FAULT;
	}
out:
	if (have_bt)
		trace_release(&bt);
	free(rep.final_sanitizer);
	free(cu);
	free(bin);
	free(yml);
	sb_release(&cut);
	sb_release(&tmp);
	return ret;
}

/* "note: [pid P] [test T: ]LINE" for a note about launch seq of t. */
static void print_note(const struct trace *t, uint64_t seq, const char *tag, const struct strbuf *line)
{
	struct strbuf test = STRBUF_INIT;
	hunt_test_of(t, seq, &test);
	printf("note: %s%s%s%s%s\n", tag, test.len ? "test " : "", test.len ? test.buf : "", test.len ? ": " : "",
	       line->buf);
	sb_release(&test);
}

static int has_launch(const struct trace *t)
{
	for (size_t i = 0; i < t->nrec; i++)
		if (t->rec[i].type == TR_LAUNCH || t->rec[i].type == TR_GRAPH_LAUNCH)
			return 1;
	return 0;
}

/* 1 when a record of t names a blob t does not store (err says which):
 * the guarded replays would stop on it, and the traces hunt writes could
 * not carry it. */
static int missing_blob(const struct trace *t, struct strbuf *err)
{
	for (size_t i = 0; i < t->nrec; i++) {
		const struct tr_rec *r = &t->rec[i];
		uint64_t h = r->type == TR_MODULE ? r->u.module.blob : r->type == TR_MEMCPY_H2D ? r->u.copy.blob : 0;
		if (h && trace_find_blob(t, h) < 0) {
			sb_addf(err, "%s: event %zu: blob %016llx is referenced but not stored in the trace "
				"(a damaged or truncated trace)", t->path, i, (unsigned long long)h);
			return 1;
		}
	}
	return 0;
}

/* Hunt one trace: print its findings, shrink the first of the run.
 * Returns EXIT_OK (clean), EXIT_FAULT (findings) or another exit code. */
static int hunt_one(struct hunt_cli *c, const char *path, int multi)
{
	struct strbuf err = STRBUF_INIT, line = STRBUF_INIT, what = STRBUF_INIT, test = STRBUF_INIT;
	struct hunt_result r;
	struct hunt_opts ho = c->ho;
	struct trace t;
	char workdir[4096];
	int have_t = 0, ret = EXIT_INTERNAL, have_dir = 0;
	const char *tag = "";
	char pidtag[48] = "";

	memset(&r, 0, sizeof(r));
	if (safe_trace_open(&t, path, 0, &err) < 0) {
		cmd_error("hunt", "%s", err.buf);
		ret = EXIT_INPUT;
		goto out;
	}
	have_t = 1;
	if (t.truncated)
		fprintf(stderr, "gpureduce hunt: warning: %s\n", t.truncated_msg);
	if (missing_blob(&t, &err)) {   /* a damaged trace: say so now, not as a failed write later */
		cmd_error("hunt", "%s", err.buf);
		ret = EXIT_INPUT;
		goto out;
	}
	if (!has_launch(&t)) {   /* not "clean": nothing ran to be guarded */
		printf("hunt: %s: no kernel launches in the trace: nothing to hunt\n", path);
		ret = EXIT_OK;
		goto out;
	}
	if (multi) {
		for (size_t i = 0; i < t.nrec; i++)
			if (t.rec[i].type == TR_PROCESS) {
				snprintf(pidtag, sizeof(pidtag), "[pid %u] ", t.rec[i].u.process.pid);
				break;
			}
		tag = pidtag;
	}
	snprintf(workdir, sizeof(workdir), "%s.hunt-XXXXXX", path);
	if (!mkdtemp(workdir)) {
		cmd_error("hunt", "cannot create a work folder next to %s: %s", path, strerror(errno));
		ret = EXIT_INPUT;
		goto out;
	}
	have_dir = 1;
	ho.workdir = workdir;
	if (!c->no_shrink && !c->shrunk) {
		/* before the replays: the repro must not overwrite the trace */
		struct strbuf cu = STRBUF_INIT;
		char *bin, *yml;
		sb_addf(&cu, "%s/repro.cu", c->out_dir);
		bin = repro_sibling(cu.buf, ".bin");
		yml = repro_sibling(cu.buf, ".yaml");
		if (outpath_is(cu.buf, path) || outpath_is(bin, path) || outpath_is(yml, path)) {
			cmd_error("hunt", "%s/repro.{cu,bin,yaml} would overwrite the trace %s: pick another -o folder",
				  c->out_dir, path);
			ret = EXIT_USAGE;
		}
		sb_release(&cu);
		free(bin);
		free(yml);
		if (ret == EXIT_USAGE)
			goto out;
	}
	ho.slices = !c->no_diag && diagnose_find_sanitizer() && lastslice_on();
	if (hunt_run(&t, &ho, &r, &err) < 0) {
		cmd_error("hunt", "%s: %s", path, err.buf);
		ret = EXIT_ENV;
		goto out;
	}
	if (!c->quiet) {
		/* without blocks: why (capture --tensors could not read the
		 * allocator), or how to get them */
		struct strbuf nob = STRBUF_INIT;
		if (!r.has_blocks) {
			const char *off = trace_tensors_off_note(&t);
			sb_addf(&nob, " (no allocator blocks: %s)", off ? off : "capture --tensors for those");
		}
		fprintf(stderr, "hunt: %s%s: %zu launch(es); %zu tensor(s) in %zu segment(s) guarded at their "
			"block ends%s; %zu replay(s), %.2f s\n", tag, path, r.st.launches, r.st.blocks, r.st.segments,
			nob.len ? nob.buf : "", r.replays, r.seconds);
		sb_release(&nob);
	}
	if (r.note[0])
		fprintf(stderr, "gpureduce hunt: note: %s%s: %s\n", tag, path, r.note);
	for (size_t k = 0; k < r.n; k++) {
		if (!c->no_diag && diagnose_find_sanitizer())
			diagnose_finding(&t, &r, k, workdir);
		sb_reset(&line);
		sb_reset(&test);
		hunt_describe(&t, &r.f[k], &line);
		hunt_describe_kin(&t, &r, k, c->findings + 1, &line);
		hunt_test_of(&t, r.f[k].seq, &test);
		/* one line a finding: [pid P] [test T:] what faulted */
		printf("finding %zu: %s%s%s%s%s\n", c->findings + k + 1, tag, test.len ? "test " : "",
		       test.len ? test.buf : "", test.len ? ": " : "", line.buf);
		if (k == 0) {
			sb_adds(&what, line.buf);
			if (test.len)
				sb_addf(&what, " (test %s)", test.buf);
		}
	}
	/* the notes: faults of replay's own, then those the integer check
	 * explained, then legal reads within a block (--tensor-ends) */
	for (size_t k = 0; k < r.nartifacts; k++) {
		sb_reset(&line);
		hunt_describe_artifact(&t, &r.artifacts[k], &line);
		print_note(&t, r.artifacts[k].seq, tag, &line);
	}
	for (size_t k = 0; k < r.nints; k++) {
		sb_reset(&line);
		hunt_describe_intword(&t, &r.ints[k], &line);
		print_note(&t, r.ints[k].f.seq, tag, &line);
	}
	for (size_t k = 0; k < r.nnotes; k++) {
		sb_reset(&line);
		hunt_describe_note(&t, &r.notes[k], &line);
		print_note(&t, r.notes[k].seq, tag, &line);
	}
	if (r.bounded)
		printf("hunt: %s%s: stopped at %d finding(s) (--max-findings): there may be more\n", tag, path,
		       ho.max_findings);
	if (!r.n && r.note[0]) {
		/* a pass that stopped before the trace's end checked nothing
		 * after: that is no verdict, and never "clean" */
		printf("hunt: %s%s: not hunted to its end (%s): no launch faulted before that, nothing after "
		       "it was checked\n", tag, path, r.note);
		ret = EXIT_INPUT;
		goto out;
	}
	if (!r.n) {
		size_t own = r.nartifacts + r.nints;
		if (own)
			printf("hunt: %s%s: clean (no launch faulted under %s guards but %zu that the notes put "
			       "down to replay)\n", tag, path, ho.start_pass ? "end or start" : "end", own);
		else
			printf("hunt: %s%s: clean (no launch faulted under %s guards)\n", tag, path,
			       ho.start_pass ? "end or start" : "end");
		ret = EXIT_OK;
		goto out;
	}
	c->findings += r.n;
	ret = EXIT_FAULT;
	if (!c->no_shrink && !c->shrunk) {
		int s;
		c->shrunk = 1;
		sb_reset(&err);
		s = shrink_finding(c, &t, path, &r, 0, what.buf, workdir, &err);
		if (s != EXIT_OK)
			cmd_error("hunt", "the repro of finding 1 was not written: %s", err.buf);
		if (s == EXIT_ENV || s == EXIT_INTERNAL || s == EXIT_USAGE)
			ret = s;
	}
out:
	if (have_dir && !c->keep_work)
		remove_tree(workdir);
	if (have_t)
		trace_release(&t);
	hunt_result_release(&r);
	sb_release(&err);
	sb_release(&line);
	sb_release(&what);
	sb_release(&test);
	return ret;
}

/* `-- CMD`: capture it with --tensors into DIR/trace.bin (env_add: more
 * for its environment; out: its output, else it passes through).  The
 * exit code of capture (the program's own, passed on), or -1 when it did
 * not run. */
static int capture_cmd(const char *dir, char **cmd, int ncmd, const char *const *env_add, struct strbuf *out,
		       char **trace)
{
	struct strbuf err = STRBUF_INIT;
	char **argv = xcalloc((size_t)ncmd + 7, sizeof(*argv));
	int n = 0, rc;
	*trace = xmalloc(strlen(dir) + 16);
	sprintf(*trace, "%s/trace.bin", dir);
	argv[n++] = (char *)gpureduce_exe();
	argv[n++] = "capture";
	argv[n++] = "--tensors";
	argv[n++] = "-o";
	argv[n++] = *trace;
	argv[n++] = "--";
	for (int i = 0; i < ncmd; i++)
		argv[n++] = cmd[i];
	rc = child_run(argv, env_add, out ? CHILD_MERGE_ERR : 0, out, 0, &err);
	if (rc < 0)
		cmd_error("hunt", "could not run capture: %s", err.buf);
	free(argv);
	sb_release(&err);
	return rc;
}

/* --time-tests: the output of a run, printed now and kept as DIR/NAME. */
static void keep_run_output(const char *dir, const char *name, const struct strbuf *out)
{
	struct strbuf path = STRBUF_INIT, err = STRBUF_INIT;
	fwrite(out->buf, 1, out->len, stdout);
	fflush(stdout);
	sb_addf(&path, "%s/%s", dir, name);
	if (write_file(path.buf, out->buf, out->len, &err) < 0)
		fprintf(stderr, "gpureduce hunt: note: %s\n", err.buf);
	sb_release(&path);
	sb_release(&err);
}

/* --time-tests: the suite run plainly (its output into *out); its seconds. */
static double plain_run(char **cmd, const char *const *env_add, struct strbuf *out, int *rc)
{
	struct strbuf err = STRBUF_INIT;
	double t0 = now_sec();
	*rc = child_run(cmd, env_add, CHILD_MERGE_ERR, out, 0, &err);
	if (*rc < 0)
		cmd_error("hunt", "could not run the command plainly: %s", err.buf);
	sb_release(&err);
	return now_sec() - t0;
}

/* --time-tests: the table, 20 rows here and all of them in DIR/test-times.txt. */
static void report_times(const char *dir, const struct strbuf *plain, const struct strbuf *cap, double tplain,
			 double tcap)
{
	struct test_times tt = { 0 };
	struct strbuf path = STRBUF_INIT;
	size_t np = tt_parse(&tt, plain->buf, TT_PLAIN), nh = tt_parse(&tt, cap->buf, TT_HUNT);
	FILE *f;

	printf("hunt: the command ran %.2f s plainly and %.2f s under capture (%.2fx)\n", tplain, tcap,
	       tplain > 0 ? tcap / tplain : 0.0);
	if (!np && !nh) {
		printf("hunt: --time-tests: neither run printed pytest's durations (is the command pytest?)\n");
		goto out;
	}
	tt_print(stdout, &tt, 20);
	sb_addf(&path, "%s/test-times.txt", dir);
	if ((f = fopen(path.buf, "w"))) {
		tt_print(f, &tt, 0);
		fclose(f);
		printf("hunt: every test's seconds: %s\n", path.buf);
	}
out:
	tt_release(&tt);
	sb_release(&path);
}

/* Combine per-trace exit codes: the worst wins (env/internal over findings). */
static int worst(int a, int b)
{
	int rank[] = { 0, 2, 9, 6, 7, 8 };   /* OK, FAULT, USAGE, INPUT, ENV, INTERNAL */
	return (b >= 0 && b <= 5 && (a < 0 || a > 5 || rank[b] > rank[a])) ? b : a;
}

int cmd_hunt(int argc, char **argv)
{
	struct hunt_cli c;
	struct opts op;
	struct strbuf err = STRBUF_INIT;
	const char **paths = xcalloc((size_t)argc + 1, sizeof(*paths));
	char **traces = NULL, *main_trace = NULL;
	size_t npaths = 0, ntraces = 0;
	int cmd_at = -1, ret = EXIT_OK;
	double t0 = now_sec(), tcap = 0;

	memset(&c, 0, sizeof(c));
	c.out_dir = "hunt-repro";
	c.ho.max_findings = 8;
	c.ho.timeout = 120;
	c.ho.start_pass = 1;
	c.ho.layout_check = 1;
	c.so.jobs = 2;
	c.so.time_limit = 600;
	c.so.cand_timeout = 30;
	c.so.progress_tty = isatty(2);
	opts_init(&op, argc, argv, &err);
	while (opts_next(&op)) {
		const char *a = op.arg;
		if (is_help(a)) {
			fputs(usage_str, stdout);
			free(paths);
			return EXIT_OK;
		} else if (opts_end(&op)) {
			cmd_at = op.next;
			break;
		} else if (opts_str(&op, "-o", &c.out_dir)) {
		} else if (opts_int(&op, "--max-findings", &c.ho.max_findings, 1, 1000)) {
		} else if (opts_int(&op, "-j|--jobs", &c.so.jobs, 1, 64)) {
		} else if (opts_double(&op, "--time-limit", &c.so.time_limit, 0, 1e9)) {
		} else if (opts_double(&op, "--candidate-timeout", &c.so.cand_timeout, 0.01, 1e9)) {
			c.ho.timeout = c.so.cand_timeout > 60 ? c.so.cand_timeout : 60;
		} else if (opts_flag(&op, "--every-launch")) {
			c.ho.every_launch = 1;
		} else if (opts_flag(&op, "--tensor-ends")) {
			c.ho.tensor_ends = 1;
		} else if (opts_flag(&op, "--no-layout-check")) {
			c.ho.layout_check = 0;
		} else if (opts_flag(&op, "--no-start")) {
			c.ho.start_pass = 0;
		} else if (opts_flag(&op, "--no-shrink")) {
			c.no_shrink = 1;
		} else if (opts_flag(&op, "--no-diagnose")) {
			c.no_diag = 1;
			c.so.no_site_check = 1;
		} else if (opts_flag(&op, "--time-tests")) {
			c.time_tests = 1;
		} else if (opts_flag(&op, "--keep-work")) {
			c.keep_work = 1;
			c.ho.keep = 1;
		} else if (opts_flag(&op, "-q|--quiet")) {
			c.quiet = 1;
			c.so.quiet = 1;
		} else if (opts_unknown(&op)) {
		} else {
			paths[npaths++] = a;
		}
	}
	if (op.failed) {
		cmd_error("hunt", "%s; see 'gpureduce hunt --help'", err.buf);
		ret = EXIT_USAGE;
		goto out;
	}
	if ((cmd_at < 0 && !npaths) || (cmd_at >= 0 && (npaths || cmd_at >= argc))) {
		cmd_error("hunt", "%s", cmd_at >= 0 && npaths ? "give TRACE... or -- CMD, not both" :
			  "nothing to hunt: give TRACE... or -- CMD ARGS...");
		fputs(usage_str, stderr);
		ret = EXIT_USAGE;
		goto out;
	}
	if (!*c.out_dir) {
		cmd_error("hunt", "-o needs a folder name");
		ret = EXIT_USAGE;
		goto out;
	}
	if (c.time_tests && cmd_at < 0) {
		cmd_error("hunt", "--time-tests times the command after --: give -- pytest ...");
		ret = EXIT_USAGE;
		goto out;
	}
	if (cmd_at >= 0) {
		int rc, prc = 0;
		time_t since;
		struct strbuf addopts = STRBUF_INIT, pout = STRBUF_INIT, cout = STRBUF_INIT;
		const char *env_add[2] = { NULL, NULL };
		double tplain = 0;
		if (mkdir(c.out_dir, 0777) < 0 && errno != EEXIST) {
			cmd_error("hunt", "%s: cannot create the output folder: %s", c.out_dir, strerror(errno));
			ret = EXIT_INPUT;
			goto out;
		}
		if (c.time_tests) {
			tt_addopts(&addopts);
			env_add[0] = addopts.buf;
			tplain = plain_run(argv + cmd_at, env_add, &pout, &prc);
			keep_run_output(c.out_dir, "plain-run.log", &pout);
			printf("hunt: the plain run took %.2f s (exit %d); now under capture\n", tplain, prc);
			fflush(stdout);
			t0 = now_sec();
		}
		since = time(NULL) - 1;
		rc = capture_cmd(c.out_dir, argv + cmd_at, argc - cmd_at, env_add, c.time_tests ? &cout : NULL,
				 &main_trace);
		tcap = now_sec() - t0;
		if (c.time_tests) {
			keep_run_output(c.out_dir, "capture-run.log", &cout);
			report_times(c.out_dir, &pout, &cout, tplain, tcap);
		}
		sb_release(&addopts);
		sb_release(&pout);
		sb_release(&cout);
		capture_traces(main_trace, since, &traces, &ntraces);
		if (!ntraces) {
			if (rc == 126 || rc == 127)   /* capture said why: the command did not run */
				cmd_error("hunt", "nothing to hunt: the command did not run (capture exit %d)", rc);
			else
				cmd_error("hunt", "capture wrote no trace (%s; exit %d): did the program use CUDA?",
					  main_trace, rc);
			ret = EXIT_ENV;
			goto out;
		}
		if (rc != 0)
			fprintf(stderr, "gpureduce hunt: note: the program exited %d under capture; hunting its "
				"%zu trace(s) all the same\n", rc, ntraces);
		for (size_t i = 0; i < ntraces; i++)
			ret = worst(ret, hunt_one(&c, traces[i], ntraces > 1));
		printf("hunt: %zu process(es), %zu finding(s); the program ran %.2f s under capture, the hunt "
		       "took %.2f s\n", ntraces, c.findings, tcap, now_sec() - t0 - tcap);
	} else {
		for (size_t i = 0; i < npaths; i++)
			ret = worst(ret, hunt_one(&c, paths[i], npaths > 1));
	}
out:
	for (size_t i = 0; i < ntraces; i++)
		free(traces[i]);
	free(traces);
	free(main_trace);
	free(paths);
	sb_release(&err);
	return ret;
}
