/*
 * cmd-diagnose.c - `gpureduce diagnose repro.cu|TRACE`: run the fault under
 * compute-sanitizer and explain it in terms of the kernel's parameters.
 * For a repro.cu the reduced trace beside it (repro.bin) names the
 * parameters; the repro itself is built and run under the sanitizer.  A
 * long trace runs its last launch's slice (reducer/lastslice.h) under the
 * sanitizer, the whole trace only when the slice's report is not about it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/child.h"
#include "../common/opts.h"
#include "../common/interrupt.h"
#include "../common/strbuf.h"
#include "../diagnose/diagnose.h"
#include "../addr/place.h"
#include "../trace/trace.h"
#include "../addr/params.h"
#include "../reducer/lastslice.h"
#include "../replay/pool.h"
#include "../replay/sidechan.h"
#include "cmds.h"
#include "repro/repro.h"
#include "outputs/safe-out.h"

static const char usage_str[] =
	"usage: gpureduce diagnose [--guard=end|start|none|layout] REPRO.cu|TRACE\n\n"
	"Runs the fault once under compute-sanitizer and maps its report to the\n"
	"launch's parameters.  For REPRO.cu, REPRO.bin beside it must exist.  A TRACE\n"
	"with 64 launches or more before its last is diagnosed from that launch alone,\n"
	"after a snapshot of the state it needs (GPUREDUCE_DIAG_SLICE=0: the whole trace).\n"
	"  --guard=MODE  the placement for a TRACE's replay: end (each buffer ends at an\n"
	"                unmapped page), start, none (plain cuMemAlloc) or layout\n"
	"Exit: 0 explained, 1 compute-sanitizer saw no memory error (or the trace holds\n"
	"no fault), 2 usage,\n"
	"3 bad trace or the repro does not build, 4 no compute-sanitizer or nvcc.\n";

/* Launches before a trace's last one from which its slice (lastslice.h)
 * is diagnosed rather than the whole trace: a worker's context and one
 * replay cost about what compute-sanitizer spends on a few dozen launches
 * (1-11 ms each on an H100, by their grids). */
#define SLICE_MIN_LAUNCHES 64

/* Diagnose trace t (at path) from its last launch alone: 0 with out when
 * the slice could be made and its report is about that launch; else 1
 * (out left empty: the whole trace is diagnosed). */
static int diagnose_slice(const struct trace *t, const char *path, int guard, struct strbuf *out)
{
	struct strbuf dir = STRBUF_INIT, snap = STRBUF_INIT, sl = STRBUF_INIT, e = STRBUF_INIT;
	struct pool *p;
	struct trace st;
	int ret = 1;
	const char *tmp = getenv("TMPDIR");

	if (!lastslice_on() || !lastslice_worth(t, SLICE_MIN_LAUNCHES))
		return 1;
	sb_addf(&dir, "%s/gpureduce-diag-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir.buf)) {
		sb_release(&dir);
		return 1;
	}
	sb_addf(&snap, "%s/snap.bin", dir.buf);
	sb_addf(&sl, "%s/slice.bin", dir.buf);
	p = pool_create(1, 0, 600, &e);
	if (p && lastslice_write(p, path, t, guard, 0, snap.buf, sl.buf, &e) == 1 &&
	    trace_open(&st, sl.buf, TRACE_OPEN_STRICT, &e) == 0) {
		if (diagnose_trace(&st, sl.buf, guard, out, &e) == 0 && lastslice_diag_is_last(&st, out->buf))
			ret = 0;
		trace_release(&st);
	}
	if (p)
		pool_release(p);
	if (ret)
		sb_reset(out);
	unlink(snap.buf);
	unlink(sl.buf);
	rmdir(dir.buf);
	sb_release(&dir);
	sb_release(&snap);
	sb_release(&sl);
	sb_release(&e);
	return ret;
}

