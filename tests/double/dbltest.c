/*
 * dbltest.c - exercises the CPU driver double the way a CUDA driver-API
 * program (an emitted repro, a replay worker) does: compiled against
 * <cuda.h> and linked with -l:libcuda.so.1 by tests/cli/t2000-double-*.sh.
 *
 * usage: dbltest MODE CUBIN [ARG]
 * Each mode runs in a fresh process (faults are sticky) and exits 0 when
 * every expectation held, 1 otherwise (each failure printed to stderr);
 * modes that report an outcome print it on stdout ("fault", "ok").
 * devices ORD (under DOUBLE_DEVICES): what separates one device's context
 * and memory from another's.
 * The expected parameter layouts below are written out independently of
 * the double's registry on purpose.
 */
#include <cuda.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static int failures;
static const char *cubin_path;

#define EXPECT(call, want) expect_at(__LINE__, #call, (call), (want))
#define TRUE(cond) do { if (!(cond)) { \
	fprintf(stderr, "dbltest:%d: expected %s\n", __LINE__, #cond); failures++; } } while (0)

static const char *ename(CUresult r)
{
	const char *s = NULL;
	if (cuGetErrorName(r, &s) != CUDA_SUCCESS || !s)
		return "?";
	return s;
}

static CUresult expect_at(int line, const char *call, CUresult got, CUresult want)
{
	if (got != want) {
		fprintf(stderr, "dbltest:%d: %s = %d %s, want %d %s\n", line, call, (int)got, ename(got),
			(int)want, ename(want));
		failures++;
	}
	return got;
}

static void *read_whole(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long n;
	if (!f || fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET))
		goto out;
	buf = malloc((size_t)n + 1);
	if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
		goto out;
	}
	*len = (size_t)n;
out:
	if (f)
		fclose(f);
	if (!buf) {
		fprintf(stderr, "dbltest: cannot read %s\n", path);
		exit(2);
	}
	return buf;
}

/* cuInit, primary context, the test module. */
static CUmodule setup(void)
{
	CUdevice dev;
	CUcontext ctx;
	CUmodule mod = NULL;
	size_t len;
	void *img = read_whole(cubin_path, &len);
	EXPECT(cuInit(0), CUDA_SUCCESS);
	EXPECT(cuDeviceGet(&dev, 0), CUDA_SUCCESS);
	EXPECT(cuDevicePrimaryCtxRetain(&ctx, dev), CUDA_SUCCESS);
	EXPECT(cuCtxSetCurrent(ctx), CUDA_SUCCESS);
	EXPECT(cuModuleLoadData(&mod, img), CUDA_SUCCESS);
	free(img);      /* the driver keeps its own copy */
	return mod;
}

static CUfunction get(CUmodule mod, const char *name)
{
	CUfunction f = NULL;
	EXPECT(cuModuleGetFunction(&f, mod, name), CUDA_SUCCESS);
	return f;
}

static CUresult launch1d(CUfunction f, unsigned grid, unsigned block, void **params)
{
	return cuLaunchKernel(f, grid, 1, 1, block, 1, 1, 0, NULL, params, NULL);
}

