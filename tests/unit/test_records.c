/*
 * test_records.c - the record table (trace/records.def) against the format
 * as written out by hand.  Every record type the table knows gets one
 * record with a distinct value in each field; what tr_encode() makes of it
 * must equal the bytes docs/FORMAT.md describes, built here field by field
 * with a naive little-endian writer of the test's own (not strbuf's).  The
 * same records are then framed by the writer and read back (decode of
 * encode is the identity), every strict prefix of each payload must be
 * refused by the reader with an error, and the constructors (tw_alloc,
 * tw_h2d, ...) must write what tw_record does.  A row added to the table
 * without a case here fails records_every_type_has_golden_bytes.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "../../common/strbuf.h"
#include "../../common/util.h"
#include "../../trace/trace.h"
#include "unit.h"

/* ---- the naive reference writer ---- */

struct exp {
	unsigned char b[1024];
	size_t n;
};

static void e_le(struct exp *e, uint64_t v, int bytes)
{
	for (int i = 0; i < bytes; i++)
		e->b[e->n++] = (unsigned char)(v >> (8 * i));
}
static void e_u32(struct exp *e, uint32_t v) { e_le(e, v, 4); }
static void e_u64(struct exp *e, uint64_t v) { e_le(e, v, 8); }
static void e_bytes(struct exp *e, const void *p, size_t n)
{
	memcpy(e->b + e->n, p, n);
	e->n += n;
}
static void e_str(struct exp *e, const char *s)
{
	e_u32(e, (uint32_t)strlen(s));
	e_bytes(e, s, strlen(s));
}

/* ---- one record of each type, and its bytes ---- */

static const char *argv3[] = { "python", "train.py", "--lr=3", NULL };
static struct tr_param params[2] = { { 0, 8 }, { 8, 4 } };
static uint8_t args[12] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 };
static struct tr_launch_attr attrs[1] = { { 7, 4, { 0xaa, 0xbb, 0xcc, 0xdd } } };
static struct tr_frame frames[2] = { { "a.py", "f", 10 }, { "b.py", "g", 20 } };

/* Fills r with a record of `type` and e with its payload; 0, or -1 for a
 * type this test has no case for. */
