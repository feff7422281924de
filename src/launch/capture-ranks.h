/*
 * capture-ranks.h - the CUDA processes of one `gpureduce capture` run
 * (torchrun ranks, mp.spawn children, DataLoader workers): read from the
 * capture library's status file, each trace examined, reported, and listed
 * in DIR/index.yaml (src/launch/capture-ranks.c, docs/MULTI-RANK.md).
 */
#ifndef GPUREDUCE_CAPTURE_RANKS_H
#define GPUREDUCE_CAPTURE_RANKS_H

#include <stddef.h>
#include <stdint.h>

struct strbuf;

enum cr_end {
	CR_FAULTED,       /* its trace holds a FAULT */
	CR_CLEAN,         /* exited 0 */
	CR_EXITED,        /* exited non-zero without a fault */
	CR_KILLED,        /* no END record: killed, or left through _exit */
	CR_IDLE,          /* initialised CUDA but launched nothing: not a rank */
	CR_UNREADABLE     /* the trace could not be read */
};

struct cr_proc {
	int pid;
	char rank[12];           /* "" when the job named none */
	char *path;              /* absolute */
	uint64_t fault_ns;       /* wall clock of its fault (0: none reported) */
	enum cr_end end;
	int exit_code;
	uint64_t launches, folded;
	char *error, *kernel;    /* of its fault */
	uint64_t fault_seq;
	char *write_err;         /* "byte N (why)": its trace could not be written on */
};

struct cr_run {
	struct cr_proc *p;
	size_t n;
	long first;              /* index of the process that faulted first, or -1 */
};
#define CR_RUN_INIT { NULL, 0, -1 }

/* The "ok"/"rank"/"fault"/"write-error" lines of the status file (see
 * capture/inject.c). */
void cr_read_status(const char *status_path, struct cr_run *run);
/* A "write-error PID OFFSET WHY" line's "OFFSET WHY" as "byte OFFSET
 * (WHY)" into out; 0, or -1 (out unchanged) when it is not that. */
int cr_write_error_text(const char *offset_why, struct strbuf *out);
/* Read every trace, classify its end, find the first fault (by time). */
void cr_examine(struct cr_run *run);
/* The per-process lines on stderr and, with the first fault, the shrink
 * command for it.  show_base: prefix shown for traces under dir (may be
 * NULL: absolute paths relative to the cwd). */
void cr_print(const struct cr_run *run, const char *dir, const char *show_base);
/* DIR/index.yaml.  0, or -1 with err. */
int cr_write_index(const struct cr_run *run, const char *dir, char **argv, int status, struct strbuf *err);
/* What the traces listed in an earlier DIR/index.yaml were: removed, with
 * the index (a new capture into DIR replaces them, as -o FILE does). */
void cr_clear_old(const char *dir);
void cr_release(struct cr_run *run);

#endif
