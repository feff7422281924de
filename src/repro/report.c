/*
 * report.c - `gpureduce report` (see report.h): what a maintainer asks for
 * in a bug report, from what capture and shrink already wrote.
 *
 * Inputs: DIR/repro.yaml (shrink's signature, rates and diagnosis), DIR/
 * repro.bin (the reduced trace: which buffers and bytes the repro holds),
 * DIR/repro.cu, and the captured trace (the ENV, SOURCE, STDERR, PROCESS
 * and DEVICE records, the Python stack of the faulting launch).  The repro
 * is built and run here (repro.h, the compiler `verify` uses) and, when
 * compute-sanitizer is found, run once under it (with --padding and, on
 * sm_90, --check-bulk-copy; without them when this sanitizer does not know
 * them).  Sections, in order: title, Environment, What faulted, Kernel
 * source, How to reproduce, compute-sanitizer, What of your data is in
 * this repro, Checklist.  A CPU test checks each (t5024).
 */
#include <errno.h>
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../common/child.h"
#include "../../common/strbuf.h"
#include "../../common/util.h"
#include "../../diagnose/diagnose.h"
#include "../../emit/emit-source.h"
#include "../../addr/params.h"
#include "../../trace/trace.h"
#include "../cmds.h"
#include "repro.h"
#include "report.h"
#include "yamlread.h"

struct rctx {
	const struct report_opts *o;
	struct yflat y;
	struct trace red, orig;
	int have_red, have_orig;
	char *orig_path;
	const struct tr_launch *last;     /* the reduced trace's last launch */
	const struct tr_launch *olaunch;  /* the same launch in the captured trace */
	struct emit_src *src;
	struct emit_elsewhere away;  /* where the source is when src is NULL */
	int have_away;
	char *exe;                        /* built repro, or NULL */
	int runs, faults;
	struct strbuf run_out;            /* first run's output */
	struct strbuf san;                /* sanitizer output */
	struct strbuf san_cmd;
	const char *san_note;
};

static const struct tr_rec *first_of(const struct trace *t, uint32_t type)
{
	for (size_t i = 0; t && i < t->nrec; i++)
		if (t->rec[i].type == type)
			return &t->rec[i];
	return NULL;
}

static const struct trace *facts(const struct rctx *c)
{
	return c->have_orig ? &c->orig : c->have_red ? &c->red : NULL;
}

/* The value of "key: " in ENV's lines, or NULL (static buffer). */
static const char *env_get(const struct rctx *c, const char *key)
{
	static char val[256];
	const struct tr_rec *e = first_of(facts(c), TR_ENV);
	size_t kl = strlen(key);
	if (!e)
		return NULL;
	for (const char *p = e->u.env.text; *p;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		if (n > kl + 1 && !strncmp(p, key, kl) && p[kl] == ':') {
			const char *v = p + kl + 1;
			while (*v == ' ')
				v++;
			snprintf(val, sizeof(val), "%.*s", (int)(n - (size_t)(v - p)), v);
			return val;
		}
		p = nl ? nl + 1 : p + n;
	}
	return NULL;
}

static char *join_path(const char *dir, const char *name)
{
	struct strbuf sb = STRBUF_INIT;
	sb_addf(&sb, "%s/%s", dir, name);
	return sb_detach(&sb, NULL);
}

static int exists(const char *p)
{
	struct stat st;
	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

/* The captured trace: --trace, else repro.yaml's original.trace as given,
 * next to the folder, or inside it. */
static char *find_orig(const struct rctx *c)
{
	const char *t = c->o->trace ? c->o->trace : yflat_get(&c->y, "original.trace", NULL);
	struct strbuf p = STRBUF_INIT;
	const char *base;
	if (!t || !*t)
		return NULL;
	if (exists(t) || c->o->trace)
		return xstrdup(t);
	base = strrchr(t, '/');
	base = base ? base + 1 : t;
	sb_addf(&p, "%s/../%s", c->o->dir, base);
	if (exists(p.buf))
		return sb_detach(&p, NULL);
	sb_reset(&p);
	sb_addf(&p, "%s/%s", c->o->dir, base);
	if (exists(p.buf))
		return sb_detach(&p, NULL);
	sb_release(&p);
	return NULL;
}

static void fence(struct strbuf *md, const char *lang, const char *text, size_t max_lines)
{
	size_t lines = 0;
	sb_addf(md, "```%s\n", lang);
	for (const char *p = text; *p && lines < max_lines; lines++) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		/* keep a captured ``` from closing the fence */
		for (size_t i = 0; i < n; i++)
			sb_addch(md, p[i] == '`' && i + 2 < n && p[i + 1] == '`' && p[i + 2] == '`' ? '\'' : p[i]);
		sb_addch(md, '\n');
		p = nl ? nl + 1 : p + n;
		if (lines + 1 == max_lines && *p)
			sb_adds(md, "... (cut)\n");
	}
	sb_adds(md, "```\n\n");
}

