/*
 * ddmin.h - delta debugging (Zeller's ddmin) over a set of n elements,
 * with candidates tested in parallel batches.
 *
 * The engine knows nothing about traces or GPUs: the caller supplies a
 * batch oracle that, given k candidate subsets (each a 0/1 keep-mask over
 * the n elements), says which are "interesting" (still fault the same way).
 * All subsets of one round go out as one batch, so a pool of warm workers
 * tests them side by side; the first interesting one in a fixed order wins,
 * which keeps the result independent of timing.
 */
#ifndef GPUREDUCE_DDMIN_H
#define GPUREDUCE_DDMIN_H

#include <stddef.h>

/* Test k masks (each n bytes, 1 = keep); write 1/0 per mask to interesting.
 * Return 0, or -1 to abort the reduction (time limit, infrastructure). */
typedef int (*ddmin_oracle)(void *arg, const unsigned char *const *masks, size_t k, size_t n,
			    int *interesting);

struct ddmin_stats {
	long tests;        /* masks tested */
	long batches;
	int aborted;       /* the oracle returned -1 */
};

/*
 * Minimise `keep` (n bytes, in/out; elements with keep[i]==0 are never
 * re-added).  `fixed` (may be NULL) marks elements that must stay.  The
 * starting set is assumed interesting.  Returns the number kept.
 */
size_t ddmin_run(unsigned char *keep, const unsigned char *fixed, size_t n,
		 ddmin_oracle oracle, void *arg, struct ddmin_stats *st);
/* The same with a parallel width (>= 2; 2 is ddmin_run): rounds split the
 * set into `width` parts and test them as one batch before any complement,
 * so a few relevant elements are found in log_width(n) batches. */
size_t ddmin_run_width(unsigned char *keep, const unsigned char *fixed, size_t n, size_t width,
		       ddmin_oracle oracle, void *arg, struct ddmin_stats *st);
/* ddmin_run_width on a set the caller expects to be redundant (any part
 * will do: elements picked because each looks like the bug): the first
 * round's first part goes out alone, as after a round in which every part
 * was interesting (ddmin.c).  The outcome is the same; the cost differs. */
size_t ddmin_run_redundant(unsigned char *keep, const unsigned char *fixed, size_t n, size_t width,
			   ddmin_oracle oracle, void *arg, struct ddmin_stats *st);

#endif
