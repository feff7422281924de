#!/bin/sh
# t5030-shrink-phases.sh - the reducer's later phases and options on the CPU
# driver double: the buffer-size phase (--cut-buffers: cuts that keep the
# sanitizer site, cuts that move it rejected), --signature=site, --log and
# --keep-going.
#
# The stand-in compute-sanitizer here reports what the double really saw:
# it reruns the replay with DOUBLE_VERBOSE=1 and turns the double's
# "illegal address ADDR (read|write|access ...) in KERNEL" line into a
# compute-sanitizer report, so the site's "where the address lies" part
# (wild, past the end of param N...) is computed by gpureduce from real
# placements.
. tests/cli/test-lib.sh

DBL=$BUILD/double
export GPUREDUCE_LIBCUDA=$DBL/libcuda.so.1
cd "$TMP" || exit 1

cat > real-sanitizer <<'EOT'
#!/bin/sh
. "$SRCDIR/tests/cli/helpers/fake-sanitizer.sh"
out=$(DOUBLE_VERBOSE=1 "$@" 2>&1)
echo "$out" | grep -v '^libcuda double'
line=$(echo "$out" | sed -n 's/^libcuda double: illegal address \(0x[0-9a-f]*\) (\([a-z]*\), .*/\1 \2/p' | head -1)
[ -n "$line" ] || exit 0
set -- $line
cat <<EOR
========= Invalid __global__ $2 of size 4 bytes
=========     at gather(float *, const float *, const long long *, int)+0x40
=========     by thread (17,0,0) in block (0,0,0)
=========     Access to $1 is out of bounds
EOR
EOT
chmod +x real-sanitizer
export GPUREDUCE_SANITIZER=$TMP/real-sanitizer

# gather: out[i] = src[idx[i]] for i < 1000; idx[900] is wild (1 GiB past
# src).  src is a 64 KiB table of which the kernel reads one element once
# idx is zeroed; out is written in full, so cutting it makes a new overrun
# that the double (threads in order) hits before thread 900: same error,
# same kernel, only the site tells.
cat > gather.txt <<EOT
process 100 /work ./app
device "gpureduce CPU double"
module $DBL/kernels.cubin 1
alloc 0x7f0000100000 65536
alloc 0x7f0000200000 4000
alloc 0x7f0000300000 8000
h2d 0x7f0000100000 65536 seq
h2d 0x7f0000300000 8000 0
h2d 0x7f0000301c20 8 u64:0x10000000
launch _Z6gatherPfPKfPKxi 4 256 ptr:0x7f0000200000 ptr:0x7f0000100000 ptr:0x7f0000300000 i32:1000
fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel 0 at_launch=1
EOT
check "mktrace gather" $MKTRACE gather.bin < gather.txt

check "shrink with the sizes phase" $GPUREDUCE shrink -j 2 --quiet --cut-buffers --log=s.log -o s/repro.cu gather.bin
check_grep "the sizes phase cut a buffer" "outcome: buffers cut" s/repro.yaml
check_grep "  ...and the bytes went down from 77536" "bytes: 77536 -> [0-9]" s/repro.yaml
b=$(sed -n '/^- name: sizes/,/outcome/s/^  bytes: 77536 -> \([0-9]*\)$/\1/p' s/repro.yaml)
if [ -n "$b" ] && [ "$b" -lt 20000 ]; then ok "  ...to $b bytes (src no longer 64 KiB)"; else fail "  ...sizes phase left $b bytes"; fi
check_grep "a cut that moved the site was rejected (out: a new overrun)" "the site MOVED" s.log
check_grep "  ...and a cut that kept it was taken" "same site" s.log
check_grep "the final site is the slice's: a wild read" "site: .*; a wild address" s/repro.yaml
check_grep "  ...confirmed" "site_confirmed: true" s/repro.yaml
check_grep "the log has one line per replay job" "c[0-9]*\.bin: CUDA_ERROR_ILLEGAL_ADDRESS, the signature" s.log
check_grep "  ...and the sanitizer runs with their waits" "sanitizer .*size-[0-9]*\.bin: .* s wait" s.log
check "the cut repro compiles" cc -x c -w -I${CUDA:-/usr/local/cuda}/include -o s/repro s/repro.cu -L$DBL -Wl,-rpath,$DBL -lcuda
check_exit "  ...and faults (exit 1)" 1 s/repro
check_grep "  ...src allocated small" "buffer 0: 4 B, device; param 1 .float const\*." s/repro.cu
check_grep "  ...out kept whole" "buffer 1: 4000 B, device; param 0 .float\*." s/repro.cu

