/*
 * repro.c - build and run emitted repros (see repro.h).  The compiler is
 * run with an argv through common/child.c, never through a shell.
 */
#include <ctype.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../common/child.h"
#include "../../common/interrupt.h"
#include "../../common/strbuf.h"
#include "../../common/util.h"
#include "repro.h"

/* Where repro_build finds nvcc when GPUREDUCE_NVCC is not set. */
static const char *find_nvcc(void)
{
	return child_find_program("nvcc", "/usr/local/cuda/bin");
}

int repro_have_compiler(void)
{
	const char *custom = getenv("GPUREDUCE_NVCC");
	return (custom && *custom) || find_nvcc();
}

/* Only these characters reach the compiler in a path: nvcc runs its own
 * steps through a shell, so a path with $, quotes or spaces is copied to
 * a plain name first (repro_build). */
static int plain_path(const char *p)
{
	for (; *p; p++)
		if (!isalnum((unsigned char)*p) && !strchr("._/+-,=", *p))
			return 0;
	return 1;
}

/* GPUREDUCE_NVCC's words (split at blanks, no shell), then -o OUT SRC -lcuda. */
static char **compiler_argv(const char *custom, const char *nvcc, const char *src, const char *out,
			    char **words)
{
	char **argv;
	size_t n = 0;

	if (custom) {
		*words = xstrdup(custom);
		argv = xcalloc(strlen(custom) / 2 + 6, sizeof(char *));
		for (char *save = NULL, *w = strtok_r(*words, " \t", &save); w; w = strtok_r(NULL, " \t", &save))
			argv[n++] = w;
	} else {
		*words = NULL;
		argv = xcalloc(6, sizeof(char *));
		argv[n++] = (char *)nvcc;
	}
	argv[n++] = "-o";
	argv[n++] = (char *)out;
	argv[n++] = (char *)src;
	argv[n++] = "-lcuda";
	argv[n] = NULL;
	return argv;
}

/* The compiler run itself: 0, -1 (it failed, err says how) or -2 (none). */
static int compile(const char *src, const char *out, struct strbuf *err)
{
	struct strbuf log = STRBUF_INIT;
	const char *custom = getenv("GPUREDUCE_NVCC"), *nvcc = NULL;
	char **argv = NULL, *words = NULL;
	int st, ret = -1;

	if (custom && !*custom)
		custom = NULL;
	if (!custom && !(nvcc = find_nvcc())) {
		sb_addf(err, "nvcc not found (PATH, /usr/local/cuda/bin); set GPUREDUCE_NVCC to a compiler command");
		ret = -2;
		goto out;
	}
	argv = compiler_argv(custom, nvcc, src, out, &words);
	if (!argv[0] || argv[0] == argv[1]) {
		sb_addf(err, "GPUREDUCE_NVCC names no compiler");
		ret = -2;
		goto out;
	}
	st = child_run(argv, NULL, CHILD_MERGE_ERR | CHILD_NULL_IN, &log, 600, err);
	if ((st == 127 || st < 0) && custom) {
		/* exec failed: no such compiler, not a bad repro */
		sb_reset(err);
		sb_addf(err, "the compiler in GPUREDUCE_NVCC (%s) was not found: cannot run it%s%s", argv[0],
			log.len ? ": " : "", log.buf);
		ret = -2;
		goto out;
	}
	if (st != 0) {
		size_t n = log.len > 600 ? log.len - 600 : 0;
		if (st > 0)
			sb_addf(err, "compiling %s failed (exit %d): %s", src, st, log.buf + n);
		goto out;
	}
	ret = 0;
out:
	free(argv);
	free(words);
	sb_release(&log);
	return ret;
}

