/*
 * yamlout.c - the house YAML writer (see yamlout.h).
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util.h"
#include "yamlout.h"

#define STR_CAP (1u << 20)        /* longer strings are cut, with a note */


static int yo_write(void *data, unsigned char *buf, size_t size)
{
	struct yout *y = data;
	if (size && fwrite(buf, 1, size, y->out) != size) {
		y->write_failed = 1;
		return 0;
	}
	return 1;
}

static void yo_emit(struct yout *y, yaml_event_t *ev, int ok)
{
	if (!ok) {
		/* the event could not be built (bad UTF-8 would be a bug here) */
		y->failed = 1;
		return;
	}
	if (y->failed) {
		yaml_event_delete(ev);
		return;
	}
	if (!yaml_emitter_emit(&y->em, ev))
		y->failed = 1;
}

void yo_map_start(struct yout *y, int flow)
{
	yaml_event_t ev;
	yo_emit(y, &ev, yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1,
		flow ? YAML_FLOW_MAPPING_STYLE : YAML_BLOCK_MAPPING_STYLE));
}

void yo_map_end(struct yout *y)
{
	yaml_event_t ev;
	yo_emit(y, &ev, yaml_mapping_end_event_initialize(&ev));
}

void yo_seq_start(struct yout *y, int flow)
{
	yaml_event_t ev;
	yo_emit(y, &ev, yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1,
		flow ? YAML_FLOW_SEQUENCE_STYLE : YAML_BLOCK_SEQUENCE_STYLE));
}

void yo_seq_end(struct yout *y)
{
	yaml_event_t ev;
	yo_emit(y, &ev, yaml_sequence_end_event_initialize(&ev));
}

void yo_scalar(struct yout *y, const char *s, size_t n, yaml_scalar_style_t style)
{
	yaml_event_t ev;
	if (n > INT32_MAX)
		n = INT32_MAX;
	yo_emit(y, &ev, yaml_scalar_event_initialize(&ev, NULL, NULL,
		(yaml_char_t *)s, (int)n, 1, 1, style));
}

/* A plain scalar the caller knows is safe and meant as a number/bool/null. */
void yo_plain(struct yout *y, const char *s)
{
	yo_scalar(y, s, strlen(s), YAML_PLAIN_SCALAR_STYLE);
}

/* Append s (n bytes) to o as valid UTF-8: invalid bytes become "\xNN". */
static void utf8_clean(struct strbuf *o, const unsigned char *s, size_t n)
{
	size_t i = 0;
	while (i < n) {
		unsigned c = s[i], w, v, k;
		if (c < 0x80) {
			sb_addch(o, (int)c);
			i++;
			continue;
		}
		if ((c & 0xe0) == 0xc0) {
			w = 2; v = c & 0x1f;
		} else if ((c & 0xf0) == 0xe0) {
			w = 3; v = c & 0x0f;
		} else if ((c & 0xf8) == 0xf0) {
			w = 4; v = c & 0x07;
		} else {
			w = 0; v = 0;
		}
		for (k = 1; w && k < w; k++) {
			if (i + k >= n || (s[i + k] & 0xc0) != 0x80) {
				w = 0;
				break;
			}
			v = v << 6 | (s[i + k] & 0x3f);
		}
		if (w && ((w == 2 && v < 0x80) || (w == 3 && v < 0x800) || (w == 4 && v < 0x10000) ||
			  v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff)))
			w = 0;
		if (!w) {
			sb_addf(o, "\\x%02x", c);
			i++;
			continue;
		}
		sb_add(o, s + i, w);
		i += w;
	}
}

/* Would a plain scalar with this text read back as something other than a
 * string (number, bool, null)?  Conservative: then we quote. */
static int looks_typed(const char *s)
{
	static const char *const words[] = { "null", "true", "false", "yes", "no", "on",
		"off", "y", "n", "~", ".inf", "-.inf", "+.inf", ".nan" };
	if (!*s)
		return 1;
	for (size_t i = 0; i < ARRAY_SIZE(words); i++)
		if (!strcasecmp(s, words[i]))
			return 1;
	if (!strchr("0123456789+-.", *s))
		return 0;
	return strspn(s, "0123456789abcdefABCDEFxXoO.+-_:") == strlen(s);
}

