/*
 * capture-tee.c - `capture` keeps the last 64 KiB the program wrote to
 * stderr (and to stdout when that is not a terminal), so a report can quote
 * a device assert's own words ("k.py:7: ... Assertion `index out of bounds:
 * 0 <= tmp9 < 1000` failed.") and PyTorch's error; see capture-tee.h.
 *
 * How: before the program starts, its fd 2 (and 1) become pipes; a thread
 * copies everything through to our own stderr/stdout as it arrives and
 * keeps a ring of the last bytes.  After the program exits the thread reads
 * until end of file, or for at most a second more (a process it left
 * behind may hold the pipe open), and the ring becomes one STDERR record
 * appended to the trace (docs/FORMAT.md 1.4).  A terminal stdout is left
 * alone: a pipe there would change the program's buffering (Python's
 * stdout becomes block-buffered and is lost in a crash).  The program's
 * stderr was never a terminal-dependent stream for Python (unbuffered) or
 * C (unbuffered).  GPUREDUCE_NO_TEE=1 turns this off.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../common/strbuf.h"
#include "../../common/util.h"
#include "../../trace/trace.h"
#include "capture-tee.h"

#define TEE_KEEP (64 * 1024)

static double mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void keep(struct tee *t, const char *p, size_t n)
{
	t->total += n;
	if (n >= TEE_KEEP) {
		p += n - TEE_KEEP;
		n = TEE_KEEP;
	}
	if (t->kept.len + n > 2 * TEE_KEEP) {
		size_t drop = t->kept.len + n - TEE_KEEP;
		if (drop > t->kept.len)
			drop = t->kept.len;
		memmove(t->kept.buf, t->kept.buf + drop, t->kept.len - drop);
		sb_setlen(&t->kept, t->kept.len - drop);
	}
	sb_add(&t->kept, p, n);
}

static void *pump(void *arg)
{
	struct tee *t = arg;
	char buf[16384];
	for (;;) {
		struct pollfd pf[2];
		int n = 0, r;
		for (int k = 0; k < 2; k++)
			if (t->rfd[k] >= 0) {
				pf[n].fd = t->rfd[k];
				pf[n].events = POLLIN;
				n++;
			}
		if (!n)
			break;
		r = poll(pf, (nfds_t)n, 100);
		if (r < 0 && errno != EINTR)
			break;
		if (r <= 0) {
			if (__atomic_load_n(&t->stop, __ATOMIC_ACQUIRE) && mono() > t->deadline)
				break;
			continue;
		}
		for (int i = 0; i < n; i++) {
			int k = pf[i].fd == t->rfd[0] ? 0 : 1;
			ssize_t got;
			if (!(pf[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			got = read(pf[i].fd, buf, sizeof(buf));
			if (got < 0 && errno == EINTR)
				continue;
			if (got <= 0) {
				close(t->rfd[k]);
				t->rfd[k] = -1;
				continue;
			}
			if (write_all(t->saved[k], buf, (size_t)got) < 0) { /* our own output is gone */ }
			pthread_mutex_lock(&t->mu);
			keep(t, buf, (size_t)got);
			pthread_mutex_unlock(&t->mu);
		}
		if (__atomic_load_n(&t->stop, __ATOMIC_ACQUIRE) && mono() > t->deadline)
			break;
	}
	return NULL;
}

int tee_begin(struct tee *t)
{
	const char *off = getenv("GPUREDUCE_NO_TEE");
	memset(t, 0, sizeof(*t));
	t->rfd[0] = t->rfd[1] = t->saved[0] = t->saved[1] = -1;
	sb_init(&t->kept, 0);
	pthread_mutex_init(&t->mu, NULL);
	if (off && !strcmp(off, "1"))
		return 0;
	for (int k = 0; k < 2; k++) {
		int fd = k == 0 ? 2 : 1, p[2];
		if (k == 1 && isatty(1))
			continue;
		if (pipe(p) < 0)
			continue;
		fcntl(p[0], F_SETFD, FD_CLOEXEC);
		t->saved[k] = fcntl(fd, F_DUPFD_CLOEXEC, 3);
		if (t->saved[k] < 0 || dup2(p[1], fd) < 0) {
			close(p[0]);
			close(p[1]);
			if (t->saved[k] >= 0)
				close(t->saved[k]);
			t->saved[k] = -1;
			continue;
		}
		close(p[1]);
		t->rfd[k] = p[0];
		t->on = 1;
	}
	return 0;
}

void tee_started(struct tee *t)
{
	/* our own fds back; the child keeps the pipes */
	for (int k = 0; k < 2; k++)
		if (t->saved[k] >= 0)
			dup2(t->saved[k], k == 0 ? 2 : 1);
	if (t->on && pthread_create(&t->th, NULL, pump, t) == 0)
		t->running = 1;
}

int tee_finish(struct tee *t, const char *trace, int status, struct strbuf *err)
{
	struct trace tr = TRACE_INIT;
	struct trace_writer w = TRACE_WRITER_INIT;
	struct strbuf e = STRBUF_INIT;
	struct tr_rec r;
	int ret = 0;

	if (t->running) {
		t->deadline = mono() + 1.0;
		__atomic_store_n(&t->stop, 1, __ATOMIC_RELEASE);
		pthread_join(t->th, NULL);
		t->running = 0;
	}
	for (int k = 0; k < 2; k++) {
		if (t->rfd[k] >= 0)
			close(t->rfd[k]);
		if (t->saved[k] >= 0)
			close(t->saved[k]);
		t->rfd[k] = t->saved[k] = -1;
	}
	if (!t->on || !trace || !t->total)
		goto out;
	/* append only after a whole last record: a torn one would swallow ours */
	if (trace_open(&tr, trace, 0, &e) < 0 || tr.truncated)
		goto out;
	trace_release(&tr);
	if (tw_open_append(&w, trace, &e) < 0) {
		sb_addf(err, "%s", e.buf);
		ret = -1;
		goto out;
	}
	if (t->kept.len > TEE_KEEP) {
		size_t drop = t->kept.len - TEE_KEEP;
		memmove(t->kept.buf, t->kept.buf + drop, TEE_KEEP);
		sb_setlen(&t->kept, TEE_KEEP);
	}
	memset(&r, 0, sizeof(r));
	r.type = TR_STDERR;
	r.u.stderr_tail.dropped = t->total - t->kept.len;
	r.u.stderr_tail.exit_code = status;
	r.u.stderr_tail.text = t->kept.buf;
	if (tw_record(&w, &r) < 0 || tw_close(&w) < 0) {
		sb_addf(err, "%s: could not append the program's stderr%s", trace, tw_why(&w));
		ret = -1;
	}
out:
	tw_close(&w);
	trace_release(&tr);
	sb_release(&e);
	sb_release(&t->kept);
	pthread_mutex_destroy(&t->mu);
	return ret;
}
