/* gomoku worker: the self-play process that `gomoku train` starts. */
#include <stdio.h>
#include <string.h>

#include "cli/args.h"
#include "cli/cmds.h"
#include "selfplay/rundir.h"
#include "selfplay/broker.h"
#include "selfplay/remote_worker.h"
#include "selfplay/worker.h"

int cmd_worker(int argc, char **argv)
{
    static const cmd_help_t help = {
        "worker",
        "gomoku worker --broker URL --run NAME [--device D --parallel G --spool DIR]\n"
        "       gomoku worker --run-dir DIR --records-fd N --control-fd M --model PATH [options]",
        "With --broker: a stand-alone self-play worker for any host. It reads run NAME's\n"
        "settings and newest model from the Redis broker (redis://[:password@]host:port[/db];\n"
        "the password is never printed), sends each finished game to the trainer through\n"
        "it, follows new models (checked against their CRC), and buffers games in the\n"
        "spool directory while the broker is unreachable. Ctrl-C stops it.\n"
        "Without --broker: the worker 'gomoku train' starts itself (not meant to be run\n"
        "by hand): settings from DIR/config, frames to the records fd, \"model GEN PATH\"\n"
        "and \"stop\" from the control fd."};
    worker_opts_t o;
    memset(&o, 0, sizeof o);
    selfplay_opts_default(&o.sp);
    o.records_fd = -1;
    o.control_fd = -1;
    o.sp.threads = 1;
    o.sp.quiet = 0;
    const char *fault = "none", *run_dir = NULL;
    uint64_t parent = 0;
    remote_worker_opts_t ro;
    remote_worker_opts_default(&ro);
    const char *spool = NULL;
    uint64_t max_games = 0, seed = 0;
    arg_spec_t specs[] = {
        {"run-dir", ARG_STR, &run_dir, 0, 0, "DIR  the training run (settings from DIR/config)"},
        {"records-fd", ARG_INT, &o.records_fd, 0, 1 << 20, "N  fd to write frames to"},
        {"control-fd", ARG_INT, &o.control_fd, 0, 1 << 20, "N  fd to read control lines from"},
        {"model", ARG_STR, &o.model_path, 0, 0, "PATH  weights to start with (.gzm)"},
        {"gen", ARG_U64, &o.gen, 0, 0, "G  generation of that model"},
        {"parent-pid", ARG_U64, &parent, 0, 0, "PID  exit at once unless this is our parent"},
        {"threads", ARG_INT, &o.sp.threads, 0, 256, "T  CPU backend threads (default 1)"},
        {"seed", ARG_U64, &seed, 0, 0, "S  random seed (--broker: default from the clock and pid)"},
        {"fault", ARG_STR, &fault, 0, 0, "F  tests only: none, garbage (corrupt frames), stall or forge (forged results)"},
        {"broker", ARG_STR, &ro.url, 0, 0, "URL  redis://[:password@]host:port[/db], or @FILE holding it: remote worker"},
        {"run", ARG_STR, &ro.run, 0, 0, "NAME  the run's name on the broker (its trainer's --run-name)"},
        {"spool", ARG_STR, &spool, 0, 0, "DIR  games kept until stored: --broker: outage buffer (default gomoku-spool-NAME); else until the trainer acknowledges them"},
        {"spool-max", ARG_INT, &ro.spool_max, 1, 10000000, "N  games the spool may hold (default 10000)"},
        {"max-games", ARG_U64, &max_games, 0, 0, "N  stop after sending N games (default: no limit)"},
        {"device", ARG_STR, &ro.device, 0, 0, "D  --broker: auto, cpu, cuda, cuda:N (default auto)"},
        {"parallel", ARG_INT, &ro.parallel, 1, 4096, "G  --broker: concurrent games (default: the run's)"},
        {"games-log", ARG_STR, &ro.games_log, 0, 0, "FILE  tests: append the id of each game sent"},
    };
    char *pos[1];
    int npos = 0;
    int rc = args_parse(&help, specs, ARGS_COUNT(specs), argc, argv, pos, 0,
                        &npos);
    if (rc != ARGS_OK)
        return args_exit_status(rc);
    if (spool && !*spool)
        return args_fail(&help, "--spool: the directory path is empty");
    for (const unsigned char *p = (const unsigned char *)spool; p && *p; p++)
        if (*p < 0x20 || *p == 0x7f)   /* one line in messages and logs, as run paths */
            return args_fail(&help, "--spool: the directory path holds control byte 0x%02x at "
                             "offset %zu", *p, (size_t)(p - (const unsigned char *)spool));
    if (ro.url || ro.run) {
        if (!ro.url || !ro.run)
            return args_fail(&help, "--broker and --run go together");
        if (o.records_fd >= 0 || o.control_fd >= 0 || o.model_path)
            return args_fail(&help, "--broker takes no --records-fd, --control-fd or --model");
        char url[1024], uerr[512];
        if (broker_url_arg(ro.url, url, sizeof url, uerr, sizeof uerr) != 0)
            return args_fail(&help, "%s", uerr);
        broker_url_t bu;
        if (broker_url_parse(url, &bu, uerr, sizeof uerr) != 0)
            return args_fail(&help, "%s", uerr);
        if (!broker_run_name_ok(ro.run))
            return args_fail(&help, "run name '%.80s' must be 1-%d letters, digits, '.', '_' or '-'",
                             ro.run, BROKER_RUN_MAX);
        ro.url = url;
        char dflt[256];
        snprintf(dflt, sizeof dflt, "gomoku-spool-%.200s", ro.run);
        ro.spool_dir = spool ? spool : dflt;
        ro.threads = o.sp.threads;
        ro.seed = seed;
        ro.max_games = max_games;
        char err[1024];
        if (remote_worker_run(&ro, err, sizeof err) != 0) {
            fprintf(stderr, "gomoku worker: %s\n", err);
            return 1;
        }
        return 0;
    }
    if (!run_dir || o.records_fd < 0 || o.control_fd < 0 || !o.model_path)
        return args_fail(&help, "--run-dir, --records-fd, --control-fd and --model are required");
    if (seed != 0)
        o.sp.seed = seed;
    if (strcmp(fault, "none") == 0)
        o.fault = WORKER_FAULT_NONE;
    else if (strcmp(fault, "garbage") == 0)
        o.fault = WORKER_FAULT_GARBAGE;
    else if (strcmp(fault, "stall") == 0)
        o.fault = WORKER_FAULT_STALL;
    else if (strcmp(fault, "forge") == 0)
        o.fault = WORKER_FAULT_FORGE;
    else
        return args_fail(&help, "--fault must be none, garbage, stall or forge, got '%s'", fault);
    o.spool_dir = spool;
    o.games_log = ro.games_log;
    char err[4600], cpath[4200];
    run_config_t cfg;
    snprintf(cpath, sizeof cpath, "%s/config", run_dir);
    if (run_config_load(&cfg, cpath, err, sizeof err) != 0) {
        fprintf(stderr, "gomoku worker: %s\n", err);
        return 1;
    }
    run_config_selfplay_opts(&cfg, &o.sp);
    o.sp.device = cfg.device;
    o.parent_pid = (long)parent;
    if (worker_run(&o, err, sizeof err) != 0) {
        fprintf(stderr, "gomoku worker: %s\n", err);
        return 1;
    }
    return 0;
}
