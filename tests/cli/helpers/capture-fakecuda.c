/*
 * capture-fakecuda.c - test helper: a stand-in for libcupti.so.13 and
 * libcuda.so.1 with just what the capture library calls, so its callbacks
 * can run on a machine without a GPU (t1003-capture-callbacks.sh).  Built as
 * one shared object and installed under both names in a directory put first
 * on LD_LIBRARY_PATH.
 *
 * CUPTI part: cuptiSubscribe_v2 stores the callback (fails with
 * MULTIPLE_SUBSCRIBERS and holder "Nsight Systems" when FAKE_CUPTI_BUSY=1);
 * fake_fire() lets capture-fakeprog deliver callbacks as CUPTI would, only
 * for what the library enabled (a whole domain, or callback by callback);
 * fake_enabled() says what that is (t1010-capture-subscribed.sh).
 *
 * Driver part, a tiny fixed world:
 *   device memory   0xd00000000000 .. 0xd10000000000 (never a host address)
 *   capturing stream 0xca97 (cuStreamIsCapturing says ACTIVE)
 *   CUfunction 0xf001 "_Z4fillPfi" (ptr, int); CUkernel 0xe001
 *   "_Z5scalePfPKfi" (ptr, ptr, int) - cuFunc* reject CUkernels and vice
 *   versa, as the real driver does; handle 0xbad: no name, no layout.
 * Built with -DFAKE_CUPTI_ONLY it is the CUPTI part only (t7000, where the
 * driver is the double).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>
#include <cupti.h>

#define VIS __attribute__((visibility("default")))

static CUpti_CallbackFunc fake_cb;
static void *fake_ud;
static int domain_on[8];
static unsigned char res_on[64];
static unsigned char drv_on[CUPTI_DRIVER_TRACE_CBID_SIZE];   /* cuptiEnableCallback, one by one */

VIS CUptiResult CUPTIAPI cuptiSubscribe_v2(CUpti_SubscriberHandle *s, CUpti_CallbackFunc cb,
					   void *ud, CUpti_SubscriberParams *p)
{
	const char *busy = getenv("FAKE_CUPTI_BUSY");
	if (busy && !strcmp(busy, "1")) {
		if (p && p->oldSubscriberName && p->oldSubscriberSize > 16)
			strcpy(p->oldSubscriberName, "Nsight Systems");
		return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
	}
	if (fake_cb)
		return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
	fake_cb = cb;
	fake_ud = ud;
	*s = (CUpti_SubscriberHandle)(uintptr_t)0x5b;
	return CUPTI_SUCCESS;
}

VIS CUptiResult CUPTIAPI cuptiSubscribe(CUpti_SubscriberHandle *s, CUpti_CallbackFunc cb, void *ud)
{
	return cuptiSubscribe_v2(s, cb, ud, NULL);
}

VIS CUptiResult CUPTIAPI cuptiUnsubscribe(CUpti_SubscriberHandle s)
{
	fake_cb = NULL;
	return CUPTI_SUCCESS;
}

VIS CUptiResult CUPTIAPI cuptiEnableDomain(uint32_t en, CUpti_SubscriberHandle s, CUpti_CallbackDomain d)
{
	if ((unsigned)d < 8)
		domain_on[d] = (int)en;
	return CUPTI_SUCCESS;
}

VIS CUptiResult CUPTIAPI cuptiEnableCallback(uint32_t en, CUpti_SubscriberHandle s,
					     CUpti_CallbackDomain d, CUpti_CallbackId cbid)
{
	if (d == CUPTI_CB_DOMAIN_RESOURCE && cbid < 64)
		res_on[cbid] = (unsigned char)en;
	else if (d == CUPTI_CB_DOMAIN_DRIVER_API && cbid < CUPTI_DRIVER_TRACE_CBID_SIZE)
		drv_on[cbid] = (unsigned char)en;
	else
		return CUPTI_ERROR_INVALID_PARAMETER;
	return CUPTI_SUCCESS;
}

