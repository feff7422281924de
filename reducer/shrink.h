/*
 * shrink.h - the reduction driver: from a captured trace to the smallest
 * candidate that still faults the same way.
 *
 * Phases (each recorded in the report): confirm the fault in replay and
 * measure its reproduction rate -> slice at the fault (snapshot the buffers
 * the faulting launch reaches; one-launch candidate) -> if slicing loses the
 * fault, the shortest faulting suffix (snapshot of all live buffers at an
 * earlier launch) and ddmin over its launches -> buffer contents (zeros, a
 * seeded fill, or ddmin over the chunks that matter) -> grid -> scalar
 * parameters -> buffer sizes (--cut-buffers; cuts checked by
 * compute-sanitizer) -> a final confirmation.  Where compute-sanitizer is
 * at hand the final state must fail at the slice's site (PC, access, and
 * where the address lies in terms of the parameters); if it does not, the
 * state after each phase is checked and the latest one that still fails
 * there is kept.
 *
 * A candidate is interesting when replay faults with the same signature:
 * same CUresult (700 and 717 count as one bad address) and same kernel;
 * with --signature=site also the same sanitizer site as the original.
 * Flaky originals are tested repeatedly per candidate and must keep a rate
 * near the original's.
 */
#ifndef GPUREDUCE_SHRINK_H
#define GPUREDUCE_SHRINK_H

#include <stdint.h>
#include <stdio.h>

#include "report.h"
#include "shrink-opts.h"

struct strbuf;
struct trace;

/*
 * Reduce `orig` and write the final candidate as the trace `out_bin`.
 * Returns 0 when out_bin holds a candidate that faulted with the signature
 * in its final confirmation, -1 otherwise (err says why: no fault in the
 * trace, fault does not reproduce in replay (what was tried, what replay
 * saw), no workers...).
 */
int shrink_run(const struct trace *orig, const struct shrink_opts *o, const char *out_bin,
	       struct shrink_report *rep, struct strbuf *err);

/* Phase i's share of the reduction's seconds (0 to 1), and the seconds
 * no phase accounts for (the workers' start-up, states written between
 * phases): shrink's table, repro.yaml and `make bench` print them. */
double shrink_phase_share(const struct shrink_report *rep, int i);
double shrink_other_seconds(const struct shrink_report *rep);

/* Print the phase table, with each phase's share of the time. */
void shrink_print_report(FILE *f, const struct shrink_report *rep);

#endif
