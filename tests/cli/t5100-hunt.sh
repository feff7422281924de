#!/bin/sh
# t5100-hunt.sh - `gpureduce hunt` (issue 28) on the CPU driver double.
# A trace that ran clean (its segment is one allocation: no overrun
# faults) holds three silent bugs among allocator blocks: a kernel that
# writes a whole block past its tensor into the neighbour (end guards), a
# second overrun later (found only because hunt goes on past the first
# fault), and a gather whose index -1 reads before its source (start
# guards only).  A kernel that writes past its tensor's requested bytes
# but within the allocator's rounded block is legal and must not be
# reported (the guard sits at the rounded block end).  The clean variant
# hunts clean.  The first finding becomes repro.cu, which faults (gcc
# against the double).  A trace without blocks says why it has none.  Each launch has a Python line of its own (hunt
# leaves a finding's later launches from the same line out: t5102).
. tests/cli/test-lib.sh

on_double nvcc no-sanitizer plain-path

SEG=0x7f0000000000
A=0x7f0000000000   # 3600 bytes asked, 4096 given: written to 4096 (legal)
B=0x7f0000001000   # 4096 bytes: overrun by a whole block (into C)
C=0x7f0000002000   # gather's output, 4096
D=0x7f0000003000   # gather's source, 4096
E=0x7f0000004000   # gather's index (long long), 4096
F=0x7f0000005000   # a later tensor overrun, 2048
IN=0x7f0000400000  # a cudaMalloc'ed input of its own
# $1: B's grid (4: in bounds, 5: past the end); $2: the index fill (0x00: 0,
# 0xff: -1, before the start); $3: F's grid (2: in bounds, 3: past)
mk() {
	train_trace_head $SEG $IN 0x3f
	cat <<EOT
block $A 3600 $SEG initial at=/home/u/train.py:10:main
block $B 4096 $SEG initial at=/home/u/train.py:11:main
block $C 4096 $SEG initial at=/home/u/train.py:12:main
block $D 4096 $SEG initial at=/home/u/train.py:13:main
block $E 4096 $SEG initial at=/home/u/train.py:14:main
block $F 2048 $SEG initial at=/home/u/train.py:15:main
h2d $E 4096 $2
note test: tests/test_model.py::test_pad (call)
launch _Z13scale_nocheckPfPKfi 4 256 ptr:$A ptr:$IN i32:1024 frame=/home/u/train.py:20:main
note test: tests/test_model.py::test_scale (call)
launch _Z13scale_nocheckPfPKfi $1 256 ptr:$B ptr:$IN i32:1024 frame=/home/u/train.py:21:main
launch _Z7add_onePfi 4 256 ptr:$C i32:1024 frame=/home/u/train.py:22:main
note test: tests/test_model.py::test_gather (call)
launch _Z6gatherPfPKfPKxi 2 256 ptr:$C ptr:$D ptr:$E i32:512 frame=/home/u/train.py:23:main
note test: tests/test_model.py::test_tail (call)
launch _Z13scale_nocheckPfPKfi $3 256 ptr:$F ptr:$IN i32:512 frame=/home/u/train.py:24:main
end 0
EOT
}
mk 5 0xff 3 >bug.txt
mk 4 0x00 2 >clean.txt
check "mktrace: the buggy run" $MKTRACE bug.bin <bug.txt
check "mktrace: the clean run" $MKTRACE clean.bin <clean.txt
check "the buggy run replays clean as captured (the overruns stay inside the segment)" \
	$GPUREDUCE replay --guard=end bug.bin

# the clean variant: nothing, exit 0 (also the tensor written past its 3600
# requested bytes but within its 4096-byte block)
check "hunt of the clean run: exit 0" $GPUREDUCE hunt --keep-work -o cl clean.bin
cp "$TMP/.out" clean.log
check_grep "  ...says clean" "clean.bin: clean (no launch faulted under end or start guards)" clean.log
n=$(grep -c "^finding" clean.log)
[ "$n" = 0 ] && ok "  ...no finding" || fail "  ...$n finding(s) in a clean run"
$GPUREDUCE show clean.bin.hunt-*/hunt-base.bin | awk '/^- event:/ { t = "" } /^  type:/ { t = $2 }
	/^  (addr|size):/ && t == "ALLOC" { printf "%s=%s ", $1, $2 } END { print "" }' >sizes.txt
check_grep "guard at the block end: the 3600-byte tensor is placed as its 4096-byte block" \
	"addr:=$A size:=4096 " sizes.txt
