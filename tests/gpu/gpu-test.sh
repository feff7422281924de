#!/bin/bash
# gpu-test.sh - `make gpu-test`: every sample in samples/ through the whole
# gpureduce pipeline on a GPU machine, with a PASS/FAIL table at the end.
#
# For each sample (samples/*/sample.yaml, or the ones named on the command
# line), in its own work dir ${GPU_TEST_OUT:-$BUILD/gpu-test}/NAME:
#   build      the sample's `build:` step, run in the sample dir; all builds
#              start in the background at once (the PyTorch extension takes
#              ~70 s) while the quick samples are tested      -> build.log
#   capture    gpureduce capture -o trace.bin -- bash -c "$RUN" in the sample
#              dir; the fault in the summary line (or `show --fault`) must be
#              one of expect.errors in a kernel whose name contains
#              expect.kernel (case-insensitive); flaky samples get up to
#              GPU_TEST_FLAKY_TRIES runs to fault            -> capture-N.log
#              a multi-process sample (processes: N > 1, e.g. torchrun)
#              is captured with -o run/ instead; trace.bin links to the
#              trace run/index.yaml names as the first fault, the index
#              must list N processes or more and exactly one fault
#   replay     gpureduce replay trace.bin must fault the same way
#                                                             -> replay.log
#   shrink     gpureduce shrink trace.bin -o shrink/repro.cu [-j GPU_TEST_JOBS] --quiet
#              (on N GPUs: the table says "K GPUs" beside the launches, and a
#              line under it how many GPUs shrink used at most)
#              (--time-limit a little under the step's time) -> shrink.log
#              shrink builds and runs repro.cu itself: its count and the
#              placement that reproduced (repro.yaml: repro_cu, placement)
#              go in the table's "shrink's repro.cu" column, beside this
#              script's own runs, so the table shows whether they agree
#   repro      nvcc -o repro repro.cu -lcuda, then run it 5 times: a run
#              counts when it exits 1 and prints an expected error name
#                                        -> nvcc-repro.log, repro-run-N.log
#   verify     gpureduce verify shrink/repro.cu -n 5         -> verify.log
#   root cause only for samples with expect.root_kernel (capture_args:
#              --tensors): shrink also gets --root-cause (each of its two
#              reductions half the time limit); shrink/repro-root.cu is built
#              and run 5 times: a run counts when it exits 1 with an expected
#              error in a kernel containing expect.root_kernel; all 5 must
#              -> "root cause" column (last)    -> nvcc-root.log, root-run-N.log
# A sample PASSes when every step did what it should (all 5 repro runs
# fault); a flaky sample (expect.flaky: true) PASSes when the capture
# faulted as expected, shrink emitted a repro and that repro faulted at
# least once (it gets up to GPU_TEST_FLAKY_MAX_RUNS runs to do so); its
# replay and verify are reported, not required.
#
# Never stops early: a failing step marks its cell FAIL and the suite goes
# on.  Every log is kept; failures print their tails.  A global deadline
# (GPU_TEST_DEADLINE seconds, default 900; one H200 run spent 426 s on the
# first 14 of 15 samples, and torchvision-long alone needs about 130 s)
# caps every step's time limit so
# the run always ends in time; steps with no time left are skipped (FAIL).
# GPU_TEST_SHIFT=1 adds, after the replay, the shifted placement mode
# (GPUREDUCE_SHIFT=1: no buffer at its captured address or offsets, so a
# pointer left unrelocated cannot pass by luck): a replay that must fault
# the same way, and a shrink (half the shrink step's time limit, its own
# repro.cu check included) that must emit a repro -> shift-replay.log,
# shift-shrink.log; the "shift" column; a failure fails the sample.
# Exit status: 0 if every sample passed, 1 otherwise, 2 if the suite could
# not start (no build/gpureduce or build/sampleinfo).
#
# Usage: tests/gpu/gpu-test.sh [SAMPLE...]     (BUILD and CUDA from make)
# Env:   GPU_TEST_OUT, GPU_TEST_DEADLINE (900), GPU_TEST_JOBS (shrink's default),
#        GPU_TEST_FLAKY_TRIES (4), GPU_TEST_REPRO_RUNS (5),
#        GPU_TEST_FLAKY_MAX_RUNS (15), GPU_TEST_SHIFT (0)
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

