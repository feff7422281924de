#!/bin/sh
# t1004-capture-python-e2e.sh - Python attribution end to end on the CPU:
# `gpureduce capture` runs a Python program that plays cuInit and launches
# through the fake CUPTI/driver of t1003 (capture-fakecuda), calling in
# through ctypes.CDLL, which releases the GIL as PyTorch and Triton do.  The
# trace must name the Python line of every launch (py=1 with frames), for
# each CPython 3.9+ here: with cuInit made holding the GIL (the layout is
# calibrated in InitializeInjection) and without (the built-in table), from
# the main thread and a threading.Thread, and on the faulting launch.
. tests/cli/test-lib.sh

. tests/cli/capture-fakes.sh
[ -f "$LIB" ] && check "build the Python-side driver" $CC $CF -DPYFRAMES_CUPTI -fPIC -shared -fvisibility=hidden \
	-o "$TMP/drive.so" $H/capture-pyframes.c -ldl
capture_fakes -
unset GPUREDUCE_PY_WALK

cat >app.py <<'EOS'
import ctypes, sys, threading
drv = ctypes.CDLL(sys.argv[1])                   # every call releases the GIL
init = ctypes.PyDLL(sys.argv[1]) if sys.argv[2] == "gil" else drv
class Model:
    def forward(self, result):
        return self.kernel(result)
    def kernel(self, result):
        drv.pyframes_fake_launch(result)         # LAUNCH
assert init.pyframes_fake_init() == 0            # cuInit
Model().forward(0)                               # MAIN
t = threading.Thread(target=lambda: Model().forward(0))   # THREAD
t.start(); t.join()
Model().forward(700)                             # FAULT
EOS
ln() {
	grep -n "# $1\$" app.py | cut -d: -f1
}
L=$(ln LAUNCH)

: >pys
for c in python3 python3.9 python3.10 python3.11 python3.12 python3.13 python3.14 \
	 /usr/bin/python3 /usr/bin/python3.* "$HOME"/.pyenv/versions/*/bin/python3; do
	p=$(command -v "$c" 2>/dev/null) || continue
	id=$("$p" -c 'import sys, os; v = sys.version_info; print("%d.%d %s" % (v[0], v[1], os.path.realpath(sys.executable)))' 2>/dev/null) || continue
	grep -q " ${id#* }\$" pys || echo "$id" >>pys
done

ran=""
while read -r ver exe; do
	case $ver in 3.9|3.[1-9][0-9]) ;; *) continue ;; esac
	ran="$ran $ver"
	fn='\(Model\.\)\?kernel'
	[ "${ver#3.}" -ge 11 ] && fn='Model\.kernel'
	for init in gil nogil; do
		t="$ver $init"
		check "$t: capture a Python program" "$GPUREDUCE" capture -o "py-$ver-$init.bin" -- "$exe" app.py "$TMP/drive.so" $init
		check_grep "$t:   ...3 launches, the last faulting" "captured 3 launches.*fault: CUDA_ERROR_ILLEGAL_ADDRESS in fill(float\*, int) at launch #2" "$TMP/.out"
		check_grep "$t:   ...the summary names the faulting launch's Python line" "at launch #2 from $TMP/app.py:$L ($fn)" "$TMP/.out"
		check "$t: dump" sh -c "./dump py-$ver-$init.bin >py.txt"
		n=$(grep -c "^LAUNCH .* py=1 frames=[3-8] .* at=$TMP/app.py:$L:$fn\$" py.txt)
		[ "$n" = 3 ] && ok "$t: every launch names its Python line, GIL released" ||
			{ fail "$t: every launch names its Python line, GIL released ($n of 3)"; grep LAUNCH py.txt | sed 's/^/    | /'; }
		check "$t: show" "$GPUREDUCE" show py-$ver-$init.bin
		cp "$TMP/.out" show.txt
		check_grep "$t:   ...the launch line" "$TMP/app.py:$L $fn\$" show.txt
		check_grep "$t:   ...its caller" "$TMP/app.py:$(ln LAUNCH | xargs -I{} expr {} - 2) \(Model\.\)\?forward\$" show.txt
		check_grep "$t:   ...the main thread's module line" "$TMP/app.py:$(ln MAIN) <module>\$" show.txt
		check_grep "$t:   ...the thread's own entry" "$TMP/app.py:$(ln THREAD) <lambda>\$" show.txt
		check_grep "$t:   ...the faulting launch's module line" "$TMP/app.py:$(ln FAULT) <module>\$" show.txt
		check "$t: show --fault" "$GPUREDUCE" show --fault py-$ver-$init.bin
		check_grep "$t:   ...the fault names the Python line" "$TMP/app.py:$L $fn\$" "$TMP/.out"
	done
	# GPUREDUCE_PY_WALK=api is the old behaviour: nothing without the GIL
	check "$ver api walk: capture" env GPUREDUCE_PY_WALK=api "$GPUREDUCE" capture -o "api-$ver.bin" -- "$exe" app.py "$TMP/drive.so" gil
	check "$ver api walk: dump" sh -c "./dump api-$ver.bin >api.txt"
	n=$(grep -c "^LAUNCH .* py=2 frames=0 " api.txt)
	[ "$n" = 3 ] && ok "$ver api walk: no-gil, no frames (what the reader fixes)" || fail "$ver api walk: no-gil, no frames ($n of 3)"
done <pys
echo "info: CPython versions captured:${ran:- none}"
finish
