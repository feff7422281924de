#!/bin/sh
# t4000-show-basic.sh - `gpureduce show` prints a trace as valid YAML with
# header, process, device, totals, kernels (by count), modules and events.
. tests/cli/test-lib.sh

cat >"$TMP/s" <<'EOF'
process 4321 /home/u python3 train.py --lr "0.1 x"
device "NVIDIA H200" 9 0 13000 12080 150754820096 132
elfmodule 7 _Z5scalePfPKfii _Z4fillPfi _Z3addPfS_
module /dev/null 8 other
alloc 0x7f0000000000 4000
alloc 0x7f0000001000 8192
h2d 0x7f0000000000 4000 rand:5
h2d 0x7f0000001000 8192 0
launch _Z4fillPfi 4 256 ptr:0x7f0000001000 i32:1000
launch _Z5scalePfPKfii 4 256 ptr:0x7f0000001000 ptr:0x7f0000000000 i32:1000 i32:2
launch _Z4fillPfi 4 256 ptr:0x7f0000000000 i32:1000
launch _Z4fillPfi 4 256 ptr:0x7f0000000000 i32:1000
note "a note: with colon"
end 0
EOF
check "mktrace writes the trace" sh -c "'$MKTRACE' '$TMP/t.bin' <'$TMP/s'"
check "show exits 0" sh -c "'$GPUREDUCE' show '$TMP/t.bin' >'$TMP/out.yaml'"
check "output is valid YAML" sh -c "'$YAMLFLAT' '$TMP/out.yaml' >'$TMP/flat'"

has() { check "has: $1" grep -qxF -- "$1" "$TMP/flat"; }
has "header/path: $TMP/t.bin"
has "header/format: 2.1"
has "header/size: $(wc -c <"$TMP/t.bin" | tr -d ' ')"
has "header/truncated: false"
check "header/created is an ISO time" grep -qE '^header/created: [0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:]{8}Z$' "$TMP/flat"
has "process/command: python3 train.py --lr '0.1 x'"
has "process/argv/3: 0.1 x"
has "process/cwd: /home/u"
has "process/pid: 4321"
has "device/name: NVIDIA H200"
has "device/cc: 9.0"
has "device/driver: 13.0"
has "device/toolkit: 12.8"
has "device/memory: 150754820096"
has "totals/records: 18"
has "totals/launches: 4"
has "totals/allocations: 2"
has "totals/allocation_bytes: 12192"
has "totals/h2d_copies: 2"
has "totals/h2d_bytes: 12192"
has "totals/blobs: 4"
has "totals/modules: 2"
has "totals/kernels: 2"
has "totals/notes: 1"
has "kernels/0/name: _Z4fillPfi"
has "kernels/0/launches: 3"
has "kernels/1/name: _Z5scalePfPKfii"
has "kernels/1/launches: 1"
has "modules/0/id: 7"
has "modules/0/kind: elf"
has "modules/0/functions: 3"
has "modules/1/id: 8"
has "modules/1/kind: other"
has "modules/1/size: 0"
has "fault: null"
has "events/0/type: PROCESS"
has "events/16/text: a note: with colon"
has "events/17/type: END"
has "events/17/launches: 4"

# blob totals agree with the BLOB events
raw=$(sed -n 's/^events\/[0-9]*\/raw_size: //p' "$TMP/flat" | awk '{s+=$1} END {print s}')
stored=$(sed -n 's/^events\/[0-9]*\/stored_size: //p' "$TMP/flat" | awk '{s+=$1} END {print s}')
has "totals/blob_raw_bytes: $raw"
has "totals/blob_stored_bytes: $stored"
check "incompressible h2d data is stored raw" grep -qx 'events/[0-9]*/codec: raw' "$TMP/flat"
check "zero-filled h2d data is stored zstd" grep -qx 'events/[0-9]*/codec: zstd' "$TMP/flat"

check "--no-events leaves out events" sh -c "'$GPUREDUCE' show --no-events '$TMP/t.bin' >'$TMP/ne.yaml'"
check "--no-events output is valid YAML" sh -c "'$YAMLFLAT' '$TMP/ne.yaml' >'$TMP/ne.flat'"
check_fail "--no-events output has no events" grep -q '^events' "$TMP/ne.flat"
check "--no-events output still has totals" grep -qxF "totals/launches: 4" "$TMP/ne.flat"
check "--help exits 0" sh -c "'$GPUREDUCE' show --help | grep -q 'usage: gpureduce show'"

# an empty trace (header only) is valid
printf '' | "$MKTRACE" "$TMP/empty.bin"
check "header-only trace shows" sh -c "'$GPUREDUCE' show '$TMP/empty.bin' | '$YAMLFLAT' >'$TMP/e.flat'"
check "header-only trace: 0 records" grep -qxF "totals/records: 0" "$TMP/e.flat"
check "header-only trace: process null" grep -qxF "process: null" "$TMP/e.flat"
check "header-only trace: events []" grep -qxF "events: []" "$TMP/e.flat"

finish
