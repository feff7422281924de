/*
 * devsel.c - GPUREDUCE_DEVICE and GPUREDUCE_DEVICES, read strictly (see
 * devsel.h).  An ordinal is a decimal number 0..DEVSEL_MAX-1 with nothing
 * after it; a count is 1..DEVSEL_MAX.  Before this module, the worker took
 * atoi(GPUREDUCE_DEVICE) modulo the device count, so "abc" meant device 0
 * and ordinal 9 on a 2-GPU node meant device 1, silently.
 */
#include <errno.h>
#include <stdlib.h>

#include "../common/strbuf.h"
#include "devsel.h"

/* The decimal value of `s` in [lo, hi]: 0, or -1 (not a number, trailing
 * characters, out of range). */
static int parse_range(const char *s, long lo, long hi, int *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		return -1;
	*out = (int)v;
	return 0;
}

int devsel_device(int *ordinal, struct strbuf *err)
{
	const char *e = getenv("GPUREDUCE_DEVICE");

	*ordinal = -1;
	if (!e || !*e)
		return 0;
	if (parse_range(e, 0, DEVSEL_MAX - 1, ordinal) < 0) {
		sb_addf(err, "GPUREDUCE_DEVICE=%s: not a device ordinal; give a number from 0 "
			"(the first GPU) to the device count less one, or unset it", e);
		return -1;
	}
	return 0;
}

int devsel_devices(int *count, struct strbuf *err)
{
	const char *e = getenv("GPUREDUCE_DEVICES");

	*count = 0;
	if (!e || !*e)
		return 0;
	if (parse_range(e, 1, DEVSEL_MAX, count) < 0) {
		sb_addf(err, "GPUREDUCE_DEVICES=%s: not a number of GPUs; give 1 or more "
			"(shrink uses the first N), or unset it to use every GPU", e);
		return -1;
	}
	return 0;
}

int devsel_worker_ordinal(int ndev, int *ordinal, struct strbuf *err)
{
	int o;

	if (devsel_device(&o, err) < 0)
		return -1;
	if (o < 0)
		o = 0;
	if (o >= ndev && ndev == 1) {
		sb_addf(err, "GPUREDUCE_DEVICE=%d: past the last GPU (the driver reports 1 device: "
			"ordinal 0)", o);
		return -1;
	}
	if (o >= ndev) {
		sb_addf(err, "GPUREDUCE_DEVICE=%d: past the last GPU (the driver reports %d devices: "
			"ordinals 0 to %d)", o, ndev, ndev - 1);
		return -1;
	}
	*ordinal = o;
	return 0;
}
