#!/bin/sh
# t5108-integer-words.sh - an argument word that only looks like a pointer
# (format 1.7, NONPTR).  dims_fill(Dims d, float *out) takes a struct
# { int n; int unused; }: the host sets n and leaves `unused` as the stack
# had it, as cuDNN's nchwToNhwcKernel does.  Read as one 8-byte word,
# {64, 0x7fd5} is 0x00007fd5_00000040, inside the 80 MiB buffer captured
# at 0x7fd4fe000000; "relocating" it turned n into an address's low half
# and hunt reported cuDNN's layout kernels on clean ResNet runs.  The
# launch of the same kernel from another thread holds {64, 0}: a small
# value, so the word is an integer in every launch of that kernel.
# Checked: replay relocates the word only when nothing shows it is an
# integer; a NONPTR record says so for a trace that has no such launch;
# show leaves it unannotated; shrink's one-launch slice keeps the record
# (the writer emits it), and repro.cu passes the integer as it was.
. tests/cli/test-lib.sh

CUDA=${CUDA:-/usr/local/cuda}
CC=${CC:-cc}
unset GPUREDUCE_SHIFT
on_double no-sanitizer plain-path   # no compute-sanitizer

K=_Z9dims_fill4DimsPf
trace_head() {
	cat <<EOT
process 100 /work ./app
device "gpureduce CPU double"
module $DBL/kernels.cubin 1
alloc 0x7fd4fe000000 0x5000000
alloc 0x7fd600000000 256
EOT
}
# the main thread's launch: n = 64 beside the high half of a host address
MAIN="launch $K 1 256 u64:0x00007fd500000040 ptr:0x7fd600000000 tid=1"
# the other thread's: n = 64 beside zeros
OTHER="launch $K 1 256 u64:0x40 ptr:0x7fd600000000 tid=2"

{ trace_head; echo "$MAIN"; echo "$OTHER"; echo "end 0"; } > both.txt
{ trace_head; echo "$MAIN"; echo "end 0"; } > alone.txt
{ trace_head; echo "nonptr $K 0"; echo "$MAIN"; echo "end 0"; } > said.txt
for t in both alone said; do
	check "mktrace $t" sh -c "$MKTRACE $t.bin < $t.txt"
done

check_exit "both launches replay clean" 0 $GPUREDUCE replay --guard=end both.bin
check_grep "  ...only the two out pointers are relocated: the other launch shows the word is an integer" \
	"relocation: 2 pointer word(s) relocated" "$TMP/.out"
# With nothing to tell, the word is taken for a pointer (the rule before
# 1.7): n becomes the low half of the buffer's replay address, and the
# kernel faults or writes nothing depending on where the double mapped
# it (ASLR), so only the count is checked.
$GPUREDUCE replay --guard=end alone.bin > alone.out 2>&1
check_grep "the main thread's launch alone: its word is relocated" \
	"relocation: 2 pointer word(s) relocated" alone.out
check_exit "a NONPTR record says it for a trace without such a launch" 0 $GPUREDUCE replay --guard=end said.bin
check_grep "  ...one pointer relocated: out" "relocation: 1 pointer word(s) relocated" "$TMP/.out"

check "show both.bin" sh -c "'$GPUREDUCE' show both.bin > both.yaml"
check "show alone.bin" sh -c "'$GPUREDUCE' show alone.bin > alone.yaml"
check_grep "  ...alone: the word is annotated as a pointer into the 80 MiB buffer" "ptr: alloc#0+0x2000040" alone.yaml
check_exit "  ...both: the integer word is not annotated" 1 grep -q "ptr: alloc#0+0x2000040" both.yaml
check_grep "  ...both: it is listed among the integer words, with what it would point into" \
	"+0x0: 0x00007fd500000040 (alloc#0+0x2000040" both.yaml
check_exit "  ...alone: no integer words listed" 1 grep -q "int_words" alone.yaml
check_exit "GPUREDUCE_NONPTR_EVIDENCE=0: the launches' evidence is not taken" 0 \
	env GPUREDUCE_NONPTR_EVIDENCE=0 $GPUREDUCE replay --guard=end said.bin
check_grep "  ...but a record still is" "relocation: 1 pointer word(s) relocated" "$TMP/.out"
# both: the integer is relocated again; n then runs past out (a fault in
# the first launch) or is below zero (3 words relocated, clean), as the
# double mapped the buffer (ASLR)
env GPUREDUCE_NONPTR_EVIDENCE=0 $GPUREDUCE replay --guard=end both.bin > noev.out 2>&1
if grep -q "relocation: 3 pointer word(s) relocated" noev.out || grep -q "faulted at event .* (launch #0)" noev.out; then
	ok "  ...both: the integer word is relocated again"
else
	fail "  ...both: the integer word is relocated again"; sed 's/^/    | /' noev.out
fi
check "show said.bin" sh -c "'$GPUREDUCE' show said.bin > said.yaml"
check_grep "  ...the record is shown" "type: NONPTR" said.yaml
check_grep "  ...with its word's offset" "word: 0" said.yaml

