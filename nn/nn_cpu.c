/* The fast CPU backend (the reference is nn/nn_ref.c).
 *
 * nn_backend_cpu: the fast path. A batch is split into equal chunks, one
 * per thread; each thread keeps its chunk's activations channel-major,
 * (C, samples * M * M), so every 3x3 conv is one im2col + one SGEMM over
 * many samples and every 1x1 conv is one SGEMM. Gradients are summed per
 * thread and reduced at the end. 3x3 convs with enough channels run as
 * Winograd F(4x4, 3x3) instead (nn/winograd.h: 4x fewer flops); the
 * algorithm is chosen per conv at create time (fast_conv3 is the one place
 * that dispatches on it). Inference at bf16 precision runs every 3x3 conv
 * through nn/gemm_bf16.h instead. */
#include "nn/gemm_bf16.h"
#include "nn/nn.h"
#include "nn/nn_int.h"
#include "nn/sgemm.h"
#include "nn/winograd.h"

#include <assert.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct nn_ctx {
    nn_host_t h;           /* config, layout, params, grad, momentum */
    bool params_changed;   /* since the fast path last derived data from params */
    struct fast *fast;
    gemm_bf16_t *bf16;     /* inference convs in bf16 (nn/gemm_bf16.h); NULL: fp32 */
    bool bf16_stale;       /* params changed since bf16 packed them */
};

static void cpu_get_weights(nn_ctx_t *c, float *params)
{
    memcpy(params, c->h.params, c->h.lay.total * sizeof(float));
}

static void cpu_set_weights(nn_ctx_t *c, const float *params)
{
    memcpy(c->h.params, params, c->h.lay.total * sizeof(float));
    c->bf16_stale = true;
    c->params_changed = true;
}

static void cpu_get_momentum(nn_ctx_t *c, float *m)
{
    memcpy(m, c->h.mom, c->h.lay.total * sizeof(float));
}

static void cpu_set_momentum(nn_ctx_t *c, const float *m)
{
    memcpy(c->h.mom, m, c->h.lay.total * sizeof(float));
}

/* ---------------------------------------------------------------------- */
/* Fast path.                                                             */

/* One thread's share of a batch: at most `cap` samples. Activations are
 * channel-major over the chunk, (channels, ns * hw) with ns samples, except
 * the trunk of a pixel-major forward (struct fast's pm_trunk): (ns * hw,
 * channels) in the same buffers. */
typedef struct lane {
    struct nn_ctx *ctx;
    int idx;
    pthread_t tid;
    bool started;
    float *x0;       /* (P, cap*hw) input, transposed */
    float *mask;     /* (cap*hw) on-board */
    float *legal;    /* (cap*hw) */
    float *cnt;      /* (cap) on-board points per sample */
    float *act3;     /* forward only: 3 rotating (C, cap*hw) buffers (or (cap*hw, C)) */
    float *actall;   /* training: a0, then h, y per block, each (C, cap*hw) */
    float *col;      /* (max(P,C)*9, sub*hw) im2col */
    float *p1;       /* (Hp, cap*hw) */
    float *logit;    /* (K, cap*hw) logits, then d(loss)/d(logit) */
    float *v1;       /* (Hv, cap*hw) */
    float *pooled;   /* (cap, Hf): the means, then (mean and max) the maxima */
    float *f1;       /* (cap, Vh) */
    float *vl;       /* (cap, 3) logits, then probabilities */
    /* backward, allocated on the first training call */
    float *dA, *dB;  /* (C, cap*hw) */
    float *dp1;      /* (Hp, cap*hw) */
    float *dv1;      /* (Hv, cap*hw) */
    float *small;    /* dpooled (cap, Hf), df1 (cap, Vh), dvl (cap, 3) */
    float *grad;     /* nparams: this thread's gradient sum */
    /* Winograd convs (when any conv uses it) */
    float *xt;       /* (cap*hw, max(P,C)): a conv input, pixel-major */
    float *yt;       /* (cap*hw, C): a conv output or its gradient, pixel-major */
    float *wv;       /* (36, tiles, max(P,C)): transformed input tiles */
    float *wm;       /* (36, tiles, C): transformed output tiles */
    float *du;       /* training: (convs, 36, max(P,C), C) filter gradients, Winograd domain */
    float *vall;     /* training: each Winograd conv's transformed input (wv) from the
                      * forward, kept for its filter gradient; vstride floats apart */
    double lp[NN_MAX_POLICY_OUTPUTS], lv;   /* loss sums over the chunk */
    int i0, n;       /* chunk: samples [i0, i0 + n) of the batch */
} lane_t;

typedef enum { JOB_FORWARD, JOB_LOSS, JOB_GRAD } job_t;

/* How a 3x3 conv runs: im2col + SGEMM, or Winograd F(4x4, 3x3). */
typedef enum { CONV_DIRECT, CONV_WINOGRAD } conv_algo_t;

struct fast {
    int nthreads, cap, piece, tpiece, pcap;
    int nconv;            /* 3x3 convs: the input conv, then two per block */
    conv_algo_t *algo;    /* (nconv) */
    bool pm_trunk;        /* every block conv is Winograd (and blocks > 0): fp32
                           * forward runs keep the trunk pixel-major, (ns*hw, C),
                           * from the input conv to the heads, with bias,
                           * residual, ReLU and mask done in each conv's output
                           * transform: no transposes or passes between convs */
    float *u;             /* (nconv, 36, max(P,C), C) Winograd filters, from params */
    float *ut;            /* the same with each (cin, C) matrix transposed */
    size_t ustride;       /* floats per conv in u and in each lane's du */
    size_t vstride;       /* floats per conv in each lane's vall */
    lane_t *w;
    bool train_ready;
    pthread_mutex_t mu;
    pthread_cond_t go, done;
    unsigned gen;
    int pending;
    bool quit;
    /* the job */
    job_t job;
    const float *in, *pt, *vt;
    const float *pw;      /* policy loss weights (training jobs) */
    float *policy, *value;
    int n;
};

/* x (ch, ld) = relu(x + b) * mask over ns*hw columns. */
static void bias_relu_mask(float *x, int ch, int ld, int cols, const float *b, const float *mask)
{
    for (int c = 0; c < ch; c++) {
        float *r = x + (size_t)c * ld, bc = b[c];
        for (int i = 0; i < cols; i++) {
            float v = r[i] + bc;
            r[i] = v > 0.0f ? v * mask[i] : 0.0f;
        }
    }
}

