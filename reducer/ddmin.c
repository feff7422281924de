/*
 * ddmin.c - parallel-batch ddmin (see ddmin.h).
 *
 * Each round splits the current set C (minus fixed elements) into g parts
 * and tests, as one batch, every part alone (when g > 2) and every
 * complement.  The first interesting subset (in part order) reduces C to it
 * with g = 2; else the first interesting complement reduces C with
 * g = max(g - 1, 2); else g doubles, until g exceeds |C|.
 *
 * Width w > 2 (ddmin_run_width): made for w parallel workers and for the
 * common case of a few elements that matter.  g starts at w and returns to
 * w after a part wins, so one batch cuts C to a w-th; the parts go out as
 * one batch and the complements only when no part alone is interesting.
 * The result is 1-minimal all the same: the loop ends only when g reached
 * |C| and no complement (single removal) was interesting.
 *
 * When every part of a round was interesting (any part will do: an index
 * array whose every element is out of range), the next round's first part
 * is tested alone before the others.  The outcome is the same (the first
 * interesting part in order wins either way), but a GPU pays for each
 * interesting candidate (a fault costs a worker's new context, created
 * one after another): one instead of `width` per round while the set
 * stays redundant, and one clean round more when it stops being so.
 */
#include <stdlib.h>
#include <string.h>

#include "../common/util.h"
#include "ddmin.h"

size_t ddmin_run(unsigned char *keep, const unsigned char *fixed, size_t n,
		 ddmin_oracle oracle, void *arg, struct ddmin_stats *st)
{
	return ddmin_run_width(keep, fixed, n, 2, oracle, arg, st);
}

static size_t ddmin_core(unsigned char *keep, const unsigned char *fixed, size_t n, size_t width,
			 ddmin_oracle oracle, void *arg, struct ddmin_stats *st, int redundant);

size_t ddmin_run_width(unsigned char *keep, const unsigned char *fixed, size_t n, size_t width,
		       ddmin_oracle oracle, void *arg, struct ddmin_stats *st)
{
	return ddmin_core(keep, fixed, n, width, oracle, arg, st, 0);
}

size_t ddmin_run_redundant(unsigned char *keep, const unsigned char *fixed, size_t n, size_t width,
			   ddmin_oracle oracle, void *arg, struct ddmin_stats *st)
{
	return ddmin_core(keep, fixed, n, width, oracle, arg, st, 1);
}

/* redundant: every part of the last parts batch was interesting (at the
 * start: the caller expects so) */
static size_t ddmin_core(unsigned char *keep, const unsigned char *fixed, size_t n, size_t width,
			 ddmin_oracle oracle, void *arg, struct ddmin_stats *st, int redundant)
{
	size_t *cur = xmalloc((n + 1) * sizeof(size_t));
	size_t w = width > 2 ? width : 2, g = w, m = 0, kept = 0;
	unsigned char **masks = NULL;
	int *res = NULL;
	struct ddmin_stats dummy;

	if (!st)
		st = &dummy;
	memset(st, 0, sizeof(*st));
	for (size_t i = 0; i < n; i++)
		if (keep[i] && !(fixed && fixed[i]))
			cur[m++] = i;
	masks = xcalloc(2 * (n + 2), sizeof(*masks));
	res = xcalloc(2 * (n + 2), sizeof(*res));

	while (m >= 1) {
		size_t parts = g < m ? g : m, k = 0, untested = 0;
		size_t best = (size_t)-1;
		int best_is_part = 0, aborted = 0;

		/* masks: parts first (only when parts > 2: for 2 they equal the
		 * complements), then complements; with width > 2 the parts are a
		 * batch of their own and the complements follow only if no part
		 * was interesting */
		for (int pass = 0; pass < 2 && best == (size_t)-1 && !aborted; pass++) {
			if (pass == 0 && parts <= 2)
				continue;
			for (size_t p = 0; p < parts; p++) {
				size_t lo = m * p / parts, hi = m * (p + 1) / parts;
				unsigned char *mk = xmalloc(n ? n : 1);
				for (size_t i = 0; i < n; i++)
					mk[i] = fixed && fixed[i] && keep[i];
				for (size_t j = 0; j < m; j++) {
					int in_part = j >= lo && j < hi;
					if (pass == 0 ? in_part : !in_part)
						mk[cur[j]] = 1;
				}
				masks[k++] = mk;
			}
			if (w == 2 && pass == 0)
				continue;   /* classic: parts and complements in one batch */
			/* one batch; while the set is redundant, the first part alone
			 * before the others (see the top) */
			for (size_t upto = pass == 0 && redundant && k - untested > 1 ? untested + 1 : k;
			     untested < k && best == (size_t)-1; upto = k) {
				st->batches++;
				st->tests += (long)(upto - untested);
				if (oracle(arg, (const unsigned char *const *)masks + untested, upto - untested, n,
					   res + untested) < 0) {
					aborted = 1;
					break;
				}
				for (size_t i = untested; i < upto && best == (size_t)-1; i++)
					if (res[i]) {
						best = i;
						best_is_part = parts > 2 && i < parts;
					}
				untested = upto;
			}
			if (pass == 0 && untested == k) {
				redundant = 1;
				for (size_t i = 0; i < k; i++)
					redundant &= res[i] != 0;
			}
		}
		if (aborted) {
			st->aborted = 1;
			for (size_t i = 0; i < k; i++)
				free(masks[i]);
			break;
		}
		if (best != (size_t)-1) {
			/* adopt masks[best] as the new current set */
			size_t nm = 0;
			for (size_t j = 0; j < m; j++)
				if (masks[best][cur[j]])
					cur[nm++] = cur[j];
			for (size_t i = 0; i < n; i++)
				if (!(fixed && fixed[i]))
					keep[i] = masks[best][i];
			m = nm;
			g = best_is_part ? w : (parts - 1 > 2 ? parts - 1 : 2);
		} else if (parts >= m) {
			for (size_t i = 0; i < k; i++)
				free(masks[i]);
			break;
		} else {
			g = parts * 2;
		}
		for (size_t i = 0; i < k; i++)
			free(masks[i]);
	}
	for (size_t i = 0; i < n; i++)
		kept += keep[i] != 0;
	free(masks);
	free(res);
	free(cur);
	return kept;
}
