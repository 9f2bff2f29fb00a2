/* gomoku match A B: two players, alternating colours over balanced random
 * openings; W-L-D for A and an Elo difference with a 95% interval. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmds.h"
#include "engine/gamefile.h"
#include "play/match.h"
#include "play/player.h"
#include "cli/options.h"
#include "selfplay/args.h"
#include "util/util.h"

static void fmt_elo(char *buf, size_t len, double v, bool json)
{
    if (isinf(v))
        snprintf(buf, len, "%s", json ? "null" : v > 0 ? "+inf" : "-inf");
    else
        snprintf(buf, len, json ? "%.1f" : "%+.1f", v);
}

static const cmd_help_t help = {
    "match", BY_MATCH,
    "gomoku match A B [--games N --rule R --size N --visits V --time MS --match-time MS\n"
    "                  --openings K|FILE --json]",
    "Plays N games between players A and B (a model file, bot:random,\n"
    "bot:greedy, bot:vcf, bot:vct, pbrain:COMMAND), alternating colours. Each\n"
    "pair of games starts from the same opening, once with each colour: K\n"
    "random stones near the centre, or the next line of FILE (one opening per\n"
    "line, 'h8 i9 j7' or Gomocup centre offsets '0,0, 1,-1, 2,0'; the lines\n"
    "are used in order and start over when N needs more). --match-time MS\n"
    "gives each player a clock for the game; who runs out of it loses.\n"
    "--save DIR writes every game as DIR/game_NNNN.psq (DIR is made if missing).\n"
    "Prints W-L-D for A, per colour, and the Elo difference of A over B\n"
    "with a 95% interval (score +- 1.96 standard errors). At a 100% or 0%\n"
    "score the Elo is infinite and only the finite bound is given, from the\n"
    "exact binomial bound (all N won: score >= 0.025^(1/N)).\n"
    "--vcf-nodes N alone also sets the root's VCF check to 100N."};

/* --openings: a count of random stones, or a file of openings. */
typedef struct openings {
    int random;         /* stones per random opening, when boards is NULL */
    board_t *boards;    /* from a file */
    int n;
} openings_t;

static int openings_get(openings_t *op, const char *arg, int size, rule_t rule, char *err,
                        size_t errlen)
{
    *op = (openings_t){0};
    char *end;
    long k = strtol(arg, &end, 10);
    if (*arg && *end == '\0') {
        if (k < 0 || k > 20) {
            snprintf(err, errlen, "--openings %ld: a count of random stones must be in 0..20", k);
            return -1;
        }
        if (k * 2 >= size * size) {
            snprintf(err, errlen, "--openings %ld is too many for a %dx%d board", k, size, size);
            return -1;
        }
        op->random = (int)k;
        return 0;
    }
    return match_openings_load(arg, size, rule, &op->boards, &op->n, err, errlen);
}

/* Game g (0-based) as save_dir/game_NNNN.psq, each move with its time;
 * 0, or -1 said on stderr. */
static int save_game(const char *save_dir, int g, const board_t *b, const int *move_ms,
                     const char *black, const char *white)
{
    char path[4096], err[4400];
    snprintf(path, sizeof path, "%s/game_%04d.psq", save_dir, g + 1);
    if (psq_save_board(path, b, move_ms, black, white, err, sizeof err) == 0)
        return 0;
    fprintf(stderr, "gomoku match: %s\n", err);
    return -1;
}

/* The opening of game g (0-based): pairs of games share one. */
static void openings_pick(const openings_t *op, board_t *b, int g, int size, rule_t rule,
                          uint64_t seed)
{
    if (op->boards)
        *b = op->boards[(g / 2) % op->n];
    else
        match_opening(b, size, rule, op->random, seed * 1000003u + (uint64_t)(g / 2));
}

