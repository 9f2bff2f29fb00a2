/* gomoku bench mcts: search playouts per second on one core with the
 * zero-cost uniform evaluator (so the figure is the tree's own cost). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/args.h"
#include "cli/cmds.h"
#include "mcts/mcts.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int bench_mcts(int argc, char **argv)
{
    int size = 15, visits = 20000, runs = 5, batch = 1, mem_mb = 512;
    const char *rule_s = "freestyle";
    uint64_t seed = 1;
    arg_spec_t specs[] = {
        {"size", ARG_INT, &size, BOARD_MIN, BOARD_MAX, "N  board size (default 15)"},
        {"rule", ARG_STR, &rule_s, 0, 0, "R  freestyle|standard|renju (default freestyle)"},
        {"visits", ARG_INT, &visits, 100, 2000000, "V  playouts per search (default 20000)"},
        {"runs", ARG_INT, &runs, 1, 100, "K  searches; the median is reported (default 5)"},
        {"batch", ARG_INT, &batch, 1, 256, "B  leaves per eval call, virtual loss (default 1)"},
        {"mem", ARG_INT, &mem_mb, 16, 65536, "MB tree memory (default 512)"},
        {"seed", ARG_U64, &seed, 0, 0, "S  seed (default 1)"},
    };
    cmd_help_t h = {"bench mcts", "gomoku bench mcts [--size N --visits V --runs K --batch B]",
                    "Search playouts per second on one thread with a zero-cost uniform\n"
                    "evaluator (a playout: select to a leaf, expand with priors, back up).\n"
                    "Each run searches a different opening from a fresh tree. Prints one\n"
                    "JSON line; playouts_per_s is the median over the runs."};
    int nspecs = (int)(sizeof specs / sizeof specs[0]);
    int npos = 0;
    int rc = args_parse(&h, specs, nspecs, argc, argv, NULL, 0, &npos);
    if (rc == ARGS_HELP)
        return 0;
    if (rc != ARGS_OK)
        return 2;
    rule_t rule;
    if (!rule_parse(rule_s, &rule))
        return args_fail(&h, "unknown rule '%s' (freestyle, standard, renju)", rule_s);

    char err[256];
    mcts_params_t p;
    mcts_params_default(&p);
    p.mem_bytes = (size_t)mem_mb << 20;
    p.seed = seed;
    p.max_pending = batch;
    mcts_t *t = mcts_create(&p, err, sizeof err);
    if (!t) {
        fprintf(stderr, "gomoku bench mcts: %s\n", err);
        return 1;
    }
    double *rate = calloc((size_t)runs, sizeof *rate);
    if (!rate) {
        mcts_free(t);
        fprintf(stderr, "gomoku bench mcts: out of memory\n");
        return 1;
    }
    uint64_t rs = seed * 2654435761u + 7, total = 0;
    bool full = false;
    double secs = 0.0;
    for (int r = 0; r < runs; r++) {
        /* a few random opening stones near the centre, different per run */
        board_t b;
        board_init(&b, size, rule);
        for (int k = 0; k < r % 4 && !board_over(&b); k++) {
            rs = rs * 6364136223846793005ull + 1442695040888963407ull;
            int c = size / 2, span = size > 6 ? 5 : size;
            int x = c - span / 2 + (int)((rs >> 33) % (uint64_t)span);
            int y = c - span / 2 + (int)((rs >> 45) % (uint64_t)span);
            board_play(&b, board_xy(&b, x, y));
        }
        mcts_set_root(t, &b);
        mcts_limits_t lim = {.visits = (uint32_t)visits + 1, .batch = batch};
        mcts_result_t res;
        mcts_search(t, mcts_eval_uniform, NULL, &lim, &res);
        rate[r] = res.playouts_per_s;
        total += res.playouts;
        secs += res.seconds;
        full = full || res.mem_full;
    }
    qsort(rate, (size_t)runs, sizeof *rate, cmp_double);
    printf("{\"bench\":\"mcts\",\"rule\":\"%s\",\"size\":%d,\"visits\":%d,\"runs\":%d,"
           "\"batch\":%d,\"threads\":1,\"playouts\":%llu,\"seconds\":%.3f,"
           "\"playouts_per_s\":%.0f,\"playouts_per_s_min\":%.0f,\"playouts_per_s_max\":%.0f,"
           "\"mem_full\":%s}\n",
           rule_name(rule), size, visits, runs, batch, (unsigned long long)total, secs,
           rate[runs / 2], rate[0], rate[runs - 1], full ? "true" : "false");
    free(rate);
    mcts_free(t);
    return 0;
}
