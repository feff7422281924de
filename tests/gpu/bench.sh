#!/bin/bash
# bench.sh - `make bench` on a GPU machine: the two numbers gpureduce is
# judged by, printed as tables.
#
# 1. Capture overhead, on samples/torch-extension (a PyTorch training loop
#    with a custom op, several thousand launches): whole-process wall time
#    of `CUDA_LAUNCH_BLOCKING=1 python3 train.py` against
#    `gpureduce capture -o T.bin -- python3 train.py`, BENCH_ROUNDS (3)
#    rounds interleaved, medians and their ratio (goal: <= 1.15x), and the
#    trace's size against the bytes that entered the GPU (as far as the
#    capture summary line or `gpureduce show` say).
# 2. Shrink speed: for each sample's trace (the one gpu-test.sh left in
#    ${GPU_TEST_OUT:-$BUILD/gpu-test}/NAME/trace.bin, else a fresh capture),
#    `gpureduce shrink` (default strategy) against
#    `gpureduce shrink --strategy=baseline` (fresh process per candidate,
#    plain ddmin over launches, then the same data, grid and scalar
#    phases, without compute-sanitizer work): seconds, candidates tested
#    (repro.yaml `candidates:` or the shrink's last line), launches left,
#    and the speed-up.  A baseline
#    that runs out of its time share is reported as a lower bound (">40").
#
# 3. Shrink phases: each phase's seconds and share (repro.yaml) of the
#    shrinks above and of every shrink gpu-test left in GPU_TEST_OUT, with
#    their median and max (issue 26: median < 5 s, none > 10 s).
#
# The goals are reported, not asserted: a bench passes when it ran and
# produced numbers.  Ends with "N passed, N failed" (one bench for the
# overhead, one per sample for shrink speed); exit 0 iff none failed.
# A global deadline (BENCH_DEADLINE seconds, default 560: one device call
# may run 600 s) caps every step.
#
# Usage: tests/gpu/bench.sh [SAMPLE...]   (samples for part 2; default
#        torch-extension and offset-overflow)
# Env:   BENCH_OUT ($BUILD/bench), GPU_TEST_OUT, BENCH_DEADLINE (560),
#        BENCH_ROUNDS (3), BENCH_SHRINK_TIMEOUT (300, per baseline shrink),
#        BENCH_RESERVE (60: seconds kept back for each later sample),
#        BENCH_SKIP_OVERHEAD=1 (part 2 only)
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

OUT=${BENCH_OUT:-$BUILD/bench}
case $OUT in /*) ;; *) OUT=$GR_ROOT/$OUT ;; esac
GT=${GPU_TEST_OUT:-$BUILD/gpu-test}
case $GT in /*) ;; *) GT=$GR_ROOT/$GT ;; esac
DEADLINE=${BENCH_DEADLINE:-560}
ROUNDS=${BENCH_ROUNDS:-3}
SHRINK_CAP=${BENCH_SHRINK_TIMEOUT:-300}
RESERVE=${BENCH_RESERVE:-60}

gr_deadline_set "$DEADLINE"
T0=$(now)
log "bench: gpureduce=$GR out=$OUT deadline=${DEADLINE}s"
if [ ! -x "$GR" ]; then
	echo "bench: $GR is missing: run make first"
	echo "0 passed, 1 failed"
	exit 2
fi
if ! need_sampleinfo; then
	echo "0 passed, 1 failed"
	exit 2
fi
rm -rf -- "$OUT"
mkdir -p "$OUT" || { echo "bench: cannot create $OUT"; echo "0 passed, 1 failed"; exit 2; }
PASSED=0
FAILED=0
OVER=skipped
NOTES=$OUT/notes.txt
: >"$NOTES"

# gpu_bytes TEXT: the bytes that entered the GPU according to TEXT: the
# capture summary's "(12.5 MiB entered the GPU)", else the first size in a
# comma-separated part that talks about copies/uploads/h2d.  Empty if none.
gpu_bytes() {
	local part
	part=$(printf '%s\n' "$1" | sed -n 's/.*(\([0-9.]* *[KMGT]*i*B\) entered the GPU).*/\1/p' | head -n 1)
	[ -n "$part" ] || part=$(printf '%s\n' "$1" | tr ',;' '\n\n' |
		grep -i -E 'cop(y|ied)|upload|h2d|htod|to (the )?(gpu|device)|entered|memcpy' | head -n 1)
	printf '%s\n' "$part" | awk '{
		if (!match($0, /[0-9]+(\.[0-9]+)? ?(GiB|MiB|KiB|GB|MB|KB|bytes|B)/)) {
			if (match($0, /[0-9]+$/)) print substr($0, RSTART, RLENGTH)
			exit
		}
		s = substr($0, RSTART, RLENGTH); v = s + 0; u = s; sub(/^[0-9.]+ ?/, "", u)
		m = 1
		if (u == "KiB") m = 1024; else if (u == "MiB") m = 1048576; else if (u == "GiB") m = 1073741824
		else if (u == "KB") m = 1e3; else if (u == "MB") m = 1e6; else if (u == "GB") m = 1e9
		printf "%.0f\n", v * m }'
}

