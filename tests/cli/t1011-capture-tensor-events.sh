#!/bin/sh
# t1011-capture-tensor-events.sh - `capture --tensors` in its events mode
# (format 1.6, BLOCK_BATCH): the same Python program (the fake CUPTI and
# driver of t1003, a fake `torch` whose caching allocator keeps a history
# tagged with the metadata last set, as torch's does) captured in both
# modes must decode to the same BLOCK records, in the same places, with
# the same sizes, frames and INITIAL flags: with fetches every 3 launches
# (late batches), at exit, and across a checkpoint.  A process killed
# before its exit fetch reads with no blocks from the first launch it never
# fetched.  A free torch has not completed (record_stream) keeps its block
# live until it completes.  A torch that keeps no history (the
# cudaMallocAsync backend) leaves a trace without blocks that says why.
. tests/cli/test-lib.sh

. tests/cli/capture-fakes.sh
[ -f "$LIB" ] && check "build the Python-side driver" $CC $CF -DPYFRAMES_CUPTI -fPIC -shared -fvisibility=hidden \
	-o "$TMP/drive.so" $H/capture-pyframes.c -ldl
capture_fakes -

# the stand-in for torch (tests/cli/helpers/faketorch: its allocator and
# history, tagged with the metadata last set, as torch's are)
mkdir -p faketorch
cp -r "$SRCDIR/tests/cli/helpers/faketorch/torch" faketorch/

# $3: "kill": SIGKILL after launch 14, no exit fetch; "fault": launch 14
# faults; "pending": a free that completes later; "thread": every other
# launch (and an allocation before it) made by a thread of its own
cat >app.py <<'EOS2'
import ctypes, os, signal, sys, threading
sys.path.insert(0, sys.argv[2])
import torch
lazy = torch.__dict__['__getattr__']
drv = ctypes.CDLL(sys.argv[1])                   # releases the GIL, as torch does
assert drv.pyframes_fake_init() == 0
m = torch.cuda.memory
how = sys.argv[3] if len(sys.argv) > 3 else ''
launch = lambda: drv.pyframes_fake_launch(0)
launch()                                         # 0: torch not initialised: nothing read
torch.cuda.ready = True
a = m.alloc(4000, 7)                             # before any history: no frames
b = m.alloc(700, 8)
launch()                                         # 1: a, b INITIAL
live = []
for i in range(2, 18):
    x = m.alloc(100 * i + 13, 20 + i)            # a new one at every launch
    live.append(x)
    if i % 3 == 0:
        m.free(live.pop(0))                      # an older one goes
    if i % 4 == 0:
        t = m.alloc(999, 50)                     # lives and dies between two launches
        m.free(t)
    if i == 5:
        m.free(a)                                # then its place is taken again
        live.append(m.alloc(4096, 55))
    if i == 9 and how == 'pending':
        p = m.alloc(2048, 60)
    if i == 10 and how == 'pending':
        m.free(p, pending=True)                  # used on another stream: not reusable yet
    if i == 12 and how == 'pending':
        m.complete(p)
    if i == 10 and how == 'handoff':
        # backward(): another thread launches four times, allocating
        # between its launches and freeing at the end, while this one
        # waits; then this thread allocates (the optimizer) into the freed
        # space before its own next launch: its metadata is that of its
        # launch before the other thread's
        def bw():
            ys = []
            for k in range(4):
                ys.append(m.alloc(64 * (k + 1) + 7, 80 + k))
                launch()
            for y in ys:
                m.free(y)
        th = threading.Thread(target=bw)
        th.start()
        th.join()
        live.append(m.alloc(300, 90))
    if i == 14 and how == 'fault':
        drv.pyframes_fake_launch(700)            # faults: nothing recorded after it
    elif how == 'thread' and i % 2:              # launched by another thread (autograd's)
        th = threading.Thread(target=lambda: (m.alloc(77 * i, 70 + i), launch()))
        th.start()
        th.join()
    else:
        launch()                                 # 2..17
    if i == 14 and how == 'kill':
        os.kill(os.getpid(), signal.SIGKILL)
