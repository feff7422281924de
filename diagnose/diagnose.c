/*
 * diagnose.c - compute-sanitizer report -> parameter-level explanation
 * (see diagnose.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "../common/child.h"
#include "../common/interrupt.h"
#include "../common/strbuf.h"
#include "../common/util.h"
#include "../addr/memmap.h"
#include "../addr/tensormap.h"
#include "../addr/place.h"
#include "../trace/trace.h"
#include "../replay/sidechan.h"
#include "diagnose.h"
#include "../addr/params.h"

const char *diagnose_find_sanitizer(void)
{
	const char *env = getenv("GPUREDUCE_SANITIZER");
	if (env && *env)
		return access(env, X_OK) == 0 ? env : NULL;
	return child_find_program("compute-sanitizer", "/usr/local/cuda/bin");
}

/* Reports per sanitizer run: 1 unless diagnose_set_print_limit asked for
 * more (the first explains the fault; more let diagnose_sites_all see
 * errors that a reduction added behind it). */
static char san_print_limit[16] = "1";

void diagnose_set_print_limit(int n)
{
	snprintf(san_print_limit, sizeof(san_print_limit), "%d", n > 0 ? n : 1);
}

struct report {
	char what[160];          /* "write of 4 bytes" / "device-side assert" */
	char at[512];            /* "scale(...)+0x90" */
	char thread[64], block[64];
	unsigned long long addr;
	int have_addr;
	unsigned size;           /* bytes accessed, 0 unknown */
	int misaligned;          /* the report says the address is misaligned */
	char quote[400];         /* a device assert's own line (not part of the site) */
	int hw;                  /* a hardware exception (hw_report), no address */
};

static const char *find_after(const char *hay, const char *needle)
{
	const char *p = strstr(hay, needle);
	return p ? p + strlen(needle) : NULL;
}

static void copy_until(char *dst, size_t n, const char *src, const char *stops)
{
	size_t i = 0;
	while (src[i] && !strchr(stops, src[i]) && i + 1 < n) {
		dst[i] = src[i];
		i++;
	}
	dst[i] = 0;
}

/*
 * A hardware exception's report: an error line "========= Warp illegal
 * address" (or "Warp misaligned address", "Lane user stack overflow", ...:
 * Warp, Lane or Device and what the GPU raised), which compute-sanitizer
 * prints for an access memcheck did not instrument -- a TMA or other bulk
 * copy on Hopper -- with the faulting PC and thread but no address.  The
 * report's first line in out at or after p ("=========" included), or NULL.
 */
static const char *hw_report(const char *p)
{
	for (; (p = strstr(p, "=========")); p += 9) {
		const char *w = p + 9, *e;
		size_t n;
		if (p[9] == '=')
			continue;           /* (inside a longer run of '=') */
		while (*w == ' ')
			w++;
		e = strchr(w, '\n');
		n = e ? (size_t)(e - w) : strlen(w);
		if ((!strncmp(w, "Warp ", 5) || !strncmp(w, "Lane ", 5) ||
		     (!strncmp(w, "Device ", 7) && strncmp(w, "Device Frame", 12))) &&
		    !memmem(w, n, "ssert", 5))
			return p;
	}
	return NULL;
}

