/*
 * test_ddmin.c - the ddmin engine against scripted oracles, checked with a
 * naive reference (try removing each element one at a time until no single
 * removal keeps the property: the result must be 1-minimal).
 */
#include <stdlib.h>
#include <string.h>

#include "../../reducer/ddmin.h"
#include "unit.h"

struct script {
	size_t need[8];          /* elements that must all be kept */
	size_t nneed;
	size_t any_of[2];        /* and at least one of these (if nany) */
	size_t nany;
	long calls;
	int fail_after;          /* abort after this many batches (0: never) */
	long batches;
};

static int interesting(const struct script *s, const unsigned char *m)
{
	for (size_t i = 0; i < s->nneed; i++)
		if (!m[s->need[i]])
			return 0;
	if (s->nany && !m[s->any_of[0]] && !m[s->any_of[1]])
		return 0;
	return 1;
}

static int oracle(void *arg, const unsigned char *const *masks, size_t k, size_t n, int *out)
{
	struct script *s = arg;
	(void)n;
	if (s->fail_after && ++s->batches > s->fail_after)
		return -1;
	for (size_t i = 0; i < k; i++) {
		out[i] = interesting(s, masks[i]);
		s->calls++;
	}
	return 0;
}

static int one_minimal_fixed(const struct script *s, const unsigned char *keep, size_t n,
			     const unsigned char *fixed)
{
	unsigned char *m = malloc(n);
	int ok = interesting(s, keep);
	for (size_t i = 0; ok && i < n; i++) {
		if (!keep[i] || (fixed && fixed[i]))
			continue;
		memcpy(m, keep, n);
		m[i] = 0;
		if (interesting(s, m))
			ok = 0;
	}
	free(m);
	return ok;
}

static int one_minimal(const struct script *s, const unsigned char *keep, size_t n)
{
	return one_minimal_fixed(s, keep, n, NULL);
}

UNIT_TEST(ddmin_single_element)
{
	struct script s = { { 37 }, 1, { 0, 0 }, 0, 0, 0, 0 };
	unsigned char keep[100];
	struct ddmin_stats st;
	memset(keep, 1, sizeof(keep));
	CHECK_EQ_U(ddmin_run(keep, NULL, 100, oracle, &s, &st), 1);
	CHECK(keep[37] == 1);
	CHECK(one_minimal(&s, keep, 100));
	CHECK(st.tests < 100);   /* logarithmic-ish, not linear */
}

UNIT_TEST(ddmin_pairs_and_fixed)
{
	struct script s = { { 3, 90, 91 }, 3, { 10, 50 }, 2, 0, 0, 0 };
	unsigned char keep[120], fixed[120];
	memset(keep, 1, sizeof(keep));
	memset(fixed, 0, sizeof(fixed));
	fixed[119] = 1;
	size_t kept = ddmin_run(keep, fixed, 120, oracle, &s, NULL);
	CHECK(keep[119] == 1);
	CHECK(keep[3] && keep[90] && keep[91]);
	CHECK(keep[10] != keep[50]);          /* exactly one of the pair */
	CHECK_EQ_U(kept, 5);
	CHECK(one_minimal_fixed(&s, keep, 120, fixed));
}

UNIT_TEST(ddmin_everything_needed)
{
	struct script s = { { 0, 1, 2, 3 }, 4, { 0, 0 }, 0, 0, 0, 0 };
	unsigned char keep[4] = { 1, 1, 1, 1 };
	CHECK_EQ_U(ddmin_run(keep, NULL, 4, oracle, &s, NULL), 4);
}

UNIT_TEST(ddmin_abort_keeps_last_good)
{
	struct script s = { { 5 }, 1, { 0, 0 }, 0, 0, 2, 0 };
	unsigned char keep[64];
	struct ddmin_stats st;
	memset(keep, 1, sizeof(keep));
	ddmin_run(keep, NULL, 64, oracle, &s, &st);
	CHECK(st.aborted);
	CHECK(keep[5] == 1);
	CHECK(interesting(&s, keep));         /* never left in a failing state */
}

