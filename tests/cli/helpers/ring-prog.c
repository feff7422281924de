/*
 * ring-prog.c - test helper for t7012-checkpoint-module-vars.sh: a kernel
 * that keeps its state in its module's own variable (ring_write advances
 * the __device__ d_counter at each launch), captured for real by
 * libgpureduce-capture.so on the CPU driver double (fakeprog.h).  The
 * program never names d_counter to the driver.
 *
 *   ring-prog KERNELS.CUBIN LAUNCHES
 *
 * Allocates out (4096 bytes: 1024 floats) and launches ring_write(out)
 * up to LAUNCHES times; launch k writes out[k], so the 1025th (#1024)
 * writes past the end and faults.  Exit 3 after the fault, 0 if none,
 * 2 on a set-up error.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>
#include <cupti.h>

#define PROG "ring-prog"
#include "fakeprog.h"

int main(int argc, char **argv)
{
	CUmodule mod;
	CUfunction ring;
	CUdeviceptr out;
	CUresult r = CUDA_SUCCESS;
	long n, k;

	if (argc != 3 || (n = atol(argv[2])) <= 0) {
		fprintf(stderr, "usage: ring-prog KERNELS.CUBIN LAUNCHES\n");
		return 2;
	}
	mod = start_on_cubin(argv[1], 0);
	if ((r = cuModuleGetFunction(&ring, mod, "_Z10ring_writePf")))
		die("cuModuleGetFunction", r);
	out = alloc(4096);
	for (k = 0; k < n; k++) {
		void *kp[] = { &out };
		if ((r = launch_block(ring, 1, 32, kp)))
			break;
	}
	fprintf(stderr, "ring-prog: %ld launches, the last returned %d\n", k < n ? k + 1 : n, (int)r);
	return r ? 3 : 0;
}
