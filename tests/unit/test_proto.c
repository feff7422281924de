/*
 * test_proto.c - the worker protocol (replay/proto.h), both ends: every
 * message survives a round trip through its formatter and parser, text
 * fields lose their tabs and newlines, lines arrive split anywhere, and
 * malformed lines (wrong tag, field count or numbers) are refused.
 */
#include <stdlib.h>
#include <string.h>

#include "../../common/strbuf.h"
#include "../../common/util.h"
#include "../../replay/proto.h"
#include "unit.h"

/* The formatted line without its newline (formatters end every line). */
static char *one_line(struct strbuf *sb)
{
	CHECK(sb->len > 0 && sb->buf[sb->len - 1] == '\n');
	CHECK(memchr(sb->buf, '\n', sb->len) == sb->buf + sb->len - 1);
	return proto_take_line(sb);
}

UNIT_TEST(proto_hello_roundtrip_and_malformed)
{
	struct strbuf sb = STRBUF_INIT;
	const char *why;
	char *line;
	int n = -5;

	proto_format_ready(&sb, 8);
	line = one_line(&sb);
	CHECK(proto_parse_hello(line, &n, &why) == PROTO_READY);
	CHECK_EQ_U(n, 8);
	free(line);

	proto_format_fatal(&sb, "no CUDA device\tfound\nat all");
	line = one_line(&sb);
	CHECK(proto_parse_hello(line, &n, &why) == PROTO_FATAL);
	CHECK_STR(why, "no CUDA device found at all");
	free(line);

	/* a bare READY (an older worker) stands for one device */
	CHECK(proto_parse_hello("READY", &n, &why) == PROTO_READY);
	CHECK_EQ_U(n, 1);
	/* anything else is not a start-up line: the whole line is the reason */
	CHECK(proto_parse_hello("Segmentation fault", &n, &why) == -1);
	CHECK_STR(why, "Segmentation fault");
	CHECK(proto_parse_hello("READY\t", &n, &why) == -1);
	CHECK(proto_parse_hello("READY\ttwo", &n, &why) == -1);
	CHECK(proto_parse_hello("READY\t0", &n, &why) == -1);
	CHECK(proto_parse_hello("READY\t2\t3", &n, &why) == -1);
	CHECK(proto_parse_hello("READYX", &n, &why) == -1);
	CHECK(proto_parse_hello("FATAL", &n, &why) == -1);
	sb_release(&sb);
}

