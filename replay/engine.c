/*
 * engine.c - the replay engine (see replay.h).
 *
 * One replay_trace() call walks a trace's records in order and re-issues
 * them through the driver table (drv.h): allocations become guard-placed
 * twins, copies and memsets go to the relocated addresses, launches run with
 * relocated parameter bytes and are synchronized one by one (the capture ran
 * under CUDA_LAUNCH_BLOCKING=1, so the first launch that returns a sticky
 * error is the faulting one).  At `stop_before` it can write a snapshot: a
 * new trace holding the state a launch needs (modules, buffers with their
 * current contents), which is how the reducer slices a trace at its fault.
 *
 * Everything a run allocates is released at its end unless the context
 * died; modules stay cached in the context for the next run.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/elf.h"
#include "../common/strbuf.h"
#include "../common/util.h"
#include "../trace/trace.h"
#include "../addr/graphs.h"
#include "../addr/memmap.h"
#include "../addr/place.h"
#include "devsel.h"
#include "../addr/tensormap.h"
#include "drv.h"
#include "fnpick.h"
#include "replay.h"
#include "backmap.h"
#include "launchattr.h"
#include "shift.h"
#include "sidechan.h"
#include "tensormap.h"

#ifndef TR_F_CAPTURED
#define TR_F_CAPTURED 0x2u
#endif

struct mod_entry {
	uint64_t hash;
	CUmodule mod;
};

struct fn_entry {
	uint64_t hash;           /* module image */
	char *name;
	CUfunction fn;
};

struct replay_ctx {
	struct drv d;
	CUdevice dev;
	int ndev;                /* devices the driver reports */
	CUcontext ctx;
	int dead;
	size_t gran;             /* VMM granularity; 0 when VMM is unavailable */
	CUresult gran_err;       /* why the granularity query failed (0: not asked or fine) */
	struct mod_entry *mods;
	size_t nmods, amods;
	struct fn_entry *fns;
	size_t nfns, afns;
};

/* Twin of a captured allocation: placed by place_core.inc (place.h), or
 * a module's __device__ variable. */
struct twin {
	struct pl_buf pb;
	CUdeviceptr ptr;         /* where the captured address 'addr' now lives */
	uint64_t size;
	int how;                 /* TWIN_PLACED, TWIN_GLOBAL */
	int mapped;
};
enum { TWIN_PLACED = 1, TWIN_GLOBAL = 3 };

/* name -> module records that define it */
struct sym_entry {
	const char *name;        /* points into names arena */
	size_t rec;              /* record index of the MODULE */
	uint64_t blob;
};

struct reloc_stats {
	size_t relocated, stray;
	size_t stored;           /* pointer words relocated in bytes copied in */
};

struct run {
	struct replay_ctx *c;
	const struct trace *t;
	const struct replay_opts *o;
	struct replay_result *res;
	struct memmap mm;
	struct sym_entry *syms;
	size_t nsyms, asyms;
	struct strbuf names;     /* NUL-separated symbol names */
	size_t *name_off;        /* offsets into names, parallel to syms while building */
	size_t unresolved;       /* copies/memsets to unknown addresses, skipped */
	size_t unguarded;        /* buffers guard placement had to give plain cuMemAlloc */
	struct attr_ref *attrs;  /* the FUNC_ATTR records, by kernel name, then in order */
	size_t nattrs, aattrs;
	struct attr_group *agroups; /* one per kernel name: its run in attrs */
	size_t nagroups;
	long launches;
	struct pl_layout layout; /* GUARD_LAYOUT: the one range every device buffer lives in */
	int have_layout;
	struct rtmap_stats tmap; /* TMA tensor maps rebuilt at launches (tensormap.c) */
	struct reloc_stats rel;  /* pointer words of launches: relocated, stray */
	struct backmap back;     /* twins -> captured addresses, for read-backs (backmap.h) */
	int have_back;
	struct shift shift;      /* GPUREDUCE_SHIFT=1: no buffer at its captured address (shift.c) */
	uint64_t attr_noted;     /* launch attribute ids already said not replayed */
	size_t *finfo;           /* FUNC_INFO record indexes, by (handle, record) */
	size_t nfinfo;
	uint64_t *skip;          /* replay_opts.skip_path's seqs, sorted */
	size_t nskip;
	struct pl_buf *recyc;    /* replay_opts.recycle: freed guard-placed buffers, still mapped */
	size_t nrecyc, arecyc;
	size_t recycled;         /* buffers placed in a freed one's range */
};

/* ---- the skip list (replay_opts.skip_path) ------------------------------------ */

/* Read the decimal seqs of path (one a line) into R->skip, sorted.  0, or
 * -1 with err. */
static int load_skips(struct run *R, const char *path, struct strbuf *err)
{
	struct strbuf text = STRBUF_INIT;
	size_t cap = 0;
	char *p, *end;
	if (read_file(path, &text, err) < 0) {
		sb_release(&text);
		return -1;
	}
	for (p = text.buf; *p;) {
		unsigned long long v;
		if (*p == '\n') {
			p++;
			continue;
		}
		errno = 0;
		v = strtoull(p, &end, 10);
		if (end == p || errno || (*end && *end != '\n')) {
			sb_addf(err, "%s: not a list of launch numbers (one a line)", path);
			sb_release(&text);
			return -1;
		}
		ALLOC_GROW(R->skip, R->nskip + 1, cap);
		R->skip[R->nskip++] = v;
		p = end;
	}
	if (R->nskip)
		qsort(R->skip, R->nskip, sizeof(*R->skip), u64_cmp);
	sb_release(&text);
	return 0;
}

/* 1 when r is a launch the skip list leaves out (stream-captured launches
 * run with their graph: never). */
static int skipped_launch(const struct run *R, const struct tr_rec *r)
{
	return R->nskip && r->type == TR_LAUNCH && !(r->u.launch.flags & TR_F_CAPTURED) &&
	       bsearch(&r->u.launch.seq, R->skip, R->nskip, sizeof(*R->skip), u64_cmp);
}

/* ---- context ---------------------------------------------------------- */

const char *replay_status_name(int status)
{
	static const char *const n[] = { "clean", "fault", "error", "timeout", "crash" };
	return status >= 0 && status <= 4 ? n[status] : "?";
}

int replay_ctx_dead(const struct replay_ctx *ctx)
{
	return ctx->dead;
}

int replay_ctx_devices(const struct replay_ctx *ctx)
{
	return ctx->ndev;
}

int replay_ctx_create(struct replay_ctx **out, struct strbuf *err)
{
	struct replay_ctx *c = xcalloc(1, sizeof(*c));
	CUresult r;
	int n = 0, ord = 0;

	*out = NULL;
	if (drv_load(&c->d, err) < 0)
		goto fail;
	if ((r = c->d.Init(0)) != CUDA_SUCCESS) {
		sb_addf(err, "cuInit failed: %s; is there a usable NVIDIA GPU?", drv_error_name(&c->d, r));
		goto fail;
	}
	if (c->d.DeviceGetCount(&n) != CUDA_SUCCESS || n < 1) {
		sb_addf(err, "no CUDA device found");
		goto fail;
	}
	c->ndev = n;
	if (devsel_worker_ordinal(n, &ord, err) < 0)
		goto fail;
	if ((r = c->d.DeviceGet(&c->dev, ord)) != CUDA_SUCCESS ||
	    (r = c->d.DevicePrimaryCtxRetain(&c->ctx, c->dev)) != CUDA_SUCCESS ||
	    (r = c->d.CtxSetCurrent(c->ctx)) != CUDA_SUCCESS) {
		sb_addf(err, "cannot create a CUDA context on device %d: %s", ord, drv_error_name(&c->d, r));
		goto fail;
	}
	if (c->d.MemGetAllocationGranularity && c->d.vmm.MemAddressReserve && c->d.vmm.MemCreate &&
	    c->d.vmm.MemMap && c->d.vmm.MemSetAccess && c->d.vmm.MemUnmap && c->d.vmm.MemRelease) {
		CUmemAllocationProp prop;
		size_t g = 0;
		memset(&prop, 0, sizeof(prop));
		prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
		prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
		prop.location.id = (int)c->dev;
		c->gran_err = c->d.MemGetAllocationGranularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
		if (c->gran_err == CUDA_SUCCESS && g >= 256 && !(g & (g - 1)))
			c->gran = g;
	}
	*out = c;
	return 0;
fail:
	free(c);
	return -1;
}

void replay_ctx_release(struct replay_ctx *c)
{
	if (!c)
		return;
	if (!c->dead) {
		for (size_t i = 0; i < c->nmods; i++)
			c->d.ModuleUnload(c->mods[i].mod);
	}
	for (size_t i = 0; i < c->nfns; i++)
		free(c->fns[i].name);
	free(c->fns);
	free(c->mods);
	free(c);
}

/* ---- modules and functions ------------------------------------------------ */

static int sym_cmp(const void *a, const void *b)
{
	const struct sym_entry *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	if (c)
		return c;
	return x->rec < y->rec ? -1 : x->rec > y->rec;
}

struct sym_collect {
	struct run *R;
	size_t rec;
	uint64_t blob;
};

