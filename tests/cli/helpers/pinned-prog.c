/*
 * pinned-prog.c - test helper for t5113-e2e-pinned.sh: kernels that read
 * plain pinned host memory (cuMemAllocHost, cuMemHostAlloc without
 * DEVICEMAP) through a pointer argument, as "UVA" tensors do; captured for
 * real by libgpureduce-capture.so on the CPU driver double (fakeprog.h),
 * whose kernels read host memory as a GPU under unified addressing does.
 *
 *   pinned-prog KERNELS.CUBIN
 *
 * Set-up: W and B (1000 floats, device), an index table P (1000 long
 * long, cuMemAllocHost), a float table A (1000 floats, cuMemHostAlloc
 * with no flags) and a staging buffer S (1000 floats, cuMemHostAlloc with
 * no flags) that is only ever copied from.  Five steps: the CPU fills S
 * and copies it into W (cuMemcpyHtoD from pinned memory, as a loader
 * does), writes a new permutation into P and step into A[0], launches
 * struct_params({A, B, 1000}) (A inside a by-value struct) and
 * gather(B, W, P, 1000) (P an argument).  Before the last step's gather
 * the CPU writes a wild index into P[17]: gather faults.  Exit 3 after
 * the fault, 2 on a set-up error.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>
#include <cupti.h>

#define N 1000
#define PROG "pinned-prog"
#include "fakeprog.h"

static void *pinned(size_t n, int alloc_host)
{
	void *p = NULL;
	CUresult r;
	if (alloc_host) {
		cuMemAllocHost_v2_params q = { &p, n };
		r = CALL(cuMemAllocHost, cuMemAllocHost_v2, &q, &p, n);
	} else {
		cuMemHostAlloc_params q = { &p, n, 0 };
		r = CALL(cuMemHostAlloc, cuMemHostAlloc, &q, &p, n, 0);
	}
	if (r || !p)
		die("pinned allocation", r ? r : CUDA_ERROR_OUT_OF_MEMORY);
	return p;
}

int main(int argc, char **argv)
{
	struct pair { float *a; float *b; int n; } pr;
	CUmodule mod;
	CUfunction gather, sp;
	CUdeviceptr W, B;
	long long *P;
	float *A, *S;
	int n = N;
	CUresult r = CUDA_SUCCESS;

	if (argc != 2) {
		fprintf(stderr, "usage: pinned-prog KERNELS.CUBIN\n");
		return 2;
	}
	mod = start_on_cubin(argv[1], 0);
	if ((r = cuModuleGetFunction(&gather, mod, "_Z6gatherPfPKfPKxi")) ||
	    (r = cuModuleGetFunction(&sp, mod, "_Z13struct_params4Pair")))
		die("cuModuleGetFunction", r);
	W = alloc(N * sizeof(float));
	B = alloc(N * sizeof(float));
	P = pinned(N * sizeof(long long), 1);
	A = pinned(N * sizeof(float), 0);
	S = pinned(N * sizeof(float), 0);
	for (int step = 0; step < 5; step++) {
		for (int i = 0; i < N; i++) {
			S[i] = (float)(i + step);
			P[i] = (i * 7 + step) % N;
			A[i] = (float)i;
		}
		A[0] = (float)step;
		h2d(W, S, sizeof(float) * N);
		pr = (struct pair){ A, (float *)(uintptr_t)B, N };
		{
			void *kp[] = { &pr };
			if ((r = launch_block(sp, 4, 256, kp)))
				die("struct_params", r);
		}
		if (step == 4)
			P[17] = 0x7f7f7f7f7f7fll;   /* wild */
		{
			void *kp[] = { &B, &W, &P, &n };
			r = launch_block(gather, 4, 256, kp);
		}
		if (r)
			break;
	}
	fprintf(stderr, "pinned-prog: gather returned %d\n", (int)r);
	return r ? 3 : 0;
}
