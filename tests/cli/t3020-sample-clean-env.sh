#!/bin/sh
# t3020-sample-clean-env.sh - the samples' clean variants (issue 28, item 2:
# every bundled sample's clean run must hunt clean), on the CPU:
#   * every samples/*/sample.yaml with an expect: errors line has a
#     clean_env: of VAR=VALUE words, and each VAR is read (getenv("VAR"),
#     os.environ.get("VAR"), os.environ["VAR"]) in that sample's own
#     sources, so a clean_env cannot name a variable nothing reads; the
#     checker is tried on broken folders too (no clean_env, a variable only
#     named in a comment, a word without '=');
#   * samples/README.md names each sample's clean variable;
#   * tests/gpu/hunt-clean.sh on a fake tree (a stand-in gpureduce whose hunt
#     runs the command and reports a finding when it prints OVERRUN): a
#     sample passes only when its clean run exits 0 and hunts clean, the
#     clean_env reaches both runs, failures are counted, named samples
#     without a clean_env fail, a missing gpureduce exits 2.
# The samples themselves need a GPU (make hunt-clean).
. tests/cli/test-lib.sh

build_sampleinfo
SI=$BUILD/sampleinfo

# clean_env_ok DIR: 0 when DIR/sample.yaml has no expect.errors, or has a
# clean_env whose every word is VAR=VALUE with VAR read in one of DIR's
# sources (.cu .c .cc .cpp .h .py .sh, build outputs such as .ext/ left
# out); else says why and returns 1.
clean_env_ok() {
	ce_info=$("$SI" "$1/sample.yaml" 2>&1) || { echo "sampleinfo: $ce_info"; return 1; }
	ce_errs=$(printf '%s\n' "$ce_info" | sed -n "s/^EXPECT_ERRORS='\(.*\)'\$/\1/p")
	[ -n "$ce_errs" ] || return 0
	ce_env=$(printf '%s\n' "$ce_info" | sed -n "s/^CLEAN_ENV='\(.*\)'\$/\1/p")
	[ -n "$ce_env" ] || { echo "$1: expect.errors but no clean_env"; return 1; }
	ce_srcs=$(find "$1" -name '.*' -prune -o -type f \( -name '*.cu' -o -name '*.c' -o -name '*.cc' \
		-o -name '*.cpp' -o -name '*.h' -o -name '*.py' -o -name '*.sh' \) -print)
	[ -n "$ce_srcs" ] || { echo "$1: no sources"; return 1; }
	for ce_w in $ce_env; do
		case $ce_w in
		[A-Za-z_]*=*) ;;
		*) echo "$1: clean_env word '$ce_w' is not VAR=VALUE"; return 1 ;;
		esac
		ce_var=${ce_w%%=*}
		case $ce_var in *[!A-Za-z0-9_]*) echo "$1: bad variable name '$ce_var'"; return 1 ;; esac
		# shellcheck disable=SC2086 # one word a path (no spaces in the samples' names)
		if ! grep -q -E "(getenv|environ\.get|environ\[)[[:space:]]*\(?[[:space:]]*[\"']${ce_var}[\"']" $ce_srcs; then
			echo "$1: $ce_var (clean_env) is read nowhere in its sources:" $ce_srcs
			return 1
		fi
	done
	return 0
}

# ---- every bundled sample ---------------------------------------------------
nclean=0
for y in samples/*/sample.yaml; do
	d=$(dirname "$y")
	n=$(basename "$d")
	check "$n: a clean_env whose variable its sources read" clean_env_ok "$d"
	v=$("$SI" "$y" 2>/dev/null | sed -n "s/^CLEAN_ENV='\([A-Za-z_0-9]*\)=.*/\1/p")
	if [ -n "$v" ]; then
		nclean=$((nclean + 1))
		check_grep "$n: samples/README.md names $v" "$v" samples/README.md
	fi
