/*
 * writeq.c - the capture's writer thread (issue 26): the bytes a program
 * copies to the GPU leave its thread as a memcpy.
 *
 * Without it, every host-to-device copy was hashed, zstd-compressed and
 * written (a BLOB record, then the MEMCPY_H2D) inside the driver callback,
 * on the program's thread: about 1.2 ms per MiB copied in on the H200's
 * host.  Here the callback copies the bytes (of a copy of 16 KiB or
 * more; smaller ones are stored inline, through the same queue) into a
 * bounded staging ring (GPUREDUCE_STAGING_MIB, default 64), hashing each
 * 64 KiB piece while it is still in the cache, and queues them; this
 * thread compresses and writes them.  Everything else inject.c writes leaves the trace writer
 * through the same queue (the writer's `out` hook, trace/trace.h), so the
 * file holds the records in the order they were made, byte for byte what
 * the single-threaded writer writes (tw_blob_store is its own code).
 *
 * The hash stays on the program's thread (a few percent of the old cost):
 * it decides whether the blob is new (deduplication), so event numbers
 * stay exact at once.  A queued blob's stored size is known only once it
 * is compressed: until then w->offset lags behind the file by it.  Who
 * needs exact offsets (records carried into checkpoints, checkpoints
 * themselves) asks cap_wq_mark or cap_wq_sync, which wait for the thread.
 *
 * Crash safety is unchanged: cap_wq_sync puts everything queued on disk
 * and inject.c calls it at the fault, at exit, before a checkpoint reads
 * the file and before fork; the flusher's tick queues the buffer, and the
 * thread writes it at once.  When the ring is full the callback waits for
 * room; a blob larger than the ring is written on the program's thread,
 * after the queue is empty, as before.
 *
 * Callers of everything here but the thread hold inject.c's lock: there is
 * one producer at a time.  The thread never takes that lock, and makes no
 * CUDA call.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "../trace/trace.h"
#include "capture.h"
#include "prof.h"

enum { J_BYTES = 1, J_BLOB, J_SKIP };
/* INLINE_MAX: a copy smaller than this is stored on the program's thread:
 * handing it over (two jobs, a wake-up) costs more than compressing it
 * (4 KiB copies: ~2 us more a copy on the build machine) */
enum { NJOBS = 1024, HASH_PIECE = 64 << 10, INLINE_MAX = 16 << 10 };

struct wq_job {
	uint64_t off, len;         /* its bytes in the ring */
	uint64_t hash;             /* J_BLOB */
	int fd;                    /* the file they go to */
	int kind;                  /* J_*; 0 while the producer fills it */
	int level, always;         /* J_BLOB: the writer's zstd settings */
};

static struct {
	pthread_mutex_t mu;
	pthread_cond_t work;       /* the thread: a job is ready */
	pthread_cond_t done;       /* producers: a job was released */
	int started;
	uint8_t *ring;
	uint64_t cap, head, tail;  /* used: [tail, head), or [tail, cap) and [0, head) */
	struct wq_job jobs[NJOBS]; /* FIFO: jobs[first], ... n of them */
	size_t first, n;
	int failed;                /* a write failed: nothing more is written */
	int err;                   /* ...its errno, for the writer's report */
	/* what the thread wrote of blobs since the last cap_wq_poll */
	uint64_t done_bytes, done_stored, done_blobs, done_raw;
	unsigned test_slow_us;     /* tests: the thread sleeps this long per job */
} Q = { .mu = PTHREAD_MUTEX_INITIALIZER, .work = PTHREAD_COND_INITIALIZER,
	.done = PTHREAD_COND_INITIALIZER };

/* Program side (inject.c's lock): blobs queued whose size w->offset does
 * not hold yet, and their bytes (raw, framed: at least what they take). */
static uint64_t unfolded, unfolded_raw;

/* The thread's own writer: the blobs' encoder (zstd context, buffer) on
 * the producer's fd; never closed (the fd is not its own). */
static struct trace_writer bw = TRACE_WRITER_INIT;

static int wq_out(struct trace_writer *w, const struct iovec *iov, int n);

static int attached(const struct trace_writer *w)
{
	return Q.started && w->out == wq_out;
}

/* ---- the ring (Q.mu held) ------------------------------------------------ */

/* Where n contiguous bytes fit now, or -1.  The lowest such offset: a
 * thread that keeps up then cycles through the ring's first pages only
 * (a page's first touch is a fault, dear in a VM), not all of it. */
static int64_t ring_fit(uint64_t n)
{
	if (!Q.n)
		Q.head = Q.tail = 0;
	if (Q.head >= Q.tail) {
		if (n < Q.tail)
			return 0;   /* wrap: head stays below tail */
		return Q.cap - Q.head >= n ? (int64_t)Q.head : -1;
	}
	return Q.tail - Q.head > n ? (int64_t)Q.head : -1;
}

