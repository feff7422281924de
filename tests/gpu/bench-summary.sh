#!/bin/bash
# bench-summary.sh - the end of `make bench`: the figures the bench parts
# left under $BENCH_OUT ($BUILD/bench), side by side in one place, so that
# the two capture figures users decide by are read in one table: the
# host-fed training loop (bench-hostfed.sh) beside the bundled
# samples/torchvision-long (bench-trace.sh), each capture over blocking
# launches (CUDA_LAUNCH_BLOCKING=1) on the training loop's own seconds;
# then shrink's median and max over gpu-test's shrinks (bench.sh) and hunt
# beside compute-sanitizer (bench-hunt.sh).
#
# It reads only the parts' summary files (hostfed/summary.txt,
# trace/summary.txt, phases-gpu-test.txt, hunt/summary.txt); a part that
# did not run (or ran in another device call whose build/ is gone) is
# printed as "not run" with the command that makes it.  The ratios are
# recomputed from the medians with three decimals (the parts print two).
# Nothing is judged here: ends with "1 passed, 0 failed" when at least
# one part's figures were found, "0 passed, 1 failed" when none was.
#
# Usage: tests/gpu/bench-summary.sh        Env: BENCH_OUT, BUILD
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

OUT=${BENCH_OUT:-$BUILD/bench}
case $OUT in /*) ;; *) OUT=$GR_ROOT/$OUT ;; esac
TAB=$(mktemp) || exit 2
trap 'rm -f "$TAB"' EXIT
found=0

# ratio3 A B: A / B with three decimals, or n/a
ratio3() {
	awk -v a="$1" -v b="$2" 'BEGIN {
		if (a == "" || b == "" || a !~ /^[0-9.]+$/ || b !~ /^[0-9.]+$/ || b + 0 == 0) print "n/a"
		else printf "%.3f\n", a / b }'
}
# verdict R GOAL: met / NOT met / n/a
verdict() {
	awk -v r="$1" -v g="$2" 'BEGIN { if (r == "n/a") print "n/a"; else if (r + 0 <= g + 0) print "met"; else print "NOT met" }'
}

echo "workload|blocking s|capture s|capture / blocking|goal|rounds|from" >"$TAB"

# row LABEL LINE PAIR ROUNDS GOAL PART: one table row from a part's summary
# line (sed patterns: PAIR matches it with blocking's seconds in \1 and
# capture's in \2, ROUNDS with the rounds in \1); a part with no line is
# "not run".  Returns 1 then.
row() {
	local b c n r
	if [ -z "$2" ]; then
		echo "$1|-|-|not run|<= $5|-|make $6" >>"$TAB"
		return 1
	fi
	b=$(printf '%s\n' "$2" | sed -n "s/$3/\1/p")
	c=$(printf '%s\n' "$2" | sed -n "s/$3/\2/p")
	n=$(printf '%s\n' "$2" | sed -n "s/$4/\1/p")
	r=$(ratio3 "$c" "$b")
	echo "$1|${b:-?}|${c:-?}|${r}x|<= $5: $(verdict "$r" "$5")|${n:-?}|$6" >>"$TAB"
}

# bench-hostfed: "hostfed: median loop seconds over B/C/F/L rounds:
# blocking X s, capture Y s (...)"
f=$OUT/hostfed/summary.txt
row "host-fed ResNet-18 (tests/gpu/hostfed.py)" "$(grep -a '^hostfed: median loop seconds' "$f" 2>/dev/null | head -n 1)" \
	'.*: blocking \([0-9.]*\) s, capture \([0-9.]*\) s .*' '.* over \([0-9]*\/[0-9]*\)\/.*' 1.05 bench-hostfed && found=1
rr=$(grep -a '^hostfed: capture over blocking, round by round' "$f" 2>/dev/null | sed 's/^hostfed: capture over blocking, //')

# bench-trace: "capture overhead (...; median of P/C): plain X s, capture Y s, ratio Zx ..."
row "samples/torchvision-long (bounded capture)" "$(grep -a '^capture overhead' "$OUT/trace/summary.txt" 2>/dev/null | head -n 1)" \
	'.*): plain \([0-9.]*\) s, capture \([0-9.]*\) s, ratio.*' '.*median of \([0-9]*\/[0-9]*\)).*' 1.10 bench-trace && found=1

echo "== make bench: summary (figures under $OUT)"
echo "capture on training loops, the loop's own seconds (start-up left out), medians:"
print_table "$TAB"
[ -n "$rr" ] && echo "  host-fed loop, $rr"

# shrink: bench.sh's phases of gpu-test's shrinks (NAME SECONDS ...)
f=$OUT/phases-gpu-test.txt
if [ -s "$f" ]; then
	awk '{ print $2 }' "$f" | sort -g | awk '{ v[NR] = $1 } END {
		if (NR) printf "shrink (gpu-test'"'"'s shrinks): median %.2f s, max %.2f s over %d samples (goal: median < 5 s, none > 10 s)\n",
			(NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2), v[NR], NR }'
	found=1
else
	echo "shrink: not run (make gpu-test, then make bench)"
fi

f=$OUT/hunt/summary.txt
if [ -s "$f" ]; then
	echo "hunt beside compute-sanitizer memcheck (wall seconds, findings):"
	cat "$f"
	found=1
else
	echo "hunt beside compute-sanitizer: not run (make bench-hunt)"
fi
if [ "$found" -eq 1 ]; then echo "1 passed, 0 failed"; else echo "0 passed, 1 failed"; exit 1; fi
