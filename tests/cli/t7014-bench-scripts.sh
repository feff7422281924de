#!/bin/sh
# t7014-bench-scripts.sh - issue 26's GPU benches, their arithmetic on the
# CPU: tests/gpu/bench-hostfed.sh, tests/gpu/launch-cost.sh and
# tests/gpu/shrink-pair.sh (way A alone, two ways, a way with no repro.cu) run here
# against stand-ins (a "python" that prints what hostfed.py prints, a
# "gpureduce capture" that runs its command and prints a profile, an
# "nvcc" whose program prints what launch-cost.cu prints), so that what a
# device call pays for is not lost to a broken parse.  Checked: the
# median step and its ratio per way, the stall seconds, the library's own
# time a step beside the step's growth, launch-cost's medians, ratios and
# its pass/fail count (a run that prints no time fails its workload), and
# hostfed.py's own step line (its print_steps, run without torch); and
# the archive device-session.sh packs (gr_pack_logs).
. tests/cli/test-lib.sh

cd "$TMP" || exit 1
command -v bash >/dev/null 2>&1 || { echo "no bash here: the GPU scripts need it"; echo "0 passed, 0 failed"; exit 0; }
mkdir -p fb fc out

# --- hostfed.py's step line ----------------------------------------------------
command -v python3 >/dev/null 2>&1 && {
	python3 - "$SRCDIR/tests/gpu/hostfed.py" >steps.txt 2>&1 <<'EOF'
import sys
src = open(sys.argv[1]).read()
ns = {}
exec(src[src.index("def median"):src.index("\nif __name__")], ns)
ns["print_steps"]([0.020] * 9 + [0.090])
EOF
	check_grep "hostfed.py: the median, the tail and the stall" \
		"^hostfed: step ms: median 20.000 p10 20.000 p90 90.000 max 90.000; 1 step(s) over twice the median, 0.070 s above the median in them" steps.txt
}

command -v python3 >/dev/null 2>&1 && {
	python3 - "$SRCDIR/tests/gpu/hostfed.py" >alt-lines.txt 2>&1 <<'EOF'
import sys
src = open(sys.argv[1]).read()
ns = {}
exec(src[src.index("def median"):src.index("\nif __name__")], ns)
# the machine drifts: paused phases 20, 22, 24 ms; the on phases between
# them 22 and 24.2 ms, 5 % over their neighbours' mean (21, 23 ms)
ns["print_alternate"]([0.020] * 4 + [0.022] * 4 + [0.022] * 4 + [0.0242] * 4 + [0.024] * 4,
                      [True] * 4 + [False] * 4 + [True] * 4 + [False] * 4 + [True] * 4, 4)
EOF
	check_grep "hostfed.py's alternation: the phases' medians (the switch's step left out)" \
		"^hostfed: alternate 4: capture on: median step 24.200 ms (6 steps); paused: 22.000 ms (9 steps); on/paused 1.100x" alt-lines.txt
	check_grep "  ...and each on phase over its neighbours, the drift cancelled" \
		"^hostfed: alternate 4, each on phase over its paused neighbours: median 1.052x (2 phases, quartiles 1.048-1.052)" alt-lines.txt
}