static int parse_report(const char *out, struct report *r)
{
	const char *p, *q;
	memset(r, 0, sizeof(r[0]));
	if ((p = strstr(out, "Invalid __"))) {
		/* "Invalid __global__ write of size 4 bytes" */
		const char *space = p + 10, *end = strstr(space, "__");
		char sp[32] = "";
		if (end && end - space < 30)
			snprintf(sp, sizeof(sp), "%.*s", (int)(end - space), space);
		const char *rw = end ? end + 3 : space;
		char verb[16] = "";
		copy_until(verb, sizeof(verb), rw, " ");
		q = find_after(p, "of size ");
		unsigned sz = q ? (unsigned)atoi(q) : 0;
		r->size = sz;
		snprintf(r->what, sizeof(r->what), "%s%s%s of %u bytes", sp, *sp ? " " : "", verb, sz);
	} else if ((p = strstr(out, "Misaligned"))) {
		copy_until(r->what, sizeof(r->what), p, "\n");
	} else if ((p = hw_report(out))) {
		p += 9;
		while (*p == ' ')
			p++;
		copy_until(r->what, sizeof(r->what), p, "\r\n");
		r->hw = 1;
	} else if ((p = strstr(out, "assert")) || (p = strstr(out, "Assert"))) {
		/* the assert's own words, as the kernel printed them (issue 24):
		 * "k.py:13: kern: block: [0,0,0], thread: [5,0,0] Assertion `...` failed." */
		const char *a = strstr(out, "Assertion `"), *b = a;
		while (b && b > out && b[-1] != '\n')
			b--;
		snprintf(r->what, sizeof(r->what), "device-side assert");
		if (b)
			snprintf(r->quote, sizeof(r->quote), "%.*s", (int)strcspn(b, "\n"), b);
	} else {
		return -1;
	}
	/* compute-sanitizer indents its "at KERNEL+0xPC" line; a bare "at "
	 * can sit inside the text a kernel printed ("const float *, ...") */
	if ((q = strstr(p, "  at "))) {
		q += 5;
		copy_until(r->at, sizeof(r->at), q, "\n");
	} else if ((q = find_after(p, "at "))) {
		copy_until(r->at, sizeof(r->at), q, "\n");
	}
	if ((q = find_after(p, "by thread ")))
		copy_until(r->thread, sizeof(r->thread), q, " ");
	if ((q = find_after(p, "in block ")))
		copy_until(r->block, sizeof(r->block), q, " \n");
	if (strstr(p, "misaligned") || strstr(p, "Misaligned"))
		r->misaligned = 1;
	if ((q = find_after(p, "Access to 0x")) || (q = find_after(p, "Address 0x"))) {
		r->addr = strtoull(q, NULL, 16);
		r->have_addr = 1;
	}
	return 0;
}

struct rbuf {
	size_t index;
	unsigned long long ptr, size;
};

struct role_find {
	size_t index;
	const struct tr_launch *l;
	struct strbuf *out;
	const struct trace *t;
	size_t ev;               /* the launch's record */
};

static int role_match(struct mm_alloc *a, uint32_t p, const char *type, uint32_t off, int dead,
		      void *arg)
{
	struct role_find *rf = arg;
	if (a->index != rf->index)
		return 0;
	params_role(rf->out, rf->l, p, type, off);
	{
		/* the word is a TMA tensor map's address (its word 0): say what map */
		uint32_t at = rf->l->params[p].offset + off;
		long rec = at % TR_TMAP_PARAM_ALIGN || at + TR_TMAP_BYTES > rf->l->argsize ? -1 :
			tmap_find(rf->t, rf->ev, rf->l->args + at);
		if (rec >= 0) {
			sb_adds(rf->out, ": ");
			tmap_describe(rf->out, &rf->t->rec[rec].u.tmap);
		}
	}
	if (dead)
		sb_adds(rf->out, " (a FREED buffer)");
	return 1;
}

struct holder_find {
	size_t index;            /* the buffer looked for */
	size_t off;              /* the word that points into it */
	int found;
};

static int holder_match(struct mm_alloc *a, size_t off, uint64_t v, int dead, void *arg)
{
	struct holder_find *h = arg;
	(void)v;
	(void)dead;
	if (a->index != h->index)
		return 0;
	h->off = off;
	h->found = 1;
	return 1;
}

/* A buffer no parameter points at, reached through a module variable (a
 * __constant__ or __device__ struct of pointers set with
 * cudaMemcpyToSymbol): the last copy into a module global whose bytes hold
 * a pointer into allocation `index` appends "; module global `plan`
 * points at it, its word at +8" to out. */
