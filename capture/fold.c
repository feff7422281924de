/*
 * fold.c - folding communication kernels away (issue 25, docs/MULTI-RANK.md).
 *
 * A rank's trace must replay on one GPU without its peers, but an NCCL
 * kernel (or any kernel named in GPUREDUCE_FOLD_KERNELS) waits for them.
 * Capture runs with CUDA_LAUNCH_BLOCKING=1, so when such a launch returns
 * it has finished and its effect on this rank is in device memory.  So:
 *
 *   enter  the launch is recognised by its kernel name; every 8-byte word
 *          of its parameter bytes that points into device memory
 *          (cuMemGetAddressRange) names a range [word, end of that
 *          allocation), at most GPUREDUCE_FOLD_MAX bytes; those ranges are
 *          read (the "before" bytes).  The LAUNCH record gets TR_F_FOLDED.
 *   exit   the ranges are read again, and every run of bytes that changed
 *          becomes an H2D copy flagged TR_F_FOLDED, right after the LAUNCH.
 *
 * NCCL 2.19+ passes its work descriptors (ncclDevWorkColl: sendbuff,
 * recvbuff) inline in the kernel's parameter bytes, so the output buffer is
 * among the words; so are pointers into NCCL's own state (the comm, its
 * FIFOs), whose changes are recorded too (harmless: replay never launches
 * a kernel that would read them).  Replay, shrink and repro.cu never
 * launch a TR_F_FOLDED launch; they apply the copies after it.
 *
 * The pending fold lives in a thread-local: a blocking launch's enter and
 * exit callbacks come on the same thread, with nothing of ours between.
 * All calls here are made with inject.c's lock held (the driver calls we
 * make do not reach our callbacks: t_busy is set).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>

#include "../common/util.h"
#include "capture.h"

#define FOLD_MAX_RANGES 32
#define FOLD_GAP 32      /* changed runs closer than this become one copy */

struct range {
	uint64_t addr, len;
	uint8_t *before;
};

struct pending {
	int active;
	uint64_t seq;
	char name[256];
	size_t n;
	struct range r[FOLD_MAX_RANGES];
	uint64_t capped;      /* bytes past GPUREDUCE_FOLD_MAX not compared */
};

static __thread struct pending Pend;

static uint64_t fold_max(void)
{
	static uint64_t v;
	if (!v) {
		const char *s = getenv("GPUREDUCE_FOLD_MAX");
		v = s && *s ? strtoull(s, NULL, 0) : 0;
		if (!v)
			v = 256ull << 20;
	}
	return v;
}

/* name matches pat: literal, or a prefix when pat ends in '*'. */
static int name_matches(const char *name, const char *pat, size_t plen)
{
	if (plen && pat[plen - 1] == '*')
		return !strncmp(name, pat, plen - 1);
	return strlen(name) == plen && !strncmp(name, pat, plen);
}

/* Other libraries' kernels that exchange data with peer processes through
 * memory they share (CUDA IPC, symmetric or multicast memory) and wait for
 * them: launched alone they would spin for ever.  Matched anywhere in the
 * name, mangled or not. */
static const char *const peer_kernels[] = {
	"cross_device_reduce",   /* vLLM's and SGLang's custom all-reduce */
	"oneShotAllReduce", "twoShotAllReduce", "lamport",   /* TensorRT-LLM's all-reduce */
	"symmetric_memory",      /* PyTorch's c10d::symmetric_memory collectives */
	"nvshmem",               /* NVSHMEM's own kernels */
	"deep_ep",               /* DeepEP's expert-parallel dispatch and combine */
	"mscclpp",               /* MSCCL++ */
};

int cap_fold_is_comm(const char *name)
{
	const char *list = getenv("GPUREDUCE_FOLD_KERNELS");

	if (!name || !*name)
		return 0;
	/* NCCL's device kernels: ncclKernel_* (<2.19), ncclDevKernel_* (2.19+),
	 * ncclDevFunc_*; also when they are C++-mangled (_Z..nccl...) */
	if (!strncmp(name, "nccl", 4) || (!strncmp(name, "_Z", 2) && strstr(name, "ncclDevKernel")) ||
	    (!strncmp(name, "_Z", 2) && strstr(name, "ncclKernel")))
		return 1;
	for (size_t i = 0; i < sizeof(peer_kernels) / sizeof(peer_kernels[0]); i++)
		if (strstr(name, peer_kernels[i]))
			return 1;
	while (list && *list) {
		const char *end = strchr(list, ',');
		size_t len = end ? (size_t)(end - list) : strlen(list);
		if (len && name_matches(name, list, len))
			return 1;
		list = end ? end + 1 : NULL;
	}
	return 0;
}

