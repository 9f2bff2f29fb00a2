/* gomoku bench KIND: throughput benchmarks, one per module, each printing
 * JSON lines. Each takes (argc, argv) with argv[0] the kind, parses its
 * options from the settings table and returns the process exit status (0
 * ok, 1 failure, 2 usage error). cli/cmd_bench.c dispatches to them. */
#ifndef GZ_BENCH_BENCH_H
#define GZ_BENCH_BENCH_H

#include <stdint.h>

#include "engine/board.h"
#include "engine/vcf.h"
#include "engine/vct.h"

typedef int bench_fn(int argc, char **argv);

bench_fn bench_rules, bench_nn, bench_mcts, bench_selfplay, bench_targets, bench_train, bench_vcf,
    bench_vct, bench_broker;

/* Sort v[0..n-1] ascending, in place. */
void bench_sort(double *v, int n);
/* The median of v[0..n-1] (n >= 1; the mean of the two middle values
 * when n is even). Sorts v in place. */
double bench_median(double *v, int n);

/* The threat solvers' benchmark positions (bench vcf, bench vct): a game
 * of greedy moves, one in four random, on 15x15 freestyle, cut at ply
 * 20..79 and not finished, so they hold the threats real games have.
 * The same rng state gives the same position. */
void bench_threat_position(board_t *b, uint64_t *rng);

/* A threat solver under measurement with its limits: the VCF solver
 * when vcf is set, else the VCT one. */
typedef struct bench_solver {
    vcf_t *vcf;
    vcf_limits_t vcf_lim;
    vct_t *vct;
    vct_limits_t vct_lim;
} bench_solver_t;

typedef struct bench_threat_result {
    double positions_per_s, nodes_per_s;   /* medians over the runs */
    double solved, won;                    /* fractions of the set, last run */
    double nodes_per_position;             /* last run */
} bench_threat_result_t;

/* Solve npos positions, set[0..npos) or, with set NULL, those of
 * bench_threat_position (rng seeded with seed), runs times, each with emptied tables, timing the solves only (wall
 * clock). Takes sv's solver (frees it; NULL: its create failed). 0, or 1
 * having said "gomoku NAME: out of memory". */
int bench_threat_run(const char *name, bench_solver_t *sv, const board_t *set, int npos,
                     int runs, uint64_t seed, bench_threat_result_t *out);

#endif
