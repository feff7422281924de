/*
 * double.h - what the CPU driver double (libcuda.c) and its kernel registry
 * (kernels.c) share.  Nothing outside tests/double/ includes this: programs
 * under test see only <cuda.h> and the exported cu* symbols.
 *
 * A "kernel" of the double is a C function called once per CUDA thread, in
 * order: blocks outer (z, y, x), threads inner (z, y, x).  It reads its
 * parameters from the packed argument buffer that cuLaunchKernel built at
 * the offsets listed in its registry entry, exactly as a GPU kernel would.
 */
#ifndef GPUREDUCE_DOUBLE_H
#define GPUREDUCE_DOUBLE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct dbl_dim3 { unsigned x, y, z; };

/* One thread's view of a launch. */
struct dbl_launch {
	struct dbl_dim3 gridDim, blockDim, blockIdx, threadIdx;
	uint64_t seq;        /* launches run so far in this process, from 1 */
	uint32_t rnd;        /* random per launch, same for every thread (racy kernels) */
	uint32_t (*race)(void); /* per launch, taken on first call: DOUBLE_RACE_COUNTER's next
				 * number (across processes), else random (racy_grid) */
	void *(*global)(const char *name); /* a __device__ variable of the launched kernel's
				 * module, by name, as device code reads it (NULL if none) */
};

#define DBL_MAX_PARAMS 12

struct dbl_param { unsigned offset, size; };

struct dbl_kernel {
	const char *name;            /* the mangled name, as in the cubin's symtab */
	const char *signature;       /* demangled, for messages */
	unsigned nparams;
	struct dbl_param params[DBL_MAX_PARAMS];
	void (*fn)(const struct dbl_launch *L, const void *args);
	/* a variant of a name another entry has too (a JIT's second build of
	 * one kernel): the symbol an image defines beside the name to hold
	 * this variant (NULL: the name itself), and its max threads per block
	 * (0: 1024) */
	const char *image_sym;
	int max_threads;
	int reqntid;                 /* a .reqntid build: only blocks of max_threads run */
	int num_regs;                /* CU_FUNC_ATTRIBUTE_NUM_REGS (0: 32) */
};

extern const struct dbl_kernel dbl_kernels[];
extern const size_t dbl_nkernels;

/* Global thread index in x: blockIdx.x * blockDim.x + threadIdx.x. */
static inline long long dbl_tid_x(const struct dbl_launch *L)
{
	return (long long)L->blockIdx.x * L->blockDim.x + L->threadIdx.x;
}

/* A device-side assert failed: prints CUDA's message and ends the grid with
 * CUDA_ERROR_ASSERT (does not return). */
void dbl_device_assert(const struct dbl_launch *L, const char *expr, const char *file,
		       int line, const char *func) __attribute__((noreturn));
#define DBL_ASSERT(L, e) ((e) ? (void)0 : dbl_device_assert((L), #e, __FILE__, __LINE__, __func__))

/* Reading a 2-D tensor map the double encoded (libcuda.c's layout):
 * its base address, row stride in bytes, and dims. */
static inline uint64_t dbl_tmap_word(const void *map, int k)
{
	uint64_t w;
	memcpy(&w, (const char *)map + 8 * k, 8);
	return w;
}
#define dbl_tmap_base(m) ((char *)(uintptr_t)dbl_tmap_word(m, 0))
#define dbl_tmap_row_stride(m) ((dbl_tmap_word(m, 1) >> 32) * 16)
#define dbl_tmap_dim0(m) ((dbl_tmap_word(m, 4) & 0xffffffffu) + 1)
#define dbl_tmap_dim1(m) ((dbl_tmap_word(m, 4) >> 32) + 1)

#endif