/* (a) correct kernels give correct results, every way of launching. */
static void mode_basics(void)
{
	CUmodule mod = setup();
	CUfunction scale = get(mod, "_Z5scalePfPKfi");
	enum { N = 1000 };
	float h_in[N], h_out[N];
	CUdeviceptr in, out;
	int n = N, v, count;
	char name[64];
	size_t tot, fr;
	for (int i = 0; i < N; i++)
		h_in[i] = (float)i;
	EXPECT(cuDeviceGetCount(&count), CUDA_SUCCESS);
	TRUE(count == 1);
	EXPECT(cuDeviceGetName(name, sizeof(name), 0), CUDA_SUCCESS);
	TRUE(!strcmp(name, "gpureduce CPU double"));
	EXPECT(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 0), CUDA_SUCCESS);
	TRUE(v == 9);
	EXPECT(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, 0),
	       CUDA_SUCCESS);
	TRUE(v == 1);
	EXPECT(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, 0), CUDA_SUCCESS);
	TRUE(v == 49152);
	EXPECT(cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, 1), CUDA_ERROR_INVALID_DEVICE);
	EXPECT(cuDriverGetVersion(&v), CUDA_SUCCESS);
	TRUE(v == 13000);
	EXPECT(cuDeviceTotalMem(&tot, 0), CUDA_SUCCESS);

	EXPECT(cuMemAlloc(&in, N * sizeof(float)), CUDA_SUCCESS);
	EXPECT(cuMemAlloc(&out, N * sizeof(float)), CUDA_SUCCESS);
	TRUE(in % 256 == 0 && out % 256 == 0);
	EXPECT(cuMemAlloc(&in, 0), CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuMemGetInfo(&fr, &tot), CUDA_SUCCESS);
	TRUE(fr <= tot - 2 * N * sizeof(float));
	EXPECT(cuMemcpyHtoD(in, h_in, sizeof(h_in)), CUDA_SUCCESS);
	EXPECT(cuMemsetD32(out, 0, N), CUDA_SUCCESS);

	/* kernelParams */
	void *params[] = { &out, &in, &n };
	EXPECT(launch1d(scale, (N + 255) / 256, 256, params), CUDA_SUCCESS);
	EXPECT(cuCtxSynchronize(), CUDA_SUCCESS);
	EXPECT(cuMemcpyDtoH(h_out, out, sizeof(h_out)), CUDA_SUCCESS);
	for (int i = 0; i < N; i++)
		if (h_out[i] != 2.0f * (float)i) {
			TRUE(h_out[i] == 2.0f * (float)i);
			break;
		}

	/* extra: a packed buffer, as at the offsets cuFuncGetParamInfo gives */
	unsigned char buf[20];
	size_t bufsize = sizeof(buf);
	CUdeviceptr out2;
	int half = N / 2;
	EXPECT(cuMemAlloc(&out2, N * sizeof(float)), CUDA_SUCCESS);
	EXPECT(cuMemsetD8(out2, 0, N * sizeof(float)), CUDA_SUCCESS);
	memcpy(buf, &out2, 8);
	memcpy(buf + 8, &out, 8);
	memcpy(buf + 16, &half, 4);
	void *extra[] = { CU_LAUNCH_PARAM_BUFFER_POINTER, buf, CU_LAUNCH_PARAM_BUFFER_SIZE, &bufsize,
			  CU_LAUNCH_PARAM_END };
	EXPECT(cuLaunchKernel(scale, 4, 1, 1, 256, 1, 1, 0, NULL, NULL, extra), CUDA_SUCCESS);
	EXPECT(cuMemcpyDtoH(h_out, out2, sizeof(h_out)), CUDA_SUCCESS);
	TRUE(h_out[10] == 40.0f && h_out[half - 1] == 4.0f * (half - 1) && h_out[half] == 0.0f);
	bufsize = 12;   /* too small for the layout */
	EXPECT(cuLaunchKernel(scale, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, extra), CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuLaunchKernel(scale, 1, 1, 1, 1, 1, 1, 0, NULL, params, extra), CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuLaunchKernel(scale, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL), CUDA_ERROR_INVALID_VALUE);

	/* cuLaunchKernelEx, a 2D block, a stream */
	CUstream st;
	CUfunction add_one = get(mod, "_Z7add_onePfi");
	void *p_add[] = { &out, &n };
	CUlaunchConfig cfg;
	memset(&cfg, 0, sizeof(cfg));
	EXPECT(cuStreamCreate(&st, 0), CUDA_SUCCESS);
	cfg.gridDimX = 4; cfg.gridDimY = 1; cfg.gridDimZ = 1;
	cfg.blockDimX = 256; cfg.blockDimY = 1; cfg.blockDimZ = 1;
	cfg.hStream = st;
	EXPECT(cuLaunchKernelEx(&cfg, add_one, p_add, NULL), CUDA_SUCCESS);
	EXPECT(cuStreamSynchronize(st), CUDA_SUCCESS);
	EXPECT(cuMemcpyDtoH(h_out, out, sizeof(h_out)), CUDA_SUCCESS);
	TRUE(h_out[7] == 15.0f && h_out[N - 1] == 2.0f * (N - 1) + 1.0f);
	EXPECT(cuLaunchCooperativeKernel(add_one, 4, 1, 1, 256, 1, 1, 0, st, p_add), CUDA_SUCCESS);
	EXPECT(cuMemcpyDtoH(h_out, out, sizeof(h_out)), CUDA_SUCCESS);
	TRUE(h_out[7] == 16.0f);
	EXPECT(cuStreamDestroy(st), CUDA_SUCCESS);
	EXPECT(cuStreamSynchronize(st), CUDA_ERROR_INVALID_HANDLE);

	/* bad launch configurations */
	EXPECT(cuLaunchKernel(add_one, 1, 1, 1, 1025, 1, 1, 0, NULL, p_add, NULL), CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuLaunchKernel(add_one, 0, 1, 1, 32, 1, 1, 0, NULL, p_add, NULL), CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuLaunchKernel(add_one, 1, 1, 1, 32, 1, 1, 60000, NULL, p_add, NULL), CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuFuncSetAttribute(add_one, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 60000),
	       CUDA_SUCCESS);
	EXPECT(cuLaunchKernel(add_one, 1, 1, 1, 32, 1, 1, 60000, NULL, p_add, NULL), CUDA_SUCCESS);
	EXPECT(cuLaunchKernel((CUfunction)&n, 1, 1, 1, 32, 1, 1, 0, NULL, p_add, NULL), CUDA_ERROR_INVALID_HANDLE);

	/* a struct by value with two device pointers inside */
	struct { CUdeviceptr a, b; int n; } pair = { in, out2, N };
	void *p_pair[] = { &pair };
	EXPECT(launch1d(get(mod, "_Z13struct_params4Pair"), 4, 256, p_pair), CUDA_SUCCESS);
	EXPECT(cuMemcpyDtoH(h_out, out2, sizeof(h_out)), CUDA_SUCCESS);
	TRUE(h_out[0] == 1.0f && h_out[999] == 1000.0f);

	/* fill with a float parameter, and the memsets */
	float fv = 2.5f;
	void *p_fill[] = { &out, &fv, &n };
	EXPECT(launch1d(get(mod, "_Z4fillPffi"), 4, 256, p_fill), CUDA_SUCCESS);
	EXPECT(cuMemcpyDtoH(h_out, out, sizeof(h_out)), CUDA_SUCCESS);
	TRUE(h_out[0] == 2.5f && h_out[999] == 2.5f);
	EXPECT(cuMemsetD16(out, 0x3f80, N * 2), CUDA_SUCCESS);
	uint16_t h16[4];
	EXPECT(cuMemcpyDtoH(h16, out + 2 * 1000, sizeof(h16)), CUDA_SUCCESS);
	TRUE(h16[0] == 0x3f80 && h16[3] == 0x3f80);
	EXPECT(cuMemsetD16(out + 1, 0, 2), CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuMemsetD32(out + 2, 0, 2), CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuMemsetD2D8(out, 100, 7, 10, 40), CUDA_SUCCESS);       /* 39*100+10 = 3910 bytes */
	EXPECT(cuMemsetD2D8(out, 100, 7, 10, 41), CUDA_ERROR_INVALID_VALUE);  /* 4010 > 4000 */
	EXPECT(cuMemsetD2D32(out, 8, 0x01020304, 3, 2), CUDA_ERROR_INVALID_VALUE);  /* pitch < width */
	EXPECT(cuMemsetD2D32(out, 16, 0x01020304, 3, 2), CUDA_SUCCESS);
	unsigned char h8[101];
	EXPECT(cuMemcpyDtoH(h8, out + 100, sizeof(h8)), CUDA_SUCCESS);
	TRUE(h8[9] == 7 && h8[10] != 7 && h8[100] == 7);
	EXPECT(cuMemsetD2D16(out, 2, 1, 1, 2000), CUDA_SUCCESS);

	/* copies are checked against the allocation table */
	EXPECT(cuMemcpyHtoD(in, h_in, sizeof(h_in) + 1), CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuMemcpyHtoD(in + 4, h_in, sizeof(h_in)), CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuMemcpyDtoH(h_out, in - 4, 8), CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuMemcpyDtoD(out, in, sizeof(h_in)), CUDA_SUCCESS);
	EXPECT(cuMemcpyDtoD(out, (CUdeviceptr)(uintptr_t)h_in, 4), CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuMemcpyHtoD(in, h_in, 0), CUDA_SUCCESS);
	CUdeviceptr base;
	size_t size;
	EXPECT(cuMemGetAddressRange(&base, &size, in + 100), CUDA_SUCCESS);
	TRUE(base == in && size == sizeof(h_in));
	EXPECT(cuMemGetAddressRange(&base, &size, (CUdeviceptr)(uintptr_t)h_in), CUDA_ERROR_NOT_FOUND);

	/* __device__ globals from the image */
	CUdeviceptr g;
	int limit = 0;
	float t3[3];
	long long counter = -1;
	EXPECT(cuModuleGetGlobal(&g, &size, mod, "d_limit"), CUDA_SUCCESS);
	TRUE(size == sizeof(int));
	EXPECT(cuMemcpyDtoH(&limit, g, sizeof(limit)), CUDA_SUCCESS);
	TRUE(limit == 1000);
	EXPECT(cuModuleGetGlobal(&g, &size, mod, "d_table"), CUDA_SUCCESS);
	TRUE(size == 64 * sizeof(float));
	EXPECT(cuMemcpyDtoH(t3, g, sizeof(t3)), CUDA_SUCCESS);
	TRUE(t3[0] == 1.0f && t3[2] == 3.0f);
	EXPECT(cuModuleGetGlobal(&g, &size, mod, "d_counter"), CUDA_SUCCESS);
	EXPECT(cuMemcpyDtoH(&counter, g, sizeof(counter)), CUDA_SUCCESS);
	TRUE(counter == 0);
	EXPECT(cuModuleGetGlobal(&g, &size, mod, "d_nothing"), CUDA_ERROR_NOT_FOUND);

	/* free, unload, release */
	EXPECT(cuMemFree(in), CUDA_SUCCESS);
	EXPECT(cuMemFree(in), CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuMemcpyHtoD(in, h_in, 4), CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuModuleUnload(mod), CUDA_SUCCESS);
	EXPECT(cuModuleUnload(mod), CUDA_ERROR_INVALID_HANDLE);
	EXPECT(launch1d(add_one, 1, 1, p_add), CUDA_ERROR_INVALID_HANDLE);
	EXPECT(cuDevicePrimaryCtxRelease(0), CUDA_SUCCESS);
	EXPECT(cuMemAlloc(&in, 4), CUDA_ERROR_INVALID_CONTEXT);
	EXPECT(cuDevicePrimaryCtxRelease(0), CUDA_ERROR_INVALID_CONTEXT);
}

