/*
 * report.h - what a reduction measured (struct shrink_report): the
 * signature, the rates, the sizes before and after, one row per phase.
 * shrink.c fills it; the emitter (repro.cu's header), report_yaml.c and
 * the CLI read it, so they include this header rather than shrink.h.
 */
#ifndef GPUREDUCE_REPORT_H
#define GPUREDUCE_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include "shrink-phases.h"

struct shrink_phase {
	const char *name;
	size_t launches_before, launches_after;
	size_t buffers_before, buffers_after;
	uint64_t bytes_before, bytes_after;
	long candidates;
	long faulted_replays;   /* replay runs that faulted, crashed or timed out: each
				 * ends its worker, and a new one costs a CUDA context */
	double seconds;
	const char *outcome;    /* "kept", "reduced", "skipped: ..." */
};

struct shrink_report {
	/* signature */
	int code;
	char error[64];
	char kernel[512];
	int guard;               /* the placement replay confirmed the fault with */
	/* reproduction */
	int orig_runs, orig_faults;
	int orig_rechecked;       /* the original was replayed again after a clean candidate faulted on its
				  * second run (oracle_recheck_clean): its rate is measured */
	int final_runs, final_faults;
	/* the emitted repro.cu itself, built and run by check_repro */
	int repro_checked;       /* 1: built and run (repro_faults of repro_runs) */
	int repro_runs, repro_faults;
	int repro_ok;            /* faulted at the rate replay did: the repro reproduces */
	int repro_guard;         /* the placement repro.cu uses (the one that reproduced) */
	int repro_attempts;      /* programs built (placements x states tried) */
	char repro_why[400];     /* not built: why; did not reproduce: what was tried */
	int flaky;
	/* sizes */
	size_t orig_launches, orig_records;
	uint64_t orig_bytes;
	size_t final_launches, final_buffers;
	uint64_t final_bytes;
	/* work */
	long candidates, cache_hits, workers_spawned;
	int devices;             /* GPUs the workers ran on */
	long slipped;           /* candidates that faulted differently (rejected) */
	double seconds;
	double one_launch_seconds; /* when a faulting one-launch candidate was first found; 0: never */
	struct shrink_phase phase[PH__COUNT];   /* in the order they ran; each row of the
						 * phase table (shrink-phases.h) at most once */
	int nphases;
	char note[512];         /* why something was skipped / backed off */
	char backed_off_to[32]; /* the phase whose end state was kept after a site check failed */
	long site_runs;         /* compute-sanitizer runs */
	double site_seconds;    /* their wall time (some overlap other work) */
	int phase_failures;     /* phases ended by lost workers (--keep-going) */
	long start_failures;    /* replay workers that failed to start */
	/* relocation coverage of the final confirmation's first run (issue 22) */
	int rel_have;
	long rel_ptr_words, rel_stray_words, rel_tmaps_encoded, rel_tmaps_word0;
	double outage_seconds;  /* waited for workers to start again (--keep-going) */
	int infra_failed;       /* replay workers could not run (no GPU, driver...) */
	int write_failed;       /* errno of a trace shrink could not write (a full disk), 0 none */
	int kept_faulted;       /* nothing confirmed, but a state that faulted once is in out_bin (final.c no_fault) */
	int time_limited;       /* --time-limit ended the reduction early: the best so far */
	int interrupted;        /* SIGINT/SIGTERM (interrupt.h) ended it: the signal; the
				 * best state so far is written unconfirmed */
	char site[700];         /* compute-sanitizer site of the slice, when checked */
	int site_confirmed;     /* the final trace faults at that same site */
	char *final_sanitizer;  /* compute-sanitizer output for the final trace, when run (malloc'd; caller frees) */
};

#endif
