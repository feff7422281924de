#!/bin/sh
# t5110-hunt-recycled-blocks.sh - hunt's replays recycle a freed block's
# range for the next block of its size (replay_opts.recycle, as a caching
# allocator reuses a block; issue 28: placing and freeing each block was
# most of a replay of a training loop on the H200).  A recycled range
# keeps its guard: a loop whose second step overruns a block that took
# the first step's range is still found, at that launch, and the
# replays say they recycled.  Replay and shrink never recycle: a stale
# pointer into a freed buffer still faults after a buffer of the same
# size was placed (the use-after-free samples depend on it).
. tests/cli/test-lib.sh

on_double nvcc no-sanitizer plain-path

SEG=0x7f0000000000
B=0x7f0000001000   # each step's tensor, 4096 bytes, the same block every step
N=0x7f0000002000   # its neighbour, 4096
IN=0x7f0000400000
# $1: the grid of step 3's scale (4: in bounds, 5: a block past the end)
mk() {
	train_trace_head $SEG $IN 0x3f
	cat <<EOT
block $N 4096 $SEG initial at=/home/u/train.py:9:main
block $B 4096 $SEG at=/home/u/train.py:10:main
launch _Z13scale_nocheckPfPKfi 4 256 ptr:$B ptr:$IN i32:1024 frame=/home/u/train.py:20:main
blockfree $B
block $B 4096 $SEG at=/home/u/train.py:10:main
launch _Z7add_onePfi 4 256 ptr:$B i32:1024 frame=/home/u/train.py:21:main
blockfree $B
block $B 4096 $SEG at=/home/u/train.py:10:main
launch _Z13scale_nocheckPfPKfi $1 256 ptr:$B ptr:$IN i32:1024 frame=/home/u/train.py:22:main
blockfree $B
end 0
EOT
}
mk 5 >bug.txt
mk 4 >clean.txt
check "mktrace: the buggy loop" $MKTRACE bug.bin <bug.txt
check "mktrace: the clean loop" $MKTRACE clean.bin <clean.txt

check_exit "hunt the buggy loop: exit 1 (a finding)" 1 env GPUREDUCE_REPLAY_PROFILE=1 \
	$GPUREDUCE hunt --no-shrink -o o1 bug.bin
cp "$TMP/.out" bug.out
n=$(grep -c "^finding" bug.out)
[ "$n" = 1 ] && ok "  ...one finding" || fail "  ...one finding ($n)"
check_grep "  ...the third step's launch, the one that overruns" "^finding 1: .*launch #2 .*scale_nocheck" bug.out
check_grep "  ...the replays put later blocks in freed ones' ranges" \
	"replay profile: buffers placed in a freed one's range (recycled): [1-9]" bug.out
check_exit "GPUREDUCE_HUNT_RECYCLE=0: the same finding" 1 env GPUREDUCE_REPLAY_PROFILE=1 GPUREDUCE_HUNT_RECYCLE=0 \
	$GPUREDUCE hunt --no-shrink -o o0 bug.bin
check_grep "  ...the third step's launch" "^finding 1: .*launch #2 .*scale_nocheck" "$TMP/.out"
check_no_grep "  ...nothing recycled" "recycled" "$TMP/.out"
check_exit "hunt the clean loop: exit 0" 0 env GPUREDUCE_REPLAY_PROFILE=1 $GPUREDUCE hunt --no-shrink -o o2 clean.bin
check_grep "  ...with recycled ranges too" "recycled): [1-9]" "$TMP/.out"
check_grep "  ...clean" "clean (no launch faulted" "$TMP/.out"

# replay does not recycle: a stale pointer faults after a same-size buffer
cat >uaf.txt <<EOT
process 100 /work ./prog
device "gpureduce CPU double"
module $BUILD/double/kernels.cubin 1
alloc 0x7f0000600000 4096
launch _Z7add_onePfi 4 256 ptr:0x7f0000600000 i32:1024
free 0x7f0000600000
alloc 0x7f0000700000 4096
launch _Z7add_onePfi 4 256 ptr:0x7f0000700000 i32:1024
launch _Z7add_onePfi 4 256 ptr:0x7f0000600000 i32:1024
end 0
EOT
check "mktrace: a use after free" $MKTRACE uaf.bin <uaf.txt
check_exit "replay --guard=end: the stale pointer faults" 1 env GPUREDUCE_REPLAY_PROFILE=1 \
	$GPUREDUCE replay --guard=end uaf.bin
check_grep "  ...at the launch that uses it" "launch #2" "$TMP/.out"
check_no_grep "  ...nothing recycled" "recycled" "$TMP/.out"

finish
