/*
 * rootcause.c - root-cause mode's trace transform (rootcause.h): every
 * allocator block recorded by `capture --tensors` becomes an allocation of
 * its own, so that guard placement (replay, repro.cu) puts a guard right
 * after each tensor instead of after each cudaMalloc segment.
 *
 * Two passes over the input: the first finds, for each BLOCK_ALLOC, the
 * live allocation (segment) it lies in; the second writes the new trace,
 * replacing those segments by their blocks and cutting copies and memsets
 * to the blocks live at that point.  The block lists come from the trace
 * alone; nothing here touches CUDA.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/strbuf.h"
#include "../common/util.h"
#include "../addr/memmap.h"
#include "../trace/trace.h"
#include "../addr/params.h"
#include "rootcause.h"

/* One BLOCK_ALLOC of the input.  The capture reads the allocator at each
 * launch, so a block became live somewhere after the previous launch (and
 * after its segment's ALLOC): its ALLOC is written there (emit_after), before
 * the copies that may fill it.  INITIAL blocks: right after their segment's
 * ALLOC. */
struct blk {
	size_t rec;              /* its record index */
	long seg;                /* index (memmap) of the segment it lies in; -1: none */
	long emit_after;         /* write its ALLOC after this record (-1: first) */
	long free_rec;           /* the BLOCK_FREE that ends it, -1: none */
	long below;              /* find_segments: the block live at its address before it, -1 */
	int out_live;            /* its ALLOC has been written and not yet freed */
	int done;                /* its ALLOC has been written */
};

/* A BLOCK_FREE record and the block it ends (find_segments appends them
 * in record order: one() finds its block by binary search). */
struct blk_free {
	size_t rec, blk;
};

/* find_segments' table: an address -> the newest block not yet freed
 * there (open addressing; a BLOCK_FREE ends that one, as the scan from
 * the newest block backwards did, without the scan). */
struct addr_top {
	uint64_t *key;
	long *top;               /* -1: no live block there now */
	size_t cap, n;
};

struct rc {
	const struct trace *in;
	struct trace_writer w;
	struct memmap segs;      /* the input's allocations */
	struct memmap out;       /* allocations as written (blocks, unsplit allocations) */
	struct blk *b;
	size_t nb, ab;
	struct blk_free *frees;
	size_t nfrees, afrees;
	size_t *order;           /* block indices by emit_after */
	size_t next;             /* the next of order to write */
	unsigned char *split;    /* per segment index: replaced by its blocks */
	size_t nsplit;
	struct rc_stats *st;
	struct strbuf *err;
	const struct rc_opts *o; /* NULL: requested sizes, no launch skipped */
	uint64_t *skip;          /* o->skip sorted (hunt's lists grow with every finding's repeats) */
	size_t nskip;
};

int rc_has_blocks(const struct trace *t)
{
	for (size_t i = 0; i < t->nrec; i++)
		if (t->rec[i].type == TR_BLOCK_ALLOC)
			return 1;
	return 0;
}

/* The slot of addr in T (found or empty); T->cap is a power of two. */
static size_t top_slot(const struct addr_top *T, uint64_t addr)
{
	size_t s = (size_t)((addr >> 4) * 0x9E3779B97F4A7C15ull) & (T->cap - 1);
	while (T->top[s] != -2 && T->key[s] != addr)
		s = (s + 1) & (T->cap - 1);
	return s;
}

static long *top_at(struct addr_top *T, uint64_t addr)
{
	size_t s;
	if ((T->n + 1) * 2 > T->cap) {
		struct addr_top G = { NULL, NULL, T->cap ? T->cap * 2 : 256, 0 };
		G.key = xmalloc(G.cap * sizeof(*G.key));
		G.top = xmalloc(G.cap * sizeof(*G.top));
		for (size_t i = 0; i < G.cap; i++)
			G.top[i] = -2;   /* -2: an empty slot */
		for (size_t i = 0; i < T->cap; i++)
			if (T->top[i] != -2) {
				size_t g = top_slot(&G, T->key[i]);
				G.key[g] = T->key[i];
				G.top[g] = T->top[i];
				G.n++;
			}
		free(T->key);
		free(T->top);
		*T = G;
	}
	s = top_slot(T, addr);
	if (T->top[s] == -2) {
		T->key[s] = addr;
		T->top[s] = -1;
		T->n++;
	}
	return &T->top[s];
}

