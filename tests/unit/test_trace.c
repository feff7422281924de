/*
 * test_trace.c - the trace format: round trip of every record type through
 * the writer and reader, truncation and corruption handling, version checks,
 * blob dedup and compression.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../common/strbuf.h"
#include "../../common/util.h"
#include "../../trace/trace.h"
#include "unit.h"

#define XXH_INLINE_ALL
#include <xxhash.h>

UNIT_TEST(strbuf_basics)
{
	struct strbuf sb = STRBUF_INIT;
	CHECK(sb.len == 0 && sb.buf[0] == 0);
	sb_addf(&sb, "%d-%s", 42, "x");
	CHECK_STR(sb.buf, "42-x");
	sb_put_u32(&sb, 0x01020304);
	CHECK(sb.len == 8 && (unsigned char)sb.buf[4] == 4 && (unsigned char)sb.buf[7] == 1);
	sb_setlen(&sb, 2);
	CHECK_STR(sb.buf, "42");
	sb_release(&sb);
	sb_release(&sb);
	CHECK(sb.len == 0);
}

static char tmpl[64];

static const char *tmp_path(void)
{
	strcpy(tmpl, "/tmp/gpureduce-unit-XXXXXX");
	int fd = mkstemp(tmpl);
	if (fd >= 0)
		close(fd);
	return tmpl;
}

/* Writes one of each record type; returns the path. */
static const char *write_sample(uint64_t *blob_hash, size_t big)
{
	struct trace_writer w = TRACE_WRITER_INIT;
	struct strbuf err = STRBUF_INIT;
	const char *path = tmp_path();
	const char *argv[] = { "./oob-write", "--n", "1000" };
	struct tr_rec r;
	unsigned char *data = malloc(big);
	struct tr_param params[3] = { { 0, 8 }, { 8, 8 }, { 16, 4 } };
	unsigned char args[20];
	struct tr_frame frames[2] = { { "train.py", "step", 40 }, { "train.py", "<module>", 99 } };
	struct tr_launch_attr attr = { 4, 4, { 1, 0, 0, 0 } };

	for (size_t i = 0; i < big; i++)
		data[i] = (unsigned char)(i % 7);
	for (int i = 0; i < 20; i++)
		args[i] = (unsigned char)i;
	CHECK(tw_open(&w, path, &err) == 0);

	memset(&r, 0, sizeof(r));
	r.type = TR_PROCESS;
	r.u.process.pid = 1234;
	r.u.process.cwd = "/home/u";
	r.u.process.argc = 3;
	r.u.process.argv = argv;
	CHECK(tw_record(&w, &r) == 0);

	memset(&r, 0, sizeof(r));
	r.type = TR_DEVICE;
	r.u.device.name = "NVIDIA H200";
	r.u.device.cc_major = 9;
	r.u.device.driver_version = 13000;
	r.u.device.total_mem = 1ull << 37;
	CHECK(tw_record(&w, &r) == 1);

	CHECK(tw_blob(&w, data, big, blob_hash) == 0);

	memset(&r, 0, sizeof(r));
	r.type = TR_ALLOC;
	r.u.alloc.addr = 0x7f0000000000ull;
	r.u.alloc.size = 4000;
	r.u.alloc.kind = TR_MEM_DEVICE;
	CHECK(tw_record(&w, &r) == 3);

	memset(&r, 0, sizeof(r));
	r.type = TR_MEMCPY_H2D;
	r.u.copy.dst = 0x7f0000000000ull;
	r.u.copy.size = big;
	r.u.copy.blob = *blob_hash;
	tw_record(&w, &r);

	memset(&r, 0, sizeof(r));
	r.type = TR_MEMSET;
	r.u.memset.dst = 0x7f0000000000ull;
	r.u.memset.value = 7;
	r.u.memset.elem_size = 4;
	r.u.memset.width = 10;
	r.u.memset.height = 1;
	tw_record(&w, &r);

	memset(&r, 0, sizeof(r));
	r.type = TR_LAUNCH;
	r.u.launch.seq = 5;
	r.u.launch.name = "_Z5scalePfPKfi";
	r.u.launch.api = TR_API_LAUNCH_KERNEL_EX;
	r.u.launch.grid = (struct tr_dim3){ 4, 1, 1 };
	r.u.launch.block = (struct tr_dim3){ 256, 1, 1 };
	r.u.launch.shmem = 1024;
	r.u.launch.nparams = 3;
	r.u.launch.params = params;
	r.u.launch.argsize = 20;
	r.u.launch.args = args;
	r.u.launch.nattrs = 1;
	r.u.launch.attrs = &attr;
	r.u.launch.py_state = TR_PY_FRAMES;
	r.u.launch.nframes = 2;
	r.u.launch.frames = frames;
	tw_record(&w, &r);

	memset(&r, 0, sizeof(r));
	r.type = TR_FAULT;
	r.u.fault.code = 700;
	r.u.fault.error = "CUDA_ERROR_ILLEGAL_ADDRESS";
	r.u.fault.api = "cuLaunchKernel";
	r.u.fault.launch_seq = 5;
	r.u.fault.at_launch = 1;
	r.u.fault.kernel = "_Z5scalePfPKfi";
	tw_record(&w, &r);
	CHECK(tw_close(&w) == 0);
	sb_release(&err);
	free(data);
	return path;
}

UNIT_TEST(trace_roundtrip)
{
	struct trace t;
	struct strbuf err = STRBUF_INIT, blob = STRBUF_INIT;
	uint64_t h;
	const char *path = write_sample(&h, 100000);

	CHECK(trace_open(&t, path, TRACE_OPEN_STRICT, &err) == 0);
	if (err.len)
		fprintf(stderr, "    %s\n", err.buf);
	CHECK_EQ_U(t.nrec, 8);
	if (t.nrec == 8) {
		CHECK_EQ_U(t.rec[0].type, TR_PROCESS);
		CHECK_STR(t.rec[0].u.process.argv[2], "1000");
		CHECK_STR(t.rec[0].u.process.cwd, "/home/u");
		CHECK_STR(t.rec[1].u.device.name, "NVIDIA H200");
		CHECK_EQ_U(t.rec[1].u.device.total_mem, 1ull << 37);
		CHECK_EQ_U(t.rec[2].type, TR_BLOB);
		CHECK_EQ_U(t.rec[2].u.blob.codec, TR_CODEC_ZSTD);
		CHECK(t.rec[2].u.blob.stored_size < 100000 / 10);
		CHECK_EQ_U(t.rec[3].u.alloc.size, 4000);
		CHECK_EQ_U(t.rec[4].u.copy.blob, h);
		CHECK_EQ_U(t.rec[5].u.memset.value, 7);
		const struct tr_launch *l = &t.rec[6].u.launch;
		CHECK_STR(l->name, "_Z5scalePfPKfi");
		CHECK_EQ_U(l->grid.x, 4);
		CHECK_EQ_U(l->block.x, 256);
		CHECK_EQ_U(l->shmem, 1024);
		CHECK_EQ_U(l->nparams, 3);
		CHECK_EQ_U(l->params[2].offset, 16);
		CHECK_EQ_U(l->argsize, 20);
		CHECK(l->args[19] == 19);
		CHECK_EQ_U(l->nattrs, 1);
		CHECK_EQ_U(l->attrs[0].id, 4);
		CHECK_EQ_U(l->nframes, 2);
		CHECK_STR(l->frames[1].func, "<module>");
		CHECK_EQ_U(l->frames[0].line, 40);
		CHECK_STR(t.rec[7].u.fault.error, "CUDA_ERROR_ILLEGAL_ADDRESS");
		CHECK(trace_blob_read(&t, h, &blob, 0, &err) == 0);
		CHECK_EQ_U(blob.len, 100000);
		CHECK(blob.len == 100000 && blob.buf[99999] == (char)(99999 % 7));
	}
	trace_release(&t);
	unlink(path);
	sb_release(&err);
	sb_release(&blob);
}