int repro_build(const char *src, const char *out, struct strbuf *err)
{
	struct strbuf tmp = STRBUF_INIT, tsrc = STRBUF_INIT, texe = STRBUF_INIT, data = STRBUF_INIT;
	const char *tmpdir = getenv("TMPDIR");
	int ret = -1, made = 0;

	if (access(src, R_OK) != 0) {
		sb_addf(err, "%s: cannot read", src);
		return -1;
	}
	if (plain_path(src) && plain_path(out))
		return compile(src, out, err);
	/* a path the compiler's shell would misread: build under plain names */
	sb_addf(&tmp, "%s/gpureduce-build-XXXXXX", tmpdir && *tmpdir && plain_path(tmpdir) ? tmpdir : "/tmp");
	if (!mkdtemp(tmp.buf)) {
		sb_addf(err, "cannot create a build folder %s: %s", tmp.buf, strerror(errno));
		goto out;
	}
	made = 1;
	sb_addf(&tsrc, "%s/repro.cu", tmp.buf);
	sb_addf(&texe, "%s/repro", tmp.buf);
	if (read_file(src, &data, err) < 0 || write_file(tsrc.buf, data.buf, data.len, err) < 0)
		goto out;
	if ((ret = compile(tsrc.buf, texe.buf, err)) < 0)
		goto out;
	ret = -1;
	sb_reset(&data);
	if (rename(texe.buf, out) < 0 &&
	    (read_file(texe.buf, &data, err) < 0 || write_file(out, data.buf, data.len, err) < 0))
		goto out;
	if (chmod(out, 0755) < 0) {
		sb_addf(err, "%s: %s", out, strerror(errno));
		goto out;
	}
	ret = 0;
out:
	if (made)
		remove_tree(tmp.buf);
	sb_release(&tmp);
	sb_release(&tsrc);
	sb_release(&texe);
	sb_release(&data);
	return ret;
}

/* ---- the check's quick build -------------------------------------------- */

/* The host C++ compiler nvcc hands host code to (NULL: none). */
static const char *find_host_cxx(void)
{
	const char *c = child_find_program("g++", "/usr/bin");
	return c ? c : child_find_program("c++", "/usr/bin");
}

/* dir's parent's sub, when it is a directory: "/x/bin" + "include" -> "/x/include" */
static int cuda_dir(const char *nvcc, const char *sub, struct strbuf *out)
{
	struct stat st;
	const char *e = strrchr(nvcc, '/');
	sb_reset(out);
	if (!e)
		return -1;
	sb_add(out, nvcc, (size_t)(e - nvcc));
	sb_adds(out, "/../");
	sb_adds(out, sub);
	return stat(out->buf, &st) == 0 && S_ISDIR(st.st_mode) ? 0 : -1;
}

int repro_build_quick(const char *src, const char *out, int *quick, struct strbuf *err)
{
	const char *custom = getenv("GPUREDUCE_NVCC"), *found;
	struct strbuf inc = STRBUF_INIT, stubs = STRBUF_INIT, log = STRBUF_INIT, e2 = STRBUF_INIT;
	struct strbuf iflag = STRBUF_INIT, lflag = STRBUF_INIT;
	char *nvcc = NULL, *cxx = NULL;   /* copies: child_find_program's answer is its own buffer */
	int st = -1;

	*quick = 0;
	if ((custom && *custom) || !(found = find_nvcc()))
		goto slow;
	nvcc = xstrdup(found);
	if (!(found = find_host_cxx()) || cuda_dir(nvcc, "include", &inc) < 0)
		goto slow;
	cxx = xstrdup(found);
	sb_addf(&iflag, "-I%s", inc.buf);
	if (cuda_dir(nvcc, "lib64/stubs", &stubs) == 0)
		sb_addf(&lflag, "-L%s", stubs.buf);
	else
		sb_adds(&lflag, "-L/usr/lib/x86_64-linux-gnu");   /* the driver's own libcuda.so */
	{
		char *argv[] = { cxx, "-x", "c++", "-O2", iflag.buf, "-o", (char *)out, (char *)src,
				 "-x", "none", lflag.buf, "-lcuda", NULL };
		st = child_run(argv, NULL, CHILD_MERGE_ERR | CHILD_NULL_IN, &log, 600, &e2);
	}
	if (st == 0)
		*quick = 1;
slow:
	free(nvcc);
	free(cxx);
	sb_release(&inc);
	sb_release(&stubs);
	sb_release(&log);
	sb_release(&e2);
	sb_release(&iflag);
	sb_release(&lflag);
	/* nvcc-only source, or no host compiler: the build users run */
	return *quick ? 0 : repro_build(src, out, err);
}

