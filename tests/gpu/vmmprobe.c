/*
 * vmmprobe.c - a hand-run probe on a GPU machine (not part of a suite):
 * what one guarded buffer costs replay in driver calls, the way replay
 * places it (addr/place_core.inc: a reserved range, one physical granule
 * mapped against the unmapped rest) and frees it (unmapped, the range kept
 * so a stale pointer faults), against cheaper ways of doing the same:
 *
 *   guard       reserve + create + map + set access; free: unmap + release
 *   keep-phys   the physical handle kept and mapped again (no create/release)
 *   remap-va    the same range and handle mapped again (no reserve either)
 *   alloc       cuMemAlloc / cuMemFree, no guard
 *
 * For hunt's replays of a training loop: 23292 blocks over 100 steps, each
 * placed and freed, cost about what the program's steps did (docs/RESULTS.md,
 * 2026-12-05); this says how much of that these calls are.
 *
 * Build and run: cc -O2 -o vmmprobe tests/gpu/vmmprobe.c -I/usr/local/cuda/include -lcuda && ./vmmprobe [N]
 * Prints one line per way: microseconds per buffer (place + free) and per call.
 */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec * 1e-9;
}

#define CK(x) do { CUresult r_ = (x); if (r_ != CUDA_SUCCESS) { \
	fprintf(stderr, "vmmprobe: %s failed: %d\n", #x, (int)r_); exit(1); } } while (0)

enum { P_RES, P_CREATE, P_MAP, P_ACCESS, P_UNMAP, P_RELEASE, P_N };
static const char *pname[P_N] = { "reserve", "create", "map", "set access", "unmap", "release" };
static double part[P_N];
#define TP(k, x) do { double a_ = now(); CK(x); part[k] += now() - a_; } while (0)

/* One way's line: microseconds a buffer, whole and by call; the parts reset. */
static void report(const char *way, double t, int n)
{
	printf("%-10s %8.2f us a buffer:", way, t / n * 1e6);
	for (int k = 0; k < P_N; k++) {
		printf(" %s %.2f", pname[k], part[k] / n * 1e6);
		part[k] = 0;
	}
	printf("\n");
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2000;
	CUdevice d;
	CUcontext c;
	CUmemAllocationProp prop = { 0 };
	CUmemAccessDesc acc = { 0 };
	size_t gran = 0;
	CUdeviceptr *va;
	CUmemGenericAllocationHandle h, *hs;
	double t;

	CK(cuInit(0));
	CK(cuDeviceGet(&d, 0));
	CK(cuDevicePrimaryCtxRetain(&c, d));
	CK(cuCtxSetCurrent(c));
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop.location.id = d;
	CK(cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM));
	acc.location = prop.location;
	acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
	va = calloc((size_t)n, sizeof(*va));
	hs = calloc((size_t)n, sizeof(*hs));
	printf("vmmprobe: %d buffers of one %zu-byte granule each, guard granule after\n", n, gran);

	/* guard: as replay does it (the ranges kept reserved until the end) */
	t = now();
	for (int i = 0; i < n; i++) {
		TP(P_RES, cuMemAddressReserve(&va[i], 2 * gran, gran, 0, 0));
		TP(P_CREATE, cuMemCreate(&h, gran, &prop, 0));
		TP(P_MAP, cuMemMap(va[i], gran, 0, h, 0));
		TP(P_ACCESS, cuMemSetAccess(va[i], gran, &acc, 1));
		TP(P_UNMAP, cuMemUnmap(va[i], gran));
		TP(P_RELEASE, cuMemRelease(h));
	}
	t = now() - t;
	report("guard", t, n);
	for (int i = 0; i < n; i++)
		CK(cuMemAddressFree(va[i], 2 * gran));

	/* keep-phys: a pool of physical handles, each mapped again */
	CK(cuMemCreate(&h, gran, &prop, 0));
	t = now();
	for (int i = 0; i < n; i++) {
		TP(P_RES, cuMemAddressReserve(&va[i], 2 * gran, gran, 0, 0));
		TP(P_MAP, cuMemMap(va[i], gran, 0, h, 0));
		TP(P_ACCESS, cuMemSetAccess(va[i], gran, &acc, 1));
		TP(P_UNMAP, cuMemUnmap(va[i], gran));
	}
	t = now() - t;
	report("keep-phys", t, n);
	for (int i = 0; i < n; i++)
		CK(cuMemAddressFree(va[i], 2 * gran));

	/* remap-va: one range, one handle */
	CK(cuMemAddressReserve(&va[0], 2 * gran, gran, 0, 0));
	t = now();
	for (int i = 0; i < n; i++) {
		TP(P_MAP, cuMemMap(va[0], gran, 0, h, 0));
		TP(P_ACCESS, cuMemSetAccess(va[0], gran, &acc, 1));
		TP(P_UNMAP, cuMemUnmap(va[0], gran));
	}
	t = now() - t;
	report("remap-va", t, n);
	CK(cuMemAddressFree(va[0], 2 * gran));
	CK(cuMemRelease(h));

	/* many live at once, then freed: handles created up front */
	t = now();
	for (int i = 0; i < n; i++) {
		TP(P_RES, cuMemAddressReserve(&va[i], 2 * gran, gran, 0, 0));
		TP(P_CREATE, cuMemCreate(&hs[i], gran, &prop, 0));
		TP(P_MAP, cuMemMap(va[i], gran, 0, hs[i], 0));
		TP(P_ACCESS, cuMemSetAccess(va[i], gran, &acc, 1));
	}
	for (int i = 0; i < n; i++) {
		TP(P_UNMAP, cuMemUnmap(va[i], gran));
		TP(P_RELEASE, cuMemRelease(hs[i]));
	}
	t = now() - t;
	report("all-live", t, n);
	for (int i = 0; i < n; i++)
		CK(cuMemAddressFree(va[i], 2 * gran));

	/* alloc: no guard */
	t = now();
	for (int i = 0; i < n; i++) {
		CUdeviceptr p;
		CK(cuMemAlloc(&p, gran - 4096));
		CK(cuMemFree(p));
	}
	t = now() - t;
	printf("alloc      %8.2f us a buffer (cuMemAlloc + cuMemFree)\n", t / n * 1e6);
	return 0;
}
