/*
 * allocs.c - the memory a program has, as ALLOC and FREE records: device,
 * pitched, async and pool allocations, managed, mapped, registered and
 * pinned host memory, VMM maps (a piece continuing a reserved range is
 * flagged), memory another process or API brought in (CUDA IPC, imported
 * pool pointers and VMM handles, external memory, mapped graphics
 * resources), module globals, and device memory found first at a launch
 * (foreign.c).  Each is recorded at its call's exit callback once it
 * succeeded; each free at its call's entry, before the driver forgets it.
 *
 * What a call's parameters mean and the tables that pair a free with its
 * allocation (the pointer the free will name, reserved ranges, imported
 * handles, mapped resources) are kept here, all under inject.c's lock
 * (cap_lock_rec); the trace writer stays in inject.c, which calls
 * cap_alloc_exit and cap_free_enter from its dispatch.  Memory the CPU
 * writes that the GPU reads is handed on to managed.c, the recorded ranges
 * to the checkpoints (checkpoint.c) and the known-memory index (foreign.c).
 */
#include <cuda.h>
#include <cupti.h>

#include <stdint.h>
#include <string.h>

#include "../trace/trace.h"
#include "allocs.h"
#include "capture.h"

#define CB(name) CUPTI_DRIVER_TRACE_CBID_##name

static struct {                /* all under inject.c's lock */
	struct cap_map live;       /* pointer the free call names -> (recorded addr, kind | size << 8) */
	struct cap_map globals;    /* module global address -> its size */
	struct cap_map imported;   /* VMM handle imported from another process -> 1 */
	struct cap_map reserved;   /* cuMemAddressReserve'd range: base -> size */
	struct cap_map gfx;        /* graphics resource mapped now -> its pointer */
	uint64_t count;            /* ALLOC records written (the END record's) */
} A;

/* An ALLOC record's fields (a NULL name written as ""). */
static struct tr_alloc alloc_fields(uint64_t addr, uint64_t size, uint32_t kind, uint32_t flags,
				    const char *name)
{
	return (struct tr_alloc){ .addr = addr, .size = size, .kind = kind, .flags = flags,
				  .name = name ? name : "" };
}

long cap_put_alloc(struct trace_writer *w, uint64_t addr, uint64_t size, uint32_t kind, uint32_t flags,
		   const char *name)
{
	struct tr_alloc a = alloc_fields(addr, size, kind, flags, name);
	return tw_alloc(w, &a);
}

/* (lock held) A.live holds the recorded address and, for the free, the
 * kind and size (kind | size << 8). */
static void rec_alloc_locked(uint64_t key, uint64_t addr, uint64_t size, uint32_t kind, uint32_t flags,
			     const char *name)
{
	struct tr_rec r;

	if (kind == TR_MEM_GLOBAL) {
		if (cap_map_get(&A.globals, addr))
			return;
		cap_map_put(&A.globals, addr, size, 0);
	} else {
		cap_map_put(&A.live, key ? key : addr, addr, kind | size << 8);
		cap_mm_drop_peer(addr, size);   /* a range found earlier, given out again */
	}
	cap_known_add(addr, size);
	memset(&r, 0, sizeof(r));
	r.type = TR_ALLOC;
	r.u.alloc = alloc_fields(addr, size, kind, flags, name);
	cap_write_record(&r);   /* through inject.c's writer */
	ckpt_on_alloc(addr, size, kind, flags, name);
	A.count++;
}

/* key: the pointer the matching free call will pass; flags: the ALLOC's
 * (TR_ALLOC_F_*). */
static void rec_alloc_flags(uint64_t key, uint64_t addr, uint64_t size, uint32_t kind, uint32_t flags,
			    const char *name)
{
	if (!addr || !cap_lock_rec())
		return;
	rec_alloc_locked(key, addr, size, kind, flags, name);
	cap_unlock();
}

static void rec_alloc(uint64_t key, uint64_t addr, uint64_t size, uint32_t kind, const char *name)
{
	rec_alloc_flags(key, addr, size, kind, 0, name);
}

/* A cuMemMap at ptr: TR_ALLOC_F_VMM_CONT when ptr lies past the start of
 * a range the program reserved (cuMemAddressReserve): the piece continues
 * the range below it (docs/FORMAT.md, "Mapped memory"). */
static uint32_t vmm_flags(uint64_t ptr)
{
	uint32_t f = 0;
	if (!cap_lock_rec())
		return 0;
	for (size_t i = 0; i < A.reserved.cap && !f; i++) {
		const struct cap_map_ent *e = &A.reserved.slot[i];
		if (e->key && e->key < ptr && ptr - e->key < e->v1)
			f = TR_ALLOC_F_VMM_CONT;
	}
	cap_unlock();
	return f;
}

