#!/bin/sh
# t5103-shrink-final-runs.sh - how often shrink runs the final state (issue
# 26: every faulting run costs a worker process, one after another on a GPU),
# on the driver double with repro.cu built against it:
# - a steady fault whose repro.cu is checked is replayed once, and
#   repro.cu runs 5 times (the reproduction figure); with
#   GPUREDUCE_VERIFY_RECALL=1, when the final trace is, byte for byte, a
#   candidate that faulted (the one the last phase kept), that candidate's
#   run is the one: verify runs nothing;
# - when repro.cu is not built (no compiler), replay's runs are topped up to 5;
# - --confirm N runs both N times;
# - with compute-sanitizer, the site check waits until repro.cu's runs are
#   done ("site" after "repro.cu" in the phase table), and when the site
#   moved, the back-off is confirmed and its repro.cu checked again.
. tests/cli/test-lib.sh

on_double nvcc no-sanitizer plain-path
oob_trace_text >oob.txt
check "mktrace" $MKTRACE oob.bin <oob.txt

# the phase names of a shrink's table, in order, on one line
phases() {
	sed -n '/^phase /,/^(other)/p' "$1" | sed '1d;$d' | awk '{printf "%s%s", (NR > 1 ? " " : ""), $1} END {print ""}'
}

check "shrink, repro.cu checked" $GPUREDUCE shrink -j 2 --log=a.log -o a/repro.cu oob.bin
cp "$TMP/.out" a.out
check_grep "  ...repro.cu faulted 5/5" "repro.cu faulted 5/5" a.out
check_grep "  ...the reduced trace was replayed once" "^  reduced: 1/1" a/repro.yaml
check_grep "  ...in one run" "verify *1 run of" a.log
check_no_grep "  ...and recalls nothing by default" "the final trace is a candidate" a.log
p=$(phases a.out)
[ "$p" = "confirm slice data grid scalars verify repro.cu" ] && ok "  ...no site row without a sanitizer" ||
	fail "  ...no site row without a sanitizer (phases: $p)"
check "shrink, GPUREDUCE_VERIFY_RECALL=1" env GPUREDUCE_VERIFY_RECALL=1 $GPUREDUCE shrink -j 2 --log=r.log -o r/repro.cu oob.bin
check_grep "  ...the final trace's run is the candidate's it is" "verify *the final trace is a candidate that faulted with the signature" r.log
check_no_grep "  ...so verify runs nothing" "verify *1 run of" r.log
check_grep "  ...replayed once" "^  reduced: 1/1" r/repro.yaml
# (show's records, without the file's path, time and offsets)
recs() { $GPUREDUCE show "$1" | grep -v -e "^  path:" -e "created" -e "^  offset:"; }
recs a/repro.bin >a.recs; recs r/repro.bin >r.recs
if cmp -s a.recs r.recs && [ -s a.recs ]; then
	ok "  ...the same repro.bin records"
else
	fail "  ...the same repro.bin records"
	diff a.recs r.recs | head -n 20 | sed 's/^/    | /'
fi

# no phase kept a candidate: the final trace is the original, never run as
# a candidate, so verify runs it
check "shrink, no reduction phase" env GPUREDUCE_VERIFY_RECALL=1 $GPUREDUCE shrink -j 2 --log=o.log \
	--skip-phases=slice,suffix,ddmin-launches,data,grid,scalars -o o/repro.cu oob.bin
check_grep "  ...verify runs the original once" "verify *1 run of" o.log
check_no_grep "  ...recalling nothing" "the final trace is a candidate" o.log
# from verify on, a worker whose run faulted is not replaced (repro.cu's runs
# would queue behind its context); with GPUREDUCE_POOL_LAZY=0 it is
check_grep "  ...verify's faulted workers were not replaced" \
	"workers started from verify on: 0 (lazy: only for runs that waited)" a.log
check "shrink, workers replaced to the end" env GPUREDUCE_POOL_LAZY=0 \
	$GPUREDUCE shrink -j 2 --log=z.log -o z/repro.cu oob.bin
check_grep "  ...then they are (the mode; how many started before the end depends on the load)" "workers started from verify on: [0-9]* (replaced at once)" z.log

