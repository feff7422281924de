/*
 * replay.h - re-execute a trace on the GPU, inside a worker process.
 *
 * The replay engine owns one CUDA context per process (created once: it
 * costs ~0.22 s) and a cache of loaded modules keyed by image hash, so a
 * warm worker replays many candidate traces cheaply until one faults (a
 * fault kills the context: the worker then exits and is replaced).
 *
 * Replay is relocation, not address reproduction: address hints are
 * ignored by the driver (GPU-FACTS.md), so every captured allocation gets a
 * twin placed against a guard region (place.h) and every captured address
 * that reaches the GPU -- each 8-byte word of a launch's parameter bytes,
 * copy and memset targets -- is rewritten to the same offset of its twin
 * (memmap.h).  Freed twins stay reserved but unmapped, so a use after free
 * still faults.
 *
 * Only worker processes call into this module (src/cmd-worker.c); the
 * reducer talks to workers through replay/pool.c.
 */
#ifndef GPUREDUCE_REPLAY_H
#define GPUREDUCE_REPLAY_H

#include <stdint.h>

struct strbuf;
struct trace;

/* snapshot modes */
enum snap_mode {
	SNAP_NONE = 0,
	SNAP_REACHABLE = 1,  /* buffers the launch at stop_before reaches (transitively) */
	SNAP_ALL = 2         /* every live buffer and every module loaded so far */
};

struct replay_opts {
	int guard;            /* enum guard_mode */
	long stop_before;     /* record index to stop before; -1: run to the end */
	int snap_mode;        /* with stop_before: write the state there ... */
	const char *snap_path;/* ... to this trace file */
	int snap_go_on;       /* 1: after writing it, run on to the end (one process
			       * gives the snapshot and a run through the fault) */
	uint64_t scan_limit;  /* bytes of buffer contents scanned for pointers (SNAP_REACHABLE) */
	const char *skip_path;/* a file of captured launch seqs (decimal, one a line): those
			       * launches (not stream-captured ones) are left out, as
			       * rc_blockify's skip list leaves them out (hunt) */
	int recycle;          /* 1: a freed guard-placed buffer stays mapped and a later
			       * buffer of the same placement takes its range, as a
			       * caching allocator reuses a block (hunt: its blocks'
			       * overruns still meet their guards; a stale pointer into
			       * a freed one reaches the later buffer, as in the program) */
};
#define REPLAY_OPTS_INIT { 0, -1, SNAP_NONE, NULL, 0, 256ull << 20, NULL, 0 }

enum replay_status {
	RS_CLEAN = 0,         /* ran to the end (or to stop_before) without a fault */
	RS_FAULT = 1,         /* a sticky error: the context is dead */
	RS_ERROR = 2,         /* could not replay (msg says why); context still usable */
	RS_TIMEOUT = 3,       /* set by the pool when a worker overran its time */
	RS_CRASH = 4          /* set by the pool when a worker died */
};

/* Why a replay could not run (RS_ERROR), where a caller acts on it. */
enum replay_error_kind {
	RE_OTHER = 0,         /* any other cause: msg says which */
	RE_NO_LAYOUT = 1      /* layout-faithful placement cannot apply here (no
			       * VMM, a span too large to reserve, shifted
			       * placement): guard placement can */
};

struct replay_result {
	int status;
	int error_kind;       /* RS_ERROR: enum replay_error_kind */
	long event;           /* record index of the fault/error, -1 if none */
	long long launch_seq; /* captured seq of the faulting launch, -1 if none */
	int code;             /* CUresult */
	char error[64];       /* CUDA_ERROR_... */
	char kernel[512];     /* faulting kernel's (mangled) name */
	char msg[512];        /* for RS_ERROR; warnings otherwise */
	long launches;        /* launches executed */
	double seconds;
	/* relocation coverage (RS_CLEAN, RS_FAULT): launch parameter words */
	long ptr_words;       /* pointer words relocated */
	long stray_words;     /* words that looked like device addresses but matched no buffer */
	long tmaps_encoded;   /* TMA tensor maps re-encoded for their relocated address */
	long tmaps_word0;     /* tensor maps whose address word alone was relocated */
	long shifted;         /* GPUREDUCE_SHIFT=1: buffers placed shifted; -1 when off */
	int snapped;          /* 1 when the snapshot asked for was written */
};

struct replay_ctx;

/* Load the driver, create the context.  0 or -1 with err (no GPU...). */
int replay_ctx_create(struct replay_ctx **ctx, struct strbuf *err);
void replay_ctx_release(struct replay_ctx *ctx);
/* 1 once a fault has killed the context. */
int replay_ctx_dead(const struct replay_ctx *ctx);
/* How many CUDA devices the driver reports (the worker tells the pool). */
int replay_ctx_devices(const struct replay_ctx *ctx);

/* Replay t.  Always fills res; returns res->status. */
int replay_trace(struct replay_ctx *ctx, const struct trace *t, const struct replay_opts *o,
		 struct replay_result *res);

const char *replay_status_name(int status);

#endif
