#!/bin/sh
# t1025-capture-nvrtc.sh - NVRTC programs as SOURCE records: `capture`
# preloads libgpureduce-nvrtc.so, which sees nvrtcCreateProgram/
# nvrtcCompileProgram both where a program links libnvrtc (the dynamic
# linker binds to the shim, as CuPy's modules) and where it dlopens it and
# dlsyms the functions (ctypes, cuda-python); after the program exits,
# capture writes one SOURCE record (origin 3) per distinct program, with
# its name and options, and removes the log.  Runs against a fake libnvrtc
# (it only counts calls: the real functions must still be called) and the
# fake CUPTI/driver of t1003.  An ASan-built program runs under the shim.
# GPUREDUCE_NO_NVRTC=1: none.
. tests/cli/test-lib.sh
unset GPUREDUCE_NO_NVRTC   # this test is about the shim

. tests/cli/capture-fakes.sh
[ -f "$LIB" ] && check "build the fake-CUDA driver" $CC $CF -DPYFRAMES_CUPTI -fPIC -shared -fvisibility=hidden \
	-o "$TMP/drive.so" $H/capture-pyframes.c -ldl
capture_fakes -
mkdir -p nv
cat >nv/fakenvrtc.c <<'EOS'
#include <stdio.h>
static int creates, compiles;
int nvrtcCreateProgram(void **p, const char *src, const char *name, int n, const char *const *h, const char *const *i)
{ static int x; *p = &x + creates; creates++; return 0; }
int nvrtcCompileProgram(void *p, int n, const char *const *o) { compiles++; return 0; }
int fake_nvrtc_counts(void) { return creates * 100 + compiles; }
EOS
check "build a fake libnvrtc" $CC -fPIC -shared -o nv/libnvrtc.so.12 nv/fakenvrtc.c
ln -s libnvrtc.so.12 nv/libnvrtc.so
cat >linked.c <<'EOS'
#include <dlfcn.h>
#include <stdio.h>
int nvrtcCreateProgram(void **, const char *, const char *, int, const char *const *, const char *const *);
int nvrtcCompileProgram(void *, int, const char *const *);
int fake_nvrtc_counts(void);
static const char src[] = "extern \"C\" __global__ void oob_kernel(float *out, int n)\n{\n\tout[n] = 1.0f;\n}\n";
int main(int argc, char **argv)
{
	void *p, *d = dlopen(argv[1], RTLD_NOW);
	int (*init)(void) = d ? (int (*)(void))dlsym(d, "pyframes_fake_init") : 0;
	void (*launch)(int) = d ? (void (*)(int))dlsym(d, "pyframes_fake_launch") : 0;
	const char *opts[] = { "--gpu-architecture=sm_90", "-lineinfo" };
	if (!init || init() != 0)
		return 9;
	for (int i = 0; i < 2; i++) {   /* the same program twice: one record */
		if (nvrtcCreateProgram(&p, src, "oob.cu", 0, 0, 0) || nvrtcCompileProgram(p, 2, opts))
			return 8;
	}
	launch(0);
	printf("counts %d\n", fake_nvrtc_counts());
	return 0;
}
EOS
check "build a program linked against libnvrtc" $CC -o linked linked.c -Lnv -lnvrtc -ldl -Wl,-rpath,$TMP/nv
check "capture it" "$GPUREDUCE" capture -o l.bin -- ./linked "$TMP/drive.so"
check_grep "  ...the real NVRTC still ran (2 creates, 2 compiles)" "counts 202" "$TMP/.out"
check "show" sh -c "'$GPUREDUCE' show l.bin >l.yaml"
n=$(grep -c "type: SOURCE" l.yaml)
[ "$n" = 1 ] && ok "one SOURCE for the program compiled twice" || fail "one SOURCE for the program compiled twice ($n)"
check_grep "  ...origin NVRTC" "origin: 3" l.yaml
check_grep "  ...its name" "path: oob.cu" l.yaml
check_grep "  ...its options" "options: --gpu-architecture=sm_90 -lineinfo" l.yaml
check_grep "  ...its source" "__global__ void oob_kernel(float \*out, int n)" l.yaml
[ -e l.bin.nvrtc ] && fail "the log is removed" || ok "the log is removed"

PY=$(command -v python3)
if [ -n "$PY" ]; then
	cat >app.py <<'EOS'
import ctypes, sys
drv = ctypes.CDLL(sys.argv[1])
nv = ctypes.CDLL(sys.argv[2])                     # dlopen + dlsym, as cuda-python
assert drv.pyframes_fake_init() == 0
p = ctypes.c_void_p()
src = b'extern "C" __global__ void py_kernel(int *x) { x[1 << 30] = 0; }\n'
assert nv.nvrtcCreateProgram(ctypes.byref(p), src, b"py.cu", 0, None, None) == 0
opts = (ctypes.c_char_p * 1)(b"-arch=sm_90")
assert nv.nvrtcCompileProgram(p, 1, opts) == 0
drv.pyframes_fake_launch(0)
print("counts", nv.fake_nvrtc_counts())
EOS
	check "capture a Python program that dlopens NVRTC" "$GPUREDUCE" capture -o p.bin -- "$PY" app.py "$TMP/drive.so" "$TMP/nv/libnvrtc.so.12"
	check_grep "  ...the real NVRTC ran" "counts 101" "$TMP/.out"
	check "show" sh -c "'$GPUREDUCE' show p.bin >p.yaml"
	check_grep "  ...the program seen through dlsym" "py_kernel(int \*x)" p.yaml
	check_grep "  ...with its options" "options: -arch=sm_90" p.yaml
fi
# an ASan-built program under the shim: its runtime finds the real malloc,
# pthread_* ... with dlsym(RTLD_NEXT) at start-up (the shim's dlsym must not
# make those relative to itself: it spun there), and checks that it comes
# first among the loaded objects (the shim's __asan_default_options turns
# that check off; no ASAN_OPTIONS here)
if $CC -fsanitize=address -o asan-probe -x c - <<'EOS' 2>/dev/null
int main(void) { return 0; }
EOS
then
	check "build the NVRTC program with ASan" $CC -fsanitize=address -o linked-asan linked.c -Lnv -lnvrtc -ldl -Wl,-rpath,$TMP/nv
	check "capture it (no ASAN_OPTIONS), within 60 s" env -u ASAN_OPTIONS timeout 60 "$GPUREDUCE" capture -o asan.bin -- ./linked-asan "$TMP/drive.so"
	check_grep "  ...it ran, the real NVRTC too" "counts 202" "$TMP/.out"
	check "show" sh -c "'$GPUREDUCE' show asan.bin >asan.yaml"
	check_grep "  ...its program recorded" "path: oob.cu" asan.yaml
else
	ok "no ASan in this compiler: the ASan program is not tried"
fi
check "GPUREDUCE_NO_NVRTC=1" env GPUREDUCE_NO_NVRTC=1 "$GPUREDUCE" capture -o off.bin -- ./linked "$TMP/drive.so"
check "show" sh -c "'$GPUREDUCE' show off.bin >off.yaml"
n=$(grep -c "origin: 3" off.yaml)
[ "$n" = 0 ] && ok "  ...no NVRTC record" || fail "  ...no NVRTC record ($n)"
finish
