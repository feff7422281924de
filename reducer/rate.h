/*
 * rate.h - judging a flaky fault's reproduction rate: how many faults in
 * N runs count as "near the original's rate", and which of several
 * earlier reduction states to fall back to when the reduced trace's rate
 * has dropped.  Pure functions, so the policy is unit-tested apart from
 * the replay workers that measure the rates.
 */
#ifndef GPUREDUCE_RATE_H
#define GPUREDUCE_RATE_H

/* Faults needed in `runs` runs for a rate near the original's
 * (orig_faults of orig_runs): at least 70 % of it, and at least 1. */
int rate_need(int runs, int orig_faults, int orig_runs);

/* 1 when `faults` in `runs` runs of the reduced trace is a drop from the
 * original's orig_faults of orig_runs that the back-offs should act on:
 * below rate_need, and, when the original was itself flaky (a race), a
 * drop that chance explains less than once in twenty (Fisher's exact
 * test, one-sided: the rates of two small samples of a race differ by
 * that much often, and each check costs runs that fault).  A steady
 * original keeps the plain 70 % rule: a deterministic fault must not
 * become a matter of luck. */
int rate_dropped(int faults, int runs, int orig_faults, int orig_runs);

/* The one-sided p-value of Fisher's exact test: the chance of `faults`
 * or fewer in `runs` runs, given orig_faults in orig_runs and the same
 * rate behind both (the hypergeometric tail). */
double rate_drop_p(int faults, int runs, int orig_faults, int orig_runs);

/* Which state to fall back to.  got[0..n-1] are the faults each state
 * (latest first) had in the same number of runs; `current` is what the
 * reduced trace had.  Returns the first (latest) state with got >= need,
 * else the one that faulted most if it beat `current` (the latest among
 * equals), else -1: keep the reduced trace. */
int rate_pick(const int *got, int n, int need, int current);

#endif
