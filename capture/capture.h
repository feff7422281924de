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
 * `max` frames.  Returns an enum tr_py_state: TR_PY_NONE (no initialised
 * CPython in the process, or one too old to walk), TR_PY_NO_GIL (this thread
 * does not hold the GIL: e.g. autograd's backward thread), or TR_PY_FRAMES
 * with *n frames filled in.  The frames' strings live in `store` (appended;
 * valid until store changes).  Never raises a Python exception: a pending
 * one is saved and restored.  Thread-safe; any failure yields fewer frames.
 */
uint32_t cap_py_frames(struct tr_frame *frames, uint32_t max, uint32_t *n,
		       struct strbuf *store);

#endif
