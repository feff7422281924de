/*
 * source.c - what a bug report needs from inside the traced process: the
 * environment (one ENV record) and the source of Triton and Inductor
 * kernels (SOURCE records), docs/FORMAT.md 1.4.  `gpureduce report` and
 * the repro.cu emitter read them; replay ignores them.
 *
 * ENV is written once, at the first launch: uname, glibc, the NVIDIA
 * kernel module's version line, the CUDA runtime's version (when a
 * libcudart is loaded: found among the loaded objects with
 * dl_iterate_phdr, since Python extensions load it RTLD_LOCAL where
 * dlsym(RTLD_DEFAULT) does not see it), and, when an initialised CPython
 * is in the process, its version and those of torch, triton, cupy,
 * numpy, jax, numba if imported (sys.modules, read with the GIL).  The
 * host name is not recorded.
 *
 * SOURCE: at the first launch of each kernel handle whose Python stack
 * (already read by python.c, without the GIL) passes through a file whose
 * name contains "triton" (triton/runtime/jit.py, or Inductor's
 * triton_heuristics.py), take the GIL (PyGILState_Ensure, as torchmem.c
 * does: launchers release it around the launch, and a launch is never
 * made while holding an allocator lock we could need) and call a small
 * Python function that walks sys._getframe() up to JITFunction.run or
 * CachingAutotuner.run, and packs the JITFunction's source, the launch's
 * parameter names (the compiled signature without constexprs, then
 * Triton's scratch pointers), constexpr values, file and first line, the
 * Triton version and the compiled kernel's PTX.  Once per kernel handle,
 * never per launch.  GPUREDUCE_SOURCE=0 turns all of this off (nothing
 * then takes the GIL here).
 *
 * The CPython API comes from pyembed.c (resolved with dlsym); any
 * failure gives no record, never a crash.
 */
#include <dlfcn.h>
#include <gnu/libc-version.h>
#include <link.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>

#include <cuda.h>

#include "../common/strbuf.h"
#include "../common/util.h"
#include "capture.h"
#include "pyembed.h"


static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static int g_off;                /* GPUREDUCE_SOURCE=0 */
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;  /* the fields below */
static PyObject *g_ns;           /* the helper's namespace, once compiled */
static int g_broken;
static int g_env_taken;          /* ENV read (or being read) */

/* Returns bytes.  env(): "key: value" lines.  source(): b'' when no Triton
 * frame, else origin, kernel, path, meta, text, ptx joined by NUL. */
