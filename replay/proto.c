/*
 * proto.c - encode/decode the worker protocol lines (see proto.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/strbuf.h"
#include "proto.h"

static void add_clean(struct strbuf *sb, const char *s)
{
	for (; s && *s; s++)
		sb_addch(sb, *s == '\t' || *s == '\n' || *s == '\r' ? ' ' : *s);
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
	sb_addch(sb, '\n');
}

/* Split s at tabs into at most n fields (in place). Returns the count. */
static int split_tabs(char *s, char **f, int n)
{
	int k = 0;
	while (k < n) {
		f[k++] = s;
		char *t = strchr(s, '\t');
		if (!t)
			break;
		*t = 0;
		s = t + 1;
	}
	return k;
}

int proto_parse_result(const char *line, struct replay_result *r)
{
	char *copy = strdup(line), *f[10];
	int ret = -1;
	memset(r, 0, sizeof(*r));
	if (!copy)
		return -1;
	if (split_tabs(copy, f, 10) != 10 || strcmp(f[0], "RESULT"))
		goto out;
	r->status = atoi(f[1]);
	r->event = atol(f[2]);
	r->launch_seq = atoll(f[3]);
	r->code = atoi(f[4]);
	r->launches = atol(f[5]);
	r->seconds = atof(f[6]);
	snprintf(r->error, sizeof(r->error), "%s", f[7]);
	snprintf(r->kernel, sizeof(r->kernel), "%s", f[8]);
	snprintf(r->msg, sizeof(r->msg), "%s", f[9]);
	ret = 0;
out:
	free(copy);
	return ret;
}

void proto_format_run(struct strbuf *sb, const struct replay_opts *o, const char *trace)
{
	sb_addf(sb, "RUN\t%d\t%ld\t%d\t", o->guard, o->stop_before, o->snap_mode);
	add_clean(sb, o->snap_path ? o->snap_path : "-");
	sb_addch(sb, '\t');
	add_clean(sb, trace);
	sb_addch(sb, '\n');
}

int proto_parse_run(char *line, struct replay_opts *o, const char **trace)
{
	char *f[6];
	struct replay_opts d = REPLAY_OPTS_INIT;
	if (split_tabs(line, f, 6) != 6 || strcmp(f[0], "RUN"))
		return -1;
	*o = d;
	o->guard = atoi(f[1]);
	o->stop_before = atol(f[2]);
	o->snap_mode = atoi(f[3]);
	o->snap_path = strcmp(f[4], "-") ? f[4] : NULL;
	*trace = f[5];
	return 0;
}
