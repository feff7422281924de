"""train.py - sample for gpureduce: int32 offsets overflow in a Triton kernel.

A Triton kernel scales an activation tensor (out = x * scale), one block of
BLOCK elements per program.  The bug: its offsets are int32,

    offs = pid * BLOCK + tl.arange(0, BLOCK)

which is fine while the tensor has fewer than 2^31 elements.  The first
steps use small tensors.  Then a long-context batch brings a float16 tensor
of 2^31 + 2^14 elements (4 GiB + 32 KiB each for x and out; the H200 has
141 GB).  For the last 16 programs (past 2^21), pid * BLOCK passes 2^31
and wraps negative; the mask (offs < n, with n > 2^31 an int64) lets the negative
offsets through, and the store writes 2 * (offs) bytes -- about 4 GiB --
before the output buffer, where nothing is mapped.  The output buffer is
allocated first and the input right after it, so the wrapped load (4 GiB
before x) reads inside the output buffer and the store is what faults.
Only 16 blocks go wild, so compute-sanitizer (shrink's site check) has few
faulting threads to report.  The script dies with the usual RuntimeError.

INT32_OVERFLOW_CLEAN=1 runs the same steps with the offsets in int64 (the
fix, through the constexpr INT64: the default build is the same kernel as
before): the clean variant, which must run and hunt clean (issue 28).

Usage: python3 train.py   (no build step; Triton compiles on first use)
"""
import os
import sys
import time

import torch
import triton
import triton.language as tl

BLOCK = 1024
SMALL_STEPS = 3
BIG_N = 2**31 + 2**14          # elements: just past what int32 offsets can index
CLEAN = os.environ.get("INT32_OVERFLOW_CLEAN") == "1"


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, scale, BLOCK: tl.constexpr, INT64: tl.constexpr):
    pid = tl.program_id(0)
    if INT64:   # the fix (clean variant only; a compile-time branch)
        pid = pid.to(tl.int64)
    # BUG: int32 arithmetic; should be pid.to(tl.int64) * BLOCK
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, x * scale, mask=mask)


def scale(x, out, s):
    n = x.numel()
    scale_kernel[(triton.cdiv(n, BLOCK),)](x, out, n, s, BLOCK=BLOCK, INT64=CLEAN)
    return out


def main():
    dev = "cuda"
    t = time.time()
    for step in range(SMALL_STEPS):
        n = (1 << 20) * (step + 1)
        out = torch.zeros(n, dtype=torch.float16, device=dev)
        x = torch.full((n,), 1.5, dtype=torch.float16, device=dev)
        scale(x, out, 0.5)
        torch.cuda.synchronize()
        print(f"[int32] step {step}: {n} elements, out[-1] = {float(out[-1]):.3f} "
              f"({time.time() - t:.2f}s)", flush=True)
        del out, x
    # the long-context batch: the output is allocated first, then the input
    n = BIG_N
    print(f"[int32] long batch: {n} elements ({2 * n / 2**30:.3f} GiB per tensor)", flush=True)
    out = torch.zeros(n, dtype=torch.float16, device=dev)
    x = torch.full((n,), 1.5, dtype=torch.float16, device=dev)
    scale(x, out, 0.5)
    torch.cuda.synchronize()
    print(f"[int32] done: out[-1] = {float(out[-1]):.3f} ({time.time() - t:.2f}s)", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
