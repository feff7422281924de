/*
 * memmap.h - the captured address space, as a trace describes it over time.
 *
 * Built by walking a trace's ALLOC/FREE records in order.  Answers "which
 * captured allocation does this 64-bit value point into?", which is how
 * replay relocates pointers (launch parameter words, copy and memset
 * addresses), how the reducer finds the buffers a launch reaches, and how
 * `show` annotates parameters.  Pure bookkeeping: no CUDA, CPU-testable.
 *
 * A value counts as pointing into an allocation when addr <= v <= addr+size
 * (one past the end included: loops compare against end pointers).  Live
 * allocations win over freed ones; among freed ones the most recently freed
 * wins.  Each allocation gets a stable index (order of its ALLOC record) that
 * replay uses to find its replayed twin.
 */
#ifndef GPUREDUCE_MEMMAP_H
#define GPUREDUCE_MEMMAP_H

#include <stddef.h>
#include <stdint.h>

struct mm_alloc {
	uint64_t addr, size;
	uint32_t kind;           /* enum tr_alloc_kind */
	long alloc_event;        /* record index of its ALLOC */
	long free_event;         /* record index of its FREE, -1 while live */
	size_t index;            /* position in memmap.all */
	void *user;              /* replay's handle for the twin allocation */
};

struct memmap {
	struct mm_alloc **all;   /* every allocation ever added, by index */
	size_t n, alloc;
	struct mm_alloc **live;  /* live ones sorted by addr */
	size_t nlive, live_alloc;
	uint64_t lo, hi;         /* bounds of every allocation ever added (hi: one past) */
};
#define MEMMAP_INIT { 0 }

void memmap_release(struct memmap *m);
/* Add an allocation; an existing live allocation overlapping it is treated
 * as freed at this event (the driver reused the range).  Returns it. */
struct mm_alloc *memmap_add(struct memmap *m, uint64_t addr, uint64_t size, uint32_t kind,
			    long event);
/* Mark the live allocation starting at addr freed.  Returns it, or NULL if
 * no live allocation starts there. */
struct mm_alloc *memmap_free(struct memmap *m, uint64_t addr, long event);
/* The allocation v points into (see above), or NULL.  *dead (may be NULL) is
 * set to 1 when the match is a freed allocation. */
struct mm_alloc *memmap_lookup(const struct memmap *m, uint64_t v, int *dead);
/* Same, but only live allocations. */
struct mm_alloc *memmap_lookup_live(const struct memmap *m, uint64_t v);

#endif
