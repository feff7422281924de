#!/bin/sh
# t6030-options-exit-codes.sh - one option parser for every subcommand
# (common/opts.h): `--opt=V` and `--opt V` both work, numbers are typed and
# range-checked, a bad value is exit 2 with a line naming the option; and
# the exit codes of README.md's table where they were wrong: an unwritable
# --log is 3 (not 1), verify with a compiler but no driver is 4 with the
# reason (not 1), no nvcc is 4; exit 5 is only for internal errors.
. tests/cli/test-lib.sh

on_double no-sanitizer plain-path

oob_trace_text > oob.txt
check "mktrace oob" $MKTRACE oob.bin < oob.txt

# usage CMD DESC PATTERN ARGS...: exit 2, one line matching PATTERN
usage() {
	desc=$1 pat=$2
	shift 2
	check_exit "$desc: exit 2" 2 timeout 20 $GPUREDUCE "$@"
	check_grep "  ...naming the option" "$pat" "$TMP/.out"
}

# 1. typed numbers, both spellings -------------------------------------------
usage "shrink --time-limit=1O" "shrink: --time-limit: '1O' is not a number" shrink --time-limit=1O oob.bin
usage "shrink --time-limit 1O" "shrink: --time-limit: '1O' is not a number" shrink --time-limit 1O oob.bin
usage "shrink -j 0" "shrink: -j: 0 is out of range (1 to 64)" shrink -j 0 oob.bin
usage "shrink -j4x" "shrink: -j: '4x' is not a whole number" shrink -j4x oob.bin
usage "shrink --runs=2.5" "shrink: --runs: '2.5' is not a whole number" shrink --runs=2.5 oob.bin
usage "shrink --candidate-timeout=-1" "shrink: --candidate-timeout: -1 is out of range" shrink --candidate-timeout=-1 oob.bin
usage "shrink --keep-going=x" "shrink: --keep-going: 'x' is not a number" shrink --keep-going=x oob.bin
usage "shrink --log with no value" "shrink: --log needs a value" shrink oob.bin --log
usage "shrink --bogus" "shrink: unknown option '--bogus'" shrink --bogus oob.bin
usage "verify --rate=abc (main took it as 0)" "verify: --rate: 'abc' is not a number (0 to 1)" verify --rate=abc x.cu
usage "verify --rate 2" "verify: --rate: 2 is out of range (0 to 1)" verify --rate 2 x.cu
usage "verify -n x" "verify: -n: 'x' is not a whole number" verify -n x x.cu
usage "replay --timeout=soon" "replay: --timeout: 'soon' is not a number" replay --timeout=soon oob.bin
usage "replay --stop-before -3" "replay: --stop-before: -3 is out of range" replay --stop-before -3 --snapshot=s.bin oob.bin
usage "replay --guard sideways" "replay: --guard takes end, start, none or layout" replay --guard sideways oob.bin
usage "show --event x" "show: --event 'x': expected an event number" show --event x oob.bin
usage "diagnose --guard sideways" "diagnose: --guard takes end, start, none or layout" diagnose --guard sideways oob.bin
usage "capture --output with no value" "capture: --output needs a value" capture --output

# 2. --opt V works wherever --opt=V does ----------------------------------------
check_exit "replay --guard none (space form) faults" 1 $GPUREDUCE replay --guard none --timeout 30 oob.bin
check "show --event 3 and --event=3 agree" $GPUREDUCE show --event 3 oob.bin
cp "$TMP/.out" ev1
check "  ...(--event=3)" $GPUREDUCE show --event=3 oob.bin
if cmp -s ev1 "$TMP/.out"; then ok "  ...same output"; else fail "  ...outputs differ"; fi
check "shrink -j 2 --log s.log --time-limit 60 --runs 2 --confirm 3 -o r/repro.cu (space forms)" \
	$GPUREDUCE shrink -j 2 --quiet --log s.log --time-limit 60 --runs 2 --confirm 3 -o r/repro.cu oob.bin
check_grep "  ...--log s.log was written" "batch of" s.log
check_grep "  ...--confirm 3 was used" "reduced: 3/3" r/repro.yaml

# 3. exit codes ------------------------------------------------------------------
touch afile
check_exit "shrink with an unwritable --log: exit 3 before any work (main: 1)" 3 \
	$GPUREDUCE shrink --quiet --log=afile/s.log -o u/repro.cu oob.bin
check_grep "  ...naming the log" "cannot write the log (--log) to afile/s.log" "$TMP/.out"
# built against the double, but run without it: the loader cannot find
# libcuda.so.1 (a machine with nvcc and no driver)
export GPUREDUCE_NVCC="cc -x c -w -I${CUDA:-/usr/local/cuda}/include -L$DBL"
check_exit "verify with no driver: exit 4 (main: 1, '2 failed to run')" 4 $GPUREDUCE verify -n 2 r/repro.cu
check_grep "  ...with the reason" "did not run in any of 2 runs (the first: exit 127" "$TMP/.out"
check_grep "  ...and the loader's message" "libcuda.so.1" "$TMP/.out"
check_exit "verify with the driver: exit 0" 0 env GPUREDUCE_NVCC="$GPUREDUCE_NVCC -Wl,-rpath,$DBL" \
	$GPUREDUCE verify -n 2 r/repro.cu
unset GPUREDUCE_NVCC
check_exit "verify with no compiler: exit 4 (environment, not a bad repro)" 4 \
	env GPUREDUCE_NVCC=/nonexistent/nvcc $GPUREDUCE verify -n 1 r/repro.cu
check_grep "  ...saying so" "the compiler in GPUREDUCE_NVCC (/nonexistent/nvcc) was not found" "$TMP/.out"
check_exit "verify of a missing file: exit 3" 3 env GPUREDUCE_NVCC=cc $GPUREDUCE verify -n 1 nothere.cu

# 4. README's table has a column for every command
for c in capture replay shrink show verify diagnose; do
	if sed -n '/^### Exit codes/,/^An \*\*incomplete/p' "$SRCDIR/README.md" | grep -q "^| code .*| $c |\|^| code .*| $c$"; then
		ok "README exit-code table: $c"
	else
		fail "README exit-code table has no column for $c"
	fi
done
if grep -q "EXIT_INTERNAL = 5" "$SRCDIR/src/cmds.h" && ! grep -q "^| 5 |" "$SRCDIR/README.md"; then
	fail "exit 5 is used but not in README's table"
else
	ok "exit 5 is documented (or gone)"
fi
finish
