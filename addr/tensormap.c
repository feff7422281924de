/*
 * tensormap.c - TMA tensor maps as recorded in a trace (see tensormap.h).
 * CUtensorMapDataType numbers are the driver's (cuda.h, CUDA 12/13); they
 * are on disk as the program passed them.
 */
#include <stdio.h>
#include <string.h>

#include "../common/strbuf.h"
#include "tensormap.h"

static const struct { const char *name; unsigned size; } dtypes[] = {
	{ "u8", 1 }, { "u16", 2 }, { "u32", 4 }, { "i32", 4 }, { "u64", 8 }, { "i64", 8 },
	{ "f16", 2 }, { "f32", 4 }, { "f64", 8 }, { "bf16", 2 }, { "f32 (ftz)", 4 },
	{ "tf32", 4 }, { "tf32 (ftz)", 4 }, { "u4 (16 per 8 bytes)", 1 }, { "u4 (16 per 16 bytes)", 1 },
	{ "u6 (16 per 16 bytes)", 1 },
};

unsigned tmap_elem_size(uint32_t dtype)
{
	return dtype < sizeof(dtypes) / sizeof(dtypes[0]) ? dtypes[dtype].size : 0;
}

const char *tmap_dtype_name(uint32_t dtype, char *buf, size_t n)
{
	if (dtype < sizeof(dtypes) / sizeof(dtypes[0]))
		return dtypes[dtype].name;
	snprintf(buf, n, "dtype %u", dtype);
	return buf;
}

int tmap_match(const struct tr_tensormap *m, const uint8_t *p)
{
	uint64_t w0;
	memcpy(&w0, p, 8);
	return w0 == m->gaddr && !memcmp(p + 8, m->map + 8, TR_TMAP_BYTES - 8);
}

static int usable(const struct tr_rec *r, const uint8_t *p)
{
	return r->type == TR_TENSORMAP && !r->u.tmap.result && tmap_match(&r->u.tmap, p);
}

long tmap_find(const struct trace *t, size_t before, const uint8_t *p)
{
	if (before > t->nrec)
		before = t->nrec;
	if (t->tmaps_indexed) {
		/* the maps of this address (word 0), latest before `before` first */
		uint64_t w0;
		size_t lo = 0, hi = t->ntmaps;
		memcpy(&w0, p, 8);
		while (lo < hi) {   /* the first key past (w0, before - 1) */
			size_t mid = lo + (hi - lo) / 2;
			const struct tr_tmap_key *k = &t->tmap_keys[mid];
			if (k->gaddr < w0 || (k->gaddr == w0 && k->rec < before))
				lo = mid + 1;
			else
				hi = mid;
		}
		for (size_t k = lo; k-- > 0 && t->tmap_keys[k].gaddr == w0;)
			if (usable(&t->rec[t->tmap_keys[k].rec], p))
				return (long)t->tmap_keys[k].rec;
		return -1;
	}
	for (size_t i = before; i-- > 0;)
		if (usable(&t->rec[i], p))
			return (long)i;
	return -1;
}

size_t tmap_scan_args(const struct trace *t, size_t before, const uint8_t *args, uint32_t argsize,
		      void (*fn)(long rec, uint32_t off, void *arg), void *arg)
{
	size_t n = 0;
	int any = 0;
	if (t->tmaps_indexed)   /* a map before the launch: the first one is */
		any = t->ntmaps && t->tmap_first < before;
	for (size_t i = 0; !t->tmaps_indexed && i < before && i < t->nrec && !any; i++)
		any = t->rec[i].type == TR_TENSORMAP;
	if (!any)
		return 0;
	for (uint32_t off = 0; argsize >= TR_TMAP_BYTES && off <= argsize - TR_TMAP_BYTES;
	     off += TR_TMAP_PARAM_ALIGN) {
		long rec = tmap_find(t, before, args + off);
		if (rec < 0)
			continue;
		n++;
		if (fn)
			fn(rec, off, arg);
		off += TR_TMAP_BYTES - TR_TMAP_PARAM_ALIGN;   /* maps do not overlap */
	}
	return n;
}

uint64_t tmap_extent(const struct tr_tensormap *m)
{
	unsigned es = tmap_elem_size(m->dtype);
	uint64_t end;
	if (!es || !m->rank || m->rank > TR_TMAP_MAX_RANK || !m->geom)
		return 0;
	end = m->dims[0] * es;
	for (uint32_t i = 1; i < m->rank; i++)
		if (m->dims[i])
			end += (m->dims[i] - 1) * m->strides[i - 1];
	return end;
}

void tmap_describe(struct strbuf *out, const struct tr_tensormap *m)
{
	char b[32];
	if (!m->geom || !m->rank || m->rank > TR_TMAP_MAX_RANK) {
		sb_adds(out, "a TMA descriptor (geometry not recorded)");
		return;
	}
	sb_adds(out, "a TMA descriptor over a ");
	for (uint32_t i = m->rank; i-- > 0;)
		sb_addf(out, "%llu%s", (unsigned long long)m->dims[i], i ? "x" : "");
	sb_addf(out, " %s tensor", tmap_dtype_name(m->dtype, b, sizeof(b)));
	if (m->geom == TR_TMAP_TILED) {
		sb_adds(out, ", box ");
		for (uint32_t i = m->rank; i-- > 0;)
			sb_addf(out, "%u%s", m->box[i], i ? "x" : "");
	} else {
		sb_adds(out, m->geom == TR_TMAP_IM2COL ? ", im2col" : ", im2col (wide)");
	}
	if (m->rank > 1) {
		sb_adds(out, ", row strides ");
		for (uint32_t i = m->rank - 1; i-- > 0;)
			sb_addf(out, "%llu%s", (unsigned long long)m->strides[i], i ? "," : "");
		sb_adds(out, " bytes");
	}
	if (m->swizzle)
		sb_addf(out, ", swizzle %uB", m->swizzle == 1 ? 32 : m->swizzle == 2 ? 64 :
			m->swizzle == 3 ? 128 : 0);
}
