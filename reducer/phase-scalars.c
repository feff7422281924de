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
#include "shrink-opts.h"

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
/* 1 when parameter p of launch li is one the loop in phase_scalars tries:
 * 4 or 8 bytes, not 0, not a pointer into a buffer */
static int scalar_to_try(struct oracle *o, struct memmap *mm, const struct cand *c, size_t li, uint32_t p)
{
	const struct tr_launch *l = &c->it[li].rec.u.launch;
	uint32_t off = l->params[p].offset, size = l->params[p].size;
	uint64_t v = 0;
	int dead;

	(void)o;
	if (size != 4 && size != 8)
		return 0;
	memcpy(&v, l->args + off, size);
	if (size == 8 && memmap_arg_word(mm, l, off, v, &dead))
		return 0;
	return v != 0;
}

/* A copy of *c whose launch li has parameter p set to v (own bytes). */
static void set_param(struct oracle *o, struct cand *out, const struct cand *c, size_t li, uint32_t p, uint64_t v)
{
	struct tr_launch *cl;
	uint8_t *args;

	cand_copy(out, c);
	cl = &out->it[li].rec.u.launch;
	/* the launch's args point into the source trace: give the copy its
	 * own bytes before changing them */
	args = oracle_keep_bytes(o, cl->args, cl->argsize);
	memcpy(args + cl->params[p].offset, &v, cl->params[p].size);
	cl->args = args;
}

/*
 * The likely outcome first (issue 26), as phase-data.c's zero_run: the
 * zero candidates of the scalar parameters from `from` on, cumulatively
 * (P1 zeroes the first, P2 the first two, ...), as one chain
 * (oracle_test_chain: Pm alone first, then P1..Pm-1 as one batch; after a
 * run that broke, the next as one batch: *top_first).  The
 * longest run P1..Pq that all fault is where the loop below, one
 * parameter after the other, would have arrived: *best becomes Pq and the
 * next parameter to decide is returned; `from` when nothing was decided.
 * *broke_at gets the parameter whose 0 ended the run (no run starts there
 * again; the loop asks for its 1 then).
 */
static uint32_t zero_run(struct oracle *o, struct memmap *mm, struct cand *best, size_t li, uint32_t from,
			 int *changed, uint32_t *broke_at, int *top_first)
{
	uint32_t idx[16], next = from;
	size_t m = 0, q, width = oracle_dd_width(o);
	struct cand cs[16];
	const struct tr_launch *l = &best->it[li].rec.u.launch;

	if (width > 16)
		width = 16;
	/* no wider than the pool */
	for (uint32_t p = from; p < l->nparams && m < width; p++)
		if (scalar_to_try(o, mm, best, li, p))
			idx[m++] = p;
	if (m < 2)
		return from;
	for (size_t j = 0; j < m; j++)
		set_param(o, &cs[j], j ? &cs[j - 1] : best, li, idx[j], 0);
	if (oracle_test_chain(o, cs, m, top_first, best, &q) < 0)
		return from;
	if (q) {
		*changed = 1;
		next = idx[q - 1] + 1;
	}
	if (q < m)
		*broke_at = idx[q];   /* its 0 is known not to fault */
	return next;
}

void phase_scalars(struct oracle *o, const struct shrink_opts *opts, struct cand *best)
{
	size_t li = (size_t)-1;
	int changed = 0, top_first = 1;
	uint32_t broke_at = UINT32_MAX;
	struct memmap mm = MEMMAP_INIT;

	oracle_phase_begin(o, phase_name(PH_SCALARS), best);
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
		const struct tr_launch *l;
		uint64_t v = 0, tries[2];
		int nt = 0;
		struct cand cs[2];

		if (!scalar_to_try(o, &mm, best, li, p))
			continue;
		if (!phase_serial() && p != broke_at) {
			uint32_t next = zero_run(o, &mm, best, li, p, &changed, &broke_at, &top_first);
			if (next != p) {
				p = next - 1;
				continue;
			}
		}
		l = &best->it[li].rec.u.launch;
		memcpy(&v, l->args + l->params[p].offset, l->params[p].size);
		tries[nt++] = 0;
		if (v != 1)
			tries[nt++] = 1;
		for (int t = 0; t < nt; t++)
			set_param(o, &cs[t], best, li, p, tries[t]);
		/* one after the other: 0 most often faults if anything does */
		int won = oracle_test_pick_first(o, cs, nt, best);
		if (won == -2)
			break;
		if (won >= 0)
			changed = 1;
	}
	memmap_release(&mm);
	oracle_phase_end(o, best, changed ? "scalars simplified" : "scalars kept");
}

