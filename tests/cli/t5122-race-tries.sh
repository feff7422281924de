#!/bin/sh
# t5122-race-tries.sh - a race's repro.cu tries again in the same process:
# shrink of a flaky trace emits main() as a loop of up to 20 tries (its
# set-up and launches, buffers and modules released between tries), so one
# run of the program a maintainer gets is likely to fault; REPRO_TRIES=N
# changes the count; shrink runs it 5 times, as a steady fault's.  A steady
# fault's repro.cu has no loop.  `verify` reads the fault line after the
# clean tries' lines, `replay --tries=N` tries again in its worker, and
# `report` says how the program runs.  A reduced race whose rate dropped
# has the other two placements run side by side; a fault that looked
# steady until its single-try repro.cu missed is checked again as a
# race's: at once when its original, replayed 8 times more, misses too
# (racy_burst), after the other placements and states when the original
# faults every time, and before them when the single try missed every
# run.  The double's racy_rare kernel loses its race when
# DOUBLE_RACE_COUNTER's number is 11 modulo 12, so every run here is exact.
. tests/cli/test-lib.sh

DBL=$BUILD/double
export GPUREDUCE_LIBCUDA=$DBL/libcuda.so.1
export GPUREDUCE_NVCC="cc -x c -w -I${CUDA:-/usr/local/cuda}/include -L$DBL -Wl,-rpath,$DBL"
unset GPUREDUCE_SANITIZER
PATH=/usr/bin:/bin; export PATH
cd "$TMP" || exit 1

# counted WHAT EXIT CMD...: the counter from 0, CMD run under it, its exit
# checked; then the counter's value is $(cat counter)
counted() {
	what=$1 want=$2
	shift 2
	echo 0 > counter
	check_exit "$what" "$want" env DOUBLE_RACE_COUNTER=$TMP/counter "$@"
}

# a race lost in one launch of twelve, beside a second buffer the program
# freed before it (layout placement must map and unmap both every try)
{ double_trace_head; cat <<'EOT'
alloc 0x7f0000100000 4096
alloc 0x7f0000102000 256
h2d 0x7f0000100000 4096 seq
free 0x7f0000102000
launch _Z9racy_rarePfi 2 128 ptr:0x7f0000100000 i32:1024
fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel 0 at_launch=1
EOT
} > rare.txt
check "mktrace racy_rare" $MKTRACE rare.bin < rare.txt
echo 12 > counter
check "shrink the race (grid phase only: both buffers stay)" env DOUBLE_RACE_COUNTER=$TMP/counter \
	$GPUREDUCE shrink -j 2 --quiet --phases=grid -o rare/repro.cu rare.bin
check_grep "  ...repro.cu run 5 times, as a steady fault's (each run is up to 20 tries)" \
	"repro.cu faulted [0-9]/5 " "$TMP/.out"
check_grep "  ...reported flaky" "flaky: true" rare/repro.yaml
check_grep "the header says the program tries" \
	"FLAKY: a race; this program tries up to 20 times in one run, REPRO_TRIES=N to change" rare/repro.cu
check_grep "main() loops over the tries" "int try_, tries = repro_tries(20);" rare/repro.cu
check_grep "  ...and releases each clean try" "release_try(mod, 1, buf, 2);" rare/repro.cu
check "the repro builds with warnings on" cc -x c -Wall -Wextra -Werror -Wno-unused-function \
	-I${CUDA:-/usr/local/cuda}/include -L$DBL -Wl,-rpath,$DBL -o repro rare/repro.cu -lcuda

# counter 0: race() gives 0, 1, ... 11 to the tries; the twelfth faults
counted "one run faults on its 12th try (exit 1)" 1 ./repro
check_grep "  ...after 11 clean tries" "^repro: try 11 of 20 ran clean; trying again (a race)$" "$TMP/.out"
check_grep "  ...with the signature" \
	"^repro: racy_rare(float\*, int) faulted: CUDA_ERROR_ILLEGAL_ADDRESS (700)" "$TMP/.out"
n=$(grep -c "ran clean; trying again" "$TMP/.out")
[ "$n" = 11 ] && ok "  ...11 lines of clean tries" || fail "  ...11 lines of clean tries ($n)"

counted "REPRO_TRIES=1: one try, clean (exit 0)" 0 env REPRO_TRIES=1 ./repro
check_grep "  ...says it ran clean" "^repro: ran clean: the fault did not reproduce$" "$TMP/.out"
[ "$(cat counter)" = 1 ] && ok "  ...one launch made" || fail "  ...one launch made (counter $(cat counter))"

