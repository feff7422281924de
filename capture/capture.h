/*
 * capture.h - internals of the CUPTI injection library (libgpureduce-capture.so),
 * shared by the files under capture/.  Nothing here is exported from the
 * library: the only visible symbol is InitializeInjection (inject.c).
 *
 *   inject.c   CUPTI subscription, the callbacks, and what they record
 *   python.c   Python frame attribution, resolved with dlsym at run time
 *   map.c      a small u64 -> (u64, u64) hash map (live allocations, caches)
 *   hostmem.c  whether host bytes can be read without faulting
 *   managed.c  content of managed/mapped host memory, written before launches
 *   graphapi.c graphs built with the explicit API (cuGraphAddKernelNode...),
 *              walked at instantiation and written like stream-captured ones
 *   checkpoint.c  device checkpoints: bounded traces written as segments
 *   fold.c     communication kernels (NCCL) folded into the bytes they wrote
 *   writeq.c   the writer thread: copied-in bytes compressed and written off
 *              the program's thread, every record in order
 *   same.c     short launch records (format 2.0): a launch that repeats an
 *              earlier one's function and argument bytes names it instead
 *   copies.c   copy and memset calls as records (copies.h: its entry points)
 *   env.c      numeric settings from the environment
 *   globals.c  module variables a kernel keeps state in, read back by
 *              checkpoints
 *
 * The library runs inside the traced program: nothing here may print (except
 * the one refusal when CUPTI is taken), exit, or synchronise the GPU.
 */
#ifndef GPUREDUCE_CAPTURE_H
#define GPUREDUCE_CAPTURE_H

#include <stddef.h>
#include <stdarg.h>
#include <stdint.h>

#include "../trace/trace.h"

struct strbuf;

/* ---- map.c ---- */

struct cap_map_ent {
	uint64_t key;            /* 0: empty slot (key 0 cannot be stored) */
	uint64_t v1, v2;
};

struct cap_map {
	struct cap_map_ent *slot;
	size_t n, cap;           /* cap is 0 or a power of two */
};
#define CAP_MAP_INIT { NULL, 0, 0 }

/* The entry for key, or NULL.  The pointer is valid until the next put/del. */
struct cap_map_ent *cap_map_get(const struct cap_map *m, uint64_t key);
/* Insert or overwrite.  key must not be 0 (ignored if it is). */
void cap_map_put(struct cap_map *m, uint64_t key, uint64_t v1, uint64_t v2);
/* Remove key; returns 1 and copies the values out (v1/v2 may be NULL) if it
 * was present, else 0. */
int cap_map_del(struct cap_map *m, uint64_t key, uint64_t *v1, uint64_t *v2);
/* Remove everything; keeps the table. */
void cap_map_clear(struct cap_map *m);
void cap_map_release(struct cap_map *m);

/* ---- same.c ---- */

/* Write launch record r as tw_record does, in format 2.0's short form
 * (TR_F_SAME) when an earlier launch of this segment, since the last
 * checkpoint started and the last module unload, had the same function,
 * name, layout and argument bytes.  Returns the event, or -1. */
long cap_same_record(struct trace_writer *w, const struct tr_rec *r);
/* Function handles are about to be reused (a module unload): forget. */
void cap_same_forget(void);
/* Launches written short so far, and the bytes of name, layout and
 * arguments they did not repeat. */
void cap_same_stats(uint64_t *nshort, uint64_t *saved);

/* ---- pystack.c ---- */

/* The PYSTACK id (1.8) of these n frames, the record written (and carried
 * into later segments) the first time they are seen; 0 when they are to
 * be written inline (none, a writer that failed, a hash shared with other
 * frames, too many distinct stacks).  toks: cap_py_frames' tokens (all
 * non-zero: the stack is known by them and the lines, without reading its
 * strings), or NULL.  Lock held. */
uint32_t cap_pystack_id(struct trace_writer *w, const struct tr_frame *frames, const uint64_t *toks, uint32_t n);
/* The id of the stack with these tokens (all non-zero) and lines, when it
 * was written already; else 0.  No record written.  Lock held. */
uint32_t cap_pystack_find(const uint64_t *toks, const uint32_t *lines, uint32_t n);

/* ---- env.c ---- */

/* The decimal value of environment variable name; def when it is unset,
 * empty, not a number or out of range. */
uint64_t cap_env_u64(const char *name, uint64_t def);

/* ---- hostmem.c ---- */

