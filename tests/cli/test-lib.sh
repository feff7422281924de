# test-lib.sh - the tiny harness every CLI test sources (POSIX sh):
#
#   . tests/cli/test-lib.sh          (from the repository root, as make test does)
#   check "description" CMD...       passes if CMD exits 0
#   check_fail "description" CMD...  passes if CMD exits non-zero (not by a
#                                    signal or a sanitizer report: exit 86)
#   check_exit "description" CODE CMD...   passes if CMD exits exactly CODE
#   check_grep "description" PATTERN FILE   passes if grep (BRE) finds PATTERN
#   ok "description" / fail "description"   record a result decided by the test
#   finish                           prints "N passed, N failed"; exit 1 if any failed
#   on_double [WORDS]                replay on the CPU driver double (below)
#   use_double_nvcc                  emitted repros built against the double
#   oob_trace_text                   prints mktrace input of the standard one-launch
#                                    out-of-bounds trace (after on_double: $DBL)
#   double_trace_head [CWD ARGV...]  prints an mktrace script's first lines on the
#                                    double: process, device, its kernels
#   gather_trace_text [CWD ARGV...]  prints mktrace input of the gather trace whose
#                                    fault hangs on one index (idx[17])
#   racy_grid_trace_text, burst_trace_text   mktrace input of the double's races
#   race_trace_text KERNEL N         ...N add_one launches, then KERNEL's race
#   wide_race_trace_text KERNEL      ...KERNEL's race alone, 8 blocks
#   shrink_at_counter C PREFIX TRACE [ENV=V...]   shrink under the race counter C
#
# Provides $GPUREDUCE ($BUILD/gpureduce), $MKTRACE and $YAMLFLAT (the test
# helpers in tests/cli/helpers, built by `make test`), $SRCDIR (the repository
# root) and $TMP, a fresh directory removed on exit.  Paths are absolute, so
# a test may cd.  The last check's stdout+stderr is left in $TMP/.out (copy
# it before the next check reads it); a failed check prints its last lines.
# Keep this file small and its interface stable: every CLI test uses it.

BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$(pwd)/$BUILD ;; esac
SRCDIR=$(pwd)
GPUREDUCE=$BUILD/gpureduce
MKTRACE=$BUILD/mktrace
YAMLFLAT=$BUILD/yamlflat
# Sanitizer reports (make SAN=1 test) exit 86, so check_fail can tell them,
# and deaths by signal, from a clean error exit.
# (capture preloads its NVRTC shim into programs that, in a SAN build, link
# ASan themselves: the shim's __asan_default_options turns ASan's link-order
# check off, t1025)
ASAN_OPTIONS=${ASAN_OPTIONS:-exitcode=86}
UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:exitcode=86:print_stacktrace=1}
export BUILD GPUREDUCE MKTRACE YAMLFLAT SRCDIR ASAN_OPTIONS UBSAN_OPTIONS
# the capture's mode switches a user may have exported change what every
# capture test expects; a test that wants one sets it itself
unset GPUREDUCE_BLOCKING GPUREDUCE_WRITER_THREAD CUDA_LAUNCH_BLOCKING GPUREDUCE_SOURCE
TMP=$(mktemp -d "${TMPDIR:-/tmp}/gpureduce-test.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM
test_passed=0
test_failed=0

ok() {
	test_passed=$((test_passed + 1))
	printf 'ok   %s\n' "$1"
}

fail() {
	test_failed=$((test_failed + 1))
	printf 'FAIL %s\n' "$1"
}

# In a SAN build, LeakSanitizer's check at exit now and then prints
# "==PID==Unable to get registers from thread TID." or "==PID==Running
# thread TID was not suspended. False leaks are possible." when it cannot
# stop one of the process's threads (seen under load with shrink, whose
# released workers exit at the same time): the sanitizer's lines, not
# gpureduce's output, so checks of that output do not see them (a real
# report still exits 86, checked by test_run_).  san_noise_drop FILE takes
# them out of FILE; test_run_ does so to every check's output, and a test
# that reads the output again later calls it then (a released worker may
# print after its parent exited).
san_noise_drop() {
	if grep -q '^==[0-9]*==\(Unable to get registers from\|Running\) thread [0-9]*' "$1"; then
		grep -v -e '^==[0-9]*==Unable to get registers from thread [0-9]*\.*$' \
			-e '^==[0-9]*==Running thread [0-9]* was not suspended\. False leaks are possible\.$' \
			"$1" >"$1.san"
		mv "$1.san" "$1"
	fi
}

# (internal) $1 description, $2 expected exit code or "nonzero", rest: the command
test_run_() {
	tl_desc=$1 tl_want=$2
	shift 2
	"$@" >"$TMP/.out" 2>&1
	tl_rc=$?
	san_noise_drop "$TMP/.out"
	if [ "$tl_want" = "$tl_rc" ] && [ "$tl_want" != nonzero ]; then
		ok "$tl_desc"
	elif [ $tl_rc -eq 86 ] || [ $tl_rc -gt 128 ]; then
		fail "$tl_desc (crashed or sanitizer report, exit $tl_rc: $*)"
		tail -n 30 "$TMP/.out" | sed 's/^/    | /'
	elif [ "$tl_want" = nonzero ] && [ $tl_rc -ne 0 ]; then
		ok "$tl_desc"
	else
		fail "$tl_desc (exit $tl_rc: $*)"
		tail -n 15 "$TMP/.out" | sed 's/^/    | /'
	fi
}

check() {
	tl_d=$1; shift
	test_run_ "$tl_d" 0 "$@"
}

check_fail() {
	tl_d=$1; shift
	test_run_ "$tl_d" nonzero "$@"
}

check_exit() {
	tl_d=$1 tl_c=$2; shift 2
	test_run_ "$tl_d" "$tl_c" "$@"
}

check_grep() {
	if grep -q -e "$2" "$3" 2>/dev/null; then
		ok "$1"
	else
		fail "$1 (no '$2' in $3)"
		[ -f "$3" ] && tail -n 15 "$3" | sed 's/^/    | /'
	fi
}

check_no_grep() {
	if [ ! -f "$3" ]; then
		fail "$1 ($3 is missing)"
	elif grep -q -e "$2" "$3"; then
		fail "$1 ('$2' in $3)"
		grep -e "$2" "$3" | head -n 5 | sed 's/^/    | /'
	else
		ok "$1"
	fi
}

# use_double_nvcc: GPUREDUCE_NVCC (exported) builds emitted repros with cc
# as C against the double's libcuda ($DBL set).
use_double_nvcc() {
	GPUREDUCE_NVCC="cc -x c -w -I${CUDA:-/usr/local/cuda}/include -L$DBL -Wl,-rpath,$DBL"
	export GPUREDUCE_NVCC
}

# on_double [nvcc] [no-sanitizer] [plain-path]: for tests that replay on the
# CPU driver double (tests/double): DBL, and GPUREDUCE_LIBCUDA pointing at
# its libcuda; nvcc: GPUREDUCE_NVCC builds emitted repros against it (cc as
# C); no-sanitizer: GPUREDUCE_SANITIZER unset; plain-path: PATH=/usr/bin:/bin
# (no nvcc or compute-sanitizer found there).  Then cd into $TMP.
on_double() {
	DBL=$BUILD/double
	GPUREDUCE_LIBCUDA=$DBL/libcuda.so.1
	export GPUREDUCE_LIBCUDA
	for w in "$@"; do
		case $w in
		nvcc) use_double_nvcc ;;
		no-sanitizer) unset GPUREDUCE_SANITIZER ;;
		plain-path) PATH=/usr/bin:/bin; export PATH ;;
		*) echo "on_double: unknown word $w" >&2; exit 2 ;;
		esac
	done
	cd "$TMP" || exit 1
}

