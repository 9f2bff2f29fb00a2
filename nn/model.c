/* Model config, flat parameter layout, random init, LR schedule, FLOPs. */
#include "nn/nn.h"
#include "util/rng.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void nn_config_default(nn_config_t *cfg, int blocks, int channels, int board_max)
{
    cfg->blocks = blocks;
    cfg->channels = channels;
    cfg->board_max = board_max;
    cfg->in_planes = NN_PLANES;
    cfg->policy_head = NN_POLICY_HEAD;
    cfg->value_head = NN_VALUE_HEAD;
    cfg->value_hidden = NN_VALUE_HIDDEN;
    cfg->policy_outputs = 1;
    cfg->features = NN_FEATURES_BASIC;
    cfg->value_pool = NN_POOL_MEAN;
}

float nn_policy_loss_weight(int k)
{
    static const float w[NN_MAX_POLICY_OUTPUTS] = {1.0f, 0.15f, 8.0f};
    return k >= 0 && k < NN_MAX_POLICY_OUTPUTS ? w[k] : 0.0f;
}

void nn_train_policy_weights(const nn_train_opts_t *o, float w[NN_MAX_POLICY_OUTPUTS])
{
    bool set = false;
    for (int k = 0; o && k < NN_MAX_POLICY_OUTPUTS; k++)
        set = set || o->policy_weight[k] != 0.0f;
    for (int k = 0; k < NN_MAX_POLICY_OUTPUTS; k++)
        w[k] = set ? o->policy_weight[k] : nn_policy_loss_weight(k);
}

static const char *const feature_names[NN_FEATURES_COUNT] = {
    [NN_FEATURES_BASIC] = "basic", [NN_FEATURES_THREAT] = "threat",
};

int nn_feature_planes(int f) { return f == NN_FEATURES_THREAT ? NN_PLANES_MAX : NN_PLANES; }

const char *nn_features_name(int f)
{
    return f >= 0 && f < NN_FEATURES_COUNT ? feature_names[f] : "?";
}

int nn_features_parse(const char *s, int *out, char *err, size_t errlen)
{
    for (int f = 0; f < NN_FEATURES_COUNT; f++)
        if (!strcmp(s, feature_names[f])) {
            *out = f;
            return 0;
        }
    snprintf(err, errlen, "unknown input planes '%s' (basic, threat)", s);
    return -1;
}

static const char *const pool_names[NN_POOL_COUNT] = {
    [NN_POOL_MEAN] = "mean", [NN_POOL_MEAN_MAX] = "max",
};

const char *nn_value_pool_name(int p) { return p >= 0 && p < NN_POOL_COUNT ? pool_names[p] : "?"; }

int nn_value_pool_parse(const char *s, int *out, char *err, size_t errlen)
{
    for (int p = 0; p < NN_POOL_COUNT; p++)
        if (!strcmp(s, pool_names[p])) {
            *out = p;
            return 0;
        }
    snprintf(err, errlen, "unknown value pooling '%s' (mean, max)", s);
    return -1;
}

int nn_config_check(const nn_config_t *cfg, char *err, size_t errlen)
{
    if (cfg->blocks < 0 || cfg->blocks > NN_MAX_BLOCKS) {
        snprintf(err, errlen, "blocks %d out of range 0..%d", cfg->blocks, NN_MAX_BLOCKS);
        return -1;
    }
    if (cfg->channels < 1 || cfg->channels > NN_MAX_CHANNELS) {
        snprintf(err, errlen, "channels %d out of range 1..%d", cfg->channels, NN_MAX_CHANNELS);
        return -1;
    }
    if (cfg->board_max < BOARD_MIN || cfg->board_max > BOARD_MAX) {
        snprintf(err, errlen, "board max %d out of range %d..%d", cfg->board_max, BOARD_MIN,
                 BOARD_MAX);
        return -1;
    }
    if (cfg->features < 0 || cfg->features >= NN_FEATURES_COUNT) {
        snprintf(err, errlen, "input feature set %d unknown (0 basic, 1 threat)", cfg->features);
        return -1;
    }
    if (cfg->value_pool < 0 || cfg->value_pool >= NN_POOL_COUNT) {
        snprintf(err, errlen, "value pooling %d unknown (0 mean, 1 mean and max)",
                 cfg->value_pool);
        return -1;
    }
    if (cfg->in_planes != nn_feature_planes(cfg->features)) {
        snprintf(err, errlen, "input planes %d, the %s feature set has %d", cfg->in_planes,
                 nn_features_name(cfg->features), nn_feature_planes(cfg->features));
        return -1;
    }
    const int heads[3] = {cfg->policy_head, cfg->value_head, cfg->value_hidden};
    static const char *const names[3] = {"policy head", "value head", "value hidden"};
    for (int i = 0; i < 3; i++)
        if (heads[i] < 1 || heads[i] > NN_MAX_HEAD) {
            snprintf(err, errlen, "%s %d out of range 1..%d", names[i], heads[i], NN_MAX_HEAD);
            return -1;
        }
    if (cfg->policy_outputs < 1 || cfg->policy_outputs > NN_MAX_POLICY_OUTPUTS) {
        snprintf(err, errlen, "policy outputs %d out of range 1..%d", cfg->policy_outputs,
                 NN_MAX_POLICY_OUTPUTS);
        return -1;
    }
    return 0;
}

