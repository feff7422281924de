#!/bin/sh
# replay-cost.sh - what reading and replaying a long trace costs per launch,
# on the CPU against the driver double (issues 26 and 28: shrink's confirm
# and every hunt pass replay the whole trace; show and emit read it all).
# A trace of COST_LAUNCHES (50000) launches over 64 buffers is replayed
# with end placement and shown, and one of a fifth as many launches, each
# between an allocator block's allocation and free, is hunted; each figure is the median of COST_REPS (3) runs, in
# microseconds per launch of the whole process's wall time, so the reading
# of the trace is in it.  With COST_BASE=DIR (a build folder holding
# another build's gpureduce) the same runs of that build go side by side.
# Usage (after make, make double, make build/mktrace):
#   sh tests/bench/replay-cost.sh     (COST_KEEP=1: keep the trace, in $TMPDIR)
set -u
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$(pwd)/$BUILD ;; esac
DBL=$BUILD/double
N=${COST_LAUNCHES:-50000}
REPS=${COST_REPS:-3}
for f in "$BUILD/gpureduce" "$BUILD/mktrace" "$DBL/libcuda.so.1"; do
	[ -e "$f" ] || { echo "replay-cost: $f is missing: make all double $BUILD/mktrace"; exit 2; }
done
TMP=$(mktemp -d "${TMPDIR:-/tmp}/replaycost.XXXXXX") || exit 2
trap '[ -n "${COST_KEEP:-}" ] || rm -rf "$TMP"' EXIT
GPUREDUCE_LIBCUDA=$DBL/libcuda.so.1; export GPUREDUCE_LIBCUDA

{
	printf 'process 100 /work ./app\ndevice "gpureduce CPU double"\nmodule %s/kernels.cubin 1\n' "$DBL"
	# (addresses as text: awk's %x stops at 32 bits)
	awk -v n="$N" 'BEGIN {
		for (b = 0; b < 64; b++) printf "alloc 0x7f000%02x00000 4096\n", b
		for (i = 0; i < n; i++)
			printf "launch _Z7add_onePfi 1 32 ptr:0x7f000%02x00000 i32:32\n", i % 64
		print "end 0"
	}'
} >"$TMP/t.txt"
"$BUILD/mktrace" "$TMP/t.bin" <"$TMP/t.txt" || { echo "replay-cost: mktrace failed"; exit 1; }
# hunt's trace: N/5 launches, each between an allocator block's allocation
# and its free (a caching allocator's churn), 2000 addresses in a segment
NH=$((N / 5))
{
	printf 'process 100 /work python3 train.py\ndevice "gpureduce CPU double"\nmodule %s/kernels.cubin 1\n' "$DBL"
	echo 'alloc 0x7f0000000000 16777216'
	echo 'alloc 0x7f1000000000 8192'
	awk -v n="$NH" 'BEGIN {
		for (i = 0; i < n; i++) {
			a = sprintf("0x7f0000%06x", (i % 2000) * 4096)
			printf "block %s 4096 0x7f0000000000 at=/w/train.py:%d:step\n", a, 10 + i % 50
			printf "launch _Z13scale_nocheckPfPKfi 4 256 ptr:%s ptr:0x7f1000000000 i32:1024\n", a
			printf "blockfree %s\n", a
		}
		print "end 0"
	}'
} >"$TMP/h.txt"
"$BUILD/mktrace" "$TMP/h.bin" <"$TMP/h.txt" || { echo "replay-cost: mktrace failed (hunt's trace)"; exit 1; }

# per_launch N CMD...: median of REPS wall times of CMD, in us per launch of N
per_launch() {
	n=$1; shift
	i=0
	while [ $i -lt "$REPS" ]; do
		s=$(date +%s.%N)
		"$@" >/dev/null 2>&1
		e=$(date +%s.%N)
		echo "$s $e"
		i=$((i + 1))
	done | awk -v n="$n" '{ v[NR] = ($2 - $1) * 1e6 / n } END {
		for (i = 1; i <= NR; i++) for (j = i + 1; j <= NR; j++) if (v[j] < v[i]) { x = v[i]; v[i] = v[j]; v[j] = x }
		printf "%.2f", v[int((NR + 1) / 2)] }'
}
row() {   # NAME GPUREDUCE
	printf '%-14s replay (end placement) %8s us/launch   show %8s us/launch   hunt %8s us/launch\n' "$1" \
		"$(per_launch "$N" "$2" replay --guard=end "$TMP/t.bin")" "$(per_launch "$N" "$2" show "$TMP/t.bin")" \
		"$(per_launch "$NH" env PATH=/usr/bin:/bin "$2" hunt --no-shrink --no-diagnose "$TMP/h.bin")"
}
echo "replay-cost: $N launches, $(wc -c <"$TMP/t.bin" | tr -d ' ') trace bytes (hunt: $NH launches and blocks), median of $REPS"
row "this build" "$BUILD/gpureduce"
[ -n "${COST_BASE:-}" ] && row "$COST_BASE" "$COST_BASE/gpureduce"
exit 0
