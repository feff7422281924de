/*
 * phase-data.c - buffer contents (phase.h): each host-to-device copy's
 * bytes become zeros, a seeded fill, or zeros except the chunks the fault
 * needs (ddmin over coarse chunks, then 8-byte words).  Words that point
 * into a buffer of the candidate are never changed: a zeroed pointer
 * array faults too, for a reason that is not the user's bug.  Before the
 * per-copy search, one guess for every copy at once (zeros but pointer
 * words, then also but outliers: phase_data_guess_test), which the slice
 * tries first; and before each copy's chunk search, its outliers, its
 * extremes and the heads of the tensors the launch points at
 * (outliers_fault).  In a table of pointers, the words that are none (its
 * sentinels) are kept as its pointers are (pointer_words_in).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/strbuf.h"
#include "../common/util.h"
#include "../addr/memmap.h"
#include "cand.h"
#include "ddmin.h"
#include "oracle.h"
#include "phase.h"
#include "shrink-opts.h"

/* ---- buffer contents ------------------------------------------------------ */

/* A buffer of at least this many bytes ends a run of zeros (zero_run) and
 * has nothing planned beside the slice (phase_data_plan): its own zeros
 * and fill are tested one after the other, the fill costing the worker
 * seconds (the generator runs on the host). */
#define DATA_BIG_BYTES (64ull << 20)

/* The most copies one run of zeros covers (zero_run): PHASE_DATA_PLAN_MAX
 * (phase.h), the slice's plan being such a run. */
#define ZERO_RUN_MAX PHASE_DATA_PLAN_MAX

struct data_dd {
	struct oracle *o;
	const struct cand *base;
	size_t item;             /* the H2D item */
	struct range *chunks;    /* candidate chunks (element i of the mask) */
};

static void apply_data_mask(const void *dv, const unsigned char *mask, size_t n, struct cand *out)
{
	const struct data_dd *d = dv;
	struct item *it;
	cand_copy(out, d->base);
	it = &out->it[d->item];
	free(it->keep);
	it->keep = xcalloc(n + 1, sizeof(struct range));
	it->nkeep = 0;
	it->data_mode = DATA_KEEP;
	for (size_t i = 0; i < n; i++) {
		if (!mask[i])
			continue;
		/* merge adjacent chunks into one range */
		if (it->nkeep && it->keep[it->nkeep - 1].off + it->keep[it->nkeep - 1].len == d->chunks[i].off)
			it->keep[it->nkeep - 1].len += d->chunks[i].len;
		else
			it->keep[it->nkeep++] = d->chunks[i];
	}
}

static int data_oracle(void *arg, const unsigned char *const *masks, size_t k, size_t n, int *res)
{
	struct data_dd *d = arg;
	return oracle_test_masks(d->o, d, apply_data_mask, masks, k, n, res);
}

/*
 * Byte offsets (within the H2D payload of `item`) of 8-byte words that hold
 * a pointer into some buffer of the candidate.  Such words are never zeroed
 * or filled: a zeroed pointer array faults too, in the same kernel, for a
 * reason that is not the user's bug.  In a table of pointers (at least
 * TABLE_MIN of them, 3 in 4 of the copy's words) the words that are not
 * zeros nor pointers are marked too: a retired row's sentinel, an end
 * marker, -1.  Zeroed, the table's reader follows a null pointer instead:
 * the same error in the same kernel, which only the site check tells
 * apart, at the end (device-counter on the H200: backed off, a second
 * repro.cu check, 6 s).  Returns a 0/1 map of payload words (size/8 + 1
 * entries), or NULL when there are none.
 */
#define TABLE_MIN 16

static void mark_word(unsigned char *map, uint64_t off)
{
	map[off / 8] = 1;
	if (off % 8)
		map[off / 8 + 1] = 1;
}

static unsigned char *pointer_words_in(const struct cand *c, size_t item, const struct strbuf *data)
{
	struct memmap mm = MEMMAP_INIT;
	const struct item *it = &c->it[item];
	unsigned char *map;
	size_t nw, found = 0, words = 0;
	uint64_t first = (8 - (it->rec.u.copy.dst & 7)) & 7;

	for (size_t i = 0; i < c->n; i++) {
		const struct tr_rec *r = &c->it[i].rec;
		if (r->type == TR_ALLOC)
			memmap_add(&mm, r->u.alloc.addr, r->u.alloc.size, r->u.alloc.kind, (long)i);
	}
	/* sized for the copy too (a blob shorter than its copy is a damaged
	 * trace replay refuses; the map's readers index by the copy's size) */
	nw = (data->len > it->rec.u.copy.size ? data->len : it->rec.u.copy.size) / 8 + 2;
	map = xcalloc(nw, 1);
	/* words aligned in the device address space */
	for (uint64_t off = first; off + 8 <= data->len; off += 8, words++) {
		uint64_t v;
		int dead;
		memcpy(&v, data->buf + off, 8);
		if (memmap_pointer_word(&mm, v, &dead)) {
			mark_word(map, off);
			found++;
		}
	}
	if (found >= TABLE_MIN && found * 4 >= words * 3)
		for (uint64_t off = first; off + 8 <= data->len; off += 8) {
			uint64_t v;
			memcpy(&v, data->buf + off, 8);
			if (v)
				mark_word(map, off);   /* a table's sentinel (above) */
		}
	if (!found) {
		free(map);
		map = NULL;
	}
	memmap_release(&mm);
	return map;
}

/* The same, the copy's bytes read here. */
static unsigned char *pointer_words(const struct cand *c, size_t item)
{
	struct strbuf data = STRBUF_INIT, e = STRBUF_INIT;
	const struct item *it = &c->it[item];
	unsigned char *map = NULL;

	if (trace_blob_read(it->src, it->rec.u.copy.blob, &data, 0, &e) == 0)
		map = pointer_words_in(c, item, &data);
	sb_release(&data);
	sb_release(&e);
	return map;
}

/* 1 if [off, off+len) covers a marked pointer word. */
static int covers_pointer(const unsigned char *pw, uint64_t off, uint64_t len)
{
	if (!pw)
		return 0;
	for (uint64_t w = off / 8; w * 8 < off + len; w++)
		if (pw[w])
			return 1;
	return 0;
}

/*
 * A copy that holds pointers most often matters only through them: the
 * kernel faults where the pointers lead, whatever the bytes around them.
 * ddmin finds that in rounds where every part faults (8, then 8, then one;
 * again at the word level: 48 faulting candidates for one 2 MiB copy of
 * triton-tma-device on the H200, 21 s), and each fault costs a worker's
 * new context, created one after another.  So the mask that keeps only the
 * fixed (pointer) elements is tried first, alone: one fault when it is
 * enough, one clean run when not.  1 when it faulted (keep is then that
 * mask), 0 otherwise (keep untouched).
 */
