/*
 * opts.h - the one option parser every subcommand (src/cmd-*.c) uses.
 *
 * An option that takes a value accepts `--name=V` and `--name V` (and for a
 * one-letter name `-jV` and `-j V`); numbers are typed and range-checked,
 * and a bad value fails with one line naming the option, e.g.
 * "--time-limit: '1O' is not a number (0 to 1e+09)".  Library code: it
 * prints nothing; the command prints p->err and exits 2.
 *
 *   struct opts p;
 *   opts_init(&p, argc, argv, &err);
 *   while (opts_next(&p)) {
 *           if (opts_int(&p, "-j|--jobs", &jobs, 1, 64)) ;
 *           else if (opts_flag(&p, "-q|--quiet")) quiet = 1;
 *           else if (opts_unknown(&p)) ;            (fails: "unknown option")
 *           else path = p.arg;                      (an operand)
 *   }
 *   if (p.failed) { cmd_error(..., "%s", err.buf); return EXIT_USAGE; }
 *
 * Each matcher returns 1 when the current argument is its option (value
 * good or not: a bad one sets p->failed and p->err, and opts_next then
 * stops), 0 when it is not.  NAMES is a '|'-separated list of spellings.
 */
#ifndef GPUREDUCE_OPTS_H
#define GPUREDUCE_OPTS_H

struct strbuf;

struct opts {
	int argc;
	char **argv;
	int i;                  /* index of the current argument */
	int next;               /* index opts_next moves to */
	const char *arg;        /* argv[i] */
	int failed;             /* a bad option or value; err says which */
	struct strbuf *err;
};

void opts_init(struct opts *p, int argc, char **argv, struct strbuf *err);
/* Move to the next argument (argv[1] first).  0 when none is left or a
 * matcher failed. */
int opts_next(struct opts *p);
/* "--": the arguments after it are operands (p->next indexes the first). */
int opts_end(const struct opts *p);
/* An option without a value. */
int opts_flag(struct opts *p, const char *names);
/* An option with a string value (*val points into argv). */
int opts_str(struct opts *p, const char *names, const char **val);
/* Typed values, min..max inclusive. */
int opts_int(struct opts *p, const char *names, int *val, int min, int max);
int opts_long(struct opts *p, const char *names, long *val, long min, long max);
int opts_double(struct opts *p, const char *names, double *val, double min, double max);
/* "--name" alone sets *val to dflt; "--name=V", "-nV" and "--name V" parse
 * V (the last only when V is a number and no file of that name exists: the
 * next argument may be an operand).  *given is set to 1 either way. */
int opts_opt_double(struct opts *p, const char *names, int *given, double *val, double dflt,
		    double min, double max);
/* Fail with a message of the command's own (a value it does not take,
 * an operand too many). */
void opts_fail(struct opts *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* An argument that starts with '-' (not "-" alone) and matched nothing:
 * fails with "unknown option". */
int opts_unknown(struct opts *p);

#endif
