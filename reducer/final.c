/*
 * final.c - the final confirmation and the repro.cu check (see final.h).
 * Every run goes through the oracle; the states to back off to are the
 * ones shrink.c saved after each phase.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/interrupt.h"
#include "../common/strbuf.h"
#include "../common/util.h"
#include "../addr/place.h"
#include "../replay/replay.h"
#include "cand.h"
#include "final.h"
#include "oracle.h"
#include "rate.h"
#include "shrink.h"

/* The report's relocation coverage, from a run of the final trace. */
static void note_relocation(struct shrink_report *rep, const struct replay_result *r)
{
	rep->rel_have = 1;
	rep->rel_ptr_words = r->ptr_words;
	rep->rel_stray_words = r->stray_words;
	rep->rel_tmaps_encoded = r->tmaps_encoded;
	rep->rel_tmaps_word0 = r->tmaps_word0;
}

/* Write c to out_bin and run it `runs` times: *faults gets how many
 * faulted with the signature.  0, or -1 (oracle_err(o) says why). */
static int confirm_guard(struct oracle *o, struct shrink_states *ss, struct cand *c, const char *out_bin,
			 int *faults, int runs, int guard)
{
	struct replay_result first;
	struct replay_opts ro = REPLAY_OPTS_INIT;
	ro.guard = guard;
	if (cand_write(c, out_bin, oracle_err(o)) < 0)
		return -1;
	/* --keep-going: runs that lost their workers get a fresh pool (twice
	 * at most in all) */
	while (oracle_run_file(o, out_bin, &ro, runs, &first, faults) < 0)
		if (!oracle_failed(o) || ss->verify_recoveries++ >= 2 || !oracle_recover(o))
			return -1;
	oracle_phase(o)->candidates += runs;
	if (first.status == RS_FAULT || first.status == RS_CLEAN)
		note_relocation(oracle_report(o), &first);
	return 0;
}

static int confirm_final(struct oracle *o, struct shrink_states *ss, struct cand *c, const char *out_bin, int *faults, int runs)
{
	return confirm_guard(o, ss, c, out_bin, faults, runs, oracle_guard(o));
}

/*
 * A deterministic fault must not become a matter of luck: when the
 * reduced trace faults less often than the original did (rate_dropped), the
 * other placements run it as many times before any back-off, both in one
 * batch (a race's runs fault about half the time, and every fault costs a
 * worker a new context: side by side, those starts overlap), and the one
 * that faults most (more than replay's own) becomes replay's placement
 * (as final_repro does for repro.cu).  Returns 1 when the placement
 * changed (*faults is then its count), 0 when not, -1 on lost workers.
 */
static int placement_check(struct oracle *o, struct shrink_states *ss, struct cand *best, const char *out_bin,
			   int *faults, int runs)
{
	struct shrink_report *rep = oracle_report(o);
	const int modes[3] = { GUARD_LAYOUT, GUARD_END, GUARD_START };
	int was = oracle_guard(o), top = *faults, top_guard = was, alt[3], got[3], n = 0;
	struct replay_result first[3];

	if (!rate_dropped(*faults, runs, rep->orig_faults, rep->orig_runs) || oracle_opts(o)->guard >= 0)
		return 0;   /* the rate holds (or a race's differs by chance), or the user chose the placement */
	/* an original that missed too (a race): no placement makes it
	 * deterministic, and which one faults most in 5 or 10 runs is
	 * chance (the race sample on H100s, 2026-12-07: in 11 such checks of
	 * 0.6-4.3 s none of the three was ahead in most); rate_check's
	 * earlier states stay.  Only a reduced trace that faulted in none of
	 * its runs has the other placements tried. */
	if (rep->orig_faults < rep->orig_runs && *faults > 0)
		return 0;
	for (int m = 0; m < 3; m++)
		if (modes[m] != was)
			alt[n++] = modes[m];
	if (cand_write(best, out_bin, oracle_err(o)) < 0)
		return -1;
	/* --keep-going: runs that lost their workers get a fresh pool (twice
	 * at most in all), as confirm_guard's */
	while (oracle_run_file_guards(o, out_bin, alt, n, runs, got, first) < 0)
		if (!oracle_failed(o) || ss->verify_recoveries++ >= 2 || !oracle_recover(o))
			return -1;
	oracle_phase(o)->candidates += n * runs;
	for (int q = 0; q < n; q++) {
		oracle_log(o, "the reduced trace with %s placement: %d/%d faulted (%s placement: %d/%d)",
			   place_guard_name(alt[q]), got[q], runs, place_guard_name(was), *faults, runs);
		if (got[q] > top) {
			top = got[q];
			top_guard = alt[q];
			if (first[q].status == RS_FAULT || first[q].status == RS_CLEAN)
				note_relocation(rep, &first[q]);
		}
	}
	if (top_guard == was)
		return 0;
	{
		size_t l = strlen(rep->note);
		snprintf(rep->note + l, sizeof(rep->note) - l,
			 "%sthe reduced trace faulted in %d of %d runs with %s placement (the original: %d of %d); "
			 "%s placement faulted in %d of %d and was kept", l ? "; " : "", *faults, runs,
			 place_guard_name(was), rep->orig_faults, rep->orig_runs, place_guard_name(top_guard), top, runs);
	}
	oracle_set_guard(o, top_guard);
	*faults = top;
	return 1;
}

