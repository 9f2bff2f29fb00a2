/* Winograd F(4x4, 3x3): transforms and the 36 batched products.
 *
 * The transforms work on blocks of VL channels at a time (channels are the
 * innermost dimension), written as plain loops over the VL lanes that the
 * compiler turns into vector code for the build's target (-march=native by
 * default: AVX-512 on the dev machine; a generic x86-64 build gets SSE).
 * The output transform can apply the layer's bias, residual, ReLU and
 * mask on the way out (wino_epilogue_t), so the fast path's pixel-major
 * trunk needs no pass between convs.
 *
 * Matrices (Lavin and Gray, points 0, 1, -1, 2, -2, inf):
 *   B^T = [4  0 -5  0 1 0]   G = [ 1/4     0    0 ]   A^T = [1 1  1 1  1 0]
 *         [0 -4 -4  1 1 0]       [-1/6 -1/6 -1/6 ]         [0 1 -1 2 -2 0]
 *         [0  4 -4 -1 1 0]       [-1/6  1/6 -1/6 ]         [0 1  1 4  4 0]
 *         [0 -2 -1  2 1 0]       [1/24 1/12  1/6 ]         [0 1 -1 8 -8 1]
 *         [0  2 -1 -2 1 0]       [1/24 -1/12 1/6 ]
 *         [0  4  0 -5 0 1]       [ 0      0    1 ] */
#include "nn/winograd.h"
#include "nn/sgemm.h"

#include <string.h>

enum { VL = 16 };
typedef float lanes_t[VL];


/* dst[0..n) = src[0..n), n <= VL; the full-width case is a fixed-size copy
 * the compiler turns into vector moves. */
static inline void copy_lanes(float *dst, const float *src, int n)
{
    if (n == VL)
        for (int l = 0; l < VL; l++)
            dst[l] = src[l];
    else
        memcpy(dst, src, sizeof(float) * n);
}
/* The same into a full lanes_t, zero past n. */
static inline void load_lanes(float *dst, const float *src, int n)
{
    if (n < VL)
        memset(dst, 0, sizeof(lanes_t));
    copy_lanes(dst, src, n);
}

/* o[k * so] = (B^T x)[k], x[k * sx], k = 0..5, lane by lane. */
static inline void bt6(const lanes_t *x, int sx, lanes_t *o, int so)
{
    for (int l = 0; l < VL; l++) {
        float x0 = x[0][l], x1 = x[sx][l], x2 = x[2 * sx][l], x3 = x[3 * sx][l];
        float x4 = x[4 * sx][l], x5 = x[5 * sx][l];
        o[0][l] = 4.0f * x0 - 5.0f * x2 + x4;
        o[so][l] = -4.0f * (x1 + x2) + x3 + x4;
        o[2 * so][l] = 4.0f * (x1 - x2) - x3 + x4;
        o[3 * so][l] = 2.0f * (x3 - x1) - x2 + x4;
        o[4 * so][l] = 2.0f * (x1 - x3) - x2 + x4;
        o[5 * so][l] = 4.0f * x1 - 5.0f * x3 + x5;
    }
}

/* o = B g: the adjoint of bt6. */
static inline void b6(const lanes_t *g, int sg, lanes_t *o, int so)
{
    for (int l = 0; l < VL; l++) {
        float g0 = g[0][l], g1 = g[sg][l], g2 = g[2 * sg][l], g3 = g[3 * sg][l];
        float g4 = g[4 * sg][l], g5 = g[5 * sg][l];
        o[0][l] = 4.0f * g0;
        o[so][l] = 4.0f * (g2 - g1 + g5) + 2.0f * (g4 - g3);
        o[2 * so][l] = -5.0f * g0 - 4.0f * (g1 + g2) - g3 - g4;
        o[3 * so][l] = g1 - g2 + 2.0f * (g3 - g4) - 5.0f * g5;
        o[4 * so][l] = g0 + g1 + g2 + g3 + g4;
        o[5 * so][l] = g5;
    }
}

/* o[k * so] = (A^T m)[k], k = 0..3. */
static inline void at6(const lanes_t *m, int sm, lanes_t *o, int so)
{
    for (int l = 0; l < VL; l++) {
        float m0 = m[0][l], m1 = m[sm][l], m2 = m[2 * sm][l], m3 = m[3 * sm][l];
        float m4 = m[4 * sm][l], m5 = m[5 * sm][l];
        float p12 = m1 + m2, d12 = m1 - m2, p34 = m3 + m4, d34 = m3 - m4;
        o[0][l] = m0 + p12 + p34;
        o[so][l] = d12 + 2.0f * d34;
        o[2 * so][l] = p12 + 4.0f * p34;
        o[3 * so][l] = d12 + 8.0f * d34 + m5;
    }
}

