/*
 * cmd-replay.c - `gpureduce replay`: replay a trace once (or, for a race,
 * up to --tries times until it faults), in a worker child process, and say
 * what happened.  The gpureduce process itself never
 * initialises CUDA.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/opts.h"
#include "../common/interrupt.h"
#include "../common/strbuf.h"
#include "../replay/pool.h"
#include "../addr/memmap.h"
#include "../addr/place.h"
#include "../trace/trace.h"
#include "cmds.h"
#include "outputs/safe-out.h"

static const char usage_str[] =
	"usage: gpureduce replay [--guard=end|start|none|layout] [--timeout=S] [--skip=FILE] [--tries=N]\n"
	"                        [--stop-before=EVENT --snapshot=OUT.bin [--snapshot-all] [--force]] TRACE\n\n"
	"Replays TRACE on the GPU in a child process.  Buffers are placed against\n"
	"unmapped guard regions (--guard=end: overruns fault at once; start: underruns;\n"
	"none: plain cuMemAlloc) and captured pointers are relocated.  --guard=layout\n"
	"(layout-faithful) maps every device buffer at its captured offset from the\n"
	"others inside one reserved range, so a wild access lands where it landed in\n"
	"the original.  Without --guard, as shrink confirms: layout first, then end\n"
	"when layout runs clean or cannot apply (the output says which faulted).\n"
	"--stop-before=N stops before event N; --snapshot writes the state the launch at\n"
	"N needs (the buffers it reaches, or with --snapshot-all every live buffer) as a trace.\n"
	"The snapshot never replaces TRACE itself, nor a file that is not a trace (--force does).\n"
	"  --timeout=S     seconds before a hung replay is stopped (default 600)\n"
	"  --skip=FILE     leave out the launches FILE lists (captured launch numbers, one a\n"
	"                  line), as hunt's replays do (hunt --keep-work keeps each one's list)\n"
	"  --tries=N       a race: replay up to N times in the same worker process, until one\n"
	"                  faults (a clean try costs no new CUDA context); default 1\n"
	"--shift (or GPUREDUCE_SHIFT=1, which shrink's workers follow too): no buffer at its\n"
	"captured address or offset, so a pointer left unrelocated cannot pass by luck.\n"
	"Exit: 0 ran clean, 1 faulted, 3 bad or incomplete trace (one that ends without an END or\n"
	"FAULT record and replays without a fault) or could not replay, 4 no GPU/driver.\n";

/* A fault replay found where the capture had none: when its launch passes
 * words pointing into no recorded buffer, say so (memmap_stray_note; the
 * trace is opened again: it was let go during the run). */
static void stray_note(const char *path, long event)
{
	struct trace t;
	struct strbuf err = STRBUF_INIT, note = STRBUF_INIT;
	if (event >= 0 && trace_open(&t, path, 0, &err) == 0) {
		if (memmap_stray_note(&t, event, "replay: note: the capture did not fault there; ", &note))
			printf("%s\n", note.buf);
		trace_release(&t);
	}
	sb_release(&err);
	sb_release(&note);
}