static void global_holder(const struct trace *t, size_t index, struct strbuf *out)
{
	struct memmap mm = MEMMAP_INIT;
	struct strbuf data = STRBUF_INIT, err = STRBUF_INIT;
	const char *name = NULL;
	size_t at = 0;

	for (size_t i = 0; i < t->nrec; i++) {
		const struct tr_rec *r = &t->rec[i];
		const struct tr_copy *cp = &r->u.copy;
		struct mm_alloc *g;
		struct holder_find h = { index, 0, 0 };
		if (memmap_feed(&mm, r, (long)i) || r->type != TR_MEMCPY_H2D || !cp->blob || cp->size > (1u << 20))
			continue;
		g = memmap_lookup_live(&mm, cp->dst);
		if (!g || g->kind != TR_MEM_GLOBAL || g->alloc_event < 0 ||
		    t->rec[g->alloc_event].type != TR_ALLOC || !t->rec[g->alloc_event].u.alloc.name)
			continue;
		sb_reset(&data);
		sb_reset(&err);
		if (trace_blob_read(t, cp->blob, &data, cp->size, &err) < 0)
			continue;
		memmap_scan_words(&mm, data.buf, data.len, memmap_first_aligned(cp->dst), holder_match, &h);
		if (h.found) {
			name = t->rec[g->alloc_event].u.alloc.name;
			at = (size_t)(cp->dst - g->addr) + h.off;
		}
	}
	if (name && *name)
		sb_addf(out, "; module global `%s` points at it, its word at +%zu", name, at);
	sb_release(&data);
	sb_release(&err);
	memmap_release(&mm);
}

/* Role of captured allocation `index` in the last launch: "param 0 `float *out`". */
static void role_of(const struct trace *t, size_t index, struct strbuf *out)
{
	struct memmap mm = MEMMAP_INIT;
	const struct tr_launch *l = NULL;
	size_t ev = 0;
	for (size_t i = 0; i < t->nrec; i++) {
		const struct tr_rec *r = &t->rec[i];
		if (!memmap_feed(&mm, r, (long)i) && r->type == TR_LAUNCH) {
			l = &r->u.launch;
			ev = i;
		}
	}
	if (l) {
		struct role_find rf = { index, l, out, t, ev };
		params_each_pointer(l, &mm, role_match, &rf);
	}
	if (!out->len)
		sb_addf(out, "buffer %zu", index);
	memmap_release(&mm);
}

/* role_of for the explanation, and for a buffer no parameter points at,
 * in held, the module variable that does (global_holder), to follow its
 * size: "buffer 1 (a 4096.0 KiB buffer; module global `plan` points at
 * it, its word at +8)".  The site keeps role_of's words: a state whose
 * data phase rewrote that variable is the same fault. */
static void role_told(const struct trace *t, size_t index, struct strbuf *out, struct strbuf *held)
{
	role_of(t, index, out);
	if (!strncmp(out->buf, "buffer ", 7))
		global_holder(t, index, held);
}

static unsigned last_shmem(const struct trace *t)
{
	unsigned v = 0;
	for (size_t i = 0; i < t->nrec; i++)
		if (t->rec[i].type == TR_LAUNCH)
			v = t->rec[i].u.launch.shmem;
	return v;
}

/* The buffer lines a verbose replay or repro printed in output (the side
 * channel, sidechan.h); lines that do not parse are skipped.  A buffer
 * printed again (a race's repro.cu places its buffers anew each try) is
 * where the later line says: the last try is the one that faulted. */
