#!/bin/sh
# t6050-capture-keeps-files.sh - capture and replay --snapshot never destroy
# a file the user had: capture's -o file stays as it was until a trace was
# captured (a program that cannot start, makes no CUDA calls or exits on
# bad arguments leaves it alone), a file that is not a trace (a script,
# the program itself, notes) is refused without --force, and a snapshot
# never overwrites its own input, through a symlink or a hard link either.
# SIGTERM to capture goes on to the program and the trace is still
# published; a trace a capture killed outright left in its staging folder
# is named by the commands that look for it.
. tests/cli/test-lib.sh

. tests/cli/capture-fakes.sh
capture_on_double $H/ckpt-prog.c
export LD_LIBRARY_PATH GPUREDUCE_CAPTURE_LIB GPUREDUCE_LIBCUDA
unset CUDA_INJECTION64_PATH GPUREDUCE_SANITIZER
cd "$TMP" || exit 1
CUBIN=$DBL/kernels.cubin
same() { cmp -s "$1" "$2"; }

check_exit "a good trace (the program faults)" 3 "$GPUREDUCE" capture -o good.bin -- ./prog $CUBIN 200
cp good.bin keep.bin
check_exit "-o keep.bin -- ./nonexistent: 127" 127 "$GPUREDUCE" capture -o keep.bin -- ./nonexistent
same good.bin keep.bin && ok "  ...keep.bin is as it was" || fail "  ...keep.bin is as it was"
check_exit "-o keep.bin -- /bin/true (nothing captured): exit 4" 4 "$GPUREDUCE" capture -o keep.bin -- /bin/true
same good.bin keep.bin && ok "  ...keep.bin is as it was" || fail "  ...keep.bin is as it was"
check_grep "  ...and says so" "keep.bin was left as it was" "$TMP/.out"
check_fail "a program that exits on bad arguments" "$GPUREDUCE" capture -o keep.bin -- ./prog
same good.bin keep.bin && ok "  ...keep.bin is as it was" || fail "  ...keep.bin is as it was"

printf 'echo hello\n' >script.sh
cp script.sh script.orig
check_exit "-o script.sh -- sh script.sh is refused" 2 "$GPUREDUCE" capture -o script.sh -- sh script.sh
same script.sh script.orig && ok "  ...the script is kept" || fail "  ...the script is kept"
cp prog prog2
check_exit "-o prog2 -- ./prog2 is refused" 2 "$GPUREDUCE" capture -o prog2 -- ./prog2 $CUBIN 200
same prog prog2 && ok "  ...the program is kept" || fail "  ...the program is kept"
echo "my notes" >notes.txt
check_exit "-o notes.txt is refused" 2 "$GPUREDUCE" capture -o notes.txt -- ./prog $CUBIN 200
check_grep "  ...saying what the file is and what --force does" "notes.txt, which is not a gpureduce trace.*--force" "$TMP/.out"
[ "$(cat notes.txt)" = "my notes" ] && ok "  ...the notes are kept" || fail "  ...the notes are kept"
check_exit "--force replaces it with a trace" 3 "$GPUREDUCE" capture --force -o notes.txt -- ./prog $CUBIN 200
check "  ...which reads as a trace" "$GPUREDUCE" show notes.txt
check_exit "a trace is replaced by a new capture" 3 "$GPUREDUCE" capture -o keep.bin -- ./prog $CUBIN 100
same good.bin keep.bin && fail "  ...with the new trace" || ok "  ...with the new trace"
n=$(ls -a | grep -c '^\.gpureduce-capture-')
[ "$n" = 0 ] && ok "no capture folder left behind" || fail "$n capture folders left behind"

# --- replay --snapshot never writes over its input ---------------------------
ev=$("$GPUREDUCE" show good.bin | awk '/^- event:/ { e = $3 } /^  type: LAUNCH$/ { print e; exit }')
check_exit "--snapshot=good.bin good.bin is refused" 2 "$GPUREDUCE" replay --stop-before=$ev --snapshot=good.bin good.bin
cp good.bin ref.bin
ln -s good.bin link.bin
ln good.bin hard.bin
check_exit "  ...through a symlink" 2 "$GPUREDUCE" replay --stop-before=$ev --snapshot=link.bin good.bin
check_exit "  ...through a hard link" 2 "$GPUREDUCE" replay --stop-before=$ev --snapshot=hard.bin good.bin
check_exit "  ...the input named through a symlink" 2 "$GPUREDUCE" replay --stop-before=$ev --snapshot=good.bin link.bin
same good.bin ref.bin && ok "  ...the input is as it was" || fail "  ...the input is as it was"
check_exit "a snapshot over notes is refused" 2 "$GPUREDUCE" replay --stop-before=$ev --snapshot=script.sh good.bin
same script.sh script.orig && ok "  ...the script is kept" || fail "  ...the script is kept"
check "a snapshot to a new file" "$GPUREDUCE" replay --stop-before=$ev --snapshot=snap.bin good.bin
check "  ...is a trace" "$GPUREDUCE" show snap.bin

# --- a capture whose gpureduce process is stopped -----------------------------
# SIGTERM (a scheduler ending the job) goes on to the program; capture
# stays to publish the trace it wrote and report
"$GPUREDUCE" capture -o term.bin -- sh -c "./prog $CUBIN 200; sleep 60" >term.out 2>&1 &
pid=$!
for i in $(seq 1 100); do
	ls .gpureduce-capture-*/term.bin >/dev/null 2>&1 && break
	sleep 0.1
done
sleep 0.5   # the program's trace is written; the shell sleeps
kill -TERM $pid
wait $pid
rc=$?
[ $rc = 143 ] && ok "capture sent SIGTERM: the program's 128+15" || fail "capture sent SIGTERM: the program's 128+15 (exit $rc)"
check "  ...its trace is published" "$GPUREDUCE" show --no-events term.bin
check_grep "  ...and reported" "^gpureduce: captured .* -> term.bin" term.out
n=$(ls -d .gpureduce-capture-* 2>/dev/null | wc -l | tr -d ' ')
[ "$n" = 0 ] && ok "  ...no staging folder left" || fail "  ...no staging folder left ($n)"
# a capture killed outright (SIGKILL) leaves its trace in the staging
# folder: the commands that cannot find the trace say where it is
mkdir .gpureduce-capture-k1ll3d
cp good.bin .gpureduce-capture-k1ll3d/lost.bin
for c in show replay shrink hunt diagnose; do
	check_exit "$c of a trace a killed capture left staged: exit 3" 3 "$GPUREDUCE" $c lost.bin
	check_grep "  ...naming where it is" "left ./.gpureduce-capture-k1ll3d/lost.bin: move it to lost.bin to use it" "$TMP/.out"
done
check_exit "show of a trace that is nowhere: exit 3" 3 "$GPUREDUCE" show nowhere.bin
check_no_grep "  ...with no hint" "did not finish" "$TMP/.out"
finish
