/*
 * launchattr.h - which recorded cuLaunchKernelEx attributes a replay (and
 * repro.cu) can apply.  Cluster dimensions, cluster scheduling policy,
 * programmatic stream serialization (PDL), priority, memory sync domains,
 * preferred cluster dimensions and shared memory carveout are applied as
 * recorded; an attribute that names an object of the captured process (an
 * event, an L2 access window over a captured address) or that only means
 * something to streams and graph nodes is dropped and said (a note), never
 * silently.  Shared by replay/engine.c and emit/emit.c.
 */
#ifndef GPUREDUCE_LAUNCHATTR_H
#define GPUREDUCE_LAUNCHATTR_H

#include <stdint.h>

/* 1 when attribute `id` is applied as recorded; 0 with *why (a static
 * string) when it is dropped. */
int lattr_replayable(uint32_t id, const char **why);
/* "cluster dimension", ... or "attribute N" (static, or buf). */
const char *lattr_name(uint32_t id, char *buf, unsigned n);

#endif
