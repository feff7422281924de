/*
 * allocs.h - allocs.c's entry points, for inject.c: the allocation calls
 * at their exit callback, the free calls at their entry, and device memory
 * a launch's arguments point into that no recorded call brought in.
 * Include after <cupti.h>.
 */
#ifndef GPUREDUCE_CAPTURE_ALLOCS_H
#define GPUREDUCE_CAPTURE_ALLOCS_H

#include <stdint.h>

/* A call that made memory addressable returned CUDA_SUCCESS: its ALLOC
 * (nothing for other calls). */
void cap_alloc_exit(CUpti_CallbackId cbid, const void *p);
/* A call that frees, unmaps or forgets memory, at its entry: its FREEs.
 * 1 if cbid is one. */
int cap_free_enter(CUpti_CallbackId cbid, const void *p);
/* Lock held: device memory found at a launch (foreign.c), recorded as an
 * allocation that its base address frees. */
void cap_alloc_found_locked(uint64_t addr, uint64_t size);
/* How many ALLOC records the program's trace got (its END record's). */
uint64_t cap_alloc_count(void);

#endif
