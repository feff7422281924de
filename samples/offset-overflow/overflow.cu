// overflow.cu - sample for gpureduce: a fault that needs hundreds of earlier
// launches.  An embedding-bag style loop keeps running row offsets on the
// GPU in int32; every step adds each bag's length.  After ~214 steps the
// offsets pass 2^31 and wrap negative, and `gather_rows` -- which has no
// bounds check -- turns the offset into a row with `(size_t)offset / 32768`:
// the cast sign-extends, the row becomes ~2^49, and the read lands ~32 PiB
// past the table: a certain fault on the original GPU.
//
// Why it is here: the faulting launch depends on the device data that all
// earlier `advance_offsets` launches produced.  Slicing at the fault (a
// snapshot of the buffers the launch reaches) gets a one-launch repro at
// once; plain ddmin over launches has to keep every one of those ~214
// producers among ~860 launches, which takes it many replays.  `make bench`
// compares the two on this sample.
//
// Build: nvcc -O2 -arch=sm_90 -o overflow overflow.cu
// Exit: 1 on the first CUDA error (expected), 0 if it ran clean.
// OFFSET_OVERFLOW_CLEAN=1: gather_rows checks the row against the table (a
// row past it, from a wrapped offset, gives a zero row) through the module
// flag `bounds_checked` the host sets once: all steps run, exits 0.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

#define CHECK(what, call) do { \
	cudaError_t e_ = (call); \
	if (e_ != cudaSuccess) { \
		fprintf(stderr, "overflow: %s failed: %s (%s)\n", what, \
			cudaGetErrorString(e_), cudaGetErrorName(e_)); \
		exit(1); \
	} } while (0)

enum { BAGS = 1024, ROWS = 65536, DIM = 16, STEPS = 400 };

__device__ int bounds_checked;   // 1 in the clean variant (the fix), else 0

// offsets[i] += lengths[i]: int32 on purpose (the bug: it wraps).
__global__ void advance_offsets(int *offsets, const int *lengths, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		offsets[i] += lengths[i];
}

// out[b, :] = table[offsets[b] / 32768, :] -- no check that the row is < rows.
__global__ void gather_rows(float *out, const float *table, const int *offsets, int bags, int rows)
{
	int b = blockIdx.x;
	int d = threadIdx.x;
	if (b >= bags || d >= DIM)
		return;
	size_t row = (size_t)offsets[b] / 32768;   // BUG: a wrapped offset sign-extends to ~2^64
	if (bounds_checked && row >= (size_t)rows) {   // the fix (clean variant only)
		out[(size_t)b * DIM + d] = 0.0f;
		return;
	}
	out[(size_t)b * DIM + d] = table[row * DIM + d];
}

// unrelated work every step, as a training loop has
__global__ void scale_rows(float *x, int n, float s)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] *= s;
}

__global__ void add_rows(float *acc, const float *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		acc[i] += x[i];
}

// OFFSET_OVERFLOW_CLEAN=1 runs the same program with its bug fixed
// (rows checked against the table): the clean variant, which must run
// and hunt clean (issue 28, tests/gpu/hunt-clean.sh).
static int clean_variant(void)
{
	const char *v = getenv("OFFSET_OVERFLOW_CLEAN");
	return v && strcmp(v, "1") == 0;
}

int main()
{
	int *offsets, *lengths;
	float *table, *out, *acc;
	static int h_len[BAGS], h_off[BAGS];
	static float h_table[ROWS * DIM];

	for (int i = 0; i < BAGS; i++) {
		h_off[i] = i;
		h_len[i] = 10000000 + 997 * i;   // big bags: the sum passes 2^31 in ~214 steps
	}
	for (int i = 0; i < ROWS * DIM; i++)
		h_table[i] = (float)(i % 1000) * 0.001f;
	CHECK("cudaMalloc", cudaMalloc(&offsets, sizeof(h_off)));
	CHECK("cudaMalloc", cudaMalloc(&lengths, sizeof(h_len)));
	CHECK("cudaMalloc", cudaMalloc(&table, sizeof(h_table)));
	CHECK("cudaMalloc", cudaMalloc(&out, BAGS * DIM * sizeof(float)));
	CHECK("cudaMalloc", cudaMalloc(&acc, BAGS * DIM * sizeof(float)));
	CHECK("copy", cudaMemcpy(offsets, h_off, sizeof(h_off), cudaMemcpyHostToDevice));
	CHECK("copy", cudaMemcpy(lengths, h_len, sizeof(h_len), cudaMemcpyHostToDevice));
	CHECK("copy", cudaMemcpy(table, h_table, sizeof(h_table), cudaMemcpyHostToDevice));
	CHECK("memset", cudaMemset(acc, 0, BAGS * DIM * sizeof(float)));
	if (clean_variant()) {
		int one = 1;
		CHECK("set bounds_checked", cudaMemcpyToSymbol(bounds_checked, &one, sizeof(one)));
	}
	printf("overflow: %d bags, a %d-row table (%zu KiB), %d steps\n", BAGS, ROWS,
	       sizeof(h_table) / 1024, STEPS);
	for (int step = 0; step < STEPS; step++) {
		advance_offsets<<<(BAGS + 255) / 256, 256>>>(offsets, lengths, BAGS);
		CHECK("advance_offsets", cudaDeviceSynchronize());
		gather_rows<<<BAGS, 32>>>(out, table, offsets, BAGS, ROWS);
		CHECK("gather_rows", cudaDeviceSynchronize());
		scale_rows<<<(BAGS * DIM + 255) / 256, 256>>>(out, BAGS * DIM, 0.5f);
		add_rows<<<(BAGS * DIM + 255) / 256, 256>>>(acc, out, BAGS * DIM);
		CHECK("step", cudaDeviceSynchronize());
		if (step % 50 == 0)
			printf("overflow: step %d ok\n", step);
	}
	printf("overflow: all %d steps ran (the offsets never wrapped?)\n", STEPS);
	return 0;
}
