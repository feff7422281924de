/*
 * emit.h - write repro.cu: a reduced trace as one standalone program.
 *
 * The program uses the CUDA driver API only (`nvcc -o repro repro.cu
 * -lcuda`; it is also valid C, so tests compile it with gcc against the
 * CPU driver double).  It embeds the module image, places every buffer
 * against a guard region exactly as replay does, fills buffers the way the
 * reducer proved sufficient (zeros, a seeded generator, or explicit bytes),
 * relocates pointers inside the parameter bytes, launches, and exits 1 with
 * the CUDA error when the fault reproduces, 0 when it runs clean, 2 when
 * setup fails.  With GPUREDUCE_REPRO_VERBOSE=1 in its environment it prints
 * one `buffer N 0xADDR SIZE` line per buffer (used by `diagnose`).
 */
#ifndef GPUREDUCE_EMIT_H
#define GPUREDUCE_EMIT_H

#include <stdint.h>
#include <stdio.h>

struct strbuf;
struct trace;
struct shrink_report;

struct emit_info {
	const struct trace *orig;          /* the captured trace (header facts); may be NULL */
	const struct shrink_report *rep;   /* how it was reduced; may be NULL */
	const char *diagnosis;             /* lines for the header; may be NULL */
	const char *trace_name;            /* path of the original trace, for the header */
	int placement;                     /* enum guard_mode to emit; -1: rep's guard (else end) */
};

/* How many times a race's repro.cu tries (its set-up and launches, in one
 * process) before it says it ran clean: a flaky fault's repro gets
 * EMIT_RACE_TRIES (REPRO_TRIES=N in its environment overrides), any other
 * one try. */
#define EMIT_RACE_TRIES 20
int emit_tries(const struct emit_info *info);

/* Emit the reduced trace t as C source into out.  0 or -1 with err. */
int emit_repro(const struct trace *t, const struct emit_info *info, struct strbuf *out,
	       struct strbuf *err);

#endif
