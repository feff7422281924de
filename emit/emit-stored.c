/*
 * emit-stored.c - repro.cu's copy of captured bytes into a buffer, with the
 * device pointers stored in them (a table of device pointers, a struct
 * array) pointed at the repro's own buffers, as replay relocates them
 * (replay/engine.c do_h2d, the pointer-word rule of addr/memmap.h).
 * Called by emit.c for each embedded copy.
 *
 * A few pointers: the copy as captured, then one line per pointer that
 * overwrites it on the device (each names the captured address).  A
 * table of pointers can be long (a row table, a batched GEMM's A/B/C
 * arrays, a 4 MiB array of structs): one line per word made repro.cu
 * thousands of lines that a reader skips and the compiler takes seconds
 * over, words past a cap were left unrelocated, and a copy per word would
 * be a copy per word at run time.  So past IRREGULAR_LINES pointers the
 * bytes are patched in a host copy and copied in once, the pointers
 * written as
 *   - runs: N words at a fixed stride, pointing into one buffer at a fixed
 *     stride (entry i of a row table, a struct array's pointer field),
 *     one loop each;
 *   - the rest one line each, or, past IRREGULAR_LINES of them, one table
 *     and one loop over it.
 * Every word is relocated; the comments keep the captured addresses.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../addr/memmap.h"
#include "../common/strbuf.h"
#include "../common/util.h"
#include "emit-int.h"

#define RUN_MIN 4                /* words at one stride before they make a loop */
#define IRREGULAR_LINES 16       /* single lines at most; beyond, a table */

struct word {
	uint64_t at;                 /* offset in the copied bytes */
	int buf;                     /* the buffer it points into */
	int dead;                    /* ...which was freed */
	int64_t delta;               /* offset in that buffer */
	uint64_t v;                  /* the captured value */
};

struct words {
	struct word *w;
	size_t n, cap;
};

static int collect(struct mm_alloc *a, size_t k, uint64_t v, int dead, void *arg)
{
	struct words *W = arg;
	ALLOC_GROW(W->w, W->n + 1, W->cap);
	W->w[W->n++] = (struct word){ k, (int)(intptr_t)a->user - 1, dead, (int64_t)(v - a->addr), v };
	return 0;
}

/* How many words from i on go at one stride in both places (at least 1). */
static size_t run_len(const struct word *w, size_t n, size_t i)
{
	size_t j = i + 1;
	if (j >= n || w[j].buf != w[i].buf || w[j].dead != w[i].dead)
		return 1;
	/* strides in modular arithmetic: a hostile trace's deltas span the
	 * whole 64 bits, and the program adds them to a CUdeviceptr anyway */
	uint64_t ds = w[j].at - w[i].at;
	uint64_t dv = (uint64_t)w[j].delta - (uint64_t)w[i].delta;
	while (j + 1 < n && w[j + 1].buf == w[i].buf && w[j + 1].dead == w[i].dead &&
	       w[j + 1].at - w[j].at == ds && (uint64_t)w[j + 1].delta - (uint64_t)w[j].delta == dv)
		j++;
	return j - i + 1;
}

/* "BASE + OFF + STEP * VAR" (BASE may be NULL; OFF left out when 0) */
static void affine(struct strbuf *o, const char *base, long long off, long long step, const char *var)
{
	if (base)
		sb_addf(o, "%s + ", base);
	if (off)
		sb_addf(o, "%lld + ", off);
	sb_addf(o, "%lld * %s", step, var);
}

static const char *freed(const struct word *w)
{
	return w->dead ? ", a FREED buffer" : "";
}

/* One pointer, on the device after the copy (few) */
static void device_line(struct strbuf *o, int id, uint64_t off, const struct word *w)
{
	sb_addf(o, "\t{ CUdeviceptr p_ = buf[%d].ptr + %lld; SETUP(cuMemcpyHtoD(buf[%d].ptr + %llu, &p_, 8)); }"
		"   /* a stored pointer: captured 0x%llx%s */\n",
		w->buf, (long long)w->delta, id, (unsigned long long)(off + w->at), (unsigned long long)w->v, freed(w));
}

/* One pointer, into the host copy h_ (many) */
static void host_line(struct strbuf *o, const struct word *w)
{
	sb_addf(o, "\t\tput_ptr(h_, %llu, buf[%d].ptr + %lld);   /* a stored pointer: captured 0x%llx%s */\n",
		(unsigned long long)w->at, w->buf, (long long)w->delta, (unsigned long long)w->v, freed(w));
}

