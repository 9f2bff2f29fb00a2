/* A model file as a player: MCTS over the net under a visit or time budget,
 * leaf-parallel batches of up to MODEL_BATCH leaves per NN call (virtual
 * loss), the tree kept between moves. With opts->threads = T > 1, T search
 * threads share the tree, each with its own net context (one CPU thread
 * each on the CPU backend), so their NN calls overlap. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/player.h"
#include "mcts/mcts.h"
#include "nn/nn.h"

#define MODEL_BATCH 8
#define MODEL_MAX_THREADS 16

typedef struct model_player {
    int nthreads;
    nn_net_t *net[MODEL_MAX_THREADS];
    mcts_neteval_t *ne[MODEL_MAX_THREADS];
    mcts_eval_fn evals[MODEL_MAX_THREADS];
    mcts_cache_t *cache;
    mcts_t *tree;
    int visits, time_ms;
    rule_t rule;
    int size;
} model_player_t;

static int model_genmove(player_t *p, const board_t *b, int *move, char *err, size_t errlen)
{
    model_player_t *mp = p->impl;
    if (b->size != mp->size || b->rule != mp->rule) {
        snprintf(err, errlen, "%s: set up for %s %dx%d, asked to play %s %dx%d", p->name,
                 rule_name(mp->rule), mp->size, mp->size, rule_name((rule_t)b->rule), b->size,
                 b->size);
        return -1;
    }
    mcts_sync_root(mp->tree, b);
    mcts_limits_t lim = {.visits = (uint32_t)mp->visits, .time_ms = mp->time_ms,
                         .batch = MODEL_BATCH};
    mcts_result_t r;
    mcts_search_threads(mp->tree, mp->nthreads, mp->evals, (void *const *)mp->ne, &lim, &r);
    if (r.best_move == MOVE_NONE) {
        snprintf(err, errlen, "%s: no legal move", p->name);
        return -1;
    }
    *move = r.best_move;
    return 0;
}

static void model_new_game(player_t *p, const board_t *b)
{
    model_player_t *mp = p->impl;
    if (b->size == mp->size && b->rule == mp->rule)
        mcts_set_root(mp->tree, b);
}

static void model_notify(player_t *p, const board_t *b, int move)
{
    (void)move;
    model_player_t *mp = p->impl;
    if (b->size == mp->size && b->rule == mp->rule)
        mcts_sync_root(mp->tree, b);
}

static void model_free(player_t *p)
{
    model_player_t *mp = p->impl;
    if (mp) {
        mcts_free(mp->tree);
        mcts_cache_free(mp->cache);
        for (int i = 0; i < mp->nthreads; i++) {
            mcts_neteval_free(mp->ne[i]);
            nn_net_free(mp->net[i]);
        }
        free(mp);
    }
    free(p);
}

static const player_ops_t model_ops = {
    .genmove = model_genmove,
    .new_game = model_new_game,
    .notify = model_notify,
    .free = model_free,
};

player_t *player_model_create(const char *path, rule_t rule, int size, const player_opts_t *o,
                              char *err, size_t errlen)
{
    char e[256], note[256] = "";
    if (o->visits <= 0 && o->time_ms <= 0) {
        snprintf(err, errlen, "model player %s: needs a visit or time budget", path);
        return NULL;
    }
    nn_model_t *m = nn_model_load(path, e, sizeof e);
    if (!m) {
        snprintf(err, errlen, "%s", e);
        return NULL;
    }
    if (m->cfg.board_max < size) {
        snprintf(err, errlen, "%s: the model serves boards up to %dx%d, not %dx%d", path,
                 m->cfg.board_max, m->cfg.board_max, size, size);
        goto out_free_model;
    }
    player_t *p = calloc(1, sizeof *p);
    model_player_t *mp = calloc(1, sizeof *mp);
    if (!p || !mp) {
        free(p);
        free(mp);
        snprintf(err, errlen, "out of memory");
        goto out_free_model;
    }
    p->ops = &model_ops;
    p->impl = mp;
    snprintf(p->name, sizeof p->name, "%s", path);
    mp->visits = o->visits;
    mp->time_ms = o->visits > 0 ? 0 : o->time_ms;
    mp->rule = rule;
    mp->size = size;
    mp->nthreads = o->threads > 1 ? o->threads : 1;
    if (mp->nthreads > MODEL_MAX_THREADS)
        mp->nthreads = MODEL_MAX_THREADS;
    for (int i = 0; i < mp->nthreads; i++) {
        mp->net[i] = nn_net_create(m, o->device ? o->device : "auto", MODEL_BATCH, 1, note,
                                   sizeof note, e, sizeof e);
        if (!mp->net[i]) {
            snprintf(err, errlen, "%s: %s", path, e);
            goto out_free_player;
        }
        if (i == 0 && note[0] && !o->quiet)
            fprintf(stderr, "%s\n", note);
        mp->ne[i] = mcts_neteval_create(mp->net[i], MODEL_BATCH, e, sizeof e);
        if (!mp->ne[i])
            goto out_err;
        mp->evals[i] = mcts_neteval_eval;
    }
    if (!o->quiet && m->rule != (uint32_t)rule && m->rule < RULE_COUNT)
        fprintf(stderr, "note: %s was trained for %s, playing %s\n", path,
                rule_name((rule_t)m->rule), rule_name(rule));
    mp->cache = mcts_cache_create((size_t)64 << 20, e, sizeof e);
    if (!mp->cache)
        goto out_err;
    mcts_params_t sp;
    mcts_params_default(&sp);
    sp.seed = o->seed;
    sp.max_pending = MODEL_BATCH * mp->nthreads;
    if (o->vcf_nodes >= 0) {
        sp.vcf_nodes = (uint32_t)o->vcf_nodes;
        sp.vcf_root_nodes = (uint32_t)o->vcf_nodes * 100;
    }
    /* visit budget: room for several searches of it; time budget: 1 GiB */
    size_t npts = (size_t)size * (size_t)size;
    sp.mem_bytes = o->visits > 0 ? 4 * ((size_t)o->visits + 64) * (npts * 8 + 64) : (size_t)1 << 30;
    if (sp.mem_bytes < ((size_t)4 << 20))
        sp.mem_bytes = (size_t)4 << 20;
    mp->tree = mcts_create(&sp, mp->cache, e, sizeof e);
    if (!mp->tree)
        goto out_err;
    board_t b;
    board_init(&b, size, rule);
    mcts_set_root(mp->tree, &b);
    nn_model_free(m);
    return p;
out_err:
    snprintf(err, errlen, "%s: %s", path, e);
out_free_player:
    model_free(p);
out_free_model:
    nn_model_free(m);
    return NULL;
}