/* Pass 1: each block's segment, where its ALLOC goes, which BLOCK_FREE
 * ends it (the newest block at its address not freed yet), and which
 * segments are split. */
static void find_segments(struct rc *R)
{
	struct memmap mm = MEMMAP_INIT;
	struct addr_top T = { NULL, NULL, 0, 0 };
	long last_launch = -1;
	for (size_t i = 0; i < R->in->nrec; i++) {
		const struct tr_rec *r = &R->in->rec[i];
		if (memmap_feed(&mm, r, (long)i))
			continue;   /* the segments as they are at this record */
		if (r->type == TR_LAUNCH && !(r->u.launch.flags & TR_F_CAPTURED)) {
			last_launch = (long)i;
		} else if (r->type == TR_BLOCK_FREE) {
			long *top = top_at(&T, r->u.block_free.addr), k = *top;
			if (k >= 0) {
				R->b[k].free_rec = (long)i;
				*top = R->b[k].below;
				ALLOC_GROW(R->frees, R->nfrees + 1, R->afrees);
				R->frees[R->nfrees++] = (struct blk_free){ i, (size_t)k };
			}
		} else if (r->type == TR_BLOCK_ALLOC) {
			struct mm_alloc *a = memmap_lookup_live(&mm, r->u.block.addr);
			struct blk *b;
			long *top;
			/* the block must lie inside it (not start one past its end) */
			if (a && r->u.block.addr - a->addr >= a->size)
				a = NULL;
			ALLOC_GROW(R->b, R->nb + 1, R->ab);
			b = &R->b[R->nb++];
			memset(b, 0, sizeof(*b));
			b->rec = i;
			b->seg = a ? (long)a->index : -1;
			b->free_rec = -1;
			b->below = -1;
			if (!a) {
				R->st->orphans++;
				b->done = 1;
				continue;
			}
			top = top_at(&T, r->u.block.addr);
			b->below = *top;
			*top = (long)(R->nb - 1);
			if (a->index >= R->nsplit) {
				size_t n = a->index + 64;
				R->split = xrealloc(R->split, n);
				memset(R->split + R->nsplit, 0, n - R->nsplit);
				R->nsplit = n;
			}
			if (!R->split[a->index])
				R->st->segments++;
			R->split[a->index] = 1;
			b->emit_after = (r->u.block.flags & TR_BLK_F_INITIAL) || a->alloc_event > last_launch ?
					a->alloc_event : last_launch;
		}
	}
	memmap_release(&mm);
	free(T.key);
	free(T.top);
}

static const struct rc *g_sort;
static int by_emit(const void *x, const void *y)
{
	const struct blk *a = &g_sort->b[*(const size_t *)x], *b = &g_sort->b[*(const size_t *)y];
	if (a->emit_after != b->emit_after)
		return a->emit_after < b->emit_after ? -1 : 1;
	return a->rec < b->rec ? -1 : a->rec > b->rec;
}

static void sort_blocks(struct rc *R)
{
	R->order = xmalloc((R->nb ? R->nb : 1) * sizeof(*R->order));
	for (size_t i = 0; i < R->nb; i++)
		R->order[i] = i;
	g_sort = R;
	qsort(R->order, R->nb, sizeof(*R->order), by_emit);
	g_sort = NULL;
}

static int is_split(const struct rc *R, const struct mm_alloc *seg)
{
	return seg && seg->index < R->nsplit && R->split[seg->index];
}

static const struct tr_block *blk_rec(const struct rc *R, const struct blk *b)
{
	return &R->in->rec[b->rec].u.block;
}

/* The bytes a block's ALLOC gets: requested, or the allocator's rounded
 * size (rc_opts.rounded: the guard where the block really ends). */
static uint64_t blk_size(const struct rc *R, const struct tr_block *k)
{
	uint64_t n = R->o && R->o->rounded && k->alloc_size > k->size ? k->alloc_size : k->size;
	return n ? n : 1;
}

