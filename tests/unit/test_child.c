/*
 * test_child.c - common/child.c's program lookup from several threads:
 * shrink looks for g++ on repro.cu's build thread while its main thread
 * looks for compute-sanitizer, and each must get its own answer (with one
 * shared buffer the sanitizer's run once started g++).  And the runs of a
 * built repro (src/repro/repro.c), which go through it.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../common/child.h"
#include "../../common/strbuf.h"
#include "../../common/util.h"
#include "../../src/repro/repro.h"
#include "unit.h"

struct finder {
	const char *name;
	int wrong, missing;
};

static void *find_many(void *arg)
{
	struct finder *f = arg;
	size_t n = strlen(f->name);
	for (int i = 0; i < 3000; i++) {
		const char *p = child_find_program(f->name, "/bin");
		size_t l = p ? strlen(p) : 0;
		if (!p)
			f->missing++;
		else if (l < n + 1 || strcmp(p + l - n, f->name) || p[l - n - 1] != '/')
			f->wrong++;
	}
	return NULL;
}

UNIT_TEST(child_find_program_per_thread)
{
	struct finder a = { "sh", 0, 0 }, b = { "cat", 0, 0 };
	pthread_t ta, tb;
	CHECK(pthread_create(&ta, NULL, find_many, &a) == 0);
	CHECK(pthread_create(&tb, NULL, find_many, &b) == 0);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	CHECK_EQ_U(a.missing + b.missing, 0);
	CHECK_EQ_U(a.wrong, 0);
	CHECK_EQ_U(b.wrong, 0);
}

/* A script in a fresh temporary folder (freed by the caller with rm_script). */
static char *script(const char *body)
{
	char dir[] = "/tmp/gpureduce-unit-XXXXXX";
	struct strbuf p = STRBUF_INIT, e = STRBUF_INIT;
	if (!mkdtemp(dir))
		return NULL;
	sb_addf(&p, "%s/run.sh", dir);
	if (write_file(p.buf, body, strlen(body), &e) < 0 || chmod(p.buf, 0755) < 0) {
		sb_release(&p);
		sb_release(&e);
		return NULL;
	}
	sb_release(&e);
	return sb_detach(&p, NULL);
}

static void rm_script(char *path)
{
	if (!path)
		return;
	unlink(path);
	*strrchr(path, '/') = 0;
	rmdir(path);
	free(path);
}

/* Each of r[0..n) exited 1 with kernel k(int)'s fault line, error err */
static void check_faulted(const struct repro_run *r, int n, const char *err)
{
	for (int i = 0; i < n; i++) {
		CHECK_EQ_U(r[i].exit_code, 1);
		CHECK_STR(r[i].error, err);
		CHECK_STR(r[i].kernel, "k(int)");
	}
}

/* repro.cu's runs at the end of a shrink: a run that printed its fault
 * line is counted then, without waiting for its exit (on a GPU, the
 * driver's teardown of the faulted context); clean runs and runs past the
 * time limit as before. */
UNIT_TEST(repro_run_many_counts_the_fault_line)
{
	char *lingers = script("#!/bin/sh\n"
			       "echo 'repro: k(int) faulted: CUDA_ERROR_ILLEGAL_ADDRESS (700): an illegal memory access'\n"
			       "exec sleep 5\n");
	char *clean = script("#!/bin/sh\necho 'k ran clean'\nexit 0\n");
	char *slow = script("#!/bin/sh\nprintf 'repro: k(int) faulted: CUDA_ERROR_'\nexec sleep 5\n");
	struct repro_run r[4];
	struct strbuf e = STRBUF_INIT;
	double t0;

	CHECK(lingers && clean && slow);
	if (!lingers || !clean || !slow)
		goto out;
	t0 = now_sec();
	CHECK(repro_run_many(lingers, 4, 3, 60, r, &e) == 0);
	CHECK(now_sec() - t0 < 2.5);
	check_faulted(r, 4, "CUDA_ERROR_ILLEGAL_ADDRESS");
	CHECK(repro_run_many(clean, 2, 2, 60, r, &e) == 0);
	CHECK_EQ_U(r[0].exit_code, 0);
	CHECK_EQ_U(r[1].exit_code, 0);
	CHECK(!r[0].error[0]);
	/* half a line is not a fault yet: the limit ends it */
	t0 = now_sec();
	CHECK(repro_run_many(slow, 1, 1, 0.5, r, &e) == 0);
	CHECK_EQ_U(r[0].exit_code, 124);
	CHECK(now_sec() - t0 < 3);
out:
	sb_release(&e);
	rm_script(lingers);
	rm_script(clean);
	rm_script(slow);
}

/* The driver prints a device assert's messages from a thread of its own,
 * a piece at a time: the repro's fault line can come in mid-line
 * (lineinfo-assert on an H100, 2026-12-07). */
UNIT_TEST(repro_run_finds_the_fault_line_mid_line)
{
	char *mid = script("#!/bin/sh\n"
			   "echo 'a.cu:24: void k(int): block: [0,0,0], thread: [71,0,0] Assertion `b < n` failed.'\n"
			   "printf 'a.cu:24: void k(int): block: [0,0' >&2\n"
			   "echo 'repro: k(int) faulted: CUDA_ERROR_ASSERT (710): device-side assert triggered'\n"
			   "echo ',0], thread: [72,0,0] Assertion `b < n` failed.' >&2\n"
			   "exit 1\n");
	/* "repro: " must come before " faulted: ", on the same line */
	char *noline = script("#!/bin/sh\necho 'repro: try 1 of 20 ran clean'\n"
			      "echo 'k(int) faulted: CUDA_ERROR_ASSERT (710): x'\nexit 1\n");
	struct repro_run r[2];
	struct strbuf e = STRBUF_INIT;

	CHECK(mid && noline);
	if (!mid || !noline)
		goto out;
	CHECK(repro_run_many(mid, 2, 2, 60, r, &e) == 0);
	check_faulted(r, 2, "CUDA_ERROR_ASSERT");
	CHECK(repro_run_many(noline, 1, 1, 60, r, &e) == 0);
	CHECK_EQ_U(r[0].exit_code, 1);
	CHECK(!r[0].error[0]);
	CHECK(!r[0].kernel[0]);
out:
	sb_release(&e);
	rm_script(mid);
	rm_script(noline);
}
