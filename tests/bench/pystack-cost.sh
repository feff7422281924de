#!/bin/sh
# pystack-cost.sh - what a launch's Python frames cost capture, on the CPU
# (issue 26): a Python program shaped like a training step (nn.Module-like
# calls through files under site-packages/torch/, eight frames deep at each
# launch) launches through ctypes (the GIL released, as PyTorch does) into
# the fake CUPTI/driver of tests/cli/helpers/capture-fakecuda.c, under the
# real libgpureduce-capture.so.  Printed per run: the launch callback's
# microseconds and its parts that the frames touch (GPUREDUCE_CAPTURE_PROFILE:
# reading them, the lock and the kernel's cached layout ("lookup"), the
# record's fields with the stack lookup, the record
# write), the trace's bytes per launch, and the loop's seconds.  With
# COST_BASE_LIB=PATH (another build of the library: the tree before a
# change) each round runs both, side by side.
# Usage (after make): sh tests/bench/pystack-cost.sh   [BUILD=build]
# Env: COST_LAUNCHES (80000), COST_REPS (3), COST_BASE_LIB, COST_BIG=1 (the
# launches are of a kernel shaped like cuDNN's: a long name, a 640-byte
# parameter struct holding ten device addresses; capture-fakecuda.c's
# 0xf002), COST_PINNED=N (N 4 MiB plain pinned buffers no kernel is given:
# the "pinned" column is the managed/pinned memory part, where launches
# are checked against them), COST_VARIANTS=N (the big kernel's launches
# cycle through N argument blocks: a step's distinct launches),
# COST_THRASH_KB=K (K KiB of memory written before each launch: the
# program's own work, which leaves the library's data out of the cache as
# on a training loop's host; with K past the last-level cache use a few
# thousand launches).
set -u
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$(pwd)/$BUILD ;; esac
CUDA=${CUDA:-/usr/local/cuda}
N=${COST_LAUNCHES:-80000}
REPS=${COST_REPS:-3}
command -v python3 >/dev/null 2>&1 || { echo "pystack-cost: no python3 here: not measured"; exit 0; }
TMP=$(mktemp -d "${TMPDIR:-/tmp}/pystack.XXXXXX") || exit 2
trap 'rm -rf "$TMP"' EXIT
. "$(dirname "$0")/pyfakes.sh"
bench_pyfakes || exit 2
mkdir -p "$TMP/site-packages/torch/nn/modules" "$TMP/site-packages/torch/autograd"
cat >"$TMP/site-packages/torch/nn/modules/module.py" <<'EOS'
class Module:
    def _wrapped_call_impl(self, *a):
        return self._call_impl(*a)
    def _call_impl(self, *a):
        return self.forward(*a)
EOS
cat >"$TMP/site-packages/torch/autograd/function.py" <<'EOS'
def apply(fn, *a):
    return fn(*a)
EOS
cat >"$TMP/train.py" <<'EOS'
import ctypes, os, sys, time
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "site-packages"))
from torch.nn.modules.module import Module
from torch.autograd.function import apply
drv = ctypes.CDLL(sys.argv[1])
assert drv.pyframes_fake_init() == 0
# COST_PINNED=N: N pinned staging buffers of 4 MiB that no kernel is
# given (what the plain-pinned-memory check costs a launch)
npin = int(os.environ.get("COST_PINNED", "0"))
assert drv.pyframes_fake_pinned(npin, 4 << 20) == npin
# COST_BIG=1: a kernel shaped like cuDNN's (a 220-byte name, one 640-byte
# parameter struct, the same every call), as a training loop repeats them
launch = drv.pyframes_fake_launch_big if os.environ.get("COST_BIG") == "1" else drv.pyframes_fake_launch
class Conv(Module):
    def forward(self, x):
        return apply(self.kernel, x)
    def kernel(self, x):
        launch(0)
class Block(Module):
    def __init__(self):
        self.a, self.b = Conv(), Conv()
    def forward(self, x):
        self.a._wrapped_call_impl(x)
        self.b._wrapped_call_impl(x)
class Net(Module):
    def __init__(self):
        self.blocks = [Block() for _ in range(4)]
    def forward(self, x):
        for b in self.blocks:
            b._wrapped_call_impl(x)
net = Net()
t0 = time.perf_counter()
for step in range(int(sys.argv[2]) // 8):
    net._wrapped_call_impl(step)
print("loop %.3f s" % (time.perf_counter() - t0))
EOS
cd "$TMP" || exit 2

# run LIB: one capture; one line of figures
run() {
	GPUREDUCE_CAPTURE_LIB=$1 "$BUILD/gpureduce" capture --no-checkpoint --force -o t.bin -- \
		python3 train.py "$TMP/drive.so" "$N" >out.txt 2>&1 || { tail -3 out.txt; return 1; }
	awk -v bytes="$(wc -c <t.bin)" -v n="$N" '
		/^loop / { loop = $2 }
		/capture profile: launch callback \(enter\):/ { cb = $(NF - 5) }
		/capture profile:   python frames:/ { py = $(NF - 5) }
		/capture profile:   record fields/ { fields = $(NF - 5) }
		/capture profile:   record write:/ { wr = $(NF - 5) }
		/capture profile:   managed(\/pinned)? memory sync:/ { mm = $(NF - 5) }
		/capture profile:   lock \+ cached kernel layout:/ { lk = $(NF - 5) }
		END { printf "%8.3f %8.3f %8.3f %8.3f %8.3f %8.3f %9.1f %8s\n", cb, py, lk, fields, wr, mm, bytes / n, loop }' out.txt
}
echo "$N launches, 8 Python frames each; us per launch inside the library, trace bytes per launch"
printf '%-6s %8s %8s %8s %8s %8s %8s %9s %8s\n' way callback pyframes lookup fields write pinned bytes loop_s
for i in $(seq "$REPS"); do
	printf '%-6s ' built; run "$BUILD/libgpureduce-capture.so"
	if [ -n "${COST_BASE_LIB:-}" ]; then
		printf '%-6s ' base; run "$COST_BASE_LIB"
	fi
done
