/* gomoku bench vcf: the VCF solver on a fixed seeded set of 15x15
 * freestyle positions (bench_threat_position: greedy games cut at ply
 * 20..79). Each position is solved with a node budget and an empty
 * table; one JSON line with the median positions/s and nodes/s over the
 * runs, and the fraction solved (win or proven none, not out of budget). */
#include <stdio.h>

#include "bench/bench.h"
#include "selfplay/args.h"
#include "engine/board.h"
#include "engine/vcf.h"

static const cmd_help_t help = {
    "bench vcf", BY_BENCH_VCF,
    "gomoku bench vcf [--positions P] [--nodes N] [--runs R] [--seed S]",
    "Solves P seeded 15x15 freestyle positions (side to move attacks) with a\n"
    "budget of N nodes each and prints one JSON line: median positions/s and\n"
    "nodes/s over R runs, the fraction solved (win or proven none) and won.",
};

int bench_vcf(int argc, char **argv)
{
    int npos, runs;
    uint64_t nodes, seed;
    arg_spec_t specs[] = {
        ARG(S_POSITIONS, &npos), ARG(S_BENCH_VCF_NODES, &nodes), ARG(S_BENCH_VCF_RUNS, &runs),
        ARG(S_SEED, &seed),
    };
    int rc = args_parse(&help, specs, ARGS_COUNT(specs), argc, argv, NULL, 0, NULL);
    if (rc != ARGS_OK)
        return args_exit_status(rc);
    char err[128];
    bench_solver_t sv = {.vcf = vcf_create((size_t)1 << 20, err, sizeof err),
                         .vcf_lim = {.nodes = nodes}};
    bench_threat_result_t res;
    if (bench_threat_run("bench vcf", &sv, NULL, npos, runs, seed, &res) != 0)
        return 1;
    printf("{\"bench\":\"vcf\",\"rule\":\"freestyle\",\"size\":%d,\"positions\":%d,"
           "\"node_budget\":%llu,\"positions_per_s\":%.0f,\"nodes_per_s\":%.0f,"
           "\"solved\":%.3f,\"won\":%.3f,\"nodes_per_position\":%.1f,\"runs\":%d}\n",
           BOARD_DEFAULT, npos, (unsigned long long)nodes, res.positions_per_s, res.nodes_per_s,
           res.solved, res.won, res.nodes_per_position, runs);
    return 0;
}
