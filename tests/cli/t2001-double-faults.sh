#!/bin/sh
# t2001-double-faults.sh - the CPU driver double turns guard-page hits,
# use after free and device asserts into sticky CUDA errors, with the
# real allocator's 256-byte slack, and has a flaky kernel that faults on
# about half of its launches.
. tests/cli/test-lib.sh
. tests/double/test-env.sh

# expect_out WHAT WANT MODE ARGS…: dbltest exits 0 and its stdout is WANT
expect_out() {
	what=$1 want=$2
	shift 2
	got=$(dbl "$@" 2>"$TMP/err")
	rc=$?
	if [ $rc -eq 0 ] && [ "$got" = "$want" ]; then
		ok "$what"
	else
		fail "$what: rc $rc, got '$got', want '$want'"
		sed 's/^/    /' "$TMP/err"
	fi
}

# (b) scale_nocheck over 1000 floats (4000 bytes: 96 bytes of slack)
expect_out "scale_nocheck, 1000 threads: no fault" ok nocheck 1000
expect_out "scale_nocheck, 1024 threads: overrun stays in the 96-byte slack" ok nocheck 1024
expect_out "scale_nocheck, 1088 threads: ILLEGAL_ADDRESS, sticky" "fault CUDA_ERROR_ILLEGAL_ADDRESS" nocheck 1088
expect_out "scale_nocheck, 2048 threads: ILLEGAL_ADDRESS, sticky" "fault CUDA_ERROR_ILLEGAL_ADDRESS" nocheck 2048

# (c) VMM guard placement: 4000-byte buffer ending 96 bytes before the guard
expect_out "VMM: read at +0 ok" ok vmm 0
expect_out "VMM: read at +4000 (in the slack) does not fault" ok vmm 1000
expect_out "VMM: read at +4092 does not fault" ok vmm 1023
expect_out "VMM: read at +4096 faults" "fault CUDA_ERROR_ILLEGAL_ADDRESS" vmm 1024
expect_out "VMM: wild index faults" "fault CUDA_ERROR_ILLEGAL_ADDRESS" vmm 100000000000
check "VMM: kernel access after cuMemUnmap faults" dbl vmm-unmapped

# (d) use after free
check "use after cuMemFree faults, copies to freed memory are refused" dbl uaf

# (e) device-side assert
expect_out "check_index(5): ok" ok assert 5
expect_out "check_index(100000): CUDA_ERROR_ASSERT, sticky" "fault CUDA_ERROR_ASSERT" assert 100000
if grep -q "check_index(const long long\*, int, int): block: \[0,0,0\], thread: \[3,0,0\] Assertion \`idx\[i\] < limit\` failed." "$TMP/err"; then
	ok "assert prints CUDA's message"
else
	fail "assert message"
	sed 's/^/    /' "$TMP/err"
fi

# DOUBLE_VERBOSE names the fault like compute-sanitizer would
DOUBLE_VERBOSE=1 dbl nocheck 2048 >/dev/null 2>"$TMP/err"
if grep -q "illegal address .* (read, SIGSEGV) in scale_nocheck(float\*, const float\*, int), block (16,0,0) thread (0,0,0): 96 bytes after the end of the allocation at .* of 4000 bytes" "$TMP/err"; then
	ok "DOUBLE_VERBOSE=1 describes the fault"
else
	fail "DOUBLE_VERBOSE=1 output"
	sed 's/^/    /' "$TMP/err"
fi
DOUBLE_VERBOSE=1 dbl uaf >/dev/null 2>"$TMP/err"
grep -q "(use after free)" "$TMP/err" && ok "DOUBLE_VERBOSE=1 names a use after free" ||
	fail "DOUBLE_VERBOSE=1 use after free: $(cat "$TMP/err")"

# a SIGSEGV handler of the program is restored after a faulting launch
# (under ASan, ASan's own handler is the one that must survive)
if grep -q sanitize=address "$DBL_DIR/test-cflags" 2>/dev/null; then
	check "the program's SIGSEGV handler (ASan's) survives a faulting launch" env DBLTEST_KEEP_HANDLER=1 "$TMP/dbltest" signal "$CUBIN"
else
	check "the program's SIGSEGV handler survives a faulting launch" dbl signal
fi

# racy_augment: about half of all launches fault; 40 runs, each a process
faults=0 oks=0 bad=0 i=0
while [ $i -lt 40 ]; do
	got=$(dbl racy 2>>"$TMP/racy.err")
	case $? in 0) ;; *) bad=$((bad + 1)) ;; esac
	case $got in fault) faults=$((faults + 1)) ;; ok) oks=$((oks + 1)) ;; *) bad=$((bad + 1)) ;; esac
	i=$((i + 1))
done
# P(outside 8..32 | p = 0.5) < 2e-5
if [ $bad -eq 0 ] && [ $faults -ge 8 ] && [ $faults -le 32 ]; then
	ok "racy_augment faulted in $faults of 40 runs"
else
	fail "racy_augment: $faults faults, $oks ok, $bad broken runs of 40"
	sed 's/^/    /' "$TMP/racy.err"
fi
# DOUBLE_SEED makes it reproducible: same seed, same outcome; seeds differ
same=1 seen=""
for s in 1 2 3 4 5 6 7 8 9 10 11 12; do
	a=$(DOUBLE_SEED=$s dbl racy 2>/dev/null)
	b=$(DOUBLE_SEED=$s dbl racy 2>/dev/null)
	[ "$a" = "$b" ] || same=0
	seen="$seen $a"
done
case $seen in
*fault*ok* | *ok*fault*) both=1 ;;
*) both=0 ;;
esac
if [ $same -eq 1 ] && [ $both -eq 1 ]; then
	ok "DOUBLE_SEED fixes racy_augment's outcome"
else
	fail "DOUBLE_SEED: same=$same outcomes:$seen"
fi
finish
