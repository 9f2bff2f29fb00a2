/* gomoku bench vcf: the VCF solver on a fixed seeded set of 15x15
 * freestyle positions (bench_threat_position: greedy games cut at ply
 * 20..79). Each position is solved with a node budget and an empty
 * table; one JSON line with the median positions/s and nodes/s over the
 * runs, and the fraction solved (win or proven none, not out of budget). */
#include <stdio.h>
#include <stdlib.h>

#include "cli/args.h"
#include "cli/bench.h"
#include "cli/cmds.h"
#include "engine/board.h"
#include "engine/util.h"
#include "engine/vcf.h"

static const cmd_help_t help = {
    "bench vcf",
    "gomoku bench vcf [--positions P] [--nodes N] [--runs R] [--seed S]",
    "Solves P seeded 15x15 freestyle positions (side to move attacks) with a\n"
    "budget of N nodes each and prints one JSON line: median positions/s and\n"
    "nodes/s over R runs, the fraction solved (win or proven none) and won.",
};

int bench_vcf(int argc, char **argv)
{
    int npos = 200, runs = 3;
    uint64_t nodes = 10000, seed = 1;
    arg_spec_t specs[] = {
        {"positions", ARG_INT, &npos, 1, 100000, "P  positions in the set (default 200)"},
        {"nodes", ARG_U64, &nodes, 1, 1e12, "N  node budget per position (default 10000)"},
        {"runs", ARG_INT, &runs, 1, 1000, "R  runs over the set (default 3)"},
        {"seed", ARG_U64, &seed, 0, 0, "S  seed of the position set (default 1)"},
    };
    int rc = args_parse(&help, specs, ARGS_COUNT(specs), argc, argv, NULL, 0, NULL);
    if (rc != ARGS_OK)
        return args_exit_status(rc);
    board_t *pos = malloc(sizeof *pos * (size_t)npos);
    double *pps = malloc(sizeof *pps * (size_t)runs), *nps = malloc(sizeof *nps * (size_t)runs);
    char err[128];
    vcf_t *s = vcf_create((size_t)1 << 20, err, sizeof err);
    if (!pos || !pps || !nps || !s) {
        fprintf(stderr, "gomoku bench vcf: out of memory\n");
        rc = 1;
        goto out_free;
    }
    uint64_t rng = seed;
    for (int i = 0; i < npos; i++)
        bench_threat_position(&pos[i], &rng);
    int solved = 0, won = 0;
    uint64_t total_nodes = 0;
    for (int r = 0; r < runs; r++) {
        uint64_t n0 = vcf_nodes(s);
        double t = 0.0;
        solved = won = 0;
        for (int i = 0; i < npos; i++) {
            vcf_clear(s);
            vcf_limits_t lim = {.nodes = nodes};
            double t0 = util_now_ms() / 1e3;
            vcf_status_t st = vcf_solve(s, &pos[i], &lim, NULL);
            t += util_now_ms() / 1e3 - t0;
            solved += st != VCF_UNKNOWN;
            won += st == VCF_WIN;
        }
        total_nodes = vcf_nodes(s) - n0;
        pps[r] = t > 0.0 ? npos / t : 0.0;
        nps[r] = t > 0.0 ? (double)total_nodes / t : 0.0;
    }
    printf("{\"bench\":\"vcf\",\"rule\":\"freestyle\",\"size\":%d,\"positions\":%d,"
           "\"node_budget\":%llu,\"positions_per_s\":%.0f,\"nodes_per_s\":%.0f,"
           "\"solved\":%.3f,\"won\":%.3f,\"nodes_per_position\":%.1f,\"runs\":%d}\n",
           BOARD_DEFAULT, npos, (unsigned long long)nodes, bench_median(pps, runs),
           bench_median(nps, runs),
           (double)solved / npos, (double)won / npos, (double)total_nodes / npos, runs);
    rc = 0;
out_free:
    vcf_free(s);
    free(pos);
    free(pps);
    free(nps);
    return rc;
}
