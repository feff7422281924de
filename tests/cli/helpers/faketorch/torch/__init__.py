# faketorch/torch - a stand-in for torch's CUDA caching allocator and its
# history, for `capture --tensors` on the CPU (tests/cli/t1011,
# tests/bench/tensors-cost.sh); as in torch 2.x, the metadata is the setting
# thread's own (thread_local), and each event carries its time (us since
# the epoch).  Its allocations are made by the program itself
# (torch.cuda.memory.alloc(size, line) / free(addr)), or the program sets
# torch.cuda.memory.segs, the segments _snapshot() gives; FAKE_FRAMES=N gives
# each allocation N frames under torch's site-packages above the caller's
# (default 1), FAKE_NO_METADATA=1 plays a torch from before 2025,
# FAKE_TIMES=0 events without times, FAKE_SKEW_US a clock ahead,
# FAKE_ASYNC_BACKEND=1 a torch on the cudaMallocAsync allocator backend
# (PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync: no history, no
# snapshot; its errors are torch's), FAKE_OTHER_THREAD=1 another thread
# asking for torch._inductor while a
# snapshot is taken.  HIST_LOG names a file that gets a line for every
# history call (and for an import of torch._inductor).
import os, sys, threading, time
SEG, SEGSZ = 0x7f0000000000, 2 << 20
def _round(n):
    return 512 if n < 512 else (n + 511) // 512 * 512
class _Memory:
    def __init__(self):
        self.live = {}        # addr -> [requested, size, frames, state]
        self.trace = []
        self.hist = None
        self.tls = threading.local()
        self.segs = None      # set by a program: the state _snapshot() gives
        self.other_done = False
        self.log = open(os.environ['HIST_LOG'], 'a')
    def _rec(self, action, addr, size, frames):
        if self.hist == 'all':
            e = {'action': action, 'addr': addr, 'size': size, 'stream': 0,
                 'time_us': (time.time_ns() // 1000 + int(os.environ.get('FAKE_SKEW_US', '0'))
                             if os.environ.get('FAKE_TIMES', '1') == '1' else 0),
                 'compile_context': '', 'user_metadata': getattr(self.tls, 'meta', '')}
            if frames:
                e['frames'] = frames
            self.trace.append(e)
    def alloc(self, req, line):
        size, a = _round(req), SEG
        for b in sorted(self.live):
            if b - a >= size:
                break
            a = b + self.live[b][1]
        fr = [{'filename': '/site/torch/nn/functional.py', 'line': 99 + k, 'name': 'linear'}
              for k in range(int(os.environ.get('FAKE_FRAMES', '1')))]
        fr = fr + [{'filename': '/home/u/app.py', 'line': line, 'name': 'main'}] if self.hist else []
        self.live[a] = [req, size, fr, 'active_allocated']
        self._rec('alloc', a, req, fr)
        return a
    def free(self, a, pending=False):
        self._rec('free_requested', a, self.live[a][0], None)
        if pending:
            self.live[a][3] = 'active_pending_free'
        else:
            self.complete(a)
    def complete(self, a):
        self._rec('free_completed', a, self.live[a][0], None)
        del self.live[a]
    def _record_memory_history(self, enabled=None, context=None, stacks=None, max_entries=0,
                               clear_history=False):
        if os.environ.get('FAKE_ASYNC_BACKEND') == '1':   # torch's own words for that backend
            raise RuntimeError('cudaMallocAsync does not yet support recordHistory. '
                               'If you need it, please file an issue describing your use case.')
        self.log.write('history %s %s %s %s\n' % (enabled, context, stacks, clear_history))
        self.log.flush()
        self.hist = enabled
        if not enabled or clear_history:
            self.trace = []
    def _set_memory_metadata(self, s):
        self.tls.meta = s
    def _snapshot(self):
        if os.environ.get('FAKE_ASYNC_BACKEND') == '1':
            raise RuntimeError('Calling snapshot with backend:cudaMallocAsync is not meaningful. '
                               '(For backend:native, snapshot returns a detailed summary of all '
                               'blocks tracked by the allocator, but the cudaMallocAsync backend '
                               'does not track individual blocks.)')
        self._rec('snapshot', 0, 0, None)
        if self.segs is not None:   # the program's own state (t1007)
            return {'segments': self.segs, 'device_traces': [list(self.trace)]}
        if self.hist:   # torch's symbolizer asks for inductor's generated code
            hasattr(sys.modules['torch'], '_inductor')
        if self.hist and os.environ.get('FAKE_OTHER_THREAD') == '1' and not self.other_done:
            # another thread of the program asks meanwhile: it gets inductor
            self.other_done = True
            got = []
            th = threading.Thread(target=lambda: got.append(hasattr(sys.modules['torch'], '_inductor')))
            th.start()
            th.join()
            self.log.write('other thread got _inductor: %s\n' % got[0])
            self.log.flush()
        blocks, a = [], SEG
        for b in sorted(self.live):
            if b > a:
                blocks.append({'address': a, 'size': b - a, 'requested_size': 0, 'state': 'inactive'})
            r, size, fr, st = self.live[b]
            blocks.append({'address': b, 'size': size, 'requested_size': r, 'state': st, 'frames': fr})
            a = b + size
        blocks.append({'address': a, 'size': SEG + SEGSZ - a, 'requested_size': 0, 'state': 'inactive'})
        return {'segments': [{'address': SEG, 'total_size': SEGSZ, 'blocks': blocks}],
                'device_traces': [list(self.trace)]}
if os.environ.get('FAKE_NO_METADATA') == '1':
    del _Memory._set_memory_metadata   # a torch from before 2025
def __getattr__(name):   # torch's lazy submodules: _inductor costs seconds to import
    if name == '_inductor':
        import types
        with open(os.environ['HIST_LOG'], 'a') as f:
            f.write('import _inductor\n')
        mod = types.ModuleType('torch._inductor')
        sys.modules['torch._inductor'] = mod
        globals()['_inductor'] = mod
        return mod
    raise AttributeError(name)
class _Cuda:
    memory = _Memory()
    ready = False
    def is_initialized(self):
        return self.ready
cuda = _Cuda()