OUT=${GPU_TEST_OUT:-$BUILD/gpu-test}
case $OUT in /*) ;; *) OUT=$GR_ROOT/$OUT ;; esac
DEADLINE=${GPU_TEST_DEADLINE:-900}
JOBS=${GPU_TEST_JOBS:-}
TRIES=${GPU_TEST_FLAKY_TRIES:-4}
RUNS=${GPU_TEST_REPRO_RUNS:-5}
FLAKY_MAX_RUNS=${GPU_TEST_FLAKY_MAX_RUNS:-15}

gr_deadline_set "$DEADLINE"
T0=$(now)
log "gpu-test: gpureduce=$GR out=$OUT deadline=${DEADLINE}s"
if [ ! -x "$GR" ]; then
	echo "gpu-test: $GR is missing: run make first"
	echo "0 passed, 1 failed"
	exit 2
fi
if ! need_sampleinfo; then
	echo "0 passed, 1 failed"
	exit 2
fi
mkdir -p "$OUT" || { echo "gpu-test: cannot create $OUT"; echo "0 passed, 1 failed"; exit 2; }
{
	nvidia-smi -L
	"$NVCC" --version | tail -n 1
	echo "python3: $(command -v python3)"
	"$GR" --version
} 2>&1 | sed 's/^/  /'

mapfile -t DIRS < <(list_samples "$@")
if [ ${#DIRS[@]} -eq 0 ]; then
	echo "gpu-test: no samples found under $GR_SAMPLES"
	echo "0 passed, 1 failed"
	exit 2
fi
log "samples: $(for d in "${DIRS[@]}"; do printf '%s ' "$(basename "$d")"; done)"

# ---- phase 1: every build step in the background -------------------------
declare -A BPID=()
for dir in "${DIRS[@]}"; do
	n=$(basename "$dir")
	w=$OUT/$n
	rm -rf -- "$w"
	mkdir -p "$w"
	[ -f "$dir/sample.yaml" ] || continue
	load_sample "$dir/sample.yaml" || continue
	[ -n "$BUILD_CMD" ] || continue
	log "build $n in the background: $BUILD_CMD"
	( run_step "$dir" "$w/build.log" "$(gr_step_timeout 300)" bash -c "$BUILD_CMD"
	  exit "$STEP_RC" ) &
	BPID[$n]=$!
done

# ---- phase 2: the pipeline, one sample at a time -------------------------
TABLE=$OUT/summary.table
SHRINK_GPUS=1            # the most GPUs one sample's shrink used
echo "sample|launches|fault (error, kernel)|replay|shrink|shrink's repro.cu|repro runs|verify|capture s|replay s|shrink s|result|root cause|shift" >"$TABLE"
PASSED=0
FAILED=0
FAIL_REPORT=$OUT/failures.txt
: >"$FAIL_REPORT"
: >"$OUT/trace-sizes.txt"

# shift_steps NAME WORKDIR: GPU_TEST_SHIFT=1's replay and shrink in the
# shifted placement mode; sets c_shift, and ok/WHY on a failure.
shift_steps() {
	local n=$1 w=$2 rc t
	local g
	log "$n: shifted replay"
	# the guards shrink tries when layout placement is off, in its order: a
	# fault that lands before a buffer (an index wrapped negative) needs no
	# end guard but an unmapped range below, which start or none placement gives
	for g in end start none; do
		run_step "$GR_ROOT" "$w/shift-replay.log" "$(gr_step_timeout 120)" env GPUREDUCE_SHIFT=1 "$GR" replay --guard=$g "$w/trace.bin"
		rc=$STEP_RC
		parse_replay "$w/shift-replay.log"
		[ "$rc" -eq 1 ] && break
	done
	if [ "$rc" -eq 1 ] && [ "$REP_WORD" = fault ] && err_in_list "$REP_ERR" "$EXPECT_ERRORS" &&
	   kernel_matches "$REP_KERNEL" "$EXPECT_KERNEL"; then
		c_shift="replay $(short_err "$REP_ERR")"
		[ "$g" = end ] || c_shift="$c_shift (guard=$g)"
	else
		c_shift="replay FAIL(exit $rc)"
		[ "$FLAKY" != 1 ] && { ok=0; WHY="$WHY; shifted replay: $(grep -a '^replay:' "$w/shift-replay.log" | head -n 1) (exit $rc)"; FAIL_LOGS="$FAIL_LOGS shift-replay.log"; }
	fi
	t=$(gr_step_timeout 90)
	mkdir -p "$w/shift"
	run_step "$GR_ROOT" "$w/shift-shrink.log" "$t" env GPUREDUCE_SHIFT=1 \
		"$GR" shrink "$w/trace.bin" -o "$w/shift/repro.cu" ${JOBS:+-j "$JOBS"} --quiet --time-limit="$(shrink_time_limit "$t")"
	rc=$STEP_RC
	if [ "$rc" -eq 0 ] && [ -s "$w/shift/repro.cu" ]; then
		c_shift="$c_shift, shrink ok $(sed -n 's|^  repro_cu: *\([0-9][0-9]*/[0-9][0-9]*\).*|\1|p' "$w/shift/repro.yaml" | head -n 1)"
	else
		c_shift="$c_shift, shrink FAIL(exit $rc)"
		ok=0
		WHY="$WHY; shifted shrink: exit $rc"
		FAIL_LOGS="$FAIL_LOGS shift-shrink.log"
	fi
	log "$n: shift -> $c_shift"
}

