/*
 * kernels.c - the kernel registry of the CPU driver double: the only
 * "device code" the double can run.  Each entry names a kernel by the
 * mangled name nvcc would give it, lists its parameter layout (what
 * cuFuncGetParamInfo reports) and points at a C function that is called
 * once per CUDA thread.  A module exposes an entry only when its image
 * (tests/double/kernels_image.c compiled into kernels.cubin) also defines
 * a function symbol of that name, like a real cubin.
 *
 * Every kernel reads its parameters out of the packed argument buffer at
 * the offsets below, so a replay that packs parameters wrongly computes
 * wrong results, and pointers it forgot to relocate fault.  Adding a
 * kernel: write the function, add an entry here and a symbol of the same
 * name to kernels_image.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "double.h"

/* Read a parameter of type T at byte offset off of the argument buffer. */
#define ARG(T, args, off) (*(T const *)((const char *)(args) + (off)))

/* scale(float *out, const float *in, int n): correct.
 * if (i < n) out[i] = 2 * in[i]. */
static void k_scale(const struct dbl_launch *L, const void *a)
{
	float *out = ARG(float *, a, 0);
	const float *in = ARG(const float *, a, 8);
	int n = ARG(int, a, 16);
	long long i = dbl_tid_x(L);
	if (i < n)
		out[i] = 2.0f * in[i];
}

/* scale_nocheck(float *out, const float *in, int n): the seed article's bug,
 * no bounds check: every thread of the grid reads in[i] and writes out[i],
 * so a grid larger than n overruns both buffers (n is ignored). */
static void k_scale_nocheck(const struct dbl_launch *L, const void *a)
{
	float *out = ARG(float *, a, 0);
	const float *in = ARG(const float *, a, 8);
	long long i = dbl_tid_x(L);
	out[i] = 2.0f * in[i];
}

/* limit_write(float *out): thread 0 writes out[d_limit], d_limit read by
 * name from the module's __device__ int (as a kernel reads a global set
 * with cudaMemcpyToSymbol).  The image's d_limit is 1000: with a 4000-byte
 * out that lands in the allocator's slack; a wild d_limit faults. */
static void k_limit_write(const struct dbl_launch *L, const void *a)
{
	float *out = ARG(float *, a, 0);
	const int *limit = L->global ? L->global("d_limit") : NULL;
	if (limit && dbl_tid_x(L) == 0)
		out[*limit] = 1.0f;
}

/* ring_write(float *out): thread 0 writes out[d_counter] and advances the
 * module's __device__ long long d_counter by one: state a kernel keeps in
 * its module from launch to launch, never named to the driver by the
 * program.  With a 4096-byte out, the 1025th launch writes past its end. */
static void k_ring_write(const struct dbl_launch *L, const void *a)
{
	float *out = ARG(float *, a, 0);
	long long *pos = L->global ? L->global("d_counter") : NULL;
	if (pos && dbl_tid_x(L) == 0)
		out[(*pos)++] = 1.0f;
}

/* gather(float *out, const float *src, const long long *idx, int n):
 * out[i] = src[idx[i]] for i < n.  Correct code, data-dependent fault: it
 * faults only when idx holds a wild value. */
static void k_gather(const struct dbl_launch *L, const void *a)
{
	float *out = ARG(float *, a, 0);
	const float *src = ARG(const float *, a, 8);
	const long long *idx = ARG(const long long *, a, 16);
	int n = ARG(int, a, 24);
	long long i = dbl_tid_x(L);
	if (i < n)
		out[i] = src[idx[i]];
}

/* check_index(const long long *idx, int n, int limit): PyTorch-style index
 * check: for i < n, device-side assert(idx[i] < limit) -> CUDA_ERROR_ASSERT. */
static void k_check_index(const struct dbl_launch *L, const void *a)
{
	const long long *idx = ARG(const long long *, a, 0);
	int n = ARG(int, a, 8);
	int limit = ARG(int, a, 12);
	long long i = dbl_tid_x(L);
	if (i < n)
		DBL_ASSERT(L, idx[i] < limit);
}

/* add_one(float *p, int n): correct, for the healthy launches before a bug.
 * if (i < n) p[i] += 1. */
static void k_add_one(const struct dbl_launch *L, const void *a)
{
	float *p = ARG(float *, a, 0);
	int n = ARG(int, a, 8);
	long long i = dbl_tid_x(L);
	if (i < n)
		p[i] += 1.0f;
}