static int golden(uint32_t type, struct tr_rec *r, struct exp *e)
{
	memset(r, 0, sizeof(*r));
	e->n = 0;
	r->type = type;
	switch (type) {
	case TR_PROCESS:
		r->u.process = (struct tr_process){ 4242, 1764669060000000001ull, "/work", 3, argv3 };
		e_u32(e, 4242); e_u64(e, 1764669060000000001ull); e_str(e, "/work");
		e_u32(e, 3); e_str(e, "python"); e_str(e, "train.py"); e_str(e, "--lr=3");
		return 0;
	case TR_DEVICE:
		r->u.device = (struct tr_device){ 1, "NVIDIA H200", 9, 0, 13000, 12080, 150754820096ull, 132 };
		e_u32(e, 1); e_str(e, "NVIDIA H200"); e_u32(e, 9); e_u32(e, 0); e_u32(e, 13000);
		e_u32(e, 12080); e_u64(e, 150754820096ull); e_u32(e, 132);
		return 0;
	case TR_BLOB:   /* the header only: the stored bytes follow (tw_blob) */
		r->u.blob = (struct tr_blob){ 0x1122334455667788ull, 99, TR_CODEC_ZSTD, NULL, 0 };
		e_u64(e, 0x1122334455667788ull); e_u64(e, 99); e_u32(e, TR_CODEC_ZSTD);
		return 0;
	case TR_MODULE:
		r->u.module = (struct tr_module){ 17, TR_MOD_ELF, 0xabcdef0123456789ull, 4096 };
		e_u32(e, 17); e_u32(e, TR_MOD_ELF); e_u64(e, 0xabcdef0123456789ull); e_u64(e, 4096);
		return 0;
	case TR_ALLOC:
		r->u.alloc = (struct tr_alloc){ 0x7f0000001000ull, 4000, TR_MEM_GLOBAL, 0x3, "table" };
		e_u64(e, 0x7f0000001000ull); e_u64(e, 4000); e_u32(e, TR_MEM_GLOBAL); e_u32(e, 3);
		e_str(e, "table");
		return 0;
	case TR_FREE:
		r->u.free = (struct tr_free){ 0x7f0000001000ull, TR_MEM_ASYNC };
		e_u64(e, 0x7f0000001000ull); e_u32(e, TR_MEM_ASYNC);
		return 0;
	case TR_MEMCPY_H2D:
	case TR_MEMCPY_D2D:
	case TR_MEMCPY_D2H:
		r->u.copy = (struct tr_copy){ 0xd000 + type, 0x5000, 256, 0x99 * type, 0xca97, TR_F_ASYNC };
		e_u64(e, 0xd000 + type); e_u64(e, 0x5000); e_u64(e, 256); e_u64(e, 0x99 * type);
		e_u64(e, 0xca97); e_u32(e, TR_F_ASYNC);
		return 0;
	case TR_MEMSET:
		r->u.memset = (struct tr_memset){ 0xd100, 0xdeadbeef, 4, 1000, 2, 8192, 0xca97, 3 };
		e_u64(e, 0xd100); e_u32(e, 0xdeadbeef); e_u32(e, 4); e_u64(e, 1000); e_u64(e, 2);
		e_u64(e, 8192); e_u64(e, 0xca97); e_u32(e, 3);
		return 0;
	case TR_LAUNCH: {
		struct tr_launch *l = &r->u.launch;
		l->seq = 5; l->func = 0xf00d; l->name = "_Z4fillPfi"; l->api = TR_API_LAUNCH_KERNEL_EX;
		l->flags = TR_F_FOLDED; l->grid = (struct tr_dim3){ 2, 3, 4 };
		l->block = (struct tr_dim3){ 128, 1, 1 }; l->shmem = 96; l->stream = 0xca97;
		l->nparams = 2; l->params = params; l->argsize = 12; l->args = args;
		l->nattrs = 1; l->attrs = attrs; l->tid = 777; l->py_state = TR_PY_FRAMES;
		l->nframes = 2; l->frames = frames;
		e_u64(e, 5); e_u64(e, 0xf00d); e_str(e, "_Z4fillPfi"); e_u32(e, TR_API_LAUNCH_KERNEL_EX);
		e_u32(e, TR_F_FOLDED); e_u32(e, 2); e_u32(e, 3); e_u32(e, 4); e_u32(e, 128); e_u32(e, 1);
		e_u32(e, 1); e_u32(e, 96); e_u64(e, 0xca97);
		e_u32(e, 2); e_u32(e, 0); e_u32(e, 8); e_u32(e, 8); e_u32(e, 4);
		e_u32(e, 12); e_bytes(e, args, 12);
		e_u32(e, 1); e_u32(e, 7); e_u32(e, 4); e_bytes(e, "\xaa\xbb\xcc\xdd", 4);
		e_u32(e, 777); e_u32(e, TR_PY_FRAMES);
		e_u32(e, 2); e_str(e, "a.py"); e_str(e, "f"); e_u32(e, 10);
		e_str(e, "b.py"); e_str(e, "g"); e_u32(e, 20);
		e_u32(e, 0);   /* 1.8: stack (frames of its own: 0) */
		return 0;
	}
	case TR_FAULT:
		r->u.fault = (struct tr_fault){ 700, "CUDA_ERROR_ILLEGAL_ADDRESS", "cuCtxSynchronize", 5, 1,
						"_Z4fillPfi" };
		e_u32(e, 700); e_str(e, "CUDA_ERROR_ILLEGAL_ADDRESS"); e_str(e, "cuCtxSynchronize");
		e_u64(e, 5); e_u32(e, 1); e_str(e, "_Z4fillPfi");
		return 0;
	case TR_FUNC_ATTR:
		r->u.func_attr = (struct tr_func_attr){ "_Z1kv", 8, -65536 };
		e_str(e, "_Z1kv"); e_u32(e, 8); e_u32(e, (uint32_t)-65536);
		return 0;
	case TR_FUNC_INFO:
		r->u.func_info = (struct tr_func_info){ 0xf00d, "_Z1kv", 128, 40, 4096, 16, -1, 90, 90 };
		e_u64(e, 0xf00d); e_str(e, "_Z1kv"); e_u32(e, 128); e_u32(e, 40); e_u32(e, 4096);
		e_u32(e, 16); e_u32(e, 0xffffffffu); e_u32(e, 90); e_u32(e, 90);
		return 0;
	case TR_END:
		r->u.end = (struct tr_end){ -1, 7, 4, 4612 };
		e_u32(e, 0xffffffffu); e_u64(e, 7); e_u64(e, 4); e_u64(e, 4612);
		return 0;
	case TR_NOTE:
		r->u.note.text = "unsupported: cuMemPrefetchAsync";
		e_str(e, "unsupported: cuMemPrefetchAsync");
		return 0;
	case TR_REDUCTION:
		r->u.reduction.text = "launches: 7 -> 1";
		e_str(e, "launches: 7 -> 1");
		return 0;
	case TR_GRAPH_BEGIN:
	case TR_GRAPH_END:
	case TR_GRAPH_EXEC:
	case TR_GRAPH_LAUNCH:
		r->u.graph = (struct tr_graph){ 0x51 * type, 0x6a, 0xe7, 0 };
		e_u64(e, 0x51 * type); e_u64(e, 0x6a); e_u64(e, 0xe7); e_u32(e, 0);
		return 0;
	case TR_CHECKPOINT_BEGIN:
	case TR_CHECKPOINT_END:
		r->u.checkpoint = (struct tr_checkpoint){ 2, 1000, 12, 1 << 20, 4096 * type, 0 };
		e_u64(e, 2); e_u64(e, 1000); e_u64(e, 12); e_u64(e, 1 << 20); e_u64(e, 4096 * type);
		e_u32(e, 0);
		return 0;
	case TR_BLOCK_ALLOC:
		r->u.block = (struct tr_block){ 0x7f0000000200ull, 4000, 4096, 0x7f0000000000ull,
						TR_BLK_TORCH, TR_BLK_F_INITIAL, "train.py", "main", 42 };
		e_u64(e, 0x7f0000000200ull); e_u64(e, 4000); e_u64(e, 4096); e_u64(e, 0x7f0000000000ull);
		e_u32(e, TR_BLK_TORCH); e_u32(e, TR_BLK_F_INITIAL); e_str(e, "train.py"); e_str(e, "main");
		e_u32(e, 42);
		return 0;
	case TR_BLOCK_FREE:
		r->u.block_free = (struct tr_block_free){ 0x7f0000000200ull, TR_BLK_CUPY, 0 };
		e_u64(e, 0x7f0000000200ull); e_u32(e, TR_BLK_CUPY); e_u32(e, 0);
		return 0;
	case TR_BLOCK_BATCH:
		r->u.block_batch = (struct tr_block_batch){ 1234, 1240, 0 };
		e_u64(e, 1234); e_u64(e, 1240); e_u32(e, 0);
		return 0;
	case TR_NONPTR:
		r->u.nonptr = (struct tr_nonptr){ "_ZN5cudnn4kernE", 0x1234567890abcdefull, 32, 0 };
		e_str(e, "_ZN5cudnn4kernE"); e_u64(e, 0x1234567890abcdefull); e_u32(e, 32); e_u32(e, 0);
		return 0;
	case TR_PYSTACK:
		r->u.pystack = (struct tr_pystack){ 9, 2, frames };
		e_u32(e, 9);
		e_u32(e, 2); e_str(e, "a.py"); e_str(e, "f"); e_u32(e, 10);
		e_str(e, "b.py"); e_str(e, "g"); e_u32(e, 20);
		return 0;
	case TR_TENSORMAP: {
		struct tr_tensormap *m = &r->u.tmap;
		m->api = TR_TMAP_TILED; m->geom = 0; m->dtype = 7; m->rank = 3; m->interleave = 0;
		m->swizzle = 3; m->l2promo = 2; m->oobfill = 1; m->gaddr = 0x7f0000100000ull;
		for (int i = 0; i < TR_TMAP_MAX_RANK; i++) {
			m->dims[i] = 1000 + i; m->strides[i] = 4096ull << i;
			m->box[i] = 64 + i; m->estrides[i] = 1 + i;
		}
		for (int i = 0; i < 8; i++)
			m->extra[i] = -i;
		m->result = 0;
		for (int i = 0; i < TR_TMAP_BYTES; i++)
			m->map[i] = (uint8_t)(i * 7);
		e_u32(e, TR_TMAP_TILED); e_u32(e, 0); e_u32(e, 7); e_u32(e, 3); e_u32(e, 0); e_u32(e, 3);
		e_u32(e, 2); e_u32(e, 1); e_u64(e, 0x7f0000100000ull);
		for (int i = 0; i < 5; i++) e_u64(e, 1000 + i);
		for (int i = 0; i < 5; i++) e_u64(e, 4096ull << i);
		for (int i = 0; i < 5; i++) e_u32(e, 64 + i);
		for (int i = 0; i < 5; i++) e_u32(e, 1 + i);
		for (int i = 0; i < 8; i++) e_u32(e, (uint32_t)-i);
		e_u32(e, 0);
		e_bytes(e, m->map, 128);
		return 0;
	}
	case TR_ENV:
		r->u.env.text = "driver: 13000\nos: Linux";
		e_str(e, "driver: 13000\nos: Linux");
		return 0;
	case TR_SOURCE:
		r->u.source = (struct tr_source){ TR_SRC_NVRTC, 0, 3, "", "prog.cu", "options: -G",
						  "__global__ void k() {}" };
		e_u32(e, TR_SRC_NVRTC); e_u32(e, 0); e_u32(e, 3); e_str(e, ""); e_str(e, "prog.cu");
		e_str(e, "options: -G"); e_str(e, "__global__ void k() {}");
		return 0;
	case TR_STDERR:
		r->u.stderr_tail = (struct tr_stderr){ 10, 134, "Aborted\n" };
		e_u64(e, 10); e_u32(e, 134); e_str(e, "Aborted\n");
		return 0;
	default:
		return -1;
	}
}

