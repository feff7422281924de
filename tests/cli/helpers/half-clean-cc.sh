#!/bin/sh
# half-clean-cc.sh -o OUT SRC -lcuda - a stand-in for nvcc
# (GPUREDUCE_NVCC="sh .../half-clean-cc.sh") that builds repro.cu with cc
# against the CPU driver double ($HALF_DBL).  When SRC has no loop of tries
# (a single-try repro.cu), OUT is a script that runs clean every other run
# (a counter in the file $HALF_CTR, under flock) and the real program
# otherwise (with HALF_ALL=1: clean every run); a race's repro.cu
# (repro_tries) is built as it is.  For t5122: a fault replay finds steady
# whose single-try repro.cu misses.
out=$2 src=$3
cc -x c -w -I"${CUDA:-/usr/local/cuda}/include" -L"$HALF_DBL" -Wl,-rpath,"$HALF_DBL" \
	-o "$out.real" "$src" -lcuda || exit 1
if grep -q "repro_tries(" "$src"; then
	mv "$out.real" "$out"
	exit 0
fi
{
	echo '#!/bin/sh'
	echo "n=\$(flock '$HALF_CTR.lock' sh -c 'n=\$(cat \"$HALF_CTR\"); echo \$((n + 1)) >\"$HALF_CTR\"; echo \$n')"
	echo "if [ '${HALF_ALL:-0}' = 1 ] || [ \$((n % 2)) = 1 ]; then echo 'repro: ran clean: the fault did not reproduce'; exit 0; fi"
	echo "exec '$out.real'"
} >"$out"
chmod +x "$out"