int cmd_diagnose(int argc, char **argv)
{
	struct strbuf err = STRBUF_INIT, out = STRBUF_INIT, bin = STRBUF_INIT, o = STRBUF_INIT;
	const char *path = NULL;
	int guard = 0, ret = EXIT_INTERNAL, have = 0, st;
	struct trace t;
	struct opts op;

	opts_init(&op, argc, argv, &err);
	while (opts_next(&op)) {
		const char *v = NULL;
		if (is_help(op.arg)) {
			fputs(usage_str, stdout);
			return EXIT_OK;
		} else if (opts_str(&op, "--guard", &v)) {
			if (v && (guard = place_parse_guard(v)) < 0)
				opts_fail(&op, "--guard takes end, start, none or layout");
		} else if (opts_unknown(&op)) {
		} else if (!path) {
			path = op.arg;
		} else {
			opts_fail(&op, "one repro or trace at a time");
		}
	}
	if (op.failed) {
		cmd_error("diagnose", "%s; see 'gpureduce diagnose --help'", err.buf);
		sb_release(&err);
		return EXIT_USAGE;
	}
	if (!path) {
		fputs(usage_str, stderr);
		return EXIT_USAGE;
	}
	size_t n = strlen(path);
	int is_cu = n > 3 && !strcmp(path + n - 3, ".cu");
	if (is_cu) {
		sb_add(&bin, path, n - 3);
		sb_adds(&bin, ".bin");
	} else {
		sb_adds(&bin, path);
	}
	if (safe_trace_open(&t, bin.buf, 0, &err) < 0) {
		cmd_error("diagnose", "%s%s", err.buf, is_cu ? " (diagnose needs the reduced trace beside the repro)" : "");
		ret = EXIT_INPUT;
		goto out;
	}
	have = 1;
	{
		const struct tr_rec *f = NULL;
		for (size_t i = 0; i < t.nrec; i++)
			if (t.rec[i].type == TR_FAULT)
				f = &t.rec[i];
		if (!f) {
			/* a clean run: nothing to explain, whatever tools are here */
			cmd_error("diagnose", "%s holds no fault (the program did not fault while it was "
				  "captured): nothing to diagnose", bin.buf);
			ret = EXIT_FAULT;
			goto out;
		}
	}
	if (!diagnose_find_sanitizer()) {
		const struct tr_rec *f = NULL;
		char *name;
		for (size_t i = 0; i < t.nrec; i++)
			if (t.rec[i].type == TR_FAULT)
				f = &t.rec[i];
		name = params_demangle(f->u.fault.kernel && *f->u.fault.kernel ? f->u.fault.kernel : "(no kernel)");
		printf("diagnose: compute-sanitizer not found; signature only: %s in %s\n", f->u.fault.error, name);
		free(name);
		ret = EXIT_ENV;
		goto out;
	}
	/* ^C: compute-sanitizer is in its own process group; stop it */
	interrupt_install();
	if (is_cu) {
		char dir[] = "/tmp/gpureduce-diag-XXXXXX", exe[4096];
		const char *env[] = { SC_REPRO_ENV "=1", NULL };
		if (!mkdtemp(dir)) {
			cmd_error("diagnose", "cannot create a temporary directory");
			ret = EXIT_ENV;
			goto out;
		}
		snprintf(exe, sizeof(exe), "%s/repro", dir);
		if ((st = repro_build(path, exe, &err)) < 0) {
			cmd_error("diagnose", "%s", err.buf);
			rmdir(dir);
			ret = st == -2 ? EXIT_ENV : EXIT_INPUT;
			goto out;
		}
		char *av[] = { (char *)diagnose_find_sanitizer(), "--print-limit", "1", exe, NULL };
		st = child_run(av, env, CHILD_MERGE_ERR | CHILD_NULL_IN, &o, 180, &err);
		unlink(exe);
		rmdir(dir);
		if (st < 0 || diagnose_explain(o.buf, &t, &out) < 0) {
			if (interrupt_signal())
				goto out;
			cmd_error("diagnose", "compute-sanitizer reported no memory error for %s%s%s", path,
				  err.len ? ": " : "", err.buf);
			ret = EXIT_FAULT;
			goto out;
		}
	} else if (diagnose_slice(&t, bin.buf, guard, &out) != 0 &&
		   (interrupt_signal() || diagnose_trace(&t, bin.buf, guard, &out, &err) < 0)) {
		if (interrupt_signal())
			goto out;
		cmd_error("diagnose", "%s", err.buf);
		ret = EXIT_FAULT;
		goto out;
	}
	printf("diagnose: %s\n", out.buf);
	ret = EXIT_OK;
out:
	if (interrupt_signal()) {
		cmd_error("diagnose", "interrupted (%s): compute-sanitizer was stopped",
			  interrupt_name(interrupt_signal()));
		ret = 128 + interrupt_signal();
	}
	if (have)
		trace_release(&t);
	sb_release(&err);
	sb_release(&out);
	sb_release(&bin);
	sb_release(&o);
	return ret;
}