/* 1 when launch seq is one rc_opts.skip lists. */
static int skipped(const struct rc *R, uint64_t seq)
{
	return R->nskip && bsearch(&seq, R->skip, R->nskip, sizeof(*R->skip), u64_cmp) != NULL;
}

/* ev: what a tw_* call returned.  0, or -1 with the message in R->err. */
static int put_done(struct rc *R, long ev)
{
	if (ev < 0) {
		sb_addf(R->err, "%s: write failed%s", R->w.path ? R->w.path : "blockified trace", tw_why(&R->w));
		return -1;
	}
	return 0;
}

static int put(struct rc *R, const struct tr_rec *r)
{
	if (!tr_type_known(r->type))
		return 0;   /* a newer writer's record (cand.c's write_item leaves it out too) */
	return put_done(R, tw_record(&R->w, r));
}

static int put_alloc(struct rc *R, struct blk *b)
{
	const struct tr_block *k = blk_rec(R, b);
	uint64_t size = blk_size(R, k);
	b->out_live = 1;
	memmap_add(&R->out, k->addr, size, TR_MEM_DEVICE, 0)->user = b;
	R->st->blocks++;
	return put_done(R, tw_alloc(&R->w, &(struct tr_alloc){ .addr = k->addr, .size = size,
							     .kind = TR_MEM_DEVICE, .name = "" }));
}

static int put_free(struct rc *R, struct blk *b)
{
	struct tr_rec r;
	memset(&r, 0, sizeof(r));
	r.type = TR_FREE;
	r.u.free.addr = blk_rec(R, b)->addr;
	r.u.free.kind = TR_MEM_DEVICE;
	b->out_live = 0;
	memmap_free(&R->out, r.u.free.addr, 0);
	return put(R, &r);
}

/* The pieces of [a, a+len) that lie in live written allocations: calls
 * fn(off, n) for each (off from a); returns the bytes left out. */
static uint64_t each_piece(const struct rc *R, uint64_t a, uint64_t len,
			   int (*fn)(void *arg, uint64_t off, uint64_t n), void *arg, int *failed)
{
	uint64_t covered = 0;
	for (size_t i = memmap_live_from(&R->out, a); i < R->out.nlive && !*failed; i++) {
		const struct mm_alloc *o = R->out.live[i];
		uint64_t lo = o->addr > a ? o->addr : a;
		if (o->addr >= a + len)
			break;   /* (sorted: the rest start later still) */
		uint64_t hi = o->addr + o->size < a + len ? o->addr + o->size : a + len;
		if (lo >= hi)
			continue;
		if (fn(arg, lo - a, hi - lo) < 0)
			*failed = 1;
		covered += hi - lo;
	}
	return len - covered;
}

struct copy_arg {
	struct rc *R;
	const struct tr_rec *r;
	struct strbuf data;      /* H2D: the whole payload */
};

static int put_copy_piece(void *arg, uint64_t off, uint64_t n)
{
	struct copy_arg *c = arg;
	struct tr_rec r = *c->r;
	r.u.copy.dst += off;
	r.u.copy.size = n;
	if (r.type == TR_MEMCPY_H2D) {
		r.u.copy.src += off;
		if (tw_blob(&c->R->w, c->data.buf + off, (size_t)n, &r.u.copy.blob) < 0) {
			sb_adds(c->R->err, "blockified trace: a blob write failed");
			return -1;
		}
	} else {
		r.u.copy.src += off;
	}
	return put(c->R, &r);
}

/* A copy whose destination is a split segment: one record per live block
 * it reaches.  (D2D/D2H sources inside split segments are relocated by
 * replay like any address: only the destination is cut.) */