static int collect_sym(const char *name, int kind, void *arg)
{
	struct sym_collect *sc = arg;
	struct run *R = sc->R;
	(void)kind;
	ALLOC_GROW(R->syms, R->nsyms + 1, R->asyms);
	R->syms[R->nsyms].rec = sc->rec;
	R->syms[R->nsyms].blob = sc->blob;
	R->syms[R->nsyms].name = (const char *)(uintptr_t)R->names.len; /* fixed up below */
	R->nsyms++;
	sb_add(&R->names, name, strlen(name) + 1);
	return 0;
}

/* The FUNC_INFO records (1.5), sorted by handle, then record index. */
static const struct trace *finfo_trace;   /* qsort has no context argument */
static int finfo_cmp(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	uint64_t fx = finfo_trace->rec[x].u.func_info.func, fy = finfo_trace->rec[y].u.func_info.func;
	if (fx != fy)
		return fx < fy ? -1 : 1;
	return x < y ? -1 : x > y;
}

static void build_finfo(struct run *R)
{
	for (size_t i = 0; i < R->t->nrec; i++)
		R->nfinfo += R->t->rec[i].type == TR_FUNC_INFO;
	if (!R->nfinfo)
		return;
	R->finfo = xcalloc(R->nfinfo, sizeof(*R->finfo));
	R->nfinfo = 0;
	for (size_t i = 0; i < R->t->nrec; i++)
		if (R->t->rec[i].type == TR_FUNC_INFO)
			R->finfo[R->nfinfo++] = i;
	finfo_trace = R->t;
	qsort(R->finfo, R->nfinfo, sizeof(*R->finfo), finfo_cmp);
}

/* What capture said of the function launch l ran: the latest FUNC_INFO
 * before record `before` for its handle and name (a handle is reused after
 * a module unload: the capture writes it again); NULL when none. */
static const struct tr_func_info *launch_finfo(const struct run *R, const struct tr_launch *l, size_t before)
{
	size_t lo = 0, hi = R->nfinfo;
	const struct tr_func_info *best = NULL;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (R->t->rec[R->finfo[mid]].u.func_info.func < l->func)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (; lo < R->nfinfo && R->finfo[lo] < before; lo++) {
		const struct tr_func_info *in = &R->t->rec[R->finfo[lo]].u.func_info;
		if (in->func != l->func)
			break;
		if (!strcmp(in->name, l->name))
			best = in;
	}
	return best;
}

/* Build the symbol index over every ELF module of the trace. */
static int build_symbols(struct run *R, struct strbuf *err)
{
	struct strbuf img = STRBUF_INIT;
	int ret = -1;

	for (size_t i = 0; i < R->t->nrec; i++) {
		const struct tr_rec *r = &R->t->rec[i];
		struct sym_collect sc = { R, i, 0 };
		if (r->type != TR_MODULE || r->u.module.kind != TR_MOD_ELF)
			continue;
		sb_reset(&img);
		if (trace_blob_read(R->t, r->u.module.blob, &img, 0, err) < 0)
			goto out;
		sc.blob = r->u.module.blob;
		if (elf_symbols(img.buf, img.len, collect_sym, &sc) < 0) {
			sb_addf(err, "%s: module at event %zu is not a readable ELF image", R->t->path, i);
			goto out;
		}
	}
	for (size_t i = 0; i < R->nsyms; i++)
		R->syms[i].name = R->names.buf + (uintptr_t)R->syms[i].name;
	if (R->nsyms)
		qsort(R->syms, R->nsyms, sizeof(*R->syms), sym_cmp);
	build_finfo(R);
	ret = 0;
out:
	sb_release(&img);
	return ret;
}

/* The module (by record) defining name, loaded latest before event `before`;
 * NULL if none.  Falls back to a module loaded later (lazy loading can make
 * CUPTI report a module after the first launch resolved it). */
static const struct sym_entry *find_symbol(const struct run *R, const char *name, size_t before)
{
	size_t lo = 0, hi = R->nsyms;
	const struct sym_entry *best = NULL, *later = NULL;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(R->syms[mid].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < R->nsyms && !strcmp(R->syms[i].name, name); i++) {
		if (R->syms[i].rec < before)
			best = &R->syms[i];
		else if (!later)
			later = &R->syms[i];
	}
	return best ? best : later;
}

struct global_print {
	struct replay_ctx *c;
	CUmodule mod;
};

static int print_global(const char *name, int kind, void *arg)
{
	struct global_print *g = arg;
	CUdeviceptr p = 0;
	size_t size = 0;

	if (kind == ELF_SYM_OBJECT && g->c->d.ModuleGetGlobal &&
	    g->c->d.ModuleGetGlobal(&p, &size, g->mod, name) == CUDA_SUCCESS && p) {
		struct sc_global l = { p, size, name, 0 };
		sidechan_print_global(stderr, &l);
	}
	return 0;
}

/* Verbose replays (diagnose; sidechan.h) say where each loaded module's
 * __device__ variables are, so an access inside one is named as such. */
static void print_globals(struct replay_ctx *c, CUmodule mod, const struct strbuf *img)
{
	struct global_print g = { c, mod };
	if (sidechan_replay_on())
		elf_symbols(img->buf, img->len, print_global, &g);
}

static int load_module(struct run *R, uint64_t hash, CUmodule *out, struct strbuf *err)
{
	struct replay_ctx *c = R->c;
	struct strbuf img = STRBUF_INIT;
	CUresult r;
	int ret = -1;

	for (size_t i = 0; i < c->nmods; i++)
		if (c->mods[i].hash == hash) {
			*out = c->mods[i].mod;
			return 0;
		}
	if (trace_blob_read(R->t, hash, &img, 0, err) < 0)
		goto out;
	r = c->d.ModuleLoadData(out, img.buf);
	if (r != CUDA_SUCCESS) {
		sb_addf(err, "cuModuleLoadData failed for module %016llx: %s%s", (unsigned long long)hash,
			drv_error_name(&c->d, r),
			r == CUDA_ERROR_NO_BINARY_FOR_GPU || r == CUDA_ERROR_INVALID_IMAGE ?
			" (captured on a different GPU architecture?)" : "");
		goto out;
	}
	ALLOC_GROW(c->mods, c->nmods + 1, c->amods);
	c->mods[c->nmods].hash = hash;
	c->mods[c->nmods].mod = *out;
	c->nmods++;
	print_globals(c, *out, &img);
	ret = 0;
out:
	sb_release(&img);
	return ret;
}

/* The function `name` of the module image `blob` (loaded once, cached). */
static int function_in(struct run *R, const char *name, uint64_t blob, CUfunction *fn, struct strbuf *err)
{
	struct replay_ctx *c = R->c;
	CUmodule mod;
	CUresult r;

	for (size_t i = 0; i < c->nfns; i++)
		if (c->fns[i].hash == blob && !strcmp(c->fns[i].name, name)) {
			*fn = c->fns[i].fn;
			return 0;
		}
	if (load_module(R, blob, &mod, err) < 0)
		return -1;
	r = c->d.ModuleGetFunction(fn, mod, name);
	if (r != CUDA_SUCCESS) {
		sb_addf(err, "cuModuleGetFunction(%s) failed: %s", name, drv_error_name(&c->d, r));
		return -1;
	}
	ALLOC_GROW(c->fns, c->nfns + 1, c->afns);
	c->fns[c->nfns].hash = blob;
	c->fns[c->nfns].name = xstrdup(name);
	c->fns[c->nfns].fn = *fn;
	c->nfns++;
	return 0;
}

/* 1 when a should be tried before b for a launch at record `before`. */
static int sym_later_pick(const struct sym_entry *a, const struct sym_entry *b, size_t before)
{
	int ab = a->rec < before, bb = b->rec < before;
	if (ab != bb)
		return ab;
	return ab ? a->rec > b->rec : a->rec < b->rec;
}

/*
 * The function launch l at record `before` ran.  Several captured modules
 * can define the same name: a JIT compiles one kernel once per
 * configuration (Triton's autotuner, torch.compile's Inductor: the same
 * name with another num_warps, or another build with other parameters).
 * The LAUNCH record names the function, not its module; the FUNC_INFO
 * record of its handle (1.5) says its attributes.  Candidates are taken
 * in the order: loaded before the launch, newest first, then loaded
 * after, oldest first; the first that passes the strictest test wins
 * (fnpick_core.inc, through fnpick.c):
 *   0  its attributes are the FUNC_INFO's, it runs the block, parameters agree
 *   1  its max threads per block is the block's (a .reqntid build refuses
 *      any other block), parameters agree
 *   2  it runs the block, parameters agree
 *   3  it runs the block
 * A wrong one makes the launch fail with CUDA_ERROR_INVALID_VALUE (or run
 * another build's code).  With one candidate it is taken as it is.
 * ch: which candidate of how many, and at which test (for the error of a
 * refused launch); *used (when not NULL): the module entry taken.
 */
struct fn_choice {
	size_t which, ncand;
	int matched;
};

static int get_function(struct run *R, const struct tr_launch *l, size_t before, CUfunction *fn,
			struct fn_choice *ch, const struct sym_entry **used, struct strbuf *err)
{
	const char *name = l->name;
	const struct sym_entry *s = find_symbol(R, name, before), *cand[64];
	CUfunction fns[64];
	size_t lo = 0, hi = R->nsyms, n = 0, k;
	int pick, loose;

