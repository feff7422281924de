#!/bin/sh
# t5109-hunt-integer-words.sh - hunt's integer check (reducer/hunt.c).
# dims_fill_u(DimsU d, float *out) takes { unsigned n; int unused; } and
# writes out[i] for i < n; the host leaves `unused` as the stack had it.
# Read as one word, {64, 0x7fd5} = 0x00007fd5_00000040 lies inside the
# 80 MiB buffer captured at 0x7fd4fe000000, and no launch of the kernel
# shows the word small (the decoder's rule, t5108): replay "relocates" it,
# n becomes an address's low half and the kernel runs past out's 64
# floats, a fault the program never had (cuDNN's layout kernels on clean
# ResNet runs, 2026-12-04).  hunt must check such a fault with the word
# passed as captured and not report it; a real overrun after it is still
# found, and a real overrun in the same kernel (n = 100) stays a finding.
. tests/cli/test-lib.sh

CUDA=${CUDA:-/usr/local/cuda}
unset GPUREDUCE_SHIFT
on_double no-sanitizer plain-path   # no compute-sanitizer

K=_Z11dims_fill_u5DimsUPf
head() {
	cat <<EOT
process 100 /work python3 train.py
device "gpureduce CPU double"
module $DBL/kernels.cubin 1
alloc 0x7fd4fe000000 0x5000000
alloc 0x7fd600000000 256
alloc 0x7fd600200000 4096
alloc 0x7fd600400000 4096
h2d 0x7fd600200000 4096 0x3f
EOT
}
GARBAGE="launch $K 1 256 u64:0x00007fd500000040 ptr:0x7fd600000000 frame=/home/u/train.py:20:step"
# a real overrun elsewhere: scale_nocheck over 2048 floats of 1024
SCALE="launch _Z13scale_nocheckPfPKfi 8 256 ptr:0x7fd600400000 ptr:0x7fd600200000 i32:1024 frame=/home/u/train.py:30:step"
# a real overrun in dims_fill_u itself: n = 100 past out's 64 floats
REAL="launch $K 1 256 u64:0x00007fd500000064 ptr:0x7fd600000000 frame=/home/u/train.py:40:step"

{ head; echo "$GARBAGE"; echo "end 0"; } > clean.txt
{ head; echo "$GARBAGE"; echo "$SCALE"; echo "end 0"; } > later.txt
{ head; echo "$REAL"; echo "end 0"; } > real.txt
for t in clean later real; do
	check "mktrace $t" sh -c "$MKTRACE $t.bin < $t.txt"
done

# the premise: replay takes the word for a pointer, and the launch faults
# under end guards (n is now at least 0x2000040)
check_exit "replay under end guards faults in dims_fill_u" 1 $GPUREDUCE replay --guard=end clean.bin
check_grep "  ...in dims_fill_u" "in $K" "$TMP/.out"

check_exit "hunt: clean" 0 $GPUREDUCE hunt --no-shrink clean.bin
check_grep "  ...says so, counting the fault it put down to replay" \
	"clean (no launch faulted under end or start guards but 1 that the notes put down to replay)" "$TMP/.out"
check_grep "  ...with a note on the fault it explained" \
	"^note: launch #0 dims_fill_u(DimsU, float\*) at /home/u/train.py:20 in step faulted under end guards" "$TMP/.out"
check_grep "  ...naming the word and what replay took it for" \
	"param 0+0x0 = 0x00007fd500000040 as a pointer into allocation 0x7fd4fe000000 (80.0 MiB)" "$TMP/.out"
check_grep "  ...and the integer" "its low half the integer 64, its high half 0x7fd5" "$TMP/.out"
check_exit "  ...no finding" 1 grep -q "^finding" "$TMP/.out"

# $1: TRACE.bin: hunt finds scale_nocheck's overrun (launch #1) alone and
# notes dims_fill_u's fault
scale_found_alone() {
	check_exit "hunt $1: the real overrun after it is found" 1 $GPUREDUCE hunt --no-shrink "$1"
	grep '^finding' "$TMP/.out" > found.f
	check_grep "  ...in scale_nocheck" "^finding 1: launch #1 scale_nocheck" found.f
	n=$(wc -l < found.f)
	if [ "$n" = 1 ]; then ok "  ...and only it"; else fail "  ...$n findings (want 1)"; cat found.f; fi
	check_grep "  ...the fault in dims_fill_u is a note" "^note: launch #0 dims_fill_u" "$TMP/.out"
}
scale_found_alone later.bin

# both placements side by side (the device's memory known: t5107): the
# start pass's replay of the old trace must not report what the end
# pass's check explained
sed 's/^device .*/device "gpureduce CPU double" 9 0 13000 13000 85899345920/' later.txt > side.txt
check "mktrace side" sh -c "$MKTRACE side.bin < side.txt"
scale_found_alone side.bin

