#!/bin/sh
# t5124-shrink-state-check.sh - when a candidate turned out flaky while
# the original faulted every time (t5123), the state each later table
# phase starts from is replayed (oracle_check_state): a miss makes the
# fault flaky from there on, so that no candidate is judged on one run of
# a trace that misses (the race sample on an H100, 2026-12-07: a one-launch
# state faulting 4 times in 5, judged as steady, a data phase of 9.5 s
# whose cuts took it to 2 in 5, and verify's back-off: 18.6 s).  The
# double's racy_warm loses its race every time after 4 launches in its
# process, and every other time (DOUBLE_RACE_COUNTER) alone.  A state that
# faults every time leaving the fault steady (racy_grid), and a steady
# fault replaying no state (the gather), are checked in t5123, on the
# shrinks it makes of them already.
. tests/cli/test-lib.sh

on_double nvcc no-sanitizer plain-path

# four add_one launches, then racy_warm(buf, 1024) over 4096 bytes
race_trace_text _Z9racy_warmPfi 4 > warm.txt
check "mktrace racy_warm" $MKTRACE warm.bin < warm.txt

# each counter value from 0 to 7 (which candidate loses the race shifts)
bad="" single="" reached=0
for c in 0 1 2 3 4 5 6 7; do
	shrink_at_counter $c w warm.bin || { bad="$bad $c(exit $?)"; continue; }
	grep -q "8/8 faulted (steady: the candidate is flaky, not the fault)" w$c.log || continue
	reached=$((reached + 1))
	at=$(grep -n "the state this phase starts from, end placement: [0-7]/[48] faulted (the original: every time): the reduction made the fault flaky; from here on each candidate runs 3 times" w$c.log | head -1 | cut -d: -f1)
	build=$(grep -n "repro.cu repro.cu" w$c.log | head -1 | cut -d: -f1)
	{ [ -n "$at" ] && [ -n "$build" ] && [ "$at" -lt "$build" ] &&
		[ "$(grep -c "the state this phase starts from" w$c.log)" = 1 ] &&
		grep -q "^  flaky: true" w$c/repro.yaml && grep -q "^  repro_cu: [1-5]/5" w$c/repro.yaml &&
		grep -q "int try_, tries = repro_tries(20);" w$c/repro.cu; } || bad="$bad $c"
	# after it, a candidate that never faulted ran 3 times, not once
	sed -n "${at:-1},${build:-\$}p" w$c.log | grep -o "/c[0-9]*\.bin: [a-zA-Z_]*" | sort | uniq -c |
		awk '{ n[$2] += $1; if ($3 != "clean") f[$2] = 1 } END { for (k in n) if (!f[k] && n[k] != 3) print k }' \
		> once.$c
	[ -s once.$c ] && single="$single $c"
done
[ "$reached" -ge 4 ] && ok "racy_warm: a candidate flaky while the original is not, in $reached of 8 counter values" ||
	fail "racy_warm: a candidate flaky while the original is not, in $reached of 8 counter values (want 4 or more)"
[ -z "$bad" ] && ok "  ...one state replayed (the phase's or the next's), found flaky before repro.cu; a race's program" ||
	fail "  ...one state replayed (the phase's or the next's), found flaky before repro.cu (not:$bad)"
[ -z "$single" ] && ok "  ...from then on no candidate judged clean on fewer than 3 runs" ||
	fail "  ...from then on no candidate judged clean on fewer than 3 runs (not:$single)"

finish
