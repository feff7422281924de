// race.cu - sample for gpureduce: the seed article's "crashes at random in
// epoch 3" bug, a race inside a custom data-augmentation kernel.
//
// `paste_patch` pastes a 32x32 patch into a 512x256 canvas at a position
// that block 0 computes (the brightest row band of the image) and publishes
// in a small params struct.  Block 1 does the pasting and reads the position
// WITHOUT waiting for block 0 (no flag wait, no separate launch): the bug.
// The host resets the position to the "unset" sentinel 0x7f7f7f7f before
// every launch, so when block 1 reads early it pastes at row 2139062143,
// i.e. about 4 TiB past the canvas: a wild write that faults at once on any
// GPU.  When block 1 reads late, the paste is correct and nothing happens.
//
// How the fault rate comes about.  Real scheduling jitter between two blocks
// of one launch is small and depends on the machine, so the sample makes the
// race's timing explicit and calibrated:
//   - block 0 needs PRODUCER_CYCLES (105k SM cycles, ~55 us) before it
//     publishes the position (its scan of the image, padded to a fixed cost);
//   - block 1 first "loads its patch", which takes J cycles, J drawn from
//     the SM cycle counter and %globaltimer (they differ every launch and
//     every run) modulo JITTER_CYCLES (300k), i.e. uniform in [0, 300k);
//   - block 1 reads the position early, and faults, when J < 105k + d, where
//     d (a few hundred cycles of start skew and memory latency) is small:
//     p = 0.35 per launch.
// The program makes 3 racy launches among healthy ones and stops at the
// first error, so one run faults with probability 1 - 0.65^3 = 0.73 (in
// launch 1, 2 or 3 with probability 0.35, 0.23, 0.15).  A shrunk repro with
// one racy launch faults in 35% of its runs.
// Scale PRODUCER_CYCLES to move the rate; both blocks are resident at once
// (2 blocks on a GPU with >= 2 SMs), so the wait is never a deadlock.
//
// Build: nvcc -O2 -arch=sm_90 -o race race.cu
// Exit: 1 on the first CUDA error, 0 if all three epochs ran clean.
// RACE_CLEAN=1: block 1 waits for block 0's `ready` flag before it reads the
// position (the host sets the params' wait_ready field): exits 0.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

#define WIDTH 512
#define HEIGHT 256
#define PATCH 32
#define UNSET 0x7f7f7f7f
#define PRODUCER_CYCLES 105000LL
#define JITTER_CYCLES 300000LL
#define EPOCHS 3

#define CHECK(what, call) do { \
	cudaError_t e_ = (call); \
	if (e_ != cudaSuccess) { \
		fprintf(stderr, "race: %s failed: %s (%s)\n", what, \
			cudaGetErrorString(e_), cudaGetErrorName(e_)); \
		exit(1); \
	} } while (0)

struct paste_params {
	int row, col;       /* where to paste; UNSET until block 0 publishes */
	int ready;          /* set by block 0 after row/col: nobody waits on it */
	int wait_ready;     /* RACE_CLEAN=1 (the fix): block 1 waits for ready */
};

/* A per-launch pseudo-random number from the SM cycle counter and the global
 * nanosecond timer: stands in for scheduling jitter. */
__device__ unsigned long long jitter_seed(void)
{
	unsigned long long t, x;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	x = (t >> 5) * 0x9E3779B97F4A7C15ull ^ (unsigned long long)clock64() * 0xBF58476D1CE4E5B9ull;
	x ^= x >> 31;
	x *= 0x94D049BB133111EBull;
	x ^= x >> 29;
	return x;
}

__device__ void spin_until(long long start, long long cycles)
{
	while (clock64() - start < cycles)
		;
}

__global__ void brightness(float *img, int n, float gain)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		img[i] = fminf(img[i] * gain, 1.0f);
}

__global__ void paste_patch(float *canvas, const float *img, const float *patch,
			    struct paste_params *p)
{
	__shared__ int pos[2];
	__shared__ float score[HEIGHT];
	__shared__ long long wait;
	long long t0 = clock64();

