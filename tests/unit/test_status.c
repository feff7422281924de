/*
 * test_status.c - the status file the capture library writes
 * (GPUREDUCE_STATUS), read by its one parser (src/launch/capture-ranks.c:
 * cr_status_each, cr_read_status), and common/util.c's whole-file writer,
 * through which report.md and a capture's index.yaml are written (an
 * earlier file stays as it was when a new one cannot be written), and
 * write_file under it, which closes what it opened when a write fails.
 */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../common/strbuf.h"
#include "../../common/util.h"
#include "../../src/launch/capture-ranks.h"
#include "unit.h"

struct seen {
	int n;
	int kind[16];
	long pid[16];
	char rest[16][64];
};

static void keep(const struct cr_status_line *l, void *arg)
{
	struct seen *s = arg;
	if (s->n >= 16)
		return;
	s->kind[s->n] = (int)l->kind;
	s->pid[s->n] = l->pid;
	snprintf(s->rest[s->n], sizeof(s->rest[0]), "%s", l->rest);
	s->n++;
}

static char *temp_dir(void)
{
	char t[] = "/tmp/gpureduce-unit-XXXXXX";
	return mkdtemp(t) ? xstrdup(t) : NULL;
}

UNIT_TEST(status_lines_one_parser)
{
	static const char text[] =
		"ok 41 /tmp/x/trace.bin\n"
		"rank 41 3\n"
		"fault 41 1700000000123456789\n"
		"write-error 41 4096 No space left on device\n"
		"cupti-busy 15 CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED\n"   /* a message, not a pid */
		"trace-error 7: cannot create trace.bin\n"
		"ok x /tmp/bad\n"             /* no pid: skipped */
		"ok 0 /tmp/zero\n"            /* pid 0: skipped */
		"fault 42\n"                  /* nothing after the pid: skipped */
		"okay 5 /tmp/other-word\n"    /* not a kind */
		"\n"
		"cupti-error init failed\n"
		"ok 43 /tmp/y/trace.bin.43\n";
	/* each kept line: its kind, pid (0: none) and what follows */
	static const struct { int kind; long pid; const char *rest; } want[] = {
		{ CR_ST_OK, 41, "/tmp/x/trace.bin" },
		{ CR_ST_RANK, 41, "3" },
		{ CR_ST_FAULT, 41, "1700000000123456789" },
		{ CR_ST_WRITE_ERROR, 41, "4096 No space left on device" },
		{ CR_ST_CUPTI_BUSY, 0, "15 CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED" },
		{ CR_ST_TRACE_ERROR, 0, "7: cannot create trace.bin" },
		{ CR_ST_CUPTI_ERROR, 0, "init failed" },
		{ CR_ST_OK, 43, "/tmp/y/trace.bin.43" },
	};
	char *dir = temp_dir();
	struct strbuf path = STRBUF_INIT, err = STRBUF_INIT;
	struct seen s;
	struct cr_run run = CR_RUN_INIT;

	CHECK(dir != NULL);
	if (!dir)
		return;
	sb_addf(&path, "%s/status", dir);
	CHECK(write_file(path.buf, text, strlen(text), &err) == 0);
	memset(&s, 0, sizeof(s));
	CHECK(cr_status_each(path.buf, keep, &s) == 0);
	CHECK_EQ_U(s.n, sizeof(want) / sizeof(want[0]));
	for (int i = 0; i < s.n && i < (int)(sizeof(want) / sizeof(want[0])); i++) {
		CHECK_EQ_U(s.kind[i], want[i].kind);
		CHECK_EQ_U(s.pid[i], want[i].pid);
		CHECK_STR(s.rest[i], want[i].rest);
	}

	/* the processes: two "ok" ones; 41's rank, fault time, write error */
	cr_read_status(path.buf, &run);
	CHECK_EQ_U(run.n, 2);
	for (size_t i = 0; i < run.n; i++) {
		struct cr_proc *p = &run.p[i];
		if (p->pid == 41) {
			CHECK_STR(p->path, "/tmp/x/trace.bin");
			CHECK_STR(p->rank, "3");
			CHECK_EQ_U(p->fault_ns, 1700000000123456789ull);
			CHECK_STR(p->write_err, "byte 4096 (No space left on device)");
		} else {
			CHECK_EQ_U(p->pid, 43);
			CHECK_STR(p->path, "/tmp/y/trace.bin.43");
			CHECK_EQ_U(p->fault_ns, 0);
			CHECK(p->write_err == NULL);
		}
		free(p->path);
		free(p->write_err);
	}
	free(run.p);

	/* a missing file: -1, nothing called */
	memset(&s, 0, sizeof(s));
	sb_addf(&path, ".missing");
	CHECK(cr_status_each(path.buf, keep, &s) < 0);
	CHECK_EQ_U(s.n, 0);
	remove_tree(dir);
	free(dir);
	sb_release(&path);
	sb_release(&err);
}

