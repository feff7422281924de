/* cmd-capture.c - placeholder until the command lands. */
#include <stdio.h>
#include "cmds.h"
int cmd_capture(int argc, char **argv)
{
	(void)argc; (void)argv;
	cmd_error("capture", "not implemented yet");
	return EXIT_INTERNAL;
}
