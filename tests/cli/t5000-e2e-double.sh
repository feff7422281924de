#!/bin/sh
# t5000-e2e-double.sh - the whole pipeline on the CPU: synthetic traces (the
# writer's own API, via mktrace) whose kernels exist in the CPU driver
# double, then the real `gpureduce replay`, `shrink` (with its worker
# processes), the emitted repro.cu compiled with gcc against the double,
# and `verify`.
. tests/cli/test-lib.sh

DBL=$BUILD/double
export GPUREDUCE_LIBCUDA=$DBL/libcuda.so.1
export GPUREDUCE_NVCC="cc -x c -w -I${CUDA:-/usr/local/cuda}/include -L$DBL -Wl,-rpath,$DBL"
unset GPUREDUCE_SANITIZER
PATH=/usr/bin:/bin; export PATH     # no compute-sanitizer: diagnose says so
cd "$TMP" || exit 1

# 1. the seed article's missing bounds check after healthy launches -------
{ double_trace_head; cat <<'EOT'
alloc 0x7f0000100000 4000
alloc 0x7f0000200000 4000
h2d 0x7f0000100000 4000 seq
memset 0x7f0000200000 0 4000
launch _Z7add_onePfi 4 256 ptr:0x7f0000100000 i32:1000
launch _Z5scalePfPKfi 4 256 ptr:0x7f0000200000 ptr:0x7f0000100000 i32:1000
launch _Z7add_onePfi 4 256 ptr:0x7f0000200000 i32:1000
launch _Z13scale_nocheckPfPKfi 8 256 ptr:0x7f0000200000 ptr:0x7f0000100000 i32:1000 frame=/venv/lib/python3.12/site-packages/ext/ops.py:40:scale frame=/home/u/train.py:77:Model.forward frame=/home/u/train.py:120:main
fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel 3 at_launch=1
EOT
} > oob.txt
check "mktrace oob" $MKTRACE oob.bin < oob.txt
check_exit "replay faults (exit 1)" 1 $GPUREDUCE replay oob.bin
check_grep "replay names the event, launch and kernel" \
	"faulted at event 12 (launch #3) in _Z13scale_nocheckPfPKfi: CUDA_ERROR_ILLEGAL_ADDRESS" "$TMP/.out"
check_exit "replay --guard=start runs clean: the overrun lands in the slack after the buffer" 0 $GPUREDUCE replay --guard=start oob.bin
check_exit "replay --guard=none (plain cuMemAlloc) faults" 1 $GPUREDUCE replay --guard=none oob.bin
check "shrink oob" $GPUREDUCE shrink -j 2 --quiet -o oob/repro.cu oob.bin
cp "$TMP/.out" shrink-oob.log
check_grep "shrink reached one launch" "4 launches -> 1 launch" shrink-oob.log
check_grep "shrink kept the signature" "CUDA_ERROR_ILLEGAL_ADDRESS in scale_nocheck(float\*, float const\*, int)" shrink-oob.log
check_grep "repro.yaml has the signature" "kernel: _Z13scale_nocheckPfPKfi" oob/repro.yaml
check_grep "repro.yaml has replay's rate (a steady fault: 1 run, t5103)" "reduced: 1/1" oob/repro.yaml
check_grep "  ...and repro.cu's, 5 runs" "repro_cu: 5/5" oob/repro.yaml
check_grep "repro.yaml says when one launch was reached" "^one_launch_seconds: [0-9]" oob/repro.yaml
check_exit "repro.bin replays to the fault" 1 $GPUREDUCE replay oob/repro.bin
check_grep "repro.cu header states the nvcc line" "nvcc -o repro repro.cu -lcuda" oob/repro.cu
check_grep "repro.cu names params by type" "param 0: float\*" oob/repro.cu
check_grep "scalars: n does not matter to a kernel without a bounds check" "param 2: int, 4 bytes at offset 16 = 0; the program passed 1000: the fault does not depend on it" oob/repro.cu
check_grep "the grid reduction is explained" "the program launched grid (8,1,1); (5,1,1) is enough to fault" oob/repro.cu
check_grep "repro.cu points at the user's own frame first" "Your code:      /home/u/train.py:77 in Model.forward" oob/repro.cu
check_grep "... then lists the Python stack innermost first" "ext/ops.py:40 in scale" oob/repro.cu
check "repro.cu compiles as C against the double" cc -x c -Wall -Werror -I${CUDA:-/usr/local/cuda}/include \
	-o oob/repro oob/repro.cu -L$DBL -Wl,-rpath,$DBL -lcuda
