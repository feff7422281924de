/*
 * physcache.h - physical memory handles kept for the next buffer of the
 * same size, inside one replay run (replay/physcache.c says why).
 *
 * physcache_install() puts the cache between placement (addr/place.h) and
 * the driver: it swaps a place_vmm table's MemCreate and MemRelease for its
 * own, keeping the driver's.  A released handle is kept (it is unmapped by
 * then: placement unmaps before it releases) and handed out again by the
 * next MemCreate of the same size and properties; MemCreate's OUT_OF_MEMORY
 * first gives the kept ones back.  physcache_flush() gives everything back
 * (the end of a run).  One table per process: workers are single-threaded.
 */
#ifndef GPUREDUCE_PHYSCACHE_H
#define GPUREDUCE_PHYSCACHE_H

#include <stdint.h>

#include "../addr/place.h"

struct physcache_stats {
	unsigned long created;   /* driver MemCreate calls that succeeded */
	unsigned long reused;    /* MemCreate answered from the cache */
	unsigned long released;  /* driver MemRelease calls */
	unsigned long kept;      /* MemRelease calls kept in the cache */
	uint64_t bytes;          /* bytes kept now */
};

/* Wrap v's MemCreate/MemRelease (both must be set; else nothing is done)
 * with a cache of at most cap_bytes.  Returns 0, or -1 when v lacks them. */
int physcache_install(struct place_vmm *v, uint64_t cap_bytes);
/* Give every kept handle back to the driver (after a run). */
void physcache_flush(void);
/* Forget the kept handles without releasing them (the context died: the
 * driver calls would fail, and the process ends soon). */
void physcache_abandon(void);
void physcache_get_stats(struct physcache_stats *st);

#endif
