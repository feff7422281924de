# capture-fakes.sh - sourced (after test-lib.sh) by the capture tests that run
# the real libgpureduce-capture.so inside a program, against the fake CUPTI
# and driver of tests/cli/helpers/capture-fakecuda.c:
#
#   . tests/cli/capture-fakes.sh
#   capture_fakes [PROG-SOURCE [PROG-FLAGS...]]
#
# capture_fakes skips the test (finish) when the capture library was not
# built (no CUPTI headers); else it builds the fake libcuda/libcupti into
# $TMP/fake, the program $TMP/fakeprog (from PROG-SOURCE, default
# capture-fakeprog.c; "-" for none) and the trace dumper $TMP/dump, puts
# $TMP/fake first on LD_LIBRARY_PATH, points GPUREDUCE_CAPTURE_LIB at the
# library, and cd's into $TMP.  It sets LIB, CUDA, CC, CF and H for the
# test's own builds.

LIB=$BUILD/libgpureduce-capture.so
CUDA=${CUDA:-/usr/local/cuda}
CC=${CC:-cc}
CF="-std=gnu11 -D_GNU_SOURCE -Wall -Wextra -Wno-unused-parameter -I$CUDA/include"
H=tests/cli/helpers

capture_fakes() {
	prog=${1:-$H/capture-fakeprog.c}
	[ $# -gt 0 ] && shift
	if [ ! -f "$LIB" ]; then
		echo "skip: $LIB not built (no CUPTI headers)"
		finish
	fi
	mkdir -p "$TMP/fake"
	check "build fake CUPTI+driver" $CC $CF -fPIC -shared -fvisibility=hidden -o "$TMP/fake/libfakecuda.so" $H/capture-fakecuda.c
	ln -s libfakecuda.so "$TMP/fake/libcuda.so.1"
	ln -s libfakecuda.so "$TMP/fake/libcupti.so.13"
	if [ "$prog" != - ]; then
		check "build fake program" $CC $CF -o "$TMP/fakeprog" "$prog" "$@" -ldl -lpthread
	fi
	# from source, not $BUILD/libgpureduce.a: that one is instrumented under make SAN=1
	check "build trace dumper" $CC $CF -o "$TMP/dump" $H/capture-dump.c trace/read.c trace/write.c \
		common/strbuf.c common/util.c -lzstd -lm
	LD_LIBRARY_PATH="$TMP/fake${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
	GPUREDUCE_CAPTURE_LIB=$LIB
	export LD_LIBRARY_PATH GPUREDUCE_CAPTURE_LIB
	unset CUDA_INJECTION64_PATH
	cd "$TMP" || exit 1
}

# capture_on_double PROG-SOURCE: the real capture library inside a program
# built against the CPU driver double, with only CUPTI faked.  Skips the
# test (finish) when the capture library was not built; else builds the
# fake libcupti into $TMP/fake and PROG-SOURCE into $TMP/prog (linked
# against the double), puts $TMP/fake and the double first on
# LD_LIBRARY_PATH, points GPUREDUCE_CAPTURE_LIB and GPUREDUCE_LIBCUDA at
# them (all exported) and unsets CUDA_INJECTION64_PATH and
# GPUREDUCE_SANITIZER.  Sets DBL.  Does not cd.
capture_on_double() {
	DBL=$BUILD/double
	if [ ! -f "$LIB" ]; then
		echo "skip: $LIB not built (no CUPTI headers)"
		finish
	fi
	mkdir -p "$TMP/fake"
	check "build the fake CUPTI (CUPTI part only)" $CC $CF -DFAKE_CUPTI_ONLY -fPIC -shared -fvisibility=hidden \
		-o "$TMP/fake/libcupti.so.13" $H/capture-fakecuda.c
	check "build $(basename "$1" .c) on the double" $CC $CF -o "$TMP/prog" "$1" -L$DBL -Wl,-rpath,$DBL -lcuda -ldl
	LD_LIBRARY_PATH="$TMP/fake:$DBL${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
	GPUREDUCE_CAPTURE_LIB=$LIB
	GPUREDUCE_LIBCUDA=$DBL/libcuda.so.1
	export LD_LIBRARY_PATH GPUREDUCE_CAPTURE_LIB GPUREDUCE_LIBCUDA
	unset CUDA_INJECTION64_PATH GPUREDUCE_SANITIZER
}

# gather_fault_shrinks TRACE [PREFIX]: the end of the tests of the
# programs that gather through a table capture must follow (pinned-prog,
# ipc-prog): replay of TRACE faults in gather at the program's launch #9,
# shrink (its repro.cu built against the double) reduces it to one launch,
# and the built repro faults in gather.  PREFIX heads the first check's
# name.  After capture_on_double, in the folder for its s/.
gather_fault_shrinks() {
	check_exit "${2:-}replay faults (exit 1)" 1 "$GPUREDUCE" replay "$1"
	check_grep "  ...in gather, at the program's launch" "(launch #9) in _Z6gatherPfPKfPKxi: CUDA_ERROR_ILLEGAL_ADDRESS" "$TMP/.out"
	use_double_nvcc
	check "  ...shrink" "$GPUREDUCE" shrink -j 2 --quiet -o s/repro.cu "$1"
	check_grep "  ...to one launch" "launches -> 1 launch" "$TMP/.out"
	repro_faults_on_double s
	check_grep "  ...in gather" "^repro: gather(float\*, .*CUDA_ERROR_ILLEGAL_ADDRESS" "$TMP/.out"
}

# repro_faults_on_double DIR: DIR/repro.cu (emitted by shrink) built with
# the host compiler against the double must compile, and its run must
# fault (exit 1, its output in $TMP/.out).  After capture_on_double.
repro_faults_on_double() {
	check "  ...repro compiles against the double" $CC -x c -w -I$CUDA/include -o "$1/repro" "$1/repro.cu" \
		-L$DBL -Wl,-rpath,$DBL -lcuda
	check_exit "  ...and faults" 1 "./$1/repro"
}
