/* bf16 3x3 convolutions for the CPU backend (see gemm_bf16.h).
 *
 * An implicit GEMM: out (cout, pixels) = sum over the 9 taps t of
 * W_t (cout, cin) x X shifted by tap t. X is one bf16 copy of the input
 * activations, zero-padded so that every tap is a constant offset:
 *   per sample, rows y = -1..M of stride S = M + 1 (column 0 is x = -1;
 *   x = M of a row is column 0 of the next one, so one pad column serves
 *   both sides), and channels interleaved in pairs, one uint32 per pixel
 *   holding (channel 2p, channel 2p+1), the operand layout of vdpbf16ps.
 * Outputs are computed for the M rows of S columns of each sample (the
 * pad column is computed and dropped: 1/S of the work) in tiles of
 * MR = 8 output channels x NR = 48 pixels, 24 zmm accumulators; each
 * k-step (one tap, one channel pair) loads 3 activation vectors and 8
 * broadcast weight pairs for 24 vdpbf16ps. The tile is then copied to the
 * channel-major, unpadded output rows. */
#include "nn/gemm_bf16.h"

#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define GZ_BF16_X86 1
#define TARGET_BF16 __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16")))
#endif

enum { MR = 8, NR = 48, LEAD = 16, TAIL = NR + 16 };

typedef struct conv_entry {
    size_t woff;        /* offset of the fp32 tensor (cout, cin, 3, 3) in the layout */
    int cin, cout;
    int cp;             /* channel pairs, ceil(cin / 2) */
    int rbs;            /* row blocks of MR output channels, ceil(cout / MR) */
    uint32_t *packed;   /* (rbs, 9, cp, MR) bf16 pairs, zero beyond cin / cout */
} conv_entry_t;

struct gemm_bf16 {
    int M, S;                 /* board_max, padded row stride M + 1 */
    int lanes, max_samples;
    size_t sample_stride;     /* (M + 2) * S pairs per sample */
    size_t pstride;           /* pairs per channel-pair plane of a workspace */
    int nconv;
    conv_entry_t conv[1 + 2 * NN_MAX_BLOCKS];
    uint32_t *packmem;        /* every conv's packed weights */
    uint32_t **ws;            /* per lane: (max cp, pstride) padded activations */
};

static bool pretend_off;

void gemm_bf16_pretend_unsupported(bool off) { pretend_off = off; }

bool gemm_bf16_supported(char *why, size_t whylen)
{
    static int cached = -1;   /* the CPU does not change; racing first calls agree */
    if (pretend_off) {
        if (why && whylen)
            snprintf(why, whylen, "bf16 disabled for a test");
        return false;
    }
#ifdef GZ_BF16_X86
    if (cached < 0) {
        __builtin_cpu_init();
        cached = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
                 __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512bf16");
    }
    if (!cached && why && whylen)
        snprintf(why, whylen, "this CPU lacks AVX-512 BF16 (vdpbf16ps)");
    return cached;
#else
    (void)cached;
    if (why && whylen)
        snprintf(why, whylen, "bf16 kernels are built for x86-64 only");
    return false;
#endif
}