static const char helper_src[] =
	"import sys\n"
	"def _v(n):\n"
	"    m = sys.modules.get(n)\n"
	"    v = getattr(m, '__version__', None) if m is not None else None\n"
	"    return None if v is None else str(v)\n"
	"def env():\n"
	"    out = ['python: %s' % sys.version.split()[0]]\n"
	"    for n in ('torch', 'triton', 'cupy', 'numpy', 'jax', 'numba'):\n"
	"        v = _v(n)\n"
	"        if v: out.append('%s: %s' % (n, v))\n"
	"    try:\n"
	"        t = sys.modules.get('torch')\n"
	"        if t is not None and t.version.cuda: out.append('torch_cuda: %s' % t.version.cuda)\n"
	"        g = getattr(t.version, 'git_version', None) if t is not None else None\n"
	"        if g and g != 'Unknown': out.append('torch_git: %s' % g)\n"
	"    except Exception: pass\n"
	"    return '\\n'.join(out).encode('utf-8', 'replace')\n"
	"def _one(s):\n"
	"    return ' '.join(str(s).split())[:200]\n"
	"def _find():\n"
	"    f = sys._getframe(0)\n"
	"    while f is not None:\n"
	"        co = f.f_code\n"
	"        fn = co.co_filename.replace('\\\\', '/')\n"
	"        if co.co_name == 'run' and fn.endswith('runtime/jit.py'):\n"
	"            s = f.f_locals.get('self')\n"
	"            if hasattr(s, 'arg_names'):\n"
	"                return 'triton', s, f.f_locals.get('kernel'), f.f_locals, None\n"
	"        if co.co_name == 'run' and fn.endswith('triton_heuristics.py'):\n"
	"            s = f.f_locals.get('self')\n"
	"            j = getattr(s, 'fn', None)\n"
	"            if hasattr(j, 'arg_names'):\n"
	"                ls = getattr(s, 'launchers', None) or [None]\n"
	"                return 'inductor', j, getattr(ls[0], 'bin', None), f.f_locals, s\n"
	"        f = f.f_back\n"
	"    return None\n"
	"def source():\n"
	"    r = _find()\n"
	"    if r is None: return b''\n"
	"    kind, fn, kern, loc, tuner = r\n"
	"    names = list(fn.arg_names)\n"
	"    cidx = set(getattr(fn, 'constexprs', ()) or ())\n"
	"    src = getattr(kern, 'src', None)\n"
	"    sig = getattr(src, 'signature', None)\n"
	"    if not isinstance(sig, dict) and tuner is not None:\n"
	"        sig = (getattr(tuner, 'triton_meta', None) or {}).get('signature')\n"
	"    params, types = [], []\n"
	"    if isinstance(sig, dict) and sig:\n"
	"        for k, t in sig.items():\n"
	"            n = names[k] if isinstance(k, int) and k < len(names) else k\n"
	"            if (isinstance(k, int) and k in cidx) or str(t) == 'constexpr': continue\n"
	"            if n in names and names.index(n) in cidx: continue\n"
	"            params.append(str(n)); types.append(str(t).replace(' ', ''))\n"
	"    else:\n"
	"        params = [n for i, n in enumerate(names) if i not in cidx]\n"
	"    md = getattr(kern, 'metadata', None)\n"
	"    if md is not None and hasattr(md, 'global_scratch_size'):\n"
	"        params.append('global_scratch'); types.append('*i8')\n"
	"    if md is not None and hasattr(md, 'profile_scratch_size'):\n"
	"        params.append('profile_scratch'); types.append('*i8')\n"
	"    vals = {}\n"
	"    ba = loc.get('bound_args')\n"
	"    if isinstance(ba, dict): vals.update(ba)\n"
	"    a = loc.get('args') or ()\n"
	"    for i, n in enumerate(names[:len(a)]): vals.setdefault(n, a[i])\n"
	"    vals.update(loc.get('kwargs') or {})\n"
	"    if tuner is not None:\n"
	"        try: vals.update(tuner.launchers[0].config.kwargs)\n"
	"        except Exception: pass\n"
	"    cons = []\n"
	"    for i in sorted(cidx):\n"
	"        if i < len(names):\n"
	"            n = names[i]\n"
	"            if n in vals: cons.append('%s=%s' % (n, _one(repr(vals[n]))))\n"
	"            else:\n"
	"                try: cons.append('%s=%s (default)' % (n, _one(repr(fn.params[i].default))))\n"
	"                except Exception: cons.append('%s' % n)\n"
	"    code = getattr(getattr(fn, 'fn', None), '__code__', None)\n"
	"    path = code.co_filename if code else ''\n"
	"    first = code.co_firstlineno if code else 0\n"
	"    text = getattr(fn, 'src', None) or ''\n"
	"    name = getattr(kern, 'name', None) or getattr(md, 'name', None) or fn.__name__\n"
	"    try:\n"
	"        import linecache\n"
	"        ls = linecache.getlines(path)\n"
	"        for i in range(max(first - 1, 0), min(len(ls), first + 50)):\n"
	"            if ls[i].lstrip().startswith('def '):\n"
	"                first = i + 1; break\n"
	"    except Exception: pass\n"
	"    if kind == 'triton' and ('torchinductor' in path or str(getattr(fn, '__module__', '')).startswith('torch._inductor')):\n"
	"        kind = 'inductor'\n"
	"    meta = ['function: %s' % fn.__name__, 'params: %s' % ' '.join(params),\n"
	"            'types: %s' % ' '.join(types), 'constexpr: %s' % ', '.join(cons),\n"
	"            'line: %d' % first, 'version: %s' % (_v('triton') or '')]\n"
	"    ptx = ''\n"
	"    try: ptx = (getattr(kern, 'asm', None) or {}).get('ptx') or ''\n"
	"    except Exception: pass\n"
	"    if isinstance(ptx, bytes): ptx = ptx.decode('utf-8', 'replace')\n"
	"    parts = [kind, str(name), path, '\\n'.join(meta), text, ptx]\n"
	"    return b'\\0'.join(p.replace('\\0', ' ').encode('utf-8', 'replace') for p in parts)\n";