# --- bench-hostfed.sh ----------------------------------------------------------
# blocking steps take 20 ms, captured ones 22; the profile says 0.769 s of
# callbacks of which 0.267 s were the kernels' first layouts
cat >fb/python <<'EOF'
#!/bin/sh
n=${HOSTFED_STEPS:-100}
if [ -n "$CUDA_LAUNCH_BLOCKING" ]; then m=20.000 s=0.000; else m=22.000 s=0.125; fi
l=5.000
# the library's wait: 5.2 s, its steps 21 ms, no stalls
[ "$GPUREDUCE_BLOCKING" = library ] && { l=5.200; m=21.000; s=0.000; }
# the ablations: dispatch 5.05 s when run with --blocking=driver (4 s
# asynchronously, as it would under the default), wait 5.1, nobytes 5.15
case $GPUREDUCE_CAPTURE_ABLATE in
dispatch) if [ "$GPUREDUCE_BLOCKING" = driver ]; then l=5.050; else l=4.000; fi ;;
wait) l=5.100 ;;
nobytes) l=5.150 ;;
esac
# under --tensors: 6 s, 5.75 without torch's stacks
[ -n "$FAKE_TENSORS" ] && { l=6.000; m=24.000; s=0.125; }
[ -n "$FAKE_TENSORS" ] && [ "$GPUREDUCE_TENSORS_STACKS" = 0 ] && { l=5.750; m=23.000; }
echo "hostfed: trained $n steps in $l s (loss 1.0)"
echo "hostfed: step ms: median $m p10 1 p90 2 max 3; 0 step(s) over twice the median, $s s above the median in them"
# HOSTFED_ALTERNATE: the library-blocking way's phases differ less (with
# its writer thread, unless GPUREDUCE_WRITER_THREAD=0, less still)
if [ -n "$HOSTFED_ALTERNATE" ]; then
	if [ "$GPUREDUCE_BLOCKING" = library ]; then
		if [ "$GPUREDUCE_WRITER_THREAD" = 0 ]; then r=1.050 p=1.045; else r=1.040 p=1.035; fi
	elif [ "$GPUREDUCE_WRITER_THREAD" = 1 ]; then r=1.030 p=1.025
	else r=1.080 p=1.048; fi
	echo "hostfed: alternate $HOSTFED_ALTERNATE: capture on: median step 21.600 ms (40 steps); paused: 20.000 ms (40 steps); on/paused ${r}x (+1.600 ms a step)"
	echo "hostfed: alternate $HOSTFED_ALTERNATE, each on phase over its paused neighbours: median ${p}x (4 phases, quartiles 1.000-1.100)"
fi
EOF
cat >fb/gpureduce <<'EOF'
#!/bin/sh
# as the real one: the library waits (GPUREDUCE_BLOCKING=library) unless
# --blocking=driver or GPUREDUCE_BLOCKING=driver
GPUREDUCE_BLOCKING=${GPUREDUCE_BLOCKING:-library}; export GPUREDUCE_BLOCKING
while [ "$1" != "--" ]; do
	case $1 in
	--tensors) FAKE_TENSORS=1; export FAKE_TENSORS ;;
	--blocking=library) GPUREDUCE_BLOCKING=library; export GPUREDUCE_BLOCKING ;;
	--blocking=driver) GPUREDUCE_BLOCKING=driver ;;
	esac
	shift
done; shift
"$@"
[ -n "$FAKE_TENSORS" ] && [ -n "$GPUREDUCE_CAPTURE_PROFILE" ] &&
	echo "gpureduce: capture profile:   tensor blocks (--tensors): 1000 calls, 0.020 s: 20.000 us each, max 99.0 us" &&
	echo "gpureduce: capture profile:   of all fetches: the reader's Python (events to records): 2 calls, 0.004 s: 2000.000 us each, max 2100.0 us"
if [ -n "$GPUREDUCE_CAPTURE_PROFILE" ]; then
	echo "gpureduce: capture profile: driver callbacks (enter+exit, subscribed APIs): 218940 calls, 0.769 s: 3.514 us each, max 29097.2 us"
	echo "gpureduce: capture profile:     kernel layout from the driver (not cached: first launch, module unload): 44 calls, 0.267 s: 6071.998 us each, max 29066.4 us"
fi
echo "gpureduce: captured 10 launches, 1 allocations, 1 KiB -> x; no fault (exit 0)" >&2
EOF
chmod +x fb/python fb/gpureduce
check_exit "bench-hostfed on stand-ins: exit 0" 0 env PYTHON="$TMP/fb/python" BUILD="$TMP/fb" BENCH_OUT="$TMP/out" \
	BENCH_HOSTFED_WQ=1 HOSTFED_WARMUP=5 bash "$SRCDIR/tests/gpu/bench-hostfed.sh"
