#!/bin/sh
# t5070-guard-is-real.sh - guard placement must be what makes a small
# overrun fault, not the allocator under it.  The driver double's own
# cuMemAlloc already ends each buffer at a guard page, so a replay that
# fell back to plain cuMemAlloc would still fault and every other test
# would pass.  Here the double allocates as the GPU does (DOUBLE_ALLOC=gpu:
# each buffer starts a 2 MiB granule mapped whole), so only real guard
# placement (VMM, addr/place_core.inc) turns the overrun into a fault, in
# replay and in the emitted repro.cu alike; and with VMM gone
# (DOUBLE_NO_VMM=1) replay says that buffers got plain cuMemAlloc.
. tests/cli/test-lib.sh

DBL=$BUILD/double
export GPUREDUCE_LIBCUDA=$DBL/libcuda.so.1
export GPUREDUCE_NVCC="cc -x c -w -I${CUDA:-/usr/local/cuda}/include -L$DBL -Wl,-rpath,$DBL"
export DOUBLE_ALLOC=gpu
unset GPUREDUCE_SANITIZER
PATH=/usr/bin:/bin; export PATH
cd "$TMP" || exit 1

# out holds 3000 bytes; 13 blocks of 64 threads write 832 floats = 3328
# bytes: 328 past the end, inside the first 2 MiB granule of the buffer
cat > small.txt <<EOT
process 100 /work ./app
device "gpureduce CPU double"
module $DBL/kernels.cubin 1
alloc 0x7f0000100000 3000
alloc 0x7f0000200000 4096
h2d 0x7f0000200000 4096 seq
launch _Z13scale_nocheckPfPKfi 13 64 ptr:0x7f0000100000 ptr:0x7f0000200000 i32:750
fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel 0 at_launch=1
EOT
check "mktrace: a 328-byte overrun of a 3000-byte buffer" $MKTRACE small.bin < small.txt
check_exit "plain cuMemAlloc (--guard=none): the overrun is quiet, as on the GPU" 0 $GPUREDUCE replay --guard=none small.bin
check_exit "--guard=end: the guard after the buffer makes it fault" 1 $GPUREDUCE replay --guard=end small.bin
check_grep "  ...in the overrunning kernel" "in _Z13scale_nocheckPfPKfi: CUDA_ERROR_ILLEGAL_ADDRESS" "$TMP/.out"
check_exit "--guard=start: the overrun lands in the slack, quiet" 0 $GPUREDUCE replay --guard=start small.bin
check_exit "default (layout, then end) faults" 1 $GPUREDUCE replay small.bin

check "shrink it" $GPUREDUCE shrink -j 2 --quiet -o sm/repro.cu small.bin
cp "$TMP/.out" shrink.out
check_grep "  ...repro.cu checked by shrink faults" "repro.cu faulted [1-9][0-9]*/[0-9]* (end placement" shrink.out
check "repro.cu builds against the double" cc -x c -w -I${CUDA:-/usr/local/cuda}/include \
	-o sm/repro sm/repro.cu -L$DBL -Wl,-rpath,$DBL -lcuda
check_exit "the built repro faults: its own guard placement is real" 1 ./sm/repro
check_grep "  ...with the captured error" "CUDA_ERROR_ILLEGAL_ADDRESS" "$TMP/.out"

# without the driver's virtual memory calls, placement falls back, and says so
check_exit "DOUBLE_NO_VMM=1 --guard=end: plain cuMemAlloc, the overrun is quiet" 0 \
	env DOUBLE_NO_VMM=1 $GPUREDUCE replay --guard=end small.bin
check_grep "  ...and replay says the buffers had no guard" "2 buffer(s) got plain cuMemAlloc, not guard placement" "$TMP/.out"
check_exit "DOUBLE_NO_VMM=1: the repro runs clean (nothing to place against)" 0 env DOUBLE_NO_VMM=1 ./sm/repro
finish
