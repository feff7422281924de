/*
 * oracle-confirm.c - the oracle's replays of the original trace (see
 * oracle.h): confirming the captured fault in replay, which fixes the
 * placement, the rate and the repeats every later candidate is judged
 * by; and snapshots of the state before a record, opened as new source
 * traces the oracle owns.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/interrupt.h"
#include "../common/strbuf.h"
#include "../common/util.h"
#include "../addr/memmap.h"
#include "../addr/place.h"
#include "../replay/replay.h"
#include "cand.h"
#include "oracle-int.h"
#include "shrink-phases.h"

struct trace *oracle_add_source(struct oracle *s, const char *path)
{
	struct trace *t;
	if (s->nsrc >= ORACLE_MAX_SOURCES) {
		sb_addf(s->err, "too many snapshot traces");
		return NULL;
	}
	t = xcalloc(1, sizeof(*t));
	if (trace_open(t, path, TRACE_OPEN_STRICT, s->err) < 0) {
		free(t);
		return NULL;
	}
	s->src[s->nsrc++] = t;
	return t;
}

static const char *describe(const struct replay_result *r, char *buf, size_t n)
{
	switch (r->status) {
	case RS_CLEAN: snprintf(buf, n, "ran clean (%ld launches)", r->launches); break;
	case RS_FAULT: snprintf(buf, n, "%s in %.200s", r->error, r->kernel); break;
	case RS_TIMEOUT: snprintf(buf, n, "timed out"); break;
	default: snprintf(buf, n, "could not replay: %.300s", r->msg); break;
	}
	return buf;
}

/* Live bytes above which the slice's snapshot is not written by a
 * confirmation run (reading back that much would hold the run up). */
#define PRESNAP_MAX_BYTES (16ull << 30)
/* runs of each placement when every placement ran clean (a race that lost
 * every time): with the first pass's, ten runs a placement */
#define CONFIRM_MORE 8

/* A flaky fault: each candidate runs several times and counts when one
 * of them faults, more runs the rarer the original's fault */
static void flaky_repeats_at(struct oracle *s, double rate)
{
	s->reps = rate >= 0.5 ? 3 : rate >= 0.25 ? 6 : 10;
	s->need = 1;
}

static void flaky_repeats(struct oracle *s)
{
	flaky_repeats_at(s, s->rep->orig_runs ? (double)s->rep->orig_faults / s->rep->orig_runs : 1.0);
}

/*
 * The record index the slice will snapshot before, as the trace tells it
 * before any replay: the launch the fault was reported at.  -1 when the
 * trace does not say (a fault found at a later sync, a graph), when the
 * slice will not run, or when the snapshot should not be taken early
 * (a fake oracle, GPUREDUCE_SHRINK_SERIAL=1, very large live buffers).
 */
static long presnap_event(const struct oracle *s)
{
	const struct trace *t = s->orig;
	long frec = oracle_fault_record(t);
	uint64_t live = 0;

	if (s->fake.test || frec < 0 || !t->rec[frec].u.fault.at_launch || phase_serial() ||
	    s->o->strategy != STRATEGY_FULL || !phase_wanted(s->o->phase_sel, PH_SLICE, 0))
		return -1;
	for (size_t i = 0; i < t->nrec; i++)
		if (t->rec[i].type == TR_ALLOC)
			live += t->rec[i].u.alloc.size;
	if (live > PRESNAP_MAX_BYTES)
		return -1;
	return trace_find_launch(t, t->rec[frec].u.fault.launch_seq);
}

/* The launch seq of the captured fault, -1 when the trace has none. */
static long long fault_seq(const struct oracle *s)
{
	long frec = oracle_fault_record(s->orig);
	return frec < 0 ? -1 : (long long)s->orig->rec[frec].u.fault.launch_seq;
}

