/* cmd-verify.c - placeholder until the command lands. */
#include <stdio.h>
#include "cmds.h"
int cmd_verify(int argc, char **argv)
{
	(void)argc; (void)argv;
	cmd_error("verify", "not implemented yet");
	return EXIT_INTERNAL;
}
