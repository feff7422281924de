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
# Builds with the launch's parameters that differ otherwise: the one made
# for exactly the launch's block is taken over a newer one that runs it
# but refuses it (.reqntid, as Triton builds); and when capture recorded
# the function's attributes (FUNC_INFO), the build with those attributes,
# over a newer one with the same parameters and block.
. tests/cli/test-lib.sh
on_double nvcc no-sanitizer plain-path

# pick_trace NAME LINE...: NAME.bin from the common start (process, device,
# a 256-byte buffer), the LINEs (modules, FUNC_INFO, the launch) and the
# fault at launch 0
pick_trace() {
	n=$1
	shift
	{ echo "process 100 /tmp ./app"; echo 'device "gpureduce CPU double"'; echo "alloc 0x7f0000100000 256"
	  for l in "$@"; do echo "$l"; done
	  echo "fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel 0 at_launch=1"; } >$n.txt
	check "mktrace $n" $MKTRACE $n.bin <$n.txt
}
# shrink_faults DIR TRACE WHY [ARG...]: shrink (with ARGs), build the repro
# against the double, it faults
shrink_faults() {
	_d=$1 _t=$2 _w=$3
	shift 3
	check "shrink $_t" $GPUREDUCE shrink -j 2 --quiet "$@" -o $_d/repro.cu $_t
	check "  ...its repro compiles against the double" cc -x c -w -I${CUDA:-/usr/local/cuda}/include \
		-o $_d/repro $_d/repro.cu -L$DBL -Wl,-rpath,$DBL -lcuda
	check_exit "  ...and faults ($_w)" 1 ./$_d/repro
}
L4="launch pick_kernel 1 128 ptr:0x7f0000100000 i32:128 u64:0 u64:0"

# the launch's build, then a newer one with 2 parameters
pick_trace two "elfmodule 1 pick_kernel" 'elfmodule 2 pick_kernel pick_kernel$v2' "$L4"
check_exit "replay takes the build with the launch's 4 parameters: it faults" 1 $GPUREDUCE replay two.bin
check_grep "  ...in pick_kernel" "in pick_kernel: CUDA_ERROR_ILLEGAL_ADDRESS" "$TMP/.out"
# without the slice (its snapshot carries only the launch's build) both
# modules stay, and repro.cu chooses between them as replay does
shrink_faults r two.bin "it took the 4-parameter build" --skip-phases=slice
check_grep "repro.cu chooses with replay's passes (fnpick_core.inc)" "^static int fnpick_ok(CUfunction fn, const struct fnpick_want \*w, int pass)" r/repro.cu
check_grep "  ...by the recorded layout too" "static const unsigned layout\[\] = { 0, 8, 8, 4, 16, 8, 24, 8, };" r/repro.cu

# no candidate has the launch's parameters, none can run its block
pick_trace none 'elfmodule 1 pick_kernel pick_kernel$v3' 'elfmodule 2 pick_kernel pick_kernel$v3 other' "$L4"
check_fail "replay: the launch is refused" $GPUREDUCE replay none.bin
check_grep "  ...INVALID_VALUE" "launch failed: CUDA_ERROR_INVALID_VALUE" "$TMP/.out"
check_grep "  ...the parameters differ" "the function has 2 parameter(s), 12 bytes; the launch recorded 4, 32 bytes" "$TMP/.out"
check_grep "  ...the block is too big for it" "it runs at most 64 threads per block, the launch's block has 128" "$TMP/.out"
check_grep "  ...which module of how many" "candidate [12] of the 2 captured modules defining this name (none has" "$TMP/.out"

# the launch's parameters nowhere, one build runs the block: taken (it reads only n)
pick_trace fits 'elfmodule 1 pick_kernel pick_kernel$v3' 'elfmodule 2 pick_kernel pick_kernel$v2' "$L4"
check_exit "replay takes it: runs clean" 0 $GPUREDUCE replay fits.bin
# .reqntid: a newer build for 128-thread blocks refuses the launch's 64;
# the older build for exactly 64 is the program's (it writes past the buffer)
L2="launch pick_kernel 2 64 ptr:0x7f0000100000 i32:128 u64:0 u64:0"
pick_trace req 'elfmodule 1 pick_kernel pick_kernel$v6' 'elfmodule 2 pick_kernel pick_kernel$v5' "$L2"
check_exit "replay takes the build for exactly the block: it faults" 1 $GPUREDUCE replay req.bin
check_grep "  ...in pick_kernel" "in pick_kernel: CUDA_ERROR_ILLEGAL_ADDRESS" "$TMP/.out"
shrink_faults q req.bin "it took the 64-thread build"
# slice_keeps DIR TRACE: shrink's slice reduces to the launch alone, and
# the reduced trace carries one module, the launch's build (module 1 in
# these traces)
slice_keeps() {
	check "shrink $2, its phases" $GPUREDUCE shrink -j 2 -o $1/repro.cu $2
	check_grep "  ...the slice runs the launch alone (the snapshot has its build)" \
		"phase slice: reduced to one launch" "$TMP/.out"
	check "  ...show the reduced trace" $GPUREDUCE show $1/repro.bin
	check_grep "  ...one module in it" "^  modules: 1$" "$TMP/.out"
	check_grep "  ...the launch's build" "^- id: 1$" "$TMP/.out"
}
slice_keeps qs req.bin
# the explanation when only the 128-thread build is there
pick_trace req2 'elfmodule 2 pick_kernel pick_kernel$v5' "$L2"
check_fail "replay: the launch is refused" $GPUREDUCE replay req2.bin
check_grep "  ...it says the build is for 128-thread blocks" \
	"it was built for blocks of 128 threads, the launch's block has 64 (a build with .reqntid" "$TMP/.out"

# FUNC_INFO: two builds with the launch's parameters and block; the
# program's has 32 registers (it writes), the newer 40 (it only reads)
FI="rec FUNC_INFO func=0x777 name=pick_kernel max_threads=1024 num_regs=32 shared_bytes=0 const_bytes=0 local_bytes=0 ptx_version=90 binary_version=90"
M4='elfmodule 2 pick_kernel pick_kernel$v4'
pick_trace fi "elfmodule 1 pick_kernel" "$M4" "$FI" "$L4 func=0x777"
check_exit "replay takes the build with the recorded attributes: it faults" 1 $GPUREDUCE replay fi.bin
check_grep "  ...in pick_kernel" "in pick_kernel: CUDA_ERROR_ILLEGAL_ADDRESS" "$TMP/.out"
shrink_faults f fi.bin "it took the 32-register build" --skip-phases=slice
check_grep "repro.cu carries the attributes" "{ 1024, 32, 0, 0, 0 } };   /\* -1: not known \*/" f/repro.cu
slice_keeps fs fi.bin
# without the record the newer build is taken (the test can tell them apart)
pick_trace nofi "elfmodule 1 pick_kernel" "$M4" "$L4 func=0x777"
check_exit "replay takes the newest build with the parameters: runs clean" 0 $GPUREDUCE replay nofi.bin
# a record for another handle is not this launch's
pick_trace other "elfmodule 1 pick_kernel" "$M4" "$(echo "$FI" | sed 's/func=0x777/func=0x778/')" "$L4 func=0x777"
check_exit "replay ignores it: runs clean" 0 $GPUREDUCE replay other.bin
finish
