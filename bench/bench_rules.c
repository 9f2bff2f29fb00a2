/* gomoku bench rules: random playouts on 15x15 for each rule; moves/s
 * counts legal moves played (random move generation from an empty-point
 * list, the legality check with renju's forbidden check for black, the
 * win check). One JSON line per rule: the median of the runs and the runs. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "bench/bench.h"
#include "selfplay/args.h"
#include "engine/board.h"
#include "engine/bot.h"
#include "util/util.h"

static const cmd_help_t help = {
    "bench rules", BY_BENCH_RULES,
    "gomoku bench rules [--runs R] [--seconds S] [--seed N]",
    "Random playouts on 15x15 under each rule; prints one JSON line per rule\n"
    "with the median moves/s over R runs of S seconds each, and every run.",
};

/* One random game to the end; returns the moves played. */
static long playout(board_t *b, rule_t rule, uint64_t *rng)
{
    int empty[BOARD_CELLS], n = BOARD_DEFAULT * BOARD_DEFAULT;
    board_init(b, BOARD_DEFAULT, rule);
    for (int i = 0; i < n; i++)
        empty[i] = i;
    while (!board_over(b)) {
        int k = n;   /* empty[0..k-1]: not yet tried this turn */
        for (;;) {
            if (k == 0)
                return b->nmoves;   /* renju black with only forbidden points: draw */
            int i = (int)util_rng_below(rng, (uint32_t)k);
            if (board_play(b, empty[i]) == MOVE_OK) {
                empty[i] = empty[--n];
                break;
            }
            int t = empty[i];   /* forbidden now; may be legal later */
            empty[i] = empty[k - 1];
            empty[k - 1] = t;
            k--;
        }
    }
    return b->nmoves;
}

int bench_rules(int argc, char **argv)
{
    int runs;
    double seconds;
    uint64_t seed;
    arg_spec_t specs[] = {
        ARG(S_BENCH_RUNS, &runs), ARG(S_BENCH_SECONDS, &seconds), ARG(S_SEED, &seed),
    };
    int rc = args_parse(&help, specs, ARGS_COUNT(specs), argc, argv, NULL, 0, NULL);
    if (rc != ARGS_OK)
        return args_exit_status(rc);
    double *rate = malloc(sizeof *rate * (size_t)runs);
    double *sorted = malloc(sizeof *sorted * (size_t)runs);
    if (!rate || !sorted) {
        free(rate);
        free(sorted);
        fprintf(stderr, "gomoku bench rules: out of memory\n");
        return 1;
    }
    uint64_t rng = seed;
    board_t b;
    for (int r = 0; r < RULE_COUNT; r++) {
        long games = 0, moves = 0;
        for (int k = 0; k < runs; k++) {
            long m = 0;
            double t0 = util_now_ms() * 1e-3, t;
            do {
                m += playout(&b, (rule_t)r, &rng);
                games++;
            } while ((t = util_now_ms() * 1e-3 - t0) < seconds);
            rate[k] = m / t;
            moves += m;
        }
        for (int k = 0; k < runs; k++)
            sorted[k] = rate[k];
        double median = bench_median(sorted, runs);
        printf("{\"bench\":\"rules\",\"rule\":\"%s\",\"size\":%d,\"moves_per_s\":%.0f,"
               "\"runs\":[", rule_name((rule_t)r), BOARD_DEFAULT, median);
        for (int k = 0; k < runs; k++)
            printf("%s%.0f", k ? "," : "", rate[k]);
        printf("],\"run_seconds\":%g,\"games\":%ld,\"avg_game_moves\":%.1f}\n", seconds, games,
               (double)moves / (double)games);
        fflush(stdout);
    }
    free(rate);
    free(sorted);
    return 0;
}
