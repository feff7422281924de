/*
 * testname.c - which test a launch belongs to, for `gpureduce hunt --
 * pytest ...` (issue 28): when PYTEST_CURRENT_TEST (pytest sets it through
 * os.environ, i.e. putenv, before each test's setup, call and teardown)
 * differs from the value seen at the previous launch, a NOTE "test: VALUE"
 * is written before the launch (docs/FORMAT.md, 1.4).  hunt names the
 * test of a finding by the last such note before its launch
 * (reducer/hunt.c, hunt_test_of).  GPUREDUCE_TEST_NAME, when set, is read
 * instead (other runners can name their tests the same way).  Called by
 * inject.c with its lock held; getenv only, no Python.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "capture.h"

static char last_test[1024];
static int have_test;

/* A NOTE without carry (a test name belongs to its own segment). */
static void test_note(struct trace_writer *w, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	ckpt_vnote(w, 0, fmt, ap);
	va_end(ap);
}

/*
 * GPUREDUCE_TEST_NAME, else PYTEST_CURRENT_TEST (NULL if neither is set
 * and not empty).  A pass over the environment touches every string in it
 * (on the H200's training loop "test/tensor/source records" cost 0.61 us a
 * launch, most of it this), so the last pass is remembered: where the two
 * variables' slots were, and what bounds the array.  setenv/putenv put a
 * new string in a variable's slot, adding one grows the array (a new
 * environ, or a string where its terminator was), removing one moves the
 * later slots down (its last slot empties): while none of that shows, the
 * answer is the string in the same slot, and the caller compares its text.
 * (An edit inside a string in place is seen through that text; one that
 * names the variable anew is the one case left out.)
 */
static struct {
	char **env;         /* environ at the last pass */
	size_t n;           /* its entries */
	char *last;         /* environ[n - 1] then */
	long gi, pi;        /* the slots of GPUREDUCE_TEST_NAME, PYTEST_CURRENT_TEST, or -1 */
	char *g, *p;        /* the strings in them then */
} scan;

static const char gr[] = "GPUREDUCE_TEST_NAME=", py[] = "PYTEST_CURRENT_TEST=";

static int env_unchanged(void)
{
	char **e = environ;
	return e && e == scan.env && !e[scan.n] && (!scan.n || e[scan.n - 1] == scan.last) &&
	       (scan.gi < 0 || e[scan.gi] == scan.g) && (scan.pi < 0 || e[scan.pi] == scan.p);
}

static const char *env_value(void)
{
	if (scan.gi >= 0 && scan.g[sizeof(gr) - 1])
		return scan.g + sizeof(gr) - 1;
	return scan.pi >= 0 ? scan.p + sizeof(py) - 1 : NULL;
}

static const char *test_name_env(void)
{
	size_t n = 0;

	if (env_unchanged())
		return env_value();
	scan.env = environ;
	scan.gi = scan.pi = -1;
	for (char **e = environ; e && *e; e++, n++) {
		const char *s = *e;
		if (scan.gi < 0 && s[0] == 'G' && !strncmp(s, gr, sizeof(gr) - 1)) {
			scan.gi = (long)n;
			scan.g = *e;
		}
		if (scan.pi < 0 && s[0] == 'P' && !strncmp(s, py, sizeof(py) - 1)) {
			scan.pi = (long)n;
			scan.p = *e;
		}
	}
	scan.n = n;
	scan.last = n ? environ[n - 1] : NULL;
	return env_value();
}

void cap_test_note(struct trace_writer *w)
{
	const char *v = test_name_env();
	if (!v || !*v || (have_test && !strncmp(last_test, v, sizeof(last_test) - 1)))
		return;
	snprintf(last_test, sizeof(last_test), "%s", v);
	have_test = 1;
	test_note(w, "test: %s", last_test);
}