/* Tap (ky, kx) of a 3x3 conv reads input point (y + ky - 1, x + kx - 1).
 * Within one sample that is the flat index i + shift, shift = (ky-1)*M +
 * kx-1, for output rows [ylo, yhi); column x = 0 (kx = 0) or x = M-1
 * (kx = 2) would wrap into the neighbouring row and is padding instead. */
typedef struct tap {
    int shift, lo, hi;   /* flat output range [lo, hi) that reads in[i + shift] */
    int ylo, yhi;
} tap_t;

static tap_t tap_of(int M, int ky, int kx)
{
    tap_t t;
    t.ylo = ky == 0 ? 1 : 0;
    t.yhi = ky == 2 ? M - 1 : M;
    t.shift = (ky - 1) * M + kx - 1;
    t.lo = t.ylo * M + (kx == 0 ? 1 : 0);
    t.hi = t.yhi * M - (kx == 2 ? 1 : 0);
    return t;
}

/* col (cin*9, ns*hw) from x (cin, ld), samples [s0, s0+ns) of the chunk. */
static void im2col3(const float *x, int cin, int ld, int M, int s0, int ns, float *col)
{
    int hw = M * M, lc = ns * hw;
    for (int ky = 0; ky < 3; ky++)
        for (int kx = 0; kx < 3; kx++) {
            tap_t t = tap_of(M, ky, kx);
            for (int ci = 0; ci < cin; ci++) {
                float *dst = col + (size_t)((ci * 3 + ky) * 3 + kx) * lc;
                const float *src = x + (size_t)ci * ld + (size_t)s0 * hw;
                for (int s = 0; s < ns; s++, dst += hw, src += hw) {
                    memset(dst, 0, sizeof(float) * t.lo);
                    memcpy(dst + t.lo, src + t.lo + t.shift, sizeof(float) * (t.hi - t.lo));
                    memset(dst + t.hi, 0, sizeof(float) * (hw - t.hi));
                    if (kx == 0)
                        for (int y = t.ylo; y < t.yhi; y++)
                            dst[y * M] = 0.0f;
                    else if (kx == 2)
                        for (int y = t.ylo; y < t.yhi; y++)
                            dst[y * M + M - 1] = 0.0f;
                }
            }
        }
}

/* dx (cin, ld) += col2im(col), the adjoint of im2col3. Clobbers the
 * padding entries of col (sets them to 0). */
static void col2im3(float *col, int cin, int ld, int M, int s0, int ns, float *dx)
{
    int hw = M * M, lc = ns * hw;
    for (int ky = 0; ky < 3; ky++)
        for (int kx = 0; kx < 3; kx++) {
            tap_t t = tap_of(M, ky, kx);
            for (int ci = 0; ci < cin; ci++) {
                float *src = col + (size_t)((ci * 3 + ky) * 3 + kx) * lc;
                float *dst = dx + (size_t)ci * ld + (size_t)s0 * hw;
                for (int s = 0; s < ns; s++, dst += hw, src += hw) {
                    if (kx == 0)
                        for (int y = t.ylo; y < t.yhi; y++)
                            src[y * M] = 0.0f;
                    else if (kx == 2)
                        for (int y = t.ylo; y < t.yhi; y++)
                            src[y * M + M - 1] = 0.0f;
                    for (int i = t.lo; i < t.hi; i++)
                        dst[i + t.shift] += src[i];
                }
            }
        }
}

/* Offset in the parameters of 3x3 conv `layer`'s weights (0: the input
 * conv, 1 + 2b and 2 + 2b: block b's first and second), and the inverse. */
static size_t conv_offset(const nn_ctx_t *c, int layer)
{
    if (layer == 0)
        return c->h.lay.in_w;
    size_t C = (size_t)c->h.cfg.channels;
    return c->h.lay.blocks + (size_t)((layer - 1) / 2) * c->h.lay.block_stride +
           ((layer - 1) % 2 ? C * C * 9 + C : 0);
}
static int conv_layer(const nn_ctx_t *c, const float *wt)
{
    size_t off = (size_t)(wt - c->h.params);
    if (off == c->h.lay.in_w)
        return 0;
    size_t b = (off - c->h.lay.blocks) / c->h.lay.block_stride;
    int layer = 1 + 2 * (int)b + (off != c->h.lay.blocks + b * c->h.lay.block_stride);
    assert(conv_offset(c, layer) == off);
    return layer;
}

/* Winograd filters from the current parameters, when they changed. */
static void fast_prepare(nn_ctx_t *c)
{
    struct fast *f = c->fast;
    if (!c->params_changed)
        return;
    int C = c->h.cfg.channels;
    for (int l = 0; l < f->nconv; l++)
        if (f->algo[l] == CONV_WINOGRAD) {
            int cin = l ? C : c->h.cfg.in_planes;
            float *u = f->u + (size_t)l * f->ustride, *ut = f->ut + (size_t)l * f->ustride;
            wino_filter(c->h.params + conv_offset(c, l), cin, C, u);
            for (int xi = 0; xi < WINO_FREQS; xi++)
                wino_transpose(u + (size_t)xi * cin * C, cin, C, ut + (size_t)xi * cin * C,
                               false);
        }
    c->params_changed = false;
}

/* yt (ns*hw, cout) = Winograd conv `layer` of xt (ns*hw, cin), both
 * pixel-major, with the epilogue ep when not NULL (nn/winograd.h). A
 * gradient job keeps the transformed input for the filter gradient. */
static void wino_conv(lane_t *w, int layer, const float *xt, int cin, int cout,
                      const wino_epilogue_t *ep, float *yt, int ns)
{
    const struct fast *f = w->ctx->fast;
    int M = w->ctx->h.cfg.board_max;
    float *v = f->job == JOB_GRAD ? w->vall + (size_t)layer * f->vstride : w->wv;
    wino_input(xt, cin, M, ns, v);
    wino_gemm_forward(v, f->u + (size_t)layer * f->ustride, wino_tiles(M, ns), cin, cout, w->wm);
    wino_output(w->wm, cout, M, ns, ep, yt);
}

/* out (cout, ld) = conv3x3(x (cin, ld)) with weights wt (cout, cin*9) (a
 * conv's weights inside the context's params), no bias. */
static void fast_conv3(lane_t *w, const float *x, int cin, const float *wt, int cout,
                       float *out, int ns)
{
    const struct fast *f = w->ctx->fast;
    if (w->ctx->bf16 && f->job == JOB_FORWARD) {
        gemm_bf16_conv3(w->ctx->bf16, w->idx, (size_t)(wt - w->ctx->h.params), cin, cout, x,
                        out, ns);
        return;
    }
    int M = w->ctx->h.cfg.board_max, ld = ns * M * M, layer = conv_layer(w->ctx, wt);
    switch (f->algo[layer]) {
    case CONV_WINOGRAD:
        wino_transpose(x, cin, ld, w->xt, false);
        wino_conv(w, layer, w->xt, cin, cout, NULL, w->yt, ns);
        wino_transpose(w->yt, ld, cout, out, false);
        return;
    case CONV_DIRECT:
        im2col3(x, cin, ld, M, 0, ns, w->col);
        sgemm_run(false, false, cout, ld, cin * 9, 1.0f, wt, cin * 9, w->col, ld, 0.0f, out,
                  ld);
        return;
    }
}

