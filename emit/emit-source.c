/*
 * emit-source.c - a kernel's own source for repro.cu and the report (see
 * emit-source.h).  Emission only: what capture recorded (SOURCE records,
 * the program's STDERR tail) is read from the captured trace; a source
 * file named by a "file.cu:6" place (line info through the sanitizer, a
 * device assert on stderr) is read when the repro is written, from the
 * path as given or relative to the captured program's cwd; failing both,
 * the one .cu/.cuh file beside the captured program that defines the
 * kernel (find_beside: `nvcc -o app app.cu && ./app`, no line info).
 * With no source at all, the place a device assert names and, for a
 * PyTorch file, its line upstream (emit_source_elsewhere).
 */
#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/elf.h"
#include "../common/strbuf.h"
#include "../common/util.h"
#include "../trace/trace.h"
#include "emit-source.h"
#include "tritonsig.h"
#include "../addr/params.h"

enum { BLOCK_LINES = 120, MAX_FILE = 4 << 20 };

const char *emit_source_origin(int origin)
{
	switch (origin) {
	case TR_SRC_TRITON: return "Triton (@triton.jit)";
	case TR_SRC_INDUCTOR: return "Inductor (torch.compile), a generated Triton kernel";
	case TR_SRC_NVRTC: return "NVRTC (runtime-compiled CUDA C++)";
	case TR_SRC_EXTENSION: return "torch.utils.cpp_extension source";
	case TR_SRC_FILE: return "source file named by the fault's location";
	case TR_SRC_PTX: return "PTX";
	case EMIT_SRC_BESIDE: return "CUDA source beside the program (the file there that defines the kernel)";
	default: return "source";
	}
}

/* The value of "key: " in meta lines, malloc'd ("" when absent). */
static char *meta_get(const char *meta, const char *key)
{
	size_t kl = strlen(key);
	for (const char *p = meta; p && *p;) {
		const char *e = strchr(p, '\n');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		if (n > kl + 1 && !strncmp(p, key, kl) && p[kl] == ':') {
			const char *v = p + kl + 1;
			while (*v == ' ')
				v++;
			return xstrndup(v, n - (size_t)(v - p));
		}
		p = e ? e + 1 : p + n;
	}
	return xstrdup("");
}

/* The '(' that opens the parameter list of the kernel whose name (nl
 * bytes) starts at name, past an explicit specialisation's <...>; NULL
 * when none follows. */
static const char *list_open(const char *name, size_t nl)
{
	const char *q = name + nl;
	int depth;

	while (isspace((unsigned char)*q))
		q++;
	if (*q == '<')
		for (depth = 1, q++; *q && depth; q++)
			depth += *q == '<' ? 1 : *q == '>' ? -1 : 0;
	while (isspace((unsigned char)*q))
		q++;
	return *q == '(' ? q : NULL;
}

/* Scan the parameter list of the kernel whose name (nl bytes) starts at
 * name to its closing ')', comments skipped: the character past it, or
 * NULL when the list does not close.  out (may be NULL) gets the list's
 * text, each comment a blank. */
static const char *list_close(const char *name, size_t nl, struct strbuf *out)
{
	const char *q = list_open(name, nl);
	int depth;

	if (!q)
		return NULL;
	for (q++, depth = 0; *q; q++) {
		if (q[0] == '/' && q[1] == '/') {
			while (*q && *q != '\n')
				q++;
			if (out)
				sb_addch(out, ' ');
			if (!*q)
				break;
			continue;
		}
		if (q[0] == '/' && q[1] == '*') {
			const char *e = strstr(q + 2, "*/");
			if (!e)
				break;
			q = e + 1;
			if (out)
				sb_addch(out, ' ');
			continue;
		}
		if (*q == '(' || *q == '[' || *q == '{')
			depth++;
		else if (*q == ']' || *q == '}')
			depth--;
		else if (*q == ')' && !depth--)
			return q + 1;
		if (out)
			sb_addch(out, *q);
	}
	return NULL;
}

/* Past the parameter list of the kernel whose name (nl bytes) starts at
 * name, and the blanks after it: "{" for a definition, ";" for a
 * declaration, ":" for a Python def.  NULL when the list does not close. */
static const char *after_list(const char *name, size_t nl)
{
	const char *q = list_close(name, nl, NULL);

	while (q && isspace((unsigned char)*q))
		q++;
	return q;
}

/* Where text has a kernel called `base` ("__global__ ... base(" or
 * "def base("): its name's first byte, or NULL.  A definition (a body
 * follows its parameters) is preferred to a declaration before it; *is_def
 * (may be NULL) says which was found. */