static size_t read_buffers(const char *output, struct rbuf **bufs)
{
	size_t nb = 0, ab = 0;
	const char *p = output;
	*bufs = NULL;
	for (; (p = sidechan_next(p, SC_BUFFER)); p++) {
		struct sc_buffer l;
		size_t k;
		if (sidechan_parse_buffer(p, &l) < 0)
			continue;
		for (k = 0; k < nb && (*bufs)[k].index != (size_t)l.index; k++)
			;
		if (k == nb) {
			ALLOC_GROW(*bufs, nb + 1, ab);
			nb++;
		}
		(*bufs)[k].index = (size_t)l.index;
		(*bufs)[k].ptr = l.ptr;
		(*bufs)[k].size = l.size;
	}
	return nb;
}

/* The buffer nearest to addr: *dist its distance (0 inside), *where 0
 * inside, 1 after its end, -1 before its start.  NULL when none. */
static const struct rbuf *nearest_buffer(const struct rbuf *bufs, size_t nb, unsigned long long addr,
					 unsigned long long *dist, int *where)
{
	const struct rbuf *best = NULL;
	*dist = ~0ull;
	*where = 0;
	for (size_t i = 0; i < nb; i++) {
		unsigned long long d;
		int w;
		if (addr >= bufs[i].ptr && addr < bufs[i].ptr + bufs[i].size) {
			d = 0;
			w = 0;
		} else if (addr >= bufs[i].ptr + bufs[i].size) {
			d = addr - (bufs[i].ptr + bufs[i].size) + 1;
			w = 1;
		} else {
			d = bufs[i].ptr - addr;
			w = -1;
		}
		if (d < *dist) {
			*dist = d;
			best = &bufs[i];
			*where = w;
		}
	}
	return best;
}

/* The module global (a gpureduce-global line of a verbose replay, see
 * sidechan.h) whose bytes hold addr: its name in name, offset in *off. */
static int find_global(const char *output, unsigned long long addr, char *name, size_t n,
		       unsigned long long *off, unsigned long long *size)
{
	const char *p = output;
	for (; (p = sidechan_next(p, SC_GLOBAL)); p++) {
		struct sc_global g;
		if (sidechan_parse_global(p, &g) < 0)
			continue;
		if (addr < g.ptr || addr - g.ptr >= (g.size ? g.size : 1))
			continue;
		snprintf(name, n, "%.*s", (int)g.name_len, g.name);
		*off = addr - g.ptr;
		*size = g.size;
		return 1;
	}
	return 0;
}

/* ": 1 byte into module global `x` (a 4 B variable), misaligned" */
static int explain_global(const char *output, const struct report *r, struct strbuf *out)
{
	char name[256], b[32];
	unsigned long long off, size;
	if (!find_global(output, r->addr, name, sizeof(name), &off, &size))
		return 0;
	sb_addf(out, ": %llu byte%s into module global `%s` (a %s variable)", off, off == 1 ? "" : "s",
		name, fmt_bytes(size, b));
	if (r->size > 1 && (r->misaligned || (!(r->size & (r->size - 1)) && r->addr % r->size)))
		sb_addf(out, ", misaligned (a %u-byte access must be %u-byte aligned)", r->size, r->size);
	else if (r->misaligned)
		sb_adds(out, ", misaligned");
	else if (off + r->size > size)
		sb_adds(out, ", running past its end");
	return 1;
}

/* Within this distance of a buffer an address is "near" it (an overrun of
 * that buffer); farther out it is a wild address. */
#define NEAR_BYTES (64ull << 20)

/* A hardware exception without an address (hw_report): say so, and list
 * what the launch had (the buffers replay printed, by their role), so the
 * reader can check the kernel's accesses against their sizes. */
