#!/bin/sh
# t5120-diagnose-kernel-filter.sh - compute-sanitizer checking the faulting
# kernel only.  A hunt finding's trace (and a crash's) holds every launch
# before the one that faulted; under the sanitizer each of them runs at its
# speed (memcheck: 10-100x), though the report needed is the last launch's.
# Where the sanitizer has --kernel-name (its --help says so), diagnose asks
# it to check kernels named like the last launch's only (kns=<bare name>);
# a filtered run that reports nothing is made again unfiltered; a trace of
# one launch, one with graph launches, GPUREDUCE_SAN_FILTER=0 or an older
# sanitizer get no filter.  On the double, with stand-in sanitizers that
# log their arguments.
. tests/cli/test-lib.sh

DBL=$BUILD/double
export GPUREDUCE_LIBCUDA=$DBL/libcuda.so.1
cd "$TMP" || exit 1

# The stand-in: --help lists --kernel-name when FAKE_HELP_FILTER=1; each run
# logs its options to $TMP/san.log ("run: OPTIONS"); it runs the replay and
# reports the write 4 bytes past the worker's first buffer, at
# scale_nocheck.  FAKE_FILTER_BLIND=1: a filtered run reports nothing (a
# sanitizer whose filter matched no kernel); FAKE_SLICE_OTHER=1: a run of a
# slice (a hunt finding's, diagnose's) reports another kernel (a slice
# that missed state).
cat > san <<'EOT'
#!/bin/sh
if [ "$1" = --help ]; then
	echo "--print-limit arg"
	[ "${FAKE_HELP_FILTER:-0}" = 1 ] && echo "--kernel-name arg   Filter the kernels to be checked"
	exit 0
fi
opts=
for a in "$@"; do
	case $a in -*|all|[0-9]*|kns=*) opts="$opts $a" ;; *) break ;; esac
