/*
 * test_writeout.c - what capture's writer thread (capture/writeq.c) relies
 * on in the trace writer: a writer whose bytes leave through its `out`
 * hook gives exactly the file a plain writer writes (records buffered,
 * records and blobs larger than the buffer as one writev of their parts);
 * tw_blob_store writes what tw_blob_hashed writes, but whether or not the
 * hash was written before; XXH3 taken piece by piece (as the thread's
 * producer hashes while it copies) is the one-shot XXH3 blobs are named by.
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

static struct strbuf hooked = STRBUF_INIT;
static int hook_calls;

static int collect(struct trace_writer *w, const struct iovec *iov, int n)
{
	(void)w;
	hook_calls++;
	for (int i = 0; i < n; i++)
		sb_add(&hooked, iov[i].iov_base, iov[i].iov_len);
	return 0;
}

/* Records and blobs of every size class into path; with hook, through
 * collect() (the header still goes to the file).  Returns w.offset. */
static uint64_t write_mix(const char *path, int hook)
{
	struct trace_writer w = TRACE_WRITER_INIT;
	struct strbuf err = STRBUF_INIT;
	static const size_t blob_len[] = { 10, 100, 5000, 70000, 300000 };
	unsigned char *data = malloc(300000);
	uint64_t h, off, x = 88172645463325252ull;

	CHECK(tw_open(&w, path, &err) == 0);
	CHECK(tw_set_buffer(&w, 4096) == 0);
	if (hook)
		w.out = collect;
	for (int i = 0; i < 40; i++) {
		size_t len = blob_len[i % 5];
		for (size_t k = 0; k < len; k++) {   /* xorshift (stored raw), or a short period */
			x ^= x << 13; x ^= x >> 7; x ^= x << 17;
			data[k] = (unsigned char)(i % 3 ? x : k % 7);
		}
		CHECK(tw_blob(&w, data, len, &h) == 0);
		CHECK(tw_h2d(&w, &(struct tr_copy){ .dst = 0x1000, .size = len, .blob = h }) >= 0);
		CHECK(tw_note(&w, &(struct tr_note){ .text = i % 4 ? "short" :
			"a note longer than the buffer is not, but it is longer than most" }) >= 0);
	}
	off = w.offset;
	CHECK(tw_close(&w) == 0);
	free(data);
	sb_release(&err);
	return off;
}

UNIT_TEST(trace_out_hook_same_bytes)
{
	char a[] = "/tmp/gpureduce-unito-XXXXXX", b[] = "/tmp/gpureduce-unitp-XXXXXX";
	struct strbuf fa = STRBUF_INIT, fb = STRBUF_INIT, err = STRBUF_INIT;
	uint64_t offa, offb;
	int fd;

	if ((fd = mkstemp(a)) >= 0)
		close(fd);
	if ((fd = mkstemp(b)) >= 0)
		close(fd);
	sb_reset(&hooked);
	hook_calls = 0;
	offa = write_mix(a, 0);
	offb = write_mix(b, 1);
	CHECK_EQ_U(offa, offb);
	CHECK(hook_calls > 10);   /* buffer flushes and the large records both went through it */
	CHECK(read_file(a, &fa, &err) == 0);
	CHECK(read_file(b, &fb, &err) == 0);
	CHECK_EQ_U(fb.len, TRACE_HEADER_SIZE);   /* the hook got everything past the header */
	CHECK_EQ_U(fa.len, TRACE_HEADER_SIZE + hooked.len);
	CHECK(fa.len == TRACE_HEADER_SIZE + hooked.len &&
	      !memcmp(fa.buf + TRACE_HEADER_SIZE, hooked.buf, hooked.len));
	unlink(a);
	unlink(b);
	sb_release(&fa);
	sb_release(&fb);
	sb_release(&err);
	sb_release(&hooked);
}

UNIT_TEST(trace_blob_store_writes_what_hashed_does)
{
	struct trace_writer w1 = TRACE_WRITER_INIT, w2 = TRACE_WRITER_INIT;
	unsigned char data[3000];
	uint64_t h;

	for (size_t k = 0; k < sizeof(data); k++)
		data[k] = (unsigned char)(k % 11);
	h = tr_hash(data, sizeof(data));
	sb_reset(&hooked);
	w1.fd = w2.fd = 99;   /* never written: both go through collect() */
	w1.out = w2.out = collect;
	CHECK(tw_blob_hashed(&w1, data, sizeof(data), h) == 0);
	CHECK(tw_blob_hashed(&w1, data, sizeof(data), h) == 0);   /* deduplicated */
	CHECK_EQ_U(w1.nrec, 1);
	CHECK(tw_blob_store(&w2, data, sizeof(data), h) == 0);
	CHECK(tw_blob_store(&w2, data, sizeof(data), h) == 0);    /* written again */
	CHECK_EQ_U(w2.nrec, 2);
	CHECK(tw_has_blob(&w2, h));
	CHECK_EQ_U(hooked.len, 3 * w1.offset);
	CHECK(hooked.len == 3 * w1.offset && !memcmp(hooked.buf, hooked.buf + w1.offset, w1.offset) &&
	      !memcmp(hooked.buf, hooked.buf + 2 * w1.offset, w1.offset));
	w1.fd = w2.fd = -1;
	tw_close(&w1);
	tw_close(&w2);
	sb_release(&hooked);
}

UNIT_TEST(trace_xxh3_by_pieces_is_one_shot)
{
	static const size_t lens[] = { 1, 63, 64, 65536, 65537, 200000, (1 << 20) + 5 };
	unsigned char *data = malloc((1 << 20) + 5);
	uint64_t x = 2463534242ull;

	for (size_t i = 0; i < (1 << 20) + 5; i++) {
		x ^= x << 13; x ^= x >> 7; x ^= x << 17;
		data[i] = (unsigned char)x;
	}
	for (size_t t = 0; t < sizeof(lens) / sizeof(lens[0]); t++) {
		XXH3_state_t st;
		XXH3_64bits_reset(&st);
		for (size_t off = 0; off < lens[t]; off += 65536)
			XXH3_64bits_update(&st, data + off, lens[t] - off < 65536 ? lens[t] - off : 65536);
		CHECK_EQ_U(XXH3_64bits_digest(&st), tr_hash(data, lens[t]));
	}
	free(data);
}
