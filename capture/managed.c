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
 *
 * Plain pinned host memory (cuMemAllocHost, cuMemHostAlloc without
 * DEVICEMAP) is device-accessible too under unified addressing, and some
 * programs hand it to kernels (vLLM's and DGL's "UVA" tensors); but most
 * only copy from it, and hashing a loader's pinned staging buffers at
 * every launch would tax exactly the host-fed loops capture must stay
 * cheap on.  So such memory is only remembered (cap_mm_pinned), and
 * tracked from the first launch whose argument bytes hold a pointer into
 * it (cap_mm_args: every 8-byte-aligned word, by-value structs included);
 * from then on its changed chunks are written before each launch that
 * points into it (and before graph launches and device-to-device copies),
 * not before every launch: a large buffer some kernels read (a CPU-side
 * KV cache) is hashed when they run, not at every launch.  Mapped and
 * registered buffers of GPUREDUCE_HOSTMEM_ONUSE bytes or more (16 MiB) are
 * treated the same way (DGL pins whole feature tables with
 * cudaHostRegister); smaller ones, and managed memory (whose pointers
 * often sit in structs in memory), are hashed before every launch.  A
 * pointer that reaches the kernel only through memory (a table of
 * pointers) is not seen.  The test per word: one compare against the span
 * of all remembered ranges, then one bit of a 64 Ki-bit filter over their
 * 2 MiB regions, then a binary search where the bit is set.
 *
 * Device memory another process or API writes follows the same on-use
 * rule (cap_mm_peer): a buffer opened with cuIpcOpenMemHandle, a pointer
 * imported from another process's pool, a range mapped from an imported
 * VMM handle, external memory (Vulkan, DirectX) or a mapped OpenGL
 * resource.  Its bytes change without any call in this process (the
 * exporter's kernels and copies, the graphics API's work), so before each
 * launch that points into it, and before a device-to-device copy that
 * reads it, it is read back (cuMemcpyDtoH: the launches before it are
 * done) and its changed chunks are written the same way; at a graph launch
 * every such buffer a launch pointed into is.  Replay then holds the bytes
 * the kernel read.
 */
#include <stdlib.h>
#include <string.h>

#include <cuda.h>

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
	int on_use;              /* plain pinned: synced before launches that point into it */
	int used;                /* ...and this launch does */
	int peer;                /* device memory another process or API writes:
				  * host is NULL, the bytes are read back (cuMemcpyDtoH) */
};

static struct {
	struct mm_alloc *a;
	size_t n, alloc;
	uint64_t cap, total;     /* bytes hashed per launch: limit, tracked sum */
	int cap_read;
	uint8_t *stage;          /* a peer buffer's bytes, read back */
	size_t stage_len;
	int unread_noted;
} M;

static uint64_t mm_cap(void)
{
	if (!M.cap_read) {
		M.cap = cap_env_u64("GPUREDUCE_HOSTMEM_MAX", (uint64_t)1 << 30);
		M.cap_read = 1;
	}
	return M.cap;
}

static size_t nchunks(uint64_t size)
{
	return (size_t)((size + CHUNK - 1) / CHUNK);
}

static void mm_untrack(uint64_t dev);

static int mm_add(uint64_t dev, const void *host, uint64_t size, int user_pages, int peer)
{
	struct mm_alloc *m;

	if (!dev || (!host && !peer) || !size)
		return 0;
	mm_untrack(dev);
	ALLOC_GROW(M.a, M.n + 1, M.alloc);
	m = &M.a[M.n++];
	memset(m, 0, sizeof(*m));
	m->dev = dev;
	m->host = host;
	m->size = size;
	m->user_pages = user_pages;
	m->peer = peer;
	if (M.total + size > mm_cap())
		return -1;
	m->tracked = 1;
	M.total += size;
	m->hash = xcalloc(nchunks(size), sizeof(*m->hash));
	m->seen = xcalloc(nchunks(size), 1);
	return 0;
}

int cap_mm_add(uint64_t dev, const void *host, uint64_t size, int user_pages)
{
	return mm_add(dev, host, size, user_pages, 0);
}

static void pin_del(uint64_t dev);

static struct mm_alloc *mm_find(uint64_t dev)
{
	for (size_t i = 0; i < M.n; i++)
		if (M.a[i].dev == dev)
			return &M.a[i];
	return NULL;
}

/* Stop hashing dev (it stays remembered as pinned memory, if it was). */
static void mm_untrack(uint64_t dev)
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

void cap_mm_del(uint64_t dev)
{
	pin_del(dev);
	mm_untrack(dev);
}

/* Write one changed chunk (its bytes at bytes + off) as a flagged H2D
 * record; a peer buffer's has no host source. */
