#!/bin/sh
# t5104-shrink-quick-build.sh - shrink's repro.cu check builds with the host
# C++ compiler nvcc hands host code to (issue 26: nvcc's own steps took 1-2 s
# of a 6 s shrink), runs that program, and builds with nvcc beside the runs:
# repro.cu must build the way its header tells users to.  On the driver
# double, with a stand-in nvcc in a stand-in CUDA folder (bin/nvcc,
# include, lib64/stubs/libcuda.so = the double).
. tests/cli/test-lib.sh

DBL=$BUILD/double
export GPUREDUCE_LIBCUDA=$DBL/libcuda.so.1
unset GPUREDUCE_SANITIZER GPUREDUCE_NVCC
command -v g++ >/dev/null 2>&1 || command -v c++ >/dev/null 2>&1 || { ok "no host C++ compiler: nothing to test"; finish; }
cd "$TMP" || exit 1
mkdir -p cuda/bin cuda/lib64/stubs
ln -s "${CUDA:-/usr/local/cuda}/include" cuda/include
ln -s "$DBL/libcuda.so" cuda/lib64/stubs/libcuda.so
# the stand-in nvcc logs each build and makes a program that runs clean:
# a run of nvcc's build can never count as a fault
cat >cuda/bin/nvcc <<EOT
#!/bin/sh
echo "nvcc \$*" >>"$TMP/nvcc.log"
[ -f "$TMP/nvcc-fails" ] && { echo "nvcc: error: stand-in refuses" >&2; exit 1; }
while [ \$# -gt 0 ]; do [ "\$1" = -o ] && out=\$2; shift; done
printf '#!/bin/sh\necho "repro: ran clean"\nexit 0\n' >"\$out"
chmod +x "\$out"
EOT
chmod +x cuda/bin/nvcc
PATH=$TMP/cuda/bin:/usr/bin:/bin; export PATH
# the quick build links the stub folder; the double is found at run time here
LD_LIBRARY_PATH=$DBL${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}; export LD_LIBRARY_PATH
cat >oob.txt <<EOT
process 100 /work ./app
device "gpureduce CPU double"
module $DBL/kernels.cubin 1
alloc 0x7f0000200000 4000
alloc 0x7f0000100000 4000
h2d 0x7f0000100000 4000 seq
launch _Z13scale_nocheckPfPKfi 8 256 ptr:0x7f0000200000 ptr:0x7f0000100000 i32:1000
fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel 0 at_launch=1
EOT
check "mktrace" $MKTRACE oob.bin <oob.txt

: >nvcc.log
check "shrink with nvcc on PATH" $GPUREDUCE shrink -j 2 --log=a.log -o a/repro.cu oob.bin
check_grep "  ...repro.cu faulted 5/5: the runs are the host compiler's build" "repro.cu faulted 5/5" "$TMP/.out"
check_grep "  ...the log says so" "run as built by the host compiler; nvcc built it too" a.log
n=$(grep -c . nvcc.log)
[ "$n" = 1 ] && ok "  ...nvcc built it once, beside the runs" || fail "  ...nvcc built it once, beside the runs ($n builds)"
check_grep "  ...the build of the final program (the prebuild's)" "prebuild.cu" nvcc.log
check_grep "  ...repro.yaml: 5/5" "^  repro_cu: 5/5" a/repro.yaml

# a back-off makes the check build again, outside the prebuild: the same way
cat > fake5 <<'EOT'
#!/bin/sh
. "$SRCDIR/tests/cli/helpers/fake-sanitizer.sh"
pc=0x90
"$GPUREDUCE" show "$trace" 2>/dev/null | grep -q 'value: 1000$' || pc=0x1c0
"$@" 2>&1
san_report $pc "Access to 0x10 is out of bounds"
EOT
chmod +x fake5
: >nvcc.log
check "shrink, a site back-off (a second check)" env GPUREDUCE_SANITIZER=$TMP/fake5 \
	$GPUREDUCE shrink -j 2 --log=b.log -o b/repro.cu oob.bin
check_grep "  ...repro.cu faulted 5/5" "repro.cu faulted 5/5" "$TMP/.out"
check_grep "  ...backed off" "^  backed_off_to: grid" b/repro.yaml
check_grep "  ...the second check built with nvcc too" "check-[0-9]*.cu" nvcc.log

# nvcc refuses what the host compiler took: repro.cu does not build
: >nvcc-fails
check_exit "shrink when nvcc fails: exit 1" 1 $GPUREDUCE shrink -j 2 -o c/repro.cu oob.bin
check_grep "  ...says nvcc does not build it" "does not build with nvcc: .*stand-in refuses" "$TMP/.out"
check_grep "  ...repro.yaml: does not build" "^  repro_cu: does not build" c/repro.yaml
rm -f nvcc-fails
finish
