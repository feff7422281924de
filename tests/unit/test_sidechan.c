/*
 * test_sidechan.c - the side channel (replay/sidechan.h): what replay and
 * repro.cu print about where buffers and module globals landed reads back
 * as the same values (format -> parse, extremes included), a line is
 * found among a sanitizer's own output, malformed or torn lines are
 * refused, and the printf repro.cu is written with uses the module's own
 * format.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "../../common/strbuf.h"
#include "../../replay/sidechan.h"
#include "unit.h"

UNIT_TEST(sidechan_roundtrip)
{
	static const struct sc_buffer bufs[] = {
		{ 0, 0x7f0000200000ull, 4000 }, { 17, 0, 0 }, { ~0ull, ~0ull, ~0ull }, { 3, 0xabcdefull, 1 },
	};
	static const char *const names[] = { "d_limit", "_ZN2ns5tableE", "x" };
	struct strbuf sb = STRBUF_INIT;

	for (size_t i = 0; i < sizeof(bufs) / sizeof(bufs[0]); i++) {
		struct sc_buffer got;
		sb_reset(&sb);
		sidechan_format_buffer(&sb, &bufs[i]);
		CHECK(sb.len && sb.buf[sb.len - 1] == '\n');
		CHECK(sidechan_kind(sb.buf) == SC_BUFFER);
		CHECK(sidechan_parse_buffer(sb.buf, &got) == 0);
		CHECK_EQ_U(got.index, bufs[i].index);
		CHECK_EQ_U(got.ptr, bufs[i].ptr);
		CHECK_EQ_U(got.size, bufs[i].size);
	}
	sb_reset(&sb);
	sidechan_format_buffer(&sb, &bufs[0]);
	CHECK_STR(sb.buf, "gpureduce-buffer 0 0x7f0000200000 4000\n");

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		struct sc_global g = { 0x7f00deadbe00ull + i, 4 << i, names[i], 0 }, got;
		sb_reset(&sb);
		CHECK(sidechan_format_global(&sb, &g) == 0);
		CHECK(sidechan_kind(sb.buf) == SC_GLOBAL);
		CHECK(sidechan_parse_global(sb.buf, &got) == 0);
		CHECK_EQ_U(got.ptr, g.ptr);
		CHECK_EQ_U(got.size, g.size);
		CHECK(got.name_len == strlen(names[i]) && !strncmp(got.name, names[i], got.name_len));
	}
	/* names the line cannot carry are not printed */
	{
		static const char *const bad[] = { "", "two words", "tab\there", "new\nline", NULL };
		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			struct sc_global g = { 0x1000, 4, bad[i], 0 };
			sb_reset(&sb);
			CHECK(sidechan_format_global(&sb, &g) < 0 && sb.len == 0);
		}
	}
	sb_release(&sb);
}

UNIT_TEST(sidechan_found_in_output_and_malformed_refused)
{
	const char *out = "========= COMPUTE-SANITIZER\n"
			  "gpureduce-global 0x7f0000001000 4 d_limit\r\n"
			  "========= Invalid __global__ write of size 4 bytes\n"
			  "=========     at scale+0x90gpureduce-buffer 2 0x7f0000200000 4000\n"
			  "replay: faulted\n";
	const char *p;
	struct sc_buffer b;
	struct sc_global g;

	/* found where it begins, even after a sanitizer's text on its line */
	p = sidechan_next(out, SC_BUFFER);
	CHECK(p && sidechan_parse_buffer(p, &b) == 0 && b.index == 2 && b.size == 4000);
	CHECK(sidechan_next(p + 1, SC_BUFFER) == NULL);
	p = sidechan_next(out, SC_GLOBAL);
	CHECK(p && sidechan_parse_global(p, &g) == 0 && g.ptr == 0x7f0000001000ull && g.name_len == 7);
	CHECK(sidechan_kind("========= x") == SC_NONE && sidechan_kind("replay: x") == SC_NONE);

	{
		static const char *const bad_buf[] = {
			"gpureduce-buffer", "gpureduce-buffer ", "gpureduce-buffer 1 0x10", "gpureduce-buffer 1 0x10 ",
			"gpureduce-buffer 1 10 4", "gpureduce-buffer -1 0x10 4", "gpureduce-buffer 1 0x 4",
			"gpureduce-buffer 1 0x10 4 trailing", "gpureduce-buffer 1  0x10 4", "gpureduce-buffer 1 0x10 4x",
			"gpureduce-buffer 18446744073709551616 0x10 4", "gpureduce-buffer 1 0x10000000000000000 4",
			"gpureduce-buffer 1 0xg 4", "gpureduce-buffer 1 0x10 4\rjunk", "gpureduce-buffer\t1 0x10 4",
			"gpureduce-global 0x10 4 name",
		};
		for (size_t i = 0; i < sizeof(bad_buf) / sizeof(bad_buf[0]); i++) {
			memset(&b, 0x55, sizeof(b));
			if (sidechan_parse_buffer(bad_buf[i], &b) != -1 || b.index || b.ptr || b.size) {
				unit_failures++;
				fprintf(stderr, "    buffer line %zu was taken: \"%s\"\n", i, bad_buf[i]);
			}
		}
	}
	{
		static const char *const bad_glob[] = {
			"gpureduce-global 0x10 4", "gpureduce-global 0x10 4 ", "gpureduce-global 0x10 4 two words",
			"gpureduce-global 10 4 x", "gpureduce-global 0x10 -4 x", "gpureduce-global 0x10 4 x\ty",
			"gpureduce-global 0x10 4 \n", "gpureduce-buffer 1 0x10 4",
		};
		for (size_t i = 0; i < sizeof(bad_glob) / sizeof(bad_glob[0]); i++) {
			memset(&g, 0x55, sizeof(g));
			if (sidechan_parse_global(bad_glob[i], &g) != -1 || g.ptr || g.name) {
				unit_failures++;
				fprintf(stderr, "    global line %zu was taken: \"%s\"\n", i, bad_glob[i]);
			}
		}
	}
	/* a line ends at '\n', "\r\n" or the end of the text */
	CHECK(sidechan_parse_buffer("gpureduce-buffer 1 0x10 4\nnext", &b) == 0 && b.size == 4);
	CHECK(sidechan_parse_buffer("gpureduce-buffer 1 0xAB 4\r\n", &b) == 0 && b.ptr == 0xab);
}

UNIT_TEST(sidechan_repro_printf_is_the_format)
{
	struct strbuf sb = STRBUF_INIT, want = STRBUF_INIT;
	sidechan_emit_buffer(&sb, 3, "buf[3].ptr", 4096);
	CHECK_STR(sb.buf, "printf(\"gpureduce-buffer %llu 0x%llx %llu\\n\", 3ull, (unsigned long long)(buf[3].ptr), "
		  "4096ull)");
	/* the literal is SC_BUFFER_FMT, escaped */
	sb_adds(&want, "printf(\"");
	sb_add(&want, SC_BUFFER_FMT, strlen(SC_BUFFER_FMT) - 1);
	sb_adds(&want, "\\n\"");
	CHECK(!strncmp(sb.buf, want.buf, want.len));
	/* and what it prints reads back */
	{
		char line[128];
		struct sc_buffer b;
		snprintf(line, sizeof(line), SC_BUFFER_FMT, 3ull, 0x7f0000000100ull, 4096ull);
		CHECK(sidechan_parse_buffer(line, &b) == 0 && b.index == 3 && b.ptr == 0x7f0000000100ull &&
		      b.size == 4096);
	}
	sb_release(&sb);
	sb_release(&want);
}
