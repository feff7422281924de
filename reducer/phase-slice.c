/*
 * phase-slice.c - the first cut (phase.h): slice at the fault, and when the
 * faulting launch needs earlier work, the shortest faulting suffix.  Both
 * build on snapshots (oracle_snapshot) written by a replay that stops
 * before a record.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/strbuf.h"
#include "../common/util.h"
#include "../replay/replay.h"
#include "cand.h"
#include "oracle.h"
#include "phase.h"
#include "report.h"
#include "shrink-opts.h"

int phase_slice(struct oracle *o, const struct shrink_opts *opts, struct cand *best, struct cand *plain)
{
	long fault_ev = oracle_fault_event(o);
	const struct trace *snap;
	struct cand c = CAND_INIT;
	long frec = oracle_fault_record(oracle_orig(o));
	int r = 0;

	oracle_phase_begin(o, phase_name(PH_SLICE), best);
	oracle_phase(o)->launches_before = oracle_report(o)->orig_launches;
	for (size_t i = 0; i < oracle_orig(o)->nrec; i++)
		if (oracle_orig(o)->rec[i].type == TR_ALLOC) {
			oracle_phase(o)->buffers_before++;
			oracle_phase(o)->bytes_before += oracle_orig(o)->rec[i].u.alloc.size;
		}
	snap = oracle_snapshot(o, fault_ev, SNAP_REACHABLE);
	if (!snap) {
		oracle_phase_end(o, best, "skipped: snapshot failed");
		sb_reset(oracle_err(o));
		return 0;
	}
	cand_add_all(&c, snap);
	cand_add(&c, oracle_orig(o), (size_t)fault_ev);
	if (frec >= 0)
		cand_add(&c, oracle_orig(o), (size_t)frec);
	/* compute-sanitizer's base run (2-4 s on the H200, and at the end of
	 * a short shrink what it waits for) starts now, on the slice as
	 * captured: the base when the slice is kept, zeros or not; shrink.c
	 * starts it again on another base when not */
	if (oracle_have_san(o))
		oracle_base_start(o, &c, phase_name(PH_SLICE));
	{
		/* the data phase's first questions on c (phase.h), each a
		 * reduction of c: when one faults, c would too, and its own test
		 * is a worker's new context for nothing (zero-copy's slice on
		 * the H200, 2026-12-05: c and two steps of its chain side by
		 * side, three faults in 1.3 s).  The data phase's guess for
		 * every copy at once, bare then with outliers
		 * (phase_data_guess_test), alone first, then the chain's last
		 * step alone
		 * first, then the step before it alone (the copy that matters is
		 * most often the last one copied in), each kept when it faults;
		 * else the rest as one batch (the earlier steps, or the one
		 * copy's fill), c kept untested when one of them faults (the
		 * data phase finds their outcomes in the oracle's cache); c
		 * alone only when none does */
		struct cand plan[PHASE_DATA_PLAN_MAX];
		struct cand *ps[PHASE_DATA_PLAN_MAX + 1];
		int res[PHASE_DATA_PLAN_MAX + 1];
		size_t np = 0, nchain = 0, nb = 0, lone[2], nlone = 0;
		if (phase_wanted(opts->phase_sel, PH_DATA, opts->cut_buffers)) {
			np = phase_data_plan(&c, plan, oracle_dd_width(o), &nchain);
			/* before the plan: the data phase's guess for every copy
			 * at once (phase_data_guess_test), kept when it faults;
			 * *plain then gets the slice as captured */
			r = phase_data_guess_test(o, &c, plain);
		}
		if (nchain)
			lone[nlone++] = nchain - 1;
		if (nchain >= 2)
			lone[nlone++] = nchain - 2;
		for (size_t q = 0; q < nlone && r == 0; q++) {
			ps[0] = &plan[lone[q]];
			r = oracle_test(o, ps, 1, res) < 0 ? -1 : res[0];
			if (r == 1) {
				/* c is the site check's base (phase.h) */
				cand_release(plain);
				*plain = c;
				c = plan[lone[q]];
				plan[lone[q]] = (struct cand)CAND_INIT;
			}
		}
		if (r == 0) {
			for (size_t k = 0; k < np; k++)
				if (k + 1 != nchain && k + 2 != nchain)
					ps[nb++] = &plan[k];
			if (nb && oracle_test(o, ps, nb, res) < 0)
				r = -1;
			for (size_t k = 0; r == 0 && k < nb; k++)
				if (res[k] == 1)
					r = 1;
			if (r == 0) {
				ps[0] = &c;
				r = oracle_test(o, ps, 1, res) < 0 ? -1 : res[0];
			}
		}
		for (size_t k = 0; k < np; k++)
			cand_release(&plan[k]);
	}
	if (r == 1) {
		cand_release(best);
		*best = c;
		oracle_report(o)->one_launch_seconds = oracle_elapsed(o);
		int kept_words = 0;
		for (size_t i = 0; i < best->n; i++)
			kept_words |= best->it[i].rec.type == TR_MEMCPY_H2D && best->it[i].data_mode == DATA_KEEP;
		oracle_phase_end(o, best, !plain->n ? "reduced to one launch" : kept_words ?
				 "reduced to one launch, copies in as zeros but for their pointers and outliers" :
				 "reduced to one launch, copies in as zeros");
		return 1;
	}
	cand_release(&c);
	oracle_phase_end(o, best, "lost the fault: the launch needs earlier work");
	return 0;
}

