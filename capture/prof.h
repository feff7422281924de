/*
 * prof.h - where capture's own time goes (issue 26), inside the traced
 * process: clock_gettime accumulators around the hot path of inject.c,
 * reported on stderr at exit when GPUREDUCE_CAPTURE_PROFILE=1.  The launch
 * callback is timed as a chain of laps (CAP_LAP), one slot per part, so the
 * parts add up to the whole (the report prints the sum beside the total);
 * copies in are split into hash and compress+write (or, with the writer
 * thread of writeq.c, hash + copy to it and its own compress+write, with
 * the program's waits for it); checkpoints report
 * their own cost in a NOTE and their check here.  Off (the default) each
 * hook costs one load and a branch.
 */
#ifndef GPUREDUCE_CAPTURE_PROF_H
#define GPUREDUCE_CAPTURE_PROF_H

#include <stdint.h>

enum cap_prof_slot {
	CP_CALLBACK,    /* every driver-API callback (enter and exit), ours only */
	CP_LAUNCH,      /* a launch's enter callback, from CUPTI's call to return */
	/* its parts, in order (CP_LAUNCH_FIRST..CP_LAUNCH_LAST add up to it) */
	CP_L_DISPATCH,  /* callback entry, dispatch, parameter struct */
	CP_PYFRAMES,    /* reading the Python frames of a launch */
	CP_L_TENSORS,   /* capture --tensors: the allocator's blocks (torchmem.c) */
	CP_L_SOURCE,    /* ENV / kernel source, first launch of a kernel (source.c) */
	CP_L_CAPTURING, /* is the stream capturing a graph */
	CP_L_FNINFO,    /* a kernel's name and layout from the driver (cache miss) */
	CP_L_LOOKUP,    /* the lock, the kernel's cached name and layout */
	CP_L_CKPT,      /* is a checkpoint due (and taking it) */
	CP_L_PRE,       /* test name, tensor and source records */
	CP_ARGS,        /* parameter bytes and launch attributes */
	CP_L_FILL,      /* the record's fields, the fold check (fold.c) */
	CP_L_MANAGED,   /* managed/mapped/pinned memory the CPU wrote (managed.c) */
	CP_RECORD,      /* encoding and writing the LAUNCH record */
	CP_L_TAIL,      /* progress file, bookkeeping, unlock, frees */
	CP_LAUNCH_EXIT, /* a launch's exit callback (result, fold; a deferred record) */
	CP_LIBSYNC,     /* GPUREDUCE_BLOCKING=library: waiting for the launch's stream
	                 * (the kernel's run; not in the callbacks' own time) */
	CP_TM_FETCH,    /* --tensors events mode: history fetches at launches (part of CP_L_TENSORS) */
	CP_TM_FETCH_END,/* ...at Python's exit and after a fault */
	CP_TM_TORCH,    /* ...of all fetches: torch's calls (_snapshot, history clear) */
	CP_TM_PY,       /* ...of all fetches: the reader's Python turning them into records */
	CP_OTHER,       /* every other callback, enter and exit */
	CP_COPY,        /* an H2D copy callback, entry to return */
	CP_HASH,        /* hashing the bytes copied in */
	CP_BLOB,        /* compressing and writing them */
	/* the writer thread (writeq.c) */
	CP_STAGE,       /* hash + copy into its staging ring, on the program's thread */
	CP_WQ_WAIT,     /* the program's thread waiting for it (ring full, a drain) */
	CP_WQ_BLOB,     /* compressing and writing on the writer thread */
	/* a checkpoint's stop of the program, by part (checkpoint.c; the whole
	 * is in CP_L_CKPT) */
	CP_CK_HOSTMEM,  /* the host memory read back into (pinning it) */
	CP_CK_SYNC,     /* cuCtxSynchronize */
	CP_CK_READ,     /* reading the live allocations back (cuMemcpyDtoH) */
	CP_CK_REST,     /* files, the thread's start (background); or the whole
	                 * segment written on the program's thread (synchronous) */
	CP_CK_SWITCH,   /* a background checkpoint's switch: the window copied, rename */
	CP_NSLOTS
};
#define CP_LAUNCH_FIRST CP_L_DISPATCH
#define CP_LAUNCH_LAST CP_L_TAIL

extern int cap_prof_on;   /* set once at init */

void cap_prof_init(void);
uint64_t cap_prof_now_ns(void);
/* Add the time since t0 (and bytes) to slot; returns now. */
uint64_t cap_prof_add(enum cap_prof_slot slot, uint64_t t0, uint64_t bytes);
/* Add a measured duration to slot (one call). */
void cap_prof_put(enum cap_prof_slot slot, uint64_t ns);
/* Add a duration to slot's last call (a launch recorded in two halves). */
void cap_prof_extend(enum cap_prof_slot slot, uint64_t ns);
/* At exit: one line per slot on stderr (when on). */
void cap_prof_report(void);

#define CAP_PROF_T0() (cap_prof_on ? cap_prof_now_ns() : 0)
#define CAP_PROF(slot, t0, bytes) \
	do { if (cap_prof_on) cap_prof_add((slot), (t0), (bytes)); } while (0)
/* The part since t ends here: add it to slot, and the next part starts now. */
#define CAP_LAP(slot, t) \
	do { if (cap_prof_on) (t) = cap_prof_add((slot), (t), 0); } while (0)

#endif
