/*
 * fakeprog.h - what the test programs that are captured for real on the CPU
 * driver double share (ckpt-prog.c, rank-prog.c, tma-prog.c): each driver
 * call goes to the double between the enter and exit callbacks CUPTI would
 * deliver, fired through fake_fire of capture-fakecuda's fake CUPTI
 * (libcupti.so.13), after the capture library named by
 * CUDA_INJECTION64_PATH is loaded and initialised.
 *
 * Define PROG (the program's name, for messages) before including it.
 * Every helper exits 2 on a set-up error, as the programs document.
 */
#ifndef FAKEPROG_H
#define FAKEPROG_H

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>
#include <cupti.h>

#ifndef PROG
#error "define PROG before including fakeprog.h"
#endif
#define FP_UNUSED __attribute__((unused))

static int (*fire)(CUpti_CallbackDomain, CUpti_CallbackId, const void *);
/* the capture library's gpureduce_capture_pause (measurements), or NULL */
static FP_UNUSED int (*capture_pause)(int);

struct call {
	CUpti_CallbackData d;
	uint64_t corr;
	CUresult ret;
};

static int nofire(CUpti_CallbackDomain d, CUpti_CallbackId id, const void *p)
{
	(void)d; (void)id; (void)p;
	return 0;
}

static void enter(struct call *c, CUpti_CallbackId cbid, const char *name, const void *params)
{
	memset(c, 0, sizeof(*c));
	c->d.functionName = name;
	c->d.functionParams = params;
	c->d.functionReturnValue = &c->ret;
	c->d.correlationData = &c->corr;
	c->d.callbackSite = CUPTI_API_ENTER;
	fire(CUPTI_CB_DOMAIN_DRIVER_API, cbid, &c->d);
}

/* The call's result as the exit callback left it (the capture library
 * gives a launch it waited for the kernel's fault: GPUREDUCE_BLOCKING=library). */
static CUresult leave(struct call *c, CUpti_CallbackId cbid, CUresult r)
{
	c->ret = r;
	c->d.callbackSite = CUPTI_API_EXIT;
	fire(CUPTI_CB_DOMAIN_DRIVER_API, cbid, &c->d);
	return c->ret;
}