static void copy_prefix(const char *from, const char *to, size_t n)
{
	struct strbuf sb = STRBUF_INIT, err = STRBUF_INIT;
	read_file(from, &sb, &err);
	if (n > sb.len)
		n = sb.len;
	write_file(to, sb.buf, n, &err);
	sb_release(&sb);
	sb_release(&err);
}

UNIT_TEST(trace_truncated)
{
	struct trace t;
	struct strbuf err = STRBUF_INIT, sb = STRBUF_INIT;
	uint64_t h;
	char path[64], cut[80];
	size_t full;

	strcpy(path, write_sample(&h, 5000));
	snprintf(cut, sizeof(cut), "%s.cut", path);
	read_file(path, &sb, &err);
	full = sb.len;
	/* record boundaries: cutting exactly there leaves a valid, shorter trace */
	size_t bounds[16], nb = 0;
	if (trace_open(&t, path, TRACE_OPEN_STRICT, &err) == 0) {
		for (size_t i = 0; i < t.nrec && nb < 16; i++)
			bounds[nb++] = t.rec[i].offset;
		trace_release(&t);
	}
	CHECK_EQ_U(nb, 8);
	/* Every possible cut point: never crashes; lenient mode keeps the whole
	 * records, strict mode names the file and a byte offset. */
	for (size_t n = 0; n < full; n += (n < 200 ? 1 : 37)) {
		copy_prefix(path, cut, n);
		sb_reset(&err);
		int r = trace_open(&t, cut, 0, &err);
		if (n < TRACE_HEADER_SIZE) {
			CHECK(r < 0);
			CHECK(strstr(err.buf, cut) != NULL);
		} else {
			int at_bound = 0;
			size_t whole = 0;
			for (size_t b = 0; b < nb; b++) {
				if (bounds[b] == n)
					at_bound = 1;
				if (bounds[b] < n)
					whole = b;   /* records before the one cut */
			}
			if (n == TRACE_HEADER_SIZE)
				at_bound = 1;
			CHECK(r == 0);
			if (r == 0) {
				CHECK(t.truncated == !at_bound);
				CHECK(at_bound || t.nrec == whole);
				trace_release(&t);
			}
			sb_reset(&err);
			r = trace_open(&t, cut, TRACE_OPEN_STRICT, &err);
			CHECK((r < 0) == !at_bound);
			if (r < 0) {
				CHECK(strstr(err.buf, "byte") != NULL);
				CHECK(strstr(err.buf, cut) != NULL);
			} else {
				trace_release(&t);
			}
		}
	}
	unlink(path);
	unlink(cut);
	sb_release(&err);
	sb_release(&sb);
}

UNIT_TEST(trace_corrupt)
{
	struct trace t;
	struct strbuf err = STRBUF_INIT, sb = STRBUF_INIT;
	uint64_t h;
	const char *path = write_sample(&h, 3000);
	size_t flips = 0, errors = 0;

	read_file(path, &sb, &err);
	/* Flip each byte after the header: a flip inside a record must be caught
	 * by framing or checksum; the reader never crashes. */
	for (size_t i = TRACE_HEADER_SIZE; i < sb.len; i += 3) {
		sb.buf[i] ^= 0x5a;
		sb_reset(&err);
		int r = trace_open_mem(&t, "mem.bin", sb.buf, sb.len, TRACE_OPEN_STRICT, &err);
		if (r == 0)
			trace_release(&t);
		else {
			errors++;
			CHECK(strstr(err.buf, "mem.bin: ") == err.buf);
			CHECK(strstr(err.buf, "byte") != NULL);
		}
		flips++;
		sb.buf[i] ^= 0x5a;
	}
	CHECK_EQ_U(errors, flips);
	/* Not a trace at all */
	sb_reset(&err);
	CHECK(trace_open_mem(&t, "junk", "hello world, this is not a trace at all", 39, 0, &err) < 0);
	CHECK(strstr(err.buf, "not a gpureduce trace") != NULL);
	unlink(path);
	sb_release(&err);
	sb_release(&sb);
}

/* Seal a patched header as a writer of its version would (1.4: checksum). */
static void reseal(char *h)
{
	uint32_t sum = XXH32(h, 24, TRACE_HEADER_SEED);
	memcpy(h + 24, &sum, 4);   /* little-endian hosts only, as the format */
	memset(h + 28, 0, 4);
}

/* Every single flipped byte of the header is reported as a corrupt
 * header, never as a truncation or a newer format; a 1.3 header (no
 * checksum: zeros) still reads. */
UNIT_TEST(trace_header_checksum)
{
	struct trace t;
	struct strbuf err = STRBUF_INIT, sb = STRBUF_INIT;
	uint64_t h;
	const char *path = write_sample(&h, 100);

	read_file(path, &sb, &err);
	for (int b = 8; b < 32; b++) {
		for (int bit = 0; bit < 8; bit += 7) {
			sb.buf[b] ^= (char)(1 << bit);
			sb_reset(&err);
			CHECK(trace_open_mem(&t, "flip.bin", sb.buf, sb.len, 0, &err) < 0);
			if (!strstr(err.buf, "corrupt header"))
				printf("    byte %d bit %d: %s\n", b, bit, err.buf);
			CHECK(strstr(err.buf, "corrupt header") != NULL);
			sb.buf[b] ^= (char)(1 << bit);
		}
	}
	sb_reset(&err);
	CHECK(trace_open_mem(&t, "whole.bin", sb.buf, sb.len, 0, &err) == 0);
	trace_release(&t);
	sb.buf[8] = 1;   /* a 1.3 file */
	sb.buf[9] = 0;
	sb.buf[10] = 3;
	memset(sb.buf + 24, 0, 8);
	sb_reset(&err);
	CHECK(trace_open_mem(&t, "old.bin", sb.buf, sb.len, 0, &err) == 0);
	CHECK(t.major == 1 && t.minor == 3);
	trace_release(&t);
	unlink(path);
	sb_release(&err);
	sb_release(&sb);
}