cp "$TMP/.out" hostfed.txt
check_grep "  ...the table has each run's median step and stall" "^1 *| capture *| 100 *| 5.200 *| 21.000 *| 0.000" hostfed.txt
check_grep "  ...every way's median step, its ratio and stall" \
	"median step ms (each run's median, median over rounds), stall s: blocking 20.000, 0.000; capture 21.000 (1.05x), 0.000; flight 21.000 (1.05x), 0.000; wq 22.000 (1.10x), 0.125; drv 22.000 (1.10x), 0.125$" hostfed.txt
check_grep "  ...capture (the library waiting) beside --blocking=driver, judged by the goal" \
	"^hostfed: median loop seconds over 3/3/3/3 rounds: blocking 5.000 s, capture 5.200 s (1.04x, goal <= 1.05: met), .*, capture --blocking=driver 5.000 s (1.00x: met)$" hostfed.txt
check_grep "  ...and round by round" "^hostfed: capture --blocking=driver over blocking, round by round: 1.00 1.00 1.00 (median 1.000x)$" hostfed.txt
n=$(grep -c "|drv|" out/hostfed/table)
[ "$n" = 3 ] && ok "  ...a drv row every round without BENCH_HOSTFED_LIBSYNC" || fail "  ...drv rows in the table ($n, not 3)"
# (0.769 - 0.267) s over 100 steps and 5 warm-up steps: 4.781 ms
check_grep "  ...the library's own time a step beside the growth" \
	"the library's own time a step (this profile, first layouts left out): 4.781 ms; capture's median step grew by 1.000 ms" hostfed.txt
check_grep "  ...and its one bench passes" "^1 passed, 0 failed" hostfed.txt
check_exit "bench-hostfed with BENCH_HOSTFED_ABLATE=1: exit 0" 0 env PYTHON="$TMP/fb/python" BUILD="$TMP/fb" \
	BENCH_OUT="$TMP/outab" BENCH_HOSTFED_ABLATE=1 BENCH_HOSTFED_ROUNDS=1 bash "$SRCDIR/tests/gpu/bench-hostfed.sh"
cp "$TMP/.out" ablate.txt
check_grep "  ...dispatch run with --blocking=driver, wait over it, capture over wait" \
	"^hostfed: ablation: callbacks subscribed, returning at once (dispatch, --blocking=driver) 5.050 s (1.01x); nothing recorded, the library's wait (wait) 5.100 s (1.02x; over dispatch 1.01x); capture without the copies' bytes (nobytes) 5.150 s (1.03x); full capture 5.200 s (1.04x; over wait 1.02x)" ablate.txt
check_exit "bench-hostfed with BENCH_HOSTFED_TENSORS=1: exit 0" 0 env PYTHON="$TMP/fb/python" BUILD="$TMP/fb" \
	BENCH_OUT="$TMP/out" BENCH_HOSTFED_TENSORS=1 BENCH_HOSTFED_ROUNDS=1 bash "$SRCDIR/tests/gpu/bench-hostfed.sh"
cp "$TMP/.out" tensors.txt
check_grep "  ...--tensors with and without torch's stacks beside capture" \
	"capture --tensors 6.000 s (1.20x), without torch's Python stacks (GPUREDUCE_TENSORS_STACKS=0) 5.750 s (1.15x), against capture 5.200 s (1.04x)" tensors.txt
check_grep "  ...their median steps" "tensors 24.000 (1.20x), 0.125; tnostack 23.000 (1.15x), 0.125$" tensors.txt
check_grep "  ...the profiled run's tensor blocks" "capture --tensors (one run apart, profiled):   tensor blocks (--tensors): 1000 calls" tensors.txt
check_grep "  ...and its fetches' split" "capture --tensors (one run apart, profiled):   of all fetches: the reader's Python" tensors.txt
check_exit "bench-hostfed with BENCH_HOSTFED_FETCH and BENCH_HOSTFED_SHM: exit 0" 0 env PYTHON="$TMP/fb/python" BUILD="$TMP/fb" \
	BENCH_OUT="$TMP/out" BENCH_HOSTFED_TENSORS=1 BENCH_HOSTFED_FETCH=4000 BENCH_HOSTFED_SHM=1 BENCH_HOSTFED_ROUNDS=1 \
	bash "$SRCDIR/tests/gpu/bench-hostfed.sh"
