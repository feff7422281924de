#!/bin/sh
# t6070-build-no-shell.sh - repro builds never go through a shell: paths
# with quotes, $ and spaces reach the compiler as they are (GPUREDUCE_NVCC
# is split into words, then -o OUT SRC -lcuda), and nvcc, which runs its
# own steps through a shell, only ever sees plain names; a repro.cu that
# does not build is a failure (exit 1), never "not built" with exit 0.
. tests/cli/test-lib.sh

DBL=$BUILD/double
export GPUREDUCE_LIBCUDA=$DBL/libcuda.so.1
CC_DBL="cc -x c -w -I${CUDA:-/usr/local/cuda}/include -L$DBL -Wl,-rpath,$DBL"
export GPUREDUCE_NVCC="$CC_DBL"
unset GPUREDUCE_SANITIZER
PATH=/usr/bin:/bin; export PATH
cd "$TMP" || exit 1
oob_trace_text > oob.txt
check "mktrace q'uote.bin" $MKTRACE "q'uote.bin" < oob.txt
check "shrink \"q'uote.bin\" -o \"o'q/\"" $GPUREDUCE shrink -j 2 --quiet "q'uote.bin" -o "o'q/"
check_grep "  ...repro.cu was built and faulted" "repro.cu faulted 5/5" "$TMP/.out"
mkdir 'd$x y'
cp "o'q/repro.cu" 'd$x y/repro.cu'
check "verify 'd\$x y/repro.cu' (GPUREDUCE_NVCC): reproduced" $GPUREDUCE verify 'd$x y/repro.cu'
check_grep "  ...5/5 faulted" "5/5 runs faulted" "$TMP/.out"

# nvcc itself (found in PATH): a stand-in that, like nvcc, hands its
# arguments to a shell, and records them
mkdir bin
cat > bin/nvcc <<EOT
#!/bin/sh
printf '%s\n' "\$@" > "$TMP/nvcc-args"
sh -c "$CC_DBL -o \$2 \$3 -lcuda"
EOT
chmod +x bin/nvcc
check "verify with nvcc from PATH: reproduced" env -u GPUREDUCE_NVCC PATH="$TMP/bin:/usr/bin:/bin" $GPUREDUCE verify 'd$x y/repro.cu'
check_grep "  ...5/5 faulted" "5/5 runs faulted" "$TMP/.out"
if grep -q '[$ ]' nvcc-args; then fail "  ...nvcc saw a path a shell misreads: $(tr '\n' ' ' < nvcc-args)"
else ok "  ...nvcc saw only plain names"; fi

# a repro.cu that does not build is not a pass
check_exit "shrink with a compiler that fails: exit 1" 1 env GPUREDUCE_NVCC=/bin/false \
	$GPUREDUCE shrink -j 2 --quiet "q'uote.bin" -o fails/
check_grep "  ...says the repro does not build" "repro.cu does not build" "$TMP/.out"
check_grep "  ...repro.yaml too" "repro_cu: does not build" fails/repro.yaml
check_exit "shrink with GPUREDUCE_NVCC naming no program: exit 1" 1 env GPUREDUCE_NVCC=/nonexistent/cc \
	$GPUREDUCE shrink -j 2 --quiet "q'uote.bin" -o none/
check_grep "  ...says it could not run it" "GPUREDUCE_NVCC (/nonexistent/cc) was not found" "$TMP/.out"
finish
