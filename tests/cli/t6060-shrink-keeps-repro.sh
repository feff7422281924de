#!/bin/sh
# t6060-shrink-keeps-repro.sh - a second shrink into a folder never makes
# what is there worse: a confirmed repro is not replaced by an interrupted
# (unconfirmed) result or by a repro.cu that does not reproduce, a
# repro.cu the user edited is not replaced at all (the new result goes
# beside it, repro-2.cu, and shrink says so), --force replaces; two
# shrinks into one folder at once: the second is refused; SIGHUP keeps the
# best state like SIGTERM and removes the work folder; the work folder of
# a shrink that died (SIGKILL) is removed by the next one, a --keep-work
# folder is not.
. tests/cli/test-lib.sh

on_double nvcc no-sanitizer plain-path

cat > oob.txt <<EOT
process 100 /work ./app
device "gpureduce CPU double"
module $DBL/kernels.cubin 1
alloc 0x7f0000100000 4000
alloc 0x7f0000200000 4000
h2d 0x7f0000100000 4000 seq
memset 0x7f0000200000 0 4000
launch _Z7add_onePfi 4 256 ptr:0x7f0000100000 i32:1000
launch _Z13scale_nocheckPfPKfi 8 256 ptr:0x7f0000200000 ptr:0x7f0000100000 i32:1000
fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel 1 at_launch=1
EOT
check "mktrace oob" $MKTRACE oob.bin < oob.txt
# gated_write hangs its worker in the data phase (see t6010)
cat > gated.txt <<EOT
process 100 /work ./app
device "gpureduce CPU double"
module $DBL/kernels.cubin 1
alloc 0x7f0000100000 4096
alloc 0x7f0000200000 64
h2d 0x7f0000200000 64 seq
launch _Z11gated_writePVKiPfi 1 32 ptr:0x7f0000200000 ptr:0x7f0000100000 i32:1024
fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel 0 at_launch=1
EOT
check "mktrace gated" $MKTRACE gated.bin < gated.txt
cat > clean-cc <<'EOT'
#!/bin/sh
# stand-in nvcc: the program always runs clean
out=$2
printf '#!/bin/sh\necho "repro: ran clean: the fault did not reproduce"\nexit 0\n' > "$out"
chmod +x "$out"
EOT
chmod +x clean-cc

# bg ARGS...: gpureduce in the background, its pid in $pid
bg() { "$GPUREDUCE" "$@" >"$TMP/so" 2>"$TMP/se" & pid=$!; }
# stop SIG AFTER: signal $pid after AFTER seconds, wait; $rc
stop() {
	sleep "$2"
	kill -"$1" $pid
	i=0
	while kill -0 $pid 2>/dev/null && [ $i -lt 200 ]; do sleep 0.1; i=$((i + 1)); done
	kill -0 $pid 2>/dev/null && kill -KILL $pid
	wait $pid
	rc=$?
}
snap() { cat r/repro.cu r/repro.bin r/repro.yaml | cksum; }

check "a confirmed repro into r/" $GPUREDUCE shrink -j 2 --quiet -o r/ oob.bin
check_grep "  ...repro.yaml: outcome confirmed" "^outcome: confirmed" r/repro.yaml
before=$(snap)

check_exit "a second shrink whose repro.cu does not reproduce: exit 1" 1 env GPUREDUCE_NVCC="$TMP/clean-cc" \
	$GPUREDUCE shrink -j 2 --quiet -o r/ oob.bin
cp .out worse.out
[ "$(snap)" = "$before" ] && ok "  ...the confirmed repro is as it was" || fail "  ...the confirmed repro was replaced"
check_grep "  ...says so and where the new result is" "kept r/repro.cu as it was (r/repro.cu holds a confirmed repro and this result is not-reproduced); this result is in r/repro-2.cu, r/repro-2.bin and r/repro-2.yaml" worse.out
check_grep "  ...repro-2.yaml: not reproduced" "^outcome: not-reproduced" r/repro-2.yaml
check_grep "  ...and names its own files" "repro_cu: r/repro-2.cu" r/repro-2.yaml

export GPUREDUCE_SANITIZER=/bin/false
bg shrink -j 2 --candidate-timeout=60 -o r/ gated.bin
stop INT 3
[ "$rc" = 130 ] && ok "an interrupted shrink into r/: exit 130" || { fail "an interrupted shrink: exit $rc"; sed 's/^/    | /' "$TMP/se"; }
unset GPUREDUCE_SANITIZER
[ "$(snap)" = "$before" ] && ok "  ...the confirmed repro is as it was" || fail "  ...the confirmed repro was replaced"
check_grep "  ...the unconfirmed result beside it" "this result is in r/repro-3.cu" "$TMP/se"

