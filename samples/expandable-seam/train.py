"""train.py - sample for `gpureduce hunt` under PyTorch's expandable segments
(PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, set below unless the
environment sets the variable already).

With expandable segments the caching allocator reserves one address range
per pool and maps it piece by piece (20 MiB at a time for large tensors) as
it grows, and tensors are placed across the seams between pieces.  Three
activations of 12 MiB each: `acts[0]` lies in the first piece, `acts[1]`
from 12 to 24 MiB, across the seam at 20 MiB, `acts[2]` from 24 to 36 MiB
in the second piece.

The model (legal) sums every row of `acts[1]` with a Triton kernel: its
reads cross the seam.  Then the bug: a second Triton kernel sums the rows
of the strided view `acts[2][:, 1:]` and masks its loads with the view's
row STRIDE instead of its column count, so the last row reads one float
past the end of `acts[2]`, into the mapped, unused rest of the second
piece.  No fault, no error: the last row's sum is off.  Under
`gpureduce hunt` every tensor ends at an unmapped guard (its block's end),
so that read faults; the reads across the seam must not (a hunt that
placed each mapped piece apart would report them).

EXPANDABLE_SEAM_CLEAN=1 runs the fixed mask (the column count): the clean
variant, which must hunt clean.

Usage: python3 train.py   (no build step; Triton compiles on first use)
"""
import os
import sys

os.environ.setdefault("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")

import torch  # noqa: E402  (after the allocator's setting)
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

COLS = 1024                        # floats a row (4 KiB)
ROWS = 3 * 1024                    # 12 MiB a tensor


@triton.jit
def seam_sum_kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + cols, mask=cols < n_cols, other=0.0)
    tl.store(out_ptr + row, tl.sum(x, axis=0))


@triton.jit
def tail_sum_kernel(x_ptr, out_ptr, row_stride, mask_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    # BUG (unless clean): mask_cols is the row stride, not the column count
    x = tl.load(x_ptr + row * row_stride + cols, mask=cols < mask_cols, other=0.0)
    tl.store(out_ptr + row, tl.sum(x, axis=0))


def expandable():
    """'yes' when the allocator's segments are expandable, else what it says."""
    try:
        segs = torch.cuda.memory_snapshot()
    except Exception as e:  # an allocator without snapshots
        return f"unknown ({e})"
    flags = {bool(s.get("is_expandable", False)) for s in segs}
    return "yes" if flags == {True} else ("no" if flags == {False} else "mixed")


def main():
    clean = os.environ.get("EXPANDABLE_SEAM_CLEAN") == "1"
    torch.manual_seed(0)
    acts = [torch.randn(ROWS, COLS, device="cuda") for _ in range(3)]
    base = acts[0].data_ptr()
    where = ", ".join(f"{(a.data_ptr() - base) >> 20}-{(a.data_ptr() - base + a.nbytes) >> 20} MiB" for a in acts)
    print(f"[expandable-seam] segments expandable: {expandable()}; tensors at {where}", flush=True)

    # legal: every row of acts[1], across the seam at 20 MiB
    sums = torch.empty(ROWS, device="cuda")
    seam_sum_kernel[(ROWS,)](acts[1], sums, COLS, BLOCK=COLS)
    seam_err = (sums - acts[1].sum(dim=1)).abs().max().item()

    # the bug: rows of acts[2][:, 1:] (ROWS x 1023, row stride 1024)
    view = acts[2][:, 1:]
    out = torch.empty(ROWS, device="cuda")
    mask_cols = view.shape[1] if clean else view.stride(0)
    tail_sum_kernel[(ROWS,)](view, out, view.stride(0), mask_cols, BLOCK=COLS)   # OVERRUN
    ref = view.sum(dim=1)
    err = (out - ref).abs().max().item()
    torch.cuda.synchronize()
    print(f"[expandable-seam] {'clean' if clean else 'buggy'} kernel: seam sums max error {seam_err:.3f}; "
          f"tail sums max error {err:.3f} (last row {out[-1].item():.3f}, expected {ref[-1].item():.3f})",
          flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
