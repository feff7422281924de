/*
 * test_source.c - the 1.4 records of issue 24 (ENV, SOURCE, STDERR): they
 * survive a write and a read field by field, tw_open_append adds records
 * after a closed trace's last one, and a cut SOURCE is dropped as a torn
 * last record.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../common/strbuf.h"
#include "../../trace/trace.h"
#include "unit.h"

UNIT_TEST(trace_source_env_stderr_records)
{
	struct trace t;
	struct trace_writer w = TRACE_WRITER_INIT, a = TRACE_WRITER_INIT;
	struct strbuf err = STRBUF_INIT;
	struct tr_rec r;
	char path[] = "/tmp/gpureduce-unit-src-XXXXXX";
	int fd = mkstemp(path);

	CHECK(fd >= 0 && tw_open_fd(&w, fd, path, &err) == 0);
	memset(&r, 0, sizeof(r));
	r.type = TR_ENV;
	r.u.env.text = "os: Linux 6.8\ntorch: 2.11.0";
	CHECK(tw_record(&w, &r) == 0);
	memset(&r, 0, sizeof(r));
	r.type = TR_SOURCE;
	r.u.source = (struct tr_source){ TR_SRC_TRITON, 0, 7, "add_kernel", "/w/k.py",
					 "params: x_ptr n\nconstexpr: BLOCK=128", "@triton.jit\ndef add_kernel(x_ptr, n, BLOCK: tl.constexpr):\n" };
	CHECK(tw_record(&w, &r) == 1);
	CHECK(tw_close(&w) == 0);
	/* capture appends STDERR after the program exited */
	CHECK(tw_open_append(&a, path, &err) == 0);
	memset(&r, 0, sizeof(r));
	r.type = TR_STDERR;
	r.u.stderr_tail = (struct tr_stderr){ 123, 134, "k.py:3: Assertion `x` failed.\n" };
	CHECK(tw_record(&a, &r) >= 0);
	CHECK(tw_close(&a) == 0);
	CHECK(trace_open(&t, path, TRACE_OPEN_STRICT, &err) == 0);
	CHECK_EQ_U(t.nrec, 3);
	if (t.nrec == 3) {
		const struct tr_source *s = &t.rec[1].u.source;
		CHECK_STR(t.rec[0].u.env.text, "os: Linux 6.8\ntorch: 2.11.0");
		CHECK_EQ_U(t.rec[1].type, TR_SOURCE);
		CHECK_EQ_U(s->origin, TR_SRC_TRITON);
		CHECK_EQ_U(s->module_id, 7);
		CHECK_STR(s->kernel, "add_kernel");
		CHECK_STR(s->path, "/w/k.py");
		CHECK_STR(s->meta, "params: x_ptr n\nconstexpr: BLOCK=128");
		CHECK(strstr(s->text, "def add_kernel(") != NULL);
		CHECK_EQ_U(t.rec[2].type, TR_STDERR);
		CHECK_EQ_U(t.rec[2].u.stderr_tail.dropped, 123);
		CHECK_EQ_U(t.rec[2].u.stderr_tail.exit_code, 134);
		CHECK_STR(t.rec[2].u.stderr_tail.text, "k.py:3: Assertion `x` failed.\n");
		CHECK_STR(tr_type_name(TR_SOURCE), "SOURCE");
		CHECK_STR(tr_type_name(TR_ENV), "ENV");
		CHECK_STR(tr_type_name(TR_STDERR), "STDERR");
	}
	trace_release(&t);
	/* cut the last record (STDERR) in half: dropped, flagged, the rest read */
	{
		off_t full;
		int f2 = open(path, O_RDWR);
		CHECK(f2 >= 0);
		full = lseek(f2, 0, SEEK_END);
		CHECK(ftruncate(f2, full - 10) == 0);
		close(f2);
		CHECK(trace_open(&t, path, 0, &err) == 0);
		CHECK_EQ_U(t.nrec, 2);
		CHECK(t.truncated);
		trace_release(&t);
	}
	/* appending to something that is not a trace is refused */
	{
		int f3 = open(path, O_WRONLY | O_TRUNC);
		CHECK(f3 >= 0 && write(f3, "hello", 5) == 5);
		close(f3);
		sb_reset(&err);
		CHECK(tw_open_append(&a, path, &err) < 0);
		CHECK(strstr(err.buf, "not a gpureduce trace") != NULL);
	}
	unlink(path);
	sb_release(&err);
}
