/*
 * fnpick.c - a launch's function among captured modules that define the
 * same name: the passes of fnpick_core.inc (which repro.cu carries too),
 * and the explanation of a refused launch (see fnpick.h).  Calls only
 * cuFuncGetParamInfo and cuFuncGetAttribute, through the worker's driver
 * table.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../common/strbuf.h"
#include "../common/util.h"
#include "../trace/trace.h"
#include "drv.h"
#include "fnpick.h"

#define MAX_PARAMS 4096   /* cuFuncGetParamInfo is asked no further */

/* the passes, compiled with the driver calls going through the worker's
 * table (workers are single-threaded: the table is set for each call) */
static const struct drv *fp_d;
#define FNPICK_ATTR(v, a, fn) (fp_d->FuncGetAttribute ? fp_d->FuncGetAttribute(v, a, fn) : CUDA_ERROR_NOT_SUPPORTED)
#define FNPICK_PARAM(fn, i, o, z) (fp_d->FuncGetParamInfo ? fp_d->FuncGetParamInfo(fn, i, o, z) : CUDA_ERROR_NOT_SUPPORTED)
#include "fnpick_core.inc"

int fnpick_choose(const struct drv *d, const struct tr_launch *l, const struct tr_func_info *in,
		  const CUfunction *fns, int n, int *loose)
{
	unsigned small[2 * 64], *layout = small;
	struct fnpick_want w;
	int pick, pass;

	memset(&w, 0, sizeof(w));
	w.threads = (unsigned long long)l->block.x * l->block.y * l->block.z;
	w.nparams = l->nparams;
	w.layout_known = !(l->nparams == 0 && l->argsize);
	if (l->nparams > 64)
		layout = xcalloc(2 * (size_t)l->nparams, sizeof(*layout));
	for (uint32_t p = 0; p < l->nparams; p++) {
		layout[2 * p] = l->params[p].offset;
		layout[2 * p + 1] = l->params[p].size;
	}
	w.layout = layout;
	w.attrs[0] = in ? in->max_threads : -1;
	w.attrs[1] = in ? in->num_regs : -1;
	w.attrs[2] = in ? in->shared_bytes : -1;
	w.attrs[3] = in ? in->const_bytes : -1;
	w.attrs[4] = in ? in->local_bytes : -1;
	fp_d = d;
	pick = fnpick_first(fns, n, &w, &pass);
	fp_d = NULL;
	*loose = pass == FNPICK_PASSES - 1;
	if (layout != small)
		free(layout);
	return pick;
}

/* fn's parameter count (-1: the driver cannot say) and the total bytes
 * (offset + size of the last); the index of the first parameter that
 * differs from l's in offset or size, in *first_diff (-1 when none among
 * those both have). */
static long param_layout(const struct drv *d, CUfunction fn, const struct tr_launch *l, uint64_t *bytes,
			 long *first_diff)
{
	size_t off = 0, size = 0;
	long n = 0;
	*bytes = 0;
	*first_diff = -1;
	if (!d->FuncGetParamInfo || d->FuncGetParamInfo(fn, 0, &off, &size) != CUDA_SUCCESS) {
		/* no parameter 0: a function without parameters, or no answer */
		return d->FuncGetParamInfo && l->nparams == 0 ? 0 : -1;
	}
	do {
		if (*first_diff < 0 && (uint32_t)n < l->nparams &&
		    (l->params[n].offset != off || l->params[n].size != size))
			*first_diff = n;
		*bytes = off + size;
		n++;
	} while (n < MAX_PARAMS && d->FuncGetParamInfo(fn, (size_t)n, &off, &size) == CUDA_SUCCESS);
	return n;
}

static int attr(const struct drv *d, CUfunction fn, CUfunction_attribute a, int *v)
{
	*v = 0;
	return d->FuncGetAttribute && d->FuncGetAttribute(v, a, fn) == CUDA_SUCCESS;
}

void fnpick_explain(const struct drv *d, CUfunction fn, const struct tr_launch *l, size_t which, size_t ncand,
		    int matched, struct strbuf *out)
{
	uint64_t bytes, threads = (uint64_t)l->block.x * l->block.y * l->block.z;
	long diff, n = param_layout(d, fn, l, &bytes, &diff);
	int max, stat, dyn, differs = 0;

	if (n < 0) {
		sb_adds(out, "; the driver does not say the function's parameters");
	} else if (n != (long)l->nparams || diff >= 0 || bytes != l->argsize) {
		sb_addf(out, "; the function has %ld parameter(s), %llu bytes; the launch recorded %u, %u bytes", n,
			(unsigned long long)bytes, l->nparams, l->argsize);
		if (diff >= 0) {
			size_t o = 0, s = 0;
			d->FuncGetParamInfo(fn, (size_t)diff, &o, &s);
			sb_addf(out, " (parameter %ld: %zu bytes at offset %zu, recorded %u at %u)", diff, s, o,
				l->params[diff].size, l->params[diff].offset);
		}
		differs = 1;
	}
	if (attr(d, fn, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &max) && max > 0 && threads > (uint64_t)max) {
		sb_addf(out, "; it runs at most %d threads per block, the launch's block has %llu", max,
			(unsigned long long)threads);
		differs = 1;
	} else if (max > 0 && max < 1024 && threads < (uint64_t)max) {
		/* Triton's builds say .reqntid: exactly that many threads */
		sb_addf(out, "; it was built for blocks of %d threads, the launch's block has %llu (a build "
			"with .reqntid, as Triton makes, runs no other size)", max, (unsigned long long)threads);
		differs = 1;
	}
	if (attr(d, fn, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, &stat) &&
	    attr(d, fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, &dyn) && l->shmem > (unsigned)dyn) {
		sb_addf(out, "; it has %d bytes of static shared memory and allows %d dynamic, the launch asks %u "
			"dynamic", stat, dyn, l->shmem);
		differs = 1;
	}
	if (!differs)
		sb_addf(out, "; the function agrees with the launch on parameters (%ld, %llu bytes), block (%llu "
			"threads) and shared memory (%u dynamic)", n, (unsigned long long)bytes,
			(unsigned long long)threads, l->shmem);
	if (ncand > 1)
		sb_addf(out, "; candidate %zu of the %zu captured modules defining this name%s", which + 1, ncand,
			matched ? "" : " (none has both the launch's parameters and its block)");
}
