/* A model file as a player: a searcher (play/searcher.h) over the net
 * under a visit or time budget, leaf-parallel batches of up to --search-batch
 * leaves per NN call (virtual loss), the tree kept between moves. With
 * opts->threads = T > 1, T search threads share the tree, each with its own
 * net (one CPU thread each on the CPU backend), so their NN calls overlap. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "play/player.h"
#include "mcts/mcts.h"
#include "nn/nn.h"
#include "play/searcher.h"
#include "util/util.h"

typedef struct model_player {
    searcher_t *search;
    int visits, time_ms;
    int match_time_ms;    /* 0: no game clock */
    const volatile int *stop; /* player_opts_t.stop */
    movetime_t mt;        /* the game clock's manager (latency learned over the game) */
    rule_t rule;
    int size;
    mcts_result_t last;   /* the last genmove's search (last.best_move MOVE_NONE: none) */
    int ncand;
    player_candidate_t cand[PLAYER_CAND_MAX];   /* the last genmove's most visited root moves */
} model_player_t;

/* The n best visited root children of tree t (mcts_rank_children's order). */
static int top_candidates(const mcts_t *t, player_candidate_t *out, int n)
{
    mcts_child_info_t ch[BOARD_CELLS];
    int nch = mcts_root_children(t, ch, BOARD_CELLS), k = 0;
    mcts_rank_children(ch, nch);
    for (int i = 0; i < nch && k < n; i++)
        if (ch[i].visits > 0)
            out[k++] = (player_candidate_t){ch[i].move, ch[i].visits, (ch[i].q + 1.0f) * 0.5f};
    return k;
}

static int model_genmove(player_t *p, const board_t *b, int *move, char *err, size_t errlen)
{
    model_player_t *mp = p->impl;
    if (b->size != mp->size || b->rule != mp->rule) {
        snprintf(err, errlen, "%s: set up for %s %dx%d, asked to play %s %dx%d", p->name,
                 rule_name(mp->rule), mp->size, mp->size, rule_name((rule_t)b->rule), b->size,
                 b->size);
        return -1;
    }
    int first = searcher_first_move(b);
    if (first != MOVE_NONE) {
        *move = first;
        mp->last.best_move = MOVE_NONE;   /* no search: no analysis */
        mp->ncand = 0;
        return 0;
    }
    mcts_limits_t lim = {.visits = (uint32_t)mp->visits, .time_ms = mp->time_ms, .stop = mp->stop};
    double t0 = util_now_ms(), budget = 0;
    if (p->time_left < MOVETIME_UNLIMITED) {
        /* a game clock: the move's share of it, the per-move limit kept */
        mp->mt.timeout_turn = mp->time_ms > 0 ? mp->time_ms : p->time_left;
        mp->mt.timeout_match = mp->match_time_ms;
        mp->mt.time_left = p->time_left;
        budget = movetime_budget_ms(&mp->mt, b);
        if (budget < 1.0)
            lim = (mcts_limits_t){.visits = 1, .stop = mp->stop};
        else
            lim.time_ms = (int)budget;
    }
    mcts_result_t r;
    char e[256];
    int rc = searcher_search(mp->search, b, &lim, &r, e, sizeof e);
    if (p->time_left < MOVETIME_UNLIMITED)
        movetime_record(&mp->mt, t0, budget);
    if (rc != 0) {
        snprintf(err, errlen, "%s: %s", p->name, e);
        return -1;
    }
    if (r.best_move == MOVE_NONE) {
        snprintf(err, errlen, "%s: no legal move", p->name);
        return -1;
    }
    *move = r.best_move;
    mp->last = r;
    mp->ncand = top_candidates(searcher_tree(mp->search, 0), mp->cand, PLAYER_CAND_MAX);
    return 0;
}

static bool model_analysis(const player_t *p, player_analysis_t *out)
{
    const model_player_t *mp = p->impl;
    const mcts_result_t *r = &mp->last;
    if (r->best_move == MOVE_NONE)
        return false;
    out->winrate = r->winrate;
    out->proven = r->proven;
    out->visits = r->root_visits;
    out->npv = r->npv < PLAYER_PV_MAX ? r->npv : PLAYER_PV_MAX;
    memcpy(out->pv, r->pv, sizeof(int) * (size_t)out->npv);
    out->ncand = mp->ncand;
    memcpy(out->cand, mp->cand, sizeof(player_candidate_t) * (size_t)mp->ncand);
    return true;
}

