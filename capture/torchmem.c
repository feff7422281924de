/*
 * torchmem.c - `capture --tensors` (GPUREDUCE_TENSORS=1): the blocks of
 * PyTorch's CUDA caching allocator (one per tensor storage) inside the
 * cudaMalloc segments the trace records, written as BLOCK_ALLOC /
 * BLOCK_FREE records (docs/FORMAT.md, 1.3) so that `shrink --root-cause`
 * can put a guard after every tensor.
 *
 * Two modes (GPUREDUCE_TENSORS_MODE=events|snapshot).  The default is
 * events where torch has torch.cuda.memory._set_memory_metadata (2.x
 * releases of 2025 on), snapshot otherwise.  On the H200 (torch 2.11,
 * docs/RESULTS.md, 2026-12-04) events cut --tensors from 728 to ~13 us a
 * launch, and since its events are placed by their times as well as their
 * tags (below) it gives the same blocks as the snapshot mode at every
 * launch of a host-fed ResNet-18 loop (7665 launches, 20 steps).
 *
 * snapshot (before 1.6, the fallback): at the entry of every launch, on
 * the launching thread and outside inject.c's lock, take the GIL
 * (PyGILState_Ensure) and call a small Python function (compiled once into
 * a private namespace) that asks torch for the allocator's state
 * (torch.cuda.memory._snapshot(): segments and their blocks, with requested
 * sizes).  The first call turns on torch's allocation history in its
 * cheapest mode (enabled='state') so later blocks carry the line that
 * allocated them.  Then, under the lock and right before the LAUNCH record,
 * what changed since the previous reading is written.  ~0.7 ms a launch on
 * the H200 (GPU-FACTS.md).
 *
 * events (1.6): the first reading turns the history on with its event ring
 * (enabled='all', context='alloc', stacks='python') and takes one snapshot:
 * the live blocks, INITIAL.  At every later launch the only work is
 * torch's allocator metadata set to the launch's seq (~1 us: GIL, one
 * call), and the launch's entry time kept: torch stamps every allocation
 * and free with the metadata its thread set last (a thread_local string)
 * and with its time, so an event tagged k happened after launch k's entry.
 * It applies before the first launch entered after it (assign_targets: by
 * its tag, the history's order and its time; a thread that launched
 * nothing for a while, such as the main thread while autograd's thread ran
 * backward(), carries an old tag, and placed by it alone its allocations
 * took the place of tensors the backward launches still used).  Every
 * GPUREDUCE_TENSORS_FETCH launches (1000), at the launch after a checkpoint
 * and at Python's exit (atexit), the ring is fetched (_snapshot(), the
 * ring cleared after it) and its events turned into BLOCK records: those
 * of the launch being entered in place, older ones behind a BLOCK_BATCH
 * naming their launch (the decoder moves them there, docs/FORMAT.md).
 * Each fetch also compares the blocks the events leave with the
 * allocator's state in the same snapshot and corrects the difference
 * (events that fell between a snapshot and the clearing of the ring, made
 * by a thread that does not hold the GIL) with a NOTE.  BLOCK_BATCH's
 * `known` says up to which launch the blocks are complete: a process that
 * dies before its exit fetch reads with no blocks after its last fetch.
 *
 * Both modes write the same records for the same program: per launch, the
 * BLOCK_FREEs then the BLOCK_ALLOCs that changed since the last one, each
 * in address order, INITIAL after a checkpoint (tests/cli/t1011).  A block
 * freed while in use on another stream (record_stream) is freed at its
 * free_completed in the events mode (its memory is not reused before), at
 * its free request in the snapshot mode.  An event's block size is the
 * allocator's rounding of the requested size (512-byte units); a block the
 * allocator did not split is larger (docs/hunt.md says what that means).
 *
 * Why there: torch releases the GIL around kernel launches (and the
 * pybind11 ops of extensions hold it: PyGILState_Ensure is fine either
 * way), and a launch is never made inside the allocator's mutex, which
 * _snapshot() takes: inside a cuMemAlloc callback it would deadlock.
 * Launches of other threads (autograd's) read the same way.  Nothing is
 * read while the interpreter is not initialised or is finalising, nor
 * before torch is imported and its CUDA state initialised.
 *
 * The first snapshot whose events carry Python frames costs seconds in a
 * program that never imported torch._inductor: torch's symbolizer asks
 * hasattr(torch, '_inductor') (for the frames of inductor's generated
 * code), and torch's lazy module __getattr__ answers by importing
 * inductor, dynamo, fx and sympy (3.4-4.5 s of the exit fetch on an H100,
 * tests/gpu/tensors-cost.sh, 2026-12-06).  Without inductor imported there
 * is no generated code to find frames for, so _snap() takes the snapshot
 * with torch's __getattr__ wrapped to answer AttributeError for
 * '_inductor', to the fetching thread only (other threads import as
 * before), and puts the original back after it.
 *
 * CuPy's memory pool is not read (TR_BLK_CUPY is reserved).
 * The CPython API comes from pyembed.c (resolved with dlsym): the library
 * never links libpython.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../common/strbuf.h"
#include "../common/util.h"
#include "capture.h"
#include "prof.h"
#include "pyembed.h"


static int g_on;                 /* GPUREDUCE_TENSORS=1 */
static PyObject *g_ns;           /* the helpers' namespace, once compiled */
static int g_broken;             /* compiling failed: do not try again */
static char g_error[300];        /* the reader's last error, for one note */
static int g_noted;
/* under inject.c's lock: the live blocks as last written (addr -> size, alloc_size) */
static struct cap_map g_live = CAP_MAP_INIT;
static int g_forget = 1;         /* next write: every block again, INITIAL */