/* Sum of r[0..n), in 16 partial sums (so it vectorizes). */
static float row_sum(const float *r, int n)
{
    float acc[16] = {0}, s = 0.0f;
    int i = 0;
    for (; i + 16 <= n; i += 16)
        for (int l = 0; l < 16; l++)
            acc[l] += r[i + l];
    for (; i < n; i++)
        s += r[i];
    for (int l = 0; l < 16; l++)
        s += acc[l];
    return s;
}

/* Gradients of fast_conv3 given dz (cout, ld): dw (cout, cin*9) += ...
 * (Winograd convs: into the lane's du, turned into dw at the end of the
 * batch), db (cout) += row sums, dx (cin, ld) += ... when dx is not NULL. */
static void fast_conv3_back(lane_t *w, const float *x, int cin, const float *wt, int cout,
                            const float *dz, float *dw, float *db, float *dx, int ns)
{
    const struct fast *f = w->ctx->fast;
    int M = w->ctx->h.cfg.board_max, ld = ns * M * M, layer = conv_layer(w->ctx, wt);
    for (int co = 0; co < cout; co++)
        db[co] += row_sum(dz + (size_t)co * ld, ld);
    if (f->algo[layer] == CONV_WINOGRAD) {
        /* x's transformed tiles are in vall, from the forward of this piece */
        int nt = wino_tiles(M, ns);
        wino_transpose(dz, cout, ld, w->yt, false);
        wino_output_adjoint(w->yt, cout, M, ns, w->wm);
        wino_gemm_filter(w->vall + (size_t)layer * f->vstride, w->wm, nt, cin, cout,
                         w->du + (size_t)layer * f->ustride);
        if (!dx)
            return;
        wino_gemm_data(w->wm, f->ut + (size_t)layer * f->ustride, nt, cin, cout, w->wv);
        wino_input_adjoint(w->wv, cin, M, ns, w->xt);
        wino_transpose(w->xt, ld, cin, dx, true);
        return;
    }
    im2col3(x, cin, ld, M, 0, ns, w->col);
    sgemm_run(false, true, cout, cin * 9, ld, 1.0f, dz, ld, w->col, ld, 1.0f, dw, cin * 9);
    if (!dx)
        return;
    sgemm_run(true, false, cin * 9, ld, cout, 1.0f, wt, cin * 9, dz, ld, 0.0f, w->col, ld);
    col2im3(w->col, cin, ld, M, 0, ns, dx);
}

/* Activations of the chunk: a0, then per block h and y. Forward-only
 * runs rotate three buffers; training keeps them all for backward. */
static float *act_a0(lane_t *w, bool all)
{
    (void)all;
    return all ? w->actall : w->act3;
}
static float *act_h(lane_t *w, bool all, int b, size_t csz)
{
    return all ? w->actall + (1 + 2 * (size_t)b) * csz : w->act3 + 2 * csz;
}
static float *act_y(lane_t *w, bool all, int b, size_t csz)
{
    return all ? w->actall + (2 + 2 * (size_t)b) * csz : w->act3 + (size_t)((b + 1) % 2) * csz;
}

