#!/bin/sh
# t7000-capture-checkpoint.sh - bounded capture (format 1.2 checkpoints) end
# to end on the CPU: ckpt-prog runs a training-like loop on the driver
# double, captured by the real libgpureduce-capture.so through the CUPTI
# part of capture-fakecuda.  Its fault depends on bytes copied before every
# checkpoint.  Checked: several checkpoints are taken and the trace stays
# bounded (the 4x run's trace within 1.2x of the 1x run's; without
# checkpoints it grows), the trace replays to the same fault and shrinks
# to a repro, a capture killed in the middle of a checkpoint leaves the
# previous one whole, and the options' errors.
. tests/cli/test-lib.sh

. tests/cli/capture-fakes.sh
capture_on_double $H/ckpt-prog.c
PATH=/usr/bin:/bin     # no compute-sanitizer
# every due checkpoint is taken (no adaptive interval) on the program's
# thread (no background thread), so counts are exact; the interval and the
# background thread have their own tests below
GPUREDUCE_CKPT_COST_RATIO=0
GPUREDUCE_CKPT_ASYNC=0
export LD_LIBRARY_PATH GPUREDUCE_CAPTURE_LIB GPUREDUCE_LIBCUDA PATH GPUREDUCE_CKPT_COST_RATIO GPUREDUCE_CKPT_ASYNC
unset CUDA_INJECTION64_PATH GPUREDUCE_SANITIZER
cd "$TMP" || exit 1
CUBIN=$DBL/kernels.cubin
size() { wc -c <"$1" | tr -d ' '; }
count() { grep -c "$1" "$2"; }

# --- without checkpoints: the trace grows with the run ------------------------
check_exit "1x run, --no-checkpoint" 3 "$GPUREDUCE" capture --no-checkpoint -o full1.bin -- ./prog $CUBIN 200
check_exit "4x run, --no-checkpoint" 3 "$GPUREDUCE" capture --no-checkpoint -o full4.bin -- ./prog $CUBIN 800
f1=$(size full1.bin) f4=$(size full4.bin)
[ $((f4 * 10)) -ge $((f1 * 30)) ] && ok "without checkpoints the 4x trace is over 3x the 1x ($f4 vs $f1 bytes)" ||
	fail "without checkpoints the 4x trace is over 3x the 1x ($f4 vs $f1 bytes)"
check_exit "the full trace replays to the fault" 1 "$GPUREDUCE" replay full1.bin
check_grep "  ...in gather, at launch #400" "(launch #400) in _Z6gatherPfPKfPKxi: CUDA_ERROR_ILLEGAL_ADDRESS" "$TMP/.out"

# --- with checkpoints every 50 launches -----------------------------------------
check_exit "1x run, --checkpoint-every=50" 3 "$GPUREDUCE" capture --checkpoint-every=50 -o ck1.bin -- ./prog $CUBIN 200
check_grep "the summary says where the window starts (the module's 3 variables apart)" "from checkpoint 8 at launch #400 (4 live allocations and 3 module variables, 19.8 KiB of device memory)" "$TMP/.out"
check_grep "  ...and still names the fault" "fault: CUDA_ERROR_ILLEGAL_ADDRESS in gather(float\*, float const\*, long long const\*, int) at launch #400" "$TMP/.out"
check_exit "4x run, --checkpoint-every=50" 3 "$GPUREDUCE" capture --checkpoint-every=50 -o ck4.bin -- ./prog $CUBIN 800
check_grep "  ...32 checkpoints" "from checkpoint 32 at launch #1600" "$TMP/.out"
c1=$(size ck1.bin) c4=$(size ck4.bin)
echo "info: trace bytes 1x/4x: no checkpoint $f1/$f4, checkpoint every 50 launches $c1/$c4"
[ $((c4 * 10)) -le $((c1 * 12)) ] && ok "with checkpoints the 4x trace is within 1.2x of the 1x ($c4 vs $c1 bytes)" ||
	fail "with checkpoints the 4x trace is within 1.2x of the 1x ($c4 vs $c1 bytes)"