/* events mode (with the GIL unless said) */
enum { TM_UNDECIDED, TM_SNAPSHOT, TM_EVENTS };
static int g_mode;               /* set once, with the GIL */
static PyObject *g_setm;         /* torch's metadata setter (borrowed from g_ns) */
static PyObject *g_fetch;        /* ns["fetch"] */
static unsigned long g_every = 1000;   /* GPUREDUCE_TENSORS_FETCH: launches between fetches */
static unsigned long g_since;    /* launches since the last fetch */
static int g_need_fetch;         /* atomic: a checkpoint wants the model at the next launch */
/* under inject.c's lock: the allocator's live blocks as the events say */
static struct cap_map g_model = CAP_MAP_INIT;   /* addr -> struct mblk * */
static int g_initial_pending;    /* a forget whose INITIAL blocks are not written yet */
static uint64_t g_initial_at;    /* ...the launch they apply before */
static unsigned long g_fixed;    /* blocks the reconciliation corrected */
static int g_exiting;            /* the exit fetch: no launch follows */

/* The helpers.  read() (snapshot mode), begin() and fetch() (events mode)
 * return None (torch not ready), bytes (records) or str (an error).  Per
 * record: <IqqQQQQII kind tag time_us addr requested size segment line
 * len(file)>,
 * file, <I len(func)>, func; kind 1 an allocation (tag: the metadata it
 * carried, -1 none), 2 a free (free_completed), 3 a live block of the
 * allocator's state at the reading (its segments).  fetch()'s bytes (and
 * begin()'s after its 'E') start with <QQ>: the nanoseconds it spent in
 * torch's calls and in its own Python (the profile, take_fetch).
 *
 * A fetch is mostly Python per event (~1 us each on the build machine), so
 * the reader keeps what repeats: a record's tail (line, file, function) by
 * frame, and a live block's whole record by (address, requested size,
 * size, segment) from one fetch to the next, as read() does (a block freed
 * and allocated again with the same sizes between two fetches keeps its
 * first "allocated at"; a live record's frame is used only where the
 * events missed a block). */