static void explain_hw(const struct trace *red, const struct rbuf *bufs, size_t nb, struct strbuf *out)
{
	enum { SHOWN = 8 };
	sb_adds(out, ": compute-sanitizer reported no address (the GPU raised it on an access memcheck does "
		"not instrument, such as a TMA or other bulk copy through a descriptor)");
	for (size_t i = 0; red && i < nb && i < SHOWN; i++) {
		struct strbuf role = STRBUF_INIT, held = STRBUF_INIT;
		char b[32];
		role_told(red, bufs[i].index, &role, &held);
		sb_addf(out, "%s%s (a %s buffer%s)", i ? ", " : "; the launch's buffers: ", role.buf,
			fmt_bytes(bufs[i].size, b), held.buf);
		sb_release(&role);
		sb_release(&held);
	}
	if (red && nb > SHOWN)
		sb_addf(out, " and %zu more", nb - SHOWN);
}

int diagnose_explain(const char *output, const struct trace *red, struct strbuf *out)
{
	struct report r;
	struct rbuf *bufs = NULL;
	size_t nb;

	if (parse_report(output, &r) < 0 || (!r.have_addr && !strstr(r.what, "assert"))) {
		/* no address (a TMA access reports none): the launch's maps */
		if (diagnose_tmap_explain(output, red, out))
			return 0;
		if (!r.what[0])
			return -1;
	}
	nb = read_buffers(output, &bufs);
	sb_addf(out, "%s", r.what);
	if (r.quote[0])
		sb_addf(out, " (the kernel printed: %s)", r.quote);
	if (r.thread[0])
		sb_addf(out, " by thread %s of block %s", r.thread, r.block);
	if (r.at[0])
		sb_addf(out, " at %s", r.at);
	if (r.hw && !r.have_addr)
		explain_hw(red, bufs, nb, out);
	if (r.have_addr) {
		unsigned long long bestd;
		int where; /* 0 inside, 1 after, -1 before */
		const struct rbuf *best = nearest_buffer(bufs, nb, r.addr, &bestd, &where);
		if (explain_global(output, &r, out)) {
			/* named above */
		} else if (best && bestd < NEAR_BYTES) {
			struct strbuf role = STRBUF_INIT, held = STRBUF_INIT;
			char b[32];
			role_told(red, best->index, &role, &held);
			if (where == 0)
				sb_addf(out, ": inside %s (a %s buffer%s) at offset %llu -- a use of freed or unmapped memory",
					role.buf, fmt_bytes(best->size, b), held.buf, r.addr - best->ptr);
			else if (where > 0)
				sb_addf(out, ": %llu byte%s past the end of %s (a %s buffer%s)",
					bestd, bestd == 1 ? "" : "s", role.buf, fmt_bytes(best->size, b), held.buf);
			else
				sb_addf(out, ": %llu byte%s before the start of %s (a %s buffer%s)",
					bestd, bestd == 1 ? "" : "s", role.buf, fmt_bytes(best->size, b), held.buf);
			sb_release(&role);
			sb_release(&held);
		} else if (!strstr(r.what, "shared") && r.addr < (1ull << 20)) {
			sb_addf(out, ": address 0x%llx -- a null (or near-null) pointer dereference", r.addr);
		} else if (strstr(r.what, "shared") && r.addr < (1ull << 32)) {
			sb_addf(out, ": shared-memory offset %llu (0x%llx) is outside the block's shared memory "
				"(launch: %u bytes dynamic)", r.addr, r.addr, last_shmem(red));
		} else if (best) {
			struct strbuf role = STRBUF_INIT, held = STRBUF_INIT;
			char b[32], d[32];
			role_told(red, best->index, &role, &held);
			sb_addf(out, ": a wild address 0x%llx, %s %s %s (a %s buffer%s) -- a bad index or pointer",
				r.addr, fmt_bytes(bestd, d), where > 0 ? "past the end of" : "before", role.buf,
				fmt_bytes(best->size, b), held.buf);
			sb_release(&role);
			sb_release(&held);
		} else {
			sb_addf(out, ": address 0x%llx is far from every buffer (a wild pointer or index)", r.addr);
		}
	}
	free(bufs);
	return 0;
}

