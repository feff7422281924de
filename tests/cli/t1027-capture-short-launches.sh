#!/bin/sh
# t1027-capture-short-launches.sh - format 2.0's short launches
# (capture/same.c): a launch that repeats an earlier launch's function and
# argument bytes is written naming it, and the reader gives it that
# launch's name, layout and bytes.  ckpt-prog on the driver double
# launches add_one with three argument sets in turn (CKPT_PROG_LIVE and
# CKPT_PROG_LAUNCHES), so a reference to the wrong earlier launch would
# show as other bytes.  Captured with short launches and without
# (GPUREDUCE_CAPTURE_SAME=0), each of: no checkpoints, checkpoints on the
# program's thread every 37 launches (so a segment starts inside the
# cycle), checkpoints written in the background every 31 (whose window is
# copied into the next segment: references stay relative).  Checked: the short
# traces have short launches and are smaller, and every launch reads the
# same as in the trace written without them (seq, kernel, grid, every
# parameter's bytes), and both replay to the same fault.
. tests/cli/test-lib.sh

. tests/cli/capture-fakes.sh
capture_on_double $H/ckpt-prog.c
PATH=/usr/bin:/bin     # no compute-sanitizer
GPUREDUCE_CKPT_COST_RATIO=0   # every due checkpoint is taken
CKPT_PROG_LIVE=4096
CKPT_PROG_LAUNCHES=2
export LD_LIBRARY_PATH GPUREDUCE_CAPTURE_LIB GPUREDUCE_LIBCUDA PATH GPUREDUCE_CKPT_COST_RATIO CKPT_PROG_LIVE \
	CKPT_PROG_LAUNCHES
unset CUDA_INJECTION64_PATH GPUREDUCE_SANITIZER
cd "$TMP" || exit 1
CUBIN=$DBL/kernels.cubin
size() { wc -c <"$1" | tr -d ' '; }
# every launch as a reader sees it, one line each: seq, kernel, grid, each
# parameter's bytes
launches() {
	"$GPUREDUCE" show "$1" | grep -E '^  (seq|kernel|grid):|^    hex:' |
		awk '/^  seq:/ { if (l != "") print l; l = $2; next } l != "" { $1 = $1; l = l " " $0 }
			END { if (l != "") print l }'
}

for way in none sync background; do
	# background: the launches between a checkpoint's snapshot and the
	# switch to its segment are copied whole, so the last window must
	# outlast the thread even on a loaded machine: every 31 launches (the
	# last window 22 launches), taken when due (no wait after the thread),
	# 5 ms a step (the thread has ~20 ms before the window ends)
	step=
	case $way in
	none) opt=--no-checkpoint; env="GPUREDUCE_CKPT_ASYNC=0" ;;
	sync) opt=--checkpoint-every=37; env="GPUREDUCE_CKPT_ASYNC=0" ;;
	background) opt=--checkpoint-every=31; env="GPUREDUCE_CKPT_ASYNC=1 GPUREDUCE_CKPT_BG_RATIO=0"; step=5000 ;;
	esac
	check_exit "$way: capture with short launches" 3 env $env "$GPUREDUCE" capture $opt -o s-$way.bin -- \
		./prog $CUBIN 60 $step
	check_exit "$way: capture without (GPUREDUCE_CAPTURE_SAME=0)" 3 env $env GPUREDUCE_CAPTURE_SAME=0 \
		"$GPUREDUCE" capture $opt -o w-$way.bin -- ./prog $CUBIN 60 $step
	n=$("$GPUREDUCE" show s-$way.bin | grep -c 'same_as_records_back:')
	m=$("$GPUREDUCE" show s-$way.bin | grep -c 'type: LAUNCH')
	[ "$n" -gt 0 ] && [ "$n" -lt "$m" ] && ok "  ...$n of its $m launches written short" ||
		fail "  ...some launches written short ($n of $m)"
	"$GPUREDUCE" show s-$way.bin >s-$way.yaml
	check_grep "  ...and show's totals count them" "^  launches_written_short: $n\$" s-$way.yaml
	n=$("$GPUREDUCE" show w-$way.bin | grep -c 'same_as_records_back:')
	[ "$n" = 0 ] && ok "  ...none without" || fail "  ...none without ($n)"
	if [ "$way" != background ]; then
		[ "$(size s-$way.bin)" -lt "$(size w-$way.bin)" ] &&
			ok "  ...a smaller file ($(size s-$way.bin) against $(size w-$way.bin) bytes)" ||
			fail "  ...a smaller file ($(size s-$way.bin) against $(size w-$way.bin) bytes)"
	fi
	launches s-$way.bin | sort >s-$way.txt
	launches w-$way.bin | sort >w-$way.txt
	# a background checkpoint's window ends where the thread was done, so
	# the two runs' windows may differ: the launches both have must agree
	r=$(awk 'NR == FNR { w[$1] = $0; next }
		($1 in w) { n++; if (w[$1] != $0) { bad++; if (!first) first = $0 " | " w[$1] } }
		END { print n + 0, bad + 0, first }' w-$way.txt s-$way.txt)
	n=${r%% *}; r=${r#* }; bad=${r%% *}
	if [ "$n" -ge 1 ] && [ "$bad" = 0 ]; then
		ok "  ...every launch reads the same ($n launches in both)"
	else
		fail "  ...every launch reads the same ($n launches in both, $bad differ: ${r#* })"
	fi
	if [ "$way" != background ]; then
		cmp -s s-$way.txt w-$way.txt && ok "  ...and the same launches" || fail "  ...and the same launches"
	fi
	check_exit "  ...and replays to the fault" 1 "$GPUREDUCE" replay s-$way.bin
	check_grep "  ...in gather" "in _Z6gatherPfPKfPKxi: CUDA_ERROR_ILLEGAL_ADDRESS" "$TMP/.out"
done

# a trace shrink writes (its candidates, repro.bin) has every launch whole
check_exit "shrink of the short trace" 0 "$GPUREDUCE" shrink -j 2 -o r/repro.cu s-none.bin
n=$("$GPUREDUCE" show r/repro.bin | grep -c 'same_as_records_back:')
[ "$n" = 0 ] && ok "  ...repro.bin has no short launch" || fail "  ...repro.bin has no short launch ($n)"

finish