/* o[k * so] = (A y)[k], k = 0..5: the adjoint of at6. */
static inline void a4(const lanes_t *y, int sy, lanes_t *o, int so)
{
    for (int l = 0; l < VL; l++) {
        float y0 = y[0][l], y1 = y[sy][l], y2 = y[2 * sy][l], y3 = y[3 * sy][l];
        float e = y0 + y2, f = y1 + y3, e4 = y0 + 4.0f * y2, f8 = 2.0f * y1 + 8.0f * y3;
        o[0][l] = y0;
        o[so][l] = e + f;
        o[2 * so][l] = e - f;
        o[3 * so][l] = e4 + f8;
        o[4 * so][l] = e4 - f8;
        o[5 * so][l] = y3;
    }
}

/* (G g)[0..5] of g[0..2] (stride sg). */
static inline void g3(const float *g, int sg, float *o, int so)
{
    const float c4 = 1.0f / 4.0f, c6 = 1.0f / 6.0f, c12 = 1.0f / 12.0f, c24 = 1.0f / 24.0f;
    float g0 = g[0], g1 = g[sg], g2 = g[2 * sg];
    o[0] = c4 * g0;
    o[so] = -c6 * (g0 + g1 + g2);
    o[2 * so] = -c6 * (g0 - g1 + g2);
    o[3 * so] = c24 * g0 + c12 * g1 + c6 * g2;
    o[4 * so] = c24 * g0 - c12 * g1 + c6 * g2;
    o[5 * so] = g2;
}

/* (G^T d)[0..2] of d[0..5]. */
static inline void gt6(const float *d, int sd, float *o, int so)
{
    const float c4 = 1.0f / 4.0f, c6 = 1.0f / 6.0f, c12 = 1.0f / 12.0f, c24 = 1.0f / 24.0f;
    float d0 = d[0], d1 = d[sd], d2 = d[2 * sd], d3 = d[3 * sd], d4 = d[4 * sd], d5 = d[5 * sd];
    o[0] = c4 * d0 - c6 * (d1 + d2) + c24 * (d3 + d4);
    o[so] = c6 * (d2 - d1) + c12 * (d3 - d4);
    o[2 * so] = c6 * (d3 + d4 - d1 - d2) + d5;
}

/* G g G^T of one filter g (3 x 3) into o[16 * xi], xi = 6 i + j. */
static inline void filter_to_freqs(const float *g, float *o)
{
    float t[6][3];   /* G g (6 x 3), then G g G^T by rows */
    for (int x = 0; x < 3; x++)
        g3(g + x, 3, &t[0][x], 3);
    for (int i = 0; i < 6; i++)
        g3(t[i], 1, o + 16 * 6 * i, 16);
}

/* g (3 x 3) += G^T d G of the 36 frequencies d[16 * xi]. */
static inline void filter_from_freqs(const float *d, float *g)
{
    float t[6][3], r[3];
    for (int i = 0; i < 6; i++)
        gt6(d + 16 * 6 * i, 16, t[i], 1);
    for (int x = 0; x < 3; x++) {
        gt6(&t[0][x], 3, r, 1);
        for (int y = 0; y < 3; y++)
            g[3 * y + x] += r[y];
    }
}

/* Every filter, one way or the other: to_freqs, dst (36, cin, cout) =
 * G g G^T of each g of src (cout, cin, 3, 3); else dst (cout, cin, 3, 3)
 * += G^T du G of src (36, cin, cout). 16 output channels at a time go
 * through a small buffer, so the 36 frequency rows (cin * cout floats
 * apart: often a multiple of 4 KiB, the same cache set) are read and
 * written 16 floats at a time. */
static void map_filters(const float *src, int cin, int cout, bool to_freqs, float *dst)
{
    size_t fs = (size_t)cin * cout;
    float buf[36][16];
    for (int ci = 0; ci < cin; ci++)
        for (int co0 = 0; co0 < cout; co0 += 16) {
            int nc = cout - co0 < 16 ? cout - co0 : 16;
            size_t row = (size_t)ci * cout + co0;
            if (!to_freqs)
                for (int xi = 0; xi < 36; xi++)
                    memcpy(buf[xi], src + xi * fs + row, sizeof(float) * nc);
            for (int k = 0; k < nc; k++) {
                size_t g = ((size_t)(co0 + k) * cin + ci) * 9;
                if (to_freqs)
                    filter_to_freqs(src + g, &buf[0][k]);
                else
                    filter_from_freqs(&buf[0][k], dst + g);
            }
            if (to_freqs)
                for (int xi = 0; xi < 36; xi++)
                    memcpy(dst + xi * fs + row, buf[xi], sizeof(float) * nc);
        }
}

