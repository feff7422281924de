#!/bin/bash
# demo.sh - `make demo`, the README's walk-through on a GPU machine: take
# samples/oob-write from a crash to a standalone repro, printing every
# command ("+ ...") before it runs and ending with the repro's own output.
#
#   build the sample, gpureduce capture, gpureduce show --fault,
#   gpureduce shrink, nvcc the emitted repro.cu, run the repro.
#
# Work dir: ${DEMO_OUT:-$BUILD/demo}.  Exit status 0 when the repro
# reproduced the fault (it exits 1 and names the error), 1 otherwise.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

SAMPLE=$GR_ROOT/samples/oob-write
OUT=${DEMO_OUT:-$BUILD/demo}
case $OUT in /*) ;; *) OUT=$GR_ROOT/$OUT ;; esac

# the sample's build and run commands: from sample.yaml when sampleinfo is
# there, else the same values written out
if ! { [ -x "$SAMPLEINFO" ] && load_sample "$SAMPLE/sample.yaml"; }; then
	BUILD_CMD="nvcc -O2 -arch=sm_90 -o oob-write oob-write.cu"
	RUN="./oob-write"
	EXPECT_ERRORS="CUDA_ERROR_ILLEGAL_ADDRESS CUDA_ERROR_INVALID_ADDRESS_SPACE"
fi

# show: print a command the way a user would type it (paths relative to the
# repository), then run it (under a DEMO_STEP_TIMEOUT, 180 s); sets RC.
show() {
	local shown=" $*"
	shown=${shown// $GR / gpureduce }
	shown=${shown// $NVCC / nvcc }
	shown=${shown//$GR_ROOT\//}
	printf '+%s\n' "$shown"
	timeout -k 10 "${DEMO_STEP_TIMEOUT:-180}" "$@"
	RC=$?
}

die() {
	echo "demo: $*"
	exit 1
}

# have_driver: is there an NVIDIA driver (libcuda.so.1) to run the sample on?
have_driver() {
	local ldc
	for ldc in ldconfig /sbin/ldconfig /usr/sbin/ldconfig; do
		command -v "$ldc" >/dev/null 2>&1 || [ -x "$ldc" ] || continue
		"$ldc" -p 2>/dev/null | grep -q 'libcuda\.so\.1 ' && return 0
	done
	local d
	for d in /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/lib/wsl/lib ${LD_LIBRARY_PATH:+${LD_LIBRARY_PATH//:/ }}; do
		[ -e "$d/libcuda.so.1" ] && return 0
	done
	return 1
}

exec 2>&1     # one stream, so that the output reads in order
[ -x "$GR" ] || die "$GR is missing: run make first"
have_driver || die "no NVIDIA driver on this machine (libcuda.so.1 not found): make demo runs a real CUDA program on a GPU. Without one, make test runs the whole CPU suite, and its end-to-end tests shrink crashes on a CPU stand-in for the driver"
command -v "$NVCC" >/dev/null 2>&1 || die "nvcc not found (CUDA=$CUDA): make demo builds the sample with it; pass CUDA=/path/to/cuda"
rm -rf -- "$OUT"
mkdir -p "$OUT/repro" || die "cannot create $OUT"
export PATH="$BUILD:$PATH"   # so that the printed `gpureduce` is the one run

echo "# A CUDA program that crashes: $(sed -n 's/^story: //p' "$SAMPLE/sample.yaml")"
echo "+ cd samples/oob-write"
cd "$SAMPLE" || die "no $SAMPLE"
echo "+ $BUILD_CMD"
timeout -k 10 "${DEMO_STEP_TIMEOUT:-180}" bash -c "$BUILD_CMD"
RC=$?
[ "$RC" -eq 0 ] || die "building the sample failed (exit $RC)"
show "$GR" capture -o "$OUT/trace.bin" -- $RUN
echo "# (exit $RC: the program's own exit status)"
[ -s "$OUT/trace.bin" ] || die "capture wrote no trace"
echo "+ cd ../.."
cd "$GR_ROOT" || die "no $GR_ROOT"
show "$GR" show --fault "$OUT/trace.bin"
[ "$RC" -eq 0 ] || echo "# (show exited $RC)"
show "$GR" shrink "$OUT/trace.bin" -o "$OUT/repro/repro.cu"
[ "$RC" -eq 0 ] && [ -s "$OUT/repro/repro.cu" ] || die "shrink emitted no repro (exit $RC)"
echo "# $(wc -l <"$OUT/repro/repro.cu") lines of standalone CUDA, driver API only:"
head -n 15 "$OUT/repro/repro.cu" | sed 's/^/#   /'
show "$NVCC" -o "$OUT/repro/repro" "$OUT/repro/repro.cu" -lcuda
if [ "$RC" -ne 0 ]; then
	echo "# (link failed; once more against the toolkit's libcuda stub)"
	show "$NVCC" -o "$OUT/repro/repro" "$OUT/repro/repro.cu" -L"$CUDA/lib64/stubs" -lcuda
	[ "$RC" -eq 0 ] || die "nvcc could not build repro.cu (exit $RC)"
fi
show "$OUT/repro/repro" >"$OUT/repro/run.log" 2>&1
cat "$OUT/repro/run.log"
echo "# (repro exit $RC)"
if [ "$RC" -eq 1 ] && grep -q -E "${EXPECT_ERRORS// /|}" "$OUT/repro/run.log"; then
	echo "demo: the repro reproduces the fault"
	exit 0
fi
echo "demo: the repro did NOT reproduce the fault"
exit 1
