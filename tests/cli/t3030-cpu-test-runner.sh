#!/bin/sh
# t3030-cpu-test-runner.sh - tests/run-cpu-tests.sh, the runner behind
# `make test`, on a made-up suite: it adds every part's "N passed, N
# failed" up, counts a part that printed no summary as one failure, exits
# non-zero when anything failed, and, just above its last line, names the
# parts that failed with their FAIL lines (CI shows only a log's tail:
# .ci/run repeats that block in its summary).
. tests/cli/test-lib.sh

RUNNER=$SRCDIR/tests/run-cpu-tests.sh
mkdir -p "$TMP/s/tests/cli" "$TMP/s/b"
cd "$TMP/s" || exit 1

# part NAME BODY: a CLI test of the made-up suite
part() {
	printf '#!/bin/sh\n%s\n' "$2" >"tests/cli/$1.sh"
}
printf '#!/bin/sh\necho "ok   unit one"\necho "3 passed, 0 failed"\n' >b/unit
chmod +x b/unit
part t0001-green 'echo "ok   a"; echo "2 passed, 0 failed"'
part t0002-red 'echo "ok   a"; echo "FAIL the red check"; echo "FAIL another"; echo "4 passed, 2 failed"; exit 1'
part t0003-crash 'echo "half way"; kill -SEGV $$'

check_exit "a suite with a failing part and a crashing one: exit 1" 1 env BUILD=b sh "$RUNNER"
cp "$TMP/.out" all.out
check_grep "  ...the parts added up, the crash one failure" "^9 passed, 3 failed\$" all.out
last=$(tail -n 1 all.out)
[ "$last" = "9 passed, 3 failed" ] && ok "  ...the summary is the last line" ||
	fail "  ...the summary is the last line (it is '$last')"
block=$(sed -n '/^== what failed$/,$p' all.out)
[ -n "$block" ] && ok "  ...a what-failed block" || fail "  ...a what-failed block"
echo "$block" >block.txt
check_grep "  ...naming the red part and its count" "^tests/cli/t0002-red.sh: 2 failed\$" block.txt
check_grep "  ...with its FAIL lines" "^  FAIL the red check\$" block.txt
check_grep "  ...the crashed part, with its last line" "^tests/cli/t0003-crash.sh: no summary line (crashed?); its last line: half way\$" block.txt
check_no_grep "  ...not the green parts" "t0001-green\|^unit" block.txt

# six FAIL lines: five shown
part t0002-red 'for i in 1 2 3 4 5 6; do echo "FAIL number $i"; done; echo "0 passed, 6 failed"'
rm tests/cli/t0003-crash.sh
check_exit "six failures in one part" 1 env BUILD=b sh "$RUNNER"
cp "$TMP/.out" six.out
check_grep "  ...the fifth shown" "^  FAIL number 5\$" six.out
n=$(grep -c "^  FAIL number" six.out)
[ "$n" = 5 ] && ok "  ...five of them, no more" || fail "  ...five of them, no more ($n)"

# all green: exit 0, no block
rm tests/cli/t0002-red.sh
check "a green suite: exit 0" env BUILD=b sh "$RUNNER"
cp "$TMP/.out" green.out
check_grep "  ...its sum" "^5 passed, 0 failed\$" green.out
check_no_grep "  ...and no what-failed block" "what failed" green.out

# .ci/run's what_failed: the runner's block under the step's name
sed -n '/^what_failed() {$/,/^}$/p' "$SRCDIR/.ci/run" >wf.sh
[ -s wf.sh ] && ok ".ci/run has what_failed" || fail ".ci/run has what_failed"
check "  ...it repeats the block of a failed suite's log" bash -c ". ./wf.sh; what_failed san-test all.out"
cp "$TMP/.out" wf.out
check_grep "  ...under the step's name" "^  san-test, what failed:\$" wf.out
check_grep "  ...the part and its FAIL lines" "^tests/cli/t0002-red.sh: 2 failed\$" wf.out
check_no_grep "  ...without the summary line" "passed, .* failed" wf.out
check "  ...and prints nothing for a green log" bash -c ". ./wf.sh; what_failed test green.out; what_failed test none.log"
[ ! -s "$TMP/.out" ] && ok "  ...(nothing)" || fail "  ...(nothing): $(head -c 200 "$TMP/.out")"

finish
