/* The evaluator and its hash cache (see eval.h). */
#include "nn/eval.h"

#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

#define PRIOR_ONE 65535.0f

typedef struct cache_slot {
    uint64_t key;
    float value;                   /* side to move */
    uint16_t size;                 /* 0: empty slot */
    uint16_t prior[BOARD_CELLS];   /* by point, prior * 65535 */
} cache_slot_t;

struct nn_eval_cache {
    pthread_mutex_t lock;   /* slots and counters */
    cache_slot_t *slots;
    size_t nslots;
    uint64_t hits, lookups;
};

nn_eval_cache_t *nn_eval_cache_create(size_t mem_bytes, char *err, size_t errlen)
{
    nn_eval_cache_t *c = calloc(1, sizeof *c);
    if (!c)
        goto out_nomem;
    pthread_mutex_init(&c->lock, NULL);
    c->nslots = mem_bytes / sizeof(cache_slot_t);
    if (c->nslots < 1)
        c->nslots = 1;
    c->slots = calloc(c->nslots, sizeof(cache_slot_t));
    if (!c->slots)
        goto out_free_cache;
    util_prefault(c->slots, c->nslots * sizeof(cache_slot_t));
    return c;
out_free_cache:
    nn_eval_cache_free(c);
out_nomem:
    snprintf(err, errlen, "out of memory for an NN cache of %zu bytes", mem_bytes);
    return NULL;
}

void nn_eval_cache_free(nn_eval_cache_t *c)
{
    if (!c)
        return;
    pthread_mutex_destroy(&c->lock);
    free(c->slots);
    free(c);
}

void nn_eval_cache_clear(nn_eval_cache_t *c)
{
    pthread_mutex_lock(&c->lock);
    for (size_t i = 0; i < c->nslots; i++)
        c->slots[i].size = 0;
    pthread_mutex_unlock(&c->lock);
}

/* The counters are read between searches (reports); a torn read of a
 * counter another thread bumps would only be a stale figure. */
uint64_t nn_eval_cache_hits(const nn_eval_cache_t *c) { return c->hits; }
uint64_t nn_eval_cache_lookups(const nn_eval_cache_t *c) { return c->lookups; }
size_t nn_eval_cache_entries(const nn_eval_cache_t *c) { return c->nslots; }

static uint64_t cache_key(const board_t *b)
{
    uint64_t k = b->hash ^ ((uint64_t)(b->rule + 1) * 0x9e3779b97f4a7c15ull) ^
                 ((uint64_t)b->size * 0xc2b2ae3d27d4eb4full);
    return k ? k : 1;
}

static cache_slot_t *cache_slot(nn_eval_cache_t *c, uint64_t key)
{
    return &c->slots[(size_t)((key >> 17) % c->nslots)];
}

static void cache_store(nn_eval_cache_t *c, const board_t *b, const float *row, float value)
{
    uint64_t key = cache_key(b);
    int np = board_npoints(b);
    pthread_mutex_lock(&c->lock);
    cache_slot_t *s = cache_slot(c, key);
    for (int p = 0; p < np; p++) {
        float v = row[p] * PRIOR_ONE;   /* a probability: 0..1 */
        s->prior[p] = (uint16_t)(v > 0.0f ? (v < PRIOR_ONE ? v + 0.5f : PRIOR_ONE) : 0.0f);
    }
    s->key = key;
    s->size = (uint16_t)b->size;
    s->value = value;
    pthread_mutex_unlock(&c->lock);
}

static bool cache_lookup(nn_eval_cache_t *c, const board_t *b, float *row, float *value)
{
    uint64_t key = cache_key(b);
    pthread_mutex_lock(&c->lock);
    cache_slot_t *s = cache_slot(c, key);
    c->lookups++;
    bool hit = s->size == b->size && s->key == key;
    if (hit) {
        c->hits++;
        int np = board_npoints(b);
        for (int p = 0; p < np; p++)
            row[p] = (float)s->prior[p];   /* any scale: the search normalises */
        *value = s->value;
    }
    pthread_mutex_unlock(&c->lock);
    return hit;
}