static int only_fixed_faults(struct data_dd *d, unsigned char *keep, const unsigned char *fixed, size_t n)
{
	unsigned char *mk = xmalloc(n ? n : 1);
	const unsigned char *masks[1] = { mk };
	int res = 0, movable = 0;

	for (size_t i = 0; i < n; i++) {
		mk[i] = keep[i] && fixed[i];
		movable |= keep[i] && !fixed[i];
	}
	if (!movable || data_oracle(d, masks, 1, n, &res) < 0 || !res) {
		free(mk);
		return 0;
	}
	memcpy(keep, mk, n);
	free(mk);
	return 1;
}

/* More words than this standing out is no outlier pattern (outlier_words):
 * a ragged batch's padding is tens to hundreds of entries (managed-index:
 * 100), and each word kept costs nothing until ddmin cuts them down. */
#define OUTLIERS_MAX 1024
/* Copies past this size are not looked at whole (each view is sorted:
 * ~0.1 s for 4 MiB); index tables are far smaller.  Past the second, not
 * even the windows where launches point into them (outlier_words): a
 * segment of the large pool is 20 MiB. */
#define OUTLIERS_SCAN_MAX (4u << 20)
#define OUTLIERS_READ_MAX (256u << 20)

/* The k-th smallest of a[0..n) (k < n; a is reordered): Hoare's
 * selection, median of three pivots.  A sort (qsort: 0.25 s for a 2 MiB
 * copy's two views) is more than a percentile needs. */
static uint64_t select_kth(uint64_t *a, size_t n, size_t k)
{
	long lo = 0, hi = (long)n - 1, kk = (long)k;

	while (lo < hi) {
		uint64_t x = a[lo], y = a[lo + (hi - lo) / 2], z = a[hi], pivot, t;
		long i = lo, j = hi;
		pivot = x < y ? (y < z ? y : x < z ? z : x) : (x < z ? x : y < z ? z : y);
		while (i <= j) {
			while (a[i] < pivot)
				i++;
			while (a[j] > pivot)
				j--;
			if (i <= j) {
				t = a[i];
				a[i] = a[j];
				a[j] = t;
				i++;
				j--;
			}
		}
		if (kk <= j)
			hi = j;
		else if (kk >= i)
			lo = i;
		else
			return a[kk];
	}
	return a[kk];
}

static uint64_t mag64(int64_t v)
{
	return v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
}

enum guess { GUESS_OUTLIERS, GUESS_EXTREMES, GUESS_HEADS };

/* The extremes of a view: at most this many elements of its largest value
 * (and of its smallest, when negative) are marked. */
#define EXTREME_TIES 16

/* Mark the 8-byte spans (byte offset / 8, as pointer_words indexes them)
 * that the len bytes at off touch. */
static void mark_span(unsigned char *spans, size_t off, size_t len)
{
	spans[off / 8] = 1;
	spans[(off + len - 1) / 8] = 1;
}

/* One view: elements of `esize` bytes at offsets first, first + esize, ...
 * outside pointer words; marks the spans of those that stand out
 * (GUESS_OUTLIERS) or that hold the view's largest value, or its smallest
 * when that is negative (GUESS_EXTREMES: an index one past its limit is
 * no outlier, but it is the largest). */
/* Element of `esize` (4 or 8) bytes at b + off, signed. */
static int64_t elem_at(const unsigned char *b, size_t off, size_t esize)
{
	if (esize == 4) {
		int32_t x;
		memcpy(&x, b + off, 4);
		return x;
	} else {
		int64_t x;
		memcpy(&x, b + off, 8);
		return x;
	}
}

/* The elements of a view in [lo, hi): offsets from `first` (moved up to
 * lo) by esize, outside the head before first8 and pointer words. */
#define VIEW_EACH(off) \
	for (size_t off = lo > first ? first + (lo - first + esize - 1) / esize * esize : first; off + esize <= hi; \
	     off += esize) \
		if (off < first8 || covers_pointer(pw, off, esize)) \
			continue; \
		else

static void view_outliers(const unsigned char *b, size_t len, size_t lo, size_t hi, size_t first, size_t esize,
			  const unsigned char *pw, unsigned char *spans, size_t first8, enum guess how, uint64_t *mag)
{
	size_t n = 0, nonneg = 0, nnz = 0, nlo = 0, nhi = 0;
	int64_t vlo = INT64_MAX, vhi = INT64_MIN;
	uint64_t p90, thr;
	int sign_rule;

	/* mag (the caller's scratch, (hi - lo) / 4 + 1 entries): the
	 * magnitudes that are not zero */
	VIEW_EACH(off) {
		int64_t v = elem_at(b, off, esize);
		if (v)
			mag[nnz++] = mag64(v);
		nonneg += v >= 0;
		vlo = v < vlo ? v : vlo;
		vhi = v > vhi ? v : vhi;
		n++;
	}
	if (n < 16)
		return;
	if (how == GUESS_EXTREMES) {
		/* more ties than EXTREME_TIES in a whole copy (one value
		 * throughout: an evicted request's chunk, all "gone"): the
		 * first of them.  (Not in a window where a launch points: the
		 * heads guess, after this one, takes those.) */
		int hi_first = lo == 0 && hi == len, lo_first = hi_first;
		if (vlo == vhi && !vhi)
			return;
		VIEW_EACH(off) {
			int64_t v = elem_at(b, off, esize);
			nlo += v == vlo;
			nhi += v == vhi;
		}
		VIEW_EACH(off) {
			int64_t v = elem_at(b, off, esize);
			int hi = v == vhi && (nhi <= EXTREME_TIES || hi_first);
			int lo = v == vlo && vlo < 0 && (nlo <= EXTREME_TIES || lo_first);
			if (hi || lo)
				mark_span(spans, off, esize);
			hi_first &= !(v == vhi);
			lo_first &= !(v == vlo);
		}
		return;
	}
	/* the percentile of the values that are not zero: a table sized for
	 * the largest batch is mostly zeros past the one in use, and then
	 * every index in use would stand out */
	if (!nnz)
		return;
	p90 = select_kth(mag, nnz, nnz * 9 / 10);
	thr = p90 > UINT64_MAX / 64 ? UINT64_MAX : p90 * 64 > 4096 ? p90 * 64 : 4096;
	sign_rule = nonneg * 10 >= n * 9;
	VIEW_EACH(off) {
		int64_t v = elem_at(b, off, esize);
		if ((sign_rule && v < 0) || mag64(v) > thr)
			mark_span(spans, off, esize);
	}
}

/* A region's marks (both views of [lo, hi)) into map, when they are
 * outliers at all: some, and no more than OUTLIERS_MAX nor a quarter of
 * the region's words.  The marks added. */