# phase_shares NAME REPRO.YAML: one line, each phase's seconds and share of
# the shrink's total (repro.yaml's phases:, seconds:), what no phase
# accounts for (start-up, writing, the diagnosis) as "other", and the
# compute-sanitizer seconds (issue 26: where a one-launch shrink's time goes),
# with each phase's replays that faulted (each costs a worker's new context)
phase_shares() {
	awk -v n="$1" '
		/^seconds:/ { total = $2 }
		/^sanitizer_seconds:/ { san = $2 }
		/^- name:/ { name = $3; fr = ""; next }
		/^  faulted_replays:/ && name != "" { fr = $2 }
		/^  seconds:/ && name != "" { ph[++k] = name; sec[k] = $2; flt[k] = fr; sum += $2; name = "" }
		END {
			if (!total) exit
			line = n ": " total " s:"
			for (i = 1; i <= k; i++)
				line = line sprintf(" %s %.2f (%.0f%%%s)", ph[i], sec[i], 100 * sec[i] / total,
						    flt[i] != "" ? ", " flt[i] " faulted" : "")
			line = line sprintf(" other %.2f (%.0f%%); sanitizer %.2f s", total - sum, 100 * (total - sum) / total, san)
			print line
		}' "$2"
}

mib() { awk -v b="$1" 'BEGIN { if (b == "") print "n/a"; else printf "%.1f MiB\n", b / 1048576 }'; }