int cap_put_global(uint64_t addr, uint64_t size, const char *name)
{
	if (!addr || cap_map_get(&A.globals, addr))
		return 0;
	rec_alloc(0, addr, size, TR_MEM_GLOBAL, name);
	return cap_map_get(&A.globals, addr) != NULL;
}

void cap_drop_global(uint64_t addr)
{
	uint64_t size = 0;
	if (cap_map_del(&A.globals, addr, &size, NULL)) {
		cap_known_del(addr, size);
		ckpt_on_free(addr);
	}
}

/* The FREE of the allocation recorded under key: its size, 0 when none
 * was. */
static uint64_t rec_free(uint64_t key)
{
	uint64_t addr = 0, kind = 0;
	struct tr_rec r;

	if (!key || !cap_lock_rec())
		return 0;
	if (cap_map_del(&A.live, key, &addr, &kind)) {
		cap_mm_del(addr);
		cap_known_del(addr, kind >> 8);
		memset(&r, 0, sizeof(r));
		r.type = TR_FREE;
		r.u.free.addr = addr;
		r.u.free.kind = (uint32_t)(kind & 0xff);
		cap_write_record(&r);
		ckpt_on_free(addr);
	}
	cap_unlock();
	return kind >> 8;
}

/* cuMemUnmap(ptr, size): a FREE for each mapping recorded in the range,
 * one after another from ptr (one call may unmap several pieces that were
 * mapped one by one, as an expandable segment maps them). */
static void rec_unmap(uint64_t ptr, uint64_t size)
{
	uint64_t at = ptr, len;
	while (at && at - ptr < size && (len = rec_free(at)))
		at += len;
}

/* Memory the GPU reads without copies (managed, mapped or registered host
 * memory): recorded, then its content tracked from launch to launch
 * (managed.c). */
static void rec_alloc_hostmem(const void *host, uint64_t addr, uint64_t size, uint32_t kind,
			      int user_pages)
{
	rec_alloc(kind == TR_MEM_MANAGED ? 0 : (uint64_t)(uintptr_t)host, addr, size, kind, NULL);
	if (!addr || !cap_lock_rec())
		return;
	if (kind != TR_MEM_MANAGED && size >= cap_mm_onuse_min())
		cap_mm_pinned(addr, host, size, user_pages);   /* large: hashed only where a launch points */
	else if (cap_mm_add(addr, host, size, user_pages) < 0)
		cap_note("%s memory at 0x%llx (%llu bytes) passes GPUREDUCE_HOSTMEM_MAX: the bytes the "
			    "CPU writes into it are not recorded", kind == TR_MEM_MANAGED ? "managed" : "mapped host",
			    (unsigned long long)addr, (unsigned long long)size);
	cap_unlock();
}

/* Plain pinned host memory (not mapped): recorded, and remembered so
 * that a launch pointing into it starts tracking its content (managed.c). */
static void rec_alloc_pinned(void *host, uint64_t addr, uint64_t size)
{
	rec_alloc((uint64_t)(uintptr_t)host, addr, size, TR_MEM_HOST, NULL);
	if (!addr || !cap_lock_rec())
		return;
	cap_mm_pinned(addr, host, size, 0);
	cap_unlock();
}

/* Device memory another process or API writes (CUDA IPC, an imported
 * pool pointer or VMM handle, external memory, a mapped graphics
 * resource): recorded, named by the call that brought it in, and read back
 * before the launches that point into it (managed.c). */
static void rec_alloc_peer(uint64_t addr, uint64_t size, uint32_t kind, const char *how)
{
	rec_alloc(addr, addr, size, kind, how);
	if (!addr || !size || !cap_lock_rec())
		return;
	cap_mm_peer(addr, size);
	cap_unlock();
}

/* The bytes from p to the end of its allocation, as the driver tells it
 * (0 if unknown). */
static uint64_t alloc_size_at(CUdeviceptr p)
{
	uint64_t base, size;
	return cap_alloc_range(p, &base, &size) ? base + size - p : 0;
}

/* Pinned host memory as the GPU addresses it, or the host pointer. */
static uint64_t host_dev_addr(void *p)
{
	CUdeviceptr d = 0;
	if (cuMemHostGetDevicePointer(&d, p, 0) == CUDA_SUCCESS && d)
		return d;
	return (uint64_t)(uintptr_t)p;
}

/* A module variable the program asked for (cuModuleGetGlobal,
 * cuLibraryGetGlobal): its size as the call gave it (given), else as
 * capture asked for it again (asked; 0 when that failed). */
