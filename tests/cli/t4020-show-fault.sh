#!/bin/sh
# t4020-show-fault.sh - show --fault (the fault and its launch only, with the
# Python frames), --event N, --range A:B, --launch SEQ and their usage errors.
. tests/cli/test-lib.sh

# events: 0 alloc  1 launch seq0  2 launch seq1 (faults)  3 launch seq2
#         4 fault  5 end
cat >"$TMP/s" <<'EOF'
alloc 0x7f0000000000 4000
launch _Z4fillPfi 4 256 ptr:0x7f0000000000 i32:1000 py=nogil
launch _Z5scalePfPKfii 4 256 ptr:0x7f0000000000 i32:1001 frame=model.py:12:forward frame=train.py:40:step frame=train.py:99:<module>
launch _Z4fillPfi 4 256 ptr:0x7f0000000000 i32:1002
fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuCtxSynchronize 1 at_launch=0
end 1
EOF
check "mktrace" sh -c "'$MKTRACE' '$TMP/t.bin' <'$TMP/s'"

check "show --fault" sh -c "'$GPUREDUCE' show --fault '$TMP/t.bin' >'$TMP/f.yaml'"
check "--fault output is valid YAML" sh -c "'$YAMLFLAT' '$TMP/f.yaml' >'$TMP/f'"
has() { check "$1" grep -qxF -- "$1" "$2"; }
has "fault/code: 700" "$TMP/f"
has "fault/error: CUDA_ERROR_ILLEGAL_ADDRESS" "$TMP/f"
has "fault/api: cuCtxSynchronize" "$TMP/f"
has "fault/launch_seq: 1" "$TMP/f"
has "fault/kernel: _Z5scalePfPKfii" "$TMP/f"
has "fault/at_launch: false" "$TMP/f"
has "fault/event: 4" "$TMP/f"
has "fault/launch_event: 2" "$TMP/f"
has "fault/python/0: model.py:12 forward" "$TMP/f"
has "fault/python/2: train.py:99 <module>" "$TMP/f"
has "events/0/event: 2" "$TMP/f"
has "events/0/params/1/value: 1001" "$TMP/f"
has "events/0/params/0/ptr: alloc#0+0x0 (device, 4000 bytes)" "$TMP/f"
check "--fault prints one event" sh -c "test \$(grep -c '^events/[0-9]*/event:' '$TMP/f') -eq 1"
check "--fault prints no header or totals" sh -c "! grep -qE '^(header|totals|kernels)' '$TMP/f'"
check "--fault --no-events: fault only" sh -c "'$GPUREDUCE' show --fault --no-events '$TMP/t.bin' | '$YAMLFLAT' >'$TMP/fn' && ! grep -q '^events' '$TMP/fn' && grep -qxF 'fault/code: 700' '$TMP/fn'"

check "full show has the fault too" sh -c "'$GPUREDUCE' show '$TMP/t.bin' | '$YAMLFLAT' >'$TMP/all'"
has "fault/launch_event: 2" "$TMP/all"
has "events/1/python: no GIL (the launching thread did not hold it)" "$TMP/all"
has "events/3/python: none" "$TMP/all"
has "events/4/type: FAULT" "$TMP/all"

check "--event 3" sh -c "'$GPUREDUCE' show --event 3 '$TMP/t.bin' | '$YAMLFLAT' >'$TMP/e3'"
has "events/0/event: 3" "$TMP/e3"
has "events/0/params/1/value: 1002" "$TMP/e3"
check "--event prints one event" sh -c "test \$(grep -c '^events/[0-9]*/event:' '$TMP/e3') -eq 1"
check "--event=0 form" sh -c "'$GPUREDUCE' show --event=0 '$TMP/t.bin' | '$YAMLFLAT' | grep -qxF 'events/0/type: ALLOC'"
check "--range 1:2" sh -c "'$GPUREDUCE' show --range 1:2 '$TMP/t.bin' | '$YAMLFLAT' >'$TMP/r'"
check "--range 1:2 gives events 1 and 2" sh -c "test \"\$(sed -n 's|^events/[0-9]*/event: ||p' '$TMP/r' | tr '\n' ' ')\" = '1 2 '"
check "--range 4: runs to the end" sh -c "test \"\$('$GPUREDUCE' show --range 4: '$TMP/t.bin' | '$YAMLFLAT' | sed -n 's|^events/[0-9]*/event: ||p' | tr '\n' ' ')\" = '4 5 '"
check "--range :0" sh -c "test \"\$('$GPUREDUCE' show --range=:0 '$TMP/t.bin' | '$YAMLFLAT' | sed -n 's|^events/[0-9]*/event: ||p' | tr '\n' ' ')\" = '0 '"

check "--launch 2: launch #2's event" sh -c "'$GPUREDUCE' show --launch 2 '$TMP/t.bin' | '$YAMLFLAT' >'$TMP/l2'"
has "events/0/event: 3" "$TMP/l2"
has "events/0/seq: 2" "$TMP/l2"
check "--launch prints one event" sh -c "test \$(grep -c '^events/[0-9]*/event:' '$TMP/l2') -eq 1"
check_exit "--launch with no such launch: exit 2" 2 "$GPUREDUCE" show --launch 7 "$TMP/t.bin"
check_grep "  ...naming it" "has no launch #7" "$TMP/.out"
check_exit "--launch with --event: exit 2" 2 "$GPUREDUCE" show --launch 1 --event 1 "$TMP/t.bin"
check_exit "--launch with --fault: exit 2" 2 "$GPUREDUCE" show --launch 1 --fault "$TMP/t.bin"
check_exit "--launch not a number: exit 2" 2 "$GPUREDUCE" show --launch two "$TMP/t.bin"

check_exit "--event past the end: exit 2" 2 "$GPUREDUCE" show --event 6 "$TMP/t.bin"
cp "$TMP/.out" "$TMP/err"
check "  ... one line naming the count" sh -c "test \$(wc -l <'$TMP/err') -eq 1 && grep -q 'has 6 events' '$TMP/err'"
check_exit "--event not a number: exit 2" 2 "$GPUREDUCE" show --event x1 "$TMP/t.bin"
check_exit "--event negative: exit 2" 2 "$GPUREDUCE" show --event -1 "$TMP/t.bin"
check_exit "--range past the end: exit 2" 2 "$GPUREDUCE" show --range 9:10 "$TMP/t.bin"
check_exit "--range B < A: exit 2" 2 "$GPUREDUCE" show --range 3:1 "$TMP/t.bin"
check_exit "--event with --range: exit 2" 2 "$GPUREDUCE" show --event 1 --range 1:2 "$TMP/t.bin"
check_exit "--event without value: exit 2" 2 "$GPUREDUCE" show "$TMP/t.bin" --event
check_exit "unknown option: exit 2" 2 "$GPUREDUCE" show --bogus "$TMP/t.bin"
check_exit "two traces: exit 2" 2 "$GPUREDUCE" show "$TMP/t.bin" "$TMP/t.bin"
check_exit "no trace: exit 2" 2 "$GPUREDUCE" show

# no FAULT record
printf 'launch k 1 1\n' | "$MKTRACE" "$TMP/nf.bin"
check "--fault without a fault: fault: null" sh -c "'$GPUREDUCE' show --fault '$TMP/nf.bin' | '$YAMLFLAT' | grep -qxF 'fault: null'"

finish
