/* The reference: the network of nn.h written as plain loops over one
 * sample at a time, in float64. It is the spec the other backends are
 * measured against (tests compare the fast CPU path and the CUDA module with
 * it, and check its gradients against finite differences), so it stays as
 * plain as the maths: no blocking, no threads, no precision choices.
 *
 * nn_ref_loss_grad64 is the spec itself (losses and gradients of a batch
 * from float64 parameters); nn_backend_cpu_ref wraps it as a backend
 * (float parameters, converted on every call). The total loss and the
 * Nesterov step are written once here and shared with the fast path
 * (nn/nn_int.h). */
#include "nn/nn.h"
#include "nn/nn_int.h"

#include <assert.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct ref_ws {
    double *x0, *mask, *legal, *a0, *h, *y, *p1, *logit, *prob, *v1, *pooled, *f1, *vl, *q;
    double *dA, *dB, *dp1, *dv1, *dlogit, *df1, *dpooled, *dvl, *dx0;
    double *mem;
} ref_ws_t;

static int ref_ws_init(ref_ws_t *w, const nn_config_t *c)
{
    size_t hw = (size_t)c->board_max * c->board_max, C = (size_t)c->channels;
    size_t B = (size_t)c->blocks, P = (size_t)c->in_planes;
    size_t Hp = (size_t)c->policy_head, Hv = (size_t)c->value_head;
    size_t Vh = (size_t)c->value_hidden, K = (size_t)c->policy_outputs;
    size_t Hf = (size_t)nn_value_features(c);
    size_t sizes[] = {P * hw, hw, hw, C * hw, B * C * hw, B * C * hw, Hp * hw, K * hw, hw,
                      Hv * hw, Hf, Vh, 3, 3, C * hw, C * hw, Hp * hw, Hv * hw, K * hw, Vh,
                      Hf, 3, P * hw};
    double **ptrs[] = {&w->x0, &w->mask, &w->legal, &w->a0, &w->h, &w->y, &w->p1,
                       &w->logit, &w->prob, &w->v1, &w->pooled, &w->f1, &w->vl, &w->q,
                       &w->dA, &w->dB, &w->dp1, &w->dv1, &w->dlogit, &w->df1,
                       &w->dpooled, &w->dvl, &w->dx0};
    size_t n = sizeof sizes / sizeof sizes[0], total = 0;
    for (size_t i = 0; i < n; i++)
        total += sizes[i];
    w->mem = calloc(total, sizeof(double));
    if (!w->mem)
        return -1;
    double *p = w->mem;
    for (size_t i = 0; i < n; i++) {
        *ptrs[i] = p;
        p += sizes[i];
    }
    return 0;
}

/* Index in an (M, M) plane of tap (ky, kx) of the 3x3 window centred on
 * (y, x); -1 where it falls in the zero padding. */
static int ref_tap(int y, int x, int ky, int kx, int M)
{
    int yy = y + ky - 1, xx = x + kx - 1;
    return yy < 0 || yy >= M || xx < 0 || xx >= M ? -1 : yy * M + xx;
}

/* out (cout, M, M) = conv3x3(in (cin, M, M), w (cout, cin, 3, 3)) + b, zero padding. */
static void ref_conv3(const double *in, int cin, const double *w, const double *b, int cout,
                      int M, double *out)
{
    int hw = M * M;
    for (int co = 0; co < cout; co++)
        for (int y = 0; y < M; y++)
            for (int x = 0; x < M; x++) {
                double s = b[co];
                for (int ci = 0; ci < cin; ci++)
                    for (int ky = 0; ky < 3; ky++)
                        for (int kx = 0; kx < 3; kx++) {
                            int q = ref_tap(y, x, ky, kx, M);
                            if (q >= 0)
                                s += w[((co * cin + ci) * 3 + ky) * 3 + kx] * in[ci * hw + q];
                        }
                out[co * hw + y * M + x] = s;
            }
}

