/*
 * cmd-shrink.c - `gpureduce shrink`: reduce a trace and emit repro.cu,
 * repro.bin (the reduced trace) and repro.yaml (what was done).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/interrupt.h"
#include "../common/opts.h"
#include "../common/strbuf.h"
#include "../common/util.h"
#include "../diagnose/diagnose.h"
#include "../emit/emit.h"
#include "../addr/params.h"
#include "../reducer/report_yaml.h"
#include "../reducer/rootcause.h"
#include "../reducer/shrink.h"
#include "../addr/place.h"
#include "../trace/trace.h"
#include "cmds.h"
#include "repro/report.h"
#include "outputs/outpaths.h"
#include "repro/repro.h"
#include "shrink-root.h"
#include "outputs/shrink-out.h"
#include "outputs/safe-out.h"

#define ES(n) ((n) == 1 ? "" : "es")   /* "1 launch", "2 launches" */
#define S(n) ((n) == 1 ? "" : "s")

static const char usage_str[] =
	"usage: gpureduce shrink [-o repro.cu] [-j N] [--time-limit=S] [--candidate-timeout=S]\n"
	"                        [--guard=layout|end|start|none] [--strategy=full|baseline]\n"
	"                        [--signature=kernel|code|site] [--keep-going[=S]] [--cut-buffers] [--log=FILE]\n"
	"                        [--runs=N] [--confirm=N] [--no-diagnose] [--keep-work] [--quiet] [--force] [--redact]\n"
	"                        [--phases=A,B] [--skip-phases=A,B]\n"
	"                        [--root-cause] TRACE\n\n"
	"Replays TRACE in worker processes and reduces it to the smallest replay that\n"
	"still faults with the same error in the same kernel, then writes repro.cu\n"
	"(standalone, `nvcc -o repro repro.cu -lcuda`), repro.bin (the reduced trace,\n"
	"replayable) and repro.yaml (signature, rates, phases) next to it.\n"
	"Phases: confirm, slice (or suffix + ddmin over launches), data, grid, scalars,\n"
	"[sizes,] verify.  Where compute-sanitizer is found, the result must fail at\n"
	"the slice's site, else shrink backs off to the latest phase state that does;\n"
	"a flaky fault whose rate falls below 70 % of the original's (by more than\n"
	"chance, for a race) backs off the same way to the latest state whose rate\n"
	"holds; a race's repro.cu tries up to 20 times a run (REPRO_TRIES=N).\n"
	"--time-limit keeps the best so far and says so (repro.yaml: stopped); so do ^C\n"
	"and SIGTERM, unconfirmed (stopped: interrupted; exit 130/143).  No output may\n"
	"overwrite TRACE; -o DIR: DIR/repro.cu.\n"
	"  -j N                 parallel replay workers (default: half the CPUs, 2 to 8), spread\n"
	"                       over every GPU the driver reports (GPUREDUCE_DEVICES=N: the first N)\n"
	"  --time-limit=S       stop reducing after S seconds (more than 0), keep the best so far\n"
	"                       (default 900)\n"
	"  --candidate-timeout  seconds before a hung candidate's worker is killed (default 30)\n"
	"  --signature=kernel   same error (700/717 alike), same kernel: the default, with the\n"
	"                       sanitizer site checked at the end\n"
	"  --signature=code     accept the same error in any kernel\n"
	"  --signature=site     also run every accepted candidate under compute-sanitizer: it\n"
	"                       must fail at the original's site (exact, several times slower)\n"
	"  -k, --keep-going[=S] when workers cannot start (a crashed driver, a GPU reset), keep\n"
	"                       trying for S seconds (default 120), then end the phase and go on\n"
	"                       with fresh workers and the best so far (default: stop at once)\n"
	"  --cut-buffers        also cut buffer sizes; under compute-sanitizer each cut must fail\n"
	"                       at the slice's site and add no new kind of error (slow)\n"
	"  --log=FILE           one line per replay job and sanitizer run, with timings\n"
	"  --phases=A,B         run only these reduction phases, in their own order: slice, suffix,\n"
	"                       ddmin-launches, data, grid, scalars, sizes (named: runs without\n"
	"                       --cut-buffers); confirm, verify and repro.cu always run\n"
	"  --skip-phases=A,B    run every phase but these (docs/SHRINK-PHASES.md)\n"
	"  --runs=N             replays of the original to measure its fault rate (default 2; more when\n"
	"                       they disagree; at least 1)\n"
	"  --confirm=N          runs of the reduced trace before it is emitted (default 5; flaky 10;\n"
	"                       at least 1), and of the built repro.cu (default 5)\n"
	"  --root-cause         also find the first out-of-bounds access inside an allocator segment\n"
	"                       (a trace from `capture --tensors`): every tensor gets its own guard;\n"
	"                       writes repro-root.cu/.bin/.yaml, labelled root cause, beside repro.cu\n"
	"  --redact             replace path names in repro.cu by <pathN>/name (the data phase already\n"
	"                       keeps only the bytes the fault needs); `gpureduce report` says which\n"
	"  --strategy=baseline  one fresh process per candidate, plain ddmin over launches, then\n"
	"                       the same data, grid and scalar phases (the benchmark baseline)\n"
	"  --guard=MODE         replay placement: layout (buffers at their captured offsets from\n"
	"                       each other), end (each buffer ends at an unmapped page: overruns\n"
	"                       fault at once), start (underruns), none (plain cuMemAlloc);\n"
	"                       default: layout, then end when layout runs clean\n"
	"  --no-diagnose        skip compute-sanitizer: no site check, no diagnosis in repro.cu\n"
	"  --keep-work          keep the work folder (REPRO.bin.work-*: candidates, logs) for a look\n"
	"  -q, --quiet          no phase table and no progress line, only the result line\n"
	"  --force              replace the repro at -o even when it is confirmed and this result\n"
	"                       is not, or when it was edited or not written by shrink\n"
	"Outputs: one shrink at a time per folder (a second is refused).  A confirmed repro is\n"
	"never replaced by a worse result, nor an edited one at all: the new files go beside\n"
	"it (repro-2.cu, ...) and shrink says so.\n"
	"The emitted repro.cu is itself built (nvcc, or $GPUREDUCE_NVCC) and run as often as\n"
	"the reduced trace; its count is the figure reported.  If it does not fault, the other\n"
	"placements and earlier states are tried; failing those, shrink says so and exits 1.\n"
	"Exit: 0 repro written; 1 the trace holds no fault, or it did not reproduce (nothing\n"
	"      written), or the emitted repro.cu does not reproduce it (written, for inspection);\n"
	"      2 usage, or an output would overwrite TRACE; 3 bad or incomplete trace,\n"
	"      or an output folder missing or not writable; 4 no GPU/driver (or a write failed);\n"
	"      129/130/143 interrupted by SIGHUP/SIGINT/SIGTERM (the best state so far was kept, if any).\n";