	memset(ch, 0, sizeof(*ch));
	if (used)
		*used = s;
	if (!s) {
		size_t nmod = 0;
		for (size_t i = 0; i < R->t->nrec; i++)
			nmod += R->t->rec[i].type == TR_MODULE;
		sb_addf(err, "kernel %s is in none of the trace's %zu captured modules "
			"(was its module loaded before capture started?)", name, nmod);
		return -1;
	}
	/* candidates: loaded before the launch, newest first; then after, oldest first */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(R->syms[mid].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (hi = lo; hi < R->nsyms && !strcmp(R->syms[hi].name, name); hi++)
		;
	for (k = lo; k < hi && n < 64; k++)
		cand[n++] = &R->syms[k];
	/* order: before the launch (newest first), then after (oldest first) */
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && sym_later_pick(cand[j], cand[j - 1], before); j--) {
			const struct sym_entry *x = cand[j];
			cand[j] = cand[j - 1];
			cand[j - 1] = x;
		}
	ch->ncand = n;
	ch->matched = 1;
	if (n <= 1)
		return function_in(R, name, s->blob, fn, err);
	for (k = 0; k < n; k++) {
		struct strbuf e = STRBUF_INIT;
		if (function_in(R, name, cand[k]->blob, &fns[k], &e) < 0)
			fns[k] = NULL;   /* no such function there: not a candidate */
		sb_release(&e);
	}
	pick = fnpick_choose(&R->c->d, l, launch_finfo(R, l, before), fns, (int)n, &loose);
	if (pick >= 0) {
		*fn = fns[pick];
		ch->which = (size_t)pick;
		ch->matched = !loose;
		if (used)
			*used = cand[pick];
		return 0;
	}
	ch->matched = 0;
	for (k = 0; k < n && cand[k] != s; k++)
		;
	ch->which = k;
	return function_in(R, name, s->blob, fn, err);   /* none fits: the launch says why */
}

/* ---- allocations ------------------------------------------------------- */

