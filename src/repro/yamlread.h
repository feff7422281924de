/*
 * yamlread.h - read a small YAML file (repro.yaml) into flat "a.b.c" ->
 * scalar pairs with libyaml; sequences index as "a.0.b".  For `report`,
 * which reads what shrink wrote rather than re-deriving it.
 */
#ifndef GPUREDUCE_YAMLREAD_H
#define GPUREDUCE_YAMLREAD_H

#include <stddef.h>

struct strbuf;

struct yflat {
	char **key, **val;
	size_t n;
};
#define YFLAT_INIT { NULL, NULL, 0 }

/* 0, or -1 with err naming the file and the parser's complaint. */
int yflat_read(struct yflat *y, const char *path, struct strbuf *err);
/* The scalar at key, or def. */
const char *yflat_get(const struct yflat *y, const char *key, const char *def);
void yflat_release(struct yflat *y);

#endif
