/*
 * capture-fakeprog.c - test helper: a "CUDA program" for the capture
 * library on a machine without a GPU (t1003-capture-callbacks.sh).  It plays
 * the driver at cuInit (dlopen CUDA_INJECTION64_PATH, call
 * InitializeInjection) and then CUPTI, delivering the enter/exit callbacks
 * of a scripted series of driver calls through fake_fire() of
 * capture-fakecuda (which must be libcupti.so.13/libcuda.so.1 on
 * LD_LIBRARY_PATH).  What the library made of them is checked by reading
 * the trace (capture-dump).
 *
 *   capture-fakeprog full        every kind of call, ending in a fault; exit 3
 *   capture-fakeprog threads N   N threads x 500 launches at once; exit 0
 *   capture-fakeprog copythreads N  N threads x 40 host-to-device copies of
 *                                their own bytes (1 KiB to 1 MiB) between
 *                                launches; prints "copy SRC SIZE HASH"
 *                                (XXH3-64 of the bytes) for each; exit 0
 *   capture-fakeprog forkexec    init, then run `capture-fakeprog child` as a
 *                                subprocess (a second CUDA process), and fork
 *                                a child that makes calls and exits
 *   capture-fakeprog child       init, one launch, exit 0
 *   capture-fakeprog graphapi    an explicit-API graph (capture-fakecuda's
 *                                graph 0x9b0) instantiated, launched, its
 *                                kernel node updated, launched again; exit 0
 *   capture-fakeprog hostmem     managed and mapped host memory the "CPU"
 *                                changes between launches, and plain pinned
 *                                memory a captured launch points at; exit 0
 *   capture-fakeprog graphupdate cuGraphExecUpdate from an explicit and a
 *                                stream-captured graph, node updates
 *                                around them; exit 0
 *   capture-fakeprog graphchild  a graph whose nodes are a child graph
 *                                (the graphapi one), an event record and
 *                                a kernel; instantiated, launched; exit 0
 *   capture-fakeprog memwrites   cuMemcpyBatchAsync (both forms),
 *                                cuStreamWriteValue32/64 and
 *                                cuStreamBatchMemOp, then a launch; exit 0
 *   capture-fakeprog subscribed  the callbacks the library enabled, one
 *                                "driver ID" or "resource ID" line each
 *   capture-fakeprog syncfault   a launch, then a fault that cuCtxGetCurrent
 *                                and then cuStreamSynchronize return; exit 1
 *   capture-fakeprog unload      two launches of one handle, a module unload,
 *                                a third launch of that handle (reused); exit 0
 *   capture-fakeprog tests       twelve launches while PYTEST_CURRENT_TEST
 *                                goes unset, A, A, B, unset (as pytest sets
 *                                it around each test), C (then other
 *                                variables added and removed), D through
 *                                putenv, E by an edit of D's string in
 *                                place, GPUREDUCE_TEST_NAME, unset; exit 0
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cuda.h>
#include <cupti.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

static int (*fire)(CUpti_CallbackDomain, CUpti_CallbackId, const void *);

/* One driver call: enter callback, then exit with `result`. */
static void api(CUpti_CallbackId cbid, const char *name, const void *params, CUresult result)
{
	uint64_t corr = 0;
	CUresult ret = result;
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
#define API(fn, params, result) api(CUPTI_DRIVER_TRACE_CBID_##fn, #fn, params, result)

static void resource(CUpti_CallbackId cbid, void *desc)
{
	CUpti_ResourceData r;
	memset(&r, 0, sizeof(r));
	r.context = (CUcontext)(uintptr_t)0xc0;
	r.resourceDescriptor = desc;
	fire(CUPTI_CB_DOMAIN_RESOURCE, cbid, &r);
}

static void init(void)
{
	const char *lib = getenv("CUDA_INJECTION64_PATH");
	void *h, *cuda;
	int (*inj)(void);

	if (!lib || !(h = dlopen(lib, RTLD_NOW | RTLD_LOCAL))) {
		fprintf(stderr, "fakeprog: cannot load CUDA_INJECTION64_PATH=%s: %s\n",
			lib ? lib : "(unset)", dlerror());
		exit(2);
	}
	cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
	*(void **)&inj = dlsym(h, "InitializeInjection");
	*(void **)&fire = cuda ? dlsym(cuda, "fake_fire") : NULL;
	if (!inj || !fire) {
		fprintf(stderr, "fakeprog: no InitializeInjection or fake_fire (is capture-fakecuda libcuda.so.1?)\n");
		exit(2);
	}
	inj();
	resource(CUPTI_CBID_RESOURCE_CONTEXT_CREATED, NULL);
}

static void launch_fill(CUdeviceptr p, int n, CUstream s, CUresult result)
{
	void *kp[2] = { &p, &n };
	cuLaunchKernel_params q = { (CUfunction)(uintptr_t)0xf001, 4, 1, 1, 256, 1, 1, 0, s, kp, NULL };
	API(cuLaunchKernel, &q, result);
}

static int full(void)
{
	static unsigned char elf[256] = { 0x7f, 'E', 'L', 'F', 2, 1, 1 };
	static unsigned char ptx[100] = "// not an ELF image";
	CUpti_ModuleResourceData m1 = { 7, sizeof(elf), (const char *)elf };
	CUpti_ModuleResourceData m2 = { 8, sizeof(ptx), (const char *)ptx };
	CUdeviceptr a = 0, b = 0, bad = 0;
	void *hostp = NULL;
	unsigned char *src = malloc(4000), *pitched = malloc(64 * 4);
	char *noaccess;
	size_t pitch = 512;

	for (int i = 0; i < 4000; i++)
		src[i] = (unsigned char)(i * 7);
	for (int i = 0; i < 256; i++)
		pitched[i] = (unsigned char)i;
	noaccess = mmap(NULL, 8192, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	resource(CUPTI_CBID_RESOURCE_CONTEXT_CREATED, NULL);   /* a second context: no second DEVICE */
	resource(CUPTI_CBID_RESOURCE_MODULE_LOADED, &m1);
	resource(CUPTI_CBID_RESOURCE_MODULE_LOADED, &m2);

	{ /* allocations */
		cuMemAlloc_v2_params q = { &a, 4000 };
		a = 0xd00000000000ull;
		API(cuMemAlloc_v2, &q, CUDA_SUCCESS);
		cuMemAlloc_v2_params q2 = { &bad, 1ull << 40 };
		bad = 0xd0000dead000ull;
		API(cuMemAlloc_v2, &q2, CUDA_ERROR_OUT_OF_MEMORY);   /* failed: not recorded */
		cuMemAllocPitch_v2_params qp = { &b, &pitch, 300, 10, 4 };
		b = 0xd00000100000ull;
		API(cuMemAllocPitch_v2, &qp, CUDA_SUCCESS);          /* 512 * 10 bytes */
		hostp = malloc(1000);
		cuMemAllocHost_v2_params qh = { &hostp, 1000 };
		API(cuMemAllocHost_v2, &qh, CUDA_SUCCESS);
		cuModuleGetGlobal_v2_params qg = { &bad, NULL, NULL, "gcounter" };
		bad = 0xd00000f00000ull;
		API(cuModuleGetGlobal_v2, &qg, CUDA_SUCCESS);
		API(cuModuleGetGlobal_v2, &qg, CUDA_SUCCESS);        /* same global: once */
	}
	{ /* copies */
		cuMemcpyHtoD_v2_params q = { a, src, 4000 };
		API(cuMemcpyHtoD_v2, &q, CUDA_SUCCESS);
		cuMemcpyAsync_params qa = { a + 4096, (CUdeviceptr)(uintptr_t)src, 100, (CUstream)(uintptr_t)5 };
		API(cuMemcpyAsync, &qa, CUDA_SUCCESS);                /* unified: H2D */
		cuMemcpyAsync_params qd = { b, a, 256, (CUstream)(uintptr_t)5 };
		API(cuMemcpyAsync, &qd, CUDA_SUCCESS);                /* unified: D2D */
		cuMemcpy_params qh = { (CUdeviceptr)(uintptr_t)src, a, 16 };
		API(cuMemcpy, &qh, CUDA_SUCCESS);                     /* unified: D2H */
		cuMemcpy_params qn = { a, (CUdeviceptr)(uintptr_t)noaccess, 64 };
		API(cuMemcpy, &qn, CUDA_ERROR_INVALID_VALUE);         /* unreadable "host" source */
		cuMemcpyDtoH_v2_params qdh = { src, a, 32 };
		API(cuMemcpyDtoH_v2, &qdh, CUDA_SUCCESS);
		CUDA_MEMCPY2D c2;
		memset(&c2, 0, sizeof(c2));
		c2.srcMemoryType = CU_MEMORYTYPE_HOST;
		c2.srcHost = pitched;
		c2.srcPitch = 64;
		c2.dstMemoryType = CU_MEMORYTYPE_DEVICE;
		c2.dstDevice = b;
		c2.dstPitch = 512;
		c2.WidthInBytes = 64;
		c2.Height = 4;
		cuMemcpy2D_v2_params q2 = { &c2 };
		API(cuMemcpy2D_v2, &q2, CUDA_SUCCESS);                /* 4 rows: 4 records */
		c2.dstPitch = 64;
		API(cuMemcpy2D_v2, &q2, CUDA_SUCCESS);                /* contiguous: 1 record */
		cuMemcpyHtoA_v2_params qa1 = { NULL, 0, src, 16 };
		API(cuMemcpyHtoA_v2, &qa1, CUDA_SUCCESS);             /* unsupported: a note */
		API(cuMemcpyHtoA_v2, &qa1, CUDA_SUCCESS);             /* ...only once */
		CUtexObject tex = 0;
		cuTexObjectCreate_params qt = { &tex, NULL, NULL, NULL };
		API(cuTexObjectCreate, &qt, CUDA_SUCCESS);            /* not recorded: a note */
		API(cuTexObjectCreate, &qt, CUDA_SUCCESS);            /* ...only once */
	}
	{ /* stream capture begins on 0xca97: the next captured records are graph nodes */
		cuStreamBeginCapture_v2_params qc = { (CUstream)(uintptr_t)0xca97, CU_STREAM_CAPTURE_MODE_GLOBAL };
		API(cuStreamBeginCapture_v2, &qc, CUDA_SUCCESS);
	}
	{ /* memsets */
		cuMemsetD32Async_params q = { a, 0xdeadbeef, 1000, (CUstream)(uintptr_t)0xca97 };
		API(cuMemsetD32Async, &q, CUDA_SUCCESS);              /* during capture */
		cuMemsetD2D8_v2_params q2 = { b, 512, 0x5a, 300, 10 };
		API(cuMemsetD2D8_v2, &q2, CUDA_SUCCESS);
	}
	{ /* launches */
		CUdeviceptr x = a, y = b;
		int n = 1000;
		void *kp[3] = { &x, &y, &n };
		launch_fill(a, 1000, NULL, CUDA_SUCCESS);             /* CUfunction: cuFunc* */
		cuLaunchKernel_params qk = { (CUfunction)(uintptr_t)0xe001, 8, 2, 1, 128, 1, 1, 64,
					     (CUstream)(uintptr_t)5, kp, NULL };
		API(cuLaunchKernel_ptsz, &qk, CUDA_SUCCESS);          /* CUkernel: cuKernel* */
		struct { CUdeviceptr p; int v; int pad; } buf = { a, 77, 0 };
		size_t bufsize = 16;
		void *extra[] = { CU_LAUNCH_PARAM_BUFFER_POINTER, &buf, CU_LAUNCH_PARAM_BUFFER_SIZE,
				  &bufsize, CU_LAUNCH_PARAM_END };
		cuLaunchKernel_params qe = { (CUfunction)(uintptr_t)0xf001, 1, 1, 1, 32, 1, 1, 0,
					     NULL, NULL, extra };
		API(cuLaunchKernel, &qe, CUDA_SUCCESS);               /* args from `extra` */
		CUlaunchAttribute attr;
		memset(&attr, 0, sizeof(attr));
		attr.id = CU_LAUNCH_ATTRIBUTE_COOPERATIVE;
		attr.value.cooperative = 1;
		CUlaunchConfig cfg = { 3, 1, 1, 64, 1, 1, 128, (CUstream)(uintptr_t)0xca97, &attr, 1 };
		cuLaunchKernelEx_params qx = { &cfg, (CUfunction)(uintptr_t)0xe001, kp, NULL };
		API(cuLaunchKernelEx, &qx, CUDA_SUCCESS);             /* captured, one attribute */
		CUgraph g = (CUgraph)(uintptr_t)0x9a9;
		CUgraphExec ge = (CUgraphExec)(uintptr_t)0xe9e;
		cuStreamEndCapture_params qe2 = { (CUstream)(uintptr_t)0xca97, &g };
		API(cuStreamEndCapture, &qe2, CUDA_SUCCESS);          /* the graph */
		cuGraphInstantiateWithFlags_params qi = { &ge, g, 0 };
		API(cuGraphInstantiateWithFlags, &qi, CUDA_SUCCESS);  /* its exec */
		cuGraphLaunch_params ql = { ge, NULL };
		API(cuGraphLaunch, &ql, CUDA_SUCCESS);                /* launched */
		launch_fill(a, 5, NULL, CUDA_ERROR_INVALID_VALUE);    /* failed: a note */
		cuLaunchKernel_params qb = { (CUfunction)(uintptr_t)0xbad, 1, 1, 1, 1, 1, 1, 0, NULL, kp, NULL };
		API(cuLaunchKernel, &qb, CUDA_SUCCESS);               /* unknown kernel: a note */
		cuFuncSetAttribute_params qf = { (CUfunction)(uintptr_t)0xf001,
			CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, 100000 };
		API(cuFuncSetAttribute, &qf, CUDA_SUCCESS);
	}
	{ /* frees */
		cuMemFree_v2_params q = { b };
		API(cuMemFree_v2, &q, CUDA_SUCCESS);
		cuMemFreeHost_params qh = { hostp };
		API(cuMemFreeHost, &qh, CUDA_SUCCESS);                /* freed by host pointer */
		cuMemFree_v2_params qu = { 0xd00000777000ull };
		API(cuMemFree_v2, &qu, CUDA_SUCCESS);                 /* never allocated: nothing */
	}
	{ /* a harmless error, then the fault */
		int qs = 0;   /* cuCtxSynchronize takes no parameters */
		API(cuCtxSynchronize, &qs, CUDA_ERROR_INVALID_VALUE);
		launch_fill(a, 1 << 30, NULL, (CUresult)700);
		API(cuCtxSynchronize, &qs, (CUresult)700);             /* same fault again: not recorded */
		launch_fill(a, 1, NULL, CUDA_SUCCESS);                /* after the fault: not recorded */
		cuMemAlloc_v2_params q = { &a, 16 };
		API(cuMemAlloc_v2, &q, CUDA_SUCCESS);
	}
	free(src);
	free(pitched);
	return 3;
}

/* Managed memory (4 chunks of 64 KiB, the last short), mapped and plain
 * pinned host memory, changed by the "CPU" between launches. */
static int hostmem(void)
{
	enum { MSIZE = 3 * 65536 + 8192 };
	unsigned char *man = calloc(1, MSIZE), *mapped = NULL, *plain = NULL;
	CUdeviceptr m = (CUdeviceptr)(uintptr_t)man;
	CUstream cap = (CUstream)(uintptr_t)0xca97;

	{
		cuMemAllocManaged_params q = { &m, MSIZE, CU_MEM_ATTACH_GLOBAL };
		API(cuMemAllocManaged, &q, CUDA_SUCCESS);
		mapped = malloc(100);
		memset(mapped, 0x11, 100);
		cuMemHostAlloc_params qh = { (void **)&mapped, 100, CU_MEMHOSTALLOC_DEVICEMAP };
		API(cuMemHostAlloc, &qh, CUDA_SUCCESS);
		plain = malloc(200);
		cuMemHostAlloc_params qp = { (void **)&plain, 200, 0 };
		API(cuMemHostAlloc, &qp, CUDA_SUCCESS);               /* not mapped: not tracked */
	}
	man[5] = 0xa5;
	launch_fill(m, 1, NULL, CUDA_SUCCESS);                        /* 4 + 1 chunks, all new */
	man[70000] = 0x5a;
	plain[0] = 1;
	launch_fill(m, 2, NULL, CUDA_SUCCESS);                        /* chunk 1 only */
	launch_fill(m, 3, NULL, CUDA_SUCCESS);                        /* nothing changed */
	man[1] = 1;
	{
		cuMemcpyDtoD_v2_params q = { 0xd00000000000ull, m, 16 };
		API(cuMemcpyDtoD_v2, &q, CUDA_SUCCESS);                /* its source changed: chunk 0 first */
	}
	man[MSIZE - 1] = 7;
	{ /* a stream captures only after a BeginCapture (capture skips asking before one) */
		cuStreamBeginCapture_v2_params qc = { cap, CU_STREAM_CAPTURE_MODE_GLOBAL };
		API(cuStreamBeginCapture_v2, &qc, CUDA_SUCCESS);
	}
	launch_fill(m, 4, cap, CUDA_SUCCESS);                         /* captured: does not run, no sync */
	launch_fill((CUdeviceptr)(uintptr_t)plain, 4, cap, CUDA_SUCCESS);   /* plain pinned: tracked from here */
	mapped[99] = 0x22;
	{
		cuGraphLaunch_params ql = { (CUgraphExec)(uintptr_t)0xe9e, NULL };
		API(cuGraphLaunch, &ql, CUDA_SUCCESS);                /* chunk 3, the mapped and the plain buffer */
	}
	{
		cuMemFree_v2_params q = { m };
		API(cuMemFree_v2, &q, CUDA_SUCCESS);
		cuMemFreeHost_params qh = { mapped };
		API(cuMemFreeHost, &qh, CUDA_SUCCESS);
	}
	man[0] = 9;
	launch_fill(0xd00000000000ull, 5, NULL, CUDA_SUCCESS);       /* freed: nothing */
	{   /* registered pages the program makes unreadable (a bug): skipped, no crash */
		unsigned char *reg = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
					  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		reg[0] = 0x77;
		cuMemHostRegister_v2_params qr = { reg, 4096, 0 };
		API(cuMemHostRegister_v2, &qr, CUDA_SUCCESS);
		launch_fill(0xd00000000000ull, 6, NULL, CUDA_SUCCESS);   /* its page */
		mprotect(reg, 4096, PROT_NONE);
		launch_fill(0xd00000000000ull, 7, NULL, CUDA_SUCCESS);   /* unreadable: skipped */
	}
	free(man);
	free(mapped);
	free(plain);
	return 0;
}

/* Batched copies and values a stream writes (memwrites): each becomes
 * copy records in order, then a launch. */
static int memwrites(void)
{
	static unsigned char h1[100], h2[300], back[64];
	unsigned char *none = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	CUstream st = (CUstream)(uintptr_t)0x5e1;

	memset(h1, 0x31, sizeof(h1));
	memset(h2, 0x32, sizeof(h2));
	{   /* CUDA 13's form: H2D, D2H, D2D, a zero-size one, host to host */
		CUdeviceptr dsts[5] = { 0xd00000001000ull, (CUdeviceptr)(uintptr_t)back, 0xd00000003000ull,
					0xd00000004000ull, (CUdeviceptr)(uintptr_t)back };
		CUdeviceptr srcs[5] = { (CUdeviceptr)(uintptr_t)h1, 0xd00000001000ull, 0xd00000001000ull,
					(CUdeviceptr)(uintptr_t)h1, (CUdeviceptr)(uintptr_t)h2 };
		size_t sizes[5] = { 100, 64, 50, 0, 10 };
		cuMemcpyBatchAsync_v2_params q = { dsts, srcs, sizes, 5, NULL, NULL, 0, st };
		API(cuMemcpyBatchAsync_v2, &q, CUDA_SUCCESS);
	}
	{   /* CUDA 12.8's form (failIdx), per-thread stream; an unreadable source is skipped */
		CUdeviceptr dsts[2] = { 0xd00000002000ull, 0xd00000005000ull };
		CUdeviceptr srcs[2] = { (CUdeviceptr)(uintptr_t)h2, (CUdeviceptr)(uintptr_t)none };
		size_t sizes[2] = { 300, 16 }, fail = 0;
		cuMemcpyBatchAsync_ptsz_params q = { dsts, srcs, sizes, 2, NULL, NULL, 0, &fail, NULL };
		API(cuMemcpyBatchAsync_ptsz, &q, CUDA_SUCCESS);
	}
	{
		cuStreamWriteValue32_v2_params q = { st, 0xd00000006000ull, 0x12345678u, 0 };
		API(cuStreamWriteValue32_v2, &q, CUDA_SUCCESS);
		cuStreamWriteValue64_params q64 = { st, 0xd00000006008ull, 0x1122334455667788ull, 0 };
		API(cuStreamWriteValue64, &q64, CUDA_SUCCESS);
	}
	{   /* a wait, two writes, a flush: the writes only */
		CUstreamBatchMemOpParams ops[4];
		memset(ops, 0, sizeof(ops));
		ops[0].waitValue.operation = CU_STREAM_MEM_OP_WAIT_VALUE_32;
		ops[0].waitValue.address = 0xd00000006000ull;
		ops[0].waitValue.value = 1;
		ops[1].writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_32;
		ops[1].writeValue.address = 0xd00000006010ull;
		ops[1].writeValue.value = 0xcafef00du;
		ops[2].writeValue.operation = CU_STREAM_MEM_OP_WRITE_VALUE_64;
		ops[2].writeValue.address = 0xd00000006018ull;
		ops[2].writeValue.value64 = 0x0102030405060708ull;
		ops[3].flushRemoteWrites.operation = CU_STREAM_MEM_OP_FLUSH_REMOTE_WRITES;
		cuStreamBatchMemOp_v2_params q = { st, 4, ops, 0 };
		API(cuStreamBatchMemOp_v2, &q, CUDA_SUCCESS);
	}
	launch_fill(0xd00000001000ull, 1, NULL, CUDA_SUCCESS);
	munmap(none, 4096);
	return 0;
}

/* New parameters for the fill kernel node: grid 8, block 256, kp. */
static void fill_node(CUDA_KERNEL_NODE_PARAMS *kn, void **kp)
{
	memset(kn, 0, sizeof(*kn));
	kn->func = (CUfunction)(uintptr_t)0xf001;
	kn->gridDimX = 8; kn->gridDimY = kn->gridDimZ = 1;
	kn->blockDimX = 256; kn->blockDimY = kn->blockDimZ = 1;
	kn->kernelParams = kp;
}

/* The explicit graph: instantiated (walked), launched, a kernel node's
 * parameters changed on the exec, launched again; a stream-captured graph
 * is not walked at its instantiation. */
static int graphapi(void)
{
	CUgraph g = (CUgraph)(uintptr_t)0x9b0, sg = (CUgraph)(uintptr_t)0x9a9;
	CUgraphExec ge = (CUgraphExec)(uintptr_t)0xe9f, sge = (CUgraphExec)(uintptr_t)0xe9e;
	CUdeviceptr p = 0xd00000000000ull;
	int n = 1 << 30;
	void *kp[2] = { &p, &n };
	CUDA_KERNEL_NODE_PARAMS kn;

	cuGraphInstantiateWithFlags_params qi = { &ge, g, 0 };
	API(cuGraphInstantiateWithFlags, &qi, CUDA_SUCCESS);
	cuGraphLaunch_params ql = { ge, NULL };
	API(cuGraphLaunch, &ql, CUDA_SUCCESS);
	fill_node(&kn, kp);
	cuGraphExecKernelNodeSetParams_v2_params qu = { ge, (CUgraphNode)(uintptr_t)0x12, &kn };
	API(cuGraphExecKernelNodeSetParams_v2, &qu, CUDA_SUCCESS);
	API(cuGraphLaunch, &ql, (CUresult)700);
	(void)sg; (void)sge;
	return 0;
}

/* cuGraphExecUpdate (graphupdate): an explicit graph's exec gets a node
 * update, then an update from the same graph walked again (the fake gives
 * the parameters it had at instantiation), a node update by the original
 * node handle, an update from a stream-captured graph, a node update that
 * is no longer followed, and a launch. */
static int graphupdate(void)
{
	CUgraph g = (CUgraph)(uintptr_t)0x9b0, sg = (CUgraph)(uintptr_t)0x9a9;
	CUgraphExec ge = (CUgraphExec)(uintptr_t)0xe9f;
	CUstream cap = (CUstream)(uintptr_t)0xca97;
	CUdeviceptr p = 0xd00000000000ull;
	int n = 1 << 30;
	void *kp[2] = { &p, &n };
	CUDA_KERNEL_NODE_PARAMS kn;

	{   /* a stream-captured graph 0x9a9 with one fill node (n = 7) */
		cuStreamBeginCapture_v2_params qc = { cap, CU_STREAM_CAPTURE_MODE_GLOBAL };
		API(cuStreamBeginCapture_v2, &qc, CUDA_SUCCESS);
		launch_fill(p, 7, cap, CUDA_SUCCESS);
		cuStreamEndCapture_params qe = { cap, &sg };
		API(cuStreamEndCapture, &qe, CUDA_SUCCESS);
	}
	cuGraphInstantiateWithFlags_params qi = { &ge, g, 0 };
	API(cuGraphInstantiateWithFlags, &qi, CUDA_SUCCESS);
	fill_node(&kn, kp);
	cuGraphExecKernelNodeSetParams_v2_params qu = { ge, (CUgraphNode)(uintptr_t)0x12, &kn };
	API(cuGraphExecKernelNodeSetParams_v2, &qu, CUDA_SUCCESS);        /* synthetic 1: n = 2^30 */
	{
		CUgraphExecUpdateResultInfo info;
		cuGraphExecUpdate_v2_params q = { ge, g, &info };
		API(cuGraphExecUpdate_v2, &q, CUDA_SUCCESS);                  /* synthetic 2: n = 1000 */
	}
	n = 5;
	API(cuGraphExecKernelNodeSetParams_v2, &qu, CUDA_SUCCESS);        /* synthetic 3: n = 5 */
	{
		CUgraphNode err = NULL;
		CUgraphExecUpdateResult res;
		cuGraphExecUpdate_params q = { ge, sg, &err, &res };
		API(cuGraphExecUpdate, &q, CUDA_SUCCESS);                     /* the exec runs 0x9a9 */
	}
	n = 6;
	API(cuGraphExecKernelNodeSetParams_v2, &qu, CUDA_SUCCESS);        /* not followed */
	{
		CUgraphExecUpdateResultInfo info;
		cuGraphExecUpdate_v2_params q = { ge, g, &info };
		API(cuGraphExecUpdate_v2, &q, (CUresult)CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE);   /* failed: nothing */
	}
	cuGraphLaunch_params ql = { ge, NULL };
	API(cuGraphLaunch, &ql, CUDA_SUCCESS);
	return 0;
}

/* A graph with a child graph node and an event node (graphchild):
 * instantiated and launched. */
static int graphchild(void)
{
	CUgraph g = (CUgraph)(uintptr_t)0x9b1;
	CUgraphExec ge = (CUgraphExec)(uintptr_t)0xea1;
	cuGraphInstantiateWithFlags_params qi = { &ge, g, 0 };
	API(cuGraphInstantiateWithFlags, &qi, CUDA_SUCCESS);
	cuGraphLaunch_params ql = { ge, NULL };
	API(cuGraphLaunch, &ql, CUDA_SUCCESS);
	return 0;
}

static int graphapi_stream(void)
{
	CUgraph sg = (CUgraph)(uintptr_t)0x9b0;   /* the same handle, but from capture */
	CUgraphExec sge = (CUgraphExec)(uintptr_t)0xe9e;
	cuStreamBeginCapture_v2_params qc = { (CUstream)(uintptr_t)0xca97, CU_STREAM_CAPTURE_MODE_GLOBAL };
	API(cuStreamBeginCapture_v2, &qc, CUDA_SUCCESS);
	cuStreamEndCapture_params qe = { (CUstream)(uintptr_t)0xca97, &sg };
	API(cuStreamEndCapture, &qe, CUDA_SUCCESS);
	cuGraphInstantiateWithFlags_params qi = { &sge, sg, 0 };
	API(cuGraphInstantiateWithFlags, &qi, CUDA_SUCCESS);
	/* destroyed; the handle comes back as an explicit graph: walked */
	cuGraphDestroy_params qd = { sg };
	API(cuGraphDestroy, &qd, CUDA_SUCCESS);
	CUgraphExec e2 = (CUgraphExec)(uintptr_t)0xea0;
	cuGraphInstantiateWithFlags_params qi2 = { &e2, sg, 0 };
	API(cuGraphInstantiateWithFlags, &qi2, CUDA_SUCCESS);
	return 0;
}

static void *thread_main(void *arg)
{
	for (int i = 0; i < 500; i++)
		launch_fill(0xd00000000000ull + (uintptr_t)arg * 4096, i, (CUstream)(uintptr_t)(0x100 + (uintptr_t)arg), CUDA_SUCCESS);
	return NULL;
}

/* copythreads: each thread copies from its own buffer (never freed, so
 * SRC names the thread) */
static void *copy_main(void *arg)
{
	uintptr_t t = (uintptr_t)arg;
	size_t cap = 1 << 20;
	unsigned char *buf = malloc(cap);
	uint32_t rnd = 77 + (uint32_t)t;

	for (int i = 0; buf && i < 40; i++) {
		size_t len = 1024 + (size_t)((unsigned)i * 104729u + (unsigned)t * 7919u) % (cap - 1024);
		CUdeviceptr dst = 0xd00000000000ull + t * (2 << 20);
		cuMemcpyHtoD_v2_params q = { dst, buf, len };
		for (size_t k = 0; k < len; k++) {
			rnd = rnd * 1103515245u + 12345u;
			buf[k] = (unsigned char)(rnd >> 16);
		}
		API(cuMemcpyHtoD_v2, &q, CUDA_SUCCESS);
		flockfile(stdout);
		printf("copy 0x%llx %zu %016llx\n", (unsigned long long)(uintptr_t)buf, len,
		       (unsigned long long)XXH3_64bits(buf, len));
		funlockfile(stdout);
		launch_fill(dst, i, (CUstream)(uintptr_t)(0x100 + t), CUDA_SUCCESS);
	}
	return NULL;
}

/* n threads of fn (given their index), joined; n outside 1..max: 4.  0. */
static int run_threads(void *(*fn)(void *), int n, int max)
{
	pthread_t t[64];
	if (n < 1 || n > max || n > 64)
		n = 4;
	for (int i = 0; i < n; i++)
		pthread_create(&t[i], NULL, fn, (void *)(uintptr_t)i);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	return 0;
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "full";

	init();
	if (!strcmp(what, "full"))
		return full();
	if (!strcmp(what, "threads"))
		return run_threads(thread_main, argc > 2 ? atoi(argv[2]) : 4, 64);
	if (!strcmp(what, "copythreads"))
		return run_threads(copy_main, argc > 2 ? atoi(argv[2]) : 4, 16);
	if (!strcmp(what, "vmmunmap")) {
		/* three 2 MiB pieces mapped one by one side by side in one
		 * reserved range (an expandable segment growing), one launch,
		 * then one cuMemUnmap of all three; a fourth in a range of its
		 * own mapped and unmapped; a piece that continues its range */
		const CUdeviceptr va = 0xd00010000000ull;
		const size_t piece = 2u << 20;
		CUdeviceptr r1 = 0, r2 = 0, r3 = 0;
		/* three reserved ranges: 4 pieces at va, 1 at va + 8 pieces, 2 at
		 * va + 16 pieces (the capture learns them from these calls) */
		cuMemAddressReserve_params qr1 = { &r1, 4 * piece, 0, va, 0 };
		r1 = va;
		API(cuMemAddressReserve, &qr1, CUDA_SUCCESS);
		cuMemAddressReserve_params qr2 = { &r2, piece, 0, va + 8 * piece, 0 };
		r2 = va + 8 * piece;
		API(cuMemAddressReserve, &qr2, CUDA_SUCCESS);
		cuMemAddressReserve_params qr3 = { &r3, 2 * piece, 0, va + 16 * piece, 0 };
		r3 = va + 16 * piece;
		API(cuMemAddressReserve, &qr3, CUDA_SUCCESS);
		for (int i = 0; i < 3; i++) {
			cuMemMap_params q = { va + i * piece, piece, 0, (CUmemGenericAllocationHandle)(0x100 + i), 0 };
			API(cuMemMap, &q, CUDA_SUCCESS);
		}
		launch_fill(va + piece - 64, 32, NULL, CUDA_SUCCESS);
		cuMemUnmap_params qu = { va, 3 * piece };
		API(cuMemUnmap, &qu, CUDA_SUCCESS);
		cuMemMap_params q4 = { va + 8 * piece, piece, 0, (CUmemGenericAllocationHandle)0x104, 0 };
		API(cuMemMap, &q4, CUDA_SUCCESS);
		cuMemUnmap_params qu4 = { va + 8 * piece, piece };
		API(cuMemUnmap, &qu4, CUDA_SUCCESS);
		/* the second piece of the third range alone: it continues its range */
		cuMemMap_params q5 = { va + 17 * piece, piece, 0, (CUmemGenericAllocationHandle)0x105, 0 };
		API(cuMemMap, &q5, CUDA_SUCCESS);
		cuMemAddressFree_params qf = { va, 4 * piece };
		API(cuMemAddressFree, &qf, CUDA_SUCCESS);
		/* mapped after its range was freed (and reserved by nobody): no flag */
		cuMemMap_params q6 = { va + piece, piece, 0, (CUmemGenericAllocationHandle)0x106, 0 };
		API(cuMemMap, &q6, CUDA_SUCCESS);
		return 0;
	}
	if (!strcmp(what, "graphfault")) {
		/* a plain launch, then a captured graph whose launch faults:
		 * capture cannot know which node it was */
		CUdeviceptr a = 0xd00000000000ull;
		CUgraph g = (CUgraph)(uintptr_t)0x9a9;
		CUgraphExec ge = (CUgraphExec)(uintptr_t)0xe9e;
		launch_fill(a, 5, NULL, CUDA_SUCCESS);
		cuStreamBeginCapture_v2_params qc = { (CUstream)(uintptr_t)0xca97, CU_STREAM_CAPTURE_MODE_GLOBAL };
		API(cuStreamBeginCapture_v2, &qc, CUDA_SUCCESS);
		cuStreamEndCapture_params qe = { (CUstream)(uintptr_t)0xca97, &g };
		API(cuStreamEndCapture, &qe, CUDA_SUCCESS);
		cuGraphInstantiateWithFlags_params qi = { &ge, g, 0 };
		API(cuGraphInstantiateWithFlags, &qi, CUDA_SUCCESS);
		cuGraphLaunch_params ql = { ge, NULL };
		API(cuGraphLaunch, &ql, (CUresult)700);
		return 1;
	}
	if (!strcmp(what, "subscribed")) {
		/* what the library enabled: "driver ID" / "resource ID" lines */
		void *cuda = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
		int (*on)(CUpti_CallbackDomain, CUpti_CallbackId);
		*(void **)&on = cuda ? dlsym(cuda, "fake_enabled") : NULL;
		if (!on)
			return 2;
		for (CUpti_CallbackId id = 0; id < CUPTI_DRIVER_TRACE_CBID_SIZE; id++)
			if (on(CUPTI_CB_DOMAIN_DRIVER_API, id))
				printf("driver %u\n", (unsigned)id);
		for (CUpti_CallbackId id = 0; id < 64; id++)
			if (on(CUPTI_CB_DOMAIN_RESOURCE, id))
				printf("resource %u\n", (unsigned)id);
		return 0;
	}
	if (!strcmp(what, "syncfault")) {
		/* a launch, then a fault that surfaces first in a call capture
		 * does not subscribe to (not delivered), then in a sync call */
		CUcontext ctx = NULL;
		launch_fill(0xd00000000000ull, 1, NULL, CUDA_SUCCESS);
		cuCtxGetCurrent_params qg = { &ctx };
		API(cuCtxGetCurrent, &qg, (CUresult)700);
		cuStreamSynchronize_params qs = { NULL };
		API(cuStreamSynchronize, &qs, (CUresult)700);
		return 1;
	}
	if (!strcmp(what, "graphapi"))
		return graphapi();
	if (!strcmp(what, "graphapi-stream"))
		return graphapi_stream();
	if (!strcmp(what, "graphupdate"))
		return graphupdate();
	if (!strcmp(what, "graphchild"))
		return graphchild();
	if (!strcmp(what, "hostmem"))
		return hostmem();
	if (!strcmp(what, "memwrites"))
		return memwrites();
	if (!strcmp(what, "tests")) {
		CUdeviceptr a = 0xd00000000000ull;
		static char pbuf[] = "PYTEST_CURRENT_TEST=tests/test_b.py::test_four (call)";
		unsetenv("PYTEST_CURRENT_TEST");
		unsetenv("GPUREDUCE_TEST_NAME");
		setenv("AA_EARLY", "1", 1);
		launch_fill(a, 1, NULL, CUDA_SUCCESS);
		setenv("PYTEST_CURRENT_TEST", "tests/test_a.py::test_one (call)", 1);
		launch_fill(a, 2, NULL, CUDA_SUCCESS);
		launch_fill(a, 3, NULL, CUDA_SUCCESS);
		setenv("PYTEST_CURRENT_TEST", "tests/test_a.py::test_two (call)", 1);
		launch_fill(a, 4, NULL, CUDA_SUCCESS);
		unsetenv("PYTEST_CURRENT_TEST");
		launch_fill(a, 5, NULL, CUDA_SUCCESS);
		/* the capture library remembers where the variables were between
		 * launches (testname.c): other variables added and an earlier one
		 * removed (slots move) must change nothing, a string edited in
		 * place and GPUREDUCE_TEST_NAME (first) must be seen */
		setenv("PYTEST_CURRENT_TEST", "tests/test_a.py::test_three (call)", 1);
		launch_fill(a, 6, NULL, CUDA_SUCCESS);
		setenv("ZZ_LATER_1", "x", 1);
		setenv("ZZ_LATER_2", "y", 1);
		launch_fill(a, 7, NULL, CUDA_SUCCESS);
		unsetenv("AA_EARLY");
		launch_fill(a, 8, NULL, CUDA_SUCCESS);
		putenv(pbuf);
		launch_fill(a, 9, NULL, CUDA_SUCCESS);
		memcpy(strstr(pbuf, "four"), "five", 4);
		launch_fill(a, 10, NULL, CUDA_SUCCESS);
		setenv("GPUREDUCE_TEST_NAME", "named", 1);
		launch_fill(a, 11, NULL, CUDA_SUCCESS);
		unsetenv("GPUREDUCE_TEST_NAME");
		unsetenv("PYTEST_CURRENT_TEST");
		launch_fill(a, 12, NULL, CUDA_SUCCESS);
		return 0;
	}
	if (!strcmp(what, "unload")) {
		/* a JIT drops a module; its function's handle may name another
		 * build's function afterwards */
		launch_fill(0xd00000000000ull, 1, NULL, CUDA_SUCCESS);
		launch_fill(0xd00000000000ull, 2, NULL, CUDA_SUCCESS);
		resource(CUPTI_CBID_RESOURCE_MODULE_UNLOAD_STARTING, NULL);
		launch_fill(0xd00000000000ull, 3, NULL, CUDA_SUCCESS);
		return 0;
	}
	if (!strcmp(what, "child")) {
		launch_fill(0xd00000000000ull, 1, NULL, CUDA_SUCCESS);
		return 0;
	}
	if (!strcmp(what, "forkexec")) {
		pid_t pid;
		int st;
		launch_fill(0xd00000000000ull, 1, NULL, CUDA_SUCCESS);
		pid = fork();
		if (pid == 0) {   /* forked child: must not write into the parent's trace */
			launch_fill(0xd00000000000ull, 2, NULL, CUDA_SUCCESS);
			exit(0);
		}
		waitpid(pid, &st, 0);
		pid = fork();
		if (pid == 0) {   /* a second CUDA process */
			execl("/proc/self/exe", argv[0], "child", (char *)NULL);
			_exit(127);
		}
		waitpid(pid, &st, 0);
		launch_fill(0xd00000000000ull, 3, NULL, CUDA_SUCCESS);
		return 0;
	}
	fprintf(stderr, "fakeprog: unknown scenario %s\n", what);
	return 2;
}
