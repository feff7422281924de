#!/bin/sh
# t1030-capture-library-waits.sh - GPUREDUCE_BLOCKING=library (t1029) with
# the fake CUPTI/driver: capture-fakeprog's scripted calls, among them a
# stream capture begun in the global mode, a launch captured into it, a
# per-thread-stream launch, a graph launch and launches that fail.  Checked
# (FAKE_SYNC_LOG: one line per cuStreamSynchronize the library makes, with
# its stream and capture mode): only the launches that ran are waited for,
# each on its own stream, in the relaxed capture mode once a capture began
# (the global mode would forbid the wait, FAKE_CAPTURE_ON=1, and a
# forbidden wait would invalidate the program's graph); the trace is the
# one capture writes with CUDA_LAUNCH_BLOCKING=1; a wait that fails without
# a fault leaves the launch's result alone and says so in a NOTE.
. tests/cli/test-lib.sh

. tests/cli/capture-fakes.sh
capture_fakes
check_exit "fakeprog captured as usual" 3 "$GPUREDUCE" capture -o d.bin -- ./fakeprog full
check_exit "fakeprog, GPUREDUCE_BLOCKING=library" 3 env GPUREDUCE_BLOCKING=library FAKE_SYNC_LOG="$TMP/sync.log" \
	FAKE_CAPTURE_ON=1 "$GPUREDUCE" capture -o l.bin -- ./fakeprog full
check_grep "  ...the same fault" "fault: CUDA_ERROR_ILLEGAL_ADDRESS in fill(float\*, int) at launch #6" "$TMP/.out"
n=$(grep -c . sync.log)
[ "$n" = 5 ] && ok "  ...five waits: the launches that ran (not the captured one, not the two that failed)" ||
	fail "  ...five waits ($n)"; cat sync.log
check_grep "  ...the ptsz launch waits for its stream" "^sync 0x5 " sync.log
n=$(grep -c '^sync 0xca97' sync.log)
[ "$n" = 0 ] && ok "  ...no wait on the capturing stream" || fail "  ...no wait on the capturing stream ($n)"
n=$(grep -c ' strict$' sync.log)
[ "$n" = 0 ] && ok "  ...every wait in the relaxed capture mode (a global-mode capture had begun)" ||
	fail "  ...every wait in the relaxed mode ($n strict)"
./dump d.bin | grep -v '^PROCESS' | sed 's/0x[0-9a-f]\{10,\}/ADDR/g' >d.txt
./dump l.bin | grep -v '^PROCESS' | sed 's/0x[0-9a-f]\{10,\}/ADDR/g' >l.txt
n=$(grep -c '^LAUNCH' l.txt)
[ "$n" -ge 7 ] && ok "  ...its launches dumped ($n)" || fail "  ...its launches dumped ($n)"
n=$(grep -c 'was not waited for' l.txt)
[ "$n" = 0 ] && ok "  ...no wait refused" || fail "  ...no wait refused ($n)"
if cmp -s d.txt l.txt; then ok "  ...the same trace as without"; else fail "  ...the same trace as without"; diff d.txt l.txt | head; fi
check_exit "a wait refused (not a fault): the launch keeps its result, a note says so" 3 env GPUREDUCE_BLOCKING=library \
	FAKE_SYNC_RESULT=1 "$GPUREDUCE" capture -o n.bin -- ./fakeprog full
./dump n.bin >n.txt
check_grep "  ...the note" "^NOTE blocking in the library: waiting for cuLaunchKernel's stream returned CUDA_ERROR_INVALID_VALUE" n.txt

# threads: each launch's two halves on its own thread (the deferred half is
# kept per thread), every launch recorded once and waited for once
check_exit "8 threads x 500 launches, GPUREDUCE_BLOCKING=library" 0 env GPUREDUCE_BLOCKING=library \
	FAKE_SYNC_LOG="$TMP/thr-sync.log" "$GPUREDUCE" capture -o thr.bin -- ./fakeprog threads 8
check_grep "  ...all counted" "captured 4000 launches" "$TMP/.out"
./dump thr.bin >thr.txt
n=$(grep '^LAUNCH' thr.txt | sed 's/.* seq=\([0-9]*\) .*/\1/' | sort -n | uniq | wc -l | tr -d ' ')
[ "$n" = 4000 ] && ok "  ...every seq once" || fail "  ...every seq once ($n)"
n=$(grep -c '^sync ' thr-sync.log)
[ "$n" = 4000 ] && ok "  ...every launch waited for once" || fail "  ...every launch waited for once ($n waits)"
if grep -q TRUNCATED thr.txt; then fail "  ...no torn records"; else ok "  ...no torn records"; fi

finish