# train_trace_head SEG IN FILL [CMD [SEGSIZE]]: the first lines of an
# mktrace script for a training step on the double (the hunt, root-cause
# and shrink tests): the process (CMD, default "python3 train.py"), the
# double's device and kernels, an allocation of SEGSIZE bytes (default 2
# MiB, an allocator segment) at SEG, an 8 KiB input at IN filled with the
# byte FILL.
train_trace_head() {
	cat <<EOT
process 100 /work ${4:-python3 train.py}
device "gpureduce CPU double"
module $BUILD/double/kernels.cubin 1
alloc $1 ${5:-2097152}
alloc $2 8192
h2d $2 8192 $3
EOT
}

# A stand-in compute-sanitizer (written to FILE) whose report's PC depends
# on the scalar 1000 of the launch it runs: the scalars phase "moves" the
# fault site, and shrink's site check must back off (t5010, t5103, t5104).
fake_sanitizer_scalar_site() {
	cat >"$1" <<'EOT'
#!/bin/sh
. "$SRCDIR/tests/cli/helpers/fake-sanitizer.sh"
pc=0x90
"$GPUREDUCE" show "$trace" 2>/dev/null | grep -q 'value: 1000$' || pc=0x1c0
"$@" 2>&1
san_report $pc "Access to 0x10 is out of bounds"
EOT
	chmod +x "$1"
}

# The first lines of an mktrace script on the double: the process (its cwd
# and argv, by default /work ./app), the device and the double's kernels
# (its records follow).
double_trace_head() {
	cat <<EOT
process 100 ${*:-/work ./app}
device "gpureduce CPU double"
module $DBL/kernels.cubin 1
EOT
}

# The one-launch trace many tests start from: scale_nocheck(out, in, 1000)
# over two 4000-byte buffers with a grid of 8 x 256 threads: it reads and
# writes past both and faults (700).  Feed it to $MKTRACE.
oob_trace_text() {
	double_trace_head
	cat <<EOT
alloc 0x7f0000100000 4000
alloc 0x7f0000200000 4000
h2d 0x7f0000100000 4000 seq
launch _Z13scale_nocheckPfPKfi 8 256 ptr:0x7f0000200000 ptr:0x7f0000100000 i32:1000
fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel 0 at_launch=1
EOT
}

