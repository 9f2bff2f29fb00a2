/* gomoku train RUN_DIR: create or resume a training run (selfplay/trainer.h). */
#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/args.h"
#include "selfplay/broker.h"
#include "cli/cmds.h"
#include "nn/nn.h"
#include "selfplay/rundir.h"
#include "selfplay/trainer.h"
#include "util/util.h"

static const cmd_help_t help = {
    "train",
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
    "RUN_DIR/metrics.csv."};

/* Whether ok(dir, name) holds for every entry of dir but "." and ".."; a
 * directory that cannot be opened gives if_missing. */
static int dir_all(const char *dir, int (*ok)(const char *dir, const char *name), int if_missing)
{
    DIR *d = opendir(dir);
    if (!d)
        return if_missing;
    struct dirent *de;
    int all = 1;
    while (all && (de = readdir(d)))
        all = !strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") || ok(dir, de->d_name);
    closedir(d);
    return all;
}

static int is_lost_found(const char *dir, const char *name)
{
    (void)dir;
    return !strcmp(name, "lost+found");
}

/* An empty directory (a mount point, say): 1; anything else: 0. */
static int dir_is_empty(const char *path) { return dir_all(path, is_lost_found, 0); }

/* Our lock and log, or games/ or models/ while empty (a separate disk mounted there). */
static int may_be_in_new_run(const char *dir, const char *name)
{
    if (!strcmp(name, "lock") || !strcmp(name, "train.log"))
        return 1;
    if (strcmp(name, "games") && strcmp(name, "models"))
        return 0;
    char sub[4200];
    snprintf(sub, sizeof sub, "%s/%s", dir, name);
    return dir_is_empty(sub);
}

/* A directory a new run may be created in (or a missing one). */
static int dir_is_fresh(const char *dir) { return dir_all(dir, may_be_in_new_run, 1); }

/* A new run from an initial model takes the model's shape and rule; a
 * setting given on the command line must agree. 0, or -1 with err. */
static int take_model_shape(run_config_t *cfg, const char *const *given, const char *path,
                            char *err, size_t errlen)
{
    nn_model_t *m = nn_model_load(path, err, errlen);
    if (!m)
        return -1;
    const struct { const char *name, *opt; int *field; int value; } dims[] = {
        {"blocks", "blocks", &cfg->blocks, m->cfg.blocks},
        {"channels", "channels", &cfg->channels, m->cfg.channels},
        {"size", "size", &cfg->size, m->cfg.board_max},
        {"policy_heads", "policy-heads", &cfg->policy_heads, m->cfg.policy_outputs},
    };
    int rc = 0;
    for (size_t i = 0; i < sizeof dims / sizeof dims[0] && rc == 0; i++) {
        int k = (int)(run_setting_find(dims[i].name) - run_settings);
        if (given[k] && *dims[i].field != dims[i].value) {
            snprintf(err, errlen, "--%s %d, but --init-model %s has %s %d", dims[i].opt,
                     *dims[i].field, path, dims[i].opt, dims[i].value);
            rc = -1;
        }
        *dims[i].field = dims[i].value;
    }
    int kr = (int)(run_setting_find("rule") - run_settings);
    if (rc == 0 && given[kr] && cfg->rule != (rule_t)m->rule) {
        snprintf(err, errlen, "--rule %s, but --init-model %s was trained for %s",
                 rule_name(cfg->rule), path, rule_name((rule_t)m->rule));
        rc = -1;
    }
    cfg->rule = (rule_t)m->rule;
    nn_model_free(m);
    return rc;
}

