#!/bin/sh
# t5102-hunt-repeats.sh - `gpureduce hunt` on a training loop (issue 28):
# one buggy kernel launched every step from the same Python line is one
# finding, not one a step.  After a finding, hunt leaves out every later
# launch from its call site (same kernel, same Python stack; without frames
# the same kernel), says how many, and goes on to the next, different bug
# and to the start-guard pass in a few replays.  --every-launch hunts each
# launch on its own (the old way: bounded by --max-findings).  The same
# kernel from two different lines (or the same line reached from two
# callers) is two call sites, both found.  The trace written for a later
# finding (diagnose, shrink) leaves out what its replay left out, and the
# first finding still becomes a repro.cu that faults (gcc against the
# double).
. tests/cli/test-lib.sh

on_double nvcc no-sanitizer plain-path

SEG=0x7f0000000000
W=0x7f0000000000   # the buggy kernel's output, 4096: overrun by a block each step
X=0x7f0000001000   # its neighbour, 4096 (the clean kernel's)
D=0x7f0000002000   # the head's gather source, 4096 (1024 floats)
E=0x7f0000003000   # the head's index (long long), 4096
O=0x7f0000004000   # the head's output, 4096
IN=0x7f0000400000  # a cudaMalloc'ed input of its own, 8192
STEP="frame=/home/u/model.py:30:forward frame=/home/u/train.py:50:main"

# the common start; $1: the process's command line
head_() {
	train_trace_head $SEG $IN 0x3f "$1"
	cat <<EOT
block $W 4096 $SEG initial at=/home/u/train.py:10:main
block $X 4096 $SEG initial at=/home/u/train.py:11:main
block $D 4096 $SEG initial at=/home/u/train.py:12:main
block $E 4096 $SEG initial at=/home/u/train.py:13:main
block $O 4096 $SEG initial at=/home/u/train.py:14:main
h2d $E 4096 u64:1024
EOT
}
# the training loop: 20 steps of the buggy scale_nocheck (grid 5 over 1024
# floats: a block past W, into X) and a clean add_one, both with frames $1
# (the buggy one) and $2; then the head's gather, whose index 1024 reads one
# float past D (a different kernel, a different bug); a last clean launch
loop_() {
	i=0
	while [ $i -lt 20 ]; do
		echo "launch _Z13scale_nocheckPfPKfi 5 256 ptr:$W ptr:$IN i32:1024 $1"
		echo "launch _Z7add_onePfi 4 256 ptr:$X i32:1024 $2"
		i=$((i + 1))
	done
	echo "launch _Z6gatherPfPKfPKxi 1 256 ptr:$O ptr:$D ptr:$E i32:4 $3"
	echo "launch _Z7add_onePfi 4 256 ptr:$O i32:1024 $4"
}
{ head_ "python3 train.py"
  loop_ "$STEP" "frame=/home/u/model.py:31:forward frame=/home/u/train.py:50:main" \
	"frame=/home/u/model.py:40:head frame=/home/u/train.py:52:main" "frame=/home/u/train.py:53:main"
  echo "end 0"; } >loop.txt
check "mktrace: the training loop" $MKTRACE loop.bin <loop.txt
check "the loop replays clean as captured (the overruns stay inside the segment)" \
	$GPUREDUCE replay --guard=end loop.bin

# $1: a hunt log; the replay count its "hunt: ... N replay(s)" line gives
replays() {
	sed -n 's/^hunt: .* \([0-9][0-9]*\) replay(s), .*/\1/p' "$1"
}
# findings NAME N WHAT: the last command's output kept as NAME.log, its
# finding lines as NAME.txt; there must be N of them (WHAT says so)
findings() {
	cp "$TMP/.out" $1.log
	grep "^finding" $1.log >$1.txt
	_n=$(grep -c "^finding" $1.txt)
	[ "$_n" = $2 ] && ok "$3" || fail "$3 ($_n findings, not $2)"
}