static const char *kernel_at(const char *text, const char *base, int *is_def)
{
	const char *decl = NULL;
	size_t bl = strlen(base);
	if (is_def)
		*is_def = 0;
	if (!bl)
		return NULL;
	for (const char *p = strstr(text, base); p; p = strstr(p + 1, base)) {
		const char *q = p + bl;
		if (p > text && (isalnum((unsigned char)p[-1]) || p[-1] == '_'))
			continue;
		while (*q == ' ' || *q == '\t' || *q == '\n')
			q++;
		if (*q != '(' && *q != '<')
			continue;
		/* a __global__ (or def) before it on the way back to the last ';' or '}' */
		for (const char *r = p; r > text && r[-1] != ';' && r[-1] != '}'; r--)
			if (!strncmp(r - 1, "__global__", 10) || (r - text >= 4 && !strncmp(r - 4, "def ", 4))) {
				const char *a = after_list(p, bl);
				if (a && (*a == '{' || *a == ':' || (a[0] == '-' && a[1] == '>'))) {
					if (is_def)
						*is_def = 1;
					return p;
				}
				if (!decl)
					decl = p;
				break;
			}
	}
	return decl;
}

static const char *defined_at(const char *text, const char *base)
{
	return kernel_at(text, base, NULL);
}

static int defines(const char *text, const char *base)
{
	return defined_at(text, base) != NULL;
}

/* ---- CUDA C parameter names --------------------------------------------- */

static int is_ident(int c)
{
	return isalnum(c) || c == '_';
}

/* A name that is a type word, not a parameter's name ("const int": unnamed) */
static int type_word(const char *w, size_t n)
{
	static const char *const words[] = { "int", "float", "double", "char", "short", "long", "unsigned", "signed",
					     "bool", "void", "const", "volatile", "__restrict__", "__restrict",
					     "size_t", "half", "auto", "struct" };
	for (size_t i = 0; i < ARRAY_SIZE(words); i++)
		if (strlen(words[i]) == n && !strncmp(w, words[i], n))
			return 1;
	return 0;
}

/* The parameter list of the definition whose name (nl bytes) starts at
 * name, comments blanked: malloc'd, or NULL. */
static char *param_list(const char *name, size_t nl)
{
	struct strbuf o = STRBUF_INIT;

	if (list_close(name, nl, &o))
		return sb_detach(&o, NULL);
	sb_release(&o);
	return NULL;
}

/* The names of the parameters of the CUDA C definition whose name (nl
 * bytes) starts at name, in *names (malloc'd): their count, or -1 when
 * the list does not parse or one parameter has no name. */
static int c_param_names(const char *name, size_t nl, char ***names)
{
	char *list = param_list(name, nl), *a;
	int n = 0, angle = 0, paren = 0, ok = list != NULL;

	*names = NULL;
	for (a = list; ok; ) {
		char *b = a, *e, *w;
		/* the parameter ends at a comma outside (), [] and <> */
		for (; *b && !(*b == ',' && !angle && !paren); b++) {
			angle += *b == '<' ? 1 : *b == '>' ? -1 : 0;
			paren += *b == '(' || *b == '[' ? 1 : *b == ')' || *b == ']' ? -1 : 0;
		}
		e = b;
		for (char *d = a; d < e; d++)   /* a default value */
			if (*d == '=') {
				e = d;
				break;
			}
		while (e > a && (isspace((unsigned char)e[-1]) || e[-1] == ']')) {
			if (e[-1] == ']')   /* int a[4] */
				while (e > a && e[-1] != '[')
					e--;
			e -= e > a;
		}
		for (w = e; w > a && is_ident((unsigned char)w[-1]); w--)
			;
		if (n == 0 && !*b) {   /* "()" or "(void)": no parameters */
			char *t = a;
			while (isspace((unsigned char)*t))
				t++;
			if (t == e || (e - t == 4 && !strncmp(t, "void", 4)))
				break;
		}
		/* a name, after something (its type), and not itself a type word */
		{
			const char *t = a;
			while (t < w && isspace((unsigned char)*t))
				t++;
			if (w == e || t == w || isdigit((unsigned char)*w) || type_word(w, (size_t)(e - w))) {
				ok = 0;
				break;
			}
		}
		*names = xrealloc(*names, (size_t)(n + 1) * sizeof(**names));
		(*names)[n++] = xstrndup(w, (size_t)(e - w));
		if (!*b)
			break;
		a = b + 1;
	}
	free(list);
	if (!ok) {
		for (int i = 0; i < n; i++)
			free((*names)[i]);
		free(*names);
		*names = NULL;
		return -1;
	}
	return n;
}

/* The line (1-based) of text that holds p. */
static uint32_t line_of(const char *text, const char *p)
{
	uint32_t n = 1;
	for (const char *q = text; q < p; q++)
		n += *q == '\n';
	return n;
}

/* Do the n bytes at f end with one of the next extensions (and more)? */
static int has_ext(const char *f, size_t n, const char *const *ext, size_t next)
{
	for (size_t i = 0; i < next; i++) {
		size_t el = strlen(ext[i]);
		if (n > el && !strncmp(f + n - el, ext[i], el))
			return 1;
	}
	return 0;
}

static int is_src_ext(const char *f, size_t n)
{
	static const char *const ext[] = { ".py", ".cu", ".cuh", ".cpp", ".cc", ".c", ".h", ".hpp" };
	return has_ext(f, n, ext, ARRAY_SIZE(ext));
}

