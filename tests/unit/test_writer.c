/*
 * test_writer.c - the trace writer's capture-side speed-ups (issue 26):
 * records gathered in a buffer (tw_set_buffer/tw_flush) give the same file
 * as one write(2) each, with exact offsets and event numbers, and the disk
 * lags only until a flush; a large blob's zstd attempt is sampled first
 * (incompressible: stored raw, compressible: zstd), and either way it reads
 * back as written.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../common/strbuf.h"
#include "../../common/util.h"
#include "../../trace/trace.h"
#include "unit.h"

static char wpath[2][64];

static const char *wtmp(int k)
{
	int fd;
	strcpy(wpath[k], "/tmp/gpureduce-unitw-XXXXXX");
	fd = mkstemp(wpath[k]);
	if (fd >= 0)
		close(fd);
	return wpath[k];
}

static long disk_size(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

/* 300 launches with a blob every 50 (one larger than the buffer); with
 * bufcap 0, one write(2) each.  Checks the event numbers on the way. */
static void write_run(const char *path, size_t bufcap, uint64_t *offset)
{
	struct trace_writer w = TRACE_WRITER_INIT;
	struct strbuf err = STRBUF_INIT;
	struct tr_param params[2] = { { 0, 8 }, { 8, 4 } };
	unsigned char args[12] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 };
	size_t big = 3000;
	unsigned char *data = malloc(big);
	long expect = 0;
	struct tr_rec r;

	CHECK(tw_open(&w, path, &err) == 0);
	if (bufcap)
		CHECK(tw_set_buffer(&w, bufcap) == 0);
	for (int i = 0; i < 300; i++) {
		if (i % 50 == 0) {
			uint64_t h;
			for (size_t k = 0; k < big; k++)
				data[k] = (unsigned char)(k * 31 + i);
			CHECK(tw_blob(&w, data, i == 100 ? big : 100, &h) == 0);
			expect++;
		}
		memset(&r, 0, sizeof(r));
		r.type = TR_LAUNCH;
		r.u.launch.seq = (uint64_t)i;
		r.u.launch.name = "_Z4stepPfi";
		r.u.launch.nparams = 2;
		r.u.launch.params = params;
		r.u.launch.argsize = 12;
		r.u.launch.args = args;
		CHECK(tw_record(&w, &r) == expect);
		expect++;
	}
	*offset = w.offset;
	if (bufcap) {
		CHECK(disk_size(path) < (long)w.offset);   /* the tail is still in memory */
		CHECK(tw_flush(&w) == 0);
		CHECK(disk_size(path) == (long)w.offset);  /* ...and on disk after a flush */
	}
	CHECK(tw_close(&w) == 0);
	free(data);
	sb_release(&err);
}

UNIT_TEST(trace_buffered_same_file)
{
	struct strbuf a = STRBUF_INIT, b = STRBUF_INIT, err = STRBUF_INIT;
	uint64_t off_plain = 0, off_buf = 0;
	struct trace t;

	write_run(wtmp(0), 0, &off_plain);
	write_run(wtmp(1), 1024, &off_buf);   /* small: flushes, and a blob past it */
	CHECK_EQ_U(off_plain, off_buf);
	CHECK(read_file(wpath[0], &a, &err) == 0);
	CHECK(read_file(wpath[1], &b, &err) == 0);
	CHECK_EQ_U(a.len, b.len);
	CHECK(a.len == b.len && tr_file_hash(a.buf, a.len) == tr_file_hash(b.buf, b.len));
	CHECK(trace_open(&t, wpath[1], TRACE_OPEN_STRICT, &err) == 0);
	CHECK_EQ_U(t.nrec, 306);
	trace_release(&t);
	unlink(wpath[0]);
	unlink(wpath[1]);
	sb_release(&a);
	sb_release(&b);
	sb_release(&err);
}

/* One 2 MiB blob written by a fresh writer; its codec, and it reads back. */
static uint32_t blob_codec(const unsigned char *data, size_t len, int always)
{
	struct trace_writer w = TRACE_WRITER_INIT;
	struct strbuf err = STRBUF_INIT, back = STRBUF_INIT;
	struct trace t;
	uint64_t h;
	uint32_t codec = 99;

	w.zstd_level = -1;
	w.zstd_always = always;
	CHECK(tw_open(&w, wtmp(0), &err) == 0);
	CHECK(tw_blob(&w, data, len, &h) == 0);
	CHECK(tw_close(&w) == 0);
	if (trace_open(&t, wpath[0], TRACE_OPEN_STRICT, &err) == 0) {
		codec = t.rec[0].u.blob.codec;
		CHECK(trace_blob_read(&t, h, &back, 0, &err) == 0);
		CHECK(back.len == len && !memcmp(back.buf, data, len));
		trace_release(&t);
	} else {
		CHECK(!"the blob's trace opens");
	}
	unlink(wpath[0]);
	sb_release(&back);
	sb_release(&err);
	return codec;
}

UNIT_TEST(trace_blob_compress_sampled)
{
	size_t len = 2u << 20;
	unsigned char *noise = malloc(len), *text = malloc(len);
	uint64_t x = 88172645463325252ull;

	for (size_t i = 0; i < len; i++) {
		x ^= x << 13; x ^= x >> 7; x ^= x << 17;   /* xorshift: incompressible */
		noise[i] = (unsigned char)x;
		text[i] = (unsigned char)("the quick brown fox "[i % 20]);
	}
	CHECK_EQ_U(blob_codec(noise, len, 0), TR_CODEC_RAW);    /* the sample says: not worth it */
	CHECK_EQ_U(blob_codec(text, len, 0), TR_CODEC_ZSTD);    /* the sample says: compress */
	CHECK_EQ_U(blob_codec(noise, len, 1), TR_CODEC_RAW);    /* tried in full: still raw */
	CHECK_EQ_U(blob_codec(text, len, 1), TR_CODEC_ZSTD);
	free(noise);
	free(text);
}
