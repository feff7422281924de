#!/bin/sh
# t4050-snapshot-runs.sh - a replay snapshot (what shrink slices with)
# writes a buffer as runs: chunks that repeat one value become memsets, the
# chunks between them one H2D of bytes; the content it rebuilds is the same
# bytes the one-blob form holds.  GPUREDUCE_SNAP_CHUNK makes the read-back
# chunk 4 KiB so a 20 KiB buffer has five (on the GPU it is 64 MiB, and the
# case is a 4 GiB tensor of one value with a 2 MiB tail of zeros).
. tests/cli/test-lib.sh
cd "$TMP" || exit 1
cat > runs.txt <<'EOT'
process 1 /w ./app
alloc 0x7f0000100000 20480
memset 0x7f0000100000 0x3e00 10240 2
memset 0x7f0000101000 0 4096 1
h2d 0x7f0000104040 64 rand:7
launch _Z4takePf 1 32 ptr:0x7f0000100000
EOT
check "mktrace: one buffer of 1.5s (fp16), zeros in chunk 1, noise in chunk 4" $MKTRACE runs.bin < runs.txt
export GPUREDUCE_LIBCUDA=$BUILD/double/libcuda.so.1
check "snapshot in 4 KiB chunks" env GPUREDUCE_SNAP_CHUNK=4096 $GPUREDUCE replay --stop-before=6 --snapshot=snap.bin runs.bin
check "show it" $GPUREDUCE show snap.bin
cp "$TMP/.out" snap.yaml
# the records in order: memset (chunk 0), memset zeros (1), memset (2-3), bytes (4)
recs=$(awk '/^- event:/ { on = 0 } /^  type: (MEMSET|MEMCPY_H2D)$/ { on = 1 }
	on && /^  (type|dst|value|width|size):/ { sub(/^  /, ""); printf "%s ", $0 }' snap.yaml)
want="type: MEMSET dst: 0x7f0000100000 value: 0x3e00 width: 2048 type: MEMSET dst: 0x7f0000101000 value: 0x0 width: 4096 type: MEMSET dst: 0x7f0000102000 value: 0x3e00 width: 4096 type: MEMCPY_H2D dst: 0x7f0000104000 size: 4096 "
if [ "$recs" = "$want" ]; then ok "runs: three memsets (adjacent equal chunks merged) and one 4 KiB blob"
else fail "runs: got '$recs', want '$want'"; fi
n=$(grep -c "^  type: BLOB" snap.yaml)
[ "$n" = 1 ] && ok "one blob stored, not the buffer's 20 KiB" || fail "$n blobs in the snapshot"

# Same content: the one-chunk snapshots of the original and of the runs
# snapshot store one blob each, and content addressing makes them equal.
check "one-chunk snapshot of the original" $GPUREDUCE replay --stop-before=6 --snapshot=whole1.bin runs.bin
check "show it" $GPUREDUCE show whole1.bin
h1=$(sed -n 's/^  blob: "\(.*\)"/\1/p' "$TMP/.out")
ev=$(grep -B1 "^  type: END" snap.yaml | sed -n 's/^- event: //p')
check "one-chunk snapshot of every buffer of the runs snapshot (at its END, $ev)" \
	$GPUREDUCE replay --stop-before="$ev" --snapshot=whole2.bin --snapshot-all snap.bin
check "show it" $GPUREDUCE show whole2.bin
h2=$(sed -n 's/^  blob: "\(.*\)"/\1/p' "$TMP/.out")
if [ -n "$h1" ] && [ "$h1" = "$h2" ]; then ok "the runs rebuild the same 20480 bytes (blob $h1)"
else fail "content differs: original blob '$h1', rebuilt '$h2'"; fi

# one value throughout: one memset, no blob
cat > one.txt <<'EOT'
process 1 /w ./app
alloc 0x7f0000100000 20480
memset 0x7f0000100000 0 20480 1
launch _Z4takePf 1 32 ptr:0x7f0000100000
EOT
check "mktrace: a zeroed buffer" $MKTRACE one.bin < one.txt
check "snapshot" env GPUREDUCE_SNAP_CHUNK=4096 $GPUREDUCE replay --stop-before=3 --snapshot=one-snap.bin one.bin
check "show it" $GPUREDUCE show one-snap.bin
n=$(grep -c "^  type: MEMSET" "$TMP/.out"); b=$(grep -c "^  type: BLOB" "$TMP/.out")
[ "$n" = 1 ] && [ "$b" = 0 ] && ok "zeros throughout: one memset, no blob" || fail "zeros: $n memsets, $b blobs"
finish
