/* gomoku worker: the self-play process that `gomoku train` starts. */
#include <stdio.h>
#include <string.h>

#include "cli/cmds.h"
#include "selfplay/args.h"
#include "selfplay/rundir.h"
#include "selfplay/broker.h"
#include "selfplay/remote_worker.h"
#include "selfplay/worker.h"

static const cmd_help_t help = {
    "worker", BY_WORKER,
    "gomoku worker --broker URL --run NAME [--device D --parallel G --spool DIR]",
    "With --broker: a stand-alone self-play worker for any host. It reads run NAME's\n"
    "settings and newest model from the Redis broker (redis://[:password@]host:port[/db];\n"
    "the password is never printed), sends each finished game to the trainer through\n"
    "it, follows new models (checked against their CRC), and buffers games in the\n"
    "spool directory while the broker is unreachable. Ctrl-C stops it.\n"
    "Without --broker: the worker 'gomoku train' starts itself, with options of\n"
    "its own (not meant to be run by hand): settings from the run's config, frames\n"
    "to the trainer, new models and \"stop\" from it."};

int cmd_worker(int argc, char **argv)
{
    worker_opts_t o;
    memset(&o, 0, sizeof o);
    selfplay_opts_default(&o.sp);
    o.records_fd = -1;
    o.control_fd = -1;
    const char *fault, *run_dir = NULL, *spool = NULL;
    uint64_t parent;
    remote_worker_opts_t ro;
    remote_worker_opts_default(&ro);
    arg_spec_t specs[ARGS_MAX] = {
        ARG(S_WORKER_RUN_DIR, &run_dir), ARG(S_RECORDS_FD, &o.records_fd),
        ARG(S_CONTROL_FD, &o.control_fd), ARG(S_WORKER_MODEL, &o.model_path), ARG(S_GEN, &o.gen),
        ARG(S_PARENT_PID, &parent), ARG(S_WORKER_FAULT, &fault), ARG(S_SPOOL, &spool),
    };
    int ns = args_count(specs, ARGS_MAX);
    ns += remote_worker_args(specs + ns, &ro);
    int rc = args_parse(&help, specs, ns, argc, argv, NULL, 0, NULL);
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
        char err[1024];
        if (remote_worker_run(&ro, err, sizeof err) != 0) {
            fprintf(stderr, "gomoku worker: %s\n", err);
            return 1;
        }
        return 0;
    }
    if (!run_dir || o.records_fd < 0 || o.control_fd < 0 || !o.model_path)
        return args_fail(&help, "--run-dir, --records-fd, --control-fd and --model are required");
    o.sp.threads = ro.threads;
    if (ro.seed != 0)
        o.sp.seed = ro.seed;
    o.fault = strcmp(fault, "garbage") == 0 ? WORKER_FAULT_GARBAGE
              : strcmp(fault, "stall") == 0 ? WORKER_FAULT_STALL
              : strcmp(fault, "forge") == 0 ? WORKER_FAULT_FORGE : WORKER_FAULT_NONE;
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
