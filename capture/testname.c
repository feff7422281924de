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

/* GPUREDUCE_TEST_NAME, else PYTEST_CURRENT_TEST (NULL if neither is set
 * and not empty): one pass over the environment at every launch, not two
 * getenv(3) calls (issue 26). */
static const char *test_name_env(void)
{
	static const char gr[] = "GPUREDUCE_TEST_NAME=", py[] = "PYTEST_CURRENT_TEST=";
	const char *pytest = NULL;

	for (char **e = environ; e && *e; e++) {
		const char *s = *e;
		if (s[0] == 'G' && !strncmp(s, gr, sizeof(gr) - 1) && s[sizeof(gr) - 1])
			return s + sizeof(gr) - 1;
		if (!pytest && s[0] == 'P' && !strncmp(s, py, sizeof(py) - 1))
			pytest = s + sizeof(py) - 1;
	}
	return pytest;
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