UNIT_TEST(trace_newer_major)
{
	struct trace t;
	struct strbuf err = STRBUF_INIT, sb = STRBUF_INIT;
	uint64_t h;
	const char *path = write_sample(&h, 100);

	read_file(path, &sb, &err);
	sb.buf[8] = TRACE_MAJOR + 1;
	reseal(sb.buf);
	sb_reset(&err);
	CHECK(trace_open_mem(&t, "new.bin", sb.buf, sb.len, 0, &err) < 0);
	CHECK(strstr(err.buf, "newer than this gpureduce") != NULL);
	/* A newer minor version with an unknown record type still reads. */
	sb.buf[8] = TRACE_MAJOR;
	sb.buf[10] = 9;
	reseal(sb.buf);
	{
		struct strbuf rec = STRBUF_INIT;
		uint64_t z = 0;
		sb_put_u32(&rec, 999);
		sb_put_u32(&rec, XXH32("", 0, 999));  /* checksum: seed = type */
		sb_put_u64(&rec, z);
		sb_add(&sb, rec.buf, rec.len);
		sb_release(&rec);
	}
	sb_reset(&err);
	CHECK(trace_open_mem(&t, "minor.bin", sb.buf, sb.len, TRACE_OPEN_STRICT, &err) == 0);
	if (!err.len) {
		CHECK_EQ_U(t.nrec, 9);
		CHECK_STR(tr_type_name(t.rec[8].type), "UNKNOWN");
		trace_release(&t);
	} else {
		fprintf(stderr, "    %s\n", err.buf);
	}
	unlink(path);
	sb_release(&err);
	sb_release(&sb);
}

UNIT_TEST(trace_blob_dedup)
{
	struct trace_writer w = TRACE_WRITER_INIT;
	struct strbuf err = STRBUF_INIT;
	struct trace t;
	const char *path = tmp_path();
	char a[1000], b[10];
	uint64_t h1, h2, h3;

	memset(a, 'a', sizeof(a));
	memset(b, 'b', sizeof(b));
	CHECK(tw_open(&w, path, &err) == 0);
	tw_blob(&w, a, sizeof(a), &h1);
	tw_blob(&w, a, sizeof(a), &h2);
	tw_blob(&w, b, sizeof(b), &h3);
	CHECK(h1 == h2 && h1 != h3);
	CHECK_EQ_U(w.nrec, 2);
	CHECK_EQ_U(w.bytes_raw, 2010);
	tw_close(&w);
	CHECK(trace_open(&t, path, TRACE_OPEN_STRICT, &err) == 0);
	CHECK(trace_find_blob(&t, h1) == 0);
	CHECK(trace_find_blob(&t, h3) == 1);
	CHECK(trace_find_blob(&t, 12345) == -1);
	CHECK_EQ_U(t.rec[1].u.blob.codec, TR_CODEC_RAW);
	trace_release(&t);
	unlink(path);
	sb_release(&err);
}

/* Two writes of the same records differ only in created_ns: their file
 * hashes agree (shrink's candidate and sanitizer caches key on them), and
 * any other byte changes it. */
UNIT_TEST(trace_file_hash_ignores_created_ns)
{
	struct strbuf a = STRBUF_INIT, b = STRBUF_INIT, err = STRBUF_INIT;
	uint64_t h;
	char pa[64];
	snprintf(pa, sizeof(pa), "%s", write_sample(&h, 5000));
	CHECK(read_file(pa, &a, &err) == 0);
	const char *pb = write_sample(&h, 5000);
	CHECK(read_file(pb, &b, &err) == 0);
	CHECK_EQ_U(a.len, b.len);
	if (a.len == b.len && a.len > 40) {
		a.buf[16] ^= 0x5a;                  /* another created_ns */
		a.buf[23] ^= 0x01;
		CHECK(tr_file_hash(a.buf, a.len) == tr_file_hash(b.buf, b.len));
		CHECK(tr_hash(a.buf, a.len) != tr_hash(b.buf, b.len));
		a.buf[a.len - 1] ^= 0x01;           /* a record byte */
		CHECK(tr_file_hash(a.buf, a.len) != tr_file_hash(b.buf, b.len));
		a.buf[a.len - 1] ^= 0x01;
		a.buf[10] ^= 0x01;                  /* the minor version */
		CHECK(tr_file_hash(a.buf, a.len) != tr_file_hash(b.buf, b.len));
	}
	unlink(pa);
	unlink(pb);
	sb_release(&a);
	sb_release(&b);
	sb_release(&err);
}

/* 1.3: BLOCK_ALLOC and BLOCK_FREE survive a write and a read, field by
 * field; a block larger than its allocator block is corrupt. */
UNIT_TEST(trace_block_records)
{
	struct trace t;
	struct trace_writer w = TRACE_WRITER_INIT;
	struct strbuf err = STRBUF_INIT, pay = STRBUF_INIT;
	struct tr_rec r;
	char path[] = "/tmp/gpureduce-unit-blk-XXXXXX";
	int fd = mkstemp(path);

	CHECK(fd >= 0 && tw_open_fd(&w, fd, path, &err) == 0);
	memset(&r, 0, sizeof(r));
	r.type = TR_BLOCK_ALLOC;
	r.u.block = (struct tr_block){ 0x7f0000000200, 4000, 4096, 0x7f0000000000, TR_BLK_TORCH,
				       TR_BLK_F_INITIAL, "/home/u/train.py", "main", 42 };
	CHECK(tw_record(&w, &r) == 0);
	memset(&r, 0, sizeof(r));
	r.type = TR_BLOCK_FREE;
	r.u.block_free.addr = 0x7f0000000200;
	r.u.block_free.source = TR_BLK_TORCH;
	CHECK(tw_record(&w, &r) == 1);
	CHECK(tw_close(&w) == 0);
	CHECK(trace_open(&t, path, TRACE_OPEN_STRICT, &err) == 0);
	CHECK_EQ_U(t.nrec, 2);
	if (t.nrec == 2) {
		const struct tr_block *b = &t.rec[0].u.block;
		CHECK_EQ_U(t.rec[0].type, TR_BLOCK_ALLOC);
		CHECK_EQ_U(b->addr, 0x7f0000000200);
		CHECK_EQ_U(b->size, 4000);
		CHECK_EQ_U(b->alloc_size, 4096);
		CHECK_EQ_U(b->segment, 0x7f0000000000);
		CHECK_EQ_U(b->source, TR_BLK_TORCH);
		CHECK_EQ_U(b->flags, TR_BLK_F_INITIAL);
		CHECK_STR(b->file, "/home/u/train.py");
		CHECK_STR(b->func, "main");
		CHECK_EQ_U(b->line, 42);
		CHECK_EQ_U(t.rec[1].type, TR_BLOCK_FREE);
		CHECK_EQ_U(t.rec[1].u.block_free.addr, 0x7f0000000200);
		CHECK_STR(tr_type_name(TR_BLOCK_ALLOC), "BLOCK_ALLOC");
	}
	trace_release(&t);
	/* size > alloc_size: corrupt */
	memset(&r, 0, sizeof(r));
	r.type = TR_BLOCK_ALLOC;
	r.u.block = (struct tr_block){ 0x1000, 5000, 4096, 0, TR_BLK_TORCH, 0, "", "", 0 };
	CHECK(tr_encode(&r, &pay) == 0);
	{
		struct trace_writer w2 = TRACE_WRITER_INIT;
		int fd2 = open(path, O_WRONLY | O_TRUNC);
		CHECK(fd2 >= 0 && tw_open_fd(&w2, fd2, path, &err) == 0);
		CHECK(tw_record(&w2, &r) == 0);
		CHECK(tw_close(&w2) == 0);
	}
	sb_reset(&err);
	CHECK(trace_open(&t, path, 0, &err) < 0);
	CHECK(strstr(err.buf, "block.size") != NULL);
	unlink(path);
	sb_release(&err);
	sb_release(&pay);
}