static void fast_forward_chunk(lane_t *w, bool all)
{
    nn_ctx_t *c = w->ctx;
    const struct fast *f = c->fast;
    const nn_config_t *cf = &c->h.cfg;
    const nn_layout_t *L = &c->h.lay;
    const float *W = c->h.params;
    int M = cf->board_max, hw = M * M, P = cf->in_planes, C = cf->channels;
    int Hp = cf->policy_head, Hv = cf->value_head, Vh = cf->value_hidden;
    int ns = w->n, ld = ns * hw;
    size_t csz = (size_t)C * f->pcap * hw;
    const float *in = f->in + (size_t)w->i0 * P * hw;
    for (int s = 0; s < ns; s++) {
        const float *is = in + (size_t)s * P * hw;
        int cnt = 0;
        for (int p = 0; p < P; p++)
            memcpy(w->x0 + (size_t)p * ld + s * hw, is + (size_t)p * hw, sizeof(float) * hw);
        for (int q = 0; q < hw; q++) {
            bool on = nn_in_onboard(is, hw, q);
            w->mask[s * hw + q] = on ? 1.0f : 0.0f;
            w->legal[s * hw + q] = nn_in_legal(is, hw, q) ? 1.0f : 0.0f;
            cnt += on;
        }
        w->cnt[s] = (float)cnt;
    }
    /* pm: the trunk is pixel-major (see struct fast); the input conv's
     * channel-major output goes through the h slot, free until block 0 */
    bool pm = f->pm_trunk && !all && !c->bf16;
    float *a0 = act_a0(w, all), *a0c = pm ? act_h(w, all, 0, csz) : a0;
    fast_conv3(w, w->x0, P, W + L->in_w, C, a0c, ns);
    bias_relu_mask(a0c, C, ld, ld, W + L->in_b, w->mask);
    if (pm)
        wino_transpose(a0c, C, ld, a0, false);
    const float *x = a0;
    for (int b = 0; b < cf->blocks; b++) {
        const float *w1 = W + L->blocks + (size_t)b * L->block_stride;
        const float *b1 = w1 + (size_t)C * C * 9, *w2 = b1 + C, *b2 = w2 + (size_t)C * C * 9;
        float *h = act_h(w, all, b, csz), *y = act_y(w, all, b, csz);
        if (pm) {
            wino_epilogue_t e1 = {b1, NULL, w->mask}, e2 = {b2, x, w->mask};
            wino_conv(w, 1 + 2 * b, x, C, C, &e1, h, ns);
            wino_conv(w, 2 + 2 * b, h, C, C, &e2, y, ns);
            x = y;
            continue;
        }
        fast_conv3(w, x, C, w1, C, h, ns);
        bias_relu_mask(h, C, ld, ld, b1, w->mask);
        fast_conv3(w, h, C, w2, C, y, ns);
        for (int ch = 0; ch < C; ch++) {
            float *r = y + (size_t)ch * ld, bc = b2[ch];
            const float *xr = x + (size_t)ch * ld;
            for (int i = 0; i < ld; i++) {
                float v = r[i] + bc + xr[i];
                r[i] = v > 0.0f ? v * w->mask[i] : 0.0f;
            }
        }
        x = y;
    }
    /* policy head (x is (C, ld), or (ld, C) when pm) */
    sgemm_run(false, pm, Hp, ld, C, 1.0f, W + L->pol_w1, C, x, pm ? C : ld, 0.0f, w->p1, ld);
    bias_relu_mask(w->p1, Hp, ld, ld, W + L->pol_b1, w->mask);
    int K = f->job == JOB_FORWARD ? 1 : cf->policy_outputs;   /* the search needs channel 0 */
    sgemm_run(false, false, K, ld, Hp, 1.0f, W + L->pol_w2, Hp, w->p1, ld, 0.0f, w->logit, ld);
    for (int k = 0; k < K; k++) {
        float *lg = w->logit + (size_t)k * ld, b2 = W[L->pol_b2 + k];
        for (int i = 0; i < ld; i++)
            lg[i] += b2;
    }
    for (int s = 0; s < ns && f->job == JOB_FORWARD; s++) {
        float *lg = w->logit + s * hw;
        const float *lm = w->legal + s * hw;
        float mx = -INFINITY, sum = 0.0f;
        for (int q = 0; q < hw; q++)
            if (lm[q] > 0 && lg[q] > mx)
                mx = lg[q];
        float *pol = f->policy + (size_t)(w->i0 + s) * hw;
        for (int q = 0; q < hw; q++) {
            pol[q] = lm[q] > 0 ? expf(lg[q] - mx) : 0.0f;
            sum += pol[q];
        }
        float inv = sum > 0.0f ? 1.0f / sum : 0.0f;
        for (int q = 0; q < hw; q++)
            pol[q] *= inv;
    }
    /* value head */
    sgemm_run(false, pm, Hv, ld, C, 1.0f, W + L->val_w1, C, x, pm ? C : ld, 0.0f, w->v1, ld);
    bias_relu_mask(w->v1, Hv, ld, ld, W + L->val_b1, w->mask);
    int Hf = nn_value_features(cf);
    for (int s = 0; s < ns; s++) {
        float inv = w->cnt[s] > 0 ? 1.0f / w->cnt[s] : 0.0f, *pooled = w->pooled + s * Hf;
        for (int k = 0; k < Hv; k++) {
            const float *r = w->v1 + (size_t)k * ld + s * hw;
            float sum = 0.0f, mx = 0.0f;   /* relu'd and masked: off-board points are 0 */
            for (int q = 0; q < hw; q++) {
                sum += r[q];
                mx = r[q] > mx ? r[q] : mx;
            }
            pooled[k] = sum * inv;
            if (Hf > Hv)
                pooled[Hv + k] = mx;
        }
        for (int j = 0; j < Vh; j++) {
            float sum = W[L->val_fc1_b + j];
            const float *wr = W + L->val_fc1_w + (size_t)j * Hf;
            for (int k = 0; k < Hf; k++)
                sum += wr[k] * pooled[k];
            w->f1[s * Vh + j] = sum > 0.0f ? sum : 0.0f;
        }
        float *vl = w->vl + 3 * s;
        for (int o = 0; o < 3; o++) {
            float sum = W[L->val_fc2_b + o];
            const float *wr = W + L->val_fc2_w + (size_t)o * Vh;
            for (int j = 0; j < Vh; j++)
                sum += wr[j] * w->f1[s * Vh + j];
            vl[o] = sum;
        }
        if (f->job == JOB_FORWARD) {
            float mx = fmaxf(vl[0], fmaxf(vl[1], vl[2])), e[3], es = 0.0f;
            for (int o = 0; o < 3; o++)
                es += (e[o] = expf(vl[o] - mx));
            for (int o = 0; o < 3; o++)
                f->value[3 * (w->i0 + s) + o] = e[o] / es;
        }
    }
}

/* The value head's max of one channel r (hw points, relu'd and masked)
 * passes gradient g to its first maximal point, where r > 0. */
static void value_max_back(const float *r, int hw, float g, float *dr)
{
    int arg = 0;
    for (int q = 1; q < hw; q++)
        arg = r[q] > r[arg] ? q : arg;
    if (r[arg] > 0.0f)
        dr[arg] += g;
}

/* Losses of the chunk after fast_forward_chunk; with backward, this
 * thread's gradient sum (scaled by 1 / batch) into w->grad. */
