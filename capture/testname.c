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

void cap_test_note(struct trace_writer *w)
{
	const char *v = getenv("GPUREDUCE_TEST_NAME");
	if (!v || !*v)
		v = getenv("PYTEST_CURRENT_TEST");
	if (!v || !*v || (have_test && !strncmp(last_test, v, sizeof(last_test) - 1)))
		return;
	snprintf(last_test, sizeof(last_test), "%s", v);
	have_test = 1;
	test_note(w, "test: %s", last_test);
}