done
nyaml=$(ls samples/*/sample.yaml | wc -l)
if [ "$nclean" -eq "$nyaml" ] && [ "$nclean" -gt 0 ]; then
	ok "all $nyaml samples have a clean variant"
else
	fail "$nclean of $nyaml samples have a clean variant"
fi

# ---- the checker fails where it should ------------------------------------------
mk() {   # mk NAME CLEAN_ENV_LINE SOURCE_FILE SOURCE_TEXT
	mkdir -p "$TMP/s/$1"
	{
		echo "name: $1"
		echo "story: a test folder"
		echo "run: ./x"
		[ -n "$2" ] && echo "$2"
		echo "expect:"
		echo "  errors: [CUDA_ERROR_ILLEGAL_ADDRESS]"
	} >"$TMP/s/$1/sample.yaml"
	printf '%s\n' "$4" >"$TMP/s/$1/$3"
}
mk none "" x.cu 'int main() { return getenv("NONE_CLEAN") != 0; }'
check_fail "no clean_env: fails" clean_env_ok "$TMP/s/none"
check_grep "  ...and says so" "no clean_env" "$TMP/.out"
mk comment "clean_env: COMMENT_CLEAN=1" x.cu '// COMMENT_CLEAN=1 runs the fixed program (but nothing reads it)'
check_fail "a variable only named in a comment: fails" clean_env_ok "$TMP/s/comment"
check_grep "  ...naming the variable" "COMMENT_CLEAN (clean_env) is read nowhere" "$TMP/.out"
mk other "clean_env: OTHER_CLEAN=1" x.cu 'int main() { return getenv("OTHER_CLEAN_X") != 0; }'
check_fail "a different variable read: fails" clean_env_ok "$TMP/s/other"
mk ext "clean_env: EXT_CLEAN=1" x.cu 'int main() { return 0; }'
mkdir -p "$TMP/s/ext/.ext"
echo 'getenv("EXT_CLEAN")' >"$TMP/s/ext/.ext/build.cu"
check_fail "read only in a build output (.ext/): fails" clean_env_ok "$TMP/s/ext"
mk noeq "clean_env: NOEQ_CLEAN" x.cu 'int main() { return getenv("NOEQ_CLEAN") != 0; }'
check_fail "a word without '=': fails" clean_env_ok "$TMP/s/noeq"
mk goodc "clean_env: GOODC_CLEAN=1" x.cu 'int main() { const char *v = getenv("GOODC_CLEAN"); return !v; }'
check "getenv(\"VAR\") in a .cu: passes" clean_env_ok "$TMP/s/goodc"
mk goodpy "clean_env: GOODPY_CLEAN=1 OTHER=2" train.py 'import os
CLEAN = os.environ.get("GOODPY_CLEAN") == "1"
X = os.environ["OTHER"]'
check "os.environ.get / os.environ[] in a .py, two words: passes" clean_env_ok "$TMP/s/goodpy"
mk half "clean_env: HALF_CLEAN=1 UNREAD=2" train.py 'import os
CLEAN = os.environ.get("HALF_CLEAN") == "1"'
check_fail "one of two variables unread: fails" clean_env_ok "$TMP/s/half"

# ---- tests/gpu/hunt-clean.sh on a fake tree ---------------------------------------
check "bash -n tests/gpu/hunt-clean.sh" bash -n tests/gpu/hunt-clean.sh
R=$TMP/root
mkdir -p "$R/tests/gpu" "$R/build" "$R/samples"
cp tests/gpu/lib.sh tests/gpu/hunt-clean.sh "$R/tests/gpu/"
cp "$SI" "$R/build/sampleinfo"
cat >"$R/build/gpureduce" <<'EOF'
#!/bin/sh
# stand-in: `gpureduce hunt [OPTS] -- CMD...` runs CMD; OVERRUN in its output is a finding;
# `gpureduce show --launch SEQ TRACE` names what it was asked for
if [ "$1" = show ] && [ "$2" = --launch ]; then echo "seq: $3 of $4"; exit 0; fi
[ "$1" = hunt ] || exit 2
while [ $# -gt 0 ] && [ "$1" != -- ]; do shift; done
shift
out=$("$@" 2>&1)
rc=$?
printf '%s\n' "$out"
[ $rc -eq 0 ] || echo "gpureduce hunt: note: the program exited $rc under capture; hunting its 1 trace(s) all the same" >&2
case $out in
*OVERRUN*) echo "finding 1: launch #3 scale_kernel faulted under end guards: a write past out"; exit 1 ;;
esac
echo "hunt: trace.bin: clean (no launch faulted under end or start guards)"
echo "hunt: 1 process(es), 0 finding(s); the program ran 0.01 s under capture, the hunt took 0.01 s"
exit 0
EOF
chmod +x "$R/build/gpureduce"
fake() {   # fake NAME TIMEOUT CLEAN_ENV_LINE RUN [PROCESSES]
	mkdir -p "$R/samples/$1"
	{
		echo "name: $1"
		echo "story: a fake sample"
		echo "build: echo built >built.txt"
		echo "run: $4"
		[ -n "$3" ] && echo "$3"
		[ -n "${5:-}" ] && echo "processes: $5"
		echo "expect:"
		echo "  errors: [CUDA_ERROR_ILLEGAL_ADDRESS]"
		echo "timeout: $2"
	} >"$R/samples/$1/sample.yaml"
}
fake good 10 "clean_env: GOOD_CLEAN=1" 'if [ "$GOOD_CLEAN" = 1 ]; then echo fixed; else echo OVERRUN; fi'
fake finds 10 "clean_env: FINDS_CLEAN=1" 'echo OVERRUN'
fake crashes 10 "clean_env: CRASHES_CLEAN=1" 'exit 3'
fake slow 1 "clean_env: SLOW_CLEAN=1" 'sleep 30'
fake plain 10 "" 'echo OVERRUN'
fake twoproc 10 "clean_env: TWOPROC_CLEAN=1" 'echo fixed' 2
export HUNT_CLEAN_JOBS=2 HUNT_CLEAN_DEADLINE=60
unset HUNT_CLEAN_OUT GPU_TEST_OUT
check_exit "hunt-clean: failures -> exit 1" 1 env BUILD="$R/build" bash "$R/tests/gpu/hunt-clean.sh"
cp "$TMP/.out" "$TMP/hc.out"
check_grep "  ...1 passed, 4 failed (plain has no clean_env: not run)" "^1 passed, 4 failed" "$TMP/hc.out"
check_grep "  ...good: exit 0 natively and clean under hunt: PASS" "^good  *| 0  *| 0  *| clean (1 process(es)).*| PASS" "$TMP/hc.out"
check_grep "  ...finds: hunt exit 1 with its finding: FAIL" "^finds  *| 0  *| 1  *| 1 finding(s): finding 1: launch #3 scale_kernel.*| FAIL" "$TMP/hc.out"
check_grep "  ...crashes: native exit 3: FAIL" "^crashes  *| 3  *| 0 .*the program exited 3 under capture.*| FAIL" "$TMP/hc.out"
check_grep "  ...slow: the sample's timeout ends the native run: FAIL" "^slow  *| 124  *| 124 .*| FAIL" "$TMP/hc.out"
check_grep "  ...twoproc: one process hunted clean of the 2 it starts: FAIL" "^twoproc  *| 0  *| 0  *| clean (1 process(es)) .*| FAIL" "$TMP/hc.out"
check_grep "  ...the failures' reasons" "finds: FAIL: hunt exited 1 with 1 finding(s)" "$TMP/hc.out"
check_grep "  ...the processes counted" "twoproc: FAIL: hunt exited 0 with 0 finding(s) and 1 clean process(es) of the 2 the sample starts" "$TMP/hc.out"
check_grep "  ...and log tails" "| finding 1: launch #3" "$TMP/hc.out"
check_grep "  ...the finding's launch kept as show --launch prints it" "^seq: 3 of .*/finds/hunt/trace.bin\$" \
	"$R/build/hunt-clean/finds/finding-3.yaml"
if grep -q '^plain ' "$TMP/hc.out"; then fail "  ...plain (no clean_env) is left out"; else ok "  ...plain (no clean_env) is left out"; fi
check "  ...the build step ran in the sample folder" test -f "$R/samples/good/built.txt"
check "  ...a log per step under build/hunt-clean/NAME" test -s "$R/build/hunt-clean/good/hunt.log" -a \
	-s "$R/build/hunt-clean/good/native.log" -a -s "$R/build/hunt-clean/good/build.log"
check_grep "  ...the clean variant's native run had the clean_env" "^fixed" "$R/build/hunt-clean/good/native.log"
check_grep "  ...summary.txt ends with the count" "^1 passed, 4 failed" "$R/build/hunt-clean/summary.txt"
check_exit "hunt-clean good: exit 0" 0 env BUILD="$R/build" bash "$R/tests/gpu/hunt-clean.sh" good
check_grep "  ...1 passed, 0 failed" "^1 passed, 0 failed" "$TMP/.out"
check_exit "hunt-clean plain (named, no clean_env): exit 1" 1 env BUILD="$R/build" bash "$R/tests/gpu/hunt-clean.sh" plain
check_grep "  ...says why" "plain: FAIL: sample.yaml has no clean_env" "$TMP/.out"
rm "$R/build/gpureduce"
check_exit "hunt-clean without gpureduce: exit 2" 2 env BUILD="$R/build" bash "$R/tests/gpu/hunt-clean.sh"

finish
