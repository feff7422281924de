/*
 * write.c - encoding side of the trace format (see trace.h, docs/FORMAT.md).
 *
 * Used by the capture library inside the traced process (so it must not
 * print, exit or take locks of its own: the caller serialises calls) and by
 * replay/the reducer when they write snapshots and reduced traces.  Each
 * record goes to disk with one write(2) (writev(2): header and payload
 * where they lie), so the file is complete up to the last whole record
 * whenever the process dies; a writer given a buffer (tw_set_buffer:
 * capture's hot path) gathers records and writes them together, and its
 * owner decides when they must be on disk (tw_flush).  Capture may also
 * route what leaves the writer through its own queue (w->out, see
 * capture/writeq.c).
 * The encoder of each record type and the constructors (tw_alloc, tw_h2d,
 * ...) are generated from trace/records.def; the enc_* hooks here write
 * the variable-length parts.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/uio.h>
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

static void same_release(struct trace_writer *w);   /* 2.0: short launches, below */

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
	int ret = tw_flush(w) < 0 || w->failed ? -1 : 0, fd = w->fd;
	w->fd = -1;   /* (before tw_set_failed: the number may be reused already) */
	if (fd >= 0 && close(fd) < 0) {
		tw_set_failed(w, errno);   /* a full disk may first show here (NFS) */
		ret = -1;
	}
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
	free(w->np_seen);
	w->np_seen = NULL;
	w->np_n = w->np_cap = 0;
	same_release(w);
	return ret;
}

/* ---- where the bytes go ---- */

int tw_writev_all(int fd, const struct iovec *iov, int n)
{
	struct iovec v[TW_OUT_MAX_IOV];
	int k = 0;

	if (n < 0 || n > TW_OUT_MAX_IOV)
		return -1;
	memcpy(v, iov, (size_t)n * sizeof(*v));
	while (k < n) {
		ssize_t got;
		if (!v[k].iov_len) {
			k++;
			continue;
		}
		got = writev(fd, v + k, n - k);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			if (!got)
				errno = EIO;   /* nothing written, no error said */
			return -1;
		}
		while (got > 0 && k < n) {   /* a short write: skip what went */
			size_t m = (size_t)got < v[k].iov_len ? (size_t)got : v[k].iov_len;
			v[k].iov_base = (char *)v[k].iov_base + m;
			v[k].iov_len -= m;
			got -= (ssize_t)m;
			if (!v[k].iov_len)
				k++;
		}
	}
	return 0;
}

/* The pieces, in order, to the file: through w->out when the owner set
 * one (capture's writer thread, capture/writeq.c), else one writev(2). */
static int write_out(struct trace_writer *w, const struct iovec *iov, int n)
{
	int r = w->out ? w->out(w, iov, n) : tw_writev_all(w->fd, iov, n);
	if (r < 0)
		tw_set_failed(w, errno);   /* w->out sets errno too */
	return r;
}

const char *tw_why(const struct trace_writer *w)
{
	static _Thread_local char buf[128];
	if (!w->err)
		return "";
	snprintf(buf, sizeof(buf), ": %s", strerror(w->err));
	return buf;
}

void tw_set_failed(struct trace_writer *w, int err)
{
	struct stat sb;

	if (w->failed)
		return;
	w->failed = 1;
	w->err = err ? err : EIO;
	/* what the file holds (the offset counts buffered records too) */
	w->err_offset = w->fd >= 0 && fstat(w->fd, &sb) == 0 ? (uint64_t)sb.st_size : w->offset;
	if (w->on_fail)
		w->on_fail(w);
}

/* ---- buffered records ---- */

int tw_flush(struct trace_writer *w)
{
	size_t n = w->wlen;
	struct iovec v;

	if (!n)
		return 0;
	w->wlen = 0;
	if (w->failed || w->fd < 0)
		return -1;
	v.iov_base = w->wbuf;
	v.iov_len = n;
	return write_out(w, &v, 1);
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
	struct iovec v = { (void *)data, len };

	if (tw_flush(w) < 0 || w->failed || w->fd < 0)
		return -1;
	if (len && write_out(w, &v, 1) < 0)
		return -1;
	w->offset += len;
	w->nrec += nrec;
	return 0;
}

/* ---- framing ---- */

