/* gomoku match A B: two players, alternating colours over balanced random
 * openings; W-L-D for A and an Elo difference with a 95% interval. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmds.h"
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
    "gomoku match A B [--games N --rule R --size N --visits V --time MS --openings K --json]",
    "Plays N games between players A and B (a model file, bot:random,\n"
    "bot:greedy, pbrain:COMMAND), alternating colours. Each pair of games\n"
    "starts from the same random opening of K moves near the centre, once\n"
    "with each colour. Prints W-L-D for A and the Elo difference of A over B\n"
    "with a 95% interval (score +- 1.96 standard errors). At a 100% or 0%\n"
    "score the Elo is infinite and only the finite bound is given, from the\n"
    "exact binomial bound (all N won: score >= 0.025^(1/N)).\n"
    "--vcf-nodes N alone also sets the root's VCF check to 100N."};

int cmd_match(int argc, char **argv)
{
    rule_t rule;
    int games, size, openings;
    uint64_t seed;
    bool json, quiet;
    player_opts_t o;
    player_opts_default(&o);
    arg_spec_t specs[ARGS_MAX] = {
        ARG(S_MATCH_GAMES, &games), ARG(S_OPENINGS, &openings),
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
        match_opening(&opening, size, rule, openings, seed * 1000003u + (uint64_t)(g / 2));
        bool a_black = g % 2 == 0;
        player_t *black = a_black ? pl[0] : pl[1], *white = a_black ? pl[1] : pl[0];
        result_t res;
        int plies;
        bool forfeit;
        if (match_play(black, white, &opening, &res, &plies, &forfeit, err, sizeof err) < 0) {
            fprintf(stderr, "gomoku match: game %d: %s\n", g + 1, err);
            status = 1;
            break;
        }
        if (forfeit)
            fprintf(stderr, "%s\n", err);
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
        match_elo(w, l, d, &elo, &lo, &hi);
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
