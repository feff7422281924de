/*
 * shrink-out.c - the output folder's lock, the choice between replacing
 * the repro there and writing beside it, and the final move (see
 * shrink-out.h for the rules).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../common/strbuf.h"
#include "../../common/util.h"
#include "../repro/repro.h"
#include "safe-out.h"
#include "shrink-out.h"

#define RUNNING_MARK ".gpureduce-shrink-running"

int shrink_out_lock(const char *cu, int *fd, struct strbuf *err)
{
	struct strbuf dir = STRBUF_INIT;
	int ret = -1;

	path_dir(cu, &dir);
	*fd = open(dir.buf, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (*fd < 0) {
		sb_addf(err, "cannot open the folder %s: %s", dir.buf, strerror(errno));
		goto out;
	}
	if (flock(*fd, LOCK_EX | LOCK_NB) < 0) {
		sb_addf(err, "another gpureduce shrink is writing into %s: wait for it to end, or give "
			"this one another folder with -o (nothing was done)", dir.buf);
		close(*fd);
		*fd = -1;
		goto out;
	}
	ret = 0;
out:
	sb_release(&dir);
	return ret;
}

void shrink_out_mark(const char *workdir)
{
	struct strbuf p = STRBUF_INIT, e = STRBUF_INIT;
	sb_addf(&p, "%s/" RUNNING_MARK, workdir);
	write_file(p.buf, "", 0, &e);
	sb_release(&p);
	sb_release(&e);
}

void shrink_out_done(const char *workdir)
{
	struct strbuf p = STRBUF_INIT;
	sb_addf(&p, "%s/" RUNNING_MARK, workdir);
	unlink(p.buf);
	sb_release(&p);
}

void shrink_out_sweep(const char *bin)
{
	struct strbuf dir = STRBUF_INIT, prefix = STRBUF_INIT, p = STRBUF_INIT;
	const char *base = strrchr(bin, '/');
	struct dirent *e;
	struct stat st;
	DIR *d;

	path_dir(bin, &dir);
	sb_addf(&prefix, "%s.work-", base ? base + 1 : bin);
	d = opendir(dir.buf);
	if (!d)
		goto out;
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, prefix.buf, prefix.len))
			continue;
		sb_reset(&p);
		sb_addf(&p, "%s/%s/" RUNNING_MARK, dir.buf, e->d_name);
		if (stat(p.buf, &st) < 0)
			continue;   /* --keep-work kept it, or it is not ours */
		sb_reset(&p);
		sb_addf(&p, "%s/%s", dir.buf, e->d_name);
		remove_tree(p.buf);
	}
	closedir(d);
out:
	sb_release(&dir);
	sb_release(&prefix);
	sb_release(&p);
}

void shrink_out_hash(const void *data, size_t len, char out[17])
{
	const unsigned char *b = data;
	unsigned long long h = 1469598103934665603ull;   /* FNV-1a 64 */
	for (size_t i = 0; i < len; i++) {
		h ^= b[i];
		h *= 1099511628211ull;
	}
	snprintf(out, 17, "%016llx", h);
}

static int rank(const char *outcome)
{
	if (!strcmp(outcome, SHRINK_CONFIRMED))
		return 0;
	if (!strcmp(outcome, SHRINK_UNCONFIRMED))
		return 1;
	return 2;
}

/* A top-level "key: value" of repro.yaml into out (quotes dropped). */
static void yaml_top(const char *text, const char *key, char *out, size_t cap)
{
	size_t n = strlen(key);
	out[0] = 0;
	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		if (strncmp(l, key, n) || l[n] != ':')
			continue;
		l += n + 1;
		while (*l == ' ' || *l == '"' || *l == '\'')
			l++;
		size_t k = strcspn(l, "\"'\n");
		snprintf(out, cap, "%.*s", (int)k, l);
		return;
	}
}

static int exists(const char *path)
{
	struct stat st;
	return lstat(path, &st) == 0;
}

/* Why the files at cu may not be replaced by a result of this outcome,
 * into why; 0 when they may. */
static int blocked(const char *cu, const char *bin, const char *yml, const char *outcome,
		   struct strbuf *why)
{
	struct strbuf y = STRBUF_INIT, c = STRBUF_INIT, e = STRBUF_INIT;
	char old[64], hash[64], now[17];
	int ret = 1;

	if (!exists(cu) && !exists(bin) && !exists(yml)) {
		ret = 0;
		goto out;
	}
	if (read_file(yml, &y, &e) < 0) {
		sb_addf(why, "%s is there without a report of shrink's (%s)", exists(cu) ? cu : bin, yml);
		goto out;
	}
	yaml_top(y.buf, "outcome", old, sizeof(old));
	yaml_top(y.buf, "repro_cu_hash", hash, sizeof(hash));
	if (!old[0] || !hash[0]) {
		sb_addf(why, "%s was not written by this version of gpureduce shrink", yml);
		goto out;
	}
	if (exists(cu)) {
		if (read_file(cu, &c, &e) < 0) {
			sb_addf(why, "%s cannot be read", cu);
			goto out;
		}
		shrink_out_hash(c.buf, c.len, now);
		if (strcmp(now, hash)) {
			sb_addf(why, "%s was edited since shrink wrote it", cu);
			goto out;
		}
	}
	if (exists(bin) && !safe_is_trace(bin)) {
		sb_addf(why, "%s is not a trace", bin);
		goto out;
	}
	if (rank(outcome) > rank(old)) {
		sb_addf(why, "%s holds a %s repro and this result is %s", cu, old, outcome);
		goto out;
	}
	ret = 0;
out:
	sb_release(&y);
	sb_release(&c);
	sb_release(&e);
	return ret;
}

void shrink_out_pick(const char *cu, const char *outcome, int force, struct strbuf *dest,
		     struct strbuf *why)
{
	char *bin = repro_sibling(cu, ".bin"), *yml = repro_sibling(cu, ".yaml");
	size_t n = strlen(cu);

	if (force || !blocked(cu, bin, yml, outcome, why)) {
		sb_adds(dest, cu);
		goto out;
	}
	if (n > 3 && !strcmp(cu + n - 3, ".cu"))
		n -= 3;
	for (int k = 2;; k++) {
		struct strbuf c = STRBUF_INIT;
		sb_addf(&c, "%.*s-%d.cu", (int)n, cu, k);
		char *b = repro_sibling(c.buf, ".bin"), *y = repro_sibling(c.buf, ".yaml");
		int free_ = !exists(c.buf) && !exists(b) && !exists(y);
		free(b);
		free(y);
		if (free_) {
			sb_adds(dest, c.buf);
			sb_release(&c);
			break;
		}
		sb_release(&c);
	}
out:
	free(bin);
	free(yml);
}

int shrink_out_move(const char *const src[3], const char *const dst[3], struct strbuf *err)
{
	for (int i = 0; i < 3; i++)
		if (rename(src[i], dst[i]) < 0) {
			sb_addf(err, "cannot move %s to %s: %s", src[i], dst[i], strerror(errno));
			return -1;
		}
	return 0;
}
