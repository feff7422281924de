/*
 * libcuda.c - a CPU stand-in for the CUDA driver (libcuda.so.1), so that the
 * CPU-only CI can run gpureduce's replay and shrink, and the repros they
 * emit, end to end.  Built as $(BUILD)/double/libcuda.so.1 (tests/double/
 * double.mk), never installed; a program finds it through
 * GPUREDUCE_LIBCUDA, LD_LIBRARY_PATH or an rpath.  It exports the symbols
 * named in replay/drv.h's DRV_FUNCS plus a few cheap extras: every cu*
 * function defined below (libcuda.map hides everything else).  Each is
 * defined under its <cuda.h> name, so the compiler checks the prototype and
 * cuda.h's macros give the versioned symbol (cuMemAlloc -> cuMemAlloc_v2).
 *
 * WHAT IT MODELS
 *  - One device, ordinal 0 (DOUBLE_DEVICES=N: N ordinals, 1 to 16, each with
 *    its own primary context and its own address range; see "devices"
 *    below), "gpureduce CPU double", compute capability 9.0,
 *    driver version 13000, 8 GiB of "device memory" (a budget, not a
 *    reservation).  Calls other than cuDriverGetVersion and
 *    cuGetErrorName/String before a successful cuInit(0) return
 *    CUDA_ERROR_NOT_INITIALIZED.  DOUBLE_INIT_SCRIPT=FILE ("S F") lets the
 *    first S processes' cuInit succeed and fails the next F (a GPU that
 *    drops out for a while).  DOUBLE_NO_DEVICE=1 makes cuInit fail with
 *    CUDA_ERROR_NO_DEVICE (a machine without a GPU).  DOUBLE_INIT_DELAY_MS
 *    slows it down like a real context creation and DOUBLE_TEARDOWN_DELAY_MS
 *    the primary context's last release or a process's exit with one like
 *    its teardown (DOUBLE_INIT_LOG records when each process waited).
 *  - The primary context: retain/release/reset and a per-thread current
 *    context (cuCtxSetCurrent, push/pop).  Calls that need a context return
 *    CUDA_ERROR_INVALID_CONTEXT without a current one.  Releasing the last
 *    reference (or cuDevicePrimaryCtxReset) destroys it: every allocation
 *    is freed, every module unloaded, the sticky error cleared.
 *  - Device memory is host memory, and a CUdeviceptr is the host address,
 *    which the CPU kernels dereference.  cuMemAlloc places each buffer in
 *    its own mmap with a 64 KiB PROT_NONE guard before and after: the start
 *    is 256-byte aligned and the end lies flush against the guard after it,
 *    less the slack of rounding the size up to 256 (a 4000-byte buffer has
 *    96 bytes of slack, so +4000 does not fault and +4096 does, as on the
 *    GPU with guard placement).  A read before the start faults only when
 *    the rounded size is a multiple of the 4 KiB page.  cuMemFree makes the
 *    range PROT_NONE and never reuses it, so a use after free faults.
 *    New memory reads as zeros.  DOUBLE_ALLOC=gpu allocates as the GPU
 *    does instead: each buffer starts a 2 MiB granule mapped whole, so an
 *    overrun inside the granule is quiet (what guard placement is for).
 *    DOUBLE_NO_VMM=1 makes cuMemAddressReserve return NOT_SUPPORTED.
 *  - VMM: granularity 2 MiB (minimum and recommended).  cuMemAddressReserve
 *    maps PROT_NONE, aligned to max(alignment, 2 MiB); the address hint is
 *    ignored (as the real driver did, GPU-FACTS.md).  cuMemCreate records a
 *    size; cuMemMap gives the range fresh zero memory that stays PROT_NONE
 *    until cuMemSetAccess (READ or READWRITE; cuMemGetAccess says which),
 *    as on the GPU; cuMemUnmap
 *    makes it PROT_NONE again.  Sizes, offsets and addresses must be
 *    multiples of 2 MiB (cuMemMap accepts a non-zero offset inside the
 *    handle, which CUDA documents as "must be zero"), flags 0, the location
 *    device 0 and the type PINNED.  VMM calls need cuInit but no current
 *    context.
 *  - Copies and memsets (HtoD, DtoH, DtoD, D8/D16/D32, 2D with pitch, the
 *    Async forms run synchronously) are checked against the allocation
 *    table: a device range not inside one live cuMemAlloc buffer (its exact
 *    requested size) or one accessible VMM mapping returns
 *    CUDA_ERROR_INVALID_VALUE instead of touching memory.
 *  - Modules: cuModuleLoadData takes an ELF64 image (a cubin, or the test
 *    image kernels.cubin); anything else is CUDA_ERROR_INVALID_IMAGE.  The
 *    image is copied under a fault guard, so a truncated or lying header
 *    gives INVALID_IMAGE, not a crash.  A kernel exists when a defined
 *    STT_FUNC symbol of the image is also in the kernel registry
 *    (kernels.c); other names give CUDA_ERROR_NOT_FOUND.  Defined
 *    STT_OBJECT symbols become __device__ globals (cuModuleGetGlobal),
 *    allocated like cuMemAlloc buffers and initialised from the image.
 *  - Launches (cuLaunchKernel, cuLaunchKernelEx, cuLaunchCooperativeKernel)
 *    validate the handle, dimensions (block <= 1024 threads, z <= 64),
 *    cuLaunchKernelEx's attributes (a cluster dimension must divide the
 *    grid: CUDA_ERROR_INVALID_CLUSTER_SIZE; an event attribute names no
 *    event of the double: CUDA_ERROR_INVALID_HANDLE),
 *    shared memory and the parameters (kernelParams, or extra's
 *    CU_LAUNCH_PARAM_BUFFER_POINTER/SIZE), pack them at the registry's
 *    offsets and run the whole grid at once, sequentially: blocks outer,
 *    threads inner.  Streams are accepted and ignored: everything is
 *    synchronous, as under CUDA_LAUNCH_BLOCKING=1; with DOUBLE_ASYNC_FAULTS=1
 *    and without CUDA_LAUNCH_BLOCKING=1, a launch that faults returns
 *    CUDA_SUCCESS and the next call that needs the context returns the
 *    fault, as a GPU's asynchronous launch does.  Racy kernels take a
 *    random value per launch (DOUBLE_SEED fixes the seed); with
 *    DOUBLE_RACE_COUNTER=FILE, L->race() counts up across all processes.
 *  - Faults: during a grid run a SIGSEGV/SIGBUS handler is installed (the
 *    previous handlers are restored afterwards, so ASan's or the program's
 *    own stay in charge elsewhere).  A hit on a guard page, a freed buffer,
 *    an unmapped or inaccessible VMM range or any other unmapped address
 *    ends the grid, and the launch returns CUDA_ERROR_ILLEGAL_ADDRESS (700).
 *    A failed device-side assert (check_index) prints CUDA's assertion
 *    message and returns CUDA_ERROR_ASSERT (710).  Both are sticky: from
 *    then on every call that needs the context (memory, copies, modules,
 *    launches, synchronize, streams, VMM) returns the same error until the
 *    primary context is destroyed.  DOUBLE_VERBOSE=1 prints each fault to
 *    stderr: address, read/write, kernel, block and thread, and where the
 *    address lies relative to the nearest allocation.
 *  - cuStreamIsCapturing always says NONE (no graphs), so the capture
 *    library can run inside a program that uses the double.
 *  - CUDA IPC between processes (cuIpcGetMemHandle, cuIpcOpenMemHandle,
 *    cuIpcCloseMemHandle): the exported buffer's pages move into a POSIX
 *    shared-memory object that the opener maps between guards of its own
 *    (see "IPC" below).
 *  - cuPointerGetAttribute answers CU_POINTER_ATTRIBUTE_MEMORY_TYPE only:
 *    DEVICE inside a live allocation or accessible VMM mapping.
 *  - TMA tensor maps: cuTensorMapEncodeTiled, cuTensorMapEncodeIm2col (the
 *    tiled layout, channels and pixels as the box) and cuTensorMapReplaceAddress
 *    write the 128 bytes with the layout measured on the H200 where it was
 *    measured (GPU-FACTS.md): word 0 the plain global address, the row
 *    stride / 16 in the upper half of word 1, dims - 1 in word 4 (two
 *    32-bit halves), box - 1 in the bytes of word 6; the rest is the
 *    double's own (rank and type in word 1's low half, strides 2..3 / 16
 *    in word 2, dims 3..4 - 1 in word 5, the enums in word 7).  Arguments
 *    are checked as the driver documents them (address 16-byte aligned,
 *    strides multiples of 16, rank 1..5, box 1..256).  Kernels read through
 *    a map with dbl_tmap_* (double.h).
 *  - cuGetErrorName knows every CUresult of CUDA 13.0; cuGetErrorString
 *    gives the real text for the common ones and the name for the rest;
 *    unknown codes give CUDA_ERROR_INVALID_VALUE and NULL.
 *  - CUfunction handles double as CUkernel handles (cuKernelGetName,
 *    cuKernelGetParamInfo) and cuFuncGetName works on them too.
 *
 * WHAT IT DOES NOT MODEL
 *  - An out-of-bounds access that lands in mapped host memory (the slack
 *    before a guard, another buffer, the program's heap) is NOT detected;
 *    nor are races, misaligned accesses, or reads of uninitialised memory.
 *  - No PTX/fatbin loading, no JIT, no real device code: only the kernels
 *    in the registry run.  No runtime API (cudart), no cuGetProcAddress,
 *    no events, graphs, managed memory, arrays, textures, peer access or
 *    cooperative-launch limits.  Pinned host memory (cuMemHostAlloc,
 *    cuMemAllocHost) is plain host memory at one address for host and
 *    device (cuMemHostGetDevicePointer), which kernels read as mapped
 *    memory, as under unified addressing.
 *  - Nothing is asynchronous; the grid runs in the calling thread (slow
 *    for big grids: one C call per thread).  Calls are serialised by one
 *    lock.  A launch stops at the first fault or assert, so only the first
 *    failing thread is reported.  A fault in another thread while a grid
 *    runs goes to the program's previous handler, and the rest of that
 *    grid then runs unguarded.
 *  - Freed buffers keep their address range for ever, so a process runs
 *    out of mappings (vm.max_map_count) after some 65000 cuMemAlloc calls
 *    (measured: half of them freed); then cuMemAlloc returns
 *    CUDA_ERROR_OUT_OF_MEMORY.
 *  - Two cuMemMap mappings of one cuMemCreate handle do not share memory:
 *    mapping a handle that is already mapped returns
 *    CUDA_ERROR_NOT_SUPPORTED, and data does not survive unmap + map.
 *  - Sticky-error and argument-validation behaviour follows the CUDA
 *    documentation and GPU-FACTS.md, not a full survey of the real driver;
 *    where the real driver's rules were unknown the double is strict about
 *    ranges and lenient about flags it does not use.
 *
 * The double is built without sanitizers.  Its SIGSEGV/SIGBUS handler is
 * installed only while a grid runs or an image is copied, and the previous
 * handler (ASan's, under make SAN=1) is put back right after; tests/cli/
 * t2001-double-faults.sh checks that under both builds.  This file
 * deliberately does not use the house helpers (common/): it lives inside
 * other programs and must report failures as CUresult, never abort.
 */
#include <cuda.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "double.h"
#include "image.h"

#define GRAN          ((size_t)2 << 20)     /* VMM granularity */
#define ALLOC_ALIGN   256                   /* cuMemAlloc start alignment */
#define GUARD         ((size_t)64 << 10)    /* PROT_NONE around each cuMemAlloc */
#define MAX_DEVICES   16                    /* DOUBLE_DEVICES' upper bound */
#define DEV_VA_BASE   ((uintptr_t)0x200000000000ULL) /* device 0's address range */
#define DEV_VA_SPAN   ((uintptr_t)1 << 40)  /* 1 TiB per device */
#define TOTAL_MEM     ((size_t)8 << 30)
#define MAX_SMEM      49152                 /* static + dynamic, without opt-in */
#define MAX_SMEM_OPTIN 232448               /* H100/H200 opt-in maximum */
#define MAX_ARGS      4096                  /* parameter buffer bytes */

/* ---- state ------------------------------------------------------------- */

enum region_kind { R_ALLOC, R_GLOBAL, R_RESERVE, R_IPC };

struct vmm_handle {
	int live;
	int device;                 /* prop.location.id at cuMemCreate */
	size_t size;
	int mapped;                 /* number of live mappings */
};

struct mapping {
	uintptr_t start;
	size_t size;
	struct vmm_handle *h;
	int prot;                   /* PROT_NONE / PROT_READ / PROT_READ|PROT_WRITE */
};

/* A cuMemAlloc buffer, a module global, a VMM reservation or a buffer
 * of another process opened with cuIpcOpenMemHandle. */
struct region {
	int kind, live;
	uintptr_t user;             /* buffer / reservation start */
	size_t size;                /* requested size / reservation size */
	uintptr_t map;              /* whole mmap, guards included */
	size_t maplen;
	struct mapping *maps;       /* R_RESERVE: live mappings */
	size_t nmaps, amaps;
	char shm[32];               /* R_ALLOC exported by cuIpcGetMemHandle: its
				     * pages' shared-memory object ("" if none) */
};

