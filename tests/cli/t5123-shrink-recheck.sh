#!/bin/sh
# t5123-shrink-recheck.sh - a fault that looks steady gets a second look
# at its clean candidates (oracle_recheck_clean): a race that faults in
# both of confirm's runs and then loses in one candidate's single run
# must not have that candidate judged clean (the race sample on an H100,
# 2026-12-07: 8 launches cut to 2 instead of 1, 120 data candidates, 40
# s).  A clean candidate that faults when run again has the original
# replayed 4 times more, and 4 more when those all faulted: a miss makes
# the fault flaky from there on (each
# candidate runs until it faults, up to several times, one round at a
# time), 8 of 8 means the candidate is flaky and
# not the fault (the rechecks stop, the fault stays steady).  A steady
# fault's clean candidates stay clean, and at most 12 are run again.
# The double's racy_often loses its race in three launches of four
# (every fourth runs clean under DOUBLE_RACE_COUNTER), racy_grid always
# with 4 or more blocks and on every other launch below that.
. tests/cli/test-lib.sh

on_double nvcc no-sanitizer plain-path

# add_one on a second buffer, then racy_often(buf, 1024) over 4096 bytes
race_trace_text _Z10racy_oftenPfi 1 > often.txt
check "mktrace racy_often" $MKTRACE often.bin < often.txt

# each counter value from 0 to 7 (the race's sequence of replays shifts
# which candidate loses it)
reached=0 bad="" grid=""
for c in 0 1 2 3 4 5 6 7; do
	shrink_at_counter $c o often.bin || { bad="$bad $c(exit $?)"; continue; }
	grep -q "racy_often(float\*, int)\", 1, 1, 1," o$c/repro.cu || grid="$grid $c"
	grep -q "recheck of .* [1-9] faulted the second time" o$c.log || continue
	reached=$((reached + 1))
	# found flaky in a phase, before repro.cu was built, which is then
	# built once, as a race's
	first=$(grep -n "the fault is flaky from here on: each candidate runs" o$c.log | head -1 | cut -d: -f1)
	build=$(grep -n "repro.cu repro.cu" o$c.log | head -1 | cut -d: -f1)
	{ grep -q "the original trace again, .* placement: [0-7]/[48] faulted (flaky itself: a race)" o$c.log &&
		[ -n "$first" ] && [ -n "$build" ] && [ "$first" -lt "$build" ] &&
		[ "$(grep -c "repro.cu repro.cu" o$c.log)" = 1 ] &&
		grep -q "^  flaky: true" o$c/repro.yaml && grep -q "int try_, tries = repro_tries(20);" o$c/repro.cu &&
		grep -q "^  repro_cu: [1-5]/5" o$c/repro.yaml; } || bad="$bad $c"
done
[ -z "$bad" ] && ok "racy_often shrunk from 8 counter values" || fail "racy_often shrunk from 8 counter values (not:$bad)"
# a flaky fault's candidate runs until it faults (up to 3 runs here), one
# round at a time: none faults twice (each faulting run ends its worker)
twice=$(for c in 0 1 2 3 4 5 6 7; do
	grep -o "/c[0-9]*\.bin: CUDA_ERROR_ILLEGAL_ADDRESS, the signature" o$c.log | sort | uniq -d | sed "s/^/$c/"
done | wc -l)
flakyrounds=$(cat o?.log | grep -c "batch of .* jobs")
[ "$twice" = 0 ] && [ "$flakyrounds" -gt 8 ] && ok "  ...no candidate run again once it faulted ($flakyrounds batches)" ||
	fail "  ...no candidate run again once it faulted ($twice did, $flakyrounds batches)"
[ "$reached" -ge 1 ] && ok "  ...a clean candidate that faulted again made the fault flaky in $reached of them" ||
	fail "  ...no clean candidate was found to fault when run again"
[ -z "$grid" ] && ok "  ...each cut to one block (no cut judged on one lost race)" ||
	fail "  ...each cut to one block (no cut judged on one lost race; not:$grid)"

