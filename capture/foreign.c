/*
 * foreign.c - device memory no recorded call brought in, found where a
 * kernel is given a pointer to it (see capture.h).
 *
 * Capture records memory as the program gets it: cuMemAlloc, pools, VMM,
 * host memory, IPC and interop calls.  Some device memory comes by paths
 * it does not hook (a video decoder's frames, a library that allocated
 * before the injection was armed, a call added to CUDA after this was
 * written).  A kernel given a pointer into such memory used to be replayed
 * with the pointer as captured, pointing at nothing, and faulted there
 * (or ran clean) where the program did neither.
 *
 * So every launch's argument bytes are looked at word by word (8-byte
 * aligned, by-value structs included): a word between 4 GiB and 2^48 whose
 * 2 MiB region holds no recorded allocation, and that the driver has not
 * already said is not device memory, is asked of the driver
 * (cuMemGetAddressRange).  When the driver knows an allocation there, the
 * caller records it (an ALLOC named "found at a launch") and treats it as
 * memory another process writes (managed.c's peer rule: read back before
 * each launch that points into it).
 *
 * What keeps it cheap on the common path, where every pointer is known:
 * a count per 2 MiB region of the recorded allocations (64 Ki counters,
 * hashed; a collision only hides a region, never invents one), mirrored
 * in a bit per counter that a word's test reads (8 KiB, so the test stays
 * in the first-level cache), and a set of the regions the driver said
 * hold no device memory (open addressing, 64 Ki slots of 32 bits, kept at
 * most half full).  Most words it holds are not addresses at all but two
 * 32-bit fields side by side (a size and a count), a few thousand distinct
 * ones in a training step; a table that forgot some of them would ask the
 * driver about them again at every step (on the H200's host-fed loop, a
 * direct-mapped table indexed by the region's low bits cost 15 us a launch
 * in driver queries).  No launch asks the driver more than four times,
 * and when the set is half full the scan stops for the run (a note says
 * so).  A training step launches the same kernels with the same argument
 * bytes again, and the optimizer's multi-tensor kernels pass several KiB of
 * them (0.5 us a launch of scanning on the H200's host-fed loop): a block
 * of 256 bytes or more that was scanned clean (nothing found, nothing
 * asked) is remembered by its hash (XXH3, 1024 slots) with the number of
 * recorded allocations made or freed so far, and the same bytes are not
 * scanned again until an allocation comes or goes.
 *
 * A region that held a recorded allocation that was then freed is never
 * looked at again (a bit per counter, set for good): a use after free
 * points there, and the driver may still know the range (a pool keeps it
 * mapped), but the program's bug must stay a bug in replay, not become
 * memory found and read back.  An allocation spanning more than 64 Ki
 * regions (128 GiB) turns the scan off: every word then counts as known.
 * Callers hold inject.c's lock.
 */
#include <string.h>

#include <cuda.h>

#include "../trace/trace.h"
#include "capture.h"

enum {
	REGION_SHIFT = 21,
	KNOWN_BITS = 16,
	NEG_BITS = 16,
	NEG_SLOTS = 1 << NEG_BITS,
	ASKS_PER_LAUNCH = 4,
	NEG_MAX = NEG_SLOTS / 2,
	MEMO_SLOTS = 1024,
	MEMO_MIN = 256,                 /* argument bytes worth hashing first */
};

#define WORD_LO ((uint64_t)1 << 32)
#define WORD_HI ((uint64_t)1 << 48)

static struct {
	uint32_t known[1u << KNOWN_BITS];
	uint64_t known_bit[(1u << KNOWN_BITS) / 64];   /* known[i] != 0 */
	uint64_t freed_bit[(1u << KNOWN_BITS) / 64];   /* a recorded allocation was freed there */
	uint32_t neg[NEG_SLOTS];        /* set of region + 1 the driver said is not device
					 * memory (regions of words below 2^48 fit in 27 bits) */
	uint32_t wide;                  /* recorded allocations too wide to count */
	uint32_t refused;               /* members of neg */
	uint64_t gen;                   /* recorded allocations made or freed */
	struct { uint64_t hash, gen; } memo[MEMO_SLOTS];   /* blocks scanned clean at gen */
	int off;                        /* GPUREDUCE_FOREIGN=0 */
	int off_read;
} F;

int cap_alloc_range(uint64_t p, uint64_t *base, uint64_t *size)
{
	CUdeviceptr b = 0;
	size_t n = 0;

	if (cuMemGetAddressRange(&b, &n, (CUdeviceptr)p) != CUDA_SUCCESS || !n || p < b || p - b >= n)
		return 0;
	*base = b;
	*size = n;
	return 1;
}

