/* gomoku train RUN_DIR: create or resume a training run (selfplay/trainer.h). */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/args.h"
#include "cli/cmds.h"
#include "selfplay/rundir.h"
#include "selfplay/trainer.h"
#include "engine/util.h"

static const cmd_help_t help = {
    "train",
    "gomoku train RUN_DIR [--workers K --parallel G --visits V --blocks B --channels C "
    "--rule R --size N --device D --steps S|+N ...]",
    "Create a training run in RUN_DIR, or resume the one there: spawn K self-play\n"
    "workers, save their games to RUN_DIR/games/, train on a replay window and\n"
    "checkpoint to RUN_DIR/models/ every N steps. Settings are saved in\n"
    "RUN_DIR/config when the run is created; on resume they come from there\n"
    "(only --workers, --device, --threads and the step target may differ).\n"
    "--steps S stops at step S, --steps +N after N more steps; without it the\n"
    "run goes on until Ctrl-C or SIGTERM (it finishes the step, checkpoints,\n"
    "stops the workers and exits 0). Watch RUN_DIR/status.json and\n"
    "RUN_DIR/metrics.csv."};

/* Is dir missing or empty (but for our own lock/log files)? */
static int dir_is_fresh(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return 1;
    struct dirent *de;
    int fresh = 1;
    while ((de = readdir(d)))
        if (strcmp(de->d_name, ".") && strcmp(de->d_name, "..") && strcmp(de->d_name, "lock") &&
            strcmp(de->d_name, "train.log"))
            fresh = 0;
    closedir(d);
    return fresh;
}

