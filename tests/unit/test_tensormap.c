/*
 * test_tensormap.c - TMA tensor maps in traces (format 1.4): the TENSORMAP
 * record survives a write and a read field by field (a rank over 5 is
 * corrupt); tmap_find matches a launch's bytes by word 0 and the 120
 * bytes after it and takes the latest record before the launch; the
 * 64-byte-aligned scan finds a map inside a by-value struct; the extent
 * and the description a reader sees.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../addr/tensormap.h"
#include "../../common/strbuf.h"
#include "../../trace/trace.h"
#include "unit.h"

static void make_map(struct tr_rec *r, uint64_t addr, uint64_t stride, uint8_t salt)
{
	struct tr_tensormap *m = &r->u.tmap;
	memset(r, 0, sizeof(*r));
	r->type = TR_TENSORMAP;
	m->api = m->geom = TR_TMAP_TILED;
	m->dtype = 9;   /* bf16 */
	m->rank = 2;
	m->gaddr = addr;
	m->dims[0] = 1024;
	m->dims[1] = 2048;
	m->strides[0] = stride;
	m->box[0] = m->box[1] = 64;
	m->estrides[0] = m->estrides[1] = 1;
	m->swizzle = 3;
	memcpy(m->map, &addr, 8);
	for (int i = 8; i < TR_TMAP_BYTES; i++)
		m->map[i] = (uint8_t)(i * 7 + salt);
}

static void on_found(long rec, uint32_t off, void *arg)
{
	long *got = arg;
	got[0]++;
	got[1] = rec;
	got[2] = off;
}

UNIT_TEST(tensormap_records_and_matching)
{
	struct trace t;
	struct trace_writer w = TRACE_WRITER_INIT;
	struct strbuf err = STRBUF_INIT, d = STRBUF_INIT;
	struct tr_rec r, r2;
	char path[] = "/tmp/gpureduce-unit-tmap-XXXXXX";
	int fd = mkstemp(path);
	uint8_t args[320];
	long got[3] = { 0, -1, -1 };

	CHECK(fd >= 0 && tw_open_fd(&w, fd, path, &err) == 0);
	make_map(&r, 0x7f0000200000ull, 2048, 1);
	CHECK(tw_record(&w, &r) == 0);
	make_map(&r2, 0x7f0000200000ull, 2048, 1);   /* the same map encoded again */
	r2.u.tmap.api = TR_TMAP_REPLACE;
	CHECK(tw_record(&w, &r2) == 1);
	CHECK(tw_close(&w) == 0);
	CHECK(trace_open(&t, path, TRACE_OPEN_STRICT, &err) == 0);
	CHECK_EQ_U(t.nrec, 2);
	if (t.nrec == 2) {
		const struct tr_tensormap *m = &t.rec[0].u.tmap;
		CHECK_EQ_U(t.rec[0].type, TR_TENSORMAP);
		CHECK_STR(tr_type_name(TR_TENSORMAP), "TENSORMAP");
		CHECK_EQ_U(m->api, TR_TMAP_TILED);
		CHECK_EQ_U(m->rank, 2);
		CHECK_EQ_U(m->dims[1], 2048);
		CHECK_EQ_U(m->strides[0], 2048);
		CHECK_EQ_U(m->box[1], 64);
		CHECK_EQ_U(m->swizzle, 3);
		CHECK(!memcmp(m->map, r.u.tmap.map, TR_TMAP_BYTES));
		CHECK_EQ_U(t.rec[1].u.tmap.api, TR_TMAP_REPLACE);

		/* a launch's bytes: a scalar, then a by-value struct whose map
		 * sits at offset 64 of the buffer (the struct's byte 56) */
		memset(args, 0, sizeof(args));
		memcpy(args + 64, m->map, TR_TMAP_BYTES);
		CHECK(tmap_find(&t, 2, args + 64) == 1);   /* the latest */
		CHECK(tmap_find(&t, 1, args + 64) == 0);   /* only records before the launch */
		CHECK(tmap_find(&t, 0, args + 64) == -1);
		CHECK(t.tmaps_indexed && t.ntmaps == 2);   /* trace_open's index of the maps */
		{
			/* a trace put together without trace_open: searched, the same answers */
			struct trace u = t;
			u.tmaps_indexed = 0;
			CHECK(tmap_find(&u, 2, args + 64) == 1);
			CHECK(tmap_find(&u, 1, args + 64) == 0);
			CHECK(tmap_find(&u, 0, args + 64) == -1);
			CHECK_EQ_U(tmap_scan_args(&u, 2, args, sizeof(args), NULL, NULL), 1);
			CHECK_EQ_U(tmap_scan_args(&u, 0, args, sizeof(args), NULL, NULL), 0);
			CHECK_EQ_U(tmap_scan_args(&t, 0, args, sizeof(args), NULL, NULL), 0);
			CHECK_EQ_U(tmap_scan_args(&t, 99, args, sizeof(args), NULL, NULL), 1);
		}
		CHECK_EQ_U(tmap_scan_args(&t, 2, args, sizeof(args), on_found, got), 1);
		CHECK_EQ_U(got[1], 1);
		CHECK_EQ_U(got[2], 64);
		/* word 0 relocated elsewhere: no longer the recorded map */
		args[64] ^= 0x40;
		CHECK(tmap_find(&t, 2, args + 64) == -1);
		args[64] ^= 0x40;
		/* a different field past word 0: not it either */
		args[64 + 100] ^= 1;
		CHECK(tmap_find(&t, 2, args + 64) == -1);
		/* at offset 48 (Triton 3.6's kv_scale_kernel: the constant bank
		 * aligns it to 64, the parameter area starts at 16 mod 64) */
		memset(args, 0, sizeof(args));
		memcpy(args + 48, m->map, TR_TMAP_BYTES);
		got[1] = got[2] = 0;
		CHECK_EQ_U(tmap_scan_args(&t, 2, args, sizeof(args), on_found, got), 1);
		CHECK_EQ_U(got[2], 48);
		/* not 16-byte aligned: the scan does not look there */
		memset(args, 0, sizeof(args));
		memcpy(args + 8, m->map, TR_TMAP_BYTES);
		CHECK_EQ_U(tmap_scan_args(&t, 2, args, sizeof(args), NULL, NULL), 0);

		/* 2047 rows of 2048 bytes, then one row of 1024 bf16 */
		CHECK_EQ_U(tmap_extent(m), 2047ull * 2048 + 1024 * 2);
		tmap_describe(&d, m);
		CHECK_STR(d.buf, "a TMA descriptor over a 2048x1024 bf16 tensor, box 64x64, "
			  "row strides 2048 bytes, swizzle 128B");
	}
	trace_release(&t);

	/* rank 6: corrupt */
	w = (struct trace_writer)TRACE_WRITER_INIT;
	CHECK(tw_open(&w, path, &err) == 0);
	make_map(&r, 0x7f0000200000ull, 2048, 1);
	r.u.tmap.rank = 6;
	CHECK(tw_record(&w, &r) == 0);
	CHECK(tw_close(&w) == 0);
	sb_reset(&err);
	CHECK(trace_open(&t, path, TRACE_OPEN_STRICT, &err) < 0);
	CHECK(strstr(err.buf ? err.buf : "", "tensormap.rank") != NULL);
	unlink(path);
	sb_release(&err);
	sb_release(&d);
}
