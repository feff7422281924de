/*
 * torchmem.c - `capture --tensors` (GPUREDUCE_TENSORS=1): the blocks of
 * PyTorch's CUDA caching allocator (one per tensor storage) inside the
 * cudaMalloc segments the trace records, written as BLOCK_ALLOC /
 * BLOCK_FREE records (docs/FORMAT.md, 1.3) so that `shrink --root-cause`
 * can put a guard after every tensor.
 *
 * How: at the entry of every launch, on the launching thread and outside
 * inject.c's lock, take the GIL (PyGILState_Ensure) and call a small Python
 * function (compiled once into a private namespace) that asks torch for
 * the allocator's state (torch.cuda.memory._snapshot(): segments and their
 * blocks, with requested sizes) and packs the live blocks into bytes.  The
 * first call turns on torch's allocation history in its cheapest mode
 * (enabled='state': the Python frames of live blocks, no event ring) so
 * later blocks carry the line that allocated them.  Then, under the lock
 * and right before the LAUNCH record, what changed since the previous
 * reading is written.  A block is thus live for exactly the launches
 * between its BLOCK_ALLOC and BLOCK_FREE.
 *
 * Why there: torch releases the GIL around kernel launches (and the
 * pybind11 ops of extensions hold it: PyGILState_Ensure is fine either
 * way), and a launch is never made inside the allocator's mutex, which
 * _snapshot() takes: inside a cuMemAlloc callback it would deadlock.
 * Launches of other threads (autograd's) read the same way.  Nothing is
 * read while the interpreter is not initialised or is finalising, nor
 * before torch is imported and its CUDA state initialised.
 *
 * Cost: one GIL round trip and a walk over every block per launch (off by
 * default).  CuPy's memory pool is not read (TR_BLK_CUPY is reserved).
 * The CPython API comes from pyembed.c (resolved with dlsym): the library
 * never links libpython.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/strbuf.h"
#include "../common/util.h"
#include "capture.h"
#include "pyembed.h"


static int g_on;                 /* GPUREDUCE_TENSORS=1 */
static PyObject *g_fn;           /* the reader (a Python function), once compiled */
static int g_broken;             /* compiling failed: do not try again */
static char g_error[300];        /* the reader's last error, for one note */
static int g_noted;
/* under inject.c's lock: the live blocks as last written (addr -> size, alloc_size) */
static struct cap_map g_live = CAP_MAP_INIT;
static int g_forget = 1;         /* next write: every block again, INITIAL */

/* The reader.  Returns None (torch not ready), bytes (the live blocks) or
 * str (an error).  Per block: <QQQQII addr requested size segment line
 * len(file)>, file, <I len(func)>, func. */
static const char reader_src[] =
	"import sys, struct\n"
	"_st = {'on': False}\n"
	"def _frame(frames):\n"
	"    for f in frames or ():\n"
	"        fn = f.get('filename') or ''\n"
	"        if '/torch/' not in fn and not fn.startswith('<'):\n"
	"            return f\n"
	"    return frames[0] if frames else {}\n"
	"def _enc(s):\n"
	"    b = str(s).encode('utf-8', 'replace')[:1000]\n"
	"    return b\n"
	"def read():\n"
	"    try:\n"
	"        t = sys.modules.get('torch')\n"
	"        if t is None or not hasattr(t, 'cuda') or not t.cuda.is_initialized():\n"
	"            return None\n"
	"        m = t.cuda.memory\n"
	"        if not _st['on']:\n"
	"            _st['on'] = True\n"
	"            try:\n"
	"                m._record_memory_history(enabled='state', context='alloc', stacks='python')\n"
	"            except TypeError:\n"
	"                m._record_memory_history(True)\n"
	"        out = []\n"
	"        pk = struct.pack\n"
	"        old, new = _st.get('cache', {}), {}\n"
	"        for seg in m._snapshot().get('segments', ()):\n"
	"            base = seg.get('address', 0)\n"
	"            a = base\n"
	"            for b in seg.get('blocks', ()):\n"
	"                sz = b.get('size', 0)\n"
	"                if b.get('state') == 'active_allocated':\n"
	"                    key = (b.get('address', a), b.get('requested_size', sz), sz, base)\n"
	"                    p = old.get(key)\n"
	"                    if p is None:\n"
	"                        f = _frame(b.get('frames'))\n"
	"                        fi = _enc(f.get('filename', ''))\n"
	"                        nm = _enc(f.get('name', ''))\n"
	"                        p = pk('<QQQQII', key[0], min(key[1], sz), sz, base,\n"
	"                               int(f.get('line', 0) or 0), len(fi)) + fi + pk('<I', len(nm)) + nm\n"
	"                    new[key] = p\n"
	"                    out.append(p)\n"
	"                a += sz\n"
	"        _st['cache'] = new\n"
	"        return b''.join(out)\n"
	"    except Exception as e:\n"
	"        return 'reading the caching allocator failed: %s: %s' % (type(e).__name__, e)\n";

struct tm_block {
	uint64_t addr, size, alloc_size, segment;
	uint32_t line;
	char *file, *func;       /* point into the reading's bytes */
};

struct cap_tm_reading {
	struct strbuf raw;       /* the packed bytes (strings point into it) */
	struct tm_block *b;
	size_t n;
	char error[300];
};

