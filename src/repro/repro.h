/*
 * repro.h - build and run an emitted repro.cu (used by verify and diagnose).
 *
 * The compiler is `nvcc` from PATH or /usr/local/cuda/bin, or the command in
 * $GPUREDUCE_NVCC (a shell command run as `$GPUREDUCE_NVCC -o OUT SRC -lcuda`; the
 * CPU tests point it at gcc and the driver double).
 */
#ifndef GPUREDUCE_REPRO_H
#define GPUREDUCE_REPRO_H

#include <pthread.h>

#include "../../common/strbuf.h"

/* 1 when repro_build has a compiler to run: $GPUREDUCE_NVCC, or nvcc on
 * PATH or in /usr/local/cuda/bin. */
int repro_have_compiler(void);

/* Compile src into the executable out.  0; -1 with err (src unreadable, or
 * the compiler's output tail); -2 with err when there is no compiler. */
int repro_build(const char *src, const char *out, struct strbuf *err);

/*
 * The shrink check's build (repro-check.c): with nvcc as the compiler
 * (GPUREDUCE_NVCC unset), the host C++ compiler nvcc hands repro.cu to
 * (repro.cu has no device code) compiles it directly against nvcc's CUDA
 * headers and driver stub, *quick = 1: about 0.2 s where nvcc takes 1-2 s
 * of its own steps.  Otherwise, or when that compile fails, repro_build
 * (*quick = 0).  The nvcc build users run is checked beside the runs
 * (repro_async_*).
 */
int repro_build_quick(const char *src, const char *out, int *quick, struct strbuf *err);

/* repro_build on a thread: start (0, or -1 when no thread), then join:
 * repro_build's result, its error appended to err. */
struct repro_async {
	pthread_t th;
	struct strbuf cu, exe, err;
	int rc, started;
	double seconds;
};
int repro_async_start(struct repro_async *a, const char *src, const char *out);
int repro_async_join(struct repro_async *a, struct strbuf *err);

struct repro_run {
	int exit_code;           /* 1 fault, 0 clean, 2 setup, 124 timeout */
	char error[64];          /* CUDA_ERROR_... when it faulted */
	char kernel[512];
	char setup[160];         /* exit 2: the "setup failed" line */
};


/* Run once; output (stdout+stderr) appended to log when non-NULL. */
int repro_run_once(const char *exe, const char *const env[], double timeout,
		   struct repro_run *r, struct strbuf *log, struct strbuf *err);

/* Run exe n times, `parallel` at a time (several processes share a GPU),
 * each with a time limit; r[0..n-1] get each run's outcome.  A run that
 * printed its fault line counts as faulted (exit 1) at once: its exit, the
 * driver's teardown of its faulted context, is reaped on a thread.  0, or
 * -1 when a run could not start (err says why). */
int repro_run_many(const char *exe, int n, int parallel, double timeout, struct repro_run *r,
		   struct strbuf *err);

/* shrink_opts.check_repro for `gpureduce shrink` (src/repro/repro-check.c):
 * emit the trace as repro.cu, build it, run it.  arg is a struct
 * repro_check. */
struct trace;
struct shrink_report;
struct repro_check {
	const struct trace *orig;        /* the captured trace (header facts) */
	const struct shrink_report *rep; /* the signature */
	const char *trace_name;
	const char *workdir;             /* where programs are built */
	int parallel;                    /* runs at a time */
	int code_only;                   /* --signature=code: any kernel */
	int serial;
	struct repro_pres *pre;          /* repro-prebuild.c: states built ahead of the check */
};
int repro_check_trace(void *arg, const char *bin, int guard, int runs, int *faults, struct strbuf *why);
/* repro-prebuild.c: emit the trace file bin's repro.cu and compile it on a
 * thread (shrink_opts.prebuild_repro; several states may be, each program
 * once); repro_prebuilt: 1 with *exe when src is one of those programs
 * (header aside) and it built, after waiting for it (its nvcc build starts
 * then); repro_prebuild_finish: wait for the threads and free (before the
 * work directory goes). */
void repro_prebuild(void *arg, const char *bin, int guard);
int repro_prebuilt(struct repro_check *rc, const char *src, const char **exe, double *build_s);
void repro_prebuild_finish(struct repro_check *rc);
/* After a prebuilt program's runs: wait for its nvcc build (started when
 * the prebuild was a quick one); repro_build's result, *seconds its time
 * (-1: there was none). */
int repro_prebuilt_nvcc(struct repro_check *rc, double *seconds, struct strbuf *err);
/* The file beside repro.cu: "DIR/repro.cu" + ".bin" -> "DIR/repro.bin"
 * (a name without .cu gets ext appended).  Caller frees. */
char *repro_sibling(const char *cu, const char *ext);

#endif
