/*
 * shrink.c - the reduction driver (see shrink.h): confirm the fault, reduce
 * to a base state (slice, or suffix and ddmin over launches), run the
 * phase table, then the final confirmation and the repro.cu check
 * (final.h), and fill the report.
 *
 * Candidates are tested by the oracle (oracle.h) and built by the phases
 * (phase.h, one file each); the phases, their order and their names are
 * the phase table (shrink-phases.h); this file only decides which run
 * (strategy, options, --phases/--skip-phases) and what happens between
 * them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/interrupt.h"
#include "../common/strbuf.h"
#include "../common/util.h"
#include "../addr/graphs.h"
#include "../replay/replay.h"
#include "cand.h"
#include "final.h"
#include "oracle.h"
#include "phase.h"
#include "shrink.h"

/* 1 when phase id runs by --phases/--skip-phases (shrink-phases.h) and
 * --cut-buffers; a phase the user turned off gets its report row, saying
 * so, and 0 */
static int selected(struct oracle *o, const struct shrink_opts *opts, enum phase_id id, const struct cand *best)
{
	if (phase_wanted(opts->phase_sel, id, opts->cut_buffers))
		return 1;
	if (opts->phase_sel[id] == PHASE_SEL_OFF) {
		oracle_phase_begin(o, phase_name(id), best);
		oracle_phase_end(o, best, "skipped: not selected (--phases/--skip-phases)");
	}
	return 0;
}

/* 1 when the table phase k runs in this reduction: its strategy, its
 * options and the user's selection (see selected) */
static int table_phase_runs(struct oracle *o, const struct shrink_opts *opts, int k, const struct cand *best)
{
	if (opts->strategy == STRATEGY_BASELINE && !(phase_defs[k].flags & PHASE_BASELINE))
		return 0;
	return selected(o, opts, (enum phase_id)k, best);
}

static int has_graph_launch(const struct trace *t)
{
	for (size_t i = 0; i < t->nrec; i++)
		if (t->rec[i].type == TR_GRAPH_LAUNCH)
			return 1;
	return 0;
}

/* 1 when the fault is reported by a communication kernel's own launch,
 * one that replay never runs (TR_F_FOLDED, issue 25). */
static int fault_in_folded(const struct trace *t, const struct tr_fault *f)
{
	long i = f->at_launch ? trace_find_launch(t, f->launch_seq) : -1;
	return i >= 0 && (t->rec[i].u.launch.flags & TR_F_FOLDED);
}

/* Graph node `rec` of t appended to c as a record that runs (no longer
 * flagged captured): one node of an expanded graph launch. */
static void add_node_run(struct cand *c, const struct trace *t, size_t rec)
{
	struct item *it = cand_add(c, t, rec);
	if (it->rec.type == TR_LAUNCH)
		it->rec.u.launch.flags &= ~TR_F_CAPTURED;
	else if (it->rec.type == TR_MEMSET)
		it->rec.u.memset.flags &= ~TR_F_CAPTURED;
	else
		it->rec.u.copy.flags &= ~TR_F_CAPTURED;
}

/* Write `t` with every GRAPH_LAUNCH replaced by copies of its graph's nodes
 * (no longer flagged captured) and the graph records dropped; open it as a
 * source.  NULL with oracle_err(o) on failure. */
static const struct trace *expand_graphs(struct oracle *o, const struct trace *t)
{
	struct graphs G = GRAPHS_INIT;
	struct cand c = CAND_INIT;
	struct strbuf path = STRBUF_INIT;
	const struct trace *ex = NULL;

	for (size_t i = 0; i < t->nrec; i++) {
		const struct tr_rec *r = &t->rec[i];
		if (graphs_feed(&G, r, i))
			continue;
		switch (r->type) {
		case TR_BLOB:
			break;
		case TR_GRAPH_LAUNCH: {
			const struct gcap *g = graphs_find_exec(&G, r->u.graph.exec);
			for (size_t k = 0; g && k < g->n; k++)
				add_node_run(&c, t, g->recs[k]);
			break;
		}
		default:
			cand_add(&c, t, i);
			break;
		}
	}
	sb_addf(&path, "%s/expanded.bin", oracle_opts(o)->workdir);
	if (cand_write(&c, path.buf, oracle_err(o)) == 0)
		ex = oracle_add_source(o, path.buf);
	oracle_progress(o, "expanded graph launches into %zu launches", cand_count(&c, TR_LAUNCH));
	cand_release(&c);
	graphs_release(&G);
	sb_release(&path);
	return ex;
}

