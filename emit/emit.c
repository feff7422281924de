/*
 * emit.c - repro.cu emitter (see emit.h).
 *
 * Walks the reduced trace in order, keeping the same captured-address map
 * replay keeps (memmap.h), so every address in the program is written as
 * `buffer + offset` and relocates exactly as it did in replay.  The code
 * that must act as gpureduce's own does is gpureduce's own, pasted (the
 * Makefile's CORE_TEXTS): buffer placement (addr/place_core.inc), the
 * seeded fill (common/fill_core.inc) and the payload decoder
 * (pack_core.inc).  Which buffers layout placement covers, and their span,
 * come from the rule replay places by (place_layout_kind and
 * place_layout_span, addr/place.h).  Tests compile and run the result
 * against the CPU driver double.  The comment at the top of the program is
 * emit-header.c's, the helpers it starts with emit-prelude.c's, and the
 * names of parameters come from params.c (shared with diagnose).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../common/elf.h"
#include "../common/strbuf.h"
#include "../common/util.h"
#include "../addr/memmap.h"
#include "../addr/place.h"
#include "../replay/fnpick.h"
#include "../replay/launchattr.h"
#include "../replay/sidechan.h"
#include "../trace/trace.h"
#include "emit-int.h"
#include "emit-source.h"
#include "emit.h"
#include "../addr/params.h"
#include "pack.h"
#include "../reducer/cand.h"
#include "../reducer/report.h"

/* ---- emission helpers --------------------------------------------------- */

struct name_find {
	const char *name;
	int found;
};

static int name_is(const char *name, int kind, void *arg)
{
	struct name_find *f = arg;
	(void)kind;
	if (!strcmp(name, f->name))
		f->found = 1;
	return f->found;
}

/* 1 if the module image with this hash defines `name`. */
static int module_has(const struct trace *t, uint64_t hash, const char *name)
{
	struct strbuf img = STRBUF_INIT, e = STRBUF_INIT;
	struct name_find f = { name, 0 };
	if (trace_blob_read(t, hash, &img, 0, &e) == 0)
		elf_symbols(img.buf, img.len, name_is, &f);
	sb_release(&img);
	sb_release(&e);
	return f.found;
}

static void hex_array(struct strbuf *o, const char *name, const uint8_t *d, size_t n)
{
	sb_addf(o, "static const unsigned char %s[%zu] = {", name, n ? n : 1);
	for (size_t i = 0; i < n; i++) {
		if (i % 20 == 0)
			sb_adds(o, "\n\t");
		sb_addf(o, "0x%02x,", d[i]);
	}
	if (!n)
		sb_adds(o, "0");
	sb_adds(o, "\n};\n");
}

static size_t pack_min(void)
{
	const char *e = getenv("GPUREDUCE_PACK_MIN");
	return e && *e ? (size_t)strtoull(e, NULL, 0) : 65536;
}

/*
 * Emit a payload named `name`.  Small ones become a plain byte array; large
 * ones a packed, base64 line array.  Sets *expr to the C expression for a
 * pointer to the bytes (valid in main after unpacking) and appends the
 * unpack call to init.  Returns 1 when packed.
 */
static int embed(struct strbuf *o, struct strbuf *init, const char *name, const uint8_t *d, size_t n,
		 char *expr, size_t exprlen)
{
	struct strbuf z = STRBUF_INIT, b = STRBUF_INIT;
	size_t lines = 0;
	if (n < pack_min() || !n) {
		hex_array(o, name, d, n);
		snprintf(expr, exprlen, "%s", name);
		return 0;
	}
	pack_compress(d, n, &z);
	pack_base64((const uint8_t *)z.buf, z.len, &b);
	sb_addf(o, "/* %zu bytes, packed to %zu (see unpack) */\nstatic const char *const %s_packed[] = {\n",
		n, z.len, name);
	for (size_t i = 0; i < b.len; i += 100, lines++)
		sb_addf(o, "\t\"%.*s\",\n", (int)(b.len - i < 100 ? b.len - i : 100), b.buf + i);
	sb_adds(o, "};\n");
	sb_addf(o, "static unsigned char *%s;\n", name);
	sb_addf(init, "\t%s = unpack(%s_packed, %zu, %zu, %zu);\n", name, name, lines, z.len, n);
	snprintf(expr, exprlen, "%s", name);
	sb_release(&z);
	sb_release(&b);
	return 1;
}


