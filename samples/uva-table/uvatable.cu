// uvatable.cu - sample for gpureduce: bad data that a kernel reads straight
// from plain pinned host memory (cudaMallocHost, not the mapped flag), as
// "UVA" tensors are read (vLLM's input preparation, DGL's sampling).
//
// A serving loop keeps each request's block table (which block of a KV pool
// each of its tokens lives in) in a pinned host array the CPU refills every
// step; under unified addressing the kernel reads it through the host
// pointer itself, and no copy call ever carries it.  Another pinned buffer
// stages each step's query rows into device memory with cudaMemcpyAsync,
// as a loader does: that one only ever leaves through a copy.
//
// The bug is on the host.  When a request finishes, its slots are marked
// free with block id 0xFFFFFFFF (as an unsigned "no block") but the step's
// request count is not lowered; gather_kv only checks the count.  At step 6
// one request finishes: the kernel reads pool + 0xFFFFFFFF blocks of 64
// floats, ~1 TiB past the pool: a certain fault on the GPU.
//
// CUDA_LAUNCH_BLOCKING=1 safe (gpureduce sets it); the program synchronizes
// after each step before the CPU writes the table again.
//
// Build: nvcc -O2 -arch=sm_90 -o uvatable uvatable.cu
// Exit: 1 on the first CUDA error (expected), 0 if it ran clean.
// UVA_TABLE_CLEAN=1: a finished request's slots point at block 0 (a valid
// block) instead: exits 0.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

#define CHECK(what, call) do { \
	cudaError_t e_ = (call); \
	if (e_ != cudaSuccess) { \
		fprintf(stderr, "uvatable: %s failed: %s (%s)\n", what, \
			cudaGetErrorString(e_), cudaGetErrorName(e_)); \
		exit(1); \
	} } while (0)

enum {
	BLOCKS = 4096,       // blocks in the KV pool
	BLOCK = 64,          // floats per block
	REQS = 16,           // requests per step, one CUDA block each
	TOKENS = 32,         // tokens per request (threads)
	STEPS = 10,
	BAD_STEP = 6,
};

// out[r][t] = sum of the token's block in the pool, read through the
// request's block table in pinned host memory.
__global__ void gather_kv(const float *pool, const unsigned *table, const float *query,
			  float *out, int nreq)
{
	int r = blockIdx.x, t = threadIdx.x;
	if (r >= nreq)
		return;
	unsigned blk = table[r * TOKENS + t];   // host memory, through UVA
	const float *b = pool + (size_t)blk * BLOCK;
	float s = 0.0f;
	for (int k = 0; k < BLOCK; k += 16)
		s += b[k] * query[r * TOKENS + t];
	out[r * TOKENS + t] = s;
}

int main()
{
	int clean = getenv("UVA_TABLE_CLEAN") != NULL;
	float *pool, *query, *out, *staging;
	unsigned *table;

	CHECK("cudaMalloc pool", cudaMalloc(&pool, sizeof(float) * BLOCKS * BLOCK));
	CHECK("cudaMalloc query", cudaMalloc(&query, sizeof(float) * REQS * TOKENS));
	CHECK("cudaMalloc out", cudaMalloc(&out, sizeof(float) * REQS * TOKENS));
	CHECK("cudaMemset pool", cudaMemset(pool, 0, sizeof(float) * BLOCKS * BLOCK));
	CHECK("cudaMallocHost table", cudaMallocHost(&table, sizeof(unsigned) * REQS * TOKENS));
	CHECK("cudaMallocHost staging", cudaMallocHost(&staging, sizeof(float) * REQS * TOKENS));

	for (int step = 0; step < STEPS; step++) {
		for (int i = 0; i < REQS * TOKENS; i++) {
			table[i] = (unsigned)((i * 37 + step * 11) % BLOCKS);
			staging[i] = 0.5f + (float)((i + step) % 7);
		}
		if (step == BAD_STEP)   // request 5 finished: its slots freed
			for (int t = 0; t < TOKENS; t++)
				table[5 * TOKENS + t] = clean ? 0u : 0xFFFFFFFFu;
		CHECK("cudaMemcpyAsync query", cudaMemcpyAsync(query, staging, sizeof(float) * REQS * TOKENS,
							      cudaMemcpyHostToDevice, 0));
		gather_kv<<<REQS, TOKENS>>>(pool, table, query, out, REQS);
		CHECK("gather_kv", cudaGetLastError());
		CHECK("step sync", cudaDeviceSynchronize());
	}
	printf("uvatable: %d steps ran clean\n", STEPS);
	return 0;
}
