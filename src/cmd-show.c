/*
 * cmd-show.c - `gpureduce show`: dump a trace as YAML on stdout.
 *
 * Parses the options, opens the trace (leniently: a torn last record is a
 * warning, so a trace from a process that died mid-write still shows what
 * it has) and hands it to show_render() in src/show/show.c, which does all the
 * formatting.  This file only prints errors and picks exit codes (cmds.h):
 * 2 for usage errors (including an --event past the end), 3 for a trace
 * that cannot be read.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/opts.h"
#include "../common/strbuf.h"
#include "../trace/trace.h"
#include "cmds.h"
#include "show/show.h"
#include "outputs/safe-out.h"

static const char usage_text[] =
	"usage: gpureduce show [--event N | --range A:B | --launch SEQ] [--fault] [--no-events] TRACE\n"
	"\n"
	"Print a trace as YAML: header, process, device, totals, kernels (by launch\n"
	"count), modules, the fault, and every record as an event.  Launch parameters\n"
	"are shown as hex with each 8-byte word that points into a captured\n"
	"allocation annotated, e.g. `ptr: alloc#3+0x40 (device, 4000 bytes)` or\n"
	"`ptr: alloc#2+0x0 (FREED at event 17)`.\n"
	"\n"
	"  --event N     print only event N (0-based index among all records)\n"
	"  --range A:B   print events A through B inclusive; A: and :B are open-ended\n"
	"  --launch SEQ  print only the event of launch #SEQ (as hunt and replay number them)\n"
	"  --fault       print only the fault and the launch that faulted\n"
	"  --no-events   leave out the events section\n"
	"\n"
	"Exit status: 0 shown (also for a truncated or incomplete trace: `truncated:\n"
	"true`, `complete: false`),\n"
	"2 usage error, 3 unreadable or corrupt trace.\n";

static int parse_u64(const char *s, uint64_t *v)
{
	char *end;
	if (!*s || *s == '-' || *s == '+')
		return -1;
	errno = 0;
	*v = strtoull(s, &end, 10);
	return errno || *end ? -1 : 0;
}

/* "A:B", "A:", ":B" -> first/last; 0 or -1. */
static int parse_range(const char *s, uint64_t *first, uint64_t *last)
{
	const char *colon = strchr(s, ':');
	char *a;
	int ret = -1;

	if (!colon)
		return -1;
	a = strndup(s, (size_t)(colon - s));
	if (!a)
		return -1;
	*first = 0;
	*last = UINT64_MAX;
	if (*a && parse_u64(a, first))
		goto out;
	if (colon[1] && parse_u64(colon + 1, last))
		goto out;
	if (!*a && !colon[1])
		goto out;
	ret = *first <= *last ? 0 : -1;
out:
	free(a);
	return ret;
}

static int usage_error(const char *fmt, const char *arg)
{
	fprintf(stderr, "gpureduce show: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n%s", usage_text);
	return EXIT_USAGE;
}

int cmd_show(int argc, char **argv)
{
	struct show_opts o = SHOW_OPTS_INIT;
	struct trace t = TRACE_INIT;
	struct strbuf err = STRBUF_INIT;
	struct opts op;
	const char *path = NULL, *ev_arg = NULL, *range_arg = NULL, *launch_arg = NULL;
	uint64_t ev = 0, seq = 0;
	int i, ret, dashdash = 0;

	opts_init(&op, argc, argv, &err);
	while (opts_next(&op)) {
		const char *a = op.arg;
		if (is_help(a)) {
			fputs(usage_text, stdout);
			return EXIT_OK;
		} else if (opts_end(&op)) {
			dashdash = 1;
			break;
		} else if (opts_flag(&op, "--fault")) {
			o.fault_only = 1;
		} else if (opts_flag(&op, "--no-events")) {
			o.events = 0;
		} else if (opts_str(&op, "--event", &ev_arg) || opts_str(&op, "--range", &range_arg) ||
			   opts_str(&op, "--launch", &launch_arg)) {
		} else if (opts_unknown(&op)) {
		} else if (!path) {
			path = a;
		} else {
			opts_fail(&op, "unexpected argument '%s' (one TRACE at a time)", a);
		}
	}
	if (op.failed) {
		ret = usage_error("%s", err.buf);
		sb_release(&err);
		return ret;
	}
	for (i = dashdash ? op.next : argc; i < argc; i++) {
		if (path)
			return usage_error("unexpected argument '%s' (one TRACE at a time)", argv[i]);
		path = argv[i];
	}
	if (!path)
		return usage_error("%s", "no TRACE given");
	if (!!ev_arg + !!range_arg + !!launch_arg > 1)
		return usage_error("%s", "--event, --range and --launch cannot be combined");
	if (o.fault_only && (ev_arg || range_arg || launch_arg))
		return usage_error("%s", "--fault already picks the event; drop --event/--range/--launch");
	if (launch_arg && parse_u64(launch_arg, &seq))
		return usage_error("--launch '%s': expected a launch number (0, 1, ...)", launch_arg);
	if (ev_arg && parse_u64(ev_arg, &ev))
		return usage_error("--event '%s': expected an event number (0, 1, ...)", ev_arg);
	if (range_arg && parse_range(range_arg, &o.first, &o.last))
		return usage_error("--range '%s': expected A:B with A <= B (A: and :B allowed)", range_arg);

	if (safe_trace_open(&t, path, 0, &err) < 0) {
		cmd_error("show", "%s", err.buf);
		ret = EXIT_INPUT;
		goto out;
	}
	if (ev_arg) {
		if (ev >= t.nrec) {
			cmd_error("show", "--event %llu: %s has %zu events (0..%zu)",
				  (unsigned long long)ev, path, t.nrec, t.nrec ? t.nrec - 1 : 0);
			ret = EXIT_USAGE;
			goto out;
		}
		o.first = o.last = ev;
	} else if (launch_arg) {
		long at = trace_find_launch(&t, seq);
		if (at < 0) {
			cmd_error("show", "--launch %llu: %s has no launch #%llu (show --no-events lists its launches' count)",
				  (unsigned long long)seq, path, (unsigned long long)seq);
			ret = EXIT_USAGE;
			goto out;
		}
		o.first = o.last = (uint64_t)at;
	} else if (range_arg && o.first >= t.nrec) {
		cmd_error("show", "--range %s: %s has %zu events (0..%zu)",
			  range_arg, path, t.nrec, t.nrec ? t.nrec - 1 : 0);
		ret = EXIT_USAGE;
		goto out;
	}
	if (t.truncated)
		cmd_error("show", "warning: %s", t.truncated_msg);
	if (!trace_complete(&t))
		cmd_error("show", "warning: %s: %s", path, TRACE_INCOMPLETE_MSG);
	if (show_render(stdout, &t, &o, &err) < 0) {
		cmd_error("show", "%s", err.buf);
		ret = EXIT_INTERNAL;
		goto out;
	}
	ret = EXIT_OK;
out:
	trace_release(&t);
	sb_release(&err);
	return ret;
}