check_exit "hunt: an overrun in dims_fill_u itself stays a finding" 1 $GPUREDUCE hunt --no-shrink real.bin
check_grep "  ...at its launch" "^finding 1: launch #0 dims_fill_u" "$TMP/.out"
check_exit "  ...with no note" 1 grep -q "^note:" "$TMP/.out"

# The layout check: a fault replay makes wherever it places the buffers
# is replay's own, not an overrun.  Here a NONPTR record (as a trace cut by
# an older build might carry) calls struct_params' pointer b an integer,
# so replay passes the captured address: it faults under end guards, under
# start guards and in the captured layout alike, where the program ran.
{ cat <<EOT
process 100 /work python3 train.py
device "gpureduce CPU double"
module $DBL/kernels.cubin 1
alloc 0x7fd600000000 1024
alloc 0x7fd612300000 1024
nonptr _Z13struct_params4Pair 8
launch _Z13struct_params4Pair 1 256 hex:00000000d67f000000003012d67f00001000000000000000 frame=/home/u/train.py:50:step
end 0
EOT
} > art.txt
check "mktrace art" sh -c "$MKTRACE art.bin < art.txt"
check_exit "the premise: replay in the captured layout faults too" 1 $GPUREDUCE replay --guard=layout art.bin
check_exit "hunt: clean (the fault is replay's own)" 0 $GPUREDUCE hunt --no-shrink art.bin
check_grep "  ...a note says so" \
	"^note: launch #0 struct_params(Pair) at /home/u/train.py:50 in step faulted under end guards (CUDA_ERROR_ILLEGAL_ADDRESS), and also replayed with every buffer where the program had it" "$TMP/.out"
check_exit "  ...no finding" 1 grep -q "^finding" "$TMP/.out"
sed 's/^device .*/device "gpureduce CPU double" 9 0 13000 13000 85899345920/' art.txt > artside.txt
check "mktrace artside" sh -c "$MKTRACE artside.bin < artside.txt"
check_exit "  ...side by side too: clean" 0 $GPUREDUCE hunt --no-shrink artside.bin
check_grep "  ...with the note" "^note: launch #0 struct_params(Pair) .* faulted under end guards" "$TMP/.out"
check_exit "hunt --no-layout-check: the fault is a finding" 1 $GPUREDUCE hunt --no-shrink --no-layout-check art.bin
check_grep "  ...at launch #0" "^finding 1: launch #0 struct_params" "$TMP/.out"
# where layout placement cannot apply (buffers 2 TiB apart: more than it
# reserves), the check cannot run and the fault stands
sed 's/^alloc 0x7fd600000000 1024$/alloc 0x7dd600000000 1024/; s/00000000d67f0000/00000000d67d0000/' art.txt > far.txt
check "mktrace far" sh -c "$MKTRACE far.bin < far.txt"
check_exit "  ...layout placement cannot place them" 3 $GPUREDUCE replay --guard=layout far.bin
check_exit "hunt, no layout to check in: the fault is a finding" 1 $GPUREDUCE hunt --no-shrink far.bin
check_grep "  ...at launch #0" "^finding 1: launch #0 struct_params" "$TMP/.out"
# a real overrun replays clean in the layout (it lands where it landed in
# the program) and stays a finding: real.bin above, and t5100-t5107

# the replays after the check read a trace that says the word is an
# integer (the writer emits the NONPTR record: repro.cu and shrink's
# traces, written from the same marks, know it too)
check_exit "hunt --keep-work, the clean trace" 0 $GPUREDUCE hunt --no-shrink --keep-work clean.bin
set -- clean.bin.hunt-*/hunt-base-*.bin
if [ -f "$1" ]; then ok "  ...the check's trace is kept ($1)"; else fail "  ...no hunt-base-N.bin kept"; fi
check "  ...show it" sh -c "'$GPUREDUCE' show '$1' > marks.yaml"
check_grep "  ...a NONPTR record for dims_fill_u" "kernel: $K" marks.yaml
check_grep "  ...at word 0" "word: 0" marks.yaml
check_exit "  ...and none for out (word 8: a buffer's first byte, a pointer)" 1 grep -q "word: 8" marks.yaml
check_exit "  ...it replays clean under end guards" 0 $GPUREDUCE replay --guard=end "$1"

# the first finding after the check is shrunk and its repro.cu faults
check_exit "hunt with shrink, the later trace" 1 $GPUREDUCE hunt -o h later.bin
check_grep "  ...the repro is scale_nocheck's" "scale_nocheck" h/repro.cu
finish
