#!/bin/sh
# t6090-repro-reads-alone.sh - a repro.cu reads as a standalone program to
# the maintainer who opens it: its header says what faulted and where
# main() is, the support code sits in a marked part before the captured
# data and main(), and no comment points into gpureduce's own source tree
# (file names, its docs, issue numbers).  Checked on repros of several
# kinds of trace (plain launches, a CUDA graph, packed payloads), which
# also still build and fault on the driver double.  The code that acts as
# gpureduce's own (placement, the seeded fill, the payload decoder) is in
# each repro verbatim: its source files, line for line.
. tests/cli/test-lib.sh

DBL=$BUILD/double
export GPUREDUCE_LIBCUDA=$DBL/libcuda.so.1
CC_DBL="cc -x c -w -I${CUDA:-/usr/local/cuda}/include -L$DBL -Wl,-rpath,$DBL"
export GPUREDUCE_NVCC="$CC_DBL"
unset GPUREDUCE_SANITIZER
PATH=/usr/bin:/bin; export PATH
cd "$TMP" || exit 1
hdr() {
	cat <<EOT
process 100 /work ./app
device "gpureduce CPU double"
module $DBL/kernels.cubin 1
EOT
}
{ hdr; cat <<'EOT'
alloc 0x7f0000100000 4000
alloc 0x7f0000200000 4000
h2d 0x7f0000100000 4000 seq
memset 0x7f0000200000 0 4000
launch _Z7add_onePfi 4 256 ptr:0x7f0000100000 i32:1000
launch _Z13scale_nocheckPfPKfi 8 256 ptr:0x7f0000200000 ptr:0x7f0000100000 i32:1000
fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel 1 at_launch=1
EOT
} > plain.txt
{ hdr; cat <<'EOT'
alloc 0x7f0000100000 4000
alloc 0x7f0000200000 4000
h2d 0x7f0000100000 4000 rand:3
launch _Z7add_onePfi 4 256 ptr:0x7f0000100000 i32:1000
gbegin 0x55
launch _Z7add_onePfi 4 256 ptr:0x7f0000100000 i32:1000 stream=0x55 captured=1
launch _Z13scale_nocheckPfPKfi 8 256 ptr:0x7f0000200000 ptr:0x7f0000100000 i32:1000 stream=0x55 captured=1
gend 0x55 0xabc
gexec 0xabc 0xdef
glaunch 0xdef 0x55
fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuGraphLaunch 1 at_launch=0 kernel=
EOT
} > graph.txt
# packed: the plain trace with every payload of 256 bytes or more packed,
# so the repro runs the decoder it carries
cp plain.txt packed.txt
# verbatim FILE CU: FILE's lines appear in CU, line for line, in one piece
verbatim() {
	vn=$(wc -l < "$1")
	for vs in $(grep -nxF -- "$(sed -n 2p "$1")" "$2" | cut -d: -f1); do
		sed -n "$((vs - 1)),$((vs + vn - 2))p" "$2" | cmp -s - "$1" && return 0
	done
	return 1
}
for k in plain graph packed; do
	check "$k: mktrace" $MKTRACE $k.bin < $k.txt
	pmin=65536
	[ $k = packed ] && pmin=256
	check "$k: shrink" env GPUREDUCE_PACK_MIN=$pmin $GPUREDUCE shrink -j 2 --quiet -o $k/ $k.bin
	cu=$k/repro.cu
	for f in common/cuerr.h addr/place_core.inc common/fill_core.inc; do
		verbatim "$SRCDIR/$f" $cu && ok "$k: carries $f verbatim" || fail "$k: does not carry $f verbatim"
	done
	if [ $k = packed ]; then
		verbatim "$SRCDIR/emit/pack_core.inc" $cu && ok "$k: carries emit/pack_core.inc verbatim" ||
			fail "$k: does not carry emit/pack_core.inc verbatim"
		check_grep "$k: ...and unpacks its module with it" "= unpack(module0_packed" $cu
	else
		grep -q "pk_decompress" $cu && fail "$k: carries the decoder with nothing packed" ||
			ok "$k: no decoder where nothing is packed"
	fi
	refs=$(grep -nE '[A-Za-z0-9_-]+\.(c|inc|md)\b|\b(addr|reducer|common|replay|capture|trace|src|docs)/[a-z]|GPU-FACTS|#[0-9]{2,}\b|issue [0-9]' "$cu" |
		grep -v '^[0-9]*:#include <' | head -5)
	[ -z "$refs" ] && ok "$k: no reference to gpureduce's source tree" ||
		fail "$k: references to gpureduce's source tree: $refs"
	check_grep "$k: the header says what faulted" "^ \* What faulted:   CUDA_ERROR_ILLEGAL_ADDRESS" "$cu"
	check_grep "$k: ...and where main() is" "main() is at the END of this file" "$cu"
	p1=$(grep -n "Part 1 of 3: support code" "$cu" | cut -d: -f1)
	p2=$(grep -n "Part 2 of 3: what was captured" "$cu" | cut -d: -f1)
	p3=$(grep -n "Part 3 of 3: main()" "$cu" | cut -d: -f1)
	m=$(grep -n "^int main(void)" "$cu" | cut -d: -f1)
	h=$(grep -n "^#include <cuda.h>" "$cu" | cut -d: -f1)
	if [ -n "$p1" ] && [ -n "$p2" ] && [ -n "$p3" ] && [ -n "$m" ] && [ "$p1" -lt "$h" ] &&
	   [ "$h" -lt "$p2" ] && [ "$p2" -lt "$p3" ] && [ "$p3" -lt "$m" ]; then
		ok "$k: header, part 1 (support), part 2 (data), part 3 then main(), in order"
	else
		fail "$k: parts out of order (part1 $p1, include $h, part2 $p2, part3 $p3, main $m)"
	fi
	check "$k: repro.cu builds against the double" $CC_DBL -o $k/repro $cu -lcuda
	check_exit "$k: ...and faults (exit 1)" 1 ./$k/repro
done
finish
