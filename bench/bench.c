#include "bench/bench.h"

#include <stdio.h>
#include <stdlib.h>

#include "engine/bot.h"
#include "util/util.h"

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

static void solver_clear(const bench_solver_t *sv)
{
    if (sv->vcf)
        vcf_clear(sv->vcf);
    else
        vct_clear(sv->vct);
}

static uint64_t solver_nodes(const bench_solver_t *sv)
{
    return sv->vcf ? vcf_nodes(sv->vcf) : vct_nodes(sv->vct);
}

/* 0 (proven none), 1 (won) or 2 (out of budget): vcf_status_t and
 * vct_status_t have the same values. */
static int solver_solve(const bench_solver_t *sv, const board_t *b)
{
    return sv->vcf ? (int)vcf_solve(sv->vcf, b, &sv->vcf_lim, NULL)
                   : (int)vct_solve(sv->vct, b, &sv->vct_lim, NULL);
}

int bench_threat_run(const char *name, bench_solver_t *sv, const board_t *set, int npos,
                     int runs, uint64_t seed, bench_threat_result_t *out)
{
    int rc = 1;
    board_t *pos = malloc(sizeof *pos * (size_t)npos);
    double *pps = malloc(sizeof *pps * (size_t)runs), *nps = malloc(sizeof *nps * (size_t)runs);
    if (!pos || !pps || !nps || (!sv->vcf && !sv->vct))
        goto out_free;
    uint64_t rng = seed;
    for (int i = 0; i < npos; i++)
        if (set)
            pos[i] = set[i];
        else
            bench_threat_position(&pos[i], &rng);
    int solved = 0, won = 0;
    uint64_t nodes = 0;
    for (int r = 0; r < runs; r++) {
        uint64_t n0 = solver_nodes(sv);
        double t = 0.0;
        solved = won = 0;
        for (int i = 0; i < npos; i++) {
            solver_clear(sv);
            double t0 = util_now_ms() / 1e3;
            int st = solver_solve(sv, &pos[i]);
            t += util_now_ms() / 1e3 - t0;
            solved += st != 2;
            won += st == 1;
        }
        nodes = solver_nodes(sv) - n0;
        pps[r] = t > 0.0 ? npos / t : 0.0;
        nps[r] = t > 0.0 ? (double)nodes / t : 0.0;
    }
    *out = (bench_threat_result_t){
        .positions_per_s = bench_median(pps, runs), .nodes_per_s = bench_median(nps, runs),
        .solved = (double)solved / npos, .won = (double)won / npos,
        .nodes_per_position = (double)nodes / npos,
    };
    rc = 0;
out_free:
    if (rc)
        fprintf(stderr, "gomoku %s: out of memory\n", name);
    vcf_free(sv->vcf);
    vct_free(sv->vct);
    free(pos);
    free(pps);
    free(nps);
    return rc;
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