/* A scalar parameter's value as its C type reads it: unsigned types
 * unsigned, float and double as numbers, the rest signed. */
static void scalar_text(struct strbuf *sb, const char *type, uint32_t size, uint64_t v)
{
	if (size == 4 && strstr(type, "float")) {
		float f;
		uint32_t u = (uint32_t)v;
		memcpy(&f, &u, 4);
		sb_addf(sb, "%.9g", (double)f);
	} else if (size == 8 && strstr(type, "double")) {
		double d;
		memcpy(&d, &v, 8);
		sb_addf(sb, "%.17g", d);
	} else if (!strncmp(type, "unsigned", 8) || strstr(type, "size_t") || !strncmp(type, "uint", 4) ||
		   !strcmp(type, "bool")) {
		sb_addf(sb, "%llu", (unsigned long long)v);
	} else if (size == 1) {
		sb_addf(sb, "%d", (int)(int8_t)(uint8_t)v);
	} else if (size == 2) {
		sb_addf(sb, "%d", (int)(int16_t)(uint16_t)v);
	} else if (size == 4) {
		sb_addf(sb, "%d", (int)(int32_t)(uint32_t)v);
	} else {
		sb_addf(sb, "%lld", (long long)v);
	}
}

static void c_string(struct strbuf *o, const char *s)
{
	sb_addch(o, '"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			sb_addf(o, "\\%c", *s);
		else if ((unsigned char)*s < 32 || (unsigned char)*s > 126)
			sb_addf(o, "\\%03o", (unsigned char)*s);
		else
			sb_addch(o, *s);
	}
	sb_addch(o, '"');
}

static int is_zero(const uint8_t *d, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (d[i])
			return 0;
	return 1;
}

/* Size and kind of the element a pointer type points to: 'f' float,
 * 'i' signed, 'u' unsigned; 0 when unknown. */
static int elem_of(const char *ptype, char *kind)
{
	static const struct { const char *name; int size; char kind; } tab[] = {
		{ "unsigned long long", 8, 'u' }, { "long long", 8, 'i' }, { "unsigned long", 8, 'u' },
		{ "long", 8, 'i' }, { "unsigned int", 4, 'u' }, { "int", 4, 'i' }, { "float", 4, 'f' },
		{ "double", 8, 'f' }, { "unsigned short", 2, 'u' }, { "short", 2, 'i' },
		{ "unsigned char", 1, 'u' }, { "signed char", 1, 'i' }, { "char", 1, 'i' },
		{ "bool", 1, 'u' }, { "int64_t", 8, 'i' }, { "uint64_t", 8, 'u' }, { "int32_t", 4, 'i' },
		{ "uint32_t", 4, 'u' }, { "size_t", 8, 'u' },
	};
	char base[128];
	size_t n = 0;
	if (!ptype || !strchr(ptype, '*') || strchr(ptype, '*') != strrchr(ptype, '*'))
		return 0;
	/* drop "const" and the '*' */
	for (const char *p = ptype; *p && *p != '*' && n + 1 < sizeof(base); p++)
		base[n++] = *p;
	base[n] = 0;
	char *c;
	while ((c = strstr(base, "const")))
		memmove(c, c + 5, strlen(c + 5) + 1);
	char *b = base;
	while (*b == ' ')
		b++;
	for (n = strlen(b); n && b[n - 1] == ' '; n--)
		b[n - 1] = 0;
	for (size_t i = 0; i < ARRAY_SIZE(tab); i++)
		if (!strcmp(b, tab[i].name)) {
			*kind = tab[i].kind;
			return tab[i].size;
		}
	return 0;
}

/* ": element [17] = 100000" for small explicit payloads of typed buffers. */
static void describe_elems(struct strbuf *o, const char *ptype, uint64_t off, const uint8_t *d, size_t n)
{
	char kind = 0;
	int es = elem_of(ptype, &kind);
	if (!es || off % (uint64_t)es || n % (size_t)es || n / (size_t)es > 8)
		return;
	sb_addf(o, ": as `%s`,", ptype);
	for (size_t i = 0; i < n; i += (size_t)es) {
		uint64_t v = 0;
		memcpy(&v, d + i, (size_t)es);
		sb_addf(o, " [%llu] = ", (unsigned long long)((off + i) / (uint64_t)es));
		if (kind == 'f' && es == 4) {
			float f;
			memcpy(&f, d + i, 4);
			sb_addf(o, "%g", (double)f);
		} else if (kind == 'f') {
			double g;
			memcpy(&g, d + i, 8);
			sb_addf(o, "%g", g);
		} else if (kind == 'i') {
			int64_t sv = es == 8 ? (int64_t)v : es == 4 ? (int32_t)v : es == 2 ? (int16_t)v : (int8_t)v;
			sb_addf(o, "%lld", (long long)sv);
		} else {
			sb_addf(o, "%llu", (unsigned long long)v);
		}
	}
	sb_adds(o, "; the rest of the buffer is zeros");
}

