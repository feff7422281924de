/*
 * outpaths.c - checks on the files a command will write (see outpaths.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../common/strbuf.h"
#include "../../common/util.h"
#include "../cmds.h"
#include "outpaths.h"

int outpath_is(const char *path, const char *input)
{
	struct stat a, b;
	return stat(path, &a) == 0 && stat(input, &b) == 0 && a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

int outpath_check(const char *path, const char *what, const char *input, struct strbuf *err)
{
	struct strbuf dir = STRBUF_INIT;
	struct stat st;
	int ret = EXIT_INPUT;

	if (outpath_is(path, input)) {
		sb_addf(err, "%s would be written to %s, which is the input trace: pick another name "
			"(nothing was done)", what, path);
		ret = EXIT_USAGE;
		goto out;
	}
	if (stat(path, &st) == 0) {
		if (S_ISDIR(st.st_mode)) {
			sb_addf(err, "%s would be written to %s, which is a folder", what, path);
			ret = EXIT_USAGE;
		} else if (access(path, W_OK) < 0) {
			sb_addf(err, "cannot write %s to %s: %s", what, path, strerror(errno));
		} else {
			ret = 0;
		}
		goto out;
	}
	path_dir(path, &dir);
	if (stat(dir.buf, &st) < 0 || !S_ISDIR(st.st_mode))
		sb_addf(err, "cannot write %s to %s: %s %s", what, path, dir.buf,
			stat(dir.buf, &st) < 0 ? "does not exist" : "is a file, not a folder");
	else if (access(dir.buf, W_OK | X_OK) < 0)
		sb_addf(err, "cannot write %s to %s: folder %s is not writable", what, path, dir.buf);
	else
		ret = 0;
out:
	sb_release(&dir);
	return ret;
}

int outpath_make_dir(const char *path, struct strbuf *err)
{
	struct strbuf dir = STRBUF_INIT;
	int ret = 0;

	path_dir(path, &dir);
	for (char *q = dir.buf + 1; ; q++) {
		char c = *q;
		if (c != '/' && c)
			continue;
		*q = 0;
		if (mkdir(dir.buf, 0755) < 0 && errno != EEXIST) {
			sb_addf(err, "cannot create the folder %s for %s: %s", dir.buf, path, strerror(errno));
			ret = -1;
		}
		*q = c;
		if (!c || ret < 0)
			break;
	}
	sb_release(&dir);
	return ret;
}
