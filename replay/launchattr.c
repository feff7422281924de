/*
 * launchattr.c - replayable launch attributes (see launchattr.h).  Numbers
 * are CUlaunchAttributeID as cuda.h (CUDA 13) defines them.
 */
#include <stdio.h>

#include "launchattr.h"

static const char *const names[] = {
	"ignore", "access policy window", "cooperative", "synchronization policy",
	"cluster dimension", "cluster scheduling policy", "programmatic stream serialization",
	"programmatic event", "priority", "memory sync domain map", "memory sync domain",
	"preferred cluster dimension", "launch completion event", "device-updatable kernel node",
	"preferred shared memory carveout", "attribute 15", "NVLink utilization-centric scheduling",
};

const char *lattr_name(uint32_t id, char *buf, unsigned n)
{
	if (id < sizeof(names) / sizeof(names[0]))
		return names[id];
	snprintf(buf, n, "attribute %u", id);
	return buf;
}

int lattr_replayable(uint32_t id, const char **why)
{
	switch (id) {
	case 1:
		*why = "an L2 access window over a captured address (a cache hint)";
		return 0;
	case 3:
		*why = "a stream attribute";
		return 0;
	case 7:
	case 12:
		*why = "it names an event of the captured process";
		return 0;
	case 13:
		*why = "it applies to graph nodes only";
		return 0;
	default:
		return 1;
	}
}
