#!/bin/sh
# t5050-layout-placement.sh - layout-faithful placement and shrink's check
# of the program it emits, on the CPU driver double.  A wild read that
# lands in a neighbouring buffer in the original must land there in replay
# and in repro.cu too (guard placement makes it fault one launch early);
# the placement code repro.cu carries is replay's own, verbatim; shrink
# builds and runs repro.cu itself and, when the program does not fault,
# tries the other placements and earlier states, then says so and exits 1.
. tests/cli/test-lib.sh

DBL=$BUILD/double
export GPUREDUCE_LIBCUDA=$DBL/libcuda.so.1
CC_DBL="cc -x c -w -I${CUDA:-/usr/local/cuda}/include -L$DBL -Wl,-rpath,$DBL"
export GPUREDUCE_NVCC="$CC_DBL"
unset GPUREDUCE_SANITIZER
PATH=/usr/bin:/bin; export PATH
cd "$TMP" || exit 1

# A (src) and its neighbour B 2 MiB later; idx, out and idx2 share one
# granule (small cudaMalloc blocks share pages).  Launch #0 reads
# src[524288] = A + 2 MiB: B's first element, mapped in the original, so
# it does not fault there.  Launch #2 reads A + 6 MiB, where nothing is
# mapped: that is the captured fault.
{ cat <<EOT
process 100 /work ./app
device "gpureduce CPU double"
module $DBL/kernels.cubin 1
alloc 0x7f0000000000 4096
alloc 0x7f0000200000 4096
alloc 0x7f0000400000 8
alloc 0x7f0000400100 8
alloc 0x7f0000400200 8
h2d 0x7f0000000000 4096 seq
h2d 0x7f0000200000 4096 seq
h2d 0x7f0000400000 8 u64:524288
h2d 0x7f0000400200 8 u64:1572864
launch _Z6gatherPfPKfPKxi 1 1 ptr:0x7f0000400100 ptr:0x7f0000000000 ptr:0x7f0000400000 i32:1
launch _Z7add_onePfi 1 1 ptr:0x7f0000400100 i32:1
launch _Z6gatherPfPKfPKxi 1 1 ptr:0x7f0000400100 ptr:0x7f0000000000 ptr:0x7f0000400200 i32:1
fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel 2 at_launch=1
EOT
} > nb.txt
check "mktrace: a wild read lands in a neighbour, a later one in nothing" $MKTRACE nb.bin < nb.txt

# 1. replay ---------------------------------------------------------------
check_exit "replay --guard=layout faults (exit 1)" 1 env GPUREDUCE_REPLAY_VERBOSE=1 $GPUREDUCE replay --guard=layout nb.bin
cp .out layout.out
check_grep "  ...at launch #2, as the original did" "(launch #2) in _Z6gatherPfPKfPKxi: CUDA_ERROR_ILLEGAL_ADDRESS" layout.out
a=$(sed -n 's/^gpureduce-buffer 0 \(0x[0-9a-f]*\) .*/\1/p' layout.out)
b=$(sed -n 's/^gpureduce-buffer 1 \(0x[0-9a-f]*\) .*/\1/p' layout.out)
o=$(sed -n 's/^gpureduce-buffer 3 \(0x[0-9a-f]*\) .*/\1/p' layout.out)
if [ -n "$a" ] && [ -n "$b" ] && [ $((b - a)) -eq $((0x200000)) ] && [ $((o - a)) -eq $((0x400100)) ]; then
	ok "  ...every buffer at its captured offset from the others (one delta)"
else
	fail "  ...every buffer at its captured offset from the others (A=$a B=$b out=$o)"
fi
check_exit "replay without --guard: layout first" 1 $GPUREDUCE replay nb.bin
check_grep "  ...faults at launch #2 and says with which placement" "(launch #2) in _Z6gatherPfPKfPKxi: CUDA_ERROR_ILLEGAL_ADDRESS.*guard=layout" .out
check_exit "replay --guard=end faults too" 1 $GPUREDUCE replay --guard=end nb.bin
check_grep "  ...but one launch early: the neighbour is not there" "(launch #0) in _Z6gatherPfPKfPKxi" .out

