/* PLACEHOLDER: replaced by the real benchmark. */
#include <stdio.h>
#include "cli/cmds.h"
int bench_mcts(int argc, char **argv) { (void)argc; (void)argv; fprintf(stderr, "gomoku bench mcts: not built yet\n"); return 1; }