# A fault in the launch whose word looks like a pointer: n = 100 floats
# into a 64-float buffer.  The other thread's launch (n = 64, clean)
# comes first; shrink slices to the faulting launch alone, and the slice
# must still know its word is an integer.
BAD="launch $K 1 256 u64:0x00007fd500000064 ptr:0x7fd600000000 tid=1"
{ trace_head; echo "$OTHER"; echo "$BAD"; echo "fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel 1 at_launch=1"; } > bad.txt
check "mktrace bad" sh -c "$MKTRACE bad.bin < bad.txt"
check_exit "the overrun faults in replay" 1 $GPUREDUCE replay --guard=end bad.bin
check_grep "  ...in dims_fill" "in $K: CUDA_ERROR_ILLEGAL_ADDRESS" "$TMP/.out"
check "shrink it" $GPUREDUCE shrink -j 2 --quiet -o r/repro.cu bad.bin
check_grep "  ...to the faulting launch" "2 launches -> 1 launch," "$TMP/.out"
check "show the reduced trace" sh -c "'$GPUREDUCE' show r/repro.bin > r.yaml"
check_grep "  ...it carries the NONPTR record" "type: NONPTR" r.yaml
n=$(grep -c "put_ptr(args, " r/repro.cu)
if [ "$n" = 1 ]; then
	ok "  ...repro.cu relocates one word, out"
else
	fail "  ...repro.cu relocates $n words (want 1: out, not the integer at byte 0)"
fi
check_grep "  ...and passes the struct's bytes as captured" "0x64, 0x00, 0x00, 0x00, 0xd5, 0x7f, 0x00, 0x00" r/repro.cu
check "  ...repro.cu compiles against the double" $CC -x c -w -I$CUDA/include -o r/repro r/repro.cu -L$DBL -Wl,-rpath,$DBL -lcuda
check_exit "  ...and faults: n is 100 again" 1 ./r/repro

# The other way round: an array of pointers whose unused entries hold
# what the stack had (PyTorch's TensorListMetadata), a small integer
# among them.  struct_params(Pair{a, b, n}) with n = 0 leaves b unused
# and it holds 0x40; the next launch has a real b (low half 0x12300000).
# That b is an address, so the word is a pointer slot: it is relocated.
{ cat <<EOT
process 100 /work ./app
device "gpureduce CPU double"
module $DBL/kernels.cubin 1
alloc 0x7fd600000000 1024
alloc 0x7fd612300000 1024
launch _Z13struct_params4Pair 1 512 hex:00000000d67f0000400000000000000000000000d57f0000
launch _Z13struct_params4Pair 1 512 hex:00000000d67f000000003012d67f00001000000000000000
end 0
EOT
} > slot.txt
check "mktrace slot" sh -c "$MKTRACE slot.bin < slot.txt"
check_exit "an unused pointer slot holding 0x40 does not make the slot an integer" 0 \
	$GPUREDUCE replay --guard=end slot.bin
check_grep "  ...b is relocated where it is a pointer (a twice, b once)" \
	"relocation: 3 pointer word(s) relocated" "$TMP/.out"
check "show slot.bin" sh -c "'$GPUREDUCE' show --no-events slot.bin > slot.yaml"
check_grep "  ...counts the pointer slot" "pointer_slots_with_small_values: 1" slot.yaml
check_grep "  ...and one integer word, n's" "integer_words: 1" slot.yaml

# hunt names the buffers a struct parameter points to (PyTorch's
# elementwise kernels pass their tensors so): struct_params(Pair{a, b, n})
# writes b[i] for i < n; the first launch (n = 16, from a thread whose
# stack left zeros beside it) is clean, in the second n = 300 runs past
# b's 256 floats; its integer word (n beside the high half of a stack
# address) is not named
{ cat <<EOT
process 100 /work ./app
device "gpureduce CPU double"
module $DBL/kernels.cubin 1
alloc 0x7fd4fe000000 0x5000000
alloc 0x7fd600000000 1024
alloc 0x7fd600100000 1024
launch _Z13struct_params4Pair 1 512 hex:00000000d67f000000001000d67f00001000000000000000
launch _Z13struct_params4Pair 1 512 hex:00000000d67f000000001000d67f00002c010000d57f0000
end 0
EOT
} > pair.txt
check "mktrace pair" sh -c "$MKTRACE pair.bin < pair.txt"
check_exit "hunt: the overrun through a struct's pointer is a finding" 1 $GPUREDUCE hunt --no-shrink pair.bin
grep '^finding 1:' "$TMP/.out" > pair.f
check_grep "  ...at the second launch" "^finding 1: launch #1 struct_params" pair.f
check_grep "  ...naming the struct's first pointer" "param 0+0x0 = allocation 0x7fd600000000 (1024 B)" pair.f
check_grep "  ...and its second" "param 0+0x8 = allocation 0x7fd600100000 (1024 B)" pair.f
check_exit "  ...but not its integer word" 1 grep -q "param 0+0x10" pair.f
finish