/* ---- parameters and the buffers they point into ------------------------ */

struct first_use {
	char **roles, **ptypes;
	const struct tr_launch *l;
};

static int note_first_use(struct mm_alloc *a, uint32_t p, const char *type, uint32_t off, int dead,
			  void *arg)
{
	struct first_use *fu = arg;
	struct strbuf rs = STRBUF_INIT;
	(void)dead;
	if (fu->roles[a->index])
		return 0;
	params_role(&rs, fu->l, p, type, off);
	fu->roles[a->index] = sb_detach(&rs, NULL);
	if (type && fu->l->params[p].size == 8)
		fu->ptypes[a->index] = xstrdup(type);
	return 0;
}

/* Append src to out with each non-empty line one tab further in (a
 * race's set-up and launches inside main's loop of tries). */
static void indent_lines(struct strbuf *out, const struct strbuf *src)
{
	const char *p = src->buf, *end = src->buf + src->len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) + 1 : (size_t)(end - p);
		if (n > 1 || *p != '\n')
			sb_addch(out, '\t');
		sb_add(out, p, n);
		p += n;
	}
}

int emit_tries(const struct emit_info *info)
{
	return info && info->rep && info->rep->flaky ? EMIT_RACE_TRIES : 1;
}

/* ---- body ------------------------------------------------------------- */

struct ebuf {
	int id;
	const char *role;        /* "param 0 `float *out`", first use */
};

int emit_repro(const struct trace *t, const struct emit_info *info, struct strbuf *out,
	       struct strbuf *err)
{
	struct memmap mm = MEMMAP_INIT;
	struct strbuf body = STRBUF_INIT, data = STRBUF_INIT, globals = STRBUF_INIT, init = STRBUF_INIT;
	const struct tr_launch *last = NULL;
	int nmod = 0, nbuf = 0, nlaunch = 0, ndata = 0, need_fnpick = 0;
	int placement = info->placement >= 0 ? info->placement : info->rep ? info->rep->guard : PL_GUARD_END;
	int tries = emit_tries(info);
	uint64_t lo = 0, hi = 0;
	int ret = -1;
	uint64_t *mod_hash = xcalloc(t->nrec + 1, sizeof(uint64_t));
	char **roles = xcalloc(t->nrec + 1, sizeof(char *));
	char **ptypes = xcalloc(t->nrec + 1, sizeof(char *));   /* pointer param type per buffer */

	for (size_t i = 0; i < t->nrec; i++) {
		if (t->rec[i].type == TR_LAUNCH)
			last = &t->rec[i].u.launch;
	}
	/* the span layout placement covers: replay's own rule (place.h) */
	place_layout_span(t, t->nrec, &lo, &hi);

	/* First pass: name each buffer by its first use in a launch parameter. */
	{
		struct memmap m2 = MEMMAP_INIT;
		struct first_use fu = { roles, ptypes, NULL };
		for (size_t i = 0; i < t->nrec; i++) {
			const struct tr_rec *r = &t->rec[i];
			if (!memmap_feed(&m2, r, (long)i) && r->type == TR_LAUNCH) {
				fu.l = &r->u.launch;
				params_each_pointer(&r->u.launch, &m2, note_first_use, &fu);
			}
		}
		memmap_release(&m2);
	}

