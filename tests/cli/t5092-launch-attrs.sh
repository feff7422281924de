#!/bin/sh
# t5092-launch-attrs.sh - cuLaunchKernelEx attributes in replay and repro.cu
# (issue 22): a cluster dimension is applied as recorded (the double
# refuses a grid that is not a whole number of clusters, so a dropped
# attribute would show), an attribute naming an event of the captured
# process is left out and said -- in replay's message and as a comment in
# repro.cu -- never passed on (the double refuses unknown events).
. tests/cli/test-lib.sh

DBL=$BUILD/double
CUDA=${CUDA:-/usr/local/cuda}
CC=${CC:-cc}
export GPUREDUCE_LIBCUDA=$DBL/libcuda.so.1
PATH=/usr/bin:/bin
export PATH
unset GPUREDUCE_SANITIZER GPUREDUCE_SHIFT
cd "$TMP" || exit 1

CLUSTER2=020000000100000001000000     # clusterDim {2, 1, 1}
EVENT=efbeadde00000000000000000000000000000000   # programmatic event: a captured CUevent
mk() {   # NAME GRID [fault]
	{ cat <<EOT
process 100 /work ./app
device "gpureduce CPU double"
module $DBL/kernels.cubin 1
alloc 0x5a0000100000 4000
EOT
	echo "launch _Z13scale_nocheckPfPKfi $2 256 ptr:0x5a0000100000 ptr:0x5a0000100000 i32:1000 api=ex attr=4:$CLUSTER2 attr=7:$EVENT"
	if [ "$3" = fault ]; then
		echo "fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuCtxSynchronize 0 at_launch=0"
	else
		echo "end 0"
	fi
	} > $1.txt
	check "mktrace $1" $MKTRACE $1.bin < $1.txt
}
mk ok 2
mk odd 3
mk bad 8 fault

check_exit "grid 2 (one cluster of 2) replays clean" 0 $GPUREDUCE replay --guard=end ok.bin
check_grep "  ...the event attribute is said, not passed on" "launch attribute 7 (programmatic event) not replayed: it names an event of the captured process" "$TMP/.out"
check_exit "grid 3 with clusters of 2: the cluster dimension was applied (the double refuses it)" 3 $GPUREDUCE replay --guard=end odd.bin
check_grep "  ...with the driver's error" "CUDA_ERROR_INVALID_CLUSTER_SIZE" "$TMP/.out"
check_exit "grid 8 overruns the 4000-byte buffer and faults" 1 $GPUREDUCE replay --guard=end bad.bin
check "shrink it" $GPUREDUCE shrink -j 2 --quiet -o r/repro.cu bad.bin
check_grep "repro.cu applies the cluster dimension" "attrs\[0\].id = (CUlaunchAttributeID)4;   /\* cluster dimension, as captured \*/" r/repro.cu
check_grep "  ...and leaves the event out, saying why" "launch attribute 7 (programmatic event) left out: it names an event of the captured process" r/repro.cu
check "  ...compiles against the double" $CC -x c -w -I$CUDA/include -o r/repro r/repro.cu -L$DBL -Wl,-rpath,$DBL -lcuda
check_exit "  ...and faults" 1 ./r/repro
finish
