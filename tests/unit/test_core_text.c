/*
 * test_core_text.c - the code every repro.cu carries verbatim and
 * gpureduce compiles (the Makefile's CORE_TEXTS): each text is exactly its
 * files, so a repro places buffers, fills them and unpacks its payloads
 * with the code replay and shrink ran, and picks among a JIT's builds of
 * one kernel as replay did.  Also what the pasted pieces do, on
 * gpureduce's side: the seeded fill (known values, pieces = whole), the
 * base64 reader (round trip with the writer, cap, junk skipped) and the
 * rule for which buffers layout placement covers and their span.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/strbuf.h"
#include "../../common/util.h"
#include "../../addr/place.h"
#include "../../emit/pack.h"
#include "../../replay/fnpick.h"
#include "../../trace/trace.h"
#include "unit.h"

/* Each generated text and the files it is made of, in order (as the
 * Makefile lists them). */
static const struct {
	const char *name;
	const char *text;
	const char *files[3];
} core_texts[] = {
	{ "place_core", place_core_text, { "common/cuerr.h", "addr/place_core.inc", NULL } },
	{ "fill_core", fill_core_text, { "common/fill_core.inc", NULL } },
	{ "pack_core", pack_core_text, { "emit/pack_core.inc", NULL } },
	{ "fnpick_core", fnpick_core_text, { "replay/fnpick_core.inc", NULL } },
};

UNIT_TEST(core_texts_are_the_compiled_files)
{
	for (size_t i = 0; i < sizeof(core_texts) / sizeof(core_texts[0]); i++) {
		struct strbuf want = STRBUF_INIT, e = STRBUF_INIT;
		int ok = 1;
		for (int k = 0; core_texts[i].files[k]; k++) {
			struct strbuf f = STRBUF_INIT;
			ok &= read_file(core_texts[i].files[k], &f, &e) == 0 && f.len > 400;
			sb_add(&want, f.buf, f.len);
			sb_release(&f);
		}
		if (!ok || want.len != strlen(core_texts[i].text) || strcmp(want.buf, core_texts[i].text)) {
			fprintf(stderr, "    %s_text is not its files (%zu vs %zu bytes)%s%s\n", core_texts[i].name,
				strlen(core_texts[i].text), want.len, e.len ? ": " : "", e.buf);
			CHECK(!"a core text differs from its files");
		}
		sb_release(&want);
		sb_release(&e);
	}
	/* what each text must hold: the functions repro.cu's own code calls */
	CHECK(strstr(place_core_text, "cuerr_is_sticky") != NULL);
	CHECK(strstr(place_core_text, "static CUresult pl_layout_alloc(") != NULL);
	CHECK(strstr(fill_core_text, "static void fill_bytes(") != NULL);
	CHECK(strstr(pack_core_text, "static int pk_decompress(") != NULL);
	CHECK(strstr(fnpick_core_text, "static int fnpick_ok(") != NULL);
	CHECK(strstr(pack_unpack_source, "pk_unbase64(") && strstr(pack_unpack_source, "pk_decompress("));
}

UNIT_TEST(fill_core_values_and_pieces)
{
	uint8_t whole[1001], piece[1001];
	uint32_t x = 1, y;
	/* xorshift32 (13, 17, 5) from 1: 0x00042021, lowest byte first */
	fill_xorshift(whole, 4, &x);
	CHECK(whole[0] == 0x21 && whole[1] == 0x20 && whole[2] == 0x04 && whole[3] == 0x00);
	CHECK_EQ_U(x, 0x42021);
	/* seed 0 stands for 0x9e3779b9 */
	x = 0;
	y = 0x9e3779b9u;
	fill_xorshift(whole, sizeof(whole), &x);
	fill_xorshift(piece, sizeof(piece), &y);
	CHECK(!memcmp(whole, piece, sizeof(whole)));
	/* in pieces of multiples of four, the last odd: the same bytes */
	memset(piece, 0, sizeof(piece));
	y = 0;
	for (size_t done = 0, len; done < sizeof(piece); done += len) {
		len = sizeof(piece) - done < 12 ? sizeof(piece) - done : 12;
		fill_xorshift(piece + done, len, &y);
	}
	CHECK(!memcmp(whole, piece, sizeof(whole)));
	CHECK_EQ_U(x, y);
}

