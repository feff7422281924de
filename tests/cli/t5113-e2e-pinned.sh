#!/bin/sh
# t5113-e2e-pinned.sh - plain pinned host memory (cuMemAllocHost,
# cuMemHostAlloc without DEVICEMAP) that a kernel reads through a pointer
# argument, as "UVA" tensors do (capture/managed.c, cap_mm_args):
# pinned-prog on the driver double, captured for real, refills a pinned
# index table between launches of gather and writes a wild index into it
# before the last one.  Checked: the tables a launch points at (an
# argument, a field of a by-value struct) are written from that launch on,
# each with a note; the staging buffer that is only copied from is not;
# replay faults in gather as the program did, shrink reduces it to one
# launch and the repro built against the double faults.
. tests/cli/test-lib.sh

. tests/cli/capture-fakes.sh
capture_on_double $H/pinned-prog.c
PATH=/usr/bin:/bin     # no compute-sanitizer
export PATH
cd "$TMP" || exit 1

check_exit "capture the program (it faults: exit 3)" 3 "$GPUREDUCE" capture --no-checkpoint -o p.bin -- \
	./prog $DBL/kernels.cubin
"$GPUREDUCE" show p.bin >p.yaml
n=$(grep -c 'kind: host' p.yaml)
[ "$n" = 3 ] && ok "three pinned allocations recorded" || fail "three pinned allocations recorded ($n)"
check_grep "a note for the index table, at gather's first launch (argument byte 16)" \
	"kernel _Z6gatherPfPKfPKxi (launch #1) takes a pointer to pinned host memory at 0x[0-9a-f]* (8000 bytes; argument byte 16): what the CPU writes into it is recorded from this launch on" p.yaml
check_grep "a note for the float table, inside struct_params' struct (byte 0)" \
	"kernel _Z13struct_params4Pair (launch #0) takes a pointer to pinned host memory at 0x[0-9a-f]* (4000 bytes; argument byte 0)" p.yaml
n=$(grep -c 'takes a pointer to pinned host memory' p.yaml)
[ "$n" = 2 ] && ok "  ...one note each, none for the staging buffer" || fail "  ...one note each, none for the staging buffer ($n)"

# the host-memory content records (flags 0x8) by their size: the index
# table's 8000 bytes before each gather (a new permutation every step;
# not before struct_params, which does not point at it), the float
# table's 4000 before each struct_params (A[0] changes)
"$GPUREDUCE" show p.bin | awk '/type: MEMCPY_H2D/ { h = 1; s = ""; next } /type:/ { h = 0 }
	h && /^  size:/ { s = $2 } h && /^  flags:/ { if ($2 == "0x8") print s }' | sort | uniq -c |
	awk '{ print $2 ":" $1 }' >hm.txt
check_grep "five content records of the index table, one before each gather" "^8000:5\$" hm.txt
check_grep "five of the float table" "^4000:5\$" hm.txt
n=$(wc -l <hm.txt | tr -d ' ')
[ "$n" = 2 ] && ok "  ...and none of the staging buffer" || fail "  ...and none of the staging buffer ($(cat hm.txt | tr '\n' ' '))"

gather_fault_shrinks p.bin

finish