/* How many records expand_graphs would write for t's graph launches (each
 * launch's nodes). */
static size_t graph_nodes_launched(const struct trace *t)
{
	struct graphs G = GRAPHS_INIT;
	size_t n = 0;
	for (size_t i = 0; i < t->nrec; i++) {
		const struct gcap *g;
		if (graphs_feed(&G, &t->rec[i], i) || t->rec[i].type != TR_GRAPH_LAUNCH)
			continue;
		if ((g = graphs_find_exec(&G, t->rec[i].u.graph.exec)))
			n += g->n;
	}
	graphs_release(&G);
	return n;
}

/* Graph nodes expand_graphs writes at most (GPUREDUCE_GRAPH_EXPAND_MAX):
 * a training loop that replays a graph of hundreds of nodes every step
 * for hours would expand into millions of records, in every worker's
 * memory; past this, only the last graph launch is expanded (graph_tail). */
static size_t graph_expand_max(void)
{
	const char *e = getenv("GPUREDUCE_GRAPH_EXPAND_MAX");
	return e && *e ? (size_t)strtoull(e, NULL, 10) : 200000;
}

/*
 * The trace from the last graph launch before the fault on: a snapshot of
 * everything live before it (a replay of t that runs the earlier graph
 * launches as graphs), that launch's nodes as plain records, the records
 * after it (graphs captured there are never launched: left out), and the
 * fault.  What expand_graphs gives, without the graph launches before the
 * last one (their work is in the snapshot).  NULL when there is no such
 * launch or the snapshot fails (the caller expands everything).
 */
static const struct trace *graph_tail(struct oracle *o, const struct trace *t, long frec, size_t nodes)
{
	struct graphs G = GRAPHS_INIT;
	struct cand c = CAND_INIT;
	struct strbuf path = STRBUF_INIT;
	const struct trace *snap, *tail = NULL;
	const struct gcap *g = NULL;
	long gl = -1;

	for (long i = 0; i < frec; i++)
		if (t->rec[i].type == TR_GRAPH_LAUNCH)
			gl = i;
	if (gl < 0)
		return NULL;
	for (long i = 0; i < gl; i++)
		graphs_feed(&G, &t->rec[i], (size_t)i);
	if (!(g = graphs_find_exec(&G, t->rec[gl].u.graph.exec)) ||
	    !(snap = oracle_snapshot(o, gl, SNAP_ALL))) {
		sb_reset(oracle_err(o));
		goto out;
	}
	cand_add_all(&c, snap);
	/* which build of a name each node ran (fnpick): the snapshot of
	 * everything carries no FUNC_INFO */
	for (long i = 0; i < gl; i++)
		if (t->rec[i].type == TR_FUNC_INFO)
			cand_add(&c, t, (size_t)i);
	for (size_t k = 0; k < g->n; k++)
		add_node_run(&c, t, g->recs[k]);
	for (long i = gl + 1; i < frec; i++) {
		const struct tr_rec *r = &t->rec[i];
		if (r->type == TR_BLOB || r->type == TR_PROCESS || r->type == TR_DEVICE || graphs_is_node(r) ||
		    r->type == TR_GRAPH_BEGIN || r->type == TR_GRAPH_END || r->type == TR_GRAPH_EXEC)
			continue;
		cand_add(&c, t, (size_t)i);
	}
	cand_add(&c, t, (size_t)frec);
	sb_addf(&path, "%s/graph-tail.bin", oracle_opts(o)->workdir);
	if (cand_write(&c, path.buf, oracle_err(o)) == 0)
		tail = oracle_add_source(o, path.buf);
	if (tail)
		oracle_progress(o, "%zu graph nodes launched: reducing from the last graph launch (%zu nodes) on, "
				"the rest as a snapshot", nodes, g->n);
	else
		sb_reset(oracle_err(o));
out:
	cand_release(&c);
	graphs_release(&G);
	sb_release(&path);
	return tail;
}

