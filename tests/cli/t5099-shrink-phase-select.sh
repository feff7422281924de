#!/bin/sh
# t5099-shrink-phase-select.sh - the phase table (reducer/shrink-phases.h)
# from the command line: --phases/--skip-phases (unknown names refused
# with the valid ones, exit 2; --help names them all), skipped phases
# reported as such, the table's names in the log and repro.yaml; and the
# batched order of the data and scalars phases (issue 26: the likely
# outcome first) and the slice's snapshot written by a confirmation run
# end exactly where the one-at-a-time order ends
# (GPUREDUCE_SHRINK_SERIAL=1), in fewer rounds of replays.
. tests/cli/test-lib.sh
. tests/cli/chase-trace.sh

DBL=$BUILD/double
export GPUREDUCE_LIBCUDA=$DBL/libcuda.so.1
export GPUREDUCE_NVCC="cc -x c -w -I${CUDA:-/usr/local/cuda}/include -L$DBL -Wl,-rpath,$DBL"
unset GPUREDUCE_SANITIZER GPUREDUCE_SHRINK_SERIAL
PATH=/usr/bin:/bin; export PATH     # no compute-sanitizer
cd "$TMP" || exit 1

head() {
	printf 'process 100 /work ./app\ndevice "gpureduce CPU double"\nmodule %s/kernels.cubin 1\n' "$DBL"
}
{ head; cat <<'EOT'
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
} > oob.txt
check "mktrace oob" $MKTRACE oob.bin < oob.txt

# chase: one launch reading 8 buffers through a pointer table, the last
# pointer one past its buffer: 8 copies for the data phase
{ head; chase_trace 8 8; } > chase.txt
check "mktrace chase" $MKTRACE chase.bin < chase.txt

# fill(p, v, n): n runs past the buffer, v does not matter: of the two
# scalars one becomes 0, the other stays
{ head; cat <<'EOT'
alloc 0x7f0000100000 4000
h2d 0x7f0000100000 4000 seq
launch _Z4fillPffi 8 256 ptr:0x7f0000100000 f32:1.5 i32:2000
fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel 0 at_launch=1
EOT
} > fill.txt
check "mktrace fill" $MKTRACE fill.bin < fill.txt

# ---- --phases / --skip-phases ------------------------------------------
check_exit "an unknown phase is a usage error (exit 2)" 2 $GPUREDUCE shrink --phases=data,bogus -o u/repro.cu oob.bin
cp "$TMP/.out" unknown.out
check_grep "  ...naming it and the valid names" \
	"unknown phase 'bogus'; valid: slice,suffix,ddmin-launches,data,grid,scalars,sizes" unknown.out
n=$(wc -l < unknown.out)
if [ "$n" -eq 1 ]; then ok "  ...on one line"; else fail "  ...on one line (got $n)"; fi
if [ -e u ]; then fail "  ...and nothing written"; else ok "  ...and nothing written"; fi
check_exit "--skip-phases with a step (verify) is refused too" 2 $GPUREDUCE shrink --skip-phases=verify oob.bin
check "shrink --help" $GPUREDUCE shrink --help
cp "$TMP/.out" help.out
valid=$(sed -n "s/.*valid: \([a-z.,-]*\).*/\1/p" unknown.out)
missing=
for p in $(echo "$valid" | tr , ' '); do
	grep -q -- "$p" help.out || missing="$missing $p"
done
if [ -n "$valid" ] && [ -z "$missing" ]; then ok "  ...--help names every phase ($valid)"; else fail "  ...--help lacks:$missing"; fi
check_grep "  ...and both options" "--skip-phases=A,B" help.out

check "shrink --skip-phases=slice,data" $GPUREDUCE shrink -j 2 --skip-phases=slice,data --log=sk.log -o sk/repro.cu oob.bin
cp "$TMP/.out" sk.out
check_grep "  ...the slice is reported skipped" "^slice .*skipped: not selected" sk.out
check_grep "  ...so the suffix and ddmin-launches ran" "^ddmin-launches .*1-minimal" sk.out
check_grep "  ...to one launch" "4 launches -> 1 launch" sk.out
check "  ...repro.yaml says data was skipped" sh -c "$YAMLFLAT sk/repro.yaml | grep -A8 '^phases/[0-9]*/name: data' | grep -q 'outcome: skipped: not selected'"
check_grep "  ...the log's phase column has the table's names" "^ *[0-9.]* ddmin-la" sk.log
check_grep "  ...the other phases ran" "^scalars .*scalars simplified" sk.out

check "shrink --phases=grid" $GPUREDUCE shrink -j 2 --phases=grid -o ph/repro.cu oob.bin
cp "$TMP/.out" ph.out
check_grep "  ...grid ran" "^grid .*grid reduced" ph.out
check_grep "  ...scalars did not" "^scalars .*skipped: not selected" ph.out
check_grep "  ...nor the slice: all 4 launches kept" "4 launches -> 4 launches" ph.out
check_grep "  ...confirm, verify and repro.cu always run" "^repro.cu .*reproduces" ph.out