/* racy_augment(float *buf, int n, int seed): a flaky kernel.  Every thread
 * i < n does buf[i] += seed.  In addition, on a launch whose per-launch
 * random bit is set (L->rnd & 1: 50% of launches, independent of the
 * arguments), thread 0 of block 0 also writes buf[n + 256], 1 KiB past the
 * end: that faults whenever less than 1 KiB of slack separates the buffer's
 * end from a guard (always for cuMemAlloc and replay's guard placement).
 * The random source is seeded from time and pid, or from $DOUBLE_SEED. */
static void k_racy_augment(const struct dbl_launch *L, const void *a)
{
	float *buf = ARG(float *, a, 0);
	int n = ARG(int, a, 8);
	int seed = ARG(int, a, 12);
	long long i = dbl_tid_x(L);
	if (i < n)
		buf[i] += (float)seed;
	if (i == 0 && L->blockIdx.y == 0 && L->blockIdx.z == 0 &&
	    L->threadIdx.y == 0 && L->threadIdx.z == 0 && (L->rnd & 1))
		buf[(long long)n + 256] = (float)seed;
}

/* racy_grid(float *buf, int n): a race whose window grows with the grid.
 * Every thread i < n does buf[i] += 1.  With 4 or more blocks the race is
 * always lost: thread 0 writes buf[n + 256], 1 KiB past the end (faults
 * against a guard, as racy_augment).  With fewer blocks it is lost only
 * when the launch's L->race() is even: half of the launches at random, or
 * every other small-grid launch under DOUBLE_RACE_COUNTER.  So a grid cut
 * keeps the fault, but not its rate. */
static void k_racy_grid(const struct dbl_launch *L, const void *a)
{
	float *buf = ARG(float *, a, 0);
	int n = ARG(int, a, 8);
	long long i = dbl_tid_x(L);
	if (i < n)
		buf[i] += 1.0f;
	if (i == 0 && L->threadIdx.y == 0 && L->threadIdx.z == 0 &&
	    (L->gridDim.x >= 4 || !(L->race() & 1)))
		buf[(long long)n + 256] = 1.0f;
}

/* The body of racy_rare and racy_burst: every thread i < n does buf[i] +=
 * 1; thread 0 also writes buf[n + 256], 1 KiB past the end (faults against
 * a guard, as racy_augment), when the launch's L->race() % period lies in
 * [lo, hi): at random, or by the launch's number under
 * DOUBLE_RACE_COUNTER (race() is asked once, by thread 0). */
static void racy_counted(const struct dbl_launch *L, const void *a, unsigned period, unsigned lo,
			 unsigned hi)
{
	float *buf = ARG(float *, a, 0);
	int n = ARG(int, a, 8);
	long long i = dbl_tid_x(L);
	unsigned r;
	if (i < n)
		buf[i] += 1.0f;
	if (i == 0 && L->blockIdx.y == 0 && L->threadIdx.y == 0 && L->threadIdx.z == 0 &&
	    (r = L->race() % period) >= lo && r < hi)
		buf[(long long)n + 256] = 1.0f;
}

/* racy_rare(float *buf, int n): a race lost in one launch of twelve
 * (race() % 12 == 11): exactly every twelfth launch under
 * DOUBLE_RACE_COUNTER (a trace whose first replays all run clean). */
static void k_racy_rare(const struct dbl_launch *L, const void *a)
{
	racy_counted(L, a, 12, 11, 12);
}

/* racy_burst(float *buf, int n): a race lost in bursts, as one that
 * depends on what else the GPU runs (race() % 24 < 6).  Under
 * DOUBLE_RACE_COUNTER: 6 launches in a row lose it, then 18 run clean, so
 * a few runs can fault every time and the next five never. */
static void k_racy_burst(const struct dbl_launch *L, const void *a)
{
	racy_counted(L, a, 24, 0, 6);
}

/* racy_often(float *buf, int n): a race lost in three launches of four
 * (race() % 4 < 3), as the race sample on an H200 (2026-12-07): two
 * replays in a row fault more often than not, so the fault looks steady,
 * and a single run of a candidate misses one time in four.  Under
 * DOUBLE_RACE_COUNTER every fourth launch runs clean. */
static void k_racy_often(const struct dbl_launch *L, const void *a)
{
	racy_counted(L, a, 4, 0, 3);
}

