/*
 * pool.c - warm replay workers (see pool.h).
 *
 * Each worker is a child with a request pipe (its stdin) and a reply pipe
 * (its stdout, line protocol in replay/proto.h).  pool_run() hands jobs to
 * READY workers and poll()s the reply pipes; a worker that faults, crashes
 * or times out is reaped and a new one is started immediately so its
 * context creation (~0.2 s) overlaps other work.
 *
 * A worker that is stopped (fault, crash, time limit) is killed and left
 * to die on its own, so that the pool does not wait on each in turn while
 * the driver tears its context down.  The dying are reaped as they end
 * (reap_dying) and, at the latest, by pool_release.  (On the H200 this
 * changed shrink's seconds by nothing measurable: what a faulting
 * candidate costs is its replacement's context, created one after
 * another with the others', ~0.3 s; docs/RESULTS.md, 2026-12-04.)
 *
 * At most START_AT_ONCE workers start at a time.  On the H200, one replay
 * process took 0.42 s and eight started together 2.5 s: context creation
 * is served one after another, so starting all workers at once only made
 * the first one ready late (the confirm phase's two runs waited ~2 s).
 * Four at a time made 14 shrinks slower, every one (median 5.41 s against
 * 4.74; H200, docs/RESULTS.md 2026-12-06).
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/child.h"
#include "../common/interrupt.h"
#include "../common/strbuf.h"
#include "../common/util.h"
#include "devsel.h"
#include "proto.h"
#include "pool.h"

enum { W_DOWN, W_STARTING, W_READY, W_BUSY };

#define START_AT_ONCE 2

/* GPUREDUCE_POOL_START_AT_ONCE=N (1 to 16): workers starting at a time,
 * to measure other widths side by side on a GPU; else START_AT_ONCE. */
static int start_at_once(void)
{
	static int n;
	if (!n) {
		const char *e = getenv("GPUREDUCE_POOL_START_AT_ONCE");
		int v = e && *e ? atoi(e) : 0;
		n = v >= 1 && v <= 16 ? v : START_AT_ONCE;
	}
	return n;
}

struct worker {
	struct child ch;
	int state;
	struct strbuf line;      /* partial reply line */
	long job;                /* index of the running job, -1 */
	double deadline;
	int device;
};

struct pool {
	struct worker *w;
	int n;                   /* workers, spares included */
	int max_busy;            /* jobs at once */
	int fresh;
	double timeout;
	int ndev;                /* devices to spread workers over */
	int ndev_fixed;          /* set by GPUREDUCE_DEVICES or _DEVICE, not learnt */
	int base;                /* first ordinal: GPUREDUCE_DEVICE, else 0 */
	int next_dev;
	char used[DEVSEL_MAX];   /* ordinals that had a ready worker */
	char config_err[256];    /* GPUREDUCE_DEVICES past what the driver reports */
	struct pool_stats st;
	char fatal[512];         /* last FATAL from a worker */
	int consecutive_fatal;
	double patience;         /* seconds to wait for workers to start again */
	double outage_since;     /* when three starts in a row failed; 0: none */
	double next_try, pause;
	struct child *dying;     /* killed workers not reaped yet */
	size_t ndying, dying_cap;
	int lazy;                /* pool_set_lazy: start workers only for waiting jobs */
};

/* GPUREDUCE_POOL_LOG=FILE: one line per worker start, ready, job sent,
 * result and stop, with seconds since the first pool of the process (to
 * see where a round of the reduction waits; docs/SHRINK-PHASES.md). */
