#!/bin/sh
# t7016-tensors-cost-bench.sh - tests/bench/tensors-cost.sh (part of `make
# bench-cpu`: what `capture --tensors` costs a loop's launches and history
# fetches, on the driver double) runs and parses its profile: a short run,
# side by side with COST_BASE_LIB, then against a base library that
# captures nothing (its run fails: the bench says so and exits 1).
. tests/cli/test-lib.sh

command -v python3 >/dev/null 2>&1 || { echo "no python3 here: not measured"; echo "0 passed, 0 failed"; exit 0; }
[ -f "$BUILD/libgpureduce-capture.so" ] || { echo "skip: no capture library (no CUPTI headers)"; echo "0 passed, 0 failed"; exit 0; }
num='[0-9][0-9]*\.[0-9][0-9][0-9]'
cd "$TMP" || exit 1
check_exit "tensors-cost.sh, 3 steps" 0 env COST_STEPS=3 COST_REPS=1 COST_BASE_LIB="$BUILD/libgpureduce-capture.so" \
	sh "$SRCDIR/tests/bench/tensors-cost.sh"
cp "$TMP/.out" tc.txt
check_grep "  ...the events a fetch brought" "^--tensors: 3 steps of 360 launches, 400 blocks live, 6+1 frames an allocation, ~[1-9][0-9]* events a fetch" tc.txt
check_grep "  ...a row: the tag, the fetch and its three parts, the loop" \
	"^built  *$num  *$num  *$num  *$num  *$num  *$num\$" tc.txt
check_grep "  ...and the base library's beside it" "^base  *$num  *$num  *$num  *$num  *$num  *$num\$" tc.txt
awk -v n="$num" '$1 == "built" { if ($3 + 0 <= 0 || $5 + 0 <= 0 || $3 + 0 < $5 + 0) bad = 1; rows++ }
	END { exit !(rows == 1 && !bad) }' tc.txt &&
	ok "  ...the fetch is positive and holds the reader's part" || fail "  ...implausible figures: $(grep '^built' tc.txt)"
# a base library that captures nothing: its run fails, and the bench says so
mkdir -p nolib
echo 'int gpureduce_nothing(void) { return 0; }' >nolib/lib.c
check "build a library that captures nothing" cc -shared -fPIC -o nolib/libnone.so nolib/lib.c
check_exit "tensors-cost.sh against it: exit 1" 1 env COST_STEPS=1 COST_REPS=1 COST_BASE_LIB="$TMP/nolib/libnone.so" \
	sh "$SRCDIR/tests/bench/tensors-cost.sh"
check_grep "  ...its row ends with the run's last lines" "nothing captured" "$TMP/.out"
check_grep "  ...the built library's row is still there" "^built  *$num" "$TMP/.out"
finish
