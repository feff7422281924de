/*
 * test_shrink_phases.c - the phase table (reducer/shrink-phases.h): every
 * row named once, with help; --phases/--skip-phases parsed into the
 * selection the driver reads, unknown words refused with the valid names.
 */
#include <string.h>

#include "../../common/strbuf.h"
#include "../../reducer/shrink-phases.h"
#include "unit.h"

UNIT_TEST(phase_table_names_each_row_once)
{
	for (int k = 0; k < PH__COUNT; k++) {
		CHECK(phase_defs[k].name && *phase_defs[k].name);
		CHECK(phase_defs[k].help && *phase_defs[k].help);
		CHECK_STR(phase_name((enum phase_id)k), phase_defs[k].name);
		for (int j = 0; j < k; j++)
			CHECK(strcmp(phase_defs[j].name, phase_defs[k].name));
		/* a phase the driver loops over is neither a step nor a base phase */
		if (phase_defs[k].fn)
			CHECK(!(phase_defs[k].flags & (PHASE_STEP | PHASE_BASE)));
		/* selectable iff not a step */
		CHECK((phase_lookup(phase_defs[k].name) == k) == !(phase_defs[k].flags & PHASE_STEP));
	}
	CHECK_STR(phase_name(PH_DATA), "data");
	CHECK_STR(phase_name(PH_REPRO), "repro.cu");
	CHECK(phase_lookup("verify") < 0);
	CHECK(phase_lookup("nope") < 0);
}

UNIT_TEST(phase_select_phases_and_skip)
{
	unsigned char sel[PH__COUNT];
	struct strbuf err = STRBUF_INIT;

	memset(sel, 0, sizeof(sel));
	CHECK(phase_select("grid,sizes", 0, sel, &err) == 0);
	CHECK_EQ_U(sel[PH_GRID], PHASE_SEL_ON);
	CHECK_EQ_U(sel[PH_SIZES], PHASE_SEL_ON);
	CHECK_EQ_U(sel[PH_DATA], PHASE_SEL_OFF);
	CHECK_EQ_U(sel[PH_SLICE], PHASE_SEL_OFF);
	CHECK_EQ_U(sel[PH_CONFIRM], PHASE_SEL_DEFAULT);
	CHECK(phase_wanted(sel, PH_GRID, 0));
	CHECK(phase_wanted(sel, PH_SIZES, 0));       /* named: runs without --cut-buffers */
	CHECK(!phase_wanted(sel, PH_DATA, 1));
	CHECK(phase_wanted(sel, PH_VERIFY, 0));      /* steps always run */
	/* a later --skip-phases refines it */
	CHECK(phase_select("grid", 1, sel, &err) == 0);
	CHECK(!phase_wanted(sel, PH_GRID, 0));
	CHECK(phase_wanted(sel, PH_SIZES, 0));

	memset(sel, 0, sizeof(sel));
	CHECK(phase_select("data,slice", 1, sel, &err) == 0);
	CHECK(!phase_wanted(sel, PH_DATA, 0));
	CHECK(!phase_wanted(sel, PH_SLICE, 0));
	CHECK(phase_wanted(sel, PH_GRID, 0));
	CHECK(!phase_wanted(sel, PH_SIZES, 0));      /* off by default */
	CHECK(phase_wanted(sel, PH_SIZES, 1));

	/* unknown, empty, a step: refused, naming the valid ones */
	const char *bad[] = { "data,bogus", "", "data,,grid", "verify" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		sb_reset(&err);
		CHECK(phase_select(bad[i], i & 1, sel, &err) < 0);
		CHECK(strstr(err.buf, "valid: slice,suffix,ddmin-launches,data,grid,scalars,sizes") != NULL);
		CHECK(!strchr(err.buf, '\n'));
	}
	sb_release(&err);
}
