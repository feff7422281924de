/*
 * hunt.h - `gpureduce hunt`: find the silent out-of-bounds accesses of a
 * trace that ran clean (or the window before its fault).
 *
 * The trace is blockified with rounded sizes (rootcause.h, rc_opts.rounded):
 * every allocator block (capture --tensors) becomes an allocation of its
 * allocator-rounded size, so its guard sits where the allocator's block
 * ends and reads within the block (vectorised tails, padding) stay legal;
 * plain allocations keep theirs.  It is replayed with guard placement flush
 * at the end (overruns), then at the start (underruns).  A launch that
 * faults is a finding; the context is dead, so the next replay leaves that
 * launch out (rc_opts.skip) and goes on, up to a bound.  Every later launch
 * from the same call site (same kernel, same Python stack; without frames
 * the same kernel) is left out with it, unless hunt_opts.every_launch: a
 * training loop's buggy kernel is one finding, not one a step.  A fault in a
 * launch with a word that may be an integer read as a pointer is checked
 * first (hunt.c, integer_check: r->ints when it goes away), and one that
 * stands is replayed in the captured layout, where the program ran it:
 * a fault there too is replay's own (layout_fault: r->artifacts).  Replays run
 * in a worker pool (replay/pool.h): no CUDA here.
 *
 * Used by src/cmd-hunt.c, which prints the findings, shrinks the first
 * (hunt_cut gives its trace) and runs a captured command's processes.
 */
#ifndef GPUREDUCE_HUNT_H
#define GPUREDUCE_HUNT_H

#include <stddef.h>
#include <stdint.h>

#include "rootcause.h"

struct strbuf;
struct trace;

struct hunt_finding {
	uint64_t seq;            /* captured seq of the launch that faulted under guards */
	int guard;               /* the placement it faulted under (GUARD_END / GUARD_START) */
	int code;                /* CUresult */
	char error[64];
	char kernel[512];
	int is_crash;            /* it is the trace's own FAULT launch (not silent) */
	size_t nskip;            /* entries of hunt_result.skip in force in the replay that found
				    it (the findings before it and their repeats) */
	size_t repeats;          /* later launches from its call site left out with it */
	int crash_repeat;        /* the trace's own FAULT launch is one of those repeats */
	int has_frames;          /* its launch has Python frames (repeats: same stack, else
				    same kernel only) */
	char *cut;               /* hunt_opts.slices: its cut trace (hunt_cut, workdir/
				    finding-N.bin), kept for a diagnosis of it whole
				    (malloc'ed path), or NULL */
	char *slice;             /* hunt_opts.slices: a trace of its launch alone, after the
				    state the launches before it left (malloc'ed path), or NULL */
	char *diag;              /* compute-sanitizer's diagnosis of it (malloc'ed), or NULL */
	char *diag_err;          /* why compute-sanitizer gave none, when it ran (malloc'ed), or NULL */
};

/* A fault hunt did not report (hunt_run's integer check): launch seq
 * faulted only while replay read words of its arguments as pointers; with
 * them passed as captured it ran on.  The words stay integers for every
 * launch of its kernel (trace_add_nonptr). */
#define HUNT_INT_WORDS 8
struct hunt_intword {
	struct hunt_finding f;   /* the launch, its placement and fault (f.diag unused) */
	int n;                   /* words: byte offsets in its arguments and captured values */
	uint32_t off[HUNT_INT_WORDS];
	uint64_t val[HUNT_INT_WORDS];
};

struct hunt_opts {
	const char *workdir;     /* where the hunt traces are written */
	int max_findings;        /* bound on findings (replays: at most this + 2) */
	double timeout;          /* seconds a replay may take */
	int start_pass;          /* also replay with guards at the start (default 1) */
	int keep;                /* keep the replayed trace (workdir/hunt-base.bin, hunt-ends.bin)
				    and each replay's skip list (hunt-N.skip: replay --skip) */
	int tensor_ends;         /* one more pass, guards at each tensor's requested end: what
				    faults only there stays within its allocator block (notes) */
	int every_launch;        /* hunt each launch on its own: do not leave a finding's later
				    launches from the same call site out with it */
	int layout_check;        /* replay each fault's launch in the captured layout too: one
				    that faults there as well is replay's own (r->artifacts) */
	int slices;              /* write each finding's slice (hunt_finding.slice): its state
				    snapshotted by one more replay, for a diagnosis that runs
				    one launch under compute-sanitizer instead of the program */
};