check_grep "  ...a 4096-byte tensor as itself" "addr:=$B size:=4096 " sizes.txt
check_grep "  ...the segment is not one allocation any more" "addr:=$SEG size:=4096 " sizes.txt
check "  ...that trace replays clean under end guards" $GPUREDUCE replay --guard=end \
	--skip=$(echo clean.bin.hunt-*/hunt-0.skip) clean.bin.hunt-*/hunt-base.bin
check "  ...and under start guards" $GPUREDUCE replay --guard=start \
	--skip=$(echo clean.bin.hunt-*/hunt-1.skip) clean.bin.hunt-*/hunt-base.bin
[ -s "$(echo clean.bin.hunt-*/hunt-1.skip)" ] && fail "  ...a clean hunt's skip lists are empty" ||
	ok "  ...a clean hunt's skip lists are empty"

# --tensor-ends: guards at each tensor's requested end too; the write past
# A's 3600 bytes (within its block) is a note, not a finding: still exit 0
check "hunt --tensor-ends of the clean run: exit 0" $GPUREDUCE hunt --tensor-ends -o cl2 clean.bin
check_grep "  ...a note for the write within the block, naming the tensor" \
	"^note: test tests/test_model.py::test_pad (call): launch #0 scale_nocheck.* stays within its allocator block .*param 0 = tensor $A (3600 B in a 4096 B block" "$TMP/.out"
n=$(grep -c "^finding" "$TMP/.out")
[ "$n" = 0 ] && ok "  ...and no finding" || fail "  ...$n finding(s)"

# replay --skip: the launches a list names are left out, as hunt's
# replays leave out a finding (the blockified trace hunt kept, B's overrun
# at #1 left out: the next overrun, F's at #4, faults)
check_exit "hunt --keep-work of the buggy run" 1 $GPUREDUCE hunt --no-shrink --no-diagnose --keep-work bug.bin
printf '1\n' >skip1
check_exit "replay --skip: without launch #1 it faults at F's overrun" 1 $GPUREDUCE replay --guard=end \
	--skip=skip1 bug.bin.hunt-*/hunt-base.bin
check_grep "  ...launch #4" "launch #4" "$TMP/.out"
check_exit "  ...without --skip, at B's (#1)" 1 $GPUREDUCE replay --guard=end bug.bin.hunt-*/hunt-base.bin
check_grep "  ...launch #1" "launch #1" "$TMP/.out"
printf '1\nfour\n' >skipbad
check_exit "replay --skip with a bad list: exit 3" 3 $GPUREDUCE replay --guard=end --skip=skipbad bug.bin
check_grep "  ...naming the file" "skipbad: not a list of launch numbers" "$TMP/.out"
check_exit "replay --skip with no such file: exit 3" 3 $GPUREDUCE replay --guard=end --skip=nosuch bug.bin
check_grep "  ...naming it" "nosuch" "$TMP/.out"
rm -rf bug.bin.hunt-*

# the buggy run: three findings, in order: end guards twice (hunt goes on
# past the first fault), then the underrun under start guards
check_exit "hunt of the buggy run: exit 1 (findings)" 1 $GPUREDUCE hunt -j 2 -o out bug.bin
cp "$TMP/.out" bug.log
grep "^finding" bug.log >f.txt
n=$(grep -c "^finding" f.txt)
[ "$n" = 3 ] && ok "three findings" || fail "$n findings, not 3"
check_grep "finding 1: the overrun of B, under end guards, with its test" \
	"^finding 1: test tests/test_model.py::test_scale (call): launch #1 " f.txt
check_grep "  ...launch, kernel, Python line, placement" \
	"launch #1 scale_nocheck(float\*, float const\*, int) at /home/u/train.py:21 in main faulted under end guards (CUDA_ERROR_ILLEGAL_ADDRESS)" f.txt
check_grep "  ...its tensors, with allocation sites" \
	"param 0 = tensor $B (4 KiB\|param 0 = tensor $B (4096 B" f.txt
check_grep "finding 2: past the first fault, the later overrun (test_tail)" \
	"^finding 2: test tests/test_model.py::test_tail" f.txt
check_grep "  ...launch #4 under end guards" "launch #4 scale_nocheck.* faulted under end guards" f.txt
check_grep "finding 3: the underrun, under start guards only (test_gather)" \
	"^finding 3: test tests/test_model.py::test_gather" f.txt
check_grep "  ...launch #3 gather under start guards" "launch #3 gather.* faulted under start guards" f.txt
if grep -q "launch #0 " f.txt; then fail "the write within its block (launch #0) was reported"; else
	ok "the write within its block (launch #0) is not reported"; fi