void wino_filter(const float *w, int cin, int cout, float *u)
{
    map_filters(w, cin, cout, true, u);
}

void wino_filter_adjoint(const float *du, int cin, int cout, float *dw)
{
    map_filters(du, cin, cout, false, dw);
}

/* dst[0..n) = relu(o + bias + res) * mask over the n <= VL lanes of one
 * output pixel (res may be NULL; mask is 0 or 1). As bias_relu_mask:
 * t > 0 ? t * mask : 0, so NaN gives 0. The full-width case is written in
 * vector extensions: as a plain loop GCC leaves it scalar. */
typedef float vlanes_t __attribute__((vector_size(sizeof(lanes_t)), aligned(4)));
typedef int vmask_t __attribute__((vector_size(sizeof(lanes_t))));

static inline void epilogue_lanes(float *dst, const float *o, const float *bias,
                                  const float *res, float mask, int n)
{
    if (n == VL) {
        vlanes_t t = *(const vlanes_t *)o + *(const vlanes_t *)bias;
        if (res)
            t += *(const vlanes_t *)res;
        *(vlanes_t *)dst = (vlanes_t)((vmask_t)(t * mask) & (vmask_t)(t > 0.0f));
        return;
    }
    for (int l = 0; l < n; l++) {
        float t = o[l] + bias[l] + (res ? res[l] : 0.0f);
        dst[l] = t > 0.0f ? t * mask : 0.0f;
    }
}

/* dst[0..n) += src[0..n), n <= VL. */
static inline void add_lanes(float *dst, const float *src, int n)
{
    if (n == VL)
        for (int l = 0; l < VL; l++)
            dst[l] += src[l];
    else
        for (int l = 0; l < n; l++)
            dst[l] += src[l];
}

/* A 1-D transform over lanes: points of in (stride si) to points of out
 * (stride so): bt6, b6, at6 or a4. */
typedef void (*lanes_map_fn)(const lanes_t *in, int si, lanes_t *out, int so);

/* The one loop over tiles below serves the four tile transforms;
 * always_inline makes each caller a copy with its map, direction and
 * sizes constant, so the map is inlined as when they were four loops. */
#define WINO_INLINE static inline __attribute__((always_inline))

/* The 2-D transform of a nin x nin block a: map (nin points to nout)
 * along columns into t, then along rows into o (nout x nout). */
WINO_INLINE void map_2d(lanes_map_fn map, const lanes_t *a, int nin, int nout, lanes_t *t,
                        lanes_t *o)
{
    for (int j = 0; j < nin; j++)
        map(a + j, nin, t + j, nin);
    for (int i = 0; i < nout; i++)
        map(t + nin * i, 1, o + nout * i, 1);
}

/* Every tile of ns planes, VL channels at a time, one way or the other:
 * to_freqs, from the pixel-major src (ns * M * M, ch) to dst (36, nt, ch);
 * else the reverse. A tile's pixels are the n x n from (4 ty + off,
 * 4 tx + off): read as zero off the board, dropped there on the way out,
 * where they are added to dst (add) or stored, through ep when not NULL.
 * map takes n points to 6 frequencies, or 6 back to n. */
