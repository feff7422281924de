/*
 * child.c - process spawning (see child.h).
 */
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "child.h"
#include "interrupt.h"
#include "strbuf.h"
#include "util.h"

static void apply_env(const char *const env_add[])
{
	for (size_t i = 0; env_add && env_add[i]; i++) {
		const char *eq = strchr(env_add[i], '=');
		if (eq) {
			char *name = xstrndup(env_add[i], (size_t)(eq - env_add[i]));
			setenv(name, eq + 1, 1);
			free(name);
		} else {
			unsetenv(env_add[i]);
		}
	}
}

int child_start(struct child *c, char *const argv[], const char *const env_add[],
		unsigned flags, struct strbuf *err)
{
	int in[2] = { -1, -1 }, out[2] = { -1, -1 }, ex[2] = { -1, -1 };
	int e = 0;
	ssize_t n;
	pid_t parent;

	c->pid = -1;
	c->in = c->out = -1;
	if ((flags & CHILD_PIPE_IN) && pipe2(in, O_CLOEXEC) < 0)
		goto fail;
	if ((flags & CHILD_PIPE_OUT) && pipe2(out, O_CLOEXEC) < 0)
		goto fail;
	if (pipe2(ex, O_CLOEXEC) < 0)
		goto fail;
	fflush(NULL);
	parent = getpid();
	c->pid = fork();
	if (c->pid < 0)
		goto fail;
	if (c->pid == 0) {
		signal(SIGPIPE, SIG_DFL);
		/* gpureduce starts children from its one thread, so the "parent
		 * thread" PR_SET_PDEATHSIG watches is the process itself */
		if ((flags & CHILD_DIE_WITH_PARENT) &&
		    (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent))
			_exit(127);
		if (flags & CHILD_NEW_PGRP)
			setpgid(0, 0);
		if (flags & CHILD_PIPE_IN)
			dup2(in[0], 0);
		else if (flags & CHILD_NULL_IN) {
			int fd = open("/dev/null", O_RDONLY);
			if (fd >= 0)
				dup2(fd, 0);
		}
		if (flags & CHILD_PIPE_OUT)
			dup2(out[1], 1);
		if (flags & CHILD_MERGE_ERR)
			dup2(1, 2);
		else if (flags & CHILD_NULL_ERR) {
			int fd = open("/dev/null", O_WRONLY);
			if (fd >= 0)
				dup2(fd, 2);
		}
		apply_env(env_add);
		execvp(argv[0], argv);
		e = errno;
		if (write(ex[1], &e, sizeof(e)) < 0) { /* nothing to do */ }
		_exit(127);
	}
	if (flags & CHILD_NEW_PGRP)
		setpgid(c->pid, c->pid);
	close(ex[1]);
	ex[1] = -1;
	do
		n = read(ex[0], &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	close(ex[0]);
	if (n == sizeof(e)) {
		waitpid(c->pid, NULL, 0);
		c->pid = -1;
		sb_addf(err, "cannot run %s: %s", argv[0], strerror(e));
		if (in[0] >= 0) { close(in[0]); close(in[1]); }
		if (out[0] >= 0) { close(out[0]); close(out[1]); }
		return -1;
	}
	if (in[0] >= 0) {
		close(in[0]);
		c->in = in[1];
	}
	if (out[0] >= 0) {
		close(out[1]);
		c->out = out[0];
	}
	return 0;
fail:
	e = errno;
	sb_addf(err, "cannot start %s: %s", argv[0], strerror(e));
	for (int i = 0; i < 2; i++) {
		if (in[i] >= 0) close(in[i]);
		if (out[i] >= 0) close(out[i]);
		if (ex[i] >= 0) close(ex[i]);
	}
	return -1;
}

static int decode_status(int st)
{
	if (WIFEXITED(st))
		return WEXITSTATUS(st);
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return -1;
}

int child_wait(struct child *c)
{
	int st;
	pid_t r;
	if (c->in >= 0) { close(c->in); c->in = -1; }
	if (c->out >= 0) { close(c->out); c->out = -1; }
	if (c->pid <= 0)
		return -1;
	do
		r = waitpid(c->pid, &st, 0);
	while (r < 0 && errno == EINTR);
	c->pid = -1;
	return r < 0 ? -1 : decode_status(st);
}

int child_poll(struct child *c, int *status)
{
	int st;
	pid_t r;
	if (c->pid <= 0)
		return -1;
	do
		r = waitpid(c->pid, &st, WNOHANG);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return -1;
	if (r == 0)
		return 0;
	c->pid = -1;
	if (c->in >= 0) { close(c->in); c->in = -1; }
	if (c->out >= 0) { close(c->out); c->out = -1; }
	*status = decode_status(st);
	return 1;
}

int child_wait_timeout(struct child *c, double timeout)
{
	double deadline = now_sec() + timeout;
	int st, r;
	if (c->in >= 0) { close(c->in); c->in = -1; }
	if (c->out >= 0) { close(c->out); c->out = -1; }
	while ((r = child_poll(c, &st)) == 0) {
		if (now_sec() > deadline) {
			child_kill(c);
			return 124;
		}
		if (interrupt_signal()) {
			child_kill(c);
			return 128 + interrupt_signal();
		}
		usleep(20000);
	}
	return r > 0 ? st : -1;
}

void child_kill_nowait(struct child *c)
{
	if (c->pid > 0) {
		kill(-c->pid, SIGKILL);
		kill(c->pid, SIGKILL);
	}
	if (c->in >= 0) { close(c->in); c->in = -1; }
	if (c->out >= 0) { close(c->out); c->out = -1; }
}

void child_kill(struct child *c)
{
	child_kill_nowait(c);
	child_wait(c);
}

int child_run(char *const argv[], const char *const env_add[], unsigned flags,
	      struct strbuf *out, double timeout, struct strbuf *err)
{
	struct child c = CHILD_INIT;
	double deadline = timeout > 0 ? now_sec() + timeout : 0;
	int st;
	pid_t r;

	if (out)
		flags |= CHILD_PIPE_OUT;
	if (timeout > 0)
		flags |= CHILD_NEW_PGRP;
	if (child_start(&c, argv, env_add, flags, err) < 0)
		return -1;
	for (;;) {
		int wait_ms = 200;
		if (deadline) {
			double left = deadline - now_sec();
			if (left <= 0) {
				child_kill(&c);
				return 124;
			}
			if (interrupt_signal()) {
				/* its own process group: a ^C did not reach it */
				child_kill(&c);
				return 128 + interrupt_signal();
			}
			if (left * 1000 < wait_ms)
				wait_ms = (int)(left * 1000) + 1;
		}
		if (c.out >= 0) {
			struct pollfd p = { c.out, POLLIN, 0 };
			int pr = poll(&p, 1, wait_ms);
			if (pr > 0) {
				char buf[65536];
				ssize_t n = read(c.out, buf, sizeof(buf));
				if (n > 0) {
					sb_add(out, buf, (size_t)n);
					continue;
				}
				if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) {
					close(c.out);
					c.out = -1;
				}
			}
			continue;
		}
		r = waitpid(c.pid, &st, deadline ? WNOHANG : 0);
		if (r == c.pid) {
			c.pid = -1;
			child_wait(&c);
			return decode_status(st);
		}
		if (r < 0 && errno != EINTR) {
			child_kill(&c);
			return -1;
		}
		if (deadline)
			usleep(10000);
	}
}