# default: two findings, the repeats left out, the start pass run
check_exit "hunt of the loop: exit 1 (findings)" 1 $GPUREDUCE hunt --no-shrink loop.bin
findings d 2 "two findings"
check_grep "finding 1: the first step's launch, at its line" \
	"^finding 1: launch #0 scale_nocheck(float\*, float const\*, int) at /home/u/model.py:30 in forward faulted under end guards" d.txt
check_grep "  ...its 19 later launches from the same line left out, said so" \
	"^finding 1: .*; 19 later launches of it from the same line left out (--every-launch hunts each)\$" d.txt
check_grep "finding 2: the different bug near the end (the head's gather)" \
	"^finding 2: launch #40 gather(.*) at /home/u/model.py:40 in head faulted under end guards" d.txt
if grep -q "^finding 2: .*later launch" d.txt; then fail "finding 2 claims repeats it has none of"; else
	ok "  ...with no repeats to speak of"; fi
if grep -q "stopped at" d.log; then fail "the hunt says it was bounded"; else ok "not bounded"; fi
n=$(replays d.log)
echo "  (default hunt: $n replay(s))"
# end guards: a fault, a fault, a clean run; start guards: a clean run;
# and each finding's launch replayed once in the captured layout (clean
# there: hunt.c, layout_fault)
[ "$n" = 6 ] && ok "six replays: two findings, a clean end pass, the start pass, two layout checks" ||
	fail "$n replays, not 6"
check_exit "hunt --no-layout-check: exit 1" 1 $GPUREDUCE hunt --no-shrink --no-layout-check loop.bin
n=$(replays "$TMP/.out")
[ "$n" = 4 ] && ok "  ...two replays fewer, the same findings" || fail "  ...$n replays, not 4"
grep "^finding" "$TMP/.out" | cmp -s - d.txt && ok "  ...(the same)" || fail "  ...other findings"
check_exit "hunt --no-start: exit 1" 1 $GPUREDUCE hunt --no-shrink --no-start loop.bin
n=$(replays "$TMP/.out")
[ "$n" = 5 ] && ok "  ...one replay fewer without the start pass (so the default ran it)" || fail "  ...$n replays, not 5"

# --every-launch: each step's launch is its own finding, bounded at 8
check_exit "hunt --every-launch: exit 1" 1 $GPUREDUCE hunt --every-launch --no-shrink loop.bin
findings e 8 "  ...eight findings"
check_grep "  ...the eighth is the eighth step's launch" "^finding 8: launch #14 scale_nocheck" e.txt
check_grep "  ...stopped at 8" "stopped at 8 finding(s) (--max-findings): there may be more" e.log
if grep -q "later launch" e.txt; then fail "  ...a finding claims repeats left out"; else ok "  ...no repeats left out"; fi
n=$(replays e.log)
echo "  (--every-launch: $n replay(s))"
# the start pass's replay ran beside the end pass's first (two workers):
# nine in eight rounds, and a layout check per finding; one after the
# other (GPUREDUCE_HUNT_SERIAL=1) the start pass never runs once the end
# pass is bounded
[ "$n" = 17 ] && ok "  ...17 replays: eight under end guards, the start pass's beside the first, 8 layout checks" ||
	fail "  ...$n replays, not 17"
check_exit "  ...one after the other: exit 1" 1 env GPUREDUCE_HUNT_SERIAL=1 $GPUREDUCE hunt --every-launch --no-shrink loop.bin
n=$(replays "$TMP/.out")
[ "$n" = 16 ] && ok "  ...16 replays" || fail "  ...$n replays, not 16"

# the trace written for finding 2 (as diagnose gets it, and shrink for a
# first finding) leaves out finding 1 and its 19 repeats: it faults at
# launch #40, not at the second step's scale_nocheck
printf '#!/bin/sh\nexit 0\n' >quiet-sanitizer
chmod +x quiet-sanitizer
check_exit "hunt with a (silent) compute-sanitizer, keeping its work: exit 1" 1 \
	env GPUREDUCE_SANITIZER=$TMP/quiet-sanitizer $GPUREDUCE hunt --no-shrink --keep-work loop.bin
grep "^finding 1:" "$TMP/.out" >quiet.f; [ -n "$T5102_SHOW" ] && cat quiet.f
check_grep "  ...a finding says why the sanitizer gave no distance, not that there was none" \
	"how far past which buffer is unknown (compute-sanitizer reported no memory error)" quiet.f
