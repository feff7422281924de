// lineinfo-assert.cu - a histogram kernel built with -lineinfo that checks
// its bin with assert(): at step 4 a reading of 1.0 (the sensor's maximum,
// which the binning formula maps to bin == bins) trips it.  The assert's
// own message names this file and line; gpureduce's repro.cu and report
// show these lines with the faulting one marked (issue 24).
// LINEINFO_ASSERT_CLEAN=1: the top reading goes into the last bin (the module
// flag `clamp_top`, set once by the host): the assert holds, exits 0.
#include <cassert>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

__device__ int clamp_top;   // 1 in the clean variant (the fix), else 0

__global__ void histogram(const float *x, unsigned *hist, int n, int bins)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i >= n)
		return;
	int bin = (int)(x[i] * bins);          // x in [0, 1]: x == 1.0 gives bins
	if (clamp_top && bin == bins)          // the fix (clean variant only)
		bin = bins - 1;
	assert(bin >= 0 && bin < bins);
	atomicAdd(&hist[bin], 1u);
}

// LINEINFO_ASSERT_CLEAN=1 runs the same program with its bug fixed
// (x == 1.0 counted in the last bin): the clean variant, which must run
// and hunt clean (issue 28, tests/gpu/hunt-clean.sh).
static int clean_variant(void)
{
	const char *v = getenv("LINEINFO_ASSERT_CLEAN");
	return v && strcmp(v, "1") == 0;
}

int main()
{
	const int n = 1 << 16, bins = 64;
	float *hx = new float[n], *x;
	unsigned *hist;
	cudaMalloc(&x, n * sizeof(float));
	cudaMalloc(&hist, bins * sizeof(unsigned));
	if (clean_variant()) {
		int one = 1;
		cudaMemcpyToSymbol(clamp_top, &one, sizeof(one));
	}
	for (int step = 0; step < 8; step++) {
		for (int i = 0; i < n; i++)
			hx[i] = (float)((i * 2654435761u + step) % 1000003u) / 1000003.0f;
		if (step == 4)
			hx[777] = 1.0f;                  // the sensor's maximum reading
		cudaMemcpy(x, hx, n * sizeof(float), cudaMemcpyHostToDevice);
		cudaMemset(hist, 0, bins * sizeof(unsigned));
		histogram<<<(n + 255) / 256, 256>>>(x, hist, n, bins);
		cudaError_t e = cudaDeviceSynchronize();
		if (e != cudaSuccess) {
			fprintf(stderr, "step %d: %s\n", step, cudaGetErrorString(e));
			return 1;
		}
		printf("step %d ok\n", step);
	}
	return 0;
}
