"""train.py - sample for `gpureduce hunt`: a CUDA kernel writes one element
past a tensor into its neighbour in the same caching-allocator segment
(never faults natively; the neighbour is silently corrupted).

A load_inline extension scales a 1024-float activation (4 KiB, a multiple
of the allocator's 512-byte rounding) into `out`.  The bug: its bounds
check is `i <= n` instead of `i < n`, and the grid has a thread for index
n, so it writes out[1024]: the first float of the tensor the allocator
placed right after `out` in the same 2 MiB segment (`scores`).  No fault;
scores[0] is overwritten.  Under `gpureduce hunt` `out` ends at an
unmapped guard (its rounded block end), so that one write faults.

NEIGHBOUR_WRITE_CLEAN=1 launches with the right bound (the fix): the clean
variant, which must hunt clean.

Usage:
  python3 train.py --build-only   build and load the extension, then exit 0
  python3 train.py                run (exit 0; prints the corrupted value)
The extension is built in .ext/ next to this file (name 'gr_neighbour');
its CUDA source includes no ATen headers, to keep the build short.
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
void scale_launch(int64_t out, int64_t in, int64_t n, int64_t inclusive, int64_t stream);

void scale_into(torch::Tensor out, torch::Tensor in, int64_t inclusive, int64_t stream)
{
    TORCH_CHECK(out.is_cuda() && in.is_cuda() && out.numel() == in.numel(), "scale_into: CUDA tensors, same size");
    scale_launch((int64_t)out.data_ptr(), (int64_t)in.data_ptr(), out.numel(), inclusive, stream);
}
"""

CUDA_SRC = r"""
#include <cuda_runtime.h>
#include <stdint.h>

// out[i] = 2 * in[min(i, n - 1)] for i < n, or for i <= n when inclusive (the bug)
__global__ void scale_into_kernel(float *out, const float *in, int n, int inclusive)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (inclusive ? i <= n : i < n)
        out[i] = 2.0f * in[i < n ? i : n - 1];
}

void scale_launch(int64_t out, int64_t in, int64_t n, int64_t inclusive, int64_t stream)
{
    int threads = 256, blocks = (int)((n + 1 + threads - 1) / threads);   // room for index n
    scale_into_kernel<<<blocks, threads, 0, (cudaStream_t)stream>>>((float *)out, (const float *)in,
                                                                     (int)n, (int)inclusive);
}
"""

N = 1024


def build_extension():
    os.makedirs(BUILD_DIR, exist_ok=True)
    t = time.time()
    print(f"[neighbour] loading extension gr_neighbour from {BUILD_DIR}", flush=True)
    ext = load_inline(name="gr_neighbour", cpp_sources=[CPP_SRC], cuda_sources=[CUDA_SRC],
                      functions=["scale_into"], build_directory=BUILD_DIR,
                      extra_cuda_cflags=["-O2"], verbose=False)
    print(f"[neighbour] extension ready in {time.time() - t:.1f}s", flush=True)
    return ext


def run(ext):
    clean = os.environ.get("NEIGHBOUR_WRITE_CLEAN") == "1"
    torch.manual_seed(0)
    stream = torch.cuda.current_stream().cuda_stream
    x = torch.randn(N, device="cuda")                                 # INPUT
    out = torch.empty(N, device="cuda")                               # OUT (4 KiB)
    scores = torch.full((N,), 7.0, device="cuda")                     # right after it
    gap = scores.data_ptr() - out.data_ptr()
    if gap != out.numel() * out.element_size():
        print(f"[neighbour] scores is not right after out (gap {gap} bytes)", flush=True)
    ext.scale_into(out, x, 0 if clean else 1, stream)                 # OVERRUN
    s0 = scores[0].item()
    print(f"[neighbour] {'clean' if clean else 'buggy'} kernel: scores[0] = {s0:.3f} (expected 7.000)"
          f"{'' if s0 == 7.0 else ': corrupted by the write past out'}", flush=True)
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
