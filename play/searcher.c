/* The searcher (see searcher.h): nets, evaluators, one cache and trees. */
#include "play/searcher.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nn/eval.h"
#include "nn/patnet.h"
#include "util/util.h"

struct searcher {
    searcher_opts_t o;
    char device[64];              /* the device string asked for */
    char device_name[64];         /* what the nets run on, "uniform" without */
    int board_max;
    int nthreads;                 /* T */
    nn_net_t *net[SEARCHER_MAX_THREADS];
    nn_eval_t *ev[SEARCHER_MAX_THREADS];
    nn_eval_t *root_ev;           /* all 8 symmetries of one board on net 0 (root_symmetry) */
    mcts_eval_fn fn[SEARCHER_MAX_THREADS];
    void *user[SEARCHER_MAX_THREADS];
    nn_eval_cache_t *cache;       /* NULL: none */
    patnet_t *patnet;             /* the evaluator instead of a net (o.patnet), owned */
    patnet_t *ens[PATNET_ENSEMBLE_MAX];   /* patnet, then o.ensemble's nets (owned) */
    int nens;                     /* of ens: 1 + o.ensemble's, 0 without a pattern net */
    patnet_ens_t *pctx[SEARCHER_MAX_THREADS];   /* a search thread's evaluator over them */
    int root_plies;               /* the root's stones, set by each search (root_net_plies) */
    struct {                      /* a pattern net's root net's answer for the root */
        bool valid;
        uint64_t hash;
        int nmoves;
        float policy[BOARD_CELLS], value;
    } root_answer;
    struct hybrid {               /* a search thread's evaluator with root_net_plies */
        struct searcher *s;
        int thread;
        const board_t *near[SEARCHER_MAX_BATCH], *far[SEARCHER_MAX_BATCH];
        int near_i[SEARCHER_MAX_BATCH], far_i[SEARCHER_MAX_BATCH];
        float policy[SEARCHER_MAX_BATCH * BOARD_CELLS], value[SEARCHER_MAX_BATCH];
    } *hybrid;                    /* (T), NULL without root_net_plies */
    vct_t *watch;                 /* the solver of a timed search's watcher (made at its first) */
    int ntrees;                   /* G; 0 after a failed searcher_set_memory */
    mcts_t **trees;
    /* searcher_step: the leaves of all trees, one row each */
    const board_t **boards;       /* (G * batch) */
    float *policy;                /* (G * batch, BOARD_CELLS) */
    float *value;                 /* (G * batch) */
    int *first, *count;           /* (G) each tree's rows in the batch */
    uint64_t evals;
    uint64_t nn_calls, cache_hits, cache_lookups;   /* of evaluators and caches dropped */
};

static void hybrid_eval(void *user, const board_t *const *boards, int n, float *policy,
                        float *value);
static bool root_probe(void *user, const board_t *b, float *policy, float *value);

/* Each setting next to the mcts_params_t field it sets: the one list that
 * search_settings_default reads and search_settings_apply writes. */
#define SEARCH_SETTINGS(X)                                                                    \
    X(c_puct, c_puct) X(fpu, fpu_reduction) X(fpu_root, fpu_root)                             \
    X(vcf_nodes, vcf_nodes) X(vcf_root_nodes, vcf_root_nodes)                                 \
    X(vct_nodes, vct_nodes) X(vct_depth, vct_depth) X(vct_root_nodes, vct_root_nodes)         \
    X(vct_defend_nodes, vct_defend_nodes) X(vct_share, vct_root_share)                        \
    X(vct_defend_share, vct_defend_share) X(vct_verify_nodes, vct_verify_nodes)               \
    X(vct_verify_share, vct_verify_share) X(vct_quiet_nodes, vct_quiet_nodes)                 \
    X(vct_watch_nodes, vct_watch_nodes) X(vct_watch_quiet_nodes, vct_watch_quiet_nodes)       \
    X(threat_prune, threat_prune) X(select_lcb, select_lcb)                                   \
    X(pattern_prior, pattern_prior) X(policy_temp, policy_temp)                       \
    X(minimax_mix, minimax_mix)

