#!/bin/sh
# t5106-hunt-late-blocks.sh - `gpureduce hunt` on a trace whose allocator
# blocks came late (format 1.6: `capture --tensors` in its events mode
# writes them behind a BLOCK_BATCH after later launches): the decoder puts
# them back before their launch, so hunt finds exactly what it finds in the
# trace that has them in place (t5100's three silent overruns).  When the
# blocks are known only up to a launch (the process died before the next
# fetch), the launches after it are hunted with no blocks: their overruns
# inside the segment go unseen, and nothing is reported that is not there.
. tests/cli/test-lib.sh

on_double nvcc no-sanitizer plain-path

SEG=0x7f0000000000
A=0x7f0000000000; B=0x7f0000001000; C=0x7f0000002000
D=0x7f0000003000; E=0x7f0000004000; F=0x7f0000005000
IN=0x7f0000400000
blocks() {
	cat <<EOT
block $B 4096 $SEG at=/home/u/train.py:11:main
block $C 4096 $SEG at=/home/u/train.py:12:main
block $D 4096 $SEG at=/home/u/train.py:13:main
block $E 4096 $SEG at=/home/u/train.py:14:main
block $F 2048 $SEG at=/home/u/train.py:15:main
EOT
}
# $1: where the blocks B..F go: "inplace" (before launch #0), or "late K":
# after launch #2 behind a BLOCK_BATCH naming launch #0, known before K
mk() {
	train_trace_head $SEG $IN 0x3f
	cat <<EOT
block $A 3600 $SEG initial at=/home/u/train.py:10:main
EOT
	[ "$1" = inplace ] && blocks
	cat <<EOT
h2d $E 4096 0xff
launch _Z13scale_nocheckPfPKfi 4 256 ptr:$A ptr:$IN i32:1024 frame=/home/u/train.py:20:main
launch _Z13scale_nocheckPfPKfi 5 256 ptr:$B ptr:$IN i32:1024 frame=/home/u/train.py:21:main
launch _Z7add_onePfi 4 256 ptr:$C i32:1024 frame=/home/u/train.py:22:main
EOT
	if [ "$1" = late ]; then
		echo "blockbatch 0 $2"
		blocks
		echo "blockbatch 3 $2"
	fi
	cat <<EOT
launch _Z6gatherPfPKfPKxi 2 256 ptr:$C ptr:$D ptr:$E i32:512 frame=/home/u/train.py:23:main
launch _Z13scale_nocheckPfPKfi 3 256 ptr:$F ptr:$IN i32:512 frame=/home/u/train.py:24:main
end 0
EOT
}
mk inplace >in.txt
mk late 9 >late.txt
mk late 2 >cut.txt
for n in in late cut; do
	check "mktrace: $n" $MKTRACE $n.bin <$n.txt
done
check "show: the late trace's blocks are before launch #0" $GPUREDUCE show late.bin
awk '/^  type:/ { t = $2 } /^  (seq|addr):/ && (t == "LAUNCH" || t == "BLOCK_ALLOC") { print t, $2 }' \
	"$TMP/.out" | head -7 | tail -6 >order.txt
printf 'BLOCK_ALLOC %s\nBLOCK_ALLOC %s\nBLOCK_ALLOC %s\nBLOCK_ALLOC %s\nBLOCK_ALLOC %s\nLAUNCH 0\n' \
	$B $C $D $E $F >want.txt
if cmp -s want.txt order.txt; then ok "  ...in order"; else fail "  ...in order"; diff want.txt order.txt | sed 's/^/    | /'; fi

check_exit "hunt of the trace with its blocks in place: exit 1" 1 $GPUREDUCE hunt --no-shrink -o o1 in.bin
grep "^finding" "$TMP/.out" | sed 's/[^ ]*\.bin//g' >f-in.txt
check_exit "hunt of the trace with late blocks: exit 1" 1 $GPUREDUCE hunt --no-shrink -o o2 late.bin
grep "^finding" "$TMP/.out" | sed 's/[^ ]*\.bin//g' >f-late.txt
n=$(grep -c "^finding" f-in.txt)
[ "$n" = 3 ] && ok "three findings with the blocks in place" || fail "$n findings with the blocks in place, not 3"
if cmp -s f-in.txt f-late.txt; then ok "the same findings with late blocks"
else fail "the same findings with late blocks"; diff f-in.txt f-late.txt | sed 's/^/    | /'; fi

# known before launch #2 only: launches #3 (the gather) and #4 (F's
# overrun) have no blocks; #1's overrun of B is still found
check_exit "hunt of the trace cut at launch #2: exit 1" 1 $GPUREDUCE hunt --no-shrink -o o3 cut.bin
grep "^finding" "$TMP/.out" >f-cut.txt
n=$(grep -c "^finding" f-cut.txt)
[ "$n" = 1 ] && ok "  ...one finding" || fail "  ...$n findings, not 1"
check_grep "  ...the overrun of B at launch #1" "^finding 1: .*launch #1 scale_nocheck" f-cut.txt
finish