static void fast_backward_chunk(lane_t *w, bool backward)
{
    nn_ctx_t *c = w->ctx;
    const struct fast *f = c->fast;
    const nn_config_t *cf = &c->h.cfg;
    const nn_layout_t *L = &c->h.lay;
    const float *W = c->h.params;
    float *G = w->grad;
    int M = cf->board_max, hw = M * M, P = cf->in_planes, C = cf->channels;
    int Hp = cf->policy_head, Hv = cf->value_head, Vh = cf->value_hidden;
    int ns = w->n, ld = ns * hw;
    size_t csz = (size_t)C * f->pcap * hw;
    float scale = 1.0f / (float)f->n;
    float *dlogit = w->logit;   /* turned into d(loss)/d(logit) in place */
    int K = cf->policy_outputs;
    double lp[NN_MAX_POLICY_OUTPUTS] = {0}, lv = 0.0;
    for (int s = 0; s < ns; s++) {
        const float *lm = w->legal + s * hw;
        for (int k = 0; k < K; k++) {
            float *lg = w->logit + (size_t)k * ld + s * hw;
            const float *pt = f->pt + ((size_t)(w->i0 + s) * K + k) * hw;
            float mx = -INFINITY;
            double sum = 0.0, T = 0.0, dot = 0.0;
            for (int q = 0; q < hw; q++)
                if (lm[q] > 0) {
                    mx = lg[q] > mx ? lg[q] : mx;
                    T += pt[q];
                    dot += (double)pt[q] * lg[q];
                }
            if (mx > -INFINITY) {
                for (int q = 0; q < hw; q++)
                    if (lm[q] > 0)
                        sum += expf(lg[q] - mx);
                lp[k] += T * (mx + log(sum)) - dot;
            }
            float inv = sum > 0 ? (float)(1.0 / sum) : 0.0f, Tf = (float)T;
            float sk = scale * f->pw[k];
            for (int q = 0; q < hw; q++)
                lg[q] = lm[q] > 0 ? sk * (expf(lg[q] - mx) * inv * Tf - pt[q]) : 0.0f;
        }
        float *vl = w->vl + 3 * s;
        const float *vt = f->vt + 3 * (size_t)(w->i0 + s);
        float vmx = fmaxf(vl[0], fmaxf(vl[1], vl[2])), e[3], es = 0.0f, Tv = 0.0f;
        double vdot = 0.0;
        for (int o = 0; o < 3; o++) {
            es += (e[o] = expf(vl[o] - vmx));
            Tv += vt[o];
            vdot += (double)vt[o] * vl[o];
        }
        lv += Tv * (vmx + log(es)) - vdot;
        for (int o = 0; o < 3; o++)
            vl[o] = scale * (e[o] / es * Tv - vt[o]);   /* d(loss)/d(value logit) */
    }
    for (int k = 0; k < K; k++)
        w->lp[k] += lp[k];
    w->lv += lv;
    if (!backward)
        return;

    bool all = true;
    const float *x = cf->blocks ? act_y(w, all, cf->blocks - 1, csz) : act_a0(w, all);
    float *dA = w->dA, *dB = w->dB;
    /* policy head */
    for (int j = 0; j < Hp; j++) {
        const float *r = w->p1 + (size_t)j * ld;
        float *dr = w->dp1 + (size_t)j * ld;
        for (int k = 0; k < K; k++) {
            const float *dl = dlogit + (size_t)k * ld;
            float wk = W[L->pol_w2 + (size_t)k * Hp + j], gs = 0.0f;
            for (int i = 0; i < ld; i++) {
                gs += r[i] * dl[i];
                float d = r[i] > 0.0f ? wk * dl[i] : 0.0f;
                dr[i] = k ? dr[i] + d : d;
            }
            G[L->pol_w2 + (size_t)k * Hp + j] += gs;
        }
    }
    for (int k = 0; k < K; k++)
        G[L->pol_b2 + k] += row_sum(dlogit + (size_t)k * ld, ld);
    for (int k = 0; k < Hp; k++)
        G[L->pol_b1 + k] += row_sum(w->dp1 + (size_t)k * ld, ld);
    sgemm_run(false, true, Hp, C, ld, 1.0f, w->dp1, ld, x, ld, 1.0f, G + L->pol_w1, C);
    sgemm_run(true, false, C, ld, Hp, 1.0f, W + L->pol_w1, C, w->dp1, ld, 0.0f, dA, ld);
    /* value head */
    int Hf = nn_value_features(cf);
    float *dpooled = w->small, *df1 = dpooled + (size_t)f->pcap * Hf;
    for (int s = 0; s < ns; s++) {
        const float *dvl = w->vl + 3 * s, *f1 = w->f1 + (size_t)s * Vh;
        const float *pooled = w->pooled + (size_t)s * Hf;
        float *d1 = df1 + (size_t)s * Vh, *dp = dpooled + (size_t)s * Hf;
        for (int j = 0; j < Vh; j++)
            d1[j] = 0.0f;
        for (int o = 0; o < 3; o++) {
            G[L->val_fc2_b + o] += dvl[o];
            for (int j = 0; j < Vh; j++) {
                G[L->val_fc2_w + (size_t)o * Vh + j] += dvl[o] * f1[j];
                d1[j] += dvl[o] * W[L->val_fc2_w + (size_t)o * Vh + j];
            }
        }
        for (int k = 0; k < Hf; k++)
            dp[k] = 0.0f;
        for (int j = 0; j < Vh; j++) {
            float g = f1[j] > 0.0f ? d1[j] : 0.0f;
            G[L->val_fc1_b + j] += g;
            for (int k = 0; k < Hf; k++) {
                G[L->val_fc1_w + (size_t)j * Hf + k] += g * pooled[k];
                dp[k] += g * W[L->val_fc1_w + (size_t)j * Hf + k];
            }
        }
        float inv = w->cnt[s] > 0 ? 1.0f / w->cnt[s] : 0.0f;
        for (int k = 0; k < Hv; k++) {
            const float *r = w->v1 + (size_t)k * ld + s * hw;
            float *dr = w->dv1 + (size_t)k * ld + s * hw, g = dp[k] * inv;
            for (int q = 0; q < hw; q++)
                dr[q] = r[q] > 0.0f ? g : 0.0f;
            if (Hf > Hv)
                value_max_back(r, hw, dp[Hv + k], dr);
        }
    }
    for (int k = 0; k < Hv; k++)
        G[L->val_b1 + k] += row_sum(w->dv1 + (size_t)k * ld, ld);
    sgemm_run(false, true, Hv, C, ld, 1.0f, w->dv1, ld, x, ld, 1.0f, G + L->val_w1, C);
    sgemm_run(true, false, C, ld, Hv, 1.0f, W + L->val_w1, C, w->dv1, ld, 1.0f, dA, ld);
    /* trunk, last block first; dA holds d(block output) */
    size_t cw = (size_t)C * C * 9;
    for (int b = cf->blocks - 1; b >= 0; b--) {
        const float *bw = W + L->blocks + (size_t)b * L->block_stride;
        float *gb = G + L->blocks + (size_t)b * L->block_stride;
        const float *h = act_h(w, all, b, csz), *y = act_y(w, all, b, csz);
        const float *xin = b ? act_y(w, all, b - 1, csz) : act_a0(w, all);
        for (size_t i = 0; i < (size_t)C * ld; i++)
            dA[i] = y[i] > 0.0f ? dA[i] : 0.0f;
        memset(dB, 0, sizeof(float) * (size_t)C * ld);
        fast_conv3_back(w, h, C, bw + cw + C, C, dA, gb + cw + C, gb + 2 * cw + C, dB, ns);
        for (size_t i = 0; i < (size_t)C * ld; i++)
            dB[i] = h[i] > 0.0f ? dB[i] : 0.0f;
        fast_conv3_back(w, xin, C, bw, C, dB, gb, gb + cw, dA, ns);
    }
    const float *a0 = act_a0(w, all);
    for (size_t i = 0; i < (size_t)C * ld; i++)
        dA[i] = a0[i] > 0.0f ? dA[i] : 0.0f;
    fast_conv3_back(w, w->x0, P, W + L->in_w, C, dA, G + L->in_w, G + L->in_b, NULL, ns);
}

