#!/bin/sh
# t5024-report.sh - issue 24 end to end on the driver double: traces with
# the 1.4 records (ENV, SOURCE, STDERR) and a Python stack are shrunk, then
# `gpureduce report` writes report.md, checked section by section (title,
# environment, what faulted with the parameter names, the assert's own
# words and the Python stack, the kernel source with the faulting line
# marked, the repro built and run N/N, compute-sanitizer's output with
# --padding and --check-bulk-copy on sm_90 (and without them when the
# sanitizer does not know them), the user's bytes kept verbatim per
# buffer, the paths and argv, the checklist), report.tar.gz, --redact, and
# repro.cu itself: the source block and parameter names instead of `?`.
# Also a kernel with no SOURCE record whose assert names a .cu file on
# disk (nvcc -lineinfo): that file's lines, the faulting one marked.
. tests/cli/test-lib.sh

DBL=$BUILD/double
export GPUREDUCE_LIBCUDA=$DBL/libcuda.so.1
export GPUREDUCE_NVCC="cc -x c -w -I${CUDA:-/usr/local/cuda}/include -L$DBL -Wl,-rpath,$DBL"
unset GPUREDUCE_SANITIZER
PATH=/usr/bin:/bin; export PATH
cd "$TMP" || exit 1

# a stand-in compute-sanitizer: its arguments, then a memcheck report
cat >san.sh <<'EOS'
#!/bin/sh
echo "sanitizer-args: $*"
for a in "$@"; do exe=$a; done
"$exe" >/dev/null 2>&1
echo "========= Invalid __global__ read of size 4 bytes"
echo "=========     at gather(float *, const float *, const long long *, int)+0x90"
echo "========= "
EOS
# one that refuses the newer options, as an older compute-sanitizer would
cat >oldsan.sh <<'EOS'
#!/bin/sh
case "$*" in *--padding*) echo "Unrecognized option '--padding'"; exit 1 ;; esac
echo "old-sanitizer-args: $*"
EOS
chmod +x san.sh oldsan.sh

