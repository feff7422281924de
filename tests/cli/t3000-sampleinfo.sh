#!/bin/sh
# t3000-sampleinfo.sh - the bundled samples and their sample.yaml files, on
# the CPU: tests/gpu/sampleinfo (the strict sample.yaml reader the GPU scripts
# eval) on every samples/*/sample.yaml and on broken ones, plus the syntax of
# the GPU scripts and of the Python samples.  The samples themselves need a
# GPU (make gpu-test).
#
# The Makefile does not build sampleinfo: this test builds $BUILD/sampleinfo
# when it is missing or older than its source, with a static libyaml when
# there is one (so the binary also runs on the GPU machine), else a shared one.
. tests/cli/test-lib.sh

build_sampleinfo
SI=$BUILD/sampleinfo

# ---- every bundled sample ---------------------------------------------------
for want in oob-write use-after-free shared-overflow race torch-extension triton-mask index-assert; do
	check "samples/$want/sample.yaml exists" test -f "samples/$want/sample.yaml"
done

nflaky=0
for y in samples/*/sample.yaml; do
	d=$(dirname "$y")
	n=$(basename "$d")
	check "$n: sampleinfo reads it" "$SI" "$y"
	cp "$TMP/.out" "$TMP/info"
	# eval in a subshell; it must define every key with a sane value
	check "$n: the output evals to sane values" sh -c '
		. "$1" || exit 1
		[ "$NAME" = "$2" ] || { echo "NAME=$NAME, want $2"; exit 1; }
		[ -n "$STORY" ] || { echo "empty STORY"; exit 1; }
		[ -n "$RUN" ] || { echo "empty RUN"; exit 1; }
		[ -n "$EXPECT_ERRORS" ] || { echo "empty EXPECT_ERRORS"; exit 1; }
		for e in $EXPECT_ERRORS; do
			case $e in CUDA_ERROR_*) ;; *) echo "bad error $e"; exit 1 ;; esac
		done
		case $FLAKY in 0|1) ;; *) echo "FLAKY=$FLAKY"; exit 1 ;; esac
		case $TIMEOUT in ""|*[!0-9]*) echo "TIMEOUT=$TIMEOUT"; exit 1 ;; esac
		case $PROCESSES in ""|*[!0-9]*|0) echo "PROCESSES=$PROCESSES"; exit 1 ;; esac
		[ "$(wc -l <"$1")" -eq 13 ] || { echo "not 13 lines"; exit 1; }
	' sh "$TMP/info" "$n"
	grep -q '^FLAKY=1$' "$TMP/info" && nflaky=$((nflaky + 1))
	# the files the build/run commands name exist in the sample dir
	for f in $(sed -n "s/^\(BUILD_CMD\|RUN\)='\(.*\)'\$/\2/p" "$TMP/info" | tr ' ' '\n' |
		   grep -E '\.(cu|py)$'); do
		check "$n: $f exists" test -f "$d/$f"
	done
done
if [ "$nflaky" -eq 1 ]; then ok "exactly one flaky sample (race)"; else fail "flaky samples: $nflaky, want 1"; fi
check_grep "race is the flaky one" "^FLAKY=1" "$(
	"$SI" samples/race/sample.yaml >"$TMP/race" 2>&1; echo "$TMP/race")"
check_grep "index-assert expects the device-side assert" "^EXPECT_ERRORS='CUDA_ERROR_ASSERT'" "$(
	"$SI" samples/index-assert/sample.yaml >"$TMP/ia" 2>&1; echo "$TMP/ia")"

# ---- quoting: the output is safe to eval --------------------------------------
cat >"$TMP/q.yaml" <<'EOF'
name: q
story: "it's $(touch PWNED) `touch PWNED2` \"quoted\" ; rm -rf /nothing"
run: echo 'a b' && ./x
expect:
  errors: CUDA_ERROR_ILLEGAL_ADDRESS
EOF
check "quotes: reads" "$SI" "$TMP/q.yaml"
cp "$TMP/.out" "$TMP/q.sh"
check "quotes: eval gives back the exact strings, runs nothing" sh -c '
	cd "$1" && . ./q.sh || exit 1
	[ ! -e PWNED ] && [ ! -e PWNED2 ] || { echo "command ran"; exit 1; }
	want="it'\''s \$(touch PWNED) \`touch PWNED2\` \"quoted\" ; rm -rf /nothing"
	[ "$STORY" = "$want" ] || { echo "STORY=[$STORY]"; exit 1; }
	[ "$RUN" = "echo '\''a b'\'' && ./x" ] || { echo "RUN=[$RUN]"; exit 1; }
' sh "$TMP"
check_grep "defaults: no build" "^BUILD_CMD=''\$" "$TMP/q.sh"
check_grep "defaults: timeout 120" "^TIMEOUT=120\$" "$TMP/q.sh"
check_grep "defaults: not flaky" "^FLAKY=0\$" "$TMP/q.sh"
check_grep "defaults: kernel empty" "^EXPECT_KERNEL=''\$" "$TMP/q.sh"
check_grep "defaults: no capture arguments" "^CAPTURE_ARGS=''\$" "$TMP/q.sh"
check_grep "defaults: no root-cause step" "^EXPECT_ROOT_KERNEL=''\$" "$TMP/q.sh"
check_grep "tensor-overrun captures with --tensors" "^CAPTURE_ARGS='--tensors'" "$(
	"$SI" samples/tensor-overrun/sample.yaml >"$TMP/to" 2>&1; echo "$TMP/to")"
check_grep "  ...and expects a root-cause repro in the overrunning kernel" "^EXPECT_ROOT_KERNEL='pad_rows_kernel'" "$TMP/to"
check_grep "defaults: one process" "^PROCESSES=1\$" "$TMP/q.sh"
check_grep "ddp-train is a 2-process job (captured with -o DIR/)" "^PROCESSES=2\$" "$(
	"$SI" samples/ddp-train/sample.yaml >"$TMP/ddp" 2>&1; echo "$TMP/ddp")"
check_grep "defaults: no hunt step" "^EXPECT_HUNT_KERNEL=''\$" "$TMP/q.sh"
check_grep "defaults: no clean variant" "^CLEAN_ENV=''\$" "$TMP/q.sh"
for s in view-tail neighbour-write ragged-sum; do
	"$SI" samples/$s/sample.yaml >"$TMP/h-$s" 2>&1
	check_grep "$s: a hunt sample (expect.hunt_kernel)" "^EXPECT_HUNT_KERNEL='[a-z_]*_kernel'\$" "$TMP/h-$s"
	check_grep "  ...with a clean variant selected by an env var" "^CLEAN_ENV='[A-Z_]*_CLEAN=1'\$" "$TMP/h-$s"
done
check_grep "a single error name is accepted" "^EXPECT_ERRORS='CUDA_ERROR_ILLEGAL_ADDRESS'\$" "$TMP/q.sh"

# ---- broken files: one-line error naming the file, exit 1 ----------------------
# bad NAME CONTENT WORD: sampleinfo must fail on CONTENT with a message that
# names the file and contains WORD
bad() {
	printf '%s\n' "$2" >"$TMP/bad-$1.yaml"
	check_exit "broken ($1): exit 1" 1 "$SI" "$TMP/bad-$1.yaml"
	if [ "$(wc -l <"$TMP/.out")" -eq 1 ] && grep -q "bad-$1.yaml" "$TMP/.out" &&
	   grep -q -e "$3" "$TMP/.out"; then
		ok "broken ($1): one line naming the file and '$3'"
	else
		fail "broken ($1): message: $(cat "$TMP/.out")"
	fi
}
ERRS='expect: {errors: [CUDA_ERROR_ILLEGAL_ADDRESS]}'
bad empty "" "empty"
bad syntax "name: [x" "YAML error"
bad not-a-map "- a
- b" "mapping"
bad no-run "name: x
$ERRS" "run"
bad no-name "run: ./x
$ERRS" "name"
bad no-expect "name: x
run: ./x" "expect"
bad unknown-key "name: x
run: ./x
$ERRS
timeot: 5" "timeot"
bad duplicate "name: x
run: ./x
run: ./y
$ERRS" "duplicate"
bad error-name "name: x
run: ./x
expect: {errors: [cudaErrorIllegalAddress]}" "cudaErrorIllegalAddress"
bad no-errors "name: x
run: ./x
expect: {kernel: k}" "errors"
bad expect-scalar "name: x
run: ./x
expect: CUDA_ERROR_ASSERT" "mapping"
bad flaky "name: x
run: ./x
expect: {errors: [CUDA_ERROR_ASSERT], flaky: sometimes}" "flaky"
bad processes "name: x
run: ./x
$ERRS
processes: 0" "processes"
bad timeout "name: x
run: ./x
$ERRS
timeout: 0" "timeout"
bad timeout-text "name: x
run: ./x
$ERRS
timeout: soon" "timeout"
bad name-path "name: ../x
run: ./x
$ERRS" "name"
bad run-list "name: x
run: [./x]
$ERRS" "run"
check_exit "missing file: exit 1" 1 "$SI" "$TMP/no-such.yaml"
check_grep "missing file: named, with the cause" "no-such.yaml: cannot open" "$TMP/.out"
check_exit "no argument: usage, exit 2" 2 "$SI"

# ---- the GPU scripts and the Python samples parse -----------------------------
for s in tests/gpu/lib.sh tests/gpu/gpu-test.sh tests/gpu/demo.sh tests/gpu/bench.sh tests/gpu/bench-trace.sh; do
	check "bash -n $s" bash -n "$s"
done
if command -v python3 >/dev/null 2>&1; then
	for p in samples/*/*.py; do
		check "python syntax: $p" python3 -c 'import ast, sys; ast.parse(open(sys.argv[1]).read(), sys.argv[1])' "$p"
	done
