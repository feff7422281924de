/*
 * cmd-verify.c - `gpureduce verify repro.cu [-n N] [--rate=R]`: build the
 * repro with nvcc and run it N times; report the reproduction rate and the
 * signature.  Exit 0 only if it faulted in at least R of the runs (default:
 * every run) with the signature the repro's header names ("What faulted:
 * ERROR (code) in KERNEL"; a bad-address pair 700/717 counts as one fault,
 * see common/signature.h), or, for a file without that header, the first
 * run's signature.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/child.h"
#include "../common/interrupt.h"
#include "../common/opts.h"
#include "../common/strbuf.h"
#include "../common/util.h"
#include "../common/signature.h"
#include "cmds.h"
#include "repro/repro.h"

static const char usage_str[] =
	"usage: gpureduce verify [-n N] [--rate=R] [--timeout=S] REPRO.cu\n\n"
	"Builds REPRO.cu (nvcc REPRO.cu -lcuda) and runs it N times (default 5).\n"
	"  -n N         runs (default 5)\n"
	"  --rate=R     the share of runs that must fault, 0 to 1 (default 1.0)\n"
	"  --timeout=S  seconds before a hung run is stopped (default 60)\n"
	"Exit 0 when it faulted in at least R of the runs (default 1.0: all of\n"
	"them) with the same error in the same kernel, 1 otherwise, 2 usage, 3 when\n"
	"it does not build, 4 when no run got a result (no GPU or no driver: the\n"
	"reason is printed).\n";

/* The signature a gpureduce repro.cu declares in its header comment:
 * " * What faulted:   CUDA_ERROR_X (700) in KERNEL".  0 when found. */
static int header_signature(const char *path, char *error, size_t nerr, char *kernel, size_t nk)
{
	struct strbuf src = STRBUF_INIT, e = STRBUF_INIT;
	const char *p, *sp, *in, *eol;
	int ret = -1;

	if (read_file(path, &src, &e) < 0)
		goto out;
	p = strstr(src.buf, "What faulted:");
	eol = p ? strchr(p, '\n') : NULL;
	if (!p || !eol || (size_t)(eol - src.buf) > 4096)
		goto out;
	p += 13;
	while (*p == ' ')
		p++;
	sp = strchr(p, ' ');
	in = strstr(p, ") in ");
	if (!sp || !in || in > eol || sp > eol)
		goto out;
	snprintf(error, nerr, "%.*s", (int)(sp - p), p);
	snprintf(kernel, nk, "%.*s", (int)(eol - (in + 5)), in + 5);
	ret = strncmp(error, "CUDA_ERROR_", 11) ? -1 : 0;
out:
	sb_release(&src);
	sb_release(&e);
	return ret;
}

