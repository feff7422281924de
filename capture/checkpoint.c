/*
 * checkpoint.c - bounded capture: device checkpoints and trace segments
 * (format 1.2, docs/FORMAT.md "Checkpoints").  Used by inject.c, inside the
 * traced process, always with inject.c's lock held.
 *
 * Without checkpoints a trace keeps every byte that ever entered the GPU.
 * Here, when a checkpoint is due (launches, window bytes, seconds, or the
 * --max-trace-bytes limit), the capture writes a new segment, TRACE.next:
 *
 *   header, the carried records (PROCESS, DEVICE, every MODULE with its
 *   image blob, FUNC_ATTRs, NOTEs: copied byte for byte from the current
 *   file; then the latest distinct TENSORMAPs, from memory),
 *   CHECKPOINT_BEGIN, for every live allocation an ALLOC and its
 *   content as MEMCPY_H2D records flagged TR_F_CHECKPOINT (one per chunk,
 *   each chunk a blob named by its XXH3 hash), CHECKPOINT_END
 *
 * and rename()s it over TRACE; the window's records are then appended to
 * it as before.  A kill or fault while TRACE.next is written leaves TRACE
 * whole (the previous segment); a reader of a .next that lacks its END
 * drops the incomplete checkpoint (trace/read.c).  Chunks whose hash the
 * previous segment already stored are copied from it in their stored
 * (compressed) form; there is no device-side hash, so every chunk is read
 * back with cuMemcpyDtoH through one bounded host buffer.
 *
 * The read-back (synchronous path) goes through one pinned host buffer
 * (cuMemHostAlloc, kept for the whole run; pageable malloc memory where
 * pinning fails), which
 * the driver's DMA fills without an extra staging copy.  Chunks the old
 * segment already stored, and the carried records, go across with
 * copy_file_range (no trip through user space).
 *
 * Adaptive interval: a checkpoint stops the program while it is taken, so
 * the next one is not due (by launches, window bytes or seconds) sooner
 * than GPUREDUCE_CKPT_COST_RATIO (50) times the last one's own duration
 * after it ended: checkpoints take at most ~1/51 of the run (~2 %).  The
 * first one is held the same way from the capture's start, its cost
 * estimated as GPUREDUCE_CKPT_FIRST_US_PER_MIB (1000) per MiB live (the
 * first one also pins the snapshot; on the H200's host-fed ResNet-18 loop
 * it stopped the program 0.543 s, 9 % of a 6 s run, under the old 20x with
 * no estimate: it came as soon as the window reached 256 MiB).  The trade:
 * the window holds at most what the program copies in ratio x a
 * checkpoint's time, whatever the run's length, so the trace stays
 * bounded, but a larger ratio is a longer window (more disk, a longer
 * shrink); --max-trace-bytes (and --flight-recorder's BUDGET/2) is not
 * deferred: it is a limit.  A checkpoint written in the background also
 * waits GPUREDUCE_CKPT_BG_RATIO (1) times the thread's own time.
 *
 * A checkpoint that cannot be taken (host memory, disk, a driver error)
 * leaves a NOTE in the current trace, which keeps growing: the trace is
 * never lost.  Checkpoints are taken at a launch's API entry, where under
 * CUDA_LAUNCH_BLOCKING=1 all earlier work has finished (a cuCtxSynchronize
 * makes sure), and never while a stream is capturing a graph; a program
 * that builds graphs is captured without checkpoints (the graph's nodes
 * live in the window they were captured in), with a NOTE saying so.
 *
 * Environment (set by `gpureduce capture`, src/cmd-capture.c):
 *   GPUREDUCE_CKPT=0             no checkpoints (--no-checkpoint)
 *   GPUREDUCE_CKPT_LAUNCHES=N    every N launches (0: not by launches)
 *   GPUREDUCE_CKPT_BYTES=B       when the window reaches B bytes (0: by
 *                                GPUREDUCE_CKPT_PERCENT)
 *   GPUREDUCE_CKPT_PERCENT=P     when the window reaches P % of the file
 *                                right after the last checkpoint, and at
 *                                least 1 MiB (unset: 50 %, at least 256 MiB:
 *                                the trace stays under about 1.5x a
 *                                checkpoint)
 *   GPUREDUCE_CKPT_SECONDS=S     every S seconds (0: not by time)
 *   GPUREDUCE_MAX_TRACE_BYTES=B  checkpoint whenever the file reaches B
 *   GPUREDUCE_CKPT_CHUNK=B       dedup chunk (default 1 MiB)
 *   GPUREDUCE_CKPT_ZSTD=L        zstd level of checkpoint chunks (default -1:
 *                                ~5 GB/s; tensors of floats hardly compress,
 *                                zeros and stale memory do at any level)
 *   GPUREDUCE_CKPT_BUFFER=B      host buffer for reading back (default 64 MiB,
 *                                pinned)
 *   GPUREDUCE_CKPT_ASYNC=0       write checkpoints on the program's thread
 *                                (default 1: a background thread, see
 *                                "written by a background thread" below)
 *   GPUREDUCE_CKPT_SNAPSHOT_MAX=B  the most live memory snapshotted for the
 *                                background thread (default 8 GiB, at most a
 *                                quarter of the machine's memory; more: the
 *                                program's thread writes it)
 *   GPUREDUCE_CKPT_SNAPSHOT_PINNED=0  the snapshot in pageable memory
 *                                (default 1: pinned; the profile's "host
 *                                memory" and "read-back" lines compare the
 *                                two: pinning's cost against a staged copy)
 *   GPUREDUCE_CKPT_TEST_SLOW=MS  tests only: the background thread waits
 *                                MS ms before its CHECKPOINT_END
 *   GPUREDUCE_CKPT_BG_RATIO=R    nor sooner than R times the background
 *                                thread's own time after it (default 1: the
 *                                thread works at most half the time, and the
 *                                disk sees at most about a checkpoint per
 *                                two of its writing times; 0: no such wait)
 *   GPUREDUCE_CKPT_COST_RATIO=R  the next checkpoint no sooner than R times
 *                                the last one's duration after it (default
 *                                50; 0: no such wait)
 *   GPUREDUCE_CKPT_FIRST_US_PER_MIB=U  the first one's estimated cost per
 *                                MiB live, for the same wait (default 1000)
 *   GPUREDUCE_PROGRESS=FILE      "launches checkpoints last_launch last_ns"
 *                                rewritten at most once a second
 *   GPUREDUCE_CKPT_TEST_KILL=K   tests only: SIGKILL the process in the
 *                                middle of checkpoint K
 */
