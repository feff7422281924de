/*
 * side-repro.h - a repro written beside the main one, from a trace a
 * command cut for it: hunt's finding (cmd-hunt.c) and shrink's root cause
 * (cmd-shrink-root.c).  Both reduce the cut, diagnose the reduced trace,
 * emit repro.cu with a header of their own, and write repro.cu/.yaml; the
 * steps live here once.
 */
#ifndef GPUREDUCE_SIDE_REPRO_H
#define GPUREDUCE_SIDE_REPRO_H

struct shrink_opts;
struct shrink_report;
struct strbuf;
struct trace;

struct side_repro {
	const struct trace *bt;      /* the cut to reduce (open) */
	const char *trace_path;      /* the user's trace, named in repro.yaml */
	const char *cu, *bin, *yml;  /* the outputs (bin: the reduced trace) */
	const char *command;         /* for repro.yaml, e.g. "gpureduce hunt" */
	int no_diag;                 /* --no-diagnose */
	/* After diagnosis, before repro.cu is written: puts the command's own
	 * header on src (diag: the diagnosis, or NULL). */
	void (*label)(void *arg, const char *diag, struct strbuf *src);
	void *arg;
};

/*
 * Reduce s->bt with o (o->workdir and o->guard set by the caller; a
 * non-NULL o->check_repro is replaced by the repro.cu check of this
 * trace), diagnose, emit and write s->cu and s->yml.  rep is filled
 * (the caller frees rep->final_sanitizer).  Returns EXIT_OK, or an EXIT_*
 * code with err.
 */
int side_repro_run(const struct side_repro *s, struct shrink_opts *o, struct shrink_report *rep,
		   struct strbuf *err);

/* Append YAML text to the document in file yml (its closing "..." dropped
 * first).  0, or -1 with err. */
int side_repro_yaml_append(const char *yml, const char *text, struct strbuf *err);

#endif