/* 1 if the subscriber enabled this callback (its domain whole, or the id). */
VIS int fake_enabled(CUpti_CallbackDomain d, CUpti_CallbackId cbid)
{
	if ((unsigned)d < 8 && domain_on[d])
		return 1;
	if (d == CUPTI_CB_DOMAIN_RESOURCE)
		return cbid < 64 && res_on[cbid];
	return d == CUPTI_CB_DOMAIN_DRIVER_API && cbid < CUPTI_DRIVER_TRACE_CBID_SIZE && drv_on[cbid];
}

VIS CUptiResult CUPTIAPI cuptiGetResultString(CUptiResult r, const char **str)
{
	*str = r == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED ?
		"CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED" : "CUPTI_ERROR_OTHER";
	return CUPTI_SUCCESS;
}

VIS CUptiResult CUPTIAPI cuptiGetDeviceId(CUcontext ctx, uint32_t *id)
{
	*id = 0;
	return CUPTI_SUCCESS;
}

/* Deliver a callback if the subscriber enabled it; returns 1 if delivered. */
VIS int fake_fire(CUpti_CallbackDomain d, CUpti_CallbackId cbid, const void *data)
{
	if (!fake_cb)
		return 0;
	if (!fake_enabled(d, cbid))
		return 0;
	fake_cb(fake_ud, d, cbid, data);
	return 1;
}

/* ---- driver -------------------------------------------------------------- */
/* -DFAKE_CUPTI_ONLY leaves it out: the CUPTI part alone, for a program that
 * runs on the driver double (ckpt-prog, t7000). */
#ifndef FAKE_CUPTI_ONLY

static int is_dev(CUdeviceptr p)
{
	return p >= 0xd00000000000ull && p < 0xd10000000000ull;
}

VIS CUresult cuGetErrorName(CUresult r, const char **s)
{
	switch ((int)r) {
	case 0: *s = "CUDA_SUCCESS"; return CUDA_SUCCESS;
	case 1: *s = "CUDA_ERROR_INVALID_VALUE"; return CUDA_SUCCESS;
	case 2: *s = "CUDA_ERROR_OUT_OF_MEMORY"; return CUDA_SUCCESS;
	case 700: *s = "CUDA_ERROR_ILLEGAL_ADDRESS"; return CUDA_SUCCESS;
	case 717: *s = "CUDA_ERROR_INVALID_ADDRESS_SPACE"; return CUDA_SUCCESS;
	default: *s = NULL; return CUDA_ERROR_INVALID_VALUE;
	}
}

VIS CUresult cuStreamIsCapturing(CUstream s, CUstreamCaptureStatus *st)
{
	*st = (uintptr_t)s == 0xca97 ? CU_STREAM_CAPTURE_STATUS_ACTIVE : CU_STREAM_CAPTURE_STATUS_NONE;
	return CUDA_SUCCESS;
}

/* GPUREDUCE_BLOCKING=library's wait.  As the driver does, a thread whose
 * capture mode is not relaxed may not wait while a capture is on (one
 * began: stream 0xca97 is always capturing once FAKE_CAPTURE_ON is set);
 * FAKE_SYNC_LOG=FILE gets a line per wait: the stream and the mode. */
static __thread CUstreamCaptureMode fake_mode = CU_STREAM_CAPTURE_MODE_GLOBAL;

VIS CUresult cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *mode)
{
	CUstreamCaptureMode m = fake_mode;
	fake_mode = *mode;
	*mode = m;
	return CUDA_SUCCESS;
}

VIS CUresult cuStreamSynchronize(CUstream s)
{
	const char *log = getenv("FAKE_SYNC_LOG"), *on = getenv("FAKE_CAPTURE_ON");
	const char *res = getenv("FAKE_SYNC_RESULT");
	if (log) {
		FILE *f = fopen(log, "a");
		if (f) {
			fprintf(f, "sync 0x%llx %s\n", (unsigned long long)(uintptr_t)s,
				fake_mode == CU_STREAM_CAPTURE_MODE_RELAXED ? "relaxed" : "strict");
			fclose(f);
		}
	}
	if (on && !strcmp(on, "1") && fake_mode != CU_STREAM_CAPTURE_MODE_RELAXED)
		return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
	return res ? (CUresult)atoi(res) : CUDA_SUCCESS;
}