check_exit "repro exits 1 (fault reproduced)" 1 ./oob/repro
check_grep "repro prints the CUDA error" "faulted: CUDA_ERROR_ILLEGAL_ADDRESS (700)" "$TMP/.out"
sed 's/_Z13scale_nocheckPfPKfi/_Z5scalePfPKfi/' oob/repro.cu > fixed.cu
check "fixed variant compiles" cc -x c -w -I${CUDA:-/usr/local/cuda}/include -o fixed fixed.cu -L$DBL -Wl,-rpath,$DBL -lcuda
check_exit "fixed variant (bounds check) exits 0" 0 ./fixed
sed '0,/0x7f,0x45,0x4c,0x46/s//0x00,0x45,0x4c,0x46/' oob/repro.cu > badimage.cu
check "a repro with a broken image compiles" cc -x c -w -I${CUDA:-/usr/local/cuda}/include -o badimage badimage.cu -L$DBL -Wl,-rpath,$DBL -lcuda
check_exit "it exits 2 (setup failed), not 0 or 1" 2 ./badimage
check_grep "and says which GPU the binary was captured on" "captured on .*compute capability 9.0" "$TMP/.out"
check "verify -n 4 reports 4/4" $GPUREDUCE verify -n 4 oob/repro.cu
check_grep "verify line" "verify: 4/4 runs faulted with CUDA_ERROR_ILLEGAL_ADDRESS" "$TMP/.out"
check_exit "verify of the fixed variant fails (exit 1)" 1 $GPUREDUCE verify -n 2 fixed.cu
check_exit "diagnose without compute-sanitizer says so (exit 4)" 4 $GPUREDUCE diagnose oob/repro.cu
check_grep "diagnose gives the signature" "signature only: CUDA_ERROR_ILLEGAL_ADDRESS" "$TMP/.out"

# 2. data-dependent fault: only idx[17] matters ---------------------------
gather_trace_text > gather.txt
check "mktrace gather" $MKTRACE gather.bin < gather.txt
check "shrink gather" $GPUREDUCE shrink -j 2 --quiet -o gather/repro.cu gather.bin
check_grep "the idx bytes that matter are kept: 8 bytes at offset 136" "8 bytes for buffer 2 at offset 136" gather/repro.cu
check_grep "... explained as the element of the typed parameter" "as .long long const\*., \[17\] = 9187201950435737471; the rest of the buffer is zeros" gather/repro.cu
if grep -q "bytes for buffer 0" gather/repro.cu; then fail "src contents were not needed but kept"; else ok "src contents replaced"; fi
check "gather repro compiles" cc -x c -w -I${CUDA:-/usr/local/cuda}/include -o gather/repro gather/repro.cu -L$DBL -Wl,-rpath,$DBL -lcuda
check_exit "gather repro faults" 1 ./gather/repro

# 2b. the seeded generator: replay and the emitted fill() agree -----------
check "shrink gather, preferring a seeded fill" env GPUREDUCE_PREFER_FILL=1 $GPUREDUCE shrink -j 2 --quiet -o fill/repro.cu gather.bin
check_grep "idx is generated by the seeded fill" "fill(buf\[2\].ptr + 0, 8000, 0x" fill/repro.cu
check "fill repro compiles" cc -x c -w -I${CUDA:-/usr/local/cuda}/include -o fill/repro fill/repro.cu -L$DBL -Wl,-rpath,$DBL -lcuda
check_exit "the generated contents fault as they did in replay" 1 ./fill/repro

# 3. slippage: dropping `fill` makes check_index assert (710) first -------
{ double_trace_head; cat <<'EOT'
alloc 0x7f0000100000 4096
alloc 0x7f0000200000 4096
alloc 0x7f0000300000 8192
h2d 0x7f0000300000 8192 127
launch _Z4fillPffi 8 256 ptr:0x7f0000300000 f32:0 i32:2048
launch _Z11check_indexPKxii 4 256 ptr:0x7f0000300000 i32:1024 i32:100
launch _Z7add_onePfi 4 256 ptr:0x7f0000100000 i32:1024
launch _Z13scale_nocheckPfPKfi 8 256 ptr:0x7f0000200000 ptr:0x7f0000100000 i32:1024
fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel 3 at_launch=1
EOT
} > slip.txt
check "mktrace slip" $MKTRACE slip.bin < slip.txt
check "baseline ddmin over launches" $GPUREDUCE shrink --strategy=baseline -j 1 --quiet -o slip/repro.cu slip.bin
check_grep "baseline kept the signature" "CUDA_ERROR_ILLEGAL_ADDRESS in scale_nocheck(float\*, float const\*, int)" "$TMP/.out"
check_grep "baseline reached the faulting launch alone" "4 launches -> 1 launch" "$TMP/.out"
check_grep "baseline runs the same data phase" "^- name: data" slip/repro.yaml
check_grep "  ...grid phase" "^- name: grid" slip/repro.yaml
check_grep "  ...and scalars phase" "^- name: scalars" slip/repro.yaml
if grep -q "^slipped: [1-9]" slip/repro.yaml; then ok "candidates that asserted in check_index were rejected (slipped > 0)"
else fail "no slipped candidates counted"; sed 's/^/    | /' slip/repro.yaml; fi