/* A string from the trace, cleaned and quoted when it would mis-read. */
void yo_str(struct yout *y, const char *s)
{
	size_t n = s ? strlen(s) : 0;
	sb_reset(&y->tmp);
	utf8_clean(&y->tmp, (const unsigned char *)(s ? s : ""), n > STR_CAP ? STR_CAP : n);
	if (n > STR_CAP)
		sb_addf(&y->tmp, "... (%zu bytes, cut)", n);
	yo_scalar(y, y->tmp.buf, y->tmp.len,
	       looks_typed(y->tmp.buf) ? YAML_DOUBLE_QUOTED_SCALAR_STYLE : YAML_PLAIN_SCALAR_STYLE);
}

void yo_strf(struct yout *y, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	sb_vaddf(&sb, fmt, ap);
	va_end(ap);
	yo_str(y, sb.buf);
	sb_release(&sb);
}

void yo_u64(struct yout *y, uint64_t v)
{
	char b[32];
	snprintf(b, sizeof(b), "%" PRIu64, v);
	yo_plain(y, b);
}

void yo_i64(struct yout *y, int64_t v)
{
	char b[32];
	snprintf(b, sizeof(b), "%" PRId64, v);
	yo_plain(y, b);
}

void yo_hex(struct yout *y, uint64_t v)
{
	char b[32];
	snprintf(b, sizeof(b), "0x%" PRIx64, v);
	yo_plain(y, b);
}

/* A string that must stay a string even though it is all hex digits. */
void yo_quoted(struct yout *y, const char *s)
{
	yo_scalar(y, s, strlen(s), YAML_DOUBLE_QUOTED_SCALAR_STYLE);
}

void yo_key(struct yout *y, const char *k)
{
	yo_plain(y, k);
}

void yo_kv_str(struct yout *y, const char *k, const char *v)
{
	yo_key(y, k);
	yo_str(y, v);
}

void yo_kv_u64(struct yout *y, const char *k, uint64_t v)
{
	yo_key(y, k);
	yo_u64(y, v);
}

void yo_kv_i64(struct yout *y, const char *k, int64_t v)
{
	yo_key(y, k);
	yo_i64(y, v);
}

void yo_kv_hex(struct yout *y, const char *k, uint64_t v)
{
	yo_key(y, k);
	yo_hex(y, v);
}

void yo_kv_bool(struct yout *y, const char *k, int v)
{
	yo_key(y, k);
	yo_plain(y, v ? "true" : "false");
}


void yo_plainf(struct yout *y, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;
	va_start(ap, fmt);
	sb_vaddf(&sb, fmt, ap);
	va_end(ap);
	yo_plain(y, sb.buf);
	sb_release(&sb);
}

int yo_open(struct yout *y, FILE *out, struct strbuf *err)
{
	yaml_event_t ev;
	memset(y, 0, sizeof(*y));
	y->out = out;
	sb_init(&y->tmp, 0);
	if (!yaml_emitter_initialize(&y->em)) {
		sb_adds(err, "cannot initialise the YAML emitter (out of memory?)");
		y->failed = -1;   /* nothing to delete */
		return -1;
	}
	yaml_emitter_set_output(&y->em, yo_write, y);
	yaml_emitter_set_unicode(&y->em, 1);
	yaml_emitter_set_width(&y->em, -1);   /* one line per scalar: greppable */
	yo_emit(y, &ev, yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING));
	yo_emit(y, &ev, yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1));
	return 0;
}

int yo_close(struct yout *y, struct strbuf *err)
{
	yaml_event_t ev;
	int ret = -1;
	if (y->failed < 0)
		goto out;
	yo_emit(y, &ev, yaml_document_end_event_initialize(&ev, 1));
	yo_emit(y, &ev, yaml_stream_end_event_initialize(&ev));
	if (!y->failed && !yaml_emitter_flush(&y->em))
		y->failed = 1;
	if (y->failed || fflush(y->out) == EOF || ferror(y->out)) {
		if (y->write_failed || ferror(y->out))
			sb_adds(err, "cannot write the YAML output (disk full or closed pipe?)");
		else
			sb_addf(err, "YAML emitter failed: %s", y->em.problem ? y->em.problem : "unknown error");
	} else {
		ret = 0;
	}
	yaml_emitter_delete(&y->em);
out:
	sb_release(&y->tmp);
	return ret;
}
