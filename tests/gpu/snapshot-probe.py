# snapshot-probe.py SCRIPT ARGS... - what torch's allocator history costs
# `capture --tensors` at a fetch, without gpureduce: turns the history on
# as capture/torchmem.c does (enabled='all', context='alloc',
# stacks='python'), runs SCRIPT as __main__, then times
# torch.cuda.memory._snapshot() (the first and a second one) and the
# history clear, after the script (PROBE_INLINE=1, the default) and at
# Python's exit (PROBE_ATEXIT=1, the default).  PROBE_STACKS=none: no
# stacks; PROBE_MAXE: the ring's size; PROBE_PROF_FIRST=1: cProfile of the
# first snapshot (on 2026-12-06 it showed torch importing torch._inductor
# from its symbolizer: docs/RESULTS.md).  Prints "probe: ..." lines on
# stderr.  Run on the GPU machine, e.g. from a sample's folder:
#   VIEW_TAIL_CLEAN=1 python3 ../../tests/gpu/snapshot-probe.py train.py
import atexit
import cProfile
import os
import pstats
import runpy
import sys
import time

import torch

m = torch.cuda.memory


def timed(label, f, *a, **k):
    t = time.perf_counter()
    r = f(*a, **k)
    print(f"probe: {label}: {time.perf_counter() - t:.4f} s", file=sys.stderr, flush=True)
    return r


stacks = os.environ.get('PROBE_STACKS', 'python')
kw = dict(enabled='all', context=None if stacks == 'none' else 'alloc', stacks='python',
          max_entries=int(os.environ.get('PROBE_MAXE', 4000000)))
torch.cuda.init()
timed('history on', m._record_memory_history, **kw)
timed('snapshot, no events yet', m._snapshot)
timed('history clear', m._record_memory_history, clear_history=True, **kw)


def fin(where):
    pr = cProfile.Profile()
    pr.enable()
    s = timed(where + ' snapshot', m._snapshot)
    pr.disable()
    if os.environ.get('PROBE_PROF_FIRST'):
        pstats.Stats(pr, stream=sys.stderr).sort_stats('cumulative').print_stats(25)
    evs = [e for t in s.get('device_traces', ()) for e in t]
    print(f"probe: {where}: {len(evs)} events, {sum(len(e.get('frames') or ()) for e in evs)} frames, "
          f"{len(s.get('segments', ()))} segments; torch._inductor imported: {'torch._inductor' in sys.modules}",
          file=sys.stderr)
    timed(where + ' snapshot again', m._snapshot)
    timed(where + ' history clear', m._record_memory_history, clear_history=True, **kw)


if os.environ.get('PROBE_ATEXIT', '1') == '1':
    atexit.register(fin, 'atexit')
sys.argv = sys.argv[1:]
try:
    runpy.run_path(sys.argv[0], run_name='__main__')
except SystemExit:
    pass
if os.environ.get('PROBE_INLINE', '1') == '1':
    fin('inline')
