/*
 * cmd-report.c - `gpureduce report [--trace FILE] [--runs=N] [--no-sanitizer]
 * [--redact] [--no-tar] [REPRO_DIR]`: options and exit codes; the report
 * itself is src/repro/report.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../common/opts.h"
#include "../common/strbuf.h"
#include "../common/util.h"
#include "cmds.h"
#include "repro/report.h"

static const char usage_str[] =
	"usage: gpureduce report [--trace FILE] [--runs=N] [--no-sanitizer] [--redact] [--no-tar]\n"
	"                        [REPRO_DIR]\n\n"
	"Write REPRO_DIR/report.md (default: the current folder), ready to paste into a\n"
	"GitHub issue, and REPRO_DIR/report.tar.gz (repro.cu, repro.yaml, report.md), from\n"
	"what `gpureduce shrink -o REPRO_DIR/repro.cu` wrote and the captured trace that\n"
	"repro.yaml names: the environment, what faulted with the Python stack of the\n"
	"launch, the kernel's source, the repro built and run (N runs) with its output,\n"
	"compute-sanitizer's report on it, what of your data and paths it holds, and the\n"
	"maintainers' checklist.\n\n"
	"options:\n"
	"  --trace FILE      the captured trace (default: repro.yaml's original.trace)\n"
	"  --runs=N          build and run the repro N times (default 3; 0: do not run it)\n"
	"  --no-sanitizer    do not run compute-sanitizer on the repro\n"
	"  --redact          replace path names by <pathN>/name in report.md and in the\n"
	"                    tarball's repro.cu\n"
	"  --no-tar          write report.md only\n\n"
	"Exit: 0 written, 2 usage, 3 no repro in REPRO_DIR (or a damaged one), 4 a write failed.\n";

int cmd_report(int argc, char **argv)
{
	struct report_opts o = { ".", NULL, 3, 1, 0, 1 };
	struct strbuf err = STRBUF_INIT;
	struct opts op;
	int code = EXIT_INTERNAL, dir_given = 0;
	struct stat st;

	opts_init(&op, argc, argv, &err);
	while (opts_next(&op)) {
		if (is_help(op.arg)) {
			fputs(usage_str, stdout);
			sb_release(&err);
			return EXIT_OK;
		} else if (opts_str(&op, "--trace", &o.trace)) {
		} else if (opts_int(&op, "--runs", &o.runs, 0, 1000)) {
		} else if (opts_flag(&op, "--no-sanitizer")) {
			o.sanitize = 0;
		} else if (opts_flag(&op, "--redact")) {
			o.redact = 1;
		} else if (opts_flag(&op, "--no-tar")) {
			o.tar = 0;
		} else if (opts_unknown(&op)) {
		} else if (!dir_given) {
			o.dir = op.arg;
			dir_given = 1;
		} else {
			opts_fail(&op, "one repro folder at a time");
		}
	}
	if (op.failed) {
		cmd_error("report", "%s; see 'gpureduce report --help'", err.buf);
		code = EXIT_USAGE;
		goto out;
	}
	if (stat(o.dir, &st) < 0 || !S_ISDIR(st.st_mode)) {
		cmd_error("report", "%s: not a folder; give the folder shrink wrote repro.cu into", o.dir);
		code = EXIT_INPUT;
		goto out;
	}
	if (report_write(&o, &code, &err) < 0) {
		cmd_error("report", "%s", err.buf);
		goto out;
	}
	printf("gpureduce: wrote %s/report.md%s%s%s\n", o.dir, o.tar ? " and " : "", o.tar ? o.dir : "",
	       o.tar ? "/report.tar.gz" : "");
out:
	sb_release(&err);
	return code;
}