static size_t region_outliers(const struct strbuf *data, size_t lo, size_t hi, uint64_t dst, const unsigned char *pw,
			      enum guess how, unsigned char *map, unsigned char *m, uint64_t *scratch)
{
	const unsigned char *b = (const unsigned char *)data->buf;
	size_t first8 = memmap_first_aligned(dst), nmap = data->len / 8 + 2, w0 = lo / 8, cnt = 0, added = 0;
	size_t w1 = hi / 8 + 2 < nmap ? hi / 8 + 2 : nmap;

	/* m: the caller's map as large as map, all zeros, left so (only the
	 * region's words are touched) */
	view_outliers(b, data->len, lo, hi, (4 - (dst & 3)) & 3, 4, pw, m, first8, how, scratch);
	view_outliers(b, data->len, lo, hi, first8, 8, pw, m, first8, how, scratch);
	for (size_t w = w0; w < w1; w++)
		cnt += m[w];
	if (cnt && cnt <= OUTLIERS_MAX && cnt * 4 <= (hi - lo) / 8)
		for (size_t w = w0; w < w1; w++)
			if (m[w] && !map[w]) {
				map[w] = 1;
				added++;
			}
	memset(m + w0, 0, w1 - w0);
	return added;
}

/* Where the launches of c point into the copy of `len` bytes at dst (a
 * tensor inside an allocator's segment): the byte offsets, ascending,
 * at most WINDOW_STARTS of them, into starts; how many. */
#define WINDOW_STARTS 16
static size_t param_starts(const struct cand *c, uint64_t dst, size_t len, size_t *starts)
{
	size_t n = 0;

	for (size_t i = 0; i < c->n; i++) {
		const struct tr_launch *l = &c->it[i].rec.u.launch;
		if (c->it[i].rec.type != TR_LAUNCH || !l->args)
			continue;
		for (uint32_t off = 0; off + 8 <= l->argsize; off += 8) {
			uint64_t v;
			size_t k;
			memcpy(&v, l->args + off, 8);
			if (v < dst || v - dst >= len)
				continue;
			for (k = 0; k < n && starts[k] != v - dst; k++)
				;
			if (k == n && n < WINDOW_STARTS)
				starts[n++] = (size_t)(v - dst);
		}
	}
	for (size_t a = 1; a < n; a++)     /* insertion sort: a few */
		for (size_t b = a; b > 0 && starts[b - 1] > starts[b]; b--) {
			size_t t = starts[b];
			starts[b] = starts[b - 1];
			starts[b - 1] = t;
		}
	return n;
}

/* The third guess (GUESS_HEADS), for a copy launches point into (an
 * allocator segment) where no value stood out: the head of each tensor a
 * parameter points at, HEAD_BYTES up to the next place a parameter
 * points, its words that are neither zeros nor pointers.  An index tensor
 * whose every entry is the same wild value (gemm-then-fault's 256 copies
 * of 1 << 28) has no outlier nor extreme, and the chunk search took 16
 * faulting candidates over its 2 MiB segment on the H200.  Returns the map
 * as outlier_words does; none when the heads are a quarter of the copy's
 * words or more (the chunk search is as good). */
#define HEAD_BYTES 512
static unsigned char *param_heads(const struct cand *c, const struct strbuf *data, uint64_t dst,
				  const unsigned char *pw, size_t *count)
{
	size_t starts[WINDOW_STARTS], ns = c ? param_starts(c, dst, data->len, starts) : 0;
	size_t first8 = memmap_first_aligned(dst);
	unsigned char *map;

	*count = 0;
	if (!ns)
		return NULL;
	map = xcalloc(data->len / 8 + 2, 1);
	for (size_t k = 0; k < ns; k++) {
		size_t hi = k + 1 < ns && starts[k + 1] < starts[k] + HEAD_BYTES ? starts[k + 1] : starts[k] + HEAD_BYTES;
		for (size_t off = starts[k] < first8 ? first8 : first8 + (starts[k] - first8 + 7) / 8 * 8;
		     off + 8 <= hi && off + 8 <= data->len; off += 8) {
			uint64_t v;
			memcpy(&v, data->buf + off, 8);
			if (v && !covers_pointer(pw, off, 8) && !map[off / 8]) {
				mark_span(map, off, 8);
				(*count)++;
			}
		}
	}
	if (!*count || *count * 4 >= data->len / 8) {
		free(map);
		map = NULL;
		*count = 0;
	}
	return map;
}

/* 1 when outlier_words looks at copy `item` of c: all of it, or windows
 * where a launch points into it (its bytes are read for that alone). */
static int outliers_scanned(const struct cand *c, size_t item)
{
	const struct tr_copy *cp = &c->it[item].rec.u.copy;
	size_t starts[WINDOW_STARTS];
	return cp->size <= OUTLIERS_SCAN_MAX ||
	       (cp->size <= OUTLIERS_READ_MAX && param_starts(c, cp->dst, cp->size, starts) > 0);
}

/*
 * The values that stand out of a copy's others, where the fault most
 * often lies: an index table's -1 padding or 2^40 sentinel among small
 * indices, an offset past the rest.  The bytes are read as 4-byte and as
 * 8-byte signed elements (at device alignment; pointer words left out),
 * and in each view an element stands out when most of the view (9 in 10)
 * is non-negative and it is negative, or when its magnitude is more than
 * 64 times the 90th percentile of the view's values that are not zero
 * (and at least 4096).  A view that does not fit (floats of both signs,
 * all large) finds nothing.  The whole copy is one region; and where a
 * launch of c points into the copy (a tensor in an allocator's segment,
 * whose neighbours are other tensors: floats beside the indices), so is
 * each window from there, 512 bytes to 128 KiB (up to the next place a
 * launch points to): the one that holds the tensor alone finds its
 * outliers.  A region's marks count when there are some and not too many
 * to be outliers (more than OUTLIERS_MAX, or a quarter of its words).
 * Each element found marks the 8-byte spans it touches: returns a 0/1 map
 * indexed by byte offset / 8 (as pointer_words) and sets *count to its
 * marks; NULL and 0 when there are none.
 */
