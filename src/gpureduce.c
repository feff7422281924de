/*
 * gpureduce.c - entry point and command table.
 *
 * gpureduce turns a CUDA crash into a standalone repro: capture a trace of
 * the crashing program, replay it, shrink it, emit repro.cu.  This file only
 * dispatches: to add a command, write src/cmd-NAME.c with
 * `int cmd_NAME(int argc, char **argv)`, declare it in cmds.h and add a row
 * to `commands` below (name, function, hidden flag, one-line synopsis).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/util.h"
#include "../replay/proto.h"
#include "../trace/trace.h"
#include "cmds.h"

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	int hidden;
	const char *synopsis;
};

static const struct command commands[] = {
	{ "capture", cmd_capture, 0, "run a program under CUPTI and write trace.bin through its fault" },
	{ "replay", cmd_replay, 0, "replay a trace on the GPU in a child process and report the fault" },
	{ "shrink", cmd_shrink, 0, "reduce a trace to the smallest replay that faults the same way; emit repro.cu" },
	{ "show", cmd_show, 0, "dump a trace as YAML" },
	{ "verify", cmd_verify, 0, "build a repro.cu with nvcc and run it n times" },
	{ "hunt", cmd_hunt, 0, "find silent out-of-bounds accesses under guards; the first becomes repro.cu" },
	{ "diagnose", cmd_diagnose, 0, "explain a repro's fault in terms of the kernel's parameters" },
	{ "report", cmd_report, 0, "write report.md and report.tar.gz for a GitHub issue from a shrink's folder" },
	{ PROTO_WORKER_CMD, cmd_worker, 1, "(internal) replay worker process" },
};

const char *gpureduce_exe(void)
{
	return self_exe();
}

void cmd_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "gpureduce %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int is_help(const char *s)
{
	return !strcmp(s, "-h") || !strcmp(s, "--help");
}

static void usage(FILE *f)
{
	fprintf(f, "usage: gpureduce <command> [options]\n\n"
		"Turn a CUDA crash into a bug report anyone can run.\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!commands[i].hidden)
			fprintf(f, "  %-9s %s\n", commands[i].name, commands[i].synopsis);
	fprintf(f, "\n'gpureduce help <command>' (or <command> --help) describes each command;\n"
		"'gpureduce --version' names the trace format it reads.\n"
		"A typical session:\n"
		"  gpureduce capture -o trace.bin -- python train.py\n"
		"  gpureduce shrink trace.bin -o repro.cu\n"
		"  nvcc -o repro repro.cu -lcuda && ./repro\n");
}

int main(int argc, char **argv)
{
	if (argc >= 3 && !strcmp(argv[1], "help")) {
		/* `gpureduce help CMD` is `gpureduce CMD --help` */
		char *hargv[] = { argv[2], "--help", NULL };
		for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
			if (!strcmp(argv[2], commands[i].name) && !commands[i].hidden)
				return commands[i].fn(2, hargv);
		fprintf(stderr, "gpureduce: '%s' is not a command; see 'gpureduce --help'\n", argv[2]);
		return EXIT_USAGE;
	}
	if (argc < 2 || is_help(argv[1]) || !strcmp(argv[1], "help")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? EXIT_USAGE : EXIT_OK;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		printf("gpureduce %s (trace format %d.%d: writes it, reads 1.0 to %d.%d)\n", GPUREDUCE_VERSION,
		       TRACE_MAJOR, TRACE_MINOR, TRACE_MAJOR, TRACE_MINOR);
		return EXIT_OK;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	fprintf(stderr, "gpureduce: '%s' is not a command; see 'gpureduce --help'\n", argv[1]);
	return EXIT_USAGE;
}
