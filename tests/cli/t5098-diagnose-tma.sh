#!/bin/sh
# t5098-diagnose-tma.sh - diagnose speaks of the TMA descriptor when the
# sanitizer reports no address (issue 24): on the H200 a TMA access out of
# its buffer is reported as "Warp illegal address ... at kernel+0x260 in
# train.py:33" with no address, and diagnose said "no diagnosis".  tma-prog
# (t5094) is captured with its bad row stride on the driver double and
# shrunk; a stand-in compute-sanitizer reports the fault the H200's way.
# The diagnosis must name the parameter that holds the map, the buffer it
# is over, its geometry and the bytes it spans against the buffer's size,
# with the sanitizer's error and faulting line.  A launch without a map
# gets the exception itself (it was "no diagnosis" until 2026-12-05: a
# device-built descriptor, Triton's device-side TMA, leaves no map in the
# parameters), with the buffers the launch had.
. tests/cli/test-lib.sh

. tests/cli/capture-fakes.sh
capture_on_double $H/tma-prog.c
PATH=/usr/bin:/bin
export LD_LIBRARY_PATH GPUREDUCE_CAPTURE_LIB GPUREDUCE_LIBCUDA PATH
unset CUDA_INJECTION64_PATH GPUREDUCE_SANITIZER
cd "$TMP" || exit 1
CUBIN=$DBL/kernels.cubin

check_exit "a bad stride faults under capture" 3 "$GPUREDUCE" capture -o bad.bin -- ./prog $CUBIN bad
check "shrink it (no sanitizer)" "$GPUREDUCE" shrink -j 2 --quiet --no-diagnose -o r/repro.cu bad.bin
cat > warp-sanitizer <<'EOT'
#!/bin/sh
. "$SRCDIR/tests/cli/helpers/fake-sanitizer.sh"
san_run "$@"
cat <<EOR
========= COMPUTE-SANITIZER
========= Warp illegal address
=========     at tma_rows(CUtensorMap_st, float *, int)+0x260 in tma.py:33
=========     by thread (0,0,0) in block (0,0,0)
=========     Saved host backtrace up to driver entry point at kernel launch time
=========         Host Frame: cuLaunchKernel [0x39fb94] in libcuda.so.1
========= 
EOR
EOT
chmod +x warp-sanitizer
check "diagnose with a report without an address" env GPUREDUCE_SANITIZER=$TMP/warp-sanitizer "$GPUREDUCE" diagnose r/repro.bin
cp "$TMP/.out" d.txt
check_grep "  ...the sanitizer's error and faulting line" "Warp illegal address at tma_rows(CUtensorMap_st, float \*, int)+0x260 in tma.py:33 (no address reported: the launch reads through a TMA descriptor)" d.txt
check_grep "  ...the parameter that holds the map, its geometry" "param 0 .CUtensorMap_st. is a TMA descriptor over a 64x256 f32 tensor, box 64x64, row strides 8192 bytes" d.txt
check_grep "  ...the buffer it is over" "over buffer [0-9]* (64.0 KiB, base at offset 0)" d.txt
check_grep "  ...the bytes it spans against the buffer's size" "its dims and strides span 505.0 KiB from its base, the buffer ends 64.0 KiB after it: 441.0 KiB past its end" d.txt
n=$(grep -c "no diagnosis\|reported no memory error" d.txt)
[ "$n" = 0 ] && ok "  ...not 'no diagnosis'" || fail "  ...not 'no diagnosis' ($n)"

# a launch without a map, the same report: still no diagnosis
cat >plain.txt <<EOT
device "gpureduce CPU double"
module $DBL/kernels.cubin 1
alloc 0x7f0000100000 256
launch _Z5scalePfPKfi 1 128 ptr:0x7f0000100000 ptr:0x7f0000100000 i32:128
fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel 0 at_launch=1
EOT
check "mktrace (no map)" $MKTRACE plain.bin < plain.txt
check "diagnose a launch without a map" env GPUREDUCE_SANITIZER=$TMP/warp-sanitizer "$GPUREDUCE" diagnose plain.bin
cp "$TMP/.out" p.txt
check_grep "  ...the exception, its thread and line" "Warp illegal address by thread (0,0,0) of block (0,0,0) at tma_rows(CUtensorMap_st, float \*, int)+0x260 in tma.py:33: compute-sanitizer reported no address" p.txt
check_grep "  ...the launch's buffers by their role" "the launch's buffers: param 0 .float\*. (a 256 B buffer)" p.txt
n=$(grep -c "no diagnosis\|reported no memory error\|TMA descriptor over" p.txt)
[ "$n" = 0 ] && ok "  ...not 'no diagnosis', no map made up" || fail "  ...not 'no diagnosis', no map made up ($n)"
finish
