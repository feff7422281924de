/*
 * cmd-capture.c - `gpureduce capture [-o trace.bin] [--allow-no-capture]
 * [--checkpoint-every=SPEC] [--max-trace-bytes=B] [--no-checkpoint] [--] CMD ARGS...`
 *
 * Runs CMD with the CUPTI injection library (capture/inject.c) named by
 * CUDA_INJECTION64_PATH, so the driver loads it at cuInit and it writes the
 * trace, then prints one summary line.  The program's stdin/stdout/stderr
 * pass straight through and its exit status is ours, except when capture
 * itself could not happen (CUPTI taken by another tool, trace not
 * writable: EXIT_ENV) or the program could not be started (127, as a
 * shell would).
 *
 * The library reports how it fared through a status file
 * (GPUREDUCE_STATUS): one line per CUDA process, "ok PID PATH",
 * "cupti-busy ERR", "cupti-error ERR", "trace-error MSG", or "write-error
 * PID OFFSET WHY" (a write of the trace failed: it ends there).  A second CUDA
 * process of the same run (a subprocess that inherited the environment)
 * writes PATH.PID instead of overwriting the first one's trace; the summary
 * names those files.  With -o DIR/ (a trailing slash) every CUDA
 * process writes DIR/rankR.bin (RANK/LOCAL_RANK) or DIR/pidP.bin, and the
 * summary and DIR/index.yaml say how each ended and which faulted first
 * (src/launch/capture-ranks.c, docs/MULTI-RANK.md).
 *
 * Nothing the user had is lost (safe-out.h): the library writes into a
 * private folder beside the -o file, and its files are moved into place
 * only when a trace was captured; an -o file that is not a trace is not
 * replaced without --force.
 *
 * Bounded capture (checkpoints, capture/checkpoint.c): the options become
 * GPUREDUCE_CKPT* variables for the library (src/launch/capture-ckpt.c), which
 * also draws the progress line on a terminal while the program runs.
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/child.h"
#include "../common/opts.h"
#include "../common/strbuf.h"
#include "../common/util.h"
#include "../addr/params.h"
#include "../trace/trace.h"
#include "launch/capture-ckpt.h"
#include "launch/capture-ranks.h"
#include "launch/capture-flight.h"
#include "launch/capture-tee.h"
#include "launch/capture-nvrtc.h"
#include "cmds.h"
#include "outputs/safe-out.h"

#define CAPTURE_LIB_NAME "libgpureduce-capture.so"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: gpureduce capture [-o trace.bin] [--allow-no-capture] [--checkpoint-every=SPEC]\n"
		"                         [--max-trace-bytes=B] [--no-checkpoint] [--flight-recorder[=BUDGET]]\n"
		"                         [--tensors] [--blocking=library|driver] [--force] [--] CMD [ARGS...]\n\n"
		"Run CMD under the CUPTI capture library and record every allocation, copy,\n"
		"memset and kernel launch (with its exact parameters) up to the first GPU\n"
		"fault into a trace.  Each launch is waited for (by the capture library, or\n"
		"with --blocking=driver by CUDA_LAUNCH_BLOCKING=1), so the faulting launch\n"
		"is the one that reports the fault.  Its exit status is passed on,\n"
		"but a run in which no process made a CUDA call (nothing captured) exits 4\n"
		"where CMD exited 0 (not with --allow-no-capture).\n\n"
		"options:\n"
		"  -o, --output FILE    trace to write (default trace.bin).  An existing FILE is\n"
		"                       replaced only once a new trace was captured, and only\n"
		"                       if it is a gpureduce trace (or with --force); further\n"
		"                       CUDA processes write FILE.rankR or FILE.PID beside it\n"
		"  -o DIR/              one trace per CUDA process (torchrun, mp.spawn): DIR/rankR.bin\n"
		"                       or DIR/pidP.bin, and DIR/index.yaml saying how each ended\n"
		"  --force              replace FILE even when it is not a gpureduce trace\n"
		"  --allow-no-capture   if CUPTI is taken by another tool (nsys, ncu,\n"
		"                       compute-sanitizer, torch.profiler), run CMD anyway\n"
		"                       without capturing instead of refusing\n"
		"  --checkpoint-every=SPEC\n"
		"                       snapshot every live allocation and drop the records\n"
		"                       before it, so the trace stays bounded: SPEC is\n"
		"                       comma-separated launches (10000), trace bytes since\n"
		"                       the last checkpoint (512M) or as a percentage of it\n"
		"                       (25%%), and seconds (10m); default auto: when the\n"
		"                       window reaches max(256 MiB, 50%% of the last one)\n"
		"  --max-trace-bytes=B  also checkpoint whenever the trace reaches B bytes\n"
		"  --no-checkpoint      keep every record (the trace grows with the run)\n"
		"  --flight-recorder[=BUDGET]\n"
		"                       always-on capture for long jobs: checkpoints keep the\n"
		"                       trace and the one being written within BUDGET bytes\n"
		"                       of disk (default 8G; docs/CAPTURE-COST.md)\n"
		"  --tensors            also record the blocks of PyTorch's caching allocator (one per\n"
		"                       tensor) inside each segment, read at every launch, for\n"
		"                       `shrink --root-cause` (slower: off by default)\n"
		"  --blocking=library|driver\n"
		"                       library (default): CMD runs with CUDA_LAUNCH_BLOCKING=0\n"
		"                       and the capture library waits for each launch, recording\n"
		"                       it while the kernel runs, its copies written by a thread;\n"
		"                       the faulting launch still returns the fault.  driver: CMD\n"
		"                       runs with CUDA_LAUNCH_BLOCKING=1, the driver waiting\n"
		"                       (slower on host-fed loops; docs/CAPTURE-COST.md)\n\n"
		"environment:\n"
		"  GPUREDUCE_CAPTURE_LIB  the capture library to use (default: next to gpureduce)\n"
		"  GPUREDUCE_PY_FRAMES    Python frames recorded per launch (default 8)\n"
		"  GPUREDUCE_BLOCKING     driver or library: as --blocking= (the option wins)\n"
		"  GPUREDUCE_WRITER_THREAD 1: copies' bytes compressed and written by a thread (on with\n"
		"                         --blocking=library, the default, unless 0)\n"
		"  GPUREDUCE_FOLD_KERNELS more communication kernels to fold like nccl* (comma-separated,\n"
		"                         NAME or PREFIX*; docs/MULTI-RANK.md)\n"
		"  GPUREDUCE_FOLD_MAX     bytes compared after each pointer of a folded kernel (default 256 MiB)\n"
		"  GPUREDUCE_NO_PROGRESS  no status line on a terminal\n");
}

/* Locate the capture library; 0 with its absolute path in lib, or -1 with err. */
static int find_lib(struct strbuf *lib, struct strbuf *err)
{
	const char *env = getenv("GPUREDUCE_CAPTURE_LIB");
	struct strbuf dir = STRBUF_INIT, cand = STRBUF_INIT;
	char real[PATH_MAX];
	int ret = -1;

	if (env && *env) {
		if (!realpath(env, real) || access(real, R_OK) < 0) {
			sb_addf(err, "GPUREDUCE_CAPTURE_LIB=%s: %s", env, strerror(errno));
			goto out;
		}
		sb_adds(lib, real);
		ret = 0;
		goto out;
	}
	path_dir(gpureduce_exe(), &dir);
	sb_addf(&cand, "%s/../lib/gpureduce/" CAPTURE_LIB_NAME, dir.buf);
	if (!realpath(cand.buf, real) || access(real, R_OK) < 0) {
		sb_reset(&cand);
		sb_addf(&cand, "%s/" CAPTURE_LIB_NAME, dir.buf);
		if (!realpath(cand.buf, real) || access(real, R_OK) < 0) {
			sb_addf(err, "cannot find " CAPTURE_LIB_NAME " (looked in %s/../lib/gpureduce and %s); "
				"reinstall gpureduce or set GPUREDUCE_CAPTURE_LIB", dir.buf, dir.buf);
			goto out;
		}
	}
	sb_adds(lib, real);
	ret = 0;
out:
	sb_release(&dir);
	sb_release(&cand);
	return ret;
}