static const char reader_src[] =
	"import sys, struct, os, bisect, _thread, time\n"
	"_st = {'on': False}\n"
	"_MARK = 'gpureduce:fetch'\n"
	"MAXE = 4000000\n"
	"setm = None\n"
	"_pk = struct.pack\n"
	"_ns = time.perf_counter_ns\n"
	"def _frame(frames):\n"
	"    for f in frames or ():\n"
	"        fn = f.get('filename') or ''\n"
	"        if '/torch/' not in fn and not fn.startswith('<'):\n"
	"            return f\n"
	"    return frames[0] if frames else {}\n"
	"def _enc(s):\n"
	"    b = str(s).encode('utf-8', 'replace')[:1000]\n"
	"    return b\n"
	"_tails = {}\n"
	"def _tail(f):\n"
	"    k = (f.get('filename', ''), f.get('name', ''), f.get('line', 0))\n"
	"    t = _tails.get(k)\n"
	"    if t is None:\n"
	"        if len(_tails) >= 65536:\n"
	"            _tails.clear()\n"
	"        fi, nm = _enc(k[0]), _enc(k[1])\n"
	"        t = _tails[k] = _pk('<II', int(k[2] or 0), len(fi)) + fi + _pk('<I', len(nm)) + nm\n"
	"    return t\n"
	"def _rec(kind, tag, addr, size, asz, seg, f, tm=0):\n"
	"    return _pk('<IqqQQQQ', kind, tag, tm, addr, size, asz, seg) + _tail(f)\n"
	"def _torch():\n"
	"    t = sys.modules.get('torch')\n"
	"    if t is None or not hasattr(t, 'cuda') or not t.cuda.is_initialized():\n"
	"        return None\n"
	"    return t\n"
	"_LIVE = ('active_allocated', 'active_pending_free')\n"
	"_quiet = set()\n"
	"def _snap(t, m):\n"
	"    if 'torch._inductor' in sys.modules:\n"
	"        return m._snapshot()\n"
	"    d = getattr(t, '__dict__', {})\n"
	"    ga = d.get('__getattr__')\n"
	"    if ga is None:\n"
	"        return m._snapshot()\n"
	"    def _ga(name):\n"
	"        if name == '_inductor' and _thread.get_ident() in _quiet:\n"
	"            raise AttributeError(name)\n"
	"        return ga(name)\n"
	"    me = _thread.get_ident()\n"
	"    d['__getattr__'] = _ga\n"
	"    _quiet.add(me)\n"
	"    try:\n"
	"        return m._snapshot()\n"
	"    finally:\n"
	"        _quiet.discard(me)\n"
	"        if d.get('__getattr__') is _ga:\n"
	"            d['__getattr__'] = ga\n"
	"def read():\n"
	"    try:\n"
	"        t = _torch()\n"
	"        if t is None:\n"
	"            return None\n"
	"        m = t.cuda.memory\n"
	"        if not _st['on']:\n"
	"            _st['on'] = True\n"
	"            try:\n"
	"                m._record_memory_history(enabled='state', context='alloc', stacks='python')\n"
	"            except TypeError:\n"
	"                m._record_memory_history(True)\n"
	"        out = []\n"
	"        old, new = _st.get('cache', {}), {}\n"
	"        for seg in _snap(t, m).get('segments', ()):\n"
	"            base = seg.get('address', 0)\n"
	"            a = base\n"
	"            for b in seg.get('blocks', ()):\n"
	"                sz = b.get('size', 0)\n"
	"                if b.get('state') == 'active_allocated':\n"
	"                    key = (b.get('address', a), b.get('requested_size', sz), sz, base)\n"
	"                    p = old.get(key)\n"
	"                    if p is None:\n"
	"                        p = _rec(3, -1, key[0], min(key[1], sz), sz, base, _frame(b.get('frames')))\n"
	"                    new[key] = p\n"
	"                    out.append(p)\n"
	"                a += sz\n"
	"        _st['cache'] = new\n"
	"        return b''.join(out)\n"
	"    except Exception as e:\n"
	"        return 'reading the caching allocator failed: %s: %s' % (type(e).__name__, e)\n"
	"def _round(n):\n"
	"    return 512 if n < 512 else (n + 511) // 512 * 512\n"
	"def _seg(segs, addr):\n"
	"    i = bisect.bisect_right(segs, (addr, 1 << 64)) - 1\n"
	"    if i >= 0 and segs[i][0] <= addr < segs[i][0] + segs[i][1]:\n"
	"        return segs[i][0]\n"
	"    return 0\n"
	"def _history(m, clear):\n"
	"    ctx = None if os.environ.get('GPUREDUCE_TENSORS_STACKS') == '0' else 'alloc'\n"
	"    kw = dict(enabled='all', context=ctx, stacks='python', max_entries=MAXE)\n"
	"    if clear:\n"
	"        try:\n"
	"            return m._record_memory_history(clear_history=True, **kw)\n"
	"        except TypeError:\n"
	"            m._record_memory_history(enabled=None)\n"
	"    m._record_memory_history(**kw)\n"
	"def begin(seq, cb):\n"
	"    global setm\n"
	"    try:\n"
	"        t = _torch()\n"
	"        if t is None:\n"
	"            return None\n"
	"        m = t.cuda.memory\n"
	"        mode = os.environ.get('GPUREDUCE_TENSORS_MODE', '')\n"
	"        sm = getattr(m, '_set_memory_metadata', None)\n"
	"        if mode == 'snapshot' or (sm is None and mode != 'events'):\n"
	"            r = read()\n"
	"            return b'S' + r if isinstance(r, bytes) else r\n"
	"        if sm is None:\n"
	"            return 'GPUREDUCE_TENSORS_MODE=events: this torch has no torch.cuda.memory._set_memory_metadata'\n"
	"        _st['m'], _st['t'] = m, t\n"
	"        setm = getattr(getattr(t, '_C', None), '_cuda_setMemoryMetadata', None) or sm\n"
	"        _history(m, False)\n"
	"        import atexit\n"
	"        atexit.register(cb)\n"
	"        r = fetch(seq, True)\n"
	"        return b'E' + r if isinstance(r, bytes) else r\n"
	"    except Exception as e:\n"
	"        return 'turning on the allocator history failed: %s: %s' % (type(e).__name__, e)\n"
	"def fetch(seq, first=False):\n"
	"    try:\n"
	"        t0 = _ns()\n"
	"        m = _st['m']\n"
	"        setm(_MARK)\n"
	"        s = _snap(_st['t'], m)\n"
	"        if seq >= 0:\n"
	"            setm(str(seq))\n"
	"        _history(m, True)\n"
	"        t1 = _ns()\n"
	"        out, live, segs = [], [], []\n"
	"        old, new = _st.get('live', {}), {}\n"
	"        for seg in s.get('segments', ()):\n"
	"            base = seg.get('address', 0)\n"
	"            segs.append((base, seg.get('total_size', 0)))\n"
	"            a = base\n"
	"            for b in seg.get('blocks', ()):\n"
	"                sz = b.get('size', 0)\n"
	"                if b.get('state') in _LIVE:\n"
	"                    key = (b.get('address', a), b.get('requested_size', sz), sz, base)\n"
	"                    p = old.get(key)\n"
	"                    if p is None:\n"
	"                        p = _rec(3, -1, key[0], min(key[1], sz), sz, base, _frame(b.get('frames')))\n"
	"                    new[key] = p\n"
	"                    live.append(p)\n"
	"                a += sz\n"
	"        _st['live'] = new\n"
	"        dbg = os.environ.get('GPUREDUCE_TENSORS_DEBUG')\n"
	"        if dbg:\n"
	"            with open(dbg, 'a') as f:\n"
	"                f.write('fetch %d first=%d\\n' % (seq, first))\n"
	"                for tr in s.get('device_traces', ()):\n"
	"                    for e in tr:\n"
	"                        f.write('%s %s 0x%x %d %d\\n' % (e.get('action'), e.get('user_metadata'), e.get('addr', 0), e.get('size', 0), e.get('time_us', 0)))\n"
	"        for tr in (() if first else s.get('device_traces', ())):\n"
	"            end = len(tr)\n"
	"            for k in range(len(tr) - 1, -1, -1):\n"
	"                if tr[k].get('action') == 'snapshot' and tr[k].get('user_metadata') == _MARK:\n"
	"                    end = k\n"
	"                    break\n"
	"            evs = []\n"
	"            for k in range(end):\n"
	"                e = tr[k]\n"
	"                a = e.get('action')\n"
	"                if a == 'alloc' or a == 'free_completed':\n"
	"                    evs.append(e)\n"
	"                elif a == 'segment_alloc' or a == 'segment_map':\n"
	"                    segs.append((e.get('addr', 0), e.get('size', 0)))\n"
	"            segs.sort()\n"
	"            tags = {}\n"
	"            for e in evs:\n"
	"                md = e.get('user_metadata') or ''\n"
	"                tag = tags.get(md)\n"
	"                if tag is None:\n"
	"                    tag = tags[md] = int(md) if md.isdigit() else -1\n"
	"                ad = e.get('addr', 0)\n"
	"                tm = int(e.get('time_us', 0) or 0)\n"
	"                if e.get('action') == 'alloc':\n"
	"                    sz = e.get('size', 0)\n"
	"                    out.append(_pk('<IqqQQQQ', 1, tag, tm, ad, sz, _round(sz), _seg(segs, ad)) + _tail(_frame(e.get('frames'))))\n"
	"                else:\n"
	"                    out.append(_pk('<IqqQQQQIII', 2, tag, tm, ad, 0, 0, 0, 0, 0, 0))\n"
	"        out.extend(live)\n"
	"        r = b''.join(out)\n"
	"        return _pk('<QQ', t1 - t0, _ns() - t1) + r\n"
	"    except Exception as e:\n"
	"        return 'fetching the allocator history failed: %s: %s' % (type(e).__name__, e)\n";