# test_sample DIR: runs every step, sets the c_* cells, WHY (reasons) and
# FAIL_LOGS (log names to show).  Returns 0 for PASS.
test_sample() {
	local dir=$1 n w t g rc try tries caplog ferr fk k runs max rl pat ok=1
	FLAKY=0
	n=$(basename "$dir")
	w=$OUT/$n
	c_launch=-; c_fault=-; c_replay=-; c_shrink=-; c_shrepro=-; c_repro=-; c_verify=-; c_shift=-
	c_cap_s=-; c_rep_s=-; c_shr_s=-; c_root=-
	WHY=; FAIL_LOGS=

	if [ ! -f "$dir/sample.yaml" ]; then
		WHY="no $dir/sample.yaml"
		return 1
	fi
	if ! load_sample "$dir/sample.yaml"; then
		WHY="bad sample.yaml: $SAMPLE_ERR"
		return 1
	fi
	[ "$NAME" = "$n" ] || warn "$n: sample.yaml says name '$NAME'"
	log "$n: $STORY"
	log "$n: expect ${EXPECT_ERRORS// /|} in '${EXPECT_KERNEL}'$([ "$FLAKY" = 1 ] && echo ' (flaky)')"

	# build
	if [ -n "${BPID[$n]:-}" ]; then
		wait "${BPID[$n]}"
		rc=$?
		if [ "$rc" -ne 0 ]; then
			WHY="build failed (exit $rc)"
			FAIL_LOGS="build.log"
			return 1
		fi
		log "$n: build ok ($(sed -n 's/^(exit 0 after \(.*\))$/\1/p' "$w/build.log" | tail -n 1))"
	fi

	# a bug that never faults natively: the hunt pipeline instead (issue 28)
	if [ -n "$EXPECT_HUNT_KERNEL" ]; then
		hunt_sample "$dir" "$n" "$w"
		return $?
	fi

	# capture
	tries=1
	[ "$FLAKY" = 1 ] && tries=$TRIES
	caplog=
	for ((try = 1; try <= tries; try++)); do
		caplog=$w/capture-$try.log
		rm -rf "$w/trace.bin" "$w/run"
		t=$(gr_step_timeout "$TIMEOUT")
		log "$n: capture, try $try/$tries (limit ${t}s): $RUN"
		local out=$w/trace.bin
		[ "$PROCESSES" -gt 1 ] && out=$w/run/
		# shellcheck disable=SC2086 # capture_args: words
		run_step "$dir" "$caplog" "$t" "$GR" capture $CAPTURE_ARGS -o "$out" -- bash -c "$RUN"
		c_cap_s=$STEP_SECS
		[ "$PROCESSES" -gt 1 ] && pick_first_fault "$n" "$w"
		parse_capture "$caplog"
		log "$n: ${CAP_LINE:-no summary line (exit $STEP_RC)}"
		[ -n "$CAP_ERR" ] && break
		[ "$STEP_RC" -eq 124 ] && break
	done
	c_launch=${CAP_LAUNCHES:-?}
	# a sample that reports its live device memory (torchvision-long): the
	# trace size beside it, and where the bounded trace starts
	if grep -a -q 'live device memory:' "$caplog" && [ -s "$w/trace.bin" ]; then
		echo "$n: trace $(stat -c %s "$w/trace.bin") bytes$(grep -a '^gpureduce: captured' "$caplog" |
			tail -n 1 | sed -n 's/.*; from \(checkpoint [0-9]* at launch #[0-9]* ([^)]*)\).*/, from \1/p'); the program's $(
			grep -a -o 'live device memory: .*' "$caplog" | tail -n 1)" >>"$OUT/trace-sizes.txt"
	fi
	if [ "$PROCESSES" -gt 1 ] && { [ "${IDX_TRACES:-0}" -lt "$PROCESSES" ] || [ "${IDX_FAULTS:-0}" -ne 1 ]; }; then
		ok=0
		WHY="$WHY; run/index.yaml lists ${IDX_TRACES:-0} processes (want $PROCESSES or more) and ${IDX_FAULTS:-0} faults (want 1)"
		FAIL_LOGS="$FAIL_LOGS ${caplog##*/}"
	fi
	if [ ! -s "$w/trace.bin" ]; then
		WHY="capture wrote no trace.bin (exit $STEP_RC)"
		FAIL_LOGS=${caplog##*/}
		return 1
	fi
	show_fault "$w/trace.bin" "$w/show-fault.log"
	ferr=${CAP_ERR:-$SHOW_ERR}
	fk=${CAP_KERNEL:-$SHOW_KERNEL}
	[ -n "$CAP_LINE" ] || WHY="$WHY; capture printed no summary line"
	if [ -n "$ferr" ]; then
		c_fault="$(short_err "$ferr") $(short_kernel "$fk")"
		[ "$FLAKY" = 1 ] && [ "$tries" -gt 1 ] && c_fault="$c_fault (try $try)"
	else
		c_fault="none"
	fi
	# a fault in a CUDA graph launch: capture cannot tell which node
	# faulted (replay does; its kernel is checked below)
	local graph=0
	case $CAP_LINE in *"in a kernel of a CUDA graph"*) graph=1; c_fault="$(short_err "$ferr") (graph)" ;; esac
	if ! err_in_list "$ferr" "$EXPECT_ERRORS" || { [ $graph = 0 ] && ! kernel_matches "$fk" "$EXPECT_KERNEL"; }; then
		ok=0
		WHY="$WHY; capture: got '${ferr:-no fault}' in '${fk}', want ${EXPECT_ERRORS// /|} in '${EXPECT_KERNEL}'"
		FAIL_LOGS="$FAIL_LOGS ${caplog##*/} show-fault.log"
	fi

	# replay
	log "$n: replay"
	run_step "$GR_ROOT" "$w/replay.log" "$(gr_step_timeout 120)" "$GR" replay "$w/trace.bin"
	rc=$STEP_RC
	c_rep_s=$STEP_SECS
	parse_replay "$w/replay.log"
	case $REP_WORD in
	fault) c_replay=$(short_err "$REP_ERR") ;;
	clean) c_replay=clean ;;
	"could not") c_replay="could not" ;;
	*) c_replay="FAIL(exit $rc)" ;;
	esac
	if [ "$rc" -eq 1 ] && [ "$REP_WORD" = fault ] && err_in_list "$REP_ERR" "$EXPECT_ERRORS" &&
	   kernel_matches "$REP_KERNEL" "$EXPECT_KERNEL"; then
		:
	else
		[ "$REP_WORD" = fault ] && ! kernel_matches "$REP_KERNEL" "$EXPECT_KERNEL" &&
			c_replay="$c_replay in $(short_kernel "$REP_KERNEL")"
		if [ "$FLAKY" != 1 ]; then
			ok=0
			WHY="$WHY; replay: $(grep -a '^replay:' "$w/replay.log" | tail -n 1 || true) (exit $rc)"
			FAIL_LOGS="$FAIL_LOGS replay.log"
		fi
	fi
	log "$n: replay -> $c_replay (${c_rep_s}s)"
	[ "${GPU_TEST_SHIFT:-0}" = 1 ] && shift_steps "$n" "$w"

	# shrink
	# --time-limit: shrink keeps its best reduction so far when time runs
	# out, so a slow shrink still emits a repro before our timeout hits
	t=$(gr_step_timeout 180)
	log "$n: shrink -j ${JOBS:-default} (limit ${t}s)"
	mkdir -p "$w/shrink"
	local tl
	tl=$(shrink_time_limit "$t")
	[ -n "$EXPECT_ROOT_KERNEL" ] && tl=$(( tl / 2 > 0 ? tl / 2 : 1 ))   # two reductions
	run_step "$GR_ROOT" "$w/shrink.log" "$t" \
		"$GR" shrink "$w/trace.bin" -o "$w/shrink/repro.cu" ${JOBS:+-j "$JOBS"} --quiet --log="$w/shrink/jobs.log" \
		--time-limit="$tl" ${EXPECT_ROOT_KERNEL:+--root-cause}
	rc=$STEP_RC
	c_shr_s=$STEP_SECS
	parse_shrink "$w/shrink.log"
	if [ "$rc" -eq 0 ] && [ -s "$w/shrink/repro.cu" ]; then
		c_shrink="${SHR_AFTER:-?} launch(es)"
		grep -q 'time limit' "$w/shrink/repro.yaml" 2>/dev/null && c_shrink="$c_shrink (time limit)"
	else
		c_shrink="FAIL(exit $rc)"
		ok=0
		WHY="$WHY; shrink: exit $rc${SHR_LINE:+, $SHR_LINE}"
		FAIL_LOGS="$FAIL_LOGS shrink.log"
	fi
	if [ -s "$w/shrink/repro.yaml" ]; then
		c_shrepro="$(sed -n 's|^  repro_cu: *\([0-9][0-9]*/[0-9][0-9]*\).*|\1|p; s|^  repro_cu: *\(not built\).*|\1|p' "$w/shrink/repro.yaml" | head -n 1) $(sed -n 's/^  placement: *//p' "$w/shrink/repro.yaml" | head -n 1)"
	fi
	g=$(yaml_key gpus "$w/shrink/repro.yaml")
	[ "$g" != - ] && [ "$g" -gt "$SHRINK_GPUS" ] && SHRINK_GPUS=$g
	[ "$g" != - ] && [ "$g" -gt 1 ] && c_shrink="$c_shrink, $g GPUs"
	log "$n: shrink -> $c_shrink (${c_shr_s}s, on ${g} GPU(s)) ${SHR_LINE}; shrink's own repro.cu runs: $c_shrepro"
	if [ ! -s "$w/shrink/repro.cu" ]; then
		WHY="$WHY; no shrink/repro.cu, so no repro runs"
		return 1
	fi

	# the repro, built as documented and run RUNS times
	if build_repro "$w/shrink/repro.cu" "$w/shrink/repro" "$w/nvcc-repro.log"; then
		pat=${EXPECT_ERRORS// /|}
		k=0; runs=0; max=$RUNS
		while [ "$runs" -lt "$max" ]; do
			runs=$((runs + 1))
			rl=$w/repro-run-$runs.log
			run_step "$w/shrink" "$rl" "$(gr_step_timeout 60)" ./repro
			if [ "$STEP_RC" -eq 1 ] && grep -a -q -E "$pat" "$rl"; then
				k=$((k + 1))
			fi
			if [ "$runs" -eq 1 ]; then
				log "$n: repro run 1: exit $STEP_RC: $(grep -a -v '^[+(]' "$rl" | tail -n 1)"
			fi
			[ "$(gr_time_left)" -le 10 ] && break
			if [ "$runs" -eq "$RUNS" ] && [ "$FLAKY" = 1 ] && [ "$k" -eq 0 ]; then
				max=$FLAKY_MAX_RUNS
			fi
		done
		c_repro="$k/$runs"
		if [ "$FLAKY" = 1 ]; then
			[ "$k" -ge 1 ] || { ok=0; WHY="$WHY; repro never faulted in $runs runs"; FAIL_LOGS="$FAIL_LOGS repro-run-1.log"; }
		elif [ "$k" -ne "$runs" ] || [ "$runs" -lt "$RUNS" ]; then
			ok=0
			WHY="$WHY; repro faulted as expected in $k/$runs runs"
			FAIL_LOGS="$FAIL_LOGS repro-run-1.log"
		fi
	else
		c_repro="FAIL(nvcc)"
		ok=0
		WHY="$WHY; nvcc could not build repro.cu"
		FAIL_LOGS="$FAIL_LOGS nvcc-repro.log"
	fi
	log "$n: repro -> $c_repro"

	# verify
	log "$n: verify -n $RUNS"
	run_step "$GR_ROOT" "$w/verify.log" "$(gr_step_timeout 180)" \
		"$GR" verify "$w/shrink/repro.cu" -n "$RUNS"
	rc=$STEP_RC
	parse_verify "$w/verify.log"
	if [ -n "$VER_K" ]; then
		c_verify="$VER_K/$VER_N"
	else
		c_verify="FAIL(exit $rc)"
	fi
	if [ "$FLAKY" != 1 ] && [ "$rc" -ne 0 ]; then
		ok=0
		WHY="$WHY; verify: $(grep -a '^verify:' "$w/verify.log" | tail -n 1 || true) (exit $rc)"
		FAIL_LOGS="$FAIL_LOGS verify.log"
	fi
	log "$n: verify -> $c_verify"

	# report (issue 24): report.md for every sample, reported, not required
	run_step "$GR_ROOT" "$w/report.log" "$(gr_step_timeout 240)" "$GR" report --runs=2 "$w/shrink"
	log "$n: report -> exit $STEP_RC: $(grep -c '^## ' "$w/shrink/report.md" 2>/dev/null || echo 0) sections;" \
		"$(grep -a -m1 '^Origin:\|^Not captured\.' "$w/shrink/report.md" 2>/dev/null || echo 'no kernel source')"

	[ -n "$EXPECT_ROOT_KERNEL" ] && ! root_cause_runs "$n" "$w" && ok=0
	[ "$ok" -eq 1 ]
}

