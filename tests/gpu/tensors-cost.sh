#!/bin/bash
# tensors-cost.sh - what `capture --tensors` costs a whole process (issue
# 28: `hunt -- CMD` runs the program under it).  On an H100 (2026-12-06)
# small PyTorch samples took seconds longer under `capture --tensors` than
# natively, where plain capture took 0-2 s longer: this says where.
#
# For each sample (default: tensor-overrun neighbour-write view-tail
# ragged-sum), with its clean variant's environment (clean_env:, so that
# no run faults and a faulted context's teardown is not timed), after its
# build step, one at a time, TC_ROUNDS (2) rounds:
#   native    bash -c "$RUN"
#   capture   gpureduce capture -- bash -c "$RUN"
#   tensors   gpureduce capture --tensors -- bash -c "$RUN"
# the captures with GPUREDUCE_CAPTURE_PROFILE=1.  Prints each run's wall
# seconds, the medians, and for the last --tensors run the profile lines
# of the allocator's reading (tensor blocks, history fetches at launches
# and at exit) and the callbacks' total, so that the library's own share
# of the difference shows.  Ends with "N passed, N failed" (a sample
# passes when every run exited 0).
# Usage: tests/gpu/tensors-cost.sh [SAMPLE...]   (BUILD and CUDA from make)
# Env:   TC_ROUNDS (2), TC_DEADLINE (400 s)
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

OUT=$BUILD/tensors-cost
ROUNDS=${TC_ROUNDS:-2}
gr_deadline_set "${TC_DEADLINE:-400}"
if [ ! -x "$GR" ] || ! need_sampleinfo; then
	echo "tensors-cost: $GR or sampleinfo is missing: run make first"
	echo "0 passed, 1 failed"
	exit 2
fi
mkdir -p "$OUT" || exit 2
[ $# -gt 0 ] || set -- tensor-overrun neighbour-write view-tail ragged-sum
PASSED=0 FAILED=0
TAB=$OUT/table
echo "sample|native s|capture s|capture --tensors s|tensors over capture" >"$TAB"
med() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { if (NR) printf "%.2f", v[int((NR + 1) / 2)]; else print "n/a" }'; }
for dir in $(list_samples "$@"); do
	n=$(basename "$dir")
	if ! load_sample "$dir/sample.yaml"; then
		echo "$n: $SAMPLE_ERR"; FAILED=$((FAILED + 1)); continue
	fi
	w=$OUT/$n
	rm -rf "$w"
	mkdir -p "$w"
	ok=1
	if [ -n "$BUILD_CMD" ]; then
		run_step "$dir" "$w/build.log" "$(gr_step_timeout 300)" bash -c "$BUILD_CMD" || { ok=0; tail_log "$w/build.log"; }
	fi
	declare -A T=()
	for ((r = 1; r <= ROUNDS && ok; r++)); do
		for way in native capture tensors; do
			logf=$w/$way-$r.log
			case $way in
			native) run_step "$dir" "$logf" "$(gr_step_timeout "$TIMEOUT")" env $CLEAN_ENV bash -c "$RUN" ;;
			capture) run_step "$dir" "$logf" "$(gr_step_timeout "$TIMEOUT")" env $CLEAN_ENV GPUREDUCE_NO_PROGRESS=1 \
					GPUREDUCE_CAPTURE_PROFILE=1 "$GR" capture --force -o "$w/t.bin" -- bash -c "$RUN" ;;
			tensors) run_step "$dir" "$logf" "$(gr_step_timeout "$TIMEOUT")" env $CLEAN_ENV GPUREDUCE_NO_PROGRESS=1 \
					GPUREDUCE_CAPTURE_PROFILE=1 "$GR" capture --tensors --force -o "$w/t.bin" -- bash -c "$RUN" ;;
			esac
			[ "$STEP_RC" -eq 0 ] || { ok=0; echo "$n: $way round $r exited $STEP_RC"; tail_log "$logf"; }
			T[$way]="${T[$way]:-} $STEP_SECS"
			rm -f "$w"/t.bin*
		done
		log "$n: round $r: native ${T[native]##* } s, capture ${T[capture]##* } s, capture --tensors ${T[tensors]##* } s"
	done
	mn=$(med ${T[native]:-}) mc=$(med ${T[capture]:-}) mt=$(med ${T[tensors]:-})
	echo "$n|$mn|$mc|$mt|$(awk -v a="$mt" -v b="$mc" 'BEGIN { if (a ~ /^[0-9.]+$/ && b ~ /^[0-9.]+$/) printf "+%.2f s", a - b; else print "n/a" }')" >>"$TAB"
	# the last round's profiles, both captures: every slot that took 10 ms
	# or more (what differs between the two is --tensors' own share)
	for way in capture tensors; do
		last=$w/$way-$ROUNDS.log
		[ -f "$last" ] && grep -a 'capture profile: ' "$last" |
			awk -v p="  $n $way: " '{ sub(/^.*capture profile: */, ""); if (match($0, /, [0-9.]+ s:/)) { v = substr($0, RSTART + 2, RLENGTH - 5) + 0; if (v < 0.01) next } print p $0 }'
	done
	unset T
	if [ "$ok" = 1 ]; then PASSED=$((PASSED + 1)); else FAILED=$((FAILED + 1)); fi
done
echo
echo "== capture --tensors against capture and the native run (median wall seconds of $ROUNDS rounds, clean variants)"
print_table "$TAB"
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
