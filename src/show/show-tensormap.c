/*
 * show-tensormap.c - `show`'s TMA tensor maps (format 1.4): the fields of
 * a TENSORMAP record, and for a launch the parameters that hold a
 * recorded map, described in the kernel's terms (addr/tensormap.h).
 * Called from show.c's record switch.
 */
#include <stdint.h>

#include "../../addr/memmap.h"
#include "../../addr/tensormap.h"
#include "../../common/strbuf.h"
#include "../../common/yamlout.h"
#include "../../trace/trace.h"
#include "show.h"

static const char *api_name(uint32_t api)
{
	switch (api) {
	case TR_TMAP_TILED: return "tiled";
	case TR_TMAP_IM2COL: return "im2col";
	case TR_TMAP_IM2COL_WIDE: return "im2col_wide";
	case TR_TMAP_REPLACE: return "replace";
	default: return "unknown";
	}
}

static void list_u64(struct yout *y, const char *k, const uint64_t *v, uint32_t n)
{
	yo_key(y, k);
	yo_seq_start(y, 1);
	for (uint32_t i = 0; i < n && i < TR_TMAP_MAX_RANK; i++)
		yo_u64(y, v[i]);
	yo_seq_end(y);
}

static void list_u32(struct yout *y, const char *k, const uint32_t *v, uint32_t n)
{
	yo_key(y, k);
	yo_seq_start(y, 1);
	for (uint32_t i = 0; i < n && i < TR_TMAP_MAX_RANK; i++)
		yo_u64(y, v[i]);
	yo_seq_end(y);
}

void show_tmap_fields(struct yout *y, const struct tr_tensormap *m, const struct memmap *mm)
{
	struct strbuf sb = STRBUF_INIT;
	char b[32];
	struct mm_alloc *a = memmap_pointer_word(mm, m->gaddr, NULL);

	yo_kv_str(y, "api", api_name(m->api));
	yo_kv_str(y, "geom", api_name(m->geom));
	yo_kv_str(y, "dtype", tmap_dtype_name(m->dtype, b, sizeof(b)));
	yo_kv_u64(y, "rank", m->rank);
	yo_kv_hex(y, "global", m->gaddr);
	if (a) {
		yo_key(y, "global_ptr");
		yo_strf(y, "alloc #%zu + %llu", a->index, (unsigned long long)(m->gaddr - a->addr));
	}
	list_u64(y, "dims", m->dims, m->rank);
	list_u64(y, "strides", m->strides, m->rank ? m->rank - 1 : 0);
	if (m->geom == TR_TMAP_TILED)
		list_u32(y, "box", m->box, m->rank);
	list_u32(y, "elem_strides", m->estrides, m->rank);
	yo_kv_u64(y, "interleave", m->interleave);
	yo_kv_u64(y, "swizzle", m->swizzle);
	yo_kv_u64(y, "l2promo", m->l2promo);
	yo_kv_u64(y, "oobfill", m->oobfill);
	yo_kv_u64(y, "extent", tmap_extent(m));
	tmap_describe(&sb, m);
	yo_kv_str(y, "describe", sb.buf);
	sb_release(&sb);
}

struct tm_show {
	struct yout *y;
	const struct trace *t;
	const struct tr_launch *l;
	int open;
};

static void one(long rec, uint32_t off, void *arg)
{
	struct tm_show *S = arg;
	struct strbuf sb = STRBUF_INIT;
	uint32_t p = 0;
	for (uint32_t k = 0; k < S->l->nparams; k++)
		if (off >= S->l->params[k].offset && off < S->l->params[k].offset + S->l->params[k].size)
			p = k;
	if (!S->open) {
		yo_key(S->y, "tensor_maps");
		yo_seq_start(S->y, 0);
		S->open = 1;
	}
	sb_addf(&sb, "param %u", p);
	if (S->l->nparams && S->l->params[p].size > TR_TMAP_BYTES)
		sb_addf(&sb, " (byte %u)", off - S->l->params[p].offset);
	sb_adds(&sb, ": ");
	tmap_describe(&sb, &S->t->rec[rec].u.tmap);
	sb_addf(&sb, " (event %ld)", rec);
	yo_str(S->y, sb.buf);
	sb_release(&sb);
}

void show_launch_tmaps(struct yout *y, const struct trace *t, size_t ev, const struct tr_launch *l)
{
	struct tm_show S = { y, t, l, 0 };
	tmap_scan_args(t, ev, l->args, l->argsize, one, &S);
	if (S.open)
		yo_seq_end(y);
}