static void rec_global(const CUdeviceptr *dptr, const size_t *given, size_t asked, const char *name)
{
	if (dptr)
		rec_alloc(0, *dptr, given ? *given : asked, TR_MEM_GLOBAL, name);
}

void cap_alloc_exit(CUpti_CallbackId cbid, const void *p)
{
	switch (cbid) {
	case CB(cuMemAlloc_v2): {
		const cuMemAlloc_v2_params *q = p;
		if (q->dptr)
			rec_alloc(0, *q->dptr, q->bytesize, TR_MEM_DEVICE, NULL);
		break;
	}
	case CB(cuMemAllocPitch_v2): {
		const cuMemAllocPitch_v2_params *q = p;
		if (q->dptr && q->pPitch)
			rec_alloc(0, *q->dptr, (uint64_t)*q->pPitch * q->Height, TR_MEM_DEVICE, NULL);
		break;
	}
	case CB(cuMemAllocManaged): {
		const cuMemAllocManaged_params *q = p;
		if (q->dptr)
			rec_alloc_hostmem((const void *)(uintptr_t)*q->dptr, *q->dptr, q->bytesize,
					  TR_MEM_MANAGED, 0);
		break;
	}
	case CB(cuMemAllocAsync): case CB(cuMemAllocAsync_ptsz): {
		const cuMemAllocAsync_params *q = p;
		if (q->dptr)
			rec_alloc(0, *q->dptr, q->bytesize, TR_MEM_ASYNC, NULL);
		break;
	}
	case CB(cuMemAllocFromPoolAsync): case CB(cuMemAllocFromPoolAsync_ptsz): {
		const cuMemAllocFromPoolAsync_params *q = p;
		if (q->dptr)
			rec_alloc(0, *q->dptr, q->bytesize, TR_MEM_ASYNC, NULL);
		break;
	}
	case CB(cuMemAllocHost_v2): {
		const cuMemAllocHost_v2_params *q = p;
		if (q->pp && *q->pp)
			rec_alloc_pinned(*q->pp, host_dev_addr(*q->pp), q->bytesize);
		break;
	}
	case CB(cuMemHostAlloc): {
		const cuMemHostAlloc_params *q = p;
		if (q->pp && *q->pp && (q->Flags & CU_MEMHOSTALLOC_DEVICEMAP))
			rec_alloc_hostmem(*q->pp, host_dev_addr(*q->pp), q->bytesize, TR_MEM_HOST, 0);
		else if (q->pp && *q->pp)
			rec_alloc_pinned(*q->pp, host_dev_addr(*q->pp), q->bytesize);
		break;
	}
	case CB(cuMemHostRegister_v2): case CB(cuMemHostRegister): {
		const cuMemHostRegister_v2_params *q = p;
		if (q->p)
			rec_alloc_hostmem(q->p, host_dev_addr(q->p), q->bytesize, TR_MEM_HOST, 1);
		break;
	}
	case CB(cuMemMap): {
		const cuMemMap_params *q = p;
		int imported = 0;
		if (cap_lock_rec()) {
			imported = cap_map_get(&A.imported, (uint64_t)q->handle) != NULL;
			cap_unlock();
		}
		if (imported)
			rec_alloc_peer(q->ptr, q->size, TR_MEM_VMM, "cuMemImportFromShareableHandle");
		else
			rec_alloc_flags(q->ptr, q->ptr, q->size, TR_MEM_VMM, vmm_flags(q->ptr), NULL);
		break;
	}
	case CB(cuMemAddressReserve): {
		const cuMemAddressReserve_params *q = p;
		if (q->ptr && *q->ptr && q->size && cap_lock_rec()) {
			cap_map_put(&A.reserved, (uint64_t)*q->ptr, q->size, 0);
			cap_unlock();
		}
		break;
	}
	case CB(cuIpcOpenMemHandle): case CB(cuIpcOpenMemHandle_v2): {
		const cuIpcOpenMemHandle_v2_params *q = p;
		if (q->pdptr && *q->pdptr)
			rec_alloc_peer(*q->pdptr, alloc_size_at(*q->pdptr), TR_MEM_DEVICE, "cuIpcOpenMemHandle");
		break;
	}
	case CB(cuMemPoolImportPointer): {
		const cuMemPoolImportPointer_params *q = p;
		if (q->ptr_out && *q->ptr_out)
			rec_alloc_peer(*q->ptr_out, alloc_size_at(*q->ptr_out), TR_MEM_ASYNC,
				       "cuMemPoolImportPointer");
		break;
	}
	case CB(cuExternalMemoryGetMappedBuffer): {
		const cuExternalMemoryGetMappedBuffer_params *q = p;
		if (q->devPtr && *q->devPtr && q->bufferDesc)
			rec_alloc_peer(*q->devPtr, q->bufferDesc->size, TR_MEM_DEVICE, "cuExternalMemoryGetMappedBuffer");
		break;
	}
	case CB(cuGraphicsResourceGetMappedPointer_v2): {
		const cuGraphicsResourceGetMappedPointer_v2_params *q = p;
		if (!q->pDevPtr || !*q->pDevPtr)
			break;
		rec_alloc_peer(*q->pDevPtr, q->pSize ? *q->pSize : alloc_size_at(*q->pDevPtr), TR_MEM_DEVICE,
			       "cuGraphicsResourceGetMappedPointer");
		if (cap_lock_rec()) {   /* freed when the resource is unmapped */
			cap_map_put(&A.gfx, (uint64_t)(uintptr_t)q->resource, *q->pDevPtr, 0);
			cap_unlock();
		}
		break;
	}
	case CB(cuMemImportFromShareableHandle): {
		const cuMemImportFromShareableHandle_params *q = p;
		if (q->handle && *q->handle && cap_lock_rec()) {
			cap_map_put(&A.imported, (uint64_t)*q->handle, 1, 0);
			cap_unlock();
		}
		break;
	}
	case CB(cuModuleGetGlobal_v2): {
		const cuModuleGetGlobal_v2_params *q = p;
		size_t bytes = 0;
		CUdeviceptr d = 0;
		if (q->dptr && !q->bytes && cuModuleGetGlobal(&d, &bytes, q->hmod, q->name) != CUDA_SUCCESS)
			bytes = 0;
		rec_global(q->dptr, q->bytes, bytes, q->name);
		break;
	}
	case CB(cuLibraryGetGlobal): {
		const cuLibraryGetGlobal_params *q = p;
		size_t bytes = 0;
		CUdeviceptr d = 0;
		if (q->dptr && !q->bytes && cuLibraryGetGlobal(&d, &bytes, q->library, q->name) != CUDA_SUCCESS)
			bytes = 0;
		rec_global(q->dptr, q->bytes, bytes, q->name);
		break;
	}
	default:
		break;
	}
}