struct tm_block {
	uint32_t kind;           /* 1 alloc, 2 free, 3 live at the reading */
	int64_t tag;             /* kind 1, 2: the launch seq it carried, -1 none */
	int64_t time_us;         /* kind 1, 2: when (torch's clock, us since the epoch; 0 unknown) */
	uint64_t target;         /* kind 1, 2: the launch it applies before (assign_targets) */
	uint64_t addr, size, alloc_size, segment;
	uint32_t line;
	char *file, *func;       /* file points into the reading's bytes */
};

struct cap_tm_reading {
	struct strbuf raw;       /* the packed bytes (strings point into it) */
	struct tm_block *b;
	size_t n;
	int fetched;             /* events mode: the records of a fetch */
	uint64_t ns;             /* its time (profile) */
	uint64_t torch_ns, py_ns;/* a fetch's: in torch's calls, in the reader's Python */
	char error[300];
};

/* A block of the events model (g_model). */
struct mblk {
	uint64_t addr, size, alloc_size, segment;
	uint32_t line;
	char *file, *func;
};

/*
 * Placing events (with the GIL).  Torch keeps the allocator's metadata per
 * thread (a thread_local string in DeviceCachingAllocator): an event
 * carries the seq of the last launch *its own thread* entered.  For the
 * thread that launches that is exact; a thread that made no launch for a
 * while carries an old one: the main thread's first allocations after
 * backward() returns (the optimizer's) carry the seq of its last forward
 * launch, hundreds of launches before, and placed there they took the
 * place of tensors the backward launches still used (the false findings of
 * docs/hunt.md).  So an event applies before the first launch that is
 *   - after the launch its tag names (it happened after that entry),
 *   - not before the previous event's (the history is in the order the
 *     events happened, under the allocator's mutex),
 *   - after every launch entered before the event's time: each entry's
 *     time is kept (CLOCK_REALTIME, the clock torch converts its event
 *     times to; us since the epoch), less a slack of
 *     GPUREDUCE_TENSORS_SLACK_US (2): an event within the slack after an
 *     entry goes before that launch, a launch early at most.
 * Times are used once CLOCK_MIN_CHECKS events agreed with the entries
 * (a fetch's events are checked before any is placed).  If the clocks
 * disagree (more than 5% of the events earlier than the entry of the
 * launch their tag names, or more than half later than the next launch's
 * entry), times are not used from then on, and a NOTE says so.
 */
struct lentry {
	uint64_t seq;
	int64_t ns;
};
static struct lentry *g_lt;      /* entries since the last fetch, in order */
static size_t g_nlt, g_alt;
static uint64_t g_run;           /* the last event's target */
static int64_t g_slack_ns = 2000;
static int g_clock_bad;          /* 1: times off; 2: and noted */
enum { CLOCK_MIN_CHECKS = 3 };   /* events checked before times are used */
static unsigned long g_clock_checks, g_clock_late, g_clock_ahead;
static FILE *g_dbg;              /* GPUREDUCE_TENSORS_DEBUG: the entries too */

static int64_t realtime_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void note_entry(uint64_t seq)
{
	ALLOC_GROW(g_lt, g_nlt + 1, g_alt);
	g_lt[g_nlt].seq = seq;
	g_lt[g_nlt].ns = realtime_ns();
	if (g_dbg) {
		fprintf(g_dbg, "launch %llu %lld\n", (unsigned long long)seq, (long long)g_lt[g_nlt].ns);
		fflush(g_dbg);
	}
	g_nlt++;
}

/* 1 + the last launch entered at least the slack before t_ns (0: none). */
static uint64_t time_target(int64_t t_ns)
{
	size_t lo = 0, hi = g_nlt;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (g_lt[mid].ns <= t_ns - g_slack_ns)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? g_lt[lo - 1].seq + 1 : 0;
}

/* The event tagged `tag` came after that launch's entry and, unless its
 * thread's tag was old, before the next one's: count the events that
 * do not (a clock too early) and those after the next entry (too late;
 * old tags are few: 103 of 11636 events on the host-fed loop). */
static void clock_check(int64_t tag, int64_t t_ns)
{
	size_t lo = 0, hi = g_nlt;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if ((int64_t)g_lt[mid].seq < tag)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo >= g_nlt || (int64_t)g_lt[lo].seq != tag)
		return;
	g_clock_checks++;
	/* (torch's times are whole microseconds, rounded down) */
	if (t_ns + 1000 + g_slack_ns < g_lt[lo].ns)
		g_clock_late++;
	if (lo + 1 < g_nlt && t_ns - g_slack_ns > g_lt[lo + 1].ns)
		g_clock_ahead++;
	if (!g_clock_bad && g_clock_checks >= CLOCK_MIN_CHECKS &&
	    (g_clock_late * 20 > g_clock_checks || g_clock_ahead * 2 > g_clock_checks))
		g_clock_bad = 1;
}

/* Each event's target (above); seq: the launch being entered, or the next
 * one when none is (exit, fault).  Then the entries before seq go. */