int cmd_train(int argc, char **argv)
{
    run_config_t def;
    run_config_default(&def);
    trainer_opts_t o;
    trainer_opts_default(&o);
    /* -1 / NULL: not given on the command line */
    int workers = -1, parallel = -1, visits = -1, cheap = -1, blocks = -1, channels = -1, size = -1,
        batch = -1, ckpt = -1, window = -1;
    double lr = -1, ratio = -1, full_frac = -1, resign = -1;
    const char *rule = NULL, *device = NULL, *steps = NULL;
    uint64_t seed = 0;
    int seed_given_sentinel = 0;
    const char *seed_str = NULL;
    arg_spec_t specs[] = {
        {"workers", ARG_INT, &workers, 1, 256, "K  self-play worker processes (default 1)"},
        {"parallel", ARG_INT, &parallel, 1, 4096, "G  concurrent games per worker (default 16)"},
        {"visits", ARG_INT, &visits, 1, 1000000, "V  playouts per full search (default 200)"},
        {"cheap-visits", ARG_INT, &cheap, 1, 1000000, "V  playouts of a cheap search (default 50)"},
        {"full-frac", ARG_DOUBLE, &full_frac, 0.0001, 1, "F  fraction of moves searched fully; only they train the policy (default 0.25)"},
        {"resign", ARG_DOUBLE, &resign, 0, 1, "T  self-play resigns below root value -T; 0: never (default 0.9)"},
        {"blocks", ARG_INT, &blocks, 0, 64, "B  residual blocks (default 6)"},
        {"channels", ARG_INT, &channels, 1, 1024, "C  trunk channels (default 64)"},
        {"rule", ARG_STR, &rule, 0, 0, "R  freestyle, standard or renju (default freestyle)"},
        {"size", ARG_INT, &size, BOARD_MIN, BOARD_MAX, "N  board size (default 15)"},
        {"device", ARG_STR, &device, 0, 0, "D  auto, cpu, cuda, cuda:N (default auto)"},
        {"steps", ARG_STR, &steps, 0, 0, "S|+N  stop at step S, or after N more steps"},
        {"batch", ARG_INT, &batch, 1, 65536, "N  minibatch size (default 256)"},
        {"lr", ARG_DOUBLE, &lr, 1e-7, 10, "X  learning rate (default 0.02)"},
        {"checkpoint-every", ARG_INT, &ckpt, 1, 100000000, "N  steps between checkpoints (default 100)"},
        {"ratio", ARG_DOUBLE, &ratio, 0.01, 1e6, "R  training samples per new self-play position (default 4)"},
        {"window", ARG_INT, &window, 1, 2000000000, "N  replay window in positions (default 250000)"},
        {"seed", ARG_STR, &seed_str, 0, 0, "S  random seed (default 1)"},
        {"threads", ARG_INT, &o.threads, 0, 256, "T  CPU threads for training (default 1; 0: all)"},
        {"assemble-threads", ARG_INT, &o.assemble_threads, 1, 64, "T  minibatch assembly threads (default 1)"},
        {"metrics-every", ARG_INT, &o.metrics_every, 1, 1000000, "N  steps per metrics.csv row (default 10)"},
        {"bad-frame-limit", ARG_INT, &o.bad_frame_limit, 0, 1000000000, "N  corrupt frames before a worker is restarted (default 50; 0: never)"},
        {"stop-timeout", ARG_INT, &o.stop_timeout_s, 1, 3600, "S  seconds to wait for workers to stop (default 20)"},
        {"worker-fault", ARG_STR, &o.worker_fault, 0, 0, "F  tests only: workers send corrupt frames (garbage)"},
    };
    char *pos[1];
    int npos = 0;
    int rc = args_parse(&help, specs, (int)(sizeof specs / sizeof specs[0]), argc, argv, pos, 1,
                        &npos);
    if (rc == ARGS_HELP)
        return 0;
    if (rc != ARGS_OK)
        return 2;
    if (npos != 1)
        return args_fail(&help, "missing RUN_DIR");
    const char *dir = pos[0];
    rule_t rule_v = def.rule;
    if (rule && !rule_parse(rule, &rule_v))
        return args_fail(&help, "unknown rule '%s' (freestyle, standard or renju)", rule);
    if (device && (strlen(device) == 0 || strlen(device) >= sizeof def.device))
        return args_fail(&help, "bad --device '%s'", device);
    if (seed_str) {
        char *end;
        errno = 0;
        seed = strtoull(seed_str, &end, 10);
        if (errno || end == seed_str || *end || seed_str[0] == '-')
            return args_fail(&help, "--seed wants a non-negative integer, got '%s'", seed_str);
        seed_given_sentinel = 1;
    }
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
        strcmp(o.worker_fault, "none") != 0)
        return args_fail(&help, "--worker-fault must be none or garbage, got '%s'",
                         o.worker_fault);

    char err[1024];
    if (run_mkdir(dir, err, sizeof err) != 0) {
        fprintf(stderr, "gomoku train: %s\n", err);
        return 1;
    }
    o.lock_fd = run_lock(dir, err, sizeof err);
    if (o.lock_fd < 0) {
        fprintf(stderr, "gomoku train: %s\n", err);
        return 1;
    }
    char cpath[4096];
    snprintf(cpath, sizeof cpath, "%s/config", dir);
    run_config_t cfg;
    rc = 1;
    if (access(cpath, F_OK) == 0) {
        if (run_config_load(&cfg, cpath, err, sizeof err) != 0) {
            fprintf(stderr, "gomoku train: %s\n", err);
            goto out_unlock;
        }
        /* settings that define the experiment are fixed; say which one differs */
        char what[256] = "";
#define FIXED_I(given, field, name) \
    if (!what[0] && (given) >= 0 && (given) != cfg.field) \
        snprintf(what, sizeof what, "--%s %d but the run has %s=%d", name, (int)(given), name, cfg.field)
#define FIXED_D(given, field, name) \
    if (!what[0] && (given) >= 0 && (given) != cfg.field) \
        snprintf(what, sizeof what, "--%s %g but the run has %s=%g", name, (given), name, cfg.field)
        FIXED_I(parallel, parallel, "parallel");
        FIXED_I(visits, visits, "visits");
        FIXED_I(cheap, cheap_visits, "cheap-visits");
        FIXED_D(full_frac, full_frac, "full-frac");
        FIXED_D(resign, resign, "resign");
        FIXED_I(blocks, blocks, "blocks");
        FIXED_I(channels, channels, "channels");
        FIXED_I(size, size, "size");
        FIXED_I(batch, batch, "batch");
        FIXED_I(ckpt, checkpoint_every, "checkpoint-every");
        FIXED_I(window, window, "window");
        FIXED_D(lr, lr, "lr");
        FIXED_D(ratio, ratio, "ratio");
#undef FIXED_I
#undef FIXED_D
        if (!what[0] && rule && rule_v != cfg.rule)
            snprintf(what, sizeof what, "--rule %s but the run has rule=%s", rule_name(rule_v),
                     rule_name(cfg.rule));
        if (!what[0] && seed_given_sentinel && seed != cfg.seed)
            snprintf(what, sizeof what, "--seed %llu but the run has seed=%llu",
                     (unsigned long long)seed, (unsigned long long)cfg.seed);
        if (what[0]) {
            fprintf(stderr, "gomoku train: %s: %s (settings are fixed when a run is created; "
                            "use a new RUN_DIR)\n", cpath, what);
            goto out_unlock;
        }
        if (workers >= 0 && workers != cfg.workers) {
            fprintf(stderr, "gomoku train: using --workers %d (the run was created with %d)\n",
                    workers, cfg.workers);
            cfg.workers = workers;
        }
        if (device && strcmp(device, cfg.device) != 0) {
            fprintf(stderr, "gomoku train: using --device %s (the run was created with %s)\n",
                    device, cfg.device);
            snprintf(cfg.device, sizeof cfg.device, "%s", device);
        }
    } else {
        if (!dir_is_fresh(dir)) {
            fprintf(stderr, "gomoku train: %s is not empty and has no config: not a run "
                            "directory (use a new or empty one)\n", dir);
            goto out_unlock;
        }
        cfg = def;
        if (workers >= 0) cfg.workers = workers;
        if (parallel >= 0) cfg.parallel = parallel;
        if (visits >= 0) cfg.visits = visits;
        if (cheap >= 0) cfg.cheap_visits = cheap;
        if (full_frac >= 0) cfg.full_frac = full_frac;
        if (resign >= 0) cfg.resign = resign;
        if (blocks >= 0) cfg.blocks = blocks;
        if (channels >= 0) cfg.channels = channels;
        if (size >= 0) cfg.size = size;
        if (batch >= 0) cfg.batch = batch;
        if (ckpt >= 0) cfg.checkpoint_every = ckpt;
        if (window >= 0) cfg.window = window;
        if (lr >= 0) cfg.lr = lr;
        if (ratio >= 0) cfg.ratio = ratio;
        if (rule) cfg.rule = rule_v;
        if (seed_given_sentinel) cfg.seed = seed;
        if (device) snprintf(cfg.device, sizeof cfg.device, "%s", device);
        if (run_config_save(&cfg, cpath, err, sizeof err) != 0) {
            fprintf(stderr, "gomoku train: %s\n", err);
            goto out_unlock;
        }
        util_fsync_dir(dir);
    }
    o.cfg = cfg;
    o.run_dir = dir;
    if (trainer_run(&o, err, sizeof err) != 0) {
        fprintf(stderr, "gomoku train: %s\n", err);
        goto out_unlock;
    }
    rc = 0;
out_unlock:
    close(o.lock_fd);
    return rc;
}