struct nn_eval {
    nn_net_t *net;              /* borrowed */
    nn_eval_cache_t *cache;     /* borrowed, may be NULL */
    int max_batch;
    int m;                      /* board_max of the net */
    int features, planes;       /* the net's input feature set and its planes P */
    int symmetry;               /* NN_SYM_NONE, NN_SYM_ONE or NN_SYM_ALL */
    int copies;                 /* net rows a board takes: 8 under NN_SYM_ALL, else 1 */
    float *in;                  /* (max_batch * copies, P, M, M) */
    float *pol;                 /* (max_batch * copies, M*M) */
    float *val;                 /* (max_batch * copies, 3) */
    float *plane;               /* (M*M): one plane before its transform */
    int perm_size;              /* the board size perm is for (0: none yet) */
    uint16_t perm[SYM_COUNT][BOARD_CELLS]; /* net index of point p under each symmetry */
    uint64_t calls, evals;
};

nn_eval_t *nn_eval_create(nn_net_t *net, nn_eval_cache_t *cache, int max_batch, char *err,
                          size_t errlen)
{
    if (max_batch < 1 || max_batch > nn_net_max_batch(net)) {
        snprintf(err, errlen, "eval batch %d outside 1..%d", max_batch, nn_net_max_batch(net));
        return NULL;
    }
    nn_eval_t *e = malloc(sizeof *e);
    if (!e)
        goto out_nomem;
    const nn_config_t *cfg = nn_net_config(net);
    *e = (nn_eval_t){.net = net, .cache = cache, .max_batch = max_batch, .m = cfg->board_max,
                     .features = cfg->features, .planes = cfg->in_planes, .copies = 1};
    size_t mm = (size_t)e->m * (size_t)e->m;
    size_t rows = (size_t)nn_net_max_batch(net);   /* room for NN_SYM_ALL's copies */
    e->in = malloc(rows * e->planes * mm * sizeof(float));
    e->pol = malloc(rows * mm * sizeof(float));
    e->val = malloc(rows * NN_VALUE_OUTPUTS * sizeof(float));
    e->plane = malloc(mm * sizeof(float));
    if (!e->in || !e->pol || !e->val || !e->plane)
        goto out_free_eval;
    return e;
out_free_eval:
    nn_eval_free(e);
out_nomem:
    snprintf(err, errlen, "out of memory for eval buffers (batch %d)", max_batch);
    return NULL;
}

void nn_eval_free(nn_eval_t *e)
{
    if (!e)
        return;
    free(e->in);
    free(e->pol);
    free(e->val);
    free(e->plane);
    free(e);
}

int nn_eval_set_symmetry(nn_eval_t *e, int symmetry, char *err, size_t errlen)
{
    if (symmetry != NN_SYM_NONE && symmetry != NN_SYM_ONE && symmetry != NN_SYM_ALL) {
        snprintf(err, errlen, "symmetry %d: 0, 1 or 8", symmetry);
        return -1;
    }
    int copies = symmetry == NN_SYM_ALL ? SYM_COUNT : 1;
    if (e->max_batch * copies > nn_net_max_batch(e->net)) {
        snprintf(err, errlen, "symmetry 8 takes 8 net rows a board: %d boards need a net batch "
                 "of %d, not %d", e->max_batch, e->max_batch * copies, nn_net_max_batch(e->net));
        return -1;
    }
    e->symmetry = symmetry;
    e->copies = copies;
    return 0;
}

/* The symmetry of copy j of board b: its own under NN_SYM_ALL, one fixed
 * by the position's hash under NN_SYM_ONE (so a position always gets the
 * same answer), the identity otherwise. */
static int copy_sym(const nn_eval_t *e, const board_t *b, int j)
{
    if (e->symmetry == NN_SYM_ALL)
        return j;
    if (e->symmetry == NN_SYM_ONE)
        return (int)(((b->hash ^ (b->hash >> 29)) * 0x9e3779b97f4a7c15ull) >> 61);
    return 0;
}

/* e->perm for boards of size s: where each point lands in the net's
 * M x M input and policy under each symmetry. */
static void set_perm(nn_eval_t *e, int s)
{
    if (e->perm_size == s)
        return;
    for (int sym = 0; sym < SYM_COUNT; sym++)
        for (int p = 0; p < s * s; p++)
            e->perm[sym][p] = (uint16_t)nn_policy_index(sym_point(sym, p, s), s, e->m);
    e->perm_size = s;
}

/* Every plane of one encoded board (P, M, M) moved by sym over the
 * board's s x s points; what lies beyond them (a board smaller than the
 * net's) stays as encoded. */