UNIT_TEST(pack_unbase64_reads_what_pack_base64_writes)
{
	uint8_t d[301], back[301];
	struct strbuf b = STRBUF_INIT;
	char *lines[8];
	size_t nl = 0;
	uint32_t x = 7;
	fill_xorshift(d, sizeof(d), &x);
	pack_base64(d, sizeof(d), &b);
	/* repro.cu's layout: lines of at most 100 characters */
	for (size_t i = 0; i < b.len && nl < 8; i += 100)
		lines[nl++] = strndup(b.buf + i, b.len - i < 100 ? b.len - i : 100);
	CHECK(nl == 5);
	CHECK_EQ_U(pack_unbase64((const char *const *)lines, nl, back, sizeof(back)), sizeof(d));
	CHECK(!memcmp(back, d, sizeof(d)));
	/* past cap: counted, not written */
	memset(back, 0, sizeof(back));
	CHECK_EQ_U(pack_unbase64((const char *const *)lines, nl, back, 10), sizeof(d));
	CHECK(!memcmp(back, d, 10) && back[10] == 0);
	for (size_t i = 0; i < nl; i++)
		free(lines[i]);
	/* characters outside the alphabet are skipped */
	{
		const char *junk[] = { "TW\nF", " u\t", "TQ==" };
		CHECK_EQ_U(pack_unbase64(junk, 3, back, sizeof(back)), 4);
		CHECK(!memcmp(back, "ManM", 4));
	}
	sb_release(&b);
}

static void set_alloc(struct tr_rec *r, uint64_t addr, uint64_t size, uint32_t kind)
{
	memset(r, 0, sizeof(*r));
	r->type = TR_ALLOC;
	r->u.alloc.addr = addr;
	r->u.alloc.size = size;
	r->u.alloc.kind = kind;
}

UNIT_TEST(place_layout_span_kinds_and_sizes)
{
	struct tr_rec rec[6];
	struct trace t = TRACE_INIT;
	uint64_t lo = 1, hi = 1;

	CHECK(place_layout_kind(TR_MEM_DEVICE) && place_layout_kind(TR_MEM_VMM) && place_layout_kind(TR_MEM_ASYNC));
	CHECK(!place_layout_kind(TR_MEM_HOST) && !place_layout_kind(TR_MEM_MANAGED) &&
	      !place_layout_kind(TR_MEM_GLOBAL));
	set_alloc(&rec[0], 0x7f0000100000ull, 4096, TR_MEM_HOST);      /* not laid out */
	set_alloc(&rec[1], 0x7f0000200000ull, 256, TR_MEM_DEVICE);
	set_alloc(&rec[2], 0x7f0000000000ull, 16, TR_MEM_MANAGED);     /* not laid out */
	set_alloc(&rec[3], 0x7f0000300000ull, 0, TR_MEM_ASYNC);        /* one byte */
	memset(&rec[4], 0, sizeof(rec[4]));
	rec[4].type = TR_LAUNCH;
	set_alloc(&rec[5], 0x7f0001000000ull, 8, TR_MEM_VMM);
	t.rec = rec;
	t.nrec = 6;
	CHECK(place_layout_span(&t, t.nrec, &lo, &hi) == 0);
	CHECK_EQ_U(lo, 0x7f0000200000ull);
	CHECK_EQ_U(hi, 0x7f0001000008ull);
	/* only the records before `end` */
	CHECK(place_layout_span(&t, 5, &lo, &hi) == 0);
	CHECK_EQ_U(hi, 0x7f0000300001ull);
	/* none: -1 and an empty span */
	CHECK(place_layout_span(&t, 1, &lo, &hi) < 0);
	CHECK(lo == 0 && hi == 0);
}