cp "$TMP/.out" fetch.txt
check_grep "  ...the trace in /dev/shm beside capture" \
	"capture with the trace in /dev/shm: 5.200 s (1.04x), against 5.200 s with it in .* (1.04x)" fetch.txt
check_grep "  ...the default interval's profiled loop" "^hostfed: tprof (profiled --tensors): 6.000 s loop$" fetch.txt
check_grep "  ...the other interval's loop" "^hostfed: tf4000 (profiled --tensors, GPUREDUCE_TENSORS_FETCH=4000): 6.000 s loop$" fetch.txt
check_grep "  ...and its fetch lines" "^  tf4000:   of all fetches: the reader's Python" fetch.txt
n=$(grep -c "tensor blocks (--tensors): 1000 calls" fetch.txt)
[ "$n" = 2 ] && ok "  ...each profiled run's lines once (tprof, tf4000)" || fail "  ...tensor-block lines printed $n times, not 2"

check_exit "bench-hostfed with BENCH_HOSTFED_ALT and BENCH_HOSTFED_LIBSYNC: exit 0" 0 env PYTHON="$TMP/fb/python" \
	BUILD="$TMP/fb" BENCH_OUT="$TMP/out" BENCH_HOSTFED_ALT=20 BENCH_HOSTFED_LIBSYNC=1 BENCH_HOSTFED_ROUNDS=3 \
	bash "$SRCDIR/tests/gpu/bench-hostfed.sh"
cp "$TMP/.out" alt.txt
check_grep "  ...each alternating run's ratio, and their median" \
	"^hostfed: alt (HOSTFED_ALTERNATE=20, one process, capture on and paused in turn): on/paused by run: 1.080 1.080 1.080 (median 1.080x); each on phase over its paused neighbours, by run: 1.048 1.048 1.048 (median 1.048x)$" alt.txt
check_grep "  ...the library-blocking way's apart" \
	"^hostfed: libalt (HOSTFED_ALTERNATE=20, --blocking=library, .*): on/paused by run: 1.040 1.040 1.040 (median 1.040x); each on phase over its paused neighbours, by run: 1.035 1.035 1.035 (median 1.035x)$" alt.txt
check_grep "  ...the library-blocking ways beside capture" \
	"^hostfed: capture waiting in the library (the default, with the writer thread): 5.200 s (1.04x; round by round 1.04 1.04 1.04), without the writer thread 5.200 s (1.04x)" alt.txt
n=$(grep -c '^  hostfed: alternate 20' alt.txt)
[ "$n" = 12 ] && ok "  ...every alternating run's own lines" || fail "  ...every alternating run's own lines ($n, not 12)"
n=$(grep -c "|alt|" out/hostfed/table)
[ "$n" = 3 ] && ok "  ...in the table, out of the medians" || fail "  ...alt rows in the table ($n)"
check_exit "bench-hostfed with BENCH_HOSTFED_ALT, _WQ and _LIBSYNC: exit 0" 0 env PYTHON="$TMP/fb/python" \
	BUILD="$TMP/fb" BENCH_OUT="$TMP/out" BENCH_HOSTFED_ALT=10 BENCH_HOSTFED_WQ=1 BENCH_HOSTFED_LIBSYNC=1 BENCH_HOSTFED_ROUNDS=2 \
	bash "$SRCDIR/tests/gpu/bench-hostfed.sh"
