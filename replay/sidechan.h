/*
 * sidechan.h - the side channel: the lines a verbose replay and a verbose
 * repro.cu print about where things landed, read back beside
 * compute-sanitizer's report by diagnose (diagnose/diagnose.c) and by
 * shrink's sanitizer runs (reducer/oracle-san.c), which turn a faulting
 * address into "4 bytes past the end of param 0".  Every line is written
 * and read through this module; nobody formats or parses one by hand.
 *
 *   gpureduce-buffer INDEX 0xPTR SIZE    buffer INDEX (the trace's
 *                                        allocation number, repro.cu's
 *                                        buf[INDEX]) now lives at PTR
 *   gpureduce-global 0xPTR SIZE NAME     a loaded module's __device__
 *                                        variable NAME lives at PTR
 *
 * INDEX and SIZE are decimal, PTR hex after "0x" (lower case); NAME is one
 * or more characters with no blank or control character.  Each line ends in
 * '\n'.  A replay worker prints them on stderr when SC_REPLAY_ENV is set
 * (diagnose and the oracle set it for the replay they run under the
 * sanitizer); repro.cu prints its buffer lines on stdout when SC_REPRO_ENV
 * is set, with printf calls whose format is SC_BUFFER_FMT
 * (sidechan_emit_buffer).  Readers find a line by its prefix anywhere in
 * the merged output (a sanitizer's own text may precede it on a line) and
 * refuse a line that does not parse whole (-1).
 */
#ifndef GPUREDUCE_SIDECHAN_H
#define GPUREDUCE_SIDECHAN_H

#include <stddef.h>
#include <stdio.h>

struct strbuf;

#define SC_REPLAY_ENV "GPUREDUCE_REPLAY_VERBOSE"
#define SC_REPRO_ENV "GPUREDUCE_REPRO_VERBOSE"

#define SC_BUFFER_PREFIX "gpureduce-buffer "
#define SC_GLOBAL_PREFIX "gpureduce-global "
/* printf formats (unsigned long long arguments; NAME a string) */
#define SC_BUFFER_FMT SC_BUFFER_PREFIX "%llu 0x%llx %llu\n"
#define SC_GLOBAL_FMT SC_GLOBAL_PREFIX "0x%llx %llu %s\n"

enum { SC_NONE = 0, SC_BUFFER = 1, SC_GLOBAL = 2 };

struct sc_buffer {
	unsigned long long index, ptr, size;
};

struct sc_global {
	unsigned long long ptr, size;
	const char *name;      /* parse: points into the line, name_len bytes */
	size_t name_len;
};

/* 1 when this process (a replay worker) is to print the lines. */
int sidechan_replay_on(void);

/* One line each, '\n' included, appended to sb.  sidechan_format_global
 * takes g->name as a C string (name_len unused) and returns -1, appending
 * nothing, for a NAME the line cannot carry (NULL, empty, or holding a
 * blank or control character), else 0. */
void sidechan_format_buffer(struct strbuf *sb, const struct sc_buffer *b);
int sidechan_format_global(struct strbuf *sb, const struct sc_global *g);
/* The same, written to f in one call. */
void sidechan_print_buffer(FILE *f, const struct sc_buffer *b);
void sidechan_print_global(FILE *f, const struct sc_global *g);

/* repro.cu: the C expression that prints buffer `index` (its device
 * pointer is the C expression ptr_expr), appended to sb without a
 * semicolon: printf("<SC_BUFFER_FMT>", 0ull, (unsigned long long)(...), 4096ull). */
void sidechan_emit_buffer(struct strbuf *sb, unsigned long long index, const char *ptr_expr,
			  unsigned long long size);

/* What the line starting at p is: SC_BUFFER, SC_GLOBAL (by its prefix),
 * or SC_NONE. */
int sidechan_kind(const char *p);
/* The first line of `kind` (SC_BUFFER or SC_GLOBAL) in text at or after
 * p: a pointer to its prefix, or NULL when there is none. */
const char *sidechan_next(const char *p, int kind);
/* Parse the line whose prefix is at p (it ends at '\n', "\r\n" or the end
 * of the text).  0, or -1 when it is not a whole, well-formed line of that
 * kind (*b / *g then zeroed). */
int sidechan_parse_buffer(const char *p, struct sc_buffer *b);
int sidechan_parse_global(const char *p, struct sc_global *g);

#endif
