/*
 * diagnose-tmap.c - the diagnosis of a fault in a launch that reads
 * through a TMA tensor map (issue 24).  A TMA load or store out of its
 * buffer is reported by compute-sanitizer without an address ("Warp
 * illegal address ... at kernel+0x260 in train.py:33"), so diagnose.c's
 * address-to-buffer reasoning has nothing to work with, and it said "no
 * diagnosis".  Here the faulting launch's parameters are searched for the
 * recorded maps (TENSORMAP records, addr/tensormap.h): for each, which
 * parameter holds it, over which buffer, its dims/strides/box, and the
 * bytes it spans from its base against the buffer's size -- a wrong
 * stride or dim makes it span past the buffer's end.  diagnose.c calls
 * diagnose_tmap_explain when the sanitizer's report has no address.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../addr/memmap.h"
#include "../addr/tensormap.h"
#include "../common/strbuf.h"
#include "../common/util.h"
#include "../trace/trace.h"
#include "diagnose.h"
#include "../addr/params.h"
#include "../replay/sidechan.h"

struct tm_ctx {
	const struct trace *t;
	const struct tr_launch *l;
	const struct memmap *mm;
	char **types;
	int ntypes;
	struct strbuf *out;
	int n;
};

/* The sanitizer's first error and its "at" line, joined ("Warp illegal
 * address at k+0x260 in train.py:33"), into out; 0 when none. */
static int san_site(const char *output, struct strbuf *out)
{
	const char *p = output;
	while (p && *p) {
		const char *nl = strchr(p, '\n'), *b = p;
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		if (!strncmp(b, "=========", 9)) {
			const char *w = b + 9;
			while (*w == ' ')
				w++;
			size_t wn = n - (size_t)(w - b);
			/* an error line: not the banner, a frame, a buffer line, a summary */
			if (wn && strncmp(w, "COMPUTE-SANITIZER", 17) && strncmp(w, "at ", 3) && strncmp(w, "by ", 3) &&
			    strncmp(w, "Saved host", 10) && strncmp(w, "Host Frame", 10) &&
			    sidechan_kind(w) == SC_NONE && strncmp(w, "ERROR SUMMARY", 13) &&
			    strncmp(w, "Program hit", 11)) {
				const char *at = nl ? strstr(nl, "  at ") : NULL;
				sb_add(out, w, wn);
				if (at && (!strchr(nl + 1, '\n') || at < strchr(nl + 1, '\n')))
					sb_addf(out, " at %.*s", (int)strcspn(at + 5, "\n"), at + 5);
				return 1;
			}
		}
		p = nl ? nl + 1 : NULL;
	}
	return 0;
}

static void one_map(long rec, uint32_t off, void *arg)
{
	struct tm_ctx *c = arg;
	const struct tr_tensormap *m = &c->t->rec[rec].u.tmap;
	struct mm_alloc *a;
	uint64_t ext = tmap_extent(m);
	uint32_t p = 0;
	int dead = 0;
	char b1[32], b2[32], b3[32];

	while (p < c->l->nparams && c->l->params[p].offset != off)
		p++;
	sb_adds(c->out, c->n++ ? "; " : ": ");
	if (p < c->l->nparams && p < (uint32_t)c->ntypes)
		sb_addf(c->out, "param %u `%s`", p, c->types[p]);
	else if (p < c->l->nparams)
		sb_addf(c->out, "param %u (%u bytes)", p, c->l->params[p].size);
	else
		sb_addf(c->out, "the parameter bytes at offset %u", off);
	sb_adds(c->out, " is ");
	tmap_describe(c->out, m);
	a = memmap_lookup(c->mm, m->gaddr, &dead);
	if (!a) {
		sb_addf(c->out, "; its base 0x%llx is in no buffer of the trace", (unsigned long long)m->gaddr);
		return;
	}
	sb_addf(c->out, " over buffer %zu (%s%s, base at offset %llu)", a->index, fmt_bytes(a->size, b1),
		dead ? ", FREED" : "", (unsigned long long)(m->gaddr - a->addr));
	if (!ext)
		return;
	if (m->gaddr - a->addr + ext > a->size)
		sb_addf(c->out, "; its dims and strides span %s from its base, the buffer ends %s after it: "
			"%s past its end -- a TMA access out of the buffer (a wrong stride or dim in the "
			"descriptor, or a descriptor built for a larger tensor)",
			fmt_bytes(ext, b1), fmt_bytes(a->addr + a->size - m->gaddr, b2),
			fmt_bytes(m->gaddr - a->addr + ext - a->size, b3));
	else
		sb_addf(c->out, "; its dims and strides span %s, inside the buffer: the fault is not the "
			"descriptor's extent (a coordinate the kernel passed, or another access)", fmt_bytes(ext, b1));
}

