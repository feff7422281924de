#!/bin/sh
# t6055-write-fails.sh - a trace that cannot be written on (a full disk, a
# file size limit) is said to be so.  capture says it at once and in its
# summary, and keeps the trace: the library prints one line when its first write
# fails ("writing the trace failed at byte N (WHY)"), the summary says the
# trace could not be written past that byte, and a fault the program met
# afterwards is "after the trace ended", not "no fault"; with -o DIR/ the
# process's line and index.yaml say the same.  shrink, whose candidates
# cannot be written, ends with exit 4 (the environment), naming the file
# and why, not 1 ("does not reproduce"), and leaves no work files; hunt
# too (exit 4, the file and why); report keeps an earlier report.md whole.  The file size
# limit (ulimit -f, SIGXFSZ ignored: writes fail with EFBIG) stands in for
# a full disk; ckpt-prog on the driver double faults at its last launch.
. tests/cli/test-lib.sh

. tests/cli/capture-fakes.sh
capture_on_double $H/ckpt-prog.c
GPUREDUCE_NO_PROGRESS=1
export LD_LIBRARY_PATH GPUREDUCE_CAPTURE_LIB GPUREDUCE_LIBCUDA GPUREDUCE_NO_PROGRESS
unset CUDA_INJECTION64_PATH GPUREDUCE_FLUSH_MS GPUREDUCE_CAPTURE_LEGACY GPUREDUCE_WRITER_THREAD
cd "$TMP" || exit 1
CUBIN=$DBL/kernels.cubin

# the same run, unlimited: a whole trace with its fault
check_exit "capture without a limit: the program's exit" 3 "$GPUREDUCE" capture --no-checkpoint -o whole.bin -- ./prog $CUBIN 200
check_grep "  ...the fault is in it" "; fault: CUDA_ERROR_ILLEGAL_ADDRESS" "$TMP/.out"
check_no_grep "  ...and no write failed" "writing the trace failed" "$TMP/.out"
whole=$(wc -c <whole.bin | tr -d ' ')

for wq in 0 1; do
	what="GPUREDUCE_WRITER_THREAD=$wq"
	rm -f limited.bin
	# 200 blocks of 512 bytes (dash) or 1024 (bash): under the whole trace
	check_exit "capture with a file size limit ($what): the program's exit" 3 env GPUREDUCE_WRITER_THREAD=$wq \
		sh -c "trap '' XFSZ; ulimit -f 200; exec \"\$0\" capture --no-checkpoint -o limited.bin -- ./prog $CUBIN 200" \
		"$GPUREDUCE"
	cp "$TMP/.out" out-$wq.txt
	check_grep "  ...said when it happened, with why" \
		"^gpureduce: writing the trace failed at byte [0-9]* (File too large): it ends there" out-$wq.txt
	n=$(grep -c "writing the trace failed" out-$wq.txt)
	[ "$n" = 1 ] && ok "  ...once" || fail "  ...once ($n)"
	check_grep "  ...and in the summary" "could not be written past byte [0-9]* (File too large) and ends there" out-$wq.txt
	check_grep "  ...whose fault came after it, not 'no fault'" \
		"the program faulted after the trace ended, so the fault is not in it (exit 3)" out-$wq.txt
	check_no_grep "  ...(not 'no fault')" "; no fault" out-$wq.txt
	check "  ...the trace is kept" test -s limited.bin
	size=$(wc -c <limited.bin | tr -d ' ')
	[ "$size" -lt "$whole" ] && ok "  ...shorter than the whole one ($size < $whole bytes)" ||
		fail "  ...shorter than the whole one ($size, $whole)"
	check_grep "  ...the byte named is the file's size" "failed at byte $size " out-$wq.txt
	check_exit "  ...and still reads" 0 "$GPUREDUCE" show --no-events limited.bin
	check_exit "  ...and replays as far as it goes" 3 "$GPUREDUCE" replay limited.bin
	check_grep "  ...saying it is incomplete" "trace ends before the program did" "$TMP/.out"
done

# one trace per process (-o DIR/): the process's line and index.yaml say it
check_exit "capture -o run/ with a file size limit: the program's exit" 3 \
	sh -c "trap '' XFSZ; ulimit -f 200; exec \"\$0\" capture --no-checkpoint -o run/ -- ./prog $CUBIN 200" \
	"$GPUREDUCE"
cp "$TMP/.out" out-dir.txt
check_grep "  ...the process's line says its trace ended, and the fault after it" \
	"its trace could not be written past byte [0-9]* (File too large) and ends there; it faulted after that (the fault is not in the trace)" out-dir.txt
check_no_grep "  ...not 'killed'" "killed (no end record)" out-dir.txt
check_grep "  ...and index.yaml" "write_error: \"\{0,1\}byte [0-9]* (File too large)" run/index.yaml

# shrink: its candidate traces cannot be written
mkdir -p sh
check_exit "shrink whose traces cannot be written: exit 4" 4 \
	sh -c "trap '' XFSZ; ulimit -f 8; exec \"\$0\" shrink -j 1 -o sh/ whole.bin" "$GPUREDUCE"
cp "$TMP/.out" shrink.txt
check_grep "  ...naming the file and why" "gpureduce shrink: .*\.bin: .*File too large" shrink.txt
check_no_grep "  ...not 'does not reproduce'" "does not reproduce" shrink.txt
check_no_grep "  ...two messages never run together" "File too large/" shrink.txt
n=$(ls sh | wc -l | tr -d ' ')
[ "$n" = 0 ] && ok "  ...and leaves nothing in its folder" || { fail "  ...and leaves nothing in its folder ($n)"; ls -la sh; }
check_exit "the same shrink without the limit: exit 0" 0 "$GPUREDUCE" shrink -j 1 -o sh/ whole.bin

# report: report.md cannot be written; an earlier one stays whole
check_exit "report, written" 0 "$GPUREDUCE" report --runs=0 --no-sanitizer --no-tar sh
cp sh/report.md report-before.md
check_exit "report whose report.md cannot be written: exit 4" 4 \
	sh -c "trap '' XFSZ; ulimit -f 1; exec \"\$0\" report --runs=0 --no-sanitizer --no-tar sh" "$GPUREDUCE"
check_grep "  ...naming the file and why" "report.md: cannot write: File too large" "$TMP/.out"
cmp -s sh/report.md report-before.md && ok "  ...the earlier report.md is as it was" ||
	fail "  ...the earlier report.md is as it was"
check_fail "  ...and no partial file is left" test -e sh/report.md.tmp

# hunt: the guarded trace it writes cannot be written
check_exit "hunt whose trace cannot be written: exit 4" 4 \
	sh -c "trap '' XFSZ; ulimit -f 8; exec \"\$0\" hunt --no-shrink -o hu/ whole.bin" "$GPUREDUCE"
check_grep "  ...naming the file and why" "gpureduce hunt: .*hunt-base.bin: write failed: File too large" "$TMP/.out"

echo "$test_passed passed, $test_failed failed"
[ "$test_failed" -eq 0 ]