static int emit_chunk(struct trace_writer *w, const struct mm_alloc *m, const uint8_t *bytes,
		      uint64_t off, uint64_t len, uint64_t *h2d)
{
	struct tr_copy c = { .dst = m->dev + off, .size = len, .flags = TR_F_HOSTMEM };

	c.src = m->peer ? 0 : (uint64_t)(uintptr_t)(m->host + off);
	if (tw_h2d_data(w, &c, bytes + off) < 0)
		return -1;
	*h2d += len;
	return 0;
}

/* A peer buffer's bytes as the GPU holds them now, or NULL (noted once). */
static const uint8_t *peer_read(const struct mm_alloc *m)
{
	if (M.stage_len < m->size) {
		free(M.stage);
		M.stage = malloc((size_t)m->size);
		M.stage_len = M.stage ? (size_t)m->size : 0;
	}
	if (M.stage && cuMemcpyDtoH(M.stage, (CUdeviceptr)m->dev, (size_t)m->size) == CUDA_SUCCESS)
		return M.stage;
	if (!M.unread_noted++)
		cap_note("memory of another process at 0x%llx (%llu bytes) could not be read back before a "
			 "launch: replay will miss what that process wrote there",
			 (unsigned long long)m->dev, (unsigned long long)m->size);
	return NULL;
}

int cap_mm_sync(struct trace_writer *w, uint64_t *h2d, int mode)
{
	for (size_t i = 0; i < M.n; i++) {
		struct mm_alloc *m = &M.a[i];
		const uint8_t *bytes;
		/* on-use memory: at a launch, only where it points; at a copy,
		 * peer memory only where the copy reads */
		int skip = m->on_use && !m->used &&
			   (mode == CAP_MM_LAUNCH || (mode == CAP_MM_COPY && m->peer));
		m->used = 0;
		if (!m->tracked || skip ||
		    (m->user_pages && cap_host_readable(m->host, (size_t)m->size) == 0))
			continue;
		if (!(bytes = m->peer ? peer_read(m) : m->host))
			continue;
		for (size_t c = 0; c < nchunks(m->size); c++) {
			uint64_t off = (uint64_t)c * CHUNK;
			uint64_t len = m->size - off < CHUNK ? m->size - off : CHUNK;
			uint64_t h = tr_hash(bytes + off, (size_t)len);
			if (m->seen[c] && m->hash[c] == h)
				continue;
			if (emit_chunk(w, m, bytes, off, len, h2d) < 0)
				return -1;
			m->hash[c] = h;
			m->seen[c] = 1;
		}
	}
	return 0;
}

/* ---- plain pinned memory: tracked from the first launch that points at it ---- */

enum { PIN_PAGE_SHIFT = 21, PIN_BITS = 1 << 16, PIN_MAX_PAGES = PIN_BITS };

struct mm_pin {
	uint64_t dev;
	const uint8_t *host;
	uint64_t size;
	int tracked;             /* a launch pointed into it: in M (on_use) */
	int user_pages;          /* registered: check readability (cap_mm_add) */
	int peer;                /* device memory another process or API writes (host NULL) */
};

static struct {
	struct mm_pin *a;        /* sorted by dev, not overlapping */
	size_t n, alloc;
	uint64_t bits[PIN_BITS / 64];   /* filter over the ranges' pages */
	uint64_t lo, hi;                /* every range lies in [lo, hi) */
} P;

static unsigned pin_bit(uint64_t page)
{
	return (unsigned)((page * 0x9E3779B97F4A7C15ull) >> (64 - 16));
}

static void pin_mark(const struct mm_pin *p)
{
	uint64_t first = p->dev >> PIN_PAGE_SHIFT, last = (p->dev + p->size - 1) >> PIN_PAGE_SHIFT;
	if (last - first >= PIN_MAX_PAGES) {
		memset(P.bits, 0xff, sizeof(P.bits));   /* every word is looked up */
		return;
	}
	for (uint64_t pg = first; pg <= last; pg++)
		P.bits[pin_bit(pg) / 64] |= 1ull << (pin_bit(pg) % 64);
}

static void pin_remark(void)
{
	memset(P.bits, 0, sizeof(P.bits));
	P.lo = P.n ? P.a[0].dev : 0;
	P.hi = 0;
	for (size_t i = 0; i < P.n; i++) {
		pin_mark(&P.a[i]);
		if (P.a[i].dev + P.a[i].size > P.hi)
			P.hi = P.a[i].dev + P.a[i].size;
	}
}

