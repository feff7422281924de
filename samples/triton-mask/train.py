"""train.py - sample for gpureduce: a Triton kernel with a missing load mask.

A tiny bag-of-words classifier is trained with Adam.  Its embedding lookup
is a custom Triton kernel, embed_scale_kernel (out[i, :] = table[ids[i], :]
* scale), called in forward.  The bugs, together:
  * the tokenizer maps out-of-vocabulary words to a hashed id,
    crc32(word) & 0x7fffffff, meant to be reduced modulo the number of hash
    buckets (the table has N_VOCAB + N_BUCKETS rows); the modulo is missing;
  * the Triton load has no mask (no `tok < n_rows` check).
For the first 40 steps every word is in the vocabulary.  From step 40 on,
batches come from a new data shard that contains the word "okapi", whose id
is 1663264414: the load reads 1663264414 * 32 * 4 bytes (~198 GiB) past the
table and faults on any GPU.  The script dies with the usual RuntimeError.

TRITON_MASK_CLEAN=1 runs the same training with the tokenizer fixed (the
modulo: out-of-vocabulary words land in the hash buckets): the clean variant,
which must run and hunt clean (issue 28).

Usage: python3 train.py   (no build step; Triton compiles on first use)
"""
import os
import random
import sys
import time
import zlib

import torch
import torch.nn.functional as F
import triton
import triton.language as tl

D = 32                 # embedding width (a power of two, for tl.arange)
N_CLASSES = 4
BATCH = 32
SEQ = 8
STEPS = 60
NEW_SHARD_STEP = 40    # batches from the new shard start here
N_BUCKETS = 16

WORDS = ("the a cat dog bird fish runs jumps sleeps eats red green blue big small "
         "fast slow happy sad tree house river stone cloud sun moon rain snow wind "
         "road car boat train plane bread milk tea cake apple pear plum").split()
NEW_WORDS = ["okapi"]  # only in the new shard
VOCAB = {w: i for i, w in enumerate(WORDS)}
N_VOCAB = len(VOCAB)
CLEAN = os.environ.get("TRITON_MASK_CLEAN") == "1"


def token_id(word):
    if word in VOCAB:
        return VOCAB[word]
    if CLEAN:   # the fix
        return N_VOCAB + zlib.crc32(word.encode()) % N_BUCKETS
    # BUG: should be N_VOCAB + crc32(word) % N_BUCKETS
    return zlib.crc32(word.encode()) & 0x7FFFFFFF


@triton.jit
def embed_scale_kernel(ids_ptr, table_ptr, out_ptr, scale, D: tl.constexpr):
    row = tl.program_id(0)
    tok = tl.load(ids_ptr + row)            # int64 token id
    cols = tl.arange(0, D)
    # BUG: no mask on the load; a bad id reads far outside the table
    v = tl.load(table_ptr + tok * D + cols)
    tl.store(out_ptr + row * D + cols, v * scale)


class EmbedScale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, table, ids, scale):
        out = torch.empty(ids.numel(), D, device=table.device, dtype=table.dtype)
        embed_scale_kernel[(ids.numel(),)](ids, table, out, scale, D=D)
        ctx.save_for_backward(ids)
        ctx.n_rows, ctx.scale = table.shape[0], scale
        return out

    @staticmethod
    def backward(ctx, grad_out):
        (ids,) = ctx.saved_tensors
        grad = torch.zeros(ctx.n_rows, D, device=grad_out.device, dtype=grad_out.dtype)
        grad.index_add_(0, ids, grad_out * ctx.scale)
        return grad, None, None


class Model(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.table = torch.nn.Parameter(torch.randn(N_VOCAB + N_BUCKETS, D) * 0.1)
        self.head = torch.nn.Sequential(torch.nn.Linear(D, 64), torch.nn.ReLU(),
                                        torch.nn.Linear(64, N_CLASSES))

    def forward(self, ids):
        emb = EmbedScale.apply(self.table, ids.reshape(-1), D ** -0.5)
        return self.head(emb.view(ids.shape[0], SEQ, D).mean(1))


def make_batch(rng, new_shard):
    sents, labels = [], []
    for _ in range(BATCH):
        words = [rng.choice(WORDS) for _ in range(SEQ)]
        if new_shard and rng.random() < 0.5:
            words[rng.randrange(SEQ)] = rng.choice(NEW_WORDS)
        sents.append([token_id(w) for w in words])
        labels.append(sum(VOCAB.get(w, 0) for w in words) % N_CLASSES)
    return torch.tensor(sents, dtype=torch.int64), torch.tensor(labels)


def main():
    torch.manual_seed(0)
    rng = random.Random(0)
    dev = "cuda"
    model = Model().to(dev)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    t = time.time()
    for step in range(STEPS):
        ids, y = make_batch(rng, step >= NEW_SHARD_STEP)
        ids, y = ids.to(dev), y.to(dev)
        loss = F.cross_entropy(model(ids), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % 10 == 0 or step == NEW_SHARD_STEP:
            print(f"[triton] step {step}: loss {loss.item():.4f} "
                  f"max id {int(ids.max())} ({time.time() - t:.2f}s)", flush=True)
    torch.cuda.synchronize()
    print("[triton] done", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
