/* nn: layout, float64 reference vs finite differences, fast path vs
 * reference, overfitting, weights file round trip and damage, encoder,
 * masking across board sizes, device strings, LR schedule; the bf16
 * forward (kernel, accuracy vs the reference, weight sync, precision
 * setting and its fp32 fallback); the pattern net (file round trip and
 * damage, symmetry, renju's forbidden points, training, its gradient
 * against finite differences through Adam's first step). */
#include <check.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "nn/eval.h"
#include "nn/gemm_bf16.h"
#include "nn/nn.h"
#include "nn/patnet.h"
#include "nn/winograd.h"
#include "tests/testkit.h"
#include "tests/testkit_nn.h"

static uint64_t rng_state = 1;
static uint32_t rnd(void)
{
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)(rng_state >> 33);
}
static double rnd_unit(void) { return rnd() / 2147483648.0; }          /* [0, 1) */
static double rnd_sym(void) { return 2.0 * rnd_unit() - 1.0; }         /* [-1, 1) */

/* Random input planes for a board of `size` inside M x M: stones with
 * probability `fill`, a random side to move, a few forbidden points. */
static void random_position(float *in, int size, int M, double fill)
{
    int hw = M * M;
    memset(in, 0, sizeof(float) * NN_PLANES * hw);
    bool black = rnd() & 1;
    for (int y = 0; y < size; y++)
        for (int x = 0; x < size; x++) {
            int q = y * M + x;
            in[NN_PLANE_ONBOARD * hw + q] = 1;
            in[NN_PLANE_BLACK * hw + q] = black;
            double r = rnd_unit();
            if (r < fill / 2)
                in[NN_PLANE_OWN * hw + q] = 1;
            else if (r < fill)
                in[NN_PLANE_OPP * hw + q] = 1;
            else if (black && r > 0.97)
                in[NN_PLANE_FORBIDDEN * hw + q] = 1;
        }
}

static bool legal_point(const float *in, int hw, int q)
{
    return in[NN_PLANE_ONBOARD * hw + q] > 0.5f && in[NN_PLANE_OWN * hw + q] < 0.5f &&
           in[NN_PLANE_OPP * hw + q] < 0.5f && in[NN_PLANE_FORBIDDEN * hw + q] < 0.5f;
}

/* Policy target: random distribution over legal points (or one-hot);
 * value target: random W/D/L distribution (or one-hot). */
static void random_targets(const float *in, int M, float *pt, float *vt, bool onehot)
{
    int hw = M * M, legal[BOARD_CELLS], nl = 0;
    memset(pt, 0, sizeof(float) * hw);
    for (int q = 0; q < hw; q++)
        if (legal_point(in, hw, q))
            legal[nl++] = q;
    if (onehot) {
        if (nl)
            pt[legal[rnd() % nl]] = 1;
        memset(vt, 0, 3 * sizeof(float));
        vt[rnd() % 3] = 1;
        return;
    }
    double s = 0;
    for (int i = 0; i < nl; i++)
        s += (pt[legal[i]] = (float)(rnd_unit() * rnd_unit()));
    for (int i = 0; i < nl; i++)
        pt[legal[i]] /= (float)s;
    float a = (float)rnd_unit(), b = (float)rnd_unit() * (1 - a);
    vt[0] = a;
    vt[1] = b;
    vt[2] = 1 - a - b;
}

/* A batch of training data: in (n, NN_PLANES, M, M), pt (n, M * M),
 * vt (n, 3). */
typedef struct batch {
    float *in, *pt, *vt;
} batch_t;

/* n positions on full M x M boards (stones with probability fill) and
 * their targets; free with free_batch. */
static batch_t random_batch(int n, int M, double fill, bool onehot)
{
    size_t hw = (size_t)M * M;
    batch_t d = {malloc(sizeof(float) * n * NN_PLANES * hw), malloc(sizeof(float) * n * hw),
                 malloc(sizeof(float) * n * 3)};
    ck_assert(d.in && d.pt && d.vt);
    for (int s = 0; s < n; s++) {
        random_position(d.in + s * NN_PLANES * hw, M, M, fill);
        random_targets(d.in + s * NN_PLANES * hw, M, d.pt + s * hw, d.vt + 3 * s, onehot);
    }
    return d;
}

static void free_batch(batch_t *d)
{
    free(d->in);
    free(d->pt);
    free(d->vt);
}

/* Targets of the extra policy channels of sample pt (K, hw), channel 0
 * already there: channel 1 one-hot at a legal point (none when `none`),
 * channel 2 the soft target of channel 0. */
static void extra_targets(const float *in, int M, int K, float *pt, bool none)
{
    int hw = M * M;
    if (K > 1) {
        memset(pt + hw, 0, sizeof(float) * hw);
        int legal[BOARD_CELLS], nl = 0;
        for (int q = 0; q < hw; q++)
            if (legal_point(in, hw, q))
                legal[nl++] = q;
        if (nl && !none)
            pt[hw + legal[rnd() % nl]] = 1;
    }
    if (K > 2) {
        double s = 0;
        for (int q = 0; q < hw; q++)
            s += (pt[2 * hw + q] = (float)pow(pt[q], NN_SOFT_POWER));
        for (int q = 0; q < hw; q++)
            pt[2 * hw + q] = s > 0 ? (float)(pt[2 * hw + q] / s) : 0.0f;
    }
}

static nn_model_t *model_from_cfg(const nn_config_t *cfg, uint64_t seed, double jitter)
{
    char err[256];
    nn_model_t *m = nn_model_create(cfg, seed, err, sizeof err);
    ck_assert_msg(m != NULL, "%s", err);
    /* fixup init zeroes the second conv of each block: perturb everything
     * so every path carries gradient */
    for (size_t i = 0; i < m->nparams; i++)
        m->params[i] += (float)(jitter * rnd_sym());
    return m;
}

static nn_model_t *make_model_kp(int B, int C, int M, int Hp, int Hv, int Vh, int K, int pool,
                                 uint64_t seed, double jitter)
{
    nn_config_t cfg;
    nn_config_default(&cfg, B, C, M);
    cfg.policy_outputs = K;
    cfg.value_pool = pool;
    if (Hp) {
        cfg.policy_head = Hp;
        cfg.value_head = Hv;
        cfg.value_hidden = Vh;
    }
    return model_from_cfg(&cfg, seed, jitter);
}

static nn_model_t *make_model_k(int B, int C, int M, int Hp, int Hv, int Vh, int K,
                                uint64_t seed, double jitter)
{
    return make_model_kp(B, C, M, Hp, Hv, Vh, K, NN_POOL_MEAN, seed, jitter);
}

static nn_model_t *make_model(int B, int C, int M, int Hp, int Hv, int Vh, uint64_t seed,
                              double jitter)
{
    return make_model_k(B, C, M, Hp, Hv, Vh, 1, seed, jitter);
}

/* A net the test needs: failing to open one fails the test with the reason. */
static nn_net_t *open_net(const nn_model_t *m, const char *device, int max_batch, int threads)
{
    char err[256];
    nn_net_t *net = nn_net_create(m, device, max_batch, threads, NULL, 0, err, sizeof err);
    ck_assert_msg(net != NULL, "%s net (batch %d, %d threads): %s", device, max_batch, threads,
                  err);
    return net;
}

START_TEST(test_layout)
{
    nn_config_t cfg;
    nn_config_default(&cfg, 6, 64, 15);
    ck_assert_int_eq(cfg.policy_head, 32);
    ck_assert_int_eq(cfg.value_head, 32);
    ck_assert_int_eq(cfg.value_hidden, 64);
    char err[128];
    ck_assert_int_eq(nn_config_check(&cfg, err, sizeof err), 0);
    size_t C = 64, expect = C * 5 * 9 + C + 6 * 2 * (C * C * 9 + C) + 32 * C + 32 + 32 + 1 +
                            32 * C + 32 + 64 * 32 + 64 + 3 * 64 + 3;
    ck_assert_uint_eq(nn_param_count(&cfg), expect);
    ck_assert_int_eq(nn_param_tensors(&cfg), 2 + 4 * 6 + 10);
    size_t off = 0;
    int weights = 0;
    for (int i = 0; i < nn_param_tensors(&cfg); i++) {
        nn_tensor_info_t t = nn_param_tensor(&cfg, i);
        ck_assert_uint_eq(t.offset, off);   /* contiguous, in the documented order */
        off += t.count;
        weights += nn_param_tensor_is_weight(&cfg, i);
    }
    ck_assert_uint_eq(off, expect);
    ck_assert_int_eq(weights, 1 + 2 * 6 + 5);
    ck_assert_str_eq(nn_param_tensor(&cfg, 2 + 4 * 3 + 2).name, "block3.w2");
    nn_layout_t l;
    nn_param_layout(&cfg, &l);
    ck_assert_uint_eq(nn_param_tensor(&cfg, 2 + 4 * 3 + 2).offset,
                      l.blocks + 3 * l.block_stride + C * C * 9 + C);
    ck_assert_uint_eq(l.val_fc2_b, expect - 3);
    /* 2 flops per multiply-add: the trunk dominates */
    double f = nn_flops_per_eval(&cfg, 15);
    ck_assert(f > 2.0 * 225 * 6 * 2 * C * C * 9 && f < 2.0 * 225 * (6 * 2 * C * C * 9 + 8000));
    cfg.blocks = NN_MAX_BLOCKS + 1;
    ck_assert_int_eq(nn_config_check(&cfg, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "blocks"));
    cfg.blocks = 2;
    cfg.board_max = 21;
    ck_assert_int_eq(nn_config_check(&cfg, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "board max"));
}
END_TEST

/* Same seed, same weights; fixup: second conv of each block zero. */
START_TEST(test_init)
{
    nn_config_t cfg;
    nn_config_default(&cfg, 3, 16, 9);
    char err[128];
    nn_model_t *a = nn_model_create(&cfg, 42, err, sizeof err);
    nn_model_t *b = nn_model_create(&cfg, 42, err, sizeof err);
    nn_model_t *c = nn_model_create(&cfg, 43, err, sizeof err);
    ck_assert_int_eq(memcmp(a->params, b->params, a->nparams * sizeof(float)), 0);
    ck_assert_int_ne(memcmp(a->params, c->params, a->nparams * sizeof(float)), 0);
    for (int i = 0; i < nn_param_tensors(&cfg); i++) {
        nn_tensor_info_t t = nn_param_tensor(&cfg, i);
        double ss = 0;
        for (size_t k = 0; k < t.count; k++)
            ss += (double)a->params[t.offset + k] * a->params[t.offset + k];
        bool zero = !nn_param_tensor_is_weight(&cfg, i) || strstr(t.name, ".w2");
        ck_assert_msg(zero ? ss == 0 : ss > 0, "tensor %s: sum of squares %g", t.name, ss);
    }
    nn_model_free(a);
    nn_model_free(b);
    nn_model_free(c);
    nn_model_free(NULL);
}
END_TEST

/* Central differences on the float64 reference: every parameter tensor
 * and the input. Tolerance: |fd - analytic| <= 1e-7 + 1e-5 * |analytic|
 * per element (eps 1e-6 in float64: truncation ~1e-12, rounding ~1e-10). */
/* Finite differences of the float64 reference against its backward, for
 * every parameter and input, with K policy outputs (K = 3: sample 1 has
 * no opponent-reply target). */
static void gradcheck(int K, int pool)
{
    rng_state = 7;
    int M = 7, n = 3;
    nn_model_t *m = make_model_kp(2, 8, M, 4, 4, 8, K, pool, 11, 0.2);
    const nn_config_t *cfg = &m->cfg;
    int hw = M * M, ps = NN_PLANES * hw, pts = K * hw;
    float *in = malloc(sizeof(float) * n * ps), *pt = malloc(sizeof(float) * n * pts), vt[9];
    for (int s = 0; s < n; s++) {
        random_position(in + s * ps, s == 2 ? 6 : M, M, 0.3);   /* one 6x6 board in 7x7 */
        random_targets(in + s * ps, M, pt + s * pts, vt + 3 * s, false);
        extra_targets(in + s * ps, M, K, pt + s * pts, s == 1);
    }
    size_t np = m->nparams;
    double *W = malloc(sizeof(double) * np), *G = malloc(sizeof(double) * np);
    double *Gin = malloc(sizeof(double) * n * ps);
    for (size_t i = 0; i < np; i++)
        W[i] = m->params[i];
    double wd = 1e-3, eps = 1e-6;
    nn_losses_t l;
    double L0 = nn_ref_loss_grad64(cfg, W, in, pt, vt, n, wd, &l, G, Gin);
    ck_assert(isfinite(L0) && L0 > 0);
    double aux = nn_policy_loss_weight(1) * l.opp_policy + nn_policy_loss_weight(2) * l.soft_policy;
    ck_assert(fabs(l.total - (l.policy + aux + l.value + l.l2)) < 1e-4);
    if (K > 1)
        ck_assert(l.opp_policy > 0.1f);
    if (K > 2)
        ck_assert(l.soft_policy > l.policy);   /* the flatter target costs more */
    int stride = asan() ? 7 : 1;   /* under ASan check every 7th element */
    for (int t = 0; t <= nn_param_tensors(cfg); t++) {
        bool is_in = t == nn_param_tensors(cfg);
        nn_tensor_info_t ti = is_in ? (nn_tensor_info_t){"input", 0, (size_t)n * ps}
                                    : nn_param_tensor(cfg, t);
        double worst = 0, gmax = 0;
        for (size_t k = 0; k < ti.count; k += (size_t)stride) {
            double an, fd;
            if (is_in) {
                float save = in[k];
                in[k] = (float)(save + eps);
                double dp = (double)in[k] - save;
                double lp = nn_ref_loss_grad64(cfg, W, in, pt, vt, n, wd, NULL, NULL, NULL);
                in[k] = (float)(save - eps);
                double dm = save - (double)in[k];
                double lm = nn_ref_loss_grad64(cfg, W, in, pt, vt, n, wd, NULL, NULL, NULL);
                in[k] = save;
                fd = (lp - lm) / (dp + dm);
                an = Gin[k];
            } else {
                size_t i = ti.offset + k;
                double save = W[i];
                W[i] = save + eps;
                double lp = nn_ref_loss_grad64(cfg, W, in, pt, vt, n, wd, NULL, NULL, NULL);
                W[i] = save - eps;
                double lm = nn_ref_loss_grad64(cfg, W, in, pt, vt, n, wd, NULL, NULL, NULL);
                W[i] = save;
                fd = (lp - lm) / (2 * eps);
                an = G[i];
            }
            double diff = fabs(fd - an), rel = diff / fmax(fabs(an), 1e-7);
            worst = rel > worst ? rel : worst;
            gmax = fabs(an) > gmax ? fabs(an) : gmax;
            ck_assert_msg(diff <= 1e-7 + 1e-5 * fabs(an),
                          "%s[%zu]: finite difference %.10g, backward %.10g", ti.name, k, fd, an);
        }
        printf("gradcheck K=%d pool %s %-10s largest relative difference %.2e (max |grad| %.2e)\n", K,
               nn_value_pool_name(pool), ti.name, worst, gmax);
        if (strcmp(ti.name, "pol_b2") == 0)   /* softmax ignores a constant shift */
            ck_assert_msg(gmax < 1e-12, "pol_b2 gradient %g, should be 0", gmax);
        else
            ck_assert_msg(gmax > 1e-4, "%s: gradient %g, the check proves nothing", ti.name, gmax);
    }
    free(W);
    free(G);
    free(Gin);
    free(in);
    free(pt);
    nn_model_free(m);
}

START_TEST(test_gradcheck) { gradcheck(1, NN_POOL_MEAN); }
END_TEST
START_TEST(test_gradcheck_policy_outputs) { gradcheck(3, NN_POOL_MEAN); }
END_TEST
/* the value head's max: its gradient reaches the maximal point alone */
START_TEST(test_gradcheck_value_max) { gradcheck(1, NN_POOL_MEAN_MAX); }
END_TEST

/* Tolerance of the fast path against the float64 reference:
 * |x - ref| <= atol * (the tensor's largest |ref|) + rtol * |ref|.
 * Direct conv (im2col + SGEMM): float sums in another order, atol 1e-6,
 * rtol 1e-4. Winograd F(4x4, 3x3) rounds more: its transforms scale values
 * by up to 10 and cancel, and the filter gradient is a sum over whole
 * batches in the transformed domain; atol 1e-4, rtol 1e-3 (measured
 * worst case over the cases below: 8e-6 of the tensor's largest value). */
typedef struct tol {
    double atol, rtol;
} tol_t;
static const tol_t TOL_DIRECT = {1e-6, 1e-4}, TOL_WINOGRAD = {1e-4, 1e-3};

static void compare(const char *what, const float *x, const float *ref, size_t n, tol_t tol)
{
    double amax = 0, worst = 0, worst_abs = 0;
    for (size_t i = 0; i < n; i++)
        amax = fmax(amax, fabs(ref[i]));
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)x[i] - ref[i]);
        worst = fmax(worst, d / (fabs(ref[i]) + 1e-6 * amax + 1e-30));
        worst_abs = fmax(worst_abs, d / (amax + 1e-30));
        ck_assert_msg(d <= tol.atol * amax + tol.rtol * fabs(ref[i]),
                      "%s[%zu]: fast %.9g, reference %.9g (largest |ref| %.3g)", what, i, x[i],
                      ref[i], amax);
    }
    printf("fast vs ref %-12s largest difference: %.2e relative, %.2e of the largest |ref|\n",
           what, worst, worst_abs);
}

/* The policy and value outputs of net a on inputs ia and of net b (the
 * reference) on ib, n positions on board_max M, agree within tol; WHEN
 * follows the names in the printed figures. */
static void compare_outputs(nn_net_t *a, const float *ia, nn_net_t *b, const float *ib, int n,
                            int M, tol_t tol, const char *when)
{
    size_t np = (size_t)n * M * M, nv = (size_t)n * 3;
    float *pa = malloc(sizeof(float) * np), *pb = malloc(sizeof(float) * np);
    float *va = malloc(sizeof(float) * nv), *vb = malloc(sizeof(float) * nv);
    nn_net_forward(a, ia, n, pa, va);
    nn_net_forward(b, ib, n, pb, vb);
    char what[32];
    snprintf(what, sizeof what, "policy%s", when);
    compare(what, pa, pb, np, tol);
    snprintf(what, sizeof what, "value%s", when);
    compare(what, va, vb, nv, tol);
    free(pa);
    free(pb);
    free(va);
    free(vb);
}

/* One comparison of the fast path (conv algorithm `conv`) against the
 * reference: blocks x channels on board_max M, n positions on the boards
 * sizes[s % nsizes], forward, losses, gradients, 3 SGD steps. */
typedef struct vs_ref {
    const char *conv;   /* GOMOKU_CONV */
    int threads, max_batch, n, blocks, channels, M;
    int sizes[3], nsizes;
    int K;              /* policy outputs (0: 1) */
    int pool;           /* value pooling (nn_value_pool_t) */
} vs_ref_t;

static void fast_vs_ref_case(const vs_ref_t *k)
{
    rng_state = 99 + (uint64_t)k->threads + 7 * (uint64_t)k->M + (uint64_t)k->channels;
    int M = k->M, n = k->n;
    tol_t tol = strcmp(k->conv, "winograd") == 0 ? TOL_WINOGRAD : TOL_DIRECT;
    printf("fast (%s) vs ref: %dx%d net, board max %d, batch %d of %d, %d threads\n", k->conv,
           k->blocks, k->channels, M, n, k->max_batch, k->threads);
    int K = k->K > 0 ? k->K : 1;
    nn_model_t *m = make_model_kp(k->blocks, k->channels, M, 0, 0, 0, K, k->pool, 5, 0.05);
    int hw = M * M, ps = NN_PLANES * hw, pts = K * hw;
    float *in = malloc(sizeof(float) * n * ps), *pt = malloc(sizeof(float) * n * pts);
    float *vt = malloc(sizeof(float) * n * 3);
    for (int s = 0; s < n; s++) {
        random_position(in + s * ps, k->sizes[s % k->nsizes], M, 0.25);
        random_targets(in + s * ps, M, pt + s * pts, vt + 3 * s, false);
        extra_targets(in + s * ps, M, K, pt + s * pts, s == 2);
    }
    char err[256];
    ck_assert_int_eq(setenv("GOMOKU_CONV", k->conv, 1), 0);
    nn_net_t *fast = nn_net_create(m, "cpu", k->max_batch, k->threads, NULL, 0, err, sizeof err);
    unsetenv("GOMOKU_CONV");
    ck_assert_msg(fast != NULL, "%s", err);
    nn_net_t *ref = open_net(m, "cpu-ref", k->max_batch, 1);
    compare_outputs(fast, in, ref, in, n, M, tol, "");
    size_t np = m->nparams;
    float *gf = malloc(sizeof(float) * np), *gr = malloc(sizeof(float) * np);
    nn_losses_t lf, lr;
    float rl = (float)tol.rtol;
    ck_assert_int_eq(nn_net_loss_grad(fast, in, pt, vt, n, 1e-4f, &lf, gf, err, sizeof err), 0);
    ck_assert_int_eq(nn_net_loss_grad(ref, in, pt, vt, n, 1e-4f, &lr, gr, err, sizeof err), 0);
    ck_assert_msg(fabsf(lf.total - lr.total) <= rl * lr.total, "loss %g vs %g", lf.total,
                  lr.total);
    ck_assert(fabsf(lf.policy - lr.policy) <= rl * lr.policy);
    ck_assert(fabsf(lf.value - lr.value) <= rl * lr.value);
    ck_assert(fabsf(lf.l2 - lr.l2) <= 1e-4f * lr.l2);
    ck_assert(fabsf(lf.opp_policy - lr.opp_policy) <= 1e-4f * lr.opp_policy);
    ck_assert(fabsf(lf.soft_policy - lr.soft_policy) <= 1e-4f * lr.soft_policy);
    ck_assert((lr.opp_policy > 0) == (K > 1) && (lr.soft_policy > 0) == (K > 2));
    for (int t = 0; t < nn_param_tensors(&m->cfg); t++) {
        nn_tensor_info_t ti = nn_param_tensor(&m->cfg, t);
        if (strcmp(ti.name, "pol_b2") == 0) {
            /* softmax ignores a constant shift: this gradient is 0 up to rounding */
            for (size_t j = 0; j < ti.count; j++)
                ck_assert_msg(fabsf(gf[ti.offset + j]) < 1e-6f, "pol_b2 gradient %g",
                              gf[ti.offset + j]);
            continue;
        }
        compare(ti.name, gf + ti.offset, gr + ti.offset, ti.count, tol);
    }
    /* a few SGD steps on each: the weights stay together (K > 1: with
     * policy loss weights of the step's own, which both paths apply and
     * the total reports) */
    nn_train_opts_t o = {.lr = 0.05f, .momentum = 0.9f, .weight_decay = 1e-4f};
    float dw[NN_MAX_POLICY_OUTPUTS];
    nn_train_policy_weights(&o, dw);   /* none set: the defaults */
    for (int c = 0; c < NN_MAX_POLICY_OUTPUTS; c++)
        ck_assert(dw[c] == nn_policy_loss_weight(c));
    if (K > 1) {
        o.policy_weight[NN_POLICY_MAIN] = 1.0f;
        o.policy_weight[NN_POLICY_OPP] = 0.5f;
        o.policy_weight[NN_POLICY_SOFT] = 1.5f;
    }
    for (int s = 0; s < 3; s++) {
        ck_assert_int_eq(nn_net_train_step(fast, in, pt, vt, n, &o, &lf, err, sizeof err), 0);
        ck_assert_int_eq(nn_net_train_step(ref, in, pt, vt, n, &o, &lr, err, sizeof err), 0);
        ck_assert(fabsf(lf.total - lr.total) <= rl * lr.total);
        double want = lr.policy + lr.value + lr.l2 + 0.5 * lr.opp_policy + 1.5 * lr.soft_policy;
        ck_assert_msg(K == 1 || fabs(lr.total - want) <= 1e-5 * want, "total %g, want %g",
                      lr.total, want);
    }
    nn_net_get_weights(fast, gf);
    nn_net_get_weights(ref, gr);
    compare("weights after 3 steps", gf, gr, np, tol);
    ck_assert_int_ne(memcmp(gf, m->params, np * sizeof(float)), 0);
    /* the forward after the steps uses the updated (re-transformed) weights */
    compare_outputs(fast, in, ref, in, n, M, tol, " after");
    free(gf);
    free(gr);
    free(in);
    free(pt);
    free(vt);
    nn_net_free(fast);
    nn_net_free(ref);
    nn_model_free(m);
}

