/*
 * drvver.c - the NVIDIA driver's version from the kernel module's version
 * line (/proc/driver/nvidia/version), for the ENV record (source.c) and
 * so for `gpureduce report`'s Environment table.  The line differs between
 * the proprietary and the open kernel module and between architectures:
 *   NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug ...
 *   NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.82.07  Release Build ...
 *   NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  570.86.15  ...
 * so the version is taken as the first blank-separated word made of digits
 * and dots with at least one dot, not as a word at a fixed place.  No
 * CUDA call: cuDriverGetVersion gives the CUDA version the driver supports
 * (recorded beside it as cuda_driver), not the driver's own.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "capture.h"

int cap_driver_version(const char *line, char *out, size_t n)
{
	const char *p = line;
	if (!line || !n)
		return -1;
	*out = 0;
	while (*p) {
		size_t len = strcspn(p, " \t\n\r"), dots = 0, i;
		for (i = 0; i < len && (isdigit((unsigned char)p[i]) || p[i] == '.'); i++)
			dots += p[i] == '.';
		if (len && i == len && dots && isdigit((unsigned char)p[0]) && isdigit((unsigned char)p[len - 1])) {
			snprintf(out, n, "%.*s", (int)len, p);
			return 0;
		}
		p += len;
		p += strspn(p, " \t\n\r");
	}
	return -1;
}