#include <cuda.h>

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../common/cuerr.h"
#include "../common/strbuf.h"
#include "../common/util.h"
#include "../trace/trace.h"
#include "capture.h"
#include "prof.h"

#define AUTO_MIN_BYTES (256ull << 20)
#define MAX_FAILURES 3

struct ck_alloc {
	uint64_t addr, size, order;
	uint32_t kind;
	uint32_t flags;          /* the ALLOC's (TR_ALLOC_F_*) */
	char *name;              /* globals: the symbol; else NULL */
};

/* A byte range of the current file to copy into the next segment. */
struct carry {
	uint64_t off, len, nrec;
	uint64_t blob;           /* hash of a blob record in the range, or 0 */
	uint64_t key;            /* dedup key (0: none) */
};

/*
 * TENSORMAP records to carry: the latest CARRY_TMAPS distinct maps, kept
 * in memory (a ring; a map already in it is not added again) and written
 * after the carried records of every new segment.  A map encoded once at
 * set-up (CUTLASS) and launched after many checkpoints is among them as
 * long as fewer than CARRY_TMAPS others came since; Triton encodes at
 * every launch (most maps new), which is why there is a bound.  Kept
 * apart from the byte-range carries: those need exact file offsets, which
 * would make every encode wait for the writer thread (writeq.c).
 */
#define CARRY_TMAPS 1024
static struct {
	struct tr_tensormap *ring;  /* CARRY_TMAPS entries, slot = n % CARRY_TMAPS */
	uint64_t hash[CARRY_TMAPS];
	uint64_t n;                 /* maps added */
	struct cap_map keys;        /* hash -> slot + 1 */
} TM;

static struct {
	int on, inited, graphs, failures;
	uint64_t every_launches, every_bytes, every_ns, max_bytes, chunk, bufsize, percent, min_bytes;
	int zstd_level;
	uint64_t test_kill;
	char *progress;
	/* live allocations: addr -> index + 1 into `a` */
	struct ck_alloc *a;
	size_t na, aa;
	struct cap_map idx;
	uint64_t order;
	struct carry *carry;
	size_t ncarry, acarry;
	struct cap_map keys;     /* carry keys seen */
	struct cap_map chunks;   /* chunk hash -> (offset, length) of its BLOB record here */
	/* the window */
	uint64_t window_start;   /* file offset where the window began */
	uint64_t last_launch;    /* launch seq at the last checkpoint (or attempt) */
	uint64_t last_ns;        /* CLOCK_MONOTONIC of it */
	uint64_t last_size;      /* file size right after the last checkpoint */
	uint64_t count;          /* checkpoints taken */
	uint64_t attempts;
	uint64_t switches;        /* writers adopted: the file (and its event numbers) changed */
	uint64_t last_real_ns;   /* CLOCK_REALTIME of the last one taken */
	uint64_t progress_ns;
	int limit_noted;
	/* cost */
	uint64_t cost_ratio;
	uint64_t first_ns_per_mib;  /* the first checkpoint's cost, estimated per MiB live */
	uint64_t live;           /* bytes of the live allocations (sum of a[].size) */
	uint64_t last_cost_ns;   /* how long the last attempt stopped the program */
	uint64_t total_cost_ns;
	uint64_t deferred;       /* intervals in which a trigger fired but was held */
	uint64_t deferred_at;    /* K.last_ns of the last one counted */
	uint64_t bg_ratio;       /* and no sooner than this times the thread's time */
	uint64_t last_bg_ns;
	uint8_t *staging;        /* K.bufsize bytes, kept across checkpoints */
	int staging_pinned;
	/* background checkpoints */
	int async;
	uint64_t snap_max, background;
	uint8_t *snap;           /* the snapshot, K.snap_cap bytes */
	uint64_t snap_cap;
	int snap_pinned;
	int snap_pin;            /* 0: the snapshot is pageable memory (GPUREDUCE_CKPT_SNAPSHOT_PINNED=0) */
} K;

static uint64_t test_slow_ms;   /* tests: the background thread sleeps this long before END */

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static uint64_t real_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void ckpt_carry(const struct trace_writer *w, uint64_t start, uint64_t nrec, uint64_t blob,
		uint64_t key);

void ckpt_vnote(struct trace_writer *w, int carry, const char *fmt, va_list ap)
{
	struct strbuf sb = STRBUF_INIT;
	struct tr_rec r;
	uint64_t start = carry ? cap_wq_mark(w) : w->offset;

	sb_vaddf(&sb, fmt, ap);
	memset(&r, 0, sizeof(r));
	r.type = TR_NOTE;
	r.u.note.text = sb.buf;
	if (tw_record(w, &r) >= 0 && carry)
		ckpt_carry(w, start, 1, 0, tr_hash(sb.buf, sb.len) | 1);
	sb_release(&sb);
}

