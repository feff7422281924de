/*
 * ipc-prog.c - test helper for t5115-e2e-ipc.sh: a kernel that reads an
 * index table another process owns and writes, reached through CUDA IPC
 * (cuIpcGetMemHandle / cuIpcOpenMemHandle), as a serving engine reads
 * tensors a trainer process shares with it.  The importer is captured for
 * real by libgpureduce-capture.so on the CPU driver double (fakeprog.h);
 * the exporter is a second process on the double that loads no capture
 * library, so nothing in the captured process ever copies the table.
 *
 *   ipc-prog KERNELS.CUBIN [extmem|gfx|hidden]
 *
 * Before any driver call the program forks.  The child (exporter)
 * allocates the table P (1000 long long), shares it, and at each step the
 * parent asks for writes a new permutation into it (cuMemcpyHtoD in its
 * own process); at step 4 it also writes a wild index into P[17].  The
 * parent (importer) opens the handle and per step: asks for the step's
 * table, copies W in, launches add_one(B) (no pointer into P) and then
 * gather(B, W, P, 1000); at step 2 it instead copies P into its own
 * buffer Q (cuMemcpyDtoD) and gathers through Q.  The step-4 gather
 * faults.  Exit 3 after the fault, 0 if none came, 2 on a set-up error.
 *
 * extmem, gfx: no second process; the table is device memory another API
 * owns and writes (Vulkan or OpenGL interop): the program allocates and
 * fills it with plain driver calls that fire no callbacks, so capture
 * never sees them, and only the call that hands it over is fired: with
 * extmem cuExternalMemoryGetMappedBuffer once (size from the buffer
 * descriptor); with gfx cuGraphicsResourceGetMappedPointer at every step
 * (after the API's write) and cuGraphicsUnmapResources after the step's
 * gather (the pointer is valid only while mapped); with hidden no call at
 * all (memory from a path capture does not hook: capture/foreign.c).
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cuda.h>
#include <cupti.h>

#define N 1000
#define PROG "ipc-prog"
#include "fakeprog.h"

static void fill_table(long long *table, int step)
{
	for (int i = 0; i < N; i++)
		table[i] = (i * 7 + step) % N;
	if (step == 4)
		table[17] = 0x7f7f7f7f7f7fll;   /* wild */
}

static int full_read(int fd, void *buf, size_t n)
{
	char *p = buf;
	while (n) {
		ssize_t k = read(fd, p, n);
		if (k <= 0)
			return -1;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

/* The exporter: plain driver calls, no capture.  Serves steps until the
 * importer closes its end. */
static int exporter(int cmd, int ack)
{
	long long table[N];
	CUipcMemHandle h;
	CUdevice dev;
	CUcontext ctx;
	CUdeviceptr P;
	int step;

	if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) || cuCtxSetCurrent(ctx) ||
	    cuMemAlloc(&P, sizeof(table)) || cuIpcGetMemHandle(&h, P) ||
	    write(ack, &h, sizeof(h)) != (ssize_t)sizeof(h))
		return 2;
	while (full_read(cmd, &step, sizeof(step)) == 0) {
		fill_table(table, step);
		if (cuMemcpyHtoD(P, table, sizeof(table)) || write(ack, "k", 1) != 1)
			return 2;
	}
	cuMemFree(P);
	return 0;
}

/* gfx: the resource handle the program maps (never dereferenced) */
#define RESOURCE ((CUgraphicsResource)(uintptr_t)0x6f6f)

static void gfx_map(CUdeviceptr P)
{
	CUdeviceptr got = P;
	size_t size = N * sizeof(long long);
	cuGraphicsResourceGetMappedPointer_v2_params q = { &got, &size, RESOURCE };
	struct call c;
	enter(&c, CUPTI_DRIVER_TRACE_CBID_cuGraphicsResourceGetMappedPointer_v2,
	      "cuGraphicsResourceGetMappedPointer_v2", &q);
	leave(&c, CUPTI_DRIVER_TRACE_CBID_cuGraphicsResourceGetMappedPointer_v2, CUDA_SUCCESS);
}

static void gfx_unmap(void)
{
	CUgraphicsResource res[1] = { RESOURCE };
	cuGraphicsUnmapResources_params q = { 1, res, NULL };
	struct call c;
	enter(&c, CUPTI_DRIVER_TRACE_CBID_cuGraphicsUnmapResources, "cuGraphicsUnmapResources", &q);
	leave(&c, CUPTI_DRIVER_TRACE_CBID_cuGraphicsUnmapResources, CUDA_SUCCESS);
}

