#!/bin/bash
# device-session.sh - one device call's worth of GPU checks, run in the
# order given, each under what is left of one deadline, with every log
# packed into one archive under $OUT (the device tool brings back only a
# few files).  The open issues' checks, ready for the next call:
#
#   gputest[:N]  make gpu-test in N shards side by side (default 2), each
#                shard a slice of the samples (round-robin); the tables
#                are printed one after the other (gpu-test-shardK/);
#                SESSION_GPUTEST_SAMPLES="a b ..." runs those samples only
#                (e.g. "$SMALL", pair's traces, before pair)
#   pair         tests/gpu/shrink-pair.sh on the traces gpu-test left,
#                alone: SESSION_PAIR_SAMPLES (default: the small samples
#                whose median is issue 26's target) and PAIR_A / PAIR_B
#                (default: this build against itself with
#                GPUREDUCE_VERIFY_RECALL=1; an older build carried in
#                .dev/ is given as PAIR_B=.dev/old-gpureduce);
#                SESSION_PAIR_ROUNDS rounds (1), into
#                $BUILD/SESSION_PAIR_OUT (shrink-pair)
#   hostfed      make bench-hostfed (BENCH_HOSTFED_BASE_LIB, _TENSORS, _WQ,
#                _ROUNDS, _SECONDS pass through)
#   launchcost   make bench-launch (tests/gpu/launch-cost.sh)
#   tensorscost  tests/gpu/tensors-cost.sh: capture --tensors against
#                capture and the native run, whole processes (issue 28)
#   hunt         make bench-hunt
#   huntloop     bench-hunt's training loop alone (--loop-only; its
#                BENCH_HUNT_STEPS / _IMG / _BATCH pass through), under what
#                is left of the deadline
#   huntstencil  bench-hunt's GPU-bound CUDA program alone (--stencil-only;
#                BENCH_HUNT_STENCIL_ITERS / _N pass through)
#   huntclean    make hunt-clean
#   huntreplay   hunt's replays two ways: recycling freed blocks' ranges
#                (the default), and placing each block afresh (as before
#                2026-12-05): the buggy host-fed loop
#                (HOSTFED_BUG=1, HUNTREPLAY_STEPS, 100) captured once with
#                --tensors, then `hunt --no-shrink` on that trace
#                HUNTREPLAY_ROUNDS (1) times each way, in turn, with
#                GPUREDUCE_REPLAY_PROFILE=1 (seconds by kind of record)
#   expandable   PyTorch's expandable segments
#                (PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True: memory
#                mapped piece by piece, tensors across the seams): the
#                host-fed loop clean (HOSTFED_BUG=0) and buggy, EXPANDABLE_STEPS
#                (20) steps (EXPANDABLE_VARIANTS: "clean bug"; NAME-noexp:
#                the same without expandable segments), each
#                captured with --tensors and hunted (findings cut to
#                EXPANDABLE_CUT, 400, characters; EXPANDABLE_HUNTS, 1,
#                hunts of each trace; EXPANDABLE_DIAG=1: with
#                compute-sanitizer's distances; each finding other than
#                the bug's own kernel shown with the 40 events before it), with
#                this build and, when EXPANDABLE_OLD names another gpureduce
#                (carried, e.g. build/old/gpureduce with its capture library
#                beside it), with that one too, each capturing its own; the
#                trace's vmm pieces as captured and as the decoder joined them
#   exitprobe    what a process that faulted costs after its fault, exit()
#                against _exit(), one at a time and 5 at once, and a context
#                made beside a dying one (tests/gpu/exitprobe.c): whether
#                repro.cu's runs and shrink's faulting workers can leave sooner
#   snaps        the slice's snapshots, for designing the data phase on the
#                CPU stand-in: each of SESSION_SNAP_SAMPLES (default: the
#                samples whose index data lives in allocator segments or
#                managed memory) shrunk with --keep-work on gpu-test's
#                trace, its snapshot traces (presnap-*.bin, snap*.bin) and
#                repro.yaml packed into $OUT/snaps.tgz (run gputest first)
#   libsync      GPUREDUCE_BLOCKING=library: tests/gpu/libsync-probe.cu's fault
#                as the program and the trace see it, plainly and captured
#                both ways, and the library-blocking trace shrunk to a repro
#   trace        make bench-trace (samples/torchvision-long: bounded capture,
#                its capture overhead; BENCH_TRACE_* pass through)
#   summary      tests/gpu/bench-summary.sh: the figures the parts above
#                left under $BUILD/bench, the host-fed loop beside
#                torchvision-long (make bench ends with it)
#   perf         where capture's time goes on the host-fed loop, by perf
#                (when the machine has it): the same HOSTFED_STEPS plainly
#                with CUDA_LAUNCH_BLOCKING=1 and under capture, samples per
#                library (dso) and the top symbols of each, side by side
#                (start-up is the same in both; the difference is capture's)
#
# Usage: tests/gpu/device-session.sh PART...     (BUILD, CUDA from the env)
# Env:   SESSION_DEADLINE (seconds for all parts, default 560), OUT (the
#        device tool's output folder; default $BUILD/session)
# Prints each part's own summary lines and ends with "N passed, N failed"
# over the parts (a part passes when it ran to its end and its own
# summary says 0 failed, or it has none).
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