[ $((c1 * 10)) -lt "$f1" ] && ok "  ...and a tenth of the unbounded one" || fail "  ...and a tenth of the unbounded one ($c1 vs $f1)"
check "show the bounded trace" sh -c "'$GPUREDUCE' show ck4.bin >ck4.yaml"
check_grep "format 2.1" 'format: "2.1"' ck4.yaml
n=$(count "type: CHECKPOINT_BEGIN" ck4.yaml); [ "$n" = 1 ] && ok "one checkpoint in the file" || fail "one checkpoint in the file ($n)"
check_grep "  ...complete" "type: CHECKPOINT_END" ck4.yaml
n=$(count "checkpoint: true" ck4.yaml); [ "$n" = 7 ] && ok "its content: one H2D per live buffer and module variable (one chunk each)" || fail "its content ($n H2D flagged checkpoint, not 4 + 3)"
n=$(count "type: MODULE" ck4.yaml); [ "$n" = 1 ] && ok "the module is carried into the segment" || fail "the module is carried ($n)"
n=$(grep -A4 "type: FUNC_ATTR" ck4.yaml | grep -c "value: ")
[ "$n" = 2 ] && ok "function attributes: each change carried once (1024, then 2048)" || fail "function attributes carried ($n)"
check_grep "  ...the last one set" "value: 2048" ck4.yaml
check_exit "the bounded trace replays to the same fault" 1 "$GPUREDUCE" replay ck4.bin
check_grep "  ...same launch and kernel" "(launch #1600) in _Z6gatherPfPKfPKxi: CUDA_ERROR_ILLEGAL_ADDRESS" "$TMP/.out"
check "shrink the bounded trace" "$GPUREDUCE" shrink -j 2 --quiet -o r/repro.cu ck4.bin
check_grep "  ...to one launch, same signature" "1 launch -> 1 launch, .*CUDA_ERROR_ILLEGAL_ADDRESS in gather(float\*, float const\*, long long const\*, int)" "$TMP/.out"
check_grep "  ...the wild index came from the checkpoint" "8 bytes for buffer [0-9] at offset 136" r/repro.cu
repro_faults_on_double r

# --- content dedup: a 4 KiB chunk, unchanged buffers are copied, not restored ---
check_exit "GPUREDUCE_CKPT_CHUNK=4096" 3 env GPUREDUCE_CKPT_CHUNK=4096 "$GPUREDUCE" capture --checkpoint-every=50 -o dedup.bin -- ./prog $CUBIN 200
check "show it" sh -c "'$GPUREDUCE' show dedup.bin >dedup.yaml"
n=$(count "checkpoint: true" dedup.yaml); [ "$n" = 8 ] && ok "I (8000 bytes) is two chunks (and 3 module variables)" || fail "I is two chunks ($n H2D, not 5 + 3)"

# --- by window size relative to the checkpoint (at least 1 MiB) ------------------
check_exit "--checkpoint-every=25%" 3 "$GPUREDUCE" capture --checkpoint-every=25% -o pct.bin -- ./prog $CUBIN 800
check_grep "  ...checkpoints once the window reaches 1 MiB" "from checkpoint 3 at launch #" "$TMP/.out"
p=$(size pct.bin)
[ "$p" -le $((1100000 + c4)) ] && ok "  ...the trace stays under a checkpoint + 1 MiB ($p bytes)" || fail "  ...under a checkpoint + 1 MiB ($p bytes)"

# --- a capture killed in the middle of a checkpoint -----------------------------
check_exit "killed during checkpoint 3 (exit 137)" 137 env GPUREDUCE_CKPT_TEST_KILL=3 \
	"$GPUREDUCE" capture --checkpoint-every=50 -o kill.bin -- ./prog $CUBIN 200
