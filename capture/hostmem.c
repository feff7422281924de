/*
 * hostmem.c - "can the capture library read these host bytes without
 * crashing?"  (see capture.h)
 *
 * A copy whose source the driver cannot classify (cuMemcpy with a pointer
 * cuPointerGetAttribute does not know) is treated as host memory, but in the
 * buggy programs gpureduce exists for it may be a freed or wild device
 * pointer: under unified addressing those sit inside PROT_NONE host
 * reservations, and touching them would turn the program's CUDA error into
 * our SIGSEGV.
 *
 * Readability is a property of pages, so one byte per page is probed through
 * the kernel, which reports EFAULT instead of faulting: process_vm_readv on
 * our own pid (up to 1024 pages per call), or, where seccomp forbids that,
 * write(2) of each page's byte into a pipe.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/uio.h>
#include <unistd.h>

#include "capture.h"

enum { BATCH = 1024 };   /* IOV_MAX */

/* The address probed for page i of the range starting at first. */
static uintptr_t page_addr(uintptr_t first, uintptr_t page, size_t i)
{
	return i ? (first & ~(page - 1)) + i * page : first;
}

/* 1 readable, 0 not, -1 process_vm_readv unavailable. */
static int probe_vm(uintptr_t first, size_t npages, uintptr_t page)
{
	struct iovec remote[BATCH];
	char sink[BATCH];
	pid_t self = getpid();

	for (size_t i = 0; i < npages;) {
		struct iovec local = { sink, 0 };
		size_t k = 0;
		ssize_t got;
		for (; k < BATCH && i < npages; k++, i++) {
			remote[k].iov_base = (void *)page_addr(first, page, i);
			remote[k].iov_len = 1;
		}
		local.iov_len = k;
		do
			got = process_vm_readv(self, &local, 1, remote, (unsigned long)k, 0);
		while (got < 0 && errno == EINTR);
		if (got < 0)
			return errno == EFAULT ? 0 : -1;
		if ((size_t)got < k)
			return 0;   /* stopped at the first unreadable page */
	}
	return 1;
}

/* The same through a pipe: write(2) copies from our memory with EFAULT. */
static int probe_pipe(uintptr_t first, size_t npages, uintptr_t page)
{
	int fd[2], ret = 1;
	char drain[4096];
	size_t pending = 0;

	if (pipe2(fd, O_NONBLOCK | O_CLOEXEC) < 0)
		return -1;
	for (size_t i = 0; i < npages;) {
		ssize_t n = write(fd[1], (const void *)page_addr(first, page, i), 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = errno == EFAULT ? 0 : -1;
			break;
		}
		i++;
		if (++pending == sizeof(drain)) {
			while (read(fd[0], drain, sizeof(drain)) > 0)
				;
			pending = 0;
		}
	}
	close(fd[0]);
	close(fd[1]);
	return ret;
}

int cap_host_readable(const void *p, size_t n)
{
	uintptr_t first = (uintptr_t)p, last, page;
	size_t npages;
	long ps = sysconf(_SC_PAGESIZE);
	int r;

	if (!n)
		return 1;
	if (!p || first + (n - 1) < first)
		return 0;
	last = first + (n - 1);
	page = ps > 0 ? (uintptr_t)ps : 4096;
	npages = (size_t)(last / page - first / page) + 1;
	r = probe_vm(first, npages, page);
	if (r < 0)
		r = probe_pipe(first, npages, page);
	return r;
}
