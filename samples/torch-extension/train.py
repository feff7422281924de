"""train.py - sample for gpureduce: the seed article's story.

A small PyTorch training loop (an item-embedding table feeding an MLP,
trained with Adam for 3 epochs, ~200 steps and several thousand kernel
launches) uses a custom CUDA op built with torch.utils.cpp_extension.
load_inline: gather_rows(table, idx) -> out[i, :] = table[idx[i], :].

The bugs, together:
  * the kernel reads the int32 indices as unsigned and has no bounds check;
  * in epoch 3 a curriculum adds 40 "hard" samples, so the dataset no longer
    divides into batches of 64 and the last batch is ragged;
  * the collate function pads every batch to 64 rows (static shapes) with
    index -1 ("no item") and label -100 (ignored by the loss), trusting
    that padded rows "do not matter".
So the last step of epoch 3 gathers row 0xFFFFFFFF: 4294967295 * 64 * 4
bytes (~1 TiB) past the table, a wild read that faults on any GPU:
"CUDA error: an illegal memory access was encountered", after ~190 clean
steps.  The script dies with PyTorch's usual RuntimeError traceback.

Usage:
  python3 train.py --build-only   build (~70 s the first time) and load the
                                  extension, then exit 0 (the sample's
                                  build step, so the build is not captured)
  python3 train.py                train (faults in epoch 3)

The extension is built in .ext/ next to this file (name 'gr_ext');
TORCH_CUDA_ARCH_LIST defaults to 9.0 (H100/H200).

TORCH_EXTENSION_CLEAN=1 runs the same training with the collate function
fixed: padded rows use item 0, a valid row (their label -100 still keeps
them out of the loss), so the extension built by the build step never sees
-1: the clean variant, which must run and hunt clean (issue 28).
"""
import argparse
import os
import sys
import time

os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "9.0")

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch.utils.cpp_extension import load_inline  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
BUILD_DIR = os.path.join(HERE, ".ext")

CPP_SRC = "torch::Tensor gather_rows(torch::Tensor table, torch::Tensor idx);\n"

CUDA_SRC = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

// out[i, :] = table[idx[i], :], one block per output row.
__global__ void gather_rows_kernel(float *__restrict__ out,
                                   const float *__restrict__ table,
                                   const int *__restrict__ idx, int dim)
{
    int i = blockIdx.x;
    // BUG: indices are "never negative", so they are read as unsigned, and
    // there is no check that row < number of table rows.
    unsigned row = (unsigned)idx[i];
    for (int c = threadIdx.x; c < dim; c += blockDim.x)
        out[(size_t)i * dim + c] = table[(size_t)row * dim + c];
}

