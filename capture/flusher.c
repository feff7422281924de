/*
 * flusher.c - the timer that bounds how far the trace file lags behind the
 * program (issue 26).  inject.c gathers records in the trace writer's
 * buffer (tw_set_buffer) instead of one write(2) per launch; it flushes at
 * a fault, at exit and before a checkpoint reads the file, and this thread
 * flushes every GPUREDUCE_FLUSH_MS (default 100) so that a program killed
 * from outside (SIGKILL, a host crash) loses at most that much of its
 * last records.  The thread makes no CUDA call and owns no trace state: it
 * only calls the function inject.c gives it, which takes inject.c's lock.
 */
#include <pthread.h>
#include <signal.h>
#include <time.h>

#include "capture.h"
#include "flusher.h"

static void (*tick_fn)(void);
static unsigned tick_ms;

static void *flusher_main(void *arg)
{
	struct timespec ts = { (time_t)(tick_ms / 1000), (long)(tick_ms % 1000) * 1000000L };

	(void)arg;
	for (;;) {
		nanosleep(&ts, NULL);
		tick_fn();
	}
	return NULL;
}

int cap_flusher_start(unsigned ms, void (*fn)(void))
{
	pthread_t th;
	pthread_attr_t at;
	sigset_t all, old;
	int r;

	if (!ms || !fn)
		return -1;
	tick_fn = fn;
	tick_ms = ms;
	/* the program's signals go to its own threads, never to this one */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&at, 64 * 1024);
	r = pthread_create(&th, &at, flusher_main, NULL);
	pthread_attr_destroy(&at);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return r ? -1 : 0;
}
