#include "play/match.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/gamefile.h"
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

int match_openings_load(const char *path, int size, rule_t rule, board_t **out, int *n,
                        char *err, size_t errlen)
{
    size_t len;
    char *text = gamefile_read_text(path, &len, err, errlen);
    if (!text)
        return -1;
    board_t *boards = NULL;
    int nb = 0, cap = 0, line = 0, rc = -1;
    for (char *s = text; *s; line++) {
        char *nl = strchr(s, '\n');
        if (nl)
            *nl = '\0';
        int moves[BOARD_CELLS], k;
        char why[200];
        k = opening_parse_line(s, size, moves, BOARD_CELLS, why, sizeof why);
        s = nl ? nl + 1 : s + strlen(s);
        if (k < 0) {
            util_errf(err, errlen, "%s line %d: %s", path, line + 1, why);
            goto out;
        }
        if (k == 0)
            continue;
        if (nb == cap) {
            cap = cap ? 2 * cap : 64;
            board_t *nbx = realloc(boards, sizeof *boards * (size_t)cap);
            if (!nbx) {
                util_errf(err, errlen, "%s: out of memory at line %d", path, line + 1);
                goto out;
            }
            boards = nbx;
        }
        board_t *b = &boards[nb];
        board_init(b, size, rule);
        for (int i = 0; i < k; i++) {
            move_status_t st = board_check_move(b, moves[i]);
            char mv[16];
            move_format_alpha(moves[i], size, mv, sizeof mv);
            if (st != MOVE_OK || board_is_winning_move(b, moves[i])) {
                util_errf(err, errlen, "%s line %d: stone %d (%s) %s under %s", path, line + 1,
                          i + 1, mv, st != MOVE_OK ? move_status_str(st) : "ends the game",
                          rule_name(rule));
                goto out;
            }
            board_play(b, moves[i]);
        }
        nb++;
    }
    if (nb == 0) {
        util_errf(err, errlen, "%s: no openings in it (one per line: 'h8 i9 j7' or '0,0, 1,1')",
                  path);
        goto out;
    }
    *out = boards;
    *n = nb;
    boards = NULL;
    rc = 0;
out:
    free(boards);
    free(text);
    return rc;
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
int match_play(player_t *black, player_t *white, const board_t *opening, long long match_time_ms,
               result_t *result, int *plies, bool *forfeit, board_t *end, int *move_ms,
               char *err, size_t errlen)
{
    board_t scratch, *bp = end ? end : &scratch;
    *bp = *opening;
    if (move_ms)
        memset(move_ms, 0, BOARD_CELLS * sizeof *move_ms);
    player_new_game(black, bp);
    player_new_game(white, bp);
    *forfeit = false;
    long long left[2] = {match_time_ms, match_time_ms};
    while (!board_over(bp)) {
        int side = bp->to_move == STONE_BLACK ? 0 : 1;
        player_t *p = side == 0 ? black : white;
        int m;
        char e[256];
        p->time_left = match_time_ms > 0 ? left[side] : MOVETIME_UNLIMITED;
        double t0 = util_now_ms();
        int rc = player_genmove(p, bp, &m, e, sizeof e);
        p->time_left = MOVETIME_UNLIMITED;
        if (rc < 0 && rc != PLAYER_FORFEIT) {
            snprintf(err, errlen, "%s: %s", p->name, e);
            return -1;
        }
        long long took = (long long)(util_now_ms() - t0 + 0.5);
        left[side] -= took;
        if (move_ms)   /* the board is not full, so nmoves < BOARD_CELLS */
            move_ms[bp->nmoves] = took > INT_MAX ? INT_MAX : (int)took;
        move_status_t st = rc == PLAYER_FORFEIT ? MOVE_OK : board_check_move(bp, m);
        if (rc == PLAYER_FORFEIT || st != MOVE_OK || (match_time_ms > 0 && left[side] < 0)) {
            if (rc == PLAYER_FORFEIT)
                snprintf(err, errlen, "%s: it loses the game", e);
            else if (st != MOVE_OK)
                snprintf(err, errlen, "%s played an illegal move (%s): it loses the game", p->name,
                         move_status_str(st));
            else
                snprintf(err, errlen, "%s ran out of its %lld ms game clock (%lld ms over): it "
                         "loses the game", p->name, match_time_ms, -left[side]);
            *result = bp->to_move == STONE_BLACK ? RESULT_WHITE : RESULT_BLACK;
            *plies = bp->nmoves;
            *forfeit = true;
            return 0;
        }
        board_play(bp, m);
        player_notify(black, bp, m);
        player_notify(white, bp, m);
    }
    *result = (result_t)bp->result;
    *plies = bp->nmoves;
    return 0;
}

