#!/bin/sh
# capture-cost.sh - where capture's own time goes, measured on the CPU
# (issue 13).  ckpt-prog (tests/cli/helpers) runs a training-like loop on
# the driver double, once without capture (CKPT_PROG_PLAIN=1) and once under
# the real libgpureduce-capture.so, and prints its loop's seconds; the
# difference is capture's cost.  Three workloads isolate the three costs:
#   launches     many small launches, no copies        -> us per launch
#   h2d          a fresh batch copied every step        -> ms per MiB entered
#   checkpoint   a large live allocation, checkpoints   -> ms per checkpoint
#                (unchanged memory, and memory changed every step)
# Only the device read-back is GPU-specific; the rest is capture's CPU work.
# After the launch and h2d lines, "breakdown:" lines split capture's time
# inside the library (GPUREDUCE_CAPTURE_PROFILE=1, capture/prof.c); what
# they do not cover is CUPTI's own dispatch and the exit callbacks.
# "launches + N other driver calls" adds, before each launch, N calls
# capture records nothing of (CKPT_PROG_NOISE; the H200's host-fed PyTorch
# loop made about 14 driver calls a launch), run side by side in rounds:
# capture as built, the same with every driver callback subscribed
# (GPUREDUCE_CAPTURE_ALL_CALLBACKS=1, as before issue 26's cbids.c), and,
# with COST_BASE_LIB=PATH, another build of libgpureduce-capture.so (the
# tree before a change) on the same command.  These rows compare the loop
# thread's CPU seconds (ckpt-prog's "loop cpu"), which other processes on a
# loaded machine inflate far less than wall seconds.
# Usage (after make): sh tests/bench/capture-cost.sh  [BUILD=build]
# Env: COST_LIVE_MIB (256), COST_BATCH_MIB (3), COST_REPS (3: median of),
# COST_NOISE (14), COST_BASE_LIB, COST_SKIP_CKPT=1 (launches and h2d only).
set -u
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$(pwd)/$BUILD ;; esac
GPUREDUCE=$BUILD/gpureduce
CUDA=${CUDA:-/usr/local/cuda}
DBL=$BUILD/double
LIVE=$((${COST_LIVE_MIB:-256} << 20))
BATCH=$((${COST_BATCH_MIB:-3} << 20))
REPS=${COST_REPS:-3}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/capcost.XXXXXX") || exit 2
trap 'rm -rf "$TMP"' EXIT
H=$(pwd)/tests/cli/helpers
CF="-std=gnu11 -D_GNU_SOURCE -O2 -I$CUDA/include"
mkdir -p "$TMP/fake"
cc $CF -DFAKE_CUPTI_ONLY -fPIC -shared -fvisibility=hidden -o "$TMP/fake/libcupti.so.13" $H/capture-fakecuda.c &&
	cc $CF -o "$TMP/prog" $H/ckpt-prog.c -L$DBL -Wl,-rpath,$DBL -lcuda -ldl || exit 2
LD_LIBRARY_PATH="$TMP/fake:$DBL${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
GPUREDUCE_CAPTURE_LIB=$BUILD/libgpureduce-capture.so
GPUREDUCE_LIBCUDA=$DBL/libcuda.so.1
GPUREDUCE_NO_PROGRESS=1
export LD_LIBRARY_PATH GPUREDUCE_CAPTURE_LIB GPUREDUCE_LIBCUDA GPUREDUCE_NO_PROGRESS
unset CUDA_INJECTION64_PATH
CUBIN=$DBL/kernels.cubin
cd "$TMP" || exit 2

# loop_s CMD...: the loop's seconds, median of REPS runs
loop_s() {
	for i in $(seq "$REPS"); do
		"$@" 2>&1 | sed -n 's/^ckpt-prog: loop \([0-9.]*\) s$/\1/p'
	done | sort -n | awk '{ v[NR] = $1 } END { print (NR ? v[int((NR + 1) / 2)] : "?") }'
}
# breakdown CMD...: one more run with GPUREDUCE_CAPTURE_PROFILE=1, its
# "capture profile" lines (capture/prof.c: where each launch's and each
# copied MiB's time goes inside the capture library)
breakdown() {
	GPUREDUCE_CAPTURE_PROFILE=1 "$@" 2>&1 | sed -n 's/^gpureduce: capture profile: /  breakdown: /p'
}
per() { awk -v a="$1" -v b="$2" -v n="$3" -v k="$4" 'BEGIN { printf "%.3f", (a - b) * k / n }'; }

