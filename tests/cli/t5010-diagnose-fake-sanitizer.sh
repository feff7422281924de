#!/bin/sh
# t5010-diagnose-fake-sanitizer.sh - diagnose and shrink's site check, on the
# CPU: a stand-in compute-sanitizer (a shell script) runs the real replay and
# prints a report in compute-sanitizer's format, with the buffer lines the
# replay worker (or a built repro.cu) prints, so the mapping from address to
# parameter is tested for real.
. tests/cli/test-lib.sh

DBL=$BUILD/double
export GPUREDUCE_LIBCUDA=$DBL/libcuda.so.1
cd "$TMP" || exit 1

# The fake: runs the command, then reports an invalid write 4 bytes past the
# end of the buffer the worker placed first (gpureduce-buffer 0 ...), at a PC
# that depends on the launch's grid (so reductions of the grid "move" the
# fault when FAKE_MOVE=1).
cat > fake-sanitizer <<'EOT'
#!/bin/sh
. "$SRCDIR/tests/cli/helpers/fake-sanitizer.sh"
san_run "$@"
[ -n "$buf0" ] || exit 0
set -- $buf0 $buf0_size
addr=$(printf '0x%x' $(( $1 + $2 + 4 )))
pc=0x90
if [ "${FAKE_MOVE:-0}" = 1 ] && ! "$GPUREDUCE" show "$(echo "$out" | sed -n 's/^TRACE=//p')" >/dev/null 2>&1; then :; fi
if [ "${FAKE_MOVE:-0}" = 1 ] && [ -n "$FAKE_GRID_FILE" ] && [ -f "$FAKE_GRID_FILE" ]; then pc=0x$(cat "$FAKE_GRID_FILE"); fi
cat <<EOR
========= COMPUTE-SANITIZER
========= Invalid __global__ write of size 4 bytes
=========     at scale_nocheck(float *, const float *, int)+$pc
=========     by thread (232,0,0) in block (3,0,0)
=========     Access to $addr is out of bounds
=========     and is 5 bytes after the nearest allocation at $1 of size $2 bytes
EOR
EOT
chmod +x fake-sanitizer
export GPUREDUCE_SANITIZER=$TMP/fake-sanitizer

cat > oob.txt <<EOT
process 100 /work ./app
device "gpureduce CPU double"
module $DBL/kernels.cubin 1
alloc 0x7f0000200000 4000
alloc 0x7f0000100000 4000
h2d 0x7f0000100000 4000 seq
launch _Z13scale_nocheckPfPKfi 8 256 ptr:0x7f0000200000 ptr:0x7f0000100000 i32:1000
fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel 0 at_launch=1
EOT
check "mktrace" $MKTRACE oob.bin < oob.txt
check "diagnose a trace" $GPUREDUCE diagnose oob.bin
check_grep "maps the address to param 0 and its size" \
	"global write of 4 bytes by thread (232,0,0) of block (3,0,0) at scale_nocheck(float \*, const float \*, int)+0x90: 5 bytes past the end of param 0 .float\*. (a 4000 B buffer)" "$TMP/.out"
check "shrink with the sanitizer present" $GPUREDUCE shrink -j 2 --quiet -o r/repro.cu oob.bin
check_grep "the repro header carries the diagnosis" "5 bytes past the end of param 0" r/repro.cu
check_grep "repro.yaml carries it too" "^diagnosis: .global write of 4 bytes by thread" r/repro.yaml
check_grep "site confirmed after the grid reduction" "site_confirmed: true" r/repro.yaml
# diagnose of a repro.cu: the program built against the double prints where
# it placed each buffer (the side channel, as replay does), read the same way
check "diagnose the repro.cu" env GPUREDUCE_NVCC="cc -x c -w -I${CUDA:-/usr/local/cuda}/include -L$DBL -Wl,-rpath,$DBL" \
	$GPUREDUCE diagnose r/repro.cu
check_grep "  ...maps the address to param 0 by the repro's own buffer lines" \
	"5 bytes past the end of param 0 .float\*. (a 4000 B buffer)" "$TMP/.out"

# A site that moves when the grid shrinks: shrink must back off to the slice.
cat > fake2 <<'EOT'
#!/bin/sh
. "$SRCDIR/tests/cli/helpers/fake-sanitizer.sh"
pc=0x90
"$GPUREDUCE" show "$trace" 2>/dev/null | grep -q 'grid: \[8, 1, 1\]' || pc=0x1c0
"$@" 2>&1
san_report $pc "by thread (0,0,0) in block (4,0,0)" "Access to 0x10 is out of bounds"
EOT
chmod +x fake2
export GPUREDUCE_SANITIZER=$TMP/fake2
check "shrink when a reduction moves the fault site" $GPUREDUCE shrink -j 2 --quiet -o m/repro.cu oob.bin
check_grep "backed off, saying why" "^note: .the grid phase moved the fault .*backed off to the state after data" m/repro.yaml
check_grep "the null address is called what it is" "null (or near-null) pointer" m/repro.yaml
check_grep "the repro keeps the original grid" "launch_and_check(fn, \"scale_nocheck(float\*, float const\*, int)\", 8, 1, 1" m/repro.cu

