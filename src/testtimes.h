/*
 * testtimes.h - seconds per test, from pytest's own durations report, for
 * `gpureduce hunt --time-tests -- pytest ...` (issue 28: time per test
 * beside the plain run).  hunt runs the suite twice with
 * `--durations=0 --durations-min=0` added to PYTEST_ADDOPTS: plainly, then
 * under capture; pytest prints each test's setup, call and teardown
 * seconds, which are summed per test id here and shown side by side.
 * Only pytest is understood: another runner's output gives no rows.
 */
#ifndef GPUREDUCE_TESTTIMES_H
#define GPUREDUCE_TESTTIMES_H

#include <stddef.h>
#include <stdio.h>

struct strbuf;

struct test_time {
	char *id;                /* pytest's node id, e.g. tests/test_a.py::test_x[1] */
	double secs[2];          /* TT_PLAIN, TT_HUNT: setup + call + teardown */
	int have[2];
};

enum { TT_PLAIN = 0, TT_HUNT = 1 };

struct test_times {
	struct test_time *t;
	size_t n, alloc;
};

/* "PYTEST_ADDOPTS=" + its current value + the durations options, into env. */
void tt_addopts(struct strbuf *env);
/* Add the durations lines of a run's output (which: TT_PLAIN or TT_HUNT);
 * returns how many lines were read. */
size_t tt_parse(struct test_times *tt, const char *output, int which);
/* The table: the `top` tests slowest under capture (0: all), then totals
 * over the tests both runs timed.  Sums each test's rows first. */
void tt_print(FILE *f, struct test_times *tt, size_t top);
void tt_release(struct test_times *tt);

#endif