else
	echo "skip: python syntax (no python3)"
fi

# ---- gpu-test's parser of capture's summary line ------------------------------
# a bounded trace's line names its checkpoint's launch after the fault's:
# the kernel and launch are the fault's (the H200 run printed the kernel as
# "smooth_targets_kernel at launch" before this was right)
cat > "$TMP/cap.log" <<'EOT'
gpureduce: captured 7 launches, 47 allocations, 384.4 MiB (768.5 KiB entered the GPU) -> /tmp/t.bin; fault: CUDA_ERROR_ILLEGAL_ADDRESS in smooth_targets_kernel at launch #458183 from /w/train.py:66 (smooth_targets) (exit 1); from checkpoint 3 at launch #458177 (47 live allocations, 600.3 MiB of device memory)
EOT
check "parse_capture on a checkpointed capture's line" bash -c \
	'. tests/gpu/lib.sh; parse_capture "$1"; echo "[$CAP_ERR] [$CAP_KERNEL] [$CAP_AT] [$CAP_LAUNCHES]"' - "$TMP/cap.log"
check_grep "  ...the fault's error, kernel and launch" \
	"\[CUDA_ERROR_ILLEGAL_ADDRESS\] \[smooth_targets_kernel\] \[458183\] \[7\]" "$TMP/.out"

finish
