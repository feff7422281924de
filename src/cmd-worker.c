/*
 * cmd-worker.c - `gpureduce __worker`: a replay worker process.
 *
 * Started by replay/pool.c (and by `gpureduce replay`) with pipes on stdin
 * and stdout.  It creates one CUDA context on $GPUREDUCE_DEVICE (an ordinal
 * below the device count, else FATAL: replay/devsel.h), says READY with
 * that count, then replays every
 * trace it is sent (proto.h) until its stdin closes or a fault kills the
 * context.  Kernel printf and driver chatter would corrupt the protocol, so
 * the protocol gets its own copy of stdout and fd 1 is pointed at stderr.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/strbuf.h"
#include "../common/util.h"
#include "../replay/proto.h"
#include "../replay/replay.h"
#include "../trace/trace.h"
#include "cmds.h"

static int say(int fd, const struct strbuf *sb)
{
	return write_all(fd, sb->buf, sb->len);
}

int cmd_worker(int argc, char **argv)
{
	struct replay_ctx *ctx = NULL;
	const char *quick;
	struct strbuf err = STRBUF_INIT, out = STRBUF_INIT;
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int proto = dup(1);
	int ret = EXIT_OK;

	(void)argc;
	(void)argv;
	if (proto < 0 || dup2(2, 1) < 0)
		return EXIT_INTERNAL;
	if (replay_ctx_create(&ctx, &err) < 0) {
		proto_format_fatal(&out, err.buf);
		say(proto, &out);
		ret = EXIT_ENV;
		goto out;
	}
	proto_format_ready(&out, replay_ctx_devices(ctx));
	if (say(proto, &out) < 0)
		goto out;
	while ((n = getline(&line, &cap, stdin)) > 0) {
		struct replay_opts o;
		struct replay_result res;
		struct trace t;
		const char *path;

		if (line[n - 1] == '\n')
			line[--n] = 0;
		sb_reset(&out);
		sb_reset(&err);
		if (proto_parse_run(line, &o, &path) < 0) {
			memset(&res, 0, sizeof(res));
			res.status = RS_ERROR;
			snprintf(res.msg, sizeof(res.msg), "bad request");
		} else if (trace_open(&t, path, 0, &err) < 0) {
			memset(&res, 0, sizeof(res));
			res.status = RS_ERROR;
			res.event = -1;
			snprintf(res.msg, sizeof(res.msg), "%s", err.buf);
		} else {
			replay_trace(ctx, &t, &o, &res);
			trace_release(&t);
		}
		proto_format_result(&out, &res);
		if (say(proto, &out) < 0 || replay_ctx_dead(ctx))
			break;
	}
out:
	free(line);
	/* A dead context cannot be torn down cleanly; just leave.  With
	 * GPUREDUCE_WORKER_QUICK_EXIT=1 (a measurement: tests/gpu/exitprobe.c,
	 * shrink-pair.sh) without libcuda's own teardown in exit() either: the
	 * result is sent, and the kernel driver frees what the process held
	 * when it closes the device. */
	quick = getenv("GPUREDUCE_WORKER_QUICK_EXIT");
	if (ctx && replay_ctx_dead(ctx) && quick && !strcmp(quick, "1")) {
		fflush(NULL);
		_exit(ret);
	}
	if (ctx && !replay_ctx_dead(ctx))
		replay_ctx_release(ctx);
	sb_release(&err);
	sb_release(&out);
	return ret;
}
