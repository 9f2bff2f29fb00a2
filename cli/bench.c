#include "cli/bench.h"

#include <stdlib.h>

#include "engine/bot.h"
#include "engine/util.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void bench_sort(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
}

double bench_median(double *v, int n)
{
    bench_sort(v, n);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

void bench_threat_position(board_t *b, uint64_t *rng)
{
    for (;;) {
        board_init(b, BOARD_DEFAULT, RULE_FREESTYLE);
        int plies = 20 + (int)(util_rng_next(rng) % 60);
        while (b->nmoves < plies && !board_over(b)) {
            bool random = util_rng_next(rng) % 4 == 0;
            int m = random ? bot_random_move(b, rng) : bot_greedy_move(b, rng);
            board_play(b, m);
        }
        if (!board_over(b))
            return;
    }
}