SOUT=${OUT:-$BUILD/session}
mkdir -p "$SOUT" || { echo "device-session: cannot create $SOUT"; exit 2; }
LOGS=$BUILD/session-logs
rm -rf "$LOGS"; mkdir -p "$LOGS"
gr_deadline_set "${SESSION_DEADLINE:-560}"
export PATH="/opt/torch/.venv/bin:$PATH"
PASSED=0
FAILED=0
SMALL="oob-write use-after-free shared-overflow device-global lineinfo-assert zero-copy nvrtc-oob cuda-graph"

part_done() {   # NAME RC LOG
	local last
	last=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$3" 2>/dev/null | tail -n 1)
	if [ "$2" -eq 0 ] && { [ -z "$last" ] || [ "${last#*passed, }" = "0 failed" ]; }; then
		PASSED=$((PASSED + 1)); log "part $1: done ${last:+($last)}"
	else
		FAILED=$((FAILED + 1)); log "part $1: FAILED (exit $2${last:+, $last})"
	fi
}

# run_part NAME LOG CMD...: CMD under what is left of the deadline
run_part() {
	local n=$1 logf=$2 t
	shift 2
	t=$(gr_step_timeout 600)
	log "part $n (${t}s left): $*"
	if [ "$t" -le 10 ]; then
		echo "(not run: the deadline came)" >"$logf"
		part_done "$n" 124 "$logf"
		return
	fi
	if [ "$(type -t "$1")" = function ]; then
		"$@" >"$logf" 2>&1   # (its own steps keep to the deadline)
	else
		timeout "$t" "$@" >"$logf" 2>&1
	fi
	part_done "$n" $? "$logf"
}

