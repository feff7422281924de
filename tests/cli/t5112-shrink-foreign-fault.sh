#!/bin/sh
# t5112-shrink-foreign-fault.sh - when replay faults first in another
# kernel, before the launch the program faulted in (a library kernel that
# follows a pointer into memory the capture did not see: torchvision-long's
# cuDNN kernel on the H200, 2026-12-05), shrink leaves that kernel's
# launches before the fault out and confirms again.  Here add_one is
# launched three times with a pointer no allocation holds (it faults in
# replay, not in the program) and scale_nocheck then overruns its output
# (the program's fault).  Checked: shrink emits a repro of scale_nocheck,
# the report says which launches were left out and why, repro.bin has no
# add_one; a trace whose other kernel faults at its own launch only after
# the program's fault needs nothing left out; and when leaving out does
# not bring the fault back, the error says what was tried.
. tests/cli/test-lib.sh

on_double nvcc no-sanitizer plain-path

BUF=0x7f0000000000
IN=0x7f0000400000
{ train_trace_head $BUF $IN 0x3f "python3 train.py" 4096; cat <<EOT
launch _Z7add_onePfi 4 256 ptr:0x7f0000a00000 i32:1024
launch _Z7add_onePfi 4 256 ptr:$BUF i32:16
launch _Z7add_onePfi 4 256 ptr:0x7f0000a00000 i32:1024
launch _Z13scale_nocheckPfPKfi 64 256 ptr:$BUF ptr:$IN i32:100000
fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel 3 at_launch=1
EOT
} >foreign.txt
check "mktrace: add_one with a pointer to nothing, then scale_nocheck's overrun" $MKTRACE foreign.bin <foreign.txt
check_exit "replay faults first in add_one (exit 1)" 1 $GPUREDUCE replay --guard=end foreign.bin
check_grep "  ...at launch #0" "(launch #0) in _Z7add_onePfi" "$TMP/.out"

check_exit "shrink: confirms again without add_one, and reduces (exit 0)" 0 \
	$GPUREDUCE shrink -j 2 -o s/repro.cu foreign.bin
check_grep "  ...to scale_nocheck's fault" "CUDA_ERROR_ILLEGAL_ADDRESS in scale_nocheck" "$TMP/.out"
check_grep "  ...saying what it left out and why" \
	"^note: replay faulted before the program's fault, in another kernel; left out: 3 launches of _Z7add_onePfi (replay faulted in launch #0)" \
	"$TMP/.out"
check_grep "  ...in repro.yaml too" "left out: 3 launches of _Z7add_onePfi" s/repro.yaml
check_grep "  ...and in repro.cu's header" "^ \* Note: .*left out: 3 launches of _Z7add_onePfi" s/repro.cu
n=$("$GPUREDUCE" show s/repro.bin | grep -c 'kernel: _Z7add_onePfi')
[ "$n" = 0 ] && ok "  ...repro.bin has no add_one launch" || fail "  ...repro.bin has no add_one launch ($n)"

# no foreign fault: nothing is left out
grep -v '_Z7add_onePfi .*0x7f0000a00000' foreign.txt |
	sed 's|^fault .*|fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel 1 at_launch=1|' >plain.txt
check "mktrace: the same without the pointers to nothing" $MKTRACE plain.bin <plain.txt
check_exit "shrink of it (exit 0)" 0 $GPUREDUCE shrink -j 2 -o p/repro.cu plain.bin
check_no_grep "  ...leaves nothing out" "left out:" p/repro.yaml

# leaving out does not bring the fault back (scale_nocheck within bounds)
sed 's|scale_nocheckPfPKfi 64 256 \(.*\) i32:100000|scale_nocheckPfPKfi 4 256 \1 i32:1024|' foreign.txt >nofault.txt
check "mktrace: scale_nocheck within bounds" $MKTRACE nofault.bin <nofault.txt
check_exit "shrink: does not reproduce, even without add_one (exit 1)" 1 \
	$GPUREDUCE shrink -j 2 -o n/repro.cu nofault.bin
check_grep "  ...the first failure's error, then what was tried" \
	"does not reproduce in replay.*Without 3 launches of _Z7add_onePfi (replay faulted in launch #0): the captured fault .* does not reproduce" \
	"$TMP/.out"

finish
