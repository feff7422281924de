/*
 * shim/nvrtc.c - libgpureduce-nvrtc.so: the source and options of every
 * NVRTC program the traced process compiles (CuPy RawKernel/RawModule,
 * cuda-python, numba), for `gpureduce report` and repro.cu (issue 24).
 *
 * Why a separate preloaded library: CUPTI has no NVRTC domain, and the
 * injection library is loaded by the driver at cuInit (often after the
 * program compiled its kernels, and RTLD_LOCAL, where it cannot interpose
 * anything).  `gpureduce capture` puts this library first in LD_PRELOAD
 * (after any the user had) and names a log file in GPUREDUCE_NVRTC_LOG.
 *
 * How it sees the calls:
 *   - programs linked against libnvrtc (CuPy's extension modules): the
 *     dynamic linker binds their nvrtcCreateProgram/nvrtcCompileProgram
 *     to the definitions here (preloaded objects come first), which call
 *     the next definition (RTLD_NEXT);
 *   - programs that dlopen libnvrtc and dlsym the functions (cuda-python,
 *     ctypes): dlsym is defined here too, and for those two names returns
 *     the wrappers, remembering the real functions; every other lookup
 *     goes to the real dlsym, found once with dlvsym, by a tail call so
 *     that dlsym(RTLD_NEXT) stays relative to its caller (see dlsym).
 * nvrtcCreateProgram keeps (program handle -> source, name);
 * nvrtcCompileProgram appends one entry (source, name, options) to the log
 * with a single O_APPEND write, and calls the real function.  After the
 * program exits, `capture` turns the entries into SOURCE records
 * (origin NVRTC) and removes the log (src/launch/capture-nvrtc.c).  Nothing is
 * printed; any failure loses an entry, never a compile.
 *
 * Entry: "GRNV" u32 total, u32 len + name, u32 len + options (one per
 * line), u32 len + source.  GPUREDUCE_NVRTC_MAX (default 4 MiB) bounds a
 * source.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define API __attribute__((visibility("default")))
#define NPROG 256

typedef int (*create_fn)(void **, const char *, const char *, int, const char *const *, const char *const *);
typedef int (*compile_fn)(void *, int, const char *const *);
typedef void *(*dlsym_fn)(void *, const char *);

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static struct {
	void *prog;
	char *src, *name;
} g_prog[NPROG];
static int g_next;
static create_fn real_create;
static compile_fn real_compile;
static dlsym_fn real_dlsym;

static dlsym_fn get_real_dlsym(void)
{
	/* dlvsym is not interposed: glibc 2.34+ (dlsym moved into libc) first,
	 * then each architecture's base version (x86-64, aarch64, i386, ppc64le,
	 * riscv64) */
	static const char *const ver[] = { "GLIBC_2.34", "GLIBC_2.2.5", "GLIBC_2.17", "GLIBC_2.0",
					   "GLIBC_2.3", "GLIBC_2.27" };
	for (size_t i = 0; !real_dlsym && i < sizeof(ver) / sizeof(ver[0]); i++)
		real_dlsym = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", ver[i]);
	return real_dlsym;
}

