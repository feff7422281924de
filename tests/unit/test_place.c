/*
 * test_place.c - placement (addr/place_core.inc; test_core_text.c checks
 * that the text every repro.cu embeds is the file replay compiles): the
 * layout range arithmetic, the layout mode's granule sharing against a
 * mock driver that records what is mapped, and guard placement as gpureduce compiles it (addr/place.c, the
 * driver reached through a struct place_vmm).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/strbuf.h"
#include "../../common/util.h"
#include "../../addr/place.h"
#include "unit.h"

/* ---- a mock driver: reservations at a fixed base, mappings counted ---- */
static int mock_maps, mock_creates, mock_reserves;
static unsigned long long mock_mapped;      /* bytes mapped now */
static CUresult mock_MemCreate(CUmemGenericAllocationHandle *h, size_t n, const CUmemAllocationProp *p,
			       unsigned long long f)
{
	(void)p; (void)f;
	*h = (CUmemGenericAllocationHandle)n;
	mock_creates++;
	return CUDA_SUCCESS;
}
static CUresult mock_MemMap(CUdeviceptr at, size_t n, size_t off, CUmemGenericAllocationHandle h,
			    unsigned long long f)
{
	(void)at; (void)off; (void)h; (void)f;
	mock_maps++;
	mock_mapped += n;
	return CUDA_SUCCESS;
}
static CUresult mock_MemUnmap(CUdeviceptr at, size_t n)
{
	(void)at;
	mock_maps--;
	mock_mapped -= n;
	return CUDA_SUCCESS;
}
static CUresult mock_MemRelease(CUmemGenericAllocationHandle h) { (void)h; mock_creates--; return CUDA_SUCCESS; }
static CUresult mock_MemSetAccess(CUdeviceptr at, size_t n, const CUmemAccessDesc *d, size_t c)
{
	(void)at; (void)n; (void)d; (void)c;
	return CUDA_SUCCESS;
}
static CUresult mock_MemAddressReserve(CUdeviceptr *p, size_t n, size_t a, CUdeviceptr hint, unsigned long long f)
{
	(void)n; (void)a; (void)hint; (void)f;
	*p = 0x100000000000ull;
	mock_reserves++;
	return CUDA_SUCCESS;
}
static CUresult mock_MemAddressFree(CUdeviceptr p, size_t n) { (void)p; (void)n; mock_reserves--; return CUDA_SUCCESS; }
static CUresult mock_MemAlloc(CUdeviceptr *p, size_t n) { (void)n; *p = 0x200000000000ull; return CUDA_SUCCESS; }
static CUresult mock_MemFree(CUdeviceptr p) { (void)p; return CUDA_SUCCESS; }

#define PL_CALL(f) mock_##f
#include "../../common/cuerr.h"
#include "../../addr/place_core.inc"

UNIT_TEST(place_layout_plan_span_and_margins)
{
	const uint64_t G = 2ull << 20, M = 32ull << 30;
	uint64_t o = 0, r = 0;
	/* two buffers 4 GiB + 2 MiB apart: span rounded to granules, 32 GiB of
	 * margin on each side, whatever the span */
	CHECK(place_layout_plan(0x7f0000100000ull, 0x7f0100300010ull, G, &o, &r) == 0);
	CHECK_EQ_U(r, (0x7f0100400000ull - 0x7f0000000000ull) + 2 * M);
	CHECK_EQ_U(o, 0x7f0000000000ull - M);
	CHECK_EQ_U(PL_LAYOUT_MARGIN, M);
	/* a small span gets the same margin: a walk 1 GiB past a 256-byte
	 * buffer lands in the reservation, unmapped */
	CHECK(place_layout_plan(0x7f0000000100ull, 0x7f0000000200ull, G, &o, &r) == 0);
	CHECK_EQ_U(r, G + 2 * M);
	CHECK_EQ_U(o, 0x7f0000000000ull - M);
	CHECK(0x7f0000000200ull + (1ull << 30) < o + r);
	/* a big span too; spans over the limit are refused */
	CHECK(place_layout_plan(0x100000000000ull, 0x100000000000ull + (200ull << 30), G, &o, &r) == 0);
	CHECK_EQ_U(r, (200ull << 30) + 2 * M);
	CHECK(place_layout_plan(0x100000000000ull, 0x100000000000ull + PL_LAYOUT_MAX_SPAN + G, G, &o, &r) < 0);
	CHECK(place_layout_plan(0x1000, 0x1000, G, &o, &r) < 0);
	/* near address 0 the margin below is what there is */
	CHECK(place_layout_plan(0x10000000ull, 0x10000100ull, G, &o, &r) == 0);
	CHECK_EQ_U(o, 0);
}

