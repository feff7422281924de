// managed.cu - sample for gpureduce: bad data that reaches the GPU without
// any copy call, through managed memory.
//
// A training input pipeline keeps its index table (which rows of the feature
// table make up the batch) in cudaMallocManaged memory: the CPU refills it
// in place before every step and the gather kernel reads it directly.  No
// cudaMemcpy ever carries those bytes, so a trace of copies alone has no
// idea what the kernel saw.
//
// The bug is on the host.  The last batch of an epoch is ragged: the loader
// pads the unused slots with -1 ("no row"), stored into the unsigned index
// table as 0xFFFFFFFF, and the gather kernel has no check.  At the 7th step (the
// epoch's last, ragged batch) `gather_rows` reads table + 0xFFFFFFFF * 64
// floats, about 1 TiB past the feature table: a certain fault on the GPU.
//
// CUDA_LAUNCH_BLOCKING=1 safe (gpureduce sets it); the program synchronizes
// after each step before the CPU touches the managed table again, as the
// programming guide asks.
//
// Build: nvcc -O2 -arch=sm_90 -o managed managed.cu
// Exit: 1 on the first CUDA error (expected), 0 if it ran clean.
// MANAGED_INDEX_CLEAN=1: the loader pads the ragged batch with row 0, a valid
// row (the padded rows are gathered and ignored): exits 0.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

#define CHECK(what, call) do { \
	cudaError_t e_ = (call); \
	if (e_ != cudaSuccess) { \
		fprintf(stderr, "managed: %s failed: %s (%s)\n", what, \
			cudaGetErrorString(e_), cudaGetErrorName(e_)); \
		exit(1); \
	} } while (0)

enum {
	ROWS = 40000,        // feature table rows
	DIM = 64,            // floats per row
	BATCH = 256,         // rows per batch
	SAMPLES = 7 * BATCH - 100,   // an epoch: 6 full batches, then a ragged one
	STEPS = 7,
	TABLE_SLOTS = 65536, // the index table is sized for the largest batch ever
};

// out[i, :] = table[idx[i], :] -- no check that idx[i] < rows.
__global__ void gather_rows(float *out, const float *table, const unsigned *idx, int batch)
{
	int i = blockIdx.x, d = threadIdx.x;
	if (i < batch && d < DIM)
		out[(size_t)i * DIM + d] = table[(size_t)idx[i] * DIM + d];
}

// acc[:] += out[:]
__global__ void accumulate(float *acc, const float *out, int n)
{
	int k = blockIdx.x * blockDim.x + threadIdx.x;
	if (k < n)
		acc[k] += out[k];
}

// The sample order of the epoch (a fixed shuffle).
static unsigned sample_row(int s)
{
	return (unsigned)(((unsigned long long)s * 2654435761u) % ROWS);
}

// MANAGED_INDEX_CLEAN=1 runs the same program with its bug fixed
// (padding with a valid row): the clean variant, which must run
// and hunt clean (issue 28, tests/gpu/hunt-clean.sh).
static int clean_variant(void)
{
	const char *v = getenv("MANAGED_INDEX_CLEAN");
	return v && strcmp(v, "1") == 0;
}

int main(void)
{
	float *table, *out, *acc;
	unsigned *idx;
	const size_t table_bytes = (size_t)ROWS * DIM * sizeof(float);
	const int n = BATCH * DIM;
	float *h_table = (float *)malloc(table_bytes);
	static float h_acc[BATCH * DIM];
	double total = 0;
	const unsigned pad = clean_variant() ? 0u : (unsigned)-1;   // the fix: row 0

	if (!h_table)
		return 2;
	for (size_t k = 0; k < (size_t)ROWS * DIM; k++)
		h_table[k] = (float)(k % 389) * 0.01f;
	CHECK("cudaMalloc table", cudaMalloc(&table, table_bytes));
	CHECK("cudaMalloc out", cudaMalloc(&out, n * sizeof(float)));
	CHECK("cudaMalloc acc", cudaMalloc(&acc, n * sizeof(float)));
	CHECK("cudaMallocManaged idx", cudaMallocManaged(&idx, TABLE_SLOTS * sizeof(unsigned)));
	CHECK("copy table", cudaMemcpy(table, h_table, table_bytes, cudaMemcpyHostToDevice));
	CHECK("zero acc", cudaMemset(acc, 0, n * sizeof(float)));

	for (int step = 0; step < STEPS; step++) {
		int first = step * BATCH;
		// the CPU refills the managed index table in place
		for (int i = 0; i < BATCH; i++)
			idx[i] = first + i < SAMPLES ? sample_row(first + i)
						     : pad;   // BUG: padding "no row" (-1)
		printf("managed: step %d, %d samples\n", step,
		       SAMPLES - first < BATCH ? SAMPLES - first : BATCH);
		gather_rows<<<BATCH, DIM>>>(out, table, idx, BATCH);
		CHECK("gather_rows", cudaGetLastError());
		accumulate<<<(n + 255) / 256, 256>>>(acc, out, n);
		CHECK("accumulate", cudaGetLastError());
		CHECK("step sync", cudaDeviceSynchronize());
	}
	CHECK("copy acc", cudaMemcpy(h_acc, acc, sizeof(h_acc), cudaMemcpyDeviceToHost));
	for (int k = 0; k < n; k++)
		total += h_acc[k];
	printf("managed: epoch done, checksum %.3f\n", total);
	return 0;
}
