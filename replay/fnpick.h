/*
 * fnpick.h - which of several captured modules' functions of one name a
 * launch ran, and why a launch's function refuses it (issue 24, item 6).
 * A JIT (Triton's autotuner, Inductor's static launcher) loads one kernel
 * name once per configuration; the variants can differ in the block they
 * run (maxntid) and in their parameters (one build has a scratch pointer
 * another lacks).  The engine's get_function (replay/engine.c) takes the
 * first candidate for which both agree with the recorded launch; when a
 * launch still fails with CUDA_ERROR_INVALID_VALUE, fnpick_explain says
 * what differs, so a GPU run's log names the cause.
 */
#ifndef GPUREDUCE_FNPICK_H
#define GPUREDUCE_FNPICK_H

#include <cuda.h>

struct drv;
struct strbuf;
struct tr_launch;
struct tr_func_info;

/* 1 when fn's parameters (cuFuncGetParamInfo: count, each offset and
 * size) are the launch's recorded ones, or when that cannot be said (no
 * cuFuncGetParamInfo, or it fails on parameter 0; a launch recorded with
 * argument bytes but no parameter list); 0 otherwise. */
int fnpick_params_match(const struct drv *d, CUfunction fn, const struct tr_launch *l);

/* 1 when fn can run l's block (CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK),
 * or when the driver cannot say. */
int fnpick_fits_block(const struct drv *d, CUfunction fn, const struct tr_launch *l);

/* 1 when fn's max threads per block is exactly l's block (a .reqntid
 * build, as Triton makes, refuses any smaller block with
 * CUDA_ERROR_INVALID_VALUE); 0 otherwise or when the driver cannot say. */
int fnpick_block_exact(const struct drv *d, CUfunction fn, const struct tr_launch *l);

/* 1 when fn has the attributes capture recorded for the launch's function
 * (FUNC_INFO: max threads, registers, static shared, constant and local
 * bytes; a field the record or the driver leaves unknown is not
 * compared) and at least one was compared; 0 otherwise. */
int fnpick_info_match(const struct drv *d, CUfunction fn, const struct tr_func_info *in);

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
