/*
 * place.c - placement as gpureduce compiles it (see place.h): compiles
 * place_core.inc with its driver calls going through the entry points the
 * caller passes (struct place_vmm; replay fills it from its driver table).
 * Workers are single-threaded, so the table is kept in a file-level
 * pointer for the duration of each call.
 *
 * place_core.inc is also pasted verbatim into every repro.cu (the
 * Makefile turns common/cuerr.h and it into place_core_text, and
 * emit/emit.c adds it), so its comments speak to a repro's reader and
 * name no file of this tree (t6090 checks).
 */
#include <stdlib.h>
#include <string.h>

#include "../common/cuerr.h"
#include "../trace/trace.h"
#include "place.h"

static const struct place_vmm *pl_d;
#define PL_CALL(f) (pl_d->f)
#include "place_core.inc"

int place_compute(uint64_t size, uint64_t addr, uint64_t gran, int guard, struct pl_placement *p)
{
	return pl_guard_compute(size, addr, gran, guard, p);
}

int place_layout_plan(uint64_t lo, uint64_t hi, uint64_t gran, uint64_t *origin, uint64_t *reserve)
{
	unsigned long long o = 0, r = 0;
	int ret = pl_layout_plan(lo, hi, gran, &o, &r);
	*origin = o;
	*reserve = r;
	return ret;
}

int place_layout_kind(uint32_t kind)
{
	return kind == TR_MEM_DEVICE || kind == TR_MEM_VMM || kind == TR_MEM_ASYNC;
}

int place_guard_mode(int guard)
{
	return pl_guard_mode(guard);
}

int place_layout_span(const struct trace *t, size_t end, uint64_t *lo, uint64_t *hi)
{
	uint64_t a = UINT64_MAX, b = 0;
	for (size_t i = 0; i < end && i < t->nrec; i++) {
		const struct tr_rec *r = &t->rec[i];
		if (r->type != TR_ALLOC || !place_layout_kind(r->u.alloc.kind))
			continue;
		if (r->u.alloc.addr < a)
			a = r->u.alloc.addr;
		if (pl_span_end(r->u.alloc.addr, r->u.alloc.size) > b)
			b = pl_span_end(r->u.alloc.addr, r->u.alloc.size);
	}
	*lo = b > a ? a : 0;
	*hi = b > a ? b : 0;
	return b > a ? 0 : -1;
}

CUresult place_guard_alloc(const struct place_vmm *v, struct pl_buf *b, uint64_t size, uint64_t addr,
			   uint64_t gran, int guard, int dev)
{
	pl_d = v;
	return pl_guard_alloc(b, size, addr, gran, guard, dev);
}

CUresult place_layout_open(const struct place_vmm *v, struct pl_layout *L, uint64_t lo, uint64_t hi,
			   uint64_t gran, int dev)
{
	pl_d = v;
	return pl_layout_open(L, lo, hi, gran, dev);
}

CUresult place_layout_alloc(const struct place_vmm *v, struct pl_layout *L, struct pl_buf *b, uint64_t addr,
			    uint64_t size)
{
	pl_d = v;
	return pl_layout_alloc(L, b, addr, size);
}

void place_buf_unmap(const struct place_vmm *v, struct pl_layout *L, struct pl_buf *b)
{
	pl_d = v;
	pl_buf_unmap(L, b);
}

void place_buf_destroy(const struct place_vmm *v, struct pl_layout *L, struct pl_buf *b)
{
	pl_d = v;
	pl_buf_destroy(L, b);
}

void place_layout_close(const struct place_vmm *v, struct pl_layout *L)
{
	pl_d = v;
	pl_layout_close(L);
}

int place_parse_guard(const char *s)
{
	if (!strcmp(s, "end"))
		return GUARD_END;
	if (!strcmp(s, "start"))
		return GUARD_START;
	if (!strcmp(s, "none"))
		return GUARD_NONE;
	if (!strcmp(s, "layout"))
		return GUARD_LAYOUT;
	return -1;
}

const char *place_guard_name(int guard)
{
	return guard == GUARD_END ? "end" : guard == GUARD_START ? "start" :
	       guard == GUARD_LAYOUT ? "layout" : "none";
}
