"""train.py - sample for gpureduce: a torch.compile (Inductor) kernel's own
device assert.

A token-embedding lookup with a learned scale is compiled with
torch.compile.  Inductor turns `table[ids]` into a generated Triton kernel
that checks every index with tl.device_assert ("index out of bounds:
0 <= tmpN < 1000").  At step 12 the tokenizer is upgraded and emits id 1000
(the vocabulary's size: an off-by-one for its new end-of-text token): the
kernel traps with CUDA_ERROR_ASSERT.  gpureduce records the generated
module's path and the kernel's source (issue 24): repro.cu names its
parameters and report.md quotes the assertion.

INDUCTOR_ASSERT_CLEAN=1 runs the same steps with the tokenizer's off-by-one
fixed (end-of-text is id VOCAB - 1): the clean variant, which must run and
hunt clean (issue 28).

Usage: python3 train.py
"""
import os
import sys
import time

import torch
import torch._inductor.config as inductor_config

VOCAB = 1000
DIM = 64
BATCH = 512
STEPS = 20
UPGRADE_STEP = 12
CLEAN = os.environ.get("INDUCTOR_ASSERT_CLEAN") == "1"

inductor_config.assert_indirect_indexing = True   # the default; said here on purpose


@torch.compile
def embed(table, ids, scale):
    return (table[ids] * scale).sum(dim=1)


def main():
    torch.manual_seed(0)
    dev = "cuda"
    table = torch.randn(VOCAB, DIM, device=dev)
    scale = torch.full((DIM,), 0.5, device=dev)
    gen = torch.Generator().manual_seed(0)
    t = time.time()
    for step in range(STEPS):
        ids = torch.randint(0, VOCAB, (BATCH,), generator=gen)
        if step >= UPGRADE_STEP:
            ids[100] = VOCAB - 1 if CLEAN else VOCAB   # the new end-of-text id (CLEAN: the fix)
        out = embed(table, ids.to(dev), scale)
        torch.cuda.synchronize()
        print(f"step {step}: mean {out.mean().item():.4f} ({time.time() - t:.1f} s)", flush=True)
    print("done")


if __name__ == "__main__":
    sys.exit(main())
