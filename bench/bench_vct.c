/* gomoku bench vct: the VCT solver on the same seeded 15x15 freestyle
 * positions as bench vcf (bench_threat_position), or on the positions of
 * a file. Each position is solved with a node budget and empty tables by
 * the chosen search (proof-number or iterative-deepening depth-first);
 * one JSON line with the median positions/s and nodes/s over the runs,
 * and the fraction solved (win or proven none within the depth, not out
 * of budget) and won. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "play/match.h"
#include "selfplay/args.h"
#include "engine/board.h"
#include "engine/vct.h"
#include "util/util.h"

static const cmd_help_t help = {
    "bench vct", BY_BENCH_VCT,
    "gomoku bench vct [--positions P] [--file F] [--nodes N] [--depth D] [--algo pn|dfs]\n"
    "       [--vcf-nodes N] [--runs R] [--seed S]",
    "Solves P seeded 15x15 freestyle positions (side to move attacks), or\n"
    "those of F, with a budget of N nodes each, threats at most D deep, by\n"
    "proof-number search (pn, the default) or iterative-deepening depth-first\n"
    "search (dfs), and prints one JSON line: median positions/s and nodes/s\n"
    "over R runs, the fraction solved (win or proven none) and won. The\n"
    "solver has 256 bytes a node of the budget (at least 4 MiB), so that its\n"
    "node pool does not run out first.",
};

int bench_vct(int argc, char **argv)
{
    int npos, runs, depth;
    uint64_t nodes, seed, vcf_nodes;
    const char *algo_s, *file = NULL;
    arg_spec_t specs[] = {
        ARG(S_BENCH_VCT_POSITIONS, &npos), ARG(S_BENCH_VCT_FILE, &file),
        ARG(S_BENCH_VCT_NODES, &nodes), ARG(S_BENCH_VCT_DEPTH, &depth),
        ARG(S_BENCH_VCT_ALGO, &algo_s), ARG(S_BENCH_VCT_VCF_NODES, &vcf_nodes),
        ARG(S_BENCH_VCF_RUNS, &runs), ARG(S_SEED, &seed),
    };
    int rc = args_parse(&help, specs, ARGS_COUNT(specs), argc, argv, NULL, 0, NULL);
    if (rc != ARGS_OK)
        return args_exit_status(rc);
    char err[512];
    board_t *set = NULL;
    if (file && match_openings_load(file, BOARD_DEFAULT, RULE_FREESTYLE, &set, &npos, err,
                                    sizeof err) != 0) {
        fprintf(stderr, "gomoku bench vct: %s\n", err);
        return 1;
    }
    vct_algo_t algo = strcmp(algo_s, "dfs") == 0 ? VCT_ALGO_DFS : VCT_ALGO_PN;
    size_t bytes = nodes > ((size_t)1 << 30) / 256 ? (size_t)1 << 30 : (size_t)nodes * 256;
    if (bytes < ((size_t)4 << 20))
        bytes = (size_t)4 << 20;
    bench_solver_t sv = {.vct = vct_create(bytes, err, sizeof err),
                         .vct_lim = {.nodes = nodes, .max_depth = depth, .vcf_nodes = vcf_nodes,
                                     .algo = algo}};
    bench_threat_result_t res;
    rc = bench_threat_run("bench vct", &sv, set, npos, runs, seed, &res);
    free(set);
    if (rc != 0)
        return 1;
    char fbuf[1024];
    printf("{\"bench\":\"vct\",\"rule\":\"freestyle\",\"size\":%d,\"positions\":%d,"
           "\"file\":%s,\"node_budget\":%llu,\"depth\":%d,\"algo\":\"%s\","
           "\"positions_per_s\":%.1f,\"nodes_per_s\":%.0f,\"solved\":%.3f,\"won\":%.3f,"
           "\"nodes_per_position\":%.1f,\"runs\":%d}\n",
           BOARD_DEFAULT, npos, file ? util_json_str(file, fbuf, sizeof fbuf) : "null",
           (unsigned long long)nodes, depth ? depth : VCT_MAX_DEPTH,
           algo == VCT_ALGO_PN ? "pn" : "dfs", res.positions_per_s, res.nodes_per_s, res.solved,
           res.won, res.nodes_per_position, runs);
    return 0;
}
