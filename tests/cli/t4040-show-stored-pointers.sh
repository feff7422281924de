#!/bin/sh
# t4040-show-stored-pointers.sh - pointer arrays in device memory: show lists
# the words of copied bytes that point into captured allocations, and a
# replay snapshot (what shrink slices with) carries the buffers they reach,
# through the CPU driver double.
. tests/cli/test-lib.sh
cd "$TMP" || exit 1
cat > ptrs.txt <<'EOT'
process 1 /w ./app
alloc 0x7f0000100000 4096
alloc 0x7f0000200000 4096
alloc 0x7f0000300000 64
h2d 0x7f0000300000 64 u64:0x7f0000100000,0x7f0000200010,0x1234,0x7f0000201000
launch _Z4takePPf 1 32 ptr:0x7f0000300000
EOT
check "mktrace with a pointer array" $MKTRACE ptrs.bin < ptrs.txt
check "show" $GPUREDUCE show ptrs.bin
cp "$TMP/.out" show.yaml
check_grep "first stored pointer named" "+0x0: alloc#0+0x0 (device, 4096 bytes)" show.yaml
check_grep "interior pointer named" "+0x8: alloc#1+0x10 (device, 4096 bytes)" show.yaml
check_grep "one-past-the-end pointer named" "+0x18: alloc#1+0x1000 (device, 4096 bytes, one past the end)" show.yaml
check_grep "the scalar 0x1234 is not a pointer" "stored_pointers_total: 3" show.yaml

# The snapshot of what the launch reaches follows the stored pointers.
export GPUREDUCE_LIBCUDA=$BUILD/double/libcuda.so.1
check "replay to the launch and snapshot what it reaches" $GPUREDUCE replay --stop-before=6 --snapshot=snap.bin ptrs.bin
check "show the snapshot" $GPUREDUCE show snap.bin
cp "$TMP/.out" snap.yaml
n=$(grep -c "type: ALLOC" snap.yaml)
if [ "$n" = 3 ]; then ok "the snapshot holds the array and both buffers it points to"
else fail "the snapshot holds $n buffers, want 3"; fi
check_grep "the array's contents travel with it" "stored_pointers_total: 3" snap.yaml
finish
