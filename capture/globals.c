/*
 * globals.c - module variables (__device__ and __constant__) in
 * checkpoints (see capture.h).
 *
 * A kernel may keep state in its module's own variables: a counter a
 * persistent kernel advances, a ring position, a table an init kernel
 * fills.  A replay from the start replays every kernel, so those values
 * come back by themselves; a replay from a checkpoint loads the modules
 * fresh, with their variables as the image has them, unless the
 * checkpoint holds their values too.  The program names a variable to the
 * driver only when it copies to it or takes its address (cuModuleGetGlobal:
 * recorded as an ALLOC of kind global); one a kernel uses by itself is
 * never named.
 *
 * So: each module image's writable variables (defined STT_OBJECT symbols
 * in SHF_WRITE sections) and, when it has some, its kernels (STT_FUNC, by
 * name hash) are listed when the image is loaded
 * (cap_glob_image, only when checkpoints are on: the image is valid only
 * during that callback); each launched function is remembered at its
 * first launch (cap_glob_function: no driver call); and when a checkpoint
 * is due (cap_glob_discover, before its snapshot) the module or library of
 * every function launched since is asked for each variable of the images
 * that define its name (cuModuleGetGlobal / cuLibraryGetGlobal: a name the
 * module lacks is refused), and each one found is recorded as an ALLOC of
 * kind global, which the checkpoint then reads back like any allocation.
 * A module is asked once; when a module is unloaded, the variables
 * recorded here leave the checkpoints and are asked for again.  Replay puts those bytes into its own loaded
 * module's variable of that name (replay/engine.c, twin_create).
 *
 * State is under inject.c's lock.
 */
#include <cuda.h>

#include <stdlib.h>
#include <string.h>

#include "../common/elf.h"
#include "../common/util.h"
#include "capture.h"

struct gimage {
	char **objs;             /* its variables' names */
	size_t nobj, aobj;
};

struct glink {               /* an image defining a function name (a chain) */
	uint32_t image;
	uint32_t next;           /* index + 1 of the next link, 0: the end */
};

struct gpending {
	uint64_t f;              /* a CUfunction, or a CUkernel */
	uint64_t name_hash;
	int is_func;
};

static struct {
	struct gimage *img;
	size_t nimg, aimg;
	struct glink *link;
	size_t nlink, alink;
	struct cap_map by_name;  /* function name hash -> first link index + 1 */
	struct gpending *pend;
	size_t npend, apend;
	struct cap_map asked;    /* module / library handles asked already */
	uint64_t *vars;          /* addresses of the variables recorded here */
	size_t nvars, avars;
	int full_noted;          /* max_images() reached, said once */
} GL;

struct image_walk {
	struct gimage *g;
	uint32_t index;
	int link;                /* 0: the first pass (variables), 1: the kernels */
};

static int image_sym(const char *name, int kind, int writable, void *arg)
{
	struct image_walk *w = arg;

	/* only what a kernel can change: __constant__ variables (no SHF_WRITE)
	 * change only through the host's copies, which are recorded */
	if (!w->link && kind == ELF_SYM_OBJECT && writable) {
		ALLOC_GROW(w->g->objs, w->g->nobj + 1, w->g->aobj);
		w->g->objs[w->g->nobj++] = xstrdup(name);
	} else if (w->link && kind == ELF_SYM_FUNC) {
		uint64_t h = tr_hash(name, strlen(name));
		struct cap_map_ent *e = cap_map_get(&GL.by_name, h);
		ALLOC_GROW(GL.link, GL.nlink + 1, GL.alink);
		GL.link[GL.nlink].image = w->index;
		GL.link[GL.nlink].next = e ? (uint32_t)e->v1 : 0;
		GL.nlink++;
		cap_map_put(&GL.by_name, h, GL.nlink, 0);
	}
	return 0;
}

/* Images listed at most (GPUREDUCE_GLOBALS_MAX_IMAGES, for the tests): a
 * program that loads modules without end (a JIT per call) should not grow
 * this list without end either. */
static size_t max_images(void)
{
	static size_t v;
	if (!v) {
		v = (size_t)cap_env_u64("GPUREDUCE_GLOBALS_MAX_IMAGES", 0);
		if (!v)
			v = (size_t)1 << 16;
	}
	return v;
}

