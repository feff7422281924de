/*
 * copies.c - the driver's copy and memset calls as trace records (see
 * capture.h): 1D copies in every form (direction from the API or from the
 * pointers), cuMemcpyBatchAsync, 2D/3D copies as one record per run of
 * contiguous rows, values a stream writes into memory (cuStreamWriteValue,
 * cuStreamBatchMemOp) as 4- or 8-byte copies, and memsets.
 *
 * What a call's parameters mean is decided here; the trace writer, the
 * lock and the bytes' path (writeq.c) stay in inject.c, which calls
 * cap_copy_enter and cap_memset_enter at each call's entry (the copy must
 * be taken before the driver runs it: the program may reuse its buffer
 * right after an asynchronous call returns).  A host source the driver
 * would read is checked with cap_host_readable first, never touched blind.
 */
#include <cuda.h>
#include <cupti.h>

#include <stdint.h>
#include <string.h>

#include "../trace/trace.h"
#include "capture.h"
#include "copies.h"
#include "prof.h"

#define CB(name) CUPTI_DRIVER_TRACE_CBID_##name

enum { MAX_COPY_RECORDS = 65536 };   /* per 2D/3D copy call */

/* A 1D copy whose direction is known.  For H2D, the host source is checked
 * first: `trusted` says the API promises host memory (the driver reads it
 * as such anyway), else a read the kernel cannot vouch for is skipped. */
static void rec_copy(const CUpti_CallbackData *cb, uint32_t type, uint64_t dst, uint64_t src,
		     uint64_t size, CUstream stream, int async, int trusted)
{
	uint32_t flags = async ? TR_F_ASYNC : 0;
	long ev;
	uint64_t t0 = CAP_PROF_T0();

	if (type == TR_MEMCPY_H2D && size) {
		int ok = cap_host_readable((const void *)(uintptr_t)src, size);
		if (ok == 0 || (ok < 0 && !trusted)) {
			if (cap_lock_rec()) {
				cap_note("%s: host source 0x%llx (%llu bytes) is not readable; copy not recorded",
					    cb->functionName, (unsigned long long)src, (unsigned long long)size);
				cap_unlock();
			}
			return;
		}
	}
	if (async && cap_capturing(stream))
		flags |= TR_F_CAPTURED;
	if (!cap_lock_rec())
		return;
	if (type == TR_MEMCPY_D2D && !(flags & TR_F_CAPTURED))
		cap_sync_hostmem(src);   /* its source may be memory the CPU or another process wrote */
	ev = cap_emit_copy(type, dst, src, size, stream, flags);
	cap_set_corr(cb->correlationData, ev);
	cap_unlock();
	if (type == TR_MEMCPY_H2D)
		CAP_PROF(CP_COPY, t0, size);
}

/* cuMemcpy/cuMemcpyAsync and peers: direction from the pointers themselves. */
/* A copy's record type from where its pointers lie (unified addressing);
 * 0 for host to host, which the GPU is not involved in. */
static uint32_t unified_type(CUdeviceptr dst, CUdeviceptr src)
{
	int d = cap_is_device_ptr(dst), s = cap_is_device_ptr(src);
	return d && s ? TR_MEMCPY_D2D : d ? TR_MEMCPY_H2D : s ? TR_MEMCPY_D2H : 0;
}

static void rec_unified_copy(const CUpti_CallbackData *cb, CUdeviceptr dst, CUdeviceptr src,
			     size_t size, CUstream stream, int async)
{
	uint32_t type = unified_type(dst, src);
	if (type)
		rec_copy(cb, type, dst, src, size, stream, async, 0);
}

/* cuMemcpyBatchAsync (CUDA 12.8+; vLLM's KV-cache offload, torchcomms):
 * count 1D copies, each as cuMemcpyAsync would be recorded (direction
 * from the pointers; a host source that cannot be read is skipped with a
 * note).  The attributes only hint at where the memory lies and in what
 * order it may be read: the copies' effect is the same. */
