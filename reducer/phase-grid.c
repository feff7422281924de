/*
 * phase-grid.c - the faulting launch's grid (phase.h): each dimension
 * searched down to the smallest size that still faults, one size a round.
 *
 * What a candidate costs on a GPU is mostly whether it faults: a fault
 * kills its worker's context and a new worker must be started, and
 * contexts are created one after another (~0.3 s each on the H200); a
 * clean run keeps its worker.  Many faults need only one block (a bad
 * pointer or scalar reaches every block), and then the even search faults
 * at every size it tries: 12-20 faulting candidates, 4-6 s of a 10-15 s
 * shrink.  So the one-block grid is tried first, alone, and each
 * dimension's 1 before its search: one faulting candidate when that is
 * enough, one clean (cheap) run when not.
 *
 * The search itself tries one size a round, 3/10 of the way up from the
 * largest size known clean to the smallest known to fault: a fault costs
 * about four clean rounds (~0.3 s against ~0.07 on the H200), so the probe
 * sits where a clean answer is likelier, and each answer still narrows the
 * range.  Modelled with those prices over fault thresholds spread evenly
 * or log-evenly in grids of 64 to 4096 blocks, a dimension's search costs
 * 1.0-2.2 s where four evenly spaced sizes a round cost 1.5-3.9 s (one
 * probe at the middle: 1.2-2.9 s).
 *
 * The search ends within 1/PRECISION of the size that faults: exact below
 * PRECISION blocks, and a grid of two million blocks whose last 16 fault
 * (int32-overflow) is not walked to its last block: clean probes narrow
 * the range by 3/10 each, 37 rounds of the 41 grid candidates on the H200.
 * Within 1/1024 it takes 19; a repro with 2097153 blocks reads no better
 * than one with 2097168.
 */
#define PROBE_TENTHS 3
#define PRECISION 1024
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cand.h"
#include "oracle.h"
#include "phase.h"
#include "shrink-opts.h"

/* ---- grid ------------------------------------------------------------- */

static uint32_t grid_dim(const struct tr_launch *l, int dim)
{
	return dim == 0 ? l->grid.x : dim == 1 ? l->grid.y : l->grid.z;
}

static void set_grid_dim(struct tr_launch *l, int dim, uint32_t v)
{
	if (dim == 0) l->grid.x = v;
	else if (dim == 1) l->grid.y = v;
	else l->grid.z = v;
}

/* Try launch li of best with the dimensions in `dims` (bit d: dimension
 * d) set to 1.  1 when it faulted and became best, 0 when not, -2 when
 * testing stopped. */
static int try_ones(struct oracle *o, struct cand *best, size_t li, unsigned dims)
{
	struct cand c;
	int won;
	cand_copy(&c, best);
	for (int d = 0; d < 3; d++)
		if (dims & (1u << d))
			set_grid_dim(&c.it[li].rec.u.launch, d, 1);
	won = oracle_test_pick_first(o, &c, 1, best);
	return won == -2 ? -2 : won == 0;
}

void phase_grid(struct oracle *o, const struct shrink_opts *opts, struct cand *best)
{
	size_t li = (size_t)-1;
	int changed = 0;

	oracle_phase_begin(o, phase_name(PH_GRID), best);
	for (size_t i = best->n; i-- > 0;)
		if (best->it[i].rec.type == TR_LAUNCH) {
			li = i;
			break;
		}
	if (li == (size_t)-1) {
		oracle_phase_end(o, best, "skipped: no launch");
		return;
	}
	{
		const struct tr_launch *l = &best->it[li].rec.u.launch;
		if ((uint64_t)l->grid.x * l->grid.y * l->grid.z > 1) {
			int r = try_ones(o, best, li, 7u);
			if (r == -2 || r == 1) {
				oracle_phase_end(o, best, r == 1 ? "grid reduced (one block)" : "grid kept");
				return;
			}
		}
	}
	for (int dim = 0; dim < 3 && !oracle_stopped(o); dim++) {
		uint32_t cur = grid_dim(&best->it[li].rec.u.launch, dim);
		uint32_t lo = 0, hi = cur;     /* hi faults; lo unknown/clean */
		int others = 0;                /* the other dimensions are not all 1 */
		for (int d = 0; d < 3; d++)
			others |= d != dim && grid_dim(&best->it[li].rec.u.launch, d) > 1;
		if (cur > 1 && others) {
			/* this dimension at 1 (with all at 1 already clean) */
			int r = try_ones(o, best, li, 1u << dim);
			if (r == -2)
				break;
			if (r == 1) {
				changed = 1;
				continue;
			}
			lo = 1;
		} else if (cur > 1) {
			lo = 1;                /* the one-block grid ran clean */
		}
		while (hi > 1 && hi - lo > 1 && hi - lo > hi / PRECISION) {
			/* one size, PROBE_TENTHS of the way up from lo (see the top) */
			uint32_t v = lo + (uint32_t)((uint64_t)(hi - lo) * PROBE_TENTHS / 10);
			struct cand c;
			int won;
			if (v <= lo)
				v = lo + 1;
			if (v >= hi)
				break;
			cand_copy(&c, best);
			set_grid_dim(&c.it[li].rec.u.launch, dim, v);
			won = oracle_test_pick_first(o, &c, 1, best);
			if (won == -2)
				break;
			if (won == 0) {
				hi = v;
				changed = 1;
			} else {
				lo = v;
			}
		}
	}
	oracle_phase_end(o, best, changed ? "grid reduced" : "grid kept");
}