gputest() {   # N
	local n=$1 k i pids=() names
	if [ -n "${SESSION_GPUTEST_SAMPLES:-}" ]; then
		read -r -a names <<<"$SESSION_GPUTEST_SAMPLES"
	else
		mapfile -t names < <(ls "$GR_ROOT"/samples/*/sample.yaml 2>/dev/null | xargs -n1 dirname | xargs -n1 basename)
	fi
	for k in $(seq 0 $((n - 1))); do
		local mine=()
		for i in "${!names[@]}"; do
			[ $((i % n)) -eq "$k" ] && mine+=("${names[$i]}")
		done
		GPU_TEST_OUT=$BUILD/gpu-test-shard$k GPU_TEST_DEADLINE=$(( $(gr_time_left) - 15 )) \
			bash "$GR_ROOT/tests/gpu/gpu-test.sh" "${mine[@]}" >"$LOGS/gpu-test-shard$k.log" 2>&1 &
		pids+=($!)
	done
	local rc=0
	for k in "${!pids[@]}"; do wait "${pids[$k]}" || rc=1; done
	mkdir -p "$BUILD/gpu-test"
	for k in $(seq 0 $((n - 1))); do
		echo "== shard $k"
		cat "$BUILD/gpu-test-shard$k/summary.txt" 2>/dev/null || echo "(no table: see gpu-test-shard$k.log)"
		grep -E '^[0-9]+ passed, [0-9]+ failed' "$LOGS/gpu-test-shard$k.log" | tail -n 1
		for d in "$BUILD/gpu-test-shard$k"/*/; do
			[ -d "$d" ] && ln -sfn "$d" "$BUILD/gpu-test/$(basename "$d")"
		done
	done
	return $rc
}

huntreplay() {
	local py=python3 d=$LOGS/huntreplay r m
	python3 -c 'import torch' 2>/dev/null || py=/opt/torch/.venv/bin/python3
	mkdir -p "$d"
	(cd "$GR_ROOT/tests/gpu" && timeout "$(gr_step_timeout 120)" env GPUREDUCE_NO_PROGRESS=1 HOSTFED_BUG=1 \
		HOSTFED_STEPS=${HUNTREPLAY_STEPS:-100} "$GR" capture --tensors -o "$BUILD/huntreplay.bin" -- \
		"$py" hostfed.py) >"$d/capture.log" 2>&1
	tail -n 3 "$d/capture.log"
	for r in $(seq 1 "${HUNTREPLAY_ROUNDS:-1}"); do
		for m in recycle plain; do
			local env=
			case $m in
			recycle) env="GPUREDUCE_HUNT_RECYCLE=1" ;;
			plain) env="GPUREDUCE_HUNT_RECYCLE=0" ;;
			esac
			rm -rf "$BUILD/huntreplay-$m-$r"
			# shellcheck disable=SC2086
			timeout "$(gr_step_timeout 120)" env $env GPUREDUCE_REPLAY_PROFILE=1 \
				"$GR" hunt --no-shrink --no-diagnose -o "$BUILD/huntreplay-$m-$r" "$BUILD/huntreplay.bin" \
				>"$d/hunt-$m-$r.log" 2>&1
			echo "== round $r, $m: $env (exit $?)"
			grep -a '^hunt: ' "$d/hunt-$m-$r.log" | head -n 4
			grep -a 'replay profile: \(allocations\|the run\)' "$d/hunt-$m-$r.log" | head -n 16
		done
	done
	rm -f "$BUILD/huntreplay.bin"
}

