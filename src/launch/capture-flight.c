/*
 * capture-flight.c - `gpureduce capture --flight-recorder[=BUDGET]` (issue
 * 26): capture left on for a job that runs for days, on a disk budget.  It
 * is a policy over the checkpoints of format 1.2 (capture/checkpoint.c),
 * which already keep only the last checkpoint and the window after it in
 * TRACE; this file only chooses their triggers so that the files on disk
 * stay within BUDGET bytes:
 *
 *   TRACE          at most BUDGET/2 (--max-trace-bytes: a limit, never
 *                  deferred by the adaptive interval)
 *   TRACE.next     while a checkpoint is written: the checkpoint (the live
 *                  memory, deduplicated and compressed) and the window
 *                  copied after it, under BUDGET/2 when the checkpoint is
 *                  under BUDGET/4
 *   window         a checkpoint is due when it reaches BUDGET/4 bytes
 *
 * A checkpoint larger than BUDGET/4 cannot keep to the budget: capture says
 * so in a NOTE and the summary and goes on with a limit of twice the last
 * checkpoint (the trace is never lost).  docs/CAPTURE-COST.md documents it.
 */
#include <string.h>
#include <sys/statvfs.h>

#include "../../common/strbuf.h"
#include "../../common/util.h"
#include "capture-ckpt.h"
#include "capture-flight.h"

int flight_policy(const char *val, struct ckpt_opts *o, struct strbuf *err)
{
	uint64_t budget = FLIGHT_DEFAULT_BUDGET;

	if (val && ckpt_parse_bytes("--flight-recorder", val, &budget, err) < 0)
		return -1;
	if (budget < FLIGHT_MIN_BUDGET) {
		sb_addf(err, "--flight-recorder=%s: a budget under 4M cannot hold a checkpoint and its window; "
			"give more (e.g. --flight-recorder=20G)", val);
		return -1;
	}
	memset(o, 0, sizeof(*o));
	o->bytes = budget / 4;
	o->max_bytes = budget / 2;
	return 0;
}

void flight_check_space(const char *dir, const struct ckpt_opts *o, struct strbuf *warn)
{
	struct statvfs v;
	uint64_t budget = o->max_bytes * 2, avail;
	char b1[32], b2[32];

	if (!budget || statvfs(dir, &v) < 0)
		return;
	avail = (uint64_t)v.f_bavail * v.f_frsize;
	if (avail >= budget)
		return;
	sb_addf(warn, "the file system holding %s has %s free, less than the flight recorder's budget "
		"of %s: when it fills up the trace stops there (capture says so); free space or give a "
		"smaller budget", dir, fmt_bytes(avail, b1), fmt_bytes(budget, b2));
}
