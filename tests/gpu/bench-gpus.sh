#!/bin/bash
# bench-gpus.sh - part of `make bench` on a GPU machine (issue 25): shrink's
# wall time with its workers spread over every GPU the driver reports
# beside the same shrink held to one GPU (GPUREDUCE_DEVICES=1), for the
# three samples whose shrink took longest in the last gpu-test (repro.yaml
# `seconds:` under ${GPU_TEST_OUT:-$BUILD/gpu-test}; without one, the
# samples named, default torch-extension offset-overflow flash-varlen),
# on gpu-test's traces (none: the sample is skipped with a note).  Also
# checks that the two give the same repro.cu (bar its date and timing lines)
# and reads how many GPUs the workers used (repro.yaml `gpus:`).
#
# On a machine with one GPU it prints that and passes: there is nothing to
# compare.  Ends with "N passed, N failed" (one per sample); exit 0 iff none
# failed.  Env: BENCH_OUT ($BUILD/bench), GPU_TEST_OUT, BENCH_GPUS_DEADLINE
# (420 s for the whole part), BENCH_GPUS_SAMPLES (how many, 3).
# Usage: tests/gpu/bench-gpus.sh [SAMPLE...]
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

OUT=${BENCH_OUT:-$BUILD/bench}/gpus
case $OUT in /*) ;; *) OUT=$GR_ROOT/$OUT ;; esac
GT=${GPU_TEST_OUT:-$BUILD/gpu-test}
case $GT in /*) ;; *) GT=$GR_ROOT/$GT ;; esac
HOWMANY=${BENCH_GPUS_SAMPLES:-3}
gr_deadline_set "${BENCH_GPUS_DEADLINE:-420}"
T0=$(now)
PASSED=0
FAILED=0
echo
echo "== 3. shrink on every GPU vs one GPU (GPUREDUCE_DEVICES=1)"
if [ ! -x "$GR" ]; then
	echo "bench-gpus: $GR is missing: run make first"
	echo "0 passed, 1 failed"
	exit 2
fi
NGPU=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
[ -n "${CUDA_VISIBLE_DEVICES:-}" ] && NGPU=$(printf '%s\n' "$CUDA_VISIBLE_DEVICES" | tr ',' '\n' | grep -c .)
if [ "${NGPU:-0}" -le 1 ]; then
	echo "bench-gpus: ${NGPU:-0} GPU on this machine: nothing to compare (shrink on N GPUs needs N > 1)"
	echo "0 passed, 0 failed"
	exit 0
fi
rm -rf -- "$OUT"
mkdir -p "$OUT" || { echo "bench-gpus: cannot create $OUT"; echo "0 passed, 1 failed"; exit 2; }

# the samples: those named, else gpu-test's slowest shrinks, else the default three
if [ $# -eq 0 ]; then
	mapfile -t PICK < <(for y in "$GT"/*/shrink/repro.yaml; do
		[ -f "$y" ] || continue
		s=$(yaml_key seconds "$y")
		[ "$s" = - ] || echo "$s $(basename "$(dirname "$(dirname "$y")")")"
	done | sort -rn | head -n "$HOWMANY" | awk '{ print $2 }')
	[ ${#PICK[@]} -gt 0 ] || PICK=(torch-extension offset-overflow flash-varlen)
	set -- "${PICK[@]}"
fi
TAB=$OUT/gpus.table
echo "sample|launches|1 GPU s|$NGPU GPUs s|GPUs used|speed-up|same repro.cu|result" >"$TAB"
norm() { sed -e '/candidates tested in/d' -e '/^ \* on [0-9-]* [0-9:]* UTC/d' "$1"; }
for n in "$@"; do
	n=${n%/}; n=${n##*/}
	w=$OUT/$n
	trace=$GT/$n/trace.bin
	mkdir -p "$w/one" "$w/all"
	one=-; all=-; used=-; speed=-; same=-; launches=-; ok=1
	if [ ! -s "$trace" ]; then
		log "$n: no trace from gpu-test ($trace): skipped"
		echo "$n|-|-|-|-|-|-|skipped (run make gpu-test first)" >>"$TAB"
		continue
	fi
	for mode in one all; do
		t=$(gr_step_timeout 150)
		log "$n: shrink, $mode (limit ${t}s, $(gr_time_left)s left)"
		if [ $mode = one ]; then
			run_step "$GR_ROOT" "$w/$mode.log" "$t" env -u GPUREDUCE_DEVICE GPUREDUCE_DEVICES=1 \
				"$GR" shrink "$trace" -o "$w/$mode/repro.cu" --quiet --time-limit=$(shrink_time_limit "$t")
		else
			run_step "$GR_ROOT" "$w/$mode.log" "$t" env -u GPUREDUCE_DEVICES -u GPUREDUCE_DEVICE \
				"$GR" shrink "$trace" -o "$w/$mode/repro.cu" --quiet --time-limit=$(shrink_time_limit "$t")
		fi
		rc=$STEP_RC
		parse_shrink "$w/$mode.log"
		[ "$launches" = - ] && launches=${SHR_BEFORE:--}
		if [ "$rc" -ne 0 ]; then
			ok=0
			log "$n: $mode: exit $rc: $(tail -n 2 "$w/$mode.log" | head -n 1)"
			continue
		fi
		s=$STEP_SECS
		grep -q 'time limit' "$w/$mode/repro.yaml" 2>/dev/null && s=">$s"
		[ $mode = one ] && one=$s || { all=$s; used=$(yaml_key gpus "$w/$mode/repro.yaml"); }
	done
	if [ "$one" != - ] && [ "$all" != - ]; then
		speed="$(ratio "${one#>}" "${all#>}")x"
		if norm "$w/one/repro.cu" >"$w/one.norm" && norm "$w/all/repro.cu" >"$w/all.norm" &&
		   cmp -s "$w/one.norm" "$w/all.norm"; then
			same=yes
		else
			same=no; ok=0
		fi
	fi
	[ "$used" = - ] || [ "$used" -gt 1 ] || ok=0
	if [ $ok = 1 ]; then result=PASS; PASSED=$((PASSED + 1)); else result=FAIL; FAILED=$((FAILED + 1)); fi
	echo "$n|$launches|$one|$all|$used of $NGPU|$speed|$same|$result" >>"$TAB"
done
echo "bench-gpus: $(secs_since "$T0")s; logs under $OUT"
print_table "$TAB" | tee "$OUT/summary.txt"
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
