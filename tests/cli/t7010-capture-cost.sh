#!/bin/sh
# t7010-capture-cost.sh - issue 26 on the CPU: capture's cheap path and
# the flight recorder, end to end on the driver double (ckpt-prog captured
# by the real libgpureduce-capture.so through capture-fakecuda's CUPTI).
# Checked: records gathered in the writer's buffer reach the disk the same
# as one write(2) each (same records), at the fault, and within the flush
# interval when the program is killed from outside; GPUREDUCE_CAPTURE_PROFILE
# reports one launch callback per launch, split into parts that add up to
# it; --flight-recorder=BUDGET warns when the disk holds less than BUDGET,
# and keeps the trace within its budget over a run
# that copies far more, still replays to the fault, and its option errors.
. tests/cli/test-lib.sh

. tests/cli/capture-fakes.sh
capture_on_double $H/ckpt-prog.c
GPUREDUCE_NO_PROGRESS=1
PATH=/usr/bin:/bin
export LD_LIBRARY_PATH GPUREDUCE_CAPTURE_LIB GPUREDUCE_LIBCUDA GPUREDUCE_NO_PROGRESS PATH
unset CUDA_INJECTION64_PATH GPUREDUCE_SANITIZER GPUREDUCE_FLUSH_MS GPUREDUCE_CAPTURE_LEGACY
cd "$TMP" || exit 1
CUBIN=$DBL/kernels.cubin
size() { wc -c <"$1" | tr -d ' '; }
# the records of a trace, without what differs between two runs
records() { "$GPUREDUCE" show "$1" | grep -E '^ *(type|seq|size|blob|name|code): ' | grep -v 'type: NOTE'; }

# --- buffered records: the same trace as one write(2) per record --------------
check_exit "capture, records buffered (default)" 3 "$GPUREDUCE" capture --no-checkpoint -o buf.bin -- ./prog $CUBIN 200
check_exit "capture, one write(2) per record (GPUREDUCE_FLUSH_MS=0)" 3 env GPUREDUCE_FLUSH_MS=0 \
	"$GPUREDUCE" capture --no-checkpoint -o unbuf.bin -- ./prog $CUBIN 200
records buf.bin >buf.txt; records unbuf.bin >unbuf.txt
n=$(grep -c 'type: LAUNCH' buf.txt)
[ "$n" = 401 ] && ok "  ...all 401 launches in the buffered trace" || fail "  ...all 401 launches in the buffered trace ($n)"
cmp -s buf.txt unbuf.txt && ok "  ...the same records either way" || fail "  ...the same records either way"
check_grep "  ...the fault is on disk" "type: FAULT" buf.txt
check_exit "  ...and replays to it" 1 "$GPUREDUCE" replay buf.bin
check_grep "  ...at launch #400" "(launch #400) in _Z6gatherPfPKfPKxi: CUDA_ERROR_ILLEGAL_ADDRESS" "$TMP/.out"
check_exit "the old writer (GPUREDUCE_CAPTURE_LEGACY=1), same records" 3 env GPUREDUCE_CAPTURE_LEGACY=1 \
	"$GPUREDUCE" capture --no-checkpoint -o legacy.bin -- ./prog $CUBIN 200
records legacy.bin >legacy.txt
# (the file's size aside: that writer writes every launch whole, as format
# 1.x did; 2.0 writes a repeated launch short)
sed 1d buf.txt >buf1.txt; sed 1d legacy.txt >legacy1.txt
cmp -s buf1.txt legacy1.txt && ok "  ...identical" || fail "  ...identical"

# --- killed from outside: what the program did until ~a flush interval ago -----
# 2 launches per 5 ms step; killed after 1.5 s (about 600 launches made)
"$GPUREDUCE" capture --no-checkpoint -o killed.bin -- ./prog $CUBIN 100000 5000 >killed.out 2>&1 &
cap=$!
sleep 1.5
kid=$(pgrep -P "$cap")   # the program, capture's child (killed by its id)
[ -n "$kid" ] && kill -KILL $kid
wait "$cap" 2>/dev/null
n=$("$GPUREDUCE" show killed.bin 2>/dev/null | grep -c 'type: LAUNCH')
[ "$n" -ge 100 ] && ok "killed after 1.5 s: the launches until about 100 ms before are on disk ($n)" ||
	fail "killed after 1.5 s: the launches until about 100 ms before are on disk (${n:-0})"

# --- where capture's time goes ------------------------------------------------
check_exit "GPUREDUCE_CAPTURE_PROFILE=1" 3 env GPUREDUCE_CAPTURE_PROFILE=1 CKPT_PROG_BATCH=2097152 \
	"$GPUREDUCE" capture --no-checkpoint -o prof.bin -- ./prog $CUBIN 50
check_grep "  ...one launch callback per launch" "capture profile: launch callback (enter): 101 calls" "$TMP/.out"
check_grep "  ...the record write among them" "capture profile:   record write: 101 calls" "$TMP/.out"
check_grep "  ...the Python frames, the lock, the checkpoint check" "capture profile:   checkpoint check: 101 calls" "$TMP/.out"
pct=$(sed -n 's/.*capture profile:   (parts: [0-9.]* s of [0-9.]* s, \([0-9.]*\)%)$/\1/p' "$TMP/.out")
awk -v p="${pct:-0}" 'BEGIN { exit !(p >= 99 && p <= 101) }' && ok "  ...the launch's parts add up to the whole ($pct%)" ||
	fail "  ...the launch's parts add up to the whole (${pct:-none}%)"