	if (blockIdx.x == 0) {
		/* producer: the brightest PATCH-row band decides where to paste */
		for (int r = threadIdx.x; r < HEIGHT; r += blockDim.x) {
			float s = 0.0f;
			for (int c = 0; c < WIDTH; c += 16)
				s += img[r * WIDTH + c];
			score[r] = s;
		}
		__syncthreads();
		if (threadIdx.x == 0) {
			int best = 0;
			float best_s = -1.0f;
			for (int r = 0; r + PATCH <= HEIGHT; r += 8)
				if (score[r] > best_s) {
					best_s = score[r];
					best = r;
				}
			spin_until(t0, PRODUCER_CYCLES);
			volatile struct paste_params *vp = p;
			vp->row = best;
			vp->col = (WIDTH - PATCH) / 2;
			__threadfence();
			vp->ready = 1;
		}
		return;
	}

	/* consumer: "load the patch" (takes a variable time), then read the
	 * position.  BUG: it should wait for p->ready (or the position should
	 * come from a separate launch); it just reads whatever is there. */
	if (threadIdx.x == 0) {
		wait = (long long)(jitter_seed() % (unsigned long long)JITTER_CYCLES);
		spin_until(t0, wait);
		volatile struct paste_params *vp = p;
		if (vp->wait_ready) {   /* the fix (clean variant only) */
			while (!vp->ready)
				;
			__threadfence();
		}
		pos[0] = vp->row;
		pos[1] = vp->col;
	}
	__syncthreads();
	for (int i = threadIdx.x; i < PATCH * PATCH; i += blockDim.x) {
		int r = i / PATCH, c = i % PATCH;
		canvas[(size_t)(pos[0] + r) * WIDTH + pos[1] + c] = patch[i];
	}
}

// RACE_CLEAN=1 runs the same program with its bug fixed
// (block 1 waits for the position): the clean variant, which must run
// and hunt clean (issue 28, tests/gpu/hunt-clean.sh).
static int clean_variant(void)
{
	const char *v = getenv("RACE_CLEAN");
	return v && strcmp(v, "1") == 0;
}

int main(void)
{
	const int n = WIDTH * HEIGHT;
	float *h = (float *)malloc((size_t)n * sizeof(float)), hp[PATCH * PATCH];
	float *img, *canvas, *patch;
	struct paste_params *params, unset = { UNSET, UNSET, 0, 0 };

	if (!h)
		return 2;
	unset.wait_ready = clean_variant();
	for (int i = 0; i < n; i++)
		h[i] = (float)((i / WIDTH) % 97) / 97.0f;
	for (int i = 0; i < PATCH * PATCH; i++)
		hp[i] = 1.0f;
	CHECK("cudaMalloc img", cudaMalloc(&img, (size_t)n * sizeof(float)));
	CHECK("cudaMalloc canvas", cudaMalloc(&canvas, (size_t)n * sizeof(float)));
	CHECK("cudaMalloc patch", cudaMalloc(&patch, sizeof(hp)));
	CHECK("cudaMalloc params", cudaMalloc(&params, sizeof(*params)));
	CHECK("copy patch", cudaMemcpy(patch, hp, sizeof(hp), cudaMemcpyHostToDevice));

	for (int epoch = 1; epoch <= EPOCHS; epoch++) {
		CHECK("copy image", cudaMemcpy(img, h, (size_t)n * sizeof(float), cudaMemcpyHostToDevice));
		CHECK("clear canvas", cudaMemset(canvas, 0, (size_t)n * sizeof(float)));
		brightness<<<(n + 255) / 256, 256>>>(img, n, 1.0f + 0.1f * epoch);
		CHECK("reset params", cudaMemcpy(params, &unset, sizeof(unset), cudaMemcpyHostToDevice));
		paste_patch<<<2, 128>>>(canvas, img, patch, params);
		brightness<<<(n + 255) / 256, 256>>>(canvas, n, 0.5f);
		CHECK("augmentation", cudaDeviceSynchronize());
		struct paste_params got;
		CHECK("copy params", cudaMemcpy(&got, params, sizeof(got), cudaMemcpyDeviceToHost));
		printf("race: epoch %d ok, patch pasted at row %d col %d\n", epoch, got.row, got.col);
	}
	printf("race: all %d epochs ran clean\n", EPOCHS);
	free(h);
	return 0;
}
