#!/bin/bash
# long-run.sh - issue 13's five-minute run, in one device call (600 s):
# samples/torchvision-long trains ResNet-18 for LONG_RUN_SECONDS (300) and
# faults at the end; it is captured with checkpoints, shrunk (with what time
# is left, less the repro's share), and the emitted repro.cu is built and
# run LONG_RUN_REPROS (5) times.  Prints the trace bytes next to the model's
# live device memory and the checkpoint the trace starts from, capture's
# own checkpoint cost, and ends with "N passed, N failed" (one check each:
# capture ended at the fault, shrink wrote a repro, every repro run
# faulted with an expected error).
#
# Budget: torch start-up ~12 s + 300 s of training under capture (~1.1x:
# ~345 s) + exit; shrink gets what is left less 60 s (repro build ~5 s,
# runs ~1 s each).  Env: LONG_RUN_SECONDS (300), LONG_RUN_CKPT (2s: a
# checkpoint due every 2 s, spaced further by the adaptive interval and
# the background thread: a short window makes shrink's replays short),
# LONG_RUN_REPROS (5), LONG_RUN_DEADLINE (585), BENCH_OUT ($BUILD/bench).
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

SECS=${LONG_RUN_SECONDS:-300}
CK=${LONG_RUN_CKPT:-2s}
RUNS=${LONG_RUN_REPROS:-5}
OUT=${BENCH_OUT:-$BUILD/bench}
case $OUT in /*) ;; *) OUT=$GR_ROOT/$OUT ;; esac
OUT=$OUT/long-run
DIR=$GR_ROOT/samples/torchvision-long
gr_deadline_set "${LONG_RUN_DEADLINE:-585}"
T0=$(now)
PASSED=0
FAILED=0
pass() { PASSED=$((PASSED + 1)); echo "ok   $*"; }
failc() { FAILED=$((FAILED + 1)); echo "FAIL $*"; }
rm -rf -- "$OUT"
mkdir -p "$OUT" || { echo "long-run: cannot create $OUT"; echo "0 passed, 1 failed"; exit 2; }
if [ ! -x "$GR" ]; then
	echo "long-run: $GR is missing: run make first"
	echo "0 passed, 1 failed"
	exit 2
fi
log "long-run: TRAIN_SECONDS=$SECS --checkpoint-every=$CK out=$OUT"

# 1. capture
run_step "$DIR" "$OUT/capture.log" "$(gr_step_timeout 480)" env GPUREDUCE_NO_PROGRESS=1 TRAIN_SECONDS="$SECS" \
	"$GR" capture --checkpoint-every="$CK" -o "$OUT/trace.bin" -- python3 train.py
parse_capture "$OUT/capture.log"
bytes=$(stat -c %s "$OUT/trace.bin" 2>/dev/null || echo none)
live=$(sed -n 's/.*live device memory: \(.*\)$/\1/p' "$OUT/capture.log" | tail -n 1)
from=$(printf '%s\n' "$CAP_LINE" | sed -n 's/.*; from checkpoint \([0-9]*\) at launch #\([0-9]*\) (\([^)]*\)).*/checkpoint \1 at launch #\2 (\3)/p')
cost=$(grep -a '^gpureduce: checkpoints: ' "$OUT/capture.log" | tail -n 1 | sed 's/^gpureduce: //')
trained=$(sed -n 's/.*\(trained [0-9]* steps in [0-9.]* s\).*/\1/p' "$OUT/capture.log" | tail -n 1)
echo "capture: ${trained:-no 'trained' line}, ${STEP_SECS} s in all, exit $STEP_RC"
echo "trace: $bytes bytes, starting at ${from:-no checkpoint}; model: ${live:-?}"
echo "${cost:-checkpoints: (no figure)}"
if [ -n "$CAP_ERR" ] && [ -n "$CAP_KERNEL" ] && kernel_matches "$CAP_KERNEL" smooth_targets_kernel; then
	pass "capture ended at the fault: $CAP_ERR in $CAP_KERNEL at launch #$CAP_AT"
else
	failc "capture did not end at the smooth_targets_kernel fault (exit $STEP_RC)"
	tail_log "$OUT/capture.log"
fi

# 2. shrink, leaving 60 s for the repro
t=$(( $(gr_step_timeout 600) - 60 ))
[ "$t" -lt 0 ] && t=0
mkdir -p "$OUT/shrink"
run_step "$GR_ROOT" "$OUT/shrink.log" "$t" "$GR" shrink "$OUT/trace.bin" -o "$OUT/shrink/repro.cu" \
	--time-limit="$(shrink_time_limit "$t")"
parse_shrink "$OUT/shrink.log"
echo "shrink: ${SHR_LINE:-no summary line} (exit $STEP_RC, ${STEP_SECS} s, time limit $(shrink_time_limit "$t") s)"
if [ "$STEP_RC" -eq 0 ] && [ -f "$OUT/shrink/repro.cu" ]; then
	pass "shrink wrote repro.cu (${SHR_BEFORE:-?} -> ${SHR_AFTER:-?} launches)"
else
	failc "shrink wrote no repro (exit $STEP_RC)"
	tail_log "$OUT/shrink.log"
fi

# 3. the repro, built as documented, run RUNS times
k=0; runs=0
if [ -f "$OUT/shrink/repro.cu" ] && build_repro "$OUT/shrink/repro.cu" "$OUT/shrink/repro" "$OUT/nvcc.log"; then
	while [ "$runs" -lt "$RUNS" ] && [ "$(gr_time_left)" -gt 5 ]; do
		runs=$((runs + 1))
		run_step "$OUT/shrink" "$OUT/repro-$runs.log" "$(gr_step_timeout 60)" ./repro
		if [ "$STEP_RC" -eq 1 ] && grep -a -q -E 'ILLEGAL_ADDRESS|INVALID_ADDRESS_SPACE' "$OUT/repro-$runs.log"; then
			k=$((k + 1))
		fi
	done
fi
echo "repro: $k/$runs runs faulted (of $RUNS)"
if [ "$runs" -eq "$RUNS" ] && [ "$k" -eq "$RUNS" ]; then
	pass "the repro faulted $k/$RUNS"
else
	failc "the repro faulted $k/$runs (of $RUNS)"
fi
echo "long-run: $(secs_since "$T0")s; logs under $OUT"
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