check_grep "  ...its exit callback" "capture profile: launch callback (exit): 101 calls" "$TMP/.out"
check_grep "  ...every other callback apart" "capture profile: other callbacks (enter+exit): [0-9]* calls" "$TMP/.out"
check_grep "  ...copies in, per MiB" "capture profile: h2d copy callback: [0-9]* calls, .* ms per MiB" "$TMP/.out"
# "other callbacks" holds the copies' callbacks too: the rest apart, by count
o=$(sed -n 's/.*capture profile: other callbacks (enter+exit): \([0-9]*\) calls.*/\1/p' "$TMP/.out")
c=$(sed -n 's/.*capture profile: h2d copy callback: \([0-9]*\) calls.*/\1/p' "$TMP/.out")
r=$(sed -n "s/.*capture profile: other callbacks but the h2d copies' enter: \([0-9]*\) calls, .* us each$/\1/p" "$TMP/.out")
[ -n "$r" ] && [ -n "$o" ] && [ -n "$c" ] && [ "$r" -eq $((o - c)) ] && [ "$c" -gt 0 ] &&
	ok "  ...and the other callbacks without the copies ($o - $c = $r)" ||
	fail "  ...and the other callbacks without the copies (other ${o:-?}, copies ${c:-?}, rest ${r:-none})"
check_grep "  ...their hashing" "capture profile:   hash: " "$TMP/.out"
check_grep "  ...compressed and written on the program's thread (no writer thread by default)" \
	"capture profile:   compress+write: [0-9]* calls, .* ms per MiB" "$TMP/.out"
check_exit "GPUREDUCE_CAPTURE_PROFILE=1 GPUREDUCE_WRITER_THREAD=1" 3 env GPUREDUCE_CAPTURE_PROFILE=1 \
	GPUREDUCE_WRITER_THREAD=1 CKPT_PROG_BATCH=2097152 "$GPUREDUCE" capture --no-checkpoint -o prof.bin -- ./prog $CUBIN 50
check_grep "  ...their hashing, with the copy to the writer thread" "capture profile:   hash + copy to the writer thread: [0-9]* calls, .* ms per MiB" "$TMP/.out"
check_grep "  ...compressed and written on that thread, per MiB" "capture profile: writer thread: compress+write (not the program's thread): [0-9]* calls, .* ms per MiB" "$TMP/.out"
check_exit "no profile unless asked" 3 "$GPUREDUCE" capture --no-checkpoint -o prof.bin -- ./prog $CUBIN 50
grep -q "capture profile" "$TMP/.out" && fail "  ...none printed" || ok "  ...none printed"

# --- --flight-recorder=BUDGET ----------------------------------------------------
# 400 steps of a 256 KiB batch: 100 MiB enters the GPU, the budget is 8 MiB
check_exit "--flight-recorder=8M over 100 MiB copied in" 3 env CKPT_PROG_BATCH=262144 \
	"$GPUREDUCE" capture --flight-recorder=8M -o fr.bin -- ./prog $CUBIN 400
s=$(size fr.bin)
[ "$s" -le 4194304 ] && ok "  ...the trace within half the budget ($s bytes)" || fail "  ...the trace within half the budget ($s bytes)"
check_grep "  ...the window starts at a checkpoint" "from checkpoint [0-9]* at launch" "$TMP/.out"
check_no_grep "  ...no warning about free space (8M fits)" "less than the flight recorder's budget" "$TMP/.out"
check_exit "  ...it replays to the fault" 1 "$GPUREDUCE" replay fr.bin
check_grep "  ...at launch #800" "(launch #800) in _Z6gatherPfPKfPKxi: CUDA_ERROR_ILLEGAL_ADDRESS" "$TMP/.out"
check_exit "--flight-recorder=1000000G, more than any disk here: it runs" 3 "$GPUREDUCE" capture \
	--flight-recorder=1000000G -o frbig.bin -- ./prog $CUBIN 20
check_grep "  ...warning first that the disk holds less than the budget" \
	"^gpureduce: warning: the file system holding .* has .* free, less than the flight recorder's budget of 1000000.0 GiB" "$TMP/.out"
check_exit "--flight-recorder (default budget)" 3 "$GPUREDUCE" capture --flight-recorder -o frd.bin -- ./prog $CUBIN 100
check_exit "--flight-recorder=1M is refused" 2 "$GPUREDUCE" capture --flight-recorder=1M -o x.bin -- ./prog $CUBIN 10
check_grep "  ...saying why" "budget under 4M cannot hold a checkpoint" "$TMP/.out"
check_exit "--flight-recorder=lots is refused" 2 "$GPUREDUCE" capture --flight-recorder=lots -o x.bin -- ./prog $CUBIN 10
check_exit "--flight-recorder with --no-checkpoint is refused" 2 "$GPUREDUCE" capture --flight-recorder \
	--no-checkpoint -o x.bin -- ./prog $CUBIN 10
check_grep "  ...saying why" "chooses the checkpoints itself" "$TMP/.out"
finish
