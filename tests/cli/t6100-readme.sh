#!/bin/sh
# t6100-readme.sh - the README tells the truth: every command it shows (in
# code blocks, and `gpureduce ...` in the text) runs as written, on the
# driver double (`python` and `nvcc` are stand-ins that run a faulting
# program on it and build with cc against it), with the outcome it
# promises; `make install`/`make uninstall` with a PREFIX; and the text
# names no machine-specific path, issue number, test id, commit or
# internal word.  `make test` and `make demo` themselves are not run here
# (this is make test; t6080 runs demo without a driver).
. tests/cli/test-lib.sh

README=$SRCDIR/README.md
LIB=$BUILD/libgpureduce-capture.so
CUDA=${CUDA:-/usr/local/cuda}
DBL=$BUILD/double
if [ ! -f "$LIB" ]; then
	echo "skip: $LIB not built (no CUPTI headers)"
	finish
fi
CC=${CC:-cc}
CF="-std=gnu11 -D_GNU_SOURCE -Wall -Wextra -Wno-unused-parameter -I$CUDA/include"
H=$SRCDIR/tests/cli/helpers
mkdir -p "$TMP/fake" "$TMP/bin" "$TMP/home" "$TMP/work"
check "build the fake CUPTI" $CC $CF -DFAKE_CUPTI_ONLY -fPIC -shared -fvisibility=hidden \
	-o "$TMP/fake/libcupti.so.13" $H/capture-fakecuda.c
check "build a faulting program on the double" $CC $CF -o "$TMP/prog" $H/ckpt-prog.c -L$DBL -Wl,-rpath,$DBL -lcuda -ldl
CC_DBL="cc -x c -w -I$CUDA/include -L$DBL -Wl,-rpath,$DBL"
cat > "$TMP/bin/python" <<EOT
#!/bin/sh
# stand-in: "python train.py" is a program that faults on the double
exec "$TMP/prog" "$DBL/kernels.cubin" 200
EOT
cat > "$TMP/bin/nvcc" <<EOT
#!/bin/sh
# stand-in nvcc: builds against the driver double
exec $CC_DBL "\$@"
EOT
chmod +x "$TMP/bin/python" "$TMP/bin/nvcc"
LD_LIBRARY_PATH="$TMP/fake:$DBL${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
GPUREDUCE_CAPTURE_LIB=$LIB
GPUREDUCE_LIBCUDA=$DBL/libcuda.so.1
GPUREDUCE_NVCC="$CC_DBL"
PATH="$TMP/bin:$BUILD:/usr/bin:/bin"
export LD_LIBRARY_PATH GPUREDUCE_CAPTURE_LIB GPUREDUCE_LIBCUDA GPUREDUCE_NVCC PATH
unset CUDA_INJECTION64_PATH GPUREDUCE_SANITIZER

# the commands: code-block lines (comments dropped), then `gpureduce ...`
# in the text; placeholders (CAPS, [, |, ...) and make test/demo left out
awk '/^```/ { inb = !inb; next } inb' "$README" | sed 's/[[:space:]]\{2,\}#.*$//' |
	grep -v '^make test\|^make demo\|^$' > "$TMP/cmds.txt"
grep -o '`gpureduce [^`]*`' "$README" | tr -d '`' | grep -v '[A-Z]\{3,\}\|\[\||\|\.\.\.' >> "$TMP/cmds.txt"
n=$(wc -l < "$TMP/cmds.txt")
[ "$n" -ge 12 ] && ok "found $n commands in the README" || fail "found only $n commands in the README"
cd "$TMP/work" || exit 1
export HOME="$TMP/home"
while IFS= read -r c; do
	case $c in
	"make install PREFIX=\$HOME/"*|"make uninstall PREFIX=\$HOME/"*)
		# only ever into this test's own $HOME
		sh -c "make -s -C '$SRCDIR' BUILD='$BUILD' ${c#make }" >out.txt 2>&1; rc=$?; want=0 ;;
	"make "*)
		echo "not run: it would write outside the test's folders" >out.txt; rc=not-run; want=0 ;;
	*"PREFIX="*|*"sudo "*|*" /opt/"*|*" /usr/"*)
		echo "not run: it would write outside the test's folders" >out.txt; rc=not-run; want=0 ;;
	"gpureduce capture"*) sh -c "$c" >out.txt 2>&1; rc=$?; want=program ;;
	"nvcc "*) sh -c "$c" >out.txt 2>&1; rc=$?; want=1 ;;
	"gpureduce replay"*) sh -c "$c" >out.txt 2>&1; rc=$?; want=1 ;;
	"gpureduce diagnose"*) sh -c "$c" >out.txt 2>&1; rc=$?; want=4 ;;   # no compute-sanitizer here
	*) sh -c "$c" >out.txt 2>&1; rc=$?; want=0 ;;
	esac
	if [ "$want" = program ]; then
		# the program's own status passes through; gpureduce's are 2, 4, 5, 127
		case $rc in 2|4|5|127) fail "README: $c (exit $rc)"; sed 's/^/    | /' out.txt ;;
		*) ok "README: $c (the program's exit $rc)" ;; esac
	elif [ "$rc" = "$want" ]; then
		ok "README: $c (exit $rc)"
	else
		fail "README: $c (exit $rc, want $want)"
		tail -n 8 out.txt | sed 's/^/    | /'
	fi
	case $c in
	"make install"*)
		check "  ...the installed gpureduce runs" "$HOME/.local/bin/gpureduce" --version
		check_grep "  ...and names the trace format" "trace format [0-9]*\." "$TMP/.out"
		check "  ...with its capture library beside it" test -f "$HOME/.local/lib/gpureduce/libgpureduce-capture.so" ;;
	"make uninstall"*)
		check_fail "  ...removes the binary" test -e "$HOME/.local/bin/gpureduce"
		check_fail "  ...and the library folder" test -e "$HOME/.local/lib/gpureduce" ;;
	esac
done < "$TMP/cmds.txt"
check "the repro folder was made" test -f repro/repro.cu

# --- words a user should not meet ----------------------------------------------
bad=$(grep -nE '/work/|/home/[a-z]|/tmp/gpureduce|#[0-9]{2,}|[Ii]ssue [0-9]|\bt[0-9]{4}\b|\b[0-9a-f]{7,40}\b|seed article|build machine|\bsession\b|GPU-FACTS' "$README" | head -5)
[ -z "$bad" ] && ok "README: no machine path, issue number, test id, commit or internal word" ||
	fail "README: $bad"
for f in LICENSE CHANGELOG.md docs/RESULTS.md docs/ARCHITECTURE.md; do
	check "$f exists" test -s "$SRCDIR/$f"
done
check_grep "LICENSE is MIT" "^MIT License" "$SRCDIR/LICENSE"
finish
