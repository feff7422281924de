/*
 * test_checkpoint.c - the format 1.2 checkpoint records and their reading
 * rule: round trip, "a trace cut in the middle of a checkpoint is read as
 * ending at the previous one" (at every cut point), END without BEGIN is
 * corrupt, STRICT refuses an incomplete one, and tw_append_raw /
 * tw_mark_blob (how capture carries records into a new segment).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../common/strbuf.h"
#include "../../common/util.h"
#include "../../trace/trace.h"
#include "unit.h"

/* One record through the writer (the only encoder). */
static void put(struct trace_writer *w, const struct tr_rec *r)
{
	CHECK(tw_record(w, r) >= 0);
}

static void put_ck(struct trace_writer *w, uint32_t type, uint64_t id, uint64_t seq)
{
	struct tr_rec r;
	memset(&r, 0, sizeof(r));
	r.type = type;
	r.u.checkpoint.id = id;
	r.u.checkpoint.launch_seq = seq;
	r.u.checkpoint.allocs = 1;
	r.u.checkpoint.bytes = 64;
	r.u.checkpoint.stored = type == TR_CHECKPOINT_END ? 99 : 0;
	put(w, &r);
}

static void put_content(struct trace_writer *w, uint64_t addr, unsigned char fill)
{
	unsigned char data[64];
	memset(data, fill, sizeof(data));
	CHECK(tw_alloc(w, &(struct tr_alloc){ .addr = addr, .size = 64, .kind = TR_MEM_DEVICE }) >= 0);
	CHECK(tw_h2d_data(w, &(struct tr_copy){ .dst = addr, .size = 64, .flags = TR_F_CHECKPOINT },
			  data) >= 0);
}

static void put_launch(struct trace_writer *w, uint64_t seq)
{
	struct tr_rec r;
	memset(&r, 0, sizeof(r));
	r.type = TR_LAUNCH;
	r.u.launch.seq = seq;
	r.u.launch.name = "k";
	r.u.launch.grid = (struct tr_dim3){ 1, 1, 1 };
	r.u.launch.block = (struct tr_dim3){ 1, 1, 1 };
	put(w, &r);
}

/* header, checkpoint 1 (complete), two launches, checkpoint 2 (complete
 * when `complete`), one launch.  Returns the file's bytes in out and the
 * byte offset of the second BEGIN in *second_begin. */
static void build(struct strbuf *out, int complete, size_t *second_begin)
{
	struct trace_writer w = TRACE_WRITER_INIT;
	struct strbuf err = STRBUF_INIT;
	char path[] = "/tmp/gpureduce-unit-ckpt-XXXXXX";
	int fd = mkstemp(path);

	CHECK(fd >= 0);
	CHECK(tw_open_fd(&w, fd, path, &err) == 0);
	put_ck(&w, TR_CHECKPOINT_BEGIN, 1, 10);
	put_content(&w, 0x7000000, 1);
	put_ck(&w, TR_CHECKPOINT_END, 1, 10);
	put_launch(&w, 10);
	put_launch(&w, 11);
	*second_begin = (size_t)w.offset;
	put_ck(&w, TR_CHECKPOINT_BEGIN, 2, 12);
	put_content(&w, 0x7000000, 2);
	if (complete)
		put_ck(&w, TR_CHECKPOINT_END, 2, 12);
	put_launch(&w, 12);
	CHECK(tw_close(&w) == 0);
	CHECK(read_file(path, out, &err) == 0);
	unlink(path);
	sb_release(&err);
}

UNIT_TEST(checkpoint_roundtrip)
{
	struct strbuf f = STRBUF_INIT, err = STRBUF_INIT;
	struct trace t = TRACE_INIT;
	size_t at;

	build(&f, 1, &at);
	CHECK(trace_open_mem(&t, "ck.bin", f.buf, f.len, TRACE_OPEN_STRICT, &err) == 0);
	CHECK_EQ_U(t.minor, TRACE_MINOR);   /* checkpoints since 1.2 */
	CHECK(!t.truncated);
	/* BEGIN ALLOC BLOB H2D END L L BEGIN ALLOC BLOB H2D END L */
	CHECK_EQ_U(t.nrec, 13);
	CHECK_EQ_U(t.rec[0].type, TR_CHECKPOINT_BEGIN);
	CHECK_EQ_U(t.rec[0].u.checkpoint.id, 1);
	CHECK_EQ_U(t.rec[0].u.checkpoint.launch_seq, 10);
	CHECK_EQ_U(t.rec[4].type, TR_CHECKPOINT_END);
	CHECK_EQ_U(t.rec[4].u.checkpoint.stored, 99);
	CHECK_EQ_U(t.rec[3].u.copy.flags, TR_F_CHECKPOINT);
	CHECK_STR(tr_type_name(TR_CHECKPOINT_BEGIN), "CHECKPOINT_BEGIN");
	CHECK_STR(tr_type_name(TR_CHECKPOINT_END), "CHECKPOINT_END");
	trace_release(&t);
	sb_release(&f);
	sb_release(&err);
}

