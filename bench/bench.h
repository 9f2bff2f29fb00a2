/* gomoku bench KIND: throughput benchmarks, one per module, each printing
 * JSON lines. Each takes (argc, argv) with argv[0] the kind, parses its
 * options from the settings table and returns the process exit status (0
 * ok, 1 failure, 2 usage error). cli/cmd_bench.c dispatches to them. */
#ifndef GZ_BENCH_BENCH_H
#define GZ_BENCH_BENCH_H

typedef int bench_fn(int argc, char **argv);

bench_fn bench_rules, bench_nn, bench_mcts, bench_selfplay, bench_train, bench_vcf, bench_broker;

/* Sort v[0..n-1] ascending, in place. */
void bench_sort(double *v, int n);
/* The median of v[0..n-1] (n >= 1; the mean of the two middle values
 * when n is even). Sorts v in place. */
double bench_median(double *v, int n);

#endif
