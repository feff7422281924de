/*
 * place.h - where a replayed buffer goes inside its virtual-address
 * reservation, so that overruns fault at once (GPU-FACTS.md: without a
 * guard, reading even 64 MB past a small buffer may not fault).
 *
 * GUARD_END (default): the buffer ends less than 256 bytes before an
 * unmapped granule, and its start has the captured address's alignment
 * (same address modulo 256): the slack between end and guard is the price
 * of keeping that alignment.  GUARD_START: the buffer starts right after an
 * unmapped granule (underflows fault); its start is granule-aligned.
 * GUARD_NONE: plain cuMemAlloc, no placement.
 *
 * Pure arithmetic, shared by replay and (as emitted C) by repro.cu.
 */
#ifndef GPUREDUCE_PLACE_H
#define GPUREDUCE_PLACE_H

#include <stdint.h>

enum guard_mode { GUARD_END = 0, GUARD_START = 1, GUARD_NONE = 2 };

struct placement {
	uint64_t reserve;      /* bytes of VA to reserve (multiple of gran) */
	uint64_t map_off;      /* offset of the mapped range in the reservation */
	uint64_t map_size;     /* bytes mapped (multiple of gran) */
	uint64_t buf_off;      /* offset of the buffer start in the reservation */
	uint64_t slack;        /* bytes between buffer end and the guard (END) */
};

/* Compute the placement of a `size`-byte buffer captured at `addr` with
 * granularity `gran` (a power of two >= 256).  Returns 0, or -1 for
 * GUARD_NONE or bad arguments. */
int place_compute(uint64_t size, uint64_t addr, uint64_t gran, int guard, struct placement *p);
/* Parse "end", "start", "none"; -1 if unknown. */
int place_parse_guard(const char *s);
const char *place_guard_name(int guard);

#endif
