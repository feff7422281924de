#!/bin/sh
# t5095-stored-pointers-shift.sh - device pointers stored in copied bytes
# (a table of pointers, as a pointer-chasing kernel walks) are relocated
# like launch words: replay runs chase() clean, a snapshot reads them back
# as captured addresses, repro.cu points them at its own buffers; words that
# look like device addresses but match no buffer are counted; the shifted
# placement test mode (--shift, GPUREDUCE_SHIFT=1) replays, snapshots and
# shrinks with every buffer away from its captured address and offsets.
. tests/cli/test-lib.sh

DBL=$BUILD/double
CUDA=${CUDA:-/usr/local/cuda}
CC=${CC:-cc}
export GPUREDUCE_LIBCUDA=$DBL/libcuda.so.1
PATH=/usr/bin:/bin     # no compute-sanitizer
export PATH
unset GPUREDUCE_SANITIZER GPUREDUCE_SHIFT
cd "$TMP" || exit 1

# A: 1024 floats; OUT: 2 floats; T: a table of 2 pointers into A.  The
# addresses are not ones this process maps: an unrelocated pointer faults.
trace() {   # NAME SECOND-POINTER [fault]
	{ cat <<EOT
process 100 /work ./app
device "gpureduce CPU double"
module $DBL/kernels.cubin 1
alloc 0x5a0000100000 4096
alloc 0x5a0000200000 64
alloc 0x5a0000300000 64
h2d 0x5a0000100000 4096 seq
h2d 0x5a0000300000 16 u64:0x5a0000100000,$2
launch _Z7add_onePfi 1 32 ptr:0x5a0000900000 i32:0
launch _Z5chasePPKfPfi 1 32 ptr:0x5a0000300000 ptr:0x5a0000200000 i32:2
EOT
	if [ "$3" = fault ]; then
		echo "fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuCtxSynchronize 1 at_launch=0"
	else
		echo "end 0"
	fi
	} > $1.txt
	check "mktrace $1" sh -c "$MKTRACE -v $1.bin < $1.txt > $1.events"
}
trace ok 0x5a0000100004
trace bad 0x5a0000101000 fault     # one past A's end: the guard

check_exit "a table of stored pointers replays clean: they were relocated" 0 $GPUREDUCE replay --guard=end ok.bin
check_grep "  ...coverage: 2 launch words + 2 stored" "relocation: 4 pointer word(s) relocated" "$TMP/.out"
check_grep "  ...the stray launch word is counted" "1 word(s) looked like device addresses but matched no buffer" "$TMP/.out"
last=$(grep '^replay:' "$TMP/.out" | tail -n 1)
case $last in "replay: ran clean"*) ok "  ...and the outcome is the last replay: line (scripts read it)" ;;
*) fail "the last replay: line is '$last'" ;; esac
check_exit "  ...and with layout placement" 0 $GPUREDUCE replay --guard=layout ok.bin
check_exit "the one-past-the-end stored pointer faults at A's guard" 1 $GPUREDUCE replay --guard=end bad.bin
check_grep "  ...in chase" "in _Z5chasePPKfPfi: CUDA_ERROR_ILLEGAL_ADDRESS" "$TMP/.out"

# snapshots read stored pointers back as captured addresses
EV=$(awk '$2 == "LAUNCH" { e = $1 } END { print e }' ok.events)
check "snapshot before chase" $GPUREDUCE replay --guard=end --stop-before=$EV --snapshot=snap.bin ok.bin
check "show the snapshot" sh -c "'$GPUREDUCE' show snap.bin > snap.yaml"
check_grep "  ...the table holds captured addresses again" "+0x8: alloc#[0-9]+0x4 (device, 4096 bytes)" snap.yaml
check_exit "  ...and the snapshot replays clean" 0 $GPUREDUCE replay --guard=end snap.bin

# repro.cu relocates the stored pointers too
check "shrink the faulting trace" $GPUREDUCE shrink -j 2 --quiet -o r/repro.cu bad.bin
check_grep "  ...the repro rewrites the stored pointer" "a stored pointer: captured 0x5a0000101000" r/repro.cu
check "  ...compiles against the double" $CC -x c -w -I$CUDA/include -o r/repro r/repro.cu -L$DBL -Wl,-rpath,$DBL -lcuda
check_exit "  ...and faults" 1 ./r/repro

