#!/bin/sh
# t4030-show-errors.sh - show on damaged and unusual traces: a torn last
# record is shown with `truncated: true` (exit 0); corruption anywhere else,
# a missing or foreign file, or a newer major version is one line naming the
# file (and byte offset) with exit 3; newer minors and hostile strings still
# give valid YAML.
. tests/cli/test-lib.sh

has() { check "$1" grep -qxF -- "$1" "$2"; }
# one_line DESC PATTERN: the last check's output is one line matching PATTERN
one_line() {
	cp "$TMP/.out" "$TMP/err"
	check "$1" sh -c "test \$(wc -l <'$TMP/err') -eq 1 && grep -q -- \"\$0\" '$TMP/err'" "$2"
}

cat >"$TMP/s" <<'EOF'
process 1 / prog
alloc 0x7f0000000000 4000
launch k 1 32 ptr:0x7f0000000000
end 0
EOF
check "mktrace" sh -c "'$MKTRACE' -v '$TMP/t.bin' <'$TMP/s' >'$TMP/ev'"
off1=$(sed -n 's/^1 ALLOC //p' "$TMP/ev")
off3=$(sed -n 's/^3 END //p' "$TMP/ev")

# --- torn last record: lenient, exit 0 ---
cp "$TMP/t.bin" "$TMP/tr.bin"
head -c $(( $(wc -c <"$TMP/t.bin") - 5 )) "$TMP/t.bin" >"$TMP/tr.bin"
check_exit "truncated trace: exit 0" 0 sh -c "'$GPUREDUCE' show '$TMP/tr.bin' >'$TMP/tr.yaml' 2>'$TMP/tr.err'"
check "truncated trace: valid YAML" sh -c "'$YAMLFLAT' '$TMP/tr.yaml' >'$TMP/tr'"
has "header/truncated: true" "$TMP/tr"
check "truncated_message names the byte" grep -qxF "header/truncated_message: $TMP/tr.bin: truncated at byte $off3: END record claims 28 bytes, 23 left" "$TMP/tr"
has "totals/records: 3" "$TMP/tr"
has "events/2/params/0/ptr: alloc#0+0x0 (device, 4000 bytes)" "$TMP/tr"
check "truncated trace: warning on stderr" grep -q "warning: .*truncated at byte $off3" "$TMP/tr.err"

printf 'process 1 / prog\nalloc 0x7f0000000000 4000\ntruncate -3\n' | "$MKTRACE" "$TMP/tr2.bin"
check_exit "record header cut: exit 0" 0 sh -c "'$GPUREDUCE' show '$TMP/tr2.bin' | '$YAMLFLAT' >'$TMP/tr2'"
has "header/truncated: true" "$TMP/tr2"
has "totals/records: 1" "$TMP/tr2"

printf 'process 1 / prog\nnote hello\npoke -1 00\n' | "$MKTRACE" "$TMP/torn.bin"
check_exit "bad checksum on the last record: exit 0" 0 sh -c "'$GPUREDUCE' show '$TMP/torn.bin' | '$YAMLFLAT' >'$TMP/torn'"
has "header/truncated: true" "$TMP/torn"
check "  ... says torn write" grep -q "^header/truncated_message: .*bad checksum (torn write)" "$TMP/torn"

# --- corruption elsewhere: exit 3, one line with file and offset ---
cp "$TMP/t.bin" "$TMP/c.bin"
# zero the low byte of the ALLOC record's size (4000 = a0 0f): event 1
dd if=/dev/zero of="$TMP/c.bin" bs=1 seek=$((off1 + 16 + 8)) count=1 conv=notrunc 2>/dev/null
check_exit "checksum mismatch mid-file: exit 3" 3 "$GPUREDUCE" show "$TMP/c.bin"
one_line "  ... one line: file, byte, record" "^gpureduce show: $TMP/c.bin: corrupt record at byte $off1: checksum mismatch in ALLOC record\$"

printf 'process 1 / prog\nraw 5 0011\nend\n' | "$MKTRACE" -v "$TMP/short.bin" >"$TMP/sev"
offs=$(sed -n 's/^1 ALLOC //p' "$TMP/sev")
check_exit "field past its payload: exit 3" 3 "$GPUREDUCE" show "$TMP/short.bin"
one_line "  ... names field and byte" "$TMP/short.bin: corrupt ALLOC record at byte $offs: field alloc.addr runs past"

