/*
 * emit-stored.c - repro.cu's device pointers stored in copied bytes: a
 * host-to-device copy whose words point into captured buffers (a table of
 * device pointers, a struct array) is written as captured, then each such
 * word is overwritten with the address of the repro's own buffer, as
 * replay relocates it (replay/engine.c do_h2d, the pointer-word rule of
 * addr/memmap.h).  Called by emit.c after each embedded copy.
 */
#include <stdio.h>
#include <string.h>

#include "../addr/memmap.h"
#include "../common/strbuf.h"
#include "emit-int.h"

#define MAX_LINES 4096   /* beyond: one loop-free line per word is too much text; said */

struct stored {
	struct strbuf *o;
	int id;
	uint64_t off;
	size_t n;
};

static int one(struct mm_alloc *a, size_t k, uint64_t v, int dead, void *arg)
{
	struct stored *S = arg;
	if (S->n++ >= MAX_LINES)
		return 0;
	sb_addf(S->o, "\t{ CUdeviceptr p_ = buf[%d].ptr + %lld; SETUP(cuMemcpyHtoD(buf[%d].ptr + %llu, &p_, 8)); }"
		"   /* a stored pointer: captured 0x%llx%s */\n",
		(int)(intptr_t)a->user - 1, (long long)(v - a->addr), S->id,
		(unsigned long long)(S->off + k), (unsigned long long)v, dead ? ", a FREED buffer" : "");
	return 0;
}

size_t emit_stored_ptrs(struct strbuf *o, const struct memmap *mm, int id, uint64_t off, uint64_t dst,
			const uint8_t *data, size_t len)
{
	struct stored S = { o, id, off, 0 };
	memmap_scan_words(mm, data, len, memmap_first_aligned(dst), one, &S);
	if (S.n > MAX_LINES)
		sb_addf(o, "\t/* %zu more stored pointers in this copy were not relocated */\n", S.n - MAX_LINES);
	return S.n;
}
