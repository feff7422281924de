#!/bin/sh
# t5119-shrink-pointer-copy.sh - a copy that holds pointers among other
# words (a struct array, a descriptor workspace) goes through the data
# phase's chunk search with its pointer words fixed.  When only the
# pointers matter, keeping them alone is tried first (phase-data.c,
# only_fixed_faults): the data phase ends with the pointer words and
# nothing else, after a few faulting candidates, not the rounds of ddmin
# in which every part faults (each fault costs a worker's context on a
# GPU; repro.yaml and the phase table count them per phase,
# faulted_replays).  And over 24 copies that can all be zeros, once a run of zeros
# all faulted, the next run's whole chain is tried alone first
# (phase-data.c, zero_run): a few faulting candidates, not one per copy.
. tests/cli/test-lib.sh
. tests/cli/chase-trace.sh

on_double nvcc no-sanitizer plain-path
unset GPUREDUCE_SHRINK_SERIAL

# chase(tab, out, n) over 8 buffers (tests/cli/chase-trace.sh), its
# table one 4 KiB copy: 8 pointers, then 504 words of other data
{ printf 'process 100 /work ./app\ndevice "gpureduce CPU double"\nmodule %s/kernels.cubin 1\n' "$DBL"
  chase_trace 8 512; } > tab.txt
check "mktrace: a pointer table inside a 4 KiB copy" $MKTRACE tab.bin < tab.txt

# few_faults LOG MAX WHY: the candidates of the slice and the data phase
# that faulted (from the shrink log: the slice's first test is the data
# phase's guess for every copy at once, phase_data_guess) are at least one
# and at most MAX, and repro.yaml (beside LOG's stem, in the folder of that
# name) counts as many for the two phases
few_faults() {
	n=$(grep -E '^ *[0-9.]+ (slice|data)  ' "$1" | grep -c 'the signature' | tr -d ' ')
	if [ -n "$n" ] && [ "$n" -ge 1 ] && [ "$n" -le "$2" ]; then
		ok "  ...after $n faulting slice and data candidates ($3)"
	else
		fail "  ...slice and data phase faulted $n times (want 1 to $2)"
	fi
	y=$(awk '/^- name: (slice|data)$/ { d = 1; next } /^- name:/ { d = 0 } d && /^  faulted_replays:/ { y += $2 }
		 END { print y + 0 }' "${1%.log}/repro.yaml")
	if [ "$y" = "$n" ]; then
		ok "  ...as repro.yaml's slice and data phases say (faulted_replays: $y)"
	else
		fail "  ...repro.yaml's slice and data phases say faulted_replays: '$y', the log $n"
	fi
}

check "shrink -j 8" $GPUREDUCE shrink -j 8 --quiet --log=tab.log -o tab/repro.cu tab.bin
check "  ...its repro.bin reads back" $GPUREDUCE show tab/repro.bin
cp "$TMP/.out" tab.yaml
check_grep "  ...the table's copy keeps its 8 pointer words (64 bytes) and no more" "h2d_bytes: 64$" tab.yaml
check_grep "  ...the pointer past its buffer among them" "'+0x38: alloc#7+0x1000" tab.yaml
few_faults tab.log 5 "the table alone: 2 and the slice 1; ddmin's all-faulting rounds took 19 in all"
check_grep "  ...and the fault is the one captured" "CUDA_ERROR_ILLEGAL_ADDRESS" tab/repro.yaml

{ printf 'process 100 /work ./app\ndevice "gpureduce CPU double"\nmodule %s/kernels.cubin 1\n' "$DBL"
  chase_trace 24 24; } > c24.txt
check "mktrace: chase over 24 buffers" $MKTRACE c24.bin < c24.txt
check "shrink -j 8" $GPUREDUCE shrink -j 8 --quiet --log=c24.log -o c24/repro.cu c24.bin
check "  ...its repro.bin reads back" $GPUREDUCE show c24/repro.bin
cp "$TMP/.out" c24.yaml
check_grep "  ...the 24 copies became zeros: only the table is copied in" "h2d_copies: 1$" c24.yaml
few_faults c24.log 6 "one per copy's zeros took 21 and the slice 1"

finish
