/*
 * cand.c - candidate construction and writing (see cand.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../common/strbuf.h"
#include "../common/util.h"
#include "cand.h"

void cand_release(struct cand *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++)
		free(c->it[i].keep);
	free(c->it);
	c->it = NULL;
	c->n = c->alloc = 0;
}

void cand_copy(struct cand *dst, const struct cand *src)
{
	dst->it = xmalloc((src->n + 1) * sizeof(*dst->it));
	dst->n = dst->alloc = src->n;
	if (!src->n)
		dst->alloc = 1;
	if (src->n)
		memcpy(dst->it, src->it, src->n * sizeof(*dst->it));
	for (size_t i = 0; i < dst->n; i++)
		if (dst->it[i].nkeep) {
			dst->it[i].keep = xmalloc(dst->it[i].nkeep * sizeof(struct range));
			memcpy(dst->it[i].keep, src->it[i].keep, dst->it[i].nkeep * sizeof(struct range));
		} else {
			dst->it[i].keep = NULL;
		}
}

struct item *cand_add(struct cand *c, const struct trace *src, size_t i)
{
	struct item *it;
	ALLOC_GROW(c->it, c->n + 1, c->alloc);
	it = &c->it[c->n++];
	memset(it, 0, sizeof(*it));
	it->src = src;
	it->rec = src->rec[i];
	it->src_index = i;
	return it;
}

void cand_add_all(struct cand *c, const struct trace *src)
{
	for (size_t i = 0; i < src->nrec; i++)
		if (src->rec[i].type != TR_BLOB)
			cand_add(c, src, i);
}

size_t cand_count(const struct cand *c, uint32_t type)
{
	size_t k = 0;
	for (size_t i = 0; i < c->n; i++)
		k += c->it[i].rec.type == type;
	return k;
}

void cand_fill(uint8_t *dst, uint64_t n, uint32_t seed)
{
	uint32_t x = seed;
	fill_xorshift(dst, n, &x);
}

static long write_zero(struct trace_writer *w, uint64_t dst, uint64_t size)
{
	struct tr_rec r;
	memset(&r, 0, sizeof(r));
	r.type = TR_MEMSET;
	r.u.memset.dst = dst;
	r.u.memset.value = 0;
	r.u.memset.elem_size = 1;
	r.u.memset.width = size;
	r.u.memset.height = 1;
	return tw_record(w, &r);
}

static long write_h2d(struct trace_writer *w, uint64_t dst, const void *data, uint64_t size)
{
	return tw_h2d_data(w, &(struct tr_copy){ .dst = dst, .size = size }, data);
}

/* More kept ranges than this in one copy are written as one span: a
 * struct array whose pointer words alone are kept (262144 of them in 4
 * MiB) would otherwise be a copy record each, and repro.cu a statement
 * each (112 MB of C for bench-cpu's structs). */
#define KEEP_RANGES_APART 16

/* The kept ranges of a copy at dst (sorted, within data) as one H2D from
 * the first kept byte to the last, zeros between (the memset before it
 * zeroed the rest).  0, or -1 on a write failure. */
static int write_keep_span(struct trace_writer *w, uint64_t dst, const struct strbuf *data,
			   const struct range *keep, size_t nkeep)
{
	uint64_t lo = UINT64_MAX, hi = 0;
	unsigned char *buf;
	int ret;

	for (size_t k = 0; k < nkeep; k++) {
		if (keep[k].off + keep[k].len > data->len || !keep[k].len)
			continue;
		lo = keep[k].off < lo ? keep[k].off : lo;
		hi = keep[k].off + keep[k].len > hi ? keep[k].off + keep[k].len : hi;
	}
	if (lo >= hi)
		return 0;
	buf = xcalloc(hi - lo, 1);
	for (size_t k = 0; k < nkeep; k++)
		if (keep[k].off + keep[k].len <= data->len && keep[k].len)
			memcpy(buf + (keep[k].off - lo), data->buf + keep[k].off, keep[k].len);
	ret = write_h2d(w, dst + lo, buf, hi - lo) < 0 ? -1 : 0;
	free(buf);
	return ret;
}

