#!/bin/sh
# t1002-capture-python.sh - Python attribution of launches (capture/python.c)
# on the CPU: a helper built from the same source as the capture library
# runs the frame reader from inside real interpreters through ctypes, for
# every CPython 3.9+ found here (pyenv's, Debian's, PATH's).  ctypes.CDLL
# releases the GIL around the call, as PyTorch and Triton do before they
# launch: the frames must still come back.  Every call checks itself
# against Python's own view of its stack (sys._getframe), from the main
# thread, a threading.Thread, eight threads at once, through generators and
# C->Python re-entry (map), in each walk mode (auto, table, search, api).
. tests/cli/test-lib.sh

CC=${CC:-cc}
SRC="tests/cli/helpers/capture-pyframes.c capture/python.c capture/hostmem.c common/strbuf.c common/util.c"
check "build the helper as a shared object" $CC -std=gnu11 -O2 -D_GNU_SOURCE -fPIC -shared -fvisibility=hidden \
	-o "$TMP/pyframes.so" $SRC -ldl -lpthread
check "build the helper as a C program" $CC -std=gnu11 -O2 -D_GNU_SOURCE -DPYFRAMES_MAIN \
	-o "$TMP/pyframes" $SRC -ldl -lpthread
check "plain C program: runs" "$TMP/pyframes"
cp "$TMP/.out" "$TMP/c.out"
n=$(grep -c '^none 0$' "$TMP/c.out")
[ "$n" = 2 ] && ok "  ...no Python in the process: none (main thread and a C thread)" ||
	fail "  ...no Python: none twice (got $n)"
check_grep "  ...no layout" "^layout none\$" "$TMP/c.out"

cat >"$TMP/walk.py" <<'EOS'
import ctypes, sys, threading, random
lib = sys.argv[1]
C, P = ctypes.CDLL(lib), ctypes.PyDLL(lib)   # CDLL releases the GIL, PyDLL keeps it
C.pyframes_bench.restype = ctypes.c_double
def truth(f, line, mx):   # Python's view: f's line has moved on since, use line
    out = []
    while f is not None and len(out) < mx:
        c = f.f_code
        out.append("%s:%d:%s" % (c.co_filename, line or f.f_lineno, getattr(c, "co_qualname", c.co_name)))
        f, line = f.f_back, None
    return out
def call(kind, mx=8):
    L, buf = (P if kind == "py" else C), ctypes.create_string_buffer(16384)
    r = (L.pyframes_dump(buf, len(buf), mx), sys._getframe().f_lineno)   # the same line
    got = buf.value.decode().splitlines()
    same = got[1:] == truth(sys._getframe(), r[1], mx)
    tag = "" if not got[0].startswith("frames") else " same" if same else " DIFFERENT"
    return "%s%s\n%s" % (got[0], tag, "".join(l + "\n" for l in got[1:]))
def layout():
    buf = ctypes.create_string_buffer(256)
    C.pyframes_layout(buf, len(buf))
    return buf.value.decode()
class Model:
    def forward(self, kind):
        return launch_site(kind)
def launch_site(kind):
    return call(kind)
def deep(n):
    return call("c", 3) if n == 0 else deep(n - 1)
def gen():
    yield call("c")
print("L0", layout())
print("A", Model().forward("c"), end="")
print("B", Model().forward("py"), end="")
print("L1", layout())
print("C", Model().forward("c"), end="")
print("D", deep(10), end="")
print("F", call("c", 0), end="")
print("G", list(map(lambda x: call("c"), [1]))[0], end="")
print("H", next(gen()), end="")
try:
    raise KeyError("pending")
except KeyError:
    call("py"); call("c")
    print("E exception intact:", type(sys.exc_info()[1]).__name__)
res = []
t = threading.Thread(target=lambda: res.append(call("c")))
t.start(); t.join()
print("T", res[0], end="")
buf = ctypes.create_string_buffer(4096)
C.pyframes_cthread(buf, len(buf), 8)
print("X", buf.value.decode(), end="")
P.pyframes_cthread(buf, len(buf), 8)
print("Y", buf.value.decode(), end="")
bad, calls = [], [0]
def rec(n, kind):
    if n == 0:
        return call(kind)
    return next(g(n, kind)) if n % 3 == 0 else rec(n - 1, kind)
def g(n, kind):
    yield rec(n - 1, kind)