WINO_INLINE void map_tiles(const float *src, int ch, int M, int ns, bool to_freqs, int n, int off,
                           lanes_map_fn map, bool add, const wino_epilogue_t *ep, float *dst)
{
    int T = wino_tiles_side(M), hw = M * M;
    size_t fs = wino_fstride(wino_tiles(M, ns), ch);
    lanes_t a[36], t[36], o[36];
    for (int s = 0; s < ns; s++)
        for (int ty = 0; ty < T; ty++)
            for (int tx = 0; tx < T; tx++) {
                size_t tile = ((size_t)s * T + ty) * T + tx;
                for (int c0 = 0; c0 < ch; c0 += VL) {
                    int nc = ch - c0 < VL ? ch - c0 : VL;
                    if (to_freqs) {
                        for (int i = 0; i < n; i++)
                            for (int j = 0; j < n; j++) {
                                int y = 4 * ty + off + i, x = 4 * tx + off + j;
                                if (y < 0 || y >= M || x < 0 || x >= M)
                                    memset(a[n * i + j], 0, sizeof(lanes_t));
                                else
                                    load_lanes(a[n * i + j],
                                               src + ((size_t)s * hw + y * M + x) * ch + c0, nc);
                            }
                        map_2d(map, a, n, 6, t, o);
                        for (int xi = 0; xi < 36; xi++)
                            copy_lanes(dst + xi * fs + tile * ch + c0, o[xi], nc);
                        continue;
                    }
                    for (int xi = 0; xi < 36; xi++)
                        load_lanes(a[xi], src + xi * fs + tile * ch + c0, nc);
                    map_2d(map, a, 6, n, t, o);
                    for (int i = 0; i < n; i++)
                        for (int j = 0; j < n; j++) {
                            int y = 4 * ty + off + i, x = 4 * tx + off + j;
                            if (y < 0 || y >= M || x < 0 || x >= M)
                                continue;
                            size_t r = (size_t)s * hw + y * M + x;
                            float *d = dst + r * ch + c0;
                            if (add)
                                add_lanes(d, o[n * i + j], nc);
                            else if (!ep)
                                copy_lanes(d, o[n * i + j], nc);
                            else if (ep->res)
                                epilogue_lanes(d, o[n * i + j], ep->bias + c0,
                                               ep->res + r * ch + c0, ep->mask[r], nc);
                            else
                                epilogue_lanes(d, o[n * i + j], ep->bias + c0, NULL, ep->mask[r],
                                               nc);
                        }
                }
            }
}

void wino_input(const float *xt, int ch, int M, int ns, float *v)
{
    map_tiles(xt, ch, M, ns, true, 6, -1, bt6, false, NULL, v);
}

void wino_input_adjoint(const float *dv, int ch, int M, int ns, float *dxt)
{
    memset(dxt, 0, sizeof(float) * (size_t)ns * M * M * ch);
    map_tiles(dv, ch, M, ns, false, 6, -1, b6, true, NULL, dxt);
}

void wino_output(const float *m, int ch, int M, int ns, const wino_epilogue_t *ep, float *yt)
{
    map_tiles(m, ch, M, ns, false, 4, 0, at6, false, ep, yt);
}

void wino_output_adjoint(const float *dyt, int ch, int M, int ns, float *dm)
{
    map_tiles(dyt, ch, M, ns, true, 4, 0, a4, false, NULL, dm);
}

#if defined(__x86_64__) && defined(__GNUC__)
/* The 36 products are small (k = 64 channels, n = 64, m = a few hundred
 * tiles): OpenBLAS spends a fifth of their time packing. This kernel
 * packs nothing: a block of 6 rows x NV vectors of C lives in registers
 * while k runs, each step broadcasting 6 elements of A and loading one
 * row of B (which stays in L1: 16 KiB at 64 x 64). Two instances,
 * compiled for their instruction sets whatever the build targets and
 * chosen once at run time: AVX-512 (32 registers: 6 x 4 vectors of 16,
 * 64 columns a block) and AVX2 with FMA (16 registers: 6 x 2 vectors of
 * 8, 16 columns a block; for the forward and data-gradient products,
 * whose k is a channel count: the filter gradient's k is every tile of
 * the batch, where OpenBLAS's packing pays); other CPUs send the products
 * to sgemm_run (OpenBLAS picks its own kernel). */
typedef float v16f __attribute__((vector_size(64), aligned(4)));
typedef float v8f_u __attribute__((vector_size(32), aligned(4)));

/* c (mr, W nv) (= or +=) A (mr, k) x b (k, W nv); A(i, p) = a[i sa + p sp]. */
#define BCAST_KERN(name, V, W, NVMAX)                                                      \
    static inline __attribute__((always_inline)) void                                      \
    name(const int mr, const int nv, int k, const float *a, size_t sa, size_t sp,          \
         const float *b, int ldb, float *c, int ldc, bool acc)                             \
    {                                                                                      \
        V r[6][NVMAX];                                                                     \
        for (int i = 0; i < mr; i++)                                                       \
            for (int j = 0; j < nv; j++)                                                   \
                r[i][j] = (V){0};                                                          \
        for (int p = 0; p < k; p++) {                                                      \
            const float *bp = b + (size_t)p * ldb, *ap = a + p * sp;                       \
            V bv[NVMAX];                                                                   \
            for (int j = 0; j < nv; j++)                                                   \
                bv[j] = *(const V *)(bp + W * j);                                          \
            for (int i = 0; i < mr; i++) {                                                 \
                float ai = ap[i * sa];                                                     \
                for (int j = 0; j < nv; j++)                                               \
                    r[i][j] += ai * bv[j];                                                 \
            }                                                                              \
        }                                                                                  \
        for (int i = 0; i < mr; i++)                                                       \
            for (int j = 0; j < nv; j++) {                                                 \
                V *d = (V *)(c + (size_t)i * ldc + W * j);                                 \
                *d = acc ? *d + r[i][j] : r[i][j];                                         \
            }                                                                              \
    }