# A run under the sanitizer that does not fault (a race that did not fire
# this time) is inconclusive: no back-off, and the yaml says so.
cat > fake3 <<'EOT'
#!/bin/sh
. "$SRCDIR/tests/cli/helpers/fake-sanitizer.sh"
"$@" >/dev/null 2>&1
if "$GPUREDUCE" show "$trace" 2>/dev/null | grep -q 'grid: \[8, 1, 1\]'; then
san_report 0x90 "by thread (0,0,0) in block (4,0,0)" "Access to 0x10 is out of bounds"
fi
EOT
chmod +x fake3
export GPUREDUCE_SANITIZER=$TMP/fake3
check "shrink when the reduced trace shows no sanitizer report" $GPUREDUCE shrink -j 2 --quiet -o q/repro.cu oob.bin
check_grep "says the site is unconfirmed" "^note: .site not confirmed" q/repro.yaml
if grep -q 'launch_and_check(fn, "scale_nocheck(float\*, float const\*, int)", 8, 1, 1' q/repro.cu; then
	fail "an inconclusive check must not undo the grid reduction"
else
	ok "no back-off on an inconclusive check"
fi

# compute-sanitizer goes on checking every faulting thread after the report
# it prints (15 s for a 120k-thread grid on the H200).  A run is stopped as
# soon as its report is complete: this fake prints one, then "checks" for
# 60 s.  Without the early stop, timeout 30 fails these.
cat > fake-slow <<'EOT'
#!/bin/sh
. "$SRCDIR/tests/cli/helpers/fake-sanitizer.sh"
"$@" 2>&1
cat <<EOR
========= Invalid __global__ write of size 4 bytes
=========     at scale_nocheck(float *, const float *, int)+0x90
=========     by thread (0,0,0) in block (4,0,0)
=========     Access to 0x10 is out of bounds
=========         Host Frame: _start [0x38a0] in gpureduce
========= 
EOR
sleep 60
echo "========= ERROR SUMMARY: 120000 errors"
EOT
# this test's own sleep (60.PID seconds), so no other run's is mistaken for it
TAG=$$
sed -i "s/^sleep 60\$/sleep 60.$TAG/" fake-slow
chmod +x fake-slow
export GPUREDUCE_SANITIZER=$TMP/fake-slow
check "diagnose stops the sanitizer run once its report is out" timeout 30 $GPUREDUCE diagnose oob.bin
check_grep "and explains that report" "at scale_nocheck(float \*, const float \*, int)+0x90: address 0x10 -- a null" "$TMP/.out"
check "shrink stops them too" timeout 50 $GPUREDUCE shrink -j 2 --quiet --log=slow.log -o s/repro.cu oob.bin
check_grep "the log says the slice state's run was stopped" "sanitizer on the slice state: .*stopped after its reports" slow.log
check_grep "site confirmed from the stopped runs" "site_confirmed: true" s/repro.yaml
if pgrep -f "^sleep 60\\.$TAG\$" >/dev/null 2>&1; then
	fail "a stopped sanitizer run left its processes behind"
else
	ok "stopped runs leave no process behind"
fi

# A report that is still open is waited for: this fake pauses inside it.
cat > fake-pause <<'EOT'
#!/bin/sh
. "$SRCDIR/tests/cli/helpers/fake-sanitizer.sh"
"$@" 2>&1
echo "========= Invalid __global__ write of size 4 bytes"
sleep 1
cat <<EOR
=========     at scale_nocheck(float *, const float *, int)+0xa0
=========     Access to 0x10 is out of bounds
EOR
EOT
chmod +x fake-pause
export GPUREDUCE_SANITIZER=$TMP/fake-pause
check "diagnose waits for a report still being written" $GPUREDUCE diagnose oob.bin
check_grep "and reads all of it" "at scale_nocheck(float \*, const float \*, int)+0xa0" "$TMP/.out"

# The scalars phase moves the fault (this fake's PC depends on the scalar
# 1000): the back-off reads the states latest first, and once the grid
# state fails at the slice's site, the data state's run is ended unread.
fake_sanitizer_scalar_site fake5
export GPUREDUCE_SANITIZER=$TMP/fake5
check "shrink when the scalars phase moves the fault" $GPUREDUCE shrink -j 2 --quiet --log=b.log -o b/repro.cu oob.bin
check_grep "backed off to the grid state" "^  backed_off_to: grid" b/repro.yaml
check_grep "  ...after running it" "sanitizer .*state-[0-9]*-grid.bin: .*+0x90" b.log
check_grep "the final trace's run went with its confirmation runs" "final-site.bin (started with the confirmation runs): .*+0x1c0" b.log
check_grep "  ...and the site check took it from the cache" "sanitizer b/repro.bin[^ ]*: .*+0x1c0.*(cached)" b.log
if grep -q "state-[0-9]*-data" b.log; then
	fail "  ...the data state's run was read although the grid state matched"