/* Gradients of ref_conv3: dw, db accumulate; din accumulates when not NULL. */
static void ref_conv3_back(const double *in, int cin, const double *w, int cout, int M,
                           const double *dout, double *dw, double *db, double *din)
{
    int hw = M * M;
    for (int co = 0; co < cout; co++)
        for (int y = 0; y < M; y++)
            for (int x = 0; x < M; x++) {
                double g = dout[co * hw + y * M + x];
                if (g == 0.0)
                    continue;
                db[co] += g;
                for (int ci = 0; ci < cin; ci++)
                    for (int ky = 0; ky < 3; ky++)
                        for (int kx = 0; kx < 3; kx++) {
                            int q = ref_tap(y, x, ky, kx, M);
                            if (q < 0)
                                continue;
                            int wi = ((co * cin + ci) * 3 + ky) * 3 + kx;
                            dw[wi] += g * in[ci * hw + q];
                            if (din)
                                din[ci * hw + q] += g * w[wi];
                        }
            }
}

/* out (cout, hw) = w (cout, cin) x in (cin, hw) + b. */
static void ref_conv1(const double *in, int cin, const double *w, const double *b, int cout,
                      int hw, double *out)
{
    for (int co = 0; co < cout; co++)
        for (int q = 0; q < hw; q++) {
            double s = b[co];
            for (int ci = 0; ci < cin; ci++)
                s += w[co * cin + ci] * in[ci * hw + q];
            out[co * hw + q] = s;
        }
}

static void ref_conv1_back(const double *in, int cin, const double *w, int cout, int hw,
                           const double *dout, double *dw, double *db, double *din)
{
    for (int co = 0; co < cout; co++)
        for (int q = 0; q < hw; q++) {
            double g = dout[co * hw + q];
            db[co] += g;
            for (int ci = 0; ci < cin; ci++) {
                dw[co * cin + ci] += g * in[ci * hw + q];
                din[ci * hw + q] += g * w[co * cin + ci];
            }
        }
}

/* x = relu(x) * mask, per channel. */
static void ref_relu_mask(double *x, int ch, int hw, const double *mask)
{
    for (int c = 0; c < ch; c++)
        for (int q = 0; q < hw; q++)
            x[c * hw + q] = x[c * hw + q] > 0.0 ? x[c * hw + q] * mask[q] : 0.0;
}

