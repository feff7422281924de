/*
 * ckpt-prog.c - test helper: a long-running "training loop" on the CPU
 * driver double, captured for real by libgpureduce-capture.so through the
 * CUPTI part of capture-fakecuda (built -DFAKE_CUPTI_ONLY, installed as
 * libcupti.so.13), for the checkpoint tests (t7000-capture-checkpoint.sh).
 * Every driver call goes to the double and is bracketed by the enter/exit
 * callbacks CUPTI would deliver, so the capture library's checkpoints read
 * real (host-backed) device memory with cuMemcpyDtoH.
 *
 *   ckpt-prog KERNELS.CUBIN STEPS [STEP_USEC]
 *
 * STEP_USEC sleeps that long after each step (a slow run, for the progress
 * line) and prints "ckpt-prog: step N" every 100 steps on stderr.
 *
 * Set-up: W (1000 floats), B (1000 floats), X (1000 floats), I (1000 long
 * long indices, all valid but I[17], a wild index), each filled by one
 * host-to-device copy.  Each step copies a fresh batch into X, sets
 * add_one's dynamic shared memory limit (1024 for 10 steps, then 2048, as
 * Triton sets it before every launch) and launches add_one(W) and
 * scale(B, X).  Then gather(B, W, I, 1000) faults on I[17]:
 * the fault depends on bytes copied before every checkpoint, so a replay
 * that starts at a checkpoint faults only if the checkpoint holds them.
 * Exit 3 after the fault, 2 on a set-up error.
 *
 * For tests/bench/capture-cost.sh (capture's own costs, on the CPU):
 *   CKPT_PROG_BATCH=B    each step also copies B bytes of fresh random
 *                        floats in [0,1) into a batch buffer (a loader)
 *   CKPT_PROG_LIVE=B     one more allocation of B bytes of random floats
 *                        (model state), live through the run
 *   CKPT_PROG_TOUCH=1    each step adds one to all of it (every checkpoint
 *                        chunk changes; else only its first 4 KiB do)
 *   CKPT_PROG_LAUNCHES=K K more add_one launches per step (4 floats each)
 *   CKPT_PROG_NOISE=M    M driver calls capture does not record before each
 *                        launch (cuCtxGetCurrent, cuCtxGetDevice), as
 *                        PyTorch makes about 14 a launch
 *   CKPT_PROG_PLAIN=1    no injection: the same run without capture
 * It then prints "ckpt-prog: loop S s" (the step loop's own seconds) and
 * "ckpt-prog: loop cpu C s" (the loop thread's CPU seconds).
 *
 * CKPT_PROG_PAUSE=A-B pauses the capture library (gpureduce_capture_pause)
 * for steps A to B-1, as tests/gpu/hostfed.py's HOSTFED_ALTERNATE does.
 *
 * CKPT_PROG_VMM=1 also maps two pieces of one reserved range (see
 * map_two_pieces).
 *
 * CKPT_PROG_PHANTOM=1 also reports a cuMemAlloc of 4096 bytes at an address
 * the double never handed out (callbacks only, no call): memory that
 * cuMemcpyDtoH refuses to read back.
 */
#include <dlfcn.h>
#include <time.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cuda.h>
#include <cupti.h>

#define N 1000
#define PROG "ckpt-prog"
#include "fakeprog.h"

/* CKPT_PROG_NOISE: driver calls before each launch that capture does not
 * record, as a framework makes them (context and device queries) */
static long noise;

static CUresult launch(CUfunction f, unsigned grid, void **kp)
{
	for (long i = 0; i < noise; i++) {
		CUcontext ctx;
		CUdevice dev;
		cuCtxGetCurrent_params qc = { &ctx };
		cuCtxGetDevice_params qd = { &dev };
		if (i & 1)
			CALL(cuCtxGetDevice, cuCtxGetDevice, &qd, &dev);
		else
			CALL(cuCtxGetCurrent, cuCtxGetCurrent, &qc, &ctx);
	}
	return launch_block(f, grid, 256, kp);
}

