#!/bin/sh
# t1002-capture-python.sh - Python attribution of launches (capture/python.c)
# on the CPU: a helper built from the same source as the capture library
# runs the frame walker from inside a real interpreter through ctypes.
# PyDLL keeps the GIL (frames expected), CDLL releases it (no-gil, as on
# autograd's backward thread), a plain C program has no Python (none).
. tests/cli/test-lib.sh

CC=${CC:-cc}
SRC="tests/cli/helpers/capture-pyframes.c capture/python.c common/strbuf.c common/util.c"
check "build the helper as a shared object" $CC -std=gnu11 -D_GNU_SOURCE -fPIC -shared -fvisibility=hidden \
	-o "$TMP/pyframes.so" $SRC -ldl -lpthread
check "build the helper as a C program" $CC -std=gnu11 -D_GNU_SOURCE -DPYFRAMES_MAIN \
	-o "$TMP/pyframes" $SRC -ldl -lpthread
check "plain C program: runs" "$TMP/pyframes"
check_grep "  ...no Python in the process" "^none 0\$" "$TMP/.out"

PY=$(command -v python3 2>/dev/null)
if [ -z "$PY" ]; then
	echo "skip: no python3"
	finish
fi
cat >"$TMP/walk.py" <<'EOS'
import ctypes, sys, threading
lib = sys.argv[1]
def call(kind, mx=8):
    L = (ctypes.PyDLL if kind == "py" else ctypes.CDLL)(lib)
    buf = ctypes.create_string_buffer(16384)
    L.pyframes_dump(buf, len(buf), mx)
    return buf.value.decode()
class Model:
    def forward(self):
        return launch_site()
def launch_site():
    return call("py")
def deep(n):
    return call("py", 3) if n == 0 else deep(n - 1)
print("A", Model().forward(), end="")
print("B", call("c"), end="")
print("C", deep(10), end="")
try:
    raise KeyError("pending")
except KeyError:
    call("py")
    print("D exception intact:", type(sys.exc_info()[1]).__name__)
res = []
t = threading.Thread(target=lambda: res.append(call("py")))
t.start(); t.join()
print("E", res[0], end="")
print("F", call("py", 0), end="")
EOS
check "python3 walks its own stack through the helper" "$PY" "$TMP/walk.py" "$TMP/pyframes.so"
cp "$TMP/.out" "$TMP/walk.out"
check_grep "GIL held: frames" "^A frames 4\$" "$TMP/walk.out"
check_grep "  ...innermost first, file and line" "^$TMP/walk.py:6:call\$" "$TMP/walk.out"
check_grep "  ...the launching function" "^$TMP/walk.py:12:launch_site\$" "$TMP/walk.out"
# co_qualname exists from 3.11: then the method is Model.forward
check_grep "  ...the method" "^$TMP/walk.py:10:\(Model\.\)\?forward\$" "$TMP/walk.out"
check_grep "  ...the module" "^$TMP/walk.py:15:<module>\$" "$TMP/walk.out"
check_grep "GIL released (CDLL): no-gil" "^B no-gil 0\$" "$TMP/walk.out"
check_grep "at most N frames" "^C frames 3\$" "$TMP/walk.out"
check_grep "a handled exception is left alone" "^D exception intact: KeyError\$" "$TMP/walk.out"
check_grep "another Python thread holding the GIL: frames" "^E frames [1-8]\$" "$TMP/walk.out"
sed -n '/^E /,/^F /p' "$TMP/walk.out" >"$TMP/thread.out"
check_grep "  ...of its own stack" "^$TMP/walk.py:24:<lambda>\$" "$TMP/thread.out"
if grep -q '<module>' "$TMP/thread.out"; then fail "  ...not the main thread's"; else ok "  ...not the main thread's"; fi
check_grep "N = 0: state only" "^F frames 0\$" "$TMP/walk.out"
finish
