/*
 * tensormap.h - TMA tensor maps (CUtensorMap) as a trace records them
 * (TENSORMAP records, docs/FORMAT.md 1.4): finding the record behind 128
 * bytes of a launch's parameters, the bytes of memory a map reaches, and a
 * description in the kernel's terms.  Replay (re-encode), the reducer
 * (slice, sizes, emit, diagnose) and `show` share it.  Pure bookkeeping:
 * no CUDA calls, CPU-testable.
 *
 * The map layout the driver produces is undocumented ("opaque, 128 bytes,
 * 64-byte aligned"); measured on the H200 (GPU-FACTS.md): word 0 holds the
 * plain global address and cuTensorMapReplaceAddress changes only word 0.
 * Matching therefore compares the 120 bytes after word 0 and checks that
 * word 0 is the recorded address: a map relocated elsewhere still matches.
 */
#ifndef GPUREDUCE_TENSORMAP_H
#define GPUREDUCE_TENSORMAP_H

#include <stddef.h>
#include <stdint.h>

#include "../trace/trace.h"

struct strbuf;

/* Bytes of one element of a CUtensorMapDataType (0: unknown type). */
unsigned tmap_elem_size(uint32_t dtype);
/* "bf16", "f32", ... or "dtype N" (a static string, or buf). */
const char *tmap_dtype_name(uint32_t dtype, char *buf, size_t n);

/* 1 when the 128 bytes at p are the map m recorded (word 0 equal to
 * m->gaddr, the rest byte for byte). */
int tmap_match(const struct tr_tensormap *m, const uint8_t *p);

/* The TENSORMAP record (index into t->rec) among records [0, before) that
 * produced the 128 bytes at p -- the latest such one -- or -1. */
long tmap_find(const struct trace *t, size_t before, const uint8_t *p);

/* Byte offsets in a launch's parameter bytes where a recorded map sits:
 * calls fn for each TR_TMAP_PARAM_ALIGN-aligned offset (trace.h) whose 128
 * bytes tmap_find finds before `before`.  Returns how many. */
size_t tmap_scan_args(const struct trace *t, size_t before, const uint8_t *args, uint32_t argsize,
		      void (*fn)(long rec, uint32_t off, void *arg), void *arg);

/* Bytes from gaddr the map can reach: the last element of the last row
 * of every dimension, plus one element (0 when unknown). */
uint64_t tmap_extent(const struct tr_tensormap *m);

/* "a TMA descriptor over a 2048x1024 bf16 tensor, box 64x64" (dims
 * listed innermost last, as a row-major shape). */
void tmap_describe(struct strbuf *out, const struct tr_tensormap *m);

#endif