VIS CUresult cuPointerGetAttribute(void *data, CUpointer_attribute a, CUdeviceptr p)
{
	if (a != CU_POINTER_ATTRIBUTE_MEMORY_TYPE || !is_dev(p))
		return CUDA_ERROR_INVALID_VALUE;
	*(unsigned int *)data = CU_MEMORYTYPE_DEVICE;
	return CUDA_SUCCESS;
}

static const size_t fill_params[][2] = { { 0, 8 }, { 8, 4 } };
static const size_t scale_params[][2] = { { 0, 8 }, { 8, 8 }, { 16, 4 } };

/* 0xf002: a kernel shaped like cuDNN's and PyTorch's, a long templated
 * name and one 640-byte parameter struct (tests/bench/pystack-cost.sh's
 * COST_BIG: what a launch record of such kernels costs) */
#define BIG_NAME "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEENS_6detail5ArrayIPcLi1EEEEEviT0_T1_" \
	"_ZN17cutlass__5x_cudnn6KernelI66cutlass_tensorop_s1688dgrad_optimized_tf32_64x128_32x3_nhwc_align4EEvNT_6ParamsE"
enum { BIG_ARGS = 640 };

VIS CUresult cuFuncGetName(const char **name, CUfunction f)
{
	if ((uintptr_t)f == 0xf002) {
		*name = BIG_NAME;
		return CUDA_SUCCESS;
	}
	if ((uintptr_t)f != 0xf001)
		return CUDA_ERROR_INVALID_HANDLE;
	*name = "_Z4fillPfi";
	return CUDA_SUCCESS;
}

VIS CUresult cuKernelGetName(const char **name, CUkernel k)
{
	if ((uintptr_t)k != 0xe001)
		return CUDA_ERROR_INVALID_HANDLE;
	*name = "_Z5scalePfPKfi";
	return CUDA_SUCCESS;
}

VIS CUresult cuFuncGetParamInfo(CUfunction f, size_t i, size_t *off, size_t *size)
{
	if ((uintptr_t)f == 0xf002) {
		if (i >= 1)
			return CUDA_ERROR_INVALID_VALUE;
		*off = 0;
		*size = BIG_ARGS;
		return CUDA_SUCCESS;
	}
	if ((uintptr_t)f != 0xf001)
		return CUDA_ERROR_INVALID_HANDLE;
	if (i >= 2)
		return CUDA_ERROR_INVALID_VALUE;
	*off = fill_params[i][0];
	*size = fill_params[i][1];
	return CUDA_SUCCESS;
}

VIS CUresult cuKernelGetParamInfo(CUkernel k, size_t i, size_t *off, size_t *size)
{
	if ((uintptr_t)k != 0xe001)
		return CUDA_ERROR_INVALID_HANDLE;
	if (i >= 3)
		return CUDA_ERROR_INVALID_VALUE;
	*off = scale_params[i][0];
	*size = scale_params[i][1];
	return CUDA_SUCCESS;
}

/* attributes: fill (a CUfunction) has 256 max threads and 24 registers;
 * scale (a CUkernel) 1024 and 40; PTX/binary versions 90; the rest 0; the
 * kernel's answer is for device 0 */
static int fake_attr(int fill, CUfunction_attribute a)
{
	switch (a) {
	case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: return fill ? 256 : 1024;
	case CU_FUNC_ATTRIBUTE_NUM_REGS: return fill ? 24 : 40;
	case CU_FUNC_ATTRIBUTE_PTX_VERSION: case CU_FUNC_ATTRIBUTE_BINARY_VERSION: return 90;
	default: return 0;
	}
}

VIS CUresult cuFuncGetAttribute(int *v, CUfunction_attribute a, CUfunction f)
{
	if ((uintptr_t)f != 0xf001 && (uintptr_t)f != 0xf002)
		return CUDA_ERROR_INVALID_HANDLE;
	*v = fake_attr(1, a);
	return CUDA_SUCCESS;
}