#define BN(i) {"block" #i ".w1", "block" #i ".b1", "block" #i ".w2", "block" #i ".b2"}
static const char *const block_names[NN_MAX_BLOCKS][4] = {
    BN(0), BN(1), BN(2), BN(3), BN(4), BN(5), BN(6), BN(7), BN(8), BN(9),
    BN(10), BN(11), BN(12), BN(13), BN(14), BN(15), BN(16), BN(17), BN(18), BN(19),
    BN(20), BN(21), BN(22), BN(23), BN(24), BN(25), BN(26), BN(27), BN(28), BN(29),
    BN(30), BN(31), BN(32), BN(33), BN(34), BN(35), BN(36), BN(37), BN(38), BN(39),
};
#undef BN

void nn_param_layout(const nn_config_t *cfg, nn_layout_t *o)
{
    size_t C = (size_t)cfg->channels, P = (size_t)cfg->in_planes;
    size_t Hp = (size_t)cfg->policy_head, Hv = (size_t)cfg->value_head;
    size_t Vh = (size_t)cfg->value_hidden;
    size_t off = 0;
    o->in_w = off; off += C * P * 9;
    o->in_b = off; off += C;
    o->blocks = off;
    o->block_stride = 2 * (C * C * 9 + C);
    off += (size_t)cfg->blocks * o->block_stride;
    o->pol_w1 = off; off += Hp * C;
    o->pol_b1 = off; off += Hp;
    o->pol_w2 = off; off += (size_t)cfg->policy_outputs * Hp;
    o->pol_b2 = off; off += (size_t)cfg->policy_outputs;
    o->val_w1 = off; off += Hv * C;
    o->val_b1 = off; off += Hv;
    o->val_fc1_w = off; off += Vh * (size_t)nn_value_features(cfg);
    o->val_fc1_b = off; off += Vh;
    o->val_fc2_w = off; off += NN_VALUE_OUTPUTS * Vh;
    o->val_fc2_b = off; off += NN_VALUE_OUTPUTS;
    o->total = off;
}

size_t nn_param_count(const nn_config_t *cfg)
{
    nn_layout_t l;
    nn_param_layout(cfg, &l);
    return l.total;
}

int nn_param_tensors(const nn_config_t *cfg) { return 2 + 4 * cfg->blocks + 10; }

