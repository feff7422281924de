# test-env.sh - sourced (after tests/cli/test-lib.sh) by the driver-double
# tests tests/cli/t2xxx-double-*.sh: builds tests/double/dbltest.c against
# <cuda.h> and the double, the way a repro is built, into $TMP/dbltest.
#
#   DBL_DIR     $BUILD/double (libcuda.so.1, kernels.cubin)
#   CUBIN       the test module image
#   dbl MODE…   run dbltest MODE $CUBIN …
CC=${CC:-cc}
CUDA=${CUDA:-/usr/local/cuda}
DBL_DIR=$BUILD/double
CUBIN=$DBL_DIR/kernels.cubin
if [ ! -f "$DBL_DIR/libcuda.so.1" ] || [ ! -f "$CUBIN" ]; then
	fail "driver double not built (make double)"
	finish
fi
DBL_CFLAGS=$(cat "$DBL_DIR/test-cflags" 2>/dev/null)
# shellcheck disable=SC2086  # DBL_CFLAGS is a list of flags
if ! $CC -std=gnu11 -g -Wall -Wextra -Wno-unused-parameter $DBL_CFLAGS -I"$CUDA/include" \
	-o "$TMP/dbltest" tests/double/dbltest.c \
	-L"$DBL_DIR" -l:libcuda.so.1 -Wl,-rpath,"$(cd "$DBL_DIR" && pwd)" 2>"$TMP/cc.err"; then
	fail "compile dbltest.c against the double"
	sed 's/^/    /' "$TMP/cc.err"
	finish
fi
dbl() {
	mode=$1
	shift
	"$TMP/dbltest" "$mode" "$CUBIN" "$@"
}
