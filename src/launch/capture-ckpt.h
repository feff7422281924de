/*
 * capture-ckpt.h - checkpoint options and the progress line of `gpureduce
 * capture` (src/launch/capture-ckpt.c); the library side is capture/checkpoint.c.
 */
#ifndef GPUREDUCE_CAPTURE_CKPT_H
#define GPUREDUCE_CAPTURE_CKPT_H

#include <stdint.h>

struct child;
struct strbuf;

struct ckpt_opts {
	uint64_t launches;       /* 0: not by launches */
	uint64_t bytes;          /* window bytes; 0: by percent */
	uint64_t percent;        /* window as % of the last checkpoint's file (0: 50) */
	uint64_t seconds;        /* 0: not by time */
	uint64_t max_bytes;      /* --max-trace-bytes; 0: none */
	int off;                 /* --no-checkpoint */
};

/* "auto", or comma-separated terms: 10000 / 10000launches, 512M / 2G, 25%
 * (of the last checkpoint), 90s / 10m / 1h.  Terms not given are 0.  0 or
 * -1 with err. */
int ckpt_parse_every(const char *spec, struct ckpt_opts *o, struct strbuf *err);
/* A byte size such as 4G or 512M (for --max-trace-bytes).  0 or -1 with err. */
int ckpt_parse_bytes(const char *opt, const char *s, uint64_t *out, struct strbuf *err);
/* The six GPUREDUCE_CKPT* / GPUREDUCE_MAX_TRACE_BYTES entries ("NAME=value")
 * into env[0..5] (appended). */
void ckpt_env(const struct ckpt_opts *o, struct strbuf env[6]);
/* Remove TRACE.next, the checkpoint a program that died was writing (TRACE
 * itself holds the previous one, whole).  1 if there was one. */
int ckpt_clean_next(const char *trace);
/* child_wait, drawing the progress line on a terminal meanwhile. */
int ckpt_wait(struct child *c, const char *trace, const char *progress);

#endif
