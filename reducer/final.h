/*
 * final.h - the end of a reduction (after the phase table): the final
 * confirmation of the best candidate, with its back-offs to the states the
 * phases left (the site check under compute-sanitizer, the rate check for
 * a flaky fault), and the check of repro.cu itself.  shrink.c calls it;
 * the phases never do.
 */
#ifndef GPUREDUCE_FINAL_H
#define GPUREDUCE_FINAL_H

#include "cand.h"
#include "shrink.h"

struct oracle;

/* The best candidate after each phase, to back off to. */
struct shrink_states {
	struct cand state[PH__COUNT];      /* one per phase at most (shrink-phases.h) */
	const char *name[PH__COUNT];
	int n;
	int cur;                  /* the state *best is (n - 1 until a back-off) */
	int verify_recoveries;    /* fresh pools for confirmation runs (--keep-going) */
	int site_pending;         /* final_verify left the site check to final_settle */
	int replay_stale;         /* final_repro adopted another state: replay's runs were of the one before */
};

/* Remember c as the state after phase `name` (a copy; name is kept). */
void states_save(struct shrink_states *ss, const char *name, const struct cand *c);
void states_release(struct shrink_states *ss);

/*
 * The "verify" phase: write *best to out_bin and confirm it; back off to
 * an earlier state when it does not fault, when it fails at another
 * sanitizer site than the base state, or when its rate fell.  Returns 0
 * when out_bin holds a confirmed candidate, 1 when a signal came (the
 * caller keeps *best: final_keep_interrupted), -1 otherwise (err says why).
 */
int final_verify(struct oracle *o, struct shrink_states *ss, struct cand *best, const char *out_bin);
/*
 * Build and run repro.cu as it will be emitted (opts->check_repro) and
 * make its count the reproduction figure, trying other placements and
 * earlier states when it does not fault as replay did (or, when the fault
 * turns out a race, the race's program at once).  0, or -1 on a write
 * error or when the workers are lost.
 */
int final_repro(struct oracle *o, struct shrink_states *ss, struct cand *best, const char *out_bin, int runs);
/*
 * How often the final state is confirmed (--confirm, else 5, 10 for a
 * flaky fault).  final_verify replays a steady fault fewer times when
 * repro.cu will be checked.
 */
int final_runs(struct oracle *o);
/*
 * How often repro.cu is run: --confirm, else 5, a flaky fault's too: its
 * repro.cu tries up to EMIT_RACE_TRIES times a run in one process
 * (emit.h), so one run stands for many of replay's.
 */
int final_repro_runs(struct oracle *o);
/*
 * After final_repro: the site check final_verify deferred so that the
 * sanitizer's run overlaps repro.cu's (backing off as final_verify would),
 * and replay's runs topped up to final_runs when repro.cu was not checked.
 * 1: *best changed (check repro.cu again), 0: nothing to do, -1: error.
 */
int final_settle(struct oracle *o, struct shrink_states *ss, struct cand *best, const char *out_bin);
/* A signal came: write *best (every state it held faulted) to out_bin as
 * the result, unconfirmed.  0, or -1 on a write error. */
int final_keep_interrupted(struct oracle *o, struct cand *best, const char *out_bin);

#endif
