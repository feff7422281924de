#!/bin/sh
# t6010-shrink-interrupt.sh - SIGINT and SIGTERM during shrink: every replay
# worker and compute-sanitizer run (each in its own process group, so a
# terminal's ^C does not reach them) is stopped and reaped, the best state
# reached so far is written as the result with `stopped: interrupted` in
# repro.yaml, the work folder is removed, one line says what was kept, and
# the exit code is 128 + the signal (130, 143).  replay and diagnose stop
# their worker / compute-sanitizer run the same way.
#
# gpureduce is copied into $TMP so that its workers' command lines name
# $TMP: a process left behind is found by `pgrep -f $TMP/`, whatever else
# runs on the machine.
. tests/cli/test-lib.sh

DBL=$BUILD/double
export GPUREDUCE_LIBCUDA=$DBL/libcuda.so.1
PATH=/usr/bin:/bin; export PATH
cd "$TMP" || exit 1
mkdir bin
cp "$GPUREDUCE" bin/gpureduce
GR=$TMP/bin/gpureduce

# gated_write spins until its gate is non-zero, then writes past out's
# end: the data phase's zero-filled gate hangs its worker at 100 % CPU
# (the candidate timeout is 60 s)
cat > gated.txt <<EOT
process 100 /work ./app
device "gpureduce CPU double"
module $DBL/kernels.cubin 1
alloc 0x7f0000100000 4096
alloc 0x7f0000200000 64
h2d 0x7f0000200000 64 seq
launch _Z11gated_writePVKiPfi 1 32 ptr:0x7f0000200000 ptr:0x7f0000100000 i32:1024
fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel 0 at_launch=1
EOT
check "mktrace gated" $MKTRACE gated.bin < gated.txt

# a compute-sanitizer that never ends (and never reports)
cat > hung-sanitizer <<'EOT'
#!/bin/sh
while :; do sleep 1; done
EOT
chmod +x hung-sanitizer

# interrupt SIG AFTER DESC ARGS...: run `gpureduce ARGS` in the background,
# send SIG after AFTER seconds, wait (20 s at most); $rc, $secs (from the
# signal to the end), output in $TMP/so and $TMP/se
interrupt() {
	sig=$1 after=$2 desc=$3
	shift 3
	"$GR" "$@" >"$TMP/so" 2>"$TMP/se" &
	pid=$!
	sleep "$after"
	t0=$(date +%s)
	kill -"$sig" $pid
	i=0
	while kill -0 $pid 2>/dev/null && [ $i -lt 200 ]; do sleep 0.1; i=$((i + 1)); done
	if kill -0 $pid 2>/dev/null; then
		fail "$desc: still running 20 s after SIG$sig"
		kill -KILL $pid
		pkill -KILL -f "$TMP/" 2>/dev/null
	fi
	wait $pid
	rc=$?
	secs=$(($(date +%s) - t0))
	if [ $secs -le 10 ]; then ok "$desc: ended ${secs} s after SIG$sig"; else fail "$desc: took ${secs} s after SIG$sig"; fi
}

no_leftovers() {
	sleep 0.3
	if pgrep -af "$TMP/" >"$TMP/left" 2>/dev/null; then
		fail "$1: processes left behind"
		sed 's/^/    | /' "$TMP/left"
		pkill -KILL -f "$TMP/" 2>/dev/null
	else
		ok "$1: no worker or sanitizer left running"
	fi
	if ls -d "$2".work-* >/dev/null 2>&1; then fail "$1: work folder left behind"; else ok "$1: work folder removed"; fi
}

# 1. SIGINT while a candidate hangs in its worker and the slice state's
# compute-sanitizer run goes on in the background
export GPUREDUCE_SANITIZER=$TMP/hung-sanitizer
interrupt INT 3 "SIGINT during the data phase" shrink -j 2 --candidate-timeout=60 -o int/repro.cu gated.bin
if [ "$rc" = 130 ]; then ok "  ...exit 130"; else fail "  ...exit $rc, not 130"; sed 's/^/    | /' "$TMP/se"; fi
check_grep "  ...one line saying what was kept" \
	"interrupted (SIGINT): kept the best state so far (1 launch -> 1 launch, 2 buffers; not confirmed) in int/repro.cu, int/repro.bin and int/repro.yaml; work files removed" "$TMP/se"
