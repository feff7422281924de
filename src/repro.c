/*
 * repro.c - build and run emitted repros (see repro.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/child.h"
#include "../common/strbuf.h"
#include "repro.h"

int repro_build(const char *src, const char *out, struct strbuf *err)
{
	struct strbuf log = STRBUF_INIT, cmd = STRBUF_INIT;
	const char *custom = getenv("GPUREDUCE_NVCC");
	int st, ret = -1;

	if (access(src, R_OK) != 0) {
		sb_addf(err, "%s: cannot read", src);
		return -1;
	}
	if (custom && *custom) {
		sb_addf(&cmd, "%s -o '%s' '%s' -lcuda", custom, out, src);
		char *argv[] = { "sh", "-c", cmd.buf, NULL };
		st = child_run(argv, NULL, CHILD_MERGE_ERR | CHILD_NULL_IN, &log, 600, err);
	} else {
		const char *nvcc = child_find_program("nvcc", "/usr/local/cuda/bin");
		if (!nvcc) {
			sb_addf(err, "nvcc not found (PATH, /usr/local/cuda/bin); set GPUREDUCE_NVCC to a compiler command");
			ret = -2;
			goto out;
		}
		char *argv[] = { (char *)nvcc, "-o", (char *)out, (char *)src, "-lcuda", NULL };
		st = child_run(argv, NULL, CHILD_MERGE_ERR | CHILD_NULL_IN, &log, 600, err);
	}
	if (st == 127 && custom && *custom) {
		/* the shell found no such command: no compiler, not a bad repro */
		sb_addf(err, "the compiler in GPUREDUCE_NVCC (%s) was not found: %s", custom, log.buf);
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
	sb_release(&log);
	sb_release(&cmd);
	return ret;
}

int repro_run_once(const char *exe, const char *const env[], double timeout,
		   struct repro_run *r, struct strbuf *log, struct strbuf *err)
{
	struct strbuf o = STRBUF_INIT;
	char *argv[] = { (char *)exe, NULL };
	const char *p;
	int st;

	memset(r, 0, sizeof(*r));
	st = child_run(argv, env, CHILD_MERGE_ERR | CHILD_NULL_IN, &o, timeout, err);
	if (st < 0) {
		sb_release(&o);
		return -1;
	}
	r->exit_code = st;
	/* "repro: KERNEL faulted: CUDA_ERROR_X (700): text" */
	if ((p = strstr(o.buf, "repro: ")) && strstr(p, " faulted: ")) {
		const char *k = p + 7, *f = strstr(p, " faulted: ");
		snprintf(r->kernel, sizeof(r->kernel), "%.*s", (int)(f - k), k);
		sscanf(f + 10, "%63s", r->error);
	}
	if (log)
		sb_add(log, o.buf, o.len);
	sb_release(&o);
	return 0;
}
