// launch-cost.cu - what capture adds to one blocking launch, without Python
// (issue 26): N launches of a small kernel through the runtime API, and
// with COPY_EVERY=K a pageable host-to-device copy of COPY_KB KiB every K
// launches (a host-fed loop's batch: random bytes, none alike).  Prints the loop's own seconds and
// microseconds a launch; tests/gpu/launch-cost.sh runs it several ways.
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct Params { float *a, *b; int n; float scale; };

__global__ void small_kernel(float *out, const float *in, int n, Params p)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n && n < 0)
		out[i] = in[i] * p.scale + p.a[0];
}

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000;
	long every = getenv("COPY_EVERY") ? atol(getenv("COPY_EVERY")) : 0;
	size_t bytes = (size_t)(getenv("COPY_KB") ? atol(getenv("COPY_KB")) : 768) << 10;
	float *d;
	char *hb = NULL, *db = NULL;
	if (cudaMalloc(&d, 1 << 20) != cudaSuccess) {
		fprintf(stderr, "launch-cost: no GPU memory\n");
		return 2;
	}
	if (every > 0 && (cudaMalloc(&db, bytes) != cudaSuccess || !(hb = (char *)malloc(bytes)))) {
		fprintf(stderr, "launch-cost: no memory for the copies\n");
		return 2;
	}
	if (hb) {
		unsigned long x = 88172645463325252ull;
		for (size_t o = 0; o < bytes; o++) {
			x ^= x << 13; x ^= x >> 7; x ^= x << 17;
			hb[o] = (char)x;
		}
	}
	Params p = { d, d + 1024, 1024, 0.5f };
	for (int i = 0; i < 1000; i++)
		small_kernel<<<4, 128>>>(d, d + 4096, 512, p);
	cudaDeviceSynchronize();
	double t0 = now();
	for (long i = 0; i < n; i++) {
		if (every > 0 && i % every == 0) {
			/* a fresh batch each time: random bytes, a counter in
			 * every 4 KiB (no two copies alike, none compressible) */
			for (size_t o = 0; o + sizeof(long) <= bytes; o += 4096)
				memcpy(hb + o, &i, sizeof(long));
			cudaMemcpy(db, hb, bytes, cudaMemcpyHostToDevice);
		}
		p.n = (int)(i & 1023);
		small_kernel<<<4, 128>>>(d, d + 4096, 512, p);
	}
	cudaError_t e = cudaDeviceSynchronize();
	double t = now() - t0;
	printf("launch-cost: %ld launches in %.3f s: %.2f us each%s\n", n, t, t * 1e6 / n,
	       e == cudaSuccess ? "" : " (error)");
	return e == cudaSuccess ? 0 : 1;
}
