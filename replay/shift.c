/*
 * shift.c - shifted placement for relocation tests (see shift.h).
 */
#include <stdlib.h>
#include <string.h>

#include "../common/util.h"
#include "shift.h"

void shift_init(struct shift *s)
{
	const char *e = getenv("GPUREDUCE_SHIFT");
	memset(s, 0, sizeof(*s));
	s->on = e && !strcmp(e, "1");
}

void shift_pad(struct shift *s, const struct place_vmm *v, uint64_t gran)
{
	uint64_t g = gran ? gran : (2ull << 20);
	size_t size = (size_t)((2 * (s->placed % 4) + 1) * g + g);
	CUdeviceptr p = 0;
	int alloc = 0;

	if (!s->on)
		return;
	s->placed++;
	if (!v->MemAddressReserve || v->MemAddressReserve(&p, size, (size_t)g, 0, 0) != CUDA_SUCCESS) {
		p = 0;
		if (!v->MemAlloc || v->MemAlloc(&p, size) != CUDA_SUCCESS)
			return;
		alloc = 1;
	}
	ALLOC_GROW(s->pad, s->n + 1, s->alloc);
	s->pad_size = xrealloc(s->pad_size, s->alloc * sizeof(*s->pad_size));
	s->pad_alloc = xrealloc(s->pad_alloc, s->alloc * sizeof(*s->pad_alloc));
	s->pad[s->n] = p;
	s->pad_size[s->n] = size;
	s->pad_alloc[s->n] = alloc;
	s->n++;
}

int shift_collides(const struct shift *s, const struct pl_buf *b, uint64_t addr, uint64_t size)
{
	return s->on && b->ptr <= addr + size && addr <= b->ptr + size;
}

void shift_release(struct shift *s, const struct place_vmm *v)
{
	for (size_t i = 0; i < s->n; i++) {
		if (s->pad_alloc[i])
			v->MemFree(s->pad[i]);
		else if (v->MemAddressFree)
			v->MemAddressFree(s->pad[i], s->pad_size[i]);
	}
	free(s->pad);
	free(s->pad_size);
	free(s->pad_alloc);
	memset(s, 0, sizeof(*s));
}