/*
 * Write states from..to (latest first; from >= to) as
 * WORKDIR/PREFIX-K-NAME.bin for the back-offs, leaving out those whose
 * content hashes to skip1 or skip2 or is a later state's (a phase that
 * changed nothing).  paths[] (malloc'd) and idx[] get the
 * rest; hashes[k] (when not NULL) each written state's content hash, left
 * out or not.  Returns how many, or -1 on a write error (oracle_err(o)
 * says why).
 */
static int write_states(struct oracle *o, const struct shrink_states *ss, int from, int to, const char *prefix, uint64_t skip1, uint64_t skip2,
			char **paths, int *idx, uint64_t *hashes)
{
	const struct shrink_opts *opts = oracle_opts(o);
	uint64_t written[PH__COUNT];
	int n = 0;
	for (int k = from; k >= to; k--) {
		struct strbuf p = STRBUF_INIT;
		uint64_t h;
		sb_addf(&p, "%s/%s-%d-%s.bin", opts->workdir, prefix, k, ss->name[k]);
		if (cand_write(&ss->state[k], p.buf, oracle_err(o)) < 0) {
			sb_release(&p);
			for (int q = 0; q < n; q++)
				free(paths[q]);
			return -1;
		}
		h = oracle_file_hash(p.buf);
		if (hashes)
			hashes[k] = h;
		int again = 0;   /* a later state already written is the same */
		for (int q = 0; q < n && !again; q++)
			again = written[q] == h;
		if (h == skip1 || h == skip2 || again) {
			unlink(p.buf);
			sb_release(&p);
			continue;
		}
		idx[n] = k;
		written[n] = h;
		paths[n++] = sb_detach(&p, NULL);
	}
	return n;
}

/*
 * A racy fault can fire less often once reduced: the candidates were
 * judged on a run or a few, and a data or grid cut may have made the race
 * rarer.  When the final confirmation's rate falls well below the
 * original's (fewer than 70 % of it, and for a flaky original by more than
 * chance explains: rate_dropped), the states before *best are run as
 * many times side by side, and the latest one whose rate holds replaces
 * it (else the one that faulted most, if it beats *best).  Returns 1 when
 * *best changed (*faults is then its fresh confirmation, or its rate runs'
 * count when the confirmation missed every run), 0 when not, -1 on a
 * write error or lost workers.
 */
static int rate_check(struct oracle *o, struct shrink_states *ss, struct cand *best, const char *out_bin, int *faults, int runs)
{
	struct shrink_report *rep = oracle_report(o);
	int need = rate_need(runs, rep->orig_faults, rep->orig_runs), n = 0, pick, ret = 0;
	int idx[PH__COUNT], got[PH__COUNT];
	char *paths[PH__COUNT];
	uint64_t hf = oracle_file_hash(out_bin);

	if (!rate_dropped(*faults, runs, rep->orig_faults, rep->orig_runs) || ss->cur <= 0)
		return 0;
	if ((n = write_states(o, ss, ss->cur - 1, 0, "rate", hf, hf, paths, idx, NULL)) <= 0) {
		ret = n;
		n = 0;
		goto out;
	}
	if (oracle_run_files(o, paths, n, runs, got) < 0) {
		ret = -1;
		goto out;
	}
	for (int q = 0; q < n; q++)
		oracle_log(o, "rate of the state after %s: %d/%d (the reduced trace: %d/%d, the original: %d/%d)",
		     ss->name[idx[q]], got[q], runs, *faults, runs, rep->orig_faults, rep->orig_runs);
	if ((pick = rate_pick(got, n, need, *faults)) < 0)
		goto out;
	{
		size_t l = strlen(rep->note);
		snprintf(rep->note + l, sizeof(rep->note) - l,
			 "%sthe reduced trace faulted in %d of %d runs (the original: %d of %d); backed off to the "
			 "state after %s, which faulted in %d of %d", l ? "; " : "", *faults, runs, rep->orig_faults,
			 rep->orig_runs, ss->name[idx[pick]], got[pick], runs);
	}
	snprintf(rep->backed_off_to, sizeof(rep->backed_off_to), "%s", ss->name[idx[pick]]);
	cand_release(best);
	cand_copy(best, &ss->state[idx[pick]]);
	ss->cur = idx[pick];
	if (confirm_final(o, ss, best, out_bin, faults, runs) < 0) {
		ret = -1;
		goto out;
	}
	if (!*faults) {
		/* a race at a low rate can miss a whole confirmation (gpu-test's
		 * race sample on the H100, 2026-12-05: the state after data 2/5,
		 * then 0/5): this state did fault, in its rate runs, which stand */
		oracle_log(o, "the state after %s: 0/%d in its confirmation; its rate runs' %d/%d stand",
			   ss->name[idx[pick]], runs, got[pick], runs);
		*faults = got[pick];
	}
	ret = 1;
out:
	for (int q = 0; q < n; q++) {
		unlink(paths[q]);
		free(paths[q]);
	}
	return ret;
}

