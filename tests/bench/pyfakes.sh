# pyfakes.sh - sourced by the CPU benches that run the real capture library
# inside a Python program launching through ctypes (pystack-cost.sh,
# tensors-cost.sh): bench_pyfakes builds the fake CUPTI/driver
# (tests/cli/helpers/capture-fakecuda.c, as libcuda.so.1 and
# libcupti.so.13 in $TMP/fake) and the Python side's driver
# (capture-pyframes.c, $TMP/drive.so), and exports what a capture against
# them needs: LD_LIBRARY_PATH, GPUREDUCE_NO_PROGRESS=1,
# GPUREDUCE_CAPTURE_PROFILE=1 (CUDA_INJECTION64_PATH unset).  Needs TMP and
# CUDA; sets H, the helpers' folder (found from the sourcing script's own
# path: the benches may run from anywhere).  Returns non-zero when a build
# fails.
bench_pyfakes() {
	H=$(cd "$(dirname "$0")/../cli/helpers" && pwd) || return 1
	CF="-std=gnu11 -D_GNU_SOURCE -O2 -I$CUDA/include"
	mkdir -p "$TMP/fake" || return 1
	cc $CF -fPIC -shared -fvisibility=hidden -o "$TMP/fake/libfakecuda.so" "$H/capture-fakecuda.c" &&
		cc $CF -DPYFRAMES_CUPTI -fPIC -shared -fvisibility=hidden -o "$TMP/drive.so" \
			"$H/capture-pyframes.c" -ldl || return 1
	ln -s libfakecuda.so "$TMP/fake/libcuda.so.1"
	ln -s libfakecuda.so "$TMP/fake/libcupti.so.13"
	LD_LIBRARY_PATH="$TMP/fake${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
	GPUREDUCE_NO_PROGRESS=1
	GPUREDUCE_CAPTURE_PROFILE=1
	export LD_LIBRARY_PATH GPUREDUCE_NO_PROGRESS GPUREDUCE_CAPTURE_PROFILE
	unset CUDA_INJECTION64_PATH
}