# the first finding reduced like a crash: repro.cu faults in scale_nocheck
check_grep "the repro of finding 1 was written and checked" "hunt: repro of finding 1 -> out/repro.cu" bug.log
check_grep "repro.yaml: repro_kind hunt" "^repro_kind: hunt" out/repro.yaml
check_grep "repro.yaml: the hunted kernel" "^hunt_kernel: '_Z13scale_nocheckPfPKfi'" out/repro.yaml
check_grep "repro.cu's header says hunt" "HUNT REPRO" out/repro.cu
check "repro.cu compiles as C against the double" cc -x c -w -I${CUDA:-/usr/local/cuda}/include \
	-o out/repro out/repro.cu -L$BUILD/double -Wl,-rpath,$BUILD/double -lcuda
for i in 1 2 3; do
	check_exit "repro run $i faults (exit 1)" 1 ./out/repro
	check_grep "  ...in scale_nocheck" "scale_nocheck.* faulted: CUDA_ERROR_ILLEGAL_ADDRESS" "$TMP/.out"
done

# the window before a fault: the same run, crashed at launch #4 (its
# FAULT record); under guards that launch faults too and is labelled as the
# trace's own fault, the silent ones before it are found as before
sed 's/^end 0$/fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel 4 at_launch=1/' bug.txt >crash.txt
check "mktrace: the run that crashed" $MKTRACE crash.bin <crash.txt
check_exit "hunt of the window before the fault: exit 1" 1 $GPUREDUCE hunt --no-shrink crash.bin
grep "^finding" "$TMP/.out" >fc.txt
check_grep "  ...the silent overrun first" "^finding 1: .*launch #1 scale_nocheck" fc.txt
check_grep "  ...the crash labelled as the trace's own fault" "^finding 2: .*launch #4 scale_nocheck.*\[the trace's own fault\]" fc.txt
check_grep "  ...and the underrun" "^finding 3: .*launch #3 gather.* faulted under start guards" fc.txt

# --no-start: the underrun goes unseen; --max-findings bounds the search
check_exit "--no-start --no-shrink: exit 1" 1 $GPUREDUCE hunt --no-start --no-shrink bug.bin
n=$(grep -c "^finding" "$TMP/.out")
[ "$n" = 2 ] && ok "  ...two findings (end guards only)" || fail "  ...$n findings, not 2"
check_exit "--max-findings=1: exit 1" 1 $GPUREDUCE hunt --max-findings=1 --no-shrink bug.bin
check_grep "  ...says it stopped" "stopped at 1 finding(s) (--max-findings): there may be more" "$TMP/.out"

# a trace without allocator blocks: hunt says how to get them, or, when
# capture --tensors could not read the allocator (torch on its
# cudaMallocAsync backend keeps no history), why there are none
grep -v '^block ' clean.txt >noblk.txt
check "mktrace: a run without blocks" $MKTRACE noblk.bin <noblk.txt
check "hunt of it: exit 0" $GPUREDUCE hunt --no-shrink noblk.bin
check_grep "  ...says how to get the blocks" "(no allocator blocks: capture --tensors for those)" "$TMP/.out"
why="--tensors: turning on the allocator history failed: RuntimeError: cudaMallocAsync does not yet support recordHistory.; tensor blocks are not recorded from here on"
sed "s/^end 0\$/note $why\nend 0/" noblk.txt >offblk.txt
check "mktrace: the same, with capture's note that --tensors could not read the allocator" $MKTRACE offblk.bin <offblk.txt
check "hunt of it: exit 0" $GPUREDUCE hunt --no-shrink offblk.bin
check_grep "  ...says why there are no blocks" "(no allocator blocks: --tensors: turning on the allocator history failed: RuntimeError: cudaMallocAsync does not yet support recordHistory" "$TMP/.out"

# errors
check_exit "no trace: usage (2)" 2 $GPUREDUCE hunt
check_exit "a missing trace: 3" 3 $GPUREDUCE hunt --no-shrink missing.bin
check_grep "  ...names the file" "missing.bin" "$TMP/.out"
check_exit "TRACE and -- CMD together: usage (2)" 2 $GPUREDUCE hunt bug.bin -- true
mkdir -p self && cp bug.bin self/repro.bin
check_exit "an output that would overwrite the trace: 2" 2 $GPUREDUCE hunt -o self self/repro.bin
check_grep "  ...says so" "would overwrite the trace self/repro.bin" "$TMP/.out"
check "  ...the trace is intact" cmp bug.bin self/repro.bin
finish