/* ---- sections ---------------------------------------------------------- */

static void sec_title(struct rctx *c, struct strbuf *md)
{
	const char *err = yflat_get(&c->y, "signature.error", "a CUDA error");
	const char *code = yflat_get(&c->y, "signature.code", "?");
	char *dm = params_demangle(yflat_get(&c->y, "signature.kernel", c->last ? c->last->name : "?"));
	char *paren = strchr(dm, '(');
	if (paren && c->src)
		*paren = 0;
	sb_addf(md, "# %s (%s) in %s%s%s: a standalone repro\n\n", err, code, dm,
		c->src ? ", " : "", c->src ? emit_source_origin(c->src->origin) : "");
	sb_adds(md, "_Generated by `gpureduce report` from a trace captured with `gpureduce capture` and reduced "
		"by `gpureduce shrink`. Attach report.tar.gz (repro.cu, repro.yaml, report.md)._\n\n");
	free(dm);
}

static void row(struct strbuf *md, const char *k, const char *v)
{
	if (v && *v)
		sb_addf(md, "| %s | %s |\n", k, v);
}

static void sec_env(struct rctx *c, struct strbuf *md)
{
	const struct tr_rec *dev = first_of(facts(c), TR_DEVICE);
	struct strbuf v = STRBUF_INIT;
	const char *drv;
	static const char *pk[] = { "torch", "torch_cuda", "torch_git", "triton", "cupy", "numpy", "jax", "numba" };

	sb_adds(md, "## Environment\n\n| | |\n|---|---|\n");
	if (dev) {
		sb_addf(&v, "%s (compute capability %u.%u, %u SMs)", dev->u.device.name, dev->u.device.cc_major,
			dev->u.device.cc_minor, dev->u.device.sm_count);
		row(md, "GPU", v.buf);
		sb_reset(&v);
		drv = env_get(c, "nvidia_driver");
		/* a version ("580.82.07"); a capture before the fix recorded a word
		 * of the open module's line ("for") */
		sb_addf(&v, "%s (supports CUDA %u.%u)", drv && isdigit((unsigned char)*drv) ? drv : "unknown",
			dev->u.device.driver_version / 1000, dev->u.device.driver_version % 1000 / 10);
		row(md, "NVIDIA driver", v.buf);
		sb_reset(&v);
		sb_addf(&v, "%u.%u", dev->u.device.toolkit_version / 1000, dev->u.device.toolkit_version % 1000 / 10);
		row(md, "CUDA toolkit (gpureduce's capture library)", v.buf);
		sb_reset(&v);
	} else {
		row(md, "GPU", "unknown (no DEVICE record in the trace)");
	}
	row(md, "CUDA runtime (the program's)", env_get(c, "cuda_runtime"));
	row(md, "NVRTC", env_get(c, "nvrtc"));
	row(md, "OS", env_get(c, "os"));
	row(md, "glibc", env_get(c, "glibc"));
	row(md, "Python", env_get(c, "python"));
	for (size_t i = 0; i < ARRAY_SIZE(pk); i++) {
		const char *x = env_get(c, pk[i]);
		if (x) {
			char k[64];
			snprintf(k, sizeof(k), "%s", pk[i]);
			if (!strcmp(pk[i], "torch_cuda"))
				snprintf(k, sizeof(k), "torch built for CUDA");
			else if (!strcmp(pk[i], "torch_git"))
				snprintf(k, sizeof(k), "torch commit");
			row(md, k, x);
		}
	}
	if (!first_of(facts(c), TR_ENV))
		sb_adds(md, "| note | this trace has no ENV record (captured by a gpureduce before 1.4): versions unknown |\n");
	sb_adds(md, "\n");
	sb_release(&v);
}

/* text with "param N" followed by the source's name for it ("param 0
 * `kv_desc`") where the source names parameters and the text does not
 * already give a name or type in backquotes; into out. */
static void name_params(const struct rctx *c, const char *text, struct strbuf *out)
{
	const char *p = text;
	while (*p) {
		const char *q = strstr(p, "param ");
		char *e;
		unsigned long n;
		if (!q) {
			sb_adds(out, p);
			break;
		}
		sb_add(out, p, (size_t)(q - p) + 6);
		p = q + 6;
		if (!isdigit((unsigned char)*p))
			continue;
		n = strtoul(p, &e, 10);
		sb_add(out, p, (size_t)(e - p));
		p = e;
		if (c->src && n < c->src->nparams && !isdigit((unsigned char)*p) && strncmp(p, " `", 2))
			sb_addf(out, " `%s`", c->src->params[n]);
	}
}