static int set_fault(struct run *R, size_t ev, CUresult r, const char *kernel, long long seq);
static int set_error(struct run *R, size_t ev, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* GUARD_LAYOUT: reserve the range covering every device allocation the
 * records before `end` make.  RS_CLEAN, or RS_ERROR when the span cannot be
 * reserved (the reducer then tries guard placement). */
static int layout_open(struct run *R, size_t end)
{
	struct replay_ctx *c = R->c;
	uint64_t lo, hi, origin, reserve;
	CUresult r;

	/* which buffers, and their span: the rule repro.cu is written by */
	if (place_layout_span(R->t, end, &lo, &hi) < 0)
		return RS_CLEAN;   /* no device buffers: nothing to lay out */
	if (!c->gran && c->gran_err != CUDA_SUCCESS)
		return set_error(R, 0, "layout-faithful placement: cuMemGetAllocationGranularity on device %d "
				 "failed: %s; use --guard=end", (int)c->dev, drv_error_name(&c->d, c->gran_err));
	if (!c->gran)
		return set_error(R, 0, "layout-faithful placement needs virtual memory management "
				 "(cuMemAddressReserve), which this driver lacks; use --guard=end");
	if (place_layout_plan(lo, hi, c->gran, &origin, &reserve) < 0)
		return set_error(R, 0, "layout-faithful placement: the captured buffers span %llu bytes "
				 "(0x%llx..0x%llx), more than it reserves; use --guard=end",
				 (unsigned long long)(hi - lo), (unsigned long long)lo, (unsigned long long)hi);
	r = place_layout_open(&c->d.vmm, &R->layout, lo, hi, c->gran, (int)c->dev);
	if (r != CUDA_SUCCESS)
		return drv_is_sticky(r) ? set_fault(R, 0, r, NULL, -1) :
			set_error(R, 0, "layout-faithful placement: reserving %llu bytes failed: %s; "
				  "use --guard=end", (unsigned long long)reserve, drv_error_name(&c->d, r));
	R->have_layout = 1;
	return RS_CLEAN;
}

/*
 * replay_opts.recycle (hunt): a freed guard-placed buffer is not unmapped;
 * its range waits for the next buffer with the same placement (reserve,
 * mapped part: the same rounded size), which takes it whole, at the
 * offset its own size gives, against the same guard.  That is what a
 * caching allocator does with a block, and it saves the driver calls of a
 * placement and a free (~110 us a buffer on the H200: hunt's replays of a
 * training loop were mostly these).  A stale pointer into the freed
 * buffer then reaches the later one instead of faulting: hunt looks for
 * overruns; shrink and replay, which reproduce use-after-free faults,
 * never recycle.
 */
static int recycle_take(struct run *R, const struct tr_alloc *a, struct twin *tw)
{
	struct pl_placement p;
	int guard = place_guard_mode(R->o->guard);
	if (!R->o->recycle || !R->nrecyc || R->shift.on || !R->c->gran ||
	    place_compute(a->size, a->addr, R->c->gran, guard, &p) < 0)
		return 0;
	for (size_t i = R->nrecyc; i-- > 0;) {
		struct pl_buf *b = &R->recyc[i];
		if (b->reserve != p.reserve || b->map_off != p.map_off || b->map_size != p.map_size)
			continue;
		tw->pb = *b;
		tw->pb.size = a->size;
		tw->pb.ptr = b->base + p.buf_off;
		R->recyc[i] = R->recyc[--R->nrecyc];
		R->recycled++;
		return 1;
	}
	return 0;
}

/* Keep tw's range for recycle_take (1), or 0 when it is not a mapped
 * guard-placed buffer of a recycling run. */
static int recycle_put(struct run *R, struct twin *tw)
{
	if (!R->o->recycle || R->shift.on || R->c->dead || tw->how != TWIN_PLACED || tw->pb.how != PL_HOW_GUARD ||
	    !tw->pb.mapped)
		return 0;
	ALLOC_GROW(R->recyc, R->nrecyc + 1, R->arecyc);
	R->recyc[R->nrecyc++] = tw->pb;
	memset(&tw->pb, 0, sizeof(tw->pb));   /* (PL_HOW_NONE: the range is not its any more) */
	tw->mapped = 0;
	return 1;
}

static CUresult twin_create(struct run *R, const struct tr_alloc *a, size_t ev, struct twin *tw)
{
	struct replay_ctx *c = R->c;
	CUresult r;

	memset(tw, 0, sizeof(*tw));
	tw->size = a->size;
	if (a->kind == TR_MEM_GLOBAL && a->name && *a->name && c->d.ModuleGetGlobal) {
		const struct sym_entry *s = find_symbol(R, a->name, ev);
		CUmodule mod;
		size_t gsz = 0;
		struct strbuf e2 = STRBUF_INIT;
		/* a variable smaller than the one recorded is another module's
		 * of the same name: the bytes would not fit, a plain buffer takes them */
		if (s && load_module(R, s->blob, &mod, &e2) == 0 &&
		    c->d.ModuleGetGlobal(&tw->ptr, &gsz, mod, a->name) == CUDA_SUCCESS && gsz >= a->size) {
			tw->how = TWIN_GLOBAL;
			tw->mapped = 1;
			sb_release(&e2);
			return CUDA_SUCCESS;
		}
		sb_release(&e2);
		/* fall through: a plain buffer holds its bytes at least */
	}
	if (R->have_layout && place_layout_kind(a->kind))
		r = place_layout_alloc(&c->d.vmm, &R->layout, &tw->pb, a->addr, a->size);
	else if (recycle_take(R, a, tw))
		r = CUDA_SUCCESS;
	else {
		int guard = place_guard_mode(R->o->guard);
		shift_pad(&R->shift, &c->d.vmm, c->gran);
		r = place_guard_alloc(&c->d.vmm, &tw->pb, a->size, a->addr, c->gran, guard, (int)c->dev);
		if (r == CUDA_SUCCESS && shift_collides(&R->shift, &tw->pb, a->addr, a->size)) {
			/* it landed on its captured range: keep that one out of the way, place again */
			struct pl_buf keep = tw->pb;
			shift_pad(&R->shift, &c->d.vmm, c->gran);
			r = place_guard_alloc(&c->d.vmm, &tw->pb, a->size, a->addr, c->gran, guard, (int)c->dev);
			place_buf_destroy(&c->d.vmm, NULL, &keep);
		}
		/* said, not hidden: an overrun may not fault in such a buffer */
		if (r == CUDA_SUCCESS && guard != GUARD_NONE && tw->pb.how == PL_HOW_ALLOC)
			R->unguarded++;
	}
	if (r != CUDA_SUCCESS)
		return r;
	tw->how = TWIN_PLACED;
	tw->mapped = 1;
	tw->ptr = tw->pb.ptr;
	return CUDA_SUCCESS;
}

/* Make the twin inaccessible but keep its addresses reserved (VMM), so a
 * stale pointer into it faults. */
static void twin_kill(struct run *R, struct twin *tw)
{
	if (!tw->mapped || R->c->dead)
		return;
	if (tw->how == TWIN_PLACED)
		place_buf_unmap(&R->c->d.vmm, R->have_layout ? &R->layout : NULL, &tw->pb);
	tw->mapped = 0;
}

static void twin_destroy(struct run *R, struct twin *tw)
{
	twin_kill(R, tw);
	if (tw->how == TWIN_PLACED && !R->c->dead)
		place_buf_destroy(&R->c->d.vmm, R->have_layout ? &R->layout : NULL, &tw->pb);
	free(tw);
}

struct reloc {
	uint8_t *args;
	unsigned n;
};

/* Launch words that look like device addresses yet point into no captured
 * buffer (memmap_stray_word): pointers replay cannot relocate (reported,
 * not fatal). */
static void count_stray(struct run *R, const struct tr_launch *l)
{
	R->rel.stray += memmap_stray_args(&R->mm, l, NULL, NULL);
}

/* A pointer word of the parameter bytes: the same offset in its twin. */
static int relocate_word(struct mm_alloc *a, size_t off, uint64_t v, int dead, void *arg)
{
	struct reloc *rl = arg;
	struct twin *tw = a->user;
	CUdeviceptr nv;
	(void)dead;
	if (!tw)
		return 0;
	nv = tw->ptr + (v - a->addr);
	if (nv) {
		memcpy(rl->args + off, &nv, 8);
		rl->n++;
	}
	return 0;
}

/* Relocate every pointer word (memmap_scan_args: not the words the trace
 * knows are integers) of l's parameter bytes, copied to args, in place;
 * returns how many were. */
static unsigned relocate_args(const struct run *R, const struct tr_launch *l, uint8_t *args)
{
	struct reloc rl = { args, 0 };
	memmap_scan_args(&R->mm, l, args, 0, l->argsize, relocate_word, &rl);
	return rl.n;
}

/* ---- results ----------------------------------------------------------- */

static int set_fault(struct run *R, size_t ev, CUresult r, const char *kernel, long long seq)
{
	struct replay_result *res = R->res;
	res->status = RS_FAULT;
	res->event = (long)ev;
	res->code = (int)r;
	res->launch_seq = seq;
	snprintf(res->error, sizeof(res->error), "%s", drv_error_name(&R->c->d, r));
	snprintf(res->kernel, sizeof(res->kernel), "%s", kernel ? kernel : "");
	R->c->dead = 1;
	return RS_FAULT;
}

static int set_error(struct run *R, size_t ev, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static int set_error(struct run *R, size_t ev, const char *fmt, ...)
{
	va_list ap;
	struct replay_result *res = R->res;
	res->status = RS_ERROR;
	res->event = (long)ev;
	va_start(ap, fmt);
	vsnprintf(res->msg, sizeof(res->msg), fmt, ap);
	va_end(ap);
	return RS_ERROR;
}

/* A driver error during a non-launch operation: sticky means the context
 * died (a fault surfacing late), anything else is a replay error. */
static int op_failed(struct run *R, size_t ev, CUresult r, const char *what, const char *kernel,
		     long long seq)
{
	if (drv_is_sticky(r))
		return set_fault(R, ev, r, kernel, seq);
	return set_error(R, ev, "event %zu: %s failed: %s", ev, what, drv_error_name(&R->c->d, r));
}

/* ---- record handlers ------------------------------------------------------ */

static int do_alloc(struct run *R, size_t ev, const struct tr_alloc *a)
{
	struct twin *tw = xmalloc(sizeof(*tw));
	CUresult r = twin_create(R, a, ev, tw);
	struct mm_alloc *m;

	if (r != CUDA_SUCCESS) {
		free(tw);
		return op_failed(R, ev, r, "allocation", NULL, -1);
	}
	/* an allocation that replaces a live one retires that one's twin */
	struct mm_alloc *old = memmap_lookup_live(&R->mm, a->addr);
	m = memmap_add(&R->mm, a->addr, a->size, a->kind, (long)ev);
	if (old && old != m && old->free_event >= 0 && old->user)
		twin_kill(R, old->user);
	m->user = tw;
	if (sidechan_replay_on()) {
		struct sc_buffer l = { m->index, tw->ptr, a->size };
		sidechan_print_buffer(stderr, &l);
	}
	return RS_CLEAN;
}

static int do_free(struct run *R, size_t ev, const struct tr_free *f)
{
	struct mm_alloc *m = memmap_free(&R->mm, f->addr, (long)ev);
	if (m && m->user && !recycle_put(R, m->user))
		twin_kill(R, m->user);
	return RS_CLEAN;
}

/* Translate [addr, addr+size) into the twin; 0 and a note if unknown. */
static CUdeviceptr target(struct run *R, uint64_t addr, uint64_t size)
{
	struct mm_alloc *a = memmap_lookup_live(&R->mm, addr);
	struct twin *tw;
	if (!a || !a->user || addr + size > a->addr + a->size + 0) {
		R->unresolved++;
		return 0;
	}
	tw = a->user;
	if (!tw->mapped) {
		R->unresolved++;
		return 0;
	}
	return tw->ptr + (addr - a->addr);
}

/* Bytes move between host and device in pieces of this size (fills,
 * snapshots), so a 4 GB buffer needs 64 MiB of host memory, not 4 GB. */
#define CHUNK (64ull << 20)

/* A seeded fill stored without its bytes (TR_F_FILL, blob 0): generated
 * here, chunk by chunk. */
static int fill_twin(struct run *R, size_t ev, CUdeviceptr dst, uint64_t size, uint32_t seed)
{
	uint8_t *h = xmalloc(size < CHUNK ? size : CHUNK);
	uint32_t x = seed;
	int ret = RS_CLEAN;
	for (uint64_t done = 0, len; done < size && ret == RS_CLEAN; done += len) {
		CUresult r;
		len = size - done < CHUNK ? size - done : CHUNK;
		fill_xorshift(h, len, &x);
		r = R->c->d.MemcpyHtoD(dst + done, h, len);
		if (r != CUDA_SUCCESS)
			ret = op_failed(R, ev, r, "host-to-device copy (seeded fill)", NULL, -1);
	}
	free(h);
	return ret;
}

static int do_h2d(struct run *R, size_t ev, const struct tr_copy *cp)
{
	struct strbuf data = STRBUF_INIT, err = STRBUF_INIT;
	CUdeviceptr dst = target(R, cp->dst, cp->size);
	CUresult r;
	int ret = RS_CLEAN;

	if (!dst || !cp->size)
		goto out;
	if ((cp->flags & TR_F_FILL) && !cp->blob) {
		ret = fill_twin(R, ev, dst, cp->size, (uint32_t)cp->src);
		goto out;
	}
	if (trace_blob_read(R->t, cp->blob, &data, 0, &err) < 0) {
		ret = set_error(R, ev, "event %zu: %s", ev, err.buf);
		goto out;
	}
	if (data.len != cp->size) {
		ret = set_error(R, ev, "event %zu: copy of %llu bytes has a %zu-byte payload", ev,
				(unsigned long long)cp->size, data.len);
		goto out;
	}
	{
		/* device pointers stored in the bytes (a table of pointers, a
		 * checkpoint of one) move with their buffers, as launch words do */
		struct reloc rl = { (uint8_t *)data.buf, 0 };
		memmap_scan_words(&R->mm, data.buf, data.len, memmap_first_aligned(cp->dst), relocate_word, &rl);
		R->rel.stored += rl.n;
	}
	r = R->c->d.MemcpyHtoD(dst, data.buf, data.len);
	if (r != CUDA_SUCCESS)
		ret = op_failed(R, ev, r, "host-to-device copy", NULL, -1);
out:
	sb_release(&data);
	sb_release(&err);
	return ret;
}

static int do_d2d(struct run *R, size_t ev, const struct tr_copy *cp)
{
	CUdeviceptr dst = target(R, cp->dst, cp->size), src = target(R, cp->src, cp->size);
	CUresult r;
	if (!dst || !src || !cp->size)
		return RS_CLEAN;
	r = R->c->d.MemcpyDtoD(dst, src, cp->size);
	return r == CUDA_SUCCESS ? RS_CLEAN : op_failed(R, ev, r, "device-to-device copy", NULL, -1);
}

static int do_memset(struct run *R, size_t ev, const struct tr_memset *m)
{
	struct drv *d = &R->c->d;
	uint64_t h = m->height ? m->height : 1;
	uint64_t span = m->pitch && h > 1 ? m->pitch * (h - 1) + m->width * m->elem_size
					 : m->width * m->elem_size;
	CUdeviceptr dst = target(R, m->dst, span);
	CUresult r;

	if (!dst || !m->width)
		return RS_CLEAN;
	if (h > 1 && m->pitch) {
		if (m->elem_size == 1 && d->MemsetD2D8)
			r = d->MemsetD2D8(dst, m->pitch, (unsigned char)m->value, m->width, h);
		else if (m->elem_size == 2 && d->MemsetD2D16)
			r = d->MemsetD2D16(dst, m->pitch, (unsigned short)m->value, m->width, h);
		else if (m->elem_size == 4 && d->MemsetD2D32)
			r = d->MemsetD2D32(dst, m->pitch, m->value, m->width, h);
		else
			return set_error(R, ev, "event %zu: 2D memset unsupported by this driver", ev);
	} else if (m->elem_size == 1) {
		r = d->MemsetD8(dst, (unsigned char)m->value, m->width);
	} else if (m->elem_size == 2) {
		r = d->MemsetD16(dst, (unsigned short)m->value, m->width);
	} else {
		r = d->MemsetD32(dst, m->value, m->width);
	}
	return r == CUDA_SUCCESS ? RS_CLEAN : op_failed(R, ev, r, "memset", NULL, -1);
}

/* FUNC_ATTR records, grouped by kernel.  A launch applies those of its
 * kernel recorded before it and not yet applied to its function: cuBLAS
 * sets an attribute before every GEMM, so a window of 170,000 launches
 * holds tens of thousands, and walking them all at every launch made
 * replay five times slower than the program. */
struct attr_ref {
	const char *name;
	size_t rec;
};

struct attr_group {
	size_t first, n;         /* its records: attrs[first .. first+n) */
	size_t applied;          /* how many of them fn has had */
	CUfunction fn;
};

static int attr_ref_cmp(const void *a, const void *b)
{
	const struct attr_ref *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	return c ? c : (x->rec > y->rec) - (x->rec < y->rec);
}

static void attrs_index(struct run *R)
{
	const struct trace *t = R->t;
	for (size_t i = 0; i < t->nrec; i++)
		if (t->rec[i].type == TR_FUNC_ATTR) {
			ALLOC_GROW(R->attrs, R->nattrs + 1, R->aattrs);
			R->attrs[R->nattrs].name = t->rec[i].u.func_attr.kernel ? t->rec[i].u.func_attr.kernel : "";
			R->attrs[R->nattrs++].rec = i;
		}
	if (!R->nattrs)
		return;
	qsort(R->attrs, R->nattrs, sizeof(*R->attrs), attr_ref_cmp);
	R->agroups = xcalloc(R->nattrs, sizeof(*R->agroups));
	for (size_t i = 0; i < R->nattrs; i++) {
		if (!i || strcmp(R->attrs[i].name, R->attrs[i - 1].name))
			R->agroups[R->nagroups++].first = i;
		R->agroups[R->nagroups - 1].n++;
	}
}

/* Set the function attributes recorded for this kernel before event
 * `before`: the ones fn has not had yet (all of them for a new fn). */
static void apply_attrs(struct run *R, CUfunction fn, const char *name, size_t before)
{
	size_t lo = 0, hi = R->nagroups;
	struct attr_group *g;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(R->attrs[R->agroups[mid].first].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == R->nagroups || strcmp(R->attrs[R->agroups[lo].first].name, name))
		return;
	g = &R->agroups[lo];
	if (g->fn != fn) {
		g->fn = fn;
		g->applied = 0;
	}
	for (; g->applied < g->n && R->attrs[g->first + g->applied].rec < before; g->applied++) {
		const struct tr_rec *r = &R->t->rec[R->attrs[g->first + g->applied].rec];
		R->c->d.FuncSetAttribute(fn, (CUfunction_attribute)r->u.func_attr.attr, r->u.func_attr.value);
	}
}

/* A recorded launch attribute replay cannot apply: said once per id in
 * the result's message. */
static void note_dropped_attr(struct run *R, uint32_t id, const char *why)
{
	char b[32];
	size_t n = strlen(R->res->msg);
	if (id < 64 && (R->attr_noted >> id & 1))
		return;
	if (id < 64)
		R->attr_noted |= 1ull << id;
	snprintf(R->res->msg + n, sizeof(R->res->msg) - n, "%slaunch attribute %u (%s) not replayed: %s",
		 n ? "; " : "", id, lattr_name(id, b, sizeof(b)), why);
}

static int do_launch(struct run *R, size_t ev, const struct tr_launch *l)
{
	struct replay_ctx *c = R->c;
	struct strbuf err = STRBUF_INIT;
	CUfunction fn;
	struct fn_choice ch;
	uint8_t *args = NULL;
	void **kp = NULL;
	CUresult r;
	int ret = RS_CLEAN;

	/* A communication kernel folded at capture (TR_F_FOLDED, issue 25):
	 * it needs its peers, so it never runs here; the folded H2D copies
	 * after it carry what it wrote on this rank. */
	if (l->flags & TR_F_FOLDED)
		goto out;
	if (get_function(R, l, ev, &fn, &ch, NULL, &err) < 0) {
		ret = set_error(R, ev, "event %zu (launch #%llu): %s", ev, (unsigned long long)l->seq, err.buf);
		goto out;
	}
	apply_attrs(R, fn, l->name, ev);
	args = xcalloc(1, l->argsize + 8);
	memcpy(args, l->args, l->argsize);
	R->rel.relocated += relocate_args(R, l, args);
	count_stray(R, l);
	rtmap_reencode(&c->d, R->t, ev, l, args, &R->tmap);
	kp = xcalloc(l->nparams + 1, sizeof(void *));
	for (uint32_t i = 0; i < l->nparams; i++)
		kp[i] = args + l->params[i].offset;

	if ((l->api == TR_API_LAUNCH_KERNEL_EX || l->nattrs) && c->d.LaunchKernelEx) {
		CUlaunchConfig cfg;
		CUlaunchAttribute *at = xcalloc(l->nattrs + 1, sizeof(*at));
		memset(&cfg, 0, sizeof(cfg));
		cfg.gridDimX = l->grid.x; cfg.gridDimY = l->grid.y; cfg.gridDimZ = l->grid.z;
		cfg.blockDimX = l->block.x; cfg.blockDimY = l->block.y; cfg.blockDimZ = l->block.z;
		cfg.sharedMemBytes = l->shmem;
		cfg.hStream = NULL;
		unsigned na = 0;
		for (uint32_t i = 0; i < l->nattrs; i++) {
			const char *why;
			if (!lattr_replayable(l->attrs[i].id, &why)) {
				note_dropped_attr(R, l->attrs[i].id, why);
				continue;
			}
			at[na].id = (CUlaunchAttributeID)l->attrs[i].id;
			memcpy(&at[na].value, l->attrs[i].value,
			       l->attrs[i].len < sizeof(at[na].value) ? l->attrs[i].len : sizeof(at[na].value));
			na++;
		}
		cfg.attrs = at;
		cfg.numAttrs = na;
		r = c->d.LaunchKernelEx(&cfg, fn, kp, NULL);
		free(at);
	} else if (l->api == TR_API_LAUNCH_COOPERATIVE && c->d.LaunchCooperativeKernel) {
		/* (l->nattrs is 0 here: a recorded attribute needs cuLaunchKernelEx) */
		r = c->d.LaunchCooperativeKernel(fn, l->grid.x, l->grid.y, l->grid.z, l->block.x,
						 l->block.y, l->block.z, l->shmem, NULL, kp);
	} else {
		for (uint32_t i = 0; i < l->nattrs; i++)
			note_dropped_attr(R, l->attrs[i].id, "this driver has no cuLaunchKernelEx");
		r = c->d.LaunchKernel(fn, l->grid.x, l->grid.y, l->grid.z, l->block.x, l->block.y,
				      l->block.z, l->shmem, NULL, kp, NULL);
	}
	if (r == CUDA_SUCCESS)
		r = c->d.CtxSynchronize();
	R->launches++;
	if (r != CUDA_SUCCESS) {
		if (drv_is_sticky(r))
			ret = set_fault(R, ev, r, l->name, (long long)l->seq);
		else {
			sb_reset(&err);
			if (r == CUDA_ERROR_INVALID_VALUE)   /* what differs (fnpick.c) */
				fnpick_explain(&c->d, fn, l, ch.which, ch.ncand, ch.matched, &err);
			ret = set_error(R, ev, "event %zu (launch #%llu of %s): launch failed: %s%s", ev,
					(unsigned long long)l->seq, l->name, drv_error_name(&c->d, r), err.buf);
		}
	}
out:
	free(kp);
	free(args);
	sb_release(&err);
	return ret;
}

/* ---- snapshots ----------------------------------------------------------- */

/* Read-back staging: page-locked host memory where the driver gives it
 * (a device-to-host copy into it runs at the bus's speed; into malloc'd
 * memory the driver stages it again, and 8 GiB took seconds), else malloc. */
struct stage {
	uint8_t *p;
	int pinned;
};

static void stage_get(struct run *R, struct stage *st, uint64_t n)
{
	void *p = NULL;
	st->pinned = R->c->d.MemAllocHost && R->c->d.MemFreeHost &&
		     R->c->d.MemAllocHost(&p, n ? n : 1) == CUDA_SUCCESS;
	st->p = st->pinned ? p : xmalloc(n + 1);
}

static void stage_put(struct run *R, struct stage *st)
{
	if (st->pinned)
		R->c->d.MemFreeHost(st->p);
	else
		free(st->p);
	st->p = NULL;
}

struct snap {
	struct run *R;
	struct stage stage;      /* read-back staging (snap_buffer), freed at the end */
	struct trace_writer w;
	char *want;              /* per memmap index: 1 = include */
	uint64_t scanned;
	int changed;             /* want_word marked a buffer */
};

/* A pointer word the launch reaches: want its buffer (S->changed: one
 * that was not wanted yet). */
static int want_word(struct mm_alloc *a, size_t off, uint64_t v, int dead, void *arg)
{
	struct snap *S = arg;
	(void)off;
	(void)v;
	(void)dead;
	if (!S->want[a->index]) {
		S->want[a->index] = 1;
		S->changed = 1;
	}
	return 0;
}

/* Read-backs speak captured addresses: the pointers replay relocated
 * into device memory (or a kernel stored there) go back (backmap.h).
 * `addr` is the captured address of buf[0]. */
static void back_apply(struct run *R, uint8_t *buf, uint64_t len, uint64_t addr)
{
	if (!R->have_back) {
		for (size_t i = 0; i < R->mm.n; i++) {
			const struct mm_alloc *a = R->mm.all[i];
			const struct twin *tw = a->user;
			if (tw && tw->ptr)
				backmap_add(&R->back, tw->ptr, a->size, a->addr);
		}
		R->have_back = 1;
	}
	backmap_apply(&R->back, buf, (size_t)len, memmap_first_aligned(addr));
}

static int read_twin(struct run *R, struct mm_alloc *a, struct strbuf *out)
{
	struct twin *tw = a->user;
	sb_reset(out);
	if (!tw || !tw->mapped)
		return -1;
	sb_grow(out, a->size);
	if (R->c->d.MemcpyDtoH(out->buf, tw->ptr, a->size) != CUDA_SUCCESS)
		return -1;
	back_apply(R, (uint8_t *)out->buf, a->size, a->addr);
	out->len = a->size;
	out->buf[out->len] = 0;
	return 0;
}

/* The __device__ variables of the launched kernel's own module: it reads
 * them by name, not through a pointer, so no parameter word finds them. */
static void want_module_globals(struct snap *S, const struct tr_launch *l, size_t at)
{
	struct run *R = S->R;
	const struct sym_entry *k = find_symbol(R, l->name, at);

	for (size_t i = 0; k && i < R->mm.n; i++) {
		struct mm_alloc *a = R->mm.all[i];
		const char *gname = R->t->rec[a->alloc_event].u.alloc.name;
		const struct sym_entry *g;
		if (a->kind != TR_MEM_GLOBAL || a->free_event >= 0 || !gname || !*gname)
			continue;
		g = find_symbol(R, gname, at);
		if (g && g->blob == k->blob)
			S->want[i] = 1;
	}
}

/* 1 when the len bytes at h repeat their first 4-byte word (*word gets it):
 * the chunk equals itself shifted by one word (memcmp runs at memory
 * speed; a word loop does not).  0 when not, or when len is not a whole
 * number of words. */
static int chunk_uniform(const uint8_t *h, uint64_t len, uint32_t *word)
{
	if (len < 4 || len % 4)
		return 0;
	memcpy(word, h, 4);
	return len == 4 || !memcmp(h, h + 4, len - 4);
}

/* The MEMSET that writes word repeated over [dst, dst+len): 1-, 2- or
 * 4-byte elements, the narrowest the value allows. */
static void uniform_memset(struct tr_rec *ms, uint64_t dst, uint64_t len, uint32_t word)
{
	int elem = 4;
	if ((word & 0xffff) == (word >> 16))
		elem = (word & 0xff) == ((word >> 8) & 0xff) ? 1 : 2;
	memset(ms, 0, sizeof(*ms));
	ms->type = TR_MEMSET;
	ms->u.memset.dst = dst;
	ms->u.memset.elem_size = (uint32_t)elem;
	ms->u.memset.value = elem == 1 ? (word & 0xff) : elem == 2 ? (word & 0xffff) : word;
	ms->u.memset.width = len / (uint64_t)elem;
	ms->u.memset.height = 1;
}

/* A run of buffer content being gathered by snap_buffer: either chunks
 * that all repeat one word (a memset) or plain bytes (one H2D). */
struct snap_run {
	uint64_t off, len;       /* in the buffer */
	int uniform;
	uint32_t word;
	struct strbuf bytes;     /* !uniform: the run's bytes */
};

/* Write the pending run as its record; 0, or -1 on a write failure. */
static int snap_flush(struct snap *S, const struct mm_alloc *a, struct snap_run *run)
{
	struct tr_rec rec;
	int ret = 0;
	if (!run->len)
		return 0;
	if (run->uniform) {
		uniform_memset(&rec, a->addr + run->off, run->len, run->word);
		ret = tw_record(&S->w, &rec);
	} else {
		ret = tw_h2d_data(&S->w, &(struct tr_copy){ .dst = a->addr + run->off,
							    .size = run->len }, run->bytes.buf);
	}
	run->off += run->len;
	run->len = 0;
	sb_reset(&run->bytes);
	return ret < 0 ? -1 : 0;
}

/* The snapshot's read-back piece: CHUNK, or GPUREDUCE_SNAP_CHUNK bytes (a
 * test hook: a multiple of 4096, so the CPU tests see several chunks in a
 * small buffer). */
static uint64_t snap_chunk(void)
{
	const char *e = getenv("GPUREDUCE_SNAP_CHUNK");
	unsigned long long v = e ? strtoull(e, NULL, 0) : 0;
	return v && v % 4096 == 0 && v <= CHUNK ? (uint64_t)v : CHUNK;
}

/* Write buffer a's content into the snapshot, its bytes read back once in
 * CHUNK pieces.  Consecutive chunks that repeat one 1-, 2- or 4-byte value
 * (zeros, torch.full) become one MEMSET; the chunks between such runs one
 * MEMCPY_H2D with their bytes.  A buffer that holds one value throughout
 * is one memset and one with no uniform chunk one H2D, as before; a 4 GiB
 * tensor of 1.5s in a segment whose 2 MiB tail holds zeros is a 4 GiB
 * memset and a 2 MiB blob, not 4 GiB of bytes.  Returns 0, -1 when the
 * buffer cannot be read back, -2 on a write failure. */
static int snap_buffer(struct snap *S, const struct mm_alloc *a)
{
	struct run *R = S->R;
	struct twin *tw = a->user;
	struct snap_run run;
	uint8_t *h = NULL;
	uint64_t len, chunk = snap_chunk();
	int ret = -1;

	memset(&run, 0, sizeof(run));
	run.bytes = (struct strbuf)STRBUF_INIT;
	if (!tw || !tw->mapped)
		return -1;
	if (!S->stage.p) {
		/* one staging area for the whole snapshot, as big as its largest
		 * buffer's chunk: pinning costs milliseconds per call */
		uint64_t big = 0;
		for (size_t i = 0; i < R->mm.n; i++)
			if (S->want[i] && R->mm.all[i]->free_event < 0 && R->mm.all[i]->size > big)
				big = R->mm.all[i]->size;
		stage_get(R, &S->stage, big < chunk ? big : chunk);
	}
	h = S->stage.p;
	for (uint64_t done = 0; done < a->size; done += len) {
		uint32_t word = 0;
		int u;
		len = a->size - done < chunk ? a->size - done : chunk;
		if (R->c->d.MemcpyDtoH(h, tw->ptr + done, len) != CUDA_SUCCESS)
			goto out;
		back_apply(R, h, len, a->addr + done);
		u = chunk_uniform(h, len, &word);
		/* a chunk that does not continue the pending run ends it */
		if (run.len && (u != run.uniform || (u && word != run.word)) && snap_flush(S, a, &run) < 0) {
			ret = -2;
			goto out;
		}
		run.uniform = u;
		run.word = word;
		run.len += len;
		if (!u) {
			/* room for the rest of the buffer at once: a 4 GiB buffer of
			 * bytes is not copied again and again as it grows (pages never
			 * written are never touched) */
			if (!run.bytes.len)
				sb_grow(&run.bytes, a->size - done);
			sb_add(&run.bytes, h, len);
		}
	}
	ret = snap_flush(S, a, &run) < 0 ? -2 : 0;
out:
	sb_release(&run.bytes);
	return ret;
}

/* Mark what the launch reaches: its parameter words, then (transitively)
 * pointer words stored in the buffers found, within the scan budget. */
static void snap_reach(struct snap *S, const struct tr_launch *l)
{
	struct run *R = S->R;
	struct strbuf buf = STRBUF_INIT;
	char *scanned = xcalloc(R->mm.n + 1, 1);

	memmap_scan_args(&R->mm, l, l->args, 0, l->argsize, want_word, S);
	S->changed = 1;
	while (S->changed) {
		S->changed = 0;
		for (size_t i = 0; i < R->mm.n; i++) {
			struct mm_alloc *a = R->mm.all[i];
			if (!S->want[i] || scanned[i] || a->free_event >= 0)
				continue;
			scanned[i] = 1;
			if (S->scanned + a->size > R->o->scan_limit)
				continue;
			if (read_twin(R, a, &buf) < 0)
				continue;
			S->scanned += a->size;
			memmap_scan_words(&R->mm, buf.buf, buf.len, 0, want_word, S);
		}
	}
	free(scanned);
	sb_release(&buf);
}

static int snap_copy_first(struct snap *S, uint32_t type, size_t before)
{
	for (size_t i = 0; i < before; i++)
		if (S->R->t->rec[i].type == type)
			return tw_record(&S->w, &S->R->t->rec[i]) < 0 ? -1 : 0;
	return 0;
}

static int snap_module(struct snap *S, size_t i)
{
	const struct tr_rec *r = &S->R->t->rec[i];
	if (tw_copy_blob(&S->w, S->R->t, r->u.module.blob) < 0)
		return -1;
	return tw_record(&S->w, r) < 0 ? -1 : 0;
}

static int size_cmp(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	return (x > y) - (x < y);
}

/* The FUNC_ATTR records a snapshot at `at` needs: for each kernel (or
 * only `name`), the last one recorded before `at` of each attribute; a
 * value set again at every GEMM travels once.  Their record indexes go to
 * recs (room for R->nattrs), in no particular order; returns how many. */
static size_t attrs_last_before(const struct run *R, size_t at, const char *name, size_t *recs)
{
	size_t n = 0;
	for (size_t gi = 0; gi < R->nagroups; gi++) {
		const struct attr_group *g = &R->agroups[gi];
		uint32_t seen[64];
		size_t nseen = 0;
		if (name && strcmp(R->attrs[g->first].name, name))
			continue;
		for (size_t k = g->n; k-- > 0;) {
			size_t rec = R->attrs[g->first + k].rec;
			uint32_t id = R->t->rec[rec].u.func_attr.attr;
			size_t j = 0;
			if (rec >= at)
				continue;
			while (j < nseen && seen[j] != id)
				j++;
			if (j < nseen)
				continue;
			if (nseen < 64)
				seen[nseen++] = id;
			recs[n++] = rec;
		}
	}
	return n;
}

/* Write the FUNC_ATTR records attrs_last_before picks, in record order. */
static int snap_attrs(struct snap *S, size_t at, const char *name)
{
	const struct run *R = S->R;
	size_t *recs, n;
	int ret = 0;
	if (!R->nattrs)
		return 0;
	recs = xcalloc(R->nattrs, sizeof(*recs));
	n = attrs_last_before(R, at, name, recs);
	qsort(recs, n, sizeof(*recs), size_cmp);
	for (size_t k = 0; k < n && ret == 0; k++)
		ret = tw_record(&S->w, &R->t->rec[recs[k]]) < 0 ? -1 : 0;
	free(recs);
	return ret;
}

/* The TENSORMAP records before `at` (with l: only those whose map sits in
 * l's parameter bytes), so the launch after the snapshot re-encodes its
 * maps as it did here. */
static int snap_tmaps(struct snap *S, size_t at, const struct tr_launch *l)
{
	const struct trace *t = S->R->t;
	for (size_t i = 0; i < at && i < t->nrec; i++) {
		int used = !l;
		if (t->rec[i].type != TR_TENSORMAP)
			continue;
		for (uint32_t off = 0; l && !used && l->argsize >= TR_TMAP_BYTES &&
		     off <= l->argsize - TR_TMAP_BYTES; off += TR_TMAP_PARAM_ALIGN)
			used = tmap_match(&t->rec[i].u.tmap, l->args + off);
		if (used && tw_record(&S->w, &t->rec[i]) < 0)
			return -1;
	}
	return 0;
}

/* The module a reachable snapshot at launch l (record `at`) carries: the
 * one the launch would take (get_function: of several builds of one name,
 * the one fnpick chooses), not merely the newest defining the name, which
 * a one-launch replay would then be left with (a .reqntid build for
 * another block refuses the launch).  find_symbol's when none resolves. */
static const struct sym_entry *snap_launch_module(struct run *R, const struct tr_launch *l, size_t at)
{
	const struct sym_entry *used = NULL;
	struct fn_choice ch;
	struct strbuf e = STRBUF_INIT;
	CUfunction fn;
	if (get_function(R, l, at, &fn, &ch, &used, &e) < 0 || !used)
		used = find_symbol(R, l->name, at);
	sb_release(&e);
	return used;
}

static int write_snapshot(struct run *R, size_t at, struct strbuf *err)
{
	struct snap S;
	struct tr_rec end;
	const struct tr_launch *l = NULL;
	int ret = -1;

	memset(&S, 0, sizeof(S));
	S.R = R;
	S.w = (struct trace_writer)TRACE_WRITER_INIT;
	S.want = xcalloc(R->mm.n + 1, 1);
	if (tw_open(&S.w, R->o->snap_path, err) < 0)
		goto out;
	tw_set_buffer(&S.w, WRITE_BUFFER_BYTES);   /* closed (flushed) before the run goes on */
	if (snap_copy_first(&S, TR_PROCESS, at) < 0 || snap_copy_first(&S, TR_DEVICE, at) < 0)
		goto werr;

	if (R->o->snap_mode == SNAP_REACHABLE) {
		if (at >= R->t->nrec || R->t->rec[at].type != TR_LAUNCH) {
			sb_addf(err, "snapshot point %zu is not a launch", at);
			goto out;
		}
		l = &R->t->rec[at].u.launch;
		want_module_globals(&S, l, at);
		snap_reach(&S, l);
		const struct sym_entry *s = snap_launch_module(R, l, at);
		const struct tr_func_info *fi = launch_finfo(R, l, at);
		if (s && snap_module(&S, s->rec) < 0)
			goto werr;
		if (fi) {
			struct tr_rec fr;
			memset(&fr, 0, sizeof(fr));
			fr.type = TR_FUNC_INFO;
			fr.u.func_info = *fi;
			if (tw_record(&S.w, &fr) < 0)
				goto werr;
		}
		/* __device__ variables live in their module: bring it along */
		for (size_t i = 0; i < R->mm.n; i++) {
			struct mm_alloc *a = R->mm.all[i];
			const char *gname = R->t->rec[a->alloc_event].u.alloc.name;
			const struct sym_entry *g;
			if (a->kind != TR_MEM_GLOBAL || !S.want[i] || !gname || !*gname)
				continue;
			g = find_symbol(R, gname, at);
			if (g && (!s || g->blob != s->blob) && snap_module(&S, g->rec) < 0)
				goto werr;
		}
		if (snap_attrs(&S, at, l->name) < 0 || snap_tmaps(&S, at, l) < 0)
			goto werr;
	} else {
		for (size_t i = 0; i < at; i++)
			if (R->t->rec[i].type == TR_MODULE && snap_module(&S, i) < 0)
				goto werr;
		if (snap_attrs(&S, at, NULL) < 0 || snap_tmaps(&S, at, NULL) < 0)
			goto werr;
		for (size_t i = 0; i < R->mm.n; i++)
			S.want[i] = 1;
	}
	/* dead buffers first (ALLOC + FREE), then live ones with contents, so
	 * a reused address range ends up owned by the live buffer */
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < R->mm.n; i++) {
			struct mm_alloc *a = R->mm.all[i];
			int dead = a->free_event >= 0;
			const char *name;
			if (!S.want[i] || dead != (pass == 0))
				continue;
			name = a->alloc_event >= 0 && (size_t)a->alloc_event < R->t->nrec ?
				R->t->rec[a->alloc_event].u.alloc.name : "";
			if (tw_alloc(&S.w, &(struct tr_alloc){ .addr = a->addr, .size = a->size,
							       .kind = a->kind, .name = name }) < 0)
				goto werr;
			if (dead) {
				if (tw_free(&S.w, &(struct tr_free){ .addr = a->addr, .kind = a->kind }) < 0)
					goto werr;
				continue;
			}
			switch (snap_buffer(&S, a)) {
			case -1:
				sb_addf(err, "cannot read back buffer at 0x%llx (%llu bytes) for the snapshot",
					(unsigned long long)a->addr, (unsigned long long)a->size);
				goto out;
			case -2:
				goto werr;
			}
		}
	}
	/* a snapshot is a whole trace (trace_complete): END, exit code unknown */
	memset(&end, 0, sizeof(end));
	end.type = TR_END;
	end.u.end.exit_code = -1;
	if (tw_record(&S.w, &end) < 0 || tw_close(&S.w) < 0)
		goto werr;
	ret = 0;
	goto out;
werr:
	sb_addf(err, "%s: write failed while writing the snapshot%s", R->o->snap_path, tw_why(&S.w));
out:
	tw_close(&S.w);
	if (S.stage.p)
		stage_put(R, &S.stage);
	free(S.want);
	return ret;
}