void search_settings_default(search_settings_t *s)
{
    mcts_params_t p;
    mcts_params_default(&p);
#define FROM_PARAMS(set, param) s->set = p.param;
    SEARCH_SETTINGS(FROM_PARAMS)
#undef FROM_PARAMS
    s->batch = SEARCH_BATCH_DEFAULT;
    s->symmetry = NN_SYM_NONE;
    s->root_symmetry = 0;
    s->root_net = NULL;
    s->root_net_plies = 0;
    s->ensemble = NULL;
}

/* The conversions are C's: int to uint32_t, double to float, nonzero to true. */
void search_settings_apply(const search_settings_t *s, mcts_params_t *p)
{
#define TO_PARAMS(set, param) p->param = s->set;
    SEARCH_SETTINGS(TO_PARAMS)
#undef TO_PARAMS
}

void searcher_opts_default(searcher_opts_t *o)
{
    *o = (searcher_opts_t){
        .device = "auto",
        .precision = NN_PRECISION_AUTO,
        .search_threads = 1,
        .net_threads = 0,
        .trees = 1,
        .batch = SEARCH_BATCH_DEFAULT,
        .symmetry = NN_SYM_NONE,
        .size = BOARD_DEFAULT,
        .visits = 0,
        .tree_bytes = 0,
        .cache_bytes = (size_t)64 << 20,
    };
    mcts_params_default(&o->mcts);
}

void searcher_opts_apply(searcher_opts_t *o, const search_settings_t *s)
{
    o->batch = s->batch;
    o->symmetry = s->symmetry;
    o->root_symmetry = s->root_symmetry;
    o->root_net = s->root_net;
    o->root_net_plies = s->root_net_plies;
    o->ensemble = s->ensemble;
    search_settings_apply(s, &o->mcts);
}

static int check_opts(const searcher_opts_t *o, char *err, size_t errlen)
{
    const char *bad = NULL;
    if (o->search_threads < 1 || o->search_threads > SEARCHER_MAX_THREADS)
        bad = "search threads outside 1..16";
    else if (o->trees < 1 || o->trees > 65536)
        bad = "trees outside 1..65536";
    else if (o->trees > 1 && o->search_threads > 1)
        bad = "several search threads need a single tree";
    else if (o->batch < 1 || o->batch > SEARCHER_MAX_BATCH)
        bad = "batch outside 1..64";
    else if (o->size < BOARD_MIN || o->size > BOARD_MAX)
        bad = "board size outside 5..20";
    else if (o->net_threads < 0)
        bad = "net threads < 0";
    else if (o->symmetry != NN_SYM_NONE && o->symmetry != NN_SYM_ONE && o->symmetry != NN_SYM_ALL)
        bad = "symmetry not 0, 1 or 8";
    else if (o->root_symmetry != 0 && o->root_symmetry != 1)
        bad = "root symmetry not 0 or 1";
    else if (o->root_net && !o->patnet)
        bad = "a root net (--root-net) goes with a pattern net as the model (patnet:F)";
    else if (o->root_net_plies < 0 || o->root_net_plies > 2)
        bad = "root net plies outside 0..2";
    else if (o->root_net_plies > 0 && !o->root_net)
        bad = "root net plies (--root-net-plies) without a root net (--root-net)";
    else if (o->ensemble && !o->patnet)
        bad = "an ensemble (--ensemble) goes with a pattern net as the model (patnet:F)";
    if (bad) {
        snprintf(err, errlen, "search options: %s", bad);
        return -1;
    }
    return 0;
}

static void drop_trees(searcher_t *s)
{
    for (int i = 0; i < s->ntrees; i++)
        mcts_free(s->trees[i]);
    s->ntrees = 0;
    for (int i = 0; i < s->nthreads; i++) {
        if (s->ev[i])
            s->nn_calls += nn_eval_calls(s->ev[i]);
        nn_eval_free(s->ev[i]);
        s->ev[i] = NULL;
    }
    if (s->root_ev)
        s->nn_calls += nn_eval_calls(s->root_ev);
    nn_eval_free(s->root_ev);
    s->root_ev = NULL;
    if (s->cache) {
        s->cache_hits += nn_eval_cache_hits(s->cache);
        s->cache_lookups += nn_eval_cache_lookups(s->cache);
    }
    nn_eval_cache_free(s->cache);
    s->cache = NULL;
    for (int i = 0; i < s->nthreads; i++) {
        patnet_ens_free(s->pctx[i]);
        s->pctx[i] = NULL;
    }
}