static void pending_release(void)
{
	if (!Pend.active && !Pend.n)
		return;   /* the common case: 1.1 KiB not cleared at every launch */
	for (size_t i = 0; i < Pend.n; i++)
		free(Pend.r[i].before);
	memset(&Pend, 0, sizeof(Pend));
}

/* Add [p, end of its allocation) unless a range already covers p. */
static void add_range(uint64_t p)
{
	uint64_t base = 0, size = 0, len;

	for (size_t i = 0; i < Pend.n; i++)
		if (p >= Pend.r[i].addr && p < Pend.r[i].addr + Pend.r[i].len)
			return;
	if (Pend.n >= FOLD_MAX_RANGES || !p || !cap_alloc_range(p, &base, &size))
		return;
	len = base + size - p;
	/* a range already taken further on in the same allocation (sendbuff
	 * before recvbuff in one caching-allocator segment): stop before it */
	for (size_t i = 0; i < Pend.n; i++)
		if (Pend.r[i].addr > p && Pend.r[i].addr < p + len)
			len = Pend.r[i].addr - p;
	if (len > fold_max()) {
		Pend.capped += len - fold_max();
		len = fold_max();
	}
	Pend.r[Pend.n].addr = p;
	Pend.r[Pend.n].len = len;
	Pend.r[Pend.n].before = malloc(len);
	if (!Pend.r[Pend.n].before || cuMemcpyDtoH(Pend.r[Pend.n].before, (CUdeviceptr)p, len) != CUDA_SUCCESS) {
		free(Pend.r[Pend.n].before);
		Pend.r[Pend.n].before = NULL;
		return;
	}
	Pend.n++;
}

uint32_t cap_fold_enter(const char *name, uint64_t seq, const uint8_t *args, uint32_t argsize, int captured)
{
	pending_release();
	if (!cap_fold_is_comm(name))
		return 0;
	if (captured) {
		cap_note("communication kernel %s at launch #%llu is captured into a CUDA graph: its effect "
			 "is not recorded (fold covers eager launches only); replay will not launch it",
			 name, (unsigned long long)seq);
		return TR_F_FOLDED;
	}
	Pend.active = 1;
	Pend.seq = seq;
	snprintf(Pend.name, sizeof(Pend.name), "%s", name);
	for (uint32_t off = 0; off + 8 <= argsize; off += 8) {
		uint64_t w;
		memcpy(&w, args + off, 8);
		if (w >= 0x10000)
			add_range(w);
	}
	if (!Pend.n)
		cap_note("communication kernel %s at launch #%llu: no parameter word points into device memory "
			 "it could read; its effect is not recorded (replay will not launch it)",
			 name, (unsigned long long)seq);
	return TR_F_FOLDED;
}

/* Emit the changed runs of range g as folded H2D copies. */
static void emit_changes(const struct range *g, const uint8_t *after, uint64_t *bytes, uint32_t *copies)
{
	uint64_t i = 0;

	while (i < g->len) {
		uint64_t start, end, gap;
		while (i < g->len && g->before[i] == after[i])
			i++;
		if (i >= g->len)
			break;
		start = i;
		end = i + 1;
		for (gap = 0, i++; i < g->len && gap < FOLD_GAP; i++) {
			if (g->before[i] != after[i]) {
				end = i + 1;
				gap = 0;
			} else {
				gap++;
			}
		}
		i = end;
		if (cap_emit_fold_copy(g->addr + start, after + start, end - start) >= 0) {
			*bytes += end - start;
			(*copies)++;
		}
	}
}

void cap_fold_exit(int ok)
{
	uint64_t bytes = 0;
	uint32_t copies = 0, unread = 0;

	if (!Pend.active)
		return;
	if (!ok) {
		pending_release();
		return;
	}
	for (size_t i = 0; i < Pend.n; i++) {
		uint8_t *after = malloc(Pend.r[i].len);
		if (after && cuMemcpyDtoH(after, (CUdeviceptr)Pend.r[i].addr, Pend.r[i].len) == CUDA_SUCCESS)
			emit_changes(&Pend.r[i], after, &bytes, &copies);
		else
			unread++;
		free(after);
	}
	if (unread || Pend.capped)
		cap_note("communication kernel %s at launch #%llu: %u range(s) could not be read back and "
			 "%llu bytes past GPUREDUCE_FOLD_MAX were not compared; the fold may miss bytes it wrote",
			 Pend.name, (unsigned long long)Pend.seq, unread, (unsigned long long)Pend.capped);
	(void)bytes;
	(void)copies;
	pending_release();
}

int cap_fold_pending(void)
{
	return Pend.active;
}