/* When replay faulted in another launch than the program did (res), and
 * that launch passes words that look like device addresses but lie in no
 * buffer the trace recorded, say so in err (memmap_stray_note).
 * (torchvision-long's trace on the H200, 2026-12-05: replay faulted in a
 * cuDNN kernel under every placement, and 88 such words were counted.) */
static void stray_hint(const struct trace *t, const struct replay_result *res, struct strbuf *err)
{
	if (res->status == RS_FAULT && memmap_stray_note(t, res->event, " Replay faulted in another launch: ", err))
		sb_addch(err, '.');
}

/* Confirm the fault in replay (see oracle.h): sets the guard, the rates,
 * the fault's event and the repeats per candidate.  The first of each
 * placement's runs writes the slice's snapshot on its way, before the
 * launch the trace says faulted, and goes on through it (issue 26: the
 * slice then starts without a replay of its own, and no process is spent
 * on the snapshot alone: each costs a CUDA context, and whole replays side
 * by side share the GPU); it is kept only when replay confirms that launch
 * as the fault's event. */
int oracle_confirm(struct oracle *s)
{
	/* layout-faithful first: where it applies, a wild access lands where
	 * it landed in the original; then guard placements for overruns */
	int modes[4] = { GUARD_LAYOUT, GUARD_END, GUARD_START, GUARD_NONE };
	struct strbuf tried = STRBUF_INIT, pre = STRBUF_INIT;
	struct replay_result wrong = { 0 };   /* the first placement's fault elsewhere (RS_FAULT), for stray_hint */
	int runs = s->o->orig_runs > 0 ? s->o->orig_runs : 2;
	long pre_at = presnap_event(s);
	int ret = -1, pre_ok = 0, all_clean = 1;

	/* --cut-buffers: a cut shows as an overrun only against a guard, so
	 * guard placement comes first */
	if (s->o->cut_buffers) {
		modes[0] = GUARD_END;
		modes[1] = GUARD_LAYOUT;
	}
	oracle_phase_begin(s, phase_name(PH_CONFIRM), NULL);
	/* each placement in turn; then (a = 4..7) each again with
	 * CONFIRM_MORE runs side by side and no pre-snapshot, only when every
	 * run so far ran clean under every placement: a race that lost in all
	 * of them (a fault elsewhere is no such thing) */
	for (int a = 0; a < 8; a++) {
		struct replay_opts ro = REPLAY_OPTS_INIT;
		struct replay_result first;
		int m = a % 4, matches = 0;
		char d[600];
		if (a == 4) {
			if (!all_clean || s->infra_failed || runs >= CONFIRM_MORE || interrupt_signal())
				break;
			runs = CONFIRM_MORE;
			pre_at = -1;
		}
		if (s->o->guard >= 0 && modes[m] != s->o->guard)
			continue;
		ro.guard = modes[m];
		if (pre_at >= 0) {
			struct replay_opts so = REPLAY_OPTS_INIT;
			sb_reset(&pre);
			sb_addf(&pre, "%s/presnap-%s.bin", s->o->workdir, place_guard_name(modes[m]));
			so.guard = modes[m];
			so.stop_before = pre_at;
			so.snap_mode = SNAP_REACHABLE;
			so.snap_path = pre.buf;
			so.snap_go_on = 1;   /* the first run writes it on its way to the fault */
			if (oracle_run_file_snap(s, s->orig->path, &ro, runs, &so, &pre_ok, &first, &matches) < 0)
				goto out;
			if (!matches || !pre_ok)
				unlink(pre.buf);
		} else if (oracle_run_file(s, s->orig->path, &ro, runs, &first, &matches) < 0)
			goto out;
		s->ph->candidates += runs;
		s->rep->candidates += runs;
		if (!matches) {
			sb_addf(&tried, "%sguard=%s, %d runs: %s", tried.len ? "; " : "",
				place_guard_name(modes[m]), runs, describe(&first, d, sizeof(d)));
			if (wrong.status != RS_FAULT)
				wrong = first;
			if (first.status != RS_CLEAN)
				all_clean = 0;
			continue;
		}
		s->guard = modes[m];
		if (matches < runs) {
			/* flaky: measure the rate on more runs */
			int more = 0;
			struct replay_result f2;
			if (oracle_run_file(s, s->orig->path, &ro, 8, &f2, &more) < 0)
				goto out;
			matches += more;
			runs += 8;
			s->rep->flaky = 1;
		}
		s->rep->orig_runs = runs;
		s->rep->orig_faults = matches;
		if (s->kernel_from_replay) {
			/* from now on the signature is the kernel replay saw fault */
			snprintf(s->rep->kernel, sizeof(s->rep->kernel), "%s", first.kernel);
			s->kernel_from_replay = 0;
		}
		s->rep->guard = modes[m];
		s->fault_event = first.event;
		if (pre_at >= 0 && pre_ok) {
			if (first.event == pre_at) {
				s->presnap.path = sb_detach(&pre, NULL);
				s->presnap.at = pre_at;
				s->presnap.mode = SNAP_REACHABLE;
				s->presnap.guard = modes[m];
				s->presnap.ok = 1;
			} else {
				unlink(pre.buf);
			}
		}
		if (s->rep->flaky)
			flaky_repeats(s);
		ret = 0;
		break;
	}
	memset(&s->foreign, 0, sizeof(s->foreign));
	/* (not for a fault the capture could not name the kernel of: a graph's,
	 * which replay names) */
	if (ret < 0 && !s->infra_failed && wrong.status == RS_FAULT && *wrong.kernel && *s->rep->kernel &&
	    !s->kernel_from_replay && strcmp(wrong.kernel, s->rep->kernel) &&
	    fault_seq(s) > wrong.launch_seq)
		s->foreign = wrong;
	if (ret < 0 && !s->infra_failed) {
		sb_addf(s->err, "the captured fault (%s in %s) does not reproduce in replay; tried %s. "
			"Nothing was emitted.", s->rep->error, *s->rep->kernel ? s->rep->kernel : "a kernel the trace does not name",
			tried.buf);
		stray_hint(s->orig, &wrong, s->err);   /* (nothing unless it faulted) */
		trace_unrecorded_notes(s->orig, " Capture noted what the trace lacks: ", 3, s->err);
	}
out:
	oracle_phase_end(s, NULL, ret == 0 ? (s->rep->flaky ? "flaky" : "reproduces") : "failed");
	sb_release(&tried);
	sb_release(&pre);
	return ret;
}

