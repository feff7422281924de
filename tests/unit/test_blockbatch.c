/*
 * test_blockbatch.c - the decoder's placing of late allocator blocks
 * (format 1.6, trace/batch.inc): traces written record by record, read back,
 * and the order of LAUNCH and BLOCK records checked against the one a
 * capture that read the allocator at every launch (1.3) writes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../common/strbuf.h"
#include "../../common/util.h"
#include "../../trace/trace.h"
#include "unit.h"

/* The script: L<seq> a launch, A<addr> a block allocated, F<addr> freed,
 * B<seq>:<known> a BLOCK_BATCH, N a NOTE.  Addresses are small numbers. */
static int write_script(const char *path, const char *script)
{
	struct trace_writer w = TRACE_WRITER_INIT;
	struct strbuf err = STRBUF_INIT;
	int ret = -1;
	const char *p = script;

	if (tw_open(&w, path, &err) < 0)
		goto out;
	while (*p) {
		struct tr_rec r;
		char c = *p++;
		unsigned long long a = strtoull(p, (char **)&p, 10), b = 0;
		if (*p == ':')
			b = strtoull(p + 1, (char **)&p, 10);
		while (*p == ' ')
			p++;
		memset(&r, 0, sizeof(r));
		if (c == 'L') {
			r.type = TR_LAUNCH;
			r.u.launch.seq = a;
			r.u.launch.name = "k";
		} else if (c == 'A') {
			r.type = TR_BLOCK_ALLOC;
			r.u.block = (struct tr_block){ a, 512, 512, 0, TR_BLK_TEST, 0, "", "", 0 };
		} else if (c == 'F') {
			r.type = TR_BLOCK_FREE;
			r.u.block_free.addr = a;
			r.u.block_free.source = TR_BLK_TEST;
		} else if (c == 'B') {
			r.type = TR_BLOCK_BATCH;
			r.u.block_batch.seq = a;
			r.u.block_batch.known = b;
		} else {
			r.type = TR_NOTE;
			r.u.note.text = "n";
		}
		if (tw_record(&w, &r) < 0)
			goto out;
	}
	ret = tw_close(&w);
out:
	sb_release(&err);
	return ret;
}

/* The trace read back, in the same notation (B, N as written; an F the
 * decoder made: U<addr>). */
static void read_script(const char *path, struct strbuf *out, struct trace *t)
{
	struct strbuf err = STRBUF_INIT;
	sb_reset(out);
	if (trace_open(t, path, 0, &err) < 0) {
		sb_addf(out, "error: %s", err.buf);
		memset(t, 0, sizeof(*t));
		sb_release(&err);
		return;
	}
	for (size_t i = 0; i < t->nrec; i++) {
		const struct tr_rec *r = &t->rec[i];
		if (out->len)
			sb_addch(out, ' ');
		switch (r->type) {
		case TR_LAUNCH: sb_addf(out, "L%llu", (unsigned long long)r->u.launch.seq); break;
		case TR_BLOCK_ALLOC: sb_addf(out, "A%llu", (unsigned long long)r->u.block.addr); break;
		case TR_BLOCK_FREE:
			sb_addf(out, "%c%llu", r->u.block_free.flags & TR_BLKFREE_F_UNKNOWN ? 'U' : 'F',
				(unsigned long long)r->u.block_free.addr);
			break;
		case TR_BLOCK_BATCH:
			sb_addf(out, "B%llu:%llu", (unsigned long long)r->u.block_batch.seq,
				(unsigned long long)r->u.block_batch.known);
			break;
		default: sb_addch(out, 'N');
		}
	}
	sb_release(&err);
}

static void check_script(const char *in, const char *want, int cut, uint64_t known)
{
	char path[] = "/tmp/gpureduce-unit-bb-XXXXXX";
	int fd = mkstemp(path);
	struct strbuf got = STRBUF_INIT;
	struct trace t;

	CHECK(fd >= 0);
	close(fd);
	CHECK(write_script(path, in) == 0);
	read_script(path, &got, &t);
	if (strcmp(got.buf, want)) {
		fprintf(stderr, "    %s\n      read as  %s\n      expected %s\n", in, got.buf, want);
		unit_failures++;
	}
	CHECK_EQ_U(t.blocks_cut, cut);
	if (cut)
		CHECK_EQ_U(t.blocks_known, known);
	trace_release(&t);
	unlink(path);
	sb_release(&got);
}

UNIT_TEST(blockbatch_late_blocks_move_before_their_launch)
{
	/* no BLOCK_BATCH: untouched, whatever the order */
	check_script("L0 A1 L1 F1 L2", "L0 A1 L1 F1 L2", 0, 0);
	/* in place (a batch before its launch): stays; late ones move before
	 * the launch they name, after what was there, in file order */
	check_script("B0:1 A1 L0 L1 N L2 B1:4 A2 F1 B2:4 A3 B3:4 L3",
		     "B0:1 A1 L0 A2 F1 L1 N A3 L2 B1:4 B2:4 B3:4 L3", 0, 0);
	/* a batch ends at the first record of another type: the NOTE stays */
	check_script("L0 L1 B0:3 A1 N A2 L2", "A1 L0 L1 B0:3 N A2 L2", 0, 0);
	/* a batch for a launch this file does not hold (a window a checkpoint
	 * closed) is dropped; one past the last launch stays where it is */
	check_script("L5 B3:6 A1 B5:6 A2 L6 B7:8 F2", "A2 L5 B3:6 B5:6 L6 B7:8 F2", 0, 0);
	/* a gap in the launches: before the next launch there is */
	check_script("L0 L2 L3 B1:4 A1", "L0 A1 L2 L3 B1:4", 0, 0);
}

UNIT_TEST(blockbatch_launches_never_fetched_have_no_blocks)
{
	/* the last fetch said: known before launch 2; launches 2, 3 happened
	 * (the process died before the next fetch): every live block ends
	 * before launch 2, flagged, and nothing else changes */
	check_script("B0:1 A1 A2 L0 L1 B1:2 F1 A3 L2 L3",
		     "B0:1 A1 A2 L0 F1 A3 L1 B1:2 U2 U3 L2 L3", 1, 2);
	/* the exit fetch covers every launch: nothing cut */
	check_script("B0:1 A1 L0 L1 B1:3 F1 B2:3 A4", "B0:1 A1 L0 F1 L1 B1:3 B2:3 A4", 0, 0);
}
