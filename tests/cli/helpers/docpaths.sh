#!/bin/sh
# docpaths.sh ROOT DOC... - print the repository paths each DOC names that do
# not exist under ROOT, one a line as "DOC: path"; exit 1 if any, 0 if none.
# A path is a backticked word whose first folder is a top-level folder of
# ROOT (`reducer/shrink.c`, `trace/`, `reducer/phase-*.c`,
# `src/side-repro.{c,h}`); a glob must match a file, each brace alternative
# must exist; the placeholder words NAME and NNNN stand for any name
# (`src/cmd-NAME.c` must match a file).  With -n, print only how many paths
# were checked.
count=0
[ "$1" = -n ] && { count=1; shift; }
root=$1; shift
tops=$(cd "$root" && ls -d */ 2>/dev/null | tr -d / | paste -sd '|')
bad=0 n=0
set -f   # the names are globbed below, under ROOT only
for doc in "$@"; do
	for p in $(grep -o '`[A-Za-z0-9_./*{},-]*/[A-Za-z0-9_./*{},-]*`' "$doc" | tr -d '`' |
		   grep -E "^($tops)/" | sort -u); do
		case $p in
		*'{'*) pre=${p%%\{*}; post=${p#*\}}; alts=${p#*\{}; alts=${alts%%\}*}
		       list=$(echo "$alts" | tr , ' ') ;;
		*) pre=$p; post=; list=- ;;
		esac
		pre=$(echo "$pre" | sed 's/NAME\|NNNN/*/g'); post=$(echo "$post" | sed 's/NAME\|NNNN/*/g')
		for x in $list; do
			[ "$x" = - ] && x=
			n=$((n + 1))
			# shellcheck disable=SC2086
			if ! (cd "$root" && set +f && ls -d $pre$x$post >/dev/null 2>&1); then
				[ $count = 1 ] || echo "$doc: $pre$x$post"
				bad=1
			fi
		done
	done
done
[ $count = 1 ] && echo "$n"
exit $bad
