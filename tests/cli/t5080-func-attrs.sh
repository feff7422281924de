#!/bin/sh
# t5080-func-attrs.sh - function attributes in replay and snapshots.  cuBLAS
# sets an attribute before every GEMM, so real windows hold one FUNC_ATTR
# record per launch: replay applies each kernel's records incrementally (a
# later value replaces an earlier one, launch by launch), and a snapshot
# carries only the last value of each attribute, not every setting.
. tests/cli/test-lib.sh

DBL=$BUILD/double
export GPUREDUCE_LIBCUDA=$DBL/libcuda.so.1
cd "$TMP" || exit 1

# 300 x (opt in to 64 KiB of dynamic shared memory, set attr 9, launch with
# 64 KiB), then the opt-in drops to 1 KiB and the last launch asks 64 KiB
{ cat <<EOT
process 100 /work ./app
device "gpureduce CPU double"
module $DBL/kernels.cubin 1
alloc 0x7f0000100000 4096
EOT
i=0
while [ $i -lt 300 ]; do
	echo "funcattr _Z7add_onePfi 8 65536"
	echo "funcattr _Z7add_onePfi 9 50"
	echo "launch _Z7add_onePfi 1 1 ptr:0x7f0000100000 i32:1 shmem=65536"
	i=$((i + 1))
done
echo "funcattr _Z7add_onePfi 8 1024"
echo "launch _Z7add_onePfi 1 1 ptr:0x7f0000100000 i32:1 shmem=65536"
echo "end 0"
} > attrs.txt
check "mktrace: 601 attribute settings around 301 launches" $MKTRACE attrs.bin < attrs.txt
check "the first 300 launches run: each has its opt-in" $GPUREDUCE replay --stop-before=906 attrs.bin
check_grep "  ...all 300" "ran clean (300 launches" "$TMP/.out"
check_exit "the last launch fails: the opt-in was lowered to 1 KiB before it" 3 $GPUREDUCE replay attrs.bin
check_grep "  ...with the driver's refusal" "launch #300 of _Z7add_onePfi): launch failed: CUDA_ERROR_INVALID_VALUE" "$TMP/.out"

check "snapshot before the last launch" $GPUREDUCE replay --stop-before=906 --snapshot=last.bin attrs.bin
check "show it" $GPUREDUCE show last.bin
n=$(grep -c "^  type: FUNC_ATTR" "$TMP/.out")
[ "$n" = 2 ] && ok "the snapshot holds 2 attribute records (one per attribute), not 601" || fail "$n FUNC_ATTR records"
check_grep "  ...attr 8 at its last value" "value: 1024" "$TMP/.out"
check_grep "  ...attr 9 at its last value" "value: 50" "$TMP/.out"
check "snapshot of everything before the last launch" $GPUREDUCE replay --stop-before=906 --snapshot-all --snapshot=all.bin attrs.bin
check "show it" $GPUREDUCE show all.bin
n=$(grep -c "^  type: FUNC_ATTR" "$TMP/.out")
[ "$n" = 2 ] && ok "--snapshot-all: 2 attribute records" || fail "--snapshot-all: $n FUNC_ATTR records"
finish
