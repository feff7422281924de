#!/bin/sh
# t5111-shrink-stray-words.sh - when replay faults in another launch than
# the program did, and that launch passes words that look like device
# addresses but lie in no buffer the trace recorded, shrink's "does not
# reproduce" error says so, with the first such word: such a pointer is
# passed as captured, to nothing (torchvision-long's trace on the H200,
# 2026-12-05, faulted in a cuDNN kernel in replay under every placement).
# `replay` says the same in a note.  So do both for a launch whose
# pointer word replay held as an integer (format 1.7's NONPTR rule: other
# launches of the kernel hold small numbers there and none an address
# whose low half is 2^24 or more).  A launch whose pointers are all
# recorded gets no such sentence.
. tests/cli/test-lib.sh

on_double nvcc no-sanitizer plain-path

BUF=0x7f0000000000
IN=0x7f0000400000
# $1: the pointer launch #0 passes (an unrecorded address, or BUF)
mk() {
	train_trace_head $BUF $IN 0x3f "python3 train.py" 4096
	cat <<EOT
launch _Z7add_onePfi 4 256 ptr:$1 i32:1024
launch _Z13scale_nocheckPfPKfi 4 256 ptr:$BUF ptr:$IN i32:1024
fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel 1 at_launch=1
EOT
}
mk 0x7f0000a00000 >stray.txt
mk $BUF >plain.txt
check "mktrace: launch #0 passes an address no allocation holds" $MKTRACE stray.bin <stray.txt
check "mktrace: every pointer recorded" $MKTRACE plain.bin <plain.txt

check_exit "shrink: the program's fault does not reproduce (exit 1)" 1 $GPUREDUCE shrink -j 2 -o s/repro.cu stray.bin
check_grep "  ...it says so" "does not reproduce in replay" "$TMP/.out"
check_grep "  ...names the launch replay faulted in and its stray word" \
	"Replay faulted in another launch: launch #0 (_Z7add_onePfi) passes 1 word(s) that look like device addresses but lie in no buffer the trace recorded (the first: parameter bytes +0x0 = 0x7f0000a00000)" "$TMP/.out"
n=$(grep -c "^gpureduce shrink: .*look like device addresses" "$TMP/.out")
[ "$n" = 1 ] && ok "  ...in the one error line" || fail "  ...in the one error line ($n)"

check_exit "replay: the fault replay finds (exit 1)" 1 $GPUREDUCE replay --guard=end stray.bin
check_grep "  ...with a note on the launch's stray word" \
	"^replay: note: the capture did not fault there; launch #0 (_Z7add_onePfi) passes 1 word(s) that look like device addresses" "$TMP/.out"

# A pointer word held as an integer (NONPTR's rule): launch #0 of add_one
# holds a small number (5) where launch #1 holds BUF, whose low half is
# under 2^24, so no launch shows that word as an address; replay passes
# BUF as captured in launch #1, to nothing of its own.
mk $BUF | sed "s|^launch _Z7add_onePfi .*|launch _Z7add_onePfi 4 256 u64:5 i32:0\\nlaunch _Z7add_onePfi 4 256 ptr:$BUF i32:1024|; s|cuLaunchKernel 1 at_launch|cuLaunchKernel 2 at_launch|" >held.txt
check "mktrace: a pointer slot that no launch shows as an address" $MKTRACE held.bin <held.txt
check_exit "replay of it: the held pointer faults in launch #1 (exit 1)" 1 $GPUREDUCE replay --guard=end held.bin
check_grep "  ...with a note on the word held as an integer" \
	"^replay: note: the capture did not fault there; launch #1 (_Z7add_onePfi) has 1 word(s) inside recorded buffers that replay passed as captured, not relocated, because other launches of the kernel hold small integers there (format 1.7, NONPTR; the first: parameter bytes +0x0 = 0x7f0000000000)" "$TMP/.out"
check_no_grep "  ...and no stray-word sentence (the word lies in a buffer)" "look like device addresses" "$TMP/.out"
check_exit "shrink of it: the program's fault does not reproduce (exit 1)" 1 $GPUREDUCE shrink -j 2 -o h/repro.cu held.bin
check_grep "  ...and its error names the held word" \
	"Replay faulted in another launch: launch #1 (_Z7add_onePfi) has 1 word(s) inside recorded buffers that replay passed as captured" "$TMP/.out"

check_exit "shrink of the trace whose pointers are all recorded: no launch faults, exit 1" 1 \
	$GPUREDUCE shrink -j 2 -o p/repro.cu plain.bin
check_no_grep "  ...and no stray-word sentence" "look like device addresses" "$TMP/.out"

finish