cp "$TMP/.out" wqalt.txt
check_grep "  ...the writer thread's alternating runs apart" \
	"^hostfed: wqalt (HOSTFED_ALTERNATE=10, GPUREDUCE_WRITER_THREAD=1, .*): on/paused by run: 1.030 1.030 (median 1.030x); each on phase over its paused neighbours, by run: 1.025 1.025 (median 1.025x)$" wqalt.txt
check_grep "  ...beside the plain alternation" \
	"^hostfed: alt (HOSTFED_ALTERNATE=10, one process, capture on and paused in turn): on/paused by run: 1.080 1.080 (median 1.080x)" wqalt.txt
n=$(grep -c "|wqalt|" out/hostfed/table)
[ "$n" = 2 ] && ok "  ...a wqalt row a round" || fail "  ...wqalt rows in the table ($n, not 2)"
check_grep "  ...the library's wait without its writer thread apart" \
	"^hostfed: libnowqalt (HOSTFED_ALTERNATE=10, --blocking=library, GPUREDUCE_WRITER_THREAD=0, .*): on/paused by run: 1.050 1.050 (median 1.050x); each on phase over its paused neighbours, by run: 1.045 1.045 (median 1.045x)$" wqalt.txt
check_grep "  ...beside it with the thread" \
	"^hostfed: libalt (HOSTFED_ALTERNATE=10, --blocking=library, .*): on/paused by run: 1.040 1.040 (median 1.040x)" wqalt.txt

# --- launch-cost.sh --------------------------------------------------------------
# the program prints 9.00 us a launch plainly, 10.00 under capture
cat >fc/nvcc <<'EOF'
#!/bin/sh
while [ "$1" != "-o" ]; do shift; done
cat >"$2" <<'E2'
#!/bin/sh
if [ -n "$UNDER_CAPTURE" ]; then us=10.00; else us=9.00; fi
echo "launch-cost: $1 launches in 1.000 s: $us us each"
E2
chmod +x "$2"
EOF
mkdir -p fc/bin && mv fc/nvcc fc/bin/nvcc && chmod +x fc/bin/nvcc
cat >fb/gpureduce <<'EOF'
#!/bin/sh
while [ "$1" != "--" ]; do shift; done; shift
[ -n "$GPUREDUCE_CAPTURE_PROFILE" ] &&
	echo "gpureduce: capture profile: launch callback (enter): 10 calls, 0.1 s: 1.000 us each, max 2.0 us" >&2
UNDER_CAPTURE=1 exec "$@"
EOF
chmod +x fb/gpureduce
check_exit "launch-cost on stand-ins: exit 0" 0 env BUILD="$TMP/fb" CUDA="$TMP/fc" LC_N=1000 LC_ROUNDS=3 \
	bash "$SRCDIR/tests/gpu/launch-cost.sh"
cp "$TMP/.out" lc.txt
check_grep "  ...each way's runs and median" "^  capture:  10.00 10.00 10.00 (median 10.00)" lc.txt
check_grep "  ...its ratio and difference to blocking launches" "^  capture over plain: 1.11x (+1.00 us)" lc.txt
check_grep "  ...the library's own time" "^    launch callback (enter): 10 calls" lc.txt
check_grep "  ...both workloads pass" "^2 passed, 0 failed" lc.txt
printf '#!/bin/sh\nexit 1\n' >fb/gpureduce
check_exit "launch-cost whose captures print nothing: exit 1" 1 env BUILD="$TMP/fb" CUDA="$TMP/fc" LC_N=1000 \
	LC_ROUNDS=1 bash "$SRCDIR/tests/gpu/launch-cost.sh"
check_grep "  ...says so" "some runs printed no time" "$TMP/.out"
check_grep "  ...and fails both workloads" "^0 passed, 2 failed" "$TMP/.out"