m.free(b)
assert torch.__dict__['__getattr__'] is lazy, 'torch.__getattr__ was left wrapped'
with open(os.environ['HIST_LOG'], 'a') as f:
    f.write('app asks for torch._inductor\n')
assert torch._inductor.__name__ == 'torch._inductor'   # the program's own import works
EOS2

HIST_LOG=$TMP/hist.log; export HIST_LOG
GPUREDUCE_TENSORS_FETCH=3; export GPUREDUCE_TENSORS_FETCH
run() {   # NAME MODE APP-ARG [CAPTURE-OPTION...]
	name=$1 mode=$2 arg=$3
	shift 3
	: >"$HIST_LOG"
	check "capture $name" env GPUREDUCE_TENSORS_MODE=$mode "$GPUREDUCE" capture --tensors "$@" -o "$name.bin" -- \
		python3 app.py "$TMP/drive.so" "$TMP/faketorch" $arg
	cp "$HIST_LOG" "$name.hist"
	check "dump $name" sh -c "./dump $name.bin >$name.txt"
	awk '/^BLOCK_(ALLOC|FREE)/ || /^LAUNCH/ { print $1, $2, $3, $4, $5, $6, $7, $8 }' "$name.txt" >"$name.blk"
}
# the live blocks at each launch, one line each: "seq=N ADDR size=.. alloc=.. at=.."
livesets() {
	awk '/^BLOCK_ALLOC/ { live[$2] = $3 " " $4 " " $NF } /^BLOCK_FREE/ { delete live[$2] }
		/^LAUNCH/ { for (a in live) print $2, a, live[a] }' "$1" | sort
}
same() {   # WHAT A B
	if cmp -s "$2" "$3"; then ok "$1"
	else fail "$1"; diff "$2" "$3" | head -20 | sed 's/^/    | /'; fi
}

run snap snapshot ""
run ev events ""
n=$(grep -c "^BLOCK_ALLOC" snap.blk)
[ "$n" -ge 16 ] && ok "the snapshot mode saw the blocks ($n BLOCK_ALLOC)" || fail "the snapshot mode saw $n BLOCK_ALLOC"
same "events mode: the same BLOCK records as the snapshot mode, in the same places" snap.blk ev.blk
check_grep "  ...frames from the history (innermost outside torch)" \
	"^BLOCK_ALLOC .* flags=0x0 at=/home/u/app.py:25:main\$" ev.txt
check_grep "  ...INITIAL blocks without frames" "^BLOCK_ALLOC addr=0x7f0000000000 size=4000 alloc=4096 .* flags=0x1 at=:0:\$" ev.txt
n=$(grep -c "^BLOCK_BATCH seq=[0-9]* known=" ev.txt)
[ "$n" -ge 5 ] && ok "  ...written in batches (fetches every 3 launches: $n)" || fail "  ...$n BLOCK_BATCH records"
check_grep "  ...late batches (the fetch at launch 16 names 14 and 15), their records moved" \
	"^BLOCK_BATCH seq=14 known=17\$" ev.txt
check_grep "  ...the exit fetch covers every launch" "^BLOCK_BATCH seq=18 known=19\$" ev.txt
check_grep "history: every event, with Python stacks" "^history all alloc python False\$" ev.hist
n=$(grep -c "^history all alloc python True\$" ev.hist)
[ "$n" -ge 5 ] && ok "  ...cleared at every fetch ($n)" || fail "  ...cleared $n times"
# the refusal is the reading thread's alone: another thread of the program
# that asks for torch._inductor while a snapshot is taken gets it
: >"$HIST_LOG"
check "capture with another thread asking for torch._inductor" env FAKE_OTHER_THREAD=1 \
	"$GPUREDUCE" capture --tensors -o other.bin -- python3 app.py "$TMP/drive.so" "$TMP/faketorch"
check_grep "  ...it got it" "^other thread got _inductor: True\$" "$HIST_LOG"

