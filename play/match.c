#include "play/match.h"

#include <math.h>
#include <stdio.h>

#include "util/util.h"

/* k random moves in the centre (a (2r+1)^2 square), none of them ending the
 * game; the same seed gives the same opening. */
void match_opening(board_t *b, int size, rule_t rule, int k, uint64_t seed)
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
void match_elo(double w, double l, double d, double *elo, double *lo, double *hi)
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

/* Play one game from the opening; *result set. -1 with err on a player failure. */
int match_play(player_t *black, player_t *white, const board_t *opening, result_t *result,
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
            snprintf(err, errlen, "%s played an illegal move (%s): it loses the game", p->name,
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

