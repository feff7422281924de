#!/bin/sh
# t5091-e2e-fold.sh - a rank's trace replays and shrinks on one device
# without its peers (issue 25): the stand-in NCCL all-reduce of the driver
# double (it waits for its peers and, launched alone, aborts after
# DOUBLE_COLL_TIMEOUT seconds, saying so) is folded at capture into the
# bytes it wrote.  rank-prog's rank 1 fills the all-reduce's output with
# wild indices before every step, so its gather faults at the first step
# unless the folded bytes are applied; with them it faults at step 3
# (launch #11), as captured.  Checked: the launches and the copies carry
# the flag, replay never launches the collective and faults where the
# program did, the killed rank's trace replays without hanging, shrink
# gives a one-launch repro.cu (built with cc against the double) with no
# launch of the collective that faults, GPUREDUCE_FOLD_KERNELS adds
# kernels to fold, and a fault inside a folded kernel is refused clearly.
. tests/cli/test-lib.sh

LIB=$BUILD/libgpureduce-capture.so
CUDA=${CUDA:-/usr/local/cuda}
if [ ! -f "$LIB" ]; then
	echo "skip: $LIB not built (no CUPTI headers)"
	finish
fi
CC=${CC:-cc}
CF="-std=gnu11 -D_GNU_SOURCE -Wall -Wextra -Wno-unused-parameter -I$CUDA/include"
H=tests/cli/helpers
on_double nvcc plain-path no-sanitizer
cd "$SRCDIR" || exit 1
mkdir -p "$TMP/fake"
check "build the fake CUPTI (CUPTI part only)" $CC $CF -DFAKE_CUPTI_ONLY -fPIC -shared -fvisibility=hidden \
	-o "$TMP/fake/libcupti.so.13" $H/capture-fakecuda.c
check "build rank-prog on the double" $CC $CF -o "$TMP/prog" $H/rank-prog.c -L$DBL -Wl,-rpath,$DBL -lcuda -ldl
LD_LIBRARY_PATH="$TMP/fake:$DBL${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
GPUREDUCE_CAPTURE_LIB=$LIB
GPUREDUCE_CKPT_ASYNC=0
DOUBLE_COLL_TIMEOUT=3    # a collective launched alone aborts after 3 s, loudly
export LD_LIBRARY_PATH GPUREDUCE_CAPTURE_LIB GPUREDUCE_CKPT_ASYNC DOUBLE_COLL_TIMEOUT
unset CUDA_INJECTION64_PATH RANK LOCAL_RANK WORLD_SIZE DOUBLE_PEER_DIR RANK_PROG_LATE_FAULT RANK_PROG_NOKILL
cd "$TMP" || exit 1
CUBIN=$DBL/kernels.cubin
COLL=_Z39ncclDevKernel_AllReduce_Sum_i64_RING_LL17ncclDevKernelArgs
PEERS="launched without its peers"

check_exit "capture the 2-rank job into run/" 1 "$GPUREDUCE" capture -o run/ -- ./prog launch 2 $CUBIN 6 3

# --- the trace: folded launches and the bytes after them ---------------------------
"$GPUREDUCE" show run/rank1.bin > show.yaml 2>&1
"$YAMLFLAT" show.yaml > show.flat 2>&1
n=$(grep -c "kernel: $COLL" show.flat)
f=$(awk -F'[/:] *' -v k="$COLL" '$3=="kernel"&&$4==k{e[$2]=1} $3=="folded"&&e[$2]{c++} END{print c+0}' show.flat)
[ "$n" = 4 ] && [ "$f" = 4 ] && ok "rank 1: 4 all-reduce launches, each flagged folded" ||
	fail "rank 1: 4 all-reduce launches, each flagged folded ($n launches, $f folded)"
c=$(awk -F'[/:] *' '$3=="type"&&$4=="MEMCPY_H2D"{e[$2]=1} $3=="folded"&&e[$2]{c++} END{print c+0}' show.flat)
[ "$c" -ge 4 ] && ok "folded H2D copies hold what the all-reduces wrote ($c)" || fail "folded H2D copies ($c)"

# --- replay: the collective never runs; its bytes do -------------------------------------
check_exit "replay rank1.bin faults" 1 timeout 60 "$GPUREDUCE" replay run/rank1.bin
cp "$TMP/.out" replay1.log
check_grep "  ...at launch #11 in gather, as captured (the folded bytes were applied at every step)" \
	"(launch #11) in _Z6gatherPfPKfPKxi: CUDA_ERROR_ILLEGAL_ADDRESS" replay1.log
