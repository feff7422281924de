// uaf.cu - sample for gpureduce: a kernel writes through a dangling device
// pointer that a layer cached from a workspace which was freed earlier.
//
// The program owns one large scratch workspace (256 MiB) that two "layers"
// borrow slices of.  After phase 1 a memory-saving step frees the workspace
// (meaning to re-allocate it lazily) but the layers keep their cached
// pointers.  Phase 2 launches `accumulate` on layer 1's stale slice.
//
// Why 256 MiB: a large cudaMalloc gets its own virtual-address mapping and
// cudaFree unmaps it, so the stale write faults at once.  A small freed
// block usually shares pages with live allocations (or the driver keeps it
// mapped), and then the same bug silently corrupts memory instead of
// faulting on the original GPU: gpureduce's guard-page replay is what makes
// such cases visible, but this sample is meant to fault every time.
//
// No allocation happens after the free, so nothing can land in the freed
// range and hide the bug.
//
// Build: nvcc -O2 -arch=sm_90 -o uaf uaf.cu
// Exit: 1 on the first CUDA error (expected), 0 if it ran clean.
// USE_AFTER_FREE_CLEAN=1: the workspace stays alive until the layers are done
// with it (freed after phase 2): exits 0.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

#define CHECK(what, call) do { \
	cudaError_t e_ = (call); \
	if (e_ != cudaSuccess) { \
		fprintf(stderr, "uaf: %s failed: %s (%s)\n", what, \
			cudaGetErrorString(e_), cudaGetErrorName(e_)); \
		exit(1); \
	} } while (0)

struct workspace {
	float *base;
	size_t bytes;
};

struct layer {
	const char *name;
	float *scratch;     /* borrowed from the workspace: not owned */
	size_t n;           /* floats in scratch */
	float *weights;     /* owned */
};

__global__ void fill(float *p, size_t n, float v)
{
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		p[i] = v;
}

__global__ void accumulate(float *scratch, const float *w, size_t n, int nw)
{
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		scratch[i] += w[i % nw];
}

__global__ void reduce_sum(float *out, const float *in, size_t n)
{
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		atomicAdd(out, in[i]);
}

static void run_layer(struct layer *l, int nw)
{
	unsigned blocks = (unsigned)((l->n + 255) / 256);
	accumulate<<<blocks, 256>>>(l->scratch, l->weights, l->n, nw);
}


// USE_AFTER_FREE_CLEAN=1 runs the same program with its bug fixed
// (the workspace freed after its last use): the clean variant, which must run
// and hunt clean (issue 28, tests/gpu/hunt-clean.sh).
static int clean_variant(void)
{
	const char *v = getenv("USE_AFTER_FREE_CLEAN");
	return v && strcmp(v, "1") == 0;
}

int main(void)
{
	const int nw = 4096;
	const size_t slice = (size_t)1 << 20;            /* 4 MiB of floats per layer */
	struct workspace ws = { NULL, (size_t)256 << 20 };
	struct layer layers[2] = { { "embed", NULL, slice, NULL }, { "mlp", NULL, slice, NULL } };
	float *sum, host_w[4096], total = 0;

	for (int i = 0; i < nw; i++)
		host_w[i] = (float)(i % 7) * 0.125f;
	CHECK("cudaMalloc workspace", cudaMalloc(&ws.base, ws.bytes));
	CHECK("cudaMalloc sum", cudaMalloc(&sum, sizeof(float)));
	for (int l = 0; l < 2; l++) {
		CHECK("cudaMalloc weights", cudaMalloc(&layers[l].weights, nw * sizeof(float)));
		CHECK("copy weights", cudaMemcpy(layers[l].weights, host_w, nw * sizeof(float),
						 cudaMemcpyHostToDevice));
		/* layer l borrows a slice 128 MiB * l into the workspace */
		layers[l].scratch = ws.base + (size_t)l * (ws.bytes / 2 / sizeof(float));
	}
	printf("uaf: workspace %zu MiB at %p, layer scratch at %p and %p\n", ws.bytes >> 20,
	       (void *)ws.base, (void *)layers[0].scratch, (void *)layers[1].scratch);

	/* phase 1: healthy */
	for (int step = 0; step < 3; step++) {
		for (int l = 0; l < 2; l++) {
			fill<<<(unsigned)((slice + 255) / 256), 256>>>(layers[l].scratch, slice, 0.0f);
			run_layer(&layers[l], nw);
		}
		CHECK("memset sum", cudaMemset(sum, 0, sizeof(float)));
		reduce_sum<<<(unsigned)((slice + 255) / 256), 256>>>(sum, layers[1].scratch, slice);
		CHECK("phase 1 step", cudaDeviceSynchronize());
		CHECK("copy sum", cudaMemcpy(&total, sum, sizeof(float), cudaMemcpyDeviceToHost));
		printf("uaf: phase 1 step %d ok, sum %.1f\n", step, total);
	}

	/* "free memory between phases": the workspace goes, the layers keep
	 * their cached scratch pointers (the bug). */
	int keep = clean_variant();   /* the fix: free after the last use */
	if (!keep) {
		CHECK("cudaFree workspace", cudaFree(ws.base));
		ws.base = NULL;
		printf("uaf: workspace freed between phases\n");
	}

	/* phase 2: layer 1 still writes through its stale pointer */
	run_layer(&layers[1], nw);
	CHECK("phase 2", cudaDeviceSynchronize());
	printf("uaf: phase 2 ok\n");
	if (keep) {
		CHECK("cudaFree workspace", cudaFree(ws.base));
		ws.base = NULL;
		printf("uaf: workspace freed after phase 2\n");
	}
	return 0;
}
