/*
 * managed.c - content of memory the GPU reads without a copy call (see
 * capture.h): managed memory (cuMemAllocManaged), mapped pinned host memory
 * (cuMemHostAlloc with DEVICEMAP) and host-registered memory
 * (cuMemHostRegister).  The program's CPU writes such bytes directly, so no
 * copy record ever carries them.
 *
 * Capture runs with CUDA_LAUNCH_BLOCKING=1: at each launch (and graph
 * launch) the previous work is done and the host is the only writer.  So
 * before each launch record, every tracked allocation is hashed in 64 KiB
 * chunks (XXH3, the trace's own hash); a chunk whose hash differs from the
 * one seen at the previous launch (or that was never seen) is written as a
 * MEMCPY_H2D record flagged TR_F_HOSTMEM, which replay applies like any
 * copy.  Unchanged chunks cost one hash and nothing in the trace; identical
 * chunks share one blob.
 *
 * Cost: hashing runs at memory speed, but on every launch.  The bytes
 * hashed per launch are capped (GPUREDUCE_HOSTMEM_MAX, default 1 GiB, in
 * order of allocation); an allocation past the cap is not tracked, and the
 * caller writes a note naming it.  State is under inject.c's lock.
 */
#include <stdlib.h>
#include <string.h>

#include "../common/util.h"
#include "capture.h"

enum { CHUNK = 64 * 1024 };

struct mm_alloc {
	uint64_t dev;            /* address the GPU uses (the recorded ALLOC addr) */
	const uint8_t *host;     /* where the CPU reads it */
	uint64_t size;
	uint64_t *hash;          /* per chunk; valid where seen[] is set */
	uint8_t *seen;
	int tracked;             /* 0: over the cap, not hashed */
	int user_pages;          /* the program's own pages (cuMemHostRegister): it may
				  * unmap them while registered, so check first */
};

static struct {
	struct mm_alloc *a;
	size_t n, alloc;
	uint64_t cap, total;     /* bytes hashed per launch: limit, tracked sum */
	int cap_read;
} M;

static uint64_t mm_cap(void)
{
	if (!M.cap_read) {
		const char *s = getenv("GPUREDUCE_HOSTMEM_MAX");
		char *end = NULL;
		unsigned long long v = s && *s ? strtoull(s, &end, 10) : 0;
		M.cap = (s && *s && end && !*end) ? (uint64_t)v : (uint64_t)1 << 30;
		M.cap_read = 1;
	}
	return M.cap;
}

static size_t nchunks(uint64_t size)
{
	return (size_t)((size + CHUNK - 1) / CHUNK);
}

int cap_mm_add(uint64_t dev, const void *host, uint64_t size, int user_pages)
{
	struct mm_alloc *m;

	if (!dev || !host || !size)
		return 0;
	cap_mm_del(dev);
	ALLOC_GROW(M.a, M.n + 1, M.alloc);
	m = &M.a[M.n++];
	memset(m, 0, sizeof(*m));
	m->dev = dev;
	m->host = host;
	m->size = size;
	m->user_pages = user_pages;
	if (M.total + size > mm_cap())
		return -1;
	m->tracked = 1;
	M.total += size;
	m->hash = xcalloc(nchunks(size), sizeof(*m->hash));
	m->seen = xcalloc(nchunks(size), 1);
	return 0;
}

void cap_mm_del(uint64_t dev)
{
	for (size_t i = 0; i < M.n; i++) {
		if (M.a[i].dev != dev)
			continue;
		if (M.a[i].tracked)
			M.total -= M.a[i].size;
		free(M.a[i].hash);
		free(M.a[i].seen);
		M.a[i] = M.a[--M.n];
		return;
	}
}

/* Write one changed chunk as a flagged H2D record. */
static int emit_chunk(struct trace_writer *w, const struct mm_alloc *m, uint64_t off,
		      uint64_t len, uint64_t *h2d)
{
	struct tr_copy c = { .dst = m->dev + off, .src = (uint64_t)(uintptr_t)(m->host + off),
			     .size = len, .flags = TR_F_HOSTMEM };

	if (tw_h2d_data(w, &c, m->host + off) < 0)
		return -1;
	*h2d += len;
	return 0;
}

int cap_mm_sync(struct trace_writer *w, uint64_t *h2d)
{
	for (size_t i = 0; i < M.n; i++) {
		struct mm_alloc *m = &M.a[i];
		if (!m->tracked ||
		    (m->user_pages && cap_host_readable(m->host, (size_t)m->size) == 0))
			continue;
		for (size_t c = 0; c < nchunks(m->size); c++) {
			uint64_t off = (uint64_t)c * CHUNK;
			uint64_t len = m->size - off < CHUNK ? m->size - off : CHUNK;
			uint64_t h = tr_hash(m->host + off, (size_t)len);
			if (m->seen[c] && m->hash[c] == h)
				continue;
			if (emit_chunk(w, m, off, len, h2d) < 0)
				return -1;
			m->hash[c] = h;
			m->seen[c] = 1;
		}
	}
	return 0;
}