/* Forward of one sample `in` (P, M, M); fills the workspace. */
static void ref_forward(const nn_config_t *c, const nn_layout_t *L, const double *W,
                        const float *in, ref_ws_t *w)
{
    int M = c->board_max, hw = M * M, C = c->channels, P = c->in_planes;
    int Hp = c->policy_head, Hv = c->value_head, Vh = c->value_hidden;
    int nlegal = 0, non = 0;
    for (int i = 0; i < P * hw; i++)
        w->x0[i] = in[i];
    for (int q = 0; q < hw; q++) {
        w->mask[q] = nn_in_onboard(in, hw, q) ? 1.0 : 0.0;
        w->legal[q] = nn_in_legal(in, hw, q) ? 1.0 : 0.0;
        nlegal += w->legal[q] > 0;
        non += w->mask[q] > 0;
    }
    ref_conv3(w->x0, P, W + L->in_w, W + L->in_b, C, M, w->a0);
    ref_relu_mask(w->a0, C, hw, w->mask);
    const double *x = w->a0;
    for (int b = 0; b < c->blocks; b++) {
        const double *bw = W + L->blocks + (size_t)b * L->block_stride;
        const double *w1 = bw, *b1 = w1 + (size_t)C * C * 9, *w2 = b1 + C, *b2 = w2 + (size_t)C * C * 9;
        double *h = w->h + (size_t)b * C * hw, *y = w->y + (size_t)b * C * hw;
        ref_conv3(x, C, w1, b1, C, M, h);
        ref_relu_mask(h, C, hw, w->mask);
        ref_conv3(h, C, w2, b2, C, M, y);
        for (int i = 0; i < C * hw; i++)
            y[i] += x[i];
        ref_relu_mask(y, C, hw, w->mask);
        x = y;
    }
    /* policy head */
    ref_conv1(x, C, W + L->pol_w1, W + L->pol_b1, Hp, hw, w->p1);
    ref_relu_mask(w->p1, Hp, hw, w->mask);
    ref_conv1(w->p1, Hp, W + L->pol_w2, W + L->pol_b2, c->policy_outputs, hw, w->logit);
    double mx = -INFINITY, sum = 0.0;   /* probabilities of channel 0 */
    for (int q = 0; q < hw; q++)
        if (w->legal[q] > 0 && w->logit[q] > mx)
            mx = w->logit[q];
    for (int q = 0; q < hw; q++) {
        w->prob[q] = w->legal[q] > 0 ? exp(w->logit[q] - mx) : 0.0;
        sum += w->prob[q];
    }
    for (int q = 0; q < hw; q++)
        w->prob[q] = nlegal ? w->prob[q] / sum : 0.0;
    /* value head */
    ref_conv1(x, C, W + L->val_w1, W + L->val_b1, Hv, hw, w->v1);
    ref_relu_mask(w->v1, Hv, hw, w->mask);
    int Hf = nn_value_features(c);
    for (int k = 0; k < Hv; k++) {
        double s = 0.0, mx = 0.0;   /* relu'd and masked: off-board points are 0 */
        for (int q = 0; q < hw; q++) {
            s += w->v1[k * hw + q];
            mx = w->v1[k * hw + q] > mx ? w->v1[k * hw + q] : mx;
        }
        w->pooled[k] = non ? s / non : 0.0;
        if (Hf > Hv)
            w->pooled[Hv + k] = mx;
    }
    for (int j = 0; j < Vh; j++) {
        double s = W[L->val_fc1_b + j];
        for (int k = 0; k < Hf; k++)
            s += W[L->val_fc1_w + (size_t)j * Hf + k] * w->pooled[k];
        w->f1[j] = s > 0.0 ? s : 0.0;
    }
    double vmx = -INFINITY, vs = 0.0;
    for (int o = 0; o < 3; o++) {
        double s = W[L->val_fc2_b + o];
        for (int j = 0; j < Vh; j++)
            s += W[L->val_fc2_w + (size_t)o * Vh + j] * w->f1[j];
        w->vl[o] = s;
        vmx = s > vmx ? s : vmx;
    }
    for (int o = 0; o < 3; o++)
        vs += (w->q[o] = exp(w->vl[o] - vmx));
    for (int o = 0; o < 3; o++)
        w->q[o] /= vs;
}

/* Losses of one forwarded sample, lp[k] per policy channel; backward when
 * G != NULL (scaled by `scale`, accumulated into G; input gradient written
 * to w->dx0). pt is the sample's (K, hw) policy target, pw the K policy
 * loss weights. */