/* CKPT_PROG_VMM=1: one range reserved for two 2 MiB pieces, both mapped
 * (as an expandable segment grows), through the double with callbacks:
 * every checkpoint holds them, the second flagged as continuing the range */
static void map_two_pieces(void)
{
	CUmemAllocationProp prop;
	CUmemAccessDesc acc;
	CUmemGenericAllocationHandle h[2];
	CUdeviceptr va = 0;
	const size_t gran = 2u << 20;
	CUresult r;

	memset(&prop, 0, sizeof(prop));
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	memset(&acc, 0, sizeof(acc));
	acc.location = prop.location;
	acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
	cuMemAddressReserve_params qr = { &va, 2 * gran, 0, 0, 0 };
	if ((r = CALL(cuMemAddressReserve, cuMemAddressReserve, &qr, &va, 2 * gran, 0, 0, 0)))
		die("cuMemAddressReserve", r);
	for (int i = 0; i < 2; i++) {
		cuMemCreate_params qc = { &h[i], gran, &prop, 0 };
		cuMemMap_params qm = { va + i * gran, gran, 0, 0, 0 };
		if ((r = CALL(cuMemCreate, cuMemCreate, &qc, &h[i], gran, &prop, 0)))
			die("cuMemCreate", r);
		qm.handle = h[i];
		if ((r = CALL(cuMemMap, cuMemMap, &qm, va + i * gran, gran, 0, h[i], 0)))
			die("cuMemMap", r);
	}
	cuMemSetAccess_params qa = { va, 2 * gran, &acc, 1 };
	if ((r = CALL(cuMemSetAccess, cuMemSetAccess, &qa, va, 2 * gran, &acc, 1)))
		die("cuMemSetAccess", r);
}

