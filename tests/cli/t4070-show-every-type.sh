#!/bin/sh
# t4070-show-every-type.sh - every record type of trace/records.def (the
# table is read here, so a type added to it is covered without editing this
# test) can be written by mktrace's generic `rec` and is read back and shown
# by name, with its plain fields as the table says; `rec` refuses what the
# table does not have.
. tests/cli/test-lib.sh

# NAME of every row that tw_record writes (the last column is 1)
sed -n 's/^[[:space:]]*X(\([A-Z0-9_]*\), *[0-9]*, *[a-z_]*, *[a-z0-9_]*, *1).*/\1/p' \
	trace/records.def >"$TMP/types"
n=$(wc -l <"$TMP/types" | tr -d ' ')
[ "$n" -ge 27 ] && ok "records.def lists $n types tw_record writes" || fail "records.def: $n types read"

# all fields 0 or "", but where a bound check (a CHECK row) refuses that
while read -r t; do
	case $t in
	MEMSET) echo "rec $t elem_size=1" ;;
	*) echo "rec $t" ;;
	esac
done <"$TMP/types" >"$TMP/s"
# an unknown (reserved) type between them, as a newer writer would leave it
echo "raw 23 01020304" >>"$TMP/s"
echo "rec END exit_code=-6 launches=3" >>"$TMP/s"
check "mktrace writes one record of each type" sh -c "'$MKTRACE' '$TMP/t.bin' <'$TMP/s'"
check "show reads them all" sh -c "'$GPUREDUCE' show '$TMP/t.bin' >'$TMP/out.yaml'"
check "output is valid YAML" sh -c "'$YAMLFLAT' '$TMP/out.yaml' >'$TMP/flat'"
i=0
while read -r t; do
	grep -qx "events/$i/type: $t" "$TMP/flat" && ok "event $i shown as $t" || fail "event $i is not $t"
	i=$((i + 1))
done <"$TMP/types"
grep -qx "events/$i/type: UNKNOWN(23)" "$TMP/flat" && ok "reserved type 23 shown as UNKNOWN(23), as docs/FORMAT.md says" ||
	fail "event $i (type 23) not UNKNOWN(23)"
grep -qx "totals/unknown_records: 1" "$TMP/flat" && ok "only type 23 counts as unknown (TENSORMAP is known)" ||
	fail "unknown_records: $(grep unknown_records "$TMP/flat")"
i=$((i + 1))
grep -qx "events/$i/exit_code: -6" "$TMP/flat" && grep -qx "events/$i/launches: 3" "$TMP/flat" &&
	ok "END's plain fields set by key, shown by the table" || fail "END fields: $(grep "events/$i/" "$TMP/flat")"

# plain fields of a type show has no case for, by key
cat >"$TMP/s2" <<'EOF2'
rec STDERR exit_code=134 dropped=12 text="Aborted (core dumped)"
rec SOURCE origin=3 module_id=9 kernel=k path=p.cu meta="options: -G" text="__global__ void k(){}"
rec BLOCK_FREE addr=0x7f0000000200 source=1 flags=0
rec FUNC_ATTR kernel=_Z1kv attr=8 value=-1
EOF2
check "rec with fields" sh -c "'$MKTRACE' '$TMP/t2.bin' <'$TMP/s2'"
check "show them" sh -c "'$GPUREDUCE' show '$TMP/t2.bin' | '$YAMLFLAT' /dev/stdin >'$TMP/flat2'"
for l in "events/0/exit_code: 134" "events/0/dropped: 12" "events/0/text: Aborted (core dumped)" \
	 "events/1/origin: 3" "events/1/module_id: 9" "events/1/meta: options: -G" \
	 "events/2/addr: 0x7f0000000200" "events/2/flags: 0x0" "events/3/value: -1"; do
	grep -qxF -- "$l" "$TMP/flat2" && ok "has: $l" || fail "missing: $l"
done
check_fail "source.flags is not shown" grep -q "events/1/flags" "$TMP/flat2"

# what the table does not have
printf 'rec BLOB\n' >"$TMP/s3"
check_exit "rec BLOB: refused (tw_blob writes blobs)" 2 sh -c "'$MKTRACE' '$TMP/t3.bin' <'$TMP/s3'"
check_grep "  ...says why" "not a record type tw_record writes" "$TMP/.out"
printf 'rec ALLOC nope=1\n' >"$TMP/s3"
check_exit "rec with an unknown key: refused" 2 sh -c "'$MKTRACE' '$TMP/t3.bin' <'$TMP/s3'"
check_grep "  ...names it" "ALLOC has no plain field 'nope'" "$TMP/.out"
printf 'rec LAUNCHES\n' >"$TMP/s3"
check_exit "rec with an unknown type: refused" 2 sh -c "'$MKTRACE' '$TMP/t3.bin' <'$TMP/s3'"
finish
