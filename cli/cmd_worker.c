/* PLACEHOLDER: replaced by the real subcommand. */
#include <stdio.h>
#include "cli/cmds.h"
int cmd_worker(int argc, char **argv) { (void)argc; (void)argv; fprintf(stderr, "gomoku worker: not built yet\n"); return 1; }
