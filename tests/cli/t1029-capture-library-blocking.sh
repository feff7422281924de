#!/bin/sh
# t1029-capture-library-blocking.sh - GPUREDUCE_BLOCKING=library: the
# capture library, not CUDA_LAUNCH_BLOCKING=1, makes each launch wait for
# its kernel (capture/inject.c, lib_block_after), and records most launches
# in their exit callback, while the kernel runs (defer_enter, defer_exit).
#
# On the driver double with DOUBLE_ASYNC_FAULTS=1 (a launch that faults
# returns CUDA_SUCCESS unless CUDA_LAUNCH_BLOCKING=1, the next call the
# fault, as a GPU's asynchronous launch does), ckpt-prog's faulting gather:
#   - captured as usual, and with the library waiting: the program's launch
#     returns the fault both ways, and the traces say the same records
#     (`show`, less pids, paths, times and host addresses);
#   - the same library without the wait (the program run with the
#     injection and CUDA_LAUNCH_BLOCKING=0, GPUREDUCE_BLOCKING unset): the
#     launch returns success and the trace has no fault: what the wait is for;
#   - the library-blocking trace replays to the fault and shrinks.
# `capture` (--blocking=library, the default since 2026-12-07) is the same,
# with the writer thread on unless GPUREDUCE_WRITER_THREAD=0;
# --blocking=driver wins over the variable.
# Also gpureduce_capture_pause (tests/gpu/hostfed.py's HOSTFED_ALTERNATE):
# what it leaves out, its NOTE, and that paused launches still wait; and
# GPUREDUCE_CAPTURE_ABLATE=wait (the same for a whole run).
# t1030 has the fake CUPTI/driver's side (which launches wait, in which
# capture mode).
. tests/cli/test-lib.sh

. tests/cli/capture-fakes.sh
capture_on_double $H/ckpt-prog.c
PATH=/usr/bin:/bin     # no compute-sanitizer
DOUBLE_ASYNC_FAULTS=1
export DOUBLE_ASYNC_FAULTS PATH
cd "$TMP" || exit 1
CUBIN=$DBL/kernels.cubin
# show's YAML without what differs between two runs of one program
norm() { "$GPUREDUCE" show "$1" | grep -v '^ *\(path\|created\|created_ns\|started\|size\|pid\|tid\|src\|dst\|func\|addr\|cwd\): ' |
	sed 's/0x[0-9a-f]\{10,\}/ADDR/g'; }

check_exit "capture --blocking=driver (CUDA_LAUNCH_BLOCKING=1)" 3 "$GPUREDUCE" capture --blocking=driver -o drv.bin -- ./prog $CUBIN 30
check_grep "  ...the launch returns its fault" "gather returned 700" "$TMP/.out"
check_grep "  ...the fault at the gather launch" "fault: CUDA_ERROR_ILLEGAL_ADDRESS in gather(.*) at launch #60" "$TMP/.out"
check_exit "capture (the default: the library waits)" 3 "$GPUREDUCE" capture -o lib.bin -- ./prog $CUBIN 30
check_grep "  ...the launch returns its fault (the library's wait gave it)" "gather returned 700" "$TMP/.out"
check_grep "  ...the fault at the same launch" "fault: CUDA_ERROR_ILLEGAL_ADDRESS in gather(.*) at launch #60" "$TMP/.out"
norm drv.bin >drv.yaml
norm lib.bin >lib.yaml
n=$(grep -c 'type: LAUNCH' lib.yaml)
[ "$n" = 61 ] && ok "  ...61 launches recorded" || fail "  ...61 launches recorded ($n)"
if cmp -s drv.yaml lib.yaml; then ok "  ...the same records as with CUDA_LAUNCH_BLOCKING=1"
else fail "  ...the same records as with CUDA_LAUNCH_BLOCKING=1"; diff drv.yaml lib.yaml | head -20; fi
check_grep "  ...the FAULT is the launch's own" "at_launch: true" lib.yaml

# the library without its wait: the fault is the program's next call's
check_exit "the same library, asynchronous launches, no wait: the launch returns success" 0 \
	env CUDA_INJECTION64_PATH="$GPUREDUCE_CAPTURE_LIB" GPUREDUCE_TRACE="$TMP/nowait.bin" CUDA_LAUNCH_BLOCKING=0 \
	./prog $CUBIN 30
check_grep "  ...gather returned 0" "gather returned 0" "$TMP/.out"
"$GPUREDUCE" show nowait.bin >nowait.yaml 2>&1
if grep -q 'type: FAULT' nowait.yaml; then fail "  ...and its trace has no fault"; else ok "  ...and its trace has no fault"; fi

