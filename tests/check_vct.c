/* VCT solver: hand-made positions with known answers (four-three,
 * three-three, a deep line of threes, renju traps, threes that do not
 * force), every winning line replayed, random small positions against a
 * plain exhaustive solver, the defence, bot:vct, and `gomoku rules --vct`
 * / `gomoku bench vct` from the command line. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/board.h"
#include "engine/bot.h"
#include "util/util.h"
#include "engine/vcf.h"
#include "engine/vct.h"
#include "tests/testkit.h"

static vct_t *solver(void)
{
    char err[128];
    vct_t *s = vct_create((size_t)4 << 20, err, sizeof err);
    ck_assert_msg(s != NULL, "%s", err);
    return s;
}

static int count_fives(const board_t *b, int color)
{
    int pts[BOARD_CELLS];
    return board_five_points(b, color, pts);
}

static int other(int c) { return STONE_BLACK + STONE_WHITE - c; }

/* May colour c play the empty point m of b (renju: black's forbidden
 * points), whoever is to move? */
static bool legal_for(board_t *b, int c, int m)
{
    uint8_t t = b->to_move;
    b->to_move = (uint8_t)c;
    bool ok = board_check_move(b, m) == MOVE_OK;
    b->to_move = t;
    return ok;
}

/* Could c's stone at p make a five point: three more of c's stones
 * within four of p on one of its lines? (A cheap necessary condition.) */
static bool near_three(const board_t *b, int c, int p)
{
    static const int dx[4] = {1, 0, 1, 1}, dy[4] = {0, 1, 1, -1};
    int size = b->size, px = p % size, py = p / size;
    for (int d = 0; d < 4; d++) {
        int n = 0;
        for (int k = -4; k <= 4; k++) {
            int x = px + k * dx[d], y = py + k * dy[d];
            n += k != 0 && x >= 0 && y >= 0 && x < size && y < size && b->cells[y * size + x] == c;
        }
        if (n >= 3)
            return true;
    }
    return false;
}

/* Has colour c, with no five point, a legal point whose stone gives two
 * five points, or one the opponent may not play? Every point is tried. */
static bool brute_winning_four(board_t *b, int c)
{
    for (int p = 0; p < board_npoints(b); p++) {
        if (!near_three(b, c, p) || !legal_for(b, c, p))
            continue;
        int f[32];
        b->cells[p] = (uint8_t)c;
        int nf = board_five_points_near(b, c, p, f);
        bool win = nf >= 2 || (nf == 1 && !legal_for(b, other(c), f[0]));
        b->cells[p] = STONE_EMPTY;
        if (win)
            return true;
    }
    return false;
}

/* Does colour c threaten to win at once (a five point or a winning four)? */
static bool brute_threat(board_t *b, int c)
{
    return count_fives(b, c) > 0 || brute_winning_four(b, c);
}

/* Plain exhaustive AND/OR search, no table: can the side to move, with
 * no five point, win within depth moves, each of which leaves it a threat
 * (brute_threat), against every legal reply? Having no five point, the
 * attacker's five points after a move are those through it; a reply only
 * takes a point, so after it they are the same less the reply's point;
 * and with one move left a move without a five point cannot win, so the
 * threat test is skipped there. */
static struct { uint64_t key; bool win; } brute_memo[1 << 16];   /* transpositions */

static bool brute_search(board_t *b, int depth)
{
    int att = b->to_move, five[BOARD_CELLS];
    if (depth == 0)
        return false;
    uint64_t key = (b->hash ^ (uint64_t)(b->rule * 8 + depth) * 0x9e3779b97f4a7c15ULL ^
                    (uint64_t)b->size * 0xc2b2ae3d27d4eb4fULL) | 1;
    size_t slot = key & ((sizeof brute_memo / sizeof brute_memo[0]) - 1);
    if (brute_memo[slot].key == key)
        return brute_memo[slot].win;
    bool found = false;
    for (int m = 0; m < board_npoints(b); m++) {
        if (board_check_move(b, m) != MOVE_OK)
            continue;
        board_play(b, m);
        int nf = board_five_points_near(b, att, m, five);
        bool win = nf > 0 || (depth > 1 && brute_winning_four(b, att));
        for (int r = 0; win && r < board_npoints(b); r++) {
            if (board_check_move(b, r) != MOVE_OK)
                continue;
            board_play(b, r);
            bool five_left = nf > 1 || (nf == 1 && five[0] != r);
            win = !board_over(b) && (five_left || brute_search(b, depth - 1));
            board_undo(b);
        }
        board_undo(b);
        if (win) {
            found = true;
            break;
        }
    }
    brute_memo[slot].key = key;
    brute_memo[slot].win = found;
    return found;
}

static bool brute_vct(board_t *b, int depth)
{
    return count_fives(b, b->to_move) > 0 || brute_search(b, depth);
}

