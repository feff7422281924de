// libsync-probe.cu - what the program sees of a kernel's fault, for
// GPUREDUCE_BLOCKING=library (capture/inject.c, lib_block_after): a few
// good launches, then one that writes far out of bounds; prints what the
// launch itself returned (cudaGetLastError right after it, as PyTorch's
// launch check does) and what the next synchronize returned.  Under
// CUDA_LAUNCH_BLOCKING=1 the launch says the fault; launched asynchronously,
// only the synchronize does; with the library waiting, the launch should
// say it again.  tests/gpu/device-session.sh part "libsync".
#include <cstdio>
#include <cuda_runtime.h>

__global__ void fill(float *p, int n, long long off)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n)
		p[i + off] = 1.0f;
}

int main()
{
	float *p = nullptr;
	cudaError_t e;
	if (cudaMalloc(&p, 1 << 20) != cudaSuccess) {
		printf("libsync-probe: cudaMalloc failed\n");
		return 2;
	}
	for (int k = 0; k < 5; k++)
		fill<<<4, 256>>>(p, 1024, 0);
	e = cudaDeviceSynchronize();
	printf("libsync-probe: good launches: %d\n", (int)e);
	fill<<<4, 256>>>(p, 1024, 1LL << 36);
	e = cudaGetLastError();
	printf("libsync-probe: faulting launch returned %d (%s)\n", (int)e, cudaGetErrorName(e));
	e = cudaDeviceSynchronize();
	printf("libsync-probe: synchronize returned %d (%s)\n", (int)e, cudaGetErrorName(e));
	return e == cudaSuccess ? 0 : 1;
}
