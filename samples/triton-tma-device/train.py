"""train.py - sample for gpureduce: a device-side Triton TMA descriptor with a bad stride.

row_sum_kernel builds its tensor map on the device, once per program, with
tl.make_tensor_descriptor: Triton writes a 128-byte CUtensorMap into a
global scratch buffer (tensormap.replace from the base pointer, shape and
strides it is given) that triton.set_allocator hands it at every launch.
The kernel's parameters are plain pointers and integers.  The bug: from
step 20 the caller passes the row stride of the allocator's page-aligned
layout (PAGE_PITCH = 1 << 20 elements, 4 MiB) instead of the tensor's row
length, so row r of the map lies r * 4 MiB past the tensor: the 2048 rows
reach 8 GiB past a 512 KiB tensor and the TMA unit faults.

TRITON_TMA_DEVICE_CLEAN=1 runs the same steps with the paged path fixed (it
passes x.stride(0) too): the clean variant, which must run and hunt clean
(issue 28).

Usage: python3 train.py   (sm_90: TMA; Triton compiles on first use)
"""
import os
import sys

import torch
import triton
import triton.language as tl

D = 64
N_ROWS = 2048
BLOCK_R = 64
PAGE_PITCH = 1 << 20
STEPS = 30
PAGED_STEP = 20
CLEAN = os.environ.get("TRITON_TMA_DEVICE_CLEAN") == "1"


def alloc_fn(size, alignment, stream):
    return torch.empty(size, device="cuda", dtype=torch.int8)


@triton.jit
def row_sum_kernel(x_ptr, out_ptr, n_rows, row_stride, BLOCK_R: tl.constexpr, D: tl.constexpr):
    pid = tl.program_id(0)
    desc = tl.make_tensor_descriptor(x_ptr, shape=[n_rows, D], strides=[row_stride, 1],
                                     block_shape=[BLOCK_R, D])
    blk = desc.load([pid * BLOCK_R, 0])
    s = tl.sum(blk, axis=1)
    rows = pid * BLOCK_R + tl.arange(0, BLOCK_R)
    tl.store(out_ptr + rows, s, mask=rows < n_rows)


def row_sums(x, paged):
    n = x.shape[0]
    # BUG: the paged path passes the page pitch, not x.stride(0)
    stride = PAGE_PITCH if paged and not CLEAN else x.stride(0)   # CLEAN: the fix
    out = torch.empty(n, device=x.device, dtype=torch.float32)
    row_sum_kernel[(triton.cdiv(n, BLOCK_R),)](x, out, n, stride, BLOCK_R=BLOCK_R, D=D)
    return out


def main():
    torch.manual_seed(0)
    triton.set_allocator(alloc_fn)
    x = torch.randn(N_ROWS, D, device="cuda", dtype=torch.float32)
    total = torch.zeros((), device="cuda")
    for step in range(STEPS):
        s = row_sums(x, step >= PAGED_STEP)
        total += s.sum()
        x = x * 0.999
        if step % 10 == 0 or step == PAGED_STEP:
            print(f"[triton-tma-device] step {step}: total {total.item():.4f}", flush=True)
    torch.cuda.synchronize()
    print("[triton-tma-device] done", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