# 4. use after free ---------------------------------------------------------
{ double_trace_head; cat <<'EOT'
alloc 0x7f0000100000 4096
h2d 0x7f0000100000 4096 1
launch _Z7use_bufPfi 4 256 ptr:0x7f0000100000 i32:1024
free 0x7f0000100000
alloc 0x7f0000500000 4096
launch _Z7add_onePfi 4 256 ptr:0x7f0000500000 i32:1024
launch _Z7use_bufPfi 4 256 ptr:0x7f0000100000 i32:1024
fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel 2 at_launch=1
EOT
} > uaf.txt
check "mktrace uaf" $MKTRACE uaf.bin < uaf.txt
check_exit "uaf replays to the fault" 1 $GPUREDUCE replay uaf.bin
check "shrink uaf" $GPUREDUCE shrink -j 2 --quiet -o uaf/repro.cu uaf.bin
check_grep "uaf repro frees the buffer before the launch" "buf_free(&buf\[0\])" uaf/repro.cu
check_grep "uaf repro says the pointer is stale" "a FREED buffer" uaf/repro.cu
check "uaf repro compiles" cc -x c -w -I${CUDA:-/usr/local/cuda}/include -o uaf/repro uaf/repro.cu -L$DBL -Wl,-rpath,$DBL -lcuda
check_exit "uaf repro faults" 1 ./uaf/repro

# 5. pointers inside a by-value struct are relocated -------------------------
# hex: is raw bytes as written: the 24-byte struct { float *a, *b; int n; }
{ double_trace_head; cat <<'EOT'
alloc 0x7f0000100000 4096
alloc 0x7f0000200000 4096
h2d 0x7f0000100000 4096 seq
launch _Z13struct_params4Pair 4 256 hex:00001000007f000000002000007f0000000400000000000000
end 0
EOT
} > pair.txt
check "mktrace pair" $MKTRACE pair.bin < pair.txt
check_exit "struct parameter pointers relocate (runs clean)" 0 $GPUREDUCE replay pair.bin

# 6. device-side assert -----------------------------------------------------
{ double_trace_head; cat <<'EOT'
alloc 0x7f0000100000 800
h2d 0x7f0000100000 800 0
h2d 0x7f0000100040 8 1
launch _Z11check_indexPKxii 1 128 ptr:0x7f0000100000 i32:100 i32:100
fault 710 CUDA_ERROR_ASSERT cuLaunchKernel 0 at_launch=1
EOT
} > assert.txt
check "mktrace assert" $MKTRACE assert.bin < assert.txt
check_exit "assert replays (exit 1)" 1 $GPUREDUCE replay assert.bin
check_grep "assert signature" "CUDA_ERROR_ASSERT (710)" "$TMP/.out"
check "shrink assert" $GPUREDUCE shrink -j 2 --quiet -o assert/repro.cu assert.bin
check_grep "assert shrink kept 710" "CUDA_ERROR_ASSERT in check_index(long long const\*, int, int)" "$TMP/.out"
check "the assert's repro.cu compiles against the double" cc -x c -Wall -Werror -I${CUDA:-/usr/local/cuda}/include \
	-o assert/repro assert/repro.cu -L$DBL -Wl,-rpath,$DBL -lcuda
check_exit "it exits 1" 1 ./assert/repro
cp "$TMP/.out" assert/run.out
# the driver's assert messages can stop mid-line: the fault line starts one
grep -B1 '^repro: check_index.*faulted: CUDA_ERROR_ASSERT (710)' assert/run.out >assert/before.txt
check "  ...its fault line starts a line, after an empty one (a device assert's messages can end mid-line)" \
	test "$(head -n 1 assert/before.txt)" = "" -a "$(wc -l <assert/before.txt)" -eq 2

# 7. flaky (a race): rate measured and reported -----------------------------
{ double_trace_head; cat <<'EOT'
alloc 0x7f0000100000 4096
launch _Z7add_onePfi 4 256 ptr:0x7f0000100000 i32:1024
launch _Z12racy_augmentPfii 4 256 ptr:0x7f0000100000 i32:1024 i32:3
fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel 1 at_launch=1
EOT
} > race.txt
check "mktrace race" $MKTRACE race.bin < race.txt
check "shrink race" $GPUREDUCE shrink -j 2 --runs=12 --quiet -o race/repro.cu race.bin
check_grep "race reported flaky" "flaky: true" race/repro.yaml
check_grep "race rate in yaml" "original_rate: 0\." race/repro.yaml
check_grep "race flagged in the repro header" "FLAKY" race/repro.cu