check_grep "capture says the previous checkpoint is whole" "died while writing a checkpoint; kill.bin holds the one before it" "$TMP/.out"
check_grep "  ...window from checkpoint 2" "from checkpoint 2 at launch #100" "$TMP/.out"
[ -e kill.bin.next ] && fail "the incomplete kill.bin.next was removed" || ok "the incomplete kill.bin.next was removed"
check_exit "the trace replays, and is called incomplete (the program was killed)" 3 "$GPUREDUCE" replay kill.bin
check_grep "  ...its window: launches 100..149" "replayed all 50 launches without a fault" "$TMP/.out"

# --- the progress line: on a terminal only, erased before the summary -------------
if command -v script >/dev/null 2>&1; then
	check_exit "a 2.5 s capture on a terminal (script)" 3 script -qec \
		"'$GPUREDUCE' capture --checkpoint-every=50 -o tty.bin -- ./prog $CUBIN 500 5000" tty.log
	cp "$TMP/.out" tty.log
	check_grep "a status line: launches, trace size, last checkpoint" \
		"gpureduce: [0-9]* s, [0-9]* launches, trace [0-9.]* [KM]*i*B, checkpoint [0-9]* at launch #[0-9]* ([0-9]* s ago)" tty.log
	n=$(tr '\r' '\n' <tty.log | grep -c 'gpureduce: [0-9]* s, ')
	[ "$n" -ge 1 ] && [ "$n" -le 4 ] && ok "  ...at most once a second ($n in 2.5 s)" || fail "  ...at most once a second ($n in 2.5 s)"
	check_grep "  ...the program's own output still there" "ckpt-prog: step 400" tty.log
	check_grep "  ...the line is erased before the summary" "$(printf '\r\033\\[K')gpureduce: captured" tty.log
else
	echo "skip: no script(1) for a terminal"
fi
check_exit "no status line when stderr is not a terminal" 3 "$GPUREDUCE" capture --checkpoint-every=50 -o notty.bin -- ./prog $CUBIN 300 5000
if grep -q "launches, trace" "$TMP/.out"; then fail "  ...none in the output"; else ok "  ...none in the output"; fi

# --- options ---------------------------------------------------------------------
check_exit "--checkpoint-every=bogus is a usage error" 2 "$GPUREDUCE" capture --checkpoint-every=10x -- ./prog $CUBIN 1
check_grep "  ...that says what it takes" "give a positive number of launches" "$TMP/.out"
check_exit "--checkpoint-every=99999999T (past 64 bits) is a usage error" 2 "$GPUREDUCE" capture --checkpoint-every=99999999T -- ./prog $CUBIN 1
check_exit "--max-trace-bytes=20000000T (past 64 bits) is a usage error" 2 "$GPUREDUCE" capture --max-trace-bytes=20000000T -- ./prog $CUBIN 1
check_grep "  ...naming the option" "max-trace-bytes: cannot read '20000000T'" "$TMP/.out"
check_exit "--max-trace-bytes=0 is a usage error" 2 "$GPUREDUCE" capture --max-trace-bytes=0 -- ./prog $CUBIN 1
check_exit "--max-trace-bytes=40K alone bounds it" 3 "$GPUREDUCE" capture --max-trace-bytes=40K -o max.bin -- ./prog $CUBIN 800
m=$(size max.bin)
[ "$m" -le 60000 ] && ok "  ...to about the limit ($m bytes)" || fail "  ...to about the limit ($m bytes)"
check_exit "--max-trace-bytes below one checkpoint" 3 "$GPUREDUCE" capture --max-trace-bytes=4K -o tiny.bin -- ./prog $CUBIN 100
check "show it" sh -c "'$GPUREDUCE' show tiny.bin >tiny.yaml"
check_grep "a note says the limit cannot be met" "over --max-trace-bytes=4096: the trace cannot be kept that small" tiny.yaml
check_exit "  ...and the trace still replays to the fault" 1 "$GPUREDUCE" replay tiny.bin

