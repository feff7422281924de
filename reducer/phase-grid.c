/*
 * phase-grid.c - the faulting launch's grid (phase.h): each dimension
 * searched down to the smallest size that still faults, a few evenly
 * spaced sizes per batch.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cand.h"
#include "oracle.h"
#include "phase.h"
#include "shrink-opts.h"

/* ---- grid ------------------------------------------------------------- */

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
	for (int dim = 0; dim < 3 && !oracle_stopped(o); dim++) {
		uint32_t cur = dim == 0 ? best->it[li].rec.u.launch.grid.x :
			       dim == 1 ? best->it[li].rec.u.launch.grid.y : best->it[li].rec.u.launch.grid.z;
		uint32_t lo = 0, hi = cur;     /* hi faults; lo unknown/clean */
		while (hi > 1 && hi - lo > 1) {
			/* one batch: a few evenly spaced sizes below hi */
			uint32_t tries[4];
			int nt = 0;
			struct cand cs[4];
			for (int t = 1; t <= 4; t++) {
				uint32_t v = lo + (uint32_t)((uint64_t)(hi - lo) * (uint64_t)t / 5);
				if (v <= lo || v >= hi || (nt && tries[nt - 1] == v))
					continue;
				tries[nt++] = v;
			}
			if (!nt)
				break;
			for (int t = 0; t < nt; t++) {
				struct tr_launch *l;
				cand_copy(&cs[t], best);
				l = &cs[t].it[li].rec.u.launch;
				if (dim == 0) l->grid.x = tries[t];
				else if (dim == 1) l->grid.y = tries[t];
				else l->grid.z = tries[t];
			}
			int won = oracle_test_pick_first(o, cs, nt, best);
			if (won == -2)
				break;
			if (won >= 0) {
				lo = won ? tries[won - 1] : lo;
				hi = tries[won];
				changed = 1;
			} else {
				lo = tries[nt - 1];
			}
		}
	}
	oracle_phase_end(o, best, changed ? "grid reduced" : "grid kept");
}

