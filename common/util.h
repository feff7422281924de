/*
 * util.h - small process-wide helpers: checked allocation, the BUG() macro for
 * broken invariants, monotonic time, whole-file I/O, hex formatting and the
 * path of the running program.
 *
 * Library code reports ordinary failures through return codes and a
 * `struct strbuf *err` message (one line: what, where, what to do); BUG() is
 * only for programming errors and aborts with file:line.
 */
#ifndef GPUREDUCE_UTIL_H
#define GPUREDUCE_UTIL_H

#include <stddef.h>
#include <stdint.h>

struct strbuf;

#define BUG(...) bug_at(__FILE__, __LINE__, __VA_ARGS__)
void bug_at(const char *file, int line, const char *fmt, ...)
	__attribute__((noreturn, format(printf, 3, 4)));

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);
/* Grow an array of `size`-byte items to hold at least `need` items. */
#define ALLOC_GROW(arr, need, alloc) do { \
	if ((size_t)(need) > (alloc)) { \
		size_t n_ = (alloc) ? (alloc) * 2 : 16; \
		while (n_ < (size_t)(need)) n_ *= 2; \
		(arr) = xrealloc((arr), n_ * sizeof(*(arr))); \
		(alloc) = n_; \
	} } while (0)

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

double now_sec(void);               /* monotonic seconds */

/* Read a whole file into sb.  Returns 0, or -1 with a message in err. */
int read_file(const char *path, struct strbuf *sb, struct strbuf *err);
/* The seeded fill shrink writes into buffers (xorshift32, little-endian
 * words; docs/FORMAT.md TR_F_FILL): n bytes (a multiple of 4 unless it is
 * the last piece) continuing from *state, which starts as the seed (0
 * stands for 0x9e3779b9).  Chunk by chunk gives the same bytes as at once. */
void fill_xorshift(uint8_t *dst, uint64_t n, uint32_t *state);
/* Write (create/truncate) a whole file.  Returns 0 or -1 with err. */
int write_file(const char *path, const void *data, size_t len, struct strbuf *err);
/* write(2) all of buf, retrying on EINTR/short writes.  0 or -1 (errno). */
int write_all(int fd, const void *buf, size_t len);

/* rm -rf a directory tree (no symlink following).  0 or -1. */
int remove_tree(const char *dir);

/* Format a byte count as "4000 B", "2.0 MiB"... into a static-free buffer. */
const char *fmt_bytes(uint64_t n, char buf[32]);
/* The folder part of path (no trailing slash) appended to dir: "." when
 * path has no slash, "/" for a file at the root. */
void path_dir(const char *path, struct strbuf *dir);

/* The running program's executable, for starting copies of it (the pool's
 * replay workers, `gpureduce __worker`): /proc/self/exe resolved once,
 * else the name the program was started as (argv[0]).  Not thread-safe on
 * its first call. */
const char *self_exe(void);

#endif
