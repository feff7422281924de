#!/bin/sh
# t1007-capture-tensors.sh - `capture --tensors` (issue 17) on the CPU: the
# real capture library inside a Python program that launches through the
# fake CUPTI/driver of t1003 (as t1004 does), with a fake `torch` package
# whose torch.cuda.memory._snapshot() returns the segments and blocks the
# program sets.  The trace must hold BLOCK_ALLOC / BLOCK_FREE records right
# before the launch that first sees the change, the first ones flagged
# INITIAL, with the requested size and the innermost frame outside torch;
# history must have been turned on once; without --tensors, none.
. tests/cli/test-lib.sh

. tests/cli/capture-fakes.sh
[ -f "$LIB" ] && check "build the Python-side driver" $CC $CF -DPYFRAMES_CUPTI -fPIC -shared -fvisibility=hidden \
	-o "$TMP/drive.so" $H/capture-pyframes.c -ldl
capture_fakes -

# the stand-in for torch (tests/cli/helpers/faketorch), as a torch from
# before 2025 (no allocator metadata: the snapshot mode); the program sets
# the allocator's state itself (torch.cuda.memory.segs)
mkdir -p faketorch
cp -r "$SRCDIR/tests/cli/helpers/faketorch/torch" faketorch/
FAKE_NO_METADATA=1; export FAKE_NO_METADATA

cat >app.py <<'EOS2'
import ctypes, sys
sys.path.insert(0, sys.argv[2])
import torch
drv = ctypes.CDLL(sys.argv[1])                   # releases the GIL, as torch does
assert drv.pyframes_fake_init() == 0
SEG = 0x7f0000000000
def blk(size, req, state='active_allocated', line=0, addr=None):
    b = {'size': size, 'requested_size': req, 'state': state,
         'frames': [{'filename': '/site/torch/nn/functional.py', 'line': 99, 'name': 'linear'},
                    {'filename': '/home/u/app.py', 'line': line, 'name': 'main'}] if line else []}
    if addr is not None:
        b['address'] = addr
    return b
drv.pyframes_fake_launch(0)                      # 0: torch not initialised: nothing read
torch.cuda.ready = True
torch.cuda.memory.segs = [{'address': SEG, 'blocks': [blk(4096, 4000, line=7), blk(4096, 4096),
                                                       blk(2088960, 2088960, 'inactive')]}]
drv.pyframes_fake_launch(0)                      # 1: two blocks, INITIAL
torch.cuda.memory.segs = [{'address': SEG, 'blocks': [blk(4096, 4000, 'inactive'), blk(4096, 4096),
                                                       blk(1024, 1000, line=12),
                                                       blk(2087936, 2087936, 'inactive')]}]
drv.pyframes_fake_launch(0)                      # 2: the first freed, a third (computed address)
drv.pyframes_fake_launch(0)                      # 3: nothing changed
drv.pyframes_fake_launch(700)                    # 4: faults
EOS2

for flag in --tensors ""; do
	name=tensors${flag:+-on}
	HIST_LOG=$TMP/hist-$name.log; export HIST_LOG
	: >"$HIST_LOG"
	check "capture $flag: a Python program with a fake torch" "$GPUREDUCE" capture $flag -o "$name.bin" -- python3 app.py "$TMP/drive.so" "$TMP/faketorch"
	check "dump $name" sh -c "./dump $name.bin >$name.txt"
done
awk '/^BLOCK_/ { print $1, $2; next } /^LAUNCH/ { print $1 }' tensors-on.txt >got.txt
S=0x7f0000000000
cat >want.txt <<EOT
LAUNCH
BLOCK_ALLOC addr=$S
BLOCK_ALLOC addr=0x7f0000001000
LAUNCH
BLOCK_FREE addr=$S
BLOCK_ALLOC addr=0x7f0000002000
LAUNCH
LAUNCH
LAUNCH
EOT
if cmp -s want.txt got.txt; then ok "blocks are written right before the launch that first sees them"
else fail "blocks are written right before the launch that first sees them"; diff want.txt got.txt | sed 's/^/    | /'; fi
check_grep "the first reading is INITIAL, with the requested size and the user's frame" \
	"^BLOCK_ALLOC addr=$S size=4000 alloc=4096 seg=$S src=1 flags=0x1 at=/home/u/app.py:7:main\$" tensors-on.txt
check_grep "a block without frames has an empty place" \
	"^BLOCK_ALLOC addr=0x7f0000001000 size=4096 alloc=4096 seg=$S src=1 flags=0x1 at=:0:\$" tensors-on.txt
check_grep "a later block is not INITIAL, its address computed from the segment's layout" \
	"^BLOCK_ALLOC addr=0x7f0000002000 size=1000 alloc=1024 seg=$S src=1 flags=0x0 at=/home/u/app.py:12:main\$" tensors-on.txt
n=$(grep -c "^history " "$TMP/hist-tensors-on.log")
[ "$n" = 1 ] && ok "allocation history turned on once" || fail "allocation history turned on once ($n)"
check_grep "  ...in its cheapest mode, with Python frames" "^history state alloc python False\$" "$TMP/hist-tensors-on.log"
n=$(grep -c "^BLOCK_" tensors.txt)
[ "$n" = 0 ] && ok "without --tensors: no block records" || fail "without --tensors: no block records ($n)"
[ -s "$TMP/hist-tensors.log" ] && fail "without --tensors: torch is not touched" || ok "without --tensors: torch is not touched"
check "show reads the block records" "$GPUREDUCE" show tensors-on.bin
check_grep "  ...with their allocation site" "at: /home/u/app.py:12 (main)" "$TMP/.out"
finish