static void assign_targets(struct cap_tm_reading *rd, uint64_t seq)
{
	int times;
	/* the clock is judged on the whole reading first: times place
	 * nothing before CLOCK_MIN_CHECKS events said they can */
	for (size_t i = 0; i < rd->n; i++)
		if (rd->b[i].kind != 3 && rd->b[i].time_us > 0 && rd->b[i].tag >= 0)
			clock_check(rd->b[i].tag, rd->b[i].time_us * 1000);
	times = !g_clock_bad && g_clock_checks >= CLOCK_MIN_CHECKS;
	for (size_t i = 0; i < rd->n; i++) {
		struct tm_block *b = &rd->b[i];
		uint64_t t = g_run;
		if (b->kind == 3)
			continue;
		if (b->tag >= 0 && (uint64_t)b->tag + 1 > t)
			t = (uint64_t)b->tag + 1;
		if (times && b->time_us > 0) {
			uint64_t tt = time_target(b->time_us * 1000);
			if (tt > t)
				t = tt;
		}
		b->target = t > seq ? seq : t;
		g_run = b->target;
	}
	{
		size_t k = 0;
		for (size_t i = 0; i < g_nlt; i++)
			if (g_lt[i].seq >= seq)
				g_lt[k++] = g_lt[i];
		g_nlt = k;
	}
}

void cap_tm_init(void)
{
	const char *s = getenv("GPUREDUCE_TENSORS");
	g_on = s && !strcmp(s, "1");
	s = getenv("GPUREDUCE_TENSORS_FETCH");
	if (s && strtoul(s, NULL, 10) > 0)
		g_every = strtoul(s, NULL, 10);
	s = getenv("GPUREDUCE_TENSORS_SLACK_US");
	if (s && *s)
		g_slack_ns = (int64_t)strtol(s, NULL, 10) * 1000;
	s = getenv("GPUREDUCE_TENSORS_DEBUG");
	if (g_on && s && *s)
		g_dbg = fopen(s, "a");
}

int cap_tm_enabled(void)
{
	return g_on;
}

/* With the GIL: compile the helpers once. */
static PyObject *helpers(void)
{
	if (g_ns || g_broken)
		return g_ns;
	g_ns = cap_py_module(reader_src, "<gpureduce --tensors>");   /* kept forever */
	g_broken = !g_ns;
	if (g_broken)
		snprintf(g_error, sizeof(g_error), "the allocator reader did not compile in this Python");
	return g_ns;
}

/* Unpack the helpers' bytes; 0, or -1 when malformed. */
static int unpack(struct cap_tm_reading *rd, size_t pos)
{
	size_t len = rd->raw.len;
	const char *p = rd->raw.buf;
	while (pos < len) {
		struct tm_block b;
		uint32_t fl, nl;
		if (len - pos < 60)
			return -1;
		memcpy(&b.kind, p + pos, 4);
		memcpy(&b.tag, p + pos + 4, 8);
		memcpy(&b.time_us, p + pos + 12, 8);
		b.target = 0;
		pos += 20;
		memcpy(&b.addr, p + pos, 8);
		memcpy(&b.size, p + pos + 8, 8);
		memcpy(&b.alloc_size, p + pos + 16, 8);
		memcpy(&b.segment, p + pos + 24, 8);
		memcpy(&b.line, p + pos + 32, 4);
		memcpy(&fl, p + pos + 36, 4);
		pos += 40;
		if (len - pos < (size_t)fl + 4)
			return -1;
		b.file = (char *)p + pos;
		pos += fl;
		memcpy(&nl, p + pos, 4);
		/* the file's end becomes its NUL once the length is read */
		((char *)p)[pos] = 0;
		pos += 4;
		if (len - pos < nl)
			return -1;
		b.func = xmalloc(nl + 1);
		memcpy(b.func, p + pos, nl);
		b.func[nl] = 0;
		pos += nl;
		rd->b = xrealloc(rd->b, (rd->n + 1) * sizeof(*rd->b));
		rd->b[rd->n++] = b;
	}
	return 0;
}

void cap_tm_free(struct cap_tm_reading *rd)
{
	if (!rd)
		return;
	for (size_t i = 0; i < rd->n; i++)
		free(rd->b[i].func);
	free(rd->b);
	sb_release(&rd->raw);
	free(rd);
}

/* With the GIL: turn a helper's result into a reading (NULL: None, torch
 * not ready).  skip: leading bytes that are not records. */
static struct cap_tm_reading *take(PyObject *res, size_t skip)
{
	struct cap_tm_reading *rd;
	char *buf;
	long n;
	const char *s;

	if (!res) {
		cap_py.ErrClear();
		return NULL;
	}
	rd = xcalloc(1, sizeof(*rd));
	if (cap_py.BytesAsStringAndSize(res, &buf, &n) == 0) {
		sb_add(&rd->raw, buf, (size_t)n);
		sb_addch(&rd->raw, 0);   /* room for unpack's last NUL */
		sb_setlen(&rd->raw, (size_t)n);
		if ((size_t)n < skip || unpack(rd, skip) < 0)
			snprintf(rd->error, sizeof(rd->error), "the allocator reader returned malformed bytes");
		return rd;
	}
	cap_py.ErrClear();
	s = cap_py.AsUTF8 ? cap_py.AsUTF8(res) : NULL;   /* a str: the error; None: not ready */
	cap_py.ErrClear();
	if (s) {
		snprintf(rd->error, sizeof(rd->error), "%s", s);
		return rd;
	}
	cap_tm_free(rd);
	return NULL;
}

/* take() for fetch()'s result: its first 16 bytes are two u64, the
 * nanoseconds the fetch spent in torch's calls and in its own Python. */
static struct cap_tm_reading *take_fetch(PyObject *res, size_t skip)
{
	struct cap_tm_reading *rd = take(res, skip + 16);
	if (rd && !rd->error[0] && rd->raw.len >= skip + 16) {
		memcpy(&rd->torch_ns, rd->raw.buf + skip, 8);
		memcpy(&rd->py_ns, rd->raw.buf + skip + 8, 8);
	}
	return rd;
}

