/*
 * signature.c - the fault signature rule (signature.h): error codes and
 * names with 700 and 717 as one bad address, and kernel names that may
 * have been truncated by a fixed buffer.
 */
#include <string.h>

#include "signature.h"

#define SIG_ILLEGAL_ADDRESS 700        /* CUDA_ERROR_ILLEGAL_ADDRESS */
#define SIG_INVALID_ADDRESS_SPACE 717  /* CUDA_ERROR_INVALID_ADDRESS_SPACE */

static int bad_address_code(int c)
{
	return c == SIG_ILLEGAL_ADDRESS || c == SIG_INVALID_ADDRESS_SPACE;
}

static int bad_address_name(const char *s)
{
	return !strcmp(s, "CUDA_ERROR_ILLEGAL_ADDRESS") || !strcmp(s, "CUDA_ERROR_INVALID_ADDRESS_SPACE");
}

int sig_same_code(int a, int b)
{
	return a == b || (bad_address_code(a) && bad_address_code(b));
}

int sig_same_error_name(const char *a, const char *b)
{
	return !strcmp(a, b) || (bad_address_name(a) && bad_address_name(b));
}

int sig_same_kernel(const char *want, const char *seen, size_t seen_cap)
{
	size_t n = strlen(seen);
	if (!strcmp(want, seen))
		return 1;
	return seen_cap && n == seen_cap - 1 && !strncmp(want, seen, n);
}
