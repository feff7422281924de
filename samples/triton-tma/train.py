"""train.py - sample for gpureduce: a Triton TMA load with a wrong row stride.

A decoding loop keeps one layer's keys as a compact [n_tokens, HEAD_DIM]
bf16 tensor and scales them with kv_scale_kernel, which loads its tiles
through a host-side TensorDescriptor (a CUtensorMap that Triton encodes
with cuTensorMapEncodeTiled at every launch and passes by value).  The bug:
from step 20 the "paged" code path builds the descriptor with the paged
cache's row stride (MAX_TOKENS * HEAD_DIM elements, 2 MiB) instead of the
compact tensor's (HEAD_DIM).  Row r of the map then lies r * 2 MiB past the
tensor: the 4096 rows reach 8 GiB past a 512 KiB tensor, and the TMA unit
faults (natively "unspecified launch failure").

TRITON_TMA_CLEAN=1 runs the same steps with the paged path fixed (it passes
keys.stride(0) too): the clean variant, which must run and hunt clean
(issue 28).

Usage: python3 train.py   (sm_90: TMA; Triton compiles on first use)
"""
import os
import sys

import torch
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor

HEAD_DIM = 64
MAX_TOKENS = 1 << 14      # the paged cache's capacity per layer
BLOCK_T = 64
N_TOKENS = 4096
STEPS = 30
PAGED_STEP = 20
CLEAN = os.environ.get("TRITON_TMA_CLEAN") == "1"


@triton.jit
def kv_scale_kernel(kv_desc, out_ptr, scale, n_tokens, BLOCK_T: tl.constexpr, D: tl.constexpr):
    pid = tl.program_id(0)
    blk = kv_desc.load([pid * BLOCK_T, 0])          # a [BLOCK_T, D] tile through TMA
    rows = pid * BLOCK_T + tl.arange(0, BLOCK_T)
    cols = tl.arange(0, D)
    v = (blk.to(tl.float32) * scale).to(tl.bfloat16)
    tl.store(out_ptr + rows[:, None] * D + cols[None, :], v, mask=rows[:, None] < n_tokens)


def scale_keys(keys, paged):
    n = keys.shape[0]
    # BUG: the paged path passes the paged cache's row stride, not keys.stride(0)
    row_stride = MAX_TOKENS * HEAD_DIM if paged and not CLEAN else keys.stride(0)   # CLEAN: the fix
    desc = TensorDescriptor(keys, shape=[n, HEAD_DIM], strides=[row_stride, 1],
                            block_shape=[BLOCK_T, HEAD_DIM])
    out = torch.empty_like(keys)
    kv_scale_kernel[(triton.cdiv(n, BLOCK_T),)](desc, out, HEAD_DIM ** -0.5, n,
                                                BLOCK_T=BLOCK_T, D=HEAD_DIM)
    return out


def main():
    torch.manual_seed(0)
    keys = torch.randn(N_TOKENS, HEAD_DIM, device="cuda", dtype=torch.bfloat16)
    acc = torch.zeros_like(keys, dtype=torch.float32)
    for step in range(STEPS):
        out = scale_keys(keys, step >= PAGED_STEP)
        acc += out.float()
        keys = (keys * 0.99 + out * 0.01).contiguous()
        if step % 10 == 0 or step == PAGED_STEP:
            print(f"[triton-tma] step {step}: mean {acc.mean().item():.5f}", flush=True)
    torch.cuda.synchronize()
    print("[triton-tma] done", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
