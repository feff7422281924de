/*
 * read.c - decoding side of the trace format (see trace.h, docs/FORMAT.md).
 *
 * The file is mapped read-only and decoded in one pass into an array of
 * struct tr_rec; strings and arrays are copied into an arena owned by the
 * trace, blob payloads stay in the mapping.  The decoder of each record
 * type is generated from trace/records.def; what the table cannot say
 * (variable-length parts, bound checks) is the dec_* and chk_* hooks
 * here.  Every length read from the file is checked against the bytes
 * that remain before anything is allocated from it, so hostile input yields
 * an error naming the file, the byte offset and what was expected -- never
 * a crash or a huge allocation.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>
#include <zstd.h>

#include "../common/strbuf.h"
#include "../common/util.h"
#include "trace.h"

/* ---- arena: many small blocks freed together ---- */

struct trace_arena {
	struct trace_arena *next;
	size_t used, cap;
	char mem[];
};

static void *arena_alloc(struct trace *t, size_t n)
{
	struct trace_arena *a = t->arena;
	n = (n + 15) & ~(size_t)15;
	if (!a || a->cap - a->used < n) {
		size_t cap = n > 65536 ? n : 65536;
		a = xmalloc(sizeof(*a) + cap);
		a->used = 0;
		a->cap = cap;
		a->next = t->arena;
		t->arena = a;
	}
	void *p = a->mem + a->used;
	a->used += n;
	return p;
}

/* ---- cursor over one record payload ---- */

struct cur {
	const uint8_t *p;
	size_t len, pos;
	uint64_t base;           /* file offset of payload start */
	const char *field;       /* what we were reading, for messages */
	int bad;
};

static int need(struct cur *c, size_t n, const char *what)
{
	if (c->bad)
		return -1;
	if (c->len - c->pos < n) {
		c->bad = 1;
		c->field = what;
		return -1;
	}
	return 0;
}

static uint32_t get_u32(struct cur *c, const char *what)
{
	uint32_t v = 0;
	if (need(c, 4, what))
		return 0;
	for (int i = 0; i < 4; i++)
		v |= (uint32_t)c->p[c->pos + i] << (8 * i);
	c->pos += 4;
	return v;
}

