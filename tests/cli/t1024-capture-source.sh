#!/bin/sh
# t1024-capture-source.sh - issue 24's facts for a bug report, captured by
# the real capture library against the fake CUPTI/driver: one ENV record
# (os, glibc, python and the versions of imported packages, no host name)
# and, for a launch made from a (fake) Triton JITFunction.run, one SOURCE
# record per kernel handle with the function's source, file, first line,
# the launch's parameter names (constexprs left out, Triton's scratch
# pointers added), constexpr values, Triton's version and the PTX; none
# with GPUREDUCE_SOURCE=0.  Also: capture keeps the program's stderr tail
# (a STDERR record) and still passes it through.
. tests/cli/test-lib.sh

. tests/cli/capture-fakes.sh
[ -f "$LIB" ] && check "build the Python-side driver" $CC $CF -DPYFRAMES_CUPTI -fPIC -shared -fvisibility=hidden \
	-o "$TMP/drive.so" $H/capture-pyframes.c -ldl
capture_fakes -
PY=$(command -v python3) || { echo "skip: no python3"; finish; }

mkdir -p site/triton/runtime
cat >site/triton/__init__.py <<'EOS'
__version__ = "3.6.0+fake"
EOS
: >site/triton/runtime/__init__.py
cat >site/triton/runtime/jit.py <<'EOS'
import inspect, textwrap
class _MD:
    name = "add_kernel"
    global_scratch_size = 0
    profile_scratch_size = 0
class _Src:
    def __init__(self, sig):
        self.signature = sig
class CompiledKernel:
    def __init__(self, drv):
        self.metadata = _MD()
        self.name = "add_kernel"
        self.src = _Src({"x_ptr": "*fp32", "n_elements": "i32", "BLOCK": "constexpr"})
        self.asm = {"ptx": "//\n// fake ptx\n.visible .entry add_kernel(\n"}
        self.drv = drv
    def run(self, result):
        self.drv.pyframes_fake_launch(result)
class JITFunction:
    def __init__(self, fn, drv):
        self.fn = fn
        self.__name__ = fn.__name__
        self.arg_names = list(inspect.signature(fn).parameters)
        self.constexprs = [2]
        src = textwrap.dedent(inspect.getsource(fn))
        self.src = src[src.index("def "):]
        self.drv = drv
    def run(self, *args, grid, result=0, **kwargs):
        bound_args = dict(zip(self.arg_names, args))
        bound_args.update(kwargs)
        kernel = CompiledKernel(self.drv)
        kernel.run(result)
EOS
# a fake torch: its version, the CUDA it was built for, its git commit
mkdir -p site/torch
printf '%s\n' '__version__ = "2.11.0+fake"' 'from . import version' >site/torch/__init__.py
printf '%s\n' 'cuda = "13.0"' 'git_version = "0123456789abcdef0123456789abcdef01234567"' >site/torch/version.py
cat >app.py <<'EOS'
import ctypes, sys
sys.path.insert(0, "site")
from triton.runtime.jit import JITFunction
drv = ctypes.CDLL(sys.argv[1])
def add_kernel(x_ptr, n_elements, BLOCK):
    offs = BLOCK + n_elements
    x_ptr[offs] = 0    # THE LINE
import torch
assert drv.pyframes_fake_init() == 0
k = JITFunction(add_kernel, drv)
k.run(1, 1000, BLOCK=128, grid=(4,))
k.run(1, 1000, BLOCK=128, grid=(4,))
sys.stderr.write("app.py:7: add_kernel: block: [0,0,0], thread: [5,0,0] Assertion `index out of bounds: 0 <= tmp9 < 1000` failed.\n")
k.run(1, 1000, BLOCK=128, grid=(4,), result=700)
EOS
check "capture a fake Triton program" "$GPUREDUCE" capture -o t.bin -- "$PY" app.py "$TMP/drive.so"
check_grep "  ...its stderr still reaches ours" "index out of bounds: 0 <= tmp9 < 1000" "$TMP/.out"
check "show" sh -c "'$GPUREDUCE' show t.bin >show.yaml"
n=$(grep -c "type: SOURCE" show.yaml)
[ "$n" = 2 ] && ok "one SOURCE and one PTX for the kernel, not one per launch" ||
	{ fail "one SOURCE and one PTX for the kernel, not one per launch ($n)"; grep -n "SOURCE" show.yaml | head; }
