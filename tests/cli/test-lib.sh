# test-lib.sh - the tiny harness every CLI test sources (POSIX sh):
#
#   . tests/cli/test-lib.sh          (from the repository root, as make test does)
#   check "description" CMD...       passes if CMD exits 0
#   check_fail "description" CMD...  passes if CMD exits non-zero
#   check_grep "description" PATTERN FILE   passes if grep (BRE) finds PATTERN
#   ok "description" / fail "description"   record a result decided by the test
#   finish                           prints "N passed, N failed"; exit 1 if any failed
#
# Provides $GPUREDUCE ($BUILD/gpureduce), $MKTRACE and $YAMLFLAT (the test
# helpers in tests/cli/helpers, built by `make test`), $SRCDIR (the repository
# root) and $TMP, a fresh directory removed on exit.  Paths are absolute, so
# a test may cd.  A failed check prints the last lines of CMD's output.
# Keep this file small and its interface stable: every CLI test uses it.

BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$(pwd)/$BUILD ;; esac
SRCDIR=$(pwd)
GPUREDUCE=$BUILD/gpureduce
MKTRACE=$BUILD/mktrace
YAMLFLAT=$BUILD/yamlflat
export BUILD GPUREDUCE MKTRACE YAMLFLAT SRCDIR
TMP=$(mktemp -d "${TMPDIR:-/tmp}/gpureduce-test.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM
test_passed=0
test_failed=0

ok() {
	test_passed=$((test_passed + 1))
	echo "ok   $1"
}

fail() {
	test_failed=$((test_failed + 1))
	echo "FAIL $1"
}

# $1 description, $2 expected ("0" or "nonzero"), rest: the command
test_run_() {
	desc=$1 want=$2
	shift 2
	"$@" >"$TMP/.out" 2>&1
	rc=$?
	if { [ "$want" = 0 ] && [ $rc -eq 0 ]; } || { [ "$want" != 0 ] && [ $rc -ne 0 ]; }; then
		ok "$desc"
	else
		fail "$desc (exit $rc: $*)"
		tail -n 15 "$TMP/.out" | sed 's/^/    | /'
	fi
}

check() {
	d=$1; shift
	test_run_ "$d" 0 "$@"
}

check_fail() {
	d=$1; shift
	test_run_ "$d" nonzero "$@"
}

check_grep() {
	if grep -q -e "$2" "$3" 2>/dev/null; then
		ok "$1"
	else
		fail "$1 (no '$2' in $3)"
		[ -f "$3" ] && tail -n 15 "$3" | sed 's/^/    | /'
	fi
}

finish() {
	echo "$test_passed passed, $test_failed failed"
	[ "$test_failed" -eq 0 ]
	exit $?
}