int emit_source_site(const char *text, char *file, size_t nfile, uint32_t *line, const char **rest)
{
	for (const char *p = text; p && *p; p++) {
		const char *b, *c;
		char *end;
		unsigned long v;
		if (*p != ':' || !isdigit((unsigned char)p[1]))
			continue;
		b = p;
		while (b > text && !isspace((unsigned char)b[-1]) && b[-1] != '(' && b[-1] != '"' &&
		       b[-1] != '\'' && b[-1] != '`')
			b--;
		if (!is_src_ext(b, (size_t)(p - b)) || (size_t)(p - b) >= nfile)
			continue;
		v = strtoul(p + 1, &end, 10);
		if (!v || v > 10000000)
			continue;
		memcpy(file, b, (size_t)(p - b));
		file[p - b] = 0;
		*line = (uint32_t)v;
		c = end;
		if (*c == ':')
			c++;
		if (rest)
			*rest = c;
		return 1;
	}
	return 0;
}

static const char *tail_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

static int same_file(const char *a, const char *b)
{
	return *a && *b && !strcmp(tail_name(a), tail_name(b));
}

/* path opened for reading when it is a regular file (never a FIFO or a
 * device a trace's text might name: they could block or never end) */
static FILE *open_regular(const char *path)
{
	struct stat st;
	FILE *f;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || !(f = fdopen(fd, "r"))) {
		close(fd);
		return NULL;
	}
	return f;
}

/* Read path (as given, else relative to cwd) into *text.  0 or -1. */
static int read_source(const char *path, const char *cwd, char **text, char **used)
{
	struct strbuf p = STRBUF_INIT, buf = STRBUF_INIT;
	FILE *f;
	int ret = -1;
	sb_adds(&p, path);
	f = open_regular(p.buf);
	if (!f && path[0] != '/' && cwd && *cwd) {
		sb_reset(&p);
		sb_addf(&p, "%s/%s", cwd, path);
		f = open_regular(p.buf);
	}
	if (!f)
		goto out;
	for (;;) {
		char chunk[8192];
		size_t n = fread(chunk, 1, sizeof(chunk), f);
		if (!n)
			break;
		sb_add(&buf, chunk, n);
		if (buf.len > MAX_FILE)
			break;
	}
	fclose(f);
	if (buf.len > MAX_FILE || memchr(buf.buf, 0, buf.len))
		goto out;
	*text = sb_detach(&buf, NULL);
	*used = sb_detach(&p, NULL);
	ret = 0;
out:
	sb_release(&p);
	sb_release(&buf);
	return ret;
}

/* ---- the source beside the program ------------------------------------- *
 *
 * A kernel built by plain nvcc (no -lineinfo) has no SOURCE record and no
 * place in its fault: its source is looked for where the program's own
 * files are, when the repro is written on the machine that captured it.
 * The folders: the captured cwd and the folder of each argument that names
 * a file (./app, train.py), each with its src, csrc, kernels, cuda and
 * parent folders; in them the .cu and .cuh files (by name, at most 256 files
 * and 32 MiB read).  A file counts when it defines the kernel
 * (`__global__ ... name(...) {`; a declaration ending in `;` does not).  Kept: the one such file, or among several the
 * one named like the program's (app.cu for ./app); else none, rather than
 * a namesake.  GPUREDUCE_SOURCE=0 turns it off, as it does capture's. */

enum { BESIDE_DIRS = 48, BESIDE_STEMS = 8, BESIDE_FILES = 256, BESIDE_BYTES = 32 << 20 };

struct beside {
	const char *base;             /* the kernel's bare name */
	char *dirs[BESIDE_DIRS];      /* folders looked in (real paths) */
	int ndirs;
	char *stems[BESIDE_STEMS];    /* the program's files' names, no extension */
	int nstems;
	size_t files, bytes;          /* read so far */
	int found;                    /* files that define the kernel */
	int kept_stem;                /* the kept one is named like the program */
	char *text, *path;            /* the one kept */
};

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int is_cuda_src(const char *name)
{
	static const char *const ext[] = { ".cu", ".cuh" };
	return has_ext(name, strlen(name), ext, ARRAY_SIZE(ext));
}

/* name less its folder and its last extension, malloc'd */
static char *stem_of(const char *path)
{
	const char *b = tail_name(path), *dot;
	dot = strrchr(b, '.');
	return xstrndup(b, dot && dot > b ? (size_t)(dot - b) : strlen(b));
}

static int stem_match(const struct beside *b, const char *path)
{
	char *st = stem_of(path);
	int hit = 0;
	for (int i = 0; i < b->nstems && !hit; i++)
		hit = !strcmp(st, b->stems[i]);
	free(st);
	return hit;
}

