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
 *   file), CHECKPOINT_BEGIN, for every live allocation an ALLOC and its
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
 *   GPUREDUCE_CKPT_BUFFER=B      host buffer for reading back (default 64 MiB)
 *   GPUREDUCE_PROGRESS=FILE      "launches checkpoints last_launch last_ns"
 *                                rewritten at most once a second
 *   GPUREDUCE_CKPT_TEST_KILL=K   tests only: SIGKILL the process in the
 *                                middle of checkpoint K
 */
#include <cuda.h>

#include <errno.h>
#include <fcntl.h>
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

#define AUTO_MIN_BYTES (256ull << 20)
#define MAX_FAILURES 3

struct ck_alloc {
	uint64_t addr, size, order;
	uint32_t kind;
	char *name;              /* globals: the symbol; else NULL */
};

/* A byte range of the current file to copy into the next segment. */
struct carry {
	uint64_t off, len, nrec;
	uint64_t blob;           /* hash of a blob record in the range, or 0 */
	uint64_t key;            /* dedup key (0: none) */
};

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
	uint64_t last_real_ns;   /* CLOCK_REALTIME of the last one taken */
	uint64_t progress_ns;
	int limit_noted;
} K;

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

static uint64_t env_u64(const char *name, uint64_t def)
{
	const char *s = getenv(name);
	char *end;
	unsigned long long v;
	if (!s || !*s)
		return def;
	errno = 0;
	v = strtoull(s, &end, 10);
	return errno || *end ? def : (uint64_t)v;
}

void ckpt_carry(const struct trace_writer *w, uint64_t start, uint64_t nrec, uint64_t blob,
		uint64_t key);