static void fast_vs_ref(int threads, int max_batch, int n)
{
    vs_ref_t k = {"direct", threads, max_batch, n, 2, 16, 9, {9, 7}, 2, 1, NN_POOL_MEAN};
    fast_vs_ref_case(&k);
}

START_TEST(test_fast_vs_ref_1thread) { fast_vs_ref(1, 8, 5); }
END_TEST
START_TEST(test_fast_vs_ref_2threads) { fast_vs_ref(2, 7, 7); }
END_TEST
/* three policy outputs: forward is channel 0's, every channel trains */
START_TEST(test_fast_vs_ref_policy_outputs)
{
    vs_ref_t k = {"direct", 2, 7, 7, 2, 16, 9, {9, 7}, 2, 3, NN_POOL_MEAN};
    fast_vs_ref_case(&k);
}
END_TEST
/* the value head's mean and max, over 2 threads and boards below board max */
START_TEST(test_fast_vs_ref_value_max)
{
    vs_ref_t k = {"direct", 2, 7, 7, 2, 16, 9, {9, 7}, 2, 1, NN_POOL_MEAN_MAX};
    fast_vs_ref_case(&k);
}
END_TEST
/* chunks of several pieces (9 samples forward, 12 training on 9x9), uneven split */
START_TEST(test_fast_vs_ref_big) { fast_vs_ref(2, asan() ? 30 : 60, asan() ? 29 : 57); }
END_TEST

/* Winograd against the reference: every board size class (tiles that
 * cover the board exactly, 20 = 5 x 4, and ones that overhang, 5, 9, 15),
 * boards smaller than board_max (masks), odd channel counts (partial
 * vector blocks), batch 1, ragged batches over 2 threads, and a batch of
 * several pieces per thread (15 x 15: 16 samples per piece). */
START_TEST(test_winograd_vs_ref)
{
    static const vs_ref_t cases[] = {
        {"winograd", 1, 1, 1, 1, 7, 5, {5}, 1, 1, NN_POOL_MEAN},
        {"winograd", 2, 8, 7, 2, 16, 9, {9, 7, 5}, 3, 1, NN_POOL_MEAN},
        {"winograd", 2, 5, 3, 1, 17, 15, {15, 9, 13}, 3, 1, NN_POOL_MEAN},
        {"winograd", 1, 4, 4, 1, 12, 20, {20, 15, 19}, 3, 1, NN_POOL_MEAN},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        fast_vs_ref_case(&cases[i]);
}
END_TEST

START_TEST(test_winograd_vs_ref_big)
{
    vs_ref_t k = {"winograd", 2, 40, asan() ? 19 : 37, 1, 16, 15, {15, 11}, 2, 1, NN_POOL_MEAN};
    fast_vs_ref_case(&k);
}
END_TEST

/* GOMOKU_CONV takes direct, winograd or auto; anything else is refused
 * with a message naming the variable. */
START_TEST(test_conv_env)
{
    nn_model_t *m = make_model(1, 16, 9, 0, 0, 0, 5, 0.0);
    char err[256] = "";
    ck_assert_int_eq(setenv("GOMOKU_CONV", "fft", 1), 0);
    nn_net_t *net = nn_net_create(m, "cpu", 4, 1, NULL, 0, err, sizeof err);
    ck_assert_ptr_null(net);
    ck_assert_msg(strstr(err, "GOMOKU_CONV") && strstr(err, "fft"), "%s", err);
    for (int i = 0; i < 3; i++) {
        const char *v[] = {"direct", "winograd", "auto"};
        ck_assert_int_eq(setenv("GOMOKU_CONV", v[i], 1), 0);
        net = nn_net_create(m, "cpu", 4, 1, NULL, 0, err, sizeof err);
        ck_assert_msg(net != NULL, "%s: %s", v[i], err);
        nn_net_free(net);
    }
    unsetenv("GOMOKU_CONV");
    nn_model_free(m);
}
END_TEST

/* 64 fixed positions with one-hot targets (so the loss floor is 0):
 * full-batch SGD on the fast path drives the data loss (policy + value;
 * L2 off, so total = data loss) down by 90% within 500 steps. A 1x16 net
 * with wider value head (64, 128) takes 207..319 steps over data seeds. */
START_TEST(test_overfit)
{
    rng_state = 2024;
    int M = 7, n = 64;
    nn_model_t *m = make_model(1, 16, M, 16, 64, 128, 3, 0.0);
    batch_t d = random_batch(n, M, 0.3, true);
    char err[256];
    /* 2 threads on every machine, so the float sums (and the run) are the same */
    nn_net_t *net = open_net(m, "cpu", n, 2);
    nn_train_opts_t o = {.lr = 0.01f, .momentum = 0.95f, .weight_decay = 0};
    nn_losses_t l;
    float first = 0, last = 0;
    int steps;
    for (steps = 0; steps < 500; steps++) {
        ck_assert_int_eq(nn_net_train_step(net, d.in, d.pt, d.vt, n, &o, &l, err, sizeof err), 0);
        ck_assert(isfinite(l.total));
        if (steps == 0)
            first = l.total;
        last = l.total;
        if (last <= 0.1f * first)
            break;
    }
    printf("overfit: loss %.4f -> %.4f in %d steps\n", first, last, steps);
    ck_assert_msg(last <= 0.1f * first, "loss %g -> %g after 500 steps", first, last);
    free_batch(&d);
    nn_net_free(net);
    nn_model_free(m);
}
END_TEST

static char tmpdir[256];

static void tmp_setup(void) { make_tmpdir(tmpdir, sizeof tmpdir); }
static void tmp_teardown(void) { remove_tree(tmpdir); }

START_TEST(test_save_load)
{
    rng_state = 5;
    nn_model_t *m = make_model(2, 8, 11, 0, 0, 0, 77, 0.1);
    m->rule = RULE_RENJU;
    m->step = 123456789012ull;
    m->generation = 42;
    m->params[3] = -0.0f;
    m->params[4] = 1e-40f;   /* denormal survives */
    char path[300], err[256];
    snprintf(path, sizeof path, "%s/m.gzm", tmpdir);
    ck_assert_int_eq(nn_model_save(m, path, err, sizeof err), 0);
    nn_model_t *b = nn_model_load(path, err, sizeof err);
    ck_assert_msg(b != NULL, "%s", err);
    ck_assert_int_eq(memcmp(&b->cfg, &m->cfg, sizeof m->cfg), 0);
    ck_assert_uint_eq(b->rule, RULE_RENJU);
    ck_assert_uint_eq(b->step, m->step);
    ck_assert_uint_eq(b->generation, 42);
    ck_assert_uint_eq(b->nparams, m->nparams);
    ck_assert_int_eq(memcmp(b->params, m->params, m->nparams * sizeof(float)), 0);
    /* saving again gives the same bytes; no temp file is left behind */
    char path2[300];
    snprintf(path2, sizeof path2, "%s/m2.gzm", tmpdir);
    ck_assert_int_eq(nn_model_save(b, path2, err, sizeof err), 0);
    uint32_t c1, c2;
    ck_assert_int_eq(nn_file_crc(path, &c1, err, sizeof err), 0);
    ck_assert_int_eq(nn_file_crc(path2, &c2, err, sizeof err), 0);
    ck_assert_uint_eq(c1, c2);
    /* the identity tells models apart: the stored checksum, not the
     * constant a CRC over a file and its own CRC gives */
    size_t blen;
    unsigned char *bytes = (unsigned char *)slurp_len(path, &blen);
    ck_assert_uint_eq(c1, (uint32_t)bytes[blen - 4] | (uint32_t)bytes[blen - 3] << 8 |
                              (uint32_t)bytes[blen - 2] << 16 | (uint32_t)bytes[blen - 1] << 24);
    ck_assert_uint_eq(nn_weights_crc(bytes, blen), c1);
    free(bytes);
    b->params[0] += 1.0f;
    ck_assert_int_eq(nn_model_save(b, path2, err, sizeof err), 0);
    ck_assert_int_eq(nn_file_crc(path2, &c2, err, sizeof err), 0);
    ck_assert_uint_ne(c1, c2);
    b->params[0] -= 1.0f;
    ck_assert_int_eq(nn_model_save(b, path2, err, sizeof err), 0);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "test $(ls '%s' | wc -l) -eq 2", tmpdir);
    ck_assert_int_eq(system(cmd), 0);
    ck_assert_int_eq(nn_file_crc("/nonexistent/x.gzm", &c1, err, sizeof err), -1);
    ck_assert_ptr_null(nn_model_load("/nonexistent/x.gzm", err, sizeof err));
    ck_assert_ptr_nonnull(strstr(err, "cannot open"));
    snprintf(path2, sizeof path2, "%s/nodir/m.gzm", tmpdir);
    ck_assert_int_eq(nn_model_save(b, path2, err, sizeof err), -1);
    ck_assert_ptr_nonnull(strstr(err, "cannot create"));
    nn_model_free(b);
    nn_model_free(m);
}
END_TEST

/* Write `len` bytes of buf (with an optional byte change) and load it:
 * the error must contain `want`, and no other kind's phrase. */
static void expect_damage(const unsigned char *buf, size_t len, long at, unsigned char val,
                          const char *want)
{
    static const char *const kinds[] = {"bad magic", "unknown model file version",
                                        "dims out of range", "truncated", "CRC mismatch",
                                        "parameter count", "trailing bytes"};
    char path[300], err[512];
    snprintf(path, sizeof path, "%s/bad.gzm", tmpdir);
    unsigned char *copy = malloc(len + 1);
    memcpy(copy, buf, len);
    if (at >= 0)
        copy[at] = val;
    write_file(path, copy, len, "wb");
    free(copy);
    err[0] = '\0';
    nn_model_t *m = nn_model_load(path, err, sizeof err);
    ck_assert_msg(m == NULL, "damaged file (%s) loaded", want);
    ck_assert_msg(strstr(err, want) != NULL, "wanted '%s', got: %s", want, err);
    ck_assert_msg(strchr(err, '\n') == NULL, "multi-line error: %s", err);
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
        if (strcmp(kinds[k], want) != 0)
            ck_assert_msg(strstr(err, kinds[k]) == NULL, "'%s' also says '%s'", err, kinds[k]);
    printf("damaged (%s): %s\n", want, err);
}

START_TEST(test_damaged_files)
{
    nn_config_t cfg;
    nn_config_default(&cfg, 1, 8, 9);
    char path[300], err[256];
    nn_model_t *m = nn_model_create(&cfg, 1, err, sizeof err);
    snprintf(path, sizeof path, "%s/good.gzm", tmpdir);
    ck_assert_int_eq(nn_model_save(m, path, err, sizeof err), 0);
    size_t len;
    unsigned char *buf = (unsigned char *)slurp_len(path, &len);
    ck_assert_ptr_nonnull(buf);
    ck_assert_uint_eq(len, 68 + 4 * m->nparams + 4);
    expect_damage(buf, len, 0, 'X', "bad magic");
    expect_damage((const unsigned char *)"hello world, not a model at all", 31, -1, 0,
                  "bad magic");
    expect_damage(buf, len, 4, NN_FILE_VERSION + 1, "unknown model file version");
    expect_damage(buf, len, 4, 0, "unknown model file version");
    expect_damage(buf, len, 16, 200, "dims out of range");     /* blocks = 200 */
    expect_damage(buf, len, 8, 30, "dims out of range");       /* board max 30 */
    expect_damage(buf, len, 23, 0x7f, "dims out of range");    /* huge head size */
    expect_damage(buf, len, 36, 9, "dims out of range");       /* rule 9 */
    expect_damage(buf, len, 60, 3, "parameter count");
    const size_t cuts[] = {0, 2, 6, 40, 67, 68, 100, len / 2, len - 4, len - 1};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++)
        expect_damage(buf, cuts[i], -1, 0, "truncated");
    expect_damage(buf, len, (long)(68 + 4 * 100 + 1), buf[68 + 401] ^ 0x10, "CRC mismatch");
    expect_damage(buf, len, 44, buf[44] ^ 1, "CRC mismatch");   /* the step field */
    expect_damage(buf, len, (long)len - 1, buf[len - 1] ^ 0x80, "CRC mismatch");
    buf[len] = 0;
    expect_damage(buf, len + 1, -1, 0, "trailing bytes");
    free(buf);
    nn_model_free(m);
    /* version 2 (three policy outputs): the count is checked */
    cfg.policy_outputs = 3;
    m = nn_model_create(&cfg, 1, err, sizeof err);
    ck_assert_int_eq(nn_model_save(m, path, err, sizeof err), 0);
    buf = (unsigned char *)slurp_len(path, &len);
    ck_assert_uint_eq(buf[4], 2);
    ck_assert_uint_eq(buf[40], 3);
    expect_damage(buf, len, 40, 0, "dims out of range");       /* policy outputs 0 */
    expect_damage(buf, len, 40, 4, "dims out of range");       /* policy outputs 4 */
    expect_damage(buf, len, 40, 1, "parameter count");         /* 1 output, 3 outputs' weights */
    free(buf);
    nn_model_free(m);
}
END_TEST

/* Version 1 files (before the policy output count) load as K = 1: the
 * shipped 9x9 model, written by the build before, and what this build
 * writes for one output (version 1, the field 0). A K = 3 model saves (as
 * version 2) and loads with its three outputs, and plays as its channel 0. */
START_TEST(test_version1_files)
{
    char path[4200], err[512];
    const char *src = getenv("GOMOKU_SRC");
    snprintf(path, sizeof path, "%s/models/freestyle9-2x32.gzm", src ? src : ".");
    size_t len;
    unsigned char *buf = (unsigned char *)slurp_len(path, &len);
    ck_assert_uint_eq(buf[4], 1);   /* still a version 1 file */
    free(buf);
    nn_model_t *m = nn_model_load(path, err, sizeof err);
    ck_assert_msg(m != NULL, "%s", err);
    ck_assert_int_eq(m->cfg.policy_outputs, 1);
    nn_model_free(m);

    m = make_model_k(1, 8, 9, 0, 0, 0, 1, 9, 0.0);
    snprintf(path, sizeof path, "%s/v1.gzm", tmpdir);
    ck_assert_int_eq(nn_model_save(m, path, err, sizeof err), 0);
    buf = (unsigned char *)slurp_len(path, &len);
    ck_assert_uint_eq(buf[4], 1);
    ck_assert_uint_eq(buf[40], 0);
    uint32_t stored = (uint32_t)buf[len - 4] | (uint32_t)buf[len - 3] << 8 |
                      (uint32_t)buf[len - 2] << 16 | (uint32_t)buf[len - 1] << 24;
    ck_assert_uint_eq(stored, (uint32_t)crc32(0L, buf, (uInt)(len - 4)));
    free(buf);
    nn_model_t *b = nn_model_load(path, err, sizeof err);
    ck_assert_msg(b != NULL, "%s", err);
    ck_assert_int_eq(memcmp(&b->cfg, &m->cfg, sizeof m->cfg), 0);
    ck_assert_int_eq(memcmp(b->params, m->params, m->nparams * sizeof(float)), 0);
    nn_model_free(b);

    /* K = 3 from the same seed: the K = 1 model's tensors plus two more
     * output rows (drawn last), so it plays exactly as the K = 1 model */
    nn_model_t *m3 = make_model_k(1, 8, 9, 0, 0, 0, 3, 9, 0.0);
    ck_assert_uint_eq(m3->nparams, m->nparams + 2 * 32 + 2);
    snprintf(path, sizeof path, "%s/k3.gzm", tmpdir);
    ck_assert_int_eq(nn_model_save(m3, path, err, sizeof err), 0);
    b = nn_model_load(path, err, sizeof err);
    ck_assert_msg(b != NULL, "%s", err);
    ck_assert_int_eq(b->cfg.policy_outputs, 3);
    ck_assert_int_eq(memcmp(b->params, m3->params, m3->nparams * sizeof(float)), 0);
    float in[NN_PLANES * 81], p1[81], p3[81], v1[3], v3[3];
    random_position(in, 9, 9, 0.2);
    nn_net_t *n1 = open_net(m, "cpu", 1, 1);
    nn_net_t *n3 = open_net(b, "cpu", 1, 1);
    nn_net_forward(n1, in, 1, p1, v1);
    nn_net_forward(n3, in, 1, p3, v3);
    ck_assert_int_eq(memcmp(p1, p3, sizeof p1), 0);
    ck_assert_int_eq(memcmp(v1, v3, sizeof v1), 0);
    nn_net_free(n1);
    nn_net_free(n3);
    nn_model_free(b);
    nn_model_free(m3);
    nn_model_free(m);
}
END_TEST

/* Planes of a hand-made position, from both sides' points of view. */
START_TEST(test_encode)
{
    board_t b;
    board_init(&b, 9, RULE_FREESTYLE);
    int M = 11, hw = M * M;
    float *in = malloc(sizeof(float) * NN_PLANES * hw);
    ck_assert_int_eq(board_play(&b, board_xy(&b, 4, 4)), MOVE_OK);   /* black */
    ck_assert_int_eq(board_play(&b, board_xy(&b, 0, 8)), MOVE_OK);   /* white */
    ck_assert_int_eq(board_play(&b, board_xy(&b, 8, 0)), MOVE_OK);   /* black; white to move */
    nn_encode(&b, M, in);
    float sum[NN_PLANES] = {0};
    for (int p = 0; p < NN_PLANES; p++)
        for (int q = 0; q < hw; q++)
            sum[p] += in[p * hw + q];
    ck_assert_float_eq(sum[NN_PLANE_OWN], 1);
    ck_assert_float_eq(sum[NN_PLANE_OPP], 2);
    ck_assert_float_eq(sum[NN_PLANE_ONBOARD], 81);
    ck_assert_float_eq(sum[NN_PLANE_BLACK], 0);
    ck_assert_float_eq(sum[NN_PLANE_FORBIDDEN], 0);
    ck_assert_float_eq(in[NN_PLANE_OWN * hw + 8 * M + 0], 1);   /* white's stone at x0,y8 */
    ck_assert_float_eq(in[NN_PLANE_OPP * hw + 4 * M + 4], 1);
    ck_assert_float_eq(in[NN_PLANE_OPP * hw + 0 * M + 8], 1);
    ck_assert_float_eq(in[NN_PLANE_ONBOARD * hw + 8 * M + 8], 1);
    ck_assert_float_eq(in[NN_PLANE_ONBOARD * hw + 8 * M + 9], 0);   /* off the 9x9 board */
    ck_assert_float_eq(in[NN_PLANE_ONBOARD * hw + 9 * M + 0], 0);
    ck_assert_int_eq(nn_policy_index(board_xy(&b, 3, 5), 9, M), 5 * M + 3);
    ck_assert_int_eq(board_play(&b, board_xy(&b, 1, 1)), MOVE_OK);   /* white; black to move */
    nn_encode(&b, M, in);
    ck_assert_float_eq(in[NN_PLANE_OWN * hw + 4 * M + 4], 1);
    ck_assert_float_eq(in[NN_PLANE_OPP * hw + 1 * M + 1], 1);
    ck_assert_float_eq(in[NN_PLANE_BLACK * hw + 2 * M + 3], 1);
    ck_assert_float_eq(in[NN_PLANE_BLACK * hw + 2 * M + 10], 0);
    free(in);
}
END_TEST

/* Renju: the forbidden plane is exactly board_is_forbidden for black to
 * move, and empty when white is to move. Black (5,7),(6,7),(7,5),(7,6)
 * make (7,7) a double three. */
START_TEST(test_encode_renju)
{
    board_t b;
    board_init(&b, 15, RULE_RENJU);
    const int mv[][2] = {{5, 7}, {0, 0}, {6, 7}, {14, 0}, {7, 5}, {0, 14}, {7, 6}, {14, 14}};
    for (int i = 0; i < 8; i++)
        ck_assert_int_eq(board_play(&b, board_xy(&b, mv[i][0], mv[i][1])), MOVE_OK);
    int M = 15, hw = M * M;
    float *in = malloc(sizeof(float) * NN_PLANES * hw);
    nn_encode(&b, M, in);
    int nforb = 0;
    for (int q = 0; q < 225; q++) {
        bool f = board_is_forbidden(&b, q);
        nforb += f;
        ck_assert_float_eq(in[NN_PLANE_FORBIDDEN * hw + q], f ? 1.0f : 0.0f);
    }
    ck_assert_int_ge(nforb, 1);
    ck_assert(board_is_forbidden(&b, board_xy(&b, 7, 7)));
    ck_assert_float_eq(in[NN_PLANE_FORBIDDEN * hw + 7 * M + 7], 1);
    ck_assert_int_eq(board_play(&b, board_xy(&b, 3, 3)), MOVE_OK);   /* white to move */
    nn_encode(&b, M, in);
    for (int q = 0; q < hw; q++)
        ck_assert_float_eq(in[NN_PLANE_FORBIDDEN * hw + q], 0);
    free(in);
}
END_TEST

/* The threat level (0 five .. 4 three) at (x, y) for the side to move
 * (own) or the other side, -1 when none; asserts the planes are one-hot. */
static int threat_level_at(const float *in, int M, int x, int y, bool own)
{
    int hw = M * M, base = own ? NN_PLANE_THREAT_OWN : NN_PLANE_THREAT_OPP, lv = -1;
    for (int k = 0; k < NN_THREAT_LEVELS; k++)
        if (in[(base + k) * hw + y * M + x] > 0.5f) {
            ck_assert_msg(lv < 0, "two levels at %d,%d", x, y);
            lv = k;
        }
    return lv;
}

/* Play the first n (x, y) moves of mv, alternately from the side to move. */
static void play_list(board_t *b, const int (*mv)[2], int n)
{
    for (int i = 0; i < n; i++)
        ck_assert_int_eq(board_play(b, board_xy(b, mv[i][0], mv[i][1])), MOVE_OK);
}