static uint16_t get_u16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint64_t get_u64_raw(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

static uint64_t get_u64(struct cur *c, const char *what)
{
	uint64_t v;
	if (need(c, 8, what))
		return 0;
	v = get_u64_raw(c->p + c->pos);
	c->pos += 8;
	return v;
}

static const char *get_str(struct trace *t, struct cur *c, const char *what)
{
	uint32_t n = get_u32(c, what);
	char *s;
	if (c->bad || need(c, n, what))
		return "";
	s = arena_alloc(t, (size_t)n + 1);
	memcpy(s, c->p + c->pos, n);
	s[n] = 0;
	c->pos += n;
	return s;
}

/* Count of items that each take at least `min` bytes: bounded by what is left. */
static uint32_t get_count(struct cur *c, size_t min, const char *what)
{
	uint32_t n = get_u32(c, what);
	if (c->bad)
		return 0;
	if (min && n > (c->len - c->pos) / min) {
		c->bad = 1;
		c->field = what;
		return 0;
	}
	return n;
}

static void get_dim3(struct cur *c, struct tr_dim3 *d, const char *what)
{
	d->x = get_u32(c, what);
	d->y = get_u32(c, what);
	d->z = get_u32(c, what);
}

/* ---- per-type decoding: generated from trace/records.def ---- */

/* The variable-length parts and bound checks the table names (VAR and
 * CHECK fields): dec_<field> reads, chk_<field> sets c->bad = 2 and
 * c->field to what was expected. */

static void dec_process_argv(struct trace *t, struct cur *c, struct tr_process *p)
{
	p->argc = get_count(c, 4, "process.argc");
	p->argv = arena_alloc(t, sizeof(char *) * ((size_t)p->argc + 1));
	for (uint32_t i = 0; i < p->argc; i++)
		p->argv[i] = get_str(t, c, "process.argv");
	p->argv[p->argc] = NULL;
}

/* The rest of the payload is the stored bytes (they stay in the mapping). */
static void dec_blob_data(struct trace *t, struct cur *c, struct tr_blob *b)
{
	if (c->bad)
		return;
	b->data = c->p + c->pos;
	b->stored_size = c->len - c->pos;
	c->pos = c->len;
	if (b->codec != TR_CODEC_RAW && b->codec != TR_CODEC_ZSTD) {
		c->bad = 2;
		c->field = "blob.codec (0 raw or 1 zstd)";
	} else if (b->codec == TR_CODEC_RAW && b->raw_size != b->stored_size) {
		c->bad = 2;
		c->field = "blob.raw_size equal to the stored size of a raw blob";
	}
}

static void chk_memset_elem_size(struct cur *c, const struct tr_memset *m)
{
	if (!c->bad && m->elem_size != 1 && m->elem_size != 2 && m->elem_size != 4) {
		c->bad = 2;
		c->field = "memset.elem_size (1, 2 or 4)";
	}
}

static void dec_launch_params(struct trace *t, struct cur *c, struct tr_launch *l)
{
	l->nparams = get_count(c, 8, "launch.nparams");
	l->params = arena_alloc(t, sizeof(*l->params) * ((size_t)l->nparams + 1));
	for (uint32_t i = 0; i < l->nparams; i++) {
		l->params[i].offset = get_u32(c, "launch.param.offset");
		l->params[i].size = get_u32(c, "launch.param.size");
	}
}

/* 2.0: a short launch (TR_F_SAME) names the launch whose name, layout
 * and argument bytes it repeats by how many records back it stands, with
 * the XXH3-64 of those bytes (its 16 argument bytes: the two u64s); it
 * gets them (shared: nothing writes into a
 * decoded launch's bytes) and loses the flag, so that a trace written
 * from this one has it whole.  Records before it are decoded already: the
 * one named must be a LAUNCH of the same function handle. */
static void dec_launch_same(struct trace *t, struct cur *c, struct tr_launch *l)
{
	const struct tr_launch *ref;
	uint64_t back, hash;

	if (l->argsize != 16 || l->nparams || (l->name && *l->name)) {
		c->bad = 2;
		c->field = "launch.same (a short launch: no name, no parameters, 16 argument bytes)";
		return;
	}
	back = get_u64_raw(l->args);
	hash = get_u64_raw(l->args + 8);
	if (!back || back > t->nrec || t->rec[t->nrec - back].type != TR_LAUNCH ||
	    t->rec[t->nrec - back].u.launch.func != l->func) {
		c->bad = 2;
		c->field = "launch.same (the number of records back to an earlier LAUNCH of the same function)";
		return;
	}
	ref = &t->rec[t->nrec - back].u.launch;
	if (tr_hash(ref->args, ref->argsize) != hash) {
		c->bad = 2;
		c->field = "launch.same (the hash of the argument bytes of the LAUNCH it names)";
		return;
	}
	l->name = ref->name;
	l->nparams = ref->nparams;
	l->params = ref->params;
	l->argsize = ref->argsize;
	l->args = ref->args;
	l->flags &= ~TR_F_SAME;
	l->same_back = back;
}

static void dec_launch_args(struct trace *t, struct cur *c, struct tr_launch *l)
{
	l->argsize = get_count(c, 1, "launch.args length");
	l->args = arena_alloc(t, (size_t)l->argsize + 8);
	memset(l->args, 0, (size_t)l->argsize + 8);
	if (!c->bad) {
		memcpy(l->args, c->p + c->pos, l->argsize);
		c->pos += l->argsize;
		if (l->flags & TR_F_SAME)
			dec_launch_same(t, c, l);
	}
}

static void chk_launch_param_bounds(struct cur *c, const struct tr_launch *l)
{
	for (uint32_t i = 0; !c->bad && i < l->nparams; i++) {
		uint64_t end = (uint64_t)l->params[i].offset + l->params[i].size;
		if (end > l->argsize) {
			c->bad = 2;
			c->field = "launch.param within the argument bytes";
		}
	}
}

static void dec_launch_attrs(struct trace *t, struct cur *c, struct tr_launch *l)
{
	l->nattrs = get_count(c, 8, "launch.nattrs");
	l->attrs = arena_alloc(t, sizeof(*l->attrs) * ((size_t)l->nattrs + 1));
	for (uint32_t i = 0; i < l->nattrs; i++) {
		struct tr_launch_attr *a = &l->attrs[i];
		memset(a, 0, sizeof(*a));
		a->id = get_u32(c, "launch.attr.id");
		a->len = get_u32(c, "launch.attr.len");
		if (c->bad)
			break;
		if (a->len > 64 || need(c, a->len, "launch.attr.value (at most 64 bytes)")) {
			c->bad = 2;
			c->field = "launch.attr.value (at most 64 bytes)";
			break;
		}
		memcpy(a->value, c->p + c->pos, a->len);
		c->pos += a->len;
	}
}

/* Python frames: nframes, then (file, func, line) each */
static void dec_frames(struct trace *t, struct cur *c, uint32_t *n, struct tr_frame **frames, const char *what)
{
	*n = get_count(c, 12, what);
	*frames = arena_alloc(t, sizeof(**frames) * ((size_t)*n + 1));
	for (uint32_t i = 0; i < *n; i++) {
		(*frames)[i].file = get_str(t, c, "frame.file");
		(*frames)[i].func = get_str(t, c, "frame.func");
		(*frames)[i].line = get_u32(c, "frame.line");
	}
}

static void dec_launch_frames(struct trace *t, struct cur *c, struct tr_launch *l)
{
	dec_frames(t, c, &l->nframes, &l->frames, "launch.nframes");
}

/* ---- 1.8: Python stacks by id (PYSTACK) ---- */

/* The slot of id in the open-addressed table (its own, or the empty one
 * where it would go); the table is never full (stacks_put grows it). */
static struct tr_pystack *stack_slot(const struct trace *t, uint32_t id)
{
	size_t m = t->stacks_cap - 1, i = (size_t)(id * 2654435761u) & m;
	while (t->stacks[i].id && t->stacks[i].id != id)
		i = (i + 1) & m;
	return &t->stacks[i];
}

static void stacks_put(struct trace *t, const struct tr_pystack *p)
{
	struct tr_pystack *s;
	if ((t->stacks_n + 1) * 2 > t->stacks_cap) {
		struct tr_pystack *old = t->stacks;
		size_t oc = t->stacks_cap;
		t->stacks_cap = oc ? oc * 2 : 64;
		t->stacks = xcalloc(t->stacks_cap, sizeof(*t->stacks));
		for (size_t i = 0; i < oc; i++)
			if (old[i].id)
				*stack_slot(t, old[i].id) = old[i];
		free(old);
	}
	s = stack_slot(t, p->id);
	if (!s->id)
		t->stacks_n++;
	*s = *p;   /* defined again (a segment's carried copy): the later one */
}

static void dec_pystack_frames(struct trace *t, struct cur *c, struct tr_pystack *p)
{
	dec_frames(t, c, &p->nframes, &p->frames, "pystack.nframes");
	if (!c->bad && p->id)
		stacks_put(t, p);
}

/* 1.8: a launch that names a PYSTACK gets its frames (and stack 0: read
 * and written again, it carries them itself); before 1.8 the field is
 * absent (the payload ends), which is stack 0.  The frames only say where
 * the launch came from, so an id the file does not define (a segment that
 * lost a definition) costs that launch its frames, counted in
 * t->stacks_missing for `show` to say, not the trace; an id beside frames
 * of the launch's own is ignored (a writer gives one or the other). */
static void dec_launch_stack(struct trace *t, struct cur *c, struct tr_launch *l)
{
	const struct tr_pystack *s;
	uint32_t id = c->pos < c->len ? get_u32(c, "launch.stack") : 0;
	l->stack = 0;
	if (c->bad || !id || l->nframes)
		return;
	s = t->stacks_cap ? stack_slot(t, id) : NULL;
	if (!s || !s->id) {
		t->stacks_missing++;
		return;
	}
	l->nframes = s->nframes;
	l->frames = s->frames;
}

static void chk_block_size(struct cur *c, const struct tr_block *b)
{
	if (!c->bad && b->size > b->alloc_size) {
		c->bad = 2;
		c->field = "block.size (larger than block.alloc_size)";
	}
}

static void chk_tmap_rank(struct cur *c, const struct tr_tensormap *m)
{
	if (!c->bad && m->rank > TR_TMAP_MAX_RANK) {
		c->bad = 2;
		c->field = "tensormap.rank (more than 5)";
	}
}

/* One decoder per layout: each field in table order. */
#define DEC_U32(f, name) x->f = get_u32(c, name);
#define DEC_U64(f, name) x->f = get_u64(c, name);
#define DEC_I32(f, name) x->f = (int32_t)get_u32(c, name);
#define DEC_STR(f, name) x->f = get_str(t, c, name);
#define DEC_DIM3(f, name) get_dim3(c, &x->f, name);
#define DEC_U64_ARR(f, name) for (size_t i_ = 0; i_ < ARRAY_SIZE(x->f); i_++) x->f[i_] = get_u64(c, name);
#define DEC_U32_ARR(f, name) for (size_t i_ = 0; i_ < ARRAY_SIZE(x->f); i_++) x->f[i_] = get_u32(c, name);
#define DEC_I32_ARR(f, name) for (size_t i_ = 0; i_ < ARRAY_SIZE(x->f); i_++) x->f[i_] = (int32_t)get_u32(c, name);
#define DEC_BYTES(f, name) \
	if (!need(c, sizeof(x->f), name)) { memcpy(x->f, c->p + c->pos, sizeof(x->f)); c->pos += sizeof(x->f); }
#define DEC_VAR(f, name) dec_##f(t, c, x);
#define DEC_CHECK(f, name) chk_##f(c, x);
#define DEC_FIELD_(kind, field, name, show) DEC_##kind(field, name)
#define DEC_LAYOUT_(layout, tag) \
	static void dec_layout_##layout(struct trace *t, struct cur *c, struct tag *x) \
	{ TR_FIELDS_##layout(DEC_FIELD_) }
TR_LAYOUTS(DEC_LAYOUT_)

static int decode(struct trace *t, struct tr_rec *r, struct cur *c)
{
	switch (r->type) {
#define DEC_CASE_(NAME, num, layout, ctor, rec) \
	case TR_##NAME: dec_layout_##layout(t, c, &r->u.layout); break;
	TR_RECORDS(DEC_CASE_)
	default:
		/* Unknown type from a newer minor version: framing lets us skip it. */
		c->pos = c->len;
		break;
	}
	return c->bad ? -1 : 0;
}

/* ---- blob index ---- */

static void blob_index_build(struct trace *t)
{
	size_t nb = 0;
	for (size_t i = 0; i < t->nrec; i++)
		nb += t->rec[i].type == TR_BLOB;
	t->blob_nslots = 16;
	while (t->blob_nslots < nb * 2 + 2)
		t->blob_nslots *= 2;
	t->blob_slots = xmalloc(t->blob_nslots * sizeof(size_t));
	for (size_t i = 0; i < t->blob_nslots; i++)
		t->blob_slots[i] = (size_t)-1;
	for (size_t i = 0; i < t->nrec; i++) {
		if (t->rec[i].type != TR_BLOB)
			continue;
		uint64_t h = t->rec[i].u.blob.hash;
		size_t s = h & (t->blob_nslots - 1);
		while (t->blob_slots[s] != (size_t)-1) {
			if (t->rec[t->blob_slots[s]].u.blob.hash == h)
				break;   /* duplicate blob: keep the first */
			s = (s + 1) & (t->blob_nslots - 1);
		}
		if (t->blob_slots[s] == (size_t)-1)
			t->blob_slots[s] = i;
	}
}

/* The TENSORMAP records, in order: a launch looks for the maps recorded
 * before it (addr/tensormap.c), and a scan of every record before every
 * launch made replaying a long trace quadratic. */
static int tmap_key_cmp(const void *x, const void *y)
{
	const struct tr_tmap_key *a = x, *b = y;
	if (a->gaddr != b->gaddr)
		return a->gaddr < b->gaddr ? -1 : 1;
	return a->rec < b->rec ? -1 : a->rec > b->rec;
}

static void tmap_index_build(struct trace *t)
{
	size_t n = 0;
	for (size_t i = 0; i < t->nrec; i++)
		n += t->rec[i].type == TR_TENSORMAP;
	t->tmap_keys = n ? xmalloc(n * sizeof(*t->tmap_keys)) : NULL;
	t->ntmaps = 0;
	for (size_t i = 0; i < t->nrec && n; i++)
		if (t->rec[i].type == TR_TENSORMAP) {
			if (!t->ntmaps)
				t->tmap_first = i;
			t->tmap_keys[t->ntmaps++] = (struct tr_tmap_key){ t->rec[i].u.tmap.gaddr, i };
		}
	if (n)
		qsort(t->tmap_keys, n, sizeof(*t->tmap_keys), tmap_key_cmp);
	t->tmaps_indexed = 1;
}

long trace_find_blob(const struct trace *t, uint64_t hash)
{
	if (!t->blob_nslots)
		return -1;
	for (size_t s = hash & (t->blob_nslots - 1);; s = (s + 1) & (t->blob_nslots - 1)) {
		size_t i = t->blob_slots[s];
		if (i == (size_t)-1)
			return -1;
		if (t->rec[i].u.blob.hash == hash)
			return (long)i;
	}
}

long trace_find_launch(const struct trace *t, uint64_t seq)
{
	for (size_t i = 0; i < t->nrec; i++)
		if (t->rec[i].type == TR_LAUNCH && t->rec[i].u.launch.seq == seq)
			return (long)i;
	return -1;
}

int trace_unrecorded_notes(const struct trace *t, const char *prefix, int max, struct strbuf *out)
{
	const char *seen[16];   /* the notes taken: a repeat is compared with these, not every record */
	int n = 0;
	if (max > 16)
		max = 16;
	for (size_t i = 0; i < t->nrec && n < max; i++) {
		const char *x = t->rec[i].type == TR_NOTE ? t->rec[i].u.note.text : NULL;
		int dup = 0;
		if (!x || !(strstr(x, "not recorded") || strstr(x, "will miss these bytes") ||
			    strstr(x, "cannot rebuild")))
			continue;
		for (int k = 0; k < n && !dup; k++)
			dup = !strcmp(seen[k], x);
		if (dup)
			continue;
		sb_addf(out, "%s%s", n ? "; " : prefix, x);
		seen[n++] = x;
	}
	if (n)
		sb_adds(out, ".");
	return n;
}

const char *trace_tensors_off_note(const struct trace *t)
{
	size_t n = strlen(TR_NOTE_TENSORS_OFF);
	for (size_t i = 0; i < t->nrec; i++) {
		const char *x = t->rec[i].type == TR_NOTE ? t->rec[i].u.note.text : NULL;
		size_t l = x ? strlen(x) : 0;
		if (l >= n && !strncmp(x, "--tensors: ", 11) && !strcmp(x + l - n, TR_NOTE_TENSORS_OFF))
			return x;
	}
	return NULL;
}

int trace_blob_read(const struct trace *t, uint64_t hash, struct strbuf *out,
		    uint64_t limit, struct strbuf *err)
{
	long i = trace_find_blob(t, hash);
	const struct tr_blob *b;
	size_t start = out->len;

	if (!limit)
		limit = 64ull << 30;
	if (i < 0) {
		sb_addf(err, "%s: blob %016llx is referenced but not stored in the trace",
			t->path, (unsigned long long)hash);
		return -1;
	}
	b = &t->rec[i].u.blob;
	if (b->raw_size > limit) {
		sb_addf(err, "%s: blob %016llx at offset %llu claims %llu bytes, over the %llu-byte limit",
			t->path, (unsigned long long)hash, (unsigned long long)t->rec[i].offset,
			(unsigned long long)b->raw_size, (unsigned long long)limit);
		return -1;
	}
	if (b->codec == TR_CODEC_RAW) {
		sb_add(out, b->data, b->stored_size);
	} else {
		unsigned long long fs = ZSTD_getFrameContentSize(b->data, b->stored_size);
		if (fs == ZSTD_CONTENTSIZE_ERROR || fs == ZSTD_CONTENTSIZE_UNKNOWN || fs != b->raw_size) {
			sb_addf(err, "%s: blob at offset %llu: zstd frame does not hold the %llu bytes the record claims",
				t->path, (unsigned long long)t->rec[i].offset,
				(unsigned long long)b->raw_size);
			return -1;
		}
		sb_grow(out, (size_t)b->raw_size);
		/* one decompression context per thread, kept: ZSTD_decompress
		 * makes and frees one per call (a replay decodes a blob per copy) */
		static __thread ZSTD_DCtx *dctx;
		size_t n;
		if (!dctx)
			dctx = ZSTD_createDCtx();
		n = dctx ? ZSTD_decompressDCtx(dctx, out->buf + out->len, (size_t)b->raw_size, b->data, b->stored_size)
			 : ZSTD_decompress(out->buf + out->len, (size_t)b->raw_size, b->data, b->stored_size);
		if (ZSTD_isError(n) || n != b->raw_size) {
			sb_addf(err, "%s: blob at offset %llu: corrupt zstd data (%s)", t->path,
				(unsigned long long)t->rec[i].offset,
				ZSTD_isError(n) ? ZSTD_getErrorName(n) : "short");
			return -1;
		}
		out->len += n;
		out->buf[out->len] = 0;
	}
	if (tr_hash(out->buf + start, out->len - start) != hash) {
		sb_addf(err, "%s: blob at offset %llu: content does not match its hash",
			t->path, (unsigned long long)t->rec[i].offset);
		sb_setlen(out, start);
		return -1;
	}
	return 0;
}

/* ---- open ---- */

/* The header checksum (1.4): XXH32 of bytes 0-23 at 24, zero at 28.  A
 * writer before 1.4 wrote 8 zero bytes there, so the check applies when
 * the header says 1.4 or later or those bytes are not zero: a flipped
 * version, size or time byte is corruption, not a truncation or a newer
 * format.  1 when the header is damaged. */
static int header_corrupt(const struct trace *t, const uint8_t *m)
{
	uint32_t sum = (uint32_t)get_u16(m + 24) | (uint32_t)get_u16(m + 26) << 16;
	uint32_t zero = (uint32_t)get_u16(m + 28) | (uint32_t)get_u16(m + 30) << 16;
	if (!sum && !zero && (t->major < 1 || (t->major == 1 && t->minor < 4)))
		return 0;
	return zero || XXH32(m, 24, TRACE_HEADER_SEED) != sum;
}

static int parse(struct trace *t, unsigned flags, struct strbuf *err)
{
	const uint8_t *m = t->map;
	size_t off;

	if (t->size < TRACE_HEADER_SIZE || memcmp(m, TRACE_MAGIC, 8)) {
		if (t->size >= 8 && !memcmp(m, TRACE_MAGIC, 8))
			sb_addf(err, "%s: truncated at byte %zu: expected a %d-byte header",
				t->path, t->size, TRACE_HEADER_SIZE);
		else
			sb_addf(err, "%s: not a gpureduce trace (byte 0: expected magic \"%s\")",
				t->path, TRACE_MAGIC);
		return -1;
	}
	t->major = get_u16(m + 8);
	t->minor = get_u16(m + 10);
	uint32_t hsize = (uint32_t)m[12] | (uint32_t)m[13] << 8 | (uint32_t)m[14] << 16 | (uint32_t)m[15] << 24;
	t->created_ns = get_u64_raw(m + 16);
	if (header_corrupt(t, m)) {
		sb_addf(err, "%s: corrupt header: its checksum does not match (bytes 0-31 were damaged; "
			"the file cannot be trusted: capture the program again)", t->path);
		return -1;
	}
	if (t->major > TRACE_MAJOR) {
		sb_addf(err, "%s: trace format %u.%u is newer than this gpureduce reads (%d.x); upgrade gpureduce",
			t->path, t->major, t->minor, TRACE_MAJOR);
		return -1;
	}
	if (t->major < 1 || hsize < TRACE_HEADER_SIZE || hsize > t->size) {
		sb_addf(err, "%s: byte 8: bad header (version %u.%u, header size %u)",
			t->path, t->major, t->minor, hsize);
		return -1;
	}
	off = hsize;
	while (off < t->size) {
		size_t left = t->size - off;
		uint32_t type, sum;
		uint64_t len;
		struct tr_rec *r;
		struct cur c;

		if (left >= 4 && ((uint32_t)get_u16(m + off) | (uint32_t)get_u16(m + off + 2) << 16) == TR_FAULT)
			t->cut_in_fault = 1;   /* whatever the cut below: the fault's own record */
		if (left < TRACE_RECORD_HEADER_SIZE) {
			sb_reset(err);
			sb_addf(err, "%s: truncated at byte %zu: expected a %d-byte record header, %zu bytes left",
				t->path, off, TRACE_RECORD_HEADER_SIZE, left);
			goto truncated;
		}
		type = (uint32_t)get_u16(m + off) | (uint32_t)get_u16(m + off + 2) << 16;
		sum = (uint32_t)get_u16(m + off + 4) | (uint32_t)get_u16(m + off + 6) << 16;
		len = get_u64_raw(m + off + 8);
		if (len > left - TRACE_RECORD_HEADER_SIZE) {
			sb_reset(err);
			sb_addf(err, "%s: truncated at byte %zu: %s record claims %llu bytes, %zu left",
				t->path, off, tr_type_name(type), (unsigned long long)len,
				left - TRACE_RECORD_HEADER_SIZE);
			goto truncated;
		}
		t->cut_in_fault = 0;   /* set again below only when this record is the cut one */
		if (XXH32(m + off + TRACE_RECORD_HEADER_SIZE, (size_t)len, type) != sum) {
			/* A bad checksum on the very last record is what a torn write
			 * looks like; anywhere else it is corruption. */
			if (off + TRACE_RECORD_HEADER_SIZE + len == t->size && !(flags & TRACE_OPEN_STRICT)) {
				t->cut_in_fault = type == TR_FAULT;
				sb_reset(err);
				sb_addf(err, "%s: last record at byte %zu has a bad checksum (torn write)",
					t->path, off);
				goto truncated;
			}
			sb_addf(err, "%s: corrupt record at byte %zu: checksum mismatch in %s record",
				t->path, off, tr_type_name(type));
			return -1;
		}
		ALLOC_GROW(t->rec, t->nrec + 1, t->rec_alloc);
		r = &t->rec[t->nrec];
		memset(r, 0, sizeof(*r));
		r->type = type;
		r->offset = off;
		c.p = m + off + TRACE_RECORD_HEADER_SIZE;
		c.len = (size_t)len;
		c.pos = 0;
		c.base = off + TRACE_RECORD_HEADER_SIZE;
		c.field = NULL;
		c.bad = 0;
		if (decode(t, r, &c) < 0) {
			if (c.bad == 2)
				sb_addf(err, "%s: corrupt %s record at byte %zu: expected %s (at byte %llu)",
					t->path, tr_type_name(type), off, c.field ? c.field : "?",
					(unsigned long long)(c.base + c.pos));
			else
				sb_addf(err, "%s: corrupt %s record at byte %zu: field %s runs past its %llu-byte payload (at byte %llu)",
					t->path, tr_type_name(type), off, c.field ? c.field : "?",
					(unsigned long long)len, (unsigned long long)(c.base + c.pos));
			return -1;
		}
		t->nrec++;
		off += TRACE_RECORD_HEADER_SIZE + (size_t)len;
	}
	return 0;

truncated:
	if (flags & TRACE_OPEN_STRICT)
		return -1;
	if (t->cut_in_fault)
		sb_addf(err, " (%s)", TRACE_CUT_FAULT_MSG);
	t->truncated = 1;
	t->truncated_msg = xstrdup(err->buf);
	sb_reset(err);
	return 0;
}

/*
 * The reading rule of format 1.2: a CHECKPOINT_BEGIN that no CHECKPOINT_END
 * with the same id follows is a checkpoint the capture did not finish (it
 * was killed while writing it).  The trace is read as ending before that
 * BEGIN, so it ends at the previous complete checkpoint's window, and is
 * flagged truncated (an error under TRACE_OPEN_STRICT).  An END without its
 * BEGIN is corrupt.
 */
static int cut_incomplete_checkpoint(struct trace *t, unsigned flags, struct strbuf *err)
{
	struct strbuf m = STRBUF_INIT;
	long open_at = -1;
	uint64_t open_id = 0;

	for (size_t i = 0; i < t->nrec; i++) {
		const struct tr_rec *r = &t->rec[i];
		if (r->type == TR_CHECKPOINT_BEGIN && open_at < 0) {
			open_at = (long)i;
			open_id = r->u.checkpoint.id;
		} else if (r->type == TR_CHECKPOINT_BEGIN || (r->type == TR_CHECKPOINT_END &&
			   (open_at < 0 || r->u.checkpoint.id != open_id))) {
			sb_addf(err, "%s: corrupt %s record at byte %llu: expected %s", t->path,
				tr_type_name(r->type), (unsigned long long)r->offset,
				open_at < 0 ? "a CHECKPOINT_BEGIN before it" :
				"the CHECKPOINT_END of the checkpoint begun before it");
			return -1;
		} else if (r->type == TR_CHECKPOINT_END) {
			open_at = -1;
		}
	}
	if (open_at < 0)
		return 0;
	if (flags & TRACE_OPEN_STRICT) {
		sb_addf(err, "%s: checkpoint %llu at byte %llu is incomplete (no CHECKPOINT_END)", t->path,
			(unsigned long long)open_id, (unsigned long long)t->rec[open_at].offset);
		return -1;
	}
	sb_addf(&m, "%s: checkpoint %llu at byte %llu is incomplete (the capture stopped while "
		"writing it): read as ending at event %ld, before it", t->path,
		(unsigned long long)open_id, (unsigned long long)t->rec[open_at].offset, open_at);
	if (t->truncated_msg)
		sb_addf(&m, "; also %s", t->truncated_msg);
	free(t->truncated_msg);
	t->truncated_msg = sb_detach(&m, NULL);
	t->truncated = 1;
	t->nrec = (size_t)open_at;
	return 0;
}

#include "vmmjoin.inc" /* vmm pieces mapped side by side: trace_join_vmm() */
#include "batch.inc"   /* 1.6: trace_place_block_batches() */
#include "nonptr.inc"  /* 1.7: trace_mark_nonptr() */

static int finish_open(struct trace *t, unsigned flags, struct strbuf *err)
{
	struct strbuf e = STRBUF_INIT;
	int ret = parse(t, flags, &e);
	if (ret == 0)
		ret = cut_incomplete_checkpoint(t, flags, &e);
	if (ret == 0)
		ret = trace_join_vmm(t);               /* expandable segments' pieces (vmmjoin.inc) */
	if (ret == 0)
		ret = trace_place_block_batches(t);   /* 1.6: late allocator blocks (batch.inc) */
	if (ret == 0)
		trace_mark_nonptr(t);                  /* 1.7: integer words (nonptr.inc) */
	if (ret < 0) {
		sb_add(err, e.buf, e.len);
		sb_release(&e);
		trace_release(t);
		return -1;
	}
	sb_release(&e);
	blob_index_build(t);
	tmap_index_build(t);
	return 0;
}

int trace_open_mem(struct trace *t, const char *name, const void *data, size_t size,
		   unsigned flags, struct strbuf *err)
{
	memset(t, 0, sizeof(*t));
	t->path = xstrdup(name);
	t->map = data;
	t->size = size;
	return finish_open(t, flags, err);
}

int trace_open(struct trace *t, const char *path, unsigned flags, struct strbuf *err)
{
	struct stat st;
	int fd;
	void *m;

	memset(t, 0, sizeof(*t));
	/* O_NONBLOCK: a FIFO given as a trace is refused below, not waited on */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		sb_addf(err, "%s: cannot open trace: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		sb_addf(err, "%s: not a regular file", path);
		close(fd);
		return -1;
	}
	if (st.st_size == 0) {
		sb_addf(err, "%s: empty file, not a gpureduce trace (was the capture killed before it started?)", path);
		close(fd);
		return -1;
	}
	m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED) {
		sb_addf(err, "%s: cannot map: %s", path, strerror(errno));
		return -1;
	}
	t->path = xstrdup(path);
	t->map = m;
	t->size = (size_t)st.st_size;
	t->mapped = 1;
	return finish_open(t, flags, err);
}

void trace_release(struct trace *t)
{
	if (!t)
		return;
	struct trace_arena *a = t->arena;
	while (a) {
		struct trace_arena *n = a->next;
		free(a);
		a = n;
	}
	free(t->rec);
	free(t->nonptr);
	free(t->nonptr_extra);
	free(t->blob_slots);
	free(t->tmap_keys);
	free(t->stacks);
	free(t->truncated_msg);
	free(t->path);
	if (t->mapped && t->map)
		munmap((void *)t->map, t->size);
	memset(t, 0, sizeof(*t));
}

static const char *const type_names[] = {
#define TYPE_NAME_(NAME, num, layout, ctor, rec) [TR_##NAME] = #NAME,
	TR_RECORDS(TYPE_NAME_)
};

int tr_type_known(uint32_t type)
{
	return type < ARRAY_SIZE(type_names) && type_names[type];
}

const char *tr_type_name(uint32_t type)
{
	if (tr_type_known(type))
		return type_names[type];
	return "UNKNOWN";
}

const char *tr_alloc_kind_name(uint32_t kind)
{
	switch (kind) {
	case TR_MEM_DEVICE: return "device";
	case TR_MEM_HOST: return "host";
	case TR_MEM_MANAGED: return "managed";
	case TR_MEM_VMM: return "vmm";
	case TR_MEM_ASYNC: return "async";
	case TR_MEM_GLOBAL: return "global";
	default: return "unknown";
	}
}

int trace_complete(const struct trace *t)
{
	for (size_t i = t->nrec; i-- > 0;)
		if (t->rec[i].type == TR_END || t->rec[i].type == TR_FAULT)
			return 1;
	return 0;
}
