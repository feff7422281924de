/*
 * test_pack.c - the repro payload packer: compress/decompress round trips on
 * structured, random, repetitive and tiny inputs; corrupt streams rejected.
 */
#include <stdlib.h>
#include <string.h>

#include "../../common/strbuf.h"
#include "../../emit/pack.h"
#include "unit.h"

static int roundtrip(const uint8_t *d, size_t n, size_t *packed)
{
	struct strbuf z = STRBUF_INIT;
	uint8_t *back = malloc(n + 1);
	int ok;
	pack_compress(d, n, &z);
	*packed = z.len;
	ok = pack_decompress((const uint8_t *)z.buf, z.len, back, n) == 0 && !memcmp(back, d, n);
	free(back);
	sb_release(&z);
	return ok;
}

UNIT_TEST(pack_roundtrip)
{
	size_t n = 300000, packed;
	uint8_t *d = malloc(n);
	unsigned x = 1;
	/* structured: repeated "instances" with small variations, like template kernels */
	for (size_t i = 0; i < n; i++)
		d[i] = (uint8_t)((i % 1000) < 900 ? (i % 1000) * 7 : (i / 1000));
	CHECK(roundtrip(d, n, &packed));
	CHECK(packed < n / 5);
	for (size_t i = 0; i < n; i++) {
		x ^= x << 13; x ^= x >> 17; x ^= x << 5;
		d[i] = (uint8_t)x;
	}
	CHECK(roundtrip(d, n, &packed));
	CHECK(packed < n + n / 100 + 16);     /* incompressible: small overhead */
	memset(d, 0, n);
	CHECK(roundtrip(d, n, &packed));
	CHECK(packed < 2000);
	for (size_t k = 0; k < 20; k++)
		CHECK(roundtrip(d + 7, k, &packed));
	free(d);
}

UNIT_TEST(pack_corrupt_rejected)
{
	uint8_t d[5000], out[5000];
	struct strbuf z = STRBUF_INIT;
	int rejected = 0, tries = 0;
	for (size_t i = 0; i < sizeof(d); i++)
		d[i] = (uint8_t)(i % 97);
	pack_compress(d, sizeof(d), &z);
	for (size_t i = 0; i < z.len; i++) {
		z.buf[i] ^= 0x41;
		tries++;
		if (pack_decompress((const uint8_t *)z.buf, z.len, out, sizeof(out)) < 0 ||
		    memcmp(out, d, sizeof(d)))
			rejected++;
		z.buf[i] ^= 0x41;
	}
	CHECK(rejected == tries);
	CHECK(pack_decompress((const uint8_t *)z.buf, z.len / 2, out, sizeof(out)) < 0);
	sb_release(&z);
}

UNIT_TEST(pack_base64)
{
	struct strbuf b = STRBUF_INIT;
	pack_base64((const uint8_t *)"Man", 3, &b);
	pack_base64((const uint8_t *)"Ma", 2, &b);
	pack_base64((const uint8_t *)"M", 1, &b);
	CHECK_STR(b.buf, "TWFuTWE=TQ==");
	sb_release(&b);
}