static int put_copy(struct rc *R, const struct tr_rec *r)
{
	struct copy_arg c = { R, r, STRBUF_INIT };
	int failed = 0, ret = -1;
	uint64_t left;
	if (r->type == TR_MEMCPY_H2D && (r->u.copy.flags & TR_F_FILL) && !r->u.copy.blob) {
		sb_adds(R->err, "a seeded fill (written by shrink) into an allocator segment: root-cause "
			"mode takes a captured trace");
		return -1;
	}
	if (r->type == TR_MEMCPY_H2D &&
	    trace_blob_read(R->in, r->u.copy.blob, &c.data, 0, R->err) < 0)
		goto out;
	if (r->type == TR_MEMCPY_H2D && c.data.len != r->u.copy.size) {
		sb_addf(R->err, "a %llu-byte copy with a %zu-byte payload",
			(unsigned long long)r->u.copy.size, c.data.len);
		goto out;
	}
	left = each_piece(R, r->u.copy.dst, r->u.copy.size, put_copy_piece, &c, &failed);
	if (failed)
		goto out;
	R->st->clipped++;
	R->st->dropped_bytes += left;
	ret = 0;
out:
	sb_release(&c.data);
	return ret;
}

struct set_arg {
	struct rc *R;
	const struct tr_rec *r;
	uint64_t row;            /* address of the row being cut */
};

static int put_memset_piece(void *arg, uint64_t off, uint64_t n)
{
	struct set_arg *s = arg;
	struct tr_rec r = *s->r;
	uint32_t e = r.u.memset.elem_size ? r.u.memset.elem_size : 1;
	uint64_t first = (off + e - 1) / e * e;
	if (first >= off + n || (off + n - first) / e == 0)
		return 0;
	r.u.memset.dst = s->row + first;
	r.u.memset.width = (off + n - first) / e;
	r.u.memset.height = 1;
	r.u.memset.pitch = 0;
	return put(s->R, &r);
}

/* A memset into a split segment: each row cut to the live blocks. */
static int put_memset(struct rc *R, const struct tr_rec *r)
{
	const struct tr_memset *m = &r->u.memset;
	struct set_arg s = { R, r, 0 };
	uint64_t rows = m->height ? m->height : 1;
	int failed = 0;
	for (uint64_t y = 0; y < rows && !failed; y++) {
		s.row = m->dst + y * (rows > 1 ? m->pitch : 0);
		R->st->dropped_bytes += each_piece(R, s.row, m->width * m->elem_size, put_memset_piece,
						   &s, &failed);
	}
	R->st->clipped++;
	return failed ? -1 : 0;
}

/* A segment's ALLOC: unsplit, as it is; split, nothing (its blocks follow). */
static int on_alloc(struct rc *R, size_t i, struct mm_alloc *seg)
{
	if (!is_split(R, seg)) {
		memmap_add(&R->out, R->in->rec[i].u.alloc.addr, R->in->rec[i].u.alloc.size,
			   R->in->rec[i].u.alloc.kind, 0);
		return put(R, &R->in->rec[i]);
	}
	return 0;
}

/* Write the ALLOCs due after record `at` (-1: before the first), freeing
 * first any live block they overlap (the allocator reused its range). */
static int blk_ptr_cmp(const void *x, const void *y)
{
	const struct blk *a = *(struct blk *const *)x, *b = *(struct blk *const *)y;
	return a < b ? -1 : a > b;
}

static int emit_due(struct rc *R, long at)
{
	struct blk **hit = NULL;
	size_t nhit = 0, ahit = 0;
	int ret = 0;

	for (; R->next < R->nb && !ret; R->next++) {
		struct blk *b = &R->b[R->order[R->next]];
		const struct tr_block *k = blk_rec(R, b);
		uint64_t end = k->addr + blk_size(R, k);
		if (b->emit_after > at)
			break;
		if (b->done)
			continue;
		b->done = 1;
		/* the written blocks it overlaps, freed in block order (the
		 * written allocations' live list, not every block) */
		nhit = 0;
		for (size_t i = memmap_live_from(&R->out, k->addr);
		     i < R->out.nlive && R->out.live[i]->addr < end; i++)
			if (R->out.live[i]->user) {
				ALLOC_GROW(hit, nhit + 1, ahit);
				hit[nhit++] = R->out.live[i]->user;
			}
		if (nhit > 1)
			qsort(hit, nhit, sizeof(*hit), blk_ptr_cmp);
		for (size_t i = 0; i < nhit && !ret; i++)
			if (put_free(R, hit[i]) < 0)
				ret = -1;
		if (!ret && put_alloc(R, b) < 0)
			ret = -1;
	}
	free(hit);
	return ret;
}