# GPUREDUCE_RECHECK_CLEAN=0: no second runs (the shrinks before them)
echo 2 > counter
check "racy_often with GPUREDUCE_RECHECK_CLEAN=0" env DOUBLE_RACE_COUNTER=$TMP/counter GPUREDUCE_RECHECK_CLEAN=0 \
	$GPUREDUCE shrink -j 1 --quiet --log=off.log -o off/repro.cu often.bin
check_no_grep "  ...no clean candidate run again" "recheck of" off.log
check_no_grep "  ...no phase found the fault flaky" "the fault is flaky from here on: each candidate" off.log

# racy_grid: the original always faults, a grid under 4 blocks half the
# time: a cut that ran clean and then faulted is the candidate's flakiness
racy_grid_trace_text > grid.txt
check "mktrace racy_grid" $MKTRACE grid.bin < grid.txt
reached=0 bad="" states=""
for c in 0 1 2 3; do
	shrink_at_counter $c g grid.bin || { bad="$bad $c(exit $?)"; continue; }
	grep -q "recheck of .* [1-9] faulted the second time" g$c.log || continue
	reached=$((reached + 1))
	at=$(grep -n "8/8 faulted (steady: the candidate is flaky, not the fault)" g$c.log | head -1 | cut -d: -f1)
	later=$(sed -n "${at:-1},\$p" g$c.log | grep -c "recheck of")
	{ [ -n "$at" ] && [ "$later" = 0 ] && grep -q "^  flaky: false" g$c/repro.yaml &&
		grep -q "^  repro_cu: 5/5" g$c/repro.yaml &&
		grep -q "racy_grid(float\*, int)\", [48], 1, 1," g$c/repro.cu; } || bad="$bad $c"
	# t5124: the grid phase's state, then the next's, replayed: 8/8 each
	n=$(grep -c "the state this phase starts from" g$c.log)
	{ [ "$n" -ge 1 ] && [ "$n" -le 2 ] &&
		[ "$(grep -c "the state this phase starts from, end placement: 8/8 faulted (steady)" g$c.log)" = "$n" ]; } ||
		states="$states $c"
done
[ "$reached" -ge 1 ] && ok "racy_grid: a cut that faulted when run again, in $reached of 4 counter values" ||
	fail "racy_grid: no cut faulted when run again (4 counter values)"
[ -z "$bad" ] && ok "  ...the original 8/8: steady, no more rechecks, a grid of 4 or 8, 5/5" ||
	fail "  ...the original 8/8: steady, no more rechecks, a grid of 4 or 8, 5/5 (not:$bad)"
[ -z "$states" ] && ok "  ...the states the phases started from replayed (1 or 2), each 8/8 (t5124)" ||
	fail "  ...the states the phases started from replayed (1 or 2), each 8/8 (t5124; not:$states)"

# a steady fault (one wild index): its clean candidates are run again,
# stay clean, and the original is not replayed for them
gather_trace_text > gather.txt
check "mktrace gather" $MKTRACE gather.bin < gather.txt
check "shrink the steady gather" $GPUREDUCE shrink -j 2 --quiet --log=gather.log -o gather/repro.cu gather.bin
n=$(sed -n 's/.*recheck of \([0-9]*\) clean candidate(s): 0 faulted.*/\1/p' gather.log | awk '{s += $1} END {print s + 0}')
[ "$n" -ge 1 ] && [ "$n" -le 12 ] && ok "  ...$n clean candidates run again (at most 12), none faulted" ||
	fail "  ...clean candidates run again: $n (want 1 to 12, none faulting)"
check_no_grep "  ...none faulted" "recheck of .* [1-9] faulted the second time" gather.log
check_no_grep "  ...the original not replayed again" "the original trace again" gather.log
check_no_grep "  ...no state replayed (t5124)" "the state this phase starts from" gather.log
check_grep "  ...steady" "^  flaky: false" gather/repro.yaml
check_grep "  ...5/5" "^  repro_cu: 5/5" gather/repro.yaml

finish