/* (b) scale_nocheck with a grid of `threads` threads over 1000-float
 * buffers: prints "fault" or "ok"; after a fault the error is sticky. */
static void mode_nocheck(int threads)
{
	CUmodule mod = setup();
	CUfunction f = get(mod, "_Z13scale_nocheckPfPKfi");
	CUdeviceptr in, out, p;
	int n = 1000;
	void *params[] = { &out, &in, &n };
	CUresult r;
	EXPECT(cuMemAlloc(&in, 4000), CUDA_SUCCESS);
	EXPECT(cuMemAlloc(&out, 4000), CUDA_SUCCESS);
	if (threads <= 1024)
		r = launch1d(f, 1, (unsigned)threads, params);
	else
		r = launch1d(f, (unsigned)(threads / 64), 64, params);
	if (r == CUDA_SUCCESS) {
		printf("ok\n");
		EXPECT(cuCtxSynchronize(), CUDA_SUCCESS);
		return;
	}
	printf("fault %s\n", ename(r));
	EXPECT(r, CUDA_ERROR_ILLEGAL_ADDRESS);
	EXPECT(cuCtxSynchronize(), CUDA_ERROR_ILLEGAL_ADDRESS);
	EXPECT(cuMemAlloc(&p, 16), CUDA_ERROR_ILLEGAL_ADDRESS);
	EXPECT(cuMemcpyHtoD(in, &n, 4), CUDA_ERROR_ILLEGAL_ADDRESS);
	EXPECT(launch1d(f, 1, 1, params), CUDA_ERROR_ILLEGAL_ADDRESS);
	EXPECT(cuModuleLoadData(&mod, "\177ELF"), CUDA_ERROR_ILLEGAL_ADDRESS);
	/* queries that need no live context still work */
	const char *s;
	EXPECT(cuGetErrorString(CUDA_ERROR_ILLEGAL_ADDRESS, &s), CUDA_SUCCESS);
	TRUE(!strcmp(s, "an illegal memory access was encountered"));
	/* a destroyed and re-created primary context is healthy again */
	CUcontext ctx;
	EXPECT(cuDevicePrimaryCtxRelease(0), CUDA_SUCCESS);
	EXPECT(cuDevicePrimaryCtxRetain(&ctx, 0), CUDA_SUCCESS);
	EXPECT(cuMemAlloc(&p, 16), CUDA_SUCCESS);
}