int cmd_train(int argc, char **argv)
{
    trainer_opts_t o;
    trainer_opts_default(&o);
    /* every run setting is an option; NULL: not given */
    const char *given[64] = {0};
    char names[64][40], helps[64][200];
    assert(run_nsettings <= 64);
    const char *steps = NULL;
    arg_spec_t specs[64 + 16] = {
        {"broker", ARG_STR, &o.broker_url, 0, 0,
         "URL  also take games from remote workers: redis://[:password@]host:port[/db], or @FILE holding it"},
        {"run-name", ARG_STR, &o.run_name, 0, 0,
         "NAME  the run's name on the broker (default: RUN_DIR's base name)"},
        {"stream-max", ARG_INT, &o.stream_max, 16, 100000000,
         "N  games the broker's stream may hold before workers hold back (default 10000)"},
        {"steps", ARG_STR, &steps, 0, 0, "S|+N  stop at step S, or after N more steps"},
        {"threads", ARG_INT, &o.threads, 0, 256, "T  CPU threads for training (default 1; 0: all)"},
        {"assemble-threads", ARG_INT, &o.assemble_threads, 1, 64,
         "T  minibatch assembly threads (default 1)"},
        {"metrics-every", ARG_INT, &o.metrics_every, 1, 1000000,
         "N  steps per metrics.csv row (default 10)"},
        {"bad-frame-limit", ARG_INT, &o.bad_frame_limit, 0, 1000000000,
         "N  corrupt frames before a worker is restarted (default 50; 0: never)"},
        {"stop-timeout", ARG_INT, &o.stop_timeout_s, 1, 3600,
         "S  seconds to wait for workers to stop (default 20)"},
        {"worker-fault", ARG_STR, &o.worker_fault, 0, 0,
         "F  tests only: workers send corrupt frames (garbage), forged results (forge) or stall"},
        {"games-log", ARG_STR, &o.games_log, 0, 0,
         "FILE  tests only: workers append the id of each game they send"},
        {"init-model", ARG_STR, &o.init_model, 0, 0,
         "FILE  a new run starts from this model (its blocks, channels, size and rule) instead "
         "of random weights"},
        {"fault", ARG_STR, &o.fault, 0, 0,
         "F  tests only: nan-loss (every step's loss is NaN), nan-once (step 6's only)"},
    };
    int ns = args_count(specs, ARGS_COUNT(specs));
    for (int i = 0; i < run_nsettings; i++) {
        const setting_t *s = &run_settings[i];
        snprintf(names[i], sizeof names[i], "%s", s->name);
        for (char *p = names[i]; *p; p++)
            if (*p == '_')
                *p = '-';
        snprintf(helps[i], sizeof helps[i], "%s  %s (default %s%s)", s->arg, s->help, s->def,
                 s->may_change ? "; may change on resume" : "");
        specs[ns++] = (arg_spec_t){names[i], ARG_STR, &given[i], 0, 0, helps[i]};
    }
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
    for (int i = 0; i < run_nsettings; i++)
        if (given[i] && run_setting_parse(&run_settings[i], &cli, given[i], err, sizeof err) != 0)
            return args_fail(&help, "--%s: %s", names[i], err);
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
    if (o.worker_fault && strcmp(o.worker_fault, "garbage") != 0 &&
        strcmp(o.worker_fault, "stall") != 0 && strcmp(o.worker_fault, "forge") != 0 &&
        strcmp(o.worker_fault, "none") != 0)
        return args_fail(&help, "--worker-fault must be none, garbage, forge or stall, got '%s'",
                         o.worker_fault);
    if (o.fault && strcmp(o.fault, "nan-loss") != 0 && strcmp(o.fault, "nan-once") != 0 &&
        strcmp(o.fault, "none") != 0)
        return args_fail(&help, "--fault must be none, nan-loss or nan-once, got '%s'", o.fault);

    for (int i = 0; i < run_nsettings; i++)
        if (given[i] && strcmp(run_settings[i].name, "workers") == 0 && strcmp(given[i], "0") == 0 &&
            !o.broker_url)
            return args_fail(&help, "--workers 0 needs --broker (games must come from somewhere)");
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

    if (run_mkdir(dir, err, sizeof err) != 0) {
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
    char cpath[4096];
    snprintf(cpath, sizeof cpath, "%s/config", dir);
    run_config_t cfg;
    rc = 1;
    int fresh = access(cpath, F_OK) != 0;
    if (!fresh) {
        if (run_config_load(&cfg, cpath, err, sizeof err) != 0) {
            fprintf(stderr, "gomoku train: %s\n", err);
            goto out_unlock;
        }
        if (o.init_model) {
            fprintf(stderr, "gomoku train: --init-model ignored: %s is a run already (it "
                            "resumes from its own models)\n", dir);
            o.init_model = NULL;
        }
    } else {
        if (!dir_is_fresh(dir)) {
            fprintf(stderr, "gomoku train: %s is not empty and has no config: not a run "
                            "directory (use a new or empty one)\n", dir);
            goto out_unlock;
        }
        cfg = cli;
        if (o.init_model && take_model_shape(&cfg, given, o.init_model, err, sizeof err) != 0) {
            fprintf(stderr, "gomoku train: %s\n", err);
            goto out_unlock;
        }
    }
    int changed = fresh;
    for (int i = 0; i < run_nsettings && !fresh; i++) {
        const setting_t *s = &run_settings[i];
        if (!given[i])
            continue;
        char have[256], want[256];
        run_setting_format(s, &cfg, have, sizeof have);
        run_setting_format(s, &cli, want, sizeof want);
        if (strcmp(have, want) == 0)
            continue;
        if (!s->may_change) {
            /* settings that define the experiment are fixed */
            fprintf(stderr, "gomoku train: %s: --%s %s but the run has %s=%s (settings are "
                            "fixed when a run is created; use a new RUN_DIR)\n", cpath,
                    names[i], want, s->name, have);
            goto out_unlock;
        }
        fprintf(stderr, "gomoku train: using --%s %s (the run had %s)\n", names[i], want, have);
        run_setting_parse(s, &cfg, want, NULL, 0);
        changed = 1;
    }
    /* the workers read the config themselves, so it holds what this session uses */
    if (changed) {
        if (run_config_save(&cfg, cpath, err, sizeof err) != 0) {
            fprintf(stderr, "gomoku train: %s\n", err);
            goto out_unlock;
        }
        util_fsync_dir(dir);
    }
    if (cfg.workers == 0 && !o.broker_url) {
        fprintf(stderr, "gomoku train: the run has 0 local workers: give --workers K or --broker URL\n");
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
