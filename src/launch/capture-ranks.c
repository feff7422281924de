/*
 * capture-ranks.c - the CUDA processes of one `gpureduce capture` run
 * (see capture-ranks.h).  Multi-process jobs (torchrun, mp.spawn, DataLoader
 * workers) give one trace per CUDA process; this file tells the user which
 * one to shrink: it classifies how each process ended (faulted, killed or
 * exited after another rank's fault, clean, launched nothing), names the one
 * that faulted first by the wall-clock time the library reported at its
 * fault, prints the exact shrink command and writes DIR/index.yaml.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../common/child.h"
#include "../../common/strbuf.h"
#include "../../common/util.h"
#include "../../common/yamlout.h"
#include "../../addr/params.h"
#include "../../trace/trace.h"
#include "capture-ranks.h"

static struct cr_proc *proc_of(struct cr_run *run, int pid)
{
	struct cr_proc *p;

	for (size_t i = 0; i < run->n; i++)
		if (run->p[i].pid == pid)
			return &run->p[i];
	run->p = xrealloc(run->p, (run->n + 1) * sizeof(*run->p));
	p = &run->p[run->n++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->exit_code = -1;
	p->end = CR_UNREADABLE;
	return p;
}

int cr_write_error_text(const char *offset_why, struct strbuf *out)
{
	const char *why = strchr(offset_why, ' ');
	if (!why)
		return -1;
	sb_addf(out, "byte %.*s (%s)", (int)(why - offset_why), offset_why, why + 1);
	return 0;
}

int cr_status_each(const char *status_path,
		   void (*fn)(const struct cr_status_line *l, void *arg), void *arg)
{
	static const struct { const char *word; enum cr_status_kind kind; int has_pid; } kinds[] = {
		{ "ok ", CR_ST_OK, 1 }, { "rank ", CR_ST_RANK, 1 }, { "fault ", CR_ST_FAULT, 1 },
		{ "write-error ", CR_ST_WRITE_ERROR, 1 }, { "cupti-busy ", CR_ST_CUPTI_BUSY, 0 },
		{ "cupti-error ", CR_ST_CUPTI_ERROR, 0 }, { "trace-error ", CR_ST_TRACE_ERROR, 0 },
	};
	struct strbuf sb = STRBUF_INIT, err = STRBUF_INIT;
	char *line, *save = NULL;
	int ret = -1;

	if (read_file(status_path, &sb, &err) < 0)
		goto out;
	for (line = strtok_r(sb.buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		struct cr_status_line l;
		size_t k;
		for (k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
			if (!strncmp(line, kinds[k].word, strlen(kinds[k].word)))
				break;
		if (k == sizeof(kinds) / sizeof(kinds[0]))
			continue;
		l.kind = kinds[k].kind;
		l.pid = 0;
		l.rest = line + strlen(kinds[k].word);
		if (kinds[k].has_pid) {
			char *end = NULL;
			l.pid = strtol(l.rest, &end, 10);
			if (l.pid <= 0 || !end || *end != ' ')
				continue;
			l.rest = end + 1;
		}
		fn(&l, arg);
	}
	ret = 0;
out:
	sb_release(&sb);
	sb_release(&err);
	return ret;
}

static void add_status_line(const struct cr_status_line *l, void *arg)
{
	struct cr_run *run = arg;
	struct cr_proc *p;

	if (!l->pid)
		return;
	p = proc_of(run, (int)l->pid);
	switch (l->kind) {
	case CR_ST_OK:
		free(p->path);
		p->path = xstrdup(l->rest);
		break;
	case CR_ST_RANK:
		snprintf(p->rank, sizeof(p->rank), "%s", l->rest);
		break;
	case CR_ST_FAULT:
		if (!p->fault_ns)
			p->fault_ns = strtoull(l->rest, NULL, 10);
		break;
	case CR_ST_WRITE_ERROR:
		if (!p->write_err) {
			struct strbuf w = STRBUF_INIT;
			if (cr_write_error_text(l->rest, &w) == 0)
				p->write_err = sb_detach(&w, NULL);
			sb_release(&w);
		}
		break;
	default:
		break;
	}
}

void cr_read_status(const char *status_path, struct cr_run *run)
{
	cr_status_each(status_path, add_status_line, run);
	/* a "rank" or "fault" line without "ok": not a trace of ours */
	for (size_t i = 0; i < run->n;) {
		if (!run->p[i].path) {
			run->p[i] = run->p[--run->n];
			continue;
		}
		i++;
	}
}