# expandable: see the list at the top
expandable() {
	local py=python3 d=$LOGS/expandable v g bug n tag tr conf k e
	python3 -c 'import torch' 2>/dev/null || py=/opt/torch/.venv/bin/python3
	mkdir -p "$d"
	# each build captures its own traces (an older one may not read this
	# build's format) and hunts them
	for g in "$GR" ${EXPANDABLE_OLD:+"$GR_ROOT/$EXPANDABLE_OLD"}; do
		tag=$(basename "$(dirname "$g")")-$(basename "$g")   # build-gpureduce, old-gpureduce
		for v in ${EXPANDABLE_VARIANTS:-clean bug}; do
			bug=0 conf=expandable_segments:True
			case $v in bug*) bug=1 ;; esac
			case $v in *-noexp) conf= ;; esac   # the same loop on torch's default segments
			tr=$BUILD/expandable-$tag-$v.bin
			rm -rf "$tr"
			(cd "$GR_ROOT/tests/gpu" && timeout "$(gr_step_timeout 120)" env GPUREDUCE_NO_PROGRESS=1 \
				${conf:+PYTORCH_CUDA_ALLOC_CONF=$conf} HOSTFED_BUG=$bug \
				HOSTFED_STEPS=${EXPANDABLE_STEPS:-20} HOSTFED_WARMUP=2 \
				"$g" capture --tensors -o "$tr" -- "$py" hostfed.py) >"$d/capture-$tag-$v.log" 2>&1
			echo "== $tag, $v: capture exit $?"
			tail -n 2 "$d/capture-$tag-$v.log"
			"$g" show "$tr" >"$d/show-$tag-$v.yaml" 2>&1
			n=$(grep -c '^  kind: vmm' "$d/show-$tag-$v.yaml")
			echo "expandable: $tag, $v: $n vmm allocation(s) as decoded; $(grep -a 'vmm_pieces_joined' "$d/show-$tag-$v.yaml" || echo 'no vmm pieces joined')"
			rm -f "$d/show-$tag-$v.yaml"   # 10 MB a trace: what it said is above
			for k in $(seq 1 "${EXPANDABLE_HUNTS:-1}"); do
				rm -rf "$BUILD/expandable-hunt"
				timeout "$(gr_step_timeout 180)" "$g" hunt --no-shrink \
					$([ "${EXPANDABLE_DIAG:-0}" = 1 ] || echo --no-diagnose) -o "$BUILD/expandable-hunt" \
					"$tr" >"$d/hunt-$tag-$v-$k.log" 2>&1
				echo "expandable: $tag, $v, hunt $k: exit $?"
				grep -a '^hunt: \|^finding\|note' "$d/hunt-$tag-$v-$k.log" | cut -c1-${EXPANDABLE_CUT:-400} | head -n 8
			done
			# each finding's launch and the 40 events before it (the
			# allocator's blocks placed there), for the findings that
			# are not the bug's own kernel
			for n in $(grep -a '^finding' "$d/hunt-$tag-$v-1.log" | grep -av logit_row_sum_kernel |
				sed -n 's/^finding [0-9]*: .*launch #\([0-9]*\) .*/\1/p' | head -n 3); do
				"$g" show --launch "$n" "$tr" >"$d/launch-$tag-$v-$n.yaml" 2>&1
				e=$(sed -n 's/^- event: \([0-9]*\)$/\1/p' "$d/launch-$tag-$v-$n.yaml" | head -n 1)
				[ -n "$e" ] && "$g" show --range "$((e > 40 ? e - 40 : 0)):$((e + 2))" "$tr" \
					>"$d/events-$tag-$v-$n.yaml" 2>&1
				echo "expandable: $tag, $v: launch #$n (event ${e:-?}) shown: $(grep -c 'ptr:' "$d/launch-$tag-$v-$n.yaml") pointer word(s); $(grep -a 'ptr:' "$d/launch-$tag-$v-$n.yaml" | head -n 6 | tr -s ' ' | tr '\n' ';')"
			done
			rm -f "$tr"
		done
	done
	rm -rf "$BUILD/expandable-hunt"
}

# exitprobe: what a faulted process costs after its fault (tests/gpu/exitprobe.c):
# each way EXITPROBE_N (5) times one after another, then EXITPROBE_N at
# once, the whole processes timed; then a context made while a faulted
# process exits beside it, against one made alone
exitprobe() {
	local x=$BUILD/exitprobe n=${EXITPROBE_N:-5} m i t0 t1
	cc -O2 -o "$x" "$GR_ROOT/tests/gpu/exitprobe.c" -I"$CUDA/include" -L"$CUDA/lib64/stubs" -lcuda ||
		{ echo "exitprobe: cannot build"; return 1; }
	"$x" ctx   # warm the driver once
	for m in exit _exit; do
		for i in $(seq 1 "$n"); do
			t0=$(now); "$x" fault "$m"; t1=$(now)
			echo "exitprobe: one at a time, fault $m: process $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }') s"
		done
		t0=$(now)
		for i in $(seq 1 "$n"); do "$x" fault "$m" & done
		wait
		t1=$(now)
		echo "exitprobe: $n at once, fault $m: all in $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }') s"
	done
	for i in $(seq 1 "$n"); do
		t0=$(now); "$x" ctx; t1=$(now)
		echo "exitprobe: ctx alone: process $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }') s"
	done
	for m in exit _exit; do
		for i in $(seq 1 "$n"); do
			local f=$BUILD/exitprobe.out k=0
			: >"$f"
			"$x" fault "$m" >"$f" &
			# the moment its fault has come back (its line), at most 5 s
			while ! grep -q '^exitprobe' "$f" && [ "$k" -lt 500 ]; do sleep 0.01; k=$((k + 1)); done
			t0=$(now); "$x" ctx; t1=$(now)
			wait
			echo "exitprobe: ctx beside a fault's $m: process $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }') s"
		done
	done
}

