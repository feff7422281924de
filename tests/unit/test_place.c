/*
 * test_place.c - placement (replay/place_core.inc): the text every repro.cu
 * embeds is the file replay compiles, the layout range arithmetic, and the
 * layout mode's granule sharing against a mock driver that records what is
 * mapped.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/strbuf.h"
#include "../../common/util.h"
#include "../../replay/place.h"
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
#include "../../replay/place_core.inc"

UNIT_TEST(place_core_text_is_the_compiled_file)
{
	struct strbuf f = STRBUF_INIT, e = STRBUF_INIT;
	CHECK(read_file("replay/place_core.inc", &f, &e) == 0);
	CHECK(f.len > 1000);
	CHECK(f.len == strlen(place_core_text));
	CHECK(f.buf && !strcmp(f.buf, place_core_text));
	sb_release(&f);
	sb_release(&e);
}

UNIT_TEST(place_layout_plan_span_and_margins)
{
	const uint64_t G = 2ull << 20;
	uint64_t o = 0, r = 0;
	/* two buffers 4 GiB + 2 MiB apart: span rounded to granules, a margin
	 * as large as the span on each side */
	CHECK(place_layout_plan(0x7f0000100000ull, 0x7f0100300010ull, G, &o, &r) == 0);
	CHECK_EQ_U(r, 3 * (0x7f0100400000ull - 0x7f0000000000ull));
	CHECK_EQ_U(o, 0x7f0000000000ull - (0x7f0100400000ull - 0x7f0000000000ull));
	/* a small span still gets one granule of margin */
	CHECK(place_layout_plan(0x7f0000000100ull, 0x7f0000000200ull, G, &o, &r) == 0);
	CHECK_EQ_U(r, 3 * G);
	CHECK_EQ_U(o, 0x7f0000000000ull - G);
	/* margins are capped; spans over the limit are refused */
	CHECK(place_layout_plan(0x100000000000ull, 0x100000000000ull + (200ull << 30), G, &o, &r) == 0);
	CHECK_EQ_U(r, (200ull << 30) + 2 * PL_LAYOUT_MAX_MARGIN);
	CHECK(place_layout_plan(0x100000000000ull, 0x100000000000ull + PL_LAYOUT_MAX_SPAN + G, G, &o, &r) < 0);
	CHECK(place_layout_plan(0x1000, 0x1000, G, &o, &r) < 0);
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
}