/* A segment's FREE: unsplit, as it is; split, a FREE per live block. */
static int on_free(struct rc *R, size_t i, struct mm_alloc *seg)
{
	if (!is_split(R, seg)) {
		memmap_free(&R->out, R->in->rec[i].u.free.addr, 0);
		return put(R, &R->in->rec[i]);
	}
	for (size_t k = 0; k < R->nb; k++)
		if (R->b[k].out_live && R->b[k].seg == (long)seg->index && put_free(R, &R->b[k]) < 0)
			return -1;
	return 0;
}

static int blob_ref(struct rc *R, uint64_t hash)
{
	if (!hash || tw_has_blob(&R->w, hash))
		return 0;
	if (tw_copy_blob(&R->w, R->in, hash) < 0) {
		sb_addf(R->err, "blob %016llx: missing or not written", (unsigned long long)hash);
		return -1;
	}
	return 0;
}

static int put_end(struct rc *R, const struct rc_cut *cut)
{
	struct tr_rec r;
	memset(&r, 0, sizeof(r));
	if (cut) {
		r.type = TR_FAULT;
		r.u.fault.code = cut->code;
		r.u.fault.error = cut->error;
		r.u.fault.api = "cuLaunchKernel";
		r.u.fault.launch_seq = cut->seq;
		r.u.fault.at_launch = 1;
		r.u.fault.kernel = cut->kernel;
		return put(R, &r);
	}
	r.type = TR_END;
	r.u.end.exit_code = -1;
	r.u.end.launches = R->st->launches;
	return put(R, &r);
}

/* Pass 2: one input record. 1 when the cut launch was written. */
static int one(struct rc *R, size_t i, const struct rc_cut *cut)
{
	const struct tr_rec *r = &R->in->rec[i];
	struct mm_alloc *seg;
	switch (r->type) {
	case TR_BLOB: case TR_FAULT: case TR_END:
		return 0;
	case TR_ALLOC:
		seg = memmap_add(&R->segs, r->u.alloc.addr, r->u.alloc.size, r->u.alloc.kind, (long)i);
		return on_alloc(R, i, seg);
	case TR_FREE:
		seg = memmap_free(&R->segs, r->u.free.addr, (long)i);
		if (!seg) {
			memmap_free(&R->out, r->u.free.addr, 0);
			return put(R, r);
		}
		return on_free(R, i, seg);
	case TR_BLOCK_ALLOC:
		return 0;   /* written by emit_due */
	case TR_BLOCK_FREE: {
		size_t lo = 0, hi = R->nfrees;   /* its block (find_segments, in record order) */
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (R->frees[mid].rec < i)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < R->nfrees && R->frees[lo].rec == i && R->b[R->frees[lo].blk].out_live)
			return put_free(R, &R->b[R->frees[lo].blk]);
		return 0;
	}
	case TR_MODULE:
		if (blob_ref(R, r->u.module.blob) < 0)
			return -1;
		return put(R, r);
	case TR_MEMCPY_H2D: case TR_MEMCPY_D2D: case TR_MEMCPY_D2H:
		seg = memmap_lookup_live(&R->segs, r->u.copy.dst);
		if (is_split(R, seg))
			return put_copy(R, r);
		if (r->type == TR_MEMCPY_H2D && !(r->u.copy.flags & TR_F_FILL && !r->u.copy.blob) &&
		    blob_ref(R, r->u.copy.blob) < 0)
			return -1;
		return put(R, r);
	case TR_MEMSET:
		seg = memmap_lookup_live(&R->segs, r->u.memset.dst);
		return is_split(R, seg) ? put_memset(R, r) : put(R, r);
	case TR_LAUNCH:
		if (!(r->u.launch.flags & TR_F_CAPTURED) && skipped(R, r->u.launch.seq))
			return 0;   /* neutralised (rc_opts.skip) */
		if (put(R, r) < 0)
			return -1;
		R->st->launches++;
		return cut && r->u.launch.seq == cut->seq && !(r->u.launch.flags & TR_F_CAPTURED) ? 1 : 0;
	default:
		return put(R, r);
	}
}

