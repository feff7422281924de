/*
 * oracle.h - testing reduction candidates: "does this candidate still
 * fault the way the original does?"
 *
 * The oracle owns everything a phase needs to ask that question and
 * nothing about how a phase builds its candidates: writing candidate
 * files under the work directory, the outcome cache by content hash, the
 * worker pool (pool.h; replaced by a fresh one with --keep-going), the
 * signature (error, kernel, and with --signature=site the sanitizer site),
 * the repeats a flaky original needs, the compute-sanitizer runs and their
 * site cache (oracle-san.c), and the report's bookkeeping of phases and
 * candidates (the --log lines and the progress lines on stderr).
 *
 * Phases (phase.h) see it only through this API, so the unit tests run
 * them against a fake (oracle_new_fake): a function that judges candidates
 * in memory, and optionally one that hands out snapshot traces.  A fake
 * oracle has no pool, no files and no compute-sanitizer.
 *
 * Library code: functions return error codes and never print to stdout.
 */
#ifndef GPUREDUCE_ORACLE_H
#define GPUREDUCE_ORACLE_H

#include <stddef.h>
#include <stdint.h>

#include "cand.h"

struct oracle;
struct replay_opts;
struct replay_result;
struct shrink_opts;
struct shrink_phase;
struct shrink_report;
struct strbuf;
struct trace;

/* A fake oracle for unit tests.  test: write 1/0 per candidate to
 * interesting; 0, or -1 (as if the workers were lost).  snapshot (may be
 * NULL: every snapshot fails): the state before record `at` of the
 * original (mode: enum snap_mode); the trace stays the caller's.
 * fault_event: what oracle_fault_event says (the faulting launch's
 * record index in the original). */
struct oracle_fake {
	int (*test)(void *arg, struct cand *const *cands, size_t k, int *interesting);
	const struct trace *(*snapshot)(void *arg, long at, int mode);
	void *arg;
	long fault_event;
};

/* The real oracle for reducing orig (rep is zeroed by the caller and
 * filled as the reduction goes; err gets the reason of any failure).
 * Its clock starts now.  Never NULL; oracle_start before testing. */
struct oracle *oracle_new(const struct trace *orig, const struct shrink_opts *opts, struct shrink_report *rep,
			  struct strbuf *err);
/* A fake oracle (see struct oracle_fake; copied).  Never NULL. */
struct oracle *oracle_new_fake(const struct trace *orig, const struct shrink_opts *opts,
			       struct shrink_report *rep, struct strbuf *err, const struct oracle_fake *fake);
/* Stops the pool (oracle_finish) and any background sanitizer run, closes
 * the log, frees the sources and kept bytes.  NULL is fine. */
void oracle_release(struct oracle *o);

/* ---- the signature and the workers ---------------------------------------- */

/* Before the first test: find compute-sanitizer, open --log, start the
 * worker pool.  0; -1 with err when an option cannot be honoured (no
 * compute-sanitizer for --signature=site, a log that cannot be written);
 * -2 with err when no worker came up (oracle_failed is then 1). */
int oracle_start(struct oracle *o);
/* After the last test: stop the pool and add its counts to the report. */
void oracle_finish(struct oracle *o);
/* Replace the trace being reduced (graph launches expanded: expand_graphs);
 * kernel_from_replay: the capture could not name the faulting kernel, so
 * the confirmation takes the one replay reports. */
void oracle_set_orig(struct oracle *o, const struct trace *t, int kernel_from_replay);
/* After oracle_confirm failed: the fault replay found instead, in another
 * kernel and before the launch the program faulted in (the first
 * placement's), or NULL. */
const struct replay_result *oracle_foreign_fault(const struct oracle *o);
/*
 * Confirm the fault in replay: try the placements (enum guard_mode) in
 * turn, keep the first that faults with the signature, measure its rate
 * (flaky: more runs) and set the repeats per candidate.  Records the phase
 * "confirm".  0, or -1 (err says what was tried).
 */
int oracle_confirm(struct oracle *o);
/* --signature=site: take the original's own sanitizer site as the reference. */
void oracle_take_reference_site(struct oracle *o);
/* Open the trace file at path as a source the oracle owns (candidates
 * may point into it until oracle_release).  NULL with err. */
struct trace *oracle_add_source(struct oracle *o, const char *path);
/* The index of t's FAULT record, or -1 when it holds none. */
long oracle_fault_record(const struct trace *t);
/* The faulting launch's event (record index) that oracle_confirm saw. */
long oracle_fault_event(const struct oracle *o);
int oracle_guard(const struct oracle *o);
/* Replay with another placement from here on (the report's too): shrink's
 * final confirmation found the reduced trace faults more often with it. */