# ---- 1. capture overhead ------------------------------------------------
bench_overhead() {
	local dir=$GR_ROOT/samples/torch-extension w=$OUT/overhead i t prc crc
	local plain=() cap=() ok=1 last= size gb line tab=$OUT/overhead.table
	mkdir -p "$w"
	if ! load_sample "$dir/sample.yaml"; then
		echo "overhead: bad sample: $SAMPLE_ERR" >>"$NOTES"
		return 1
	fi
	if [ -n "$BUILD_CMD" ]; then
		log "overhead: build step (cached after the first build): $BUILD_CMD"
		if ! run_step "$dir" "$w/build.log" "$(gr_step_timeout 300)" bash -c "$BUILD_CMD"; then
			echo "overhead: build failed (exit $STEP_RC)" >>"$NOTES"
			tail_log "$w/build.log" >>"$NOTES"
			return 1
		fi
	fi
	echo "round|plain s (CUDA_LAUNCH_BLOCKING=1)|exit|capture s|exit|launches captured" >"$tab"
	for ((i = 1; i <= ROUNDS; i++)); do
		t=$(gr_step_timeout "$TIMEOUT")
		log "overhead: round $i/$ROUNDS plain (limit ${t}s)"
		run_step "$dir" "$w/plain-$i.log" "$t" env CUDA_LAUNCH_BLOCKING=1 bash -c "$RUN"
		prc=$STEP_RC
		[ "$prc" -ne 124 ] && plain+=("$STEP_SECS")
		local ps=$STEP_SECS
		t=$(gr_step_timeout "$TIMEOUT")
		log "overhead: round $i/$ROUNDS capture (limit ${t}s)"
		run_step "$dir" "$w/capture-$i.log" "$t" "$GR" capture -o "$w/trace-$i.bin" -- bash -c "$RUN"
		crc=$STEP_RC
		parse_capture "$w/capture-$i.log"
		if [ "$crc" -ne 124 ] && [ -n "$CAP_LINE" ]; then
			cap+=("$STEP_SECS")
			last=$i
		fi
		log "overhead: round $i: plain ${ps}s (exit $prc), capture ${STEP_SECS}s (exit $crc)"
		echo "$i|$ps|$prc|$STEP_SECS|$crc|${CAP_LAUNCHES:-?}" >>"$tab"
		# the plain run must really have trained (not died at start-up)
		if ! grep -a -q 'epoch 2' "$w/plain-$i.log"; then
			ok=0
			echo "overhead: round $i: the plain run did not get through epoch 2" >>"$NOTES"
			tail_log "$w/plain-$i.log" >>"$NOTES"
		fi
		if [ -z "$CAP_LINE" ]; then
			ok=0
			echo "overhead: round $i: capture printed no summary line (exit $crc)" >>"$NOTES"
			tail_log "$w/capture-$i.log" >>"$NOTES"
		fi
	done
	print_table "$tab"
	local mp mc r
	mp=$(median "${plain[@]}")
	mc=$(median "${cap[@]}")
	r=$(ratio "$mc" "$mp")
	echo "capture overhead: median plain ${mp}s, median capture ${mc}s, ratio ${r}x (goal <= 1.15x: $(
		awk -v r="$r" 'BEGIN { if (r == "n/a") print "n/a"; else if (r <= 1.15) print "met"; else print "NOT met" }'))" |
		tee -a "$OUT/overhead.txt"
	[ ${#plain[@]} -eq "$ROUNDS" ] && [ ${#cap[@]} -eq "$ROUNDS" ] || ok=0
	if [ -n "$last" ]; then
		size=$(stat -c %s "$w/trace-$last.bin" 2>/dev/null)
		parse_capture "$w/capture-$last.log"
		line=$CAP_LINE
		gb=$(gpu_bytes "$line")
		if [ -z "$gb" ]; then
			run_step "$GR_ROOT" "$w/show.log" "$(gr_step_timeout 60)" "$GR" show "$w/trace-$last.bin"
			gb=$(gpu_bytes "$(grep -a -i -E '^[[:space:]]*[a-z_]*(cop|upload|h2d|to_device|bytes_in|memcpy)[a-z_]*:' "$w/show.log" | head -n 3 | tr '\n' ',')")
		fi
		{
			echo "capture summary: $line"
			echo "trace size: $(mib "$size") ($size bytes); bytes that entered the GPU: $(mib "$gb")$(
				[ -n "$gb" ] && echo "; trace/GPU-bytes ratio $(ratio "$size" "$gb")")"
		} | tee -a "$OUT/overhead.txt"
	fi
	[ "$ok" -eq 1 ]
}

if [ "${BENCH_SKIP_OVERHEAD:-0}" != 1 ]; then
	echo
	echo "== 1. capture overhead (samples/torch-extension)"
	if bench_overhead; then
		PASSED=$((PASSED + 1))
		OVER=PASS
	else
		FAILED=$((FAILED + 1))
		OVER=FAIL
	fi
	log "overhead bench: $OVER"
fi

