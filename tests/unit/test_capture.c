/*
 * test_capture.c - CPU-testable parts of the capture library: the hash map
 * behind live allocations and caches (checked against a naive model through
 * random put/get/del runs with colliding keys), and the host-readability
 * probe that keeps capture from touching unmapped or PROT_NONE memory.
 * The library's .c files are included directly: they are not part of
 * libgpureduce.a (they build into libgpureduce-capture.so).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../../common/strbuf.h"
#include "../../capture/map.c"
#include "../../capture/hostmem.c"
#include "../../capture/drvver.c"
#include "../../capture/env.c"
#include "../../capture/managed.c"
#include "../../capture/foreign.c"
#include "../../capture/fold.c"
#include "unit.h"

/* managed.c's peer memory reads the device with cuMemCpyDtoH and notes
 * what it cannot read: here a "device address" is a host address, and a
 * read of the address in fail_dtoh fails. */
static uint64_t fail_dtoh;
static int notes;

CUresult cuMemcpyDtoH(void *dst, CUdeviceptr src, size_t n)
{
	if (src == fail_dtoh)
		return CUDA_ERROR_ILLEGAL_ADDRESS;
	memcpy(dst, (const void *)(uintptr_t)src, n);
	return CUDA_SUCCESS;
}

/* foreign.c asks the driver where an allocation lies: here one range,
 * and a count of the questions. */
static uint64_t fake_base, fake_size;
static int range_asks;

CUresult cuMemGetAddressRange(CUdeviceptr *base, size_t *size, CUdeviceptr p)
{
	range_asks++;
	if (p < fake_base || p - fake_base >= fake_size)
		return CUDA_ERROR_NOT_FOUND;
	*base = fake_base;
	*size = fake_size;
	return CUDA_SUCCESS;
}

long cap_emit_fold_copy(uint64_t dst, const void *bytes, uint64_t size)
{
	(void)dst;
	(void)bytes;
	(void)size;
	return 0;
}

void cap_note(const char *fmt, ...)
{
	(void)fmt;
	notes++;
}

#define MODEL_KEYS 300

UNIT_TEST(capture_map_model)
{
	struct cap_map m = CAP_MAP_INIT;
	uint64_t have[MODEL_KEYS] = { 0 }, val[MODEL_KEYS] = { 0 };
	unsigned seed = 12345, bad = 0;
	size_t live = 0;

	for (int op = 0; op < 200000; op++) {
		seed = seed * 1103515245u + 12345u;
		unsigned k = (seed >> 8) % MODEL_KEYS, what = (seed >> 20) % 3;
		/* Keys like device addresses: aligned and clustered, plus a few
		 * that collide in the low bits. */
		uint64_t key = 0x7f0000000000ull + (uint64_t)k * (k % 7 ? 0x200 : 0x100000);
		struct cap_map_ent *e;
		uint64_t v1 = 0, v2 = 0;

		if (what == 0) {
			cap_map_put(&m, key, op, k);
			if (!have[k])
				live++;
			have[k] = 1;
			val[k] = (uint64_t)op;
		} else if (what == 1) {
			e = cap_map_get(&m, key);
			if (!!e != !!have[k] || (e && (e->v1 != val[k] || e->v2 != k)))
				bad++;
		} else {
			int r = cap_map_del(&m, key, &v1, &v2);
			if (r != (int)have[k] || (r && (v1 != val[k] || v2 != k)))
				bad++;
			if (have[k])
				live--;
			have[k] = 0;
		}
		if (m.n != live)
			bad++;
	}
	CHECK_EQ_U(bad, 0);
	/* Every key still present is found after all the deletions. */
	for (unsigned k = 0; k < MODEL_KEYS; k++) {
		uint64_t key = 0x7f0000000000ull + (uint64_t)k * (k % 7 ? 0x200 : 0x100000);
		CHECK(!!cap_map_get(&m, key) == !!have[k]);
	}
	cap_map_put(&m, 0, 1, 2);   /* key 0 is never stored */
	CHECK(cap_map_get(&m, 0) == NULL);
	CHECK_EQ_U(m.n, live);
	cap_map_clear(&m);
	CHECK_EQ_U(m.n, 0);
	CHECK(cap_map_get(&m, 0x7f0000000200ull) == NULL);
	cap_map_release(&m);
	cap_map_release(&m);
}