static void plog(const struct pool *p, const struct worker *w, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void plog(const struct pool *p, const struct worker *w, const char *fmt, ...)
{
	static FILE *f;
	static int tried;
	static double t0;
	va_list ap;
	if (!tried) {
		const char *path = getenv("GPUREDUCE_POOL_LOG");
		tried = 1;
		t0 = now_sec();
		f = path && *path ? fopen(path, "a") : NULL;
	}
	if (!f)
		return;
	fprintf(f, "%8.3f w%-2d ", now_sec() - t0, w ? (int)(w - p->w) : -1);
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
	fflush(f);
}

static int worker_start(struct pool *p, struct worker *w, struct strbuf *err)
{
	char *argv[] = { (char *)self_exe(), PROTO_WORKER_CMD, NULL };
	char dev[64];
	const char *env[3] = { NULL, NULL, NULL };

	w->device = p->base + (p->ndev > 1 ? p->next_dev++ % p->ndev : 0);
	snprintf(dev, sizeof(dev), "GPUREDUCE_DEVICE=%d", w->device);
	env[0] = dev;
	env[1] = "CUDA_LAUNCH_BLOCKING=1";
	w->ch = (struct child)CHILD_INIT;
	if (child_start(&w->ch, argv, env, CHILD_PIPE_IN | CHILD_PIPE_OUT | CHILD_NEW_PGRP | CHILD_DIE_WITH_PARENT, err) < 0) {
		w->state = W_DOWN;
		return -1;
	}
	w->state = W_STARTING;
	plog(p, w, "start");
	w->deadline = now_sec() + 120;   /* creating a context should take well under a second */
	w->job = -1;
	sb_reset(&w->line);
	p->st.spawned++;
	return 0;
}

/* A worker failed to start (why: its FATAL line, or what was seen). */
static void start_failed(struct pool *p, const char *why)
{
	if (why)
		snprintf(p->fatal, sizeof(p->fatal), "%s", why);
	p->consecutive_fatal++;
	p->st.start_failures++;
}

/* After three failed starts in a row: 1 to wait (patience left; the next
 * try comes after a pause that doubles from 0.5 s to 8 s), 0 to try one
 * more start now, -1 to give up. */
static int outage_wait(struct pool *p)
{
	double now = now_sec();
	if (!p->outage_since) {
		p->outage_since = now;
		p->pause = 0.5;
		p->next_try = now + p->pause;
	}
	if (now - p->outage_since >= p->patience)
		return -1;
	if (now < p->next_try)
		return 1;
	p->pause = p->pause * 2 > 8 ? 8 : p->pause * 2;
	p->next_try = now + p->pause;
	p->consecutive_fatal = 2;   /* one more failure waits again */
	return 0;
}

/* Start down workers while fewer than start_at_once() are starting; a lazy
 * pool only as many as `waiting` jobs lack (ready and starting workers
 * count against them).  -1 when one could not be started, or three starts
 * in a row failed and the pool's patience ran out (err says why). */
static int start_some(struct pool *p, size_t waiting, struct strbuf *err)
{
	int starting = 0, ready = 0;
	for (int i = 0; i < p->n; i++) {
		starting += p->w[i].state == W_STARTING;
		ready += p->w[i].state == W_READY;
	}
	for (int i = 0; i < p->n && starting < start_at_once(); i++) {
		if (p->lazy && (size_t)(starting + ready) >= waiting)
			break;
		if (p->w[i].state != W_DOWN)
			continue;
		if (p->consecutive_fatal >= 3) {
			int w = outage_wait(p);
			if (w > 0)
				return 0;
			if (w < 0) {
				sb_addf(err, "replay workers cannot start: %s%s",
					p->fatal[0] ? p->fatal : "unknown reason",
					p->patience > 0 ? " (waited for them as long as --keep-going allows)" : "");
				return -1;
			}
		}
		if (worker_start(p, &p->w[i], err) < 0)
			return -1;
		starting++;
	}
	return 0;
}

/* Reap the children of c[0, n) that have ended, without waiting; the
 * others are moved to the front.  Returns how many are still going. */
static size_t reap_ended(struct child *c, size_t n)
{
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		int st;
		if (child_poll(&c[i], &st) == 0)
			c[k++] = c[i];   /* still going */
	}
	return k;
}

/* Reap the killed workers that have ended (all of them, waiting, when
 * `wait`). */
static void reap_dying(struct pool *p, int wait)
{
	if (!wait) {
		p->ndying = reap_ended(p->dying, p->ndying);
		return;
	}
	for (size_t i = 0; i < p->ndying; i++)
		child_wait(&p->dying[i]);
	p->ndying = 0;
}

/* Kill w without waiting for it (see the top of the file). */
static void worker_stop(struct pool *p, struct worker *w)
{
	if (w->state != W_DOWN) {
		plog(p, w, "stop");
		child_kill_nowait(&w->ch);
		if (w->ch.pid > 0) {
			ALLOC_GROW(p->dying, p->ndying + 1, p->dying_cap);
			p->dying[p->ndying++] = w->ch;
		}
		w->ch = (struct child)CHILD_INIT;
	}
	w->state = W_DOWN;
	w->job = -1;
}