static void lane_run(lane_t *w)
{
    struct fast *f = w->ctx->fast;
    memset(w->lp, 0, sizeof w->lp);
    w->lv = 0.0;
    if (w->n <= 0) {
        if (f->job == JOB_GRAD)
            memset(w->grad, 0, sizeof(float) * w->ctx->h.lay.total);
        return;
    }
    /* The chunk runs in pieces of a few samples whose activations stay in
     * L2; gradients and losses accumulate over the pieces. */
    int i0 = w->i0, n = w->n;
    bool train = f->job != JOB_FORWARD;
    int piece = train ? f->tpiece : f->piece;
    if (f->job == JOB_GRAD) {
        memset(w->grad, 0, sizeof(float) * w->ctx->h.lay.total);
        if (w->du)
            memset(w->du, 0, sizeof(float) * f->ustride * f->nconv);
    }
    for (int k = 0; k < n; k += piece) {
        w->i0 = i0 + k;
        w->n = n - k < piece ? n - k : piece;
        fast_forward_chunk(w, train);
        if (train)
            fast_backward_chunk(w, f->job == JOB_GRAD);
    }
    w->i0 = i0;
    w->n = n;
    if (f->job == JOB_GRAD) {
        int C = w->ctx->h.cfg.channels;
        for (int l = 0; l < f->nconv; l++)
            if (f->algo[l] == CONV_WINOGRAD)
                wino_filter_adjoint(w->du + (size_t)l * f->ustride,
                                    l ? C : w->ctx->h.cfg.in_planes, C,
                                    w->grad + conv_offset(w->ctx, l));
    }
}

static void *lane_main(void *arg)
{
    lane_t *w = arg;
    struct fast *f = w->ctx->fast;
    unsigned seen = 0;
    for (;;) {
        pthread_mutex_lock(&f->mu);
        while (f->gen == seen && !f->quit)
            pthread_cond_wait(&f->go, &f->mu);
        if (f->quit) {
            pthread_mutex_unlock(&f->mu);
            return NULL;
        }
        seen = f->gen;
        pthread_mutex_unlock(&f->mu);
        lane_run(w);
        pthread_mutex_lock(&f->mu);
        if (--f->pending == 0)
            pthread_cond_signal(&f->done);
        pthread_mutex_unlock(&f->mu);
    }
}

/* Split n samples across the threads and run the job on all of them. */
static void fast_run(nn_ctx_t *c, job_t job, const float *in, const float *pt, const float *vt,
                     int n, float *policy, float *value)
{
    struct fast *f = c->fast;
    assert(n >= 0 && n <= c->h.max_batch);
    f->job = job;
    f->in = in;
    f->pt = pt;
    f->vt = vt;
    f->n = n;
    f->policy = policy;
    f->value = value;
    fast_prepare(c);
    int per = (n + f->nthreads - 1) / f->nthreads;
    for (int t = 0; t < f->nthreads; t++) {
        int i0 = t * per;
        f->w[t].i0 = i0 < n ? i0 : n;
        f->w[t].n = i0 >= n ? 0 : (n - i0 < per ? n - i0 : per);
        assert(f->w[t].n <= f->cap);
    }
    if (f->nthreads > 1) {
        pthread_mutex_lock(&f->mu);
        f->pending = f->nthreads - 1;
        f->gen++;
        pthread_cond_broadcast(&f->go);
        pthread_mutex_unlock(&f->mu);
    }
    lane_run(&f->w[0]);
    if (f->nthreads > 1) {
        pthread_mutex_lock(&f->mu);
        while (f->pending > 0)
            pthread_cond_wait(&f->done, &f->mu);
        pthread_mutex_unlock(&f->mu);
    }
}

static int alloc_all(float **ptrs[], const size_t *sizes, int n)
{
    for (int i = 0; i < n; i++) {
        if (*ptrs[i])
            continue;   /* kept from an earlier attempt that ran out of memory */
        *ptrs[i] = calloc(sizes[i] ? sizes[i] : 1, sizeof(float));
        if (!*ptrs[i])
            return -1;
    }
    return 0;
}

static bool any_winograd(const struct fast *f)
{
    for (int l = 0; l < f->nconv; l++)
        if (f->algo[l] == CONV_WINOGRAD)
            return true;
    return false;
}

static int lane_alloc_forward(lane_t *w, const nn_config_t *cf, const struct fast *f)
{
    int cap = f->pcap;
    size_t hw = (size_t)cf->board_max * cf->board_max, nhw = (size_t)cap * hw;
    size_t C = (size_t)cf->channels, P = (size_t)cf->in_planes, cmax = P > C ? P : C;
    size_t tiles = any_winograd(f) ? (size_t)wino_tiles(cf->board_max, cap) : 0;
    float **ptrs[] = {&w->x0, &w->mask, &w->legal, &w->cnt, &w->act3, &w->col, &w->p1,
                      &w->logit, &w->v1, &w->pooled, &w->f1, &w->vl, &w->xt, &w->yt,
                      &w->wv, &w->wm};
    size_t sizes[] = {P * nhw, nhw, nhw, (size_t)cap, 3 * C * nhw, cmax * 9 * nhw,
                      (size_t)cf->policy_head * nhw, (size_t)cf->policy_outputs * nhw,
                      (size_t)cf->value_head * nhw,
                      (size_t)cap * nn_value_features(cf), (size_t)cap * cf->value_hidden,
                      (size_t)cap * 3, tiles ? cmax * nhw : 0, tiles ? C * nhw : 0,
                      tiles ? WINO_FREQS * wino_fstride((int)tiles, (int)cmax) : 0,
                      tiles ? WINO_FREQS * wino_fstride((int)tiles, (int)C) : 0};
    return alloc_all(ptrs, sizes, (int)(sizeof sizes / sizeof sizes[0]));
}

static int lane_alloc_train(lane_t *w, const nn_config_t *cf, const struct fast *f,
                            size_t nparams)
{
    size_t hw = (size_t)cf->board_max * cf->board_max, nhw = (size_t)f->pcap * hw;
    size_t C = (size_t)cf->channels, cap = (size_t)f->pcap;
    float **ptrs[] = {&w->actall, &w->dA, &w->dB, &w->dp1, &w->dv1, &w->small, &w->grad,
                      &w->du, &w->vall};
    size_t sizes[] = {(1 + 2 * (size_t)cf->blocks) * C * nhw, C * nhw, C * nhw,
                      (size_t)cf->policy_head * nhw, (size_t)cf->value_head * nhw,
                      cap * (nn_value_features(cf) + cf->value_hidden + 3), nparams,
                      any_winograd(f) ? f->ustride * f->nconv : 0, f->vstride * f->nconv};
    return alloc_all(ptrs, sizes, (int)(sizeof sizes / sizeof sizes[0]));
}

static void lane_release(lane_t *w)
{
    float *all[] = {w->x0, w->mask, w->legal, w->cnt, w->act3, w->actall, w->col, w->p1,
                    w->logit, w->v1, w->pooled, w->f1, w->vl, w->dA, w->dB, w->dp1,
                    w->dv1, w->small, w->grad, w->xt, w->yt, w->wv, w->wm, w->du,
                    w->vall};
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        free(all[i]);
}

