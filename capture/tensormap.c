/*
 * tensormap.c - capture of TMA tensor maps (TENSORMAP records, trace
 * format 1.4).  On the successful exit of cuTensorMapEncodeTiled,
 * cuTensorMapEncodeIm2col, cuTensorMapEncodeIm2colWide and
 * cuTensorMapReplaceAddress it records the call's arguments and the 128
 * bytes the driver wrote, so replay can build the same map over the
 * relocated buffer and repro.cu can build it with the same call.
 *
 * A ReplaceAddress record carries the geometry of the encode that made the
 * map: the last recorded map whose bytes after word 0 (the address word,
 * GPU-FACTS.md) equal the replaced map's.  A small ring of recent encodes
 * is kept for that (Triton encodes at every launch; a ring of 64 covers
 * programs that re-point a few long-lived maps).
 *
 * Called from inject.c's exit dispatch (cap_tmap_exit); the record goes
 * out through cap_put_record, under inject.c's lock, and is carried
 * into the segments after a checkpoint (a map encoded once at set-up is
 * launched long after it).
 */
#include <cuda.h>
#include <cupti.h>

#include <pthread.h>
#include <string.h>

#include "../trace/trace.h"
#include "capture.h"

#define CB(name) CUPTI_DRIVER_TRACE_CBID_##name
#define RING 64

static struct tr_tensormap ring[RING];
static unsigned ring_n;      /* encodes seen; slot = n % RING */
static pthread_mutex_t ring_lock = PTHREAD_MUTEX_INITIALIZER;

/* Copy n values from a program pointer that the driver just read. */
static void get_u64s(uint64_t *dst, const cuuint64_t *src, uint32_t n)
{
	for (uint32_t i = 0; src && i < n && i < TR_TMAP_MAX_RANK; i++)
		dst[i] = src[i];
}

static void get_u32s(uint32_t *dst, const cuuint32_t *src, uint32_t n)
{
	for (uint32_t i = 0; src && i < n && i < TR_TMAP_MAX_RANK; i++)
		dst[i] = src[i];
}

static void ring_put(const struct tr_tensormap *m)
{
	pthread_mutex_lock(&ring_lock);
	ring[ring_n++ % RING] = *m;
	pthread_mutex_unlock(&ring_lock);
}

/* The latest encode whose map equals `map` past word 0; 0 found, -1 not. */
static int ring_find(const uint8_t *map, struct tr_tensormap *out)
{
	int ret = -1;
	pthread_mutex_lock(&ring_lock);
	for (unsigned k = 0; k < RING && k < ring_n; k++) {
		const struct tr_tensormap *m = &ring[(ring_n - 1 - k) % RING];
		if (!memcmp(m->map + 8, map + 8, TR_TMAP_BYTES - 8)) {
			*out = *m;
			ret = 0;
			break;
		}
	}
	pthread_mutex_unlock(&ring_lock);
	return ret;
}

/* The ring holds a map with exactly these 128 bytes (address word included). */
static int ring_has(const uint8_t *map)
{
	int found = 0;
	pthread_mutex_lock(&ring_lock);
	for (unsigned k = 0; k < RING && k < ring_n && !found; k++) {
		const struct tr_tensormap *m = &ring[(ring_n - 1 - k) % RING];
		uint64_t w0;
		memcpy(&w0, map, 8);
		found = w0 == m->gaddr && !memcmp(m->map + 8, map + 8, TR_TMAP_BYTES - 8);
	}
	pthread_mutex_unlock(&ring_lock);
	return found;
}

void cap_tmap_check_launch(const char *kernel, const struct tr_param *params, uint32_t nparams,
			   const uint8_t *args, uint32_t argsize, int *noted)
{
	for (uint32_t p = 0; p < nparams && !*noted; p++) {
		uint64_t w0;
		const struct tr_param *q = &params[p];
		if (q->size != TR_TMAP_BYTES || q->offset % TR_TMAP_PARAM_ALIGN || q->offset + TR_TMAP_BYTES > argsize)
			continue;
		memcpy(&w0, args + q->offset, 8);
		if (ring_has(args + q->offset) || !cap_is_device_ptr(w0))
			continue;
		*noted = 1;
		cap_note("kernel %s: param %u is 128 bytes at a 16-byte-aligned offset whose first word is a device "
			 "address (a TMA tensor map?), but no recorded cuTensorMapEncode* call made it: replay "
			 "relocates its address word only", kernel, p);
	}
}

