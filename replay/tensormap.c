/*
 * tensormap.c - re-encoding recorded TMA tensor maps at replay (see
 * tensormap.h).  The relocated address word is the starting point:
 * memmap's pointer-word rule has already rewritten word 0 (the map's
 * global address, GPU-FACTS.md) when it pointed into a captured buffer.
 */
#include <string.h>

#include "../addr/tensormap.h"
#include "../trace/trace.h"
#include "tensormap.h"

struct fix {
	const struct drv *d;
	const struct trace *t;
	uint8_t *args;
	struct rtmap_stats *st;
};

static CUresult encode(const struct drv *d, const struct tr_tensormap *m, uint64_t addr, CUtensorMap *out)
{
	cuuint64_t dims[TR_TMAP_MAX_RANK], strides[TR_TMAP_MAX_RANK];
	cuuint32_t box[TR_TMAP_MAX_RANK], es[TR_TMAP_MAX_RANK];
	int lo[3], hi[3];

	for (int i = 0; i < TR_TMAP_MAX_RANK; i++) {
		dims[i] = m->dims[i];
		strides[i] = m->strides[i];
		box[i] = m->box[i];
		es[i] = m->estrides[i];
	}
	for (int i = 0; i < 3; i++) {
		lo[i] = m->extra[i];
		hi[i] = m->extra[3 + i];
	}
	if (m->geom == TR_TMAP_TILED && d->TensorMapEncodeTiled)
		return d->TensorMapEncodeTiled(out, (CUtensorMapDataType)m->dtype, m->rank,
					       (void *)(uintptr_t)addr, dims, strides, box, es,
					       (CUtensorMapInterleave)m->interleave,
					       (CUtensorMapSwizzle)m->swizzle,
					       (CUtensorMapL2promotion)m->l2promo,
					       (CUtensorMapFloatOOBfill)m->oobfill);
	if (m->geom == TR_TMAP_IM2COL && d->TensorMapEncodeIm2col)
		return d->TensorMapEncodeIm2col(out, (CUtensorMapDataType)m->dtype, m->rank,
						(void *)(uintptr_t)addr, dims, strides, lo, hi,
						(cuuint32_t)m->extra[6], (cuuint32_t)m->extra[7], es,
						(CUtensorMapInterleave)m->interleave,
						(CUtensorMapSwizzle)m->swizzle,
						(CUtensorMapL2promotion)m->l2promo,
						(CUtensorMapFloatOOBfill)m->oobfill);
	return CUDA_ERROR_NOT_SUPPORTED;
}

static void fix_one(long rec, uint32_t off, void *arg)
{
	struct fix *F = arg;
	const struct tr_tensormap *m = &F->t->rec[rec].u.tmap;
	CUtensorMap map;
	uint64_t addr;
	CUresult r;

	memcpy(&addr, F->args + off, 8);   /* relocated (or kept) by the pointer-word rule */
	memset(&map, 0, sizeof(map));
	r = encode(F->d, m, addr, &map);
	if (r == CUDA_SUCCESS) {
		memcpy(F->args + off, &map, TR_TMAP_BYTES);
		F->st->encoded++;
	} else if (r == CUDA_ERROR_NOT_SUPPORTED) {
		F->st->word0++;
	} else {
		F->st->failed++;
	}
}

void rtmap_reencode(const struct drv *d, const struct trace *t, size_t ev, const struct tr_launch *l,
		    uint8_t *args, struct rtmap_stats *st)
{
	struct fix F = { d, t, args, st };
	tmap_scan_args(t, ev, l->args, l->argsize, fix_one, &F);
}