/* Threat planes on hand-made positions: an open three's extension points
 * are open fours for its side, the gap of a four is a five, a point
 * beyond an open three's end makes a (closed) four; the other side's
 * planes hold the other side's; renju's forbidden points hold nothing for
 * black, and an overline is no five under standard. */
START_TEST(test_encode_threats)
{
    int M = 15, hw = M * M;
    ck_assert_int_eq(nn_feature_planes(NN_FEATURES_BASIC), NN_PLANES);
    ck_assert_int_eq(nn_feature_planes(NN_FEATURES_THREAT), NN_PLANES + 2 * NN_THREAT_LEVELS);
    float *in = malloc(sizeof(float) * NN_PLANES_MAX * hw);
    float *basic = malloc(sizeof(float) * NN_PLANES * hw);
    board_t b;
    board_init(&b, 15, RULE_FREESTYLE);
    /* black open three (5..7, 7); white far away; black to move */
    const int three[][2] = {{5, 7}, {0, 0}, {6, 7}, {0, 2}, {7, 7}, {0, 4}};
    play_list(&b, three, 6);
    nn_encode_features(&b, NN_FEATURES_THREAT, M, in);
    nn_encode(&b, M, basic);
    ck_assert_int_eq(memcmp(in, basic, sizeof(float) * NN_PLANES * hw), 0);
    ck_assert_int_eq(threat_level_at(in, M, 4, 7, true), 1);   /* open four */
    ck_assert_int_eq(threat_level_at(in, M, 8, 7, true), 1);
    ck_assert_int_eq(threat_level_at(in, M, 9, 7, true), 2);   /* BBB.B: a four */
    ck_assert_int_eq(threat_level_at(in, M, 3, 7, true), 2);
    ck_assert_int_eq(threat_level_at(in, M, 6, 9, true), -1);
    ck_assert_int_eq(threat_level_at(in, M, 5, 7, true), -1);  /* occupied */
    ck_assert_int_eq(threat_level_at(in, M, 4, 7, false), -1); /* white makes nothing there */
    /* white's stones at (0,0),(0,2),(0,4): (0,1) and (0,3) make a four
     * (one five point) in the opponent planes */
    ck_assert_int_eq(threat_level_at(in, M, 0, 1, false), 2);
    ck_assert_int_eq(threat_level_at(in, M, 0, 3, false), 2);
    /* black adds (3,7) (B.BBB on row 7), then white is to move: the planes
     * swap sides */
    const int more[][2] = {{3, 7}, {14, 14}, {12, 12}};
    play_list(&b, more, 3);
    nn_encode_features(&b, NN_FEATURES_THREAT, M, in);
    ck_assert_int_eq(threat_level_at(in, M, 4, 7, false), 0);   /* the gap: five */
    ck_assert_int_eq(threat_level_at(in, M, 8, 7, false), 1);   /* BBBB, two five points */
    ck_assert_int_eq(threat_level_at(in, M, 4, 7, true), -1);
    ck_assert_int_eq(threat_level_at(in, M, 0, 1, true), 2);

    /* standard: B.BBBB's gap makes six, no five; freestyle's is a five */
    const int six[][2] = {{2, 3}, {0, 14}, {4, 3}, {2, 14}, {5, 3}, {4, 14}, {6, 3}, {6, 14},
                          {7, 3}, {8, 14}};
    for (int rule = RULE_FREESTYLE; rule <= RULE_STANDARD; rule++) {
        board_init(&b, 15, (rule_t)rule);
        play_list(&b, six, 10);
        nn_encode_features(&b, NN_FEATURES_THREAT, M, in);
        ck_assert_int_eq(threat_level_at(in, M, 3, 3, true), rule == RULE_FREESTYLE ? 0 : -1);
        ck_assert_int_eq(threat_level_at(in, M, 8, 3, true), 0);   /* BBBB + (8,3): five */
    }

    /* renju: (7,7) is a double three for black: nothing in black's planes,
     * whoever is to move; white's planes are not touched by the rule */
    board_init(&b, 15, RULE_RENJU);
    const int dbl[][2] = {{5, 7}, {0, 0}, {6, 7}, {14, 0}, {7, 5}, {0, 14}, {7, 6}, {14, 14}};
    play_list(&b, dbl, 8);
    ck_assert(board_is_forbidden(&b, board_xy(&b, 7, 7)));
    nn_encode_features(&b, NN_FEATURES_THREAT, M, in);
    ck_assert_int_eq(threat_level_at(in, M, 7, 7, true), -1);
    ck_assert_float_eq(in[NN_PLANE_FORBIDDEN * hw + 7 * M + 7], 1);
    ck_assert_int_eq(threat_level_at(in, M, 4, 7, true), 3);   /* open three, not forbidden */
    ck_assert_int_eq(board_play(&b, board_xy(&b, 10, 12)), MOVE_OK);   /* white to move */
    nn_encode_features(&b, NN_FEATURES_THREAT, M, in);
    ck_assert_int_eq(threat_level_at(in, M, 7, 7, false), -1);
    ck_assert_int_eq(threat_level_at(in, M, 4, 7, false), 3);
    free(in);
    free(basic);
}
END_TEST

/* A position of n random moves near the centre of an s x s board. */
static void random_game(board_t *b, int s, rule_t rule, int n)
{
    board_init(b, s, rule);
    for (int tries = 0; b->nmoves < n && tries < 20 * n && !board_over(b); tries++) {
        int r = 2 + b->nmoves / 3, c = s / 2;
        int x = c - r + (int)(rnd() % (uint32_t)(2 * r + 1));
        int y = c - r + (int)(rnd() % (uint32_t)(2 * r + 1));
        if (x >= 0 && y >= 0 && x < s && y < s)
            board_play(b, board_xy(b, x, y));   /* refused moves are just skipped */
    }
}

/* Symmetry: encoding the transformed board gives the transformed planes,
 * for every plane of the threat set and all 8 symmetries, each rule. */
START_TEST(test_encode_threats_symmetry)
{
    rng_state = 77;
    int M = 15, hw = M * M, P = NN_PLANES_MAX;
    float *in = malloc(sizeof(float) * P * hw), *tin = malloc(sizeof(float) * P * hw);
    int lit = 0;
    for (int g = 0; g < 24; g++) {
        int s = g % 4 == 3 ? 11 : 15;
        board_t b, t;
        random_game(&b, s, (rule_t)(g % RULE_COUNT), 10 + (int)(rnd() % 40));
        nn_encode_features(&b, NN_FEATURES_THREAT, M, in);
        for (int q = 0; q < NN_THREAT_LEVELS * 2 * hw; q++)
            lit += in[NN_PLANES * hw + q] > 0.5f;
        for (int sym = 0; sym < SYM_COUNT; sym++) {
            board_transform(&t, &b, sym);
            nn_encode_features(&t, NN_FEATURES_THREAT, M, tin);
            for (int p = 0; p < P; p++)
                for (int m = 0; m < s * s; m++) {
                    int a = nn_policy_index(m, s, M);
                    int c = nn_policy_index(sym_point(sym, m, s), s, M);
                    ck_assert_msg(in[p * hw + a] == tin[p * hw + c],
                                  "game %d sym %d plane %d point %d", g, sym, p, m);
                }
        }
    }
    ck_assert_int_gt(lit, 100);   /* the positions do have threats */
    free(in);
    free(tin);
}
END_TEST

/* A threat-plane net: the fast path agrees with the reference on forward,
 * losses and gradients with 15 input planes from real encodings; it saves
 * as version 3 with its feature set, loads back, and an unknown feature
 * set in a file is a one-line error. */
START_TEST(test_threat_net)
{
    rng_state = 5;
    nn_config_t cfg;
    nn_config_default(&cfg, 2, 16, 9);
    cfg.features = NN_FEATURES_THREAT;
    char err[256];
    ck_assert_int_ne(nn_config_check(&cfg, err, sizeof err), 0);   /* in_planes still 5 */
    ck_assert_msg(strstr(err, "input planes 5") != NULL, "%s", err);
    cfg.in_planes = nn_feature_planes(cfg.features);
    nn_model_t *m = model_from_cfg(&cfg, 3, 0.05);
    int M = 9, hw = M * M, n = 6, ps = NN_PLANES_MAX * hw;
    float *in = malloc(sizeof(float) * n * ps), *pt = malloc(sizeof(float) * n * hw);
    float vt[6 * 3];
    for (int s = 0; s < n; s++) {
        board_t b;
        random_game(&b, s % 3 == 2 ? 7 : 9, (rule_t)(s % RULE_COUNT), 8 + s * 3);
        nn_encode_features(&b, NN_FEATURES_THREAT, M, in + s * ps);
        random_targets(in + s * ps, M, pt + s * hw, vt + 3 * s, false);
    }
    nn_net_t *fast = open_net(m, "cpu", n, 1);
    nn_net_t *ref = open_net(m, "cpu-ref", n, 1);
    compare_outputs(fast, in, ref, in, n, M, TOL_DIRECT, "");
    float *gf = malloc(sizeof(float) * m->nparams), *gr = malloc(sizeof(float) * m->nparams);
    nn_losses_t lf, lr;
    ck_assert_int_eq(nn_net_loss_grad(fast, in, pt, vt, n, 1e-4f, &lf, gf, err, sizeof err), 0);
    ck_assert_int_eq(nn_net_loss_grad(ref, in, pt, vt, n, 1e-4f, &lr, gr, err, sizeof err), 0);
    ck_assert(fabsf(lf.total - lr.total) <= 1e-4f * lr.total);
    nn_tensor_info_t ti = nn_param_tensor(&m->cfg, 0);
    ck_assert_str_eq(ti.name, "in_w");
    ck_assert_uint_eq(ti.count, 16 * NN_PLANES_MAX * 9);
    compare("in_w grad", gf + ti.offset, gr + ti.offset, ti.count, TOL_DIRECT);
    nn_net_free(fast);
    nn_net_free(ref);

    char path[300];
    snprintf(path, sizeof path, "%s/threat.gzm", tmpdir);
    ck_assert_int_eq(nn_file_version(&m->cfg), 3);
    ck_assert_int_eq(nn_model_save(m, path, err, sizeof err), 0);
    nn_model_t *b = nn_model_load(path, err, sizeof err);
    ck_assert_msg(b != NULL, "%s", err);
    ck_assert_int_eq(memcmp(&b->cfg, &m->cfg, sizeof m->cfg), 0);
    ck_assert_int_eq(memcmp(b->params, m->params, m->nparams * sizeof(float)), 0);
    nn_model_free(b);
    size_t len;
    unsigned char *buf = (unsigned char *)slurp_len(path, &len);
    ck_assert_uint_eq(buf[4], 3);
    ck_assert_uint_eq(buf[68], NN_FEATURES_THREAT);
    ck_assert_uint_eq(len, 72 + 4 * m->nparams + 4);
    expect_damage(buf, len, 68, 9, "unknown input feature set");
    expect_damage(buf, len, 68, 0, "dims out of range");   /* basic with 15 planes */
    expect_damage(buf, len, 4, NN_FILE_VERSION + 1, "unknown model file version");
    expect_damage(buf, 70, -1, 0, "truncated");
    free(buf);
    /* a basic model is still written as before (version 1) */
    cfg.features = NN_FEATURES_BASIC;
    cfg.in_planes = NN_PLANES;
    ck_assert_int_eq(nn_file_version(&cfg), 1);
    free(gf);
    free(gr);
    free(in);
    free(pt);
    nn_model_free(m);
}
END_TEST

/* n freestyle positions on M x M (random games of 10, 15, ... stones),
 * encoded with feature set f into in; with pt, random targets after all
 * the games (so the same rng state gives the same games either way). */
static void game_batch(int n, int M, int f, float *in, float *pt, float *vt)
{
    int hw = M * M, P = nn_feature_planes(f);
    for (int s = 0; s < n; s++) {
        board_t b;
        random_game(&b, M, RULE_FREESTYLE, 10 + s * 5);
        nn_encode_features(&b, f, M, in + s * P * hw);
    }
    for (int s = 0; pt && s < n; s++)
        random_targets(in + s * P * hw, M, pt + s * hw, vt + 3 * s, false);
}

/* Widening a basic net to the threat planes keeps what it computes on
 * every position (the new planes' filters are zero); it trains from there
 * (the new filters get gradient); narrowing is refused. */
START_TEST(test_widen_features)
{
    rng_state = 9;
    nn_config_t cfg;
    nn_config_default(&cfg, 2, 8, 9);
    char err[256];
    nn_model_t *m = model_from_cfg(&cfg, 4, 0.05);
    nn_model_t *w = nn_model_clone(m);
    ck_assert_int_eq(nn_model_widen_features(w, NN_FEATURES_BASIC, err, sizeof err), 0);
    ck_assert_uint_eq(w->nparams, m->nparams);
    ck_assert_int_eq(nn_model_widen_features(w, NN_FEATURES_THREAT, err, sizeof err), 0);
    ck_assert_int_eq(w->cfg.features, NN_FEATURES_THREAT);
    ck_assert_int_eq(w->cfg.in_planes, NN_PLANES_MAX);
    ck_assert_int_eq(nn_config_check(&w->cfg, err, sizeof err), 0);
    ck_assert_uint_eq(w->nparams, m->nparams + (size_t)8 * (NN_PLANES_MAX - NN_PLANES) * 9);
    int M = 9, hw = M * M, n = 4;
    float *bi = malloc(sizeof(float) * n * NN_PLANES * hw);
    float *ti = malloc(sizeof(float) * n * NN_PLANES_MAX * hw);
    float *pt = malloc(sizeof(float) * n * hw), vt[4 * 3];
    uint64_t games = rng_state;   /* the same games in both encodings */
    game_batch(n, M, NN_FEATURES_BASIC, bi, NULL, NULL);
    rng_state = games;
    game_batch(n, M, NN_FEATURES_THREAT, ti, pt, vt);
    nn_net_t *a = open_net(m, "cpu-ref", n, 1);
    nn_net_t *b = open_net(w, "cpu-ref", n, 1);
    compare_outputs(a, bi, b, ti, n, M, TOL_DIRECT, "");
    float *g = malloc(sizeof(float) * w->nparams);
    nn_losses_t l;
    ck_assert_int_eq(nn_net_loss_grad(b, ti, pt, vt, n, 1e-4f, &l, g, err, sizeof err), 0);
    double new_grad = 0;   /* gradient reaches the zero filters of the threat planes */
    for (size_t c = 0; c < 8; c++)
        for (size_t k = (size_t)NN_PLANES * 9; k < (size_t)NN_PLANES_MAX * 9; k++)
            new_grad += fabsf(g[c * NN_PLANES_MAX * 9 + k]);
    ck_assert(new_grad > 0);
    ck_assert_int_ne(nn_model_widen_features(w, NN_FEATURES_BASIC, err, sizeof err), 0);
    ck_assert_msg(strstr(err, "cannot narrow") != NULL, "%s", err);
    nn_net_free(a);
    nn_net_free(b);
    free(g);
    free(bi);
    free(ti);
    free(pt);
    nn_model_free(w);
    nn_model_free(m);
}
END_TEST

/* Mean to mean and max: the widened net computes what the old one did,
 * gradient reaches the new zero weights, it saves as version 4 and loads
 * back, grows keeping its pooling, and never narrows; a file with an
 * unknown pooling is refused in one line. */
START_TEST(test_widen_value_pool)
{
    rng_state = 12;
    nn_config_t cfg;
    nn_config_default(&cfg, 2, 8, 9);
    char err[256], path[300];
    nn_model_t *m = model_from_cfg(&cfg, 4, 0.05);
    nn_model_t *w = nn_model_clone(m);
    ck_assert_int_eq(nn_model_widen_value_pool(w, NN_POOL_MEAN, err, sizeof err), 0);
    ck_assert_uint_eq(w->nparams, m->nparams);
    ck_assert_int_eq(nn_model_widen_value_pool(w, NN_POOL_MEAN_MAX, err, sizeof err), 0);
    ck_assert_int_eq(w->cfg.value_pool, NN_POOL_MEAN_MAX);
    ck_assert_int_eq(nn_value_features(&w->cfg), 2 * cfg.value_head);
    ck_assert_uint_eq(w->nparams, m->nparams + (size_t)cfg.value_hidden * cfg.value_head);
    int M = 9, hw = M * M, n = 4;
    float *in = malloc(sizeof(float) * n * NN_PLANES * hw);
    float *pt = malloc(sizeof(float) * n * hw), vt[4 * 3];
    game_batch(n, M, NN_FEATURES_BASIC, in, pt, vt);
    nn_net_t *a = open_net(m, "cpu-ref", n, 1), *b = open_net(w, "cpu-ref", n, 1);
    nn_net_t *fb = open_net(w, "cpu", n, 1);
    compare_outputs(a, in, b, in, n, M, TOL_DIRECT, "");
    compare_outputs(fb, in, b, in, n, M, TOL_DIRECT, " (fast)");
    float *g = malloc(sizeof(float) * w->nparams);
    nn_losses_t l;
    ck_assert_int_eq(nn_net_loss_grad(b, in, pt, vt, n, 1e-4f, &l, g, err, sizeof err), 0);
    nn_layout_t L;
    nn_param_layout(&w->cfg, &L);
    double new_grad = 0;   /* the weights from the maxima, zero until now */
    for (int j = 0; j < cfg.value_hidden; j++)
        for (int k = cfg.value_head; k < 2 * cfg.value_head; k++) {
            ck_assert(w->params[L.val_fc1_w + (size_t)j * 2 * cfg.value_head + k] == 0.0f);
            new_grad += fabsf(g[L.val_fc1_w + (size_t)j * 2 * cfg.value_head + k]);
        }
    ck_assert(new_grad > 0);
    /* the file: version 4, read back the same */
    ck_assert_int_eq(nn_file_version(&w->cfg), 4);
    snprintf(path, sizeof path, "%s/max.gzm", tmpdir);
    ck_assert_int_eq(nn_model_save(w, path, err, sizeof err), 0);
    nn_model_t *r = nn_model_load(path, err, sizeof err);
    ck_assert_msg(r != NULL, "%s", err);
    ck_assert_int_eq(memcmp(&r->cfg, &w->cfg, sizeof w->cfg), 0);
    ck_assert_int_eq(memcmp(r->params, w->params, w->nparams * sizeof(float)), 0);
    /* growing keeps the pooling and what the net computes */
    nn_model_t *gr = nn_model_grow(w, 3, 12, 5, err, sizeof err);
    ck_assert_msg(gr != NULL, "%s", err);
    ck_assert_int_eq(gr->cfg.value_pool, NN_POOL_MEAN_MAX);
    nn_net_t *c = open_net(gr, "cpu-ref", n, 1);
    compare_outputs(b, in, c, in, n, M, TOL_DIRECT, " (grown)");
    ck_assert_int_ne(nn_model_widen_value_pool(r, NN_POOL_MEAN, err, sizeof err), 0);
    ck_assert_msg(strstr(err, "cannot change") != NULL, "%s", err);
    ck_assert_int_ne(nn_model_widen_value_pool(r, NN_POOL_COUNT, err, sizeof err), 0);
    /* an unknown pooling in the file */
    size_t len;
    unsigned char *bytes = (unsigned char *)slurp_len(path, &len);
    expect_damage(bytes, len, 72, 7, "unknown value pooling");
    free(bytes);
    nn_net_free(a);
    nn_net_free(b);
    nn_net_free(fb);
    nn_net_free(c);
    free(g);
    free(in);
    free(pt);
    nn_model_free(gr);
    nn_model_free(r);
    nn_model_free(w);
    nn_model_free(m);
}
END_TEST

/* Growing a net (more blocks, more channels, or both) keeps what it
 * computes on every position; gradient reaches the zero weights from the
 * new channels into the old ones and the new blocks' second convs; a net
 * never shrinks, and the new config is checked. */
START_TEST(test_grow)
{
    rng_state = 11;
    nn_config_t cfg;
    nn_config_default(&cfg, 2, 8, 9);
    cfg.features = NN_FEATURES_THREAT;
    cfg.in_planes = NN_PLANES_MAX;
    char err[256];
    nn_model_t *m = model_from_cfg(&cfg, 4, 0.05);
    m->step = 1234;
    int M = 9, hw = M * M, n = 4, P = NN_PLANES_MAX;
    float *in = malloc(sizeof(float) * n * P * hw);
    float *pt = malloc(sizeof(float) * n * hw), vt[4 * 3];
    game_batch(n, M, NN_FEATURES_THREAT, in, pt, vt);
    nn_net_t *a = open_net(m, "cpu-ref", n, 1);
    static const int shapes[][2] = {{2, 8}, {4, 8}, {2, 12}, {3, 16}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        int B = shapes[i][0], C = shapes[i][1];
        nn_model_t *g = nn_model_grow(m, B, C, 5, err, sizeof err);
        ck_assert_msg(g != NULL, "%d x %d: %s", B, C, err);
        ck_assert_int_eq(g->cfg.blocks, B);
        ck_assert_int_eq(g->cfg.channels, C);
        ck_assert_uint_eq(g->nparams, nn_param_count(&g->cfg));
        ck_assert_uint_eq(g->step, 1234);
        ck_assert_uint_eq(g->rule, m->rule);
        nn_net_t *b = open_net(g, "cpu-ref", n, 1);
        compare_outputs(a, in, b, in, n, M, TOL_DIRECT, "");
        float *gr = malloc(sizeof(float) * g->nparams);
        nn_losses_t l;
        ck_assert_int_eq(nn_net_loss_grad(b, in, pt, vt, n, 1e-4f, &l, gr, err, sizeof err), 0);
        nn_layout_t L;
        nn_param_layout(&g->cfg, &L);
        /* block 0's second conv, from the new hidden channels into the old
         * trunk channels; and the last block's second conv when it is new */
        double from_new = 0, new_block = 0;
        const float *w2 = gr + L.blocks + (size_t)C * C * 9 + C;
        for (int co = 0; co < 8; co++)
            for (int ci = 8; ci < C; ci++)
                for (int k = 0; k < 9; k++)
                    from_new += fabsf(w2[((size_t)co * C + ci) * 9 + k]);
        const float *w2last = w2 + (size_t)(B - 1) * L.block_stride;
        for (size_t k = 0; k < (size_t)C * C * 9; k++)
            new_block += fabsf(w2last[k]);
        ck_assert(C == 8 || from_new > 0);
        ck_assert(B == 2 || new_block > 0);
        free(gr);
        nn_net_free(b);
        nn_model_free(g);
    }
    ck_assert_ptr_null(nn_model_grow(m, 1, 8, 5, err, sizeof err));
    ck_assert_msg(strstr(err, "cannot shrink") != NULL, "%s", err);
    ck_assert_ptr_null(nn_model_grow(m, 2, 4, 5, err, sizeof err));
    ck_assert_msg(strstr(err, "cannot shrink") != NULL, "%s", err);
    ck_assert_ptr_null(nn_model_grow(m, 2, 100000, 5, err, sizeof err));
    ck_assert(err[0] != '\0' && !strchr(err, '\n'));
    nn_net_free(a);
    free(in);
    free(pt);
    nn_model_free(m);
}
END_TEST