static const uint32_t known[] = {
#define KNOWN_(NAME, num, layout, ctor, rec) TR_##NAME,
	TR_RECORDS(KNOWN_)
#undef KNOWN_
};

UNIT_TEST(records_every_type_has_golden_bytes)
{
	struct strbuf sb = STRBUF_INIT;
	struct tr_rec r;
	struct exp e;

	for (size_t k = 0; k < sizeof(known) / sizeof(known[0]); k++) {
		uint32_t type = known[k];
		sb_reset(&sb);
		if (golden(type, &r, &e) < 0) {
			fprintf(stderr, "    %s (%u): no golden bytes in test_records.c\n", tr_type_name(type), type);
			unit_failures++;
			continue;
		}
		CHECK(tr_encode(&r, &sb) == 0);
		if (sb.len != e.n || memcmp(sb.buf, e.b, e.n)) {
			fprintf(stderr, "    %s: table encodes %zu bytes, the format says %zu\n",
				tr_type_name(type), sb.len, e.n);
			unit_failures++;
		}
		CHECK(strcmp(tr_type_name(type), "UNKNOWN") != 0);
		CHECK(type <= TR_TYPE_MAX_KNOWN);
	}
	CHECK(tr_encode(&(struct tr_rec){ .type = 23 }, &sb) < 0);   /* reserved, unknown */
	CHECK_STR(tr_type_name(23), "UNKNOWN");
	CHECK_EQ_U(TR_TYPE_MAX_KNOWN, TR_PYSTACK);
	sb_release(&sb);
}

