/*
 * backmap.c - replay addresses back to captured ones (see backmap.h).
 * Twins do not overlap in the replay process (each has its own range, or
 * its own offset in one layout range), so a binary search over their
 * starts finds the one a word lies in.
 */
#include <stdlib.h>
#include <string.h>

#include "../common/util.h"
#include "backmap.h"

void backmap_add(struct backmap *b, uint64_t ptr, uint64_t size, uint64_t addr)
{
	if (!ptr)
		return;
	ALLOC_GROW(b->e, b->n + 1, b->alloc);
	b->e[b->n++] = (struct bm_ent){ ptr, size, addr };
	if (b->n == 1 || ptr < b->lo)
		b->lo = ptr;
	if (b->n == 1 || ptr + size + 1 > b->hi)
		b->hi = ptr + size + 1;
	b->sorted = 0;
}

void backmap_release(struct backmap *b)
{
	free(b->e);
	memset(b, 0, sizeof(*b));
}

static int ent_cmp(const void *x, const void *y)
{
	const struct bm_ent *a = x, *b = y;
	return (a->ptr > b->ptr) - (a->ptr < b->ptr);
}

uint64_t backmap_lookup(struct backmap *b, uint64_t v)
{
	size_t lo = 0, hi;
	if (!b->n || v < b->lo || v >= b->hi)
		return 0;
	if (!b->sorted) {
		qsort(b->e, b->n, sizeof(*b->e), ent_cmp);
		b->sorted = 1;
	}
	hi = b->n;
	while (lo < hi) {   /* first entry with ptr > v */
		size_t mid = lo + (hi - lo) / 2;
		if (b->e[mid].ptr <= v)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* v inside (or one past the end of) the entry before; an entry
	 * starting at v is that one */
	if (lo && v - b->e[lo - 1].ptr <= b->e[lo - 1].size)
		return b->e[lo - 1].addr + (v - b->e[lo - 1].ptr);
	return 0;
}

size_t backmap_apply(struct backmap *b, uint8_t *buf, size_t len, size_t first)
{
	size_t n = 0;
	for (size_t off = first; off < len && len - off >= 8; off += 8) {
		uint64_t v, c;
		memcpy(&v, buf + off, 8);
		if (v < b->lo || v >= b->hi || !(c = backmap_lookup(b, v)))
			continue;
		memcpy(buf + off, &c, 8);
		n++;
	}
	return n;
}
