/*
 * rank-prog.c - test helper: a two-rank "data-parallel job" on the CPU driver
 * double, captured for real by libgpureduce-capture.so through the CUPTI
 * part of capture-fakecuda (as ckpt-prog.c is), for the multi-rank tests
 * (t1008-capture-ranks.sh, t5091-e2e-fold.sh).
 *
 *   rank-prog launch WORLD KERNELS.CUBIN STEPS FAULT_STEP
 *       the launcher, like torchrun: initialises CUDA (and so the capture)
 *       but launches nothing, starts WORLD workers (this program again,
 *       with RANK, LOCAL_RANK, WORLD_SIZE and DOUBLE_PEER_DIR set), and
 *       when one fails kills the others (SIGTERM) and exits 1.
 *   rank-prog worker KERNELS.CUBIN STEPS FAULT_STEP
 *       one rank.  Each step: fills recv with 0x7f bytes (a wild index
 *       everywhere), copies its gradient-like indices into send (rank 1:
 *       i; others: 0, and rank 0's [17] is 0x7f7f7f7f0000 at FAULT_STEP),
 *       launches add_one(W), the stand-in all-reduce
 *       ncclDevKernel_AllReduce_Sum_i64_RING_LL({comm, send, recv, N})
 *       (tests/double/kernels.c: it waits for its peers), then rank 1
 *       launches gather(B, W, recv, N), which reads every index from the
 *       all-reduce's output: valid every step but FAULT_STEP, where
 *       recv[17] is wild and rank 1 faults.  A replay that skipped the
 *       collective without applying its bytes faults at step 0 instead.
 *       Other ranks launch scale(B, W) and go on to the next collective,
 *       where they wait for rank 1 until the launcher kills them.
 * RANK_PROG_LATE_FAULT=MS: rank 0 also faults at FAULT_STEP, MS milliseconds
 * after the collective (so rank 1 faults first in time, rank 0 second);
 * RANK_PROG_NOKILL=1: the launcher lets the other ranks run on.
 * Exit 3 after a fault, 2 on a set-up error.
 */
#include <dlfcn.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cuda.h>
#include <cupti.h>

#define N 1000
#define PROG "rank-prog"
#include "fakeprog.h"

static int worker(const char *cubin, long steps, long fault_step)
{
	CUdevice dev;
	CUcontext ctx;
	CUmodule mod;
	CUfunction add_one, scale, gather, coll;
	CUdeviceptr W, B, comm, send, recv;
	CUpti_ModuleResourceData md;
	CUpti_ResourceData rd;
	static float host[N];
	static long long idx[N];
	long rank = atol(getenv("RANK") ? getenv("RANK") : "0");
	struct { CUdeviceptr comm, send, recv; long long count; } work;
	size_t imglen;
	void *img;
	int n = N;
	CUresult r;

	if ((r = cuInit(0)))
		die("cuInit", r);
	load_injection(0);
	if ((r = cuDeviceGet(&dev, 0)) || (r = cuDevicePrimaryCtxRetain(&ctx, dev)) || (r = cuCtxSetCurrent(ctx)))
		die("context", r);
	memset(&rd, 0, sizeof(rd));
	rd.context = ctx;
	fire(CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED, &rd);
	img = read_image(cubin, &imglen);
	if ((r = cuModuleLoadData(&mod, img)))
		die("cuModuleLoadData", r);
	md.moduleId = 1;
	md.cubinSize = imglen;
	md.pCubin = img;
	rd.resourceDescriptor = &md;
	fire(CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_MODULE_LOADED, &rd);
	if ((r = cuModuleGetFunction(&add_one, mod, "_Z7add_onePfi")) ||
	    (r = cuModuleGetFunction(&scale, mod, "_Z5scalePfPKfi")) ||
	    (r = cuModuleGetFunction(&gather, mod, "_Z6gatherPfPKfPKxi")) ||
	    (r = cuModuleGetFunction(&coll, mod, "_Z39ncclDevKernel_AllReduce_Sum_i64_RING_LL17ncclDevKernelArgs")))
		die("cuModuleGetFunction", r);
	W = alloc(N * sizeof(float));
	B = alloc(N * sizeof(float));
	comm = alloc(64);
	send = alloc(N * sizeof(long long));
	recv = alloc(N * sizeof(long long));
	for (int i = 0; i < N; i++)
		host[i] = (float)i;
	h2d(W, host, sizeof(host));
	memset8(comm, 0, 64);
	work.comm = comm;
	work.send = send;
	work.recv = recv;
	work.count = N;
	for (long s = 0; s < steps; s++) {
		void *kp1[] = { &W, &n };
		void *kpc[] = { &work };
		for (int i = 0; i < N; i++)
			idx[i] = rank == 1 ? i : 0;
		if (rank == 0 && s == fault_step)
			idx[17] = 0x7f7f7f7f0000ll;   /* a bad contribution: harmless alone */
		memset8(recv, 0x7f, N * sizeof(long long));
		h2d(send, idx, sizeof(idx));
		if ((r = launch_block(add_one, 4, 256, kp1)))
			die("add_one", r);
		if ((r = launch_block(coll, 1, 1, kpc)))
			die("the all-reduce", r);
		if (rank == 0 && s == fault_step && getenv("RANK_PROG_LATE_FAULT")) {
			struct timespec ts = { 0, atol(getenv("RANK_PROG_LATE_FAULT")) * 1000000L };
			nanosleep(&ts, NULL);
		}
		if (rank == 1 || (rank == 0 && s == fault_step && getenv("RANK_PROG_LATE_FAULT"))) {
			void *kpg[] = { &B, &W, &recv, &n };
			if ((r = launch_block(gather, 4, 256, kpg))) {
				fprintf(stderr, "rank-prog: rank %ld step %ld: gather returned %d\n", rank, s, (int)r);
				return 3;
			}
		} else {
			void *kps[] = { &B, &W, &n };
			if ((r = launch_block(scale, 4, 256, kps)))
				die("scale", r);
		}
	}
	return 0;
}

