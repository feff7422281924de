#!/bin/sh
# t3010-docs-paths.sh - the files the docs name exist.  docs/ARCHITECTURE.md
# is the map of the tree (where things live, how to add a reduction phase or
# a record type); a file moved or renamed without the page, or a recipe that
# names a file that is not there, fails here.  The checker is
# tests/cli/helpers/docpaths.sh; the first checks show it can fail.
. tests/cli/test-lib.sh

DP="sh $SRCDIR/tests/cli/helpers/docpaths.sh"

# ---- the checker itself -----------------------------------------------------
mkdir -p "$TMP/root/src" "$TMP/root/docs"
: >"$TMP/root/src/a.c"
: >"$TMP/root/src/a.h"
printf 'Here `src/a.c` and `src/{a,b}.h` and `src/*.c`; not a path: `DIR/repro.cu`.\n' >"$TMP/root/docs/p.md"
check_exit "a page naming a missing file fails" 1 $DP "$TMP/root" "$TMP/root/docs/p.md"
check_grep "  ...and names it" "p.md: src/b.h" "$TMP/.out"
printf 'Here `src/a.c`, `src/{a}.h`, `src/*.c` and `docs/`.\n' >"$TMP/root/docs/q.md"
check_exit "a page naming only files that exist passes" 0 $DP "$TMP/root" "$TMP/root/docs/q.md"
printf '`src/*.cu` matches nothing.\n' >"$TMP/root/docs/r.md"
check_exit "a glob that matches nothing fails" 1 $DP "$TMP/root" "$TMP/root/docs/r.md"
printf '`src/cmd-NAME.c` is a placeholder, `src/NAME.c` too.\n' >"$TMP/root/docs/s.md"
check_exit "a placeholder that names no file fails" 1 $DP "$TMP/root" "$TMP/root/docs/s.md"
check_grep "  ...and names it" "s.md: src/cmd-\*.c" "$TMP/.out"

# ---- the project's pages ----------------------------------------------------
A=docs/ARCHITECTURE.md
check "every path $A names exists" $DP . $A
n=$($DP -n . $A)
[ "${n:-0}" -ge 40 ] && ok "$A names the tree ($n paths)" || fail "$A names only ${n:-0} paths: it is the map of the tree"
check_grep "$A has the recipe for a reduction phase" "^## Recipe: add a reduction phase" $A
check_grep "$A has the recipe for a record type" "^## Recipe: add a record type" $A
for top in common trace addr capture replay diagnose reducer emit src tests samples docs; do
	if [ -d "$top" ]; then
		check_grep "$A says what $top/ owns" "^| \`$top/\`" $A
	fi
done
for d in README.md tests/README.md docs/*.md; do
	check "every path $d names exists" $DP . "$d"
done
finish