# ---- the batched order ends where the serial one does -------------------
# the emitted program is the same but for its date, the count of
# candidates tested ("Reduced to:") and the phases' outcomes ("Phases:":
# batched, the slice may already zero the copies the data phase would);
# the data and scalars phases take fewer rounds (batches of replays, one
# after the other)
rounds() {   # LOG PHASE: batches the phase handed to the workers
	awk -v p="$2" '$2 == p && / batch of / { n++ } END { print n + 0 }' "$1"
}
for t in oob chase fill; do
	check "$t: shrink, batched" $GPUREDUCE shrink -j 4 --quiet --log=$t-b.log -o $t-b/repro.cu $t.bin
	check "$t: shrink, one at a time" env GPUREDUCE_SHRINK_SERIAL=1 $GPUREDUCE shrink -j 4 --quiet --log=$t-s.log -o $t-s/repro.cu $t.bin
	sed -e '/^ \* on [0-9-]* [0-9:]* UTC/d' -e '/Reduced to:/d' -e '/^ \* Phases:/d' $t-b/repro.cu > $t-b.cu
	sed -e '/^ \* on [0-9-]* [0-9:]* UTC/d' -e '/Reduced to:/d' -e '/^ \* Phases:/d' $t-s/repro.cu > $t-s.cu
	check "  ...the same repro.cu" cmp $t-b.cu $t-s.cu
	$GPUREDUCE show $t-b/repro.bin | grep -v -e '^  path:' -e '^  created' > $t-b.show
	$GPUREDUCE show $t-s/repro.bin | grep -v -e '^  path:' -e '^  created' > $t-s.show
	check "  ...the same repro.bin (show, but for its path and time)" cmp $t-b.show $t-s.show
done
for t in oob chase; do
	b=$(rounds $t-b.log data); s=$(rounds $t-s.log data)
	if [ "$b" -lt "$s" ]; then ok "$t: data in fewer rounds ($b, one at a time $s)"; else fail "$t: data rounds $b, one at a time $s"; fi
done
# the slice's snapshot was written by the first confirmation run on its
# way to the fault (no process of its own: confirm ran 2 replays a
# placement, not 3); the slice phase ran one round, not two (the
# snapshot, then the candidate);
# that round was the slice with its copies as zeros, alone (the last step
# of the data phase's chain of zeros: one fault where the slice, its run of
# zeros and the data phase would have cost four), and it faulted
check_grep "oob: the slice took the snapshot a confirmation run wrote" \
	"slice  *snapshot before event 12: the one a confirmation run wrote on its way" oob-b.log
check_grep "  ...which faulted after writing it" "confirm  *run of oob.bin: CUDA_ERROR_ILLEGAL_ADDRESS, its snapshot written on the way" oob-b.log
c=$(grep -c "confirm  *run of oob.bin" oob-b.log)
if [ "$c" -eq 4 ]; then ok "  ...2 replays for each of the two placements tried"; else fail "  ...$c confirmation replays (2 placements x 2 expected)"; fi
b=$(awk '$2 == "slice" && / batch of | [0-9]+ runs? of / { n++ } END { print n + 0 }' oob-b.log)
s=$(awk '$2 == "slice" && / batch of | [0-9]+ runs? of / { n++ } END { print n + 0 }' oob-s.log)
if [ "$b" -eq 1 ] && [ "$s" -eq 2 ]; then ok "  ...one round in the slice (one at a time: $s)"; else fail "  ...slice rounds $b, one at a time $s"; fi
check_grep "  ...a batch of one job" "slice  *batch of 1 jobs (1 candidates)" oob-b.log
f=$(awk '$2 == "slice" && / s in the worker\)$/ && /: CUDA_ERROR_/ { n++ } END { print n + 0 }' oob-b.log)
if [ "$f" -eq 1 ]; then ok "  ...one faulting replay in the slice"; else fail "  ...$f faulting replays in the slice"; fi
check_grep "  ...the slice says its copies are zeros" "slice (reduced to one launch, copies in as zeros)" oob-b/repro.cu
d=$(awk '$2 == "data" && / s in the worker\)$/ { n++ } END { print n + 0 }' oob-b.log)
if [ "$d" -eq 0 ]; then ok "  ...so the data phase replayed nothing"; else fail "  ...the data phase replayed $d"; fi
check_grep "chase: seven sources zeroed, the table kept" "buffer 7: 4096 B" chase-b/repro.cu
b=$(rounds fill-b.log scalars); s=$(rounds fill-s.log scalars)
if [ "$b" -le "$s" ]; then ok "fill: scalars in no more rounds ($b, one at a time $s)"; else fail "fill: scalars rounds $b, one at a time $s"; fi
check_grep "fill: v became 0, n stayed" "the program passed 1.5: the fault does not depend on it" fill-b/repro.cu

finish
