/*
 * lastslice.h - a trace's last launch alone, after the state it needs.
 *
 * compute-sanitizer's cost on a long trace is per launch (about 11 ms a
 * launch of a 16-million-thread grid on an H100, checked or not), so a
 * diagnosis of the last launch of a program's trace costs what memcheck
 * costs the program.  The slice is what shrink's slice phase starts from:
 * one replay of the trace, stopped before its last launch, writes the
 * state that launch reaches as a snapshot (SNAP_REACHABLE), and the slice
 * is that snapshot, the launch, and the trace's FAULT record after it.
 * Used by hunt (each finding's cut) and `gpureduce diagnose TRACE`.
 */
#ifndef GPUREDUCE_LASTSLICE_H
#define GPUREDUCE_LASTSLICE_H

struct pool;
struct strbuf;
struct trace;

/* Does t hold at least min launches before its last one (and one at
 * least), and can it be sliced (no graph launch, a last launch not
 * captured into a graph)? */
int lastslice_worth(const struct trace *t, size_t min);
/* Slices wanted: not GPUREDUCE_DIAG_SLICE=0 (the whole trace diagnosed,
 * as before 2026-12-06, to compare). */
int lastslice_on(void);

/* Slice trace t (opened from path) into out_path, replaying it on a
 * worker of p under `guard` (recycle: replay_opts.recycle); the snapshot
 * goes to snap_path (left for the caller to remove).  1 written; 0 when t
 * is better run whole (one launch, a graph launch, a last launch captured
 * into a graph); -1 when the replay did not reach the launch clean or a
 * file could not be written (err says why). */
int lastslice_write(struct pool *p, const char *path, const struct trace *t, int guard, int recycle,
		    const char *snap_path, const char *out_path, struct strbuf *err);

/* Does diag (a diagnosis, diagnose.h) report an access by t's last
 * launch's kernel (its bare name in the report's "at KERNEL+PC")?  A slice
 * whose snapshot missed state the launch needed can fault elsewhere. */
int lastslice_diag_is_last(const struct trace *t, const char *diag);

#endif