static void sec_fault(struct rctx *c, struct strbuf *md)
{
	const struct tr_rec *se = first_of(facts(c), TR_STDERR);
	const char *diag = yflat_get(&c->y, "diagnosis", NULL);
	const struct tr_launch *l = c->last;

	sb_adds(md, "## What faulted\n\n");
	sb_addf(md, "- **Error:** %s (%s)\n", yflat_get(&c->y, "signature.error", "?"),
		yflat_get(&c->y, "signature.code", "?"));
	if (l) {
		char *dm = params_demangle(l->name);
		sb_addf(md, "- **Kernel:** `%s`, grid (%u,%u,%u), block (%u,%u,%u), %u bytes of dynamic shared memory\n",
			dm, l->grid.x, l->grid.y, l->grid.z, l->block.x, l->block.y, l->block.z, l->shmem);
		free(dm);
		if (c->src && c->src->nparams) {
			sb_adds(md, "- **Parameters:** ");
			for (uint32_t p = 0; p < c->src->nparams; p++)
				sb_addf(md, "%s`%s`%s%s%s", p ? ", " : "", c->src->params[p],
					p < c->src->ntypes ? " (" : "", p < c->src->ntypes ? c->src->types[p] : "",
					p < c->src->ntypes ? ")" : "");
			sb_adds(md, "\n");
		}
	}
	if (diag && *diag) {
		struct strbuf named = STRBUF_INIT;
		name_params(c, diag, &named);
		sb_adds(md, "- **Diagnosis (in terms of the kernel's parameters):**\n\n");
		fence(md, "", named.buf, 40);
		sb_release(&named);
	}
	if (se && *se->u.stderr_tail.text) {
		/* the assert's own words, and the framework's error */
		struct strbuf q = STRBUF_INIT;
		for (const char *p = se->u.stderr_tail.text; *p;) {
			const char *nl = strchr(p, '\n');
			size_t n = nl ? (size_t)(nl - p) : strlen(p);
			char *line = xstrndup(p, n);
			if (strstr(line, "Assertion") || strstr(line, "device-side assert") ||
			    strstr(line, "CUDA error") || strstr(line, "Error") || strstr(line, "error:"))
				if (q.len < 4000)
					sb_addf(&q, "%s\n", line);
			free(line);
			p = nl ? nl + 1 : p + n;
		}
		if (q.len) {
			sb_adds(md, "- **The program printed** (its stderr, kept by capture):\n\n");
			fence(md, "", q.buf, 30);
		}
		sb_release(&q);
	}
	if (c->olaunch && c->olaunch->py_state == TR_PY_FRAMES && c->olaunch->nframes) {
		sb_adds(md, "- **Python stack of the launch** (innermost first):\n\n```\n");
		for (uint32_t i = 0; i < c->olaunch->nframes; i++)
			sb_addf(md, "%s:%u in %s\n", c->olaunch->frames[i].file, c->olaunch->frames[i].line,
				c->olaunch->frames[i].func);
		sb_adds(md, "```\n\n");
	} else if (c->olaunch && c->olaunch->py_state == TR_PY_NO_GIL) {
		sb_adds(md, "- **Python stack:** launched from a thread whose stack could not be read\n\n");
	} else {
		sb_adds(md, "- **Python stack:** none (not launched from Python, or the captured trace is missing)\n\n");
	}
}

static void sec_source(struct rctx *c, struct strbuf *md)
{
	struct strbuf blk = STRBUF_INIT, plain = STRBUF_INIT;
	sb_adds(md, "## Kernel source\n\n");
	if (!c->src && c->have_away) {
		const struct emit_elsewhere *e = &c->away;
		sb_addf(md, "Not captured. %c%s names `%s:%u`.", toupper((unsigned char)e->why[0]), e->why + 1, e->file,
			e->line);
		if (e->url)
			sb_addf(md, " That is %s's source; the line at the build the program ran (torch %s): %s\n\n",
				e->project, e->version ? e->version : "?", e->url);
		else if (e->project)
			sb_addf(md, " It is a %s file; torch %s names no exact commit or tag to link.\n\n", e->project,
				e->version ? e->version : "(version not recorded)");
		else
			sb_adds(md, "\n\n");
		return;
	}
	if (!c->src) {
		sb_adds(md, "Not available: the kernel's source was not captured (a precompiled binary without "
			"line info, or a trace from a gpureduce before 1.4). repro.cu holds the binary.\n\n");
		return;
	}
	sb_addf(md, "Origin: %s%s%s%s.\n\n", emit_source_origin(c->src->origin),
		*c->src->path ? ", from `" : "", c->src->path, *c->src->path ? "`" : "");
	emit_source_block(&blk, c->src, "");
	/* the comment block without its comment markers */
	for (const char *p = blk.buf; *p;) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);
		if (n >= 3 && !strncmp(p, " * ", 3))
			sb_add(&plain, p + 3, n - 3);
		else if (n == 2 && !strncmp(p, " *", 2))
			;
		else if (!(n == 2 && !strncmp(p, "/*", 2)) && !(n == 3 && !strncmp(p, " */", 3)))
			sb_add(&plain, p, n);
		if (!(n == 2 && !strncmp(p, "/*", 2)) && !(n == 3 && !strncmp(p, " */", 3)))
			sb_addch(&plain, '\n');
		p = nl ? nl + 1 : p + n;
	}
	fence(md, "", plain.buf, 200);
	sb_release(&blk);
	sb_release(&plain);
}