# --- shrink-pair.sh ---------------------------------------------------------------
# a "gpureduce shrink" that writes repro.yaml: 7 faulting replays, repro.cu
# 5/5 (4/10 for the trace named flaky; none for the trace named fails, way B)
mkdir -p sp/a sp/flaky sp/fails
: >sp/a/trace.bin; : >sp/flaky/trace.bin; : >sp/fails/trace.bin
cat >fb/gpureduce <<'EOF'
#!/bin/sh
for a; do case $prev in -o) out=$a ;; esac; prev=$a; trace=$a; done
case $trace in */fails/*) [ -n "$FAKE_B" ] && exit 1 ;; esac
r=5/5; case $trace in */flaky/*) r=4/10 ;; esac
printf 'faulted_replays: 7\nreduced:\n  repro_cu: %s\n' "$r" >"$(dirname "$out")/repro.yaml"
: >"$out"
EOF
chmod +x fb/gpureduce
check_exit "shrink-pair, way A alone (PAIR_B=none): exit 0" 0 env BUILD="$TMP/fb" PAIR_B=none \
	bash "$SRCDIR/tests/gpu/shrink-pair.sh" -o "$TMP/spo" sp/a sp/flaky
cp "$TMP/.out" sp1.txt
check_grep "  ...a row per trace, B's columns saying none" "^flaky  *1  [0-9.]*, 7, 4/10  *-, -, none *\$" sp1.txt
check_grep "  ...the medians: A's, and none for B" "^shrink-pair: 2 shrink(s) each way; A: median [0-9.]* s, max [0-9.]* s, median faulted replays 7.00; B: median - s" sp1.txt
if grep -q "faulted less\|emitted no repro" sp1.txt; then fail "  ...no way marked against the other"; else ok "  ...no way marked against the other"; fi
check_exit "shrink-pair, two ways: exit 0" 0 env BUILD="$TMP/fb" PAIR_B="env FAKE_B=1 $TMP/fb/gpureduce" \
	bash "$SRCDIR/tests/gpu/shrink-pair.sh" -o "$TMP/spo2" sp/a sp/fails
cp "$TMP/.out" sp2.txt
check_grep "  ...both ways' columns" "^a  *1  [0-9.]*, 7, 5/5  *[0-9.]*, 7, 5/5 *\$" sp2.txt
check_grep "  ...a way that emitted no repro.cu is marked" "^fails .* B emitted no repro.cu;" sp2.txt

# --- bench-summary.sh: the parts' figures side by side ----------------------------
mkdir -p bs/hostfed bs/trace bs/hunt bs0
cat >bs/hostfed/summary.txt <<'EOF'
hostfed: median loop seconds over 3/3/3/3 rounds: blocking 8.006 s, capture 8.417 s (1.05x, goal <= 1.05: met), capture --flight-recorder=2G 8.314 s (1.04x: met), capture --blocking=driver 9.668 s (1.21x: NOT met)
hostfed: capture over blocking, round by round: 0.96 1.13 0.99 (median 0.990x); blocking alone ranged 7.461-8.545 s
EOF
cat >bs/trace/summary.txt <<'EOF'
trace 4x / 1x: 100 / 90 bytes = 1.11x (goal <= 1.2: met)
capture overhead (training loop's own seconds, torch start-up left out; median of 3/3): plain 20.0 s, capture 21.5 s, ratio 1.07x (goal <= 1.10: met); whole process: plain 33.0 s, capture 35.0 s
EOF
printf 'a 4.00 x\nb 11.00 y\nc 5.50 z\n' >bs/phases-gpu-test.txt
printf 'program | plain s\nstencil | 1.12\n' >bs/hunt/summary.txt
check_exit "bench-summary over the parts' files: exit 0" 0 env BUILD="$TMP/fb" BENCH_OUT="$TMP/bs" \
	bash "$SRCDIR/tests/gpu/bench-summary.sh"
cp "$TMP/.out" bsum.txt
check_grep "  ...the host-fed loop, its ratio to three decimals, judged" \
	"^host-fed ResNet-18 (tests/gpu/hostfed.py) *| 8.006 *| 8.417 *| 1.051x *| <= 1.05: NOT met *| 3/3 *| bench-hostfed" bsum.txt
check_grep "  ...torchvision-long beside it" \
	"^samples/torchvision-long (bounded capture) *| 20.0 *| 21.5 *| 1.075x *| <= 1.10: met *| 3/3 *| bench-trace" bsum.txt
check_grep "  ...the host-fed rounds" "^  host-fed loop, round by round: 0.96 1.13 0.99" bsum.txt
check_grep "  ...shrink's median and max" "^shrink (gpu-test's shrinks): median 5.50 s, max 11.00 s over 3 samples" bsum.txt
check_grep "  ...the hunt table" "^stencil | 1.12" bsum.txt
rm -rf bs/trace
env BUILD="$TMP/fb" BENCH_OUT="$TMP/bs" bash "$SRCDIR/tests/gpu/bench-summary.sh" >bsum2.txt 2>&1
check_grep "  ...a part that did not run says so and what makes it" \
	"^samples/torchvision-long (bounded capture) *| - *| - *| not run .*| make bench-trace" bsum2.txt
check_exit "bench-summary with no part's files: exit 1" 1 env BUILD="$TMP/fb" BENCH_OUT="$TMP/bs0" \
	bash "$SRCDIR/tests/gpu/bench-summary.sh"

# --- lib.sh's san_summary: memcheck's memory errors apart from API errors -------
cat >san.log <<'EOF'
========= COMPUTE-SANITIZER
========= Program hit CUDA_ERROR_NOT_PERMITTED (error 800) due to "operation not permitted" on CUDA API call to cuMemCreate.
=========     Saved host backtrace up to driver entry point at error
========= Invalid __global__ read of size 4 bytes
=========     at tail_sum_kernel+0x1a0
========= ERROR SUMMARY: 2 errors
EOF
bash -c ". '$SRCDIR/tests/gpu/lib.sh'; san_summary san.log" >san.txt 2>&1
check_grep "san_summary: one memory error in its kernel, the API error apart" "^1 (tail_sum_kernel); 1 API error(s)$" san.txt
grep -v 'Program hit\|Invalid\|  at ' san.log | sed 's/2 errors/1 error/' >san2.log
printf '========= Program hit CUDA_ERROR_NOT_PERMITTED (error 800) due to "x" on CUDA API call to cuMemCreate.\n' >>san2.log
bash -c ". '$SRCDIR/tests/gpu/lib.sh'; san_summary san2.log" >san2.txt 2>&1
check_grep "  ...an API error alone is no memory error" "^0; 1 API error(s)$" san2.txt

# --- lib.sh's gr_pack_logs: device-session's archive ------------------------------
# what this call wrote, no traces; over the limit, the logs and summaries only
mkdir -p pk/session-logs pk/gpu-test-shard0/s1 pk/bench/hostfed
echo old >pk/gpu-test-shard0/s1/old.log
touch -d '1 hour ago' pk/gpu-test-shard0/s1/old.log 2>/dev/null || touch -t 202001010000 pk/gpu-test-shard0/s1/old.log
touch -d '30 minutes ago' pk/stamp 2>/dev/null || touch -t 202001010100 pk/stamp
echo "hostfed: 1.01x" >pk/bench/hostfed/summary.txt
echo log >pk/session-logs/hostfed.log
echo ok >pk/gpu-test-shard0/s1/shrink.log
echo trace >pk/gpu-test-shard0/s1/trace.bin
echo cu >pk/gpu-test-shard0/s1/repro.cu
pack() { bash -c ". '$SRCDIR/tests/gpu/lib.sh'; gr_pack_logs '$TMP/pk.tgz' '$TMP/pk' '$TMP/pk/stamp' $1 session-logs gpu-test-shard0 bench" &&
	tar -tzf pk.tgz | sort >pk.txt; }
pack 1000000
printf '%s\n' bench/hostfed/summary.txt gpu-test-shard0/s1/repro.cu gpu-test-shard0/s1/shrink.log session-logs/hostfed.log >pk-want.txt
check "gr_pack_logs: this call's files, no trace, not an earlier call's" cmp pk-want.txt pk.txt
head -c 300000 /dev/urandom >pk/gpu-test-shard0/s1/pool.log
pack 100000
printf '%s\n' bench/hostfed/summary.txt gpu-test-shard0/s1/shrink.log session-logs/hostfed.log >pk-want.txt
check "  ...over its limit: the logs and summaries, no per-run logs or sources" cmp pk-want.txt pk.txt

# --- lib.sh's gr_xid_lines and gr_gpu_lost: a GPU lost mid-call ------------------------
cat >dmesg.txt <<'EOF'
[   29.771012] NVRM: Xid (PCI:0000:00:06): 31, pid=1733, name=plan, channel 0x0000000a, intr 00000000. MMU Fault
[   34.602966] NVRM: Xid (PCI:0000:00:06): 43, pid=2250, name=gpureduce, channel 0x0000000f
[   35.100000] NVRM: Xid (PCI:0000:00:06): 13, Graphics Exception: assert
[  205.911878] NVRM: Xid (PCI:0000:00:06): 109, pid=10773, name=gpureduce, channel 0x00000020, errorString CTX SWITCH TIMEOUT
[  257.720760] NVRM: _kgspLogXid119: ***** GSP Timeout *****
[  257.720773] NVRM: Xid (PCI:0000:00:06): 119, pid=10988, name=gpureduce, Timeout after 45s of waiting for RPC response from GPU0 GSP!
[  260.000000] NVRM: Xid (PCI:0000:00:06): 31, pid=1800, name=x, MMU Fault
[  347.749051] NVRM: Xid (PCI:0000:00:06): 154, GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)
EOF
bash -c ". '$SRCDIR/tests/gpu/lib.sh'; gr_xid_lines <dmesg.txt" >xid.txt 2>&1
check "gr_xid_lines: the machine's Xids shown, the samples' own not" test "$(grep -c 'Xid (' xid.txt)" = 3
check "  ...in the order they came" sh -c "head -n 1 xid.txt | grep -q ': 109,' && sed -n 3p xid.txt | grep -q ': 154,'"
check_grep "  ...and a count of every Xid, in the order first seen" "^xids: 31 x2 43 x1 13 x1 109 x1 119 x1 154 x1$" xid.txt
printf '[ 1.0] NVRM: loaded\n' | bash -c ". '$SRCDIR/tests/gpu/lib.sh'; gr_xid_lines" >xid0.txt 2>&1
check "  ...no Xid at all: nothing printed" test ! -s xid0.txt
printf '#!/bin/sh\necho "    Product Brand : GPU requires reset"\n' >smi-reset
printf '#!/bin/sh\necho "    Product Brand : NVIDIA H100"\n' >smi-ok
printf '#!/bin/sh\necho "Unable to determine the device handle"; exit 15\n' >smi-gone
chmod +x smi-reset smi-ok smi-gone
lost() { GR_SMI=$TMP/$1 bash -c ". '$SRCDIR/tests/gpu/lib.sh'; gr_gpu_lost"; }
check "gr_gpu_lost: a GPU that needs a reset is lost, and says so" \
	test "$(lost smi-reset)" = "nvidia-smi: GPU requires reset"
check "  ...nvidia-smi failing is lost, with its first line" \
	test "$(lost smi-gone)" = "nvidia-smi failed: Unable to determine the device handle"
lost smi-ok >lost-ok.txt; rc=$?
check "  ...a healthy one is not: exit 1, nothing printed" test "$rc" = 1 -a ! -s lost-ok.txt
lost smi-none >lost-none.txt; rc=$?
check "  ...no nvidia-smi to ask: not lost (exit 1, nothing printed)" test "$rc" = 1 -a ! -s lost-none.txt

echo "$test_passed passed, $test_failed failed"
[ "$test_failed" -eq 0 ]
