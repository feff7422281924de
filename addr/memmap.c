/*
 * memmap.c - captured address space bookkeeping (see memmap.h).
 *
 * Live allocations are kept sorted by address for binary search; freed ones
 * are only found through a linear scan of `all`, newest first (rare: only
 * for values that hit no live allocation).
 */
#include <stdlib.h>
#include <string.h>

#include "../common/strbuf.h"
#include "../common/util.h"
#include "../trace/trace.h"
#include "memmap.h"

void memmap_release(struct memmap *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n; i++)
		free(m->all[i]);
	free(m->all);
	free(m->live);
	memset(m, 0, sizeof(*m));
}

/* First live index whose addr > v. */
static size_t upper(const struct memmap *m, uint64_t v)
{
	size_t lo = 0, hi = m->nlive;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->live[mid]->addr <= v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void live_remove(struct memmap *m, size_t i)
{
	memmove(m->live + i, m->live + i + 1, (m->nlive - i - 1) * sizeof(*m->live));
	m->nlive--;
}

struct mm_alloc *memmap_add(struct memmap *m, uint64_t addr, uint64_t size, uint32_t kind,
			    long event)
{
	struct mm_alloc *a = xcalloc(1, sizeof(*a));
	size_t pos;

	a->addr = addr;
	a->size = size;
	a->kind = kind;
	a->alloc_event = event;
	a->free_event = -1;
	a->index = m->n;
	ALLOC_GROW(m->all, m->n + 1, m->alloc);
	m->all[m->n++] = a;

	if (m->n == 1 || addr < m->lo)
		m->lo = addr;
	if (m->n == 1 || addr + size + 1 > m->hi)
		m->hi = addr + size + 1;
	/* Retire live allocations that overlap [addr, addr+size): live ones do
	 * not overlap each other, so they sit next to the insertion point. */
	{
		uint64_t end = addr + (size ? size : 1);
		size_t i = upper(m, addr);
		if (i > 0)
			i--;
		while (i < m->nlive && m->live[i]->addr < end) {
			struct mm_alloc *o = m->live[i];
			uint64_t oend = o->addr + (o->size ? o->size : 1);
			if (addr < oend) {
				o->free_event = event;
				live_remove(m, i);
			} else {
				i++;
			}
		}
	}
	pos = upper(m, addr);
	ALLOC_GROW(m->live, m->nlive + 1, m->live_alloc);
	memmove(m->live + pos + 1, m->live + pos, (m->nlive - pos) * sizeof(*m->live));
	m->live[pos] = a;
	m->nlive++;
	return a;
}

size_t memmap_live_from(const struct memmap *m, uint64_t addr)
{
	size_t i = upper(m, addr);
	if (i > 0) {
		const struct mm_alloc *o = m->live[i - 1];
		if (o->addr + (o->size ? o->size : 1) > addr)
			return i - 1;
	}
	return i;
}

struct mm_alloc *memmap_free(struct memmap *m, uint64_t addr, long event)
{
	size_t i = upper(m, addr);
	if (i == 0 || m->live[i - 1]->addr != addr)
		return NULL;
	struct mm_alloc *a = m->live[i - 1];
	a->free_event = event;
	live_remove(m, i - 1);
	return a;
}

struct mm_alloc *memmap_lookup_live(const struct memmap *m, uint64_t v)
{
	size_t i = upper(m, v);
	/* v may be one past the end of the allocation before it, or inside it;
	 * an allocation starting exactly at v was found as live[i-1]. */
	if (i > 0) {
		struct mm_alloc *a = m->live[i - 1];
		if (v - a->addr < a->size)
			return a;
		if (v - a->addr == a->size) {
			/* one past the end: prefer nothing else starting at v (that
			 * would have been live[i-1] itself) */
			return a;
		}
	}
	return NULL;
}

struct mm_alloc *memmap_lookup(const struct memmap *m, uint64_t v, int *dead)
{
	struct mm_alloc *a = memmap_lookup_live(m, v);
	if (dead)
		*dead = 0;
	if (a)
		return a;
	/* Zero and small values are scalars, not pointers; so is anything
	 * outside every allocation ever made (most float bit patterns). */
	if (v < MEMMAP_MIN_POINTER || v < m->lo || v >= m->hi)
		return NULL;
	for (size_t i = m->n; i-- > 0;) {
		struct mm_alloc *d = m->all[i];
		if (d->free_event >= 0 && v - d->addr <= d->size) {
			if (dead)
				*dead = 1;
			return d;
		}
	}
	return NULL;
}

struct mm_alloc *memmap_pointer_word(const struct memmap *m, uint64_t v, int *dead)
{
	if (dead)
		*dead = 0;
	/* the cheap test first: most words are small numbers or float bits
	 * outside every allocation ever made ([lo, hi) covers one past each
	 * end), and a buffer's content can be gigabytes of them */
	if (v < MEMMAP_MIN_POINTER || v < m->lo || v >= m->hi)
		return NULL;
	return memmap_lookup(m, v, dead);
}

struct mm_alloc *memmap_arg_word(const struct memmap *m, const struct tr_launch *l, uint32_t off,
				 uint64_t v, int *dead)
{
	if (dead)
		*dead = 0;
	if (l->nnonptr && tr_launch_nonptr(l, off))
		return NULL;
	return memmap_pointer_word(m, v, dead);
}

/* The scan of memmap_scan_words; with l, of l's argument words
 * (memmap_arg_word: its integer words left out). */
static size_t scan(const struct memmap *m, const void *bytes, size_t len, size_t first,
		   const struct tr_launch *l, memmap_word_fn fn, void *arg)
{
	const unsigned char *p = bytes;
	size_t found = 0;

	for (size_t off = first; off < len && len - off >= 8; off += 8) {
		uint64_t v;
		int dead;
		struct mm_alloc *a;
		memcpy(&v, p + off, 8);
		a = l ? memmap_arg_word(m, l, (uint32_t)off, v, &dead) : memmap_pointer_word(m, v, &dead);
		if (!a)
			continue;
		found++;
		if (fn && fn(a, off, v, dead, arg))
			break;
	}
	return found;
}

size_t memmap_scan_words(const struct memmap *m, const void *bytes, size_t len, size_t first,
			 memmap_word_fn fn, void *arg)
{
	return scan(m, bytes, len, first, NULL, fn, arg);
}

size_t memmap_scan_args(const struct memmap *m, const struct tr_launch *l, const uint8_t *args, size_t first,
			size_t end, memmap_word_fn fn, void *arg)
{
	return scan(m, args, end < l->argsize ? end : l->argsize, first, l, fn, arg);
}

int memmap_feed(struct memmap *m, const struct tr_rec *r, long event)
{
	if (r->type == TR_ALLOC) {
		memmap_add(m, r->u.alloc.addr, r->u.alloc.size, r->u.alloc.kind, event);
		return 1;
	}
	if (r->type == TR_FREE) {
		memmap_free(m, r->u.free.addr, event);
		return 1;
	}
	return 0;
}

int memmap_stray_word(const struct memmap *m, uint64_t v)
{
	const uint64_t near = 64ull << 30;
	if (v < (1ull << 32) || (v & 15) || m->hi <= m->lo)
		return 0;
	if (v + near < m->lo || v > m->hi + near)
		return 0;
	return !memmap_pointer_word(m, v, NULL);
}

/* The argument words of l replay passes as captured though they may be
 * pointers: stray ones (held 0: memmap_stray_word, the words the trace
 * knows are integers left out), or held ones (held 1: words the trace holds
 * to be integers, yet at or above 4 GiB and inside a live allocation).
 * How many; the first one's offset and value in *off and *val. */
static size_t unplaced_args(const struct memmap *m, const struct tr_launch *l, int held, uint32_t *off,
			    uint64_t *val)
{
	size_t n = 0;
	for (uint32_t o = 0; o + 8 <= l->argsize; o += 8) {
		uint64_t v;
		memcpy(&v, l->args + o, 8);
		if (held ? !tr_launch_nonptr(l, o) || v < (1ull << 32) || !memmap_lookup_live(m, v)
			 : tr_launch_nonptr(l, o) || !memmap_stray_word(m, v))
			continue;
		if (!n++) {
			if (off)
				*off = o;
			if (val)
				*val = v;
		}
	}
	return n;
}

size_t memmap_stray_args(const struct memmap *m, const struct tr_launch *l, uint32_t *off, uint64_t *val)
{
	return unplaced_args(m, l, 0, off, val);
}

size_t memmap_held_args(const struct memmap *m, const struct tr_launch *l, uint32_t *off, uint64_t *val)
{
	return unplaced_args(m, l, 1, off, val);
}

size_t memmap_stray_note(const struct trace *t, long rec, const char *lead, struct strbuf *out)
{
	struct memmap mm = MEMMAP_INIT;
	const struct tr_launch *l;
	uint32_t off = 0, hoff = 0;
	uint64_t val = 0, hval = 0;
	size_t n, h;

	if (rec < 0 || (size_t)rec >= t->nrec || t->rec[rec].type != TR_LAUNCH)
		return 0;
	l = &t->rec[rec].u.launch;
	for (long i = 0; i < rec; i++)
		memmap_feed(&mm, &t->rec[i], i);
	n = memmap_stray_args(&mm, l, &off, &val);
	h = memmap_held_args(&mm, l, &hoff, &hval);
	if (n)
		sb_addf(out, "%slaunch #%llu (%s) passes %zu word(s) that look like device addresses but lie in no "
			"buffer the trace recorded (the first: parameter bytes +0x%x = 0x%llx): memory the capture "
			"did not see, which replay cannot place, so a kernel that follows it faults in replay and "
			"not in the program", lead, (unsigned long long)l->seq, l->name ? l->name : "?", n,
			(unsigned)off, (unsigned long long)val);
	if (h)
		sb_addf(out, "%slaunch #%llu (%s) has %zu word(s) inside recorded buffers that replay passed as "
			"captured, not relocated, because other launches of the kernel hold small integers there "
			"(format 1.7, NONPTR; the first: parameter bytes +0x%x = 0x%llx): if that word is a pointer "
			"the kernel follows, replay sends it to the captured address, where nothing of its own lies",
			n ? "; also, " : lead, (unsigned long long)l->seq, l->name ? l->name : "?", h,
			(unsigned)hoff, (unsigned long long)hval);
	memmap_release(&mm);
	return n + h;
}