# compute-sanitizer reports more than the first error: a cut whose first
# report is the user's bug but that adds another error behind it (here:
# any cut of buffer 0, src, makes a read 4 bytes past its end) is refused
cat > two-sanitizer <<EOT
#!/bin/sh
. "$SRCDIR/tests/cli/helpers/fake-sanitizer.sh"
out=\$("$TMP/real-sanitizer" "\$@")
echo "\$out"
set -- \$(echo "\$out" | sed -n 's/^gpureduce-buffer 0 \(0x[0-9a-f]*\) \([0-9]*\)\$/\1 \2/p')
[ -n "\$2" ] && [ "\$2" -lt 65536 ] || exit 0
cat <<EOR
========= Invalid __global__ read of size 4 bytes
=========     at gather(float *, const float *, const long long *, int)+0x40
=========     by thread (3,0,0) in block (0,0,0)
=========     Access to \$(printf '0x%x' \$((\$1 + \$2 + 4))) is out of bounds
EOR
EOT
chmod +x two-sanitizer
check "shrink --cut-buffers when cuts add errors behind the first" \
	env GPUREDUCE_SANITIZER=$TMP/two-sanitizer $GPUREDUCE shrink -j 2 --quiet --cut-buffers --log=t.log -o t/repro.cu gather.bin
check_grep "  ...the src cuts are refused for the error they add" "cut buffer #0 .*NEW errors behind it: .*past the end of param 1" t.log
check_grep "  ...src stays whole" "buffer 0: 64.0 KiB, device; param 1" t/repro.cu
check_grep "  ...idx is still cut" "buffer 2: [0-9]* B, device; param 2" t/repro.cu

# off by default: no sizes phase without --cut-buffers
check "shrink without --cut-buffers" $GPUREDUCE shrink -j 2 --quiet -o d/repro.cu gather.bin
if grep -q "name: sizes" d/repro.yaml; then fail "  ...runs no sizes phase"; else ok "  ...runs no sizes phase"; fi
check_grep "  ...and keeps src whole" "buffer 0: 64.0 KiB, device; param 1" d/repro.cu
# a candidate written again (ddmin's complements repeat some) is not
# replayed again: the cache keys on the file's content, not its timestamp
check_grep "  ...and takes repeated candidates from its cache" "^cache_hits: [1-9]" d/repro.yaml

# a time limit that ends the reduction early is said, in the summary line
# and in repro.yaml (the bench marks such a time as a lower bound)
check "shrink with a time limit it cannot meet" $GPUREDUCE shrink -j 2 --quiet --time-limit=0.001 -o tl/repro.cu gather.bin
check_grep "  ...the summary says so" "stopped by the time limit: the best so far" "$TMP/.out"
check_grep "  ...and repro.yaml" "^stopped: .time limit" tl/repro.yaml
if grep -q "^stopped:" d/repro.yaml; then fail "  ...a shrink within its limit says nothing"; else ok "  ...a shrink within its limit says nothing"; fi

# without compute-sanitizer the phase does not cut: it could not tell a new overrun
check "shrink without a sanitizer" env GPUREDUCE_SANITIZER=$TMP/none $GPUREDUCE shrink -j 2 --quiet --cut-buffers -o n/repro.cu gather.bin
check_grep "sizes skipped, saying why" "outcome: 'skipped: no compute-sanitizer" n/repro.yaml

# a sanitizer run that ends without a report is not an error-free run:
# the note and the log quote the replay's own last line (here: its worker
# killed, as a pkill of the workers does), else the sanitizer's.
# no_report_case NAME WHAT NOTE: shrink with the stand-in sanitizer NAME
# (its script on stdin); NOTE is what repro.yaml's note must say after
# "compute-sanitizer on the slice state: no report".
no_report_case() {
	{ echo "#!/bin/sh"; cat; } > $1-sanitizer
	chmod +x $1-sanitizer
	check "shrink with a sanitizer that $2" env GPUREDUCE_SANITIZER=$TMP/$1-sanitizer \
		$GPUREDUCE shrink -j 2 --quiet --log=$1.log -o $1/repro.cu gather.bin
	check_grep "  ...the note says: $3" \
		"^note: .site not checked: compute-sanitizer on the slice state: no report$3" $1/repro.yaml
	check_grep "  ...and so does the log" "sanitizer on the slice state: no report$3" $1.log
}
no_report_case killed "has its replay killed" \
	"; the replay said: replay: could not replay: worker died while replaying (crash in the driver or in replay)" <<'EOT'
. "$SRCDIR/tests/cli/helpers/fake-sanitizer.sh"
"$@" >/dev/null 2>&1
echo "gpureduce-buffer 1 0x7f0000200000 4000"
echo "replay: could not replay: worker died while replaying (crash in the driver or in replay)"
echo "========= ERROR SUMMARY: 0 errors"
EOT
no_report_case summary "prints only its own lines" "; its output ended: ========= ERROR SUMMARY: 0 errors" <<'EOT'
echo "========= COMPUTE-SANITIZER"
echo "========= ERROR SUMMARY: 0 errors"
EOT
no_report_case silent "prints nothing" "; its output was empty" <<'EOT'
exit 0
EOT