# 7b. a race that lost in every run of the first confirmation ---------------
# racy_rare faults one launch in twelve (exactly, under DOUBLE_RACE_COUNTER):
# with the counter at 12 the four placements' two runs each (12-19) all run
# clean, and shrink gives each placement 8 more runs before giving up: the
# end placement's 28-35 holds 35, so it goes on, flaky, instead of "does not
# reproduce".
{ double_trace_head; cat <<'EOT'
alloc 0x7f0000100000 4096
h2d 0x7f0000100000 4096 seq
launch _Z9racy_rarePfi 2 128 ptr:0x7f0000100000 i32:1024
fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel 0 at_launch=1
EOT
} > rare.txt
check "mktrace racy_rare" $MKTRACE rare.bin < rare.txt
echo 12 > race-counter
check "shrink a race the first 8 runs all missed" env DOUBLE_RACE_COUNTER=$TMP/race-counter \
	$GPUREDUCE shrink -j 2 --quiet --log=rare.log -o rare/repro.cu rare.bin
check_grep "  ...reported flaky" "flaky: true" rare/repro.yaml
check_grep "  ...its rate measured on the end placement's runs" "^  original: 1/16" rare/repro.yaml
n=$(grep -c "confirm .*8 runs of" rare.log)
[ "$n" -ge 2 ] && ok "  ...after 8 more runs of each placement" || fail "  ...after 8 more runs of each placement ($n)"

# 7a. a race whose rate a reduction lowers ----------------------------------
# racy_grid always faults with 4 or more blocks, and below that only on
# every other launch (DOUBLE_RACE_COUNTER makes the alternation exact), so
# the original looks steady (2/2) while the grid phase's cut keeps the fault
# at half the rate.  Verify's own run misses and the rate check backs off
# to the state before the grid cut before repro.cu is built.  With
# GPUREDUCE_VERIFY_RECALL=1 verify makes no run (the final trace is the
# grid cut that faulted): repro.cu's runs see the drop, the earlier
# states' repro.cu are checked, shrink backs off to the same state and
# replays it 5 times.
racy_grid_trace_text > rgrid.txt
check "mktrace racy_grid" $MKTRACE rgrid.bin < rgrid.txt
echo 0 > race-counter
check "shrink a race whose rate the grid cut lowers (verify's run recalled)" env DOUBLE_RACE_COUNTER=$TMP/race-counter \
	GPUREDUCE_VERIFY_RECALL=1 $GPUREDUCE shrink -j 2 --quiet --log=rgrid.log -o rgrid/repro.cu rgrid.bin
check_grep "  ...repro.cu's rate was low, and the state after data's was not" \
	"^note: .the reduced trace..s repro.cu did not fault as replay did (end placement: [23]/5;.*state after data: 5/5)" rgrid/repro.yaml
check_grep "  ...and shrink backed off to the state after data" "^  backed_off_to: data" rgrid/repro.yaml
check_grep "  ...which replay confirms 5/5, run on it" "^  reduced: 5/5" rgrid/repro.yaml
check_grep "  ...(5 runs of the state it backed off to)" "site *5 runs of" rgrid.log
check_grep "  ...with the original grid" "launch_and_check(fn, \"racy_grid(float\*, int)\", 8, 1, 1" rgrid/repro.cu
echo 0 > race-counter
check "the same, verify running the final trace (the default)" env DOUBLE_RACE_COUNTER=$TMP/race-counter \
	$GPUREDUCE shrink -j 2 --quiet --log=rgrid0.log -o rgrid0/repro.cu rgrid.bin
check_grep "  ...the reduced trace's rate was measured low" "^note: .the reduced trace faulted in [23] of 5 runs (the original: 2 of 2)" rgrid0/repro.yaml
check_grep "  ...the earlier states were run as often" "rate of the state after data: 5/5" rgrid0.log
check_grep "  ...and shrink backed off to the state after data" "^  backed_off_to: data" rgrid0/repro.yaml
check_grep "  ...which confirms 5/5" "^  reduced: 5/5" rgrid0/repro.yaml
check_grep "  ...with the original grid" "launch_and_check(fn, \"racy_grid(float\*, int)\", 8, 1, 1" rgrid0/repro.cu

# 7c. worker start-up -------------------------------------------------------
# Contexts are created one after another on a real GPU (eight replay
# processes started together took 2.5 s on the H200, one 0.42 s), so the
# pool starts two workers at a time.  The double's cuInit takes 100 ms
# here and logs when each process waits in it.
check "shrink with slow worker start-up, -j 8" env DOUBLE_INIT_DELAY_MS=100 DOUBLE_INIT_LOG=$TMP/init.log \
	$GPUREDUCE shrink -j 8 --quiet -o slowinit/repro.cu rgrid.bin
# the pool's workers only (the built repro.cu's own runs overlap them);
# how many start depends on the race (each faulting run ends its worker):
# 7 to 21 here, and any 4 show whether more than two overlapped
most=$(sort -k2n init.log | awk '$3 == "gpureduce" { c += ($1 == "b") ? 1 : -1; if (c > m) m = c } END { print m + 0 }')
starts=$(grep -c '^b .* gpureduce$' init.log)
if [ "$starts" -ge 4 ] && [ "$most" -le 2 ]; then
	ok "  ...at most two workers started at once ($starts starts, $most at most)"
else
	fail "  ...at most two workers started at once ($starts starts, $most at most)"
fi

