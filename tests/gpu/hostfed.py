"""hostfed.py - bench workload of `make bench` (tests/gpu/bench-hostfed.sh):
the training loop users leave capture on for (issue 26).

A torchvision ResNet-18 (weights=None: no download; a hand-built
ResNet-18-shaped net if torchvision cannot be imported) trains on 64x64
images fed from the host: every step a fresh uint8 batch is made on the
CPU (as a loader's augmentation would) and copied in with .cuda(), then
normalised on the GPU; SGD with momentum; about 200 launches a step.  No
fault: the bench measures cost, not reduction.

HOSTFED_BUG=1 adds what `make bench`'s hunt part (bench-hunt.sh) looks
for on a real loop: every step a Triton monitoring kernel sums each row of
the logits view logits[:, 1:] and masks its loads with the row stride
instead of the column count, so the last row reads one float past the
logits tensor, into whatever the caching allocator placed after it.  Never
a fault natively; only the monitored sums are off.  HOSTFED_BUG=0 (the
default) launches the same kernel with the right mask.

Prints "hostfed: trained N steps in S s (loss X)" with S the
training loop's own seconds (start-up, imports and cuDNN's first-use
autotuning in the warm-up steps, left out), then "hostfed: step ms:
median ..." on the steps' own times (a cost every launch pays moves the
median; stalls move the tail).

Environment:
  HOSTFED_SECONDS  train this long (default 8)
  HOSTFED_STEPS    train this many steps instead (0: use HOSTFED_SECONDS)
  HOSTFED_WARMUP   untimed steps first (default 5)
  BATCH, IMG       batch size and image side (default 64, 64)
  HOSTFED_BUG      1: the monitoring kernel reads past the logits (above);
                   0: the same kernel, fixed; unset: no monitoring kernel
  HOSTFED_ALTERNATE  K (under `gpureduce capture` only, for measurements):
                   the timed steps alternate, K at a time, between capture
                   on and capture paused (the capture library's
                   gpureduce_capture_pause: its callbacks return at once,
                   the launches still blocking), and a line "hostfed:
                   alternate K: ..." gives each phase's median step and
                   their ratio: capture's cost on one process and one
                   machine state, where separate runs differ by more than
                   the cost (the trace does not replay); a second line
                   divides each on phase by the paused phases beside it,
                   so that the machine's drift within the run cancels
"""
import os
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

SECONDS = float(os.environ.get("HOSTFED_SECONDS", "8"))
STEPS = int(os.environ.get("HOSTFED_STEPS", "0"))
WARMUP = int(os.environ.get("HOSTFED_WARMUP", "5"))
BATCH = int(os.environ.get("BATCH", "64"))
IMG = int(os.environ.get("IMG", "64"))
N_CLASSES = 100
BUG = os.environ.get("HOSTFED_BUG", "")
ALTERNATE = int(os.environ.get("HOSTFED_ALTERNATE", "0"))


def capture_pauser():
    """The capture library's pause switch, from the copy the driver loaded
    (CUDA_INJECTION64_PATH, set by `gpureduce capture`)."""
    import ctypes
    lib = os.environ.get("CUDA_INJECTION64_PATH")
    if not lib:
        raise SystemExit("hostfed: HOSTFED_ALTERNATE needs `gpureduce capture` (no CUDA_INJECTION64_PATH)")
    f = ctypes.CDLL(lib, mode=os.RTLD_NOLOAD | os.RTLD_LAZY).gpureduce_capture_pause
    f.argtypes = [ctypes.c_int]
    f.restype = ctypes.c_int
    return f


def monitor_kernel():
    """The Triton row-sum of HOSTFED_BUG (imported only when asked for)."""
    import triton
    import triton.language as tl

    @triton.jit
    def logit_row_sum_kernel(x_ptr, out_ptr, row_stride, mask_cols, BLOCK: tl.constexpr):
        row = tl.program_id(0)
        cols = tl.arange(0, BLOCK)
        x = tl.load(x_ptr + row * row_stride + cols, mask=cols < mask_cols, other=0.0)
        tl.store(out_ptr + row, tl.sum(x, axis=0))

    def monitor(logits):
        view = logits.detach()[:, 1:]               # BATCH x 99, row stride 100
        out = torch.empty(view.shape[0], device=logits.device)
        mask_cols = view.stride(0) if BUG == "1" else view.shape[1]   # the bug: the stride
        logit_row_sum_kernel[(view.shape[0],)](view, out, view.stride(0), mask_cols, BLOCK=128)
        return out

    return monitor


