/*
 * pack.c - LZ77 + base64 packing for repro.cu payloads (see pack.h).
 *
 * The encoder is greedy with hash chains over 4-byte prefixes and an
 * unbounded window, which on cubins (many near-identical template
 * instances) finds the long-distance repeats that make them compress well.
 * The decoder is pack_core.inc, compiled here and carried verbatim by every
 * repro.cu that holds a packed payload, so the two cannot differ.
 */
#include <stdlib.h>
#include <string.h>

#include "../common/strbuf.h"
#include "../common/util.h"
#include "pack.h"

/* the decoder, also pasted into repro.cu (pack_core_text) */
#include "pack_core.inc"

#define HASH_BITS 16
#define CHAIN_DEPTH 24
#define MIN_MATCH PK_MIN_MATCH

static uint32_t hash4(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return (v * 2654435761u) >> (32 - HASH_BITS);
}

static void put_ext(struct strbuf *out, size_t v)
{
	while (v >= 255) {
		sb_put_u8(out, 255);
		v -= 255;
	}
	sb_put_u8(out, (uint8_t)v);
}

static void put_varint(struct strbuf *out, uint64_t v)
{
	while (v >= 0x80) {
		sb_put_u8(out, (uint8_t)(v | 0x80));
		v >>= 7;
	}
	sb_put_u8(out, (uint8_t)v);
}

static void emit_seq(struct strbuf *out, const uint8_t *lit, size_t nlit, size_t off, size_t mlen)
{
	size_t ml = mlen ? mlen - MIN_MATCH : 0;
	uint8_t tok = (uint8_t)((nlit >= 15 ? 15 : nlit) << 4 | (ml >= 15 ? 15 : ml));
	sb_put_u8(out, tok);
	if (nlit >= 15)
		put_ext(out, nlit - 15);
	sb_add(out, lit, nlit);
	if (!mlen)
		return;
	put_varint(out, off);
	if (ml >= 15)
		put_ext(out, ml - 15);
}

void pack_compress(const uint8_t *src, size_t n, struct strbuf *out)
{
	size_t *head = xmalloc(sizeof(size_t) << HASH_BITS);
	size_t *prev = xmalloc(sizeof(size_t) * (n + 1));
	size_t i = 0, anchor = 0;

	for (size_t k = 0; k < (1u << HASH_BITS); k++)
		head[k] = (size_t)-1;
	while (i + MIN_MATCH <= n) {
		uint32_t h = hash4(src + i);
		size_t best = 0, bestoff = 0, cand = head[h];
		for (int d = 0; d < CHAIN_DEPTH && cand != (size_t)-1; d++, cand = prev[cand]) {
			size_t l = 0, max = n - i;
			while (l < max && src[cand + l] == src[i + l])
				l++;
			if (l > best) {
				best = l;
				bestoff = i - cand;
				if (l > 4096)
					break;
			}
		}
		prev[i] = head[h];
		head[h] = i;
		if (best >= MIN_MATCH) {
			emit_seq(out, src + anchor, i - anchor, bestoff, best);
			/* index the positions inside the match (cheaply: every one) */
			for (size_t k = i + 1; k < i + best && k + MIN_MATCH <= n; k++) {
				uint32_t hk = hash4(src + k);
				prev[k] = head[hk];
				head[hk] = k;
			}
			i += best;
			anchor = i;
		} else {
			i++;
		}
	}
	emit_seq(out, src + anchor, n - anchor, 0, 0);
	free(head);
	free(prev);
}

int pack_decompress(const uint8_t *s, size_t n, uint8_t *d, size_t dn)
{
	return pk_decompress(s, n, d, dn);
}

size_t pack_unbase64(const char *const *lines, size_t nlines, uint8_t *out, size_t cap)
{
	return pk_unbase64(lines, nlines, out, cap);
}

void pack_base64(const uint8_t *s, size_t n, struct strbuf *out)
{
	static const char tab[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)s[i] << 16;
		if (i + 1 < n) v |= (uint32_t)s[i + 1] << 8;
		if (i + 2 < n) v |= s[i + 2];
		sb_addch(out, tab[v >> 18 & 63]);
		sb_addch(out, tab[v >> 12 & 63]);
		sb_addch(out, i + 1 < n ? tab[v >> 6 & 63] : '=');
		sb_addch(out, i + 2 < n ? tab[v & 63] : '=');
	}
}

/* After pack_core.inc's text: how repro.cu uses it. */
const char pack_unpack_source[] =
"/* unpack() restores a packed payload at start-up (malloc'd). */\n"
"static unsigned char *unpack(const char *const *lines, size_t nlines, size_t packed, size_t raw)\n"
"{\n"
"\tunsigned char *s = (unsigned char *)malloc(packed + 1), *d = (unsigned char *)malloc(raw + 1);\n"
"\tif (!s || !d) {\n"
"\t\tfprintf(stderr, \"repro: out of memory\\n\");\n"
"\t\texit(2);\n"
"\t}\n"
"\tif (pk_unbase64(lines, nlines, s, packed) != packed || pk_decompress(s, packed, d, raw) < 0) {\n"
"\t\tfprintf(stderr, \"repro: embedded payload is corrupt\\n\");\n"
"\t\texit(2);\n"
"\t}\n"
"\tfree(s);\n"
"\treturn d;\n"
"}\n\n";
