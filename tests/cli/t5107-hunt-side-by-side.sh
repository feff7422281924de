#!/bin/sh
# t5107-hunt-side-by-side.sh - hunt's two placements run side by side on
# two workers (issue 28: a clean hunt's two replays in the time of one),
# with the findings a run of one after the other (GPUREDUCE_HUNT_SERIAL=1)
# gives, in its order: the end pass's first, then the start pass's.  The
# trace (CPU driver double) holds an overrun into the neighbour block (end
# guards only), a wild write far past a block (it faults under both
# placements: one finding, the end pass's), a second overrun, and an
# underrun (start guards only).  A trace whose two replays would not fit
# the GPU it was captured on twice runs them one after the other.
. tests/cli/test-lib.sh

on_double nvcc no-sanitizer plain-path

SEG=0x7f0000000000
A=0x7f0000000000   # 4096: the wild write's tensor
B=0x7f0000001000   # 4096: overrun by a whole block (into C)
C=0x7f0000002000   # gather's output, 4096
D=0x7f0000003000   # gather's source, 4096
E=0x7f0000004000   # gather's index (long long), 4096
F=0x7f0000005000   # a later tensor overrun, 2048
IN=0x7f0000400000  # a cudaMalloc'ed input of its own, 8 MiB
NB=0x7f0000200000  # a cudaMalloc'ed buffer after the segment: the wild write
                   # lands in it, so the program ran on (hunt's layout check
                   # replays it there: clean, a finding)
# $1: the device's memory in bytes
mk() {
	cat <<EOT
process 100 /work python3 train.py
device "gpureduce CPU double" 9 0 13000 13000 $1
module $BUILD/double/kernels.cubin 1
alloc $SEG 2097152
alloc $IN 8388608
alloc $NB 2097152
h2d $IN 8192 0x3f
block $A 4096 $SEG initial at=/home/u/train.py:10:main
block $B 4096 $SEG initial at=/home/u/train.py:11:main
block $C 4096 $SEG initial at=/home/u/train.py:12:main
block $D 4096 $SEG initial at=/home/u/train.py:13:main
block $E 4096 $SEG initial at=/home/u/train.py:14:main
block $F 2048 $SEG initial at=/home/u/train.py:15:main
h2d $E 4096 0xff
launch _Z13scale_nocheckPfPKfi 5 256 ptr:$B ptr:$IN i32:1024 frame=/home/u/train.py:21:main
launch _Z13scale_nocheckPfPKfi 2052 256 ptr:$A ptr:$IN i32:1024 frame=/home/u/train.py:22:main
launch _Z6gatherPfPKfPKxi 2 256 ptr:$C ptr:$D ptr:$E i32:512 frame=/home/u/train.py:23:main
launch _Z13scale_nocheckPfPKfi 3 256 ptr:$F ptr:$IN i32:512 frame=/home/u/train.py:24:main
end 0
EOT
}
mk 150754820096 >bug.txt
check "mktrace" $MKTRACE bug.bin <bug.txt

findings() {   # LOG: the finding lines, without the hunt's own paths
	grep "^finding" "$1" | sed 's/ *$//'
}
GPUREDUCE_POOL_LOG=$TMP/side.pool; export GPUREDUCE_POOL_LOG
check_exit "hunt, side by side: exit 1" 1 $GPUREDUCE hunt --no-shrink --no-diagnose bug.bin
unset GPUREDUCE_POOL_LOG
cp "$TMP/.out" side.log
findings side.log >side.f
GPUREDUCE_POOL_LOG=$TMP/serial.pool; export GPUREDUCE_POOL_LOG
check_exit "hunt, one after the other: exit 1" 1 env GPUREDUCE_HUNT_SERIAL=1 $GPUREDUCE hunt --no-shrink --no-diagnose bug.bin
unset GPUREDUCE_POOL_LOG
cp "$TMP/.out" serial.log
findings serial.log >serial.f
n=$(wc -l <serial.f)
[ "$n" = 4 ] && ok "one after the other: four findings" || fail "one after the other: $n findings, not 4"
if cmp -s serial.f side.f; then ok "side by side: the same findings, in the same order"
else fail "side by side: other findings"; diff serial.f side.f | head -20 | sed 's/^/    | /'; fi
check_grep "  ...the overrun first, under end guards" "^finding 1: launch #0 scale_nocheck.* faulted under end guards" side.log
check_grep "  ...the wild write once, the end pass's" "^finding 2: launch #1 scale_nocheck.* faulted under end guards" side.log
check_grep "  ...the underrun last, the start pass's" "^finding 4: launch #2 gather.* faulted under start guards" side.log
# side by side, the pool runs an end and a start replay in each round (of
# those both passes take part in); one after the other, one at a time
grep -q " run 2 jobs" side.pool && ok "side by side: two replays at a time" || fail "side by side: one at a time"
grep -q " run 2 jobs" serial.pool && fail "one after the other: two at a time" || ok "one after the other: one at a time"

# --max-findings: the same findings and the same "stopped at" either way
# (at 2 and 3 the end pass reaches the bound and the start pass's findings
# go; at 4 the start pass stops at it with one pending that is dropped)
for m in 2 3 4; do
	check_exit "--max-findings=$m, side by side" 1 $GPUREDUCE hunt --no-shrink --no-diagnose --max-findings=$m bug.bin
	cp "$TMP/.out" side$m.log
	check_exit "--max-findings=$m, one after the other" 1 env GPUREDUCE_HUNT_SERIAL=1 $GPUREDUCE hunt --no-shrink \
		--no-diagnose --max-findings=$m bug.bin
	cp "$TMP/.out" serial$m.log
	findings side$m.log >a.f
	findings serial$m.log >b.f
	if cmp -s a.f b.f && [ "$(wc -l <a.f)" = $m ]; then ok "  ...$m findings, the same"
	else fail "  ...other findings"; diff b.f a.f | head -10 | sed 's/^/    | /'; fi
	grep -c "stopped at $m finding" side$m.log >a.n
	grep -c "stopped at $m finding" serial$m.log >b.n
	cmp -s a.n b.n && [ "$(cat a.n)" -ge 1 ] && ok "  ...both say they stopped at $m" ||
		fail "  ...stopped: side $(cat a.n), one after the other $(cat b.n)"
done

# a GPU with too little memory for two replays: one after the other
mk 8388608 >small.txt
check "mktrace (a small GPU)" $MKTRACE small.bin <small.txt
GPUREDUCE_POOL_LOG=$TMP/small.pool; export GPUREDUCE_POOL_LOG
check_exit "hunt on the small GPU: exit 1" 1 $GPUREDUCE hunt --no-shrink --no-diagnose small.bin
unset GPUREDUCE_POOL_LOG
findings "$TMP/.out" >small.f
cmp -s serial.f small.f && ok "  ...the same findings" || fail "  ...other findings"
grep -q " run 2 jobs" small.pool && fail "  ...but two at a time" || ok "  ...one at a time"
finish
