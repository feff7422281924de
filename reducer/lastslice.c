/*
 * lastslice.c - a trace's last launch alone, after the state it needs
 * (see lastslice.h): a snapshot by one replay on the worker pool, then the
 * launch written after it through the candidate writer.  No CUDA here.
 */
#include <stdlib.h>
#include <string.h>

#include "../addr/params.h"
#include "../common/strbuf.h"
#include "../diagnose/diagnose.h"
#include "../replay/pool.h"
#include "../trace/trace.h"
#include "cand.h"
#include "lastslice.h"

/* The index of t's last launch (diagnose_last_launch), or -1 when t is
 * better run whole: fewer than min + 1 launches (at least two), a graph
 * launch, a last launch captured into a graph. */
static long last_launch(const struct trace *t, size_t min)
{
	size_t launches;
	long last = diagnose_last_launch(t, &launches);

	if (last < 0 || launches < 2 || launches <= min || (t->rec[last].u.launch.flags & TR_F_CAPTURED))
		return -1;
	return last;
}

int lastslice_on(void)
{
	const char *e = getenv("GPUREDUCE_DIAG_SLICE");
	return !(e && !strcmp(e, "0"));
}

int lastslice_worth(const struct trace *t, size_t min)
{
	return last_launch(t, min) >= 0;
}

int lastslice_write(struct pool *p, const char *path, const struct trace *t, int guard, int recycle,
		    const char *snap_path, const char *out_path, struct strbuf *err)
{
	long last = last_launch(t, 0), fault = -1;
	struct cand c = CAND_INIT;
	struct trace st;
	struct job job;
	int ret = -1;

	if (last < 0)
		return 0;
	for (size_t i = (size_t)last + 1; i < t->nrec && fault < 0; i++)
		if (t->rec[i].type == TR_FAULT)
			fault = (long)i;
	memset(&job, 0, sizeof(job));
	job.trace = path;
	job.opts = (struct replay_opts)REPLAY_OPTS_INIT;
	job.opts.guard = guard;
	job.opts.recycle = recycle;
	job.opts.stop_before = last;
	job.opts.snap_mode = SNAP_REACHABLE;
	job.opts.snap_path = snap_path;
	if (pool_run(p, &job, 1, err) < 0)
		return -1;
	if (job.res.status != RS_CLEAN || !job.res.snapped) {
		sb_addf(err, "%s: the replay to its last launch %s", path, job.res.status == RS_FAULT ?
			"faulted before it" : job.res.status == RS_CLEAN ? "wrote no snapshot" :
			job.res.msg[0] ? job.res.msg : "did not run to it");
		return -1;
	}
	if (trace_open(&st, snap_path, TRACE_OPEN_STRICT, err) < 0)
		return -1;
	cand_add_all(&c, &st);
	cand_add(&c, t, (size_t)last);
	if (fault >= 0)
		cand_add(&c, t, (size_t)fault);
	if (cand_write(&c, out_path, err) == 0)
		ret = 1;
	cand_release(&c);
	trace_release(&st);
	return ret;
}

int lastslice_diag_is_last(const struct trace *t, const char *diag)
{
	size_t launches;
	long last = diagnose_last_launch(t, &launches);
	const char *name = last >= 0 ? t->rec[last].u.launch.name : NULL;
	char *base;
	int ok;

	if (!name || !diag)
		return 0;
	base = params_base_name(name);
	ok = *base && strstr(diag, base) != NULL;
	free(base);
	return ok;
}
