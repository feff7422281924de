/*
 * write.c - encoding side of the trace format (see trace.h, docs/FORMAT.md).
 *
 * Used by the capture library inside the traced process (so it must not
 * print, exit or take locks of its own: the caller serialises calls) and by
 * replay/the reducer when they write snapshots and reduced traces.  Each
 * record goes to disk with one write(2), so the file is complete up to the
 * last whole record whenever the process dies; a writer given a buffer
 * (tw_set_buffer: capture's hot path) gathers records and writes them
 * together, and its owner decides when they must be on disk (tw_flush).
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>
#include <zstd.h>

#include "../common/strbuf.h"
#include "../common/util.h"
#include "trace.h"

uint64_t tr_hash(const void *data, size_t len)
{
	return (uint64_t)XXH3_64bits(data, len);
}

uint64_t tr_file_hash(const void *data, size_t len)
{
	XXH3_state_t *st;
	uint64_t h;

	if (len < TRACE_HEADER_SIZE)
		return tr_hash(data, len);
	if (!(st = XXH3_createState()))
		abort();
	XXH3_64bits_reset(st);
	XXH3_64bits_update(st, data, 16);                        /* magic, version, header size */
	/* past created_ns and the header checksum, which covers it (1.4) */
	XXH3_64bits_update(st, (const char *)data + TRACE_HEADER_SIZE, len - TRACE_HEADER_SIZE);
	h = (uint64_t)XXH3_64bits_digest(st);
	XXH3_freeState(st);
	return h;
}

static void put_header(struct strbuf *sb)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	sb_add(sb, TRACE_MAGIC, 8);
	sb_put_u16(sb, TRACE_MAJOR);
	sb_put_u16(sb, TRACE_MINOR);
	sb_put_u32(sb, TRACE_HEADER_SIZE);
	sb_put_u64(sb, (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec);
	/* 1.4: XXH32 of bytes 0-23 (seed TRACE_HEADER_SEED), then 4 zero bytes */
	sb_put_u32(sb, XXH32(sb->buf + sb->len - 24, 24, TRACE_HEADER_SEED));
	sb_put_u32(sb, 0);
}

int tw_open_fd(struct trace_writer *w, int fd, const char *name, struct strbuf *err)
{
	struct strbuf sb = STRBUF_INIT;
	int ret = -1;

	w->fd = fd;
	w->path = xstrdup(name);
	put_header(&sb);
	if (write_all(fd, sb.buf, sb.len) < 0) {
		sb_addf(err, "%s: cannot write trace header: %s", name, strerror(errno));
		goto out;
	}
	w->offset = sb.len;
	ret = 0;
out:
	sb_release(&sb);
	return ret;
}

int tw_open(struct trace_writer *w, const char *path, struct strbuf *err)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		sb_addf(err, "%s: cannot create trace: %s", path, strerror(errno));
		return -1;
	}
	if (tw_open_fd(w, fd, path, err) < 0) {
		close(fd);
		w->fd = -1;
		return -1;
	}
	return 0;
}