/*
 * GPUREDUCE_REPLAY_PROFILE=1: where a replay's seconds went, by kind of
 * record (the driver calls each makes: an allocation's placement, a
 * launch with its synchronisation), on stderr at the end of the run (one
 * line each; `gpureduce replay` and bench-hunt print them).  Two clock
 * reads a record when on; nothing when off.
 */
enum { RP_ALLOC, RP_FREE, RP_H2D, RP_D2D, RP_MEMSET, RP_LAUNCH, RP_N };
static const char *const rp_name[RP_N] = { "allocations placed", "frees", "copies in", "device copies",
					   "memsets", "launches (with their sync)" };
static struct { double s; unsigned long n; } rp[RP_N];
static int rp_on = -1;

static int rp_kind(uint32_t type)
{
	switch (type) {
	case TR_ALLOC: return RP_ALLOC;
	case TR_FREE: return RP_FREE;
	case TR_MEMCPY_H2D: return RP_H2D;
	case TR_MEMCPY_D2D: return RP_D2D;
	case TR_MEMSET: return RP_MEMSET;
	case TR_LAUNCH: return RP_LAUNCH;
	default: return -1;
	}
}

static void rp_report(double total, double teardown, size_t recycled)
{
	double parts = 0;
	if (rp_on != 1)
		return;
	for (int k = 0; k < RP_N; k++) {
		if (!rp[k].n)
			continue;
		parts += rp[k].s;
		fprintf(stderr, "gpureduce: replay profile: %s: %lu, %.3f s, %.2f us each\n", rp_name[k], rp[k].n,
			rp[k].s, rp[k].s / (double)rp[k].n * 1e6);
	}
	if (recycled)
		fprintf(stderr, "gpureduce: replay profile: buffers placed in a freed one's range (recycled): %zu\n",
			recycled);
	fprintf(stderr, "gpureduce: replay profile: teardown (buffers released): %.3f s\n", teardown);
	fprintf(stderr, "gpureduce: replay profile: the run: %.3f s, records %.3f s, the rest (modules, "
		"tables, teardown) %.3f s\n", total, parts, total - parts);
	memset(rp, 0, sizeof(rp));
}