# torch on its cudaMallocAsync backend keeps no history and gives no
# snapshot: the program runs on, the trace says why it holds no blocks,
# and capture says so at the end (both modes)
for mode in events snapshot; do
	: >"$HIST_LOG"
	check "capture, torch on the cudaMallocAsync backend ($mode)" env FAKE_ASYNC_BACKEND=1 GPUREDUCE_TENSORS_MODE=$mode \
		"$GPUREDUCE" capture --tensors -o async.bin -- python3 app.py "$TMP/drive.so" "$TMP/faketorch"
	check_grep "  ...capture warns, with torch's reason" \
		"^gpureduce: warning: --tensors: .*RuntimeError: cudaMallocAsync does not yet support recordHistory.*; tensor blocks are not recorded from here on\$" "$TMP/.out"
	check "  ...dump" sh -c "./dump async.bin >async.txt"
	n=$(grep -c "^NOTE --tensors: .*tensor blocks are not recorded from here on" async.txt)
	[ "$n" = 1 ] && ok "  ...one NOTE in the trace" || fail "  ...$n such NOTEs"
	grep -q "^BLOCK_" async.txt && fail "  ...no BLOCK record" || ok "  ...no BLOCK record"
	n=$(grep -c "^LAUNCH" async.txt)
	[ "$n" -ge 18 ] && ok "  ...every launch recorded ($n)" || fail "  ...$n launches"
done
: >"$HIST_LOG"
check "a run whose allocator was read: no such warning" "$GPUREDUCE" capture --tensors -o read.bin -- \
	python3 app.py "$TMP/drive.so" "$TMP/faketorch"
grep -q "warning: --tensors" "$TMP/.out" && fail "  ...but it warned" || ok "  ...none"

# the profile splits every fetch: torch's calls, the reader's Python
: >"$HIST_LOG"
GPUREDUCE_CAPTURE_PROFILE=1 "$GPUREDUCE" capture --tensors -o prof.bin -- \
	python3 app.py "$TMP/drive.so" "$TMP/faketorch" >prof.out 2>&1
nl=$(sed -n 's/.*tensor history fetches at launches[^:]*: \([0-9]*\) calls.*/\1/p' prof.out)
ne=$(sed -n 's/.*tensor history fetches at exit[^:]*: \([0-9]*\) calls.*/\1/p' prof.out)
nt=$(sed -n "s/.*of all fetches: torch's _snapshot() and history calls: \([0-9]*\) calls.*/\1/p" prof.out)
np=$(sed -n "s/.*of all fetches: the reader's Python (events to records): \([0-9]*\) calls.*/\1/p" prof.out)
[ -n "$nl" ] && [ -n "$ne" ] && [ "$nt" = $((nl + ne)) ] && [ "$np" = "$nt" ] &&
	ok "profile: every fetch split into torch's calls and the reader's Python ($nl + $ne fetches)" ||
	{ fail "profile: fetches $nl + $ne, torch's part $nt, the reader's $np"; grep "capture profile" prof.out | sed 's/^/    | /'; }
: >"$HIST_LOG"
check "capture with GPUREDUCE_TENSORS_STACKS=0" env GPUREDUCE_TENSORS_STACKS=0 "$GPUREDUCE" capture --tensors -o nostk.bin -- \
	python3 app.py "$TMP/drive.so" "$TMP/faketorch"
check_grep "  ...history without stacks (context None)" "^history all None python False\$" "$HIST_LOG"
check "dump nostk" sh -c "./dump nostk.bin >nostk.txt"
n=$(grep -c "^BLOCK_ALLOC" nostk.txt)
[ "$n" -ge 16 ] && ok "  ...the blocks are still written ($n)" || fail "  ...$n BLOCK_ALLOC"
check_grep "the snapshot mode as before: history in its cheapest mode" "^history state alloc python False\$" snap.hist
for h in snap ev; do
	# the one import is the program's own, after it asked
	w=$(awk '/^app asks/ { asked = 1 } /^import _inductor/ { print (asked ? "app" : "snapshot") }' $h.hist | tr '\n' ' ')
	[ "$w" = "app " ] && ok "$h: no snapshot imported torch._inductor (the program did when it asked)" ||
		fail "$h: torch._inductor imported by: ${w:-nobody} (want: app)"
done
grep -q "NOTE.*missed" ev.txt && fail "events mode: no event was missed" || ok "events mode: no event was missed"

