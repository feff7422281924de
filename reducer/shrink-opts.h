/*
 * shrink-opts.h - struct shrink_opts, the reduction's options, on their
 * own: the phases (phase-*.c), the oracle and the commands read them
 * without the driver's entry points (shrink.h).
 */
#ifndef GPUREDUCE_SHRINK_OPTS_H
#define GPUREDUCE_SHRINK_OPTS_H

#include "shrink-phases.h"

struct strbuf;

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
	/* --phases/--skip-phases: PHASE_SEL_* per row of the phase table
	 * (shrink-phases.h); all PHASE_SEL_DEFAULT (0) unless chosen */
	unsigned char phase_sel[PH__COUNT];
};

#endif