static unsigned char *outlier_words(const struct cand *c, const struct strbuf *data, uint64_t dst,
				    const unsigned char *pw, enum guess how, size_t *count)
{
	static const size_t widths[] = { 512, 2048, 8192, 32768, 131072 };
	unsigned char *map, *m;
	uint64_t *scratch;
	size_t starts[WINDOW_STARTS], ns;

	*count = 0;
	if (how == GUESS_HEADS)
		return param_heads(c, data, dst, pw, count);
	if (data->len < 64)
		return NULL;
	map = xcalloc(data->len / 8 + 2, 1);
	/* the regions' scratch, once for them all: their marks, the views'
	 * magnitudes */
	m = xcalloc(data->len / 8 + 2, 1);
	scratch = xmalloc(((data->len <= OUTLIERS_SCAN_MAX ? data->len : 131072) / 4 + 2) * sizeof(*scratch));
	if (data->len <= OUTLIERS_SCAN_MAX)
		*count += region_outliers(data, 0, data->len, dst, pw, how, map, m, scratch);
	ns = c ? param_starts(c, dst, data->len, starts) : 0;
	for (size_t k = 0; k < ns; k++) {
		size_t limit = k + 1 < ns ? starts[k + 1] : data->len, prev = 0;
		if (starts[k] == 0 && limit == data->len && data->len <= OUTLIERS_SCAN_MAX)
			continue;   /* the whole copy, done */
		for (size_t j = 0; j < sizeof(widths) / sizeof(widths[0]); j++) {
			size_t hi = limit - starts[k] < widths[j] ? limit : starts[k] + widths[j];
			if (hi == prev)
				break;
			prev = hi;
			if (hi - starts[k] >= 128)
				*count += region_outliers(data, starts[k], hi, dst, pw, how, map, m, scratch);
		}
	}
	free(m);
	free(scratch);
	if (!*count) {
		free(map);
		map = NULL;
	}
	return map;
}

/* The 8-byte words of a copy of `size` bytes at device alignment first8
 * (a shorter head and tail word where the copy's edges cut one), as
 * ranges; with sel, only the words sel or pw marks. */
static struct range *word_ranges(uint64_t size, size_t first8, const unsigned char *sel, const unsigned char *pw,
				 size_t *n)
{
	struct range *w = NULL;
	size_t nw = 0, aw = 0;
	for (uint64_t off = 0; off < size;) {
		uint64_t end = off < first8 ? first8 : off + 8;
		if (end > size)
			end = size;
		if (!sel || covers_pointer(sel, off, end - off) || covers_pointer(pw, off, end - off)) {
			ALLOC_GROW(w, nw + 1, aw);
			w[nw].off = off;
			w[nw].len = end - off;
			nw++;
		}
		off = end;
	}
	*n = nw;
	return w;
}

/* After a guess faulted: words at[0..k) of its n (k <= WINDOW_STARTS)
 * each alone (with the `fixed` ones, may be NULL), side by side in one
 * batch through fn (data_oracle, guess_oracle).  1 when one faulted: keep
 * (n bytes) then keeps that word (the first such in at[]'s order); 0
 * leaves keep alone. */
static int one_alone(ddmin_oracle fn, void *arg, const unsigned char *fixed, size_t n, const size_t *at,
		     size_t k, unsigned char *keep)
{
	unsigned char *m[WINDOW_STARTS];
	int res[WINDOW_STARTS] = { 0 }, won = 0;

	if (k < 1)
		return 0;
	for (size_t j = 0; j < k; j++) {
		m[j] = xmalloc(n + 1);
		for (size_t i = 0; i < n; i++)
			m[j][i] = (fixed && fixed[i]) || i == at[j];
	}
	if (fn(arg, (const unsigned char *const *)m, k, n, res) == 0)
		for (size_t j = 0; j < k && !won; j++)
			if (res[j]) {
				memcpy(keep, m[j], n);
				won = 1;
			}
	for (size_t j = 0; j < k; j++)
		free(m[j]);
	return won;
}

/* Word i, of value v (its 8 bytes, or fewer at a copy's edge), into at[]
 * when no word of that value is there yet: 1 added, 0 already there, -1
 * when at[] holds WINDOW_STARTS values already. */
static int value_first(uint64_t *val, size_t *at, size_t *k, uint64_t v, size_t i)
{
	for (size_t j = 0; j < *k; j++)
		if (val[j] == v)
			return 0;
	if (*k == WINDOW_STARTS)
		return -1;
	val[*k] = v;
	at[(*k)++] = i;
	return 1;
}

/* The 8 bytes (fewer at its end) of range r of data, 0 past it. */
static uint64_t range_value(const struct strbuf *data, const struct range *r)
{
	uint64_t v = 0;
	if (r->off + r->len <= data->len)
		memcpy(&v, data->buf + r->off, r->len < 8 ? r->len : 8);
	return v;
}

/* The words one_alone tries after a guess faulted, into at[] (how many;
 * 0: more than WINDOW_STARTS, ddmin instead).  The heads guess: each
 * head's first word (an index tensor of one wild value throughout faults
 * by its first entry, the heads of the float tensors beside it do not).
 * The outliers and extremes: one word of each value they hold (ties and
 * padding are one value: one fault where ddmin's parts faulted once each;
 * the other extremes run clean). */
static size_t alone_words(enum guess how, const struct strbuf *data, const struct range *w,
			  const unsigned char *fixed, size_t nw, size_t *at)
{
	uint64_t val[WINDOW_STARTS];
	size_t k = 0, prev = (size_t)-1;

	for (size_t i = 0; i < nw; i++) {
		if (fixed[i])
			continue;
		if (how == GUESS_HEADS) {
			int first = prev == (size_t)-1 || w[prev].off + w[prev].len != w[i].off;
			prev = i;
			if (!first)
				continue;
			if (k == WINDOW_STARTS)
				return 0;
			at[k++] = i;
		} else if (value_first(val, at, &k, range_value(data, &w[i]), i) < 0) {
			return 0;
		}
	}
	return k;
}

/*
 * The likely outcome first, for a copy's bytes: keep only its outliers
 * (outlier_words) and its pointer words, zeros elsewhere, tested alone;
 * when nothing stands out or that runs clean, its extremes the same way
 * (the largest value, the smallest when negative: a label one past the
 * class count), then the heads of the tensors the launch points into
 * (param_heads).  When one faults, one word of each value it holds (each
 * head's first word, for the heads) goes alone next, side by side
 * (alone_words, one_alone); when none of those faults, ddmin goes on over
 * the guess's words only:
 * an index table whose one wild entry faults is found in one fault and a
 * few clean runs, where the chunk search costs a fault each round (8-16
 * faulting candidates for the samples' index tables on the H100, 0.3 s
 * each).  A guess that runs clean cost one clean run.  1 when one
 * faulted: d's chunks and *keep are then the minimized words, *n their
 * count.
 */
