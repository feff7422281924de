/*
 * h2d-prog.c - test helper for t1026-capture-writer-thread.sh: a program
 * that copies many buffers to the GPU, of varied sizes and contents (1
 * byte to 9 MiB; random, compressible, and repeats of earlier copies),
 * interleaved with launches and an attribute that changes (a record
 * carried into checkpoints), then faults.  Captured for real by
 * libgpureduce-capture.so on the CPU driver double (fakeprog.h).
 *
 *   h2d-prog KERNELS.CUBIN MODE
 *
 * Prints on stdout, for every host-to-device copy it makes, in order,
 * "copy SIZE HASH" (HASH: XXH3-64 of the bytes, 16 hex digits: the blob
 * the trace must name).  MODE:
 *   exit   gather (B, W, I) faults on I[17]; exit 3
 *   kill   the same, then SIGKILL itself as soon as the faulting launch
 *          returns (no exit handler runs: what is on disk is what the
 *          fault path put there)
 *   fork   no fault: after the copies it forks, the child SIGKILLs the
 *          parent and exits (what is on disk is what the fork left)
 * Exit 2 on a set-up error.
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <cuda.h>
#include <cupti.h>

#define N 1000
#define PROG "h2d-prog"
#include "fakeprog.h"

static void copy_in(CUdeviceptr dst, const void *src, size_t n)
{
	h2d(dst, src, n);
	printf("copy %zu %016llx\n", n, (unsigned long long)XXH3_64bits(src, n));
}

int main(int argc, char **argv)
{
	/* sizes cycled through: around 64 (the smallest blob zstd is tried
	 * on), pages, 1 MiB (where a sample decides), and past a small ring */
	static const size_t sizes[] = { 1, 7, 63, 64, 65, 1000, 4096, 65539, 262149, (1 << 20) - 1,
					1 << 20, (1 << 20) + 17, 3 << 20, 300000, 9 << 20, 777777 };
	enum { NSIZES = sizeof(sizes) / sizeof(sizes[0]), COPIES = 48, BIG = 9 << 20 };
	static float host[N];
	static long long idx[N];
	CUmodule mod;
	CUfunction add_one, gather;
	CUdeviceptr W, B, I, D;
	unsigned char *buf;
	uint32_t rnd = 2026;
	int n = N;
	CUresult r;

	if (argc != 3) {
		fprintf(stderr, "usage: h2d-prog KERNELS.CUBIN exit|kill|fork\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);   /* each line out before a kill */
	mod = start_on_cubin(argv[1], 0);
	if ((r = cuModuleGetFunction(&add_one, mod, "_Z7add_onePfi")) ||
	    (r = cuModuleGetFunction(&gather, mod, "_Z6gatherPfPKfPKxi")))
		die("cuModuleGetFunction", r);
	W = alloc(N * sizeof(float));
	B = alloc(N * sizeof(float));
	I = alloc(N * sizeof(long long));
	D = alloc(BIG);
	for (int i = 0; i < N; i++) {
		host[i] = (float)i;
		idx[i] = i;
	}
	idx[17] = 0x7f7f7f7f7f7fll;   /* wild: only gather at the end reads it */
	copy_in(W, host, sizeof(host));
	copy_in(B, host, sizeof(host));
	copy_in(I, idx, sizeof(idx));
	if (!(buf = malloc(BIG)))
		die("malloc", CUDA_ERROR_OUT_OF_MEMORY);

	for (int c = 0; c < COPIES; c++) {
		size_t len = sizes[c % NSIZES];
		void *kp[] = { &W, &n };
		if (c % 5 == 4) {
			/* compressible: a short period */
			for (size_t k = 0; k < len; k++)
				buf[k] = (unsigned char)(k % 13 + c);
		} else if (c % 7 != 6) {
			/* random (incompressible); every 7th copy repeats the
			 * previous bytes (a blob the trace already holds) */
			for (size_t k = 0; k < len; k++) {
				rnd = rnd * 1103515245u + 12345u;
				buf[k] = (unsigned char)(rnd >> 16);
			}
		}
		copy_in(D, buf, len);
		if ((r = launch_block(add_one, 4, 256, kp)))
			die("a healthy launch", r);
		if (c % 10 == 9)
			set_attr(add_one, 1024 * (c / 10 + 1));   /* a changed value: carried */
	}
	fflush(stdout);
	if (!strcmp(argv[2], "fork")) {
		pid_t pid = fork();
		if (pid < 0)
			die("fork", CUDA_ERROR_UNKNOWN);
		if (pid == 0) {
			kill(getppid(), SIGKILL);
			_exit(0);
		}
		for (;;)
			pause();
	}
	{
		void *kp[] = { &B, &W, &I, &n };
		r = launch_block(gather, 4, 256, kp);
	}
	if (r && !strcmp(argv[2], "kill"))
		raise(SIGKILL);
	fprintf(stderr, "h2d-prog: gather returned %d\n", (int)r);
	free(buf);
	return r ? 3 : 0;
}
