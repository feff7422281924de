/*
 * exitprobe.c - what a process that faulted costs the GPU after its fault
 * (issue 26: a shrink's seconds are about its faulting processes, repro.cu's
 * 5 runs and every faulting replay worker; docs/SHRINK-PHASES.md).  Each
 * such process prints its verdict and exits; libcuda's own teardown then
 * runs in exit() (its destructors), and the kernel driver's when the
 * process closes the device.  Does skipping the first (_exit) shorten the
 * process, and does a dying process hold up the next one's context?
 *
 *   exitprobe fault exit     cuInit, the primary context, one launch that
 *   exitprobe fault _exit    writes to address 16 (CUDA_ERROR_ILLEGAL_ADDRESS),
 *                            then exit(1) or fflush + _exit(1)
 *   exitprobe ctx            cuInit and the primary context only, then exit(0)
 *
 * Prints one line "exitprobe MODE: init S ctx S fault S" (seconds from the
 * process start: after cuInit, after the context, after the fault came
 * back); the caller times the whole process.  Build (GPU machine):
 *   cc -O2 -o build/exitprobe tests/gpu/exitprobe.c -I$CUDA/include -L$CUDA/lib64/stubs -lcuda
 * tests/gpu/device-session.sh's `exitprobe` part builds and runs it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cuda.h>

static const char ptx[] =
	".version 7.0\n"
	".target sm_50\n"
	".address_size 64\n"
	".visible .entry bad(.param .u64 p)\n"
	"{\n"
	"	.reg .b64 %rd<2>;\n"
	"	.reg .b32 %r<2>;\n"
	"	ld.param.u64 %rd1, [p];\n"
	"	mov.u32 %r1, 1;\n"
	"	st.global.u32 [%rd1], %r1;\n"
	"	ret;\n"
	"}\n";

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void check(CUresult r, const char *what)
{
	const char *name = NULL;
	if (r == CUDA_SUCCESS)
		return;
	cuGetErrorName(r, &name);
	fprintf(stderr, "exitprobe: %s: %s (%d)\n", what, name ? name : "?", (int)r);
	exit(2);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "ctx";
	int quick = argc > 2 && !strcmp(argv[2], "_exit");
	double t0 = now(), t_init, t_ctx, t_fault = 0;
	CUdevice dev;
	CUcontext ctx;
	CUmodule mod;
	CUfunction f;
	CUresult r;

	check(cuInit(0), "cuInit");
	t_init = now() - t0;
	check(cuDeviceGet(&dev, 0), "cuDeviceGet");
	check(cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
	check(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
	t_ctx = now() - t0;
	if (!strcmp(mode, "fault")) {
		CUdeviceptr p = 16;
		void *params[1] = { &p };
		check(cuModuleLoadData(&mod, ptx), "cuModuleLoadData");
		check(cuModuleGetFunction(&f, mod, "bad"), "cuModuleGetFunction");
		r = cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, params, NULL);
		if (r == CUDA_SUCCESS)
			r = cuCtxSynchronize();
		t_fault = now() - t0;
		printf("exitprobe fault %s: init %.3f ctx %.3f fault %.3f (%d)\n", quick ? "_exit" : "exit", t_init,
		       t_ctx, t_fault, (int)r);
		fflush(stdout);
		if (quick)
			_exit(1);
		exit(1);
	}
	printf("exitprobe ctx: init %.3f ctx %.3f\n", t_init, t_ctx);
	return 0;
}