cat >gather.txt <<EOT
process 100 $TMP /usr/bin/python3 /home/u/train.py --lr 0.1
device "gpureduce CPU double"
env "os: Linux 6.8.0 x86_64\nglibc: 2.39\npython: 3.12.3\ntorch: 2.11.0\ntorch_cuda: 12.8\ntriton: 3.6.0\nnvidia_driver: 575.57.08\ncuda_runtime: 12.8"
module $DBL/kernels.cubin 1
source 1 _Z6gatherPfPKfPKxi /home/u/kernels.py "function: gather\nparams: out_ptr src_ptr idx_ptr n\ntypes: *fp32 *fp32 *i64 i32\nconstexpr: BLOCK=256\nline: 10\nversion: 3.6.0" "def gather(out_ptr, src_ptr, idx_ptr, n, BLOCK: tl.constexpr):\n    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n    j = tl.load(idx_ptr + i, mask=i < n)\n    x = tl.load(src_ptr + j, mask=i < n)\n    tl.store(out_ptr + i, x, mask=i < n)\n"
alloc 0x7f0000100000 4000
alloc 0x7f0000200000 4000
alloc 0x7f0000300000 8000
h2d 0x7f0000100000 4000 seq
h2d 0x7f0000300000 8000 0
h2d 0x7f0000300088 8 127
launch _Z6gatherPfPKfPKxi 4 256 ptr:0x7f0000200000 ptr:0x7f0000100000 ptr:0x7f0000300000 i32:1000 frame=/venv/lib/python3.12/site-packages/triton/runtime/jit.py:700:JITFunction.run frame=/home/u/train.py:77:Model.forward frame=/home/u/train.py:120:main
fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel 0 at_launch=1
stderr 1 "/home/u/kernels.py:13: gather: block: [0,0,0], thread: [17,0,0] Assertion \`index out of bounds: 0 <= tmp9 < 1000\` failed.\nRuntimeError: CUDA error: an illegal memory access was encountered\n"
EOT
check "mktrace" $MKTRACE t.bin < gather.txt
check "shrink on the double" $GPUREDUCE shrink -j 2 --quiet -o r/repro.cu t.bin
check "report" env GPUREDUCE_SANITIZER=$TMP/san.sh $GPUREDUCE report r
check_grep "  ...says what it wrote" "wrote r/report.md and r/report.tar.gz" "$TMP/.out"
M=r/report.md
sect() {   # the lines of section $1 (up to the next ## heading)
	awk -v h="## $1" '$0 == h { on = 1; next } /^## / { on = 0 } on' $M
}
check_grep "title: error, code, kernel, origin" "^# CUDA_ERROR_ILLEGAL_ADDRESS (700) in gather, Triton (@triton.jit): a standalone repro" $M
sect Environment >env.md
check_grep "Environment: the GPU" "| GPU | gpureduce CPU double (compute capability 9.0" env.md
check_grep "Environment: driver" "| NVIDIA driver | 575.57.08 (supports CUDA 13.0) |" env.md
check_grep "Environment: the program's CUDA runtime" "| CUDA runtime (the program's) | 12.8 |" env.md
check_grep "Environment: OS" "| OS | Linux 6.8.0 x86_64 |" env.md
check_grep "Environment: torch" "| torch | 2.11.0 |" env.md
check_grep "Environment: triton" "| triton | 3.6.0 |" env.md
sect "What faulted" >fault.md
check_grep "What faulted: the error" "Error:\*\* CUDA_ERROR_ILLEGAL_ADDRESS (700)" fault.md
check_grep "What faulted: the parameters by the source's names" "\`out_ptr\` (\*fp32), \`src_ptr\` (\*fp32), \`idx_ptr\` (\*i64), \`n\` (i32)" fault.md
check_grep "What faulted: the assert's own words" "Assertion .index out of bounds: 0 <= tmp9 < 1000. failed" fault.md
check_grep "What faulted: the framework's error" "RuntimeError: CUDA error: an illegal memory access" fault.md
check_grep "What faulted: the Python stack" "^/home/u/train.py:77 in Model.forward" fault.md
sect "Kernel source" >src.md
check_grep "Kernel source: the origin and file" "Origin: Triton (@triton.jit), from .\/home\/u\/kernels.py." src.md
check_grep "Kernel source: constexprs" "BLOCK=256 (constexpr)" src.md
check_grep "Kernel source: the faulting line, marked from the assert" "^>>   *13 |     x = tl.load(src_ptr + j" src.md
check_grep "Kernel source: the def at its own line" "^  *10 | def gather(" src.md
sect "How to reproduce" >run.md
check_grep "How to reproduce: the build line" "nvcc -o repro repro.cu -lcuda" run.md
check_grep "How to reproduce: verified N/N" "faulted 3/3 runs" run.md
check_grep "How to reproduce: what it printed" "faulted: CUDA_ERROR_ILLEGAL_ADDRESS (700)" run.md
sect "compute-sanitizer on the repro" >san.md
check_grep "sanitizer: --padding and --check-bulk-copy on sm_90" "compute-sanitizer --tool memcheck --padding 32 --check-bulk-copy yes ./repro" san.md
check_grep "sanitizer: its report" "Invalid __global__ read of size 4 bytes" san.md
sect "What of your data is in this repro" >data.md
check_grep "data: idx keeps 8 bytes verbatim, the rest zeros" "^| 2 | 8000 | 8 | 0 | 7992 | 0 |" data.md
check_grep "data: the total" "8 bytes of your program's data are in repro.cu verbatim" data.md
check_grep "data: the argv" "^/usr/bin/python3 /home/u/train.py --lr 0.1" data.md
check_grep "data: a path" "^- \`/home/u/train.py\`" data.md
sect Checklist >check.md
check_grep "checklist: blocking launches" "\[x\] Ran with blocking launches" check.md
check_grep "checklist: sanitizer" "\[x\] compute-sanitizer: output above" check.md
check_grep "checklist: versions" "\[x\] Versions: above" check.md
check_grep "checklist: reproduces" "\[x\] Reproduces: every run here" check.md
check "the tarball" tar tzf r/report.tar.gz
check_grep "  ...holds repro.cu" "^repro.cu$" "$TMP/.out"
check_grep "  ...repro.yaml" "^repro.yaml$" "$TMP/.out"
check_grep "  ...report.md" "^report.md$" "$TMP/.out"

# repro.cu itself
check_grep "repro.cu: the source block at the launch" "Kernel source: Triton (@triton.jit), Triton 3.6.0" r/repro.cu
check_grep "repro.cu: the faulting line marked" ">>   *13 |     x = tl.load" r/repro.cu
check_grep "repro.cu: the assert's own words at the source" "It printed: *Assertion .index out of bounds: 0 <= tmp9 < 1000. failed." r/repro.cu
check_grep "repro.cu: params named by the source" "param 2: .idx_ptr. (\*i64), 8 bytes at offset 16" r/repro.cu
if grep -q "param [0-9]*: ?" r/repro.cu; then fail "repro.cu: no ? parameter"; else ok "repro.cu: no ? parameter"; fi
check "repro.cu with the source compiles against the double" cc -x c -Wall -Werror -I${CUDA:-/usr/local/cuda}/include \
	-o r/repro r/repro.cu -L$DBL -Wl,-rpath,$DBL -lcuda

# --redact
check "report --redact" env GPUREDUCE_SANITIZER=$TMP/oldsan.sh $GPUREDUCE report --redact --runs=1 r
n=$(grep -c "/home/u" r/report.md)
[ "$n" = 0 ] && ok "--redact: no /home/u left in report.md" || fail "--redact: no /home/u left in report.md ($n)"
check_grep "--redact: the name stays, the folder goes" "<path[0-9]*>/train.py" r/report.md
mkdir -p x && tar xzf r/report.tar.gz -C x
n=$(grep -c "/home/u" x/repro.cu)
[ "$n" = 0 ] && ok "--redact: not in the tarball's repro.cu either" || fail "--redact: not in the tarball's repro.cu either ($n)"
check_grep "  ...the folder's repro.cu is unchanged" "/home/u/train.py" r/repro.cu
check_grep "an old sanitizer: run again without the new options" "compute-sanitizer --tool memcheck ./repro" r/report.md
check_grep "  ...its output" "old-sanitizer-args: --tool memcheck" r/report.md