/* The 16-byte record header write_framed puts before a payload. */
static void put_record_header(uint8_t *h, uint32_t type, uint32_t sum, uint64_t len)
{
	for (int i = 0; i < 4; i++) {
		h[i] = (uint8_t)(type >> (8 * i));
		h[4 + i] = (uint8_t)(sum >> (8 * i));
	}
	for (int i = 0; i < 8; i++)
		h[8 + i] = (uint8_t)(len >> (8 * i));
}

/* One framed record into w's buffer (which has room). */
static void buffer_framed(struct trace_writer *w, uint32_t type, uint32_t sum, const void *pay1,
			  size_t n1, const void *pay2, size_t n2)
{
	put_record_header((uint8_t *)w->wbuf + w->wlen, type, sum, (uint64_t)(n1 + n2));
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
	XXH32_state_t st;
	size_t total = TRACE_RECORD_HEADER_SIZE + n1 + n2;
	uint8_t hdr[TRACE_RECORD_HEADER_SIZE];
	struct iovec v[3];

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
	/* one writev(2): the header and the payload's parts where they are
	 * (a large blob is not copied into a buffer first) */
	put_record_header(hdr, type, XXH32_digest(&st), (uint64_t)(n1 + n2));
	v[0].iov_base = hdr;
	v[0].iov_len = sizeof(hdr);
	v[1].iov_base = (void *)pay1;
	v[1].iov_len = n1;
	v[2].iov_base = (void *)pay2;
	v[2].iov_len = n2;
	if (write_out(w, v, n2 ? 3 : 2) < 0)
		return -1;
	w->offset += total;
	return (long)w->nrec++;
}

/* ---- payload encoding: generated from trace/records.def ---- */

static void put_dim3(struct strbuf *sb, const struct tr_dim3 *d)
{
	sb_put_u32(sb, d->x);
	sb_put_u32(sb, d->y);
	sb_put_u32(sb, d->z);
}

/* The variable-length parts the table names (VAR fields): enc_<field>
 * appends them; 0 or -1 (cannot be encoded). */

static int enc_process_argv(struct strbuf *sb, const struct tr_process *p)
{
	sb_put_u32(sb, p->argc);
	for (uint32_t i = 0; i < p->argc; i++)
		sb_put_str(sb, p->argv[i]);
	return 0;
}

/* The stored bytes follow the header as the second part of the framed
 * record (write_blob_stored). */
static int enc_blob_data(struct strbuf *sb, const struct tr_blob *b)
{
	return 0;
}

static int enc_launch_params(struct strbuf *sb, const struct tr_launch *l)
{
	sb_put_u32(sb, l->nparams);
	for (uint32_t i = 0; i < l->nparams; i++) {
		sb_put_u32(sb, l->params[i].offset);
		sb_put_u32(sb, l->params[i].size);
	}
	return 0;
}

static int enc_launch_args(struct strbuf *sb, const struct tr_launch *l)
{
	sb_put_bytes(sb, l->args, l->argsize);
	return 0;
}

static int enc_launch_attrs(struct strbuf *sb, const struct tr_launch *l)
{
	sb_put_u32(sb, l->nattrs);
	for (uint32_t i = 0; i < l->nattrs; i++) {
		uint32_t len = l->attrs[i].len > 64 ? 64 : l->attrs[i].len;
		sb_put_u32(sb, l->attrs[i].id);
		sb_put_bytes(sb, l->attrs[i].value, len);
	}
	return 0;
}

static void enc_frames(struct strbuf *sb, uint32_t n, const struct tr_frame *frames)
{
	sb_put_u32(sb, n);
	for (uint32_t i = 0; i < n; i++) {
		sb_put_str(sb, frames[i].file);
		sb_put_str(sb, frames[i].func);
		sb_put_u32(sb, frames[i].line);
	}
}

static int enc_launch_frames(struct strbuf *sb, const struct tr_launch *l)
{
	enc_frames(sb, l->nframes, l->frames);
	return 0;
}

/* 1.8: the PYSTACK id only for a launch without frames of its own (a
 * launch read from a trace has its frames, and stack 0) */
static int enc_launch_stack(struct strbuf *sb, const struct tr_launch *l)
{
	sb_put_u32(sb, l->nframes ? 0 : l->stack);
	return 0;
}