struct CUctx_st { int device; };

struct dbl_global {
	char *name;
	struct region *r;
};

struct CUmod_st {
	int live;
	unsigned char *image;                   /* private copy */
	size_t image_len;
	unsigned char *has;                     /* per registry entry: defined in the image */
	struct CUfunc_st **funcs;               /* per registry entry, created on demand */
	struct dbl_global *globals;
	size_t nglobals, aglobals;
	struct CUmod_st *next;
};

struct CUfunc_st {
	struct CUmod_st *mod;
	const struct dbl_kernel *k;
	int max_dyn_smem;
	int carveout;
	struct CUfunc_st *next_all;
};

struct CUstream_st { int live; struct CUstream_st *next; };

/* The fault guard: what the signal handler needs, and what it found. */
struct fault_guard {
	sigjmp_buf jmp;
	volatile sig_atomic_t active;
	pthread_t thread;
	struct sigaction old_segv, old_bus;
	void *volatile addr;
	volatile int sig;
	volatile int is_write;      /* 1 write, 0 read, -1 unknown */
	struct dbl_launch L;        /* the thread running when it fired */
	const struct dbl_kernel *k;
	int race_have;              /* launch_race's value for this launch is taken */
	uint32_t race_v;
};

static struct {
	pthread_mutex_t lock;
	int inited;
	int ctx_refs;
	CUdevice ctx_dev;        /* the ordinal it was retained for */
	int ctx_alive;
	CUresult sticky;
	struct region **regions;
	size_t nregions, aregions;
	struct vmm_handle **handles;
	size_t nhandles, ahandles;
	struct CUmod_st *modules;
	struct CUfunc_st *functions;
	struct CUstream_st *streams;
	size_t allocated;
	uint64_t launches;
	uint64_t rng;
	int verbose;
	int async_faults;           /* DOUBLE_ASYNC_FAULTS=1 without CUDA_LAUNCH_BLOCKING=1 */
	int gpu_alloc;           /* DOUBLE_ALLOC=gpu: cuMemAlloc as the GPU does it */
	int no_vmm;              /* DOUBLE_NO_VMM=1: no virtual memory management */
	size_t page;
	uintptr_t next_va[MAX_DEVICES]; /* where each device's next range is tried */
	struct fault_guard fg;
} S = { .lock = PTHREAD_MUTEX_INITIALIZER };

static struct CUctx_st primary[MAX_DEVICES];   /* one per ordinal */
static __thread CUcontext current;
static __thread CUcontext ctx_stack[16];
static __thread int ctx_depth;

