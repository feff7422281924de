#!/bin/sh
# t6120-corpus-commands.sh - every command that takes a trace, run on every
# seed of the fuzz corpus (tests/fuzz/corpus: well-formed, torn, truncated,
# newer-minor, checkpointed, blob-only, stored-pointer traces) on the driver
# double: each ends with one of its documented exit codes, never by a signal,
# a sanitizer report or a BUG.  The fuzzer reaches the reader, show and the
# emitter in one process; this reaches replay, hunt, shrink (its reducer,
# repro.cu's build and runs) and report as the user runs them.  (Replaying
# and shrinking the fuzzer's own corpus this way found shrink and hunt
# stopping on a BUG at a newer writer's record type, t6110 "newer".)
. tests/cli/test-lib.sh

on_double nvcc no-sanitizer plain-path
CORPUS=$SRCDIR/tests/fuzz/corpus

# in SET CODE: CODE is one of the space-separated SET
in_set() {
	case " $1 " in *" $2 "*) return 0 ;; esac
	return 1
}

# run_on NAME SET CMD...: CMD's exit is in SET, no BUG, no sanitizer report
run_on() {
	name=$1 set=$2
	shift 2
	timeout 120 "$@" >run.out 2>&1
	rc=$?
	if in_set "$set" $rc && ! grep -q "BUG at \|ERROR: AddressSanitizer\|runtime error:" run.out; then
		ok "$name: exit $rc"
	else
		fail "$name: exit $rc (expected one of: $set)"
		sed 's/^/    | /' run.out | tail -n 5
	fi
}

n=0
for f in "$CORPUS"/*; do
	b=$(basename "$f")
	n=$((n + 1))
	run_on "show $b" "0 3" $GPUREDUCE show "$f"
	run_on "replay $b" "0 1 3" $GPUREDUCE replay --timeout=20 "$f"
	run_on "hunt $b" "0 1 3" $GPUREDUCE hunt --no-shrink --no-diagnose -o "h-$b" "$f"
	run_on "shrink $b" "0 1 3" $GPUREDUCE shrink -j 2 --quiet -o "s-$b/repro.cu" "$f"
	if [ -f "s-$b/repro.cu" ]; then
		run_on "  ...report of its repro" "0" $GPUREDUCE report --runs=1 --no-sanitizer "s-$b"
		run_on "  ...verify of its repro.cu" "0" $GPUREDUCE verify "s-$b/repro.cu"
	fi
done
[ "$n" -ge 10 ] && ok "the corpus has its seeds ($n)" || fail "the corpus has its seeds ($n, expected 10 or more)"
# (most seeds launch kernels the double does not have: replay says so, exit
# 3; the checkpointed one runs its gather and faults)
k=$(ls s-*/repro.cu 2>/dev/null | wc -l)
[ "$k" -ge 1 ] && ok "a seed shrinks to a repro.cu ($k)" || fail "a seed shrinks to a repro.cu (none)"
finish
