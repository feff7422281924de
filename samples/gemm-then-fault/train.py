"""train.py - sample for gpureduce: sm90 bf16 GEMMs, then a custom kernel faults.

An MoE-style layer: the tokens go through two bf16 matmuls (cuBLAS picks
its sm90 kernels on the H200; they read through TMA tensor maps that
cuBLAS encodes itself), then expert_gather_kernel, a custom Triton kernel,
copies each token's expert bias row: bias[expert[t], :].  The bug: from
step 6 the router's top-1 index is taken from the wrong tensor (a hashed
token id, 1 << 28, instead of an expert number < 8), and the load, which
has no mask, reads (1 << 28) * 64 * 2 bytes = 32 GiB past the bias table.

GEMM_THEN_FAULT_CLEAN=1 runs the same steps with the router fixed (the
argmax stays the index tensor): the clean variant, which must run and hunt
clean (issue 28).

Usage: python3 train.py   (no build step; Triton compiles on first use)
"""
import os
import sys

import torch
import triton
import triton.language as tl

D = 64
N_EXPERTS = 8
TOKENS = 256
STEPS = 10
BAD_STEP = 6
CLEAN = os.environ.get("GEMM_THEN_FAULT_CLEAN") == "1"


@triton.jit
def expert_gather_kernel(expert_ptr, bias_ptr, out_ptr, D: tl.constexpr):
    t = tl.program_id(0)
    e = tl.load(expert_ptr + t)                       # int64 expert id
    cols = tl.arange(0, D)
    v = tl.load(bias_ptr + e * D + cols)              # BUG: no mask, no e < N_EXPERTS check
    tl.store(out_ptr + t * D + cols, v)


def main():
    torch.manual_seed(0)
    dev = "cuda"
    w1 = torch.randn(D, 4 * D, device=dev, dtype=torch.bfloat16) * 0.05
    w2 = torch.randn(4 * D, D, device=dev, dtype=torch.bfloat16) * 0.05
    router = torch.randn(D, N_EXPERTS, device=dev, dtype=torch.bfloat16)
    bias = torch.randn(N_EXPERTS, D, device=dev, dtype=torch.bfloat16)
    x = torch.randn(TOKENS, D, device=dev, dtype=torch.bfloat16)
    token_hash = torch.full((TOKENS,), 1 << 28, device=dev, dtype=torch.int64)
    for step in range(STEPS):
        h = torch.relu(x @ w1) @ w2                   # two cuBLAS bf16 GEMMs
        logits = h @ router
        expert = logits.argmax(dim=1)
        if step >= BAD_STEP and not CLEAN:            # CLEAN: the fix
            expert = token_hash                       # BUG: the wrong index tensor
        out = torch.empty_like(h)
        expert_gather_kernel[(TOKENS,)](expert, bias, out, D=D)
        x = (h + out).contiguous()
        x = x / (x.float().norm(dim=1, keepdim=True) + 1e-3).to(x.dtype)
        print(f"[gemm-then-fault] step {step}: |x| {x.float().norm().item():.3f}", flush=True)
    torch.cuda.synchronize()
    print("[gemm-then-fault] done", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
