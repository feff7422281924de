/*
 * capture-pyframes.c - test helper for capture/python.c (the Python frame
 * reader of the capture library), built by t1002-capture-python.sh.
 *
 * Built as a shared object, Python loads it with ctypes and calls
 * pyframes_dump(buf, len, max): it runs cap_py_frames() exactly as a launch
 * callback would and writes "STATE N" then one "FILE:LINE:FUNC" line per
 * frame into buf.  Through ctypes.PyDLL the caller holds the GIL; through
 * ctypes.CDLL ctypes releases it first, as PyTorch and Triton do before
 * they launch.  Also: pyframes_cthread (the same from a new C thread that
 * never ran Python), pyframes_layout (which layout the reader uses),
 * pyframes_calibrate and pyframes_bench (ns per cap_py_frames call).
 * Built with -DPYFRAMES_MAIN it is a plain C program that prints the same
 * for itself: no CPython in the process, so STATE is none.
 *
 * Built with -DPYFRAMES_CUPTI (t1004) it is none of the above but a way for
 * Python to drive the real capture library through the fake CUPTI/driver of
 * capture-fakecuda.c, as capture-fakeprog.c does for C:
 * pyframes_fake_init() plays cuInit (load CUDA_INJECTION64_PATH, call
 * InitializeInjection, a context appears), pyframes_fake_launch(result) one
 * cuLaunchKernel of _Z4fillPfi, enter and exit callbacks, on the calling
 * thread: through ctypes.CDLL with the GIL released, as PyTorch launches.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#define API __attribute__((visibility("default")))

#ifdef PYFRAMES_CUPTI
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>

#include <cuda.h>
#include <cupti.h>

static int (*fire)(CUpti_CallbackDomain, CUpti_CallbackId, const void *);

API int pyframes_fake_init(void)
{
	const char *lib = getenv("CUDA_INJECTION64_PATH");
	void *h, *cuda;
	int (*inj)(void);
	CUpti_ResourceData r;

	if (!lib || !(h = dlopen(lib, RTLD_NOW | RTLD_LOCAL)))
		return -1;
	cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	*(void **)&inj = dlsym(h, "InitializeInjection");
	*(void **)&fire = cuda ? dlsym(cuda, "fake_fire") : NULL;
	if (!inj || !fire)
		return -1;
	inj();
	memset(&r, 0, sizeof(r));
	r.context = (CUcontext)(uintptr_t)0xc0;
	fire(CUPTI_CB_DOMAIN_RESOURCE, CUPTI_CBID_RESOURCE_CONTEXT_CREATED, &r);
	return 0;
}

/* One driver call: its enter and exit callbacks, returning `result`. */
static void fake_call(CUpti_CallbackId cbid, const char *name, const void *params, int result)
{
	CUresult ret = (CUresult)result;
	uint64_t corr = 0;
	CUpti_CallbackData d;

	memset(&d, 0, sizeof(d));
	d.functionName = name;
	d.functionParams = params;
	d.functionReturnValue = &ret;
	d.correlationData = &corr;
	d.callbackSite = CUPTI_API_ENTER;
	fire(CUPTI_CB_DOMAIN_DRIVER_API, cbid, &d);
	d.callbackSite = CUPTI_API_EXIT;
	fire(CUPTI_CB_DOMAIN_DRIVER_API, cbid, &d);
}

/* pystack-cost.sh's knobs for a loop's shape (0: off): COST_VARIANTS=N,
 * the big kernel's launches cycle through N argument blocks (a step's many
 * distinct launches: as many entries of the short-launch table);
 * COST_THRASH_KB=K, K KiB of memory written before each launch (the
 * program's own work between launches, which leaves the library's data
 * out of the cache). */
static unsigned long cost_env(const char *name)
{
	const char *v = getenv(name);
	return v && *v ? strtoul(v, NULL, 10) : 0;
}

static void cost_shape(int *n)
{
	static unsigned long variants, thrash, count;
	static unsigned char *mem;
	static int inited;

	if (!inited) {
		inited = 1;
		variants = cost_env("COST_VARIANTS");
		thrash = cost_env("COST_THRASH_KB") << 10;
		mem = thrash ? malloc(thrash) : NULL;
	}
	if (variants)
		*n += (int)(count % variants);
	count++;
	if (mem)
		memset(mem, (int)count, thrash);
}

