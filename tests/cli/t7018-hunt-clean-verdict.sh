#!/bin/sh
# t7018-hunt-clean-verdict.sh - tests/gpu/hunt-clean.sh's verdict on the
# CPU (issue 28: every sample's clean variant hunts clean), against a
# stand-in gpureduce whose `hunt -- CMD` prints what the real one prints
# for each kind of process, over a folder of stand-in samples (GR_SAMPLES).
# A sample whose second process launched no kernel (ipc-table's producer:
# it only allocates and shares memory; hunt says "no kernel launches in the
# trace: nothing to hunt") passes when the other process hunted clean; a
# sample where no process hunted, one with a finding, and one with fewer
# processes than its sample.yaml says fail.
. tests/cli/test-lib.sh

cd "$TMP" || exit 1
command -v bash >/dev/null 2>&1 || { echo "no bash here: the GPU scripts need it"; echo "0 passed, 0 failed"; exit 0; }
[ -x "$BUILD/sampleinfo" ] || { echo "skip: $BUILD/sampleinfo not built"; finish; }
mkdir -p fb smp
cp "$BUILD/sampleinfo" fb/sampleinfo
cat >fb/gpureduce <<'EOF'
#!/bin/sh
# stand-in: `hunt ... -- CMD` prints per FAKE_HUNT what hunt prints
case $FAKE_HUNT in
mixed)
	echo "hunt: /w/hunt/trace.bin: no kernel launches in the trace: nothing to hunt"
	echo "hunt: [pid 5140] /w/hunt/trace.bin.5140: clean (no launch faulted under end or start guards)" ;;
nolaunch)
	echo "hunt: /w/hunt/trace.bin: no kernel launches in the trace: nothing to hunt"
	echo "hunt: [pid 5140] /w/hunt/trace.bin.5140: no kernel launches in the trace: nothing to hunt" ;;
finding)
	echo "hunt: /w/hunt/trace.bin: no kernel launches in the trace: nothing to hunt"
	echo "finding 1: [pid 5140] launch #3 gather_kv faulted under end guards (CUDA_ERROR_ILLEGAL_ADDRESS)"
	exit 1 ;;
one)
	echo "hunt: /w/hunt/trace.bin: clean (no launch faulted under end or start guards)" ;;
esac
exit 0
EOF
chmod +x fb/gpureduce
# sample NAME MODE PROCESSES
sample() {
	mkdir -p "smp/$1"
	cat >"smp/$1/sample.yaml" <<EOF
name: $1
story: a stand-in sample for hunt-clean's verdict, its clean run printing what hunt prints for $2
run: "true"
clean_env: FAKE_HUNT=$2
processes: $3
expect:
  errors: [CUDA_ERROR_ILLEGAL_ADDRESS]
  kernel: gather_kv
  flaky: false
timeout: 20
EOF
}
sample producer mixed 2
sample idle nolaunch 2
sample falsealarm finding 2
sample short one 2
check_exit "hunt-clean over four stand-in samples: exit 1 (three fail)" 1 env BUILD="$TMP/fb" GR_SAMPLES="$TMP/smp" \
	HUNT_CLEAN_OUT="$TMP/hc" HUNT_CLEAN_JOBS=2 bash "$SRCDIR/tests/gpu/hunt-clean.sh"
cp "$TMP/.out" hc.txt
check_grep "  ...a producer that launched nothing beside a clean process passes" \
	"^producer *| 0 *| 0 *| clean (1 process(es); 1 launched nothing) .*| PASS" hc.txt
check_grep "  ...no process hunted: fails" "^idle *| 0 *| 0 *| no verdict .*| FAIL" hc.txt
check_grep "  ...and says why" "idle: FAIL: hunt exited 0 with 0 finding(s) and 0 clean process(es) (2 more launched nothing) of the 2" hc.txt
check_grep "  ...a finding fails" "^falsealarm *| 0 *| 1 *| 1 finding(s): finding 1: \[pid 5140\] launch #3 gather_kv .*| FAIL" hc.txt
check_grep "  ...fewer processes than the sample starts fail" \
	"short: FAIL: hunt exited 0 with 0 finding(s) and 1 clean process(es) of the 2 the sample starts" hc.txt
check_grep "  ...the count" "^1 passed, 3 failed" hc.txt
finish
