#!/bin/sh
# t5097-replay-module-choice.sh - one kernel name in several captured
# modules (a JIT's builds of one kernel, as Inductor's static launcher
# loads them), on the driver double: pick_kernel's build with Triton's two
# scratch pointers (4 parameters) writes past its buffer; a newer module's
# build of the same name takes 2 parameters and runs blocks of 128 too.
# Replay and repro.cu must take the build whose parameter layout
# (cuFuncGetParamInfo) is the launch's, not the newest that fits the
# block.  When no candidate matches and the launch is refused with
# CUDA_ERROR_INVALID_VALUE, the error says what differs: the parameter
# count and bytes, the max threads per block against the block, which
# module of how many.  A build that runs the block but has other
# parameters is still taken when no build has both (as before).
. tests/cli/test-lib.sh
on_double nvcc no-sanitizer plain-path

cat >two.txt <<'EOT'
process 100 /tmp ./app
device "gpureduce CPU double"
elfmodule 1 pick_kernel
elfmodule 2 pick_kernel pick_kernel$v2
alloc 0x7f0000100000 256
launch pick_kernel 1 128 ptr:0x7f0000100000 i32:128 u64:0 u64:0
fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel 0 at_launch=1
EOT
check "mktrace (the launch's build, then a newer one with 2 parameters)" $MKTRACE two.bin < two.txt
check_exit "replay takes the build with the launch's 4 parameters: it faults" 1 $GPUREDUCE replay two.bin
check_grep "  ...in pick_kernel" "in pick_kernel: CUDA_ERROR_ILLEGAL_ADDRESS" "$TMP/.out"
check "shrink" $GPUREDUCE shrink -j 2 --quiet -o r/repro.cu two.bin
check_grep "repro.cu chooses by parameters too" "takes$" r/repro.cu
check_grep "  ...the recorded sizes" "static const size_t psz\[\] = { 8, 4, 8, 8, };" r/repro.cu
check "the repro compiles against the double" cc -x c -w -I${CUDA:-/usr/local/cuda}/include -o r/repro r/repro.cu \
	-L$DBL -Wl,-rpath,$DBL -lcuda
check_exit "  ...and faults (it took the 4-parameter build)" 1 ./r/repro

# no candidate has the launch's parameters, none can run its block
cat >none.txt <<'EOT'
process 100 /tmp ./app
device "gpureduce CPU double"
elfmodule 1 pick_kernel pick_kernel$v3
elfmodule 2 pick_kernel pick_kernel$v3 other
alloc 0x7f0000100000 256
launch pick_kernel 1 128 ptr:0x7f0000100000 i32:128 u64:0 u64:0
fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel 0 at_launch=1
EOT
check "mktrace (two builds, neither with the launch's parameters)" $MKTRACE none.bin < none.txt
check_fail "replay: the launch is refused" $GPUREDUCE replay none.bin
check_grep "  ...INVALID_VALUE" "launch failed: CUDA_ERROR_INVALID_VALUE" "$TMP/.out"
check_grep "  ...the parameters differ" "the function has 2 parameter(s), 12 bytes; the launch recorded 4, 32 bytes" "$TMP/.out"
check_grep "  ...the block is too big for it" "it runs at most 64 threads per block, the launch's block has 128" "$TMP/.out"
check_grep "  ...which module of how many" "candidate [12] of the 2 captured modules defining this name (none has" "$TMP/.out"

# the launch's parameters nowhere, one build runs the block: taken (it reads only n)
sed 's/pick_kernel\$v3 other/pick_kernel$v2/' none.txt >fits.txt
check "mktrace (one build runs the block, with other parameters)" $MKTRACE fits.bin < fits.txt
check_exit "replay takes it: runs clean" 0 $GPUREDUCE replay fits.bin
finish