# 2. shrink: layout first; repro.cu built and run by shrink itself --------
check "shrink (layout placement first, repro.cu checked)" $GPUREDUCE shrink -j 2 --quiet -o nb/repro.cu nb.bin
cp .out shrink.out
check_grep "  ...the figure is repro.cu's own count" "repro.cu faulted 5/5 (layout placement; replay 1/1)" shrink.out
check_grep "  ...repro.yaml: replay's count (a steady fault whose repro.cu runs: 1, t5103)" "^  reduced: 1/1" nb/repro.yaml
check_grep "  ...repro.yaml: repro.cu's count" "^  repro_cu: 5/5" nb/repro.yaml
check_grep "  ...repro.yaml: it reproduces" "^  repro_cu_reproduces: true" nb/repro.yaml
check_grep "  ...repro.yaml: which placement" "^  placement: layout" nb/repro.yaml
check_grep "  ...repro.cu uses layout placement" "placement_begin(PL_LAYOUT, 0x7f0000000000ull" nb/repro.cu
check_grep "  ...and its header says how it ran" "This program:   built and run by gpureduce shrink: faulted 5/5 (layout placement)" nb/repro.cu
sed -n '/^ \* Buffer placement: /,/^#endif \/\* PL_CORE_CODE \*\//p' "$SRCDIR/addr/place_core.inc" > core.want
sed -n '/^ \* Buffer placement: /,/^#endif \/\* PL_CORE_CODE \*\//p' nb/repro.cu > core.got
if [ "$(wc -l < core.want)" -gt 100 ] && cmp -s core.want core.got; then
	ok "  ...with replay's placement code, verbatim"
else
	fail "  ...with replay's placement code, verbatim ($(wc -l < core.want) vs $(wc -l < core.got) lines)"
fi
check "  ...and compiles without warnings" cc -x c -Wall -Werror -I${CUDA:-/usr/local/cuda}/include \
	-o nb/repro nb/repro.cu -L$DBL -Wl,-rpath,$DBL -lcuda
check_exit "  ...and faults" 1 ./nb/repro
check_exit "  ...also with guard placement (the slice keeps only the last launch)" 1 env REPRO_PLACEMENT=end ./nb/repro

# 3. a span too large to reserve: guard placement ---------------------------
{ cat <<EOT
process 100 /work ./app
device "gpureduce CPU double"
module $DBL/kernels.cubin 1
alloc 0x100000000000 4000
alloc 0x7f0000200000 4000
h2d 0x100000000000 4000 seq
launch _Z13scale_nocheckPfPKfi 8 256 ptr:0x7f0000200000 ptr:0x100000000000 i32:1000
fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel 0 at_launch=1
EOT
} > far.txt
check "mktrace: buffers 100 TiB apart" $MKTRACE far.bin < far.txt
check_exit "replay --guard=layout refuses (exit 3)" 3 $GPUREDUCE replay --guard=layout far.bin
check_grep "  ...and says the span is too large" "span .* more than it reserves; use --guard=end" .out
check_exit "replay without --guard falls back to end placement" 1 $GPUREDUCE replay far.bin
check_grep "  ...and says why" "more than it reserves.*replaying with --guard=end" .out
check_grep "  ...and which placement faulted" "guard=end$" .out
check "shrink falls back to guard placement" $GPUREDUCE shrink -j 2 --quiet -o far/repro.cu far.bin
check_grep "  ...repro.yaml: placement end" "^  placement: end" far/repro.yaml
check_grep "  ...repro.cu: guard placement" "placement_begin(PL_GUARD_END" far/repro.cu