# ---- 2. shrink speed ----------------------------------------------------
echo
echo "== 2. shrink speed: default vs --strategy=baseline"
STAB=$OUT/shrink.table
echo "sample|launches|default s|to 1 launch s|cands|-> launches|baseline s|to 1 launch s|cands|-> launches|speed-up|result" >"$STAB"
# The baseline now runs every phase with a fresh process per candidate and
# takes minutes (torch-extension: 255-266 s on the H200, 793 of its 834
# candidates in the data phase), so by default only the two samples the
# reducer's goals name run: torch-extension (the speed goal) and
# offset-overflow (a fault that needs ~214 earlier launches).  Name
# samples to bench others.
if [ $# -eq 0 ]; then
	set -- torch-extension offset-overflow
fi
mapfile -t DIRS < <(list_samples "$@")

# ensure_trace DIR W: sets TRACE to gpu-test's trace of the sample, or
# builds and captures one into W (flaky samples get up to 4 tries).
ensure_trace() {
	local dir=$1 w=$2 n try tries=1
	n=$(basename "$dir")
	TRACE=$GT/$n/trace.bin
	[ -s "$TRACE" ] && return 0
	TRACE=$w/trace.bin
	log "$n: no trace from gpu-test; capturing one"
	if [ -n "$BUILD_CMD" ] &&
	   ! run_step "$dir" "$w/build.log" "$(gr_step_timeout 300)" bash -c "$BUILD_CMD"; then
		return 1
	fi
	[ "$FLAKY" = 1 ] && tries=4
	for ((try = 1; try <= tries; try++)); do
		rm -f "$TRACE"
		run_step "$dir" "$w/capture.log" "$(gr_step_timeout "$TIMEOUT")" \
			"$GR" capture -o "$TRACE" -- bash -c "$RUN"
		parse_capture "$w/capture.log"
		[ -n "$CAP_ERR" ] && break
		[ "$STEP_RC" -eq 124 ] && break
	done
	[ -s "$TRACE" ]
}

remaining=${#DIRS[@]}
for dir in "${DIRS[@]}"; do
	n=$(basename "$dir")
	w=$OUT/shrink/$n
	mkdir -p "$w/default" "$w/baseline"
	row_ok=1
	d_s=-; d_c=-; d_a=-; b_s=-; b_c=-; b_a=-; speed=-; launches=-; d_1=-; b_1=-
	log "=== shrink bench: $n ($(gr_time_left)s left)"
	if ! load_sample "$dir/sample.yaml"; then
		echo "$n: bad sample.yaml: $SAMPLE_ERR" >>"$NOTES"
		row_ok=0
	elif ! ensure_trace "$dir" "$w"; then
		echo "$n: no trace (build or capture failed)" >>"$NOTES"
		for f in build.log capture.log; do [ -f "$w/$f" ] && tail_log "$w/$f" >>"$NOTES"; done
		row_ok=0
	else
		dt=$(gr_step_timeout 120)
		run_step "$GR_ROOT" "$w/default.log" "$dt" \
			"$GR" shrink "$TRACE" -o "$w/default/repro.cu" --quiet \
			--time-limit=$(shrink_time_limit "$dt")
		drc=$STEP_RC
		parse_shrink "$w/default.log"
		launches=${SHR_BEFORE:--}
		if [ "$drc" -eq 0 ]; then
			d_s=$STEP_SECS
			grep -q 'time limit' "$w/default/repro.yaml" 2>/dev/null && d_s=">$d_s"
			d_c=$(yaml_candidates "$w/default/repro.yaml")
			d_1=$(yaml_key one_launch_seconds "$w/default/repro.yaml")
			d_c=${d_c:-${SHR_CANDS:-?}}
			d_a=${SHR_AFTER:-?}
			phase_shares "$n" "$w/default/repro.yaml" >>"$OUT/phases.txt"
		else
			d_s="FAIL(exit $drc)"
			row_ok=0
			echo "$n: default shrink exit $drc" >>"$NOTES"
			tail_log "$w/default.log" >>"$NOTES"
		fi
		# The baseline gets what is left after RESERVE seconds for each
		# sample still to come, at most SHRINK_CAP, as its --time-limit (it
		# then keeps its best so far: a lower bound, shown as ">S"), and 30 s
		# more before `timeout` kills it.  The first sample named is the one
		# whose full baseline matters most (by default torch-extension, the
		# speed goal's sample: 262-276 s wall on the H200).
		share=$(( $(gr_time_left) - 35 - RESERVE * (remaining - 1) ))
		[ "$share" -lt 5 ] && share=5
		[ "$share" -gt "$SHRINK_CAP" ] && share=$SHRINK_CAP
		bt=$(gr_step_timeout $((share + 30)))
		run_step "$GR_ROOT" "$w/baseline.log" "$bt" \
			"$GR" shrink "$TRACE" -o "$w/baseline/repro.cu" --strategy=baseline --quiet \
			--time-limit="$share"
		brc=$STEP_RC
		parse_shrink "$w/baseline.log"
		[ "$launches" = - ] && launches=${SHR_BEFORE:--}
		d_num=${d_s#>}
		if [ "$brc" -eq 0 ]; then
			b_s=$STEP_SECS
			b_c=$(yaml_candidates "$w/baseline/repro.yaml")
			b_1=$(yaml_key one_launch_seconds "$w/baseline/repro.yaml")
			b_c=${b_c:-${SHR_CANDS:-?}}
			b_a=${SHR_AFTER:-?}
			if grep -q 'time limit' "$w/baseline/repro.yaml" 2>/dev/null; then
				b_s=">$b_s"
				[ "$drc" -eq 0 ] && speed=">=$(ratio "$STEP_SECS" "$d_num")x"
			else
				[ "$drc" -eq 0 ] && speed="$(ratio "$b_s" "$d_num")x"
			fi
		elif [ "$brc" -eq 124 ] && [ "$bt" -gt 0 ]; then
			b_s=">$STEP_SECS"
			b_c="?"
			[ "$drc" -eq 0 ] && speed=">=$(ratio "$STEP_SECS" "$d_num")x"
		else
			b_s="FAIL(exit $brc)"
			row_ok=0
			echo "$n: baseline shrink exit $brc" >>"$NOTES"
			tail_log "$w/baseline.log" >>"$NOTES"
		fi
	fi
	remaining=$((remaining - 1))
	if [ "$row_ok" -eq 1 ]; then
		result=PASS
		PASSED=$((PASSED + 1))
	else
		result=FAIL
		FAILED=$((FAILED + 1))
	fi
	log "$n: default ${d_s}s, baseline ${b_s}s, speed-up $speed: $result"
	echo "$n|$launches|$d_s|$d_1|$d_c|$d_a|$b_s|$b_1|$b_c|$b_a|$speed|$result" >>"$STAB"
done

echo
echo "bench: $(secs_since "$T0")s in all; logs under $OUT"
if [ -f "$OUT/overhead.table" ]; then
	echo "capture overhead (samples/torch-extension): $OVER"
	print_table "$OUT/overhead.table"
	[ -f "$OUT/overhead.txt" ] && cat "$OUT/overhead.txt"
	echo
fi
echo "shrink speed:"
print_table "$STAB" | tee "$OUT/summary.txt"
if [ -s "$OUT/phases.txt" ]; then
	echo "shrink phases (default strategy; seconds and share of the shrink):"
	sed 's/^/  /' "$OUT/phases.txt"
fi
# every sample gpu-test shrank (its repro.yaml), when its output is here
: >"$OUT/phases-gpu-test.txt"
for y in "$GT"/*/shrink/repro.yaml; do
	[ -s "$y" ] && phase_shares "$(basename "$(dirname "$(dirname "$y")")")" "$y" >>"$OUT/phases-gpu-test.txt"
done
if [ -s "$OUT/phases-gpu-test.txt" ]; then
	echo "shrink phases of gpu-test's shrinks ($GT):"
	sed 's/^/  /' "$OUT/phases-gpu-test.txt"
	awk '{ print $2 }' "$OUT/phases-gpu-test.txt" | sort -g | awk '{ v[NR] = $1 } END {
		if (NR) printf "  median shrink %.2f s, max %.2f s over %d samples (goal: median < 5 s, none > 10 s)\n",
			(NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2), v[NR], NR }'
fi
if [ -s "$NOTES" ]; then
	echo
	echo "Problems:"
	cat "$NOTES"
fi
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
