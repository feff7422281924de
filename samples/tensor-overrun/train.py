"""train.py - sample for gpureduce root-cause mode (issue 17).

A token pipeline keeps, per batch, a `lengths` tensor (int32, one per row)
and right after it an index tensor `idx` (int32 rows of an embedding
table).  Both are small, so PyTorch's caching allocator packs them, one
after the other, into the same 2 MiB cudaMalloc segment.

The bug: a load_inline kernel, pad_rows_kernel, pads the lengths of a
ragged batch with a sentinel up to `n_valid + PAD` instead of up to the
tensor's size, so it writes PAD = 8 int32 (32 bytes) past `lengths`: into
the first 8 entries of `idx`.  Inside the segment that does not fault.
A few healthy launches later, gather_rows_kernel (same extension, correct
code) reads table[idx[i]] with idx[0] = 2^30: 256 GiB past the table, a
wild read that faults: the crash users see is in gather_rows_kernel, but
the bug is in pad_rows_kernel.

`gpureduce capture --tensors` records the allocator's blocks;
`gpureduce shrink --root-cause` emits the crash-site repro (gather) and
repro-root.cu, which faults in pad_rows_kernel.

Usage:
  python3 train.py --build-only   build and load the extension, then exit 0
  python3 train.py                run (faults at step 3)
The extension is built in .ext/ next to this file (name 'gr_overrun');
the CUDA source includes no ATen headers, to keep the build short.

TENSOR_OVERRUN_CLEAN=1 runs the same steps with the ragged batch padded up
to the tensor's end only (pad = ROWS - n_valid; the fix at the call, so the
extension is the one the build step compiled): the clean variant, which
must run and hunt clean (issue 28).
"""
import argparse
import os
import sys
import time

os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "9.0")

import torch  # noqa: E402
from torch.utils.cpp_extension import load_inline  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
BUILD_DIR = os.path.join(HERE, ".ext")

CPP_SRC = r"""
void pad_rows_launch(int64_t lengths, int64_t n_valid, int64_t n_padded, int64_t sentinel, int64_t stream);
void gather_rows_launch(int64_t out, int64_t table, int64_t idx, int64_t n, int64_t dim, int64_t stream);

void pad_rows(torch::Tensor lengths, int64_t n_valid, int64_t pad, int64_t sentinel, int64_t stream)
{
    TORCH_CHECK(lengths.is_cuda() && lengths.scalar_type() == torch::kInt32, "pad_rows: int32 CUDA lengths");
    // BUG: pads `pad` entries past the valid ones, not up to lengths.numel()
    pad_rows_launch((int64_t)lengths.data_ptr(), n_valid, n_valid + pad, sentinel, stream);
}

void gather_rows(torch::Tensor out, torch::Tensor table, torch::Tensor idx, int64_t stream)
{
    TORCH_CHECK(out.is_cuda() && table.is_cuda() && idx.is_cuda(), "gather_rows: CUDA tensors");
    gather_rows_launch((int64_t)out.data_ptr(), (int64_t)table.data_ptr(), (int64_t)idx.data_ptr(),
                       idx.numel(), table.size(1), stream);
}
"""

CUDA_SRC = r"""
#include <cuda_runtime.h>
#include <stdint.h>

// lengths[i] = sentinel for n_valid <= i < n_padded (no check against the tensor's size)
__global__ void pad_rows_kernel(int *lengths, int n_valid, int n_padded, int sentinel)
{
    int i = n_valid + blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n_padded)
        lengths[i] = sentinel;
}

// out[i, :] = table[idx[i], :]: correct code that trusts its indices
__global__ void gather_rows_kernel(float *out, const float *table, const int *idx, int dim)
{
    long long row = idx[blockIdx.x];
    for (int c = threadIdx.x; c < dim; c += blockDim.x)
        out[(long long)blockIdx.x * dim + c] = table[row * dim + c];
}

void pad_rows_launch(int64_t lengths, int64_t n_valid, int64_t n_padded, int64_t sentinel, int64_t stream)
{
    int n = (int)(n_padded - n_valid);
    pad_rows_kernel<<<(n + 127) / 128, 128, 0, (cudaStream_t)stream>>>((int *)lengths, (int)n_valid,
                                                                      (int)n_padded, (int)sentinel);
}

void gather_rows_launch(int64_t out, int64_t table, int64_t idx, int64_t n, int64_t dim, int64_t stream)
{
    gather_rows_kernel<<<(unsigned)n, 64, 0, (cudaStream_t)stream>>>((float *)out, (const float *)table,
                                                                    (const int *)idx, (int)dim);
}
"""

N_ITEMS = 1000
DIM = 64
ROWS = 1024          # rows per batch: lengths and idx are 4096 bytes each
PAD = 8              # the pad kernel's overrun, in int32
SENTINEL = 1 << 30   # "no length": as a row index, 256 GiB past the table
CLEAN = os.environ.get("TENSOR_OVERRUN_CLEAN") == "1"


def build_extension():
    os.makedirs(BUILD_DIR, exist_ok=True)
    t = time.time()
    print(f"[overrun] loading extension gr_overrun from {BUILD_DIR}", flush=True)
    ext = load_inline(name="gr_overrun", cpp_sources=[CPP_SRC], cuda_sources=[CUDA_SRC],
                      functions=["pad_rows", "gather_rows"], build_directory=BUILD_DIR,
                      extra_cuda_cflags=["-O2"], verbose=False)
    print(f"[overrun] extension ready in {time.time() - t:.1f}s", flush=True)
    return ext


def run(ext):
    torch.manual_seed(0)
    dev = "cuda"
    stream = torch.cuda.current_stream().cuda_stream
    table = torch.randn(N_ITEMS, DIM, device=dev)                            # TABLE
    out = torch.empty(ROWS, DIM, device=dev)
    for step in range(1, 4):
        lengths = torch.full((ROWS,), 16, dtype=torch.int32, device=dev)     # LENGTHS
        idx = torch.randint(0, N_ITEMS, (ROWS,), dtype=torch.int32, device=dev)  # IDX
        gap = idx.data_ptr() - lengths.data_ptr()
        if gap != lengths.numel() * lengths.element_size():
            print(f"[overrun] idx is not right after lengths (gap {gap} bytes): the allocator "
                  "placed them apart; the sample cannot show its bug", flush=True)
            return 3
        n_valid = ROWS if step < 3 else ROWS - 24    # step 3: a ragged batch
        if n_valid < ROWS:
            # BUG (in the extension): pads 24 + PAD entries, 8 past the end of lengths
            pad = ROWS - n_valid if CLEAN else ROWS - n_valid + PAD   # CLEAN: the fix
            ext.pad_rows(lengths, n_valid, pad, SENTINEL, stream)   # OVERRUN
            tokens = int(lengths[:n_valid].sum().item())                 # healthy launches between
            print(f"[overrun] step {step}: ragged batch, {tokens} tokens", flush=True)
        ext.gather_rows(out, table, idx, stream)                    # CRASH at step 3
        s = out.sum().item()
        print(f"[overrun] step {step}: rows {n_valid}, checksum {s:.3f}", flush=True)
        del lengths, idx
    print("[overrun] done", flush=True)
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build-only", action="store_true", help="build and load the extension, then exit")
    args = ap.parse_args()
    ext = build_extension()
    if args.build_only:
        return 0
    return run(ext)


if __name__ == "__main__":
    sys.exit(main())