/* 1.7: which argument words are integers (trace_mark_nonptr), and the
 * writer carrying a launch's list into a trace cut from it. */
static void put_launch(struct trace_writer *w, const char *name, uint64_t seq, const uint64_t *words, uint32_t n,
		       const uint32_t *nonptr, uint32_t nnonptr)
{
	struct tr_rec r;
	struct tr_param p[4];
	memset(&r, 0, sizeof(r));
	r.type = TR_LAUNCH;
	r.u.launch.seq = seq;
	r.u.launch.name = name;
	r.u.launch.nparams = n;
	for (uint32_t i = 0; i < n; i++)
		p[i] = (struct tr_param){ 8 * i, 8 };
	r.u.launch.params = p;
	r.u.launch.argsize = 8 * n;
	r.u.launch.args = (uint8_t *)words;
	r.u.launch.nonptr = nonptr;
	r.u.launch.nnonptr = nnonptr;
	CHECK(tw_record(w, &r) >= 0);
}

/* The counter-evidence: a word some launch of the kernel holds an address
 * in is a pointer slot, though another launch held a small integer there
 * (an unused entry of an array of pointers: PyTorch's TensorListMetadata
 * leaves them as the stack had them); a record still wins. */
UNIT_TEST(trace_nonptr_conflict)
{
	struct trace t;
	struct trace_writer w = TRACE_WRITER_INIT;
	struct strbuf err = STRBUF_INIT;
	char path[] = "/tmp/gpureduce-unit-npc-XXXXXX";
	int fd = mkstemp(path);
	/* m: word 8 unused (garbage 0x40), then a pointer */
	const uint64_t m1[2] = { 0x7fd612345678ull, 0x40 };
	const uint64_t m2[2] = { 0x7fd612345678ull, 0x7fd6abcdef00ull };
	/* c: {64, high half of a stack address}, then {64, 0}: an integer */
	const uint64_t c1[1] = { 0x00007fd500000040ull };
	const uint64_t c2[1] = { 0x40 };
	/* q: as m, with a record saying word 0 is an integer */
	const uint64_t q1[1] = { 0x40 };
	const uint64_t q2[1] = { 0x7fd6abcdef00ull };

	CHECK(fd >= 0 && tw_open_fd(&w, fd, path, &err) == 0);
	put_launch(&w, "m", 0, m1, 2, NULL, 0);
	put_launch(&w, "m", 1, m2, 2, NULL, 0);
	put_launch(&w, "c", 2, c1, 1, NULL, 0);
	put_launch(&w, "c", 3, c2, 1, NULL, 0);
	CHECK(tw_nonptr(&w, &(struct tr_nonptr){ .kernel = "q", .offset = 0 }) >= 0);
	put_launch(&w, "q", 4, q1, 1, NULL, 0);
	put_launch(&w, "q", 5, q2, 1, NULL, 0);
	CHECK(tw_close(&w) == 0);
	CHECK(trace_open(&t, path, TRACE_OPEN_STRICT, &err) == 0);
	CHECK_EQ_U(t.nrec, 7);
	if (t.nrec == 7) {
		CHECK(!tr_launch_nonptr(&t.rec[0].u.launch, 8));   /* m: a pointer slot */
		CHECK(!tr_launch_nonptr(&t.rec[1].u.launch, 8));
		CHECK(tr_launch_nonptr(&t.rec[2].u.launch, 0));    /* c: an integer */
		CHECK(tr_launch_nonptr(&t.rec[3].u.launch, 0));
		CHECK(tr_launch_nonptr(&t.rec[6].u.launch, 0));    /* q: the record */
		CHECK_EQ_U(t.nnonptr, 2);
		CHECK_EQ_U(t.nnonptr_slots, 1);   /* m's word 8 (q's record keeps its word an integer) */
		/* hunt's marks are firm too */
		trace_add_nonptr(&t, "m", tr_launch_layout(&t.rec[0].u.launch), (const uint32_t[]){ 8 }, 1);
		CHECK(tr_launch_nonptr(&t.rec[1].u.launch, 8));
		trace_drop_nonptr(&t, 0);
		CHECK(!tr_launch_nonptr(&t.rec[1].u.launch, 8));
	}
	trace_release(&t);
	unlink(path);
	sb_release(&err);
}

