#!/bin/sh
# t5090-multi-device.sh - shrink spread over 1, 2 and 8 GPUs of the driver
# double (DOUBLE_DEVICES, each ordinal its own context and address range:
# t2002) gives the same repro (issue 25).  Traces: ckpt-prog's loop
# captured for real with --checkpoint-every=50 (a checkpointed window,
# shrunk with layout placement), and t5041's graph, t5040's managed table,
# t5050's neighbour read (layout placement) and t5060's --root-cause trace.
# For each: the same repro.cu (bar its timing line), the same reduced trace
# (show, bar the header), a repro that faults, and DOUBLE_DEVICE_LOG shows
# the workers on several ordinals.  Then replay on device K, and the
# one-line errors for bad GPUREDUCE_DEVICE/GPUREDUCE_DEVICES values.
. tests/cli/test-lib.sh

LIB=$BUILD/libgpureduce-capture.so
CUDA=${CUDA:-/usr/local/cuda}
CC=${CC:-cc}
H=$SRCDIR/tests/cli/helpers
on_double nvcc no-sanitizer plain-path

# --- the traces ------------------------------------------------------------------
names="graph managed layout rootcause"
if [ -f "$LIB" ]; then
	CF="-std=gnu11 -D_GNU_SOURCE -Wall -Wextra -Wno-unused-parameter -I$CUDA/include"
	mkdir -p fake
	check "build the fake CUPTI and ckpt-prog" sh -c "$CC $CF -DFAKE_CUPTI_ONLY -fPIC -shared -fvisibility=hidden \
		-o fake/libcupti.so.13 $H/capture-fakecuda.c && $CC $CF -o prog $H/ckpt-prog.c -L$DBL -Wl,-rpath,$DBL -lcuda -ldl"
	check_exit "capture ckpt-prog, --checkpoint-every=50, 200 steps" 3 env LD_LIBRARY_PATH="$TMP/fake:$DBL" \
		GPUREDUCE_CAPTURE_LIB=$LIB GPUREDUCE_CKPT_COST_RATIO=0 GPUREDUCE_CKPT_ASYNC=0 \
		"$GPUREDUCE" capture --checkpoint-every=50 -o ckpt.bin -- ./prog "$DBL/kernels.cubin" 200
	check_grep "  ...a window from a checkpoint" "from checkpoint 8 at launch #400" "$TMP/.out"
	names="ckpt $names"
else
	echo "skip: $LIB not built (no CUPTI headers): no captured trace"
