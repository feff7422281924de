"""train.py - gpureduce sample: a long training run that faults at its end.

The run users bring: a real torchvision model (ResNet-18, weights=None: no
download) trains for a long time, then a custom Triton kernel faults.  The
kernel builds label-smoothed targets, out[row, :] = eps / C and
out[row, label] = 1 - eps + eps / C, and does not check the label.  The
data pipeline pads the last, ragged batch of the run with the sentinel
label PAD_LABEL (meant to be ignored, as `ignore_index` would be); the
kernel writes PAD_LABEL * 4 bytes (~4 TiB) past its output and faults on
any GPU.  That launch is the only bad one, after hours (here: minutes) of
healthy launches: a trace of the whole run would hold every byte that ever
entered the GPU, so capture has to checkpoint (gpureduce capture
--checkpoint-every; docs/FORMAT.md "Checkpoints").

The data is a fixed "dataset" of DATASET_BATCHES random uint8 batches made
on the CPU once, copied to the GPU each step (as a loader would) and
normalised there.

Environment:
  TRAIN_SECONDS   how long to train before the bad batch (default 30)
  TRAIN_STEPS     train this many steps instead (0: use TRAIN_SECONDS)
  BATCH, IMG      batch size and image side (default 64, 64)
  DATASET_BATCHES distinct batches in the dataset (default 64)
  TORCHVISION_LONG_CLEAN=1  the kernel fixed: its label store is masked
                  with 0 <= label < n_classes (the constexpr CHECKED; the
                  default build is the same kernel as before), so a padded
                  row keeps the uniform target: the clean variant, which
                  must run and hunt clean (issue 28)

It prints the model's live device memory (torch.cuda.memory_allocated and
memory_reserved) just before the bad batch, so the trace size can be put
next to it.  Falls back to a small hand-built ResNet in this file when
torchvision cannot be imported (and says so).

Usage: python3 train.py   (no build step; Triton compiles on first use)
"""
import os
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

TRAIN_SECONDS = float(os.environ.get("TRAIN_SECONDS", "30"))
TRAIN_STEPS = int(os.environ.get("TRAIN_STEPS", "0"))
BATCH = int(os.environ.get("BATCH", "64"))
IMG = int(os.environ.get("IMG", "64"))
DATASET_BATCHES = int(os.environ.get("DATASET_BATCHES", "64"))
N_CLASSES = 100
EPS = 0.1
PAD_LABEL = 1 << 40          # the loader's padding sentinel, meant to be ignored
CLEAN = os.environ.get("TORCHVISION_LONG_CLEAN") == "1"


@triton.jit
def smooth_targets_kernel(labels_ptr, out_ptr, n_classes, eps, BLOCK: tl.constexpr,
                          CHECKED: tl.constexpr):
    row = tl.program_id(0)
    label = tl.load(labels_ptr + row)           # int64
    cols = tl.arange(0, BLOCK)
    base = eps / n_classes
    tl.store(out_ptr + row * n_classes + cols, tl.zeros([BLOCK], tl.float32) + base,
             mask=cols < n_classes)
    if CHECKED:   # the fix (clean variant only; a compile-time branch)
        tl.store(out_ptr + row * n_classes + label, 1.0 - eps + base,
                 mask=(label >= 0) & (label < n_classes))
    else:
        # BUG: no check that 0 <= label < n_classes (the padding sentinel is not)
        tl.store(out_ptr + row * n_classes + label, 1.0 - eps + base)


def smooth_targets(labels):
    out = torch.empty(labels.numel(), N_CLASSES, device=labels.device, dtype=torch.float32)
    smooth_targets_kernel[(labels.numel(),)](labels, out, N_CLASSES, EPS,
                                             BLOCK=triton.next_power_of_2(N_CLASSES), CHECKED=CLEAN)
    return out


class Block(nn.Module):
    def __init__(self, cin, cout, stride):
        super().__init__()
        self.c1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
        self.b1 = nn.BatchNorm2d(cout)
        self.c2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
        self.b2 = nn.BatchNorm2d(cout)
        self.down = None
        if stride != 1 or cin != cout:
            self.down = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

    def forward(self, x):
        y = F.relu(self.b1(self.c1(x)))
        y = self.b2(self.c2(y))
        return F.relu(y + (self.down(x) if self.down is not None else x))


class SmallResNet(nn.Module):
    """The fallback when torchvision is missing: a ResNet-18-shaped net."""
    def __init__(self, n_classes):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 64, 3, 1, 1, bias=False), nn.BatchNorm2d(64), nn.ReLU())
        layers, cin = [], 64
        for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
            layers += [Block(cin, cout, stride), Block(cout, cout, 1)]
            cin = cout
        self.layers = nn.Sequential(*layers)
        self.fc = nn.Linear(512, n_classes)

    def forward(self, x):
        x = self.layers(self.stem(x))
        return self.fc(torch.flatten(F.adaptive_avg_pool2d(x, 1), 1))


def make_model():
    try:
        import torchvision
        return torchvision.models.resnet18(weights=None, num_classes=N_CLASSES), "torchvision resnet18"
    except Exception as e:  # noqa: BLE001 - any import failure means: fall back
        return SmallResNet(N_CLASSES), "hand-built ResNet-18 (torchvision import failed: %s)" % e


def train_step(model, opt, images_u8, labels, mean, std):
    x = images_u8.cuda().float().div_(255).sub_(mean).div_(std)
    y = labels.cuda()
    targets = smooth_targets(y)
    logits = model(x)
    loss = -(targets * F.log_softmax(logits, dim=1)).sum(1).mean()
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    return loss


def main():
    torch.manual_seed(0)
    model, which = make_model()
    model = model.cuda().train()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    mean = torch.tensor([0.485, 0.456, 0.406], device="cuda").view(1, 3, 1, 1)
    std = torch.tensor([0.229, 0.224, 0.225], device="cuda").view(1, 3, 1, 1)
    gen = torch.Generator().manual_seed(1)
    data = [(torch.randint(0, 256, (BATCH, 3, IMG, IMG), dtype=torch.uint8, generator=gen),
             torch.randint(0, N_CLASSES, (BATCH,), generator=gen)) for _ in range(DATASET_BATCHES)]
    print("torchvision-long: %s, batch %d of %dx%d, %s" % (
        which, BATCH, IMG, IMG,
        "%d steps" % TRAIN_STEPS if TRAIN_STEPS else "%.0f s of training" % TRAIN_SECONDS), flush=True)

    t0 = time.time()
    step = 0
    while (step < TRAIN_STEPS) if TRAIN_STEPS else (time.time() - t0 < TRAIN_SECONDS):
        images, labels = data[step % DATASET_BATCHES]
        loss = train_step(model, opt, images, labels, mean, std)
        step += 1
        if step % 500 == 0:
            print("torchvision-long: step %d, loss %.3f, %.0f s" % (step, loss.item(), time.time() - t0),
                  flush=True)
    torch.cuda.synchronize()
    print("torchvision-long: trained %d steps in %.1f s; live device memory: %.1f MiB allocated, "
          "%.1f MiB reserved" % (step, time.time() - t0, torch.cuda.memory_allocated() / 2**20,
                                 torch.cuda.memory_reserved() / 2**20), flush=True)

    # the run's last, ragged batch: the loader pads it with the sentinel
    images, labels = data[step % DATASET_BATCHES]
    labels = labels.clone()
    labels[BATCH // 2:] = PAD_LABEL
    train_step(model, opt, images, labels, mean, std)
    torch.cuda.synchronize()
    print("torchvision-long: no fault?", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
