"""train.py - sample for `gpureduce hunt`: an off-by-one read in a reduction
over a ragged batch (never faults natively; one sum is silently wrong).

A ragged batch keeps its 1024 token values (float32, 4 KiB: a multiple of
the caching allocator's 512-byte rounding) in one flat tensor and the row
boundaries in `offsets` (int64, B + 1 entries).  A Triton kernel sums each
row, one program a row.

The bug: the loop runs to offsets[b + 1] INCLUSIVE (`end + extra`, extra =
1), so each row also adds the first value of the next row, and the last
row reads values[1024]: one element past the tensor, into its neighbour in
the same 2 MiB segment.  No fault; the sums are off.  Under `gpureduce
hunt` the values tensor ends at an unmapped guard, so that read faults.

RAGGED_SUM_CLEAN=1 runs with extra = 0 (the fix): the clean variant.

Usage: python3 train.py   (no build step; Triton compiles on first use)
"""
import os
import sys

import torch
import triton
import triton.language as tl

TOKENS = 1024


@triton.jit
def ragged_sum_kernel(vals_ptr, offs_ptr, out_ptr, extra):
    b = tl.program_id(0)
    start = tl.load(offs_ptr + b)
    end = tl.load(offs_ptr + b + 1)
    acc = tl.zeros((), dtype=tl.float32)
    # BUG (unless clean): extra = 1 makes the end inclusive
    for j in range(start, end + extra):
        acc += tl.load(vals_ptr + j)
    tl.store(out_ptr + b, acc)


def main():
    clean = os.environ.get("RAGGED_SUM_CLEAN") == "1"
    torch.manual_seed(0)
    lengths = torch.tensor([100, 250, 3, 371, 300], dtype=torch.int64)
    assert int(lengths.sum()) == TOKENS
    offsets = torch.zeros(len(lengths) + 1, dtype=torch.int64)
    offsets[1:] = torch.cumsum(lengths, 0)
    vals = torch.randn(TOKENS, device="cuda")                        # VALUES (4 KiB)
    neighbour = torch.full((1024,), 1000.0, device="cuda")           # right after it
    gap = neighbour.data_ptr() - vals.data_ptr()
    if gap != vals.numel() * vals.element_size():
        print(f"[ragged-sum] the neighbour is not right after the values (gap {gap} bytes)", flush=True)
    offs = offsets.to("cuda")
    out = torch.empty(len(lengths), device="cuda")
    ragged_sum_kernel[(len(lengths),)](vals, offs, out, 0 if clean else 1)   # OVERRUN
    ref = torch.stack([vals[offsets[i]:offsets[i + 1]].sum() for i in range(len(lengths))])
    err = (out - ref).abs().max().item()
    print(f"[ragged-sum] {'clean' if clean else 'buggy'} kernel: max error {err:.3f} "
          f"(last row {out[-1].item():.3f}, expected {ref[-1].item():.3f})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