void cap_tm_init(void)
{
	const char *s = getenv("GPUREDUCE_TENSORS");
	g_on = s && !strcmp(s, "1");
}

int cap_tm_enabled(void)
{
	return g_on;
}

/* With the GIL: compile the reader once. */
static PyObject *reader(void)
{
	PyObject *ns;
	if (g_fn || g_broken)
		return g_fn;
	ns = cap_py_module(reader_src, "<gpureduce --tensors>");   /* kept forever */
	g_fn = ns ? cap_py.DictGetItemString(ns, "read") : NULL;  /* borrowed from ns */
	g_broken = !g_fn;
	if (g_broken)
		snprintf(g_error, sizeof(g_error), "the allocator reader did not compile in this Python");
	return g_fn;
}

/* Unpack the reader's bytes; 0, or -1 when malformed. */
static int unpack(struct cap_tm_reading *rd)
{
	size_t pos = 0, len = rd->raw.len;
	const char *p = rd->raw.buf;
	while (pos < len) {
		struct tm_block b;
		uint32_t fl, nl;
		if (len - pos < 40)
			return -1;
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

struct cap_tm_reading *cap_tm_read(void)
{
	struct cap_tm_reading *rd = NULL;
	PyObject *fn, *res;
	int gil;
	char *buf;
	long n;

	if (!g_on)
		return NULL;
	if (!cap_py_ready() || !cap_py.AsUTF8)
		return NULL;
	gil = cap_py.Ensure();
	fn = reader();
	res = fn ? cap_py.CallObject(fn, NULL) : NULL;
	if (!res) {
		cap_py.ErrClear();
		goto out;
	}
	rd = xcalloc(1, sizeof(*rd));
	if (cap_py.BytesAsStringAndSize(res, &buf, &n) == 0) {
		sb_add(&rd->raw, buf, (size_t)n);
		sb_addch(&rd->raw, 0);   /* room for unpack's last NUL */
		sb_setlen(&rd->raw, (size_t)n);
		if (unpack(rd) < 0)
			snprintf(rd->error, sizeof(rd->error), "the allocator reader returned malformed bytes");
	} else {
		const char *s;
		cap_py.ErrClear();
		s = cap_py.AsUTF8(res);   /* a str: the error; None: torch not ready */
		if (s)
			snprintf(rd->error, sizeof(rd->error), "%s", s);
		else
			cap_py.ErrClear();
		if (!s) {
			cap_tm_free(rd);
			rd = NULL;
		}
	}
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

static long put_block(struct trace_writer *w, const struct tm_block *b, uint32_t flags)
{
	struct tr_rec r;
	memset(&r, 0, sizeof(r));
	r.type = TR_BLOCK_ALLOC;
	r.u.block.addr = b->addr;
	r.u.block.size = b->size;
	r.u.block.alloc_size = b->alloc_size;
	r.u.block.segment = b->segment;
	r.u.block.source = TR_BLK_TORCH;
	r.u.block.flags = flags;
	r.u.block.file = b->file;
	r.u.block.func = b->func;
	r.u.block.line = b->line;
	return tw_record(w, &r);
}

static long put_free(struct trace_writer *w, uint64_t addr)
{
	struct tr_rec r;
	memset(&r, 0, sizeof(r));
	r.type = TR_BLOCK_FREE;
	r.u.block_free.addr = addr;
	r.u.block_free.source = TR_BLK_TORCH;
	return tw_record(w, &r);
}

void cap_tm_write(struct trace_writer *w, struct cap_tm_reading *rd)
{
	struct cap_map now = CAP_MAP_INIT;
	uint32_t flags;

	if (!rd)
		return;
	if (rd->error[0]) {
		if (!g_noted++)
			cap_note("--tensors: %s; tensor blocks are not recorded from here on", rd->error);
		goto out;
	}
	flags = g_forget ? TR_BLK_F_INITIAL : 0;
	if (g_forget) {
		cap_map_clear(&g_live);
		g_forget = 0;
	}
	for (size_t i = 0; i < rd->n; i++)
		if (rd->b[i].addr)
			cap_map_put(&now, rd->b[i].addr, rd->b[i].size, rd->b[i].alloc_size);
	/* gone, or changed size: freed */
	{
		uint64_t *gone = NULL;
		size_t ngone = 0;
		for (size_t s = 0; s < g_live.cap; s++) {
			struct cap_map_ent *e = &g_live.slot[s], *n;
			if (!e->key)
				continue;
			n = cap_map_get(&now, e->key);
			if (!n || n->v1 != e->v1 || n->v2 != e->v2) {
				gone = xrealloc(gone, (ngone + 1) * sizeof(*gone));
				gone[ngone++] = e->key;
			}
		}
		for (size_t k = 0; k < ngone; k++) {
			put_free(w, gone[k]);
			cap_map_del(&g_live, gone[k], NULL, NULL);
		}
		free(gone);
	}
	for (size_t i = 0; i < rd->n; i++) {
		const struct tm_block *b = &rd->b[i];
		if (!b->addr || cap_map_get(&g_live, b->addr))
			continue;
		put_block(w, b, flags);
		cap_map_put(&g_live, b->addr, b->size, b->alloc_size);
	}
out:
	cap_map_release(&now);
	cap_tm_free(rd);
}
