/*
 * inject.c - the CUPTI injection library: loaded by the CUDA driver through
 * CUDA_INJECTION64_PATH at cuInit, it subscribes to the driver-API callbacks
 * it handles (cbids.c) and to resource callbacks, and writes everything a
 * replay needs into the trace named by GPUREDUCE_TRACE (set by `gpureduce
 * capture`, src/cmd-capture.c).
 *
 * Environment (all set by the capture command):
 *   GPUREDUCE_TRACE             output path (unset: do nothing at all); ending in '/':
 *                               a directory, one trace per process (open_trace)
 *   GPUREDUCE_STATUS            file that gets one line per process: "ok PID PATH",
 *                               "cupti-busy ERR", "cupti-error ERR" or "trace-error MSG";
 *                               also "rank PID R" and "fault PID NS" (src/launch/capture-ranks.c),
 *                               and "write-error PID OFFSET WHY" when the trace's first
 *                               write fails (trace_write_failed)
 *   GPUREDUCE_FOLD_KERNELS/_MAX communication kernels to fold (fold.c)
 *   GPUREDUCE_ALLOW_NO_CAPTURE  "1": run the program uncaptured instead of refusing
 *   GPUREDUCE_PY_FRAMES         Python frames per launch (default 8, max 64)
 *   GPUREDUCE_ZSTD              zstd level of copied bytes (default -1: ~7 GB/s,
 *                               float data stored raw; level 1 saves ~11 % on
 *                               such data at ~1 GB/s: 3.0 ms per MiB copied in,
 *                               against 0.7-1.3 at -1, on the build machine's
 *                               driver double, tests/bench/capture-cost.sh)
 *   GPUREDUCE_FLUSH_MS          records are gathered in a 256 KiB buffer and
 *                               written at least this often (default 100; 0:
 *                               one write(2) each); flushed at once at a fault,
 *                               at exit and before a checkpoint (flusher.c)
 *   GPUREDUCE_BLOCKING          "library": the library waits for each launch in
 *                               its exit callback, the program running with
 *                               CUDA_LAUNCH_BLOCKING=0 (lib_block_after); it
 *                               turns GPUREDUCE_WRITER_THREAD on unless that
 *                               says 0 (`capture --blocking=library`)
 *   GPUREDUCE_CAPTURE_PROFILE   "1": where capture's time went, on stderr at
 *                               exit (prof.c; make bench-cpu prints it)
 *   GPUREDUCE_CAPTURE_ALL_CALLBACKS "1": every driver API's callback, not only
 *                               those capture handles (cbids.c), as before 1.4
 *   GPUREDUCE_CAPTURE_ABLATE    for measurements only (bench-hostfed's ablation
 *                               ways; the trace is not replayable): "dispatch"
 *                               subscribes as usual but returns from every
 *                               driver callback at once (what CUPTI's dispatch
 *                               and the driver's traced path cost alone);
 *                               "nobytes" records copies in without their bytes;
 *                               "wait" records nothing, but with the library's
 *                               wait (the default) still waits for each launch
 *                               (what the wait costs against the driver's
 *                               CUDA_LAUNCH_BLOCKING=1)
 *
 * Records go through the trace writer (trace/trace.h) only, gathered in its
 * buffer (GPUREDUCE_FLUSH_MS) and flushed at the fault, so the file is
 * complete up to the last whole record when the program dies on its fault.
 * What is recorded where:
 *   init                      TR_PROCESS
 *   first context             TR_DEVICE
 *   module loaded             blob of the cubin + TR_MODULE
 *   alloc calls (exit, ok)    TR_ALLOC      free calls (enter)  TR_FREE (allocs.c)
 *   copies, memsets (enter)   TR_MEMCPY_*, TR_MEMSET (H2D with the bytes; copies.c)
 *   launches (enter)          TR_LAUNCH with parameter bytes and Python frames
 *                             (GPUREDUCE_BLOCKING=library: most launches' in
 *                             the exit, before the library's wait)
 *   func attributes (exit)    TR_FUNC_ATTR
 *   tensor map encodes (exit) TR_TENSORMAP (tensormap.c)
 *   first sticky error (exit of any driver call)  TR_FAULT, then nothing more
 *   exit()                    TR_END
 *   anything not replayable   TR_NOTE (once per API)
 *
 * Threading: callbacks come from any thread (PyTorch's autograd thread
 * launches too).  One recursive mutex guards the writer and all state;
 * driver calls the library makes itself run outside it where possible, and
 * a thread-local flag keeps them from being recorded.  Resource callbacks
 * (a lazily loaded module) are recorded even when one of our own driver calls
 * triggered them.
 *
 * Rules: never change the program's behaviour.  No output, no exit (except
 * the refusal to run half-captured), no call that synchronises or faults
 * the GPU, no read of memory the driver itself would not read (host sources
 * are checked with cap_host_readable first).
 */
#include <cuda.h>
#include <cupti.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "../common/cuerr.h"
#include "../common/strbuf.h"
#include "../common/util.h"
#include "../trace/trace.h"
#include "allocs.h"
#include "capture.h"
#include "cbids.h"
#include "copies.h"
#include "flusher.h"
#include "graphapi.h"
#include "prof.h"

#define CB(name) CUPTI_DRIVER_TRACE_CBID_##name

enum {
	REFUSE_EXIT = 86,          /* _exit code when refusing to run half-captured */
	MAX_PARAMS = 8192,         /* cu*GetParamInfo probe limit */
	MAX_FAILED_NOTES = 100,    /* "call returned an error" notes */
	MAX_EXTRA_PAIRS = 32       /* cuLaunchKernel `extra` entries examined */
};

/* Per-function layout, cached by CUfunction/CUkernel handle (S.fns). */
struct fn_info {
	char *name;                /* "" when the driver would not say */
	uint32_t nparams;
	struct tr_param *params;
	uint32_t argsize;          /* max offset+size over params */
	int layout_unknown;        /* no param-info call worked */
	int tmap_noted;            /* a map nobody recorded was noted (tensormap.c) */
	int noted;                 /* note about it already written */
	/* per kernel, not per launch (issue 26) */
	int comm;                  /* a communication kernel to fold (fold.c) */
	int src_asked;             /* cap_src_read had its first launch */
	uint64_t name_hash;        /* key of its FUNC_ATTRs (func_attr_changed) */
	int is_func;               /* a CUfunction (else a CUkernel) */
	struct tr_func_info info;  /* its attributes (name: not set), for FUNC_INFO */
	int info_written;          /* FUNC_INFO written for this handle */
};

static pthread_mutex_t g_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static int g_off = 1;          /* atomic: 1 before init and in forked children */
static __thread int t_busy;    /* inside our own callback on this thread */
static __thread uint64_t t_cb_ns;  /* GPUREDUCE_CAPTURE_PROFILE: when this callback began */
static __thread uint64_t t_fn_ns;  /* profile: fn_compute's time, taken out of the lookup lap */
static __thread uint32_t t_tid;  /* this thread's id, asked once (a syscall per launch cost ~0.3 us) */
static size_t g_wbuf;          /* trace writer buffer (0: one write(2) per record); flusher.c */
enum { ABLATE_NONE, ABLATE_DISPATCH, ABLATE_NOBYTES, ABLATE_WAIT };
static int g_ablate;           /* GPUREDUCE_CAPTURE_ABLATE (measurements only), set at init */
static int g_paused;           /* atomic: gpureduce_capture_pause (measurements only) */

static struct {                /* all under g_lock */
	struct trace_writer w;
	int recording;             /* writer open, no fault yet, not ended */
	int ended;
	pid_t pid;
	uint32_t py_frames;
	int device_done;
	uint64_t launches, h2d;
	uint64_t last_seq;         /* UINT64_MAX: no launch yet */
	struct strbuf last_name;   /* the last launch's kernel name once last_fi is gone */
	const struct fn_info *last_fi;   /* the last launch's kernel (NULL: see last_name) */
	struct cap_map fns;        /* handle -> (struct fn_info *) */
	struct cap_map attr_last;  /* hash(kernel, attribute) -> value last carried */
	unsigned char noted[CUPTI_DRIVER_TRACE_CBID_SIZE];
	unsigned failed_notes;
	CUpti_SubscriberHandle sub;
} S = { .w = TRACE_WRITER_INIT, .last_seq = UINT64_MAX, .last_name = STRBUF_INIT };

/* ---- small helpers ---------------------------------------------------- */

static uint64_t realtime_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int is_off(void)
{
	return __atomic_load_n(&g_off, __ATOMIC_ACQUIRE);
}

/* Take the lock if recording is on; returns 1 with the lock held, else 0. */
static int lock_rec(void)
{
	pthread_mutex_lock(&g_lock);
	if (S.recording)
		return 1;
	pthread_mutex_unlock(&g_lock);
	return 0;
}

static void unlock(void)
{
	pthread_mutex_unlock(&g_lock);
}

static uint32_t my_tid(void)
{
	if (!t_tid)
		t_tid = (uint32_t)syscall(SYS_gettid);
	return t_tid;
}

static const char *err_name(CUresult r)
{
	const char *s = NULL;
	if (cuGetErrorName(r, &s) != CUDA_SUCCESS || !s)
		s = "CUDA_ERROR_UNKNOWN_CODE";
	return s;
}

/* The errors after which the context is unusable (common/cuerr.h). */
static int is_sticky(CUresult r)
{
	return cuerr_is_sticky((int)r);
}

static void status_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void status_line(const char *fmt, ...)
{
	const char *path = getenv("GPUREDUCE_STATUS");
	char line[PATH_MAX + 128];
	va_list ap;
	int fd, n;

	if (!path || !*path)
		return;
	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n > sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	if (write_all(fd, line, (size_t)n) < 0) { /* nothing else to do */ }
	close(fd);
}

/* The trace's first failed write (trace/write.c, tw_set_failed): said at
 * once on stderr, since the program may go on for hours, and in the status
 * file for capture's summary (a full disk must not pass for a program that
 * stopped launching). */
static void trace_write_failed(struct trace_writer *w)
{
	const char *why = strerror(w->err);
	dprintf(2, "gpureduce: writing the trace failed at byte %llu (%s): it ends there, and the "
		"program goes on without being recorded\n", (unsigned long long)w->err_offset, why);
	status_line("write-error %d %llu %s", (int)S.pid, (unsigned long long)w->err_offset, why);
}