/* Cache, evaluators over the nets, and o.trees trees of tree_bytes each. */
static int make_trees(searcher_t *s, size_t tree_bytes, size_t cache_bytes, char *err,
                      size_t errlen)
{
    const searcher_opts_t *o = &s->o;
    if (s->net[0] && !s->patnet && cache_bytes > 0) {
        s->cache = nn_eval_cache_create(cache_bytes, err, errlen);
        if (!s->cache)
            goto out_drop;
    }
    for (int i = 0; i < s->nthreads; i++) {
        if (s->patnet &&
            !(s->pctx[i] = patnet_ens_create((const patnet_t *const *)s->ens, s->nens))) {
            snprintf(err, errlen, "out of memory for the pattern net's points");
            goto out_drop;
        }
        if (s->hybrid) {   /* a pattern net, its root net near the root */
            s->hybrid[i].s = s;
            s->hybrid[i].thread = i;
            s->ev[i] = nn_eval_create(s->net[i], NULL, o->batch, err, errlen);
            if (!s->ev[i] || nn_eval_set_symmetry(s->ev[i], o->symmetry, err, errlen) != 0)
                goto out_drop;
            s->fn[i] = hybrid_eval;
            s->user[i] = &s->hybrid[i];
            continue;
        }
        if (!s->net[i] || s->patnet) {   /* with a pattern net, net 0 is the root's */
            s->fn[i] = s->patnet ? patnet_ens_eval : mcts_eval_uniform;
            s->user[i] = s->patnet ? (void *)s->pctx[i] : NULL;
            continue;
        }
        s->ev[i] = nn_eval_create(s->net[i], s->cache, o->trees * o->batch, err, errlen);
        if (!s->ev[i] || nn_eval_set_symmetry(s->ev[i], o->symmetry, err, errlen) != 0)
            goto out_drop;
        s->fn[i] = nn_eval_eval;
        s->user[i] = s->ev[i];
    }
    if (s->net[0] && (o->root_symmetry || s->patnet) &&
        (!(s->root_ev = nn_eval_create(s->net[0], s->cache, 1, err, errlen)) ||
         nn_eval_set_symmetry(s->root_ev, NN_SYM_ALL, err, errlen) != 0))
        goto out_drop;
    mcts_params_t mp = o->mcts;
    mp.mem_bytes = tree_bytes;
    mp.max_pending = o->batch * s->nthreads;
    for (int i = 0; i < o->trees; i++) {
        mp.seed = o->mcts.seed + (uint64_t)i;
        s->trees[i] = mcts_create(&mp, err, errlen);
        if (!s->trees[i])
            goto out_drop;
        s->ntrees = i + 1;
        if (s->cache)
            mcts_set_probe(s->trees[i], nn_eval_probe, s->ev[0]);
        else if (s->patnet && s->root_ev)
            mcts_set_probe(s->trees[i], root_probe, s);
        board_t b;
        board_init(&b, o->size, RULE_FREESTYLE);
        mcts_set_root(s->trees[i], &b);
    }
    return 0;
out_drop:
    drop_trees(s);
    return -1;
}

/* Net 0 decides (auto runs its accuracy check once), the others follow;
 * its note is appended to *note after "; ". */
static int set_precision(searcher_t *s, char *note, size_t notelen, char *err, size_t errlen)
{
    char pn[256];
    if (nn_net_set_precision(s->net[0], s->o.precision, pn, sizeof pn, err, errlen) != 0)
        return -1;
    nn_precision_t got = strcmp(nn_net_precision_name(s->net[0]), "bf16") == 0
                             ? NN_PRECISION_BF16 : NN_PRECISION_FP32;
    for (int i = 1; i < s->nthreads; i++)   /* a root net is net 0 alone */
        if (s->net[i] && nn_net_set_precision(s->net[i], got, NULL, 0, err, errlen) != 0)
            return -1;
    if (pn[0] && note && notelen) {
        size_t used = strlen(note);
        snprintf(note + used, notelen - used, "%sprecision %s", used ? "; " : "", pn);
    }
    return 0;
}

/* A search thread's evaluator with root_net_plies: the boards within those
 * plies of the root to the thread's root net, the others to the pattern net. */
