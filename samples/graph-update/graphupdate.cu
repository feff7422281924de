// graphupdate.cu - sample for gpureduce: a CUDA graph captured anew every
// step and applied to one executable graph with cudaGraphExecUpdate (the
// "update instead of instantiating again" pattern CUDA recommends, and
// XLA's command buffers use), so the parameters that fault live only in
// the update.
//
// Each step captures `window_mean` over a sliding window of a ring of
// frames, starting `lag` frames behind the newest, and updates the one
// executable graph with it.  The bug: the start is computed in unsigned
// arithmetic, newest - lag, and at step 8 (newest = 4, lag = 8) it wraps to
// 0xFFFFFFFC: the kernel reads ~64 TiB past the ring, a certain fault on
// the GPU, in the 9th launch of a graph first instantiated at step 0.
//
// CUDA_LAUNCH_BLOCKING=1 safe (gpureduce sets it).
//
// Build: nvcc -O2 -arch=sm_90 -o graphupdate graphupdate.cu
// Exit: 1 on the first CUDA error (expected), 0 if it ran clean.
// GRAPH_UPDATE_CLEAN=1: the start is clamped at frame 0.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define CHECK(what, call) do { \
	cudaError_t e_ = (call); \
	if (e_ != cudaSuccess) { \
		fprintf(stderr, "graphupdate: %s failed: %s (%s)\n", what, \
			cudaGetErrorString(e_), cudaGetErrorName(e_)); \
		exit(1); \
	} } while (0)

enum {
	FRAMES = 64,         // frames in the ring
	FRAMELEN = 4096,     // floats per frame
	WINDOW = 4,          // frames averaged
	STEPS = 10,
	LAG = 8,
};

__global__ void window_mean(const float *ring, unsigned first, float *out)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	float s = 0.0f;
	for (int w = 0; w < WINDOW; w++)
		s += ring[((size_t)first + w) * FRAMELEN + i];
	out[i] = s / WINDOW;
}

int main()
{
	int clean = getenv("GRAPH_UPDATE_CLEAN") != NULL;
	float *ring, *out;
	cudaStream_t s;
	cudaGraphExec_t exec = NULL;

	CHECK("cudaStreamCreate", cudaStreamCreate(&s));
	CHECK("cudaMalloc ring", cudaMalloc(&ring, sizeof(float) * FRAMES * FRAMELEN));
	CHECK("cudaMalloc out", cudaMalloc(&out, sizeof(float) * FRAMELEN));
	CHECK("cudaMemset ring", cudaMemset(ring, 0, sizeof(float) * FRAMES * FRAMELEN));
	for (int step = 0; step < STEPS; step++) {
		unsigned newest = (unsigned)(step * 7 + 12) % FRAMES;   // 12, 19, ..., 61, then 4
		unsigned first = newest - LAG;                           // wraps when newest < LAG
		cudaGraph_t g;
		if (clean && newest < LAG)
			first = 0;
		CHECK("begin capture", cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
		window_mean<<<FRAMELEN / 256, 256, 0, s>>>(ring, first, out);
		CHECK("end capture", cudaStreamEndCapture(s, &g));
		if (!exec) {
			CHECK("instantiate", cudaGraphInstantiate(&exec, g, 0));
		} else {
			cudaGraphExecUpdateResultInfo info;
			CHECK("cudaGraphExecUpdate", cudaGraphExecUpdate(exec, g, &info));
		}
		CHECK("destroy graph", cudaGraphDestroy(g));
		CHECK("launch", cudaGraphLaunch(exec, s));
		CHECK("step sync", cudaStreamSynchronize(s));
	}
	printf("graphupdate: %d steps ran clean\n", STEPS);
	return 0;
}