void cap_glob_image(const void *img, size_t size)
{
	struct image_walk w;

	if (!img || !elf_is_elf(img, size))
		return;
	if (GL.nimg >= max_images()) {
		if (!GL.full_noted)
			cap_note("%zu module images listed, the most kept: a later module's variables are "
				 "not recorded in checkpoints unless an earlier image of its kernel names them",
				 max_images());
		GL.full_noted = 1;
		return;
	}
	ALLOC_GROW(GL.img, GL.nimg + 1, GL.aimg);
	w.g = &GL.img[GL.nimg];
	memset(w.g, 0, sizeof(*w.g));
	w.index = (uint32_t)GL.nimg;
	w.link = 0;
	if (elf_symbols_w(img, size, image_sym, &w) < 0 || !w.g->nobj) {
		/* no variable a kernel could change (most images): nothing to
		 * ask for, so neither a slot nor its kernels' names */
		for (size_t i = 0; i < w.g->nobj; i++)
			free(w.g->objs[i]);
		free(w.g->objs);
		memset(w.g, 0, sizeof(*w.g));
		return;
	}
	GL.nimg++;
	w.link = 1;
	elf_symbols_w(img, size, image_sym, &w);
}

void cap_glob_function(uint64_t f, int is_func, uint64_t name_hash)
{
	if (!f || !cap_map_get(&GL.by_name, name_hash))
		return;   /* no image defines it with variables to ask for */
	ALLOC_GROW(GL.pend, GL.npend + 1, GL.apend);
	GL.pend[GL.npend++] = (struct gpending){ f, name_hash, is_func };
}

/* Ask one module or library for every variable of image i. */
static void ask_image(const struct gpending *p, uint64_t handle, uint32_t i)
{
	const struct gimage *g = &GL.img[i];

	for (size_t k = 0; k < g->nobj; k++) {
		CUdeviceptr d = 0;
		size_t bytes = 0;
		CUresult r = p->is_func ? cuModuleGetGlobal(&d, &bytes, (CUmodule)(uintptr_t)handle, g->objs[k])
					: cuLibraryGetGlobal(&d, &bytes, (CUlibrary)(uintptr_t)handle, g->objs[k]);
		if (r == CUDA_SUCCESS && d && bytes && cap_put_global(d, bytes, g->objs[k])) {
			ALLOC_GROW(GL.vars, GL.nvars + 1, GL.avars);
			GL.vars[GL.nvars++] = d;
		}
	}
}

void cap_glob_discover(void)
{
	for (size_t n = 0; n < GL.npend; n++) {
		const struct gpending *p = &GL.pend[n];
		uint64_t handle = 0;
		struct cap_map_ent *e;

		if (p->is_func) {
			CUmodule m = NULL;
			if (cuFuncGetModule(&m, (CUfunction)(uintptr_t)p->f) == CUDA_SUCCESS)
				handle = (uint64_t)(uintptr_t)m;
		} else {
			CUlibrary l = NULL;
			if (cuKernelGetLibrary(&l, (CUkernel)(uintptr_t)p->f) == CUDA_SUCCESS)
				handle = (uint64_t)(uintptr_t)l;
		}
		if (!handle || cap_map_get(&GL.asked, handle))
			continue;
		cap_map_put(&GL.asked, handle, 1, 0);
		e = cap_map_get(&GL.by_name, p->name_hash);
		for (uint64_t l = e ? e->v1 : 0; l; l = GL.link[l - 1].next)
			ask_image(p, handle, GL.link[l - 1].image);
	}
	GL.npend = 0;
}

void cap_glob_unloaded(void)
{
	/* handles may come back for other modules: ask them again; the
	 * functions pending are launched again (their cache is gone too); the
	 * variables recorded here leave the checkpoints (the unloaded module's
	 * are gone; the others are asked for again at the next one) */
	cap_map_clear(&GL.asked);
	GL.npend = 0;
	for (size_t i = 0; i < GL.nvars; i++)
		cap_drop_global(GL.vars[i]);
	GL.nvars = 0;
}