echo "// my note" >> r/repro.cu
edited=$(snap)
check "a confirmed result over an edited repro.cu" $GPUREDUCE shrink -j 2 --quiet -o r/ oob.bin
[ "$(snap)" = "$edited" ] && ok "  ...the edit is kept" || fail "  ...the edit was lost"
check_grep "  ...says why" "r/repro.cu was edited since shrink wrote it" "$TMP/.out"
[ -f r/repro-4.cu ] && ok "  ...the result is in repro-4.cu" || fail "  ...no repro-4.cu ($(ls r | tr '\n' ' '))"
check "--force replaces it" $GPUREDUCE shrink -j 2 --quiet --force -o r/ oob.bin
grep -q "my note" r/repro.cu && fail "  ...the edited repro.cu was replaced" || ok "  ...the edited repro.cu was replaced"

printf 'int main(void) { return 0; }\n' > mine.cu
check "a shrink onto a file it did not write" $GPUREDUCE shrink -j 2 --quiet -o mine.cu oob.bin
[ "$(cat mine.cu)" = "int main(void) { return 0; }" ] && ok "  ...keeps it" || fail "  ...replaced it"
check_grep "  ...and says so" "mine.cu is there without a report of shrink's" "$TMP/.out"

# an unconfirmed result is replaced by a confirmed one
export GPUREDUCE_SANITIZER=/bin/false
bg shrink -j 2 --candidate-timeout=60 -o u/ gated.bin
stop TERM 3
unset GPUREDUCE_SANITIZER
check_grep "interrupted into an empty u/: unconfirmed" "^outcome: unconfirmed" u/repro.yaml
check "a confirmed shrink into u/" $GPUREDUCE shrink -j 2 --quiet -o u/ oob.bin
check_grep "  ...replaces the unconfirmed one" "^outcome: confirmed" u/repro.yaml

# --- two at once; SIGHUP; what a dead shrink left -----------------------------
export GPUREDUCE_SANITIZER=/bin/false
bg shrink -j 2 --candidate-timeout=60 -o s/ gated.bin
sleep 2
sleep 1
n=$(ls s/repro.bin.work-*/ 2>/dev/null | grep -c '^c[0-9]*\.bin$')
[ "$n" -le 2 ] && ok "the work folder holds only the candidates being tested ($n, -j 2)" ||
	fail "the work folder holds $n candidate files with -j 2: tested ones are kept"
check_exit "a second shrink into s/ while one runs is refused" 3 $GPUREDUCE shrink -j 2 -o s/ oob.bin
check_grep "  ...saying why" "another gpureduce shrink is writing into" "$TMP/.out"
stop HUP 1
unset GPUREDUCE_SANITIZER
[ "$rc" = 129 ] && ok "SIGHUP: exit 129" || { fail "SIGHUP: exit $rc"; sed 's/^/    | /' "$TMP/se"; }
check_grep "  ...the best state kept" "interrupted (SIGHUP): kept the best state so far" "$TMP/se"
check_exit "  ...it replays to the fault" 1 $GPUREDUCE replay s/repro.bin
if ls -d s/repro.bin.work-* >/dev/null 2>&1; then fail "  ...work folder left behind"; else ok "  ...work folder removed"; fi

export GPUREDUCE_SANITIZER=/bin/false
bg shrink -j 2 --candidate-timeout=60 -o k/ gated.bin
sleep 2
kill -KILL $pid; wait $pid 2>/dev/null
unset GPUREDUCE_SANITIZER
sleep 0.5
n=$(ls -d k/repro.bin.work-* 2>/dev/null | wc -l)
[ "$n" = 1 ] && ok "SIGKILL leaves its work folder" || fail "SIGKILL left $n work folders"
check "a shrink with --keep-work" $GPUREDUCE shrink -j 2 --quiet --keep-work -o k/ oob.bin
n=$(ls -d k/repro.bin.work-* 2>/dev/null | wc -l)
[ "$n" = 1 ] && ok "  ...removes the dead one's, keeps its own" || fail "  ...$n work folders"
check "another shrink" $GPUREDUCE shrink -j 2 --quiet -o k/ oob.bin
n=$(ls -d k/repro.bin.work-* 2>/dev/null | wc -l)
[ "$n" = 1 ] && ok "  ...leaves the --keep-work folder" || fail "  ...$n work folders"
finish