int cap_free_enter(CUpti_CallbackId cbid, const void *p)
{
	switch (cbid) {
	case CB(cuMemFree_v2):
		rec_free(((const cuMemFree_v2_params *)p)->dptr);
		return 1;
	case CB(cuMemFreeAsync): case CB(cuMemFreeAsync_ptsz):
		rec_free(((const cuMemFreeAsync_params *)p)->dptr);
		return 1;
	case CB(cuMemFreeHost):
		rec_free((uint64_t)(uintptr_t)((const cuMemFreeHost_params *)p)->p);
		return 1;
	case CB(cuMemHostUnregister):
		rec_free((uint64_t)(uintptr_t)((const cuMemHostUnregister_params *)p)->p);
		return 1;
	case CB(cuMemUnmap):
		rec_unmap(((const cuMemUnmap_params *)p)->ptr, ((const cuMemUnmap_params *)p)->size);
		return 1;
	case CB(cuIpcCloseMemHandle):
		rec_free(((const cuIpcCloseMemHandle_params *)p)->dptr);
		return 1;
	case CB(cuGraphicsUnmapResources): case CB(cuGraphicsUnmapResources_ptsz): {
		const cuGraphicsUnmapResources_params *q = p;
		for (unsigned i = 0; q->resources && i < q->count; i++) {
			uint64_t dptr = 0;
			int had = 0;
			if (cap_lock_rec()) {
				had = cap_map_del(&A.gfx, (uint64_t)(uintptr_t)q->resources[i], &dptr, NULL);
				cap_unlock();
			}
			if (had)
				rec_free(dptr);
		}
		return 1;
	}
	case CB(cuMemAddressFree):
		if (cap_lock_rec()) {
			cap_map_del(&A.reserved, (uint64_t)((const cuMemAddressFree_params *)p)->ptr, NULL, NULL);
			cap_unlock();
		}
		return 1;
	case CB(cuMemRelease):
		if (cap_lock_rec()) {
			cap_map_del(&A.imported, (uint64_t)((const cuMemRelease_params *)p)->handle, NULL, NULL);
			cap_unlock();
		}
		return 1;
	default:
		return 0;
	}
}

void cap_alloc_found_locked(uint64_t addr, uint64_t size)
{
	rec_alloc_locked(addr, addr, size, TR_MEM_DEVICE, 0, "found at a launch");
}

uint64_t cap_alloc_count(void)
{
	return A.count;
}