BCAST_KERN(kern16, v16f, 16, 4)
BCAST_KERN(kern8, v8f_u, 8, 2)

#define KERN_MR(kern, nv)                                                                  \
    switch (mr) {                                                                          \
    case 6: kern(6, nv, k, a, sa, sp, b, ldb, c, ldc, acc); break;                         \
    case 5: kern(5, nv, k, a, sa, sp, b, ldb, c, ldc, acc); break;                         \
    case 4: kern(4, nv, k, a, sa, sp, b, ldb, c, ldc, acc); break;                         \
    case 3: kern(3, nv, k, a, sa, sp, b, ldb, c, ldc, acc); break;                         \
    case 2: kern(2, nv, k, a, sa, sp, b, ldb, c, ldc, acc); break;                         \
    default: kern(1, nv, k, a, sa, sp, b, ldb, c, ldc, acc); break;                        \
    }

#define AVX512 __attribute__((target("avx512f,avx512vl,avx512dq,avx512bw,fma")))
#define AVX2 __attribute__((target("avx2,fma")))

AVX512 static void kern16_block(int mr, int nv, int k, const float *a, size_t sa, size_t sp,
                                const float *b, int ldb, float *c, int ldc, bool acc)
{
    switch (nv) {
    case 4: KERN_MR(kern16, 4) break;
    case 3: KERN_MR(kern16, 3) break;
    case 2: KERN_MR(kern16, 2) break;
    default: KERN_MR(kern16, 1) break;
    }
}

AVX2 static void kern8_block(int mr, int nv, int k, const float *a, size_t sa, size_t sp,
                             const float *b, int ldb, float *c, int ldc, bool acc)
{
    if (nv == 2)
        KERN_MR(kern8, 2)
    else
        KERN_MR(kern8, 1)
}

/* c (m, n) (= or +=) A (m, k) x b (k, n), n a multiple of w (the
 * vector width), in blocks of 6 rows x nvmax vectors by block(). */
typedef void (*kern_block_fn)(int mr, int nv, int k, const float *a, size_t sa, size_t sp,
                              const float *b, int ldb, float *c, int ldc, bool acc);
static void gemm_bcast(kern_block_fn block, int w, int nvmax, int m, int n, int k,
                       const float *a, size_t sa, size_t sp, const float *b, int ldb, float *c,
                       int ldc, bool acc)
{
    for (int j0 = 0; j0 < n; j0 += w * nvmax) {
        int nv = (n - j0 < w * nvmax ? n - j0 : w * nvmax) / w;
        for (int i0 = 0; i0 < m; i0 += 6)
            block(m - i0 < 6 ? m - i0 : 6, nv, k, a + (size_t)i0 * sa, sa, sp, b + j0, ldb,
                  c + (size_t)i0 * ldc + j0, ldc, acc);
    }
}

/* __builtin_cpu_supports reads flags set once at program start: cheap. */
static bool gemm_bcast_ok(void)
{
    return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
           __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512bw");
}
static bool gemm_bcast8_ok(void)
{
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}
#define HAVE_GEMM_BCAST 1
#else
#define HAVE_GEMM_BCAST 0
static bool gemm_bcast_ok(void) { return false; }
#endif

/* For every frequency xi: c_xi (m, n) = a_xi (m, k) x b_xi (k, n), all
 * row-major, or, with filter set, c_xi += a_xi^T x b_xi where a_xi is
 * stored (k, m) (the filter gradient: V^T dM summed over the batch). */
