#!/bin/sh
# t5118-shrink-leaves-teardown.sh - a shrink whose results are in does not
# wait for its workers' context teardown (reducer/oracle.c oracle_finish,
# replay/pool.c pool_release_detached): on the H200, 0.1-0.4 s passed
# between a shrink's last log line and its end, where that wait was
# (2026-12-06: oob-write 4.34 and 4.73 s).  On the double, DOUBLE_TEARDOWN_DELAY_MS makes each
# exiting process's teardown take 3 s and DOUBLE_TEARDOWN_LOG stamps when
# it begins.  The shrink must have ended, its repro written, less than 3 s
# after the last teardown began: the idle workers exit on their own once
# their stdin closes, they die with the shrink, and the driver frees what
# they held.  An interrupted shrink still waits for them (t6010).
. tests/cli/test-lib.sh

on_double no-sanitizer plain-path
cd "$TMP" || exit 1

now_ns() { python3 -c 'import time; print(time.monotonic_ns())'; }

oob_trace_text > oob.txt
check "mktrace" $MKTRACE oob.bin < oob.txt
check "shrink, each worker's teardown 3 s" env DOUBLE_TEARDOWN_DELAY_MS=3000 DOUBLE_TEARDOWN_LOG=$TMP/td.log \
	$GPUREDUCE shrink -j 4 --quiet -o r/repro.cu oob.bin
ended=$(now_ns)
check "  ...its repro.bin is written" test -s r/repro.bin
last=$(awk '$1 == "b" { print $2 }' td.log 2>/dev/null | sort -n | tail -n 1)
if [ "${last:-0}" -gt 0 ]; then ok "  ...workers began their teardown"; else fail "  ...no teardown was logged"; fi
if [ "${last:-0}" -gt 0 ] && [ "$ended" -lt $((last + 3000000000)) ]; then
	ok "  ...and the shrink ended $(( (ended - last) / 1000000 )) ms after the last began: it did not wait"
else
	fail "  ...the shrink ended $(( (ended - ${last:-0}) / 1000000 )) ms after the last teardown began: it waited"
fi
finish