/* (c) VMM guard placement: a 4000-byte buffer whose end is 96 bytes before
 * an unmapped granule; gather reads src[idx] (idx in floats): prints
 * "fault" or "ok". */
static void mode_vmm(long long idx)
{
	CUmodule mod = setup();
	CUmemAllocationProp prop;
	CUmemAccessDesc acc;
	CUmemGenericAllocationHandle h, h2;
	CUdeviceptr va, buf, out, d_idx, va2;
	size_t gran = 0;
	int n = 1;
	float one = 1.0f;
	memset(&prop, 0, sizeof(prop));
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop.location.id = 0;
	EXPECT(cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM), CUDA_SUCCESS);
	TRUE(gran == 2u << 20);
	EXPECT(cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED), CUDA_SUCCESS);
	TRUE(gran == 2u << 20);
	EXPECT(cuMemAddressReserve(&va, gran + 4096, 0, 0, 0), CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuMemAddressReserve(&va, 2 * gran, 3, 0, 0), CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuMemAddressReserve(&va, 2 * gran, 0, 0x100000000ull, 0), CUDA_SUCCESS);
	TRUE(va % gran == 0);
	EXPECT(cuMemCreate(&h, gran / 2, &prop, 0), CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuMemCreate(&h, gran, &prop, 0), CUDA_SUCCESS);
	EXPECT(cuMemMap(va + 4096, gran, 0, h, 0), CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuMemMap(va + gran, 2 * gran, 0, h, 0), CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuMemMap(va, gran, 0, h, 0), CUDA_SUCCESS);
	EXPECT(cuMemMap(va, gran, 0, h, 0), CUDA_ERROR_INVALID_VALUE);     /* already mapped */
	buf = va + gran - 4096;     /* 4000 bytes, 256-aligned: 96 bytes of slack */
	EXPECT(cuMemcpyHtoD(buf, &one, 4), CUDA_ERROR_INVALID_VALUE);       /* no access yet */
	acc.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	acc.location.id = 0;
	acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
	EXPECT(cuMemSetAccess(va, 2 * gran, &acc, 1), CUDA_ERROR_INVALID_VALUE);  /* half unmapped */
	EXPECT(cuMemSetAccess(va, gran, &acc, 1), CUDA_SUCCESS);
	EXPECT(cuMemcpyHtoD(buf, &one, 4), CUDA_SUCCESS);
	EXPECT(cuMemcpyHtoD(buf + 4092, &one, 8), CUDA_ERROR_INVALID_VALUE); /* crosses into the guard */
	EXPECT(cuMemsetD8(buf, 0, 4000), CUDA_SUCCESS);
	EXPECT(cuMemcpyHtoD(buf, &one, 4), CUDA_SUCCESS);
	/* a second reservation shows unmap/release/free bookkeeping */
	EXPECT(cuMemAddressReserve(&va2, gran, 0, 0, 0), CUDA_SUCCESS);
	EXPECT(cuMemCreate(&h2, gran, &prop, 0), CUDA_SUCCESS);
	EXPECT(cuMemMap(va2, gran, 0, h2, 0), CUDA_SUCCESS);
	EXPECT(cuMemRelease(h2), CUDA_SUCCESS);
	EXPECT(cuMemRelease(h2), CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuMemUnmap(va2, gran), CUDA_SUCCESS);
	EXPECT(cuMemUnmap(va2, gran), CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuMemAddressFree(va2, 2 * gran), CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuMemAddressFree(va2, gran), CUDA_SUCCESS);

	EXPECT(cuMemAlloc(&out, 4), CUDA_SUCCESS);
	EXPECT(cuMemAlloc(&d_idx, 8), CUDA_SUCCESS);
	EXPECT(cuMemcpyHtoD(d_idx, &idx, 8), CUDA_SUCCESS);
	void *params[] = { &out, &buf, &d_idx, &n };
	CUresult r = launch1d(get(mod, "_Z6gatherPfPKfPKxi"), 1, 1, params);
	if (r == CUDA_SUCCESS) {
		float got = -1;
		EXPECT(cuMemcpyDtoH(&got, out, 4), CUDA_SUCCESS);
		TRUE(idx != 0 || got == 1.0f);
		printf("ok\n");
	} else {
		EXPECT(r, CUDA_ERROR_ILLEGAL_ADDRESS);
		printf("fault %s\n", ename(r));
	}
}