/* open descriptors of this process (/proc/self/fd), or -1 */
static int open_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;
	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/* a write that fails (the full device) closes the file it opened, and
 * says so with the path and the cause */
UNIT_TEST(write_file_closes_on_failure)
{
	struct strbuf err = STRBUF_INIT;
	int before = open_fds();

	if (access("/dev/full", W_OK) != 0)
		return;   /* (no /dev/full here) */
	for (int i = 0; i < 3; i++)
		CHECK(write_file("/dev/full", "x", 1, &err) < 0);
	CHECK(strstr(err.buf, "/dev/full: write failed: ") != NULL);
	CHECK_EQ_U(open_fds(), before);
	sb_release(&err);
}

UNIT_TEST(write_file_whole_or_not_at_all)
{
	char *dir = temp_dir();
	struct strbuf path = STRBUF_INIT, tmp = STRBUF_INIT, err = STRBUF_INIT, got = STRBUF_INIT;
	struct stat st;

	CHECK(dir != NULL);
	if (!dir)
		return;
	sb_addf(&path, "%s/report.md", dir);
	sb_addf(&tmp, "%s.tmp", path.buf);
	CHECK(write_file_whole(path.buf, "first\n", 6, &err) == 0);
	CHECK(read_file(path.buf, &got, &err) == 0);
	CHECK_STR(got.buf, "first\n");
	CHECK(stat(tmp.buf, &st) < 0);
	/* replaced whole */
	CHECK(write_file_whole(path.buf, "second, longer\n", 15, &err) == 0);
	sb_reset(&got);
	CHECK(read_file(path.buf, &got, &err) == 0);
	CHECK_STR(got.buf, "second, longer\n");
	/* the temporary cannot be made (a folder in its place): an error
	 * naming the file, the earlier file as it was */
	CHECK(mkdir(tmp.buf, 0755) == 0);
	CHECK(write_file_whole(path.buf, "third\n", 6, &err) < 0);
	CHECK(strstr(err.buf, path.buf) != NULL);
	CHECK(strstr(err.buf, "cannot write") != NULL);
	sb_reset(&got);
	CHECK(read_file(path.buf, &got, &err) == 0);
	CHECK_STR(got.buf, "second, longer\n");
	rmdir(tmp.buf);
	/* the rename fails (the target is a non-empty folder): no PATH.tmp left */
	sb_reset(&err);
	sb_reset(&path);
	sb_addf(&path, "%s/sub", dir);
	CHECK(mkdir(path.buf, 0755) == 0);
	sb_reset(&got);
	sb_addf(&got, "%s/sub/x", dir);
	CHECK(write_file(got.buf, "x", 1, &err) == 0);
	CHECK(write_file_whole(path.buf, "y", 1, &err) < 0);
	sb_reset(&tmp);
	sb_addf(&tmp, "%s.tmp", path.buf);
	CHECK(stat(tmp.buf, &st) < 0);
	remove_tree(dir);
	free(dir);
	sb_release(&path);
	sb_release(&tmp);
	sb_release(&err);
	sb_release(&got);
}