static void beside_file(struct beside *b, const char *path)
{
	char *text = NULL, *used = NULL;
	struct stat st;
	int is_def, named;

	if (b->files >= BESIDE_FILES || stat(path, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size > MAX_FILE ||
	    b->bytes + (size_t)st.st_size > BESIDE_BYTES)
		return;
	b->files++;
	b->bytes += (size_t)st.st_size;
	if (read_source(path, NULL, &text, &used) < 0)
		return;
	if (!kernel_at(text, b->base, &is_def) || !is_def) {   /* a header's declaration does not count */
		free(text);
		free(used);
		return;
	}
	b->found++;
	named = stem_match(b, path);
	if (!b->text || (named && !b->kept_stem)) {
		free(b->text);
		free(b->path);
		b->text = text;
		b->path = used;
		b->kept_stem = named;
		return;
	}
	free(text);
	free(used);
}

/* dir's .cu and .cuh files, in name order; each folder once */
static void beside_dir(struct beside *b, const char *dir)
{
	char real[PATH_MAX];
	char **names = NULL;
	size_t n = 0, cap = 0;
	struct dirent *de;
	DIR *d;

	if (b->ndirs >= BESIDE_DIRS || !realpath(dir, real))
		return;
	for (int i = 0; i < b->ndirs; i++)
		if (!strcmp(b->dirs[i], real))
			return;
	b->dirs[b->ndirs++] = xstrdup(real);
	if (!(d = opendir(real)))
		return;
	while ((de = readdir(d)) && n < 4096) {
		if (!is_cuda_src(de->d_name))
			continue;
		if (n == cap) {
			cap = cap ? cap * 2 : 16;
			names = xrealloc(names, cap * sizeof(*names));
		}
		names[n++] = xstrdup(de->d_name);
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), cmp_str);
	for (size_t i = 0; i < n; i++) {
		struct strbuf p = STRBUF_INIT;
		sb_addf(&p, "%s/%s", real, names[i]);
		beside_file(b, p.buf);
		sb_release(&p);
		free(names[i]);
	}
	free(names);
}

static void beside_around(struct beside *b, const char *dir)
{
	static const char *const sub[] = { "", "/src", "/csrc", "/kernels", "/cuda", "/.." };
	for (size_t i = 0; i < ARRAY_SIZE(sub); i++) {
		struct strbuf p = STRBUF_INIT;
		sb_addf(&p, "%s%s", dir, sub[i]);
		beside_dir(b, p.buf);
		sb_release(&p);
	}
}

/* The one source beside the captured process p that defines kernel base:
 * 0 with *text and *path (malloc'd), or -1.  (find_beside_once decides
 * whether to look at all.) */
static int find_beside(const struct tr_process *p, const char *base, char **text, char **path)
{
	struct beside b;
	int ret = -1;

	memset(&b, 0, sizeof(b));
	b.base = base;
	for (uint32_t i = 0; i < p->argc && i < BESIDE_STEMS && b.nstems < BESIDE_STEMS; i++) {
		const char *a = p->argv[i];
		struct strbuf f = STRBUF_INIT;
		struct stat st;
		if (!a || !*a)
			continue;
		if (a[0] == '/' || !p->cwd || !*p->cwd)
			sb_adds(&f, a);
		else
			sb_addf(&f, "%s/%s", p->cwd, a);
		if (stat(f.buf, &st) == 0 && S_ISREG(st.st_mode)) {
			char *slash = strrchr(f.buf, '/');
			b.stems[b.nstems++] = stem_of(f.buf);
			if (slash && slash > f.buf) {
				*slash = 0;
				beside_around(&b, f.buf);
			}
		}
		sb_release(&f);
	}
	if (p->cwd && *p->cwd)
		beside_around(&b, p->cwd);
	if (b.text && (b.found == 1 || b.kept_stem)) {
		*text = b.text;
		*path = b.path;
		b.text = b.path = NULL;
		ret = 0;
	}
	free(b.text);
	free(b.path);
	for (int i = 0; i < b.ndirs; i++)
		free(b.dirs[i]);
	for (int i = 0; i < b.nstems; i++)
		free(b.stems[i]);
	return ret;
}

/* ---- one search per process ------------------------------------------------
 *
 * shrink emits repro.cu several times (the prebuild thread, each check of
 * repro.cu, the file written), and each would read up to 32 MiB of files
 * beside the program again (six searches a shrink; ~15 ms each over 32 MiB
 * on a warm page cache).  The answer for a process record (its cwd and
 * argv) and a kernel is kept for the process's life, under a lock: the
 * prebuild thread emits beside the reducer's thread. */

enum { BESIDE_CACHE = 8 };

static pthread_mutex_t beside_lock = PTHREAD_MUTEX_INITIALIZER;
static struct beside_memo {
	char *key;          /* cwd, argv and the kernel, NUL-separated text */
	int ret;
	char *text, *path;
} beside_memo[BESIDE_CACHE];
static unsigned beside_next;

static char *beside_key(const struct tr_process *p, const char *base)
{
	struct strbuf k = STRBUF_INIT;
	sb_addf(&k, "%s\n%s\n%u", base, p->cwd ? p->cwd : "", p->argc);
	for (uint32_t i = 0; i < p->argc; i++)
		sb_addf(&k, "\n%s", p->argv[i] ? p->argv[i] : "");
	return sb_detach(&k, NULL);
}

/* find_beside, asked once per process record and kernel in a process;
 * not at all without a process, a kernel name, or with GPUREDUCE_SOURCE=0 */