/* -j's default: half the CPUs (a worker is mostly waiting on the GPU, but
 * a faulting candidate's replacement needs a CPU to start), 2 to 8. */
static int default_jobs(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN) / 2;
	return n < 2 ? 2 : n > 8 ? 8 : (int)n;
}


static int is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Before any work: no output may be the input trace (2), and every
 * output's folder must exist (made here for the repro) and be writable
 * (3).  0 when all is well. */
static int check_outputs(const char *input, const char *cu, const char *bin, const char *yml,
			 const char *log, struct strbuf *err)
{
	const char *path[] = { cu, bin, yml, log };
	const char *what[] = { "the repro (-o)", "the reduced trace", "the report", "the log (--log)" };
	int n = log ? 4 : 3, ret;

	for (int i = 0; i < n; i++)
		if (outpath_is(path[i], input))
			return outpath_check(path[i], what[i], input, err);
	for (int i = 0; i < 3; i++)
		if (log && !strcmp(log, path[i])) {
			sb_addf(err, "--log=%s is also where %s goes: pick another name", log, what[i]);
			return EXIT_USAGE;
		}
	/* the log's folder is not made: check it before the repro's is */
	if (log && (ret = outpath_check(log, what[3], input, err)) != 0)
		return ret;
	if (outpath_make_dir(cu, err) < 0)
		return EXIT_INPUT;
	for (int i = 0; i < n; i++)
		if ((ret = outpath_check(path[i], what[i], input, err)) != 0)
			return ret;
	return 0;
}

