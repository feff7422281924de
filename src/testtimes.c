/*
 * testtimes.c - seconds per test from pytest's durations report (see
 * testtimes.h).  A report line is "0.52s call     tests/t.py::test_x";
 * everything else in the output is ignored.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/strbuf.h"
#include "../common/util.h"
#include "testtimes.h"

void tt_addopts(struct strbuf *env)
{
	const char *old = getenv("PYTEST_ADDOPTS");
	sb_addf(env, "PYTEST_ADDOPTS=%s%s--durations=0 --durations-min=0", old ? old : "",
		old && *old ? " " : "");
}

/* A row per durations line as it is read; merge() sums a test's rows
 * (a suite of thousands of tests reads tens of thousands of lines: no
 * search per line). */
static struct test_time *add_row(struct test_times *tt, const char *id, size_t len)
{
	ALLOC_GROW(tt->t, tt->n + 1, tt->alloc);
	memset(&tt->t[tt->n], 0, sizeof(tt->t[tt->n]));
	tt->t[tt->n].id = xstrndup(id, len);
	return &tt->t[tt->n++];
}

static int by_id(const void *a, const void *b)
{
	return strcmp(((const struct test_time *)a)->id, ((const struct test_time *)b)->id);
}

/* One row per test: the rows sorted by id, a test's rows summed. */
static void merge(struct test_times *tt)
{
	size_t k = 0;
	qsort(tt->t, tt->n, sizeof(*tt->t), by_id);
	for (size_t i = 0; i < tt->n; i++) {
		if (k && !strcmp(tt->t[k - 1].id, tt->t[i].id)) {
			for (int w = 0; w < 2; w++) {
				tt->t[k - 1].secs[w] += tt->t[i].secs[w];
				tt->t[k - 1].have[w] |= tt->t[i].have[w];
			}
			free(tt->t[i].id);
		} else {
			tt->t[k++] = tt->t[i];
		}
	}
	tt->n = k;
}

/* One line: 1 when it is a durations line (*secs, id..id+*idlen). */
static int parse_line(const char *p, size_t n, double *secs, const char **id, size_t *idlen)
{
	static const char *const phases[] = { "setup", "call", "teardown" };
	char *end;
	size_t k = 0;

	while (k < n && (p[k] == ' ' || p[k] == '\t'))
		k++;
	*secs = strtod(p + k, &end);
	if (end == p + k || end >= p + n || *end != 's' || end + 1 >= p + n || end[1] != ' ')
		return 0;
	k = (size_t)(end + 1 - p);
	while (k < n && p[k] == ' ')
		k++;
	for (size_t q = 0; q < 3; q++) {
		size_t l = strlen(phases[q]);
		if (n - k > l && !strncmp(p + k, phases[q], l) && p[k + l] == ' ') {
			k += l;
			while (k < n && p[k] == ' ')
				k++;
			while (n > k && (p[n - 1] == ' ' || p[n - 1] == '\r'))
				n--;
			if (k >= n)
				return 0;
			*id = p + k;
			*idlen = n - k;
			return 1;
		}
	}
	return 0;
}

size_t tt_parse(struct test_times *tt, const char *output, int which)
{
	size_t lines = 0;
	for (const char *p = output; p && *p;) {
		const char *e = strchr(p, '\n');
		size_t n = e ? (size_t)(e - p) : strlen(p), idlen;
		const char *id;
		double s;
		if (parse_line(p, n, &s, &id, &idlen)) {
			struct test_time *t = add_row(tt, id, idlen);
			t->secs[which] += s;
			t->have[which] = 1;
			lines++;
		}
		if (!e)
			break;
		p = e + 1;
	}
	return lines;
}

static int by_hunt_secs(const void *a, const void *b)
{
	const struct test_time *x = *(struct test_time *const *)a, *y = *(struct test_time *const *)b;
	return (y->secs[TT_HUNT] > x->secs[TT_HUNT]) - (y->secs[TT_HUNT] < x->secs[TT_HUNT]);
}

static void ratio(char *buf, size_t n, const struct test_time *t)
{
	if (t->have[TT_PLAIN] && t->have[TT_HUNT] && t->secs[TT_PLAIN] > 0)
		snprintf(buf, n, "%.2fx", t->secs[TT_HUNT] / t->secs[TT_PLAIN]);
	else
		snprintf(buf, n, "-");
}

void tt_print(FILE *f, struct test_times *tt, size_t top)
{
	struct test_time **o;
	double sum[2] = { 0, 0 };
	size_t both = 0;

	merge(tt);   /* a second print finds nothing to merge */
	o = xcalloc(tt->n + 1, sizeof(*o));
	for (size_t i = 0; i < tt->n; i++) {
		o[i] = &tt->t[i];
		if (tt->t[i].have[TT_PLAIN] && tt->t[i].have[TT_HUNT]) {
			sum[TT_PLAIN] += tt->t[i].secs[TT_PLAIN];
			sum[TT_HUNT] += tt->t[i].secs[TT_HUNT];
			both++;
		}
	}
	qsort(o, tt->n, sizeof(*o), by_hunt_secs);
	fprintf(f, "%-10s %-10s %-7s %s\n", "plain s", "capture s", "ratio", "test (pytest's setup + call + teardown)");
	for (size_t i = 0; i < tt->n && (!top || i < top); i++) {
		char r[32], a[32], b[32];
		ratio(r, sizeof(r), o[i]);
		snprintf(a, sizeof(a), o[i]->have[TT_PLAIN] ? "%.3f" : "-", o[i]->secs[TT_PLAIN]);
		snprintf(b, sizeof(b), o[i]->have[TT_HUNT] ? "%.3f" : "-", o[i]->secs[TT_HUNT]);
		fprintf(f, "%-10s %-10s %-7s %s\n", a, b, r, o[i]->id);
	}
	if (top && tt->n > top)
		fprintf(f, "(%zu more)\n", tt->n - top);
	fprintf(f, "%zu test(s) timed in both runs: %.3f s plain, %.3f s under capture%s", both,
		sum[TT_PLAIN], sum[TT_HUNT], both && sum[TT_PLAIN] > 0 ? "" : "\n");
	if (both && sum[TT_PLAIN] > 0)
		fprintf(f, " (%.2fx)\n", sum[TT_HUNT] / sum[TT_PLAIN]);
	free(o);
}

void tt_release(struct test_times *tt)
{
	for (size_t i = 0; i < tt->n; i++)
		free(tt->t[i].id);
	free(tt->t);
	memset(tt, 0, sizeof(*tt));
}
