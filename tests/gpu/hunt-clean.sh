#!/bin/bash
# hunt-clean.sh - `make hunt-clean` (issue 28, item 2): no false alarms.
# Every bundled sample's clean variant (its bug fixed, selected by the
# VAR=VALUE words of its sample.yaml's clean_env:) must run clean natively
# and hunt clean.
#
# For each sample with a clean_env (or the samples named on the command
# line), in its own work dir ${HUNT_CLEAN_OUT:-$BUILD/hunt-clean}/NAME:
#   build    the sample's `build:` step (no clean_env: the variant is chosen
#            at run time), run in the sample dir          -> build.log
#   native   env CLEAN_ENV bash -c "$RUN" in the sample dir must exit 0
#                                                         -> native.log
#   hunt     env CLEAN_ENV gpureduce hunt --no-shrink --no-diagnose -o hunt
#            -- bash -c "$RUN" must exit 0, print "clean (no launch faulted
#            ..." once per CUDA process (at least sample.yaml's processes:,
#            where a process that launched no kernel, "nothing to hunt",
#            counts too, but one at least must hunt clean) and no finding;
#            a program that exits non-zero under capture fails it too (its
#            trace is only part of the run) -> hunt.log;
#            each finding's launch, `show --launch SEQ` -> finding-SEQ.yaml
# The samples run in parallel, HUNT_CLEAN_JOBS (4) at a time, the longest
# (by sample.yaml timeout) first so the short CUDA C ones fill in at the
# end.  Every step runs under `timeout`, cut to what is left of a global
# deadline (HUNT_CLEAN_DEADLINE seconds, default 400), so the suite ends in
# time: a step with no time left is skipped and its sample FAILs.  Prints a
# table (sample, native exit, hunt exit, findings or notes, seconds, result)
# and "N passed, N failed"; failures print their logs' tails.
# Exit status: 0 if every sample passed, 1 otherwise, 2 if the suite could
# not start (no build/gpureduce or build/sampleinfo).
#
# Usage: tests/gpu/hunt-clean.sh [SAMPLE...]     (BUILD and CUDA from make)
# Env:   HUNT_CLEAN_OUT ($BUILD/hunt-clean), HUNT_CLEAN_DEADLINE (400),
#        GR_SAMPLES (the samples' folder, samples/),
#        HUNT_CLEAN_JOBS (4), HUNT_CLEAN_BUILD_TIMEOUT (300 per build step)
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

