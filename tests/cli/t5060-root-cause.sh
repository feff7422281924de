#!/bin/sh
# t5060-root-cause.sh - issue 17 on the CPU driver double: a trace with
# allocator blocks (BLOCK_ALLOC, as `capture --tensors` writes them) where a
# kernel overruns one tensor into its neighbour inside one segment (silent:
# the segment is one allocation) and a later kernel crashes on the corrupted
# index.  Segment placement replays to the crash; block placement (the
# blockified trace) faults at the overrun.  `shrink --root-cause` writes the
# crash-site repro as before plus repro-root.cu/.bin/.yaml, labelled root
# cause, whose program (gcc against the double) faults in the overrunning
# kernel.
. tests/cli/test-lib.sh

on_double nvcc no-sanitizer plain-path

SEG=0x7f0000000000
A=0x7f0000000000   # out of the overrunning kernel: 1024 floats
B=0x7f0000001000   # the index tensor right after it: 512 long longs
C=0x7f0000002000   # gather's output
D=0x7f0000003000   # gather's source
IN=0x7f0000400000  # a buffer of its own (cudaMalloc'ed outside the allocator)
{ train_trace_head $SEG $IN 0x4e; cat <<EOT
memset $B 0 4096
block $A 4096 $SEG initial at=/home/u/train.py:10:main
block $B 4096 $SEG initial at=/home/u/train.py:11:main
launch _Z7add_onePfi 4 256 ptr:$A i32:1024
memset $C 0 8192
block $C 4096 $SEG at=/home/u/train.py:12:main
block $D 4000 $SEG at=/home/u/train.py:13:main
launch _Z13scale_nocheckPfPKfi 5 256 ptr:$A ptr:$IN i32:1024
launch _Z7add_onePfi 4 256 ptr:$C i32:1024
launch _Z6gatherPfPKfPKxi 2 256 ptr:$C ptr:$D ptr:$B i32:512
fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel 3 at_launch=1
EOT
} >rc.txt
check "mktrace: blocks inside one segment" $MKTRACE rc.bin < rc.txt
check "show names the block records" sh -c "$GPUREDUCE show rc.bin >rc.yaml"
check_grep "  ...BLOCK_ALLOC with its frame" "at: /home/u/train.py:11 (main)" rc.yaml
check_exit "segment placement: the overrun is silent, the crash is in gather" 1 $GPUREDUCE replay --guard=end rc.bin
check_grep "  ...faulted in gather" "in _Z6gatherPfPKfPKxi: CUDA_ERROR_ILLEGAL_ADDRESS" "$TMP/.out"

check "shrink --root-cause" $GPUREDUCE shrink -j 2 --root-cause --keep-work -o out/repro.cu rc.bin
cp "$TMP/.out" shrink.log
# the blockified trace (kept with --keep-work): blocks instead of the segment
$GPUREDUCE show out/repro.bin.work-*/blocks.bin | awk '/^- event:/ { t = "" } /^  type:/ { t = $2 }
	/^  (addr|dst|size|width):/ && t != "" { printf "%s %s=%s\n", t, $1, $2 }' >blk.txt
n=$(grep -c "^ALLOC size:=2097152" blk.txt)
[ "$n" = 0 ] && ok "blockified: the segment is not an allocation any more" || fail "blockified: the segment is still allocated"
tr '\n' ' ' <blk.txt >blk1.txt
check_grep "blockified: an INITIAL block is live before the memset made before its reading" \
	"ALLOC addr:=$B ALLOC size:=4096 .*MEMSET dst:=$B" blk1.txt
check_grep "blockified: blocks read at a launch are live right after the previous launch, before the memset that fills them" \
	"ALLOC addr:=$C ALLOC size:=4096 ALLOC addr:=$D ALLOC size:=4000 MEMSET dst:=$C MEMSET width:=4096 MEMSET dst:=$D MEMSET width:=4000" blk1.txt
check_grep "the crash-site repro is still the crash (gather)" \
	"CUDA_ERROR_ILLEGAL_ADDRESS in gather(float\*, float const\*, long long const\*, int)" shrink.log
