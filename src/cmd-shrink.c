/* cmd-shrink.c - placeholder until the command lands. */
#include <stdio.h>
#include "cmds.h"
int cmd_shrink(int argc, char **argv)
{
	(void)argc; (void)argv;
	cmd_error("shrink", "not implemented yet");
	return EXIT_INTERNAL;
}