/* VMM after unmap: kernel access to an unmapped range faults. */
static void mode_vmm_unmapped(void)
{
	CUmodule mod = setup();
	CUmemAllocationProp prop;
	CUmemAccessDesc acc;
	CUmemGenericAllocationHandle h;
	CUdeviceptr va;
	size_t gran = 2u << 20;
	int n = 16;
	memset(&prop, 0, sizeof(prop));
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	acc.location = prop.location;
	acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
	EXPECT(cuMemAddressReserve(&va, gran, 0, 0, 0), CUDA_SUCCESS);
	EXPECT(cuMemCreate(&h, gran, &prop, 0), CUDA_SUCCESS);
	EXPECT(cuMemMap(va, gran, 0, h, 0), CUDA_SUCCESS);
	EXPECT(cuMemSetAccess(va, gran, &acc, 1), CUDA_SUCCESS);
	void *params[] = { &va, &n };
	CUfunction use = get(mod, "_Z7use_bufPfi");
	EXPECT(launch1d(use, 1, 32, params), CUDA_SUCCESS);
	EXPECT(cuMemUnmap(va, gran), CUDA_SUCCESS);
	EXPECT(launch1d(use, 1, 32, params), CUDA_ERROR_ILLEGAL_ADDRESS);
}

/* (d) use after cuMemFree faults; copies to freed memory are refused. */
static void mode_uaf(void)
{
	CUmodule mod = setup();
	CUdeviceptr p;
	int n = 256;
	void *params[] = { &p, &n };
	CUfunction use = get(mod, "_Z7use_bufPfi");
	EXPECT(cuMemAlloc(&p, 1024), CUDA_SUCCESS);
	EXPECT(launch1d(use, 1, 256, params), CUDA_SUCCESS);
	EXPECT(cuMemFree(p), CUDA_SUCCESS);
	EXPECT(cuMemsetD8(p, 0, 4), CUDA_ERROR_INVALID_VALUE);
	EXPECT(launch1d(use, 1, 256, params), CUDA_ERROR_ILLEGAL_ADDRESS);
	EXPECT(cuMemFree(p), CUDA_ERROR_ILLEGAL_ADDRESS);
}

/* (e) check_index with one index against limit 1000: prints "ok" or the error. */
static void mode_assert(long long idx)
{
	CUmodule mod = setup();
	CUdeviceptr d;
	int n = 4, limit = 1000;
	long long h[4] = { 0, 1, 2, idx };
	void *params[] = { &d, &n, &limit };
	EXPECT(cuMemAlloc(&d, sizeof(h)), CUDA_SUCCESS);
	EXPECT(cuMemcpyHtoD(d, h, sizeof(h)), CUDA_SUCCESS);
	CUresult r = launch1d(get(mod, "_Z11check_indexPKxii"), 1, 32, params);
	if (r == CUDA_SUCCESS) {
		printf("ok\n");
		return;
	}
	printf("fault %s\n", ename(r));
	EXPECT(r, CUDA_ERROR_ASSERT);
	EXPECT(cuCtxSynchronize(), CUDA_ERROR_ASSERT);
}

/* One launch of racy_augment; prints "ok" or "fault"; the in-bounds part
 * of the work is done either way. */
static void mode_racy(void)
{
	CUmodule mod = setup();
	CUdeviceptr d;
	int n = 1000, seed = 3;
	float h[1000];
	void *params[] = { &d, &n, &seed };
	EXPECT(cuMemAlloc(&d, sizeof(h)), CUDA_SUCCESS);
	EXPECT(cuMemsetD32(d, 0, 1000), CUDA_SUCCESS);
	CUresult r = launch1d(get(mod, "_Z12racy_augmentPfii"), 4, 256, params);
	if (r == CUDA_SUCCESS) {
		EXPECT(cuMemcpyDtoH(h, d, sizeof(h)), CUDA_SUCCESS);
		TRUE(h[0] == 3.0f && h[999] == 3.0f);
		printf("ok\n");
	} else {
		EXPECT(r, CUDA_ERROR_ILLEGAL_ADDRESS);
		printf("fault\n");
	}
}

/* (f) metadata, names and images. */
static const struct { const char *name; int n; size_t off[4], size[4]; } layouts[] = {
	{ "_Z5scalePfPKfi", 3, { 0, 8, 16 }, { 8, 8, 4 } },
	{ "_Z13scale_nocheckPfPKfi", 3, { 0, 8, 16 }, { 8, 8, 4 } },
	{ "_Z6gatherPfPKfPKxi", 4, { 0, 8, 16, 24 }, { 8, 8, 8, 4 } },
	{ "_Z11check_indexPKxii", 3, { 0, 8, 12 }, { 8, 4, 4 } },
	{ "_Z7add_onePfi", 2, { 0, 8 }, { 8, 4 } },
	{ "_Z12racy_augmentPfii", 3, { 0, 8, 12 }, { 8, 4, 4 } },
	{ "_Z7use_bufPfi", 2, { 0, 8 }, { 8, 4 } },
	{ "_Z13struct_params4Pair", 1, { 0 }, { 24 } },
	{ "_Z4fillPffi", 3, { 0, 8, 12 }, { 8, 4, 4 } },
};