UNIT_TEST(proto_run_roundtrip_and_malformed)
{
	struct strbuf sb = STRBUF_INIT;
	struct replay_opts o = REPLAY_OPTS_INIT, got;
	const char *trace = NULL;
	char *line;

	o.guard = 3;
	o.stop_before = 1234567;
	o.snap_mode = SNAP_REACHABLE;
	o.snap_path = "/tmp/a b/snap.bin";
	o.skip_path = "/tmp/w/hunt-3.skip";
	o.snap_go_on = 1;
	o.recycle = 1;
	proto_format_run(&sb, &o, "/tmp/t\tx.bin");
	line = one_line(&sb);
	CHECK(proto_parse_run(line, &got, &trace) == 0);
	CHECK_STR(got.skip_path, "/tmp/w/hunt-3.skip");
	CHECK_EQ_U(got.snap_go_on, 1);
	CHECK_EQ_U(got.recycle, 1);
	CHECK_EQ_U(got.guard, 3);
	CHECK_EQ_U(got.stop_before, 1234567);
	CHECK_EQ_U(got.snap_mode, SNAP_REACHABLE);
	CHECK_STR(got.snap_path, "/tmp/a b/snap.bin");
	CHECK_STR(trace, "/tmp/t x.bin");
	/* what the line does not carry keeps its default */
	CHECK_EQ_U(got.scan_limit, 256ull << 20);
	free(line);

	o = (struct replay_opts)REPLAY_OPTS_INIT;
	proto_format_run(&sb, &o, "t.bin");
	line = one_line(&sb);
	CHECK(proto_parse_run(line, &got, &trace) == 0);
	CHECK(got.snap_path == NULL);
	CHECK(got.skip_path == NULL);
	CHECK_EQ_U(got.stop_before, (unsigned long long)-1);
	CHECK_EQ_U(got.recycle, 0);
	free(line);
	{
		/* a line of six fields (before the skip list) is still taken */
		char six[] = "RUN\t1\t-1\t0\t-\tt.bin";
		CHECK(proto_parse_run(six, &got, &trace) == 0);
		CHECK(got.skip_path == NULL);
		CHECK_STR(trace, "t.bin");
		/* and one of seven (before snap_go_on): it stops at the snapshot */
		char seven[] = "RUN\t1\t12\t1\ts.bin\tt.bin\t-";
		CHECK(proto_parse_run(seven, &got, &trace) == 0);
		CHECK_EQ_U(got.snap_go_on, 0);
		CHECK_EQ_U(got.stop_before, 12);
		/* and one of eight (before recycle): no recycling */
		char eight[] = "RUN\t1\t12\t1\ts.bin\tt.bin\t-\t1";
		CHECK(proto_parse_run(eight, &got, &trace) == 0);
		CHECK_EQ_U(got.snap_go_on, 1);
		CHECK_EQ_U(got.recycle, 0);
	}

	{
		static const char *const bad[] = {
			"RUN\t0\t-1\t0\t-", "RUN\t0\t-1\t0\t-\tt.bin\t-\textra", "RESULT\t0\t-1\t0\t-\tt.bin",
			"RUN\tx\t-1\t0\t-\tt.bin", "RUN\t0\t12z\t0\t-\tt.bin", "RUN\t0\t-1\t\t-\tt.bin",
			"RUN\t-2\t-1\t0\t-\tt.bin", "RUN\t0\t-1\t0\t-\t", "",
			"RUN\t0\t-1\t0\t-\tt.bin\t-\t1\t1\t1", "RUN\t0\t-1\t0\t-\tt.bin\t-\t1\tx",
		};
		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			char *copy = strdup(bad[i]);
			if (proto_parse_run(copy, &got, &trace) != -1) {
				unit_failures++;
				fprintf(stderr, "    RUN line %zu was taken: \"%s\"\n", i, bad[i]);
			}
			free(copy);
		}
	}
	sb_release(&sb);
}