# add_one, then racy_burst(buf, 1024) over 4096 bytes: a race lost in
# bursts (under DOUBLE_RACE_COUNTER 6 launches in a row fault, then 18 run
# clean) in the second launch.  Feed it to $MKTRACE.
burst_trace_text() {
	double_trace_head
	cat <<EOT
alloc 0x7f0000100000 4096
alloc 0x7f0000200000 4096
h2d 0x7f0000100000 4096 seq
launch _Z7add_onePfi 4 256 ptr:0x7f0000200000 i32:1024
launch _Z10racy_burstPfi 2 128 ptr:0x7f0000100000 i32:1024
fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel 1 at_launch=1
EOT
}

# race_trace_text KERNEL N: N add_one launches on a second buffer, then
# KERNEL(buf, 1024) over 4096 bytes (a racy kernel's mangled name, e.g.
# _Z10racy_oftenPfi), which faults.  Feed it to $MKTRACE.
race_trace_text() {
	double_trace_head
	printf '%s\n' "alloc 0x7f0000100000 4096" "alloc 0x7f0000200000 4096" \
		"h2d 0x7f0000100000 4096 seq" "h2d 0x7f0000200000 4096 seq"
	i=0
	while [ "$i" -lt "$2" ]; do
		echo "launch _Z7add_onePfi 4 256 ptr:0x7f0000200000 i32:1024"
		i=$((i + 1))
	done
	echo "launch $1 2 128 ptr:0x7f0000100000 i32:1024"
	echo "fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel $2 at_launch=1"
}

# shrink_at_counter C PREFIX TRACE [ENV=VALUE...]: shrink TRACE (one
# worker) with the double's race counter starting at C
# (DOUBLE_RACE_COUNTER=$TMP/counter) and the given environment: log
# PREFIX$C.log, PREFIX$C/repro.cu, output in PREFIX$C.txt; shrink's status
shrink_at_counter() {
	echo "$1" > "$TMP/counter"
	c_=$1 p_=$2 t_=$3
	shift 3
	env DOUBLE_RACE_COUNTER="$TMP/counter" "$@" $GPUREDUCE shrink -j 1 --quiet --log="$p_$c_.log" \
		-o "$p_$c_/repro.cu" "$t_" >"$p_$c_.txt" 2>&1
}

# racy_grid(buf, 1024) over 4096 bytes with 8 blocks: a race the double
# always loses with 4 or more blocks and, with fewer, only when the
# launch's race() is even (DOUBLE_RACE_COUNTER): a grid cut keeps the
# fault but halves its rate.  Feed it to $MKTRACE.
racy_grid_trace_text() {
	wide_race_trace_text _Z9racy_gridPfi
}

# wide_race_trace_text KERNEL: KERNEL(buf, 1024) over 4096 bytes with 8
# blocks, which faults (a racy kernel's mangled name).  For $MKTRACE.
wide_race_trace_text() {
	double_trace_head
	cat <<EOT
alloc 0x7f0000100000 4096
h2d 0x7f0000100000 4096 seq
launch $1 8 128 ptr:0x7f0000100000 i32:1024
fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel 0 at_launch=1
EOT
}

# gather(out, src, idx, 1000) over a 4000-byte src and an 8000-byte index
# table that holds one wild entry (idx[17], byte 136): a fault that depends
# on one index only.  Arguments: the process's cwd and argv (double_trace_head).
gather_trace_text() {
	double_trace_head "$@"
	cat <<EOT
alloc 0x7f0000100000 4000
alloc 0x7f0000200000 4000
alloc 0x7f0000300000 8000
h2d 0x7f0000100000 4000 seq
h2d 0x7f0000300000 8000 0
h2d 0x7f0000300088 8 127
launch _Z6gatherPfPKfPKxi 4 256 ptr:0x7f0000200000 ptr:0x7f0000100000 ptr:0x7f0000300000 i32:1000
fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel 0 at_launch=1
EOT
}

finish() {
	echo "$test_passed passed, $test_failed failed"
	[ "$test_failed" -eq 0 ]
	exit $?
}

# build_sampleinfo: $BUILD/sampleinfo (tests/gpu/sampleinfo.c, the
# sample.yaml reader the GPU scripts use) built when missing or older than
# its source, libyaml linked statically where the static library is there;
# checks that it is there.
build_sampleinfo() {
	_si=$BUILD/sampleinfo
	_src=tests/gpu/sampleinfo.c
	if [ ! -x "$_si" ] || [ "$_src" -nt "$_si" ]; then
		mkdir -p "$BUILD"
		if [ -f /usr/lib/x86_64-linux-gnu/libyaml.a ] || [ -f /usr/lib/libyaml.a ]; then
			check "build sampleinfo (static libyaml)" ${CC:-cc} -std=gnu11 -O2 -Wall -Wextra -Werror \
				-o "$_si" "$_src" -Wl,-Bstatic -lyaml -Wl,-Bdynamic
		else
			check "build sampleinfo (shared libyaml)" ${CC:-cc} -std=gnu11 -O2 -Wall -Wextra -Werror \
				-o "$_si" "$_src" -lyaml
		fi
	fi
	check "sampleinfo is there" test -x "$_si"
}