static void model_new_game(player_t *p, const board_t *b)
{
    model_player_t *mp = p->impl;
    movetime_init(&mp->mt);
    if (b->size == mp->size && b->rule == mp->rule)
        mcts_set_root(searcher_tree(mp->search, 0), b);
}

static void model_notify(player_t *p, const board_t *b, int move)
{
    (void)move;
    model_player_t *mp = p->impl;
    if (b->size == mp->size && b->rule == mp->rule)
        mcts_sync_root(searcher_tree(mp->search, 0), b);
}

static void model_release(player_t *p)
{
    model_player_t *mp = p->impl;
    searcher_free(mp->search);
}

static const player_ops_t model_ops = {
    .genmove = model_genmove,
    .new_game = model_new_game,
    .notify = model_notify,
    .release = model_release,
    .analysis = model_analysis,
};

player_t *player_model_create(const char *path, rule_t rule, int size, const player_opts_t *o,
                              char *err, size_t errlen)
{
    char e[256], note[256] = "";
    if (o->visits <= 0 && o->time_ms <= 0 && o->match_time_ms <= 0) {
        snprintf(err, errlen, "model player %s: needs a visit or time budget", path);
        return NULL;
    }
    bool patnet = strncmp(path, "patnet:", 7) == 0;
    nn_model_t *m = patnet ? NULL : nn_model_load(path, e, sizeof e);
    if (!m && !patnet) {
        snprintf(err, errlen, "%s", e);
        return NULL;
    }
    player_t *p = player_alloc(&model_ops, sizeof(model_player_t), err, errlen, "%s", path);
    if (!p)
        goto out_free_model;
    model_player_t *mp = p->impl;
    mp->visits = o->visits;
    mp->stop = o->stop;
    mp->time_ms = o->visits > 0 ? 0 : o->time_ms;
    mp->match_time_ms = o->match_time_ms;
    movetime_init(&mp->mt);
    mp->rule = rule;
    mp->size = size;
    mp->last.best_move = MOVE_NONE;
    if (!o->quiet && m && m->rule != (uint32_t)rule && m->rule < RULE_COUNT)
        fprintf(stderr, "note: %s was trained for %s, playing %s\n", path,
                rule_name((rule_t)m->rule), rule_name(rule));
    searcher_opts_t so;
    searcher_opts_default(&so);
    so.device = o->device ? o->device : "auto";
    so.precision = o->precision;
    so.search_threads = o->threads > 1 ? o->threads : 1;
    if (so.search_threads > SEARCHER_MAX_THREADS)
        so.search_threads = SEARCHER_MAX_THREADS;
    so.net_threads = 1;   /* one CPU thread per search thread's net */
    so.size = size;
    so.visits = o->visits > 0 ? (uint32_t)o->visits : 0;   /* 0: time budget, a 1 GiB tree */
    so.mcts.seed = o->seed;
    so.patnet = patnet ? path + 7 : NULL;
    searcher_opts_apply(&so, &o->search);
    if (!patnet) {   /* match: --root-net and --ensemble are for the players with a pattern net */
        so.root_net = NULL;
        so.ensemble = NULL;
    }
    if (o->cache_bytes)
        so.cache_bytes = o->cache_bytes;
    mp->search = searcher_create(m, &so, note, sizeof note, e, sizeof e);
    if (!mp->search)
        goto out_err;
    int pr = searcher_patnet_rule(mp->search);
    if (!o->quiet && pr >= 0 && pr != (int)rule)
        fprintf(stderr, "note: %s was trained for %s, playing %s\n", path,
                rule_name((rule_t)pr), rule_name(rule));
    if (note[0] && !o->quiet)   /* match, play: two models, the device said once */
        nn_note_print(stderr, note);
    board_t b;
    board_init(&b, size, rule);
    mcts_set_root(searcher_tree(mp->search, 0), &b);
    nn_model_free(m);
    return p;
out_err:
    if (patnet)   /* the pattern net's loader names its file */
        snprintf(err, errlen, "%s", e);
    else
        snprintf(err, errlen, "%s: %s", path, e);
    player_free(p);
out_free_model:
    nn_model_free(m);
    return NULL;
}