static void run_repro(struct rctx *c)
{
	char *cu = join_path(c->o->dir, "repro.cu");
	struct strbuf err = STRBUF_INIT;
	struct repro_run r;

	if (c->o->runs <= 0)
		goto out;
	c->exe = join_path(c->o->dir, "repro.report-exe");
	if (repro_build(cu, c->exe, &err) < 0) {
		sb_addf(&c->run_out, "could not build repro.cu: %s\n", err.buf);
		free(c->exe);
		c->exe = NULL;
		goto out;
	}
	for (int i = 0; i < c->o->runs; i++) {
		struct strbuf log = STRBUF_INIT;
		sb_reset(&err);
		if (repro_run_once(c->exe, NULL, 60, &r, &log, &err) < 0) {
			sb_addf(&c->run_out, "could not run it: %s\n", err.buf);
			sb_release(&log);
			break;
		}
		c->runs++;
		c->faults += r.exit_code == 1;
		if (i == 0)
			sb_add(&c->run_out, log.buf, log.len);
		sb_release(&log);
	}
out:
	free(cu);
	sb_release(&err);
}

/* A race's repro.cu loops over its tries (emit.c: "repro_tries(N)" in
 * main): say so, and how to change the count, where the maintainer reads
 * how to run it. */
static void repro_tries_note(const struct rctx *c, struct strbuf *md)
{
	char *cu = join_path(c->o->dir, "repro.cu");
	struct strbuf text = STRBUF_INIT, err = STRBUF_INIT;
	const char *p;
	int n;

	if (read_file(cu, &text, &err) == 0 && (p = strstr(text.buf, "tries = repro_tries(")) &&
	    sscanf(p + 20, "%d", &n) == 1 && n > 1)
		sb_addf(md, "The fault is a race (it came in %s of shrink's replays of the reduced trace): "
			"one run of repro.cu makes its set-up and launches up to %d times in the same process "
			"and stops at the first fault; each clean try prints `repro: try N of %d ran clean`. "
			"`REPRO_TRIES=1 ./repro` makes one try, as the program did.\n\n",
			yflat_get(&c->y, "reproduction.reduced", "some"), n, n);
	free(cu);
	sb_release(&text);
	sb_release(&err);
}

static void sec_repro(struct rctx *c, struct strbuf *md)
{
	sb_adds(md, "## How to reproduce\n\n```sh\nnvcc -o repro repro.cu -lcuda\n./repro    # exit 1: the fault "
		"reproduced; 0: ran clean; 2: setup failed\n```\n\n");
	sb_addf(md, "repro.cu uses the CUDA driver API only, holds the kernel's binary and every byte it needs. "
		"During `shrink` it faulted %s times (repro.yaml: reproduction.repro_cu); the reduced trace "
		"replayed to the fault %s times, the original %s.\n\n",
		yflat_get(&c->y, "reproduction.repro_cu", "?"), yflat_get(&c->y, "reproduction.reduced", "?"),
		yflat_get(&c->y, "reproduction.original", "?"));
	repro_tries_note(c, md);
	if (c->o->runs <= 0) {
		sb_adds(md, "Not run by `report` (--runs=0).\n\n");
		return;
	}
	if (c->runs)
		sb_addf(md, "**Verified by `gpureduce report`: faulted %d/%d runs.** The first run printed:\n\n",
			c->faults, c->runs);
	fence(md, "", c->run_out.len ? c->run_out.buf : "(nothing)", 40);
}

static int is_sm90(const struct rctx *c)
{
	const struct tr_rec *dev = first_of(facts(c), TR_DEVICE);
	return dev && dev->u.device.cc_major == 9;
}

static int san_once(const char *san, const char *exe, int extra, int sm90, struct strbuf *out, struct strbuf *cmd)
{
	const char *argv[14];
	struct strbuf err = STRBUF_INIT;
	int n = 0, r;
	argv[n++] = san;
	argv[n++] = "--tool";
	argv[n++] = "memcheck";
	if (extra) {
		argv[n++] = "--padding";
		argv[n++] = "32";
		if (sm90) {   /* Hopper: TMA bulk copies and warpgroup MMA */
			argv[n++] = "--check-bulk-copy";
			argv[n++] = "yes";
			argv[n++] = "--check-warpgroup-mma";
			argv[n++] = "yes";
		}
	}
	argv[n++] = exe;
	argv[n] = NULL;
	sb_reset(cmd);
	sb_adds(cmd, "compute-sanitizer");
	for (int i = 1; i < n - 1; i++)
		sb_addf(cmd, " %s", argv[i]);
	sb_adds(cmd, " ./repro");
	sb_reset(out);
	r = child_run((char *const *)argv, NULL, CHILD_MERGE_ERR | CHILD_NULL_IN, out, 300, &err);
	if (r < 0)
		sb_addf(out, "could not run %s: %s\n", san, err.buf);
	sb_release(&err);
	return r;
}