/* A job slot for n bytes (n <= Q.cap), waiting for room; kind 0 (being
 * filled) until the producer sets it. */
static struct wq_job *reserve(uint64_t n)
{
	uint64_t t0 = 0;
	int64_t off;
	struct wq_job *j;

	while (Q.n == NJOBS || (off = ring_fit(n)) < 0) {
		if (!t0)
			t0 = CAP_PROF_T0();
		pthread_cond_wait(&Q.done, &Q.mu);
	}
	if (t0)
		CAP_PROF(CP_WQ_WAIT, t0, 0);
	j = &Q.jobs[(Q.first + Q.n) % NJOBS];
	Q.n++;
	memset(j, 0, sizeof(*j));
	j->off = (uint64_t)off;
	j->len = n;
	Q.head = (uint64_t)off + n;
	return j;
}

static void ready(struct wq_job *j, int kind)
{
	pthread_mutex_lock(&Q.mu);
	j->kind = kind;
	pthread_cond_signal(&Q.work);
	pthread_mutex_unlock(&Q.mu);
}

/* Until the thread has written every queued job (Q.mu held). */
static void wait_empty(void)
{
	uint64_t t0 = Q.n ? CAP_PROF_T0() : 0;
	while (Q.n)
		pthread_cond_wait(&Q.done, &Q.mu);
	if (t0)
		CAP_PROF(CP_WQ_WAIT, t0, 0);
}

/* ---- the thread ------------------------------------------------------------ */

/* One job's writing; 0 or -1.  *stored: the bytes it added to the file. */
static int run_job(const struct wq_job *j, uint64_t *stored)
{
	const uint8_t *p = Q.ring + j->off;
	uint64_t t0 = CAP_PROF_T0(), off0, st0;
	int r;

	*stored = 0;
	if (j->kind == J_BYTES) {
		struct iovec v = { (void *)p, (size_t)j->len };
		return tw_writev_all(j->fd, &v, 1);
	}
	bw.fd = j->fd;
	bw.zstd_level = j->level;
	bw.zstd_always = j->always;
	off0 = bw.offset;
	st0 = bw.bytes_stored;
	r = tw_blob_store(&bw, p, (size_t)j->len, j->hash);
	*stored = bw.offset - off0;
	__atomic_add_fetch(&Q.done_stored, bw.bytes_stored - st0, __ATOMIC_RELAXED);
	if (bw.seen_n > 4096)
		tw_forget_blobs(&bw);   /* it never deduplicates: the producer did */
	CAP_PROF(CP_WQ_BLOB, t0, j->len);
	return r;
}

static void *wq_main(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&Q.mu);
	for (;;) {
		struct wq_job j;
		uint64_t stored = 0;
		int r = 0, failed, e;

		while (!Q.n || !Q.jobs[Q.first].kind)
			pthread_cond_wait(&Q.work, &Q.mu);
		j = Q.jobs[Q.first];
		failed = Q.failed;
		pthread_mutex_unlock(&Q.mu);
		if (Q.test_slow_us)
			usleep(Q.test_slow_us);
		if (!failed && j.kind != J_SKIP)
			r = run_job(&j, &stored);
		e = r < 0 ? errno : 0;
		pthread_mutex_lock(&Q.mu);
		Q.first = (Q.first + 1) % NJOBS;
		Q.n--;
		if (Q.n)
			Q.tail = Q.jobs[Q.first].off;
		if (r < 0 && !Q.failed) {
			Q.failed = 1;
			Q.err = e;
		}
		if (j.kind == J_BLOB) {
			Q.done_bytes += stored;
			Q.done_blobs++;
			Q.done_raw += j.len;
		}
		pthread_cond_broadcast(&Q.done);
	}
	return NULL;
}

int cap_wq_start(uint64_t cap)
{
	const char *s = getenv("GPUREDUCE_WQ_TEST_SLOW_US");
	sigset_t all, old;
	pthread_t th;
	int r;

	if (Q.started || cap < (1 << 20))
		return -1;
	/* pages are touched only as the backlog needs them (ring_fit); huge
	 * ones where the kernel gives them: fewer first-touch faults */
	Q.ring = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (Q.ring == MAP_FAILED) {
		Q.ring = NULL;
		return -1;
	}
#ifdef MADV_HUGEPAGE
	madvise(Q.ring, cap, MADV_HUGEPAGE);   /* advice only */
#endif
	Q.cap = cap;
	Q.test_slow_us = s && *s ? (unsigned)strtoul(s, NULL, 10) : 0;
	/* the program's signals go to its own threads, never to this one */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	r = pthread_create(&th, NULL, wq_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r) {
		munmap(Q.ring, cap);
		Q.ring = NULL;
		return -1;
	}
	pthread_detach(th);
	Q.started = 1;
	return 0;
}

void cap_wq_attach(struct trace_writer *w)
{
	if (Q.started)
		w->out = wq_out;
}

/* ---- the producer side (inject.c's lock held) ------------------------------- */

