/*
 * tritonsig.h - a Triton kernel's source-level signature mapped onto the
 * compiled kernel's parameters (issue 24).  Capture records the names and
 * types of the @triton.jit function's non-constexpr arguments; the binary
 * can have more parameters than that: a host-side TensorDescriptor
 * argument (type "tensordesc<bf16[64, 64]>") becomes several kernel
 * parameters in Triton's launcher.  This module applies that rule so every
 * parameter of the binary gets a name from the source ("kv_desc",
 * "kv_desc.shape[0]", ...).  Used by emit-source.c (repro.cu comments,
 * `gpureduce report`).  Pure string work, CPU-tested (tests/unit).
 */
#ifndef GPUREDUCE_TRITONSIG_H
#define GPUREDUCE_TRITONSIG_H

#include <stdint.h>

struct tr_param;

/*
 * Split a "types:" line into types: words separated by spaces, except that
 * a space inside <...>, [...] or (...) does not split ("tensordesc<bf16[64,
 * 64]>" is one type, as older captures wrote it).  Inner spaces are
 * dropped.  *out is a new array of new strings; returns the count.
 */
uint32_t tsig_split_types(const char *s, char ***out);

/* Dimensions of a "tensordesc<T[a, b, ...]>" type (the block shape's rank),
 * 0 when t is not a tensor descriptor type. */
uint32_t tsig_tensordesc_rank(const char *t);

/*
 * Expand the tensor descriptor arguments of names/types (n each, both
 * owned arrays of owned strings, replaced in place) into the kernel
 * parameters Triton's NVIDIA launcher passes for them, choosing among the
 * rules Triton 3.3-3.6 use the one whose parameter count is nparams, the
 * binary's (and, where params is given, whose TMA descriptor parameters
 * are 128 bytes):
 *   TMA lowered:  the CUtensorMap (128 bytes, by value), shape (i32 each),
 *                 strides (i64 each)
 *   not lowered:  the base pointer, shape, strides, [padding flag],
 *                 [round-to-tf32 flag], shape, strides again
 * Returns the rule's name ("tma", "pointer", ...), or NULL when no
 * descriptor is present or no rule explains nparams (names left as they
 * were).
 */
const char *tsig_expand(char ***names, char ***types, uint32_t *n, uint32_t nparams,
			const struct tr_param *params);

#endif