torch::Tensor gather_rows(torch::Tensor table, torch::Tensor idx)
{
    TORCH_CHECK(table.is_cuda() && idx.is_cuda(), "gather_rows: CUDA tensors expected");
    TORCH_CHECK(table.scalar_type() == torch::kFloat32, "gather_rows: float32 table expected");
    TORCH_CHECK(idx.scalar_type() == torch::kInt32, "gather_rows: int32 indices expected");
    TORCH_CHECK(table.dim() == 2 && idx.dim() == 1, "gather_rows: table [N, D], idx [B]");
    auto t = table.contiguous();
    auto ix = idx.contiguous();
    int n = (int)ix.size(0), dim = (int)t.size(1);
    auto out = torch::empty({n, dim}, t.options());
    if (n == 0)
        return out;
    auto stream = at::cuda::getCurrentCUDAStream();
    gather_rows_kernel<<<n, 64, 0, stream>>>(out.data_ptr<float>(), t.data_ptr<float>(),
                                             ix.data_ptr<int>(), dim);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

N_ITEMS = 1000
DIM = 64
N_CLASSES = 10
BATCH = 64
BASE_SAMPLES = 64 * BATCH   # epochs 1-2: 64 full batches
HARD_SAMPLES = 40           # epoch 3 curriculum: the last batch is ragged
EPOCHS = 3
CLEAN = os.environ.get("TORCH_EXTENSION_CLEAN") == "1"
PAD_INDEX = 0 if CLEAN else -1   # "no item" (CLEAN: the fix, a valid row)
PAD_LABEL = -100            # ignored by cross_entropy


def build_extension():
    os.makedirs(BUILD_DIR, exist_ok=True)
    t = time.time()
    print(f"[train] loading extension gr_ext from {BUILD_DIR} "
          "(the first build takes ~70 s)", flush=True)
    ext = load_inline(name="gr_ext", cpp_sources=[CPP_SRC], cuda_sources=[CUDA_SRC],
                      functions=["gather_rows"], build_directory=BUILD_DIR,
                      extra_cuda_cflags=["-O2"], verbose=False)
    print(f"[train] extension ready in {time.time() - t:.1f}s", flush=True)
    return ext


class GatherRows(torch.autograd.Function):
    """Custom op: forward through the extension, backward in plain torch."""

    @staticmethod
    def forward(ctx, table, idx):
        ctx.save_for_backward(idx)
        ctx.n_rows = table.shape[0]
        return EXT.gather_rows(table, idx)

    @staticmethod
    def backward(ctx, grad_out):
        (idx,) = ctx.saved_tensors
        grad = torch.zeros(ctx.n_rows, grad_out.shape[1], device=grad_out.device,
                           dtype=grad_out.dtype)
        grad.index_add_(0, idx.long(), grad_out)
        return grad, None


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.table = torch.nn.Parameter(torch.randn(N_ITEMS, DIM) * 0.1)
        self.mlp = torch.nn.Sequential(torch.nn.Linear(DIM, 128), torch.nn.ReLU(),
                                       torch.nn.Linear(128, N_CLASSES))

    def forward(self, idx):
        return self.mlp(GatherRows.apply(self.table, idx))


def make_dataset(n, gen):
    items = torch.randint(0, N_ITEMS, (n,), generator=gen, dtype=torch.int32)
    labels = (items.long() * 7 + 3) % N_CLASSES
    return items, labels


def collate(items, labels):
    """Pad to a full batch so every step has the same shapes."""
    pad = BATCH - items.shape[0]
    if pad > 0:
        items = torch.cat([items, torch.full((pad,), PAD_INDEX, dtype=torch.int32)])
        labels = torch.cat([labels, torch.full((pad,), PAD_LABEL, dtype=torch.long)])
    return items, labels


def train():
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(0)
    dev = "cuda"
    model = Model().to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    base = make_dataset(BASE_SAMPLES, gen)
    hard = make_dataset(HARD_SAMPLES, gen)
    step = 0
    for epoch in range(1, EPOCHS + 1):
        t = time.time()
        if epoch < 3:
            items, labels = base
        else:   # curriculum: add the hard samples
            items = torch.cat([base[0], hard[0]])
            labels = torch.cat([base[1], hard[1]])
        perm = torch.randperm(items.shape[0], generator=gen)
        items, labels = items[perm], labels[perm]
        total, batches = 0.0, 0
        for start in range(0, items.shape[0], BATCH):
            bi, bl = collate(items[start:start + BATCH], labels[start:start + BATCH])
            bi, bl = bi.to(dev), bl.to(dev)
            loss = F.cross_entropy(model(bi), bl, ignore_index=PAD_LABEL)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            step += 1
            batches += 1
            if batches % 16 == 0:
                total += loss.item()
        torch.cuda.synchronize()
        print(f"[train] epoch {epoch}: {batches} steps ({step} total), "
              f"{items.shape[0]} samples, loss {total / max(1, batches // 16):.4f}, "
              f"{time.time() - t:.2f}s", flush=True)
    print("[train] done", flush=True)


def main():
    global EXT
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build-only", action="store_true",
                    help="build and load the extension, then exit")
    args = ap.parse_args()
    EXT = build_extension()
    if args.build_only:
        return 0
    train()
    return 0


EXT = None

if __name__ == "__main__":
    sys.exit(main())