static int find_beside_once(const struct tr_process *p, const char *base, char **text, char **path)
{
	const char *off = getenv("GPUREDUCE_SOURCE");
	struct beside_memo *m = NULL;
	char *key;
	int ret;

	if (!p || (off && !strcmp(off, "0")) || !*base)
		return -1;
	key = beside_key(p, base);
	pthread_mutex_lock(&beside_lock);
	for (unsigned i = 0; i < BESIDE_CACHE && !m; i++)
		if (beside_memo[i].key && !strcmp(beside_memo[i].key, key))
			m = &beside_memo[i];
	if (!m) {
		char *t = NULL, *pa = NULL;
		m = &beside_memo[beside_next++ % BESIDE_CACHE];
		free(m->key);
		free(m->text);
		free(m->path);
		m->ret = find_beside(p, base, &t, &pa);
		m->key = key;
		key = NULL;
		m->text = t;
		m->path = pa;
	}
	ret = m->ret;
	if (ret == 0) {
		*text = xstrdup(m->text);
		*path = xstrdup(m->path);
	}
	pthread_mutex_unlock(&beside_lock);
	free(key);
	return ret;
}

/* The fault's place in s's file from the hints or the program's stderr. */
static void find_fault_line(struct emit_src *s, const struct trace *orig, const char *hints)
{
	const char *srcs[2] = { hints, NULL };
	const char *why[2] = { "the fault's location (line info)", "the program's stderr (device assert)" };
	for (size_t i = 0; orig && i < orig->nrec; i++)
		if (orig->rec[i].type == TR_STDERR)
			srcs[1] = orig->rec[i].u.stderr_tail.text;
	for (int k = 0; k < 2 && !s->fault_line; k++) {
		const char *p = srcs[k];
		char file[1024];
		uint32_t line;
		const char *rest;
		while (p && emit_source_site(p, file, sizeof(file), &line, &rest)) {
			if (same_file(file, s->path)) {
				const char *a = strstr(rest, "Assertion");
				s->fault_line = line;
				s->fault_why = xstrdup(why[k]);
				if (a && (!strchr(rest, '\n') || a < strchr(rest, '\n')))
					s->fault_text = xstrndup(a, strcspn(a, "\n"));
				break;
			}
			p = rest;
		}
	}
}

void emit_source_free(struct emit_src *s)
{
	if (!s)
		return;
	free(s->kernel);
	free(s->path);
	free(s->text);
	free(s->version);
	free(s->constexpr_);
	free(s->function);
	free(s->fault_why);
	free(s->fault_text);
	for (uint32_t i = 0; i < s->nparams; i++)
		free(s->params[i]);
	for (uint32_t i = 0; i < s->ntypes; i++)
		free(s->types[i]);
	free(s->params);
	free(s->types);
	free(s);
}

struct emit_src *emit_source_find(const struct trace *orig, const struct tr_launch *l, const char *hints)
{
	const struct tr_source *best = NULL;
	const struct tr_process *proc = NULL;
	struct emit_src *s = NULL;
	const char *cwd = NULL;
	char *base = params_base_name(l->name);
	int ptx = 0;

	for (size_t i = 0; orig && i < orig->nrec; i++) {
		const struct tr_rec *r = &orig->rec[i];
		if (r->type == TR_PROCESS && !proc) {
			proc = &r->u.process;
			cwd = proc->cwd;
		}
		if (r->type != TR_SOURCE)
			continue;
		if (r->u.source.origin == TR_SRC_PTX) {
			ptx |= !strcmp(r->u.source.kernel, l->name);
			continue;
		}
		if (*r->u.source.kernel ? !strcmp(r->u.source.kernel, l->name)
					: defines(r->u.source.text, base))
			best = &r->u.source;   /* the latest wins: a program compiled again */
	}
	s = xcalloc(1, sizeof(*s));
	s->has_ptx = ptx;
	s->first_line = 1;
	if (best) {
		char *pl = meta_get(best->meta, "params"), *tl = meta_get(best->meta, "types");
		char *line = meta_get(best->meta, "line");
		s->origin = (int)best->origin;
		s->kernel = xstrdup(*best->kernel ? best->kernel : base);
		s->path = xstrdup(best->path);
		s->text = xstrdup(best->text);
		s->version = meta_get(best->meta, "version");
		s->constexpr_ = meta_get(best->meta, "constexpr");
		s->function = meta_get(best->meta, "function");
		if (atoi(line) > 0)
			s->first_line = (uint32_t)atoi(line);
		s->nparams = tsig_split_types(pl, &s->params);   /* names: plain words */
		s->ntypes = tsig_split_types(tl, &s->types);
		/* a tensor descriptor argument is several kernel parameters */
		if (s->ntypes == s->nparams && s->nparams != l->nparams &&
		    tsig_expand(&s->params, &s->types, &s->nparams, l->nparams, l->params))
			s->ntypes = s->nparams;
		free(pl);
		free(tl);
		free(line);
	} else {
		/* no record: a file the fault's location or a device assert names */
		const char *srcs[2] = { hints, NULL };
		for (size_t i = 0; orig && i < orig->nrec; i++)
			if (orig->rec[i].type == TR_STDERR)
				srcs[1] = orig->rec[i].u.stderr_tail.text;
		for (int k = 0; k < 2 && !s->text; k++) {
			const char *p = srcs[k], *rest;
			char file[1024];
			uint32_t ln;
			while (p && emit_source_site(p, file, sizeof(file), &ln, &rest)) {
				char *text = NULL, *used = NULL;
				if (read_source(file, cwd, &text, &used) == 0) {
					if (defines(text, base) || k == 0) {
						s->text = text;
						s->path = used;
						break;
					}
					free(text);
					free(used);
				}
				p = rest;
			}
		}
		s->origin = TR_SRC_FILE;
		if (!s->text && find_beside_once(proc, base, &s->text, &s->path) == 0)
			s->origin = EMIT_SRC_BESIDE;
		if (!s->text) {
			emit_source_free(s);
			free(base);
			return NULL;
		}
		s->kernel = xstrdup(base);
		s->version = xstrdup("");
		s->constexpr_ = xstrdup("");
		s->function = xstrdup("");
	}
	s->launch_params = l->nparams;
	find_fault_line(s, orig, hints);
	if (s->first_line == 1) {   /* a whole file: where the kernel is defined */
		const char *at = defined_at(s->text, base);
		s->def_line = at ? line_of(s->text, at) : 0;
		/* CUDA C: the names its definition gives the parameters, when
		 * there are as many as the binary has */
		if (at && !s->nparams && s->origin != TR_SRC_TRITON && s->origin != TR_SRC_INDUCTOR) {
			char **names = NULL;
			int n = c_param_names(at, strlen(base), &names);
			if (n > 0 && (uint32_t)n == l->nparams) {
				s->params = names;
				s->nparams = (uint32_t)n;
			} else {
				for (int i = 0; i < n; i++)
					free(names[i]);
				free(names);
			}
		}
	}
	free(base);
	return s;
}

