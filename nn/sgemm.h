/* Single-precision matrix product for the CPU backend: OpenBLAS's
 * cblas_sgemm when the build has it (GZ_HAVE_OPENBLAS), else our own
 * cache-blocked kernel (packed panels, 6x16 register tile, written with
 * vector extensions so -march=native turns it into AVX2/FMA).
 *
 * All matrices are row-major. C (m, n) = alpha * op(A) (m, k) * op(B) (k, n)
 * + beta * C, op(X) = X or X^T. beta == 0 never reads C. */
#ifndef GZ_NN_SGEMM_H
#define GZ_NN_SGEMM_H

#include <stdbool.h>

/* On the calling thread only: callers that want parallelism split the work
 * themselves (the fast path splits the batch), so threads never fight.
 * Safe to call from several threads at once. No allocation. */
void sgemm_run(bool ta, bool tb, int m, int n, int k, float alpha, const float *a, int lda,
               const float *b, int ldb, float beta, float *c, int ldc);

/* The same on `threads` threads (0: all cores), for one large product
 * (the benchmark's peak figure). Not for hot paths. */
void sgemm_run_threads(int threads, bool ta, bool tb, int m, int n, int k, float alpha,
                       const float *a, int lda, const float *b, int ldb, float beta,
                       float *c, int ldc);

/* "openblas" or "own". */
const char *sgemm_impl_name(void);

/* Number of online CPU cores (at least 1). */
int sgemm_cores(void);

#endif