/* Remember the best candidate at the end of a phase (to back off to). */
void states_save(struct shrink_states *ss, const char *name, const struct cand *c)
{
	if (ss->n >= PH__COUNT)
		BUG("states_save: more states than phases (%s)", name);
	cand_copy(&ss->state[ss->n], c);
	ss->name[ss->n++] = name;
}

/*
 * The final state must fail where the base state (the slice, or the
 * launches phase's result) fails under compute-sanitizer: same PC, access
 * and place relative to the parameters.  If it does not, the states after
 * the earlier phases are checked side by side and the latest one that
 * still fails there replaces *best.  Returns 1 when *best changed, 0 when
 * not, -1 on a write error.  The base state's run must have been started
 * (oracle_base_start).
 */
static int site_check(struct oracle *o, struct shrink_states *ss, struct cand *best, const char *out_bin)
{
	struct shrink_report *rep = oracle_report(o);
	char s0[700] = "", sf[1][700];
	char *fo[1] = { NULL }, *fp = (char *)out_bin;
	const char *b0;
	int have = 0, ret = 0, tries = rep->flaky ? 4 : 1;
	uint64_t hf = oracle_file_hash(out_bin), hb = oracle_base_hash(o);

	if (!(b0 = oracle_base_site(o))) {
		snprintf(rep->note, sizeof(rep->note),
			 "site not checked: compute-sanitizer on the %s state: %s%s", ss->name[0],
			 oracle_base_why(o)[0] ? oracle_base_why(o) : "not run", rep->flaky ? " (a flaky fault)" : "");
		goto out;
	}
	snprintf(s0, sizeof(s0), "%s", b0);
	snprintf(rep->site, sizeof(rep->site), "%s", s0);
	if (hb == hf) {
		/* nothing changed after the base state: its run is the final one's */
		rep->site_confirmed = 1;
		rep->final_sanitizer = xstrdup(oracle_base_output(o) ? oracle_base_output(o) : "");
		goto out;
	}
	/* a racy fault may simply not happen in one run: only a different
	 * site counts against the reductions */
	for (int k = 0; k < tries && !have; k++) {
		free(fo[0]);
		fo[0] = NULL;
		have = oracle_sanitize(o, &fp, 1, sf, fo, NULL) > 0;
	}
	if (have && !strcmp(sf[0], s0)) {
		rep->site_confirmed = 1;
		rep->final_sanitizer = fo[0];
		fo[0] = NULL;
		goto out;
	}
	if (!have) {
		snprintf(rep->note, sizeof(rep->note),
			 "site not confirmed: the reduced trace did not fault under compute-sanitizer in %d run(o)%s",
			 tries, rep->flaky ? " (a flaky fault)" : "");
		goto out;
	}
	{
		/* back off: the intermediate states, latest first */
		char **paths = xcalloc((size_t)ss->n + 1, sizeof(char *));
		char (*sites)[700] = xcalloc((size_t)ss->n + 1, sizeof(*sites));
		char **outs = xcalloc((size_t)ss->n + 1, sizeof(char *));
		int *idx = xcalloc((size_t)ss->n + 1, sizeof(int)), n, pick = 0, last;
		uint64_t *hs = xcalloc((size_t)ss->n + 1, sizeof(uint64_t));
		/* leave out states that are the final one (moved) or the base (fine) */
		hs[0] = hb;
		if ((n = write_states(o, ss, ss->n - 2, 1, "state", hf, hb, paths, idx, hs)) < 0) {
			ret = -1;
			n = 0;
		}
		/* side by side, read latest first: the first match ends the rest */
		if (ret == 0 && n)
			oracle_sanitize(o, paths, (size_t)n, sites, outs, s0);
		for (int q = 0; q < n && !pick && ret == 0; q++)
			if (!strcmp(sites[q], s0))
				pick = idx[q];
		/* the phases after `pick` that left its state as it was did not
		 * move the fault: the first one that changed it did */
		for (last = pick; last + 1 <= ss->n - 2 && hs[last + 1] == hs[pick];)
			last++;
		if (ret == 0) {
			snprintf(rep->note, sizeof(rep->note),
				 "the %s phase moved the fault (sanitizer: '%.180s' vs '%.180s'); backed off to the state after %s",
				 ss->name[last + 1], s0, sf[0], ss->name[last]);
			snprintf(rep->backed_off_to, sizeof(rep->backed_off_to), "%s", ss->name[last]);
			cand_release(best);
			cand_copy(best, &ss->state[pick]);
			ss->cur = pick;
			rep->site_confirmed = 1;
			for (int q = 0; q < n; q++)
				if (idx[q] == pick) {
					rep->final_sanitizer = outs[q];
					outs[q] = NULL;
				}
			if (!pick)
				rep->final_sanitizer = xstrdup(oracle_base_output(o) ? oracle_base_output(o) : "");
			ret = 1;
		}
		for (int q = 0; q < n; q++) {
			free(paths[q]);
			free(outs[q]);
		}
		free(paths);
		free(sites);
		free(outs);
		free(idx);
		free(hs);
	}
out:
	free(fo[0]);
	return ret;
}
/* SIGINT/SIGTERM (interrupt.h) came: write the best state so far (every
 * state best holds has faulted with the signature) as the result,
 * unconfirmed.  0, or -1 on a write error. */
