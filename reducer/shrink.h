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

struct strbuf;
struct trace;

enum shrink_strategy {
	STRATEGY_FULL = 0,      /* warm parallel workers, slicing, all phases */
	STRATEGY_BASELINE = 1   /* fresh process per candidate, plain ddmin over launches */
};

struct shrink_opts {
	int jobs;               /* parallel workers */
	int strategy;
	double time_limit;      /* seconds for the whole reduction; 0: none */
	double cand_timeout;    /* seconds per candidate */
	int confirm_runs;       /* runs of the final candidate */
	int quiet;
	int progress_tty;       /* live progress line on stderr */
	const char *workdir;    /* where candidate files go */
	int keep_work;          /* --keep-work: keep every candidate file (else each is
				 * removed once tested: the work folder stays bounded) */
	int guard;              /* -1: try end, start, none in turn */
	int orig_runs;          /* replays of the original to measure its rate (0: max(4, jobs)) */
	int sig_code_only;      /* --signature=code: any kernel with the same error counts */
	int no_site_check;      /* skip the compute-sanitizer site comparison at the end */
	int sig_site;           /* --signature=site: every accepted candidate also runs under
				 * compute-sanitizer and must fail at the original's site */
	int keep_going;         /* --keep-going: a phase whose workers are lost ends, the
				 * next runs with fresh workers (default: stop there) */
	double keep_wait;       /* --keep-going=S: how long a pool waits for workers to
				 * start again before its phase counts as lost */
	const char *log_path;   /* --log: one line per replay job and sanitizer run */
	int cut_buffers;        /* --cut-buffers: run the sizes phase (off by default: on the
				 * H200 it cost 5-25 s a shrink, and its site check sees only
				 * compute-sanitizer's first report) */
	/* Build the repro.cu emitted for the trace file `bin` with placement
	 * `guard` (enum guard_mode) and run it `runs` times: *faults gets the
	 * runs that faulted with the signature.  Returns 0; 1 when no compiler
	 * or driver is at hand (nothing checked; why says so); -1 when it did not build or
	 * could not run (why says).  NULL: the emitted program is not checked. */
	int (*check_repro)(void *arg, const char *bin, int guard, int runs, int *faults,
			   struct strbuf *why);
	void *check_arg;
	/* Start building the repro.cu of the trace file `bin` (placement
	 * `guard`) while the final confirmation runs, for check_repro to use
	 * if it emits the same program (NULL: not done). */
	void (*prebuild_repro)(void *arg, const char *bin, int guard);
};

/*
 * Reduce `orig` and write the final candidate as the trace `out_bin`.
 * Returns 0 when out_bin holds a candidate that faulted with the signature
 * in its final confirmation, -1 otherwise (err says why: no fault in the
 * trace, fault does not reproduce in replay (what was tried, what replay
 * saw), no workers...).
 */
int shrink_run(const struct trace *orig, const struct shrink_opts *o, const char *out_bin,
	       struct shrink_report *rep, struct strbuf *err);

/* Print the phase table. */
void shrink_print_report(FILE *f, const struct shrink_report *rep);

#endif
