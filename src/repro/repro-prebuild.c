/*
 * repro-prebuild.c - build repro.cu while the final confirmation runs
 * (issue 26).  Before `verify`, shrink hands the state it is about to
 * confirm to repro_prebuild: its repro.cu is emitted and compiled on a
 * thread while the confirmation runs replay on the workers.  When the
 * repro.cu check (repro-check.c) then emits the same program, the build is
 * taken from the thread instead of compiling again.  "The same" means the
 * source past the header comment is byte for byte equal: the header (the
 * reduction's figures) changes after verify, the code cannot unless verify
 * backed off to another state, and then the prebuilt program is not used.
 * Results are those of a build made at check time; only the wait changes.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/strbuf.h"
#include "../../common/util.h"
#include "../../emit/emit.h"
#include "../../trace/trace.h"
#include "repro.h"

struct repro_pre {
	pthread_t th;
	char *body;                  /* the source past its header comment */
	struct strbuf cu, exe, err;
	int rc;                      /* repro_build_quick's result */
	int joined;
	double seconds;              /* the build's own time */
	struct repro_async nvcc;     /* after a quick build: nvcc's, beside the runs */
	struct strbuf nvcc_exe;
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
	int quick = 0;
	p->rc = repro_build_quick(p->cu.buf, p->exe.buf, &quick, &p->err);
	p->seconds = now_sec() - t0;
	if (p->rc == 0 && quick) {
		sb_addf(&p->nvcc_exe, "%s.nvcc", p->exe.buf);
		repro_async_start(&p->nvcc, p->cu.buf, p->nvcc_exe.buf);
	}
	return NULL;
}

void repro_prebuild(void *arg, const char *bin, int guard)
{
	struct repro_check *rc = arg;
	struct repro_pre *p;
	struct trace t;
	struct strbuf src = STRBUF_INIT, err = STRBUF_INIT;
	struct emit_info info = { rc->orig, rc->rep, NULL, rc->trace_name, guard };

	if (rc->pre || !repro_have_compiler())
		return;
	if (trace_open(&t, bin, TRACE_OPEN_STRICT, &err) < 0)
		goto out_err;
	if (emit_repro(&t, &info, &src, &err) < 0) {
		trace_release(&t);
		goto out_err;
	}
	trace_release(&t);
	p = xcalloc(1, sizeof(*p));
	p->cu = (struct strbuf)STRBUF_INIT;
	p->exe = (struct strbuf)STRBUF_INIT;
	p->err = (struct strbuf)STRBUF_INIT;
	p->nvcc_exe = (struct strbuf)STRBUF_INIT;
	sb_addf(&p->cu, "%s/prebuild.cu", rc->workdir);
	sb_addf(&p->exe, "%s/prebuild", rc->workdir);
	p->body = xstrdup(code_of(src.buf));
	if (write_file(p->cu.buf, src.buf, src.len, &err) < 0 ||
	    pthread_create(&p->th, NULL, build_main, p) != 0) {
		sb_release(&p->cu);
		sb_release(&p->exe);
		sb_release(&p->err);
		free(p->body);
		free(p);
		goto out_err;
	}
	rc->pre = p;
out_err:   /* nothing prebuilt: the check builds as before */
	sb_release(&src);
	sb_release(&err);
}

int repro_prebuilt(struct repro_check *rc, const char *src, const char **exe, double *build_s)
{
	struct repro_pre *p = rc->pre;

	if (!p || strcmp(p->body, code_of(src)) != 0)
		return 0;
	pthread_join(p->th, NULL);
	p->joined = 1;
	if (p->rc < 0)
		return 0;   /* it did not build there: build again, for the message */
	*exe = p->exe.buf;
	*build_s = p->seconds;
	return 1;
}

int repro_prebuilt_nvcc(struct repro_check *rc, double *seconds, struct strbuf *err)
{
	struct repro_pre *p = rc->pre;
	int r;
	if (!p || !p->nvcc.started) {
		*seconds = -1;   /* no quick build: nothing more to wait for */
		return 0;
	}
	r = repro_async_join(&p->nvcc, err);
	*seconds = p->nvcc.seconds;
	return r;
}

void repro_prebuild_finish(struct repro_check *rc)
{
	struct repro_pre *p = rc->pre;

	if (!p)
		return;
	if (!p->joined)
		pthread_join(p->th, NULL);
	repro_async_join(&p->nvcc, NULL);
	sb_release(&p->nvcc_exe);
	sb_release(&p->cu);
	sb_release(&p->exe);
	sb_release(&p->err);
	free(p->body);
	free(p);
	rc->pre = NULL;
}