/* Call fn(args) on the double between CUPTI's enter and exit callbacks. */
#define CALL(fn, cb, params, ...) ({ \
	struct call c_; \
	enter(&c_, CUPTI_DRIVER_TRACE_CBID_##cb, #cb, params); \
	leave(&c_, CUPTI_DRIVER_TRACE_CBID_##cb, fn(__VA_ARGS__)); })

static void die(const char *what, CUresult r)
{
	fprintf(stderr, PROG ": %s failed (%d)\n", what, (int)r);
	exit(2);
}

/* Load CUDA_INJECTION64_PATH and run its InitializeInjection; with plain,
 * load nothing and fire no callbacks (the program without capture). */
static FP_UNUSED void load_injection(int plain)
{
	const char *lib = getenv("CUDA_INJECTION64_PATH");
	void *h, *cupti;
	int (*inj)(void);

	if (plain) {
		fire = nofire;
		return;
	}
	if (!lib || !(h = dlopen(lib, RTLD_LAZY | RTLD_LOCAL))) {
		fprintf(stderr, PROG ": cannot load CUDA_INJECTION64_PATH=%s: %s\n", lib ? lib : "(unset)",
			dlerror());
		exit(2);
	}
	*(void **)&inj = dlsym(h, "InitializeInjection");
	*(void **)&capture_pause = dlsym(h, "gpureduce_capture_pause");
	cupti = dlopen("libcupti.so.13", RTLD_LAZY | RTLD_NOLOAD);
	*(void **)&fire = cupti ? dlsym(cupti, "fake_fire") : NULL;
	if (!inj || !fire) {
		fprintf(stderr, PROG ": no InitializeInjection or fake_fire\n");
		exit(2);
	}
	inj();
}

static FP_UNUSED CUdeviceptr alloc(size_t size)
{
	CUdeviceptr p = 0;
	cuMemAlloc_v2_params q = { &p, size };
	CUresult r = CALL(cuMemAlloc, cuMemAlloc_v2, &q, &p, size);
	if (r)
		die("cuMemAlloc", r);
	return p;
}

static FP_UNUSED void h2d(CUdeviceptr dst, const void *src, size_t n)
{
	cuMemcpyHtoD_v2_params q = { dst, src, n };
	CUresult r = CALL(cuMemcpyHtoD, cuMemcpyHtoD_v2, &q, dst, src, n);
	if (r)
		die("cuMemcpyHtoD", r);
}

static FP_UNUSED void memset8(CUdeviceptr dst, unsigned char v, size_t n)
{
	cuMemsetD8_v2_params q = { dst, v, n };
	CUresult r = CALL(cuMemsetD8, cuMemsetD8_v2, &q, dst, v, n);
	if (r)
		die("cuMemsetD8", r);
}

/* cuLaunchKernel of f on grid x block threads, no shared memory. */
static FP_UNUSED CUresult launch_block(CUfunction f, unsigned grid, unsigned block, void **kp)
{
	cuLaunchKernel_params q = { f, grid, 1, 1, block, 1, 1, 0, NULL, kp, NULL };
	return CALL(cuLaunchKernel, cuLaunchKernel, &q, f, grid, 1, 1, block, 1, 1, 0, NULL, kp, NULL);
}

/* The whole file (a kernel image); exits 2 when it cannot be read. */
/* A resource callback (context created, module loaded) for ctx. */
static FP_UNUSED void resource_ctx(CUpti_CallbackId cbid, CUcontext ctx, void *desc)
{
	CUpti_ResourceData r;
	memset(&r, 0, sizeof(r));
	r.context = ctx;
	r.resourceDescriptor = desc;
	fire(CUPTI_CB_DOMAIN_RESOURCE, cbid, &r);
}

/* As Triton does before every launch: the same attribute, again and again. */
static FP_UNUSED void set_attr(CUfunction f, int value)
{
	cuFuncSetAttribute_params q = { f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, value };
	CUresult r = CALL(cuFuncSetAttribute, cuFuncSetAttribute, &q, f,
			  CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, value);
	if (r)
		die("cuFuncSetAttribute", r);
}

static FP_UNUSED void *read_image(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long len;
	if (!f || fseek(f, 0, SEEK_END) || (len = ftell(f)) <= 0 || fseek(f, 0, SEEK_SET)) {
		fprintf(stderr, PROG ": cannot read %s\n", path);
		exit(2);
	}
	buf = malloc((size_t)len);
	if (!buf || fread(buf, 1, (size_t)len, f) != (size_t)len) {
		fprintf(stderr, PROG ": cannot read %s\n", path);
		exit(2);
	}
	fclose(f);
	*n = (size_t)len;
	return buf;
}

/* The start the capture tests' programs share: cuInit, the injection
 * (load_injection(plain)), the primary context current (its callback
 * fired), the cubin at path loaded as module 1 (its callback fired, the
 * image kept).  Returns the module; dies on a failure. */
static FP_UNUSED CUmodule start_on_cubin(const char *path, int plain)
{
	CUpti_ModuleResourceData md;
	CUdevice dev;
	CUcontext ctx;
	CUmodule mod;
	CUresult r;
	size_t len;
	void *img;

	if ((r = cuInit(0)))
		die("cuInit", r);
	load_injection(plain);
	if ((r = cuDeviceGet(&dev, 0)) || (r = cuDevicePrimaryCtxRetain(&ctx, dev)) || (r = cuCtxSetCurrent(ctx)))
		die("context", r);
	resource_ctx(CUPTI_CBID_RESOURCE_CONTEXT_CREATED, ctx, NULL);
	img = read_image(path, &len);
	if ((r = cuModuleLoadData(&mod, img)))
		die("cuModuleLoadData", r);
	memset(&md, 0, sizeof(md));
	md.moduleId = 1;
	md.cubinSize = len;
	md.pCubin = img;
	resource_ctx(CUPTI_CBID_RESOURCE_MODULE_LOADED, ctx, &md);
	return mod;
}

#endif
