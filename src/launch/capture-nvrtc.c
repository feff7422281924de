/*
 * capture-nvrtc.c - the programs the traced process compiled with NVRTC,
 * as SOURCE records (see capture-nvrtc.h, capture/shim/nvrtc.c for how
 * they are seen and the log's entry layout).  The log is TRACE.nvrtc; the
 * records carry kernel "" (a whole program: the emitter finds a kernel by
 * its __global__ name in the text), path = the program's name, meta
 * "options: ..." (one line, space separated).  Identical programs
 * (source and options) are written once.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../common/strbuf.h"
#include "../../common/util.h"
#include "../../trace/trace.h"
#include "capture-nvrtc.h"

#define SHIM_NAME "libgpureduce-nvrtc.so"

static void log_path(const char *trace, struct strbuf *p)
{
	sb_reset(p);
	sb_addf(p, "%s.nvrtc", trace);
}

int nvrtc_env(const char *lib, const char *trace, struct strbuf *preload, struct strbuf *logenv)
{
	const char *off = getenv("GPUREDUCE_NO_NVRTC"), *old = getenv("LD_PRELOAD");
	struct strbuf shim = STRBUF_INIT, lp = STRBUF_INIT;
	const char *slash = strrchr(lib, '/');
	int ret = 0;

	if (off && !strcmp(off, "1"))
		goto out;
	if (slash)
		sb_add(&shim, lib, (size_t)(slash - lib + 1));
	sb_adds(&shim, SHIM_NAME);
	if (access(shim.buf, R_OK) < 0)
		goto out;
	log_path(trace, &lp);
	unlink(lp.buf);
	/* the user's preloads keep their place; ours comes after them (still
	 * before libnvrtc, which is what interposing needs) */
	sb_addf(preload, "LD_PRELOAD=%s%s%s", old && *old ? old : "", old && *old ? ":" : "", shim.buf);
	sb_addf(logenv, "GPUREDUCE_NVRTC_LOG=%s", lp.buf);
	ret = 1;
out:
	sb_release(&shim);
	sb_release(&lp);
	return ret;
}

static int get32(const char *p, size_t n, size_t *pos, uint32_t *v)
{
	if (n - *pos < 4)
		return -1;
	memcpy(v, p + *pos, 4);
	*pos += 4;
	return 0;
}

static int get_str(const char *p, size_t n, size_t *pos, char **out)
{
	uint32_t l;
	if (get32(p, n, pos, &l) < 0 || n - *pos < l)
		return -1;
	*out = xstrndup(p + *pos, l);
	*pos += l;
	return 0;
}

int nvrtc_finish(const char *trace, int append, struct strbuf *err)
{
	struct strbuf lp = STRBUF_INIT, data = STRBUF_INIT;
	struct trace_writer w = TRACE_WRITER_INIT;
	uint64_t *seen = NULL;
	size_t nseen = 0, pos = 0;
	int n = 0, open_ = 0;
	FILE *f;

	log_path(trace, &lp);
	f = append ? fopen(lp.buf, "r") : NULL;
	if (!f) {
		unlink(lp.buf);
		goto out;
	}
	for (;;) {
		char chunk[65536];
		size_t got = fread(chunk, 1, sizeof(chunk), f);
		if (!got)
			break;
		sb_add(&data, chunk, got);
	}
	fclose(f);
	while (data.len - pos >= 8 && !memcmp(data.buf + pos, "GRNV", 4)) {
		uint32_t total;
		size_t q;
		char *name = NULL, *opts = NULL, *src = NULL;
		uint64_t h;
		memcpy(&total, data.buf + pos + 4, 4);
		if (total < 8 || data.len - pos < total)
			break;   /* a torn last entry: the process died writing it */
		q = 8;
		if (get_str(data.buf + pos, total, &q, &name) == 0 && get_str(data.buf + pos, total, &q, &opts) == 0 &&
		    get_str(data.buf + pos, total, &q, &src) == 0) {
			struct strbuf key = STRBUF_INIT, meta = STRBUF_INIT;
			size_t k;
			sb_addf(&key, "%s%c%s", opts, 0, src);
			h = tr_hash(key.buf, key.len);
			for (k = 0; k < nseen && seen[k] != h; k++)
				;
			if (k == nseen) {
				struct tr_rec r;
				seen = xrealloc(seen, (nseen + 1) * sizeof(*seen));
				seen[nseen++] = h;
				for (char *c = opts; *c; c++)
					if (*c == '\n')
						*c = c[1] ? ' ' : 0;
				sb_addf(&meta, "options: %s", opts);
				if (!open_ && tw_open_append(&w, trace, err) < 0) {
					sb_release(&key);
					sb_release(&meta);
					free(name);
					free(opts);
					free(src);
					n = -1;
					goto out;
				}
				open_ = 1;
				memset(&r, 0, sizeof(r));
				r.type = TR_SOURCE;
				r.u.source.origin = TR_SRC_NVRTC;
				r.u.source.kernel = "";
				r.u.source.path = name;
				r.u.source.meta = meta.buf;
				r.u.source.text = src;
				if (tw_record(&w, &r) >= 0)
					n++;
			}
			sb_release(&key);
			sb_release(&meta);
		}
		free(name);
		free(opts);
		free(src);
		pos += total;
	}
	unlink(lp.buf);
out:
	if (open_ && tw_close(&w) < 0 && n >= 0) {
		sb_addf(err, "%s: could not append the NVRTC programs%s", trace, tw_why(&w));
		n = -1;
	}
	free(seen);
	sb_release(&lp);
	sb_release(&data);
	return n;
}
