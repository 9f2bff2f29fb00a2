#include "selfplay/trainer.h"

#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "engine/frame.h"
#include "engine/record.h"
#include "nn/nn.h"
#include "selfplay/checkpoint.h"
#include "selfplay/replay.h"
#include "selfplay/rundir.h"
#include "selfplay/selfplay.h"
#include "selfplay/trainer_int.h"
#include "selfplay/wire.h"
#include "util/util.h"


static volatile sig_atomic_t g_stop_signal;

/* A repeated signal changes nothing: `timeout` and process-group kills
 * deliver the same signal twice, and the checkpoint must still happen. */
static void on_stop_signal(int sig) { g_stop_signal = sig; }

void trainer_log(trainer_t *t, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "%sgomoku train: %s\n", t->tty ? "\r\033[K" : "", msg);
    if (t->log) {
        time_t now = time(NULL);
        struct tm tm;
        char ts[32];
        strftime(ts, sizeof ts, "%Y-%m-%d %H:%M:%S", localtime_r(&now, &tm));
        fprintf(t->log, "%s %s\n", ts, msg);
        fflush(t->log);
    }
}

const char *trainer_path(trainer_t *t, const char *fmt, ...)
{
    char rel[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(rel, sizeof rel, fmt, ap);
    va_end(ap);
    snprintf(t->path, sizeof t->path, "%s/%s", t->dir, rel);
    return t->path;
}

/* ---- checkpoints ------------------------------------------------------ */

static int cmp_u64_desc(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* Numbers N of the files "<prefix>NNNNNN<suffix>" in dir, sorted descending. */
static int list_numbered(const char *dir, const char *prefix, const char *suffix,
                         uint64_t **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    DIR *d = opendir(dir);
    if (!d)
        return errno == ENOENT ? 0 : -1;
    size_t cap = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        uint64_t v;
        if (!run_numbered_name(de->d_name, prefix, suffix, &v))
            continue;
        if (*n == cap) {
            cap = cap ? cap * 2 : 64;
            uint64_t *p = realloc(*out, cap * sizeof *p);
            if (!p) {
                closedir(d);
                return -1;
            }
            *out = p;
        }
        (*out)[(*n)++] = v;
    }
    closedir(d);
    if (*n > 0)
        qsort(*out, *n, sizeof **out, cmp_u64_desc);
    return 0;
}

int trainer_list_numbered(const trainer_t *t, const char *sub, const char *prefix,
                          const char *suffix, char *dir, size_t dirlen, uint64_t **out, size_t *n,
                          char *err, size_t errlen)
{
    snprintf(dir, dirlen, "%s/%s", t->dir, sub);
    if (list_numbered(dir, prefix, suffix, out, n) == 0)
        return 0;
    if (err)
        snprintf(err, errlen, "cannot list %s: %s", dir, strerror(errno));
    return -1;
}

/* Keep the newest keep_checkpoints checkpoints and those at multiples of
 * keep_every steps; remove the rest (the newest is never removed). */
static void prune_checkpoints(trainer_t *t)
{
    char dir[3200];
    uint64_t *nums;
    size_t n;
    if (trainer_list_numbered(t, "models", "", ".gzm", dir, sizeof dir, &nums, &n, NULL, 0) != 0)
        return;
    for (size_t i = (size_t)t->cfg.keep_checkpoints; i < n; i++) {
        if (t->cfg.keep_every > 0 && nums[i] % (uint64_t)t->cfg.keep_every == 0)
            continue;
        char p[3300];
        snprintf(p, sizeof p, "%s/%06" PRIu64 ".gzm", dir, nums[i]);
        if (unlink(p) != 0 && errno != ENOENT)
            trainer_log(t, "cannot remove old checkpoint %s: %s", p, strerror(errno));
        char opt[3400];
        ckpt_opt_path(p, opt, sizeof opt);
        unlink(opt);
    }
    free(nums);
}

/* Remove what a killed atomic write left: NAME.tmp.PID files in dir. */
static void remove_stale_tmp(trainer_t *t, const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *de;
    int removed = 0;
    while ((de = readdir(d)))
        if (strstr(de->d_name, ".tmp.") && unlinkat(dirfd(d), de->d_name, 0) == 0)
            removed++;
    closedir(d);
    if (removed)
        trainer_log(t, "removed %d stale temporary files in %s (left by a killed write)", removed, dir);
}

/* 0 if m (read from path) is a net of the run's shape and rule; else -1
 * with a message naming both. */
static int model_fits(const trainer_t *t, const nn_model_t *m, const nn_config_t *want,
                      const char *path, char *err, size_t errlen)
{
    if (m->cfg.blocks == want->blocks && m->cfg.channels == want->channels &&
        m->cfg.board_max == want->board_max && m->rule == (uint32_t)t->cfg.rule &&
        m->cfg.policy_outputs == want->policy_outputs && m->cfg.features == want->features &&
        m->cfg.value_pool == want->value_pool)
        return 0;
    snprintf(err, errlen, "%s is a %dx%d net with %d policy outputs, %s planes and %s value "
             "pooling for %dx%d %s, but the run's config says %dx%d with %d, %s and %s for "
             "%dx%d %s", path, m->cfg.blocks, m->cfg.channels, m->cfg.policy_outputs,
             nn_features_name(m->cfg.features), nn_value_pool_name(m->cfg.value_pool),
             m->cfg.board_max, m->cfg.board_max, rule_name((rule_t)m->rule), want->blocks,
             want->channels, want->policy_outputs, nn_features_name(want->features),
             nn_value_pool_name(want->value_pool), want->board_max, want->board_max,
             rule_name(t->cfg.rule));
    return -1;
}

static int load_or_create_model(trainer_t *t, char *err, size_t errlen)
{
    nn_config_t want;
    nn_config_default(&want, t->cfg.blocks, t->cfg.channels, t->cfg.size);
    want.policy_outputs = t->cfg.policy_heads;
    if (nn_features_parse(t->cfg.planes, &want.features, err, errlen) != 0)
        return -1;
    want.in_planes = nn_feature_planes(want.features);
    if (nn_value_pool_parse(t->cfg.value_pool, &want.value_pool, err, errlen) != 0)
        return -1;
    char dir[3200];
    uint64_t *nums;
    size_t n;
    if (trainer_list_numbered(t, "models", "", ".gzm", dir, sizeof dir, &nums, &n, err, errlen))
        return -1;
    for (size_t i = 0; i < n && !t->model; i++) {
        char lerr[512];
        snprintf(t->model_path, sizeof t->model_path, "%s/%06" PRIu64 ".gzm", dir, nums[i]);
        nn_model_t *m = nn_model_load(t->model_path, lerr, sizeof lerr);
        if (!m) {
            trainer_log(t, "skipping checkpoint %s: %s", t->model_path, lerr);
            continue;
        }
        if (model_fits(t, m, &want, t->model_path, err, errlen) != 0) {
            nn_model_free(m);
            free(nums);
            return -1;
        }
        t->model = m;
    }
    if (!t->model && n > 0) {
        snprintf(err, errlen, "none of the %zu checkpoints in %s loads (see above)", n, dir);
        free(nums);
        return -1;
    }
    free(nums);
    if (t->model) {
        t->step = t->model->step;
        t->generation = t->model->generation;
        trainer_log(t, "resuming from %s (step %" PRIu64 ", generation %" PRIu64 ")", t->model_path,
             t->step, t->generation);
        return 0;
    }
    uint64_t init_step = 0;
    if (t->o->init_model) {
        t->model = nn_model_load(t->o->init_model, err, errlen);
        if (!t->model)
            return -1;
        int from = t->model->cfg.features;
        if (nn_model_widen_features(t->model, want.features, err, errlen) != 0)
            return -1;
        if (from != want.features)
            trainer_log(t, "widened %s from %s to %s planes (the new planes' filters start at 0)",
                        t->o->init_model, nn_features_name(from), nn_features_name(want.features));
        int pool = t->model->cfg.value_pool;
        if (nn_model_widen_value_pool(t->model, want.value_pool, err, errlen) != 0)
            return -1;
        if (pool != want.value_pool)
            trainer_log(t, "gave %s's value head the %s pooling (the new weights start at 0)",
                        t->o->init_model, nn_value_pool_name(want.value_pool));
        if (model_fits(t, t->model, &want, t->o->init_model, err, errlen) != 0)
            return -1;
        init_step = t->model->step;
    } else {
        t->model = nn_model_create(&want, t->cfg.seed, err, errlen);
        if (!t->model)
            return -1;
    }
    t->model->rule = (uint32_t)t->cfg.rule;
    /* steps count this run's own (the replay ratio is per run) */
    t->model->step = 0;
    t->model->generation = 0;
    snprintf(t->model_path, sizeof t->model_path, "%s/%06d.gzm", dir, 0);
    if (nn_model_save(t->model, t->model_path, err, errlen) != 0)
        return -1;
    trainer_log(t, "new run: %d blocks x %d channels, %s planes, %s value pooling, %dx%d %s, "
                "initial model %s", want.blocks, want.channels, nn_features_name(want.features),
                nn_value_pool_name(want.value_pool), t->cfg.size, t->cfg.size,
                rule_name(t->cfg.rule), t->model_path);
    if (t->o->init_model)
        trainer_log(t, "initial weights from %s (trained %" PRIu64 " steps before)",
                    t->o->init_model, init_step);
    return 0;
}

/* ---- training --------------------------------------------------------- */

static int checkpoint(trainer_t *t, char *err, size_t errlen)
{
    if (t->step == t->ckpt_step)
        return 0;
    t->model->step = t->step;
    t->model->generation = t->generation + 1;
    char p[4096];
    snprintf(p, sizeof p, "%s/models/%06" PRIu64 ".gzm", t->dir, t->step);
    if (ckpt_save(t->net, t->model, p, err, errlen) != 0)
        return -1;
    t->generation++;
    t->ckpt_step = t->step;
    snprintf(t->model_path, sizeof t->model_path, "%s", p);
    prune_checkpoints(t);
    trainer_shard_sync(t);
    char line[4200];
    snprintf(line, sizeof line, "model %" PRIu64 " %s\n", t->generation, p);
    for (int i = 0; i < t->nw; i++)
        trainer_worker_send(t, &t->w[i], line);
    trainer_broker_publish(t, p);
    trainer_log(t, "checkpoint %s (generation %" PRIu64 ", %" PRIu64 " games)", p, t->generation,
         t->games);
    return 0;
}

/* A checkpoint that cannot be written (a full disk) does not end the run:
 * training waits (no step goes unsaved for long) and it is tried again
 * every 10 s; the workers and the games go on. */
static void checkpoint_or_wait(trainer_t *t)
{
    char err[4400];
    if (checkpoint(t, err, sizeof err) == 0) {
        if (t->ckpt_owed)
            trainer_log(t, "checkpoint written after all: training goes on");
        t->ckpt_owed = 0;
        return;
    }
    if (!t->ckpt_owed)
        trainer_log(t, "%s; training waits until a checkpoint can be written (tried every 10 s)",
                    err);
    t->ckpt_owed = 1;
    t->ckpt_retry_at = util_now_ms() * 1e-3 + 10.0;
}

static int can_train(trainer_t *t)
{
    if (t->ckpt_owed || replay_positions(t->replay) < t->min_positions)
        return 0;
    return (double)(t->step + 1) * t->cfg.batch <= t->cfg.ratio * (double)t->positions;
}

static int losses_finite(const nn_losses_t *l)
{
    return isfinite(l->policy) && isfinite(l->value) && isfinite(l->l2) && isfinite(l->total);
}

/* Steps between weight snapshots for the NaN rollback: copying the weights
 * off the device every step would cost a full download per step (a 20x256
 * net is 94 MB), and a rollback of a few steps is as good as one. */
#define SNAPSHOT_EVERY 16

/* One step; 0, or -1 with err when the backend fails. A step whose loss is
 * not finite is skipped and counted, and the weights go back to the newest
 * snapshot proven finite (at most SNAPSHOT_EVERY steps old): a finite loss
 * (its l2 term included) proves the weights it was computed with, so a step
 * that turned finite weights into NaN is caught by the next one.
 * nonfinite_limit of them in a row stop the run. */
static int train_one(trainer_t *t, char *err, size_t errlen)
{
    replay_batch_t *b = replay_batcher_take(t->batcher);
    nn_train_opts_t o = t->topts;
    o.lr = nn_schedule_lr(&t->sched, t->step);
    nn_losses_t l;
    if (t->o->fault && (strcmp(t->o->fault, "nan-loss") == 0 ||
                        (strcmp(t->o->fault, "nan-once") == 0 && t->step == 5 &&
                         t->nonfinite_skipped == 0)))
        b->value[0] = NAN; /* tests: a poisoned target */
    int take = !t->have_good || t->step % SNAPSHOT_EVERY == 0;
    if (take)
        nn_net_get_weights(t->net, t->snapshot);
    int rc = nn_net_train_step(t->net, b->in, b->policy, b->value, b->n, &o, &l, err, errlen);
    replay_batcher_release(t->batcher, b);
    if (rc != 0)
        return -1;
    if (!losses_finite(&l)) {
        nn_net_set_weights(t->net, t->have_good ? t->good : t->model->params);
        /* the NaN reached the momentum too: start it afresh */
        memset(t->snapshot, 0, t->model->nparams * sizeof *t->snapshot);
        nn_net_set_momentum(t->net, t->snapshot);
        t->nonfinite_skipped++;
        t->nonfinite_run++;
        if (t->nonfinite_skipped <= 3 || t->nonfinite_run == t->cfg.nonfinite_limit)
            trainer_log(t, "step %" PRIu64 ": non-finite loss (policy %g, value %g): step skipped "
                 "(%d in a row, %" PRIu64 " in all)", t->step + 1, (double)l.policy,
                 (double)l.value, t->nonfinite_run, t->nonfinite_skipped);
        if (t->nonfinite_run >= t->cfg.nonfinite_limit)
            t->stop_nonfinite = 1;
        return 0;
    }
    if (take) {
        float *tmp = t->good;
        t->good = t->snapshot;
        t->snapshot = tmp;
        t->have_good = 1;
    }
    t->nonfinite_run = 0;
    t->last = l;
    t->loss_sum[0] += l.policy;
    t->loss_sum[1] += l.value;
    t->loss_sum[2] += l.l2;
    t->loss_sum[3] += l.total;
    t->loss_sum[4] += l.opp_policy;
    t->loss_sum[5] += l.soft_policy;
    t->loss_n++;
    t->step++;
    t->session_samples += (uint64_t)t->cfg.batch;
    return 0;
}

/* ---- the run ---------------------------------------------------------- */

/* The batcher's allocator: the training net's host memory. */
static void *trainer_host_alloc(void *net, size_t bytes) { return nn_net_host_alloc(net, bytes); }
static void trainer_host_free(void *net, void *p) { nn_net_host_free(net, p); }

static int setup(trainer_t *t, char *err, size_t errlen)
{
    const char *subdirs[] = {"models", "games", "spool"};
    for (int i = 0; i < 3; i++)
        if (util_mkdir(trainer_path(t, "%s", subdirs[i]), err, errlen) != 0)
            return -1;
    t->log = fopen(trainer_path(t, "train.log"), "ae");
    remove_stale_tmp(t, t->dir);
    remove_stale_tmp(t, trainer_path(t, "models"));
    if (load_or_create_model(t, err, errlen) != 0)
        return -1;
    t->ckpt_step = t->step;
    t->start_step = t->step;
    t->target = t->o->steps_relative ? t->step + t->o->steps : t->o->steps;

    char note[256] = "";
    t->net = nn_net_create(t->model, t->cfg.device, t->cfg.batch, t->o->threads, note,
                           sizeof note, err, errlen);
    if (!t->net)
        return -1;
    snprintf(t->device, sizeof t->device, "%s", nn_net_device_name(t->net));
    if (t->step > 0) {
        char oerr[4400];
        int r = ckpt_load_optimizer(t->net, t->model, t->model_path, oerr, sizeof oerr);
        if (r < 0) {
            snprintf(err, errlen, "%s", oerr);
            return -1;
        }
        if (r == 0)
            trainer_log(t, "optimizer state not restored (momentum starts at 0): %s", oerr);
    }
    if (note[0])
        trainer_log(t, "%s", note);

    t->replay = replay_create(t->cfg.window, t->cfg.rule, t->cfg.size, t->cfg.size,
                              t->cfg.policy_heads);
    if (!t->replay) {
        snprintf(err, errlen, "out of memory for the replay window");
        return -1;
    }
    replay_set_features(t->replay, t->model->cfg.features);
    replay_set_value_mix(t->replay, t->cfg.value_mix);
    if (!(t->ids = broker_ids_create())) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    if (trainer_load_games(t, err, errlen) != 0)
        return -1;
    if (trainer_shard_open(t, err, errlen) != 0)
        return -1;
    /* games the workers of a killed trainer had sent and it had not stored */
    trainer_spools_take_all(t);
    if (t->o->broker_url && trainer_broker_start(t, err, errlen) != 0)
        return -1;
    t->min_positions = (uint64_t)t->cfg.batch * 2;
    if (t->min_positions > (uint64_t)t->cfg.window)
        t->min_positions = (uint64_t)t->cfg.window;
    /* minibatches in the net's host memory (pinned on CUDA): the step copies
     * them to the device without a staging copy */
    const replay_alloc_t host = {trainer_host_alloc, trainer_host_free, t->net};
    t->batcher = replay_batcher_create(t->replay, t->cfg.batch, t->o->assemble_threads, 3,
                                       t->min_positions, t->cfg.seed ^ (t->step * 0x9e37u),
                                       &host);
    if (!t->batcher) {
        snprintf(err, errlen, "cannot start the minibatch threads");
        return -1;
    }
    t->topts.lr = (float)t->cfg.lr;
    t->topts.momentum = (float)t->cfg.momentum;
    t->topts.weight_decay = (float)t->cfg.weight_decay;
    t->topts.policy_weight[NN_POLICY_MAIN] = 1.0f;
    t->topts.policy_weight[NN_POLICY_OPP] = (float)t->cfg.opp_weight;
    t->topts.policy_weight[NN_POLICY_SOFT] = (float)t->cfg.soft_weight;
    t->sched.lr = (float)t->cfg.lr;
    t->sched.final_frac = 1.0f;
    t->sched.warmup_steps = t->cfg.warmup;
    t->snapshot = malloc(t->model->nparams * sizeof *t->snapshot);
    t->good = malloc(t->model->nparams * sizeof *t->good);
    if (!t->snapshot || !t->good) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    const char *fe = getenv("GOMOKU_FAULT_ENOSPC");
    if (fe && sscanf(fe, "%ld:%ld", &t->fault_enospc_after, &t->fault_enospc_count) != 2) {
        snprintf(err, errlen, "GOMOKU_FAULT_ENOSPC wants N:M (tests only), got '%s'", fe);
        return -1;
    }
    t->sched.total_steps = 0;
    return 0;
}

int trainer_args(arg_spec_t *out, trainer_opts_t *o)
{
    const arg_spec_t specs[] = {
        ARG(S_BROKER, &o->broker_url), ARG(S_RUN_NAME, &o->run_name),
        ARG(S_STREAM_MAX, &o->stream_max), ARG(S_TRAIN_THREADS, &o->threads),
        ARG(S_ASSEMBLE_THREADS, &o->assemble_threads), ARG(S_METRICS_EVERY, &o->metrics_every),
        ARG(S_BAD_FRAME_LIMIT, &o->bad_frame_limit), ARG(S_STOP_TIMEOUT, &o->stop_timeout_s),
        ARG(S_TRAIN_WORKER_FAULT, &o->worker_fault), ARG(S_INIT_MODEL, &o->init_model),
        ARG(S_TRAIN_FAULT, &o->fault), ARG(S_GAMES_LOG, &o->games_log),
    };
    static_assert(ARGS_COUNT(specs) <= ARGS_GROUP_MAX, "a group fits");
    return args_append(out, specs, ARGS_COUNT(specs));
}

void trainer_opts_default(trainer_opts_t *o)
{
    memset(o, 0, sizeof *o);
    run_config_default(&o->cfg);
    o->lock_fd = -1;
    arg_spec_t specs[ARGS_GROUP_MAX];
    args_defaults(specs, trainer_args(specs, o));
}

int trainer_run(const trainer_opts_t *o, char *err, size_t errlen)
{
    trainer_t *t = calloc(1, sizeof *t);
    if (!t) {
        broker_free(o->broker);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    t->o = o;
    t->broker = o->broker;   /* ours from here on: freed by trainer_broker_free */
    t->cfg = o->cfg;
    snprintf(t->dir, sizeof t->dir, "%s", o->run_dir);
    t->tty = isatty(2);
    t->shard_fd = -1;
    t->t_start = util_now_ms() * 1e-3;
    record_init(&t->rec);
    snprintf(t->state, sizeof t->state, "starting");
    int rc = -1;

    util_catch_stop_signals(on_stop_signal, NULL);
    signal(SIGPIPE, SIG_IGN);
    g_stop_signal = 0;

    if (setup(t, err, errlen) != 0)
        goto out;
    if (t->target && t->step >= t->target) {
        trainer_log(t, "already at step %" PRIu64 " (target %" PRIu64 "): nothing to do", t->step,
             t->target);
        rc = 0;
        goto out;
    }

    t->nw = t->cfg.workers;
    t->w = calloc((size_t)t->nw, sizeof *t->w);
    if (!t->w) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    for (int i = 0; i < t->nw; i++) {
        t->w[i].id = i;
        t->w[i].rec_fd = t->w[i].ctl_fd = -1;
        t->w[i].fs = frame_stream_create();
        if (!t->w[i].fs) {
            snprintf(err, errlen, "out of memory");
            goto out;
        }
        if (trainer_spawn_worker(t, &t->w[i]) != 0)
            trainer_schedule_restart(&t->w[i]);
    }
    if (t->cfg.cheap_visits > t->cfg.visits)
        trainer_log(t, "cheap_visits %d is above visits %d: cheap searches use %d visits",
                    t->cfg.cheap_visits, t->cfg.visits, t->cfg.visits);
    trainer_log(t, "%d workers (%d games each, %d visits, %d cheap for %.0f%% of moves), training on %s, batch %d, ratio %.3g, "
         "window %d positions%s", t->nw, t->cfg.parallel, t->cfg.visits,
         t->cfg.cheap_visits < t->cfg.visits ? t->cfg.cheap_visits : t->cfg.visits,
         100.0 * (1 - t->cfg.full_frac), t->device,
         t->cfg.batch, t->cfg.ratio, t->cfg.window, t->target ? "" : "; Ctrl-C stops");
    if (t->cfg.open_frac > 0.0)
        trainer_log(t, "%.0f%% of games start from a random opening of 1..%d stones, kept when its "
                    "first search's root value is within -%.2f..%.2f", 100.0 * t->cfg.open_frac,
                    t->cfg.open_stones, t->cfg.open_balance, t->cfg.open_balance);
    if (t->cfg.value_mix > 0.0)
        trainer_log(t, "value target: %.0f%% the game's result, %.0f%% the search's root value",
                    100.0 * (1.0 - t->cfg.value_mix), 100.0 * t->cfg.value_mix);
    if (t->cfg.selfplay_vct_root_nodes != SELFPLAY_VCT_ROOT_NODES ||
        t->cfg.selfplay_vct_cheap_nodes != SELFPLAY_VCT_ROOT_NODES ||
        t->cfg.selfplay_vct_defend_nodes != 0)
        trainer_log(t, "self-play's threat search: the root's VCT within %d nodes (a cheap "
                    "search's: %d), its defence %d nodes a solve (0: off)",
                    t->cfg.selfplay_vct_root_nodes,
                    t->cfg.selfplay_vct_cheap_nodes < t->cfg.selfplay_vct_root_nodes
                        ? t->cfg.selfplay_vct_cheap_nodes
                        : t->cfg.selfplay_vct_root_nodes,
                    t->cfg.selfplay_vct_defend_nodes);

    while (!g_stop_signal && !t->stop_nonfinite && !(t->target && t->step >= t->target)) {
        trainer_restart_due(t);
        if (t->ckpt_owed && util_now_ms() * 1e-3 >= t->ckpt_retry_at)
            checkpoint_or_wait(t);
        int train = can_train(t);
        if (t->broker && broker_connected(t->broker)) {
            /* the broker's blocking read is the wait; local pipes are polled around it */
            trainer_poll_workers(t, 0, 0);
            trainer_broker_poll(t, train ? 0 : t->nw ? 20 : 100);
        } else {
            trainer_poll_workers(t, train ? 0 : 100, 0);
            trainer_broker_poll(t, 0); /* reconnects when its backoff allows */
        }
        train = can_train(t);
        if (!train && t->nw == 0 && !t->broker && !t->ckpt_owed) {
            trainer_log(t, "no workers and no broker: the %" PRIu64 " stored positions allow no "
                        "more steps at ratio %.3g; stopping", t->positions, t->cfg.ratio);
            break;
        }
        if (train) {
            snprintf(t->state, sizeof t->state, "training");
            if (train_one(t, err, errlen) != 0)
                goto out_stop;
            if (t->step % (uint64_t)o->metrics_every == 0)
                trainer_metrics_row(t);
            if (t->step % (uint64_t)t->cfg.checkpoint_every == 0)
                checkpoint_or_wait(t);
        } else {
            snprintf(t->state, sizeof t->state, t->ckpt_owed ? "checkpoint failed" :
                     "waiting for games");
        }
        if (t->disk_full)
            snprintf(t->state, sizeof t->state, "disk full");
        trainer_progress(t, 0);
    }
    if (t->stop_nonfinite) {
        snprintf(err, errlen, "%d training steps in a row gave a non-finite loss: stopping "
                 "(the last checkpoint %s holds finite weights; try a lower lr)",
                 t->nonfinite_run, t->model_path);
        goto out_stop;
    }
    if (g_stop_signal)
        trainer_log(t, "%s: finishing: checkpoint, then stopping the workers",
             g_stop_signal == SIGINT ? "SIGINT" : "SIGTERM");
    snprintf(t->state, sizeof t->state, "stopping");
    trainer_metrics_row(t);
    if (checkpoint(t, err, errlen) != 0)
        goto out_stop;
    rc = 0;
out_stop:
    if (rc != 0)
        trainer_log(t, "%s", err);
    snprintf(t->state, sizeof t->state, "stopping");
    trainer_progress(t, 1);
    trainer_stop_workers(t);
    trainer_broker_drain(t, t->o->stop_timeout_s);
    trainer_shard_sync(t);
    snprintf(t->state, sizeof t->state, "stopped");
    trainer_progress(t, 1);
    if (t->tty)
        fprintf(stderr, "\n");
    trainer_log(t, "stopped at step %" PRIu64 ", generation %" PRIu64 ", %" PRIu64 " games (%" PRIu64
         " this session), %" PRIu64 " rejected frames", t->step, t->generation, t->games,
         t->session_games, t->rejected);
    if (t->held_len || t->games_deferred)
        trainer_log(t, "games/ was still full: %" PRIu64 " games could not be written; they stay "
                    "in the workers' spools (%s/spool) and are stored when the run resumes",
                    t->games_deferred + (t->held_len > 0), t->dir);
out:
    replay_batcher_free(t->batcher);
    trainer_broker_free(t);
    for (int i = 0; i < t->nw; i++) {
        if (t->w[i].rec_fd >= 0)
            close(t->w[i].rec_fd);
        if (t->w[i].ctl_fd >= 0)
            close(t->w[i].ctl_fd);
        frame_stream_free(t->w[i].fs);
    }
    for (int i = 0; i < t->nw; i++)
        free(t->w[i].acks);
    free(t->w);
    free(t->held);
    free(t->snapshot);
    free(t->good);
    if (t->shard_fd >= 0)
        close(t->shard_fd);
    replay_free(t->replay);
    nn_net_free(t->net);
    nn_model_free(t->model);
    record_free(&t->rec);
    if (t->log)
        fclose(t->log);
    free(t);
    return rc;
}

