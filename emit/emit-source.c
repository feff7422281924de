/*
 * emit-source.c - a kernel's own source for repro.cu and the report (see
 * emit-source.h).  Emission only: what capture recorded (SOURCE records,
 * the program's STDERR tail) is read from the captured trace; a source
 * file named by a "file.cu:6" place (line info through the sanitizer, a
 * device assert on stderr) is read when the repro is written, from the
 * path as given or relative to the captured program's cwd.
 */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* The bare name of a kernel: "ns::k<int>(float*, int)" -> "k". */
static char *base_name(const char *name)
{
	char *dm = params_demangle(name), *p, *b;
	size_t depth = 0;
	p = strchr(dm, '(');
	if (p)
		*p = 0;
	/* drop template arguments */
	for (p = b = dm; *p; p++) {
		if (*p == '<')
			depth++;
		else if (*p == '>' && depth)
			depth--;
		else if (!depth)
			*b++ = *p;
	}
	*b = 0;
	p = strrchr(dm, ':');
	b = xstrdup(p ? p + 1 : dm);
	p = strrchr(b, ' ');   /* "void k" from some demanglers */
	if (p)
		memmove(b, p + 1, strlen(p));
	free(dm);
	return b;
}

/* 1 if text defines a kernel called `base` ("__global__ ... base(" or
 * "def base("). */
static int defines(const char *text, const char *base)
{
	size_t bl = strlen(base);
	if (!bl)
		return 0;
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
			if (!strncmp(r - 1, "__global__", 10) || (r - text >= 4 && !strncmp(r - 4, "def ", 4)))
				return 1;
	}
	return 0;
}

static int is_src_ext(const char *f, size_t n)
{
	static const char *ext[] = { ".py", ".cu", ".cuh", ".cpp", ".cc", ".c", ".h", ".hpp" };
	for (size_t i = 0; i < ARRAY_SIZE(ext); i++) {
		size_t el = strlen(ext[i]);
		if (n > el && !strncmp(f + n - el, ext[i], el))
			return 1;
	}
	return 0;
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

/* Read path (as given, else relative to cwd) into *text.  0 or -1. */
static int read_source(const char *path, const char *cwd, char **text, char **used)
{
	struct strbuf p = STRBUF_INIT, buf = STRBUF_INIT;
	FILE *f;
	int ret = -1;
	sb_adds(&p, path);
	f = fopen(p.buf, "r");
	if (!f && path[0] != '/' && cwd && *cwd) {
		sb_reset(&p);
		sb_addf(&p, "%s/%s", cwd, path);
		f = fopen(p.buf, "r");
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
	struct emit_src *s = NULL;
	const char *cwd = NULL;
	char *base = base_name(l->name);
	int ptx = 0;

	for (size_t i = 0; orig && i < orig->nrec; i++) {
		const struct tr_rec *r = &orig->rec[i];
		if (r->type == TR_PROCESS && !cwd)
			cwd = r->u.process.cwd;
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
		if (!s->text) {
			emit_source_free(s);
			free(base);
			return NULL;
		}
		s->origin = TR_SRC_FILE;
		s->kernel = xstrdup(base);
		s->version = xstrdup("");
		s->constexpr_ = xstrdup("");
		s->function = xstrdup("");
	}
	s->launch_params = l->nparams;
	find_fault_line(s, orig, hints);
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
	if (s->nparams && s->nparams != s->launch_params) {
		sb_addf(&h, "Note:          the source names %u parameters, the binary has %u: names may not line up",
			s->nparams, s->launch_params);
		comment_line(o, pre.buf, h.buf, h.len);
		sb_reset(&h);
	}
	comment_line(o, pre.buf, "", 0);
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
