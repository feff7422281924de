/*
 * oracle-int.h - the oracle's own state, shared by oracle.c (testing,
 * workers, bookkeeping), oracle-confirm.c (replays of the original and
 * of states) and oracle-san.c (compute-sanitizer runs).  Nothing outside
 * those three files includes it: phases use oracle.h.
 */
#ifndef GPUREDUCE_ORACLE_INT_H
#define GPUREDUCE_ORACLE_INT_H

#include <stdio.h>

#include "../common/child.h"
#include "../common/strbuf.h"
#include "../replay/pool.h"
#include "../replay/replay.h"
#include "cand.h"
#include "oracle.h"
#include "shrink.h"

#define ORACLE_MAX_SOURCES 64
/* clean candidates a steady-looking fault's shrink runs a second time
 * (oracle_recheck_clean) */
#define RECHECK_CLEAN_MAX 12
/* states oracle_check_state replays in a shrink */
#define STATE_CHECK_MAX 2

struct cache_ent {
	uint64_t hash;
	int faults, runs;
	int guard;                    /* the placement it ran with */
	struct replay_result *match;  /* its first run that faulted with the signature, or NULL */
};

struct site_ent {
	uint64_t hash;
	char site[700];
	char *output;
};

/* A compute-sanitizer run in the background (bg_start, bg_collect). */
struct bg_san {
	struct child ch;
	struct strbuf bin, out;   /* the trace it runs, the file its output goes to */
	uint64_t hash;            /* bin's content (oracle_file_hash) */
	int started, collected;
	double t0;
	char why[300];            /* no site: why (no_site_why, or why it did not start) */
};

struct oracle {
	const struct trace *orig;
	const struct shrink_opts *o;
	struct shrink_report *rep;
	struct pool *pool;
	struct strbuf *err;
	struct oracle_fake fake;  /* a fake oracle when fake.test is set */
	double t0;
	long serial;
	long fault_event;         /* oracle_confirm: the faulting launch */
	int reps;                 /* runs per candidate (flaky: > 1) */
	int need;                 /* faults needed among reps */
	int rechecks_left;        /* clean candidates oracle_recheck_clean may still run again */
	/* a candidate ran clean, then faulted, and the original faulted every
	 * time (oracle_recheck_clean): the states the table phases start from
	 * are replayed (oracle_check_state), STATE_CHECK_MAX of them at most */
	int cand_flaky;
	int state_checks;
	uint64_t state_checked;   /* the content hash of the last one replayed */
	struct cand phase_state;  /* the state the current table phase started from (else empty) */
	int guard;
	struct trace *src[ORACLE_MAX_SOURCES];
	int nsrc;
	struct cache_ent *cache;
	size_t ncache, acache;
	struct shrink_phase *ph;  /* current phase */
	void **owned;             /* argument buffers made by phases; freed at the end */
	size_t nowned, aowned;
	int infra_failed;
	int winding_down;        /* oracle_wind_down: the pool is lazy */
	int prebuild_each;       /* oracle_prebuild_each: candidates tested alone get repro.cu built ahead */
	long spawned_before_end; /* workers the pool had started when verify began (-1: not yet) */
	long stopped_released;   /* runs that ended a worker, in pools released before this one */
	long stopped_at_phase;   /* runs_stopped() when the current phase began */
	int kernel_from_replay;   /* the capture could not name the faulting kernel (a graph) */
	/* oracle_confirm that failed: the first placement's fault in another
	 * kernel, before the captured one (status RS_FAULT), else status 0 */
	struct replay_result foreign;
	FILE *log;                /* --log */
	int have_san;             /* compute-sanitizer found and the site check wanted */
	char ref_site[700];       /* --signature=site: the original's site (diagnose_site_rel) */
	int have_ref;
	/* the base state's (slice's) compute-sanitizer run, started in the
	 * background after the slice and collected once, when first needed */
	struct bg_san base;
	const char *base_name;    /* the state it runs (for the log) */
	int base_have;
	char base_site[700];
	char *base_output;
	/* the final trace's run, started beside its confirmation runs */
	struct bg_san pre;
	struct site_ent *sites;   /* sanitizer sites found, by trace file content */
	size_t nsites, asites;
	/* the slice's snapshot, taken beside the confirmation runs (issue 26:
	 * a round of replays fewer); oracle_snapshot takes it when it asks for
	 * the same event, mode and placement */
	struct {
		char *path;
		long at;
		int mode, guard, ok, used;
	} presnap;
};

/* oracle_run_file whose first run has the options `snap` instead (a
 * snapshot written on its way to the fault: snap_go_on, replay.h);
 * *snapped says whether it was written.  snap NULL: oracle_run_file. */
int oracle_run_file_snap(struct oracle *s, const char *path, const struct replay_opts *opts, int n,
			 const struct replay_opts *snap, int *snapped, struct replay_result *first, int *matches);

/* The state a table phase starts from, when a candidate turned out
 * flaky while the original did not (oracle-confirm.c): replayed as the
 * original is re-checked; a miss makes the fault flaky from here on.
 * Called by oracle_phase_begin, and by oracle_recheck_clean on the
 * current phase's.  1 when it made the fault flaky, 0 when not (or not
 * replayed), -1 when the workers are lost. */
int oracle_check_state(struct oracle *s, const struct cand *state);

/* Run n candidate jobs side by side, log each (paths[owner[j]] names
 * job j's candidate), and count the signature's faults of each one's
 * candidate (faults[owner[j]]; another fault counts as slipped).  0, or
 * -1 when the workers are lost. */
int oracle_run_batch(struct oracle *s, struct job *jobs, size_t n, const size_t *owner, const char *const *paths,
		     int *faults);

/* The run faulted with the captured fault's signature. */
int oracle_sig_match(const struct oracle *s, const struct replay_result *r);

/*
 * oracle_test's second look at a steady-looking fault (oracle-confirm.c):
 * a race can fault in both of confirm's runs and then lose in a
 * candidate's single run, which is judged clean, and the reduction goes
 * astray (the race sample: 8 launches left at 2, 120 data candidates,
 * 40 s).  Candidates of jobs[0..nj) that ran clean, quickly, are run once
 * more, side by side (the first RECHECK_CLEAN_MAX of the shrink); when one
 * faults with the signature the original is replayed again for its rate,
 * and when that misses too the fault is flaky from here on (s->reps,
 * s->need as confirm sets them for a flaky original) and the candidates
 * that faulted count (faults[owner]).  A fault the original keeps every
 * time ends the rechecks.  reran[owner] counts the runs added.  Returns 0,
 * or -1 when the workers are lost.
 */
int oracle_recheck_clean(struct oracle *s, struct job *jobs, size_t nj, const size_t *owner, int *faults,
			 int *reran);

/* oracle-san.c */
void oracle_san_init(struct oracle *s);
void oracle_san_release(struct oracle *s);

#endif
