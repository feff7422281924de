// cluster.cu - sample for gpureduce: thread-block clusters (sm_90).
//
// warm() is compiled with __cluster_dims__(2,1,1); pair_sum() is launched
// with cudaLaunchKernelEx and cudaLaunchAttributeClusterDimension {2,1,1}
// and reads its partner block's partial sum through distributed shared
// memory (cluster.map_shared_rank).  Both are correct.  The bug: the last
// pass computes the output pitch as `unsigned pitch = width / 32 - 2`
// with a width too small for the header; it wraps to 4294967295, and
// cluster c > 0 writes 16 GiB * c past `out`.
//
// Build: nvcc -O2 -arch=sm_90 -o cluster cluster.cu
// Exit: 0 if every pass ran (it does not), 1 on the first CUDA error.
// CLUSTER_LAUNCH_CLEAN=1: a row too narrow for the header gets the minimum
// pitch of 2 floats instead of a wrapped one: exits 0.
#include <cooperative_groups.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

namespace cg = cooperative_groups;

#define CHECK(what, call) do { \
	cudaError_t e_ = (call); \
	if (e_ != cudaSuccess) { \
		fprintf(stderr, "cluster: %s failed: %s (%s)\n", what, \
			cudaGetErrorString(e_), cudaGetErrorName(e_)); \
		exit(1); \
	} } while (0)

__global__ void __cluster_dims__(2, 1, 1) warm(float *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] = x[i] * 0.5f + 1.0f;
}

// out[c * pitch + rank] = sum of the cluster's 2 * blockDim inputs
__global__ void pair_sum(const float *in, float *out, int n, unsigned pitch)
{
	__shared__ float part;
	cg::cluster_group cluster = cg::this_cluster();
	unsigned rank = cluster.block_rank();
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (threadIdx.x == 0)
		part = 0.0f;
	__syncthreads();
	if (i < n)
		atomicAdd(&part, in[i]);
	cluster.sync();
	float *peer = cluster.map_shared_rank(&part, rank ^ 1u);
	float total = part + *peer;
	cluster.sync();
	if (threadIdx.x == 0) {
		size_t c = blockIdx.x / 2;
		out[c * pitch + rank] = total;   // BUG: pitch wrapped around on the last pass
	}
}

static void launch_pair_sum(const float *in, float *out, int n, unsigned pitch, int blocks)
{
	cudaLaunchConfig_t cfg = {};
	cudaLaunchAttribute attr[1];
	attr[0].id = cudaLaunchAttributeClusterDimension;
	attr[0].val.clusterDim.x = 2;
	attr[0].val.clusterDim.y = 1;
	attr[0].val.clusterDim.z = 1;
	cfg.gridDim = dim3(blocks);
	cfg.blockDim = dim3(256);
	cfg.attrs = attr;
	cfg.numAttrs = 1;
	CHECK("cudaLaunchKernelEx(pair_sum)", cudaLaunchKernelEx(&cfg, pair_sum, in, out, n, pitch));
}

// CLUSTER_LAUNCH_CLEAN=1 runs the same program with its bug fixed
// (the pitch never wraps): the clean variant, which must run
// and hunt clean (issue 28, tests/gpu/hunt-clean.sh).
static int clean_variant(void)
{
	const char *v = getenv("CLUSTER_LAUNCH_CLEAN");
	return v && strcmp(v, "1") == 0;
}

int main()
{
	const int n = 4096, blocks = n / 256, clusters = blocks / 2;
	const unsigned widths[3] = { 128, 128, 32 };   // bytes of a row of the output table
	float *x, *out, *h = (float *)malloc(n * sizeof(float));

	for (int i = 0; i < n; i++)
		h[i] = (float)(i % 97) * 0.01f;
	CHECK("cudaMalloc", cudaMalloc(&x, n * sizeof(float)));
	CHECK("cudaMalloc", cudaMalloc(&out, clusters * 2 * sizeof(float)));
	CHECK("cudaMemcpy", cudaMemcpy(x, h, n * sizeof(float), cudaMemcpyHostToDevice));
	for (int pass = 0; pass < 3; pass++) {
		// floats per row after a 2-float header: 2, 2, then 1 - 2, which
		// wraps to 4294967295 (BUG: the header does not fit a 32-byte row)
		unsigned pitch = widths[pass] / 32u - 2u;
		if (clean_variant() && widths[pass] / 32u < 4u)
			pitch = 2;   // the fix: never below the 2 floats a cluster writes
		warm<<<blocks, 256>>>(x, n);
		CHECK("warm", cudaGetLastError());
		launch_pair_sum(x, out, n, pitch, blocks);
		CHECK("cudaDeviceSynchronize", cudaDeviceSynchronize());
		printf("cluster: pass %d done (pitch %u)\n", pass, pitch);
	}
	printf("cluster: all passes ran\n");
	return 0;
}