VIS CUresult cuKernelGetAttribute(int *v, CUfunction_attribute a, CUkernel k, CUdevice d)
{
	if ((uintptr_t)k != 0xe001 || d != 0)
		return CUDA_ERROR_INVALID_HANDLE;
	*v = fake_attr(0, a);
	return CUDA_SUCCESS;
}

VIS CUresult cuMemHostGetDevicePointer(CUdeviceptr *d, void *p, unsigned int flags)
{
	*d = (CUdeviceptr)(uintptr_t)p;   /* UVA: the same address */
	return CUDA_SUCCESS;
}

VIS CUresult cuDeviceGet(CUdevice *d, int ordinal)
{
	*d = ordinal;
	return CUDA_SUCCESS;
}

VIS CUresult cuDeviceGetName(char *name, int len, CUdevice d)
{
	strncpy(name, "Fake GPU", (size_t)len);
	return CUDA_SUCCESS;
}

VIS CUresult cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice d)
{
	*v = a == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR ? 9 :
	     a == CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR ? 0 :
	     a == CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT ? 132 : 0;
	return CUDA_SUCCESS;
}

VIS CUresult cuDeviceTotalMem(size_t *bytes, CUdevice d)
{
	*bytes = (size_t)1 << 34;
	return CUDA_SUCCESS;
}

VIS CUresult cuDriverGetVersion(int *v)
{
	*v = 13000;
	return CUDA_SUCCESS;
}

VIS CUresult cuModuleGetGlobal(CUdeviceptr *d, size_t *bytes, CUmodule m, const char *name)
{
	if (d)
		*d = 0xd00000f00000ull;
	if (bytes)
		*bytes = 64;
	return CUDA_SUCCESS;
}

VIS CUresult cuLibraryGetGlobal(CUdeviceptr *d, size_t *bytes, CUlibrary l, const char *name)
{
	return cuModuleGetGlobal(d, bytes, NULL, name);
}

/* ---- explicit graph API: graph 0x9b0 --------------------------------------
 * nodes, in the order cuGraphGetNodes gives them:
 *   0x14 kernel: CUkernel 0xe001 (scale) given as `kern`, func NULL
 *   0x12 kernel: CUfunction 0xf001 (fill) on 0xd00000000000, n = 1000
 *   0x11 memset: D32 0xd00000000000, 0 x 1000
 *   0x13 memcpy: 64 host bytes (0x40 0x41 ...) -> 0xd00000001000
 *   0x15 host node: not recorded
 * edges 0x11->0x12, 0x13->0x12, 0x12->0x14: so the order is 0x11 0x13 0x12
 * 0x14 (0x15 anywhere). */
static const CUgraphNode g_nodes[] = {
	(CUgraphNode)(uintptr_t)0x14, (CUgraphNode)(uintptr_t)0x12, (CUgraphNode)(uintptr_t)0x11,
	(CUgraphNode)(uintptr_t)0x13, (CUgraphNode)(uintptr_t)0x15
};
static unsigned char g_host[64];
static CUdeviceptr g_fill_p = 0xd00000000000ull, g_scale_x = 0xd00000000000ull,
		   g_scale_y = 0xd00000001000ull;
static int g_fill_n = 1000, g_scale_n = 16;
static void *g_fill_kp[] = { &g_fill_p, &g_fill_n };
static void *g_scale_kp[] = { &g_scale_x, &g_scale_y, &g_scale_n };

/* Graph 0x9b1: an event record node 0x33, a child graph node 0x31 whose
 * graph is 0x9b0, and a kernel node 0x32 (fill on 0xd00000002000, n = 3)
 * after the child: edge 0x31->0x32. */
static const CUgraphNode g2_nodes[] = {
	(CUgraphNode)(uintptr_t)0x32, (CUgraphNode)(uintptr_t)0x33, (CUgraphNode)(uintptr_t)0x31
};
static CUdeviceptr g2_fill_p = 0xd00000002000ull;
static int g2_fill_n = 3;
static void *g2_fill_kp[] = { &g2_fill_p, &g2_fill_n };