/* Absolute form of path (not resolving links: the file need not exist). */
static void abs_path(const char *path, struct strbuf *out)
{
	char cwd[PATH_MAX];
	if (path[0] != '/' && getcwd(cwd, sizeof(cwd)))
		sb_addf(out, "%s/%s", cwd, path);
	else
		sb_adds(out, path);
}

struct status {
	int busy, cupti_error, trace_error, ok;
	int faulted;              /* a "fault" line: the program faulted (in the trace or not) */
	struct strbuf msg;        /* the error detail, first one */
	struct strbuf others;     /* traces of further CUDA processes, ", "-separated */
	struct strbuf write_err;  /* "byte N (why)": the trace's first failed write */
};

/* ", OUT was left as it was" when an old OUT exists */
static const char *keep_note(const char *path, const char *shown)
{
	static char note[600];
	struct stat sb;
	if (lstat(path, &sb) < 0)
		return "";
	snprintf(note, sizeof(note), "; %s was left as it was", shown);
	return note;
}

struct status_read {
	struct status *st;
	const char *main_trace, *stage, *final;
};

static void status_line(const struct cr_status_line *l, void *arg)
{
	struct status_read *r = arg;
	struct status *st = r->st;

	switch (l->kind) {
	case CR_ST_OK:
		st->ok++;
		if (strcmp(l->rest, r->main_trace)) {
			if (st->others.len)
				sb_adds(&st->others, ", ");
			safe_stage_rename(l->rest, r->stage, r->final, &st->others);
		}
		return;
	case CR_ST_FAULT:
		st->faulted = 1;
		return;
	case CR_ST_WRITE_ERROR:
		/* the library could not write on */
		if (!st->write_err.len)
			cr_write_error_text(l->rest, &st->write_err);
		return;
	case CR_ST_CUPTI_BUSY:
		st->busy = 1;
		break;
	case CR_ST_CUPTI_ERROR:
		st->cupti_error = 1;
		break;
	case CR_ST_TRACE_ERROR:
		st->trace_error = 1;
		break;
	default:
		return;
	}
	if (!st->msg.len)
		sb_adds(&st->msg, l->rest);
}

