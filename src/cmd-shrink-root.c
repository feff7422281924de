/*
 * cmd-shrink-root.c - `gpureduce shrink --root-cause`: after the ordinary
 * crash-site repro, a second reduction that looks for the first silent
 * out-of-bounds access inside an allocator segment (the root cause) and
 * emits it as repro-root.cu, repro-root.bin and repro-root.yaml beside
 * repro.cu.
 *
 * The trace must hold allocator blocks (`capture --tensors`).  Steps:
 * blockify it (reducer/rootcause.h: every block its own allocation), replay
 * it once with guard placement (a guard right after every tensor), take the
 * first launch that faults there, blockify again cut at that launch with a
 * FAULT record naming it, and run the ordinary reduction (guard placement
 * only) on that.  The emitted program places the blocks with guards itself
 * (each is an ALLOC in its trace).  Its header and YAML say "root cause:
 * ..." and name the original crash, so the two repros are never confused.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../common/strbuf.h"
#include "../common/util.h"
#include "../reducer/oracle.h"
#include "../replay/pool.h"
#include "../reducer/rootcause.h"
#include "../reducer/shrink.h"
#include "../addr/place.h"
#include "../trace/trace.h"
#include "cmds.h"
#include "repro/repro.h"
#include "shrink-root.h"
#include "repro/side-repro.h"

/* "DIR/repro.cu" -> "DIR/repro-root" + ext */
static char *root_sibling(const char *cu, const char *ext)
{
	char suffix[32];
	snprintf(suffix, sizeof(suffix), "-root%s", ext);
	return repro_sibling(cu, suffix);
}

/* The crash: the trace's FAULT record (oracle_fault_record), NULL if none. */
static const struct tr_fault *crash_of(const struct trace *t)
{
	long i = oracle_fault_record(t);
	return i >= 0 ? &t->rec[i].u.fault : NULL;
}

/* Replay the blockified trace once with guard placement: the first fault. */
static int first_fault(const char *bin, double timeout, struct replay_result *res, struct strbuf *err)
{
	struct pool *p = pool_create(1, 1, timeout, err);
	struct job job;
	int ret;
	if (!p)
		return -1;
	memset(&job, 0, sizeof(job));
	job.trace = bin;
	job.opts = (struct replay_opts)REPLAY_OPTS_INIT;
	job.opts.guard = GUARD_END;
	ret = pool_run(p, &job, 1, err);
	*res = job.res;
	pool_release(p);
	return ret;
}

/* What label_source needs: the first fault and the crash, to say why. */
struct root_label {
	const struct trace *t;
	const struct rc_cut *cut;
	const char *first_kernel, *crash_kernel, *crash_cu;
	struct strbuf why;   /* out: rc_describe's sentence */
};

/* Prepend the root-cause label to the emitted program (side_repro.label). */
static void label_source(void *arg, const char *diag, struct strbuf *src)
{
	struct root_label *L = arg;
	const char *why, *crash_cu = L->crash_cu;
	struct strbuf o = STRBUF_INIT;

	rc_describe(L->t, L->cut->seq, L->first_kernel, L->crash_kernel, diag, &L->why);
	why = L->why.buf;
	sb_adds(&o, "/*\n * ROOT-CAUSE REPRO (gpureduce shrink --root-cause): every tensor of PyTorch's caching\n"
		" * allocator is its own buffer here, flush against a guard, so the first out-of-bounds\n"
		" * access faults where it is made, not where its damage crashed the program.\n * ");
	for (const char *p = why; *p; p++) {
		sb_addch(&o, *p == '*' && p[1] == '/' ? '+' : *p);
		if (*p == ';' && p[1] == ' ') {
			sb_adds(&o, "\n *");
		}
	}
	sb_addf(&o, "\n * The crash-site repro (the fault the program died of) is %s.\n */\n", crash_cu);
	sb_add(&o, src->buf, src->len);
	sb_reset(src);
	sb_add(src, o.buf, o.len);
	sb_release(&o);
}

/* Append root_cause keys to the YAML report libyaml wrote (a block mapping:
 * further top-level keys may follow it). */
static int label_yaml(const char *yml, const char *why, const struct replay_result *first,
		      const char *crash, struct strbuf *err)
{
	struct strbuf y = STRBUF_INIT;
	int ret;
	sb_adds(&y, "repro_kind: root-cause\nroot_cause: '");
	for (const char *p = why; *p; p++)
		*p == '\'' ? sb_adds(&y, "''") : sb_addch(&y, *p);
	sb_addf(&y, "'\nroot_kernel: '%s'\nroot_launch: %lld\ncrash_kernel: '%s'\n", first->kernel,
		first->launch_seq, crash);
	ret = side_repro_yaml_append(yml, y.buf, err);
	sb_release(&y);
	return ret;
}

