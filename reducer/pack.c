/*
 * pack.c - LZ77 + base64 packing for repro.cu payloads (see pack.h).
 *
 * The encoder is greedy with hash chains over 4-byte prefixes and an
 * unbounded window, which on cubins (many near-identical template
 * instances) finds the long-distance repeats that make them compress well.
 */
#include <stdlib.h>
#include <string.h>

#include "../common/strbuf.h"
#include "../common/util.h"
#include "pack.h"

#define HASH_BITS 16
#define CHAIN_DEPTH 24
#define MIN_MATCH 4

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
	size_t i = 0, o = 0;
	while (i < n) {
		unsigned t = s[i++];
		size_t lit = t >> 4, len, off = 0;
		int shift = 0;
		if (lit == 15) {
			unsigned b;
			do {
				if (i >= n)
					return -1;
				b = s[i++];
				lit += b;
			} while (b == 255);
		}
		if (lit > n - i || lit > dn - o)
			return -1;
		memcpy(d + o, s + i, lit);
		i += lit;
		o += lit;
		if (i >= n)
			break;
		for (;;) {
			if (i >= n || shift > 56)
				return -1;
			off |= (size_t)(s[i] & 0x7f) << shift;
			shift += 7;
			if (!(s[i++] & 0x80))
				break;
		}
		len = (t & 15) + MIN_MATCH;
		if ((t & 15) == 15) {
			unsigned b;
			do {
				if (i >= n)
					return -1;
				b = s[i++];
				len += b;
			} while (b == 255);
		}
		if (!off || off > o || len > dn - o)
			return -1;
		for (; len; len--, o++)
			d[o] = d[o - off];
	}
	return o == dn ? 0 : -1;
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

const char pack_decoder_source[] =
"/* Large payloads are stored LZ77-compressed and base64-encoded (gpureduce's\n"
" * pack format); unpack() restores them at start-up. */\n"
"static int b64v(int c)\n"
"{\n"
"\tif (c >= 'A' && c <= 'Z') return c - 'A';\n"
"\tif (c >= 'a' && c <= 'z') return c - 'a' + 26;\n"
"\tif (c >= '0' && c <= '9') return c - '0' + 52;\n"
"\treturn c == '+' ? 62 : c == '/' ? 63 : -1;\n"
"}\n"
"\n"
"static unsigned char *unpack(const char *const *lines, size_t nlines, size_t packed, size_t raw)\n"
"{\n"
"\tunsigned char *s = (unsigned char *)malloc(packed + 4), *d = (unsigned char *)malloc(raw + 1);\n"
"\tsize_t i = 0, o = 0, l, k;\n"
"\tunsigned acc = 0;\n"
"\tint bits = 0;\n"
"\tif (!s || !d) { fprintf(stderr, \"repro: out of memory\\n\"); exit(2); }\n"
"\tfor (l = 0; l < nlines; l++)\n"
"\t\tfor (k = 0; lines[l][k]; k++) {\n"
"\t\t\tint v = b64v(lines[l][k]);\n"
"\t\t\tif (v < 0) continue;\n"
"\t\t\tacc = (acc << 6) | (unsigned)v;\n"
"\t\t\tbits += 6;\n"
"\t\t\tif (bits >= 8) { bits -= 8; if (i < packed) s[i++] = (unsigned char)(acc >> bits); }\n"
"\t\t}\n"
"\tfor (k = 0; k < i;) {\n"
"\t\tunsigned t = s[k++], b;\n"
"\t\tsize_t lit = t >> 4, len, off = 0;\n"
"\t\tint shift = 0;\n"
"\t\tif (lit == 15) do { b = s[k++]; lit += b; } while (b == 255);\n"
"\t\tmemcpy(d + o, s + k, lit);\n"
"\t\tk += lit;\n"
"\t\to += lit;\n"
"\t\tif (k >= i) break;\n"
"\t\tdo { b = s[k++]; off |= (size_t)(b & 0x7f) << shift; shift += 7; } while (b & 0x80);\n"
"\t\tlen = (t & 15) + 4;\n"
"\t\tif ((t & 15) == 15) do { b = s[k++]; len += b; } while (b == 255);\n"
"\t\tfor (; len; len--, o++) d[o] = d[o - off];\n"
"\t}\n"
"\tif (o != raw) { fprintf(stderr, \"repro: embedded payload is corrupt\\n\"); exit(2); }\n"
"\tfree(s);\n"
"\treturn d;\n"
"}\n\n";
