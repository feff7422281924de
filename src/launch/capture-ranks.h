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

/* The status file the capture library writes (GPUREDUCE_STATUS,
 * capture/inject.c), one line per event of a process, read by one parser
 * for every reader: "ok PID PATH", "rank PID R", "fault PID NS",
 * "write-error PID OFFSET WHY" (a process's own lines, pid > 0), and
 * "cupti-busy ERR", "cupti-error ERR", "trace-error MSG" (pid 0).  rest:
 * what follows the pid (the message for the pid-less kinds).  Lines of no
 * such kind, and process lines without a pid, are skipped. */
enum cr_status_kind {
	CR_ST_OK, CR_ST_RANK, CR_ST_FAULT, CR_ST_WRITE_ERROR,
	CR_ST_CUPTI_BUSY, CR_ST_CUPTI_ERROR, CR_ST_TRACE_ERROR
};
struct cr_status_line {
	enum cr_status_kind kind;
	long pid;
	const char *rest;
};
/* fn for each line, in the file's order; 0, or -1 when it cannot be read. */
int cr_status_each(const char *status_path,
		   void (*fn)(const struct cr_status_line *l, void *arg), void *arg);
/* The process lines into run: each "ok" process with its rank, the time
 * of its first fault and its first write error. */
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