static int do_record_kind(struct run *R, size_t ev, const struct tr_rec *r);

/* Run one record (a graph node runs under the GRAPH_LAUNCH's event). */
static int do_record(struct run *R, size_t ev, const struct tr_rec *r)
{
	int k, st;
	double t0;
	if (rp_on < 0) {
		const char *e = getenv("GPUREDUCE_REPLAY_PROFILE");
		rp_on = e && !strcmp(e, "1");
	}
	if (!rp_on || (k = rp_kind(r->type)) < 0)
		return do_record_kind(R, ev, r);
	t0 = now_sec();
	st = do_record_kind(R, ev, r);
	rp[k].s += now_sec() - t0;
	rp[k].n++;
	return st;
}

static int do_record_kind(struct run *R, size_t ev, const struct tr_rec *r)
{
	switch (r->type) {
	case TR_ALLOC: return do_alloc(R, ev, &r->u.alloc);
	case TR_FREE: return do_free(R, ev, &r->u.free);
	case TR_MEMCPY_H2D: return do_h2d(R, ev, &r->u.copy);
	case TR_MEMCPY_D2D: return do_d2d(R, ev, &r->u.copy);
	case TR_MEMSET: return do_memset(R, ev, &r->u.memset);
	case TR_LAUNCH: return do_launch(R, ev, &r->u.launch);
	default: return RS_CLEAN;   /* MODULE (loaded on demand), FAULT, NOTE, ... */
	}
}

