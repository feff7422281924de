// shmem.cu - sample for gpureduce: the seed article's shared-memory sizing
// bug.  A kernel's dynamic shared memory (`extern __shared__ float temp[]`)
// is sized by the host for one block size and the kernel is later launched
// with more threads per block, so threads index far past the allocation.
//
// `row_stats` gives every thread a private strip of SLOTS floats in shared
// memory (temp[threadIdx.x * SLOTS + k]) and then reduces the strips.  The
// host computes the dynamic shared size once, for the 64-thread launches
// (64 * 64 * 4 = 16 KiB), and caches it.  The "wide rows" path then launches
// the same kernel with 1024 threads and the cached 16 KiB: thread t touches
// byte offsets up to t * 256 + 252, i.e. up to 256 KiB, beyond this block's
// 16 KiB and beyond the most shared memory an SM has (228 KiB), so the
// launch faults every time (an out-of-range shared address; depending on the
// GPU it is reported as an illegal address or an address-space error).
//
// Build: nvcc -O2 -arch=sm_90 -o shmem shmem.cu
// Exit: 1 on the first CUDA error (expected), 0 if it ran clean.
// SHARED_OVERFLOW_CLEAN=1: the shared size is computed for every launch, and
// the wide pass uses the widest block whose strips fit the default 48 KiB of
// dynamic shared memory (192 threads): exits 0.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

#define SLOTS 64

#define CHECK(what, call) do { \
	cudaError_t e_ = (call); \
	if (e_ != cudaSuccess) { \
		fprintf(stderr, "shmem: %s failed: %s (%s)\n", what, \
			cudaGetErrorString(e_), cudaGetErrorName(e_)); \
		exit(1); \
	} } while (0)

// out[row * SLOTS + k] = sum of in[row * cols + c] over c with c % SLOTS == k
__global__ void row_stats(float *out, const float *in, int cols)
{
	extern __shared__ float temp[];
	float *mine = temp + threadIdx.x * SLOTS;   // assumes SLOTS*blockDim floats
	const float *row = in + (size_t)blockIdx.x * cols;

	for (int k = 0; k < SLOTS; k++)
		mine[k] = 0.0f;
	for (int c = threadIdx.x; c < cols; c += blockDim.x)
		mine[c % SLOTS] += row[c];
	__syncthreads();
	if (threadIdx.x < SLOTS) {
		float s = 0.0f;
		for (unsigned t = 0; t < blockDim.x; t++)
			s += temp[t * SLOTS + threadIdx.x];
		out[(size_t)blockIdx.x * SLOTS + threadIdx.x] = s;
	}
}

__global__ void square(float *v, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		v[i] = v[i] * v[i];
}


// SHARED_OVERFLOW_CLEAN=1 runs the same program with its bug fixed
// (the shared size computed per launch): the clean variant, which must run
// and hunt clean (issue 28, tests/gpu/hunt-clean.sh).
static int clean_variant(void)
{
	const char *v = getenv("SHARED_OVERFLOW_CLEAN");
	return v && strcmp(v, "1") == 0;
}

/* The launch helper caches the shared size of the first call (the bug). */
static size_t cached_smem;

static void launch_row_stats(float *out, const float *in, int rows, int cols, int threads)
{
	if (clean_variant()) {
		/* the fix: size every launch, at most the default 48 KiB */
		const size_t max_smem = 48 * 1024;
		if ((size_t)threads * SLOTS * sizeof(float) > max_smem)
			threads = (int)(max_smem / (SLOTS * sizeof(float)));
		cached_smem = (size_t)threads * SLOTS * sizeof(float);
	}
	if (!cached_smem)
		cached_smem = (size_t)threads * SLOTS * sizeof(float);
	row_stats<<<rows, threads, cached_smem>>>(out, in, cols);
}

int main(void)
{
	const int rows = 128, cols = 2048, n = rows * cols;
	float *h = (float *)malloc((size_t)n * sizeof(float));
	float *in, *out, check[SLOTS];

	if (!h)
		return 2;
	for (int i = 0; i < n; i++)
		h[i] = (float)(i % 13) * 0.5f;
	CHECK("cudaMalloc in", cudaMalloc(&in, (size_t)n * sizeof(float)));
	CHECK("cudaMalloc out", cudaMalloc(&out, (size_t)rows * SLOTS * sizeof(float)));
	CHECK("copy in", cudaMemcpy(in, h, (size_t)n * sizeof(float), cudaMemcpyHostToDevice));

	for (int it = 0; it < 3; it++) {
		launch_row_stats(out, in, rows, cols, 64);
		square<<<(rows * SLOTS + 255) / 256, 256>>>(out, rows * SLOTS);
		CHECK("narrow pass", cudaDeviceSynchronize());
	}
	CHECK("copy out", cudaMemcpy(check, out, sizeof(check), cudaMemcpyDeviceToHost));
	printf("shmem: 3 narrow passes (64 threads, %zu B shared) ok, out[0] = %.1f\n",
	       cached_smem, check[0]);

	/* "tuning" for wide rows: more threads, same cached shared size */
	printf("shmem: wide pass with 1024 threads per block\n");
	launch_row_stats(out, in, rows, cols, 1024);
	CHECK("wide pass", cudaDeviceSynchronize());
	printf("shmem: wide pass ok\n");
	free(h);
	return 0;
}
