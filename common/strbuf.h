/*
 * strbuf.h - the house growable byte/string buffer.
 *
 * Owns a heap block that always stays NUL-terminated, so ->buf can be used
 * as a C string whenever the content is text.  Modelled on git's strbuf.
 * Used everywhere a string or byte payload is built piece by piece: trace
 * encoding, YAML/C emission, child-process output capture.
 *
 * Ownership: a struct strbuf owns ->buf.  STRBUF_INIT is a valid empty buffer
 * that owns nothing; sb_release() frees and resets to STRBUF_INIT and accepts
 * a buffer in either state.  Allocation failure aborts (see xmalloc).
 */
#ifndef GPUREDUCE_STRBUF_H
#define GPUREDUCE_STRBUF_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

struct strbuf {
	char *buf;      /* NUL-terminated; points at sb_empty when alloc == 0 */
	size_t len;     /* bytes used, not counting the NUL */
	size_t alloc;   /* bytes allocated, 0 when buf is sb_empty */
};

extern char sb_empty[];
#define STRBUF_INIT { sb_empty, 0, 0 }

void sb_init(struct strbuf *sb, size_t hint);
void sb_release(struct strbuf *sb);
/* Give the caller the heap block (caller frees); sb is reset to empty. */
char *sb_detach(struct strbuf *sb, size_t *len);
void sb_grow(struct strbuf *sb, size_t extra);
void sb_reset(struct strbuf *sb);
void sb_setlen(struct strbuf *sb, size_t len);
void sb_add_slow(struct strbuf *sb, const void *data, size_t len);
/* Inline: the trace encoder appends a few bytes per field, ~100 fields a
 * launch record (issue 26); the call and sb_grow's checks were a fifth of
 * writing one. */
static inline void sb_add(struct strbuf *sb, const void *data, size_t len)
{
	if (len && sb->alloc - sb->len > len) {   /* room for the bytes and the NUL */
		__builtin_memcpy(sb->buf + sb->len, data, len);
		sb->len += len;
		sb->buf[sb->len] = 0;
		return;
	}
	sb_add_slow(sb, data, len);
}
void sb_adds(struct strbuf *sb, const char *s);
void sb_addch(struct strbuf *sb, int c);
void sb_addf(struct strbuf *sb, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void sb_vaddf(struct strbuf *sb, const char *fmt, va_list ap);
/* Append n bytes of c. */
void sb_addfill(struct strbuf *sb, int c, size_t n);

/* Little-endian fixed-width encoders used by the trace format. */
void sb_put_u8(struct strbuf *sb, uint8_t v);
void sb_put_u16(struct strbuf *sb, uint16_t v);
static inline void sb_put_u32(struct strbuf *sb, uint32_t v)
{
	uint8_t b[4] = { (uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24) };
	sb_add(sb, b, 4);
}
static inline void sb_put_u64(struct strbuf *sb, uint64_t v)
{
	sb_put_u32(sb, (uint32_t)v);
	sb_put_u32(sb, (uint32_t)(v >> 32));
}
static inline void sb_put_bytes(struct strbuf *sb, const void *p, uint32_t n)
{
	sb_put_u32(sb, n);
	sb_add(sb, p, n);
}
/* u32 length then bytes (no NUL).  s == NULL encodes as an empty string. */
static inline void sb_put_str(struct strbuf *sb, const char *s)
{
	size_t n = s ? __builtin_strlen(s) : 0;
	if (n > UINT32_MAX)
		n = UINT32_MAX;
	sb_put_bytes(sb, s ? s : "", (uint32_t)n);
}

#endif
