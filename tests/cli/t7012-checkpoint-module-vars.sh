#!/bin/sh
# t7012-checkpoint-module-vars.sh - a kernel that keeps state in its own
# module's variable (capture/globals.c): ring-prog's ring_write advances
# the __device__ d_counter at every launch and faults at the 1025th, and
# the program never names d_counter to the driver.  A trace that starts
# at a checkpoint must hold d_counter's value there, or its replay starts
# from the image's 0 and runs clean.  Captured for real on the driver
# double (fake CUPTI).  Checked: the checkpoint's segment has d_counter as
# a module variable and its bytes; replay faults at the program's launch
# (so they are the value d_counter had there); shrink reduces it to that launch, and the
# repro, built against the double, sets d_counter and faults; after the
# module is unloaded and loaded again, the checkpoints hold the new
# module's variables only; without checkpoints nothing is asked for (no
# such ALLOC).
. tests/cli/test-lib.sh

. tests/cli/capture-fakes.sh
capture_on_double $H/ring-prog.c
PATH=/usr/bin:/bin     # no compute-sanitizer
GPUREDUCE_CKPT_COST_RATIO=0   # every due checkpoint is taken
export PATH GPUREDUCE_CKPT_COST_RATIO
cd "$TMP" || exit 1
CUBIN=$DBL/kernels.cubin

for way in sync background; do
	case $way in
	sync) env="GPUREDUCE_CKPT_ASYNC=0" ;;
	background) env="GPUREDUCE_CKPT_ASYNC=1 GPUREDUCE_CKPT_BG_RATIO=0" ;;
	esac
	check_exit "$way: capture, a checkpoint every 300 launches (the program faults: exit 3)" 3 \
		env $env "$GPUREDUCE" capture --checkpoint-every=300 -o r-$way.bin -- ./prog $CUBIN 2000
	"$GPUREDUCE" show r-$way.bin >r-$way.yaml
	n=$(awk '/type: CHECKPOINT_BEGIN/ { c = 1; next } c && /^  launch_seq:/ { print $2; exit }' r-$way.yaml)
	# (where, a background checkpoint's timing decides: any launch before
	# the fault, so that a replay from d_counter's image value, 0, would
	# end the window short of 1024 and run clean)
	[ "${n:-0}" -ge 1 ] && [ "$n" -le 1023 ] && ok "  ...the trace starts at a checkpoint (launch #$n)" ||
		fail "  ...the trace starts at a checkpoint before the fault (${n:-none})"
	check_grep "  ...d_counter is a module variable of it" "name: d_counter" r-$way.yaml
	check_grep "  ...its value is in the checkpoint" "dst_ptr: alloc#[0-9]*+0x0 (global d_counter, 8 bytes)" r-$way.yaml
	check_exit "  ...replay faults (exit 1)" 1 "$GPUREDUCE" replay r-$way.bin
	check_grep "  ...at the program's launch #1024, in ring_write" "(launch #1024) in _Z10ring_writePf" "$TMP/.out"
done

use_double_nvcc
check "shrink the sync trace" "$GPUREDUCE" shrink -j 2 --quiet -o s/repro.cu r-sync.bin
check_grep "  ...to one launch" "launches -> 1 launch" "$TMP/.out"
check_grep "  ...repro.cu asks the module for d_counter" "d_counter" s/repro.cu
repro_faults_on_double s

# the module unloaded and loaded again after 500 launches: the old
# module's variables leave the checkpoints, the new one's are asked for
check_exit "module reloaded at launch 500 (exit 3)" 3 env GPUREDUCE_CKPT_ASYNC=0 "$GPUREDUCE" capture \
	--checkpoint-every=300 -o u.bin -- ./prog $CUBIN 3000 500
check_grep "  ...the last checkpoint holds the new module's 3 variables, not 6" \
	"from checkpoint [0-9]* at launch #1500 (1 live allocation and 3 module variables" "$TMP/.out"
check_exit "  ...replay faults (exit 1)" 1 "$GPUREDUCE" replay u.bin
check_grep "  ...at launch #1524 (1024 after the reload)" "(launch #1524) in _Z10ring_writePf" "$TMP/.out"

# a program that loads modules without end: past the images listed (here
# 1), later images are not listed, and a note says so; the reloaded
# module's variables are still asked for, by the names the first image of
# the same kernel listed
check_exit "only 1 module image listed (GPUREDUCE_GLOBALS_MAX_IMAGES=1), reloaded (exit 3)" 3 \
	env GPUREDUCE_CKPT_ASYNC=0 GPUREDUCE_GLOBALS_MAX_IMAGES=1 "$GPUREDUCE" capture \
	--checkpoint-every=300 -o m.bin -- ./prog $CUBIN 3000 500
check_grep "  ...a note says the later one was not listed" \
	"1 module images listed, the most kept: a later module's variables are not recorded in checkpoints unless an earlier image of its kernel names them" "$TMP/.out"
check_grep "  ...the reloaded module's variables found by the first image's names" \
	"from checkpoint [0-9]* at launch #1500 (1 live allocation and 3 module variables" "$TMP/.out"

check_exit "without checkpoints (exit 3)" 3 "$GPUREDUCE" capture --no-checkpoint -o n.bin -- ./prog $CUBIN 2000
check_no_grep "  ...no module variable is asked for" "name: d_counter" "$(sh -c "\"$GPUREDUCE\" show n.bin >n.yaml; echo n.yaml")"
check_exit "  ...and the whole run replays to the fault" 1 "$GPUREDUCE" replay n.bin
finish