/* Cut the file at every byte inside and after the second checkpoint: the
 * trace always reads as the first checkpoint and its window. */
UNIT_TEST(checkpoint_cut_reads_as_previous)
{
	struct strbuf f = STRBUF_INIT, err = STRBUF_INIT;
	size_t at, end_of_second;
	struct trace t = TRACE_INIT;

	build(&f, 0, &at);
	/* the incomplete file as written: BEGIN 2 with no END, a launch after */
	CHECK(trace_open_mem(&t, "ck.bin", f.buf, f.len, 0, &err) == 0);
	CHECK(t.truncated);
	CHECK_EQ_U(t.nrec, 7);
	CHECK(t.truncated_msg && strstr(t.truncated_msg, "checkpoint 2 at byte") &&
	      strstr(t.truncated_msg, "read as ending at event 7, before it"));
	trace_release(&t);
	CHECK(trace_open_mem(&t, "ck.bin", f.buf, f.len, TRACE_OPEN_STRICT, &err) < 0);
	CHECK(strstr(err.buf, "checkpoint 2 at byte") != NULL);
	sb_reset(&err);
	sb_release(&f);

	build(&f, 1, &at);
	end_of_second = f.len;
	for (size_t cut = at + 1; cut < end_of_second; cut++) {
		int ok = trace_open_mem(&t, "cut.bin", f.buf, cut, 0, &err) == 0;
		CHECK(ok);
		if (!ok) {
			sb_reset(&err);
			continue;
		}
		/* the second checkpoint complete and cut in the last launch: 12 */
		if (t.nrec != 7 && t.nrec != 12)
			CHECK_EQ_U(t.nrec, 7);
		if (t.nrec == 7) {
			CHECK(t.truncated);
			CHECK_EQ_U(t.rec[6].type, TR_LAUNCH);
			CHECK_EQ_U(t.rec[6].u.launch.seq, 11);
		}
		trace_release(&t);
	}
	sb_release(&f);
	sb_release(&err);
}

UNIT_TEST(checkpoint_end_without_begin_is_corrupt)
{
	struct trace_writer w = TRACE_WRITER_INIT;
	struct strbuf f = STRBUF_INIT, err = STRBUF_INIT;
	struct trace t = TRACE_INIT;
	char path[] = "/tmp/gpureduce-unit-ckpt-XXXXXX";
	int fd = mkstemp(path);

	CHECK(tw_open_fd(&w, fd, path, &err) == 0);
	put_launch(&w, 0);
	put_ck(&w, TR_CHECKPOINT_END, 1, 1);
	CHECK(tw_close(&w) == 0);
	CHECK(read_file(path, &f, &err) == 0);
	unlink(path);
	CHECK(trace_open_mem(&t, "bad.bin", f.buf, f.len, 0, &err) < 0);
	CHECK(strstr(err.buf, "corrupt CHECKPOINT_END record") != NULL);
	sb_release(&f);
	sb_release(&err);
}

/* What a capture does when it starts a segment: framed records copied as
 * they are, their blobs marked so they are not stored twice. */