/* Expect INVALID_IMAGE from a corrupted copy of the cubin. */
static void bad_image(const unsigned char *img, size_t len, size_t at, const void *bytes, size_t n)
{
	unsigned char *copy = malloc(len);
	CUmodule m;
	memcpy(copy, img, len);
	memcpy(copy + at, bytes, n);
	if (cuModuleLoadData(&m, copy) != CUDA_ERROR_INVALID_IMAGE) {
		fprintf(stderr, "dbltest: image corrupted at %zu loaded\n", at);
		failures++;
	}
	free(copy);
}

static void mode_meta(void)
{
	CUmodule mod = setup(), m2;
	CUfunction f;
	size_t off, size, len;
	const char *name;
	for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++) {
		EXPECT(cuModuleGetFunction(&f, mod, layouts[i].name), CUDA_SUCCESS);
		for (int k = 0; k < layouts[i].n; k++) {
			EXPECT(cuFuncGetParamInfo(f, (size_t)k, &off, &size), CUDA_SUCCESS);
			if (off != layouts[i].off[k] || size != layouts[i].size[k]) {
				fprintf(stderr, "dbltest: %s param %d: offset %zu size %zu\n", layouts[i].name,
					k, off, size);
				failures++;
			}
			EXPECT(cuKernelGetParamInfo((CUkernel)f, (size_t)k, &off, &size), CUDA_SUCCESS);
			TRUE(off == layouts[i].off[k] && size == layouts[i].size[k]);
		}
		EXPECT(cuFuncGetParamInfo(f, (size_t)layouts[i].n, &off, &size), CUDA_ERROR_INVALID_VALUE);
		EXPECT(cuFuncGetName(&name, f), CUDA_SUCCESS);
		TRUE(!strcmp(name, layouts[i].name));
		EXPECT(cuKernelGetName(&name, (CUkernel)f), CUDA_SUCCESS);
		TRUE(!strcmp(name, layouts[i].name));
		CUfunction again;
		EXPECT(cuModuleGetFunction(&again, mod, layouts[i].name), CUDA_SUCCESS);
		TRUE(again == f);
	}
	EXPECT(cuFuncGetParamInfo((CUfunction)&len, 0, &off, &size), CUDA_ERROR_INVALID_HANDLE);
	EXPECT(cuModuleGetFunction(&f, mod, "_Z9not_therev"), CUDA_ERROR_NOT_FOUND);
	EXPECT(cuModuleGetFunction(&f, mod, "_Z7unknownPf"), CUDA_ERROR_NOT_FOUND);   /* image only */
	EXPECT(cuModuleGetFunction(&f, mod, "scale"), CUDA_ERROR_NOT_FOUND);
	EXPECT(cuModuleGetFunction(&f, (CUmodule)&len, "_Z5scalePfPKfi"), CUDA_ERROR_INVALID_HANDLE);

	/* images */
	EXPECT(cuModuleLoadData(&m2, "//\n// Generated by NVIDIA NVVM Compiler\n.version 8.0\n"),
	       CUDA_ERROR_INVALID_IMAGE);
	static const unsigned fatbin_magic = 0xba55ed50;
	EXPECT(cuModuleLoadData(&m2, &fatbin_magic), CUDA_ERROR_INVALID_IMAGE);
	EXPECT(cuModuleLoadData(&m2, NULL), CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuModuleLoad(&m2, cubin_path), CUDA_SUCCESS);
	EXPECT(cuModuleGetFunction(&f, m2, "_Z5scalePfPKfi"), CUDA_SUCCESS);
	EXPECT(cuModuleLoad(&m2, "/nonexistent/x.cubin"), CUDA_ERROR_FILE_NOT_FOUND);

	unsigned char *img = read_whole(cubin_path, &len);
	uint64_t big = 1ull << 40, near_end = len - 8;
	uint16_t sixteen = 16, zero16 = 0;
	unsigned char class32 = 1;
	bad_image(img, len, 4, &class32, 1);            /* ELFCLASS32 */
	bad_image(img, len, 0x28, &big, 8);             /* e_shoff far away */
	bad_image(img, len, 0x28, &near_end, 8);        /* section headers cut off */
	bad_image(img, len, 0x3a, &sixteen, 2);         /* e_shentsize */
	bad_image(img, len, 0x3c, &zero16, 2);          /* e_shnum */
	/* an image whose headers run into unmapped memory: fault guarded */
	long pg = 4096;
	unsigned char *two = mmap(NULL, 2 * pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	TRUE(two != MAP_FAILED);
	mprotect(two + pg, pg, PROT_NONE);
	memcpy(two + pg - 64, img, 64);                 /* ELF header only */
	EXPECT(cuModuleLoadData(&m2, two + pg - 64), CUDA_ERROR_INVALID_IMAGE);
	memcpy(two + pg - 4, img, 4);                   /* magic only */
	EXPECT(cuModuleLoadData(&m2, two + pg - 4), CUDA_ERROR_INVALID_IMAGE);
	/* every symbol's name offset set out of range: each load must fail
	 * cleanly or succeed, never crash; flip every byte once */
	unsigned char *copy = malloc(len);
	for (size_t i = 0; i < len; i++) {
		memcpy(copy, img, len);
		copy[i] ^= 0xff;
		if (cuModuleLoadData(&m2, copy) == CUDA_SUCCESS)
			EXPECT(cuModuleUnload(m2), CUDA_SUCCESS);
	}
	free(copy);
	free(img);

	/* error names for every code the double returns */
	static const struct { CUresult r; const char *name; } names[] = {
		{ CUDA_SUCCESS, "CUDA_SUCCESS" },
		{ CUDA_ERROR_ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS" },
		{ CUDA_ERROR_ASSERT, "CUDA_ERROR_ASSERT" },
		{ CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE" },
		{ CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND" },
		{ CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE" },
		{ CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE" },
		{ CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED" },
		{ CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT" },
		{ CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE" },
		{ CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY" },
		{ CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE" },
		{ CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED" },
		{ CUDA_ERROR_FILE_NOT_FOUND, "CUDA_ERROR_FILE_NOT_FOUND" },
		{ CUDA_ERROR_INVALID_ADDRESS_SPACE, "CUDA_ERROR_INVALID_ADDRESS_SPACE" },
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		EXPECT(cuGetErrorName(names[i].r, &name), CUDA_SUCCESS);
		TRUE(name && !strcmp(name, names[i].name));
		EXPECT(cuGetErrorString(names[i].r, &name), CUDA_SUCCESS);
	}
	EXPECT(cuGetErrorString(CUDA_ERROR_ASSERT, &name), CUDA_SUCCESS);
	TRUE(!strcmp(name, "device-side assert triggered"));
	EXPECT(cuGetErrorName((CUresult)12345, &name), CUDA_ERROR_INVALID_VALUE);
	TRUE(name == NULL);
}

/* Calls before cuInit. */
static void mode_noinit(void)
{
	CUdevice dev;
	CUdeviceptr p;
	int v;
	const char *s;
	EXPECT(cuDeviceGet(&dev, 0), CUDA_ERROR_NOT_INITIALIZED);
	EXPECT(cuMemAlloc(&p, 16), CUDA_ERROR_NOT_INITIALIZED);
	EXPECT(cuCtxSynchronize(), CUDA_ERROR_NOT_INITIALIZED);
	EXPECT(cuDriverGetVersion(&v), CUDA_SUCCESS);
	EXPECT(cuGetErrorName(CUDA_ERROR_NOT_INITIALIZED, &s), CUDA_SUCCESS);
	EXPECT(cuInit(1), CUDA_ERROR_INVALID_VALUE);
	EXPECT(cuInit(0), CUDA_SUCCESS);
	EXPECT(cuDeviceGet(&dev, 0), CUDA_SUCCESS);
	EXPECT(cuDeviceGet(&dev, 1), CUDA_ERROR_INVALID_DEVICE);
	EXPECT(cuMemAlloc(&p, 16), CUDA_ERROR_INVALID_CONTEXT);     /* no current context */
}

/* cuInit's result alone (DOUBLE_NO_DEVICE). */
static void mode_init(void)
{
	printf("%s\n", ename(cuInit(0)));
}

/* The program's own SIGSEGV handler survives a faulting launch. */
static sigjmp_buf own_jmp;
static volatile int own_hits;
static void own_handler(int sig)
{
	own_hits++;
	siglongjmp(own_jmp, 1);
}

static void mode_signal(void)
{
	CUmodule mod = setup();
	struct sigaction sa, now;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = own_handler;
	sigemptyset(&sa.sa_mask);
	/* under ASan the program keeps ASan's handler: only check it is kept */
	int own = !getenv("DBLTEST_KEEP_HANDLER");
	if (own)
		sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGSEGV, NULL, &sa);
	CUdeviceptr p;
	int n = 256;
	void *params[] = { &p, &n };
	EXPECT(cuMemAlloc(&p, 1024), CUDA_SUCCESS);
	EXPECT(cuMemFree(p), CUDA_SUCCESS);
	EXPECT(launch1d(get(mod, "_Z7use_bufPfi"), 1, 256, params), CUDA_ERROR_ILLEGAL_ADDRESS);
	sigaction(SIGSEGV, NULL, &now);
	TRUE(now.sa_handler == sa.sa_handler);
	if (own) {
		volatile char *bad = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (sigsetjmp(own_jmp, 1) == 0)
			(void)bad[0];
		TRUE(own_hits == 1);
	}
}

/* DOUBLE_DEVICES=N, ordinal `ord`: ordinals past the count fail, each
 * ordinal has its own context and address range, one device's memory is
 * not another's.  Prints "range R" (R: the allocation's address >> 40) for
 * the test to compare across ordinals, then "ok". */
static void mode_devices(int ord)
{
	CUdevice dev = -1;
	CUcontext ctx = NULL, other_ctx = NULL;
	CUdeviceptr p = 0, q = 0, va = 0;
	CUmemAllocationProp prop;
	CUmemAccessDesc acc;
	CUmemGenericAllocationHandle h;
	size_t gran = 0;
	int n = 0, other, v = 7;

	EXPECT(cuInit(0), CUDA_SUCCESS);
	EXPECT(cuDeviceGetCount(&n), CUDA_SUCCESS);
	other = ord == 0 ? n - 1 : 0;
	EXPECT(cuDeviceGet(&dev, n), CUDA_ERROR_INVALID_DEVICE);
	EXPECT(cuDeviceGet(&dev, -1), CUDA_ERROR_INVALID_DEVICE);
	EXPECT(cuDevicePrimaryCtxRetain(&ctx, n), CUDA_ERROR_INVALID_DEVICE);
	EXPECT(cuDeviceGet(&dev, ord), CUDA_SUCCESS);
	EXPECT(cuDevicePrimaryCtxRetain(&ctx, dev), CUDA_SUCCESS);
	EXPECT(cuCtxSetCurrent(ctx), CUDA_SUCCESS);
	dev = -1;
	EXPECT(cuCtxGetDevice(&dev), CUDA_SUCCESS);
	TRUE(dev == ord);
	EXPECT(cuMemAlloc(&p, 4000), CUDA_SUCCESS);
	EXPECT(cuMemcpyHtoD(p, &v, sizeof(v)), CUDA_SUCCESS);
	printf("range %llu\n", (unsigned long long)(p >> 40));
	/* VMM memory lives on a device: this one, not another */
	memset(&prop, 0, sizeof(prop));
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop.location.id = n;
	EXPECT(cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM), CUDA_ERROR_INVALID_DEVICE);
	prop.location.id = ord;
	EXPECT(cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM), CUDA_SUCCESS);
	EXPECT(cuMemAddressReserve(&va, gran, 0, 0, 0), CUDA_SUCCESS);
	TRUE(va >> 40 == p >> 40);
	EXPECT(cuMemCreate(&h, gran, &prop, 0), CUDA_SUCCESS);
	EXPECT(cuMemMap(va, gran, 0, h, 0), CUDA_SUCCESS);
	acc.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
	if (n > 1) {
		CUmemGenericAllocationHandle h2;
		prop.location.id = other;
		EXPECT(cuMemCreate(&h2, gran, &prop, 0), CUDA_ERROR_INVALID_DEVICE);
		acc.location.id = other;
		EXPECT(cuMemSetAccess(va, gran, &acc, 1), CUDA_ERROR_INVALID_DEVICE);
		/* one device's context at a time */
		EXPECT(cuDevicePrimaryCtxRetain(&other_ctx, other), CUDA_ERROR_NOT_SUPPORTED);
		EXPECT(cuDevicePrimaryCtxRelease(other), CUDA_ERROR_INVALID_CONTEXT);
	}
	acc.location.id = ord;
	EXPECT(cuMemSetAccess(va, gran, &acc, 1), CUDA_SUCCESS);
	EXPECT(cuMemcpyHtoD(va, &v, sizeof(v)), CUDA_SUCCESS);
	EXPECT(cuMemUnmap(va, gran), CUDA_SUCCESS);
	EXPECT(cuMemRelease(h), CUDA_SUCCESS);
	EXPECT(cuMemAddressFree(va, gran), CUDA_SUCCESS);
	if (n > 1) {
		/* switch devices: the first one's memory means nothing there */
		EXPECT(cuDevicePrimaryCtxRelease(ord), CUDA_SUCCESS);
		EXPECT(cuDevicePrimaryCtxRetain(&other_ctx, other), CUDA_SUCCESS);
		TRUE(other_ctx != ctx);
		EXPECT(cuCtxSetCurrent(ctx), CUDA_SUCCESS);
		EXPECT(cuMemAlloc(&q, 16), CUDA_ERROR_INVALID_CONTEXT);   /* released */
		EXPECT(cuCtxSetCurrent(other_ctx), CUDA_SUCCESS);
		EXPECT(cuMemcpyHtoD(p, &v, sizeof(v)), CUDA_ERROR_INVALID_VALUE);
		EXPECT(cuMemAlloc(&q, 4000), CUDA_SUCCESS);
		TRUE(q >> 40 != p >> 40);
		EXPECT(cuMemcpyHtoD(q, &v, sizeof(v)), CUDA_SUCCESS);
	}
	printf("ok\n");
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: dbltest MODE CUBIN [ARG]\n");
		return 2;
	}
	const char *mode = argv[1];
	cubin_path = argv[2];
	long long arg = argc > 3 ? strtoll(argv[3], NULL, 0) : 0;
	if (!strcmp(mode, "basics"))
		mode_basics();
	else if (!strcmp(mode, "nocheck"))
		mode_nocheck((int)arg);
	else if (!strcmp(mode, "vmm"))
		mode_vmm(arg);
	else if (!strcmp(mode, "vmm-unmapped"))
		mode_vmm_unmapped();
	else if (!strcmp(mode, "uaf"))
		mode_uaf();
	else if (!strcmp(mode, "assert"))
		mode_assert(arg);
	else if (!strcmp(mode, "racy"))
		mode_racy();
	else if (!strcmp(mode, "meta"))
		mode_meta();
	else if (!strcmp(mode, "noinit"))
		mode_noinit();
	else if (!strcmp(mode, "init"))
		mode_init();
	else if (!strcmp(mode, "signal"))
		mode_signal();
	else if (!strcmp(mode, "devices"))
		mode_devices((int)arg);
	else {
		fprintf(stderr, "dbltest: unknown mode %s\n", mode);
		return 2;
	}
	fflush(stdout);
	return failures ? 1 : 0;
}
