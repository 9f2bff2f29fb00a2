/* One core's peak of AVX-512 bf16 dot products (vdpbf16ps) and fp32 FMAs
 * (vfmadd231ps), 16 independent accumulator chains each: the bound the
 * bf16 and fp32 conv kernels are judged against (docs/BENCHMARKS.md,
 * "Why bf16 at 2x PyTorch is out of reach on this CPU").
 *   gcc -O2 -o /tmp/cpu_peak scripts/lib/cpu_peak.c && /tmp/cpu_peak
 * Needs a CPU with AVX-512 BF16 (it dies of SIGILL elsewhere). */
#include <immintrin.h>
#include <stdio.h>
#include <time.h>

enum { CHAINS = 16 };

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

/* The accumulators start different so the compiler cannot merge chains. */
#define START(a) for (int i = 0; i < CHAINS; i++) a[i] = _mm512_set1_ps((float)i)
#define REDUCE(a)                                                                          \
    do {                                                                                   \
        __m512 s = a[0];                                                                   \
        for (int i = 1; i < CHAINS; i++)                                                   \
            s = _mm512_add_ps(s, a[i]);                                                    \
        return _mm512_reduce_add_ps(s);                                                    \
    } while (0)

__attribute__((target("avx512f,avx512bf16"), noinline)) static float bf16_dots(long n)
{
    __m512 a[CHAINS];
    START(a);
    __m512bh x = (__m512bh)_mm512_set1_epi16(0x3f80), y = (__m512bh)_mm512_set1_epi16(0x3c00);
    for (long k = 0; k < n; k++)
#pragma GCC unroll 16
        for (int i = 0; i < CHAINS; i++)
            a[i] = _mm512_dpbf16_ps(a[i], x, y);
    REDUCE(a);
}

__attribute__((target("avx512f,fma"), noinline)) static float fp32_fmas(long n)
{
    __m512 a[CHAINS];
    START(a);
    __m512 x = _mm512_set1_ps(1.0001f), y = _mm512_set1_ps(1e-7f);
    for (long k = 0; k < n; k++)
#pragma GCC unroll 16
        for (int i = 0; i < CHAINS; i++)
            a[i] = _mm512_fmadd_ps(x, y, a[i]);
    REDUCE(a);
}

int main(void)
{
    long n = 100000000;
    double t0 = now();
    float r = bf16_dots(n);
    double t1 = now();
    printf("bf16 vdpbf16ps zmm: %.1f GFLOP/s one core (%.2f instructions/ns)\n",
           n * CHAINS * 64.0 / (t1 - t0) / 1e9, n * (double)CHAINS / (t1 - t0) / 1e9);
    t0 = now();
    r += fp32_fmas(n);
    t1 = now();
    printf("fp32 vfmadd zmm: %.1f GFLOP/s one core (%.2f instructions/ns)\n",
           n * CHAINS * 32.0 / (t1 - t0) / 1e9, n * (double)CHAINS / (t1 - t0) / 1e9);
    return r == 1.5f;   /* uses the sums, so the loops stay */
}