/* A fetch's time in the profile: the whole in `slot`, and its parts. */
static void prof_fetch(enum cap_prof_slot slot, const struct cap_tm_reading *rd, uint64_t ns)
{
	if (!cap_prof_on)
		return;
	cap_prof_put(slot, ns);
	cap_prof_put(CP_TM_TORCH, rd->torch_ns);
	cap_prof_put(CP_TM_PY, rd->py_ns);
}

/* atexit (Python's, registered by begin()): the events since the last
 * fetch, written under inject.c's lock before the END record. */
static void exit_write(struct trace_writer *w, uint64_t seq, void *arg);
static PyObject *at_exit(PyObject *self, PyObject *unused)
{
	struct cap_tm_reading *rd = NULL;
	PyObject *res;
	uint64_t t0 = cap_prof_now_ns();
	(void)self;
	(void)unused;
	if (!__atomic_load_n(&g_on, __ATOMIC_RELAXED))   /* a failed reading stopped --tensors */
		goto out;
	res = g_fetch ? cap_py.CallFunction(g_fetch, "(i)", -1) : NULL;
	rd = take_fetch(res, 0);
	if (res)
		cap_py.DecRef(res);
	if (rd) {
		assign_targets(rd, cap_launch_seq());
		rd->fetched = 1;
		rd->ns = cap_prof_now_ns() - t0;
		prof_fetch(CP_TM_FETCH_END, rd, rd->ns);
		cap_locked_write(exit_write, rd, 0);   /* frees rd */
	}
out:
	cap_py.IncRef(cap_py.None);
	return cap_py.None;
}

static struct cap_py_method g_exit_def = { "gpureduce_tensors_exit", at_exit, 0x0004 /* METH_NOARGS */, NULL };

/* 1 for the driver calls torch's allocator makes while it holds its mutex
 * (which _snapshot() takes: another thread waiting for it with the GIL
 * would never let go). */
static int allocator_api(const char *api)
{
	static const char *const pre[] = { "cuMemAlloc", "cuMemFree", "cuMemCreate", "cuMemMap", "cuMemUnmap",
					   "cuMemRelease", "cuMemAddress", "cuMemSetAccess", "cuMemPool",
					   "cuMemGetInfo", "cuMemHostAlloc", "cuMemHostRegister", NULL };
	for (int i = 0; api && pre[i]; i++)
		if (!strncmp(api, pre[i], strlen(pre[i])))
			return 1;
	return !api;
}

void cap_tm_after_fault(const char *api)
{
	struct cap_tm_reading *rd;
	PyObject *res;
	uint64_t t0;
	int gil;

	if (!__atomic_load_n(&g_on, __ATOMIC_RELAXED) || g_mode != TM_EVENTS || !g_fetch ||
	    allocator_api(api) || !cap_py_ready())
		return;
	gil = cap_py.Ensure();
	t0 = cap_prof_now_ns();
	res = cap_py.CallFunction(g_fetch, "(i)", -1);
	rd = take_fetch(res, 0);
	if (res)
		cap_py.DecRef(res);
	if (rd)
		assign_targets(rd, cap_launch_seq());
	cap_py.Release(gil);
	if (!rd)
		return;
	prof_fetch(CP_TM_FETCH_END, rd, cap_prof_now_ns() - t0);
	rd->fetched = 1;
	cap_locked_write(exit_write, rd, 1);   /* frees rd */
}

/* With the GIL, events mode: this launch's seq becomes the allocator's
 * metadata (every allocation and free until the next launch carries it). */
static void set_tag(uint64_t seq)
{
	char buf[24];
	PyObject *res;
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)seq);
	res = cap_py.CallFunction(g_setm, "(s)", buf);
	if (res)
		cap_py.DecRef(res);
	else
		cap_py.ErrClear();
}

struct cap_tm_reading *cap_tm_read(void)
{
	struct cap_tm_reading *rd = NULL;
	PyObject *ns, *res = NULL, *cb;
	uint64_t seq, t0;
	size_t skip = 0;
	char *b;
	long n;
	int gil;

	if (!g_on)
		return NULL;
	if (!cap_py_ready() || !cap_py.AsUTF8)
		return NULL;
	gil = cap_py.Ensure();
	seq = cap_launch_seq();   /* the seq this launch gets (one launching thread at a time) */
	t0 = cap_prof_now_ns();
	ns = helpers();
	if (!ns)
		goto out;
	if (g_mode == TM_UNDECIDED) {
		cb = cap_py.CFunctionNewEx ? cap_py.CFunctionNewEx(&g_exit_def, NULL, NULL) : NULL;
		if (!cb) {
			cap_py.ErrClear();
			snprintf(g_error, sizeof(g_error), "this Python has no PyCFunction_NewEx");
			g_broken = 1;
			goto out;
		}
		res = cap_py.CallFunction(cap_py.DictGetItemString(ns, "begin"), "(KO)",
					  (unsigned long long)seq, cb);
		cap_py.DecRef(cb);
		if (res && cap_py.BytesAsStringAndSize(res, &b, &n) == 0) {
			g_mode = n > 0 && b[0] == 'E' ? TM_EVENTS : TM_SNAPSHOT;
			skip = 1;
			if (g_mode == TM_EVENTS) {
				g_setm = cap_py.DictGetItemString(ns, "setm");
				g_fetch = cap_py.DictGetItemString(ns, "fetch");
				g_since = 0;
				note_entry(seq);
			}
		}
		cap_py.ErrClear();
	} else if (g_mode == TM_SNAPSHOT) {
		res = cap_py.CallObject(cap_py.DictGetItemString(ns, "read"), NULL);
	} else {
		note_entry(seq);
		if (++g_since < g_every && !__atomic_exchange_n(&g_need_fetch, 0, __ATOMIC_ACQ_REL)) {
			set_tag(seq);   /* the per-launch cost of the events mode */
			goto out;
		}
		g_since = 0;
		res = cap_py.CallFunction(g_fetch, "(K)", (unsigned long long)seq);
		skip = 0;
	}
	rd = g_mode == TM_EVENTS ? take_fetch(res, skip) : take(res, skip);
	if (rd && g_mode == TM_EVENTS) {
		assign_targets(rd, seq);
		rd->fetched = 1;
		rd->ns = cap_prof_now_ns() - t0;
		prof_fetch(CP_TM_FETCH, rd, rd->ns);
	}
	if (res)
		cap_py.DecRef(res);
out:
	cap_py.Release(gil);
	if (!rd && g_error[0]) {
		rd = xcalloc(1, sizeof(*rd));
		snprintf(rd->error, sizeof(rd->error), "%s", g_error);
		g_error[0] = 0;
	}
	return rd;
}

