#!/bin/sh
# shrink-cost.sh - where shrink's time goes, measured on the CPU against
# the driver double (issue 26 item 4).  Three sample-like traces (built
# with mktrace, as the t5xxx CLI tests build theirs):
#   oob      4 launches, an unchecked overrun at the last (t5000's first)
#   gather   one launch, a wild index in a 64 KiB table (t5030's)
#   gather3  gather with its output copied in first: three copies, only
#            the last one (the indices) needed
#   long     64 launches over 8 buffers before an overrun (like the
#            samples with dozens of healthy launches before the fault)
#   chase    one launch that reaches 8 buffers through a pointer table,
#            the last pointer one past its buffer (many buffers to clear)
#   fill     fill(p, v, n) with n past the buffer: two scalars, one needed
#   chase24  chase over 24 buffers (several runs of copies to zero)
#   ptrtab   chase's pointer table inside a 4 KiB copy of other words
#   structs  gather whose src is a 4 MiB array of {pointer, length}
#            structs and whose index table has one wild entry: the data
#            phase's guess keeps 262144 pointer words (a guess's words
#            were once listed in time quadratic in them: 82 s here)
# Each is shrunk with --log; the table prints, per trace, the wall seconds
# and, per phase, the replays it ran (one line per replay job in the log),
# how many of those faulted (a faulted worker is replaced: on the H200 a
# new context costs ~0.2-0.3 s and contexts are created one after another,
# replay/pool.c), its rounds (batches handed to the workers one after
# another: on the GPU each costs about one replay's time, whatever the
# batch's width) and its seconds.  The double makes runs deterministic, so replay counts
# compare exactly before/after a change; seconds are this CPU's.
# Usage (after make, make double, make build/mktrace):
#   sh tests/bench/shrink-cost.sh [TRACE...]      (default: all three)
# Env: COST_JOBS (2: shrink -j), COST_KEEP=DIR (keep the work there).
set -u
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$(pwd)/$BUILD ;; esac
GPUREDUCE=$BUILD/gpureduce
MKTRACE=$BUILD/mktrace
CUDA=${CUDA:-/usr/local/cuda}
DBL=$BUILD/double
JOBS=${COST_JOBS:-2}
for f in "$GPUREDUCE" "$MKTRACE" "$DBL/libcuda.so.1"; do
	[ -e "$f" ] || { echo "shrink-cost: $f is missing: make all double $BUILD/mktrace"; exit 2; }
done
if [ -n "${COST_KEEP:-}" ]; then
	TMP=$COST_KEEP; mkdir -p "$TMP" || exit 2
else
	TMP=$(mktemp -d "${TMPDIR:-/tmp}/shrinkcost.XXXXXX") || exit 2
	trap 'rm -rf "$TMP"' EXIT
fi
GPUREDUCE_LIBCUDA=$DBL/libcuda.so.1
GPUREDUCE_NVCC="cc -x c -w -I$CUDA/include -L$DBL -Wl,-rpath,$DBL"
export GPUREDUCE_LIBCUDA GPUREDUCE_NVCC
unset GPUREDUCE_SANITIZER
PATH=/usr/bin:/bin; export PATH     # no compute-sanitizer on the CPU

. "$(dirname "$0")/../cli/chase-trace.sh"