static void hybrid_eval(void *user, const board_t *const *boards, int n, float *policy,
                        float *value)
{
    struct hybrid *h = user;
    const searcher_t *s = h->s;
    int nn = 0, nf = 0;
    assert(n <= SEARCHER_MAX_BATCH);   /* a search thread's leaves: at most its batch */
    for (int i = 0; i < n; i++) {
        if (boards[i]->nmoves - s->root_plies <= s->o.root_net_plies) {
            h->near[nn] = boards[i];
            h->near_i[nn++] = i;
        } else {
            h->far[nf] = boards[i];
            h->far_i[nf++] = i;
        }
    }
    for (int part = 0; part < 2; part++) {
        int k = part ? nf : nn;
        const int *at = part ? h->far_i : h->near_i;
        if (k == 0)
            continue;
        if (part)
            patnet_ens_eval(s->pctx[h->thread], h->far, k, h->policy, h->value);
        else
            nn_eval_eval(s->ev[h->thread], h->near, k, h->policy, h->value);
        for (int j = 0; j < k; j++) {
            memcpy(policy + (size_t)at[j] * BOARD_CELLS, h->policy + (size_t)j * BOARD_CELLS,
                   BOARD_CELLS * sizeof *policy);
            value[at[j]] = h->value[j];
        }
    }
}

/* The root net of a pattern net's searcher (o.root_net): net 0, rows for
 * the root's 8 views; with root_net_plies, one net a search thread. */
static int root_net_create(searcher_t *s, char *note, size_t notelen, char *err, size_t errlen)
{
    const searcher_opts_t *o = &s->o;
    char e[400];
    nn_model_t *m = nn_model_load(o->root_net, e, sizeof e);
    if (!m) {
        snprintf(err, errlen, "--root-net: %s", e);
        return -1;
    }
    int rc = -1;
    s->board_max = m->cfg.board_max;   /* searches of larger boards are refused */
    int nets = o->root_net_plies > 0 ? s->nthreads : 1;
    int rows = o->batch > SYM_COUNT ? o->batch : SYM_COUNT;
    bool made = true;
    for (int i = 0; i < nets && made; i++)
        made = (s->net[i] = nn_net_create(m, s->device, rows, o->net_threads, i ? NULL : note,
                                          i ? 0 : notelen, err, errlen)) != NULL;
    if (made && o->root_net_plies > 0 &&
        !(s->hybrid = calloc((size_t)s->nthreads, sizeof *s->hybrid))) {
        snprintf(err, errlen, "out of memory");
        made = false;
    }
    if (made && set_precision(s, note, notelen, err, errlen) == 0) {
        snprintf(s->device_name, sizeof s->device_name, "pattern net, root net on %s",
                 nn_net_device_name(s->net[0]));
        rc = 0;
    }
    nn_model_free(m);
    return rc;
}

/* o.ensemble's pattern nets after the model's (s->ens[0]): a comma-separated
 * list of files, each for the model's rule. */
static int load_ensemble(searcher_t *s, char *err, size_t errlen)
{
    const char *p = s->o.ensemble;
    char path[4096], e[400];
    for (;;) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len == 0 || len >= sizeof path) {
            snprintf(err, errlen, "--ensemble: %s in '%s'",
                     len ? "a file name too long" : "an empty file name", s->o.ensemble);
            return -1;
        }
        if (s->nens == PATNET_ENSEMBLE_MAX) {
            snprintf(err, errlen, "--ensemble: at most %d nets besides the model's, in '%s'",
                     PATNET_ENSEMBLE_MAX - 1, s->o.ensemble);
            return -1;
        }
        memcpy(path, p, len);
        path[len] = '\0';
        patnet_t *pn = patnet_load(path, e, sizeof e);
        if (!pn) {
            snprintf(err, errlen, "--ensemble: %s", e);
            return -1;
        }
        s->ens[s->nens++] = pn;
        if (patnet_rule(pn) != patnet_rule(s->patnet)) {
            snprintf(err, errlen, "--ensemble: %s is a net for %s, the model's for %s", path,
                     rule_name(patnet_rule(pn)), rule_name(patnet_rule(s->patnet)));
            return -1;
        }
        if (!end)
            return 0;
        p = end + 1;
    }
}