# --- an allocation cuMemcpyDtoH refuses: left out, the checkpoint still taken ---
check_exit "a phantom allocation" 3 env CKPT_PROG_PHANTOM=1 "$GPUREDUCE" capture --checkpoint-every=50 -o phantom.bin -- ./prog $CUBIN 200
check_grep "  ...the checkpoints are still taken" "from checkpoint 8 at launch #400 (5 live allocations and 3 module variables" "$TMP/.out"
check "show it" sh -c "'$GPUREDUCE' show phantom.bin >phantom.yaml"
check_grep "  ...a note says what was left out" "checkpoint 8: 1 allocation(s) could not be read back" phantom.yaml
check_exit "  ...and the trace replays to the fault" 1 "$GPUREDUCE" replay phantom.bin

# --- mapped pieces of one reserved range: the checkpoint carries the flag --------
check_exit "two mapped pieces of one reserved range" 3 env CKPT_PROG_VMM=1 "$GPUREDUCE" capture --checkpoint-every=50 -o vmm.bin -- ./prog $CUBIN 200
check_grep "  ...the trace starts at a checkpoint" "from checkpoint 8 at launch #400" "$TMP/.out"
check "show it" sh -c "'$GPUREDUCE' show vmm.bin >vmm.yaml"
check_grep "  ...the checkpoint's two pieces are joined (the second flagged as continuing the range)" \
	"vmm_pieces_joined: 1" vmm.yaml
check_grep "  ...into one 4 MiB allocation" "size: 4194304" vmm.yaml
check_exit "  ...and the trace replays to the fault" 1 "$GPUREDUCE" replay vmm.bin

# --- a checkpoint that cannot be taken: a clear message, the trace kept -----------
check_exit "no host memory for the read-back buffer" 3 env GPUREDUCE_CKPT_BUFFER=576460752303423488 \
	"$GPUREDUCE" capture --checkpoint-every=50 -o nomem.bin -- ./prog $CUBIN 200
check_grep "capture warns" "warning: checkpoint 1 at launch #150 was not taken: out of host memory for a 576460752303423488-byte read-back buffer; the trace keeps every record since the last checkpoint (no further checkpoints after this failure)" "$TMP/.out"
check_grep "  ...after three tries, at launches 50, 100, 150" "captured 401 launches" "$TMP/.out"
check_exit "  ...and the whole trace replays to the fault" 1 "$GPUREDUCE" replay nomem.bin

# --- what checkpoints cost, and the read-back buffer -------------------------------
check_exit "the capture reports the checkpoints' cost" 3 "$GPUREDUCE" capture --checkpoint-every=50 -o cost.bin -- ./prog $CUBIN 200
check_grep "  ...8 taken, through pinned memory, none held back" \
	"^gpureduce: checkpoints: 8 taken in [0-9.]* s (the last [0-9.]* s; read back through pinned host memory; 0 written in the background; the exit waited 0.000 s for one); the adaptive interval (0x a checkpoint's time) held back 0$" "$TMP/.out"
check_exit "no pinned memory (the double refuses cuMemHostAlloc)" 3 env DOUBLE_NO_PINNED=1 \
	"$GPUREDUCE" capture --checkpoint-every=50 -o pageable.bin -- ./prog $CUBIN 200
check_grep "  ...read back through pageable memory instead" "checkpoints: 8 taken .* through pageable host memory" "$TMP/.out"
check_exit "  ...and that trace replays to the fault" 1 "$GPUREDUCE" replay pageable.bin
check_grep "  ...at the same launch" "(launch #400) in _Z6gatherPfPKfPKxi: CUDA_ERROR_ILLEGAL_ADDRESS" "$TMP/.out"

