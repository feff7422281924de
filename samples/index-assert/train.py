"""train.py - sample for gpureduce: PyTorch's own device-side assert.

A tiny classifier weights its per-sample loss by class, class_w[y], with an
ordinary tensor index.  At step 30 a data refresh delivers labels of a new
class (label 5) that the 5-class model and the 5-entry weight table do not
know about.  PyTorch's index kernel checks its indices on the GPU and traps:
"CUDA error: device-side assert triggered" (CUDA_ERROR_ASSERT, 710).  The
weight lookup runs before cross_entropy (whose nll_loss kernel would assert
on the same label), so the first failing kernel is the index kernel.

class_w is one-dimensional, so `class_w[y]` goes through ATen's generic
index_elementwise_kernel (the vectorized gather fast path needs 16-byte
rows).  Either way the kernel's mangled name contains "index".

INDEX_ASSERT_CLEAN=1 runs the same training with the labels checked on the
host: samples of a class the model does not know are left out of the batch
(the fix): the clean variant, which must run and hunt clean (issue 28).

Usage: python3 train.py
"""
import os
import sys
import time

import torch
import torch.nn.functional as F

N_CLASSES = 5
STEPS = 50
REFRESH_STEP = 30
BATCH = 64
FEATURES = 32
CLEAN = os.environ.get("INDEX_ASSERT_CLEAN") == "1"


def make_batch(gen, step):
    x = torch.randn(BATCH, FEATURES, generator=gen)
    y = x[:, :N_CLASSES].argmax(1)
    if step >= REFRESH_STEP:
        # the refreshed data has a sixth class
        y[::8] = N_CLASSES
    return x, y


def main():
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(0)
    dev = "cuda"
    model = torch.nn.Sequential(torch.nn.Linear(FEATURES, 64), torch.nn.ReLU(),
                                torch.nn.Linear(64, N_CLASSES)).to(dev)
    class_w = torch.linspace(0.5, 1.5, N_CLASSES, device=dev)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    t = time.time()
    for step in range(STEPS):
        x, y = make_batch(gen, step)
        if CLEAN:                           # the fix: unknown classes are left out
            keep = y < N_CLASSES
            x, y = x[keep], y[keep]
        x, y = x.to(dev), y.to(dev)
        w = class_w[y]                      # asserts when y >= N_CLASSES
        loss = (F.cross_entropy(model(x), y, reduction="none") * w).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % 10 == 0:
            print(f"[index] step {step}: loss {loss.item():.4f} ({time.time() - t:.2f}s)",
                  flush=True)
    torch.cuda.synchronize()
    print("[index] done", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