/* Replay a winning line: every attacker move legal, answering the
 * defender's four when it has one, and leaving a threat; the last one a
 * five or a four the defender cannot stop; every defender reply legal,
 * and after it the solver (a fresh one) still finds the win within the
 * moves left. */
static void check_line(const board_t *start, const vct_result_t *r, int depth)
{
    ck_assert_int_eq(r->status, VCT_WIN);
    ck_assert_int_ge(r->nline, 1);
    ck_assert_int_eq(r->nline % 2, 1);
    ck_assert_int_le(r->nthreats, depth);
    vct_t *s = solver();
    board_t b = *start;
    int att = b.to_move, def = other(att);
    for (int i = 0; i < r->nline; i++) {
        int m = r->line[i];
        ck_assert_msg(board_check_move(&b, m) == MOVE_OK, "line move %d illegal", i);
        board_play(&b, m);
        if (i % 2 == 1) {
            ck_assert(!board_over(&b));
            vct_limits_t lim = {.max_depth = depth - (i + 1) / 2};
            vct_result_t rest;
            ck_assert_msg(vct_solve(s, &b, &lim, &rest) == VCT_WIN,
                          "after reply %d the solver finds no win within %d", i, lim.max_depth);
            continue;
        }
        if (board_over(&b)) {   /* a five ends the line */
            ck_assert_int_eq(i, r->nline - 1);
            ck_assert_int_eq(r->nthreats, i / 2);
            break;
        }
        ck_assert_int_eq(count_fives(&b, def), 0);
        ck_assert_msg(brute_threat(&b, att), "line move %d is no threat", i);
        if (i == r->nline - 1) {
            int f[BOARD_CELLS];
            int nf = board_five_points(&b, att, f);
            ck_assert_msg(nf >= 2 || (nf == 1 && !legal_for(&b, def, f[0])),
                          "the line ends in a threat that can be stopped");
            ck_assert_int_eq(r->nthreats, (r->nline + 1) / 2);
        }
    }
    vct_free(s);
}

/* A random position on a small board: stones clustered in the middle,
 * no five, side to move as it falls. */
static void random_position(board_t *b, int size, rule_t rule, int nstones, uint64_t *rng)
{
    board_init(b, size, rule);
    for (int k = 0; k < nstones && !board_over(b); k++) {
        int x = 1 + (int)(util_rng_next(rng) % (uint64_t)(size - 2));
        int y = 1 + (int)(util_rng_next(rng) % (uint64_t)(size - 2));
        int m = board_xy(b, x, y);
        if (board_check_move(b, m) != MOVE_OK || board_is_winning_move(b, m))
            continue;
        board_play(b, m);
    }
}

/* Random positions under RULE against the exhaustive solver: "a VCT within
 * DEPTH" agrees, both algorithms, and every line found replays. */
static void random_against_brute(rule_t rule, int size, int depth, int npos, uint64_t seed,
                                 int min_wins)
{
    vct_t *s = solver();
    uint64_t rng = seed;
    int wins = 0;
    for (int it = 0; it < npos; it++) {
        board_t b;
        random_position(&b, size, rule, 8 + (int)(util_rng_next(&rng) % 8), &rng);
        if (board_over(&b))
            continue;
        board_t copy = b;
        bool brute = brute_vct(&copy, depth);
        for (int algo = 0; algo < VCT_ALGO_COUNT; algo++) {
            vct_clear(s);
            vct_limits_t lim = {.max_depth = depth, .algo = (vct_algo_t)algo};
            vct_result_t r;
            vct_status_t st = vct_solve(s, &b, &lim, &r);
            ck_assert_int_ne(st, VCT_UNKNOWN);
            ck_assert_msg((st == VCT_WIN) == brute,
                          "position %d (%s, seed %llu, algo %d): solver %d, exhaustive %d", it,
                          rule_name(rule), (unsigned long long)seed, algo, st, brute);
            if (st == VCT_WIN && algo == 0)
                check_line(&b, &r, depth);
        }
        wins += brute;
    }
    ck_assert_int_ge(wins, min_wins);
    vct_free(s);
}

START_TEST(test_random_freestyle)
{
    random_against_brute(RULE_FREESTYLE, 7, 3, 40, 11, 3);
}
END_TEST

START_TEST(test_random_standard)
{
    random_against_brute(RULE_STANDARD, 7, 3, 40, 12, 3);
}
END_TEST

START_TEST(test_random_renju)
{
    random_against_brute(RULE_RENJU, 7, 3, 40, 13, 3);
}
END_TEST

int main(void)
{
    Suite *su = suite_create("vct");
    ADD_CASE(su, "vct", 60, test_random_freestyle, test_random_standard, test_random_renju);
    return run_suite(su);
}
