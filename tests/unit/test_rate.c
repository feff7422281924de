/*
 * test_rate.c - the flaky-fault rate policy: the faults needed for a rate
 * near the original's, and which earlier state a dropped rate falls back
 * to.
 */
#include "../../reducer/rate.h"
#include "unit.h"

UNIT_TEST(rate_need_is_70_percent_of_the_original)
{
	CHECK(rate_need(5, 2, 2) == 4);      /* steady original: 4 of 5 */
	CHECK(rate_need(10, 6, 10) == 5);    /* 0.6 -> 0.42 of 10 -> 5 */
	CHECK(rate_need(10, 1, 10) == 1);    /* rare: at least one */
	CHECK(rate_need(5, 0, 0) == 4);      /* no measurement: as steady */
	CHECK(rate_need(1, 1, 4) == 1);
	CHECK(rate_need(10, 10, 10) == 7);
}

UNIT_TEST(rate_pick_latest_state_that_holds)
{
	int a[] = { 2, 5, 4 };               /* latest first */
	int b[] = { 1, 3, 2 };
	int c[] = { 1, 1 };
	int d[] = { 3, 3 };

	CHECK(rate_pick(a, 3, 4, 2) == 1);   /* the first that reaches need */
	CHECK(rate_pick(a, 3, 5, 2) == 1);
	CHECK(rate_pick(b, 3, 4, 1) == 1);   /* none holds: the best, if it beats the current */
	CHECK(rate_pick(b, 3, 4, 3) == -1);  /* none beats the current: keep it */
	CHECK(rate_pick(c, 2, 4, 1) == -1);
	CHECK(rate_pick(d, 2, 4, 2) == 0);   /* equals: the latest */
	CHECK(rate_pick(d, 0, 4, 0) == -1);
}