static void put32(char *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static void log_entry(const char *name, const char *src, int nopt, const char *const *opts)
{
	const char *path = getenv("GPUREDUCE_NVRTC_LOG");
	const char *mx = getenv("GPUREDUCE_NVRTC_MAX");
	size_t max = mx && *mx ? strtoul(mx, NULL, 10) : (4u << 20);
	size_t ln = name ? strlen(name) : 0, ls = src ? strlen(src) : 0, lo = 0, total, pos;
	char *buf;
	int fd;

	if (!path || !*path || !src)
		return;
	if (ls > max)
		ls = max;
	for (int i = 0; i < nopt; i++)
		lo += opts && opts[i] ? strlen(opts[i]) + 1 : 0;
	total = 4 + 4 + 4 + ln + 4 + lo + 4 + ls;
	buf = malloc(total);
	if (!buf)
		return;
	memcpy(buf, "GRNV", 4);
	put32(buf + 4, (uint32_t)total);
	pos = 8;
	put32(buf + pos, (uint32_t)ln);
	memcpy(buf + pos + 4, name ? name : "", ln);
	pos += 4 + ln;
	put32(buf + pos, (uint32_t)lo);
	pos += 4;
	for (int i = 0; i < nopt; i++) {
		if (!opts || !opts[i])
			continue;
		size_t l = strlen(opts[i]);
		memcpy(buf + pos, opts[i], l);
		buf[pos + l] = '\n';
		pos += l + 1;
	}
	put32(buf + pos, (uint32_t)ls);
	memcpy(buf + pos + 4, src, ls);
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
	if (fd >= 0) {
		if (write(fd, buf, total) < 0) { /* lost: never break the compile */ }
		close(fd);
	}
	free(buf);
}

API int nvrtcCreateProgram(void **prog, const char *src, const char *name, int nh,
			   const char *const *headers, const char *const *include_names)
{
	int r;
	if (!real_create)
		real_create = (create_fn)get_real_dlsym()(RTLD_NEXT, "nvrtcCreateProgram");
	if (!real_create)
		return 7;   /* NVRTC_ERROR_INTERNAL_ERROR: no libnvrtc after us */
	r = real_create(prog, src, name, nh, headers, include_names);
	if (r == 0 && prog && src) {
		pthread_mutex_lock(&g_mu);
		free(g_prog[g_next].src);
		free(g_prog[g_next].name);
		g_prog[g_next].prog = *prog;
		g_prog[g_next].src = strdup(src);
		g_prog[g_next].name = name ? strdup(name) : NULL;
		g_next = (g_next + 1) % NPROG;
		pthread_mutex_unlock(&g_mu);
	}
	return r;
}

API int nvrtcCompileProgram(void *prog, int nopt, const char *const *opts)
{
	char *src = NULL, *name = NULL;
	if (!real_compile)
		real_compile = (compile_fn)get_real_dlsym()(RTLD_NEXT, "nvrtcCompileProgram");
	if (!real_compile)
		return 7;
	pthread_mutex_lock(&g_mu);
	for (int i = 0; i < NPROG; i++)
		if (g_prog[i].prog == prog && g_prog[i].src) {
			src = strdup(g_prog[i].src);
			name = g_prog[i].name ? strdup(g_prog[i].name) : NULL;
			break;
		}
	pthread_mutex_unlock(&g_mu);
	log_entry(name, src, nopt, opts);
	free(src);
	free(name);
	return real_compile(prog, nopt, opts);
}

/* dlsym for the two NVRTC names, on a handle other than RTLD_NEXT: the
 * wrapper in place of the real function, which is remembered. */
static void *nvrtc_lookup(dlsym_fn d, void *handle, const char *symbol)
{
	void *p = d(handle, symbol);
	if (!p)
		return p;
	if (!strcmp(symbol, "nvrtcCreateProgram") && p != (void *)nvrtcCreateProgram) {
		real_create = (create_fn)p;
		return (void *)nvrtcCreateProgram;
	}
	if (!strcmp(symbol, "nvrtcCompileProgram") && p != (void *)nvrtcCompileProgram) {
		real_compile = (compile_fn)p;
		return (void *)nvrtcCompileProgram;
	}
	return p;
}

/*
 * Every other lookup must reach the real dlsym as if called by our caller:
 * dlsym(RTLD_NEXT, name) searches the objects after the one its return
 * address lies in.  Called from here, it searched after this library, and
 * an ASan-built program (whose runtime finds the real malloc, pthread_*
 * etc. with dlsym(RTLD_NEXT) at start-up) got its own interceptors back
 * and spun at start-up.  So that path is a tail call (a jump: the real
 * dlsym sees our caller's return address), forced by optimizing this one
 * function for sibling calls whatever the build's -O level; t1025 checks
 * an ASan program under the shim.
 */
API __attribute__((optimize("O2", "optimize-sibling-calls"))) void *dlsym(void *handle, const char *symbol)
{
	dlsym_fn d = real_dlsym ? real_dlsym : get_real_dlsym();
	if (!d)
		return NULL;
	if (handle != RTLD_NEXT && symbol[0] == 'n' &&
	    (!strcmp(symbol, "nvrtcCreateProgram") || !strcmp(symbol, "nvrtcCompileProgram")))
		return nvrtc_lookup(d, handle, symbol);
	return d(handle, symbol);   /* tail call */
}

/*
 * An ASan-built program checks at start-up that its runtime comes first
 * among the loaded objects and aborts ("ASan runtime does not come first
 * in initial library list") when a preload, this library, comes before
 * it.  ASan takes its default options from __asan_default_options, a weak
 * function the dynamic linker binds to the first definition: the
 * program's own when it has one (the executable is searched before
 * preloads), else this one.  ASAN_OPTIONS still overrides it.
 */
API const char *__asan_default_options(void)
{
	return "verify_asan_link_order=0";
}
