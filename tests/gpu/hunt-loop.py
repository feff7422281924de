"""hunt-loop.py - a GPU check for `gpureduce hunt` on a training loop
(issue 28, repeats): the same buggy kernel is launched every step from the
same line, a clean torch op runs between, and a second, different buggy
kernel runs once after the loop.  Nothing faults natively (each read lands
one float past a 4 KiB tensor, inside its caching-allocator segment).

  gpureduce hunt --no-shrink -o /tmp/hl -- python3 tests/gpu/hunt-loop.py

must print exactly two findings: tail_sum_kernel (at the loop's line, "23
later launches of it from the same line left out") and gather_one_kernel,
in a few replays, without "stopped at"; with --every-launch, 8 findings
and "stopped at 8".  HUNT_LOOP_CLEAN=1 (both bugs fixed) must hunt clean.
Not a sample (make gpu-test does not run it): a check run by hand.
"""
import os
import sys

import torch
import triton
import triton.language as tl

N = 1024          # float32: 4 KiB, a multiple of the allocator's 512-byte rounding
STEPS = int(os.environ.get("HUNT_LOOP_STEPS", "24"))


@triton.jit
def tail_sum_kernel(x_ptr, out_ptr, n, extra):
    acc = tl.zeros((), dtype=tl.float32)
    for j in range(0, n + extra):          # BUG (extra = 1): reads x[n]
        acc += tl.load(x_ptr + j)
    tl.store(out_ptr, acc)


@triton.jit
def gather_one_kernel(src_ptr, idx_ptr, out_ptr):
    tl.store(out_ptr, tl.load(src_ptr + tl.load(idx_ptr)))   # BUG: idx = n


def main():
    clean = os.environ.get("HUNT_LOOP_CLEAN") == "1"
    torch.manual_seed(0)
    x = torch.randn(N, device="cuda")
    neighbour = torch.zeros(N, device="cuda")
    src = torch.randn(N, device="cuda")
    idx = torch.tensor([N - 1 if clean else N], device="cuda")
    out = torch.empty(1, device="cuda")
    for step in range(STEPS):
        tail_sum_kernel[(1,)](x, out, N, 0 if clean else 1)
        x.mul_(0.999)                       # a clean kernel between
    gather_one_kernel[(1,)](src, idx, out)
    torch.cuda.synchronize()
    print(f"[hunt-loop] {'clean' if clean else 'buggy'}: {STEPS} steps, out {out.item():.3f}, "
          f"neighbour {neighbour.sum().item():.1f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