const char *child_status_str(int status, char buf[48])
{
	if (status >= 128 && status < 128 + 65) {
		const char *s = sigabbrev_np(status - 128);
		snprintf(buf, 48, "killed by SIG%s", s ? s : "?");
	} else {
		snprintf(buf, 48, "exit %d", status);
	}
	return buf;
}

const char *child_find_program(const char *name, const char *fallback_dir)
{
	/* the thread's own: shrink looks for g++ on repro.cu's build thread
	 * while the main thread looks for compute-sanitizer, and with one
	 * shared buffer the sanitizer's run started g++ (seen on the H200) */
	static _Thread_local char path[4096];
	const char *pv = getenv("PATH");
	if (pv) {
		char *copy = xstrdup(pv), *save = NULL;
		for (char *d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
			snprintf(path, sizeof(path), "%s/%s", d, name);
			if (access(path, X_OK) == 0) {
				free(copy);
				return path;
			}
		}
		free(copy);
	}
	if (!fallback_dir)
		return NULL;
	snprintf(path, sizeof(path), "%s/%s", fallback_dir, name);
	return access(path, X_OK) == 0 ? path : NULL;
}

static void *reap_main(void *arg)
{
	struct child *c = arg;
	child_wait(c);
	free(c);
	return NULL;
}

void child_reap_later(struct child *c)
{
	struct child *h;
	pthread_attr_t a;
	pthread_t th;
	int ok;

	if (c->pid <= 0)
		return;
	h = xmalloc(sizeof(*h));
	*h = *c;
	*c = (struct child)CHILD_INIT;
	pthread_attr_init(&a);
	pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
	ok = pthread_create(&th, &a, reap_main, h) == 0;
	pthread_attr_destroy(&a);
	if (!ok) {
		child_wait(h);   /* no thread to spare: here */
		free(h);
	}
}