# --- adaptive interval: no checkpoint sooner than R x the last one's time -------
# A huge ratio holds every later trigger back: one checkpoint, then none.
check_exit "GPUREDUCE_CKPT_COST_RATIO=100000000" 3 env GPUREDUCE_CKPT_COST_RATIO=100000000 \
	"$GPUREDUCE" capture --checkpoint-every=50 -o held.bin -- ./prog $CUBIN 200
check_grep "  ...one checkpoint, at launch 50" "from checkpoint 1 at launch #50 " "$TMP/.out"
check_grep "  ...the later triggers held back (one interval)" "checkpoints: 1 taken .* held back 1$" "$TMP/.out"
check_exit "  ...the trace replays to the fault" 1 "$GPUREDUCE" replay held.bin
# --max-trace-bytes is a limit: never held back
check_exit "a huge ratio with --max-trace-bytes=40K" 3 env GPUREDUCE_CKPT_COST_RATIO=100000000 \
	"$GPUREDUCE" capture --max-trace-bytes=40K -o heldmax.bin -- ./prog $CUBIN 800
m=$(size heldmax.bin)
[ "$m" -le 60000 ] && ok "  ...the limit still holds ($m bytes)" || fail "  ...the limit still holds ($m bytes)"
# A step that sleeps 20 ms: the default ratio (50x a ~1 ms checkpoint) holds none back.
check_exit "the default ratio, steps of 20 ms" 3 env -u GPUREDUCE_CKPT_COST_RATIO \
	"$GPUREDUCE" capture --checkpoint-every=100 -o slow.bin -- ./prog $CUBIN 100 20000
check_grep "  ...every due checkpoint taken (50x)" "checkpoints: 2 taken .* (50x a checkpoint's time) held back 0$" "$TMP/.out"

# The first checkpoint is held too, by its cost estimated from the live bytes
# (GPUREDUCE_CKPT_FIRST_US_PER_MIB): 4 MiB live at 10 s per MiB under the
# default ratio is none in this run; at 0 us per MiB the triggers fire.
check_exit "the first checkpoint held by its estimate" 3 env -u GPUREDUCE_CKPT_COST_RATIO \
	CKPT_PROG_LIVE=4194304 GPUREDUCE_CKPT_FIRST_US_PER_MIB=10000000 \
	"$GPUREDUCE" capture --checkpoint-every=50 -o first.bin -- ./prog $CUBIN 200
if grep -q "from checkpoint" "$TMP/.out"; then fail "  ...no checkpoint taken"; else ok "  ...no checkpoint taken"; fi
check_exit "  ...and replays to the fault" 1 "$GPUREDUCE" replay first.bin
check_exit "the first checkpoint estimated at 0 us per MiB" 3 env -u GPUREDUCE_CKPT_COST_RATIO \
	CKPT_PROG_LIVE=4194304 GPUREDUCE_CKPT_FIRST_US_PER_MIB=0 \
	"$GPUREDUCE" capture --checkpoint-every=50 -o first0.bin -- ./prog $CUBIN 200
check_grep "  ...checkpoints taken" "from checkpoint [1-9][0-9]* at launch #" "$TMP/.out"

# --- unchanged memory costs only its hash ----------------------------------------
# 4 MiB of model state, only its first 4 KiB change: later checkpoints store
# (compress and write anew) almost nothing, and the file stays one checkpoint.
check_exit "4 MiB live, mostly unchanged" 3 env CKPT_PROG_LIVE=4194304 \
	"$GPUREDUCE" capture --checkpoint-every=60 -o live.bin -- ./prog $CUBIN 100
check "show it" sh -c "'$GPUREDUCE' show live.bin >live.yaml"
st=$(grep -A8 "type: CHECKPOINT_END" live.yaml | sed -n 's/^ *stored: //p' | tail -n 1)
by=$(grep -A8 "type: CHECKPOINT_END" live.yaml | sed -n 's/^ *bytes: //p' | tail -n 1)
[ -n "$st" ] && [ -n "$by" ] && [ "$by" -ge 4194304 ] && [ "$st" -le 1200000 ] &&
	ok "  ...the last checkpoint stored $st new bytes of $by" || fail "  ...the last checkpoint stored ${st:-?} new bytes of ${by:-?}"
