#!/bin/sh
# tensors-cost.sh - what `capture --tensors` (events mode) costs a training
# loop's launches, on the CPU (issue 28: `hunt -- CMD` runs the program so;
# on an H100 the history fetches were most of it, docs/CAPTURE-COST.md).
# A Python program shaped like a training step (COST_STEPS steps of
# COST_LAUNCHES launches, an allocation every third launch, freed about 40
# launches later, COST_LIVE blocks live throughout, each allocation
# COST_FRAMES frames deep) launches through ctypes into the fake
# CUPTI/driver of tests/cli/helpers/capture-fakecuda.c, with the stand-in
# torch of tests/cli/helpers/faketorch, under the real
# libgpureduce-capture.so.  Printed per run (GPUREDUCE_CAPTURE_PROFILE):
# microseconds a launch for --tensors' tag (the per-launch part), and per
# history fetch (one every 1000 launches) its milliseconds in all, in the
# stand-in's "torch" calls (Python here; C++ in torch, so not torch's
# figure), in the reader's Python (the library's, as on a GPU machine) and
# the rest (placing the events, in C), with the events a fetch brought.
# With COST_BASE_LIB=PATH (another build of the library: the tree before a
# change) each round runs both, side by side.
# A run that fails prints its last lines and the script exits 1.
# Usage (after make): sh tests/bench/tensors-cost.sh   [BUILD=build]
# Env: COST_STEPS (30), COST_LAUNCHES (360 a step), COST_LIVE (400),
#      COST_FRAMES (6), COST_REPS (3), COST_BASE_LIB.
set -u
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$(pwd)/$BUILD ;; esac
CUDA=${CUDA:-/usr/local/cuda}
REPS=${COST_REPS:-3}
command -v python3 >/dev/null 2>&1 || { echo "tensors-cost: no python3 here: not measured"; exit 0; }
[ -f "$BUILD/libgpureduce-capture.so" ] || { echo "tensors-cost: $BUILD/libgpureduce-capture.so is missing: run make first"; exit 2; }
TMP=$(mktemp -d "${TMPDIR:-/tmp}/tensors.XXXXXX") || exit 2
trap 'rm -rf "$TMP"' EXIT
. "$(dirname "$0")/pyfakes.sh"
bench_pyfakes || exit 2
cp -r "$H/faketorch" "$TMP/faketorch" || exit 2
cat >"$TMP/train.py" <<'EOS'
import ctypes, os, sys, time
sys.path.insert(0, sys.argv[2])
import torch
drv = ctypes.CDLL(sys.argv[1])
assert drv.pyframes_fake_init() == 0
m = torch.cuda.memory
torch.cuda.ready = True
drv.pyframes_fake_launch(0)                       # the history is turned on here
keep = [m.alloc(4000 + k, 7) for k in range(int(os.environ['COST_LIVE']))]
t0 = time.perf_counter()
for s in range(int(os.environ['COST_STEPS'])):
    live = []
    for i in range(int(os.environ['COST_LAUNCHES'])):
        if i % 3 == 0:
            live.append(m.alloc(512 * (i % 7 + 1), 100 + i % 50))
        drv.pyframes_fake_launch(0)
        if len(live) > 12:
            m.free(live.pop(0))
    for a in live:
        m.free(a)
print("loop %.3f s" % (time.perf_counter() - t0))
EOS
HIST_LOG=$TMP/hist.log
COST_STEPS=${COST_STEPS:-30} COST_LAUNCHES=${COST_LAUNCHES:-360} COST_LIVE=${COST_LIVE:-400}
FAKE_FRAMES=${COST_FRAMES:-6}
export HIST_LOG COST_STEPS COST_LAUNCHES COST_LIVE FAKE_FRAMES
cd "$TMP" || exit 2

# the events a fetch brought, from a run with GPUREDUCE_TENSORS_DEBUG (one
# apart: writing them out costs the reader)
GPUREDUCE_TENSORS_DEBUG=$TMP/events.log "$BUILD/gpureduce" capture --tensors --no-checkpoint --force -o t.bin -- \
	python3 train.py "$TMP/drive.so" "$TMP/faketorch" >out.txt 2>&1 || { tail -3 out.txt; exit 1; }
EV=$(awk '/^fetch / { n++; next } n > 1 && ($1 == "alloc" || $1 == "free_completed") { e++ }
	END { if (n > 1) printf "%.0f", e / (n - 1); else print "?" }' events.log)

# run LIB: one capture; one line of figures
run() {
	GPUREDUCE_CAPTURE_LIB=$1 "$BUILD/gpureduce" capture --tensors --no-checkpoint --force -o t.bin -- \
		python3 train.py "$TMP/drive.so" "$TMP/faketorch" >out.txt 2>&1 || { tail -3 out.txt; return 1; }
	awk '
		/^loop / { loop = $2 }
		# "SLOT: N calls, S s: U us each, max M us": N and U (S has 3 decimals)
		/capture profile: tensor history fetches at launches/ { n = $(NF - 9); f = n * $(NF - 5) }
		/capture profile:   tensor blocks \(--tensors\):/ { nl = $(NF - 9); all = nl * $(NF - 5) }
		/of all fetches: torch.s _snapshot/ { nt = $(NF - 9); tt = nt * $(NF - 5) }
		/of all fetches: the reader.s Python/ { tp = $(NF - 9) * $(NF - 5) }
		/capture profile: tensor history fetches at exit/ { ne = $(NF - 9); fe = ne * $(NF - 5) }
		END {
			if (!n || !nl) { print "(no --tensors profile)"; exit }
			tot = f + fe   # microseconds
			printf "%8.3f %8.3f ", (all - f) / nl, tot / 1e3 / (n + ne)
			if (nt) printf "%8.3f %8.3f %8.3f", tt / 1e3 / nt, tp / 1e3 / nt, (tot - tt - tp) / 1e3 / nt
			else printf "%8s %8s %8s", "-", "-", "-"   # a library from before the split
			printf " %8s\n", loop }' out.txt
}
echo "--tensors: $COST_STEPS steps of $COST_LAUNCHES launches, $COST_LIVE blocks live, $FAKE_FRAMES+1 frames an allocation, ~$EV events a fetch"
echo "tag: us a launch; the fetch's ms: in all, the stand-in's \"torch\" calls, the reader's Python, the rest (C)"
printf '%-6s %8s %8s %8s %8s %8s %8s\n' way tag fetch torch reader rest loop_s
rc=0
for i in $(seq "$REPS"); do
	printf '%-6s ' built; run "$BUILD/libgpureduce-capture.so" || rc=1
	if [ -n "${COST_BASE_LIB:-}" ]; then
		printf '%-6s ' base; run "$COST_BASE_LIB" || rc=1
	fi
done
exit $rc