static int guess_faults(struct data_dd *d, const struct strbuf *data, const unsigned char *pw, enum guess how,
			const unsigned char *tried, unsigned char **sel_out, unsigned char **keep, size_t *n)
{
	const struct item *it = &d->base->it[d->item];
	uint64_t size = it->rec.u.copy.size;
	size_t cnt, nw;
	unsigned char *sel = outlier_words(d->base, data, it->rec.u.copy.dst, pw, how, &cnt), *mk, *fixed;
	const unsigned char *masks[1];
	struct range *w;
	int res = 0;

	*sel_out = NULL;
	if (!sel)
		return 0;
	if (tried && !memcmp(sel, tried, size / 8 + 2)) {
		free(sel);     /* the same words as the guess before */
		return 0;
	}
	w = word_ranges(size, memmap_first_aligned(it->rec.u.copy.dst), sel, pw, &nw);
	*sel_out = sel;
	mk = xmalloc(nw + 1);
	memset(mk, 1, nw + 1);
	masks[0] = mk;
	{
		struct range *saved = d->chunks;
		d->chunks = w;
		if (data_oracle(d, masks, 1, nw, &res) < 0 || !res) {
			d->chunks = saved;
			free(w);
			free(mk);
			return 0;
		}
		free(saved);
	}
	fixed = xcalloc(nw + 1, 1);
	for (size_t i = 0; i < nw; i++)
		fixed[i] = (unsigned char)covers_pointer(pw, w[i].off, w[i].len);
	if (nw > 1) {
		size_t at[WINDOW_STARTS], k = alone_words(how, data, w, fixed, nw, at);
		if (!one_alone(data_oracle, d, fixed, nw, at, k, mk))
			/* each guessed word likely faults alone (tied maxima, padding entries) */
			ddmin_run_redundant(mk, fixed, nw, oracle_dd_width(d->o), data_oracle, d, NULL);
	}
	free(fixed);
	free(*keep);
	*keep = mk;
	*n = nw;
	return 1;
}

static int outliers_fault(struct data_dd *d, const unsigned char *pw, unsigned char **keep, size_t *n)
{
	const struct item *it = &d->base->it[d->item];
	struct strbuf data = STRBUF_INIT, e = STRBUF_INIT;
	unsigned char *first = NULL, *second = NULL, *third = NULL;
	int won = 0;

	/* the copy's bytes, read once for the three guesses */
	if (outliers_scanned(d->base, d->item) && trace_blob_read(it->src, it->rec.u.copy.blob, &data, 0, &e) == 0)
		won = guess_faults(d, &data, pw, GUESS_OUTLIERS, NULL, &first, keep, n) ||
		      (!oracle_stopped(d->o) && guess_faults(d, &data, pw, GUESS_EXTREMES, first, &second, keep, n)) ||
		      (!oracle_stopped(d->o) &&
		       guess_faults(d, &data, pw, GUESS_HEADS, second ? second : first, &third, keep, n));
	free(first);
	free(second);
	free(third);
	sb_release(&data);
	sb_release(&e);
	return won;
}

/* Keep only the chunks of one buffer that matter: ddmin over coarse chunks,
 * then over 8-byte words inside the kept ones.  Pointer words stay, and a
 * copy that has them first tries keeping only those (only_fixed_faults);
 * one without, or where they are not enough, tries its outliers
 * (outliers_fault) before the chunk search.
 * Returns 1 when *best changed; 0 when every word is needed (the copy
 * stays as captured, not rewritten as zeros and the same bytes: the same
 * trace in other bytes, which no outcome cache or recall would know). */
static int minimize_chunks(struct oracle *o, struct cand *best, size_t item, const unsigned char *pw)
{
	uint64_t size = best->it[item].rec.u.copy.size;
	struct data_dd d = { o, best, item, NULL };
	size_t n = size / 8 < 64 ? (size_t)((size + 7) / 8) : 64;
	unsigned char *keep, *fixed;

	int all = 1;

	if (!n)
		return 0;
	d.chunks = xcalloc(n, sizeof(struct range));
	/* chunk edges on 8-byte boundaries, so words below are whole elements */
	for (size_t i = 0; i < n; i++) {
		uint64_t lo = (size * i / n) & ~(uint64_t)7, hi = i + 1 == n ? size : (size * (i + 1) / n) & ~(uint64_t)7;
		d.chunks[i].off = lo;
		d.chunks[i].len = hi > lo ? hi - lo : 0;
	}
	keep = xmalloc(n);
	memset(keep, 1, n);
	fixed = xcalloc(n, 1);
	for (size_t i = 0; i < n; i++)
		fixed[i] = (unsigned char)covers_pointer(pw, d.chunks[i].off, d.chunks[i].len);
	if (pw && only_fixed_faults(&d, keep, fixed, n)) {
		/* the refinement below keeps the pointer words alone */
	} else if (outliers_fault(&d, pw, &keep, &n)) {
		free(fixed);
		goto done;
	} else {
		ddmin_run_width(keep, fixed, n, oracle_dd_width(o), data_oracle, &d, NULL);
	}
	free(fixed);
	/* refine: split each kept chunk into 8-byte words */
	{
		struct range *words = NULL;
		size_t nw = 0, aw = 0;
		for (size_t i = 0; i < n; i++) {
			if (!keep[i])
				continue;
			for (uint64_t o = d.chunks[i].off; o < d.chunks[i].off + d.chunks[i].len; o += 8) {
				ALLOC_GROW(words, nw + 1, aw);
				words[nw].off = o;
				words[nw].len = d.chunks[i].off + d.chunks[i].len - o < 8 ?
						d.chunks[i].off + d.chunks[i].len - o : 8;
				nw++;
			}
		}
		free(d.chunks);
		free(keep);
		d.chunks = words;
		n = nw;
		keep = xmalloc(n + 1);
		memset(keep, 1, n);
		fixed = xcalloc(n + 1, 1);
		for (size_t i = 0; i < n; i++)
			fixed[i] = (unsigned char)covers_pointer(pw, d.chunks[i].off, d.chunks[i].len);
		if (n > 1 && n <= 4096 && !(pw && only_fixed_faults(&d, keep, fixed, n)))
			ddmin_run_width(keep, fixed, n, oracle_dd_width(o), data_oracle, &d, NULL);
		free(fixed);
	}
done:
	{
		/* (the words left cover only the chunks the first search kept) */
		uint64_t kept = 0;
		for (size_t i = 0; i < n; i++)
			kept += keep[i] ? d.chunks[i].len : 0;
		all = kept == size;
	}
	if (!all) {
		struct cand out;
		apply_data_mask(&d, keep, n, &out);
		cand_release(best);
		*best = out;
	}
	free(keep);
	free(d.chunks);
	return !all;
}

/* 1 when item i is a copy the loop in phase_data looks at */
static int data_item(const struct cand *c, size_t i)
{
	const struct item *it = &c->it[i];
	return it->rec.type == TR_MEMCPY_H2D && it->data_mode == DATA_ORIG && it->rec.u.copy.size;
}

/* ---- one guess for every copy ---------------------------------------------- */

