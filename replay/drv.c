/*
 * drv.c - load the CUDA driver at run time (see drv.h).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/strbuf.h"
#include "drv.h"

int drv_load(struct drv *d, struct strbuf *err)
{
	const char *lib = getenv("GPUREDUCE_LIBCUDA");
	memset(d, 0, sizeof(*d));
	if (!lib || !*lib)
		lib = "libcuda.so.1";
	d->handle = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
	if (!d->handle) {
		sb_addf(err, "cannot load the CUDA driver (%s): %s; is an NVIDIA driver installed?",
			lib, dlerror());
		return -1;
	}
#define X(field, sym, req) \
	*(void **)&d->field = dlsym(d->handle, sym); \
	if (!d->field && req) { \
		sb_addf(err, "%s lacks %s: driver too old for gpureduce", lib, sym); \
		return -1; \
	}
	DRV_FUNCS(X)
#undef X
	return 0;
}

const char *drv_error_name(const struct drv *d, CUresult r)
{
	const char *s = NULL;
	if (d && d->GetErrorName && d->GetErrorName(r, &s) == CUDA_SUCCESS && s)
		return s;
	return "CUDA_ERROR_UNKNOWN";
}

int drv_same_fault(int a, int b)
{
	if (a == b)
		return 1;
	return (a == CUDA_ERROR_ILLEGAL_ADDRESS || a == CUDA_ERROR_INVALID_ADDRESS_SPACE) &&
	       (b == CUDA_ERROR_ILLEGAL_ADDRESS || b == CUDA_ERROR_INVALID_ADDRESS_SPACE);
}

int drv_same_fault_name(const char *a, const char *b)
{
	static const char *const addr[] = { "CUDA_ERROR_ILLEGAL_ADDRESS", "CUDA_ERROR_INVALID_ADDRESS_SPACE" };
	int ia = 0, ib = 0;
	if (!strcmp(a, b))
		return 1;
	for (int i = 0; i < 2; i++) {
		ia |= !strcmp(a, addr[i]);
		ib |= !strcmp(b, addr[i]);
	}
	return ia && ib;
}

int drv_is_sticky(CUresult r)
{
	switch ((int)r) {
	case CUDA_ERROR_ILLEGAL_ADDRESS:          /* 700 */
	case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES:  /* 701: not sticky, but a fault-like launch failure */
	case CUDA_ERROR_LAUNCH_TIMEOUT:           /* 702 */
	case CUDA_ERROR_HARDWARE_STACK_ERROR:     /* 714 */
	case CUDA_ERROR_ILLEGAL_INSTRUCTION:      /* 715 */
	case CUDA_ERROR_MISALIGNED_ADDRESS:       /* 716 */
	case CUDA_ERROR_INVALID_ADDRESS_SPACE:    /* 717 */
	case CUDA_ERROR_INVALID_PC:               /* 718 */
	case CUDA_ERROR_LAUNCH_FAILED:            /* 719 */
	case CUDA_ERROR_ASSERT:                   /* 710 */
	case CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE: /* 720 */
		return 1;
	default:
		return 0;
	}
}