struct cap_src_reading {
	char *env;                   /* ENV text, or NULL */
	struct cap_ext_files ext;    /* extension sources (extsrc.c) */
	struct strbuf raw;           /* source(): NUL-separated fields */
	uint64_t key;                /* the kernel handle */
};

static void init(void)
{
	const char *s = getenv("GPUREDUCE_SOURCE");
	g_off = s && !strcmp(s, "0");
}

/* With the GIL (and g_mu): the helper's namespace, compiled once. */
static PyObject *helper(void)
{
	if (!g_ns && !g_broken) {
		g_ns = cap_py_module(helper_src, "<gpureduce source>");   /* kept forever */
		g_broken = !g_ns;
	}
	return g_ns;
}

/* With the GIL: call helper function `name`, its bytes appended to out.
 * 0, or -1 (nothing appended). */
static int call_helper(const char *name, struct strbuf *out)
{
	return cap_py_call_bytes(helper(), name, out);
}

struct lib_find {
	const char *stem;
	char path[512];
};

static int find_lib_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct lib_find *f = arg;
	const char *base;
	(void)size;
	if (!info->dlpi_name || !*info->dlpi_name)
		return 0;
	base = strrchr(info->dlpi_name, '/');
	base = base ? base + 1 : info->dlpi_name;
	if (strncmp(base, f->stem, strlen(f->stem)))
		return 0;
	snprintf(f->path, sizeof(f->path), "%s", info->dlpi_name);
	return 1;
}

/* A symbol of an already loaded library whose file name starts with stem
 * (never loads one). */
static void *loaded_sym(const char *stem, const char *name)
{
	struct lib_find f = { stem, "" };
	void *h, *p = NULL;
	dl_iterate_phdr(find_lib_cb, &f);
	if (!f.path[0])
		return NULL;
	h = dlopen(f.path, RTLD_LAZY | RTLD_NOLOAD);
	if (h) {
		p = dlsym(h, name);
		dlclose(h);
	}
	return p;
}

/* The facts that need no Python. */
static void env_native(struct strbuf *o)
{
	struct utsname u;
	char line[512];
	FILE *f;
	int (*rtver)(int *) = (int (*)(int *))loaded_sym("libcudart.so", "cudaRuntimeGetVersion");
	int (*nvrtcver)(int *, int *) = (int (*)(int *, int *))loaded_sym("libnvrtc.so", "nvrtcVersion");
	int v = 0, v2 = 0;
	char ver[64] = "";

	if (uname(&u) == 0)
		sb_addf(o, "os: %s %s %s\n", u.sysname, u.release, u.machine);
	sb_addf(o, "glibc: %s\n", gnu_get_libc_version());
	f = fopen("/proc/driver/nvidia/version", "r");
	if (f) {
		if (fgets(line, sizeof(line), f) && cap_driver_version(line, ver, sizeof(ver)) == 0)
			sb_addf(o, "nvidia_driver: %s\n", ver);
		fclose(f);
	}
	if (!ver[0]) {   /* no /proc entry: the loaded libcuda's file name */
		struct lib_find lf = { "libcuda.so", "" };
		dl_iterate_phdr(find_lib_cb, &lf);
		if (lf.path[0] && cap_driver_version_lib(lf.path, ver, sizeof(ver)) == 0)
			sb_addf(o, "nvidia_driver: %s\n", ver);
	}
	if (cuDriverGetVersion(&v) == CUDA_SUCCESS && v)
		sb_addf(o, "cuda_driver: %d.%d\n", v / 1000, v % 1000 / 10);
	v = 0;
	if (rtver && rtver(&v) == 0 && v)
		sb_addf(o, "cuda_runtime: %d.%d\n", v / 1000, v % 1000 / 10);
	v = 0;
	if (nvrtcver && nvrtcver(&v, &v2) == 0 && v)
		sb_addf(o, "nvrtc: %d.%d\n", v, v2);
}

