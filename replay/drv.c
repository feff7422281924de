/*
 * drv.c - load the CUDA driver at run time (see drv.h).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/cuerr.h"
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

int drv_is_sticky(CUresult r)
{
	return cuerr_is_fault((int)r);
}
