#!/bin/sh
# t1028-capture-memwrites.sh - copies and memory writes that are not plain
# cuMemcpy calls: cuMemcpyBatchAsync (CUDA 13's form and 12.8's, with
# failIdx; vLLM's KV-cache offload uses it), cuStreamWriteValue32/64 and
# cuStreamBatchMemOp's writes (NCCL-style flags) are recorded as copy
# records in call order (capture/inject.c rec_batch_copy,
# rec_write_value, rec_batch_memop), with their bytes; waits, flushes,
# zero-size and host-to-host copies write nothing; a batch element whose
# host source cannot be read is skipped with a note.  Fake CUPTI+driver
# (device pointers are 0xd0...).
. tests/cli/test-lib.sh

. tests/cli/capture-fakes.sh
capture_fakes

check "capture the memwrites scenario" "$GPUREDUCE" capture -o mw.bin -- ./fakeprog memwrites
check "dump it" sh -c "./dump mw.bin >mw.txt"
grep -E '^(H2D|D2H|D2D|LAUNCH|NOTE) ' mw.txt | sed 's/ src=0x[0-9a-f]*//; s/ datalen=[0-9]*//; s/ args=.*//' >seq.txt
cat >want.txt <<'EOT'
H2D dst=0xd00000001000 size=100 stream=0x5e1 flags=1 data=3131313131313131
D2H dst=0x@ size=64 stream=0x5e1 flags=1
D2D dst=0xd00000003000 size=50 stream=0x5e1 flags=1
H2D dst=0xd00000002000 size=300 stream=0x2 flags=1 data=3232323232323232
NOTE cuMemcpyBatchAsync_ptsz: 1 of its 2 copies read host memory that is not readable; they are not recorded
H2D dst=0xd00000006000 size=4 stream=0x5e1 flags=1 data=78563412
H2D dst=0xd00000006008 size=8 stream=0x5e1 flags=1 data=8877665544332211
H2D dst=0xd00000006010 size=4 stream=0x5e1 flags=1 data=0df0feca
H2D dst=0xd00000006018 size=8 stream=0x5e1 flags=1 data=0807060504030201
LAUNCH seq=0 name=_Z4fillPfi api=1 flags=0 grid=4,1,1 block=256,1,1 shmem=0 stream=0x0 params=0:8,8:4
EOT
sed 's/^D2H dst=0x[0-9a-f]* /D2H dst=0x@ /' seq.txt >got.txt
if cmp -s want.txt got.txt; then
	ok "every copy and write recorded in order, with its bytes; nothing for the rest"
else
	fail "every copy and write recorded in order, with its bytes; nothing for the rest"
	diff want.txt got.txt | sed 's/^/    | /'
fi
check_no_grep "no 'unsupported' note for these calls any more" "unsupported .*\(Batch\|WriteValue\)" mw.txt
finish
