/*
 * capture-tee.h - the program's stderr (and non-terminal stdout) passed
 * through by `capture` while its last 64 KiB are kept for the trace's
 * STDERR record (capture-tee.c).
 */
#ifndef GPUREDUCE_CAPTURE_TEE_H
#define GPUREDUCE_CAPTURE_TEE_H

#include <pthread.h>
#include <stdint.h>

#include "../../common/strbuf.h"

struct tee {
	int on, running, stop;
	int rfd[2];              /* our read ends: [0] stderr, [1] stdout */
	int saved[2];            /* our own fds 2 and 1, restored after the child starts */
	double deadline;         /* after stop: read at most until then */
	pthread_t th;
	pthread_mutex_t mu;
	struct strbuf kept;      /* the last bytes (at most 128 KiB held, 64 KiB written) */
	uint64_t total;
};

/* Before child_start: our fd 2 (and 1) become pipes the child inherits.
 * Always 0 (a pipe that cannot be made leaves that stream alone). */
int tee_begin(struct tee *t);
/* Right after child_start (whether or not it started): our fds back, the
 * copying thread started. */
void tee_started(struct tee *t);
/* After the child exited: drain, stop, and append a STDERR record with
 * `status` to trace (NULL: none).  0, or -1 with err (the trace is kept). */
int tee_finish(struct tee *t, const char *trace, int status, struct strbuf *err);

#endif
