/*
 * repro-check.c - how `gpureduce shrink` checks the program it emits: the
 * reduced trace is emitted as repro.cu exactly as it will be written (the
 * header's diagnosis aside), built and run; a run counts when it faults
 * with the trace's signature (700/717 alike; the same kernel unless
 * --signature=code).  Plugged into the reducer as shrink_opts.check_repro,
 * so reducer/ never runs compilers itself.
 *
 * The build: with nvcc as the compiler, the program that runs is the host
 * C++ compiler's build of the same file (repro_build_quick: nvcc only hands
 * a .cu without device code to that compiler, after 1-2 s of its own
 * steps), and nvcc builds it beside the runs: a repro.cu nvcc refuses
 * "does not build", as its header tells users to build it with nvcc.
 * With $GPUREDUCE_NVCC, that command builds it, once.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/child.h"
#include "../../common/strbuf.h"
#include "../../common/util.h"
#include "../../emit/emit.h"
#include "../../addr/params.h"
#include "../../reducer/shrink.h"
#include "../../common/signature.h"
#include "../../trace/trace.h"
#include "repro.h"

/* 1 when a compiler is at hand (and checking is not switched off). */
static int have_compiler(struct strbuf *why)
{
	const char *off = getenv("GPUREDUCE_NO_REPRO_CHECK");
	if (off && *off && strcmp(off, "0")) {
		sb_adds(why, "GPUREDUCE_NO_REPRO_CHECK is set: repro.cu was not built");
		return 0;
	}
	if (repro_have_compiler())
		return 1;
	sb_adds(why, "nvcc not found (PATH, /usr/local/cuda/bin): repro.cu was not built and run; "
		"only its replay was checked");
	return 0;
}

/* 1 when every run failed before reaching the GPU: the loader found no
 * libcuda (127), or cuInit failed (a stub library, no device). */
static int no_driver(const struct repro_run *r, int runs)
{
	for (int i = 0; i < runs; i++)
		if (r[i].exit_code != 127 && !(r[i].exit_code == 2 && strstr(r[i].setup, "cuInit")))
			return 0;
	return runs > 0;
}

int repro_check_trace(void *arg, const char *bin, int guard, int runs, int *faults, struct strbuf *why)
{
	struct repro_check *rc = arg;
	struct trace t;
	struct strbuf src = STRBUF_INIT, cu = STRBUF_INIT, exe = STRBUF_INIT, err = STRBUF_INIT;
	struct repro_run *r = NULL;
	char *kernel = NULL;
	const char *built = NULL;
	int have_t = 0, ret = -1, setup = 0, clean = 0, other = 0, pre, quick = 0;
	double t0, build_s = 0, wait_s, runs_s, nvcc_s = -1;
	struct repro_async nv = { 0 };
	struct strbuf nvexe = STRBUF_INIT;

	*faults = 0;
	if (!have_compiler(why))
		return 1;
	if (trace_open(&t, bin, TRACE_OPEN_STRICT, &err) < 0) {
		sb_addf(why, "%s", err.buf);
		goto out;
	}
	have_t = 1;
	{
		struct emit_info info = { rc->orig, rc->rep, NULL, rc->trace_name, guard };
		if (emit_repro(&t, &info, &src, &err) < 0) {
			sb_addf(why, "emitting repro.cu: %s", err.buf);
			goto out;
		}
	}
	rc->serial++;
	sb_addf(&cu, "%s/check-%d.cu", rc->workdir, rc->serial);
	sb_addf(&exe, "%s/check-%d", rc->workdir, rc->serial);
	if (write_file(cu.buf, src.buf, src.len, &err) < 0) {
		sb_addf(why, "%s", err.buf);
		goto out;
	}
	t0 = now_sec();
	if ((pre = repro_prebuilt(rc, src.buf, &built, &build_s))) {
		sb_reset(&exe);
		sb_adds(&exe, built);   /* compiled ahead (repro-prebuild.c) */
	} else if (repro_build_quick(cu.buf, exe.buf, &quick, &err) < 0) {
		sb_addf(why, "the emitted repro.cu does not build: %s", err.buf);
		goto out;
	} else if (quick) {
		/* the build users run (nvcc) goes beside the runs */
		sb_addf(&nvexe, "%s.nvcc", exe.buf);
		repro_async_start(&nv, cu.buf, nvexe.buf);
	}
	wait_s = now_sec() - t0;
	r = xcalloc((size_t)runs, sizeof(*r));
	t0 = now_sec();
	if (repro_run_many(exe.buf, runs, rc->parallel, 120, r, &err) < 0) {
		sb_addf(why, "running the built repro: %s", err.buf);
		goto out;
	}
	runs_s = now_sec() - t0;
	{
		/* a quick build was the host compiler's: repro.cu must build with
		 * nvcc too, as its header tells users to build it */
		int nrc;
		double w0 = now_sec();
		sb_reset(&err);
		if (pre)
			nrc = repro_prebuilt_nvcc(rc, &nvcc_s, &err);
		else {
			nrc = repro_async_join(&nv, &err);
			nvcc_s = quick ? nv.seconds : -1;
		}
		if (nrc < 0) {
			sb_addf(why, "the emitted repro.cu does not build with nvcc: %s", err.buf);
			goto out;
		}
		wait_s += nvcc_s >= 0 ? now_sec() - w0 : 0;
	}
	kernel = params_demangle(rc->rep->kernel);
	for (int i = 0; i < runs; i++) {
		if (r[i].exit_code == 1 && r[i].error[0] && sig_same_error_name(rc->rep->error, r[i].error) &&
		    (rc->code_only || sig_same_kernel(kernel, r[i].kernel, sizeof(r[i].kernel))))
			(*faults)++;
		else if (r[i].exit_code == 0)
			clean++;
		else if (r[i].exit_code == 2)
			setup++;
		else if (r[i].exit_code != 1)
			other++;
	}
	if (!*faults && !clean && no_driver(r, runs)) {
		/* nvcc without a driver (a build machine): nothing was checked */
		sb_addf(why, "the built repro.cu cannot start here (%s): it was not checked; only its "
			"replay was", r[0].setup[0] ? r[0].setup : "its loader failed");
		ret = 1;
		goto out;
	}
	if (setup || other)
		sb_addf(why, "%d of %d runs could not set up or crashed; ", setup + other, runs);
	/* for the log: where the phase's time went */
	if (pre)
		sb_addf(why, "built ahead in %.2f s, waited %.2f s for it; ", build_s, wait_s);
	else
		sb_addf(why, "built in %.2f s; ", wait_s);
	sb_addf(why, "%d runs (%d at a time) in %.2f s; ", runs, rc->parallel, runs_s);
	if (nvcc_s >= 0)
		sb_addf(why, "run as built by the host compiler; nvcc built it too, in %.2f s beside the runs; ", nvcc_s);
	ret = 0;
out:
	repro_async_join(&nv, NULL);
	sb_release(&nvexe);
	if (have_t)
		trace_release(&t);
	free(kernel);
	free(r);
	sb_release(&src);
	sb_release(&cu);
	sb_release(&exe);
	sb_release(&err);
	return ret;
}