/* A NOTE into w (ckpt_vnote). */
static void note(struct trace_writer *w, int carry, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void note(struct trace_writer *w, int carry, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	ckpt_vnote(w, carry, fmt, ap);
	va_end(ap);
}

int ckpt_active(void)
{
	return K.inited && K.on;
}

void ckpt_init(void)
{
	const char *s = getenv("GPUREDUCE_CKPT");
	K.on = !(s && !strcmp(s, "0"));
	K.every_launches = cap_env_u64("GPUREDUCE_CKPT_LAUNCHES", 0);
	K.every_bytes = cap_env_u64("GPUREDUCE_CKPT_BYTES", 0);
	K.percent = cap_env_u64("GPUREDUCE_CKPT_PERCENT", 0);
	K.min_bytes = K.percent ? 1ull << 20 : AUTO_MIN_BYTES;   /* a percentage given: a small floor */
	if (!K.percent)
		K.percent = 50;
	s = getenv("GPUREDUCE_CKPT_ZSTD");
	K.zstd_level = s && *s ? atoi(s) : -1;
	K.every_ns = cap_env_u64("GPUREDUCE_CKPT_SECONDS", 0) * 1000000000ull;
	K.max_bytes = cap_env_u64("GPUREDUCE_MAX_TRACE_BYTES", 0);
	K.chunk = cap_env_u64("GPUREDUCE_CKPT_CHUNK", 1ull << 20);
	K.bufsize = cap_env_u64("GPUREDUCE_CKPT_BUFFER", 64ull << 20);
	K.test_kill = cap_env_u64("GPUREDUCE_CKPT_TEST_KILL", 0);
	K.cost_ratio = cap_env_u64("GPUREDUCE_CKPT_COST_RATIO", 50);
	K.first_ns_per_mib = cap_env_u64("GPUREDUCE_CKPT_FIRST_US_PER_MIB", 1000) * 1000;
	K.bg_ratio = cap_env_u64("GPUREDUCE_CKPT_BG_RATIO", 1);
	K.async = cap_env_u64("GPUREDUCE_CKPT_ASYNC", 1) != 0;
	K.snap_pin = cap_env_u64("GPUREDUCE_CKPT_SNAPSHOT_PINNED", 1) != 0;
	{
		/* at most a quarter of the machine's memory, pinned */
		long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
		uint64_t def = 8ull << 30, quarter = pages > 0 && psz > 0 ? (uint64_t)pages * (uint64_t)psz / 4 : def;
		K.snap_max = cap_env_u64("GPUREDUCE_CKPT_SNAPSHOT_MAX", quarter < def ? quarter : def);
	}
	test_slow_ms = cap_env_u64("GPUREDUCE_CKPT_TEST_SLOW", 0);
	if (K.chunk < 4096)
		K.chunk = 4096;
	if (K.bufsize < K.chunk)
		K.bufsize = K.chunk;
	K.bufsize -= K.bufsize % K.chunk;
	s = getenv("GPUREDUCE_PROGRESS");
	K.progress = s && *s ? xstrdup(s) : NULL;
	K.last_ns = mono_ns();
	K.inited = 1;
}

/* ---- what the next segment must carry ------------------------------------- */

void ckpt_carry(const struct trace_writer *w, uint64_t start, uint64_t nrec, uint64_t blob,
		uint64_t key)
{
	struct carry *c;
	if (!K.inited || w->failed || w->offset <= start)
		return;
	if (key) {
		if (cap_map_get(&K.keys, key))
			return;
		cap_map_put(&K.keys, key, 1, 0);
	}
	ALLOC_GROW(K.carry, K.ncarry + 1, K.acarry);
	c = &K.carry[K.ncarry++];
	c->off = start;
	c->len = w->offset - start;
	c->nrec = nrec;
	c->blob = blob;
	c->key = key;
}

void ckpt_carry_tmap(const struct tr_tensormap *m)
{
	uint64_t h;
	size_t slot;
	if (!K.inited || !K.on)
		return;   /* no checkpoints: nothing to carry */
	h = tr_hash(m, sizeof(*m)) | 1;
	if (cap_map_get(&TM.keys, h))
		return;
	if (!TM.ring)
		TM.ring = xcalloc(CARRY_TMAPS, sizeof(*TM.ring));
	slot = (size_t)(TM.n % CARRY_TMAPS);
	if (TM.n >= CARRY_TMAPS)
		cap_map_del(&TM.keys, TM.hash[slot], NULL, NULL);   /* the oldest goes */
	TM.ring[slot] = *m;
	TM.hash[slot] = h;
	cap_map_put(&TM.keys, h, slot + 1, 0);
	TM.n++;
}

/* The carried maps, oldest first, into *out (malloc'd; NULL when none);
 * returns how many. */
static size_t tmaps_copy(struct tr_tensormap **out)
{
	size_t n = TM.n < CARRY_TMAPS ? (size_t)TM.n : CARRY_TMAPS, first = (size_t)(TM.n - n);
	*out = NULL;
	if (!n)
		return 0;
	*out = xmalloc(n * sizeof(**out));
	for (size_t i = 0; i < n; i++)
		(*out)[i] = TM.ring[(first + i) % CARRY_TMAPS];
	return n;
}

/* Write maps[0, n) as TENSORMAP records into w.  0, or -1. */
static int tmaps_write(struct trace_writer *w, const struct tr_tensormap *maps, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct tr_rec r;
		memset(&r, 0, sizeof(r));
		r.type = TR_TENSORMAP;
		r.u.tmap = maps[i];
		if (tw_record(w, &r) < 0)
			return -1;
	}
	return 0;
}

/* ---- live allocations ------------------------------------------------------ */

void ckpt_on_alloc(uint64_t addr, uint64_t size, uint32_t kind, uint32_t flags, const char *name)
{
	struct cap_map_ent *e;
	struct ck_alloc *a;

	if (!K.inited || !addr)
		return;
	e = cap_map_get(&K.idx, addr);
	if (e) {
		a = &K.a[e->v1 - 1];
		free(a->name);
		K.live -= a->size;
	} else {
		ALLOC_GROW(K.a, K.na + 1, K.aa);
		a = &K.a[K.na++];
		cap_map_put(&K.idx, addr, K.na, 0);
	}
	a->addr = addr;
	a->size = size;
	a->kind = kind;
	a->flags = flags;
	a->order = K.order++;
	a->name = name && *name ? xstrdup(name) : NULL;
	K.live += size;
}

void ckpt_on_free(uint64_t addr)
{
	uint64_t i, v2;
	if (!K.inited || !cap_map_del(&K.idx, addr, &i, &v2))
		return;
	i--;
	free(K.a[i].name);
	K.live -= K.a[i].size;
	if (i != K.na - 1) {
		K.a[i] = K.a[K.na - 1];
		cap_map_put(&K.idx, K.a[i].addr, i + 1, 0);
	}
	K.na--;
}

void ckpt_graph_seen(struct trace_writer *w)
{
	if (!K.inited || K.graphs)
		return;
	K.graphs = 1;
	if (K.on)
		note(w, 1, "the program builds CUDA graphs: no checkpoints are taken from here on, "
		     "so this trace grows with the run");
}

/* ---- progress -------------------------------------------------------------- */

