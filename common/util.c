/*
 * util.c - see util.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <sys/stat.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "strbuf.h"
#include "util.h"

void bug_at(const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "gpureduce: BUG at %s:%d: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	abort();
}

static void oom(size_t n)
{
	fprintf(stderr, "gpureduce: out of memory allocating %zu bytes\n", n);
	abort();
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oom(n);
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		oom(n * size);
	return p;
}

void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		oom(n);
	return q;
}

char *xstrdup(const char *s)
{
	return xstrndup(s, strlen(s));
}

char *xstrndup(const char *s, size_t n)
{
	char *p = xmalloc(n + 1);
	memcpy(p, s, n);
	p[n] = 0;
	return p;
}

int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

double now_sec(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int read_file(const char *path, struct strbuf *sb, struct strbuf *err)
{
	/* O_NONBLOCK: a FIFO or socket is refused, not waited on for a writer */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	int ret = -1;
	struct stat st;
	if (fd < 0) {
		sb_addf(err, "%s: cannot open: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode))) {
		sb_addf(err, "%s: a pipe or socket, not a file", path);
		goto out;
	}
	for (;;) {
		sb_grow(sb, 65536);
		ssize_t n = read(fd, sb->buf + sb->len, sb->alloc - sb->len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			sb_addf(err, "%s: read failed: %s", path, strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		sb->len += (size_t)n;
		sb->buf[sb->len] = 0;
	}
	ret = 0;
out:
	close(fd);
	return ret;
}

int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;
	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int write_file(const char *path, const void *data, size_t len, struct strbuf *err)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644), e;
	if (fd < 0) {
		e = errno;
		sb_addf(err, "%s: cannot create: %s", path, strerror(e));
		errno = e;
		return -1;
	}
	if (write_all(fd, data, len) < 0) {
		e = errno;
		close(fd);
		goto fail;
	}
	if (close(fd) < 0) {
		e = errno;
		goto fail;
	}
	return 0;
fail:
	sb_addf(err, "%s: write failed: %s", path, strerror(e));
	errno = e;
	return -1;
}

int write_file_whole(const char *path, const void *data, size_t len, struct strbuf *err)
{
	struct strbuf tmp = STRBUF_INIT, why = STRBUF_INIT;
	int ret = 0;

	sb_addf(&tmp, "%s.tmp", path);
	if (write_file(tmp.buf, data, len, &why) < 0 || rename(tmp.buf, path) < 0) {
		int e = errno;
		sb_addf(err, "%s: cannot write: %s", path, strerror(e));
		unlink(tmp.buf);
		ret = -1;
	}
	sb_release(&tmp);
	sb_release(&why);
	return ret;
}

const char *fmt_bytes(uint64_t n, char buf[32])
{
	if (n < 10 * 1024)
		snprintf(buf, 32, "%llu B", (unsigned long long)n);
	else if (n < 10ull * 1024 * 1024)
		snprintf(buf, 32, "%.1f KiB", n / 1024.0);
	else if (n < 10ull * 1024 * 1024 * 1024)
		snprintf(buf, 32, "%.1f MiB", n / 1048576.0);
	else
		snprintf(buf, 32, "%.1f GiB", n / 1073741824.0);
	return buf;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *f)
{
	(void)st;
	(void)f;
	return flag == FTW_DP ? rmdir(path) : unlink(path);
}

int remove_tree(const char *dir)
{
	return nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* The generator itself is fill_core.inc, the text every repro.cu carries. */
#include "fill_core.inc"

_Static_assert(sizeof(unsigned) == sizeof(uint32_t), "fill_core.inc needs a 32-bit unsigned");

void fill_xorshift(uint8_t *dst, uint64_t n, uint32_t *state)
{
	fill_bytes(dst, n, state);
}

void path_dir(const char *path, struct strbuf *dir)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		sb_adds(dir, ".");
	else if (slash == path)
		sb_adds(dir, "/");
	else
		sb_add(dir, path, (size_t)(slash - path));
}

const char *self_exe(void)
{
	static char path[4096];
	if (!path[0]) {
		ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
		if (n > 0)
			path[n] = 0;
		else
			snprintf(path, sizeof(path), "%s", program_invocation_name);
	}
	return path;
}
