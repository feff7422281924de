/*
 * report.h - `gpureduce report`: report.md, ready to paste into a GitHub
 * issue, and report.tar.gz (repro.cu, repro.yaml, report.md) from a
 * shrink's output folder and the captured trace it names (report.c).
 */
#ifndef GPUREDUCE_REPORT_MD_H
#define GPUREDUCE_REPORT_MD_H

struct strbuf;

struct report_opts {
	const char *dir;         /* the folder holding repro.cu, repro.yaml, repro.bin */
	const char *trace;       /* the captured trace (NULL: repro.yaml's original.trace) */
	int runs;                /* repro runs (0: do not build or run it) */
	int sanitize;            /* run compute-sanitizer on the repro */
	int redact;              /* replace path names (report.md and the repro.cu in the tarball) */
	int tar;                 /* write report.tar.gz */
};

/* Write DIR/report.md (and report.tar.gz).  0; -1 with err, *exit_code
 * set to the command's exit code (3 bad input, 4 environment). */
int report_write(const struct report_opts *o, int *exit_code, struct strbuf *err);

/* Replace every absolute path in text (two or more components) by
 * "<pathN>/BASENAME", the same N for the same directory. */
void report_redact_paths(const char *text, struct strbuf *out);

#endif