static void ref_backward(const nn_config_t *c, const nn_layout_t *L, const double *W,
                         const float *pt, const float *vt, double scale, const float *pw,
                         ref_ws_t *w, double *G, double *lp, double *lv)
{
    int M = c->board_max, hw = M * M, C = c->channels, P = c->in_planes;
    int Hp = c->policy_head, Hv = c->value_head, Vh = c->value_hidden;
    int non = 0;
    for (int q = 0; q < hw; q++)
        non += w->mask[q] > 0;
    /* policy CE over legal points: -sum t log p; target mass at illegal points is ignored */
    for (int k = 0; k < c->policy_outputs; k++) {
        const double *lg = w->logit + (size_t)k * hw;
        const float *tk = pt + (size_t)k * hw;
        double mx = -INFINITY, sum = 0.0, T = 0.0, dot = 0.0;
        for (int q = 0; q < hw; q++)
            if (w->legal[q] > 0) {
                mx = lg[q] > mx ? lg[q] : mx;
                T += tk[q];
                dot += tk[q] * lg[q];
            }
        if (mx > -INFINITY) {
            for (int q = 0; q < hw; q++)
                if (w->legal[q] > 0)
                    sum += exp(lg[q] - mx);
            lp[k] += T * (mx + log(sum)) - dot;
        }
        double sk = scale * pw[k];
        for (int q = 0; q < hw; q++)
            w->dlogit[(size_t)k * hw + q] =
                w->legal[q] > 0 ? sk * (exp(lg[q] - mx) / sum * T - tk[q]) : 0.0;
    }
    double vmx = fmax(w->vl[0], fmax(w->vl[1], w->vl[2])), vs = 0.0, Tv = 0.0, vdot = 0.0;
    for (int o = 0; o < 3; o++) {
        vs += exp(w->vl[o] - vmx);
        Tv += vt[o];
        vdot += vt[o] * w->vl[o];
    }
    *lv += Tv * (vmx + log(vs)) - vdot;
    if (!G)
        return;

    for (int o = 0; o < 3; o++)
        w->dvl[o] = scale * (w->q[o] * Tv - vt[o]);
    const double *x = c->blocks ? w->y + (size_t)(c->blocks - 1) * C * hw : w->a0;
    memset(w->dA, 0, sizeof(double) * (size_t)C * hw);
    /* policy head */
    memset(w->dp1, 0, sizeof(double) * (size_t)Hp * hw);
    ref_conv1_back(w->p1, Hp, W + L->pol_w2, c->policy_outputs, hw, w->dlogit, G + L->pol_w2,
                   G + L->pol_b2, w->dp1);
    for (int i = 0; i < Hp * hw; i++)
        w->dp1[i] = w->p1[i] > 0 ? w->dp1[i] : 0.0;
    ref_conv1_back(x, C, W + L->pol_w1, Hp, hw, w->dp1, G + L->pol_w1, G + L->pol_b1, w->dA);
    /* value head */
    memset(w->df1, 0, sizeof(double) * (size_t)Vh);
    for (int o = 0; o < 3; o++) {
        G[L->val_fc2_b + o] += w->dvl[o];
        for (int j = 0; j < Vh; j++) {
            G[L->val_fc2_w + (size_t)o * Vh + j] += w->dvl[o] * w->f1[j];
            w->df1[j] += w->dvl[o] * W[L->val_fc2_w + (size_t)o * Vh + j];
        }
    }
    int Hf = nn_value_features(c);
    memset(w->dpooled, 0, sizeof(double) * (size_t)Hf);
    for (int j = 0; j < Vh; j++) {
        double g = w->f1[j] > 0 ? w->df1[j] : 0.0;
        G[L->val_fc1_b + j] += g;
        for (int k = 0; k < Hf; k++) {
            G[L->val_fc1_w + (size_t)j * Hf + k] += g * w->pooled[k];
            w->dpooled[k] += g * W[L->val_fc1_w + (size_t)j * Hf + k];
        }
    }
    for (int k = 0; k < Hv; k++) {
        int arg = -1;   /* the max's gradient goes to its first point */
        for (int q = 0; q < hw && Hf > Hv; q++)
            if (w->v1[k * hw + q] > 0 && (arg < 0 || w->v1[k * hw + q] > w->v1[k * hw + arg]))
                arg = q;
        for (int q = 0; q < hw; q++)
            w->dv1[k * hw + q] = w->v1[k * hw + q] > 0
                                     ? w->dpooled[k] / non + (q == arg ? w->dpooled[Hv + k] : 0.0)
                                     : 0.0;
    }
    ref_conv1_back(x, C, W + L->val_w1, Hv, hw, w->dv1, G + L->val_w1, G + L->val_b1, w->dA);
    /* trunk, last block first; dA holds d(block output) */
    for (int b = c->blocks - 1; b >= 0; b--) {
        const double *bw = W + L->blocks + (size_t)b * L->block_stride;
        double *gb = G + L->blocks + (size_t)b * L->block_stride;
        size_t cw = (size_t)C * C * 9;
        const double *h = w->h + (size_t)b * C * hw, *y = w->y + (size_t)b * C * hw;
        const double *xin = b ? w->y + (size_t)(b - 1) * C * hw : w->a0;
        for (int i = 0; i < C * hw; i++)
            w->dA[i] = y[i] > 0 ? w->dA[i] : 0.0;   /* d(pre-relu sum): skip and branch */
        memset(w->dB, 0, sizeof(double) * (size_t)C * hw);
        ref_conv3_back(h, C, bw + cw + C, C, M, w->dA, gb + cw + C, gb + 2 * cw + C, w->dB);
        for (int i = 0; i < C * hw; i++)
            w->dB[i] = h[i] > 0 ? w->dB[i] : 0.0;
        ref_conv3_back(xin, C, bw, C, M, w->dB, gb, gb + cw, w->dA);
    }
    for (int i = 0; i < C * hw; i++)
        w->dA[i] = w->a0[i] > 0 ? w->dA[i] : 0.0;
    memset(w->dx0, 0, sizeof(double) * (size_t)P * hw);
    ref_conv3_back(w->x0, P, W + L->in_w, C, M, w->dA, G + L->in_w, G + L->in_b, w->dx0);
}

