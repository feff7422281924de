/*
 * rate.c - the reproduction-rate policy for flaky faults (see rate.h).
 */
#include <math.h>

#include "rate.h"

int rate_need(int runs, int orig_faults, int orig_runs)
{
	double orig = orig_runs > 0 ? (double)orig_faults / orig_runs : 1.0;
	int need = (int)(runs * orig * 0.7 + 0.999);
	return need < 1 ? 1 : need;
}

/* log C(n, k) */
static double log_choose(int n, int k)
{
	return lgamma(n + 1.0) - lgamma(k + 1.0) - lgamma(n - k + 1.0);
}

double rate_drop_p(int faults, int runs, int orig_faults, int orig_runs)
{
	int total = runs + orig_runs, hits = faults + orig_faults;
	double p = 0, den;

	if (runs <= 0 || orig_runs <= 0 || faults < 0 || orig_faults < 0 || faults > runs || orig_faults > orig_runs)
		return 1.0;
	den = log_choose(total, runs);
	/* x of the `hits` faults among the reduced trace's runs, x <= faults */
	for (int x = 0; x <= faults; x++) {
		if (hits - x > orig_runs || runs - x > total - hits)
			continue;
		p += exp(log_choose(hits, x) + log_choose(total - hits, runs - x) - den);
	}
	return p > 1.0 ? 1.0 : p;
}

int rate_dropped(int faults, int runs, int orig_faults, int orig_runs)
{
	if (faults >= rate_need(runs, orig_faults, orig_runs))
		return 0;
	if (orig_runs <= 0 || orig_faults >= orig_runs)
		return 1;   /* a steady original */
	return rate_drop_p(faults, runs, orig_faults, orig_runs) < 0.05;
}

int rate_pick(const int *got, int n, int need, int current)
{
	int pick = -1;

	for (int q = 0; q < n; q++)
		if (got[q] >= need)
			return q;
	for (int q = 0; q < n; q++)
		if (got[q] > current && (pick < 0 || got[q] > got[pick]))
			pick = q;
	return pick;
}