static void examine_one(struct cr_proc *p)
{
	struct trace t = TRACE_INIT;
	struct strbuf err = STRBUF_INIT;
	const struct tr_fault *f = NULL;
	const struct tr_end *e = NULL;

	if (trace_open(&t, p->path, 0, &err) < 0)
		goto out;
	for (size_t i = 0; i < t.nrec; i++) {
		const struct tr_rec *r = &t.rec[i];
		if (r->type == TR_LAUNCH) {
			p->launches++;
			p->folded += !!(r->u.launch.flags & TR_F_FOLDED);
		} else if (r->type == TR_FAULT && !f) {
			f = &r->u.fault;
		} else if (r->type == TR_END) {
			e = &r->u.end;
		}
	}
	if (f) {
		p->end = CR_FAULTED;
		p->error = xstrdup(f->error ? f->error : "?");
		p->kernel = xstrdup(f->kernel && *f->kernel ? f->kernel : "(a kernel of a CUDA graph)");
		p->fault_seq = f->launch_seq;
		if (!p->fault_ns)
			p->fault_ns = UINT64_MAX - 1;   /* faulted, time unknown: after any known */
	} else if (!p->launches && (e || !p->rank[0])) {
		/* a rank killed before its first records reached the disk (the
		 * buffered writer flushes every GPUREDUCE_FLUSH_MS) is killed, not idle */
		p->end = CR_IDLE;
	} else if (!e) {
		p->end = CR_KILLED;
	} else {
		p->exit_code = e->exit_code;
		p->end = e->exit_code == 0 ? CR_CLEAN : CR_EXITED;
	}
out:
	trace_release(&t);
	sb_release(&err);
}

static int by_rank(const void *x, const void *y)
{
	const struct cr_proc *a = x, *b = y;
	if (!*a->rank != !*b->rank)
		return *a->rank ? -1 : 1;
	if (*a->rank && atol(a->rank) != atol(b->rank))
		return atol(a->rank) < atol(b->rank) ? -1 : 1;
	return a->pid < b->pid ? -1 : a->pid > b->pid;
}

void cr_examine(struct cr_run *run)
{
	if (run->n > 1)
		qsort(run->p, run->n, sizeof(*run->p), by_rank);
	run->first = -1;
	for (size_t i = 0; i < run->n; i++) {
		examine_one(&run->p[i]);
		if (run->p[i].end == CR_FAULTED &&
		    (run->first < 0 || run->p[i].fault_ns < run->p[run->first].fault_ns))
			run->first = (long)i;
	}
}

/* "rank 1" or "pid 4242". */
static void who(const struct cr_proc *p, struct strbuf *sb)
{
	if (*p->rank)
		sb_addf(sb, "rank %s", p->rank);
	else
		sb_addf(sb, "pid %d", p->pid);
}

/* The trace's path as the user should type it. */
static void shown(const char *path, const char *dir, const char *base, struct strbuf *sb)
{
	char cwd[4096];
	size_t n = dir ? strlen(dir) : 0;

	if (dir && base && !strncmp(path, dir, n) && path[n] == '/') {
		sb_addf(sb, "%s/%s", base, path + n + 1);
		return;
	}
	n = getcwd(cwd, sizeof(cwd)) ? strlen(cwd) : 0;
	if (n && !strncmp(path, cwd, n) && path[n] == '/')
		sb_adds(sb, path + n + 1);
	else
		sb_adds(sb, path);
}

