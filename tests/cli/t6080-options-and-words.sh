#!/bin/sh
# t6080-options-and-words.sh - options mean what a user expects and every
# one in a usage line is explained; the output speaks plainly: demangled
# kernel names in summaries and show (the symbol kept under `kernel:`),
# "1 launch", no "0 / 0" rows, a clean trace's diagnose, make demo without
# a driver, `gpureduce help CMD` and `--version`.
. tests/cli/test-lib.sh

on_double nvcc no-sanitizer plain-path
oob_trace_text > oob.txt
check "mktrace oob (one launch)" $MKTRACE oob.bin < oob.txt
cat > clean.txt <<EOT
process 100 /work ./app
module $DBL/kernels.cubin 1
alloc 0x7f0000100000 4000
launch _Z7add_onePfi 4 256 ptr:0x7f0000100000 i32:1000
end 0
EOT
check "mktrace clean" $MKTRACE clean.bin < clean.txt

# --- options -------------------------------------------------------------------
check_exit "shrink --keep-going 5 TRACE: 5 is the value, not a second trace" 3 $GPUREDUCE shrink --keep-going 5 missing.bin
check_grep "  ...the error is the missing trace" "missing.bin" "$TMP/.out"
check_exit "shrink -k5 TRACE" 3 $GPUREDUCE shrink -k5 missing.bin
check_grep "  ...the error is the missing trace" "missing.bin" "$TMP/.out"
for o in --confirm=0 --runs=0 --time-limit=0; do
	check_exit "shrink $o is refused" 2 $GPUREDUCE shrink $o oob.bin
done
check_exit "capture --max-trace-bytes=1 is refused" 2 $GPUREDUCE capture --max-trace-bytes=1 true
check_grep "  ...saying why, not 'cannot read'" "1 is below the smallest useful trace" "$TMP/.out"
check_exit "capture --no-checkpoint --checkpoint-every=10 is refused" 2 $GPUREDUCE capture --no-checkpoint --checkpoint-every=10 true
check_grep "  ...saying they do not go together" "cannot go with --checkpoint-every" "$TMP/.out"
check "gpureduce help shrink" $GPUREDUCE help shrink
check_grep "  ...is shrink's help" "^usage: gpureduce shrink" "$TMP/.out"
check_exit "gpureduce help nosuch" 2 $GPUREDUCE help nosuch
# every option in a usage line is explained below it
for c in capture replay shrink show verify diagnose; do
	$GPUREDUCE $c --help > help.txt 2>&1
	miss=
	for o in $(sed -n '/^usage:/,/^$/p' help.txt | grep -o '\-\-[a-z][a-z-]*' | sort -u); do
		n=$(grep -c -- "$o" help.txt)
		[ "$n" -ge 2 ] || miss="$miss $o"
	done
	[ -z "$miss" ] && ok "$c --help explains every option of its usage line" || fail "$c --help does not explain:$miss"
done
check_exit "shrink --root-cause without allocator blocks: refused before any work" 2 $GPUREDUCE shrink --root-cause -o rc/ oob.bin
check_grep "  ...saying what to capture with" "capture --tensors" "$TMP/.out"
[ ! -e rc/repro.cu ] && ok "  ...nothing written" || fail "  ...a repro was written"

# --- words ---------------------------------------------------------------------
check "shrink a one-launch trace" $GPUREDUCE shrink -j 2 -o r/ oob.bin
cp .out shrink.out
check_grep "  ...\"1 launch -> 1 launch, 2 buffers\"" "^shrink: 1 launch -> 1 launch, 2 buffers;" shrink.out
check_grep "  ...the kernel demangled" "CUDA_ERROR_ILLEGAL_ADDRESS in scale_nocheck(float\*, float const\*, int);" shrink.out
if grep -q "0 / 0" shrink.out; then fail "  ...a '0 / 0' row in the phase table"; else ok "  ...no '0 / 0' row in the phase table"; fi
check_grep "  ...the confirm row" "^confirm  *-  *-" shrink.out
check "show the trace" $GPUREDUCE show oob.bin
check_grep "  ...kernel: keeps the symbol" "kernel: _Z13scale_nocheckPfPKfi" "$TMP/.out"
check_grep "  ...kernel_name: the demangled name" "kernel_name: scale_nocheck(float\*, float const\*, int)" "$TMP/.out"
check_exit "diagnose clean.bin" 1 $GPUREDUCE diagnose clean.bin
check_grep "  ...says the trace holds no fault" "clean.bin holds no fault" "$TMP/.out"
if grep -q "in -" "$TMP/.out"; then fail "  ...'in -'"; else ok "  ...no 'in -'"; fi
check "gpureduce --version" $GPUREDUCE --version
check_grep "  ...names the trace format" "trace format [0-9]*\.[0-9]*: writes it, reads 1\.0 to [0-9]*\.[0-9]*" "$TMP/.out"

# make demo without a driver says so (skipped where there is one)
if { /sbin/ldconfig -p 2>/dev/null || ldconfig -p 2>/dev/null; } | grep -q 'libcuda\.so\.1 '; then
	echo "skip: a driver is installed; make demo would run"
else
	(cd "$SRCDIR" && env -u LD_LIBRARY_PATH BUILD="$BUILD" DEMO_OUT="$TMP/demo" bash tests/gpu/demo.sh) > demo.out 2>&1
	rc=$?
	[ $rc = 1 ] && ok "make demo without a driver: exit 1" || fail "make demo without a driver: exit $rc"
	check_grep "  ...says there is no driver" "no NVIDIA driver on this machine" demo.out
	if grep -q "made no CUDA calls" demo.out; then fail "  ...blames the program"; else ok "  ...does not blame the program"; fi
fi
finish
