#!/bin/sh
# t5096-report-triton-names.sh - issue 24 follow-ups on the driver double:
# a Triton kernel taking a host-side TensorDescriptor (tdesc_rows: the map
# by value, then the shape and strides Triton's launcher passes after it,
# then Triton's scratch pointers) gets a source name for every one of its 9
# parameters from the 5 the @triton.jit signature names, in repro.cu and in
# report.md's Parameters line, with no "may not line up" note; the types
# line as captures before the fix wrote it ("tensordesc<fp32[64, 64]>",
# a space inside) is not split at the space.  The driver row of report.md
# does not show a stray word from the open kernel module's version line.
. tests/cli/test-lib.sh
on_double nvcc no-sanitizer plain-path

MAP=00001000007f00000000000000000200000000000000000000000000000000003f000000ff0f000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000
cat >tdesc.txt <<EOT
process 100 $TMP /usr/bin/python3 /home/u/train.py
device "gpureduce CPU double"
env "os: Linux 6.8.0 x86_64\ntriton: 3.6.0\nnvidia_driver: for"
module $DBL/kernels.cubin 1
source 1 tdesc_rows /home/u/k.py "function: tdesc_rows\nparams: x_desc out_ptr n global_scratch profile_scratch\ntypes: tensordesc<fp32[64, 64]> *fp32 i32 *i8 *i8\nconstexpr: BLOCK=64\nline: 3\nversion: 3.6.0" "def tdesc_rows(x_desc, out_ptr, n, BLOCK: tl.constexpr):\n    i = tl.program_id(0)\n    v = x_desc.load([i, 0])\n    tl.store(out_ptr + i * BLOCK + tl.arange(0, BLOCK), v)\n"
alloc 0x7f0000100000 524288
alloc 0x7f0000200000 4096
h2d 0x7f0000100000 524288 1
launch tdesc_rows 4 64 hex:$MAP i32:4096 i32:64 u64:128 u64:1 ptr:0x7f0000200000 i32:256 u64:0 u64:0 frame=/venv/lib/python3.12/site-packages/triton/runtime/jit.py:700:JITFunction.run frame=/home/u/train.py:9:main
fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel 0 at_launch=1
EOT
check "mktrace" $MKTRACE t.bin < tdesc.txt
check "shrink on the double" $GPUREDUCE shrink -j 2 --quiet -o r/repro.cu t.bin
check_grep "param 0: the descriptor, by its source name" "param 0: .x_desc. (CUtensorMap of tensordesc<fp32\[64,64\]>), 128 bytes at offset 0" r/repro.cu
check_grep "param 1: its shape[0]" "param 1: .x_desc.shape\[0\]. (i32), 4 bytes at offset 128" r/repro.cu
check_grep "param 4: its strides[1]" "param 4: .x_desc.strides\[1\]. (i64), 8 bytes at offset 144" r/repro.cu
check_grep "param 5: out_ptr after them" "param 5: .out_ptr. (\*fp32), 8 bytes at offset 152" r/repro.cu
check_grep "param 8: Triton's profile scratch" "param 8: .profile_scratch. (\*i8)" r/repro.cu
if grep -q "param [0-9]*: ?" r/repro.cu; then fail "repro.cu: no ? parameter"; else ok "repro.cu: no ? parameter"; fi
if grep -q "may not line up" r/repro.cu; then fail "repro.cu: no 'may not line up' note"; else ok "repro.cu: no 'may not line up' note"; fi
check "report" $GPUREDUCE report --runs=0 --no-sanitizer --no-tar r
check_grep "report.md: every parameter named, the descriptor whole" "Parameters:\*\* .x_desc. (CUtensorMap of tensordesc<fp32\[64,64\]>), .x_desc.shape\[0\]. (i32), .x_desc.shape\[1\]. (i32), .x_desc.strides\[0\]. (i64), .x_desc.strides\[1\]. (i64), .out_ptr. (\*fp32), .n. (i32), .global_scratch. (\*i8), .profile_scratch. (\*i8)$" r/report.md
check_grep "report.md: a stray word is no driver version" "| NVIDIA driver | unknown (supports CUDA 13.0) |" r/report.md

# diagnose: the sanitizer reports a TMA fault without an address; no
# cuTensorMapEncode was recorded (the map is only in the launch's bytes)
cat > warp-sanitizer <<'EOT'
#!/bin/sh
. "$SRCDIR/tests/cli/helpers/fake-sanitizer.sh"
san_run "$@"
printf '%s\n' "========= COMPUTE-SANITIZER" "========= Warp illegal address" \
	"=========     at tdesc_rows+0x260 in k.py:5" "=========     by thread (0,0,0) in block (1,0,0)" "========= "
EOT
chmod +x warp-sanitizer
check "diagnose: a TMA fault without an address" env GPUREDUCE_SANITIZER=$TMP/warp-sanitizer $GPUREDUCE diagnose r/repro.bin
check_grep "  ...the error and the line" "Warp illegal address at tdesc_rows+0x260 in k.py:5" "$TMP/.out"
check_grep "  ...the map read from its bytes: over which buffer, its rows and stride" "param 0 (128 bytes, a CUtensorMap by value) is a TMA descriptor over buffer [0-9]* (512.0 KiB, base at offset 0); no cuTensorMapEncode was recorded for it; as its bytes read (the layout measured on the H200, rank 2): 4096x64, row stride 2097152 bytes: its rows span at least 8190.0 MiB from its base, past the buffer's end" "$TMP/.out"

check "report with that sanitizer" env GPUREDUCE_SANITIZER=$TMP/warp-sanitizer $GPUREDUCE report --runs=1 --no-tar r
check_grep "  ...in the kernel's terms: the descriptor by its source name" "In the kernel's terms: Warp illegal address at tdesc_rows+0x260 in k.py:5 .*: param 0 .x_desc. (128 bytes, a CUtensorMap by value) is a TMA descriptor over buffer" r/report.md

# a count no rule explains: the names stay as the source gives them, with the note
sed 's/params: x_desc out_ptr n global_scratch profile_scratch/params: x_desc out_ptr n global_scratch/; s/\*fp32 i32 \*i8 \*i8/*fp32 i32 *i8/' tdesc.txt >odd.txt
check "mktrace (one scratch pointer fewer)" $MKTRACE o.bin < odd.txt
check "shrink" $GPUREDUCE shrink -j 2 --quiet -o o/repro.cu o.bin
check_grep "  ...says the names may not line up" "the source names 4 parameters, the binary has 9: names may not line up" o/repro.cu
finish