int cmd_verify(int argc, char **argv)
{
	struct strbuf err = STRBUF_INIT, log = STRBUF_INIT;
	struct opts op;
	const char *src = NULL;
	char dir[] = "/tmp/gpureduce-verify-XXXXXX", exe[4096];
	int n = 5, faulted = 0, clean = 0, setup = 0, other = 0, mixed = 0;
	double rate = 1.0, timeout = 60;
	char sig_err[64] = "", sig_kernel[512] = "", seen[64] = "";
	int from_header = 0, other_code = 0;
	char first_other[48] = "", sbuf[48];
	int hung = 0, unread = 0, st;
	int ret = EXIT_INTERNAL, made = 0;

	opts_init(&op, argc, argv, &err);
	while (opts_next(&op)) {
		if (is_help(op.arg)) {
			fputs(usage_str, stdout);
			return EXIT_OK;
		} else if (opts_int(&op, "-n", &n, 1, 100000)) {
		} else if (opts_double(&op, "--rate", &rate, 0, 1)) {
		} else if (opts_double(&op, "--timeout", &timeout, 0.01, 1e9)) {
		} else if (opts_unknown(&op)) {
		} else if (!src) {
			src = op.arg;
		} else {
			opts_fail(&op, "one repro at a time");
		}
	}
	if (op.failed) {
		cmd_error("verify", "%s; see 'gpureduce verify --help'", err.buf);
		sb_release(&err);
		return EXIT_USAGE;
	}
	if (!src || n < 1 || rate < 0 || rate > 1) {
		fputs(usage_str, stderr);
		return EXIT_USAGE;
	}
	if (!mkdtemp(dir)) {
		cmd_error("verify", "cannot create a temporary directory");
		return EXIT_ENV;
	}
	made = 1;
	/* ^C: each run is in its own process group; stop it (interrupt.h) */
	interrupt_install();
	from_header = header_signature(src, sig_err, sizeof(sig_err), sig_kernel, sizeof(sig_kernel)) == 0;
	snprintf(exe, sizeof(exe), "%s/repro", dir);
	if ((st = repro_build(src, exe, &err)) < 0) {
		cmd_error("verify", "%s", err.buf);
		ret = st == -2 ? EXIT_ENV : EXIT_INPUT;
		goto out;
	}
	for (int i = 0; i < n; i++) {
		struct repro_run r;
		sb_reset(&log);
		if (repro_run_once(exe, NULL, timeout, &r, &log, &err) < 0) {
			cmd_error("verify", "%s", err.buf);
			ret = EXIT_ENV;
			goto out;
		}
		if (interrupt_signal()) {
			cmd_error("verify", "interrupted (%s) after %d of %d runs", interrupt_name(interrupt_signal()),
				  i, n);
			ret = 128 + interrupt_signal();
			goto out;
		}
		if (r.exit_code == 1 && r.error[0]) {
			if (!sig_err[0]) {
				snprintf(sig_err, sizeof(sig_err), "%s", r.error);
				snprintf(sig_kernel, sizeof(sig_kernel), "%s", r.kernel);
			}
			if (!sig_same_error_name(sig_err, r.error) || !sig_same_kernel(sig_kernel, r.kernel, 0)) {
				mixed++;
			} else {
				faulted++;
				if (strcmp(sig_err, r.error)) {
					other_code++;
					snprintf(seen, sizeof(seen), "%s", r.error);
				}
			}
		} else if (r.exit_code == 0) {
			clean++;
		} else if (r.exit_code == 1) {
			/* it ran and failed, but its fault line was not found in
			 * what it printed: show the end of that, once */
			if (!unread++)
				fprintf(stderr, "%s", log.len > 2000 ? log.buf + log.len - 2000 : log.buf);
		} else if (r.exit_code == 124) {
			hung++;
		} else if (r.exit_code == 2) {
			setup++;
			if (setup + other == 1)
				fprintf(stderr, "%s", log.buf);
		} else {
			other++;
			if (setup + other == 1) {
				fprintf(stderr, "%s", log.buf);
				snprintf(first_other, sizeof(first_other), "%s", child_status_str(r.exit_code, sbuf));
			}
		}
	}
	if (setup + other == n) {
		/* not one run got as far as a result: the machine, not the repro
		 * (no driver library: the loader's exit 127; no GPU: setup failed) */
		if (setup == n)
			cmd_error("verify", "the repro could not set up in any run (see its message above)");
		else
			cmd_error("verify", "the repro did not run in any of %d runs (the first: %s; its output is "
				  "above): is the CUDA driver (libcuda.so.1) installed and a GPU present?", n, first_other[0] ? first_other : "set-up failed");
		ret = EXIT_ENV;
		goto out;
	}
	printf("verify: %d/%d runs faulted with %s in %s", faulted, n, sig_err[0] ? sig_err : "-",
	       sig_kernel[0] ? sig_kernel : "-");
	if (other_code)
		printf(" (%d of them as %s: the same bad address, landing elsewhere)", other_code, seen);
	if (!from_header)
		printf(" [no repro header: compared with the first run]");
	if (clean)
		printf("; %d ran clean", clean);
	if (mixed)
		printf("; %d faulted differently", mixed);
	if (hung)
		printf("; %d timed out after %.0f s", hung, timeout);
	if (unread)
		printf("; %d exited 1 without a fault line (the end of the first one's output is above)", unread);
	if (setup || other)
		printf("; %d failed to run", setup + other);
	printf(" (rate %.2f)\n", (double)faulted / n);
	ret = (double)faulted / n >= rate - 1e-9 && faulted > 0 ? EXIT_OK : EXIT_FAULT;
out:
	if (made) {
		unlink(exe);
		rmdir(dir);
	}
	sb_release(&err);
	sb_release(&log);
	return ret;
}