/* L2 term c * sum(w^2) over weight tensors; gradient added to G when not NULL. */
static double ref_l2(const nn_config_t *c, const double *W, double wd, double *G)
{
    double s = 0.0;
    for (int t = 0; t < nn_param_tensors(c); t++) {
        if (!nn_param_tensor_is_weight(c, t))
            continue;
        nn_tensor_info_t ti = nn_param_tensor(c, t);
        for (size_t i = ti.offset; i < ti.offset + ti.count; i++) {
            s += W[i] * W[i];
            if (G)
                G[i] += 2.0 * wd * W[i];
        }
    }
    return wd * s;
}

int nn_host_init(nn_host_t *h, const nn_model_t *m, int max_batch)
{
    size_t np = m->nparams;
    h->cfg = m->cfg;
    nn_param_layout(&m->cfg, &h->lay);
    assert(h->lay.total == np);
    h->max_batch = max_batch;
    h->params = malloc(np * sizeof(float));
    h->grad = malloc(np * sizeof(float));
    h->mom = calloc(np, sizeof(float));
    if (!h->params || !h->grad || !h->mom)
        return -1;
    memcpy(h->params, m->params, np * sizeof(float));
    return 0;
}

void nn_host_free(nn_host_t *h)
{
    free(h->params);
    free(h->grad);
    free(h->mom);
}

/* Means of the per-channel policy loss sums lp over n samples into *out
 * (may be NULL); returns the total loss (nn_losses_t.total), channel k
 * weighted by pw[k]. */
double nn_ref_losses_total(const nn_config_t *c, const float *pw, double *lp, double lv,
                           double l2, int n, nn_losses_t *out)
{
    double total = lv + l2;
    for (int k = 0; k < c->policy_outputs; k++) {
        lp[k] = n ? lp[k] / n : 0.0;
        total += pw[k] * lp[k];
    }
    if (out)
        *out = (nn_losses_t){.policy = (float)lp[0], .value = (float)lv, .l2 = (float)l2,
                             .total = (float)total,
                             .opp_policy = c->policy_outputs > 1 ? (float)lp[1] : 0.0f,
                             .soft_policy = c->policy_outputs > 2 ? (float)lp[2] : 0.0f};
    return total;
}

