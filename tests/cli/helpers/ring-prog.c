/*
 * ring-prog.c - test helper for t7012-checkpoint-module-vars.sh: a kernel
 * that keeps its state in its module's own variable (ring_write advances
 * the __device__ d_counter at each launch), captured for real by
 * libgpureduce-capture.so on the CPU driver double (fakeprog.h).  The
 * program never names d_counter to the driver.
 *
 *   ring-prog KERNELS.CUBIN LAUNCHES [RELOAD]
 *
 * Allocates out (4096 bytes: 1024 floats) and launches ring_write(out)
 * up to LAUNCHES times; launch k writes out[k], so the 1025th (#1024)
 * writes past the end and faults.  With RELOAD, after RELOAD launches the
 * module is unloaded and loaded again (as module 2: its d_counter starts
 * at 0 again, so the fault comes 1024 launches after that).  Exit 3 after
 * the fault, 0 if none, 2 on a set-up error.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>
#include <cupti.h>

#define PROG "ring-prog"
#include "fakeprog.h"

/* Unload mod (its callback first, as the driver does) and load the image
 * again as module 2; *ring gets the new module's ring_write. */
static CUmodule reload_module(const char *path, CUmodule mod, CUfunction *ring)
{
	CUpti_ModuleResourceData md;
	CUcontext ctx = NULL;
	CUmodule m2;
	size_t len;
	void *img = read_image(path, &len);
	CUresult r;

	cuCtxGetCurrent(&ctx);
	memset(&md, 0, sizeof(md));
	md.moduleId = 1;
	md.cubinSize = len;
	md.pCubin = img;
	resource_ctx(CUPTI_CBID_RESOURCE_MODULE_UNLOAD_STARTING, ctx, &md);
	if ((r = cuModuleUnload(mod)))
		die("cuModuleUnload", r);
	if ((r = cuModuleLoadData(&m2, img)))
		die("cuModuleLoadData", r);
	md.moduleId = 2;
	resource_ctx(CUPTI_CBID_RESOURCE_MODULE_LOADED, ctx, &md);
	if ((r = cuModuleGetFunction(ring, m2, "_Z10ring_writePf")))
		die("cuModuleGetFunction", r);
	return m2;
}

int main(int argc, char **argv)
{
	CUmodule mod;
	CUfunction ring;
	CUdeviceptr out;
	CUresult r = CUDA_SUCCESS;
	long n, k;

	long reload = argc > 3 ? atol(argv[3]) : -1;

	if (argc < 3 || argc > 4 || (n = atol(argv[2])) <= 0) {
		fprintf(stderr, "usage: ring-prog KERNELS.CUBIN LAUNCHES [RELOAD]\n");
		return 2;
	}
	mod = start_on_cubin(argv[1], 0);
	if ((r = cuModuleGetFunction(&ring, mod, "_Z10ring_writePf")))
		die("cuModuleGetFunction", r);
	out = alloc(4096);
	for (k = 0; k < n; k++) {
		void *kp[] = { &out };
		if (k == reload)
			mod = reload_module(argv[1], mod, &ring);
		if ((r = launch_block(ring, 1, 32, kp)))
			break;
	}
	fprintf(stderr, "ring-prog: %ld launches, the last returned %d\n", k < n ? k + 1 : n, (int)r);
	return r ? 3 : 0;
}