check_exit "the library-blocking trace replays to the fault" 1 "$GPUREDUCE" replay lib.bin
check_grep "  ...at the gather launch" "(launch #60) in _Z6gatherPfPKfPKxi: CUDA_ERROR_ILLEGAL_ADDRESS" "$TMP/.out"
use_double_nvcc
check "  ...and shrinks" "$GPUREDUCE" shrink -j 2 --quiet -o s/repro.cu lib.bin
check_grep "  ...to one launch" "launches -> 1 launch" "$TMP/.out"
repro_faults_on_double s

# the profile: the wait is apart from the library's own time, and a
# deferred launch's two halves still add up to the launch callback
check_exit "profiled, GPUREDUCE_BLOCKING=library" 3 env GPUREDUCE_BLOCKING=library GPUREDUCE_CAPTURE_PROFILE=1 \
	"$GPUREDUCE" capture -o prof.bin -- ./prog $CUBIN 30
check_grep "  ...the wait on a line of its own" "capture profile: waiting for the kernel (GPUREDUCE_BLOCKING=library; not the library's own time): 61 calls" "$TMP/.out"
check_grep "  ...the launch's parts add up to it" "capture profile:   (parts: .* s of .* s, \(99\.[5-9]\|100\.[0-4]\)%)" "$TMP/.out"
lay_lib=$(sed -n 's/.*capture profile:   kernel layout from the driver ([^)]*): \([0-9]*\) calls.*/\1/p' "$TMP/.out")
check_exit "profiled, CUDA_LAUNCH_BLOCKING=1" 3 env GPUREDUCE_CAPTURE_PROFILE=1 "$GPUREDUCE" capture --blocking=driver -o profd.bin -- ./prog $CUBIN 30
lay_drv=$(sed -n 's/.*capture profile:   kernel layout from the driver ([^)]*): \([0-9]*\) calls.*/\1/p' "$TMP/.out")
[ -n "$lay_lib" ] && [ "$lay_lib" = "$lay_drv" ] && ok "  ...the kernels' first layouts on their own line both ways ($lay_lib)" ||
	fail "  ...the kernels' first layouts on their own line both ways (library '$lay_lib', driver '$lay_drv')"

# --- gpureduce_capture_pause (hostfed.py's HOSTFED_ALTERNATE) ---------------
# steps 5 to 14 paused: their 20 launches go unrecorded, a NOTE says the
# trace does not replay as captured; with the library waiting, paused
# launches still wait (every one of the 61 in the profile's wait line)
check_exit "capture, the program pausing it for steps 5-14" 3 env CKPT_PROG_PAUSE=5-15 \
	"$GPUREDUCE" capture --blocking=driver -o pause.bin -- ./prog $CUBIN 30
check_grep "  ...41 launches recorded, the fault the 41st" "captured 41 launches, .*fault: CUDA_ERROR_ILLEGAL_ADDRESS in gather(.*) at launch #40" "$TMP/.out"
"$GPUREDUCE" show pause.bin >pause.yaml 2>&1
check_grep "  ...and a NOTE says so" "capture paused by the program (gpureduce_capture_pause, for measurements)" pause.yaml
check_exit "the same with GPUREDUCE_BLOCKING=library, profiled" 3 env CKPT_PROG_PAUSE=5-15 GPUREDUCE_BLOCKING=library \
	GPUREDUCE_CAPTURE_PROFILE=1 "$GPUREDUCE" capture -o pausel.bin -- ./prog $CUBIN 30
check_grep "  ...every launch waited for, paused or not" "waiting for the kernel (GPUREDUCE_BLOCKING=library; not the library's own time): 61 calls" "$TMP/.out"
check_grep "  ...the program still sees its fault" "gather returned 700" "$TMP/.out"
# GPUREDUCE_CAPTURE_ABLATE=wait (bench-hostfed's wait way): nothing
# recorded, every launch still waited for, the program still sees its fault
check_exit "GPUREDUCE_CAPTURE_ABLATE=wait, profiled" 3 env GPUREDUCE_CAPTURE_ABLATE=wait GPUREDUCE_CAPTURE_PROFILE=1 \
	"$GPUREDUCE" capture -o abw.bin -- ./prog $CUBIN 30
check_grep "  ...every launch waited for" "waiting for the kernel (GPUREDUCE_BLOCKING=library; not the library's own time): 61 calls" "$TMP/.out"
check_grep "  ...the program still sees its fault" "gather returned 700" "$TMP/.out"
check_grep "  ...and nothing is recorded" "captured 0 launches, 0 allocations" "$TMP/.out"
check_exit "GPUREDUCE_CAPTURE_ABLATE=wait with --blocking=driver" 3 env GPUREDUCE_CAPTURE_ABLATE=wait GPUREDUCE_CAPTURE_PROFILE=1 \
	"$GPUREDUCE" capture --blocking=driver -o abwd.bin -- ./prog $CUBIN 30