/* Workers a release left to end on their own (pool_release_detached),
 * reaped without waiting by the next pool's start and release: no thread
 * waits for them, and a command that ends first leaves them to init (and
 * to PR_SET_PDEATHSIG). */
static struct child *g_left;
static size_t g_nleft, g_aleft;

static void left_add(struct child *c)
{
	if (c->pid > 0) {
		ALLOC_GROW(g_left, g_nleft + 1, g_aleft);
		g_left[g_nleft++] = *c;
	}
	*c = (struct child)CHILD_INIT;
}

static void left_reap(void)
{
	g_nleft = reap_ended(g_left, g_nleft);
}

struct pool *pool_create(int n, int fresh, double timeout, struct strbuf *err)
{
	struct pool *p;
	int pin, count;

	if (devsel_device(&pin, err) < 0 || devsel_devices(&count, err) < 0)
		return NULL;
	if (pin >= 0 && count > 1) {
		sb_addf(err, "GPUREDUCE_DEVICE=%d pins every replay to one GPU, GPUREDUCE_DEVICES=%d "
			"spreads them over %d: unset one of them", pin, count, count);
		return NULL;
	}
	left_reap();   /* an earlier pool's workers that have ended */
	p = xcalloc(1, sizeof(*p));
	signal(SIGPIPE, SIG_IGN);
	n = n < 1 ? 1 : n;
	p->max_busy = n;
	/* spares: a faulting candidate kills its worker; a warm spare takes the
	 * next job while the replacement starts (not for the fresh baseline) */
	p->n = fresh ? n : n + (n + 1) / 2;
	p->fresh = fresh;
	p->timeout = timeout > 0 ? timeout : 60;
	/* GPUREDUCE_DEVICE=K pins every worker to K; GPUREDUCE_DEVICES=N fixes
	 * the spread over 0..N-1 (1: everything on one GPU); otherwise it is
	 * learnt from the first READY (worker_ready).  Whether K and N exist is
	 * known only once a worker is up: the worker refuses an ordinal past
	 * the last GPU, worker_ready a count past the device count. */
	p->base = pin >= 0 ? pin : 0;
	p->ndev = pin >= 0 ? 1 : count ? count : 1;
	p->ndev_fixed = pin >= 0 || count;
	p->st.devices = 1;
	p->w = xcalloc((size_t)p->n, sizeof(*p->w));
	for (int i = 0; i < p->n; i++) {
		sb_init(&p->w[i].line, 0);
		p->w[i].ch = (struct child)CHILD_INIT;
		p->w[i].state = W_DOWN;
		p->w[i].job = -1;
	}
	/* the rest start as these become ready (pool_run) */
	if (start_some(p, (size_t)n, err) < 0) {
		pool_release(p);
		return NULL;
	}
	return p;
}

/* The end of a pool: every ready worker's stdin closed first, so that all
 * tear their contexts down at once; then, with `wait`, waited for together
 * with the killed ones, else each left to end on its own (left_add). */
static void release(struct pool *p, int wait)
{
	if (!p)
		return;
	left_reap();
	for (int i = 0; i < p->n; i++) {
		struct worker *w = &p->w[i];
		if (w->state == W_READY && w->ch.in >= 0) {
			close(w->ch.in);
			w->ch.in = -1;
		}
	}
	for (int i = 0; i < p->n; i++) {
		struct worker *w = &p->w[i];
		if (w->state == W_READY) {
			if (wait)
				child_wait(&w->ch);
			else
				left_add(&w->ch);
			w->state = W_DOWN;
		}
		worker_stop(p, w);
		sb_release(&w->line);
	}
	if (wait)
		reap_dying(p, 1);
	else
		for (size_t i = 0; i < p->ndying; i++)
			left_add(&p->dying[i]);
	free(p->dying);
	free(p->w);
	free(p);
}

void pool_release(struct pool *p)
{
	release(p, 1);
}

void pool_release_detached(struct pool *p)
{
	release(p, interrupt_signal() != 0);   /* interrupted: none is left behind */
}

void pool_set_lazy(struct pool *p, int lazy)
{
	p->lazy = lazy;
}

void pool_set_patience(struct pool *p, double seconds)
{
	p->patience = seconds > 0 ? seconds : 0;
}

const struct pool_stats *pool_stats(const struct pool *p)
{
	return &p->st;
}