static int enc_pystack_frames(struct strbuf *sb, const struct tr_pystack *p)
{
	enc_frames(sb, p->nframes, p->frames);
	return 0;
}

/* One encoder per layout: each field in table order. */
#define ENC_U32(f) sb_put_u32(sb, x->f);
#define ENC_U64(f) sb_put_u64(sb, x->f);
#define ENC_I32(f) sb_put_u32(sb, (uint32_t)x->f);
#define ENC_STR(f) sb_put_str(sb, x->f);
#define ENC_DIM3(f) put_dim3(sb, &x->f);
#define ENC_U64_ARR(f) for (size_t i_ = 0; i_ < ARRAY_SIZE(x->f); i_++) sb_put_u64(sb, x->f[i_]);
#define ENC_U32_ARR(f) for (size_t i_ = 0; i_ < ARRAY_SIZE(x->f); i_++) sb_put_u32(sb, x->f[i_]);
#define ENC_I32_ARR(f) for (size_t i_ = 0; i_ < ARRAY_SIZE(x->f); i_++) sb_put_u32(sb, (uint32_t)x->f[i_]);
#define ENC_BYTES(f) sb_add(sb, x->f, sizeof(x->f));
#define ENC_VAR(f) if (enc_##f(sb, x) < 0) return -1;
#define ENC_CHECK(f)
#define ENC_FIELD_(kind, field, name, show) ENC_##kind(field)
#define ENC_LAYOUT_(layout, tag) \
	static int enc_layout_##layout(struct strbuf *sb, const struct tag *x) \
	{ TR_FIELDS_##layout(ENC_FIELD_) return 0; }
TR_LAYOUTS(ENC_LAYOUT_)

int tr_encode(const struct tr_rec *r, struct strbuf *sb)
{
	switch (r->type) {
#define ENC_CASE_(NAME, num, layout, ctor, rec) \
	case TR_##NAME: return enc_layout_##layout(sb, &r->u.layout);
	TR_RECORDS(ENC_CASE_)
	default:
		return -1;
	}
}

/* 1.7: before the first LAUNCH of a kernel that carries a nonptr list
 * (it came from a trace that was read), that list as NONPTR records, so a
 * trace cut from another keeps what the other's launches showed. */
static void write_nonptr(struct trace_writer *w, const struct tr_launch *l)
{
	uint64_t lay;
	/* the launches of one (kernel, layout) share their list (nonptr.inc) */
	for (size_t i = 0; i < w->np_n; i++)
		if (w->np_seen[i] == l->nonptr)
			return;
	ALLOC_GROW(w->np_seen, w->np_n + 1, w->np_cap);
	w->np_seen[w->np_n++] = l->nonptr;
	lay = tr_launch_layout(l);
	for (uint32_t k = 0; k < l->nnonptr; k++)
		tw_nonptr(w, &(struct tr_nonptr){ .kernel = l->name, .layout = lay, .offset = l->nonptr[k] });
}

/* ---- 2.0: short launches (docs/FORMAT.md "Short launches") ----
 *
 * A direct-mapped cache of the launches this writer wrote: (func, name,
 * layout, argument bytes) -> the event of the last one.  A hit is checked
 * field by field and byte for byte (by function, tw_short_launches_by_func:
 * function, sizes and the bytes' XXH3 only, nothing else read); the record
 * written names it by how many records back it stands and carries the
 * XXH3 of the argument bytes, which the reader checks. */
enum { SAME_SLOTS = 8192 };   /* a power of two */
/* larger argument blocks (up to 32 KiB since CUDA 12.1) are written whole:
 * the table then holds at most SAME_SLOTS x 4 KiB of them */
enum { SAME_MAX_ARGS = 4096 };

struct tw_same_ent {
	long ev;                 /* -1: empty */
	uint64_t func, hash;
	char *name;              /* compared by content: a writer's caller may reuse
				  * one buffer for every name (mktrace's line);
				  * by function (same_by_func): none kept */
	uint32_t nparams, argsize, pcap, acap;
	uint32_t namelen;        /* by function: the name's length, for same_saved */
	struct tr_param *params;
	uint8_t *args;           /* by function: none kept */
};

void tw_short_launches(struct trace_writer *w)
{
	if (w->same)
		return;
	w->same = xcalloc(SAME_SLOTS, sizeof(*w->same));
	tw_forget_launches(w);
}

void tw_short_launches_by_func(struct trace_writer *w)
{
	tw_short_launches(w);
	w->same_by_func = 1;
}

void tw_forget_launches(struct trace_writer *w)
{
	if (w->same)
		for (size_t i = 0; i < SAME_SLOTS; i++)
			w->same[i].ev = -1;
}

static void same_release(struct trace_writer *w)
{
	if (!w->same)
		return;
	for (size_t i = 0; i < SAME_SLOTS; i++) {
		free(w->same[i].name);
		free(w->same[i].params);
		free(w->same[i].args);
	}
	free(w->same);
	w->same = NULL;
	w->same_by_func = 0;
}

static struct tw_same_ent *same_slot(struct trace_writer *w, const struct tr_launch *l, uint64_t hash)
{
	return &w->same[(hash ^ (l->func * 0x9E3779B97F4A7C15ull)) & (SAME_SLOTS - 1)];
}

static int same_match(const struct trace_writer *w, const struct tw_same_ent *e, const struct tr_launch *l,
		      uint64_t hash, uint64_t nrec)
{
	if (!(e->ev >= 0 && (uint64_t)e->ev < nrec && e->func == l->func && e->hash == hash &&
	      e->argsize == l->argsize && e->nparams == l->nparams))
		return 0;
	if (w->same_by_func)
		return 1;   /* the function names its kernel and layout; the hash, its bytes */
	return !strcmp(e->name, l->name) &&
	       (!l->nparams || !memcmp(e->params, l->params, l->nparams * sizeof(*l->params))) &&
	       (!l->argsize || !memcmp(e->args, l->args, l->argsize));
}

static void same_store(const struct trace_writer *w, struct tw_same_ent *e, const struct tr_launch *l,
		       uint64_t hash, long ev)
{
	e->func = l->func;
	e->hash = hash;
	e->nparams = l->nparams;
	e->argsize = l->argsize;
	e->ev = ev;
	if (w->same_by_func) {
		e->namelen = (uint32_t)strlen(l->name);
		return;
	}
	if (!e->name || strcmp(e->name, l->name)) {
		free(e->name);
		e->name = xstrdup(l->name);
	}
	if (e->pcap < l->nparams) {
		free(e->params);
		e->pcap = l->nparams;
		e->params = xmalloc(e->pcap * sizeof(*e->params));
	}
	if (l->nparams)
		memcpy(e->params, l->params, l->nparams * sizeof(*l->params));
	if (e->acap < l->argsize) {
		free(e->args);
		e->acap = l->argsize;
		e->args = xmalloc(e->acap);
	}
	if (l->argsize)
		memcpy(e->args, l->args, l->argsize);
}

static long encode_record(struct trace_writer *w, const struct tr_rec *r);

/* A LAUNCH through the cache: short when it repeats one written before. */
static long same_record(struct trace_writer *w, const struct tr_rec *r)
{
	const struct tr_launch *l = &r->u.launch;
	uint64_t hash = l->args_hash ? l->args_hash : tr_hash(l->args, l->argsize), back;
	struct tw_same_ent *e = same_slot(w, l, hash);
	uint8_t ref[16];
	struct tr_rec s;
	long ev;

	if (same_match(w, e, l, hash, w->nrec)) {
		back = w->nrec - (uint64_t)e->ev;
		s = *r;
		s.u.launch.flags |= TR_F_SAME;
		s.u.launch.name = "";
		s.u.launch.nparams = 0;
		s.u.launch.params = NULL;
		s.u.launch.nnonptr = 0;
		for (int i = 0; i < 8; i++) {
			ref[i] = (uint8_t)(back >> (8 * i));
			ref[8 + i] = (uint8_t)(hash >> (8 * i));
		}
		s.u.launch.args = ref;
		s.u.launch.argsize = sizeof(ref);
		ev = encode_record(w, &s);
		if (ev >= 0) {
			e->ev = ev;
			w->same_short++;
			w->same_saved += (w->same_by_func ? e->namelen : strlen(l->name)) +
					 8ull * l->nparams + l->argsize;
		}
		return ev;
	}
	ev = encode_record(w, r);
	if (ev >= 0)
		same_store(w, e, l, hash, ev);
	return ev;
}

/* Records are encoded into w->enc, kept between records (a fresh strbuf
 * grew five times for a launch with its Python frames); one over 64 KiB is
 * not kept. */
long tw_record(struct trace_writer *w, const struct tr_rec *r)
{
	if (r->type == TR_LAUNCH && r->u.launch.nnonptr && r->u.launch.name)
		write_nonptr(w, &r->u.launch);
	if (r->type == TR_LAUNCH && w->same && r->u.launch.name && *r->u.launch.name &&
	    !(r->u.launch.flags & TR_F_SAME) && (r->u.launch.args || !r->u.launch.argsize) &&
	    r->u.launch.argsize <= SAME_MAX_ARGS)
		return same_record(w, r);
	return encode_record(w, r);
}

static long encode_record(struct trace_writer *w, const struct tr_rec *r)
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

/* The record constructors trace.h declares: one per row of TR_RECORDS. */
#define TW_CTOR_0(NAME, layout, ctor)
#define TW_CTOR_1(NAME, layout, ctor) \
	long tw_##ctor(struct trace_writer *w, const tr_layout_##layout *v) \
	{ \
		struct tr_rec r; \
		memset(&r, 0, sizeof(r)); \
		r.type = TR_##NAME; \
		r.u.layout = *v; \
		return tw_record(w, &r); \
	}
#define TW_CTOR_(NAME, num, layout, ctor, rec) TW_CTOR_##rec(NAME, layout, ctor)
TR_RECORDS(TW_CTOR_)

long tw_h2d_data(struct trace_writer *w, const struct tr_copy *c, const void *data)
{
	struct tr_copy h = *c;
	if (tw_blob(w, data, (size_t)c->size, &h.blob) < 0)
		return -1;
	return tw_h2d(w, &h);
}

static int write_blob_stored(struct trace_writer *w, uint64_t hash, uint64_t raw_size,
			     uint32_t codec, const void *data, size_t n)
{
	struct strbuf hdr = STRBUF_INIT;
	struct tr_rec r = { .type = TR_BLOB };
	long ev;
	r.u.blob.hash = hash;
	r.u.blob.raw_size = raw_size;
	r.u.blob.codec = codec;
	tr_encode(&r, &hdr);   /* the header fields; the bytes follow */
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
 * per MiB finding that out on the capturing program's thread.  A sample
 * from the middle (an eighth of the blob, at most 64 KiB) is tried first;
 * under a third saved there, the blob is stored raw (issue 26): float
 * images normalised on the CPU save ~16 % at level -1 (25 % on a 64 KiB
 * sample: a sample over-states the whole) and cost ~2.9 ms per MiB to
 * compress against ~0.35 ms stored raw (build/blobcost), so a loop that
 * copies them paid 8x for a sixth of their disk.  Zeros, stale and sparse
 * memory save far more than a third.  Blobs under 128 KiB are
 * simply tried.  The sample starts at 128 KiB, not 1 MiB: a
 * host-fed loop's batch (64 uint8 images of 3x64x64: 768 KiB) was zstd'd
 * whole every step (the H200's 0.69 ms/MiB "compress+write").
 */
enum { PROBE_MIN = 128 << 10, PROBE_MAX = 64 << 10 };

static int worth_compressing(struct trace_writer *w, const void *data, size_t len, void *z)
{
	size_t zn, n = len / 8 < PROBE_MAX ? len / 8 : PROBE_MAX;

	if (len < PROBE_MIN || w->zstd_always)
		return 1;
	zn = ZSTD_compressCCtx(w->zctx, z, ZSTD_compressBound(n),
			       (const char *)data + (len / 2 - n / 2), n, w->zstd_level);
	return !ZSTD_isError(zn) && zn < n - n / 3;
}

int tw_blob_hashed(struct trace_writer *w, const void *data, size_t len, uint64_t h)
{
	w->bytes_raw += len;
	if (seen_has(w, h))
		return 0;
	return tw_blob_store(w, data, len, h);
}

int tw_blob_store(struct trace_writer *w, const void *data, size_t len, uint64_t h)
{
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
