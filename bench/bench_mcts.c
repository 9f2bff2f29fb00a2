/* gomoku bench mcts: search playouts per second on one core with the
 * zero-cost uniform evaluator (so the figure is the tree's own cost). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"
#include "selfplay/args.h"
#include "engine/bot.h"
#include "util/util.h"
#include "mcts/mcts.h"

static const cmd_help_t help = {
    "bench mcts", BY_BENCH_MCTS, "gomoku bench mcts [--size N --visits V --runs K --batch B]",
    "Search playouts per second on one thread with a zero-cost uniform\n"
    "evaluator (a playout: select to a leaf, expand with priors, back up).\n"
    "Each run searches a different opening from a fresh tree. Prints one\n"
    "JSON line; playouts_per_s is the median over the runs. With --vcf-nodes\n"
    "each opening is searched twice, without and with the VCF check, one\n"
    "after the other; vcf_ratio is the median of the per-opening ratios\n"
    "(with / without) and vcf_playouts_per_s is playouts_per_s times it.\n"
    "Positions the tree proves before V playouts (a four to block, a quick\n"
    "five) are replaced by the next (skipped_decided counts them)."};

/* The position of a run: `stones` moves of the greedy bot (a random one a
 * quarter of the time, from seed) stopping short of a finished game, or
 * with none, 0-3 random stones near the centre (r % 4, from the stream
 * *rs that runs through all runs). */
static void opening(board_t *b, int size, rule_t rule, int stones, uint64_t seed, int r,
                    uint64_t *rs)
{
    board_init(b, size, rule);
    uint64_t brng = seed;
    while (b->nmoves < stones && !board_over(b)) {
        board_t keep = *b;
        board_play(b, util_rng_next(&brng) % 4 ? bot_greedy_move(b, &brng)
                                               : bot_random_move(b, &brng));
        if (board_over(b))
            *b = keep;   /* stop short of a finished game */
        if (board_over(b) || b->nmoves == keep.nmoves)
            break;
    }
    for (int k = 0; k < (stones ? 0 : r % 4) && !board_over(b); k++) {
        *rs = *rs * 6364136223846793005ull + 1442695040888963407ull;
        int c = size / 2, span = size > 6 ? 5 : size;
        int x = c - span / 2 + (int)((*rs >> 33) % (uint64_t)span);
        int y = c - span / 2 + (int)((*rs >> 45) % (uint64_t)span);
        if (b->cells[board_xy(b, x, y)] == STONE_EMPTY)
            board_play(b, board_xy(b, x, y));
    }
}

int bench_mcts(int argc, char **argv)
{
    int size, visits, runs, batch, mem_mb, vcf_nodes, stones;
    rule_t rule;
    uint64_t seed;
    arg_spec_t specs[] = {
        ARG(S_SIZE, &size), ARG(S_RULE, &rule), ARG(S_BENCH_MCTS_VISITS, &visits),
        ARG(S_BENCH_RUNS, &runs), ARG(S_BENCH_MCTS_BATCH, &batch), ARG(S_BENCH_MCTS_MEM, &mem_mb),
        ARG(S_SEED, &seed), ARG(S_STONES, &stones), ARG(S_BENCH_MCTS_VCF_NODES, &vcf_nodes),
    };
    int rc = args_parse(&help, specs, ARGS_COUNT(specs), argc, argv, NULL, 0, NULL);
    if (rc != ARGS_OK)
        return args_exit_status(rc);

    char err[256];
    mcts_params_t p;
    mcts_params_default(&p);
    p.mem_bytes = (size_t)mem_mb << 20;
    p.seed = seed;
    p.max_pending = batch;
    p.vcf_nodes = 0;   /* the baseline: the tree alone */
    p.vcf_root_nodes = 0;
    mcts_t *t = mcts_create(&p, err, sizeof err), *tv = NULL;
    p.vcf_nodes = (uint32_t)vcf_nodes;
    p.vcf_root_nodes = (uint32_t)vcf_nodes * 20;
    if (t && vcf_nodes)
        tv = mcts_create(&p, err, sizeof err);
    if (!t || (vcf_nodes && !tv)) {
        mcts_free(t);
        fprintf(stderr, "gomoku bench mcts: %s\n", err);
        return 1;
    }
    double *rate = calloc((size_t)runs, sizeof *rate);
    double *vrate = calloc((size_t)runs, sizeof *vrate);
    if (!rate || !vrate) {
        free(rate);
        free(vrate);
        mcts_free(tv);
        mcts_free(t);
        fprintf(stderr, "gomoku bench mcts: out of memory\n");
        return 1;
    }
    uint64_t rs = seed * 2654435761u + 7, total = 0;
    bool full = false;
    double secs = 0.0;
    int skipped = 0, tries = 0;
    for (int r = 0; r < runs; r++) {
        board_t b;
        mcts_limits_t lim = {.visits = (uint32_t)visits + 1, .batch = batch};
        mcts_result_t res;
        /* a position the tree can search: one it proves (a four to block,
         * a quick five) stops early and says nothing of the tree's speed */
        do {
            if (tries++ >= 50 * runs) {
                fprintf(stderr, "gomoku bench mcts: %d of %d positions were decided before %d "
                        "playouts; try fewer --stones or --visits\n", skipped, tries - 1, visits);
                free(rate);
                free(vrate);
                mcts_free(tv);
                mcts_free(t);
                return 1;
            }
            opening(&b, size, rule, stones, seed + (uint64_t)r + (uint64_t)(tries - 1) * 7919u,
                    r, &rs);
            mcts_set_root(t, &b);
            mcts_search(t, mcts_eval_uniform, NULL, &lim, &res);
        } while ((res.proven != 0 || res.playouts < (uint64_t)visits) && ++skipped);
        rate[r] = res.playouts_per_s;
        total += res.playouts;
        secs += res.seconds;
        full = full || res.mem_full;
        if (tv) {
            mcts_set_root(tv, &b);
            mcts_search(tv, mcts_eval_uniform, NULL, &lim, &res);
            vrate[r] = res.playouts_per_s / rate[r];   /* paired: the same opening */
        }
    }
    bench_sort(vrate, runs);
    bench_sort(rate, runs);
    printf("{\"bench\":\"mcts\",\"rule\":\"%s\",\"size\":%d,\"stones\":%d,\"visits\":%d,\"runs\":%d,"
           "\"batch\":%d,\"threads\":1,\"playouts\":%llu,\"seconds\":%.3f,"
           "\"playouts_per_s\":%.0f,\"playouts_per_s_min\":%.0f,\"playouts_per_s_max\":%.0f,"
           "\"mem_full\":%s,\"skipped_decided\":%d",
           rule_name(rule), size, stones, visits, runs, batch, (unsigned long long)total, secs,
           rate[runs / 2], rate[0], rate[runs - 1], full ? "true" : "false", skipped);
    if (tv)
        printf(",\"vcf_nodes\":%d,\"vcf_playouts_per_s\":%.0f,\"vcf_ratio\":%.3f,"
               "\"vcf_checks\":%llu,\"vcf_wins\":%llu",
               vcf_nodes, rate[runs / 2] * vrate[runs / 2], vrate[runs / 2],
               (unsigned long long)mcts_vcf_checks(tv), (unsigned long long)mcts_vcf_wins(tv));
    printf("}\n");
    free(rate);
    free(vrate);
    mcts_free(tv);
    mcts_free(t);
    return 0;
}
