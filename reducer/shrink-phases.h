/*
 * shrink-phases.h - the phase table: every row a reduction can put in its
 * report (confirm, the base-state phases, the table's phases, verify,
 * repro.cu), in the order they run, with the one name each is known by in
 * the log, the progress lines, the phase table, repro.yaml and repro.cu's
 * header, and what --phases/--skip-phases may select.  The rows live in
 * shrink-phases.c; the driver (shrink.c) runs them, and every phase opens
 * its report row with phase_name(its id): no phase types its name.
 *
 * To add a phase: write reducer/phase-NAME.c (phase.h), add one X() line
 * below at the place it runs (the enum, the name, the flags and the help
 * line follow from it), and give it a test against the fake oracle in
 * tests/unit/test_phases.c.  The report's rows and the saved states are
 * sized from this table: nothing else counts phases.
 */
#ifndef GPUREDUCE_SHRINK_PHASES_H
#define GPUREDUCE_SHRINK_PHASES_H

#include <stddef.h>

struct strbuf;

/* flags */
#define PHASE_STEP        (1u << 0)  /* always runs (not selectable): confirm, verify, repro.cu */
#define PHASE_BASE        (1u << 1)  /* builds the base state (run by shrink.c itself) */
#define PHASE_BASELINE    (1u << 2)  /* the table phase runs in the baseline strategy too */
#define PHASE_CUT_BUFFERS (1u << 3)  /* runs only with --cut-buffers (or named in --phases) */

/* X(ID, "name", function or NULL, flags, "one-line help"), in run order;
 * a function is there for the table phases shrink.c runs in a loop */
#define SHRINK_PHASES(X) \
	X(CONFIRM,  "confirm",        NULL,          PHASE_STEP, \
	  "replay the original: placement, fault rate, repeats per candidate") \
	X(SLICE,    "slice",          NULL,          PHASE_BASE, \
	  "one launch from a snapshot of the buffers the faulting launch reaches") \
	X(SUFFIX,   "suffix",         NULL,          PHASE_BASE, \
	  "if the slice loses the fault: the shortest faulting run of launches before it") \
	X(LAUNCHES, "ddmin-launches", NULL,          PHASE_BASE, \
	  "ddmin over the launches of the suffix (or the whole trace)") \
	X(DATA,     "data",           phase_data,    PHASE_BASELINE, \
	  "buffer contents: zeros, a seeded fill, or only the chunks the fault needs") \
	X(GRID,     "grid",           phase_grid,    PHASE_BASELINE, \
	  "the faulting launch's grid, each dimension down to the smallest that faults") \
	X(SCALARS,  "scalars",        phase_scalars, PHASE_BASELINE, \
	  "the faulting launch's scalar parameters: 0, then 1") \
	X(SIZES,    "sizes",          phase_sizes,   PHASE_CUT_BUFFERS, \
	  "buffer sizes cut, each cut checked by compute-sanitizer (--cut-buffers)") \
	X(VERIFY,   "verify",         NULL,          PHASE_STEP, \
	  "the final confirmation runs and the sanitizer site check") \
	X(REPRO,    "repro.cu",       NULL,          PHASE_STEP, \
	  "repro.cu built and run (5 times, 10 for a flaky fault)") \
	X(SITE,     "site",           NULL,          PHASE_STEP, \
	  "the sanitizer site check, overlapping repro.cu's runs; a back-off re-checks repro.cu")

enum phase_id {
#define PHASE_ENUM_(id, name, fn, flags, help) PH_##id,
	SHRINK_PHASES(PHASE_ENUM_)
#undef PHASE_ENUM_
	PH__COUNT
};

struct oracle;
struct cand;
struct shrink_opts;
typedef void (*phase_fn)(struct oracle *o, const struct shrink_opts *opts, struct cand *best);

struct phase_def {
	const char *name;
	phase_fn fn;          /* NULL: a step or base phase shrink.c calls itself */
	unsigned flags;
	const char *help;
};

extern const struct phase_def phase_defs[PH__COUNT];

/* The name of phase `id` (its report row, log column, --phases word). */
const char *phase_name(enum phase_id id);

/* The phase called `name` among the selectable ones; -1 if none. */
int phase_lookup(const char *name);

/* what the user chose for a phase (struct shrink_opts' phase_sel[]) */
#define PHASE_SEL_DEFAULT 0   /* runs as the strategy and options say */
#define PHASE_SEL_OFF     1   /* not run: not in --phases, or in --skip-phases */
#define PHASE_SEL_ON      2   /* named in --phases (sizes then runs without --cut-buffers) */

/*
 * Parse a comma-separated list of phase names (--phases=LIST when `skip`
 * is 0, --skip-phases=LIST when 1) into sel[PH__COUNT]: --phases sets
 * every selectable phase to PHASE_SEL_ON if named, else PHASE_SEL_OFF;
 * --skip-phases sets the named ones PHASE_SEL_OFF.  Applied in the order
 * given, so a later option refines an earlier one.  Returns 0, or -1 with
 * a one-line message in err naming the word and the valid names.
 */
int phase_select(const char *list, int skip, unsigned char *sel, struct strbuf *err);

/* 1 when phase id runs under sel (sizes also needs --cut-buffers or
 * PHASE_SEL_ON, see PHASE_CUT_BUFFERS) */
int phase_wanted(const unsigned char *sel, enum phase_id id, int cut_buffers);

/* 1 when GPUREDUCE_SHRINK_SERIAL=1: the data and scalars phases test one
 * item after the other instead of a batched run of the likely outcome
 * first (they end in the same state: t5099 compares the two) */
int phase_serial(void);

/* The valid --phases words, comma-separated, into sb. */
void phase_names(struct strbuf *sb);

#endif
