/* gomoku match A B: two players, alternating colours over balanced random
 * openings; W-L-D for A and an Elo difference with a 95% interval. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmds.h"
#include "play/player.h"
#include "selfplay/args.h"
#include "util/util.h"

/* k random moves in the centre (a (2r+1)^2 square), none of them ending the
 * game; the same seed gives the same opening. */
static void make_opening(board_t *b, int size, rule_t rule, int k, uint64_t seed)
{
    board_init(b, size, rule);
    int c = size / 2, r = size >= 9 ? 3 : 1;
    for (int tries = 0; b->nmoves < k && tries < 1000; tries++) {
        int x = c - r + (int)(util_rng_next(&seed) % (uint64_t)(2 * r + 1));
        int y = c - r + (int)(util_rng_next(&seed) % (uint64_t)(2 * r + 1));
        int m = board_xy(b, x, y);
        if (board_check_move(b, m) != MOVE_OK || board_is_winning_move(b, m))
            continue;
        board_play(b, m);
    }
}

static double elo_of(double s) { return -400.0 * log10(1.0 / s - 1.0); }

/* Elo difference for score s over n games with per-game standard error se:
 * s +- 1.96 se mapped through the logistic curve. At a score of 0 or 1 the
 * Elo is infinite; the finite bound then comes from the exact binomial
 * (Clopper-Pearson) 95% bound, e.g. all n won: score >= 0.025^(1/n). */
static void elo_interval(double w, double l, double d, double *elo, double *lo, double *hi)
{
    double n = w + l + d;
    double s = (w + 0.5 * d) / n;
    double var = (w * (1 - s) * (1 - s) + l * s * s + d * (0.5 - s) * (0.5 - s)) / n;
    double se = sqrt(var / n);
    if (s >= 1.0) {
        *elo = INFINITY;
        *hi = INFINITY;
        *lo = elo_of(pow(0.025, 1.0 / n));
        return;
    }
    if (s <= 0.0) {
        *elo = -INFINITY;
        *lo = -INFINITY;
        *hi = -elo_of(pow(0.025, 1.0 / n));
        return;
    }
    *elo = elo_of(s);
    double a = s - 1.96 * se, b = s + 1.96 * se;
    *lo = a <= 0.0 ? -INFINITY : elo_of(a);
    *hi = b >= 1.0 ? INFINITY : elo_of(b);
}

static void fmt_elo(char *buf, size_t len, double v, bool json)
{
    if (isinf(v))
        snprintf(buf, len, "%s", json ? "null" : v > 0 ? "+inf" : "-inf");
    else
        snprintf(buf, len, json ? "%.1f" : "%+.1f", v);
}

/* Play one game from the opening; *result set. -1 with err on a player failure. */
static int play_game(player_t *black, player_t *white, const board_t *opening, result_t *result,
                     int *plies, bool *forfeit, char *err, size_t errlen)
{
    board_t b = *opening;
    player_new_game(black, &b);
    player_new_game(white, &b);
    *forfeit = false;
    while (!board_over(&b)) {
        player_t *p = b.to_move == STONE_BLACK ? black : white;
        int m;
        char e[256];
        if (player_genmove(p, &b, &m, e, sizeof e) < 0) {
            snprintf(err, errlen, "%s: %s", p->name, e);
            return -1;
        }
        move_status_t st = board_check_move(&b, m);
        if (st != MOVE_OK) {
            fprintf(stderr, "%s played an illegal move (%s): it loses the game\n", p->name,
                    move_status_str(st));
            *result = b.to_move == STONE_BLACK ? RESULT_WHITE : RESULT_BLACK;
            *plies = b.nmoves;
            *forfeit = true;
            return 0;
        }
        board_play(&b, m);
        player_notify(black, &b, m);
        player_notify(white, &b, m);
    }
    *result = (result_t)b.result;
    *plies = b.nmoves;
    return 0;
}