check_exit "  ...and replays to the fault" 1 "$GPUREDUCE" replay live.bin

# --- checkpoints written by a background thread (the default) --------------------
# Steps of 2 ms: a checkpoint every 50 launches is written while the program
# runs on, and the program switches to it at a later launch.
export GPUREDUCE_CKPT_ASYNC=1
check_exit "background checkpoints, 1x (200 steps of 2 ms)" 3 "$GPUREDUCE" capture --checkpoint-every=50 -o bg1.bin -- ./prog $CUBIN 200 2000
n1=$(sed -n 's/.*checkpoints: \([0-9]*\) taken .* \([0-9]*\) written in the background;.*/\1 \2/p' "$TMP/.out")
set -- $n1
[ -n "$n1" ] && [ "$1" -ge 2 ] && [ "$1" = "$2" ] && ok "  ...all of them in the background ($n1)" || fail "  ...all of them in the background (${n1:-no figure})"
check_grep "  ...the trace starts at a checkpoint" "; from checkpoint [0-9]* at launch #[0-9]* (4 live allocations and 3 module variables" "$TMP/.out"
check_exit "  ...and replays to the same fault" 1 "$GPUREDUCE" replay bg1.bin
check_grep "  ...same launch and kernel" "(launch #400) in _Z6gatherPfPKfPKxi: CUDA_ERROR_ILLEGAL_ADDRESS" "$TMP/.out"
check_exit "background checkpoints into a pageable snapshot" 3 env GPUREDUCE_CKPT_SNAPSHOT_PINNED=0 \
	"$GPUREDUCE" capture --checkpoint-every=50 -o bgpage.bin -- ./prog $CUBIN 200 2000
check_grep "  ...read back through pageable memory, in the background" \
	"checkpoints: [1-9][0-9]* taken .* read back through pageable host memory; [1-9][0-9]* written in the background" "$TMP/.out"
check_exit "  ...and replays to the same fault" 1 "$GPUREDUCE" replay bgpage.bin
check_exit "background checkpoints, 4x" 3 "$GPUREDUCE" capture --checkpoint-every=50 -o bg4.bin -- ./prog $CUBIN 800 2000
b1=$(size bg1.bin) b4=$(size bg4.bin)
[ $((b4 * 10)) -le $((b1 * 12)) ] && ok "  ...the 4x trace within 1.2x of the 1x ($b4 vs $b1 bytes)" ||
	fail "  ...the 4x trace within 1.2x of the 1x ($b4 vs $b1 bytes)"
check "shrink the background-checkpointed trace" "$GPUREDUCE" shrink -j 2 --quiet -o bgr/repro.cu bg4.bin
check_grep "  ...to one launch, same signature" "-> 1 launch, .*CUDA_ERROR_ILLEGAL_ADDRESS in gather(float\*, float const\*, long long const\*, int)" "$TMP/.out"

# The fault and the exit come while checkpoint 1 is still being written (the
# thread waits 1 s before its END): the exit waits for it and switches, and
# the records since the snapshot (the fault's among them) move with it.
check_exit "a checkpoint in flight at the fault and the exit" 3 env GPUREDUCE_CKPT_TEST_SLOW=1000 \
	"$GPUREDUCE" capture --checkpoint-every=50 -o flight.bin -- ./prog $CUBIN 200 1000
