/*
 * phase.h - the reduction phases, one file each (phase-NAME.c), run in
 * the order of the phase table (shrink-phases.h), which also names them:
 * a phase opens its report row with phase_name(PH_NAME).
 *
 * A phase takes the oracle (oracle.h: it tests candidates and keeps the
 * report), the options and the best candidate so far, and leaves in *best
 * a candidate that the oracle found interesting (or *best unchanged).  It
 * opens and closes its own row of the report (oracle_phase_begin/_end) and
 * stops early when oracle_stopped says so.  Phases share nothing else, so
 * each one is unit-tested against a fake oracle (tests/unit/test_phases.c).
 */
#ifndef GPUREDUCE_PHASE_H
#define GPUREDUCE_PHASE_H

#include <stddef.h>

struct cand;
struct oracle;
struct shrink_opts;

/* Slice at the fault: a snapshot of the buffers the faulting launch
 * reaches, the launch, the fault record.  1 when that one-launch
 * candidate faults (it is then *best), 0 when not (*best unchanged).
 * When the data phase's guess (phase_data_guess_test) or its chain of
 * zeros on it (phase_data_plan) faulted first and was kept, *plain
 * (CAND_INIT on entry; the caller releases it)
 * gets the slice as captured, not replayed: compute-sanitizer's base
 * state, so that a fault the zeros moved is still seen as moved. */
int phase_slice(struct oracle *o, const struct shrink_opts *opts, struct cand *best, struct cand *plain);
/* The shortest run of launches ending at the fault that faults from a
 * snapshot of everything live before it.  1 when found (*best), else 0. */
int phase_suffix(struct oracle *o, const struct shrink_opts *opts, struct cand *best);
/* ddmin over the launches of *best, the faulting (last) one fixed
 * ("ddmin-launches"); the full strategy first drops every launch that
 * shares no buffer with the fault. */
void phase_launches(struct oracle *o, const struct shrink_opts *opts, struct cand *best);
/* Buffer contents: zeros, a seeded fill, or ddmin over the chunks that
 * matter; 8-byte words that point into a buffer stay. */
void phase_data(struct oracle *o, const struct shrink_opts *opts, struct cand *best);
/* The candidates phase_data would test first if *state were its input,
 * into out[0..max) (each to cand_release; max at most
 * PHASE_DATA_PLAN_MAX): how many, 0 when none can be planned (no copy, a
 * copy that holds pointers or is big).  out[0..*chain) is a chain (each
 * adds one change to the one before: the run of zeros, or one copy's
 * zeros), tested last step first; the rest (one copy's fill) is asked
 * only when that step does not fault.  The slice tests the chain's last
 * step alone first and keeps it when it faults (one fault where the slice
 * and the data phase's first batch would have cost one each); when not,
 * the slice's own candidate goes out with the rest beside it, and the
 * data phase starts with their outcomes in the oracle's cache (issue
 * 26).  GPUREDUCE_SHRINK_SERIAL=1: 0. */
#define PHASE_DATA_PLAN_MAX 16
size_t phase_data_plan(const struct cand *state, struct cand *out, size_t max, size_t *chain);
/* The data phase's first guess on *state, for all its copies at once:
 * each copy still as captured becomes zeros except its pointer words
 * (*bare) and also its outliers (*guess: an index table's -1 padding, a
 * 2^40 sentinel), each to cand_release.  Returns 0 when there is no such
 * guess (no copy it would change, or GPUREDUCE_SHRINK_SERIAL=1), 1 when
 * *bare is set (no outliers: *guess untouched), 2 when both are. */
int phase_data_guess(const struct cand *state, struct cand *bare, struct cand *guess);
/* Test them alone, bare first (a fault that does not need the data
 * costs one fault, not two), then the whole guess; the first that
 * faults becomes *best, the state before going to *was when given (else
 * released).  1 when one faulted, 0 when not (or none), -1 when lost.
 * The slice calls it before its plan; the data phase, when the slice
 * kept one, cuts the outlier words it kept down (ddmin) and otherwise
 * calls it first itself. */
int phase_data_guess_test(struct oracle *o, struct cand *best, struct cand *was);
/* The faulting launch's grid, one dimension at a time, down to the
 * smallest size that still faults (one size a round, 3/10 up the range). */
void phase_grid(struct oracle *o, const struct shrink_opts *opts, struct cand *best);
/* The faulting launch's scalar parameters: 0, then 1. */
void phase_scalars(struct oracle *o, const struct shrink_opts *opts, struct cand *best);
/* --cut-buffers: buffers cut to smaller sizes, each cut checked by
 * compute-sanitizer against the base state's site. */
void phase_sizes(struct oracle *o, const struct shrink_opts *opts, struct cand *best);

#endif
