#!/bin/sh
# t5116-shrink-bursty-race.sh - a race lost in bursts (the double's
# racy_burst: under DOUBLE_RACE_COUNTER 6 launches in a row fault, then 18
# run clean), shrunk with one worker from each of the 24 counter values,
# under three phase selections (all, --phases=data and
# --skip-phases=scalars: which alignments reach which path follows the
# sequence of replays, which any change to a phase or to how candidates
# are run moves; three sequences keep the paths below reached, and
# --skip-phases=grid no longer did once a flaky fault's candidates ran
# one round at a time, 2026-12-07).
# Whatever the alignment, a shrink whose rate check backed off to an
# earlier state must emit that state: the state faulted in its rate runs,
# so a fresh confirmation that falls in the clean stretch is not "did not
# fault" (gpu-test's race sample on an H100, 2026-12-05: the state after
# data 2/5, then 0/5, and nothing was emitted).  At least one alignment
# takes that path.  Where a burst misses all of verify's runs, shrink says
# so and keeps the latest state that faulted in the reduction (with its
# work folder) for `gpureduce replay`, which faults on it when the burst
# comes back.
. tests/cli/test-lib.sh

on_double nvcc no-sanitizer plain-path

burst_trace_text > burst.txt
check "mktrace racy_burst" $MKTRACE burst.bin < burst.txt

backed=0 stood=0 lost="" kept=0 gone=""
for sel in all data scalars; do
	case $sel in all) opt= ;; data) opt=--phases=data ;; *) opt=--skip-phases=$sel ;; esac
	for c in 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23; do
		echo $c > counter
		r=$sel-$c
		DOUBLE_RACE_COUNTER=$TMP/counter $GPUREDUCE shrink -j 1 $opt --quiet --log=l$r.log -o o$r/repro.cu \
			burst.bin >o$r.txt 2>&1
		if grep -q "rate of the state" l$r.log; then
			backed=$((backed + 1))
			grep -q "its rate runs' .* stand" l$r.log && stood=$((stood + 1))
			[ -s o$r/repro.cu ] && [ -s o$r/repro.bin ] || lost="$lost $r"
		fi
		# verify's runs all in the clean stretch: the latest state that
		# faulted in the reduction is kept, its work folder with it
		k=$(sed -n 's/.* is kept as \([^ ]*\) for .gpureduce replay.*/\1/p' o$r.txt)
		if [ -n "$k" ]; then
			kept=$((kept + 1))
			[ -s "$k" ] || gone="$gone $r"
		fi
	done
done
[ "$backed" -ge 1 ] && ok "the rate check ran for $backed of 72 shrinks" ||
	fail "the rate check ran for none of the 72 shrinks"
[ -z "$lost" ] && ok "  ...and each of them emitted a repro" ||
	fail "  ...and each of them emitted a repro (nothing emitted from$lost)"
[ "$stood" -ge 1 ] && ok "  ...$stood with a back-off whose fresh confirmation missed (its rate runs stood)" ||
	fail "  ...none with a back-off whose fresh confirmation missed"
[ "$kept" -ge 1 ] && ok "$kept shrinks ended with no fault in verify's runs, keeping a state that faulted in the reduction" ||
	fail "no shrink kept a state that faulted in the reduction when verify's runs all ran clean"
[ -z "$gone" ] && ok "  ...each kept trace is where the message says" ||
	fail "  ...each kept trace is where the message says (missing from$gone)"
# one of them: the kept trace faults again once the burst comes back
k=$(sed -n 's/.* is kept as \([^ ]*\) for .gpureduce replay.*/\1/p' o*.txt | head -n 1)
n=0
for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24; do
	DOUBLE_RACE_COUNTER=$TMP/counter $GPUREDUCE replay "$k" >r.txt 2>&1
	grep -q "faulted at .* in _Z10racy_burstPfi: CUDA_ERROR_ILLEGAL_ADDRESS" r.txt && n=$((n + 1))
done
[ "$n" -ge 1 ] && ok "  ...and it faults in replay when the burst comes ($n of 24 runs)" ||
	fail "  ...and it faults in replay when the burst comes (0 of 24 runs)"
finish
