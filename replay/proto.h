/*
 * proto.h - the line protocol between a parent (replay/pool.c, for
 * `shrink` and `gpureduce replay`) and its replay worker processes
 * (`gpureduce __worker`, src/cmd-worker.c).  Both ends write and read every
 * message through this module; neither formats or parses a line by hand.
 *
 * worker -> parent:  READY<TAB>devices | FATAL<TAB>why
 *                    (devices: how many the driver reports; a parent that
 *                    reads a bare READY takes it as one)
 * parent -> worker:  RUN<TAB>guard<TAB>stop_before<TAB>snap_mode<TAB>snap_path|-<TAB>trace_path
 *                    <TAB>skip_path|-<TAB>snap_go_on
 *                    (a worker also reads the first 6 or 7 fields alone)
 * worker -> parent:  RESULT<TAB>status<TAB>event<TAB>seq<TAB>code<TAB>launches<TAB>seconds
 *                    <TAB>error<TAB>kernel<TAB>msg<TAB>ptr_words<TAB>stray_words
 *                    <TAB>tmaps_encoded<TAB>tmaps_word0<TAB>shifted<TAB>error_kind<TAB>snapped
 *                    (a parent also reads the first 10, 15 or 16 fields alone)
 * Every message is one line ending in '\n'.  A worker whose context died
 * (status fault) exits after its RESULT line.  Text fields never contain
 * tabs or newlines (the formatters turn them into spaces); numbers are
 * decimal, and a line whose numbers do not parse, or that has the wrong
 * number of fields, is malformed (-1).
 */
#ifndef GPUREDUCE_PROTO_H
#define GPUREDUCE_PROTO_H

#include "replay.h"

struct strbuf;

/* The hidden subcommand a parent runs to start a worker: `gpureduce __worker`. */
#define PROTO_WORKER_CMD "__worker"

/* What a worker's first line says (proto_parse_hello). */
enum { PROTO_READY = 1, PROTO_FATAL = 2 };

/* Worker, once at start: its context is up on a driver that reports
 * `devices` devices, or it could not start (why). */
void proto_format_ready(struct strbuf *sb, int devices);
void proto_format_fatal(struct strbuf *sb, const char *why);
/* Parent: a worker's first line (without the newline).  PROTO_READY with
 * *devices (1 for a bare READY), PROTO_FATAL with *why pointing at the
 * reason inside `line`, or -1 for anything else (*why: the whole line). */
int proto_parse_hello(const char *line, int *devices, const char **why);

void proto_format_run(struct strbuf *sb, const struct replay_opts *o, const char *trace);
/* Parse a RUN line into opts and the trace path (pointers into `line`,
 * which is modified).  0 or -1. */
int proto_parse_run(char *line, struct replay_opts *o, const char **trace);

void proto_format_result(struct strbuf *sb, const struct replay_result *r);
/* Parse a RESULT line (without the newline).  0 or -1 (r zeroed). */
int proto_parse_result(const char *line, struct replay_result *r);

/* Parent: take the first complete line out of the bytes read so far from
 * a worker (`in`, consumed up to and including its '\n').  Returns it
 * without the newline (the caller frees it), or NULL when no complete
 * line has arrived yet. */
char *proto_take_line(struct strbuf *in);

#endif