static void transform_planes(nn_eval_t *e, float *x, int sym, int s)
{
    int np = s * s;
    size_t mm = (size_t)e->m * (size_t)e->m;
    set_perm(e, s);
    const uint16_t *to = e->perm[sym], *from = e->perm[0];
    for (int c = 0; c < e->planes; c++, x += mm) {
        memcpy(e->plane, x, mm * sizeof(float));
        for (int p = 0; p < np; p++)
            x[to[p]] = e->plane[from[p]];
    }
}

/* One forward call for boards[0..min(n, max_batch)) into e->pol / e->val,
 * board i's copies in rows i * copies ..; returns how many boards. */
static int forward_batch(nn_eval_t *e, const board_t *const *boards, int n)
{
    int m = e->m;
    size_t mm = (size_t)m * (size_t)m, in_row = (size_t)e->planes * mm;
    int k = n < e->max_batch ? n : e->max_batch;
    for (int i = 0; i < k; i++) {
        const board_t *b = boards[i];
        assert(b->size <= m);
        float *x = e->in + (size_t)i * e->copies * in_row;
        nn_encode_features(b, e->features, m, x);
        for (int j = e->copies - 1; j >= 0; j--) {   /* copy 0 last: it is the encoding */
            float *xj = x + (size_t)j * in_row;
            if (j > 0)
                memcpy(xj, x, in_row * sizeof(float));
            int sym = copy_sym(e, b, j);
            if (sym)
                transform_planes(e, xj, sym, b->size);
        }
    }
    nn_net_forward(e->net, e->in, k * e->copies, e->pol, e->val);
    e->calls++;
    e->evals += (uint64_t)k;
    return k;
}

/* Board i of the last forward_batch, its copies averaged: the policy by
 * point into row (s*s), W/D/L into wdl. */
static void board_outputs(nn_eval_t *e, const board_t *b, int i, float *row, float *wdl)
{
    int s = b->size, np = s * s;
    size_t mm = (size_t)e->m * (size_t)e->m;
    set_perm(e, s);
    float w = 1.0f / (float)e->copies;
    for (int p = 0; p < np; p++)
        row[p] = 0.0f;
    for (int o = 0; o < NN_VALUE_OUTPUTS; o++)
        wdl[o] = 0.0f;
    for (int j = 0; j < e->copies; j++) {
        int r = i * e->copies + j, sym = copy_sym(e, b, j);
        const float *src = e->pol + (size_t)r * mm;
        const uint16_t *at = e->perm[sym];
        for (int p = 0; p < np; p++)
            row[p] += w * src[at[p]];
        for (int o = 0; o < NN_VALUE_OUTPUTS; o++)
            wdl[o] += w * e->val[(size_t)r * NN_VALUE_OUTPUTS + o];
    }
}

void nn_eval_eval(void *user, const board_t *const *boards, int n, float *policy,
                  float *value)
{
    nn_eval_t *e = user;
    for (int off = 0; off < n; off += e->max_batch) {
        int k = forward_batch(e, boards + off, n - off);
        for (int i = 0; i < k; i++) {
            const board_t *b = boards[off + i];
            float *row = policy + (size_t)(off + i) * BOARD_CELLS, v[NN_VALUE_OUTPUTS];
            board_outputs(e, b, i, row, v);
            value[off + i] = v[0] - v[2];
            if (e->cache)
                cache_store(e->cache, b, row, value[off + i]);
        }
    }
}

void nn_eval_wdl(nn_eval_t *e, const board_t *const *boards, int n, float *wdl)
{
    float row[BOARD_CELLS];
    for (int off = 0; off < n; off += e->max_batch) {
        int k = forward_batch(e, boards + off, n - off);
        for (int i = 0; i < k; i++)
            board_outputs(e, boards[off + i], i, row, wdl + (size_t)(off + i) * NN_VALUE_OUTPUTS);
    }
}

bool nn_eval_probe(void *user, const board_t *b, float *policy, float *value)
{
    nn_eval_t *e = user;
    return e->cache && cache_lookup(e->cache, b, policy, value);
}

uint64_t nn_eval_calls(const nn_eval_t *e) { return e->calls; }
uint64_t nn_eval_evals(const nn_eval_t *e) { return e->evals; }