/* Index of the first range whose dev is > addr. */
static size_t pin_upper(uint64_t addr)
{
	size_t lo = 0, hi = P.n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (P.a[mid].dev <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void pin_del(uint64_t dev)
{
	size_t i = pin_upper(dev);
	if (!i || P.a[i - 1].dev != dev)
		return;
	memmove(&P.a[i - 1], &P.a[i], (P.n - i) * sizeof(*P.a));
	P.n--;
	pin_remark();
}

uint64_t cap_mm_onuse_min(void)
{
	static uint64_t v;
	static int read;
	if (!read) {
		v = cap_env_u64("GPUREDUCE_HOSTMEM_ONUSE", (uint64_t)16 << 20);
		read = 1;
	}
	return v;
}

static void pin_add(uint64_t dev, const void *host, uint64_t size, int user_pages, int peer)
{
	size_t i;

	if (!dev || (!host && !peer) || !size || dev + size < dev)
		return;
	cap_mm_del(dev);
	/* a range the driver handed out again: drop what it overlaps */
	while ((i = pin_upper(dev + size - 1)) && P.a[i - 1].dev + P.a[i - 1].size > dev)
		cap_mm_del(P.a[i - 1].dev);
	i = pin_upper(dev);
	ALLOC_GROW(P.a, P.n + 1, P.alloc);
	memmove(&P.a[i + 1], &P.a[i], (P.n - i) * sizeof(*P.a));
	P.a[i] = (struct mm_pin){ dev, host, size, 0, user_pages, peer };
	P.n++;
	pin_mark(&P.a[i]);
	P.lo = P.a[0].dev;   /* sorted: the first starts lowest */
	if (dev + size > P.hi)
		P.hi = dev + size;
}

void cap_mm_pinned(uint64_t dev, const void *host, uint64_t size, int user_pages)
{
	pin_add(dev, host, size, user_pages, 0);
}

void cap_mm_peer(uint64_t dev, uint64_t size)
{
	pin_add(dev, NULL, size, 0, 1);
}

void cap_mm_drop_peer(uint64_t addr, uint64_t size)
{
	size_t i;

	if (!P.n || !size || addr >= P.hi || addr + size <= P.lo)
		return;
	while ((i = pin_upper(addr + size - 1)) && P.a[i - 1].dev + P.a[i - 1].size > addr) {
		if (!P.a[i - 1].peer)
			return;   /* (ranges do not overlap: host memory ends the run) */
		cap_mm_del(P.a[i - 1].dev);
	}
}

/* The remembered range holding addr, or NULL. */
static struct mm_pin *pin_at(uint64_t addr)
{
	size_t i;
	if (addr - P.lo >= P.hi - P.lo)
		return NULL;
	i = pin_upper(addr);
	return i && addr - P.a[i - 1].dev < P.a[i - 1].size ? &P.a[i - 1] : NULL;
}

/* p is used by what comes next: tracked from now on (1 when it was not). */
static int pin_use(struct mm_pin *p, int *over)
{
	struct mm_alloc *m;
	int fresh = !p->tracked;

	*over = 0;
	if (fresh) {
		*over = mm_add(p->dev, p->host, p->size, p->user_pages, p->peer) < 0;
		p->tracked = 1;
	}
	if ((m = mm_find(p->dev))) {
		m->on_use = 1;
		m->used = 1;
	}
	return fresh;
}

void cap_mm_copy_src(uint64_t src)
{
	struct mm_pin *p;
	int over;

	/* the range holding the copy's first byte (a copy reads one buffer) */
	if (P.n && (p = pin_at(src)) && p->peer)
		pin_use(p, &over);
}

size_t cap_mm_args(const uint8_t *args, uint32_t argsize, struct cap_mm_promoted *out, size_t max)
{
	size_t got = 0;
	uint64_t lo = P.lo, span = P.hi - P.lo;
	int any = 0;

	if (!P.n || !args)
		return 0;
	/* most launches have no word in the span: one branch-free pass, four
	 * words at a time, before any per-word work */
	{
		uint32_t off = 0;
		for (; off + 32 <= argsize; off += 32) {
			uint64_t w[4];
			memcpy(w, args + off, sizeof(w));
			any |= (w[0] - lo < span) | (w[1] - lo < span) | (w[2] - lo < span) | (w[3] - lo < span);
		}
		for (; off + 8 <= argsize; off += 8) {
			uint64_t w;
			memcpy(&w, args + off, 8);
			any |= w - lo < span;
		}
	}
	if (!any)
		return 0;
	for (uint32_t off = 0; off + 8 <= argsize; off += 8) {
		uint64_t w, page;
		size_t i;
		memcpy(&w, args + off, 8);
		if (w - lo >= span)
			continue;   /* outside every range */
		page = w >> PIN_PAGE_SHIFT;
		if (!(P.bits[pin_bit(page) / 64] >> (pin_bit(page) % 64) & 1))
			continue;
		i = pin_upper(w);
		if (!i || w - P.a[i - 1].dev >= P.a[i - 1].size)
			continue;
		{
			struct mm_pin *p = &P.a[i - 1];
			int over;
			if (pin_use(p, &over)) {
				if (got < max)
					out[got] = (struct cap_mm_promoted){ p->dev, p->size, off, over, p->peer };
				got++;
			}
		}
	}
	return got;
}