int final_keep_interrupted(struct oracle *o, struct cand *best, const char *out_bin)
{
	oracle_report(o)->interrupted = interrupt_signal();
	oracle_phase_abandon(o, "stopped: interrupted");
	if (cand_write(best, out_bin, oracle_err(o)) < 0)
		return -1;
	oracle_measure(best, &oracle_report(o)->final_launches, &oracle_report(o)->final_buffers, &oracle_report(o)->final_bytes);
	return 0;
}

/* ---- the emitted program itself ----------------------------------------- */

/* Make the state after phase `st` the result (a repro.cu check needed
 * it): *best, out_bin and the report follow.  0, or -1 on a write error. */
static int repro_adopt_state(struct oracle *o, struct shrink_states *ss, struct cand *best, const char *out_bin, int st, const char *tried)
{
	struct shrink_report *rep = oracle_report(o);
	size_t l = strlen(rep->note);
	if (st == ss->cur)
		return 0;
	cand_release(best);
	cand_copy(best, &ss->state[st]);
	ss->cur = st;
	ss->replay_stale = 1;
	snprintf(rep->backed_off_to, sizeof(rep->backed_off_to), "%s", ss->name[st]);
	snprintf(rep->note + l, sizeof(rep->note) - l, "%sthe reduced trace's repro.cu did not fault as "
		 "replay did (%s); the state after %s's does", l ? "; " : "", tried, ss->name[st]);
	return cand_write(best, out_bin, oracle_err(o));
}

/* One build of repro.cu run `runs` times: the phase's and the report's
 * counts. */
static void count_repro_runs(struct oracle *o, int runs)
{
	struct shrink_report *rep = oracle_report(o);
	rep->repro_attempts++;
	oracle_phase(o)->candidates += runs;
	rep->candidates += runs;
}

/*
 * Build and run repro.cu as a race's program (rep->flaky set: it tries
 * again in one run, emit_tries) with `guard`, `runs` times; `again` says
 * in the log why.  1 with *faults its count, 0 when it was not checked
 * (the log says why; *faults is 0).
 */
static int run_as_race(struct oracle *o, const char *bin, int guard, int runs, const char *again, int *faults)
{
	const struct shrink_opts *opts = oracle_opts(o);
	struct strbuf why = STRBUF_INIT;
	int checked = opts->check_repro(opts->check_arg, bin, guard, runs, faults, &why) == 0;

	if (checked) {
		count_repro_runs(o, runs);
		oracle_log(o, "repro.cu as a race's (%s), %s placement: %s%d/%d faulted", again,
			   place_guard_name(guard), why.buf, *faults, runs);
	} else {
		*faults = 0;
		oracle_log(o, "repro.cu as a race's, %s placement: not checked (%s)", place_guard_name(guard), why.buf);
	}
	sb_release(&why);
	return checked;
}

/* The report's note: the program emitted is the race's, `before` (may be
 * "") saying what led to it. */
static void note_as_race(struct shrink_report *rep, const char *before, int faults, int runs)
{
	size_t l = strlen(rep->note);
	snprintf(rep->note + l, sizeof(rep->note) - l, "%s%semitted as a race's repro.cu, which tries again in "
		 "one run, it faulted in %d of %d runs", l ? "; " : "", before, faults, runs);
}

