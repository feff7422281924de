/*
 * proto.h - the line protocol between the reducer (or `gpureduce replay`)
 * and replay worker processes (`gpureduce __worker`).
 *
 * worker -> parent:  READY<TAB>devices | FATAL<TAB>why
 *                    (devices: how many the driver reports; a parent that
 *                    reads a bare READY takes it as one)
 * parent -> worker:  RUN<TAB>guard<TAB>stop_before<TAB>snap_mode<TAB>snap_path|-<TAB>trace_path
 * worker -> parent:  RESULT<TAB>status<TAB>event<TAB>seq<TAB>code<TAB>launches<TAB>seconds
 *                    <TAB>error<TAB>kernel<TAB>msg
 * A worker whose context died (status fault) exits after its RESULT line.
 * Fields never contain tabs or newlines (proto_clean replaces them).
 */
#ifndef GPUREDUCE_PROTO_H
#define GPUREDUCE_PROTO_H

#include "replay.h"

struct strbuf;

void proto_format_result(struct strbuf *sb, const struct replay_result *r);
/* Parse a RESULT line (without the newline).  0 or -1. */
int proto_parse_result(const char *line, struct replay_result *r);
/* Parse a RUN line into opts and the trace path (pointers into `line`,
 * which is modified).  0 or -1. */
int proto_parse_run(char *line, struct replay_opts *o, const char **trace);
void proto_format_run(struct strbuf *sb, const struct replay_opts *o, const char *trace);

#endif
