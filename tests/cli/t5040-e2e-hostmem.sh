#!/bin/sh
# t5040-e2e-hostmem.sh - data that reached the GPU without a copy call, end
# to end on the driver double: managed memory and mapped pinned host memory
# whose content capture wrote as MEMCPY_H2D records flagged TR_F_HOSTMEM
# before each launch (capture/managed.c; t1005 checks capture itself).
# Replay gives them device twins with those bytes; shrink slices to the
# faulting launch and keeps the bytes; the repro faults.
. tests/cli/test-lib.sh

on_double nvcc no-sanitizer plain-path

head() {
	cat <<EOT
process 100 /work ./app
device "gpureduce CPU double"
module $DBL/kernels.cubin 1
EOT
}

# shrink NAME: the trace NAME.txt faults in replay, shrinks to one launch,
# and its repro faults when compiled against the double.
shrink_one() {
	check "mktrace $1" $MKTRACE $1.bin < $1.txt
	check_exit "$1: replay faults with the recorded content" 1 $GPUREDUCE replay $1.bin
	check_grep "  ...in the gather" "in _Z6gatherPfPKfPKxi: CUDA_ERROR_ILLEGAL_ADDRESS" "$TMP/.out"
	sed '/hostmem$/d' $1.txt > $1-none.txt
	check "mktrace $1 without the content records" $MKTRACE $1-none.bin < $1-none.txt
	check_exit "  ...without them replay runs clean (the bytes matter)" 0 $GPUREDUCE replay $1-none.bin
	check "shrink $1" $GPUREDUCE shrink -j 2 --quiet -o $1/repro.cu $1.bin
	check_grep "  ...to one launch" "launches -> 1 launch" "$TMP/.out"
	check "  ...repro compiles" cc -x c -w -I${CUDA:-/usr/local/cuda}/include -o $1/repro $1/repro.cu \
		-L$DBL -Wl,-rpath,$DBL -lcuda
	check_exit "  ...repro faults" 1 ./$1/repro
	check "  ...verify agrees" $GPUREDUCE verify -n 2 $1/repro.cu
}

# 1. an index table in managed memory, refilled by the CPU between launches
{ head; cat <<'EOT'
alloc 0x7f0000100000 4000
alloc 0x7f0000200000 4000
alloc 0x7e0000000000 262144 managed
h2d 0x7f0000100000 4000 seq
h2d 0x7e0000000000 65536 u64:0,1,2,3,4,5,6,7 0x7e0000000000 hostmem
h2d 0x7e0000010000 65536 0 0x7e0000010000 hostmem
h2d 0x7e0000020000 65536 0 0x7e0000020000 hostmem
h2d 0x7e0000030000 65536 0 0x7e0000030000 hostmem
launch _Z6gatherPfPKfPKxi 1 8 ptr:0x7f0000200000 ptr:0x7f0000100000 ptr:0x7e0000000000 i32:8
launch _Z7add_onePfi 4 256 ptr:0x7f0000200000 i32:1000
h2d 0x7e0000000000 65536 u64:7,6,5,4,3,2,1,0 0x7e0000000000 hostmem
launch _Z6gatherPfPKfPKxi 1 8 ptr:0x7f0000200000 ptr:0x7f0000100000 ptr:0x7e0000000000 i32:8
h2d 0x7e0000000000 65536 u64:1,2,3,0x1000000000,5,6,7,0 0x7e0000000000 hostmem
launch _Z6gatherPfPKfPKxi 1 8 ptr:0x7f0000200000 ptr:0x7f0000100000 ptr:0x7e0000000000 i32:8
fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel 3 at_launch=1
EOT
} > managed.txt
shrink_one managed
check_grep "  ...the repro allocates the managed table" "262144" managed/repro.cu

# 2. zero-copy: mapped pinned host memory read by the kernel through its
#    device pointer
{ head; cat <<'EOT'
alloc 0x7f0000100000 4000
alloc 0x7f0000200000 4000
alloc 0x7fd000000000 64 host
h2d 0x7f0000100000 4000 seq
h2d 0x7fd000000000 64 u64:3,2,1,0 0x7fd000000000 hostmem
launch _Z6gatherPfPKfPKxi 1 4 ptr:0x7f0000200000 ptr:0x7f0000100000 ptr:0x7fd000000000 i32:4
h2d 0x7fd000000000 64 u64:3,2,-0x800000000,0 0x7fd000000000 hostmem
launch _Z6gatherPfPKfPKxi 1 4 ptr:0x7f0000200000 ptr:0x7f0000100000 ptr:0x7fd000000000 i32:4
fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel 1 at_launch=1
EOT
} > zerocopy.txt
shrink_one zerocopy
finish