int shrink_root_cause(const struct trace *t, const char *path, const struct shrink_opts *base,
		      const char *out_cu, const char *crash_cu, int no_diag, struct strbuf *line,
		      struct strbuf *err)
{
	struct shrink_opts o = *base;
	struct shrink_report rep;
	struct rc_stats st;
	struct rc_cut cut;
	struct replay_result first;
	struct trace bt;
	struct root_label label = { NULL, NULL, NULL, NULL, NULL, STRBUF_INIT };
	struct strbuf tmp = STRBUF_INIT;
	char *cu = root_sibling(out_cu, ".cu"), *bin = root_sibling(out_cu, ".bin");
	char *yml = root_sibling(out_cu, ".yaml");
	int have_bt = 0, ret = EXIT_INTERNAL;
	const struct tr_fault *crash = crash_of(t);
	const char *crash_kernel = crash && crash->kernel ? crash->kernel : "";

	memset(&rep, 0, sizeof(rep));
	if (!rc_has_blocks(t)) {
		sb_addf(err, "%s holds no allocator blocks: capture the program with `gpureduce capture "
			"--tensors` for --root-cause", path);
		ret = EXIT_INPUT;
		goto out;
	}
	sb_addf(&tmp, "%s/blocks.bin", base->workdir);
	if (rc_blockify(t, tmp.buf, NULL, &st, err) < 0)
		goto out;
	if (!base->quiet)
		fprintf(stderr, "root cause: %zu tensor(s) in %zu segment(s) placed against their own guards "
			"(%zu copies/memsets cut to tensors, %llu bytes outside tensors dropped)\n",
			st.blocks, st.segments, st.clipped, (unsigned long long)st.dropped_bytes);
	if (first_fault(tmp.buf, base->cand_timeout > 60 ? base->cand_timeout : 60, &first, err) < 0) {
		ret = EXIT_ENV;
		goto out;
	}
	if (first.status != RS_FAULT || first.launch_seq < 0) {
		sb_addf(err, "under per-tensor guards the trace did not fault (%s%s%s): no out-of-bounds access "
			"inside a segment was found before the crash", replay_status_name(first.status),
			first.msg[0] ? ": " : "", first.msg);
		ret = EXIT_FAULT;
		goto out;
	}
	if (crash && (uint64_t)first.launch_seq == crash->launch_seq) {
		sb_addf(err, "under per-tensor guards the first fault is the crash itself (launch #%lld in %s): "
			"no earlier out-of-bounds access inside a segment; the crash-site repro %s is the root cause",
			first.launch_seq, first.kernel, crash_cu);
		ret = EXIT_FAULT;
		goto out;
	}
	cut.seq = (uint64_t)first.launch_seq;
	cut.code = (uint32_t)first.code;
	cut.error = first.error;
	cut.kernel = first.kernel;
	sb_reset(&tmp);
	sb_addf(&tmp, "%s/root.bin", base->workdir);
	if (rc_blockify(t, tmp.buf, &cut, &st, err) < 0)
		goto out;
	if (trace_open(&bt, tmp.buf, TRACE_OPEN_STRICT, err) < 0)
		goto out;
	have_bt = 1;

	/* the ordinary reduction, guard placement only, in a work folder of its own */
	sb_reset(&tmp);
	sb_addf(&tmp, "%s/root", base->workdir);
	if (mkdir(tmp.buf, 0700) < 0) {
		sb_addf(err, "%s: cannot create", tmp.buf);
		ret = EXIT_ENV;
		goto out;
	}
	o.workdir = tmp.buf;
	o.guard = GUARD_END;
	o.prebuild_repro = NULL;   /* the root-cause shrink checks its own way */
	{
		struct side_repro side = { &bt, path, cu, bin, yml, "gpureduce shrink --root-cause", no_diag,
					   label_source, &label };
		label = (struct root_label){ t, &cut, first.kernel, crash_kernel, crash_cu, STRBUF_INIT };
		ret = side_repro_run(&side, &o, &rep, err);
		if (ret != EXIT_OK)
			goto out;
		ret = EXIT_INTERNAL;
	}
	if (label_yaml(yml, label.why.buf, &first, crash_kernel, err) < 0) {
		ret = EXIT_ENV;
		goto out;
	}
	if (!base->quiet)
		shrink_print_report(stderr, &rep);
	sb_addf(line, "shrink --root-cause: %s -> %s (%zu launch%s, %zu buffer%s; ", label.why.buf, cu,
		rep.final_launches, rep.final_launches == 1 ? "" : "es", rep.final_buffers,
		rep.final_buffers == 1 ? "" : "s");
	if (rep.repro_checked)
		sb_addf(line, "repro-root.cu faulted %d/%d, %s placement)", rep.repro_faults, rep.repro_runs,
			place_guard_name(rep.repro_guard));
	else
		sb_addf(line, "reproduced %d/%d in replay; repro-root.cu not built)", rep.final_faults,
			rep.final_runs);
	ret = rep.repro_checked && !rep.repro_ok ? EXIT_FAULT : EXIT_OK;
	if (ret != EXIT_OK)
		sb_addf(err, "the emitted %s does NOT reproduce the root cause: %s", cu, rep.repro_why);
out:
	if (have_bt)
		trace_release(&bt);
	free(rep.final_sanitizer);
	free(cu);
	free(bin);
	free(yml);
	sb_release(&label.why);
	sb_release(&tmp);
	return ret;
}
