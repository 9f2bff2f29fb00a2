/* gomoku bench KIND: dispatch to the benchmark of one module (bench/). */
#include <stdio.h>
#include <string.h>

#include "bench/bench.h"
#include "cli/cmds.h"

int cmd_bench(int argc, char **argv)
{
    static const struct {
        const char *name;
        int (*run)(int, char **);
        const char *what;
    } kinds[] = {
        {"rules", bench_rules, "random playouts per second for each rule on 15x15"},
        {"nn", bench_nn, "network forward evals/s, GFLOP/s, train samples/s"},
        {"mcts", bench_mcts, "search playouts/s with a zero-cost evaluator"},
        {"selfplay", bench_selfplay, "self-play games/hour with a real net"},
        {"targets", bench_targets, "self-play's policy targets against a deep search's"},
        {"train", bench_train, "training samples/s"},
        {"vcf", bench_vcf, "VCF solver positions/s and nodes/s on a seeded set"},
        {"vct", bench_vct, "VCT solver positions/s and nodes/s on the same set"},
        {"broker", bench_broker, "game frames/s through the Redis broker vs a pipe"},
    };
    int n = (int)(sizeof kinds / sizeof kinds[0]);
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        FILE *f = argc < 2 ? stderr : stdout;
        fprintf(f, "usage: gomoku bench KIND [options]   (gomoku bench KIND --help)\n\nkinds:\n");
        for (int i = 0; i < n; i++)
            fprintf(f, "  %-9s %s\n", kinds[i].name, kinds[i].what);
        return argc < 2 ? 2 : 0;
    }
    for (int i = 0; i < n; i++)
        if (strcmp(argv[1], kinds[i].name) == 0)
            return kinds[i].run(argc - 1, argv + 1);
    fprintf(stderr, "gomoku bench: unknown benchmark '%s'\nusage: gomoku bench rules|nn|mcts|selfplay|train|vcf|vct|broker [options]\n", argv[1]);
    return 2;
}
