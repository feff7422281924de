#!/bin/sh
# t1008-capture-ranks.sh - capture of a multi-process job (issue 25) on the
# CPU: rank-prog's launcher (CUDA initialised, nothing launched, as
# torchrun's parent may) starts two ranks on the driver double, captured
# for real by libgpureduce-capture.so through the CUPTI part of
# capture-fakecuda.  Rank 1 faults; the launcher then kills rank 0 (which
# waits in a stand-in NCCL all-reduce for it) and exits 1.  Checked: -o DIR/
# gives one trace per process named by rank or pid and an index, the
# summary says how each ended and names the first fault (by time, not by
# rank order) with the exact shrink command, the exit code is the
# program's, a second capture into DIR replaces the first's traces, two
# processes claiming one rank both keep their trace, and -o FILE still
# works and says where the other traces went.
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
on_double plain-path no-sanitizer
cd "$SRCDIR" || exit 1
mkdir -p "$TMP/fake"
check "build the fake CUPTI (CUPTI part only)" $CC $CF -DFAKE_CUPTI_ONLY -fPIC -shared -fvisibility=hidden \
	-o "$TMP/fake/libcupti.so.13" $H/capture-fakecuda.c
check "build rank-prog on the double" $CC $CF -o "$TMP/prog" $H/rank-prog.c -L$DBL -Wl,-rpath,$DBL -lcuda -ldl
LD_LIBRARY_PATH="$TMP/fake:$DBL${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
GPUREDUCE_CAPTURE_LIB=$LIB
GPUREDUCE_CKPT_ASYNC=0
export LD_LIBRARY_PATH GPUREDUCE_CAPTURE_LIB GPUREDUCE_CKPT_ASYNC
unset CUDA_INJECTION64_PATH RANK LOCAL_RANK WORLD_SIZE RANK_PROG_LATE_FAULT RANK_PROG_NOKILL
cd "$TMP" || exit 1
CUBIN=$DBL/kernels.cubin

# --- -o DIR/: one trace per CUDA process, and an index ------------------------
check_exit "capture -o run/ of a 2-rank job exits 1 (the launcher's status)" 1 \
	"$GPUREDUCE" capture -o run/ -- ./prog launch 2 $CUBIN 6 3
cp "$TMP/.out" cap1.log
[ -f run/rank0.bin ] && [ -f run/rank1.bin ] && ok "rank0.bin and rank1.bin written (named by RANK)" ||
	fail "rank0.bin and rank1.bin written (named by RANK): $(ls run)"
n=$(ls run | grep -c '^pid[0-9]*\.bin$')
[ "$n" = 1 ] && ok "the launcher's trace is named by its pid" || fail "the launcher's trace is named by its pid ($n)"
check_grep "index names the first fault" "^first_fault: rank1.bin" run/index.yaml
check_grep "  ...and its rank" "^first_fault_rank: \"1\"" run/index.yaml
"$YAMLFLAT" run/index.yaml > idx.flat 2>&1
check_grep "index: rank 1 faulted in gather" "processes/1/kernel: _Z6gatherPfPKfPKxi" idx.flat
check_grep "index: rank 0 was killed" "processes/0/end: killed" idx.flat
check_grep "index: the launcher launched nothing" "processes/2/end: launched-nothing" idx.flat
check_grep "index: rank 1's four all-reduces were folded" "processes/1/folded: 4" idx.flat
check_grep "summary: rank 1 faulted (first)" "rank 1 (pid [0-9]*): run/rank1.bin: 12 launches (4 communication kernels folded), faulted: CUDA_ERROR_ILLEGAL_ADDRESS in gather(float\*, float const\*, long long const\*, int) at launch #11 (first)" cap1.log
check_grep "summary: rank 0 ended by the job, not a fault" "rank 0 (pid [0-9]*): run/rank0.bin: .*killed after the fault of rank 1 (ended by the job" cap1.log
check_grep "summary: the launcher is not a rank" "pid [0-9]*: run/pid[0-9]*.bin: 0 launches, launched nothing" cap1.log
check_grep "summary: the exact shrink command" "^  gpureduce shrink -o run/rank1-repro/repro.cu run/rank1.bin$" cap1.log
check_grep "summary: the familiar one-line summary of the faulting trace" \
	"captured 12 launches, .* -> run/rank1.bin; fault: CUDA_ERROR_ILLEGAL_ADDRESS in gather(float\*, float const\*, long long const\*, int) at launch #11" cap1.log
