/*
 * pack.h - how repro.cu carries large binary payloads (module images of
 * several MB, big buffer contents) without becoming a 50 MB source file.
 *
 * Payloads are compressed with a small LZ77 format whose decoder is short
 * enough to be written into every repro.cu (pack_decoder_source), then
 * base64-encoded as lines of string literals.  Format: a sequence of
 * [token][literal-length varint ext][literals][offset varint][match-length
 * varint ext]; token high nibble = literal count (15: more in a 255-run
 * extension), low nibble = match length - 4 (15: extension); offsets are
 * LEB128 varints (any distance); the stream ends after a literal run that
 * reaches the end of the input.
 */
#ifndef GPUREDUCE_PACK_H
#define GPUREDUCE_PACK_H

#include <stddef.h>
#include <stdint.h>

struct strbuf;

/* Compress n bytes into out (appended). */
void pack_compress(const uint8_t *src, size_t n, struct strbuf *out);
/* Reference decoder (same algorithm as the emitted one).  Returns 0, or -1
 * on malformed input or when the output would not be exactly dn bytes. */
int pack_decompress(const uint8_t *src, size_t n, uint8_t *dst, size_t dn);
/* Base64 (standard alphabet) of n bytes, appended. */
void pack_base64(const uint8_t *src, size_t n, struct strbuf *out);
/* C source of the decoder and base64 reader that repro.cu embeds. */
extern const char pack_decoder_source[];

#endif