check_grep "  ...the trace starts at it" "fault: CUDA_ERROR_ILLEGAL_ADDRESS in gather(float\*, float const\*, long long const\*, int) at launch #400 (exit 3); from checkpoint 1 at launch #50 " "$TMP/.out"
check "show it" sh -c "'$GPUREDUCE' show flight.bin >flight.yaml"
n=$(count "type: CHECKPOINT_END" flight.yaml); [ "$n" = 1 ] && ok "  ...one complete checkpoint" || fail "  ...one complete checkpoint ($n)"
n=$(count "type: LAUNCH" flight.yaml); [ "$n" = 351 ] && ok "  ...then every launch since it (50..400)" || fail "  ...every launch since it ($n, not 351)"
check_grep "  ...the FAULT record" "type: FAULT" flight.yaml
check_grep "  ...and the END record" "type: END" flight.yaml
check_grep "  ...the exit waited for it" "the exit waited [0-9.]* s for one" flight.yaml
check_exit "  ...it replays to the fault" 1 "$GPUREDUCE" replay flight.bin
check_grep "  ...at launch #400" "(launch #400) in _Z6gatherPfPKfPKxi: CUDA_ERROR_ILLEGAL_ADDRESS" "$TMP/.out"

# Killed while the thread writes checkpoint 2: TRACE still holds checkpoint 1
# and every record the program made until the kill.
check_exit "killed while checkpoint 2 is written in the background" 137 env GPUREDUCE_CKPT_TEST_KILL=2 \
	"$GPUREDUCE" capture --checkpoint-every=50 -o bgkill.bin -- ./prog $CUBIN 200 2000
check_grep "  ...capture says the previous one is whole" "holds the one before it" "$TMP/.out"
check_grep "  ...window from checkpoint 1" "from checkpoint 1 at launch #50 " "$TMP/.out"
[ -e bgkill.bin.next ] && fail "  ...the incomplete .next was removed" || ok "  ...the incomplete .next was removed"
check_exit "  ...the trace replays, and is called incomplete" 3 "$GPUREDUCE" replay bgkill.bin
n=$(sed -n 's/.*replayed all \([0-9]*\) launches without a fault.*/\1/p' "$TMP/.out")
[ -n "$n" ] && [ "$n" -ge 50 ] && ok "  ...with every launch since checkpoint 1 ($n)" || fail "  ...with every launch since checkpoint 1 (${n:-?})"

# the next checkpoint also waits GPUREDUCE_CKPT_BG_RATIO x the thread's time
# (each thread here takes 300 ms: its 100x is past the run's end)
check_exit "GPUREDUCE_CKPT_BG_RATIO=100, threads of 300 ms" 3 env GPUREDUCE_CKPT_TEST_SLOW=300 GPUREDUCE_CKPT_BG_RATIO=100 \
	"$GPUREDUCE" capture --checkpoint-every=50 -o bgratio.bin -- ./prog $CUBIN 300 2000
check_grep "  ...one taken, the next held back" "checkpoints: 1 taken .* held back 1$" "$TMP/.out"
check_exit "GPUREDUCE_CKPT_BG_RATIO=0, same run" 3 env GPUREDUCE_CKPT_TEST_SLOW=300 GPUREDUCE_CKPT_BG_RATIO=0 \
	"$GPUREDUCE" capture --checkpoint-every=50 -o bgratio0.bin -- ./prog $CUBIN 300 2000
n=$(sed -n 's/.*checkpoints: \([0-9]*\) taken .*/\1/p' "$TMP/.out")
[ -n "$n" ] && [ "$n" -ge 2 ] && ok "  ...more than one taken ($n)" || fail "  ...more than one taken (${n:-?})"
check_exit "  ...and it replays to the fault" 1 "$GPUREDUCE" replay bgratio0.bin

# a snapshot over GPUREDUCE_CKPT_SNAPSHOT_MAX: written on the program's thread
check_exit "GPUREDUCE_CKPT_SNAPSHOT_MAX=1000 (under the live memory)" 3 env GPUREDUCE_CKPT_SNAPSHOT_MAX=1000 \
	"$GPUREDUCE" capture --checkpoint-every=50 -o bgsync.bin -- ./prog $CUBIN 200 2000
