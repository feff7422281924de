#!/bin/sh
# t4060-header-checksum.sh - a damaged trace is called damaged: every byte
# of the header is covered by its checksum (format 1.4), so a flipped
# version, header size or time byte reads as a corrupt header (exit 3), not
# as a truncation, a newer format or a good file; a 1.3 trace (no checksum)
# still reads; a trace cut inside its FAULT record is reported the same
# way by show, replay and shrink.
. tests/cli/test-lib.sh
export GPUREDUCE_LIBCUDA=$BUILD/double/libcuda.so.1
cd "$TMP" || exit 1
DBL=$BUILD/double
oob_trace_text > oob.txt
check "mktrace t.bin" $MKTRACE t.bin < oob.txt
# flip BYTE: t.bin with one byte of the header inverted, as f.bin
flip() {
	cp t.bin f.bin
	v=$(od -An -tu1 -j "$1" -N1 t.bin | tr -d ' ')
	printf "$(printf '\\%03o' $((255 - v)))" | dd of=f.bin bs=1 seek="$1" conv=notrunc 2>/dev/null
}
for b in 8 10 12 16 20 24 28; do
	flip $b
	check_exit "byte $b flipped: show exits 3" 3 $GPUREDUCE show f.bin
	check_grep "  ...corrupt header" "f.bin: corrupt header" "$TMP/.out"
	if grep -q "truncated\|newer" "$TMP/.out"; then fail "  ...not called a truncation or a newer format"
	else ok "  ...not called a truncation or a newer format"; fi
done
flip 12
check_exit "byte 12 flipped: replay exits 3" 3 $GPUREDUCE replay f.bin
check_grep "  ...corrupt header" "f.bin: corrupt header" "$TMP/.out"
if grep -q "killed" "$TMP/.out"; then fail "  ...not 'it may have been killed'"; else ok "  ...not 'it may have been killed'"; fi
check_exit "byte 12 flipped: shrink exits 3" 3 $GPUREDUCE shrink -o s/ f.bin
check_grep "  ...corrupt header" "f.bin: corrupt header" "$TMP/.out"
(cat oob.txt; echo "version 1 3") | $MKTRACE old.bin
check "a 1.3 trace (no header checksum) still reads" $GPUREDUCE show old.bin
check_grep "  ...as 1.3" 'format: "1.3"' "$TMP/.out"

# --- cut inside the FAULT record: one story from every command ---------------
(cat oob.txt; echo "truncate -4") | $MKTRACE cut.bin
check "show a trace cut inside its FAULT record" $GPUREDUCE show cut.bin
check_grep "  ...says where it was cut" "cut inside its FAULT record" "$TMP/.out"
check_exit "replay: the replay faults (exit 1)" 1 $GPUREDUCE replay cut.bin
check_grep "  ...and says the trace's own FAULT record was cut" "cut inside its FAULT record: the program faulted" "$TMP/.out"
check_exit "shrink: exit 3" 3 $GPUREDUCE shrink -o c/ cut.bin
check_grep "  ...the same words" "cut inside its FAULT record: the program faulted" "$TMP/.out"
if grep -q "no END or FAULT record\|no fault to shrink" "$TMP/.out"; then fail "  ...not 'no fault'"; else ok "  ...not 'no fault'"; fi
finish