static void rec_batch_copy(const CUpti_CallbackData *cb, const CUdeviceptr *dsts, const CUdeviceptr *srcs,
			   const size_t *sizes, size_t count, CUstream stream)
{
	uint32_t flags = TR_F_ASYNC;
	long first = -1, ev;
	size_t skipped = 0;

	if (!dsts || !srcs || !sizes || !count)
		return;
	if (cap_capturing(stream))
		flags |= TR_F_CAPTURED;
	if (!cap_lock_rec())
		return;
	for (size_t i = 0; i < count; i++) {
		uint32_t type = unified_type(dsts[i], srcs[i]);
		if (!type || !sizes[i])
			continue;
		if (type == TR_MEMCPY_H2D &&
		    cap_host_readable((const void *)(uintptr_t)srcs[i], sizes[i]) != 1) {
			skipped++;
			continue;
		}
		if (type == TR_MEMCPY_D2D && !(flags & TR_F_CAPTURED))
			cap_sync_hostmem(srcs[i]);
		ev = cap_emit_copy(type, dsts[i], srcs[i], sizes[i], stream, flags);
		if (first < 0)
			first = ev;
	}
	if (skipped)
		cap_note("%s: %zu of its %zu copies read host memory that is not readable; they are not "
			    "recorded", cb->functionName, skipped, count);
	cap_set_corr(cb->correlationData, first);
	cap_unlock();
}

/* A value the stream writes into memory (cuStreamWriteValue32/64, a
 * cuStreamBatchMemOp write): recorded as a host-to-device copy of its 4 or
 * 8 bytes, in stream order like the copies.  Lock held. */
static long emit_write_value(CUdeviceptr addr, const void *value, size_t n, CUstream stream, uint32_t flags)
{
	if (!addr)
		return -1;
	return cap_emit_copy(TR_MEMCPY_H2D, addr, (uint64_t)(uintptr_t)value, n, stream, flags);
}

static uint32_t write_value_flags(CUstream stream)
{
	return TR_F_ASYNC | (cap_capturing(stream) ? TR_F_CAPTURED : 0);
}

static void rec_write_value(const CUpti_CallbackData *cb, CUdeviceptr addr, const void *value, size_t n,
			    CUstream stream)
{
	uint32_t flags = write_value_flags(stream);
	if (!cap_lock_rec())
		return;
	cap_set_corr(cb->correlationData, emit_write_value(addr, value, n, stream, flags));
	cap_unlock();
}

/* cuStreamBatchMemOp: its writes, in order; waits, flushes and barriers
 * change no memory (replay runs one stream in trace order). */
static void rec_batch_memop(const CUpti_CallbackData *cb, CUstream stream, unsigned count,
			    const CUstreamBatchMemOpParams *ops)
{
	long first = -1, ev;
	uint32_t flags = write_value_flags(stream);

	if (!ops || !cap_lock_rec())
		return;
	for (unsigned i = 0; i < count; i++) {
		const struct CUstreamMemOpWriteValueParams_st *w = &ops[i].writeValue;
		if (ops[i].operation == CU_STREAM_MEM_OP_WRITE_VALUE_32)
			ev = emit_write_value(w->address, &w->value, 4, stream, flags);
		else if (ops[i].operation == CU_STREAM_MEM_OP_WRITE_VALUE_64)
			ev = emit_write_value(w->address, &w->value64, 8, stream, flags);
		else
			continue;
		if (first < 0)
			first = ev;
	}
	cap_set_corr(cb->correlationData, first);
	cap_unlock();
}

struct side {
	int dev;                   /* 1 device, 0 host, -1 array (unsupported) */
	uint64_t base;
	size_t x, y, z, pitch, height;
};

static void side_from(struct side *s, CUmemorytype type, const void *host, CUdeviceptr dev,
		      size_t x, size_t y, size_t z, size_t pitch, size_t height)
{
	s->x = x; s->y = y; s->z = z; s->pitch = pitch; s->height = height;
	switch (type) {
	case CU_MEMORYTYPE_HOST:
		s->dev = 0;
		s->base = (uint64_t)(uintptr_t)host;
		break;
	case CU_MEMORYTYPE_DEVICE:
		s->dev = 1;
		s->base = dev;
		break;
	case CU_MEMORYTYPE_UNIFIED:
		s->dev = cap_is_device_ptr(dev);
		s->base = dev;
		break;
	default:
		s->dev = -1;
		s->base = 0;
	}
}

static uint64_t row_addr(const struct side *s, size_t row, size_t slice)
{
	return s->base + s->x + (s->y + row) * s->pitch + (s->z + slice) * s->height * s->pitch;
}

