/*
 * prof.h - where capture's own time goes (issue 26), inside the traced
 * process: a few clock_gettime accumulators around the hot path of
 * inject.c (launch callback, Python frames, argument bytes, record write,
 * copy hash, copy compress+write;
 * checkpoints report their own cost in a NOTE), reported on stderr at exit
 * when GPUREDUCE_CAPTURE_PROFILE=1.  Off (the default) it costs one load
 * and a branch per hook.
 */
#ifndef GPUREDUCE_CAPTURE_PROF_H
#define GPUREDUCE_CAPTURE_PROF_H

#include <stdint.h>

enum cap_prof_slot {
	CP_CALLBACK,    /* every driver-API callback (enter and exit), ours only */
	CP_LAUNCH,      /* a launch callback, entry to return */
	CP_PYFRAMES,    /* reading the Python frames of a launch */
	CP_ARGS,        /* parameter bytes and launch attributes */
	CP_RECORD,      /* encoding and writing the LAUNCH record */
	CP_COPY,        /* an H2D copy callback, entry to return */
	CP_HASH,        /* hashing the bytes copied in */
	CP_BLOB,        /* compressing and writing them */
	CP_NSLOTS
};

extern int cap_prof_on;   /* set once at init */

void cap_prof_init(void);
uint64_t cap_prof_now_ns(void);
/* Add the time since t0 (and bytes) to slot; returns now. */
uint64_t cap_prof_add(enum cap_prof_slot slot, uint64_t t0, uint64_t bytes);
/* At exit: one line per slot on stderr (when on). */
void cap_prof_report(void);

#define CAP_PROF_T0() (cap_prof_on ? cap_prof_now_ns() : 0)
#define CAP_PROF(slot, t0, bytes) \
	do { if (cap_prof_on) cap_prof_add((slot), (t0), (bytes)); } while (0)

#endif