static void run_sanitizer(struct rctx *c)
{
	const char *san;
	if (!c->o->sanitize || !c->exe) {
		c->san_note = !c->o->sanitize ? "not run (--no-sanitizer)" : "not run: the repro was not built";
		return;
	}
	san = diagnose_find_sanitizer();
	if (!san) {
		c->san_note = "not run: compute-sanitizer not found ($GPUREDUCE_SANITIZER, PATH, /usr/local/cuda/bin)";
		return;
	}
	san_once(san, c->exe, 1, is_sm90(c), &c->san, &c->san_cmd);
	if (strstr(c->san.buf, "nrecognized option") || strstr(c->san.buf, "nknown option") ||
	    strstr(c->san.buf, "nvalid option"))
		san_once(san, c->exe, 0, 0, &c->san, &c->san_cmd);
}

static void sec_sanitizer(struct rctx *c, struct strbuf *md)
{
	struct strbuf ex = STRBUF_INIT;
	sb_adds(md, "## compute-sanitizer on the repro\n\n");
	if (c->san_note) {
		sb_addf(md, "%s.\n\n", c->san_note);
		return;
	}
	sb_addf(md, "`%s` (one launch: seconds, not hours on the job):\n\n", c->san_cmd.buf);
	if (c->have_red && diagnose_explain(c->san.buf, &c->red, &ex) == 0) {
		struct strbuf named = STRBUF_INIT;
		name_params(c, ex.buf, &named);
		sb_addf(md, "In the kernel's terms: %s\n\n", named.buf);
		sb_release(&named);
	}
	fence(md, "", c->san.len ? c->san.buf : "(no output)", 60);
	sb_release(&ex);
}

/* A write into a buffer: what its bytes became. */
enum { W_VERBATIM, W_FILL, W_ZERO };
struct bwrite {
	uint64_t off, len;
	int kind;
};

struct bufinfo {
	uint64_t addr, size;
	const char *name;
	struct bwrite *w;        /* in trace order: a later write wins */
	size_t nw;
	uint64_t bytes[3];       /* by kind, after the last writer won */
};

/* Bytes of each kind: the segments between write boundaries, each owned
 * by the last write covering it. */
static void settle(struct bufinfo *b)
{
	uint64_t *cut = xmalloc((2 * b->nw + 2) * sizeof(*cut));
	size_t nc = 0;
	cut[nc++] = 0;
	cut[nc++] = b->size;
	for (size_t i = 0; i < b->nw; i++) {
		cut[nc++] = b->w[i].off;
		cut[nc++] = b->w[i].off + b->w[i].len > b->size ? b->size : b->w[i].off + b->w[i].len;
	}
	qsort(cut, nc, sizeof(*cut), u64_cmp);
	for (size_t k = 0; k + 1 < nc; k++) {
		uint64_t lo = cut[k], hi = cut[k + 1];
		if (hi <= lo || lo >= b->size)
			continue;
		for (size_t i = b->nw; i-- > 0;)
			if (b->w[i].off <= lo && b->w[i].off + b->w[i].len >= hi) {
				b->bytes[b->w[i].kind] += hi - lo;
				break;
			}
	}
	free(cut);
}

static int all_zero(const struct trace *t, uint64_t hash)
{
	struct strbuf b = STRBUF_INIT, e = STRBUF_INIT;
	int z = 0;
	if (trace_blob_read(t, hash, &b, 1ull << 30, &e) == 0) {
		z = 1;
		for (size_t i = 0; i < b.len && z; i++)
			z = !b.buf[i];
	}
	sb_release(&b);
	sb_release(&e);
	return z;
}

static void add_path(struct strbuf *paths, const char *p)
{
	struct strbuf key = STRBUF_INIT;
	if (!p || !*p)
		return;
	sb_addf(&key, "- `%s`\n", p);
	if (!strstr(paths->buf ? paths->buf : "", key.buf))
		sb_add(paths, key.buf, key.len);
	sb_release(&key);
}