/* Suffix: the shortest run of launches ending at the fault that faults
 * from a snapshot of everything live before it. */
static int build_suffix(struct oracle *o, long start, long fault_ev, struct cand *out)
{
	const struct trace *snap = oracle_snapshot(o, start, SNAP_ALL);
	long frec = oracle_fault_record(oracle_orig(o));
	if (!snap)
		return -1;
	cand_add_all(out, snap);
	for (long i = start; i <= fault_ev; i++) {
		uint32_t ty = oracle_orig(o)->rec[i].type;
		if (ty == TR_BLOB || ty == TR_PROCESS || ty == TR_DEVICE || ty == TR_FAULT)
			continue;
		cand_add(out, oracle_orig(o), (size_t)i);
	}
	if (frec >= 0)
		cand_add(out, oracle_orig(o), (size_t)frec);
	return 0;
}

int phase_suffix(struct oracle *o, const struct shrink_opts *opts, struct cand *best)
{
	long fault_ev = oracle_fault_event(o);
	long *L = NULL;
	size_t nl = 0, al = 0;
	size_t lo = 0, hi;       /* hi: smallest k known to fault (launches before the fault) */
	struct cand found = CAND_INIT;
	int have = 0;

	oracle_phase_begin(o, phase_name(PH_SUFFIX), best);
	for (long i = 0; i < fault_ev; i++)
		if (oracle_orig(o)->rec[i].type == TR_LAUNCH) {
			ALLOC_GROW(L, nl + 1, al);
			L[nl++] = i;
		}
	/* exponential search for a k that faults, then bisect */
	hi = 0;
	for (size_t k = 1; k <= nl && !have; k = k * 2 > nl && k < nl ? nl : k * 2) {
		struct cand c = CAND_INIT;
		if (build_suffix(o, L[nl - k], fault_ev, &c) < 0) {
			cand_release(&c);
			break;
		}
		int r = oracle_test_one(o, &c);
		if (r == 1) {
			found = c;
			have = 1;
			hi = k;
		} else {
			cand_release(&c);
			lo = k;
			if (r < 0)
				break;
		}
	}
	while (have && hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		struct cand c = CAND_INIT;
		if (build_suffix(o, L[nl - mid], fault_ev, &c) < 0) {
			cand_release(&c);
			break;
		}
		int r = oracle_test_one(o, &c);
		if (r == 1) {
			cand_release(&found);
			found = c;
			hi = mid;
		} else {
			cand_release(&c);
			lo = mid;
			if (r < 0)
				break;
		}
	}
	free(L);
	sb_reset(oracle_err(o));
	if (have) {
		cand_release(best);
		*best = found;
		oracle_phase_end(o, best, "reduced to a suffix");
		return 1;
	}
	oracle_phase_end(o, best, "kept the whole trace");
	return 0;
}

