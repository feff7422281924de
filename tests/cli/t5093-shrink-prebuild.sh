#!/bin/sh
# t5093-shrink-prebuild.sh - shrink builds repro.cu while its final
# confirmation runs (issue 26, src/repro/repro-prebuild.c), on the driver double.
# Checked: the repro.cu check compiles once, the prebuilt program (not a
# second build), which is the final repro.cu's code (header aside); its
# five runs are the ones the prebuild thread made while verify ran (the
# shrink log says so, and the program ran five times in all, not ten); the
# repro still faults 5/5; with --confirm=3 the runs are three; and a
# prebuild whose compiler fails leaves the check to build, run (and report)
# as before.
. tests/cli/test-lib.sh

DBL=$BUILD/double
export GPUREDUCE_LIBCUDA=$DBL/libcuda.so.1
unset GPUREDUCE_SANITIZER
PATH=/usr/bin:/bin; export PATH
cd "$TMP" || exit 1
cat >runmark.h <<EOT
/* compiled into every repro: one line in runs.log per run */
#include <stdio.h>
__attribute__((constructor)) static void gpureduce_test_runmark(void)
{
	FILE *f = fopen("$TMP/runs.log", "a");
	if (f) { fputs("run\\n", f); fclose(f); }
}
EOT
cat >ccw.sh <<EOT
#!/bin/sh
# a compiler that logs what it builds (the last argument but -lcuda)
echo "\$@" >>"$TMP/cc.log"
exec cc -x c -w -include $TMP/runmark.h -I${CUDA:-/usr/local/cuda}/include -L$DBL -Wl,-rpath,$DBL "\$@"
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
: >runs.log
check "shrink" $GPUREDUCE shrink -j 2 --keep-work --log=shrink.log -o out/repro.cu oob.bin
check_grep "  ...the repro faults 5/5" "repro.cu faulted 5/5" "$TMP/.out"
check_grep "  ...its runs made while verify ran" "repro.cu (.*): run while verify ran; 5/5 faulted" shrink.log
n=$(wc -l <runs.log | tr -d ' ')
[ "$n" = 5 ] && ok "  ...five runs in all" || fail "  ...five runs in all ($n)"
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

: >runs.log
check "shrink --confirm=3" $GPUREDUCE shrink -j 2 --confirm=3 --log=shrink3.log -o out3/repro.cu oob.bin
check_grep "  ...three runs, made while verify ran" "repro.cu (.*): run while verify ran; 3/3 faulted" shrink3.log
n=$(wc -l <runs.log | tr -d ' ')
[ "$n" = 3 ] && ok "  ...three runs in all" || fail "  ...three runs in all ($n)"

# a compiler that fails on the prebuild only: the check builds again
cat >ccfail.sh <<EOT
#!/bin/sh
echo "\$@" >>"$TMP/cc2.log"
case "\$*" in *prebuild*) echo "ccfail: refusing the prebuild" >&2; exit 1 ;; esac
exec cc -x c -w -I${CUDA:-/usr/local/cuda}/include -L$DBL -Wl,-rpath,$DBL "\$@"
EOT
chmod +x ccfail.sh
: >cc2.log
check "shrink, the prebuild does not build" env GPUREDUCE_NVCC=$TMP/ccfail.sh $GPUREDUCE shrink -j 2 --log=shrink2.log -o out2/repro.cu oob.bin
check_grep "  ...the repro faults 5/5 all the same" "repro.cu faulted 5/5" "$TMP/.out"
if grep -q "run while verify ran" shrink2.log || ! grep -q "repro.cu (.*): 5/5 faulted" shrink2.log; then fail "  ...its runs made by the check"; else ok "  ...its runs made by the check"; fi
n=$(wc -l <cc2.log | tr -d ' ')
[ "$n" = 2 ] && ok "  ...built again by the check" || fail "  ...built again by the check ($n builds)"
finish
