// batchcopy.cu - sample for gpureduce: the bad index reaches the GPU through
// cudaMemcpyBatchAsync (CUDA 12.8+), one batch of small host-to-device
// copies per step, as KV-cache offloading moves many small blocks at once.
//
// Each step the host packs CHUNKS index chunks (which pool row each of a
// request's tokens reads) in pinned memory and uploads all of them with one
// batched copy; `gather_rows` then reads the rows.  The bug is on the host:
// the packer marks a request that was evicted with row 0xFFFFFFF0 ("gone")
// but still uploads its chunk, and the kernel trusts every row.  At step 5
// request 3 is evicted: gather_rows reads ~1 TiB past the pool, a certain
// fault on the GPU.  No plain cudaMemcpy ever carries the indices.
//
// CUDA_LAUNCH_BLOCKING=1 safe (gpureduce sets it); the program synchronizes
// after each step before the host writes the chunks again.
//
// Build: nvcc -O2 -arch=sm_90 -o batchcopy batchcopy.cu
// Exit: 1 on the first CUDA error (expected), 0 if it ran clean.
// BATCH_COPY_CLEAN=1: an evicted request's chunk points at row 0.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

#define CHECK(what, call) do { \
	cudaError_t e_ = (call); \
	if (e_ != cudaSuccess) { \
		fprintf(stderr, "batchcopy: %s failed: %s (%s)\n", what, \
			cudaGetErrorString(e_), cudaGetErrorName(e_)); \
		exit(1); \
	} } while (0)

enum {
	ROWS = 4096,         // pool rows
	ROWLEN = 64,         // floats per row
	CHUNKS = 8,          // requests per step, one chunk each
	TOKENS = 32,         // indices per chunk
	STEPS = 8,
	BAD_STEP = 5,
};

__global__ void gather_rows(const float *pool, const unsigned *idx, float *out)
{
	int r = blockIdx.x, t = threadIdx.x;
	unsigned row = idx[r * TOKENS + t];
	const float *p = pool + (size_t)row * ROWLEN;
	float s = 0.0f;
	for (int k = 0; k < ROWLEN; k += 8)
		s += p[k];
	out[r * TOKENS + t] = s;
}

int main()
{
	int clean = getenv("BATCH_COPY_CLEAN") != NULL;
	float *pool, *out;
	unsigned *idx, *host;
	void *dsts[CHUNKS];
	const void *srcs[CHUNKS];
	size_t sizes[CHUNKS], attr_idx[1] = { 0 };
	cudaMemcpyAttributes attr;
	cudaStream_t s;

	CHECK("cudaStreamCreate", cudaStreamCreate(&s));
	CHECK("cudaMalloc pool", cudaMalloc(&pool, sizeof(float) * ROWS * ROWLEN));
	CHECK("cudaMalloc idx", cudaMalloc(&idx, sizeof(unsigned) * CHUNKS * TOKENS));
	CHECK("cudaMalloc out", cudaMalloc(&out, sizeof(float) * CHUNKS * TOKENS));
	CHECK("cudaMemset pool", cudaMemset(pool, 0, sizeof(float) * ROWS * ROWLEN));
	CHECK("cudaMallocHost", cudaMallocHost(&host, sizeof(unsigned) * CHUNKS * TOKENS));
	memset(&attr, 0, sizeof(attr));
	attr.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
	for (int c = 0; c < CHUNKS; c++) {
		dsts[c] = idx + c * TOKENS;
		srcs[c] = host + c * TOKENS;
		sizes[c] = sizeof(unsigned) * TOKENS;
	}
	for (int step = 0; step < STEPS; step++) {
		for (int i = 0; i < CHUNKS * TOKENS; i++)
			host[i] = (unsigned)((i * 13 + step * 7) % ROWS);
		if (step == BAD_STEP)   // request 3 evicted: its chunk still goes up
			for (int t = 0; t < TOKENS; t++)
				host[3 * TOKENS + t] = clean ? 0u : 0xFFFFFFF0u;
#if CUDART_VERSION >= 13000
		CHECK("cudaMemcpyBatchAsync", cudaMemcpyBatchAsync(dsts, srcs, sizes, CHUNKS, &attr, attr_idx, 1, s));
#else
		size_t fail = 0;
		CHECK("cudaMemcpyBatchAsync", cudaMemcpyBatchAsync(dsts, (void **)srcs, sizes, CHUNKS, &attr, attr_idx,
								   1, &fail, s));
#endif
		gather_rows<<<CHUNKS, TOKENS, 0, s>>>(pool, idx, out);
		CHECK("gather_rows", cudaGetLastError());
		CHECK("step sync", cudaStreamSynchronize(s));
	}
	printf("batchcopy: %d steps ran clean\n", STEPS);
	return 0;
}
