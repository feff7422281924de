/*
 * signature.h - when two faults are "the same fault": the one rule shrink's
 * oracle (reducer/oracle.c), shrink's check of the emitted repro.cu
 * (src/repro/repro-check.c) and `verify` (src/cmd-verify.c) apply.  A fault's
 * signature is its error and its kernel: the same sticky error, where an
 * illegal address (700) and an invalid address space (717) count as one
 * bad address (a wild pointer gives either, depending on where it lands;
 * docs/GPU-FACTS.md), in the same kernel.  Pure functions, no driver.
 */
#ifndef GPUREDUCE_SIGNATURE_H
#define GPUREDUCE_SIGNATURE_H

#include <stddef.h>

/* 1 when the CUresult codes a and b are the same fault (700 ~ 717). */
int sig_same_code(int a, int b);
/* The same for error names ("CUDA_ERROR_ILLEGAL_ADDRESS"). */
int sig_same_error_name(const char *a, const char *b);
/* 1 when `seen` names the kernel `want`.  seen_cap: the size of the buffer
 * seen was copied into (a name that filled it, truncated, matches want's
 * beginning: template kernels' names run past any fixed buffer, PyTorch's
 * index kernel's past 1000 characters); 0 when seen is whole. */
int sig_same_kernel(const char *want, const char *seen, size_t seen_cap);

#endif
