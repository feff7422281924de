#!/bin/bash
# shrink-pair.sh - shrink's seconds, two ways side by side on the same
# traces (issue 26 item 4: the median under 5 s).  Each trace is shrunk
# alone, once by way A and once by way B, A first for odd rounds and B
# first for even ones (so a machine that warms up or slows down does not
# favour one), with nothing else running.  A way is a command that takes
# gpureduce's arguments: another build's binary, or this one under an
# environment switch.  Prints one row per trace and round and, at the end,
# each way's median and maximum seconds and its median faulting replays
# (repro.yaml's faulted_replays, which predict a GPU shrink's seconds:
# docs/SHRINK-PHASES.md).  A shrink that emits no repro.cu, or whose
# repro.cu faults in fewer of its runs than the other way's, is marked.
#
# Usage: tests/gpu/shrink-pair.sh [-r ROUNDS] [-o OUTDIR] TRACE...
#   TRACE: a trace.bin, or a gpu-test work dir holding one (NAME/trace.bin)
# Env:   PAIR_A (default: $BUILD/gpureduce), PAIR_B (default: PAIR_A with
#        GPUREDUCE_VERIFY_RECALL=1; none: way A alone, each trace shrunk
#        once a round, for seconds over many traces), PAIR_A_NAME, PAIR_B_NAME (the column
#        titles), PAIR_JOBS (shrink -j; default shrink's own),
#        PAIR_DEADLINE (seconds for the whole run, default 600: a trace
#        not started by then is left out, and says so)
# Example (this build against an older one carried in .dev/):
#   PAIR_B=.dev/old-gpureduce tests/gpu/shrink-pair.sh build/gpu-test/*/
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

ROUNDS=1
OUTDIR=$BUILD/shrink-pair
while [ $# -gt 0 ]; do
	case $1 in
	-r) ROUNDS=$2; shift 2 ;;
	-o) OUTDIR=$2; shift 2 ;;
	--) shift; break ;;
	-*) echo "shrink-pair: unknown option $1 (see the comment at the top)"; exit 2 ;;
	*) break ;;
	esac
done
[ $# -gt 0 ] || { echo "usage: shrink-pair.sh [-r ROUNDS] [-o OUTDIR] TRACE..."; exit 2; }
A=${PAIR_A:-$GR}
B=${PAIR_B:-env GPUREDUCE_VERIFY_RECALL=1 $A}
AN=${PAIR_A_NAME:-A}
BN=${PAIR_B_NAME:-B}
gr_deadline_set "${PAIR_DEADLINE:-600}"
mkdir -p "$OUTDIR" || { echo "shrink-pair: cannot create $OUTDIR"; exit 2; }
log "shrink-pair: $AN = $A; $BN = $B; $ROUNDS round(s); out $OUTDIR"

# one_way NAME WAY TRACE DIR: shrink TRACE by WAY into DIR; prints
# "seconds faulted repro" (repro: shrink's repro.cu figure, e.g. 5/5, or -);
# the pool's worker starts, readies and jobs go to DIR/pool.log
one_way() {
	local way=$2 trace=$3 d=$4 t0 s f r
	rm -rf "$d"; mkdir -p "$d"
	t0=$(now)
	# shellcheck disable=SC2086   # a way is a command line
	GPUREDUCE_POOL_LOG="$d/pool.log" timeout "$(gr_step_timeout 300)" $way shrink ${PAIR_JOBS:+-j $PAIR_JOBS} --quiet \
		--log="$d/shrink.log" -o "$d/repro.cu" "$trace" >"$d/out.txt" 2>&1
	s=$(secs_since "$t0")
	f=$(sed -n 's/^faulted_replays: //p' "$d/repro.yaml" 2>/dev/null | head -n 1)
	r=$(sed -n 's/^  repro_cu: //p' "$d/repro.yaml" 2>/dev/null | head -n 1)
	echo "$s ${f:--} ${r:--}"
}

ROWS=$OUTDIR/rows.txt
: >"$ROWS"
printf '%-22s %5s  %-26s %-26s\n' trace round "$AN: s, faulted, repro" "$BN: s, faulted, repro"
for arg in "$@"; do
	trace=$arg
	[ -d "$trace" ] && trace=$trace/trace.bin
	[ -f "$trace" ] || { echo "shrink-pair: $trace: no such trace"; continue; }
	name=$(basename "$(dirname "$trace")")
	[ "$(basename "$trace")" = trace.bin ] || name=$(basename "$trace" .bin)
	for r in $(seq 1 "$ROUNDS"); do
		if [ "$(gr_time_left)" -le 20 ]; then
			echo "$name: left out, the deadline came"
			continue
		fi
		if [ "$B" = none ]; then
			ra=$(one_way "$AN" "$A" "$trace" "$OUTDIR/$name-$r-a")
			rb="- - none"
		elif [ $((r % 2)) -eq 1 ]; then
			ra=$(one_way "$AN" "$A" "$trace" "$OUTDIR/$name-$r-a")
			rb=$(one_way "$BN" "$B" "$trace" "$OUTDIR/$name-$r-b")
		else
			rb=$(one_way "$BN" "$B" "$trace" "$OUTDIR/$name-$r-b")
			ra=$(one_way "$AN" "$A" "$trace" "$OUTDIR/$name-$r-a")
		fi
		mark=""
		set -- $ra; sa=$1 fa=$2 pa=$3
		set -- $rb; sb=$1 fb=$2 pb=$3
		[ "$pa" = - ] && mark="$mark $AN emitted no repro.cu;"
		[ "$pb" = - ] && mark="$mark $BN emitted no repro.cu;"
		[ "$pa" != - ] && [ "$pb" != - ] && [ "$pb" != none ] && [ "${pa%%/*}" -lt "${pb%%/*}" ] && mark="$mark $AN's repro.cu faulted less;"
		[ "$pa" != - ] && [ "$pb" != - ] && [ "$pb" != none ] && [ "${pb%%/*}" -lt "${pa%%/*}" ] && mark="$mark $BN's repro.cu faulted less;"
		printf '%-22s %5s  %-26s %-26s%s\n' "$name" "$r" "$sa, $fa, $pa" "$sb, $fb, $pb" "$mark"
		echo "$name $r $sa $fa $pa $sb $fb $pb" >>"$ROWS"
	done
done

# median and max of column C of the rows
stat_col() {
	awk -v c="$1" '{ print $c }' "$ROWS" | grep -v '^-$' | sort -g |
		awk '{ v[NR] = $1 } END { if (!NR) { print "- -"; exit }
			m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
			printf "%.2f %.2f\n", m, v[NR] }'
}
set -- $(stat_col 3); ma=$1 xa=$2
set -- $(stat_col 6); mb=$1 xb=$2
set -- $(stat_col 4); fa=$1
set -- $(stat_col 7); fb=$1
n=$(wc -l <"$ROWS")
echo "shrink-pair: $n shrink(s) each way; $AN: median $ma s, max $xa s, median faulted replays $fa; $BN: median $mb s, max $xb s, median faulted replays $fb"
