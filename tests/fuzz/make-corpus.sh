#!/bin/sh
# make-corpus.sh - regenerate the fuzz seed corpus (tests/fuzz/corpus/) with
# the mktrace test helper.  The seeds are committed; rerun this only when
# the format or mktrace changes:  make build/mktrace && sh tests/fuzz/make-corpus.sh
set -e
BUILD=${BUILD:-build}
M=$BUILD/mktrace
C=tests/fuzz/corpus
mkdir -p "$C"

$M "$C/full.bin" <<'EOF'
process 4321 /home/u python3 train.py --lr 0.1
device "NVIDIA H200"
elfmodule 1 _Z5scalePfPKfii _Z4fillPfi
alloc 0x7f0000000000 4000
alloc 0x7f0000001000 4000 managed
alloc 0x7f0000100000 256 global g_table
h2d 0x7f0000000000 200 seq 0x5000000 async
memset 0x7f0000001000 7 1000 4
memset 0x7f0000001000 1 16 1 4 32
launch _Z4fillPfi 4 256 ptr:0x7f0000001000 i32:1000 py=nogil
funcattr _Z5scalePfPKfii 8 65536
launch _Z5scalePfPKfii 4 256 ptr:0x7f0000001040 ptr:0x7f0000000000 i32:1000 f32:2.5 frame=train.py:40:step frame=train.py:99:<module> attr=4:01000000 api=ex grid=4,2,1 block=256,1,1 shmem=1024 stream=0x77
launch _Z4fillPfi 1 32 hex:0000000000000000001000000000007f0000000000000000 u8:7 u16:9
d2d 0x7f0000001000 0x7f0000000000 64
d2h 0x6000000 0x7f0000001000 64
free 0x7f0000000000
launch _Z5scalePfPKfii 4 256 ptr:0x7f0000000fa0 ptr:0x7f0000000000 i32:1000 i32:4
fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel 3
note "unsupported call seen: cuGraphLaunch"
reduction "kept: 3 of 5 launches"
end 1
EOF

$M "$C/short.bin" <<'EOF'
process 7 /w python3 train.py
device "NVIDIA H200"
alloc 0x7f0000000000 4096
shortlaunches
launch _Z4fillPfi 4 256 ptr:0x7f0000000000 i32:1000 func=0x10
launch _Z5scalePfPKfi 4 256 ptr:0x7f0000000000 ptr:0x7f0000000000 i32:8 func=0x20
launch _Z4fillPfi 4 256 ptr:0x7f0000000000 i32:1000 func=0x10 grid=8
launch _Z5scalePfPKfi 4 256 ptr:0x7f0000000000 ptr:0x7f0000000000 i32:8 func=0x20
launch _Z4fillPfi 4 256 ptr:0x7f0000000000 i32:999 func=0x10
launch _Z4fillPfi 4 256 ptr:0x7f0000000000 i32:1000 func=0x10
end 0
EOF

$M "$C/torn.bin" <<'EOF'
process 1 / prog
alloc 0x7f0000000000 4000
launch k 1 32 ptr:0x7f0000000000
end 0
truncate -5
EOF

$M "$C/newer-minor.bin" <<'EOF'
note before
raw 42 0102030405060708
alloc 0x7f0000000000 64
raw 17 00
launch k 1 1 ptr:0x7f0000000008
version 1 3
EOF

$M "$C/blobs.bin" <<'EOF'
blob rand:7 300
blob 0 100
blob seq 50
h2d 0x1000000 300 rand:7
h2d 0x1000000 100 0
EOF

: | $M "$C/header-only.bin"

$M "$C/python.bin" <<'EOF'
alloc 0x7f0000000000 4096
launch triton_kernel 128 128 ptr:0x7f0000000000 ptr:0x7f0000001000 u32:4096 frame=model.py:12:forward frame=torch/nn/modules/module.py:1736:_call_impl frame=train.py:40:step
fault 710 CUDA_ERROR_ASSERT cuCtxSynchronize 0 at_launch=0
EOF

# format 1.2: a segment that starts at a checkpoint, then its window
$M "$C/checkpoint.bin" <<'EOF'
process 4321 /home/u python3 train.py
device "NVIDIA H200"
elfmodule 1 _Z6gatherPfPKfPKxi _Z7add_onePfi
funcattr _Z6gatherPfPKfPKxi 8 65536
note "checkpoint 1 at launch #50 was not taken: out of host memory"
ckbegin 2 100 2 12000
alloc 0x7f0000000000 4000
h2d 0x7f0000000000 4000 seq 0 checkpoint
alloc 0x7f0000100000 8000
h2d 0x7f0000100000 4096 u64:1,2,3,0x7f7f7f7f7f7f 0 checkpoint
h2d 0x7f0000101000 3904 0 0 checkpoint
ckend 2 100 2 12000 700
h2d 0x7f0000000000 4000 rand:3
launch _Z7add_onePfi 4 256 ptr:0x7f0000000000 i32:1000 seq=100
launch _Z6gatherPfPKfPKxi 4 256 ptr:0x7f0000000000 ptr:0x7f0000000000 ptr:0x7f0000100000 i32:1000 seq=101
fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel 101
EOF

