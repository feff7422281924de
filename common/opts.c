/*
 * opts.c - the subcommands' option parser (see opts.h).  Owns the rules
 * every command shares: the spellings of an option with a value, typed
 * numbers with range checks, and the wording of a bad option's message.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "opts.h"
#include "strbuf.h"

void opts_init(struct opts *p, int argc, char **argv, struct strbuf *err)
{
	memset(p, 0, sizeof(*p));
	p->argc = argc;
	p->argv = argv;
	p->next = 1;
	p->err = err;
}

int opts_next(struct opts *p)
{
	if (p->failed || p->next >= p->argc)
		return 0;
	p->i = p->next++;
	p->arg = p->argv[p->i];
	return 1;
}

int opts_end(const struct opts *p)
{
	return !strcmp(p->arg, "--");
}

static void fail(struct opts *p, const char *fmt, const char *name, const char *v)
{
	p->failed = 1;
	sb_addf(p->err, fmt, name, v);
}

/* Does the current argument spell one of names?  1 with *name (its
 * spelling, for messages) and *val: the value (NULL when want_val is 0 or
 * for an optional value not given); 0 if not. */
static int match(struct opts *p, const char *names, int want_val, int val_optional,
		 char *name, size_t nname, const char **val)
{
	const char *a = p->arg, *s = names;

	*val = NULL;
	while (*s) {
		size_t n = strcspn(s, "|");
		if (n < nname) {
			memcpy(name, s, n);
			name[n] = 0;
			if (!strcmp(a, name)) {
				if (!want_val || val_optional)
					return 1;
				if (p->next >= p->argc) {
					fail(p, "%s needs a value%s", name, "");
					return 1;
				}
				*val = p->argv[p->next++];
				return 1;
			}
			if (want_val && !strncmp(a, name, n)) {
				if (n > 2 && a[n] == '=') {
					*val = a + n + 1;
					return 1;
				}
				if (n == 2 && name[1] != '-' && a[n] && !val_optional) {
					*val = a + n;   /* -j4 */
					return 1;
				}
			}
		}
		s += n;
		if (*s == '|')
			s++;
	}
	return 0;
}

int opts_flag(struct opts *p, const char *names)
{
	char name[64];
	const char *v;
	if (!match(p, names, 0, 0, name, sizeof(name), &v))
		return 0;
	return 1;
}

int opts_str(struct opts *p, const char *names, const char **val)
{
	char name[64];
	const char *v;
	if (!match(p, names, 1, 0, name, sizeof(name), &v))
		return 0;
	if (v && !*v)
		fail(p, "%s needs a value%s", name, " (it is empty)");
	else if (v)
		*val = v;
	return 1;
}

/* Parse v as a number in [min, max] into *out; 0, or -1 after failing. */
static int parse_num(struct opts *p, const char *name, const char *v, int integer,
		     double min, double max, double *out)
{
	char *end;
	double d;

	errno = 0;
	if (integer) {
		long long l = strtoll(v, &end, 10);
		d = (double)l;
	} else {
		d = strtod(v, &end);
	}
	if (!*v || end == v || *end || errno || isnan(d)) {
		fail(p, "%s: '%s' is not ", name, v);
		sb_addf(p->err, "%s (%g to %g)", integer ? "a whole number" : "a number", min, max);
		return -1;
	}
	if (d < min || d > max) {
		fail(p, "%s: %s is out of range", name, v);
		sb_addf(p->err, " (%g to %g)", min, max);
		return -1;
	}
	*out = d;
	return 0;
}

static int typed(struct opts *p, const char *names, int integer, double min, double max, double *out)
{
	char name[64];
	const char *v;
	if (!match(p, names, 1, 0, name, sizeof(name), &v))
		return 0;
	if (v && parse_num(p, name, v, integer, min, max, out) == 0)
		return 2;
	return 1;
}

int opts_int(struct opts *p, const char *names, int *val, int min, int max)
{
	double d;
	int r = typed(p, names, 1, min, max, &d);
	if (r == 2)
		*val = (int)d;
	return r != 0;
}

int opts_long(struct opts *p, const char *names, long *val, long min, long max)
{
	double d;
	int r = typed(p, names, 1, (double)min, (double)max, &d);
	if (r == 2)
		*val = (long)d;
	return r != 0;
}

int opts_double(struct opts *p, const char *names, double *val, double min, double max)
{
	double d;
	int r = typed(p, names, 0, min, max, &d);
	if (r == 2)
		*val = d;
	return r != 0;
}

/* A whole number as strtod reads it (for an optional value's lookahead). */
static int is_number(const char *s)
{
	char *end;
	if (!*s)
		return 0;
	strtod(s, &end);
	return !*end;
}

/* "-k5": a one-letter spelling of names glued to a number; its value or NULL. */
static const char *glued_number(const struct opts *p, const char *names)
{
	for (const char *n = names; *n; n += strcspn(n, "|"), n += *n == '|') {
		size_t len = strcspn(n, "|");
		if (len == 2 && n[0] == '-' && n[1] != '-' && !strncmp(p->arg, n, 2) && is_number(p->arg + 2))
			return p->arg + 2;
	}
	return NULL;
}

int opts_opt_double(struct opts *p, const char *names, int *given, double *val, double dflt,
		    double min, double max)
{
	char name[64];
	const char *v = glued_number(p, names);
	double d;
	if (v)
		snprintf(name, sizeof(name), "%.2s", p->arg);
	else if (!match(p, names, 1, 1, name, sizeof(name), &v))
		return 0;
	/* "--name 5": a number that is not a file is the value, not an operand */
	else if (!v && p->next < p->argc && is_number(p->argv[p->next]) && access(p->argv[p->next], F_OK) != 0)
		v = p->argv[p->next++];
	*given = 1;
	if (!v)
		*val = dflt;
	else if (parse_num(p, name, v, 0, min, max, &d) == 0)
		*val = d;
	return 1;
}

int opts_unknown(struct opts *p)
{
	if (p->arg[0] != '-' || !p->arg[1])
		return 0;
	fail(p, "unknown option '%s'%s", p->arg, "");
	return 1;
}

void opts_fail(struct opts *p, const char *fmt, ...)
{
	va_list ap;
	p->failed = 1;
	va_start(ap, fmt);
	sb_vaddf(p->err, fmt, ap);
	va_end(ap);
}
