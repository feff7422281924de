"""train.py - sample for gpureduce: a multi-rank (DDP) job where one rank faults.

Two ranks train a small classifier with DistributedDataParallel, started by
torchrun (python3 -m torch.distributed.run --nproc_per_node=2 train.py).
Each rank reads its own shard of token ids; a custom Triton kernel,
gather_rows_kernel (out[i, :] = table[ids[i], :]), looks the tokens up in a
frozen feature table before the DDP-wrapped MLP.  The bugs, together:
  * rank 1's shard was written by a buggy exporter: from step FAULT_STEP on,
    one token of each of its batches is a 64-bit record offset
    (0x1_0000_0000 + 7) instead of a token id;
  * the Triton load has no mask (no `tok < n_rows` check).
So rank 1 reads ~2 TiB past the table at step FAULT_STEP and faults; rank 0
is then waiting in the gradient all-reduce and is ended by torchrun.

Backends (DDP_BACKEND=nccl|gloo): nccl when there is a GPU per rank (its
all-reduce kernels run on the GPU, and gpureduce folds them away), else gloo
(NCCL refuses two ranks on one GPU), so it also runs on a 1-GPU machine.

DDP_TRAIN_CLEAN=1 runs the same job with the exporter fixed (rank 1's shard
holds token ids only): the clean variant, which must run and hunt clean
(issue 28).

Usage: python3 -m torch.distributed.run --standalone --nproc_per_node=2 train.py
"""
import os
import sys
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F
import triton
import triton.language as tl

D = 32              # feature width (a power of two, for tl.arange)
N_ROWS = 1024       # rows of the feature table
N_CLASSES = 4
BATCH = 64
STEPS = 20
FAULT_STEP = 12     # rank 1's shard goes bad here
BAD_TOKEN = (1 << 32) + 7
CLEAN = os.environ.get("DDP_TRAIN_CLEAN") == "1"


@triton.jit
def gather_rows_kernel(ids_ptr, table_ptr, out_ptr, D: tl.constexpr):
    row = tl.program_id(0)
    tok = tl.load(ids_ptr + row)            # int64 token id
    cols = tl.arange(0, D)
    # BUG: no mask on the load; a bad id reads far outside the table
    v = tl.load(table_ptr + tok * D + cols)
    tl.store(out_ptr + row * D + cols, v)


def gather_rows(table, ids):
    out = torch.empty(ids.numel(), D, device=table.device, dtype=table.dtype)
    gather_rows_kernel[(ids.numel(),)](ids, table, out, D=D)
    return out


def shard_batch(gen, rank, step, dev):
    ids = torch.randint(0, N_ROWS, (BATCH,), generator=gen, dtype=torch.int64)
    if rank == 1 and step >= FAULT_STEP and not CLEAN:   # CLEAN: the fixed exporter
        ids[17] = BAD_TOKEN     # the exporter's bug
    y = ids % N_CLASSES
    return ids.to(dev), y.to(dev)


def main():
    rank = int(os.environ.get("RANK", "0"))
    world = int(os.environ.get("WORLD_SIZE", "1"))
    local = int(os.environ.get("LOCAL_RANK", "0"))
    ngpu = torch.cuda.device_count()
    backend = os.environ.get("DDP_BACKEND") or ("nccl" if ngpu >= world else "gloo")
    dev = torch.device("cuda", local % ngpu)
    torch.cuda.set_device(dev)
    dist.init_process_group(backend, device_id=dev if backend == "nccl" else None)
    print(f"[ddp] rank {rank}/{world} on {dev} with {backend}", flush=True)

    torch.manual_seed(0)
    table = torch.randn(N_ROWS, D, device=dev)          # frozen features
    mlp = torch.nn.Sequential(torch.nn.Linear(D, 64), torch.nn.ReLU(),
                              torch.nn.Linear(64, N_CLASSES)).to(dev)
    model = torch.nn.parallel.DistributedDataParallel(mlp, device_ids=[dev.index])
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    gen = torch.Generator().manual_seed(1000 + rank)
    t = time.time()
    for step in range(STEPS):
        ids, y = shard_batch(gen, rank, step, dev)
        feats = gather_rows(table, ids)
        loss = F.cross_entropy(model(feats), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()                                   # DDP all-reduces the gradients
        opt.step()
        if step % 5 == 0:
            print(f"[ddp] rank {rank} step {step}: loss {loss.item():.4f} "
                  f"({time.time() - t:.2f}s)", flush=True)
    torch.cuda.synchronize()
    dist.destroy_process_group()
    print(f"[ddp] rank {rank} done", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