/*
 * The data phase's likely outcome, for all of a state's copies at once
 * (issue 26): each copy zeros, except its pointer words and its outliers
 * (outlier_words) where it has them.  That one candidate is what the
 * per-copy search below most often ends with, after a fault per copy
 * (ipc-table's 6 on the H100: a worker's new context each, 0.1-0.7 s);
 * tested alone it costs one fault when right and one clean run when not.
 * The words it keeps are then cut down by ddmin (guess_refine): a table's
 * padding entries each fault alone, so ddmin's redundant order finds one
 * in a few faults.
 */
struct guess_word {
	size_t item;
	struct range r;
};

/* The words of each copy the guess sets, item by item in the order
 * added: copy k's pointer words are fx[fx_at[k] .. fx_at[k + 1]) and its
 * others w[w_at[k] .. w_at[k + 1]), each list in offset order. */
struct guess_dd {
	struct oracle *o;
	const struct cand *base;
	size_t *items, nitems;          /* the copies the guess sets */
	size_t *fx_at, *w_at;           /* nitems + 1 each */
	struct guess_word *fx, *w;      /* pointer words (kept), the others (ddmin's) */
	size_t nfx, nw, afx, aw;
};

static void guess_release(struct guess_dd *g)
{
	free(g->items);
	free(g->fx_at);
	free(g->w_at);
	free(g->fx);
	free(g->w);
	memset(g, 0, sizeof(*g));
}

/* Open the next copy's lists (guess_add_word appends to it). */
static void guess_open_item(struct guess_dd *g, size_t item)
{
	g->items[g->nitems] = item;
	g->fx_at[g->nitems] = g->nfx;
	g->w_at[g->nitems] = g->nw;
	g->nitems++;
	g->fx_at[g->nitems] = g->nfx;
	g->w_at[g->nitems] = g->nw;
}

static void guess_add_word(struct guess_dd *g, size_t item, uint64_t off, uint64_t len, int pointer)
{
	if (pointer) {
		ALLOC_GROW(g->fx, g->nfx + 1, g->afx);
		g->fx[g->nfx++] = (struct guess_word){ item, { off, len } };
	} else {
		ALLOC_GROW(g->w, g->nw + 1, g->aw);
		g->w[g->nw++] = (struct guess_word){ item, { off, len } };
	}
	g->fx_at[g->nitems] = g->nfx;
	g->w_at[g->nitems] = g->nw;
}

/* Append r to keep[0..*n), merged with the last range when they touch. */
static void keep_append(struct range *keep, size_t *n, struct range r)
{
	if (*n && keep[*n - 1].off + keep[*n - 1].len == r.off)
		keep[*n - 1].len += r.len;
	else
		keep[(*n)++] = r;
}

/* The guess with mask[j] choosing g->w[j]: each copy of g->items keeps its
 * pointer words and the chosen words, zeros elsewhere (zeros alone when it
 * keeps none; as captured when it keeps all). */
static void apply_guess_mask(const void *dv, const unsigned char *mask, size_t n, struct cand *out)
{
	const struct guess_dd *g = dv;
	(void)n;
	cand_copy(out, g->base);
	for (size_t k = 0; k < g->nitems; k++) {
		struct item *it = &out->it[g->items[k]];
		size_t a = g->fx_at[k], ae = g->fx_at[k + 1], b = g->w_at[k], be = g->w_at[k + 1], nr = 0;
		free(it->keep);
		it->keep = xcalloc(ae - a + be - b + 1, sizeof(struct range));
		/* the two lists, each in offset order, merged */
		while (a < ae || b < be) {
			if (b < be && !mask[b]) {
				b++;
			} else if (a < ae && (b == be || g->fx[a].r.off < g->w[b].r.off)) {
				keep_append(it->keep, &nr, g->fx[a++].r);
			} else {
				keep_append(it->keep, &nr, g->w[b++].r);
			}
		}
		it->nkeep = nr;
		/* all of it kept: the copy as captured (as minimize_chunks
		 * leaves it), not zeros and the same bytes */
		if (nr == 1 && it->keep[0].off == 0 && it->keep[0].len == it->rec.u.copy.size) {
			it->data_mode = DATA_ORIG;
			it->nkeep = 0;
		} else {
			it->data_mode = nr ? DATA_KEEP : DATA_ZERO;
		}
		if (!it->nkeep) {
			free(it->keep);
			it->keep = NULL;
		}
	}
}

static int guess_oracle(void *arg, const unsigned char *const *masks, size_t k, size_t n, int *res)
{
	struct guess_dd *g = arg;
	return oracle_test_masks(g->o, g, apply_guess_mask, masks, k, n, res);
}

/* The 8-byte words of [off, off + len) of a copy at device alignment
 * first8 (the copy's head before first8 is one shorter word), each added
 * to g as a pointer word when pw marks it. */
static void guess_add_span(struct guess_dd *g, size_t item, uint64_t off, uint64_t len, size_t first8,
			   const unsigned char *pw)
{
	uint64_t end = off + len;
	while (off < end) {
		uint64_t next = off < first8 ? first8 : first8 + ((off - first8) / 8 + 1) * 8;
		if (next > end)
			next = end;
		guess_add_word(g, item, off, next - off, covers_pointer(pw, off, next - off));
		off = next;
	}
}

static void guess_alloc(struct guess_dd *g, const struct cand *state)
{
	memset(g, 0, sizeof(*g));
	g->base = state;
	g->items = xmalloc((state->n + 1) * sizeof(size_t));
	g->fx_at = xcalloc(state->n + 2, sizeof(size_t));
	g->w_at = xcalloc(state->n + 2, sizeof(size_t));
}

/* The guess for every copy of *state still as captured (but big ones:
 * the per-copy loop reads those, as the zeros' runs leave them): 0 when
 * it would change nothing (no such copy, each kept whole, or
 * GPUREDUCE_SHRINK_SERIAL=1). */