/* A net sized for 15 playing a 9x9 board gives what the same weights
 * sized for 9 give; policy is 0 off the board and at illegal points. */
START_TEST(test_masking_board_sizes)
{
    rng_state = 31;
    nn_model_t *big = make_model(2, 16, 15, 0, 0, 0, 8, 0.05);
    nn_model_t *small = nn_model_clone(big);
    small->cfg.board_max = 9;   /* the parameters do not depend on M */
    ck_assert_uint_eq(nn_param_count(&small->cfg), big->nparams);
    board_t b;
    board_init(&b, 9, RULE_FREESTYLE);
    const int moves[][2] = {{4, 4}, {3, 3}, {5, 4}, {0, 0}, {8, 8}};
    for (int i = 0; i < 5; i++)
        board_play(&b, board_xy(&b, moves[i][0], moves[i][1]));
    const char *devs[] = {"cpu", "cpu-ref"};
    for (int d = 0; d < 2; d++) {
        nn_net_t *nb = open_net(big, devs[d], 2, 1);
        nn_net_t *ns = open_net(small, devs[d], 2, 1);
        float inb[NN_PLANES * 225], ins[NN_PLANES * 81], pb[225], ps[81], vb[3], vs[3];
        nn_encode(&b, 15, inb);
        nn_encode(&b, 9, ins);
        nn_net_forward(nb, inb, 1, pb, vb);
        nn_net_forward(ns, ins, 1, ps, vs);
        double sum = 0;
        for (int q = 0; q < 225; q++) {
            int x = q % 15, y = q / 15;
            if (x >= 9 || y >= 9) {
                ck_assert_float_eq(pb[q], 0);
                continue;
            }
            int m9 = y * 9 + x;
            ck_assert_msg(fabsf(pb[q] - ps[m9]) <= 1e-5f + 1e-4f * ps[m9], "%s point %d,%d: %g vs %g",
                          devs[d], x, y, pb[q], ps[m9]);
            if (b.cells[m9] != STONE_EMPTY)
                ck_assert_float_eq(pb[q], 0);
            else
                ck_assert(pb[q] > 0);
            sum += pb[q];
        }
        ck_assert(fabs(sum - 1) < 1e-5);
        for (int o = 0; o < 3; o++)
            ck_assert(fabsf(vb[o] - vs[o]) <= 1e-5f);
        ck_assert(fabs(vb[0] + vb[1] + vb[2] - 1) < 1e-5);
        nn_net_free(nb);
        nn_net_free(ns);
    }
    nn_model_free(big);
    nn_model_free(small);
}
END_TEST

/* A position with no legal point: zeros out, nothing NaN, losses finite. */
START_TEST(test_no_legal_point)
{
    rng_state = 3;
    int M = 5, hw = 25;
    nn_model_t *m = make_model(1, 8, M, 0, 0, 0, 2, 0.05);
    float in[2 * NN_PLANES * 25];
    random_position(in, M, M, 1.0);   /* every point occupied */
    random_position(in + NN_PLANES * 25, M, M, 0.2);
    float pt[50] = {0}, vt[6] = {0, 1, 0, 1, 0, 0}, pol[50], val[6];
    pt[25 + 3] = 1;
    in[NN_PLANES * 25 + NN_PLANE_OWN * hw + 3] = 0;
    in[NN_PLANES * 25 + NN_PLANE_OPP * hw + 3] = 0;
    in[NN_PLANES * 25 + NN_PLANE_FORBIDDEN * hw + 3] = 0;
    const char *devs[] = {"cpu", "cpu-ref"};
    for (int d = 0; d < 2; d++) {
        char err[256];
        nn_net_t *n = open_net(m, devs[d], 2, 2);
        nn_net_forward(n, in, 2, pol, val);
        for (int q = 0; q < hw; q++)
            ck_assert_float_eq(pol[q], 0);
        for (int o = 0; o < 6; o++)
            ck_assert(isfinite(val[o]));
        nn_losses_t l;
        float *g = malloc(sizeof(float) * m->nparams);
        ck_assert_int_eq(nn_net_loss_grad(n, in, pt, vt, 2, 0, &l, g, err, sizeof err), 0);
        ck_assert(isfinite(l.total) && l.policy > 0);
        for (size_t i = 0; i < m->nparams; i++)
            ck_assert(isfinite(g[i]));
        free(g);
        nn_net_free(n);
    }
    nn_model_free(m);
}
END_TEST

/* Resuming training: a second net given the first one's weights and
 * momentum takes the same next step (to the bit, same backend); n == 0
 * changes nothing. */
START_TEST(test_momentum_resume)
{
    rng_state = 77;
    int M = 7, n = 6;
    nn_model_t *m = make_model(1, 8, M, 0, 0, 0, 5, 0.05);
    batch_t d = random_batch(n, M, 0.3, false);
    size_t np = m->nparams;
    float *w = malloc(sizeof(float) * np), *mo = malloc(sizeof(float) * np);
    float *w2 = malloc(sizeof(float) * np), *mo2 = malloc(sizeof(float) * np);
    const char *devs[] = {"cpu", "cpu-ref"};
    for (int dv = 0; dv < 2; dv++) {
        char err[256];
        nn_net_t *a = open_net(m, devs[dv], n, 1);
        nn_net_t *b = open_net(m, devs[dv], n, 1);
        nn_net_get_momentum(a, mo);
        for (size_t i = 0; i < np; i++)
            ck_assert_float_eq(mo[i], 0);
        nn_train_opts_t o = {.lr = 0.05f, .momentum = 0.9f, .weight_decay = 1e-4f};
        nn_losses_t l = {.total = -1};
        /* n == 0: no step, zero losses, weights as they were */
        ck_assert_int_eq(nn_net_train_step(a, d.in, d.pt, d.vt, 0, &o, &l, err, sizeof err), 0);
        ck_assert_float_eq(l.total, 0);
        nn_net_get_weights(a, w);
        ck_assert(memcmp(w, m->params, np * sizeof(float)) == 0);
        nn_net_forward(a, d.in, 0, NULL, NULL);
        for (int k = 0; k < 2; k++)
            ck_assert_int_eq(nn_net_train_step(a, d.in, d.pt, d.vt, n, &o, &l, err, sizeof err), 0);
        nn_net_get_weights(a, w);
        nn_net_get_momentum(a, mo);
        double mnorm = 0;
        for (size_t i = 0; i < np; i++)
            mnorm += fabs(mo[i]);
        ck_assert_msg(mnorm > 0, "%s: momentum still zero after two steps", devs[dv]);
        nn_net_set_weights(b, w);
        nn_net_set_momentum(b, mo);
        nn_net_get_momentum(b, mo2);
        ck_assert(memcmp(mo, mo2, np * sizeof(float)) == 0);
        ck_assert_int_eq(nn_net_train_step(a, d.in, d.pt, d.vt, n, &o, &l, err, sizeof err), 0);
        ck_assert_int_eq(nn_net_train_step(b, d.in, d.pt, d.vt, n, &o, &l, err, sizeof err), 0);
        nn_net_get_weights(a, w);
        nn_net_get_weights(b, w2);
        ck_assert_msg(memcmp(w, w2, np * sizeof(float)) == 0, "%s: resumed step differs",
                      devs[dv]);
        /* without the momentum, the step is another one */
        nn_net_set_weights(b, w);
        nn_net_set_momentum(b, mo);
        memset(mo2, 0, np * sizeof(float));
        nn_net_set_weights(a, w);
        nn_net_set_momentum(a, mo2);
        ck_assert_int_eq(nn_net_train_step(a, d.in, d.pt, d.vt, n, &o, &l, err, sizeof err), 0);
        ck_assert_int_eq(nn_net_train_step(b, d.in, d.pt, d.vt, n, &o, &l, err, sizeof err), 0);
        nn_net_get_weights(a, w);
        nn_net_get_weights(b, w2);
        ck_assert(memcmp(w, w2, np * sizeof(float)) != 0);
        nn_net_free(a);
        nn_net_free(b);
    }
    free(w);
    free(w2);
    free(mo);
    free(mo2);
    free_batch(&d);
    nn_model_free(m);
}
END_TEST

/* The evaluator: rows by board point equal to the net's own forward pass
 * (a 9x9 board on a net for 11x11), value = P(win) - P(loss), batches
 * longer than max_batch cut up; the cache answers what the net valued,
 * tells rules apart, and forgets everything on clear. */
START_TEST(test_eval_and_cache)
{
    rng_state = 5;
    int M = 11;
    nn_model_t *m = make_model(1, 8, M, 0, 0, 0, 9, 0.05);
    char err[256];
    nn_net_t *net = open_net(m, "cpu", 4, 1);
    nn_eval_cache_t *c = nn_eval_cache_create(1 << 20, err, sizeof err);
    ck_assert(c != NULL);
    ck_assert_uint_gt(nn_eval_cache_entries(c), 100);
    ck_assert(nn_eval_create(net, c, 5, err, sizeof err) == NULL);   /* > the net's batch */
    ck_assert(strstr(err, "batch") != NULL);
    nn_eval_t *e = nn_eval_create(net, c, 2, err, sizeof err);
    ck_assert_msg(e != NULL, "%s", err);
    board_t bs[3];
    for (int i = 0; i < 3; i++) {
        board_init(&bs[i], 9, i == 2 ? RULE_STANDARD : RULE_FREESTYLE);
        board_play(&bs[i], board_xy(&bs[i], 4, 4));
        board_play(&bs[i], board_xy(&bs[i], i, 0));
    }
    const board_t *rows[3] = {&bs[0], &bs[1], &bs[2]};
    float pol[3 * BOARD_CELLS], val[3];
    float row[BOARD_CELLS], v;
    ck_assert(!nn_eval_probe(e, &bs[0], row, &v));
    nn_eval_eval(e, rows, 3, pol, val);
    ck_assert_uint_eq(nn_eval_calls(e), 2);   /* 3 rows, batches of 2 */
    ck_assert_uint_eq(nn_eval_evals(e), 3);
    float in[NN_PLANES * 121], np[121], nv[3];
    for (int i = 0; i < 3; i++) {
        nn_encode(&bs[i], M, in);
        nn_net_forward(net, in, 1, np, nv);
        ck_assert_float_eq_tol(val[i], nv[0] - nv[2], 1e-6f);
        for (int p = 0; p < 81; p++)
            ck_assert_float_eq_tol(pol[i * BOARD_CELLS + p], np[nn_policy_index(p, 9, M)], 1e-6f);
        ck_assert_float_eq(pol[i * BOARD_CELLS + board_xy(&bs[i], 4, 4)], 0);   /* occupied */
        /* the cache gives the same row back (16-bit priors) */
        ck_assert(nn_eval_probe(e, &bs[i], row, &v));
        ck_assert_float_eq(v, val[i]);
        for (int p = 0; p < 81; p++)
            ck_assert_float_eq_tol(row[p] / 65535.0f, pol[i * BOARD_CELLS + p], 1.0f / 65535);
    }
    ck_assert_uint_eq(nn_eval_cache_hits(c), 3);
    /* the net's own W/D/L (analysis): the forward's three, in batches of 2 */
    float wdl[9];
    nn_eval_wdl(e, rows, 3, wdl);
    ck_assert_uint_eq(nn_eval_calls(e), 4);
    for (int i = 0; i < 3; i++) {
        nn_encode(&bs[i], M, in);
        nn_net_forward(net, in, 1, np, nv);
        for (int k = 0; k < 3; k++)
            ck_assert_float_eq_tol(wdl[3 * i + k], nv[k], 1e-6f);
        ck_assert_float_eq_tol(wdl[3 * i] + wdl[3 * i + 1] + wdl[3 * i + 2], 1.0f, 1e-5f);
    }
    /* the same stones under another rule: a miss */
    board_t other = bs[0];
    other.rule = RULE_RENJU;
    ck_assert(!nn_eval_probe(e, &other, row, &v));
    nn_eval_cache_clear(c);
    ck_assert(!nn_eval_probe(e, &bs[0], row, &v));
    ck_assert_uint_eq(nn_eval_cache_lookups(c), 6);
    /* without a cache: never a hit */
    nn_eval_t *nc = nn_eval_create(net, NULL, 4, err, sizeof err);
    ck_assert(nc != NULL);
    nn_eval_eval(nc, rows, 1, pol, val);
    ck_assert(!nn_eval_probe(nc, &bs[0], row, &v));
    nn_eval_free(nc);
    nn_eval_free(e);
    nn_eval_cache_free(c);
    nn_eval_free(NULL);
    nn_eval_cache_free(NULL);
    nn_net_free(net);
    nn_model_free(m);
}
END_TEST

/* The evaluator's symmetries, on a threat-plane net of 11x11 with boards
 * of 9x9 and 11x11:
 *  - NN_SYM_ALL is equivariant: a transformed board's row is the board's
 *    row moved by the same symmetry, its value the same;
 *  - NN_SYM_ALL is the mean of the 8 plain evaluations of the transforms,
 *    each mapped back;
 *  - NN_SYM_ONE is one of those 8 mapped back, the same one every time
 *    for the same position, and not always the identity;
 *  - bad values and a net batch too small for 8 copies are refused. */
START_TEST(test_eval_symmetry)
{
    rng_state = 11;
    nn_config_t cfg;
    nn_config_default(&cfg, 1, 8, 11);
    cfg.features = NN_FEATURES_THREAT;
    cfg.in_planes = nn_feature_planes(cfg.features);
    nn_model_t *m = model_from_cfg(&cfg, 7, 0.3);
    char err[256];
    nn_net_t *net = open_net(m, "cpu", 16, 1);
    nn_eval_t *plain = nn_eval_create(net, NULL, 8, err, sizeof err);
    nn_eval_t *all = nn_eval_create(net, NULL, 2, err, sizeof err);
    nn_eval_t *one = nn_eval_create(net, NULL, 4, err, sizeof err);
    ck_assert(plain && all && one);
    ck_assert_int_eq(nn_eval_set_symmetry(plain, 3, err, sizeof err), -1);
    ck_assert(strstr(err, "symmetry 3") != NULL);
    ck_assert_int_eq(nn_eval_set_symmetry(plain, NN_SYM_ALL, err, sizeof err), -1);   /* 64 > 16 */
    ck_assert(strstr(err, "net batch") != NULL);
    ck_assert_int_eq(nn_eval_set_symmetry(all, NN_SYM_ALL, err, sizeof err), 0);
    ck_assert_int_eq(nn_eval_set_symmetry(one, NN_SYM_ONE, err, sizeof err), 0);
    int not_identity = 0;
    for (int g = 0; g < 12; g++) {
        int s = g % 2 ? 9 : 11, np = s * s;
        board_t b, t[SYM_COUNT];
        random_game(&b, s, (rule_t)(g % RULE_COUNT), 6 + (int)(rnd() % 20));
        const board_t *rows[SYM_COUNT];
        for (int k = 0; k < SYM_COUNT; k++) {
            board_transform(&t[k], &b, k);
            rows[k] = &t[k];
        }
        static float pp[SYM_COUNT * BOARD_CELLS], pa[SYM_COUNT * BOARD_CELLS];
        float vp[SYM_COUNT], va[SYM_COUNT], p1[2 * BOARD_CELLS], v1[2];
        nn_eval_eval(plain, rows, SYM_COUNT, pp, vp);
        nn_eval_eval(all, rows, SYM_COUNT, pa, va);   /* 4 calls of 2 boards, 16 rows each */
        ck_assert_uint_eq(nn_eval_evals(all), (uint64_t)(g + 1) * SYM_COUNT);
        const board_t *twice[2] = {&b, &b};
        nn_eval_eval(one, twice, 2, p1, v1);
        double mean_v = 0;
        for (int k = 0; k < SYM_COUNT; k++)
            mean_v += vp[k] / SYM_COUNT;
        int match = -1;
        for (int k = 0; k < SYM_COUNT; k++) {
            ck_assert_float_eq_tol(va[k], va[0], 1e-5f);
            bool same = fabsf(v1[0] - vp[k]) < 1e-6f;
            for (int p = 0; p < np; p++) {
                int q = sym_point(k, p, s);
                ck_assert_float_eq_tol(pa[k * BOARD_CELLS + q], pa[p], 1e-5f);
                double mean_p = 0;
                for (int j = 0; j < SYM_COUNT; j++)
                    mean_p += pp[j * BOARD_CELLS + sym_point(j, p, s)] / SYM_COUNT;
                ck_assert_float_eq_tol(pa[p], mean_p, 1e-5f);
                same = same && fabsf(p1[p] - pp[k * BOARD_CELLS + q]) < 1e-6f;
            }
            if (same && match < 0)
                match = k;
        }
        ck_assert_float_eq_tol(va[0], mean_v, 1e-5f);
        ck_assert_msg(match >= 0, "game %d: symmetry 1 is none of the 8", g);
        ck_assert_float_eq_tol(v1[0], v1[1], 1e-6f);   /* rows of a batch may round apart */
        for (int p = 0; p < np; p++)
            ck_assert_float_eq_tol(p1[p], p1[BOARD_CELLS + p], 1e-6f);
        not_identity += match != 0;
    }
    ck_assert_int_gt(not_identity, 0);
    nn_eval_free(plain);
    nn_eval_free(all);
    nn_eval_free(one);
    nn_net_free(net);
    nn_model_free(m);
}
END_TEST

/* A program loading several models says its device and why once; what
 * follows the device part (each net's precision) is said every time. */
START_TEST(test_device_note_once)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    ck_assert_ptr_nonnull(f);
    nn_note_print(f, "cuda unavailable: cudaErrorNoDevice; using cpu; precision bf16 (a)");
    nn_note_print(f, "cuda unavailable: cudaErrorNoDevice; using cpu; precision bf16 (b)");
    nn_note_print(f, "cuda unavailable: cudaErrorNoDevice; using cpu");
    nn_note_print(f, "using cuda:0");
    nn_note_print(f, "using cuda:0; precision fp16");
    nn_note_print(f, "precision fp32");
    fclose(f);
    ck_assert_str_eq(buf, "cuda unavailable: cudaErrorNoDevice; using cpu; precision bf16 (a)\n"
                          "precision bf16 (b)\n"
                          "using cuda:0\n"
                          "precision fp16\n"
                          "precision fp32\n");
    free(buf);
}
END_TEST

START_TEST(test_devices)
{
    nn_config_t cfg;
    nn_config_default(&cfg, 1, 4, 5);
    char err[256], note[256];
    nn_model_t *m = nn_model_create(&cfg, 1, err, sizeof err);
    nn_net_t *n = nn_net_create(m, "cpu", 4, 0, note, sizeof note, err, sizeof err);
    ck_assert(n && strcmp(nn_net_device_name(n), "cpu") == 0 && note[0] == '\0');
    nn_net_free(n);
    n = nn_net_create(m, "cpu-ref", 4, 0, note, sizeof note, err, sizeof err);
    ck_assert(n && strcmp(nn_net_device_name(n), "cpu-ref") == 0);
    nn_net_free(n);
    char why[200];
    bool cuda = nn_cuda_available(why, sizeof why);
    n = nn_net_create(m, "auto", 4, 0, note, sizeof note, err, sizeof err);
    ck_assert_msg(n != NULL, "%s", err);
    if (!cuda) {
        ck_assert_str_eq(nn_net_device_name(n), "cpu");
        char want[300];
        snprintf(want, sizeof want, "cuda unavailable: %s; using cpu", why);
        ck_assert_str_eq(note, want);
        nn_net_free(n);
        n = nn_net_create(m, "cuda", 4, 0, note, sizeof note, err, sizeof err);
        ck_assert_ptr_null(n);
        ck_assert_ptr_nonnull(strstr(err, why));
        ck_assert_ptr_null(nn_net_create(m, "cuda:1", 4, 0, note, sizeof note, err, sizeof err));
        ck_assert_ptr_nonnull(strstr(err, "cuda unavailable"));
    }
    nn_net_free(n);
    const char *bad[] = {"gpu", "cuda:", "cuda:x", "cuda:-1", "CPU", ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ck_assert_ptr_null(nn_net_create(m, bad[i], 4, 0, note, sizeof note, err, sizeof err));
        ck_assert_msg(strstr(err, "unknown device") && strstr(err, "cpu-ref") &&
                          strstr(err, "cuda:N"), "%s: %s", bad[i], err);
    }
    ck_assert_ptr_null(nn_net_create(m, "cpu", 0, 0, note, sizeof note, err, sizeof err));
    ck_assert_ptr_nonnull(strstr(err, "batch"));
    nn_model_free(m);
}
END_TEST

/* ---- bf16 forward ---- */

/* false (and a note on stdout) when this CPU cannot run the bf16 kernel:
 * the bf16 tests then check nothing but the fallback, and pass. */
static bool bf16_here(const char *test)
{
    char why[128];
    if (gemm_bf16_supported(why, sizeof why))
        return true;
    printf("%s: skipped: %s\n", test, why);
    return false;
}

/* The kernel alone: gemm_bf16_conv3 against a float64 3x3 conv of the
 * bf16-rounded weights and inputs (so only the fp32 accumulation order
 * differs), for odd input channels (the 5 input planes), output channels
 * that do not fill a row block of 8, boards 5..20 and several samples. */
START_TEST(test_bf16_conv_kernel)
{
    if (!bf16_here("test_bf16_conv_kernel"))
        return;
    static const int cases[][3] = {{5, 7, 4}, {9, 16, 2}, {15, 20, 3}, {20, 32, 1}, {12, 8, 5}};
    rng_state = 404;
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        int M = cases[k][0], C = cases[k][1], ns = cases[k][2], hw = M * M;
        nn_model_t *m = make_model(1, C, M, 0, 0, 0, 3, 0.5);
        nn_layout_t L;
        nn_param_layout(&m->cfg, &L);
        char err[256];
        gemm_bf16_t *g = gemm_bf16_create(&m->cfg, m->params, 2, ns, err, sizeof err);
        ck_assert_msg(g != NULL, "%s", err);
        size_t ld = (size_t)ns * hw;
        float *x = malloc(sizeof(float) * C * ld), *out = malloc(sizeof(float) * C * ld);
        for (int which = 0; which < 2; which++) {
            int cin = which ? C : NN_PLANES;
            size_t woff = which ? L.blocks : L.in_w;
            for (size_t i = 0; i < (size_t)cin * ld; i++)
                x[i] = (float)rnd_sym();
            gemm_bf16_conv3(g, 1, woff, cin, C, x, out, ns);
            const float *w = m->params + woff;
            double worst = 0;
            for (int co = 0; co < C; co++)
                for (int sm = 0; sm < ns; sm++)
                    for (int q = 0; q < hw; q++) {
                        int y = q / M, xx = q % M;
                        double acc = 0, mag = 0;
                        for (int ci = 0; ci < cin; ci++)
                            for (int t = 0; t < 9; t++) {
                                int yy = y + t / 3 - 1, x2 = xx + t % 3 - 1;
                                if (yy < 0 || yy >= M || x2 < 0 || x2 >= M)
                                    continue;
                                double a = gemm_bf16_round(w[(co * cin + ci) * 9 + t]) *
                                           (double)gemm_bf16_round(x[ci * ld + sm * hw + yy * M + x2]);
                                acc += a;
                                mag += fabs(a);
                            }
                        double d = fabs(acc - out[co * ld + sm * hw + q]);
                        ck_assert_msg(d <= 1e-5 * mag + 1e-30, "M %d C %d cin %d: out[%d][%d][%d] %g vs %g",
                                      M, C, cin, co, sm, q, out[co * ld + sm * hw + q], acc);
                        worst = fmax(worst, d / (mag + 1e-30));
                    }
            printf("bf16 conv M %2d cin %2d cout %2d: largest difference %.1e of sum |terms|\n",
                   M, cin, C, worst);
        }
        free(x);
        free(out);
        gemm_bf16_free(g);
        nn_model_free(m);
    }
    gemm_bf16_free(NULL);
    ck_assert(gemm_bf16_round(1.0f + 1.0f / 256) == 1.0f);             /* tie: to even */
    ck_assert(gemm_bf16_round(1.0f + 3.0f / 256) == 1.0f + 4.0f / 256);  /* tie: to even */
    ck_assert(gemm_bf16_round(1.0f + 1.0f / 200) == 1.0f + 1.0f / 128);
    ck_assert(isnan(gemm_bf16_round(NAN)) && isinf(gemm_bf16_round(INFINITY)));
}
END_TEST