static void comment_line(struct strbuf *o, const char *indent, const char *p, size_t n)
{
	sb_adds(o, indent);
	for (size_t i = 0; i < n; i++) {
		if (p[i] == '*' && i + 1 < n && p[i + 1] == '/') {
			sb_adds(o, "* /");
			i++;
		} else if ((unsigned char)p[i] >= 32 || p[i] == '\t') {
			sb_addch(o, p[i]);
		}
	}
	sb_addch(o, '\n');
}

void emit_source_block(struct strbuf *o, const struct emit_src *s, const char *indent)
{
	struct strbuf h = STRBUF_INIT, pre = STRBUF_INIT;
	uint32_t nlines = 0, from, to, ln;
	const char *p;

	for (p = s->text; *p; p++)
		nlines += *p == '\n';
	if (p > s->text && p[-1] != '\n')
		nlines++;
	from = s->first_line;
	to = s->first_line + nlines - 1;
	if (s->fault_line && s->fault_line >= s->first_line && s->fault_line <= to) {
		if (nlines > BLOCK_LINES) {
			from = s->fault_line > BLOCK_LINES / 2 + s->first_line ? s->fault_line - BLOCK_LINES / 2
									      : s->first_line;
			to = from + BLOCK_LINES - 1;
		}
	} else if (nlines > BLOCK_LINES) {
		/* no faulting line: from a little above the kernel's definition */
		if (s->def_line > s->first_line + 3 && s->def_line <= to)
			from = s->def_line - 3;
		to = from + BLOCK_LINES - 1;
	}
	sb_addf(&pre, "%s * ", indent);
	sb_addf(o, "%s/*\n", indent);
	sb_addf(&h, "Kernel source: %s", emit_source_origin(s->origin));
	if (*s->version)
		sb_addf(&h, ", Triton %s", s->version);
	comment_line(o, pre.buf, h.buf, h.len);
	sb_reset(&h);
	if (*s->path) {
		sb_addf(&h, "From:          %s%s%s", s->path, *s->function ? " " : "", s->function);
		comment_line(o, pre.buf, h.buf, h.len);
		sb_reset(&h);
	}
	if (*s->constexpr_) {
		sb_addf(&h, "Compiled in:   %s (constexpr)", s->constexpr_);
		comment_line(o, pre.buf, h.buf, h.len);
		sb_reset(&h);
	}
	if (s->fault_line) {
		sb_addf(&h, "Faulting line: %u (marked >>), from %s", s->fault_line, s->fault_why);
		comment_line(o, pre.buf, h.buf, h.len);
		sb_reset(&h);
		if (s->fault_text) {
			sb_addf(&h, "It printed:    %s", s->fault_text);
			comment_line(o, pre.buf, h.buf, h.len);
			sb_reset(&h);
		}
	}
	if (!s->fault_line && s->def_line && s->origin == EMIT_SRC_BESIDE) {
		sb_addf(&h, "Kernel at:     line %u (the faulting line is not known: build with -lineinfo for it)",
			s->def_line);
		comment_line(o, pre.buf, h.buf, h.len);
		sb_reset(&h);
	}
	if (s->nparams && s->nparams != s->launch_params) {
		sb_addf(&h, "Note:          the source names %u parameters, the binary has %u: names may not line up",
			s->nparams, s->launch_params);
		comment_line(o, pre.buf, h.buf, h.len);
		sb_reset(&h);
	}
	comment_line(o, pre.buf, "", 0);
	if (from > s->first_line) {
		sb_reset(&h);
		sb_addf(&h, "  ... (%u lines above)", from - s->first_line);
		comment_line(o, pre.buf, h.buf, h.len);
	}
	ln = s->first_line;
	for (p = s->text; *p && ln <= to; ln++) {
		const char *e = strchr(p, '\n');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		if (ln >= from) {
			sb_reset(&h);
			sb_addf(&h, "%s%5u | ", ln == s->fault_line ? ">>" : "  ", ln);
			sb_add(&h, p, n);
			comment_line(o, pre.buf, h.buf, h.len);
		}
		p = e ? e + 1 : p + n;
	}
	if (ln <= s->first_line + nlines - 1) {
		sb_reset(&h);
		sb_addf(&h, "  ... (%u more lines)", s->first_line + nlines - ln);
		comment_line(o, pre.buf, h.buf, h.len);
	}
	sb_addf(o, "%s */\n", indent);
	sb_release(&h);
	sb_release(&pre);
}

