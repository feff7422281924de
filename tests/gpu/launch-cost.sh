#!/bin/bash
# launch-cost.sh - capture's cost a launch on the GPU host without Python
# (issue 26): tests/gpu/launch-cost.cu run several ways side by side,
# LC_ROUNDS rounds, the ways' order turned each round:
#   plain     CUDA_LAUNCH_BLOCKING=1
#   capture   gpureduce capture --blocking=driver (its trace under $BUILD;
#             CUDA_LAUNCH_BLOCKING=1, capture's default before 2026-12-07)
#   shm       the capture way (--blocking=driver), the trace in /dev/shm
#             (page cache, no disk)
#   dispatch  capture with GPUREDUCE_CAPTURE_ABLATE=dispatch: CUPTI's
#             dispatch and the driver's traced path, the library idle
#   nobytes   capture with GPUREDUCE_CAPTURE_ABLATE=nobytes
#   library   capture --blocking=library, the default (the library waits for each
#             launch, recording it while the kernel runs)
# and once with GPUREDUCE_CAPTURE_PROFILE=1 (the library's own time a
# launch).  Two workloads: launches alone (LC_N), and the same with a
# pageable COPY_KB (768) KiB copy in every 364 launches (a host-fed step).
# Prints us a launch per way (median over rounds) and the ratio to plain;
# the ratios are reported, not asserted: a workload passes when every run
# printed its time.  Ends with "N passed, N failed".
# Usage: tests/gpu/launch-cost.sh    (BUILD and CUDA from make)
# Env:   LC_N (200000 launches a run), LC_ROUNDS (3), COPY_KB (768).
# Each run is cut at 120 s (a run cut prints no time: its workload fails).
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
N=${LC_N:-200000}
ROUNDS=${LC_ROUNDS:-3}
W=$BUILD/launch-cost
mkdir -p "$W" || exit 2
[ -x "$GR" ] || { echo "launch-cost: $GR is missing: run make first"; echo "0 passed, 1 failed"; exit 2; }
"$CUDA/bin/nvcc" -O2 -o "$W/lc" "$GR_ROOT/tests/gpu/launch-cost.cu" >"$W/nvcc.log" 2>&1 ||
	{ echo "launch-cost: nvcc failed (see $W/nvcc.log)"; echo "0 passed, 1 failed"; exit 2; }
one() {	# WAY WORKLOAD -> prints us a launch
	local way=$1 wl=$2 env_copy=
	[ "$wl" = copies ] && env_copy="COPY_EVERY=364"
	case $way in
	plain) timeout 120 env $env_copy CUDA_LAUNCH_BLOCKING=1 "$W/lc" "$N" ;;
	capture) timeout 120 env $env_copy "$GR" capture --blocking=driver -o "$W/t.bin" -- "$W/lc" "$N" 2>/dev/null ;;
	shm) timeout 120 env $env_copy "$GR" capture --blocking=driver -o /dev/shm/lc-t.bin -- "$W/lc" "$N" 2>/dev/null
		rm -f /dev/shm/lc-t.bin* ;;
	library) timeout 120 env $env_copy "$GR" capture --blocking=library -o "$W/t.bin" -- "$W/lc" "$N" 2>/dev/null ;;
	dispatch|nobytes) timeout 120 env $env_copy GPUREDUCE_CAPTURE_ABLATE=$way "$GR" capture --blocking=driver -o "$W/t.bin" \
			-- "$W/lc" "$N" 2>/dev/null ;;
	esac | sed -n 's/.*: \([0-9.]*\) us each.*/\1/p'
	rm -f "$W"/t.bin*
}
WAYS="plain capture library shm dispatch nobytes"
PASSED=0 FAILED=0
for wl in launches copies; do
	declare -A R=()
	for r in $(seq 1 "$ROUNDS"); do
		set -- $WAYS; [ $((r % 2)) = 0 ] && set -- $(echo $WAYS | tr ' ' '\n' | tac)
		for way; do R[$way]="${R[$way]:-} $(one "$way" "$wl")"; done
	done
	echo "launch-cost: $wl ($N launches$([ "$wl" = copies ] && echo ", ${COPY_KB:-768} KiB in every 364"), $ROUNDS rounds), us a launch:"
	for way in $WAYS; do
		med=$(echo ${R[$way]} | tr ' ' '\n' | sort -n | sed -n "$(( (ROUNDS + 1) / 2 ))p")
		echo "  $way: ${R[$way]} (median $med)"
		echo "$way $med" >> "$W/med-$wl"
	done
	awk '{m[$1]=$2} END{p=m["plain"]; for (w in m) if (w!="plain" && p>0) printf "  %s over plain: %.2fx (+%.2f us)\n", w, m[w]/p, m[w]-p}' "$W/med-$wl" | sort
	if [ "$(grep -c ' [0-9.][0-9.]*$' "$W/med-$wl")" -eq "$(echo $WAYS | wc -w)" ] &&
		[ "$(echo ${R[*]} | wc -w)" -eq $(( ROUNDS * $(echo $WAYS | wc -w) )) ]; then
		PASSED=$((PASSED + 1))
	else
		FAILED=$((FAILED + 1)); echo "  (some runs printed no time)"
	fi
	rm -f "$W/med-$wl"
	unset R
	echo "  the library's own time (one profiled capture):"
	timeout 120 env $([ "$wl" = copies ] && echo COPY_EVERY=364) GPUREDUCE_CAPTURE_PROFILE=1 "$GR" capture --blocking=driver -o "$W/t.bin" -- "$W/lc" "$N" 2>&1 |
		grep -a 'capture profile: \(driver callbacks\|launch callback\|  *python\|  *parameter\|  *record\|  *managed\|  *dispatch\|h2d\|  *hash\|  *compress\|other\)' | sed 's/.*capture profile: /    /'
	rm -f "$W"/t.bin*
done
echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ]
