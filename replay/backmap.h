/*
 * backmap.h - from replay addresses back to captured ones.  Replay
 * relocates the pointer words of what it copies into device memory (a
 * table of device pointers, a checkpoint's content); what it reads back
 * for a snapshot -- or scans for the pointers a launch reaches -- must be
 * in captured addresses again, or the next replay of that snapshot would
 * find replay addresses in it that no ALLOC record names.  A sorted table
 * of (replay range -> captured address), built once per snapshot by
 * replay/engine.c.  Pure bookkeeping: CPU-testable.
 */
#ifndef GPUREDUCE_BACKMAP_H
#define GPUREDUCE_BACKMAP_H

#include <stddef.h>
#include <stdint.h>

struct bm_ent {
	uint64_t ptr, size;      /* the twin in the replay process */
	uint64_t addr;           /* the captured address it stands for */
};

struct backmap {
	struct bm_ent *e;
	size_t n, alloc;
	uint64_t lo, hi;         /* bounds of every twin (hi: one past the last end) */
	int sorted;
};
#define BACKMAP_INIT { NULL, 0, 0, 0, 0, 0 }

void backmap_add(struct backmap *b, uint64_t ptr, uint64_t size, uint64_t addr);
void backmap_release(struct backmap *b);
/* The captured address for replay address v (inside a twin or one past its
 * end), or 0 when v is in none. */
uint64_t backmap_lookup(struct backmap *b, uint64_t v);
/* Rewrite, in place, the 8-byte words of buf[first, len) (first, first+8,
 * ...) that lie in a twin to their captured addresses.  Returns how many. */
size_t backmap_apply(struct backmap *b, uint8_t *buf, size_t len, size_t first);

#endif
