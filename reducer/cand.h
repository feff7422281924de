/*
 * cand.h - reduction candidates: an ordered list of records, each taken
 * from some source trace and possibly altered, that can be written out as
 * a trace file for a replay worker to run.
 *
 * The reducer never edits traces in place.  It builds candidates from the
 * original trace and from snapshot traces written by workers, varies them
 * (drop records, change a launch's grid, replace a buffer's contents with
 * zeros, a seeded fill or "zeros except these chunks"), and writes each one
 * through the trace writer.  Records keep pointing into their source
 * trace's memory, so sources must outlive the candidates built from them.
 */
#ifndef GPUREDUCE_CAND_H
#define GPUREDUCE_CAND_H

#include <stddef.h>
#include <stdint.h>

#include "../trace/trace.h"

struct strbuf;

enum data_mode {
	DATA_ORIG = 0,   /* H2D as captured */
	DATA_ZERO = 1,   /* a memset to 0 instead */
	DATA_FILL = 2,   /* seeded pseudo-random bytes (cand_fill) */
	DATA_KEEP = 3    /* zeros, except the byte ranges in keep[] from the original */
};

struct range {
	uint64_t off, len;
};

struct item {
	const struct trace *src;
	struct tr_rec rec;       /* copy; may be altered (grid, sizes...) */
	size_t src_index;        /* index of the record in src */
	int data_mode;           /* for TR_MEMCPY_H2D */
	uint32_t seed;           /* DATA_FILL */
	struct range *keep;      /* DATA_KEEP, sorted, owned */
	size_t nkeep;
};

struct cand {
	struct item *it;
	size_t n, alloc;
};
#define CAND_INIT { NULL, 0, 0 }

void cand_release(struct cand *c);
/* Deep copy (keep ranges duplicated). */
void cand_copy(struct cand *dst, const struct cand *src);
/* Append record i of src. Returns the new item. */
struct item *cand_add(struct cand *c, const struct trace *src, size_t i);
/* Append every record of src except BLOBs (they follow their users). */
void cand_add_all(struct cand *c, const struct trace *src);
/* Write as a trace file.  0 or -1 with err (appended after "; " when err
 * holds an earlier message). */
int cand_write(const struct cand *c, const char *path, struct strbuf *err);
/* The errno of the first cand_write since the last reset that failed to
 * create or write its file (0: none did); and its reset. */
int cand_write_error(void);
void cand_write_error_reset(void);
/* Count items of a type. */
size_t cand_count(const struct cand *c, uint32_t type);
/* The deterministic fill used by DATA_FILL (also emitted into repro.cu):
 * xorshift32 seeded with `seed`, little-endian words. */
void cand_fill(uint8_t *dst, uint64_t n, uint32_t seed);

#endif