/* The library reports its paths inside the staging folder (stage); the
 * names given to the user are where they will be (beside final). */
static void read_status(const char *path, const char *main_trace, struct status *st,
			const char *stage, const char *final)
{
	struct status_read r = { st, main_trace, stage, final };

	cr_status_each(path, status_line, &r);
}

/* One line on what the trace holds; returns 0, or -1 if it could not be read. */
/* " from train.py:113 (GatherRows.forward)": the faulting launch's first
 * Python frame outside installed packages, else its innermost one. */
static void add_user_frame(struct strbuf *line, const struct trace *t, uint64_t seq)
{
	for (size_t i = t->nrec; i-- > 0;) {
		const struct tr_launch *l = &t->rec[i].u.launch;
		const struct tr_frame *pick = NULL;
		if (t->rec[i].type != TR_LAUNCH || l->seq != seq)
			continue;
		for (uint32_t k = 0; k < l->nframes && !pick; k++)
			if (!strstr(l->frames[k].file, "site-packages") &&
			    !strstr(l->frames[k].file, "dist-packages") &&
			    !strstr(l->frames[k].file, "/lib/python") && l->frames[k].file[0] != '<')
				pick = &l->frames[k];
		if (!pick && l->nframes)
			pick = &l->frames[0];
		if (pick)
			sb_addf(line, " from %s:%u (%s)", pick->file, pick->line, pick->func);
		return;
	}
}

