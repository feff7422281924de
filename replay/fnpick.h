/*
 * fnpick.h - which of several captured modules' functions of one name a
 * launch ran, and why a launch's function refuses it (issue 24, item 6).
 * A JIT (Triton's autotuner, Inductor's static launcher) loads one kernel
 * name once per configuration; the variants can differ in the block they
 * run (maxntid), in their parameters (one build has a scratch pointer
 * another lacks) and in their registers and memory (FUNC_INFO).  The
 * passes are fnpick_core.inc, which every repro.cu that needs them carries
 * too; the engine's get_function (replay/engine.c) gives it the
 * candidates' functions.  When a launch still fails with
 * CUDA_ERROR_INVALID_VALUE, fnpick_explain says what differs, so a GPU
 * run's log names the cause.
 */
#ifndef GPUREDUCE_FNPICK_H
#define GPUREDUCE_FNPICK_H

#include <cuda.h>

struct drv;
struct strbuf;
struct tr_launch;
struct tr_func_info;

/* fns[0..n): the candidates' functions for launch l, in the order to try
 * them (NULL: that module has none); in: the FUNC_INFO of the launch's
 * function, or NULL.  The index of the one fnpick_core.inc's passes take,
 * asking the driver through d; -1 when none can run the launch's block.
 * *loose: 1 when it was taken only for running the block (no candidate
 * has the launch's parameters as well). */
int fnpick_choose(const struct drv *d, const struct tr_launch *l, const struct tr_func_info *in,
		  const CUfunction *fns, int n, int *loose);

/* fnpick_core.inc as one C string, for repro.cu (Makefile CORE_TEXTS) */
extern const char fnpick_core_text[];

/* Append "; " and what differs between fn and launch l: its parameter
 * count and bytes vs the recorded ones (the first differing parameter),
 * its max threads per block vs the block, its shared memory (static +
 * the launch's dynamic) vs its dynamic limit; with ncand > 1, which
 * (0-based) of the candidate modules was used and whether it matched
 * (matched 0: none had both the parameters and the block).  Appends "; the function
 * agrees with the launch on ..." when nothing differs. */
void fnpick_explain(const struct drv *d, CUfunction fn, const struct tr_launch *l, size_t which, size_t ncand,
		    int matched, struct strbuf *out);

#endif