UNIT_TEST(trace_nonptr_words)
{
	struct trace t, t2;
	struct trace_writer w = TRACE_WRITER_INIT;
	struct strbuf err = STRBUF_INIT;
	char path[] = "/tmp/gpureduce-unit-np-XXXXXX", path2[] = "/tmp/gpureduce-unit-np2-XXXXXX";
	int fd = mkstemp(path), fd2 = mkstemp(path2);
	/* k: word 0 is {n, garbage} then {n, 0}; word 8 a pointer, NULL once;
	 * word 16 is 2^32 (not small: no evidence); j: word 8 small, but only in j */
	const uint64_t k1[3] = { 0x00007fd500000040ull, 0x7fd600000000ull, 1ull << 32 };
	const uint64_t k2[3] = { 0x40, 0, 1ull << 32 };
	const uint64_t j1[2] = { 0x7fd600000000ull, 7 };

	CHECK(fd >= 0 && tw_open_fd(&w, fd, path, &err) == 0);
	put_launch(&w, "k", 0, k1, 3, NULL, 0);
	put_launch(&w, "j", 1, j1, 2, NULL, 0);
	put_launch(&w, "k", 2, k2, 3, NULL, 0);
	CHECK(tw_nonptr(&w, &(struct tr_nonptr){ .kernel = "j", .offset = 4 }) >= 0);   /* not 8-aligned: ignored */
	CHECK(tw_nonptr(&w, &(struct tr_nonptr){ .kernel = "k", .offset = 16 }) >= 0);  /* any layout */
	/* another build of k (a JIT's): two parameters, a pointer where the
	 * first build has the integer word; no evidence crosses builds */
	put_launch(&w, "k", 3, j1, 2, NULL, 0);
	CHECK(tw_close(&w) == 0);
	CHECK(trace_open(&t, path, TRACE_OPEN_STRICT, &err) == 0);
	CHECK_EQ_U(t.nrec, 6);
	if (t.nrec == 6) {
		const struct tr_launch *k3 = &t.rec[5].u.launch;
		CHECK(tr_launch_layout(k3) != tr_launch_layout(&t.rec[0].u.launch));
		CHECK(tr_launch_layout(&t.rec[2].u.launch) == tr_launch_layout(&t.rec[0].u.launch));
		CHECK(!tr_launch_nonptr(k3, 0));      /* the first build's integer is this one's pointer */
		CHECK(tr_launch_nonptr(k3, 8));       /* its own evidence (7) */
	}
	if (t.nrec == 6) {
		const struct tr_launch *a = &t.rec[0].u.launch, *j = &t.rec[1].u.launch;
		CHECK(tr_launch_nonptr(a, 0));        /* the other launch held 64 there */
		CHECK(!tr_launch_nonptr(a, 8));       /* NULL is no evidence */
		CHECK(tr_launch_nonptr(a, 16));       /* the record */
		CHECK_EQ_U(a->nnonptr, 2);
		CHECK(tr_launch_nonptr(&t.rec[2].u.launch, 0));
		CHECK(!tr_launch_nonptr(j, 0));       /* another kernel's evidence is not j's */
		CHECK(tr_launch_nonptr(j, 8));
		CHECK(!tr_launch_nonptr(j, 4));
		CHECK_EQ_U(t.nnonptr, 5);   /* k: 0, 16; j: 8; the other build of k: 8, and 16 (the any-layout record) */
		/* a trace cut from it: the writer puts k's records before its launch */
		struct trace_writer w2 = TRACE_WRITER_INIT;
		CHECK(fd2 >= 0 && tw_open_fd(&w2, fd2, path2, &err) == 0);
		long e0 = tw_record(&w2, &t.rec[0]), e1 = tw_record(&w2, &t.rec[2]);
		CHECK_EQ_U(e0, 2);   /* two NONPTR records first */
		CHECK_EQ_U(e1, 3);   /* not again for k */
		CHECK(tw_close(&w2) == 0);
		CHECK(trace_open(&t2, path2, TRACE_OPEN_STRICT, &err) == 0);
		CHECK_EQ_U(t2.nrec, 4);
		if (t2.nrec == 4) {
			CHECK_EQ_U(t2.rec[0].type, TR_NONPTR);
			CHECK_STR(t2.rec[0].u.nonptr.kernel, "k");
			CHECK(tr_launch_nonptr(&t2.rec[2].u.launch, 0));
			CHECK(tr_launch_nonptr(&t2.rec[2].u.launch, 16));
			CHECK_STR(tr_type_name(TR_NONPTR), "NONPTR");
		}
		trace_release(&t2);
	}
	if (t.nrec == 6) {
		/* marks added after decoding (hunt's check) and dropped again */
		const struct tr_launch *j = &t.rec[1].u.launch, *a = &t.rec[0].u.launch;
		trace_add_nonptr(&t, j->name, tr_launch_layout(j), (const uint32_t[]){ 0 }, 1);
		CHECK(tr_launch_nonptr(j, 0));
		CHECK(tr_launch_nonptr(j, 8));        /* the evidence stays */
		CHECK(tr_launch_nonptr(a, 0));        /* and the other kernel's lists */
		CHECK_EQ_U(t.nnonptr, 6);
		trace_add_nonptr(&t, "k", 0, (const uint32_t[]){ 8 }, 1);      /* any layout: both builds of k */
		CHECK(tr_launch_nonptr(a, 8));
		CHECK(tr_launch_nonptr(&t.rec[5].u.launch, 8));
		trace_drop_nonptr(&t, 1);
		CHECK(!tr_launch_nonptr(a, 8));
		CHECK(tr_launch_nonptr(j, 0));
		trace_drop_nonptr(&t, 0);
		CHECK(!tr_launch_nonptr(j, 0));
		CHECK_EQ_U(t.nnonptr, 5);
	}
	trace_release(&t);
	/* a trace with no integer words at all: a mark, then none again,
	 * leaves no launch pointing at the freed list */
	{
		const uint64_t p1[1] = { 0x7fd600000000ull };
		struct trace_writer w3 = TRACE_WRITER_INIT;
		int fd3 = open(path, O_WRONLY | O_TRUNC);
		CHECK(fd3 >= 0 && tw_open_fd(&w3, fd3, path, &err) == 0);
		put_launch(&w3, "p", 0, p1, 1, NULL, 0);
		CHECK(tw_close(&w3) == 0);
		CHECK(trace_open(&t, path, TRACE_OPEN_STRICT, &err) == 0);
		CHECK_EQ_U(t.nnonptr, 0);
		if (t.nrec == 1) {
			trace_add_nonptr(&t, "p", tr_launch_layout(&t.rec[0].u.launch), (const uint32_t[]){ 0 }, 1);
			CHECK_EQ_U(t.rec[0].u.launch.nnonptr, 1);
			trace_drop_nonptr(&t, 0);
			CHECK_EQ_U(t.rec[0].u.launch.nnonptr, 0);
			CHECK(t.rec[0].u.launch.nonptr == NULL);
			CHECK(!tr_launch_nonptr(&t.rec[0].u.launch, 0));
		}
		trace_release(&t);
	}
	unlink(path);
	unlink(path2);
	sb_release(&err);
}

/* The launch record at `off` of the file image sb: its last 4 payload
 * bytes (1.8's stack field) set to `stack`, or dropped (stack < 0: as a
 * 1.7 writer wrote it), and resealed. */
