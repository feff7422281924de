/*
 * nvrtc-oob.c - a kernel compiled at run time with NVRTC (as CuPy's
 * RawKernel and cuda-python do): a particle scatter whose cell index is
 * not checked.  At step 6 a particle leaves the box and its cell id
 * (computed with a wrapping unsigned subtraction) lands 32 GiB past the
 * grid.  gpureduce capture records the program's source and options
 * (issue 24); its repro.cu shows the kernel's own text.
 * NVRTC_OOB_CLEAN=1: the host keeps a particle that left the box in the
 * border cell (cell ids clamped to [0, cells)): exits 0.
 */
#include <cuda.h>
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char kernel_src[] =
	"extern \"C\" __global__ void scatter_mass(float *grid, const unsigned long long *cell,\n"
	"                                         const float *mass, int n)\n"
	"{\n"
	"\tint i = blockIdx.x * blockDim.x + threadIdx.x;\n"
	"\tif (i < n)\n"
	"\t\tatomicAdd(&grid[cell[i]], mass[i]);   /* no check that cell[i] < cells */\n"
	"}\n";

#define CK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { const char *s_ = "?"; \
	cuGetErrorName(r_, &s_); fprintf(stderr, "%s failed: %s\n", #x, s_); exit(1); } } while (0)
#define NK(x) do { nvrtcResult r_ = (x); if (r_ != NVRTC_SUCCESS) { \
	fprintf(stderr, "%s failed: %s\n", #x, nvrtcGetErrorString(r_)); exit(2); } } while (0)

/* NVRTC_OOB_CLEAN=1 runs the same program with its bug fixed
 * (cell ids clamped to the grid): the clean variant, which must run
 * and hunt clean (issue 28, tests/gpu/hunt-clean.sh). */
static int clean_variant(void)
{
	const char *v = getenv("NVRTC_OOB_CLEAN");
	return v && strcmp(v, "1") == 0;
}

int main(void)
{
	const int n = 4096, cells = 1 << 16;
	const char *opts[] = { "--gpu-architecture=compute_90", "-lineinfo" };
	nvrtcProgram prog;
	size_t ptx_size;
	char *ptx;
	CUdevice dev;
	CUcontext ctx;
	CUmodule mod;
	CUfunction fn;
	CUdeviceptr grid, cell, mass;
	unsigned long long *hcell = malloc(n * sizeof(*hcell));
	float *hmass = malloc(n * sizeof(*hmass));
	const int clean = clean_variant();

	NK(nvrtcCreateProgram(&prog, kernel_src, "scatter_mass.cu", 0, NULL, NULL));
	NK(nvrtcCompileProgram(prog, 2, opts));
	NK(nvrtcGetPTXSize(prog, &ptx_size));
	ptx = malloc(ptx_size);
	NK(nvrtcGetPTX(prog, ptx));
	CK(cuInit(0));
	CK(cuDeviceGet(&dev, 0));
	CK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CK(cuCtxSetCurrent(ctx));
	CK(cuModuleLoadData(&mod, ptx));
	CK(cuModuleGetFunction(&fn, mod, "scatter_mass"));
	CK(cuMemAlloc(&grid, cells * sizeof(float)));
	CK(cuMemAlloc(&cell, n * sizeof(*hcell)));
	CK(cuMemAlloc(&mass, n * sizeof(*hmass)));
	for (int step = 0; step < 10; step++) {
		void *args[] = { &grid, &cell, &mass, (void *)&n };
		for (int i = 0; i < n; i++) {
			/* a cell in [0, cells) */
			hcell[i] = (unsigned long long)((i * 7919LL + step * 31) % cells);
			hmass[i] = 1.0f;
		}
		if (step == 6)   /* the particle that left the box: 2^33 floats, 32 GiB past the grid */
			hcell[1234] = 1ULL << 33;
		if (clean)       /* the fix: clamp to the box */
			for (int i = 0; i < n; i++)
				if (hcell[i] >= (unsigned long long)cells)
					hcell[i] = cells - 1;
		CK(cuMemcpyHtoD(cell, hcell, n * sizeof(*hcell)));
		CK(cuMemcpyHtoD(mass, hmass, n * sizeof(*hmass)));
		CK(cuMemsetD32(grid, 0, cells));
		CK(cuLaunchKernel(fn, (n + 255) / 256, 1, 1, 256, 1, 1, 0, NULL, args, NULL));
		CK(cuCtxSynchronize());
		printf("step %d ok\n", step);
	}
	return 0;
}