/* A 128-byte parameter no TENSORMAP record explains: when its word 0 is
 * the address of a buffer, read the map's fields where the H200 was
 * measured to keep them (GPU-FACTS.md: stride/16 in word 1's upper half,
 * dim-1 in word 4's two halves; an undocumented layout, so said as read,
 * rank 2 assumed) and compare the rows it spans with the buffer. */
static void unrecorded_map(struct tm_ctx *c, uint32_t p)
{
	const uint8_t *m = c->l->args + c->l->params[p].offset;
	uint64_t w0, w1, w4, stride, d0, d1, span;
	struct mm_alloc *a;
	int dead = 0;
	char b1[32], b2[32];

	memcpy(&w0, m, 8);
	memcpy(&w1, m + 8, 8);
	memcpy(&w4, m + 32, 8);
	a = memmap_lookup(c->mm, w0, &dead);
	if (!a)
		return;   /* not a map over a buffer of the trace */
	stride = (w1 >> 32) * 16;
	d0 = (w4 & 0xffffffffu) + 1;
	d1 = (w4 >> 32) + 1;
	span = (d1 - 1) * stride;
	sb_adds(c->out, c->n++ ? "; " : ": ");
	if (p < (uint32_t)c->ntypes)
		sb_addf(c->out, "param %u `%s`", p, c->types[p]);
	else
		sb_addf(c->out, "param %u (128 bytes, a CUtensorMap by value)", p);
	sb_addf(c->out, " is a TMA descriptor over buffer %zu (%s%s, base at offset %llu); no cuTensorMapEncode "
		"was recorded for it; as its bytes read (the layout measured on the H200, rank 2): %llux%llu, "
		"row stride %llu bytes", a->index, fmt_bytes(a->size, b1), dead ? ", FREED" : "",
		(unsigned long long)(w0 - a->addr), (unsigned long long)d1, (unsigned long long)d0,
		(unsigned long long)stride);
	if (stride && w0 - a->addr + span > a->size)
		sb_addf(c->out, ": its rows span at least %s from its base, past the buffer's end -- a wrong stride "
			"or dim in the descriptor", fmt_bytes(span, b2));
}

int diagnose_tmap_explain(const char *output, const struct trace *red, struct strbuf *out)
{
	struct memmap mm = MEMMAP_INIT;
	const struct tr_launch *l = NULL;
	struct strbuf site = STRBUF_INIT, body = STRBUF_INIT;
	char *dm = NULL, *types[64];
	int nt = 0, ret = 0;
	size_t ev = 0;

	for (size_t i = 0; red && i < red->nrec; i++) {
		const struct tr_rec *r = &red->rec[i];
		if (!memmap_feed(&mm, r, (long)i) && r->type == TR_LAUNCH) {
			l = &r->u.launch;
			ev = i;
		}
	}
	if (!l)
		goto out;
	dm = params_demangle(l->name);
	nt = params_types(dm, types, 64);
	{
		/* the recorded maps, wherever replay finds them (tmap_scan_args);
		 * then each 128-byte parameter that holds none of them: a map
		 * passed by value whose encode capture did not see */
		struct tm_ctx c = { red, l, &mm, types, nt, &body, 0 };
		tmap_scan_args(red, ev, l->args, l->argsize, one_map, &c);
		for (uint32_t p = 0; p < l->nparams; p++) {
			uint32_t off = l->params[p].offset;
			if (l->params[p].size == TR_TMAP_BYTES && off + TR_TMAP_BYTES <= l->argsize &&
			    tmap_find(red, ev, l->args + off) < 0)
				unrecorded_map(&c, p);
		}
		if (!c.n)
			goto out;
	}
	if (san_site(output ? output : "", &site))
		sb_addf(out, "%s (no address reported: the launch reads through a TMA descriptor)", site.buf);
	else
		sb_adds(out, "a fault in a launch that reads through a TMA descriptor");
	sb_add(out, body.buf, body.len);
	ret = 1;
out:
	for (int i = 0; i < nt; i++)
		free(types[i]);
	free(dm);
	sb_release(&site);
	sb_release(&body);
	memmap_release(&mm);
	return ret;
}