int rc_blockify(const struct trace *in, const char *out_path, const struct rc_cut *cut,
		struct rc_stats *st, struct strbuf *err)
{
	return rc_blockify_opts(in, out_path, cut, NULL, st, err);
}

int rc_blockify_opts(const struct trace *in, const char *out_path, const struct rc_cut *cut,
		     const struct rc_opts *o, struct rc_stats *st, struct strbuf *err)
{
	struct rc R;
	int ret = -1, r = 0;
	size_t i;

	memset(&R, 0, sizeof(R));
	memset(st, 0, sizeof(*st));
	R.in = in;
	R.st = st;
	R.err = err;
	R.o = o;
	if (o && o->nskip) {
		R.skip = xmalloc(o->nskip * sizeof(*R.skip));
		memcpy(R.skip, o->skip, o->nskip * sizeof(*R.skip));
		qsort(R.skip, o->nskip, sizeof(*R.skip), u64_cmp);
		R.nskip = o->nskip;
	}
	R.w = (struct trace_writer)TRACE_WRITER_INIT;
	find_segments(&R);
	if (!R.nb && !(o && o->allow_none)) {
		sb_addf(err, "%s holds no allocator blocks (BLOCK_ALLOC records): capture the program "
			"with `gpureduce capture --tensors`", in->path ? in->path : "the trace");
		goto out;
	}
	if (tw_open(&R.w, out_path, err) < 0)
		goto out;
	tw_set_buffer(&R.w, WRITE_BUFFER_BYTES);   /* one write(2) per MiB, not per record */
	/* a training loop's launches repeat: each of hunt's replay workers reads
	 * this file whole, and a short launch costs it a fraction (format 2.0) */
	tw_short_launches(&R.w);
	sort_blocks(&R);
	r = emit_due(&R, -1);
	for (i = 0; i < in->nrec && r == 0; i++) {
		r = one(&R, i, cut);
		if (r == 0)
			r = emit_due(&R, (long)i);
	}
	if (r < 0)
		goto out;
	if (cut && r != 1) {
		sb_addf(err, "launch #%llu is not in %s", (unsigned long long)cut->seq, in->path);
		goto out;
	}
	if (put_end(&R, cut) < 0)
		goto out;
	ret = 0;
out:
	if (tw_close(&R.w) < 0 && ret == 0) {
		sb_addf(err, "%s: write failed%s", out_path, tw_why(&R.w));
		ret = -1;
	}
	memmap_release(&R.segs);
	memmap_release(&R.out);
	free(R.b);
	free(R.frees);
	free(R.order);
	free(R.split);
	free(R.skip);
	return ret;
}

int rc_block_at(const struct trace *in, uint64_t seq, uint64_t v, struct tr_block *out)
{
	const struct tr_block *live = NULL, *dead = NULL;
	const struct tr_block **all = NULL;
	size_t n = 0;
	int ret = -1;
	for (size_t i = 0; i < in->nrec; i++) {
		const struct tr_rec *r = &in->rec[i];
		if (r->type == TR_LAUNCH && r->u.launch.seq == seq)
			break;
		if (r->type == TR_BLOCK_ALLOC) {
			all = xrealloc(all, (n + 1) * sizeof(*all));
			all[n++] = &r->u.block;
		} else if (r->type == TR_BLOCK_FREE) {
			for (size_t k = n; k-- > 0;)
				if (all[k] && all[k]->addr == r->u.block_free.addr) {
					if (v >= all[k]->addr && v - all[k]->addr <= all[k]->size)
						dead = all[k];
					all[k] = NULL;
					break;
				}
		}
	}
	for (size_t k = 0; k < n; k++)
		if (all[k] && v >= all[k]->addr && v - all[k]->addr <= all[k]->size &&
		    (!live || all[k]->addr > live->addr))
			live = all[k];
	if (live || dead) {
		*out = live ? *live : *dead;
		ret = 0;
	}
	free(all);
	return ret;
}

