/*
 * strbuf.c - implementation of the house buffer type (see strbuf.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"
#include "util.h"

char sb_empty[1];

void sb_init(struct strbuf *sb, size_t hint)
{
	sb->buf = sb_empty;
	sb->len = sb->alloc = 0;
	if (hint)
		sb_grow(sb, hint);
}

void sb_release(struct strbuf *sb)
{
	if (!sb)
		return;
	if (sb->alloc)
		free(sb->buf);
	sb->buf = sb_empty;
	sb->len = sb->alloc = 0;
}

char *sb_detach(struct strbuf *sb, size_t *len)
{
	char *r;
	if (len)
		*len = sb->len;
	if (!sb->alloc)
		sb_grow(sb, 0);
	r = sb->buf;
	sb->buf = sb_empty;
	sb->len = sb->alloc = 0;
	return r;
}

void sb_grow(struct strbuf *sb, size_t extra)
{
	size_t need = sb->len + extra + 1;
	if (need < sb->len)
		BUG("strbuf size overflow");
	if (need <= sb->alloc)
		return;
	size_t n = sb->alloc ? sb->alloc : 64;
	while (n < need)
		n = n * 3 / 2 + 16;
	if (!sb->alloc) {
		sb->buf = xmalloc(n);
		sb->buf[0] = 0;
	} else {
		sb->buf = xrealloc(sb->buf, n);
	}
	sb->alloc = n;
}

void sb_reset(struct strbuf *sb)
{
	sb_setlen(sb, 0);
}

void sb_setlen(struct strbuf *sb, size_t len)
{
	if (len > (sb->alloc ? sb->alloc - 1 : 0))
		BUG("sb_setlen beyond allocation");
	sb->len = len;
	if (sb->alloc)
		sb->buf[len] = 0;
}

void sb_add_slow(struct strbuf *sb, const void *data, size_t len)
{
	if (!len)
		return;
	sb_grow(sb, len);
	memcpy(sb->buf + sb->len, data, len);
	sb->len += len;
	sb->buf[sb->len] = 0;
}

void sb_adds(struct strbuf *sb, const char *s)
{
	sb_add(sb, s, strlen(s));
}

void sb_addch(struct strbuf *sb, int c)
{
	char ch = (char)c;
	sb_add(sb, &ch, 1);
}

void sb_addfill(struct strbuf *sb, int c, size_t n)
{
	if (!n)
		return;
	sb_grow(sb, n);
	memset(sb->buf + sb->len, c, n);
	sb->len += n;
	sb->buf[sb->len] = 0;
}

void sb_vaddf(struct strbuf *sb, const char *fmt, va_list ap)
{
	va_list cp;
	int n;

	va_copy(cp, ap);
	n = vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	if (n < 0)
		BUG("vsnprintf failed");
	sb_grow(sb, (size_t)n);
	vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
	sb->len += (size_t)n;
}

void sb_addf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	sb_vaddf(sb, fmt, ap);
	va_end(ap);
}

void sb_put_u8(struct strbuf *sb, uint8_t v)
{
	sb_add(sb, &v, 1);
}

void sb_put_u16(struct strbuf *sb, uint16_t v)
{
	uint8_t b[2] = { (uint8_t)v, (uint8_t)(v >> 8) };
	sb_add(sb, b, 2);
}