check_grep "  ...repro.yaml: stopped: interrupted" "^stopped: .interrupted" int/repro.yaml
if grep -q "name: grid" int/repro.yaml; then fail "  ...phases after the signal still ran"; else ok "  ...no phase ran after the signal"; fi
check_grep "  ...repro.cu written" "What faulted:   CUDA_ERROR_ILLEGAL_ADDRESS (700) in gated_write" int/repro.cu
check_grep "  ...and says it is not confirmed" "shrink was interrupted (SIGINT)" int/repro.cu
unset GPUREDUCE_SANITIZER
check_exit "  ...the kept trace replays to the fault" 1 $GPUREDUCE replay int/repro.bin
no_leftovers "SIGINT" int/repro.bin

# 2. SIGTERM while shrink waits for a compute-sanitizer run in the
# foreground (--signature=site: the original's reference site)
export GPUREDUCE_SANITIZER=$TMP/hung-sanitizer
interrupt TERM 2 "SIGTERM during a compute-sanitizer run" shrink -j 2 --signature=site -o term/repro.cu gated.bin
if [ "$rc" = 143 ]; then ok "  ...exit 143"; else fail "  ...exit $rc, not 143"; sed 's/^/    | /' "$TMP/se"; fi
check_grep "  ...one line saying what was kept" "interrupted (SIGTERM): kept the best state so far" "$TMP/se"
check_grep "  ...repro.yaml: stopped: interrupted" "^stopped: .interrupted" term/repro.yaml
unset GPUREDUCE_SANITIZER
check_exit "  ...the kept trace (the original) replays to the fault" 1 $GPUREDUCE replay term/repro.bin
no_leftovers "SIGTERM" term/repro.bin

# 3. SIGINT before the fault was confirmed (workers slow to start):
# nothing to keep, nothing written
DOUBLE_INIT_DELAY_MS=4000; export DOUBLE_INIT_DELAY_MS
interrupt INT 1 "SIGINT while the workers start" shrink -j 2 -o early/repro.cu gated.bin
if [ "$rc" = 130 ]; then ok "  ...exit 130"; else fail "  ...exit $rc, not 130"; sed 's/^/    | /' "$TMP/se"; fi
check_grep "  ...says nothing was written" "interrupted (SIGINT) before a reduced trace that faults was found; nothing was written" "$TMP/se"
if [ -e early/repro.cu ] || [ -e early/repro.bin ]; then fail "  ...but wrote something"; else ok "  ...and wrote nothing"; fi
no_leftovers "early SIGINT" early/repro.bin
unset DOUBLE_INIT_DELAY_MS

# 4. the other commands whose children run in their own process groups
cat > hang.txt <<EOT
process 100 /work ./app
device "gpureduce CPU double"
module $DBL/kernels.cubin 1
alloc 0x7f0000100000 64
memset 0x7f0000100000 0 64
launch _Z4spinPVKi 1 1 ptr:0x7f0000100000
EOT
check "mktrace hang" $MKTRACE hang.bin < hang.txt
interrupt INT 2 "replay: SIGINT while a kernel hangs" replay --timeout=60 hang.bin
if [ "$rc" = 130 ]; then ok "  ...exit 130"; else fail "  ...exit $rc, not 130"; fi
check_grep "  ...says so" "interrupted (SIGINT): the replay worker was stopped" "$TMP/se"
no_leftovers "replay" hang.bin
export GPUREDUCE_SANITIZER=$TMP/hung-sanitizer
interrupt TERM 2 "diagnose: SIGTERM while compute-sanitizer runs" diagnose gated.bin
if [ "$rc" = 143 ]; then ok "  ...exit 143"; else fail "  ...exit $rc, not 143"; fi
check_grep "  ...says so" "interrupted (SIGTERM): compute-sanitizer was stopped" "$TMP/se"
no_leftovers "diagnose" gated.bin
unset GPUREDUCE_SANITIZER
# 5. a compute-sanitizer whose replay has its own worker (as the real one
# does: `gpureduce replay` under compute-sanitizer starts a worker in a
# process group of its own, which killing the sanitizer's group misses):
# the worker must not outlive the shrink that started it
cat > worker-sanitizer <<EOT
#!/bin/sh
exec "$GR" replay --timeout=600 "$TMP/hang.bin"
EOT
chmod +x worker-sanitizer
export GPUREDUCE_SANITIZER=$TMP/worker-sanitizer
interrupt INT 3 "SIGINT while a sanitizer's replay worker runs" shrink -j 2 --candidate-timeout=60 -o w/repro.cu gated.bin
if [ "$rc" = 130 ]; then ok "  ...exit 130"; else fail "  ...exit $rc, not 130"; sed 's/^/    | /' "$TMP/se"; fi
no_leftovers "sanitizer's worker" w/repro.bin
unset GPUREDUCE_SANITIZER
finish
