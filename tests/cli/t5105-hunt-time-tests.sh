#!/bin/sh
# t5105-hunt-time-tests.sh - `gpureduce hunt --time-tests -- pytest ...`
# (issue 28 item 3: time per test beside the plain run), on the CPU driver
# double.  A stand-in pytest prints a durations report in pytest's format
# (setup / call / teardown lines), slower under capture, and writes a clean
# CUDA process's trace where capture tells it to.  hunt must run it twice,
# each time with pytest's durations options added to PYTEST_ADDOPTS (an
# existing value kept), sum each test's three phases, print the tests side
# by side with the ratio, write every test to DIR/test-times.txt and keep
# both runs' output.
. tests/cli/test-lib.sh

on_double no-sanitizer plain-path
if [ ! -f "$BUILD/libgpureduce-capture.so" ]; then
	echo "skip: $BUILD/libgpureduce-capture.so not built (no CUPTI headers): capture cannot run"
	finish
fi

cat >p.txt <<EOT
process 100 /work python3 -m pytest tests/
device "gpureduce CPU double"
module $BUILD/double/kernels.cubin 1
alloc 0x7f0000000000 8192
note test: tests/test_a.py::test_add (call)
launch _Z7add_onePfi 4 256 ptr:0x7f0000000000 i32:1024
end 0
EOT
check "mktrace" $MKTRACE p.bin <p.txt
cat >fake-pytest <<EOT
#!/bin/sh
echo "PYTEST_ADDOPTS=[\$PYTEST_ADDOPTS]"
k=1
if [ -n "\$GPUREDUCE_TRACE" ]; then
	cp $TMP/p.bin "\$GPUREDUCE_TRACE"
	k=3
fi
echo "============================= slowest durations =============================="
echo "0.\${k}0s call     tests/test_a.py::test_add"
echo "0.0\${k}s setup    tests/test_a.py::test_add"
echo "0.00s teardown tests/test_a.py::test_add"
echo "1.\${k}0s call     tests/test_b.py::test_big[cuda-64]"
echo "=========================== 2 passed in 1.5s ==========================="
EOT
chmod +x fake-pytest

check "hunt --time-tests -- pytest" env PYTEST_ADDOPTS=-x $GPUREDUCE hunt --time-tests -o out -- ./fake-pytest
cp "$TMP/.out" run.log
check_grep "durations asked for, the user's options kept (plain run)" \
	"PYTEST_ADDOPTS=\[-x --durations=0 --durations-min=0\]" out/plain-run.log
check_grep "  ...and under capture" "PYTEST_ADDOPTS=\[-x --durations=0 --durations-min=0\]" out/capture-run.log
check_grep "both runs' output is printed" "2 passed in 1.5s" run.log
check_grep "the command's seconds, plainly and under capture" \
	"^hunt: the command ran [0-9.]* s plainly and [0-9.]* s under capture" run.log
# test_add: 0.10 + 0.01 + 0 plain, 0.30 + 0.03 + 0 under capture
check_grep "a test's three phases summed, side by side, with the ratio" \
	"^0.110 *0.330 *3.00x *tests/test_a.py::test_add$" run.log
check_grep "a parametrized id kept whole" "^1.100 *1.300 *1.18x *tests/test_b.py::test_big\[cuda-64\]$" run.log
first=$(grep -n "^[0-9.]*  *[0-9.]*  *[0-9.]*x  *tests/test_b.py" run.log | head -1 | cut -d: -f1)
second=$(grep -n "^[0-9.]*  *[0-9.]*  *[0-9.]*x  *tests/test_a.py" run.log | head -1 | cut -d: -f1)
[ -n "$first" ] && [ -n "$second" ] && [ "$first" -lt "$second" ] && ok "slowest under capture first" ||
	fail "slowest under capture first (rows at $first, $second)"
check_grep "totals over the tests both runs timed" \
	"^2 test(s) timed in both runs: 1.210 s plain, 1.630 s under capture (1.35x)" run.log
check_grep "every test in DIR/test-times.txt" "tests/test_a.py::test_add" out/test-times.txt
check_grep "the hunt went on" ": clean (no launch faulted" run.log

# a command that prints no durations report
cat >not-pytest <<EOT
#!/bin/sh
[ -n "\$GPUREDUCE_TRACE" ] && cp $TMP/p.bin "\$GPUREDUCE_TRACE"
echo "ran"
EOT
chmod +x not-pytest
check "hunt --time-tests -- a command that is not pytest" $GPUREDUCE hunt --time-tests -o out2 -- ./not-pytest
check_grep "  ...says no durations were printed" "neither run printed pytest's durations" "$TMP/.out"
check_exit "--time-tests with a TRACE: usage error (exit 2)" 2 $GPUREDUCE hunt --time-tests p.bin
check_grep "  ...saying what to give" "give -- pytest" "$TMP/.out"
finish