searcher_t *searcher_create(const nn_model_t *model, const searcher_opts_t *o, char *note,
                            size_t notelen, char *err, size_t errlen)
{
    if (note && notelen)
        note[0] = '\0';
    if (check_opts(o, err, errlen) != 0)
        return NULL;
    if (model && model->cfg.board_max < o->size) {
        snprintf(err, errlen, "the model serves boards up to %dx%d, not %dx%d",
                 model->cfg.board_max, model->cfg.board_max, o->size, o->size);
        return NULL;
    }
    searcher_t *s = calloc(1, sizeof *s);
    if (!s)
        goto out_nomem;
    s->o = *o;
    snprintf(s->device, sizeof s->device, "%s", o->device ? o->device : "auto");
    s->o.device = s->device;
    s->nthreads = o->search_threads;
    s->board_max = model ? model->cfg.board_max : BOARD_MAX;
    snprintf(s->device_name, sizeof s->device_name, "uniform");
    size_t rows = (size_t)o->trees * (size_t)o->batch;
    size_t net_rows = rows * (o->symmetry == NN_SYM_ALL ? SYM_COUNT : 1);
    if (o->root_symmetry && net_rows < SYM_COUNT)
        net_rows = SYM_COUNT;   /* net 0 also values a root's 8 views at once */
    s->trees = calloc((size_t)o->trees, sizeof *s->trees);
    s->boards = calloc(rows, sizeof *s->boards);
    s->policy = malloc(rows * BOARD_CELLS * sizeof(float));
    s->value = malloc(rows * sizeof(float));
    s->first = calloc((size_t)o->trees, sizeof *s->first);
    s->count = calloc((size_t)o->trees, sizeof *s->count);
    if (!s->trees || !s->boards || !s->policy || !s->value || !s->first || !s->count)
        goto out_free_searcher_nomem;
    if (o->patnet) {
        if (!(s->patnet = patnet_load(o->patnet, err, errlen)))
            goto out_free_searcher;
        s->ens[s->nens++] = s->patnet;
        if (o->ensemble && load_ensemble(s, err, errlen) != 0)
            goto out_free_searcher;
        snprintf(s->device_name, sizeof s->device_name, "pattern net");
        if (o->root_net && root_net_create(s, note, notelen, err, errlen) != 0)
            goto out_free_searcher;
    } else if (model) {
        for (int i = 0; i < s->nthreads; i++) {
            s->net[i] = nn_net_create(model, s->device, (int)net_rows, o->net_threads,
                                      i == 0 ? note : NULL, i == 0 ? notelen : 0, err, errlen);
            if (!s->net[i])
                goto out_free_searcher;
        }
        snprintf(s->device_name, sizeof s->device_name, "%s", nn_net_device_name(s->net[0]));
        if (set_precision(s, note, notelen, err, errlen) != 0)
            goto out_free_searcher;
    }
    size_t tree_bytes = o->tree_bytes;
    if (tree_bytes == 0)
        tree_bytes = o->visits > 0 ? mcts_tree_bytes(o->visits, o->size) : (size_t)1 << 30;
    if (make_trees(s, tree_bytes, o->cache_bytes, err, errlen) != 0)
        goto out_free_searcher;
    return s;
out_free_searcher_nomem:
    snprintf(err, errlen, "out of memory for a searcher of %d trees", o->trees);
out_free_searcher:
    searcher_free(s);
    return NULL;
out_nomem:
    snprintf(err, errlen, "out of memory for a searcher");
    return NULL;
}

void searcher_free(searcher_t *s)
{
    if (!s)
        return;
    drop_trees(s);
    for (int i = 0; i < s->nthreads; i++)
        nn_net_free(s->net[i]);
    free(s->trees);
    free(s->boards);
    free(s->policy);
    free(s->value);
    free(s->first);
    free(s->count);
    vct_free(s->watch);
    for (int k = 0; k < s->nens; k++)
        patnet_free(s->ens[k]);   /* ens[0] is patnet */
    free(s->hybrid);
    free(s);
}

