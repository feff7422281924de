/*
 * physcache.c - physical memory handles kept for the next buffer of the
 * same size (see physcache.h).
 *
 * Guard placement maps every buffer on its own: a reserved range, a
 * physical allocation (cuMemCreate) mapped into it, access set; a freed
 * buffer is unmapped and its physical allocation released, the range kept
 * so that a stale pointer faults.  On the H200 one such buffer cost 110 us
 * in driver calls, 30 of them cuMemCreate and cuMemRelease
 * (tests/gpu/vmmprobe.c, docs/RESULTS.md 2026-12-05), and hunt's replay of
 * a 100-step training loop placed 23292 allocator blocks, each freed a step
 * later: 2.6 s of a 2.7 s replay.  Keeping the released handles for the
 * next buffer of the same size saves the pair; nothing else changes: the
 * buffer is still unmapped when freed (a stale pointer still faults) and
 * still mapped at a fresh range with its guard.  A kept handle's bytes are
 * those of the buffer it last held, as a new allocation's bytes are
 * whatever the driver gives; replay writes what the trace says a buffer
 * held before any launch reads it.
 *
 * The cache lives for one run (physcache_flush at its end): between runs a
 * warm worker holds no device memory for it, beside the other workers.
 *
 * Off by default (GPUREDUCE_REPLAY_PHYSCACHE_MIB, engine.c).  Measured on
 * the H200 (2026-12-05) in hunt's replays of 100 training steps: 87 us a
 * placed buffer against 96 without it, far less than vmmprobe promised;
 * hunt recycles whole ranges instead (replay_opts.recycle: 6 us).  And a
 * reused handle holds its last buffer's bytes where a new allocation holds
 * the driver's: a kernel that reads memory nobody wrote sees other bytes.
 */
#include <stdlib.h>
#include <string.h>

#include "physcache.h"

enum { MAX_BUCKETS = 64 };

struct bucket {
	size_t size;
	CUmemAllocationProp prop;
	CUmemGenericAllocationHandle *h;
	size_t n, cap;
};

/* handle -> its size and properties' bucket, for the handles the driver
 * gave us (open addressing; slot key 0 empty, TOMB deleted) */
struct slot {
	CUmemGenericAllocationHandle key;
	size_t size;
	int bucket;              /* -1: not cacheable (flags, or no bucket free) */
};
#define TOMB ((CUmemGenericAllocationHandle)~0ull)

static struct {
	CUresult (*create)(CUmemGenericAllocationHandle *, size_t, const CUmemAllocationProp *, unsigned long long);
	CUresult (*release)(CUmemGenericAllocationHandle);
	uint64_t cap;
	struct bucket b[MAX_BUCKETS];
	int nb;
	struct slot *t;
	size_t tcap, tused;      /* tused: live keys and tombstones */
	size_t tlive;            /* live keys */
	struct physcache_stats st;
} P;

static size_t slot_of(CUmemGenericAllocationHandle h, size_t cap)
{
	uint64_t x = (uint64_t)h * 0x9e3779b97f4a7c15ull;
	return (size_t)(x >> 17) & (cap - 1);
}

static struct slot *find(CUmemGenericAllocationHandle h)
{
	if (!P.tcap || !h || h == TOMB)
		return NULL;
	for (size_t i = slot_of(h, P.tcap), k = 0; k < P.tcap; i = (i + 1) & (P.tcap - 1), k++) {
		if (P.t[i].key == h)
			return &P.t[i];
		if (!P.t[i].key)
			return NULL;
	}
	return NULL;
}

static int insert(CUmemGenericAllocationHandle h, size_t size, int bucket);

/* Rehash the table, dropping the tombstones: doubled when half of it or
 * more is live keys, else at its size (a run's churn leaves tombstones). */
static int grow(void)
{
	struct slot *old = P.t;
	size_t ocap = P.tcap, ncap = !P.tcap ? 1024 : P.tlive * 4 >= P.tcap ? P.tcap * 2 : P.tcap;
	struct slot *nt = calloc(ncap, sizeof(*nt));
	if (!nt)
		return -1;
	P.t = nt;
	P.tcap = ncap;
	P.tused = P.tlive = 0;
	for (size_t i = 0; i < ocap; i++)
		if (old[i].key && old[i].key != TOMB)
			insert(old[i].key, old[i].size, old[i].bucket);
	free(old);
	return 0;
}

