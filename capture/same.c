/*
 * same.c - format 2.0's short LAUNCH (TR_F_SAME; docs/FORMAT.md "11 LAUNCH"):
 * a launch whose function and argument bytes an earlier launch of the same
 * segment had is written without its name, parameter layout and argument
 * bytes, naming that launch by how many records back it stands (and the
 * hash of its argument bytes, which the reader checks).
 *
 * A training loop launches the same few hundred kernels with the same
 * arguments every step (the caching allocator hands out the same addresses
 * again), and a launch record was mostly what it repeats: the mangled name
 * (PyTorch's templated kernels: hundreds of bytes), the layout and the
 * argument block (cuDNN's and cuBLAS's parameter structs: hundreds more).
 * On the H200's host-fed ResNet-18 loop the records averaged ~860 bytes
 * (docs/RESULTS.md, 2026-12-05 03:45); a short one is under 100.  Fewer
 * bytes are less to encode, buffer and write on the program's thread, a
 * smaller trace on disk and a longer window in a flight recorder's budget.
 *
 * The writer keeps the table (trace/write.c, tw_short_launches_by_func:
 * the launches written, by function, argument size and the XXH3 of the
 * argument bytes, as blobs are named by theirs; the name, layout and bytes
 * a repeat would be compared with are out of the cache by the loop's next
 * step on a real host); what the capture adds is when to forget it, which
 * is also what makes a function handle name one kernel and layout.
 * Back-references are relative, and never cross the
 * point where a checkpoint starts (the window a background checkpoint
 * copies into the next segment begins there, and keeps its records'
 * relative distances), the switch to a new segment (the event numbers the
 * table holds are the old file's; ckpt_epoch() changes at both) nor a
 * module unload (function handles are then reused): the table is
 * forgotten at each.  The reader resolves short launches (trace/read.c):
 * a trace derived from a capture has its launches whole unless its writer
 * asks for short ones too (rc_blockify: hunt's long guarded traces).
 *
 * Callers hold inject.c's lock.  GPUREDUCE_CAPTURE_SAME=0 writes every
 * launch whole (as 1.x did), for comparison.
 */
#include <stdlib.h>
#include <string.h>

#include "../trace/trace.h"
#include "capture.h"

static struct {
	int inited, off;
	uint64_t unloads;        /* module unloads (cap_same_forget) */
	uint64_t epoch;          /* the epoch the writer's table was made in */
	/* launches written short so far, and the bytes they left out */
	uint64_t nshort, saved;
} Z;

void cap_same_forget(void)
{
	Z.unloads++;
}

/* Module unloads, checkpoint starts and segment switches since the
 * capture began: the table is good while this stays the same. */
static uint64_t same_epoch(void)
{
	return Z.unloads + (ckpt_epoch() << 32);
}

long cap_same_record(struct trace_writer *w, const struct tr_rec *r)
{
	uint64_t n0, s0, ep;
	long ev;

	if (!Z.inited) {
		const char *v = getenv("GPUREDUCE_CAPTURE_SAME");
		const char *legacy = getenv("GPUREDUCE_CAPTURE_LEGACY");
		Z.inited = 1;
		Z.off = (v && !strcmp(v, "0")) || (legacy && !strcmp(legacy, "1"));
	}
	if (Z.off)
		return tw_record(w, r);
	ep = same_epoch();
	if (!w->same) {
		tw_short_launches_by_func(w);   /* the first launch, or a new segment's writer */
		Z.epoch = ep;
	} else if (ep != Z.epoch) {
		tw_forget_launches(w);
		Z.epoch = ep;
	}
	n0 = w->same_short;
	s0 = w->same_saved;
	ev = tw_record(w, r);
	Z.nshort += w->same_short - n0;
	Z.saved += w->same_saved - s0;
	return ev;
}

void cap_same_stats(uint64_t *nshort, uint64_t *saved)
{
	*nshort = Z.nshort;
	*saved = Z.saved;
}
