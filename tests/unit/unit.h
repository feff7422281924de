/*
 * unit.h - the tiny C unit-test harness.  A test is `void test_NAME(void)`
 * in a tests/unit file, registered once in tests/unit/list.h; CHECK()
 * records a failure (with file:line and the expression) without stopping
 * the test.  The runner prints one line per test and the summary line
 * "N passed, N failed".
 */
#ifndef GPUREDUCE_UNIT_H
#define GPUREDUCE_UNIT_H

#include <stdio.h>

extern int unit_failures;
extern const char *unit_build_dir;   /* $BUILD, for tests that need built files */

#define CHECK(expr) do { if (!(expr)) { unit_failures++; \
	fprintf(stderr, "    CHECK failed at %s:%d: %s\n", __FILE__, __LINE__, #expr); } } while (0)
#define CHECK_EQ_U(a, b) do { unsigned long long a_ = (a), b_ = (b); if (a_ != b_) { unit_failures++; \
	fprintf(stderr, "    CHECK failed at %s:%d: %s == %s (%llu vs %llu, 0x%llx vs 0x%llx)\n", \
		__FILE__, __LINE__, #a, #b, a_, b_, a_, b_); } } while (0)
#define CHECK_STR(a, b) do { const char *a_ = (a), *b_ = (b); if (!a_ || !b_ || strcmp(a_, b_)) { unit_failures++; \
	fprintf(stderr, "    CHECK failed at %s:%d: %s == %s (\"%s\" vs \"%s\")\n", \
		__FILE__, __LINE__, #a, #b, a_ ? a_ : "(null)", b_ ? b_ : "(null)"); } } while (0)

#define UNIT_TEST(name) void test_##name(void)

#endif
