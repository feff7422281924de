// oob-write.cu - sample for gpureduce: a plain CUDA C program (runtime API)
// whose `scale` kernel has no bounds check and gets a wrongly computed row
// pitch, so one launch writes far outside its output buffer.
//
// This is the seed article's safe_kernel counter-example: the kernel computes
// idx = y * pitch + x and never checks x/y.  The first launches are correct
// (several kernels, 512 KiB of image data copied in).  The last pass takes a
// centre crop with margin 300 meant for 1024-pixel images; on this 512-pixel
// image `unsigned pitch = width - 2 * margin` wraps around to 4294967208, so
// every thread with y >= 1 writes >= 16 GiB past `out`: far enough to fault
// for sure on the GPU (small overruns of a cudaMalloc block often do not).
//
// Build: nvcc -O2 -arch=sm_90 -o oob-write oob-write.cu
// Exit: 0 if every pass ran (it does not), 1 on the first CUDA error.
// OOB_WRITE_CLEAN=1: the crop pass falls back to no margin when the preset's
// margin does not fit the image (signed arithmetic, no wrap): exits 0.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

#define CHECK(what, call) do { \
	cudaError_t e_ = (call); \
	if (e_ != cudaSuccess) { \
		fprintf(stderr, "oob-write: %s failed: %s (%s)\n", what, \
			cudaGetErrorString(e_), cudaGetErrorName(e_)); \
		exit(1); \
	} } while (0)

__global__ void normalize(float *img, int n, float mean, float inv_std)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		img[i] = (img[i] - mean) * inv_std;
}

__global__ void add_bias(float *img, int n, float bias)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		img[i] += bias;
}

// out[y * pitch + x] = 2 * in[y * width + x] over a width x height grid.
__global__ void scale(float *out, const float *in, int width, int height, unsigned pitch)
{
	int x = blockIdx.x * blockDim.x + threadIdx.x;
	int y = blockIdx.y * blockDim.y + threadIdx.y;
	// BUG: the bounds check is missing:
	//   if (x >= width || y >= height) return;
	size_t idx = (size_t)y * pitch + x;
	out[idx] = in[(size_t)y * width + x] * 2.0f;
}


// OOB_WRITE_CLEAN=1 runs the same program with its bug fixed
// (the crop pitch never wraps): the clean variant, which must run
// and hunt clean (issue 28, tests/gpu/hunt-clean.sh).
static int clean_variant(void)
{
	const char *v = getenv("OOB_WRITE_CLEAN");
	return v && strcmp(v, "1") == 0;
}

int main(void)
{
	const int width = 512, height = 256, n = width * height;
	const size_t bytes = (size_t)n * sizeof(float);
	const unsigned padded_pitch = 576;           // rows padded to 576 floats
	float *h = (float *)malloc(bytes);
	float *in, *out, *padded;

	if (!h)
		return 2;
	for (int i = 0; i < n; i++)
		h[i] = (float)(i % 251) / 251.0f;
	CHECK("cudaMalloc in", cudaMalloc(&in, bytes));
	CHECK("cudaMalloc out", cudaMalloc(&out, bytes));
	CHECK("cudaMalloc padded", cudaMalloc(&padded, (size_t)padded_pitch * height * sizeof(float)));
	CHECK("copy image in", cudaMemcpy(in, h, bytes, cudaMemcpyHostToDevice));
	printf("oob-write: image %dx%d (%zu KiB) on the GPU\n", width, height, bytes / 1024);

	dim3 block(16, 16), grid(width / 16, height / 16);
	normalize<<<(n + 255) / 256, 256>>>(in, n, 0.5f, 4.0f);
	CHECK("normalize", cudaDeviceSynchronize());
	scale<<<grid, block>>>(out, in, width, height, (unsigned)width);
	CHECK("scale (dense)", cudaDeviceSynchronize());
	add_bias<<<(n + 255) / 256, 256>>>(out, n, 0.25f);
	CHECK("add_bias", cudaDeviceSynchronize());
	scale<<<grid, block>>>(padded, out, width, height, padded_pitch);
	CHECK("scale (padded)", cudaDeviceSynchronize());
	CHECK("copy result out", cudaMemcpy(h, out, bytes, cudaMemcpyDeviceToHost));
	printf("oob-write: 4 passes ok, out[1000] = %.4f\n", h[1000]);

	// The crop pass: the margin of the "large" preset is meant for 1024-wide
	// images.  On a 512-wide image this unsigned subtraction wraps around.
	int margin = 300;
	if (clean_variant() && 2 * margin >= width)
		margin = 0;   // the fix: a margin that does not fit is not applied
	unsigned crop_pitch = width - 2 * margin;
	printf("oob-write: crop pass, margin %d, pitch %u\n", margin, crop_pitch);
	scale<<<grid, block>>>(out, in, width, height, crop_pitch);
	CHECK("scale (crop)", cudaDeviceSynchronize());
	printf("oob-write: all passes ok\n");
	free(h);
	return 0;
}
