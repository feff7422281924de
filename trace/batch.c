/*
 * batch.c - the decoder's placing of late allocator blocks (format 1.6,
 * BLOCK_BATCH; docs/FORMAT.md "Late blocks").  `capture --tensors` in its
 * events mode learns PyTorch's allocations and frees some launches after
 * they happened and writes them then, each group behind a BLOCK_BATCH that
 * names the launch they apply before.  trace_open() calls
 * trace_place_block_batches() once, after the records are decoded, so that
 * every reader (show, replay, shrink --root-cause, hunt) sees the BLOCK
 * records right before their LAUNCH, as a 1.3 capture writes them (the
 * BLOCK_BATCH records stay where they were, with no BLOCK record after
 * them once theirs moved; readers other than this one ignore them).  It also applies the completeness rule: the
 * launches from the first one whose blocks the capture never fetched (the
 * process died first) get a BLOCK_FREE of every live block before them,
 * flagged TR_BLKFREE_F_UNKNOWN, so they read as launches with no known
 * blocks.  Traces without BLOCK_BATCH are left untouched.
 */
#include <stdlib.h>
#include <string.h>

#include "../common/util.h"
#include "trace.h"

struct seq_at {
	uint64_t seq;
	size_t idx;
};

static int cmp_seq(const void *a, const void *b)
{
	const struct seq_at *x = a, *y = b;
	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static int is_block(uint32_t type)
{
	return type == TR_BLOCK_ALLOC || type == TR_BLOCK_FREE;
}

/* Index of the first LAUNCH with seq >= s in the sorted table, or n. */
static size_t lower_bound(const struct seq_at *l, size_t n, uint64_t s)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (l[mid].seq < s)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Where each record goes: dest[i] = i (stays), SIZE_MAX (dropped: it
 * applies before this file's first launch, to a window a checkpoint
 * closed) or the index of the LAUNCH it is moved before (a late batch:
 * the first launch whose seq is at least the batch's).  A batch written
 * before its launch stays.  Returns the largest `known`. */
static uint64_t plan(const struct trace *t, size_t *dest, const struct seq_at *l, size_t nl)
{
	uint64_t known = 0;
	size_t i = 0;
	while (i < t->nrec) {
		const struct tr_rec *r = &t->rec[i];
		size_t to = i, k, j;
		dest[i] = i;
		if (r->type != TR_BLOCK_BATCH) {
			i++;
			continue;
		}
		if (r->u.block_batch.known > known)
			known = r->u.block_batch.known;
		k = lower_bound(l, nl, r->u.block_batch.seq);
		if (nl && r->u.block_batch.seq < l[0].seq)
			to = SIZE_MAX;   /* before this file's first launch: a closed window's */
		else if (k < nl && l[k].idx < i)
			to = l[k].idx;   /* late: moved before its launch */
		for (j = i + 1; j < t->nrec && is_block(t->rec[j].type); j++)
			dest[j] = to == i ? j : to;
		i = j;
	}
	return known;
}

/* Blocks live right before record `upto` of the new order (addresses of
 * BLOCK_ALLOC records not freed since), appended to *live. */
static size_t live_blocks(const struct tr_rec *rec, size_t upto, const struct tr_rec ***live)
{
	const struct tr_rec **v = NULL;
	size_t n = 0, cap = 0;
	for (size_t i = 0; i < upto; i++) {
		uint64_t a;
		if (!is_block(rec[i].type))
			continue;
		a = rec[i].type == TR_BLOCK_ALLOC ? rec[i].u.block.addr : rec[i].u.block_free.addr;
		for (size_t k = 0; k < n; k++)
			if (v[k]->u.block.addr == a) {
				v[k--] = v[--n];
				break;
			}
		if (rec[i].type == TR_BLOCK_ALLOC) {
			ALLOC_GROW(v, n + 1, cap);
			v[n++] = &rec[i];
		}
	}
	*live = v;
	return n;
}

int trace_place_block_batches(struct trace *t)
{
	struct seq_at *l = NULL;
	size_t *dest = NULL, *head = NULL, *next = NULL, *tail = NULL;
	struct tr_rec *out = NULL;
	const struct tr_rec **live = NULL;
	size_t nl = 0, no = 0, nlive = 0, cut = SIZE_MAX, nbatch = 0;
	uint64_t known;

	for (size_t i = 0; i < t->nrec; i++)
		nbatch += t->rec[i].type == TR_BLOCK_BATCH;
	if (!nbatch)
		return 0;
	l = xcalloc(t->nrec + 1, sizeof(*l));
	for (size_t i = 0; i < t->nrec; i++)
		if (t->rec[i].type == TR_LAUNCH)
			l[nl++] = (struct seq_at){ t->rec[i].u.launch.seq, i };
	qsort(l, nl, sizeof(*l), cmp_seq);
	dest = xcalloc(t->nrec, sizeof(*dest));
	known = plan(t, dest, l, nl);
	/* moved records, per target launch, in file order */
	head = xmalloc(t->nrec * sizeof(*head));
	tail = xmalloc(t->nrec * sizeof(*tail));
	next = xmalloc(t->nrec * sizeof(*next));
	for (size_t i = 0; i < t->nrec; i++)
		head[i] = tail[i] = next[i] = SIZE_MAX;
	for (size_t i = 0; i < t->nrec; i++) {
		size_t d = dest[i];
		if (d == i || d == SIZE_MAX)
			continue;
		if (head[d] == SIZE_MAX)
			head[d] = i;
		else
			next[tail[d]] = i;
		tail[d] = i;
	}
	out = xcalloc(t->nrec + 1, sizeof(*out));
	for (size_t i = 0; i < t->nrec; i++) {
		for (size_t m = head[i]; m != SIZE_MAX; m = next[m])
			out[no++] = t->rec[m];
		if (dest[i] == i)
			out[no++] = t->rec[i];
	}
	/* the first launch whose blocks were never fetched */
	if (known) {
		for (size_t i = 0; i < no && cut == SIZE_MAX; i++)
			if (out[i].type == TR_LAUNCH && out[i].u.launch.seq >= known)
				cut = i;
	}
	if (cut != SIZE_MAX) {
		struct tr_rec *o2;
		size_t n2 = 0;
		nlive = live_blocks(out, cut, &live);
		o2 = xcalloc(no + nlive + 1, sizeof(*o2));
		memcpy(o2, out, cut * sizeof(*out));
		n2 = cut;
		for (size_t k = 0; k < nlive; k++) {
			struct tr_rec *f = &o2[n2++];
			f->type = TR_BLOCK_FREE;
			f->offset = out[cut].offset;
			f->u.block_free.addr = live[k]->u.block.addr;
			f->u.block_free.source = live[k]->u.block.source;
			f->u.block_free.flags = TR_BLKFREE_F_UNKNOWN;
		}
		memcpy(o2 + n2, out + cut, (no - cut) * sizeof(*out));
		n2 += no - cut;
		free(out);
		out = o2;
		no = n2;
		t->blocks_cut = 1;
		t->blocks_known = known;
	}
	t->block_batches = nbatch;
	free(t->rec);
	t->rec = out;
	t->nrec = no;
	t->rec_alloc = no + 1;
	free(live);
	free(l);
	free(dest);
	free(head);
	free(tail);
	free(next);
	return 0;
}