/* ---- main loop ----------------------------------------------------------- */

/* snap_go_on: the snapshot before record `at`, then the run goes on (to
 * the fault the caller expects there).  A snapshot that cannot be written
 * is said in res->msg and removed; the run goes on all the same, and
 * res->snapped stays 0. */
static void snap_on_the_way(struct run *R, size_t at)
{
	struct strbuf err = STRBUF_INIT;
	if (write_snapshot(R, at, &err) == 0) {
		R->res->snapped = 1;
	} else {
		size_t n = strlen(R->res->msg);
		snprintf(R->res->msg + n, sizeof(R->res->msg) - n, "%ssnapshot before event %zu not written: %s",
			 n ? "; " : "", at, err.buf);
		unlink(R->o->snap_path);
	}
	sb_release(&err);
}

/* Relocation coverage and tensor maps, into res (counts) and res->msg. */
static void replay_note_coverage(struct run *R, struct replay_result *res)
{
	size_t n = strlen(res->msg);
	res->ptr_words = (long)(R->rel.relocated + R->rel.stored);
	res->stray_words = (long)R->rel.stray;
	res->tmaps_encoded = (long)R->tmap.encoded;
	res->tmaps_word0 = (long)(R->tmap.word0 + R->tmap.failed);
	res->shifted = R->shift.on ? (long)R->shift.placed : -1;
	if (R->rel.stray && n < sizeof(res->msg) - 1)
		n += (size_t)snprintf(res->msg + n, sizeof(res->msg) - n,
			 "%s%zu launch word(s) looked like device addresses but matched no captured buffer "
			 "(not relocated)", n ? "; " : "", R->rel.stray);
	if ((R->tmap.word0 || R->tmap.failed) && n < sizeof(res->msg) - 1)
		snprintf(res->msg + n, sizeof(res->msg) - n,
			 "%s%zu TMA tensor map(s) not re-encoded on this driver (%zu refused): only their "
			 "address word was relocated", n ? "; " : "", R->tmap.word0 + R->tmap.failed,
			 R->tmap.failed);
}