static void freq_products(const float *a, size_t astep, const float *b, size_t bstep, float *c,
                          size_t cstep, int m, int n, int k, bool filter)
{
    for (int xi = 0; xi < WINO_FREQS; xi++) {
        const float *ax = a + xi * astep, *bx = b + xi * bstep;
        float *cx = c + xi * cstep;
#if HAVE_GEMM_BCAST
        size_t sa = filter ? 1 : (size_t)k, sp = filter ? (size_t)m : 1;
        if (n % 16 == 0 && gemm_bcast_ok()) {
            gemm_bcast(kern16_block, 16, 4, m, n, k, ax, sa, sp, bx, n, cx, n, filter);
            continue;
        }
        if (!filter && n % 8 == 0 && gemm_bcast8_ok()) {   /* k small: channels */
            gemm_bcast(kern8_block, 8, 2, m, n, k, ax, sa, sp, bx, n, cx, n, filter);
            continue;
        }
#endif
        sgemm_run(filter, false, m, n, k, 1.0f, ax, filter ? m : k, bx, n, filter ? 1.0f : 0.0f,
                  cx, n);
    }
}

bool wino_forward_fast(int cout)
{
    return HAVE_GEMM_BCAST && cout % 16 == 0 && gemm_bcast_ok();
}

void wino_gemm_forward(const float *v, const float *u, int nt, int cin, int cout, float *m)
{
    freq_products(v, wino_fstride(nt, cin), u, (size_t)cin * cout, m, wino_fstride(nt, cout), nt,
                  cout, cin, false);
}

void wino_gemm_data(const float *dm, const float *ut, int nt, int cin, int cout, float *dv)
{
    freq_products(dm, wino_fstride(nt, cout), ut, (size_t)cin * cout, dv, wino_fstride(nt, cin),
                  nt, cin, cout, false);
}

void wino_gemm_filter(const float *v, const float *dm, int nt, int cin, int cout, float *du)
{
    freq_products(v, wino_fstride(nt, cin), dm, wino_fstride(nt, cout), du, (size_t)cin * cout,
                  cin, cout, nt, true);
}

typedef float v8f __attribute__((vector_size(32), aligned(4)));
typedef int v8i __attribute__((vector_size(32)));

/* The 8 x 8 block at a (stride lda) transposed into b (stride ldb), or
 * added to it: three rounds of shuffles (the AVX unpack / shuffle /
 * permute2f128 pattern), written with vector extensions. */
static inline void transpose8(const float *a, size_t lda, float *b, size_t ldb, bool add)
{
    v8f r[8], t[8], q[8];
    for (int i = 0; i < 8; i++)
        r[i] = *(const v8f *)(a + i * lda);
    for (int i = 0; i < 8; i += 2) {
        t[i] = __builtin_shuffle(r[i], r[i + 1], (v8i){0, 8, 1, 9, 4, 12, 5, 13});
        t[i + 1] = __builtin_shuffle(r[i], r[i + 1], (v8i){2, 10, 3, 11, 6, 14, 7, 15});
    }
    for (int i = 0; i < 8; i += 4)
        for (int k = 0; k < 2; k++) {
            q[i + 2 * k] =
                __builtin_shuffle(t[i + k], t[i + k + 2], (v8i){0, 1, 8, 9, 4, 5, 12, 13});
            q[i + 2 * k + 1] =
                __builtin_shuffle(t[i + k], t[i + k + 2], (v8i){2, 3, 10, 11, 6, 7, 14, 15});
        }
    for (int j = 0; j < 4; j++) {
        v8f lo = __builtin_shuffle(q[j], q[j + 4], (v8i){0, 1, 2, 3, 8, 9, 10, 11});
        v8f hi = __builtin_shuffle(q[j], q[j + 4], (v8i){4, 5, 6, 7, 12, 13, 14, 15});
        v8f *d0 = (v8f *)(b + j * ldb), *d4 = (v8f *)(b + (j + 4) * ldb);
        *d0 = add ? *d0 + lo : lo;
        *d4 = add ? *d4 + hi : hi;
    }
}

void wino_transpose(const float *a, int rows, int cols, float *b, bool add)
{
    int r8 = rows & ~7, c8 = cols & ~7;
    for (int i0 = 0; i0 < r8; i0 += 8)
        for (int j0 = 0; j0 < c8; j0 += 8)
            transpose8(a + (size_t)i0 * cols + j0, (size_t)cols, b + (size_t)j0 * rows + i0,
                       (size_t)rows, add);
    /* the ragged edges: rows past r8 for every column, columns past c8 */
    for (int j = 0; j < cols; j++) {
        float *dst = b + (size_t)j * rows;
        for (int i = j < c8 ? r8 : 0; i < rows; i++)
            dst[i] = (add ? dst[i] : 0.0f) + a[(size_t)i * cols + j];
    }
}
