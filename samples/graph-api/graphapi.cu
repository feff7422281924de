// graphapi.cu - sample for gpureduce: a fault inside a CUDA graph built with
// the explicit graph API, after a kernel node's parameters were updated on
// the instantiated graph.
//
// A streaming decoder keeps a ring of feature rows on the GPU and runs one
// step per frame as a hand-built CUDA graph (as XLA command buffers and
// TensorRT do, no stream capture):
//   memset  zero the window sums;
//   kernel  append_row   writes this frame's row into the ring;
//   kernel  window_sum   sums the last HISTORY rows per feature;
//   memcpy  window sums -> the output staging buffer (device to device).
// Each frame the host slides the window with cudaGraphExecKernelNodeSetParams
// on window_sum's node: first_row = pos - HISTORY + 1.
//
// The bug is on the host: first_row is unsigned.  At frame 9 a new
// utterance starts and the position goes back to 0; first_row wraps to
// 0xFFFFFFF9, and window_sum reads rows + 0xFFFFFFF9 * 64 floats, about
// 1 TiB past the ring: a certain fault on the GPU, in the 10th graph launch.
//
// Build: nvcc -O2 -arch=sm_90 -o graphapi graphapi.cu
// Exit: 1 on the first CUDA error (expected), 0 if it ran clean.
// GRAPH_API_CLEAN=1: the window start is clamped at row 0 while the
// utterance is shorter than the window (no unsigned wrap): exits 0.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

#define CHECK(what, call) do { \
	cudaError_t e_ = (call); \
	if (e_ != cudaSuccess) { \
		fprintf(stderr, "graphapi: %s failed: %s (%s)\n", what, \
			cudaGetErrorString(e_), cudaGetErrorName(e_)); \
		exit(1); \
	} } while (0)

enum {
	RING = 4096,         // rows in the ring
	DIM = 64,            // floats per row
	HISTORY = 8,         // rows per window
	FRAMES = 14,
	RESET_FRAME = 9,     // a new utterance starts here
};

// rows[row, d] = frame-dependent features
__global__ void append_row(float *rows, unsigned row, float t)
{
	int d = threadIdx.x;
	if (d < DIM)
		rows[(size_t)row * DIM + d] = t + 0.01f * d;
}

// sums[d] = sum over the window's rows -- trusts first_row.
__global__ void window_sum(float *sums, const float *rows, unsigned first_row, int nrows)
{
	int d = threadIdx.x;
	if (d >= DIM)
		return;
	float s = 0;
	for (int r = 0; r < nrows; r++)
		s += rows[((size_t)first_row + r) * DIM + d];   // BUG: first_row may have wrapped
	sums[d] = s;
}

// GRAPH_API_CLEAN=1 runs the same program with its bug fixed
// (the window start clamped at row 0): the clean variant, which must run
// and hunt clean (issue 28, tests/gpu/hunt-clean.sh).
static int clean_variant(void)
{
	const char *v = getenv("GRAPH_API_CLEAN");
	return v && strcmp(v, "1") == 0;
}

int main(void)
{
	float *rows, *sums, *staging;
	cudaGraph_t graph;
	cudaGraphExec_t exec;
	cudaGraphNode_t n_zero, n_append, n_window, n_copy;
	cudaKernelNodeParams kp = {};
	unsigned row = 0, first_row = 0;
	float t = 0;
	int nrows = HISTORY;
	void *append_args[] = { &rows, &row, &t };
	void *window_args[] = { &sums, &rows, &first_row, &nrows };
	static float h_staging[DIM];
	cudaMemsetParams ms = {};
	unsigned pos = HISTORY;   // frames into the utterance
	const int clean = clean_variant();

	CHECK("cudaMalloc rows", cudaMalloc(&rows, (size_t)RING * DIM * sizeof(float)));
	CHECK("cudaMalloc sums", cudaMalloc(&sums, DIM * sizeof(float)));
	CHECK("cudaMalloc staging", cudaMalloc(&staging, DIM * sizeof(float)));
	CHECK("zero rows", cudaMemset(rows, 0, (size_t)RING * DIM * sizeof(float)));
	CHECK("cudaGraphCreate", cudaGraphCreate(&graph, 0));

	ms.dst = sums;
	ms.value = 0;
	ms.elementSize = 4;
	ms.width = DIM;
	ms.height = 1;
	CHECK("add memset node", cudaGraphAddMemsetNode(&n_zero, graph, NULL, 0, &ms));

	kp.func = (void *)append_row;
	kp.gridDim = dim3(1);
	kp.blockDim = dim3(DIM);
	kp.kernelParams = append_args;
	CHECK("add append_row node", cudaGraphAddKernelNode(&n_append, graph, NULL, 0, &kp));

	cudaGraphNode_t deps[2] = { n_zero, n_append };
	first_row = pos - HISTORY + 1;
	kp.func = (void *)window_sum;
	kp.kernelParams = window_args;
	CHECK("add window_sum node", cudaGraphAddKernelNode(&n_window, graph, deps, 2, &kp));
	CHECK("add memcpy node", cudaGraphAddMemcpyNode1D(&n_copy, graph, &n_window, 1, staging, sums,
							   DIM * sizeof(float), cudaMemcpyDeviceToDevice));
	CHECK("cudaGraphInstantiate", cudaGraphInstantiate(&exec, graph, 0));

	for (int frame = 0; frame < FRAMES; frame++) {
		if (frame == RESET_FRAME)
			pos = 0;   // a new utterance
		row = pos % RING;
		t = (float)frame;
		first_row = pos - HISTORY + 1;   // BUG: wraps when pos < HISTORY - 1
		if (clean && pos + 1 < HISTORY)
			first_row = 0;   // the fix: the window starts at the ring's first row
		kp.func = (void *)append_row;
		kp.kernelParams = append_args;
		CHECK("update append_row", cudaGraphExecKernelNodeSetParams(exec, n_append, &kp));
		kp.func = (void *)window_sum;
		kp.kernelParams = window_args;
		CHECK("update window_sum", cudaGraphExecKernelNodeSetParams(exec, n_window, &kp));
		printf("graphapi: frame %d, window rows %u..%u\n", frame, first_row, pos);
		CHECK("cudaGraphLaunch", cudaGraphLaunch(exec, 0));
		CHECK("frame sync", cudaStreamSynchronize(0));
		pos++;
	}
	CHECK("copy staging", cudaMemcpy(h_staging, staging, sizeof(h_staging), cudaMemcpyDeviceToHost));
	printf("graphapi: done, sum[0] %.2f\n", h_staging[0]);
	return 0;
}
