#!/bin/sh
# t4010-show-ptr.sh - show annotates every 8-byte word of a launch parameter
# (and copy/memset addresses) with the captured allocation it points into,
# tracking ALLOC/FREE in event order: live, freed, reused ranges, one past
# the end, globals, pointers inside by-value structs.
. tests/cli/test-lib.sh

# events:  0 alloc#0  1 alloc#1  2 alloc#2(global)  3 launch  4 free alloc#0
#          5 launch  6 alloc#3 (reuses alloc#1's range after its free)
#          7 free alloc#1  8 alloc#3  9 launch  10 blob  11 h2d  12 memset
#          13 d2d  14 free (unknown address)
cat >"$TMP/s" <<'EOF'
alloc 0x7f0000000000 4000
alloc 0x7f0000100000 1048576
alloc 0x7f0000800000 256 global g_table
launch k0 1 32 ptr:0x7f0000000040 ptr:0x7f0000100000 i32:7 ptr:0x7f0000800010
free 0x7f0000000000
launch k1 1 32 ptr:0x7f0000000000 ptr:0x7f0000000fa0 ptr:0x7f00001fffff ptr:0x1234
alloc 0x7f0000200000 64
free 0x7f0000100000
alloc 0x7f0000100000 512
launch k2 1 32 hex:000000000000000000011000007f00000000000000000000 ptr:0x7f0000100200 u32:5 ptr:0x7f0000000010
h2d 0x7f0000100010 16 1
memset 0x7f0000200000 0 64
d2d 0x7f0000200000 0x7f0000100000 64
free 0x7f00deadbeef
EOF
check "mktrace" sh -c "'$MKTRACE' -v '$TMP/t.bin' <'$TMP/s' >'$TMP/events'"
check "event numbers as planned" grep -qx '14 FREE [0-9]*' "$TMP/events"
check "show" sh -c "'$GPUREDUCE' show '$TMP/t.bin' >'$TMP/out.yaml'"
check "valid YAML" sh -c "'$YAMLFLAT' '$TMP/out.yaml' >'$TMP/flat'"
has() { check "$1" grep -qxF -- "$1" "$TMP/flat"; }
hasnt() { check "no $1" sh -c "! grep -q -- '$1' '$TMP/flat'"; }

has "events/0/alloc: alloc#0"
has "events/2/name: g_table"
has "events/3/params/0/ptr: alloc#0+0x40 (device, 4000 bytes)"
has "events/3/params/1/ptr: alloc#1+0x0 (device, 1048576 bytes)"
has "events/3/params/2/value: 7"
hasnt "events/3/params/2/ptr"
has "events/3/params/3/ptr: alloc#2+0x10 (global g_table, 256 bytes)"
has "events/3/params/0/hex: 40000000007f0000"
has "events/4/alloc: alloc#0"
has "events/5/params/0/ptr: alloc#0+0x0 (FREED at event 4)"
has "events/5/params/1/ptr: alloc#0+0xfa0 (FREED at event 4)"
has "events/5/params/2/ptr: alloc#1+0xfffff (device, 1048576 bytes)"
hasnt "events/5/params/3/ptr"
has "events/6/alloc: alloc#3"
has "events/7/alloc: alloc#1"
has "events/8/alloc: alloc#4"
# a struct by value: the pointer word at +0x8 is found; the range reused by alloc#4
has "events/9/params/0/size: 24"
has "events/9/params/0/ptrs/0/at: +0x8"
has "events/9/params/0/ptrs/0/ptr: alloc#4+0x100 (device, 512 bytes)"
# one past the end of the live allocation counts as pointing into it
has "events/9/params/1/ptr: alloc#4+0x200 (device, 512 bytes, one past the end)"
has "events/9/params/3/ptr: alloc#0+0x10 (FREED at event 4)"
has "events/11/dst_ptr: alloc#4+0x10 (device, 512 bytes)"
has "events/12/dst_ptr: alloc#3+0x0 (device, 64 bytes)"
has "events/13/src_ptr: alloc#4+0x0 (device, 512 bytes)"
has "events/14/alloc: none (no live allocation starts here)"

# hex is capped at 64 bytes
printf 'alloc 0x7f0000000000 4000\nlaunch big 1 1 hex:%0200d ptr:0x7f0000000000\n' 0 >"$TMP/s2"
check "mktrace big param" sh -c "'$MKTRACE' '$TMP/t2.bin' <'$TMP/s2'"
check "show big param" sh -c "'$GPUREDUCE' show '$TMP/t2.bin' | '$YAMLFLAT' >'$TMP/flat2'"
check "hex shows 64 bytes then ..." grep -qxE "events/1/params/0/hex: 0{128}\.\.\." "$TMP/flat2"
check "param after the big one is annotated" grep -qxF "events/1/params/1/ptr: alloc#0+0x0 (device, 4000 bytes)" "$TMP/flat2"

finish