# the library's wait (capture's default) on a GPU: tests/gpu/libsync-probe.cu (a
# faulting launch after good ones) run plainly both ways and captured both
# ways: what the program sees of the fault (the launch's own result), and
# where the trace puts it; then the library-blocking trace replayed and
# shrunk, and its repro.cu run.  Fails when that trace does not put the
# fault at the faulting launch (#5) or its repro does not fault.
libsync() {
	local d=$BUILD/libsync x rc=0
	rm -rf "$d"; mkdir -p "$d"
	x=$d/probe
	"$CUDA/bin/nvcc" -O2 -o "$x" "$GR_ROOT/tests/gpu/libsync-probe.cu" >"$d/nvcc.log" 2>&1 ||
		{ echo "libsync: nvcc failed"; cat "$d/nvcc.log"; return 1; }
	echo "== CUDA_LAUNCH_BLOCKING=1"; CUDA_LAUNCH_BLOCKING=1 "$x"
	echo "== asynchronous launches"; CUDA_LAUNCH_BLOCKING=0 "$x"
	echo "== capture --blocking=driver"; GPUREDUCE_NO_PROGRESS=1 "$GR" capture --blocking=driver -o "$d/drv.bin" -- "$x" 2>&1
	echo "== capture (the library waits, the default)"
	GPUREDUCE_NO_PROGRESS=1 "$GR" capture -o "$d/lib.bin" -- "$x" >"$d/lib.log" 2>&1
	cat "$d/lib.log"
	grep -q 'fault: CUDA_ERROR_ILLEGAL_ADDRESS in fill(.*) at launch #5' "$d/lib.log" ||
		{ echo "libsync: FAIL: the library-blocking trace does not put the fault at launch #5"; rc=1; }
	timeout "$(gr_step_timeout 120)" "$GR" shrink --quiet -o "$d/r/repro.cu" "$d/lib.bin" 2>&1 | tail -n 3
	if [ -f "$d/r/repro.cu" ] && "$CUDA/bin/nvcc" -o "$d/r/repro" "$d/r/repro.cu" -lcuda >/dev/null 2>&1; then
		"$d/r/repro" 2>&1 | tail -n 2
		[ "${PIPESTATUS[0]}" -ne 0 ] || { echo "libsync: FAIL: repro.cu ran clean"; rc=1; }
	else
		echo "libsync: FAIL: no repro.cu built"; rc=1
	fi
	return $rc
}

