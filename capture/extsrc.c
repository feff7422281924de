/*
 * extsrc.c - the CUDA sources of torch.utils.cpp_extension modules
 * (load_inline, load) loaded in the traced process, for SOURCE records
 * (origin 4, kernel "": the emitter finds a kernel by its __global__ name
 * in the text).  Called by source.c at the first launch of each kernel
 * handle; it looks again only when the process loaded new shared objects
 * since the last look (dl_phdr_info.dlpi_adds), and at each folder once.
 *
 * Which folders: the folder of every loaded shared object that holds a
 * build.ninja (torch's JIT build folder, ~/.cache/torch_extensions/...).
 * Which files: those build.ninja compiles with its cuda_compile rule
 * (load(sources=[...]) names them anywhere), else the folder's *.cu files
 * (load_inline writes cuda.cu there).  At most 16 files of 1 MiB each.
 */
#include <dirent.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/strbuf.h"
#include "../common/util.h"
#include "capture.h"

enum { MAX_FILES = 16, MAX_BYTES = 1 << 20, MAX_DIRS = 256 };

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static unsigned long long g_adds = ~0ull;
static char *g_dirs[MAX_DIRS];
static int g_ndirs;

struct scan {
	struct strbuf dirs;      /* NUL-separated folders with a build.ninja, not yet seen */
	unsigned long long adds;
};

static int seen_dir(const char *d)
{
	for (int i = 0; i < g_ndirs; i++)
		if (!strcmp(g_dirs[i], d))
			return 1;
	if (g_ndirs < MAX_DIRS)
		g_dirs[g_ndirs++] = xstrdup(d);
	return 0;
}

static int file_exists(const char *dir, const char *name)
{
	char p[4096 + 64];
	FILE *f;
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	f = fopen(p, "r");
	if (f)
		fclose(f);
	return f != NULL;
}

static int adds_only(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	*(unsigned long long *)arg = info->dlpi_adds;
	return 1;
}

static int each_obj(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct scan *s = arg;
	const char *slash, *name = info->dlpi_name;
	char dir[4096], real[PATH_MAX];
	(void)size;
	if (!name || !*name || !strchr(name, '/'))
		return 0;
	if (name[0] != '/') {   /* dlopen("./ext/x.so"): as given, relative to the cwd */
		if (!realpath(name, real))
			return 0;
		name = real;
	}
	slash = strrchr(name, '/');
	if ((size_t)(slash - name) >= sizeof(dir) || slash == name)
		return 0;
	memcpy(dir, name, (size_t)(slash - name));
	dir[slash - name] = 0;
	if (seen_dir(dir) || !file_exists(dir, "build.ninja"))
		return 0;   /* each folder is looked at once */
	sb_add(&s->dirs, dir, strlen(dir) + 1);
	return 0;
}

static int ext_read(const char *path, struct strbuf *out)
{
	FILE *f = fopen(path, "r");
	char chunk[8192];
	size_t n;
	if (!f)
		return -1;
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0 && out->len < MAX_BYTES)
		sb_add(out, chunk, n);
	fclose(f);
	return memchr(out->buf ? out->buf : "", 0, out->len) ? -1 : 0;
}

static void add_file(struct cap_ext_files *ef, const char *path)
{
	struct strbuf t = STRBUF_INIT;
	if (ef->n >= MAX_FILES)
		return;
	for (size_t i = 0; i < ef->n; i++)
		if (!strcmp(ef->path[i], path))
			return;
	if (ext_read(path, &t) == 0 && t.len) {
		ef->path[ef->n] = xstrdup(path);
		ef->text[ef->n] = sb_detach(&t, NULL);
		ef->n++;
	}
	sb_release(&t);
}

/* The .cu files build.ninja's cuda_compile rule builds, else the folder's. */
static void scan_dir(const char *dir, struct cap_ext_files *ef)
{
	struct strbuf nj = STRBUF_INIT, p = STRBUF_INIT;
	size_t before = ef->n;
	sb_addf(&p, "%s/build.ninja", dir);
	if (ext_read(p.buf, &nj) == 0) {
		for (const char *l = nj.buf; l && *l;) {
			const char *e = strchr(l, '\n'), *r = strstr(l, ": cuda_compile ");
			if (r && (!e || r < e)) {
				const char *s = r + 15, *t = s;
				while (*t && *t != ' ' && *t != '\n')
					t++;
				sb_reset(&p);
				sb_add(&p, s, (size_t)(t - s));
				if (p.buf[0] != '/') {
					char *rel = xstrdup(p.buf);
					sb_reset(&p);
					sb_addf(&p, "%s/%s", dir, rel);
					free(rel);
				}
				add_file(ef, p.buf);
			}
			l = e ? e + 1 : NULL;
		}
	}
	if (ef->n == before) {
		DIR *d = opendir(dir);
		struct dirent *de;
		while (d && (de = readdir(d))) {
			size_t n = strlen(de->d_name);
			if (n > 3 && !strcmp(de->d_name + n - 3, ".cu")) {
				sb_reset(&p);
				sb_addf(&p, "%s/%s", dir, de->d_name);
				add_file(ef, p.buf);
			}
		}
		if (d)
			closedir(d);
	}
	sb_release(&nj);
	sb_release(&p);
}

void cap_ext_scan(struct cap_ext_files *ef)
{
	struct scan s = { STRBUF_INIT, 0 };
	const char *env = getenv("GPUREDUCE_SOURCE");
	if (env && !strcmp(env, "0"))
		return;
	pthread_mutex_lock(&g_mu);
	dl_iterate_phdr(adds_only, &s.adds);   /* cheap: stops at the first object */
	if (s.adds != g_adds) {
		g_adds = s.adds;
		dl_iterate_phdr(each_obj, &s);
		for (size_t pos = 0; pos < s.dirs.len; pos += strlen(s.dirs.buf + pos) + 1)
			scan_dir(s.dirs.buf + pos, ef);
	}
	pthread_mutex_unlock(&g_mu);
	sb_release(&s.dirs);
}

void cap_ext_release(struct cap_ext_files *ef)
{
	for (size_t i = 0; i < ef->n; i++) {
		free(ef->path[i]);
		free(ef->text[i]);
	}
	ef->n = 0;
}