nn_tensor_info_t nn_param_tensor(const nn_config_t *cfg, int i)
{
    assert(i >= 0 && i < nn_param_tensors(cfg));
    nn_layout_t l;
    nn_param_layout(cfg, &l);
    size_t C = (size_t)cfg->channels;
    nn_tensor_info_t t;
    if (i == 0)
        return (nn_tensor_info_t){"in_w", l.in_w, C * (size_t)cfg->in_planes * 9};
    if (i == 1)
        return (nn_tensor_info_t){"in_b", l.in_b, C};
    if (i < 2 + 4 * cfg->blocks) {
        int b = (i - 2) / 4, k = (i - 2) % 4;
        size_t base = l.blocks + (size_t)b * l.block_stride;
        size_t w = C * C * 9;
        static const size_t rel_w[4] = {0, 1, 1, 2};   /* how many w tensors come before */
        static const size_t rel_b[4] = {0, 0, 1, 1};   /* how many b tensors come before */
        t.name = block_names[b][k];
        t.offset = base + rel_w[k] * w + rel_b[k] * C;
        t.count = (k % 2 == 0) ? w : C;
        return t;
    }
    const struct { const char *name; size_t off; } heads[10] = {
        {"pol_w1", l.pol_w1}, {"pol_b1", l.pol_b1}, {"pol_w2", l.pol_w2},
        {"pol_b2", l.pol_b2}, {"val_w1", l.val_w1}, {"val_b1", l.val_b1},
        {"val_fc1_w", l.val_fc1_w}, {"val_fc1_b", l.val_fc1_b},
        {"val_fc2_w", l.val_fc2_w}, {"val_fc2_b", l.val_fc2_b},
    };
    int k = i - 2 - 4 * cfg->blocks;
    size_t end = k + 1 < 10 ? heads[k + 1].off : l.total;
    return (nn_tensor_info_t){heads[k].name, heads[k].off, end - heads[k].off};
}

double nn_flops_per_eval(const nn_config_t *cfg, int size)
{
    double hw = (double)size * size;
    double C = cfg->channels, P = cfg->in_planes;
    double Hp = cfg->policy_head, Hv = cfg->value_head, Vh = cfg->value_hidden;
    double per_point = C * P * 9 + cfg->blocks * 2.0 * C * C * 9 + C * Hp +
                       Hp * cfg->policy_outputs + C * Hv;
    return 2.0 * (hw * per_point + nn_value_features(cfg) * Vh + Vh * NN_VALUE_OUTPUTS);
}