VIS CUresult cuGraphGetNodes(CUgraph g, CUgraphNode *nodes, size_t *n)
{
	const CUgraphNode *from = (uintptr_t)g == 0x9b1 ? g2_nodes : g_nodes;
	size_t all = (uintptr_t)g == 0x9b1 ? sizeof(g2_nodes) / sizeof(g2_nodes[0]) :
		     sizeof(g_nodes) / sizeof(g_nodes[0]);
	if (((uintptr_t)g != 0x9b0 && (uintptr_t)g != 0x9b1) || !n)
		return CUDA_ERROR_INVALID_VALUE;
	if (nodes)
		memcpy(nodes, from, (*n < all ? *n : all) * sizeof(*nodes));
	*n = all;
	return CUDA_SUCCESS;
}

/* No module handles here: module variables are not asked for (globals.c) */
VIS CUresult cuFuncGetModule(CUmodule *m, CUfunction f)
{
	(void)m; (void)f;
	return CUDA_ERROR_NOT_SUPPORTED;
}

VIS CUresult cuKernelGetLibrary(CUlibrary *l, CUkernel k)
{
	(void)l; (void)k;
	return CUDA_ERROR_NOT_SUPPORTED;
}

VIS CUresult cuGraphChildGraphNodeGetGraph(CUgraphNode h, CUgraph *g)
{
	if ((uintptr_t)h != 0x31 || !g)
		return CUDA_ERROR_INVALID_VALUE;
	*g = (CUgraph)(uintptr_t)0x9b0;
	return CUDA_SUCCESS;
}

VIS CUresult cuGraphGetEdges(CUgraph g, CUgraphNode *from, CUgraphNode *to, CUgraphEdgeData *ed,
			     size_t *n)
{
	static const uintptr_t f[] = { 0x11, 0x13, 0x12 }, t[] = { 0x12, 0x12, 0x14 };
	if ((uintptr_t)g == 0x9b1 && n) {
		if (from && to && *n >= 1) {
			from[0] = (CUgraphNode)(uintptr_t)0x31;
			to[0] = (CUgraphNode)(uintptr_t)0x32;
			if (ed)
				memset(&ed[0], 0, sizeof(ed[0]));
		}
		*n = 1;
		return CUDA_SUCCESS;
	}
	if ((uintptr_t)g != 0x9b0 || !n)
		return CUDA_ERROR_INVALID_VALUE;
	if (from && to)
		for (size_t i = 0; i < 3 && i < *n; i++) {
			from[i] = (CUgraphNode)f[i];
			to[i] = (CUgraphNode)t[i];
			if (ed)
				memset(&ed[i], 0, sizeof(ed[i]));
		}
	*n = 3;
	return CUDA_SUCCESS;
}

VIS CUresult cuGraphNodeGetType(CUgraphNode h, CUgraphNodeType *t)
{
	switch ((uintptr_t)h) {
	case 0x11: *t = CU_GRAPH_NODE_TYPE_MEMSET; return CUDA_SUCCESS;
	case 0x12: case 0x14: *t = CU_GRAPH_NODE_TYPE_KERNEL; return CUDA_SUCCESS;
	case 0x13: *t = CU_GRAPH_NODE_TYPE_MEMCPY; return CUDA_SUCCESS;
	case 0x15: *t = CU_GRAPH_NODE_TYPE_HOST; return CUDA_SUCCESS;
	case 0x31: *t = CU_GRAPH_NODE_TYPE_GRAPH; return CUDA_SUCCESS;
	case 0x32: *t = CU_GRAPH_NODE_TYPE_KERNEL; return CUDA_SUCCESS;
	case 0x33: *t = CU_GRAPH_NODE_TYPE_EVENT_RECORD; return CUDA_SUCCESS;
	default: return CUDA_ERROR_INVALID_VALUE;
	}
}

