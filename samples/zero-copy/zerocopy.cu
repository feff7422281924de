// zerocopy.cu - sample for gpureduce: bad data that reaches the GPU without
// any copy call, through mapped pinned host memory ("zero-copy").
//
// A streaming service posts work items ({offset, count} into a device-side
// pool of float4 records) into a small ring in pinned host memory allocated
// with cudaHostAllocMapped; the kernel reads the ring through its device
// pointer (cudaHostGetDevicePointer), straight from host memory.  No
// cudaMemcpy carries the items, so a trace of copies alone never sees them.
//
// The bug is on the host.  When a step has fewer items than ring slots, the
// producer marks the spare slots EMPTY (offset 0xFFFFFFFF) but leaves their
// count as it was, and the kernel only checks the count.  At step 5 the
// queue runs short: a block reads pool + 0xFFFFFFFF float4s, 64 GiB past the
// pool: a certain fault on the GPU.
//
// CUDA_LAUNCH_BLOCKING=1 safe (gpureduce sets it); the program synchronizes
// after each step before the CPU writes the ring again.
//
// Build: nvcc -O2 -arch=sm_90 -o zerocopy zerocopy.cu
// Exit: 1 on the first CUDA error (expected), 0 if it ran clean.
// ZERO_COPY_CLEAN=1: the producer clears an EMPTY slot's count too (count 0),
// so consume reads nothing for it: exits 0.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

#define CHECK(what, call) do { \
	cudaError_t e_ = (call); \
	if (e_ != cudaSuccess) { \
		fprintf(stderr, "zerocopy: %s failed: %s (%s)\n", what, \
			cudaGetErrorString(e_), cudaGetErrorName(e_)); \
		exit(1); \
	} } while (0)

enum {
	POOL = 1 << 16,      // float4 records in the pool
	SLOTS = 32,          // ring slots, one block each
	MAXCOUNT = 128,      // records per item
	STEPS = 8,
	SHORT_STEP = 5,      // the step whose queue has fewer items than slots
};
#define EMPTY 0xFFFFFFFFu

struct Item {
	unsigned offset;     // first record in the pool
	unsigned count;      // records
};

// out[slot] = sum of the item's records -- trusts the item's offset.
__global__ void consume(float4 *out, const float4 *pool, const Item *ring)
{
	int slot = blockIdx.x;
	Item it = ring[slot];                 // read from host memory
	__shared__ float4 part[MAXCOUNT];
	int t = threadIdx.x;
	float4 v = make_float4(0, 0, 0, 0);
	if (t < it.count)                    // BUG: EMPTY slots keep their count
		v = pool[(size_t)it.offset + t];
	part[t] = v;
	__syncthreads();
	if (t == 0) {
		float4 s = make_float4(0, 0, 0, 0);
		for (int k = 0; k < blockDim.x; k++) {
			s.x += part[k].x; s.y += part[k].y; s.z += part[k].z; s.w += part[k].w;
		}
		out[slot] = s;
	}
}

// ZERO_COPY_CLEAN=1 runs the same program with its bug fixed
// (EMPTY slots get count 0): the clean variant, which must run
// and hunt clean (issue 28, tests/gpu/hunt-clean.sh).
static int clean_variant(void)
{
	const char *v = getenv("ZERO_COPY_CLEAN");
	return v && strcmp(v, "1") == 0;
}

int main(void)
{
	float4 *pool, *out;
	Item *ring, *d_ring;
	float4 *h_pool = (float4 *)malloc(POOL * sizeof(float4));
	static float4 h_out[SLOTS];
	double total = 0;
	const int clean = clean_variant();

	if (!h_pool)
		return 2;
	for (int k = 0; k < POOL; k++)
		h_pool[k] = make_float4(k % 7, k % 11, k % 13, 1);
	CHECK("cudaMalloc pool", cudaMalloc(&pool, POOL * sizeof(float4)));
	CHECK("cudaMalloc out", cudaMalloc(&out, SLOTS * sizeof(float4)));
	CHECK("copy pool", cudaMemcpy(pool, h_pool, POOL * sizeof(float4), cudaMemcpyHostToDevice));
	CHECK("cudaHostAlloc ring", cudaHostAlloc(&ring, SLOTS * sizeof(Item), cudaHostAllocMapped));
	CHECK("cudaHostGetDevicePointer", cudaHostGetDevicePointer(&d_ring, ring, 0));

	for (int step = 0; step < STEPS; step++) {
		int items = step == SHORT_STEP ? SLOTS - 3 : SLOTS;
		// the CPU posts this step's items straight into the mapped ring
		for (int s = 0; s < SLOTS; s++) {
			if (s < items) {
				ring[s].offset = (unsigned)((step * 7919 + s * 1543) % (POOL - MAXCOUNT));
				ring[s].count = 64 + (s + step) % 64;
			} else {
				ring[s].offset = EMPTY;   // count left as it was
				if (clean)
					ring[s].count = 0;   // the fix
			}
		}
		printf("zerocopy: step %d, %d items\n", step, items);
		consume<<<SLOTS, MAXCOUNT>>>(out, pool, d_ring);
		CHECK("consume", cudaGetLastError());
		CHECK("step sync", cudaDeviceSynchronize());
	}
	CHECK("copy out", cudaMemcpy(h_out, out, sizeof(h_out), cudaMemcpyDeviceToHost));
	for (int s = 0; s < SLOTS; s++)
		total += h_out[s].x + h_out[s].w;
	printf("zerocopy: done, checksum %.1f\n", total);
	return 0;
}