static int guess_build(const struct cand *state, struct guess_dd *g)
{
	int changes = 0;

	guess_alloc(g, state);
	if (phase_serial())
		return 0;
	for (size_t i = 0; i < state->n; i++) {
		const struct item *it = &state->it[i];
		struct strbuf data = STRBUF_INIT, e = STRBUF_INIT;
		unsigned char *pw, *sel = NULL;
		uint64_t size = it->rec.u.copy.size;
		size_t cnt = 0, fx0, first8;

		if (!data_item(state, i) || size >= DATA_BIG_BYTES)
			continue;
		guess_open_item(g, i);
		/* the copy's bytes, read once for its pointer words and outliers */
		if (trace_blob_read(it->src, it->rec.u.copy.blob, &data, 0, &e) == 0) {
			pw = pointer_words_in(state, i, &data);
			if (outliers_scanned(state, i) && data.len == size)
				sel = outlier_words(state, &data, it->rec.u.copy.dst, pw, GUESS_OUTLIERS, &cnt);
		} else {
			pw = NULL;
		}
		fx0 = g->nfx;
		first8 = memmap_first_aligned(it->rec.u.copy.dst);
		if (pw || sel) {
			/* the words either marks (with no outliers, pw stands for
			 * sel: its words alone) */
			size_t nr;
			struct range *r = word_ranges(size, first8, sel ? sel : pw, pw, &nr);
			for (size_t j = 0; j < nr; j++)
				guess_add_word(g, i, r[j].off, r[j].len, covers_pointer(pw, r[j].off, r[j].len));
			free(r);
		}
		/* a change unless every word stays (pointer words alone) */
		{
			uint64_t kept = 0;
			for (size_t j = fx0; j < g->nfx; j++)
				kept += g->fx[j].r.len;
			changes |= kept != size || g->w_at[g->nitems] > g->w_at[g->nitems - 1];
		}
		free(pw);
		free(sel);
		sb_release(&data);
		sb_release(&e);
	}
	return changes;
}

int phase_data_guess(const struct cand *state, struct cand *bare, struct cand *guess)
{
	struct guess_dd g;
	unsigned char *mask;
	int made = guess_build(state, &g);

	if (made) {
		mask = xcalloc(g.nw + 1, 1);
		apply_guess_mask(&g, mask, g.nw, bare);
		if (g.nw) {
			memset(mask, 1, g.nw + 1);
			apply_guess_mask(&g, mask, g.nw, guess);
			made = 2;
		}
		free(mask);
	}
	guess_release(&g);
	return made;
}

/* The guess, bare first: 1 when one faulted (*best is then that one,
 * and *was, when given, the state before), 0 when neither did or there
 * is none, -1 on a lost batch. */
int phase_data_guess_test(struct oracle *o, struct cand *best, struct cand *was)
{
	struct cand bare = CAND_INIT, guess = CAND_INIT;
	struct cand *pick = NULL;
	int n = phase_data_guess(best, &bare, &guess), r = 0;

	if (n >= 1)
		r = oracle_test_one(o, &bare);
	if (r == 1)
		pick = &bare;
	else if (r == 0 && n == 2 && !oracle_stopped(o) && (r = oracle_test_one(o, &guess)) == 1)
		pick = &guess;
	if (pick) {
		if (was) {
			cand_release(was);
			*was = *best;
		} else {
			cand_release(best);
		}
		*best = *pick;
		*pick = (struct cand)CAND_INIT;
	}
	cand_release(&bare);
	cand_release(&guess);
	return r;
}

/* After the guess's words proved needed: one word of each value they hold
 * alone, side by side (alone_words' rule for a copy's guess, over every
 * copy the guess set): a ragged batch's padding, one value in a hundred
 * entries, is one fault where ddmin's parts faulted once each.  1 when
 * one faulted (keep then has that word alone); 0 when none did, or when
 * the words hold more than WINDOW_STARTS values. */
static int guess_value_alone(struct guess_dd *g, const struct cand *best, unsigned char *keep)
{
	uint64_t val[WINDOW_STARTS];
	size_t at[WINDOW_STARTS], k = 0;
	int many = 0;

	for (size_t q = 0; q < g->nitems && !many; q++) {
		const struct item *it = &best->it[g->items[q]];
		struct strbuf data = STRBUF_INIT, e = STRBUF_INIT;
		if (trace_blob_read(it->src, it->rec.u.copy.blob, &data, 0, &e) < 0)
			many = 1;   /* (not decided here: ddmin as before) */
		for (size_t j = g->w_at[q]; j < g->w_at[q + 1] && !many; j++)
			many = value_first(val, at, &k, range_value(&data, &g->w[j].r), j) < 0;
		sb_release(&data);
		sb_release(&e);
	}
	return !many && one_alone(guess_oracle, g, NULL, g->nw, at, k, keep);
}

/* After a guess was kept: ddmin over the words it kept beside the pointer
 * words (the copies the guess set are DATA_KEEP: every word of their keep
 * ranges that is no pointer word), none of them first, then one word of
 * each value alone (guess_value_alone).  1 when *best changed. */
static int guess_refine(struct oracle *o, struct cand *best)
{
	struct guess_dd g;
	unsigned char *keep;
	size_t kept;
	int changed = 0;

	guess_alloc(&g, best);
	g.o = o;
	for (size_t i = 0; i < best->n; i++) {
		const struct item *it = &best->it[i];
		unsigned char *pw;
		size_t first8 = memmap_first_aligned(it->rec.u.copy.dst);
		if (it->rec.type != TR_MEMCPY_H2D || it->data_mode != DATA_KEEP || !it->nkeep)
			continue;
		guess_open_item(&g, i);
		pw = pointer_words(best, i);
		for (size_t q = 0; q < it->nkeep; q++)
			guess_add_span(&g, i, it->keep[q].off, it->keep[q].len, first8, pw);
		free(pw);
	}
	if (g.nw >= 1) {
		const unsigned char *masks[1];
		int res = 0;
		/* none of them first, alone: a fault that does not need the
		 * words would fault in every round of ddmin (one fault instead,
		 * and one clean run when they do matter) */
		keep = xcalloc(g.nw + 1, 1);
		masks[0] = keep;
		if (guess_oracle(&g, masks, 1, g.nw, &res) < 0) {
			kept = g.nw;    /* lost: nothing decided */
		} else if (res) {
			kept = 0;
		} else if (g.nw == 1) {
			kept = 1;       /* the one word is needed */
		} else if (!oracle_stopped(o) && guess_value_alone(&g, best, keep)) {
			kept = 1;
		} else {
			memset(keep, 1, g.nw + 1);
			kept = ddmin_run_redundant(keep, NULL, g.nw, oracle_dd_width(o), guess_oracle, &g, NULL);
		}
		if (kept < g.nw) {
			struct cand out;
			apply_guess_mask(&g, keep, g.nw, &out);
			cand_release(best);
			*best = out;
			changed = 1;
		}
		free(keep);
	}
	guess_release(&g);
	return changed;
}

/*
 * The likely outcome first (issue 26): most copies a faulting launch
 * reads can be zeros, so the next run of plain copies (no pointer words,
 * not big) from item `from` on is decided as one chain, cumulatively: Z1
 * zeroes the first copy, Z2 the first two, ...  oracle_test_chain tests
 * Zm alone first (each fault costs a worker's new context on a GPU, one
 * after another, ~0.3 s on the H200: a chain in which all fault would
 * cost m where Zm alone tells the same), then, when Zm does not fault,
 * Z1..Zm-1 as one batch; after a run that broke, the next one goes out
 * as one batch (*top_first).  The longest run Z1..Zq that all fault is where
 * the loop below, testing one copy after the other on the state the
 * previous one left, would have arrived: *best becomes Zq and the index
 * of the first copy not decided is returned (the loop goes on there).
 * (When Zm faults but some Zi would not, Zm is kept: still the fault,
 * with more zeros than the one-at-a-time order would have left.)
 * Returns `from` when nothing was decided, or on a lost batch (the loop's
 * own test then says so).  *broke_at gets the copy whose zeros ended the
 * run (a run starting there would be wasted: its Z1 does not fault).
 */