/* Caller holds the lock with recording on. */
static void note_locked(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void note_locked(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	ckpt_vnote(&S.w, 1, fmt, ap);
	va_end(ap);
}

/* A note the first time this API is seen. */
static void note_once(CUpti_CallbackId cbid, const char *fmt, const char *api)
{
	if (!lock_rec())
		return;
	if (cbid < CUPTI_DRIVER_TRACE_CBID_SIZE && !S.noted[cbid]) {
		S.noted[cbid] = 1;
		note_locked(fmt, api);
	}
	unlock();
}

/* The stream a NULL handle means for this API flavour. */
static CUstream eff_stream(CUstream s, int per_thread)
{
	return (!s && per_thread) ? CU_STREAM_PER_THREAD : s;
}

/* 1 once any stream capture has begun (rec_graph): until then no stream
 * can be capturing, and the launch path asks the driver nothing (a driver
 * call from a callback costs its own CUPTI round trip on every launch). */
static int g_captures;

/* 1 when work issued to s is being captured into a graph (it does not run). */
static int capturing(CUstream s)
{
	CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
	if (!__atomic_load_n(&g_captures, __ATOMIC_ACQUIRE))
		return 0;
	return cuStreamIsCapturing(s, &st) == CUDA_SUCCESS &&
		st == CU_STREAM_CAPTURE_STATUS_ACTIVE;
}

/* Device memory under unified addressing, as the driver classifies it. */
static int is_device_ptr(CUdeviceptr p)
{
	unsigned int type = 0;
	if (!p || cuPointerGetAttribute(&type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, p) != CUDA_SUCCESS)
		return 0;
	return type == CU_MEMORYTYPE_DEVICE || type == CU_MEMORYTYPE_ARRAY;
}


/* ---- process, device, modules ------------------------------------------ */

static void rec_process(void)
{
	struct strbuf cmd = STRBUF_INIT, err = STRBUF_INIT;
	const char **argv = NULL;
	char cwd[PATH_MAX];
	uint32_t argc = 0;
	struct tr_rec r;

	if (read_file("/proc/self/cmdline", &cmd, &err) == 0) {
		for (size_t i = 0; i < cmd.len; i++)
			if (!cmd.buf[i])
				argc++;
		if (cmd.len && cmd.buf[cmd.len - 1])
			argc++;   /* last argument without its NUL */
		argv = xcalloc(argc ? argc : 1, sizeof(*argv));
		for (size_t i = 0, k = 0; i < cmd.len && k < argc; k++) {
			argv[k] = cmd.buf + i;
			i += strlen(cmd.buf + i) + 1;
		}
	}
	if (!getcwd(cwd, sizeof(cwd)))
		strcpy(cwd, "?");
	memset(&r, 0, sizeof(r));
	r.type = TR_PROCESS;
	r.u.process.pid = (uint32_t)getpid();
	r.u.process.start_ns = realtime_ns();
	r.u.process.cwd = cwd;
	r.u.process.argc = argc;
	r.u.process.argv = argv;
	if (tw_record(&S.w, &r) >= 0)
		ckpt_carry(&S.w, TRACE_HEADER_SIZE, 1, 0, 0);
	free(argv);
	sb_release(&cmd);
	sb_release(&err);
}

static void rec_device(CUcontext ctx)
{
	uint32_t id = 0;
	CUdevice dev = 0;
	char name[256] = "";
	int major = 0, minor = 0, sms = 0, drv = 0;
	size_t mem = 0;
	struct tr_rec r;
	uint64_t start;

	pthread_mutex_lock(&g_lock);
	if (S.device_done) {
		unlock();
		return;
	}
	S.device_done = 1;
	unlock();

	if (cuptiGetDeviceId(ctx, &id) != CUPTI_SUCCESS)
		id = 0;
	if (cuDeviceGet(&dev, (int)id) == CUDA_SUCCESS) {
		if (cuDeviceGetName(name, (int)sizeof(name) - 1, dev) != CUDA_SUCCESS)
			strcpy(name, "?");
		cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
		cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
		cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
		cuDeviceTotalMem(&mem, dev);
	}
	cuDriverGetVersion(&drv);

	if (!lock_rec())
		return;
	memset(&r, 0, sizeof(r));
	r.type = TR_DEVICE;
	r.u.device.ordinal = id;
	r.u.device.name = name;
	r.u.device.cc_major = (uint32_t)major;
	r.u.device.cc_minor = (uint32_t)minor;
	r.u.device.driver_version = (uint32_t)drv;
	r.u.device.toolkit_version = CUDA_VERSION;
	r.u.device.total_mem = mem;
	r.u.device.sm_count = (uint32_t)sms;
	start = cap_wq_mark(&S.w);
	if (tw_record(&S.w, &r) >= 0)
		ckpt_carry(&S.w, start, 1, 0, 0);
	unlock();
}

static void rec_module(const CUpti_ModuleResourceData *m)
{
	struct tr_rec r;
	uint64_t hash = 0, start, nrec;

	if (!m || !lock_rec())
		return;
	if (!m->pCubin || !m->cubinSize) {
		note_locked("module %u was loaded without an image: its kernels cannot be replayed",
			    m->moduleId);
		unlock();
		return;
	}
	/* The image is only valid during this callback: tw_blob consumes it now. */
	if (ckpt_active())
		cap_glob_image(m->pCubin, m->cubinSize);   /* its variables, for checkpoints */
	start = cap_wq_mark(&S.w);
	nrec = S.w.nrec;
	if (tw_blob(&S.w, m->pCubin, m->cubinSize, &hash) == 0) {
		const unsigned char *p = (const unsigned char *)m->pCubin;
		memset(&r, 0, sizeof(r));
		r.type = TR_MODULE;
		r.u.module.module_id = m->moduleId;
		r.u.module.kind = (m->cubinSize >= 4 && p[0] == 0x7f && p[1] == 'E' &&
				   p[2] == 'L' && p[3] == 'F') ? TR_MOD_ELF : TR_MOD_OTHER;
		r.u.module.blob = hash;
		r.u.module.size = m->cubinSize;
		if (tw_record(&S.w, &r) >= 0)
			ckpt_carry(&S.w, start, S.w.nrec - nrec, S.w.nrec - nrec > 1 ? hash : 0, 0);
	}
	unlock();
}

/* ---- function names and parameter layouts ------------------------------- */

static void fn_free(struct fn_info *fi)
{
	if (!fi)
		return;
	free(fi->name);
	free(fi->params);
	free(fi);
}

/* Drop every cached layout: handles may be reused once a module goes. */
static void fns_invalidate(void)
{
	pthread_mutex_lock(&g_lock);
	if (S.last_fi) {   /* its name outlives it, for a FAULT record */
		sb_reset(&S.last_name);
		sb_adds(&S.last_name, S.last_fi->name);
		S.last_fi = NULL;
	}
	for (size_t i = 0; i < S.fns.cap; i++)
		if (S.fns.slot[i].key)
			fn_free((struct fn_info *)(uintptr_t)S.fns.slot[i].v1);
	cap_map_clear(&S.fns);
	cap_same_forget();   /* its infos are gone, the handles reused */
	cap_glob_unloaded();
	unlock();
}

/* The attributes FUNC_INFO carries (docs/FORMAT.md), -1 where the driver
 * does not answer: which build of a name f is, when a JIT loaded several. */
static void fn_attrs(CUfunction f, int is_func, struct tr_func_info *in)
{
	static const CUfunction_attribute which[7] = {
		CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, CU_FUNC_ATTRIBUTE_NUM_REGS,
		CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES,
		CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, CU_FUNC_ATTRIBUTE_PTX_VERSION,
		CU_FUNC_ATTRIBUTE_BINARY_VERSION,
	};
	int32_t *to[7] = { &in->max_threads, &in->num_regs, &in->shared_bytes, &in->const_bytes,
			   &in->local_bytes, &in->ptx_version, &in->binary_version };
	CUdevice dev = 0;
	int have_dev = is_func || cuCtxGetDevice(&dev) == CUDA_SUCCESS;

	in->func = (uint64_t)(uintptr_t)f;
	for (int i = 0; i < 7; i++) {
		int v = -1;
		CUresult r = is_func ? cuFuncGetAttribute(&v, which[i], f)
			     : have_dev ? cuKernelGetAttribute(&v, which[i], (CUkernel)f, dev)
					: CUDA_ERROR_INVALID_CONTEXT;
		*to[i] = r == CUDA_SUCCESS ? v : -1;
	}
}

/* FUNC_INFO for fi's handle, once (lock held, recording): before its
 * first LAUNCH, carried into later checkpoint segments as modules are. */
static void fn_write_info_locked(struct fn_info *fi)
{
	uint64_t start;
	if (fi->info_written || !*fi->name)
		return;
	fi->info_written = 1;
	start = cap_wq_mark(&S.w);
	fi->info.name = fi->name;
	if (tw_func_info(&S.w, &fi->info) >= 0)
		ckpt_carry(&S.w, start, 1, 0, 0);
}

/*
 * Ask the driver for f's name and parameter layout.  Runtime launches pass
 * a CUkernel where the API says CUfunction: cuFunc* calls reject it with
 * CUDA_ERROR_INVALID_HANDLE and the cuKernel* twins answer instead.
 */
static struct fn_info *fn_compute(CUfunction f)
{
	struct fn_info *fi = xcalloc(1, sizeof(*fi));
	const char *name = NULL;
	size_t alloc = 0;
	int is_func = 0;
	CUresult r = CUDA_ERROR_INVALID_HANDLE;

	if (cuFuncGetName(&name, f) == CUDA_SUCCESS && name)
		is_func = 1;
	else if (cuKernelGetName(&name, (CUkernel)f) != CUDA_SUCCESS)
		name = NULL;
	fi->name = xstrdup(name ? name : "");

	for (int pass = 0; pass < 2 && !fi->nparams; pass++) {
		if (pass == 1 && is_func && r == CUDA_ERROR_INVALID_VALUE)
			break;   /* a CUfunction without parameters */
		for (uint32_t i = 0; i < MAX_PARAMS; i++) {
			size_t off = 0, size = 0;
			r = pass == 0 ? cuFuncGetParamInfo(f, i, &off, &size)
				      : cuKernelGetParamInfo((CUkernel)f, i, &off, &size);
			if (r != CUDA_SUCCESS)
				break;
			ALLOC_GROW(fi->params, fi->nparams + 1, alloc);
			fi->params[fi->nparams].offset = (uint32_t)off;
			fi->params[fi->nparams].size = (uint32_t)size;
			fi->nparams++;
			if (off + size > fi->argsize)
				fi->argsize = (uint32_t)(off + size);
		}
	}
	/* Out-of-range index is INVALID_VALUE; anything else means no answer. */
	fi->layout_unknown = !fi->nparams && r != CUDA_ERROR_INVALID_VALUE;
	fn_attrs(f, is_func, &fi->info);
	fi->comm = cap_fold_is_comm(fi->name);
	fi->name_hash = tr_hash(fi->name, strlen(fi->name));
	fi->is_func = is_func;
	return fi;
}

/* The cached layout of f, computing it (outside the lock) if needed.
 * Returns with the lock held; the pointer is valid until unlock(). */
static struct fn_info *fn_get_locked(CUfunction f)
{
	struct cap_map_ent *e;
	struct fn_info *fi;

	pthread_mutex_lock(&g_lock);
	e = cap_map_get(&S.fns, (uint64_t)(uintptr_t)f);
	if (e)
		return (struct fn_info *)(uintptr_t)e->v1;
	unlock();
	{
		uint64_t t0 = CAP_PROF_T0();
		fi = fn_compute(f);
		if (cap_prof_on)
			t_fn_ns += cap_prof_now_ns() - t0;
	}
	pthread_mutex_lock(&g_lock);
	e = cap_map_get(&S.fns, (uint64_t)(uintptr_t)f);
	if (e) {   /* another thread got there first */
		fn_free(fi);
		return (struct fn_info *)(uintptr_t)e->v1;
	}
	if (f) {
		cap_map_put(&S.fns, (uint64_t)(uintptr_t)f, (uint64_t)(uintptr_t)fi, 0);
		if (ckpt_active())
			cap_glob_function((uint64_t)(uintptr_t)f, fi->is_func, fi->name_hash);
	}
	return fi;   /* f == NULL: leaks one tiny struct per bogus launch; harmless */
}

/* ---- launches ------------------------------------------------------------ */

struct launch_in {
	CUfunction f;
	uint32_t api;              /* enum tr_launch_api */
	struct tr_dim3 grid, block;
	uint32_t shmem;
	CUstream stream;
	void **kp, **extra;
	const CUlaunchConfig *cfg;
};

static int get_launch(CUpti_CallbackId cbid, const void *p, struct launch_in *l)
{
	int pt = 0;
	memset(l, 0, sizeof(*l));
	switch (cbid) {
	case CB(cuLaunchKernel_ptsz):
		pt = 1;
		/* fallthrough */
	case CB(cuLaunchKernel): {
		const cuLaunchKernel_params *q = p;
		l->api = TR_API_LAUNCH_KERNEL;
		l->f = q->f;
		l->grid = (struct tr_dim3){ q->gridDimX, q->gridDimY, q->gridDimZ };
		l->block = (struct tr_dim3){ q->blockDimX, q->blockDimY, q->blockDimZ };
		l->shmem = q->sharedMemBytes;
		l->stream = eff_stream(q->hStream, pt);
		l->kp = q->kernelParams;
		l->extra = q->extra;
		return 0;
	}
	case CB(cuLaunchCooperativeKernel_ptsz):
		pt = 1;
		/* fallthrough */
	case CB(cuLaunchCooperativeKernel): {
		const cuLaunchCooperativeKernel_params *q = p;
		l->api = TR_API_LAUNCH_COOPERATIVE;
		l->f = q->f;
		l->grid = (struct tr_dim3){ q->gridDimX, q->gridDimY, q->gridDimZ };
		l->block = (struct tr_dim3){ q->blockDimX, q->blockDimY, q->blockDimZ };
		l->shmem = q->sharedMemBytes;
		l->stream = eff_stream(q->hStream, pt);
		l->kp = q->kernelParams;
		return 0;
	}
	case CB(cuLaunchKernelEx_ptsz):
		pt = 1;
		/* fallthrough */
	case CB(cuLaunchKernelEx): {
		const cuLaunchKernelEx_params *q = p;
		if (!q->config)
			return -1;
		l->api = TR_API_LAUNCH_KERNEL_EX;
		l->f = q->f;
		l->cfg = q->config;
		l->grid = (struct tr_dim3){ q->config->gridDimX, q->config->gridDimY, q->config->gridDimZ };
		l->block = (struct tr_dim3){ q->config->blockDimX, q->config->blockDimY, q->config->blockDimZ };
		l->shmem = q->config->sharedMemBytes;
		l->stream = eff_stream(q->config->hStream, pt);
		l->kp = q->kernelParams;
		l->extra = q->extra;
		return 0;
	}
	default:
		return -1;
	}
}

static int is_launch(CUpti_CallbackId cbid)
{
	switch (cbid) {
	case CB(cuLaunchKernel): case CB(cuLaunchKernel_ptsz):
	case CB(cuLaunchKernelEx): case CB(cuLaunchKernelEx_ptsz):
	case CB(cuLaunchCooperativeKernel): case CB(cuLaunchCooperativeKernel_ptsz):
		return 1;
	default:
		return 0;
	}
}

/* The parameter bytes as the kernel sees them (caller holds the lock), in
 * buf when they fit its cap bytes, else allocated: the caller frees a
 * result other than buf. */
static uint8_t *build_args(const struct fn_info *fi, const struct launch_in *l, uint32_t *size,
			   uint8_t *buf, size_t cap)
{
	uint8_t *args = NULL;

	*size = 0;
	if (l->kp && fi->nparams) {
		if (buf && fi->argsize <= cap) {
			args = buf;
			memset(args, 0, fi->argsize);
		} else {
			args = xcalloc(fi->argsize ? fi->argsize : 1, 1);
		}
		for (uint32_t i = 0; i < fi->nparams; i++)
			if (l->kp[i])
				memcpy(args + fi->params[i].offset, l->kp[i], fi->params[i].size);
		*size = fi->argsize;
	} else if (!l->kp && l->extra) {
		const void *pbuf = NULL;
		const size_t *bufsize = NULL;
		for (int k = 0; k < 2 * MAX_EXTRA_PAIRS && l->extra[k] != CU_LAUNCH_PARAM_END; k += 2) {
			if (l->extra[k] == CU_LAUNCH_PARAM_BUFFER_POINTER)
				pbuf = l->extra[k + 1];
			else if (l->extra[k] == CU_LAUNCH_PARAM_BUFFER_SIZE)
				bufsize = l->extra[k + 1];
		}
		if (pbuf && bufsize && *bufsize && *bufsize <= UINT32_MAX) {
			args = buf && *bufsize <= cap ? buf : xmalloc(*bufsize);
			memcpy(args, pbuf, *bufsize);
			*size = (uint32_t)*bufsize;
		}
	}
	return args;
}

/* Device memory no recorded call brought in that this launch's arguments
 * point into (foreign.c): recorded now, and from now on read back like
 * memory of another process (lock held).  Returns how many were found,
 * their addresses in found[]. */
static size_t foreign_args(const char *kernel, const uint8_t *args, uint32_t argsize, uint64_t hash,
			   uint64_t *found, size_t max)
{
	struct cap_foreign f[4];
	size_t n = cap_foreign_scan(args, argsize, hash, f, max < ARRAY_SIZE(f) ? max : ARRAY_SIZE(f));

	for (size_t i = 0; i < n; i++) {
		cap_alloc_found_locked(f[i].addr, f[i].size);
		cap_mm_peer(f[i].addr, f[i].size);
		found[i] = f[i].addr;
		note_locked("kernel %s (launch #%llu) takes a pointer to device memory at 0x%llx (%llu bytes; "
			    "argument byte %u) that no recorded call allocated: it is recorded from this launch "
			    "on, read back before each launch that points into it", kernel && *kernel ? kernel : "?",
			    (unsigned long long)S.launches, (unsigned long long)f[i].addr,
			    (unsigned long long)f[i].size, f[i].arg_offset);
	}
	return n;
}

/* Plain pinned memory, and memory of another process or API, that this
 * launch's arguments point into is tracked from now on (managed.c), with a
 * note saying so; device memory no recorded call brought in is found first,
 * except in a launch captured into a graph (lock held): no driver call is
 * made while a stream captures (one the capture mode forbids would
 * invalidate the program's graph). */
static void pinned_args(const char *kernel, const uint8_t *args, uint32_t argsize, uint64_t hash, int captured)
{
	struct cap_mm_promoted got[4];
	uint64_t found[4];
	size_t nf = captured ? 0 : foreign_args(kernel, args, argsize, hash, found, ARRAY_SIZE(found));
	size_t n = cap_mm_args(args, argsize, got, ARRAY_SIZE(got));

	for (size_t i = 0; i < n && i < ARRAY_SIZE(got); i++) {
		int just_found = 0;
		for (size_t k = 0; k < nf; k++)
			just_found |= found[k] == got[i].dev;
		if (just_found)
			continue;   /* its note is foreign_args' */
		note_locked("kernel %s (launch #%llu) takes a pointer to %s at 0x%llx "
			    "(%llu bytes; argument byte %u): %s", kernel && *kernel ? kernel : "?",
			    (unsigned long long)S.launches,
			    got[i].peer ? "device memory another process or API writes" : "pinned host memory",
			    (unsigned long long)got[i].dev,
			    (unsigned long long)got[i].size, got[i].arg_offset,
			    got[i].over_cap ? "it passes GPUREDUCE_HOSTMEM_MAX, so what is written "
			    "into it is not recorded" : got[i].peer ? "its bytes are read back before each "
			    "launch that points into it, from this one on" : "what the CPU writes into it "
			    "is recorded from this launch on");
	}
}

/* A launch's Python stack as its callback read it (pystack.c): the frames'
 * tokens and lines, and their strings only for a stack not written yet. */
struct launch_py {
	struct tr_frame frames[CAP_PY_MAX_FRAMES];
	uint64_t ftoks[CAP_PY_MAX_FRAMES];
	uint32_t flines[CAP_PY_MAX_FRAMES];
	uintptr_t ts;
	int have_strings;          /* frames[] filled, not only ftoks/flines */
	uint32_t n, state;
	struct strbuf store;
};

/* A launch's parameter bytes, in buf when they fit. */
struct launch_args {
	uint8_t *args;
	uint32_t size;
	int hashed;
	uint64_t hash;
	uint8_t buf[1024];
};

static void py_read(struct launch_py *py)
{
	py->n = 0;
	py->ts = 0;
	py->have_strings = 0;
	py->state = cap_py_keys(py->ftoks, py->flines, S.py_frames, &py->n, &py->ts);
	if (py->state == CAP_PY_NEED_FRAMES) {
		py->state = cap_py_frames(py->frames, S.py_frames, &py->n, &py->store, py->ftoks);
		py->have_strings = 1;
	}
}

static void py_strings(struct launch_py *py)
{
	if (!py->have_strings && py->n) {
		py->state = cap_py_frames_at(py->ts, py->frames, S.py_frames, &py->n, &py->store, py->ftoks);
		py->have_strings = 1;
	}
}

static void args_init(struct launch_args *a)
{
	a->args = NULL;
	a->size = 0;
	a->hashed = 0;
	a->hash = 0;
}

static void args_release(struct launch_args *a)
{
	if (a->args != a->buf)
		free(a->args);
	a->args = NULL;
}

/* hashed once: the foreign scan's memo and the short-launch table */
static void args_hash(struct launch_args *a)
{
	if (!a->hashed) {
		a->hash = a->args && a->size ? tr_hash(a->args, a->size) : 0;
		a->hashed = 1;
	}
}

/* The kernel's cached name and layout (fn_get_locked: returns with the
 * lock held); a cache miss (first launch, or after a module unload
 * emptied the cache) is timed on its own line, out of the lap at t. */
static struct fn_info *launch_fn_locked(CUfunction f, uint64_t *t)
{
	struct fn_info *fi;

	t_fn_ns = 0;
	fi = fn_get_locked(f);
	if (cap_prof_on && t_fn_ns) {
		cap_prof_put(CP_L_FNINFO, t_fn_ns);
		*t += t_fn_ns;
		t_fn_ns = 0;
	}
	return fi;
}

/* Before a launch that runs (lock held): a checkpoint if one is due, and
 * a new segment's writer buffered and through the writer thread. */
static void launch_ckpt_locked(void)
{
	cap_wq_poll(&S.w);   /* the bytes the writer thread wrote: in w.offset for due() */
	ckpt_maybe(&S.w, S.launches);   /* may start a new segment */
	if (g_wbuf && !S.w.wcap) {
		tw_set_buffer(&S.w, g_wbuf);   /* a new segment's writer: buffered too */
		cap_wq_attach(&S.w);   /* ...and through the writer thread */
	}
}

/* Pinned memory the launch points into is tracked from now (a captured
 * launch's: written before the graph's launch), and what the CPU (or
 * another process) wrote is recorded before it (lock held). */
static void launch_mm_locked(const struct fn_info *fi, const struct launch_args *a, int captured)
{
	pinned_args(fi->name, a->args, a->size, a->hash, captured);
	if (!captured)
		cap_mm_sync(&S.w, &S.h2d, CAP_MM_LAUNCH);
}

/* The records of one launch, from its test name to its LAUNCH (lock held,
 * recording on): the tensor and source readings are written (and taken
 * over), the parameter bytes built unless a->args holds them already,
 * and, with do_mm, the pinned and managed memory it points into is
 * brought up to date before the LAUNCH (a deferred launch did that in
 * its enter callback: defer_enter).  t: the profile's lap clock. */
static void launch_emit(const struct launch_in *l, struct fn_info *fi, struct launch_py *py,
			struct cap_tm_reading *tm, struct cap_src_reading *src, int captured,
			struct launch_args *a, int do_mm, const CUpti_CallbackData *cb, uint64_t *tp)
{
	struct tr_launch_attr *attrs = NULL, attrbuf[8];
	uint32_t nattrs = 0;
	struct tr_rec r;
	uint64_t t = *tp;
	long ev;

	if (!captured)
		cap_test_note(&S.w);   /* the test this launch belongs to (testname.c) */
	cap_tm_write(&S.w, tm);   /* before the LAUNCH: the blocks live at this launch */
	cap_src_write(&S.w, src);
	fn_write_info_locked(fi);
	CAP_LAP(CP_L_PRE, t);
	if (!a->args)
		a->args = build_args(fi, l, &a->size, a->buf, sizeof(a->buf));
	if (l->cfg && l->cfg->numAttrs && l->cfg->attrs) {
		nattrs = l->cfg->numAttrs;
		/* a launch's few attributes need no allocation */
		attrs = nattrs <= ARRAY_SIZE(attrbuf) ? attrbuf : xcalloc(nattrs, sizeof(*attrs));
		for (uint32_t i = 0; i < nattrs; i++) {
			size_t len = sizeof(l->cfg->attrs[i].value);
			if (len > sizeof(attrs[i].value))
				len = sizeof(attrs[i].value);
			attrs[i].id = (uint32_t)l->cfg->attrs[i].id;
			attrs[i].len = (uint32_t)len;
			memcpy(attrs[i].value, &l->cfg->attrs[i].value, len);
		}
	}
	if (a->args)
		cap_tmap_check_launch(fi->name, fi->params, fi->nparams, a->args, a->size, &fi->tmap_noted);
	if (!fi->noted && (fi->layout_unknown || !*fi->name)) {
		fi->noted = 1;
		note_locked("kernel %s (handle 0x%llx): the driver gave no %s; replay cannot rebuild its launches",
			    *fi->name ? fi->name : "?", (unsigned long long)(uintptr_t)l->f,
			    *fi->name ? "parameter layout" : "name");
	}
	CAP_LAP(CP_ARGS, t);

	memset(&r, 0, sizeof(r));
	r.type = TR_LAUNCH;
	r.u.launch.seq = S.launches;
	r.u.launch.func = (uint64_t)(uintptr_t)l->f;
	r.u.launch.name = fi->name;
	r.u.launch.api = l->api;
	r.u.launch.flags = captured ? TR_F_CAPTURED : 0;
	if (fi->comm || cap_fold_pending())   /* issue 25 */
		r.u.launch.flags |= cap_fold_enter(fi->name, S.launches, a->args, a->size, captured);
	r.u.launch.grid = l->grid;
	r.u.launch.block = l->block;
	r.u.launch.shmem = l->shmem;
	r.u.launch.stream = (uint64_t)(uintptr_t)l->stream;
	r.u.launch.nparams = fi->nparams;
	r.u.launch.params = fi->params;
	r.u.launch.argsize = a->size;
	r.u.launch.args = a->args;
	args_hash(a);
	r.u.launch.args_hash = a->hash;
	r.u.launch.nattrs = nattrs;
	r.u.launch.attrs = attrs;
	r.u.launch.tid = my_tid();
	/* the frames once, as a PYSTACK, and by id here (pystack.c); read
	 * as strings only for a stack not written yet */
	if (py->n && !py->have_strings &&
	    !(r.u.launch.stack = cap_pystack_find(py->ftoks, py->flines, py->n)))
		py_strings(py);
	if (py->n && py->have_strings)
		r.u.launch.stack = cap_pystack_id(&S.w, py->frames, py->ftoks, py->n);
	r.u.launch.py_state = py->state;
	r.u.launch.nframes = r.u.launch.stack ? 0 : py->n;
	r.u.launch.frames = py->frames;
	CAP_LAP(CP_L_FILL, t);
	if (do_mm) {
		launch_mm_locked(fi, a, captured);
		CAP_LAP(CP_L_MANAGED, t);
	}
	ev = cap_same_record(&S.w, &r);
	CAP_LAP(CP_RECORD, t);
	S.last_seq = S.launches++;
	ckpt_progress(S.launches, 0);
	S.last_fi = fi;   /* its name is copied only if it is freed (fns_invalidate) */
	if (ev >= 0 && cb->correlationData)
		*cb->correlationData = S.last_seq + 1;
	if (attrs != attrbuf)
		free(attrs);
	*tp = t;
}

/* ---- blocking in the library (GPUREDUCE_BLOCKING=library) ----------------
 *
 * `gpureduce capture` runs the program with CUDA_LAUNCH_BLOCKING=1: each
 * launch returns once its kernel has finished, with the kernel's fault as
 * its result.  With GPUREDUCE_BLOCKING=library (set with
 * CUDA_LAUNCH_BLOCKING=0 by capture, src/cmd-capture.c) the driver
 * launches asynchronously and the library blocks instead: in a launch's
 * (or graph launch's) exit callback it waits for the launch's stream, and
 * a sticky error that wait returns becomes the launch's own result.  What
 * this buys: a launch's record (its Python stack, fields, the record's
 * write) is made in the exit callback, while the kernel runs, instead of
 * before it starts (defer_enter, defer_exit).  What must precede the
 * kernel stays in the enter callback: a checkpoint, the parameter bytes,
 * and the pinned, managed and foreign memory they point into.  A kernel's
 * first launch, a communication kernel to fold, a launch captured into a
 * graph and every launch under --tensors are recorded whole at enter, as
 * without this mode (they still wait at exit).  docs/CAPTURE-COST.md. */
static int g_libsync;

struct launch_defer {         /* a launch recorded in halves, on this thread */
	int on;
	struct launch_in l;
	struct launch_args a;
};
static __thread struct launch_defer t_defer;
static __thread uint64_t t_sync_ns;   /* profile: the wait, left out of the callback's own time */

/* The pre-kernel half of a launch, in its enter callback: 1 when done
 * (defer_exit makes the record), 0 when the launch is to be recorded
 * whole now. */
static int defer_enter(const struct launch_in *l, uint64_t *tp)
{
	struct launch_defer *d = &t_defer;
	struct fn_info *fi;
	uint64_t t = *tp;

	if (d->on) {   /* an exit callback never came (recording stopped) */
		args_release(&d->a);
		d->on = 0;
	}
	if (cap_tm_enabled() || capturing(l->stream))
		return 0;
	CAP_LAP(CP_L_CAPTURING, t);
	fi = launch_fn_locked(l->f, &t);   /* lock held from here */
	CAP_LAP(CP_L_LOOKUP, t);
	if (!fi->src_asked || fi->comm || cap_fold_pending() || !S.recording) {
		unlock();
		*tp = t;   /* the laps so far stand; the whole launch goes on from here */
		return 0;
	}
	launch_ckpt_locked();
	CAP_LAP(CP_L_CKPT, t);
	args_init(&d->a);
	d->a.args = build_args(fi, l, &d->a.size, d->a.buf, sizeof(d->a.buf));
	args_hash(&d->a);
	CAP_LAP(CP_ARGS, t);
	launch_mm_locked(fi, &d->a, 0);
	CAP_LAP(CP_L_MANAGED, t);
	d->l = *l;
	d->on = 1;
	unlock();
	*tp = t;
	return 1;
}

/* The rest of a launch deferred by defer_enter, in its exit callback,
 * before the wait for its kernel (lib_block_after). */
static void defer_exit(const CUpti_CallbackData *cb)
{
	struct launch_defer *d = &t_defer;
	struct launch_py py;
	struct fn_info *fi;
	uint64_t t = CAP_PROF_T0(), start = t;

	d->on = 0;
	py.store = (struct strbuf)STRBUF_INIT;
	py_read(&py);
	CAP_LAP(CP_PYFRAMES, t);
	fi = fn_get_locked(d->l.f);   /* lock held from here */
	if (S.recording)
		launch_emit(&d->l, fi, &py, NULL, NULL, 0, &d->a, 0, cb, &t);
	unlock();
	args_release(&d->a);
	sb_release(&py.store);
	if (cap_prof_on) {
		CAP_LAP(CP_L_TAIL, t);
		cap_prof_extend(CP_LAUNCH, t - start);
	}
}

/* Wait for the stream s, in relaxed capture mode when any stream may be
 * capturing (a wait on a stream that is not capturing is legal, but in
 * the global mode another thread's capture forbids it). */
static CUresult lib_block(CUstream s)
{
	CUstreamCaptureMode m = CU_STREAM_CAPTURE_MODE_RELAXED;
	int ex = __atomic_load_n(&g_captures, __ATOMIC_ACQUIRE) &&
		 cuThreadExchangeStreamCaptureMode(&m) == CUDA_SUCCESS;
	CUresult r = cuStreamSynchronize(s);

	if (ex)
		cuThreadExchangeStreamCaptureMode(&m);
	return r;
}

/* A launch or graph launch that the driver accepted: wait for it, and give
 * a sticky error as its result (a launch faults "at" itself, as under
 * CUDA_LAUNCH_BLOCKING=1). */
static void lib_block_after(CUpti_CallbackId cbid, const CUpti_CallbackData *cb)
{
	struct launch_in l;
	CUstream s;
	CUresult r;
	uint64_t t0;

	if (!cb->functionReturnValue || *(const CUresult *)cb->functionReturnValue != CUDA_SUCCESS)
		return;
	if (is_launch(cbid)) {
		if (get_launch(cbid, cb->functionParams, &l) < 0)
			return;
		s = l.stream;
	} else if (cbid == CB(cuGraphLaunch)) {
		s = ((const cuGraphLaunch_params *)cb->functionParams)->hStream;
	} else if (cbid == CB(cuGraphLaunch_ptsz)) {
		s = eff_stream(((const cuGraphLaunch_ptsz_params *)cb->functionParams)->hStream, 1);
	} else {
		return;
	}
	if (capturing(s))
		return;   /* nothing ran */
	t0 = CAP_PROF_T0();
	r = lib_block(s);
	if (cap_prof_on) {
		uint64_t ns = cap_prof_now_ns() - t0;
		cap_prof_put(CP_LIBSYNC, ns);
		t_sync_ns += ns;
	}
	if (r == CUDA_SUCCESS)
		return;
	if (is_sticky(r)) {
		*(CUresult *)cb->functionReturnValue = r;
	} else if (lock_rec()) {
		if (S.failed_notes < MAX_FAILED_NOTES) {
			S.failed_notes++;
			note_locked("blocking in the library: waiting for %s's stream returned %s; this launch "
				    "was not waited for", cb->functionName, err_name(r));
		}
		unlock();
	}
}

static void on_launch_enter(CUpti_CallbackId cbid, const CUpti_CallbackData *cb)
{
	struct launch_in l;
	struct launch_py py;
	struct launch_args a;
	struct fn_info *fi;
	struct cap_tm_reading *tm;
	struct cap_src_reading *src = NULL;
	int captured;
	/* GPUREDUCE_CAPTURE_PROFILE: each CAP_LAP ends a part (prof.h) */
	uint64_t t = t_cb_ns, start = t_cb_ns;

	CAP_LAP(CP_L_DISPATCH, t);
	if (get_launch(cbid, cb->functionParams, &l) < 0)
		return;
	if (g_libsync && defer_enter(&l, &t)) {
		if (cap_prof_on)
			cap_prof_put(CP_LAUNCH, t - start);
		return;
	}
	args_init(&a);
	py.store = (struct strbuf)STRBUF_INIT;
	/* Everything that may call into Python or the driver happens first,
	 * outside the lock. */
	py_read(&py);
	CAP_LAP(CP_PYFRAMES, t);
	tm = cap_tm_read();   /* capture --tensors: the allocator's blocks (torchmem.c) */
	CAP_LAP(CP_L_TENSORS, t);
	captured = capturing(l.stream);
	CAP_LAP(CP_L_CAPTURING, t);
	fi = launch_fn_locked(l.f, &t);   /* lock held from here */
	CAP_LAP(CP_L_LOOKUP, t);
	if (!fi->src_asked) {
		/* a kernel's first launch: ENV, Triton source (source.c, which
		 * takes the GIL: not under the lock) */
		fi->src_asked = 1;
		unlock();
		py_strings(&py);
		src = cap_src_read(l.f, py.state, py.frames, py.n);
		fi = fn_get_locked(l.f);
		CAP_LAP(CP_L_SOURCE, t);
	}
	if (!S.recording)
		goto out;

	if (!captured)
		launch_ckpt_locked();
	CAP_LAP(CP_L_CKPT, t);
	launch_emit(&l, fi, &py, tm, src, captured, &a, 1, cb, &t);
	tm = NULL;
	src = NULL;
out:
	unlock();
	cap_tm_free(tm);
	cap_src_free(src);
	args_release(&a);
	sb_release(&py.store);
	if (cap_prof_on) {
		CAP_LAP(CP_L_TAIL, t);
		cap_prof_put(CP_LAUNCH, t - start);
	}
}

/* ---- graph nodes as records, for graphapi.c (lock held, recording on) ---- */

uint8_t *cap_kernel_args(void *f, void **kp, void **extra, uint32_t *size)
{
	struct launch_in l;
	struct fn_info *fi = fn_get_locked(f);
	uint8_t *args;

	memset(&l, 0, sizeof(l));
	l.f = f;
	l.kp = kp;
	l.extra = extra;
	args = build_args(fi, &l, size, NULL, 0);
	unlock();
	return args;
}

long cap_emit_node_launch(void *f, struct tr_dim3 grid, struct tr_dim3 block, uint32_t shmem,
			  uint8_t *args, uint32_t argsize, uint64_t stream)
{
	struct fn_info *fi = fn_get_locked(f);
	struct tr_rec r;
	long ev;

	fn_write_info_locked(fi);
	pinned_args(fi->name, args, argsize, 0, 0);   /* tracked before the graph's launch */
	memset(&r, 0, sizeof(r));
	r.type = TR_LAUNCH;
	r.u.launch.seq = S.launches;
	r.u.launch.func = (uint64_t)(uintptr_t)f;
	r.u.launch.name = fi->name;
	r.u.launch.api = TR_API_LAUNCH_KERNEL;
	r.u.launch.flags = TR_F_CAPTURED | cap_fold_enter(fi->name, S.launches, args, argsize, 1);
	r.u.launch.grid = grid;
	r.u.launch.block = block;
	r.u.launch.shmem = shmem;
	r.u.launch.stream = stream;
	r.u.launch.nparams = fi->nparams;
	r.u.launch.params = fi->params;
	r.u.launch.argsize = argsize;
	r.u.launch.args = args;
	r.u.launch.tid = my_tid();
	r.u.launch.py_state = TR_PY_NONE;
	ev = cap_same_record(&S.w, &r);
	S.last_seq = S.launches++;
	S.last_fi = fi;
	unlock();
	return ev;
}

long cap_emit_node_memset(const struct CUDA_MEMSET_NODE_PARAMS_st *p, uint64_t stream)
{
	struct tr_rec r;

	memset(&r, 0, sizeof(r));
	r.type = TR_MEMSET;
	r.u.memset.dst = p->dst;
	r.u.memset.value = p->value;
	r.u.memset.elem_size = p->elementSize;
	r.u.memset.width = p->width;
	r.u.memset.height = p->height ? p->height : 1;
	r.u.memset.pitch = p->height > 1 ? p->pitch : 0;
	r.u.memset.stream = stream;
	r.u.memset.flags = TR_F_ASYNC | TR_F_CAPTURED;
	return tw_record(&S.w, &r);
}

int cap_is_device_ptr(uint64_t p)
{
	return is_device_ptr((CUdeviceptr)p);
}

void cap_note(const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	sb_vaddf(&sb, fmt, ap);
	va_end(ap);
	note_locked("%s", sb.buf);
	sb_release(&sb);
}

uint64_t cap_launch_seq(void)
{
	return __atomic_load_n(&S.launches, __ATOMIC_RELAXED);
}

void cap_locked_write(void (*fn)(struct trace_writer *w, uint64_t seq, void *arg), void *arg, int stopped_too)
{
	if (is_off() || getpid() != S.pid) {
		fn(NULL, 0, arg);
		return;
	}
	pthread_mutex_lock(&g_lock);
	if ((S.recording || stopped_too) && S.w.fd >= 0 && !S.ended) {
		fn(&S.w, S.launches, arg);
		if (stopped_too)
			cap_wq_sync(&S.w);   /* as after the FAULT record */
	} else {
		fn(NULL, 0, arg);
	}
	unlock();
}

long cap_put_record(const struct tr_rec *r)
{
	long ev;
	if (!lock_rec())
		return -1;
	ev = tw_record(&S.w, r);
	/* a map is launched long after its encode: later segments get it */
	if (ev >= 0 && r->type == TR_TENSORMAP)
		ckpt_carry_tmap(&r->u.tmap);
	unlock();
	return ev;
}

void cap_emit_graph(uint32_t type, uint64_t stream, uint64_t graph, uint64_t exec)
{
	struct tr_rec r;

	memset(&r, 0, sizeof(r));
	r.type = type;
	r.u.graph.stream = stream;
	r.u.graph.graph = graph;
	r.u.graph.exec = exec;
	tw_record(&S.w, &r);
}

/* ---- copies ------------------------------------------------------------ */

/* Write one copy record; lock held, recording on.  H2D reads the host bytes.
 * Returns the event number or -1. */
static long emit_copy(uint32_t type, uint64_t dst, uint64_t src, uint64_t size,
		      CUstream stream, uint32_t flags)
{
	struct tr_rec r;
	uint64_t hash = 0;

	/* the bytes: to the writer thread, or hashed and stored here (writeq.c) */
	if (type == TR_MEMCPY_H2D && g_ablate != ABLATE_NOBYTES && cap_wq_blob(&S.w, (const void *)(uintptr_t)src, size, &hash) < 0)
		return -1;
	memset(&r, 0, sizeof(r));
	r.type = type;
	r.u.copy.dst = dst;
	r.u.copy.src = src;
	r.u.copy.size = size;
	r.u.copy.blob = hash;
	r.u.copy.stream = (uint64_t)(uintptr_t)stream;
	r.u.copy.flags = flags;
	if (type == TR_MEMCPY_H2D)
		S.h2d += size;
	return tw_record(&S.w, &r);
}

long cap_emit_fold_copy(uint64_t dst, const void *p, uint64_t size)
{
	return emit_copy(TR_MEMCPY_H2D, dst, (uint64_t)(uintptr_t)p, size, NULL, TR_F_FOLDED);
}

long cap_emit_node_copy(uint32_t type, uint64_t dst, uint64_t src, uint64_t size, uint64_t stream)
{
	return emit_copy(type, dst, src, size, (CUstream)(uintptr_t)stream, TR_F_ASYNC | TR_F_CAPTURED);
}

/* ---- the writer and its lock, for copies.c (capture.h) ---- */

int cap_lock_rec(void)
{
	return lock_rec();
}

void cap_unlock(void)
{
	unlock();
}

void cap_note_once(uint32_t cbid, const char *fmt, const char *api)
{
	note_once(cbid, fmt, api);
}

struct CUstream_st *cap_eff_stream(struct CUstream_st *s, int per_thread)
{
	return eff_stream(s, per_thread);
}

int cap_capturing(struct CUstream_st *s)
{
	return capturing(s);
}

void cap_set_corr(uint64_t *correlation, long ev)
{
	if (correlation && ev >= 0)
		*correlation = (uint64_t)ev + 1;
}

long cap_emit_copy(uint32_t type, uint64_t dst, uint64_t src, uint64_t size, struct CUstream_st *stream,
		   uint32_t flags)
{
	return emit_copy(type, dst, src, size, stream, flags);
}

void cap_sync_hostmem(uint64_t src)
{
	cap_mm_copy_src(src);
	cap_mm_sync(&S.w, &S.h2d, CAP_MM_COPY);
}

long cap_write_record(const struct tr_rec *r)
{
	return tw_record(&S.w, r);
}

/* ---- graphs ------------------------------------------------------------- */

/* CUDA graphs made by stream capture (format 1.1): where capture began
 * and ended, which graph was instantiated as which exec, and each launch of
 * an exec.  The graph's nodes are the records flagged captured in between;
 * only handles are recorded here, so no driver call is made. */
static void rec_graph(uint32_t type, CUstream stream, uint64_t graph, uint64_t exec)
{
	if (type == TR_GRAPH_BEGIN)
		__atomic_store_n(&g_captures, 1, __ATOMIC_RELEASE);
	if (!lock_rec())
		return;
	if (type == TR_GRAPH_BEGIN)
		ckpt_graph_seen(&S.w);   /* graph nodes cannot be carried across segments */
	if (type == TR_GRAPH_LAUNCH)
		cap_mm_sync(&S.w, &S.h2d, CAP_MM_GRAPH);
	cap_emit_graph(type, (uint64_t)(uintptr_t)stream, graph, exec);
	unlock();
}

/* ---- the writer's side of graphs, for graphapi.c (capture.h) ---- */

void cap_graph_mark(uint32_t type, struct CUstream_st *stream, uint64_t graph, uint64_t exec)
{
	rec_graph(type, stream, graph, exec);
}

void cap_graph_seen(void)
{
	ckpt_graph_seen(&S.w);
}

/* Calls that change device memory (or run kernels) in ways the trace
 * cannot express: one note per API so replay's user knows what is missing. */
static int on_unsupported_enter(CUpti_CallbackId cbid, const CUpti_CallbackData *cb)
{
	switch (cbid) {
	case CB(cuMemcpyHtoA_v2): case CB(cuMemcpyHtoA_v2_ptds):
	case CB(cuMemcpyHtoAAsync_v2): case CB(cuMemcpyHtoAAsync_v2_ptsz):
	case CB(cuMemcpyDtoA_v2): case CB(cuMemcpyDtoA_v2_ptds):
	case CB(cuMemcpyAtoD_v2): case CB(cuMemcpyAtoD_v2_ptds):
	case CB(cuMemcpyAtoA_v2): case CB(cuMemcpyAtoA_v2_ptds):
	case CB(cuMemcpy3DPeer): case CB(cuMemcpy3DPeer_ptds):
	case CB(cuMemcpy3DPeerAsync): case CB(cuMemcpy3DPeerAsync_ptsz):
	case CB(cuMemcpy3DBatchAsync): case CB(cuMemcpy3DBatchAsync_ptsz):
	case CB(cuMemcpy3DBatchAsync_v2): case CB(cuMemcpy3DBatchAsync_v2_ptsz):
	case CB(cuMemMapArrayAsync): case CB(cuMemMapArrayAsync_ptsz):
		note_once(cbid, "unsupported copy form %s: replay will miss these bytes", cb->functionName);
		return 1;
	case CB(cuGraphLaunch): {
		const cuGraphLaunch_params *q = cb->functionParams;
		rec_graph(TR_GRAPH_LAUNCH, eff_stream(q->hStream, 0), 0, (uint64_t)(uintptr_t)q->hGraph);
		return 1;
	}
	case CB(cuGraphLaunch_ptsz): {
		const cuGraphLaunch_ptsz_params *q = cb->functionParams;
		rec_graph(TR_GRAPH_LAUNCH, eff_stream(q->hStream, 1), 0, (uint64_t)(uintptr_t)q->hGraphExec);
		return 1;
	}
	case CB(cuLaunchCooperativeKernelMultiDevice):
	case CB(cuLaunch): case CB(cuLaunchGrid): case CB(cuLaunchGridAsync):
		note_once(cbid, "legacy launch API %s: these launches are not recorded", cb->functionName);
		return 1;
	case CB(cuTexObjectCreate): case CB(cuSurfObjectCreate):
		/* a kernel parameter holds the handle; replay passes it as
		 * captured, and no such object exists there */
		note_once(cbid, "%s: texture and surface objects are not recorded; a kernel that reads or "
			  "writes through one will not replay as captured", cb->functionName);
		return 1;
	default:
		return 0;
	}
}

/* A module or library is being unloaded: its kernels' handles may come
 * back as others, and its variables leave the checkpoints' table
 * (fns_invalidate). */
static int on_unload_enter(CUpti_CallbackId cbid)
{
	switch (cbid) {
	case CB(cuModuleUnload): case CB(cuLibraryUnload):
		fns_invalidate();
		return 1;
	default:
		return 0;
	}
}

/* ---- function attributes -------------------------------------------------- */

/* A FUNC_ATTR is carried into later segments (checkpoint.c) unless it sets
 * the value the last carried one for that kernel and attribute set:
 * Triton sets the same attribute before every launch. */
static int func_attr_changed(const struct fn_info *fi, CUfunction_attribute attr, int value)
{
	struct cap_map_ent *e;
	uint64_t key;
	int changed;

	/* the kernel's name hashed once, not formatted and hashed per call */
	key = fi->name_hash ^ (((uint64_t)(uint32_t)attr + 1) * 0x9e3779b97f4a7c15ull);
	key = key ? key : 1;
	e = cap_map_get(&S.attr_last, key);
	changed = !e || e->v1 != (uint64_t)(uint32_t)value;
	if (changed)
		cap_map_put(&S.attr_last, key, (uint64_t)(uint32_t)value, 0);
	return changed;
}

static void rec_func_attr(CUfunction f, CUfunction_attribute attr, int value)
{
	struct fn_info *fi = fn_get_locked(f);
	struct tr_rec r;
	uint64_t start;
	int changed;

	if (S.recording) {
		memset(&r, 0, sizeof(r));
		r.type = TR_FUNC_ATTR;
		r.u.func_attr.kernel = fi->name;
		r.u.func_attr.attr = (uint32_t)attr;
		r.u.func_attr.value = value;
		/* only a changed value is carried: only then is its offset asked */
		changed = !S.w.failed && func_attr_changed(fi, attr, value);
		start = changed ? cap_wq_mark(&S.w) : S.w.offset;
		if (tw_record(&S.w, &r) >= 0 && changed)
			ckpt_carry(&S.w, start, 1, 0, 0);
	}
	unlock();
}

/* ---- faults and failed calls ------------------------------------------------ */

static void on_result(CUpti_CallbackId cbid, const CUpti_CallbackData *cb)
{
	CUresult res;
	uint64_t corr = cb->correlationData ? *cb->correlationData : 0;
	int launch = is_launch(cbid);

	if (!cb->functionReturnValue)
		return;
	res = *(const CUresult *)cb->functionReturnValue;
	if (res == CUDA_SUCCESS)
		return;
	if (is_sticky(res)) {
		const char *ename = err_name(res);
		struct fn_info *fi = NULL;
		struct launch_in l;
		struct tr_rec r;

		memset(&r, 0, sizeof(r));
		if (launch && corr && get_launch(cbid, cb->functionParams, &l) == 0)
			fi = fn_get_locked(l.f);   /* this launch's own kernel */
		else
			pthread_mutex_lock(&g_lock);
		if (!S.recording) {
			unlock();
			return;
		}
		r.type = TR_FAULT;
		r.u.fault.code = (uint32_t)res;
		r.u.fault.error = ename;
		r.u.fault.api = cb->functionName;
		if (fi) {
			r.u.fault.launch_seq = corr - 1;
			r.u.fault.at_launch = 1;
			r.u.fault.kernel = fi->name;
		} else {
			r.u.fault.launch_seq = S.last_seq;
			r.u.fault.at_launch = 0;
			/* a graph launch runs many kernels, and the last one
			 * recorded (a node captured long ago, or unrelated work) is
			 * not known to be the one that faulted: replay names it */
			r.u.fault.kernel = cbid == CB(cuGraphLaunch) || cbid == CB(cuGraphLaunch_ptsz) ?
					   "" : S.last_fi ? S.last_fi->name : S.last_name.buf;
		}
		tw_record(&S.w, &r);
		cap_wq_sync(&S.w);   /* everything up to the fault is on disk now */
		/* when, for `capture`'s "which rank faulted first" (cmd-capture.c) */
		status_line("fault %d %llu", (int)S.pid, (unsigned long long)realtime_ns());
		/* the context is dead: nothing after this replays */
		__atomic_store_n(&S.recording, 0, __ATOMIC_RELAXED);
		unlock();
		cap_tm_after_fault(cb->functionName);   /* --tensors: the blocks up to the fault (torchmem.c) */
		return;
	}
	/* A recorded operation that failed did not happen: say so. */
	if (corr && lock_rec()) {
		if (S.failed_notes < MAX_FAILED_NOTES) {
			S.failed_notes++;
			if (launch)
				note_locked("launch #%llu (%s) returned %s: it did not run",
					    (unsigned long long)(corr - 1), cb->functionName, err_name(res));
			else
				note_locked("event #%llu (%s) returned %s: it did not take effect",
					    (unsigned long long)(corr - 1), cb->functionName, err_name(res));
			if (S.failed_notes == MAX_FAILED_NOTES)
				note_locked("further failed calls are not noted");
		}
		unlock();
	}
}

/* ---- dispatch --------------------------------------------------------------- */

static void on_driver(CUpti_CallbackId cbid, const CUpti_CallbackData *cb)
{
	if (cb->callbackSite == CUPTI_API_ENTER) {
		if (cb->correlationData)
			*cb->correlationData = 0;
		cap_py_calibrate();   /* learns the frame layout once, if the GIL is held */
		if (is_launch(cbid))
			on_launch_enter(cbid, cb);
		else if (!cap_copy_enter(cbid, cb) && !cap_memset_enter(cbid, cb) &&
			 !cap_free_enter(cbid, cb->functionParams) && !on_unload_enter(cbid))
			on_unsupported_enter(cbid, cb);
		return;
	}
	if (t_defer.on && is_launch(cbid))
		defer_exit(cb);   /* its record, while the kernel runs */
	if (g_libsync)
		lib_block_after(cbid, cb);   /* then the wait (GPUREDUCE_BLOCKING=library) */
	on_result(cbid, cb);
	if (is_launch(cbid) && cap_fold_pending() && lock_rec()) {
		/* a communication kernel's effect (fold.c) */
		cap_fold_exit(cb->functionReturnValue && *(const CUresult *)cb->functionReturnValue == CUDA_SUCCESS);
		unlock();
	}
	if (!cb->functionReturnValue || *(const CUresult *)cb->functionReturnValue != CUDA_SUCCESS)
		return;
	switch (cbid) {
	case CB(cuFuncSetAttribute): {
		const cuFuncSetAttribute_params *q = cb->functionParams;
		rec_func_attr(q->hfunc, q->attrib, q->value);
		break;
	}
	case CB(cuKernelSetAttribute): {
		const cuKernelSetAttribute_params *q = cb->functionParams;
		rec_func_attr((CUfunction)q->kernel, q->attrib, q->val);
		break;
	}
	default:
		if (cap_tmap_exit(cbid, cb->functionParams))
			break;
		cap_alloc_exit(cbid, cb->functionParams);
		cap_graph_exit(cbid, cb->functionParams);
	}
}

static void on_resource(CUpti_CallbackId cbid, const CUpti_ResourceData *rd)
{
	int busy = t_busy;
	t_busy = 1;   /* our own driver calls below are not the program's */
	switch (cbid) {
	case CUPTI_CBID_RESOURCE_CONTEXT_CREATED:
		rec_device(rd->context);
		break;
	case CUPTI_CBID_RESOURCE_MODULE_LOADED:
		rec_module((const CUpti_ModuleResourceData *)rd->resourceDescriptor);
		break;
	case CUPTI_CBID_RESOURCE_MODULE_UNLOAD_STARTING:
		fns_invalidate();
		break;
	default:
		break;
	}
	t_busy = busy;
}

static void CUPTIAPI on_callback(void *ud, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
				 const void *data)
{
	(void)ud;
	if (is_off() || !data)
		return;
	if (domain == CUPTI_CB_DOMAIN_RESOURCE) {
		/* Even inside our own driver calls: a module loaded lazily by
		 * them is still the program's module. */
		on_resource(cbid, data);
		return;
	}
	if (domain != CUPTI_CB_DOMAIN_DRIVER_API || t_busy || g_ablate == ABLATE_DISPATCH ||
	    !__atomic_load_n(&S.recording, __ATOMIC_RELAXED))
		return;   /* after the fault or the end there is nothing to record */
	if (__atomic_load_n(&g_paused, __ATOMIC_RELAXED) || g_ablate == ABLATE_WAIT) {
		/* paused (or GPUREDUCE_CAPTURE_ABLATE=wait, for the whole run):
		 * nothing recorded, but launches still block */
		if (g_libsync && ((const CUpti_CallbackData *)data)->callbackSite == CUPTI_API_EXIT) {
			t_busy = 1;
			lib_block_after(cbid, data);
			t_busy = 0;
		}
		return;
	}
	t_busy = 1;
	if (cap_prof_on) {
		const CUpti_CallbackData *cb = data;
		uint64_t t0 = cap_prof_now_ns(), t1;
		t_cb_ns = t0;
		t_sync_ns = 0;
		on_driver(cbid, data);
		t1 = cap_prof_now_ns() - t_sync_ns;   /* the library's wait for a kernel is not its own time */
		cap_prof_put(CP_CALLBACK, t1 - t0);
		if (!is_launch(cbid))
			cap_prof_put(CP_OTHER, t1 - t0);
		else if (cb->callbackSite == CUPTI_API_EXIT)
			cap_prof_put(CP_LAUNCH_EXIT, t1 - t0);
	} else {
		on_driver(cbid, data);
	}
	t_busy = 0;
}

/* For measurements only (tests/gpu/hostfed.py's HOSTFED_ALTERNATE): the
 * program, having found this library among its loaded objects, turns its
 * driver callbacks off (pause 1) and on again (0), so that steps with and
 * without capture alternate in one process, on one machine state, where
 * runs of their own differ by more than capture's cost.  The first pause
 * leaves a NOTE: what ran while paused is missing, and the trace does not
 * replay as captured.  Returns 0, or -1 when the library is not capturing. */
__attribute__((visibility("default"))) int gpureduce_capture_pause(int pause)
{
	static int noted;

	if (is_off())
		return -1;
	if (pause && !noted && lock_rec()) {
		noted = 1;
		note_locked("capture paused by the program (gpureduce_capture_pause, for measurements): what ran "
			    "while paused is not recorded, and this trace does not replay as captured");
		unlock();
	}
	__atomic_store_n(&g_paused, pause ? 1 : 0, __ATOMIC_RELEASE);
	return 0;
}

/* ---- process lifetime ------------------------------------------------------ */

static void at_exit(int status, void *arg)
{
	struct tr_rec r;

	(void)arg;
	if (is_off() || getpid() != S.pid)
		return;
	pthread_mutex_lock(&g_lock);
	if (S.w.fd >= 0 && !S.ended) {
		ckpt_finish(&S.w);
		memset(&r, 0, sizeof(r));
		r.type = TR_END;
		r.u.end.exit_code = status;
		r.u.end.launches = S.launches;
		r.u.end.allocs = cap_alloc_count();
		r.u.end.bytes_h2d = S.h2d;
		tw_record(&S.w, &r);
		cap_wq_sync(&S.w);   /* the writer thread's queue too */
		ckpt_progress(S.launches, 1);
		S.ended = 1;
		__atomic_store_n(&S.recording, 0, __ATOMIC_RELAXED);
	}
	unlock();
	cap_prof_report();
}

/* flusher.c's timer: what the buffer holds goes to disk.  A child after
 * fork has no such thread, and g_off keeps it from writing. */
static void flush_tick(void)
{
	if (is_off())
		return;
	pthread_mutex_lock(&g_lock);
	if (S.w.fd >= 0 && S.w.wlen)
		tw_flush(&S.w);   /* into the writer thread's queue, when there is one */
	cap_wq_poll(&S.w);
	unlock();
}

/* GPUREDUCE_FLUSH_MS (100; 0: one write(2) per record, as before 1.4);
 * GPUREDUCE_CAPTURE_LEGACY=1: the writer as it was before issue 26 (one
 * write(2) per record, zstd tried on every blob), for make bench-cpu's
 * side-by-side rows.  With buffering and GPUREDUCE_WRITER_THREAD=1, the
 * writer thread (writeq.c), its ring GPUREDUCE_STAGING_MIB (64) MiB.  Off
 * by default (on with GPUREDUCE_BLOCKING=library, unless it is 0): on the
 * H200's host-fed loop (bench-hostfed, 2026-12-04) the
 * loop took 7.54 s with it against 6.83 s without (median of 3), though
 * the program's thread spent 0.34 ms per MiB copied in instead of 0.85;
 * on an H100 (2026-12-06) five alternating pairs put it no faster (9.90 s
 * against 9.63 s, medians). */
static void start_buffering(void)
{
	const char *s = getenv("GPUREDUCE_FLUSH_MS");
	const char *legacy = getenv("GPUREDUCE_CAPTURE_LEGACY");
	const char *wt = getenv("GPUREDUCE_WRITER_THREAD");
	const char *mib = getenv("GPUREDUCE_STAGING_MIB");
	long ms = s && *s ? strtol(s, NULL, 10) : 100;
	long stage = mib && *mib ? strtol(mib, NULL, 10) : 64;

	if (legacy && !strcmp(legacy, "1")) {
		S.w.zstd_always = 1;
		return;
	}
	if (ms <= 0 || cap_flusher_start((unsigned)(ms > 60000 ? 60000 : ms), flush_tick) < 0)
		return;
	g_wbuf = 256 << 10;
	tw_set_buffer(&S.w, g_wbuf);
	/* with the library blocking, on unless GPUREDUCE_WRITER_THREAD=0: the
	 * two together were the cheapest way on an H100's host-fed loop
	 * (2026-12-06, docs/CAPTURE-COST.md) */
	if ((wt && *wt ? !strcmp(wt, "1") : g_libsync) && stage > 0 &&
	    cap_wq_start((uint64_t)(stage > 65536 ? 65536 : stage) << 20) == 0)
		cap_wq_attach(&S.w);
}

/* Before a fork: what the writer thread holds goes to disk first (the
 * child never writes; the parent's records before the fork are safe
 * whatever becomes of it). */
static void before_fork(void)
{
	if (is_off() || getpid() != S.pid)
		return;
	pthread_mutex_lock(&g_lock);
	if (S.w.fd >= 0)
		cap_wq_sync(&S.w);
	unlock();
}

/* A forked child shares our file: it must not write into it (the lock may
 * even be held by a thread that does not exist in the child). */
static void after_fork_child(void)
{
	t_tid = 0;
	__atomic_store_n(&g_off, 1, __ATOMIC_RELEASE);
}

/* This process's rank as the job states it (torchrun, mp.spawn users,
 * SLURM/MPI launchers through RANK): RANK, else LOCAL_RANK; NULL if neither
 * is a plain number. */
static const char *job_rank(void)
{
	static const char *const vars[] = { "RANK", "LOCAL_RANK" };
	for (size_t i = 0; i < ARRAY_SIZE(vars); i++) {
		const char *v = getenv(vars[i]);
		if (v && *v && strspn(v, "0123456789") == strlen(v) && strlen(v) < 10)
			return v;
	}
	return NULL;
}

/*
 * Create the trace.  O_EXCL: another CUDA process of the same run (a child
 * that inherited GPUREDUCE_TRACE) must not truncate the first one's trace.
 * PATH ending in '/' (`capture -o DIR/`): every process writes
 * DIR/rankR.bin, or DIR/pidP.bin when the job names no rank.  Otherwise the
 * first process writes PATH and the others PATH.rankR or PATH.PID.  A name
 * taken already (a DataLoader worker inherits its rank's RANK) gets .PID
 * added.  Returns the fd (path in *actual) or -1.
 */
static int open_trace(const char *path, struct strbuf *actual, struct strbuf *err)
{
	size_t len = strlen(path);
	const char *rank = job_rank();
	int dir = len && path[len - 1] == '/';
	int fd = -1;

	sb_reset(actual);
	if (dir) {
		if (rank)
			sb_addf(actual, "%srank%s.bin", path, rank);
		else
			sb_addf(actual, "%spid%d.bin", path, (int)getpid());
	} else {
		sb_adds(actual, path);
	}
	fd = open(actual->buf, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd >= 0 || errno != EEXIST)
		goto out;
	if (!dir && rank) {
		sb_reset(actual);
		sb_addf(actual, "%s.rank%s", path, rank);
		fd = open(actual->buf, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
		if (fd >= 0 || errno != EEXIST)
			goto out;
	}
	/* a pid is this run's own: a file of that name is a stale one */
	if (dir && rank) {
		sb_reset(actual);
		sb_addf(actual, "%srank%s.pid%d.bin", path, rank, (int)getpid());
	} else if (!dir) {
		sb_reset(actual);
		sb_addf(actual, "%s.%d", path, (int)getpid());
	}
	fd = open(actual->buf, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
out:
	if (fd < 0)
		sb_addf(err, "%s: cannot create trace: %s", actual->buf, strerror(errno));
	return fd;
}

static int enable_callbacks(void)
{
	static const CUpti_CallbackId res[] = {
		CUPTI_CBID_RESOURCE_CONTEXT_CREATED,
		CUPTI_CBID_RESOURCE_MODULE_LOADED,
		CUPTI_CBID_RESOURCE_MODULE_UNLOAD_STARTING,
	};
	const char *all = getenv("GPUREDUCE_CAPTURE_ALL_CALLBACKS");
	unsigned failed = 0;
	int ret = 0;

	/* Only the driver calls capture handles, and those a fault may
	 * surface in (cbids.c); the whole domain when asked, or when CUPTI
	 * took none of them one by one. */
	if ((all && !strcmp(all, "1")) || cap_cbids_enable(S.sub, &failed) < 0) {
		if (cuptiEnableDomain(1, S.sub, CUPTI_CB_DOMAIN_DRIVER_API) != CUPTI_SUCCESS)
			ret = -1;
	} else if (failed) {
		pthread_mutex_lock(&g_lock);
		note_locked("CUPTI refused %u of the driver callbacks capture subscribes to "
			    "(APIs this driver does not have?)", failed);
		unlock();
	}
	for (size_t i = 0; i < ARRAY_SIZE(res); i++)
		if (cuptiEnableCallback(1, S.sub, CUPTI_CB_DOMAIN_RESOURCE, res[i]) != CUPTI_SUCCESS)
			ret = -1;
	return ret;
}

static void refuse(int allow, const char *what)
{
	if (allow)
		return;
	dprintf(2, "gpureduce: %s; not running the program half-captured\n", what);
	_exit(REFUSE_EXIT);
}

__attribute__((visibility("default"))) int InitializeInjection(void)
{
	static int called;
	const char *path = getenv("GPUREDUCE_TRACE");
	const char *s = getenv("GPUREDUCE_ALLOW_NO_CAPTURE");
	int allow = s && !strcmp(s, "1");
	struct strbuf actual = STRBUF_INIT, err = STRBUF_INIT, msg = STRBUF_INIT;
	const char *rname = NULL;
	CUpti_SubscriberParams sp;
	char holder[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN + 1] = "";
	CUptiResult cr;
	int fd;

	if (!path || !*path || called)
		return 1;
	called = 1;
	S.pid = getpid();
	S.py_frames = 8;
	cap_prof_init();
	s = getenv("GPUREDUCE_CAPTURE_ABLATE");
	g_ablate = !s ? ABLATE_NONE : !strcmp(s, "dispatch") ? ABLATE_DISPATCH
		 : !strcmp(s, "nobytes") ? ABLATE_NOBYTES : !strcmp(s, "wait") ? ABLATE_WAIT : ABLATE_NONE;
	s = getenv("GPUREDUCE_BLOCKING");
	g_libsync = s && !strcmp(s, "library");
	s = getenv("GPUREDUCE_PY_FRAMES");
	if (s && *s) {
		long v = strtol(s, NULL, 10);
		S.py_frames = v < 0 ? 0 : v > CAP_PY_MAX_FRAMES ? CAP_PY_MAX_FRAMES : (uint32_t)v;
	}

	t_busy = 1;
	/* _v2 names us to other tools and tells us who holds CUPTI if busy. */
	memset(&sp, 0, sizeof(sp));
	sp.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
	sp.subscriberName = "gpureduce";
	sp.oldSubscriberName = holder;
	sp.oldSubscriberSize = sizeof(holder);
	cr = cuptiSubscribe_v2(&S.sub, on_callback, NULL, &sp);
	if (cr != CUPTI_SUCCESS) {
		int busy = cr == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
		if (cuptiGetResultString(cr, &rname) != CUPTI_SUCCESS || !rname)
			rname = "CUPTI_ERROR_UNKNOWN";
		holder[sizeof(holder) - 1] = 0;
		for (char *h = holder; *h; h++)
			if (*h == '\n' || *h == '\r')
				*h = ' ';
		sb_addf(&msg, "%s%s%s", rname, *holder ? ": " : "", holder);
		status_line("%s %s", busy ? "cupti-busy" : "cupti-error", msg.buf);
		sb_reset(&err);
		sb_addf(&err, busy ? "CUPTI is already in use by another tool (%s)"
				   : "CUPTI could not be initialised (%s)", msg.buf);
		refuse(allow, err.buf);
		goto out;
	}
	fd = open_trace(path, &actual, &err);
	if (fd < 0 || tw_open_fd(&S.w, fd, actual.buf, &err) < 0) {
		if (fd >= 0) {
			close(fd);
			S.w.fd = -1;
		}
		cuptiUnsubscribe(S.sub);
		status_line("trace-error %s", err.buf);
		refuse(allow, err.buf);
		goto out;
	}
	S.w.on_fail = trace_write_failed;
	s = getenv("GPUREDUCE_ZSTD");
	S.w.zstd_level = s && *s ? atoi(s) : -1;   /* capture speed first; shrink may recompress */
	ckpt_init();
	cap_tm_init();
	rec_process();
	__atomic_store_n(&S.recording, 1, __ATOMIC_RELAXED);
	pthread_atfork(before_fork, NULL, after_fork_child);
	on_exit(at_exit, NULL);
	start_buffering();
	__atomic_store_n(&g_off, 0, __ATOMIC_RELEASE);
	if (enable_callbacks() < 0) {
		pthread_mutex_lock(&g_lock);
		note_locked("could not enable all CUPTI callbacks: this trace may miss events");
		unlock();
	}
	if (job_rank())   /* before "ok": capture's summary names the trace by it */
		status_line("rank %d %s", (int)S.pid, job_rank());
	status_line("ok %d %s", (int)S.pid, actual.buf);
	cap_py_calibrate();
out:
	t_busy = 0;
	sb_release(&actual);
	sb_release(&err);
	sb_release(&msg);
	return 1;
}