int cmd_match(int argc, char **argv)
{
    rule_t rule;
    int games, size, match_time;
    const char *openings_arg, *save_dir = NULL;
    uint64_t seed;
    bool json, quiet;
    player_opts_t o;
    player_opts_default(&o);
    arg_spec_t specs[ARGS_MAX] = {
        ARG(S_MATCH_GAMES, &games), ARG(S_OPENINGS, &openings_arg),
        ARG(S_MATCH_TIME, &match_time), ARG(S_MATCH_SAVE, &save_dir),
        ARG(S_RULE, &rule), ARG(S_SIZE, &size), ARG(S_SEED, &seed),
        ARG(S_JSON, &json), ARG(S_MATCH_QUIET, &quiet),
        ARG(S_VCF_NODES, &o.search.vcf_nodes), ARG(S_VCF_ROOT_NODES, &o.search.vcf_root_nodes),
    };
    char *pos[2];
    int npos = 0, ns = args_count(specs, ARGS_MAX);
    ns += options_player(specs + ns, &o, S_MATCH_VISITS);
    int rc = args_parse(&help, specs, ns, argc, argv, pos, 2, &npos);
    if (rc != ARGS_OK)
        return args_exit_status(rc);
    if (npos != 2)
        return args_fail(&help, "want two players A and B, got %d", npos);
    if (!args_given(specs, ns, S_MATCH_VISITS) && (o.time_ms > 0 || match_time > 0))
        o.visits = 0;   /* --time or --match-time alone: a pure time budget */
    if (o.visits == 0 && o.time_ms == 0 && match_time == 0)
        return args_fail(&help, "--visits 0 needs --time MS or --match-time MS");
    if (args_given(specs, ns, S_VCF_NODES) && !args_given(specs, ns, S_VCF_ROOT_NODES))
        o.search.vcf_root_nodes = o.search.vcf_nodes * 100;
    o.quiet = quiet;
    o.match_time_ms = match_time;
    char err[4200];
    if (save_dir && util_mkdir(save_dir, err, sizeof err) != 0)
        return args_fail(&help, "--save: %s", err);
    openings_t op;
    if (openings_get(&op, openings_arg, size, rule, err, sizeof err) != 0)
        return args_fail(&help, "%s", err);
    /* both specs checked before either is loaded: a typo in B fails at once */
    for (int i = 0; i < 2; i++)
        if (player_spec_check(pos[i], err, sizeof err) != 0) {
            free(op.boards);
            return args_fail(&help, "%s", err);
        }
    player_t *pl[2];
    for (int i = 0; i < 2; i++) {
        o.seed = seed + (uint64_t)i * 7919;
        pl[i] = player_create(pos[i], rule, size, &o, err, sizeof err);
        if (!pl[i]) {
            fprintf(stderr, "gomoku match: %s\n", err);
            if (i == 1)
                player_free(pl[0]);
            free(op.boards);
            return 1;
        }
    }
    int w = 0, l = 0, d = 0, status = 0;
    int by[2][3] = {{0}};   /* [A black, A white][win, loss, draw] */
    int forfeits[2] = {0};  /* games A, B lost by forfeit */
    int slowest[2] = {0};   /* A's and B's longest move (ms) */
    int over[2] = {0};      /* moves of A, B longer than --time */
    for (int g = 0; g < games; g++) {
        board_t opening;
        openings_pick(&op, &opening, g, size, rule, seed);
        bool a_black = g % 2 == 0;
        player_t *black = a_black ? pl[0] : pl[1], *white = a_black ? pl[1] : pl[0];
        result_t res;
        int plies;
        bool forfeit;
        board_t end;
        int move_ms[BOARD_CELLS];
        if (match_play(black, white, &opening, match_time, &res, &plies, &forfeit, &end, move_ms,
                       err, sizeof err) < 0) {
            fprintf(stderr, "gomoku match: game %d: %s\n", g + 1, err);
            status = 1;
            break;
        }
        if (forfeit)
            fprintf(stderr, "%s\n", err);
        /* the plies after the opening, and the move that lost on forfeit */
        for (int i = opening.nmoves; i < plies + (forfeit ? 1 : 0); i++) {
            int who_a = (i % 2 == 0) == a_black ? 0 : 1;   /* black plays the even plies */
            if (move_ms[i] > slowest[who_a])
                slowest[who_a] = move_ms[i];
            if (o.time_ms > 0 && move_ms[i] > o.time_ms)
                over[who_a]++;
        }
        if (save_dir && save_game(save_dir, g, &end, move_ms, black->name, white->name) != 0)
            status = 1;   /* said; the match goes on */
        const char *who;
        int k;
        if (res == RESULT_DRAW) {
            d++;
            k = 2;
            who = "draw";
        } else if ((res == RESULT_BLACK) == a_black) {
            w++;
            k = 0;
            who = "A wins";
        } else {
            l++;
            k = 1;
            who = "B wins";
        }
        by[a_black ? 0 : 1][k]++;
        if (forfeit)
            forfeits[k == 0 ? 1 : 0]++;   /* a forfeit is always a loss: of B when A won */
        if (!quiet)
            fprintf(stderr, "game %d/%d: A=%s plays %s: %s in %d plies%s  (A %d-%d-%d)\n", g + 1,
                    games, pl[0]->name, a_black ? "black" : "white", who, plies,
                    forfeit ? " (forfeit)" : "", w, l, d);
    }
    int n = w + l + d;
    if (n > 0) {
        double elo, lo, hi;
        match_elo(w, l, d, &elo, &lo, &hi);
        char e[32], a[32], b[32];
        fmt_elo(e, sizeof e, elo, false);
        fmt_elo(a, sizeof a, lo, false);
        fmt_elo(b, sizeof b, hi, false);
        double score = (w + 0.5 * d) / n;
        printf("%s vs %s: %d-%d-%d (W-L-D for A) score %.1f%% elo %s [95%%: %s, %s] over %d games\n",
               pl[0]->name, pl[1]->name, w, l, d, 100.0 * score, e, a, b, n);
        printf("A as black %d-%d-%d, as white %d-%d-%d\n", by[0][0], by[0][1], by[0][2], by[1][0],
               by[1][1], by[1][2]);
        if (forfeits[0] || forfeits[1])
            printf("games lost by forfeit: A %d, B %d\n", forfeits[0], forfeits[1]);
        printf("slowest move: A %d ms, B %d ms", slowest[0], slowest[1]);
        if (o.time_ms > 0)
            printf("; moves over --time %d ms: A %d, B %d", o.time_ms, over[0], over[1]);
        printf("\n");
        if (json) {
            fmt_elo(e, sizeof e, elo, true);
            fmt_elo(a, sizeof a, lo, true);
            fmt_elo(b, sizeof b, hi, true);
            printf("{\"a\":");
            util_json_write(stdout, pl[0]->name);
            printf(",\"b\":");
            util_json_write(stdout, pl[1]->name);
            printf(",\"games\":%d,\"wins\":%d,\"losses\":%d,\"draws\":%d,\"score\":%.4f,"
                   "\"elo\":%s,\"elo_low\":%s,\"elo_high\":%s,\"rule\":\"%s\",\"size\":%d,"
                   "\"a_black\":[%d,%d,%d],\"a_white\":[%d,%d,%d],\"forfeits\":[%d,%d],"
                   "\"slowest_ms\":[%d,%d],\"over_time\":[%d,%d]}\n",
                   n, w, l, d, score, e, a, b, rule_name(rule), size, by[0][0], by[0][1],
                   by[0][2], by[1][0], by[1][1], by[1][2], forfeits[0], forfeits[1], slowest[0],
                   slowest[1], over[0], over[1]);
        }
    }
    player_free(pl[0]);
    player_free(pl[1]);
    free(op.boards);
    return status;
}
