/*
 * repro-prebuild.c - build repro.cu before its check asks for it (issue
 * 26).  Shrink hands states it may end with to repro_prebuild: the state
 * before the last phase (that phase may change nothing), each candidate
 * that phase tests (the one kept last is the final trace), and the state
 * verify confirms.  Each one's repro.cu is emitted and compiled on a
 * thread while the workers replay.  When the repro.cu check
 * (repro-check.c) then emits one of these programs, the build is taken
 * from its thread instead of compiling again.  "The same" means the
 * source past the header comment is byte for byte equal: the header (the
 * reduction's figures) changes at the end, the code does not.  Results
 * are those of a build made at check time; only the wait changes.  A
 * quick build's nvcc build (the one users run) starts when the check
 * takes it: the states that were not the final one cost a host compiler's
 * build (0.2-0.3 s of a CPU) and no nvcc.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/strbuf.h"
#include "../../common/util.h"
#include "../../emit/emit.h"
#include "../../trace/trace.h"
#include "repro.h"

/* States prebuilt at most (the last phase's candidates beyond these are
 * built at check time, as before) */
#define PRE_MAX 8

struct repro_pre {
	pthread_t th;
	char *body;                  /* the source past its header comment */
	struct strbuf cu, exe, err;
	int rc;                      /* repro_build_quick's result */
	int quick;                   /* built by the host compiler: nvcc to follow */
	int nvcc_begun;              /* its nvcc build was started (by repro_prebuilt) */
	int joined;
	double seconds;              /* the build's own time */
	struct repro_async nvcc;     /* after a quick build: nvcc's, beside the runs */
	struct strbuf nvcc_exe;
};

/* The prebuilds of one shrink (repro_check.pre) */
struct repro_pres {
	struct repro_pre *p[PRE_MAX];
	int n;
	struct repro_pre *taken;     /* the one repro_prebuilt last matched */
};

/* The program past the leading comment (the header), or all of it. */
static const char *code_of(const char *src)
{
	const char *e;
	if (strncmp(src, "/*", 2) != 0 || !(e = strstr(src + 2, "*/")))
		return src;
	return e + 2;
}

static void *build_main(void *arg)
{
	struct repro_pre *p = arg;
	double t0 = now_sec();
	p->rc = repro_build_quick(p->cu.buf, p->exe.buf, &p->quick, &p->err);
	p->seconds = now_sec() - t0;
	return NULL;
}

static void pre_free(struct repro_pre *p)
{
	sb_release(&p->nvcc_exe);
	sb_release(&p->cu);
	sb_release(&p->exe);
	sb_release(&p->err);
	free(p->body);
	free(p);
}

void repro_prebuild(void *arg, const char *bin, int guard)
{
	struct repro_check *rc = arg;
	struct repro_pres *ps = rc->pre;
	struct repro_pre *p;
	struct trace t;
	struct strbuf src = STRBUF_INIT, err = STRBUF_INIT;
	struct emit_info info = { rc->orig, rc->rep, NULL, rc->trace_name, guard };
	const char *body;

	if (!repro_have_compiler() || (ps && ps->n >= PRE_MAX))
		return;
	if (trace_open(&t, bin, TRACE_OPEN_STRICT, &err) < 0)
		goto out_err;
	if (emit_repro(&t, &info, &src, &err) < 0) {
		trace_release(&t);
		goto out_err;
	}
	trace_release(&t);
	body = code_of(src.buf);
	for (int i = 0; ps && i < ps->n; i++)
		if (!strcmp(ps->p[i]->body, body))
			goto out_err;   /* that program is built already */
	if (!ps)
		ps = rc->pre = xcalloc(1, sizeof(*ps));
	p = xcalloc(1, sizeof(*p));
	p->cu = (struct strbuf)STRBUF_INIT;
	p->exe = (struct strbuf)STRBUF_INIT;
	p->err = (struct strbuf)STRBUF_INIT;
	p->nvcc_exe = (struct strbuf)STRBUF_INIT;
	sb_addf(&p->cu, "%s/prebuild-%d.cu", rc->workdir, ps->n);
	sb_addf(&p->exe, "%s/prebuild-%d", rc->workdir, ps->n);
	p->body = xstrdup(body);
	if (write_file(p->cu.buf, src.buf, src.len, &err) < 0 ||
	    pthread_create(&p->th, NULL, build_main, p) != 0) {
		pre_free(p);
		goto out_err;
	}
	ps->p[ps->n++] = p;
out_err:   /* nothing prebuilt: the check builds as before */
	sb_release(&src);
	sb_release(&err);
}

int repro_prebuilt(struct repro_check *rc, const char *src, const char **exe, double *build_s)
{
	struct repro_pres *ps = rc->pre;
	struct repro_pre *p = NULL;

	if (ps)
		ps->taken = NULL;
	for (int i = 0; ps && i < ps->n && !p; i++)
		if (!strcmp(ps->p[i]->body, code_of(src)))
			p = ps->p[i];
	if (!p)
		return 0;
	if (!p->joined) {
		pthread_join(p->th, NULL);
		p->joined = 1;
	}
	if (p->rc < 0)
		return 0;   /* it did not build there: build again, for the message */
	if (p->quick && !p->nvcc_begun) {
		/* the build users run (nvcc), beside the runs */
		p->nvcc_begun = 1;
		sb_reset(&p->nvcc_exe);
		sb_addf(&p->nvcc_exe, "%s.nvcc", p->exe.buf);
		repro_async_start(&p->nvcc, p->cu.buf, p->nvcc_exe.buf);
	}
	ps->taken = p;
	*exe = p->exe.buf;
	*build_s = p->seconds;
	return 1;
}

int repro_prebuilt_nvcc(struct repro_check *rc, double *seconds, struct strbuf *err)
{
	struct repro_pres *ps = rc->pre;
	struct repro_pre *p = ps ? ps->taken : NULL;
	int r;
	if (!p || !p->quick) {
		*seconds = -1;   /* no quick build: nothing more to wait for */
		return 0;
	}
	if (!p->nvcc.started) {
		/* joined by an earlier check of the same program: its result */
		*seconds = p->nvcc.seconds;
		return p->nvcc.rc;
	}
	r = repro_async_join(&p->nvcc, err);
	*seconds = p->nvcc.seconds;
	return r;
}

void repro_prebuild_finish(struct repro_check *rc)
{
	struct repro_pres *ps = rc->pre;

	if (!ps)
		return;
	for (int i = 0; i < ps->n; i++) {
		struct repro_pre *p = ps->p[i];
		if (!p->joined)
			pthread_join(p->th, NULL);
		repro_async_join(&p->nvcc, NULL);
		pre_free(p);
	}
	free(ps);
	rc->pre = NULL;
}