/* 1 if all n bytes at p can be read without faulting, 0 if not, -1 if the
 * kernel would not say (process_vm_readv refused, e.g. by seccomp). */
int cap_host_readable(const void *p, size_t n);

/* ---- inject.c, for copies.c: the writer and its lock ---- */

/* Take inject.c's lock if recording is on (1; else 0, not taken). */
int cap_lock_rec(void);
void cap_unlock(void);
/* A note, once per API id (takes the lock itself). */
void cap_note_once(uint32_t cbid, const char *fmt, const char *api);
/* The stream a call runs on: the per-thread default stream for a _ptsz/
 * _ptds call given the null stream. */
struct CUstream_st *cap_eff_stream(struct CUstream_st *s, int per_thread);
/* 1 when stream s is capturing a graph (asks the driver only once some
 * capture has begun). */
int cap_capturing(struct CUstream_st *s);
/* The first record an API call produced, in its correlation data, so that
 * its exit can say when the call failed (ev < 0: none). */
void cap_set_corr(uint64_t *correlation, long ev);
/* Lock held: one copy record (H2D: its bytes read from src, to the writer
 * thread or stored here); the event number or -1. */
long cap_emit_copy(uint32_t type, uint64_t dst, uint64_t src, uint64_t size, struct CUstream_st *stream,
		   uint32_t flags);
/* Lock held: managed, mapped and pinned memory the CPU changed, and the
 * memory of another process that holds src, written (before a
 * device-to-device copy from src). */
void cap_sync_hostmem(uint64_t src);
/* Lock held: one record through the writer; its event number or -1. */
long cap_write_record(const struct tr_rec *r);

/* ---- allocs.c (for globals.c and checkpoint.c; the program's callbacks:
 * allocs.h) ---- */

/* One ALLOC record: a program's allocation, or one in a checkpoint (any
 * writer, no lock taken).  tw_record's result. */
long cap_put_alloc(struct trace_writer *w, uint64_t addr, uint64_t size, uint32_t kind, uint32_t flags,
		   const char *name);
/* Lock held: a module variable (address, size, name) as an ALLOC of kind
 * global, unless one at that address was recorded already (then 0; 1 when
 * recorded now). */
int cap_put_global(uint64_t addr, uint64_t size, const char *name);
/* Lock held: a variable cap_put_global recorded leaves the checkpoints'
 * table (its module is being unloaded); no record is written. */
void cap_drop_global(uint64_t addr);

/* ---- globals.c (callers hold inject.c's lock) ---- */

/* A module image was loaded (with checkpoints on): list its variables
 * and, by name hash, its kernels. */
void cap_glob_image(const void *img, size_t size);
/* A function's first launch (f: a CUfunction if is_func, else a CUkernel). */
void cap_glob_function(uint64_t f, int is_func, uint64_t name_hash);
/* A checkpoint is due: every variable of the modules of the functions
 * launched since the last call, recorded (cap_put_global) so that the
 * checkpoint reads them back. */
void cap_glob_discover(void);
/* A module is being unloaded: its handle may come back as another. */
void cap_glob_unloaded(void);

/* ---- managed.c (callers hold inject.c's lock) ---- */

/* Track an allocation the GPU reads without copies: dev is its recorded
 * ALLOC address, host where the CPU reads it; user_pages: the program's own
 * pages (cuMemHostRegister), checked for readability before each read.
 * Returns 0, or -1 when it would pass GPUREDUCE_HOSTMEM_MAX (then it is not
 * hashed: write a note). */
int cap_mm_add(uint64_t dev, const void *host, uint64_t size, int user_pages);
/* Stop tracking the allocation recorded at dev (no-op if unknown). */
void cap_mm_del(uint64_t dev);
/* Before a launch: write each 64 KiB chunk of a tracked allocation that
 * changed since the last call as a MEMCPY_H2D flagged TR_F_HOSTMEM, adding
 * its bytes to *h2d.  mode CAP_MM_LAUNCH: a kernel launch, after
 * cap_mm_args: on-use memory (plain pinned, peer) only where its
 * arguments point; CAP_MM_COPY: a device-to-device copy, after
 * cap_mm_copy_src: host memory all of it, peer memory only where the
 * copy reads; CAP_MM_GRAPH: a graph launch, all of it.  Returns 0 or -1
 * (a write failed). */
