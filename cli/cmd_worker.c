/* gomoku worker: the self-play process that `gomoku train` starts. */
#include <stdio.h>
#include <string.h>

#include "cli/args.h"
#include "cli/cmds.h"
#include "selfplay/rundir.h"
#include "selfplay/worker.h"

int cmd_worker(int argc, char **argv)
{
    static const cmd_help_t help = {
        "worker",
        "gomoku worker --run-dir DIR --records-fd N --control-fd M --model PATH [options]",
        "Self-play worker started by 'gomoku train' (not meant to be run by hand).\n"
        "Reads the run's settings from DIR/config, plays batched self-play games and\n"
        "writes each finished game as one frame to the records fd; reads\n"
        "\"model GEN PATH\" and \"stop\" lines from the control fd and exits when it\n"
        "closes."};
    worker_opts_t o;
    memset(&o, 0, sizeof o);
    selfplay_opts_default(&o.sp);
    o.records_fd = -1;
    o.control_fd = -1;
    o.sp.threads = 1;
    o.sp.quiet = 0;
    const char *fault = "none", *run_dir = NULL;
    uint64_t parent = 0;
    arg_spec_t specs[] = {
        {"run-dir", ARG_STR, &run_dir, 0, 0, "DIR  the training run (settings from DIR/config)"},
        {"records-fd", ARG_INT, &o.records_fd, 0, 1 << 20, "N  fd to write frames to"},
        {"control-fd", ARG_INT, &o.control_fd, 0, 1 << 20, "N  fd to read control lines from"},
        {"model", ARG_STR, &o.model_path, 0, 0, "PATH  weights to start with (.gzm)"},
        {"gen", ARG_U64, &o.gen, 0, 0, "G  generation of that model"},
        {"parent-pid", ARG_U64, &parent, 0, 0, "PID  exit at once unless this is our parent"},
        {"threads", ARG_INT, &o.sp.threads, 0, 256, "T  CPU backend threads (default 1)"},
        {"seed", ARG_U64, &o.sp.seed, 0, 0, "S  random seed"},
        {"fault", ARG_STR, &fault, 0, 0, "F  tests only: none, garbage (corrupt frames) or stall"},
    };
    char *pos[1];
    int npos = 0;
    int rc = args_parse(&help, specs, (int)(sizeof specs / sizeof specs[0]), argc, argv, pos, 0,
                        &npos);
    if (rc == ARGS_HELP)
        return 0;
    if (rc != ARGS_OK)
        return 2;
    if (!run_dir || o.records_fd < 0 || o.control_fd < 0 || !o.model_path)
        return args_fail(&help, "--run-dir, --records-fd, --control-fd and --model are required");
    if (strcmp(fault, "none") == 0)
        o.fault = WORKER_FAULT_NONE;
    else if (strcmp(fault, "garbage") == 0)
        o.fault = WORKER_FAULT_GARBAGE;
    else if (strcmp(fault, "stall") == 0)
        o.fault = WORKER_FAULT_STALL;
    else
        return args_fail(&help, "--fault must be none, garbage or stall, got '%s'", fault);
    char err[4600], cpath[4200];
    run_config_t cfg;
    snprintf(cpath, sizeof cpath, "%s/config", run_dir);
    if (run_config_load(&cfg, cpath, err, sizeof err) != 0) {
        fprintf(stderr, "gomoku worker: %s\n", err);
        return 1;
    }
    o.sp.rule = cfg.rule;
    o.sp.size = cfg.size;
    o.sp.parallel = cfg.parallel;
    o.sp.visits = cfg.visits;
    o.sp.cheap_visits = cfg.cheap_visits;
    o.sp.full_frac = cfg.full_frac;
    o.sp.resign_threshold = cfg.resign;
    o.sp.device = cfg.device;
    o.sp.dirichlet_alpha = run_config_alpha(&cfg);
    o.parent_pid = (long)parent;
    if (worker_run(&o, err, sizeof err) != 0) {
        fprintf(stderr, "gomoku worker: %s\n", err);
        return 1;
    }
    return 0;
}
