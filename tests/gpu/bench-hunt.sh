#!/bin/bash
# bench-hunt.sh - `make bench`, part 3 (issue 28): `gpureduce hunt` beside
# `compute-sanitizer --tool memcheck` on the same programs.
#
# Programs: each hunt sample (sample.yaml with expect.hunt_kernel; or the
# samples named on the command line), after its build step; then, unless
# BENCH_HUNT_LOOP=0, a training loop with a silent overrun in every step
# (tests/gpu/hostfed.py with HOSTFED_BUG=1: ResNet-18 fed from the host,
# a Triton monitoring kernel reading one float past the logits), the kind
# of program memcheck's 20-50x slow-down is paid on; then, unless
# BENCH_HUNT_STENCIL=0, a GPU-bound plain CUDA program (tests/gpu/
# hunt-stencil.cu: STENCIL_ITERS sweeps of a stencil, then a residual that
# reads one row past the grid): a program whose seconds are its kernels
# rather than Python's and CUDA's start-up, where memcheck's slow-down is
# paid in full (no memcheck without the caching allocator there: no
# PyTorch).  For each: the plain
# run; `gpureduce hunt --no-shrink --no-diagnose -- RUN` (detection:
# capture --tensors plus the guarded replays); `gpureduce hunt --no-shrink
# -- RUN` (the same plus one compute-sanitizer run per finding for how far
# past which tensor); `gpureduce hunt --no-shrink --no-diagnose TRACE` on
# the trace the detection captured (what hunting costs where `capture
# --tensors` ran already: the guarded replays alone); `compute-sanitizer --tool memcheck --target-processes
# all RUN` (PyTorch's caching allocator on: overruns inside a pool segment
# are invisible to it); and memcheck with PYTORCH_NO_CUDA_MEMORY_CACHING=1
# (every tensor a cudaMalloc of its own, so memcheck sees it; a different
# program from the user's).  Prints wall seconds and findings for each:
# hunt's finding count and first kernel, memcheck's "ERROR SUMMARY" count
# and the first kernel of an "Invalid __global__" report; and memcheck's
# seconds over hunt's (detection, and with distances).  The numbers are
# reported, not asserted: a program passes when every run finished in
# time.  Ends with "N passed, N failed".
#
# Usage: tests/gpu/bench-hunt.sh [SAMPLE...]   (named samples: no loop)
#        tests/gpu/bench-hunt.sh --loop-only | --stencil-only
# Env:   BENCH_OUT ($BUILD/bench), BENCH_HUNT_DEADLINE (560), BENCH_HUNT_TIMEOUT
#        (240 per run), BENCH_HUNT_LOOP (1), BENCH_HUNT_STEPS (20: the loop's
#        timed steps), BENCH_HUNT_IMG and BENCH_HUNT_BATCH (the loop's image
#        side and batch, hostfed.py's IMG and BATCH: 64 and 64; a bigger
#        image is more GPU work a step, what memcheck's slow-down grows
#        with); BENCH_HUNT_STENCIL (1), BENCH_HUNT_STENCIL_ITERS (3000) and
#        BENCH_HUNT_STENCIL_N (4000): the stencil's sweeps and grid side;
#        GPUREDUCE_TENSORS_MODE=snapshot|events reaches the captures
#        (snapshot: --tensors as before format 1.6, a reading of the
#        allocator at every launch; default events where torch has it)
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