enum { CAP_MM_COPY = 0, CAP_MM_LAUNCH = 1, CAP_MM_GRAPH = 2 };
int cap_mm_sync(struct trace_writer *w, uint64_t *h2d, int mode);
/* Remember plain pinned host memory (not mapped), or a large mapped or
 * registered buffer: not hashed until a launch's arguments point into it
 * (cap_mm_args), then before the launches that do.  user_pages as for
 * cap_mm_add.  cap_mm_del forgets it. */
void cap_mm_pinned(uint64_t dev, const void *host, uint64_t size, int user_pages);
/* Remember device memory another process writes (cuIpcOpenMemHandle, an
 * imported pool pointer or VMM handle): like plain pinned memory, tracked
 * from the first launch that points into it, but read back from the
 * device before each launch that does (managed.c). */
void cap_mm_peer(uint64_t dev, uint64_t size);
/* A device-to-device copy reads from src: peer memory holding it is
 * synced by the next cap_mm_sync(CAP_MM_COPY) (and tracked from now on). */
void cap_mm_copy_src(uint64_t src);
/* Mapped or registered host memory of at least this many bytes is treated
 * like plain pinned memory (GPUREDUCE_HOSTMEM_ONUSE, default 16 MiB):
 * hashing it before every launch would cost the program ~0.1 ms per MiB
 * at each launch. */
uint64_t cap_mm_onuse_min(void);
/* A pinned allocation a launch's arguments pointed into, now tracked. */
struct cap_mm_promoted {
	uint64_t dev, size;
	uint32_t arg_offset;     /* the argument word's byte offset */
	int over_cap;            /* passes GPUREDUCE_HOSTMEM_MAX: not hashed */
	int peer;                /* device memory another process or API writes */
};
/* Before a launch (and before cap_mm_sync): every remembered pinned
 * allocation that an 8-byte-aligned word of the argument bytes points into
 * is tracked from now on and synced before this launch (cap_mm_sync writes
 * all of it the first time).  Fills up to max of the newly tracked ones
 * into out; returns how many there were. */
size_t cap_mm_args(const uint8_t *args, uint32_t argsize, struct cap_mm_promoted *out, size_t max);

/* Forget the peer memory (cap_mm_peer) that overlaps [addr, addr + size):
 * the driver gave the range out again, to a recorded allocation. */
void cap_mm_drop_peer(uint64_t addr, uint64_t size);

/* ---- foreign.c (callers hold inject.c's lock) ---- */

/* 1 when the driver knows an allocation holding device address p
 * (cuMemGetAddressRange), with its start and size; 0 when not.  The one
 * check of the driver's answer for fold.c, this file's scan and inject.c
 * (no lock needed). */
int cap_alloc_range(uint64_t p, uint64_t *base, uint64_t *size);

/* A recorded allocation appears or goes: its 2 MiB regions count as known. */
void cap_known_add(uint64_t addr, uint64_t size);
void cap_known_del(uint64_t addr, uint64_t size);
/* Device memory no recorded call brought in, found by a launch's argument
 * word at arg_offset. */
struct cap_foreign {
	uint64_t addr, size;
	uint32_t arg_offset;
};
/* The allocations the driver knows that an 8-byte-aligned word of the
 * argument bytes points into, in 2 MiB regions where no recorded
 * allocation lies (up to max; each counts as known from now on: the caller
 * records it).  hash: tr_hash(args, argsize) when the caller has it (the
 * launch path hashes a launch's bytes once, for this scan's memo and the
 * record's short-launch table both), else 0.  GPUREDUCE_FOREIGN=0 turns it
 * off. */
size_t cap_foreign_scan(const uint8_t *args, uint32_t argsize, uint64_t hash, struct cap_foreign *out,
			size_t max);

/* ---- inject.c, for graphapi.c (the graph calls; its entry point is in
 * graphapi.h): lock held, recording on, but cap_graph_mark takes the lock
 * itself ---- */

/* A stream capture began (TR_GRAPH_BEGIN) or ended (TR_GRAPH_END), a graph
 * was instantiated (TR_GRAPH_EXEC) or launched (TR_GRAPH_LAUNCH): its
 * record, only handles (no driver call). */
void cap_graph_mark(uint32_t type, struct CUstream_st *stream, uint64_t graph, uint64_t exec);
/* A graph's nodes are in the trace: they cannot be carried across
 * checkpoint segments (checkpoint.c). */
