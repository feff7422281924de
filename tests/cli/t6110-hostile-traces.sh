#!/bin/sh
# t6110-hostile-traces.sh - well-formed traces whose records ask for what
# replay cannot or must not do (the reader's own checks pass; the fuzzer
# covers malformed bytes), on the driver double.  For each, `replay` and
# `shrink` (and `hunt`, which must not call clean what it could not run)
# must end with their documented exit codes and say why in one line, never
# crash, hang or leave a repro behind for a fault they could not reproduce:
#   huge        an allocation of 2^62 bytes
#   zerogrid    a launch of grid 0
#   bigblock    a block of 100000 threads
#   nokernel    a kernel no captured module defines
#   fewargs     a launch with fewer parameter bytes than its kernel takes
#   h2dout      a copy into memory no allocation holds
#   h2dover     a copy running past its allocation's end
#   memsetover  a memset of 1 MB into a 4 KiB allocation
#   d2dout      a device copy from memory no allocation holds
#   freeunknown a free of an address never allocated
#   faultseq    a fault naming a launch the trace does not have
#   nonptrwrap  an integer word (NONPTR) at offset 0xfffffff8 of the
#               kernel's parameters (offset + 8 wraps a uint32)
# and a FIFO where a trace should be (refused at once, not waited on); and
# a newer writer's trace (format 2.9) holding a record type this reader does
# not know: read, replayed and shrunk without it (shrink once stopped on a
# BUG trying to write it into a candidate).
. tests/cli/test-lib.sh

on_double nvcc no-sanitizer plain-path
hdr() {
	printf 'process 100 /work ./app\ndevice "gpureduce CPU double"\nmodule %s/kernels.cubin 1\n' "$DBL"
}
FAULT='fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel 0 at_launch=1'
LAUNCH='launch _Z7add_onePfi 4 256 ptr:0x7f0000100000 i32:1000'
A='alloc 0x7f0000100000 4096'
# mk NAME LINE...: the trace NAME.bin of the header and these lines
mk() {
	n=$1; shift
	{ hdr; for l in "$@"; do echo "$l"; done; } >"$n.txt"
	check "mktrace $n" $MKTRACE "$n.bin" <"$n.txt"
}
mk huge 'alloc 0x7f0000100000 4611686018427387904' "$LAUNCH" "$FAULT"
mk zerogrid "$A" 'launch _Z7add_onePfi 0 256 ptr:0x7f0000100000 i32:1000' "$FAULT"
mk bigblock "$A" 'launch _Z7add_onePfi 4 100000 ptr:0x7f0000100000 i32:1000' "$FAULT"
mk nokernel "$A" 'launch _Z9no_suchPfi 4 256 ptr:0x7f0000100000 i32:1000' "$FAULT"
mk fewargs "$A" 'launch _Z7add_onePfi 4 256 ptr:0x7f0000100000' "$FAULT"
mk h2dout "$A" 'h2d 0x7f0000900000 4096 seq' "$LAUNCH" "$FAULT"
mk h2dover "$A" 'h2d 0x7f0000100800 8192 seq' "$LAUNCH" "$FAULT"
mk memsetover "$A" 'memset 0x7f0000100000 0 1000000' "$LAUNCH" "$FAULT"
mk d2dout "$A" 'd2d 0x7f0000100000 0x7f0000900000 4096' "$LAUNCH" "$FAULT"
mk freeunknown "$A" 'free 0x7f0000500000' "$LAUNCH" "$FAULT"
mk faultseq "$A" "$LAUNCH" 'fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel 99 at_launch=1'
mk nonptrwrap "$A" 'nonptr _Z7add_onePfi 4294967288' "$LAUNCH" "$FAULT"
mk noblob "$A" 'rec MEMCPY_H2D dst=0x7f0000100000 size=4096 blob=0x1234' "$LAUNCH" "$FAULT"
mk nolaunch "$A" 'h2d 0x7f0000100000 4096 seq' 'end 0'

# show: the integer words it lists stay inside the parameter bytes (the
# fuzzer's find: show read 4 GiB past them)
check "show nonptrwrap" sh -c "$GPUREDUCE show nonptrwrap.bin >nonptrwrap.yaml"
check_grep "  ...the launch shown" "kernel: _Z7add_onePfi" nonptrwrap.yaml
check_no_grep "  ...no integer word listed out of its bytes" "int_words" nonptrwrap.yaml
check_exit "hunt nonptrwrap: it replays to its end, clean (exit 0)" 0 $GPUREDUCE hunt --no-shrink --no-diagnose nonptrwrap.bin

# a copy whose bytes the trace does not store: a damaged trace (exit 3)
# for replay, shrink and hunt alike, naming the blob
check_exit "replay noblob: exit 3" 3 $GPUREDUCE replay noblob.bin
check_grep "  ...naming the blob" "blob 0000000000001234 is referenced but not stored in the trace" "$TMP/.out"
check_exit "hunt noblob: exit 3 (not 4, a machine's failure)" 3 $GPUREDUCE hunt --no-shrink --no-diagnose noblob.bin
check_grep "  ...naming the blob and the event" "noblob.bin: event [0-9]*: blob 0000000000001234 is referenced but not stored in the trace" "$TMP/.out"
# no launch at all: nothing was guarded, so not "clean"
check_exit "hunt nolaunch: exit 0" 0 $GPUREDUCE hunt --no-shrink --no-diagnose nolaunch.bin
check_grep "  ...nothing to hunt" "^hunt: nolaunch.bin: no kernel launches in the trace: nothing to hunt\$" "$TMP/.out"
check_no_grep "  ...not called clean" "clean" "$TMP/.out"