check_grep "  ...after 8 launches (the 4 folded all-reduces not among them)" "after 8 launches" replay1.log
grep -q "$PEERS" replay1.log && fail "replay never launched the collective" || ok "replay never launched the collective"
check_exit "replay of the killed rank 0 ends (3: incomplete trace), no hang" 3 timeout 60 "$GPUREDUCE" replay run/rank0.bin
grep -q "$PEERS" "$TMP/.out" && fail "  ...without launching the collective" || ok "  ...without launching the collective"

# --- shrink: one launch, no collective, faults ---------------------------------------------
check "shrink rank1.bin" timeout 300 "$GPUREDUCE" shrink -j 2 --quiet -o r1/repro.cu run/rank1.bin
cp "$TMP/.out" shrink.log
check_grep "shrink reached one launch" "12 launches -> 1 launch," shrink.log
check_grep "  ...with the signature" "CUDA_ERROR_ILLEGAL_ADDRESS in gather(float\*, float const\*, long long const\*, int)" shrink.log
grep -q "$PEERS" shrink.log && fail "no shrink worker launched the collective" || ok "no shrink worker launched the collective"
n=$(grep -c "^		launch_and_check(fn" r1/repro.cu)
[ "$n" = 1 ] && ok "repro.cu launches one kernel" || fail "repro.cu launches one kernel ($n)"
grep -q "ncclDevKernel" r1/repro.cu && fail "repro.cu names no communication kernel" || ok "repro.cu names no communication kernel"
check "repro.cu compiles as C against the double" $CC -x c -w -I$CUDA/include -o r1/repro r1/repro.cu \
	-L$DBL -Wl,-rpath,$DBL -lcuda
check_exit "repro exits 1 (fault reproduced)" 1 ./r1/repro
check_grep "  ...with the error" "faulted: CUDA_ERROR_ILLEGAL_ADDRESS (700)" "$TMP/.out"

# --- GPUREDUCE_FOLD_KERNELS: a user's own communication kernel ------------------------------
GPUREDUCE_FOLD_KERNELS="_Z9not_this,_Z7add_one*"
export GPUREDUCE_FOLD_KERNELS
check_exit "capture with add_one named in GPUREDUCE_FOLD_KERNELS" 1 "$GPUREDUCE" capture -o run2/ -- ./prog launch 2 $CUBIN 6 3
unset GPUREDUCE_FOLD_KERNELS
check_grep "rank 1: 8 kernels folded (4 all-reduces, 4 add_one)" "rank 1 (pid [0-9]*): run2/rank1.bin: 12 launches (8 communication kernels folded)" "$TMP/.out"
check_exit "replay still faults at launch #11" 1 "$GPUREDUCE" replay run2/rank1.bin
check_grep "  ...after 4 launches" "(launch #11) in _Z6gatherPfPKfPKxi.* after 4 launches" "$TMP/.out"

# --- a kernel that would hang, folded: never launched ----------------------------------------
head() {
	cat <<EOT
process 100 /work ./app
device "gpureduce CPU double"
module $CUBIN 1
alloc 0x7f0000100000 4096
alloc 0x7f0000200000 4000
memset 0x7f0000100000 0 4096
EOT
}
{ head; cat <<'EOT'
launch _Z4spinPVKi 1 1 ptr:0x7f0000100000 folded=1
launch _Z13scale_nocheckPfPKfi 8 256 ptr:0x7f0000200000 ptr:0x7f0000200000 i32:1000
fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel 1 at_launch=1
EOT
} > spin.txt
check "mktrace: a folded spin (a collective with no peer) then a fault" $MKTRACE spin.bin < spin.txt
check_exit "replay does not hang in it, and faults after it" 1 timeout 30 "$GPUREDUCE" replay spin.bin
check_grep "  ...in scale_nocheck" "(launch #1) in _Z13scale_nocheckPfPKfi" "$TMP/.out"
{ head; cat <<'EOT'
launch _Z4spinPVKi 1 1 ptr:0x7f0000100000 folded=1
fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel 0 at_launch=1
EOT
} > infold.txt
check "mktrace: the fault in the folded kernel itself" $MKTRACE infold.bin < infold.txt
check_exit "shrink refuses it (exit 1), no hang" 1 timeout 60 "$GPUREDUCE" shrink -o infold/repro.cu infold.bin
check_grep "  ...saying why" "the fault is in communication kernel _Z4spinPVKi, which was folded at capture" "$TMP/.out"
finish
