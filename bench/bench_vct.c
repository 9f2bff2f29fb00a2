/* gomoku bench vct: the VCT solver on the same seeded 15x15 freestyle
 * positions as bench vcf (bench_threat_position). Each position is solved
 * with a node budget and empty tables by the chosen search (proof-number
 * or iterative-deepening depth-first); one JSON line with the median
 * positions/s and nodes/s over the runs, and the fraction solved (win or
 * proven none within the depth, not out of budget) and won. */
#include <stdio.h>
#include <string.h>

#include "bench/bench.h"
#include "selfplay/args.h"
#include "engine/board.h"
#include "engine/vct.h"

static const cmd_help_t help = {
    "bench vct", BY_BENCH_VCT,
    "gomoku bench vct [--positions P] [--nodes N] [--depth D] [--algo pn|dfs] [--vcf-nodes N]\n"
    "       [--runs R] [--seed S]",
    "Solves P seeded 15x15 freestyle positions (side to move attacks) with a\n"
    "budget of N nodes each, threats at most D deep, by proof-number search\n"
    "(pn, the default) or iterative-deepening depth-first search (dfs), and\n"
    "prints one JSON line: median positions/s and nodes/s over R runs, the\n"
    "fraction solved (win or proven none) and won.",
};

int bench_vct(int argc, char **argv)
{
    int npos, runs, depth;
    uint64_t nodes, seed, vcf_nodes;
    const char *algo_s;
    arg_spec_t specs[] = {
        ARG(S_BENCH_VCT_POSITIONS, &npos), ARG(S_BENCH_VCT_NODES, &nodes),
        ARG(S_BENCH_VCT_DEPTH, &depth), ARG(S_BENCH_VCT_ALGO, &algo_s),
        ARG(S_BENCH_VCT_VCF_NODES, &vcf_nodes), ARG(S_BENCH_VCF_RUNS, &runs), ARG(S_SEED, &seed),
    };
    int rc = args_parse(&help, specs, ARGS_COUNT(specs), argc, argv, NULL, 0, NULL);
    if (rc != ARGS_OK)
        return args_exit_status(rc);
    vct_algo_t algo = strcmp(algo_s, "dfs") == 0 ? VCT_ALGO_DFS : VCT_ALGO_PN;
    char err[128];
    bench_solver_t sv = {.vct = vct_create((size_t)4 << 20, err, sizeof err),
                         .vct_lim = {.nodes = nodes, .max_depth = depth, .vcf_nodes = vcf_nodes,
                                     .algo = algo}};
    bench_threat_result_t res;
    if (bench_threat_run("bench vct", &sv, npos, runs, seed, &res) != 0)
        return 1;
    printf("{\"bench\":\"vct\",\"rule\":\"freestyle\",\"size\":%d,\"positions\":%d,"
           "\"node_budget\":%llu,\"depth\":%d,\"algo\":\"%s\",\"positions_per_s\":%.1f,"
           "\"nodes_per_s\":%.0f,\"solved\":%.3f,\"won\":%.3f,\"nodes_per_position\":%.1f,"
           "\"runs\":%d}\n",
           BOARD_DEFAULT, npos, (unsigned long long)nodes, depth ? depth : VCT_MAX_DEPTH,
           algo == VCT_ALGO_PN ? "pn" : "dfs", res.positions_per_s, res.nodes_per_s, res.solved,
           res.won, res.nodes_per_position, runs);
    return 0;
}