# --signature=site: every accepted candidate checked; a grid cut that
# moves the PC (this fake's PC depends on the grid) is rejected on the spot
cat > grid-sanitizer <<'EOT'
#!/bin/sh
. "$SRCDIR/tests/cli/helpers/fake-sanitizer.sh"
pc=0x90
"$GPUREDUCE" show "$trace" 2>/dev/null | grep -q 'grid: \[8, 1, 1\]' || pc=0x1c0
"$@" 2>&1
san_report $pc "by thread (0,0,0) in block (4,0,0)" "Access to 0x10 is out of bounds"
EOT
chmod +x grid-sanitizer
cat > oob.txt <<EOT
process 100 /work ./app
device "gpureduce CPU double"
module $DBL/kernels.cubin 1
alloc 0x7f0000200000 4000
alloc 0x7f0000100000 4000
h2d 0x7f0000100000 4000 seq
launch _Z13scale_nocheckPfPKfi 8 256 ptr:0x7f0000200000 ptr:0x7f0000100000 i32:1000
fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel 0 at_launch=1
EOT
check "mktrace oob" $MKTRACE oob.bin < oob.txt
check "shrink --signature=site" env GPUREDUCE_SANITIZER=$TMP/grid-sanitizer \
	$GPUREDUCE shrink -j 2 --quiet --signature=site -o g/repro.cu oob.bin
if grep -q "moved the fault" g/repro.yaml; then fail "no back-off needed with per-candidate sites"; else ok "no back-off needed with per-candidate sites"; fi
check_grep "  ...the grid stays 8 blocks" "launch_and_check(fn, \"scale_nocheck(float\*, float const\*, int)\", 8, 1, 1" g/repro.cu
n=$(sed -n 's/^slipped: //p' g/repro.yaml)
if [ "${n:-0}" -ge 1 ]; then ok "  ...the moved candidates counted as slipped ($n)"; else fail "  ...slipped is ${n:-?}"; fi
n=$(sed -n 's/^sanitizer_runs: //p' g/repro.yaml)
if [ "${n:-0}" -ge 3 ]; then ok "  ...sanitizer runs counted ($n)"; else fail "  ...sanitizer_runs is ${n:-?}"; fi
check_exit "--signature=site without a sanitizer: refused (exit 1)" 1 \
	env GPUREDUCE_SANITIZER=$TMP/none PATH=/usr/bin:/bin $GPUREDUCE shrink --signature=site -o x/repro.cu oob.bin
check_grep "  ...saying what is missing" "signature=site needs compute-sanitizer" "$TMP/.out"

# --keep-going: the GPU drops out mid-reduction (the double's cuInit fails
# for the 8 worker starts after the first 8: at most a pool's 3 starts in
# flight can succeed in between, so 3 failures in a row end the pool for
# sure; the fresh pools --keep-going starts use up the rest)
export GPUREDUCE_SANITIZER=$TMP/none
echo "8 8" > init-script
check_fail "without --keep-going: lost workers stop the shrink" \
	env DOUBLE_INIT_SCRIPT=$TMP/init-script $GPUREDUCE shrink -j 2 --quiet -o k1/repro.cu gather.bin
check_grep "  ...naming the cause" "replay workers cannot start" "$TMP/.out"
echo "8 8" > init-script
check "with --keep-going=0: the phase ends, the shrink goes on" \
	env DOUBLE_INIT_SCRIPT=$TMP/init-script $GPUREDUCE shrink -j 2 --quiet --keep-going=0 -o k2/repro.cu gather.bin
check_grep "  ...counts the lost phase" "^phase_failures: [1-9]" k2/repro.yaml
check_grep "  ...says which and that it went on" "lost its workers .*went on (--keep-going)" k2/repro.yaml
check_grep "  ...and still emits a confirmed one-launch repro" "reduced: 5/5" k2/repro.yaml
check_grep "  ...and counts the failed starts" "^worker_start_failures: [1-8]$" k2/repro.yaml
# --keep-going (default 120 s): the pool waits out the same outage (pauses
# of 0.5, 1 and 2 s between tries) and no phase is lost
echo "8 8" > init-script
check "with --keep-going: the pool waits for its workers" \
	env DOUBLE_INIT_SCRIPT=$TMP/init-script $GPUREDUCE shrink -j 2 --quiet --keep-going -o k3/repro.cu gather.bin
check_grep "  ...all 8 failed starts counted" "^worker_start_failures: 8$" k3/repro.yaml
check_grep "  ...and the wait" "^waited_for_workers_seconds: [1-9]" k3/repro.yaml
if grep -q "^phase_failures" k3/repro.yaml; then fail "  ...no phase lost"; else ok "  ...no phase lost"; fi
check_grep "  ...a confirmed one-launch repro" "reduced: 5/5" k3/repro.yaml
check_grep "  ...every phase ran" "name: scalars" k3/repro.yaml
# an outage longer than the wait: the phases end, and so does the shrink
# once even the confirmation runs have no workers (never an unconfirmed repro)
echo "8 1000" > init-script
check_exit "--keep-going=1 against a GPU that stays away: exit 4" 4 \
	env DOUBLE_INIT_SCRIPT=$TMP/init-script $GPUREDUCE shrink -j 2 --quiet --keep-going=1 -o k4/repro.cu gather.bin
check_grep "  ...says it waited" "waited for them as long as --keep-going allows" "$TMP/.out"
if [ -e k4/repro.cu ]; then fail "  ...and wrote no repro.cu"; else ok "  ...and wrote no repro.cu"; fi
check_exit "--keep-going=x: usage error" 2 $GPUREDUCE shrink --keep-going=x gather.bin
finish
