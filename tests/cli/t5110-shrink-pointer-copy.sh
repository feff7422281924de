#!/bin/sh
# t5110-shrink-pointer-copy.sh - a copy that holds pointers among other
# words (a struct array, a descriptor workspace) goes through the data
# phase's chunk search with its pointer words fixed.  When only the
# pointers matter, keeping them alone is tried first (phase-data.c,
# only_fixed_faults): the data phase ends with the pointer words and
# nothing else, after a few faulting candidates, not the rounds of ddmin
# in which every part faults (each fault costs a worker's context on a
# GPU).
. tests/cli/test-lib.sh

DBL=$BUILD/double
export GPUREDUCE_LIBCUDA=$DBL/libcuda.so.1
export GPUREDUCE_NVCC="cc -x c -w -I${CUDA:-/usr/local/cuda}/include -L$DBL -Wl,-rpath,$DBL"
unset GPUREDUCE_SANITIZER GPUREDUCE_SHRINK_SERIAL
PATH=/usr/bin:/bin; export PATH     # no compute-sanitizer
cd "$TMP" || exit 1

# chase(tab, out, n): reads tab[0..n) as pointers; the last one points
# past its buffer.  The table is one 4 KiB copy: 8 pointers, then 504
# words of other data
mk() {
	printf 'process 100 /work ./app\ndevice "gpureduce CPU double"\nmodule %s/kernels.cubin 1\n' "$DBL"
	b=0; tab=
	while [ $b -lt 8 ]; do
		printf 'alloc 0x5a00001%d0000 4096\nh2d 0x5a00001%d0000 4096 seq\n' $b $b
		if [ $b -lt 7 ]; then tab="$tab${tab:+,}0x5a00001${b}0000"; else tab="$tab,0x5a0000171000"; fi
		b=$((b + 1))
	done
	i=8
	while [ $i -lt 512 ]; do tab="$tab,$((i * 3 + 1))"; i=$((i + 1)); done
	printf 'alloc 0x5a0000900000 4096\nalloc 0x5a0000a00000 64\nh2d 0x5a0000900000 4096 u64:%s\n' "$tab"
	echo 'launch _Z5chasePPKfPfi 1 32 ptr:0x5a0000900000 ptr:0x5a0000a00000 i32:8'
	echo 'fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel 0 at_launch=1'
}
mk > tab.txt
check "mktrace: a pointer table inside a 4 KiB copy" $MKTRACE tab.bin < tab.txt

# data-phase candidates that faulted, from the shrink log
faulted() {
	grep -E '^ *[0-9.]+ data  ' "$1" | grep -c 'the signature' | tr -d ' '
}

check "shrink -j 8" $GPUREDUCE shrink -j 8 --quiet --log=tab.log -o tab/repro.cu tab.bin
check "  ...its repro.bin reads back" $GPUREDUCE show tab/repro.bin
cp "$TMP/.out" tab.yaml
check_grep "  ...the table's copy keeps its 8 pointer words (64 bytes) and no more" "h2d_bytes: 64$" tab.yaml
check_grep "  ...the pointer past its buffer among them" "'+0x38: alloc#7+0x1000" tab.yaml
n=$(faulted tab.log)
if [ -n "$n" ] && [ "$n" -ge 1 ] && [ "$n" -le 5 ]; then
	ok "  ...after $n faulting data candidates (the table: 2; ddmin's all-faulting rounds took 19 in all)"
else
	fail "  ...data phase faulted $n times (want 1 to 5)"
fi
check_grep "  ...and the fault is the one captured" "CUDA_ERROR_ILLEGAL_ADDRESS" tab/repro.yaml

finish