/* racy_warm(float *buf, int n): a race that a busy GPU makes the program
 * lose every time: every thread i < n does buf[i] += 1, and thread 0
 * writes buf[n + 256], 1 KiB past the end (faults against a guard, as
 * racy_augment), when this process ran 4 launches or more before this
 * one, else when the launch's L->race() is even (asked only then).  A
 * trace with 4 launches before it faults every time; the slice to its
 * one launch half the time (every other one under DOUBLE_RACE_COUNTER). */
static void k_racy_warm(const struct dbl_launch *L, const void *a)
{
	float *buf = ARG(float *, a, 0);
	int n = ARG(int, a, 8);
	long long i = dbl_tid_x(L);
	if (i < n)
		buf[i] += 1.0f;
	if (i == 0 && L->blockIdx.y == 0 && L->threadIdx.y == 0 && L->threadIdx.z == 0 &&
	    (L->seq > 4 || !(L->race() & 1)))
		buf[(long long)n + 256] = 1.0f;
}

/* racy_wide(float *buf, int n): a race lost in three launches of four
 * with 4 blocks or more, one in four below (race() % 4: < 3, else == 0):
 * a grid cut keeps the fault of a flaky trace, but a third of its rate.
 * Every thread i < n does buf[i] += 1; thread 0 writes buf[n + 256] (1
 * KiB past the end, as racy_augment) when the race is lost. */
static void k_racy_wide(const struct dbl_launch *L, const void *a)
{
	unsigned hi = L->gridDim.x >= 4 ? 3 : 1;
	racy_counted(L, a, 4, 0, hi);
}

/* use_buf(float *p, int n): p[i] = p[i] * 0.5f + 1 for i < n.  Correct on
 * live memory; faults when p was freed (the double's freed memory is
 * PROT_NONE). */
static void k_use_buf(const struct dbl_launch *L, const void *a)
{
	float *p = ARG(float *, a, 0);
	int n = ARG(int, a, 8);
	long long i = dbl_tid_x(L);
	if (i < n)
		p[i] = p[i] * 0.5f + 1.0f;
}

/* struct_params(Pair p), struct Pair { float *a; float *b; int n; } passed
 * by value (24 bytes, one parameter): b[i] = a[i] + 1 for i < n.  Correct;
 * it tests that a replay relocates pointers inside a struct parameter. */
struct pair { float *a; float *b; int n; };
static void k_struct_params(const struct dbl_launch *L, const void *args)
{
	struct pair p;
	memcpy(&p, args, sizeof(p));
	long long i = dbl_tid_x(L);
	if (i < p.n)
		p.b[i] = p.a[i] + 1.0f;
}

/* dims_fill(Dims d, float *out), struct Dims { int n; int unused; } passed
 * by value (8 bytes, the host leaves `unused` as it was: stack garbage,
 * as cuDNN's nchw2nhwc_params_t does): if (i < d.n) out[i] = 1.  Correct;
 * it tests that a replay does not take {n, garbage} for a pointer and
 * "relocate" it, which turns n into an address's low half (format 1.7). */
static void k_dims_fill(const struct dbl_launch *L, const void *a)
{
	int n = ARG(int, a, 0);
	float *out = ARG(float *, a, 8);
	long long i = dbl_tid_x(L);
	if (i < n)
		out[i] = 1.0f;
}

/* dims_fill_u(DimsU d, float *out), struct DimsU { unsigned n; int
 * unused; }: dims_fill with an unsigned count, so that a word "relocated"
 * by mistake always runs past out (an address's low half is a large
 * count), never below zero: hunt's integer check (t5109). */
static void k_dims_fill_u(const struct dbl_launch *L, const void *a)
{
	unsigned n = ARG(unsigned, a, 0);
	float *out = ARG(float *, a, 8);
	long long i = dbl_tid_x(L);
	if (i < (long long)n)
		out[i] = 1.0f;
}

/* fill(float *p, float v, int n): if (i < n) p[i] = v.  Correct. */
static void k_fill(const struct dbl_launch *L, const void *a)
{
	float *p = ARG(float *, a, 0);
	float v = ARG(float, a, 8);
	int n = ARG(int, a, 12);
	long long i = dbl_tid_x(L);
	if (i < n)
		p[i] = v;
}

/* spin(const volatile int *flag): waits until *flag is non-zero -- a hang
 * when nothing ever sets it (what a deadlocked kernel looks like to the
 * reducer, whose per-candidate time limit must kill and replace the worker). */