/* The baseline: ddmin over every launch, then the table's baseline
 * phases (plain ddmin, a fresh process per candidate; no compute-sanitizer
 * work), stopping at lost workers, the time limit or a signal. */
static void run_baseline(struct oracle *o, const struct shrink_opts *opts, struct shrink_states *ss,
			 struct cand *best)
{
	cand_add_all(best, oracle_orig(o));
	if (selected(o, opts, PH_LAUNCHES, best))
		phase_launches(o, opts, best);
	states_save(ss, phase_name(PH_LAUNCHES), best);
	for (int k = 0; k < PH__COUNT; k++) {
		if (!phase_defs[k].fn)
			continue;   /* steps and base phases: not in this loop */
		if (oracle_failed(o) || oracle_over_time(o) || interrupt_signal())
			break;
		if (!table_phase_runs(o, opts, k, best))
			continue;
		phase_defs[k].fn(o, opts, best);
		states_save(ss, phase_defs[k].name, best);
	}
}

/* Hand a state the reduction may end with to opts->prebuild_repro
 * (written as WORKDIR/prebuild.bin), placed as the repro.cu check's first
 * attempt will place it: its repro.cu is built while the workers go on. */
static void prebuild_repro(struct oracle *o, const struct shrink_opts *opts, const struct cand *best)
{
	struct strbuf path = STRBUF_INIT, err = STRBUF_INIT;

	if (!opts->prebuild_repro || !opts->check_repro || !best->n)
		return;
	sb_addf(&path, "%s/prebuild.bin", opts->workdir);
	if (cand_write(best, path.buf, &err) == 0)
		opts->prebuild_repro(opts->check_arg, path.buf, oracle_guard(o));
	sb_release(&path);
	sb_release(&err);
}

/* The full strategy: the slice, else the shortest faulting suffix (else
 * the whole trace) and ddmin over its launches; that base state's
 * compute-sanitizer run starts in the background; then the table, where a
 * phase that lost its workers is followed by a fresh pool (--keep-going)
 * or ends the reduction. */
static void run_full(struct oracle *o, const struct shrink_opts *opts, struct shrink_states *ss,
		     struct cand *best)
{
	struct cand plain = CAND_INIT;
	int last = -1;   /* the last table phase to run */
	int sliced = selected(o, opts, PH_SLICE, best) && phase_slice(o, opts, best, &plain);
	if (!sliced && !oracle_failed(o)) {
		if (!selected(o, opts, PH_SUFFIX, best) || !phase_suffix(o, opts, best)) {
			cand_release(best);
			cand_add_all(best, oracle_orig(o));
		}
		if (selected(o, opts, PH_LAUNCHES, best))
			phase_launches(o, opts, best);
	}
	if (!best->n)
		cand_add_all(best, oracle_orig(o));
	if (plain.n) {
		/* the slice kept the data phase's zeros (phase_slice): the
		 * slice as captured is the base, the zeros the data phase's */
		states_save(ss, phase_name(PH_SLICE), &plain);
		states_save(ss, phase_name(PH_DATA), best);
	} else {
		states_save(ss, phase_name(sliced ? PH_SLICE : PH_LAUNCHES), best);
	}
	/* the slice started it on its own candidate, which is state 0 when
	 * the slice was kept (phase_slice) */
	if (oracle_have_san(o) && !(sliced && oracle_base_started(o)))
		oracle_base_start(o, &ss->state[0], ss->name[0]);
	cand_release(&plain);
	for (int k = 0; k < PH__COUNT; k++)
		if (phase_defs[k].fn && phase_wanted(opts->phase_sel, (enum phase_id)k, opts->cut_buffers))
			last = k;
	for (int k = 0; k < PH__COUNT; k++) {
		if (!phase_defs[k].fn || (phase_defs[k].flags & PHASE_CUT_BUFFERS &&
					  !phase_wanted(opts->phase_sel, (enum phase_id)k, opts->cut_buffers)))
			continue;   /* steps, base phases; sizes off as by default */
		if (interrupt_signal())
			break;
		if (oracle_failed(o) && !oracle_recover(o))
			break;
		if (!table_phase_runs(o, opts, k, best))
			continue;
		if (k == last && opts->prebuild_repro && opts->check_repro) {
			/* the reduction ends with the state before this phase, or
			 * with the last candidate it keeps: repro.cu of each is
			 * built while the phase runs (issue 26: the check then
			 * waits for no compiler) */
			oracle_log(o, "the state before %s, the last phase: its repro.cu is built ahead", phase_defs[k].name);
			prebuild_repro(o, opts, best);
			oracle_prebuild_each(o, 1);
		}
		phase_defs[k].fn(o, opts, best);
		states_save(ss, phase_defs[k].name, best);
	}
	oracle_prebuild_each(o, 0);
	if (oracle_failed(o))
		oracle_recover(o);
}