static void finish_job(struct pool *p, struct job *j, const struct replay_result *r)
{
	j->res = *r;
	p->st.jobs++;
	p->st.busy_seconds += r->seconds;
	switch (r->status) {
	case RS_CLEAN: p->st.clean++; break;
	case RS_FAULT: p->st.faults++; break;
	case RS_ERROR: p->st.errors++; break;
	case RS_TIMEOUT: p->st.timeouts++; break;
	default: p->st.crashes++; break;
	}
}

/* A worker came up on w->device and says the driver sees ndev devices:
 * unless GPUREDUCE_DEVICES fixed it, later workers spread over all of them */
static void worker_ready(struct pool *p, const struct worker *w, int ndev)
{
	if (p->outage_since) {
		p->st.outage_seconds += now_sec() - p->outage_since;
		p->outage_since = 0;
	}
	if (!p->ndev_fixed && ndev > p->ndev)
		p->ndev = ndev;
	if (p->base + p->ndev > ndev && !p->config_err[0])
		snprintf(p->config_err, sizeof(p->config_err),
			 "GPUREDUCE_DEVICES=%d: the driver reports only %d GPU%s; give at most %d, or unset it",
			 p->ndev, ndev, ndev == 1 ? "" : "s", ndev);
	if (w->device >= 0 && w->device < DEVSEL_MAX && !p->used[w->device]) {
		int n = 0;
		p->used[w->device] = 1;
		for (int i = 0; i < DEVSEL_MAX; i++)
			n += p->used[i];
		p->st.devices = n;
	}
}

/* Handle one complete line from worker w. */
static void on_line(struct pool *p, struct worker *w, const char *line, struct job *jobs)
{
	if (w->state == W_STARTING) {
		int ndev;
		const char *why;
		if (proto_parse_hello(line, &ndev, &why) == PROTO_READY) {
			w->state = W_READY;
			plog(p, w, "ready");
			p->consecutive_fatal = 0;
			worker_ready(p, w, ndev);
		} else {
			start_failed(p, why);
			worker_stop(p, w);
		}
		return;
	}
	if (w->state == W_BUSY && w->job >= 0) {
		struct replay_result r;
		if (proto_parse_result(line, &r) < 0) {
			memset(&r, 0, sizeof(r));
			r.status = RS_CRASH;
			snprintf(r.msg, sizeof(r.msg), "worker sent garbage: %.200s", line);
		}
		finish_job(p, &jobs[w->job], &r);
		plog(p, w, "result job %ld: status %d, %.3f s in the worker", w->job, r.status, r.seconds);
		w->job = -1;
		if (r.status == RS_FAULT || r.status == RS_CRASH || p->fresh)
			worker_stop(p, w);
		else
			w->state = W_READY;
	}
}

/* A job that ended without a worker's RESULT line: status and why. */
static void end_job(struct pool *p, struct job *j, int status, const char *why)
{
	struct replay_result r;
	memset(&r, 0, sizeof(r));
	r.status = status;
	r.event = -1;
	r.launch_seq = -1;
	snprintf(r.msg, sizeof(r.msg), "%s", why);
	finish_job(p, j, &r);
}

static void lost_worker(struct pool *p, struct worker *w, struct job *jobs, int status, const char *why)
{
	if (w->state == W_BUSY && w->job >= 0)
		end_job(p, &jobs[w->job], status, why);
	worker_stop(p, w);
}

/* SIGINT/SIGTERM (interrupt.h): running jobs' workers are killed (their
 * own process groups: a ^C did not reach them), jobs not started are not
 * run; all end as RS_TIMEOUT, so they count as not interesting. */
static void stop_all(struct pool *p, struct job *jobs, size_t njobs, size_t next)
{
	for (int i = 0; i < p->n; i++)
		if (p->w[i].state == W_BUSY)
			lost_worker(p, &p->w[i], jobs, RS_TIMEOUT, "stopped: interrupted");
	for (size_t i = next; i < njobs; i++)
		if (jobs[i].res.status < 0)
			end_job(p, &jobs[i], RS_TIMEOUT, "not run: interrupted");
}

