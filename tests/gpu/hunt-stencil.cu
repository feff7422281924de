/*
 * hunt-stencil.cu - bench-hunt's GPU-bound program (issue 28): a plain
 * CUDA solver whose seconds are its kernels, not its start-up, the kind of
 * program compute-sanitizer's slow-down is paid on in full.  It smooths an
 * N x N grid with a radius-2 star stencil (nine reads a cell) for ITERS
 * sweeps, then sums each row's magnitude for a residual.  The residual
 * loop runs to row N inclusive (the bug): its last block reads one row
 * past the grid's allocation, which lands in the allocation's rounding
 * (N*N*4 is not a multiple of the 2 MiB granule) and never faults
 * natively; the residual is merely off.  STENCIL_CLEAN=1 sums rows 0..N-1.
 *
 * Env: STENCIL_N (4000), STENCIL_ITERS (6000), STENCIL_CLEAN.
 * Prints the residual and the sweeps' seconds; exits 1 on a CUDA error.
 *
 * Build: nvcc -O2 -o hunt-stencil hunt-stencil.cu
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define CHECK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
	fprintf(stderr, "hunt-stencil: %s: %s\n", #x, cudaGetErrorString(e_)); return 1; } } while (0)

__global__ void smooth(const float *in, float *out, int n)
{
	int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
	if (x < 2 || y < 2 || x >= n - 2 || y >= n - 2)
		return;
	size_t at = (size_t)y * n + x;
	const float *c = in + at;
	out[at] = 0.2f * c[0] + 0.1f * (c[-1] + c[1] + c[-n] + c[n]) +
		  0.05f * (c[-2] + c[2] + c[-2 * n] + c[2 * n]);
}

/* one block a row: norms[r] = sum over the row of |g| */
__global__ void row_norms(const float *g, float *norms, int n)
{
	__shared__ float part[256];
	int r = blockIdx.x;
	float s = 0.f;
	for (int i = threadIdx.x; i < n; i += blockDim.x)
		s += fabsf(g[(size_t)r * n + i]);
	part[threadIdx.x] = s;
	__syncthreads();
	for (int w = blockDim.x / 2; w > 0; w /= 2) {
		if (threadIdx.x < w)
			part[threadIdx.x] += part[threadIdx.x + w];
		__syncthreads();
	}
	if (threadIdx.x == 0)
		norms[r] = part[0];
}

static int env_int(const char *name, int dflt)
{
	const char *v = getenv(name);
	return v && *v ? atoi(v) : dflt;
}

int main(void)
{
	int n = env_int("STENCIL_N", 4000), iters = env_int("STENCIL_ITERS", 6000);
	int clean = env_int("STENCIL_CLEAN", 0);
	int rows = clean ? n : n + 1;   /* the bug: "for (r = 0; r <= n; r++)" */
	size_t cells = (size_t)n * n;
	float *host = (float *)malloc(cells * sizeof(float)), *norms_h;
	float *a, *b, *norms;
	struct timespec t0, t1;
	double residual = 0;

	if (n < 8 || iters < 1 || !host) {
		fprintf(stderr, "hunt-stencil: STENCIL_N must be at least 8 and STENCIL_ITERS at least 1\n");
		return 2;
	}
	srand(7);
	for (size_t i = 0; i < cells; i++)
		host[i] = (float)(rand() % 1000) / 1000.f;
	CHECK(cudaMalloc((void **)&a, cells * sizeof(float)));
	CHECK(cudaMalloc((void **)&b, cells * sizeof(float)));
	CHECK(cudaMalloc((void **)&norms, (size_t)(n + 1) * sizeof(float)));
	CHECK(cudaMemcpy(a, host, cells * sizeof(float), cudaMemcpyHostToDevice));
	CHECK(cudaMemcpy(b, a, cells * sizeof(float), cudaMemcpyDeviceToDevice));
	CHECK(cudaDeviceSynchronize());

	dim3 blk(32, 8), grd((n + 31) / 32, (n + 7) / 8);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int it = 0; it < iters; it++) {
		smooth<<<grd, blk>>>(a, b, n);
		float *t = a; a = b; b = t;
	}
	CHECK(cudaGetLastError());
	CHECK(cudaDeviceSynchronize());
	clock_gettime(CLOCK_MONOTONIC, &t1);
	row_norms<<<rows, 256>>>(a, norms, n);
	CHECK(cudaGetLastError());
	CHECK(cudaDeviceSynchronize());

	norms_h = (float *)malloc((size_t)rows * sizeof(float));
	if (!norms_h)
		return 1;
	CHECK(cudaMemcpy(norms_h, norms, (size_t)rows * sizeof(float), cudaMemcpyDeviceToHost));
	for (int r = 0; r < rows; r++)
		residual += norms_h[r];
	printf("hunt-stencil: %d x %d, %d sweeps in %.3f s, residual %.3f%s\n", n, n, iters,
	       (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9, residual,
	       clean ? "" : " (rows 0..N inclusive: one row past the grid)");
	free(host);
	free(norms_h);
	cudaFree(a);
	cudaFree(b);
	cudaFree(norms);
	return 0;
}
