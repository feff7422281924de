/*
 * yamlread.c - flat YAML reading for `report` (see yamlread.h): libyaml's
 * event parser, a path stack of mapping keys and sequence indexes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "../../common/strbuf.h"
#include "../../common/util.h"
#include "yamlread.h"

enum { DEPTH = 32 };

struct level {
	int seq;                 /* 1: a sequence (next index in idx) */
	long idx;
	char *key;               /* mapping: the pending key, NULL when a key is expected */
};

static void path_of(struct level *lv, int depth, struct strbuf *p)
{
	sb_reset(p);
	for (int i = 0; i < depth; i++) {
		if (p->len)
			sb_addch(p, '.');
		if (lv[i].seq)
			sb_addf(p, "%ld", lv[i].idx);
		else
			sb_adds(p, lv[i].key ? lv[i].key : "");
	}
}

/* A value (scalar or collection) was complete at this level. */
static void value_done(struct level *lv, int depth)
{
	if (depth <= 0)
		return;
	if (lv[depth - 1].seq) {
		lv[depth - 1].idx++;
	} else {
		free(lv[depth - 1].key);
		lv[depth - 1].key = NULL;
	}
}

int yflat_read(struct yflat *y, const char *path, struct strbuf *err)
{
	FILE *f = fopen(path, "r");
	yaml_parser_t ps;
	yaml_event_t ev;
	struct level lv[DEPTH];
	struct strbuf p = STRBUF_INIT;
	int depth = 0, done = 0, ret = -1;

	memset(lv, 0, sizeof(lv));
	if (!f) {
		sb_addf(err, "%s: cannot read: no such file or not readable", path);
		return -1;
	}
	yaml_parser_initialize(&ps);
	yaml_parser_set_input_file(&ps, f);
	while (!done) {
		if (!yaml_parser_parse(&ps, &ev)) {
			sb_addf(err, "%s: line %zu: %s", path, ps.problem_mark.line + 1,
				ps.problem ? ps.problem : "not YAML");
			goto out;
		}
		switch (ev.type) {
		case YAML_STREAM_END_EVENT:
			done = 1;
			break;
		case YAML_MAPPING_START_EVENT:
		case YAML_SEQUENCE_START_EVENT:
			if (depth >= DEPTH) {
				sb_addf(err, "%s: nested too deep", path);
				yaml_event_delete(&ev);
				goto out;
			}
			lv[depth].seq = ev.type == YAML_SEQUENCE_START_EVENT;
			lv[depth].idx = 0;
			lv[depth].key = NULL;
			depth++;
			break;
		case YAML_MAPPING_END_EVENT:
		case YAML_SEQUENCE_END_EVENT:
			if (depth > 0) {
				free(lv[depth - 1].key);
				lv[depth - 1].key = NULL;
				depth--;
			}
			value_done(lv, depth);
			break;
		case YAML_SCALAR_EVENT: {
			const char *v = (const char *)ev.data.scalar.value;
			if (depth > 0 && !lv[depth - 1].seq && !lv[depth - 1].key) {
				lv[depth - 1].key = xstrdup(v);
				break;
			}
			path_of(lv, depth, &p);
			y->key = xrealloc(y->key, (y->n + 1) * sizeof(char *));
			y->val = xrealloc(y->val, (y->n + 1) * sizeof(char *));
			y->key[y->n] = xstrdup(p.buf);
			y->val[y->n] = xstrdup(v);
			y->n++;
			value_done(lv, depth);
			break;
		}
		default:
			break;
		}
		yaml_event_delete(&ev);
	}
	ret = 0;
out:
	for (int i = 0; i < DEPTH; i++)
		free(lv[i].key);
	yaml_parser_delete(&ps);
	fclose(f);
	sb_release(&p);
	return ret;
}

const char *yflat_get(const struct yflat *y, const char *key, const char *def)
{
	for (size_t i = 0; i < y->n; i++)
		if (!strcmp(y->key[i], key))
			return y->val[i];
	return def;
}

void yflat_release(struct yflat *y)
{
	for (size_t i = 0; i < y->n; i++) {
		free(y->key[i]);
		free(y->val[i]);
	}
	free(y->key);
	free(y->val);
	memset(y, 0, sizeof(*y));
}