static void fast_free(nn_ctx_t *c)
{
    if (!c)
        return;
    struct fast *f = c->fast;
    if (f) {
        pthread_mutex_lock(&f->mu);
        f->quit = true;
        pthread_cond_broadcast(&f->go);
        pthread_mutex_unlock(&f->mu);
        for (int t = 0; t < f->nthreads; t++)
            if (f->w[t].started)
                pthread_join(f->w[t].tid, NULL);
        for (int t = 0; t < f->nthreads; t++)
            lane_release(&f->w[t]);
        pthread_mutex_destroy(&f->mu);
        pthread_cond_destroy(&f->go);
        pthread_cond_destroy(&f->done);
        free(f->w);
        free(f->algo);
        free(f->u);
        free(f->ut);
        free(f);
    }
    gemm_bf16_free(c->bf16);
    nn_host_free(&c->h);
    free(c);
}

/* Auto picks Winograd for convs with at least this many input and output
 * channels. */
#define WINO_MIN_CHANNELS 16
/* Columns (samples * M * M) per piece when Winograd runs. */
#ifndef WINO_PIECE_COLS
#define WINO_PIECE_COLS 1800
#endif

/* Which algorithm each 3x3 conv uses: env GOMOKU_CONV=direct|winograd|auto
 * (auto, the default: Winograd for the trunk convs, direct for the input
 * conv, whose few input planes make Winograd's products too thin).
 * Allocates the Winograd filters. 0, or -1 with err set. */
static int conv_plan(nn_ctx_t *c, char *err, size_t errlen)
{
    struct fast *f = c->fast;
    const char *env = getenv("GOMOKU_CONV");
    int C = c->h.cfg.channels, P = c->h.cfg.in_planes;
    bool all = false, none = false;
    if (env && *env && strcmp(env, "auto") != 0) {
        all = strcmp(env, "winograd") == 0;
        none = strcmp(env, "direct") == 0;
        if (!all && !none) {
            snprintf(err, errlen, "cpu: GOMOKU_CONV=%s: expected direct, winograd or auto", env);
            return -1;
        }
    }
    f->nconv = 1 + 2 * c->h.cfg.blocks;
    f->algo = calloc((size_t)f->nconv, sizeof *f->algo);
    if (!f->algo)
        goto out_nomem;
    for (int l = 0; l < f->nconv; l++) {
        int cin = l ? C : P;
        bool wino = all || (!none && cin >= WINO_MIN_CHANNELS && C >= WINO_MIN_CHANNELS);
        f->algo[l] = wino ? CONV_WINOGRAD : CONV_DIRECT;
    }
    f->pm_trunk = c->h.cfg.blocks > 0;
    for (int l = 1; l < f->nconv; l++)
        f->pm_trunk = f->pm_trunk && f->algo[l] == CONV_WINOGRAD;
    if (any_winograd(f)) {
        f->ustride = (size_t)WINO_FREQS * (P > C ? P : C) * C;
        f->u = malloc(sizeof(float) * f->ustride * f->nconv);
        f->ut = malloc(sizeof(float) * f->ustride * f->nconv);
        if (!f->u || !f->ut)
            goto out_nomem;
    }
    c->params_changed = true;
    return 0;

out_nomem:
    snprintf(err, errlen, "cpu: out of memory for the conv plan");
    return -1;
}

static nn_ctx_t *fast_create(const nn_model_t *m, int max_batch, int device, int threads,
                             char *err, size_t errlen)
{
    (void)device;
    nn_ctx_t *c = calloc(1, sizeof *c);
    if (!c)
        goto out_nomem;
    int host = nn_host_init(&c->h, m, max_batch);
    struct fast *f = c->fast = calloc(1, sizeof *f);
    if (f) {
        pthread_mutex_init(&f->mu, NULL);
        pthread_cond_init(&f->go, NULL);
        pthread_cond_init(&f->done, NULL);
    }
    if (host != 0 || !f)
        goto out_nomem;
    if (conv_plan(c, err, errlen) != 0)
        goto out_free_ctx;
    int t = threads > 0 ? threads : sgemm_cores();
    if (t > max_batch)
        t = max_batch;
    if (t > 64)
        t = 64;
    f->nthreads = t;
    f->cap = (max_batch + t - 1) / t;
    /* Each thread runs its chunk in pieces of a few samples so activations
     * stay in L2: forward pieces of ~768 columns (3 samples on 15x15) ran
     * 6x64 batch 64 at 0.79 of the SGEMM peak vs 0.64 for whole chunks;
     * training pieces of ~1024 columns keep the backward workspace small. */
    int hw = m->cfg.board_max * m->cfg.board_max;
    f->piece = 768 / hw < 1 ? 1 : 768 / hw;
    f->tpiece = 1024 / hw < 1 ? 1 : 1024 / hw;
    if (any_winograd(f)) {
        /* pieces of 8 samples on 15x15 for both: 900 to 3600 columns
         * measured the same within noise, and training keeps every
         * conv's transformed input of a piece (vall) */
        f->piece = WINO_PIECE_COLS / hw < 1 ? 1 : WINO_PIECE_COLS / hw;
        f->tpiece = f->piece;
    }
    f->piece = f->piece > f->cap ? f->cap : f->piece;
    f->tpiece = f->tpiece > f->cap ? f->cap : f->tpiece;
    f->pcap = f->piece > f->tpiece ? f->piece : f->tpiece;
    if (any_winograd(f)) {
        int P = m->cfg.in_planes, C = m->cfg.channels;
        int tiles = wino_tiles(m->cfg.board_max, f->pcap);
        f->vstride = WINO_FREQS * wino_fstride(tiles, P > C ? P : C);
    }
    f->w = calloc((size_t)t, sizeof *f->w);
    if (!f->w)
        goto out_nomem;
    for (int i = 0; i < t; i++) {
        f->w[i].ctx = c;
        f->w[i].idx = i;
        if (lane_alloc_forward(&f->w[i], &m->cfg, f) != 0)
            goto out_nomem;
    }
    for (int i = 1; i < t; i++) {
        if (pthread_create(&f->w[i].tid, NULL, lane_main, &f->w[i]) != 0) {
            snprintf(err, errlen, "cpu: cannot start thread %d of %d", i + 1, t);
            goto out_free_ctx;
        }
        f->w[i].started = true;
    }
    return c;

    /* every failure ends here (c may still be NULL: fast_free takes it) */
out_nomem:
    snprintf(err, errlen, "cpu: out of memory for batch %d", max_batch);
out_free_ctx:
    fast_free(c);
    return NULL;
}

