#!/bin/sh
# t1009-capture-testname.sh - the test a launch belongs to (issue 28): the
# capture library, inside a program run through the fake CUPTI/driver,
# writes a NOTE "test: NAME" before a launch whenever PYTEST_CURRENT_TEST
# (or GPUREDUCE_TEST_NAME, first) changed since the previous launch (set,
# changed; not again while it stays the same, nothing while it is unset),
# so that `gpureduce hunt` can name the test of each finding.
. tests/cli/test-lib.sh
. tests/cli/capture-fakes.sh
capture_fakes

check "capture of twelve launches across six tests" "$GPUREDUCE" capture -o t.bin -- ./fakeprog tests
"$GPUREDUCE" show t.bin | awk '/^  type:/ { t = $2 } t == "LAUNCH" && /^  seq:/ { print "L" $2 }
	t == "NOTE" && /^  text:/ { sub(/^  text: /, ""); print "N " $0 }' | tr -d "'\"" >seq.txt
tr '\n' '|' <seq.txt >seq1.txt
check_grep "notes sit right before the first launch of each test, once" \
	"^L0|N test: tests/test_a.py::test_one (call)|L1|L2|N test: tests/test_a.py::test_two (call)|L3|L4|" seq1.txt
# the library remembers where the variable was between launches: other
# variables added, or an earlier one removed, change nothing; a string
# edited in place, and GPUREDUCE_TEST_NAME set over it, are seen
check_grep "  ...and through the environment's changes" \
	"|L4|N test: tests/test_a.py::test_three (call)|L5|L6|L7|N test: tests/test_b.py::test_four (call)|L8|N test: tests/test_b.py::test_five (call)|L9|N test: named|L10|L11|\$" seq1.txt
n=$(grep -c "^N test:" seq.txt)
[ "$n" = 6 ] && ok "six test notes" || fail "$n test notes, not 6"
finish