static double ref_loss_grad(const nn_config_t *c, const double *W, ref_ws_t *ws,
                            const float *in, const float *pt, const float *vt, int n, double wd,
                            const float *pw, nn_losses_t *out, double *G, double *gin)
{
    nn_layout_t L;
    nn_param_layout(c, &L);
    size_t hw = (size_t)c->board_max * c->board_max, ps = (size_t)c->in_planes * hw;
    size_t pts = (size_t)c->policy_outputs * hw;
    if (G)
        memset(G, 0, sizeof(double) * L.total);
    double lp[NN_MAX_POLICY_OUTPUTS] = {0}, lv = 0.0;
    for (int s = 0; s < n; s++) {
        ref_forward(c, &L, W, in + s * ps, ws);
        ref_backward(c, &L, W, pt + s * pts, vt + 3 * s, 1.0 / n, pw, ws,
                     (G || gin) ? G : NULL, lp, &lv);
        if (gin)
            memcpy(gin + s * ps, ws->dx0, sizeof(double) * ps);
    }
    lv = n ? lv / n : 0.0;
    double l2 = ref_l2(c, W, wd, G);
    return nn_ref_losses_total(c, pw, lp, lv, l2, n, out);
}

double nn_ref_loss_grad64(const nn_config_t *cfg, const double *params, const float *in,
                          const float *policy_target, const float *value_target, int n,
                          double weight_decay, nn_losses_t *out, double *grad,
                          double *grad_in)
{
    ref_ws_t ws;
    double *g = grad;
    if (ref_ws_init(&ws, cfg) != 0)
        abort();   /* test helper: no memory for scratch is not recoverable */
    if (!g && grad_in) {   /* backward needs somewhere to put parameter gradients */
        g = malloc(sizeof(double) * nn_param_count(cfg));
        assert(g);
    }
    float pw[NN_MAX_POLICY_OUTPUTS];
    nn_train_policy_weights(NULL, pw);
    double r = ref_loss_grad(cfg, params, &ws, in, policy_target, value_target, n,
                             weight_decay, pw, out, g, grad_in);
    if (g != grad)
        free(g);
    free(ws.mem);
    return r;
}

void nn_ref_sgd_step(float *w, const float *g, float *v, size_t n, float lr, float mu)
{
    for (size_t i = 0; i < n; i++) {
        v[i] = mu * v[i] + g[i];
        w[i] -= lr * (g[i] + mu * v[i]);
    }
}

/* ---- the reference as a backend ---- */

struct nn_ctx {
    nn_host_t h;               /* config, layout, params, grad, momentum */
    ref_ws_t ws;
    double *rparams, *rgrad;   /* nparams each: params in float64, and the gradient */
};

static void ref_free(nn_ctx_t *c)
{
    if (!c)
        return;
    free(c->ws.mem);
    nn_host_free(&c->h);
    free(c->rparams);
    free(c->rgrad);
    free(c);
}

static nn_ctx_t *ref_create(const nn_model_t *m, int max_batch, int device, int threads,
                            char *err, size_t errlen)
{
    (void)device;
    (void)threads;
    size_t np = m->nparams;
    nn_ctx_t *c = calloc(1, sizeof *c);
    if (!c)
        goto out_nomem;
    int host = nn_host_init(&c->h, m, max_batch);
    c->rparams = malloc(np * sizeof(double));
    c->rgrad = malloc(np * sizeof(double));
    if (host != 0 || !c->rparams || !c->rgrad || ref_ws_init(&c->ws, &m->cfg) != 0)
        goto out_free_ctx;
    return c;

out_free_ctx:
    ref_free(c);
out_nomem:
    snprintf(err, errlen, "cpu-ref: out of memory");
    return NULL;
}

static void ref_sync_params(nn_ctx_t *c)
{
    for (size_t i = 0; i < c->h.lay.total; i++)
        c->rparams[i] = c->h.params[i];
}