static void *async_main(void *arg)
{
	struct repro_async *a = arg;
	double t0 = now_sec();
	a->rc = repro_build(a->cu.buf, a->exe.buf, &a->err);
	a->seconds = now_sec() - t0;
	return NULL;
}

int repro_async_start(struct repro_async *a, const char *src, const char *out)
{
	memset(a, 0, sizeof(*a));
	a->cu = (struct strbuf)STRBUF_INIT;
	a->exe = (struct strbuf)STRBUF_INIT;
	a->err = (struct strbuf)STRBUF_INIT;
	sb_adds(&a->cu, src);
	sb_adds(&a->exe, out);
	if (pthread_create(&a->th, NULL, async_main, a) != 0) {
		sb_release(&a->cu);
		sb_release(&a->exe);
		return -1;
	}
	a->started = 1;
	return 0;
}

int repro_async_join(struct repro_async *a, struct strbuf *err)
{
	int rc;
	if (!a->started)
		return 0;
	pthread_join(a->th, NULL);
	a->started = 0;
	rc = a->rc;
	if (rc < 0 && err)
		sb_addf(err, "%s", a->err.buf);
	sb_release(&a->cu);
	sb_release(&a->exe);
	sb_release(&a->err);
	return rc;
}

/* The fault line a repro prints, "repro: KERNEL faulted: CUDA_ERROR_X
 * (700): text" (emit-prelude.c): 1 with *kernel at KERNEL and *faulted at
 * " faulted: ", else 0.  Other "repro: " lines may come before it (a
 * race's clean tries).  The line need not start with it: the driver
 * prints a device assert's messages to stderr from a thread of its own,
 * a piece at a time, and one can stop mid-line where the repro's line
 * comes ("...block: [0,0repro: histogram(...) faulted: CUDA_ERROR_ASSERT";
 * lineinfo-assert on an H100, 2026-12-07, counted as a run that failed
 * to run).  So the last "repro: " before " faulted: " on its line. */
static int fault_line(const char *out, const char **kernel, const char **faulted)
{
	const char *f = strstr(out, " faulted: "), *p, *k = NULL;
	if (!f)
		return 0;
	for (p = f; p > out && p[-1] != '\n'; p--)
		;
	for (; (p = strstr(p, "repro: ")) && p < f; p++)
		k = p;
	if (!k)
		return 0;
	*kernel = k + 7;
	*faulted = f;
	return 1;
}

/* The fault line -> r's kernel and error; the setup failure's line */
static void parse_output(const char *out, struct repro_run *r)
{
	const char *p, *k, *f;
	if (fault_line(out, &k, &f)) {
		snprintf(r->kernel, sizeof(r->kernel), "%.*s", (int)(f - k), k);
		sscanf(f + 10, "%63s", r->error);
	}
	if ((p = strstr(out, "repro: setup failed: "))) {
		size_t n = strcspn(p, "\n");
		snprintf(r->setup, sizeof(r->setup), "%.*s", (int)n, p);
	}
}

int repro_run_once(const char *exe, const char *const env[], double timeout,
		   struct repro_run *r, struct strbuf *log, struct strbuf *err)
{
	struct strbuf o = STRBUF_INIT;
	char *argv[] = { (char *)exe, NULL };
	int st;

	memset(r, 0, sizeof(*r));
	st = child_run(argv, env, CHILD_MERGE_ERR | CHILD_NULL_IN, &o, timeout, err);
	if (st < 0) {
		sb_release(&o);
		return -1;
	}
	r->exit_code = st;
	parse_output(o.buf, r);
	if (log)
		sb_add(log, o.buf, o.len);
	sb_release(&o);
	return 0;
}

