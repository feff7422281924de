// counter.cu - sample for gpureduce: the state that leads to the fault is a
// module variable no host code ever touches, and the fault comes long after
// the trace's last checkpoint began.
//
// A streaming consumer cycles through ROWS output rows, one per step; which
// row is next is kept on the device, in the `__device__ unsigned cursor`
// that a one-thread `advance` kernel moves after each `consume` launch.  The
// row table has ROWS live entries and then retired ones, which hold the
// sentinel address 0xdead00000000.  The bug is in `advance`: it wraps when
// the cursor goes *past* ROWS, not when it reaches it, so after ROWS steps
// `consume` takes the first retired entry and writes through the sentinel:
// a certain fault on the GPU, at step 1500.
//
// Captured with a checkpoint every 500 launches (run's GPUREDUCE_CKPT_LAUNCHES),
// the trace starts about 500 launches before the fault, with `cursor`
// already at ~1250: a replay that started the module from its image
// (cursor 0) would run clean.
//
// CUDA_LAUNCH_BLOCKING=1 safe (gpureduce sets it).
//
// Build: nvcc -O2 -arch=sm_90 -o counter counter.cu
// Exit: 1 on the first CUDA error (expected), 0 if it ran clean.
// DEVICE_COUNTER_CLEAN=1: advance wraps at ROWS: exits 0.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CHECK(what, call) do { \
	cudaError_t e_ = (call); \
	if (e_ != cudaSuccess) { \
		fprintf(stderr, "counter: %s failed: %s (%s)\n", what, \
			cudaGetErrorString(e_), cudaGetErrorName(e_)); \
		exit(1); \
	} } while (0)

enum {
	ROWS = 1500,         // live rows
	RETIRED = 16,        // retired table entries after them
	ROWLEN = 256,        // floats per row
	STEPS = 1600,
};

__device__ unsigned cursor;   // the next row; never set from the host

__global__ void consume(float *const *table, const float *in, float scale)
{
	float *row = table[cursor];
	int i = threadIdx.x;
	row[i] = in[i] * scale;
}

// wrap: the buggy form wraps after the cursor passed ROWS
__global__ void advance(int fixed)
{
	unsigned c = cursor + 1;
	if (fixed ? c >= ROWS : c > ROWS)
		c = 0;
	cursor = c;
}

int main()
{
	int fixed = getenv("DEVICE_COUNTER_CLEAN") != NULL;
	float *rows, *in, **table;
	static float *host_table[ROWS + RETIRED];
	static float host_in[ROWLEN];

	CHECK("cudaMalloc rows", cudaMalloc(&rows, sizeof(float) * ROWS * ROWLEN));
	CHECK("cudaMalloc in", cudaMalloc(&in, sizeof(float) * ROWLEN));
	CHECK("cudaMalloc table", cudaMalloc(&table, sizeof(float *) * (ROWS + RETIRED)));
	for (int r = 0; r < ROWS + RETIRED; r++)
		host_table[r] = r < ROWS ? rows + (size_t)r * ROWLEN : (float *)0xdead00000000ull;
	for (int i = 0; i < ROWLEN; i++)
		host_in[i] = (float)i;
	CHECK("copy table", cudaMemcpy(table, host_table, sizeof(host_table), cudaMemcpyHostToDevice));
	CHECK("copy in", cudaMemcpy(in, host_in, sizeof(host_in), cudaMemcpyHostToDevice));
	for (int step = 0; step < STEPS; step++) {
		consume<<<1, ROWLEN>>>(table, in, 1.0f + (float)(step % 3));
		CHECK("consume", cudaGetLastError());
		advance<<<1, 1>>>(fixed);
		CHECK("advance", cudaGetLastError());
		CHECK("step sync", cudaDeviceSynchronize());
	}
	printf("counter: %d steps ran clean\n", STEPS);
	return 0;
}