/* A 2D/3D copy as 1D records, one per run of contiguous rows. */
static void rec_copy_rows(const CUpti_CallbackData *cb, CUpti_CallbackId cbid,
			  const struct side *src, const struct side *dst, size_t width,
			  size_t height, size_t depth, CUstream stream, int async)
{
	uint32_t type, flags = async ? TR_F_ASYNC : 0;
	uint64_t run_src = 0, run_dst = 0, run_len = 0;
	unsigned nrec = 0;
	long first = -1, ev;

	if (src->dev < 0 || dst->dev < 0) {
		cap_note_once(cbid, "unsupported copy form %s (CUDA array): replay will miss these bytes",
			  cb->functionName);
		return;
	}
	if (!src->dev && !dst->dev)
		return;
	type = src->dev ? (dst->dev ? TR_MEMCPY_D2D : TR_MEMCPY_D2H) : TR_MEMCPY_H2D;
	if (!width || !height || !depth)
		return;
	if (type == TR_MEMCPY_H2D) {
		/* Check the whole source span once. */
		uint64_t lo = row_addr(src, 0, 0);
		uint64_t hi = row_addr(src, height - 1, depth - 1) + width;
		if (hi < lo || cap_host_readable((const void *)(uintptr_t)lo, hi - lo) == 0) {
			cap_note_once(cbid, "%s: host source not readable; copy not recorded", cb->functionName);
			return;
		}
	}
	if (async && cap_capturing(stream))
		flags |= TR_F_CAPTURED;
	if (!cap_lock_rec())
		return;
	for (size_t z = 0; z < depth; z++) {
		for (size_t y = 0; y < height; y++) {
			uint64_t s = row_addr(src, y, z), d = row_addr(dst, y, z);
			if (run_len && s == run_src + run_len && d == run_dst + run_len) {
				run_len += width;
				continue;
			}
			if (run_len) {
				if (++nrec > MAX_COPY_RECORDS)
					goto too_many;
				ev = cap_emit_copy(type, run_dst, run_src, run_len, stream, flags);
				if (first < 0)
					first = ev;
			}
			run_src = s;
			run_dst = d;
			run_len = width;
		}
	}
	if (run_len) {
		ev = cap_emit_copy(type, run_dst, run_src, run_len, stream, flags);
		if (first < 0)
			first = ev;
	}
	cap_set_corr(cb->correlationData, first);
	cap_unlock();
	return;
too_many:
	cap_note("%s: more than %d separate rows; the rest of this copy is not recorded",
		    cb->functionName, MAX_COPY_RECORDS);
	cap_set_corr(cb->correlationData, first);
	cap_unlock();
}

static void rec_copy2d(const CUpti_CallbackData *cb, CUpti_CallbackId cbid, const CUDA_MEMCPY2D *c,
		       CUstream stream, int async)
{
	struct side s, d;
	if (!c)
		return;
	side_from(&s, c->srcMemoryType, c->srcHost, c->srcDevice, c->srcXInBytes, c->srcY, 0, c->srcPitch, 0);
	side_from(&d, c->dstMemoryType, c->dstHost, c->dstDevice, c->dstXInBytes, c->dstY, 0, c->dstPitch, 0);
	rec_copy_rows(cb, cbid, &s, &d, c->WidthInBytes, c->Height, 1, stream, async);
}

static void rec_copy3d(const CUpti_CallbackData *cb, CUpti_CallbackId cbid, const CUDA_MEMCPY3D *c,
		       CUstream stream, int async)
{
	struct side s, d;
	if (!c)
		return;
	side_from(&s, c->srcMemoryType, c->srcHost, c->srcDevice, c->srcXInBytes, c->srcY, c->srcZ,
		  c->srcPitch, c->srcHeight);
	side_from(&d, c->dstMemoryType, c->dstHost, c->dstDevice, c->dstXInBytes, c->dstY, c->dstZ,
		  c->dstPitch, c->dstHeight);
	rec_copy_rows(cb, cbid, &s, &d, c->WidthInBytes, c->Height, c->Depth, stream, async);
}