int cmd_shrink(int argc, char **argv)
{
	struct shrink_opts o;
	struct opts op;
	struct shrink_report rep;
	struct strbuf err = STRBUF_INIT, src = STRBUF_INIT, cmdline = STRBUF_INIT, diag = STRBUF_INIT;
	struct trace t, red;
	const char *path = NULL, *out = "repro.cu";
	char *bin = NULL, *yml = NULL, *out_owned = NULL, workdir[4096];
	int keep_work = 0, no_diag = 0, have_t = 0, have_red = 0, root_cause = 0, force = 0, lock = -1, redact = 0;
	struct strbuf s_cu = STRBUF_INIT, s_bin = STRBUF_INIT, s_yml = STRBUF_INIT;   /* staged */
	struct strbuf d_cu = STRBUF_INIT, d_why = STRBUF_INIT;   /* where they go (shrink-out.h) */
	char *d_bin = NULL, *d_yml = NULL;
	int rc_shrink;
	int ret = EXIT_INTERNAL;

	memset(&o, 0, sizeof(o));
	memset(&rep, 0, sizeof(rep));
	o.jobs = default_jobs();
	o.time_limit = 900;
	o.cand_timeout = 30;
	o.guard = -1;
	o.progress_tty = isatty(2);
	/* usage errors return here, before anything needs releasing */
	opts_init(&op, argc, argv, &err);
	while (opts_next(&op)) {
		const char *a = op.arg, *v = NULL;
		int skip = 0;
		if (is_help(a)) {
			fputs(usage_str, stdout);
			return EXIT_OK;
		} else if (opts_str(&op, "-o", &out)) {
		} else if (opts_int(&op, "-j|--jobs", &o.jobs, 1, 64)) {
		} else if (opts_double(&op, "--time-limit", &o.time_limit, 0.001, 1e9)) {
		} else if (opts_double(&op, "--candidate-timeout", &o.cand_timeout, 0.01, 1e9)) {
		} else if (opts_str(&op, "--signature", &v)) {
			if (v && !strcmp(v, "code"))
				o.sig_code_only = 1;
			else if (v && !strcmp(v, "kernel"))
				o.sig_code_only = 0;
			else if (v && !strcmp(v, "site"))
				o.sig_site = 1;
			else if (v)
				opts_fail(&op, "--signature takes code, kernel or site");
		} else if (opts_opt_double(&op, "-k|--keep-going", &o.keep_going, &o.keep_wait, 120, 0, 1e9)) {
		} else if (opts_flag(&op, "--cut-buffers")) {
			o.cut_buffers = 1;
		} else if (opts_str(&op, "--phases", &v) || (skip = 1, opts_str(&op, "--skip-phases", &v))) {
			/* the phase table (reducer/shrink-phases.h) names them */
			struct strbuf perr = STRBUF_INIT;
			if (v && phase_select(v, skip, o.phase_sel, &perr) < 0)
				opts_fail(&op, "%s", perr.buf);
			sb_release(&perr);
		} else if (opts_str(&op, "--log", &o.log_path)) {
		} else if (opts_int(&op, "--runs", &o.orig_runs, 1, 10000)) {
		} else if (opts_int(&op, "--confirm", &o.confirm_runs, 1, 10000)) {
		} else if (opts_str(&op, "--guard", &v)) {
			if (v && (o.guard = place_parse_guard(v)) < 0)
				opts_fail(&op, "--guard takes end, start, none or layout");
		} else if (opts_str(&op, "--strategy", &v)) {
			if (v && !strcmp(v, "baseline"))
				o.strategy = STRATEGY_BASELINE;
			else if (v && !strcmp(v, "full"))
				o.strategy = STRATEGY_FULL;
			else if (v)
				opts_fail(&op, "--strategy takes full or baseline");
		} else if (opts_flag(&op, "-q|--quiet")) {
			o.quiet = 1;
		} else if (opts_flag(&op, "--root-cause")) {
			root_cause = 1;
		} else if (opts_flag(&op, "--keep-work")) {
			keep_work = 1;
		} else if (opts_flag(&op, "--force")) {
			force = 1;
		} else if (opts_flag(&op, "--redact")) {
			redact = 1;   /* issue 24: path names out of repro.cu (src/repro/report.c) */
		} else if (opts_flag(&op, "--no-diagnose")) {
			no_diag = 1;
			o.no_site_check = 1;
		} else if (opts_unknown(&op)) {
		} else if (!path) {
			path = a;
		} else {
			opts_fail(&op, "one trace at a time");
		}
	}
	if (op.failed) {
		cmd_error("shrink", "%s; see 'gpureduce shrink --help'", err.buf);
		sb_release(&err);
		return EXIT_USAGE;
	}
	if (!path) {
		fputs(usage_str, stderr);
		return EXIT_USAGE;
	}
	if (!*out) {
		cmd_error("shrink", "-o needs a file name");
		return EXIT_USAGE;
	}
	/* -o DIR: DIR/repro.cu */
	if (is_dir(out) || out[strlen(out) - 1] == '/') {
		out_owned = xmalloc(strlen(out) + 10);
		sprintf(out_owned, "%s%srepro.cu", out, out[strlen(out) - 1] == '/' ? "" : "/");
		out = out_owned;
	}
	bin = repro_sibling(out, ".bin");
	yml = repro_sibling(out, ".yaml");
	for (int i = 0; i < argc; i++)
		sb_addf(&cmdline, "%s%s", i ? " " : "gpureduce ", argv[i]);
	if (safe_trace_open(&t, path, 0, &err) < 0) {
		cmd_error("shrink", "%s", err.buf);
		ret = EXIT_INPUT;
		goto out;
	}
	have_t = 1;
	if (t.truncated)
		fprintf(stderr, "gpureduce shrink: warning: %s\n", t.truncated_msg);
	if (t.cut_in_fault) {
		/* the same words as replay's: the program faulted, the record is cut */
		cmd_error("shrink", "%s: %s; shrink needs it whole (`gpureduce replay %s` shows the fault); "
			  "capture the program again", path, TRACE_CUT_FAULT_MSG, path);
		ret = EXIT_INPUT;
		goto out;
	}
	if (!trace_complete(&t)) {
		/* no FAULT record, but not a clean run either: nothing to shrink,
		 * and the program is not to blame */
		cmd_error("shrink", "%s: %s; there is no fault to shrink (capture the program again)",
			  path, TRACE_INCOMPLETE_MSG);
		ret = EXIT_INPUT;
		goto out;
	}
	if (root_cause && !rc_has_blocks(&t)) {
		/* before any work, not after the crash repro was written */
		cmd_error("shrink", "%s holds no allocator blocks: --root-cause needs a trace from "
			  "`gpureduce capture --tensors` (nothing was done; without --root-cause shrink "
			  "writes the crash-site repro)", path);
		ret = EXIT_USAGE;
		goto out;
	}
	/* before any work: no output over the input, every folder writable */
	ret = check_outputs(path, out, bin, yml, o.log_path, &err);
	if (ret) {
		cmd_error("shrink", "%s", err.buf);
		goto out;
	}
	/* one shrink at a time into a folder; what a dead one left is removed */
	if (shrink_out_lock(out, &lock, &err) < 0) {
		cmd_error("shrink", "%s", err.buf);
		ret = EXIT_INPUT;
		goto out;
	}
	shrink_out_sweep(bin);
	ret = EXIT_INTERNAL;

	snprintf(workdir, sizeof(workdir), "%s.work-XXXXXX", bin);
	if (!mkdtemp(workdir)) {
		cmd_error("shrink", "cannot create a work directory next to %s: %s", out, strerror(errno));
		ret = EXIT_ENV;
		goto out;
	}
	o.workdir = workdir;
	o.keep_work = keep_work;
	shrink_out_mark(workdir);
	/* the three files are made in the work folder and moved into place at the end */
	sb_addf(&s_cu, "%s/repro.cu", workdir);
	sb_addf(&s_bin, "%s/repro.bin", workdir);
	sb_addf(&s_yml, "%s/repro.yaml", workdir);
	/* the emitted program is what gets checked: built and run (repro-check.c) */
	/* as many at a time as there are workers: contexts are created one
	 * after another on a real GPU, but each run's start-up, module load,
	 * fault and exit (the driver's teardown, ~0.3 s) overlap the others' */
	struct repro_check rcheck = { &t, &rep, path, workdir, o.jobs, o.sig_code_only, 0, NULL };
	o.check_repro = repro_check_trace;
	o.check_arg = &rcheck;
	o.prebuild_repro = repro_prebuild;

	/* ^C / SIGTERM: stop the workers and sanitizer runs, keep the best
	 * state so far (interrupt.h) */
	interrupt_install();
	rc_shrink = shrink_run(&t, &o, s_bin.buf, &rep, &err);
	repro_prebuild_finish(&rcheck);   /* its thread is done before the work directory goes */
	if (rc_shrink < 0) {
		if (!o.quiet)
			shrink_print_report(stderr, &rep);
		if (interrupt_signal()) {
			cmd_error("shrink", "interrupted (%s) before a reduced trace that faults was found; "
				  "nothing was written%s", interrupt_name(interrupt_signal()),
				  keep_work ? "" : ", work files removed");
			ret = 128 + interrupt_signal();
			goto out;
		}
		cmd_error("shrink", "%s", err.buf);
		if (rep.kept_faulted)
			keep_work = 1;   /* the state the message names is in there */
		/* 4: no GPU/driver/workers, or a trace could not be written (a
		 * full disk); 1: the trace has no fault, or it does not reproduce
		 * (nothing was emitted) */
		ret = rep.infra_failed || rep.write_failed ? EXIT_ENV : EXIT_FAULT;
		goto out;
	}
	if (trace_open(&red, s_bin.buf, TRACE_OPEN_STRICT, &err) < 0) {
		cmd_error("shrink", "%s", err.buf);
		goto out;
	}
	have_red = 1;
	if (rep.interrupted) {
		/* no diagnosis run: the user asked us to stop */
		sb_addf(&diag, "none: shrink was interrupted (%s); this is the best state so far, "
			"not confirmed (check it with gpureduce verify)", interrupt_name(rep.interrupted));
	} else if (!no_diag && rep.final_sanitizer && diagnose_explain(rep.final_sanitizer, &red, &diag) == 0) {
		/* the site check already ran the final trace under compute-sanitizer */
	} else if (!no_diag && diagnose_trace(&red, s_bin.buf, rep.guard, &diag, &err) < 0) {
		/* diagnosis is a bonus: say why it is missing, keep going */
		sb_reset(&diag);
		sb_addf(&diag, "no diagnosis: %s", err.buf);
		sb_reset(&err);
	}
	{
		struct emit_info info = { &t, &rep, diag.len ? diag.buf : NULL, path, rep.repro_guard };
		struct report_files rf;
		const char *outcome = rep.interrupted ? SHRINK_UNCONFIRMED :
				      rep.repro_checked && !rep.repro_ok ? SHRINK_NOT_REPRODUCED : SHRINK_CONFIRMED;
		char hash[17];
		if (emit_repro(&red, &info, &src, &err) < 0) {
			cmd_error("shrink", "%s", err.buf);
			goto out;
		}
		/* a confirmed or edited repro there is not replaced by this one */
		shrink_out_pick(out, outcome, force, &d_cu, &d_why);
		d_bin = repro_sibling(d_cu.buf, ".bin");
		d_yml = repro_sibling(d_cu.buf, ".yaml");
		if (redact) {
			struct strbuf r = STRBUF_INIT;
			report_redact_paths(src.buf, &r);
			sb_reset(&src);
			sb_add(&src, r.buf, r.len);
			sb_release(&r);
		}
		if (write_file(s_cu.buf, src.buf, src.len, &err) < 0) {
			cmd_error("shrink", "%s", err.buf);
			ret = EXIT_ENV;   /* checked writable at the start: a full disk? */
			goto out;
		}
		memset(&rf, 0, sizeof(rf));
		rf.trace = path;
		rf.repro_cu = d_cu.buf;
		rf.repro_bin = d_bin;
		rf.outcome = outcome;
		shrink_out_hash(src.buf, src.len, hash);
		rf.repro_cu_hash = hash;
		rf.command = cmdline.buf;
		rf.diagnosis = diag.len ? diag.buf : NULL;
		rf.repro_cu_bytes = (unsigned long)src.len;
		if (report_yaml_write(s_yml.buf, &rep, &t, &rf, &err) < 0) {
			cmd_error("shrink", "%s", err.buf);
			ret = EXIT_ENV;
			goto out;
		}
		const char *const from[3] = { s_cu.buf, s_bin.buf, s_yml.buf };
		const char *const to[3] = { d_cu.buf, d_bin, d_yml };
		if (shrink_out_move(from, to, &err) < 0) {
			cmd_error("shrink", "%s", err.buf);
			keep_work = 1;   /* the result is in there */
			ret = EXIT_ENV;
			goto out;
		}
		if (d_why.len)
			fprintf(stderr, "gpureduce shrink: kept %s as it was (%s); this result is in %s, %s and %s\n",
				out, d_why.buf, d_cu.buf, d_bin, d_yml);
		out = d_cu.buf;
		free(bin);
		free(yml);
		bin = d_bin;
		yml = d_yml;
		d_bin = d_yml = NULL;
	}
	if (rep.interrupted) {
		if (!o.quiet)
			shrink_print_report(stderr, &rep);
		cmd_error("shrink", "interrupted (%s): kept the best state so far (%zu launch%s -> %zu launch%s, "
			  "%zu buffer%s; not confirmed) in %s, %s and %s%s", interrupt_name(rep.interrupted),
			  rep.orig_launches, ES(rep.orig_launches), rep.final_launches, ES(rep.final_launches),
			  rep.final_buffers, S(rep.final_buffers), out, bin, yml,
			  keep_work ? "" : "; work files removed");
		ret = 128 + rep.interrupted;
		goto out;
	}
	if (!o.quiet)
		shrink_print_report(stderr, &rep);
	if (diag.len && !o.quiet)
		fprintf(stderr, "diagnosis: %s\n", diag.buf);
	{
		/* the figure is the emitted program's own count when it was built */
		char fig[160];
		if (rep.repro_checked && !rep.repro_runs)
			snprintf(fig, sizeof(fig), "repro.cu does not build (replay %d/%d)",
				 rep.final_faults, rep.final_runs);
		else if (rep.repro_checked)
			snprintf(fig, sizeof(fig), "repro.cu faulted %d/%d (%s placement; replay %d/%d)",
				 rep.repro_faults, rep.repro_runs, place_guard_name(rep.repro_guard),
				 rep.final_faults, rep.final_runs);
		else
			snprintf(fig, sizeof(fig), "reproduced %d/%d in replay (repro.cu not built)",
				 rep.final_faults, rep.final_runs);
		char *kname = params_demangle(rep.kernel);
		printf("shrink: %zu launch%s -> %zu launch%s, %zu buffer%s; %s in %s; %s; "
		       "%ld candidates in %.1f s%s -> %s (%zu bytes), %s, %s\n",
		       rep.orig_launches, ES(rep.orig_launches), rep.final_launches, ES(rep.final_launches),
		       rep.final_buffers, S(rep.final_buffers), rep.error, kname, fig,
		       rep.candidates, rep.seconds,
		       rep.time_limited ? " (stopped by the time limit: the best so far)" : "", out, src.len, bin, yml);
		free(kname);
	}
	if (rep.repro_checked && !rep.repro_ok) {
		cmd_error("shrink", "the emitted repro does NOT reproduce the fault: %s. The files are written "
			  "for inspection; `gpureduce replay %s` still faults", rep.repro_why, bin);
		ret = EXIT_FAULT;
		goto out;
	}
	if (!rep.repro_checked && rep.repro_why[0] && !o.quiet)
		fprintf(stderr, "gpureduce shrink: note: %s\n", rep.repro_why);
	ret = EXIT_OK;
	if (root_cause && !interrupt_signal()) {
		/* issue 17: the root-cause repro, beside the crash-site one (cmd-shrink-root.c) */
		struct strbuf line = STRBUF_INIT;
		sb_reset(&err);
		ret = shrink_root_cause(&t, path, &o, out, out, no_diag, &line, &err);
		if (line.len)
			printf("%s\n", line.buf);
		if (ret != EXIT_OK)
			cmd_error("shrink", "--root-cause: %s (the crash-site repro %s is written)", err.buf, out);
		sb_release(&line);
	}
	if (interrupt_signal()) {
		/* the signal came after the confirmation: the repro is whole, only
		 * its diagnosis was cut short */
		cmd_error("shrink", "interrupted (%s) during the diagnosis: the repro is confirmed; its "
			  "diagnosis is missing", interrupt_name(interrupt_signal()));
		ret = 128 + interrupt_signal();
	}
out:
	if (o.workdir && !keep_work)
		remove_tree(workdir);
	else if (o.workdir)
		shrink_out_done(workdir);   /* kept: not for the next run to sweep */
	if (lock >= 0)
		close(lock);
	sb_release(&s_cu);
	sb_release(&s_bin);
	sb_release(&s_yml);
	sb_release(&d_cu);
	sb_release(&d_why);
	free(d_bin);
	free(d_yml);
	if (have_t)
		trace_release(&t);
	if (have_red)
		trace_release(&red);
	free(rep.final_sanitizer);
	free(bin);
	free(yml);
	free(out_owned);
	sb_release(&err);
	sb_release(&src);
	sb_release(&cmdline);
	sb_release(&diag);
	return ret;
}