echo "workload | plain s | capture s | capture cost"
# launches: 2000 steps x (3 + 20) launches
STEPS=2000 K=20
p=$(CKPT_PROG_PLAIN=1 CKPT_PROG_LAUNCHES=$K loop_s ./prog $CUBIN $STEPS)
c=$(CKPT_PROG_LAUNCHES=$K loop_s "$GPUREDUCE" capture --no-checkpoint -o l.bin -- ./prog $CUBIN $STEPS)
# before issue 26 (GPUREDUCE_CAPTURE_LEGACY=1: one write(2) per record, zstd
# tried on every blob), side by side in the same run
u=$(GPUREDUCE_CAPTURE_LEGACY=1 CKPT_PROG_LAUNCHES=$K loop_s "$GPUREDUCE" capture --no-checkpoint -o l.bin -- ./prog $CUBIN $STEPS)
echo "launches, before issue 26 ($((STEPS * (K + 2))) launches) | $p | $u | $(per "$u" "$p" $((STEPS * (K + 2))) 1000000) us per launch"
echo "launches ($((STEPS * (K + 2))) launches) | $p | $c | $(per "$c" "$p" $((STEPS * (K + 2))) 1000000) us per launch"
CKPT_PROG_LAUNCHES=$K breakdown "$GPUREDUCE" capture --no-checkpoint -o l.bin -- ./prog $CUBIN $STEPS
# the same with NOISE other driver calls per launch, each way in turn per round
NOISE=${COST_NOISE:-14}
ways="plain built all${COST_BASE_LIB:+ base}"
for i in $(seq "$REPS"); do
	for w in $ways; do
		case $w in
		plain) CKPT_PROG_PLAIN=1 CKPT_PROG_NOISE=$NOISE CKPT_PROG_LAUNCHES=$K ./prog $CUBIN $STEPS ;;
		built) CKPT_PROG_NOISE=$NOISE CKPT_PROG_LAUNCHES=$K "$GPUREDUCE" capture --no-checkpoint -o n.bin -- ./prog $CUBIN $STEPS ;;
		all) GPUREDUCE_CAPTURE_ALL_CALLBACKS=1 CKPT_PROG_NOISE=$NOISE CKPT_PROG_LAUNCHES=$K \
			"$GPUREDUCE" capture --no-checkpoint -o n.bin -- ./prog $CUBIN $STEPS ;;
		base) GPUREDUCE_CAPTURE_LIB=$COST_BASE_LIB CKPT_PROG_NOISE=$NOISE CKPT_PROG_LAUNCHES=$K \
			"$GPUREDUCE" capture --no-checkpoint -o n.bin -- ./prog $CUBIN $STEPS ;;
		esac 2>&1 | sed -n "s/^ckpt-prog: loop cpu \([0-9.]*\) s\$/$w \1/p"
	done
done >noise.txt
med() { awk -v w="$1" '$1 == w { print $2 }' noise.txt | sort -n | awk '{ v[NR] = $1 } END { print (NR ? v[int((NR + 1) / 2)] : "?") }'; }
p=$(med plain)
nl=$((STEPS * (K + 2)))
for w in $ways; do
	[ $w = plain ] && continue
	c=$(med $w)
	case $w in
	built) what="capture" ;;
	all) what="capture, every driver callback (GPUREDUCE_CAPTURE_ALL_CALLBACKS=1)" ;;
	base) what="capture, $COST_BASE_LIB" ;;
	esac
	echo "launches + $NOISE other driver calls each, $what ($nl launches; loop thread's CPU s) | $p | $c | $(per "$c" "$p" $nl 1000000) us per launch"
done
CKPT_PROG_NOISE=$NOISE CKPT_PROG_LAUNCHES=$K breakdown "$GPUREDUCE" capture --no-checkpoint -o n.bin -- ./prog $CUBIN $STEPS
# h2d: 200 steps x BATCH bytes
STEPS=200
p=$(CKPT_PROG_PLAIN=1 CKPT_PROG_BATCH=$BATCH loop_s ./prog $CUBIN $STEPS)
c=$(CKPT_PROG_BATCH=$BATCH loop_s "$GPUREDUCE" capture --no-checkpoint -o h.bin -- ./prog $CUBIN $STEPS)
mib=$((STEPS * BATCH >> 20))
u=$(GPUREDUCE_CAPTURE_LEGACY=1 CKPT_PROG_BATCH=$BATCH loop_s "$GPUREDUCE" capture --no-checkpoint -o h0.bin -- ./prog $CUBIN $STEPS)
echo "h2d, before issue 26 ($mib MiB in $STEPS copies) | $p | $u | $(per "$u" "$p" $mib 1000) ms per MiB ($(wc -c <h0.bin) trace bytes)"
rm -f h0.bin
echo "h2d ($mib MiB in $STEPS copies) | $p | $c | $(per "$c" "$p" $mib 1000) ms per MiB ($(wc -c <h.bin) trace bytes)"
CKPT_PROG_BATCH=$BATCH breakdown "$GPUREDUCE" capture --no-checkpoint -o h.bin -- ./prog $CUBIN $STEPS
# checkpoints: LIVE bytes live, one due every 30 launches (~7 steps); the
# capture's own figure ("checkpoints: N taken in S s") is the cost, first
# with every due checkpoint taken (GPUREDUCE_CKPT_COST_RATIO=0), then with
# the default adaptive interval
[ "${COST_SKIP_CKPT:-0}" = 1 ] && exit 0
STEPS=60
for touch in 0 1; do
	if [ $touch = 1 ]; then T="CKPT_PROG_TOUCH=1" what="all chunks changed"; else T="CKPT_PROG_X=0" what="unchanged"; fi
	for ratio in 0 ""; do
		env $T CKPT_PROG_LIVE=$LIVE ${ratio:+GPUREDUCE_CKPT_COST_RATIO=$ratio} "$GPUREDUCE" capture \
			--checkpoint-every=30 -o k.bin -- ./prog $CUBIN $STEPS >k.out 2>&1
		l=$(sed -n 's/.*ckpt-prog: loop \([0-9.]*\) s.*/\1/p' k.out)
		c=$(sed -n 's/^gpureduce: checkpoints: \([0-9]*\) taken in \([0-9.]*\) s.*/\1 \2/p' k.out)
		set -- $c
		echo "checkpoint ($((LIVE >> 20)) MiB live, $what, cost ratio ${ratio:-default}) | - | $l |" \
			"${1:-?} checkpoints in ${2:-?} s: $(per "${2:-0}" 0 "${1:-1}" 1000) ms each ($(wc -c <k.bin) trace bytes)"
	done
done