# 7d. several GPUs --------------------------------------------------------
# Each worker's READY says how many devices the driver sees; later workers
# are spread round-robin over them, unless GPUREDUCE_DEVICES fixes the
# number.  The double reports DOUBLE_DEVICES ordinals and logs the one
# each worker's context was retained for.
check "shrink on a driver with two devices, -j 4" env DOUBLE_DEVICES=2 DOUBLE_DEVICE_LOG=$TMP/dev2.log \
	$GPUREDUCE shrink -j 4 --quiet -o dev2/repro.cu oob.bin
on0=$(grep -c '^0 ' dev2.log)
on1=$(grep -c '^1 ' dev2.log)
if [ "$on0" -ge 1 ] && [ "$on1" -ge 1 ]; then
	ok "  ...workers ran on both devices ($on0 on 0, $on1 on 1)"
else
	fail "  ...workers ran on both devices ($on0 on 0, $on1 on 1)"
fi
check_grep "  ...repro.yaml says two GPUs" "^gpus: 2$" dev2/repro.yaml
check "GPUREDUCE_DEVICES=1 keeps them on one" env DOUBLE_DEVICES=2 DOUBLE_DEVICE_LOG=$TMP/dev1.log \
	GPUREDUCE_DEVICES=1 $GPUREDUCE shrink -j 4 --quiet -o dev1/repro.cu oob.bin
if [ -s dev1.log ] && ! grep -q -v '^0 ' dev1.log; then
	ok "  ...every worker on device 0 ($(wc -l < dev1.log) starts)"
else
	fail "  ...every worker on device 0: $(sort dev1.log | cut -d' ' -f1 | uniq -c | tr '\n' ' ')"
fi
check_grep "  ...repro.yaml says one GPU" "^gpus: 1$" dev1/repro.yaml

# 7b. a CUDA graph: the fault happens inside cuGraphLaunch ------------------
{ double_trace_head; cat <<'EOT'
alloc 0x7f0000100000 4000
alloc 0x7f0000200000 4000
h2d 0x7f0000100000 4000 seq
launch _Z7add_onePfi 4 256 ptr:0x7f0000100000 i32:1000
gbegin 0x55
launch _Z7add_onePfi 4 256 ptr:0x7f0000100000 i32:1000 stream=0x55 captured=1
launch _Z13scale_nocheckPfPKfi 8 256 ptr:0x7f0000200000 ptr:0x7f0000100000 i32:1000 stream=0x55 captured=1
gend 0x55 0xabc
gexec 0xabc 0xdef
launch _Z7add_onePfi 4 256 ptr:0x7f0000200000 i32:1000
glaunch 0xdef 0x55
fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuGraphLaunch 3 at_launch=0 kernel=
EOT
} > graph.txt
check "mktrace graph" $MKTRACE graph.bin < graph.txt
check_exit "replay runs the graph's nodes at its launch and faults there" 1 $GPUREDUCE replay graph.bin
check_grep "the fault is at the GRAPH_LAUNCH event, in the node's kernel" "faulted at event 15 (launch #2) in _Z13scale_nocheckPfPKfi" "$TMP/.out"
check "show prints the graph records" $GPUREDUCE show graph.bin
check_grep "... GRAPH_LAUNCH with its exec handle" "type: GRAPH_LAUNCH" "$TMP/.out"
check "shrink a fault inside a graph" $GPUREDUCE shrink -j 2 --quiet -o graph/repro.cu graph.bin
check_grep "expanded, sliced to the node, signature from replay" "-> 1 launch, 2 buffers; CUDA_ERROR_ILLEGAL_ADDRESS in scale_nocheck(float\*, float const\*, int)" "$TMP/.out"
check "graph repro compiles" cc -x c -w -I${CUDA:-/usr/local/cuda}/include -o graph/repro graph/repro.cu -L$DBL -Wl,-rpath,$DBL -lcuda
check_exit "graph repro faults" 1 ./graph/repro
check_grep "  ...its header names the node replay found (capture named none)" \
	"What faulted:   CUDA_ERROR_ILLEGAL_ADDRESS (700) in scale_nocheck(float\*, float const\*, int)" graph/repro.cu
