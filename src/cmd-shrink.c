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

#include "../common/strbuf.h"
#include "../common/util.h"
#include "../reducer/diagnose.h"
#include "../reducer/emit.h"
#include "../reducer/report_yaml.h"
#include "../reducer/shrink.h"
#include "../replay/place.h"
#include "../trace/trace.h"
#include "cmds.h"
#include "repro.h"

static const char usage_str[] =
	"usage: gpureduce shrink [-o repro.cu] [-j N] [--time-limit=S] [--candidate-timeout=S]\n"
	"                        [--guard=layout|end|start|none] [--strategy=full|baseline]\n"
	"                        [--signature=kernel|code|site] [--keep-going[=S]] [--cut-buffers] [--log=FILE]\n"
	"                        [--runs=N] [--confirm=N] [--no-diagnose] [--keep-work] [--quiet] TRACE\n\n"
	"Replays TRACE in worker processes and reduces it to the smallest replay that\n"
	"still faults with the same error in the same kernel, then writes repro.cu\n"
	"(standalone, `nvcc -o repro repro.cu -lcuda`), repro.bin (the reduced trace,\n"
	"replayable) and repro.yaml (signature, rates, phases) next to it.\n"
	"Phases: confirm, slice (or suffix + ddmin over launches), data, grid, scalars,\n"
	"[sizes,] verify.  Where compute-sanitizer is found, the result must fail at\n"
	"the slice's site, else shrink backs off to the latest phase state that does;\n"
	"a flaky fault whose rate falls below 70 % of the original's backs off the same\n"
	"way to the latest state whose rate holds.  --time-limit keeps the best so far\n"
	"and says so (repro.yaml: stopped).\n"
	"  -j N                 parallel replay workers (default: half the CPUs, 2 to 8), spread\n"
	"                       over every GPU the driver reports (GPUREDUCE_DEVICES=N: the first N)\n"
	"  --time-limit=S       stop reducing after S seconds, keep the best so far (default 900)\n"
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
	"  --runs=N             replays of the original to measure its fault rate (default 2; more when\n"
	"                       they disagree)\n"
	"  --confirm=N          runs of the reduced trace before it is emitted (default 5; flaky 10)\n"
	"  --strategy=baseline  one fresh process per candidate, plain ddmin over launches, then\n"
	"                       the same data, grid and scalar phases (the benchmark baseline)\n"
	"The emitted repro.cu is itself built (nvcc, or $GPUREDUCE_NVCC) and run as often as\n"
	"the reduced trace; its count is the figure reported.  If it does not fault, the other\n"
	"placements and earlier states are tried; failing those, shrink says so and exits 1.\n"
	"Exit: 0 repro written; 1 the fault did not reproduce (nothing written), or the\n"
	"      emitted repro.cu does not reproduce it (written, for inspection);\n"
	"      3 bad trace; 4 no GPU/driver.\n";

static char *sibling(const char *cu, const char *ext)
{
	struct strbuf sb = STRBUF_INIT;
	size_t n = strlen(cu);
	if (n > 3 && !strcmp(cu + n - 3, ".cu"))
		n -= 3;
	sb_add(&sb, cu, n);
	sb_adds(&sb, ext);
	return sb_detach(&sb, NULL);
}

/* -j's default: half the CPUs (a worker is mostly waiting on the GPU, but
 * a faulting candidate's replacement needs a CPU to start), 2 to 8. */
static int default_jobs(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN) / 2;
	return n < 2 ? 2 : n > 8 ? 8 : (int)n;
}

