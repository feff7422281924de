/*
 * drvver.c - the NVIDIA driver's version from the kernel module's version
 * line (/proc/driver/nvidia/version), for the ENV record (source.c) and
 * so for `gpureduce report`'s Environment table.  The line differs between
 * the proprietary and the open kernel module and between architectures:
 *   NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug ...
 *   NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.82.07  Release Build ...
 *   NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  570.86.15  ...
 * so the version is taken as the first blank-separated word made of digits
 * and dots with at least one dot, not as a word at a fixed place.  Where
 * that file is missing (a container without /proc/driver/nvidia), the
 * loaded libcuda's real file name says it: libcuda.so.1 links to
 * libcuda.so.580.82.07.  No CUDA call: cuDriverGetVersion gives the CUDA
 * version the driver supports (recorded beside it as cuda_driver), not the
 * driver's own.
 */
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
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

int cap_driver_version_lib(const char *path, char *out, size_t n)
{
	char real[PATH_MAX];
	const char *base;
	if (!path || !n)
		return -1;
	*out = 0;
	if (!realpath(path, real))
		return -1;
	base = strrchr(real, '/');
	base = base ? base + 1 : real;
	if (strncmp(base, "libcuda.so.", 11) || !strchr(base + 11, '.'))
		return -1;   /* libcuda.so.1 itself: no version in the name */
	return cap_driver_version(base + 11, out, n);
}
