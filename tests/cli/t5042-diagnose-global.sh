#!/bin/sh
# t5042-diagnose-global.sh - module __device__ variables, on the CPU:
#  - a global's content set with cuMemcpyHtoD (cudaMemcpyToSymbol) is
#    replayed into the replayed module's own global (its ALLOC, kind global,
#    names it), so a kernel that reads it through a pointer sees the bytes;
#  - a verbose replay prints where each loaded module's globals are, and
#    diagnose names an access inside one ("1 byte into module global
#    `d_limit`, misaligned") instead of "far from every buffer".  A
#    stand-in compute-sanitizer runs the real replay and reports a
#    misaligned write one byte into d_limit (the double's kernels.cubin
#    defines it);
#  - a buffer no parameter points at, reached through a pointer the program
#    copied into a module variable (a __constant__ plan set with
#    cudaMemcpyToSymbol), is named with that variable: "past the end of
#    buffer 1 (a 4000 B buffer; module global `d_counter` points at it, its
#    word at +0)".
. tests/cli/test-lib.sh

on_double no-sanitizer

# 1. gather reads its index from the global d_counter, set by a copy
cat > g.txt <<EOT
process 100 /work ./app
device "gpureduce CPU double"
module $DBL/kernels.cubin 1
alloc 0x7f0000100000 4000
alloc 0x7f0000200000 4000
alloc 0x7f00000a0000 8 global d_counter
h2d 0x7f00000a0000 8 u64:0x10000000000
launch _Z6gatherPfPKfPKxi 1 1 ptr:0x7f0000200000 ptr:0x7f0000100000 ptr:0x7f00000a0000 i32:1
fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel 0 at_launch=1
EOT
check "mktrace" $MKTRACE g.bin < g.txt
check_exit "replay faults: the global holds the copied wild index" 1 $GPUREDUCE replay g.bin
sed 's/^h2d 0x7f00000a0000 .*//' g.txt > g0.txt
check "mktrace without the copy" $MKTRACE g0.bin < g0.txt
check_exit "  ...without it the global is 0 and replay runs clean" 0 $GPUREDUCE replay g0.bin
GPUREDUCE_REPLAY_VERBOSE=1 check_exit "a verbose replay" 1 $GPUREDUCE replay g.bin
check_grep "  ...prints the module's globals" "^gpureduce-global 0x[0-9a-f]* 4 d_limit\$" "$TMP/.out"

# 1b. slicing keeps the kernel's own module's globals (the kernel reads them
#     by name, not through a parameter): d_limit and its copied content
cat > s.txt <<EOT
process 100 /work ./app
device "gpureduce CPU double"
module $DBL/kernels.cubin 1
alloc 0x7f0000100000 4000
alloc 0x7f0000200000 4000
alloc 0x7f00000b0000 4 global d_limit
h2d 0x7f00000b0000 4 u64:0x12345678
h2d 0x7f0000100000 4000 seq
launch _Z7add_onePfi 4 256 ptr:0x7f0000100000 i32:1000
launch _Z13scale_nocheckPfPKfi 8 256 ptr:0x7f0000200000 ptr:0x7f0000100000 i32:1000
fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel 1 at_launch=1
EOT
check "mktrace" $MKTRACE s.bin < s.txt
check "shrink it" $GPUREDUCE shrink -j 2 --quiet -o s/repro.cu s.bin
check_grep "  ...to one launch" "2 launches -> 1 launch" "$TMP/.out"
check "show the reduced trace" $GPUREDUCE show s/repro.bin
check_grep "  ...it keeps the module global" "name: d_limit" "$TMP/.out"

# 1c. the emitted repro.cu writes a global's content into the module's own
#     variable (cuModuleGetGlobal), not into a buffer of its own: limit_write
#     reads d_limit by name, so only then does the repro fault.  shrink
#     builds and runs the repro itself (GPUREDUCE_NVCC: the double).
export GPUREDUCE_NVCC="cc -x c -w -I${CUDA:-/usr/local/cuda}/include -L$DBL -Wl,-rpath,$DBL"
cat > l.txt <<EOT
process 100 /work ./app
device "gpureduce CPU double"
module $DBL/kernels.cubin 1
alloc 0x7f0000100000 4000
alloc 0x7f00000b0000 4 global d_limit
h2d 0x7f00000b0000 4 64
launch _Z11limit_writePf 1 32 ptr:0x7f0000100000
fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel 0 at_launch=1
EOT
check "mktrace" $MKTRACE l.bin < l.txt
check_exit "replay faults: d_limit holds the copied wild limit (0x40404040)" 1 $GPUREDUCE replay l.bin
check "shrink it; it builds and runs repro.cu itself" $GPUREDUCE shrink -j 2 --quiet -o l/repro.cu l.bin
check_grep "  ...the built repro.cu faulted every run" "repro_cu: 5/5" l/repro.yaml
check_grep "  ...it writes d_limit through the module's variable" 'buf_global(&buf\[[0-9]*\], mod, 1, "d_limit"' l/repro.cu
check "  ...and the repro builds here" $GPUREDUCE_NVCC -o l/repro l/repro.cu -lcuda
check_exit "  ...and faults when run" 1 env LD_LIBRARY_PATH=$DBL l/repro
unset GPUREDUCE_NVCC