/* Snapshot the state before record `at` of the original into a new source. */
const struct trace *oracle_snapshot(struct oracle *s, long at, int mode)
{
	struct strbuf path = STRBUF_INIT;
	struct replay_result first;
	struct replay_opts ro = REPLAY_OPTS_INIT;
	struct trace *t = NULL;
	int matches;

	if (s->fake.test) {
		if (!s->fake.snapshot) {
			sb_addf(s->err, "snapshot before event %ld: the fake oracle has none", at);
			return NULL;
		}
		return s->fake.snapshot(s->fake.arg, at, mode);
	}

	if (s->presnap.ok && !s->presnap.used && s->presnap.at == at && s->presnap.mode == mode &&
	    s->presnap.guard == s->guard) {
		s->presnap.used = 1;
		oracle_log(s, "snapshot before event %ld: the one a confirmation run wrote on its way", at);
		return oracle_add_source(s, s->presnap.path);
	}
	sb_addf(&path, "%s/snap%05ld.bin", s->o->workdir, ++s->serial);
	ro.guard = s->guard;
	ro.stop_before = at;
	ro.snap_mode = mode;
	ro.snap_path = path.buf;
	/* a racy program can fault before the snapshot point: try again */
	for (int tries = 0; tries < (s->rep->flaky ? 8 : 2); tries++) {
		if (oracle_run_file(s, s->orig->path, &ro, 1, &first, &matches) < 0)
			goto out;
		if (first.status != RS_FAULT)
			break;
	}
	if (first.status != RS_CLEAN) {
		char d[600];
		sb_addf(s->err, "snapshot before event %ld: %s", at, describe(&first, d, sizeof(d)));
		goto out;
	}
	t = oracle_add_source(s, path.buf);
out:
	sb_release(&path);
	return t;
}