void oracle_set_guard(struct oracle *o, int guard);
const struct trace *oracle_orig(const struct oracle *o);
const struct shrink_opts *oracle_opts(const struct oracle *o);
struct shrink_report *oracle_report(struct oracle *o);
struct strbuf *oracle_err(struct oracle *o);

/* ---- testing ------------------------------------------------------------------ */

/*
 * Test k candidates (each as many times as a flaky original needs);
 * interesting[i] = 1 when candidate i faulted with the signature often
 * enough.  Counts them in the report and the current phase.  Returns 0,
 * or -1 when the time limit passed or the workers are gone (then nothing
 * is interesting).
 */
int oracle_test(struct oracle *o, struct cand *const *cands, size_t k, int *interesting);
/* One candidate: 1 interesting, 0 not, -1 as oracle_test. */
int oracle_test_one(struct oracle *o, struct cand *c);
/*
 * Test the nt candidates one after the other, the likeliest first, until
 * one is interesting: it replaces *best.  (Side by side, every candidate
 * after the winner that faulted too would cost a worker's new context on
 * a GPU for nothing.)  The others are released.  Returns the winner's
 * index, -1 when none was interesting, -2 when testing stopped.
 */
int oracle_test_pick_first(struct oracle *o, struct cand *cs, int nt, struct cand *best);
/*
 * Test a chain cs[0..chain) in which each candidate adds one change to the
 * one before.  Each fault costs a worker's new context on a GPU, and a
 * chain whose last step (every change) faults needs no other, so with
 * *top_first that step goes alone first, then, when it does not fault,
 * the steps below it as one batch; without, the whole chain as one batch.
 * *top_first is then set for the caller's next chain: 1 when this one
 * faulted whole (the changes so far do not matter), 0 when it broke (one
 * batch, not a clean round more).  *best becomes the last candidate of the
 * longest prefix that is interesting; *kept is its length (0: none).
 * Returns 0, or -1 when testing stopped (as oracle_test; *kept is 0).  cs
 * is released either way.
 */
int oracle_test_chain(struct oracle *o, struct cand *cs, size_t chain, int *top_first, struct cand *best,
		      size_t *kept);
/* Build one candidate per ddmin mask with apply(d, mask, n, out), test
 * them as one batch (oracle_test), release them. */
typedef void (*oracle_apply_fn)(const void *d, const unsigned char *mask, size_t n, struct cand *out);
int oracle_test_masks(struct oracle *o, const void *d, oracle_apply_fn apply, const unsigned char *const *masks,
		      size_t k, size_t n, int *res);
/* ddmin's split width: 2 for the baseline, else the candidates the pool
 * can test side by side. */
size_t oracle_dd_width(const struct oracle *o);
/* The state before record `at` of the trace being reduced, replayed and
 * written as a new source trace (owned by the oracle).  NULL with err. */
const struct trace *oracle_snapshot(struct oracle *o, long at, int mode);
/* Run the trace file at path n times with opts: *matches counts the runs
 * that faulted with the signature, *first gets the first match (else the
 * first run).  0, or -1 when the workers are lost. */
int oracle_run_file(struct oracle *o, const char *path, const struct replay_opts *opts, int n,
		    struct replay_result *first, int *matches);
/*
 * A fault that looked steady (both of confirm's runs faulted) is in doubt
 * (a clean candidate faulted when run again, oracle_recheck_clean; a
 * single-try repro.cu faulted in some runs only): replay the original
 * trace with replay's placement, ORACLE_RECHECK_RUNS times side by side
 * in two halves, the second only when the first faulted every time (each
 * faulting run ends its worker, and the next waits for a new context).  A
 * miss means the original itself is flaky (a race); a fault every time
 * means it is steady, and `steady` (for the log) says what was flaky
 * instead.  The runs count towards the original's rate
 * (rep->orig_rechecked is set).  1 flaky, 0 steady, -1 when the workers
 * are lost.
 */
#define ORACLE_RECHECK_RUNS 8
int oracle_original_flaky(struct oracle *o, const char *steady);
/* 1 when a candidate with the content of the file at path ran earlier in
 * this reduction, with the current placement, and faulted with the
 * signature: *res gets that run's result.  0 otherwise (also for a fake
 * oracle, which keeps no results). */
int oracle_recall(struct oracle *o, const char *path, struct replay_result *res);
/* 1 when a candidate with the content of the file at path faulted with
 * the signature earlier in this reduction, under any placement. */
int oracle_faulted_before(struct oracle *o, const char *path);
/* Run each of the n trace files `runs` times as candidates; got[i] counts
 * signature matches of file i.  0, or -1 when the workers are lost. */
