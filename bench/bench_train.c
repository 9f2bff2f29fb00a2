/* gomoku bench train: training throughput, minibatch assembly included,
 * and minibatch assembly alone, on a replay window of random games. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "selfplay/args.h"
#include "engine/record.h"
#include "nn/nn.h"
#include "selfplay/replay.h"
#include "selfplay/rundir.h"
#include "util/util.h"

/* A random legal game with made-up visit counts on a few legal points. */
static int random_game(game_record_t *r, int size, uint64_t *rng)
{
    board_t b;
    board_init(&b, size, RULE_FREESTYLE);
    record_clear(r, RULE_FREESTYLE, size, 0);
    int legal[BOARD_CELLS];
    while (!board_over(&b)) {
        int n = 0;
        for (int m = 0; m < size * size; m++)
            if (board_check_move(&b, m) == MOVE_OK)
                legal[n++] = m;
        record_visit_t v[8];
        int nv = n < 8 ? n : 8;
        for (int i = 0; i < nv; i++) {
            int j = i + (int)(util_rng_next(rng) % (uint64_t)(n - i));
            int t = legal[i];
            legal[i] = legal[j];
            legal[j] = t;
            v[i].move = (int16_t)legal[i];
            v[i].count = (uint16_t)(1 + util_rng_next(rng) % 50);
        }
        if (record_add_ply(r, legal[0], 1, 0.0f, v, nv) != 0)
            return -1;
        board_play(&b, legal[0]);
    }
    r->result = b.result;
    return 0;
}

static void *bench_host_alloc(void *net, size_t bytes) { return nn_net_host_alloc(net, bytes); }
static void bench_host_free(void *net, void *p) { nn_net_host_free(net, p); }

static const cmd_help_t help = {
    "bench train", BY_BENCH_TRAIN,
    "gomoku bench train [--device D --blocks B --channels C --batch N --size S]",
    "Training samples/s with minibatch assembly (CPU threads, random symmetries)\n"
    "running alongside, and assembly samples/s alone, on a window of random\n"
    "games. Prints one JSON line."};

int bench_train(int argc, char **argv)
{
    const char *device;
    int blocks, channels, batch, size, steps, threads, games, nthreads;
    arg_spec_t specs[] = {
        ARG(S_DEVICE, &device), ARG(S_BATCH, &batch), ARG(S_SIZE, &size),
        ARG(S_BENCH_TRAIN_STEPS, &steps), ARG(S_TRAIN_THREADS, &threads),
        ARG(S_ASSEMBLE_THREADS, &nthreads), ARG(S_BENCH_TRAIN_GAMES, &games),
        ARG(S_BLOCKS, &blocks), ARG(S_CHANNELS, &channels),
    };
    int rc = args_parse(&help, specs, ARGS_COUNT(specs), argc, argv, NULL, 0, NULL);
    if (rc != ARGS_OK)
        return args_exit_status(rc);

    char err[512], note[256] = "";
    nn_model_t *m = nn_model_open(NULL, blocks, channels, size, 1, err, sizeof err);
    if (!m) {
        fprintf(stderr, "gomoku bench train: %s\n", err);
        return 1;
    }
    rc = 1;
    nn_net_t *net = nn_net_create(m, device, batch, threads, note, sizeof note, err, sizeof err);
    if (!net) {
        fprintf(stderr, "gomoku bench train: %s\n", err);
        goto out_free_model;
    }
    if (note[0])
        fprintf(stderr, "gomoku bench train: %s\n", note);
    replay_t *rp = replay_create(1 << 30, RULE_FREESTYLE, size, size, 1);
    if (!rp) {
        fprintf(stderr, "gomoku bench train: out of memory\n");
        goto out_free_net;
    }
    game_record_t rec;
    record_init(&rec);
    uint64_t rng = 12345;
    for (int g = 0; g < games; g++)
        if (random_game(&rec, size, &rng) != 0 || replay_add(rp, &rec) < 0) {
            fprintf(stderr, "gomoku bench train: out of memory\n");
            goto out_free_replay;
        }

    /* assembly alone, one thread */
    replay_batch_t b;
    if (replay_batch_alloc(&b, batch, size, 1, NULL) != 0) {
        fprintf(stderr, "gomoku bench train: out of memory\n");
        goto out_free_replay;
    }
    int abatches = 0;
    double t0 = util_now_ms() * 1e-3, t1;
    do {
        replay_sample(rp, &b, &rng);
        abatches++;
        t1 = util_now_ms() * 1e-3;
    } while (t1 - t0 < 1.0 || abatches < 3);
    double assemble_sps = (double)abatches * batch / (t1 - t0);

    /* training with the assembly threads feeding it */
    nn_train_opts_t o = {.lr = 0.01f, .momentum = 0.9f, .weight_decay = 1e-4f};
    nn_losses_t l;
    /* the net's host memory, as the trainer's (pinned on CUDA) */
    const replay_alloc_t host = {bench_host_alloc, bench_host_free, net};
    replay_batcher_t *bt = replay_batcher_create(rp, batch, nthreads, 3, 1, 7, &host);
    if (!bt) {
        fprintf(stderr, "gomoku bench train: cannot start assembly threads\n");
        goto out_free_batch;
    }
    replay_batch_t *x = replay_batcher_take(bt); /* warm-up step, not timed */
    int trc = nn_net_train_step(net, x->in, x->policy, x->value, x->n, &o, &l, err, sizeof err);
    replay_batcher_release(bt, x);
    t0 = util_now_ms() * 1e-3;
    for (int s = 0; s < steps && trc == 0; s++) {
        x = replay_batcher_take(bt);
        trc = nn_net_train_step(net, x->in, x->policy, x->value, x->n, &o, &l, err, sizeof err);
        replay_batcher_release(bt, x);
    }
    t1 = util_now_ms() * 1e-3;
    replay_batcher_free(bt);
    if (trc != 0) {
        fprintf(stderr, "gomoku bench train: %s\n", err);
        goto out_free_batch;
    }
    double train_sps = (double)steps * batch / (t1 - t0);
    printf("{\"bench\": \"train\", \"device\": \"%s\", \"blocks\": %d, \"channels\": %d, "
           "\"size\": %d, \"batch\": %d, \"steps\": %d, \"threads\": %d, "
           "\"assemble_threads\": %d, \"train_samples_per_s\": %.1f, "
           "\"step_ms\": %.2f, \"assembly_samples_per_s\": %.1f, \"loss_total\": %.4f}\n",
           nn_net_device_name(net), blocks, channels, size, batch, steps, threads, nthreads,
           train_sps,           1000.0 * (t1 - t0) / steps, assemble_sps, l.total);
    rc = 0;
out_free_batch:
    replay_batch_release_buffers(&b);
out_free_replay:
    record_free(&rec);
    replay_free(rp);
out_free_net:
    nn_net_free(net);
out_free_model:
    nn_model_free(m);
    return rc;
}