check "  ...and verify agrees with it" $GPUREDUCE verify -n 2 graph/repro.cu
# a graph launched 301 times, the last launch faulting (a wild index copied
# in before it): past GPUREDUCE_GRAPH_EXPAND_MAX nodes, shrink reduces from
# a snapshot before the last graph launch, that launch's nodes expanded,
# instead of expanding all 602 nodes; the same repro.bin either way
{ double_trace_head; cat <<'EOT'
alloc 0x7f0000100000 65536
alloc 0x7f0000200000 4000
alloc 0x7f0000300000 8000
h2d 0x7f0000100000 65536 seq
h2d 0x7f0000300000 8000 0
rec FUNC_INFO func=0x4321 name=_Z6gatherPfPKfPKxi num_regs=32
gbegin 0x55
launch _Z6gatherPfPKfPKxi 4 256 ptr:0x7f0000200000 ptr:0x7f0000100000 ptr:0x7f0000300000 i32:1000 stream=0x55 captured=1 func=0x4321
launch _Z7add_onePfi 4 256 ptr:0x7f0000200000 i32:1000 stream=0x55 captured=1
gend 0x55 0xabc
gexec 0xabc 0xdef
EOT
	i=0; while [ $i -lt 300 ]; do echo 'glaunch 0xdef 0x55'; i=$((i + 1)); done
	echo 'h2d 0x7f0000301c20 8 u64:0x10000000'
	echo 'glaunch 0xdef 0x55'
	echo 'fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuGraphLaunch 0 at_launch=0 kernel='
} > graphs.txt
check "mktrace: a graph launched 301 times" $MKTRACE graphs.bin < graphs.txt
check "shrink it, past GPUREDUCE_GRAPH_EXPAND_MAX" env GPUREDUCE_GRAPH_EXPAND_MAX=100 \
	$GPUREDUCE shrink -j 2 --keep-work -o gtail/repro.cu graphs.bin
check_grep "  ...from the last graph launch on" \
	"602 graph nodes launched: reducing from the last graph launch (2 nodes) on, the rest as a snapshot" "$TMP/.out"
check_grep "  ...to the node that faults" "-> 1 launch, 3 buffers; CUDA_ERROR_ILLEGAL_ADDRESS in gather(.*repro.cu faulted 5/5" "$TMP/.out"
[ -e gtail/repro.bin.work-*/graph-tail.bin ] && ! [ -e gtail/repro.bin.work-*/expanded.bin ] &&
	ok "  ...without the whole expansion" || fail "  ...without the whole expansion ($(ls gtail/repro.bin.work-*/))"
$GPUREDUCE show gtail/repro.bin.work-*/graph-tail.bin >gtail.yaml 2>&1
check_grep "  ...carrying the nodes' FUNC_INFO (which build each ran)" "name: _Z6gatherPfPKfPKxi" gtail.yaml
check_grep "  ...(the record itself)" "type: FUNC_INFO" gtail.yaml
check "shrink it expanding every launch (the default limit)" $GPUREDUCE shrink -j 2 --keep-work -o gall/repro.cu graphs.bin
check_grep "  ...602 launches" "expanded graph launches into 602 launches" "$TMP/.out"
recs() { $GPUREDUCE show "$1" | grep -v -e "^  path:" -e "created" -e "^  offset:"; }
recs gtail/repro.bin >gtail.recs; recs gall/repro.bin >gall.recs
cmp -s gtail.recs gall.recs && [ -s gall.recs ] && ok "  ...the same repro.bin records either way" ||
	fail "  ...the same repro.bin records either way"
# the same graph launches, then a plain launch that faults: the records
# after the last graph launch go with its nodes
{ sed '/^h2d 0x7f0000301c20/,$d' graphs.txt
	echo 'glaunch 0xdef 0x55'
	echo 'h2d 0x7f0000301c20 8 u64:0x10000000'
	echo 'launch _Z7add_onePfi 4 256 ptr:0x7f0000200000 i32:1000'
	echo 'launch _Z6gatherPfPKfPKxi 4 256 ptr:0x7f0000200000 ptr:0x7f0000100000 ptr:0x7f0000300000 i32:1000'
	echo 'fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel 3 at_launch=1'   # (seqs 0, 1: the captured nodes)
} > graphs2.txt
check "mktrace: graph launches, then a plain launch faults" $MKTRACE graphs2.bin < graphs2.txt
check "shrink it, past GPUREDUCE_GRAPH_EXPAND_MAX" env GPUREDUCE_GRAPH_EXPAND_MAX=100 \
	$GPUREDUCE shrink -j 2 -o g2tail/repro.cu graphs2.bin
check_grep "  ...from the last graph launch on" "reducing from the last graph launch (2 nodes) on" "$TMP/.out"
check_grep "  ...to the plain launch that faults" "-> 1 launch, 3 buffers; CUDA_ERROR_ILLEGAL_ADDRESS in gather(.*repro.cu faulted 5/5" "$TMP/.out"
check "shrink it expanding every launch" $GPUREDUCE shrink -j 2 -o g2all/repro.cu graphs2.bin
recs g2tail/repro.bin >g2tail.recs; recs g2all/repro.bin >g2all.recs
cmp -s g2tail.recs g2all.recs && [ -s g2all.recs ] && ok "  ...the same repro.bin records either way" ||
	fail "  ...the same repro.bin records either way"
sed 's/^glaunch.*//' graph.txt > nolaunch.txt
check "mktrace: the graph is never launched" $MKTRACE nolaunch.bin < nolaunch.txt
check_exit "captured nodes alone do not run: replay is clean" 0 $GPUREDUCE replay nolaunch.bin

