/*
 * test_memmap.c - the captured address map against a naive reference model:
 * random allocations, frees and address reuse, then lookups of random
 * values (inside, one past the end, between, outside).
 */
#include <stdlib.h>
#include <string.h>

#include "../../addr/memmap.h"
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
			int d1, d2;
			long want = ref_lookup(r, n, v, &d1);
			struct mm_alloc *got = memmap_lookup(&m, v, &d2);
			CHECK((want < 0) == (got == NULL));
			if (want >= 0 && got) {
				CHECK_EQ_U(got->index, (size_t)want);
				CHECK(d1 == d2);
			}
		}
		memmap_release(&m);
	}
}
