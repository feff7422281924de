/*
 * tritonsig.c - Triton tensor descriptor arguments expanded into the
 * kernel parameters they become (see tritonsig.h).
 *
 * The rule, from Triton's NVIDIA launcher (third_party/nvidia/backend/
 * driver.py: make_tensordesc_arg, and the launcher's signature expansion,
 * 3.3 to 3.6): a "tensordesc<T[b0, ..., bn-1]>" argument of rank n is
 * passed, when the compiler lowered it to TMA (sm_90+, the usual case), as
 * the CUtensorMap by value (a 128-byte parameter) followed by the
 * tensor's n shape values (i32) and n strides (i64).  When it was not
 * lowered, as its base pointer, shape, strides, then (3.5+) a padding
 * flag and (later) a round-to-tf32 flag, then shape and strides again.
 * The versions differ, so the rule is chosen by the count it explains:
 * the binary's parameter count is known (cuFuncGetParamInfo at capture).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/strbuf.h"
#include "../common/util.h"
#include "../trace/trace.h"
#include "tritonsig.h"

uint32_t tsig_split_types(const char *s, char ***out)
{
	uint32_t n = 0;
	char **v = NULL;
	while (s && *s) {
		struct strbuf w = STRBUF_INIT;
		int depth = 0;
		while (*s == ' ')
			s++;
		if (!*s)
			break;
		for (; *s && (*s != ' ' || depth > 0); s++) {
			if (*s == '<' || *s == '[' || *s == '(')
				depth++;
			else if ((*s == '>' || *s == ']' || *s == ')') && depth > 0)
				depth--;
			if (*s != ' ')
				sb_addch(&w, *s);
		}
		v = xrealloc(v, (n + 1) * sizeof(*v));
		v[n++] = sb_detach(&w, NULL);
	}
	*out = v;
	return n;
}

uint32_t tsig_tensordesc_rank(const char *t)
{
	const char *b, *e;
	uint32_t n = 1;
	if (strncmp(t, "tensordesc", 10))
		return 0;
	b = strchr(t, '[');
	e = b ? strchr(b, ']') : NULL;
	if (!e || e == b + 1)
		return 0;
	for (const char *p = b + 1; p < e; p++)
		n += *p == ',';
	return n;
}

/* The element type of "tensordesc<bf16[64,64]>" ("bf16"), in buf. */
static const char *elem_type(const char *t, char *buf, size_t n)
{
	const char *b = strchr(t, '<'), *e = b ? b + 1 + strcspn(b + 1, "[>,") : NULL;
	snprintf(buf, n, "%.*s", b ? (int)(e - b - 1) : 0, b ? b + 1 : "");
	return buf;
}

enum { R_TMA, R_PTR, R_PTR_PAD, R_PTR_PAD_TF32, R_COUNT };
static const char *const rule_name[R_COUNT] = { "tma", "pointer", "pointer+padding", "pointer+padding+tf32" };

/* Parameters one descriptor of rank r becomes under rule k. */
static uint32_t expanded(int k, uint32_t r)
{
	return k == R_TMA ? 1 + 2 * r : 1 + 4 * r + (k == R_PTR_PAD) + 2 * (k == R_PTR_PAD_TF32);
}

static void push(char ***v, uint32_t *n, char *s)
{
	*v = xrealloc(*v, (*n + 1) * sizeof(**v));
	(*v)[(*n)++] = s;
}

static char *fmt(const char *f, const char *a, uint32_t i)
{
	struct strbuf sb = STRBUF_INIT;
	sb_addf(&sb, f, a, i);
	return sb_detach(&sb, NULL);
}

static char *join(const char *a, const char *b, const char *c)
{
	struct strbuf sb = STRBUF_INIT;
	sb_addf(&sb, "%s%s%s", a, b, c);
	return sb_detach(&sb, NULL);
}

/* Append the shape (i32) and stride (i64) parameters of descriptor nm. */
static void push_shape_strides(char ***nv, char ***tv, uint32_t *nn, uint32_t *nt, const char *nm, uint32_t r)
{
	for (uint32_t d = 0; d < r; d++) {
		push(nv, nn, fmt("%s.shape[%u]", nm, d));
		push(tv, nt, xstrdup("i32"));
	}
	for (uint32_t d = 0; d < r; d++) {
		push(nv, nn, fmt("%s.strides[%u]", nm, d));
		push(tv, nt, xstrdup("i64"));
	}
}

const char *tsig_expand(char ***names, char ***types, uint32_t *n, uint32_t nparams,
			const struct tr_param *params)
{
	uint32_t base = 0, ndesc = 0;
	int rule = -1;
	char **nv = NULL, **tv = NULL;
	uint32_t nn = 0, nt = 0;

	for (uint32_t i = 0; i < *n; i++) {
		uint32_t r = tsig_tensordesc_rank((*types)[i]);
		ndesc += r > 0;
		base += r == 0;
	}
	if (!ndesc)
		return NULL;
	for (int k = 0; k < R_COUNT && rule < 0; k++) {
		uint32_t total = base, off = 0;
		int ok = 1;
		for (uint32_t i = 0; i < *n; i++) {
			uint32_t r = tsig_tensordesc_rank((*types)[i]);
			/* under the TMA rule the descriptor is the 128-byte parameter */
			if (r && k == R_TMA && params && (off >= nparams || params[off].size != 128))
				ok = 0;
			total += r ? expanded(k, r) : 0;
			off += r ? expanded(k, r) : 1;
		}
		if (ok && total == nparams)
			rule = k;
	}
	if (rule < 0)
		return NULL;
	for (uint32_t i = 0; i < *n; i++) {
		const char *nm = (*names)[i], *ty = (*types)[i];
		uint32_t r = tsig_tensordesc_rank(ty);
		char et[64];
		if (!r) {
			push(&nv, &nn, xstrdup(nm));
			push(&tv, &nt, xstrdup(ty));
			continue;
		}
		if (rule == R_TMA) {
			push(&nv, &nn, xstrdup(nm));
			push(&tv, &nt, join("CUtensorMap of ", ty, ""));
			push_shape_strides(&nv, &tv, &nn, &nt, nm, r);
			continue;
		}
		push(&nv, &nn, join(nm, ".base", ""));
		push(&tv, &nt, join("*", elem_type(ty, et, sizeof(et)), ""));
		push_shape_strides(&nv, &tv, &nn, &nt, nm, r);
		if (rule == R_PTR_PAD || rule == R_PTR_PAD_TF32) {
			push(&nv, &nn, join(nm, ".padding_nan", ""));
			push(&tv, &nt, xstrdup("i1"));
		}
		if (rule == R_PTR_PAD_TF32) {
			push(&nv, &nn, join(nm, ".round_f32_to_tf32", ""));
			push(&tv, &nt, xstrdup("i1"));
		}
		push_shape_strides(&nv, &tv, &nn, &nt, nm, r);
	}
	for (uint32_t i = 0; i < *n; i++) {
		free((*names)[i]);
		free((*types)[i]);
	}
	free(*names);
	free(*types);
	*names = nv;
	*types = tv;
	*n = nn;
	return rule_name[rule];
}