static void end_text(const struct cr_run *run, const struct cr_proc *p, struct strbuf *sb)
{
	const struct cr_proc *first = run->first >= 0 ? &run->p[run->first] : NULL;
	struct strbuf w = STRBUF_INIT;

	if (first && first != p)
		who(first, &w);
	if (p->write_err && p->end != CR_FAULTED) {
		/* no END or FAULT record: it did not stop there, its trace did */
		sb_addf(sb, "its trace could not be written past %s and ends there%s", p->write_err,
			p->fault_ns ? "; it faulted after that (the fault is not in the trace)" : "");
		sb_release(&w);
		return;
	}
	switch (p->end) {
	case CR_FAULTED: {
		char *kname = params_demangle(p->kernel);   /* index.yaml keeps the mangled one */
		sb_addf(sb, "faulted: %s in %s at launch #%llu%s", p->error, kname,
			(unsigned long long)p->fault_seq, first == p && run->n > 1 ? " (first)" : "");
		free(kname);
		break;
	}
	case CR_CLEAN: sb_adds(sb, "clean (exit 0)"); break;
	case CR_EXITED:
		sb_addf(sb, "exited %d%s%s", p->exit_code, w.len ? " after the fault of " : "", w.buf);
		break;
	case CR_KILLED:
		if (w.len)
			sb_addf(sb, "killed after the fault of %s (ended by the job, not a fault of its own)", w.buf);
		else
			sb_adds(sb, "killed (no end record)");
		break;
	case CR_IDLE: sb_adds(sb, "launched nothing (initialised CUDA only: a launcher, not a rank)"); break;
	case CR_UNREADABLE: sb_adds(sb, "unreadable trace"); break;
	}
	sb_release(&w);
}

void cr_print(const struct cr_run *run, const char *dir, const char *show_base)
{
	struct strbuf sb = STRBUF_INIT, path = STRBUF_INIT;

	fprintf(stderr, "gpureduce: %zu CUDA process%s, one trace each:\n", run->n, run->n == 1 ? "" : "es");
	for (size_t i = 0; i < run->n; i++) {
		const struct cr_proc *p = &run->p[i];
		sb_reset(&sb);
		sb_reset(&path);
		who(p, &sb);
		if (*p->rank)
			sb_addf(&sb, " (pid %d)", p->pid);
		shown(p->path, dir, show_base, &path);
		sb_addf(&sb, ": %s: %llu launch%s", path.buf, (unsigned long long)p->launches,
			p->launches == 1 ? "" : "es");
		if (p->folded)
			sb_addf(&sb, " (%llu communication kernel%s folded)", (unsigned long long)p->folded,
				p->folded == 1 ? "" : "s");
		sb_adds(&sb, ", ");
		end_text(run, p, &sb);
		fprintf(stderr, "  %s\n", sb.buf);
	}
	if (run->first >= 0) {
		const struct cr_proc *p = &run->p[run->first];
		struct strbuf out = STRBUF_INIT;
		sb_reset(&sb);
		sb_reset(&path);
		who(p, &sb);
		shown(p->path, dir, show_base, &path);
		sb_addf(&out, "%s", path.buf);
		if (out.len > 4 && !strcmp(out.buf + out.len - 4, ".bin"))
			out.len -= 4, out.buf[out.len] = 0;
		fprintf(stderr, "gpureduce: %s faulted first; reduce it with:\n  gpureduce shrink -o %s-repro/repro.cu %s\n",
			sb.buf, out.buf, path.buf);
		sb_release(&out);
	}
	sb_release(&sb);
	sb_release(&path);
}

static const char *end_word(enum cr_end e)
{
	static const char *const w[] = { "faulted", "clean", "exited", "killed", "launched-nothing", "unreadable" };
	return w[e];
}

