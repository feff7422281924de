/*
 * rate.c - the reproduction-rate policy for flaky faults (see rate.h).
 */
#include "rate.h"

int rate_need(int runs, int orig_faults, int orig_runs)
{
	double orig = orig_runs > 0 ? (double)orig_faults / orig_runs : 1.0;
	int need = (int)(runs * orig * 0.7 + 0.999);
	return need < 1 ? 1 : need;
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