check_no_grep "  ...the library does not wait (the driver does)" "waiting for the kernel" "$TMP/.out"

# --- capture --blocking=library: the option, and the writer thread it brings
# (the writer thread slowed, GPUREDUCE_WQ_TEST_SLOW_US: the drain at the
# fault finds its queue not yet empty and waits, so the profile's wait line
# shows the thread whatever the machine's speed)
check_exit "capture --blocking=library, profiled" 3 env GPUREDUCE_CAPTURE_PROFILE=1 GPUREDUCE_WQ_TEST_SLOW_US=2000 \
	"$GPUREDUCE" capture --blocking=library -o optp.bin -- ./prog $CUBIN 30
check_grep "  ...the launch returns its fault" "gather returned 700" "$TMP/.out"
check_grep "  ...the library waited for every launch" "waiting for the kernel (GPUREDUCE_BLOCKING=library; not the library's own time): 61 calls" "$TMP/.out"
check_grep "  ...the writer thread on (drained at the fault and exit)" "capture profile: waits for the writer thread (ring full, drains): [1-9]" "$TMP/.out"
check_exit "capture --blocking=library, not profiled" 3 "$GPUREDUCE" capture --blocking=library -o opt.bin -- ./prog $CUBIN 30
norm opt.bin >opt.yaml
if cmp -s drv.yaml opt.yaml; then ok "  ...the same records as with CUDA_LAUNCH_BLOCKING=1"
else fail "  ...the same records as with CUDA_LAUNCH_BLOCKING=1"; diff drv.yaml opt.yaml | head -20; fi
check_exit "--blocking=library with GPUREDUCE_WRITER_THREAD=0" 3 env GPUREDUCE_WRITER_THREAD=0 GPUREDUCE_CAPTURE_PROFILE=1 \
	GPUREDUCE_WQ_TEST_SLOW_US=2000 \
	"$GPUREDUCE" capture --blocking=library -o optnt.bin -- ./prog $CUBIN 30
check_grep "  ...still waits for every launch" "waiting for the kernel (GPUREDUCE_BLOCKING=library; not the library's own time): 61 calls" "$TMP/.out"
check_no_grep "  ...without the writer thread" "writer thread" "$TMP/.out"
check_exit "--blocking=driver over an exported GPUREDUCE_BLOCKING=library" 3 env GPUREDUCE_BLOCKING=library \
	GPUREDUCE_CAPTURE_PROFILE=1 "$GPUREDUCE" capture --blocking=driver -o optd.bin -- ./prog $CUBIN 30
check_grep "  ...the launch returns its fault (CUDA_LAUNCH_BLOCKING=1)" "gather returned 700" "$TMP/.out"
check_no_grep "  ...and the library does not wait" "waiting for the kernel" "$TMP/.out"
check_no_grep "  ...nor start the writer thread" "writer thread" "$TMP/.out"
check_exit "--blocking=sometimes: a usage error" 2 "$GPUREDUCE" capture --blocking=sometimes -o bad.bin -- ./prog $CUBIN 30
check_grep "  ...saying what it takes" "capture: --blocking=sometimes: say library (the capture library waits for each launch, the default) or driver" "$TMP/.out"
[ ! -e bad.bin ] && ok "  ...and nothing run or written" || fail "  ...and nothing run or written (bad.bin exists)"
# checkpoints (what a job left on takes): the window from the checkpoint,
# the same fault, and it replays to it.  Which checkpoint is a matter of
# time (the default adaptive interval, and a background checkpoint still
# being written defers the next): usually 1 at launch #20, at times 2 at
# #40 or #41, so any is taken
check_exit "--blocking=library with --checkpoint-every=20" 3 "$GPUREDUCE" capture --blocking=library \
	--checkpoint-every=20 -o optck.bin -- ./prog $CUBIN 30
check_grep "  ...from a checkpoint, the fault at the gather launch" "fault: CUDA_ERROR_ILLEGAL_ADDRESS in gather(.*) at launch #60 .*from checkpoint [12] at launch #[24][01]\>" "$TMP/.out"
check_grep "  ...the program saw it" "gather returned 700" "$TMP/.out"
check_exit "  ...and replays to it" 1 "$GPUREDUCE" replay optck.bin
check_grep "  ...at the gather launch" "(launch #60) in _Z6gatherPfPKfPKxi: CUDA_ERROR_ILLEGAL_ADDRESS" "$TMP/.out"

finish