static void ref_forward_batch(nn_ctx_t *c, const float *in, int n, float *policy, float *value)
{
    assert(n >= 0 && n <= c->h.max_batch);
    ref_sync_params(c);
    size_t hw = (size_t)c->h.cfg.board_max * c->h.cfg.board_max, ps = (size_t)c->h.cfg.in_planes * hw;
    for (int s = 0; s < n; s++) {
        ref_forward(&c->h.cfg, &c->h.lay, c->rparams, in + s * ps, &c->ws);
        for (size_t q = 0; q < hw; q++)
            policy[s * hw + q] = (float)c->ws.prob[q];
        for (int o = 0; o < 3; o++)
            value[3 * s + o] = (float)c->ws.q[o];
    }
}

/* Losses and gradient (into grad when not NULL) with policy loss weights pw. */
static void ref_loss_grad_w(nn_ctx_t *c, const float *in, const float *pt, const float *vt,
                            int n, float wd, const float *pw, nn_losses_t *out, float *grad)
{
    assert(n >= 0 && n <= c->h.max_batch);
    if (n == 0) {
        nn_empty_batch(c->h.lay.total, out, grad);
        return;
    }
    ref_sync_params(c);
    nn_losses_t l;
    ref_loss_grad(&c->h.cfg, c->rparams, &c->ws, in, pt, vt, n, wd, pw, &l,
                  grad ? c->rgrad : NULL, NULL);
    if (out)
        *out = l;
    if (grad)
        for (size_t i = 0; i < c->h.lay.total; i++)
            grad[i] = (float)c->rgrad[i];
}

static int ref_loss_grad_f(nn_ctx_t *c, const float *in, const float *pt, const float *vt,
                           int n, float wd, nn_losses_t *out, float *grad, char *err,
                           size_t errlen)
{
    (void)err;
    (void)errlen;
    float pw[NN_MAX_POLICY_OUTPUTS];
    nn_train_policy_weights(NULL, pw);
    ref_loss_grad_w(c, in, pt, vt, n, wd, pw, out, grad);
    return 0;
}

/* An empty batch is no step (as nn_net_train_step and the other backends). */
static int ref_train_step(nn_ctx_t *c, const float *in, const float *pt, const float *vt,
                          int n, const nn_train_opts_t *o, nn_losses_t *out, char *err,
                          size_t errlen)
{
    (void)err;
    (void)errlen;
    if (n == 0)
        return nn_empty_batch(c->h.lay.total, out, NULL);
    float pw[NN_MAX_POLICY_OUTPUTS];
    nn_train_policy_weights(o, pw);
    ref_loss_grad_w(c, in, pt, vt, n, o->weight_decay, pw, out, c->h.grad);
    nn_ref_sgd_step(c->h.params, c->h.grad, c->h.mom, c->h.lay.total, o->lr, o->momentum);
    return 0;
}

static void ref_get_weights(nn_ctx_t *c, float *params)
{
    memcpy(params, c->h.params, c->h.lay.total * sizeof(float));
}

static void ref_set_weights(nn_ctx_t *c, const float *params)
{
    memcpy(c->h.params, params, c->h.lay.total * sizeof(float));
}

static void ref_get_momentum(nn_ctx_t *c, float *m)
{
    memcpy(m, c->h.mom, c->h.lay.total * sizeof(float));
}

static void ref_set_momentum(nn_ctx_t *c, const float *m)
{
    memcpy(c->h.mom, m, c->h.lay.total * sizeof(float));
}

/* No set_precision: the reference is float64 whatever is asked. */
const nn_backend_t nn_backend_cpu_ref = {
    .name = "cpu-ref",
    .create = ref_create,
    .forward = ref_forward_batch,
    .train_step = ref_train_step,
    .loss_grad = ref_loss_grad_f,
    .get_weights = ref_get_weights,
    .set_weights = ref_set_weights,
    .get_momentum = ref_get_momentum,
    .set_momentum = ref_set_momentum,
    .free = ref_free,
};
