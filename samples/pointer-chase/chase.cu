// chase.cu - sample for gpureduce: pointer chasing through a table of
// device pointers, with one corrupted length.
//
// Sixteen segments of 1024 floats each live in their own cudaMalloc
// buffers; a table in device memory holds {data, len} for each (device
// pointers stored in device memory, copied in with cudaMemcpy).  seg_sum
// gives each segment a block that walks data[0..len).  The bug: on step 4
// the lengths are rebuilt from byte counts, and segment 7's count is
// shifted left by 16 instead of divided by sizeof(float): len = 4096 << 16
// floats, so its block walks up to 1 GiB past a 4 KiB buffer and faults
// when it leaves the mapped memory, every time.
//
// Build: nvcc -O2 -arch=sm_90 -o chase chase.cu
// Exit: 0 if every step ran (it does not), 1 on the first CUDA error.
// POINTER_CHASE_CLEAN=1: segment 7's length is divided by sizeof(float) like
// the others on step 4 too: exits 0.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

#define CHECK(what, call) do { \
	cudaError_t e_ = (call); \
	if (e_ != cudaSuccess) { \
		fprintf(stderr, "chase: %s failed: %s (%s)\n", what, \
			cudaGetErrorString(e_), cudaGetErrorName(e_)); \
		exit(1); \
	} } while (0)

struct Seg {
	const float *data;
	long long len;
};

__global__ void seg_sum(const Seg *segs, float *out, int nseg)
{
	int s = blockIdx.x;
	if (s >= nseg)
		return;
	const float *d = segs[s].data;    // a pointer read from device memory
	long long len = segs[s].len;
	float acc = 0.0f;
	for (long long j = threadIdx.x; j < len; j += blockDim.x)
		acc += d[j];
	atomicAdd(&out[s], acc);
}

__global__ void scale(float *x, int n, float f)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		x[i] *= f;
}

// POINTER_CHASE_CLEAN=1 runs the same program with its bug fixed
// (lengths in floats on every step): the clean variant, which must run
// and hunt clean (issue 28, tests/gpu/hunt-clean.sh).
static int clean_variant(void)
{
	const char *v = getenv("POINTER_CHASE_CLEAN");
	return v && strcmp(v, "1") == 0;
}

int main()
{
	const int nseg = 16, seg_len = 1024;
	const size_t seg_bytes = seg_len * sizeof(float);
	float *data[nseg], *out, *h = (float *)malloc(seg_bytes);
	Seg host_segs[nseg], *segs;
	const int clean = clean_variant();

	for (int i = 0; i < seg_len; i++)
		h[i] = (float)(i % 13);
	for (int s = 0; s < nseg; s++) {
		CHECK("cudaMalloc", cudaMalloc(&data[s], seg_bytes));
		CHECK("cudaMemcpy", cudaMemcpy(data[s], h, seg_bytes, cudaMemcpyHostToDevice));
	}
	CHECK("cudaMalloc", cudaMalloc(&segs, sizeof(host_segs)));
	CHECK("cudaMalloc", cudaMalloc(&out, nseg * sizeof(float)));
	for (int step = 0; step < 6; step++) {
		for (int s = 0; s < nseg; s++) {
			size_t bytes = seg_bytes;
			host_segs[s].data = data[s];
			// BUG (step 4, segment 7): a shift where a division was meant
			host_segs[s].len = step == 4 && s == 7 && !clean ? (long long)bytes << 16
									 : (long long)(bytes / sizeof(float));
		}
		CHECK("cudaMemcpy(table)", cudaMemcpy(segs, host_segs, sizeof(host_segs), cudaMemcpyHostToDevice));
		CHECK("cudaMemset", cudaMemset(out, 0, nseg * sizeof(float)));
		seg_sum<<<nseg, 256>>>(segs, out, nseg);
		CHECK("seg_sum", cudaGetLastError());
		for (int s = 0; s < nseg; s++)
			scale<<<(seg_len + 255) / 256, 256>>>(data[s], seg_len, 0.5f);
		CHECK("cudaDeviceSynchronize", cudaDeviceSynchronize());
		printf("chase: step %d done\n", step);
	}
	printf("chase: all steps ran\n");
	return 0;
}
