/*
 * yamlout.h - the house YAML writer: a thin layer over libyaml's emitter
 * events, shared by `gpureduce show` and shrink's repro.yaml.
 *
 * Strings that come from traces are cleaned to valid UTF-8 (the emitter
 * rejects anything else) and quoted when a plain scalar would read back as
 * a number, bool or null; numbers and bools are written plain.  Lines are
 * never folded, so every scalar stays greppable on one line.  The first
 * failure stops further output; yo_close() reports it.
 */
#ifndef GPUREDUCE_YAMLOUT_H
#define GPUREDUCE_YAMLOUT_H

#include <stdint.h>
#include <stdio.h>
#include <yaml.h>

#include "strbuf.h"

struct yout {
	yaml_emitter_t em;
	FILE *out;
	int failed;              /* the emitter or a write failed: stop emitting */
	int write_failed;
	struct strbuf tmp;
};

/* Start a stream and a document on out.  0, or -1 with err. */
int yo_open(struct yout *y, FILE *out, struct strbuf *err);
/* End the document and stream, flush.  0, or -1 with err saying what
 * failed.  Releases y either way (also after a failed yo_open). */
int yo_close(struct yout *y, struct strbuf *err);

void yo_map_start(struct yout *y, int flow);
void yo_map_end(struct yout *y);
void yo_seq_start(struct yout *y, int flow);
void yo_seq_end(struct yout *y);
/* A scalar in the given style (n bytes of s). */
void yo_scalar(struct yout *y, const char *s, size_t n, yaml_scalar_style_t style);
/* A plain scalar the caller knows is safe (a key, a number, true/false/null). */
void yo_plain(struct yout *y, const char *s);
void yo_plainf(struct yout *y, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A double-quoted scalar: stays a string even when it looks like a number. */
void yo_quoted(struct yout *y, const char *s);
/* A string from a trace: cleaned, cut at 1 MiB, quoted when it would mis-read. */
void yo_str(struct yout *y, const char *s);
void yo_strf(struct yout *y, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void yo_u64(struct yout *y, uint64_t v);
void yo_i64(struct yout *y, int64_t v);
void yo_hex(struct yout *y, uint64_t v);

void yo_key(struct yout *y, const char *k);
void yo_kv_str(struct yout *y, const char *k, const char *v);
void yo_kv_u64(struct yout *y, const char *k, uint64_t v);
void yo_kv_i64(struct yout *y, const char *k, int64_t v);
void yo_kv_hex(struct yout *y, const char *k, uint64_t v);
void yo_kv_bool(struct yout *y, const char *k, int v);

#endif
