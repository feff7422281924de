/*
 * env.c - the library's numeric settings from the environment (see
 * capture.h), read one way everywhere.
 */
#include <errno.h>
#include <stdlib.h>

#include "capture.h"

uint64_t cap_env_u64(const char *name, uint64_t def)
{
	const char *s = getenv(name);
	char *end;
	unsigned long long v;
	if (!s || !*s)
		return def;
	errno = 0;
	v = strtoull(s, &end, 10);
	return errno || *end ? def : (uint64_t)v;
}
