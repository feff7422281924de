/*
 * phase-scalars.c - the faulting launch's scalar parameters (phase.h):
 * 0, then 1, for each 4- or 8-byte parameter that is not a pointer into a
 * buffer.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/util.h"
#include "../addr/memmap.h"
#include "cand.h"
#include "oracle.h"
#include "phase.h"
#include "shrink.h"

/* ---- scalar parameters ---------------------------------------------------- */

/*
 * Try simpler values for the faulting launch's scalar parameters (4- or
 * 8-byte parameters that are not pointers into a buffer): 0, then 1.  A
 * fault that survives n = 0 says the kernel never looked at n -- a missing
 * bounds check, in the kernel's own terms.  Nothing else is tried: another
 * value that still faults (half a wrapped pitch, say) hides the bug's real
 * number from the reader.  Pointer-sized words that point into buffers are
 * never touched.
 */
void phase_scalars(struct oracle *o, const struct shrink_opts *opts, struct cand *best)
{
	size_t li = (size_t)-1;
	int changed = 0;
	struct memmap mm = MEMMAP_INIT;

	oracle_phase_begin(o, "scalars", best);
	for (size_t i = 0; i < best->n; i++) {
		const struct tr_rec *r = &best->it[i].rec;
		if (r->type == TR_ALLOC)
			memmap_add(&mm, r->u.alloc.addr, r->u.alloc.size, r->u.alloc.kind, (long)i);
		else if (r->type == TR_LAUNCH)
			li = i;
	}
	if (li == (size_t)-1) {
		memmap_release(&mm);
		oracle_phase_end(o, best, "skipped: no launch");
		return;
	}
	for (uint32_t p = 0; p < best->it[li].rec.u.launch.nparams && !oracle_stopped(o); p++) {
		const struct tr_launch *l = &best->it[li].rec.u.launch;
		uint32_t off = l->params[p].offset, size = l->params[p].size;
		uint64_t v = 0, tries[2];
		int nt = 0;
		struct cand cs[2];
		int dead;

		if (size != 4 && size != 8)
			continue;
		memcpy(&v, l->args + off, size);
		if (size == 8 && memmap_pointer_word(&mm, v, &dead))
			continue;   /* a pointer */
		if (v == 0)
			continue;
		tries[nt++] = 0;
		if (v != 1)
			tries[nt++] = 1;
		for (int t = 0; t < nt; t++) {
			struct tr_launch *cl;
			cand_copy(&cs[t], best);
			cl = &cs[t].it[li].rec.u.launch;
			/* the launch's args point into the source trace: give the
			 * copy its own bytes before changing them */
			uint8_t *args = oracle_keep_bytes(o, cl->args, cl->argsize);
			memcpy(args + off, &tries[t], size);
			cl->args = args;
		}
		int won = oracle_test_pick_first(o, cs, nt, best);
		if (won == -2)
			break;
		if (won >= 0)
			changed = 1;
	}
	memmap_release(&mm);
	oracle_phase_end(o, best, changed ? "scalars simplified" : "scalars kept");
}