/* The chain of zero_run from item `from` of *best into cs[0..m) (Z1..Zm),
 * at most `maxc` in all, their items into idx[]; m, or 0 when fewer than
 * two plain copies follow (no run). */
static size_t zero_run_build(const struct cand *best, size_t from, size_t maxc, size_t *idx, struct cand *cs)
{
	size_t m = 0;

	if (maxc > ZERO_RUN_MAX)
		maxc = ZERO_RUN_MAX;
	for (size_t i = from; i < best->n && m < maxc; i++) {
		unsigned char *pw;
		if (!data_item(best, i))
			continue;
		if (best->it[i].rec.u.copy.size >= DATA_BIG_BYTES)
			break;
		if ((pw = pointer_words(best, i))) {
			free(pw);
			break;
		}
		idx[m++] = i;
	}
	if (m < 2)
		return 0;
	for (size_t j = 0; j < m; j++) {
		cand_copy(&cs[j], j ? &cs[j - 1] : best);
		cs[j].it[idx[j]].data_mode = DATA_ZERO;
	}
	return m;
}

static size_t zero_run(struct oracle *o, struct cand *best, size_t from, int *changed, size_t *broke_at,
		       int *top_first)
{
	size_t idx[ZERO_RUN_MAX], m, q, next = from;
	struct cand cs[ZERO_RUN_MAX];

	/* no wider than the pool: a batch of more jobs than workers takes two
	 * rounds (and leaves untested candidate files waiting) */
	if (!(m = zero_run_build(best, from, oracle_dd_width(o), idx, cs)))
		return from;
	if (oracle_test_chain(o, cs, m, top_first, best, &q) < 0)
		return from;
	if (q) {
		*changed = 1;
		next = idx[q - 1] + 1;
	}
	if (q < m)
		*broke_at = idx[q];   /* its zeros are known not to fault */
	return next;
}

size_t phase_data_plan(const struct cand *state, struct cand *out, size_t max, size_t *chain)
{
	size_t idx[ZERO_RUN_MAX], i = 0, m;
	unsigned char *pw;

	*chain = 0;
	if (phase_serial())
		return 0;
	while (i < state->n && !data_item(state, i))
		i++;
	if (i == state->n)
		return 0;
	if ((m = zero_run_build(state, i, max, idx, out))) {
		*chain = m;
		return m;
	}
	/* one copy: the loop's own zeros, then its fill (not a big buffer's
	 * fill, nor the chunk search of pointer words) */
	if (max < 2 || state->it[i].rec.u.copy.size >= DATA_BIG_BYTES)
		return 0;
	if ((pw = pointer_words(state, i))) {
		free(pw);
		return 0;
	}
	cand_copy(&out[0], state);
	out[0].it[i].data_mode = DATA_ZERO;
	cand_copy(&out[1], state);
	out[1].it[i].data_mode = DATA_FILL;
	out[1].it[i].seed = 0x1234u + (uint32_t)i;
	*chain = 1;
	return 2;
}

void phase_data(struct oracle *o, const struct shrink_opts *opts, struct cand *best)
{
	int changed = 0, top_first = 1;
	size_t broke_at = (size_t)-1;
	oracle_phase_begin(o, phase_name(PH_DATA), best);
	/* the slice kept the guess (phase_data_guess): its words cut down;
	 * else the guess first, bare then whole, alone */
	changed |= guess_refine(o, best);
	if (!oracle_stopped(o) && phase_data_guess_test(o, best, NULL) == 1) {
		changed = 1;
		guess_refine(o, best);
	}
	for (size_t i = 0; i < best->n && !oracle_stopped(o); i++) {
		if (!data_item(best, i))
			continue;
		if (!phase_serial() && i != broke_at) {
			size_t next = zero_run(o, best, i, &changed, &broke_at, &top_first);
			if (next != i) {
				i = next - 1;
				continue;
			}
		}
		struct cand z = CAND_INIT, f = CAND_INIT;
		struct cand *two[2] = { &z, &f };
		int r[2] = { 0, 0 };
		unsigned char *pw = pointer_words(best, i);
		if (pw) {
			/* holds pointers: only the chunk search, pointer words fixed */
			changed |= minimize_chunks(o, best, i, pw);
			free(pw);
			continue;
		}
		cand_copy(&z, best);
		z.it[i].data_mode = DATA_ZERO;
		cand_copy(&f, best);
		f.it[i].data_mode = DATA_FILL;
		f.it[i].seed = 0x1234u + (uint32_t)i;
		/* zeros alone first: most often they fault, and then the fill
		 * (which would most likely fault too: one more worker's new
		 * context on a GPU) is not needed; a big buffer's fill also costs
		 * the worker seconds (the generator runs on the host) */
		if (oracle_test(o, two, 1, r) < 0) {
			cand_release(&z);
			cand_release(&f);
			break;
		}
		if (r[0]) {
			cand_release(best);
			*best = z;
			cand_release(&f);
			changed = 1;
			continue;
		}
		cand_release(&z);
		changed |= minimize_chunks(o, best, i, NULL);
		{
			/* a seeded fill reads better than most of a buffer's bytes:
			 * asked only when the search kept more than a quarter of
			 * them (an index table's fill faults too, one more fault for
			 * nothing when a few words were kept); GPUREDUCE_PREFER_FILL=1:
			 * whenever it faults (a test hook).  (A copy left as
			 * captured keeps all of it.) */
			uint64_t kept = best->it[i].data_mode == DATA_ORIG ? best->it[i].rec.u.copy.size : 0;
			for (size_t k = 0; k < best->it[i].nkeep; k++)
				kept += best->it[i].keep[k].len;
			if ((kept * 4 > best->it[i].rec.u.copy.size || getenv("GPUREDUCE_PREFER_FILL")) &&
			    !oracle_stopped(o)) {
				if (oracle_test(o, two + 1, 1, r + 1) < 0) {
					cand_release(&f);
					break;
				}
				if (r[1]) {
					cand_release(best);
					*best = f;
					changed = 1;
					continue;
				}
			}
		}
		cand_release(&f);
	}
	oracle_phase_end(o, best, changed ? "contents replaced" : "nothing to replace");
}