struct hunt_result {
	struct hunt_finding *f;
	size_t n;
	uint64_t *skip;          /* captured seqs left out of the replays, in order: each
				    finding's seq, then its repeats (finding k's replay left
				    out the first f[k].nskip) */
	size_t nskip, askip;
	struct hunt_finding *notes; /* tensor_ends: launches that fault past a tensor's requested
				    bytes but not past its allocator block (legal there) */
	size_t nnotes;
	struct hunt_intword *ints; /* faults the integer check explained (not findings) */
	size_t nints;
	struct hunt_finding *artifacts; /* faults the launch also had in the captured layout,
				    where the program ran it clean: replay's own (not findings) */
	size_t nartifacts;
	uint64_t *checked;       /* launches whose fault the check left standing */
	size_t nchecked;
	struct rc_stats st;      /* the blockify of the first replay */
	size_t replays;
	int bounded;             /* stopped at max_findings: more may be there */
	int has_blocks;          /* the trace holds allocator blocks */
	char note[1200];         /* a replay that neither ran clean nor faulted: why */
	double seconds;
};

/* Hunt t (see above).  0 with r filled (r->n may be 0: clean), or -1 with
 * err when no replay could run (no GPU, workers not starting, a write).
 * The integer check marks the words it explained in t (trace_add_nonptr),
 * so hunt_cut's traces and the descriptions leave them alone too. */
int hunt_run(struct trace *t, const struct hunt_opts *o, struct hunt_result *r, struct strbuf *err);

/* Write finding k's trace at path: blockified with rounded sizes, what its
 * replay left out (the findings before it and their repeats) left out, cut after its launch with a FAULT record
 * naming it (ready for shrink and diagnose).  0 or -1 with err. */
int hunt_cut(const struct trace *t, const struct hunt_result *r, size_t k, const char *path,
	     struct strbuf *err);

/* One line for finding f: launch, kernel, Python line, placement and what
 * it touched: with f->diag, "wrote|read D past the end of param P = tensor
 * T (N B, block R B, allocated at file:line)"; without, the tensors its
 * pointer parameters point into; then, when f->repeats, how many later
 * launches from its line were left out with it. */
void hunt_describe(const struct trace *t, const struct hunt_finding *f, struct strbuf *out);

/* When an earlier finding of r (j < k) is the same kernel launched from the
 * same Python line as finding k, reached through another call stack (hunt
 * reports each call site: a warm-up and a training step, two tests):
 * "; the same kernel and line as finding N (first + j), reached from
 * FILE:LINE in FUNC" (the first frame of k's stack that differs).  Nothing
 * otherwise. */
void hunt_describe_kin(const struct trace *t, const struct hunt_result *r, size_t k, size_t first,
		       struct strbuf *out);

/* The innermost Python frame of launch seq outside site-packages (file:line
 * in func), "" when none was recorded. */
void hunt_python_line(const struct trace *t, uint64_t seq, struct strbuf *out);

/* The test that was running at launch seq: the last NOTE "test: NAME"
 * (capture writes one when PYTEST_CURRENT_TEST changes) before it; "" when
 * none. */
void hunt_test_of(const struct trace *t, uint64_t seq, struct strbuf *out);

/* One line for a note (r->notes): the launch, and the tensors among its
 * parameters whose requested bytes are fewer than their block's: "reads or
 * writes within its allocator block past tensor T (N B of R B)". */
void hunt_describe_note(const struct trace *t, const struct hunt_finding *f, struct strbuf *out);

/* One line for a fault the layout check put down to replay (r->artifacts). */
void hunt_describe_artifact(const struct trace *t, const struct hunt_finding *f, struct strbuf *out);

/* One line for a fault the integer check explained (r->ints). */
void hunt_describe_intword(const struct trace *t, const struct hunt_intword *w, struct strbuf *out);

void hunt_result_release(struct hunt_result *r);

#endif