/* A whole trace in memory: header, then the framed records of `pays`. */
static void frame(struct strbuf *f, uint32_t type, const void *p, size_t n)
{
	sb_put_u32(f, type);
	sb_put_u32(f, XXH32(p, n, type));
	sb_put_u64(f, n);
	sb_add(f, p, n);
}

/* The record under test framed in a trace of its own; a checkpoint's
 * BEGIN or END gets its other half (an unpaired one is refused).  Returns
 * the record's index. */
static size_t frame_alone(struct strbuf *f, uint32_t type, const void *p, size_t n)
{
	struct strbuf half = STRBUF_INIT;
	struct tr_rec k;
	size_t at = 0;

	memset(&k, 0, sizeof(k));
	k.u.checkpoint.id = 2;   /* golden()'s id */
	if (type == TR_CHECKPOINT_END) {
		k.type = TR_CHECKPOINT_BEGIN;
		tr_encode(&k, &half);
		frame(f, k.type, half.buf, half.len);
		at = 1;
	}
	frame(f, type, p, n);
	if (type == TR_CHECKPOINT_BEGIN) {
		k.type = TR_CHECKPOINT_END;
		tr_encode(&k, &half);
		frame(f, k.type, half.buf, half.len);
	}
	sb_release(&half);
	return at;
}

