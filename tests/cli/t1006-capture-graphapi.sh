#!/bin/sh
# t1006-capture-graphapi.sh - graphs built with the explicit graph API
# (cuGraphAddKernelNode...) are walked at instantiation and written like
# stream-captured ones: GRAPH_BEGIN, the nodes in dependency order flagged
# captured, GRAPH_END, GRAPH_EXEC; an exec's kernel node update writes the
# graph again; a child graph node's nodes are written in its place, an
# event node only orders (capture/graphapi.c).  Same fake CUPTI+driver as
# t1003.
. tests/cli/test-lib.sh

. tests/cli/capture-fakes.sh
capture_fakes

check "capture the graphapi scenario" "$GPUREDUCE" capture -o g.bin -- ./fakeprog graphapi
check "dump it" sh -c "./dump g.bin >g.txt"
# the records of the first graph, one word each (FUNC_INFO, which says
# what a kernel's function is, is no node)
sed -n '/^GRAPH_BEGIN stream=0x9b0 /,/^GRAPH_END/p' g.txt | grep -v -e '^BLOB' -e '^FUNC_INFO' | cut -d' ' -f1 | tr '\n' ' ' > order.txt
check_grep "nodes in dependency order: memset and memcpy before fill, fill before scale" \
	"^GRAPH_BEGIN MEMSET H2D LAUNCH LAUNCH GRAPH_END \$" order.txt
D=g.txt
has() { check_grep "$1" "$2" "$D"; }
has "the memset node, on the graph's stream, flagged async+captured" \
	"^MEMSET dst=0xd00000000000 value=0x0 elem=4 width=1000 height=1 pitch=0 stream=0x9b0 flags=3\$"
has "the memcpy node (unified dst: device) with the host bytes" \
	"^H2D dst=0xd00000001000 src=0x[0-9a-f]* size=64 stream=0x9b0 flags=3 datalen=64 data=4041424344454647\$"
has "a kernel node of a CUfunction, with its parameter bytes" \
	"^LAUNCH seq=0 name=_Z4fillPfi api=1 flags=2 grid=4,1,1 block=256,1,1 shmem=0 stream=0x9b0 params=0:8,8:4 args=0000000000d00000e8030000 "
has "a kernel node given as a CUkernel" "^LAUNCH seq=1 name=_Z5scalePfPKfi api=1 flags=2 grid=1,1,1 block=16,1,1 "
has "the graph ends with its handle" "^GRAPH_END stream=0x9b0 graph=0x9b0 exec=0x0\$"
has "  ...then its exec" "^GRAPH_EXEC stream=0x0 graph=0x9b0 exec=0xe9f\$"
has "the host node: a note" "^NOTE graph 0x9b0: 1 of its 5 nodes are of a kind not recorded"
has "the exec update: the graph again under a new handle" "^GRAPH_BEGIN stream=0xff00000000000001 "
has "  ...with the new kernel parameters" \
	"^LAUNCH seq=2 name=_Z4fillPfi api=1 flags=2 grid=8,1,1 block=256,1,1 shmem=0 stream=0xff00000000000001 params=0:8,8:4 args=0000000000d0000000000040 "
has "  ...and the exec pointed at it" "^GRAPH_EXEC stream=0x0 graph=0xff00000000000001 exec=0xe9f\$"
n=$(grep -c '^GRAPH_LAUNCH .*exec=0xe9f' $D); [ "$n" = 2 ] && ok "both launches recorded" || fail "both launches recorded ($n)"
has "the fault names no kernel (replay does)" "^FAULT code=700 .*api=cuGraphLaunch .*kernel=\$"

check "a stream-captured graph with the same handle" "$GPUREDUCE" capture -o s.bin -- ./fakeprog graphapi-stream
check "dump it" sh -c "./dump s.bin >s.txt"
n=$(sed '/exec=0xe9e$/q' s.txt | grep -c '^LAUNCH\|^MEMSET'); [ "$n" = 0 ] && ok "  ...is not walked at instantiation" || fail "  ...is not walked at instantiation ($n)"
check_grep "  ...its exec is recorded" "^GRAPH_EXEC stream=0x0 graph=0x9b0 exec=0xe9e\$" s.txt
n=$(sed '1,/exec=0xe9e$/d' s.txt | grep -c '^LAUNCH'); [ "$n" = 2 ] && ok "after cuGraphDestroy the same handle as an explicit graph is walked" || fail "after cuGraphDestroy the same handle as an explicit graph is walked ($n)"

check "a graph with a child graph node and an event node" "$GPUREDUCE" capture -o c.bin -- ./fakeprog graphchild
check "dump it" sh -c "./dump c.bin >c.txt"
sed -n '/^GRAPH_BEGIN stream=0x9b1 /,/^GRAPH_END/p' c.txt | grep -v -e '^BLOB' -e '^FUNC_INFO' | cut -d' ' -f1 | tr '\n' ' ' > corder.txt
check_grep "  ...the child's nodes in its place, then the kernel after it" \
	"^GRAPH_BEGIN MEMSET H2D LAUNCH LAUNCH LAUNCH GRAPH_END \$" corder.txt
check_grep "  ...the last is the parent's own kernel (n = 3)" \
	"^LAUNCH seq=2 name=_Z4fillPfi api=1 flags=2 grid=1,1,1 block=32,1,1 shmem=0 stream=0x9b1 params=0:8,8:4 args=0020000000d0000003000000 " c.txt
check_grep "  ...the child's host node noted, the event node not" "^NOTE graph 0x9b1: 1 of its 7 nodes are of a kind not recorded" c.txt
check_grep "  ...and its exec" "^GRAPH_EXEC stream=0x0 graph=0x9b1 exec=0xea1\$" c.txt
finish