/* Copies at API enter.  Returns 1 if cbid is a copy this handles. */
int cap_copy_enter(CUpti_CallbackId cbid, const CUpti_CallbackData *cb)
{
	const void *p = cb->functionParams;
	switch (cbid) {
	case CB(cuMemcpyHtoD_v2): case CB(cuMemcpyHtoD_v2_ptds): {
		const cuMemcpyHtoD_v2_params *q = p;
		rec_copy(cb, TR_MEMCPY_H2D, q->dstDevice, (uint64_t)(uintptr_t)q->srcHost, q->ByteCount,
			 cap_eff_stream(NULL, cbid != CB(cuMemcpyHtoD_v2)), 0, 1);
		return 1;
	}
	case CB(cuMemcpyHtoDAsync_v2): case CB(cuMemcpyHtoDAsync_v2_ptsz): {
		const cuMemcpyHtoDAsync_v2_params *q = p;
		rec_copy(cb, TR_MEMCPY_H2D, q->dstDevice, (uint64_t)(uintptr_t)q->srcHost, q->ByteCount,
			 cap_eff_stream(q->hStream, cbid != CB(cuMemcpyHtoDAsync_v2)), 1, 1);
		return 1;
	}
	case CB(cuMemcpyDtoD_v2): case CB(cuMemcpyDtoD_v2_ptds): {
		const cuMemcpyDtoD_v2_params *q = p;
		rec_copy(cb, TR_MEMCPY_D2D, q->dstDevice, q->srcDevice, q->ByteCount,
			 cap_eff_stream(NULL, cbid != CB(cuMemcpyDtoD_v2)), 0, 1);
		return 1;
	}
	case CB(cuMemcpyDtoDAsync_v2): case CB(cuMemcpyDtoDAsync_v2_ptsz): {
		const cuMemcpyDtoDAsync_v2_params *q = p;
		rec_copy(cb, TR_MEMCPY_D2D, q->dstDevice, q->srcDevice, q->ByteCount,
			 cap_eff_stream(q->hStream, cbid != CB(cuMemcpyDtoDAsync_v2)), 1, 1);
		return 1;
	}
	case CB(cuMemcpyDtoH_v2): case CB(cuMemcpyDtoH_v2_ptds): {
		const cuMemcpyDtoH_v2_params *q = p;
		rec_copy(cb, TR_MEMCPY_D2H, (uint64_t)(uintptr_t)q->dstHost, q->srcDevice, q->ByteCount,
			 cap_eff_stream(NULL, cbid != CB(cuMemcpyDtoH_v2)), 0, 1);
		return 1;
	}
	case CB(cuMemcpyDtoHAsync_v2): case CB(cuMemcpyDtoHAsync_v2_ptsz): {
		const cuMemcpyDtoHAsync_v2_params *q = p;
		rec_copy(cb, TR_MEMCPY_D2H, (uint64_t)(uintptr_t)q->dstHost, q->srcDevice, q->ByteCount,
			 cap_eff_stream(q->hStream, cbid != CB(cuMemcpyDtoHAsync_v2)), 1, 1);
		return 1;
	}
	case CB(cuMemcpy): case CB(cuMemcpy_ptds): {
		const cuMemcpy_params *q = p;
		rec_unified_copy(cb, q->dst, q->src, q->ByteCount,
				 cap_eff_stream(NULL, cbid != CB(cuMemcpy)), 0);
		return 1;
	}
	case CB(cuMemcpyAsync): case CB(cuMemcpyAsync_ptsz): {
		const cuMemcpyAsync_params *q = p;
		rec_unified_copy(cb, q->dst, q->src, q->ByteCount,
				 cap_eff_stream(q->hStream, cbid != CB(cuMemcpyAsync)), 1);
		return 1;
	}
	case CB(cuMemcpyPeer): case CB(cuMemcpyPeer_ptds): {
		const cuMemcpyPeer_params *q = p;
		rec_copy(cb, TR_MEMCPY_D2D, q->dstDevice, q->srcDevice, q->ByteCount,
			 cap_eff_stream(NULL, cbid != CB(cuMemcpyPeer)), 0, 1);
		return 1;
	}
	case CB(cuMemcpyPeerAsync): case CB(cuMemcpyPeerAsync_ptsz): {
		const cuMemcpyPeerAsync_params *q = p;
		rec_copy(cb, TR_MEMCPY_D2D, q->dstDevice, q->srcDevice, q->ByteCount,
			 cap_eff_stream(q->hStream, cbid != CB(cuMemcpyPeerAsync)), 1, 1);
		return 1;
	}
	case CB(cuMemcpy2D_v2): case CB(cuMemcpy2D_v2_ptds):
	case CB(cuMemcpy2DUnaligned_v2): case CB(cuMemcpy2DUnaligned_v2_ptds): {
		const cuMemcpy2D_v2_params *q = p;
		rec_copy2d(cb, cbid, q->pCopy, cap_eff_stream(NULL, cbid == CB(cuMemcpy2D_v2_ptds) ||
							  cbid == CB(cuMemcpy2DUnaligned_v2_ptds)), 0);
		return 1;
	}
	case CB(cuMemcpy2DAsync_v2): case CB(cuMemcpy2DAsync_v2_ptsz): {
		const cuMemcpy2DAsync_v2_params *q = p;
		rec_copy2d(cb, cbid, q->pCopy, cap_eff_stream(q->hStream, cbid != CB(cuMemcpy2DAsync_v2)), 1);
		return 1;
	}
	case CB(cuMemcpy3D_v2): case CB(cuMemcpy3D_v2_ptds): {
		const cuMemcpy3D_v2_params *q = p;
		rec_copy3d(cb, cbid, q->pCopy, cap_eff_stream(NULL, cbid != CB(cuMemcpy3D_v2)), 0);
		return 1;
	}
	case CB(cuMemcpy3DAsync_v2): case CB(cuMemcpy3DAsync_v2_ptsz): {
		const cuMemcpy3DAsync_v2_params *q = p;
		rec_copy3d(cb, cbid, q->pCopy, cap_eff_stream(q->hStream, cbid != CB(cuMemcpy3DAsync_v2)), 1);
		return 1;
	}
	case CB(cuMemcpyBatchAsync): case CB(cuMemcpyBatchAsync_ptsz): {
		const cuMemcpyBatchAsync_params *q = p;   /* with failIdx */
		rec_batch_copy(cb, q->dsts, q->srcs, q->sizes, q->count,
			       cap_eff_stream(q->hStream, cbid != CB(cuMemcpyBatchAsync)));
		return 1;
	}
	case CB(cuMemcpyBatchAsync_v2): case CB(cuMemcpyBatchAsync_v2_ptsz): {
		const cuMemcpyBatchAsync_v2_params *q = p;
		rec_batch_copy(cb, q->dsts, q->srcs, q->sizes, q->count,
			       cap_eff_stream(q->hStream, cbid != CB(cuMemcpyBatchAsync_v2)));
		return 1;
	}
	case CB(cuStreamWriteValue32): case CB(cuStreamWriteValue32_ptsz):
	case CB(cuStreamWriteValue32_v2): case CB(cuStreamWriteValue32_v2_ptsz): {
		const cuStreamWriteValue32_params *q = p;   /* the _v2 layout is the same */
		rec_write_value(cb, q->addr, &q->value, 4, cap_eff_stream(q->stream, cbid == CB(cuStreamWriteValue32_ptsz) ||
								      cbid == CB(cuStreamWriteValue32_v2_ptsz)));
		return 1;
	}
	case CB(cuStreamWriteValue64): case CB(cuStreamWriteValue64_ptsz):
	case CB(cuStreamWriteValue64_v2): case CB(cuStreamWriteValue64_v2_ptsz): {
		const cuStreamWriteValue64_params *q = p;
		rec_write_value(cb, q->addr, &q->value, 8, cap_eff_stream(q->stream, cbid == CB(cuStreamWriteValue64_ptsz) ||
								      cbid == CB(cuStreamWriteValue64_v2_ptsz)));
		return 1;
	}
	case CB(cuStreamBatchMemOp): case CB(cuStreamBatchMemOp_ptsz):
	case CB(cuStreamBatchMemOp_v2): case CB(cuStreamBatchMemOp_v2_ptsz): {
		const cuStreamBatchMemOp_params *q = p;
		rec_batch_memop(cb, cap_eff_stream(q->stream, cbid == CB(cuStreamBatchMemOp_ptsz) ||
					       cbid == CB(cuStreamBatchMemOp_v2_ptsz)), q->count, q->paramArray);
		return 1;
	}
	default:
		return 0;
	}
}