	for (size_t i = 0; i < t->nrec; i++) {
		const struct tr_rec *r = &t->rec[i];
		switch (r->type) {
		case TR_MODULE: {
			struct strbuf img = STRBUF_INIT;
			char name[32];
			if (trace_blob_read(t, r->u.module.blob, &img, 0, err) < 0) {
				sb_release(&img);
				goto out;
			}
			char expr[64];
			snprintf(name, sizeof(name), "module%d", nmod);
			sb_addf(&globals, "/* module %d: %s image, %zu bytes (captured module id %u) */\n",
				nmod, r->u.module.kind == TR_MOD_ELF ? "cubin (ELF)" : "binary", img.len,
				r->u.module.module_id);
			embed(&globals, &init, name, (const uint8_t *)img.buf, img.len, expr, sizeof(expr));
			if (!emit_source_ptx_load(&globals, &body, info->orig ? info->orig : t, img.buf, img.len, nmod, expr))
				sb_addf(&body, "\tload_module(&mod[%d], %s);\n", nmod, expr);
			mod_hash[nmod] = r->u.module.blob;
			nmod++;
			sb_release(&img);
			break;
		}
		case TR_ALLOC: {
			struct mm_alloc *a = memmap_add(&mm, r->u.alloc.addr, r->u.alloc.size, r->u.alloc.kind, (long)i);
			char b[32];
			a->user = (void *)(intptr_t)(nbuf + 1);
			sb_addf(&body, "\n\t/* buffer %d: %s, %s%s%s (captured at 0x%llx) */\n", nbuf,
				fmt_bytes(r->u.alloc.size, b), tr_alloc_kind_name(r->u.alloc.kind),
				roles[a->index] ? "; " : "", roles[a->index] ? roles[a->index] : "",
				(unsigned long long)r->u.alloc.addr);
			if (r->u.alloc.kind == TR_MEM_GLOBAL && r->u.alloc.name && *r->u.alloc.name && nmod > 0) {
				sb_addf(&body, "\tbuf_global(&buf[%d], mod, %d, ", nbuf, nmod);
				c_string(&body, r->u.alloc.name);
				sb_addf(&body, ", %lluull, 0x%llxull);\n", (unsigned long long)r->u.alloc.size,
					(unsigned long long)r->u.alloc.addr);
			} else {
				sb_addf(&body, "\tbuf_alloc(&buf[%d], %lluull, 0x%llxull, %d);\n", nbuf,
					(unsigned long long)r->u.alloc.size, (unsigned long long)r->u.alloc.addr,
					place_layout_kind(r->u.alloc.kind));
			}
			{
				/* where it landed, for diagnose (the side channel, sidechan.h) */
				char ptr[32];
				snprintf(ptr, sizeof(ptr), "buf[%d].ptr", nbuf);
				sb_adds(&body, "\tif (verbose) ");
				sidechan_emit_buffer(&body, (unsigned long long)nbuf, ptr, r->u.alloc.size);
				sb_adds(&body, ";\n");
			}
			nbuf++;
			break;
		}
		case TR_FREE: {
			struct mm_alloc *a = memmap_free(&mm, r->u.free.addr, (long)i);
			if (a) {
				int id = (int)(intptr_t)a->user - 1;
				sb_addf(&body, "\t/* the program freed buffer %d before the launch */\n", id);
				sb_addf(&body, "\tbuf_free(&buf[%d]);\n", id);
			}
			break;
		}
		case TR_MEMSET:
		case TR_MEMCPY_H2D:
		case TR_MEMCPY_D2D: {
			uint64_t dst = r->type == TR_MEMSET ? r->u.memset.dst : r->u.copy.dst;
			struct mm_alloc *a = memmap_lookup_live(&mm, dst);
			if (!a) {
				sb_addf(&body, "\t/* event %zu wrote to 0x%llx, outside every buffer: skipped as in replay */\n",
					i, (unsigned long long)dst);
				break;
			}
			int id = (int)(intptr_t)a->user - 1;
			uint64_t off = dst - a->addr;
			if (r->type == TR_MEMSET) {
				const struct tr_memset *m = &r->u.memset;
				if (m->height > 1 && m->pitch)
					sb_addf(&body, "\tSETUP(cuMemsetD2D%u(buf[%d].ptr + %llu, %llu, %uu, %llu, %llu));\n",
						m->elem_size * 8, id, (unsigned long long)off,
						(unsigned long long)m->pitch, m->value, (unsigned long long)m->width,
						(unsigned long long)m->height);
				else if (m->value == 0)
					sb_addf(&body, "\tSETUP(cuMemsetD8(buf[%d].ptr + %llu, 0, %llu));   /* zeros */\n",
						id, (unsigned long long)off,
						(unsigned long long)(m->width * m->elem_size));
				else
					sb_addf(&body, "\tSETUP(cuMemsetD%u(buf[%d].ptr + %llu, %uu, %llu));\n",
						m->elem_size * 8, id, (unsigned long long)off, m->value,
						(unsigned long long)m->width);
			} else if (r->type == TR_MEMCPY_D2D) {
				struct mm_alloc *sa = memmap_lookup_live(&mm, r->u.copy.src);
				if (sa)
					sb_addf(&body, "\tSETUP(cuMemcpyDtoD(buf[%d].ptr + %llu, buf[%d].ptr + %llu, %llu));\n",
						id, (unsigned long long)off, (int)(intptr_t)sa->user - 1,
						(unsigned long long)(r->u.copy.src - sa->addr),
						(unsigned long long)r->u.copy.size);
			} else {
				struct strbuf d = STRBUF_INIT;
				char name[32];
				if ((r->u.copy.flags & TR_F_FILL) && !r->u.copy.blob) {
					/* a fill stored without its bytes */
					sb_addf(&body, "\tfill(buf[%d].ptr + %llu, %llu, 0x%xu);   /* seeded generator: the values do not matter, only that they are not zeros */\n",
						id, (unsigned long long)off, (unsigned long long)r->u.copy.size,
						(unsigned)r->u.copy.src);
					break;
				}
				if (trace_blob_read(t, r->u.copy.blob, &d, 0, err) < 0) {
					sb_release(&d);
					goto out;
				}
				int is_fill = 0;
				if ((r->u.copy.flags & TR_F_FILL) && d.len) {
					uint8_t *g = xmalloc(d.len);
					cand_fill(g, d.len, (uint32_t)r->u.copy.src);
					is_fill = !memcmp(g, d.buf, d.len);
					free(g);
				}
				if (is_fill) {
					sb_addf(&body, "\tfill(buf[%d].ptr + %llu, %zu, 0x%xu);   /* seeded generator: the values do not matter, only that they are not zeros */\n",
						id, (unsigned long long)off, d.len, (unsigned)r->u.copy.src);
				} else if (is_zero((const uint8_t *)d.buf, d.len)) {
					sb_addf(&body, "\tSETUP(cuMemsetD8(buf[%d].ptr + %llu, 0, %zu));   /* zeros */\n",
						id, (unsigned long long)off, d.len);
				} else {
					char expr[64];
					snprintf(name, sizeof(name), "data%d", ndata++);
					sb_addf(&data, "/* %zu bytes for buffer %d at offset %llu", d.len, id,
						(unsigned long long)off);
					describe_elems(&data, ptypes[a->index], off, (const uint8_t *)d.buf, d.len);
					sb_adds(&data, " */\n");
					embed(&data, &init, name, (const uint8_t *)d.buf, d.len, expr, sizeof(expr));
					emit_copy_in(&body, &mm, id, off, r->u.copy.dst, (const uint8_t *)d.buf, d.len, expr);
				}
				sb_release(&d);
			}
			break;
		}
		case TR_FUNC_ATTR:
			sb_addf(&body, "\tpending_attr[n_attr].attr = %u; pending_attr[n_attr].value = %d; pending_attr[n_attr].kernel = ",
				r->u.func_attr.attr, r->u.func_attr.value);
			c_string(&body, r->u.func_attr.kernel);
			sb_adds(&body, "; n_attr++;\n");
			break;
		case TR_LAUNCH: {
			if (r->u.launch.flags & TR_F_FOLDED) {
				/* issue 25: needs its peers; the copies after it hold its effect */
				sb_adds(&body, "\n\t/* a communication kernel ran here in the program: folded at capture, "
					"not launched; the copies after this line hold what it wrote */\n");
				break;
			}
			const struct tr_launch *l = &r->u.launch;
			char *dm = params_demangle(l->name), *types[64];
			int nt = params_types(dm, types, 64);
			int m = nmod - 1;
			/* the latest module loaded so far that defines the kernel */
			for (int k = nmod - 1; k >= 0; k--)
				if (module_has(t, mod_hash[k], l->name)) {
					m = k;
					break;
				}
			/* the same launch in the captured trace, to show what reduction changed */
			const struct tr_launch *ol = NULL;
			size_t ol_rec = 0;
			for (size_t k = 0; info->orig && k < info->orig->nrec; k++)
				if (info->orig->rec[k].type == TR_LAUNCH && info->orig->rec[k].u.launch.seq == l->seq &&
				    !strcmp(info->orig->rec[k].u.launch.name, l->name)) {
					ol = &info->orig->rec[k].u.launch;
					ol_rec = k;
					break;
				}
			sb_addf(&body, "\n\t/* launch %d: %s */\n", nlaunch, dm);
			/* the kernel's own source and parameter names (emit-source.c) */
			const struct trace *facts = info->orig ? info->orig : t;
			struct emit_src *es = emit_source_find(facts, l, info->diagnosis);
			if (es) {
				emit_source_block(&body, es, "\t");
			} else {
				/* not at hand: where it is (a library's file, upstream) */
				struct emit_elsewhere ee;
				if (emit_source_elsewhere(facts, info->diagnosis, &ee))
					emit_elsewhere_block(&body, &ee, "\t");
				emit_elsewhere_free(&ee);
			}
			if (ol && (ol->grid.x != l->grid.x || ol->grid.y != l->grid.y || ol->grid.z != l->grid.z))
				sb_addf(&body, "\t/* the program launched grid (%u,%u,%u); (%u,%u,%u) is enough to fault */\n",
					ol->grid.x, ol->grid.y, ol->grid.z, l->grid.x, l->grid.y, l->grid.z);
			int ncand = 0;
			for (int k = nmod - 1; k >= 0; k--)
				ncand += module_has(t, mod_hash[k], l->name);
			if (ncand > 1) {
				/* as replay chooses (emit-fnpick.c) */
				int cand[64], nc = 0;
				struct strbuf cn = STRBUF_INIT;
				for (int k = nmod - 1; k >= 0 && nc < 64; k--)
					if (module_has(t, mod_hash[k], l->name))
						cand[nc++] = k;
				const struct tr_func_info *in = emit_launch_finfo(t, i);
				if (!in && ol)   /* reduction dropped it: the captured trace has it */
					in = emit_launch_finfo(info->orig, ol_rec);
				c_string(&cn, l->name);
				emit_fn_choice(&body, l, in, cand, nc, cn.buf);
				need_fnpick = 1;
				sb_release(&cn);
			} else {
				sb_adds(&body, "\t");
			}
			sb_addf(&body, "SETUP(cuModuleGetFunction(&fn, mod[%d], ", m < 0 ? 0 : m);
			c_string(&body, l->name);
			sb_adds(&body, "));\n");
			if (ncand > 1)
				sb_adds(&body, "\t}\n");
			sb_adds(&body, "\tapply_attrs(fn, ");
			c_string(&body, l->name);
			sb_adds(&body, ");\n");
			sb_addf(&body, "\t{\n\t\tunsigned char args[%u]%s = {", l->argsize ? l->argsize : 1,
				emit_tmap_count(t, i, l) ? " __attribute__((aligned(64)))" : "");
			for (uint32_t k = 0; k < l->argsize; k++)
				sb_addf(&body, "%s0x%02x,", k % 16 ? " " : "\n\t\t\t", l->args[k]);
			if (!l->argsize)
				sb_adds(&body, "0");
			sb_adds(&body, "\n\t\t};\n");
			sb_addf(&body, "\t\tvoid *params[%u];\n", l->nparams ? l->nparams : 1);
			for (uint32_t p = 0; p < l->nparams; p++) {
				const struct tr_param *pp = &l->params[p];
				uint64_t v = 0;
				sb_addf(&body, "\t\t/* param %u: ", p);
				emit_source_param(&body, es, p, nt == (int)l->nparams ? types[p] : NULL);
				sb_addf(&body, ", %u bytes at offset %u", pp->size, pp->offset);
				if (pp->size == 4 || pp->size == 8 || pp->size == 2 || pp->size == 1) {
					const char *ty = emit_source_ctype(es, p, nt == (int)l->nparams ? types[p] : NULL);
					uint64_t was = 0;
					memcpy(&v, l->args + pp->offset, pp->size);
					if (pp->size != 8 || !memmap_arg_word(&mm, l, pp->offset, v, NULL)) {
						sb_adds(&body, " = ");
						scalar_text(&body, ty, pp->size, v);
					}
					if (ol && p < ol->nparams && ol->params[p].size == pp->size &&
					    (memcpy(&was, ol->args + ol->params[p].offset, pp->size), was != v)) {
						sb_adds(&body, "; the program passed ");
						scalar_text(&body, ty, pp->size, was);
						sb_adds(&body, ": the fault does not depend on it");
					}
				}
				sb_adds(&body, " */\n");
				sb_addf(&body, "\t\tparams[%u] = args + %u;\n", p, pp->offset);
			}
			for (uint32_t off = 0; off + 8 <= l->argsize; off += 8) {
				uint64_t v;
				int dead = 0;
				memcpy(&v, l->args + off, 8);
				struct mm_alloc *a = memmap_arg_word(&mm, l, off, v, &dead);
				if (!a)
					continue;
				sb_addf(&body, "\t\tput_ptr(args, %u, buf[%d].ptr + %lld);   /* captured 0x%llx%s */\n",
					off, (int)(intptr_t)a->user - 1, (long long)(v - a->addr),
					(unsigned long long)v, dead ? ", a FREED buffer" : "");
			}
			emit_tmaps(&body, t, i, l, &mm);
			sb_addf(&body, "\t\tCUlaunchAttribute attrs[%u];\n", l->nattrs ? l->nattrs : 1);
			sb_adds(&body, "\t\tmemset(attrs, 0, sizeof(attrs));\n");
			uint32_t nat = 0;
			for (uint32_t k = 0; k < l->nattrs; k++) {
				const char *why;
				char an[32];
				if (!lattr_replayable(l->attrs[k].id, &why)) {
					sb_addf(&body, "\t\t/* launch attribute %u (%s) left out: %s */\n", l->attrs[k].id,
						lattr_name(l->attrs[k].id, an, sizeof(an)), why);
					continue;
				}
				sb_addf(&body, "\t\tattrs[%u].id = (CUlaunchAttributeID)%u;   /* %s, as captured */\n",
					nat, l->attrs[k].id, lattr_name(l->attrs[k].id, an, sizeof(an)));
				sb_addf(&body, "\t\tmemcpy(&attrs[%u].value, \"", nat);
				for (uint32_t b = 0; b < l->attrs[k].len; b++)
					sb_addf(&body, "\\x%02x", l->attrs[k].value[b]);
				sb_addf(&body, "\", %u);\n", l->attrs[k].len);
				nat++;
			}
			sb_addf(&body, "\t\tlaunch_and_check(fn, ");
			c_string(&body, dm);
			sb_addf(&body, ", %u, %u, %u, %u, %u, %u, %u, params, attrs, %u);\n\t}\n", l->grid.x, l->grid.y,
				l->grid.z, l->block.x, l->block.y, l->block.z, l->shmem, nat);
			for (int k = 0; k < nt; k++)
				free(types[k]);
			emit_source_free(es);
			free(dm);
			nlaunch++;
			break;
		}
		default:
			break;
		}
	}