int cr_write_index(const struct cr_run *run, const char *dir, char **argv, int status, struct strbuf *err)
{
	struct strbuf path = STRBUF_INIT;
	struct yout y;
	char *text = NULL, sbuf[48];
	size_t len = 0;
	FILE *f;
	int ret = -1;

	/* made in memory, then written whole: an earlier index stays as it
	 * was when this one cannot be written */
	sb_addf(&path, "%s/index.yaml", dir);
	f = open_memstream(&text, &len);
	if (!f) {
		sb_addf(err, "%s: cannot write: %s", path.buf, strerror(errno));
		goto out;
	}
	fprintf(f, "# gpureduce capture: one trace per CUDA process (docs/MULTI-RANK.md)\n");
	if (yo_open(&y, f, err) < 0) {
		fclose(f);
		goto out;
	}
	yo_map_start(&y, 0);
	yo_key(&y, "command");
	yo_seq_start(&y, 1);
	for (char **a = argv; *a; a++)
		yo_str(&y, *a);
	yo_seq_end(&y);
	yo_kv_str(&y, "status", child_status_str(status, sbuf));
	if (run->first >= 0) {
		const struct cr_proc *p = &run->p[run->first];
		const char *b = strrchr(p->path, '/');
		yo_kv_str(&y, "first_fault", b ? b + 1 : p->path);
		if (*p->rank)
			yo_kv_str(&y, "first_fault_rank", p->rank);
	}
	yo_key(&y, "processes");
	yo_seq_start(&y, 0);
	for (size_t i = 0; i < run->n; i++) {
		const struct cr_proc *p = &run->p[i];
		const char *b = strrchr(p->path, '/');
		yo_map_start(&y, 0);
		yo_kv_str(&y, "trace", b ? b + 1 : p->path);
		yo_kv_u64(&y, "pid", (uint64_t)p->pid);
		if (*p->rank)
			yo_kv_str(&y, "rank", p->rank);
		yo_kv_str(&y, "end", end_word(p->end));
		if (p->end == CR_EXITED)
			yo_kv_i64(&y, "exit_code", p->exit_code);
		yo_kv_u64(&y, "launches", p->launches);
		yo_kv_u64(&y, "folded", p->folded);
		if (p->end == CR_FAULTED) {
			yo_kv_str(&y, "error", p->error);
			yo_kv_str(&y, "kernel", p->kernel);
			yo_kv_u64(&y, "launch", p->fault_seq);
		}
		if (p->write_err)
			yo_kv_str(&y, "write_error", p->write_err);
		yo_map_end(&y);
	}
	yo_seq_end(&y);
	yo_map_end(&y);
	if (yo_close(&y, err) < 0) {
		fclose(f);
		goto out;
	}
	if (fclose(f) != 0) {
		sb_addf(err, "%s: cannot write: %s", path.buf, strerror(errno));
		goto out;
	}
	ret = write_file_whole(path.buf, text, len, err);
out:
	free(text);
	sb_release(&path);
	return ret;
}

void cr_clear_old(const char *dir)
{
	struct strbuf path = STRBUF_INIT, sb = STRBUF_INIT, err = STRBUF_INIT, f = STRBUF_INIT;
	char *line, *save = NULL;

	sb_addf(&path, "%s/index.yaml", dir);
	if (read_file(path.buf, &sb, &err) < 0)
		goto out;
	for (line = strtok_r(sb.buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		const char *v = strstr(line, "trace: ");
		if (!v || strncmp(line, "- ", 2) || v != line + 2)
			continue;
		v += 7;
		/* only names the library gives: rankR[.pidP].bin, pidP.bin */
		if (strchr(v, '/') || (strncmp(v, "rank", 4) && strncmp(v, "pid", 3)) ||
		    strlen(v) < 5 || strcmp(v + strlen(v) - 4, ".bin"))
			continue;
		sb_reset(&f);
		sb_addf(&f, "%s/%s", dir, v);
		unlink(f.buf);
	}
	unlink(path.buf);
out:
	sb_release(&path);
	sb_release(&sb);
	sb_release(&err);
	sb_release(&f);
}

void cr_release(struct cr_run *run)
{
	for (size_t i = 0; i < run->n; i++) {
		free(run->p[i].path);
		free(run->p[i].error);
		free(run->p[i].kernel);
		free(run->p[i].write_err);
	}
	free(run->p);
	run->p = NULL;
	run->n = 0;
	run->first = -1;
}