UNIT_TEST(place_layout_maps_shared_granules_once)
{
	const unsigned long long G = 2ull << 20, A = 0x7f0000000000ull;
	struct pl_layout L;
	struct pl_buf a, b, c;

	mock_maps = mock_creates = mock_reserves = 0;
	mock_mapped = 0;
	CHECK(pl_layout_open(&L, A + 0x200, A + 3 * G + 100, G, 0) == CUDA_SUCCESS);
	/* a and b share granule 0 (small cudaMalloc blocks share pages) */
	CHECK(pl_layout_alloc(&L, &a, A + 0x200, 0x100) == CUDA_SUCCESS);
	CHECK(pl_layout_alloc(&L, &b, A + 0x400, 0x100) == CUDA_SUCCESS);
	CHECK_EQ_U(mock_maps, 1);
	CHECK_EQ_U(b.ptr - a.ptr, 0x200);          /* one delta for every pointer */
	CHECK_EQ_U(a.ptr - L.base, A + 0x200 - L.origin);
	/* c spans granules 0..3: only 1..3 are new */
	CHECK(pl_layout_alloc(&L, &c, A + 0x1000, 3 * G) == CUDA_SUCCESS);
	CHECK_EQ_U(mock_maps, 2);
	CHECK_EQ_U(mock_mapped, 4 * G);
	/* freeing a keeps granule 0 (b and c use it); freeing b too still does */
	pl_buf_unmap(&L, &a);
	pl_buf_unmap(&L, &b);
	CHECK_EQ_U(mock_mapped, 4 * G);
	/* freeing c unmaps everything: a stale pointer then faults */
	pl_buf_unmap(&L, &c);
	CHECK_EQ_U(mock_mapped, 0);
	CHECK_EQ_U(mock_maps, 0);
	/* outside the range: refused */
	CHECK(pl_layout_alloc(&L, &a, L.origin + L.reserve, 16) != CUDA_SUCCESS);
	pl_layout_close(&L);
	CHECK_EQ_U(mock_reserves, 0);
	CHECK_EQ_U(mock_creates, 0);
	(void)pl_guard_alloc;
	(void)pl_buf_destroy;
	/* buffers layout placement does not cover get guard placement (end);
	 * the other modes stay (the one rule, compiled and as pasted) */
	CHECK(pl_guard_mode(PL_LAYOUT) == PL_GUARD_END && place_guard_mode(GUARD_LAYOUT) == GUARD_END);
	CHECK(pl_guard_mode(PL_GUARD_START) == PL_GUARD_START && place_guard_mode(GUARD_NONE) == GUARD_NONE);
}

static CUresult mock_reserve_result = CUDA_SUCCESS;
static CUresult mock_MemAddressReserveMaybe(CUdeviceptr *p, size_t n, size_t a, CUdeviceptr hint,
					    unsigned long long f)
{
	if (mock_reserve_result != CUDA_SUCCESS)
		return mock_reserve_result;
	return mock_MemAddressReserve(p, n, a, hint, f);
}

/* gpureduce's compiled placement (addr/place.c), through a struct
 * place_vmm: guard placement lands against the guard, and only a VMM
 * failure short of a sticky error falls back to cuMemAlloc. */
UNIT_TEST(place_guard_alloc_through_vmm)
{
	const struct place_vmm v = {
		mock_MemAlloc, mock_MemFree, mock_MemAddressReserveMaybe, mock_MemAddressFree,
		mock_MemCreate, mock_MemRelease, mock_MemMap, mock_MemUnmap, mock_MemSetAccess,
	};
	const uint64_t G = 2ull << 20, addr = 0x7f0000000140ull, size = 1000;
	struct pl_placement p;
	struct pl_buf b;

	mock_maps = mock_creates = mock_reserves = 0;
	mock_mapped = 0;
	mock_reserve_result = CUDA_SUCCESS;
	CHECK(place_compute(size, addr, G, GUARD_END, &p) == 0);
	CHECK(place_guard_alloc(&v, &b, size, addr, G, GUARD_END, 0) == CUDA_SUCCESS);
	CHECK_EQ_U(b.how, PL_HOW_GUARD);
	CHECK_EQ_U(b.ptr, 0x100000000000ull + p.buf_off);
	CHECK_EQ_U(b.ptr % 256, addr % 256);               /* the captured alignment */
	CHECK(b.ptr + size <= b.base + p.map_off + p.map_size);
	CHECK(b.base + p.map_off + p.map_size - (b.ptr + size) < 256);   /* flush against the guard */
	CHECK_EQ_U(mock_maps, 1);
	place_buf_destroy(&v, NULL, &b);
	CHECK_EQ_U(mock_maps, 0);
	CHECK_EQ_U(mock_reserves, 0);
	CHECK_EQ_U(mock_creates, 0);

	/* no VMM (an ordinary error): plain cuMemAlloc */
	mock_reserve_result = CUDA_ERROR_NOT_SUPPORTED;
	CHECK(place_guard_alloc(&v, &b, size, addr, G, GUARD_END, 0) == CUDA_SUCCESS);
	CHECK_EQ_U(b.how, PL_HOW_ALLOC);
	CHECK_EQ_U(b.ptr, 0x200000000000ull);
	place_buf_destroy(&v, NULL, &b);
	/* a dead context: no fallback, the error comes back */
	mock_reserve_result = CUDA_ERROR_ILLEGAL_ADDRESS;
	CHECK(place_guard_alloc(&v, &b, size, addr, G, GUARD_END, 0) == CUDA_ERROR_ILLEGAL_ADDRESS);
	CHECK_EQ_U(b.how, PL_HOW_NONE);
	mock_reserve_result = CUDA_SUCCESS;
}