	emit_header(out, t, info, last);
	sb_adds(out, emit_part_support);
	sb_adds(out, emit_prelude);
	sb_adds(out, place_core_text);
	sb_adds(out, fill_core_text);
	sb_adds(out, emit_prelude_placement);
	if (need_fnpick) {
		sb_adds(out, emit_fnpick_prelude);
		sb_adds(out, fnpick_core_text);
	}
	if (init.len) {
		sb_adds(out, pack_core_text);
		sb_adds(out, pack_unpack_source);
	}
	sb_adds(out, emit_part_data);
	sb_add(out, globals.buf, globals.len);
	sb_add(out, data.buf, data.len);
	{
		const struct tr_rec *dev = emit_first_of(info->orig ? info->orig : t, TR_DEVICE);
		struct strbuf where = STRBUF_INIT;
		if (dev)
			sb_addf(&where, "%s (compute capability %u.%u, sm_%u%u)", dev->u.device.name,
				dev->u.device.cc_major, dev->u.device.cc_minor, dev->u.device.cc_major,
				dev->u.device.cc_minor);
		else
			sb_adds(&where, "an unknown device");
		sb_adds(out, "/* Load an embedded module; a failure here means this GPU cannot run the\n"
			" * captured binary (another architecture): exit 2. */\n"
			"static void load_module(CUmodule *m, const void *image)\n{\n"
			"\tconst char *name = \"?\";\n"
			"\tCUresult r = cuModuleLoadData(m, image);\n"
			"\tif (r == CUDA_SUCCESS)\n\t\treturn;\n"
			"\tcuGetErrorName(r, &name);\n"
			"\tfprintf(stderr, \"repro: cannot load the kernel image: %s (%d); it was captured on \"\n\t\t");
		c_string(out, where.buf);
		sb_adds(out, "\n\t\t\"; run it on a GPU of that architecture\\n\", name, (int)r);\n\texit(2);\n}\n\n");
		sb_release(&where);
	}
	sb_addf(out, "\nstatic struct { const char *kernel; unsigned attr; int value; } pending_attr[%zu];\n"
		"static int n_attr;\n\n"
		"static void apply_attrs(CUfunction f, const char *kernel)\n{\n"
		"\tint i;\n\tfor (i = 0; i < n_attr; i++)\n"
		"\t\tif (!strcmp(pending_attr[i].kernel, kernel))\n"
		"\t\t\tSETUP(cuFuncSetAttribute(f, (CUfunction_attribute)pending_attr[i].attr, pending_attr[i].value));\n}\n\n",
		t->nrec + 1);
	if (tries > 1)
		sb_adds(out, emit_retry_support);
	sb_adds(out, emit_part_main);
	sb_addf(out, "int main(void)\n{\n\tCUdevice dev;\n\tCUcontext ctx;\n\t%sCUmodule mod[%d];\n"
		"\tCUfunction fn;\n\tstatic struct pl_buf buf[%d];\n", tries > 1 ? "static " : "",
		nmod ? nmod : 1, nbuf ? nbuf : 1);
	if (tries > 1)
		sb_addf(out, "\tint try_, tries = repro_tries(%d);   /* a race: see repro_tries() */\n", tries);
	sb_adds(out, "\n\tverbose = getenv(\"" SC_REPRO_ENV "\") != NULL;\n"
		"\tSETUP(cuInit(0));\n\tSETUP(cuDeviceGet(&dev, 0));\n"
		"\tSETUP(cuDevicePrimaryCtxRetain(&ctx, dev));\n\tSETUP(cuCtxSetCurrent(ctx));\n"
		"\t(void)fn;\n\t(void)fill;\n\t(void)buf_free;\n\t(void)buf_global;\n\t(void)pl_buf_destroy;\n\t(void)pl_layout_close;\n");
	sb_addf(out, "\t/* %s placement%s */\n\tplacement_begin(%s, 0x%llxull, 0x%llxull);\n",
		place_guard_name(placement),
		placement == PL_LAYOUT ? ": every device buffer at its captured offset from the others, "
		"inside one reserved range of captured addresses [lo, hi)" : "",
		placement == PL_LAYOUT ? "PL_LAYOUT" : placement == PL_GUARD_START ? "PL_GUARD_START" :
		placement == PL_GUARD_NONE ? "PL_GUARD_NONE" : "PL_GUARD_END",
		(unsigned long long)(hi > lo ? lo : 0), (unsigned long long)(hi > lo ? hi : 0));
	sb_add(out, init.buf, init.len);
	if (tries > 1) {
		/* a race: the data is unpacked and layout placement's range
		 * reserved once; each try places the buffers, fills them and
		 * launches, and a clean one releases what it placed and loaded */
		sb_adds(out, "\tfor (try_ = 1; ; try_++) {\n");
		indent_lines(out, &body);
		sb_addf(out, "\n\t\tif (try_ >= tries)\n\t\t\tbreak;\n"
			"\t\tprintf(\"repro: try %%d of %%d ran clean; trying again (a race)\\n\", try_, tries);\n"
			"\t\trelease_try(mod, %d, buf, %d);\n\t}\n"
			"\tprintf(\"repro: ran clean%%s: the fault did not reproduce\\n\", tries > 1 ? \" in every try\" : \"\");\n"
			"\treturn 0;\n}\n", nmod ? nmod : 1, nbuf ? nbuf : 1);
	} else {
		sb_add(out, body.buf, body.len);
		sb_adds(out, "\n\tprintf(\"repro: ran clean: the fault did not reproduce\\n\");\n\treturn 0;\n}\n");
	}
	ret = 0;
out:
	for (size_t i = 0; i <= t->nrec; i++) {
		free(roles[i]);
		free(ptypes[i]);
	}
	free(roles);
	free(ptypes);
	free(mod_hash);
	memmap_release(&mm);
	sb_release(&body);
	sb_release(&data);
	sb_release(&globals);
	sb_release(&init);
	return ret;
}
