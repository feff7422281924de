// plan.cu - sample for gpureduce: a scatter whose buffers and stride reach
// the kernel only through __constant__ memory.
//
// A resampler keeps its launch plan in a __constant__ struct (source and
// destination pointers, row count, output stride) set once per shape with
// cudaMemcpyToSymbol, and a __constant__ table of filter taps; the kernel
// takes only the row offset as a parameter.  When the output shape changes
// at step 3 the plan is rebuilt with the stride in bytes instead of
// elements (dst_stride = cols * sizeof(float)), so row r is written at
// dst + r * 4 * cols floats: rows past the first quarter land past the end
// of the 4 MiB destination, up to 12 MiB out, and the write faults
// (CUDA_ERROR_ILLEGAL_ADDRESS in resample_rows).  No parameter points at
// anything: a replay (and a repro) must restore the constant plan,
// relocating the two pointers inside it, or the kernel returns early on its
// null check and nothing faults.
//
// Build: nvcc -O2 -arch=sm_90 -o plan plan.cu
// Exit: 1 on the first CUDA error (expected), 0 if it ran clean.
// CONSTANT_PLAN_CLEAN=1: the stride is in elements, as the kernel expects:
// exits 0.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

#define CHECK(what, call) do { \
	cudaError_t e_ = (call); \
	if (e_ != cudaSuccess) { \
		fprintf(stderr, "plan: %s failed: %s (%s)\n", what, \
			cudaGetErrorString(e_), cudaGetErrorName(e_)); \
		exit(1); \
	} } while (0)

struct Plan {
	const float *src;     // rows x cols input
	float *dst;           // rows x cols output
	int rows, cols;
	long dst_stride;      // elements between output rows
};

__constant__ Plan plan;
__constant__ float taps[5];

// One block per row: a 5-tap horizontal filter from src into dst.
__global__ void resample_rows(int row0)
{
	if (!plan.src || !plan.dst)
		return;         // no plan yet
	int r = row0 + blockIdx.x;
	if (r >= plan.rows)
		return;
	for (int c = threadIdx.x; c < plan.cols; c += blockDim.x) {
		float acc = 0.f;
		for (int k = -2; k <= 2; k++) {
			int cc = min(max(c + k, 0), plan.cols - 1);
			acc += taps[k + 2] * plan.src[(long)r * plan.cols + cc];
		}
		plan.dst[(long)r * plan.dst_stride + c] = acc;   // BUG at step 3: stride in bytes
	}
}

static int clean_variant(void)
{
	const char *v = getenv("CONSTANT_PLAN_CLEAN");
	return v && strcmp(v, "1") == 0;
}

int main(void)
{
	enum { ROWS = 4096, COLS = 256, STEPS = 5, PER_LAUNCH = 512 };
	const float h_taps[5] = { 0.0625f, 0.25f, 0.375f, 0.25f, 0.0625f };
	float *src, *dst, *h = (float *)malloc(sizeof(float) * ROWS * COLS);
	double sum = 0;

	for (int i = 0; i < ROWS * COLS; i++)
		h[i] = (float)(i % 97) / 97.f;
	CHECK("cudaMalloc src", cudaMalloc(&src, sizeof(float) * ROWS * COLS));
	CHECK("cudaMalloc dst", cudaMalloc(&dst, sizeof(float) * ROWS * COLS));
	CHECK("copy src", cudaMemcpy(src, h, sizeof(float) * ROWS * COLS, cudaMemcpyHostToDevice));
	CHECK("set taps", cudaMemcpyToSymbol(taps, h_taps, sizeof(h_taps)));
	for (int step = 0; step < STEPS; step++) {
		int cols = step < 3 ? COLS / 2 : COLS;   // the output widens at step 3
		Plan p = { src, dst, ROWS, cols, cols };
		if (step >= 3 && !clean_variant())
			p.dst_stride = (long)cols * sizeof(float);   // BUG: bytes, not elements
		CHECK("set plan", cudaMemcpyToSymbol(plan, &p, sizeof(p)));
		printf("plan: step %d, %d x %d, stride %ld\n", step, ROWS, cols, p.dst_stride);
		for (int row0 = 0; row0 < ROWS; row0 += PER_LAUNCH) {
			resample_rows<<<PER_LAUNCH, 128>>>(row0);
			CHECK("resample_rows", cudaGetLastError());
		}
		CHECK("sync", cudaDeviceSynchronize());
	}
	CHECK("read dst", cudaMemcpy(h, dst, sizeof(float) * ROWS * COLS, cudaMemcpyDeviceToHost));
	for (int i = 0; i < ROWS * COLS; i++)
		sum += h[i];
	printf("plan: checksum %.3f\n", sum);
	return 0;
}
