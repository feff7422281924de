"""train.py - sample for `gpureduce hunt`: a Triton masked load past the end
of a strided view (never faults natively; the output is silently wrong).

A feature tensor `feats` of 64 x 64 float32 (16 KiB, a multiple of the
caching allocator's 512-byte rounding) holds a bias column first; the model
sums the other 63 columns of each row, through the strided view
`feats[:, 1:]` (shape 64 x 63, row stride 64, starting one element in).

The bug: the row-sum kernel masks its column loads with the view's row
STRIDE (64) instead of its number of columns (63).  Each row then also
reads the first element of the next row (a wrong sum, in bounds), and the
last row reads one element past the end of `feats`: into the tensor the
allocator placed right after it in the same 2 MiB segment.  No fault, no
error: the sums are off.  Under `gpureduce hunt` every tensor ends at an
unmapped guard (its rounded block end), so that one-element read faults.

VIEW_TAIL_CLEAN=1 runs the fixed kernel (mask with the column count): the
clean variant, which must hunt clean.

Usage: python3 train.py   (no build step; Triton compiles on first use)
"""
import os
import sys

import torch
import triton
import triton.language as tl

ROWS, COLS = 64, 64


@triton.jit
def row_sum_kernel(x_ptr, out_ptr, row_stride, n_cols, mask_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    # BUG (unless clean): mask_cols is the row stride, not n_cols
    x = tl.load(x_ptr + row * row_stride + cols, mask=cols < mask_cols, other=0.0)
    tl.store(out_ptr + row, tl.sum(x, axis=0))


def main():
    clean = os.environ.get("VIEW_TAIL_CLEAN") == "1"
    torch.manual_seed(0)
    feats = torch.randn(ROWS, COLS, device="cuda")                 # FEATS (16 KiB)
    neighbour = torch.full((4096,), 1000.0, device="cuda")          # right after it
    gap = neighbour.data_ptr() - feats.data_ptr()
    if gap != feats.numel() * feats.element_size():
        print(f"[view-tail] the neighbour is not right after feats (gap {gap} bytes)", flush=True)
    view = feats[:, 1:]                                             # 64 x 63, stride 64
    out = torch.empty(ROWS, device="cuda")
    n_cols = view.shape[1]
    mask_cols = n_cols if clean else view.stride(0)
    row_sum_kernel[(ROWS,)](view, out, view.stride(0), n_cols, mask_cols, BLOCK=64)   # OVERRUN
    ref = view.sum(dim=1)
    err = (out - ref).abs().max().item()
    print(f"[view-tail] {'clean' if clean else 'buggy'} kernel: max error {err:.3f} "
          f"(last row {out[-1].item():.3f}, expected {ref[-1].item():.3f})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