UNIT_TEST(capture_host_readable)
{
	long ps = sysconf(_SC_PAGESIZE);
	char *heap = malloc(100000);
	char *map = mmap(NULL, (size_t)ps * 4, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	CHECK(heap != NULL && map != MAP_FAILED);
	if (!heap || map == MAP_FAILED)
		return;
	memset(heap, 1, 100000);
	CHECK(cap_host_readable(heap, 100000) == 1);
	CHECK(cap_host_readable(heap, 0) == 1);
	CHECK(cap_host_readable(NULL, 16) == 0);
	CHECK(cap_host_readable((void *)(uintptr_t)-8, 16) == 0);   /* wraps */
	/* Page 2 becomes PROT_NONE (what a UVA device reservation looks like),
	 * page 3 is unmapped. */
	CHECK(mprotect(map + 2 * ps, (size_t)ps, PROT_NONE) == 0);
	CHECK(munmap(map + 3 * ps, (size_t)ps) == 0);
	CHECK(cap_host_readable(map, (size_t)ps * 2) == 1);
	CHECK(cap_host_readable(map + ps - 1, 2) == 1);
	CHECK(cap_host_readable(map + ps, (size_t)ps + 1) == 0);
	CHECK(cap_host_readable(map + 2 * ps, 1) == 0);
	CHECK(cap_host_readable(map + 3 * ps + 5, 10) == 0);
	CHECK(cap_host_readable(map, (size_t)ps * 3) == 0);
	/* The seccomp fallback (write(2) into a pipe) agrees. */
	CHECK(probe_pipe((uintptr_t)map, 2, (uintptr_t)ps) == 1);
	CHECK(probe_pipe((uintptr_t)map, 3, (uintptr_t)ps) == 0);
	CHECK(probe_pipe((uintptr_t)(map + 3 * ps), 1, (uintptr_t)ps) == 0);
	CHECK(probe_pipe((uintptr_t)heap, 100000 / (size_t)ps, (uintptr_t)ps) == 1);
	/* A range of more pages than one process_vm_readv batch. */
	{
		size_t big = (size_t)ps * 3000;
		char *b = mmap(NULL, big, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		CHECK(b != MAP_FAILED);
		if (b != MAP_FAILED) {
			CHECK(cap_host_readable(b, big) == 1);
			CHECK(mprotect(b + (size_t)ps * 2500, (size_t)ps, PROT_NONE) == 0);
			CHECK(cap_host_readable(b, big) == 0);
			CHECK(cap_host_readable(b, (size_t)ps * 2500) == 1);
			munmap(b, big);
		}
	}
	munmap(map, (size_t)ps * 3);
	free(heap);
}

/* The driver version from /proc/driver/nvidia/version's first line, for
 * the proprietary and the open kernel module (the open one's line put
 * "for" where the version was looked for). */
UNIT_TEST(capture_driver_version_line)
{
	char v[64];
	CHECK(cap_driver_version("NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.104.05  Sat Aug 19 "
				 "01:15:15 UTC 2023\n", v, sizeof(v)) == 0);
	CHECK_STR(v, "535.104.05");
	CHECK(cap_driver_version("NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.82.07  Release "
				 "Build  (dvs-builder@U16-I3-B03-4-3)  Wed Aug 13 23:32:53 UTC 2025\n", v, sizeof(v)) == 0);
	CHECK_STR(v, "580.82.07");
	CHECK(cap_driver_version("NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  570.86.15  Release "
				 "Build  (dvs-builder@U16-T02-35-3)  Thu Jan 16 UTC 2025", v, sizeof(v)) == 0);
	CHECK_STR(v, "570.86.15");
	CHECK(cap_driver_version("NVRM version: NVIDIA UNIX aarch64 Kernel Module  550.54.15  Tue Mar  5 "
				 "22:23:56 UTC 2024", v, sizeof(v)) == 0);
	CHECK_STR(v, "550.54.15");
	CHECK(cap_driver_version("NVRM version: something else entirely 2024\n", v, sizeof(v)) == -1);
	CHECK_STR(v, "");

	/* no /proc entry: libcuda.so.1 links to libcuda.so.VERSION */
	{
		char dir[] = "/tmp/gpureduce-unit-drv-XXXXXX", file[128], link[128];
		CHECK(mkdtemp(dir) != NULL);
		snprintf(file, sizeof(file), "%s/libcuda.so.580.82.07", dir);
		snprintf(link, sizeof(link), "%s/libcuda.so.1", dir);
		FILE *f = fopen(file, "w");
		CHECK(f != NULL);
		if (f)
			fclose(f);
		CHECK(symlink("libcuda.so.580.82.07", link) == 0);
		CHECK(cap_driver_version_lib(link, v, sizeof(v)) == 0);
		CHECK_STR(v, "580.82.07");
		unlink(link);
		/* a plain libcuda.so.1 (the double): no version */
		f = fopen(link, "w");
		if (f)
			fclose(f);
		CHECK(cap_driver_version_lib(link, v, sizeof(v)) == -1);
		CHECK(cap_driver_version_lib("/no/such/libcuda.so.1", v, sizeof(v)) == -1);
		unlink(link);
		unlink(file);
		rmdir(dir);
	}
}

/* Plain pinned memory (managed.c): remembered, tracked from the first
 * launch whose argument words point into it; a word is looked up only at
 * 8-byte-aligned offsets, the range's end is exclusive, a freed or
 * re-handed-out range is forgotten, and a range of more pages than the
 * filter has bits still matches. */
static size_t args_of(const uint64_t *w, size_t nw, struct cap_mm_promoted *out)
{
	return cap_mm_args((const uint8_t *)w, (uint32_t)(nw * 8), out, 4);
}

UNIT_TEST(capture_pinned_args)
{
	static uint8_t host[3][4096];
	struct cap_mm_promoted got[4];
	const uint64_t A = 0x7f1000000000ull, B = 0x7f1000010000ull, C = 0x7f2000000000ull;

	cap_mm_pinned(A, host[0], 4096, 0);
	cap_mm_pinned(B, host[1], 4096, 0);
	cap_mm_pinned(C, host[2], 1000, 0);
	{   /* device pointers, small integers, B's end: nothing */
		uint64_t w[] = { 0x7f0000000000ull, 17, B + 4096, A - 1, C + 1000, 0 };
		CHECK(args_of(w, 6, got) == 0);
	}
	{   /* a pointer into A, unaligned inside the buffer: not a word */
		uint8_t buf[24] = { 0 };
		uint64_t p = A + 8;
		memcpy(buf + 4, &p, 8);
		CHECK(cap_mm_args(buf, sizeof(buf), got, 4) == 0);
	}
	{   /* B's last byte, at word 2 (a struct's field): B only */
		uint64_t w[] = { 3, 0x7f0000001000ull, B + 4095 };
		CHECK(args_of(w, 3, got) == 1);
		CHECK(got[0].dev == B && got[0].size == 4096 && got[0].arg_offset == 16 && !got[0].over_cap);
		CHECK(args_of(w, 3, got) == 0);   /* tracked now: not again */
	}
	{   /* A and C in one launch, A twice */
		uint64_t w[] = { A, C + 999, A + 100 };
		CHECK(args_of(w, 3, got) == 2);
		CHECK(got[0].dev == A && got[0].arg_offset == 0 && got[1].dev == C && got[1].arg_offset == 8);
	}
	/* freed before any launch pointed at it: forgotten */
	cap_mm_pinned(A + 0x100000, host[0], 4096, 0);
	cap_mm_del(A + 0x100000);
	{
		uint64_t w[] = { A + 0x100000 };
		CHECK(args_of(w, 1, got) == 0);
	}
	/* the driver hands an overlapping range out again: the old one goes */
	cap_mm_pinned(0x7f3000000000ull, host[0], 8192, 0);
	cap_mm_pinned(0x7f3000001000ull, host[1], 4096, 0);
	{
		uint64_t w[] = { 0x7f3000000010ull, 0x7f3000001010ull };
		CHECK(args_of(w, 2, got) == 1);
		CHECK(got[0].dev == 0x7f3000001000ull && got[0].arg_offset == 8);
	}
	/* more 64 KiB pages than the filter has bits (8 GiB): still found */
	cap_mm_pinned(0x7e0000000000ull, host[2], 8ull << 30, 0);
	{
		uint64_t w[] = { 0x7e0000000000ull + (7ull << 30) };
		CHECK(args_of(w, 1, got) == 1);
		CHECK(got[0].dev == 0x7e0000000000ull && got[0].over_cap);   /* past the 1 GiB cap */
	}
	cap_mm_del(A);
	cap_mm_del(B);
	cap_mm_del(C);
	cap_mm_del(0x7f3000001000ull);
	cap_mm_del(0x7e0000000000ull);
}

/* The filter and the search against a naive model: 200 ranges of random
 * sizes (up to 3 MiB, so some span many filter pages) at random places,
 * 20000 random words near them; a word inside a remembered range promotes
 * exactly that range, then it is remembered again. */
UNIT_TEST(capture_pinned_model)
{
	enum { NR = 200 };
	static uint8_t host[16];
	uint64_t dev[NR], size[NR];
	unsigned seed = 777, bad = 0;
	struct cap_mm_promoted got[4];

	for (int i = 0; i < NR; i++) {
		seed = seed * 1103515245u + 12345u;
		dev[i] = 0x7f4000000000ull + (uint64_t)i * 0x400000 + ((seed >> 4) % 64) * 256;
		seed = seed * 1103515245u + 12345u;
		size[i] = 1 + (seed >> 3) % (3u << 20);
		cap_mm_pinned(dev[i], host, size[i], 0);
	}
	for (int q = 0; q < 20000; q++) {
		seed = seed * 1103515245u + 12345u;
		uint64_t w = 0x7f4000000000ull + (uint64_t)(seed >> 1) % ((uint64_t)NR * 0x400000);
		int want = -1;
		for (int i = 0; i < NR; i++)
			if (w >= dev[i] && w - dev[i] < size[i])
				want = i;
		size_t n = args_of(&w, 1, got);
		if (want < 0 ? n != 0 : (n != 1 || got[0].dev != dev[want]))
			bad++;
		if (n == 1) {
			cap_mm_del(got[0].dev);   /* tracked: stop, and remember it again */
			cap_mm_pinned(got[0].dev, host, got[0].size, 0);
		}
	}
	CHECK(bad == 0);
	for (int i = 0; i < NR; i++)
		cap_mm_del(dev[i]);
}

/* Syncing tracked plain pinned memory (managed.c): before a launch only
 * where its arguments point (cap_mm_args, then CAP_MM_LAUNCH), before
 * a graph launch or a copy all of it (CAP_MM_COPY); mapped memory
 * before every launch.  Counted by the H2D records written. */
static int h2d_records(const char *path)
{
	struct trace t;
	struct strbuf err = STRBUF_INIT;
	int n = -1;
	if (trace_open(&t, path, TRACE_OPEN_STRICT, &err) == 0) {
		n = 0;
		for (size_t i = 0; i < t.nrec; i++)
			n += t.rec[i].type == TR_MEMCPY_H2D && (t.rec[i].u.copy.flags & TR_F_HOSTMEM);
		trace_release(&t);
	}
	sb_release(&err);
	return n;
}

/* A trace writer on a new temporary file at path (a mkstemp template);
 * 0, or -1 (checked) when it cannot be made. */
static int tmp_writer(char *path, struct trace_writer *w, struct strbuf *err)
{
	int fd = mkstemp(path);

	CHECK(fd >= 0);
	if (fd < 0)
		return -1;
	close(fd);
	memset(w, 0, sizeof(*w));
	CHECK(tw_open(w, path, err) == 0);
	return 0;
}

UNIT_TEST(capture_pinned_sync)
{
	static uint8_t pinned[8192], mapped[100];
	char path[] = "/tmp/gpureduce-unitp-XXXXXX";
	struct trace_writer w;
	struct strbuf err = STRBUF_INIT;
	struct cap_mm_promoted got[4];
	uint64_t h2d = 0, P = (uint64_t)(uintptr_t)pinned, other = 0x7f0000000000ull;

	if (tmp_writer(path, &w, &err) < 0)
		return;
	cap_mm_pinned(P, pinned, sizeof(pinned), 0);
	CHECK(cap_mm_add((uint64_t)(uintptr_t)mapped, mapped, sizeof(mapped), 0) == 0);
	/* launch 1 points at the pinned buffer: both written */
	CHECK(cap_mm_args((const uint8_t *)&P, 8, got, 4) == 1);
	CHECK(cap_mm_sync(&w, &h2d, CAP_MM_LAUNCH) == 0);
	CHECK(h2d == sizeof(pinned) + sizeof(mapped));
	/* the CPU changes both; launch 2 does not point at the pinned one:
	 * the mapped one only */
	pinned[5]++, mapped[5]++;
	h2d = 0;
	CHECK(cap_mm_args((const uint8_t *)&other, 8, got, 4) == 0);
	CHECK(cap_mm_sync(&w, &h2d, CAP_MM_LAUNCH) == 0);
	CHECK(h2d == sizeof(mapped));
	/* launch 3 points into it again (its last byte): its change now */
	h2d = 0;
	{
		uint64_t last = P + sizeof(pinned) - 1;
		CHECK(cap_mm_args((const uint8_t *)&last, 8, got, 4) == 0);
	}
	CHECK(cap_mm_sync(&w, &h2d, CAP_MM_LAUNCH) == 0);
	CHECK(h2d == sizeof(pinned));
	/* a change, then a graph launch or a copy (not a kernel launch): written */
	pinned[6]++;
	h2d = 0;
	CHECK(cap_mm_sync(&w, &h2d, CAP_MM_COPY) == 0);
	CHECK(h2d == sizeof(pinned));
	cap_mm_del(P);
	cap_mm_del((uint64_t)(uintptr_t)mapped);
	CHECK(tw_close(&w) == 0);
	CHECK(h2d_records(path) == 5);
	unlink(path);
	sb_release(&err);
}

/* Device memory of another process (cap_mm_peer): read back and written
 * before a launch that points into it, from the first such launch on;
 * before a device-to-device copy only when the copy reads from it; at a
 * graph launch once tracked; unchanged chunks not again; a buffer that
 * cannot be read is skipped with one note. */
UNIT_TEST(capture_peer_sync)
{
	static uint8_t peer[200000], other_peer[1000];
	char path[] = "/tmp/gpureduce-unitq-XXXXXX";
	struct trace_writer w;
	struct strbuf err = STRBUF_INIT;
	struct cap_mm_promoted got[4];
	uint64_t h2d = 0, D = (uint64_t)(uintptr_t)peer, O = (uint64_t)(uintptr_t)other_peer;
	uint64_t words[2] = { 0x1234, D + 5000 };

	if (tmp_writer(path, &w, &err) < 0)
		return;
	cap_mm_peer(D, sizeof(peer));
	cap_mm_peer(O, sizeof(other_peer));
	/* a launch that points at neither: nothing read */
	CHECK(cap_mm_args((const uint8_t *)words, 8, got, 4) == 0);
	CHECK(cap_mm_sync(&w, &h2d, CAP_MM_LAUNCH) == 0);
	CHECK_EQ_U(h2d, 0);
	/* nor at a copy from elsewhere, nor a graph launch before any use */
	cap_mm_copy_src(0x7f0000000000ull);
	CHECK(cap_mm_sync(&w, &h2d, CAP_MM_COPY) == 0);
	CHECK(cap_mm_sync(&w, &h2d, CAP_MM_GRAPH) == 0);
	CHECK_EQ_U(h2d, 0);
	/* the first launch into it (its second word): promoted, a peer, all
	 * of it written */
	CHECK(cap_mm_args((const uint8_t *)words, sizeof(words), got, 4) == 1);
	CHECK(got[0].peer == 1 && got[0].dev == D && got[0].arg_offset == 8 && !got[0].over_cap);
	CHECK(cap_mm_sync(&w, &h2d, CAP_MM_LAUNCH) == 0);
	CHECK_EQ_U(h2d, sizeof(peer));
	/* the other process writes one byte of chunk 2; a launch elsewhere
	 * does not read it, the next one into it writes that chunk only */
	peer[2 * 65536 + 7] ^= 0x5a;
	h2d = 0;
	CHECK(cap_mm_args((const uint8_t *)words, 8, got, 4) == 0);
	CHECK(cap_mm_sync(&w, &h2d, CAP_MM_LAUNCH) == 0);
	CHECK_EQ_U(h2d, 0);
	CHECK(cap_mm_args((const uint8_t *)&words[1], 8, got, 4) == 0);
	CHECK(cap_mm_sync(&w, &h2d, CAP_MM_LAUNCH) == 0);
	CHECK_EQ_U(h2d, 65536);
	/* a device-to-device copy: from elsewhere nothing, from it the change */
	peer[9] ^= 1;
	h2d = 0;
	cap_mm_copy_src(O + sizeof(other_peer));   /* just past the other one */
	CHECK(cap_mm_sync(&w, &h2d, CAP_MM_COPY) == 0);
	CHECK_EQ_U(h2d, 0);
	cap_mm_copy_src(D + 100);
	CHECK(cap_mm_sync(&w, &h2d, CAP_MM_COPY) == 0);
	CHECK_EQ_U(h2d, 65536);
	/* a copy from the untracked other one starts tracking it */
	h2d = 0;
	cap_mm_copy_src(O);
	CHECK(cap_mm_sync(&w, &h2d, CAP_MM_COPY) == 0);
	CHECK_EQ_U(h2d, sizeof(other_peer));
	/* a graph launch: every tracked peer buffer, its changes */
	peer[199999] ^= 1;
	other_peer[0] ^= 1;
	h2d = 0;
	CHECK(cap_mm_sync(&w, &h2d, CAP_MM_GRAPH) == 0);
	CHECK_EQ_U(h2d, (sizeof(peer) - 3 * 65536) + sizeof(other_peer));
	/* unreadable: skipped, one note however often */
	fail_dtoh = D;
	notes = 0;
	peer[0] ^= 1;
	h2d = 0;
	for (int i = 0; i < 3; i++) {
		CHECK(cap_mm_args((const uint8_t *)&words[1], 8, got, 4) == 0);
		CHECK(cap_mm_sync(&w, &h2d, CAP_MM_LAUNCH) == 0);
	}
	CHECK_EQ_U(h2d, 0);
	CHECK(notes == 1);
	fail_dtoh = 0;
	cap_mm_del(D);
	cap_mm_del(O);
	CHECK(tw_close(&w) == 0);
	/* 4 chunks + 1 + 1 + 1 (other) + 2 (graph) */
	CHECK(h2d_records(path) == 4 + 1 + 1 + 1 + 2);
	unlink(path);
	sb_release(&err);
}

/* Device memory no recorded call brought in (foreign.c): found where a
 * word points into it and its 2 MiB region holds no recorded allocation;
 * the driver is asked once per region it said holds nothing; words
 * outside [4 GiB, 2^48) are never asked about; a recorded allocation
 * hides its regions until it is freed. */
UNIT_TEST(capture_foreign_scan)
{
	struct cap_foreign f[4];
	uint64_t known = 0x7f1000000000ull, hidden = 0x7f2000000000ull, host = 0x55d000001000ull;
	uint64_t w[6];

	memset(&F, 0, sizeof(F));
	F.off_read = 1;
	fake_base = hidden;
	fake_size = 8000;
	range_asks = 0;
	cap_known_add(known, 3ull << 20);   /* three regions */
	w[0] = known + 100;                 /* recorded */
	w[1] = 12345;                       /* a small integer */
	w[2] = 0x3ff0000000000000ull;       /* a double, 1.0 */
	w[3] = host;                        /* not device memory */
	w[4] = hidden + 16;                 /* found */
	w[5] = known + (2ull << 20) + 5;    /* the recorded one's third region */
	CHECK(cap_foreign_scan((const uint8_t *)w, sizeof(w), 0, f, 4) == 1);
	CHECK(f[0].addr == hidden && f[0].size == 8000 && f[0].arg_offset == 32);
	CHECK(range_asks == 2);             /* host and hidden */
	/* the next launch: found ones count as known, the host word's region
	 * is remembered: nothing asked */
	CHECK(cap_foreign_scan((const uint8_t *)w, sizeof(w), 0, f, 4) == 0);
	CHECK(range_asks == 2);
	/* the recorded allocation is freed, and the driver still knows the
	 * range (a pool keeps it mapped): a use after free, never taken for
	 * memory to read back */
	cap_known_del(known, 3ull << 20);
	fake_base = known;
	fake_size = 4096;
	CHECK(cap_foreign_scan((const uint8_t *)w, 8, 0, f, 4) == 0);
	/* a word past the driver's answer (outside the range it names) is
	 * not taken for it */
	fake_base = 0x7f3000000000ull;
	fake_size = 16;
	w[0] = 0x7f3000000000ull + 64;
	CHECK(cap_foreign_scan((const uint8_t *)w, 8, 0, f, 4) == 0);
	/* a recorded allocation too wide to count turns the scan off */
	w[0] = 0x7f4000000000ull;
	fake_base = w[0];
	fake_size = 64;
	cap_known_add(0x100000000000ull, 1ull << 40);
	CHECK(cap_foreign_scan((const uint8_t *)w, 8, 0, f, 4) == 0);
	cap_known_del(0x100000000000ull, 1ull << 40);
	CHECK(cap_foreign_scan((const uint8_t *)w, 8, 0, f, 4) == 1);
	/* max bounds what one call returns */
	memset(&F, 0, sizeof(F));
	F.off_read = 1;
	fake_base = 0x7f5000000000ull;
	fake_size = 8ull << 20;
	w[0] = fake_base;
	w[1] = fake_base + (4ull << 20);   /* the same allocation: known once found */
	CHECK(cap_foreign_scan((const uint8_t *)w, 16, 0, f, 1) == 1);
	/* words that are two 32-bit fields side by side (a size, a count):
	 * 3000 distinct ones, asked about at most four a launch, each only
	 * once (regions that differ only in high bits must not evict each
	 * other: the H200's host-fed loop asked again at every step) */
	memset(&F, 0, sizeof(F));
	F.off_read = 1;
	fake_size = 0;
	{
		static uint64_t packed[300][10];
		int asks_then = 0;
		for (int k = 0; k < 300; k++)
			for (int i = 0; i < 10; i++)
				packed[k][i] = (uint64_t)(k * 10 + i + 1) << 32 | 64;
		range_asks = 0;
		for (int step = 0; step < 10; step++) {
			if (step == 8)
				asks_then = range_asks;
			for (int k = 0; k < 300; k++)
				CHECK(cap_foreign_scan((const uint8_t *)packed[k], sizeof(packed[k]), 0, f, 4) == 0);
		}
		CHECK(range_asks == 3000);
		CHECK(range_asks == asks_then);   /* none in the last two steps */
	}
	/* a block of 256 bytes or more scanned clean is not scanned again
	 * while no allocation comes or goes; one word changed is */
	{
		uint64_t blk[64];
		for (int i = 0; i < 64; i++)
			blk[i] = (uint64_t)(i + 1) << 32 | 64;   /* asked about above: refused */
		range_asks = 0;
		CHECK(cap_foreign_scan((const uint8_t *)blk, sizeof(blk), 0, f, 4) == 0);
		CHECK(F.memo[tr_hash(blk, sizeof(blk)) % MEMO_SLOTS].hash == tr_hash(blk, sizeof(blk)));
		CHECK(cap_foreign_scan((const uint8_t *)blk, sizeof(blk), 0, f, 4) == 0);
		blk[5] = 0x7f6000000000ull;   /* an allocation the driver knows */
		fake_base = blk[5];
		fake_size = 4096;
		CHECK(cap_foreign_scan((const uint8_t *)blk, sizeof(blk), 0, f, 4) == 1);
		CHECK(range_asks == 1 && f[0].addr == blk[5] && f[0].arg_offset == 40);
		fake_size = 0;
	}
	/* when the set of refused regions is half full, the scan stops for
	 * good, with a note */
	notes = 0;
	for (uint64_t i = 0; i < 40000 && !F.off; i++) {
		uint64_t x = (i + 5000) << 32 | 7;
		cap_foreign_scan((const uint8_t *)&x, 8, 0, f, 4);
	}
	CHECK(F.off && notes == 1 && F.refused == 32768);
	memset(&F, 0, sizeof(F));
}

/* Which kernels are folded (fold.c): NCCL's by name, other libraries'
 * peer kernels anywhere in the (mangled) name, a user's by
 * GPUREDUCE_FOLD_KERNELS; ordinary kernels are not. */
UNIT_TEST(capture_fold_names)
{
	unsetenv("GPUREDUCE_FOLD_KERNELS");
	CHECK(cap_fold_is_comm("ncclDevKernel_AllReduce_Sum_f32_RING_LL"));
	CHECK(cap_fold_is_comm("_Z39ncclDevKernel_AllReduce_Sum_i64_RING_LL17ncclDevKernelArgs"));
	CHECK(cap_fold_is_comm("_ZN4vllm26cross_device_reduce_1stageIfLi8EEEvPNS_8RankDataENS_11RankSignalsEPVNS_6SignalEPT_ii"));
	CHECK(cap_fold_is_comm("_ZN12tensorrt_llm7kernels22oneShotAllReduceKernelIfLi8ELb0EEEvNS0_18AllReduceParamsE"));
	CHECK(cap_fold_is_comm("_ZN3c10d16symmetric_memory27one_shot_all_reduce_kernelIfLi8EEEvPPT_mS3_mmPPjm"));
	CHECK(cap_fold_is_comm("_ZN7deep_ep8internode8dispatchILb0ELi8EEEvPv"));
	CHECK(!cap_fold_is_comm("_Z6gatherPfPKfPKxi"));
	CHECK(!cap_fold_is_comm("_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEENS_6detail5ArrayIPcLi1EEEEEviT0_T1_"));
	CHECK(!cap_fold_is_comm("reduce_sum_kernel"));
	CHECK(!cap_fold_is_comm(""));
	CHECK(!cap_fold_is_comm(NULL));
	setenv("GPUREDUCE_FOLD_KERNELS", "_Z9not_this,_Z7add_one*", 1);
	CHECK(cap_fold_is_comm("_Z7add_onePfi"));
	CHECK(!cap_fold_is_comm("_Z9not_thisx"));
	CHECK(cap_fold_is_comm("_Z9not_this"));
	unsetenv("GPUREDUCE_FOLD_KERNELS");
}
