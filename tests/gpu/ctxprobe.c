/*
 * ctxprobe.c - a hand-run probe on a GPU machine (not part of a suite):
 * can a process recover from a sticky fault by destroying its context and
 * using another, and what does each step cost?  It creates two contexts,
 * faults in the first (a store to address 0x10), then tries the second, a
 * new one and the primary context, timing each call.  On the H200
 * (docs/RESULTS.md, 2026-12-04): cuInit 0.20 s, cuCtxCreate 0.11 s, the
 * fault 0.15 s to report 700, and after it every context of the process
 * returns 700: a fault costs a new process, which is why shrink's time is
 * counted in faulting candidates.  On that driver it then crashed in its
 * last calls (after cuDevicePrimaryCtxReset on the poisoned process): the
 * lines it printed before are what it is for (stdout is unbuffered).
 *
 * Build and run: cc -o ctxprobe tests/gpu/ctxprobe.c -I/usr/local/cuda/include -lcuda && ./ctxprobe
 */
#include <cuda.h>
#include <stdio.h>
#include <time.h>
static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }
static const char ptx[] =
".version 7.8\n.target sm_90\n.address_size 64\n"
".visible .entry poke(.param .u64 p) {\n .reg .b64 %rd<2>;\n .reg .b32 %r<2>;\n"
" ld.param.u64 %rd1, [p];\n mov.u32 %r1, 1;\n st.global.u32 [%rd1], %r1;\n ret;\n}\n";
#define T(x) do { double a_ = now(); CUresult r_ = (x); printf("%-60s -> %d in %.1f ms\n", #x, (int)r_, (now() - a_) * 1e3); } while (0)
static CUresult run(CUcontext c, CUdeviceptr p)
{
	CUmodule m; CUfunction f; CUresult r;
	void *args[] = { &p };
	if ((r = cuCtxSetCurrent(c))) return r;
	if ((r = cuModuleLoadData(&m, ptx))) return r;
	if ((r = cuModuleGetFunction(&f, m, "poke"))) return r;
	if ((r = cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, 0, args, 0))) return r;
	return cuCtxSynchronize();
}
int main(void)
{
	CUdevice d; CUcontext a, b, c; CUdeviceptr buf = 0;
	setvbuf(stdout, NULL, _IONBF, 0);
	double t0 = now();
	T(cuInit(0));
	T(cuDeviceGet(&d, 0));
	T(cuCtxCreate(&a, NULL, 0, d));
	T(cuCtxCreate(&b, NULL, 0, d));
	T(cuMemAlloc(&buf, 4096));
	T(run(a, buf));
	T(run(a, (CUdeviceptr)0x10));
	T(run(a, buf));
	T(cuCtxDestroy(a));
	T(cuCtxSetCurrent(b));
	T(cuMemAlloc(&buf, 4096));
	T(run(b, buf));
	T(run(b, (CUdeviceptr)0x10));
	T(cuCtxDestroy(b));
	T(cuCtxCreate(&c, NULL, 0, d));
	T(cuMemAlloc(&buf, 4096));
	T(run(c, buf));
	/* primary context path */
	T(cuCtxDestroy(c));
	CUcontext p;
	T(cuDevicePrimaryCtxRetain(&p, d));
	T(cuMemAlloc(&buf, 4096));
	T(run(p, buf));
	T(run(p, (CUdeviceptr)0x10));
	T(cuDevicePrimaryCtxReset(d));
	T(cuDevicePrimaryCtxRetain(&p, d));
	T(cuCtxSetCurrent(p));
	T(cuMemAlloc(&buf, 4096));
	T(run(p, buf));
	printf("total %.1f ms\n", (now() - t0) * 1e3);
	return 0;
}
