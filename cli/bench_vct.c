/* gomoku bench vct: the VCT solver on the same seeded 15x15 freestyle
 * positions as bench vcf (bench_threat_position). Each position is solved
 * with a node budget and empty tables by the chosen search (proof-number
 * or iterative-deepening depth-first); one JSON line with the median
 * positions/s and nodes/s over the runs, and the fraction solved (win or
 * proven none within the depth, not out of budget) and won. */
#include <stdio.h>
#include <string.h>

#include "cli/args.h"
#include "cli/bench.h"
#include "cli/cmds.h"
#include "engine/board.h"
#include "engine/vct.h"

static const cmd_help_t help = {
    "bench vct",
    "gomoku bench vct [--positions P] [--nodes N] [--depth D] [--algo pn|dfs] [--vcf-nodes N]\n"
    "       [--runs R] [--seed S]",
    "Solves P seeded 15x15 freestyle positions (side to move attacks) with a\n"
    "budget of N nodes each, threats at most D deep, by proof-number search\n"
    "(pn, the default) or iterative-deepening depth-first search (dfs), and\n"
    "prints one JSON line: median positions/s and nodes/s over R runs, the\n"
    "fraction solved (win or proven none) and won.",
};

struct vct_run {
    vct_t *s;
    vct_limits_t lim;
};

static void run_clear(void *r) { vct_clear(((struct vct_run *)r)->s); }
static uint64_t run_nodes(const void *r) { return vct_nodes(((const struct vct_run *)r)->s); }

static int run_solve(void *r, const board_t *b)
{
    struct vct_run *v = r;
    return (int)vct_solve(v->s, b, &v->lim, NULL);
}

int bench_vct(int argc, char **argv)
{
    int npos = 100, runs = 3, depth = 0;
    uint64_t nodes = 2000, seed = 1, vcf_nodes = VCT_VCF_NODES;
    const char *algo_s = "pn";
    arg_spec_t specs[] = {
        {"positions", ARG_INT, &npos, 1, 100000, "P  positions in the set (default 100)"},
        {"nodes", ARG_U64, &nodes, 1, 1e12, "N  node budget per position (default 2000)"},
        {"depth", ARG_INT, &depth, 1, VCT_MAX_DEPTH, "D  threats at most (default 32)"},
        {"algo", ARG_STR, &algo_s, 0, 0, "A  pn or dfs (default pn)"},
        {"vcf-nodes", ARG_U64, &vcf_nodes, 1, 1e12, "N  budget of each inner VCF check (default 200)"},
        {"runs", ARG_INT, &runs, 1, 1000, "R  runs over the set (default 3)"},
        {"seed", ARG_U64, &seed, 0, 0, "S  seed of the position set (default 1)"},
    };
    int rc = args_parse(&help, specs, ARGS_COUNT(specs), argc, argv, NULL, 0, NULL);
    if (rc != ARGS_OK)
        return args_exit_status(rc);
    vct_algo_t algo = VCT_ALGO_PN;
    if (strcmp(algo_s, "dfs") == 0)
        algo = VCT_ALGO_DFS;
    else if (strcmp(algo_s, "pn") != 0)
        return args_fail(&help, "--algo must be pn or dfs, not '%s'", algo_s);
    char err[128];
    struct vct_run run = {.s = vct_create((size_t)4 << 20, err, sizeof err),
                          .lim = {.nodes = nodes, .max_depth = depth, .vcf_nodes = vcf_nodes,
                                  .algo = algo}};
    bench_solver_t sv = {.s = &run, .clear = run_clear, .solve = run_solve, .nodes = run_nodes};
    bench_threat_result_t res;
    if (!run.s || bench_threat_run(&sv, npos, runs, seed, &res) < 0) {
        fprintf(stderr, "gomoku bench vct: out of memory\n");
        vct_free(run.s);
        return 1;
    }
    printf("{\"bench\":\"vct\",\"rule\":\"freestyle\",\"size\":%d,\"positions\":%d,"
           "\"node_budget\":%llu,\"depth\":%d,\"algo\":\"%s\",\"positions_per_s\":%.1f,"
           "\"nodes_per_s\":%.0f,\"solved\":%.3f,\"won\":%.3f,\"nodes_per_position\":%.1f,"
           "\"runs\":%d}\n",
           BOARD_DEFAULT, npos, (unsigned long long)nodes, depth ? depth : VCT_MAX_DEPTH,
           algo == VCT_ALGO_PN ? "pn" : "dfs", res.positions_per_s, res.nodes_per_s, res.solved,
           res.won, res.nodes_per_position, runs);
    vct_free(run.s);
    return 0;
}
