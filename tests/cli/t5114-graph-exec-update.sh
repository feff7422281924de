#!/bin/sh
# t5114-graph-exec-update.sh - cuGraphExecUpdate (XLA's command buffers,
# "update instead of instantiating again" loops): capture writes the new
# graph's nodes under a synthetic handle and points the exec at them (an
# explicit graph, capture/graphapi.c gx_exec_update), or points the
# exec at a stream-captured graph's records; node updates after it still
# find their node, until the exec runs a stream-captured graph (not
# followed); a failed update writes nothing.  Replay runs, at each graph
# launch, the graph its exec was last pointed at, also when that is an
# older graph than one it ran before (addr/graphs.c).
. tests/cli/test-lib.sh

. tests/cli/capture-fakes.sh
capture_fakes

check "capture the graphupdate scenario" "$GPUREDUCE" capture -o u.bin -- ./fakeprog graphupdate
check "dump it" sh -c "./dump u.bin >u.txt"
grep -E '^(GRAPH_|LAUNCH|NOTE)' u.txt | sed 's/ params=.*args=/ args=/; s/ attrs=.*//' >seq.txt
# fill's arguments: the pointer, then n (2^30 = 00000040, 1000 = e8030000, 5 = 05000000)
check_grep "the stream-captured graph's node (n = 7)" \
	"^LAUNCH seq=0 name=_Z4fillPfi api=1 flags=2 .* stream=0xca97 args=0000000000d0000007000000\$" seq.txt
check_grep "the node update: synthetic graph 1 with n = 2^30" \
	"^LAUNCH .* stream=0xff00000000000001 args=0000000000d0000000000040\$" seq.txt
check_grep "cuGraphExecUpdate from the explicit graph: synthetic graph 2, n = 1000 again" \
	"^LAUNCH .* stream=0xff00000000000002 args=0000000000d00000e8030000\$" seq.txt
check_grep "  ...and the exec pointed at it" "^GRAPH_EXEC stream=0x0 graph=0xff00000000000002 exec=0xe9f\$" seq.txt
check_grep "a node update after it, by the original node handle: synthetic graph 3, n = 5" \
	"^LAUNCH .* stream=0xff00000000000003 args=0000000000d0000005000000\$" seq.txt
check_grep "cuGraphExecUpdate from the stream-captured graph: the exec pointed at it" \
	"^GRAPH_EXEC stream=0x0 graph=0x9a9 exec=0xe9f\$" seq.txt
check_no_grep "  ...then a node update is not followed, and the failed update writes nothing" \
	"stream=0xff00000000000004" seq.txt
tail -n 2 seq.txt | head -n 1 >last.txt
check_grep "the graph launch comes after the stream graph's GRAPH_EXEC" "^GRAPH_EXEC stream=0x0 graph=0x9a9 exec=0xe9f\$" last.txt
check_no_grep "no 'does not follow' note for cuGraphExecUpdate" "cuGraphExecUpdate.*does not follow" u.txt

# replay: an exec pointed back at an older graph runs that graph
on_double no-sanitizer plain-path
cat > b.txt <<EOT
process 100 /work ./app
device "gpureduce CPU double"
module $DBL/kernels.cubin 1
alloc 0x7f0000100000 4000
alloc 0x7f0000200000 4000
h2d 0x7f0000100000 4000 seq
gbegin 0xa1
launch _Z7add_onePfi 4 256 ptr:0x7f0000100000 i32:1000 stream=0xa1 captured=1
gend 0xa1 0xa1
gbegin 0xa2
launch _Z13scale_nocheckPfPKfi 64 256 ptr:0x7f0000200000 ptr:0x7f0000100000 i32:1000 stream=0xa2 captured=1
gend 0xa2 0xa2
gexec 0xa1 0xe9f
glaunch 0xe9f
gexec 0xa2 0xe9f
gexec 0xa1 0xe9f
glaunch 0xe9f
launch _Z13scale_nocheckPfPKfi 64 256 ptr:0x7f0000200000 ptr:0x7f0000100000 i32:1000
fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel 2 at_launch=1
EOT
check "mktrace: an exec pointed at graph a2 (it faults), then back at a1" $MKTRACE b.bin <b.txt
check_exit "replay faults (exit 1)" 1 $GPUREDUCE replay b.bin
check_grep "  ...at the last plain launch, not in the second graph launch" "(launch #2) in _Z13scale_nocheckPfPKfi" "$TMP/.out"
sed '/^gexec 0xa1 0xe9f$/{x;s/^/x/;/^xx$/{x;d};x}' b.txt >c.txt
check "mktrace: the same without pointing it back" $MKTRACE c.bin <c.txt
check_exit "  ...replay faults in the second graph launch (graph a2)" 1 $GPUREDUCE replay c.bin
check_grep "  ...in scale_nocheck's node" "(launch #1) in _Z13scale_nocheckPfPKfi" "$TMP/.out"
finish
