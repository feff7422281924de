/*
 * capture.h - internals of the CUPTI injection library (libgpureduce-capture.so),
 * shared by the files under capture/.  Nothing here is exported from the
 * library: the only visible symbol is InitializeInjection (inject.c).
 *
 *   inject.c   CUPTI subscription, the callbacks, and what they record
 *   python.c   Python frame attribution, resolved with dlsym at run time
 *   map.c      a small u64 -> (u64, u64) hash map (live allocations, caches)
 *   hostmem.c  whether host bytes can be read without faulting
 *
 * The library runs inside the traced program: nothing here may print (except
 * the one refusal when CUPTI is taken), exit, or synchronise the GPU.
 */
#ifndef GPUREDUCE_CAPTURE_H
#define GPUREDUCE_CAPTURE_H

#include <stddef.h>
#include <stdint.h>

#include "../trace/trace.h"

struct strbuf;

/* ---- map.c ---- */

struct cap_map_ent {
	uint64_t key;            /* 0: empty slot (key 0 cannot be stored) */
	uint64_t v1, v2;
};

struct cap_map {
	struct cap_map_ent *slot;
	size_t n, cap;           /* cap is 0 or a power of two */
};
#define CAP_MAP_INIT { NULL, 0, 0 }

/* The entry for key, or NULL.  The pointer is valid until the next put/del. */
struct cap_map_ent *cap_map_get(const struct cap_map *m, uint64_t key);
/* Insert or overwrite.  key must not be 0 (ignored if it is). */
void cap_map_put(struct cap_map *m, uint64_t key, uint64_t v1, uint64_t v2);
/* Remove key; returns 1 and copies the values out (v1/v2 may be NULL) if it
 * was present, else 0. */
int cap_map_del(struct cap_map *m, uint64_t key, uint64_t *v1, uint64_t *v2);
/* Remove everything; keeps the table. */
void cap_map_clear(struct cap_map *m);
void cap_map_release(struct cap_map *m);

/* ---- hostmem.c ---- */

/* 1 if all n bytes at p can be read without faulting, 0 if not, -1 if the
 * kernel would not say (process_vm_readv refused, e.g. by seccomp). */
int cap_host_readable(const void *p, size_t n);

/* ---- python.c ---- */

#define CAP_PY_MAX_FRAMES 64

/*
 * The Python stack of the calling thread, innermost frame first, at most
 * `max` frames, whether or not the thread holds the GIL (it is read from
 * the interpreter's structures without calling into it; see python.c).
 * Returns an enum tr_py_state: TR_PY_NONE (no initialised CPython in the
 * process, or one too old to walk), TR_PY_NO_GIL (Python is there but this
 * thread's stack could not be read: a thread that never ran Python, or an
 * interpreter whose layout is not known and no GIL to ask it), or
 * TR_PY_FRAMES with *n frames filled in (0 for a Python thread running no
 * Python code).  The frames' strings live in `store` (appended; valid until
 * store changes).  Never raises a Python exception, never takes the GIL,
 * never allocates Python objects without it.  Thread-safe; any failure
 * yields fewer frames or none, never a crash.  A few microseconds.
 * GPUREDUCE_PY_WALK=auto|table|search|api selects the method (python.c).
 */
uint32_t cap_py_frames(struct tr_frame *frames, uint32_t max, uint32_t *n,
		       struct strbuf *store);

/*
 * If this thread holds the GIL and the frame layout has not been learnt
 * yet, learn it now (with the API as ground truth).  Cheap once done or
 * when the GIL is not held: call it from any callback.
 */
void cap_py_calibrate(void);

/* How frames are read now: "none", "api" (GIL holders only), or a layout
 * ("table": built in, not yet checked against the interpreter; "verified":
 * the table, checked; "searched": found by calibration) followed by the
 * version and offsets used.  The string is valid until the next call from
 * the same thread. */
const char *cap_py_layout(void);

#endif
