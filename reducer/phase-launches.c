/*
 * phase-launches.c - ddmin over launches (phase.h), the faulting launch
 * fixed.  The full strategy first tries, in one candidate, to drop every
 * launch that shares no buffer with the fault (a backward closure over
 * the buffers that launch parameters point into); the baseline is plain
 * ddmin.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/util.h"
#include "../addr/memmap.h"
#include "cand.h"
#include "ddmin.h"
#include "oracle.h"
#include "phase.h"
#include "report.h"
#include "shrink-opts.h"

/* ddmin over the launches of the candidate, the faulting (last) launch fixed. */
struct launch_dd {
	struct oracle *o;
	const struct cand *base;
	size_t *idx;             /* item index of each launch */
};

static void apply_launch_mask(const void *dv, const unsigned char *mask, size_t n, struct cand *out)
{
	const struct launch_dd *d = dv;
	size_t j = 0;
	out->it = NULL;
	out->n = out->alloc = 0;
	for (size_t i = 0; i < d->base->n; i++) {
		if (j < n && d->idx[j] == i) {
			if (mask[j++]) {
				ALLOC_GROW(out->it, out->n + 1, out->alloc);
				out->it[out->n++] = d->base->it[i];
				out->it[out->n - 1].keep = NULL;
				out->it[out->n - 1].nkeep = 0;
			}
			continue;
		}
		ALLOC_GROW(out->it, out->n + 1, out->alloc);
		out->it[out->n] = d->base->it[i];
		if (d->base->it[i].nkeep) {
			out->it[out->n].keep = xmalloc(d->base->it[i].nkeep * sizeof(struct range));
			memcpy(out->it[out->n].keep, d->base->it[i].keep,
			       d->base->it[i].nkeep * sizeof(struct range));
		}
		out->n++;
	}
}

static int launch_oracle(void *arg, const unsigned char *const *masks, size_t k, size_t n, int *res)
{
	struct launch_dd *d = arg;
	return oracle_test_masks(d->o, d, apply_launch_mask, masks, k, n, res);
}

/* Which launches can matter to the last one: walk backwards, keeping a
 * launch when it points into a buffer that the fault (or a launch already
 * kept) points into.  Returns a 0/1 mask over the nl launches. */
static unsigned char *relevant_launches(const struct cand *c, const size_t *idx, size_t nl)
{
	struct memmap mm = MEMMAP_INIT;
	size_t **bufs = xcalloc(nl, sizeof(*bufs)), *nb = xcalloc(nl, sizeof(size_t));
	unsigned char *rel = xcalloc(nl, 1), *want;
	size_t j = 0;

	for (size_t i = 0; i < c->n && j < nl; i++) {
		const struct tr_rec *r = &c->it[i].rec;
		if (!memmap_feed(&mm, r, (long)i) && r->type == TR_LAUNCH && i == idx[j]) {
			const struct tr_launch *l = &r->u.launch;
			bufs[j] = xcalloc(l->argsize / 8 + 1, sizeof(size_t));
			for (uint32_t off = 0; off + 8 <= l->argsize; off += 8) {
				uint64_t v;
				int dead;
				memcpy(&v, l->args + off, 8);
				struct mm_alloc *a = memmap_arg_word(&mm, l, off, v, &dead);
				if (a)
					bufs[j][nb[j]++] = a->index;
			}
			j++;
		}
	}
	want = xcalloc(mm.n + 1, 1);
	rel[nl - 1] = 1;
	for (size_t k = 0; k < nb[nl - 1]; k++)
		want[bufs[nl - 1][k]] = 1;
	for (size_t l = nl - 1; l-- > 0;) {
		int hit = 0;
		for (size_t k = 0; k < nb[l] && !hit; k++)
			hit = want[bufs[l][k]];
		if (!hit)
			continue;
		rel[l] = 1;
		for (size_t k = 0; k < nb[l]; k++)
			want[bufs[l][k]] = 1;
	}
	for (size_t l = 0; l < nl; l++)
		free(bufs[l]);
	free(bufs);
	free(nb);
	free(want);
	memmap_release(&mm);
	return rel;
}

void phase_launches(struct oracle *o, const struct shrink_opts *opts, struct cand *best)
{
	const char *name = phase_name(PH_LAUNCHES);
	struct launch_dd d = { o, best, NULL };
	size_t nl = 0;
	unsigned char *keep, *fixed;
	struct ddmin_stats st;

	oracle_phase_begin(o, name, best);
	d.idx = xcalloc(best->n + 1, sizeof(size_t));
	for (size_t i = 0; i < best->n; i++)
		if (best->it[i].rec.type == TR_LAUNCH)
			d.idx[nl++] = i;
	if (nl <= 1) {
		free(d.idx);
		oracle_phase_end(o, best, "skipped: one launch");
		return;
	}
	keep = xmalloc(nl);
	fixed = xcalloc(nl, 1);
	memset(keep, 1, nl);
	fixed[nl - 1] = 1;   /* the faulting launch */
	/* dependency-aware first cut: launches that touch no buffer the fault
	 * can depend on (backward closure over shared buffers) go in one try */
	if (opts->strategy == STRATEGY_FULL) {
		unsigned char *rel = relevant_launches(best, d.idx, nl);
		size_t nrel = 0;
		for (size_t i = 0; i < nl; i++)
			nrel += rel[i];
		if (nrel < nl) {
			int r = 0;
			const unsigned char *m = rel;
			if (launch_oracle(&d, &m, 1, nl, &r) == 0 && r)
				memcpy(keep, rel, nl);
			oracle_progress(o, "dropping %zu launches that share no buffer with the fault: %s",
				 nl - nrel, r ? "kept the fault" : "lost it");
		}
		free(rel);
	}
	/* the baseline is plain ddmin; ours splits as wide as the pool */
	ddmin_run_width(keep, fixed, nl, opts->strategy == STRATEGY_FULL ? oracle_dd_width(o) : 2,
			launch_oracle, &d, &st);
	{
		struct cand out;
		apply_launch_mask(&d, keep, nl, &out);
		cand_release(best);
		*best = out;
	}
	free(keep);
	free(fixed);
	free(d.idx);
	if (cand_count(best, TR_LAUNCH) == 1 && !oracle_report(o)->one_launch_seconds)
		oracle_report(o)->one_launch_seconds = oracle_elapsed(o);
	oracle_phase_end(o, best, st.aborted ? "stopped (time limit)" : "1-minimal");
}

