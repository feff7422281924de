#!/bin/sh
# t5118-shrink-leaves-teardown.sh - a shrink whose results are in does not
# wait for its workers' context teardown (reducer/oracle.c oracle_finish,
# replay/pool.c pool_release_detached): on the H200, 0.1-0.4 s passed
# between a shrink's last log line and its end, where that wait was
# (2026-12-06: oob-write 4.34 and 4.73 s).  On the double,
# DOUBLE_TEARDOWN_DELAY_MS makes the exit of a process that holds a context
# take that long; with -j 4 the shrink ends with idle workers, which exit
# once their stdin closes.  Waiting for them, the shrink took the delay and
# more (20 s here); now it ends without (the workers die with it, and a
# GPU's driver frees what they held).  An interrupted shrink still waits
# for them (t6010).  Hunt and `gpureduce replay` release their pools the
# same way (not checked here).
. tests/cli/test-lib.sh

on_double no-sanitizer plain-path
cd "$TMP" || exit 1

now_ns() { python3 -c 'import time; print(time.monotonic_ns())'; }

oob_trace_text > oob.txt
check "mktrace" $MKTRACE oob.bin < oob.txt
t0=$(now_ns)
check "shrink, each worker's exit 20 s" env DOUBLE_TEARDOWN_DELAY_MS=20000 \
	$GPUREDUCE shrink -j 4 --quiet -o r/repro.cu oob.bin
ms=$(( ($(now_ns) - t0) / 1000000 ))
check "  ...its repro.bin is written" test -s r/repro.bin
if [ "$ms" -lt 20000 ]; then
	ok "  ...in $ms ms: it did not wait for the workers' teardown"
else
	fail "  ...it took $ms ms: it waited for the workers' teardown"
fi
finish