int replay_trace(struct replay_ctx *c, const struct trace *t, const struct replay_opts *o,
		 struct replay_result *res)
{
	struct run R;
	struct graphs G = GRAPHS_INIT;
	struct strbuf err = STRBUF_INIT;
	double t0 = now_sec();
	int st = RS_CLEAN;
	size_t end = t->nrec, snap_at = (size_t)-1;

	memset(res, 0, sizeof(*res));
	res->event = -1;
	res->launch_seq = -1;
	memset(&R, 0, sizeof(R));
	R.c = c;
	R.t = t;
	R.o = o;
	R.res = res;
	sb_init(&R.names, 0);

	if (c->dead) {
		st = set_error(&R, 0, "the context is dead after an earlier fault");
		goto out;
	}
	if (o->stop_before >= 0 && (size_t)o->stop_before < end) {
		if (o->snap_go_on && o->snap_mode != SNAP_NONE && o->snap_path)
			snap_at = (size_t)o->stop_before;   /* written on the way */
		else
			end = (size_t)o->stop_before;
	}
	if (o->skip_path && load_skips(&R, o->skip_path, &err) < 0) {
		st = set_error(&R, 0, "%s", err.buf);
		goto out;
	}
	attrs_index(&R);
	if (build_symbols(&R, &err) < 0) {
		st = set_error(&R, 0, "%s", err.buf);
		goto out;
	}
	shift_init(&R.shift);
	/* shifted placement: every buffer on its own, away from its captured
	 * address and offsets, so an unrelocated pointer cannot pass by luck */
	if (o->guard == GUARD_LAYOUT && R.shift.on) {
		/* its point is the captured offsets: the one thing this mode breaks */
		st = set_error(&R, 0, "layout-faithful placement is off in the shifted placement mode "
			       "(GPUREDUCE_SHIFT=1); use --guard=end");
		res->error_kind = RE_NO_LAYOUT;
		goto out;
	}
	if (o->guard == GUARD_LAYOUT && (st = layout_open(&R, end)) != RS_CLEAN) {
		if (st == RS_ERROR)
			res->error_kind = RE_NO_LAYOUT;   /* every error of layout_open's */
		goto out;
	}
	for (size_t i = 0; i < end && st == RS_CLEAN; i++) {
		const struct tr_rec *r = &t->rec[i];
		if (i == snap_at)
			snap_on_the_way(&R, i);
		/* a graph node did not run when it was recorded during stream
		 * capture: it runs when its graph is launched */
		if (skipped_launch(&R, r) || graphs_feed(&G, r, i))
			continue;
		switch (r->type) {
		case TR_GRAPH_LAUNCH: {
			const struct gcap *g = graphs_find_exec(&G, r->u.graph.exec);
			for (size_t k = 0; g && k < g->n && st == RS_CLEAN; k++)
				st = do_record(&R, i, &t->rec[g->recs[k]]);
			break;
		}
		default:
			st = do_record(&R, i, r);
			break;
		}
	}
	if (st == RS_CLEAN && o->snap_mode != SNAP_NONE && o->snap_path && snap_at == (size_t)-1) {
		if (write_snapshot(&R, end, &err) < 0)
			st = set_error(&R, end, "snapshot: %s", err.buf);
		else
			res->snapped = 1;
	}
	if (st == RS_CLEAN && R.unresolved) {
		size_t n = strlen(res->msg);
		snprintf(res->msg + n, sizeof(res->msg) - n,
			 "%s%zu copies/memsets targeted memory outside any captured allocation and were skipped",
			 n ? "; " : "", R.unresolved);
	}
	if (st == RS_CLEAN && R.unguarded) {
		size_t n = strlen(res->msg);
		snprintf(res->msg + n, sizeof(res->msg) - n,
			 "%s%zu buffer(s) got plain cuMemAlloc, not guard placement (the driver's virtual "
			 "memory calls failed): an overrun there may not fault", n ? "; " : "", R.unguarded);
	}
	if (st == RS_CLEAN || st == RS_FAULT)
		replay_note_coverage(&R, res);
out:
	res->status = st;
	res->launches = R.launches;
	double t_down = now_sec();
	for (size_t i = 0; i < R.mm.n; i++)
		if (R.mm.all[i]->user)
			twin_destroy(&R, R.mm.all[i]->user);
	for (size_t i = 0; i < R.nrecyc && !c->dead; i++)
		place_buf_destroy(&c->d.vmm, NULL, &R.recyc[i]);
	free(R.recyc);
	t_down = now_sec() - t_down;
	if (R.have_layout && !c->dead)
		place_layout_close(&c->d.vmm, &R.layout);
	memmap_release(&R.mm);
	backmap_release(&R.back);
	if (!c->dead)
		shift_release(&R.shift, &c->d.vmm);
	graphs_release(&G);
	free(R.syms);
	free(R.finfo);
	free(R.attrs);
	free(R.agroups);
	free(R.skip);
	sb_release(&R.names);
	sb_release(&err);
	res->seconds = now_sec() - t0;
	rp_report(res->seconds, t_down, R.recycled);
	return st;
}