static int summarize(const char *path, const char *shown, int status, const struct status *st)
{
	struct trace t = TRACE_INIT;
	struct strbuf err = STRBUF_INIT, line = STRBUF_INIT;
	uint64_t launches = 0, allocs = 0, h2d = 0, ck_vars = 0, vars = 0;
	int in_ck = 0;
	const struct tr_fault *fault = NULL;
	const struct tr_checkpoint *ck = NULL;
	const char *ck_note = NULL, *ck_cost = NULL, *tensors_off;
	int has_end = 0, ret = -1;
	char sbuf[48], b1[32], b2[32];

	if (trace_open(&t, path, 0, &err) < 0) {
		fprintf(stderr, "gpureduce capture: %s (kept for inspection)\n", err.buf);
		goto out;
	}
	for (size_t i = 0; i < t.nrec; i++) {
		const struct tr_rec *r = &t.rec[i];
		switch (r->type) {
		case TR_LAUNCH: launches++; break;
		case TR_ALLOC:
			allocs++;
			vars += in_ck && r->u.alloc.kind == TR_MEM_GLOBAL;   /* module variables (globals.c) */
			break;
		case TR_CHECKPOINT_BEGIN: in_ck = 1; vars = 0; break;
		case TR_MEMCPY_H2D:
			if (!(r->u.copy.flags & TR_F_CHECKPOINT))
				h2d += r->u.copy.size;
			break;
		case TR_CHECKPOINT_END: ck = &r->u.checkpoint; in_ck = 0; ck_vars = vars; break;
		case TR_NOTE:
			/* the last word on checkpoints that failed or fall short */
			if (!strncmp(r->u.note.text, "checkpoint ", 11) &&
			    (strstr(r->u.note.text, "was not taken") || strstr(r->u.note.text, "cannot be kept")))
				ck_note = r->u.note.text;
			if (!strncmp(r->u.note.text, "checkpoints: ", 13))
				ck_cost = r->u.note.text;
			break;
		case TR_FAULT: if (!fault) fault = &r->u.fault; break;
		case TR_END: has_end = 1; break;
		default: break;
		}
	}
	sb_addf(&line, "gpureduce: captured %llu launch%s, %llu allocation%s, %s (%s entered the GPU) -> %s",
		(unsigned long long)launches, launches == 1 ? "" : "es",
		(unsigned long long)allocs, allocs == 1 ? "" : "s",
		fmt_bytes(t.size, b1), fmt_bytes(h2d, b2), shown);
	if (fault && !strncmp(fault->api, "cuGraphLaunch", 13) && !(fault->kernel && *fault->kernel)) {
		sb_addf(&line, "; fault: %s in a kernel of a CUDA graph (reported by %s; replay and shrink name the kernel)",
			fault->error, fault->api);
		sb_addf(&line, " (%s)", child_status_str(status, sbuf));
	} else if (fault) {
		char *kname = params_demangle(fault->kernel && *fault->kernel ? fault->kernel :
					      "(no kernel launched)");
		sb_addf(&line, "; fault: %s in %s at launch #%llu", fault->error, kname,
			(unsigned long long)fault->launch_seq);
		free(kname);
		add_user_frame(&line, &t, fault->launch_seq);
		if (!fault->at_launch)
			sb_addf(&line, " (reported by %s)", fault->api);
		sb_addf(&line, " (%s)", child_status_str(status, sbuf));
	} else if (st->faulted && st->write_err.len) {
		sb_addf(&line, "; the program faulted after the trace ended, so the fault is not in it (%s)",
			child_status_str(status, sbuf));
	} else {
		sb_addf(&line, "; no fault (%s)", child_status_str(status, sbuf));
	}
	if (ck) {
		char b3[32];
		uint64_t n = ck->allocs >= ck_vars ? ck->allocs - ck_vars : ck->allocs;
		sb_addf(&line, "; from checkpoint %llu at launch #%llu (%llu live allocation%s",
			(unsigned long long)ck->id, (unsigned long long)ck->launch_seq,
			(unsigned long long)n, n == 1 ? "" : "s");
		if (ck_vars && n != ck->allocs)
			sb_addf(&line, " and %llu module variable%s", (unsigned long long)ck_vars,
				ck_vars == 1 ? "" : "s");
		sb_addf(&line, ", %s of device memory)", fmt_bytes(ck->bytes, b3));
	}
	if (st->write_err.len)   /* why it ends early, before what the reader saw */
		sb_addf(&line, "; the trace could not be written past %s and ends there: free space "
			"(or bound it: --flight-recorder=BUDGET) and capture again", st->write_err.buf);
	if (t.truncated)
		sb_addf(&line, "; trace truncated: %s", t.truncated_msg);
	else if (!trace_complete(&t))
		sb_addf(&line, "; incomplete: %s", TRACE_INCOMPLETE_MSG);
	else if (!has_end)
		sb_adds(&line, "; no end record (the program was killed or left through _exit)");
	if (st->others.len)
		sb_addf(&line, "; other CUDA processes wrote %s", st->others.buf);
	fprintf(stderr, "%s\n", line.buf);
	if (ck_cost)
		fprintf(stderr, "gpureduce: %s\n", ck_cost);
	if (ck_note)
		fprintf(stderr, "gpureduce: warning: %s\n", ck_note);
	/* --tensors that could not read the allocator (a fault's trace says
	 * so below, with what else it lacks) */
	if (!fault && (tensors_off = trace_tensors_off_note(&t)))
		fprintf(stderr, "gpureduce: warning: %s\n", tensors_off);
	{
		/* what replay will lack, said now rather than when a shrink fails */
		struct strbuf lacks = STRBUF_INIT;
		if (fault && trace_unrecorded_notes(&t, "gpureduce: note: the trace lacks what capture could not "
						     "record, which replay may need: ", 3, &lacks))
			fprintf(stderr, "%s\n", lacks.buf);
		sb_release(&lacks);
	}
	ret = 0;
out:
	trace_release(&t);
	sb_release(&err);
	sb_release(&line);
	return ret;
}

/* SIGTERM and SIGHUP while the program runs (a scheduler ending the job, a
 * closed terminal): passed on to the program, and capture stays to publish
 * its trace and report; dying at once would strand the trace in the staging
 * folder, where the user does not look for it. */