int cmd_replay(int argc, char **argv)
{
	struct replay_opts o = REPLAY_OPTS_INIT;
	struct opts op;
	struct strbuf err = STRBUF_INIT, lacks = STRBUF_INIT;
	struct trace t;
	struct pool *p = NULL;
	struct job job;
	const char *path = NULL;
	double timeout = 600;
	int complete = 1;
	int ret = EXIT_INTERNAL, auto_guard = 1, force = 0, cut_fault = 0;   /* no --guard: layout, then end */
	int tries = 1, try_;
	long long fault_seq = -1;   /* the launch the capture faulted in, if at a launch */

	opts_init(&op, argc, argv, &err);
	while (opts_next(&op)) {
		const char *a = op.arg, *v = NULL;
		if (is_help(a)) {
			fputs(usage_str, stdout);
			return EXIT_OK;
		} else if (opts_str(&op, "--guard", &v)) {
			auto_guard = 0;
			if (v && (o.guard = place_parse_guard(v)) < 0)
				opts_fail(&op, "--guard takes end, start, none or layout");
		} else if (opts_long(&op, "--stop-before", &o.stop_before, 0, 1L << 40)) {
		} else if (opts_str(&op, "--snapshot", &o.snap_path)) {
			if (!o.snap_mode)
				o.snap_mode = SNAP_REACHABLE;
		} else if (opts_flag(&op, "--snapshot-all")) {
			o.snap_mode = SNAP_ALL;
		} else if (opts_flag(&op, "--force")) {
			force = 1;
		} else if (opts_double(&op, "--timeout", &timeout, 0.01, 1e9)) {
		} else if (opts_str(&op, "--skip", &o.skip_path)) {
		} else if (opts_int(&op, "--tries", &tries, 1, 100000)) {
		} else if (opts_flag(&op, "--shift")) {
			setenv("GPUREDUCE_SHIFT", "1", 1);   /* the worker reads it (replay/shift.h) */
		} else if (opts_unknown(&op)) {
		} else if (!path) {
			path = a;
		} else {
			opts_fail(&op, "one trace at a time");
		}
	}
	if (op.failed) {
		cmd_error("replay", "%s; see 'gpureduce replay --help'", err.buf);
		sb_release(&err);
		return EXIT_USAGE;
	}
	if (!path) {
		fputs(usage_str, stderr);
		return EXIT_USAGE;
	}
	if (o.snap_path)
		auto_guard = 0;   /* a snapshot is written with the placement asked for (end) */
	if (o.snap_path && o.stop_before < 0) {
		cmd_error("replay", "--snapshot needs --stop-before=EVENT");
		return EXIT_USAGE;
	}
	/* the snapshot never replaces its input (through links too: same
	 * device and inode), nor a file that is not a trace (safe-out.h) */
	if (o.snap_path && safe_same_file(o.snap_path, path)) {
		cmd_error("replay", "--snapshot=%s is the input trace %s: pick another name (nothing was done)",
			  o.snap_path, path);
		return EXIT_USAGE;
	}
	if (o.snap_path && safe_may_replace(o.snap_path, "the snapshot", 1, force, &err) < 0) {
		cmd_error("replay", "%s", err.buf);
		sb_release(&err);
		return EXIT_USAGE;
	}
	/* Validate here, where a bad file gets a clear message and exit 3. */
	if (safe_trace_open(&t, path, 0, &err) < 0) {
		cmd_error("replay", "%s", err.buf);
		ret = EXIT_INPUT;
		goto out;
	}
	if (t.truncated)
		fprintf(stderr, "gpureduce replay: warning: %s\n", t.truncated_msg);
	complete = trace_complete(&t);
	cut_fault = t.cut_in_fault;
	for (size_t i = 0; i < t.nrec; i++)
		if (t.rec[i].type == TR_FAULT) {
			if (t.rec[i].u.fault.at_launch)
				fault_seq = (long long)t.rec[i].u.fault.launch_seq;
			trace_unrecorded_notes(&t, "replay: note: the capture faulted, and noted what the trace lacks: ",
					       3, &lacks);
			break;
		}
	trace_release(&t);

	/* ^C: the worker is in its own process group; stop it (interrupt.h) */
	interrupt_install();
	p = pool_create(1, 1, timeout, &err);
	if (!p) {
		cmd_error("replay", "%s", err.buf);
		ret = EXIT_ENV;
		goto out;
	}
	/* one run: no warm replacement after a fault (under compute-sanitizer,
	 * shrink's site runs, it was one more sanitized context) */
	pool_set_lazy(p, 1);
	/* the default, as shrink confirms: layout-faithful placement first;
	 * when it runs clean or cannot apply, guard placement (end).  With
	 * --tries, the same again while every try ran clean: the worker that
	 * ran clean replays the next (a race's fault comes in some runs) */
	for (try_ = 1; ; try_++) {
		for (int pass = 0; pass < 2; pass++) {
			if (pass == 1 && !(auto_guard && (job.res.status == RS_CLEAN ||
							  (job.res.status == RS_ERROR &&
							   job.res.error_kind == RE_NO_LAYOUT))))
				break;
			if (pass == 1 && job.res.status == RS_ERROR && try_ == 1)
				fprintf(stderr, "gpureduce replay: %s; replaying with --guard=end\n", job.res.msg);
			memset(&job, 0, sizeof(job));
			job.trace = path;
			job.opts = o;
			if (auto_guard)
				job.opts.guard = pass ? GUARD_END : GUARD_LAYOUT;
			if (pool_run(p, &job, 1, &err) < 0) {
				cmd_error("replay", "%s", err.buf);
				ret = EXIT_ENV;
				goto out;
			}
			if (interrupt_signal()) {
				cmd_error("replay", "interrupted (%s): the replay worker was stopped",
					  interrupt_name(interrupt_signal()));
				ret = 128 + interrupt_signal();
				goto out;
			}
		}
		/* only a clean run is worth another try (a snapshot is written once) */
		if (try_ == tries || job.res.status != RS_CLEAN || o.snap_path || (!complete && o.stop_before < 0))
			break;
		printf("replay: try %d of %d ran clean; trying again\n", try_, tries);
		fflush(stdout);
	}
	o.guard = job.opts.guard;
	if (job.res.status == RS_CLEAN || job.res.status == RS_FAULT) {
		/* relocation coverage: what replay rewrote, and what it could not
		 * (before the outcome: scripts read the last replay: line) */
		printf("replay: relocation: %ld pointer word(s) relocated, %ld word(s) looked like device "
		       "addresses but matched no buffer", job.res.ptr_words, job.res.stray_words);
		if (job.res.tmaps_encoded || job.res.tmaps_word0)
			printf(", %ld TMA tensor map(s) re-encoded, %ld by address word only",
			       job.res.tmaps_encoded, job.res.tmaps_word0);
		if (job.res.shifted >= 0)
			printf(", shifted placement (GPUREDUCE_SHIFT=1): %ld buffer(s) away from their captured "
			       "addresses and offsets", job.res.shifted);
		printf("\n");
	}
	switch (job.res.status) {
	case RS_CLEAN:
		if (!complete && o.stop_before < 0) {
			/* not "ran clean": the program went on past where the trace ends */
			printf("replay: incomplete trace: replayed all %ld launches without a fault, but %s\n",
			       job.res.launches, TRACE_INCOMPLETE_MSG);
			ret = EXIT_INPUT;
			break;
		}
		printf("replay: ran clean (%ld launch%s, %.3f s, guard=%s%s%s)%s%s\n", job.res.launches,
		       job.res.launches == 1 ? "" : "es",
		       job.res.seconds, auto_guard ? "layout, then " : "", place_guard_name(o.guard),
		       tries > 1 ? ", in every try" : "", job.res.msg[0] ? "; " : "", job.res.msg);
		if (lacks.len)   /* the capture's fault did not come back: this may be why */
			printf("%s\n", lacks.buf);
		ret = EXIT_OK;
		break;
	case RS_FAULT:
		printf("replay: faulted at event %ld (launch #%lld) in %s: %s (%d) after %ld launch%s, %.3f s, guard=%s",
		       job.res.event, job.res.launch_seq, job.res.kernel, job.res.error, job.res.code,
		       job.res.launches, job.res.launches == 1 ? "" : "es", job.res.seconds,
		       place_guard_name(o.guard));
		if (tries > 1)
			printf(", try %d of %d", try_, tries);
		printf("\n");
		if (cut_fault)
			printf("replay: note: %s; this fault is the replay's own (shrink needs the record "
			       "whole: capture the program again)\n", TRACE_CUT_FAULT_MSG);
		if (job.res.launch_seq != fault_seq)
			stray_note(path, job.res.event);
		ret = EXIT_FAULT;
		break;
	case RS_TIMEOUT:
		printf("replay: could not replay: no result within %.0f s (hang?)\n", timeout);
		ret = EXIT_INPUT;
		break;
	default:
		printf("replay: could not replay: %s\n", job.res.msg[0] ? job.res.msg : "worker failed");
		ret = EXIT_INPUT;
		break;
	}
out:
	pool_release_detached(p);   /* the result is printed: nobody waits for the teardown */
	sb_release(&err);
	sb_release(&lacks);
	return ret;
}