/*
 * 1 when out holds the whole line a repro prints on its fault ("repro: K
 * faulted: E (N): text", emit-prelude.c), flushed right before its
 * exit(1).  What such a process has left to do is the driver's teardown
 * of a faulted context: 0.4-0.5 s a process on the H200, and five at
 * once queue there for 1.6 s (docs/RESULTS.md, exitprobe), most of the
 * end of a shrink.  So the run counts as faulted (exit 1) when the line
 * is in, and its exit is reaped later.
 */
static int run_done_early(const char *out)
{
	const char *k, *f;
	return fault_line(out, &k, &f) && strchr(f, '\n');
}

/* Read what is there from each open pipe (at most 50 ms of waiting). */
static void read_pipes(struct child *ch, struct strbuf *o, int m)
{
	struct pollfd pf[64];
	int at[64], k = 0;

	for (int i = 0; i < m && k < 64; i++)
		if (ch[i].out >= 0) {
			pf[k].fd = ch[i].out;
			pf[k].events = POLLIN;
			pf[k].revents = 0;
			at[k++] = i;
		}
	if (!k) {
		usleep(20000);
		return;
	}
	if (poll(pf, (nfds_t)k, 50) <= 0)
		return;
	for (int j = 0; j < k; j++) {
		char buf[4096];
		ssize_t n;
		if (!(pf[j].revents & (POLLIN | POLLHUP | POLLERR)))
			continue;
		n = read(pf[j].fd, buf, sizeof(buf));
		if (n > 0 && o[at[j]].len < (1u << 20))
			sb_add(&o[at[j]], buf, (size_t)n);
		else if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) {
			close(ch[at[j]].out);   /* the end of its output */
			ch[at[j]].out = -1;
		}
	}
}

int repro_run_many(const char *exe, int n, int parallel, double timeout, struct repro_run *r,
		   struct strbuf *err)
{
	struct child *ch = xcalloc((size_t)n, sizeof(*ch));
	struct strbuf *o = xcalloc((size_t)n, sizeof(*o));
	int ret = 0;

	if (parallel < 1)
		parallel = 1;
	if (parallel > 64)
		parallel = 64;
	for (int i = 0; i < n; i++) {
		sb_init(&o[i], 0);
		memset(&r[i], 0, sizeof(r[i]));
		ch[i] = (struct child)CHILD_INIT;   /* running while its pid is set */
	}
	for (int base = 0; base < n && !ret; base += parallel) {
		int m = n - base < parallel ? n - base : parallel, left = 0;
		double deadline = now_sec() + timeout;
		for (int k = 0; k < m; k++) {
			char *argv[] = { (char *)exe, NULL };
			if (child_start(&ch[base + k], argv, NULL, CHILD_PIPE_OUT | CHILD_MERGE_ERR | CHILD_NULL_IN |
					CHILD_NEW_PGRP | CHILD_DIE_WITH_PARENT, err) < 0) {
				ret = -1;
				break;
			}
			left++;
		}
		while (left > 0) {
			int st;
			read_pipes(ch + base, o + base, m);
			for (int k = 0; k < m; k++) {
				int i = base + k;
				if (ch[i].pid <= 0)
					continue;
				if (run_done_early(o[i].buf)) {
					r[i].exit_code = 1;
					child_reap_later(&ch[i]);
				} else if (ch[i].out < 0 && child_poll(&ch[i], &st) == 1) {
					r[i].exit_code = st;
				} else if (now_sec() > deadline || interrupt_signal()) {
					child_kill(&ch[i]);
					r[i].exit_code = 124;
				} else {
					continue;
				}
				parse_output(o[i].buf, &r[i]);
				left--;
			}
		}
	}
	for (int i = 0; i < n; i++)
		sb_release(&o[i]);
	free(o);
	free(ch);
	return ret;
}

char *repro_sibling(const char *cu, const char *ext)
{
	struct strbuf sb = STRBUF_INIT;
	size_t n = strlen(cu);
	if (n > 3 && !strcmp(cu + n - 3, ".cu"))
		n -= 3;
	sb_add(&sb, cu, n);
	sb_adds(&sb, ext);
	return sb_detach(&sb, NULL);
}
