/* gomoku train RUN_DIR: create or resume a training run (selfplay/trainer.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmds.h"
#include "selfplay/args.h"
#include "selfplay/broker.h"
#include "selfplay/rundir.h"
#include "selfplay/trainer.h"
#include "util/util.h"

static const cmd_help_t help = {
    "train", BY_TRAIN,
    "gomoku train RUN_DIR [--workers K --parallel G --visits V --blocks B --channels C "
    "--rule R --size N --device D --steps S|+N ...]",
    "Create a training run in RUN_DIR, or resume the one there: spawn K self-play\n"
    "workers, save their games to RUN_DIR/games/, train on a replay window and\n"
    "checkpoint to RUN_DIR/models/ every N steps. Settings are saved in\n"
    "RUN_DIR/config when the run is created; on resume they come from there\n"
    "(those marked \"may change on resume\" below, --threads and the step target\n"
    "may differ; a changed value is saved to RUN_DIR/config).\n"
    "--steps S stops at step S, --steps +N after N more steps; without it the\n"
    "run goes on until Ctrl-C or SIGTERM (it finishes the step, checkpoints,\n"
    "stops the workers and exits 0). Watch RUN_DIR/status.json and\n"
    "RUN_DIR/metrics.csv.\n"
    "--workers 0 with --steps and no broker trains on the game shards already\n"
    "in RUN_DIR/games/ (shard-NNNNNN.gzr) alone, until the step target or until\n"
    "the stored games allow no more steps at the replay ratio."};

int cmd_train(int argc, char **argv)
{
    trainer_opts_t o;
    trainer_opts_default(&o);
    /* every run setting is an option, its text in given[id]; NULL: not given */
    const char *given[S_COUNT] = {0};
    const char *steps = NULL;
    arg_spec_t specs[ARGS_MAX] = {ARG(S_STEPS, &steps)};
    int ns = args_count(specs, ARGS_MAX);
    ns += trainer_args(specs + ns, &o);
    ns += run_config_args(specs + ns, given);
    char *pos[1];
    int npos = 0;
    int rc = args_parse(&help, specs, ns, argc, argv, pos, 1, &npos);
    if (rc != ARGS_OK)
        return args_exit_status(rc);
    if (npos != 1)
        return args_fail(&help, "missing RUN_DIR");
    const char *dir = pos[0];
    char err[4200];
    if (run_check_path(dir, err, sizeof err) != 0)
        return args_fail(&help, "%s", err);
    /* check every given value against the table's ranges before touching the disk */
    run_config_t cli;
    run_config_default(&cli);
    for (int i = 0; i < S_COUNT; i++)
        if (given[i] && run_setting_parse(&settings_table[i], &cli, given[i], err, sizeof err) != 0)
            return args_fail(&help, "--%s: %s", settings_table[i].opt, err);
    if (steps) {
        const char *s = steps;
        if (*s == '+') {
            o.steps_relative = 1;
            s++;
        }
        char *end;
        errno = 0;
        unsigned long long v = strtoull(s, &end, 10);
        if (errno || end == s || *end || *s == '-' || (o.steps_relative && v == 0))
            return args_fail(&help, "--steps wants S or +N (N >= 1), got '%s'", steps);
        o.steps = v;
    }
    if (given[S_WORKERS] && cli.workers == 0 && !o.broker_url && !steps)
        return args_fail(&help, "--workers 0 needs --broker or --steps (games must come from "
                         "somewhere, or training on the stored ones needs an end)");
    char run_name[256], broker_url[1024];
    if (o.broker_url) {
        broker_url_t bu;
        char uerr[512];
        if (broker_url_arg(o.broker_url, broker_url, sizeof broker_url, uerr, sizeof uerr) != 0 ||
            broker_url_parse(broker_url, &bu, uerr, sizeof uerr) != 0)
            return args_fail(&help, "%s", uerr);
        o.broker_url = broker_url;
        if (!o.run_name) {
            snprintf(run_name, sizeof run_name, "%s", dir);
            size_t n = strlen(run_name);
            while (n > 1 && run_name[n - 1] == '/')
                run_name[--n] = '\0';
            const char *slash = strrchr(run_name, '/');
            o.run_name = slash ? slash + 1 : run_name;
        }
        if (!broker_run_name_ok(o.run_name))
            return args_fail(&help, "run name '%s' must be 1-%d letters, digits, '.', '_' or '-' "
                             "(set it with --run-name)", o.run_name, BROKER_RUN_MAX);
    } else if (o.run_name) {
        return args_fail(&help, "--run-name needs --broker");
    }
    if (o.broker_url) {
        /* before anything is created: a refused password or database ends
         * here, with no run left behind (an unreachable broker is retried) */
        broker_url_t bu;
        char berr[512] = "";
        broker_url_parse(o.broker_url, &bu, berr, sizeof berr);
        o.broker = broker_create(&bu, o.run_name, berr, sizeof berr);
        memset(bu.password, 0, sizeof bu.password);
        if (!o.broker) {
            fprintf(stderr, "gomoku train: %s\n", berr);
            return 1;
        }
    }

    if (util_mkdir(dir, err, sizeof err) != 0) {
        fprintf(stderr, "gomoku train: %s\n", err);
        broker_free(o.broker);
        return 1;
    }
    o.lock_fd = run_lock(dir, err, sizeof err);
    if (o.lock_fd < 0) {
        fprintf(stderr, "gomoku train: %s\n", err);
        broker_free(o.broker);
        return 1;
    }
    run_config_t cfg;
    rc = 1;
    if (run_config_open(dir, &cli, given, &o.init_model, &cfg, err, sizeof err) != 0) {
        fprintf(stderr, "gomoku train: %s\n", err);
        goto out_unlock;
    }
    if (cfg.workers == 0 && !o.broker_url && !steps) {
        fprintf(stderr, "gomoku train: the run has 0 local workers: give --workers K, --broker "
                        "URL, or --steps to train on its stored games\n");
        goto out_unlock;
    }
    o.cfg = cfg;
    o.run_dir = dir;
    int trc = trainer_run(&o, err, sizeof err);
    o.broker = NULL;   /* the trainer's now (freed there) */
    if (trc != 0) {
        fprintf(stderr, "gomoku train: %s\n", err);
        goto out_unlock;
    }
    rc = 0;
out_unlock:
    broker_free(o.broker);
    run_unlock(o.lock_fd);
    return rc;
}