/* 1 if the stack passes through Triton (or Inductor's Triton runner). */
static int triton_stack(const struct tr_frame *fr, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (fr[i].file && strstr(fr[i].file, "triton"))
			return 1;
	return 0;
}

struct cap_src_reading *cap_src_read(const void *f, uint32_t py_state, const struct tr_frame *frames,
				     uint32_t nframes)
{
	struct cap_src_reading *rd = NULL;
	struct strbuf env = STRBUF_INIT;
	int want_env, want_src, want_new, gil;
	uint64_t key = (uint64_t)(uintptr_t)f;

	pthread_once(&g_once, init);
	if (g_off)
		return NULL;
	pthread_mutex_lock(&g_mu);
	want_env = !g_env_taken;
	g_env_taken = 1;
	want_new = key != 0;   /* the caller asks at a handle's first launch only */
	want_src = want_new && py_state == TR_PY_FRAMES && triton_stack(frames, nframes);
	pthread_mutex_unlock(&g_mu);
	if (!want_env && !want_new)
		return NULL;

	rd = xcalloc(1, sizeof(*rd));
	rd->key = key;
	if (want_new)
		cap_ext_scan(&rd->ext);   /* a new kernel: maybe a new extension loaded */
	if (want_env)
		env_native(&env);
	if (py_state != TR_PY_NONE && cap_py_ready()) {
		gil = cap_py.Ensure();
		pthread_mutex_lock(&g_mu);
		if (want_env)
			call_helper("env", &env);
		if (want_src && call_helper("source", &rd->raw) < 0)
			sb_reset(&rd->raw);
		pthread_mutex_unlock(&g_mu);
		cap_py.Release(gil);
	}
	if (want_env)
		rd->env = sb_detach(&env, NULL);
	sb_release(&env);
	return rd;
}

static void put_carried(struct trace_writer *w, const struct tr_rec *r)
{
	uint64_t start = cap_wq_mark(w);   /* exact, past blobs the writer thread holds */
	if (tw_record(w, r) >= 0)
		ckpt_carry(w, start, 1, 0, 0);
}

void cap_src_write(struct trace_writer *w, struct cap_src_reading *rd)
{
	struct tr_rec r;
	const char *f[6];
	size_t pos = 0;
	int nf = 0;

	if (!rd)
		return;
	for (size_t i = 0; i < rd->ext.n; i++) {
		memset(&r, 0, sizeof(r));
		r.type = TR_SOURCE;
		r.u.source.origin = TR_SRC_EXTENSION;
		r.u.source.kernel = "";
		r.u.source.path = rd->ext.path[i];
		r.u.source.meta = "";
		r.u.source.text = rd->ext.text[i];
		put_carried(w, &r);
	}
	if (rd->env) {
		memset(&r, 0, sizeof(r));
		r.type = TR_ENV;
		r.u.env.text = rd->env;
		put_carried(w, &r);
	}
	/* origin, kernel, path, meta, text, ptx: NUL separated */
	if (rd->raw.len) {
		sb_addch(&rd->raw, 0);
		while (nf < 6 && pos < rd->raw.len) {
			f[nf++] = rd->raw.buf + pos;
			pos += strlen(rd->raw.buf + pos) + 1;
		}
	}
	if (nf >= 5 && *f[4]) {
		memset(&r, 0, sizeof(r));
		r.type = TR_SOURCE;
		r.u.source.origin = !strcmp(f[0], "inductor") ? TR_SRC_INDUCTOR : TR_SRC_TRITON;
		r.u.source.kernel = f[1];
		r.u.source.path = f[2];
		r.u.source.meta = f[3];
		r.u.source.text = f[4];
		put_carried(w, &r);
		if (nf == 6 && *f[5]) {
			r.u.source.origin = TR_SRC_PTX;
			r.u.source.meta = "";
			r.u.source.text = f[5];
			put_carried(w, &r);
		}
	}
	cap_src_free(rd);
}

void cap_src_free(struct cap_src_reading *rd)
{
	if (!rd)
		return;
	free(rd->env);
	cap_ext_release(&rd->ext);
	sb_release(&rd->raw);
	free(rd);
}
