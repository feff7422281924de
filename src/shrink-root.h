/*
 * shrink-root.h - `gpureduce shrink --root-cause` (cmd-shrink-root.c),
 * called by cmd-shrink.c after the crash-site repro is written.
 */
#ifndef GPUREDUCE_SHRINK_ROOT_H
#define GPUREDUCE_SHRINK_ROOT_H

struct shrink_opts;
struct strbuf;
struct trace;

/*
 * Find the first out-of-bounds access inside an allocator segment of t
 * (read from `path`, with BLOCK_ALLOC records) and emit it beside out_cu as
 * repro-root.cu, .bin and .yaml.  base: the crash-site shrink's options
 * (its workdir is used); crash_cu names the crash-site repro for the
 * header.  Appends the one-line summary to line.  Returns an EXIT_* code;
 * not EXIT_OK: err says why.
 */
int shrink_root_cause(const struct trace *t, const char *path, const struct shrink_opts *base,
		      const char *out_cu, const char *crash_cu, int no_diag, struct strbuf *line,
		      struct strbuf *err);

#endif