fi
hdr() { printf 'process 100 /work ./app\ndevice "gpureduce CPU double"\nmodule %s 1\n' "$DBL/kernels.cubin"; }
{ hdr; cat <<'EOT'
alloc 0x7f0000100000 4000
alloc 0x7f0000200000 4000
h2d 0x7f0000100000 4000 seq
gbegin 0x9b0
launch _Z7add_onePfi 4 256 ptr:0x7f0000100000 i32:1000 stream=0x9b0 captured=1
launch _Z13scale_nocheckPfPKfi 4 250 ptr:0x7f0000200000 ptr:0x7f0000100000 i32:1000 stream=0x9b0 captured=1
gend 0x9b0 0x9b0
gexec 0x9b0 0xe9f
glaunch 0xe9f
glaunch 0xe9f
gbegin 0xff00000000000001
launch _Z7add_onePfi 4 256 ptr:0x7f0000100000 i32:1000 stream=0xff00000000000001 captured=1
launch _Z13scale_nocheckPfPKfi 64 256 ptr:0x7f0000200000 ptr:0x7f0000100000 i32:1000 stream=0xff00000000000001 captured=1
gend 0xff00000000000001 0xff00000000000001
gexec 0xff00000000000001 0xe9f
glaunch 0xe9f
fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuGraphLaunch 5 at_launch=0 kernel=
EOT
} >graph.txt
{ hdr; cat <<'EOT'
alloc 0x7f0000100000 4000
alloc 0x7f0000200000 4000
alloc 0x7e0000000000 262144 managed
h2d 0x7f0000100000 4000 seq
h2d 0x7e0000000000 65536 u64:0,1,2,3,4,5,6,7 0x7e0000000000 hostmem
h2d 0x7e0000010000 65536 0 0x7e0000010000 hostmem
launch _Z6gatherPfPKfPKxi 1 8 ptr:0x7f0000200000 ptr:0x7f0000100000 ptr:0x7e0000000000 i32:8
launch _Z7add_onePfi 4 256 ptr:0x7f0000200000 i32:1000
h2d 0x7e0000000000 65536 u64:1,2,3,0x1000000000,5,6,7,0 0x7e0000000000 hostmem
launch _Z6gatherPfPKfPKxi 1 8 ptr:0x7f0000200000 ptr:0x7f0000100000 ptr:0x7e0000000000 i32:8
fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel 2 at_launch=1
EOT
} >managed.txt
{ hdr; cat <<'EOT'
alloc 0x7f0000000000 4096
alloc 0x7f0000200000 4096
alloc 0x7f0000400000 8
alloc 0x7f0000400100 8
alloc 0x7f0000400200 8
h2d 0x7f0000000000 4096 seq
h2d 0x7f0000200000 4096 seq
h2d 0x7f0000400000 8 u64:524288
h2d 0x7f0000400200 8 u64:1572864
launch _Z6gatherPfPKfPKxi 1 1 ptr:0x7f0000400100 ptr:0x7f0000000000 ptr:0x7f0000400000 i32:1
launch _Z7add_onePfi 1 1 ptr:0x7f0000400100 i32:1
launch _Z6gatherPfPKfPKxi 1 1 ptr:0x7f0000400100 ptr:0x7f0000000000 ptr:0x7f0000400200 i32:1
fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel 2 at_launch=1
EOT
} >layout.txt
{ hdr; cat <<'EOT'
alloc 0x7f0000000000 2097152
alloc 0x7f0000400000 8192
h2d 0x7f0000400000 8192 0x4e
memset 0x7f0000001000 0 4096
block 0x7f0000000000 4096 0x7f0000000000 initial at=/home/u/train.py:10:main
block 0x7f0000001000 4096 0x7f0000000000 initial at=/home/u/train.py:11:main
launch _Z7add_onePfi 4 256 ptr:0x7f0000000000 i32:1024
memset 0x7f0000002000 0 8192
block 0x7f0000002000 4096 0x7f0000000000 at=/home/u/train.py:12:main
block 0x7f0000003000 4000 0x7f0000000000 at=/home/u/train.py:13:main
launch _Z13scale_nocheckPfPKfi 5 256 ptr:0x7f0000000000 ptr:0x7f0000400000 i32:1024
launch _Z7add_onePfi 4 256 ptr:0x7f0000002000 i32:1024
launch _Z6gatherPfPKfPKxi 2 256 ptr:0x7f0000002000 ptr:0x7f0000003000 ptr:0x7f0000001000 i32:512
fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel 3 at_launch=1
EOT
} >rootcause.txt
for t in graph managed layout rootcause; do
	check "mktrace $t" $MKTRACE $t.bin <$t.txt
done

# --- shrink on 1, 2 and 8 devices: one repro -----------------------------------
# norm_cu FILE: repro.cu without its timing and date lines; norm_bin FILE:
# the reduced trace as show prints it, without its header (the file's path
# and when it was written)
norm_cu() { sed -e '/candidates tested in/d' -e '/^ \* on [0-9-]* [0-9:]* UTC/d' "$1"; }
norm_bin() { "$GPUREDUCE" show "$1" | sed -n '/^process:/,$p'; }
for t in $names; do
	opt=
	[ $t = rootcause ] && opt=--root-cause
	for n in 1 2 8; do
		mkdir -p $t-$n
		# shellcheck disable=SC2086  # opt is one word or none
		check "$t: shrink -j 4 on DOUBLE_DEVICES=$n" sh -c "cd $t-$n && DOUBLE_DEVICES=$n DOUBLE_DEVICE_LOG=$TMP/$t-$n/dev.log \
			'$GPUREDUCE' shrink -j 4 --quiet $opt -o r/repro.cu ../$t.bin"
		cp "$TMP/.out" $t-$n/shrink.log
		used=$(cut -d' ' -f1 $t-$n/dev.log 2>/dev/null | sort -u | wc -l | tr -d ' ')
		gpus=$(sed -n 's/^gpus: //p' $t-$n/r/repro.yaml)
		want=$n; [ $n -gt 2 ] && want="[3-8]"
		case $used in
		$want) ok "  ...its workers used $used device(s) (repro.yaml: gpus: ${gpus:-?})" ;;
		*) fail "  ...its workers used $used device(s), not $want" ;;
		esac
		# repro.yaml counts the devices a worker became ready on; the log
		# also has the workers killed while they started (the shrink was
		# over), two at most since the pool starts two at a time: at most
		# two more devices, never fewer
		case ${gpus:-x} in
		$want) [ "$gpus" -le "$used" ] && [ "$gpus" -ge $((used - 2)) ] && ok "  ...repro.yaml says so (gpus: $gpus, the log $used)" ||
			fail "  ...repro.yaml says gpus: $gpus, the log $used" ;;
		*) fail "  ...repro.yaml says gpus: ${gpus:-?}, the log $used" ;;
		esac
		[ $n = 1 ] && continue
		for f in repro.cu repro-root.cu; do
			[ -f $t-1/r/$f ] || continue
			if norm_cu $t-1/r/$f >a.cu && norm_cu $t-$n/r/$f >b.cu && cmp -s a.cu b.cu && [ -s a.cu ]; then
				ok "  ...$f the same as on one device"
			else
				fail "  ...$f the same as on one device"; diff a.cu b.cu | head -5
			fi
		done
		for f in repro.bin repro-root.bin; do
			[ -f $t-1/r/$f ] || continue
			if norm_bin $t-1/r/$f >a.y && norm_bin $t-$n/r/$f >b.y && [ -s a.y ] && cmp -s a.y b.y; then
				ok "  ...$f: the same launches and buffers"
			else
				fail "  ...$f: the same launches and buffers"; diff a.y b.y | head -5
			fi
		done
	done
	grep -o "[0-9]* launch[es]* -> 1 launch," $t-1/shrink.log >/dev/null && ok "$t: one launch on one device" ||
		fail "$t: one launch on one device: $(tail -n 1 $t-1/shrink.log)"
	check "  ...the 8-device repro compiles" $CC -x c -w -I$CUDA/include -o $t-8/repro $t-8/r/repro.cu \
		-L$DBL -Wl,-rpath,$DBL -lcuda
	check_exit "  ...and faults" 1 ./$t-8/repro
