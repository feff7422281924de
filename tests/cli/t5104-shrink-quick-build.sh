#!/bin/sh
# t5104-shrink-quick-build.sh - shrink's repro.cu check builds with the host
# C++ compiler nvcc hands host code to (issue 26: nvcc's own steps took 1-2 s
# of a 6 s shrink), runs that program, and builds with nvcc beside the runs:
# repro.cu must build the way its header tells users to.  On the driver
# double, with a stand-in nvcc in a stand-in CUDA folder (bin/nvcc,
# include, lib64/stubs/libcuda.so = the double).
. tests/cli/test-lib.sh

on_double no-sanitizer
unset GPUREDUCE_NVCC
command -v g++ >/dev/null 2>&1 || command -v c++ >/dev/null 2>&1 || { ok "no host C++ compiler: nothing to test"; finish; }
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
oob_trace_text >oob.txt
check "mktrace" $MKTRACE oob.bin <oob.txt

: >nvcc.log
check "shrink with nvcc on PATH" $GPUREDUCE shrink -j 2 --log=a.log -o a/repro.cu oob.bin
check_grep "  ...repro.cu faulted 5/5: the runs are the host compiler's build" "repro.cu faulted 5/5" "$TMP/.out"
check_grep "  ...the log says so" "run as built by the host compiler; nvcc built it too" a.log
n=$(grep -c . nvcc.log)
[ "$n" = 1 ] && ok "  ...nvcc built it once, beside the runs" || fail "  ...nvcc built it once, beside the runs ($n builds)"
check_grep "  ...the build of the final program (a prebuilt one's)" "prebuild-[0-9]*\.cu" nvcc.log
check_grep "  ...repro.yaml: 5/5" "^  repro_cu: 5/5" a/repro.yaml

# a back-off makes a second check, of the state before the scalars phase
# (built ahead too, as the state that phase might have left alone): nvcc
# builds that program as well
fake_sanitizer_scalar_site fake5
: >nvcc.log
check "shrink, a site back-off (a second check)" env GPUREDUCE_SANITIZER=$TMP/fake5 \
	$GPUREDUCE shrink -j 2 --log=b.log -o b/repro.cu oob.bin
check_grep "  ...repro.cu faulted 5/5" "repro.cu faulted 5/5" "$TMP/.out"
check_grep "  ...backed off" "^  backed_off_to: grid" b/repro.yaml
n=$(grep -c . nvcc.log); u=$(sort -u nvcc.log | grep -c .)
[ "$n" = 2 ] && [ "$u" = 2 ] && ok "  ...the second check's program built with nvcc too" ||
	fail "  ...the second check's program built with nvcc too ($n builds: $(cat nvcc.log))"

# nvcc refuses what the host compiler took: repro.cu does not build
: >nvcc-fails
check_exit "shrink when nvcc fails: exit 1" 1 $GPUREDUCE shrink -j 2 -o c/repro.cu oob.bin
check_grep "  ...says nvcc does not build it" "does not build with nvcc: .*stand-in refuses" "$TMP/.out"
check_grep "  ...repro.yaml: does not build" "^  repro_cu: does not build" c/repro.yaml
rm -f nvcc-fails
finish