UNIT_TEST(ddmin_randomized_vs_reference)
{
	unsigned seed = 12345;
	for (int round = 0; round < 200; round++) {
		struct script s;
		size_t n = 1 + (seed = seed * 1103515245 + 12345) % 60;
		unsigned char keep[64];
		memset(&s, 0, sizeof(s));
		s.nneed = (seed = seed * 1103515245 + 12345) % 4;
		for (size_t i = 0; i < s.nneed; i++)
			s.need[i] = (seed = seed * 1103515245 + 12345) % n;
		memset(keep, 1, n);
		ddmin_run(keep, NULL, n, oracle, &s, NULL);
		CHECK(one_minimal(&s, keep, n));
	}
}

/* The parallel-width variant: same guarantees, fewer batches for the
 * common case of one element that matters. */
UNIT_TEST(ddmin_width_single_element_fewer_batches)
{
	struct script s = { { 3001 }, 1, { 0, 0 }, 0, 0, 0, 0 };
	static unsigned char keep[4096];
	struct ddmin_stats classic, wide;
	memset(keep, 1, sizeof(keep));
	CHECK_EQ_U(ddmin_run(keep, NULL, 4096, oracle, &s, &classic), 1);
	CHECK(keep[3001] == 1);
	memset(keep, 1, sizeof(keep));
	s.calls = 0;
	CHECK_EQ_U(ddmin_run_width(keep, NULL, 4096, 8, oracle, &s, &wide), 1);
	CHECK(keep[3001] == 1);
	CHECK(one_minimal(&s, keep, 4096));
	/* log8(4096) = 4 part batches, then the last complement check */
	CHECK(wide.batches <= 6);
	CHECK(wide.batches * 2 <= classic.batches);
}

UNIT_TEST(ddmin_width_pairs_and_fixed)
{
	struct script s = { { 3, 90, 91 }, 3, { 10, 50 }, 2, 0, 0, 0 };
	unsigned char keep[120], fixed[120];
	memset(keep, 1, sizeof(keep));
	memset(fixed, 0, sizeof(fixed));
	fixed[119] = 1;
	size_t kept = ddmin_run_width(keep, fixed, 120, 4, oracle, &s, NULL);
	CHECK(keep[119] == 1);
	CHECK(keep[3] && keep[90] && keep[91]);
	CHECK(keep[10] != keep[50]);
	CHECK_EQ_U(kept, 5);
	CHECK(one_minimal_fixed(&s, keep, 120, fixed));
}

/* A random rule for the width tests: n elements (1..60), a width (3..8)
 * and up to 3 needed elements, from *seed. */
static void random_script(unsigned *seed, struct script *s, size_t *n, size_t *w)
{
	*n = 1 + (*seed = *seed * 1103515245 + 12345) % 60;
	*w = 3 + (*seed = *seed * 1103515245 + 12345) % 6;
	memset(s, 0, sizeof(*s));
	s->nneed = (*seed = *seed * 1103515245 + 12345) % 4;
	for (size_t i = 0; i < s->nneed; i++)
		s->need[i] = (*seed = *seed * 1103515245 + 12345) % *n;
}

UNIT_TEST(ddmin_width_randomized_one_minimal)
{
	unsigned seed = 777;
	for (int round = 0; round < 300; round++) {
		struct script s;
		size_t n, w;
		unsigned char keep[64];
		random_script(&seed, &s, &n, &w);
		memset(keep, 1, n);
		ddmin_run_width(keep, NULL, n, w, oracle, &s, NULL);
		CHECK(one_minimal(&s, keep, n));
	}
}

UNIT_TEST(ddmin_width_abort_keeps_last_good)
{
	struct script s = { { 5 }, 1, { 0, 0 }, 0, 0, 2, 0 };
	unsigned char keep[64];
	struct ddmin_stats st;
	memset(keep, 1, sizeof(keep));
	ddmin_run_width(keep, NULL, 64, 4, oracle, &s, &st);
	CHECK(st.aborted);
	CHECK(keep[5] == 1);
	CHECK(interesting(&s, keep));
}

