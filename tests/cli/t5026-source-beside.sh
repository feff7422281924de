#!/bin/sh
# t5026-source-beside.sh - a kernel built by plain nvcc (no -lineinfo, no
# SOURCE record, no file:line in its fault) gets its source from the one
# .cu/.cuh file beside the captured program that defines it
# (emit/emit-source.c, find_beside): in repro.cu's header and report.md,
# the window at the kernel's definition with its line said.  Among several
# files that define it, the one named like the program wins; with two and
# neither named so, none is shown (rather than a namesake); a file that
# only calls it, or a header that only declares it, does not count;
# GPUREDUCE_SOURCE=0 turns the search off.
. tests/cli/test-lib.sh

on_double nvcc no-sanitizer plain-path

mkdir -p proj/build proj/src
echo "not a program" >proj/build/app
# 200 lines before the kernel: the window must move to it
{
	echo "#include <cstdio>"
	i=0
	while [ $i -lt 200 ]; do echo "// filler line $i"; i=$((i + 1)); done
	cat <<'EOS'
__global__ void gather(float *__restrict__ out,   // where it goes
		       const float * src /* rows, (n, 4) */, const long long idx[],
		       int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) out[i] = src[idx[i]];
}
EOS
} >proj/src/app.cu
# a namesake elsewhere beside the program, and a file that only calls it
cat >proj/other.cu <<'EOS'
__global__ void gather(float *out, const float *src, const long long *idx, int n) { }
EOS
cat >proj/src/host.cu <<'EOS'
void run(float *o, const float *s, const long long *i, int n) { gather<<<4, 256>>>(o, s, i, n); }
EOS

# shrink_in OUT DIR PROG: the trace of ./PROG run in DIR (a stand-in file),
# shrunk into OUT/repro.cu
shrink_in() {
	echo x >"$2/$3"
	gather_trace_text "$TMP/$2" "./$3" >"$1.txt"
	check "mktrace ($3 in $2/)" $MKTRACE "$1.bin" <"$1.txt"
	check "shrink" $GPUREDUCE shrink -j 2 --quiet -o "$1/repro.cu" "$1.bin"
}

gather_trace_text "$TMP/proj" ./build/app >app.txt
check "mktrace (./build/app run in proj/)" $MKTRACE a.bin <app.txt
check "shrink" $GPUREDUCE shrink -j 2 --quiet -o a/repro.cu a.bin
check_grep "repro.cu: the source beside the program" \
	"Kernel source: CUDA source beside the program (the file there that defines the kernel)" a/repro.cu
check_grep "  ...the one named like the program, not the namesake" "From:          $TMP/proj/src/app.cu" a/repro.cu
check_grep "  ...where the kernel is" "Kernel at:     line 202 (the faulting line is not known: build with -lineinfo for it)" a/repro.cu
check_grep "  ...the window at it" "^[[:space:]]*\*  *202 | __global__ void gather(float \*__restrict__ out" a/repro.cu
check_grep "  ...the lines above it said" "^[[:space:]]*\*   \.\.\. (198 lines above)" a/repro.cu
check "report" $GPUREDUCE report --runs=0 --no-sanitizer a
check_grep "  ...report.md says where it came from" \
	"Origin: CUDA source beside the program (the file there that defines the kernel), from .$TMP/proj/src/app.cu." a/report.md
check_grep "  ...and shows the kernel" "202 | __global__ void gather" a/report.md

# run from build/ as `app`: the folder of argv[0] and its parent are looked in
gather_trace_text "$TMP/proj/build" "$TMP/proj/build/app" >abs.txt
check "mktrace (absolute argv[0], cwd build/)" $MKTRACE b.bin <abs.txt
check "shrink" $GPUREDUCE shrink -j 2 --quiet -o b/repro.cu b.bin
check_grep "  ...found from the program's folder" "From:          $TMP/proj/other.cu" b/repro.cu

# two definitions, neither named like the program: none
mkdir -p two
cp proj/other.cu two/a.cu
cp proj/other.cu two/b.cu
shrink_in c two tool
check_no_grep "  ...no source shown" "Kernel source:" c/repro.cu

# its parameters named as the source names them
check_grep "  ...param 0 named" "/\* param 0: .out. (float\*), 8 bytes at offset 0 \*/" a/repro.cu
check_grep "  ...param 2 named (an array parameter)" "/\* param 2: .idx. (long long const\*), 8 bytes at offset 16 \*/" a/repro.cu
check_grep "  ...report.md lists them" "^- \*\*Parameters:\*\* .out., .src., .idx., .n.$" a/report.md

# the only definition, named otherwise: shown
rm two/b.cu
check "shrink (one definition left)" $GPUREDUCE shrink -j 2 --quiet --force -o c1/repro.cu c.bin
check_grep "  ...shown" "From:          $TMP/two/a.cu" c1/repro.cu

# a header that declares it does not count, nor a declaration before the
# definition in the same file
mkdir -p decl
echo "__global__ void gather(float *, const float *, const long long *, int);" >decl/kernels.cuh
printf '%s\n' '#include "kernels.cuh"' '__global__ void gather(float *o, const float *s, const long long *i, int n);' '' \
	'__global__ void gather(float *o, const float *s, const long long *i, int n)' '{' '}' >decl/kernels.cu
shrink_in e decl tool
check_grep "  ...the file with the definition" "From:          $TMP/decl/kernels.cu$" e/repro.cu
check_grep "  ...the definition's line" "Kernel at:     line 4 " e/repro.cu
check_grep "  ...its names" "/\* param 0: .o. (float\*), 8 bytes at offset 0 \*/" e/repro.cu

# a definition without parameter names: the source, but no names
mkdir -p unnamed
echo "__global__ void gather(float *, const float *, const long long *, int) { }" >unnamed/app.cu
shrink_in u unnamed app
check_grep "  ...its source shown" "From:          $TMP/unnamed/app.cu" u/repro.cu
check_grep "  ...its parameters by type only" "/\* param 0: float\*, 8 bytes at offset 0 \*/" u/repro.cu

# GPUREDUCE_SOURCE=0: no search
check "shrink with GPUREDUCE_SOURCE=0" env GPUREDUCE_SOURCE=0 $GPUREDUCE shrink -j 2 --quiet -o d/repro.cu a.bin
check_no_grep "  ...no source shown" "Kernel source:" d/repro.cu
finish
