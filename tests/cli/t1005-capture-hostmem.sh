#!/bin/sh
# t1005-capture-hostmem.sh - bytes that reach the GPU without a copy call:
# managed memory and mapped pinned host memory the CPU changes between
# launches are written, chunk by changed chunk, as MEMCPY_H2D records
# flagged TR_F_HOSTMEM (8) right before each launch, graph launch and
# device-to-device copy (a captured launch does not run: nothing written)
# (capture/managed.c).  Same fake CUPTI+driver as t1003.
. tests/cli/test-lib.sh

. tests/cli/capture-fakes.sh
capture_fakes
unset GPUREDUCE_HOSTMEM_MAX

check "capture the hostmem scenario" "$GPUREDUCE" capture -o hm.bin -- ./fakeprog hostmem
check "dump it" sh -c "./dump hm.bin >hm.txt"
D=hm.txt
# the records between consecutive LAUNCH/GRAPH_LAUNCH lines, numbered by launch
awk 'BEGIN { n = 0 } /^LAUNCH|^GRAPH_LAUNCH/ { n++; next } /^H2D .*flags=8 / { c[n]++ } END { for (i = 0; i <= n; i++) printf "%d:%d\n", i, c[i] + 0 }' $D > per.txt
has() { check_grep "$1" "$2" "$D"; }
has "managed allocation recorded" "^ALLOC addr=0x[0-9a-f]* size=204800 kind=managed name=\$"
n=$(grep -c "^ALLOC .*kind=host" $D); [ "$n" = 3 ] && ok "both pinned allocations and the registered one recorded" || fail "both pinned allocations and the registered one recorded ($n)"
check_grep "first launch: every chunk of the managed buffer and the mapped buffer, not the unmapped one" "^0:5\$" per.txt
has "  ...a short last chunk" "^H2D dst=0x[0-9a-f]* .* size=8192 stream=0x0 flags=8 "
has "  ...the mapped buffer's bytes" "^H2D dst=0x[0-9a-f]* .* size=100 stream=0x0 flags=8 datalen=100 data=1111111111111111\$"
check_grep "second launch: the one chunk the CPU changed" "^1:1\$" per.txt
check_grep "third launch: nothing changed, nothing written" "^2:0\$" per.txt
check_grep "a device-to-device copy from managed memory: the changed chunk first" "^3:1\$" per.txt
n=$(grep -A1 '^H2D .*size=65536 .*flags=8 ' $D | grep -c '^D2D .*size=16 ')
[ "$n" = 1 ] && ok "  ...right before the D2D record" || fail "  ...right before the D2D record ($n)"
check_grep "a captured launch: nothing written" "^4:0\$" per.txt
check_grep "graph launch: the changed managed chunk, the mapped buffer, and the plain pinned one a captured launch pointed at" "^5:3\$" per.txt
has "  ...the plain buffer's 200 bytes" "^H2D dst=0x[0-9a-f]* .* size=200 stream=0x0 flags=8 "
has "  ...with a note naming the captured launch" "^NOTE kernel .* (launch #4) takes a pointer to pinned host memory at 0x[0-9a-f]* (200 bytes; argument byte 0): what the CPU writes into it is recorded from this launch on"
check_grep "after the frees: nothing tracked" "^6:0\$" per.txt
check_grep "registered host memory: its bytes" "^7:1\$" per.txt
has "  ...all 4096 of them" "^H2D dst=0x[0-9a-f]* .* size=4096 stream=0x0 flags=8 datalen=4096 data=7700000000000000\$"
check_grep "  ...made unreadable by the program: skipped, not a crash" "^8:0\$" per.txt
first=$(grep -m1 "kind=managed" $D | sed 's/.*addr=\(0x[0-9a-f]*\).*/\1/')
second=$(printf '0x%x' $((first + 65536)))
has "  ...the second launch's chunk is chunk 1" "^H2D dst=$second .* size=65536 stream=0x0 flags=8 "

# mapped and registered buffers from GPUREDUCE_HOSTMEM_ONUSE bytes up are
# hashed only before launches that point into them (none here does);
# managed memory and smaller ones as before
GPUREDUCE_HOSTMEM_ONUSE=1000 check "capture with on-use tracking from 1000 bytes" "$GPUREDUCE" capture -o onuse.bin -- ./fakeprog hostmem
check "dump it" sh -c "./dump onuse.bin >onuse.txt"
awk 'BEGIN { n = 0 } /^LAUNCH|^GRAPH_LAUNCH/ { n++; next } /^H2D .*flags=8 / { c[n]++ } END { for (i = 0; i <= n; i++) printf "%d:%d\n", i, c[i] + 0 }' onuse.txt > per2.txt
check_grep "  ...the registered page (4096 bytes) is not written: no launch points at it" "^7:0\$" per2.txt
check_no_grep "  ...none of its bytes anywhere" "size=4096 stream=0x0 flags=8 datalen=4096 data=7700000000000000" onuse.txt
check_grep "  ...the managed buffer still is, at the first launch" "^0:5\$" per2.txt
check_grep "  ...and the small mapped one at the graph launch" "^5:3\$" per2.txt

GPUREDUCE_HOSTMEM_MAX=100000 check "capture with a hashing cap below the managed buffer" "$GPUREDUCE" capture -o cap.bin -- ./fakeprog hostmem
check "dump it" sh -c "./dump cap.bin >cap.txt"
check_grep "  ...a note names the untracked buffer" "^NOTE managed memory at 0x[0-9a-f]* (204800 bytes) passes GPUREDUCE_HOSTMEM_MAX" cap.txt
n=$(grep -c "size=65536 .*flags=8" cap.txt); [ "$n" = 0 ] && ok "  ...and none of its chunks is written" || fail "  ...and none of its chunks is written ($n)"
check_grep "  ...the small mapped buffer still is" "size=100 stream=0x0 flags=8" cap.txt
finish
