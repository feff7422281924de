#!/bin/sh
# t1026-capture-writer-thread.sh - the bytes a program copies to the GPU
# are compressed and written by capture's writer thread (capture/writeq.c),
# not on the program's thread.  h2d-prog copies 51 buffers (1 byte to 9 MiB;
# random, compressible, repeats) between launches, captured for real on
# the driver double.  Checked: the trace names every copy's content hash in
# the program's order (against the hashes the program printed) and replays
# to the fault; it holds the same records and the same blobs, stored the
# same way, as the writer on the program's thread (GPUREDUCE_WRITER_THREAD=0)
# and the same file size; a small ring (copies larger than it, the ring
# full) changes nothing; and with the thread made slow
# (GPUREDUCE_WQ_TEST_SLOW_US) and no timer flush, a program SIGKILLed right
# after its fault, or by its own child right after a fork, still leaves
# every copy before that on disk (the fault path and fork drain the
# queue).  Checkpoints taken while blobs wait in the queue keep the window
# whole, and are due by the bytes the thread has yet to write (a flight
# recorder's budget holds while it lags).
. tests/cli/test-lib.sh

. tests/cli/capture-fakes.sh
capture_on_double $H/h2d-prog.c
GPUREDUCE_NO_PROGRESS=1
export GPUREDUCE_NO_PROGRESS
unset GPUREDUCE_FLUSH_MS GPUREDUCE_CAPTURE_LEGACY GPUREDUCE_WRITER_THREAD GPUREDUCE_STAGING_MIB \
	GPUREDUCE_WQ_TEST_SLOW_US GPUREDUCE_CAPTURE_PROFILE