static void fake_launch(int result, int big)
{
	CUdeviceptr p = 0xd00000000000ull;
	int n = 1000;
	unsigned char params[640];   /* the big kernel's one struct (capture-fakecuda.c) */
	void *kp[2] = { &p, &n }, *kpb[1] = { params };
	cuLaunchKernel_params q = { (CUfunction)(uintptr_t)(big ? 0xf002 : 0xf001), 4, 1, 1, 256, 1, 1, 0, NULL,
				    big ? kpb : kp, NULL };

	if (!fire)
		return;
	cost_shape(&n);
	memset(params, 0, sizeof(params));
	memcpy(params, &p, sizeof(p));
	memcpy(params + 8, &n, sizeof(n));
	for (int i = 2; i < 10; i++) {   /* more tensors' addresses, as cuDNN's structs hold */
		CUdeviceptr t = p + (CUdeviceptr)i * 0x200000;
		memcpy(params + 8 * i, &t, sizeof(t));
	}
	fake_call(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, "cuLaunchKernel", &q, result);
}

API void pyframes_fake_launch(int result)
{
	fake_launch(result, 0);
}

/* a launch of the big kernel: its 640-byte struct holds a pointer and
 * sizes, the same every call (a training loop's repeats) */
API void pyframes_fake_launch_big(int result)
{
	fake_launch(result, 1);
}

/* n plain pinned allocations (cuMemHostAlloc, no flags) of `bytes` each,
 * as a loader's pinned staging buffers: only copied from, never a kernel's
 * argument.  Returns how many were made. */
API int pyframes_fake_pinned(int n, long bytes)
{
	int made = 0;
	for (int i = 0; i < n && fire; i++) {
		void *h = malloc((size_t)bytes);
		cuMemHostAlloc_params q = { &h, (size_t)bytes, 0 };
		if (!h)
			break;
		fake_call(CUPTI_DRIVER_TRACE_CBID_cuMemHostAlloc, "cuMemHostAlloc", &q, CUDA_SUCCESS);
		made++;
	}
	return made;
}

#else /* the frame reader itself */

#include "../../../common/strbuf.h"
#include "../../../capture/capture.h"

API int pyframes_dump(char *buf, int len, int max)
{
	struct tr_frame frames[CAP_PY_MAX_FRAMES];
	struct strbuf store = STRBUF_INIT, out = STRBUF_INIT;
	uint32_t n = 0, st = cap_py_frames(frames, (uint32_t)max, &n, &store, NULL);

	sb_addf(&out, "%s %u\n", st == TR_PY_FRAMES ? "frames" : st == TR_PY_NO_GIL ? "no-gil" :
		st == TR_PY_NONE ? "none" : "?", n);
	for (uint32_t i = 0; i < n; i++)
		sb_addf(&out, "%s:%u:%s\n", frames[i].file, frames[i].line, frames[i].func);
	snprintf(buf, (size_t)len, "%s", out.buf);
	sb_release(&store);
	sb_release(&out);
	return (int)st;
}

struct cthread_arg {
	char *buf;
	int len, max;
};

static void *cthread_main(void *p)
{
	struct cthread_arg *a = p;
	pyframes_dump(a->buf, a->len, a->max);
	return NULL;
}

API int pyframes_cthread(char *buf, int len, int max)
{
	struct cthread_arg a = { buf, len, max };
	pthread_t t;

	if (pthread_create(&t, NULL, cthread_main, &a))
		return -1;
	pthread_join(t, NULL);
	return 0;
}

API void pyframes_layout(char *buf, int len)
{
	snprintf(buf, (size_t)len, "%s", cap_py_layout());
}

API void pyframes_calibrate(void)
{
	cap_py_calibrate();
}

/* Nanoseconds per cap_py_frames call, over n calls of up to max frames. */
API double pyframes_bench(int n, int max)
{
	struct tr_frame frames[CAP_PY_MAX_FRAMES];
	struct strbuf store = STRBUF_INIT;
	struct timespec a, b;
	uint32_t got;

	clock_gettime(CLOCK_MONOTONIC, &a);
	for (int i = 0; i < n; i++) {
		sb_reset(&store);
		cap_py_frames(frames, (uint32_t)max, &got, &store, NULL);
	}
	clock_gettime(CLOCK_MONOTONIC, &b);
	sb_release(&store);
	return ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / (n > 0 ? n : 1);
}

#endif /* PYFRAMES_CUPTI */

#ifdef PYFRAMES_MAIN
int main(void)
{
	char buf[4096];
	pyframes_dump(buf, sizeof(buf), 8);
	fputs(buf, stdout);
	pyframes_cthread(buf, sizeof(buf), 8);
	fputs(buf, stdout);
	pyframes_layout(buf, sizeof(buf));
	printf("layout %s\n", buf);
	return 0;
}
#endif
