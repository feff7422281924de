# fake-sanitizer.sh - sourced by the CLI tests' stand-in compute-sanitizers
# (shell scripts that print reports in compute-sanitizer's format):
#
#   . "$SRCDIR/tests/cli/helpers/fake-sanitizer.sh"
#
# Drops compute-sanitizer's own options from "$@" (what is left is the
# replay command gpureduce asked it to run), sets $trace to that command's
# last argument (the trace file), and defines
#
#   san_run CMD...            runs the command, prints its output, and sets
#                             $out to it and $buf0 / $buf0_size to the first
#                             buffer the worker placed ("gpureduce-buffer 0
#                             ADDR SIZE"; both empty when there is none)
#   san_report PC [LINE...]   one invalid 4-byte write in
#                             scale_nocheck(float *, const float *, int)+PC,
#                             with LINEs after the "at" line, closed by the
#                             bare "=========" line that ends a real report.
while case $1 in -*|all|[0-9]*) true ;; *) false ;; esac; do shift; done
trace=
for a in "$@"; do trace=$a; done

san_report() {
	echo "========= Invalid __global__ write of size 4 bytes"
	echo "=========     at scale_nocheck(float *, const float *, int)+$1"
	shift
	for l in "$@"; do
		echo "=========     $l"
	done
	echo "========= "
}

san_run() {
	out=$("$@" 2>&1)
	echo "$out"
	set -- $(echo "$out" | sed -n 's/^gpureduce-buffer 0 \(0x[0-9a-f]*\) \([0-9]*\)$/\1 \2/p' | head -1)
	buf0=${1:-}
	buf0_size=${2:-}
}