static void sec_data(struct rctx *c, struct strbuf *md)
{
	struct bufinfo *b = NULL;
	size_t nb = 0;
	uint64_t tot[3] = { 0, 0, 0 }, unwritten = 0;
	struct strbuf paths = STRBUF_INIT;
	const struct tr_rec *proc = first_of(facts(c), TR_PROCESS);

	sb_adds(md, "## What of your data is in this repro\n\n");
	for (size_t i = 0; c->have_red && i < c->red.nrec; i++) {
		const struct tr_rec *r = &c->red.rec[i];
		if (r->type == TR_ALLOC) {
			b = xrealloc(b, (nb + 1) * sizeof(*b));
			memset(&b[nb], 0, sizeof(*b));
			b[nb].addr = r->u.alloc.addr;
			b[nb].size = r->u.alloc.size;
			b[nb].name = r->u.alloc.name;
			nb++;
		} else if (r->type == TR_MEMCPY_H2D || r->type == TR_MEMSET) {
			int ms = r->type == TR_MEMSET;
			uint64_t dst = ms ? r->u.memset.dst : r->u.copy.dst;
			uint64_t sz = ms ? r->u.memset.width * r->u.memset.elem_size : r->u.copy.size;
			int kind = ms ? (r->u.memset.value ? W_FILL : W_ZERO) :
				   (r->u.copy.flags & TR_F_FILL) ? W_FILL :
				   all_zero(&c->red, r->u.copy.blob) ? W_ZERO : W_VERBATIM;
			for (size_t k = nb; k-- > 0;) {
				uint64_t rows = ms && r->u.memset.height > 1 ? r->u.memset.height : 1;
				if (dst < b[k].addr || dst >= b[k].addr + b[k].size)
					continue;
				for (uint64_t row = 0; row < rows && row < 4096; row++) {
					b[k].w = xrealloc(b[k].w, (b[k].nw + 1) * sizeof(*b[k].w));
					b[k].w[b[k].nw].off = dst - b[k].addr + row * (ms ? r->u.memset.pitch : 0);
					b[k].w[b[k].nw].len = sz;
					b[k].w[b[k].nw].kind = kind;
					b[k].nw++;
				}
				break;
			}
		}
	}
	sb_adds(md, "| buffer | bytes | your bytes, verbatim | replaced by seeded/constant fills | zeros | not written |\n"
		"|---|---|---|---|---|---|\n");
	for (size_t k = 0; k < nb; k++) {
		uint64_t unw;
		settle(&b[k]);
		unw = b[k].size - b[k].bytes[W_VERBATIM] - b[k].bytes[W_FILL] - b[k].bytes[W_ZERO];
		sb_addf(md, "| %zu%s%s | %llu | %llu | %llu | %llu | %llu |\n", k, b[k].name && *b[k].name ? " " : "",
			b[k].name ? b[k].name : "", (unsigned long long)b[k].size,
			(unsigned long long)b[k].bytes[W_VERBATIM], (unsigned long long)b[k].bytes[W_FILL],
			(unsigned long long)b[k].bytes[W_ZERO], (unsigned long long)unw);
		for (int j = 0; j < 3; j++)
			tot[j] += b[k].bytes[j];
		unwritten += unw;
		free(b[k].w);
	}
	sb_addf(md, "\n**%llu bytes of your program's data are in repro.cu verbatim**; %llu bytes were replaced by "
		"fills shrink proved do not matter to the fault, %llu are zeros, %llu never written.%s\n\n",
		(unsigned long long)tot[W_VERBATIM], (unsigned long long)tot[W_FILL],
		(unsigned long long)tot[W_ZERO], (unsigned long long)unwritten,
		tot[W_VERBATIM] ? " Look at them before posting (the byte arrays in repro.cu)." : "");
	/* the paths and command line the files mention */
	if (proc) {
		sb_adds(md, "The command line and folder it records (repro.cu's header):\n\n```\n");
		for (uint32_t i = 0; i < proc->u.process.argc; i++)
			sb_addf(md, "%s%s", i ? " " : "", proc->u.process.argv[i]);
		sb_addf(md, "\ncwd: %s\n```\n\n", proc->u.process.cwd);
		add_path(&paths, proc->u.process.cwd);
	}
	if (c->olaunch)
		for (uint32_t i = 0; i < c->olaunch->nframes; i++)
			add_path(&paths, c->olaunch->frames[i].file);
	if (c->src)
		add_path(&paths, c->src->path);
	if (paths.len)
		sb_addf(md, "Paths it mentions:\n\n%s\n", paths.buf);
	sb_addf(md, "%s\n\n", c->o->redact ? "`--redact`: the paths above are replaced by `<pathN>/name` in "
		"report.md and in the repro.cu of report.tar.gz (the repro.cu in the folder is unchanged)." :
		"`gpureduce report --redact` replaces them in report.md and in the tarball's repro.cu.");
	free(b);
	sb_release(&paths);
}

