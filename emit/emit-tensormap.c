/*
 * emit-tensormap.c - repro.cu's TMA tensor maps: a launch parameter that
 * holds a recorded CUtensorMap (addr/tensormap.h) is built in repro.cu
 * with the call the program made (cuTensorMapEncodeTiled or Im2col: named
 * dims, strides, box, swizzle, element type) over the repro's own buffer,
 * not pasted as 128 opaque bytes.  A map without a recorded geometry keeps
 * its captured bytes with the address word relocated (put_ptr), and says
 * so.  Called by emit.c for each launch (emit_tmaps).
 */
#include <stdio.h>
#include <string.h>

#include "../addr/memmap.h"
#include "../addr/tensormap.h"
#include "../common/strbuf.h"
#include "../trace/trace.h"
#include "emit-int.h"

static const char *const dtype_enum[] = {
	"CU_TENSOR_MAP_DATA_TYPE_UINT8", "CU_TENSOR_MAP_DATA_TYPE_UINT16",
	"CU_TENSOR_MAP_DATA_TYPE_UINT32", "CU_TENSOR_MAP_DATA_TYPE_INT32",
	"CU_TENSOR_MAP_DATA_TYPE_UINT64", "CU_TENSOR_MAP_DATA_TYPE_INT64",
	"CU_TENSOR_MAP_DATA_TYPE_FLOAT16", "CU_TENSOR_MAP_DATA_TYPE_FLOAT32",
	"CU_TENSOR_MAP_DATA_TYPE_FLOAT64", "CU_TENSOR_MAP_DATA_TYPE_BFLOAT16",
	"CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ", "CU_TENSOR_MAP_DATA_TYPE_TFLOAT32",
	"CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ",
};
static const char *const swizzle_enum[] = {
	"CU_TENSOR_MAP_SWIZZLE_NONE", "CU_TENSOR_MAP_SWIZZLE_32B", "CU_TENSOR_MAP_SWIZZLE_64B",
	"CU_TENSOR_MAP_SWIZZLE_128B",
};

/* "CU_..." for a known value, else "(TYPE)N". */
static void enum_text(struct strbuf *o, const char *const *names, size_t n, const char *type, uint32_t v)
{
	if (v < n)
		sb_adds(o, names[v]);
	else
		sb_addf(o, "(%s)%u", type, v);
}

struct emit_tm {
	struct strbuf *o;
	const struct trace *t;
	const struct tr_launch *l;
	const struct memmap *mm;
	size_t n;
};

/* Which parameter holds byte off of the launch's args. */
static uint32_t param_at(const struct tr_launch *l, uint32_t off)
{
	for (uint32_t p = 0; p < l->nparams; p++)
		if (off >= l->params[p].offset && off < l->params[p].offset + l->params[p].size)
			return p;
	return 0;
}

static void u64_list(struct strbuf *o, const char *type, const char *name, const uint64_t *v, uint32_t n)
{
	sb_addf(o, "\t\t\t%s %s[%u] = {", type, name, n ? n : 1);
	for (uint32_t i = 0; i < n; i++)
		sb_addf(o, "%s%lluull", i ? ", " : " ", (unsigned long long)v[i]);
	sb_adds(o, n ? " };\n" : " 0 };\n");
}

static void u32_list(struct strbuf *o, const char *type, const char *name, const uint32_t *v, uint32_t n)
{
	sb_addf(o, "\t\t\t%s %s[%u] = {", type, name, n ? n : 1);
	for (uint32_t i = 0; i < n; i++)
		sb_addf(o, "%s%uu", i ? ", " : " ", v[i]);
	sb_adds(o, n ? " };\n" : " 0 };\n");
}

