/* PLACEHOLDER: replaced by the real benchmark. */
#include <stdio.h>
#include "cli/cmds.h"
int bench_nn(int argc, char **argv) { (void)argc; (void)argv; fprintf(stderr, "gomoku bench nn: not built yet\n"); return 1; }