static void k_spin(const struct dbl_launch *L, const void *a)
{
	const volatile int *flag = ARG(const volatile int *, a, 0);
	(void)L;
	while (!*flag)
		;
}

/* gated_write(const volatile int *gate, float *out, int n): waits until
 * *gate is non-zero, then out[n] = 1 (past the end when n is out's length).
 * With the gate open it faults; a candidate that zeroes the gate hangs
 * (shrink's time limits must cut it short). */
static void k_gated_write(const struct dbl_launch *L, const void *a)
{
	const volatile int *gate = ARG(const volatile int *, a, 0);
	float *out = ARG(float *, a, 8);
	int n = ARG(int, a, 16);
	if (dbl_tid_x(L) != 0)
		return;
	while (!*gate)
		;
	out[n] = 1.0f;
}

/*
 * A stand-in NCCL all-reduce (issue 25), named like NCCL 2.19+'s device
 * kernels, taking one work struct by value as they do:
 *   { long long *comm; const long long *sendbuff; long long *recvbuff; long long count; }
 * recvbuff[i] = the sum over ranks of sendbuff[i], exchanged through files
 * in DOUBLE_PEER_DIR (coll.CALL.RANK; RANK, WORLD_SIZE from the
 * environment); comm[0] counts calls (NCCL's own state changes too).  It
 * waits for its peers: without them (a replay that launched it alone) it
 * waits DOUBLE_COLL_TIMEOUT seconds (default 20), says so on stderr and
 * aborts -- loud, never a silent success.  Thread 0 does all the work.
 */
static int coll_file(const char *dir, long call, long rank, char *buf, size_t n)
{
	return snprintf(buf, n, "%s/coll.%ld.%ld", dir, call, rank) >= (int)n ? -1 : 0;
}

static void coll_fail(const char *why, long waited)
{
	fprintf(stderr, "double: collective ncclDevKernel_AllReduce_Sum_i64_RING_LL launched without its "
		"peers (%s, waited %ld s): it must be folded, never replayed alone\n", why, waited);
	abort();
}

static void k_nccl_allreduce(const struct dbl_launch *L, const void *a)
{
	static long calls;
	struct { long long *comm; const long long *send; long long *recv; long long count; } w;
	const char *dir = getenv("DOUBLE_PEER_DIR"), *rs = getenv("RANK"), *ws = getenv("WORLD_SIZE");
	const char *ts = getenv("DOUBLE_COLL_TIMEOUT");
	long timeout = ts && *ts ? atol(ts) : 20, rank, world, call;
	char path[4096], tmp[4200];
	long long *sum;
	FILE *f;

	if (dbl_tid_x(L) != 0)
		return;
	memcpy(&w, a, sizeof(w));
	call = calls++;
	if (!dir || !rs || !ws) {
		sleep((unsigned)timeout);
		coll_fail("no DOUBLE_PEER_DIR/RANK/WORLD_SIZE", timeout);
	}
	rank = atol(rs);
	world = atol(ws);
	sum = calloc((size_t)w.count + 1, sizeof(*sum));
	if (!sum || coll_file(dir, call, rank, path, sizeof(path)) < 0)
		coll_fail("out of memory", 0);
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "wb");
	if (!f || fwrite(w.send, sizeof(long long), (size_t)w.count, f) != (size_t)w.count || fclose(f) ||
	    rename(tmp, path))
		coll_fail("cannot write its contribution", 0);
	for (long r = 0; r < world; r++) {
		long waited = 0;
		coll_file(dir, call, r, path, sizeof(path));
		while (!(f = fopen(path, "rb"))) {
			struct timespec ms = { 0, 10 * 1000 * 1000 };
			nanosleep(&ms, NULL);
			if (++waited >= timeout * 100)
				coll_fail("a peer never came", timeout);
		}
		for (long long i = 0; i < w.count; i++) {
			long long v = 0;
			if (fread(&v, sizeof(v), 1, f) != 1)
				coll_fail("a peer's contribution is short", 0);
			sum[i] += v;
		}
		fclose(f);
	}
	memcpy(w.recv, sum, (size_t)w.count * sizeof(*sum));
	free(sum);
	w.comm[0]++;
}

/* tma_rows(CUtensorMap map, float *out, int n): a __grid_constant__ map
 * of a 2-D f32 tensor passed by value (128 bytes, .align 64), read as TMA
 * would: out[i] = tensor[i / dim0][i % dim0] for i < n and rows inside
 * the map's dims.  Each row is found with the map's row stride, so a map
 * encoded with a wrong stride reads past its tensor (Triton's bad-stride
 * bug); one whose address was not relocated reads the captured address. */