check_grep "crash-site repro.yaml: kernel gather" "kernel: _Z6gatherPfPKfPKxi" out/repro.yaml
check_grep "the root-cause line names the overrunning kernel and the crash" \
	"root cause: kernel scale_nocheck(float\*, float const\*, int) (launch #1) .*the original crash was in kernel gather" shrink.log
check_grep "  ...and the tensor it was passed, with its allocation site" \
	"param 0 = tensor 0x7f0000000000 (4096 B, allocated at /home/u/train.py:10 in main)" shrink.log
check_grep "repro-root.yaml is labelled root cause" "^repro_kind: root-cause" out/repro-root.yaml
check_grep "repro-root.yaml: its signature is the overrunning kernel" "^  kernel: _Z13scale_nocheckPfPKfi\|^kernel: _Z13scale_nocheckPfPKfi" out/repro-root.yaml
check_grep "repro-root.yaml names the crash kernel" "^crash_kernel: '_Z6gatherPfPKfPKxi'" out/repro-root.yaml
check_grep "repro-root.cu's header says root cause" "ROOT-CAUSE REPRO" out/repro-root.cu
check_grep "repro-root.cu names the crash-site repro" "The crash-site repro .* is out/repro.cu" out/repro-root.cu
check_exit "block placement: repro-root.bin faults at the overrun" 1 $GPUREDUCE replay --guard=end out/repro-root.bin
check_grep "  ...in scale_nocheck" "in _Z13scale_nocheckPfPKfi" "$TMP/.out"
check "repro-root.cu compiles as C against the double" cc -x c -w -I${CUDA:-/usr/local/cuda}/include \
	-o out/repro-root out/repro-root.cu -L$BUILD/double -Wl,-rpath,$BUILD/double -lcuda
for i in 1 2 3 4 5; do
	check_exit "repro-root run $i faults (exit 1)" 1 ./out/repro-root
	check_grep "  ...in scale_nocheck" "scale_nocheck.* faulted: CUDA_ERROR_ILLEGAL_ADDRESS" "$TMP/.out"
done

# with compute-sanitizer (a stand-in that reports the write 4 bytes past the
# first buffer, in t5010's format): the sentence names the distance and the
# tensor through the diagnosed parameter
cat > fake-sanitizer <<'EOT'
#!/bin/sh
. "$SRCDIR/tests/cli/helpers/fake-sanitizer.sh"
san_run "$@"
[ -n "$buf0" ] || exit 0
set -- $buf0 $buf0_size
cat <<EOR
========= COMPUTE-SANITIZER
========= Invalid __global__ write of size 4 bytes
=========     at scale_nocheck(float *, const float *, int)+0x90
=========     by thread (0,0,0) in block (4,0,0)
=========     Access to $(printf '0x%x' $(( $1 + $2 ))) is out of bounds
=========     and is 1 bytes after the nearest allocation at $1 of size $2 bytes
EOR
EOT
chmod +x fake-sanitizer
check "shrink --root-cause with compute-sanitizer" env GPUREDUCE_SANITIZER=$TMP/fake-sanitizer SRCDIR=$SRCDIR \
	$GPUREDUCE shrink -j 2 --quiet --root-cause -o san/repro.cu rc.bin
check_grep "  ...root cause: kernel K wrote N bytes past tensor T (allocated at file:line); the crash" \
	"root cause: kernel scale_nocheck(float\*, float const\*, int) (launch #1) wrote past the end of tensor 0x7f0000000000 (4096 B, allocated at /home/u/train.py:10 in main), param 0: its first out-of-bounds access 1 byte past the end; the original crash was in kernel gather" "$TMP/.out"

# without blocks: --root-cause says what to do
sed '/^block /d' rc.txt >plain.txt
check "mktrace: the same without blocks" $MKTRACE plain.bin < plain.txt
check_exit "shrink --root-cause of a trace without blocks: refused before any work (exit 2)" 2 $GPUREDUCE shrink -j 2 --quiet --root-cause -o plain/repro.cu plain.bin
check_grep "  ...names capture --tensors" "capture --tensors" "$TMP/.out"
check_fail "  ...nothing written" test -e plain/repro.cu
[ -n "$KEEP_T5060" ] && cp -r "$TMP" "$KEEP_T5060"
finish
