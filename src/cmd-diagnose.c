/* cmd-diagnose.c - placeholder until the command lands. */
#include <stdio.h>
#include "cmds.h"
int cmd_diagnose(int argc, char **argv)
{
	(void)argc; (void)argv;
	cmd_error("diagnose", "not implemented yet");
	return EXIT_INTERNAL;
}