/* "tensor 0x... (4096 bytes, allocated at f:l in fn)" */
static void name_block(struct strbuf *o, const struct tr_block *b)
{
	char sz[32];
	sb_addf(o, "tensor 0x%llx (%s", (unsigned long long)b->addr, fmt_bytes(b->size, sz));
	if (*b->file)
		sb_addf(o, ", allocated at %s:%u in %s)", b->file, b->line, b->func);
	else if (b->flags & TR_BLK_F_INITIAL)
		sb_adds(o, ", allocated before recording began: place unknown)");
	else
		sb_adds(o, ", allocated where no Python line was recorded: place unknown)");
}

/* The launch with this seq, or NULL. */
static const struct tr_launch *launch_of(const struct trace *in, uint64_t seq)
{
	for (size_t i = 0; i < in->nrec; i++)
		if (in->rec[i].type == TR_LAUNCH && in->rec[i].u.launch.seq == seq &&
		    !(in->rec[i].u.launch.flags & TR_F_CAPTURED))
			return &in->rec[i].u.launch;
	return NULL;
}

/* From a diagnosis: "... <access> ... <N> past the end of param <P> ...".
 * Returns P (and the distance text, the access word) or -1. */
int rc_diag_param(const char *diag, char *dist, size_t nd, const char **access)
{
	const char *p = diag ? strstr(diag, " past the end of param ") : NULL, *s;
	if (!p)
		return -1;
	/* the distance: the words before " past", back to the previous comma/space run */
	s = p;
	while (s > diag && s[-1] != ',' && s[-1] != ':' && !(s[-1] == ' ' && s - 1 > diag &&
							       (s[-2] == ',' || s[-2] == ':')))
		s--;
	while (*s == ' ')
		s++;
	snprintf(dist, nd, "%.*s", (int)(p - s), s);
	*access = strstr(diag, " write ") || !strncmp(diag, "global write", 12) ? "wrote" :
		  strstr(diag, " read ") ? "read" : "accessed";
	return atoi(p + strlen(" past the end of param "));
}

void rc_describe(const struct trace *in, uint64_t root_seq, const char *root_kernel,
		 const char *crash_kernel, const char *diag, struct strbuf *out)
{
	const struct tr_launch *l = launch_of(in, root_seq);
	char *k = params_demangle(root_kernel), *c = params_demangle(crash_kernel ? crash_kernel : "");
	char dist[80];
	const char *access = "accessed";
	int p = rc_diag_param(diag, dist, sizeof(dist), &access);
	struct tr_block b;

	sb_addf(out, "root cause: kernel %s (launch #%llu) ", k, (unsigned long long)root_seq);
	if (p >= 0 && l && (uint32_t)p < l->nparams && l->params[p].size >= 8) {
		uint64_t v;
		memcpy(&v, l->args + l->params[p].offset, 8);
		sb_addf(out, "%s past the end of ", access);
		if (rc_block_at(in, root_seq, v, &b) == 0)
			name_block(out, &b);
		else
			sb_addf(out, "param %d (no recorded tensor)", p);
		/* the first bad access, not the overrun's length: the guard stops it */
		sb_addf(out, ", param %d: its first out-of-bounds access %s past the end", p, dist);
	} else {
		/* no sanitizer report: which tensor, and how far, is not known */
		int any = 0;
		sb_adds(out, "faulted first under per-tensor guards (distance unknown without "
			"compute-sanitizer); its tensors: ");
		for (uint32_t q = 0; l && q < l->nparams; q++) {
			uint64_t v;
			if (l->params[q].size != 8)
				continue;
			memcpy(&v, l->args + l->params[q].offset, 8);
			if (rc_block_at(in, root_seq, v, &b) < 0)
				continue;
			sb_addf(out, "%sparam %u = ", any++ ? "; " : "", q);
			name_block(out, &b);
		}
		if (!any)
			sb_adds(out, "none recorded");
	}
	sb_addf(out, "; the original crash was in kernel %s", *c ? c : "(unknown)");
	free(k);
	free(c);
}
