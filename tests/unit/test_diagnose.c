/*
 * test_diagnose.c - reading compute-sanitizer's output: when a run's
 * reports are complete (so shrink can stop the run there) and when they
 * are not yet.
 */
#include <stdlib.h>
#include <string.h>

#include "../../addr/params.h"
#include "../../diagnose/diagnose.h"
#include "unit.h"

static const char report[] =
	"========= Invalid __global__ write of size 4 bytes\n"
	"=========     at scale(float *, const float *, int, int, unsigned int)+0x190\n"
	"=========     by thread (0,1,0) in block (8,0,0)\n"
	"=========     Access to 0x7f7150d800a0 is out of bounds\n"
	"=========         Host Frame: _start [0x38a0] in gpureduce\n"
	"========= \n";

UNIT_TEST(diagnose_complete_reports_counts_closed_ones)
{
	char buf[4096];

	CHECK(diagnose_complete_reports("") == 0);
	CHECK(diagnose_complete_reports("========= COMPUTE-SANITIZER\ngpureduce-buffer 0 0x10 4\n") == 0);
	snprintf(buf, sizeof(buf), "========= COMPUTE-SANITIZER\ngpureduce-buffer 0 0x7f6d50980000 4\n%s", report);
	CHECK(diagnose_complete_reports(buf) == 1);
	/* the same report cut anywhere before its closing line is not complete */
	for (size_t cut = 0; cut < strlen(buf) - 1; cut++) {
		char part[4096];
		snprintf(part, sizeof(part), "%.*s", (int)cut, buf);
		CHECK(diagnose_complete_reports(part) == 0);
	}
	/* a closing line without the blank, and a misaligned report */
	snprintf(buf, sizeof(buf), "%s========= Misaligned Shared or Local Address\n=========     at k+0x10\n=========\n",
		 report);
	CHECK(diagnose_complete_reports(buf) == 2);
	/* "=========" lines inside a report (backtrace text) do not close it */
	CHECK(diagnose_complete_reports("========= Invalid __global__ read of size 4 bytes\n"
					"=========     at k+0x10\n=========     Host Frame: x\n") == 0);
	/* an open second report after a closed first */
	snprintf(buf, sizeof(buf), "%s========= Invalid __shared__ write of size 16 bytes\n=========     at k+0xd0\n",
		 report);
	CHECK(diagnose_complete_reports(buf) == 1);
}

/* An assert's printed text can hold "at " ("const float *, ..."): the
 * site is the sanitizer's own indented "at" line. */
UNIT_TEST(diagnose_assert_site_is_the_sanitizer_line)
{
	static const char out[] =
		"lineinfo-assert.cu:16: void histogram(const float *, unsigned int *, int, int): block: [3,0,0], "
		"thread: [9,0,0] Assertion `bin >= 0 && bin < bins` failed.\n"
		"========= Device-side assertion failed\n"
		"=========     at histogram(const float *, unsigned int *, int, int)+0x1f0 in lineinfo-assert.cu:16\n"
		"=========     by thread (9,0,0) in block (3,0,0)\n"
		"========= \n";
	char site[512];

	CHECK(diagnose_site_rel(out, NULL, site, sizeof(site)) == 0);
	CHECK(strstr(site, "at histogram(const float *, unsigned int *, int, int)+0x1f0") != NULL);
	CHECK(strstr(site, "assert at histogram(") != NULL);
}

/* A hardware exception (a TMA access out of its buffer on the H200) comes
 * with its PC and thread but no address: it is a report of its own (the
 * run can stop after it), and its site is the exception and PC, so that
 * shrink's site check compares it; a device backtrace's "Device Frame"
 * line and an assert's line are not exceptions. */
UNIT_TEST(diagnose_hardware_exception_is_a_site)
{
	static const char warp[] =
		"========= COMPUTE-SANITIZER\n"
		"gpureduce-buffer 0 0x329a000000 2097152\n"
		"========= Warp illegal address\n"
		"=========     at row_sum_kernel+0x990 in train.py:44\n"
		"=========     by thread (32,0,0) in block (0,0,0)\n"
		"=========         Device Frame: row_sum_kernel+0x990 in train.py:44\n"
		"========= \n";
	static const char frame_only[] =
		"========= COMPUTE-SANITIZER\n"
		"=========         Device Frame: k+0x10\n"
		"========= Device-side assertion failed\n"
		"=========     at k+0x10\n"
		"========= \n";
	char site[512];

	CHECK(diagnose_complete_reports(warp) == 1);
	CHECK(diagnose_site_rel(warp, NULL, site, sizeof(site)) == 0);
	CHECK(!strcmp(site, "Warp illegal address at row_sum_kernel+0x990 in train.py:44"));
	/* misaligned and lane exceptions alike */
	CHECK(diagnose_complete_reports("========= Lane misaligned address\n=========     at k+0x20\n=========\n") == 1);
	CHECK(diagnose_site_rel("========= Lane misaligned address\n=========     at k+0x20\n=========\n", NULL, site,
				sizeof(site)) == 0);
	CHECK(!strcmp(site, "Lane misaligned address at k+0x20"));
	/* no exception here: the frame is not one, the assert is read as one */
	CHECK(diagnose_complete_reports(frame_only) == 0);
	CHECK(diagnose_site_rel(frame_only, NULL, site, sizeof(site)) == 0);
	CHECK(strstr(site, "assert at k+0x10") != NULL);
	/* cut before its closing line: not complete yet */
	CHECK(diagnose_complete_reports("========= Warp illegal address\n=========     at k+0x990\n") == 0);
}

/* The bare kernel name the sanitizer's kernel filter and the slice's check
 * match: an identifier, found in both the mangled and the demangled name. */
UNIT_TEST(diagnose_kernel_bare_names)
{
	static const struct { const char *name, *bare; } cases[] = {
		{ "_Z9row_normsPKfPfi", "row_norms" },
		{ "_Z13scale_nocheckPfPKfi", "scale_nocheck" },
		{ "_ZN2at6native29vectorized_elementwise_kernelILi4ENS0_11FillFunctorIfEESt5arrayIPcLm1EEEEviT0_T1_",
		  "vectorized_elementwise_kernel" },
		{ "_ZN12_GLOBAL__N_110pad_kernelEPfi", "pad_kernel" },
		{ "triton_poi_fused_add_0", "triton_poi_fused_add_0" },
		{ "ragged_sum_kernel", "ragged_sum_kernel" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *b = params_base_name(cases[i].name);
		CHECK(!strcmp(b, cases[i].bare));
		if (strcmp(b, cases[i].bare))
			fprintf(stderr, "    %s -> '%s', want '%s'\n", cases[i].name, b, cases[i].bare);
		/* kns= matches a substring of the mangled name */
		CHECK(strstr(cases[i].name, b) != NULL);
		free(b);
	}
}
