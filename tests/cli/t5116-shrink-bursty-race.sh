#!/bin/sh
# t5116-shrink-bursty-race.sh - a race lost in bursts (the double's
# racy_burst: under DOUBLE_RACE_COUNTER 6 launches in a row fault, then 18
# run clean), shrunk with one worker from each of the 24 counter values.
# Whatever the alignment, a shrink whose rate check backed off to an
# earlier state must emit that state: the state faulted in its rate runs,
# so a fresh confirmation that falls in the clean stretch is not "did not
# fault" (gpu-test's race sample on an H100, 2026-12-05: the state after
# data 2/5, then 0/5, and nothing was emitted).  At least one alignment
# takes that path; the others end however they end (a burst can miss all
# of verify's runs, and then shrink says so).
. tests/cli/test-lib.sh

on_double nvcc no-sanitizer plain-path

{ cat <<EOT
process 100 /work ./app
device "gpureduce CPU double"
module $DBL/kernels.cubin 1
alloc 0x7f0000100000 4096
alloc 0x7f0000200000 4096
h2d 0x7f0000100000 4096 seq
launch _Z7add_onePfi 4 256 ptr:0x7f0000200000 i32:1024
launch _Z10racy_burstPfi 2 128 ptr:0x7f0000100000 i32:1024
fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel 1 at_launch=1
EOT
} > burst.txt
check "mktrace racy_burst" $MKTRACE burst.bin < burst.txt

backed=0 stood=0 lost=""
for c in 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23; do
	echo $c > counter
	rm -rf o
	DOUBLE_RACE_COUNTER=$TMP/counter $GPUREDUCE shrink -j 1 --quiet --log=l$c.log -o o/repro.cu burst.bin \
		>o$c.txt 2>&1
	if grep -q "rate of the state" l$c.log; then
		backed=$((backed + 1))
		grep -q "its rate runs' .* stand" l$c.log && stood=$((stood + 1))
		[ -s o/repro.cu ] && [ -s o/repro.bin ] || lost="$lost $c"
	fi
done
[ "$backed" -ge 1 ] && ok "the rate check ran for $backed of 24 alignments" ||
	fail "the rate check ran for none of the 24 alignments"
[ -z "$lost" ] && ok "  ...and each of them emitted a repro" ||
	fail "  ...and each of them emitted a repro (nothing emitted from counter$lost)"
[ "$stood" -ge 1 ] && ok "  ...$stood with a back-off whose fresh confirmation missed (its rate runs stood)" ||
	fail "  ...none with a back-off whose fresh confirmation missed"
finish