# GPUREDUCE_CAPTURE_PROFILE=1: the fetches apart from the per-launch cost
check "capture with the profile" env GPUREDUCE_CAPTURE_PROFILE=1 GPUREDUCE_TENSORS_MODE=events "$GPUREDUCE" \
	capture --tensors -o prof.bin -- python3 app.py "$TMP/drive.so" "$TMP/faketorch"
check_grep "  ...tensor blocks per launch" "capture profile:   tensor blocks (--tensors): 1[0-9] calls" "$TMP/.out"
check_grep "  ...the fetches at launches" "capture profile: tensor history fetches at launches .*: [1-9] calls" "$TMP/.out"
check_grep "  ...the exit fetch" "capture profile: tensor history fetches at exit or after a fault: 1 calls" "$TMP/.out"
check_grep "  ...the per-launch cost without them" "tensor blocks without the fetches: [0-9.]* us per launch" "$TMP/.out"

# the default: the events mode where torch has _set_memory_metadata, the
# snapshot mode where it has not (an older torch)
run def "" ""
same "by default: the events mode (the same blocks)" snap.blk def.blk
grep -q "^BLOCK_BATCH" def.txt && ok "  ...written in batches" || fail "  ...no BLOCK_BATCH record: not the events mode"
FAKE_NO_METADATA=1; export FAKE_NO_METADATA
run old "" ""
unset FAKE_NO_METADATA
same "a torch without _set_memory_metadata: the same blocks" snap.blk old.blk
grep -q "^BLOCK_BATCH" old.txt && fail "  ...but in batches" || ok "  ...read at every launch (the snapshot mode)"

