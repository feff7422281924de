/*
 * tmap-words.c - GPU check of the CUtensorMap word layout that replay
 * (replay/tensormap.c) and the driver double rely on: encodes a few maps
 * with cuTensorMapEncodeTiled (ranks 2 and 3, fp16/bf16/f32, swizzles),
 * prints their 16 words, checks that word 0 is the plain global address,
 * that cuTensorMapReplaceAddress changes word 0 only, and that encoding
 * the same arguments at another address gives the same words 1..15
 * (what tmap_match assumes).  Prints "tmap-words: N checks failed".
 *
 *   cc -I/usr/local/cuda/include -o tmap-words tests/gpu/tmap-words.c -lcuda
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cuda.h>

static int failed;

static void check(int ok, const char *what)
{
	printf("  %s: %s\n", ok ? "ok" : "FAIL", what);
	failed += !ok;
}

static void dump(const char *name, const CUtensorMap *m)
{
	uint64_t w[16];
	memcpy(w, m, sizeof(w));
	printf("%s:\n", name);
	for (int i = 0; i < 16; i++)
		printf("  w%-2d 0x%016llx\n", i, (unsigned long long)w[i]);
}

static void one(const char *name, CUdeviceptr base, CUdeviceptr other, CUtensorMapDataType dt, unsigned rank,
		const cuuint64_t *dims, const cuuint64_t *strides, const cuuint32_t *box, CUtensorMapSwizzle sw)
{
	CUtensorMap a, b, c;
	cuuint32_t es[5] = { 1, 1, 1, 1, 1 };
	CUresult r1 = cuTensorMapEncodeTiled(&a, dt, rank, (void *)base, dims, strides, box, es,
					     CU_TENSOR_MAP_INTERLEAVE_NONE, sw, CU_TENSOR_MAP_L2_PROMOTION_NONE,
					     CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
	CUresult r2 = cuTensorMapEncodeTiled(&b, dt, rank, (void *)other, dims, strides, box, es,
					     CU_TENSOR_MAP_INTERLEAVE_NONE, sw, CU_TENSOR_MAP_L2_PROMOTION_NONE,
					     CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
	uint64_t w0;
	if (r1 || r2) {
		printf("%s: encode failed (%d, %d)\n", name, (int)r1, (int)r2);
		failed++;
		return;
	}
	dump(name, &a);
	memcpy(&w0, &a, 8);
	check(w0 == base, "word 0 is the global address");
	check(!memcmp((char *)&a + 8, (char *)&b + 8, 120), "another address: words 1..15 unchanged");
	c = a;
	check(cuTensorMapReplaceAddress(&c, (void *)other) == CUDA_SUCCESS, "ReplaceAddress succeeds");
	check(!memcmp(&c, &b, 128), "ReplaceAddress == encode at the new address (word 0 only)");
	if (rank >= 2) {
		uint64_t w1, w4;
		memcpy(&w1, (char *)&a + 8, 8);
		memcpy(&w4, (char *)&a + 32, 8);
		printf("  w1>>32 = %llu (stride/16 = %llu); w4 = 0x%llx (dims-1 = %llu, %llu)\n",
		       (unsigned long long)(w1 >> 32), (unsigned long long)(strides[0] / 16),
		       (unsigned long long)w4, (unsigned long long)(dims[0] - 1), (unsigned long long)(dims[1] - 1));
	}
}

int main(void)
{
	CUdevice dev;
	CUcontext ctx;
	CUdeviceptr p, q;
	if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) || cuCtxSetCurrent(ctx) ||
	    cuMemAlloc(&p, 64 << 20) || cuMemAlloc(&q, 64 << 20)) {
		printf("tmap-words: no GPU\n");
		return 2;
	}
	{
		cuuint64_t d[2] = { 1024, 2048 }, s[1] = { 2048 };
		cuuint32_t b[2] = { 64, 64 };
		one("2-D f16 1024x2048 box 64x64 swizzle 128B", p, q, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, d, s, b,
		    CU_TENSOR_MAP_SWIZZLE_128B);
	}
	{
		cuuint64_t d[2] = { 64, 4096 }, s[1] = { 2ull << 20 };
		cuuint32_t b[2] = { 64, 64 };
		one("2-D bf16 64x4096, row stride 2 MiB (triton-tma's bad stride)", p, q,
		    CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, d, s, b, CU_TENSOR_MAP_SWIZZLE_128B);
	}
	{
		cuuint64_t d[3] = { 64, 32, 8 }, s[2] = { 256, 8192 };
		cuuint32_t b[3] = { 64, 8, 2 };
		one("3-D f32 64x32x8 box 64x8x2 no swizzle", p + 4096, q + 4096, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 3,
		    d, s, b, CU_TENSOR_MAP_SWIZZLE_NONE);
	}
	printf("tmap-words: %d checks failed\n", failed);
	return failed ? 1 : 0;
}
