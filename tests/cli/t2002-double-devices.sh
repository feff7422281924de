#!/bin/sh
# t2002-double-devices.sh - DOUBLE_DEVICES=N makes the driver double a node
# with N GPUs that are told apart: ordinals past the count fail, each
# ordinal has its own primary context and address range, VMM memory lives
# on one device, and memory of one device's context is nothing in
# another's (dbltest devices).  Without this, a replay that only works on
# device 0 passed every multi-device test (issue 25).
. tests/cli/test-lib.sh
. tests/double/test-env.sh

for n in 1 2 8; do
	last=$((n - 1))
	for o in $(printf '0\n%s\n' $last | sort -u); do
		check "DOUBLE_DEVICES=$n, ordinal $o: contexts, memory and VMM per device" \
			sh -c "DOUBLE_DEVICES=$n '$TMP/dbltest' devices '$CUBIN' $o >'$TMP/r-$n-$o'"
		grep -q '^ok$' "$TMP/r-$n-$o" && ok "  ...ran to the end" || fail "  ...ran to the end"
	done
done
r0=$(sed -n 's/^range //p' "$TMP/r-8-0") r7=$(sed -n 's/^range //p' "$TMP/r-8-7")
r1=$(sed -n 's/^range //p' "$TMP/r-1-0") r20=$(sed -n 's/^range //p' "$TMP/r-2-0")
[ -n "$r0" ] && [ -n "$r7" ] && [ "$r0" != "$r7" ] && ok "device 7's memory lies in another range than device 0's ($r7 vs $r0)" ||
	fail "device 7's memory lies in another range than device 0's (${r7:-?} vs ${r0:-?})"
[ -n "$r1" ] && [ "$r1" = "$r0" ] && [ "$r20" = "$r0" ] && ok "  ...device 0's range does not depend on the count" ||
	fail "  ...device 0's range does not depend on the count (${r1:-?} ${r20:-?} ${r0:-?})"
check_exit "an ordinal past DOUBLE_DEVICES fails in dbltest" 1 env DOUBLE_DEVICES=2 "$TMP/dbltest" devices "$CUBIN" 2
finish
