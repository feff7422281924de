/*
 * pool.h - a pool of warm replay workers (`gpureduce __worker` children).
 *
 * The reducer's only path to the GPU.  Workers keep their CUDA context and
 * loaded modules across candidates that run clean; a candidate that faults
 * kills its worker's context, so the worker exits and a replacement is
 * started at once, in the background, while the other workers go on.
 * Several workers share one GPU (GPU-FACTS.md: one faulting process does
 * not hurt its neighbours).  Workers are spread round-robin over every
 * device the driver reports (each worker's READY line says how many; the
 * first ones start on device 0), or over N with GPUREDUCE_DEVICES=N, or
 * all on device K with GPUREDUCE_DEVICE=K (replay/devsel.h reads both; a
 * bad value makes pool_create or pool_run fail with a one-line error).  A
 * job that runs past its time limit gets its worker killed.
 */
#ifndef GPUREDUCE_POOL_H
#define GPUREDUCE_POOL_H

#include "replay.h"

struct strbuf;

struct job {
	const char *trace;
	struct replay_opts opts;
	double timeout;          /* seconds; 0: the pool's default */
	double stop_at;          /* now_sec() after which the job is not started, or is
				  * stopped if running (RS_TIMEOUT); 0: none */
	struct replay_result res;/* filled by pool_run */
};

struct pool_stats {
	long jobs, faults, clean, errors, timeouts, crashes;
	long spawned;            /* worker processes started */
	int devices;             /* distinct devices that had a ready worker */
	long start_failures;     /* workers that failed to start */
	double outage_seconds;   /* waited with three failed starts in a row */
	double busy_seconds;     /* summed replay time reported by workers */
};

struct pool;

/* Start n workers (n >= 1).  fresh: kill each worker after one job (the
 * baseline "one process per candidate").  Returns NULL with err when no
 * worker comes up (no GPU, no driver: the worker's own message). */
struct pool *pool_create(int n, int fresh, double timeout, struct strbuf *err);
void pool_release(struct pool *p);
/* The same, but nobody waits for the workers' ends: idle workers, their
 * stdin closed, exit on their own, and the next pool's start or release
 * reaps what has ended (a command that ends first leaves them to init).
 * For a command whose results are in: the workers' context teardown
 * (0.1-0.4 s at the end of a shrink on the H200) is not the user's wait.
 * After SIGINT or SIGTERM (common/interrupt.h) it waits, as pool_release:
 * an interrupted command leaves no process behind. */
void pool_release_detached(struct pool *p);
/* Run jobs, up to n at a time; returns when all have results.  0, or -1
 * when workers cannot be started any more (err). */
int pool_run(struct pool *p, struct job *jobs, size_t njobs, struct strbuf *err);
/* Ride out workers that fail to start (a GPU that drops out for a while):
 * after three failed starts in a row, try again after a pause that doubles
 * from 0.5 s to 8 s, for up to `seconds` before pool_run gives up.  0 (the
 * default): give up at once. */
void pool_set_patience(struct pool *p, double seconds);
/* Lazy (1): a worker that stops is not replaced until a job waits for it,
 * and only as many start as jobs wait.  For the end of a reduction, when
 * few runs remain and other processes (the built repro.cu's runs) need
 * the GPU's context creation, which is served one after another. */
void pool_set_lazy(struct pool *p, int lazy);
const struct pool_stats *pool_stats(const struct pool *p);

#endif
