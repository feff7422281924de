/*
 * test_child.c - common/child.c's program lookup from several threads:
 * shrink looks for g++ on repro.cu's build thread while its main thread
 * looks for compute-sanitizer, and each must get its own answer (with one
 * shared buffer the sanitizer's run once started g++).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../../common/child.h"
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