def stress(seed):
    r = random.Random(seed)
    for i in range(1500):
        out = rec(r.randrange(0, 20), "c" if i % 4 else "py")
        calls[0] += 1
        if " same" not in out.split("\n")[0]:
            bad.append(out)
ts = [threading.Thread(target=stress, args=(s,)) for s in range(8)]
[x.start() for x in ts]; [x.join() for x in ts]
print("S %d calls, %d different" % (calls[0], len(bad)))
print("".join(bad[:2]), end="")
def nest(n):
    return C.pyframes_bench(100000, 8) if n == 0 else nest(n - 1)
print("bench %.0f" % nest(10))
EOS

# CPython interpreters here, one per real executable.
: >"$TMP/pys"
for c in python3 python3.9 python3.10 python3.11 python3.12 python3.13 python3.14 \
	 /usr/bin/python3 /usr/bin/python3.* "$HOME"/.pyenv/versions/*/bin/python3; do
	p=$(command -v "$c" 2>/dev/null) || continue
	id=$("$p" -c 'import sys, os; v = sys.version_info; print("%d.%d %s" % (v[0], v[1], os.path.realpath(sys.executable)))' 2>/dev/null) || continue
	grep -q " ${id#* }\$" "$TMP/pys" || echo "$id" >>"$TMP/pys"
done
if [ ! -s "$TMP/pys" ]; then
	echo "skip: no python3"
	finish
fi

# The helper under ASan+UBSan, where the compiler has them (LD_PRELOADed:
# the interpreter itself is not built with them).
san=""
asan=$($CC -print-file-name=libasan.so 2>/dev/null)
ubsan=$($CC -print-file-name=libubsan.so 2>/dev/null)
if [ -f "$asan" ] && [ -f "$ubsan" ] &&
   $CC -std=gnu11 -O1 -g -D_GNU_SOURCE -fPIC -shared -fvisibility=hidden -fsanitize=address,undefined \
	-fno-sanitize-recover=undefined -o "$TMP/pyframes-san.so" $SRC -ldl -lpthread 2>/dev/null; then
	san="$asan:$ubsan"
else
	echo "skip: no ASan/UBSan runtime for $CC"
fi

# The line of walk.py that holds text ($1, a BRE)
ln() {
	grep -n -e "$1" "$TMP/walk.py" | head -n 1 | cut -d: -f1
}

ran=""
while read -r ver exe; do
	minor=${ver#3.}
	case $ver in 3.*) ;; *) continue ;; esac
	if [ "$minor" -lt 9 ]; then
		# too old to read: whatever it says, it must not crash
		check "$ver ($exe): too old, no crash" "$exe" -c "import ctypes; [L('$TMP/pyframes.so').pyframes_dump(ctypes.create_string_buffer(99), 99, 8) for L in (ctypes.CDLL, ctypes.PyDLL)]"
		continue
	fi
	ran="$ran $ver"
	# The searches try candidate pointers: also under AddressSanitizer.
	if [ -n "$san" ]; then
		o="$TMP/san-$ver.out"
		check "$ver search under ASan+UBSan: runs" env LD_PRELOAD="$san" ASAN_OPTIONS=detect_leaks=0 \
			GPUREDUCE_PY_WALK=search "$exe" "$TMP/walk.py" "$TMP/pyframes-san.so"
		cp "$TMP/.out" "$o"
		check_grep "$ver search under ASan+UBSan: 8 threads, all as Python sees them" "^S 12000 calls, 0 different\$" "$o"
	fi
	for mode in auto table search api; do
		o="$TMP/walk-$ver-$mode.out"
		check "$ver $mode ($exe): runs" env GPUREDUCE_PY_WALK=$mode "$exe" "$TMP/walk.py" "$TMP/pyframes.so"
		cp "$TMP/.out" "$o"
		W=$TMP/walk.py
		# co_qualname exists from 3.11: then the method is Model.forward
		fwd='\(Model\.\)\?forward'
		[ "$minor" -ge 11 ] && fwd='Model\.forward'
		case $mode in
		api)
			check_grep "$ver $mode: GIL released: no-gil" "^A no-gil 0\$" "$o"
			check_grep "$ver $mode: layout api" "^L1 api\$" "$o" ;;
		search)
			check_grep "$ver $mode: nothing read before calibration" "^A no-gil 0\$" "$o"
			check_grep "$ver $mode: layout found by search" "^L1 searched 3\.$minor " "$o" ;;
		*)
			check_grep "$ver $mode: GIL released, built-in layout: frames" "^A frames 4 same\$" "$o"
			[ $mode = auto ] && st=verified || st=table
			check_grep "$ver $mode: layout $st" "^L1 $st 3\.$minor " "$o" ;;
		esac
		check_grep "$ver $mode: GIL held: frames as Python sees them" "^B frames 4 same\$" "$o"
		sed -n '/^B /,/^L1 /p' "$o" >"$TMP/b.out"
		check_grep "$ver $mode:   ...innermost first, file and line" "^$W:$(ln "# the same line"):call\$" "$TMP/b.out"
		check_grep "$ver $mode:   ...the launching function" "^$W:$(ln "    return call(kind)"):launch_site\$" "$TMP/b.out"
		check_grep "$ver $mode:   ...the method" "^$W:$(ln "return launch_site(kind)"):$fwd\$" "$TMP/b.out"
		check_grep "$ver $mode:   ...the module" "^$W:$(ln '^print("B"'):<module>\$" "$TMP/b.out"
		if [ $mode = api ]; then
			check_grep "$ver $mode: GIL released again: no-gil" "^C no-gil 0\$" "$o"
			check_grep "$ver $mode: a C thread: no-gil" "^X no-gil 0\$" "$o"
			continue
		fi
		check_grep "$ver $mode: GIL released after calibration: frames" "^C frames 4 same\$" "$o"
		sed -n '/^C /,/^D /p' "$o" >"$TMP/c.out"
		check_grep "$ver $mode:   ...innermost first, file and line" "^$W:$(ln "# the same line"):call\$" "$TMP/c.out"
		check_grep "$ver $mode:   ...the launching function" "^$W:$(ln "    return call(kind)"):launch_site\$" "$TMP/c.out"
		check_grep "$ver $mode:   ...the method" "^$W:$(ln "return launch_site(kind)"):$fwd\$" "$TMP/c.out"
		check_grep "$ver $mode:   ...the module" "^$W:$(ln '^print("C"'):<module>\$" "$TMP/c.out"
		check_grep "$ver $mode: at most N frames" "^D frames 3 same\$" "$o"
		check_grep "$ver $mode: N = 0: state only" "^F frames 0 same\$" "$o"
		check_grep "$ver $mode: C->Python re-entry (map)" "^G frames 3 same\$" "$o"
		check_grep "$ver $mode:   ...through the C frame" "^$W:$(ln '^print("G"'):<lambda>\$" "$o"
		check_grep "$ver $mode: a generator" "^H frames 3 same\$" "$o"
		check_grep "$ver $mode:   ...its frame" "^$W:$(ln "yield call"):gen\$" "$o"
		check_grep "$ver $mode: a handled exception is left alone" "^E exception intact: KeyError\$" "$o"
		check_grep "$ver $mode: threading.Thread: frames" "^T frames [1-8] same\$" "$o"
		sed -n '/^T /,/^X /p' "$o" >"$TMP/t.out"
		check_grep "$ver $mode:   ...of its own stack" "^$W:$(ln "threading.Thread(target=lambda"):<lambda>\$" "$TMP/t.out"
		if grep -q '<module>' "$TMP/t.out"; then fail "$ver $mode:   ...not the main thread's"; else ok "$ver $mode:   ...not the main thread's"; fi
		check_grep "$ver $mode: a C thread without Python: no-gil" "^X no-gil 0\$" "$o"
		check_grep "$ver $mode: a C thread, GIL held elsewhere: no-gil" "^Y no-gil 0\$" "$o"
		check_grep "$ver $mode: 8 threads, random stacks: all as Python sees them" "^S 12000 calls, 0 different\$" "$o"
		ns=$(sed -n 's/^bench \([0-9]*\)$/\1/p' "$o")
		echo "info: $ver $mode: $ns ns per cap_py_frames (8 frames, GIL released)"
		[ -n "$ns" ] && [ "$ns" -lt 20000 ] && ok "$ver $mode: under 20 us a call" || fail "$ver $mode: under 20 us a call ($ns ns)"
	done
done <"$TMP/pys"
echo "info: CPython versions read:${ran:- none}"
finish
