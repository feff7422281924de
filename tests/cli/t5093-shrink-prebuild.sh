#!/bin/sh
# t5093-shrink-prebuild.sh - shrink builds repro.cu before its check asks
# for it (issue 26, src/repro/repro-prebuild.c), on the driver double: the
# state before the last phase (scalars here) and each candidate that phase
# tests alone are built while they run, and the state verify confirms is
# one of them.  Checked: the repro.cu check compiles nothing itself (it
# takes a prebuilt program), which has the final repro.cu's code (header
# aside); the repro still faults 5/5; a program is built once however often
# it is handed over; and a prebuild whose compiler fails leaves the check
# to build (and report) as before.
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
check "shrink" $GPUREDUCE shrink -j 2 --keep-work --log=s.log -o out/repro.cu oob.bin
check_grep "  ...the repro faults 5/5" "repro.cu faulted 5/5" "$TMP/.out"
check_grep "  ...the state before the last phase was built ahead" "the state before scalars, the last phase: its repro.cu is built ahead" s.log
check_grep "  ...and the candidates it tested" "scalars *.*c[0-9]*\.bin: its repro.cu is built ahead while it runs" s.log
check_grep "  ...the check took a prebuilt program" "repro.cu (.*): built ahead in [0-9.]* s" s.log
check_no_grep "  ...and built nothing itself" "check-[0-9]*\.cu" cc.log
n=$(wc -l <cc.log | tr -d ' ')
u=$(sort -u cc.log | wc -l | tr -d ' ')
[ "$n" -ge 1 ] && [ "$n" -le 3 ] && ok "  ...$n builds in all (the state before scalars, its candidates)" ||
	fail "  ...1 to 3 builds in all ($n: $(cat cc.log))"
[ "$n" = "$u" ] && ok "  ...none twice" || fail "  ...none twice ($(cat cc.log))"
sed '1,/\*\//d' out/repro.cu >final.code
same=0
for pre in $(sed -n 's/.* \([^ ]*prebuild-[0-9]*\.cu\) .*/\1/p' cc.log); do
	[ -f "$pre" ] || continue
	sed '1,/\*\//d' "$pre" >pre.code
	cmp -s pre.code final.code && same=1
done
[ "$same" = 1 ] && ok "  ...one of them has the final repro.cu's code" || fail "  ...one of them has the final repro.cu's code"

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
check_grep "  ...built again by the check" "check-[0-9]*\.cu" cc2.log
finish
