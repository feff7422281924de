/*
 * repro.h - build and run an emitted repro.cu (used by verify and diagnose).
 *
 * The compiler is `nvcc` from PATH or /usr/local/cuda/bin, or the command in
 * $GPUREDUCE_NVCC (a shell command run as `$GPUREDUCE_NVCC -o OUT SRC -lcuda`; the
 * CPU tests point it at gcc and the driver double).
 */
#ifndef GPUREDUCE_REPRO_H
#define GPUREDUCE_REPRO_H

struct strbuf;

/* Compile src into the executable out.  0; -1 with err (src unreadable, or
 * the compiler's output tail); -2 with err when there is no compiler. */
int repro_build(const char *src, const char *out, struct strbuf *err);

struct repro_run {
	int exit_code;           /* 1 fault, 0 clean, 2 setup, 124 timeout */
	char error[64];          /* CUDA_ERROR_... when it faulted */
	char kernel[512];
};

/* Run once; output (stdout+stderr) appended to log when non-NULL. */
int repro_run_once(const char *exe, const char *const env[], double timeout,
		   struct repro_run *r, struct strbuf *log, struct strbuf *err);

#endif