OUT=${BENCH_OUT:-$BUILD/bench}/hunt
case $OUT in /*) ;; *) OUT=$GR_ROOT/$OUT ;; esac
DEADLINE=${BENCH_HUNT_DEADLINE:-560}
CAP=${BENCH_HUNT_TIMEOUT:-240}
SAN=$(command -v compute-sanitizer || echo "$CUDA/bin/compute-sanitizer")
LOOP=${BENCH_HUNT_LOOP:-1}
STENCIL=${BENCH_HUNT_STENCIL:-1}
ONLY_LOOP=0
case ${1:-} in
--loop-only) ONLY_LOOP=1; LOOP=1; STENCIL=0; shift ;;
--stencil-only) ONLY_LOOP=1; LOOP=0; STENCIL=1; shift ;;
esac
STEPS=${BENCH_HUNT_STEPS:-20}

gr_deadline_set "$DEADLINE"
T0=$(now)
log "bench-hunt: gpureduce=$GR sanitizer=$SAN out=$OUT deadline=${DEADLINE}s"
if [ ! -x "$GR" ] || ! need_sampleinfo; then
	echo "bench-hunt: $GR or sampleinfo is missing: run make first"
	echo "0 passed, 1 failed"
	exit 2
fi
mkdir -p "$OUT"

mapfile -t DIRS < <(if [ "$ONLY_LOOP" = 1 ]; then :; elif [ $# -gt 0 ]; then list_samples "$@"; else
	samples_with EXPECT_HUNT_KERNEL; fi)
TAB=$OUT/summary.table
echo "program|plain s|hunt detect s|hunt s|hunt of the trace s|hunt findings (first)|memcheck s|memcheck errors (first)|memcheck no-cache s|errors (first)|memcheck / detect|memcheck / hunt|memcheck / hunt of the trace|result" >"$TAB"
PASSED=0
FAILED=0

# bench_one NAME DIR RUN [VAR=VALUE...]: the five runs of one program (in
# DIR, with the env words), a table row, PASSED/FAILED counted.  NOCACHE=0
# leaves memcheck without the caching allocator out (a program without
# PyTorch: it would be the same run twice).
NOCACHE=1
bench_one() {
	local n=$1 dir=$2 run=$3 w=$OUT/$1 ok=1 p_s d_s h_s t_s s_s u_s h_f s_f u_f result
	shift 3
	local envw=("$@")
	run_step "$dir" "$w/plain.log" "$(gr_step_timeout "$CAP")" env "${envw[@]}" bash -c "$run"
	p_s=$STEP_SECS; [ "$STEP_RC" -eq 124 ] && ok=0
	run_step "$dir" "$w/hunt-detect.log" "$(gr_step_timeout "$CAP")" env "${envw[@]}" "$GR" hunt --no-shrink \
		--no-diagnose -o "$w/hunt-detect" -- bash -c "$run"
	d_s=$STEP_SECS; [ "$STEP_RC" -eq 124 ] && ok=0
	run_step "$dir" "$w/hunt.log" "$(gr_step_timeout "$CAP")" env "${envw[@]}" "$GR" hunt --no-shrink \
		-o "$w/hunt" -- bash -c "$run"
	h_s=$STEP_SECS; [ "$STEP_RC" -eq 124 ] && ok=0
	h_f="$(grep -a -c '^finding' "$w/hunt.log") ($(grep -a -m1 '^finding' "$w/hunt.log" |
		sed -n 's/.* launch #[0-9]* \([A-Za-z_0-9]*\).*/\1/p'))"
	# the trace the detection captured, hunted again: what `hunt TRACE`
	# costs where capture --tensors was on already (the guarded replays)
	t_s=-
	if [ -f "$w/hunt-detect/trace.bin" ]; then
		run_step "$dir" "$w/hunt-trace.log" "$(gr_step_timeout "$CAP")" "$GR" hunt --no-shrink --no-diagnose \
			-o "$w/hunt-trace" "$w/hunt-detect/trace.bin"
		t_s=$STEP_SECS; [ "$STEP_RC" -eq 124 ] && ok=0
	fi
	run_step "$dir" "$w/memcheck.log" "$(gr_step_timeout "$CAP")" env "${envw[@]}" "$SAN" --tool memcheck \
		--target-processes all --print-limit 20 bash -c "$run"
	s_s=$STEP_SECS; [ "$STEP_RC" -eq 124 ] && ok=0
	s_f=$(san_summary "$w/memcheck.log")
	u_s=- u_f=-
	if [ "$NOCACHE" = 1 ]; then
		run_step "$dir" "$w/memcheck-nocache.log" "$(gr_step_timeout "$CAP")" env "${envw[@]}" \
			PYTORCH_NO_CUDA_MEMORY_CACHING=1 "$SAN" --tool memcheck --target-processes all \
			--print-limit 20 bash -c "$run"
		u_s=$STEP_SECS; [ "$STEP_RC" -eq 124 ] && ok=0
		u_f=$(san_summary "$w/memcheck-nocache.log")
	fi
	if [ "$ok" -eq 1 ]; then result=ok; PASSED=$((PASSED + 1)); else result=FAIL; FAILED=$((FAILED + 1)); fi
	log "$n: plain ${p_s}s; hunt detect ${d_s}s, with distances ${h_s}s, of its trace ${t_s}s, $h_f;" \
		"memcheck ${s_s}s, $s_f; no-cache ${u_s}s, $u_f; $result"
	echo "$n|$p_s|$d_s|$h_s|$t_s|$h_f|$s_s|$s_f|$u_s|$u_f|$(ratio "$s_s" "$d_s")|$(ratio "$s_s" "$h_s")|$(ratio "$s_s" "$t_s")|$result" >>"$TAB"
}