head() {
	printf 'process 100 /work ./app\ndevice "gpureduce CPU double"\nmodule %s/kernels.cubin 1\n' "$DBL"
}
mk_oob() {
	head; cat <<'EOT'
alloc 0x7f0000100000 4000
alloc 0x7f0000200000 4000
h2d 0x7f0000100000 4000 seq
memset 0x7f0000200000 0 4000
launch _Z7add_onePfi 4 256 ptr:0x7f0000100000 i32:1000
launch _Z5scalePfPKfi 4 256 ptr:0x7f0000200000 ptr:0x7f0000100000 i32:1000
launch _Z7add_onePfi 4 256 ptr:0x7f0000200000 i32:1000
launch _Z13scale_nocheckPfPKfi 8 256 ptr:0x7f0000200000 ptr:0x7f0000100000 i32:1000
fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel 3 at_launch=1
EOT
}
mk_gather() {
	head; cat <<'EOT'
alloc 0x7f0000100000 65536
alloc 0x7f0000200000 4000
alloc 0x7f0000300000 8000
h2d 0x7f0000100000 65536 seq
h2d 0x7f0000300000 8000 0
h2d 0x7f0000301c20 8 u64:0x10000000
launch _Z6gatherPfPKfPKxi 4 256 ptr:0x7f0000200000 ptr:0x7f0000100000 ptr:0x7f0000300000 i32:1000
fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel 0 at_launch=1
EOT
}
mk_gather3() {   # gather, its output copied in first
	mk_gather | sed '0,/^h2d /s//h2d 0x7f0000200000 4000 seq\nh2d /'
}
mk_long() {
	head
	b=0
	while [ $b -lt 8 ]; do
		printf 'alloc 0x7f000%d100000 4000\nh2d 0x7f000%d100000 4000 seq\n' $b $b
		b=$((b + 1))
	done
	i=0
	while [ $i -lt 64 ]; do
		b=$((i % 8)); c=$(((i + 3) % 8))
		if [ $((i % 2)) = 0 ]; then
			printf 'launch _Z7add_onePfi 4 256 ptr:0x7f000%d100000 i32:1000\n' $b
		else
			printf 'launch _Z5scalePfPKfi 4 256 ptr:0x7f000%d100000 ptr:0x7f000%d100000 i32:1000\n' $b $c
		fi
		i=$((i + 1))
	done
	echo 'launch _Z13scale_nocheckPfPKfi 8 256 ptr:0x7f0002100000 ptr:0x7f0005100000 i32:1000'
	echo 'fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel 64 at_launch=1'
}
mk_chase() { head; chase_trace 8 8; }
mk_chase24() { head; chase_trace 24 24; }
mk_ptrtab() { head; chase_trace 8 512; }
mk_structs() {
	head
	echo 'alloc 0x7f0000100000 64000'
	echo 'alloc 0x7f0000800000 4194304'
	echo 'alloc 0x7f0000300000 8000'
	echo 'h2d 0x7f0000100000 64000 seq'
	printf 'h2d 0x7f0000800000 4194304 u64:'
	awk 'BEGIN { for (i = 0; i < 524288; i++) printf "%s%s", i ? "," : "", i % 2 ? i : "0x7f0000100000" }'
	printf '\nh2d 0x7f0000300000 8000 u64:'
	awk 'BEGIN { for (i = 0; i < 1000; i++) printf "%s%d", i ? "," : "", i == 737 ? 100000000 : i }'
	printf '\n'
	echo 'launch _Z6gatherPfPKfPKxi 4 256 ptr:0x7f0000100000 ptr:0x7f0000800000 ptr:0x7f0000300000 i32:1000'
	echo 'fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel 0 at_launch=1'
}
mk_fill() {
	head; cat <<'EOT'
alloc 0x7f0000100000 4000
launch _Z4fillPffi 8 256 ptr:0x7f0000100000 f32:1.5 i32:2000
fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel 0 at_launch=1
EOT
}

[ $# -gt 0 ] || set -- oob gather gather3 long chase chase24 ptrtab structs fill
printf '%-8s %8s %8s %7s %7s  %s\n' trace wall_s replays faulted rounds "per phase: replays/faulted/rounds/seconds"
for n in "$@"; do
	"mk_$n" | "$MKTRACE" "$TMP/$n.bin" >/dev/null || { echo "$n: mktrace failed"; exit 2; }
	rm -rf "$TMP/$n"
	t0=$(date +%s.%N)
	"$GPUREDUCE" shrink -j "$JOBS" --quiet --log="$TMP/$n.log" -o "$TMP/$n/repro.cu" "$TMP/$n.bin" \
		>"$TMP/$n.out" 2>&1 || { echo "$n: shrink failed:"; tail -3 "$TMP/$n.out"; exit 1; }
	t1=$(date +%s.%N)
	# replay jobs: candidate lines ("  PATH: OUTCOME (S s in the worker)")
	# and whole-file runs ("run of PATH: ..."), by the log's phase column
	awk -v n="$n" -v wall="$(echo "$t1 - $t0" | bc)" -v y="$TMP/$n/repro.yaml" '
		/ s in the worker\)$/ { r[$2]++; tot++; if (!($2 in seen)) { seen[$2] = 1; ord[++k] = $2 } }
		/ s in the worker\)$/ && /: CUDA_ERROR_/ { f[$2]++; ftot++ }
		/ batch of [0-9]* jobs| [0-9]* runs of / { b[$2]++; rounds++ }
		END {
			while ((getline l < y) > 0) {
				if (l ~ /^- name:/) { split(l, a, " "); nm = a[3] }
				else if (l ~ /^  seconds:/ && nm != "") { split(l, a, " "); sec[nm] = a[2]; if (!(nm in seen)) { seen[nm] = 1; ord[++k] = nm }; nm = "" }
			}
			line = ""
			for (i = 1; i <= k; i++) line = line sprintf(" %s %d/%d/%d/%s", ord[i], r[ord[i]], f[ord[i]], b[ord[i]], (ord[i] in sec) ? sec[ord[i]] : "-")
			printf "%-8s %8.2f %8d %7d %7d %s\n", n, wall, tot, ftot, rounds, line
		}' "$TMP/$n.log"
done
