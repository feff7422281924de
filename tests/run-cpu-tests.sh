#!/bin/sh
# run-cpu-tests.sh - the whole CPU suite: unit tests, then tests/cli/t*.sh.
# Prints each part's output and a final "N passed, N failed" over all parts;
# just above that line, every part that failed and its FAIL lines (at most 5
# each), so a log read from its tail (CI's) names what failed.
BUILD=${BUILD:-build}
export BUILD
log=$(mktemp)
failures=$(mktemp)
total_p=0; total_f=0
run_part() {
	name=$1; shift
	echo "== $name"
	"$@" 2>&1 | tee "$log"
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -1)
	if [ -z "$line" ]; then
		echo "$name: no summary line (crashed?)"; total_f=$((total_f + 1))
		echo "$name: no summary line (crashed?); its last line: $(tail -n 1 "$log")" >>"$failures"
		return
	fi
	p=$(echo "$line" | sed -E 's/^([0-9]+) passed.*/\1/')
	f=$(echo "$line" | sed -E 's/.* ([0-9]+) failed.*/\1/')
	total_p=$((total_p + p)); total_f=$((total_f + f))
	if [ "$f" -ne 0 ]; then
		echo "$name: $f failed" >>"$failures"
		grep '^FAIL ' "$log" | head -n 5 | sed 's/^/  /' >>"$failures"
	fi
}
run_part unit "$BUILD/unit" "$BUILD"
for t in tests/cli/t[0-9]*.sh; do
	[ -f "$t" ] || continue
	run_part "$t" sh "$t"
done
rm -f "$log"
if [ -s "$failures" ]; then
	echo "== what failed"
	cat "$failures"
fi
rm -f "$failures"
echo "$total_p passed, $total_f failed"
[ "$total_f" -eq 0 ]