check "  ...finding 2's trace was written" test -f loop.bin.hunt-*/finding-2.bin
check_exit "  ...it faults (exit 1)" 1 $GPUREDUCE replay --guard=end loop.bin.hunt-*/finding-2.bin
check_grep "  ...at launch #40, finding 1's repeats left out" "faulted at event .* (launch #40) in _Z6gather" "$TMP/.out"
rm -rf loop.bin.hunt-*

# the repro of finding 1: reduced like a crash, repro.cu faults
check_exit "hunt with the repro of finding 1: exit 1" 1 $GPUREDUCE hunt -j 2 -o out loop.bin
cp "$TMP/.out" r.log
check_grep "  ...written and checked" "hunt: repro of finding 1 -> out/repro.cu (.*faulted [1-9][0-9]*/" r.log
check_grep "  ...repro.yaml: launch #0" "^hunt_launch: 0\$" out/repro.yaml
check "  ...repro.cu compiles as C against the double" cc -x c -w -I${CUDA:-/usr/local/cuda}/include \
	-o out/repro out/repro.cu -L$BUILD/double -Wl,-rpath,$BUILD/double -lcuda
check_exit "  ...and faults (exit 1)" 1 ./out/repro
check_grep "  ...in scale_nocheck" "scale_nocheck.* faulted: CUDA_ERROR_ILLEGAL_ADDRESS" "$TMP/.out"

# the crash at the last step, the window before it hunted: the crash is one
# of finding 1's repeats, and finding 1 says so
sed 's/^end 0$/fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel 38 at_launch=1/' loop.txt >crash.txt
check "mktrace: the loop that crashed at its last step" $MKTRACE crash.bin <crash.txt
check_exit "hunt of the window before the fault: exit 1" 1 $GPUREDUCE hunt --no-shrink crash.bin
check_grep "  ...finding 1 says the crash is among its repeats" \
	"^finding 1: launch #0 .*; 19 later launches of it from the same line left out, the trace's own fault among them" "$TMP/.out"

# the same kernel from three call sites: two lines, and one line reached from
# two callers (the outer frame differs); each three times, interleaved: each
# site is a finding, its two later launches left out; the second caller's
# finding names the first one (the same kernel and line)
{ head_ "python3 train.py"
  for s in 1 2 3; do
	echo "launch _Z13scale_nocheckPfPKfi 5 256 ptr:$W ptr:$IN i32:1024 $STEP"
	echo "launch _Z13scale_nocheckPfPKfi 5 256 ptr:$W ptr:$IN i32:1024 frame=/home/u/model.py:60:forward frame=/home/u/train.py:50:main"
	echo "launch _Z13scale_nocheckPfPKfi 5 256 ptr:$W ptr:$IN i32:1024 frame=/home/u/model.py:30:forward frame=/home/u/eval.py:9:evaluate"
	echo "launch _Z7add_onePfi 4 256 ptr:$X i32:1024 frame=/home/u/train.py:51:main"
  done
  echo "end 0"; } >sites.txt
check "mktrace: one kernel from three call sites" $MKTRACE sites.bin <sites.txt
check_exit "hunt: exit 1" 1 $GPUREDUCE hunt --no-shrink sites.bin
findings s 3 "  ...three findings"
check_grep "  ...model.py:30 from train.py" "^finding 1: launch #0 .* at /home/u/model.py:30 in forward .*; 2 later launches of it from the same line left out" s.txt
check_grep "  ...model.py:60" "^finding 2: launch #1 .* at /home/u/model.py:60 in forward .*; 2 later launches of it from the same line left out" s.txt
check_grep "  ...model.py:30 from eval.py" "^finding 3: launch #2 .* at /home/u/model.py:30 in forward .*; 2 later launches of it from the same line left out" s.txt
check_grep "  ...which says it is finding 1's kernel and line, reached from eval.py" \
	"^finding 3: .*; the same kernel and line as finding 1, reached from /home/u/eval.py:9 in evaluate\$" s.txt
