/* gomoku worker: the self-play process that `gomoku train` starts. */
#include <stdio.h>
#include <string.h>

#include "cli/args.h"
#include "cli/cmds.h"
#include "selfplay/worker.h"

int cmd_worker(int argc, char **argv)
{
    static const cmd_help_t help = {
        "worker",
        "gomoku worker --records-fd N --control-fd M --model PATH [options]",
        "Self-play worker started by 'gomoku train' (not meant to be run by hand).\n"
        "Plays batched self-play games and writes each finished game as one frame\n"
        "to the records fd; reads \"model GEN PATH\" and \"stop\" lines from the\n"
        "control fd and exits when it closes."};
    worker_opts_t o;
    memset(&o, 0, sizeof o);
    selfplay_opts_default(&o.sp);
    o.records_fd = -1;
    o.control_fd = -1;
    o.sp.threads = 1;
    o.sp.quiet = 0;
    const char *rule = "freestyle", *fault = "none";
    uint64_t parent = 0;
    arg_spec_t specs[] = {
        {"records-fd", ARG_INT, &o.records_fd, 0, 1 << 20, "N  fd to write frames to"},
        {"control-fd", ARG_INT, &o.control_fd, 0, 1 << 20, "N  fd to read control lines from"},
        {"model", ARG_STR, &o.model_path, 0, 0, "PATH  weights to start with (.gzm)"},
        {"gen", ARG_U64, &o.gen, 0, 0, "G  generation of that model"},
        {"parent-pid", ARG_U64, &parent, 0, 0, "PID  exit at once unless this is our parent"},
        {"rule", ARG_STR, &rule, 0, 0, "R  freestyle, standard or renju"},
        {"size", ARG_INT, &o.sp.size, BOARD_MIN, BOARD_MAX, "N  board size"},
        {"parallel", ARG_INT, &o.sp.parallel, 1, 4096, "G  concurrent games"},
        {"visits", ARG_INT, &o.sp.visits, 1, 1000000, "V  playouts of a full search"},
        {"cheap-visits", ARG_INT, &o.sp.cheap_visits, 1, 1000000, "V  playouts of a cheap search"},
        {"full-frac", ARG_DOUBLE, &o.sp.full_frac, 0.0001, 1, "F  fraction of moves searched fully"},
        {"resign", ARG_DOUBLE, &o.sp.resign_threshold, 0, 1, "T  resign below root value -T (0: never)"},
        {"device", ARG_STR, &o.sp.device, 0, 0, "D  auto, cpu, cuda, cuda:N"},
        {"threads", ARG_INT, &o.sp.threads, 0, 256, "T  CPU backend threads (default 1)"},
        {"seed", ARG_U64, &o.sp.seed, 0, 0, "S  random seed"},
        {"fault", ARG_STR, &fault, 0, 0, "F  tests only: none or garbage (corrupt frames)"},
    };
    char *pos[1];
    int npos = 0;
    int rc = args_parse(&help, specs, (int)(sizeof specs / sizeof specs[0]), argc, argv, pos, 0,
                        &npos);
    if (rc == ARGS_HELP)
        return 0;
    if (rc != ARGS_OK)
        return 2;
    if (o.records_fd < 0 || o.control_fd < 0 || !o.model_path)
        return args_fail(&help, "--records-fd, --control-fd and --model are required");
    if (!rule_parse(rule, &o.sp.rule))
        return args_fail(&help, "unknown rule '%s'", rule);
    if (strcmp(fault, "none") == 0)
        o.fault = WORKER_FAULT_NONE;
    else if (strcmp(fault, "garbage") == 0)
        o.fault = WORKER_FAULT_GARBAGE;
    else
        return args_fail(&help, "--fault must be none or garbage, got '%s'", fault);
    /* root noise scaled to the board, as for Go: about 10 / legal moves */
    o.sp.dirichlet_alpha = 10.0 / (o.sp.size * o.sp.size);
    if (o.sp.dirichlet_alpha > 0.5)
        o.sp.dirichlet_alpha = 0.5;
    o.parent_pid = (long)parent;
    char err[512];
    if (worker_run(&o, err, sizeof err) != 0) {
        fprintf(stderr, "gomoku worker: %s\n", err);
        return 1;
    }
    return 0;
}