void ckpt_vnote(struct trace_writer *w, int carry, const char *fmt, va_list ap)
{
	struct strbuf sb = STRBUF_INIT;
	struct tr_rec r;
	uint64_t start = w->offset;

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

void ckpt_init(void)
{
	const char *s = getenv("GPUREDUCE_CKPT");
	K.on = !(s && !strcmp(s, "0"));
	K.every_launches = env_u64("GPUREDUCE_CKPT_LAUNCHES", 0);
	K.every_bytes = env_u64("GPUREDUCE_CKPT_BYTES", 0);
	K.percent = env_u64("GPUREDUCE_CKPT_PERCENT", 0);
	K.min_bytes = K.percent ? 1ull << 20 : AUTO_MIN_BYTES;   /* a percentage given: a small floor */
	if (!K.percent)
		K.percent = 50;
	s = getenv("GPUREDUCE_CKPT_ZSTD");
	K.zstd_level = s && *s ? atoi(s) : -1;
	K.every_ns = env_u64("GPUREDUCE_CKPT_SECONDS", 0) * 1000000000ull;
	K.max_bytes = env_u64("GPUREDUCE_MAX_TRACE_BYTES", 0);
	K.chunk = env_u64("GPUREDUCE_CKPT_CHUNK", 1ull << 20);
	K.bufsize = env_u64("GPUREDUCE_CKPT_BUFFER", 64ull << 20);
	K.test_kill = env_u64("GPUREDUCE_CKPT_TEST_KILL", 0);
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

/* ---- live allocations ------------------------------------------------------ */

void ckpt_on_alloc(uint64_t addr, uint64_t size, uint32_t kind, const char *name)
{
	struct cap_map_ent *e;
	struct ck_alloc *a;

	if (!K.inited || !addr)
		return;
	e = cap_map_get(&K.idx, addr);
	if (e) {
		a = &K.a[e->v1 - 1];
		free(a->name);
	} else {
		ALLOC_GROW(K.a, K.na + 1, K.aa);
		a = &K.a[K.na++];
		cap_map_put(&K.idx, addr, K.na, 0);
	}
	a->addr = addr;
	a->size = size;
	a->kind = kind;
	a->order = K.order++;
	a->name = name && *name ? xstrdup(name) : NULL;
}

void ckpt_on_free(uint64_t addr)
{
	uint64_t i, v2;
	if (!K.inited || !cap_map_del(&K.idx, addr, &i, &v2))
		return;
	i--;
	free(K.a[i].name);
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
	if (!K.inited || !K.progress)
		return;
	now = mono_ns();
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

/* Copy len bytes at off of the current file into the new segment. */
static int copy_range(struct seg *g, uint64_t off, uint64_t len, uint64_t nrec)
{
	while (len) {
		size_t n = len < K.bufsize ? (size_t)len : (size_t)K.bufsize;
		ssize_t got = pread(g->rfd, g->buf, n, (off_t)off);
		if (got != (ssize_t)n)
			return -1;
		if (tw_append_raw(&g->nw, g->buf, n, 0) < 0)
			return -1;
		off += n;
		len -= n;
	}
	g->nw.nrec += nrec;
	return 0;
}

static int carry_all(struct seg *g)
{
	for (size_t i = 0; i < K.ncarry; i++) {
		const struct carry *c = &K.carry[i];
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

static long rec_checkpoint(struct trace_writer *w, uint32_t type, uint64_t id, uint64_t seq,
			   uint64_t stored)
{
	struct tr_rec r;
	uint64_t bytes = 0;
	for (size_t i = 0; i < K.na; i++)
		bytes += K.a[i].size;
	memset(&r, 0, sizeof(r));
	r.type = type;
	r.u.checkpoint.id = id;
	r.u.checkpoint.launch_seq = seq;
	r.u.checkpoint.allocs = K.na;
	r.u.checkpoint.bytes = bytes;
	r.u.checkpoint.stored = stored;
	return tw_record(w, &r);
}

/* One chunk: its blob (copied from the old segment, or stored anew) and the
 * H2D record that puts it at dst. */
static int put_chunk(struct seg *g, uint64_t dst, const uint8_t *p, size_t n, uint64_t id)
{
	uint64_t h = tr_hash(p, n), start = g->nw.offset;
	struct cap_map_ent *old;
	struct tr_rec r;

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
	memset(&r, 0, sizeof(r));
	r.type = TR_MEMCPY_H2D;
	r.u.copy.dst = dst;
	r.u.copy.size = n;
	r.u.copy.blob = h;
	r.u.copy.flags = TR_F_CHECKPOINT;
	if (tw_record(&g->nw, &r) < 0)
		return -1;
	if (K.test_kill == id && !g->bytes)
		raise(SIGKILL);   /* tests: a capture killed in the middle of a checkpoint */
	g->bytes += n;
	return 0;
}

static int cmp_order(const void *x, const void *y)
{
	const struct ck_alloc *a = *(const struct ck_alloc *const *)x;
	const struct ck_alloc *b = *(const struct ck_alloc *const *)y;
	return a->order < b->order ? -1 : a->order > b->order;
}

/* ALLOC records and contents of every live allocation, oldest first. */
static int put_allocs(struct seg *g, uint64_t id, struct strbuf *why)
{
	struct ck_alloc **v = xcalloc(K.na + 1, sizeof(*v));
	unsigned unreadable = 0;
	int ret = -1;

	for (size_t i = 0; i < K.na; i++)
		v[i] = &K.a[i];
	qsort(v, K.na, sizeof(*v), cmp_order);
	for (size_t i = 0; i < K.na; i++) {
		const struct ck_alloc *a = v[i];
		struct tr_rec r;
		memset(&r, 0, sizeof(r));
		r.type = TR_ALLOC;
		r.u.alloc.addr = a->addr;
		r.u.alloc.size = a->size;
		r.u.alloc.kind = a->kind;
		r.u.alloc.name = a->name ? a->name : "";
		if (tw_record(&g->nw, &r) < 0) {
			sb_addf(why, "cannot write %s: %s", g->nw.path, strerror(errno));
			goto out;
		}
		if (!is_readable(a)) {
			unreadable++;
			continue;
		}
		for (uint64_t off = 0; off < a->size;) {
			size_t n = a->size - off < K.bufsize ? (size_t)(a->size - off) : (size_t)K.bufsize;
			CUresult cr = cuMemcpyDtoH(g->buf, a->addr + off, n);
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
			for (size_t c = 0; c < n; c += K.chunk) {
				size_t m = n - c < K.chunk ? n - c : (size_t)K.chunk;
				if (put_chunk(g, a->addr + off + c, g->buf + c, m, id) < 0) {
					sb_addf(why, "cannot write %s: %s", g->nw.path,
						errno ? strerror(errno) : "write failed");
					goto out;
				}
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

static void seg_release(struct seg *g)
{
	if (g->rfd >= 0)
		close(g->rfd);
	free(g->buf);
	free(g->carry);
	cap_map_release(&g->chunks);
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
	uint64_t id = K.count + 1;
	CUresult cr;
	int ret = -1;

	memset(&g, 0, sizeof(g));
	g.nw = (struct trace_writer)TRACE_WRITER_INIT;
	g.rfd = -1;
	if ((cr = cuCtxSynchronize()) != CUDA_SUCCESS) {
		const char *en = NULL;
		cuGetErrorName(cr, &en);
		sb_addf(why, "cuCtxSynchronize returned %s", en ? en : "an error");
		goto out;
	}
	g.buf = malloc(K.bufsize);
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
	if (carry_all(&g) < 0 || rec_checkpoint(&g.nw, TR_CHECKPOINT_BEGIN, id, seq, 0) < 0) {
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
	/* the new segment is TRACE now: switch writers */
	g.nw.zstd_level = w->zstd_level;   /* the window's level again */
	tw_close(w);
	*w = g.nw;
	free(w->path);
	w->path = path;
	path = NULL;
	free(K.carry);
	K.carry = g.carry;
	K.ncarry = g.ncarry;
	K.acarry = g.acarry;
	g.carry = NULL;
	cap_map_release(&K.chunks);
	K.chunks = g.chunks;
	memset(&g.chunks, 0, sizeof(g.chunks));
	K.count = id;
	cap_tm_forget();   /* issue 17: tensor blocks are written again after a checkpoint */
	K.last_size = w->offset;
	K.last_real_ns = real_ns();
	ret = 0;
	goto out;
fail:
	tw_close(&g.nw);
	unlink(next.buf);
out:
	seg_release(&g);
	free(path);
	sb_release(&next);
	sb_release(&err);
	return ret;
}

static int due(const struct trace_writer *w, uint64_t seq)
{
	uint64_t window = w->offset - K.window_start;
	uint64_t bytes = K.every_bytes;

	if (seq == K.last_launch)
		return 0;   /* nothing launched since: a checkpoint would change nothing */
	if (!bytes) {
		bytes = K.last_size / 100 * K.percent;
		if (bytes < K.min_bytes)
			bytes = K.min_bytes;
	}
	if (window >= bytes)
		return 1;
	if (K.every_launches && seq - K.last_launch >= K.every_launches)
		return 1;
	if (K.every_ns && mono_ns() - K.last_ns >= K.every_ns)
		return 1;
	if (K.max_bytes && w->offset >= K.max_bytes)
		return 1;
	return 0;
}

void ckpt_maybe(struct trace_writer *w, uint64_t seq)
{
	struct strbuf why = STRBUF_INIT;

	if (!K.inited || !K.on || K.graphs || w->failed || !due(w, seq))
		return;
	K.attempts++;
	if (take(w, seq, &why) < 0) {
		K.failures++;
		note(w, 1, "checkpoint %llu at launch #%llu was not taken: %s; the trace keeps every "
		     "record since the last checkpoint%s", (unsigned long long)(K.count + 1),
		     (unsigned long long)seq, why.buf,
		     K.failures >= MAX_FAILURES ? " (no further checkpoints after this failure)" : "");
		if (K.failures >= MAX_FAILURES)
			K.on = 0;
	} else if (K.max_bytes && w->offset >= K.max_bytes && !K.limit_noted) {
		K.limit_noted = 1;
		note(w, 1, "checkpoint %llu alone is %llu bytes, over --max-trace-bytes=%llu: the trace "
		     "cannot be kept that small; checkpoints go on by the other triggers",
		     (unsigned long long)K.count, (unsigned long long)w->offset,
		     (unsigned long long)K.max_bytes);
	}
	if (K.limit_noted && K.max_bytes && K.max_bytes < 2 * K.last_size)
		K.max_bytes = 2 * K.last_size;   /* else every launch would checkpoint */
	/* taken or not, the next one is due a whole interval from now */
	K.window_start = w->offset;
	K.last_launch = seq;
	K.last_ns = mono_ns();
	ckpt_progress(seq, 1);
	sb_release(&why);
}