# a checkpoint every 5 launches: after each, every live block again, INITIAL
for async in 0 1; do
	GPUREDUCE_CKPT_ASYNC=$async GPUREDUCE_CKPT_COST_RATIO=0 GPUREDUCE_CKPT_BG_RATIO=0
	export GPUREDUCE_CKPT_ASYNC GPUREDUCE_CKPT_COST_RATIO GPUREDUCE_CKPT_BG_RATIO
	run snapc$async snapshot "" --checkpoint-every=5
	run evc$async events "" --checkpoint-every=5
	grep -q "^CHECKPOINT_END" evc$async.txt && ok "checkpoints (async=$async) were taken" || fail "no checkpoint (async=$async)"
	# (the background checkpoint ends when its thread is done: the
	# windows may start at other launches; compare the launches both hold)
	livesets snapc$async.txt >sl.txt
	livesets evc$async.txt >el.txt
	first=$(awk '{ s = $1; sub("seq=", "", s) } NR == FNR { if (a == "" || s + 0 < a) a = s + 0; next }
		{ if (b == "" || s + 0 < b) b = s + 0 } END { print (a > b ? a : b) }' sl.txt el.txt)
	awk -v f="$first" '{ s = $1; sub("seq=", "", s) } s + 0 >= f' sl.txt >sl2.txt
	awk -v f="$first" '{ s = $1; sub("seq=", "", s) } s + 0 >= f' el.txt >el2.txt
	[ -s el2.txt ] && ok "  ...blocks in the window" || fail "  ...no block in the window"
	same "  ...the live blocks at every launch of the window are the same in both modes" sl2.txt el2.txt
	awk '/^LAUNCH/ { print; exit } /^BLOCK_ALLOC/ { print $1, $NF, $(NF-1) }' evc$async.txt | grep -c "flags=0x1" >n.txt
	[ "$(cat n.txt)" -ge 3 ] && ok "  ...INITIAL before the window's first launch" || fail "  ...$(cat n.txt) INITIAL blocks before the first launch"
done

# killed after launch 14: no exit fetch; the last fetch was at launch 13
# (known 14): launch 14 reads with no blocks (records written
# one by one: the buffer's last 100 ms would die with the process)
check_exit "capture of a process killed before its exit fetch" 137 env GPUREDUCE_TENSORS_MODE=events \
	GPUREDUCE_FLUSH_MS=0 "$GPUREDUCE" capture --tensors -o kill.bin -- \
	python3 app.py "$TMP/drive.so" "$TMP/faketorch" kill
check "dump kill" sh -c "./dump kill.bin >kill.txt"
awk '/^LAUNCH/ { s = $2 } /^BLOCK_FREE .* unknown$/ { u = 1; print s } END { }' kill.txt | head -1 >k.txt
check_grep "the blocks end, flagged unknown, right before launch 14" "^seq=13\$" k.txt
awk '/^LAUNCH seq=13/ { on = 1 } on && /^BLOCK_ALLOC/ { print }' kill.txt >after.txt
[ -s after.txt ] && fail "no block from launch 14 on" || ok "no block from launch 14 on"
awk '/^LAUNCH seq=13/ { exit } /^BLOCK_ALLOC/ { n++ } END { print n + 0 }' kill.txt >k2.txt
[ "$(cat k2.txt)" -ge 10 ] && ok "  ...the blocks before are kept ($(cat k2.txt))" || fail "  ...$(cat k2.txt) blocks before launch 13"
check "show says so" "$GPUREDUCE" show kill.bin
check_grep "  ...blocks_known_before" "blocks_known_before: 14" "$TMP/.out"
check_grep "  ...and why" "blocks_unknown: .the capture never fetched" "$TMP/.out"

# launches from another thread: the metadata is the thread's own, so its
# first allocation carries none; its events land before the right launches
# all the same
run tsnap snapshot thread
run tev events thread
grep -q "app.py:8[0-9]:" tev.txt && ok "the other thread's allocations are recorded" || fail "no allocation of the other thread"
same "  ...the same BLOCK records in both modes" tsnap.blk tev.blk

# backward() on another thread, then this thread's allocation with a
# metadata from before it (docs/hunt.md): placed after the other thread's
# launches, not before them; by the event times, and by the history's
# order when there are none (FAKE_TIMES=0: the tags and the order alone)
run hsnap snapshot handoff
run hev events handoff
grep -q "app.py:90:" hev.txt && ok "the late allocation is recorded" || fail "no allocation at line 90"
same "  ...the same BLOCK records in both modes" hsnap.blk hev.blk
FAKE_TIMES=0; export FAKE_TIMES
run hev0 events handoff
unset FAKE_TIMES
same "  ...without event times too" hsnap.blk hev0.blk

# torch's times a second early (another clock): the capture notices that
# events come before the launches their tags name, says so once, and
# places them by their tags alone; a second late, that they come after
# the next launches
FAKE_SKEW_US=-1000000; export FAKE_SKEW_US
run skew events ""
unset FAKE_SKEW_US
check_grep "  ...a clock that disagrees is noted" "NOTE.*times that do not agree with the capture's clock" skew.txt
same "  ...and the blocks are placed by their tags" snap.blk skew.blk
# a second late: events would be placed after launches that used them
FAKE_SKEW_US=1000000; export FAKE_SKEW_US
run skew2 events ""
unset FAKE_SKEW_US
check_grep "  ...a clock ahead is noted too" "NOTE.*times that do not agree with the capture's clock" skew2.txt
same "  ...and the blocks are placed by their tags" snap.blk skew2.blk

# a fault at launch 14: the history is fetched right after the FAULT
# record, so the faulting launch has its blocks, as in the snapshot mode
run fsnap snapshot fault
run fev events fault
grep -q "^FAULT" fev.txt && ok "the fault is in the trace" || fail "no FAULT record"
same "  ...and the blocks up to the faulting launch are the same in both modes" fsnap.blk fev.blk
grep -q "unknown" fev.txt && fail "  ...none unknown" || ok "  ...none unknown"

# a free that completes later: its block stays live until then (allocated
# before launch 9, freed before 12: printed with the launch before each)
run pend events pending
awk '/^LAUNCH/ { s = $2 } /^BLOCK_ALLOC/ && /app.py:60:/ { print "alloc", s, $2 } ' pend.txt >p.txt
addr=$(awk '{ print $3; exit }' p.txt)
awk -v a="$addr" '/^LAUNCH/ { s = $2 } $1 == "BLOCK_FREE" && $2 == a { print "free", s }' pend.txt >>p.txt
printf 'alloc seq=8 %s\nfree seq=11\n' "$addr" >pw.txt   # the launch before
same "a free not completed (record_stream): the block lives until free_completed" pw.txt p.txt
finish
