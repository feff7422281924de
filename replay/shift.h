/*
 * shift.h - the shifted-placement test mode (GPUREDUCE_SHIFT=1, `replay
 * --shift`): no buffer lands at its captured address or at its captured
 * offset from the others, so a pointer that replay failed to relocate
 * faults or reads the wrong bytes instead of passing by coincidence (the
 * driver of a fresh process often hands out the very addresses the
 * captured one got).  Layout placement is off in this mode; before each
 * buffer's guard placement an unmapped pad of an odd number of 2 MiB
 * granules (1, 3, 5, 7 in turn) plus a granule is reserved, and a buffer
 * that still lands on its captured range is placed again.  Used by
 * replay/engine.c only.
 */
#ifndef GPUREDUCE_SHIFT_H
#define GPUREDUCE_SHIFT_H

#include <stddef.h>
#include <stdint.h>

#include "../addr/place.h"

struct shift {
	int on;
	size_t placed;           /* buffers placed while on */
	CUdeviceptr *pad;        /* reservations (or allocations) to give back */
	size_t *pad_size;
	int *pad_alloc;          /* 1: a cuMemAlloc, not a reservation */
	size_t n, alloc;
};

/* Read GPUREDUCE_SHIFT (1: on). */
void shift_init(struct shift *s);
/* Before a placement (when on): reserve the next pad. */
void shift_pad(struct shift *s, const struct place_vmm *v, uint64_t gran);
/* 1 when on and the placed buffer overlaps its captured range [addr, addr+size]. */
int shift_collides(const struct shift *s, const struct pl_buf *b, uint64_t addr, uint64_t size);
/* Give the pads back (not after a fault: the context is gone). */
void shift_release(struct shift *s, const struct place_vmm *v);

#endif
