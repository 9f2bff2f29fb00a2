/* Figures shared by the `gomoku bench` subcommands. */
#ifndef GZ_CLI_BENCH_H
#define GZ_CLI_BENCH_H

/* Sort v[0..n-1] ascending, in place. */
void bench_sort(double *v, int n);
/* The median of v[0..n-1] (n >= 1; the mean of the two middle values
 * when n is even). Sorts v in place. */
double bench_median(double *v, int n);

#endif