/*
 * The captured fault did not come back because replay faulted first, in
 * another kernel (oracle_foreign_fault): typically a library kernel that
 * follows a pointer into memory the capture did not see, or one replay
 * passed as captured (torchvision-long on the H200, 2026-12-05: a cuDNN
 * dgrad kernel, 33000 launches before the program's own fault).  Leave
 * out that kernel's launches before the fault (FOREIGN_MAX kernels at
 * most, one at a time) and confirm again: the reduction then checks
 * that what remains still faults as the program did, with the site
 * check, and repro.cu's runs.  What was left out goes in the report's
 * note.  0 when the fault came back, -1 when not (the first failure's
 * error, with what was tried after it).
 */
enum { FOREIGN_MAX = 3 };

static int confirm_without_foreign(struct oracle *o, struct shrink_report *rep)
{
	struct strbuf first = STRBUF_INIT, left = STRBUF_INIT, path = STRBUF_INIT;
	const struct replay_result *fr;
	int ret = -1;

	sb_add(&first, oracle_err(o)->buf, oracle_err(o)->len);
	for (int k = 0; k < FOREIGN_MAX && !oracle_failed(o) && !interrupt_signal(); k++) {
		const struct trace *t = oracle_orig(o), *nt;
		long frec = oracle_fault_record(t);
		uint64_t fseq;
		size_t dropped = 0;
		struct cand c = CAND_INIT;

		/* (fr stays until the next oracle_confirm) */
		if (!(fr = oracle_foreign_fault(o)) || frec < 0)
			break;
		fseq = t->rec[frec].u.fault.launch_seq;
		for (size_t i = 0; i < t->nrec; i++) {
			const struct tr_rec *r = &t->rec[i];
			if (r->type == TR_BLOB)
				continue;
			if (r->type == TR_LAUNCH && r->u.launch.seq < fseq && r->u.launch.name &&
			    !strcmp(r->u.launch.name, fr->kernel)) {
				dropped++;
				continue;
			}
			cand_add(&c, t, i);
		}
		sb_reset(&path);
		sb_addf(&path, "%s/without-%d.bin", oracle_opts(o)->workdir, k + 1);
		sb_reset(oracle_err(o));
		nt = dropped && cand_write(&c, path.buf, oracle_err(o)) == 0 ? oracle_add_source(o, path.buf) : NULL;
		cand_release(&c);
		if (!nt)
			break;
		sb_addf(&left, "%s%zu launch%s of %s (replay faulted in launch #%lld)", left.len ? ", " : "",
			dropped, dropped == 1 ? "" : "es", fr->kernel, fr->launch_seq);
		oracle_progress(o, "the fault did not come back: replay faulted first in %s, launch #%lld; "
				"confirming again without its %zu launch(es) before the fault", fr->kernel,
				fr->launch_seq, dropped);
		oracle_set_orig(o, nt, 0);
		if (oracle_confirm(o) == 0) {
			size_t l = strlen(rep->note);
			snprintf(rep->note + l, sizeof(rep->note) - l, "%sreplay faulted before the program's fault, "
				 "in another kernel; left out: %s (their outputs are missing from what follows)",
				 l ? "; " : "", left.buf);
			ret = 0;
			break;
		}
	}
	if (ret < 0) {
		struct strbuf again = STRBUF_INIT;
		sb_add(&again, oracle_err(o)->buf, oracle_err(o)->len);
		sb_reset(oracle_err(o));
		sb_add(oracle_err(o), first.buf, first.len);
		if (left.len)
			sb_addf(oracle_err(o), " Without %s: %s", left.buf, again.buf);
		sb_release(&again);
	}
	sb_release(&first);
	sb_release(&left);
	sb_release(&path);
	return ret;
}