static void sec_checklist(struct rctx *c, struct strbuf *md)
{
	sb_adds(md, "## Checklist\n\n");
	sb_adds(md, "- [x] Ran with blocking launches (`gpureduce capture` waits for each launch, "
		"as `CUDA_LAUNCH_BLOCKING=1` does): the faulting kernel is the one named above\n");
	sb_addf(md, "- [%c] compute-sanitizer: %s\n", c->san_note ? ' ' : 'x',
		c->san_note ? c->san_note : "output above");
	sb_addf(md, "- [%c] Versions: %s\n", first_of(facts(c), TR_ENV) ? 'x' : ' ',
		first_of(facts(c), TR_ENV) ? "above (recorded at capture)" : "unknown (no ENV record)");
	sb_addf(md, "- [x] Minimal standalone repro: %s launch(es), %s buffer(s), CUDA driver API only\n",
		yflat_get(&c->y, "reduced.launches", "?"), yflat_get(&c->y, "reduced.buffers", "?"));
	sb_addf(md, "- [%c] Reproduces: %s\n", c->runs && c->faults == c->runs ? 'x' : ' ',
		c->runs ? (c->faults == c->runs ? "every run here" : "NOT every run here (see above)")
			: "not run by report");
	if (!c->src && c->have_away && c->away.url)
		sb_addf(md, "- [x] Kernel source: %s's, linked above (the line %s names)\n", c->away.project, c->away.why);
	else if (!c->src && c->have_away)
		sb_addf(md, "- [ ] Kernel source: not captured; %s names `%s:%u`\n", c->away.why, c->away.file, c->away.line);
	else
		sb_addf(md, "- [%c] Kernel source: %s\n", c->src ? 'x' : ' ', c->src ? "above, and in repro.cu" : "not captured");
	sb_adds(md, "\n");
}

/* ---- redaction --------------------------------------------------------- */

static int path_char(char ch)
{
	return isalnum((unsigned char)ch) || strchr("/._-+~@", ch);
}

/* A URL's text from p ("https://github.com/..." is not a path of the
 * user's to hide: the links to a library's source stay whole): its end,
 * or p when p does not start "//" after a scheme's ':'. */
static const char *url_end(const char *text, const char *p)
{
	const char *s;
	if (p[0] != '/' || p[1] != '/' || p == text || p[-1] != ':')
		return p;
	for (s = p - 1; s > text && isalpha((unsigned char)s[-1]); s--)
		;
	if (s == p - 1)
		return p;   /* no scheme before the ':' */
	while (*p && !isspace((unsigned char)*p) && !strchr("<>\"'`)]", *p))
		p++;
	return p;
}

void report_redact_paths(const char *text, struct strbuf *out)
{
	char **dirs = NULL;
	size_t nd = 0;
	for (const char *p = text; *p;) {
		const char *e, *slash;
		size_t k;
		if ((e = url_end(text, p)) != p) {
			sb_add(out, p, (size_t)(e - p));
			p = e;
			continue;
		}
		if (*p != '/' || (p > text && path_char(p[-1]))) {
			sb_addch(out, *p++);
			continue;
		}
		for (e = p; path_char(*e); e++)
			;
		slash = NULL;
		for (const char *q = p; q < e; q++)
			if (*q == '/')
				slash = q;
		if (slash == p || e - p < 3) {   /* "/x": one component, not a path to hide */
			sb_add(out, p, (size_t)(e - p));
			p = e;
			continue;
		}
		for (k = 0; k < nd; k++)
			if (strlen(dirs[k]) == (size_t)(slash - p) && !strncmp(dirs[k], p, (size_t)(slash - p)))
				break;
		if (k == nd) {
			dirs = xrealloc(dirs, (nd + 1) * sizeof(*dirs));
			dirs[nd++] = xstrndup(p, (size_t)(slash - p));
		}
		sb_addf(out, "<path%zu>", k + 1);
		sb_add(out, slash, (size_t)(e - slash));
		p = e;
	}
	for (size_t k = 0; k < nd; k++)
		free(dirs[k]);
	free(dirs);
}

static int make_tar(const struct rctx *c, struct strbuf *err)
{
	struct strbuf stage = STRBUF_INIT, p = STRBUF_INIT, txt = STRBUF_INIT, red = STRBUF_INIT;
	char *tarpath = join_path(c->o->dir, "report.tar.gz");
	const char *names[3] = { "repro.cu", "repro.yaml", "report.md" };
	int ret = -1, r;

	sb_addf(&stage, "%s/.report-stage", c->o->dir);
	mkdir(stage.buf, 0755);
	for (int i = 0; i < 3; i++) {
		FILE *f;
		char chunk[8192];
		size_t n;
		sb_reset(&p);
		sb_addf(&p, "%s/%s", c->o->dir, names[i]);
		sb_reset(&txt);
		if (!(f = fopen(p.buf, "r"))) {
			sb_addf(err, "%s: cannot read", p.buf);
			goto out;
		}
		while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
			sb_add(&txt, chunk, n);
		fclose(f);
		sb_reset(&red);
		if (c->o->redact && i < 2)
			report_redact_paths(txt.buf ? txt.buf : "", &red);
		else
			sb_add(&red, txt.buf ? txt.buf : "", txt.len);
		sb_reset(&p);
		sb_addf(&p, "%s/%s", stage.buf, names[i]);
		if (write_file_whole(p.buf, red.buf ? red.buf : "", red.len, err) < 0)
			goto out;
	}
	{
		const char *argv[] = { "tar", "-czf", tarpath, "-C", stage.buf, "repro.cu", "repro.yaml",
				       "report.md", NULL };
		struct strbuf o = STRBUF_INIT;
		sb_reset(err);
		r = child_run((char *const *)argv, NULL, CHILD_MERGE_ERR | CHILD_NULL_IN, &o, 60, err);
		if (r != 0)
			sb_addf(err, "%s: tar failed (%d): %s", tarpath, r, o.buf ? o.buf : "");
		sb_release(&o);
		if (r != 0)
			goto out;
	}
	ret = 0;
out:
	for (int i = 0; i < 3; i++) {
		sb_reset(&p);
		sb_addf(&p, "%s/%s", stage.buf, names[i]);
		unlink(p.buf);
	}
	rmdir(stage.buf);
	free(tarpath);
	sb_release(&stage);
	sb_release(&p);
	sb_release(&txt);
	sb_release(&red);
	return ret;
}