/* "any element of A will do": every part of a round is interesting while
 * the set is redundant.  The first part is then tested alone first: the
 * same result (the first element of A, as first-part-wins gives), with
 * one interesting test per round instead of one per part (each is a
 * fault, a worker's new context, on a GPU). */
struct anyof {
	const unsigned char *in_a;
	long interesting, tests, batches;
};

static int anyof_oracle(void *arg, const unsigned char *const *masks, size_t k, size_t n, int *out)
{
	struct anyof *s = arg;
	s->batches++;
	for (size_t i = 0; i < k; i++) {
		out[i] = 0;
		for (size_t j = 0; j < n && !out[i]; j++)
			out[i] = masks[i][j] && s->in_a[j];
		s->interesting += out[i];
		s->tests++;
	}
	return 0;
}

UNIT_TEST(ddmin_width_redundant_set_first_part_alone)
{
	enum { N = 4096, W = 8 };
	static unsigned char keep[N], in_a[N];
	unsigned rng = 12345;

	for (int round = 0; round < 6; round++) {
		struct anyof s = { in_a, 0, 0, 0 };
		size_t first = (size_t)-1, kept = 0, at = (size_t)-1;
		/* round 0: every element will do; then random sets, sparse to dense */
		for (size_t i = 0; i < N; i++) {
			rng = rng * 1103515245u + 12345u;
			in_a[i] = round == 0 || (rng >> 16) % 64 < (unsigned)(1 << round) ||
				  (round == 1 && i == N - 1);
			if (in_a[i] && first == (size_t)-1)
				first = i;
		}
		memset(keep, 1, N);
		ddmin_run_width(keep, NULL, N, W, anyof_oracle, &s, NULL);
		for (size_t i = 0; i < N; i++)
			if (keep[i]) {
				kept++;
				at = i;
			}
		CHECK_EQ_U(kept, 1);
		CHECK_EQ_U(at, first);
		if (round == 0) {
			/* 4096 -> 512 -> 64 -> 8 -> 1, then the empty complement:
			 * 8 interesting in the first round, one in each after it */
			CHECK(s.interesting <= W + 4);
		}
	}
}

/* ddmin_run_redundant: a set the caller picked because each element looks
 * like the bug (tied maxima of an index table) goes out first part alone
 * from the first round: the same result as ddmin_run_width in every rule
 * (random needs, and "any of A"), and when any element will do, one
 * interesting test a round from the start (not W in the first). */
UNIT_TEST(ddmin_redundant_same_result_fewer_interesting)
{
	unsigned seed = 4242;
	for (int round = 0; round < 300; round++) {
		struct script s;
		size_t n, w;
		unsigned char a[64], b[64];
		random_script(&seed, &s, &n, &w);
		memset(a, 1, n);
		memset(b, 1, n);
		ddmin_run_width(a, NULL, n, w, oracle, &s, NULL);
		ddmin_run_redundant(b, NULL, n, w, oracle, &s, NULL);
		CHECK(!memcmp(a, b, n));
		CHECK(one_minimal(&s, b, n));
	}
	{
		enum { N = 64, W = 8 };
		static unsigned char keep[N], in_a[N];
		struct anyof wide = { in_a, 0, 0, 0 }, red = { in_a, 0, 0, 0 };
		memset(in_a, 1, N);
		memset(keep, 1, N);
		ddmin_run_width(keep, NULL, N, W, anyof_oracle, &wide, NULL);
		CHECK(keep[0] == 1);
		memset(keep, 1, N);
		ddmin_run_redundant(keep, NULL, N, W, anyof_oracle, &red, NULL);
		CHECK(keep[0] == 1);
		/* 64 -> 8 -> 1: W + 1 interesting tests, against 1 + 1 */
		CHECK(red.interesting < wide.interesting);
		CHECK(red.interesting <= 3);
	}
}
