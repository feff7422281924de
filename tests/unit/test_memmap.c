/*
 * test_memmap.c - the captured address map against a naive reference model:
 * random allocations, frees and address reuse, then lookups of random
 * values (inside, one past the end, between, outside); the pointer-word
 * rule (memmap_pointer_word) against the same model, and the word scan
 * over byte ranges (alignment, words cut by the end, stopping).
 */
#include <stdlib.h>
#include <string.h>

#include "../../addr/memmap.h"
#include "../../trace/trace.h"
#include "unit.h"

struct ref {
	uint64_t addr, size;
	long freed;     /* event, -1 live */
	long order;
};

/* Reference: live match (one past the end included) wins; else the most
 * recently added freed one; NULL under 65536. */
static long ref_lookup(const struct ref *r, size_t n, uint64_t v, int *dead)
{
	*dead = 0;
	if (v < 65536)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (r[i].freed < 0 && v >= r[i].addr && v <= r[i].addr + r[i].size) {
			/* prefer an allocation that starts at v over one that ends there */
			for (size_t j = 0; j < n; j++)
				if (r[j].freed < 0 && r[j].addr == v && j != i)
					return (long)j;
			return (long)i;
		}
	for (size_t i = n; i-- > 0;)
		if (r[i].freed >= 0 && v >= r[i].addr && v <= r[i].addr + r[i].size) {
			*dead = 1;
			return (long)i;
		}
	return -1;
}

UNIT_TEST(memmap_vs_reference)
{
	unsigned seed = 7;
	for (int round = 0; round < 30; round++) {
		struct memmap m = MEMMAP_INIT;
		struct ref r[300];
		size_t n = 0;
		for (int step = 0; step < 300; step++) {
			seed = seed * 1103515245 + 12345;
			unsigned op = (seed >> 16) % 4;
			if (op < 3 || n == 0) {
				/* allocate on a 4 KiB grid so ranges collide and get reused */
				uint64_t addr = 0x7f0000000000ull + (uint64_t)((seed >> 8) % 64) * 4096;
				uint64_t size = 1 + (seed % 8192);
				/* the map retires overlapping live ones: mirror that */
				for (size_t i = 0; i < n; i++)
					if (r[i].freed < 0 && r[i].addr < addr + size && addr < r[i].addr + r[i].size)
						r[i].freed = step;
				memmap_add(&m, addr, size, 1, step);
				r[n].addr = addr;
				r[n].size = size;
				r[n].freed = -1;
				r[n].order = step;
				n++;
			} else {
				size_t i = (seed >> 4) % n;
				struct mm_alloc *a = memmap_free(&m, r[i].addr, step);
				if (r[i].freed < 0) {
					CHECK(a != NULL && a->index == i);
					r[i].freed = step;
				} else {
					/* freeing a dead address: the map may only free a live one there */
					CHECK(a == NULL || a->addr == r[i].addr);
					if (a)
						for (size_t j = 0; j < n; j++)
							if (r[j].freed < 0 && r[j].addr == r[i].addr)
								r[j].freed = step;
				}
			}
		}
		for (int q = 0; q < 2000; q++) {
			seed = seed * 1103515245 + 12345;
			uint64_t v = 0x7f0000000000ull + (uint64_t)(seed % (70 * 4096));
			if (q % 10 == 0)
				v = seed % 100000;
			int d1, d2, d3 = -1;
			long want = ref_lookup(r, n, v, &d1);
			struct mm_alloc *got = memmap_lookup(&m, v, &d2);
			/* the pointer-word rule is the reference's, exactly */
			struct mm_alloc *pw = memmap_pointer_word(&m, v, &d3);
			CHECK((want < 0) == (got == NULL));
			CHECK((want < 0) == (pw == NULL));
			if (want >= 0 && got) {
				CHECK_EQ_U(got->index, (size_t)want);
				CHECK(d1 == d2);
			}
			if (want >= 0 && pw) {
				CHECK_EQ_U(pw->index, (size_t)want);
				CHECK(d1 == d3);
			}
		}
		memmap_release(&m);
	}
}

