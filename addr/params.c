/*
 * params.c - a kernel's parameters in the kernel's own terms (see
 * params.h): names demangled with the C++ runtime's __cxa_demangle, the
 * parameter list split at top-level commas, pointer words found through
 * the captured address map (memmap.h).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/strbuf.h"
#include "../common/util.h"
#include "memmap.h"
#include "../trace/trace.h"
#include "params.h"

extern char *__cxa_demangle(const char *mangled, char *buf, size_t *n, int *status);

char *params_demangle(const char *name)
{
	int st = 0;
	char *d = NULL;
	if (name && name[0] == '_' && name[1] == 'Z')
		d = __cxa_demangle(name, NULL, NULL, &st);
	if (d && !st)
		return d;
	free(d);
	return xstrdup(name ? name : "");
}

char *params_base_name(const char *name)
{
	char *dm = params_demangle(name), *p, *b;
	size_t depth = 0, len = strlen(dm);
	/* cut the parameter list: the '(' that matches the final ')' (the
	 * name before it may hold parentheses: "(anonymous namespace)::k") */
	if (len && dm[len - 1] == ')')
		for (size_t i = len; i-- > 0;) {
			if (dm[i] == ')')
				depth++;
			else if (dm[i] == '(' && --depth == 0) {
				dm[i] = 0;
				break;
			}
		}
	depth = 0;
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

int params_types(const char *dm, char **types, int max)
{
	const char *open = NULL, *p;
	int depth = 0, n = 0;
	size_t len = strlen(dm);

	/* the parameter list is the last top-level (...) group */
	if (!len || dm[len - 1] != ')')
		return 0;
	for (p = dm + len - 1; p >= dm; p--) {
		if (*p == ')')
			depth++;
		else if (*p == '(' && --depth == 0) {
			open = p;
			break;
		}
	}
	if (!open)
		return 0;
	if (!strncmp(open, "()", 2) || !strncmp(open, "(void)", 6))
		return 0;
	const char *start = open + 1;
	depth = 0;
	for (p = open + 1; p < dm + len && n < max; p++) {
		if (*p == '(' || *p == '<' || *p == '[')
			depth++;
		else if ((*p == ')' || *p == '>' || *p == ']') && depth > 0)
			depth--;
		else if ((*p == ',' && depth == 0) || (*p == ')' && depth == 0)) {
			while (*start == ' ')
				start++;
			types[n++] = xstrndup(start, (size_t)(p - start));
			start = p + 1;
		}
	}
	return n;
}


void params_each_pointer(const struct tr_launch *l, const struct memmap *mm,
			 int (*fn)(struct mm_alloc *a, uint32_t p, const char *type,
				   uint32_t off, int dead, void *arg),
			 void *arg)
{
	char *dm = params_demangle(l->name), *types[64];
	int nt = params_types(dm, types, 64), stop = 0;
	for (uint32_t p = 0; p < l->nparams && !stop; p++) {
		for (uint32_t off = l->params[p].offset & ~7u;
		     !stop && off + 8 <= l->params[p].offset + l->params[p].size; off += 8) {
			uint64_t v;
			int dead = 0;
			memcpy(&v, l->args + off, 8);
			struct mm_alloc *a = memmap_arg_word(mm, l, off, v, &dead);
			if (a)
				stop = fn(a, p, nt == (int)l->nparams ? types[p] : NULL,
					  off - l->params[p].offset, dead, arg);
		}
	}
	for (int k = 0; k < nt; k++)
		free(types[k]);
	free(dm);
}

void params_role(struct strbuf *out, const struct tr_launch *l, uint32_t p, const char *type,
		 uint32_t off)
{
	if (type)
		sb_addf(out, "param %u `%s`", p, type);
	else
		sb_addf(out, "param %u", p);
	if (l->params[p].size > 8)
		sb_addf(out, " (a by-value struct; pointer at byte %u)", off);
}