int tw_open_append(struct trace_writer *w, const char *path, struct strbuf *err)
{
	char magic[8];
	struct stat st;
	int fd = open(path, O_RDWR | O_APPEND | O_CLOEXEC);
	if (fd < 0) {
		sb_addf(err, "%s: cannot open trace to append: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) < 0 || st.st_size < TRACE_HEADER_SIZE ||
	    pread(fd, magic, sizeof(magic), 0) != (ssize_t)sizeof(magic) ||
	    memcmp(magic, TRACE_MAGIC, sizeof(magic))) {
		sb_addf(err, "%s: not a gpureduce trace (no header): nothing appended", path);
		close(fd);
		return -1;
	}
	w->fd = fd;
	w->path = xstrdup(path);
	w->offset = (uint64_t)st.st_size;
	return 0;
}

int tw_close(struct trace_writer *w)
{
	int ret = tw_flush(w) < 0 || w->failed ? -1 : 0;
	if (w->fd >= 0 && close(w->fd) < 0)
		ret = -1;
	w->fd = -1;
	free(w->path);
	w->path = NULL;
	free(w->seen);
	w->seen = NULL;
	w->seen_n = w->seen_cap = 0;
	ZSTD_freeCCtx(w->zctx);
	w->zctx = NULL;
	free(w->zbuf);
	w->zbuf = NULL;
	w->zcap = 0;
	free(w->wbuf);
	w->wbuf = NULL;
	w->wlen = w->wcap = 0;
	free(w->enc);
	w->enc = NULL;
	w->enc_alloc = 0;
	return ret;
}

/* ---- buffered records ---- */

int tw_flush(struct trace_writer *w)
{
	size_t n = w->wlen;

	if (!n)
		return 0;
	w->wlen = 0;
	if (w->failed || w->fd < 0)
		return -1;
	if (write_all(w->fd, w->wbuf, n) < 0) {
		w->failed = 1;
		return -1;
	}
	return 0;
}

int tw_set_buffer(struct trace_writer *w, size_t cap)
{
	int ret = tw_flush(w);
	char *nb = NULL;

	if (cap && !(nb = malloc(cap)))
		cap = 0;   /* no memory: unbuffered, as before */
	free(w->wbuf);
	w->wbuf = nb;
	w->wcap = cap;
	return ret;
}

/* ---- blob dedup set ---- */

static int seen_has(const struct trace_writer *w, uint64_t h)
{
	if (!w->seen_cap)
		return 0;
	if (!h)
		h = 1;
	for (size_t i = h & (w->seen_cap - 1);; i = (i + 1) & (w->seen_cap - 1)) {
		if (!w->seen[i])
			return 0;
		if (w->seen[i] == h)
			return 1;
	}
}

static void seen_add(struct trace_writer *w, uint64_t h)
{
	if (!h)
		h = 1;
	if ((w->seen_n + 1) * 2 > w->seen_cap) {
		size_t ncap = w->seen_cap ? w->seen_cap * 2 : 256;
		uint64_t *old = w->seen;
		size_t ocap = w->seen_cap;
		w->seen = xcalloc(ncap, sizeof(*w->seen));
		w->seen_cap = ncap;
		w->seen_n = 0;
		for (size_t i = 0; i < ocap; i++)
			if (old[i])
				seen_add(w, old[i]);
		free(old);
	}
	for (size_t i = h & (w->seen_cap - 1);; i = (i + 1) & (w->seen_cap - 1)) {
		if (w->seen[i] == h)
			return;
		if (!w->seen[i]) {
			w->seen[i] = h;
			w->seen_n++;
			return;
		}
	}
}

void tw_mark_blob(struct trace_writer *w, uint64_t hash)
{
	seen_add(w, hash);
}

void tw_forget_blobs(struct trace_writer *w)
{
	if (w->seen_cap)
		memset(w->seen, 0, w->seen_cap * sizeof(*w->seen));
	w->seen_n = 0;
}

int tw_has_blob(const struct trace_writer *w, uint64_t hash)
{
	return seen_has(w, hash);
}

int tw_append_raw(struct trace_writer *w, const void *data, size_t len, uint64_t nrec)
{
	if (tw_flush(w) < 0 || w->failed || w->fd < 0)
		return -1;
	if (len && write_all(w->fd, data, len) < 0) {
		w->failed = 1;
		return -1;
	}
	w->offset += len;
	w->nrec += nrec;
	return 0;
}

/* ---- framing ---- */

/* One framed record into w's buffer (which has room); the header's fields
 * are those write_framed puts, little-endian like sb_put_*. */
static void buffer_framed(struct trace_writer *w, uint32_t type, uint32_t sum, const void *pay1,
			  size_t n1, const void *pay2, size_t n2)
{
	uint8_t *h = (uint8_t *)w->wbuf + w->wlen;
	uint64_t len = (uint64_t)(n1 + n2);

	for (int i = 0; i < 4; i++) {
		h[i] = (uint8_t)(type >> (8 * i));
		h[4 + i] = (uint8_t)(sum >> (8 * i));
	}
	for (int i = 0; i < 8; i++)
		h[8 + i] = (uint8_t)(len >> (8 * i));
	w->wlen += TRACE_RECORD_HEADER_SIZE;
	memcpy(w->wbuf + w->wlen, pay1, n1);
	w->wlen += n1;
	if (n2)
		memcpy(w->wbuf + w->wlen, pay2, n2);
	w->wlen += n2;
}

static long write_framed(struct trace_writer *w, uint32_t type, const void *pay1, size_t n1,
			 const void *pay2, size_t n2)
{
	struct strbuf sb = STRBUF_INIT;
	XXH32_state_t st;
	size_t total = TRACE_RECORD_HEADER_SIZE + n1 + n2;
	long ev;

	if (w->failed || w->fd < 0)
		return -1;
	XXH32_reset(&st, type);  /* the seed binds the type to the payload */
	XXH32_update(&st, pay1, n1);
	if (n2)
		XXH32_update(&st, pay2, n2);
	if (w->wcap) {
		if (w->wlen + total > w->wcap && tw_flush(w) < 0)
			return -1;
		if (total <= w->wcap) {
			buffer_framed(w, type, XXH32_digest(&st), pay1, n1, pay2, n2);
			w->offset += total;
			return (long)w->nrec++;
		}
	}
	sb_grow(&sb, total);
	sb_put_u32(&sb, type);
	sb_put_u32(&sb, XXH32_digest(&st));
	sb_put_u64(&sb, (uint64_t)(n1 + n2));
	sb_add(&sb, pay1, n1);
	sb_add(&sb, pay2, n2);
	if (write_all(w->fd, sb.buf, sb.len) < 0) {
		w->failed = 1;
		sb_release(&sb);
		return -1;
	}
	w->offset += sb.len;
	sb_release(&sb);
	ev = (long)w->nrec++;
	return ev;
}

/* ---- payload encoding ---- */

static void put_dim3(struct strbuf *sb, const struct tr_dim3 *d)
{
	sb_put_u32(sb, d->x);
	sb_put_u32(sb, d->y);
	sb_put_u32(sb, d->z);
}

int tr_encode(const struct tr_rec *r, struct strbuf *sb)
{
	switch (r->type) {
	case TR_PROCESS: {
		const struct tr_process *p = &r->u.process;
		sb_put_u32(sb, p->pid);
		sb_put_u64(sb, p->start_ns);
		sb_put_str(sb, p->cwd);
		sb_put_u32(sb, p->argc);
		for (uint32_t i = 0; i < p->argc; i++)
			sb_put_str(sb, p->argv[i]);
		return 0;
	}
	case TR_DEVICE: {
		const struct tr_device *d = &r->u.device;
		sb_put_u32(sb, d->ordinal);
		sb_put_str(sb, d->name);
		sb_put_u32(sb, d->cc_major);
		sb_put_u32(sb, d->cc_minor);
		sb_put_u32(sb, d->driver_version);
		sb_put_u32(sb, d->toolkit_version);
		sb_put_u64(sb, d->total_mem);
		sb_put_u32(sb, d->sm_count);
		return 0;
	}
	case TR_MODULE: {
		const struct tr_module *m = &r->u.module;
		sb_put_u32(sb, m->module_id);
		sb_put_u32(sb, m->kind);
		sb_put_u64(sb, m->blob);
		sb_put_u64(sb, m->size);
		return 0;
	}
	case TR_ALLOC: {
		const struct tr_alloc *a = &r->u.alloc;
		sb_put_u64(sb, a->addr);
		sb_put_u64(sb, a->size);
		sb_put_u32(sb, a->kind);
		sb_put_u32(sb, a->flags);
		sb_put_str(sb, a->name);
		return 0;
	}
	case TR_FREE:
		sb_put_u64(sb, r->u.free.addr);
		sb_put_u32(sb, r->u.free.kind);
		return 0;
	case TR_MEMCPY_H2D:
	case TR_MEMCPY_D2D:
	case TR_MEMCPY_D2H: {
		const struct tr_copy *c = &r->u.copy;
		sb_put_u64(sb, c->dst);
		sb_put_u64(sb, c->src);
		sb_put_u64(sb, c->size);
		sb_put_u64(sb, c->blob);
		sb_put_u64(sb, c->stream);
		sb_put_u32(sb, c->flags);
		return 0;
	}
	case TR_MEMSET: {
		const struct tr_memset *m = &r->u.memset;
		sb_put_u64(sb, m->dst);
		sb_put_u32(sb, m->value);
		sb_put_u32(sb, m->elem_size);
		sb_put_u64(sb, m->width);
		sb_put_u64(sb, m->height);
		sb_put_u64(sb, m->pitch);
		sb_put_u64(sb, m->stream);
		sb_put_u32(sb, m->flags);
		return 0;
	}
	case TR_LAUNCH: {
		const struct tr_launch *l = &r->u.launch;
		sb_put_u64(sb, l->seq);
		sb_put_u64(sb, l->func);
		sb_put_str(sb, l->name);
		sb_put_u32(sb, l->api);
		sb_put_u32(sb, l->flags);
		put_dim3(sb, &l->grid);
		put_dim3(sb, &l->block);
		sb_put_u32(sb, l->shmem);
		sb_put_u64(sb, l->stream);
		sb_put_u32(sb, l->nparams);
		for (uint32_t i = 0; i < l->nparams; i++) {
			sb_put_u32(sb, l->params[i].offset);
			sb_put_u32(sb, l->params[i].size);
		}
		sb_put_bytes(sb, l->args, l->argsize);
		sb_put_u32(sb, l->nattrs);
		for (uint32_t i = 0; i < l->nattrs; i++) {
			uint32_t len = l->attrs[i].len > 64 ? 64 : l->attrs[i].len;
			sb_put_u32(sb, l->attrs[i].id);
			sb_put_bytes(sb, l->attrs[i].value, len);
		}
		sb_put_u32(sb, l->tid);
		sb_put_u32(sb, l->py_state);
		sb_put_u32(sb, l->nframes);
		for (uint32_t i = 0; i < l->nframes; i++) {
			sb_put_str(sb, l->frames[i].file);
			sb_put_str(sb, l->frames[i].func);
			sb_put_u32(sb, l->frames[i].line);
		}
		return 0;
	}
	case TR_FAULT: {
		const struct tr_fault *f = &r->u.fault;
		sb_put_u32(sb, f->code);
		sb_put_str(sb, f->error);
		sb_put_str(sb, f->api);
		sb_put_u64(sb, f->launch_seq);
		sb_put_u32(sb, f->at_launch);
		sb_put_str(sb, f->kernel);
		return 0;
	}
	case TR_FUNC_ATTR:
		sb_put_str(sb, r->u.func_attr.kernel);
		sb_put_u32(sb, r->u.func_attr.attr);
		sb_put_u32(sb, (uint32_t)r->u.func_attr.value);
		return 0;
	case TR_END:
		sb_put_u32(sb, (uint32_t)r->u.end.exit_code);
		sb_put_u64(sb, r->u.end.launches);
		sb_put_u64(sb, r->u.end.allocs);
		sb_put_u64(sb, r->u.end.bytes_h2d);
		return 0;
	case TR_NOTE:
		sb_put_str(sb, r->u.note.text);
		return 0;
	case TR_REDUCTION:
		sb_put_str(sb, r->u.reduction.text);
		return 0;
	case TR_CHECKPOINT_BEGIN:
	case TR_CHECKPOINT_END:
		sb_put_u64(sb, r->u.checkpoint.id);
		sb_put_u64(sb, r->u.checkpoint.launch_seq);
		sb_put_u64(sb, r->u.checkpoint.allocs);
		sb_put_u64(sb, r->u.checkpoint.bytes);
		sb_put_u64(sb, r->u.checkpoint.stored);
		sb_put_u32(sb, r->u.checkpoint.flags);
		return 0;
	case TR_BLOCK_ALLOC: {
		const struct tr_block *b = &r->u.block;
		sb_put_u64(sb, b->addr);
		sb_put_u64(sb, b->size);
		sb_put_u64(sb, b->alloc_size);
		sb_put_u64(sb, b->segment);
		sb_put_u32(sb, b->source);
		sb_put_u32(sb, b->flags);
		sb_put_str(sb, b->file);
		sb_put_str(sb, b->func);
		sb_put_u32(sb, b->line);
		return 0;
	}
	case TR_BLOCK_FREE:
		sb_put_u64(sb, r->u.block_free.addr);
		sb_put_u32(sb, r->u.block_free.source);
		sb_put_u32(sb, r->u.block_free.flags);
		return 0;
	case TR_ENV:
		sb_put_str(sb, r->u.env.text);
		return 0;
	case TR_SOURCE: {
		const struct tr_source *s = &r->u.source;
		sb_put_u32(sb, s->origin);
		sb_put_u32(sb, s->flags);
		sb_put_u32(sb, s->module_id);
		sb_put_str(sb, s->kernel);
		sb_put_str(sb, s->path);
		sb_put_str(sb, s->meta);
		sb_put_str(sb, s->text);
		return 0;
	}
	case TR_STDERR:
		sb_put_u64(sb, r->u.stderr_tail.dropped);
		sb_put_u32(sb, (uint32_t)r->u.stderr_tail.exit_code);
		sb_put_str(sb, r->u.stderr_tail.text);
		return 0;
	case TR_TENSORMAP: {
		const struct tr_tensormap *m = &r->u.tmap;
		sb_put_u32(sb, m->api);
		sb_put_u32(sb, m->geom);
		sb_put_u32(sb, m->dtype);
		sb_put_u32(sb, m->rank);
		sb_put_u32(sb, m->interleave);
		sb_put_u32(sb, m->swizzle);
		sb_put_u32(sb, m->l2promo);
		sb_put_u32(sb, m->oobfill);
		sb_put_u64(sb, m->gaddr);
		for (int i = 0; i < TR_TMAP_MAX_RANK; i++)
			sb_put_u64(sb, m->dims[i]);
		for (int i = 0; i < TR_TMAP_MAX_RANK; i++)
			sb_put_u64(sb, m->strides[i]);
		for (int i = 0; i < TR_TMAP_MAX_RANK; i++)
			sb_put_u32(sb, m->box[i]);
		for (int i = 0; i < TR_TMAP_MAX_RANK; i++)
			sb_put_u32(sb, m->estrides[i]);
		for (int i = 0; i < 8; i++)
			sb_put_u32(sb, (uint32_t)m->extra[i]);
		sb_put_u32(sb, m->result);
		sb_add(sb, m->map, TR_TMAP_BYTES);
		return 0;
	}
	case TR_GRAPH_BEGIN:
	case TR_GRAPH_END:
	case TR_GRAPH_EXEC:
	case TR_GRAPH_LAUNCH:
		sb_put_u64(sb, r->u.graph.stream);
		sb_put_u64(sb, r->u.graph.graph);
		sb_put_u64(sb, r->u.graph.exec);
		sb_put_u32(sb, r->u.graph.flags);
		return 0;
	default:
		return -1;
	}
}

/* Records are encoded into w->enc, kept between records (a fresh strbuf
 * grew five times for a launch with its Python frames); one over 64 KiB is
 * not kept. */
long tw_record(struct trace_writer *w, const struct tr_rec *r)
{
	struct strbuf sb = STRBUF_INIT;
	long ev = -1;

	if (w->enc_alloc) {
		sb.buf = w->enc;
		sb.alloc = w->enc_alloc;
		sb.buf[0] = 0;
		w->enc = NULL;
		w->enc_alloc = 0;
	}
	if (r->type == TR_BLOB || tr_encode(r, &sb) < 0)
		BUG("tw_record: cannot encode record type %u", r->type);
	ev = write_framed(w, r->type, sb.buf, sb.len, NULL, 0);
	if (sb.alloc && sb.alloc <= (64 << 10)) {
		w->enc = sb.buf;
		w->enc_alloc = sb.alloc;
	} else {
		sb_release(&sb);
	}
	return ev;
}

static int write_blob_stored(struct trace_writer *w, uint64_t hash, uint64_t raw_size,
			     uint32_t codec, const void *data, size_t n)
{
	struct strbuf hdr = STRBUF_INIT;
	long ev;
	sb_put_u64(&hdr, hash);
	sb_put_u64(&hdr, raw_size);
	sb_put_u32(&hdr, codec);
	ev = write_framed(w, TR_BLOB, hdr.buf, hdr.len, data, n);
	sb_release(&hdr);
	if (ev < 0)
		return -1;
	seen_add(w, hash);
	w->bytes_stored += n;
	return 0;
}

int tw_blob(struct trace_writer *w, const void *data, size_t len, uint64_t *hash)
{
	*hash = tr_hash(data, len);
	return tw_blob_hashed(w, data, len, *hash);
}

/* w's reusable compression buffer, at least n bytes (NULL: out of memory;
 * the caller stores the blob raw). */
static void *zbuf_get(struct trace_writer *w, size_t n)
{
	void *p;
	if (w->zcap >= n)
		return w->zbuf;
	if (!(p = malloc(n)))
		return NULL;
	free(w->zbuf);
	w->zbuf = p;
	w->zcap = n;
	return p;
}

/*
 * Whether a large blob is worth compressing: zstd's fast levels leave most
 * float data (weights, normalised batches) as it is, after spending ~1-2 ms
 * per MiB finding that out on the capturing program's thread.  A 64 KiB
 * sample from the middle is tried first; under 3 % saved there, the blob is
 * stored raw (issue 26).  Small blobs are simply tried.
 */
enum { PROBE_MIN = 1 << 20, PROBE_LEN = 64 << 10 };

static int worth_compressing(struct trace_writer *w, const void *data, size_t len, void *z)
{
	size_t zn;

	if (len < PROBE_MIN || w->zstd_always)
		return 1;
	zn = ZSTD_compressCCtx(w->zctx, z, ZSTD_compressBound(PROBE_LEN),
			       (const char *)data + (len / 2 - PROBE_LEN / 2), PROBE_LEN, w->zstd_level);
	return !ZSTD_isError(zn) && zn < PROBE_LEN - PROBE_LEN / 32;
}

int tw_blob_hashed(struct trace_writer *w, const void *data, size_t len, uint64_t h)
{
	w->bytes_raw += len;
	if (seen_has(w, h))
		return 0;
	if (len >= 64) {
		size_t cap = ZSTD_compressBound(len);
		void *z = zbuf_get(w, cap);
		if (z && !w->zctx)
			w->zctx = ZSTD_createCCtx();
		if (z && w->zctx && worth_compressing(w, data, len, z)) {
			size_t zn = ZSTD_compressCCtx(w->zctx, z, cap, data, len, w->zstd_level);
			if (!ZSTD_isError(zn) && zn < len)
				return write_blob_stored(w, h, len, TR_CODEC_ZSTD, z, zn);
		}
	}
	return write_blob_stored(w, h, len, TR_CODEC_RAW, data, len);
}

int tw_copy_blob(struct trace_writer *w, const struct trace *t, uint64_t hash)
{
	long i;
	const struct tr_blob *b;

	if (seen_has(w, hash))
		return 0;
	i = trace_find_blob(t, hash);
	if (i < 0)
		return -1;
	b = &t->rec[i].u.blob;
	return write_blob_stored(w, b->hash, b->raw_size, b->codec, b->data, b->stored_size);
}