void cap_tm_forget(void)
{
	g_forget = 1;
}

static long put_block(struct trace_writer *w, const struct mblk *b, uint32_t flags)
{
	return tw_record(w, &(struct tr_rec){ .type = TR_BLOCK_ALLOC, .u.block = {
		.addr = b->addr, .size = b->size, .alloc_size = b->alloc_size, .segment = b->segment,
		.source = TR_BLK_TORCH, .flags = flags, .file = b->file, .func = b->func, .line = b->line } });
}

static long put_free(struct trace_writer *w, uint64_t addr)
{
	return tw_record(w, &(struct tr_rec){ .type = TR_BLOCK_FREE,
					      .u.block_free = { .addr = addr, .source = TR_BLK_TORCH } });
}

static long put_batch(struct trace_writer *w, uint64_t seq, uint64_t known)
{
	return tw_record(w, &(struct tr_rec){ .type = TR_BLOCK_BATCH,
					      .u.block_batch = { .seq = seq, .known = known } });
}

static struct mblk *model_get(uint64_t addr)
{
	struct cap_map_ent *e = cap_map_get(&g_model, addr);
	return e ? (struct mblk *)(uintptr_t)e->v1 : NULL;
}

static void mblk_free(struct mblk *m)
{
	if (!m)
		return;
	free(m->file);
	free(m->func);
	free(m);
}

static void model_del(uint64_t addr)
{
	uint64_t v1 = 0;
	if (cap_map_del(&g_model, addr, &v1, NULL))
		mblk_free((struct mblk *)(uintptr_t)v1);
}

static void model_put(const struct tm_block *b)
{
	struct mblk *m;
	if (!b->addr)
		return;
	m = xcalloc(1, sizeof(*m));
	m->addr = b->addr;
	m->size = b->size;
	m->alloc_size = b->alloc_size;
	m->segment = b->segment;
	m->line = b->line;
	m->file = xstrdup(b->file);
	m->func = xstrdup(b->func);
	model_del(b->addr);
	cap_map_put(&g_model, b->addr, (uint64_t)(uintptr_t)m, 0);
}

static void model_clear(void)
{
	for (size_t s = 0; s < g_model.cap; s++)
		if (g_model.slot[s].key)
			mblk_free((struct mblk *)(uintptr_t)g_model.slot[s].v1);
	cap_map_clear(&g_model);
}

/* Write what changed at these addresses between g_live (as written) and
 * g_model: the BLOCK_FREEs, then the BLOCK_ALLOCs, each in address order
 * (a block that changed size is both).  Sorts and may reorder a. */
static void write_diff(struct trace_writer *w, uint64_t *a, size_t n, uint32_t flags)
{
	qsort(a, n, sizeof(*a), u64_cmp);
	for (size_t i = 0; i < n; i++) {
		struct cap_map_ent *e;
		struct mblk *m;
		if (!a[i] || (i && a[i] == a[i - 1]))
			continue;
		e = cap_map_get(&g_live, a[i]);
		m = model_get(a[i]);
		if (e && (!m || m->size != e->v1 || m->alloc_size != e->v2)) {
			put_free(w, a[i]);
			cap_map_del(&g_live, a[i], NULL, NULL);
		}
	}
	for (size_t i = 0; i < n; i++) {
		struct mblk *m;
		if (!a[i] || (i && a[i] == a[i - 1]) || cap_map_get(&g_live, a[i]))
			continue;
		m = model_get(a[i]);
		if (m) {
			put_block(w, m, flags);
			cap_map_put(&g_live, a[i], m->size, m->alloc_size);
		}
	}
}

/* Every address of a map, appended to *a (n, cap). */
static void keys_of(const struct cap_map *m, uint64_t **a, size_t *n, size_t *cap)
{
	for (size_t s = 0; s < m->cap; s++)
		if (m->slot[s].key) {
			ALLOC_GROW(*a, *n + 1, *cap);
			(*a)[(*n)++] = m->slot[s].key;
		}
}

/* Every block of the model, flagged INITIAL (g_live starts again). */
static void write_initial(struct trace_writer *w)
{
	uint64_t *a = NULL;
	size_t n = 0, cap = 0;
	cap_map_clear(&g_live);
	keys_of(&g_model, &a, &n, &cap);
	write_diff(w, a, n, TR_BLK_F_INITIAL);
	free(a);
}

/* Snapshot mode: the reading is the allocator's state at this launch. */
static void snapshot_write(struct trace_writer *w, struct cap_tm_reading *rd)
{
	uint64_t *a = NULL;
	size_t n = 0, cap = 0;
	uint32_t flags = g_forget ? TR_BLK_F_INITIAL : 0;

	if (g_forget) {
		cap_map_clear(&g_live);
		g_forget = 0;
	}
	model_clear();
	for (size_t i = 0; i < rd->n; i++)
		if (rd->b[i].addr && rd->b[i].kind == 3)
			model_put(&rd->b[i]);
	keys_of(&g_live, &a, &n, &cap);
	keys_of(&g_model, &a, &n, &cap);
	write_diff(w, a, n, flags);
	free(a);
}