UNIT_TEST(checkpoint_append_raw_carries_records)
{
	struct trace_writer w = TRACE_WRITER_INIT, w2 = TRACE_WRITER_INIT;
	struct strbuf f = STRBUF_INIT, g = STRBUF_INIT, err = STRBUF_INIT;
	struct trace t = TRACE_INIT;
	char p1[] = "/tmp/gpureduce-unit-ckpt-XXXXXX", p2[] = "/tmp/gpureduce-unit-ckpt-XXXXXX";
	int fd1 = mkstemp(p1), fd2 = mkstemp(p2);
	unsigned char img[300];
	uint64_t h, h2, start;
	struct tr_rec r;

	memset(img, 0x5a, sizeof(img));
	CHECK(tw_open_fd(&w, fd1, p1, &err) == 0);
	put_launch(&w, 0);
	start = w.offset;
	CHECK(tw_blob(&w, img, sizeof(img), &h) == 0);
	memset(&r, 0, sizeof(r));
	r.type = TR_MODULE;
	r.u.module.module_id = 3;
	r.u.module.kind = TR_MOD_ELF;
	r.u.module.blob = h;
	r.u.module.size = sizeof(img);
	put(&w, &r);
	CHECK(tw_close(&w) == 0);
	CHECK(read_file(p1, &f, &err) == 0);

	CHECK(tw_open_fd(&w2, fd2, p2, &err) == 0);
	CHECK(tw_append_raw(&w2, f.buf + start, f.len - start, 2) == 0);
	CHECK(!tw_has_blob(&w2, h));
	tw_mark_blob(&w2, h);
	CHECK(tw_has_blob(&w2, h));
	CHECK_EQ_U(w2.nrec, 2);
	CHECK(tw_blob(&w2, img, sizeof(img), &h2) == 0 && h2 == h);   /* not stored again */
	put_launch(&w2, 1);
	CHECK(tw_close(&w2) == 0);
	CHECK(read_file(p2, &g, &err) == 0);
	CHECK(trace_open_mem(&t, "seg.bin", g.buf, g.len, TRACE_OPEN_STRICT, &err) == 0);
	CHECK_EQ_U(t.nrec, 3);
	CHECK_EQ_U(t.rec[0].type, TR_BLOB);
	CHECK_EQ_U(t.rec[1].type, TR_MODULE);
	CHECK_EQ_U(t.rec[2].type, TR_LAUNCH);
	sb_reset(&f);
	CHECK(trace_blob_read(&t, h, &f, 0, &err) == 0 && f.len == sizeof(img));
	trace_release(&t);
	unlink(p1);
	unlink(p2);
	sb_release(&f);
	sb_release(&g);
	sb_release(&err);
}

/* tw_forget_blobs (capture, at a background checkpoint's snapshot): blobs
 * written before are stored again when used after, so the records after
 * that point stand alone; a file with a blob twice reads (first one kept),
 * and the reused compression context gives the same bytes back. */
void test_checkpoint_forget_blobs_stores_again(void)
{
	struct trace_writer w = TRACE_WRITER_INIT;
	struct strbuf f = STRBUF_INIT, out = STRBUF_INIT, err = STRBUF_INIT;
	struct trace t = TRACE_INIT;
	char p[] = "/tmp/gpureduce-unit-forget-XXXXXX";
	int fd = mkstemp(p), nblob = 0;
	static unsigned char zeros[1 << 16], other[1 << 16];
	uint64_t h, h2, h3, mid;

	for (size_t i = 0; i < sizeof(other); i++)
		other[i] = (unsigned char)(i * 7);
	CHECK(tw_open_fd(&w, fd, p, &err) == 0);
	w.zstd_level = -1;
	CHECK(tw_blob(&w, zeros, sizeof(zeros), &h) == 0);
	CHECK(tw_blob(&w, other, sizeof(other), &h3) == 0);   /* the context reused */
	CHECK(tw_blob(&w, zeros, sizeof(zeros), &h2) == 0 && h2 == h);
	mid = w.offset;
	CHECK(w.offset < 2 * sizeof(zeros));   /* once, compressed */
	tw_forget_blobs(&w);
	CHECK(!tw_has_blob(&w, h));
	CHECK(tw_blob(&w, zeros, sizeof(zeros), &h2) == 0 && h2 == h);
	CHECK(w.offset > mid);                 /* stored again */
	CHECK(tw_has_blob(&w, h));
	CHECK(tw_close(&w) == 0);
	CHECK(read_file(p, &f, &err) == 0);
	CHECK(trace_open_mem(&t, "forget.bin", f.buf, f.len, TRACE_OPEN_STRICT, &err) == 0);
	for (size_t i = 0; i < t.nrec; i++)
		nblob += t.rec[i].type == TR_BLOB;
	CHECK_EQ_U(nblob, 3);
	CHECK(trace_blob_read(&t, h, &out, 0, &err) == 0 && out.len == sizeof(zeros) &&
	      !memcmp(out.buf, zeros, sizeof(zeros)));
	sb_reset(&out);
	CHECK(trace_blob_read(&t, h3, &out, 0, &err) == 0 && out.len == sizeof(other) &&
	      !memcmp(out.buf, other, sizeof(other)));
	trace_release(&t);
	unlink(p);
	sb_release(&f);
	sb_release(&out);
	sb_release(&err);
}