static int launcher(int world, char **argv)
{
	char dir[] = "/tmp/rank-prog-XXXXXX", buf[64];
	pid_t *pids = calloc((size_t)world, sizeof(pid_t));
	int ret = 0, left = world;
	CUresult r;

	if ((r = cuInit(0)))   /* as torchrun's parent may: CUDA, no launches */
		die("cuInit", r);
	load_injection(0);
	if (!pids || !mkdtemp(dir)) {
		perror("rank-prog");
		return 2;
	}
	setenv("DOUBLE_PEER_DIR", dir, 1);
	snprintf(buf, sizeof(buf), "%d", world);
	setenv("WORLD_SIZE", buf, 1);
	for (int i = 0; i < world; i++) {
		pids[i] = fork();
		if (pids[i] < 0)
			return 2;
		if (pids[i] == 0) {
			char *args[] = { argv[0], "worker", argv[3], argv[4], argv[5], NULL };
			snprintf(buf, sizeof(buf), "%d", i);
			setenv("RANK", buf, 1);
			setenv("LOCAL_RANK", buf, 1);
			execv("/proc/self/exe", args);
			_exit(127);
		}
	}
	while (left > 0) {
		int st;
		pid_t p = wait(&st);
		if (p < 0)
			break;
		left--;
		if ((!WIFEXITED(st) || WEXITSTATUS(st)) && !ret && getenv("RANK_PROG_NOKILL"))
			ret = 1;
		if ((!WIFEXITED(st) || WEXITSTATUS(st)) && !ret) {
			/* one rank failed: end the job, as torchrun does */
			fprintf(stderr, "rank-prog: worker %d failed; stopping the others\n", (int)p);
			for (int i = 0; i < world; i++)
				if (pids[i] != p)
					kill(pids[i], SIGTERM);
			ret = 1;
		}
	}
	{
		char cmd[128];
		snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
		if (system(cmd)) { /* best effort */ }
	}
	free(pids);
	return ret;
}

int main(int argc, char **argv)
{
	if (argc == 6 && !strcmp(argv[1], "launch"))
		return launcher(atoi(argv[2]), argv);
	if (argc == 5 && !strcmp(argv[1], "worker"))
		return worker(argv[2], atol(argv[3]), atol(argv[4]));
	fprintf(stderr, "usage: rank-prog launch WORLD KERNELS.CUBIN STEPS FAULT_STEP\n"
		"       rank-prog worker KERNELS.CUBIN STEPS FAULT_STEP\n");
	return 2;
}
