/* PLACEHOLDER: replaced by the real subcommand. */
#include <stdio.h>
#include "cli/cmds.h"
int cmd_device(int argc, char **argv) { (void)argc; (void)argv; fprintf(stderr, "gomoku device: not built yet\n"); return 1; }
