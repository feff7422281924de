/*
 * rootcause.h - root-cause mode: turn a trace with allocator blocks
 * (BLOCK_ALLOC/BLOCK_FREE, `capture --tensors`) into one where every block
 * is an allocation of its own, so that replay's guard placement puts a guard
 * right after every tensor, not only after every cudaMalloc segment.  The
 * first out-of-bounds write inside a segment (silent in the original run)
 * then faults at the kernel that made it.
 *
 * Used by `shrink --root-cause` (src/cmd-shrink-root.c): blockify, replay
 * once to find the first fault, blockify again cut at that launch with a
 * FAULT record naming it, then the ordinary reduction on that trace.  The
 * emitted repro.cu of that trace places the blocks with guards by itself,
 * since each block is an ALLOC record in it.  Pure trace-to-trace work: no
 * CUDA here.
 */
#ifndef GPUREDUCE_ROOTCAUSE_H
#define GPUREDUCE_ROOTCAUSE_H

#include <stddef.h>
#include <stdint.h>

struct strbuf;
struct trace;

/* What rc_blockify did. */
struct rc_stats {
	size_t blocks;           /* BLOCK_ALLOC records turned into allocations */
	size_t segments;         /* allocations replaced by their blocks */
	size_t orphans;          /* BLOCK_ALLOC records inside no live allocation (ignored) */
	size_t clipped;          /* copies/memsets cut to the blocks they reach */
	uint64_t dropped_bytes;  /* bytes of copies/memsets that reached no live block */
	size_t launches;         /* launches written */
};

/* A fault to end the blockified trace with (cut after launch `seq`). */
struct rc_cut {
	uint64_t seq;            /* captured seq of the launch that faulted */
	uint32_t code;
	const char *error;
	const char *kernel;
};

/* 1 when t holds BLOCK_ALLOC records. */
int rc_has_blocks(const struct trace *t);

/*
 * Write `in` as a trace at out_path in which every allocation that holds
 * allocator blocks is replaced by its blocks: an ALLOC of `size` bytes (the
 * requested bytes, not the allocator's rounded size) where the block
 * becomes live (INITIAL blocks: where their segment was allocated), a FREE
 * where it is freed (or its segment is); copies and memsets into such an
 * allocation are cut to the live blocks they reach (bytes in free space or
 * past a block's requested size are dropped).  The original FAULT and END
 * are not written.  cut NULL: the trace ends with END (exit -1) after the
 * last record; else it ends right after the launch with seq cut->seq, with
 * a FAULT record naming it.  Returns 0, or -1 with err.
 */
int rc_blockify(const struct trace *in, const char *out_path, const struct rc_cut *cut,
		struct rc_stats *st, struct strbuf *err);

/* What rc_blockify_opts changes (hunt, reducer/hunt.h). */
struct rc_opts {
	int rounded;             /* a block's ALLOC is its rounded size (alloc_size): its guard
				    sits where the allocator's block ends, not the tensor */
	int allow_none;          /* a trace without blocks is written as it is (no error) */
	const uint64_t *skip;    /* launches (captured seq) left out: neutralised */
	size_t nskip;
};

/* rc_blockify with options (NULL: as rc_blockify). */
int rc_blockify_opts(const struct trace *in, const char *out_path, const struct rc_cut *cut,
		     const struct rc_opts *o, struct rc_stats *st, struct strbuf *err);

/* From a diagnosis ("... D bytes past the end of param P ..."): P, with the
 * distance text in dist and "wrote"/"read"/"accessed" in *access; -1 when
 * the diagnosis names no parameter. */
int rc_diag_param(const char *diag, char *dist, size_t nd, const char **access);

/* The block of `in` that address v pointed into at launch `seq` (live
 * then, else the latest freed before it): fills *b and returns 0, or -1. */
struct tr_block;
int rc_block_at(const struct trace *in, uint64_t seq, uint64_t v, struct tr_block *b);

/*
 * The sentence for repro-root.cu and repro-root.yaml:
 * "root cause: kernel K (launch #S) wrote past the end of tensor T (N bytes,
 * allocated at file:line), param P: its first out-of-bounds access D bytes
 * past the end; the original crash was in kernel L".  (D is where the guard
 * stopped it, not how far the original overrun went.)  `diag` is the
 * diagnosis of the reduced root-cause repro (compute-sanitizer's access,
 * mapped to a parameter; may be NULL): the parameter and distance come
 * from it; without it the sentence names the tensors K was passed and says
 * the distance is unknown.  root: the launch (seq) and kernel that faulted
 * first under per-tensor guards; crash_kernel: the original FAULT's.
 */
void rc_describe(const struct trace *in, uint64_t root_seq, const char *root_kernel,
		 const char *crash_kernel, const char *diag, struct strbuf *out);

#endif