int shrink_run(const struct trace *orig, const struct shrink_opts *opts, const char *out_bin,
	       struct shrink_report *rep, struct strbuf *err)
{
	struct oracle *o;
	struct shrink_states ss;
	struct cand best = CAND_INIT;
	long frec;
	int ret = -1, rc, graph_fault = 0, big_graphs = 0;
	size_t graph_nodes = 0;

	memset(&ss, 0, sizeof(ss));
	memset(rep, 0, sizeof(*rep));
	cand_write_error_reset();
	o = oracle_new(orig, opts, rep, err);
	for (size_t i = 0; i < orig->nrec; i++) {
		if (orig->rec[i].type == TR_LAUNCH)
			rep->orig_launches++;
		if (orig->rec[i].type == TR_MEMCPY_H2D)
			rep->orig_bytes += orig->rec[i].u.copy.size;
	}
	rep->orig_records = orig->nrec;
	frec = oracle_fault_record(orig);
	if (frec < 0) {
		sb_addf(err, "%s holds no fault: the captured program did not fail with a sticky CUDA "
			"error, so there is nothing to shrink", orig->path);
		oracle_release(o);
		return -1;
	}
	if (fault_in_folded(orig, &orig->rec[frec].u.fault)) {
		sb_addf(err, "%s: the fault is in communication kernel %s, which was folded at capture "
			"(it needs its peers): it cannot be replayed on one GPU (docs/MULTI-RANK.md)",
			orig->path, orig->rec[frec].u.fault.kernel);
		oracle_release(o);
		return -1;
	}
	rep->code = (int)orig->rec[frec].u.fault.code;
	snprintf(rep->error, sizeof(rep->error), "%s", orig->rec[frec].u.fault.error);
	snprintf(rep->kernel, sizeof(rep->kernel), "%s", orig->rec[frec].u.fault.kernel);

	/* Graph launches: reduce the trace with each launch expanded into its
	 * nodes, so the faulting node can be sliced like any launch; when
	 * that would be too many records, only the last graph launch, after a
	 * snapshot of what the others left (graph_tail, once workers run). */
	if (has_graph_launch(orig)) {
		graph_fault = !strncmp(orig->rec[frec].u.fault.api, "cuGraphLaunch", 13);
		graph_nodes = graph_nodes_launched(orig);
		big_graphs = graph_nodes > graph_expand_max();
		if (!big_graphs) {
			const struct trace *ex = expand_graphs(o, orig);
			if (!ex) {
				oracle_release(o);
				return -1;
			}
			oracle_set_orig(o, ex, graph_fault);
		}
	}

	rc = oracle_start(o);
	if (rc == -1) {
		oracle_release(o);
		return -1;
	}
	if (rc < 0)
		goto out;
	if (big_graphs) {
		const struct trace *ex = graph_tail(o, orig, frec, graph_nodes);
		if (!ex && !(ex = expand_graphs(o, orig)))
			goto out;
		oracle_set_orig(o, ex, graph_fault);
	}
	if (oracle_confirm(o) < 0 && confirm_without_foreign(o, rep) < 0)
		goto out;
	if (opts->sig_site)
		oracle_take_reference_site(o);