int diagnose_run(const char *bin_path, int guard, const char *kernel, struct strbuf *o, struct strbuf *err)
{
	struct strbuf path = STRBUF_INIT;
	struct child c = CHILD_INIT;
	const char *tmp = getenv("TMPDIR");
	int fd, early, ret = -1;

	if (!diagnose_find_sanitizer()) {
		sb_addf(err, "compute-sanitizer not found (set GPUREDUCE_SANITIZER or add it to PATH); "
			"the signature is all there is");
		return -1;
	}
	/* through a file, so that diagnose_collect can stop the run once its
	 * reports are out */
	sb_addf(&path, "%s/gpureduce-sanitizer-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if ((fd = mkstemp(path.buf)) < 0) {
		sb_addf(err, "cannot create a file for compute-sanitizer's output in %s: %s",
			tmp && *tmp ? tmp : "/tmp", strerror(errno));
		goto out;
	}
	close(fd);
	if (diagnose_start(bin_path, guard, kernel, path.buf, &c, err) < 0)
		goto out;
	ret = diagnose_collect(&c, path.buf, 180, o, &early, err);
out:
	if (fd >= 0)
		unlink(path.buf);
	sb_release(&path);
	return ret;
}

/*
 * Does this compute-sanitizer check only the kernels it is told to
 * (--kernel-name)?  Asked once a process, of its --help (the filter is
 * newer than some sanitizers gpureduce meets).  GPUREDUCE_SAN_FILTER=0
 * says no.
 */
static int san_filters_kernels(void)
{
	static int known = -1;
	const char *e = getenv("GPUREDUCE_SAN_FILTER");
	const char *san = diagnose_find_sanitizer();
	struct strbuf o = STRBUF_INIT, err = STRBUF_INIT;
	char *argv[] = { (char *)san, "--help", NULL };

	if (e && !strcmp(e, "0"))
		return 0;
	if (known >= 0 || !san)
		return known > 0;
	known = child_run(argv, NULL, CHILD_MERGE_ERR | CHILD_NULL_IN | CHILD_NEW_PGRP, &o, 20, &err) == 0 &&
		strstr(o.buf, "--kernel-name") != NULL;
	sb_release(&o);
	sb_release(&err);
	return known;
}

long diagnose_last_launch(const struct trace *t, size_t *launches)
{
	long last = -1;

	*launches = 0;
	for (size_t i = 0; i < t->nrec; i++) {
		if (t->rec[i].type == TR_GRAPH_LAUNCH)
			return -1;   /* a graph's nodes may fault after the last launch */
		if (t->rec[i].type == TR_LAUNCH) {
			last = (long)i;
			(*launches)++;
		}
	}
	return last;
}