static int write_item(struct trace_writer *w, const struct item *it, struct strbuf *err)
{
	const struct tr_rec *r = &it->rec;
	struct strbuf data = STRBUF_INIT;
	int ret = -1;

	if (!tr_type_known(r->type))
		return 0;   /* a newer writer's record: it cannot be encoded again, and replay skips it */
	switch (r->type) {
	case TR_BLOB:
		ret = 0;   /* blobs travel with the records that use them */
		goto out;
	case TR_MODULE:
		if (tw_copy_blob(w, it->src, r->u.module.blob) < 0)
			goto missing;
		break;
	case TR_MEMCPY_H2D:
		if (it->data_mode == DATA_ZERO) {
			ret = write_zero(w, r->u.copy.dst, r->u.copy.size) < 0 ? -1 : 0;
			goto out;
		}
		if (it->data_mode == DATA_FILL) {
			/* the seed stands for the bytes: no blob (docs/FORMAT.md), so
			 * a 4 GB buffer costs what a 4 KB one does */
			ret = tw_h2d(w, &(struct tr_copy){ .dst = r->u.copy.dst, .size = r->u.copy.size,
							   .src = it->seed, .flags = TR_F_FILL }) < 0 ? -1 : 0;
			goto out;
		}
		if (it->data_mode == DATA_KEEP) {
			if (write_zero(w, r->u.copy.dst, r->u.copy.size) < 0)
				goto out;
			if (trace_blob_read(it->src, r->u.copy.blob, &data, 0, err) < 0)
				goto out;
			if (it->nkeep > KEEP_RANGES_APART) {
				ret = write_keep_span(w, r->u.copy.dst, &data, it->keep, it->nkeep);
				goto out;
			}
			for (size_t k = 0; k < it->nkeep; k++) {
				const struct range *g = &it->keep[k];
				if (g->off + g->len > data.len)
					continue;
				if (write_h2d(w, r->u.copy.dst + g->off, data.buf + g->off, g->len) < 0)
					goto out;
			}
			ret = 0;
			goto out;
		}
		if (tw_copy_blob(w, it->src, r->u.copy.blob) < 0)
			goto missing;
		break;
	default:
		break;
	}
	ret = tw_record(w, r) < 0 ? -1 : 0;
	goto out;
missing:
	sb_addf(err, "%s: a blob needed by event %zu is missing", it->src->path, it->src_index);
out:
	sb_release(&data);
	return ret;
}

/* A candidate is a whole trace: it ends with an END record (exit code
 * unknown), so that replay and show do not call it incomplete
 * (trace_complete).  A kept END of the source is dropped for this one. */
static long write_end(struct trace_writer *w, const struct cand *c)
{
	struct tr_rec r;
	memset(&r, 0, sizeof(r));
	r.type = TR_END;
	r.u.end.exit_code = -1;
	for (size_t i = 0; i < c->n; i++) {
		r.u.end.launches += c->it[i].rec.type == TR_LAUNCH;
		r.u.end.allocs += c->it[i].rec.type == TR_ALLOC;
		if (c->it[i].rec.type == TR_MEMCPY_H2D)
			r.u.end.bytes_h2d += c->it[i].rec.u.copy.size;
	}
	return tw_record(w, &r);
}

/* The errno of the first candidate that could not be written (a full
 * disk): shrink then ends with the environment's exit code, not "does not
 * reproduce" (cand_write_error). */
static int g_write_errno;

int cand_write_error(void)
{
	return g_write_errno;
}

void cand_write_error_reset(void)
{
	g_write_errno = 0;
}

int cand_write(const struct cand *c, const char *path, struct strbuf *err)
{
	struct trace_writer w = TRACE_WRITER_INIT;
	struct strbuf e = STRBUF_INIT;
	int ret = -1, io = 0;

	if (tw_open(&w, path, &e) < 0) {
		io = errno ? errno : EIO;   /* it could not be created, or its header written */
		goto out;
	}
	tw_set_buffer(&w, WRITE_BUFFER_BYTES);   /* written whole, then read: no record needs its own write(2) */
	for (size_t i = 0; i < c->n; i++)
		if (c->it[i].rec.type != TR_END && write_item(&w, &c->it[i], &e) < 0)
			goto close;
	if (write_end(&w, c) < 0)
		goto close;
	ret = 0;
close:
	if (tw_close(&w) < 0)
		ret = -1;
	if (w.failed)
		io = w.err;   /* set with failed (tw_set_failed) */
out:
	if (ret < 0) {
		if (io && !g_write_errno)
			g_write_errno = io;
		if (err->len)
			sb_adds(err, "; ");   /* after an earlier failure's message */
		if (io && !e.len)
			sb_addf(err, "%s: writing it failed: %s", path, strerror(io));
		else if (io && !strstr(e.buf, strerror(io)))
			sb_addf(err, "%s (%s)", e.buf, strerror(io));
		else
			sb_addf(err, "%s", e.len ? e.buf : "write failed");
	}
	sb_release(&e);
	return ret;
}