UNIT_TEST(memmap_pointer_word_rule)
{
	struct memmap m = MEMMAP_INIT;
	struct mm_alloc *low, *a, *b;
	int dead = -1;

	/* nothing mapped: nothing is a pointer */
	CHECK(memmap_pointer_word(&m, 0x7f0000000000ull, &dead) == NULL);
	CHECK(dead == 0);
	low = memmap_add(&m, 0x1000, 0x100, 1, 0);
	a = memmap_add(&m, 0x7f0000000000ull, 4000, 1, 1);
	b = memmap_add(&m, 0x7f0000100000ull, 64, 1, 2);
	/* small values are counts, not addresses: memmap_lookup alone would
	 * find the allocation at 0x1000 */
	CHECK(memmap_lookup(&m, 0x1010, NULL) == low);
	CHECK(memmap_pointer_word(&m, 0x1010, NULL) == NULL);
	CHECK(memmap_pointer_word(&m, MEMMAP_MIN_POINTER - 1, NULL) == NULL);
	/* inside, at the start, one past the end; not two past */
	CHECK(memmap_pointer_word(&m, 0x7f0000000000ull + 123, &dead) == a && !dead);
	CHECK(memmap_pointer_word(&m, 0x7f0000000000ull + 4000, NULL) == a);
	CHECK(memmap_pointer_word(&m, 0x7f0000000000ull + 4001, NULL) == NULL);
	CHECK(memmap_pointer_word(&m, 0x7f0000100000ull + 64, NULL) == b);
	CHECK(memmap_pointer_word(&m, 0x7f0000100000ull + 65, NULL) == NULL);
	/* a freed allocation still counts, flagged dead */
	memmap_free(&m, 0x7f0000000000ull, 3);
	CHECK(memmap_pointer_word(&m, 0x7f0000000000ull + 8, &dead) == a && dead == 1);
	/* float bit patterns and other large values outside every allocation */
	CHECK(memmap_pointer_word(&m, 0x3f800000ull, NULL) == NULL);
	CHECK(memmap_pointer_word(&m, 0xffffffffffffffffull, NULL) == NULL);
	memmap_release(&m);
}

struct seen {
	size_t off[8];
	uint64_t v[8];
	int dead[8];
	size_t n, stop_at;       /* stop after this many (0: never) */
};

static int see(struct mm_alloc *a, size_t off, uint64_t v, int dead, void *arg)
{
	struct seen *s = arg;
	(void)a;
	if (s->n < 8) {
		s->off[s->n] = off;
		s->v[s->n] = v;
		s->dead[s->n] = dead;
	}
	s->n++;
	return s->stop_at && s->n >= s->stop_at;
}

UNIT_TEST(memmap_scan_words_offsets_and_stop)
{
	struct memmap m = MEMMAP_INIT;
	unsigned char bytes[44];
	uint64_t p0 = 0x7f0000000010ull, p1 = 0x7f0000000ff8ull, p2 = 0x7f0000200000ull;
	struct seen s;

	memmap_add(&m, 0x7f0000000000ull, 4096, 1, 0);
	memmap_add(&m, 0x7f0000200000ull, 16, 1, 1);
	memmap_free(&m, 0x7f0000200000ull, 2);
	memset(bytes, 0, sizeof(bytes));
	memcpy(bytes + 0, &p0, 8);       /* aligned words 0 and 8 */
	memcpy(bytes + 8, &p1, 8);
	memcpy(bytes + 20, &p2, 8);      /* words seen only from first = 4: 20 ... */
	memcpy(bytes + 36, &p2, 8);      /* ... and 36, the last whole one */

	memset(&s, 0, sizeof(s));
	CHECK_EQ_U(memmap_scan_words(&m, bytes, sizeof(bytes), 0, see, &s), 2);
	CHECK_EQ_U(s.n, 2);
	CHECK_EQ_U(s.off[0], 0);
	CHECK_EQ_U(s.v[0], p0);
	CHECK_EQ_U(s.off[1], 8);
	CHECK_EQ_U(s.v[1], p1);
	CHECK(s.dead[1] == 0);

	memset(&s, 0, sizeof(s));
	CHECK_EQ_U(memmap_scan_words(&m, bytes, sizeof(bytes), 4, see, &s), 2);
	CHECK_EQ_U(s.off[0], 20);
	CHECK_EQ_U(s.v[0], p2);
	CHECK(s.dead[0] == 1);
	CHECK_EQ_U(s.off[1], 36);
	/* a word cut by the end is not read */
	CHECK_EQ_U(memmap_scan_words(&m, bytes, 43, 4, NULL, NULL), 1);
	CHECK_EQ_U(memmap_scan_words(&m, bytes, 8, 0, NULL, NULL), 1);
	CHECK_EQ_U(memmap_scan_words(&m, bytes, 7, 0, NULL, NULL), 0);
	CHECK_EQ_U(memmap_scan_words(&m, bytes, sizeof(bytes), 48, NULL, NULL), 0);
	/* the callback stops the scan; the word it stopped at counts */
	memset(&s, 0, sizeof(s));
	s.stop_at = 1;
	CHECK_EQ_U(memmap_scan_words(&m, bytes, sizeof(bytes), 4, see, &s), 1);
	CHECK_EQ_U(s.n, 1);
	/* device alignment of copied bytes */
	CHECK_EQ_U(memmap_first_aligned(0x7f0000000000ull), 0);
	CHECK_EQ_U(memmap_first_aligned(0x7f0000000003ull), 5);
	CHECK_EQ_U(memmap_first_aligned(0x7f0000000007ull), 1);
	memmap_release(&m);
}

