/*
 * test_rate.c - the flaky-fault rate policy: the faults needed for a rate
 * near the original's, and which earlier state a dropped rate falls back
 * to.
 */
#include <math.h>

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

UNIT_TEST(rate_drop_p_is_fishers_exact_test)
{
	/* 4/10 against 6/10: sum over x <= 4 of C(10,x) C(10,10-x) / C(20,10)
	 * = 60626 / 184756 */
	CHECK(fabs(rate_drop_p(4, 10, 6, 10) - 60626.0 / 184756) < 1e-9);
	CHECK(fabs(rate_drop_p(0, 10, 6, 10) - 1001.0 / 184756) < 1e-9);
	CHECK(fabs(rate_drop_p(1, 10, 6, 10) - 5291.0 / 184756) < 1e-9);
	CHECK(fabs(rate_drop_p(2, 10, 6, 10) - 15686.0 / 184756) < 1e-9);
	CHECK(rate_drop_p(10, 10, 6, 10) > 0.999);   /* every run: no drop at all */
	CHECK(rate_drop_p(3, 0, 6, 10) == 1.0);      /* nothing measured */
	CHECK(rate_drop_p(3, 10, 6, 0) == 1.0);
}

UNIT_TEST(rate_dropped_tells_a_race_s_chance_from_a_drop)
{
	/* a steady original: the 70 % rule alone */
	CHECK(rate_dropped(2, 5, 2, 2) == 1);
	CHECK(rate_dropped(3, 5, 2, 2) == 1);
	CHECK(rate_dropped(4, 5, 2, 2) == 0);
	CHECK(rate_dropped(2, 5, 0, 0) == 1);        /* no measurement: as steady */
	/* a race at 6 of 10: 4 of 10 is below 70 % of it but chance (p 0.33),
	 * 2 of 10 still chance (p 0.085), 1 of 10 a drop (p 0.029) */
	CHECK(rate_dropped(4, 10, 6, 10) == 0);
	CHECK(rate_dropped(2, 10, 6, 10) == 0);
	CHECK(rate_dropped(1, 10, 6, 10) == 1);
	CHECK(rate_dropped(0, 10, 6, 10) == 1);
	CHECK(rate_dropped(5, 10, 6, 10) == 0);      /* at rate_need: holds */
}