static volatile pid_t g_child;

static void forward_signal(int sig)
{
	if (g_child > 0)
		kill(g_child, sig);
}

/* Nothing was captured: the program's own failure, or 4 where it exited 0
 * (a command that is not a CUDA program is not a capture), unless
 * --allow-no-capture asked to run it whatever came of capturing. */
static int nothing_captured(int status, int allow)
{
	return status || allow ? status : EXIT_ENV;
}

/* -o DIR/: the per-process traces, their index and the first fault; the
 * exit status (the program's, or nothing_captured's). */
static int report_multi(const struct status *st, const char *status_path, const char *dir,
			const char *out, char **argv, int status, int allow)
{
	int ret = status;
	struct cr_run run = CR_RUN_INIT;
	struct strbuf base = STRBUF_INIT, err = STRBUF_INIT, shown = STRBUF_INIT;
	const struct status none = { 0, 0, 0, 0, 0, STRBUF_INIT, STRBUF_INIT, STRBUF_INIT };

	sb_adds(&base, out);
	while (base.len > 1 && base.buf[base.len - 1] == '/')
		base.buf[--base.len] = 0;
	cr_read_status(status_path, &run);
	if (!run.n) {
		fprintf(stderr, "gpureduce: %s made no CUDA calls (or the capture library was not "
			"loaded); nothing captured in %s\n", argv[0], out);
		ret = nothing_captured(status, allow);
		goto out;
	}
	cr_examine(&run);
	if (run.first >= 0) {
		const char *b = strrchr(run.p[run.first].path, '/');
		sb_addf(&shown, "%s/%s", base.buf, b ? b + 1 : run.p[run.first].path);
		summarize(run.p[run.first].path, shown.buf, status, &none);
	}
	cr_print(&run, dir, base.buf);
	if (cr_write_index(&run, dir, argv, status, &err) < 0)
		fprintf(stderr, "gpureduce: capture: cannot write the index: %s\n", err.buf);
	else
		fprintf(stderr, "gpureduce: index of the traces: %s/index.yaml\n", base.buf);
	(void)st;
out:
	cr_release(&run);
	sb_release(&base);
	sb_release(&err);
	sb_release(&shown);
	return ret;
}