void cap_graph_seen(void);
uint8_t *cap_kernel_args(void *f, void **kp, void **extra, uint32_t *size);
long cap_emit_node_launch(void *f, struct tr_dim3 grid, struct tr_dim3 block, uint32_t shmem,
			  uint8_t *args, uint32_t argsize, uint64_t stream);
struct CUDA_MEMSET_NODE_PARAMS_st;
long cap_emit_node_memset(const struct CUDA_MEMSET_NODE_PARAMS_st *p, uint64_t stream);
long cap_emit_node_copy(uint32_t type, uint64_t dst, uint64_t src, uint64_t size, uint64_t stream);
int cap_is_device_ptr(uint64_t p);
void cap_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cap_emit_graph(uint32_t type, uint64_t stream, uint64_t graph, uint64_t exec);
/* An H2D copy of host bytes p flagged TR_F_FOLDED (fold.c; lock held, recording on). */
long cap_emit_fold_copy(uint64_t dst, const void *p, uint64_t size);

/* ---- fold.c (lock held, recording on) ---- */

/* 1 if kernel `name` is a communication kernel to fold (nccl*, or
 * GPUREDUCE_FOLD_KERNELS: comma-separated names, a trailing '*' a prefix). */
int cap_fold_is_comm(const char *name);
/* Before a launch: TR_F_FOLDED (and the ranges its parameter words point
 * into read) for a communication kernel, else 0. */
uint32_t cap_fold_enter(const char *name, uint64_t seq, const uint8_t *args, uint32_t argsize, int captured);
/* After it returned (ok: successfully): the bytes it changed, as folded
 * H2D copies.  Does nothing if the last enter was not a fold. */
void cap_fold_exit(int ok);
/* 1 while a fold waits for its launch's exit (no lock needed: per thread). */
int cap_fold_pending(void);

/* ---- checkpoint.c (all calls with inject.c's lock held) ---- */

/* A NOTE into w; with carry, carried into every later segment (once per
 * distinct text). */
void ckpt_vnote(struct trace_writer *w, int carry, const char *fmt, va_list ap);
/* ---- writeq.c: the writer thread (all calls with inject.c's lock held) ---- */

/* Start the thread with a staging ring of cap bytes.  0, or -1 (no
 * thread: everything stays on the program's thread, as before). */
int cap_wq_start(uint64_t cap);
/* Route what leaves w through the thread's queue (no-op without it);
 * again for each new segment's writer. */
void cap_wq_attach(struct trace_writer *w);
/* An H2D copy's bytes as a blob, like tw_blob: hashed and copied into the
 * ring here, compressed and written by the thread (inline when w is not
 * attached, under 16 KiB, or larger than the ring).  *hash: their XXH3.
 * The BLOB's event number is counted at once; its size joins w->offset
 * once written.  0 or -1. */
int cap_wq_blob(struct trace_writer *w, const void *src, size_t len, uint64_t *hash);
/* Everything w holds or queued on disk, w->offset exact: at the fault,
 * exit, fork, before a checkpoint reads the file.  0 or -1. */
int cap_wq_sync(struct trace_writer *w);
/* The exact file offset of w's next record (waits for queued blobs, only
 * when there are any): where a record to carry starts. */
uint64_t cap_wq_mark(struct trace_writer *w);
/* Count what the thread has written into w->offset (and a failed write
 * into w->failed); cheap when nothing is queued. */
void cap_wq_poll(struct trace_writer *w);
/* The file's size once everything queued is written, at most: w->offset
 * plus the blobs the thread has not written yet, at their raw size (for
 * checkpoint triggers, which must not wait for the thread to catch up). */
uint64_t cap_wq_size(const struct trace_writer *w);

/* ---- testname.c (lock held) ---- */
/* A NOTE "test: NAME" when PYTEST_CURRENT_TEST (or GPUREDUCE_TEST_NAME)
 * changed since the previous call. */
void cap_test_note(struct trace_writer *w);
/* A number that changes wherever a checkpoint starts (its window, which a
 * background checkpoint copies into the next segment, begins there) and
 * wherever the capture switches to a new segment (event numbers change):
 * same.c forgets its table at both. */
uint64_t ckpt_epoch(void);
/* Read the GPUREDUCE_CKPT* settings; before any other ckpt_ call. */
void ckpt_init(void);
/* 1 when checkpoints may be taken in this run. */
int ckpt_active(void);
/*
 * The records written to w since offset `start` (nrec of them; a blob
 * with hash `blob` among them, or 0) must be carried into every later
 * segment: PROCESS, DEVICE, MODULE (+ image), FUNC_ATTR, FUNC_INFO, NOTE.  A non-zero
 * key already carried is not carried again (identical FUNC_ATTRs).
 */