counted "REPRO_TRIES=11: clean in every try (exit 0)" 0 env REPRO_TRIES=11 ./repro
check_grep "  ...says so" "^repro: ran clean in every try: the fault did not reproduce$" "$TMP/.out"
[ "$(cat counter)" = 11 ] && ok "  ...eleven launches made" || fail "  ...eleven launches made (counter $(cat counter))"

# layout placement: the range stays reserved, each try maps both buffers
# again (the freed one unmapped again).  The overrun lands in the mapped
# granule there (no guard right after the buffer), so every try runs clean.
counted "layout placement, 40 tries: clean, no set-up failure across tries" 0 \
	env REPRO_TRIES=40 REPRO_PLACEMENT=layout ./repro
check_grep "  ...all 40 made" "^repro: ran clean in every try" "$TMP/.out"
check_no_grep "  ...no set-up failure" "setup failed" "$TMP/.out"
[ "$(cat counter)" = 40 ] && ok "  ...40 launches made" || fail "  ...40 launches made (counter $(cat counter))"
counted "guard placements, 40 tries each" 1 env REPRO_TRIES=40 REPRO_PLACEMENT=end ./repro
check_no_grep "  ...no set-up failure" "setup failed" "$TMP/.out"

# verify reads the fault line below the clean tries' lines
counted "verify counts a run that faulted on a later try" 0 $GPUREDUCE verify -n 1 rare/repro.cu
check_grep "  ...with the kernel's signature" "^verify: 1/1 runs faulted with CUDA_ERROR_ILLEGAL_ADDRESS in racy_rare" "$TMP/.out"

# replay --tries: the same in a replay worker (a clean run keeps it)
counted "replay once: clean (exit 0)" 0 $GPUREDUCE replay --guard=end rare.bin
counted "replay --tries=20: faults (exit 1)" 1 $GPUREDUCE replay --guard=end --tries=20 rare.bin
check_grep "  ...on the 12th try" "^replay: faulted at event .* in _Z9racy_rarePfi: .*guard=end, try 12 of 20$" "$TMP/.out"
check_grep "  ...after 11 clean ones" "^replay: try 11 of 20 ran clean; trying again$" "$TMP/.out"
counted "replay --tries=5: clean in every try (exit 0)" 0 $GPUREDUCE replay --guard=end --tries=5 rare.bin
check_grep "  ...says so" "^replay: ran clean (.*guard=end, in every try)" "$TMP/.out"
check_exit "replay --tries=0 is refused (exit 2)" 2 $GPUREDUCE replay --tries=0 rare.bin

# report tells the maintainer how the race's repro.cu runs
check "report of the race's folder" $GPUREDUCE report --runs=0 --no-sanitizer --no-tar rare
check_grep "  ...says one run makes up to 20 tries" \
	"one run of repro.cu makes its set-up and launches up to 20 times in the same process" rare/report.md
check_grep "  ...and how to make one" "REPRO_TRIES=1 ./repro" rare/report.md

# the placement check of a reduced race whose rate dropped (racy_grid: a
# grid cut halves it; t5000 7a) runs the two other placements in one batch
racy_grid_trace_text > rgrid.txt
check "mktrace racy_grid" $MKTRACE rgrid.bin < rgrid.txt
counted "shrink a race whose rate the grid cut lowers" 0 $GPUREDUCE shrink -j 2 --quiet --log=rgrid.log -o rgrid/repro.cu rgrid.bin
check_grep "  ...the other two placements side by side" \
	"verify *10 runs of .* under 2 placements side by side" rgrid.log
n=$(grep -c "verify *the reduced trace with \(layout\|start\) placement: [0-9]/5 faulted (end placement" rgrid.log)
[ "$n" = 2 ] && ok "  ...each one's count logged" || fail "  ...each one's count logged ($n)"

# a fault replay finds steady whose single-try repro.cu misses every other
# run (the stand-in compiler's doing): shrink calls it flaky from there on,
# and the program emitted then, a race's with its tries, is run again and
# its count is the figure
oob_trace_text > oob.txt
check "mktrace oob" $MKTRACE oob.bin < oob.txt
echo 0 > ctr
check "shrink, the single-try repro.cu missing every other run" env HALF_DBL=$DBL HALF_CTR=$TMP/ctr \
	GPUREDUCE_NVCC="sh $SRCDIR/tests/cli/helpers/half-clean-cc.sh" \
	$GPUREDUCE shrink -j 2 --quiet --log=half.log -o half/repro.cu oob.bin
check_grep "  ...checked again as a race's" \
	"repro.cu as a race's (the fault is flaky from here on), .* placement: .*5/5 faulted" half.log
check_grep "  ...whose count is the figure" "^  repro_cu: 5/5" half/repro.yaml
check_grep "  ...flaky" "^  flaky: true" half/repro.yaml
check_grep "  ...the note says both" \
	"emitted as a race.*s repro.cu, which tries again in one run, it faulted in 5 of 5 runs" half/repro.yaml