check_grep "  ...all 8 on the program's thread" "checkpoints: 8 taken .* 0 written in the background;" "$TMP/.out"
check_exit "  ...and it replays to the fault" 1 "$GPUREDUCE" replay bgsync.bin

# --max-trace-bytes is a limit: the program waits for a checkpoint in flight
check_exit "--max-trace-bytes=40K, background checkpoints written slowly" 3 env GPUREDUCE_CKPT_TEST_SLOW=20 \
	"$GPUREDUCE" capture --max-trace-bytes=40K -o bgmax.bin -- ./prog $CUBIN 800
m=$(size bgmax.bin)
[ "$m" -le 60000 ] && ok "  ...the limit holds ($m bytes)" || fail "  ...the limit holds ($m bytes)"

# --- Python frames across checkpoints (format 1.8) ------------------------------
# the same loop called from Python through ctypes (which releases the GIL,
# as PyTorch does): every launch has the Python stack, written once as a
# PYSTACK and named by id; a segment after a checkpoint must carry the
# definition, or its launches name an id the file does not have
if command -v python3 >/dev/null 2>&1; then
	check "build the loop as a shared object" $CC $CF -fPIC -shared -Dmain=ckpt_main -o prog.so \
		$SRCDIR/$H/ckpt-prog.c -L$DBL -Wl,-rpath,$DBL -lcuda -ldl
	cat >run.py <<'EOS'
import ctypes, sys
def step_loop(lib, args):
    argv = (ctypes.c_char_p * (len(args) + 1))(*[a.encode() for a in args], None)
    return lib.ckpt_main(len(args), argv)                                # LAUNCHES
def main():
    return step_loop(ctypes.CDLL(sys.argv[1]), ["ckpt-prog"] + sys.argv[2:])
sys.exit(main())
EOS
	check_exit "the loop from Python, --no-checkpoint" 3 "$GPUREDUCE" capture --no-checkpoint -o pyfull.bin -- \
		python3 run.py ./prog.so $CUBIN 200
	"$GPUREDUCE" show pyfull.bin >pyfull.yaml
	n=$(count "type: PYSTACK" pyfull.yaml); l=$(count "type: LAUNCH" pyfull.yaml)
	[ "$n" = 1 ] && [ "$l" = 401 ] && ok "  ...401 launches, their stack written once" || fail "  ...$l launches, $n PYSTACK records (401, 1)"
	n=$(grep -c "^  - .*/run.py:4 step_loop$" pyfull.yaml)
	[ "$n" = 403 ] && ok "  ...every launch shows its Python line (so do the PYSTACK and the fault)" ||
		fail "  ...run.py:4 shown $n times (403: 401 launches, the PYSTACK, the fault)"
	check_exit "the loop from Python, --checkpoint-every=50" 3 env GPUREDUCE_CKPT_ASYNC=0 \
		"$GPUREDUCE" capture --checkpoint-every=50 -o pyck.bin -- python3 run.py ./prog.so $CUBIN 200
	check_grep "  ...the fault names the Python line" "at launch #400 from .*run.py:4 (step_loop)" "$TMP/.out"
	check_grep "  ...the trace starts at checkpoint 8" "from checkpoint 8 at launch #400" "$TMP/.out"
	check "  ...the segment reads" sh -c "'$GPUREDUCE' show pyck.bin >pyck.yaml"
	n=$(count "type: PYSTACK" pyck.yaml)
	[ "$n" = 1 ] && ok "  ...the stack carried into it" || fail "  ...$n PYSTACK records in the segment (1)"
	check_grep "  ...the faulting launch shows it" "^  - .*/run.py:4 step_loop$" pyck.yaml
	check_exit "  ...and it replays to the fault" 1 "$GPUREDUCE" replay pyck.bin
else
	echo "info: no python3 here: Python frames across checkpoints not tested"
fi
finish