/* fp32 -> bf16 bits, round to nearest even; NaN stays a quiet NaN. */
static uint16_t to_bf16(float v)
{
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((u >> 16) | 0x40u);
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

float gemm_bf16_round(float v)
{
    uint32_t u = (uint32_t)to_bf16(v) << 16;
    float r;
    memcpy(&r, &u, sizeof r);
    return r;
}

static void pack_conv(conv_entry_t *e, const float *params)
{
    const float *w = params + e->woff;
    uint32_t *dst = e->packed;
    for (int rb = 0; rb < e->rbs; rb++)
        for (int t = 0; t < 9; t++)
            for (int p = 0; p < e->cp; p++)
                for (int r = 0; r < MR; r++) {
                    int co = rb * MR + r, c0 = 2 * p, c1 = 2 * p + 1;
                    uint32_t lo = 0, hi = 0;
                    if (co < e->cout) {
                        lo = to_bf16(w[((size_t)co * e->cin + c0) * 9 + t]);
                        if (c1 < e->cin)
                            hi = to_bf16(w[((size_t)co * e->cin + c1) * 9 + t]);
                    }
                    *dst++ = lo | hi << 16;
                }
}

static size_t packed_size(int cin, int cout)
{
    return (size_t)(cout + MR - 1) / MR * 9 * (size_t)((cin + 1) / 2) * MR;
}

gemm_bf16_t *gemm_bf16_create(const nn_config_t *cfg, const float *params, int lanes,
                              int max_samples, char *err, size_t errlen)
{
    char why[128];
    if (!gemm_bf16_supported(why, sizeof why)) {
        snprintf(err, errlen, "bf16: %s", why);
        return NULL;
    }
    assert(lanes >= 1 && max_samples >= 1);
    gemm_bf16_t *g = calloc(1, sizeof *g);
    if (!g)
        goto out_nomem;
    nn_layout_t L;
    nn_param_layout(cfg, &L);
    int C = cfg->channels, P = cfg->in_planes;
    g->M = cfg->board_max;
    g->S = g->M + 1;
    g->lanes = lanes;
    g->max_samples = max_samples;
    g->sample_stride = (size_t)(g->M + 2) * g->S;
    g->pstride = (LEAD + (size_t)max_samples * g->sample_stride + TAIL + 15) / 16 * 16;
    g->conv[g->nconv++] = (conv_entry_t){.woff = L.in_w, .cin = P, .cout = C};
    for (int b = 0; b < cfg->blocks; b++) {
        size_t w1 = L.blocks + (size_t)b * L.block_stride;
        size_t w2 = w1 + (size_t)C * C * 9 + C;
        g->conv[g->nconv++] = (conv_entry_t){.woff = w1, .cin = C, .cout = C};
        g->conv[g->nconv++] = (conv_entry_t){.woff = w2, .cin = C, .cout = C};
    }
    size_t total = 0;
    for (int i = 0; i < g->nconv; i++)
        total += packed_size(g->conv[i].cin, g->conv[i].cout);
    g->packmem = aligned_alloc(64, (total * sizeof(uint32_t) + 63) / 64 * 64);
    g->ws = calloc((size_t)lanes, sizeof *g->ws);
    if (!g->packmem || !g->ws)
        goto out_free_g;
    uint32_t *p = g->packmem;
    for (int i = 0; i < g->nconv; i++) {
        conv_entry_t *e = &g->conv[i];
        e->cp = (e->cin + 1) / 2;
        e->rbs = (e->cout + MR - 1) / MR;
        e->packed = p;
        p += packed_size(e->cin, e->cout);
    }
    /* the pads must read as zero: calloc'd once, only interior points are
     * ever written */
    int cpmax = ((P > C ? P : C) + 1) / 2;
    for (int l = 0; l < lanes; l++) {
        g->ws[l] = calloc((size_t)cpmax * g->pstride, sizeof(uint32_t));
        if (!g->ws[l])
            goto out_free_g;
    }
    gemm_bf16_sync(g, params);
    return g;

out_free_g:
    gemm_bf16_free(g);
out_nomem:
    snprintf(err, errlen, "bf16: out of memory for the packed weights and workspace");
    return NULL;
}

void gemm_bf16_free(gemm_bf16_t *g)
{
    if (!g)
        return;
    if (g->ws)
        for (int l = 0; l < g->lanes; l++)
            free(g->ws[l]);
    free(g->ws);
    free(g->packmem);
    free(g);
}

void gemm_bf16_sync(gemm_bf16_t *g, const float *params)
{
    for (int i = 0; i < g->nconv; i++)
        pack_conv(&g->conv[i], params);
}

#ifdef GZ_BF16_X86

/* Mask of the first n (0..16) lanes. */
static inline __mmask16 first_lanes(int n) { return (__mmask16)((1u << n) - 1u); }

/* ws planes p < cp: the bf16 pairs of channels (2p, 2p+1) of x (cin, ns*M*M)
 * at the interior points of each sample's padded grid. */
TARGET_BF16 static void convert_input(const gemm_bf16_t *g, const float *x, int cin, int ns,
                                      uint32_t *ws)
{
    int M = g->M, S = g->S, hw = M * M, cp = (cin + 1) / 2;
    size_t ld = (size_t)ns * hw;
    /* pairs (a_i, b_i) from cvtne2ps(b, a) = [a0..a15 | b0..b15] */
    const __m512i inter = _mm512_set_epi16(31, 15, 30, 14, 29, 13, 28, 12, 27, 11, 26, 10, 25,
                                           9, 24, 8, 23, 7, 22, 6, 21, 5, 20, 4, 19, 3, 18, 2,
                                           17, 1, 16, 0);
    for (int p = 0; p < cp; p++) {
        const float *x0 = x + (size_t)(2 * p) * ld;
        const float *x1 = 2 * p + 1 < cin ? x0 + ld : NULL;
        for (int s = 0; s < ns; s++)
            for (int y = 0; y < M; y++) {
                const float *r0 = x0 + (size_t)s * hw + (size_t)y * M;
                const float *r1 = x1 ? x1 + (size_t)s * hw + (size_t)y * M : NULL;
                uint32_t *d = ws + (size_t)p * g->pstride + LEAD + (size_t)s * g->sample_stride +
                              (size_t)(y + 1) * S + 1;
                for (int c = 0; c < M; c += 16) {
                    __mmask16 k = first_lanes(M - c < 16 ? M - c : 16);
                    __m512 a = _mm512_maskz_loadu_ps(k, r0 + c);
                    __m512 b = r1 ? _mm512_maskz_loadu_ps(k, r1 + c) : _mm512_setzero_ps();
                    __m512i ab = (__m512i)_mm512_cvtne2ps_pbh(b, a);
                    _mm512_mask_storeu_epi32(d + c, k, _mm512_permutexvar_epi16(inter, ab));
                }
            }
    }
}

typedef struct seg {
    int u;      /* first pixel within the tile */
    int d;      /* its index within the sample's M x M plane */
    int len;
} seg_t;

/* The runs of interior pixels of tile [j0, j0 + NR) of a sample's M rows
 * of S columns (column 0 is the pad): at most NR / S + 2 of them. */
static int tile_segments(int M, int S, int j0, seg_t *seg)
{
    int n = 0, jend = j0 + NR < M * S ? j0 + NR : M * S;
    for (int j = j0; j < jend;) {
        int y = j / S, col = j % S;
        if (col == 0) {
            j++;
            continue;
        }
        int len = S - col < jend - j ? S - col : jend - j;
        seg[n++] = (seg_t){j - j0, y * M + col - 1, len};
        j += len;
    }
    return n;
}

TARGET_BF16 static void conv_tiles(const gemm_bf16_t *g, const conv_entry_t *e,
                                   const uint32_t *ws, float *out, int ns)
{
    int M = g->M, S = g->S, hw = M * M, span = M * S, cp = e->cp;
    size_t ld = (size_t)ns * hw, ps = g->pstride;
    ptrdiff_t shift[9];
    for (int t = 0; t < 9; t++)
        shift[t] = (ptrdiff_t)(t / 3 - 1) * S + (t % 3 - 1);
    float tile[MR][NR] __attribute__((aligned(64)));
    seg_t seg[NR / 2 + 2];
    for (int s = 0; s < ns; s++) {
        /* pixel j of the sample's output rows is padded point (j / S, j % S - 1) */
        const uint32_t *xs = ws + LEAD + (size_t)s * g->sample_stride + S;
        float *os = out + (size_t)s * hw;
        for (int j0 = 0; j0 < span; j0 += NR) {
            int nseg = tile_segments(M, S, j0, seg);
            for (int rb = 0; rb < e->rbs; rb++) {
                __m512 acc[MR][3];
#pragma GCC unroll 8
                for (int r = 0; r < MR; r++)
                    acc[r][0] = acc[r][1] = acc[r][2] = _mm512_setzero_ps();
                const uint32_t *a = e->packed + (size_t)rb * 9 * cp * MR;
                for (int t = 0; t < 9; t++) {
                    const uint32_t *b = xs + j0 + shift[t];
                    for (int p = 0; p < cp; p++, b += ps, a += MR) {
                        __m512bh b0 = (__m512bh)_mm512_loadu_si512(b);
                        __m512bh b1 = (__m512bh)_mm512_loadu_si512(b + 16);
                        __m512bh b2 = (__m512bh)_mm512_loadu_si512(b + 32);
#pragma GCC unroll 8
                        for (int r = 0; r < MR; r++) {
                            __m512bh w = (__m512bh)_mm512_set1_epi32((int)a[r]);
                            acc[r][0] = _mm512_dpbf16_ps(acc[r][0], w, b0);
                            acc[r][1] = _mm512_dpbf16_ps(acc[r][1], w, b1);
                            acc[r][2] = _mm512_dpbf16_ps(acc[r][2], w, b2);
                        }
                    }
                }
                int rows = e->cout - rb * MR < MR ? e->cout - rb * MR : MR;
#pragma GCC unroll 8
                for (int r = 0; r < MR; r++) {
                    _mm512_store_ps(tile[r], acc[r][0]);
                    _mm512_store_ps(tile[r] + 16, acc[r][1]);
                    _mm512_store_ps(tile[r] + 32, acc[r][2]);
                }
                for (int r = 0; r < rows; r++) {
                    float *o = os + (size_t)(rb * MR + r) * ld;
                    for (int i = 0; i < nseg; i++)
                        for (int c = 0; c < seg[i].len; c += 16) {
                            __mmask16 k = first_lanes(seg[i].len - c < 16 ? seg[i].len - c : 16);
                            _mm512_mask_storeu_ps(o + seg[i].d + c, k,
                                                  _mm512_maskz_loadu_ps(k, tile[r] + seg[i].u + c));
                        }
                }
            }
        }
    }
}

void gemm_bf16_conv3(gemm_bf16_t *g, int lane, size_t woff, int cin, int cout,
                     const float *x, float *out, int ns)
{
    assert(lane >= 0 && lane < g->lanes && ns >= 1 && ns <= g->max_samples);
    const conv_entry_t *e = NULL;
    for (int i = 0; i < g->nconv && !e; i++)
        if (g->conv[i].woff == woff)
            e = &g->conv[i];
    assert(e && e->cin == cin && e->cout == cout);
    convert_input(g, x, cin, ns, g->ws[lane]);
    conv_tiles(g, e, g->ws[lane], out, ns);
}

#else

void gemm_bf16_conv3(gemm_bf16_t *g, int lane, size_t woff, int cin, int cout,
                     const float *x, float *out, int ns)
{
    (void)g, (void)lane, (void)woff, (void)cin, (void)cout, (void)x, (void)out, (void)ns;
    assert(!"gemm_bf16_conv3 without a bf16 kernel");   /* create refuses first */
}

#endif