/* Max |a - b| over n values. */
static double max_abs_diff(const float *a, const float *b, size_t n)
{
    double d = 0;
    for (size_t i = 0; i < n; i++)
        d = fmax(d, fabs((double)a[i] - b[i]));
    return d;
}

/* The stated tolerance: policy and value probabilities of the bf16
 * forward within BF16_TOL of the float64 reference (measured: 0.006-0.008
 * policy, 0.003 value on the shipped models; see README). */
#define BF16_TOL 0.02

/* Forward n positions on "cpu" in bf16 and on "cpu-ref"; checks the
 * tolerance, that bf16 did run (it differs from fp32 somewhere), and the
 * masks (0 at illegal points, sums of 1). Returns the largest policy
 * probability seen (how peaked the net is). */
static double bf16_vs_ref(const nn_model_t *m, const float *in, int n, int max_batch,
                          int threads, const char *what)
{
    int M = m->cfg.board_max, hw = M * M;
    char err[256];
    nn_net_t *b = open_net(m, "cpu", max_batch, threads);
    nn_net_t *f = open_net(m, "cpu", max_batch, threads);
    nn_net_t *r = open_net(m, "cpu-ref", max_batch, 1);
    ck_assert_int_eq(nn_net_set_precision(b, NN_PRECISION_BF16, NULL, 0, err, sizeof err), 0);
    ck_assert_str_eq(nn_net_precision_name(b), "bf16");
    ck_assert_str_eq(nn_net_precision_name(f), "fp32");
    size_t np = (size_t)n * hw;
    float *pb = malloc(sizeof(float) * np), *pf = malloc(sizeof(float) * np);
    float *pr = malloc(sizeof(float) * np), *vb = malloc(sizeof(float) * 3 * n);
    float *vf = malloc(sizeof(float) * 3 * n), *vr = malloc(sizeof(float) * 3 * n);
    for (int k = 0; k < n; k += max_batch) {   /* the whole set, max_batch at a time */
        int c = n - k < max_batch ? n - k : max_batch;
        nn_net_forward(b, in + (size_t)k * NN_PLANES * hw, c, pb + (size_t)k * hw, vb + 3 * k);
        nn_net_forward(f, in + (size_t)k * NN_PLANES * hw, c, pf + (size_t)k * hw, vf + 3 * k);
        nn_net_forward(r, in + (size_t)k * NN_PLANES * hw, c, pr + (size_t)k * hw, vr + 3 * k);
    }
    double dp = max_abs_diff(pb, pr, np), dv = max_abs_diff(vb, vr, 3 * (size_t)n);
    double df = fmax(max_abs_diff(pb, pf, np), max_abs_diff(vb, vf, 3 * (size_t)n));
    double peak = 0;
    for (int k = 0; k < n; k++) {
        const float *x = in + (size_t)k * NN_PLANES * hw;
        double sum = 0;
        for (int q = 0; q < hw; q++) {
            if (!legal_point(x, hw, q))
                ck_assert_msg(pb[k * hw + q] == 0, "%s: sample %d point %d illegal but %g", what,
                              k, q, pb[k * hw + q]);
            sum += pb[k * hw + q];
            peak = fmax(peak, pr[k * hw + q]);
        }
        ck_assert_msg(fabs(sum - 1) < 1e-4, "%s: sample %d policy sums to %g", what, k, sum);
    }
    printf("bf16 vs ref %-34s n %3d: policy %.4f value %.4f (largest p %.3f; bf16 vs fp32 %.4f)\n",
           what, n, dp, dv, peak, df);
    ck_assert_msg(dp <= BF16_TOL && dv <= BF16_TOL, "%s: bf16 policy diff %g value diff %g > %g",
                  what, dp, dv, BF16_TOL);
    ck_assert_msg(df > 0, "%s: bf16 output equals fp32 to the bit: bf16 did not run", what);
    free(pb);
    free(pf);
    free(pr);
    free(vb);
    free(vf);
    free(vr);
    nn_net_free(b);
    nn_net_free(f);
    nn_net_free(r);
    return peak;
}

/* Random nets, sharpened (policy and value logits x8) so the outputs are
 * peaked like a trained net's: boards 5..20 (and smaller boards inside
 * them), batches 1..13, 1 and 2 threads, channels that do not fill a row
 * block. */
START_TEST(test_bf16_vs_ref_random)
{
    if (!bf16_here("test_bf16_vs_ref_random"))
        return;
    /* blocks, channels, M, n, max_batch, threads */
    static const int cases[][6] = {
        {2, 16, 9, 5, 8, 1}, {2, 20, 15, 13, 13, 2}, {1, 32, 20, 3, 3, 2}, {0, 8, 5, 4, 4, 1},
        {3, 24, 11, 7, 4, 2}, {1, 16, 15, 1, 1, 1},
    };
    rng_state = 1616;
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const int *c = cases[k];
        int M = c[2], n = c[3], hw = M * M;
        nn_model_t *m = make_model(c[0], c[1], M, 0, 0, 0, 40 + k, 0.05);
        sharpen_model(m, 8);
        float *in = malloc(sizeof(float) * n * NN_PLANES * hw);
        for (int s = 0; s < n; s++)
            random_position(in + (size_t)s * NN_PLANES * hw, s % 3 == 1 && M > 5 ? M - 2 : M, M,
                            0.1 + 0.05 * (s % 4));
        char what[64];
        snprintf(what, sizeof what, "%dx%d M %d batch %d threads %d", c[0], c[1], M, c[4], c[5]);
        bf16_vs_ref(m, in, n, c[4], c[5], what);
        free(in);
        nn_model_free(m);
    }
}
END_TEST

/* The shipped trained models on positions of a game's density, at batch 1
 * and 16. */
START_TEST(test_bf16_vs_ref_models)
{
    if (!bf16_here("test_bf16_vs_ref_models"))
        return;
    const char *src = getenv("GOMOKU_SRC");
    static const char *const files[] = {"freestyle15-4x48.gzm", "freestyle9-2x32.gzm"};
    rng_state = 1717;
    for (int f = 0; f < 2; f++) {
        char path[1024], err[256];
        snprintf(path, sizeof path, "%s/models/%s", src ? src : ".", files[f]);
        nn_model_t *m = nn_model_load(path, err, sizeof err);
        ck_assert_msg(m != NULL, "%s", err);
        int M = m->cfg.board_max, hw = M * M, n = asan() ? 8 : 32;
        float *in = malloc(sizeof(float) * n * NN_PLANES * hw);
        for (int s = 0; s < n; s++)
            random_position(in + (size_t)s * NN_PLANES * hw, s % 4 == 3 ? M - 2 : M, M,
                            0.04 + 0.02 * (s % 8));
        for (int batch = 1; batch <= 16; batch += 15) {
            char what[64];
            snprintf(what, sizeof what, "%s batch %d", files[f], batch);
            double peak = bf16_vs_ref(m, in, n, batch, 2, what);
            ck_assert(peak > 0.5);   /* a trained net is sure somewhere: the check is not vacuous */
        }
        free(in);
        nn_model_free(m);
    }
}
END_TEST

/* The bf16 copy follows the fp32 weights: set_weights and train_step
 * (which stays fp32: the same losses to the bit as an fp32 net) are seen
 * by the next bf16 forward. */
START_TEST(test_bf16_weight_sync)
{
    if (!bf16_here("test_bf16_weight_sync"))
        return;
    rng_state = 1818;
    int M = 9, hw = 81, n = 6;
    nn_model_t *a = make_model(2, 16, M, 0, 0, 0, 7, 0.05);
    nn_model_t *b = make_model(2, 16, M, 0, 0, 0, 8, 0.05);
    batch_t d = random_batch(n, M, 0.2, false);
    char err[256];
    nn_net_t *nb = open_net(a, "cpu", n, 2);
    nn_net_t *nf = open_net(a, "cpu", n, 2);
    nn_net_t *rb = open_net(b, "cpu-ref", n, 1);
    ck_assert_int_eq(nn_net_set_precision(nb, NN_PRECISION_BF16, NULL, 0, err, sizeof err), 0);
    float p1[6 * 81], v1[18], p2[6 * 81], v2[18];
    nn_net_forward(nb, d.in, n, p1, v1);
    nn_net_set_weights(nb, b->params);
    nn_net_forward(nb, d.in, n, p2, v2);
    float pr[6 * 81], vr[18];
    nn_net_forward(rb, d.in, n, pr, vr);
    ck_assert(max_abs_diff(p1, p2, (size_t)n * hw) > 1e-3);   /* new weights took effect */
    ck_assert(max_abs_diff(p2, pr, (size_t)n * hw) <= BF16_TOL);
    ck_assert(max_abs_diff(v2, vr, 3 * (size_t)n) <= BF16_TOL);
    nn_net_set_weights(nf, b->params);
    nn_train_opts_t o = {.lr = 0.05f, .momentum = 0.9f, .weight_decay = 1e-4f};
    nn_losses_t lb, lf;
    for (int k = 0; k < 2; k++) {
        ck_assert_int_eq(nn_net_train_step(nb, d.in, d.pt, d.vt, n, &o, &lb, err, sizeof err), 0);
        ck_assert_int_eq(nn_net_train_step(nf, d.in, d.pt, d.vt, n, &o, &lf, err, sizeof err), 0);
        ck_assert(memcmp(&lb, &lf, sizeof lb) == 0);   /* training is fp32 */
    }
    float *w = malloc(sizeof(float) * b->nparams);
    nn_net_get_weights(nf, w);
    nn_net_set_weights(rb, w);
    nn_net_forward(rb, d.in, n, pr, vr);
    nn_net_forward(nb, d.in, n, p1, v1);
    ck_assert(max_abs_diff(p1, p2, (size_t)n * hw) > 1e-4);   /* trained weights took effect */
    ck_assert(max_abs_diff(p1, pr, (size_t)n * hw) <= BF16_TOL);
    ck_assert(max_abs_diff(v1, vr, 3 * (size_t)n) <= BF16_TOL);
    free(w);
    free_batch(&d);
    nn_net_free(nb);
    nn_net_free(nf);
    nn_net_free(rb);
    nn_model_free(a);
    nn_model_free(b);
}
END_TEST

/* The precision setting: names, bad strings, auto's speed rule (fp32 for
 * a 48-channel Winograd trunk on 15x15), auto's check (passes on a sane net, fails on one
 * whose logits bf16 cannot hold), backends that
 * choose their own, and the fp32 fallback on a CPU without bf16 (forced
 * here with gemm_bf16_pretend_unsupported): bf16 is refused with the
 * reason, auto falls back to fp32 and says why, and fp32 output is the
 * fp32 path's to the bit. */
START_TEST(test_bf16_precision_setting)
{
    char err[256], note[256];
    nn_precision_t p;
    ck_assert(nn_precision_parse("bf16", &p, err, sizeof err) == 0 && p == NN_PRECISION_BF16);
    ck_assert(nn_precision_parse("fp32", &p, err, sizeof err) == 0 && p == NN_PRECISION_FP32);
    ck_assert(nn_precision_parse("auto", &p, err, sizeof err) == 0 && p == NN_PRECISION_AUTO);
    const char *bad[] = {"BF16", "fp16", "", "bf16 ", "int8"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ck_assert_int_eq(nn_precision_parse(bad[i], &p, err, sizeof err), -1);
        ck_assert_msg(strstr(err, "unknown precision") && strstr(err, "fp32, bf16, auto"), "%s",
                      err);
    }
    ck_assert_int_eq(nn_precision_parse(NULL, &p, err, sizeof err), -1);

    rng_state = 1919;
    int M = 9, hw = 81;
    nn_model_t *m = make_model(2, 16, M, 0, 0, 0, 9, 0.05);
    float in[4 * NN_PLANES * 81], p1[4 * 81], v1[12], p2[4 * 81], v2[12];
    for (int s = 0; s < 4; s++)
        random_position(in + s * NN_PLANES * hw, M, M, 0.2);
    nn_net_t *ref = nn_net_create(m, "cpu-ref", 4, 1, NULL, 0, err, sizeof err);
    ck_assert_int_eq(nn_net_set_precision(ref, NN_PRECISION_BF16, note, sizeof note, err,
                                          sizeof err), 0);
    ck_assert_str_eq(note, "cpu-ref's own (bf16 asked for: cpu-ref chooses)");
    ck_assert_int_eq(nn_net_set_precision(ref, NN_PRECISION_AUTO, note, sizeof note, err,
                                          sizeof err), 0);
    ck_assert_str_eq(note, "cpu-ref's own (auto asked for: cpu-ref chooses)");
    ck_assert_str_eq(nn_net_precision_name(ref), "device");
    nn_net_free(ref);

    nn_net_t *n = open_net(m, "cpu", 4, 2);
    nn_net_t *f = open_net(m, "cpu", 4, 2);
    nn_net_forward(f, in, 4, p2, v2);
    if (gemm_bf16_supported(NULL, 0)) {
        /* 2x16 on 9x9: bf16 is the faster path here, and passes its check */
        ck_assert_int_eq(nn_net_set_precision(n, NN_PRECISION_AUTO, note, sizeof note, err,
                                              sizeof err), 0);
        ck_assert_msg(strncmp(note, "bf16 (bf16 accuracy check: policy ", 34) == 0, "%s", note);
        ck_assert_str_eq(nn_net_precision_name(n), "bf16");
        /* 48 channels: fp32 is faster on 15x15 (AVX-512 comes with AVX-512
         * BF16), so auto keeps fp32 though bf16 passes; not on 9x9 (a third
         * of each tile off the board), nor with direct convs */
        const struct { int M; const char *conv, *want; } cases[] = {
            {15, "auto", "fp32 (faster than bf16 for this net here, Winograd trunk; bf16 "},
            {9, "auto", "bf16 (bf16 accuracy check: "},
            {15, "direct", "bf16 (bf16 accuracy check: "}};
        for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
            nn_model_t *m48 = make_model(1, 48, cases[k].M, 0, 0, 0, 11, 0.05);
            ck_assert_int_eq(setenv("GOMOKU_CONV", cases[k].conv, 1), 0);
            nn_net_t *d = nn_net_create(m48, "cpu", 4, 2, NULL, 0, err, sizeof err);
            unsetenv("GOMOKU_CONV");
            ck_assert(d != NULL);
            ck_assert_int_eq(nn_net_set_precision(d, NN_PRECISION_AUTO, note, sizeof note, err,
                                                  sizeof err), 0);
            ck_assert_msg(strncmp(note, cases[k].want, strlen(cases[k].want)) == 0,
                          "M %d conv %s: %s", cases[k].M, cases[k].conv, note);
            nn_net_free(d);
            nn_model_free(m48);
        }
        /* A net bf16 cannot hold: channel 0 = relu((1 + 2^-9) * (own stone to the
         * right) - 1), 2^-9 in fp32 but 0 in bf16 (1 + 2^-9 rounds to 1), and the
         * policy logit is 4096 x channel 0: +8 next to own stones, or not. */
        nn_model_t *wild = make_model(0, 8, M, 0, 0, 0, 10, 0.0);
        nn_layout_t L;
        nn_param_layout(&wild->cfg, &L);
        memset(wild->params, 0, sizeof(float) * wild->nparams);
        wild->params[L.in_w + NN_PLANE_OWN * 9 + 5] = 1.0f + 1.0f / 512;
        wild->params[L.in_b] = -1.0f;
        wild->params[L.pol_w1] = 4096.0f;
        wild->params[L.pol_w2] = 1.0f;
        nn_net_t *w = nn_net_create(wild, "cpu", 4, 1, NULL, 0, err, sizeof err);
        double dp, dv;
        ck_assert_int_eq(nn_net_precision_check(w, &dp, &dv, err, sizeof err), 0);
        ck_assert_msg(dp > NN_BF16_AUTO_TOLERANCE, "policy diff %g", dp);
        ck_assert_str_eq(nn_net_precision_name(w), "fp32");   /* the check leaves it as it was */
        ck_assert_int_eq(nn_net_set_precision(w, NN_PRECISION_AUTO, note, sizeof note, err,
                                              sizeof err), 0);
        ck_assert_msg(strncmp(note, "fp32 (bf16 accuracy check: policy ", 34) == 0 &&
                          strstr(note, "over the limit"), "%s", note);
        ck_assert_str_eq(nn_net_precision_name(w), "fp32");
        nn_net_free(w);
        nn_model_free(wild);
    }
    /* a CPU without bf16 */
    gemm_bf16_pretend_unsupported(true);
    ck_assert_int_eq(nn_net_set_precision(n, NN_PRECISION_BF16, note, sizeof note, err,
                                          sizeof err), -1);
    ck_assert_msg(strstr(err, "bf16") != NULL, "%s", err);
    ck_assert_str_eq(nn_net_precision_name(n), "fp32");
    ck_assert_int_eq(nn_net_set_precision(n, NN_PRECISION_AUTO, note, sizeof note, err,
                                          sizeof err), 0);
    ck_assert_str_eq(note, "fp32 (bf16: bf16 disabled for a test)");
    ck_assert_str_eq(nn_net_precision_name(n), "fp32");
    nn_net_forward(n, in, 4, p1, v1);
    ck_assert(memcmp(p1, p2, sizeof p1) == 0 && memcmp(v1, v2, sizeof v1) == 0);
    gemm_bf16_pretend_unsupported(false);
    ck_assert_int_eq(nn_net_set_precision(n, NN_PRECISION_FP32, note, sizeof note, err,
                                          sizeof err), 0);
    ck_assert_str_eq(note, "");
    nn_net_forward(n, in, 4, p1, v1);
    ck_assert(memcmp(p1, p2, sizeof p1) == 0 && memcmp(v1, v2, sizeof v1) == 0);
    nn_net_free(n);
    nn_net_free(f);
    nn_model_free(m);
}
END_TEST

START_TEST(test_schedule)
{
    nn_schedule_t s = {.lr = 0.1f, .final_frac = 0.01f, .warmup_steps = 10, .total_steps = 110};
    ck_assert(fabsf(nn_schedule_lr(&s, 0) - 0.01f) < 1e-7f);
    ck_assert(fabsf(nn_schedule_lr(&s, 9) - 0.1f) < 1e-7f);
    ck_assert(fabsf(nn_schedule_lr(&s, 10) - 0.1f) < 1e-7f);
    ck_assert(fabsf(nn_schedule_lr(&s, 60) - 0.1f * (0.01f + 0.99f * 0.5f)) < 1e-6f);
    ck_assert(fabsf(nn_schedule_lr(&s, 110) - 0.001f) < 1e-7f);
    ck_assert(fabsf(nn_schedule_lr(&s, 1000000) - 0.001f) < 1e-7f);
    float prev = 1;
    for (uint64_t t = 10; t <= 110; t++) {
        float lr = nn_schedule_lr(&s, t);
        ck_assert(lr <= prev + 1e-9f);
        prev = lr;
    }
    s.total_steps = 0;
    ck_assert(fabsf(nn_schedule_lr(&s, 5000) - 0.1f) < 1e-7f);
    s.warmup_steps = 0;
    ck_assert(fabsf(nn_schedule_lr(&s, 0) - 0.1f) < 1e-7f);
}
END_TEST

/* The output transform's epilogue (the pixel-major trunk's bias, residual,
 * ReLU and mask) equals the plain transform followed by those steps, bit
 * for bit: full and ragged channel blocks, with and without a residual,
 * off-board pixels, and a NaN that must come out as 0. */
START_TEST(test_wino_output_epilogue)
{
    const int cases[][3] = {{15, 2, 32}, {15, 1, 20}, {5, 3, 7}, {20, 1, 16}};   /* M, ns, ch */
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        int M = cases[k][0], ns = cases[k][1], ch = cases[k][2], hw = M * M;
        size_t px = (size_t)ns * hw, nm = WINO_FREQS * wino_fstride(wino_tiles(M, ns), ch);
        float *m = malloc(sizeof(float) * nm), *plain = malloc(sizeof(float) * px * ch);
        float *res = malloc(sizeof(float) * px * ch), *out = malloc(sizeof(float) * px * ch);
        float *bias = malloc(sizeof(float) * ch), *mask = malloc(sizeof(float) * px);
        ck_assert(m && plain && res && out && bias && mask);
        for (size_t i = 0; i < nm; i++)
            m[i] = (float)rnd_sym();
        for (size_t i = 0; i < px * ch; i++)
            res[i] = (float)rnd_sym();
        for (int c = 0; c < ch; c++)
            bias[c] = (float)(0.5 * rnd_sym());
        for (size_t r = 0; r < px; r++)
            mask[r] = (r % 7 == 3) ? 0.0f : 1.0f;
        res[5 * ch + 1] = NAN;
        wino_output(m, ch, M, ns, NULL, plain);
        for (int with_res = 0; with_res < 2; with_res++) {
            wino_epilogue_t ep = {bias, with_res ? res : NULL, mask};
            wino_output(m, ch, M, ns, &ep, out);
            for (size_t r = 0; r < px; r++)
                for (int c = 0; c < ch; c++) {
                    float t = plain[r * ch + c] + bias[c] + (with_res ? res[r * ch + c] : 0.0f);
                    float want = t > 0.0f ? t * mask[r] : 0.0f;
                    ck_assert_msg(memcmp(&want, &out[r * ch + c], sizeof want) == 0,
                                  "M %d ch %d res %d pixel %zu channel %d: %g, want %g", M, ch,
                                  with_res, r, c, out[r * ch + c], want);
                }
        }
        ck_assert(out[5 * ch + 1] == 0.0f);   /* the NaN, through the residual run */
        free(m), free(plain), free(res), free(out), free(bias), free(mask);
    }
}
END_TEST

/* ---- the pattern net (nn/patnet.h) ---- */

/* The file's layout (version 4), as patnet.h gives it: offsets of each
 * part among the parameters, the header and the whole file's bytes.
 * Version 3 is the same without Uz (PN_V3_BYTES), version 2 without U
 * either (PN_V2_BYTES). */