static void one_map(long rec, uint32_t off, void *arg)
{
	struct emit_tm *E = arg;
	const struct tr_tensormap *m = &E->t->rec[rec].u.tmap;
	struct strbuf *o = E->o;
	struct mm_alloc *a = memmap_pointer_word(E->mm, m->gaddr, NULL);
	uint32_t p = param_at(E->l, off), rank = m->rank;
	uint32_t poff = off - E->l->params[p].offset;

	E->n++;
	sb_addf(o, "\t\t/* param %u", p);
	if (E->l->params[p].size > TR_TMAP_BYTES)
		sb_addf(o, " (a by-value struct; map at byte %u)", poff);
	sb_adds(o, ": ");
	tmap_describe(o, m);
	if (m->geom != TR_TMAP_TILED && m->geom != TR_TMAP_IM2COL) {
		sb_adds(o, ".\n\t\t * How it was encoded was not recorded (or is im2col-wide): its captured\n"
			"\t\t * bytes stay, with the address word pointing at this program's buffer. */\n");
		return;
	}
	sb_addf(o, ";\n\t\t * built as the program built it (%s), over this program's buffer */\n",
		m->geom == TR_TMAP_TILED ? "cuTensorMapEncodeTiled" : "cuTensorMapEncodeIm2col");
	sb_adds(o, "\t\t{\n\t\t\tCUtensorMap map;\n");
	sb_addf(o, "\t\t\t/* sizes innermost first: dims[0] elements per row; strides in bytes, from dims[1] on */\n");
	u64_list(o, "cuuint64_t", "dims", m->dims, rank);
	u64_list(o, "cuuint64_t", "strides", m->strides, rank ? rank - 1 : 0);
	if (m->geom == TR_TMAP_TILED)
		u32_list(o, "cuuint32_t", "box", m->box, rank);
	u32_list(o, "cuuint32_t", "elem_strides", m->estrides, rank);
	if (m->geom == TR_TMAP_IM2COL)
		sb_addf(o, "\t\t\tint lower[3] = { %d, %d, %d }, upper[3] = { %d, %d, %d };\n",
			m->extra[0], m->extra[1], m->extra[2], m->extra[3], m->extra[4], m->extra[5]);
	sb_adds(o, "\t\t\tvoid *global = (void *)(");
	if (a)
		sb_addf(o, "buf[%d].ptr + %lld", (int)(intptr_t)a->user - 1, (long long)(m->gaddr - a->addr));
	else
		sb_addf(o, "0x%llxull /* no captured buffer holds it */", (unsigned long long)m->gaddr);
	sb_adds(o, ");\n");
	sb_addf(o, "\t\t\tSETUP(cuTensorMap%s(&map, ", m->geom == TR_TMAP_TILED ? "EncodeTiled" : "EncodeIm2col");
	enum_text(o, dtype_enum, sizeof(dtype_enum) / sizeof(dtype_enum[0]), "CUtensorMapDataType", m->dtype);
	sb_addf(o, ", %u, global, dims, strides, ", rank);
	if (m->geom == TR_TMAP_TILED)
		sb_adds(o, "box, ");
	else
		sb_addf(o, "lower, upper, %u, %u, ", (uint32_t)m->extra[6], (uint32_t)m->extra[7]);
	sb_addf(o, "elem_strides,\n\t\t\t\t(CUtensorMapInterleave)%u, ", m->interleave);
	enum_text(o, swizzle_enum, sizeof(swizzle_enum) / sizeof(swizzle_enum[0]), "CUtensorMapSwizzle",
		  m->swizzle);
	sb_addf(o, ", (CUtensorMapL2promotion)%u, (CUtensorMapFloatOOBfill)%u));\n", m->l2promo, m->oobfill);
	sb_addf(o, "\t\t\tmemcpy(args + %u, &map, sizeof(map));\n\t\t}\n", off);
}

size_t emit_tmaps(struct strbuf *o, const struct trace *t, size_t ev, const struct tr_launch *l,
		  const struct memmap *mm)
{
	struct emit_tm E = { o, t, l, mm, 0 };
	tmap_scan_args(t, ev, l->args, l->argsize, one_map, &E);
	return E.n;
}

size_t emit_tmap_count(const struct trace *t, size_t ev, const struct tr_launch *l)
{
	return tmap_scan_args(t, ev, l->args, l->argsize, NULL, NULL);
}