# replay NAME EXIT PATTERN: exit EXIT, its last line matching PATTERN
replay_says() {
	check_exit "replay $1: exit $2" "$2" $GPUREDUCE replay "$1.bin"
	tail -n 1 "$TMP/.out" >last.txt
	check_grep "  ...$3" "$3" last.txt
}
replay_says huge 3 "could not replay: event [0-9]*: allocation failed: CUDA_ERROR_OUT_OF_MEMORY"
replay_says zerogrid 3 "launch failed: CUDA_ERROR_INVALID_VALUE"
replay_says bigblock 3 "launch failed: CUDA_ERROR_INVALID_VALUE; it runs at most 1024 threads per block"
replay_says nokernel 3 "kernel _Z9no_suchPfi is in none of the trace's 1 captured modules"
replay_says fewargs 3 "the function has 2 parameter(s), 12 bytes"
for n in h2dout h2dover memsetover d2dout; do
	replay_says $n 0 "ran clean .*; 1 copies/memsets targeted memory outside any captured allocation and were skipped"
done
replay_says freeunknown 0 "ran clean"
replay_says faultseq 0 "ran clean"

# shrink: a fault that does not come back is refused, in one line, with
# nothing emitted
for n in huge zerogrid bigblock nokernel fewargs h2dout memsetover faultseq; do
	check_exit "shrink $n: exit 1" 1 $GPUREDUCE shrink -j 2 --quiet -o "s-$n/repro.cu" "$n.bin"
	san_noise_drop "$TMP/.out"   # (a worker released as shrink exits may print after it)
	l=$(grep -c . "$TMP/.out")
	[ "$l" = 1 ] && ok "  ...in one line" || { fail "  ...in one line ($l)"; sed 's/^/    | /' "$TMP/.out"; }
	check_grep "  ...saying it does not reproduce" "does not reproduce in replay; tried guard=layout" "$TMP/.out"
	[ -e "s-$n/repro.cu" ] && fail "  ...and emits nothing" || ok "  ...and emits nothing"
done
check_grep "  (faultseq: the kernel it cannot name is said to be unnamed)" \
	"CUDA_ERROR_ILLEGAL_ADDRESS in a kernel the trace does not name" "$TMP/.out"

# hunt: a guarded replay that cannot run the trace to its end gives no
# verdict (exit 3, where it stopped), never "clean"
for n in huge nokernel bigblock fewargs; do
	check_exit "hunt $n: exit 3" 3 $GPUREDUCE hunt --no-shrink --no-diagnose "$n.bin"
	check_grep "  ...not hunted to its end, saying where it stopped" \
		"^hunt: $n.bin: not hunted to its end (end placement: replay error: event [0-9]*" "$TMP/.out"
	check_no_grep "  ...and not called clean" "clean" "$TMP/.out"
done
check_exit "hunt freeunknown (it replays to its end): exit 0" 0 $GPUREDUCE hunt --no-shrink --no-diagnose freeunknown.bin
check_grep "  ...clean" "^hunt: freeunknown.bin: clean" "$TMP/.out"

# a FIFO where a trace should be: refused at once, never waited on for a
# writer (timeout's 124 would say it hung)
mkfifo fifo.bin
for c in show replay shrink hunt diagnose; do
	check_exit "$c of a FIFO: exit 3, at once" 3 timeout 20 $GPUREDUCE $c fifo.bin
	check_grep "  ...not a regular file" "fifo.bin: not a regular file" "$TMP/.out"
done
check_exit "capture -o a FIFO: refused (exit 2), at once" 2 timeout 20 $GPUREDUCE capture -o fifo.bin -- true

# a newer minor version's record this reader does not know, in a
# checkpoint, in a trace whose replay faults first in another kernel
# (add_one's overrun before the captured gather fault): shrink's retry
# without that kernel writes every other record into a candidate, where it
# once stopped on a BUG writing the unknown one (the fuzzer's trace)
gather_trace_text | awk '/^alloc 0x7f0000100000/ { print "ckbegin 1 0 3 16000"; print; print "raw 0 0102030405"; print "raw 42 0102030405"; next }
	/^launch _Z6gather/ { print "ckend 1 0 3 16000"; print "launch _Z7add_onePfi 4096 256 ptr:0x7f0000300000 i32:1048576" }
	/^fault / { sub(/cuLaunchKernel 0/, "cuLaunchKernel 1") }
	{ print } END { print "version 2 9" }' >newer.txt
check "mktrace newer" $MKTRACE newer.bin <newer.txt
check_exit "replay newer: a fault (exit 1)" 1 $GPUREDUCE replay newer.bin
check "shrink newer" $GPUREDUCE shrink -j 2 --quiet -o s-newer/repro.cu newer.bin
check_grep "  ...to the captured fault's kernel" "in gather(" "$TMP/.out"
check_no_grep "  ...no BUG" "BUG" "$TMP/.out"
n=$("$GPUREDUCE" show s-newer/repro.bin | grep -c "UNKNOWN")
[ "$n" = 0 ] && ok "  ...the unknown records left out of repro.bin" || fail "  ...the unknown records left out of repro.bin ($n)"
check_exit "hunt newer: no crash (exit 0 or 1)" 0 sh -c "$GPUREDUCE hunt --no-shrink --no-diagnose newer.bin; [ \$? -le 1 ]"
finish
