/*
 * sidechan.c - the side channel's lines (see sidechan.h): formatted from
 * SC_BUFFER_FMT / SC_GLOBAL_FMT, for replay's stderr and for the printf
 * calls repro.cu is written with, and parsed strictly, field by field, so
 * that what one end writes the other reads back exactly (a unit test
 * round-trips them) and a torn or foreign line is refused.
 */
#include <stdlib.h>
#include <string.h>

#include "../common/strbuf.h"
#include "sidechan.h"

int sidechan_replay_on(void)
{
	return getenv(SC_REPLAY_ENV) != NULL;
}

void sidechan_format_buffer(struct strbuf *sb, const struct sc_buffer *b)
{
	sb_addf(sb, SC_BUFFER_FMT, b->index, b->ptr, b->size);
}

/* 1 if NAME can be carried: non-empty, no blank or control character. */
static int name_ok(const char *s, size_t n)
{
	if (!s || !n)
		return 0;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] <= ' ' || s[i] == 0x7f)
			return 0;
	return 1;
}

int sidechan_format_global(struct strbuf *sb, const struct sc_global *g)
{
	if (!g->name || !name_ok(g->name, strlen(g->name)))
		return -1;
	sb_addf(sb, SC_GLOBAL_FMT, g->ptr, g->size, g->name);
	return 0;
}

void sidechan_print_buffer(FILE *f, const struct sc_buffer *b)
{
	struct strbuf sb = STRBUF_INIT;
	sidechan_format_buffer(&sb, b);
	fputs(sb.buf, f);
	sb_release(&sb);
}

void sidechan_print_global(FILE *f, const struct sc_global *g)
{
	struct strbuf sb = STRBUF_INIT;
	if (sidechan_format_global(&sb, g) == 0)
		fputs(sb.buf, f);
	sb_release(&sb);
}

void sidechan_emit_buffer(struct strbuf *sb, unsigned long long index, const char *ptr_expr,
			  unsigned long long size)
{
	sb_adds(sb, "printf(\"");
	for (const char *p = SC_BUFFER_FMT; *p; p++) {
		if (*p == '\n')
			sb_adds(sb, "\\n");
		else if (*p == '"' || *p == '\\')
			sb_addf(sb, "\\%c", *p);
		else
			sb_addch(sb, *p);
	}
	sb_addf(sb, "\", %lluull, (unsigned long long)(%s), %lluull)", index, ptr_expr, size);
}

int sidechan_kind(const char *p)
{
	if (!strncmp(p, SC_BUFFER_PREFIX, sizeof(SC_BUFFER_PREFIX) - 1))
		return SC_BUFFER;
	if (!strncmp(p, SC_GLOBAL_PREFIX, sizeof(SC_GLOBAL_PREFIX) - 1))
		return SC_GLOBAL;
	return SC_NONE;
}

const char *sidechan_next(const char *p, int kind)
{
	return kind == SC_BUFFER ? strstr(p, SC_BUFFER_PREFIX) :
	       kind == SC_GLOBAL ? strstr(p, SC_GLOBAL_PREFIX) : NULL;
}

/* A decimal (base 10) or hex (base 16, after its "0x") number at *p, one
 * digit or more, that fits 64 bits; *p moves past it.  0 or -1. */
static int take_num(const char **p, int base, unsigned long long *v)
{
	const char *s = *p;
	unsigned long long x = 0;
	int n = 0;
	for (;; s++, n++) {
		int d = *s >= '0' && *s <= '9' ? *s - '0' :
			base == 16 && *s >= 'a' && *s <= 'f' ? *s - 'a' + 10 :
			base == 16 && *s >= 'A' && *s <= 'F' ? *s - 'A' + 10 : -1;
		if (d < 0)
			break;
		if (x > (~0ull - (unsigned)d) / (unsigned)base)
			return -1;   /* past 64 bits */
		x = x * (unsigned)base + (unsigned)d;
	}
	if (!n)
		return -1;
	*p = s;
	*v = x;
	return 0;
}

/* Expect the exact text `lit` at *p. */
static int take(const char **p, const char *lit)
{
	size_t n = strlen(lit);
	if (strncmp(*p, lit, n))
		return -1;
	*p += n;
	return 0;
}

/* The line ends at p: '\n', "\r\n" or the end of the text. */
static int at_end(const char *p)
{
	return !*p || *p == '\n' || (p[0] == '\r' && (!p[1] || p[1] == '\n'));
}

int sidechan_parse_buffer(const char *p, struct sc_buffer *b)
{
	struct sc_buffer v;
	if (take(&p, SC_BUFFER_PREFIX) < 0 || take_num(&p, 10, &v.index) < 0 || take(&p, " 0x") < 0 ||
	    take_num(&p, 16, &v.ptr) < 0 || take(&p, " ") < 0 || take_num(&p, 10, &v.size) < 0 || !at_end(p)) {
		memset(b, 0, sizeof(*b));
		return -1;
	}
	*b = v;
	return 0;
}

int sidechan_parse_global(const char *p, struct sc_global *g)
{
	struct sc_global v;
	memset(&v, 0, sizeof(v));
	if (take(&p, SC_GLOBAL_PREFIX) < 0 || take(&p, "0x") < 0 || take_num(&p, 16, &v.ptr) < 0 ||
	    take(&p, " ") < 0 || take_num(&p, 10, &v.size) < 0 || take(&p, " ") < 0)
		goto bad;
	v.name = p;
	while (!at_end(p))
		p++;
	v.name_len = (size_t)(p - v.name);
	if (!name_ok(v.name, v.name_len))
		goto bad;
	*g = v;
	return 0;
bad:
	memset(g, 0, sizeof(*g));
	return -1;
}