static void header(struct strbuf *f)
{
	sb_add(f, TRACE_MAGIC, 8);
	sb_put_u16(f, TRACE_MAJOR);
	sb_put_u16(f, TRACE_MINOR);
	sb_put_u32(f, TRACE_HEADER_SIZE);
	sb_put_u64(f, 0);
	sb_put_u32(f, XXH32(f->buf + f->len - 24, 24, TRACE_HEADER_SEED));
	sb_put_u32(f, 0);
}

UNIT_TEST(records_decode_encode_identity_and_prefixes_refused)
{
	struct strbuf f = STRBUF_INIT, again = STRBUF_INIT, err = STRBUF_INIT;
	struct tr_rec r;
	struct trace t;
	struct exp e;

	for (size_t k = 0; k < sizeof(known) / sizeof(known[0]); k++) {
		uint32_t type = known[k];
		size_t at;
		if (golden(type, &r, &e) < 0)
			continue;
		if (type == TR_BLOB) {   /* a raw blob of 99 bytes */
			static unsigned char data[99];
			e.n = 0;
			e_u64(&e, tr_hash(data, sizeof(data)));
			e_u64(&e, sizeof(data));
			e_u32(&e, TR_CODEC_RAW);
			e_bytes(&e, data, sizeof(data));
		}
		/* whole: decodes, and encodes back to the same bytes */
		sb_reset(&f);
		header(&f);
		at = frame_alone(&f, type, e.b, e.n);
		sb_reset(&err);
		CHECK(trace_open_mem(&t, "golden", f.buf, f.len, TRACE_OPEN_STRICT, &err) == 0);
		if (t.nrec > at && t.rec[at].type == type) {
			sb_reset(&again);
			CHECK(tr_encode(&t.rec[at], &again) == 0);
			if (type == TR_BLOB)
				sb_add(&again, t.rec[at].u.blob.data, t.rec[at].u.blob.stored_size);
			if (again.len != e.n || memcmp(again.buf, e.b, e.n)) {
				fprintf(stderr, "    %s: decode then encode changed the bytes\n", tr_type_name(type));
				unit_failures++;
			}
		} else {
			fprintf(stderr, "    %s: %s\n", tr_type_name(type), err.buf);
			unit_failures++;
		}
		trace_release(&t);
		/* every strict prefix of the payload, correctly framed: refused,
		 * but a LAUNCH without 1.8's stack (as 1.7 wrote it) */
		for (size_t n = 0; n < e.n; n++) {
			sb_reset(&f);
			header(&f);
			frame_alone(&f, type, e.b, n);
			sb_reset(&err);
			if (type == TR_LAUNCH && n == e.n - 4) {
				CHECK(trace_open_mem(&t, "prefix", f.buf, f.len, 0, &err) == 0);
				if (!err.len)
					trace_release(&t);
				continue;
			}
			if (trace_open_mem(&t, "prefix", f.buf, f.len, 0, &err) == 0) {
				fprintf(stderr, "    %s: a %zu-byte prefix of its %zu-byte payload was accepted\n",
					tr_type_name(type), n, e.n);
				unit_failures++;
				trace_release(&t);
				break;
			}
			CHECK(strstr(err.buf, "prefix: corrupt ") == err.buf);
		}
	}
	sb_release(&f);
	sb_release(&again);
	sb_release(&err);
}