else
	ok "  ...and the data state's run was ended unread"
fi

# Zeros that move the fault: the slice keeps the data phase's zeros when
# they fault (its first test), so compute-sanitizer's base is the slice as
# captured, not the zeroed one: the move is still seen.  This fake's PC
# depends on the source buffer's copy having become zeros (a second MEMSET).
# fake_by_count NAME TYPE TEST: a fake whose PC is 0x1c0 when the trace it
# runs has TEST (a test(1) comparison, "-ge 2") records of TYPE, else 0x90
fake_by_count() {
	cat > "$1" <<EOT
#!/bin/sh
. "\$SRCDIR/tests/cli/helpers/fake-sanitizer.sh"
pc=0x90
[ "\$("\$GPUREDUCE" show "\$trace" 2>/dev/null | grep -c 'type: $2')" $3 ] && pc=0x1c0
"\$@" 2>&1
san_report \$pc "by thread (0,0,0) in block (4,0,0)" "Access to 0x10 is out of bounds"
EOT
	chmod +x "$1"
}
fake_by_count fake6 MEMSET "-ge 2"
export GPUREDUCE_SANITIZER=$TMP/fake6
check "shrink when the zeros move the fault" $GPUREDUCE shrink -j 2 --quiet --log=z.log -o z/repro.cu oob.bin
check_grep "  ...the slice kept the zeros first" "slice (reduced to one launch, copies in as zeros)" z/repro.cu
check_grep "  ...the base was the slice as captured" "sanitizer on the slice state: .*+0x90" z.log
check_grep "  ...so the data phase is named as moving it" "^note: .the data phase moved the fault .*backed off to the state after slice" z/repro.yaml
n=$("$GPUREDUCE" show z/repro.bin | grep -c 'type: MEMSET')
[ "$n" = 1 ] && ok "  ...and repro.bin keeps the source's bytes (one MEMSET)" || fail "  ...repro.bin has $n MEMSETs (1)"

# The slice starts compute-sanitizer's base run on its own candidate before
# it knows whether that faults.  Here it does not: racy_augment's extra
# write comes on the launches DOUBLE_SEED=2 picks (the third in a process,
# not the first), so the slice loses the fault and the base becomes the
# launches' state; the early run must be replaced.  This fake's PC says
# how many launches the trace it was given has (one: 0x1c0).  One worker
# (-j 1): which launch is the third in a process, and so how far the
# suffix and ddmin cut, depends on which worker ran what before, and with
# one worker that is the same in every run.  Clean candidates are not run
# again (GPUREDUCE_RECHECK_CLEAN=0): those runs and the original's that
# follow one that faults shift the sequence, and with it which state the
# base run is (t5123 tests the rechecks).
{ printf 'process 100 /work ./app\ndevice "gpureduce CPU double"\nmodule %s/kernels.cubin 1\nalloc 0x7f0000100000 4096\n' "$DBL"
	for i in 1 2 3; do echo 'launch _Z12racy_augmentPfii 4 256 ptr:0x7f0000100000 i32:1024 i32:1'; done
	echo 'fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel 2 at_launch=1'
} > third.txt
check "mktrace: the third launch faults" $MKTRACE third.bin < third.txt
fake_by_count fake7 LAUNCH "-eq 1"
export GPUREDUCE_SANITIZER=$TMP/fake7
check "shrink when the slice loses the fault" env DOUBLE_SEED=2 GPUREDUCE_RECHECK_CLEAN=0 $GPUREDUCE shrink -j 1 --quiet --log=s3.log -o s3/repro.cu third.bin
check_grep "  ...the slice lost it" "outcome: .lost the fault" s3/repro.yaml
check_grep "  ...the base run is the launches' state's" "sanitizer on the ddmin-launches state: .*+0x90" s3.log
check_grep "  ...and the site is confirmed" "^  site_confirmed: true" s3/repro.yaml

# No sanitizer at all: diagnose says so, shrink still works.
export GPUREDUCE_SANITIZER=$TMP/none
check_exit "diagnose without a sanitizer: exit 4" 4 $GPUREDUCE diagnose oob.bin
check_grep "gives the signature" "signature only: CUDA_ERROR_ILLEGAL_ADDRESS in scale_nocheck(float\*, float const\*, int)" "$TMP/.out"
finish