long oracle_fault_record(const struct trace *t)
{
	for (size_t i = 0; i < t->nrec; i++)
		if (t->rec[i].type == TR_FAULT)
			return (long)i;
	return -1;
}

const struct replay_result *oracle_foreign_fault(const struct oracle *s)
{
	return s->foreign.status == RS_FAULT ? &s->foreign : NULL;
}

/* Replay the trace at path with replay's placement ORACLE_RECHECK_RUNS
 * times side by side in two halves, the second only when the first
 * faulted every time (a race that faults in 3 of 4 runs misses in the
 * first half 7 times in ten, and faults in all 8 one time in ten);
 * *runs and *matches get the counts, which the phase and report count as
 * candidates.  0, or -1 when the workers are lost. */
static int run_in_halves(struct oracle *s, const char *path, int *runs, int *matches)
{
	struct replay_opts ro = REPLAY_OPTS_INIT;
	struct replay_result first;

	ro.guard = s->guard;
	*runs = *matches = 0;
	while (*runs < ORACLE_RECHECK_RUNS && *matches == *runs) {
		int half = ORACLE_RECHECK_RUNS / 2, m = 0;
		if (oracle_run_file(s, path, &ro, half, &first, &m) < 0)
			return -1;
		*runs += half;
		*matches += m;
	}
	if (s->ph)
		s->ph->candidates += *runs;
	s->rep->candidates += *runs;
	return 0;
}

int oracle_original_flaky(struct oracle *s, const char *steady)
{
	int runs, matches;

	if (run_in_halves(s, s->orig->path, &runs, &matches) < 0)
		return -1;
	s->rep->orig_runs += runs;
	s->rep->orig_faults += matches;
	s->rep->orig_rechecked = 1;
	oracle_log(s, "the original trace again, %s placement: %d/%d faulted (%s)", place_guard_name(s->guard),
		   matches, runs, matches < runs ? "flaky itself: a race" : steady);
	return matches < runs;
}

/* Clean candidates run once more while a fault looks steady: those that
 * ran clean in under RECHECK_CLEAN_SECS (a clean run costs milliseconds;
 * a faulting one, its teardown), RECHECK_CLEAN_MAX in a shrink
 * (oracle-int.h) */
#define RECHECK_CLEAN_SECS 0.5