int cmd_shrink(int argc, char **argv)
{
	struct shrink_opts o;
	struct shrink_report rep;
	struct strbuf err = STRBUF_INIT, src = STRBUF_INIT, cmdline = STRBUF_INIT, diag = STRBUF_INIT;
	struct trace t, red;
	const char *path = NULL, *out = "repro.cu";
	char *bin = NULL, *yml = NULL, workdir[4096];
	int keep_work = 0, no_diag = 0, have_t = 0, have_red = 0;
	int ret = EXIT_INTERNAL;

	memset(&o, 0, sizeof(o));
	memset(&rep, 0, sizeof(rep));
	o.jobs = default_jobs();
	o.time_limit = 900;
	o.cand_timeout = 30;
	o.guard = -1;
	o.progress_tty = isatty(2);
	/* usage errors return here, before anything needs releasing */
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (is_help(a)) {
			fputs(usage_str, stdout);
			return EXIT_OK;
		} else if (!strcmp(a, "-o") && i + 1 < argc) {
			out = argv[++i];
		} else if (!strcmp(a, "-j") && i + 1 < argc) {
			o.jobs = atoi(argv[++i]);
		} else if (!strncmp(a, "-j", 2) && a[2]) {
			o.jobs = atoi(a + 2);
		} else if (!strncmp(a, "--jobs=", 7)) {
			o.jobs = atoi(a + 7);
		} else if (!strncmp(a, "--time-limit=", 13)) {
			o.time_limit = atof(a + 13);
		} else if (!strncmp(a, "--candidate-timeout=", 20)) {
			o.cand_timeout = atof(a + 20);
		} else if (!strncmp(a, "--signature=", 12)) {
			if (!strcmp(a + 12, "code"))
				o.sig_code_only = 1;
			else if (!strcmp(a + 12, "kernel"))
				o.sig_code_only = 0;
			else if (!strcmp(a + 12, "site"))
				o.sig_site = 1;
			else {
				cmd_error("shrink", "--signature takes code, kernel or site");
				return EXIT_USAGE;
			}
		} else if (!strcmp(a, "--keep-going") || !strcmp(a, "-k")) {
			o.keep_going = 1;
			o.keep_wait = 120;
		} else if (!strncmp(a, "--keep-going=", 13)) {
			char *end;
			o.keep_going = 1;
			o.keep_wait = strtod(a + 13, &end);
			if (end == a + 13 || *end || o.keep_wait < 0) {
				cmd_error("shrink", "--keep-going=S takes the seconds to wait for workers (0 or more)");
				return EXIT_USAGE;
			}
		} else if (!strcmp(a, "--cut-buffers")) {
			o.cut_buffers = 1;
		} else if (!strncmp(a, "--log=", 6)) {
			o.log_path = a + 6;
		} else if (!strncmp(a, "--runs=", 7)) {
			o.orig_runs = atoi(a + 7);
		} else if (!strncmp(a, "--confirm=", 10)) {
			o.confirm_runs = atoi(a + 10);
		} else if (!strncmp(a, "--guard=", 8)) {
			o.guard = place_parse_guard(a + 8);
			if (o.guard < 0) {
				cmd_error("shrink", "unknown guard mode '%s' (layout, end, start or none)", a + 8);
				return EXIT_USAGE;
			}
		} else if (!strncmp(a, "--strategy=", 11)) {
			if (!strcmp(a + 11, "baseline"))
				o.strategy = STRATEGY_BASELINE;
			else if (!strcmp(a + 11, "full"))
				o.strategy = STRATEGY_FULL;
			else {
				cmd_error("shrink", "unknown strategy '%s' (full or baseline)", a + 11);
				return EXIT_USAGE;
			}
		} else if (!strcmp(a, "--quiet") || !strcmp(a, "-q")) {
			o.quiet = 1;
		} else if (!strcmp(a, "--keep-work")) {
			keep_work = 1;
		} else if (!strcmp(a, "--no-diagnose")) {
			no_diag = 1;
			o.no_site_check = 1;
		} else if (a[0] == '-' && a[1]) {
			cmd_error("shrink", "unknown option '%s'\n%s", a, usage_str);
			return EXIT_USAGE;
		} else if (!path) {
			path = a;
		} else {
			cmd_error("shrink", "one trace at a time");
			return EXIT_USAGE;
		}
	}
	if (!path) {
		fputs(usage_str, stderr);
		return EXIT_USAGE;
	}
	if (o.jobs < 1 || o.jobs > 64) {
		cmd_error("shrink", "-j takes 1 to 64 workers");
		return EXIT_USAGE;
	}
	for (int i = 0; i < argc; i++)
		sb_addf(&cmdline, "%s%s", i ? " " : "gpureduce ", argv[i]);
	if (trace_open(&t, path, 0, &err) < 0) {
		cmd_error("shrink", "%s", err.buf);
		ret = EXIT_INPUT;
		goto out;
	}
	have_t = 1;
	if (t.truncated)
		fprintf(stderr, "gpureduce shrink: warning: %s\n", t.truncated_msg);

	{
		/* create the output's folder if needed (mkdir -p) */
		char *dir = xstrdup(out), *slash = strrchr(dir, '/');
		if (slash && slash != dir) {
			*slash = 0;
			for (char *q = dir + 1; *q; q++)
				if (*q == '/') {
					*q = 0;
					mkdir(dir, 0755);
					*q = '/';
				}
			mkdir(dir, 0755);
		}
		free(dir);
	}
	bin = sibling(out, ".bin");
	yml = sibling(out, ".yaml");
	snprintf(workdir, sizeof(workdir), "%s.work-XXXXXX", bin);
	if (!mkdtemp(workdir)) {
		cmd_error("shrink", "cannot create a work directory next to %s: %s", out, strerror(errno));
		ret = EXIT_ENV;
		goto out;
	}
	o.workdir = workdir;
	/* the emitted program is what gets checked: built and run (repro-check.c) */
	/* two at a time, as the pool starts workers: contexts are created one
	 * after another on a real GPU */
	struct repro_check rcheck = { &t, &rep, path, workdir, o.jobs < 2 ? o.jobs : 2, o.sig_code_only, 0 };
	o.check_repro = repro_check_trace;
	o.check_arg = &rcheck;

	if (shrink_run(&t, &o, bin, &rep, &err) < 0) {
		if (!o.quiet)
			shrink_print_report(stderr, &rep);
		cmd_error("shrink", "%s", err.buf);
		/* 4: no GPU/driver/workers; 1: the trace has no fault, or it does
		 * not reproduce (nothing was emitted) */
		ret = rep.infra_failed ? EXIT_ENV : EXIT_FAULT;
		goto out;
	}
	if (trace_open(&red, bin, TRACE_OPEN_STRICT, &err) < 0) {
		cmd_error("shrink", "%s", err.buf);
		goto out;
	}
	have_red = 1;
	if (!no_diag && rep.final_sanitizer && diagnose_explain(rep.final_sanitizer, &red, &diag) == 0) {
		/* the site check already ran the final trace under compute-sanitizer */
	} else if (!no_diag && diagnose_trace(&red, bin, rep.guard, &diag, &err) < 0) {
		/* diagnosis is a bonus: say why it is missing, keep going */
		sb_reset(&diag);
		sb_addf(&diag, "no diagnosis: %s", err.buf);
		sb_reset(&err);
	}
	{
		struct emit_info info = { &t, &rep, diag.len ? diag.buf : NULL, path, rep.repro_guard };
		struct report_files rf;
		if (emit_repro(&red, &info, &src, &err) < 0 || write_file(out, src.buf, src.len, &err) < 0) {
			cmd_error("shrink", "%s", err.buf);
			goto out;
		}
		memset(&rf, 0, sizeof(rf));
		rf.trace = path;
		rf.repro_cu = out;
		rf.repro_bin = bin;
		rf.command = cmdline.buf;
		rf.diagnosis = diag.len ? diag.buf : NULL;
		rf.repro_cu_bytes = (unsigned long)src.len;
		if (report_yaml_write(yml, &rep, &t, &rf, &err) < 0) {
			cmd_error("shrink", "%s", err.buf);
			goto out;
		}
	}
	if (!o.quiet)
		shrink_print_report(stderr, &rep);
	if (diag.len && !o.quiet)
		fprintf(stderr, "diagnosis: %s\n", diag.buf);
	{
		/* the figure is the emitted program's own count when it was built */
		char fig[160];
		if (rep.repro_checked)
			snprintf(fig, sizeof(fig), "repro.cu faulted %d/%d (%s placement; replay %d/%d)",
				 rep.repro_faults, rep.repro_runs, place_guard_name(rep.repro_guard),
				 rep.final_faults, rep.final_runs);
		else
			snprintf(fig, sizeof(fig), "reproduced %d/%d in replay (repro.cu not built)",
				 rep.final_faults, rep.final_runs);
		printf("shrink: %zu launches -> %zu launch(es), %zu buffer(s); %s in %s; %s; "
		       "%ld candidates in %.1f s%s -> %s (%zu bytes), %s, %s\n",
		       rep.orig_launches, rep.final_launches, rep.final_buffers, rep.error, rep.kernel, fig,
		       rep.candidates, rep.seconds,
		       rep.time_limited ? " (stopped by the time limit: the best so far)" : "", out, src.len, bin, yml);
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
out:
	if (o.workdir && !keep_work)
		remove_tree(workdir);
	if (have_t)
		trace_release(&t);
	if (have_red)
		trace_release(&red);
	free(rep.final_sanitizer);
	free(bin);
	free(yml);
	sb_release(&err);
	sb_release(&src);
	sb_release(&cmdline);
	sb_release(&diag);
	return ret;
}