snaps() {
	local s d=$BUILD/snaps
	rm -rf "$d"
	for s in ${SESSION_SNAP_SAMPLES:-managed-index gemm-then-fault torch-extension tensor-overrun index-assert triton-mask}; do
		[ -f "$BUILD/gpu-test/$s/trace.bin" ] || { echo "snaps: $s: no gpu-test trace"; continue; }
		timeout "$(gr_step_timeout 60)" "$GR" shrink --keep-work --quiet -o "$d/$s/repro.cu" \
			"$BUILD/gpu-test/$s/trace.bin" >"$d.$s.log" 2>&1
		echo "snaps: $s: exit $?; $(ls "$d/$s"/*.work-*/*snap*.bin 2>/dev/null | wc -l) snapshot(s)"
	done
	(cd "$d" 2>/dev/null && tar -czf "$SOUT/snaps.tgz" ./*/*.work-*/*snap*.bin ./*/repro.yaml) &&
		ls -la "$SOUT/snaps.tgz"
}

perfpart() {
	local py=python3 d=$LOGS/perf w
	command -v perf >/dev/null 2>&1 || { echo "perf: not on this machine"; return 0; }
	python3 -c 'import torch' 2>/dev/null || py=/opt/torch/.venv/bin/python3
	mkdir -p "$d"
	for w in blocking capture; do
		if [ "$w" = blocking ]; then
			(cd "$GR_ROOT/tests/gpu" && timeout "$(gr_step_timeout 120)" perf record -q -F 1999 -g \
				-o "$d/$w.data" -- env CUDA_LAUNCH_BLOCKING=1 HOSTFED_STEPS=${PERF_STEPS:-150} \
				"$py" hostfed.py) >"$d/$w.log" 2>&1
		else
			(cd "$GR_ROOT/tests/gpu" && timeout "$(gr_step_timeout 120)" perf record -q -F 1999 -g \
				-o "$d/$w.data" -- env GPUREDUCE_NO_PROGRESS=1 HOSTFED_STEPS=${PERF_STEPS:-150} \
				"$GR" capture -o "$d/perf.bin" -- "$py" hostfed.py) >"$d/$w.log" 2>&1
		fi
		echo "== $w: $(grep -a '^hostfed: trained' "$d/$w.log" | tail -n 1)"
		perf report -i "$d/$w.data" --no-children -n --sort comm,dso --stdio 2>/dev/null |
			grep -v '^#' | grep -v '^$' | head -n 25 | tee "$d/$w-dso.txt"
		perf report -i "$d/$w.data" --no-children -n --sort dso,sym --stdio -g none 2>/dev/null |
			grep -v '^#' | grep -v '^$' | head -n 60 >"$d/$w-sym.txt"
		rm -f "$d/perf.bin" "$d/perf.bin.next"
	done
	echo "== top symbols under capture"
	head -n 40 "$d/capture-sym.txt"
	rm -f "$d"/*.data
}

# every log this call's parts wrote (not an earlier call's on the same warm
# machine), the traces left out (their size says nothing the logs do not);
# packed again after each part, so that a call cut short by the device's
# time limit still brings back what the finished parts wrote; a slimmer
# one when it would be too large to come back (gr_pack_logs: session 42
# lost its host-fed table so).
STAMP=$LOGS/.started
touch "$STAMP"
pack_logs() {
	gr_pack_logs "$SOUT/session-logs.tgz" "$BUILD" "$STAMP" $((15 * 1024 * 1024)) session-logs \
		$(cd "$BUILD" && ls -d gpu-test-shard* shrink-pair* pair-* bench bench-hostfed bench-hunt hunt-clean tensors-cost 2>/dev/null)
}

# The lines a part's figures are in, beside its log's tail: the host-fed
# loop's ratios sit above its profile, which is what a tail shows.
part_summary() {   # LOG
	case $(basename "$1") in
	hostfed.log) cat "$BUILD/bench/hostfed/summary.txt" 2>/dev/null ;;
	esac
}

# a part that would only fail on a GPU that needs a reset is not started
# (gr_gpu_lost; the Xid lines are printed at the end)
GPU_LOST=
for p in "$@"; do
	pack_logs
	if [ -z "$GPU_LOST" ] && why=$(gr_gpu_lost); then
		GPU_LOST=$why
		log "the GPU is lost ($why): the parts from $p on are not run"
	fi
	if [ -n "$GPU_LOST" ]; then
		echo "(not run: $GPU_LOST)" >"$LOGS/$p.notrun.log"
		FAILED=$((FAILED + 1))
		continue
	fi
	case $p in
	gputest|gputest:*)
		n=${p#gputest}; n=${n#:}; n=${n:-2}
		run_part "$p" "$LOGS/gputest.log" gputest "$n" ;;
	pair)
		dirs=()
		for s in ${SESSION_PAIR_SAMPLES:-$SMALL}; do
			[ -f "$BUILD/gpu-test/$s/trace.bin" ] && dirs+=("$BUILD/gpu-test/$s")
		done
		if [ ${#dirs[@]} -eq 0 ]; then
			echo "(no gpu-test traces under $BUILD/gpu-test: run gputest first)" >"$LOGS/pair.log"
			part_done pair 1 "$LOGS/pair.log"
		else
			run_part pair "$LOGS/pair.log" env PAIR_DEADLINE=$(( $(gr_time_left) - 15 )) \
				bash "$GR_ROOT/tests/gpu/shrink-pair.sh" -r "${SESSION_PAIR_ROUNDS:-1}" \
				-o "$BUILD/${SESSION_PAIR_OUT:-shrink-pair}" "${dirs[@]}"
		fi ;;
	hostfed) run_part hostfed "$LOGS/hostfed.log" bash "$GR_ROOT/tests/gpu/bench-hostfed.sh" ;;
	launchcost) run_part launchcost "$LOGS/launchcost.log" bash "$GR_ROOT/tests/gpu/launch-cost.sh" ;;
	tensorscost) run_part tensorscost "$LOGS/tensorscost.log" env TC_DEADLINE=$(( $(gr_time_left) - 10 )) \
		bash "$GR_ROOT/tests/gpu/tensors-cost.sh" ;;
	hunt) run_part hunt "$LOGS/hunt.log" bash "$GR_ROOT/tests/gpu/bench-hunt.sh" ;;
	huntloop) run_part huntloop "$LOGS/huntloop.log" env BENCH_HUNT_DEADLINE=$(( $(gr_time_left) - 10 )) \
		bash "$GR_ROOT/tests/gpu/bench-hunt.sh" --loop-only ;;
	huntstencil) run_part huntstencil "$LOGS/huntstencil.log" env BENCH_HUNT_DEADLINE=$(( $(gr_time_left) - 10 )) \
		bash "$GR_ROOT/tests/gpu/bench-hunt.sh" --stencil-only ;;
	huntclean) run_part huntclean "$LOGS/huntclean.log" bash "$GR_ROOT/tests/gpu/hunt-clean.sh" ;;
	perf) run_part perf "$LOGS/perf.log" perfpart ;;
	huntreplay) run_part huntreplay "$LOGS/huntreplay.log" huntreplay ;;
	expandable) run_part expandable "$LOGS/expandable.log" expandable ;;
	exitprobe) run_part exitprobe "$LOGS/exitprobe.log" exitprobe ;;
	snaps) run_part snaps "$LOGS/snaps.log" snaps ;;
	libsync) run_part libsync "$LOGS/libsync.log" libsync ;;
	trace) run_part trace "$LOGS/trace.log" bash "$GR_ROOT/tests/gpu/bench-trace.sh" ;;
	summary) run_part summary "$LOGS/summary.log" bash "$GR_ROOT/tests/gpu/bench-summary.sh" ;;
	*) echo "device-session: unknown part '$p' (gputest[:N] pair hostfed launchcost tensorscost hunt huntloop huntstencil huntclean perf huntreplay expandable exitprobe snaps libsync trace summary)"; FAILED=$((FAILED + 1)) ;;
	esac
done
# the machine's own Xid lines (not the samples' faults): what to say when
# a GPU went away mid-call; packed with the rest, printed last
{ dmesg 2>/dev/null || journalctl -k --no-pager 2>/dev/null; } | gr_xid_lines >"$LOGS/xid.txt"
why=$(gr_gpu_lost) && echo "GPU lost: $why" >>"$LOGS/xid.txt"
pack_logs

for f in "$LOGS"/*.log; do
	echo "== $(basename "$f")"
	tail -n 25 "$f"
	part_summary "$f"
done
echo "== gpu health"
cat "$LOGS/xid.txt"
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
