// global.cu - sample for gpureduce: a misaligned write into a module
// __device__ variable (NVIDIA's memcheck demo, grown into a small program).
//
// A log parser counts records per kind in __device__ counters.  The counters
// used to be bytes; `hits` became an int, but the kernel still addresses it
// as "the counter block plus kind bytes".  Kind 0 lands on the int; the
// first record of kind 1 (step 4) writes 4 bytes at &hits + 1: misaligned,
// CUDA_ERROR_MISALIGNED_ADDRESS.  No parameter points at the variable, so a
// diagnosis in terms of buffers would call the address "far from every
// buffer"; gpureduce names it: 1 byte into module global `hits`.
//
// Build: nvcc -O2 -arch=sm_90 -o global global.cu
// Exit: 1 on the first CUDA error (expected), 0 if it ran clean.
// DEVICE_GLOBAL_CLEAN=1: the kernel counts into `hits` itself (an int, no
// byte offset; the module flag `int_counter`, set once by the host with
// cudaMemcpyToSymbol like `limit`): exits 0.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

#define CHECK(what, call) do { \
	cudaError_t e_ = (call); \
	if (e_ != cudaSuccess) { \
		fprintf(stderr, "global: %s failed: %s (%s)\n", what, \
			cudaGetErrorString(e_), cudaGetErrorName(e_)); \
		exit(1); \
	} } while (0)

__device__ int hits;         // records seen, all kinds
__device__ int limit;        // set by the host with cudaMemcpyToSymbol
__device__ int int_counter;  // 1 in the clean variant (the fix), else 0

// Count one record of `kind`; BUG: byte offsets into an int counter.
__global__ void count_kind(const int *records, int n, int kind)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n && i < limit && records[i] == kind && i == 0) {
		if (int_counter)     // the fix (clean variant only)
			hits += 1;
		else
			*(int *)((char *)&hits + kind) += 1;
	}
}

// DEVICE_GLOBAL_CLEAN=1 runs the same program with its bug fixed
// (an int counter, no byte offset): the clean variant, which must run
// and hunt clean (issue 28, tests/gpu/hunt-clean.sh).
static int clean_variant(void)
{
	const char *v = getenv("DEVICE_GLOBAL_CLEAN");
	return v && strcmp(v, "1") == 0;
}

int main(void)
{
	enum { N = 256, STEPS = 6 };
	int *records, h[N], host_limit = N, total = 0;

	CHECK("cudaMalloc", cudaMalloc(&records, sizeof(h)));
	CHECK("set limit", cudaMemcpyToSymbol(limit, &host_limit, sizeof(int)));
	if (clean_variant()) {
		int one = 1;
		CHECK("set int_counter", cudaMemcpyToSymbol(int_counter, &one, sizeof(int)));
	}
	for (int step = 0; step < STEPS; step++) {
		int kind = step < 4 ? 0 : 1;   // the first kind-1 record arrives at step 4
		for (int i = 0; i < N; i++)
			h[i] = kind;
		CHECK("copy records", cudaMemcpy(records, h, sizeof(h), cudaMemcpyHostToDevice));
		printf("global: step %d, kind %d\n", step, kind);
		count_kind<<<1, N>>>(records, N, kind);
		CHECK("count_kind", cudaGetLastError());
		CHECK("sync", cudaDeviceSynchronize());
	}
	CHECK("read hits", cudaMemcpyFromSymbol(&total, hits, sizeof(int)));
	printf("global: %d hits\n", total);
	return 0;
}
