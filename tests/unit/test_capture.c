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

#include "../../capture/map.c"
#include "../../capture/hostmem.c"
#include "../../capture/drvver.c"
#include "unit.h"

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