/* The fields every cuTensorMapEncode* call shares (their parameter structs
 * differ in type, not in these names). */
#define ENCODE_COMMON(q, g) do {                                                              \
		out = (q)->tensorMap;                                                         \
		m->api = m->geom = (g);                                                       \
		m->dtype = (q)->tensorDataType;                                               \
		m->rank = (q)->tensorRank;                                                    \
		m->gaddr = (uint64_t)(uintptr_t)(q)->globalAddress;                           \
		get_u64s(m->dims, (q)->globalDim, (q)->tensorRank);                           \
		get_u64s(m->strides, (q)->globalStrides, (q)->tensorRank ? (q)->tensorRank - 1 : 0); \
		get_u32s(m->estrides, (q)->elementStrides, (q)->tensorRank);                  \
		m->interleave = (q)->interleave;                                              \
		m->swizzle = (q)->swizzle;                                                    \
		m->l2promo = (q)->l2Promotion;                                                \
		m->oobfill = (q)->oobFill;                                                    \
	} while (0)

/* A TENSORMAP record, cleared: each case below starts with it, so that the
 * exit callbacks that are none of them (every exit callback comes here)
 * leave without clearing its 344 bytes */
static void tmap_rec(struct tr_rec *r)
{
	memset(r, 0, sizeof(*r));
	r->type = TR_TENSORMAP;
}

int cap_tmap_exit(uint32_t cbid, const void *params)
{
	struct tr_rec r;
	struct tr_tensormap *m = &r.u.tmap;
	const CUtensorMap *out = NULL;

	switch (cbid) {
	case CB(cuTensorMapEncodeTiled): {
		const cuTensorMapEncodeTiled_params *q = params;
		tmap_rec(&r);
		ENCODE_COMMON(q, TR_TMAP_TILED);
		get_u32s(m->box, q->boxDim, q->tensorRank);
		break;
	}
	case CB(cuTensorMapEncodeIm2col): {
		const cuTensorMapEncodeIm2col_params *q = params;
		uint32_t sp = q->tensorRank > 2 ? q->tensorRank - 2 : 0;   /* spatial dims */
		tmap_rec(&r);
		ENCODE_COMMON(q, TR_TMAP_IM2COL);
		for (uint32_t i = 0; i < sp && i < 3; i++) {
			m->extra[i] = q->pixelBoxLowerCorner ? q->pixelBoxLowerCorner[i] : 0;
			m->extra[3 + i] = q->pixelBoxUpperCorner ? q->pixelBoxUpperCorner[i] : 0;
		}
		m->extra[6] = (int32_t)q->channelsPerPixel;
		m->extra[7] = (int32_t)q->pixelsPerColumn;
		break;
	}
#if CUDA_VERSION >= 12080
	case CB(cuTensorMapEncodeIm2colWide): {
		const cuTensorMapEncodeIm2colWide_params *q = params;
		tmap_rec(&r);
		ENCODE_COMMON(q, TR_TMAP_IM2COL_WIDE);
		m->extra[0] = q->pixelBoxLowerCornerWidth;
		m->extra[3] = q->pixelBoxUpperCornerWidth;
		m->extra[5] = (int32_t)q->mode;
		m->extra[6] = (int32_t)q->channelsPerPixel;
		m->extra[7] = (int32_t)q->pixelsPerColumn;
		break;
	}
#endif
	case CB(cuTensorMapReplaceAddress): {
		const cuTensorMapReplaceAddress_params *q = params;
		struct tr_tensormap g;
		tmap_rec(&r);
		out = q->tensorMap;
		if (!out || cap_host_readable(out, TR_TMAP_BYTES) == 0)
			return 1;
		if (ring_find((const uint8_t *)out, &g) == 0)
			*m = g;   /* the geometry (and geom) of the encode that made it */
		m->api = TR_TMAP_REPLACE;
		m->gaddr = (uint64_t)(uintptr_t)q->globalAddress;
		break;
	}
	default:
		return 0;
	}
	if (!out || cap_host_readable(out, TR_TMAP_BYTES) == 0)
		return 1;
	if (m->rank > TR_TMAP_MAX_RANK)
		m->rank = TR_TMAP_MAX_RANK;
	memcpy(m->map, out, TR_TMAP_BYTES);
	ring_put(m);   /* a replaced map too: launches pass it as it now is */
	cap_put_record(&r);   /* carried into later segments too (checkpoint.c) */
	return 1;
}