/*
 * The fault looked steady until repro.cu's runs missed: from now on it is
 * a flaky fault, and the program is emitted as a race's (one run tries
 * again, emit.h), not as the one just run.  Build and run that one with
 * the placement kept, and make its count the figure (returned).  A build
 * or run failure keeps the figure measured (the log says so).
 */
static int recheck_as_race(struct oracle *o, const char *out_bin, int guard, int runs)
{
	struct shrink_report *rep = oracle_report(o);
	int faults;

	if (!run_as_race(o, out_bin, guard, runs, "the fault is flaky from here on", &faults)) {
		oracle_log(o, "repro.cu: the figure stays %d/%d", rep->repro_faults, runs);
		return rep->repro_faults;
	}
	note_as_race(rep, "", faults, runs);
	rep->repro_faults = faults;
	rep->repro_ok = faults > 0;
	return faults;
}

/*
 * A steady fault's single-try program faulted in none of its runs: run the
 * race's program (it tries again in one run, emit.h) with the same
 * placement before other placements and states are tried.  A race that
 * loses most tries can fault in both of confirm's runs and look steady
 * (the race sample: 2 of 2 in 6 of 8 shrinks on an H200, 2026-12-07).
 * When it faults the fault is flaky from here on and that program is the
 * one emitted; when it does not (or is not checked), rep->flaky is as it
 * was.  Returns its count, 0 when none or not checked.
 */
static int race_probe(struct oracle *o, const char *bin, int guard, int runs)
{
	struct shrink_report *rep = oracle_report(o);
	char what[96];
	int faults;

	rep->flaky = 1;   /* emitted with its tries (emit_tries) */
	snprintf(what, sizeof(what), "one try faulted in none of %d runs", runs);
	if (run_as_race(o, bin, guard, runs, what, &faults) && faults > 0) {
		snprintf(what, sizeof(what), "repro.cu faulted in none of %d runs as one try; ", runs);
		note_as_race(rep, what, faults, runs);
	} else {
		rep->flaky = 0;
	}
	return faults;
}

/*
 * Build and run repro.cu as it will be emitted (o->check_repro) and make
 * its count the reproduction figure.  When it does not fault at the rate
 * replay measured for the same trace (every run, for a steady fault), try
 * the other placements for that trace, then the states after earlier
 * phases with replay's placement; keep the first that holds (out_bin is
 * rewritten when the state changes), else the one that faulted most (the
 * fault is then reported flaky, at the program's own rate); when none
 * faulted at all, say plainly that the program does not reproduce and
 * what was tried (the caller exits 1).  A steady fault's program that
 * faults in some of its runs ends the search there when the original
 * trace is flaky too (oracle_original_flaky): it is checked again as a race's
 * (recheck_as_race); one that faults in none with replay's placement is
 * first run as a race's (race_probe).  Returns 0, or -1 on a write error
 * or when the workers are lost.
 */
