/*
 * fnpick.h - which of several captured modules' functions of one name a
 * launch ran, and why a launch's function refuses it (issue 24, item 6).
 * A JIT (Triton's autotuner, Inductor's static launcher) loads one kernel
 * name once per configuration; the variants can differ in the block they
 * run (maxntid), in their parameters (one build has a scratch pointer
 * another lacks) and in their registers and memory (FUNC_INFO).  The
 * passes are fnpick_core.inc, which every repro.cu that needs them carries
 * too; the engine's get_function (replay/engine.c) takes the first
 * candidate of the first pass any passes.  When a launch still fails with
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

#define FNPICK_PASSES 4   /* as fnpick_core.inc */

/* 1 when fn passes test `pass` (0..3, fnpick_core.inc: 0 the recorded
 * attributes `in` (NULL: none, and pass 0 fails), 1 built for exactly the
 * block, 2 runs the block and takes the recorded parameters, 3 runs the
 * block) for launch l, asking the driver through d. */
int fnpick_pass(const struct drv *d, CUfunction fn, const struct tr_launch *l, const struct tr_func_info *in,
		int pass);

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
