/*
 * proto.c - encode/decode the worker protocol lines (see proto.h): the
 * one place that knows their fields, used by the parent (replay/pool.c)
 * and the worker (src/cmd-worker.c).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/strbuf.h"
#include "../common/util.h"
#include "proto.h"

static void add_clean(struct strbuf *sb, const char *s)
{
	for (; s && *s; s++)
		sb_addch(sb, *s == '\t' || *s == '\n' || *s == '\r' ? ' ' : *s);
}

/* Split s at tabs into at most n fields (in place).  Returns the count,
 * n + 1 when there are more than n. */
static int split_tabs(char *s, char **f, int n)
{
	int k = 0;
	while (k < n) {
		f[k++] = s;
		char *t = strchr(s, '\t');
		if (!t)
			return k;
		*t = 0;
		s = t + 1;
	}
	return n + 1;
}

/* A whole decimal number in [min, max]: 0 with *v, or -1. */
static int parse_ll(const char *s, long long min, long long max, long long *v)
{
	char *end;
	errno = 0;
	*v = strtoll(s, &end, 10);
	return *s && !*end && !errno && *v >= min && *v <= max ? 0 : -1;
}

static int parse_int(const char *s, int min, int *v)
{
	long long x;
	if (parse_ll(s, min, INT_MAX, &x) < 0)
		return -1;
	*v = (int)x;
	return 0;
}

static int parse_long(const char *s, long min, long *v)
{
	long long x;
	if (parse_ll(s, min, LONG_MAX, &x) < 0)
		return -1;
	*v = (long)x;
	return 0;
}

/* ---- start-up ------------------------------------------------------------ */

void proto_format_ready(struct strbuf *sb, int devices)
{
	sb_addf(sb, "READY\t%d\n", devices);
}

void proto_format_fatal(struct strbuf *sb, const char *why)
{
	sb_adds(sb, "FATAL\t");
	add_clean(sb, why);
	sb_addch(sb, '\n');
}

int proto_parse_hello(const char *line, int *devices, const char **why)
{
	*devices = 0;
	*why = line;
	if (!strcmp(line, "READY")) {
		*devices = 1;
		return PROTO_READY;
	}
	if (!strncmp(line, "READY\t", 6))
		return parse_int(line + 6, 1, devices) < 0 ? -1 : PROTO_READY;
	if (!strncmp(line, "FATAL\t", 6)) {
		*why = line + 6;
		return PROTO_FATAL;
	}
	return -1;
}

/* ---- jobs ---------------------------------------------------------------- */

void proto_format_run(struct strbuf *sb, const struct replay_opts *o, const char *trace)
{
	sb_addf(sb, "RUN\t%d\t%ld\t%d\t", o->guard, o->stop_before, o->snap_mode);
	add_clean(sb, o->snap_path ? o->snap_path : "-");
	sb_addch(sb, '\t');
	add_clean(sb, trace);
	/* the skip list's file (a reader of 6 fields stops before it) */
	sb_addch(sb, '\t');
	add_clean(sb, o->skip_path ? o->skip_path : "-");
	/* snapshot and go on (a reader of 7 fields stops before it), then
	 * recycle (a reader of 8 stops before it) */
	sb_addf(sb, "\t%d\t%d\n", o->snap_go_on ? 1 : 0, o->recycle ? 1 : 0);
}

int proto_parse_run(char *line, struct replay_opts *o, const char **trace)
{
	char *f[9];
	struct replay_opts d = REPLAY_OPTS_INIT;
	int n = split_tabs(line, f, 9);
	if ((n < 6 || n > 9) || strcmp(f[0], "RUN"))
		return -1;
	*o = d;
	if (parse_int(f[1], 0, &o->guard) < 0 || parse_long(f[2], -1, &o->stop_before) < 0 ||
	    parse_int(f[3], 0, &o->snap_mode) < 0 || !*f[5])
		return -1;
	o->snap_path = strcmp(f[4], "-") ? f[4] : NULL;
	*trace = f[5];
	o->skip_path = n >= 7 && *f[6] && strcmp(f[6], "-") ? f[6] : NULL;
	if (n >= 8 && parse_int(f[7], 0, &o->snap_go_on) < 0)
		return -1;
	if (n == 9 && parse_int(f[8], 0, &o->recycle) < 0)
		return -1;
	return 0;
}

void proto_format_result(struct strbuf *sb, const struct replay_result *r)
{
	sb_addf(sb, "RESULT\t%d\t%ld\t%lld\t%d\t%ld\t%.6f\t", r->status, r->event, r->launch_seq,
		r->code, r->launches, r->seconds);
	add_clean(sb, r->error);
	sb_addch(sb, '\t');
	add_clean(sb, r->kernel);
	sb_addch(sb, '\t');
	add_clean(sb, r->msg);
	/* 1.4: relocation coverage (a reader of 10 fields stops before it) */
	sb_addf(sb, "\t%ld\t%ld\t%ld\t%ld\t%ld", r->ptr_words, r->stray_words, r->tmaps_encoded,
		r->tmaps_word0, r->shifted);
	/* why an error, as a code (enum replay_error_kind); the snapshot written */
	sb_addf(sb, "\t%d\t%d\n", r->error_kind, r->snapped);
}

int proto_parse_result(const char *line, struct replay_result *r)
{
	char *copy = xstrdup(line), *f[17], *end;
	long long seq;
	int ret = -1, nf;
	memset(r, 0, sizeof(*r));
	nf = split_tabs(copy, f, 17);
	if ((nf != 10 && nf != 15 && nf != 16 && nf != 17) || strcmp(f[0], "RESULT"))
		goto out;
	r->shifted = -1;
	if (nf >= 15 && (parse_long(f[10], 0, &r->ptr_words) < 0 ||
			 parse_long(f[11], 0, &r->stray_words) < 0 ||
			 parse_long(f[12], 0, &r->tmaps_encoded) < 0 ||
			 parse_long(f[13], 0, &r->tmaps_word0) < 0 ||
			 parse_long(f[14], -1, &r->shifted) < 0))
		goto out;
	if (nf >= 16 && parse_int(f[15], 0, &r->error_kind) < 0)
		goto out;
	if (nf == 17 && parse_int(f[16], 0, &r->snapped) < 0)
		goto out;
	if (parse_int(f[1], 0, &r->status) < 0 || parse_long(f[2], LONG_MIN, &r->event) < 0 ||
	    parse_ll(f[3], LLONG_MIN, LLONG_MAX, &seq) < 0 || parse_int(f[4], 0, &r->code) < 0 ||
	    parse_long(f[5], 0, &r->launches) < 0)
		goto out;
	r->launch_seq = seq;
	r->seconds = strtod(f[6], &end);
	if (!*f[6] || *end)
		goto out;
	snprintf(r->error, sizeof(r->error), "%s", f[7]);
	snprintf(r->kernel, sizeof(r->kernel), "%s", f[8]);
	snprintf(r->msg, sizeof(r->msg), "%s", f[9]);
	ret = 0;
out:
	if (ret < 0)
		memset(r, 0, sizeof(*r));
	free(copy);
	return ret;
}

/* ---- framing ------------------------------------------------------------- */

char *proto_take_line(struct strbuf *in)
{
	char *nl = in->len ? memchr(in->buf, '\n', in->len) : NULL;
	size_t len;
	char *one;
	if (!nl)
		return NULL;
	len = (size_t)(nl - in->buf);
	one = xstrndup(in->buf, len);
	memmove(in->buf, nl + 1, in->len - len - 1);
	sb_setlen(in, in->len - len - 1);
	return one;
}