static void patch_launch_stack(struct strbuf *sb, size_t off, long stack)
{
	uint64_t len;
	uint32_t sum, v = (uint32_t)stack;
	memcpy(&len, sb->buf + off + 8, 8);
	if (stack < 0) {
		memmove(sb->buf + off + 16 + len - 4, sb->buf + off + 16 + len, sb->len - (off + 16 + len));
		sb_setlen(sb, sb->len - 4);
		len -= 4;
		memcpy(sb->buf + off + 8, &len, 8);
	} else {
		memcpy(sb->buf + off + 16 + len - 4, &v, 4);
	}
	sum = XXH32(sb->buf + off + 16, (size_t)len, TR_LAUNCH);
	memcpy(sb->buf + off + 4, &sum, 4);
}

/* The trace image img with launch_stack patched (patch_launch_stack),
 * opened into t: 0 when it reads with its 5 records (t to release), -1
 * (counted as a failure) when not. */
static int open_patched(const struct strbuf *img, size_t off, long stack, struct trace *t)
{
	struct strbuf sb = STRBUF_INIT, err = STRBUF_INIT;
	int ret = -1;
	sb_add(&sb, img->buf, img->len);
	patch_launch_stack(&sb, off, stack);
	if (trace_open_mem(t, "p.bin", sb.buf, sb.len, TRACE_OPEN_STRICT, &err) == 0) {
		if (!err.len && t->nrec == 5)
			ret = 0;
		else
			trace_release(t);
	}
	if (ret < 0) {
		unit_failures++;
		fprintf(stderr, "    the patched trace (stack %ld) did not read: %s\n", stack, err.buf);
	}
	sb_release(&sb);
	sb_release(&err);
	return ret;
}

/* Format 1.8: a launch names its Python frames by a PYSTACK id; read, it
 * carries them itself (stack 0), so written again it needs no PYSTACK; a
 * stack defined again is the later one; a launch naming an undefined id
 * loses its frames (counted), not the trace; an id beside frames of its
 * own is ignored; a 1.7 launch (no stack field) reads as before. */
UNIT_TEST(trace_pystack)
{
	char path[] = "/tmp/gpureduce-unit-XXXXXX", path2[] = "/tmp/gpureduce-unit-XXXXXX";
	struct trace_writer w = TRACE_WRITER_INIT;
	struct strbuf err = STRBUF_INIT;
	struct tr_frame two[2] = { { "/a/train.py", "Model.forward", 40 }, { "/a/train.py", "<module>", 90 } };
	struct tr_frame one[1] = { { "/b/x.py", "f", 3 } };
	struct tr_rec r;
	struct trace t;
	int fd = mkstemp(path), fd2 = mkstemp(path2);
	size_t launch_off[3] = { 0, 0, 0 };

	CHECK(fd >= 0 && fd2 >= 0);
	close(fd);
	close(fd2);
	CHECK(tw_open(&w, path, &err) == 0);
	memset(&r, 0, sizeof(r));
	r.type = TR_PYSTACK;
	r.u.pystack.id = 7;
	r.u.pystack.nframes = 2;
	r.u.pystack.frames = two;
	CHECK(tw_record(&w, &r) == 0);
	for (int k = 0; k < 3; k++) {
		if (k == 2) {
			/* defined again (a segment's carried copy): the later one */
			memset(&r, 0, sizeof(r));
			r.type = TR_PYSTACK;
			r.u.pystack.id = 7;
			r.u.pystack.nframes = 1;
			r.u.pystack.frames = one;
			CHECK(tw_record(&w, &r) >= 0);
		}
		memset(&r, 0, sizeof(r));
		r.type = TR_LAUNCH;
		r.u.launch.seq = (uint64_t)k;
		r.u.launch.name = "_Z1kv";
		r.u.launch.grid = r.u.launch.block = (struct tr_dim3){ 1, 1, 1 };
		r.u.launch.py_state = TR_PY_FRAMES;
		if (k == 1) {
			r.u.launch.nframes = 1;   /* its own: the id is not written */
			r.u.launch.frames = one;
			r.u.launch.stack = 7;
		} else {
			r.u.launch.stack = 7;
		}
		launch_off[k] = w.offset;
		CHECK(tw_record(&w, &r) >= 0);
	}
	CHECK(tw_close(&w) == 0);
	CHECK(trace_open(&t, path, TRACE_OPEN_STRICT, &err) == 0);
	if (err.len)
		fprintf(stderr, "    %s\n", err.buf);
	CHECK_EQ_U(t.nrec, 5);
	if (t.nrec == 5) {
		const struct tr_launch *a = &t.rec[1].u.launch, *b = &t.rec[2].u.launch, *c = &t.rec[4].u.launch;
		CHECK_EQ_U(t.rec[0].type, TR_PYSTACK);
		CHECK_EQ_U(t.rec[0].u.pystack.nframes, 2);
		CHECK_EQ_U(a->nframes, 2);
		CHECK_EQ_U(a->stack, 0);
		if (a->nframes == 2) {
			CHECK_STR(a->frames[0].func, "Model.forward");
			CHECK_EQ_U(a->frames[1].line, 90);
		}
		CHECK_EQ_U(b->nframes, 1);
		CHECK_EQ_U(c->nframes, 1);
		if (c->nframes == 1)
			CHECK_STR(c->frames[0].file, "/b/x.py");
		/* written again without its PYSTACK records: frames inline */
		struct trace_writer w2 = TRACE_WRITER_INIT;
		struct trace t2;
		CHECK(tw_open(&w2, path2, &err) == 0);
		for (size_t i = 0; i < t.nrec; i++)
			if (t.rec[i].type == TR_LAUNCH)
				CHECK(tw_record(&w2, &t.rec[i]) >= 0);
		CHECK(tw_close(&w2) == 0);
		CHECK(trace_open(&t2, path2, TRACE_OPEN_STRICT, &err) == 0);
		CHECK_EQ_U(t2.nrec, 3);
		if (t2.nrec == 3) {
			CHECK_EQ_U(t2.rec[0].u.launch.nframes, 2);
			CHECK_STR(t2.rec[0].u.launch.frames[1].func, "<module>");
			CHECK_EQ_U(t2.rec[2].u.launch.nframes, 1);
		}
		trace_release(&t2);
	}
	trace_release(&t);

	{
		/* the file's own bytes, patched: the first launch names id 9,
		 * never defined; then id 7 beside the second's own frame; then the second
		 * launch without the field at all (as 1.7 wrote it): it reads,
		 * with its own frame */
		struct strbuf img = STRBUF_INIT;
		int fdr = open(path, O_RDONLY);
		char buf[4096];
		ssize_t got;
		CHECK(fdr >= 0);
		while (fdr >= 0 && (got = read(fdr, buf, sizeof(buf))) > 0)
			sb_add(&img, buf, (size_t)got);
		if (fdr >= 0)
			close(fdr);
		if (open_patched(&img, launch_off[0], 9, &t) == 0) {
			/* the frames only say where it came from: that launch loses
			 * them, counted; the trace stays */
			CHECK_EQ_U(t.rec[1].u.launch.nframes, 0);
			CHECK_EQ_U(t.rec[1].u.launch.stack, 0);
			CHECK_EQ_U(t.stacks_missing, 1);
			CHECK_EQ_U(t.rec[4].u.launch.nframes, 1);
			trace_release(&t);
		}
		for (long stack = 7; stack >= -1; stack -= 8)
			if (open_patched(&img, launch_off[1], stack, &t) == 0) {
				/* an id beside its own frames: ignored; no field at all
				 * (1.7): its own frames as well */
				CHECK_EQ_U(t.rec[2].u.launch.nframes, 1);
				CHECK_STR(t.rec[2].u.launch.frames[0].func, "f");
				CHECK_EQ_U(t.rec[4].u.launch.nframes, 1);
				CHECK_EQ_U(t.stacks_missing, 0);
				trace_release(&t);
			}
		sb_release(&img);
	}
	unlink(path);
	unlink(path2);
	sb_release(&err);
}