static void write_progress(uint64_t launches)
{
	char line[160];
	int fd, n;
	n = snprintf(line, sizeof(line), "%llu %llu %llu %llu\n", (unsigned long long)launches,
		     (unsigned long long)K.count, (unsigned long long)K.last_launch,
		     (unsigned long long)K.last_real_ns);
	fd = open(K.progress, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	if (write_all(fd, line, (size_t)n) < 0) { /* progress is best effort */ }
	close(fd);
}

void ckpt_progress(uint64_t launches, int force)
{
	uint64_t now;
	struct timespec ts;

	if (!K.inited || !K.progress)
		return;
	/* at every launch: the coarse clock (a few ms) is enough for once a
	 * second, and never a system call (issue 26) */
	clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
	now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	if (!force && now - K.progress_ns < 1000000000ull)
		return;
	K.progress_ns = now;
	write_progress(launches);
}

/* ---- taking a checkpoint ------------------------------------------------------ */

struct seg {
	struct trace_writer nw;
	int rfd;                 /* the current file, for reading */
	uint8_t *buf;            /* host buffer, K.bufsize bytes */
	struct carry *carry;
	size_t ncarry, acarry;
	struct cap_map chunks;
	uint64_t stored, bytes;
};

/* The errors after which the context is unusable (common/cuerr.h). */
static int ctx_dead(CUresult r)
{
	return cuerr_is_sticky((int)r);
}

static int is_readable(const struct ck_alloc *a)
{
	if (a->kind == TR_MEM_VMM) {
		/* an accessible mapping only: reading one without access faults */
		CUmemLocation loc;
		unsigned long long flags = 0;
		memset(&loc, 0, sizeof(loc));
		loc.type = CU_MEM_LOCATION_TYPE_DEVICE;
		CUdevice dev = 0;
		if (cuCtxGetDevice(&dev) == CUDA_SUCCESS)
			loc.id = (int)dev;
		return cuMemGetAccess(&flags, &loc, a->addr) == CUDA_SUCCESS &&
		       (flags == CU_MEM_ACCESS_FLAGS_PROT_READ || flags == CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
	}
	return 1;
}

/* Why a segment's write failed: its writer's errno (tw_set_failed), else
 * the last one here, for "cannot write ...: WHY". */
static const char *seg_why(const struct seg *g)
{
	return g->nw.err ? strerror(g->nw.err) : errno ? strerror(errno) : "write failed";
}

/* Copy len bytes at off of the current file into the new segment: in the
 * kernel (copy_file_range) where it can, else through g->buf. */
static int copy_range(struct seg *g, uint64_t off, uint64_t len, uint64_t nrec)
{
	uint8_t *own = NULL, *buf = g->buf;
	size_t cap = K.bufsize;
	int ret = -1;

	while (len && !g->nw.failed && g->nw.fd >= 0) {
		loff_t in = (loff_t)off;
		ssize_t got = copy_file_range(g->rfd, &in, g->nw.fd, NULL, (size_t)len, 0);
		if (got <= 0)
			break;   /* not supported here, or an error: the read/write path says */
		g->nw.offset += (uint64_t)got;
		off += (uint64_t)got;
		len -= (uint64_t)got;
	}
	if (len && !buf) {
		/* a background checkpoint has no read-back buffer (its snapshot
		 * is the read-back): a small one for this fallback only */
		cap = (size_t)K.chunk;
		if (!(buf = own = malloc(cap)))
			goto out;
	}
	while (len) {
		size_t n = len < cap ? (size_t)len : cap;
		ssize_t got = pread(g->rfd, buf, n, (off_t)off);
		if (got != (ssize_t)n || tw_append_raw(&g->nw, buf, n, 0) < 0)
			goto out;
		off += n;
		len -= n;
	}
	g->nw.nrec += nrec;
	ret = 0;
out:
	free(own);
	return ret;
}

static int carry_all(struct seg *g, const struct carry *list, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct carry *c = &list[i];
		struct carry *n;
		ALLOC_GROW(g->carry, g->ncarry + 1, g->acarry);
		n = &g->carry[g->ncarry++];
		*n = *c;
		n->off = g->nw.offset;
		if (copy_range(g, c->off, c->len, c->nrec) < 0)
			return -1;
		if (c->blob)
			tw_mark_blob(&g->nw, c->blob);
	}
	return 0;
}

static uint64_t live_bytes(void)
{
	return K.live;
}

/* CHECKPOINT_BEGIN/END of the live allocations as they are now (the
 * synchronous path: K.a). */
static long rec_checkpoint_n(struct trace_writer *w, uint32_t type, uint64_t id, uint64_t seq,
			     uint64_t stored, uint64_t allocs, uint64_t bytes)
{
	struct tr_rec r;
	memset(&r, 0, sizeof(r));
	r.type = type;
	r.u.checkpoint.id = id;
	r.u.checkpoint.launch_seq = seq;
	r.u.checkpoint.allocs = allocs;
	r.u.checkpoint.bytes = bytes;
	r.u.checkpoint.stored = stored;
	return tw_record(w, &r);
}

static long rec_checkpoint(struct trace_writer *w, uint32_t type, uint64_t id, uint64_t seq,
			   uint64_t stored)
{
	return rec_checkpoint_n(w, type, id, seq, stored, K.na, live_bytes());
}

/* One chunk: its blob (copied from the old segment, or stored anew) and the
 * H2D record that puts it at dst. */
static int put_chunk(struct seg *g, uint64_t dst, const uint8_t *p, size_t n, uint64_t id)
{
	uint64_t h = tr_hash(p, n), start = g->nw.offset;
	struct cap_map_ent *old;

	if (!tw_has_blob(&g->nw, h)) {
		old = cap_map_get(&K.chunks, h ? h : 1);
		if (old && old->v2 && copy_range(g, old->v1, old->v2, 1) == 0) {
			tw_mark_blob(&g->nw, h);
		} else {
			if (g->nw.failed || tw_blob_hashed(&g->nw, p, n, h) < 0)
				return -1;
			g->stored += g->nw.offset - start;
		}
		cap_map_put(&g->chunks, h ? h : 1, start, g->nw.offset - start);
	}
	if (tw_h2d(&g->nw, &(struct tr_copy){ .dst = dst, .size = n, .blob = h,
					     .flags = TR_F_CHECKPOINT }) < 0)
		return -1;
	if (K.test_kill == id && !g->bytes)
		raise(SIGKILL);   /* tests: a capture killed in the middle of a checkpoint */
	g->bytes += n;
	return 0;
}

/* n bytes read back from addr, as chunks.  0 or -1 (a write failed). */
static int put_data(struct seg *g, uint64_t addr, const uint8_t *p, size_t n, uint64_t id)
{
	for (size_t c = 0; c < n; c += K.chunk) {
		size_t m = n - c < K.chunk ? n - c : (size_t)K.chunk;
		if (put_chunk(g, addr + c, p + c, m, id) < 0)
			return -1;
	}
	return 0;
}

static int cmp_order(const void *x, const void *y)
{
	const struct ck_alloc *a = *(const struct ck_alloc *const *)x;
	const struct ck_alloc *b = *(const struct ck_alloc *const *)y;
	return a->order < b->order ? -1 : a->order > b->order;
}

/* The live allocations, oldest first (the caller frees the vector). */
static struct ck_alloc **sorted_allocs(void)
{
	struct ck_alloc **v = xcalloc(K.na + 1, sizeof(*v));
	for (size_t i = 0; i < K.na; i++)
		v[i] = &K.a[i];
	qsort(v, K.na, sizeof(*v), cmp_order);
	return v;
}

/* time in cuMemcpyDtoH during put_allocs (the profile: take's other parts
 * leave it out) */
static uint64_t read_ns;

/* ALLOC records and contents of every live allocation, oldest first. */
static int put_allocs(struct seg *g, uint64_t id, struct strbuf *why)
{
	struct ck_alloc **v = sorted_allocs();
	unsigned unreadable = 0;
	int ret = -1;
	for (size_t i = 0; i < K.na; i++) {
		const struct ck_alloc *a = v[i];
		if (cap_put_alloc(&g->nw, a->addr, a->size, a->kind, a->flags, a->name) < 0) {
			sb_addf(why, "cannot write %s: %s", g->nw.path, strerror(errno));
			goto out;
		}
		if (!is_readable(a)) {
			unreadable++;
			continue;
		}
		for (uint64_t off = 0; off < a->size;) {
			size_t n = a->size - off < K.bufsize ? (size_t)(a->size - off) : (size_t)K.bufsize;
			uint64_t tr = CAP_PROF_T0();
			CUresult cr = cuMemcpyDtoH(g->buf, a->addr + off, n);
			if (cap_prof_on)
				read_ns += cap_prof_add(CP_CK_READ, tr, n) - tr;
			if (cr != CUDA_SUCCESS && !ctx_dead(cr)) {
				unreadable++;   /* this allocation only: the rest may still be read */
				break;
			}
			if (cr != CUDA_SUCCESS) {
				const char *en = NULL;
				if (cuGetErrorName(cr, &en) != CUDA_SUCCESS || !en)
					en = "an error";
				sb_addf(why, "reading back %llu bytes at 0x%llx returned %s",
					(unsigned long long)n, (unsigned long long)(a->addr + off), en);
				goto out;
			}
			if (put_data(g, a->addr + off, g->buf, n, id) < 0) {
				sb_addf(why, "cannot write %s: %s", g->nw.path,
					errno ? strerror(errno) : "write failed");
				goto out;
			}
			off += n;
		}
	}
	if (unreadable)
		note(&g->nw, 0, "checkpoint %llu: %u allocation(s) could not be read back (a mapping "
		     "without access, or cuMemcpyDtoH refused them); replay gives them zeros",
		     (unsigned long long)id, unreadable);
	ret = 0;
out:
	free(v);
	return ret;
}

/* The read-back buffer, K.bufsize bytes: pinned where the driver gives it
 * (DMA straight into it), else malloc'd.  Kept for the run.  NULL: no
 * host memory at all. */
static uint8_t *staging_get(void)
{
	void *p = NULL;
	if (K.staging)
		return K.staging;
	if (cuMemHostAlloc(&p, K.bufsize, 0) == CUDA_SUCCESS && p) {
		K.staging_pinned = 1;
	} else {
		p = malloc(K.bufsize);
		K.staging_pinned = 0;
	}
	K.staging = p;
	return K.staging;
}

static void seg_release(struct seg *g)
{
	if (g->rfd >= 0)
		close(g->rfd);
	free(g->carry);
	cap_map_release(&g->chunks);
}

/* The new segment g (renamed over TRACE already) becomes *w: its writer,
 * carries and chunks; takes *path.  end_off: where its checkpoint ended. */
static void adopt(struct trace_writer *w, struct seg *g, char **path, uint64_t id, uint64_t end_off)
{
	g->nw.zstd_level = w->zstd_level;   /* the window's level again */
	g->nw.zstd_always = w->zstd_always;
	g->nw.on_fail = w->on_fail;         /* and who says it when a write fails */
	tw_close(w);
	*w = g->nw;
	g->nw = (struct trace_writer)TRACE_WRITER_INIT;
	free(w->path);
	w->path = *path;
	*path = NULL;
	free(K.carry);
	K.carry = g->carry;
	K.ncarry = g->ncarry;
	K.acarry = g->acarry;
	g->carry = NULL;
	cap_map_release(&K.chunks);
	K.chunks = g->chunks;
	memset(&g->chunks, 0, sizeof(g->chunks));
	K.count = id;
	K.last_size = end_off;
	K.last_real_ns = real_ns();
	K.switches++;   /* event numbers change here (ckpt_epoch) */
}

/*
 * Write TRACE.next and rename it over TRACE; on success *w is the new
 * segment's writer.  Returns 0, or -1 with why (TRACE untouched).
 */
static int take(struct trace_writer *w, uint64_t seq, struct strbuf *why)
{
	struct seg g;
	struct strbuf next = STRBUF_INIT, err = STRBUF_INIT;
	char *path = xstrdup(w->path);
	uint64_t id = K.count + 1, tp = CAP_PROF_T0();
	struct tr_tensormap *tm = NULL;
	size_t ntm;
	CUresult cr;
	int ret = -1;

	memset(&g, 0, sizeof(g));
	g.nw = (struct trace_writer)TRACE_WRITER_INIT;
	g.rfd = -1;
	read_ns = 0;
	if ((cr = cuCtxSynchronize()) != CUDA_SUCCESS) {
		const char *en = NULL;
		cuGetErrorName(cr, &en);
		sb_addf(why, "cuCtxSynchronize returned %s", en ? en : "an error");
		goto out;
	}
	CAP_LAP(CP_CK_SYNC, tp);
	g.buf = staging_get();
	CAP_LAP(CP_CK_HOSTMEM, tp);
	if (!g.buf) {
		sb_addf(why, "out of host memory for a %llu-byte read-back buffer",
			(unsigned long long)K.bufsize);
		goto out;
	}
	g.rfd = open(path, O_RDONLY | O_CLOEXEC);
	if (g.rfd < 0) {
		sb_addf(why, "cannot reopen %s: %s", path, strerror(errno));
		goto out;
	}
	sb_addf(&next, "%s.next", path);
	if (tw_open(&g.nw, next.buf, &err) < 0) {
		sb_add(why, err.buf, err.len);
		goto out;
	}
	g.nw.zstd_level = K.zstd_level;
	ntm = tmaps_copy(&tm);
	if (carry_all(&g, K.carry, K.ncarry) < 0 || tmaps_write(&g.nw, tm, ntm) < 0 ||
	    rec_checkpoint(&g.nw, TR_CHECKPOINT_BEGIN, id, seq, 0) < 0) {
		sb_addf(why, "cannot write %s: %s", next.buf, strerror(errno));
		goto fail;
	}
	if (put_allocs(&g, id, why) < 0)
		goto fail;
	if (rec_checkpoint(&g.nw, TR_CHECKPOINT_END, id, seq, g.stored) < 0 || g.nw.failed) {
		sb_addf(why, "cannot write %s: %s", next.buf, strerror(errno));
		goto fail;
	}
	if (rename(next.buf, path) < 0) {
		sb_addf(why, "cannot rename %s to %s: %s", next.buf, path, strerror(errno));
		goto fail;
	}
	adopt(w, &g, &path, id, g.nw.offset);
	cap_tm_forget();   /* tensor blocks (--tensors) are written again after a checkpoint */
	ret = 0;
	goto out;
fail:
	tw_close(&g.nw);
	unlink(next.buf);
out:
	if (cap_prof_on)
		cap_prof_put(CP_CK_REST, cap_prof_now_ns() - tp - read_ns);
	seg_release(&g);
	free(tm);
	free(path);
	sb_release(&next);
	sb_release(&err);
	return ret;
}

/* 1 while the adaptive interval holds checkpoints back: less than
 * cost_ratio times the last one's duration since it ended.  `count`: a
 * trigger fired (counted in K.deferred, once per hold). */
static int held(int count)
{
	/* before the first attempt, its cost as estimated from the live bytes,
	 * counted from the capture's start (K.last_ns is set at ckpt_init) */
	uint64_t cost = K.attempts ? K.last_cost_ns : (K.live >> 20) * K.first_ns_per_mib;
	uint64_t wait = K.cost_ratio * cost, bg = K.bg_ratio * K.last_bg_ns;
	if (!K.cost_ratio)
		wait = 0;
	if (bg > wait)
		wait = bg;
	if (!wait || mono_ns() - K.last_ns >= wait)
		return 0;
	if (count && K.deferred_at != K.last_ns) {
		K.deferred_at = K.last_ns;
		K.deferred++;
	}
	return 1;
}

static int due(const struct trace_writer *w, uint64_t seq)
{
	uint64_t size = cap_wq_size(w);   /* with what the writer thread holds */
	uint64_t window = size - K.window_start;
	uint64_t bytes = K.every_bytes;

	if (seq == K.last_launch)
		return 0;   /* nothing launched since: a checkpoint would change nothing */
	if (K.max_bytes && size >= K.max_bytes)
		return 1;   /* a limit: never deferred */
	if (!bytes) {
		bytes = K.last_size / 100 * K.percent;
		if (bytes < K.min_bytes)
			bytes = K.min_bytes;
	}
	if (window >= bytes || (K.every_launches && seq - K.last_launch >= K.every_launches) ||
	    (K.every_ns && mono_ns() - K.last_ns >= K.every_ns))
		return !held(1);
	return 0;
}

/* ---- checkpoints written by a background thread ------------------------------
 *
 * The program only waits for the read-back: every live allocation is copied
 * into one host snapshot (pinned; grown as needed, kept for the run), then
 * a thread writes TRACE.next from it (carried records, the checkpoint)
 * while the program runs on and its records go on being appended to TRACE
 * as before, so TRACE stays whole whatever happens.  At the first launch
 * after the thread is done (or at exit), the program's thread appends what
 * TRACE got since the snapshot (offset off0 on) to TRACE.next, renames it
 * over TRACE and switches writers.  TRACE forgets its blobs at off0, so a
 * record after off0 never refers to a blob before it.  One at a time; a
 * snapshot larger than GPUREDUCE_CKPT_SNAPSHOT_MAX, or one that cannot be
 * allocated, falls back to the synchronous path (take).
 */
struct snap_alloc {
	uint64_t addr, size, off;   /* off: where its bytes are in K.snap */
	uint32_t kind;
	uint32_t flags;             /* the ALLOC's */
	int readable;
	char *name;
};

static struct {
	int running;                /* started, not yet joined */
	int done;                   /* set by the thread when it is through */
	pthread_t th;
	struct seg g;
	uint64_t id, seq, off0, nrec0, end_off, bytes, stall_ns;
	uint64_t thread_ns;         /* how long the thread took */
	size_t carry_mark;          /* K.carry entries from here on came after off0 */
	struct carry *carry;        /* K.carry as it was at off0 */
	struct tr_tensormap *tmaps; /* the carried maps then (tmaps_copy) */
	size_t ntmaps;
	size_t ncarry;
	struct snap_alloc *a;
	size_t na;
	unsigned unreadable;
	int ret;
	struct strbuf why, next;
} J;

static int snap_reserve(uint64_t n)
{
	void *p = NULL;
	if (K.snap_cap >= n)
		return 1;
	if (K.snap) {
		if (K.snap_pinned)
			cuMemFreeHost(K.snap);
		else
			free(K.snap);
		K.snap = NULL;
		K.snap_cap = 0;
	}
	n += n / 4;   /* room to grow */
	if (K.snap_pin && cuMemHostAlloc(&p, n, 0) == CUDA_SUCCESS && p) {
		K.snap_pinned = 1;
	} else {
		p = malloc(n);
		K.snap_pinned = 0;
	}
	if (!p)
		return 0;
	K.snap = p;
	K.snap_cap = n;
	return 1;
}

static void job_release(void)
{
	for (size_t i = 0; i < J.na; i++)
		free(J.a[i].name);
	free(J.a);
	free(J.carry);
	free(J.tmaps);
	seg_release(&J.g);
	sb_release(&J.why);
	sb_release(&J.next);
	memset(&J, 0, sizeof(J));
}

static void *job_main(void *arg)
{
	struct seg *g = &J.g;
	uint64_t t0 = mono_ns();
	(void)arg;
	J.ret = -1;
	if (carry_all(g, J.carry, J.ncarry) < 0 || tmaps_write(&g->nw, J.tmaps, J.ntmaps) < 0 ||
	    rec_checkpoint_n(&g->nw, TR_CHECKPOINT_BEGIN, J.id, J.seq, 0, J.na, J.bytes) < 0)
		goto wfail;
	for (size_t i = 0; i < J.na; i++) {
		const struct snap_alloc *a = &J.a[i];
		if (cap_put_alloc(&g->nw, a->addr, a->size, a->kind, a->flags, a->name) < 0)
			goto wfail;
		if (a->readable && put_data(g, a->addr, K.snap + a->off, (size_t)a->size, J.id) < 0)
			goto wfail;
	}
	if (J.unreadable)
		note(&g->nw, 0, "checkpoint %llu: %u allocation(s) could not be read back (a mapping "
		     "without access, or cuMemcpyDtoH refused them); replay gives them zeros",
		     (unsigned long long)J.id, J.unreadable);
	if (test_slow_ms)
		usleep((useconds_t)(test_slow_ms * 1000));
	if (rec_checkpoint_n(&g->nw, TR_CHECKPOINT_END, J.id, J.seq, g->stored, J.na, J.bytes) < 0 ||
	    g->nw.failed)
		goto wfail;
	J.end_off = g->nw.offset;
	J.ret = 0;
	goto out;
wfail:
	sb_addf(&J.why, "cannot write %s: %s", J.next.buf, seg_why(g));
out:
	J.thread_ns = mono_ns() - t0;
	__atomic_store_n(&J.done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * Snapshot the live memory and start the thread.  Returns 0 (started), 1
 * (not attempted: too large, no memory for the snapshot, no thread; take
 * the synchronous path) or -1 with why (the context failed: no checkpoint).
 */
static int job_start(struct trace_writer *w, uint64_t seq, struct strbuf *why)
{
	uint64_t t0 = mono_ns(), off = 0, live = live_bytes(), tp = CAP_PROF_T0();
	struct ck_alloc **v = NULL;
	struct strbuf err = STRBUF_INIT;
	sigset_t all, old;
	CUresult cr;
	int ret = 1;

	/* no read-back buffer (K.staging): the snapshot is read into directly */
	if (!K.async || live > K.snap_max || !snap_reserve(live ? live : 1))
		return 1;
	CAP_LAP(CP_CK_HOSTMEM, tp);
	if ((cr = cuCtxSynchronize()) != CUDA_SUCCESS) {
		const char *en = NULL;
		cuGetErrorName(cr, &en);
		sb_addf(why, "cuCtxSynchronize returned %s", en ? en : "an error");
		return -1;
	}
	CAP_LAP(CP_CK_SYNC, tp);
	memset(&J, 0, sizeof(J));
	J.g.nw = (struct trace_writer)TRACE_WRITER_INIT;
	J.g.rfd = -1;
	J.g.buf = NULL;         /* copy_range's fallback takes a small buffer of its own */
	J.id = K.count + 1;
	J.seq = seq;
	J.bytes = live;
	v = sorted_allocs();
	J.a = xcalloc(K.na + 1, sizeof(*J.a));
	J.na = K.na;
	for (size_t i = 0; i < K.na; i++) {
		struct snap_alloc *a = &J.a[i];
		a->addr = v[i]->addr;
		a->size = v[i]->size;
		a->kind = v[i]->kind;
		a->flags = v[i]->flags;
		a->name = v[i]->name ? xstrdup(v[i]->name) : NULL;
		a->off = off;
		a->readable = is_readable(v[i]);
		if (a->readable && a->size) {
			cr = cuMemcpyDtoH(K.snap + off, a->addr, (size_t)a->size);
			if (cr != CUDA_SUCCESS && ctx_dead(cr)) {
				const char *en = NULL;
				if (cuGetErrorName(cr, &en) != CUDA_SUCCESS || !en)
					en = "an error";
				sb_addf(why, "reading back %llu bytes at 0x%llx returned %s",
					(unsigned long long)a->size, (unsigned long long)a->addr, en);
				ret = -1;
				goto fail;
			}
			if (cr != CUDA_SUCCESS)
				a->readable = 0;   /* this allocation only */
		}
		if (!a->readable)
			J.unreadable++;
		off += a->size;
	}
	if (cap_prof_on)
		tp = cap_prof_add(CP_CK_READ, tp, live);
	sb_addf(&J.next, "%s.next", w->path);
	J.g.rfd = open(w->path, O_RDONLY | O_CLOEXEC);
	if (J.g.rfd < 0 || tw_open(&J.g.nw, J.next.buf, &err) < 0)
		goto fail;   /* the synchronous path will say why */
	J.g.nw.zstd_level = K.zstd_level;
	J.ntmaps = tmaps_copy(&J.tmaps);
	J.carry = xcalloc(K.ncarry + 1, sizeof(*J.carry));
	memcpy(J.carry, K.carry, K.ncarry * sizeof(*J.carry));
	J.ncarry = J.carry_mark = K.ncarry;
	J.off0 = w->offset;
	J.nrec0 = w->nrec;
	/* the thread takes no signal meant for the program */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	if (pthread_create(&J.th, NULL, job_main, NULL) != 0) {
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		goto fail;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	tw_forget_blobs(w);
	J.running = 1;
	/* the window starts here: tensor blocks (--tensors) are written again
	 * at the next launch, so they land in the records the job carries */
	cap_tm_forget();
	J.stall_ns = mono_ns() - t0;
	CAP_PROF(CP_CK_REST, tp, 0);
	free(v);
	sb_release(&err);
	return 0;
fail:
	if (J.g.nw.fd >= 0) {
		tw_close(&J.g.nw);
		unlink(J.next.buf);
	}
	job_release();
	free(v);
	sb_release(&err);
	return ret;
}

static void note_failed(struct trace_writer *w, uint64_t id, uint64_t seq, const char *why)
{
	K.failures++;
	note(w, 1, "checkpoint %llu at launch #%llu was not taken: %s; the trace keeps every "
	     "record since the last checkpoint%s", (unsigned long long)id,
	     (unsigned long long)seq, why,
	     K.failures >= MAX_FAILURES ? " (no further checkpoints after this failure)" : "");
	if (K.failures >= MAX_FAILURES)
		K.on = 0;
}

static void limit_check(struct trace_writer *w)
{
	if (K.max_bytes && w->offset >= K.max_bytes && !K.limit_noted) {
		K.limit_noted = 1;
		note(w, 1, "checkpoint %llu alone is %llu bytes, over --max-trace-bytes=%llu: the trace "
		     "cannot be kept that small; checkpoints go on by the other triggers",
		     (unsigned long long)K.count, (unsigned long long)w->offset,
		     (unsigned long long)K.max_bytes);
	}
	if (K.limit_noted && K.max_bytes && K.max_bytes < 2 * K.last_size)
		K.max_bytes = 2 * K.last_size;   /* else every launch would checkpoint */
}

/* Join the thread; append the window so far to TRACE.next, rename it over
 * TRACE and switch *w to it (or note why not: TRACE goes on as it was). */
static void job_finish(struct trace_writer *w)
{
	uint64_t t0, start, seq, tp = CAP_PROF_T0();
	char *path = NULL;

	pthread_join(J.th, NULL);
	J.running = 0;
	cap_wq_sync(w);   /* the window is copied from the file (writer thread's queue too) */
	t0 = mono_ns();
	if (J.ret < 0)
		goto fail;
	start = J.g.nw.offset;
	if (copy_range(&J.g, J.off0, w->offset - J.off0, w->nrec - J.nrec0) < 0 || J.g.nw.failed) {
		sb_addf(&J.why, "cannot copy the records since the snapshot into %s: %s", J.next.buf,
			seg_why(&J.g));
		goto fail;
	}
	/* blobs: the checkpoint's, and those written since off0 */
	for (size_t i = 0; i < w->seen_cap; i++)
		if (w->seen[i])
			tw_mark_blob(&J.g.nw, w->seen[i]);
	/* carries made since off0 moved with the window */
	for (size_t i = J.carry_mark; i < K.ncarry; i++) {
		struct carry c = K.carry[i];
		c.off = c.off - J.off0 + start;
		ALLOC_GROW(J.g.carry, J.g.ncarry + 1, J.g.acarry);
		J.g.carry[J.g.ncarry++] = c;
	}
	if (rename(J.next.buf, w->path) < 0) {
		sb_addf(&J.why, "cannot rename %s to %s: %s", J.next.buf, w->path, strerror(errno));
		goto fail;
	}
	path = xstrdup(w->path);
	adopt(w, &J.g, &path, J.id, J.end_off);
	K.window_start = start;
	K.last_ns = mono_ns();
	K.last_cost_ns = J.stall_ns + (K.last_ns - t0);
	K.total_cost_ns += K.last_ns - t0;
	K.last_bg_ns = J.thread_ns;
	K.background++;
	limit_check(w);
	goto out;
fail:
	tw_close(&J.g.nw);
	unlink(J.next.buf);
	note_failed(w, J.id, J.seq, J.why.buf);
out:
	free(path);
	seq = J.seq;
	job_release();   /* clears J */
	ckpt_progress(seq, 1);
	CAP_PROF(CP_CK_SWITCH, tp, 0);
}

void ckpt_finish(struct trace_writer *w)
{
	uint64_t t0 = mono_ns(), wait_ns = 0;

	if (!K.inited || !K.attempts)
		return;
	if (J.running) {
		job_finish(w);   /* the exit waits for the checkpoint in flight */
		wait_ns = mono_ns() - t0;
	}
	note(w, 0, "checkpoints: %llu taken in %.3f s (the last %.3f s; read back through %s host "
	     "memory; %llu written in the background; the exit waited %.3f s for one); the adaptive "
	     "interval (%llux a checkpoint's time) held back %llu",
	     (unsigned long long)K.count, (double)K.total_cost_ns / 1e9, (double)K.last_cost_ns / 1e9,
	     (K.snap ? K.snap_pinned : K.staging_pinned) ? "pinned" : "pageable",
	     (unsigned long long)K.background, (double)wait_ns / 1e9, (unsigned long long)K.cost_ratio,
	     (unsigned long long)K.deferred);
}

uint64_t ckpt_epoch(void)
{
	return K.attempts + K.switches;
}

void ckpt_maybe(struct trace_writer *w, uint64_t seq)
{
	struct strbuf why = STRBUF_INIT;
	uint64_t t0;
	int r;

	if (!K.inited)
		return;
	if (J.running) {
		/* one at a time; switch to it once it is written, or wait for it
		 * when the file reaches --max-trace-bytes (a limit) */
		if (__atomic_load_n(&J.done, __ATOMIC_ACQUIRE) || (K.max_bytes && cap_wq_size(w) >= K.max_bytes))
			job_finish(w);
		return;
	}
	if (!K.on || K.graphs || w->failed || !due(w, seq))
		return;
	cap_glob_discover();   /* module variables kernels keep state in: live allocations too */
	cap_wq_sync(w);   /* a checkpoint reads the file (its carried records); offsets exact */
	K.attempts++;
	t0 = mono_ns();
	r = job_start(w, seq, &why);
	if (r == 0) {
		/* in flight: the window goes on in TRACE; job_finish moves it */
		K.last_launch = seq;
		K.window_start = w->offset;
		K.last_ns = mono_ns();
		K.total_cost_ns += J.stall_ns;
		sb_release(&why);
		return;
	}
	if (r < 0)
		note_failed(w, K.count + 1, seq, why.buf);
	else if (take(w, seq, &why) < 0)
		note_failed(w, K.count + 1, seq, why.buf);
	else
		limit_check(w);
	if (K.limit_noted && K.max_bytes && K.max_bytes < 2 * K.last_size)
		K.max_bytes = 2 * K.last_size;
	/* taken or not, the next one is due a whole interval from now */
	K.window_start = w->offset;
	K.last_launch = seq;
	K.last_ns = mono_ns();
	K.last_cost_ns = K.last_ns - t0;
	K.total_cost_ns += K.last_cost_ns;
	ckpt_progress(seq, 1);
	sb_release(&why);
}