done
echo "run:$opts" >> "$TMP/san.log"
for a in "$@"; do last=$a; done
echo "trace: ${last##*/}" >> "$TMP/san.log"
while case $1 in -*|all|[0-9]*|kns=*) true ;; *) false ;; esac; do shift; done
. "$SRCDIR/tests/cli/helpers/fake-sanitizer.sh"
san_run "$@"
[ -n "$buf0" ] || exit 0
case $opts in *kns=*) [ "${FAKE_FILTER_BLIND:-0}" = 1 ] && exit 0 ;; esac
set -- $buf0 $buf0_size
addr=$(printf '0x%x' $(( $1 + $2 + 4 )))
kernel="scale_nocheck(float *, const float *, int)"
case ${last##*/} in slice*) [ "${FAKE_SLICE_OTHER:-0}" = 1 ] && kernel="add_one(float *, int)" ;; esac
cat <<EOR
========= COMPUTE-SANITIZER
========= Invalid __global__ write of size 4 bytes
=========     at $kernel+0x90
=========     by thread (232,0,0) in block (3,0,0)
=========     Access to $addr is out of bounds
=========     and is 5 bytes after the nearest allocation at $1 of size $2 bytes
=========
EOR
EOT
chmod +x san
export GPUREDUCE_SANITIZER=$TMP/san
export TMP

# three clean launches of another kernel, then the faulting one
{ double_trace_head
cat <<EOT
alloc 0x7f0000100000 4000
alloc 0x7f0000200000 4000
h2d 0x7f0000100000 4000 seq
launch _Z7add_onePfi 4 256 ptr:0x7f0000100000 i32:1000
launch _Z7add_onePfi 4 256 ptr:0x7f0000100000 i32:1000
launch _Z7add_onePfi 4 256 ptr:0x7f0000100000 i32:1000
launch _Z13scale_nocheckPfPKfi 8 256 ptr:0x7f0000200000 ptr:0x7f0000100000 i32:1000
fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel 0 at_launch=4
EOT
} > four.txt
check "mktrace (four launches)" $MKTRACE four.bin < four.txt
oob_trace_text > one.txt
check "mktrace (one launch)" $MKTRACE one.bin < one.txt

want="5 bytes past the end of param 1 .float const\*. (a 4000 B buffer)"

rm -f san.log
check "diagnose with a sanitizer that filters" env FAKE_HELP_FILTER=1 $GPUREDUCE diagnose four.bin
check_grep "  the diagnosis is made" "$want" "$TMP/.out"
check_grep "  the sanitizer checked kernels named like the last launch's only" \
	"^run:.* --kernel-name kns=scale_nocheck$" san.log
check "  ...in one run" test "$(grep -c '^run:' san.log)" = 1

rm -f san.log
check "a filtered run that reports nothing" env FAKE_HELP_FILTER=1 FAKE_FILTER_BLIND=1 $GPUREDUCE diagnose four.bin
check_grep "  the diagnosis is still made" "$want" "$TMP/.out"
check "  ...by a second run checking every kernel" test "$(grep -c '^run:' san.log)" = 2
check "  ...the second without the filter" sh -c "tail -n 1 san.log | grep -v kernel-name"

rm -f san.log
check "GPUREDUCE_SAN_FILTER=0" env FAKE_HELP_FILTER=1 GPUREDUCE_SAN_FILTER=0 $GPUREDUCE diagnose four.bin
check_grep "  the diagnosis is made" "$want" "$TMP/.out"
check_no_grep "  no filter" "kernel-name" san.log

rm -f san.log
check "a sanitizer without --kernel-name" env FAKE_HELP_FILTER=0 $GPUREDUCE diagnose four.bin
check_grep "  the diagnosis is made" "$want" "$TMP/.out"
check_no_grep "  no filter asked of it" "kernel-name" san.log

rm -f san.log
check "a trace of one launch" env FAKE_HELP_FILTER=1 $GPUREDUCE diagnose one.bin
check_grep "  the diagnosis is made" "$want" "$TMP/.out"
check_no_grep "  no filter: nothing before the launch to spare" "kernel-name" san.log

# A hunt's finding: its diagnosis runs the finding's slice (its launch
# alone, after a snapshot of the state the launches before it left), so
# the sanitizer runs one launch and no filter is needed; with
# GPUREDUCE_DIAG_SLICE=0 it runs the cut trace (every launch before the
# finding), filtered.  The finding reads the same both ways.
{ double_trace_head
cat <<EOT
alloc 0x7f0000100000 4096
alloc 0x7f0000200000 4096
h2d 0x7f0000100000 4096 seq
launch _Z7add_onePfi 4 256 ptr:0x7f0000100000 i32:1024
launch _Z7add_onePfi 4 256 ptr:0x7f0000100000 i32:1024
launch _Z13scale_nocheckPfPKfi 5 256 ptr:0x7f0000200000 ptr:0x7f0000100000 i32:1280
EOT
} > hunt.txt
check "mktrace (a clean run whose last launch overruns both buffers)" $MKTRACE hunt.bin < hunt.txt
rm -f san.log
check_exit "hunt the trace (exit 1: a finding)" 1 env FAKE_HELP_FILTER=1 $GPUREDUCE hunt --no-shrink --keep-work -o h hunt.bin
check_grep "  the finding is scale_nocheck, with the sanitizer's distance" \
	"^finding 1: .*scale_nocheck.*: wrote 5 bytes past the end of param 1" "$TMP/.out"
grep '^finding 1' "$TMP/.out" > finding-slice.txt
check "  the sanitizer ran once" test "$(grep -c '^run:' san.log)" = 1
check_grep "  ...on the finding's slice" "^trace: slice-1.bin$" san.log
check_no_grep "  ...without a filter (one launch)" "kernel-name" san.log
slice=$(ls -d hunt.bin.hunt-*/slice-1.bin 2>/dev/null | head -n 1)
check "  the slice is kept with --keep-work" test -n "$slice"
$GPUREDUCE show "$slice" > slice.yaml 2>&1
check "  ...and holds one launch, the finding's" test "$(grep -c 'type: LAUNCH' slice.yaml)" = 1
check_grep "  ...of scale_nocheck" "_Z13scale_nocheckPfPKfi" slice.yaml
check_no_grep "  ...and none of the launches before it" "_Z7add_onePfi" slice.yaml
rm -rf hunt.bin.hunt-*

rm -f san.log
check_exit "hunt, the slice's report naming another kernel (exit 1)" 1 env FAKE_HELP_FILTER=1 FAKE_SLICE_OTHER=1 \
	$GPUREDUCE hunt --no-shrink -o h hunt.bin
grep '^finding 1' "$TMP/.out" > finding-other.txt
check "  the sanitizer ran twice" test "$(grep -c '^run:' san.log)" = 2
check "  ...the slice first, then the cut trace" \
	test "$(grep '^trace:' san.log | tr '\n' ' ')" = "trace: slice-1.bin trace: finding-1.bin "
check "  the finding reads as from a slice that fits" cmp finding-slice.txt finding-other.txt

rm -f san.log
check_exit "hunt with GPUREDUCE_DIAG_SLICE=0 (exit 1)" 1 env FAKE_HELP_FILTER=1 GPUREDUCE_DIAG_SLICE=0 \
	$GPUREDUCE hunt --no-shrink -o h hunt.bin
check_grep "  its diagnosis ran the cut trace" "^trace: finding-1.bin$" san.log
check_grep "  ...with the filter" "^run:.* --kernel-name kns=scale_nocheck$" san.log
grep '^finding 1' "$TMP/.out" > finding-cut.txt
check "  the finding reads the same as from the slice" cmp finding-slice.txt finding-cut.txt

# gpureduce diagnose of a long crash trace: from its last launch's slice
# (64 launches or more before it), with the whole trace as the fallback
{ double_trace_head
echo "alloc 0x7f0000100000 4000"
echo "alloc 0x7f0000200000 4000"
echo "h2d 0x7f0000100000 4000 seq"
i=0; while [ $i -lt 70 ]; do echo "launch _Z7add_onePfi 4 256 ptr:0x7f0000100000 i32:1000"; i=$((i + 1)); done
echo "launch _Z13scale_nocheckPfPKfi 8 256 ptr:0x7f0000200000 ptr:0x7f0000100000 i32:1000"
echo "fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel 0 at_launch=70"
} > long.txt
check "mktrace (70 launches, then the fault)" $MKTRACE long.bin < long.txt
rm -f san.log
mkdir tmpd
check "diagnose the long trace" env FAKE_HELP_FILTER=1 TMPDIR=$TMP/tmpd $GPUREDUCE diagnose long.bin
check_grep "  the diagnosis is made" "$want" "$TMP/.out"
check "  ...in one sanitizer run" test "$(grep -c '^run:' san.log)" = 1
check_grep "  ...of the last launch's slice" "^trace: slice.bin$" san.log
check "  its temporary folder (in TMPDIR) is gone" test -z "$(ls tmpd)"
rm -f san.log
check "diagnose it, the slice's report naming another kernel" env FAKE_HELP_FILTER=1 FAKE_SLICE_OTHER=1 \
	$GPUREDUCE diagnose long.bin
check_grep "  the diagnosis is made" "$want" "$TMP/.out"
check "  ...by the slice, then the whole trace (filtered)" \
	test "$(grep '^trace:' san.log | tr '\n' ' ')" = "trace: slice.bin trace: long.bin "
check_grep "  ...the whole trace filtered to the last kernel" "^run:.* --kernel-name kns=scale_nocheck$" san.log
rm -f san.log
check "diagnose it with GPUREDUCE_DIAG_SLICE=0" env FAKE_HELP_FILTER=1 GPUREDUCE_DIAG_SLICE=0 $GPUREDUCE diagnose long.bin
check_grep "  the diagnosis is made" "$want" "$TMP/.out"
check_grep "  ...from the whole trace" "^trace: long.bin$" san.log
rm -f san.log
check "diagnose four.bin (3 launches before the fault: no slice)" env FAKE_HELP_FILTER=1 $GPUREDUCE diagnose four.bin
check_grep "  ...from the whole trace" "^trace: four.bin$" san.log

finish