int main(int argc, char **argv)
{
	CUmodule mod;
	CUfunction add_one, scale, gather;
	CUdeviceptr W, B, X, I;
	static float host[N];
	static long long idx[N];
	long steps, usec = 0;
	int n = N;
	uint32_t rnd = 12345;
	CUresult r;
	size_t batch = (size_t)strtoull(getenv("CKPT_PROG_BATCH") ? getenv("CKPT_PROG_BATCH") : "0", NULL, 10);
	size_t live = (size_t)strtoull(getenv("CKPT_PROG_LIVE") ? getenv("CKPT_PROG_LIVE") : "0", NULL, 10);
	long extra = getenv("CKPT_PROG_LAUNCHES") ? atol(getenv("CKPT_PROG_LAUNCHES")) : 0;
	noise = getenv("CKPT_PROG_NOISE") ? atol(getenv("CKPT_PROG_NOISE")) : 0;
	int touch = getenv("CKPT_PROG_TOUCH") != NULL;
	CUdeviceptr XB = 0, L = 0;
	float *hb = NULL;
	int nlive = 0, nsmall = 4;
	struct timespec t0, t1, c0, c1;

	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: ckpt-prog KERNELS.CUBIN STEPS [STEP_USEC]\n");
		return 2;
	}
	steps = atol(argv[2]);
	if (argc == 4)
		usec = atol(argv[3]);
	mod = start_on_cubin(argv[1], getenv("CKPT_PROG_PLAIN") != NULL);
	if ((r = cuModuleGetFunction(&add_one, mod, "_Z7add_onePfi")) ||
	    (r = cuModuleGetFunction(&scale, mod, "_Z5scalePfPKfi")) ||
	    (r = cuModuleGetFunction(&gather, mod, "_Z6gatherPfPKfPKxi")))
		die("cuModuleGetFunction", r);

	W = alloc(N * sizeof(float));
	B = alloc(N * sizeof(float));
	X = alloc(N * sizeof(float));
	I = alloc(N * sizeof(long long));
	for (int i = 0; i < N; i++) {
		host[i] = (float)i;
		idx[i] = i;
	}
	idx[17] = 0x7f7f7f7f7f7fll;   /* wild: only gather at the end reads it */
	if (getenv("CKPT_PROG_PHANTOM")) {
		CUdeviceptr ph = 0x7e0000000000ull;
		cuMemAlloc_v2_params q = { &ph, 4096 };
		struct call c;
		enter(&c, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, "cuMemAlloc_v2", &q);
		leave(&c, CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2, CUDA_SUCCESS);
	}
	if (getenv("CKPT_PROG_VMM"))
		map_two_pieces();
	h2d(W, host, sizeof(host));
	h2d(B, host, sizeof(host));
	h2d(I, idx, sizeof(idx));
	batch -= batch % sizeof(float);
	live -= live % sizeof(float);
	if (batch || live) {
		size_t m = batch > live ? batch : live;
		if (!(hb = malloc(m)))
			die("malloc", CUDA_ERROR_OUT_OF_MEMORY);
		for (size_t i = 0; i < m / sizeof(float); i++) {
			rnd = rnd * 1103515245u + 12345u;
			hb[i] = (float)(rnd >> 8) / 16777216.0f;
		}
	}
	if (batch)
		XB = alloc(batch);
	if (live) {
		L = alloc(live);
		h2d(L, hb, live);
		nlive = touch ? (int)(live / sizeof(float)) : 1024;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);

	long pause_a = -1, pause_b = -1;
	if (getenv("CKPT_PROG_PAUSE") && sscanf(getenv("CKPT_PROG_PAUSE"), "%ld-%ld", &pause_a, &pause_b) != 2)
		die("CKPT_PROG_PAUSE (A-B)", CUDA_ERROR_INVALID_VALUE);
	for (long s = 0; s < steps; s++) {
		void *kp1[] = { &W, &n };
		if ((s == pause_a || s == pause_b) && (!capture_pause || capture_pause(s == pause_a) != 0))
			die("gpureduce_capture_pause", CUDA_ERROR_NOT_FOUND);
		void *kp2[] = { &B, &X, &n };
		for (int i = 0; i < N; i++) {
			rnd = rnd * 1103515245u + 12345u;
			host[i] = (float)(rnd >> 8);
		}
		h2d(X, host, sizeof(host));
		set_attr(add_one, s < 10 ? 1024 : 2048);   /* changes once, at step 10 */
		if ((r = launch(add_one, 4, kp1)) || (r = launch(scale, 4, kp2)))
			die("a healthy launch", r);
		if (batch) {
			/* a fresh batch: the same floats, rotated by a step-dependent amount */
			size_t nf = batch / sizeof(float), k = (size_t)(s * 7919) % nf;
			h2d(XB, hb + k, (nf - k) * sizeof(float));
			if (k)
				h2d(XB + (nf - k) * sizeof(float), hb, k * sizeof(float));
		}
		if (live) {
			void *kp3[] = { &L, &nlive };
			if ((r = launch(add_one, (unsigned)((nlive + 255) / 256), kp3)))
				die("a healthy launch", r);
		}
		for (long e = 0; e < extra; e++) {
			void *kp4[] = { &W, &nsmall };
			if ((r = launch(add_one, 1, kp4)))
				die("a healthy launch", r);
		}
		if (usec) {
			usleep((useconds_t)usec);
			if (s % 100 == 99)
				fprintf(stderr, "ckpt-prog: step %ld\n", s + 1);
		}
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
	if (batch || live || extra || getenv("CKPT_PROG_PLAIN")) {
		fprintf(stderr, "ckpt-prog: loop %.3f s\n",
			(double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
		/* the loop thread's own CPU seconds: what a loaded machine's
		 * other processes do not inflate (capture's callbacks run on
		 * this thread; its flusher thread is not counted) */
		fprintf(stderr, "ckpt-prog: loop cpu %.3f s\n",
			(double)(c1.tv_sec - c0.tv_sec) + (double)(c1.tv_nsec - c0.tv_nsec) / 1e9);
	}
	free(hb);
	{
		void *kp[] = { &B, &W, &I, &n };
		r = launch(gather, 4, kp);
		fprintf(stderr, "ckpt-prog: gather returned %d\n", (int)r);
	}
	return r ? 3 : 0;
}
