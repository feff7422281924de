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
 * The table is a direct-mapped cache of the launches written in full or
 * short: (function, argument bytes) -> the event number of the last one.
 * A hit is checked byte for byte (a hash alone could name the wrong
 * launch's bytes).  Back-references are relative, and never cross the
 * point where a checkpoint starts (the window a background checkpoint
 * copies into the next segment begins there, and keeps its records'
 * relative distances), the switch to a new segment (the event numbers the
 * table holds are the old file's; ckpt_epoch() changes at both) nor a
 * module unload (function handles are then reused): the table is
 * forgotten at each.  Only the
 * capture writes short launches; the reader resolves them (trace/read.c),
 * so every trace derived from a capture has its launches whole.
 *
 * Callers hold inject.c's lock.  GPUREDUCE_CAPTURE_SAME=0 writes every
 * launch whole (as 1.x did), for comparison.
 */
#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "../common/util.h"
#include "../trace/trace.h"
#include "capture.h"

enum { SAME_SLOTS = 8192 };   /* a power of two */

struct same_ent {
	const void *fn;          /* the function's capture-side info; NULL: empty */
	uint64_t hash, epoch;
	long ev;                 /* the event of the last launch written with these bytes */
	uint32_t argsize, cap;
	uint8_t *args;
};

static struct {
	int inited, off;
	uint64_t epoch;          /* bumped at every module unload (cap_same_forget) */
	struct same_ent *tab;
	/* what the file holds: launches written short, and the bytes they saved */
	uint64_t nshort, saved;
} Z;

static void same_init(void)
{
	const char *s = getenv("GPUREDUCE_CAPTURE_SAME");
	const char *legacy = getenv("GPUREDUCE_CAPTURE_LEGACY");
	Z.inited = 1;
	Z.off = (s && !strcmp(s, "0")) || (legacy && !strcmp(legacy, "1"));
}

void cap_same_forget(void)
{
	Z.epoch++;
}

/* The epoch a table entry must carry to be used: module unloads,
 * checkpoint starts and segment switches since the capture began. */
static uint64_t same_epoch(void)
{
	return Z.epoch + ((uint64_t)ckpt_epoch() << 32);
}

/* The argument bytes' hash as the short record carries it (XXH3-64, seed
 * 0: the reader checks the launch it names against it) */
static uint64_t same_hash(const struct tr_launch *l)
{
	return XXH3_64bits(l->args, l->argsize);
}

long cap_same_record(struct trace_writer *w, const struct tr_rec *r, const void *fn)
{
	const struct tr_launch *l = &r->u.launch;
	struct same_ent *e;
	struct tr_rec s;
	uint8_t ref[16];
	uint64_t h, ep, back;
	long ev;

	if (!Z.inited)
		same_init();
	if (Z.off || !fn || !l->name || !*l->name || (l->argsize && !l->args) || (l->flags & TR_F_SAME))
		return tw_record(w, r);
	if (!Z.tab)
		Z.tab = xcalloc(SAME_SLOTS, sizeof(*Z.tab));
	h = same_hash(l);
	ep = same_epoch();
	e = &Z.tab[(h ^ ((uint64_t)(uintptr_t)fn * 0x9E3779B97F4A7C15ull)) & (SAME_SLOTS - 1)];
	if (e->fn == fn && e->hash == h && e->epoch == ep && e->argsize == l->argsize &&
	    (!l->argsize || !memcmp(e->args, l->args, l->argsize)) && e->ev >= 0 &&
	    (uint64_t)e->ev < w->nrec) {
		back = w->nrec - (uint64_t)e->ev;
		s = *r;
		s.u.launch.flags |= TR_F_SAME;
		s.u.launch.name = "";
		s.u.launch.nparams = 0;
		s.u.launch.params = NULL;
		for (int i = 0; i < 8; i++) {
			ref[i] = (uint8_t)(back >> (8 * i));
			ref[8 + i] = (uint8_t)(h >> (8 * i));
		}
		s.u.launch.args = ref;
		s.u.launch.argsize = 16;
		s.u.launch.nnonptr = 0;
		ev = tw_record(w, &s);
		if (ev >= 0) {
			e->ev = ev;
			Z.nshort++;
			Z.saved += strlen(l->name) + 8ull * l->nparams + l->argsize;
		}
		return ev;
	}
	ev = tw_record(w, r);
	if (ev < 0)
		return ev;
	if (e->cap < l->argsize) {
		free(e->args);
		e->cap = l->argsize;
		e->args = xmalloc(e->cap);
	}
	if (l->argsize)
		memcpy(e->args, l->args, l->argsize);
	e->fn = fn;
	e->hash = h;
	e->epoch = ep;
	e->argsize = l->argsize;
	e->ev = ev;
	return ev;
}

void cap_same_stats(uint64_t *nshort, uint64_t *saved)
{
	*nshort = Z.nshort;
	*saved = Z.saved;
}