OUT=${HUNT_CLEAN_OUT:-$BUILD/hunt-clean}
case $OUT in /*) ;; *) OUT=$GR_ROOT/$OUT ;; esac
DEADLINE=${HUNT_CLEAN_DEADLINE:-400}
JOBS=${HUNT_CLEAN_JOBS:-4}
BUILD_LIMIT=${HUNT_CLEAN_BUILD_TIMEOUT:-300}
case $JOBS in ''|*[!0-9]*|0) echo "hunt-clean: HUNT_CLEAN_JOBS=$JOBS: want a number >= 1"; exit 2 ;; esac

gr_deadline_set "$DEADLINE"
T0=$(now)
log "hunt-clean: gpureduce=$GR out=$OUT deadline=${DEADLINE}s jobs=$JOBS"
if [ ! -x "$GR" ] || ! need_sampleinfo; then
	echo "hunt-clean: $GR or sampleinfo is missing: run make first"
	echo "0 passed, 1 failed"
	exit 2
fi
mkdir -p "$OUT" || { echo "hunt-clean: cannot create $OUT"; echo "0 passed, 1 failed"; exit 2; }

# The samples: those named, else every sample.yaml with a clean_env; the
# longest timeout first (ties by name).
mapfile -t DIRS < <(if [ $# -gt 0 ]; then list_samples "$@"; else samples_with CLEAN_ENV; fi)
mapfile -t DIRS < <(for d in "${DIRS[@]}"; do
	t=$("$SAMPLEINFO" "$d/sample.yaml" 2>/dev/null | sed -n "s/^TIMEOUT='\{0,1\}\([0-9]*\)'\{0,1\}\$/\1/p")
	printf '%s\t%s\n' "${t:-0}" "$d"
done | sort -t "$(printf '\t')" -k1,1nr -k2,2 | cut -f2-)
if [ "${#DIRS[@]}" -eq 0 ]; then
	echo "hunt-clean: no sample has a clean_env"
	echo "0 passed, 1 failed"
	exit 2
fi

# clean_sample DIR: one sample's build, native run and hunt, in $OUT/NAME.
# Runs as a background job: it writes its table row to $OUT/NAME/row
# ("sample|native|hunt|notes|seconds|result") and, on failure, the reasons
# and log tails to $OUT/NAME/fail.  Returns 0 on PASS.
clean_sample() {
	local dir=$1 n w t ok=1 why='' logs='' nrc=- hrc=- ns=0 hs=0 notes='' nf nc nl nn first
	n=$(basename "$dir")
	w=$OUT/$n
	rm -rf -- "$w"
	mkdir -p "$w"
	if [ ! -f "$dir/sample.yaml" ]; then
		why="no $dir/sample.yaml"
	elif ! load_sample "$dir/sample.yaml"; then
		why="sample.yaml: $SAMPLE_ERR"
	elif [ -z "$CLEAN_ENV" ]; then
		why="sample.yaml has no clean_env"
	fi
	if [ -n "$why" ]; then
		echo "$n|-|-|${why//|//}|0|FAIL" >"$w/row"
		echo "---- $n: FAIL: $why" >"$w/fail"
		log "=== $n: FAIL ($why)"
		return 1
	fi
	if [ -n "$BUILD_CMD" ]; then
		t=$(gr_step_timeout "$BUILD_LIMIT")
		log "$n: build (limit ${t}s): $BUILD_CMD"
		if ! run_step "$dir" "$w/build.log" "$t" bash -c "$BUILD_CMD"; then
			ok=0
			why="$why; the build step exited $STEP_RC"
			logs="$logs build.log"
		fi
	fi
	if [ "$ok" -eq 1 ]; then
		t=$(gr_step_timeout "$TIMEOUT")
		log "$n: native run of the clean variant (limit ${t}s): env $CLEAN_ENV $RUN"
		# shellcheck disable=SC2086 # clean_env: VAR=VALUE words
		run_step "$dir" "$w/native.log" "$t" env $CLEAN_ENV bash -c "$RUN"
		nrc=$STEP_RC
		ns=$STEP_SECS
		if [ "$nrc" -ne 0 ]; then
			ok=0
			why="$why; the clean variant's native run exited $nrc"
			logs="$logs native.log"
		fi
		t=$(gr_step_timeout $((TIMEOUT * 3)))
		log "$n: hunt of the clean variant (limit ${t}s)"
		# shellcheck disable=SC2086
		run_step "$dir" "$w/hunt.log" "$t" env $CLEAN_ENV "$GR" hunt --no-shrink --no-diagnose \
			-o "$w/hunt" -- bash -c "$RUN"
		hrc=$STEP_RC
		hs=$STEP_SECS
		nf=$(grep -a -c '^finding [0-9]' "$w/hunt.log")
		nc=$(grep -a -c ': clean (no launch faulted' "$w/hunt.log")
		# a process that launched no kernel (a producer that only
		# allocates and shares memory, a launcher) has nothing to hunt:
		# it counts towards the sample's processes, but one at least
		# must have hunted clean
		nl=$(grep -a -c ': no kernel launches in the trace: nothing to hunt' "$w/hunt.log")
		nn=$(grep -a -c '^note: ' "$w/hunt.log")
		first=$(grep -a -m1 '^finding [0-9]' "$w/hunt.log" | cut -c1-90)
		if [ "$nf" -gt 0 ]; then
			notes="$nf finding(s): $first"
		elif [ "$nc" -gt 0 ]; then
			notes="clean ($nc process(es)$([ "$nl" -gt 0 ] && echo "; $nl launched nothing"))"
		elif [ "$hrc" -eq 124 ]; then
			notes="hunt timed out"
		else
			notes="no verdict"
		fi
		[ "$nn" -gt 0 ] && notes="$notes; $nn note(s): $(grep -a -m1 '^note: ' "$w/hunt.log" | cut -c7-70)"
		if grep -a -q 'note: the program exited [0-9]* under capture' "$w/hunt.log"; then
			notes="$notes; $(grep -a -m1 -o 'the program exited [0-9]* under capture' "$w/hunt.log")"
			ok=0
			why="$why; $(grep -a -m1 -o 'the program exited [0-9]* under capture' "$w/hunt.log")"
			logs="$logs hunt.log"
		fi
		if [ "$nf" -gt 0 ]; then
			# a false alarm may not come back: keep each finding's launch as
			# `show --launch` prints it (its words, int_words), small enough
			# to come back from a GPU machine where the trace does not
			grep -a '^finding [0-9]' "$w/hunt.log" | while read -r line; do
				seq=$(printf '%s\n' "$line" | sed -n 's/^finding [0-9]*: .*launch #\([0-9]*\) .*/\1/p')
				pid=$(printf '%s\n' "$line" | sed -n 's/^finding [0-9]*: \[pid \([0-9]*\)\].*/\1/p')
				tr=$w/hunt/trace.bin
				[ -n "$pid" ] && [ -f "$tr.$pid" ] && tr=$tr.$pid
				[ -n "$seq" ] && timeout 120 "$GR" show --launch "$seq" "$tr" >"$w/finding-$seq.yaml" 2>&1
			done
		fi
		if [ "$hrc" -ne 0 ] || [ $((nc + nl)) -lt "$PROCESSES" ] || [ "$nc" -eq 0 ] || [ "$nf" -gt 0 ]; then
			ok=0
			why="$why; hunt exited $hrc with $nf finding(s)${first:+ (first: $first)} and $nc clean"
			why="$why process(es)$([ "$nl" -gt 0 ] && echo " ($nl more launched nothing)") of the $PROCESSES the sample starts"
			case " $logs " in *" hunt.log "*) ;; *) logs="$logs hunt.log" ;; esac
		fi
	fi
	local result=PASS
	[ "$ok" -eq 1 ] || result=FAIL
	notes=${notes//|//}
	echo "$n|$nrc|$hrc|${notes:--}|$ns / $hs|$result" >"$w/row"
	if [ "$ok" -ne 1 ]; then
		{
			echo "---- $n: FAIL: ${why#; }"
			for f in $logs; do tail_log "$w/$f" 20; done
		} >"$w/fail"
	fi
	log "=== $n: $result (native exit $nrc in ${ns}s, hunt exit $hrc in ${hs}s: $notes)"
	[ "$ok" -eq 1 ]
}