check "shrink, repro.cu not built" env GPUREDUCE_NO_REPRO_CHECK=1 $GPUREDUCE shrink -j 2 --log=n.log -o n/repro.cu oob.bin
cp "$TMP/.out" n.out
check_grep "  ...replay's runs topped up to 5" "^  reduced: 5/5" n/repro.yaml
check_grep "  ...after the one of verify" "verify *1 run of" n.log
check_grep "  ...by four more" "site *4 runs of" n.log
p=$(phases n.out)
[ "$p" = "confirm slice data grid scalars verify repro.cu site" ] && ok "  ...in a site row after repro.cu" ||
	fail "  ...in a site row after repro.cu (phases: $p)"

# GPUREDUCE_POOL_LOG: a line per worker start, ready, job, result and stop
check "shrink with the pool's log" env GPUREDUCE_POOL_LOG=$TMP/pool.log $GPUREDUCE shrink -j 2 -o pl/repro.cu oob.bin
for w in "w0  start" "w0  ready" "w-1 run [0-9]* jobs" "w[0-9]* *job 0 of [0-9]*: .*\.bin" "w[0-9]* *result job 0: status 1, [0-9.]* s in the worker" "w-1 run done"; do
	check_grep "  ...'$w'" "^ *[0-9]*\.[0-9]\{3\} $w" pool.log
done

check "shrink, GPUREDUCE_VERIFY_QUICK=2" env GPUREDUCE_VERIFY_QUICK=2 $GPUREDUCE shrink -j 2 -o q/repro.cu oob.bin
check_grep "  ...replayed twice" "^  reduced: 2/2" q/repro.yaml
check_grep "  ...repro.cu 5 times all the same" "^  repro_cu: 5/5" q/repro.yaml

check "shrink --confirm 3" $GPUREDUCE shrink -j 2 --confirm 3 --log=c.log -o c/repro.cu oob.bin
check_grep "  ...replay runs it 3 times" "^  reduced: 3/3" c/repro.yaml
check_grep "  ...and so does repro.cu" "repro.cu faulted 3/3" "$TMP/.out"

# compute-sanitizer's PC depends on the scalar 1000: the scalars phase
# moves the fault, which only the deferred site check can see
fake_sanitizer_scalar_site fake5
check "shrink, the scalars phase moves the site" env GPUREDUCE_SANITIZER=$TMP/fake5 \
	$GPUREDUCE shrink -j 2 --log=m.log -o m/repro.cu oob.bin
cp "$TMP/.out" m.out
p=$(phases m.out)
[ "$p" = "confirm slice data grid scalars verify repro.cu site repro.cu" ] &&
	ok "  ...site after repro.cu, then repro.cu again" || fail "  ...site after repro.cu, then repro.cu again (phases: $p)"
check_grep "  ...backed off to the grid state" "^  backed_off_to: grid" m/repro.yaml
check_grep "  ...confirmed once after the back-off (repro.cu's runs are the figure)" "^  reduced: 1/1" m/repro.yaml
check_grep "  ...the final repro.cu keeps the scalar" "1000" m/repro.cu
check_grep "  ...and faults 5/5" "repro.cu faulted 5/5" m.out
check_grep "  ...the final trace's sanitizer run overlapped verify's" \
	"final-site.bin (started with the confirmation runs)" m.log

# the same sanitizer on a trace whose scalars do not move it: one repro.cu
cat > fake6 <<'EOT'
#!/bin/sh
. "$SRCDIR/tests/cli/helpers/fake-sanitizer.sh"
"$@" 2>&1
san_report 0x90 "Access to 0x10 is out of bounds"
EOT
chmod +x fake6
check "shrink, the site holds" env GPUREDUCE_SANITIZER=$TMP/fake6 $GPUREDUCE shrink -j 2 -o s/repro.cu oob.bin
cp "$TMP/.out" s.out
p=$(phases s.out)
[ "$p" = "confirm slice data grid scalars verify repro.cu site" ] && ok "  ...one repro.cu, the site row after it" ||
	fail "  ...one repro.cu, the site row after it (phases: $p)"
check_grep "  ...site confirmed" "site_confirmed: true" s/repro.yaml
check_grep "  ...replayed once" "^  reduced: 1/1" s/repro.yaml
finish