static int insert(CUmemGenericAllocationHandle h, size_t size, int bucket)
{
	if (!h || h == TOMB)
		return -1;
	if ((P.tused + 1) * 2 > P.tcap && grow() < 0)
		return -1;
	for (size_t i = slot_of(h, P.tcap);; i = (i + 1) & (P.tcap - 1))
		if (!P.t[i].key || P.t[i].key == TOMB || P.t[i].key == h) {
			if (!P.t[i].key)
				P.tused++;
			if (P.t[i].key != h)
				P.tlive++;
			P.t[i].key = h;
			P.t[i].size = size;
			P.t[i].bucket = bucket;
			return 0;
		}
}

/* The bucket of (size, prop), made when new and there is room; -1 else. */
static int bucket_of(size_t size, const CUmemAllocationProp *prop, int make)
{
	for (int i = 0; i < P.nb; i++)
		if (P.b[i].size == size && !memcmp(&P.b[i].prop, prop, sizeof(*prop)))
			return i;
	if (!make || P.nb == MAX_BUCKETS)
		return -1;
	memset(&P.b[P.nb], 0, sizeof(P.b[0]));
	P.b[P.nb].size = size;
	P.b[P.nb].prop = *prop;
	return P.nb++;
}

static CUresult cached_create(CUmemGenericAllocationHandle *h, size_t size, const CUmemAllocationProp *prop,
			      unsigned long long flags)
{
	int k = flags || !prop ? -1 : bucket_of(size, prop, 1);
	CUresult r;
	if (k >= 0 && P.b[k].n) {
		*h = P.b[k].h[--P.b[k].n];
		P.st.bytes -= size;
		P.st.reused++;
		return CUDA_SUCCESS;
	}
	r = P.create(h, size, prop, flags);
	if (r == CUDA_ERROR_OUT_OF_MEMORY && P.st.bytes) {
		physcache_flush();   /* the kept ones first */
		r = P.create(h, size, prop, flags);
	}
	if (r != CUDA_SUCCESS)
		return r;
	P.st.created++;
	insert(*h, size, k);   /* (out of memory: untracked, released to the driver) */
	return CUDA_SUCCESS;
}

static CUresult cached_release(CUmemGenericAllocationHandle h)
{
	struct slot *s = find(h);
	if (s && s->bucket >= 0 && P.st.bytes + s->size <= P.cap) {
		struct bucket *b = &P.b[s->bucket];
		if (b->n == b->cap) {
			size_t nc = b->cap ? 2 * b->cap : 16;
			CUmemGenericAllocationHandle *p = realloc(b->h, nc * sizeof(*p));
			if (!p)
				goto release;
			b->h = p;
			b->cap = nc;
		}
		b->h[b->n++] = h;
		P.st.bytes += s->size;
		P.st.kept++;
		return CUDA_SUCCESS;   /* still tracked: handed out again as it is */
	}
release:
	if (s) {
		s->key = TOMB;
		P.tlive--;
	}
	P.st.released++;
	return P.release(h);
}

int physcache_install(struct place_vmm *v, uint64_t cap_bytes)
{
	if (!v->MemCreate || !v->MemRelease)
		return -1;
	if (v->MemCreate != cached_create) {
		P.create = v->MemCreate;
		P.release = v->MemRelease;
	}
	P.cap = cap_bytes;
	v->MemCreate = cached_create;
	v->MemRelease = cached_release;
	return 0;
}

void physcache_flush(void)
{
	for (int i = 0; i < P.nb; i++) {
		struct bucket *b = &P.b[i];
		while (b->n) {
			CUmemGenericAllocationHandle h = b->h[--b->n];
			struct slot *s = find(h);
			if (s) {
				s->key = TOMB;
				P.tlive--;
			}
			P.st.released++;
			P.release(h);
		}
	}
	P.st.bytes = 0;
}

void physcache_abandon(void)
{
	for (int i = 0; i < P.nb; i++)
		P.b[i].n = 0;
	P.st.bytes = 0;
	free(P.t);
	P.t = NULL;
	P.tcap = P.tused = P.tlive = 0;
}

void physcache_get_stats(struct physcache_stats *st)
{
	*st = P.st;
}