check_grep "summary: where the index is" "index of the traces: run/index.yaml" cap1.log
old=$(ls run | grep '^pid')

# --- a second capture into the same directory replaces the first's traces ----------
check_exit "capture -o run/ again" 1 "$GPUREDUCE" capture -o run/ -- ./prog launch 2 $CUBIN 6 3
[ ! -f "run/$old" ] && ok "the earlier launcher's trace (listed in the old index) is gone" ||
	fail "the earlier launcher's trace (listed in the old index) is gone"
echo keep > run/notes.txt
check_exit "capture into it a third time" 1 "$GPUREDUCE" capture -o run/ -- ./prog launch 2 $CUBIN 6 3
check_grep "a file the user put there is left alone" "keep" run/notes.txt

# --- first by time, not by rank order --------------------------------------------
RANK_PROG_LATE_FAULT=300 RANK_PROG_NOKILL=1
export RANK_PROG_LATE_FAULT RANK_PROG_NOKILL
check_exit "both ranks fault, rank 1 300 ms before rank 0" 1 "$GPUREDUCE" capture -o both/ -- ./prog launch 2 $CUBIN 6 3
cp "$TMP/.out" both.log
unset RANK_PROG_LATE_FAULT RANK_PROG_NOKILL
check_grep "rank 0 faulted too (not marked first)" "rank 0 (pid [0-9]*): both/rank0.bin: .*faulted: CUDA_ERROR_ILLEGAL_ADDRESS in gather(float\*, float const\*, long long const\*, int) at launch #11$" both.log
check_grep "rank 1 is the first fault" "rank 1 faulted first" both.log
check_grep "  ...in the index too" "^first_fault: rank1.bin" both/index.yaml

# --- two processes with one RANK (a DataLoader worker inherits it) -----------------
RANK=0
export RANK
check_exit "the launcher itself says RANK=0" 1 "$GPUREDUCE" capture -o same/ -- ./prog launch 2 $CUBIN 6 3
unset RANK
n=$(ls same | grep -c '^rank0\(\.pid[0-9]*\)\?\.bin$')
[ "$n" = 2 ] && ok "both RANK=0 processes kept a trace (rank0.bin, rank0.pidP.bin)" ||
	fail "both RANK=0 processes kept a trace: $(ls same)"

# --- -o FILE: still works, says where the other traces went ---------------------------
check_exit "capture -o t.bin of the same job" 1 "$GPUREDUCE" capture -o t.bin -- ./prog launch 2 $CUBIN 6 3
cp "$TMP/.out" file.log
[ -f t.bin ] && [ -f t.bin.rank0 ] && [ -f t.bin.rank1 ] && ok "t.bin (the first process), t.bin.rank0, t.bin.rank1" ||
	fail "t.bin (the first process), t.bin.rank0, t.bin.rank1: $(ls t.bin*)"
check_grep "the summary says where the other traces went" "other CUDA processes wrote .*t.bin.rank" file.log
check_grep "  ...and which one to shrink" "gpureduce shrink -o t.bin.rank1-repro/repro.cu t.bin.rank1$" file.log

# --- one process: the summary is the usual one line ---------------------------------------
mkdir -p peers
check_exit "a lone worker (world of one) runs clean: -o one.bin" 0 \
	env RANK=0 WORLD_SIZE=1 DOUBLE_PEER_DIR=$TMP/peers "$GPUREDUCE" capture -o one.bin -- ./prog worker $CUBIN 2 9
cp "$TMP/.out" one.log
[ -f one.bin ] && ok "one.bin written (not one.bin.rank0)" || fail "one.bin written: $(ls one.bin*)"
grep -q "CUDA processes" one.log && fail "no per-process listing for one process" || ok "no per-process listing for one process"
finish