# Long tables: 5000 rows into A (20480 bytes), the last one past A's end.
# repro.cu relocates every row (it stopped at 4096 before; the rest then
# faulted at their captured addresses, at row 4096) and writes rows at one
# stride as a loop, the rest as a table, not 5000 lines.
long_table() {   # NAME ROW-EXPR (awk, of i)
	{ cat <<EOT
process 100 /work ./app
device "gpureduce CPU double"
module $DBL/kernels.cubin 1
alloc 0x5a0000100000 20480
alloc 0x5a0000200000 20480
alloc 0x5a0000400000 40000
h2d 0x5a0000100000 20480 seq
EOT
	awk -v n=5000 "BEGIN { printf \"h2d 0x5a0000400000 40000 u64:\"; for (i = 0; i < n; i++) {
		v = i == n - 1 ? 20480 : 4 * ($2); printf \"%s0x5a00001%05x\", i ? \",\" : \"\", v }; print \"\" }"
	cat <<EOT
launch _Z5chasePPKfPfi 5 1000 ptr:0x5a0000400000 ptr:0x5a0000200000 i32:5000
fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuCtxSynchronize 0 at_launch=0
EOT
	} > $1.txt
	check "mktrace $1" sh -c "$MKTRACE $1.bin < $1.txt"
	check "shrink $1" $GPUREDUCE shrink -j 2 --quiet -o $1/repro.cu $1.bin
	check "  ...its repro compiles" $CC -x c -w -I$CUDA/include -o $1/repro $1/repro.cu -L$DBL -Wl,-rpath,$DBL -lcuda
	check_exit "  ...and faults" 1 env DOUBLE_VERBOSE=1 ./$1/repro
	check_grep "  ...at the last row, past A's end (every row relocated)" "block (4,0,0) thread (999,0,0)" "$TMP/.out"
	n=$(grep -c 'a stored pointer: captured' $1/repro.cu)
	if [ "$n" -le 16 ]; then ok "  ...in $n single line(s), not one per row"; else fail "$n single stored-pointer lines"; fi
}
long_table rows 'i'
check_grep "  ...the rows at one stride are one loop" "4999 stored pointers, every 8 bytes from +0: buffer 0 + 4 \* i (captured 0x5a0000100000 + 4 \* i)" rows/repro.cu
check_grep "  ...the last row a line of its own" "a stored pointer: captured 0x5a0000105000" rows/repro.cu
long_table scattered '(i * 7919) % 4999'
check_grep "  ...rows at no one stride are a table" "static const long long sp_\[\]\[3\]" scattered/repro.cu
check_grep "  ...of all 5000 rows" "5000 stored pointers (first captured 0x5a0000100000)" scattered/repro.cu

# shifted placement
check_exit "--shift: the clean trace still replays clean" 0 $GPUREDUCE replay --shift ok.bin
check_grep "  ...said, with every buffer shifted" "shifted placement (GPUREDUCE_SHIFT=1): 3 buffer(s) away" "$TMP/.out"
check_exit "--shift: the faulting trace faults the same way" 1 $GPUREDUCE replay --shift bad.bin
check_grep "  ...in chase" "in _Z5chasePPKfPfi: CUDA_ERROR_ILLEGAL_ADDRESS" "$TMP/.out"
check "GPUREDUCE_SHIFT=1: a snapshot" env GPUREDUCE_SHIFT=1 $GPUREDUCE replay --guard=end --stop-before=$EV --snapshot=snap2.bin ok.bin
check_exit "  ...replays clean" 0 $GPUREDUCE replay --guard=end snap2.bin
check "GPUREDUCE_SHIFT=1: shrink" env GPUREDUCE_SHIFT=1 $GPUREDUCE shrink -j 2 --quiet -o r2/repro.cu bad.bin
check_grep "  ...to one launch" "2 launches -> 1 launch," "$TMP/.out"
check "  ...its repro compiles" $CC -x c -w -I$CUDA/include -o r2/repro r2/repro.cu -L$DBL -Wl,-rpath,$DBL -lcuda
check_exit "  ...and faults" 1 ./r2/repro
[ -n "$T5091_KEEP" ] && cp -r "$TMP" "$T5091_KEEP"
finish
