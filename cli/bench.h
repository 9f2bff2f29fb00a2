/* Figures shared by the `gomoku bench` subcommands. */
#ifndef GZ_CLI_BENCH_H
#define GZ_CLI_BENCH_H

#include <stdint.h>

#include "engine/board.h"

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

#endif