static void vlog(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void vlog(const char *fmt, ...)
{
	va_list ap;
	if (!S.verbose)
		return;
	va_start(ap, fmt);
	fputs("libcuda double: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* The file named by $env, opened for update and locked (lockf) against
 * every other process; fclose drops the lock.  NULL when unset or absent. */
static FILE *locked_open(const char *env)
{
	const char *path = getenv(env);
	FILE *f;
	int fd;
	if (!path || !*path || (fd = open(path, O_RDWR)) < 0)
		return NULL;
	if (lockf(fd, F_LOCK, 0) == 0 && (f = fdopen(fd, "r+")))
		return f;
	close(fd);
	return NULL;
}

/* Replace a locked_open file's contents with the formatted text. */
static void locked_rewrite(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void locked_rewrite(FILE *f, const char *fmt, ...)
{
	va_list ap;
	rewind(f);
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fflush(f);
	if (ftruncate(fileno(f), ftell(f)) != 0)
		fputs("libcuda double: truncating a shared counter file failed\n", stderr);
}

/* DOUBLE_RACE_COUNTER=FILE holding a number: instead of the random
 * source, L->race() takes the file's number and writes it back plus one,
 * under a lock, across all processes.  A racy kernel then fires on every
 * other launch that asks, so a test can count on a rate of exactly one
 * half however the launches are spread over processes. */
static int race_counter(uint32_t *v)
{
	unsigned long n = 0;
	int got = 0;
	FILE *f = locked_open("DOUBLE_RACE_COUNTER");
	if (!f)
		return 0;
	if (fscanf(f, "%lu", &n) == 1) {
		*v = (uint32_t)n;
		got = 1;
		locked_rewrite(f, "%lu\n", n + 1);
	}
	fclose(f);
	return got;
}

/* splitmix64: the per-launch random source of racy kernels. */
static uint64_t next_rand(void)
{
	uint64_t z = (S.rng += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* L->race: one value per launch, taken when a thread first asks: the race
 * counter's next number, else a random one.  Only launches that ask use up
 * a number, so the alternation does not depend on other launches. */
static uint32_t launch_race(void)
{
	if (!S.fg.race_have) {
		if (!race_counter(&S.fg.race_v))
			S.fg.race_v = (uint32_t)next_rand();
		S.fg.race_have = 1;
	}
	return S.fg.race_v;
}

static size_t round_up(size_t n, size_t to)
{
	return (n + to - 1) / to * to;
}

/* Lock and check what every call needs.  Each returns with the lock held
 * whatever the result; callers unlock on their single exit path. */
static CUresult enter_init(void)
{
	pthread_mutex_lock(&S.lock);
	return S.inited ? CUDA_SUCCESS : CUDA_ERROR_NOT_INITIALIZED;
}

/* Initialised and not dead: VMM calls, which need no current context. */
static CUresult enter_dev(void)
{
	CUresult r = enter_init();
	if (r == CUDA_SUCCESS && S.sticky)
		r = S.sticky;
	return r;
}

/* Initialised, a live current context, no sticky error. */
static CUresult enter_ctx(void)
{
	CUresult r = enter_init();
	if (r != CUDA_SUCCESS)
		return r;
	if (!S.ctx_alive || current != &primary[S.ctx_dev])
		return CUDA_ERROR_INVALID_CONTEXT;
	return S.sticky ? S.sticky : CUDA_SUCCESS;
}

static CUresult leave(CUresult r)
{
	pthread_mutex_unlock(&S.lock);
	return r;
}

/* ---- the fault guard ---------------------------------------------------- */

static void on_fault(int sig, siginfo_t *si, void *ucv)
{
	struct fault_guard *g = &S.fg;
	if (!g->active || !pthread_equal(pthread_self(), g->thread)) {
		/* not ours: hand the signal back to whoever had it; the faulting
		 * instruction runs again and reaches that handler */
		sigaction(SIGSEGV, &g->old_segv, NULL);
		sigaction(SIGBUS, &g->old_bus, NULL);
		return;
	}
	g->addr = si->si_addr;
	g->sig = sig;
	g->is_write = -1;
#if defined(__x86_64__) && defined(REG_ERR)
	{
		ucontext_t *uc = ucv;
		g->is_write = (uc->uc_mcontext.gregs[REG_ERR] & 2) ? 1 : 0;
	}
#else
	(void)ucv;
#endif
	g->active = 0;
	siglongjmp(g->jmp, 1);
}

/* Install the handler for the calling thread; the caller then does
 * sigsetjmp(S.fg.jmp, 1) and calls guard_end() on both paths. */
static void guard_begin(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_fault;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	S.fg.thread = pthread_self();
	S.fg.addr = NULL;
	S.fg.sig = 0;
	sigaction(SIGSEGV, &sa, &S.fg.old_segv);
	sigaction(SIGBUS, &sa, &S.fg.old_bus);
	S.fg.active = 1;
}

static void guard_end(void)
{
	S.fg.active = 0;
	sigaction(SIGSEGV, &S.fg.old_segv, NULL);
	sigaction(SIGBUS, &S.fg.old_bus, NULL);
}

/* Copy n bytes from memory that may not be readable.  0, or -1 if a read
 * faulted.  A plain byte loop: no memcpy, which sanitizers intercept. */
static int safe_read(void *dst, const void *src, size_t n)
{
	volatile int ret = -1;
	guard_begin();
	if (sigsetjmp(S.fg.jmp, 1) == 0) {
		volatile const unsigned char *s = src;
		unsigned char *d = dst;
		for (size_t i = 0; i < n; i++)
			d[i] = s[i];
		ret = 0;
	}
	guard_end();
	return ret;
}

/* Called by a kernel (kernels.c) whose device-side assert failed. */
void dbl_device_assert(const struct dbl_launch *L, const char *expr, const char *file, int line,
		       const char *func)
{
	/* CUDA's format; the kernel's signature stands in for __PRETTY_FUNCTION__ */
	fprintf(stderr, "%s:%d: void %s: block: [%u,%u,%u], thread: [%u,%u,%u] Assertion `%s` failed.\n",
		file, line, S.fg.k ? S.fg.k->signature : func, L->blockIdx.x, L->blockIdx.y, L->blockIdx.z,
		L->threadIdx.x, L->threadIdx.y, L->threadIdx.z, expr);
	S.fg.active = 0;
	siglongjmp(S.fg.jmp, 2);
}

/* ---- the allocation table ------------------------------------------------ */

static struct region *region_add(int kind, uintptr_t user, size_t size, uintptr_t map, size_t maplen)
{
	struct region *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	if (S.nregions == S.aregions) {
		size_t n = S.aregions ? 2 * S.aregions : 64;
		struct region **p = realloc(S.regions, n * sizeof(*p));
		if (!p) {
			free(r);
			return NULL;
		}
		S.regions = p;
		S.aregions = n;
	}
	r->kind = kind;
	r->live = 1;
	r->user = user;
	r->size = size;
	r->map = map;
	r->maplen = maplen;
	S.regions[S.nregions++] = r;
	return r;
}

/* `len` bytes of PROT_NONE address space in the range of the device whose
 * context is alive (device 0 without one): device d's memory lies in
 * [DEV_VA_BASE + d * DEV_VA_SPAN, + DEV_VA_SPAN), taken upwards and never
 * reused, so a pointer from one device's process is nothing in another
 * device's (as on a node with several GPUs).  MAP_FAILED when the range
 * is used up or taken by someone else. */
static void *dev_mmap(size_t len)
{
	int d = S.ctx_alive ? (int)S.ctx_dev : 0;
	uintptr_t base = DEV_VA_BASE + (uintptr_t)d * DEV_VA_SPAN;
	size_t step = round_up(len, GRAN);

	if (!S.next_va[d])
		S.next_va[d] = base;
	for (int tries = 0; tries < 64; tries++) {
		uintptr_t at = S.next_va[d];
		void *m;
		if (step > base + DEV_VA_SPAN - at)
			break;
		S.next_va[d] = at + step;
		m = mmap((void *)at, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE |
			 MAP_FIXED_NOREPLACE, -1, 0);
		if (m == (void *)at)
			return m;
		if (m != MAP_FAILED)
			munmap(m, len);     /* a kernel that took it as a hint only */
	}
	return MAP_FAILED;
}

/* Reserve a guarded buffer of `size` bytes (cuMemAlloc's placement). */
static CUresult buffer_new(int kind, size_t size, struct region **out)
{
	size_t rounded = round_up(size, ALLOC_ALIGN);
	size_t data = round_up(rounded, S.page);
	size_t maplen;
	if (S.gpu_alloc && kind == R_ALLOC) {
		/* the buffer starts a 2 MiB granule that is mapped whole: an
		 * overrun inside the granule reads and writes quietly */
		data = round_up(size, GRAN);
		rounded = data;
	}
	maplen = GUARD + data + GUARD;
	if (size > TOTAL_MEM - S.allocated)
		return CUDA_ERROR_OUT_OF_MEMORY;
	void *m = dev_mmap(maplen);
	if (m == MAP_FAILED)
		return CUDA_ERROR_OUT_OF_MEMORY;
	uintptr_t map = (uintptr_t)m;
	if (mprotect((void *)(map + GUARD), data, PROT_READ | PROT_WRITE)) {
		munmap(m, maplen);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	*out = region_add(kind, map + GUARD + data - rounded, size, map, maplen);
	if (!*out) {
		munmap(m, maplen);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	S.allocated += size;
	return CUDA_SUCCESS;
}

/* Free a buffer: drop its pages, keep the range reserved and PROT_NONE. */
static void buffer_free(struct region *r)
{
	size_t data = r->maplen - 2 * GUARD;
	mmap((void *)(r->map + GUARD), data, PROT_NONE,
	     MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	r->live = 0;
	if (r->shm[0])
		shm_unlink(r->shm);   /* opened elsewhere: their mapping stays */
	r->shm[0] = 0;
	if (r->kind != R_IPC)
		S.allocated -= r->size;
}

/* Replace [p, p+n) of a reservation by fresh PROT_NONE memory. */
static int vmm_drop(uintptr_t p, size_t n)
{
	void *m = mmap((void *)p, n, PROT_NONE, MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		       -1, 0);
	return m == MAP_FAILED ? -1 : 0;
}

static struct region *find_reserve(uintptr_t p, size_t n)
{
	/* newest first: the reservation a map or free names is most often
	 * the last one made (hunt guards every tensor in its own) */
	for (size_t i = S.nregions; i-- > 0;) {
		struct region *r = S.regions[i];
		if (r->live && r->kind == R_RESERVE && p >= r->user && p - r->user <= r->size &&
		    n <= r->size - (p - r->user))
			return r;
	}
	return NULL;
}

static struct mapping *find_mapping(struct region *r, uintptr_t p)
{
	for (size_t i = 0; i < r->nmaps; i++)
		if (p >= r->maps[i].start && p - r->maps[i].start < r->maps[i].size)
			return &r->maps[i];
	return NULL;
}

/* 1 if [p, p+n) of reservation r is entirely mapped with at least `prot`;
 * with `whole`, also no mapping may stick out of the range. */
static int vmm_covered(struct region *r, uintptr_t p, size_t n, int prot, int whole)
{
	uintptr_t cur = p, end = p + n;
	while (cur < end) {
		struct mapping *m = find_mapping(r, cur);
		if (!m || (m->prot & prot) != prot || (whole && m->start < p))
			return 0;
		cur = m->start + m->size;
		if (whole && cur > end)
			return 0;
	}
	return 1;
}

/* 1 if the device range [p, p+n) may be read (write 0) or written. */
static int range_ok(CUdeviceptr dp, size_t n, int write)
{
	uintptr_t p = (uintptr_t)dp;
	if (p + n < p)
		return 0;
	for (size_t i = 0; i < S.nregions; i++) {
		struct region *r = S.regions[i];
		if (!r->live || p < r->user || p - r->user >= r->size)
			continue;
		if (r->kind != R_RESERVE)
			return n <= r->size - (p - r->user);
		if (n > r->size - (p - r->user))
			return 0;
		return vmm_covered(r, p, n, write ? PROT_READ | PROT_WRITE : PROT_READ, 0);
	}
	return 0;
}

/* Describe where addr lies relative to the allocations, for fault reports. */
static void describe_addr(uintptr_t a, char *buf, size_t len)
{
	for (size_t i = 0; i < S.nregions; i++) {
		struct region *r = S.regions[i];
		if (a < r->map || a - r->map >= r->maplen)
			continue;
		const char *what = r->kind == R_GLOBAL ? "global" : r->kind == R_IPC ?
			"IPC-opened buffer" : "allocation";
		if (r->kind == R_RESERVE) {
			struct mapping *m = r->live ? find_mapping(r, a) : NULL;
			if (!r->live)
				snprintf(buf, len, "inside the freed reservation at 0x%lx", (unsigned long)r->user);
			else if (m)
				snprintf(buf, len, "inside a mapping at 0x%lx of %zu bytes without access "
					 "(cuMemSetAccess)", (unsigned long)m->start, m->size);
			else {
				/* the nearest mapping below, the buffer an overrun left */
				const struct mapping *below = NULL;
				for (size_t k = 0; k < r->nmaps; k++)
					if (r->maps[k].start < a && (!below || r->maps[k].start > below->start))
						below = &r->maps[k];
				if (below)
					snprintf(buf, len, "%lu bytes after the end of the mapping at 0x%lx of %zu "
						 "bytes (unmapped part of the reservation at 0x%lx)",
						 (unsigned long)(a - below->start - below->size),
						 (unsigned long)below->start, below->size, (unsigned long)r->user);
				else
					snprintf(buf, len, "in an unmapped part of the reservation at 0x%lx of %zu bytes",
						 (unsigned long)r->user, r->size);
			}
		} else if (!r->live) {
			snprintf(buf, len, "inside the freed %s at 0x%lx of %zu bytes (use after free)",
				 what, (unsigned long)r->user, r->size);
		} else if (a >= r->user + r->size) {
			snprintf(buf, len, "%lu bytes after the end of the %s at 0x%lx of %zu bytes",
				 (unsigned long)(a - r->user - r->size), what, (unsigned long)r->user, r->size);
		} else if (a < r->user) {
			snprintf(buf, len, "%lu bytes before the %s at 0x%lx of %zu bytes",
				 (unsigned long)(r->user - a), what, (unsigned long)r->user, r->size);
		} else {
			snprintf(buf, len, "inside the %s at 0x%lx of %zu bytes", what,
				 (unsigned long)r->user, r->size);
		}
		return;
	}
	snprintf(buf, len, "outside every allocation");
}

/* ---- handles ------------------------------------------------------------- */

static struct CUmod_st *module_ok(CUmodule m)
{
	for (struct CUmod_st *p = S.modules; p; p = p->next)
		if (p == m && p->live)
			return p;
	return NULL;
}

static struct CUfunc_st *function_ok(const void *f)
{
	for (struct CUfunc_st *p = S.functions; p; p = p->next_all)
		if ((const void *)p == f && p->mod->live)
			return p;
	return NULL;
}

static struct vmm_handle *vmm_handle_ok(CUmemGenericAllocationHandle h)
{
	for (size_t i = S.nhandles; i-- > 0;)   /* newest first: the one just made, most often */
		if ((CUmemGenericAllocationHandle)(uintptr_t)S.handles[i] == h && S.handles[i]->live)
			return S.handles[i];
	return NULL;
}

static int stream_ok(CUstream s)
{
	if (s == NULL || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD)
		return 1;
	for (struct CUstream_st *p = S.streams; p; p = p->next)
		if (p == s && p->live)
			return 1;
	return 0;
}

static void module_unload(struct CUmod_st *m)
{
	for (size_t i = 0; i < m->nglobals; i++)
		if (m->globals[i].r->live)
			buffer_free(m->globals[i].r);
	m->live = 0;
	free(m->image);
	m->image = NULL;
}

/* Destroy the primary context's state (release to zero, reset). */
static void context_destroy(void)
{
	for (size_t i = 0; i < S.nregions; i++) {
		struct region *r = S.regions[i];
		if (r->live && (r->kind == R_ALLOC || r->kind == R_IPC))
			buffer_free(r);
	}
	for (struct CUmod_st *m = S.modules; m; m = m->next)
		if (m->live)
			module_unload(m);
	for (struct CUstream_st *s = S.streams; s; s = s->next)
		s->live = 0;
	S.sticky = CUDA_SUCCESS;
}

/* ---- initialisation, device, context ------------------------------------ */

/* DOUBLE_INIT_SCRIPT=FILE holding "S F": across all processes, the first S
 * first-time cuInit calls succeed and the next F fail with NO_DEVICE (a GPU
 * that drops out for a while); the file counts down under a lock. */
static int init_script_says_fail(void)
{
	long ok = 0, bad = 0;
	int fail = 0;
	FILE *f = locked_open("DOUBLE_INIT_SCRIPT");
	if (!f)
		return 0;
	if (fscanf(f, "%ld %ld", &ok, &bad) == 2) {
		if (ok > 0)
			ok--;
		else if (bad > 0) {
			bad--;
			fail = 1;
		}
		locked_rewrite(f, "%ld %ld\n", ok, bad);
	}
	fclose(f);
	return fail;
}

/* Append one formatted line to the file named by $env (a test's log),
 * in one write so that processes logging at once do not interleave.
 * Nothing when the variable is unset. */
static void env_log(const char *env, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void env_log(const char *env, const char *fmt, ...)
{
	const char *path = getenv(env);
	char line[128];
	va_list ap;
	int fd, n;
	if (!path || !*path || (fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0644)) < 0)
		return;
	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (n < 0 || n >= (int)sizeof(line) || write(fd, line, (size_t)n) != n)
		fprintf(stderr, "libcuda double: %s: write failed\n", env);
	close(fd);
}

/* DOUBLE_INIT_DELAY_MS=N makes a first-time cuInit take N ms, like a real
 * context creation; with DOUBLE_INIT_LOG=FILE it appends "b NS COMM" and
 * "e NS COMM" (CLOCK_MONOTONIC, the process's name) around that wait, so a test can count how many
 * processes were starting at once. */
static void init_log(char what)
{
	struct timespec ts;
	char comm[32] = "?";
	FILE *f = fopen("/proc/self/comm", "r");
	if (f) {
		if (fgets(comm, sizeof(comm), f))
			comm[strcspn(comm, "\n")] = 0;
		fclose(f);
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);
	env_log("DOUBLE_INIT_LOG", "%c %lld %s\n", what, (long long)ts.tv_sec * 1000000000ll + ts.tv_nsec, comm);
}

/* Milliseconds from environment variable `name` (0 when unset). */
static long env_ms(const char *name)
{
	const char *d = getenv(name);
	return d && *d ? strtol(d, NULL, 10) : 0;
}

/* DOUBLE_TEARDOWN_DELAY_MS=N makes the release of the last reference to
 * a primary context, or the exit of a process that holds one, take N ms,
 * like a real context's teardown (t5118: whether anyone waits for it). */
static void teardown_slowly(void)
{
	long ms = env_ms("DOUBLE_TEARDOWN_DELAY_MS");
	if (ms > 0)
		usleep((useconds_t)ms * 1000);
}

__attribute__((destructor)) static void teardown_at_exit(void)
{
	if (S.ctx_alive)
		teardown_slowly();
}

static void init_slowly(void)
{
	long ms = env_ms("DOUBLE_INIT_DELAY_MS");
	if (ms <= 0)
		return;
	init_log('b');
	usleep((useconds_t)ms * 1000);
	init_log('e');
}

CUresult cuInit(unsigned int flags)
{
	pthread_mutex_lock(&S.lock);
	CUresult r = CUDA_SUCCESS;
	const char *e;
	if (flags != 0) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	e = getenv("DOUBLE_NO_DEVICE");
	if (e && *e && strcmp(e, "0")) {
		r = CUDA_ERROR_NO_DEVICE;
		goto out;
	}
	if (S.inited)
		goto out;
	if (init_script_says_fail()) {
		r = CUDA_ERROR_NO_DEVICE;
		goto out;
	}
	init_slowly();
	e = getenv("DOUBLE_VERBOSE");
	S.verbose = e && *e && strcmp(e, "0");
	e = getenv("DOUBLE_ASYNC_FAULTS");
	S.async_faults = e && !strcmp(e, "1") &&
			 !(getenv("CUDA_LAUNCH_BLOCKING") && !strcmp(getenv("CUDA_LAUNCH_BLOCKING"), "1"));
	e = getenv("DOUBLE_ALLOC");
	S.gpu_alloc = e && !strcmp(e, "gpu");
	e = getenv("DOUBLE_NO_VMM");
	S.no_vmm = e && *e && strcmp(e, "0");
	S.page = (size_t)sysconf(_SC_PAGESIZE);
	e = getenv("DOUBLE_SEED");
	if (e && *e) {
		S.rng = strtoull(e, NULL, 0);
	} else {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		S.rng = ((uint64_t)ts.tv_sec << 32) ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 16);
	}
	S.inited = 1;
out:
	return leave(r);
}

CUresult cuDriverGetVersion(int *v)
{
	if (!v)
		return CUDA_ERROR_INVALID_VALUE;
	*v = 13000;
	return CUDA_SUCCESS;
}

/* DOUBLE_DEVICES=N (1 to 16): cuDeviceGetCount says N and every ordinal
 * below N is valid; any other ordinal is CUDA_ERROR_INVALID_DEVICE in every
 * call that takes one (cuDeviceGet, attributes, contexts, VMM locations).
 * Each ordinal has its own primary context (its own CUcontext) and its own
 * address range (dev_mmap), so device memory and pointers of one device's
 * process mean nothing in another's.  A process holds one device's context
 * at a time (retaining a second while the first lives is NOT_SUPPORTED:
 * gpureduce's workers each use one; peer access is not modelled): VMM
 * memory must be created on that device (cuMemCreate) and made accessible
 * to the device it was created on (cuMemSetAccess).
 * DOUBLE_DEVICE_LOG=FILE appends "ORDINAL PID" for every primary context
 * retained, so a test can see how work was spread. */
static int ndevices(void)
{
	const char *e = getenv("DOUBLE_DEVICES");
	long n = e && *e ? strtol(e, NULL, 10) : 1;
	return n < 1 ? 1 : n > 16 ? 16 : (int)n;
}

static int bad_device(CUdevice dev)
{
	return dev < 0 || dev >= ndevices();
}

CUresult cuDeviceGet(CUdevice *dev, int ordinal)
{
	CUresult r = enter_init();
	if (r)
		goto out;
	if (!dev)
		r = CUDA_ERROR_INVALID_VALUE;
	else if (bad_device(ordinal))
		r = CUDA_ERROR_INVALID_DEVICE;
	else
		*dev = ordinal;
out:
	return leave(r);
}

CUresult cuDeviceGetCount(int *count)
{
	CUresult r = enter_init();
	if (r)
		goto out;
	if (!count)
		r = CUDA_ERROR_INVALID_VALUE;
	else
		*count = ndevices();
out:
	return leave(r);
}

CUresult cuDeviceGetName(char *name, int len, CUdevice dev)
{
	static const char dev_name[] = "gpureduce CPU double";
	CUresult r = enter_init();
	if (r)
		goto out;
	if (!name || len <= 0) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	if (bad_device(dev)) {
		r = CUDA_ERROR_INVALID_DEVICE;
		goto out;
	}
	snprintf(name, (size_t)len, "%s", dev_name);
out:
	return leave(r);
}

CUresult cuDeviceTotalMem(size_t *bytes, CUdevice dev)
{
	CUresult r = enter_init();
	if (r)
		goto out;
	if (!bytes)
		r = CUDA_ERROR_INVALID_VALUE;
	else if (bad_device(dev))
		r = CUDA_ERROR_INVALID_DEVICE;
	else
		*bytes = TOTAL_MEM;
out:
	return leave(r);
}

/* The value of one device attribute: an H100/H200-like device with 4 SMs. */
static int attribute_value(CUdevice_attribute a)
{
	switch (a) {
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: return 9;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: return 0;
	case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: return 4;
	case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: return 1024;
	case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X: return 1024;
	case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y: return 1024;
	case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z: return 64;
	case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X: return 2147483647;
	case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y: return 65535;
	case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z: return 65535;
	case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK: return MAX_SMEM;
	case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: return MAX_SMEM_OPTIN;
	case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: return 233472;
	case CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY: return 65536;
	case CU_DEVICE_ATTRIBUTE_WARP_SIZE: return 32;
	case CU_DEVICE_ATTRIBUTE_MAX_PITCH: return 2147483647;
	case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK: return 65536;
	case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR: return 65536;
	case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: return 1980000;
	case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE: return 2619000;
	case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH: return 6144;
	case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: return 52428800;
	case CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT: return 512;
	case CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT: return 32;
	case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: return 2048;
	case CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR: return 32;
	case CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT: return 1;
	case CU_DEVICE_ATTRIBUTE_GPU_OVERLAP: return 1;
	case CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS: return 1;
	case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING: return 1;
	case CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY: return 1;
	case CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH: return 1;
	case CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED: return 1;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_MODE: return CU_COMPUTEMODE_DEFAULT;
	case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID: return 1;
	default: return 0;      /* unsupported features, zero counts */
	}
}

CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev)
{
	CUresult r = enter_init();
	if (r)
		goto out;
	if (!pi || (int)attrib <= 0 || attrib >= CU_DEVICE_ATTRIBUTE_MAX)
		r = CUDA_ERROR_INVALID_VALUE;
	else if (bad_device(dev))
		r = CUDA_ERROR_INVALID_DEVICE;
	else
		*pi = attribute_value(attrib);
out:
	return leave(r);
}

CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
	CUresult r = enter_init();
	if (r)
		goto out;
	if (!pctx) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	if (bad_device(dev)) {
		r = CUDA_ERROR_INVALID_DEVICE;
		goto out;
	}
	if (S.ctx_alive && S.ctx_dev != dev) {
		vlog("device %d's context retained while device %d's lives: "
		     "one device per process is modelled\n", (int)dev, (int)S.ctx_dev);
		r = CUDA_ERROR_NOT_SUPPORTED;
		goto out;
	}
	S.ctx_refs++;
	S.ctx_alive = 1;
	primary[dev].device = dev;
	*pctx = &primary[dev];
	S.ctx_dev = dev;
	env_log("DOUBLE_DEVICE_LOG", "%d %ld\n", (int)dev, (long)getpid());
out:
	return leave(r);
}

CUresult cuDevicePrimaryCtxRelease(CUdevice dev)
{
	CUresult r = enter_init();
	if (r)
		goto out;
	if (bad_device(dev)) {
		r = CUDA_ERROR_INVALID_DEVICE;
		goto out;
	}
	if (S.ctx_refs == 0 || S.ctx_dev != dev) {
		r = CUDA_ERROR_INVALID_CONTEXT;   /* not retained on this device */
		goto out;
	}
	if (--S.ctx_refs == 0) {
		context_destroy();
		S.ctx_alive = 0;
		teardown_slowly();
	}
out:
	return leave(r);
}

CUresult cuDevicePrimaryCtxReset(CUdevice dev)
{
	CUresult r = enter_init();
	if (r)
		goto out;
	if (bad_device(dev)) {
		r = CUDA_ERROR_INVALID_DEVICE;
		goto out;
	}
	if (!S.ctx_alive || S.ctx_dev != dev)
		goto out;                         /* nothing alive on this device */
	context_destroy();
	S.ctx_refs = 0;
	S.ctx_alive = 0;
out:
	return leave(r);
}

/* 1 for one of the devices' primary contexts (live or not: a context of
 * a device without a live context fails later, in enter_ctx). */
static int is_primary(CUcontext ctx)
{
	for (int i = 0; i < MAX_DEVICES; i++)
		if (ctx == &primary[i])
			return 1;
	return 0;
}

CUresult cuCtxSetCurrent(CUcontext ctx)
{
	CUresult r = enter_init();
	if (r)
		goto out;
	if (ctx && !is_primary(ctx))
		r = CUDA_ERROR_INVALID_CONTEXT;
	else
		current = ctx;
out:
	return leave(r);
}

CUresult cuCtxGetCurrent(CUcontext *pctx)
{
	CUresult r = enter_init();
	if (r)
		goto out;
	if (!pctx)
		r = CUDA_ERROR_INVALID_VALUE;
	else
		*pctx = current;
out:
	return leave(r);
}

CUresult cuCtxPushCurrent(CUcontext ctx)
{
	CUresult r = enter_init();
	if (r)
		goto out;
	if (!is_primary(ctx))
		r = CUDA_ERROR_INVALID_CONTEXT;
	else if (ctx_depth == (int)(sizeof(ctx_stack) / sizeof(ctx_stack[0])))
		r = CUDA_ERROR_OUT_OF_MEMORY;
	else {
		ctx_stack[ctx_depth++] = current;
		current = ctx;
	}
out:
	return leave(r);
}

CUresult cuCtxPopCurrent(CUcontext *pctx)
{
	CUresult r = enter_init();
	if (r)
		goto out;
	if (!current) {
		r = CUDA_ERROR_INVALID_CONTEXT;
		goto out;
	}
	if (pctx)
		*pctx = current;
	current = ctx_depth ? ctx_stack[--ctx_depth] : NULL;
out:
	return leave(r);
}

CUresult cuCtxGetDevice(CUdevice *dev)
{
	CUresult r = enter_init();
	if (r)
		goto out;
	if (!S.ctx_alive || current != &primary[S.ctx_dev])
		r = CUDA_ERROR_INVALID_CONTEXT;
	else if (!dev)
		r = CUDA_ERROR_INVALID_VALUE;
	else
		*dev = S.ctx_dev;
out:
	return leave(r);
}

CUresult cuCtxSynchronize(void)
{
	return leave(enter_ctx());
}

CUresult cuStreamCreate(CUstream *ph, unsigned int flags)
{
	CUresult r = enter_ctx();
	struct CUstream_st *s;
	if (r)
		goto out;
	if (!ph || (flags & ~1u)) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		r = CUDA_ERROR_OUT_OF_MEMORY;
		goto out;
	}
	s->live = 1;
	s->next = S.streams;
	S.streams = s;
	*ph = s;
out:
	return leave(r);
}

CUresult cuStreamDestroy(CUstream h)
{
	CUresult r = enter_ctx();
	if (r)
		goto out;
	if (!h || h == CU_STREAM_LEGACY || h == CU_STREAM_PER_THREAD || !stream_ok(h))
		r = CUDA_ERROR_INVALID_HANDLE;
	else
		h->live = 0;        /* kept: a later use is detected, not a use after free */
out:
	return leave(r);
}

CUresult cuStreamSynchronize(CUstream h)
{
	CUresult r = enter_ctx();
	if (r == CUDA_SUCCESS && !stream_ok(h))
		r = CUDA_ERROR_INVALID_HANDLE;
	return leave(r);
}

CUresult cuStreamQuery(CUstream h)
{
	return cuStreamSynchronize(h);
}

/* Nothing is ever captured into a graph here (the capture library asks at
 * every launch). */
CUresult cuStreamIsCapturing(CUstream h, CUstreamCaptureStatus *st)
{
	CUresult r = enter_ctx();
	if (!r && !st)
		r = CUDA_ERROR_INVALID_VALUE;
	if (!r)
		*st = CU_STREAM_CAPTURE_STATUS_NONE;
	return leave(r);
}

/* The calling thread's capture mode, kept and swapped (nothing captures here). */
CUresult cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *mode)
{
	static __thread CUstreamCaptureMode cur = CU_STREAM_CAPTURE_MODE_GLOBAL;
	CUstreamCaptureMode m;
	if (!mode)
		return CUDA_ERROR_INVALID_VALUE;
	m = cur;
	cur = *mode;
	*mode = m;
	return CUDA_SUCCESS;
}

/* ---- memory -------------------------------------------------------------- */

CUresult cuMemAlloc(CUdeviceptr *dptr, size_t size)
{
	CUresult r = enter_ctx();
	struct region *reg;
	if (r)
		goto out;
	if (!dptr || !size) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	r = buffer_new(R_ALLOC, size, &reg);
	if (r == CUDA_SUCCESS)
		*dptr = (CUdeviceptr)reg->user;
out:
	return leave(r);
}

/* The live region of kind that starts at p (a free or an IPC call names
 * its start), or NULL. */
static struct region *region_at(int kind, CUdeviceptr p)
{
	for (size_t i = 0; i < S.nregions; i++) {
		struct region *reg = S.regions[i];
		if (reg->live && reg->kind == kind && reg->user == (uintptr_t)p)
			return reg;
	}
	return NULL;
}

CUresult cuMemFree(CUdeviceptr p)
{
	CUresult r = enter_ctx();
	struct region *reg;
	if (r || p == 0)
		goto out;
	r = CUDA_ERROR_INVALID_VALUE;
	if ((reg = region_at(R_ALLOC, p))) {
		buffer_free(reg);
		r = CUDA_SUCCESS;
	}
out:
	return leave(r);
}

CUresult cuMemGetInfo(size_t *free_bytes, size_t *total)
{
	CUresult r = enter_ctx();
	if (r)
		goto out;
	if (!free_bytes || !total) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	*free_bytes = TOTAL_MEM - S.allocated;
	*total = TOTAL_MEM;
out:
	return leave(r);
}

CUresult cuMemGetAddressRange(CUdeviceptr *pbase, size_t *psize, CUdeviceptr dp)
{
	CUresult r = enter_ctx();
	uintptr_t p = (uintptr_t)dp;
	if (r)
		goto out;
	r = CUDA_ERROR_NOT_FOUND;
	for (size_t i = 0; i < S.nregions; i++) {
		struct region *reg = S.regions[i];
		uintptr_t base;
		size_t size;
		if (!reg->live || p < reg->user || p - reg->user >= reg->size)
			continue;
		if (reg->kind == R_RESERVE) {
			struct mapping *m = find_mapping(reg, p);
			if (!m)
				break;
			base = m->start;
			size = m->size;
		} else {
			base = reg->user;
			size = reg->size;
		}
		if (pbase)
			*pbase = (CUdeviceptr)base;
		if (psize)
			*psize = size;
		r = CUDA_SUCCESS;
		break;
	}
out:
	return leave(r);
}

/* ---- IPC: a buffer another process opens --------------------------------
 * cuIpcGetMemHandle moves the buffer's pages (guards excluded) into a POSIX
 * shared-memory object, mapped over them at the same address, and names it
 * in the handle; cuIpcOpenMemHandle in another process maps that object
 * between guards of its own (R_IPC), so both see every write, as two
 * processes on one GPU do.  The object is unlinked when the exporter frees
 * the buffer.  Opening a handle in the process that made it is refused
 * (CUDA_ERROR_INVALID_CONTEXT), as by the driver. */
struct ipc_handle {
	char magic[8];              /* "DBLIPC01" */
	uint64_t data, off, size;   /* pages shared; the buffer's offset in them; its size */
	char name[32];
};

CUresult cuIpcGetMemHandle(CUipcMemHandle *h, CUdeviceptr dp)
{
	CUresult r = enter_ctx();
	struct region *reg = NULL;
	struct ipc_handle ih;
	size_t data;
	int fd = -1;

	if (r)
		goto out;
	r = CUDA_ERROR_INVALID_VALUE;
	reg = region_at(R_ALLOC, dp);
	if (!h || !reg)
		goto out;
	data = reg->maplen - 2 * GUARD;
	if (!reg->shm[0]) {
		static unsigned seq;
		void *m;
		char name[32];
		snprintf(name, sizeof(name), "/grdbl-%d-%u", (int)getpid(), seq++);
		fd = shm_open(name, O_CREAT | O_EXCL | O_RDWR, 0600);
		if (fd < 0 || ftruncate(fd, (off_t)data) ||
		    pwrite(fd, (void *)(reg->map + GUARD), data, 0) != (ssize_t)data) {
			if (fd >= 0)
				shm_unlink(name);
			r = CUDA_ERROR_OUT_OF_MEMORY;
			goto out;
		}
		m = mmap((void *)(reg->map + GUARD), data, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0);
		if (m == MAP_FAILED) {
			shm_unlink(name);
			r = CUDA_ERROR_OUT_OF_MEMORY;
			goto out;
		}
		snprintf(reg->shm, sizeof(reg->shm), "%s", name);
	}
	memset(&ih, 0, sizeof(ih));
	memcpy(ih.magic, "DBLIPC01", 8);
	ih.data = data;
	ih.off = reg->user - (reg->map + GUARD);
	ih.size = reg->size;
	snprintf(ih.name, sizeof(ih.name), "%s", reg->shm);
	memset(h, 0, sizeof(*h));
	memcpy(h->reserved, &ih, sizeof(ih));
	r = CUDA_SUCCESS;
out:
	if (fd >= 0)
		close(fd);
	return leave(r);
}

CUresult cuIpcOpenMemHandle(CUdeviceptr *pdptr, CUipcMemHandle h, unsigned int flags)
{
	CUresult r = enter_ctx();
	struct ipc_handle ih;
	struct region *reg;
	char mine[32];
	void *m = MAP_FAILED;
	int fd = -1;

	(void)flags;
	if (r)
		goto out;
	memcpy(&ih, h.reserved, sizeof(ih));
	ih.name[sizeof(ih.name) - 1] = 0;
	snprintf(mine, sizeof(mine), "/grdbl-%d-", (int)getpid());
	r = CUDA_ERROR_INVALID_VALUE;
	if (!pdptr || memcmp(ih.magic, "DBLIPC01", 8) || !ih.data || ih.data % S.page ||
	    ih.off > ih.data || ih.size > ih.data - ih.off)
		goto out;
	if (!strncmp(ih.name, mine, strlen(mine))) {
		r = CUDA_ERROR_INVALID_CONTEXT;
		goto out;
	}
	if ((fd = shm_open(ih.name, O_RDWR, 0)) < 0)
		goto out;   /* freed by its owner, or never made */
	m = dev_mmap(GUARD + ih.data + GUARD);
	r = CUDA_ERROR_OUT_OF_MEMORY;
	if (m == MAP_FAILED)
		goto out;
	if (mmap((char *)m + GUARD, ih.data, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED)
		goto out;
	reg = region_add(R_IPC, (uintptr_t)m + GUARD + ih.off, ih.size, (uintptr_t)m, GUARD + ih.data + GUARD);
	if (!reg)
		goto out;
	*pdptr = (CUdeviceptr)reg->user;
	m = MAP_FAILED;
	r = CUDA_SUCCESS;
out:
	if (m != MAP_FAILED)
		munmap(m, GUARD + ih.data + GUARD);
	if (fd >= 0)
		close(fd);
	return leave(r);
}

CUresult cuIpcCloseMemHandle(CUdeviceptr dp)
{
	CUresult r = enter_ctx();
	struct region *reg;
	if (r)
		goto out;
	r = CUDA_ERROR_INVALID_VALUE;
	if ((reg = region_at(R_IPC, dp))) {
		buffer_free(reg);
		r = CUDA_SUCCESS;
	}
out:
	return leave(r);
}

static CUresult copy(void *dst, const void *src, size_t n, CUdeviceptr ddst, CUdeviceptr dsrc,
		     int dst_dev, int src_dev)
{
	CUresult r = enter_ctx();
	if (r || n == 0)
		goto out;
	if (!dst || !src || (dst_dev && !range_ok(ddst, n, 1)) || (src_dev && !range_ok(dsrc, n, 0))) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	memmove(dst, src, n);
out:
	return leave(r);
}

CUresult cuMemcpyHtoD(CUdeviceptr dst, const void *src, size_t n)
{
	return copy((void *)(uintptr_t)dst, src, n, dst, 0, 1, 0);
}

/* Page-locked host memory: plain host memory here.  DOUBLE_NO_PINNED=1
 * refuses it (out of memory), as a driver may for a large request. */
CUresult cuMemHostAlloc(void **pp, size_t n, unsigned int flags)
{
	(void)flags;
	if (!pp)
		return CUDA_ERROR_INVALID_VALUE;
	*pp = NULL;
	if (getenv("DOUBLE_NO_PINNED"))
		return CUDA_ERROR_OUT_OF_MEMORY;
	*pp = malloc(n ? n : 1);
	return *pp ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

/* Under unified addressing pinned memory has one address for host and
 * device: here it is plain host memory, which the double's kernels read
 * like any mapped memory. */
CUresult cuMemHostGetDevicePointer(CUdeviceptr *pdptr, void *p, unsigned int flags)
{
	if (!pdptr || !p || flags)
		return CUDA_ERROR_INVALID_VALUE;
	*pdptr = (CUdeviceptr)(uintptr_t)p;
	return CUDA_SUCCESS;
}

CUresult cuMemFreeHost(void *p)
{
	free(p);
	return CUDA_SUCCESS;
}

CUresult cuMemcpyDtoH(void *dst, CUdeviceptr src, size_t n)
{
	return copy(dst, (const void *)(uintptr_t)src, n, 0, src, 0, 1);
}

CUresult cuMemcpyDtoD(CUdeviceptr dst, CUdeviceptr src, size_t n)
{
	return copy((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, n, dst, src, 1, 1);
}

/* cuMemAllocHost (replay stages read-backs in it): cuMemHostAlloc's
 * memory, DOUBLE_NO_PINNED included; freed by cuMemFreeHost above. */
CUresult cuMemAllocHost(void **pp, size_t n)
{
	return cuMemHostAlloc(pp, n, 0);
}

CUresult cuMemcpyHtoDAsync(CUdeviceptr dst, const void *src, size_t n, CUstream s)
{
	return cuMemcpyHtoD(dst, src, n);
}

CUresult cuMemcpyDtoHAsync(void *dst, CUdeviceptr src, size_t n, CUstream s)
{
	return cuMemcpyDtoH(dst, src, n);
}

/* The memsets: `height` rows of `width` elements of `esz` bytes, `pitch`
 * bytes apart (1 row for the 1D forms). */
static CUresult memset2d(CUdeviceptr dp, size_t pitch, unsigned value, size_t esz, size_t width,
			 size_t height)
{
	CUresult r = enter_ctx();
	uintptr_t p = (uintptr_t)dp;
	size_t rowbytes, span;
	if (r || width == 0 || height == 0)
		goto out;
	r = CUDA_ERROR_INVALID_VALUE;
	if (p % esz || width > SIZE_MAX / esz)
		goto out;
	rowbytes = width * esz;
	if (height > 1 && (pitch < rowbytes || height - 1 > (SIZE_MAX - rowbytes) / pitch))
		goto out;
	span = (height - 1) * pitch + rowbytes;
	if (!range_ok(dp, span, 1))
		goto out;
	for (size_t y = 0; y < height; y++) {
		unsigned char *row = (unsigned char *)(p + y * pitch);
		if (esz == 1) {
			memset(row, (int)value, rowbytes);
		} else if (esz == 2) {
			uint16_t v = (uint16_t)value;
			for (size_t x = 0; x < width; x++)
				memcpy(row + 2 * x, &v, 2);
		} else {
			uint32_t v = value;
			for (size_t x = 0; x < width; x++)
				memcpy(row + 4 * x, &v, 4);
		}
	}
	r = CUDA_SUCCESS;
out:
	return leave(r);
}

CUresult cuMemsetD8(CUdeviceptr p, unsigned char v, size_t n) { return memset2d(p, 0, v, 1, n, 1); }
CUresult cuMemsetD16(CUdeviceptr p, unsigned short v, size_t n) { return memset2d(p, 0, v, 2, n, 1); }
CUresult cuMemsetD32(CUdeviceptr p, unsigned int v, size_t n) { return memset2d(p, 0, v, 4, n, 1); }

CUresult cuMemsetD2D8(CUdeviceptr p, size_t pitch, unsigned char v, size_t w, size_t h)
{
	return memset2d(p, pitch, v, 1, w, h);
}

CUresult cuMemsetD2D16(CUdeviceptr p, size_t pitch, unsigned short v, size_t w, size_t h)
{
	return memset2d(p, pitch, v, 2, w, h);
}

CUresult cuMemsetD2D32(CUdeviceptr p, size_t pitch, unsigned int v, size_t w, size_t h)
{
	return memset2d(p, pitch, v, 4, w, h);
}

CUresult cuMemsetD8Async(CUdeviceptr p, unsigned char v, size_t n, CUstream s)
{
	return memset2d(p, 0, v, 1, n, 1);
}

CUresult cuMemsetD32Async(CUdeviceptr p, unsigned int v, size_t n, CUstream s)
{
	return memset2d(p, 0, v, 4, n, 1);
}

/* ---- virtual memory management ------------------------------------------ */

/* A VMM location: a valid ordinal, and the live context's device when one
 * lives (one device per process; no peer memory). */
static int location_ok(int id)
{
	return !bad_device(id) && (!S.ctx_alive || id == (int)S.ctx_dev);
}

static CUresult check_prop(const CUmemAllocationProp *prop)
{
	if (!prop || prop->type != CU_MEM_ALLOCATION_TYPE_PINNED ||
	    prop->location.type != CU_MEM_LOCATION_TYPE_DEVICE)
		return CUDA_ERROR_INVALID_VALUE;
	return location_ok(prop->location.id) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

CUresult cuMemGetAllocationGranularity(size_t *gran, const CUmemAllocationProp *prop,
				       CUmemAllocationGranularity_flags option)
{
	CUresult r = enter_init();
	if (r)
		goto out;
	if (!gran || (option != CU_MEM_ALLOC_GRANULARITY_MINIMUM &&
		      option != CU_MEM_ALLOC_GRANULARITY_RECOMMENDED)) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	r = check_prop(prop);
	if (r == CUDA_SUCCESS)
		*gran = GRAN;
out:
	return leave(r);
}

CUresult cuMemAddressReserve(CUdeviceptr *ptr, size_t size, size_t alignment, CUdeviceptr addr,
			     unsigned long long flags)
{
	CUresult r = enter_dev();
	size_t align, len;
	uintptr_t m, start;
	void *mm;
	if (r)
		goto out;
	if (S.no_vmm) {
		r = CUDA_ERROR_NOT_SUPPORTED;
		goto out;
	}
	r = CUDA_ERROR_INVALID_VALUE;
	if (!ptr || !size || size % GRAN || flags || (alignment & (alignment - 1)))
		goto out;
	align = alignment > GRAN ? alignment : GRAN;
	if (size > SIZE_MAX - align)
		goto out;
	len = size + align;
	mm = dev_mmap(len);
	if (mm == MAP_FAILED) {
		r = CUDA_ERROR_OUT_OF_MEMORY;
		goto out;
	}
	m = (uintptr_t)mm;
	start = (m + align - 1) & ~(uintptr_t)(align - 1);
	if (start > m)
		munmap(mm, start - m);
	if (m + len > start + size)
		munmap((void *)(start + size), m + len - (start + size));
	if (!region_add(R_RESERVE, start, size, start, size)) {
		munmap((void *)start, size);
		r = CUDA_ERROR_OUT_OF_MEMORY;
		goto out;
	}
	*ptr = (CUdeviceptr)start;
	r = CUDA_SUCCESS;
out:
	return leave(r);
}

CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size)
{
	CUresult r = enter_dev();
	if (r)
		goto out;
	r = CUDA_ERROR_INVALID_VALUE;
	for (size_t i = S.nregions; i-- > 0;) {   /* newest first, as find_reserve */
		struct region *reg = S.regions[i];
		if (!reg->live || reg->kind != R_RESERVE || reg->user != (uintptr_t)ptr)
			continue;
		if (reg->size != size)
			break;
		for (size_t k = 0; k < reg->nmaps; k++)
			reg->maps[k].h->mapped--;
		free(reg->maps);
		reg->maps = NULL;
		reg->nmaps = reg->amaps = 0;
		munmap((void *)reg->user, reg->size);
		reg->live = 0;
		r = CUDA_SUCCESS;
		break;
	}
out:
	return leave(r);
}

CUresult cuMemCreate(CUmemGenericAllocationHandle *handle, size_t size, const CUmemAllocationProp *prop,
		     unsigned long long flags)
{
	CUresult r = enter_dev();
	struct vmm_handle *h;
	if (r)
		goto out;
	if (!handle || !size || size % GRAN || flags) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	r = check_prop(prop);
	if (r)
		goto out;
	if (size > TOTAL_MEM - S.allocated) {
		r = CUDA_ERROR_OUT_OF_MEMORY;
		goto out;
	}
	if (S.nhandles == S.ahandles) {
		size_t n = S.ahandles ? 2 * S.ahandles : 64;
		struct vmm_handle **p = realloc(S.handles, n * sizeof(*p));
		if (!p) {
			r = CUDA_ERROR_OUT_OF_MEMORY;
			goto out;
		}
		S.handles = p;
		S.ahandles = n;
	}
	h = calloc(1, sizeof(*h));
	if (!h) {
		r = CUDA_ERROR_OUT_OF_MEMORY;
		goto out;
	}
	h->live = 1;
	h->device = prop->location.id;
	h->size = size;
	S.handles[S.nhandles++] = h;
	S.allocated += size;
	*handle = (CUmemGenericAllocationHandle)(uintptr_t)h;
out:
	return leave(r);
}

CUresult cuMemRelease(CUmemGenericAllocationHandle handle)
{
	CUresult r = enter_dev();
	struct vmm_handle *h;
	if (r)
		goto out;
	h = vmm_handle_ok(handle);
	if (!h) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	h->live = 0;        /* mappings keep their memory until unmapped */
	S.allocated -= h->size;
out:
	return leave(r);
}

CUresult cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
		  unsigned long long flags)
{
	CUresult r = enter_dev();
	uintptr_t p = (uintptr_t)ptr;
	struct vmm_handle *h;
	struct region *reg;
	if (r)
		goto out;
	r = CUDA_ERROR_INVALID_VALUE;
	h = vmm_handle_ok(handle);
	if (!h || flags || !size || size % GRAN || offset % GRAN || p % GRAN ||
	    offset > h->size || size > h->size - offset)
		goto out;
	reg = find_reserve(p, size);
	if (!reg)
		goto out;
	for (size_t i = 0; i < reg->nmaps; i++) {
		struct mapping *m = &reg->maps[i];
		if (p < m->start + m->size && m->start < p + size)
			goto out;           /* already mapped */
	}
	if (h->mapped) {
		r = CUDA_ERROR_NOT_SUPPORTED;   /* aliasing mappings are not modelled */
		goto out;
	}
	if (reg->nmaps == reg->amaps) {
		size_t n = reg->amaps ? 2 * reg->amaps : 4;
		struct mapping *mm = realloc(reg->maps, n * sizeof(*mm));
		if (!mm) {
			r = CUDA_ERROR_OUT_OF_MEMORY;
			goto out;
		}
		reg->maps = mm;
		reg->amaps = n;
	}
	if (vmm_drop(p, size)) {
		r = CUDA_ERROR_OUT_OF_MEMORY;
		goto out;
	}
	reg->maps[reg->nmaps++] = (struct mapping){ p, size, h, PROT_NONE };
	h->mapped++;
	r = CUDA_SUCCESS;
out:
	return leave(r);
}

CUresult cuMemUnmap(CUdeviceptr ptr, size_t size)
{
	CUresult r = enter_dev();
	uintptr_t p = (uintptr_t)ptr;
	struct region *reg;
	if (r)
		goto out;
	r = CUDA_ERROR_INVALID_VALUE;
	reg = size ? find_reserve(p, size) : NULL;
	if (!reg || !vmm_covered(reg, p, size, 0, 1))
		goto out;
	for (size_t i = 0; i < reg->nmaps;) {
		struct mapping *m = &reg->maps[i];
		if (m->start >= p && m->start < p + size) {
			m->h->mapped--;
			*m = reg->maps[--reg->nmaps];
		} else {
			i++;
		}
	}
	vmm_drop(p, size);
	r = CUDA_SUCCESS;
out:
	return leave(r);
}

/* The access a mapping at ptr has (capture asks before reading one back
 * at a checkpoint). */
CUresult cuMemGetAccess(unsigned long long *flags, const CUmemLocation *location, CUdeviceptr ptr)
{
	CUresult r = enter_dev();
	struct region *reg;
	struct mapping *m;
	if (r)
		goto out;
	r = CUDA_ERROR_INVALID_VALUE;
	if (!flags || !location || location->type != CU_MEM_LOCATION_TYPE_DEVICE)
		goto out;
	if (!(reg = find_reserve((uintptr_t)ptr, 1)) || !(m = find_mapping(reg, (uintptr_t)ptr)))
		goto out;
	*flags = m->prot == (PROT_READ | PROT_WRITE) ? CU_MEM_ACCESS_FLAGS_PROT_READWRITE :
		 m->prot == PROT_READ ? CU_MEM_ACCESS_FLAGS_PROT_READ : CU_MEM_ACCESS_FLAGS_PROT_NONE;
	r = CUDA_SUCCESS;
out:
	return leave(r);
}

CUresult cuMemSetAccess(CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc, size_t count)
{
	CUresult r = enter_dev();
	uintptr_t p = (uintptr_t)ptr;
	struct region *reg;
	int prot = -1;
	if (r)
		goto out;
	r = CUDA_ERROR_INVALID_VALUE;
	if (!desc || !count || !size)
		goto out;
	for (size_t i = 0; i < count; i++) {
		if (desc[i].location.type != CU_MEM_LOCATION_TYPE_DEVICE)
			goto out;
		if (!location_ok(desc[i].location.id)) {
			r = CUDA_ERROR_INVALID_DEVICE;
			goto out;
		}
		switch (desc[i].flags) {
		case CU_MEM_ACCESS_FLAGS_PROT_NONE: prot = PROT_NONE; break;
		case CU_MEM_ACCESS_FLAGS_PROT_READ: prot = PROT_READ; break;
		case CU_MEM_ACCESS_FLAGS_PROT_READWRITE: prot = PROT_READ | PROT_WRITE; break;
		default: goto out;
		}
	}
	reg = find_reserve(p, size);
	if (!reg || !vmm_covered(reg, p, size, 0, 1))
		goto out;
	/* access for another device than the memory's own would be peer
	 * access, which is not modelled */
	for (size_t i = 0; i < reg->nmaps; i++)
		for (size_t k = 0; k < count; k++)
			if (reg->maps[i].start >= p && reg->maps[i].start < p + size &&
			    reg->maps[i].h->device != desc[k].location.id) {
				r = CUDA_ERROR_INVALID_DEVICE;
				goto out;
			}
	if (mprotect((void *)p, size, prot)) {
		r = CUDA_ERROR_OUT_OF_MEMORY;
		goto out;
	}
	for (size_t i = 0; i < reg->nmaps; i++)
		if (reg->maps[i].start >= p && reg->maps[i].start < p + size)
			reg->maps[i].prot = prot;
	r = CUDA_SUCCESS;
out:
	return leave(r);
}

/* ---- modules ------------------------------------------------------------- */

/* Copy the image at `image` (size unknown: read from its headers) under the
 * fault guard.  0, or -1 with *why set. */
static int image_copy(const void *image, unsigned char **out, size_t *out_len, const char **why)
{
	unsigned char ehdr[64], *shdrs = NULL, *img = NULL;
	uint64_t shoff, len;
	unsigned shnum;
	int ret = -1;
	if (safe_read(ehdr, image, 4)) {
		*why = "image not readable";
		goto out;
	}
	if (memcmp(ehdr, "\177ELF", 4)) {
		*why = "not an ELF image (bad magic); the double loads cubins only";
		goto out;
	}
	if (safe_read(ehdr, image, sizeof(ehdr))) {
		*why = "truncated ELF header";
		goto out;
	}
	if (dbl_image_header(ehdr, sizeof(ehdr), &shoff, &shnum, why))
		goto out;
	shdrs = malloc((size_t)shnum * 64);
	if (!shdrs) {
		*why = "out of memory";
		goto out;
	}
	if (safe_read(shdrs, (const unsigned char *)image + shoff, (size_t)shnum * 64)) {
		*why = "section headers not readable (truncated image?)";
		goto out;
	}
	if (dbl_image_extent(shdrs, shnum, shoff, &len, why))
		goto out;
	img = malloc(len);
	if (!img) {
		*why = "out of memory";
		goto out;
	}
	if (safe_read(img, image, len)) {
		*why = "image shorter than its headers say (truncated?)";
		goto out;
	}
	*out = img;
	*out_len = len;
	img = NULL;
	ret = 0;
out:
	free(shdrs);
	free(img);
	return ret;
}

static int kernel_index(const char *name)
{
	for (size_t i = 0; i < dbl_nkernels; i++)
		if (!strcmp(dbl_kernels[i].name, name))
			return (int)i;
	return -1;
}

/* dbl_image_symbols callback: note kernels, create globals. */
static int add_symbol(void *ctx, const struct dbl_image_sym *sym)
{
	struct CUmod_st *m = ctx;
	struct region *reg;
	if (sym->is_func) {
		for (size_t k = 0; k < dbl_nkernels; k++)
			if (!strcmp(dbl_kernels[k].image_sym ? dbl_kernels[k].image_sym : dbl_kernels[k].name,
				    sym->name))
				m->has[k] = 1;
		return 0;
	}
	if (sym->size == 0 || sym->size > ((size_t)1 << 30))
		return 0;
	if (m->nglobals == m->aglobals) {
		size_t n = m->aglobals ? 2 * m->aglobals : 8;
		struct dbl_global *g = realloc(m->globals, n * sizeof(*g));
		if (!g)
			return -1;
		m->globals = g;
		m->aglobals = n;
	}
	if (buffer_new(R_GLOBAL, sym->size, &reg))
		return -1;
	m->globals[m->nglobals].name = strdup(sym->name);
	if (!m->globals[m->nglobals].name) {
		buffer_free(reg);
		return -1;
	}
	m->globals[m->nglobals++].r = reg;
	if (sym->data)
		memcpy((void *)reg->user, sym->data, sym->size);
	return 0;
}

CUresult cuModuleLoadData(CUmodule *module, const void *image)
{
	CUresult r = enter_ctx();
	struct CUmod_st *m = NULL;
	const char *why = NULL;
	if (r)
		goto out;
	if (!module || !image) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	m = calloc(1, sizeof(*m));
	if (!m || !(m->has = calloc(dbl_nkernels, 1)) ||
	    !(m->funcs = calloc(dbl_nkernels, sizeof(*m->funcs)))) {
		r = CUDA_ERROR_OUT_OF_MEMORY;
		goto out;
	}
	if (image_copy(image, &m->image, &m->image_len, &why) ||
	    dbl_image_symbols(m->image, m->image_len, add_symbol, m, &why)) {
		vlog("cuModuleLoadData: %s", why);
		r = CUDA_ERROR_INVALID_IMAGE;
		goto out;
	}
	m->live = 1;
	m->next = S.modules;
	S.modules = m;
	*module = m;
	m = NULL;
out:
	if (m) {
		module_unload(m);
		for (size_t i = 0; i < m->nglobals; i++)
			free(m->globals[i].name);
		free(m->globals);
		free(m->funcs);
		free(m->has);
		free(m);
	}
	return leave(r);
}

CUresult cuModuleLoadDataEx(CUmodule *module, const void *image, unsigned int n, CUjit_option *options,
			    void **values)
{
	return cuModuleLoadData(module, image);
}

CUresult cuModuleLoad(CUmodule *module, const char *fname)
{
	CUresult r;
	unsigned char *buf = NULL;
	struct stat st;
	int fd = fname ? open(fname, O_RDONLY | O_CLOEXEC) : -1;
	if (fd < 0 || fstat(fd, &st) || st.st_size <= 0) {
		r = fname ? CUDA_ERROR_FILE_NOT_FOUND : CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	/* a zeroed tail keeps a lying header inside our buffer's guard */
	buf = calloc(1, (size_t)st.st_size + 4096);
	if (!buf) {
		r = CUDA_ERROR_OUT_OF_MEMORY;
		goto out;
	}
	for (size_t got = 0; got < (size_t)st.st_size;) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);
		if (n <= 0) {
			if (n < 0 && errno == EINTR)
				continue;
			r = CUDA_ERROR_FILE_NOT_FOUND;
			goto out;
		}
		got += (size_t)n;
	}
	r = cuModuleLoadData(module, buf);
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	return r;
}

CUresult cuModuleUnload(CUmodule hmod)
{
	CUresult r = enter_ctx();
	struct CUmod_st *m;
	if (r)
		goto out;
	m = module_ok(hmod);
	if (!m)
		r = CUDA_ERROR_INVALID_HANDLE;
	else
		module_unload(m);
out:
	return leave(r);
}

CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name)
{
	CUresult r = enter_ctx();
	struct CUmod_st *m;
	struct CUfunc_st *f;
	int k;
	if (r)
		goto out;
	if (!hfunc || !name) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	m = module_ok(hmod);
	if (!m) {
		r = CUDA_ERROR_INVALID_HANDLE;
		goto out;
	}
	k = kernel_index(name);
	/* a variant the image holds (its image_sym) comes before the plain entry */
	for (size_t v = 0; k >= 0 && v < dbl_nkernels; v++)
		if (dbl_kernels[v].image_sym && m->has[v] && !strcmp(dbl_kernels[v].name, name))
			k = (int)v;
	if (k < 0 || !m->has[k]) {
		vlog("cuModuleGetFunction: %s: %s", name,
		     k < 0 ? "not in the double's kernel registry" : "not in this module's image");
		r = CUDA_ERROR_NOT_FOUND;
		goto out;
	}
	f = m->funcs[k];
	if (!f) {
		f = calloc(1, sizeof(*f));
		if (!f) {
			r = CUDA_ERROR_OUT_OF_MEMORY;
			goto out;
		}
		f->mod = m;
		f->k = &dbl_kernels[k];
		f->carveout = -1;
		f->next_all = S.functions;
		S.functions = f;
		m->funcs[k] = f;
	}
	*hfunc = f;
out:
	return leave(r);
}

/* The module a function was got from (capture asks it for the module's
 * variables, capture/globals.c). */
CUresult cuFuncGetModule(CUmodule *hmod, CUfunction hfunc)
{
	CUresult r = enter_init();
	struct CUfunc_st *f;
	if (r)
		goto out;
	f = function_ok(hfunc);
	if (!hmod || !f) {
		r = hmod ? CUDA_ERROR_INVALID_HANDLE : CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	*hmod = f->mod;
out:
	return leave(r);
}

CUresult cuModuleGetGlobal(CUdeviceptr *dptr, size_t *bytes, CUmodule hmod, const char *name)
{
	CUresult r = enter_ctx();
	struct CUmod_st *m;
	if (r)
		goto out;
	if (!name) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	m = module_ok(hmod);
	if (!m) {
		r = CUDA_ERROR_INVALID_HANDLE;
		goto out;
	}
	r = CUDA_ERROR_NOT_FOUND;
	for (size_t i = 0; i < m->nglobals; i++) {
		if (strcmp(m->globals[i].name, name))
			continue;
		if (dptr)
			*dptr = (CUdeviceptr)m->globals[i].r->user;
		if (bytes)
			*bytes = m->globals[i].r->size;
		r = CUDA_SUCCESS;
		break;
	}
out:
	return leave(r);
}

/* ---- functions and kernels ----------------------------------------------- */

static CUresult param_info(const void *h, size_t idx, size_t *off, size_t *size)
{
	CUresult r = enter_init();
	struct CUfunc_st *f;
	if (r)
		goto out;
	f = function_ok(h);
	if (!f) {
		r = CUDA_ERROR_INVALID_HANDLE;
		goto out;
	}
	if (idx >= f->k->nparams) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	if (off)
		*off = f->k->params[idx].offset;
	if (size)
		*size = f->k->params[idx].size;
out:
	return leave(r);
}

CUresult cuFuncGetParamInfo(CUfunction func, size_t idx, size_t *off, size_t *size)
{
	return param_info(func, idx, off, size);
}

CUresult cuKernelGetParamInfo(CUkernel kernel, size_t idx, size_t *off, size_t *size)
{
	return param_info(kernel, idx, off, size);
}

static CUresult get_name(const char **name, const void *h)
{
	CUresult r = enter_init();
	struct CUfunc_st *f;
	if (r)
		goto out;
	if (!name) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	f = function_ok(h);
	if (!f)
		r = CUDA_ERROR_INVALID_HANDLE;
	else
		*name = f->k->name;
out:
	return leave(r);
}

CUresult cuFuncGetName(const char **name, CUfunction hfunc)
{
	return get_name(name, hfunc);
}

CUresult cuKernelGetName(const char **name, CUkernel hfunc)
{
	return get_name(name, hfunc);
}

CUresult cuFuncSetAttribute(CUfunction hfunc, CUfunction_attribute attrib, int value)
{
	CUresult r = enter_init();
	struct CUfunc_st *f;
	if (r)
		goto out;
	f = function_ok(hfunc);
	if (!f) {
		r = CUDA_ERROR_INVALID_HANDLE;
		goto out;
	}
	switch (attrib) {
	case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
		if (value < 0 || value > MAX_SMEM_OPTIN)
			r = CUDA_ERROR_INVALID_VALUE;
		else
			f->max_dyn_smem = value;
		break;
	case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT:
		if (value < -1 || value > 100)
			r = CUDA_ERROR_INVALID_VALUE;
		else
			f->carveout = value;
		break;
	case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_WIDTH:
	case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_HEIGHT:
	case CU_FUNC_ATTRIBUTE_REQUIRED_CLUSTER_DEPTH:
	case CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED:
	case CU_FUNC_ATTRIBUTE_CLUSTER_SCHEDULING_POLICY_PREFERENCE:
		break;      /* accepted, no effect: clusters are not modelled */
	default:
		r = CUDA_ERROR_INVALID_VALUE;   /* read-only or unknown */
	}
out:
	return leave(r);
}

CUresult cuFuncGetAttribute(int *pi, CUfunction_attribute attrib, CUfunction hfunc)
{
	CUresult r = enter_init();
	struct CUfunc_st *f;
	if (r)
		goto out;
	f = function_ok(hfunc);
	if (!f) {
		r = CUDA_ERROR_INVALID_HANDLE;
		goto out;
	}
	if (!pi || (int)attrib < 0 || attrib >= CU_FUNC_ATTRIBUTE_MAX) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	switch (attrib) {
	case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *pi = f->k->max_threads ? f->k->max_threads : 1024; break;
	case CU_FUNC_ATTRIBUTE_NUM_REGS: *pi = f->k->num_regs ? f->k->num_regs : 32; break;
	case CU_FUNC_ATTRIBUTE_PTX_VERSION: *pi = 90; break;
	case CU_FUNC_ATTRIBUTE_BINARY_VERSION: *pi = 90; break;
	case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES: *pi = f->max_dyn_smem; break;
	case CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT: *pi = f->carveout; break;
	default: *pi = 0;
	}
out:
	return leave(r);
}

/* Handles double as CUkernels: the device is not needed to answer. */
CUresult cuKernelGetAttribute(int *pi, CUfunction_attribute attrib, CUkernel kernel, CUdevice dev)
{
	(void)dev;
	return cuFuncGetAttribute(pi, attrib, (CUfunction)kernel);
}

/* ---- launches -------------------------------------------------------------- */

/* Pack the parameters into args[MAX_ARGS]. */
static CUresult pack_args(const struct dbl_kernel *k, void **params, void **extra, unsigned char *args)
{
	size_t need = 0;
	for (unsigned i = 0; i < k->nparams; i++)
		if (k->params[i].offset + k->params[i].size > need)
			need = k->params[i].offset + k->params[i].size;
	memset(args, 0, MAX_ARGS);
	if (params && extra)
		return CUDA_ERROR_INVALID_VALUE;
	if (params) {
		for (unsigned i = 0; i < k->nparams; i++) {
			if (!params[i])
				return CUDA_ERROR_INVALID_VALUE;
			memcpy(args + k->params[i].offset, params[i], k->params[i].size);
		}
		return CUDA_SUCCESS;
	}
	if (extra) {
		const void *buf = NULL;
		size_t size = 0;
		int have_size = 0;
		for (size_t i = 0; extra[i] != CU_LAUNCH_PARAM_END; i += 2) {
			if (extra[i] == CU_LAUNCH_PARAM_BUFFER_POINTER) {
				buf = extra[i + 1];
			} else if (extra[i] == CU_LAUNCH_PARAM_BUFFER_SIZE) {
				if (!extra[i + 1])
					return CUDA_ERROR_INVALID_VALUE;
				memcpy(&size, extra[i + 1], sizeof(size));
				have_size = 1;
			} else {
				return CUDA_ERROR_INVALID_VALUE;
			}
		}
		if (!buf || !have_size || size < need || size > MAX_ARGS)
			return CUDA_ERROR_INVALID_VALUE;
		memcpy(args, buf, size);
		return CUDA_SUCCESS;
	}
	return k->nparams ? CUDA_ERROR_INVALID_VALUE : CUDA_SUCCESS;
}

/* The module of the function being launched, for launch_global. */
static struct CUmod_st *launch_mod;

/* dbl_launch.global: a __device__ variable of the launching module. */
static void *launch_global(const char *name)
{
	for (size_t i = 0; launch_mod && i < launch_mod->nglobals; i++)
		if (!strcmp(launch_mod->globals[i].name, name))
			return (void *)(uintptr_t)launch_mod->globals[i].r->user;
	return NULL;
}

/* Run every thread of the grid; returns the launch's result. */
static CUresult run_grid(const struct dbl_kernel *k, const unsigned char *args)
{
	struct fault_guard *g = &S.fg;
	int jr;
	CUresult r = CUDA_SUCCESS;
	g->k = k;
	g->L.seq = ++S.launches;
	g->L.rnd = (uint32_t)next_rand();
	g->L.race = launch_race;
	g->L.global = launch_global;
	g->race_have = 0;
	guard_begin();
	jr = sigsetjmp(g->jmp, 1);
	if (jr == 0) {
		struct dbl_launch *L = &g->L;
		for (unsigned bz = 0; bz < L->gridDim.z; bz++)
		for (unsigned by = 0; by < L->gridDim.y; by++)
		for (unsigned bx = 0; bx < L->gridDim.x; bx++)
		for (unsigned tz = 0; tz < L->blockDim.z; tz++)
		for (unsigned ty = 0; ty < L->blockDim.y; ty++)
		for (unsigned tx = 0; tx < L->blockDim.x; tx++) {
			L->blockIdx = (struct dbl_dim3){ bx, by, bz };
			L->threadIdx = (struct dbl_dim3){ tx, ty, tz };
			k->fn(L, args);
		}
	}
	guard_end();
	if (jr == 1) {
		char where[200];
		describe_addr((uintptr_t)g->addr, where, sizeof(where));
		vlog("illegal address %p (%s, %s) in %s, block (%u,%u,%u) thread (%u,%u,%u): %s",
		     g->addr, g->is_write < 0 ? "access" : g->is_write ? "write" : "read",
		     g->sig == SIGBUS ? "SIGBUS" : "SIGSEGV", k->signature,
		     g->L.blockIdx.x, g->L.blockIdx.y, g->L.blockIdx.z,
		     g->L.threadIdx.x, g->L.threadIdx.y, g->L.threadIdx.z, where);
		r = S.sticky = CUDA_ERROR_ILLEGAL_ADDRESS;
	} else if (jr == 2) {
		vlog("device-side assert in %s", k->signature);
		r = S.sticky = CUDA_ERROR_ASSERT;
	}
	return r;
}

static CUresult launch(CUfunction hf, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
		       unsigned bz, unsigned smem, CUstream stream, void **params, void **extra)
{
	CUresult r = enter_ctx();
	static unsigned char args[MAX_ARGS];
	struct CUfunc_st *f;
	unsigned long long threads;
	if (r)
		goto out;
	f = function_ok(hf);
	if (!f) {
		r = CUDA_ERROR_INVALID_HANDLE;
		goto out;
	}
	if (!stream_ok(stream)) {
		r = CUDA_ERROR_INVALID_HANDLE;
		goto out;
	}
	threads = (unsigned long long)bx * by * bz;
	if (!gx || !gy || !gz || !bx || !by || !bz || threads > 1024 || bx > 1024 || by > 1024 ||
	    (f->k->max_threads && threads > (unsigned long long)f->k->max_threads) ||
	    (f->k->reqntid && threads != (unsigned long long)f->k->max_threads) ||
	    bz > 64 || gx > 2147483647u || gy > 65535 || gz > 65535 ||
	    smem > (unsigned)(f->max_dyn_smem > MAX_SMEM ? f->max_dyn_smem : MAX_SMEM)) {
		r = CUDA_ERROR_INVALID_VALUE;
		goto out;
	}
	r = pack_args(f->k, params, extra, args);
	if (r)
		goto out;
	S.fg.L.gridDim = (struct dbl_dim3){ gx, gy, gz };
	S.fg.L.blockDim = (struct dbl_dim3){ bx, by, bz };
	launch_mod = f->mod;
	r = run_grid(f->k, args);
	if (r && S.async_faults)
		r = CUDA_SUCCESS;   /* asynchronous: the next call that needs the context says it */
out:
	return leave(r);
}

CUresult cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx,
			unsigned int by, unsigned int bz, unsigned int smem, CUstream s, void **params,
			void **extra)
{
	return launch(f, gx, gy, gz, bx, by, bz, smem, s, params, extra);
}

CUresult cuLaunchKernelEx(const CUlaunchConfig *c, CUfunction f, void **params, void **extra)
{
	if (!c || (c->numAttrs && !c->attrs))
		return CUDA_ERROR_INVALID_VALUE;
	for (unsigned i = 0; i < c->numAttrs; i++) {
		const CUlaunchAttribute *a = &c->attrs[i];
		/* the double makes no events: any event named is not one of ours */
		if (a->id == CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_EVENT ||
		    a->id == CU_LAUNCH_ATTRIBUTE_LAUNCH_COMPLETION_EVENT)
			return CUDA_ERROR_INVALID_HANDLE;
		/* the grid must be a whole number of clusters */
		if (a->id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION &&
		    (!a->value.clusterDim.x || !a->value.clusterDim.y || !a->value.clusterDim.z ||
		     c->gridDimX % a->value.clusterDim.x || c->gridDimY % a->value.clusterDim.y ||
		     c->gridDimZ % a->value.clusterDim.z))
			return CUDA_ERROR_INVALID_CLUSTER_SIZE;
	}
	return launch(f, c->gridDimX, c->gridDimY, c->gridDimZ, c->blockDimX, c->blockDimY, c->blockDimZ,
		      c->sharedMemBytes, c->hStream, params, extra);
}

CUresult cuLaunchCooperativeKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
				   unsigned int bx, unsigned int by, unsigned int bz, unsigned int smem,
				   CUstream s, void **params)
{
	return launch(f, gx, gy, gz, bx, by, bz, smem, s, params, NULL);
}

/* ---- errors ---------------------------------------------------------------- */

static const struct { CUresult code; const char *name, *text; } errors[] = {
#define E(c, t) { c, #c, t }
	E(CUDA_SUCCESS, "no error"),
	E(CUDA_ERROR_INVALID_VALUE, "invalid argument"),
	E(CUDA_ERROR_OUT_OF_MEMORY, "out of memory"),
	E(CUDA_ERROR_NOT_INITIALIZED, "initialization error"),
	E(CUDA_ERROR_DEINITIALIZED, "driver shutting down"),
	E(CUDA_ERROR_PROFILER_DISABLED, NULL),
	E(CUDA_ERROR_PROFILER_NOT_INITIALIZED, NULL),
	E(CUDA_ERROR_PROFILER_ALREADY_STARTED, NULL),
	E(CUDA_ERROR_PROFILER_ALREADY_STOPPED, NULL),
	E(CUDA_ERROR_STUB_LIBRARY, "CUDA driver is a stub library"),
	E(CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER, NULL),
	E(CUDA_ERROR_DEVICE_UNAVAILABLE, "CUDA-capable device(s) is/are busy or unavailable"),
	E(CUDA_ERROR_NO_DEVICE, "no CUDA-capable device is detected"),
	E(CUDA_ERROR_INVALID_DEVICE, "invalid device ordinal"),
	E(CUDA_ERROR_DEVICE_NOT_LICENSED, NULL),
	E(CUDA_ERROR_INVALID_IMAGE, "device kernel image is invalid"),
	E(CUDA_ERROR_INVALID_CONTEXT, "invalid device context"),
	E(CUDA_ERROR_CONTEXT_ALREADY_CURRENT, NULL),
	E(CUDA_ERROR_MAP_FAILED, NULL),
	E(CUDA_ERROR_UNMAP_FAILED, NULL),
	E(CUDA_ERROR_ARRAY_IS_MAPPED, NULL),
	E(CUDA_ERROR_ALREADY_MAPPED, NULL),
	E(CUDA_ERROR_NO_BINARY_FOR_GPU, "no kernel image is available for execution on the device"),
	E(CUDA_ERROR_ALREADY_ACQUIRED, NULL),
	E(CUDA_ERROR_NOT_MAPPED, NULL),
	E(CUDA_ERROR_NOT_MAPPED_AS_ARRAY, NULL),
	E(CUDA_ERROR_NOT_MAPPED_AS_POINTER, NULL),
	E(CUDA_ERROR_ECC_UNCORRECTABLE, NULL),
	E(CUDA_ERROR_UNSUPPORTED_LIMIT, NULL),
	E(CUDA_ERROR_CONTEXT_ALREADY_IN_USE, NULL),
	E(CUDA_ERROR_PEER_ACCESS_UNSUPPORTED, NULL),
	E(CUDA_ERROR_INVALID_PTX, "a PTX JIT compilation failed"),
	E(CUDA_ERROR_INVALID_GRAPHICS_CONTEXT, NULL),
	E(CUDA_ERROR_NVLINK_UNCORRECTABLE, NULL),
	E(CUDA_ERROR_JIT_COMPILER_NOT_FOUND, NULL),
	E(CUDA_ERROR_UNSUPPORTED_PTX_VERSION, NULL),
	E(CUDA_ERROR_JIT_COMPILATION_DISABLED, NULL),
	E(CUDA_ERROR_UNSUPPORTED_EXEC_AFFINITY, NULL),
	E(CUDA_ERROR_UNSUPPORTED_DEVSIDE_SYNC, NULL),
	E(CUDA_ERROR_CONTAINED, NULL),
	E(CUDA_ERROR_INVALID_SOURCE, "device kernel image is invalid"),
	E(CUDA_ERROR_FILE_NOT_FOUND, "file not found"),
	E(CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND, NULL),
	E(CUDA_ERROR_SHARED_OBJECT_INIT_FAILED, NULL),
	E(CUDA_ERROR_OPERATING_SYSTEM, "OS call failed or operation not supported on this OS"),
	E(CUDA_ERROR_INVALID_HANDLE, "invalid resource handle"),
	E(CUDA_ERROR_ILLEGAL_STATE, NULL),
	E(CUDA_ERROR_LOSSY_QUERY, NULL),
	E(CUDA_ERROR_NOT_FOUND, "named symbol not found"),
	E(CUDA_ERROR_NOT_READY, "device not ready"),
	E(CUDA_ERROR_ILLEGAL_ADDRESS, "an illegal memory access was encountered"),
	E(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, "too many resources requested for launch"),
	E(CUDA_ERROR_LAUNCH_TIMEOUT, "the launch timed out and was terminated"),
	E(CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING, NULL),
	E(CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED, NULL),
	E(CUDA_ERROR_PEER_ACCESS_NOT_ENABLED, NULL),
	E(CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE, NULL),
	E(CUDA_ERROR_CONTEXT_IS_DESTROYED, "context is destroyed"),
	E(CUDA_ERROR_ASSERT, "device-side assert triggered"),
	E(CUDA_ERROR_TOO_MANY_PEERS, NULL),
	E(CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED, NULL),
	E(CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED, NULL),
	E(CUDA_ERROR_HARDWARE_STACK_ERROR, "hardware stack error"),
	E(CUDA_ERROR_ILLEGAL_INSTRUCTION, "an illegal instruction was encountered"),
	E(CUDA_ERROR_MISALIGNED_ADDRESS, "misaligned address"),
	E(CUDA_ERROR_INVALID_ADDRESS_SPACE, "operation not supported on global/shared address space"),
	E(CUDA_ERROR_INVALID_PC, "invalid program counter"),
	E(CUDA_ERROR_LAUNCH_FAILED, "unspecified launch failure"),
	E(CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE, "too many blocks in cooperative launch"),
	E(CUDA_ERROR_TENSOR_MEMORY_LEAK, NULL),
	E(CUDA_ERROR_NOT_PERMITTED, "operation not permitted"),
	E(CUDA_ERROR_NOT_SUPPORTED, "operation not supported"),
	E(CUDA_ERROR_SYSTEM_NOT_READY, NULL),
	E(CUDA_ERROR_SYSTEM_DRIVER_MISMATCH, NULL),
	E(CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE, NULL),
	E(CUDA_ERROR_MPS_CONNECTION_FAILED, NULL),
	E(CUDA_ERROR_MPS_RPC_FAILURE, NULL),
	E(CUDA_ERROR_MPS_SERVER_NOT_READY, NULL),
	E(CUDA_ERROR_MPS_MAX_CLIENTS_REACHED, NULL),
	E(CUDA_ERROR_MPS_MAX_CONNECTIONS_REACHED, NULL),
	E(CUDA_ERROR_MPS_CLIENT_TERMINATED, NULL),
	E(CUDA_ERROR_CDP_NOT_SUPPORTED, NULL),
	E(CUDA_ERROR_CDP_VERSION_MISMATCH, NULL),
	E(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, NULL),
	E(CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, NULL),
	E(CUDA_ERROR_STREAM_CAPTURE_MERGE, NULL),
	E(CUDA_ERROR_STREAM_CAPTURE_UNMATCHED, NULL),
	E(CUDA_ERROR_STREAM_CAPTURE_UNJOINED, NULL),
	E(CUDA_ERROR_STREAM_CAPTURE_ISOLATION, NULL),
	E(CUDA_ERROR_STREAM_CAPTURE_IMPLICIT, NULL),
	E(CUDA_ERROR_CAPTURED_EVENT, NULL),
	E(CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD, NULL),
	E(CUDA_ERROR_TIMEOUT, NULL),
	E(CUDA_ERROR_GRAPH_EXEC_UPDATE_FAILURE, NULL),
	E(CUDA_ERROR_EXTERNAL_DEVICE, NULL),
	E(CUDA_ERROR_INVALID_CLUSTER_SIZE, NULL),
	E(CUDA_ERROR_FUNCTION_NOT_LOADED, NULL),
	E(CUDA_ERROR_INVALID_RESOURCE_TYPE, NULL),
	E(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION, NULL),
	E(CUDA_ERROR_KEY_ROTATION, NULL),
	E(CUDA_ERROR_UNKNOWN, "unknown error"),
#undef E
};

static int error_index(CUresult e)
{
	for (size_t i = 0; i < sizeof(errors) / sizeof(errors[0]); i++)
		if (errors[i].code == e)
			return (int)i;
	return -1;
}

CUresult cuGetErrorName(CUresult e, const char **s)
{
	int i = error_index(e);
	if (!s)
		return CUDA_ERROR_INVALID_VALUE;
	*s = i >= 0 ? errors[i].name : NULL;
	return i >= 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

CUresult cuGetErrorString(CUresult e, const char **s)
{
	int i = error_index(e);
	if (!s)
		return CUDA_ERROR_INVALID_VALUE;
	/* codes without a known text get their name: better than nothing */
	*s = i < 0 ? NULL : errors[i].text ? errors[i].text : errors[i].name;
	return i >= 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* ---- TMA tensor maps (layout: the comment at the top) ------------------- */

CUresult cuTensorMapEncodeTiled(CUtensorMap *map, CUtensorMapDataType type, cuuint32_t rank,
				void *addr, const cuuint64_t *dims, const cuuint64_t *strides,
				const cuuint32_t *box, const cuuint32_t *estrides,
				CUtensorMapInterleave il, CUtensorMapSwizzle sw, CUtensorMapL2promotion l2,
				CUtensorMapFloatOOBfill oob)
{
	uint64_t w[16];
	uint32_t i;
	(void)estrides;
	if (!map || !dims || !box || rank < 1 || rank > 5 || ((uintptr_t)addr & 15) ||
	    (unsigned)type > CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B)
		return CUDA_ERROR_INVALID_VALUE;
	for (i = 0; i < rank; i++)
		if (!dims[i] || dims[i] > (1ull << 32) || !box[i] || box[i] > 256 ||
		    (i + 1 < rank && (!strides || strides[i] % 16 || strides[i] >= (1ull << 40))))
			return CUDA_ERROR_INVALID_VALUE;
	memset(w, 0, sizeof(w));
	w[0] = (uint64_t)(uintptr_t)addr;
	w[1] = (rank > 1 ? strides[0] / 16 : 0) << 32 | (uint64_t)type << 8 | rank;
	w[2] = (rank > 2 ? strides[1] / 16 : 0) | (rank > 3 ? strides[2] / 16 : 0) << 32;
	w[3] = rank > 4 ? strides[3] / 16 : 0;
	w[4] = (dims[0] - 1) | (rank > 1 ? dims[1] - 1 : 0) << 32;
	w[5] = (rank > 2 ? dims[2] - 1 : 0) | (rank > 3 ? dims[3] - 1 : 0) << 32;
	w[3] |= (rank > 4 ? dims[4] - 1 : 0) << 32;
	for (i = 0; i < rank; i++)
		w[6] |= (uint64_t)(box[i] - 1) << (8 * i);
	w[7] = (uint64_t)il | (uint64_t)sw << 8 | (uint64_t)l2 << 16 | (uint64_t)oob << 24;
	memcpy(map, w, sizeof(w));
	return CUDA_SUCCESS;
}

CUresult cuTensorMapReplaceAddress(CUtensorMap *map, void *addr)
{
	uint64_t a = (uint64_t)(uintptr_t)addr;
	if (!map || (a & 15))
		return CUDA_ERROR_INVALID_VALUE;
	memcpy(map, &a, 8);
	return CUDA_SUCCESS;
}

/* im2col maps: the tiled layout, with channelsPerPixel and pixelsPerColumn
 * as the box of the two innermost dimensions (no kernel reads them yet). */
CUresult cuTensorMapEncodeIm2col(CUtensorMap *map, CUtensorMapDataType type, cuuint32_t rank, void *addr,
				 const cuuint64_t *dims, const cuuint64_t *strides, const int *lower,
				 const int *upper, cuuint32_t channels, cuuint32_t pixels,
				 const cuuint32_t *estrides, CUtensorMapInterleave il, CUtensorMapSwizzle sw,
				 CUtensorMapL2promotion l2, CUtensorMapFloatOOBfill oob)
{
	cuuint32_t box[5] = { 1, 1, 1, 1, 1 };
	if (rank < 3 || !lower || !upper || !channels || !pixels)
		return CUDA_ERROR_INVALID_VALUE;
	box[0] = channels > 256 ? 256 : channels;
	box[1] = pixels > 256 ? 256 : pixels;
	return cuTensorMapEncodeTiled(map, type, rank, addr, dims, strides, box, estrides, il, sw, l2, oob);
}

/* cuPointerGetAttribute: only CU_POINTER_ATTRIBUTE_MEMORY_TYPE, DEVICE for
 * an address inside a live allocation or an accessible VMM mapping (the
 * capture library asks it of words that may be device pointers). */
CUresult cuPointerGetAttribute(void *data, CUpointer_attribute attr, CUdeviceptr ptr)
{
	CUresult r = enter_dev();
	if (r)
		goto out;
	r = CUDA_ERROR_INVALID_VALUE;
	if (!data || attr != CU_POINTER_ATTRIBUTE_MEMORY_TYPE || !range_ok(ptr, 1, 0))
		goto out;
	*(unsigned int *)data = CU_MEMORYTYPE_DEVICE;
	r = CUDA_SUCCESS;
out:
	pthread_mutex_unlock(&S.lock);
	return r;
}
