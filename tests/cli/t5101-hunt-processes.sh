#!/bin/sh
# t5101-hunt-processes.sh - `gpureduce hunt -- CMD` (issue 28) for a test
# suite that starts several CUDA processes, on the CPU driver double.  The
# command stands in for `pytest tests/`: it writes two traces where capture
# tells a CUDA process to (GPUREDUCE_TRACE; a second process writes
# PATH.PID), as the capture library would: process 100 runs clean,
# process 4243 overruns a tensor into its neighbour inside one segment
# (silent).  hunt must hunt both, print one line for the finding naming
# the process and the test (the trace's "test:" notes, from
# PYTEST_CURRENT_TEST), say the other process is clean, leave an earlier
# run's trace in the folder alone, and reduce the finding to repro.cu.
. tests/cli/test-lib.sh

on_double nvcc no-sanitizer plain-path
if [ ! -f "$BUILD/libgpureduce-capture.so" ]; then
	echo "skip: $BUILD/libgpureduce-capture.so not built (no CUPTI headers): capture cannot run"
	finish
fi

SEG=0x7f0000000000
A=0x7f0000000000
B=0x7f0000001000
IN=0x7f0000400000
# $1: pid, $2: test, $3: A's grid (4: in bounds, 5: one block past its end)
mk() {
	cat <<EOT
process $1 /work python3 -m pytest tests/
device "gpureduce CPU double"
module $BUILD/double/kernels.cubin 1
alloc $SEG 2097152
alloc $IN 8192
h2d $IN 8192 0x3f
block $A 4096 $SEG initial at=/work/tests/$2.py:7:$2
block $B 4096 $SEG initial at=/work/tests/$2.py:8:$2
note test: tests/$2.py::$2 (call)
launch _Z7add_onePfi 4 256 ptr:$B i32:1024
launch _Z13scale_nocheckPfPKfi $3 256 ptr:$A ptr:$IN i32:1024
launch _Z7add_onePfi 4 256 ptr:$B i32:1024
end 0
EOT
}
mk 100 test_clean 4 >p1.txt
mk 4243 test_overrun 5 >p2.txt
check "mktrace: the clean process" $MKTRACE p1.bin <p1.txt
check "mktrace: the overrunning process" $MKTRACE p2.bin <p2.txt
cat >fake-pytest <<EOT
#!/bin/sh
# writes what two CUDA processes under capture would write
cp $TMP/p1.bin "\$GPUREDUCE_TRACE"
cp $TMP/p2.bin "\$GPUREDUCE_TRACE.4243"
echo "2 passed"
EOT
chmod +x fake-pytest
mkdir -p suite
cp p1.bin suite/trace.bin.77      # an earlier run's trace: not this run's
touch -d '2020-01-01' suite/trace.bin.77
check_exit "hunt -- CMD with a silent overrun in one process: exit 1" 1 $GPUREDUCE hunt -j 2 -o suite -- ./fake-pytest
cp "$TMP/.out" run.log
check_grep "the program's output passes through" "^2 passed" run.log
n=$(grep -c "^finding" run.log)
[ "$n" = 1 ] && ok "one finding line" || fail "$n finding lines, not 1"
check_grep "  ...naming the process and the test" \
	"^finding 1: \[pid 4243\] test tests/test_overrun.py::test_overrun (call): launch #1 scale_nocheck" run.log
check_grep "  ...and the tensor with its allocation site" \
	"param 0 = tensor $A (4096 B, allocated at /work/tests/test_overrun.py:7 in test_overrun)" run.log
check_grep "the clean process hunts clean" "\[pid 100\] suite/trace.bin: clean" run.log
if grep -q "trace.bin.77" run.log; then fail "an earlier run's trace was hunted"; else
	ok "an earlier run's trace in the folder is left out"; fi
check_grep "the summary counts processes and findings, with the times" \
	"^hunt: 2 process(es), 1 finding(s); the program ran .* s under capture, the hunt took .* s" run.log
check_grep "the finding became suite/repro.cu, checked" "hunt: repro of finding 1 -> suite/repro.cu (.*faulted 5/5" run.log
check_grep "  ...repro.yaml names the test" "hunt_finding: .*test tests/test_overrun.py::test_overrun (call)" suite/repro.yaml

# with compute-sanitizer (a stand-in that reports a write 1 byte past the
# first placed buffer, the overrun tensor, in its format): the finding says
# how far past which tensor, read or write
cat > fake-sanitizer <<'EOT'
#!/bin/sh
. "$SRCDIR/tests/cli/helpers/fake-sanitizer.sh"
san_run "$@"
[ -n "$buf0" ] || exit 0
set -- $buf0 $buf0_size
cat <<EOR
========= COMPUTE-SANITIZER
========= Invalid __global__ write of size 4 bytes
=========     at scale_nocheck(float *, const float *, int)+0x90
=========     by thread (0,0,0) in block (4,0,0)
=========     Access to $(printf '0x%x' $(( $1 + $2 ))) is out of bounds
=========     and is 1 bytes after the nearest allocation at $1 of size $2 bytes
EOR
EOT
chmod +x fake-sanitizer
check_exit "hunt with compute-sanitizer: exit 1" 1 env GPUREDUCE_SANITIZER=$TMP/fake-sanitizer SRCDIR=$SRCDIR \
	$GPUREDUCE hunt --no-shrink p2.bin
check_grep "  ...the finding: wrote 1 byte past the end of param 0, the tensor with its site" \
	"^finding 1: test tests/test_overrun.py::test_overrun (call): launch #1 scale_nocheck(float\*, float const\*, int) faulted under end guards (CUDA_ERROR_ILLEGAL_ADDRESS): wrote 1 byte past the end of param 0 = tensor $A (4096 B, allocated at /work/tests/test_overrun.py:7 in test_overrun)" "$TMP/.out"

# both processes clean: exit 0
mk 4243 test_overrun 4 >p2.txt
check "mktrace: the process without the overrun" $MKTRACE p2.bin <p2.txt
check "hunt -- CMD, both clean: exit 0" $GPUREDUCE hunt -o suite2 -- ./fake-pytest
n=$(grep -c ": clean (no launch faulted" "$TMP/.out")
[ "$n" = 2 ] && ok "  ...both processes clean" || fail "  ...$n clean processes, not 2"

# a command that made no CUDA calls: no trace, exit 4
check_exit "hunt -- true: no trace, exit 4" 4 $GPUREDUCE hunt -o suite3 -- true
check_grep "  ...says why" "capture wrote no trace" "$TMP/.out"
# a command that does not run: capture says why, hunt says there is nothing
# to hunt (not "did the program use CUDA?")
check_exit "hunt -- a command that does not exist: exit 4" 4 "$GPUREDUCE" hunt -o nocmd -- /no/such/prog
check_grep "  ...capture names it" "cannot run /no/such/prog" "$TMP/.out"
check_grep "  ...hunt: nothing to hunt" "gpureduce hunt: nothing to hunt: the command did not run (capture exit 127)" "$TMP/.out"
check_no_grep "  ...not asking whether it used CUDA" "did the program use CUDA" "$TMP/.out"

finish