done

# --- replay on device K works as on device 0 -------------------------------------
t=layout; [ -f ckpt.bin ] && t=ckpt
check_exit "replay $t.bin on device 0" 1 env DOUBLE_DEVICES=8 "$GPUREDUCE" replay $t.bin
sed 's/after \([0-9]*\) launch\(es\)*, .*/after \1 launches/' "$TMP/.out" >dev0.out
check_exit "replay $t.bin on device 7 (GPUREDUCE_DEVICE=7)" 1 env DOUBLE_DEVICES=8 GPUREDUCE_DEVICE=7 \
	DOUBLE_DEVICE_LOG=$TMP/dev7.log "$GPUREDUCE" replay $t.bin
sed 's/after \([0-9]*\) launch\(es\)*, .*/after \1 launches/' "$TMP/.out" >dev7.out
check_grep "  ...with layout placement" "guard=layout" "$TMP/.out"
cmp -s dev0.out dev7.out && ok "  ...the same fault, launch and event" || fail "  ...the same fault: $(cat dev0.out) / $(cat dev7.out)"
[ "$(cut -d' ' -f1 dev7.log | sort -u)" = 7 ] && ok "  ...its worker used device 7" || fail "  ...its worker used device 7 ($(cat dev7.log))"

# --- bad values: one line, non-zero, never ignored --------------------------------
err1() {  # err1 DESCRIPTION PATTERN ENV...: replay fails with one line matching PATTERN
	d=$1 p=$2; shift 2
	check_fail "$d" env DOUBLE_DEVICES=2 "$@" "$GPUREDUCE" replay layout.bin
	n=$(wc -l <"$TMP/.out" | tr -d ' ')
	[ "$n" = 1 ] && grep -q "$p" "$TMP/.out" && ok "  ...one line: $(cat "$TMP/.out")" || fail "  ...one line matching $p: $(cat "$TMP/.out")"
}
err1 "GPUREDUCE_DEVICE=abc" "GPUREDUCE_DEVICE=abc: not a device ordinal" GPUREDUCE_DEVICE=abc
err1 "GPUREDUCE_DEVICE=2 on two devices" "GPUREDUCE_DEVICE=2: past the last GPU (the driver reports 2 devices: ordinals 0 to 1)" GPUREDUCE_DEVICE=2
err1 "GPUREDUCE_DEVICE=1x" "GPUREDUCE_DEVICE=1x: not a device ordinal" GPUREDUCE_DEVICE=1x
err1 "GPUREDUCE_DEVICES=0" "GPUREDUCE_DEVICES=0: not a number of GPUs" GPUREDUCE_DEVICES=0
err1 "GPUREDUCE_DEVICES=3 on two devices" "GPUREDUCE_DEVICES=3: the driver reports only 2 GPUs" GPUREDUCE_DEVICES=3
err1 "both set" "unset one of them" GPUREDUCE_DEVICE=1 GPUREDUCE_DEVICES=2
check_fail "shrink with GPUREDUCE_DEVICES=9 on two devices" env DOUBLE_DEVICES=2 GPUREDUCE_DEVICES=9 \
	"$GPUREDUCE" shrink --quiet -o bad/repro.cu layout.bin
check_grep "  ...says why" "GPUREDUCE_DEVICES=9: the driver reports only 2 GPUs" "$TMP/.out"
[ -e bad/repro.cu ] && fail "  ...and emits nothing" || ok "  ...and emits nothing"
finish