# ratio A B: "A/Bx" to one decimal, "-" when B is 0
ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.1fx", a / b; else print "-" }'
}

for dir in "${DIRS[@]}"; do
	n=$(basename "$dir")
	rm -rf -- "${OUT:?}/$n"
	mkdir -p "$OUT/$n"
	load_sample "$dir/sample.yaml" || { warn "$n: $SAMPLE_ERR"; FAILED=$((FAILED + 1)); continue; }
	if [ -n "$BUILD_CMD" ] &&
		! run_step "$dir" "$OUT/$n/build.log" "$(gr_step_timeout 300)" bash -c "$BUILD_CMD"; then
		warn "$n: the build step failed (exit $STEP_RC): $OUT/$n/build.log"
		echo "$n|-|-|-|-|-|-|-|-|-|-|-|-|FAIL (build)" >>"$TAB"
		FAILED=$((FAILED + 1))
		continue
	fi
	bench_one "$n" "$dir" "$RUN"
done
if [ "$LOOP" = 1 ] && { [ $# -eq 0 ] || [ "$ONLY_LOOP" = 1 ]; }; then
	rm -rf -- "${OUT:?}/hostfed-bug"
	mkdir -p "$OUT/hostfed-bug"
	bench_one hostfed-bug "$GR_ROOT/tests/gpu" "python3 hostfed.py" HOSTFED_BUG=1 "HOSTFED_STEPS=$STEPS" \
		HOSTFED_WARMUP=2 "IMG=${BENCH_HUNT_IMG:-64}" "BATCH=${BENCH_HUNT_BATCH:-64}"
fi
if [ "$STENCIL" = 1 ] && { [ $# -eq 0 ] || [ "$ONLY_LOOP" = 1 ]; }; then
	w=$OUT/stencil
	rm -rf -- "${w:?}"
	mkdir -p "$w"
	if run_step "$w" "$w/build.log" "$(gr_step_timeout 300)" "$CUDA/bin/nvcc" -O2 -o "$w/hunt-stencil" \
		"$GR_ROOT/tests/gpu/hunt-stencil.cu"; then
		NOCACHE=0
		bench_one stencil "$w" ./hunt-stencil "STENCIL_ITERS=${BENCH_HUNT_STENCIL_ITERS:-3000}" \
			"STENCIL_N=${BENCH_HUNT_STENCIL_N:-4000}"
		NOCACHE=1
	else
		warn "stencil: nvcc failed (exit $STEP_RC): $w/build.log"
		echo "stencil|-|-|-|-|-|-|-|-|-|-|-|-|FAIL (build)" >>"$TAB"
		FAILED=$((FAILED + 1))
	fi
fi

echo
echo "bench-hunt: $(secs_since "$T0")s in all; logs under $OUT"
echo "hunt beside compute-sanitizer memcheck (wall seconds, findings):"
print_table "$TAB" | tee "$OUT/summary.txt"
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
