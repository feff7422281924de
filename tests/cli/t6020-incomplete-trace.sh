#!/bin/sh
# t6020-incomplete-trace.sh - a trace with neither an END nor a FAULT
# record stops before its program did (killed, or its tail lost): show,
# replay and shrink call it incomplete -- "the trace ends before the program
# did: it may have been killed" -- and never "ran clean" or "did not fail".
# A FAULT without an END (the process died of its fault) is the normal
# crash case and keeps working; so does an orderly END without a fault.
# The rule: docs/FORMAT.md, "Complete traces".
. tests/cli/test-lib.sh

on_double no-sanitizer plain-path
MSG="the trace ends before the program did: it may have been killed"

head() {
	cat <<EOT
process 100 /work ./app
device "gpureduce CPU double"
module $DBL/kernels.cubin 1
alloc 0x7f0000100000 4000
alloc 0x7f0000200000 4000
h2d 0x7f0000100000 4000 seq
launch _Z7add_onePfi 4 256 ptr:0x7f0000100000 i32:1000
EOT
}

# 1. killed between two records: a clean cut at a record boundary
{ head; echo "launch _Z7add_onePfi 4 256 ptr:0x7f0000200000 i32:1000"; } > killed.txt
check "mktrace: a trace cut at a record boundary" $MKTRACE killed.bin < killed.txt
check "show prints it" $GPUREDUCE show killed.bin
cp "$TMP/.out" show.out
check_grep "  ...with complete: false" "^  complete: false" show.out
check_grep "  ...and why" "incomplete: .*$MSG" show.out
check_grep "  ...and warns on stderr" "warning: killed.bin: $MSG" show.out
check_exit "replay: not 'ran clean' but exit 3" 3 $GPUREDUCE replay killed.bin
check_grep "  ...saying the trace is incomplete" "replay: incomplete trace: replayed all 2 launches without a fault, but $MSG" "$TMP/.out"
if grep -q "ran clean" "$TMP/.out"; then fail "  ...yet says ran clean"; else ok "  ...never 'ran clean'"; fi
check_exit "shrink: not 'did not fail' (1) but exit 3" 3 $GPUREDUCE shrink --quiet -o k/repro.cu killed.bin
check_grep "  ...saying the trace is incomplete" "killed.bin: $MSG" "$TMP/.out"
if grep -q "did not fail" "$TMP/.out"; then fail "  ...yet blames the program"; else ok "  ...the program is not blamed"; fi

# 2. the FAULT record cut off (torn) and a corrupted length field: the
# records before are kept, and the trace is incomplete too
{ head; echo "launch _Z13scale_nocheckPfPKfi 8 256 ptr:0x7f0000200000 ptr:0x7f0000100000 i32:1000"
  echo "fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel 1 at_launch=1"; echo "truncate -5"; } > torn.txt
check "mktrace: the FAULT record torn" $MKTRACE torn.bin < torn.txt
check_exit "replay of a trace whose FAULT was torn off faults (exit 1)" 1 $GPUREDUCE replay torn.bin
check_grep "  ...with the torn-record warning" "warning: .*truncated at byte" "$TMP/.out"
{ head; echo "launch _Z7add_onePfi 4 256 ptr:0x7f0000200000 i32:1000"; echo "end 0"; } > lenbad.txt
check "mktrace -v: where the records are" $MKTRACE -v lenbad0.bin < lenbad.txt
off=$(sed -n 's/^[0-9]* LAUNCH \([0-9]*\)$/\1/p' "$TMP/.out" | tail -1)
if [ -n "$off" ]; then ok "  ...the second launch is at byte $off"; else fail "  ...no LAUNCH offset in mktrace -v"; off=0; fi
# its length field (bytes 8..15 of the record header) made huge
{ cat lenbad.txt; echo "poke $((off + 8)) ffffff0000000000"; } > lenbad2.txt
check "mktrace: a corrupted length field" $MKTRACE lenbad.bin < lenbad2.txt
check_exit "replay: not 'ran clean' (exit 0) but exit 3" 3 $GPUREDUCE replay lenbad.bin
check_grep "  ...saying the trace is incomplete" "$MSG" "$TMP/.out"
check_exit "shrink: exit 3" 3 $GPUREDUCE shrink --quiet -o lb/repro.cu lenbad.bin

# 3. the normal cases keep working
{ head; echo "launch _Z13scale_nocheckPfPKfi 8 256 ptr:0x7f0000200000 ptr:0x7f0000100000 i32:1000"
  echo "fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel 1 at_launch=1"; } > crash.txt
check "mktrace: FAULT, no END (died of its fault)" $MKTRACE crash.bin < crash.txt
check "show" $GPUREDUCE show crash.bin
check_grep "  ...complete: true" "^  complete: true" "$TMP/.out"
check_exit "replay faults (exit 1)" 1 $GPUREDUCE replay crash.bin
check "shrink works" $GPUREDUCE shrink -j 2 --quiet -o c/repro.cu crash.bin
check "its repro.bin (gpureduce's own trace) shows as complete" $GPUREDUCE show --no-events c/repro.bin
check_grep "  ...complete: true" "^  complete: true" "$TMP/.out"
{ head; echo "end 0"; } > ended.txt
check "mktrace: END, no fault" $MKTRACE ended.bin < ended.txt
check_exit "replay: ran clean (exit 0)" 0 $GPUREDUCE replay ended.bin
check_grep "  ...says so" "replay: ran clean" "$TMP/.out"
check_exit "shrink: nothing to shrink (exit 1)" 1 $GPUREDUCE shrink --quiet -o e/repro.cu ended.bin
check_grep "  ...the program did not fail" "holds no fault" "$TMP/.out"
check "mktrace -v crash" $MKTRACE -v crash2.bin < crash.txt
ev=$(sed -n 's/^\([0-9]*\) LAUNCH [0-9]*$/\1/p' "$TMP/.out" | tail -1)
check "replay --stop-before snapshots a launch" $GPUREDUCE replay --stop-before="${ev:-0}" --snapshot=snap.bin crash.bin
check "the snapshot shows as complete" $GPUREDUCE show --no-events snap.bin
check_grep "  ...complete: true" "^  complete: true" "$TMP/.out"
finish
