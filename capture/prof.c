/*
 * prof.c - capture's own cost, split by where it goes (see prof.h).  The
 * numbers are what tests/bench/capture-cost.sh (make bench-cpu) and
 * tests/gpu/bench.sh print as "per launch" and "per MiB" breakdowns, so a
 * change to the hot path can be judged by the part it was meant to cut.
 * Counters are relaxed atomics: hooks run on any thread, some outside
 * inject.c's lock.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "capture.h"
#include "prof.h"

int cap_prof_on;

static struct {
	uint64_t ns, n, bytes;
	uint64_t max;    /* the longest single call: one long wait shows apart from a slow mean */
} P[CP_NSLOTS];

static const char *const slot_name[CP_NSLOTS] = {
	[CP_CALLBACK] = "driver callbacks (enter+exit, subscribed APIs)",
	[CP_LAUNCH] = "launch callback (enter)",
	[CP_L_DISPATCH] = "  dispatch",
	[CP_PYFRAMES] = "  python frames",
	[CP_L_TENSORS] = "  tensor blocks (--tensors)",
	[CP_L_SOURCE] = "  env/source check",
	[CP_L_CAPTURING] = "  graph-capture check",
	[CP_L_FNINFO] = "  kernel layout from the driver (not cached: first launch, module unload)",
	[CP_L_LOOKUP] = "  lock + cached kernel layout",
	[CP_L_CKPT] = "  checkpoint check",
	[CP_L_PRE] = "  test/tensor/source records",
	[CP_ARGS] = "  parameter bytes",
	[CP_L_FILL] = "  record fields + fold check",
	[CP_L_MANAGED] = "  managed/pinned memory sync",
	[CP_RECORD] = "  record write",
	[CP_L_TAIL] = "  progress, unlock, frees",
	[CP_LAUNCH_EXIT] = "launch callback (exit)",
	[CP_LIBSYNC] = "waiting for the kernel (GPUREDUCE_BLOCKING=library; not the library's own time)",
	[CP_TM_FETCH] = "tensor history fetches at launches (--tensors events; part of tensor blocks)",
	[CP_TM_FETCH_END] = "tensor history fetches at exit or after a fault",
	[CP_TM_TORCH] = "  of all fetches: torch's _snapshot() and history calls",
	[CP_TM_PY] = "  of all fetches: the reader's Python (events to records)",
	[CP_OTHER] = "other callbacks (enter+exit)",
	[CP_COPY] = "h2d copy callback",
	[CP_HASH] = "  hash",
	[CP_BLOB] = "  compress+write",
	[CP_STAGE] = "  hash + copy to the writer thread",
	[CP_WQ_WAIT] = "waits for the writer thread (ring full, drains)",
	[CP_WQ_BLOB] = "writer thread: compress+write (not the program's thread)",
	[CP_CK_HOSTMEM] = "checkpoint: host memory to read back into (pinning)",
	[CP_CK_SYNC] = "checkpoint: cuCtxSynchronize",
	[CP_CK_READ] = "checkpoint: read-back (cuMemcpyDtoH)",
	[CP_CK_REST] = "checkpoint: files and thread start (or the synchronous write)",
	[CP_CK_SWITCH] = "checkpoint: switch to the new segment (window copy, rename)",
};

void cap_prof_init(void)
{
	const char *v = getenv("GPUREDUCE_CAPTURE_PROFILE");
	cap_prof_on = v && *v && strcmp(v, "0") != 0;
}

uint64_t cap_prof_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void note_max(enum cap_prof_slot slot, uint64_t ns)
{
	uint64_t m = __atomic_load_n(&P[slot].max, __ATOMIC_RELAXED);
	while (ns > m && !__atomic_compare_exchange_n(&P[slot].max, &m, ns, 1, __ATOMIC_RELAXED,
						      __ATOMIC_RELAXED))
		;
}

uint64_t cap_prof_add(enum cap_prof_slot slot, uint64_t t0, uint64_t bytes)
{
	uint64_t now = cap_prof_now_ns();
	__atomic_fetch_add(&P[slot].ns, now - t0, __ATOMIC_RELAXED);
	__atomic_fetch_add(&P[slot].n, 1, __ATOMIC_RELAXED);
	if (bytes)
		__atomic_fetch_add(&P[slot].bytes, bytes, __ATOMIC_RELAXED);
	note_max(slot, now - t0);
	return now;
}