int oracle_run_files(struct oracle *o, char *const *paths, int n, int runs, int *got);
/* Run one trace file `runs` times under each of the n placements
 * guards[0..n), all in one batch (side by side on the workers); got[i]
 * counts signature matches under guards[i], first[i] gets its first
 * matching result (else its first).  0, or -1 when the workers are lost. */
int oracle_run_file_guards(struct oracle *o, const char *path, const int *guards, int n, int runs,
			   int *got, struct replay_result *first);

/* From now on (on: 1), every candidate tested alone has its repro.cu
 * built ahead (shrink_opts.prebuild_repro) while it runs: in the last
 * phase, the one kept last is the final trace, and the repro.cu check
 * then finds its program built.  0 turns it off. */
void oracle_prebuild_each(struct oracle *o, int on);
/* 1 when the time limit passed or a signal came (the report says which). */
int oracle_over_time(struct oracle *o);
/* The reduction's last runs (verify on): a worker that stops is replaced
 * only when a run waits for it, so that the built repro.cu's runs and the
 * sanitizer do not queue behind replacements' context creation.
 * GPUREDUCE_POOL_LAZY=0 turns it off (to measure it side by side). */
void oracle_wind_down(struct oracle *o);
/* 1 when the workers are lost (until oracle_recover). */
int oracle_failed(const struct oracle *o);
/* oracle_over_time || oracle_failed: a phase should stop trying. */
int oracle_stopped(struct oracle *o);
/* --keep-going: after lost workers, a fresh pool.  1 when testing can go on. */
int oracle_recover(struct oracle *o);

/* ---- bookkeeping ---------------------------------------------------------------- */

/* Sizes of a candidate as the phase table counts them. */
void oracle_measure(const struct cand *c, size_t *launches, size_t *buffers, uint64_t *bytes);
/* Open a phase in the report (sizes from c, when not NULL) and say so on stderr. */
struct shrink_phase *oracle_phase_begin(struct oracle *o, const char *name, const struct cand *c);
void oracle_phase_end(struct oracle *o, const struct cand *c, const char *outcome);
/* The current phase ended on an error: its time, its sizes unchanged. */
void oracle_phase_abandon(struct oracle *o, const char *outcome);
/* The phase now open (NULL before the first). */
struct shrink_phase *oracle_phase(struct oracle *o);
/* Seconds since the oracle was made. */
double oracle_elapsed(const struct oracle *o);
/* A copy of n bytes (plus 8 zero bytes) that lives as long as the oracle:
 * candidates may keep pointers to it. */
uint8_t *oracle_keep_bytes(struct oracle *o, const uint8_t *src, size_t n);
/* One line in the --log file, and a progress line on stderr (unless quiet). */
void oracle_log(struct oracle *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void oracle_progress(struct oracle *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* ---- compute-sanitizer (oracle-san.c) ------------------------------------------------ */

/* compute-sanitizer is at hand and the site check is wanted. */
int oracle_have_san(const struct oracle *o);
/* The content hash of a trace file (0 when it cannot be read). */
uint64_t oracle_file_hash(const char *path);
/*
 * Run compute-sanitizer on the n trace files (side by side, cached by
 * content) and write each one's site (diagnose_site_rel) into sites[i];
 * "" when the run saw no error.  outputs (may be NULL) gets each run's
 * output (malloc'd).  With stop_site, the first file found failing there
 * ends the runs after it.  Returns how many sites were found.
 */
int oracle_sanitize(struct oracle *o, char *const *paths, size_t n, char (*sites)[700], char **outputs,
		    const char *stop_site);
/* Start the base state's run in the background (c, the state called
 * `name`); oracle_base_site collects it.  A run started before and not
 * collected (the slice starts one on its candidate before knowing whether
 * it faults) is stopped first. */
void oracle_base_start(struct oracle *o, const struct cand *c, const char *name);
int oracle_base_started(const struct oracle *o);
/* The base state's site (waiting for its run); NULL when it was not run
 * or saw no error (oracle_base_why says which). */
const char *oracle_base_site(struct oracle *o);
const char *oracle_base_why(const struct oracle *o);
/* The base state's sanitizer output (NULL: none), its trace file, its hash. */
const char *oracle_base_output(const struct oracle *o);
const char *oracle_base_bin(const struct oracle *o);
uint64_t oracle_base_hash(const struct oracle *o);
/* Start the final trace's run beside its confirmation runs (not when it
 * is the base state's); oracle_sanitize collects it. */
void oracle_prefetch_start(struct oracle *o, const struct cand *c);

#endif