/* ---- memsets ------------------------------------------------------------ */

struct mset {
	CUdeviceptr dst;
	uint32_t value, elem;
	size_t width, height, pitch;
	CUstream stream;
	int async;
};

#define MSET_1D(cbv, cbp, T, field, esz, has_stream) \
	case CB(cbv): case CB(cbp): { \
		const T *q = p; \
		m->dst = q->dstDevice; m->value = q->field; m->elem = esz; \
		m->width = q->N; m->height = 1; m->pitch = 0; \
		MSET_STREAM_##has_stream(cbv) \
		return 0; }
#define MSET_2D(cbv, cbp, T, field, esz, has_stream) \
	case CB(cbv): case CB(cbp): { \
		const T *q = p; \
		m->dst = q->dstDevice; m->value = q->field; m->elem = esz; \
		m->width = q->Width; m->height = q->Height; m->pitch = q->dstPitch; \
		MSET_STREAM_##has_stream(cbv) \
		return 0; }
#define MSET_STREAM_0(cbv) m->stream = cap_eff_stream(NULL, cbid != CB(cbv)); m->async = 0;
#define MSET_STREAM_1(cbv) m->stream = cap_eff_stream(q->hStream, cbid != CB(cbv)); m->async = 1;

static int get_memset(CUpti_CallbackId cbid, const void *p, struct mset *m)
{
	switch (cbid) {
	MSET_1D(cuMemsetD8_v2, cuMemsetD8_v2_ptds, cuMemsetD8_v2_params, uc, 1, 0)
	MSET_1D(cuMemsetD16_v2, cuMemsetD16_v2_ptds, cuMemsetD16_v2_params, us, 2, 0)
	MSET_1D(cuMemsetD32_v2, cuMemsetD32_v2_ptds, cuMemsetD32_v2_params, ui, 4, 0)
	MSET_1D(cuMemsetD8Async, cuMemsetD8Async_ptsz, cuMemsetD8Async_params, uc, 1, 1)
	MSET_1D(cuMemsetD16Async, cuMemsetD16Async_ptsz, cuMemsetD16Async_params, us, 2, 1)
	MSET_1D(cuMemsetD32Async, cuMemsetD32Async_ptsz, cuMemsetD32Async_params, ui, 4, 1)
	MSET_2D(cuMemsetD2D8_v2, cuMemsetD2D8_v2_ptds, cuMemsetD2D8_v2_params, uc, 1, 0)
	MSET_2D(cuMemsetD2D16_v2, cuMemsetD2D16_v2_ptds, cuMemsetD2D16_v2_params, us, 2, 0)
	MSET_2D(cuMemsetD2D32_v2, cuMemsetD2D32_v2_ptds, cuMemsetD2D32_v2_params, ui, 4, 0)
	MSET_2D(cuMemsetD2D8Async, cuMemsetD2D8Async_ptsz, cuMemsetD2D8Async_params, uc, 1, 1)
	MSET_2D(cuMemsetD2D16Async, cuMemsetD2D16Async_ptsz, cuMemsetD2D16Async_params, us, 2, 1)
	MSET_2D(cuMemsetD2D32Async, cuMemsetD2D32Async_ptsz, cuMemsetD2D32Async_params, ui, 4, 1)
	default:
		return -1;
	}
}

int cap_memset_enter(CUpti_CallbackId cbid, const CUpti_CallbackData *cb)
{
	struct mset m;
	struct tr_rec r;
	uint32_t flags;

	memset(&m, 0, sizeof(m));
	if (get_memset(cbid, cb->functionParams, &m) < 0)
		return 0;
	flags = m.async ? TR_F_ASYNC : 0;
	if (m.async && cap_capturing(m.stream))
		flags |= TR_F_CAPTURED;
	if (!cap_lock_rec())
		return 1;
	memset(&r, 0, sizeof(r));
	r.type = TR_MEMSET;
	r.u.memset.dst = m.dst;
	r.u.memset.value = m.value;
	r.u.memset.elem_size = m.elem;
	r.u.memset.width = m.width;
	r.u.memset.height = m.height;
	r.u.memset.pitch = m.pitch;
	r.u.memset.stream = (uint64_t)(uintptr_t)m.stream;
	r.u.memset.flags = flags;
	cap_set_corr(cb->correlationData, cap_write_record(&r));
	cap_unlock();
	return 1;
}
