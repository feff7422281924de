/*
 * main.c - runs every unit test listed in list.h; usage: unit [BUILD_DIR] [name-filter]
 */
#include <stdlib.h>
#include <string.h>

#include "../../src/cmds.h"
#include "unit.h"

int unit_failures;

/* The library's way to name the program to spawn (src/gpureduce.c in the
 * real binary).  No unit test starts a worker or a sanitizer run. */
const char *gpureduce_exe(void)
{
	return "/proc/self/exe";
}
const char *unit_build_dir = "build";

#define T(name) void test_##name(void);
#include "list.h"
#undef T

static const struct { const char *name; void (*fn)(void); } tests[] = {
#define T(name) { #name, test_##name },
#include "list.h"
#undef T
};

int main(int argc, char **argv)
{
	int passed = 0, failed = 0;
	if (argc > 1)
		unit_build_dir = argv[1];
	for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++) {
		if (argc > 2 && !strstr(tests[i].name, argv[2]))
			continue;
		int before = unit_failures;
		tests[i].fn();
		if (unit_failures == before) {
			passed++;
			printf("ok   %s\n", tests[i].name);
		} else {
			failed++;
			printf("FAIL %s\n", tests[i].name);
		}
		fflush(stdout);
	}
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