void cap_prof_put(enum cap_prof_slot slot, uint64_t ns)
{
	__atomic_fetch_add(&P[slot].ns, ns, __ATOMIC_RELAXED);
	__atomic_fetch_add(&P[slot].n, 1, __ATOMIC_RELAXED);
	note_max(slot, ns);
}

void cap_prof_extend(enum cap_prof_slot slot, uint64_t ns)
{
	__atomic_fetch_add(&P[slot].ns, ns, __ATOMIC_RELAXED);
}

/* "gpureduce: capture profile: SLOT N calls S s: X us each[, Y ms per MiB],
 * max Z us" (max: the longest single call, so that one long wait, such as
 * a checkpoint another thread waited out, shows apart from the mean),
 * and after the launch's parts, the sum of their seconds beside the whole
 * (clock reads between parts fall in one part or the next, never outside) */
void cap_prof_report(void)
{
	uint64_t parts = 0;

	if (!cap_prof_on)
		return;
	for (int i = 0; i < CP_NSLOTS; i++) {
		if (i > CP_LAUNCH_LAST && parts) {
			uint64_t whole = __atomic_load_n(&P[CP_LAUNCH].ns, __ATOMIC_RELAXED);
			fprintf(stderr, "gpureduce: capture profile:   (parts: %.3f s of %.3f s, %.1f%%)\n",
				parts / 1e9, whole / 1e9, whole ? 100.0 * parts / whole : 0.0);
			parts = 0;
		}
		uint64_t ns = __atomic_load_n(&P[i].ns, __ATOMIC_RELAXED);
		uint64_t n = __atomic_load_n(&P[i].n, __ATOMIC_RELAXED);
		uint64_t b = __atomic_load_n(&P[i].bytes, __ATOMIC_RELAXED);
		char mib[64] = "";
		if (i >= CP_LAUNCH_FIRST && i <= CP_LAUNCH_LAST)
			parts += ns;
		if (!n)
			continue;
		if (b)
			snprintf(mib, sizeof(mib), ", %.3f ms per MiB", ns / 1e6 / ((double)b / (1 << 20)));
		fprintf(stderr, "gpureduce: capture profile: %s: %llu calls, %.3f s: %.3f us each%s, max %.1f us\n",
			slot_name[i], (unsigned long long)n, ns / 1e9, ns / 1e3 / n, mib,
			__atomic_load_n(&P[i].max, __ATOMIC_RELAXED) / 1e3);
	}
	if (P[CP_OTHER].n > P[CP_COPY].n && P[CP_COPY].n) {
		/* "other callbacks" holds the h2d copies' callbacks too, whose
		 * bytes make its mean: the rest on their own (the copies' exit
		 * callbacks stay in, a test of the result each) */
		uint64_t on = __atomic_load_n(&P[CP_OTHER].ns, __ATOMIC_RELAXED);
		uint64_t cn = __atomic_load_n(&P[CP_COPY].ns, __ATOMIC_RELAXED);
		uint64_t n = P[CP_OTHER].n - P[CP_COPY].n;
		fprintf(stderr, "gpureduce: capture profile: other callbacks but the h2d copies' enter: %llu calls, "
			"%.3f s: %.3f us each\n", (unsigned long long)n, (on > cn ? on - cn : 0) / 1e9,
			(on > cn ? on - cn : 0) / 1e3 / n);
	}
	if (P[CP_TM_FETCH].n && P[CP_L_TENSORS].n) {   /* the events mode's per-launch cost */
		uint64_t all = __atomic_load_n(&P[CP_L_TENSORS].ns, __ATOMIC_RELAXED);
		uint64_t f = __atomic_load_n(&P[CP_TM_FETCH].ns, __ATOMIC_RELAXED);
		fprintf(stderr, "gpureduce: capture profile: tensor blocks without the fetches: %.3f us per launch\n",
			(all > f ? all - f : 0) / 1e3 / P[CP_L_TENSORS].n);
	}
	{
		uint64_t nshort, saved, nl = __atomic_load_n(&P[CP_LAUNCH].n, __ATOMIC_RELAXED);
		cap_same_stats(&nshort, &saved);
		if (nl)
			fprintf(stderr, "gpureduce: capture profile: launch records written short (format 2.0, a repeat "
				"of an earlier launch): %llu of %llu, %.1f MiB of names, layouts and argument bytes "
				"not written again\n", (unsigned long long)nshort, (unsigned long long)nl,
				saved / (double)(1 << 20));
	}
}