int main(int argc, char **argv)
{
	int to_exp[2], from_exp[2], status;
	CUipcMemHandle h;
	CUmodule mod;
	CUfunction gather, add;
	CUdeviceptr W, B, Q, P = 0;
	float S[N];
	int n = N;
	pid_t pid = 0;
	char k;
	CUresult r = CUDA_SUCCESS;
	const char *mode = argc > 2 ? argv[2] : "ipc";
	int ipc = !strcmp(mode, "ipc"), gfx = !strcmp(mode, "gfx"), hidden = !strcmp(mode, "hidden");
	long long table[N];

	if (argc < 2 || argc > 3 || (!ipc && !gfx && !hidden && strcmp(mode, "extmem"))) {
		fprintf(stderr, "usage: ipc-prog KERNELS.CUBIN [extmem|gfx|hidden]\n");
		return 2;
	}
	if (!ipc) {
		CUDA_EXTERNAL_MEMORY_BUFFER_DESC desc = { 0, N * sizeof(long long), 0, { 0 } };
		CUexternalMemory ext = (CUexternalMemory)(uintptr_t)0x5e5e;
		mod = start_on_cubin(argv[1], 0);
		if ((r = cuMemAlloc(&P, N * sizeof(long long))))   /* no callback: the other API's */
			die("cuMemAlloc", r);
		if (!gfx && !hidden) {
			cuExternalMemoryGetMappedBuffer_params q = { &P, ext, &desc };
			struct call c;
			enter(&c, CUPTI_DRIVER_TRACE_CBID_cuExternalMemoryGetMappedBuffer,
			      "cuExternalMemoryGetMappedBuffer", &q);
			leave(&c, CUPTI_DRIVER_TRACE_CBID_cuExternalMemoryGetMappedBuffer, CUDA_SUCCESS);
		}
		goto opened;
	}
	signal(SIGPIPE, SIG_IGN);
	if (pipe(to_exp) || pipe(from_exp) || (pid = fork()) < 0) {
		perror(PROG ": pipe/fork");
		return 2;
	}
	if (pid == 0) {
		close(to_exp[1]);
		close(from_exp[0]);
		_exit(exporter(to_exp[0], from_exp[1]));
	}
	close(to_exp[0]);
	close(from_exp[1]);
	if (full_read(from_exp[0], &h, sizeof(h))) {
		fprintf(stderr, PROG ": the exporter sent no handle\n");
		return 2;
	}
	mod = start_on_cubin(argv[1], 0);
	{
		cuIpcOpenMemHandle_v2_params q = { &P, h, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS };
		r = CALL(cuIpcOpenMemHandle, cuIpcOpenMemHandle_v2, &q, &P, h,
			 CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
		if (r || !P)
			die("cuIpcOpenMemHandle", r);
	}
opened:
	if ((r = cuModuleGetFunction(&gather, mod, "_Z6gatherPfPKfPKxi")) ||
	    (r = cuModuleGetFunction(&add, mod, "_Z7add_onePfi")))
		die("cuModuleGetFunction", r);
	W = alloc(N * sizeof(float));
	B = alloc(N * sizeof(float));
	Q = alloc(N * sizeof(long long));
	for (int step = 0; step < 5; step++) {
		if (!ipc) {
			fill_table(table, step);   /* the other API writes it: no callback */
			if ((r = cuMemcpyHtoD(P, table, sizeof(table))))
				die("cuMemcpyHtoD", r);
			if (gfx)
				gfx_map(P);
		} else if (write(to_exp[1], &step, sizeof(step)) != (ssize_t)sizeof(step) ||
			   full_read(from_exp[0], &k, 1)) {
			fprintf(stderr, PROG ": the exporter stopped at step %d\n", step);
			return 2;
		}
		for (int i = 0; i < N; i++)
			S[i] = (float)(i + step);
		h2d(W, S, sizeof(S));
		{
			void *kp[] = { &B, &n };
			if ((r = launch_block(add, 4, 256, kp)))
				die("add_one", r);
		}
		if (step == 2) {
			cuMemcpyDtoD_v2_params q = { Q, P, N * sizeof(long long) };
			if ((r = CALL(cuMemcpyDtoD, cuMemcpyDtoD_v2, &q, Q, P, N * sizeof(long long))))
				die("cuMemcpyDtoD", r);
			void *kp[] = { &B, &W, &Q, &n };
			r = launch_block(gather, 4, 256, kp);
		} else {
			void *kp[] = { &B, &W, &P, &n };
			r = launch_block(gather, 4, 256, kp);
		}
		if (r)
			break;
		if (gfx)
			gfx_unmap();
	}
	fprintf(stderr, "ipc-prog: gather returned %d\n", (int)r);
	if (!ipc)
		return r ? 3 : 0;
	close(to_exp[1]);
	waitpid(pid, &status, 0);
	return r ? 3 : 0;
}