int oracle_recheck_clean(struct oracle *s, struct job *jobs, size_t nj, const size_t *owner, int *faults,
			 int *reran)
{
	struct job *again;
	size_t *from, *self, n = 0;
	const char **names;
	int *got, hits = 0, ret = -1;

	if (s->reps != 1 || s->rep->flaky || s->rechecks_left <= 0)
		return 0;
	again = xcalloc(nj + 1, sizeof(*again));
	from = xcalloc(nj + 1, sizeof(*from));
	self = xcalloc(nj + 1, sizeof(*self));
	names = xcalloc(nj + 1, sizeof(*names));
	got = xcalloc(nj + 1, sizeof(*got));
	for (size_t j = 0; j < nj && (int)n < s->rechecks_left; j++)
		if (jobs[j].res.status == RS_CLEAN && jobs[j].res.seconds < RECHECK_CLEAN_SECS) {
			again[n] = jobs[j];
			memset(&again[n].res, 0, sizeof(again[n].res));
			names[n] = jobs[j].trace;
			self[n] = n;
			from[n++] = j;
		}
	if (!n) {
		ret = 0;
		goto out;
	}
	s->rechecks_left -= (int)n;
	double tb = now_sec();
	if (oracle_run_batch(s, again, n, self, names, got) < 0)
		goto out;
	for (size_t q = 0; q < n; q++) {
		reran[owner[from[q]]]++;
		hits += got[q];
	}
	oracle_log(s, "recheck of %zu clean candidate(s): %d faulted the second time (%.3f s)", n, hits,
		   now_sec() - tb);
	if (!hits) {
		ret = 0;
		goto out;
	}
	/* a candidate that ran clean then faulted: the fault or the candidate
	 * is flaky; the original's rate says which */
	int m = oracle_original_flaky(s, "steady: the candidate is flaky, not the fault");
	if (m < 0)
		goto out;
	if (!m) {
		s->rechecks_left = 0;   /* the fault is steady: no more rechecks */
		s->cand_flaky = 1;      /* but the states the phases start from are replayed */
		/* this one's first: when it misses too, the fault is flaky from
		 * here on, and the candidates that faulted when run again count */
		if ((ret = oracle_check_state(s, &s->phase_state)) <= 0)
			goto out;
	} else {
		s->rep->flaky = 1;
		flaky_repeats(s);
		oracle_log(s, "the fault is flaky from here on: each candidate runs %d times, %d fault(s) needed",
			   s->reps, s->need);
	}
	for (size_t q = 0; q < n; q++)
		faults[owner[from[q]]] += got[q];
	ret = 0;
out:
	free(again);
	free(from);
	free(self);
	free(names);
	free(got);
	return ret;
}

/*
 * A candidate ran clean, then faulted when run again, while the original
 * faulted every time (oracle_recheck_clean): cutting the trace can make
 * the fault flaky (a race that the launches around it made the program
 * lose every time).  A table phase then judges each candidate on one run
 * of a state that misses, keeps cuts that make it miss more, and
 * verify's back-off pays for them (the race sample on an H100,
 * 2026-12-07: one launch faulting 4 times in 5, a data phase of 9.5 s
 * whose cuts took it to 2 in 5, then the back-off: 18.6 s in all).  So
 * the state each later table phase starts from is replayed as the
 * original was (4 runs, 4 more when all faulted), each state once and
 * STATE_CHECK_MAX in a shrink: a miss makes the fault flaky from here
 * on, each candidate run by this state's rate.
 */
int oracle_check_state(struct oracle *s, const struct cand *state)
{
	struct strbuf path = STRBUF_INIT, err = STRBUF_INIT;
	int runs, matches, ret = 0;
	uint64_t h;

	if (!s->cand_flaky || s->rep->flaky || s->reps != 1 || s->fake.test || !state->n ||
	    s->state_checks >= STATE_CHECK_MAX || interrupt_signal())
		return 0;
	sb_addf(&path, "%s/state-check.bin", s->o->workdir);
	if (cand_write(state, path.buf, &err) < 0) {
		oracle_log(s, "the state this phase starts from was not replayed: %s", err.buf);
		goto out;
	}
	h = oracle_file_hash(path.buf);
	if (h == s->state_checked)
		goto out;
	s->state_checked = h;
	s->state_checks++;
	if (run_in_halves(s, path.buf, &runs, &matches) < 0) {
		ret = -1;
		goto out;
	}
	if (matches == runs) {
		oracle_log(s, "the state this phase starts from, %s placement: %d/%d faulted (steady)",
			   place_guard_name(s->guard), matches, runs);
		goto out;
	}
	ret = 1;
	s->rep->flaky = 1;
	flaky_repeats_at(s, (double)matches / runs);
	oracle_log(s, "the state this phase starts from, %s placement: %d/%d faulted (the original: every time): "
		   "the reduction made the fault flaky; from here on each candidate runs %d times, %d fault(s) needed",
		   place_guard_name(s->guard), matches, runs, s->reps, s->need);
out:
	unlink(path.buf);
	sb_release(&path);
	sb_release(&err);
	return ret;
}
