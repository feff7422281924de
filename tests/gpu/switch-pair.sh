#!/bin/bash
# switch-pair.sh - one device call's worth (issue 26, shrink's median):
# gpu-test on every sample but the two long ones (or CALL_GPUTEST_SAMPLES;
# CALL_NO_GPUTEST=1 skips it), then shrink alone, this build against each
# of its measurement switches or older builds in CALL_WAYS (sao4:
# GPUREDUCE_POOL_START_AT_ONCE=4; rev:REV: .dev/REV-gpureduce, built here
# by tests/gpu/build-rev.sh REV), on gpu-test's traces (CALL_PAIR_SAMPLES),
# with each shrink's pool log, all under CALL_DEADLINE seconds (570), the
# last CALL_PAIR_S (170) of them left to the pairs.  Logs under $OUT/<part>/.
#   CALL_DEADLINE=565 bash tests/gpu/switch-pair.sh      (carry build)
#   CALL_WAYS=rev:9b4f260 CALL_PAIR_SAMPLES="device-counter int32-overflow" \
#     bash tests/gpu/switch-pair.sh                      (carry build and .dev)
export PATH=/opt/torch/.venv/bin:/usr/local/cuda/bin:$PATH
cd "$(dirname "$0")/../.." || exit 2
G=$PWD/build/gpureduce
O=${OUT:-$PWD/build/session}
T0=$(date +%s)
left() { echo $(( ${CALL_DEADLINE:-570} - ($(date +%s) - T0) )); }
nvidia-smi --query-gpu=name,serial,driver_version --format=csv,noheader
if [ -z "${CALL_NO_GPUTEST:-}" ]; then
	S=${CALL_GPUTEST_SAMPLES:-$(ls samples | grep -v -e README -e torchvision-long -e ddp-train | tr "\n" " ")}
	OUT=$O/gputest SESSION_DEADLINE=$(( $(left) - ${CALL_PAIR_S:-170} )) SESSION_GPUTEST_SAMPLES="$S" \
		BUILD=build CUDA=/usr/local/cuda bash tests/gpu/device-session.sh gputest:4 2>&1 | tail -45
fi
P=${CALL_PAIR_SAMPLES:-"oob-write use-after-free shared-overflow device-global lineinfo-assert zero-copy nvrtc-oob cuda-graph uva-table tensor-overrun index-assert triton-mask managed-index ipc-table"}
for way in ${CALL_WAYS:-sao4}; do
	[ "$(left)" -gt 40 ] || break
	name=$way
	case $way in
	sao4) b="env GPUREDUCE_POOL_START_AT_ONCE=4 $G" ;;
	rev:*) name=${way#rev:}; b=$PWD/.dev/$name-gpureduce
		[ -x "$b" ] || { echo "switch-pair: $b missing (tests/gpu/build-rev.sh $name, and carry .dev)"; continue; } ;;
	*) echo "switch-pair: unknown way $way"; continue ;;
	esac
	OUT=$O/$name SESSION_DEADLINE=$(( $(left) - 10 )) SESSION_PAIR_SAMPLES="$P" SESSION_PAIR_OUT=pair-$name \
		PAIR_A_NAME=default PAIR_B_NAME=$name PAIR_B="$b" \
		BUILD=build CUDA=/usr/local/cuda bash tests/gpu/device-session.sh pair 2>&1 | tail -4
	cat build/pair-$name/rows.txt 2>/dev/null
done