int diagnose_kernel_filter(const struct trace *t, char *out, size_t n)
{
	size_t launches, len;
	long last = diagnose_last_launch(t, &launches);
	const char *name = last >= 0 ? t->rec[last].u.launch.name : NULL;
	char *base;

	if (!n)
		return 0;
	out[0] = 0;
	if (launches < 2 || !name || !*name)
		return 0;
	base = params_base_name(name);
	/* an identifier the sanitizer can match as it is, and not so short
	 * that it would match most kernels */
	len = strlen(base);
	if (len >= 3 && len < n && strspn(base, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == len)
		memcpy(out, base, len + 1);
	free(base);
	return out[0] != 0;
}

int diagnose_start(const char *bin_path, int guard, const char *kernel, const char *out_path, struct child *c,
		   struct strbuf *err)
{
	const char *san = diagnose_find_sanitizer();
	struct strbuf g = STRBUF_INIT, k = STRBUF_INIT;
	const char *env[] = { SC_REPLAY_ENV "=1", NULL };
	char *argv[20];
	int n = 0, ret;

	if (!san) {
		sb_addf(err, "compute-sanitizer not found");
		return -1;
	}
	sb_addf(&g, "--guard=%s", place_guard_name(guard));
	/* sh redirects the whole run's output into out_path */
	argv[n++] = "sh";
	argv[n++] = "-c";
	argv[n++] = "out=$1; shift; exec \"$@\" >\"$out\" 2>&1";
	argv[n++] = "sh";
	argv[n++] = (char *)out_path;
	argv[n++] = (char *)san;
	argv[n++] = "--target-processes";
	argv[n++] = "all";
	argv[n++] = "--print-limit";
	argv[n++] = san_print_limit;
	if (kernel && *kernel && san_filters_kernels()) {
		sb_addf(&k, "kns=%s", kernel);
		argv[n++] = "--kernel-name";
		argv[n++] = k.buf;
	}
	argv[n++] = (char *)self_exe();
	argv[n++] = "replay";
	argv[n++] = g.buf;
	argv[n++] = (char *)bin_path;
	argv[n] = NULL;
	*c = (struct child)CHILD_INIT;
	ret = child_start(c, argv, env, CHILD_NULL_IN | CHILD_NEW_PGRP | CHILD_DIE_WITH_PARENT, err);
	sb_release(&g);
	sb_release(&k);
	return ret;
}

/* The next report in a sanitizer run's output at or after p; NULL if none. */
static const char *next_report(const char *p)
{
	const char *a = strstr(p, "========= Invalid __"), *b = strstr(p, "========= Misaligned");
	const char *c = hw_report(p), *m = !a ? b : !b ? a : a < b ? a : b;
	return !m ? c : !c ? m : m < c ? m : c;
}

/* Is [p, e) a report's closing line ("=========" and blanks)? */
static int is_report_end(const char *p, const char *e)
{
	if ((size_t)(e - p) < 9 || strncmp(p, "=========", 9))
		return 0;
	for (p += 9; p < e; p++)
		if (*p != ' ' && *p != '\t' && *p != '\r')
			return 0;
	return 1;
}

int diagnose_complete_reports(const char *output)
{
	const char *p = output;
	int n = 0;

	while ((p = next_report(p))) {
		const char *q = strchr(p, '\n'), *e;
		int closed = 0;
		if (!q)
			break;
		for (q++; !closed && (e = strchr(q, '\n')); q = e + 1)
			closed = is_report_end(q, e);
		if (!closed)
			break;
		n++;
		p = q;
	}
	return n;
}

int diagnose_collect(struct child *c, const char *out_path, double timeout, struct strbuf *out,
		     int *early, struct strbuf *err)
{
	double deadline = now_sec() + timeout;
	int want = atoi(san_print_limit), st;
	off_t seen = -1;

	*early = 0;
	for (;;) {
		struct stat sb;
		int r = child_poll(c, &st);
		if (r != 0)
			break;              /* ended (or not ours to wait for) */
		/* compute-sanitizer goes on checking every thread of a faulting
		 * grid after the reports it prints (~0.13 ms per error: 15 s for
		 * 120k faulting threads on the H200): once it has printed all the
		 * reports it will print, the rest of its run tells us nothing */
		if (stat(out_path, &sb) == 0 && sb.st_size != seen) {
			struct strbuf o = STRBUF_INIT, e = STRBUF_INIT;
			seen = sb.st_size;
			if (read_file(out_path, &o, &e) == 0 && diagnose_complete_reports(o.buf) >= want)
				*early = 1;
			sb_release(&o);
			sb_release(&e);
			if (*early) {
				child_kill(c);
				break;
			}
		}
		if (now_sec() > deadline) {
			child_kill(c);
			sb_addf(err, "compute-sanitizer did not finish within %.0f s", timeout);
			return -1;
		}
		if (interrupt_signal()) {
			child_kill(c);
			sb_addf(err, "compute-sanitizer run stopped: interrupted");
			return -1;
		}
		usleep(50000);
	}
	return read_file(out_path, out, err);
}

int diagnose_sites_all(const char *output, const struct trace *t, char *sites, size_t n)
{
	struct strbuf bufs = STRBUF_INIT;
	const char *p = output;
	size_t used = 0;
	int found = 0;

	if (!n)
		return 0;
	sites[0] = 0;
	/* each report is read with the buffer lines replay printed first */
	for (const char *b = output; (b = sidechan_next(b, SC_BUFFER)); b++) {
		const char *e = strchr(b, '\n');
		sb_add(&bufs, b, e ? (size_t)(e - b + 1) : strlen(b));
	}
	while ((p = next_report(p))) {
		const char *next = next_report(p + 10);
		struct strbuf one = STRBUF_INIT;
		char site[700];
		sb_add(&one, bufs.buf, bufs.len);
		sb_add(&one, p, next ? (size_t)(next - p) : strlen(p));
		if (diagnose_site_rel(one.buf, t, site, sizeof(site)) == 0 && !strstr(sites, site) &&
		    used + strlen(site) + 4 < n) {
			used += (size_t)snprintf(sites + used, n - used, "%s%s", used ? " | " : "", site);
			found++;
		}
		sb_release(&one);
		if (!next)
			break;
		p = next;
	}
	sb_release(&bufs);
	return found;
}

int diagnose_site_rel(const char *output, const struct trace *t, char *site, size_t n)
{
	struct report r;
	struct rbuf *bufs = NULL;
	struct strbuf rel = STRBUF_INIT;
	size_t nb;

	if (parse_report(output, &r) < 0)
		return -1;
	nb = read_buffers(output, &bufs);
	if (r.have_addr) {
		unsigned long long d;
		int where;
		const struct rbuf *b = nearest_buffer(bufs, nb, r.addr, &d, &where);
		if (strstr(r.what, "shared") && r.addr < (1ull << 32)) {
			sb_adds(&rel, "; outside shared memory");
		} else if (b && d < NEAR_BYTES) {
			struct strbuf role = STRBUF_INIT;
			role_of(t, b->index, &role);
			sb_addf(&rel, "; %s %s", where == 0 ? "inside" : where > 0 ? "past the end of" : "before",
				role.buf);
			sb_release(&role);
		} else if (r.addr < (1ull << 20)) {
			sb_adds(&rel, "; a null pointer");
		} else {
			sb_adds(&rel, "; a wild address");
		}
	}
	snprintf(site, n, "%s at %s%s", r.what, r.at, rel.len ? rel.buf : "");
	sb_release(&rel);
	free(bufs);
	return 0;
}

int diagnose_trace(const struct trace *red, const char *bin_path, int guard, struct strbuf *out,
		   struct strbuf *err)
{
	struct strbuf o = STRBUF_INIT;
	char kernel[256];
	int ret = -1, filtered = diagnose_kernel_filter(red, kernel, sizeof(kernel)) && san_filters_kernels();

	/* only the last launch's kernel checked, the launches before it (a
	 * crash trace given to `gpureduce diagnose`; a hunt finding's cut when
	 * its slice could not be made) unchecked.  A run that reports nothing
	 * so is made again checking every kernel. */
	if (filtered && (diagnose_run(bin_path, guard, kernel, &o, err) < 0 ||
			 diagnose_explain(o.buf, red, out) < 0)) {
		sb_reset(&o);
		sb_reset(err);
		sb_reset(out);
		filtered = 0;
	}
	if (!filtered && diagnose_run(bin_path, guard, NULL, &o, err) < 0)
		goto out;
	if (!filtered && diagnose_explain(o.buf, red, out) < 0) {
		const char *l = strstr(o.buf, "=========");
		sb_addf(err, "compute-sanitizer reported no memory error%s%.200s",
			l ? "; it said: " : "", l ? l : "");
		for (char *p = err->buf; *p; p++)
			if (*p == '\n')
				*p = ' ';
		goto out;
	}
	ret = 0;
out:
	sb_release(&o);
	return ret;
}