enum { PN_D = PATNET_D, PN_H = PATNET_H };
#define PN_HEADER 28
#define PN_B0 ((size_t)PATNET_STORED_ROWS * PN_D)
#define PN_W1 (PN_B0 + PN_D)
#define PN_B1 (PN_W1 + PN_D * PN_D)
#define PN_WP (PN_B1 + PN_D)
#define PN_BP (PN_WP + PN_D)
#define PN_V1 (PN_BP + 1)
#define PN_C1 (PN_V1 + PN_H * 2 * PN_D)
#define PN_V2 (PN_C1 + PN_H)
#define PN_C2 (PN_V2 + PN_H)
#define PN_U (PN_C2 + 1)
#define PN_UZ (PN_U + 2 * PN_D * PN_D)
#define PN_NPARAMS (PN_UZ + PN_D * PN_H)
#define PN_BYTES (PN_HEADER + 4 * PN_NPARAMS + 4)
#define PN_V3_BYTES (PN_HEADER + 4 * PN_UZ + 4)
#define PN_V2_BYTES (PN_HEADER + 4 * PN_U + 4)

static uint32_t get_le32(const unsigned char *b)
{
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

static void put_le32(unsigned char *b, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        b[i] = (unsigned char)(v >> (8 * i));
}

static float pn_param(const unsigned char *buf, size_t i)
{
    uint32_t u = get_le32(buf + PN_HEADER + 4 * i);
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* Parameter i of the file image buf set to v, its CRC made right again. */
static void pn_set_param(unsigned char *buf, size_t i, float v)
{
    uint32_t u;
    memcpy(&u, &v, 4);
    put_le32(buf + PN_HEADER + 4 * i, u);
    put_le32(buf + PN_BYTES - 4, (uint32_t)crc32(0L, buf, (uInt)(PN_BYTES - 4)));
}

/* pn saved under tmpdir and read back: the file's bytes (PN_BYTES, malloc'd). */
static unsigned char *pn_bytes(const patnet_t *pn)
{
    char path[300], err[512];
    snprintf(path, sizeof path, "%s/bytes.gzp", tmpdir);
    ck_assert_msg(patnet_save(pn, path, err, sizeof err) == 0, "%s", err);
    size_t len;
    unsigned char *buf = (unsigned char *)slurp_len(path, &len);
    ck_assert_ptr_nonnull(buf);
    ck_assert_uint_eq(len, PN_BYTES);
    return buf;
}

/* The net whose file is buf (PN_BYTES); fails the test when it does not load. */
static patnet_t *pn_from_bytes(const unsigned char *buf)
{
    char path[300], err[512];
    snprintf(path, sizeof path, "%s/from.gzp", tmpdir);
    write_file(path, buf, PN_BYTES, "wb");
    patnet_t *pn = patnet_load(path, err, sizeof err);
    ck_assert_msg(pn != NULL, "%s", err);
    return pn;
}

/* pn (freed) with U drawn at random in [-scale, scale): a net whose
 * policy reads the pool, as one trained from U = 0 becomes. */
static patnet_t *pn_with_u(patnet_t *pn, float scale)
{
    unsigned char *buf = pn_bytes(pn);
    for (size_t i = PN_U; i < PN_NPARAMS; i++)
        pn_set_param(buf, i, (float)(scale * rnd_sym()));
    patnet_t *q = pn_from_bytes(buf);
    free(buf);
    patnet_free(pn);
    return q;
}

static bool pn_legal(const board_t *b, int p)
{
    return b->cells[p] == STONE_EMPTY && !board_is_forbidden(b, p);
}

/* Random targets for b: a policy over its legal points (BOARD_CELLS, sums
 * to 1; a few points get most of it, as a teacher's would) and a value in
 * [-0.9, 0.9). Returns the policy's entropy, the floor under its loss. */
static double pn_targets(const board_t *b, float *policy, float *value)
{
    memset(policy, 0, BOARD_CELLS * sizeof *policy);
    double s = 0, h = 0;
    for (int p = 0; p < board_npoints(b); p++)
        if (pn_legal(b, p))
            s += policy[p] = (float)pow(rnd_unit(), 8);
    for (int p = 0; p < board_npoints(b); p++) {
        policy[p] = (float)(policy[p] / s);
        h -= policy[p] > 0 ? policy[p] * log(policy[p]) : 0;
    }
    *value = (float)(0.9 * rnd_sym());
    return h;
}

static double pn_loss(const patnet_t *pn, const board_t *b, const float *policy, float value)
{
    double lp = 0, lv = 0;
    patnet_loss(pn, b, policy, value, &lp, &lv);
    return lp + lv;
}

/* A thread's context (patnet_ctx_eval) answers bit for bit as patnet_eval
 * does, over many positions in batches (its table of points fills and
 * evicts), the first ones again at the end; and as the training forward
 * does: the loss of its answer is patnet_loss's. Policies sum to 1 over
 * the legal points and are 0 elsewhere. */
START_TEST(test_patnet_ctx)
{
    rng_state = 33;
    for (int r = 0; r < 2; r++) {
        rule_t rule = r ? RULE_RENJU : RULE_FREESTYLE;
        patnet_t *pn = patnet_create(rule, 40 + (uint64_t)r);
        if (r)
            pn = pn_with_u(pn, 0.3f);   /* the pool's policy too */
        patnet_ctx_t *ctx = patnet_ctx_create(pn);
        ck_assert_ptr_nonnull(pn);
        ck_assert_ptr_nonnull(ctx);
        enum { N = 240, B = 7 };
        static board_t b[N];
        const board_t *rows[N + B];
        for (int i = 0; i < N; i++) {
            random_game(&b[i], i % 5 == 4 ? 9 : 15, rule, 4 + (int)(rnd() % 70));
            rows[i] = &b[i];
        }
        for (int i = 0; i < B; i++)
            rows[N + i] = &b[i];
        static float p1[B * BOARD_CELLS], p2[B * BOARD_CELLS], pol[BOARD_CELLS];
        float v1[B], v2[B];
        for (int at = 0; at < N + B; at += B) {
            int n = at + B <= N + B ? B : N + B - at;
            patnet_ctx_eval(ctx, rows + at, n, p1, v1);
            patnet_eval(pn, rows + at, n, p2, v2);
            ck_assert_int_eq(memcmp(p1, p2, (size_t)n * BOARD_CELLS * sizeof *p1), 0);
            ck_assert_int_eq(memcmp(v1, v2, (size_t)n * sizeof *v1), 0);
            for (int i = 0; i < n; i++) {
                const board_t *bi = rows[at + i];
                const float *row = p1 + (size_t)i * BOARD_CELLS;
                double sum = 0;
                for (int q = 0; q < BOARD_CELLS; q++) {
                    if (q >= board_npoints(bi) || !pn_legal(bi, q))
                        ck_assert_float_eq(row[q], 0.0f);
                    sum += row[q];
                }
                ck_assert_double_eq_tol(sum, 1.0, 1e-5);
                float v;
                pn_targets(bi, pol, &v);
                double ce = 0;
                for (int q = 0; q < BOARD_CELLS; q++)
                    if (pol[q] > 0)
                        ce -= pol[q] * log(row[q] > 1e-30f ? row[q] : 1e-30f);
                double want = ce + (v1[i] - v) * (v1[i] - v);
                ck_assert_double_eq_tol(pn_loss(pn, bi, pol, v), want, 1e-9 + 1e-6 * want);
            }
        }
        patnet_ctx_free(ctx);
        patnet_free(pn);
    }
    patnet_ctx_free(NULL);
}
END_TEST

/* An ensemble's evaluator (patnet_ens_eval): of one net, bit for bit its
 * context's answers; of a net twice, the same; of two nets, the mean of
 * their answers (priors still summing to 1, 0 where either is 0); of four,
 * the mean of four. No nets, or more than PATNET_ENSEMBLE_MAX, make none. */
START_TEST(test_patnet_ensemble)
{
    rng_state = 35;
    patnet_t *a = patnet_create(RULE_FREESTYLE, 50);
    patnet_t *b = pn_with_u(patnet_create(RULE_FREESTYLE, 51), 0.3f);
    ck_assert(a && b);
    enum { N = 40, B = 5 };
    static board_t bd[N];
    const board_t *rows[N];
    for (int i = 0; i < N; i++) {
        random_game(&bd[i], i % 4 == 3 ? 9 : 15, RULE_FREESTYLE, 4 + (int)(rnd() % 60));
        rows[i] = &bd[i];
    }
    const patnet_t *one[] = {a}, *twice[] = {a, a}, *two[] = {a, b}, *four[] = {a, b, b, a};
    patnet_ens_t *e1 = patnet_ens_create(one, 1), *e11 = patnet_ens_create(twice, 2);
    patnet_ens_t *e2 = patnet_ens_create(two, 2), *e4 = patnet_ens_create(four, 4);
    ck_assert(e1 && e11 && e2 && e4);
    static float pa[B * BOARD_CELLS], pb[B * BOARD_CELLS], pe[B * BOARD_CELLS];
    float va[B], vb[B], ve[B];
    for (int at = 0; at < N; at += B) {
        patnet_eval(a, rows + at, B, pa, va);
        patnet_eval(b, rows + at, B, pb, vb);
        patnet_ens_eval(e1, rows + at, B, pe, ve);
        ck_assert_int_eq(memcmp(pe, pa, sizeof pe), 0);
        ck_assert_int_eq(memcmp(ve, va, sizeof ve), 0);
        patnet_ens_eval(e11, rows + at, B, pe, ve);
        ck_assert_int_eq(memcmp(pe, pa, sizeof pe), 0);
        ck_assert_int_eq(memcmp(ve, va, sizeof ve), 0);
        for (int k = 0; k < 2; k++) {
            patnet_ens_eval(k ? e4 : e2, rows + at, B, pe, ve);
            for (int i = 0; i < B; i++) {
                ck_assert_float_eq_tol(ve[i], 0.5f * (va[i] + vb[i]), 1e-6f);
                double sum = 0;
                for (int q = 0; q < BOARD_CELLS; q++) {
                    size_t j = (size_t)i * BOARD_CELLS + (size_t)q;
                    ck_assert_float_eq_tol(pe[j], 0.5f * (pa[j] + pb[j]), 1e-6f);
                    if (pa[j] == 0.0f)
                        ck_assert_float_eq(pe[j], 0.0f);
                    sum += pe[j];
                }
                ck_assert_double_eq_tol(sum, 1.0, 1e-5);
            }
        }
    }
    const patnet_t *five[] = {a, a, a, a, a};
    ck_assert_ptr_null(patnet_ens_create(five, 0));
    ck_assert_ptr_null(patnet_ens_create(five, PATNET_ENSEMBLE_MAX + 1));
    patnet_ens_free(e1);
    patnet_ens_free(e11);
    patnet_ens_free(e2);
    patnet_ens_free(e4);
    patnet_ens_free(NULL);
    patnet_free(a);
    patnet_free(b);
}
END_TEST

/* Saved and loaded, a net evaluates bit for bit as it did, with its rule
 * and training step (all 64 bits); saved again it is the same bytes; a
 * save where no file can be made says so. */
START_TEST(test_patnet_save_load)
{
    rng_state = 21;
    patnet_t *pn = patnet_create(RULE_RENJU, 5);
    ck_assert_ptr_nonnull(pn);
    ck_assert_int_eq(patnet_rule(pn), RULE_RENJU);
    ck_assert_uint_eq(patnet_step(pn), 0);
    enum { N = 4 };
    board_t b[N];
    const board_t *rows[N];
    for (int i = 0; i < N; i++) {
        random_game(&b[i], i == N - 1 ? 9 : 15, RULE_RENJU, 6 + 8 * i);
        rows[i] = &b[i];
    }
    /* three steps of training: a step count, weights moved off their start */
    patnet_trainer_t *tr = patnet_trainer_create(pn, 0.01f);
    ck_assert_ptr_nonnull(tr);
    static float pol[BOARD_CELLS], p1[N * BOARD_CELLS], p2[N * BOARD_CELLS];
    for (int s = 0; s < 3; s++)
        for (int i = 0; i < N; i++) {
            float v;
            double lp = 0, lv = 0;
            pn_targets(&b[i], pol, &v);
            patnet_trainer_add(tr, &b[i], pol, v, &lp, &lv);
            if (i == N - 1)
                patnet_trainer_step(tr);
        }
    patnet_trainer_free(tr);
    ck_assert_uint_eq(patnet_step(pn), 3);
    char path[300], path2[300], err[512];
    snprintf(path, sizeof path, "%s/a.gzp", tmpdir);
    ck_assert_msg(patnet_save(pn, path, err, sizeof err) == 0, "%s", err);
    patnet_t *back = patnet_load(path, err, sizeof err);
    ck_assert_msg(back != NULL, "%s", err);
    ck_assert_int_eq(patnet_rule(back), RULE_RENJU);
    ck_assert_uint_eq(patnet_step(back), 3);
    float v1[N], v2[N];
    patnet_eval(pn, rows, N, p1, v1);
    patnet_eval(back, rows, N, p2, v2);
    ck_assert_int_eq(memcmp(p1, p2, sizeof p1), 0);
    ck_assert_int_eq(memcmp(v1, v2, sizeof v1), 0);
    /* the comparison can fail: another seed's net answers otherwise */
    patnet_t *other = patnet_create(RULE_RENJU, 6);
    patnet_eval(other, rows, N, p2, v2);
    ck_assert_int_ne(memcmp(p1, p2, sizeof p1), 0);
    ck_assert_int_ne(memcmp(v1, v2, sizeof v1), 0);
    patnet_free(other);
    /* saved again: the same bytes, as long as patnet.h says */
    snprintf(path2, sizeof path2, "%s/b.gzp", tmpdir);
    ck_assert_msg(patnet_save(back, path2, err, sizeof err) == 0, "%s", err);
    size_t la, lb;
    unsigned char *a = (unsigned char *)slurp_len(path, &la);
    unsigned char *bb = (unsigned char *)slurp_len(path2, &lb);
    ck_assert_uint_eq(la, PN_BYTES);
    ck_assert_uint_eq(lb, PN_BYTES);
    ck_assert_int_eq(memcmp(a, bb, la), 0);
    ck_assert_int_eq(memcmp(a, "GZPN", 4), 0);
    ck_assert_uint_eq(get_le32(a + 4), PATNET_VERSION);
    ck_assert_uint_eq(get_le32(a + 16), RULE_RENJU);
    ck_assert_uint_eq(get_le32(a + 20), 3);
    ck_assert_uint_eq(get_le32(a + la - 4), (uint32_t)crc32(0L, a, (uInt)(la - 4)));
    free(bb);
    /* a step past 32 bits and another rule, written by hand, come back */
    put_le32(a + 16, RULE_STANDARD);
    put_le32(a + 20, 0x89abcdefu);
    put_le32(a + 24, 0x12u);
    pn_set_param(a, 0, pn_param(a, 0));
    patnet_t *big = pn_from_bytes(a);
    ck_assert_int_eq(patnet_rule(big), RULE_STANDARD);
    ck_assert(patnet_step(big) == 0x1289abcdefull);
    ck_assert_msg(patnet_save(big, path2, err, sizeof err) == 0, "%s", err);
    bb = (unsigned char *)slurp_len(path2, &lb);
    ck_assert_uint_eq(lb, PN_BYTES);
    ck_assert_int_eq(memcmp(a, bb, lb), 0);
    free(bb);
    free(a);
    patnet_free(big);
    /* no temporary file is left behind */
    char cmd[400];
    snprintf(cmd, sizeof cmd, "test $(ls -A '%s' | wc -l) -eq 3", tmpdir);
    ck_assert_int_eq(system(cmd), 0);
    snprintf(path2, sizeof path2, "%s/nodir/x.gzp", tmpdir);
    err[0] = '\0';
    ck_assert_int_eq(patnet_save(pn, path2, err, sizeof err), -1);
    ck_assert_msg(strstr(err, path2) && !strchr(err, '\n'), "%s", err);
    patnet_free(back);
    patnet_free(pn);
}
END_TEST

/* A damaged file does not load: NULL, and a one-line error naming the
 * path and the damage `want`, and no other kind of damage. */
static void expect_patnet_damage(const unsigned char *buf, size_t len, long at,
                                 unsigned char val, const char *want)
{
    static const char *const kinds[] = {"not a pattern net file", "pattern net version", "dims",
                                        "unknown rule", "truncated", "trailing bytes",
                                        "CRC mismatch", "not finite"};
    char path[300], err[1024];
    snprintf(path, sizeof path, "%s/bad.gzp", tmpdir);
    unsigned char *copy = malloc(len + 1);
    ck_assert_ptr_nonnull(copy);
    memcpy(copy, buf, len);
    if (at >= 0)
        copy[at] = val;
    write_file(path, copy, len, "wb");
    free(copy);
    err[0] = '\0';
    patnet_t *pn = patnet_load(path, err, sizeof err);
    ck_assert_msg(pn == NULL, "damaged file (%s) loaded", want);
    ck_assert_msg(strstr(err, want) != NULL, "wanted '%s', got: %s", want, err);
    ck_assert_msg(strstr(err, path) != NULL, "the error does not name %s: %s", path, err);
    ck_assert_msg(strchr(err, '\n') == NULL, "multi-line error: %s", err);
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
        if (!strstr(want, kinds[k]))
            ck_assert_msg(strstr(err, kinds[k]) == NULL, "'%s' also says '%s'", err, kinds[k]);
    printf("damaged (%s): %s\n", want, err);
}

/* The rows a version-2 file holds, found another way than patnet.c's: every
 * pair of sides (each 0..4 cells on the board, near to far, then off), kept
 * when the code is no larger than its reversal. stored[c] says if c is one. */
static int pn_stored_rows(bool *stored)
{
    memset(stored, 0, PATNET_CODES * sizeof *stored);
    uint32_t side[121][4];   /* near to far: 0 empty, 1 own, 2 opp, 3 off */
    int ns = 0;
    for (int k = 0; k <= 4; k++) {
        int ways = 1;
        for (int i = 0; i < k; i++)
            ways *= 3;
        for (int w = 0; w < ways; w++, ns++)
            for (int i = 0, x = w; i < 4; i++, x /= 3)
                side[ns][i] = i < k ? (uint32_t)(x % 3) : 3u;
    }
    ck_assert_int_eq(ns, 121);
    int n = 0;
    for (int l = 0; l < ns; l++)
        for (int r = 0; r < ns; r++) {
            uint32_t cell[8], code = 0, rev = 0;
            for (int i = 0; i < 4; i++) {
                cell[3 - i] = side[l][i];
                cell[4 + i] = side[r][i];
            }
            for (int i = 0; i < 8; i++) {
                code = code * 4 + cell[i];
                rev = rev * 4 + cell[7 - i];
            }
            if (code <= rev && !stored[code]) {
                stored[code] = true;
                n++;
            }
        }
    return n;
}

/* old, read from an older version's file, is the net pn: the same answers
 * on random positions, and saved again, the bytes want (PN_BYTES). */
static void pn_expect_same(patnet_t *pn, patnet_t *old, const unsigned char *want)
{
    enum { N = 6 };
    board_t b[N];
    const board_t *rows[N];
    for (int i = 0; i < N; i++) {
        random_game(&b[i], 5 + 2 * i, RULE_FREESTYLE, 3 + 5 * i);
        rows[i] = &b[i];
    }
    static float p1[N * BOARD_CELLS], p2[N * BOARD_CELLS];
    float x1[N], x2[N];
    patnet_eval(pn, rows, N, p1, x1);
    patnet_eval(old, rows, N, p2, x2);
    ck_assert_int_eq(memcmp(p1, p2, sizeof p1), 0);
    ck_assert_int_eq(memcmp(x1, x2, sizeof x1), 0);
    unsigned char *again = pn_bytes(old);
    ck_assert_int_eq(memcmp(again, want, PN_BYTES), 0);
    free(again);
}

/* A version-1 file (every table row) still reads: one made by hand from a
 * net's version-2 bytes, junk in the rows no board reads, loads as the
 * same net (the same answers, the same version-2 bytes saved again); cut
 * short or too long it says so for its version. */
START_TEST(test_patnet_version1)
{
    rng_state = 23;
    static bool stored[PATNET_CODES];
    ck_assert_int_eq(pn_stored_rows(stored), PATNET_STORED_ROWS);
    patnet_t *pn = patnet_create(RULE_FREESTYLE, 8);
    unsigned char *v2 = pn_bytes(pn);
    const size_t dense = PN_U - PN_B0;   /* version 1 has no U */
    const size_t len1 = PN_HEADER + 4 * ((size_t)PATNET_CODES * PN_D + dense) + 4;
    unsigned char *v1 = malloc(len1);
    ck_assert_ptr_nonnull(v1);
    memcpy(v1, v2, PN_HEADER);
    put_le32(v1 + 4, 1);
    size_t row = 0;
    for (size_t c = 0; c < PATNET_CODES; c++)
        for (size_t j = 0; j < PN_D; j++) {
            float x = stored[c] ? pn_param(v2, row * PN_D + j) : (float)(100 * rnd_sym());
            uint32_t u;
            memcpy(&u, &x, 4);
            put_le32(v1 + PN_HEADER + 4 * (c * PN_D + j), u);
            row += stored[c] && j == PN_D - 1;
        }
    ck_assert_uint_eq(row, PATNET_STORED_ROWS);
    memcpy(v1 + PN_HEADER + 4 * (size_t)PATNET_CODES * PN_D, v2 + PN_HEADER + 4 * PN_B0,
           4 * dense);
    put_le32(v1 + len1 - 4, (uint32_t)crc32(0L, v1, (uInt)(len1 - 4)));
    char path[300], err[512];
    snprintf(path, sizeof path, "%s/v1.gzp", tmpdir);
    write_file(path, v1, len1, "wb");
    patnet_t *old = patnet_load(path, err, sizeof err);
    ck_assert_msg(old != NULL, "%s", err);
    pn_expect_same(pn, old, v2);
    patnet_free(old);
    expect_patnet_damage(v1, len1 - 1, -1, 0, "truncated");
    expect_patnet_damage(v1, PN_BYTES, -1, 0, "truncated");   /* a version 4's length */
    unsigned char *longer = calloc(len1 + 1, 1);
    memcpy(longer, v1, len1);
    expect_patnet_damage(longer, len1 + 1, -1, 0, "trailing bytes");
    free(longer);
    /* a version-4 file that says version 1 is one cut short */
    put_le32(v2 + 4, 1);
    expect_patnet_damage(v2, PN_BYTES, -1, 0, "truncated");
    free(v1);
    free(v2);
    patnet_free(pn);
}
END_TEST

/* A version-2 file (no U) and a version-3 file (no Uz) still read: the net
 * of a version-4 file with U and Uz = 0, made by hand without them, loads
 * as that net (its answers, its bytes saved again as version 4); a net
 * with U or Uz answers otherwise (the policy, not the value); an older
 * file's length is checked for its version. */
static void pn_check_older(uint32_t ver, size_t nparams)
{
    patnet_t *pn = patnet_create(RULE_FREESTYLE, 9);
    unsigned char *v4 = pn_bytes(pn);
    for (size_t i = PN_U; i < PN_NPARAMS; i++)
        ck_assert(pn_param(v4, i) == 0.0f);   /* a new net's policy reads no pool */
    const size_t len = PN_HEADER + 4 * nparams + 4;
    unsigned char *old_bytes = malloc(len + 1);
    ck_assert_ptr_nonnull(old_bytes);
    memcpy(old_bytes, v4, len - 4);
    put_le32(old_bytes + 4, ver);
    put_le32(old_bytes + len - 4, (uint32_t)crc32(0L, old_bytes, (uInt)(len - 4)));
    char path[300], err[512];
    snprintf(path, sizeof path, "%s/v%u.gzp", tmpdir, ver);
    write_file(path, old_bytes, len, "wb");
    patnet_t *old = patnet_load(path, err, sizeof err);
    ck_assert_msg(old != NULL, "%s", err);
    ck_assert_uint_eq(patnet_version(old), ver);
    ck_assert_uint_eq(patnet_file_params(ver), nparams);
    pn_expect_same(pn, old, v4);
    patnet_free(old);
    /* U and Uz move the policy, not the value: each alone */
    board_t b;
    random_game(&b, 15, RULE_FREESTYLE, 20);
    const board_t *one[1] = {&b};
    static float p1[BOARD_CELLS], p2[BOARD_CELLS];
    float x1, x2;
    patnet_eval(pn, one, 1, p1, &x1);
    for (int part = 0; part < 2; part++) {
        size_t from = part ? PN_UZ : PN_U, to = part ? PN_NPARAMS : PN_UZ;
        unsigned char *buf = pn_bytes(pn);
        for (size_t i = from; i < to; i++)
            pn_set_param(buf, i, (float)(0.5 * rnd_sym()));
        patnet_t *dyn = pn_from_bytes(buf);
        patnet_eval(dyn, one, 1, p2, &x2);
        ck_assert_msg(memcmp(p1, p2, sizeof p1) != 0, "%s moves no prior", part ? "Uz" : "U");
        ck_assert(x1 == x2);
        patnet_free(dyn);
        free(buf);
    }
    expect_patnet_damage(old_bytes, len - 1, -1, 0, "truncated");
    old_bytes[len] = 0;
    expect_patnet_damage(old_bytes, len + 1, -1, 0, "trailing bytes");
    /* a version-4 file that says version ver has parameters too many */
    put_le32(v4 + 4, ver);
    expect_patnet_damage(v4, PN_BYTES, -1, 0, "trailing bytes");
    free(old_bytes);
    free(v4);
    patnet_free(pn);
}

START_TEST(test_patnet_version2)
{
    rng_state = 29;
    pn_check_older(2, PN_U);
}
END_TEST

START_TEST(test_patnet_version3)
{
    rng_state = 31;
    pn_check_older(3, PN_UZ);
}
END_TEST

START_TEST(test_patnet_damaged_files)
{
    patnet_t *pn = patnet_create(RULE_FREESTYLE, 2);
    unsigned char *buf = pn_bytes(pn);
    size_t len = PN_BYTES;
    expect_patnet_damage(buf, len, 0, 'X', "not a pattern net file");
    expect_patnet_damage((const unsigned char *)"hello", 5, -1, 0, "not a pattern net file");
    /* a net's weights file given for a pattern net */
    nn_config_t cfg;
    nn_config_default(&cfg, 1, 8, 9);
    char path[300], err[512];
    nn_model_t *m = nn_model_create(&cfg, 1, err, sizeof err);
    snprintf(path, sizeof path, "%s/m.gzm", tmpdir);
    ck_assert_int_eq(nn_model_save(m, path, err, sizeof err), 0);
    nn_model_free(m);
    size_t mlen;
    unsigned char *mbuf = (unsigned char *)slurp_len(path, &mlen);
    expect_patnet_damage(mbuf, mlen, -1, 0, "not a pattern net file");
    free(mbuf);
    expect_patnet_damage(buf, len, 4, PATNET_VERSION + 1, "pattern net version");
    expect_patnet_damage(buf, len, 4, 0, "pattern net version");
    expect_patnet_damage(buf, len, 8, PN_D / 2, "dims");
    expect_patnet_damage(buf, len, 12, PN_H * 2, "dims");
    expect_patnet_damage(buf, len, 11, 1, "dims");                 /* D = 2^24 + 32 */
    expect_patnet_damage(buf, len, 16, RULE_COUNT, "unknown rule");
    expect_patnet_damage(buf, len, 19, 0x80, "unknown rule");
    const size_t cuts[] = {4, 10, PN_HEADER - 1, PN_HEADER, 1000, len / 2, len - 5, len - 4,
                           len - 1};
    for (size_t i = 0; i < sizeof cuts / sizeof cuts[0]; i++)
        expect_patnet_damage(buf, cuts[i], -1, 0, "truncated");
    expect_patnet_damage(buf, 0, -1, 0, "not a pattern net file");   /* an empty file */
    unsigned char *longer = calloc(len + 4096, 1);
    memcpy(longer, buf, len);
    expect_patnet_damage(longer, len + 1, -1, 0, "trailing bytes");
    expect_patnet_damage(longer, len + 4096, -1, 0, "trailing bytes");
    free(longer);
    long table_byte = PN_HEADER + 4 * 1000 + 2, last_param = (long)len - 5;
    expect_patnet_damage(buf, len, table_byte, buf[table_byte] ^ 0x04, "CRC mismatch");
    expect_patnet_damage(buf, len, 20, buf[20] ^ 1, "CRC mismatch");   /* the step */
    expect_patnet_damage(buf, len, last_param, buf[last_param] ^ 0x80, "CRC mismatch");
    expect_patnet_damage(buf, len, (long)len - 1, buf[len - 1] ^ 0x01, "CRC mismatch");
    /* not a number, or infinite, with the CRC right: the parameter named */
    const struct {
        size_t at;
        float v;
    } bad[] = {{PN_V1 + 3, NAN}, {12345, INFINITY}, {PN_C2, -INFINITY}, {0, -NAN},
               {PN_U + 77, NAN}, {PN_NPARAMS - 1, INFINITY}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        unsigned char *copy = malloc(len);
        memcpy(copy, buf, len);
        pn_set_param(copy, bad[i].at, bad[i].v);
        char want[64];
        snprintf(want, sizeof want, "parameter %zu is not finite", bad[i].at);
        expect_patnet_damage(copy, len, -1, 0, want);
        free(copy);
    }
    /* and the untouched file still loads */
    patnet_free(pn_from_bytes(buf));
    snprintf(path, sizeof path, "%s/none.gzp", tmpdir);
    err[0] = '\0';
    ck_assert_ptr_null(patnet_load(path, err, sizeof err));
    ck_assert_msg(strstr(err, "cannot open") && strstr(err, path) &&
                  strstr(err, "No such file") && !strchr(err, '\n'), "%s", err);
    free(buf);
    patnet_free(pn);
}
END_TEST

/* Random damage to a good file, a few hundred times (bytes set to random
 * values, the header's more often, or the file cut short): a file whose
 * bytes changed never loads and says why in one line; one that did not
 * change loads. Patched in place, so each try rewrites a few bytes. */
START_TEST(test_patnet_fuzz)
{
    rng_state = 99;
    patnet_t *pn = patnet_create(RULE_FREESTYLE, 4);
    unsigned char *buf = pn_bytes(pn);
    const size_t len = PN_BYTES;
    char path[300], err[1024];
    snprintf(path, sizeof path, "%s/fuzz.gzp", tmpdir);
    write_file(path, buf, len, "wb");
    int fd = open(path, O_RDWR);
    ck_assert_int_ge(fd, 0);
    int changed_n = 0, same_n = 0, tries = asan() ? 100 : 300;
    for (int it = 0; it < tries; it++) {
        bool changed = false;
        size_t at[4];
        int nat = 0;
        size_t cut = len;
        if (rnd() % 5 == 0) {
            cut = rnd() % 2 ? rnd() % 64 : rnd() % len;
            ck_assert_int_eq(ftruncate(fd, (off_t)cut), 0);
            changed = true;
        } else {
            nat = 1 + (int)(rnd() % 4);
            for (int k = 0; k < nat; k++) {
                int where = (int)(rnd() % 3);
                at[k] = where == 0 ? rnd() % PN_HEADER : where == 1 ? len - 1 - rnd() % 8
                                                                      : rnd() % len;
                unsigned char v = (unsigned char)(rnd() % 8 ? rnd() : buf[at[k]]);
                ck_assert_int_eq(pwrite(fd, &v, 1, (off_t)at[k]), 1);
            }
            for (int k = 0; k < nat; k++) {
                unsigned char now;
                ck_assert_int_eq(pread(fd, &now, 1, (off_t)at[k]), 1);
                changed |= now != buf[at[k]];
            }
        }
        err[0] = '\0';
        patnet_t *got = patnet_load(path, err, sizeof err);
        if (changed) {
            ck_assert_msg(got == NULL, "try %d: a damaged file loaded", it);
            ck_assert_msg(err[0] && strstr(err, path) && !strchr(err, '\n'), "try %d: %s", it,
                          err);
            changed_n++;
        } else {
            ck_assert_msg(got != NULL, "try %d: an unchanged file did not load: %s", it, err);
            same_n++;
        }
        patnet_free(got);
        if (cut < len)
            ck_assert_int_eq(pwrite(fd, buf + cut, len - cut, (off_t)cut), (ssize_t)(len - cut));
        for (int k = 0; k < nat; k++)
            ck_assert_int_eq(pwrite(fd, buf + at[k], 1, (off_t)at[k]), 1);
    }
    close(fd);
    ck_assert_int_gt(changed_n, tries / 2);
    ck_assert_int_gt(same_n, 0);
    patnet_t *back = patnet_load(path, err, sizeof err);   /* restored, it loads */
    ck_assert_msg(back != NULL, "%s", err);
    patnet_free(back);
    free(buf);
    patnet_free(pn);
}
END_TEST

/* The 8 symmetries: on random positions (mostly 15x15 freestyle), the
 * transformed board's value is the board's and its priors are the board's
 * moved by the same symmetry; the priors are a distribution over the
 * empty points, 0 on the stones (and renju's forbidden points), the value
 * in [-1, 1]; a board alone gets what it gets in a batch. */
START_TEST(test_patnet_symmetry)
{
    rng_state = 31;
    patnet_t *pn = patnet_create(RULE_FREESTYLE, 9);
    static float pol[SYM_COUNT * BOARD_CELLS], alone[BOARD_CELLS];
    float val[SYM_COUNT], lo = 1, hi = -1;
    double worst_v = 0, worst_p = 0, spread = INFINITY;
    const int sizes[] = {15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 15, 9, 20, 15, 11};
    const rule_t rules[] = {RULE_FREESTYLE, RULE_STANDARD, RULE_RENJU};
    for (int g = 0; g < 16; g++) {
        int s = sizes[g], np = s * s;
        rule_t rule = g < 12 ? RULE_FREESTYLE : rules[g % 3];
        board_t b, t[SYM_COUNT];
        const board_t *rows[SYM_COUNT];
        random_game(&b, s, rule, 10 + (int)(rnd() % 21));
        ck_assert_int_ge(b.nmoves, 8);
        for (int k = 0; k < SYM_COUNT; k++) {
            board_transform(&t[k], &b, k);
            rows[k] = &t[k];
        }
        patnet_eval(pn, rows, SYM_COUNT, pol, val);
        for (int k = 0; k < SYM_COUNT; k++) {
            ck_assert_msg(fabsf(val[k] - val[0]) <= 1e-5f, "game %d sym %d: value %g, not %g",
                          g, k, val[k], val[0]);
            worst_v = fmax(worst_v, fabsf(val[k] - val[0]));
            for (int p = 0; p < np; p++) {
                float a = pol[p], c = pol[k * BOARD_CELLS + sym_point(k, p, s)];
                ck_assert_msg(fabsf(a - c) <= 1e-5f, "game %d sym %d point %d: %g, not %g", g,
                              k, p, c, a);
                worst_p = fmax(worst_p, fabsf(a - c));
            }
        }
        double sum = 0;
        float pmin = 1, pmax = 0;
        for (int p = 0; p < BOARD_CELLS; p++) {
            if (p >= np || b.cells[p] != STONE_EMPTY) {
                ck_assert_msg(pol[p] == 0.0f, "game %d point %d (not empty): %g", g, p, pol[p]);
                continue;
            }
            if (board_is_forbidden(&b, p)) {
                ck_assert_msg(pol[p] == 0.0f, "game %d point %d (forbidden): %g", g, p, pol[p]);
                continue;
            }
            ck_assert_msg(pol[p] > 0, "game %d point %d: %g", g, p, pol[p]);
            sum += pol[p];
            pmin = fminf(pmin, pol[p]);
            pmax = fmaxf(pmax, pol[p]);
        }
        ck_assert_msg(fabs(sum - 1) <= 1e-5, "game %d: the priors sum to %.7f", g, sum);
        ck_assert(val[0] >= -1 && val[0] <= 1);
        spread = fmin(spread, pmax / pmin);
        lo = fminf(lo, val[0]);
        hi = fmaxf(hi, val[0]);
        const board_t *one[1] = {&b};
        float v;
        patnet_eval(pn, one, 1, alone, &v);
        ck_assert_int_eq(memcmp(alone, pol, sizeof alone), 0);
        ck_assert(v == val[0]);
    }
    printf("patnet symmetry: largest differences value %.2g, prior %.2g; prior max/min at "
           "least %.3g; values %.4f..%.4f\n", worst_v, worst_p, spread, lo, hi);
    /* not a constant answer, which would be symmetric for nothing */
    ck_assert_msg(spread > 1.05 && hi - lo > 1e-3, "spread %g, values %g..%g", spread, lo, hi);
    patnet_free(pn);
}
END_TEST

/* Renju: black's forbidden point (a double-three) gets prior 0, every
 * other empty point some; white may play it, and so may black under
 * freestyle. */
/* The shipped pattern net (models/freestyle15-patnet.gzp) loads as a
 * version-3 freestyle net, and it has learned the plain facts of the game:
 * with an open four of its own, the side to move puts most of its prior on
 * the fives and rates itself won; facing the opponent's open four (two fives
 * to stop) with nothing of its own, it rates itself lost; and before the
 * first move it rates the empty board near even. */
START_TEST(test_patnet_shipped)
{
    const char *src = getenv("GOMOKU_SRC");
    char path[1024], err[512];
    snprintf(path, sizeof path, "%s/models/freestyle15-patnet.gzp", src ? src : ".");
    patnet_t *pn = patnet_load(path, err, sizeof err);
    ck_assert_msg(pn != NULL, "%s", err);
    ck_assert_int_eq(patnet_rule(pn), RULE_FREESTYLE);
    ck_assert_uint_eq(patnet_version(pn), 3);
    ck_assert_uint_gt(patnet_step(pn), 0);
    static float pol[BOARD_CELLS];
    float v;
    board_t b;
    const board_t *one = &b;
    /* black h8 i8 j8 k8 (an open four: g8 and l8), white h7 i7 j7 and e8; black to move */
    board_init(&b, 15, RULE_FREESTYLE);
    const int four[][2] = {{7, 7}, {7, 6}, {8, 7}, {8, 6}, {9, 7}, {9, 6}, {10, 7}, {5, 7}};
    for (int i = 0; i < 8; i++)
        ck_assert_int_eq(board_play(&b, board_xy(&b, four[i][0], four[i][1])), MOVE_OK);
    patnet_eval(pn, &one, 1, pol, &v);
    float fives = pol[board_xy(&b, 11, 7)] + pol[board_xy(&b, 6, 7)];
    printf("shipped pattern net: the fives' prior %.3f, value %.3f\n", fives, v);
    ck_assert_msg(fives > 0.5f, "the fives' prior %g", fives);
    ck_assert_msg(v > 0.8f, "value with a five to play %g", v);
    /* black's open four d4 e4 f4 g4, white scattered, white to move */
    board_init(&b, 15, RULE_FREESTYLE);
    const int open4[][2] = {{3, 11}, {12, 2}, {4, 11}, {13, 4}, {5, 11}, {1, 1}, {6, 11}};
    for (int i = 0; i < 7; i++)
        ck_assert_int_eq(board_play(&b, board_xy(&b, open4[i][0], open4[i][1])), MOVE_OK);
    patnet_eval(pn, &one, 1, pol, &v);
    printf("shipped pattern net: facing an open four, value %.3f\n", v);
    ck_assert_msg(v < -0.8f, "value facing an open four %g", v);
    board_init(&b, 15, RULE_FREESTYLE);
    patnet_eval(pn, &one, 1, pol, &v);
    printf("shipped pattern net: the empty board, value %.3f, the centre's prior %.3f\n", v,
           pol[board_xy(&b, 7, 7)]);
    ck_assert_msg(fabsf(v) < 0.6f, "the empty board's value %g", v);
    patnet_free(pn);
}
END_TEST

START_TEST(test_patnet_renju_forbidden)
{
    static const char diagram[] = "...............\n"
                                  "...............\n"
                                  ".....X.........\n"
                                  ".....X.........\n"
                                  "...XX..........\n"
                                  "...............\n"
                                  "...............\n"
                                  "...............\n"
                                  "...............\n"
                                  "...............\n"
                                  "...............\n"
                                  "...............\n"
                                  "...............\n"
                                  "...............\n"
                                  "...............\n";
    patnet_t *pn = patnet_create(RULE_RENJU, 12);
    static float pol[BOARD_CELLS];
    float v;
    board_t b;
    board_from_diagram(&b, RULE_RENJU, STONE_BLACK, diagram);
    int m = board_xy(&b, 5, 4);
    ck_assert_int_eq(board_forbidden_kind(&b, m), FORBID_DOUBLE_THREE);
    const board_t *row[1] = {&b};
    patnet_eval(pn, row, 1, pol, &v);
    ck_assert_msg(pol[m] == 0.0f, "forbidden point's prior %g", pol[m]);
    double sum = 0;
    int zero = 0;
    for (int p = 0; p < board_npoints(&b); p++) {
        if (b.cells[p] == STONE_EMPTY && !board_is_forbidden(&b, p))
            ck_assert_msg(pol[p] > 0, "point %d: prior %g", p, pol[p]);
        zero += pol[p] == 0.0f;
        sum += pol[p];
    }
    ck_assert_int_eq(zero, 4 + 1);   /* the stones and the forbidden point */
    ck_assert(fabs(sum - 1) <= 1e-5);
    board_from_diagram(&b, RULE_RENJU, STONE_WHITE, diagram);
    patnet_eval(pn, row, 1, pol, &v);
    ck_assert_msg(pol[m] > 0, "white's prior there %g", pol[m]);
    board_from_diagram(&b, RULE_FREESTYLE, STONE_BLACK, diagram);
    patnet_eval(pn, row, 1, pol, &v);
    ck_assert_msg(pol[m] > 0, "freestyle black's prior there %g", pol[m]);
    patnet_free(pn);
}
END_TEST

/* Training sees the symmetries alike too: a net trained on positions and
 * its twin trained on their transforms (the policy targets moved with
 * them) stay one net, answering alike on positions neither saw. */
START_TEST(test_patnet_train_symmetry)
{
    rng_state = 59;
    enum { N = 4, STEPS = 5, PROBES = 6 };
    patnet_t *a = patnet_create(RULE_FREESTYLE, 23), *c = patnet_create(RULE_FREESTYLE, 23);
    board_t b[N], t[N];
    static float pol[N][BOARD_CELLS], tpol[N][BOARD_CELLS];
    float val[N];
    for (int i = 0; i < N; i++) {
        int sym = 1 + i % (SYM_COUNT - 1);
        random_game(&b[i], 15, RULE_FREESTYLE, 10 + 5 * i);
        pn_targets(&b[i], pol[i], &val[i]);
        board_transform(&t[i], &b[i], sym);
        memset(tpol[i], 0, sizeof tpol[i]);
        for (int p = 0; p < board_npoints(&b[i]); p++)
            tpol[i][sym_point(sym, p, b[i].size)] = pol[i][p];
    }
    patnet_trainer_t *ta = patnet_trainer_create(a, 0.003f), *tc = patnet_trainer_create(c, 0.003f);
    for (int s = 0; s < STEPS; s++) {
        for (int i = 0; i < N; i++) {
            double lp = 0, lv = 0;
            patnet_trainer_add(ta, &b[i], pol[i], val[i], &lp, &lv);
            patnet_trainer_add(tc, &t[i], tpol[i], val[i], &lp, &lv);
        }
        patnet_trainer_step(ta);
        patnet_trainer_step(tc);
    }
    patnet_trainer_free(ta);
    patnet_trainer_free(tc);
    /* the training moved the net more than the twins differ */
    patnet_t *fresh = patnet_create(RULE_FREESTYLE, 23);
    static float pa[BOARD_CELLS], pc[BOARD_CELLS], pf[BOARD_CELLS];
    double dv = 0, dp = 0, moved = 0;
    for (int k = 0; k < PROBES; k++) {
        board_t q;
        random_game(&q, k % 2 ? 15 : 11, RULE_FREESTYLE, 6 + 4 * k);
        const board_t *row[1] = {&q};
        float va, vc, vf;
        patnet_eval(a, row, 1, pa, &va);
        patnet_eval(c, row, 1, pc, &vc);
        patnet_eval(fresh, row, 1, pf, &vf);
        dv = fmax(dv, fabsf(va - vc));
        moved = fmax(moved, fabsf(va - vf));
        for (int p = 0; p < BOARD_CELLS; p++) {
            dp = fmax(dp, fabsf(pa[p] - pc[p]));
            moved = fmax(moved, fabsf(pa[p] - pf[p]));
        }
    }
    printf("patnet training symmetry: the twins differ by %.2g in value, %.2g in priors; "
           "training moved them by %.2g\n", dv, dp, moved);
    ck_assert_msg(dv < 1e-4 && dp < 1e-4 && moved > 1e-2, "twins %g %g, moved %g", dv, dp, moved);
    patnet_free(fresh);
    patnet_free(a);
    patnet_free(c);
}
END_TEST

/* Trainers that share a minibatch (patnet_trainer_merge): a gradient
 * merged into a trainer with none of its own steps the net exactly as the
 * trainer that added those positions itself; the trainer merged from is
 * left empty (a step of its own changes nothing) and serves again; a
 * merge into a trainer with positions of its own steps as one trainer
 * with them all, but for rounding. Nets compared by their file's bytes. */
START_TEST(test_patnet_trainer_merge)
{
    rng_state = 61;
    enum { N = 3 };
    board_t b[N];
    static float pol[N][BOARD_CELLS];
    float val[N];
    for (int i = 0; i < N; i++) {
        random_game(&b[i], i == 1 ? 9 : 15, RULE_FREESTYLE, 8 + 6 * i);
        pn_targets(&b[i], pol[i], &val[i]);
    }
    patnet_t *one = pn_with_u(patnet_create(RULE_FREESTYLE, 17), 0.3f);
    unsigned char *start = pn_bytes(one);
    patnet_t *two = pn_from_bytes(start);
    patnet_trainer_t *ta = patnet_trainer_create(one, 0.001f);
    patnet_trainer_t *tb = patnet_trainer_create(two, 0.001f), *tw = patnet_trainer_create(two, 0.001f);
    double lp = 0, lv = 0, wp = 0, wv = 0;
    /* positions 0 and 1 by ta itself; by the worker tw, merged into tb */
    for (int s = 0; s < 2; s++) {
        patnet_trainer_add(ta, &b[s], pol[s], val[s], &lp, &lv);
        patnet_trainer_add(tw, &b[s], pol[s], val[s], &wp, &wv);
        patnet_trainer_merge(tb, tw);
        patnet_trainer_step(ta);
        patnet_trainer_step(tb);
        ck_assert(lp == wp && lv == wv);
        unsigned char *x = pn_bytes(one), *y = pn_bytes(two);
        ck_assert_int_eq(memcmp(x, y, PN_BYTES), 0);
        ck_assert_int_ne(memcmp(x, start, PN_BYTES), 0);
        free(x);
        free(y);
    }
    /* the worker merged from is empty: its own step moves nothing */
    unsigned char *before = pn_bytes(two);
    patnet_trainer_step(tw);
    unsigned char *after = pn_bytes(two);
    ck_assert_int_eq(memcmp(before, after, PN_BYTES), 0);
    free(before);
    free(after);
    /* a shared minibatch: 0 and 2 on tb, 1 on tw, merged; against all three on ta */
    patnet_trainer_add(ta, &b[0], pol[0], val[0], &lp, &lv);
    patnet_trainer_add(ta, &b[1], pol[1], val[1], &lp, &lv);
    patnet_trainer_add(ta, &b[2], pol[2], val[2], &lp, &lv);
    patnet_trainer_add(tb, &b[0], pol[0], val[0], &wp, &wv);
    patnet_trainer_add(tw, &b[1], pol[1], val[1], &wp, &wv);
    patnet_trainer_add(tb, &b[2], pol[2], val[2], &wp, &wv);
    patnet_trainer_merge(tb, tw);
    patnet_trainer_step(ta);
    patnet_trainer_step(tb);
    ck_assert_uint_eq(patnet_step(one), 3);
    ck_assert_uint_eq(patnet_step(two), 3);
    unsigned char *x = pn_bytes(one), *y = pn_bytes(two);
    size_t differ = 0, moved = 0;
    float worst = 0;
    for (size_t i = 0; i < PN_NPARAMS; i++) {
        float a = pn_param(x, i), c = pn_param(y, i);
        differ += a != c;
        moved += a != pn_param(start, i);
        worst = fmaxf(worst, fabsf(a - c));
    }
    printf("patnet trainer merge: %zu of %zu moved parameters differ by rounding, at most %.2g\n",
           differ, moved, worst);
    ck_assert_uint_gt(moved, 1000);
    ck_assert_msg(worst < 1e-3f && differ < moved / 100, "%zu differ, at most %g", differ, worst);
    free(x);
    free(y);
    free(start);
    patnet_trainer_free(ta);
    patnet_trainer_free(tb);
    patnet_trainer_free(tw);
    patnet_free(one);
    patnet_free(two);
}
END_TEST

/* Training on one position with a fixed target: the trainer reports the
 * losses patnet_loss gives, a step with nothing added changes nothing,
 * and 200 steps at lr 0.002 (distill's) take each loss under half its start
 * (the policy's, above its floor: the target's entropy). */
START_TEST(test_patnet_overfit_one)
{
    rng_state = 41;
    patnet_t *pn = patnet_create(RULE_FREESTYLE, 3);
    board_t b;
    random_game(&b, 15, RULE_FREESTYLE, 20);
    static float pol[BOARD_CELLS];
    float value = 0.8f;
    int legal[BOARD_CELLS], nl = 0;
    for (int p = 0; p < board_npoints(&b); p++)
        if (pn_legal(&b, p))
            legal[nl++] = p;
    ck_assert_int_gt(nl, 0);
    pol[legal[rnd() % nl]] = 0.75f;   /* a point and a little everywhere */
    for (int i = 0; i < nl; i++)
        pol[legal[i]] += 0.25f / nl;
    double lp0 = 0, lv0 = 0, lp1 = 0, lv1 = 0;
    patnet_loss(pn, &b, pol, value, &lp0, &lv0);
    patnet_trainer_t *tr = patnet_trainer_create(pn, 0.002f);
    patnet_trainer_step(tr);
    ck_assert_uint_eq(patnet_step(pn), 0);
    for (int i = 0; i < 200; i++) {
        double lp = 0, lv = 0;
        patnet_trainer_add(tr, &b, pol, value, &lp, &lv);
        if (i == 0)
            ck_assert_msg(lp == lp0 && lv == lv0, "trainer %g %g, patnet_loss %g %g", lp, lv,
                          lp0, lv0);
        patnet_trainer_step(tr);
    }
    patnet_trainer_free(tr);
    ck_assert_uint_eq(patnet_step(pn), 200);
    patnet_loss(pn, &b, pol, value, &lp1, &lv1);
    /* the floor under the policy loss: the target's entropy */
    double h = 0;
    for (int i = 0; i < nl; i++)
        h -= pol[legal[i]] * log(pol[legal[i]]);
    printf("patnet overfit: policy %.4f -> %.4f (entropy %.4f), value %.4f -> %.9f\n", lp0, lp1,
           h, lv0, lv1);
    ck_assert_msg(lp1 - h < 0.5 * (lp0 - h), "policy loss %g -> %g", lp0, lp1);
    ck_assert_msg(lv1 < 0.5 * lv0, "value loss %g -> %g", lv0, lv1);
    patnet_free(pn);
}
END_TEST

/* Training on 20 positions with random targets, in minibatches of 5:
 * their summed loss goes down from pass to pass. */
START_TEST(test_patnet_train_set)
{
    rng_state = 43;
    enum { N = 20, BATCH = 5, EPOCHS = 30 };
    patnet_t *pn = patnet_create(RULE_FREESTYLE, 8);
    board_t *b = malloc(N * sizeof *b);
    float (*pol)[BOARD_CELLS] = malloc(N * sizeof *pol), val[N];
    double floor = 0;
    for (int i = 0; i < N; i++) {
        random_game(&b[i], i % 4 == 3 ? 9 : 15, RULE_FREESTYLE, 5 + (int)(rnd() % 30));
        floor += pn_targets(&b[i], pol[i], &val[i]);
    }
    double lp[EPOCHS + 1], lv[EPOCHS + 1];
    patnet_trainer_t *tr = patnet_trainer_create(pn, 0.002f);
    for (int e = 0; e <= EPOCHS; e++) {
        lp[e] = -floor;
        lv[e] = 0;
        for (int i = 0; i < N; i++)
            patnet_loss(pn, &b[i], pol[i], val[i], &lp[e], &lv[e]);
        if (e == EPOCHS)
            break;
        for (int i = 0; i < N; i++) {
            double p = 0, v = 0;
            patnet_trainer_add(tr, &b[i], pol[i], val[i], &p, &v);
            if ((i + 1) % BATCH == 0)
                patnet_trainer_step(tr);
        }
    }
    patnet_trainer_free(tr);
    printf("patnet train set: summed policy loss over its floor %.4f, %.4f after 5 passes, "
           "%.4f after %d; value loss %.4f, %.4f, %.4f\n", lp[0], lp[5], lp[EPOCHS], EPOCHS,
           lv[0], lv[5], lv[EPOCHS]);
    for (int e = 5; e <= EPOCHS; e += 5)
        ck_assert_msg(lp[e] + lv[e] < lp[e - 5] + lv[e - 5], "pass %d: %g, pass %d: %g", e - 5,
                      lp[e - 5] + lv[e - 5], e, lp[e] + lv[e]);
    ck_assert_msg(lp[EPOCHS] < 0.8 * lp[0] && lv[EPOCHS] < 0.5 * lv[0] &&
                  lp[EPOCHS] + lv[EPOCHS] < 0.6 * (lp[0] + lv[0]), "policy %g -> %g, "
                  "value %g -> %g", lp[0], lp[EPOCHS], lv[0], lv[EPOCHS]);
    ck_assert_uint_eq(patnet_step(pn), EPOCHS * N / BATCH);
    free(b);
    free(pol);
    patnet_free(pn);
}
END_TEST

/* The trainer's gradient against finite differences. The gradient is the
 * trainer's own, but Adam's first step moves each parameter by lr against
 * its gradient's sign (m / sqrt(v) is g / |g| after the bias correction),
 * so the step, read from the files saved before and after it, shows the
 * sign; central differences of patnet_loss over files with one parameter
 * moved show the gradient. They must agree wherever the difference is
 * clear and smooth (no relu's kink within eps): in every part of the net,
 * the table rows the position reads among them; and a parameter no output
 * sees must not move. (Magnitudes: test_patnet_gradient_ratios.) */
START_TEST(test_patnet_gradient_signs)
{
    rng_state = 47;
    patnet_t *pn = pn_with_u(patnet_create(RULE_FREESTYLE, 13), 0.3f);
    board_t b;
    random_game(&b, 11, RULE_FREESTYLE, 14);
    static float pol[BOARD_CELLS];
    float value;
    pn_targets(&b, pol, &value);
    unsigned char *before = pn_bytes(pn);
    const float lr = 1e-3f, eps = 1e-3f;
    patnet_trainer_t *tr = patnet_trainer_create(pn, lr);
    double lp = 0, lv = 0;
    patnet_trainer_add(tr, &b, pol, value, &lp, &lv);
    patnet_trainer_step(tr);
    patnet_trainer_free(tr);
    unsigned char *after = pn_bytes(pn);
    patnet_t *base = pn_from_bytes(before);
    double l0 = pn_loss(base, &b, pol, value);
    ck_assert(l0 == lp + lv);
    static float pol0[BOARD_CELLS], qpol[BOARD_CELLS];
    const board_t *one[1] = {&b};
    float v0;
    patnet_eval(base, one, 1, pol0, &v0);
    patnet_free(base);
    /* the table rows the step moved: at most the 4 lines of each legal point */
    size_t moved[64], nmoved = 0, rows = 0;
    for (size_t r = 0; r < PATNET_STORED_ROWS; r++) {
        bool any = false;
        for (size_t j = 0; j < PN_D; j++) {
            size_t i = r * PN_D + j;
            if (pn_param(after, i) == pn_param(before, i))
                continue;
            any = true;
            if (nmoved < 64 && rnd() % 8 == 0)
                moved[nmoved++] = i;
        }
        rows += any;
    }
    int nlegal = 0;
    for (int p = 0; p < board_npoints(&b); p++)
        nlegal += pn_legal(&b, p);
    ck_assert_uint_gt(rows, 0);
    ck_assert_uint_le(rows, 4 * (size_t)nlegal);
    /* bp shifts every logit alike: the softmax, and so the loss, ignore it */
    const struct {
        const char *name;
        size_t off, n;
    } parts[] = {{"table", 0, 0},          {"b0", PN_B0, PN_D},
                 {"W1", PN_W1, PN_D * PN_D}, {"b1", PN_B1, PN_D},
                 {"wp", PN_WP, PN_D},       {"bp", PN_BP, 1},
                 {"V1", PN_V1, PN_H * 2 * PN_D}, {"c1", PN_C1, PN_H},
                 {"v2", PN_V2, PN_H},       {"c2", PN_C2, 1},
                 {"U", PN_U, 2 * PN_D * PN_D}, {"Uz", PN_UZ, PN_D * PN_H}};
    unsigned char *work = malloc(PN_BYTES);
    memcpy(work, before, PN_BYTES);
    int total = 0;
    for (size_t k = 0; k < sizeof parts / sizeof parts[0]; k++) {
        bool flat = parts[k].off == PN_BP;
        int checked = 0, kinks = 0, idle = 0;
        int want = parts[k].n == 1 ? 1 : 4;
        /* U's and Uz's slopes are small here (the pool's features and the
         * value's hidden units are), and the logits are linear in them: a
         * wider difference, above the rounding */
        const float e = parts[k].off == PN_U || parts[k].off == PN_UZ ? 1e-2f : eps;
        for (int t = 0; t < 24 && checked < want; t++) {
            size_t i;
            if (parts[k].n == 0) {
                if ((size_t)t >= nmoved)
                    break;
                i = moved[t];
            } else {
                i = parts[k].off + rnd() % parts[k].n;
            }
            float p0 = pn_param(before, i);
            double l[2];
            bool seen = false;
            for (int s = 0; s < 2; s++) {
                pn_set_param(work, i, p0 + (s ? e : -e));
                patnet_t *q = pn_from_bytes(work);
                l[s] = pn_loss(q, &b, pol, value);
                float v;
                patnet_eval(q, one, 1, qpol, &v);
                seen |= v != v0 || memcmp(qpol, pol0, sizeof qpol) != 0;
                patnet_free(q);
            }
            pn_set_param(work, i, p0);
            double up = (l[1] - l0) / e, down = (l0 - l[0]) / e, fd = (up + down) / 2;
            float delta = pn_param(after, i) - p0;
            if (!seen) {   /* not a bit of the answer moves: no gradient to follow */
                ck_assert_msg(delta == 0, "%s[%zu]: changes nothing, but the step moved it by %g",
                              parts[k].name, i - parts[k].off, delta);
                idle++;
                continue;
            }
            if (flat) {
                ck_assert_msg(fabs(fd) < 1e-3, "bp: the loss's slope %g", fd);
                checked++;
                continue;
            }
            if (fabs(fd) < 1e-3)
                continue;   /* no clear gradient here (an idle relu, mostly) */
            if (fabs(up - down) > 0.2 * fabs(fd)) {
                kinks++;
                continue;
            }
            ck_assert_msg(delta != 0 && (delta < 0) == (fd > 0),
                          "%s[%zu]: the loss's slope %g, but the step moved it by %g",
                          parts[k].name, i - parts[k].off, fd, delta);
            ck_assert_msg(fabsf(fabsf(delta) - lr) < 0.01f * lr, "%s[%zu]: a step of %g",
                          parts[k].name, i - parts[k].off, delta);
            checked++;
        }
        printf("patnet gradient: %s, %d signs checked, %d unseen and unmoved, %d kinks skipped\n",
               parts[k].name, checked, idle, kinks);
        ck_assert_msg(checked > 0, "%s: no parameter with a clear gradient", parts[k].name);
        total += checked;
    }
    ck_assert_int_ge(total, 28);
    free(work);
    free(before);
    free(after);
    patnet_free(pn);
}
END_TEST

/* A parameter's value after one Adam step (lr) from the net of file
 * `before` on the batch of the n positions b with targets pol, val. */
static float pn_stepped_param(const unsigned char *before, const board_t *b,
                              float (*pol)[BOARD_CELLS], const float *val, int n, float lr,
                              size_t i)
{
    patnet_t *q = pn_from_bytes(before);
    patnet_trainer_t *tr = patnet_trainer_create(q, lr);
    for (int k = 0; k < n; k++) {
        double lp = 0, lv = 0;
        patnet_trainer_add(tr, &b[k], pol[k], val[k], &lp, &lv);
    }
    patnet_trainer_step(tr);
    patnet_trainer_free(tr);
    unsigned char *after = pn_bytes(q);
    float p = pn_param(after, i);
    free(after);
    patnet_free(q);
    return p;
}

/* The gradient's magnitudes against finite differences, through Adam's
 * first step again. A batch of positions A and B moves a parameter
 * against the sign of gA + gB(z), where B's value target z scales B's
 * value gradient: gB(z) = gB_policy + (vB - z) c. Finite differences of
 * the losses give K = gA + gB_policy and c, so the sum changes sign at
 * z* = vB + K / c; a step with z a little below z* and one a little above
 * must move the parameter opposite ways. A gradient whose parts are
 * weighted wrong (a factor, a wrong input) has its z* elsewhere even
 * where every sign is right. (A factor common to the whole gradient
 * Adam does not see, so it cannot matter to training.) */
START_TEST(test_patnet_gradient_ratios)
{
    rng_state = 53;
    patnet_t *pn = pn_with_u(patnet_create(RULE_FREESTYLE, 19), 0.3f);
    board_t b[2];
    static float pol[2][BOARD_CELLS];
    float val[2];
    random_game(&b[0], 7, RULE_FREESTYLE, 3);   /* unlike positions: unlike pooled features */
    random_game(&b[1], 15, RULE_FREESTYLE, 30);
    pn_targets(&b[0], pol[0], &val[0]);
    pn_targets(&b[1], pol[1], &val[1]);
    const float lr = 1e-3f, eps = 1e-3f;
    unsigned char *before = pn_bytes(pn);
    const board_t *rows[2] = {&b[0], &b[1]};
    static float p2[2 * BOARD_CELLS];
    float v[2];
    patnet_eval(pn, rows, 2, p2, v);
    const float z0 = v[1] > 0 ? v[1] - 0.5f : v[1] + 0.5f;   /* B's target for the differences */
    /* the table entries to try: those a step on the batch moves */
    patnet_trainer_t *tr = patnet_trainer_create(pn, lr);
    double lp = 0, lv = 0;
    patnet_trainer_add(tr, &b[0], pol[0], val[0], &lp, &lv);
    patnet_trainer_add(tr, &b[1], pol[1], z0, &lp, &lv);
    patnet_trainer_step(tr);
    patnet_trainer_free(tr);
    unsigned char *after = pn_bytes(pn);
    size_t moved[32], nmoved = 0;
    for (size_t i = 0; i < PN_B0 && nmoved < 32; i++)
        if (pn_param(after, i) != pn_param(before, i) && rnd() % 16 == 0)
            moved[nmoved++] = i;
    free(after);
    const struct {
        const char *name;
        size_t off, n;
    } parts[] = {{"table", 0, 0},          {"b0", PN_B0, PN_D},
                 {"W1", PN_W1, PN_D * PN_D}, {"b1", PN_B1, PN_D},
                 {"V1", PN_V1, PN_H * 2 * PN_D}, {"c1", PN_C1, PN_H},
                 {"v2", PN_V2, PN_H},       {"c2", PN_C2, 1}};   /* U: no value gradient */
    unsigned char *work = malloc(PN_BYTES);
    memcpy(work, before, PN_BYTES);
    int total = 0;
    for (size_t k = 0; k < sizeof parts / sizeof parts[0]; k++) {
        int checked = 0, want = parts[k].n == 1 ? 1 : 3;
        size_t tried[24];
        for (int t = 0; t < 24 && checked < want; t++) {
            size_t i;
            if (parts[k].n == 0) {
                if ((size_t)t >= nmoved)
                    break;
                i = moved[t];
            } else {
                i = parts[k].off + rnd() % parts[k].n;
            }
            tried[t] = i;
            bool again = false;
            for (int u = 0; u < t; u++)
                again |= tried[u] == i;
            if (again)
                continue;
            float p0 = pn_param(before, i);
            double la[3], lpb[3], lvb[3];   /* at p0 - eps, p0, p0 + eps */
            for (int s = 0; s < 3; s++) {
                pn_set_param(work, i, p0 + (float)(s - 1) * eps);
                patnet_t *q = pn_from_bytes(work);
                double lp = 0, lv = 0;
                patnet_loss(q, &b[0], pol[0], val[0], &lp, &lv);
                la[s] = lp + lv;
                lpb[s] = lvb[s] = 0;
                patnet_loss(q, &b[1], pol[1], z0, &lpb[s], &lvb[s]);
                patnet_free(q);
            }
            pn_set_param(work, i, p0);
            /* central differences, where both sides agree (no kink) */
            double d[3];
            bool smooth = true;
            const double *l3[3] = {la, lpb, lvb};
            for (int j = 0; j < 3; j++) {
                double up = (l3[j][2] - l3[j][1]) / eps, down = (l3[j][1] - l3[j][0]) / eps;
                d[j] = (up + down) / 2;
                smooth &= fabs(up - down) <= 0.05 * fabs(d[j]) + 1e-4;
            }
            if (!smooth || fabs(d[2]) < 1e-2)
                continue;   /* a kink, or B's value does not see it */
            double K = d[0] + d[1], c = d[2] / (v[1] - z0), zs = v[1] + K / c;
            if (fabs(zs - v[1]) > 20)
                continue;
            double m = 0.15 * fabs(zs - v[1]) + 0.02;
            float lo = pn_stepped_param(before, b, pol, (float[]){val[0], (float)(zs - m)}, 2,
                                        lr, i) - p0;
            float hi = pn_stepped_param(before, b, pol, (float[]){val[0], (float)(zs + m)}, 2,
                                        lr, i) - p0;
            printf("patnet gradient ratio: %s[%zu]: K %.4g c %.4g, z* %.4f (vB %.4f), steps "
                   "%.3g below, %.3g above\n", parts[k].name, i - parts[k].off, K, c, zs, v[1],
                   lo, hi);
            /* below z* the sum has c's sign, above it the other */
            ck_assert_msg(lo != 0 && hi != 0 && (lo < 0) == (c > 0) && (hi < 0) == (c < 0),
                          "%s[%zu]: the gradient changes sign away from z* = %.4f "
                          "(steps %g at %.4f, %g at %.4f)", parts[k].name, i - parts[k].off, zs,
                          lo, zs - m, hi, zs + m);
            checked++;
        }
        ck_assert_msg(checked > 0, "%s: no parameter to check", parts[k].name);
        total += checked;
    }
    ck_assert_int_ge(total, 12);
    free(work);
    free(before);
    patnet_free(pn);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("nn");
    ADD_CASE(s, "model", -1, test_layout, test_init, test_schedule, test_devices,
             test_device_note_once);
    ADD_CASE(s, "math", 120, test_gradcheck, test_gradcheck_policy_outputs,
             test_gradcheck_value_max, test_fast_vs_ref_1thread,
             test_fast_vs_ref_2threads, test_fast_vs_ref_policy_outputs, test_fast_vs_ref_value_max,
             test_fast_vs_ref_big, test_winograd_vs_ref, test_winograd_vs_ref_big, test_wino_output_epilogue,
             test_conv_env,
             test_overfit, test_masking_board_sizes, test_no_legal_point, test_momentum_resume);
    TCase *tf = ADD_CASE(s, "file", -1, test_save_load, test_damaged_files,
                         test_version1_files, test_threat_net, test_widen_features, test_widen_value_pool,
                         test_grow);
    tcase_add_checked_fixture(tf, tmp_setup, tmp_teardown);
    TCase *tp = ADD_CASE(s, "patnet", 120, test_patnet_ctx, test_patnet_ensemble,
                         test_patnet_save_load, test_patnet_version1,
                         test_patnet_version2, test_patnet_version3, test_patnet_damaged_files,
                         test_patnet_fuzz, test_patnet_symmetry, test_patnet_renju_forbidden,
                         test_patnet_shipped,
                         test_patnet_train_symmetry,
                         test_patnet_overfit_one, test_patnet_trainer_merge, test_patnet_train_set,
                         test_patnet_gradient_signs, test_patnet_gradient_ratios);
    tcase_add_checked_fixture(tp, tmp_setup, tmp_teardown);
    ADD_CASE(s, "encode", 60, test_encode, test_encode_renju, test_encode_threats,
             test_encode_threats_symmetry, test_eval_and_cache, test_eval_symmetry);
    ADD_CASE(s, "bf16", 120, test_bf16_conv_kernel, test_bf16_vs_ref_random,
             test_bf16_vs_ref_models, test_bf16_weight_sync, test_bf16_precision_setting);
    return run_suite(s);
}