static unsigned known_slot(uint64_t region)
{
	return (unsigned)((region * 0x9E3779B97F4A7C15ull) >> (64 - KNOWN_BITS));
}

static void count_regions(uint64_t addr, uint64_t size, int delta)
{
	uint64_t first, last;

	if (!size || addr + size < addr)
		return;
	F.gen++;
	first = addr >> REGION_SHIFT;
	last = (addr + size - 1) >> REGION_SHIFT;
	if (last - first >= (1u << KNOWN_BITS)) {
		F.wide += (uint32_t)delta;
		return;
	}
	for (uint64_t r = first; r <= last; r++) {
		unsigned k = known_slot(r);
		F.known[k] += (uint32_t)delta;
		if (F.known[k])
			F.known_bit[k / 64] |= 1ull << (k % 64);
		else
			F.known_bit[k / 64] &= ~(1ull << (k % 64));
		if (delta < 0)
			F.freed_bit[k / 64] |= 1ull << (k % 64);
	}
}

void cap_known_add(uint64_t addr, uint64_t size)
{
	count_regions(addr, size, 1);
}

void cap_known_del(uint64_t addr, uint64_t size)
{
	count_regions(addr, size, -1);
}

/* The slot of region in the set neg: its own, or the empty one it would take. */
static unsigned neg_slot(uint32_t region)
{
	unsigned i = (region * 0x9E3779B1u) >> (32 - NEG_BITS);
	while (F.neg[i] && F.neg[i] != region + 1)
		i = (i + 1) & (NEG_SLOTS - 1);
	return i;
}

static int scan_off(void)
{
	if (!F.off_read) {
		F.off = cap_env_u64("GPUREDUCE_FOREIGN", 1) == 0;
		F.off_read = 1;
	}
	return F.off || F.wide;
}

size_t cap_foreign_scan(const uint8_t *args, uint32_t argsize, uint64_t hash, struct cap_foreign *out,
			size_t max)
{
	size_t got = 0;
	int asks = 0;

	if (!args || scan_off())
		return 0;
	if (argsize < MEMO_MIN)
		hash = 0;   /* small blocks are scanned each time, never memoised */
	else {
		if (!hash)
			hash = tr_hash(args, argsize);
		if (F.memo[hash % MEMO_SLOTS].hash == hash && F.memo[hash % MEMO_SLOTS].gen == F.gen + 1)
			return 0;
	}
	for (uint32_t off = 0; off + 8 <= argsize && got < max; off += 8) {
		uint64_t w;
		if ((off & 31) == 0 && off + 32 <= argsize) {
			/* four words at a time, branch-free: most are sizes,
			 * strides, zeros and floats, outside the range */
			uint64_t q[4];
			memcpy(q, args + off, sizeof(q));
			if (!((q[0] - WORD_LO < WORD_HI - WORD_LO) | (q[1] - WORD_LO < WORD_HI - WORD_LO) |
			      (q[2] - WORD_LO < WORD_HI - WORD_LO) | (q[3] - WORD_LO < WORD_HI - WORD_LO))) {
				off += 24;
				continue;
			}
		}
		uint32_t region;
		unsigned k, slot;
		uint64_t base = 0, size = 0;
		memcpy(&w, args + off, 8);
		if (w - WORD_LO >= WORD_HI - WORD_LO)
			continue;
		region = (uint32_t)(w >> REGION_SHIFT);
		k = known_slot(region);
		if ((F.known_bit[k / 64] | F.freed_bit[k / 64]) >> (k % 64) & 1)
			continue;
		slot = neg_slot(region);
		if (F.neg[slot])
			continue;
		if (asks++ >= ASKS_PER_LAUNCH)
			break;
		if (!cap_alloc_range(w, &base, &size)) {
			F.neg[slot] = region + 1;
			if (++F.refused >= NEG_MAX) {
				F.off = 1;
				cap_note("capture stopped looking for device memory no recorded call allocated: "
					 "%u argument words that were not device addresses were asked about",
					 F.refused);
				break;
			}
			continue;
		}
		out[got++] = (struct cap_foreign){ base, size, off };
		cap_known_add(base, size);   /* the caller records it: known from now */
	}
	if (hash && !got && !asks) {
		F.memo[hash % MEMO_SLOTS].hash = hash;
		F.memo[hash % MEMO_SLOTS].gen = F.gen + 1;   /* (0: an empty slot) */
	}
	return got;
}
