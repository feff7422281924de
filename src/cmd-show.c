/* cmd-show.c - placeholder until the command lands. */
#include <stdio.h>
#include "cmds.h"
int cmd_show(int argc, char **argv)
{
	(void)argc; (void)argv;
	cmd_error("show", "not implemented yet");
	return EXIT_INTERNAL;
}