/* The launch an event applies before (assign_targets), never past `seq`,
 * the launch being entered. */
static uint64_t event_target(const struct tm_block *b, uint64_t seq)
{
	return b->target > seq ? seq : b->target;
}

/* Events mode, lock held: the records of a fetch made at the entry of
 * launch `seq` (before its LAUNCH record).  An event tagged k happened
 * after launch k's entry: it applies before launch k+1, written behind a
 * BLOCK_BATCH naming k+1 when that launch is already in the file. */
static void events_apply(struct trace_writer *w, struct cap_tm_reading *rd, uint64_t seq)
{
	uint64_t known = seq + 1, *a = NULL, *fin = NULL;
	size_t i = 0, na = 0, ca = 0, nf = 0, cf = 0;
	unsigned long fixed = 0;

	while (i < rd->n && rd->b[i].kind != 3) {
		uint64_t target = event_target(&rd->b[i], seq);
		size_t j;
		if (g_initial_pending && target > g_initial_at) {
			put_batch(w, g_initial_at, known);
			write_initial(w);
			g_initial_pending = 0;
		}
		na = 0;
		for (j = i; j < rd->n && rd->b[j].kind != 3 && event_target(&rd->b[j], seq) == target; j++) {
			const struct tm_block *b = &rd->b[j];
			if (b->kind == 1)
				model_put(b);
			else
				model_del(b->addr);
			ALLOC_GROW(a, na + 1, ca);
			a[na++] = b->addr;
		}
		i = j;
		if (g_initial_pending)
			continue;   /* before a checkpoint's window: the model only */
		if (target < seq) {
			put_batch(w, target, known);
			write_diff(w, a, na, 0);
		} else {
			for (size_t k = 0; k < na; k++) {
				ALLOC_GROW(fin, nf + 1, cf);
				fin[nf++] = a[k];
			}
		}
	}
	/* the allocator's state at this reading: what the events missed */
	{
		struct cap_map truth = CAP_MAP_INIT;
		for (size_t k = i; k < rd->n; k++) {
			const struct tm_block *b = &rd->b[k];
			struct mblk *m = model_get(b->addr);
			if (!b->addr)
				continue;
			cap_map_put(&truth, b->addr, 1, 0);
			if (!m || m->size != b->size) {
				model_put(b);
				fixed++;
				ALLOC_GROW(fin, nf + 1, cf);
				fin[nf++] = b->addr;
			}
		}
		if (i < rd->n || rd->fetched) {
			uint64_t *gone = NULL;
			size_t ng = 0, cg = 0;
			keys_of(&g_model, &gone, &ng, &cg);
			for (size_t k = 0; k < ng; k++)
				if (!cap_map_get(&truth, gone[k])) {
					model_del(gone[k]);
					fixed++;
					ALLOC_GROW(fin, nf + 1, cf);
					fin[nf++] = gone[k];
				}
			free(gone);
		}
		cap_map_release(&truth);
	}
	if (g_initial_pending) {
		/* (at exit, blocks before no launch are not written) */
		if (!g_exiting || g_initial_at != seq) {
			put_batch(w, g_initial_at, known);
			write_initial(w);
		}
		g_initial_pending = 0;
		if (g_initial_at != seq)
			put_batch(w, seq, known);
	} else {
		put_batch(w, seq, known);
		if (!g_exiting)
			write_diff(w, fin, nf, 0);
		if (g_clock_bad == 1) {
			g_clock_bad = 2;
			cap_note("--tensors: torch's allocator history gave times that do not agree with the "
				 "capture's clock (of %lu events, %lu before the launch they follow, %lu after "
				 "the next one); events are placed by their tags alone from launch %llu on, and an "
				 "allocation made by a thread that launched nothing for a while may be placed too "
				 "early", g_clock_checks, g_clock_late, g_clock_ahead, (unsigned long long)seq);
		}
		if (fixed && !g_fixed)
			cap_note("--tensors: the allocator's history missed %lu block changes that its state "
				 "showed at launch %llu (allocations by another thread while it was fetched, or "
				 "more than its ring holds); they are written there", fixed,
				 (unsigned long long)seq);
		g_fixed += fixed;
	}
	free(a);
	free(fin);
}

static void events_write(struct trace_writer *w, struct cap_tm_reading *rd, uint64_t seq)
{
	if (g_forget) {
		/* a checkpoint: every live block again, INITIAL, before `seq`;
		 * the model needs every event up to it: the next fetch */
		g_forget = 0;
		g_initial_pending = 1;
		g_initial_at = seq;
	}
	if (rd && rd->fetched)
		events_apply(w, rd, seq);
	else if (g_initial_pending)
		__atomic_store_n(&g_need_fetch, 1, __ATOMIC_RELEASE);
}

static void exit_write(struct trace_writer *w, uint64_t seq, void *arg)
{
	struct cap_tm_reading *rd = arg;
	g_exiting = 1;
	if (w && !rd->error[0])
		events_write(w, rd, seq);
	cap_tm_free(rd);
}

void cap_tm_write(struct trace_writer *w, struct cap_tm_reading *rd)
{
	if (rd && rd->error[0]) {
		if (!g_noted++)
			cap_note("--tensors: %s; " TR_NOTE_TENSORS_OFF, rd->error);
		g_on = 0;
		goto out;
	}
	if (g_mode == TM_EVENTS)
		events_write(w, rd, cap_launch_seq());
	else if (rd)
		snapshot_write(w, rd);
out:
	cap_tm_free(rd);
}