int searcher_set_model(searcher_t *s, const nn_model_t *model, char *err, size_t errlen)
{
    if (s->patnet) {
        snprintf(err, errlen, "this searcher evaluates with a pattern net: no weights to change");
        return -1;
    }
    if (!s->net[0]) {
        snprintf(err, errlen, "this searcher has no net (uniform evaluator)");
        return -1;
    }
    const nn_config_t *cfg = nn_net_config(s->net[0]);
    if (memcmp(&model->cfg, cfg, sizeof model->cfg) != 0) {
        snprintf(err, errlen, "new weights have another shape (%d blocks x %d channels, board %d) "
                 "than the running net (%d x %d, board %d)",
                 model->cfg.blocks, model->cfg.channels, model->cfg.board_max,
                 cfg->blocks, cfg->channels, cfg->board_max);
        return -1;
    }
    for (int i = 0; i < s->nthreads; i++)
        nn_net_set_weights(s->net[i], model->params);
    if (s->cache)
        nn_eval_cache_clear(s->cache);
    return s->o.precision == NN_PRECISION_AUTO ? set_precision(s, NULL, 0, err, errlen) : 0;
}

int searcher_set_memory(searcher_t *s, size_t tree_bytes, size_t cache_bytes, char *err,
                        size_t errlen)
{
    drop_trees(s);
    return make_trees(s, tree_bytes, cache_bytes, err, errlen);
}

/* The root valued under all 8 symmetries: into the cache, where a new
 * root's first playout finds it, and onto the priors of a kept root. */
static void root_views(searcher_t *s, mcts_t *t, const board_t *b)
{
    float row[BOARD_CELLS], v;
    const board_t *one = b;
    nn_eval_eval(s->root_ev, &one, 1, row, &v);
    s->evals++;
    if (s->patnet) {   /* no cache: root_probe gives the answer to a new root's expansion */
        s->root_answer.hash = b->hash;
        s->root_answer.nmoves = b->nmoves;
        memcpy(s->root_answer.policy, row, sizeof row);
        s->root_answer.value = v;
        s->root_answer.valid = true;
    }
    mcts_set_root_policy(t, row);
}

/* mcts_probe_fn of a pattern net's searcher with a root net: the root's
 * answer (root_views) for the root, nothing for the rest. */
static bool root_probe(void *user, const board_t *b, float *policy, float *value)
{
    const searcher_t *s = user;
    if (!s->root_answer.valid || b->hash != s->root_answer.hash ||
        b->nmoves != s->root_answer.nmoves)
        return false;
    memcpy(policy, s->root_answer.policy, sizeof s->root_answer.policy);
    *value = s->root_answer.value;
    return true;
}

#define VERIFY_ROUNDS 8   /* moves checked at the end of one timed search, at most */

int searcher_search(searcher_t *s, const board_t *b, const mcts_limits_t *lim,
                    mcts_result_t *out, char *err, size_t errlen)
{
    if (s->ntrees == 0) {
        snprintf(err, errlen, "no search tree (the last memory change failed)");
        return -1;
    }
    if (b->size > s->board_max) {
        snprintf(err, errlen, "board %dx%d is larger than the net serves (%dx%d)", b->size,
                 b->size, s->board_max, s->board_max);
        return -1;
    }
    mcts_t *t = s->trees[0];
    mcts_sync_root(t, b);
    s->root_plies = b->nmoves;
    if (s->root_ev && !board_over(b))
        root_views(s, t, b);
    mcts_limits_t l = *lim;
    if (l.batch == 0)
        l.batch = s->o.batch;
    const mcts_params_t *p = &s->o.mcts;
    if (l.time_ms > 0.0 && p->vct_watch_nodes) {
        if (!s->watch && !(s->watch = vct_create(p->vct_tt_bytes, err, errlen)))
            return -1;
        l.watch = s->watch;
    }
    double root_ms = l.root_time_ms > 0.0 ? l.root_time_ms : l.time_ms;
    double verify_ms = root_ms * p->vct_verify_share;
    if (!(l.time_ms > 0.0) || !p->vct_verify_nodes || verify_ms < 1.0 || l.time_ms <= verify_ms) {
        mcts_search_threads(t, s->nthreads, s->fn, s->user, &l, out);
        s->evals += out->evals;
        return 0;
    }
    /* the end of a timed search checks the move it would play: one the
     * opponent's VCT refutes is marked lost, and the search goes on a
     * little among the others, whose new best is checked in turn */
    double t0 = util_now_ms();
    uint64_t playouts = 0, evals = 0;
    double threads_ms = 0.0, watch_ms = 0.0;   /* over the rounds; the checks between are neither */
    l.root_time_ms = root_ms;   /* the root's VCT and defence take their shares of it all */
    l.time_ms = lim->time_ms - verify_ms;
    for (int round = 0, last = 0;; round++) {
        mcts_search_threads(t, s->nthreads, s->fn, s->user, &l, out);
        playouts += out->playouts;
        evals += out->evals;
        threads_ms += out->threads_ms;
        watch_ms += out->watch_ms;
        double left = lim->time_ms - (util_now_ms() - t0);
        bool stopped = lim->stop && __atomic_load_n(lim->stop, __ATOMIC_RELAXED) != 0;
        if (last || stopped || out->proven != 0 || out->mem_full || left < 1.0)
            break;
        /* after a refutation a slice for the others, whose best is checked
         * in turn; else (or after VERIFY_ROUNDS) what is left */
        bool refuted = round < VERIFY_ROUNDS &&
                       mcts_refute_best(t, l.watch, p->vct_verify_nodes, left) != MOVE_NONE;
        left = lim->time_ms - (util_now_ms() - t0);
        if (left < 1.0)
            break;
        last = !refuted || left <= verify_ms / 4.0;
        l.time_ms = last ? left : verify_ms / 4.0;
    }
    out->playouts = playouts;
    out->evals = evals;
    out->threads_ms = threads_ms;
    out->watch_ms = watch_ms;
    out->seconds = (util_now_ms() - t0) / 1e3;
    out->playouts_per_s = out->seconds > 0.0 ? (double)playouts / out->seconds : 0.0;
    s->evals += evals;
    return 0;
}