/* What the capture noted the trace lacks: only notes of calls it could not
 * record, each once, at most max, in order, prefixed and ended by a dot. */
UNIT_TEST(trace_unrecorded_notes_picks_and_dedups)
{
	static const char *texts[] = {
		"checkpoint 1: 4096 bytes",
		"unsupported copy form cuMemcpyHtoA_v2: replay will miss these bytes",
		"cuTexObjectCreate: texture and surface objects are not recorded; x",
		"unsupported copy form cuMemcpyHtoA_v2: replay will miss these bytes",
		"kernel k (handle 0x1): the driver gave no parameter layout; replay cannot rebuild its launches",
		"legacy launch API cuLaunch: these launches are not recorded",
	};
	struct tr_rec rec[ARRAY_SIZE(texts) + 1];
	struct trace t;
	struct strbuf out = STRBUF_INIT;

	memset(&t, 0, sizeof(t));
	memset(rec, 0, sizeof(rec));
	for (size_t i = 0; i < ARRAY_SIZE(texts); i++) {
		rec[i].type = TR_NOTE;
		rec[i].u.note.text = texts[i];
	}
	rec[ARRAY_SIZE(texts)].type = TR_END;
	t.rec = rec;
	t.nrec = ARRAY_SIZE(rec);
	CHECK_EQ_U(trace_unrecorded_notes(&t, "P: ", 3, &out), 3);
	CHECK_STR(out.buf, "P: unsupported copy form cuMemcpyHtoA_v2: replay will miss these bytes; "
		  "cuTexObjectCreate: texture and surface objects are not recorded; x; "
		  "kernel k (handle 0x1): the driver gave no parameter layout; replay cannot rebuild its launches.");
	sb_reset(&out);
	CHECK_EQ_U(trace_unrecorded_notes(&t, "P: ", 10, &out), 4);
	CHECK(strstr(out.buf, "legacy launch API cuLaunch") != NULL);
	sb_reset(&out);
	t.nrec = 1;   /* the checkpoint note alone: nothing */
	CHECK_EQ_U(trace_unrecorded_notes(&t, "P: ", 3, &out), 0);
	CHECK_EQ_U(out.len, 0);
	sb_release(&out);
}

/* Format 2.0's short launch (TR_F_SAME), as capture/same.c writes it:
 * the reader gives it the name, layout and argument bytes of the launch
 * `back` records before it and clears the flag, so a trace written from
 * the one read has every launch whole; a short launch that names no
 * earlier LAUNCH of its function is a corrupt record. */
static void short_put(struct trace_writer *w, uint64_t seq, uint64_t func, const char *name, int is_short,
		      uint64_t back)
{
	static struct tr_param params[2] = { { 0, 8 }, { 8, 4 } };
	static unsigned char args[12] = { 0, 0, 0, 0, 0, 0x7f, 0, 0, 9, 0, 0, 0 };
	unsigned char b[16];
	uint64_t h = XXH3_64bits(args, sizeof(args)) ^ (back == 3 ? 1 : 0);   /* back 3: a wrong hash */
	struct tr_rec r;

	memset(&r, 0, sizeof(r));
	r.type = TR_LAUNCH;
	r.u.launch.seq = seq;
	r.u.launch.func = func;
	r.u.launch.grid = (struct tr_dim3){ 2, 1, 1 };
	r.u.launch.block = (struct tr_dim3){ 32, 1, 1 };
	if (!is_short) {
		r.u.launch.name = name;
		r.u.launch.nparams = 2;
		r.u.launch.params = params;
		r.u.launch.argsize = sizeof(args);
		r.u.launch.args = args;
	} else {
		if (back == 3)
			back = 2;
		for (int i = 0; i < 8; i++) {
			b[i] = (unsigned char)(back >> (8 * i));
			b[8 + i] = (unsigned char)(h >> (8 * i));
		}
		r.u.launch.name = "";
		r.u.launch.flags = TR_F_SAME;
		r.u.launch.argsize = 16;
		r.u.launch.args = b;
	}
	CHECK(tw_record(w, &r) >= 0);
}

static int open_short(uint64_t back, uint64_t func2, struct trace *t, struct strbuf *err)
{
	struct trace_writer w = TRACE_WRITER_INIT;
	const char *path = tmp_path();
	struct tr_rec r;
	int ret;

	CHECK(tw_open(&w, path, err) == 0);
	memset(&r, 0, sizeof(r));
	r.type = TR_PROCESS;
	r.u.process.cwd = "/";
	tw_record(&w, &r);                                  /* event 0 */
	short_put(&w, 0, 0x10, "_Z4stepPfi", 0, 0);           /* event 1 */
	memset(&r, 0, sizeof(r));
	r.type = TR_NOTE;
	r.u.note.text = "between";
	tw_record(&w, &r);                                  /* event 2 */
	short_put(&w, 1, func2, "", 1, back);                 /* event 3 */
	CHECK(tw_close(&w) == 0);
	ret = trace_open(t, path, TRACE_OPEN_STRICT, err);
	unlink(path);
	return ret;
}

