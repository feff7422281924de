/*
 * child.h - the one way gpureduce runs other processes: the traced program,
 * replay workers, nvcc, compute-sanitizer, built repros.
 *
 * Children get optional pipes for stdin/stdout, extra environment entries
 * ("NAME=value", or "NAME" alone to unset), their own process group (so a
 * hung worker and everything it started can be killed at once), and an
 * optional time limit.
 */
#ifndef GPUREDUCE_CHILD_H
#define GPUREDUCE_CHILD_H

#include <sys/types.h>

struct strbuf;

#define CHILD_PIPE_IN     0x1   /* c->in is a pipe to the child's stdin */
#define CHILD_PIPE_OUT    0x2   /* c->out is a pipe from the child's stdout */
#define CHILD_MERGE_ERR   0x4   /* child's stderr goes where its stdout goes */
#define CHILD_NULL_ERR    0x8   /* child's stderr to /dev/null */
#define CHILD_NEW_PGRP    0x10  /* child leads a new process group */
#define CHILD_NULL_IN     0x20  /* child's stdin from /dev/null */
#define CHILD_DIE_WITH_PARENT 0x40 /* SIGKILL the child when gpureduce dies (PR_SET_PDEATHSIG):
				    * a replay worker or sanitizer run must not outlive the
				    * command that started it, even one that was SIGKILLed */

struct child {
	pid_t pid;
	int in, out;             /* our ends of the pipes, or -1 */
};
#define CHILD_INIT { -1, -1, -1 }

/* Start argv[0] (PATH search).  Returns 0 or -1 with err. */
int child_start(struct child *c, char *const argv[], const char *const env_add[],
		unsigned flags, struct strbuf *err);
/* Wait; returns the exit code, 128+signal when killed by a signal, -1 on
 * error.  Closes our pipe ends. */
int child_wait(struct child *c);
/* Has it ended?  1 (reaped; *status as child_wait), 0 still running, -1
 * error or no child. */
int child_poll(struct child *c, int *status);
/* Wait at most `timeout` seconds; then kill it (group) and return 124.
 * Otherwise as child_wait. */
int child_wait_timeout(struct child *c, double timeout);

/* Kill the child's process group (or the child) with SIGKILL and reap it. */
void child_kill(struct child *c);
/* The same without the wait: SIGKILL sent, our pipe ends closed, c->pid
 * kept for child_poll or child_wait to reap later.  A process that held a
 * CUDA context takes a few hundred milliseconds to die (the driver tears
 * the context down); a caller with other work reaps it afterwards. */
void child_kill_nowait(struct child *c);
/* Leave the child to a detached thread that waits for it (its pipes
 * closed); *c becomes CHILD_INIT.  For a process whose outcome is known
 * (a repro that printed its fault, a sanitizer run killed with
 * child_kill_nowait) and whose exit, a CUDA context's teardown, nobody
 * should wait for. */
void child_reap_later(struct child *c);

/*
 * Run to completion, collecting stdout (and stderr when CHILD_MERGE_ERR)
 * into out (may be NULL: output passes through).  timeout <= 0: none.
 * Returns the exit code as child_wait, 124 on timeout (child killed),
 * -1 when it could not start (err says why).
 */
int child_run(char *const argv[], const char *const env_add[], unsigned flags,
	      struct strbuf *out, double timeout, struct strbuf *err);

/* Find an executable: PATH first, then `fallback_dir`.  Returns a buffer
 * of the calling thread's own (overwritten by its next call; copy it to
 * hand it to another thread) or NULL. */
const char *child_find_program(const char *name, const char *fallback_dir);

/* Describe a child_wait/child_run status for messages: "exit 1", "SIGSEGV". */
const char *child_status_str(int status, char buf[48]);

#endif