# ... and one cut in the middle of its second checkpoint (read as ending before it)
$M "$C/checkpoint-cut.bin" <<'EOF'
process 1 / prog
ckbegin 1 0 1 64
alloc 0x7f0000000000 64
h2d 0x7f0000000000 64 seq 0 checkpoint
ckend 1 0 1 64 80
launch k 1 32 ptr:0x7f0000000000
ckbegin 2 1 1 64
alloc 0x7f0000000000 64
h2d 0x7f0000000000 64 rand:1 0 checkpoint
truncate -7
EOF

# format 1.3: allocator blocks (tensors) inside a segment
$M "$C/blocks.bin" <<'EOF'
alloc 0x7f0000000000 2097152
block 0x7f0000000000 4096 0x7f0000000000 initial at=train.py:10:main
block 0x7f0000001000 800 0x7f0000000000 alloc=1024 source=1 at=train.py:11:main
launch _Z13scale_nocheckPfPKfi 5 256 ptr:0x7f0000000000 ptr:0x7f0000001000 i32:1024
blockfree 0x7f0000001000
fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel 0
EOF

# format 1.7: an argument word that is an integer, said and shown
$M "$C/nonptr.bin" <<'EOF'
alloc 0x7fd4fe000000 0x5000000
nonptr _Z9dims_fill4DimsPf 0
launch _Z9dims_fill4DimsPf 1 256 u64:0x00007fd500000040 ptr:0x7fd4fe000000
launch _Z9dims_fill4DimsPf 1 256 u64:0x40 ptr:0x7fd4fe000000
end 0
EOF

# repro.cu's stored pointers (emit-stored.c): 24 words into an allocation
# of nearly 2^64 bytes, at offsets either side of 2^63 (their strides once
# overflowed int64)
$M "$C/stored-ptrs.bin" <<'EOF'
process 7 /w ./app
device "NVIDIA H200"
elfmodule 1 _Z4fillPfi
alloc 0x1000 0xff00000000000000
alloc 0x7f0000000000 192
h2d 0x7f0000000000 192 u64:0x7f80000000001000,0x8100000000001008,0x7f80000000001010,0x8100000000001018,0x7f80000000001020,0x8100000000001028,0x7f80000000001030,0x8100000000001038,0x7f80000000001040,0x8100000000001048,0x7f80000000001050,0x8100000000001058,0x7f80000000001060,0x8100000000001068,0x7f80000000001070,0x8100000000001078,0x7f80000000001080,0x8100000000001088,0x7f80000000001090,0x8100000000001098,0x7f800000000010a0,0x81000000000010a8,0x7f800000000010b0,0x81000000000010b8
launch _Z4fillPfi 1 32 ptr:0x7f0000000000 i32:8
fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel 0
end 1
EOF

# memory mapped piece by piece (trace/vmmjoin.inc): a segment grown,
# a hole unmapped and refilled, a piece alone in the hole, a peer's piece,
# a plain allocation over an unmapped piece, the group unmapped, blocks
# (format 2.0: joined by adjacency; 2.1 would want the continuation flag)
$M "$C/vmm-pieces.bin" <<'EOF'
process 7 /w python3 train.py
device "NVIDIA H200"
elfmodule 1 _Z4fillPfi
alloc 0x7f0000000000 0x200000 vmm
alloc 0x7f0000200000 0x200000 vmm
alloc 0x7f0000400000 0x200000 vmm
alloc 0x7f0000600000 0x200000 vmm
block 0x7f00001ff000 8192 0x7f0000000000 initial
launch _Z4fillPfi 8 256 ptr:0x7f00001ff000 i32:2048
free 0x7f0000200000 vmm
free 0x7f0000400000 vmm
alloc 0x7f0000400000 0x200000 vmm
alloc 0x7f0000800000 0x200000 vmm cuMemImportFromShareableHandle
free 0x7f0000400000 vmm
alloc 0x7f0000200000 0x200000
free 0x7f0000200000
alloc 0x7f0000200000 0x200000 vmm
launch _Z4fillPfi 8 256 ptr:0x7f00001ff000 i32:2048
free 0x7f0000000000 vmm
free 0x7f0000200000 vmm
free 0x7f0000600000 vmm
alloc 0x7f0000000000 0x200000 vmm
alloc 0x7f0000200000 0x200000 vmm
fault 700 CUDA_ERROR_ILLEGAL_ADDRESS cuLaunchKernel 1
end 1
version 2 0
EOF

# a bare ELF image, for the symbol counter
$M --elf "$C/cubin.elf" _Z5scalePfPKfii _Z4fillPfi
ls -l "$C"