UNIT_TEST(trace_short_launch)
{
	struct trace t, t2;
	struct strbuf err = STRBUF_INIT;
	struct trace_writer w = TRACE_WRITER_INIT;
	const char *path;
	const struct tr_launch *a, *b;

	CHECK(open_short(2, 0x10, &t, &err) == 0);
	CHECK_EQ_U(t.nrec, 4);
	a = &t.rec[1].u.launch;
	b = &t.rec[3].u.launch;
	CHECK_STR(b->name, "_Z4stepPfi");
	CHECK_EQ_U(b->nparams, 2);
	CHECK_EQ_U(b->argsize, 12);
	CHECK(!memcmp(a->args, b->args, 12));
	CHECK_EQ_U(b->flags & TR_F_SAME, 0);
	CHECK_EQ_U(b->same_back, 2);
	CHECK_EQ_U(a->same_back, 0);
	CHECK_EQ_U(b->seq, 1);
	/* written again: whole, and read back the same */
	path = tmp_path();
	CHECK(tw_open(&w, path, &err) == 0);
	for (size_t i = 0; i < t.nrec; i++)
		CHECK(tw_record(&w, &t.rec[i]) >= 0);
	CHECK(tw_close(&w) == 0);
	CHECK(trace_open(&t2, path, TRACE_OPEN_STRICT, &err) == 0);
	CHECK_STR(t2.rec[3].u.launch.name, "_Z4stepPfi");
	CHECK_EQ_U(t2.rec[3].u.launch.same_back, 0);
	CHECK_EQ_U(t2.rec[3].u.launch.argsize, 12);
	trace_release(&t2);
	unlink(path);
	/* written again by a writer that asks for short launches: the repeat
	 * is short again; after tw_forget_launches it is whole */
	for (int forget = 0; forget < 2; forget++) {
		path = tmp_path();
		w = (struct trace_writer)TRACE_WRITER_INIT;
		CHECK(tw_open(&w, path, &err) == 0);
		tw_short_launches(&w);
		for (size_t i = 0; i < t.nrec; i++) {
			if (forget && i == 3)
				tw_forget_launches(&w);
			CHECK(tw_record(&w, &t.rec[i]) >= 0);
		}
		CHECK_EQ_U(w.same_short, (forget ? 0 : 1));
		CHECK(tw_close(&w) == 0);
		CHECK(trace_open(&t2, path, TRACE_OPEN_STRICT, &err) == 0);
		CHECK_STR(t2.rec[3].u.launch.name, "_Z4stepPfi");
		CHECK_EQ_U(t2.rec[3].u.launch.same_back, (forget ? 0 : 2));
		CHECK(!memcmp(t2.rec[3].u.launch.args, a->args, 12));
		trace_release(&t2);
		unlink(path);
	}
	trace_release(&t);

	/* two kernels, one func handle and the same bytes, their names in one
	 * buffer the caller reuses (as mktrace's line): the second is whole */
	{
		char namebuf[32];
		struct tr_rec lr;
		unsigned char args2[12] = { 1, 2, 3 };
		struct tr_param p2[1] = { { 0, 12 } };
		path = tmp_path();
		w = (struct trace_writer)TRACE_WRITER_INIT;
		CHECK(tw_open(&w, path, &err) == 0);
		tw_short_launches(&w);
		for (int k = 0; k < 3; k++) {
			snprintf(namebuf, sizeof(namebuf), k == 1 ? "_Z5otherv" : "_Z4mainv");
			memset(&lr, 0, sizeof(lr));
			lr.type = TR_LAUNCH;
			lr.u.launch.seq = (uint64_t)k;
			lr.u.launch.func = 0x30;
			lr.u.launch.name = namebuf;
			lr.u.launch.nparams = 1;
			lr.u.launch.params = p2;
			lr.u.launch.argsize = sizeof(args2);
			lr.u.launch.args = args2;
			CHECK(tw_record(&w, &lr) == k);
		}
		CHECK(tw_close(&w) == 0);
		CHECK(trace_open(&t2, path, TRACE_OPEN_STRICT, &err) == 0);
		CHECK_STR(t2.rec[1].u.launch.name, "_Z5otherv");
		CHECK_EQ_U(t2.rec[1].u.launch.same_back, 0);
		CHECK_STR(t2.rec[2].u.launch.name, "_Z4mainv");
		trace_release(&t2);
		unlink(path);
	}

	/* by function (the capture's writer): a repeat of func, size and bytes
	 * is short and reads back with the name, layout and bytes it repeats;
	 * other bytes of the same size are whole; after tw_forget_launches
	 * (the capture's module unload: the handle now names another kernel)
	 * the same handle and bytes under a new name are whole */
	{
		struct tr_rec lr;
		unsigned char args3[3][12] = { { 1, 2, 3 }, { 1, 2, 4 }, { 1, 2, 3 } };
		struct tr_param p3[1] = { { 0, 12 } };
		const char *names[5] = { "_Z4mainv", "_Z4mainv", "_Z4mainv", "_Z5otherv", "_Z5otherv" };
		const int bytes[5] = { 0, 1, 2, 0, 0 };
		const uint64_t back[5] = { 0, 0, 2, 0, 1 };
		path = tmp_path();
		w = (struct trace_writer)TRACE_WRITER_INIT;
		CHECK(tw_open(&w, path, &err) == 0);
		tw_short_launches_by_func(&w);
		for (int k = 0; k < 5; k++) {
			if (k == 3)
				tw_forget_launches(&w);
			memset(&lr, 0, sizeof(lr));
			lr.type = TR_LAUNCH;
			lr.u.launch.seq = (uint64_t)k;
			lr.u.launch.func = 0x40;
			lr.u.launch.name = names[k];
			lr.u.launch.nparams = 1;
			lr.u.launch.params = p3;
			lr.u.launch.argsize = sizeof(args3[0]);
			lr.u.launch.args = args3[bytes[k]];
			CHECK(tw_record(&w, &lr) == k);
		}
		CHECK_EQ_U(w.same_short, 2);
		CHECK_EQ_U(w.same_saved, (8 + 8 + 12) + (9 + 8 + 12));   /* the names each repeats */
		CHECK(tw_close(&w) == 0);
		CHECK(trace_open(&t2, path, TRACE_OPEN_STRICT, &err) == 0);
		for (int k = 0; k < 5; k++) {
			CHECK_STR(t2.rec[k].u.launch.name, names[k]);
			CHECK_EQ_U(t2.rec[k].u.launch.same_back, back[k]);
			CHECK_EQ_U(t2.rec[k].u.launch.nparams, 1);
			CHECK(!memcmp(t2.rec[k].u.launch.args, args3[bytes[k]], 12));
		}
		trace_release(&t2);
		unlink(path);
	}

	/* hostile back-references: 0, past the start, to a record that is no
	 * LAUNCH, to a LAUNCH of another function, to the right LAUNCH with
	 * the hash of other bytes (short_put's back 3) */
	const uint64_t bad[5][2] = { { 0, 0x10 }, { 9, 0x10 }, { 1, 0x10 }, { 2, 0x20 }, { 3, 0x10 } };
	for (int i = 0; i < 5; i++) {
		sb_reset(&err);
		CHECK(open_short(bad[i][0], bad[i][1], &t, &err) < 0);
		CHECK(strstr(err.buf, "corrupt LAUNCH record") != NULL);
		CHECK(strstr(err.buf, "launch.same") != NULL);
	}
	sb_release(&err);
}