# 8. refusals: no fault; a fault that does not reproduce ----------------------
{ double_trace_head; cat <<'EOT'
alloc 0x7f0000100000 4096
launch _Z7add_onePfi 4 256 ptr:0x7f0000100000 i32:1024
end 0
EOT
} > clean.txt
check "mktrace clean" $MKTRACE clean.bin < clean.txt
check_exit "replay of a healthy trace exits 0" 0 $GPUREDUCE replay clean.bin
check_exit "shrink refuses a trace without fault" 1 $GPUREDUCE shrink --quiet -o clean/repro.cu clean.bin
check_grep "says there is no fault" "holds no fault" "$TMP/.out"
{ double_trace_head; cat <<'EOT'
alloc 0x7f0000100000 4096
launch _Z7add_onePfi 4 256 ptr:0x7f0000100000 i32:1024
fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel 0 at_launch=1
EOT
} > nofault.txt
check "mktrace nofault" $MKTRACE nofault.bin < nofault.txt
check_exit "shrink refuses a fault that does not reproduce" 1 $GPUREDUCE shrink --quiet -o nf/repro.cu nofault.bin
check_grep "says what was tried" "tried guard=layout, [0-9]* runs: ran clean.*guard=end, [0-9]* runs: ran clean" "$TMP/.out"
check_grep "... in every guard mode" "guard=none, [0-9]* runs: ran clean" "$TMP/.out"
if [ -e nf/repro.cu ]; then fail "nothing may be emitted for a non-reproducing fault"; else ok "nothing emitted"; fi
check_no_grep "  ...and, the capture having noted nothing, names no note" "Capture noted" "$TMP/.out"
# the same, where the capture noted what it could not record (notes before
# the launch): the error says so
{ sed '/^launch /,$d' nofault.txt
	echo 'note cuTexObjectCreate: texture and surface objects are not recorded; a kernel that reads or writes through one will not replay as captured'
	echo 'note checkpoint 1: 4096 bytes'
	echo 'note unsupported copy form cuMemcpyHtoA_v2: replay will miss these bytes'
	sed -n '/^launch /,$p' nofault.txt
} > nofault2.txt
check "mktrace nofault, with notes" $MKTRACE nofault2.bin < nofault2.txt
check_exit "shrink refuses it" 1 $GPUREDUCE shrink --quiet -o nf2/repro.cu nofault2.bin
check_grep "  ...naming what the capture noted it lacks" \
	"Capture noted what the trace lacks: cuTexObjectCreate: texture and surface objects are not recorded.*; unsupported copy form cuMemcpyHtoA_v2: replay will miss these bytes\.$" "$TMP/.out"
check_no_grep "  ...and only that" "checkpoint 1: 4096" "$TMP/.out"
n=$(grep -c . "$TMP/.out"); [ "$n" = 1 ] && ok "  ...on one line" || fail "  ...on one line ($n lines)"
check_exit "replay of it runs clean: exit 0" 0 $GPUREDUCE replay nofault2.bin
check_grep "  ...and says what the capture noted the trace lacks" \
	"^replay: note: the capture faulted, and noted what the trace lacks: cuTexObjectCreate: texture" "$TMP/.out"
check_exit "replay of the one without notes: exit 0" 0 $GPUREDUCE replay nofault.bin
check_no_grep "  ...and no such note" "noted what the trace lacks" "$TMP/.out"

# 8b. a hang: the time limit kills the worker --------------------------------
{ double_trace_head; cat <<'EOT'
alloc 0x7f0000100000 64
memset 0x7f0000100000 0 64
launch _Z4spinPVKi 1 1 ptr:0x7f0000100000
EOT
} > hang.txt
check "mktrace hang" $MKTRACE hang.bin < hang.txt
t0=$(date +%s)
check_exit "replay of a hanging launch gives up: exit 3" 3 $GPUREDUCE replay --timeout=2 hang.bin
t1=$(date +%s)
check_grep "says it hung" "no result within 2 s (hang?)" "$TMP/.out"
if [ $((t1 - t0)) -le 10 ]; then ok "and within the limit ($((t1 - t0)) s)"; else fail "took $((t1 - t0)) s"; fi
{ double_trace_head; cat <<'EOT'
alloc 0x7f0000100000 4096
alloc 0x7f0000200000 64
memset 0x7f0000200000 0 64
launch _Z4spinPVKi 1 1 ptr:0x7f0000200000
launch _Z13scale_nocheckPfPKfi 8 256 ptr:0x7f0000100000 ptr:0x7f0000100000 i32:1000
fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel 1 at_launch=1
EOT
} > hang2.txt
check "mktrace: a hang before the fault" $MKTRACE hang2.bin < hang2.txt
check_exit "shrink refuses: the original never reaches its fault in replay" 1 $GPUREDUCE shrink -j 2 --quiet --guard=end --candidate-timeout=1 -o hang2/repro.cu hang2.bin
check_grep "and says replay timed out" "timed out" "$TMP/.out"

