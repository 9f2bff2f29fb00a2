/* The project's one random number generator: splitmix64, in the header so
 * that every layer (the CUDA module's copy of nn/model.c included) uses the
 * same stream without linking util.c. The state is the caller's; any seed
 * (0 included) gives a good stream. */
#ifndef GZ_UTIL_RNG_H
#define GZ_UTIL_RNG_H

#include <stdint.h>

/* The next value of the generator whose state is *s. */
static inline uint64_t util_rng_next(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* A uniform double in the open interval (0, 1) from 53 random bits. */
static inline double util_rng_unit(uint64_t *s)
{
    return ((double)(util_rng_next(s) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

/* A uniform integer in [0, n), n > 0 (multiply-shift, no modulo bias worth
 * measuring for n < 2^32). */
static inline uint32_t util_rng_below(uint64_t *s, uint32_t n)
{
    return (uint32_t)(((util_rng_next(s) >> 32) * (uint64_t)n) >> 32);
}

#endif