# pick_first_fault NAME WORKDIR: a multi-process capture into WORKDIR/run/:
# trace.bin -> the trace run/index.yaml names as the first fault; sets
# IDX_TRACES (processes listed) and IDX_FAULTS (those that faulted).
pick_first_fault() {
	local n=$1 w=$2 ff idx=$2/run/index.yaml
	ff=$(sed -n 's/^first_fault: *//p' "$idx" 2>/dev/null | tr -d "\"'" | head -n 1)
	IDX_TRACES=$(grep -c '^- trace:' "$idx" 2>/dev/null)
	IDX_FAULTS=$(grep -c '^  end: faulted' "$idx" 2>/dev/null)
	[ -n "$ff" ] && [ -s "$w/run/$ff" ] && ln -sf "run/$ff" "$w/trace.bin"
	log "$n: run/index.yaml: ${IDX_TRACES:-0} processes, ${IDX_FAULTS:-0} faulted, first: ${ff:-none}"
}

# root_cause_runs NAME WORKDIR: build shrink/repro-root.cu and run it RUNS
# times; each run must exit 1 with an expected error in a kernel containing
# expect.root_kernel.  Sets c_root; 0 when all did.
root_cause_runs() {
	local n=$1 w=$2 k=0 runs=0 rl pat=${EXPECT_ERRORS// /|}
	if [ ! -s "$w/shrink/repro-root.cu" ]; then
		c_root="FAIL(none)"
		WHY="$WHY; shrink --root-cause wrote no repro-root.cu ($(grep -a 'root' "$w/shrink.log" | tail -n 1))"
		FAIL_LOGS="$FAIL_LOGS shrink.log"
		return 1
	fi
	log "$n: $(grep -a '^shrink --root-cause:' "$w/shrink.log" | tail -n 1)"
	if ! build_repro "$w/shrink/repro-root.cu" "$w/shrink/repro-root" "$w/nvcc-root.log"; then
		c_root="FAIL(nvcc)"
		WHY="$WHY; nvcc could not build repro-root.cu"
		FAIL_LOGS="$FAIL_LOGS nvcc-root.log"
		return 1
	fi
	while [ "$runs" -lt "$RUNS" ]; do
		runs=$((runs + 1))
		rl=$w/root-run-$runs.log
		run_step "$w/shrink" "$rl" "$(gr_step_timeout 60)" ./repro-root
		if [ "$STEP_RC" -eq 1 ] && grep -a -E "$pat" "$rl" | grep -a -q -i -F "$EXPECT_ROOT_KERNEL"; then
			k=$((k + 1))
		fi
		[ "$runs" -eq 1 ] && log "$n: repro-root run 1: exit $STEP_RC: $(grep -a -v '^[+(]' "$rl" | tail -n 1)"
		[ "$(gr_time_left)" -le 10 ] && break
	done
	c_root="$k/$runs in ${EXPECT_ROOT_KERNEL}"
	log "$n: repro-root -> $c_root"
	if [ "$k" -ne "$runs" ] || [ "$runs" -lt "$RUNS" ]; then
		WHY="$WHY; repro-root.cu faulted in ${EXPECT_ROOT_KERNEL} in $k/$runs runs"
		FAIL_LOGS="$FAIL_LOGS root-run-1.log"
		return 1
	fi
	return 0
}

# hunt_sample DIR NAME WORKDIR: a sample whose bug never faults natively
# (expect.hunt_kernel, issue 28).  The plain run must exit 0; `gpureduce
# hunt -- RUN` must exit 1 with its first finding in expect.hunt_kernel and
# write repro.cu, which must fault there in RUNS of RUNS runs; with
# clean_env (the variant without the bug) hunt must exit 0 (clean).  Sets
# the c_* cells (replay: the native run; fault: hunt's first finding;
# shrink: its repro line; repro runs; verify: the clean variant's hunt).
hunt_sample() {
	local dir=$1 n=$2 w=$3 t ok=1 k=0 runs=0 rl first pat=${EXPECT_ERRORS// /|}
	t=$(gr_step_timeout "$TIMEOUT")
	log "$n: native run (limit ${t}s): $RUN"
	run_step "$dir" "$w/native.log" "$t" bash -c "$RUN"
	c_replay="native exit $STEP_RC"
	c_cap_s=$STEP_SECS
	log "$n: native -> exit $STEP_RC: $(grep -a -v '^[+(]' "$w/native.log" | tail -n 1)"
	if [ "$STEP_RC" -ne 0 ]; then
		ok=0
		WHY="$WHY; the native run exited $STEP_RC (the bug must not fault natively)"
		FAIL_LOGS="$FAIL_LOGS native.log"
	fi
	t=$(gr_step_timeout $((TIMEOUT * 4)))
	log "$n: hunt (limit ${t}s)"
	run_step "$dir" "$w/hunt.log" "$t" "$GR" hunt -j 4 --time-limit="$(shrink_time_limit "$t")" \
		-o "$w/hunt" -- bash -c "$RUN"
	c_shr_s=$STEP_SECS
	first=$(grep -a -m1 '^finding 1:' "$w/hunt.log" || true)
	c_fault="hunt exit $STEP_RC: $(printf '%s' "$first" | sed 's/ faulted under.*//' | cut -c1-90)"
	log "$n: hunt -> exit $STEP_RC in ${STEP_SECS}s; $first"
	if [ "$STEP_RC" -ne 1 ] || ! printf '%s' "$first" | grep -q -F "$EXPECT_HUNT_KERNEL"; then
		ok=0
		WHY="$WHY; hunt exited $STEP_RC, first finding '${first:-none}' (expected one in $EXPECT_HUNT_KERNEL)"
		FAIL_LOGS="$FAIL_LOGS hunt.log"
	fi
	c_shrink=$(grep -a '^hunt: repro of finding 1' "$w/hunt.log" | sed 's/^[^(]*(//; s/)$//' | cut -c1-60)
	[ -n "$c_shrink" ] || c_shrink=FAIL
	if [ ! -s "$w/hunt/repro.cu" ]; then
		ok=0
		c_repro="FAIL(none)"
		WHY="$WHY; hunt wrote no repro.cu"
	elif ! build_repro "$w/hunt/repro.cu" "$w/hunt/repro" "$w/nvcc-hunt.log"; then
		ok=0
		c_repro="FAIL(nvcc)"
		WHY="$WHY; nvcc could not build hunt's repro.cu"
		FAIL_LOGS="$FAIL_LOGS nvcc-hunt.log"
	else
		while [ "$runs" -lt "$RUNS" ]; do
			runs=$((runs + 1))
			rl=$w/hunt-run-$runs.log
			run_step "$w/hunt" "$rl" "$(gr_step_timeout 60)" ./repro
			if [ "$STEP_RC" -eq 1 ] && grep -a -E "$pat" "$rl" | grep -a -q -i -F "$EXPECT_HUNT_KERNEL"; then
				k=$((k + 1))
			fi
			[ "$runs" -eq 1 ] && log "$n: hunt repro run 1: exit $STEP_RC: $(grep -a -v '^[+(]' "$rl" | tail -n 1)"
			[ "$(gr_time_left)" -le 10 ] && break
		done
		c_repro="$k/$runs"
		if [ "$k" -ne "$runs" ] || [ "$runs" -lt "$RUNS" ]; then
			ok=0
			WHY="$WHY; hunt's repro.cu faulted in $EXPECT_HUNT_KERNEL in $k/$runs runs"
			FAIL_LOGS="$FAIL_LOGS hunt-run-1.log"
		fi
	fi
	if [ -n "$CLEAN_ENV" ]; then
		t=$(gr_step_timeout $((TIMEOUT * 2)))
		log "$n: hunt of the clean variant ($CLEAN_ENV)"
		# shellcheck disable=SC2086 # clean_env: VAR=VALUE words
		run_step "$dir" "$w/hunt-clean.log" "$t" env $CLEAN_ENV "$GR" hunt --no-shrink -o "$w/hunt-clean" \
			-- bash -c "$RUN"
		c_verify="clean: exit $STEP_RC"
		log "$n: clean variant -> exit $STEP_RC: $(grep -a '^finding\|clean (no launch' "$w/hunt-clean.log" | head -n 2 | tr '\n' ' ')"
		if [ "$STEP_RC" -ne 0 ]; then
			ok=0
			WHY="$WHY; the clean variant did not hunt clean (exit $STEP_RC)"
			FAIL_LOGS="$FAIL_LOGS hunt-clean.log"
		fi
	fi
	[ "$ok" -eq 1 ]
}

for dir in "${DIRS[@]}"; do
	n=$(basename "$dir")
	if test_sample "$dir"; then
		result=PASS
		PASSED=$((PASSED + 1))
	else
		result=FAIL
		FAILED=$((FAILED + 1))
		{
			echo "---- $n: FAIL: ${WHY#; }"
			for f in $FAIL_LOGS; do tail_log "$OUT/$n/$f" 20; done
		} >>"$FAIL_REPORT"
	fi
	[ "${FLAKY:-0}" = 1 ] && [ "$result" = PASS ] && result="PASS (flaky, ${c_repro} faulted)"
	log "=== $n: $result"
	echo "$n|$c_launch|$c_fault|$c_replay|$c_shrink|$c_shrepro|$c_repro|$c_verify|$c_cap_s|$c_rep_s|$c_shr_s|$result|$c_root|$c_shift" >>"$TABLE"
done

echo
echo "gpu-test: $(secs_since "$T0")s in all; logs under $OUT"
print_table "$TABLE" | tee "$OUT/summary.txt"
# issue 25: how many GPUs shrink's workers were spread over (repro.yaml gpus:)
echo "shrink's workers used up to $SHRINK_GPUS GPU(s) of $(nvidia-smi -L 2>/dev/null | grep -c '^GPU ') on this machine" |
	tee -a "$OUT/summary.txt"
if [ -s "$OUT/trace-sizes.txt" ]; then
	echo
	echo "Trace size beside the model's live device memory:"
	tee -a "$OUT/summary.txt" <"$OUT/trace-sizes.txt"
fi
if [ -s "$FAIL_REPORT" ]; then
	echo
	echo "Failures:"
	cat "$FAIL_REPORT"
fi
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
