/* cmd-worker.c - placeholder until the command lands. */
#include <stdio.h>
#include "cmds.h"
int cmd_worker(int argc, char **argv)
{
	(void)argc; (void)argv;
	cmd_error("worker", "not implemented yet");
	return EXIT_INTERNAL;
}
