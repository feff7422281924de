/*
 * cmds.h - the subcommands of gpureduce.  Each lives in its own
 * src/cmd-NAME.c and is listed in the table in src/gpureduce.c.
 *
 * Contract of a command: int cmd_NAME(int argc, char **argv) where argv[0]
 * is the subcommand name; it returns the process exit code.  Exit codes
 * used across commands (README.md, "Exit codes", has the table per
 * command; keep the two in step):
 *   0  success (replay: ran clean)
 *   1  the fault reproduced (replay) / did not reproduce (shrink) / not verified
 *   2  usage error (options parsed by common/opts.h; an output that is the input)
 *   3  bad input: unreadable, corrupt or incomplete trace, missing file,
 *      an output folder that is missing or not writable
 *   4  environment: no GPU/driver, CUPTI taken, tool missing, a failed write
 *   5  internal error: a bug in gpureduce (please report it)
 *   128+N  stopped by signal N (130 SIGINT, 143 SIGTERM: replay, shrink, verify,
 *          diagnose stop their children through common/interrupt.h)
 */
#ifndef GPUREDUCE_CMDS_H
#define GPUREDUCE_CMDS_H

enum {
	EXIT_OK = 0,
	EXIT_FAULT = 1,
	EXIT_USAGE = 2,
	EXIT_INPUT = 3,
	EXIT_ENV = 4,
	EXIT_INTERNAL = 5
};

int cmd_capture(int argc, char **argv);
int cmd_replay(int argc, char **argv);
int cmd_shrink(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_diagnose(int argc, char **argv);
int cmd_hunt(int argc, char **argv);
int cmd_worker(int argc, char **argv);
int cmd_report(int argc, char **argv);

/* Path of the running gpureduce binary (common/util.h self_exe(); capture
 * finds its library next to it). */
const char *gpureduce_exe(void);
/* Print "gpureduce CMD: <msg>" to stderr. */
void cmd_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* 1 if s is -h or --help. */
int is_help(const char *s);

#endif