void ckpt_carry(const struct trace_writer *w, uint64_t start, uint64_t nrec, uint64_t blob,
		uint64_t key);
/* A TENSORMAP record's map, to carry into later segments: the latest
 * 1024 distinct ones are kept in memory and written after the carried
 * records (checkpoint.c). */
void ckpt_carry_tmap(const struct tr_tensormap *m);
/* The live-allocation table a checkpoint snapshots. */
void ckpt_on_alloc(uint64_t addr, uint64_t size, uint32_t kind, uint32_t flags, const char *name);
void ckpt_on_free(uint64_t addr);
/* A stream began capturing a graph: checkpoints stop (a NOTE says so). */
void ckpt_graph_seen(struct trace_writer *w);
/* At a launch's entry, before its record: take a checkpoint if one is due.
 * seq is the seq the launch is about to get.  May replace *w (a new file). */
void ckpt_maybe(struct trace_writer *w, uint64_t seq);
/* At exit, before END: a NOTE "checkpoints: N taken in S s ..." with their
 * cost and how often the adaptive interval held one back (none if no
 * checkpoint was ever due). */
void ckpt_finish(struct trace_writer *w);
/* Rewrite the progress file (GPUREDUCE_PROGRESS), at most once a second
 * unless force. */
void ckpt_progress(uint64_t launches, int force);

/* ---- torchmem.c (capture --tensors) ---- */

struct cap_tm_reading;
/* Read GPUREDUCE_TENSORS; before any other cap_tm_ call. */
void cap_tm_init(void);
int cap_tm_enabled(void);
/* At a launch's entry, outside inject.c's lock (it takes the GIL): the
 * caching allocator's live blocks, or NULL (off, no Python, torch not
 * ready).  Pass it to cap_tm_write or cap_tm_free. */
struct cap_tm_reading *cap_tm_read(void);
/* Lock held, right before the LAUNCH record: BLOCK_FREE / BLOCK_ALLOC for
 * what changed since the last write (everything, flagged INITIAL, after
 * cap_tm_forget); a reading that failed becomes one NOTE.  Frees rd. */
void cap_tm_write(struct trace_writer *w, struct cap_tm_reading *rd);
void cap_tm_free(struct cap_tm_reading *rd);
/* A checkpoint started a new segment: write every live block again. */
void cap_tm_forget(void);
/* After the FAULT record, outside the lock: in the events mode, the
 * allocator's history up to the fault, so that the faulting launch has its
 * blocks (not after a call the allocator makes under its mutex). */
void cap_tm_after_fault(const char *api);
/* inject.c, for torchmem.c: the seq the next LAUNCH record gets; and
 * fn(w, that seq, arg) under the lock while recording, or with
 * stopped_too after the FAULT record too (else fn(NULL, 0, arg)), for
 * writes made outside a launch (Python's atexit, after a fault). */
uint64_t cap_launch_seq(void);
void cap_locked_write(void (*fn)(struct trace_writer *w, uint64_t seq, void *arg), void *arg, int stopped_too);

/* ---- source.c (bug report facts: ENV, Triton/Inductor SOURCE) ---- */

struct cap_src_reading;
/* At the first launch of a function handle (inject.c asks once per handle,
 * again after a module unload, when handles are reused), outside inject.c's
 * lock (it may take the GIL): the environment the first time, the kernel's
 * Python source when it launches from a Triton stack; NULL when nothing is
 * new. */
struct cap_src_reading *cap_src_read(const void *f, uint32_t py_state, const struct tr_frame *frames,
				     uint32_t nframes);
/* Lock held, before the LAUNCH record: ENV / SOURCE records (carried
 * across checkpoints).  Frees rd. */
void cap_src_write(struct trace_writer *w, struct cap_src_reading *rd);
void cap_src_free(struct cap_src_reading *rd);

/* ---- drvver.c ---- */

/* The driver version ("580.82.07") in a /proc/driver/nvidia/version line,
 * into out (n bytes): 0, or -1 (out "") when the line holds none. */
int cap_driver_version(const char *line, char *out, size_t n);
/* The same from the real file name of a libcuda path (libcuda.so.1 ->
 * libcuda.so.580.82.07): 0, or -1 (out "") when it holds none. */