# 8b'. --time-limit cuts a hung candidate short: zeroing gated_write's gate
# makes it spin; the candidate timeout (60 s) is longer than the limit (3 s)
{ double_trace_head; cat <<'EOT'
alloc 0x7f0000100000 4096
alloc 0x7f0000200000 64
h2d 0x7f0000200000 64 seq
launch _Z11gated_writePVKiPfi 1 32 ptr:0x7f0000200000 ptr:0x7f0000100000 i32:1024
fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel 0 at_launch=1
EOT
} > gated.txt
check "mktrace gated" $MKTRACE gated.bin < gated.txt
t0=$(date +%s)
check "shrink --time-limit=3 with a candidate that hangs" timeout 50 $GPUREDUCE shrink -j 2 --quiet \
	--time-limit=3 --candidate-timeout=60 -o gated/repro.cu gated.bin
t1=$(date +%s)
if [ $((t1 - t0)) -le 15 ]; then ok "  ...ends soon after the limit ($((t1 - t0)) s)"; else fail "  ...took $((t1 - t0)) s"; fi
check_grep "  ...says the time limit stopped it" "^stopped: .time limit" gated/repro.yaml
check_grep "  ...and emits a confirmed repro" "^  reduced: 1/1" gated/repro.yaml
check_grep "  ...whose repro.cu faults 5/5" "^  repro_cu: 5/5" gated/repro.yaml
# one worker: a hung candidate is stopped at the limit, and the ones queued
# behind it in the same batch are not started.  ddmin over the launches
# (the slice left out) first tries the trace without its first half, which
# drops the launch that opens gated_write's gate (add_one turns its zero
# into 1.0f's bits): it hangs, the other half waits behind it
{ double_trace_head
	printf 'alloc 0x7f0000100000 4096\nalloc 0x7f0000200000 64\nmemset 0x7f0000200000 0 64\n'
	echo 'launch _Z7add_onePfi 1 32 ptr:0x7f0000200000 i32:1'          # opens the gate
	for i in 1 2 3; do echo 'launch _Z7add_onePfi 4 256 ptr:0x7f0000100000 i32:1000'; done
	echo 'launch _Z11gated_writePVKiPfi 1 32 ptr:0x7f0000200000 ptr:0x7f0000100000 i32:1024'
	echo 'fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel 4 at_launch=1'
} > gate4.txt
check "mktrace: the gate opened by a launch" $MKTRACE gate4.bin < gate4.txt
check "the same with -j 1, ddmin over the launches" timeout 50 $GPUREDUCE shrink -j 1 --quiet --log=gated1.log \
	--phases=ddmin-launches --time-limit=3 --candidate-timeout=60 -o gated1/repro.cu gate4.bin
check_grep "  ...the hung candidate stopped at the limit" "timeout (time limit exceeded" gated1.log
check_grep "  ...the one queued behind it not run" "timeout (not run: past its stop time" gated1.log
check_grep "  ...a confirmed repro all the same" "^  reduced: 1/1" gated1/repro.yaml
check_grep "  ...whose repro.cu faults 5/5" "^  repro_cu: 5/5" gated1/repro.yaml

# 8c. no GPU at all: one clear line, exit 4 ----------------------------------
check_exit "replay without a GPU: exit 4" 4 env DOUBLE_NO_DEVICE=1 $GPUREDUCE replay oob.bin
check_grep "says the driver found no GPU" "cuInit failed: CUDA_ERROR_NO_DEVICE; is there a usable NVIDIA GPU?" "$TMP/.out"
check_exit "shrink without a GPU: exit 4" 4 env DOUBLE_NO_DEVICE=1 $GPUREDUCE shrink --quiet -o nogpu/repro.cu oob.bin
check_grep "... with the same reason" "replay workers cannot start: cuInit failed" "$TMP/.out"
check_exit "no driver library at all: exit 4" 4 env GPUREDUCE_LIBCUDA=/nonexistent/libcuda.so.1 $GPUREDUCE replay oob.bin
check_grep "names the library" "cannot load the CUDA driver (/nonexistent/libcuda.so.1)" "$TMP/.out"

# 9. bad input ---------------------------------------------------------------
check_exit "shrink on a missing file: exit 3" 3 $GPUREDUCE shrink -o x.cu /no/such/trace.bin
check_grep "names the file" "/no/such/trace.bin" "$TMP/.out"
check_exit "replay of a non-trace: exit 3" 3 $GPUREDUCE replay oob.txt
printf 'process 1 /w ./a\nalloc 0x7f0000100000 64\nlaunch _Z3fooPf 1 1 ptr:0x7f0000100000\n' > nomod.txt
check "mktrace a launch without its module" $MKTRACE nomod.bin < nomod.txt
check_exit "replay cannot find the kernel: exit 3" 3 $GPUREDUCE replay nomod.bin
check_grep "says which kernel and why" "could not replay: event 2 (launch #0): kernel _Z3fooPf is in none of the trace's 0 captured modules" "$TMP/.out"
finish