# 2. diagnose: a misaligned write one byte into d_limit
cat > fake-sanitizer <<'EOT'
#!/bin/sh
. "$SRCDIR/tests/cli/helpers/fake-sanitizer.sh"
out=$("$@" 2>&1)
echo "$out"
g=$(echo "$out" | sed -n 's/^gpureduce-global \(0x[0-9a-f]*\) [0-9]* d_limit$/\1/p' | head -1)
[ -n "$g" ] || exit 0
cat <<EOR
========= COMPUTE-SANITIZER
========= Invalid __global__ write of size 4 bytes
=========     at bump_limit()+0x30
=========     by thread (0,0,0) in block (0,0,0)
=========     Address $(printf '0x%x' $(( g + 1 ))) is misaligned
========= 
EOR
EOT
chmod +x fake-sanitizer
export GPUREDUCE_SANITIZER=$TMP/fake-sanitizer
check "diagnose the trace" $GPUREDUCE diagnose g.bin
check_grep "  ...names the global, the offset and the misalignment" \
	"global write of 4 bytes by thread (0,0,0) of block (0,0,0) at bump_limit()+0x30: 1 byte into module global .d_limit. (a 4 B variable), misaligned" "$TMP/.out"
if grep -q "far from every buffer" "$TMP/.out"; then fail "  ...not 'far from every buffer'"; else ok "  ...not 'far from every buffer'"; fi

# 3. a write past a buffer that only a module variable points at
{ double_trace_head; cat <<EOT; } > h.txt
alloc 0x7f0000100000 4000
alloc 0x7f0000200000 4000
alloc 0x7f00000a0000 8 global d_counter
h2d 0x7f00000a0000 8 u64:0x7f0000200000
launch _Z7add_onePfi 4 256 ptr:0x7f0000100000 i32:1000
fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel 0 at_launch=1
EOT
check "mktrace (a pointer in a module variable)" $MKTRACE h.bin < h.txt
cat > held-sanitizer <<'EOT'
#!/bin/sh
. "$SRCDIR/tests/cli/helpers/fake-sanitizer.sh"
out=$("$@" 2>&1)
echo "$out"
set -- $(echo "$out" | sed -n 's/^gpureduce-buffer 1 \(0x[0-9a-f]*\) \([0-9]*\)$/\1 \2/p' | head -1)
[ -n "${1:-}" ] || exit 0
cat <<EOR
========= COMPUTE-SANITIZER
========= Invalid __global__ write of size 4 bytes
=========     at add_one(float *, int)+0x90
=========     by thread (0,0,0) in block (0,0,0)
=========     Address $(printf '0x%x' $(( $1 + $2 + 16 ))) is out of bounds
========= 
EOR
EOT
chmod +x held-sanitizer
GPUREDUCE_SANITIZER=$TMP/held-sanitizer check "diagnose it" $GPUREDUCE diagnose h.bin
check_grep "  ...names the module variable that points at the buffer" \
	"17 bytes past the end of buffer 1 (a 4000 B buffer; module global .d_counter. points at it, its word at +0)" "$TMP/.out"
sed 's/^h2d 0x7f00000a0000 8 .*/h2d 0x7f00000a0000 8 u64:0x5/' h.txt > h0.txt
check "mktrace (the variable holds no pointer)" $MKTRACE h0.bin < h0.txt
GPUREDUCE_SANITIZER=$TMP/held-sanitizer check "diagnose it" $GPUREDUCE diagnose h0.bin
check_grep "  ...the buffer alone" "17 bytes past the end of buffer 1 (a 4000 B buffer)" "$TMP/.out"
finish