void emit_source_param(struct strbuf *o, const struct emit_src *s, uint32_t p, const char *cxx_type)
{
	if (s && p < s->nparams) {
		sb_addf(o, "`%s`", s->params[p]);
		if (p < s->ntypes && *s->types[p])
			sb_addf(o, " (%s)", s->types[p]);
		else if (cxx_type)
			sb_addf(o, " (%s)", cxx_type);
		return;
	}
	sb_adds(o, cxx_type ? cxx_type : "?");
}

const char *emit_source_ctype(const struct emit_src *s, uint32_t p, const char *cxx_type)
{
	const char *t;
	if (cxx_type)
		return cxx_type;
	if (!s || p >= s->ntypes)
		return "";
	t = s->types[p];
	if (t[0] == '*')
		return "void*";
	if (!strcmp(t, "fp32"))
		return "float";
	if (!strcmp(t, "fp64"))
		return "double";
	if (t[0] == 'u')
		return "unsigned";
	if (!strcmp(t, "i1"))
		return "bool";
	return "int";
}

/* ---- PTX beside the cubin (issue 24, item 2) ---------------------------- */

struct ptx_find {
	const struct trace *orig;
	const struct tr_source *hit;
};

static int ptx_for_symbol(const char *name, int kind, void *arg)
{
	struct ptx_find *f = arg;
	(void)kind;
	for (size_t i = 0; f->orig && i < f->orig->nrec && !f->hit; i++) {
		const struct tr_rec *r = &f->orig->rec[i];
		if (r->type == TR_SOURCE && r->u.source.origin == TR_SRC_PTX && !strcmp(r->u.source.kernel, name) &&
		    *r->u.source.text)
			f->hit = &r->u.source;
	}
	return f->hit != NULL;
}

/* A C string literal of text, split into lines. */
static void c_lines(struct strbuf *o, const char *text)
{
	sb_adds(o, "\t\"");
	for (const char *p = text; *p; p++) {
		if (*p == '\n') {
			sb_adds(o, "\\n\"\n\t\"");
		} else if (*p == '"' || *p == '\\') {
			sb_addf(o, "\\%c", *p);
		} else if ((unsigned char)*p < 32 || (unsigned char)*p > 126) {
			sb_addf(o, "\\%03o", (unsigned char)*p);
		} else {
			sb_addch(o, *p);
			if (*p == '?' && p[1] == '?')   /* no trigraphs */
				sb_adds(o, "\"\"");
		}
	}
	sb_adds(o, "\"");
}

int emit_source_ptx_load(struct strbuf *globals, struct strbuf *body, const struct trace *orig,
			 const void *img, size_t len, int k, const char *expr)
{
	struct ptx_find f = { orig, NULL };
	if (!elf_is_elf(img, len))
		return 0;
	elf_symbols(img, len, ptx_for_symbol, &f);
	if (!f.hit)
		return 0;
	sb_addf(globals, "/* module %d's PTX, as the framework compiled it (%s): JIT-compiled when the\n"
		" * cubin does not load on this GPU, or with GPUREDUCE_REPRO_PTX=1 */\n"
		"static const char module%d_ptx[] =\n", k, f.hit->kernel, k);
	c_lines(globals, f.hit->text);
	sb_adds(globals, ";\n\n");
	sb_addf(body, "\tif (getenv(\"GPUREDUCE_REPRO_PTX\") || cuModuleLoadData(&mod[%d], %s) != CUDA_SUCCESS) {\n"
		"\t\tfprintf(stderr, \"repro: loading module %d from its PTX (JIT)\\n\");\n"
		"\t\tload_module(&mod[%d], module%d_ptx);\n\t}\n", k, expr, k, k, k);
	return 1;
}

/* ---- a source that is not on this machine --------------------------------
 *
 * A kernel of a library the user installed (PyTorch's ATen kernels above
 * all: index, embedding and loss kernels assert on a bad index) has no
 * source on the machine: the device assert names the file it was built
 * from ("/pytorch/aten/src/ATen/native/cuda/IndexKernel.cu:92: ...
 * Assertion `...` failed.").  For a PyTorch file the place is also a link
 * into PyTorch's repository at the commit the captured torch was built
 * from (ENV's torch_git), else at the release's tag, so the maintainer
 * reading the report lands on the asserting line. */