UNIT_TEST(proto_result_roundtrip_and_malformed)
{
	struct strbuf sb = STRBUF_INIT;
	struct replay_result r, got;
	char *line;

	memset(&r, 0, sizeof(r));
	r.status = RS_FAULT;
	r.event = 41;
	r.launch_seq = 9000000000ll;
	r.code = 700;
	r.launches = 17;
	r.seconds = 1.25;
	snprintf(r.error, sizeof(r.error), "CUDA_ERROR_ILLEGAL_ADDRESS");
	snprintf(r.kernel, sizeof(r.kernel), "_Z5scalePfPKfiij");
	snprintf(r.msg, sizeof(r.msg), "two\nlines\tand a tab");
	r.error_kind = RE_NO_LAYOUT;
	r.snapped = 1;
	proto_format_result(&sb, &r);
	line = one_line(&sb);
	CHECK(proto_parse_result(line, &got) == 0);
	CHECK_EQ_U(got.status, RS_FAULT);
	CHECK_EQ_U(got.error_kind, RE_NO_LAYOUT);
	CHECK_EQ_U(got.snapped, 1);
	CHECK_EQ_U(got.event, 41);
	CHECK_EQ_U(got.launch_seq, 9000000000ull);
	CHECK_EQ_U(got.code, 700);
	CHECK_EQ_U(got.launches, 17);
	CHECK(got.seconds == 1.25);
	CHECK_STR(got.error, "CUDA_ERROR_ILLEGAL_ADDRESS");
	CHECK_STR(got.kernel, "_Z5scalePfPKfiij");
	CHECK_STR(got.msg, "two lines and a tab");
	free(line);

	/* no fault: event and seq -1, empty text fields */
	memset(&r, 0, sizeof(r));
	r.event = -1;
	r.launch_seq = -1;
	proto_format_result(&sb, &r);
	line = one_line(&sb);
	CHECK(proto_parse_result(line, &got) == 0);
	CHECK_EQ_U(got.event, (unsigned long long)-1);
	CHECK_EQ_U(got.launch_seq, (unsigned long long)-1);
	CHECK_STR(got.kernel, "");
	CHECK_EQ_U(got.error_kind, RE_OTHER);
	free(line);

	/* an older worker's 15 fields: no error kind (RE_OTHER) */
	CHECK(proto_parse_result("RESULT\t2\t0\t-1\t0\t0\t0.1\t\t\tspan\t1\t2\t0\t0\t-1", &got) == 0);
	CHECK(got.status == RS_ERROR && got.error_kind == RE_OTHER && got.stray_words == 2);
	/* and 16: no snapshot written */
	CHECK(proto_parse_result("RESULT\t1\t3\t-1\t700\t4\t0.1\t\t\t\t1\t0\t0\t0\t-1\t0", &got) == 0);
	CHECK(got.status == RS_FAULT && got.snapped == 0 && got.code == 700);

	{
		static const char *const bad[] = {
			"RESULT\t0\t-1\t-1\t0\t0\t0.1\t\t", "RESULT\t0\t-1\t-1\t0\t0\t0.1\t\t\t\t",
			"RUN\t0\t-1\t-1\t0\t0\t0.1\t\t\t", "RESULT\tfault\t-1\t-1\t0\t0\t0.1\t\t\t",
			"RESULT\t0\t-1\t-1\t7OO\t0\t0.1\t\t\t", "RESULT\t0\t-1\t-1\t0\t0\t\t\t\t",
			"RESULT\t0\t-1\t-1\t0\t0\t0.1s\t\t\t", "RESULT\t0\t\t-1\t0\t0\t0.1\t\t\t",
			"garbage from a kernel printf",
			"RESULT\t2\t0\t-1\t0\t0\t0.1\t\t\tspan\t1\t2\t0\t0\t-1\tlayout",
			"RESULT\t2\t0\t-1\t0\t0\t0.1\t\t\tspan\t1\t2\t0\t0\t-1\t1\tyes",
			"RESULT\t2\t0\t-1\t0\t0\t0.1\t\t\tspan\t1\t2\t0\t0\t-1\t1\t0\t0",
		};
		for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			memset(&got, 0x55, sizeof(got));
			if (proto_parse_result(bad[i], &got) != -1 || got.status != 0 || got.msg[0]) {
				unit_failures++;
				fprintf(stderr, "    RESULT line %zu was taken: \"%s\"\n", i, bad[i]);
			}
		}
	}
	sb_release(&sb);
}

UNIT_TEST(proto_take_line_across_reads)
{
	struct strbuf in = STRBUF_INIT;
	char *line;

	CHECK(proto_take_line(&in) == NULL);
	sb_adds(&in, "REA");
	CHECK(proto_take_line(&in) == NULL);
	sb_adds(&in, "DY\t2\nRESULT\t0");
	line = proto_take_line(&in);
	CHECK_STR(line, "READY\t2");
	free(line);
	CHECK(proto_take_line(&in) == NULL);
	CHECK_EQ_U(in.len, strlen("RESULT\t0"));
	sb_adds(&in, "\n\nX\n");
	line = proto_take_line(&in);
	CHECK_STR(line, "RESULT\t0");
	free(line);
	line = proto_take_line(&in);
	CHECK_STR(line, "");
	free(line);
	line = proto_take_line(&in);
	CHECK_STR(line, "X");
	free(line);
	CHECK(proto_take_line(&in) == NULL);
	CHECK_EQ_U(in.len, 0);
	sb_release(&in);
}

/* The pool starts workers as `self_exe() __worker`: the program running. */
UNIT_TEST(proto_worker_is_this_program)
{
	const char *exe = self_exe(), *base = strrchr(exe, '/');
	CHECK(exe[0] == '/');
	CHECK_STR(base ? base + 1 : exe, "unit");
	CHECK(self_exe() == exe);
}