# the thread is opt-in (GPUREDUCE_WRITER_THREAD=1); every capture here but
# the ones that say =0 has it
GPUREDUCE_WRITER_THREAD=1; export GPUREDUCE_WRITER_THREAD
cd "$TMP" || exit 1
CUBIN=$DBL/kernels.cubin
size() { wc -c <"$1" | tr -d ' '; }
# "copy SIZE HASH" for each MEMCPY_H2D of the program (not a checkpoint's),
# in order; with "src": "copy SRC SIZE HASH"
copies() {
	"$GPUREDUCE" show "$1" | awk -v withsrc="${2:-}" '
		function out() {
			if (t == "MEMCPY_H2D" && !ck)
				print "copy", (withsrc ? src " " : "") s, b
			t = ""; ck = 0
		}
		/^- event:/ { out() }
		/^  type:/ { t = $2 }
		/^  src:/ { src = $2 }
		/^  size:/ { s = $2 }
		/^  blob:/ { b = $2; gsub(/"/, "", b) }
		/^  checkpoint: true/ { ck = 1 }
		END { out() }'
}
# the records of a trace, without what differs between two runs
records() { "$GPUREDUCE" show "$1" | grep -E '^ *(type|seq|size|blob|name|code|hash|raw_size|stored_size|codec): ' | grep -v 'type: NOTE'; }
same_copies() {   # DESCRIPTION WANT TRACE
	copies "$3" >"$3.copies"
	if cmp -s "$2" "$3.copies"; then
		ok "$1 ($(wc -l <"$2" | tr -d ' ') copies)"
	else
		fail "$1"
		diff "$2" "$3.copies" | head -5
	fi
}

# --- the writer thread (default): every copy, in order ---------------------------
check_exit "capture: 51 copies, launches between them, a fault" 3 sh -c \
	"'$GPUREDUCE' capture --no-checkpoint -o a.bin -- ./prog $CUBIN exit >want.txt"
n=$(grep -c '^copy ' want.txt)
[ "$n" = 51 ] && ok "  ...the program made 51 copies" || fail "  ...the program made 51 copies ($n)"
same_copies "  ...the trace names each copy's hash, in the program's order" want.txt a.bin
check_exit "  ...and replays to the fault" 1 "$GPUREDUCE" replay a.bin
check_grep "  ...at launch #48" "(launch #48) in _Z6gatherPfPKfPKxi: CUDA_ERROR_ILLEGAL_ADDRESS" "$TMP/.out"

# --- the same trace as the writer on the program's thread ------------------------
check_exit "capture on the program's thread (GPUREDUCE_WRITER_THREAD=0)" 3 env GPUREDUCE_WRITER_THREAD=0 \
	"$GPUREDUCE" capture --no-checkpoint -o b.bin -- ./prog $CUBIN exit
records a.bin >a.rec; records b.bin >b.rec
n=$(grep -c 'type: BLOB' a.rec)
[ "$n" -ge 40 ] && ok "  ...$n blobs (the repeats stored once)" || fail "  ...blobs stored ($n)"
cmp -s a.rec b.rec && ok "  ...the same records, the same blobs stored the same way (codec, stored size)" ||
	fail "  ...the same records, the same blobs stored the same way (codec, stored size)"
[ "$(size a.bin)" = "$(size b.bin)" ] && ok "  ...the same file size ($(size a.bin) bytes)" ||
	fail "  ...the same file size ($(size a.bin) vs $(size b.bin))"
check_exit "the writer before issue 26 (GPUREDUCE_CAPTURE_LEGACY=1)" 3 env GPUREDUCE_CAPTURE_LEGACY=1 \
	"$GPUREDUCE" capture --no-checkpoint -o l.bin -- ./prog $CUBIN exit
records l.bin >l.rec
# (the file's size aside: that writer writes every launch whole, as 1.x did,
# where format 2.0 writes a repeated launch short)
sed 1d a.rec >a1.rec; sed 1d l.rec >l1.rec
cmp -s a1.rec l1.rec && ok "  ...the same records" || fail "  ...the same records"
[ "$(size l.bin)" -gt "$(size a.bin)" ] && ok "  ...in a larger file ($(size l.bin) bytes: no short launches)" ||
	fail "  ...in a larger file ($(size l.bin) vs $(size a.bin))"

# --- a small ring: copies larger than it (inline), the ring often full ----------
check_exit "a 2 MiB ring, the thread slow (GPUREDUCE_STAGING_MIB=2)" 3 env GPUREDUCE_STAGING_MIB=2 \
	GPUREDUCE_WQ_TEST_SLOW_US=2000 "$GPUREDUCE" capture --no-checkpoint -o s.bin -- ./prog $CUBIN exit
same_copies "  ...every copy, in order" want.txt s.bin
records s.bin >s.rec
cmp -s a.rec s.rec && ok "  ...the same records" || fail "  ...the same records"

# --- killed at the fault: the fault path drained the queue --------------------------
# 20 ms a job on the thread, no timer flush: without the drain most of the
# copies would still be queued when the kill comes
check_exit "SIGKILLed right after the fault, the thread slow, no timer flush" 137 sh -c \
	"GPUREDUCE_WQ_TEST_SLOW_US=20000 GPUREDUCE_FLUSH_MS=60000 '$GPUREDUCE' capture --no-checkpoint -o k.bin -- ./prog $CUBIN kill >kwant.txt"
cmp -s want.txt kwant.txt && ok "  ...the program made the same copies" || fail "  ...the program made the same copies"
same_copies "  ...every copy before the fault is on disk, in order" want.txt k.bin
"$GPUREDUCE" show --fault k.bin >kfault.txt 2>&1
check_grep "  ...and the fault" "^  error: CUDA_ERROR_ILLEGAL_ADDRESS" kfault.txt
check_exit "  ...which replays" 1 "$GPUREDUCE" replay k.bin

# --- killed by its child after a fork: fork drained the queue ------------------------
check_exit "SIGKILLed by its child right after a fork, the thread slow, no timer flush" 137 sh -c \
	"GPUREDUCE_WQ_TEST_SLOW_US=20000 GPUREDUCE_FLUSH_MS=60000 '$GPUREDUCE' capture --no-checkpoint -o f.bin -- ./prog $CUBIN fork >fwant.txt"
same_copies "  ...every copy before the fork is on disk, in order" want.txt f.bin
n=$("$GPUREDUCE" show f.bin | grep -c 'type: LAUNCH')
[ "$n" = 48 ] && ok "  ...and every launch (48)" || fail "  ...and every launch ($n)"

# --- checkpoints while blobs wait in the queue ------------------------------------
check_exit "checkpoints every 10 launches, the thread slow" 3 env GPUREDUCE_WQ_TEST_SLOW_US=5000 \
	GPUREDUCE_CKPT_COST_RATIO=0 GPUREDUCE_CKPT_BG_RATIO=0 \
	"$GPUREDUCE" capture --checkpoint-every=10 -o c.bin -- ./prog $CUBIN exit
n=$("$GPUREDUCE" show c.bin | grep -c 'type: CHECKPOINT_END')
[ "$n" = 1 ] && ok "  ...the trace starts at a checkpoint" || fail "  ...the trace starts at a checkpoint ($n)"
copies c.bin >c.copies
k=$(wc -l <c.copies | tr -d ' ')
tail -n "$k" want.txt >want.tail
[ "$k" -gt 0 ] && cmp -s want.tail c.copies && ok "  ...its window holds the program's last $k copies, in order" ||
	fail "  ...its window holds the program's last copies, in order ($k)"
check_exit "  ...and replays to the fault" 1 "$GPUREDUCE" replay c.bin
# checkpoint triggers count what the thread has not written yet: a budget
# is kept while it lags behind (ckpt-prog: 400 x 256 KiB copied in)
check "build ckpt-prog on the double" $CC $CF -o ckprog $SRCDIR/$H/ckpt-prog.c -L$DBL -Wl,-rpath,$DBL -lcuda -ldl
check_exit "--flight-recorder=8M over 100 MiB copied in, the thread slow" 3 env CKPT_PROG_BATCH=262144 \
	GPUREDUCE_WQ_TEST_SLOW_US=3000 "$GPUREDUCE" capture --flight-recorder=8M -o fr.bin -- ./ckprog $CUBIN 400
n=$(size fr.bin)
[ "$n" -le 4194304 ] && ok "  ...the trace within half the budget ($n bytes)" ||
	fail "  ...the trace within half the budget ($n bytes)"
check_exit "  ...and replays to the fault" 1 "$GPUREDUCE" replay fr.bin

# --- copies from several threads at once (the whole fake CUPTI+driver) -------------
mkdir -p "$TMP/ff"
check "build the fake CUPTI+driver and capture-fakeprog" sh -c "$CC $CF -fPIC -shared -fvisibility=hidden \
	-o '$TMP/ff/libfakecuda.so' $SRCDIR/$H/capture-fakecuda.c && ln -sf libfakecuda.so '$TMP/ff/libcuda.so.1' &&
	ln -sf libfakecuda.so '$TMP/ff/libcupti.so.13' && $CC $CF -o '$TMP/ff/fakeprog' $SRCDIR/$H/capture-fakeprog.c -ldl -lpthread"
check_exit "4 threads copying at once, a 2 MiB ring, the thread slow" 0 sh -c "LD_LIBRARY_PATH='$TMP/ff' \
	GPUREDUCE_STAGING_MIB=2 GPUREDUCE_WQ_TEST_SLOW_US=1000 '$GPUREDUCE' capture -o t.bin -- '$TMP/ff/fakeprog' copythreads 4 >twant.txt"
n=$(grep -c '^copy ' twant.txt)
[ "$n" = 160 ] && ok "  ...160 copies made" || fail "  ...160 copies made ($n)"
# each thread copies from its own buffer: per source address, the program's order
copies t.bin src | sort -s -k2,2 >t.copies
sort -s -k2,2 twant.txt >twant.sorted
cmp -s twant.sorted t.copies && ok "  ...each thread's copies in the trace, hashes in its order" ||
	fail "  ...each thread's copies in the trace, hashes in its order"
finish