check_grep "  ...the repro.cu written is the race's" "int try_, tries = repro_tries(20);" half/repro.cu
check_grep "  ...the original replayed 8 times more: steady, so the reduction made it flaky" \
	"the original trace again, .* placement: 8/8 faulted (steady: the reduction made it flaky)" half.log
n=$(grep -c "repro.cu repro.cu (.* placement, state after " half.log)
[ "$n" -gt 1 ] && ok "  ...so other placements and earlier states were tried ($n builds)" \
	|| fail "  ...so other placements and earlier states were tried ($n builds)"

# a race lost in bursts (racy_burst under DOUBLE_RACE_COUNTER: 6 launches
# in a row fault, then 18 run clean) whose confirmation runs both faulted
# and whose single-try repro.cu then faulted in some runs: the original,
# replayed 8 times more, misses too, so the race's program is built at
# once, with no other placement or earlier state tried.  Which counter
# value reaches this follows the sequence of replays: all 24 are shrunk.
burst_trace_text > burst.txt
check "mktrace racy_burst" $MKTRACE burst.bin < burst.txt
reached=0 bad=""
for c in 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23; do
	echo $c > burst-counter
	DOUBLE_RACE_COUNTER=$TMP/burst-counter $GPUREDUCE shrink -j 1 --quiet --log=b$c.log -o b$c/repro.cu \
		burst.bin >b$c.txt 2>&1
	# (the repro.cu check's re-check, not a phase's: oracle_recheck_clean
	# finds some of them flaky before, t5123)
	grep -q "repro.cu *the original trace again, .* faulted (flaky itself: a race)" b$c.log || continue
	reached=$((reached + 1))
	n=$(grep -c "repro.cu repro.cu (.* placement, state after " b$c.log)
	{ [ "$n" = 1 ] && grep -q "repro.cu as a race's (the fault is flaky from here on)" b$c.log &&
		grep -q "^  flaky: true" b$c/repro.yaml && grep -q "int try_, tries = repro_tries(20);" b$c/repro.cu &&
		grep -q "^  repro_cu: [1-5]/5" b$c/repro.yaml; } || bad="$bad $c($n builds)"
done
[ "$reached" -ge 1 ] && ok "a burst's original replayed again and found flaky in $reached of 24 shrinks" ||
	fail "no burst's original was found flaky when its repro.cu missed (24 shrinks)"
[ -z "$bad" ] && ok "  ...each one's race program built after one single-try build, emitted, faulting" ||
	fail "  ...each one's race program built after one single-try build, emitted, faulting (not:$bad)"

# the single-try repro.cu of a fault replay finds steady misses every run:
# the race's program is run with the same placement before any other
# placement or state, and it is the one emitted when it faults
echo 0 > ctr
check "shrink, the single-try repro.cu missing every run" env HALF_DBL=$DBL HALF_CTR=$TMP/ctr HALF_ALL=1 \
	GPUREDUCE_NVCC="sh $SRCDIR/tests/cli/helpers/half-clean-cc.sh" \
	$GPUREDUCE shrink -j 2 --quiet --log=none.log -o none/repro.cu oob.bin
check_grep "  ...run as a race's at once" \
	"repro.cu as a race's (one try faulted in none of 5 runs), .* placement: .*5/5 faulted" none.log
n=$(grep -c "repro.cu repro.cu (.* placement, state after " none.log)
[ "$n" = 1 ] && ok "  ...after one single-try build" || fail "  ...after one single-try build ($n)"
check_grep "  ...whose count is the figure" "^  repro_cu: 5/5" none/repro.yaml
check_grep "  ...flaky" "^  flaky: true" none/repro.yaml
check_grep "  ...the note says both" \
	"repro.cu faulted in none of 5 runs as one try; emitted as a race.*s repro.cu, which tries again in one run, it faulted in 5 of 5 runs" none/repro.yaml
check_grep "  ...the repro.cu written is the race's" "int try_, tries = repro_tries(20);" none/repro.cu

# a steady fault: one try, no loop
check "shrink a steady fault" $GPUREDUCE shrink -j 2 --quiet -o oob/repro.cu oob.bin
check_no_grep "  ...its repro.cu has no loop of tries" "repro_tries" oob/repro.cu
check_no_grep "  ...nor says FLAKY" "FLAKY" oob/repro.cu
check "report of the steady fault's folder" $GPUREDUCE report --runs=0 --no-sanitizer --no-tar oob
check_no_grep "  ...says nothing of tries" "REPRO_TRIES" oob/report.md

finish
