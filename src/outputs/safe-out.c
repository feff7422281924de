/*
 * safe-out.c - what may be overwritten, and capture's staging folder
 * (see safe-out.h).  A capture can take hours and a user's script or
 * notes cannot be made again: no output of ours replaces a file that is
 * not ours, and capture never touches its -o file until it has a trace.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../../common/strbuf.h"
#include "../../common/util.h"
#include "../../trace/trace.h"
#include "safe-out.h"

/* the staging folders' names: STAGE_PREFIX then mkdtemp's six characters */
#define STAGE_PREFIX ".gpureduce-capture-"

int safe_is_trace(const char *path)
{
	char magic[sizeof(TRACE_MAGIC) - 1];
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK), ok = 0;   /* a FIFO: not waited on */
	if (fd < 0)
		return 0;
	ok = read(fd, magic, sizeof(magic)) == (ssize_t)sizeof(magic) &&
	     !memcmp(magic, TRACE_MAGIC, sizeof(magic));
	close(fd);
	return ok;
}

int safe_same_file(const char *path, const char *other)
{
	struct stat a, b;
	return stat(path, &a) == 0 && stat(other, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

int safe_may_replace(const char *path, const char *what, int trace_ok, int force, struct strbuf *err)
{
	struct stat st;

	if (lstat(path, &st) < 0)
		return 0;
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		sb_addf(err, "%s would be written to %s, which is a folder", what, path);
		return -2;
	}
	if (force || (trace_ok && safe_is_trace(path)))
		return 0;
	sb_addf(err, "%s would replace %s, which is not %s: pick another name, or pass --force "
		"to replace it (nothing was done)", what, path,
		trace_ok ? "a gpureduce trace" : "a file gpureduce wrote");
	return -1;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

int safe_stage_open(const char *final, struct strbuf *folder, struct strbuf *staged, struct strbuf *err)
{
	struct strbuf dir = STRBUF_INIT;
	int ret = -1;

	path_dir(final, &dir);
	sb_addf(folder, "%s/" STAGE_PREFIX "XXXXXX", dir.buf);
	if (!mkdtemp(folder->buf)) {
		sb_addf(err, "cannot create a folder beside %s to capture into: %s", final, strerror(errno));
		goto out;
	}
	sb_addf(staged, "%s/%s", folder->buf, base_name(final));
	ret = 0;
out:
	sb_release(&dir);
	return ret;
}

void safe_stage_rename(const char *path, const char *folder, const char *final, struct strbuf *out)
{
	struct strbuf dir = STRBUF_INIT;
	size_t n = strlen(folder);

	if (strncmp(path, folder, n) || path[n] != '/') {
		sb_adds(out, path);
		goto out;
	}
	path_dir(final, &dir);
	sb_addf(out, "%s%s", dir.buf, path + n);
out:
	sb_release(&dir);
}

int safe_stage_publish(const char *folder, const char *final, struct strbuf *err)
{
	struct strbuf from = STRBUF_INIT, to = STRBUF_INIT;
	DIR *d = opendir(folder);
	struct dirent *e;
	int moved = 0, ret = -1;

	if (!d) {
		sb_addf(err, "cannot read %s: %s", folder, strerror(errno));
		goto out;
	}
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		sb_reset(&from);
		sb_reset(&to);
		sb_addf(&from, "%s/%s", folder, e->d_name);
		safe_stage_rename(from.buf, folder, final, &to);
		if (rename(from.buf, to.buf) < 0) {
			sb_addf(err, "cannot move %s to %s: %s (the capture is kept in %s)", from.buf, to.buf,
				strerror(errno), folder);
			goto out;
		}
		moved++;
	}
	if (rmdir(folder) < 0) {
		sb_addf(err, "cannot remove %s: %s", folder, strerror(errno));
		goto out;
	}
	ret = moved;
out:
	if (d)
		closedir(d);
	sb_release(&from);
	sb_release(&to);
	return ret;
}

/* "; ..." naming a staged trace of path's name beside it (safe_trace_open) */
static void stage_hint(const char *path, struct strbuf *err)
{
	struct strbuf dir = STRBUF_INIT, cand = STRBUF_INIT, best = STRBUF_INIT;
	const char *name = base_name(path);
	time_t newest = 0;
	struct stat st;
	struct dirent *e;
	DIR *d;

	if (lstat(path, &st) == 0 || errno != ENOENT || !*name)
		return;
	path_dir(path, &dir);
	if (!(d = opendir(dir.buf)))
		goto out;
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, STAGE_PREFIX, sizeof(STAGE_PREFIX) - 1))
			continue;
		sb_reset(&cand);
		sb_addf(&cand, "%s/%s/%s", dir.buf, e->d_name, name);
		if (stat(cand.buf, &st) == 0 && S_ISREG(st.st_mode) && st.st_mtime >= newest) {
			newest = st.st_mtime;
			sb_reset(&best);
			sb_add(&best, cand.buf, cand.len);
		}
	}
	closedir(d);
	if (best.len)
		sb_addf(err, "; a capture that did not finish (its gpureduce process was killed) left %s: "
			"move it to %s to use it", best.buf, path);
out:
	sb_release(&dir);
	sb_release(&cand);
	sb_release(&best);
}

int safe_trace_open(struct trace *t, const char *path, unsigned flags, struct strbuf *err)
{
	if (trace_open(t, path, flags, err) == 0)
		return 0;
	stage_hint(path, err);
	return -1;
}

void safe_stage_drop(const char *folder)
{
	remove_tree(folder);
}