	if (opts->strategy == STRATEGY_BASELINE)
		run_baseline(o, opts, &ss, &best);
	else
		run_full(o, opts, &ss, &best);
	if (interrupt_signal()) {
		ret = final_keep_interrupted(o, &best, out_bin);
		goto out;
	}
	if (oracle_failed(o))
		goto out;

	/* final confirmation; back off to the base state (slice or launches);
	 * repro.cu of the state it confirms is built meanwhile */
	prebuild_repro(o, opts, &best);
	rc = final_verify(o, &ss, &best, out_bin);
	if (rc == 1)
		ret = final_keep_interrupted(o, &best, out_bin);
	if (rc)
		goto out;
	if (final_repro(o, &ss, &best, out_bin, final_repro_runs(o)) < 0)
		goto out;
	if (!interrupt_signal() && (rc = final_settle(o, &ss, &best, out_bin)) != 0) {
		/* backed off: repro.cu again, then replay's runs topped up if it
		 * is not built or misses (final_settle does nothing else now) */
		if (rc < 0 || final_repro(o, &ss, &best, out_bin, final_repro_runs(o)) < 0 ||
		    (!interrupt_signal() && final_settle(o, &ss, &best, out_bin) < 0))
			goto out;
	}
	if (interrupt_signal()) {
		ret = final_keep_interrupted(o, &best, out_bin);
		goto out;
	}
	oracle_measure(&best, &rep->final_launches, &rep->final_buffers, &rep->final_bytes);
	ret = 0;
out:
	oracle_phase_abandon(o, oracle_failed(o) ? "stopped: workers lost" : "stopped on an error");
	oracle_finish(o);
	rep->seconds = oracle_elapsed(o);
	rep->infra_failed = oracle_failed(o);
	rep->write_failed = cand_write_error();
	cand_release(&best);
	states_release(&ss);
	oracle_release(o);
	return ret;
}

double shrink_phase_share(const struct shrink_report *rep, int i)
{
	return rep->seconds > 0 ? rep->phase[i].seconds / rep->seconds : 0;
}

double shrink_other_seconds(const struct shrink_report *rep)
{
	double sum = 0;
	for (int i = 0; i < rep->nphases; i++)
		sum += rep->phase[i].seconds;
	return rep->seconds > sum ? rep->seconds - sum : 0;
}

void shrink_print_report(FILE *f, const struct shrink_report *rep)
{
	fprintf(f, "%-15s %-22s %-22s %10s %7s %8s %6s  %s\n", "phase", "launches/buffers before",
		"after", "candidates", "faulted", "seconds", "share", "outcome");
	for (int i = 0; i < rep->nphases; i++) {
		const struct shrink_phase *p = &rep->phase[i];
		char b1[40], b2[40];
		snprintf(b1, sizeof(b1), "%zu / %zu", p->launches_before, p->buffers_before);
		snprintf(b2, sizeof(b2), "%zu / %zu", p->launches_after, p->buffers_after);
		if (!p->launches_before && !p->buffers_before && !p->launches_after && !p->buffers_after)
			strcpy(b1, "-"), strcpy(b2, "-");   /* a phase that measures, not cuts (confirm) */
		fprintf(f, "%-15s %-22s %-22s %10ld %7ld %8.2f %5.0f%%  %s\n", p->name, b1, b2, p->candidates,
			p->faulted_replays, p->seconds, 100 * shrink_phase_share(rep, i), p->outcome ? p->outcome : "");
	}
	/* what no phase accounts for: the workers' start-up, graph expansion,
	 * states and snapshots written between phases */
	fprintf(f, "%-15s %-22s %-22s %10s %7s %8.2f %5.0f%%  of %.2f s in all\n", "(other)", "", "", "", "",
		shrink_other_seconds(rep), rep->seconds > 0 ? 100 * shrink_other_seconds(rep) / rep->seconds : 0,
		rep->seconds);
	if (rep->note[0])
		fprintf(f, "note: %s\n", rep->note);
}