/* ---- the command's work ------------------------------------------------ */

int report_write(const struct report_opts *o, int *exit_code, struct strbuf *err)
{
	struct rctx c;
	struct strbuf md = STRBUF_INIT, e = STRBUF_INIT, out = STRBUF_INIT;
	char *yml = join_path(o->dir, "repro.yaml"), *bin = join_path(o->dir, "repro.bin");
	char *cu = join_path(o->dir, "repro.cu"), *mdpath = join_path(o->dir, "report.md");
	int ret = -1;

	memset(&c, 0, sizeof(c));
	c.o = o;
	*exit_code = EXIT_INPUT;
	if (!exists(cu)) {
		sb_addf(err, "%s: no repro.cu here; run `gpureduce shrink -o %s/repro.cu TRACE` first", o->dir, o->dir);
		goto out;
	}
	if (yflat_read(&c.y, yml, err) < 0)
		goto out;
	if (trace_open(&c.red, bin, 0, err) < 0)
		goto out;
	c.have_red = 1;
	c.orig_path = find_orig(&c);
	if (c.orig_path) {
		if (trace_open(&c.orig, c.orig_path, 0, &e) == 0)
			c.have_orig = 1;
		else
			fprintf(stderr, "gpureduce report: warning: %s; the report lacks the captured facts\n", e.buf);
	} else {
		fprintf(stderr, "gpureduce report: warning: the captured trace (%s) was not found; pass --trace "
			"FILE for the environment, source and Python stack\n",
			yflat_get(&c.y, "original.trace", "not named in repro.yaml"));
	}
	for (size_t i = 0; i < c.red.nrec; i++)
		if (c.red.rec[i].type == TR_LAUNCH)
			c.last = &c.red.rec[i].u.launch;
	for (size_t i = 0; c.last && c.have_orig && i < c.orig.nrec; i++)
		if (c.orig.rec[i].type == TR_LAUNCH && c.orig.rec[i].u.launch.seq == c.last->seq &&
		    !strcmp(c.orig.rec[i].u.launch.name, c.last->name))
			c.olaunch = &c.orig.rec[i].u.launch;
	if (c.last)
		c.src = emit_source_find(facts(&c), c.last, yflat_get(&c.y, "diagnosis", NULL));
	if (c.last && !c.src)
		c.have_away = emit_source_elsewhere(facts(&c), yflat_get(&c.y, "diagnosis", NULL), &c.away);

	run_repro(&c);
	run_sanitizer(&c);

	sec_title(&c, &md);
	sec_env(&c, &md);
	sec_fault(&c, &md);
	sec_source(&c, &md);
	sec_repro(&c, &md);
	sec_sanitizer(&c, &md);
	sec_data(&c, &md);
	sec_checklist(&c, &md);
	if (o->redact)
		report_redact_paths(md.buf, &out);
	else
		sb_add(&out, md.buf, md.len);
	*exit_code = EXIT_ENV;
	if (write_file_whole(mdpath, out.buf, out.len, err) < 0)
		goto out;
	if (o->tar && make_tar(&c, err) < 0)
		goto out;
	*exit_code = EXIT_OK;
	ret = 0;
out:
	if (c.exe)
		unlink(c.exe);
	free(c.exe);
	emit_source_free(c.src);
	emit_elsewhere_free(&c.away);
	if (c.have_red)
		trace_release(&c.red);
	if (c.have_orig)
		trace_release(&c.orig);
	free(c.orig_path);
	yflat_release(&c.y);
	sb_release(&c.run_out);
	sb_release(&c.san);
	sb_release(&c.san_cmd);
	sb_release(&md);
	sb_release(&out);
	sb_release(&e);
	free(yml);
	free(bin);
	free(cu);
	free(mdpath);
	return ret;
}