check_no_grep "  ...the other line's finding says no such thing" "^finding 2: .*the same kernel and line" s.txt
n=$(replays s.log)
[ "$n" = 8 ] && ok "  ...in eight replays (three of them layout checks)" || fail "  ...$n replays, not 8"

# the frame a finding names is the first outside site-packages: two lines
# under the same library frame are not "the same line"; one line under it
# from two callers is
JIT="frame=/usr/lib/python3/site-packages/triton/runtime/jit.py:600:run"
{ head_ "python3 train.py"
  echo "launch _Z13scale_nocheckPfPKfi 5 256 ptr:$W ptr:$IN i32:1024 $JIT frame=/home/u/model.py:30:forward frame=/home/u/train.py:50:main"
  echo "launch _Z13scale_nocheckPfPKfi 5 256 ptr:$W ptr:$IN i32:1024 $JIT frame=/home/u/model.py:31:forward frame=/home/u/train.py:50:main"
  echo "launch _Z13scale_nocheckPfPKfi 5 256 ptr:$W ptr:$IN i32:1024 $JIT frame=/home/u/model.py:30:forward frame=/home/u/warm.py:7:warmup"
  echo "end 0"; } >lib.txt
check "mktrace: one kernel under a library frame from three stacks" $MKTRACE lib.bin <lib.txt
check_exit "hunt: exit 1" 1 $GPUREDUCE hunt --no-shrink lib.bin
cp "$TMP/.out" lib.log
check_no_grep "  ...model.py:31 is another line, not finding 1's" "^finding 2: .*the same kernel and line" lib.log
check_grep "  ...model.py:30 from warm.py is finding 1's line" \
	"^finding 3: .* at /home/u/model.py:30 in forward .*; the same kernel and line as finding 1, reached from /home/u/warm.py:7 in warmup\$" lib.log

# --tensor-ends: a legal write past a tensor's requested bytes (3600 of a
# 4096-byte block) every step is one note, its repeats left out the same way
{ head_ "python3 train.py" | sed "s/^block $W 4096 /block $W 3600 /"
  for s in 1 2 3 4 5; do
	echo "launch _Z13scale_nocheckPfPKfi 4 256 ptr:$W ptr:$IN i32:1024 $STEP"
	echo "launch _Z7add_onePfi 4 256 ptr:$X i32:1024 frame=/home/u/train.py:51:main"
  done
  echo "end 0"; } >pad.txt
check "mktrace: a legal write within its block every step" $MKTRACE pad.bin <pad.txt
check "hunt --tensor-ends: exit 0 (notes only)" $GPUREDUCE hunt --tensor-ends --no-shrink pad.bin
cp "$TMP/.out" n.log
n=$(grep -c "^note: " n.log)
[ "$n" = 1 ] && ok "  ...one note" || fail "  ...$n notes, not 1"
check_grep "  ...for the first step, its 4 later launches left out" \
	"^note: launch #0 scale_nocheck.* stays within its allocator block .*; 4 later launches of it from the same line left out" n.log
n=$(replays n.log)
[ "$n" = 4 ] && ok "  ...in four replays (end, start, a note, clean)" || fail "  ...$n replays, not 4"

# a C++ program: no frames, the kernel alone is the call site
{ head_ "./train_cpp"
  loop_ "" "" "" ""
  echo "end 0"; } >cpp.txt
check "mktrace: the loop of a C++ program (no frames)" $MKTRACE cpp.bin <cpp.txt
check_exit "hunt: exit 1" 1 $GPUREDUCE hunt --no-shrink cpp.bin
findings c 2 "  ...two findings"
check_grep "  ...the later launches of the same kernel left out, said why" \
	"^finding 1: launch #0 scale_nocheck.*; 19 later launches of the same kernel left out (no Python line recorded to tell them apart; --every-launch hunts each)\$" c.txt
check_grep "  ...then the gather" "^finding 2: launch #40 gather" c.txt
check_exit "  ...--every-launch: exit 1" 1 $GPUREDUCE hunt --every-launch --no-shrink cpp.bin
check_grep "  ...stopped at 8" "stopped at 8 finding(s)" "$TMP/.out"
finish