int final_repro(struct oracle *o, struct shrink_states *ss, struct cand *best, const char *out_bin, int runs)
{
	const struct shrink_opts *opts = oracle_opts(o);
	struct shrink_report *rep = oracle_report(o);
	const int modes[3] = { GUARD_LAYOUT, GUARD_END, GUARD_START };
	int need = rep->final_faults >= rep->final_runs ? runs :
		rate_need(runs, rep->final_faults, rep->final_runs);
	struct strbuf why = STRBUF_INIT, tried = STRBUF_INIT, path = STRBUF_INIT;
	int ret = 0, best_faults = -1, best_guard = oracle_guard(o), best_state = ss->cur, was_flaky = rep->flaky;
	int raced = 0;   /* race_probe's program faulted: it is the one emitted */

	rep->repro_guard = oracle_guard(o);
	if (!opts->check_repro)
		return 0;
	oracle_phase_begin(o, phase_name(PH_REPRO), best);
	/* attempt 0: replay's placement; 1-2: the other placements; then
	 * earlier states with replay's placement */
	for (int k = 0; k < 3 + ss->cur; k++) {
		int guard = oracle_guard(o), st = ss->cur, faults = 0, rc;
		const char *bin = out_bin;
		if (k >= 1 && k < 3) {
			int seen = 0, m = -1;
			for (int q = 0; q < 3 && m < 0; q++)
				if (modes[q] != oracle_guard(o) && ++seen == k)
					m = q;
			if (m < 0)
				continue;
			guard = modes[m];
		} else if (k >= 3) {
			st = ss->cur - 1 - (k - 3);
			sb_reset(&path);
			sb_addf(&path, "%s/repro-state-%d-%s.bin", opts->workdir, st, ss->name[st]);
			if (cand_write(&ss->state[st], path.buf, oracle_err(o)) < 0) {
				ret = -1;
				goto out;
			}
			bin = path.buf;
		}
		sb_reset(&why);
		rc = opts->check_repro(opts->check_arg, bin, guard, runs, &faults, &why);
		if (rc == 1) {
			snprintf(rep->repro_why, sizeof(rep->repro_why), "%s", why.buf);
			oracle_phase_end(o, best, "not checked: no compiler or driver");
			goto out;
		}
		count_repro_runs(o, runs);
		oracle_log(o, "repro.cu (%s placement, state after %s): %s%d/%d faulted", place_guard_name(guard),
		     ss->n ? ss->name[st] : "-", why.buf, faults, runs);
		sb_addf(&tried, "%s%s placement%s%s: %d/%d", tried.len ? "; " : "", place_guard_name(guard),
			k >= 3 ? ", state after " : "", k >= 3 ? ss->name[st] : "", faults, runs);
		if (rc < 0) {
			/* a build failure will not go away with another placement; it
			 * is a repro that does not reproduce (0 runs), not a pass */
			snprintf(rep->repro_why, sizeof(rep->repro_why), "%s", why.buf);
			rep->repro_checked = 1;
			rep->repro_runs = rep->repro_faults = rep->repro_ok = 0;
			oracle_phase_end(o, best, "DOES NOT BUILD");
			goto out;
		}
		rep->repro_checked = 1;
		if (faults > best_faults) {
			best_faults = faults;
			best_guard = guard;
			best_state = st;
		}
		if (faults >= need)
			break;
		/* a steady fault whose program faulted in some runs only:
		 * when the original is flaky too, another placement or an
		 * earlier state does not make one run steady (a race's round
		 * on an H100 spent 11 s on seven more builds of 5 runs each,
		 * 2026-12-07); it is emitted as a race's at once (below) */
		if (!was_flaky && faults > 0 && !rep->orig_rechecked) {
			/* (not again when the shrink or an earlier try measured
			 * it: oracle_recheck_clean) */
			int of = oracle_original_flaky(o, "steady: the reduction made it flaky");
			if (of < 0) {
				ret = -1;
				goto out;
			}
			if (of)
				break;
		}
		if (!was_flaky && k == 0 && !faults && (faults = race_probe(o, bin, guard, runs)) > 0) {
			raced = 1;
			best_faults = faults;
			break;
		}
	}
	if (rep->repro_checked) {
		rep->repro_runs = runs;
		rep->repro_faults = best_faults;
		rep->repro_guard = best_guard;
		rep->repro_ok = best_faults > 0;
		if (best_faults > 0 && repro_adopt_state(o, ss, best, out_bin, best_state, tried.buf) < 0) {
			ret = -1;
			goto out;
		}
		if (best_faults > 0 && best_faults < need) {
			size_t l = strlen(rep->note);
			rep->flaky = 1;
			snprintf(rep->note + l, sizeof(rep->note) - l, "%srepro.cu faulted in %d of %d runs, "
				 "below replay's %d of %d (tried %s)", l ? "; " : "", best_faults, runs,
				 rep->final_faults, rep->final_runs, tried.buf);
			if (!was_flaky && !raced)
				best_faults = recheck_as_race(o, out_bin, best_guard, runs);
		}
		if (!best_faults)
			snprintf(rep->repro_why, sizeof(rep->repro_why),
				 "replay faulted %d/%d, but the emitted repro.cu, built and run on its own, never "
				 "faulted with the signature, every way it was tried (%s)", rep->final_faults,
				 rep->final_runs, tried.buf);
	}
	oracle_phase_end(o, best, rep->repro_ok ? (best_faults >= need ? "reproduces" : "reproduces, less often") :
		  rep->repro_checked ? "DOES NOT REPRODUCE" : "not built");
out:
	sb_release(&why);
	sb_release(&tried);
	sb_release(&path);
	return ret;
}

void states_release(struct shrink_states *ss)
{
	for (int k = 0; k < ss->n; k++)
		cand_release(&ss->state[k]);
	ss->n = 0;
}

/*
 * How often the final state is run.  Every run that faults costs a worker
 * process, and a GPU creates contexts one after another (docs/RESULTS.md:
 * about 0.3 s each; a shrink's seconds are about its faulting runs, the
 * built repro.cu's and compute-sanitizer's included, times that), so a
 * steady fault whose repro.cu will be built and run `final_runs` times is
 * replayed only VERIFY_QUICK_RUNS times: repro.cu's runs are the
 * reproduction figure, and replay's run makes sure the trace they are
 * built from still faults (it faulted before, as the candidate its phase
 * kept).  When repro.cu turns out not to be checked (no compiler), or
 * misses, final_settle tops replay's runs up to final_runs.
 */
#define VERIFY_QUICK_RUNS 1

