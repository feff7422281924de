#!/bin/sh
# t5093-shrink-prebuild.sh - shrink builds repro.cu while its final
# confirmation runs (issue 26, src/repro/repro-prebuild.c), on the driver double.
# Checked: the repro.cu check compiles once, the prebuilt program (not a
# second build), which is the final repro.cu's code (header aside); the
# repro still faults 5/5; and a prebuild whose compiler fails leaves the
# check to build (and report) as before.
. tests/cli/test-lib.sh

DBL=$BUILD/double
export GPUREDUCE_LIBCUDA=$DBL/libcuda.so.1
unset GPUREDUCE_SANITIZER
PATH=/usr/bin:/bin; export PATH
cd "$TMP" || exit 1
cat >ccw.sh <<EOT
#!/bin/sh
# a compiler that logs what it builds (the last argument but -lcuda)
echo "\$@" >>"$TMP/cc.log"
exec cc -x c -w -I${CUDA:-/usr/local/cuda}/include -L$DBL -Wl,-rpath,$DBL "\$@"
EOT
chmod +x ccw.sh
export GPUREDUCE_NVCC=$TMP/ccw.sh
cat >oob.txt <<EOT
process 100 /work ./app
device "gpureduce CPU double"
module $DBL/kernels.cubin 1
alloc 0x7f0000100000 4000
alloc 0x7f0000200000 4000
h2d 0x7f0000100000 4000 seq
launch _Z7add_onePfi 4 256 ptr:0x7f0000100000 i32:1000
launch _Z7add_onePfi 4 256 ptr:0x7f0000200000 i32:1000
launch _Z13scale_nocheckPfPKfi 8 256 ptr:0x7f0000200000 ptr:0x7f0000100000 i32:1000
fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel 2 at_launch=1
EOT
check "mktrace" $MKTRACE oob.bin <oob.txt
: >cc.log
check "shrink" $GPUREDUCE shrink -j 2 --keep-work -o out/repro.cu oob.bin
check_grep "  ...the repro faults 5/5" "repro.cu faulted 5/5" "$TMP/.out"
n=$(wc -l <cc.log | tr -d ' ')
[ "$n" = 1 ] && ok "  ...one build in all" || fail "  ...one build in all ($n: $(cat cc.log))"
check_grep "  ...the prebuild, made while verify ran" "prebuild.cu" cc.log
pre=$(sed -n 's/.* \([^ ]*prebuild\.cu\) .*/\1/p' cc.log | head -n 1)
if [ -n "$pre" ] && [ -f "$pre" ]; then
	sed '1,/\*\//d' "$pre" >pre.code
	sed '1,/\*\//d' out/repro.cu >final.code
	cmp -s pre.code final.code && ok "  ...the same code as the final repro.cu" || fail "  ...the same code as the final repro.cu"
else
	fail "  ...the prebuilt source is kept in the work directory (${pre:-none})"
fi

# a compiler that fails on the prebuild only: the check builds again
cat >ccfail.sh <<EOT
#!/bin/sh
echo "\$@" >>"$TMP/cc2.log"
case "\$*" in *prebuild*) echo "ccfail: refusing the prebuild" >&2; exit 1 ;; esac
exec cc -x c -w -I${CUDA:-/usr/local/cuda}/include -L$DBL -Wl,-rpath,$DBL "\$@"
EOT
chmod +x ccfail.sh
: >cc2.log
check "shrink, the prebuild does not build" env GPUREDUCE_NVCC=$TMP/ccfail.sh $GPUREDUCE shrink -j 2 -o out2/repro.cu oob.bin
check_grep "  ...the repro faults 5/5 all the same" "repro.cu faulted 5/5" "$TMP/.out"
n=$(wc -l <cc2.log | tr -d ' ')
[ "$n" = 2 ] && ok "  ...built again by the check" || fail "  ...built again by the check ($n builds)"
finish