int cap_driver_version_lib(const char *path, char *out, size_t n);

/* ---- extsrc.c (torch.utils.cpp_extension sources) ---- */

struct cap_ext_files {
	size_t n;
	char *path[16], *text[16];
};
/* Sources of extension build folders loaded since the last call (each
 * folder once); cheap when nothing new was loaded.  Outside the lock. */
void cap_ext_scan(struct cap_ext_files *ef);
void cap_ext_release(struct cap_ext_files *ef);

/* ---- python.c ---- */

#define CAP_PY_MAX_FRAMES 64

/*
 * The Python stack of the calling thread, innermost frame first, at most
 * `max` frames, whether or not the thread holds the GIL (it is read from
 * the interpreter's structures without calling into it; see python.c).
 * Returns an enum tr_py_state: TR_PY_NONE (no initialised CPython in the
 * process, or one too old to walk), TR_PY_NO_GIL (Python is there but this
 * thread's stack could not be read: a thread that never ran Python, or an
 * interpreter whose layout is not known and no GIL to ask it), or
 * TR_PY_FRAMES with *n frames filled in (0 for a Python thread running no
 * Python code).  The frames' strings live in `store` (appended; valid until
 * store changes).  toks (NULL: not wanted; else max entries) gets a token
 * per frame: the same token, the same (file, function) strings, for the
 * life of the process (0: none, the API walk's frames); pystack.c keys
 * stacks on them with the lines.  Never raises a Python exception, never
 * takes the GIL, never allocates Python objects without it.  Thread-safe;
 * any failure yields fewer frames or none, never a crash.  A few
 * microseconds.  GPUREDUCE_PY_WALK=auto|table|search|api selects the
 * method (python.c).
 */
uint32_t cap_py_frames(struct tr_frame *frames, uint32_t max, uint32_t *n,
		       struct strbuf *store, uint64_t *toks);
/*
 * The cheap half of cap_py_frames, for a launch whose stack is likely
 * written already (pystack.c): the same walk, giving each frame's token
 * and line but no strings.  Returns as cap_py_frames, with *ts the thread
 * state walked (for cap_py_frames_at); or CAP_PY_NEED_FRAMES where only
 * the API walk (GIL held, no layout) can read this stack: the caller then
 * calls cap_py_frames.
 */
#define CAP_PY_NEED_FRAMES 0xffffu
uint32_t cap_py_keys(uint64_t *toks, uint32_t *lines, uint32_t max, uint32_t *n, uintptr_t *ts);
/*
 * The strings of the stack cap_py_keys walked (ts from it), read again by
 * the layout alone: no Python call, no calibration, so it may run under
 * inject.c's lock (the launching thread is inside the callback: its frames
 * have not moved).  TR_PY_FRAMES with *n frames, or TR_PY_NO_GIL and none
 * when the layout went meanwhile.
 */
uint32_t cap_py_frames_at(uintptr_t ts, struct tr_frame *frames, uint32_t max, uint32_t *n,
			  struct strbuf *store, uint64_t *toks);

/*
 * If this thread holds the GIL and the frame layout has not been learnt
 * yet, learn it now (with the API as ground truth).  Cheap once done or
 * when the GIL is not held: call it from any callback.
 */
void cap_py_calibrate(void);

/* How frames are read now: "none", "api" (GIL holders only), or a layout
 * ("table": built in, not yet checked against the interpreter; "verified":
 * the table, checked; "searched": found by calibration) followed by the
 * version and offsets used.  The string is valid until the next call from
 * the same thread. */
const char *cap_py_layout(void);

/* ---- tensormap.c: TMA tensor maps (TENSORMAP records) ---- */
/* On the successful exit of a driver call: record it when it is one of
 * the cuTensorMap* calls.  Returns 1 when it was one of them. */
int cap_tmap_exit(uint32_t cbid, const void *params);
/* At a launch (lock held): note once per kernel (*noted) a 128-byte,
 * 64-byte-aligned parameter whose first word is a device address but
 * whose bytes no recorded encode produced (a map capture did not see made). */
void cap_tmap_check_launch(const char *kernel, const struct tr_param *params, uint32_t nparams,
			   const uint8_t *args, uint32_t argsize, int *noted);
/* Write one record (inject.c: takes the lock, drops it when not
 * recording; a TENSORMAP's map is also kept for later segments,
 * ckpt_carry_tmap).  Returns the event number or -1. */
long cap_put_record(const struct tr_rec *r);

#endif
