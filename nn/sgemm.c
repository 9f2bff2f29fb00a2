/* SGEMM wrapper: OpenBLAS when present, else an own blocked kernel. */
#include "nn/sgemm.h"

#include <assert.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int sgemm_cores(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : (int)n;
}

#ifdef GZ_HAVE_OPENBLAS
#include <cblas.h>

/* OpenBLAS's thread count is process-wide: keep it at 1 so concurrent
 * single-threaded calls from our own threads do not oversubscribe. */
static pthread_once_t blas_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t blas_mt_lock = PTHREAD_MUTEX_INITIALIZER;
static void blas_single(void) { openblas_set_num_threads(1); }

void sgemm_run(bool ta, bool tb, int m, int n, int k, float alpha, const float *a, int lda,
               const float *b, int ldb, float beta, float *c, int ldc)
{
    pthread_once(&blas_once, blas_single);
    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
                m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void sgemm_run_threads(int threads, bool ta, bool tb, int m, int n, int k, float alpha,
                       const float *a, int lda, const float *b, int ldb, float beta,
                       float *c, int ldc)
{
    pthread_once(&blas_once, blas_single);
    pthread_mutex_lock(&blas_mt_lock);
    openblas_set_num_threads(threads > 0 ? threads : sgemm_cores());
    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
                m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    openblas_set_num_threads(1);
    pthread_mutex_unlock(&blas_mt_lock);
}

const char *sgemm_impl_name(void) { return "openblas"; }

#else

typedef float v8 __attribute__((vector_size(32)));

enum { MR = 6, NR = 16, KC = 256, MC = 96, NC = 1024 };

/* Packed panels, one set per thread, so the kernel allocates nothing. */
static _Thread_local float pack_a[MC * KC] __attribute__((aligned(64)));
static _Thread_local float pack_b[KC * NC] __attribute__((aligned(64)));

static void pack_a_block(bool ta, const float *a, int lda, int i0, int mc, int p0, int kc)
{
    for (int ir = 0; ir < mc; ir += MR) {
        float *dst = pack_a + (size_t)ir * kc;
        for (int p = 0; p < kc; p++)
            for (int r = 0; r < MR; r++) {
                int i = ir + r;
                dst[p * MR + r] = i < mc ? (ta ? a[(size_t)(p0 + p) * lda + i0 + i]
                                               : a[(size_t)(i0 + i) * lda + p0 + p])
                                         : 0.0f;
            }
    }
}

static void pack_b_block(bool tb, const float *b, int ldb, int p0, int kc, int j0, int nc)
{
    for (int jr = 0; jr < nc; jr += NR) {
        float *dst = pack_b + (size_t)jr * kc;
        int w = nc - jr < NR ? nc - jr : NR;
        for (int p = 0; p < kc; p++) {
            float *d = dst + p * NR;
            if (!tb) {
                const float *s = b + (size_t)(p0 + p) * ldb + j0 + jr;
                for (int q = 0; q < w; q++)
                    d[q] = s[q];
            } else {
                for (int q = 0; q < w; q++)
                    d[q] = b[(size_t)(j0 + jr + q) * ldb + p0 + p];
            }
            for (int q = w; q < NR; q++)
                d[q] = 0.0f;
        }
    }
}

/* acc (MR, NR) = packed A panel (MR, kc) x packed B panel (kc, NR). */
static void kernel(int kc, const float *pa, const float *pb, float *acc)
{
    v8 c00 = {0}, c01 = {0}, c10 = {0}, c11 = {0}, c20 = {0}, c21 = {0};
    v8 c30 = {0}, c31 = {0}, c40 = {0}, c41 = {0}, c50 = {0}, c51 = {0};
    for (int p = 0; p < kc; p++) {
        v8 b0, b1;
        memcpy(&b0, pb + p * NR, sizeof b0);
        memcpy(&b1, pb + p * NR + 8, sizeof b1);
        const float *ap = pa + p * MR;
        v8 a;
        a = (v8){0} + ap[0]; c00 += a * b0; c01 += a * b1;
        a = (v8){0} + ap[1]; c10 += a * b0; c11 += a * b1;
        a = (v8){0} + ap[2]; c20 += a * b0; c21 += a * b1;
        a = (v8){0} + ap[3]; c30 += a * b0; c31 += a * b1;
        a = (v8){0} + ap[4]; c40 += a * b0; c41 += a * b1;
        a = (v8){0} + ap[5]; c50 += a * b0; c51 += a * b1;
    }
    v8 out[12] = {c00, c01, c10, c11, c20, c21, c30, c31, c40, c41, c50, c51};
    memcpy(acc, out, sizeof out);
}

static void gemm_serial(bool ta, bool tb, int m, int n, int k, float alpha, const float *a,
                        int lda, const float *b, int ldb, float beta, float *c, int ldc)
{
    if (m <= 0 || n <= 0)
        return;
    if (k <= 0) {
        for (int i = 0; i < m; i++)
            for (int j = 0; j < n; j++)
                c[(size_t)i * ldc + j] = beta == 0.0f ? 0.0f : beta * c[(size_t)i * ldc + j];
        return;
    }
    float acc[MR * NR] __attribute__((aligned(64)));
    for (int jc = 0; jc < n; jc += NC) {
        int nc = n - jc < NC ? n - jc : NC;
        for (int pc = 0; pc < k; pc += KC) {
            int kc = k - pc < KC ? k - pc : KC;
            pack_b_block(tb, b, ldb, pc, kc, jc, nc);
            for (int ic = 0; ic < m; ic += MC) {
                int mc = m - ic < MC ? m - ic : MC;
                pack_a_block(ta, a, lda, ic, mc, pc, kc);
                for (int jr = 0; jr < nc; jr += NR)
                    for (int ir = 0; ir < mc; ir += MR) {
                        kernel(kc, pack_a + (size_t)ir * kc, pack_b + (size_t)jr * kc, acc);
                        int mr = mc - ir < MR ? mc - ir : MR, nr = nc - jr < NR ? nc - jr : NR;
                        for (int r = 0; r < mr; r++) {
                            float *crow = c + (size_t)(ic + ir + r) * ldc + jc + jr;
                            const float *arow = acc + r * NR;
                            if (pc > 0 || beta == 1.0f)
                                for (int q = 0; q < nr; q++)
                                    crow[q] += alpha * arow[q];
                            else if (beta == 0.0f)
                                for (int q = 0; q < nr; q++)
                                    crow[q] = alpha * arow[q];
                            else
                                for (int q = 0; q < nr; q++)
                                    crow[q] = alpha * arow[q] + beta * crow[q];
                        }
                    }
            }
        }
    }
}

void sgemm_run(bool ta, bool tb, int m, int n, int k, float alpha, const float *a, int lda,
               const float *b, int ldb, float beta, float *c, int ldc)
{
    gemm_serial(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

typedef struct gemm_part {
    bool ta, tb;
    int m, n, k, lda, ldb, ldc;
    float alpha, beta;
    const float *a, *b;
    float *c;
} gemm_part_t;

static void *gemm_part_main(void *arg)
{
    gemm_part_t *g = arg;
    gemm_serial(g->ta, g->tb, g->m, g->n, g->k, g->alpha, g->a, g->lda, g->b, g->ldb, g->beta,
                g->c, g->ldc);
    return NULL;
}

void sgemm_run_threads(int threads, bool ta, bool tb, int m, int n, int k, float alpha,
                       const float *a, int lda, const float *b, int ldb, float beta,
                       float *c, int ldc)
{
    enum { MAXT = 64 };
    int t = threads > 0 ? threads : sgemm_cores();
    if (t > MAXT)
        t = MAXT;
    int per = ((n + t - 1) / t + NR - 1) / NR * NR;   /* column slices, whole tiles */
    gemm_part_t parts[MAXT];
    pthread_t tid[MAXT];
    bool started[MAXT] = {false};
    int np = 0;
    for (int j0 = 0; j0 < n && np < t; j0 += per, np++) {
        int w = n - j0 < per ? n - j0 : per;
        parts[np] = (gemm_part_t){ta, tb, m, w, k, lda, ldb, ldc, alpha, beta, a,
                                  tb ? b + (size_t)j0 * ldb : b + j0, c + j0};
    }
    for (int i = 1; i < np; i++)
        started[i] = pthread_create(&tid[i], NULL, gemm_part_main, &parts[i]) == 0;
    for (int i = 0; i < np; i++)
        if (i == 0 || !started[i])
            gemm_part_main(&parts[i]);
    for (int i = 1; i < np; i++)
        if (started[i])
            pthread_join(tid[i], NULL);
}

const char *sgemm_impl_name(void) { return "own"; }

#endif