int pool_run(struct pool *p, struct job *jobs, size_t njobs, struct strbuf *err)
{
	size_t next = 0, done = 0;
	struct pollfd *pf = xcalloc((size_t)p->n, sizeof(*pf));
	int ret = -1;

	for (size_t i = 0; i < njobs; i++)
		jobs[i].res.status = -1;
	plog(p, NULL, "run %zu jobs", njobs);
	while (done < njobs) {
		int nfd = 0;
		double now = now_sec();

		/* restart dead workers; give work to ready ones */
		int busy = 0;
		for (int i = 0; i < p->n; i++)
			busy += p->w[i].state == W_BUSY;
		if (interrupt_signal()) {
			stop_all(p, jobs, njobs, next);
			break;
		}
		if (p->config_err[0]) {
			sb_addf(err, "%s", p->config_err);
			goto out;
		}
		reap_dying(p, 0);
		if (start_some(p, njobs - next, err) < 0)
			goto out;
		/* jobs whose stop time passed before they started are not run */
		while (next < njobs && jobs[next].stop_at > 0 && now >= jobs[next].stop_at)
			end_job(p, &jobs[next++], RS_TIMEOUT, "not run: past its stop time (the shrink's time limit)");
		for (int i = 0; i < p->n; i++) {
			struct worker *w = &p->w[i];
			if (w->state == W_READY && next < njobs && busy < p->max_busy) {
				busy++;
				struct strbuf req = STRBUF_INIT;
				struct job *j = &jobs[next];
				proto_format_run(&req, &j->opts, j->trace);
				w->job = (long)next++;
				w->state = W_BUSY;
				plog(p, w, "job %ld of %zu: %s", w->job, njobs, j->trace);
				w->deadline = now + (j->timeout > 0 ? j->timeout : p->timeout);
				if (j->stop_at > 0 && j->stop_at < w->deadline)
					w->deadline = j->stop_at;
				if (write_all(w->ch.in, req.buf, req.len) < 0)
					lost_worker(p, w, jobs, RS_CRASH, "worker went away before taking the job");
				sb_release(&req);
			}
		}
		/* count jobs that finished through lost_worker */
		done = 0;
		for (size_t i = 0; i < njobs; i++)
			done += jobs[i].res.status >= 0;
		if (done >= njobs)
			break;
		for (int i = 0; i < p->n; i++) {
			pf[i].fd = p->w[i].state == W_DOWN ? -1 : p->w[i].ch.out;
			pf[i].events = POLLIN;
			pf[i].revents = 0;
			nfd += pf[i].fd >= 0;
		}
		if (!nfd) {
			usleep(50000);   /* every worker down: waiting out an outage */
			continue;
		}
		int pr = poll(pf, (nfds_t)p->n, 100);
		if (pr < 0 && errno != EINTR) {
			sb_addf(err, "poll: %s", strerror(errno));
			goto out;
		}
		now = now_sec();
		for (int i = 0; i < p->n; i++) {
			struct worker *w = &p->w[i];
			if (w->state == W_DOWN)
				continue;
			if (pf[i].revents & (POLLIN | POLLHUP | POLLERR)) {
				char buf[4096];
				ssize_t n = read(w->ch.out, buf, sizeof(buf));
				if (n <= 0) {
					/* EOF: the worker exited or crashed */
					if (w->state == W_STARTING)
						start_failed(p, p->fatal[0] ? NULL : "worker exited during start-up");
					lost_worker(p, w, jobs, RS_CRASH,
						    "worker died while replaying (crash in the driver or in replay)");
					continue;
				}
				sb_add(&w->line, buf, (size_t)n);
				char *one;
				while (w->state != W_DOWN && (one = proto_take_line(&w->line))) {
					on_line(p, w, one, jobs);
					free(one);
				}
			}
			if (w->state == W_BUSY && now > w->deadline)
				lost_worker(p, w, jobs, RS_TIMEOUT, "time limit exceeded (hang?)");
			else if (w->state == W_STARTING && now > w->deadline) {
				start_failed(p, "a replay worker did not get a CUDA context within 120 s");
				worker_stop(p, w);
			}
		}
		done = 0;
		for (size_t i = 0; i < njobs; i++)
			done += jobs[i].res.status >= 0;
	}
	ret = 0;
out:
	plog(p, NULL, "run done");
	free(pf);
	/* warm replacements for workers lost at the end (not for a lazy pool:
	 * their contexts would be created beside whatever comes next) */
	if (ret == 0 && p->consecutive_fatal < 3 && !interrupt_signal() && !p->lazy)
		start_some(p, (size_t)p->n, err);
	return ret;
}