# 3b. big buffers are cheap: a buffer holding one value repeated is
# snapshotted as a memset, not as its bytes
{ cat <<EOT
process 100 /work ./app
device "gpureduce CPU double"
module $DBL/kernels.cubin 1
alloc 0x7f0000000000 16777216
alloc 0x7f0001000000 16
alloc 0x7f0001000100 8
memset 0x7f0000000000 0x3e00 8388608 2
launch _Z7add_onePfi 1 1 ptr:0x7f0001000000 i32:4
h2d 0x7f0001000100 8 u64:0x100000000
launch _Z6gatherPfPKfPKxi 1 1 ptr:0x7f0001000000 ptr:0x7f0000000000 ptr:0x7f0001000100 i32:1
fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel 1 at_launch=1
EOT
} > uni.txt
check "mktrace: a 16 MiB buffer of one float16 value" $MKTRACE uni.bin < uni.txt
check "shrink it" $GPUREDUCE shrink -j 2 --quiet -o uni/repro.cu uni.bin
check_grep "  ...repro.cu sets it with one memset" "cuMemsetD16(buf\[0\].ptr + 0, 15872u, 8388608)" uni/repro.cu
sz=$(wc -c < uni/repro.bin)
if [ "$sz" -lt 1000000 ]; then ok "  ...and the reduced trace holds no 16 MiB of bytes ($sz bytes)"; else fail "  ...the reduced trace holds the bytes ($sz bytes)"; fi

# 4. a repro.cu that does not fault: alternatives, then a plain no ---------
# Stand-in compilers: each "builds" a program from what repro.cu says.
cat > clean-cc <<'EOT'
#!/bin/sh
# stand-in nvcc: the program always runs clean
out=$2
printf '#!/bin/sh\necho "repro: ran clean: the fault did not reproduce"\nexit 0\n' > "$out"
chmod +x "$out"
EOT
cat > endonly-cc <<EOT
#!/bin/sh
# stand-in nvcc: builds the real program, which faults only with guard
# placement (anything else runs clean)
out=\$2 src=\$3
if grep -q 'placement_begin(PL_GUARD_END' "\$src"; then
	exec $CC_DBL -o "\$out" "\$src" -lcuda
fi
printf '#!/bin/sh\necho "repro: ran clean: the fault did not reproduce"\nexit 0\n' > "\$out"
chmod +x "\$out"
EOT
chmod +x clean-cc endonly-cc
check "shrink, a repro.cu that faults only with guard placement" env GPUREDUCE_NVCC="$TMP/endonly-cc" \
	$GPUREDUCE shrink -j 2 --quiet -o alt/repro.cu nb.bin
check_grep "  ...repro.yaml: the placement that reproduced" "^  placement: end" alt/repro.yaml
check_grep "  ...its count" "^  repro_cu: 5/5" alt/repro.yaml
check_grep "  ...and the emitted repro.cu uses it" "placement_begin(PL_GUARD_END" alt/repro.cu
check_exit "shrink, a repro.cu that never faults: exit 1" 1 env GPUREDUCE_NVCC="$TMP/clean-cc" \
	$GPUREDUCE shrink -j 2 --quiet -o never/repro.cu nb.bin
cp .out never.out
check_grep "  ...says so plainly" "the emitted repro does NOT reproduce the fault" never.out
check_grep "  ...after trying every placement and earlier state" \
	"layout placement: 0/5; end placement: 0/5; start placement: 0/5; layout placement, state after .*: 0/5" never.out
check_grep "  ...repro.yaml: replay reproduced (topped up to 5 runs: repro.cu's figure failed)" "^  reduced: 5/5" never/repro.yaml
check_grep "  ...repro.yaml: repro.cu did not" "^  repro_cu: 0/5" never/repro.yaml
check_grep "  ...repro.yaml: not reproducing" "^  repro_cu_reproduces: false" never/repro.yaml
check "without a compiler: shrink checks replay only" env GPUREDUCE_NO_REPRO_CHECK=1 \
	$GPUREDUCE shrink -j 2 --quiet -o nocc/repro.cu nb.bin
check_grep "  ...repro.yaml says repro.cu was not built" "^  repro_cu: not built" nocc/repro.yaml

finish