int final_runs(struct oracle *o)
{
	const struct shrink_opts *opts = oracle_opts(o);
	return opts->confirm_runs > 0 ? opts->confirm_runs : (oracle_report(o)->flaky ? 10 : 5);
}

int final_repro_runs(struct oracle *o)
{
	const struct shrink_opts *opts = oracle_opts(o);
	return opts->confirm_runs > 0 ? opts->confirm_runs : 5;
}

/* GPUREDUCE_VERIFY_QUICK=N (1 to 5): the quick runs, to measure them
 * side by side on a GPU; else VERIFY_QUICK_RUNS. */
static int verify_runs(struct oracle *o)
{
	const struct shrink_opts *opts = oracle_opts(o);
	const char *q = getenv("GPUREDUCE_VERIFY_QUICK");
	int n = q && *q ? atoi(q) : 0;
	if (opts->confirm_runs > 0 || oracle_report(o)->flaky || !opts->check_repro)
		return final_runs(o);
	return n >= 1 && n <= 5 ? n : VERIFY_QUICK_RUNS;
}

/* Run *best `want - *runs` times more and add them to *faults and *runs.
 * 0, or -1 (lost workers, a write error). */
static int confirm_more(struct oracle *o, struct shrink_states *ss, struct cand *best, const char *out_bin,
			int *faults, int *runs, int want)
{
	int more = 0;
	if (confirm_final(o, ss, best, out_bin, &more, want - *runs) < 0)
		return -1;
	*faults += more;
	*runs = want;
	return 0;
}

/* The final state never faulted in its confirmation: no repro is
 * emitted.  The latest saved state that faulted with the signature as a
 * candidate earlier in the reduction (a race that comes rarely or in
 * bursts) is written to out_bin for `gpureduce replay --tries`, and the message
 * says so; with none, out_bin is removed.  -1 (err says so). */
static int no_fault(struct oracle *o, struct shrink_states *ss, const char *out_bin, int runs)
{
	for (int k = ss->n - 1; k >= 0; k--) {
		struct strbuf e = STRBUF_INIT;
		int kept = cand_write(&ss->state[k], out_bin, &e) == 0 && oracle_faulted_before(o, out_bin);
		sb_release(&e);
		if (kept) {
			sb_addf(oracle_err(o), "the reduced trace did not fault in %d confirmation runs; the state "
				"after %s, which faulted with the signature once in the reduction (a race that comes "
				"rarely or in bursts), is kept as %s for `gpureduce replay --tries=20`; no repro.cu was emitted",
				runs, ss->name[k], out_bin);
			oracle_report(o)->kept_faulted = 1;
			return -1;
		}
	}
	sb_addf(oracle_err(o), "the reduced trace did not fault in %d confirmation runs; nothing was emitted", runs);
	unlink(out_bin);
	return -1;
}

/*
 * A steady fault's quick check needs no run of its own when the final
 * trace is, byte for byte, a candidate that already faulted with the
 * signature under the same placement (the one its phase kept, usually):
 * that run is replay's run of this trace, and a new one would cost a
 * CUDA context (docs/SHRINK-PHASES.md).  1 when recalled (*faults = 1),
 * 0 when it must run, -1 on a write error.  Only with
 * GPUREDUCE_VERIFY_RECALL=1: on the H200 (2026-12-05) shrinks without the
 * run were no faster (median 5.99 s against 5.56-5.87 s over eight
 * samples, both orders), the end of a shrink being compute-sanitizer's
 * runs and repro.cu's, whose contexts the run no longer staggered.
 */
static int recall_final(struct oracle *o, struct cand *best, const char *out_bin, int *faults, int runs)
{
	const char *e = getenv("GPUREDUCE_VERIFY_RECALL");
	struct shrink_report *rep = oracle_report(o);
	struct replay_result r;

	if (runs != 1 || rep->flaky || !e || strcmp(e, "1"))
		return 0;
	if (cand_write(best, out_bin, oracle_err(o)) < 0)
		return -1;
	if (!oracle_recall(o, out_bin, &r))
		return 0;
	*faults = 1;
	note_relocation(rep, &r);
	oracle_log(o, "the final trace is a candidate that faulted with the signature (%s, %s placement): "
		   "that run counts as replay's, none is made again", r.error, place_guard_name(oracle_guard(o)));
	return 1;
}