static void run_loop(struct strbuf *o, const struct word *w, size_t len)
{
	unsigned long long ds = w[1].at - w[0].at;
	long long dv = (long long)((uint64_t)w[1].delta - (uint64_t)w[0].delta);
	char b[32];
	sb_addf(o, "\t\tfor (long long i_ = 0; i_ < %zu; i_++)   /* %zu stored pointers, every %llu bytes from +%llu: ",
		len, len, ds, (unsigned long long)w[0].at);
	snprintf(b, sizeof(b), "buffer %d", w[0].buf);
	affine(o, b, (long long)w[0].delta, dv, "i");
	sb_addf(o, " (captured 0x%llx + %lld * i)%s */\n\t\t\tput_ptr(h_, ", (unsigned long long)w[0].v, dv, freed(w));
	affine(o, NULL, (long long)w[0].at, (long long)ds, "i_");
	sb_adds(o, ", ");
	snprintf(b, sizeof(b), "buf[%d].ptr", w[0].buf);
	affine(o, b, (long long)w[0].delta, dv, "i_");
	sb_adds(o, ");\n");
}

/* The words no run took: one line each, or a table and a loop over it. */
static void irregular(struct strbuf *o, struct word *const *rest, size_t n)
{
	size_t dead = 0;
	if (n <= IRREGULAR_LINES) {
		for (size_t i = 0; i < n; i++)
			host_line(o, rest[i]);
		return;
	}
	for (size_t i = 0; i < n; i++)
		dead += rest[i]->dead != 0;
	sb_addf(o, "\t\t{   /* %zu stored pointers (first captured 0x%llx", n, (unsigned long long)rest[0]->v);
	if (dead)
		sb_addf(o, "; %zu into FREED buffers", dead);
	sb_adds(o, "); each row: offset in the bytes, the buffer it points into, the offset there */\n"
		"\t\t\tstatic const long long sp_[][3] = {\n");
	for (size_t i = 0; i < n; i++)
		sb_addf(o, "%s{ %llu, %d, %lld },%s", i % 4 ? " " : "\t\t\t\t", (unsigned long long)rest[i]->at,
			rest[i]->buf, (long long)rest[i]->delta, i % 4 == 3 || i + 1 == n ? "\n" : "");
	sb_adds(o, "\t\t\t};\n"
		"\t\t\tfor (size_t i_ = 0; i_ < sizeof(sp_) / sizeof(sp_[0]); i_++)\n"
		"\t\t\t\tput_ptr(h_, (size_t)sp_[i_][0], buf[sp_[i_][1]].ptr + sp_[i_][2]);\n"
		"\t\t}\n");
}

size_t emit_copy_in(struct strbuf *o, const struct memmap *mm, int id, uint64_t off, uint64_t dst,
		    const uint8_t *data, size_t len, const char *expr)
{
	struct words W = { NULL, 0, 0 };
	struct word **rest;
	size_t nrest = 0;

	memmap_scan_words(mm, data, len, memmap_first_aligned(dst), collect, &W);
	if (W.n <= IRREGULAR_LINES) {
		sb_addf(o, "\tSETUP(cuMemcpyHtoD(buf[%d].ptr + %llu, %s, %zu));\n", id, (unsigned long long)off, expr, len);
		for (size_t i = 0; i < W.n; i++)
			device_line(o, id, off, &W.w[i]);
		free(W.w);
		return W.n;
	}
	sb_addf(o, "\t{   /* these %zu bytes hold %zu stored pointers: pointed at this program's buffers in a host copy, "
		"then copied in once */\n"
		"\t\tunsigned char *h_ = (unsigned char *)malloc(%zu);\n"
		"\t\tif (!h_)\n\t\t\tsetup_failed(\"malloc\", CUDA_ERROR_OUT_OF_MEMORY);\n"
		"\t\tmemcpy(h_, %s, %zu);\n", len, W.n, len, expr, len);
	rest = xcalloc(W.n, sizeof(*rest));
	for (size_t i = 0; i < W.n;) {
		size_t r = run_len(W.w, W.n, i);
		if (r >= RUN_MIN) {
			run_loop(o, &W.w[i], r);
			i += r;
		} else {
			rest[nrest++] = &W.w[i++];
		}
	}
	irregular(o, rest, nrest);
	sb_addf(o, "\t\tSETUP(cuMemcpyHtoD(buf[%d].ptr + %llu, h_, %zu));\n\t\tfree(h_);\n\t}\n",
		id, (unsigned long long)off, len);
	free(rest);
	free(W.w);
	return W.n;
}