/* The trace writer's out hook: the bytes join the queue in order.  More
 * than the ring holds: written here once the thread is idle. */
static int wq_out(struct trace_writer *w, const struct iovec *iov, int n)
{
	uint64_t total = 0, at = 0;
	struct wq_job *j;

	for (int i = 0; i < n; i++)
		total += iov[i].iov_len;
	if (!total)
		return 0;
	pthread_mutex_lock(&Q.mu);
	if (Q.failed) {
		pthread_mutex_unlock(&Q.mu);
		errno = Q.err;   /* the thread's failure, for the writer's report */
		return -1;
	}
	if (total > Q.cap) {
		wait_empty();
		pthread_mutex_unlock(&Q.mu);
		return tw_writev_all(w->fd, iov, n);
	}
	j = reserve(total);
	pthread_mutex_unlock(&Q.mu);
	for (int i = 0; i < n; i++) {
		memcpy(Q.ring + j->off + at, iov[i].iov_base, iov[i].iov_len);
		at += iov[i].iov_len;
	}
	j->fd = w->fd;
	ready(j, J_BYTES);
	return 0;
}

void cap_wq_poll(struct trace_writer *w)
{
	uint64_t bytes, stored, blobs, raw;
	int failed, err;

	if (!attached(w) || !unfolded)
		return;
	pthread_mutex_lock(&Q.mu);
	bytes = Q.done_bytes;
	blobs = Q.done_blobs;
	raw = Q.done_raw;
	failed = Q.failed;
	err = Q.err;
	Q.done_bytes = Q.done_blobs = Q.done_raw = 0;
	pthread_mutex_unlock(&Q.mu);
	stored = __atomic_exchange_n(&Q.done_stored, 0, __ATOMIC_RELAXED);
	w->offset += bytes;
	w->bytes_stored += stored;
	unfolded -= blobs;
	unfolded_raw -= raw;
	if (failed)
		tw_set_failed(w, err);
}

int cap_wq_blob(struct trace_writer *w, const void *src, size_t len, uint64_t *hash)
{
	XXH3_state_t st;
	struct wq_job *j;
	uint64_t t0 = CAP_PROF_T0(), h;
	int dup;

	if (!attached(w) || len < INLINE_MAX || len > Q.cap) {
		*hash = tr_hash(src, len);
		t0 = cap_prof_on ? cap_prof_add(CP_HASH, t0, len) : 0;
		if (tw_blob_hashed(w, src, len, *hash) < 0)
			return -1;
		CAP_PROF(CP_BLOB, t0, len);
		return 0;
	}
	if (w->failed || tw_flush(w) < 0)   /* the records before it go first */
		return -1;
	pthread_mutex_lock(&Q.mu);
	j = reserve(len);
	pthread_mutex_unlock(&Q.mu);
	/* the copy and the hash in one pass: each piece is hashed from the cache */
	XXH3_64bits_reset(&st);
	for (size_t off = 0; off < len; off += HASH_PIECE) {
		size_t m = len - off < HASH_PIECE ? len - off : HASH_PIECE;
		uint8_t *to = Q.ring + j->off + off;
		memcpy(to, (const uint8_t *)src + off, m);
		XXH3_64bits_update(&st, to, m);
	}
	h = (uint64_t)XXH3_64bits_digest(&st);
	w->bytes_raw += len;
	dup = tw_has_blob(w, h);
	j->hash = h;
	j->fd = w->fd;
	j->level = w->zstd_level;
	j->always = w->zstd_always;
	ready(j, dup ? J_SKIP : J_BLOB);
	if (!dup) {
		/* the BLOB record is the next event; its bytes are counted in
		 * w->offset once written (cap_wq_poll) */
		tw_mark_blob(w, h);
		w->nrec++;
		unfolded++;
		unfolded_raw += len;
	}
	*hash = h;
	CAP_PROF(CP_STAGE, t0, len);
	return 0;
}

int cap_wq_sync(struct trace_writer *w)
{
	int r;

	if (!attached(w))
		return tw_flush(w);
	r = tw_flush(w);
	pthread_mutex_lock(&Q.mu);
	wait_empty();
	pthread_mutex_unlock(&Q.mu);
	cap_wq_poll(w);
	return r < 0 || w->failed ? -1 : 0;
}

uint64_t cap_wq_mark(struct trace_writer *w)
{
	if (!attached(w))
		return w->offset;
	cap_wq_poll(w);
	if (unfolded) {
		pthread_mutex_lock(&Q.mu);
		wait_empty();
		pthread_mutex_unlock(&Q.mu);
		cap_wq_poll(w);
	}
	return w->offset;
}

uint64_t cap_wq_size(const struct trace_writer *w)
{
	/* a blob is stored raw when zstd does not shrink it: its raw size
	 * and a record header and a BLOB's fields bound what it takes */
	return attached(w) ? w->offset + unfolded_raw + unfolded * 64 : w->offset;
}