check_exit "missing file: exit 3" 3 "$GPUREDUCE" show "$TMP/nope.bin"
one_line "  ... one line naming the file" "^gpureduce show: $TMP/nope.bin: cannot open trace"
echo "hello world, not a trace at all" >"$TMP/txt"
check_exit "not a trace: exit 3" 3 "$GPUREDUCE" show "$TMP/txt"
one_line "  ... says so" "$TMP/txt: not a gpureduce trace"
: >"$TMP/empty"
check_exit "empty file: exit 3" 3 "$GPUREDUCE" show "$TMP/empty"
one_line "  ... says empty" "$TMP/empty: empty file"
check_exit "directory: exit 3" 3 "$GPUREDUCE" show "$TMP"
head -c 20 "$TMP/t.bin" >"$TMP/hdr"
check_exit "header cut short: exit 3" 3 "$GPUREDUCE" show "$TMP/hdr"
one_line "  ... names the byte" "$TMP/hdr: truncated at byte 20"
printf 'note x\nversion 3 0\n' | "$MKTRACE" "$TMP/v3.bin"
check_exit "newer major: exit 3" 3 "$GPUREDUCE" show "$TMP/v3.bin"
one_line "  ... says upgrade" "trace format 3.0 is newer than this gpureduce reads"

# --- newer minor: unknown record types are skipped and shown as UNKNOWN(n) ---
printf 'note before\nraw 42 0102030405\nnote after\nversion 2 9\n' | "$MKTRACE" "$TMP/v17.bin"
check_exit "newer minor: exit 0" 0 sh -c "'$GPUREDUCE' show '$TMP/v17.bin' | '$YAMLFLAT' >'$TMP/v17'"
has "header/format: 2.9" "$TMP/v17"
has "events/1/type: UNKNOWN(42)" "$TMP/v17"
has "events/2/text: after" "$TMP/v17"
has "totals/unknown_records: 1" "$TMP/v17"

# --- hostile strings: invalid UTF-8, control characters, YAML look-alikes ---
#     NOTE payloads: u32 length + bytes
cat >"$TMP/s3" <<'EOF'
raw 15 05000000fffe41c328
raw 15 0b0000006c696e65310a09780d00
note true
note 0x10
note "- [a]: {b} # c"
launch 123 1 1
elfmodule 1 f
EOF
check "mktrace hostile strings" sh -c "'$MKTRACE' '$TMP/h.bin' <'$TMP/s3'"
check_exit "show with a malformed NOTE: exit 3" 3 "$GPUREDUCE" show "$TMP/h.bin"
sed -i 's/^raw 15 0b0000006c696e65310a09780d00$/raw 15 080000006c696e65310a0978/' "$TMP/s3"
check "mktrace hostile strings (fixed)" sh -c "'$MKTRACE' '$TMP/h.bin' <'$TMP/s3'"
check_exit "show hostile strings: exit 0" 0 sh -c "'$GPUREDUCE' show '$TMP/h.bin' >'$TMP/h.yaml'"
check "  ... valid YAML" sh -c "'$YAMLFLAT' '$TMP/h.yaml' >'$TMP/h'"
has 'events/0/text: \xff\xfeA\xc3(' "$TMP/h"
has 'events/1/text: line1\n	x' "$TMP/h"
has "events/2/text: true" "$TMP/h"
check "  ... \"true\" stays a string" grep -qx '  text: "true"' "$TMP/h.yaml"
check "  ... \"0x10\" stays a string" grep -qx '  text: "0x10"' "$TMP/h.yaml"
has "events/4/text: - [a]: {b} # c" "$TMP/h"
check "  ... kernel \"123\" stays a string" grep -qx '  kernel: "123"' "$TMP/h.yaml"

# --- blobs that do not decode are reported inside the YAML ---
printf 'not an elf image\n' >"$TMP/notelf"
cat >"$TMP/s4" <<EOF
raw 4 0100000001000000efbeadde000000001000000000000000
module $TMP/notelf 2 elf
EOF
check "mktrace bad modules" sh -c "'$MKTRACE' '$TMP/m.bin' <'$TMP/s4'"
check_exit "show bad modules: exit 0" 0 sh -c "'$GPUREDUCE' show '$TMP/m.bin' | '$YAMLFLAT' >'$TMP/m'"
check "missing module blob reported" grep -q "^modules/0/error: .*blob 00000000deadbeef is referenced but not stored" "$TMP/m"
has "events/0/blob_missing: true" "$TMP/m"
has "modules/1/error: not an ELF image" "$TMP/m"

# --- enum values from a newer minor are passed through as unknown(n) ---
printf 'alloc 0x7f0000000000 64 9\nlaunch k 1 1 api=7 py=5\nraw 4 01000000090000000000000000000000000000000000000000\n' >"$TMP/s5"
check "mktrace unknown enums" sh -c "'$MKTRACE' '$TMP/u.bin' <'$TMP/s5'"
check_exit "show unknown enums: exit 0" 0 sh -c "'$GPUREDUCE' show '$TMP/u.bin' | '$YAMLFLAT' >'$TMP/u'"
has "events/0/kind: unknown(9)" "$TMP/u"
has "events/1/api: unknown(7)" "$TMP/u"
has "events/1/python: unknown(5)" "$TMP/u"
has "modules/0/kind: unknown(9)" "$TMP/u"

finish