# The job pool: at most $JOBS samples at once.  On INT/TERM the jobs this
# script started are ended: first each job's running step (its `timeout`,
# which passes the signal on to the command's process group), then the job.
PIDS=()
stop_jobs() {
	local p
	for p in ${PIDS[@]+"${PIDS[@]}"}; do
		pkill -TERM -P "$p" 2>/dev/null
		kill "$p" 2>/dev/null
	done
	exit 130
}
trap stop_jobs INT TERM
for dir in "${DIRS[@]}"; do
	while [ "$(jobs -rp | wc -l)" -ge "$JOBS" ]; do
		wait -n 2>/dev/null || sleep 1
	done
	clean_sample "$dir" &
	PIDS+=("$!")
done
wait

TABLE=$OUT/summary.table
echo "sample|native exit|hunt exit|findings or notes|seconds (native / hunt)|result" >"$TABLE"
PASSED=0
FAILED=0
: >"$OUT/failures.txt"
mapfile -t DIRS < <(printf '%s\n' "${DIRS[@]}" | sort)   # the table by name
for dir in "${DIRS[@]}"; do
	n=$(basename "$dir")
	if [ -s "$OUT/$n/row" ]; then
		cat "$OUT/$n/row" >>"$TABLE"
	else
		echo "$n|-|-|the job wrote no result|-|FAIL" >>"$TABLE"
		echo "---- $n: FAIL: the job wrote no result" >>"$OUT/failures.txt"
	fi
	[ -f "$OUT/$n/fail" ] && cat "$OUT/$n/fail" >>"$OUT/failures.txt"
	if grep -q '|PASS$' "$OUT/$n/row" 2>/dev/null; then
		PASSED=$((PASSED + 1))
	else
		FAILED=$((FAILED + 1))
	fi
done

echo
echo "hunt-clean: $(secs_since "$T0")s in all ($JOBS jobs); logs under $OUT"
print_table "$TABLE" | tee "$OUT/summary.txt"
if [ -s "$OUT/failures.txt" ]; then
	echo
	echo "Failures:"
	cat "$OUT/failures.txt"
fi
echo "$PASSED passed, $FAILED failed" | tee -a "$OUT/summary.txt"
[ "$FAILED" -eq 0 ]
