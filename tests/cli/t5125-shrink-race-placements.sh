#!/bin/sh
# t5125-shrink-race-placements.sh - when the reduced trace of a race
# (its original missed in replay too) faults less often than the
# original, shrink does not run it under the other placements (each as
# many times, side by side): no placement makes a race deterministic, and
# which faults most in a few runs is chance (the race sample on H100s,
# 2026-12-07: 11 such checks of 0.6-4.3 s, no placement ahead in most of
# them).  The earlier states' rates are still compared (rate_check), and a
# steady original's reduced trace still gets the placements (t5122's
# racy_grid).  The double's racy_wide loses its race in 3 launches of 4
# with 4 blocks or more, 1 in 4 below (DOUBLE_RACE_COUNTER: by the count).
. tests/cli/test-lib.sh

on_double nvcc no-sanitizer plain-path

wide_race_trace_text _Z9racy_widePfi > wide.txt
check "mktrace racy_wide" $MKTRACE wide.bin < wide.txt

flaky=0 dropped=0 bad="" missed=""
for c in 0 1 2 3 4 5 6 7; do
	shrink_at_counter $c w wide.bin || { bad="$bad $c(exit $?)"; continue; }
	orig=$(sed -n 's/^  original: \([0-9]*\)\/\([0-9]*\)$/\1 \2/p' w$c/repro.yaml)
	[ -n "$orig" ] && [ "${orig% *}" -lt "${orig#* }" ] || continue
	flaky=$((flaky + 1))
	grep -q "verify *rate of the state after" w$c.log && dropped=$((dropped + 1))
	grep -q "placements side by side" w$c.log && bad="$bad $c"
	grep -q "^  repro_cu: [1-5]/5" w$c/repro.yaml || missed="$missed $c"
done
[ "$flaky" -ge 4 ] && ok "racy_wide: a flaky original in $flaky of 8 counter values" ||
	fail "racy_wide: a flaky original in $flaky of 8 counter values (want 4 or more)"
[ "$dropped" -ge 1 ] && ok "  ...its reduced trace faulting less in $dropped: the earlier states compared" ||
	fail "  ...its reduced trace never faulted less (no rate check)"
[ -z "$bad" ] && ok "  ...no other placements run" || fail "  ...no other placements run (not:$bad)"
[ -z "$missed" ] && ok "  ...and every repro.cu faulted" || fail "  ...and every repro.cu faulted (not:$missed)"

finish