def small_resnet():
    def block(cin, cout, stride):
        return nn.Sequential(nn.Conv2d(cin, cout, 3, stride, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(),
                             nn.Conv2d(cout, cout, 3, 1, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU())
    layers, cin = [nn.Conv2d(3, 64, 3, 1, 1, bias=False), nn.BatchNorm2d(64), nn.ReLU()], 64
    for cout, stride in ((64, 1), (128, 2), (256, 2), (512, 2)):
        layers += [block(cin, cout, stride), block(cout, cout, 1)]
        cin = cout
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(512, N_CLASSES)]
    return nn.Sequential(*layers), "hand-built ResNet-18 shape"


def make_model():
    try:
        import torchvision
        return torchvision.models.resnet18(weights=None, num_classes=N_CLASSES), "torchvision resnet18"
    except Exception as e:  # noqa: BLE001 - any import failure means: fall back
        m, what = small_resnet()
        return m, "%s (torchvision import failed: %s)" % (what, e)


def main():
    torch.manual_seed(0)
    model, what = make_model()
    model = model.cuda()
    opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
    mean = torch.tensor([0.485, 0.456, 0.406], device="cuda").view(1, 3, 1, 1) * 255
    std = torch.tensor([0.229, 0.224, 0.225], device="cuda").view(1, 3, 1, 1) * 255
    gen = torch.Generator().manual_seed(1)
    monitor = monitor_kernel() if BUG else None

    def step():
        images = torch.randint(0, 256, (BATCH, 3, IMG, IMG), dtype=torch.uint8, generator=gen)
        labels = torch.randint(0, N_CLASSES, (BATCH,), generator=gen)
        x = images.cuda().float().sub_(mean).div_(std)
        y = labels.cuda()
        logits = model(x)
        if monitor:
            monitor(logits)
        loss = F.cross_entropy(logits, y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return loss

    print("hostfed: %s, batch %d of %dx%d images copied in every step" % (what, BATCH, IMG, IMG), flush=True)
    for _ in range(WARMUP):
        step()
    torch.cuda.synchronize()
    pause = capture_pauser() if ALTERNATE > 0 else None
    n, t0 = 0, time.perf_counter()
    durs, paused = [], []
    while (n < STEPS) if STEPS > 0 else (time.perf_counter() - t0 < SECONDS):
        if pause and n % ALTERNATE == 0 and pause((n // ALTERNATE) % 2) != 0:
            raise SystemExit("hostfed: the capture library is not capturing")
        ts = time.perf_counter()
        loss = step()
        durs.append(time.perf_counter() - ts)
        paused.append(bool(pause) and (n // ALTERNATE) % 2 == 1)
        n += 1
    if pause:
        pause(0)
    torch.cuda.synchronize()
    secs = time.perf_counter() - t0
    print("hostfed: trained %d steps in %.3f s (loss %.3f)" % (n, secs, loss.item()), flush=True)
    print_steps(durs)
    if pause:
        print_alternate(durs, paused, ALTERNATE)


def median(v):
    """The upper median of the step times v (non-empty)."""
    return sorted(v)[len(v) // 2]


def print_steps(durs):
    """One line on the steps' own times: a cost paid at every launch moves
    the median; one paid in stalls (a write-back, a collection) moves the
    tail and the seconds above the median instead."""
    if not durs:
        return
    d = sorted(durs)
    med = median(d)
    over = sum(x - med for x in durs if x > 2 * med)
    print("hostfed: step ms: median %.3f p10 %.3f p90 %.3f max %.3f; %d step(s) over twice the median, "
          "%.3f s above the median in them"
          % (med * 1e3, d[len(d) // 10] * 1e3, d[(len(d) * 9) // 10] * 1e3, d[-1] * 1e3,
             sum(1 for x in durs if x > 2 * med), over), flush=True)


def print_alternate(durs, paused, k):
    """Each phase's median step (capture on, capture paused) and their
    ratio; the first step of each phase is left out (the switch).  Then
    the same paired by neighbours: each on phase's median over the mean of
    the paused phases' medians on either side of it, whose median drifts
    of the machine within the run move less."""
    phases = []   # (paused, [step seconds]) in order, first step of each left out
    for i, (d, p) in enumerate(zip(durs, paused)):
        if i % k == 0:
            phases.append((p, []))
        else:
            phases[-1][1].append(d)
    on = [d for p, v in phases if not p for d in v]
    off = [d for p, v in phases if p for d in v]
    if not on or not off:
        print("hostfed: alternate %d: too few steps for both phases" % k, flush=True)
        return
    mon, moff = median(on), median(off)
    print("hostfed: alternate %d: capture on: median step %.3f ms (%d steps); paused: %.3f ms (%d steps); "
          "on/paused %.3fx (+%.3f ms a step)" % (k, mon * 1e3, len(on), moff * 1e3, len(off), mon / moff,
                                                (mon - moff) * 1e3), flush=True)
    pairs = []
    for j, (p, v) in enumerate(phases):
        if p or not v:
            continue
        nb = [median(phases[i][1]) for i in (j - 1, j + 1)
              if 0 <= i < len(phases) and phases[i][0] and phases[i][1]]
        if nb:
            pairs.append(median(v) / (sum(nb) / len(nb)))
    if pairs:
        q = sorted(pairs)
        print("hostfed: alternate %d, each on phase over its paused neighbours: median %.3fx (%d phases, "
              "quartiles %.3f-%.3f)" % (k, median(pairs), len(pairs), q[len(q) // 4], q[(3 * len(q)) // 4]),
              flush=True)

if __name__ == "__main__":
    main()