int cmd_match(int argc, char **argv)
{
    static const cmd_help_t help = {
        "match", BY_MATCH,
        "gomoku match A B [--games N --rule R --size N --visits V --time MS --openings K --json]",
        "Plays N games between players A and B (a model file, bot:random,\n"
        "bot:greedy, pbrain:COMMAND), alternating colours. Each pair of games\n"
        "starts from the same random opening of K moves near the centre, once\n"
        "with each colour. Prints W-L-D for A and the Elo difference of A over B\n"
        "with a 95% interval (score +- 1.96 standard errors). At a 100% or 0%\n"
        "score the Elo is infinite and only the finite bound is given, from the\n"
        "exact binomial bound (all N won: score >= 0.025^(1/N)).\n"
        "--vcf-nodes N alone also sets the root's VCF check to 100N."};
    rule_t rule;
    int games, size, openings;
    uint64_t seed;
    bool json, quiet;
    player_opts_t o;
    player_opts_default(&o);
    arg_spec_t specs[] = {
        ARG(S_MATCH_GAMES, &games),
        ARG(S_RULE, &rule),
        ARG(S_SIZE, &size),
        ARG(S_PRECISION, &o.precision),
        ARG(S_SEED, &seed),
        ARG(S_OPENINGS, &openings),
        ARG(S_JSON, &json),
        ARG(S_MATCH_QUIET, &quiet),
        ARG(S_MATCH_VISITS, &o.visits),
        ARG(S_TIME, &o.time_ms),
        ARG(S_SEARCH_THREADS, &o.threads),
        ARG(S_DEVICE, &o.device),
        ARG(S_C_PUCT, &o.search.c_puct),
        ARG(S_FPU, &o.search.fpu),
        ARG(S_FPU_ROOT, &o.search.fpu_root),
        ARG(S_VCF_NODES, &o.search.vcf_nodes),
        ARG(S_VCF_ROOT_NODES, &o.search.vcf_root_nodes),
    };
    char *pos[2];
    int npos = 0, ns = ARGS_COUNT(specs);
    int rc = args_parse(&help, specs, ns, argc, argv, pos, 2, &npos);
    if (rc != ARGS_OK)
        return args_exit_status(rc);
    if (npos != 2)
        return args_fail(&help, "want two players A and B, got %d", npos);
    if (!args_given(specs, ns, S_MATCH_VISITS) && o.time_ms > 0)
        o.visits = 0;   /* --time alone: a pure time budget */
    if (o.visits == 0 && o.time_ms == 0)
        return args_fail(&help, "--visits 0 needs --time MS");
    if (openings * 2 >= size * size)
        return args_fail(&help, "--openings %d is too many for a %dx%d board", openings, size, size);
    if (args_given(specs, ns, S_VCF_NODES) && !args_given(specs, ns, S_VCF_ROOT_NODES))
        o.search.vcf_root_nodes = o.search.vcf_nodes * 100;
    o.quiet = quiet;
    char err[512];
    player_t *pl[2];
    for (int i = 0; i < 2; i++) {
        o.seed = seed + (uint64_t)i * 7919;
        pl[i] = player_create(pos[i], rule, size, &o, err, sizeof err);
        if (!pl[i]) {
            fprintf(stderr, "gomoku match: %s\n", err);
            if (i == 1)
                player_free(pl[0]);
            return 1;
        }
    }
    int w = 0, l = 0, d = 0, status = 0;
    for (int g = 0; g < games; g++) {
        board_t opening;
        make_opening(&opening, size, rule, openings, seed * 1000003u + (uint64_t)(g / 2));
        bool a_black = g % 2 == 0;
        player_t *black = a_black ? pl[0] : pl[1], *white = a_black ? pl[1] : pl[0];
        result_t res;
        int plies;
        bool forfeit;
        if (play_game(black, white, &opening, &res, &plies, &forfeit, err, sizeof err) < 0) {
            fprintf(stderr, "gomoku match: game %d: %s\n", g + 1, err);
            status = 1;
            break;
        }
        const char *who;
        if (res == RESULT_DRAW) {
            d++;
            who = "draw";
        } else if ((res == RESULT_BLACK) == a_black) {
            w++;
            who = "A wins";
        } else {
            l++;
            who = "B wins";
        }
        if (!quiet)
            fprintf(stderr, "game %d/%d: A=%s plays %s: %s in %d plies%s  (A %d-%d-%d)\n", g + 1,
                    games, pl[0]->name, a_black ? "black" : "white", who, plies,
                    forfeit ? " (illegal move)" : "", w, l, d);
    }
    int n = w + l + d;
    if (n > 0) {
        double elo, lo, hi;
        elo_interval(w, l, d, &elo, &lo, &hi);
        char e[32], a[32], b[32];
        fmt_elo(e, sizeof e, elo, false);
        fmt_elo(a, sizeof a, lo, false);
        fmt_elo(b, sizeof b, hi, false);
        double score = (w + 0.5 * d) / n;
        printf("%s vs %s: %d-%d-%d (W-L-D for A) score %.1f%% elo %s [95%%: %s, %s] over %d games\n",
               pl[0]->name, pl[1]->name, w, l, d, 100.0 * score, e, a, b, n);
        if (json) {
            fmt_elo(e, sizeof e, elo, true);
            fmt_elo(a, sizeof a, lo, true);
            fmt_elo(b, sizeof b, hi, true);
            printf("{\"a\":");
            util_json_write(stdout, pl[0]->name);
            printf(",\"b\":");
            util_json_write(stdout, pl[1]->name);
            printf(",\"games\":%d,\"wins\":%d,\"losses\":%d,\"draws\":%d,\"score\":%.4f,"
                   "\"elo\":%s,\"elo_low\":%s,\"elo_high\":%s,\"rule\":\"%s\",\"size\":%d}\n",
                   n, w, l, d, score, e, a, b, rule_name(rule), size);
        }
    }
    player_free(pl[0]);
    player_free(pl[1]);
    return status;
}
