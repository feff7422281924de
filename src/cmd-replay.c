/* cmd-replay.c - placeholder until the command lands. */
#include <stdio.h>
#include "cmds.h"
int cmd_replay(int argc, char **argv)
{
	(void)argc; (void)argv;
	cmd_error("replay", "not implemented yet");
	return EXIT_INTERNAL;
}
