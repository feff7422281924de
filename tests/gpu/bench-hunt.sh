#!/bin/bash
# bench-hunt.sh - `make bench`, part 3 (issue 28): `gpureduce hunt` beside
# `compute-sanitizer --tool memcheck` on the same programs.
#
# For each hunt sample (sample.yaml with expect.hunt_kernel; or the samples
# named on the command line) after its build step: the plain run, `gpureduce
# hunt --no-shrink -- RUN` (capture --tensors plus the guarded replays, the
# finding only: no repro), `compute-sanitizer --tool memcheck
# --target-processes all RUN` as the program runs (PyTorch's caching
# allocator on: overruns inside a pool segment are invisible to it), and
# the same with PYTORCH_NO_CUDA_MEMORY_CACHING=1 (every tensor a cudaMalloc
# of its own, so memcheck sees it; a different program from the user's).
# Prints wall seconds and findings for each: hunt's finding count and first
# kernel, memcheck's "ERROR SUMMARY" count and the first kernel of an
# "Invalid __global__" report; and hunt's speed-up over memcheck.  The
# numbers are reported, not asserted: a sample passes when every run
# finished in time.  Ends with "N passed, N failed".
#
# Usage: tests/gpu/bench-hunt.sh [SAMPLE...]
# Env:   BENCH_OUT ($BUILD/bench), BENCH_HUNT_DEADLINE (560), BENCH_HUNT_TIMEOUT
#        (240 per run)
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

OUT=${BENCH_OUT:-$BUILD/bench}/hunt
case $OUT in /*) ;; *) OUT=$GR_ROOT/$OUT ;; esac
DEADLINE=${BENCH_HUNT_DEADLINE:-560}
CAP=${BENCH_HUNT_TIMEOUT:-240}
SAN=$(command -v compute-sanitizer || echo "$CUDA/bin/compute-sanitizer")

gr_deadline_set "$DEADLINE"
T0=$(now)
log "bench-hunt: gpureduce=$GR sanitizer=$SAN out=$OUT deadline=${DEADLINE}s"
if [ ! -x "$GR" ] || ! need_sampleinfo; then
	echo "bench-hunt: $GR or sampleinfo is missing: run make first"
	echo "0 passed, 1 failed"
	exit 2
fi
mkdir -p "$OUT"

mapfile -t DIRS < <(if [ $# -gt 0 ]; then list_samples "$@"; else
	for d in "$GR_ROOT"/samples/*/; do
		[ -f "$d/sample.yaml" ] && "$SAMPLEINFO" "$d/sample.yaml" 2>/dev/null |
			grep -q "^EXPECT_HUNT_KERNEL='..*'" && echo "${d%/}"
	done; fi)
TAB=$OUT/summary.table
echo "sample|plain s|hunt s|hunt findings (first)|memcheck s|memcheck errors (first)|memcheck no-cache s|errors (first)|hunt vs memcheck|result" >"$TAB"
PASSED=0
FAILED=0

# san_summary LOG: "N (kernel)" from a compute-sanitizer log
san_summary() {
	local n k
	n=$(grep -a -o 'ERROR SUMMARY: [0-9]*' "$1" | awk '{ s += $3 } END { print s + 0 }')
	k=$(grep -a -A1 'Invalid __global__' "$1" | sed -n 's/^=* *at \([A-Za-z_0-9]*\).*/\1/p' | head -n 1)
	echo "$n${k:+ ($k)}"
}

for dir in "${DIRS[@]}"; do
	n=$(basename "$dir")
	w=$OUT/$n
	rm -rf -- "$w"
	mkdir -p "$w"
	ok=1
	load_sample "$dir/sample.yaml" || { warn "$n: $SAMPLE_ERR"; FAILED=$((FAILED + 1)); continue; }
	if [ -n "$BUILD_CMD" ]; then
		run_step "$dir" "$w/build.log" "$(gr_step_timeout 300)" bash -c "$BUILD_CMD" || ok=0
	fi
	run_step "$dir" "$w/plain.log" "$(gr_step_timeout "$CAP")" bash -c "$RUN"
	p_s=$STEP_SECS; [ "$STEP_RC" -eq 124 ] && ok=0
	run_step "$dir" "$w/hunt.log" "$(gr_step_timeout "$CAP")" "$GR" hunt --no-shrink -o "$w/hunt" -- bash -c "$RUN"
	h_s=$STEP_SECS; [ "$STEP_RC" -eq 124 ] && ok=0
	h_f="$(grep -a -c '^finding' "$w/hunt.log") ($(grep -a -m1 '^finding' "$w/hunt.log" |
		sed -n 's/.* launch #[0-9]* \([A-Za-z_0-9]*\).*/\1/p'))"
	run_step "$dir" "$w/memcheck.log" "$(gr_step_timeout "$CAP")" "$SAN" --tool memcheck --target-processes all \
		--print-limit 20 bash -c "$RUN"
	s_s=$STEP_SECS; [ "$STEP_RC" -eq 124 ] && ok=0
	s_f=$(san_summary "$w/memcheck.log")
	run_step "$dir" "$w/memcheck-nocache.log" "$(gr_step_timeout "$CAP")" env PYTORCH_NO_CUDA_MEMORY_CACHING=1 \
		"$SAN" --tool memcheck --target-processes all --print-limit 20 bash -c "$RUN"
	u_s=$STEP_SECS; [ "$STEP_RC" -eq 124 ] && ok=0
	u_f=$(san_summary "$w/memcheck-nocache.log")
	speed=$(awk -v h="$h_s" -v s="$s_s" 'BEGIN { if (h > 0) printf "%.1fx", s / h; else print "-" }')
	if [ "$ok" -eq 1 ]; then result=ok; PASSED=$((PASSED + 1)); else result=FAIL; FAILED=$((FAILED + 1)); fi
	log "$n: plain ${p_s}s; hunt ${h_s}s, $h_f; memcheck ${s_s}s, $s_f; no-cache ${u_s}s, $u_f; $result"
	echo "$n|$p_s|$h_s|$h_f|$s_s|$s_f|$u_s|$u_f|$speed|$result" >>"$TAB"
done

echo
echo "bench-hunt: $(secs_since "$T0")s in all; logs under $OUT"
echo "hunt beside compute-sanitizer memcheck (wall seconds, findings):"
print_table "$TAB" | tee "$OUT/summary.txt"
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