int final_verify(struct oracle *o, struct shrink_states *ss, struct cand *best, const char *out_bin)
{
	const struct shrink_opts *opts = oracle_opts(o);
	struct shrink_report *rep = oracle_report(o);
	int runs = verify_runs(o);
	int faults = 0;

	oracle_phase_begin(o, phase_name(PH_VERIFY), best);
	oracle_wind_down(o);
	ss->cur = ss->n - 1;
	/* the site check's run of the final trace goes side by side with
	 * its confirmation runs */
	if (oracle_base_started(o))
		oracle_prefetch_start(o, best);
	switch (recall_final(o, best, out_bin, &faults, runs)) {
	case -1:
		return -1;
	case 0:
		if (confirm_final(o, ss, best, out_bin, &faults, runs) < 0)
			return -1;
		break;
	}
	/* a quick check that missed: measure the rate on all the runs */
	if (faults < runs && runs < final_runs(o) && !interrupt_signal() &&
	    confirm_more(o, ss, best, out_bin, &faults, &runs, final_runs(o)) < 0)
		return -1;
	if (interrupt_signal())
		return 1;
	if (placement_check(o, ss, best, out_bin, &faults, runs) < 0)
		return -1;
	if (!faults && ss->n > 1) {
		snprintf(rep->note, sizeof(rep->note),
			 "the fully reduced candidate did not fault in confirmation; backed off to the state "
			 "after %s", ss->name[0]);
		snprintf(rep->backed_off_to, sizeof(rep->backed_off_to), "%s", ss->name[0]);
		cand_release(best);
		cand_copy(best, &ss->state[0]);
		ss->cur = 0;
		if (confirm_final(o, ss, best, out_bin, &faults, runs) < 0)
			return -1;
	}
	/* the cheap signature (error + kernel) cannot tell two bugs in one
	 * kernel apart: where compute-sanitizer is at hand, the reduced
	 * trace must fail at the base state's site, or we back off.  When
	 * repro.cu is checked, the check waits until its runs are done
	 * (final_settle): the sanitizer's run of the final trace goes on
	 * beside them instead of holding this phase up. */
	ss->site_pending = faults && oracle_base_started(o) && opts->check_repro;
	if (faults && oracle_base_started(o) && !ss->site_pending) {
		int moved = site_check(o, ss, best, out_bin);
		if (moved < 0)
			return -1;
		if (moved && confirm_final(o, ss, best, out_bin, &faults, runs) < 0)
			return -1;
	}
	if (faults && !interrupt_signal() && rate_check(o, ss, best, out_bin, &faults, runs) < 0)
		return -1;
	if (interrupt_signal())
		return 1;   /* the state in best has faulted before: keep it as it is */
	rep->final_runs = runs;
	rep->final_faults = faults;
	if (faults < runs)
		rep->flaky = 1;   /* the original looked steady in its first runs; the repro says otherwise */
	oracle_phase_end(o, best, faults ? "confirmed" : "did not reproduce");
	return faults ? 0 : no_fault(o, ss, out_bin, runs);
}

/*
 * After repro.cu's check: the site check final_verify left for now, and
 * replay's runs topped up when repro.cu was not checked after all or did
 * not fault in every run (replay's figure is then the one that counts).  When
 * the site moved, *best backs off (as final_verify would have), is
 * confirmed again, and 1 is returned: the caller checks repro.cu again.
 * 0 when nothing changed, -1 on an error (err says why; the no-fault case
 * unlinks out_bin as final_verify does).
 */
int final_settle(struct oracle *o, struct shrink_states *ss, struct cand *best, const char *out_bin)
{
	struct shrink_report *rep = oracle_report(o);
	int runs = final_runs(o), faults = rep->final_faults, done = rep->final_runs, moved = 0;

	/* replay's own figure stands in the report when repro.cu's does not
	 * (not built, or it missed) */
	int topup = rep->final_runs < runs && (!rep->repro_checked || rep->repro_faults < rep->repro_runs);

	/* repro.cu's check moved to an earlier state: replay's figure is
	 * measured again, on it */
	if (ss->replay_stale) {
		topup = 1;
		faults = done = 0;
		ss->replay_stale = 0;
	}

	if (!ss->site_pending && !topup)
		return 0;
	oracle_phase_begin(o, phase_name(PH_SITE), best);
	if (ss->site_pending) {
		ss->site_pending = 0;
		if ((moved = site_check(o, ss, best, out_bin)) < 0)
			return -1;
	}
	if (moved) {
		/* repro.cu is checked again (the caller): a quick check here too,
		 * topped up after it when it is not built or misses */
		runs = verify_runs(o);
		if (confirm_final(o, ss, best, out_bin, &faults, runs) < 0)
			return -1;
	} else if (topup && confirm_more(o, ss, best, out_bin, &faults, &done, runs) < 0) {
		return -1;   /* (the runs verify did not make, on the same trace) */
	}
	if (moved || topup) {
		rep->final_runs = runs;
		rep->final_faults = faults;
		if (faults < runs)
			rep->flaky = 1;
	}
	oracle_phase_end(o, best, moved ? "site moved: backed off" : rep->site_confirmed ? "site confirmed" :
			 "checked");
	return faults ? moved : no_fault(o, ss, out_bin, runs);
}
