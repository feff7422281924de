#!/bin/sh
# t2000-double-basics.sh - the CPU driver double (tests/double) exports the
# driver API gpureduce and emitted repros use, runs correct kernels
# correctly, and reports metadata and bad images like the real driver.
. tests/cli/test-lib.sh
. tests/double/test-env.sh

# every symbol of replay/drv.h's DRV_FUNCS, plus what cuda.h maps the
# common un-versioned names to and the extras the lead relies on
nm -D --defined-only "$DBL_DIR/libcuda.so.1" | awk '{print $3}' | sort >"$TMP/have"
sed -n 's/.*X([A-Za-z0-9.]*, "\([A-Za-z0-9_]*\)".*/\1/p' replay/drv.h >"$TMP/want"
cat >"$TMP/prog.c" <<'C'
#include <cuda.h>
void *names[] = { (void *)cuMemAlloc, (void *)cuMemFree, (void *)cuMemcpyHtoD, (void *)cuMemcpyDtoH,
	(void *)cuMemcpyDtoD, (void *)cuMemsetD8, (void *)cuMemsetD16, (void *)cuMemsetD32,
	(void *)cuMemsetD2D8, (void *)cuMemsetD2D16, (void *)cuMemsetD2D32,
	(void *)cuDevicePrimaryCtxRelease, (void *)cuModuleGetGlobal, (void *)cuDeviceTotalMem,
	(void *)cuMemGetInfo, (void *)cuStreamDestroy, (void *)cuMemcpyHtoDAsync,
	(void *)cuKernelGetName, (void *)cuKernelGetParamInfo, (void *)cuFuncGetName,
	(void *)cuCtxGetDevice, (void *)cuStreamSynchronize, (void *)cuMemGetAddressRange };
C
$CC -E -I"$CUDA/include" "$TMP/prog.c" | sed -n '/^void \*names/,$p' | tr ',{}' '\n\n\n' |
	sed -n 's/.*(void \*) *\([A-Za-z0-9_]*\).*/\1/p' >>"$TMP/want"
sort -u "$TMP/want" -o "$TMP/want"
missing=$(comm -23 "$TMP/want" "$TMP/have" | tr '\n' ' ')
if [ "$(wc -l <"$TMP/want")" -ge 45 ] && [ -z "$missing" ]; then
	ok "exports all $(wc -l <"$TMP/want" | tr -d ' ') driver symbols gpureduce and cuda.h programs use"
else
	fail "exports: missing: $missing"
fi
if nm -D --defined-only "$DBL_DIR/libcuda.so.1" | awk '{print $3}' | grep -qv '^cu'; then
	fail "exports only cu* symbols"
else
	ok "exports only cu* symbols"
fi
soname=$(readelf -d "$DBL_DIR/libcuda.so.1" 2>/dev/null | sed -n 's/.*soname: \[\(.*\)\]/\1/p')
[ "$soname" = libcuda.so.1 ] && ok "soname libcuda.so.1" || fail "soname is '$soname'"

check "correct kernels, launch forms, memsets, copies, globals, teardown" dbl basics
check "param layouts, names, NOT_FOUND, INVALID_IMAGE, corrupt images" dbl meta
check "calls before cuInit give CUDA_ERROR_NOT_INITIALIZED" dbl noinit
out=$(DOUBLE_NO_DEVICE=1 dbl init 2>&1)
[ "$out" = CUDA_ERROR_NO_DEVICE ] && ok "DOUBLE_NO_DEVICE=1: cuInit fails" || fail "DOUBLE_NO_DEVICE: got '$out'"

# the double is what a plain -lcuda program gets through LD_LIBRARY_PATH
cat >"$TMP/plain.c" <<'C'
#include <cuda.h>
#include <stdio.h>
int main(void)
{
	char name[64];
	if (cuInit(0) || cuDeviceGetName(name, sizeof(name), 0))
		return 1;
	puts(name);
	return 0;
}
C
if $CC -I"$CUDA/include" -o "$TMP/plain" "$TMP/plain.c" -L"$DBL_DIR" -lcuda 2>"$TMP/cc.err"; then
	out=$(LD_LIBRARY_PATH=$DBL_DIR "$TMP/plain" 2>&1)
	[ "$out" = "gpureduce CPU double" ] && ok "-lcuda + LD_LIBRARY_PATH finds the double" ||
		fail "-lcuda program printed '$out'"
else
	fail "compile a -lcuda program"
	sed 's/^/    /' "$TMP/cc.err"
fi
finish