UNIT_TEST(memmap_feed_follows_alloc_and_free)
{
	struct memmap m = MEMMAP_INIT;
	struct tr_rec r;
	int dead = 0;

	memset(&r, 0, sizeof(r));
	r.type = TR_ALLOC;
	r.u.alloc.addr = 0x7f0000000000ull;
	r.u.alloc.size = 4096;
	r.u.alloc.kind = TR_MEM_DEVICE;
	CHECK_EQ_U(memmap_feed(&m, &r, 3), 1);
	CHECK(memmap_lookup_live(&m, 0x7f0000000010ull) != NULL);

	memset(&r, 0, sizeof(r));
	r.type = TR_LAUNCH;
	CHECK_EQ_U(memmap_feed(&m, &r, 4), 0);
	CHECK_EQ_U(m.n, 1);

	memset(&r, 0, sizeof(r));
	r.type = TR_FREE;
	r.u.free.addr = 0x7f0000000000ull;
	CHECK_EQ_U(memmap_feed(&m, &r, 5), 1);
	CHECK(memmap_lookup_live(&m, 0x7f0000000010ull) == NULL);
	CHECK(memmap_lookup(&m, 0x7f0000000010ull, &dead) != NULL);
	CHECK_EQ_U(dead, 1);
	CHECK_EQ_U(m.all[0]->alloc_event, 3);
	CHECK_EQ_U(m.all[0]->free_event, 5);
	memmap_release(&m);
}

/* memmap_live_from: the first live allocation that ends after an address,
 * against a scan of every live one, on random allocations and frees. */
UNIT_TEST(memmap_live_from_vs_scan)
{
	struct memmap m = MEMMAP_INIT;
	uint64_t x = 0x2545F4914F6CDD1Dull;
	unsigned bad = 0;

	for (int step = 0; step < 4000; step++) {
		x ^= x << 13; x ^= x >> 7; x ^= x << 17;
		uint64_t addr = 0x10000 + (x % 4096) * 64, size = (x >> 20) % 300;
		if ((x >> 40) % 3)
			memmap_add(&m, addr, size, 0, step);
		else if (m.nlive)
			memmap_free(&m, m.live[(x >> 32) % m.nlive]->addr, step);
		for (int q = 0; q < 4; q++) {
			uint64_t a = 0x10000 + ((x >> (8 * q)) % (4096 * 64 + 512));
			size_t want = m.nlive;
			for (size_t i = 0; i < m.nlive && want == m.nlive; i++)
				if (m.live[i]->addr + (m.live[i]->size ? m.live[i]->size : 1) > a)
					want = i;
			bad += memmap_live_from(&m, a) != want;
		}
	}
	CHECK_EQ_U(bad, 0);
	CHECK_EQ_U(memmap_live_from(&m, 0), 0);
	CHECK_EQ_U(memmap_live_from(&m, UINT64_MAX - 1), m.nlive);
	memmap_release(&m);
}

/* Stray words (memmap_stray_word, memmap_stray_args): device-address-like
 * words that point into no recorded allocation, near the recorded ones. */
UNIT_TEST(memmap_stray_words)
{
	struct memmap m = MEMMAP_INIT;
	struct tr_launch l;
	uint64_t w[5] = { 0x7f0000000010ull, 0x7f0000a00000ull, 1024, 0x7f0000a00008ull, 0x7f0000b00000ull };
	uint32_t off = 99;
	uint64_t val = 0;

	CHECK(!memmap_stray_word(&m, 0x7f0000a00000ull));   /* nothing recorded: nothing to be near */
	memmap_add(&m, 0x7f0000000000ull, 4096, 1, 0);
	CHECK(!memmap_stray_word(&m, 0x7f0000000010ull));   /* inside: a pointer, not stray */
	CHECK(memmap_stray_word(&m, 0x7f0000a00000ull));    /* near, in nothing */
	CHECK(!memmap_stray_word(&m, 0x7f0000a00008ull));   /* not 16-aligned */
	CHECK(!memmap_stray_word(&m, 4096));                /* small: a count */
	CHECK(!memmap_stray_word(&m, 0x7f0000000000ull + (80ull << 30)));   /* 80 GiB away: not near */
	memset(&l, 0, sizeof(l));
	l.args = (uint8_t *)w;
	l.argsize = sizeof(w);
	CHECK_EQ_U(memmap_stray_args(&m, &l, &off, &val), 2);
	CHECK_EQ_U(off, 8);
	CHECK_EQ_U(val, 0x7f0000a00000ull);
	CHECK_EQ_U(memmap_held_args(&m, &l, NULL, NULL), 0);   /* no word held as an integer */
	{
		/* words 0 (inside the allocation), 1 (stray) and 2 (a count) held
		 * as integers: only word 0 is held yet inside a buffer, and word 1
		 * is no longer counted stray (replay does not look at it) */
		static const uint32_t held[3] = { 0, 8, 16 };
		l.nonptr = held;
		l.nnonptr = 3;
		off = 99;
		CHECK_EQ_U(memmap_held_args(&m, &l, &off, &val), 1);
		CHECK_EQ_U(off, 0);
		CHECK_EQ_U(val, 0x7f0000000010ull);
		CHECK_EQ_U(memmap_stray_args(&m, &l, NULL, NULL), 1);
	}
	memmap_release(&m);
}
