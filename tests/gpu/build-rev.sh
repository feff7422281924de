#!/bin/sh
# build-rev.sh - another revision's gpureduce, built here for a device
# call's side-by-side shrinks (shrink-pair.sh's PAIR_B, switch-pair.sh):
# a device machine gets the working tree only, no history, so the older
# build travels as a file in the carried, ignored .dev/ folder.
#
# Usage: sh tests/gpu/build-rev.sh REV [OUT]
#   REV  a commit (9b4f260, HEAD~3, ...)
#   OUT  the binary's path (default .dev/REV-gpureduce); the revision's
#        capture library goes beside it, OUT's folder/REV-libgpureduce-capture.so
#        (where CUPTI's headers are here), for bench-hostfed's base way
# Then, for example:
#   run: PAIR_B=.dev/9b4f260-gpureduce PAIR_B_NAME=9b4f260 \
#        tests/gpu/shrink-pair.sh build/gpu-test/*/      (carry .dev and build)
#   run: BENCH_HOSTFED_BASE_LIB=$PWD/.dev/9b4f260-libgpureduce-capture.so \
#        bash tests/gpu/bench-hostfed.sh                 (carry .dev and build)
set -u
[ $# -ge 1 ] || { echo "usage: sh tests/gpu/build-rev.sh REV [OUT]" >&2; exit 2; }
REV=$1
OUT=${2:-.dev/$REV-gpureduce}
sha=$(git rev-parse --verify --quiet "$REV^{commit}") || { echo "build-rev: $REV: not a commit here" >&2; exit 2; }
WT=$(mktemp -d "${TMPDIR:-/tmp}/build-rev.XXXXXX") || exit 2
cleanup() { git worktree remove --force "$WT" >/dev/null 2>&1; rm -rf "$WT"; }
trap cleanup EXIT
git worktree add --detach "$WT" "$sha" >/dev/null 2>&1 || { echo "build-rev: git worktree add $REV failed" >&2; exit 1; }
if ! make -C "$WT" -j"$(nproc 2>/dev/null || echo 2)" >"$WT.log" 2>&1; then
	echo "build-rev: building $REV failed; the last lines of $WT.log:" >&2
	tail -n 20 "$WT.log" >&2
	exit 1
fi
mkdir -p "$(dirname "$OUT")" && cp "$WT/build/gpureduce" "$OUT" || exit 1
LIB=$(dirname "$OUT")/$REV-libgpureduce-capture.so
if [ -f "$WT/build/libgpureduce-capture.so" ]; then
	cp "$WT/build/libgpureduce-capture.so" "$LIB" || exit 1
	echo "build-rev: $REV's capture library -> $LIB"
fi
rm -f "$WT.log"
echo "build-rev: $REV ($sha) -> $OUT"
