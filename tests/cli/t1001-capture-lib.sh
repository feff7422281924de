#!/bin/sh
# t1001-capture-lib.sh - the CUPTI injection library itself, as far as a
# machine without a GPU allows: what it exports and links, and its start-up
# paths when loaded the way the driver loads it (capture-dlinit plays the
# driver, a stub libcuda stands in for the real one, so CUPTI cannot
# subscribe and the library must refuse to run the program half-captured).
. tests/cli/test-lib.sh

LIB=$BUILD/libgpureduce-capture.so
CUDA=${CUDA:-/usr/local/cuda}
if [ ! -f "$LIB" ]; then
	echo "skip: $LIB not built (no CUPTI headers)"
	finish
fi

syms=$(nm -D --defined-only "$LIB" | awk '{print $3}' | tr '\n' ' ')
# InitializeInjection for the driver; gpureduce_capture_pause for
# measurements (tests/gpu/hostfed.py's HOSTFED_ALTERNATE)
[ "$syms" = "InitializeInjection gpureduce_capture_pause " ] &&
	ok "exports only InitializeInjection and gpureduce_capture_pause" ||
	fail "exports only InitializeInjection and gpureduce_capture_pause (got: $syms)"
nm -D --defined-only "$LIB" | grep -q ' T InitializeInjection$' && ok "  ...as a function" || fail "  ...as a function"
needed=$(readelf -d "$LIB" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | tr '\n' ' ')
case "$needed" in *libcupti.so*) ok "links CUPTI" ;; *) fail "links CUPTI ($needed)" ;; esac
case "$needed" in *python*) fail "does not link libpython ($needed)" ;; *) ok "does not link libpython" ;; esac
case "$needed" in *libzstd.so.1*) ok "links libzstd.so.1 dynamically" ;; *) fail "links libzstd.so.1 dynamically ($needed)" ;; esac
readelf -d "$LIB" | grep -E 'R(UN)?PATH' | grep -q '/usr/local/cuda/targets/x86_64-linux/lib' &&
	ok "finds CUPTI under /usr/local/cuda on the GPU machine (runpath)" || fail "runpath has /usr/local/cuda/targets/x86_64-linux/lib"

STUB=$CUDA/lib64/stubs/libcuda.so
if [ ! -f "$STUB" ]; then
	echo "skip: no stub libcuda at $STUB"
	finish
fi
mkdir -p "$TMP/stub"
ln -s "$STUB" "$TMP/stub/libcuda.so.1"
DLINIT=$TMP/dlinit
check "build capture-dlinit" ${CC:-cc} -o "$DLINIT" tests/cli/helpers/capture-dlinit.c -ldl
export LD_LIBRARY_PATH="$TMP/stub${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
cd "$TMP" || exit 1

# Loaded without GPUREDUCE_TRACE (a program outside `gpureduce capture`
# that inherited CUDA_INJECTION64_PATH): does nothing.
check "without GPUREDUCE_TRACE: loads and returns" env -u GPUREDUCE_TRACE CUDA_INJECTION64_PATH="$LIB" "$DLINIT"
check_grep "  ...returns 1" "InitializeInjection returned 1" "$TMP/.out"
check_grep "  ...and the program continues" "program continues" "$TMP/.out"
[ -z "$(ls "$TMP" | grep -v -e '^stub$' -e '^dlinit$')" ] && ok "  ...writing nothing" || fail "  ...writing nothing: $(ls "$TMP")"

# Loaded by hand with GPUREDUCE_TRACE but no working CUPTI: refuses.
check_exit "CUPTI unusable: exits 86 inside cuInit" 86 env CUDA_INJECTION64_PATH="$LIB" GPUREDUCE_TRACE="$TMP/x.bin" GPUREDUCE_STATUS="$TMP/st" "$DLINIT"
check_grep "  ...one line on stderr" "^gpureduce: CUPTI .*; not running the program half-captured\$" "$TMP/.out"
if grep -q "program continues" "$TMP/.out"; then fail "  ...before the program goes on"; else ok "  ...before the program goes on"; fi
check_grep "  ...status file says why" "^cupti-\(busy\|error\) CUPTI_ERROR_[A-Z_]*\$" "$TMP/st"
[ ! -e "$TMP/x.bin" ] && ok "  ...no trace written" || fail "  ...no trace written"
rm -f "$TMP/st"
check "GPUREDUCE_ALLOW_NO_CAPTURE=1: the program runs uncaptured" env CUDA_INJECTION64_PATH="$LIB" GPUREDUCE_TRACE="$TMP/x.bin" GPUREDUCE_STATUS="$TMP/st" GPUREDUCE_ALLOW_NO_CAPTURE=1 "$DLINIT"
check_grep "  ...and continues" "program continues" "$TMP/.out"
check_grep "  ...status still says why" "^cupti-" "$TMP/st"

# The same through `gpureduce capture`: one error line, exit 4.
export GPUREDUCE_CAPTURE_LIB="$LIB"
check_exit "capture: CUPTI unusable is an environment error" 4 "$GPUREDUCE" capture -o c.bin -- "$DLINIT"
check_grep "  ...explained" "gpureduce capture: CUPTI .*pass --allow-no-capture" "$TMP/.out"
check_exit "capture --allow-no-capture: program's exit code" 0 "$GPUREDUCE" capture --allow-no-capture -o c.bin -- "$DLINIT"
check_grep "  ...program ran" "program continues" "$TMP/.out"
check_grep "  ...uncaptured, and says so" "ran without capture" "$TMP/.out"

finish