check "shrink --redact" $GPUREDUCE shrink -j 2 --quiet --redact -o rr/repro.cu t.bin
n=$(grep -c "/home/u" rr/repro.cu)
[ "$n" = 0 ] && ok "shrink --redact: no /home/u in repro.cu" || fail "shrink --redact: no /home/u in repro.cu ($n)"
check_grep "  ...the file names stay" "<path[0-9]*>/train.py:77 in Model.forward" rr/repro.cu
check "  ...and it still compiles" cc -x c -Wall -Werror -I${CUDA:-/usr/local/cuda}/include \
	-o rr/repro rr/repro.cu -L$DBL -Wl,-rpath,$DBL -lcuda

# no sanitizer, no compiler run
check "report --runs=0 --no-sanitizer" $GPUREDUCE report --runs=0 --no-sanitizer --no-tar r
check_grep "  ...says the repro was not run" "Not run by .report. (--runs=0)" r/report.md
check_grep "  ...and the sanitizer" "\[ \] compute-sanitizer: not run (--no-sanitizer)" r/report.md

# nvcc -lineinfo: no SOURCE record; the assert names a .cu file on disk
cat >app.cu <<'EOS'
#include <cstdio>

__global__ void gather(float *out, const float *src, const long long *idx, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) out[i] = src[idx[i]];
}
EOS
grep -v "^source \|^stderr " gather.txt >plain.txt
printf '%s\n' 'stderr 1 "app.cu:6: void gather(float *, const float *, const long long *, int): block: [0,0,0], thread: [17,0,0] Assertion failed.\n"' >>plain.txt
check "mktrace (no SOURCE)" $MKTRACE p.bin < plain.txt
check "shrink" $GPUREDUCE shrink -j 2 --quiet -o p/repro.cu p.bin
check_grep "repro.cu: the .cu file the assert names" "Kernel source: source file named by the fault's location" p/repro.cu
check_grep "  ...its faulting line marked" ">>  *6 | 	if (i < n) out\[i\] = src\[idx\[i\]\];" p/repro.cu
check "report" $GPUREDUCE report --runs=0 --no-sanitizer p
check_grep "  ...in report.md too" ">>  *6 | " p/report.md

# an NVRTC program (kernel "": found by its __global__ name), options kept
grep -v "^source \|^stderr " gather.txt >nvrtc.txt
printf '%s\n' 'source 3 "" prog.cu "options: -arch=sm_90 -lineinfo" "#include <x.h>\nextern \"C\" __global__ void other(int *p) { }\nextern \"C\" __global__ void gather(float *out, const float *src, const long long *idx, int n)\n{\n  out[threadIdx.x] = src[idx[threadIdx.x]];\n}\n"' >>nvrtc.txt
check "mktrace (NVRTC)" $MKTRACE n.bin < nvrtc.txt
check "shrink" $GPUREDUCE shrink -j 2 --quiet -o n/repro.cu n.bin
check_grep "repro.cu: the NVRTC program that defines the kernel" "Kernel source: NVRTC (runtime-compiled CUDA C++)" n/repro.cu
check_grep "  ...its text" "__global__ void gather(float \*out" n/repro.cu

# a device assert: the diagnosis quotes the assertion the kernel printed
cat >asan.sh <<'EOS'
#!/bin/sh
for a in "$@"; do exe=$a; done
"$exe" 2>&1
echo "========= Program hit CUDA_ERROR_ASSERT (error 710) due to \"device-side assert triggered\" on CUDA API call to cuCtxSynchronize."
EOS
chmod +x asan.sh
cat >assert.txt <<EOT
process 100 $TMP ./app
device "gpureduce CPU double"
module $DBL/kernels.cubin 1
alloc 0x7f0000100000 800
h2d 0x7f0000100000 800 0
h2d 0x7f0000100040 8 1
launch _Z11check_indexPKxii 1 128 ptr:0x7f0000100000 i32:100 i32:100
fault 710 CUDA_ERROR_ASSERT cuLaunchKernel 0 at_launch=1
EOT
check "mktrace (assert)" $MKTRACE a.bin < assert.txt
check "shrink" $GPUREDUCE shrink -j 2 --quiet -o a/repro.cu a.bin
check "report" env GPUREDUCE_SANITIZER=$TMP/asan.sh $GPUREDUCE report --runs=1 a
check_grep "the diagnosis quotes the assertion the kernel printed" "In the kernel's terms: device-side assert (the kernel printed: .*Assertion .* failed.)" a/report.md
check_grep "  ...and the repro's run shows it" "Assertion .* failed" a/report.md

# bad input
check_exit "a folder without repro.cu: exit 3" 3 $GPUREDUCE report x/nothing
mkdir -p empty
check_exit "a folder without repro.cu: exit 3" 3 $GPUREDUCE report empty
check_grep "  ...says what to do" "no repro.cu here; run .gpureduce shrink" "$TMP/.out"
check_exit "two folders: usage" 2 $GPUREDUCE report r p
finish