static void k_tma_rows(const struct dbl_launch *L, const void *a)
{
	const void *map = a;
	float *out = ARG(float *, a, 128);
	int n = ARG(int, a, 136);
	long long i = dbl_tid_x(L);
	uint64_t d0 = dbl_tmap_dim0(map), row = (uint64_t)i / d0, col = (uint64_t)i % d0;
	if (i < n && row < dbl_tmap_dim1(map))
		out[i] = *(const float *)(dbl_tmap_base(map) + row * dbl_tmap_row_stride(map) + col * 4);
}

/* tdesc_rows: tma_rows as Triton compiles a kernel taking a host-side
 * TensorDescriptor (issue 24): the map, then the tensor's shape (2 x i32)
 * and strides (2 x i64) the launcher passes after it, the output, n, and
 * Triton's two scratch pointers.  An unmangled name, as Triton's. */
static void k_tdesc_rows(const struct dbl_launch *L, const void *a)
{
	const void *map = a;
	float *out = ARG(float *, a, 152);
	int n = ARG(int, a, 160);
	long long i = dbl_tid_x(L);
	uint64_t d0 = dbl_tmap_dim0(map), row = (uint64_t)i / d0, col = (uint64_t)i % d0;
	if (i < n && row < dbl_tmap_dim1(map))
		out[i] = *(const float *)(dbl_tmap_base(map) + row * dbl_tmap_row_stride(map) + col * 4);
}

/* pick_kernel, as a JIT builds one name twice (issue 24, item 6): the
 * variant with Triton's two scratch pointers writes out[i] = 1 for i < n
 * (n past the buffer faults); the build without them ("pick_kernel$v2"
 * in its image) and the one for 64-thread blocks ("pick_kernel$v3") only
 * read n.  Builds with the faulting build's parameters: "$v4" (another
 * register count, reads only), "$v5" (.reqntid 128: refuses other blocks,
 * reads only), "$v6" (.reqntid 64, writes as the first does). */
static void k_pick(const struct dbl_launch *L, const void *a)
{
	float *out = ARG(float *, a, 0);
	int n = ARG(int, a, 8);
	long long i = dbl_tid_x(L);
	if (i < n)
		out[i] = 1.0f;
}

static void k_pick_other(const struct dbl_launch *L, const void *a)
{
	(void)L;
	(void)ARG(int, a, 8);
}

/* chase(const float **table, float *out, int n): out[i] = *table[i] for
 * i < n -- a table of device pointers in device memory.  A replay that
 * did not relocate the stored pointers reads captured addresses. */
static void k_chase(const struct dbl_launch *L, const void *a)
{
	const float *const *table = ARG(const float *const *, a, 0);
	float *out = ARG(float *, a, 8);
	int n = ARG(int, a, 16);
	long long i = dbl_tid_x(L);
	if (i < n)
		out[i] = *table[i];
}