int searcher_step(searcher_t *s, const uint32_t *targets)
{
    int total = 0;
    for (int i = 0; i < s->ntrees; i++) {
        s->count[i] = 0;
        if (targets[i] == 0)
            continue;
        s->first[i] = total;
        s->count[i] = mcts_gather(s->trees[i], s->o.batch, targets[i], s->boards + total);
        total += s->count[i];
    }
    if (total == 0)
        return 0;
    s->fn[0](s->user[0], s->boards, total, s->policy, s->value);
    s->evals += (uint64_t)total;
    for (int i = 0; i < s->ntrees; i++)
        if (s->count[i] > 0)
            mcts_deliver(s->trees[i], s->policy + (size_t)s->first[i] * BOARD_CELLS,
                         s->value + s->first[i]);
    return total;
}

void searcher_wdl(searcher_t *s, const board_t *const *boards, int n, float *wdl)
{
    if (s->ev[0]) {
        nn_eval_wdl(s->ev[0], boards, n, wdl);
        return;
    }
    for (int i = 0; i < n; i++) {
        wdl[3 * i] = 0.5f;
        wdl[3 * i + 1] = 0.0f;
        wdl[3 * i + 2] = 0.5f;
    }
}

int searcher_trees(const searcher_t *s) { return s->ntrees; }

mcts_t *searcher_tree(searcher_t *s, int i)
{
    return i >= 0 && i < s->ntrees ? s->trees[i] : NULL;
}

int searcher_board_max(const searcher_t *s) { return s->board_max; }
const char *searcher_device(const searcher_t *s) { return s->device_name; }
int searcher_patnet_rule(const searcher_t *s)
{
    return s->patnet ? (int)patnet_rule(s->patnet) : -1;
}

int searcher_first_move(const board_t *b)
{
    int centre = (b->size / 2) * b->size + b->size / 2;
    return b->nmoves == 0 && board_check_move(b, centre) == MOVE_OK ? centre : MOVE_NONE;
}

void searcher_get_stats(const searcher_t *s, searcher_stats_t *out)
{
    *out = (searcher_stats_t){.evals = s->evals, .nn_calls = s->nn_calls,
                              .cache_hits = s->cache_hits, .cache_lookups = s->cache_lookups};
    for (int i = 0; i < s->nthreads; i++)
        if (s->ev[i])
            out->nn_calls += nn_eval_calls(s->ev[i]);
    if (s->root_ev)
        out->nn_calls += nn_eval_calls(s->root_ev);
    if (s->cache) {
        out->cache_hits += nn_eval_cache_hits(s->cache);
        out->cache_lookups += nn_eval_cache_lookups(s->cache);
    }
}