static void fast_forward(nn_ctx_t *c, const float *in, int n, float *policy, float *value)
{
    if (c->bf16 && c->bf16_stale)
        gemm_bf16_sync(c->bf16, c->h.params);
    c->bf16_stale = false;
    fast_run(c, JOB_FORWARD, in, NULL, NULL, n, policy, value);
}

/* The backward workspace is allocated on the first training call; 0, or
 * -1 with err set (what was allocated stays, and a later call retries). */
static int fast_train_ready(nn_ctx_t *c, char *err, size_t errlen)
{
    struct fast *f = c->fast;
    if (f->train_ready)
        return 0;
    for (int t = 0; t < f->nthreads; t++)
        if (lane_alloc_train(&f->w[t], &c->h.cfg, f, c->h.lay.total) != 0) {
            snprintf(err, errlen, "cpu: out of memory for the training workspace (batch %d)",
                     c->h.max_batch);
            return -1;
        }
    f->train_ready = true;
    return 0;
}

/* Losses and gradient by the fast path with policy loss weights pw. */
static int fast_loss_grad_w(nn_ctx_t *c, const float *in, const float *pt, const float *vt,
                            int n, float wd, const float *pw, nn_losses_t *out, float *grad,
                            char *err, size_t errlen)
{
    struct fast *f = c->fast;
    if (n == 0)
        return nn_empty_batch(c->h.lay.total, out, grad);
    if (fast_train_ready(c, err, errlen) != 0)
        return -1;
    f->pw = pw;
    fast_run(c, grad ? JOB_GRAD : JOB_LOSS, in, pt, vt, n, NULL, NULL);
    double lp[NN_MAX_POLICY_OUTPUTS] = {0}, lv = 0.0, l2 = 0.0;
    for (int t = 0; t < f->nthreads; t++) {
        for (int k = 0; k < NN_MAX_POLICY_OUTPUTS; k++)
            lp[k] += f->w[t].lp[k];
        lv += f->w[t].lv;
    }
    size_t np = c->h.lay.total;
    if (grad) {
        memcpy(grad, f->w[0].grad, np * sizeof(float));
        for (int t = 1; t < f->nthreads; t++) {
            const float *g = f->w[t].grad;
            for (size_t i = 0; i < np; i++)
                grad[i] += g[i];
        }
    }
    for (int t = 0; t < nn_param_tensors(&c->h.cfg); t++) {
        if (!nn_param_tensor_is_weight(&c->h.cfg, t))
            continue;
        nn_tensor_info_t ti = nn_param_tensor(&c->h.cfg, t);
        for (size_t i = ti.offset; i < ti.offset + ti.count; i++) {
            l2 += (double)c->h.params[i] * c->h.params[i];
            if (grad)
                grad[i] += 2.0f * wd * c->h.params[i];
        }
    }
    l2 *= wd;
    lv = n ? lv / n : 0.0;
    nn_ref_losses_total(&c->h.cfg, pw, lp, lv, l2, n, out);
    return 0;
}

static int fast_loss_grad(nn_ctx_t *c, const float *in, const float *pt, const float *vt,
                          int n, float wd, nn_losses_t *out, float *grad, char *err,
                          size_t errlen)
{
    float pw[NN_MAX_POLICY_OUTPUTS];
    nn_train_policy_weights(NULL, pw);
    return fast_loss_grad_w(c, in, pt, vt, n, wd, pw, out, grad, err, errlen);
}

/* Gradient into c->h.grad, then the Nesterov step. An empty batch is no step
 * (as nn_net_train_step and the other backends). */
static int fast_train_step(nn_ctx_t *c, const float *in, const float *pt, const float *vt,
                           int n, const nn_train_opts_t *o, nn_losses_t *out, char *err,
                           size_t errlen)
{
    if (n == 0)
        return nn_empty_batch(c->h.lay.total, out, NULL);
    float pw[NN_MAX_POLICY_OUTPUTS];
    nn_train_policy_weights(o, pw);
    if (fast_loss_grad_w(c, in, pt, vt, n, o->weight_decay, pw, out, c->h.grad, err, errlen) != 0)
        return -1;
    nn_ref_sgd_step(c->h.params, c->h.grad, c->h.mom, c->h.lay.total, o->lr, o->momentum);
    c->bf16_stale = true;
    c->params_changed = true;
    return 0;
}

/* auto's speed rule, from measurements on an AVX-512-BF16 CPU
 * (docs/BENCHMARKS.md, "Pixel-major trunk"): the fp32 forward beats the
 * bf16 direct kernel when the trunk is pixel-major Winograd with the
 * AVX-512 product kernel, at least 48 channels, and the 4x4 tiles waste
 * little of the board (M^2 at least 3/4 of the covered (4T)^2: 15x15 0.88,
 * 19x19 0.90, 11x11 0.84; not 9x9 0.56 or 13x13 0.66, where the two ran
 * even or bf16 won). */
static bool fp32_faster(const nn_ctx_t *c)
{
    int M = c->h.cfg.board_max, side = 4 * wino_tiles_side(M);
    return c->fast->pm_trunk && wino_forward_fast(c->h.cfg.channels) && c->h.cfg.channels >= 48 &&
           4 * M * M >= 3 * side * side;
}

/* fp32, bf16 (the CPU must have AVX-512 BF16), or auto: the faster of the
 * two for this net here (fp32_faster), the caller having checked bf16's
 * accuracy. */
static int fast_set_precision(nn_ctx_t *c, nn_precision_t p, char *msg, size_t msglen)
{
    if (msg && msglen)
        msg[0] = '\0';
    if (p == NN_PRECISION_AUTO) {
        if (fp32_faster(c)) {
            snprintf(msg, msglen, "faster than bf16 for this net here, Winograd trunk");
            p = NN_PRECISION_FP32;
        } else {
            p = NN_PRECISION_BF16;
        }
    }
    gemm_bf16_free(c->bf16);
    c->bf16 = p == NN_PRECISION_BF16 ? gemm_bf16_create(&c->h.cfg, c->h.params, c->fast->nthreads,
                                                        c->fast->piece, msg, msglen)
                                     : NULL;
    c->bf16_stale = false;
    if (p == NN_PRECISION_BF16 && !c->bf16)
        return -1;
    return p;
}

const nn_backend_t nn_backend_cpu = {
    .name = "cpu",
    .create = fast_create,
    .forward = fast_forward,
    .train_step = fast_train_step,
    .loss_grad = fast_loss_grad,
    .get_weights = cpu_get_weights,
    .set_weights = cpu_set_weights,
    .get_momentum = cpu_get_momentum,
    .set_momentum = cpu_set_momentum,
    .free = fast_free,
    .set_precision = fast_set_precision,
};