/* most entries leave image_sym and max_threads out (NULL, 0) */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
const struct dbl_kernel dbl_kernels[] = {
	{ "_Z5chasePPKfPfi", "chase(const float**, float*, int)",
	  3, { {0, 8}, {8, 8}, {16, 4} }, k_chase },
	{ "_Z8tma_rows14CUtensorMap_stPfi", "tma_rows(CUtensorMap_st, float*, int)",
	  3, { {0, 128}, {128, 8}, {136, 4} }, k_tma_rows },
	{ "pick_kernel", "pick_kernel(float*, int, i8*, i8*)", 4, { {0, 8}, {8, 4}, {16, 8}, {24, 8} }, k_pick },
	{ "pick_kernel", "pick_kernel(float*, int) (v2)", 2, { {0, 8}, {8, 4} }, k_pick_other, "pick_kernel$v2", 0 },
	{ "pick_kernel", "pick_kernel(float*, int) (v3, 64 threads)", 2, { {0, 8}, {8, 4} }, k_pick_other,
	  "pick_kernel$v3", 64 },
	{ "pick_kernel", "pick_kernel(float*, int, i8*, i8*) (v4, 40 registers)", 4,
	  { {0, 8}, {8, 4}, {16, 8}, {24, 8} }, k_pick_other, "pick_kernel$v4", 0, 0, 40 },
	{ "pick_kernel", "pick_kernel(float*, int, i8*, i8*) (v5, reqntid 128)", 4,
	  { {0, 8}, {8, 4}, {16, 8}, {24, 8} }, k_pick_other, "pick_kernel$v5", 128, 1 },
	{ "pick_kernel", "pick_kernel(float*, int, i8*, i8*) (v6, reqntid 64)", 4,
	  { {0, 8}, {8, 4}, {16, 8}, {24, 8} }, k_pick, "pick_kernel$v6", 64, 1 },
	{ "tdesc_rows", "tdesc_rows(CUtensorMap, i32, i32, i64, i64, float*, int, i8*, i8*)",
	  9, { {0, 128}, {128, 4}, {132, 4}, {136, 8}, {144, 8}, {152, 8}, {160, 4}, {168, 8}, {176, 8} },
	  k_tdesc_rows },
	{ "_Z5scalePfPKfi", "scale(float*, const float*, int)",
	  3, { {0, 8}, {8, 8}, {16, 4} }, k_scale },
	{ "_Z13scale_nocheckPfPKfi", "scale_nocheck(float*, const float*, int)",
	  3, { {0, 8}, {8, 8}, {16, 4} }, k_scale_nocheck },
	{ "_Z11limit_writePf", "limit_write(float*)", 1, { {0, 8} }, k_limit_write },
	{ "_Z10ring_writePf", "ring_write(float*)", 1, { {0, 8} }, k_ring_write },
	{ "_Z6gatherPfPKfPKxi", "gather(float*, const float*, const long long*, int)",
	  4, { {0, 8}, {8, 8}, {16, 8}, {24, 4} }, k_gather },
	{ "_Z11check_indexPKxii", "check_index(const long long*, int, int)",
	  3, { {0, 8}, {8, 4}, {12, 4} }, k_check_index },
	{ "_Z7add_onePfi", "add_one(float*, int)",
	  2, { {0, 8}, {8, 4} }, k_add_one },
	{ "_Z12racy_augmentPfii", "racy_augment(float*, int, int)",
	  3, { {0, 8}, {8, 4}, {12, 4} }, k_racy_augment },
	{ "_Z9racy_gridPfi", "racy_grid(float*, int)",
	  2, { {0, 8}, {8, 4} }, k_racy_grid },
	{ "_Z9racy_rarePfi", "racy_rare(float*, int)",
	  2, { {0, 8}, {8, 4} }, k_racy_rare },
	{ "_Z10racy_burstPfi", "racy_burst(float*, int)",
	  2, { {0, 8}, {8, 4} }, k_racy_burst },
	{ "_Z10racy_oftenPfi", "racy_often(float*, int)",
	  2, { {0, 8}, {8, 4} }, k_racy_often },
	{ "_Z9racy_warmPfi", "racy_warm(float*, int)",
	  2, { {0, 8}, {8, 4} }, k_racy_warm },
	{ "_Z9racy_widePfi", "racy_wide(float*, int)",
	  2, { {0, 8}, {8, 4} }, k_racy_wide },
	{ "_Z7use_bufPfi", "use_buf(float*, int)",
	  2, { {0, 8}, {8, 4} }, k_use_buf },
	{ "_Z13struct_params4Pair", "struct_params(Pair)",
	  1, { {0, 24} }, k_struct_params },
	{ "_Z9dims_fill4DimsPf", "dims_fill(Dims, float*)",
	  2, { {0, 8}, {8, 8} }, k_dims_fill },
	{ "_Z11dims_fill_u5DimsUPf", "dims_fill_u(DimsU, float*)",
	  2, { {0, 8}, {8, 8} }, k_dims_fill_u },
	{ "_Z4fillPffi", "fill(float*, float, int)",
	  3, { {0, 8}, {8, 4}, {12, 4} }, k_fill },
	{ "_Z4spinPVKi", "spin(const volatile int*)",
	  1, { {0, 8} }, k_spin },
	{ "_Z11gated_writePVKiPfi", "gated_write(const volatile int*, float*, int)",
	  3, { {0, 8}, {8, 8}, {16, 4} }, k_gated_write },
	{ "_Z39ncclDevKernel_AllReduce_Sum_i64_RING_LL17ncclDevKernelArgs",
	  "ncclDevKernel_AllReduce_Sum_i64_RING_LL(ncclDevKernelArgs)",
	  1, { {0, 32} }, k_nccl_allreduce },
};
#pragma GCC diagnostic pop
const size_t dbl_nkernels = sizeof(dbl_kernels) / sizeof(dbl_kernels[0]);