/* The value of key in the captured trace's ENV record, malloc'd; NULL. */
static char *env_value(const struct trace *t, const char *key)
{
	for (size_t i = 0; t && i < t->nrec; i++)
		if (t->rec[i].type == TR_ENV) {
			char *v = meta_get(t->rec[i].u.env.text, key);
			if (*v)
				return v;
			free(v);
			return NULL;
		}
	return NULL;
}

static int all_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isxdigit((unsigned char)s[i]))
			return 0;
	return n > 0;
}

/* The git ref of the captured torch's source, malloc'd ("" when no exact
 * one: a nightly): its commit, a source build's "+git<hash>", or a
 * release's tag ("2.11.0+cu130" -> "v2.11.0", "2.6.0rc1" -> "v2.6.0-rc1").
 * *version gets torch's version (malloc'd), or NULL. */
static char *torch_ref(const struct trace *t, char **version)
{
	char *git = env_value(t, "torch_git"), *v = env_value(t, "torch");
	struct strbuf r = STRBUF_INIT;
	const char *g;
	unsigned a, b, c, rc = 0;
	int n = 0;

	*version = v;
	if (git && strlen(git) >= 7 && all_hex(git, strlen(git)))
		return git;
	free(git);
	if (v && (g = strstr(v, "+git")) && strlen(g + 4) >= 7 && all_hex(g + 4, strlen(g + 4)))
		sb_adds(&r, g + 4);
	else if (v && ((sscanf(v, "%u.%u.%u%n", &a, &b, &c, &n) == 3 && (!v[n] || v[n] == '+')) ||
		       (sscanf(v, "%u.%u.%urc%u%n", &a, &b, &c, &rc, &n) == 4 && (!v[n] || v[n] == '+')))) {
		sb_addf(&r, "v%u.%u.%u", a, b, c);
		if (rc)
			sb_addf(&r, "-rc%u", rc);
	}
	return sb_detach(&r, NULL);
}

static int is_native_src(const char *f)
{
	static const char *const ext[] = { ".cu", ".cuh", ".cpp", ".cc", ".c", ".h", ".hpp" };
	return has_ext(f, strlen(f), ext, ARRAY_SIZE(ext));
}

/* The first native-code place in text; with assert_only, only on a line
 * that is a device assert's ("... Assertion `...` failed."). */
static int native_site(const char *text, int assert_only, char *file, size_t nfile, uint32_t *line)
{
	const char *p = text, *rest;
	while (p && emit_source_site(p, file, nfile, line, &rest)) {
		const char *eol = strchr(rest, '\n');
		size_t n = eol ? (size_t)(eol - rest) : strlen(rest);
		if (is_native_src(file) && (!assert_only || memmem(rest, n, "Assertion", 9)))
			return 1;
		p = rest;
	}
	return 0;
}

void emit_elsewhere_free(struct emit_elsewhere *e)
{
	if (!e)
		return;
	free(e->file);
	free(e->version);
	free(e->url);
	memset(e, 0, sizeof(*e));
}

int emit_source_elsewhere(const struct trace *orig, const char *hints, struct emit_elsewhere *e)
{
	static const char *const torch_dirs[] = { "aten/src/", "c10/", "torch/csrc/" };
	char file[1024];
	uint32_t line = 0;
	const char *why = NULL, *rel = NULL;

	memset(e, 0, sizeof(*e));
	if (hints && native_site(hints, 0, file, sizeof(file), &line))
		why = "the fault's location (line info)";
	for (size_t i = 0; !why && orig && i < orig->nrec; i++)
		if (orig->rec[i].type == TR_STDERR &&
		    native_site(orig->rec[i].u.stderr_tail.text, 1, file, sizeof(file), &line))
			why = "the device assert";
	if (!why)
		return 0;
	e->file = xstrdup(file);
	e->line = line;
	e->why = why;
	for (size_t i = 0; i < ARRAY_SIZE(torch_dirs) && !rel; i++) {
		const char *m = strstr(file, torch_dirs[i]);
		if (m && (m == file || m[-1] == '/'))
			rel = m;
	}
	if (rel) {
		char *ref = torch_ref(orig, &e->version);
		e->project = "PyTorch";
		if (*ref) {
			struct strbuf u = STRBUF_INIT;
			sb_addf(&u, "https://github.com/pytorch/pytorch/blob/%s/%s#L%u", ref, rel, line);
			e->url = sb_detach(&u, NULL);
		}
		free(ref);
	}
	return 1;
}

void emit_elsewhere_block(struct strbuf *o, const struct emit_elsewhere *e, const char *indent)
{
	sb_addf(o, "%s/* Kernel source: not captured; %s names\n%s *   %s:%u\n", indent, e->why, indent,
		e->file, e->line);
	if (e->project && e->url)
		sb_addf(o, "%s * %s's source of it, at the build the program ran (torch %s):\n%s *   %s\n", indent,
			e->project, e->version ? e->version : "?", indent, e->url);
	else if (e->project)
		sb_addf(o, "%s * a %s file; torch %s names no exact commit or tag to link\n", indent, e->project,
			e->version ? e->version : "(version not recorded)");
	sb_addf(o, "%s */\n", indent);
}