VIS CUresult cuGraphKernelNodeGetParams(CUgraphNode h, CUDA_KERNEL_NODE_PARAMS *p)
{
	memset(p, 0, sizeof(*p));
	if ((uintptr_t)h == 0x12) {
		p->func = (CUfunction)(uintptr_t)0xf001;
		p->gridDimX = 4; p->gridDimY = p->gridDimZ = 1;
		p->blockDimX = 256; p->blockDimY = p->blockDimZ = 1;
		p->kernelParams = g_fill_kp;
		return CUDA_SUCCESS;
	}
	if ((uintptr_t)h == 0x32) {
		p->func = (CUfunction)(uintptr_t)0xf001;
		p->gridDimX = 1; p->gridDimY = p->gridDimZ = 1;
		p->blockDimX = 32; p->blockDimY = p->blockDimZ = 1;
		p->kernelParams = g2_fill_kp;
		return CUDA_SUCCESS;
	}
	if ((uintptr_t)h == 0x14) {
		p->kern = (CUkernel)(uintptr_t)0xe001;
		p->gridDimX = 1; p->gridDimY = p->gridDimZ = 1;
		p->blockDimX = 16; p->blockDimY = p->blockDimZ = 1;
		p->kernelParams = g_scale_kp;
		return CUDA_SUCCESS;
	}
	return CUDA_ERROR_INVALID_VALUE;
}

VIS CUresult cuGraphMemsetNodeGetParams(CUgraphNode h, CUDA_MEMSET_NODE_PARAMS *p)
{
	if ((uintptr_t)h != 0x11)
		return CUDA_ERROR_INVALID_VALUE;
	memset(p, 0, sizeof(*p));
	p->dst = 0xd00000000000ull;
	p->value = 0;
	p->elementSize = 4;
	p->width = 1000;
	p->height = 1;
	return CUDA_SUCCESS;
}

VIS CUresult cuGraphMemcpyNodeGetParams(CUgraphNode h, CUDA_MEMCPY3D *c)
{
	if ((uintptr_t)h != 0x13)
		return CUDA_ERROR_INVALID_VALUE;
	for (int i = 0; i < 64; i++)
		g_host[i] = (unsigned char)(0x40 + i);
	memset(c, 0, sizeof(*c));
	c->srcMemoryType = CU_MEMORYTYPE_HOST;
	c->srcHost = g_host;
	c->dstMemoryType = CU_MEMORYTYPE_UNIFIED;
	c->dstDevice = 0xd00000001000ull;
	c->WidthInBytes = 64;
	c->Height = 1;
	c->Depth = 1;
	return CUDA_SUCCESS;
}
/* What a checkpoint calls (capture/checkpoint.c); these tests take none,
 * the library only has to load (RTLD_NOW). */
VIS CUresult cuCtxSynchronize(void)
{
	return CUDA_SUCCESS;
}

VIS CUresult cuCtxGetDevice(CUdevice *d)
{
	*d = 0;
	return CUDA_SUCCESS;
}

VIS CUresult cuMemcpyDtoH(void *dst, CUdeviceptr src, size_t n)
{
	return CUDA_ERROR_INVALID_VALUE;
}

/* fold.c asks for the allocation of a folded kernel's pointer words (none here) */
VIS CUresult cuMemGetAddressRange(CUdeviceptr *base, size_t *size, CUdeviceptr p)
{
	return CUDA_ERROR_NOT_FOUND;
}

VIS CUresult cuMemGetAccess(unsigned long long *flags, const CUmemLocation *loc, CUdeviceptr p)
{
	return CUDA_ERROR_INVALID_VALUE;
}

/* checkpoints' pinned read-back buffer: none here (capture falls back to malloc) */
VIS CUresult cuMemHostAlloc(void **pp, size_t n, unsigned int flags)
{
	*pp = NULL;
	return CUDA_ERROR_OUT_OF_MEMORY;
}

VIS CUresult cuMemFreeHost(void *p)
{
	return CUDA_ERROR_INVALID_VALUE;
}
#endif /* FAKE_CUPTI_ONLY */