static double rng_normal(uint64_t *s)
{
    double u1 = ((double)(util_rng_next(s) >> 11) + 0.5) / 9007199254740992.0;
    double u2 = (double)(util_rng_next(s) >> 11) / 9007199254740992.0;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

static void fill_normal(float *w, size_t n, double std, uint64_t *s)
{
    for (size_t i = 0; i < n; i++)
        w[i] = (float)(std * rng_normal(s));
}

nn_model_t *nn_model_create(const nn_config_t *cfg, uint64_t seed, char *err, size_t errlen)
{
    if (nn_config_check(cfg, err, errlen) != 0)
        return NULL;
    nn_model_t *m = calloc(1, sizeof *m);
    if (!m)
        goto out_nomem;
    m->cfg = *cfg;
    m->nparams = nn_param_count(cfg);
    m->params = calloc(m->nparams, sizeof(float));   /* biases start at 0 */
    if (!m->params)
        goto out_free_model;
    nn_layout_t l;
    nn_param_layout(cfg, &l);
    uint64_t s = seed;
    size_t C = (size_t)cfg->channels, P = (size_t)cfg->in_planes;
    size_t Hp = (size_t)cfg->policy_head, Hv = (size_t)cfg->value_head;
    size_t Vh = (size_t)cfg->value_hidden;
    fill_normal(m->params + l.in_w, C * P * 9, sqrt(2.0 / (double)(P * 9)), &s);
    /* Fixup: the residual branch starts as the identity's small perturbation;
     * the first conv of each block scaled by B^-1/2, the second zero. */
    double fix = cfg->blocks > 0 ? 1.0 / sqrt((double)cfg->blocks) : 1.0;
    for (int b = 0; b < cfg->blocks; b++) {
        float *w1 = m->params + l.blocks + (size_t)b * l.block_stride;
        fill_normal(w1, C * C * 9, fix * sqrt(2.0 / (double)(C * 9)), &s);
    }
    fill_normal(m->params + l.pol_w1, Hp * C, sqrt(2.0 / (double)C), &s);
    fill_normal(m->params + l.pol_w2, Hp, sqrt(1.0 / (double)Hp), &s);
    fill_normal(m->params + l.val_w1, Hv * C, sqrt(2.0 / (double)C), &s);
    size_t Hf = (size_t)nn_value_features(cfg);
    fill_normal(m->params + l.val_fc1_w, Vh * Hf, sqrt(2.0 / (double)Hf), &s);
    fill_normal(m->params + l.val_fc2_w, NN_VALUE_OUTPUTS * Vh, sqrt(1.0 / (double)Vh), &s);
    /* extra policy channels last, so channel 0 and the rest are those of K = 1 */
    fill_normal(m->params + l.pol_w2 + Hp, (size_t)(cfg->policy_outputs - 1) * Hp,
                sqrt(1.0 / (double)Hp), &s);
    return m;

out_free_model:
    free(m);
out_nomem:
    snprintf(err, errlen, "out of memory for a model of %zu parameters", nn_param_count(cfg));
    return NULL;
}

/* dst (dco, dci, k) from src (sco, sci, k), sco <= dco and sci <= dci:
 * the old weights in place and zero from the new inputs into the old
 * outputs; the new outputs' rows keep what dst held. */
static void grow_weights(float *dst, size_t dco, size_t dci, const float *src, size_t sco,
                         size_t sci, size_t k)
{
    assert(sco <= dco && sci <= dci);
    for (size_t co = 0; co < sco; co++) {
        memcpy(dst + co * dci * k, src + co * sci * k, sci * k * sizeof(float));
        memset(dst + (co * dci + sci) * k, 0, (dci - sci) * k * sizeof(float));
    }
}

/* m's params for config cfg, which differs from m's only in the tensor
 * at `off`: (rows, cols, k) grows to (rows, cols2, k), the old weights in
 * place and the new columns zero; the tensors before and after it are
 * copied as they are. 0, or -1 with err (out of memory). */
static int widen_tensor(nn_model_t *m, const nn_config_t *cfg, size_t off, size_t rows,
                        size_t cols, size_t cols2, size_t k, char *err, size_t errlen)
{
    size_t n = nn_param_count(cfg), end = off + rows * cols * k;
    float *p = calloc(n, sizeof(float));
    if (!p) {
        snprintf(err, errlen, "out of memory for a model of %zu parameters", n);
        return -1;
    }
    memcpy(p, m->params, off * sizeof(float));
    grow_weights(p + off, rows, cols2, m->params + off, rows, cols, k);
    memcpy(p + off + rows * cols2 * k, m->params + end, (m->nparams - end) * sizeof(float));
    free(m->params);
    m->params = p;
    m->nparams = n;
    m->cfg = *cfg;
    return 0;
}

/* Widening keeps every weight; the new planes' input filters start at
 * zero, so the widened net computes what the old one did until it trains. */
int nn_model_widen_features(nn_model_t *m, int features, char *err, size_t errlen)
{
    int from = nn_feature_planes(m->cfg.features), to = nn_feature_planes(features);
    if (features == m->cfg.features)
        return 0;
    if (to < from) {
        snprintf(err, errlen, "cannot narrow a net's input from %s planes to %s: the %s planes' "
                 "filters would be lost", nn_features_name(m->cfg.features),
                 nn_features_name(features), nn_features_name(m->cfg.features));
        return -1;
    }
    nn_config_t cfg = m->cfg;
    cfg.features = features;
    cfg.in_planes = to;
    nn_layout_t a;
    nn_param_layout(&m->cfg, &a);
    /* in_w is [C][P][9]: each output channel's filters grow from P to P' */
    return widen_tensor(m, &cfg, a.in_w, (size_t)cfg.channels, (size_t)from, (size_t)to, 9, err,
                        errlen);
}

/* The new pooled features' weights start at zero: the widened net
 * computes what the old one did until it trains. */
int nn_model_widen_value_pool(nn_model_t *m, int pool, char *err, size_t errlen)
{
    if (pool == m->cfg.value_pool)
        return 0;
    if (pool < m->cfg.value_pool || pool >= NN_POOL_COUNT) {
        snprintf(err, errlen, "cannot change a net's value pooling from %s to %s: only mean to "
                 "max (mean and max) keeps its weights", nn_value_pool_name(m->cfg.value_pool),
                 nn_value_pool_name(pool));
        return -1;
    }
    nn_config_t cfg = m->cfg;
    cfg.value_pool = pool;
    nn_layout_t a;
    nn_param_layout(&m->cfg, &a);
    return widen_tensor(m, &cfg, a.val_fc1_w, (size_t)cfg.value_hidden,
                        (size_t)nn_value_features(&m->cfg), (size_t)nn_value_features(&cfg), 1,
                        err, errlen);
}

/* Growing keeps every weight and starts what is new silent: a new
 * channel's weights into the old channels and the heads are zero, and a
 * new block's second conv is zero (the identity, as fixup starts every
 * block), so the grown net computes what the old one did. The weights
 * into the new channels and the new blocks' first convs are random
 * (fixup, from the seed), so gradient reaches everything new. */
nn_model_t *nn_model_grow(const nn_model_t *m, int blocks, int channels, uint64_t seed,
                          char *err, size_t errlen)
{
    const nn_config_t *a = &m->cfg;
    if (blocks < a->blocks || channels < a->channels) {
        snprintf(err, errlen, "cannot shrink a net from %d blocks x %d channels to %d x %d: "
                 "its weights would be lost", a->blocks, a->channels, blocks, channels);
        return NULL;
    }
    nn_config_t cfg = *a;
    cfg.blocks = blocks;
    cfg.channels = channels;
    nn_model_t *g = nn_model_create(&cfg, seed, err, errlen);
    if (!g)
        return NULL;
    g->rule = m->rule;
    g->step = m->step;
    g->generation = m->generation;
    nn_layout_t la, lb;
    nn_param_layout(a, &la);
    nn_param_layout(&cfg, &lb);
    size_t C0 = (size_t)a->channels, C = (size_t)channels, P = (size_t)a->in_planes;
    const float *s = m->params;
    float *d = g->params;
    grow_weights(d + lb.in_w, C, P, s + la.in_w, C0, P, 9);
    memcpy(d + lb.in_b, s + la.in_b, C0 * sizeof(float));
    for (int b = 0; b < a->blocks; b++) {
        const float *sw1 = s + la.blocks + (size_t)b * la.block_stride;
        const float *sb1 = sw1 + C0 * C0 * 9, *sw2 = sb1 + C0, *sb2 = sw2 + C0 * C0 * 9;
        float *dw1 = d + lb.blocks + (size_t)b * lb.block_stride;
        float *db1 = dw1 + C * C * 9, *dw2 = db1 + C, *db2 = dw2 + C * C * 9;
        grow_weights(dw1, C, C, sw1, C0, C0, 9);
        memcpy(db1, sb1, C0 * sizeof(float));
        grow_weights(dw2, C, C, sw2, C0, C0, 9);
        memcpy(db2, sb2, C0 * sizeof(float));
    }
    /* blocks from a->blocks on stay as created: the second conv zero */
    grow_weights(d + lb.pol_w1, (size_t)a->policy_head, C, s + la.pol_w1,
                 (size_t)a->policy_head, C0, 1);
    memcpy(d + lb.pol_b1, s + la.pol_b1, (la.val_w1 - la.pol_b1) * sizeof(float));
    grow_weights(d + lb.val_w1, (size_t)a->value_head, C, s + la.val_w1,
                 (size_t)a->value_head, C0, 1);
    memcpy(d + lb.val_b1, s + la.val_b1, (la.total - la.val_b1) * sizeof(float));
    return g;
}

nn_model_t *nn_model_clone(const nn_model_t *src)
{
    nn_model_t *m = malloc(sizeof *m);
    if (!m)
        return NULL;
    *m = *src;
    m->params = malloc(src->nparams * sizeof(float));
    if (!m->params) {
        free(m);
        return NULL;
    }
    memcpy(m->params, src->params, src->nparams * sizeof(float));
    return m;
}

void nn_model_free(nn_model_t *m)
{
    if (!m)
        return;
    free(m->params);
    free(m);
}

float nn_schedule_lr(const nn_schedule_t *s, uint64_t step)
{
    if (step < s->warmup_steps)
        return s->lr * (float)(step + 1) / (float)s->warmup_steps;
    if (s->total_steps == 0)
        return s->lr;
    if (step >= s->total_steps)
        return s->lr * s->final_frac;
    double span = (double)(s->total_steps - s->warmup_steps);
    double t = span > 0 ? (double)(step - s->warmup_steps) / span : 1.0;
    double f = s->final_frac + (1.0 - s->final_frac) * 0.5 * (1.0 + cos(3.141592653589793 * t));
    return (float)(s->lr * f);
}

bool nn_param_tensor_is_weight(const nn_config_t *cfg, int i)
{
    const char *name = nn_param_tensor(cfg, i).name;
    const char *sep = strrchr(name, '_'), *dot = strrchr(name, '.');
    if (!sep || (dot && dot > sep))
        sep = dot;
    return sep && sep[1] == 'w';
}