int cmd_capture(int argc, char **argv)
{
	const char *out = "trace.bin";
	int allow = 0, tensors = 0, force = 0, every_given = 0, i, ret = EXIT_INTERNAL, status, fd;
	struct strbuf lib = STRBUF_INIT, err = STRBUF_INIT, trace = STRBUF_INIT, dir = STRBUF_INIT;
	struct strbuf stage = STRBUF_INIT, staged = STRBUF_INIT;   /* safe-out.h */
	struct strbuf e_inj = STRBUF_INIT, e_trace = STRBUF_INIT, e_status = STRBUF_INIT;
	struct status st = { 0, 0, 0, 0, 0, STRBUF_INIT, STRBUF_INIT, STRBUF_INIT };
	struct strbuf status_path = STRBUF_INIT, progress_path = STRBUF_INIT, e_progress = STRBUF_INIT;
	struct strbuf e_ckpt[6] = { STRBUF_INIT, STRBUF_INIT, STRBUF_INIT, STRBUF_INIT, STRBUF_INIT,
				    STRBUF_INIT };
	struct ckpt_opts ck = { 0, 0, 0, 0, 0, 0 };
	struct ckpt_opts flight = { 0, 0, 0, 0, 0, 0 };
	int flight_on = 0, ck_given = 0;
	const char *tmpdir = getenv("TMPDIR");
	const char *env[18];
	const char *inj;
	const char *blk = getenv("GPUREDUCE_BLOCKING");
	int libsync = !(blk && !strcmp(blk, "driver"));   /* library by default (issue 26) */
	struct child c = CHILD_INIT;
	struct opts op;
	struct strbuf perr = STRBUF_INIT;
	const char *val = NULL;
	struct stat sbuf;
	struct sigaction ign, fwd, old_int, old_quit, old_term, old_hup;
	int have_status = 0, multi = 0, have_tee = 0;
	struct strbuf e_preload = STRBUF_INIT, e_nvlog = STRBUF_INIT;
	struct tee tee;

	/* options end at "--" or at the command's first word */
	opts_init(&op, argc, argv, &err);
	i = argc;
	while (opts_next(&op)) {
		const char *a = op.arg;
		if (opts_end(&op)) {
			i = op.next;
			break;
		} else if (is_help(a)) {
			usage(stdout);
			ret = EXIT_OK;
			goto out;
		} else if (opts_str(&op, "-o|--output", &out)) {
		} else if (opts_flag(&op, "--allow-no-capture")) {
			allow = 1;
		} else if (opts_str(&op, "--checkpoint-every", &val)) {
			uint64_t keep = ck.max_bytes;
			every_given = 1;
			ck_given = 1;
			if (!op.failed && ckpt_parse_every(val, &ck, &perr) < 0)
				opts_fail(&op, "%s", perr.buf);
			ck.max_bytes = keep;
		} else if (opts_str(&op, "--max-trace-bytes", &val)) {
			ck_given = 1;
			if (!op.failed && ckpt_parse_bytes("--max-trace-bytes", val, &ck.max_bytes, &perr) < 0)
				opts_fail(&op, "%s", perr.buf);
		} else if (opts_flag(&op, "--no-checkpoint")) {
			ck.off = 1;
			ck_given = 1;
		} else if (!strncmp(a, "--flight-recorder=", 18) ? opts_str(&op, "--flight-recorder", &val)
			   : opts_flag(&op, "--flight-recorder") && ((val = NULL), 1)) {
			if (!op.failed && flight_policy(val, &flight, &perr) < 0)
				opts_fail(&op, "%s", perr.buf);
			flight_on = 1;
		} else if (opts_flag(&op, "--tensors")) {
			tensors = 1;
		} else if (opts_str(&op, "--blocking", &val)) {
			if (!op.failed && strcmp(val, "library") && strcmp(val, "driver"))
				opts_fail(&op, "--blocking=%s: say library (the capture library waits for each "
					  "launch, the default) or driver (CUDA_LAUNCH_BLOCKING=1)", val);
			else if (!op.failed)
				libsync = !strcmp(val, "library");
		} else if (opts_flag(&op, "--force")) {
			force = 1;
		} else if (opts_unknown(&op)) {
		} else {
			i = op.i;   /* the command starts here */
			break;
		}
	}
	if (!op.failed && ck.off && (every_given || ck.max_bytes))
		opts_fail(&op, "--no-checkpoint keeps every record: it cannot go with --%s",
			  every_given ? "checkpoint-every" : "max-trace-bytes");
	if (!op.failed && flight_on && ck_given)
		opts_fail(&op, "--flight-recorder chooses the checkpoints itself: not with --checkpoint-every, "
			  "--max-trace-bytes or --no-checkpoint");
	if (flight_on)
		ck = flight;
	if (op.failed) {
		cmd_error("capture", "%s; see 'gpureduce capture --help'", err.buf);
		ret = EXIT_USAGE;
		goto out;
	}
	if (i >= argc) {
		usage(stderr);
		ret = EXIT_USAGE;
		goto out;
	}
	if (!*out) {
		cmd_error("capture", "the output file name is empty");
		ret = EXIT_USAGE;
		goto out;
	}

	if (find_lib(&lib, &err) < 0) {
		cmd_error("capture", "%s", err.buf);
		ret = EXIT_ENV;
		goto out;
	}
	inj = getenv("CUDA_INJECTION64_PATH");
	if (inj && *inj) {
		char real[PATH_MAX];
		if (!realpath(inj, real) || strcmp(real, lib.buf)) {
			cmd_error("capture", "CUDA_INJECTION64_PATH is already set (%s): another tool is "
				  "injecting into CUDA programs; unset it to capture", inj);
			ret = EXIT_ENV;
			goto out;
		}
	}

	abs_path(out, &trace);
	multi = out[strlen(out) - 1] == '/';   /* an existing directory without '/' stays an error */
	if (multi) {
		/* -o DIR/: one trace per process inside it (issue 25) */
		while (trace.len > 1 && trace.buf[trace.len - 1] == '/')
			trace.buf[--trace.len] = 0;
		if (mkdir(trace.buf, 0777) < 0 && errno != EEXIST) {
			cmd_error("capture", "cannot create directory %s: %s", out, strerror(errno));
			ret = EXIT_INPUT;
			goto out;
		}
		cr_clear_old(trace.buf);   /* the traces of an earlier capture into it */
		sb_adds(&dir, trace.buf);
	} else {
		path_dir(trace.buf, &dir);
	}
	if (stat(dir.buf, &sbuf) < 0 || !S_ISDIR(sbuf.st_mode) || access(dir.buf, W_OK | X_OK) < 0) {
		cmd_error("capture", "cannot write %s: directory %s %s", out, dir.buf,
			  stat(dir.buf, &sbuf) < 0 ? "does not exist" : "is not writable");
		ret = EXIT_INPUT;
		goto out;
	}
	if (flight_on) {
		sb_reset(&err);
		flight_check_space(dir.buf, &flight, &err);
		if (err.len)
			fprintf(stderr, "gpureduce: warning: %s\n", err.buf);
		sb_reset(&err);
	}
	/* the old -o file stays untouched until a trace exists to replace it
	 * (-o DIR/: the traces an earlier index listed were cleared above) */
	if (!multi) {
		if ((fd = safe_may_replace(trace.buf, "the trace", 1, force, &err)) < 0) {
			cmd_error("capture", "%s", err.buf);
			ret = fd == -2 ? EXIT_INPUT : EXIT_USAGE;
			goto out;
		}
		if (safe_stage_open(trace.buf, &stage, &staged, &err) < 0) {
			cmd_error("capture", "%s", err.buf);
			ret = EXIT_INPUT;
			goto out;
		}
	}
	sb_addf(&status_path, "%s/gpureduce-status-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
	fd = mkstemp(status_path.buf);
	if (fd < 0) {
		cmd_error("capture", "cannot create a status file %s: %s", status_path.buf, strerror(errno));
		ret = EXIT_ENV;
		goto out;
	}
	close(fd);
	have_status = 1;
	sb_addf(&progress_path, "%s.progress", status_path.buf);

	sb_addf(&e_inj, "CUDA_INJECTION64_PATH=%s", lib.buf);
	if (multi)
		sb_addf(&e_trace, "GPUREDUCE_TRACE=%s/", trace.buf);
	else
		sb_addf(&e_trace, "GPUREDUCE_TRACE=%s", staged.buf);
	sb_addf(&e_status, "GPUREDUCE_STATUS=%s", status_path.buf);
	env[0] = e_inj.buf;
	/* --blocking=library (GPUREDUCE_BLOCKING=library for the library): it
	 * waits for each launch itself, the driver launching asynchronously */
	env[1] = libsync ? "CUDA_LAUNCH_BLOCKING=0" : "CUDA_LAUNCH_BLOCKING=1";
	env[2] = e_trace.buf;
	env[3] = e_status.buf;
	env[4] = allow ? "GPUREDUCE_ALLOW_NO_CAPTURE=1" : "GPUREDUCE_ALLOW_NO_CAPTURE";
	sb_addf(&e_progress, "GPUREDUCE_PROGRESS=%s", progress_path.buf);
	ckpt_env(&ck, e_ckpt);
	env[5] = e_progress.buf;
	for (int k = 0; k < 6; k++)
		env[6 + k] = e_ckpt[k].buf;
	env[12] = tensors ? "GPUREDUCE_TENSORS=1" : "GPUREDUCE_TENSORS";   /* issue 17 */
	env[13] = libsync ? "GPUREDUCE_BLOCKING=library" : "GPUREDUCE_BLOCKING";
	env[14] = NULL;
	if (nvrtc_env(lib.buf, multi ? trace.buf : staged.buf, &e_preload, &e_nvlog)) {   /* issue 24: NVRTC sources */
		env[14] = e_preload.buf;
		env[15] = e_nvlog.buf;
		env[16] = NULL;
	}

	have_tee = tee_begin(&tee) == 0;   /* issue 24: the program's stderr tail (capture-tee.c) */
	fd = child_start(&c, argv + i, env, 0, &err);
	tee_started(&tee);
	if (fd < 0) {
		cmd_error("capture", "%s", err.buf);
		ret = 127;
		goto out;
	}
	/* Like a shell waiting for its foreground job: ^C and ^\ go to the
	 * program (same process group); we stay to report what was captured.
	 * SIGTERM and SIGHUP are passed on to it (forward_signal). */
	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	sigaction(SIGINT, &ign, &old_int);
	sigaction(SIGQUIT, &ign, &old_quit);
	memset(&fwd, 0, sizeof(fwd));
	fwd.sa_handler = forward_signal;
	fwd.sa_flags = SA_RESTART;
	g_child = c.pid;
	sigaction(SIGTERM, &fwd, &old_term);
	sigaction(SIGHUP, &fwd, &old_hup);
	status = ckpt_wait(&c, staged.buf, progress_path.buf);
	g_child = 0;
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGQUIT, &old_quit, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGHUP, &old_hup, NULL);
	if (have_tee) {
		struct stat tst;
		have_tee = 0;
		/* -o DIR/: the streams are the job's, not one rank's: not appended */
		const char *tp = !multi && stat(staged.buf, &tst) == 0 &&
				 tst.st_size > TRACE_HEADER_SIZE ? staged.buf : NULL;
		if (tee_finish(&tee, tp, status, &perr) < 0)
			fprintf(stderr, "gpureduce: warning: %s\n", perr.buf);
		sb_reset(&perr);
		if (nvrtc_finish(multi ? trace.buf : staged.buf, tp != NULL, &perr) < 0)
			fprintf(stderr, "gpureduce: warning: %s\n", perr.buf);
	}
	if (status < 0) {
		cmd_error("capture", "lost track of %s: %s", argv[i], strerror(errno));
		ret = EXIT_INTERNAL;
		goto out;
	}

	read_status(status_path.buf, staged.buf, &st, stage.buf, trace.buf);
	if ((st.busy || st.cupti_error) && !st.ok) {
		if (allow) {
			fprintf(stderr, "gpureduce: CUPTI %s (%s); %s ran without capture\n",
				st.busy ? "is in use by another tool" : "could not be initialised",
				st.msg.buf, argv[i]);
			ret = status;
		} else {
			cmd_error("capture", "%s (%s): run it outside nsys, ncu, compute-sanitizer "
				  "and torch.profiler, or pass --allow-no-capture",
				  st.busy ? "CUPTI is already in use by another tool" :
				  "CUPTI could not be initialised", st.msg.buf);
			ret = EXIT_ENV;
		}
		goto out;
	}
	if (st.trace_error && !st.ok) {
		cmd_error("capture", "the capture library could not write the trace: %s", st.msg.buf);
		ret = allow ? status : EXIT_ENV;
		goto out;
	}

	ret = status;
	if (!multi && ckpt_clean_next(staged.buf))
		fprintf(stderr, "gpureduce: %s died while writing a checkpoint; %s holds the one before "
			"it, whole (the incomplete %s.next was removed)\n", argv[i], out, out);
	if (multi) {
		ret = report_multi(&st, status_path.buf, trace.buf, out, argv + i, status, allow);
		goto out;
	}
	if (stat(staged.buf, &sbuf) < 0) {
		fprintf(stderr, "gpureduce: %s made no CUDA calls (or the capture library was not "
			"loaded); nothing captured%s\n", argv[i], keep_note(trace.buf, out));
		ret = nothing_captured(status, allow);
		goto out;
	}
	if (sbuf.st_size <= TRACE_HEADER_SIZE) {
		fprintf(stderr, "gpureduce: the trace was empty (%s died before capture started); "
			"nothing captured%s\n", argv[i], keep_note(trace.buf, out));
		goto out;
	}
	if (safe_stage_publish(stage.buf, trace.buf, &err) < 0) {
		cmd_error("capture", "%s", err.buf);
		sb_reset(&stage);   /* keep it: it holds the trace */
		ret = EXIT_ENV;
		goto out;
	}
	summarize(trace.buf, out, status, &st);
	if (st.ok > 1) {   /* a multi-process job into one FILE: which trace is which */
		struct cr_run run = CR_RUN_INIT;
		struct strbuf moved = STRBUF_INIT;
		size_t k;
		cr_read_status(status_path.buf, &run);
		for (k = 0; k < run.n; k++) {   /* the library named them in the staging folder */
			sb_reset(&moved);
			safe_stage_rename(run.p[k].path, stage.buf, trace.buf, &moved);
			free(run.p[k].path);
			run.p[k].path = xstrdup(moved.buf);
		}
		sb_release(&moved);
		cr_examine(&run);
		cr_print(&run, NULL, NULL);
		cr_release(&run);
	}
	sb_reset(&stage);
out:
	if (have_tee)
		tee_finish(&tee, NULL, -1, &perr);
	if (stage.len)
		safe_stage_drop(stage.buf);   /* nothing captured: the old file stays */
	sb_release(&stage);
	sb_release(&staged);
	if (have_status) {
		unlink(status_path.buf);
		unlink(progress_path.buf);
	}
	sb_release(&status_path);
	sb_release(&progress_path);
	sb_release(&e_preload);
	sb_release(&e_nvlog);
	sb_release(&perr);
	sb_release(&e_progress);
	for (int k = 0; k < 6; k++)
		sb_release(&e_ckpt[k]);
	sb_release(&lib);
	sb_release(&err);
	sb_release(&trace);
	sb_release(&dir);
	sb_release(&e_inj);
	sb_release(&e_trace);
	sb_release(&e_status);
	sb_release(&st.msg);
	sb_release(&st.others);
	sb_release(&st.write_err);
	return ret;
}