check_grep "  ...origin Triton, named as its kernel" "kernel: add_kernel" show.yaml
check_grep "  ...the function's file" "path: $TMP/app.py" show.yaml
check_grep "  ...parameter names, constexpr left out, scratch added" "params: x_ptr n_elements global_scratch profile_scratch" show.yaml
check_grep "  ...their types" "types: \*fp32 i32 \*i8 \*i8" show.yaml
check_grep "  ...the constexpr's value" "constexpr: BLOCK=128" show.yaml
check_grep "  ...the def's line" "line: 5" show.yaml
check_grep "  ...Triton's version" "version: 3.6.0+fake" show.yaml
check_grep "  ...the source text" "x_ptr\[offs\] = 0    # THE LINE" show.yaml
check_grep "  ...the PTX" "fake ptx" show.yaml
check_grep "ENV: the OS" "os: Linux" show.yaml
check_grep "ENV: glibc" "glibc: [0-9]" show.yaml
check_grep "ENV: python" "python: 3\." show.yaml
check_grep "ENV: an imported package's version" "triton: 3.6.0+fake" show.yaml
check_grep "ENV: torch's version" "torch: 2.11.0+fake" show.yaml
check_grep "ENV: the CUDA torch was built for" "torch_cuda: 13.0" show.yaml
check_grep "ENV: the commit torch was built from" "torch_git: 0123456789abcdef0123456789abcdef01234567" show.yaml
n=$(grep -c "$(hostname)" show.yaml)
[ "$n" = 0 ] && ok "the host name is not recorded" || fail "the host name is not recorded ($n)"
check_grep "STDERR: the assert's own words kept" "Assertion .index out of bounds: 0 <= tmp9 < 1000. failed" show.yaml
check_grep "STDERR: with the exit status" "exit_code: " show.yaml

# torch.utils.cpp_extension: a loaded object in a build folder (build.ninja)
mkdir -p ext1 ext2 srcs
cat >srcs/kern.cu <<'EOS'
__global__ void ext_oob(float *out, int n) { out[n] = 0; }   // load(sources=...)
EOS
cat >ext1/build.ninja <<EOS
rule cuda_compile
  command = nvcc -c \$in -o \$out
build kern.cuda.o: cuda_compile $TMP/srcs/kern.cu
EOS
printf 'rule cxx\n' >ext2/build.ninja
cat >ext2/cuda.cu <<'EOS'
__global__ void inline_oob(int *p) { p[1 << 30] = 1; }   // load_inline
EOS
echo 'int ext_fn(void) { return 1; }' >ext.c
check "build two extension objects" sh -c "cc -shared -fPIC -o ext1/e1.so ext.c && cc -shared -fPIC -o ext2/e2.so ext.c"
cat >extapp.py <<'EOS'
import ctypes, sys
drv = ctypes.CDLL(sys.argv[1])
assert drv.pyframes_fake_init() == 0
ctypes.CDLL("./ext1/e1.so"); ctypes.CDLL("./ext2/e2.so")
drv.pyframes_fake_launch(0)
drv.pyframes_fake_launch(0)
EOS
check "capture a program that loaded extensions" "$GPUREDUCE" capture -o e.bin -- "$PY" extapp.py "$TMP/drive.so"
check "show" sh -c "'$GPUREDUCE' show e.bin >e.yaml"
n=$(grep -c "origin: 4" e.yaml)
[ "$n" = 2 ] && ok "one SOURCE per extension source file" || { fail "one SOURCE per extension source file ($n)"; grep -n "path:" e.yaml; }
check_grep "  ...the file build.ninja compiles (load)" "path: $TMP/srcs/kern.cu" e.yaml
check_grep "  ...its text" "__global__ void ext_oob(float \*out, int n)" e.yaml
check_grep "  ...the folder's .cu (load_inline)" "path: $TMP/ext2/cuda.cu" e.yaml

check "GPUREDUCE_SOURCE=0: capture" env GPUREDUCE_SOURCE=0 "$GPUREDUCE" capture -o off.bin -- "$PY" app.py "$TMP/drive.so"
check "show" sh -c "'$GPUREDUCE' show off.bin >off.yaml"
n=$(grep -c "type: SOURCE\|type: ENV" off.yaml)
[ "$n" = 0 ] && ok "  ...no ENV or SOURCE record" || fail "  ...no ENV or SOURCE record ($n)"
finish