UNIT_TEST(records_constructors_write_what_tw_record_does)
{
	char p1[] = "/tmp/gpureduce-unit-XXXXXX", p2[] = "/tmp/gpureduce-unit-XXXXXX";
	struct trace_writer w1 = TRACE_WRITER_INIT, w2 = TRACE_WRITER_INIT;
	struct strbuf err = STRBUF_INIT, a = STRBUF_INIT, b = STRBUF_INIT;
	int fd1 = mkstemp(p1), fd2 = mkstemp(p2);
	struct tr_rec r;
	struct exp e;
	static const unsigned char data[256] = { 1, 2, 3 };

	CHECK(fd1 >= 0 && tw_open_fd(&w1, fd1, p1, &err) == 0);
	CHECK(fd2 >= 0 && tw_open_fd(&w2, fd2, p2, &err) == 0);
	/* w1: by constructor; w2: the same records through tw_record */
	golden(TR_ALLOC, &r, &e);
	CHECK(tw_alloc(&w1, &r.u.alloc) == 0);
	CHECK(tw_record(&w2, &r) == 0);
	golden(TR_LAUNCH, &r, &e);
	CHECK(tw_launch(&w1, &r.u.launch) == 1);
	CHECK(tw_record(&w2, &r) == 1);
	golden(TR_GRAPH_EXEC, &r, &e);
	CHECK(tw_graph_exec(&w1, &r.u.graph) == 2);
	CHECK(tw_record(&w2, &r) == 2);
	golden(TR_TENSORMAP, &r, &e);
	CHECK(tw_tensormap(&w1, &r.u.tmap) == 3);
	CHECK(tw_record(&w2, &r) == 3);
	/* tw_h2d_data: the blob, then the H2D naming it */
	CHECK(tw_h2d_data(&w1, &(struct tr_copy){ .dst = 0xd000, .size = sizeof(data) }, data) == 5);
	memset(&r, 0, sizeof(r));
	r.type = TR_MEMCPY_H2D;
	r.u.copy.dst = 0xd000;
	r.u.copy.size = sizeof(data);
	CHECK(tw_blob(&w2, data, sizeof(data), &r.u.copy.blob) == 0);
	CHECK(tw_record(&w2, &r) == 5);
	CHECK(tw_free(&w1, &(struct tr_free){ .addr = 0xd000 }) == 6);
	memset(&r, 0, sizeof(r));
	r.type = TR_FREE;
	r.u.free.addr = 0xd000;
	CHECK(tw_record(&w2, &r) == 6);
	CHECK(tw_close(&w1) == 0);
	CHECK(tw_close(&w2) == 0);
	CHECK(read_file(p1, &a, &err) == 0);
	CHECK(read_file(p2, &b, &err) == 0);
	/* the same bytes after the header (whose time differs) */
	CHECK(a.len == b.len && a.len > TRACE_HEADER_SIZE &&
	      !memcmp(a.buf + TRACE_HEADER_SIZE, b.buf + TRACE_HEADER_SIZE, a.len - TRACE_HEADER_SIZE));
	unlink(p1);
	unlink(p2);
	sb_release(&a);
	sb_release(&b);
	sb_release(&err);
}
