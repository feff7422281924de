#!/bin/sh
# t5041-e2e-graphapi.sh - an explicit-API graph as capture writes it
# (capture/graphapi.c; t1006 checks capture itself): the graph's nodes at
# instantiation, then, after cuGraphExecKernelNodeSetParams, the same exec
# pointed at a second copy of the graph with the new parameters.  Replay
# must run the graph as it was at each launch; shrink expands and slices
# it to the faulting node; the repro faults on the driver double.
. tests/cli/test-lib.sh

on_double nvcc no-sanitizer plain-path

cat > g.txt <<EOT
process 100 /work ./app
device "gpureduce CPU double"
module $DBL/kernels.cubin 1
alloc 0x7f0000100000 4000
alloc 0x7f0000200000 4000
h2d 0x7f0000100000 4000 seq
gbegin 0x9b0
launch _Z7add_onePfi 4 256 ptr:0x7f0000100000 i32:1000 stream=0x9b0 captured=1
launch _Z13scale_nocheckPfPKfi 4 250 ptr:0x7f0000200000 ptr:0x7f0000100000 i32:1000 stream=0x9b0 captured=1
gend 0x9b0 0x9b0
gexec 0x9b0 0xe9f
glaunch 0xe9f
glaunch 0xe9f
gbegin 0xff00000000000001
launch _Z7add_onePfi 4 256 ptr:0x7f0000100000 i32:1000 stream=0xff00000000000001 captured=1
launch _Z13scale_nocheckPfPKfi 64 256 ptr:0x7f0000200000 ptr:0x7f0000100000 i32:1000 stream=0xff00000000000001 captured=1
gend 0xff00000000000001 0xff00000000000001
gexec 0xff00000000000001 0xe9f
glaunch 0xe9f
fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuGraphLaunch 5 at_launch=0 kernel=
EOT
check "mktrace" $MKTRACE g.bin < g.txt
check_exit "replay faults in the third graph launch, after the update" 1 $GPUREDUCE replay g.bin
check_grep "  ...in the updated node" "faulted at event 2[0-9] (launch #[0-9]*) in _Z13scale_nocheckPfPKfi" "$TMP/.out"
sed '/^gexec 0xff/d' g.txt > old.txt
check "mktrace without the update's GRAPH_EXEC" $MKTRACE old.bin < old.txt
check_exit "  ...the exec keeps its first graph: replay runs clean" 0 $GPUREDUCE replay old.bin
check "shrink" $GPUREDUCE shrink -j 2 --quiet -o g/repro.cu g.bin
check_grep "  ...expanded and sliced to the faulting node" "-> 1 launch, [0-9]* buffers\{0,1\}; CUDA_ERROR_ILLEGAL_ADDRESS in scale_nocheck(float\*, float const\*, int)" "$TMP/.out"
check "  ...repro compiles" cc -x c -w -I${CUDA:-/usr/local/cuda}/include -o g/repro g/repro.cu -L$DBL -Wl,-rpath,$DBL -lcuda
check_exit "  ...repro faults" 1 ./g/repro
finish
