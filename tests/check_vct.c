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

/* Mark the empty points where c's stone could give c a new five point:
 * the empty cells of every window of five cells on a line that holds
 * three of c's stones and two empty cells (no opponent stone, no wall).
 * A new five point and the stone always share such a window, so this is
 * a cheap filter only. */
static void mark_fours(const board_t *b, int c, uint8_t *mark)
{
    static const int dx[4] = {1, 0, 1, 1}, dy[4] = {0, 1, 1, -1};
    int size = b->size;
    memset(mark, 0, (size_t)size * size);
    for (int d = 0; d < 4; d++)
        for (int y0 = 0; y0 < size; y0++)
            for (int x0 = 0; x0 < size; x0++) {
                int x4 = x0 + 4 * dx[d], y4 = y0 + 4 * dy[d];
                if (x4 < 0 || x4 >= size || y4 < 0 || y4 >= size)
                    continue;
                int own = 0, ne = 0, empty[5], k = 0;
                for (; k < 5; k++) {
                    int p = (y0 + k * dy[d]) * size + x0 + k * dx[d];
                    if (b->cells[p] == c)
                        own++;
                    else if (b->cells[p] == STONE_EMPTY)
                        empty[ne++] = p;
                    else
                        break;
                }
                if (k == 5 && own == 3)
                    mark[empty[0]] = mark[empty[1]] = 1;
            }
}

/* Has colour c, with no five point, a legal point whose stone gives two
 * five points, or one the opponent may not play? Every point is tried. */
static bool brute_winning_four(board_t *b, int c)
{
    uint8_t four[BOARD_CELLS];
    mark_fours(b, c, four);
    for (int p = 0; p < board_npoints(b); p++) {
        if (!four[p] || !legal_for(b, c, p))
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
    uint8_t four[BOARD_CELLS];
    if (depth == 0)
        return false;
    uint64_t key = (b->hash ^ (uint64_t)(b->rule * 8 + depth) * 0x9e3779b97f4a7c15ULL ^
                    (uint64_t)b->size * 0xc2b2ae3d27d4eb4fULL) | 1;
    size_t slot = key & ((sizeof brute_memo / sizeof brute_memo[0]) - 1);
    if (brute_memo[slot].key == key)
        return brute_memo[slot].win;
    bool found = false;
    mark_fours(b, att, four);
    for (int m = 0; m < board_npoints(b); m++) {
        if (board_check_move(b, m) != MOVE_OK || (depth == 1 && !four[m]))
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

static int xy(const board_t *b, int x, int y) { return board_xy(b, x, y); }

/* The solver and both algorithms find a VCT of NTHREATS threats from B
 * starting at (X,Y) (X < 0: any start), none within one threat fewer, and
 * the line checks out. */
static void expect_vct(const board_t *b, int nthreats, int x, int y)
{
    vct_t *s = solver();
    for (int algo = 0; algo < VCT_ALGO_COUNT; algo++) {
        vct_clear(s);
        vct_limits_t lim = {.algo = (vct_algo_t)algo, .nodes = 200000};
        vct_result_t r;
        ck_assert_int_eq(vct_solve(s, b, &lim, &r), VCT_WIN);
        if (algo == VCT_ALGO_DFS)   /* iterative deepening: the shortest */
            ck_assert_int_eq(r.nthreats, nthreats);
        if (x >= 0 && algo == VCT_ALGO_DFS)
            ck_assert_int_eq(r.line[0], xy(b, x, y));
        check_line(b, &r, VCT_MAX_DEPTH);
        lim.max_depth = nthreats - 1;
        if (lim.max_depth > 0)
            ck_assert_int_eq(vct_solve(s, b, &lim, &r), VCT_NONE);
    }
    vct_free(s);
}

/* B holds no VCF for the side to move: a VCT found is made of threes too. */
static void expect_no_vcf(const board_t *b)
{
    vcf_t *f = vcf_create((size_t)1 << 20, NULL, 0);
    ck_assert_int_eq(vcf_solve(f, b, NULL, NULL), VCF_NONE);
    vcf_free(f);
}

/* Neither algorithm finds a VCT within depth, nor (when brute_depth > 0)
 * the exhaustive solver within brute_depth. */
static void expect_no_vct(const board_t *b, int depth, int brute_depth)
{
    vct_t *s = solver();
    for (int algo = 0; algo < VCT_ALGO_COUNT; algo++) {
        vct_limits_t lim = {.algo = (vct_algo_t)algo, .max_depth = depth};
        ck_assert_int_eq(vct_solve(s, b, &lim, NULL), VCT_NONE);
    }
    board_t copy = *b;
    if (brute_depth > 0)
        ck_assert(!brute_vct(&copy, brute_depth));
    vct_free(s);
}

/* Black's stone at (4,4) makes two open threes, row and column: white
 * blocks one, black opens the other to a straight four. No VCF. */
static const char THREE_THREE[] =
    ".........\n"
    ".........\n"
    "....X....\n"
    "....X....\n"
    "..XX.....\n"
    ".........\n"
    ".........\n"
    "O.......O\n"
    "O.......O\n";

START_TEST(test_three_three)
{
    board_t b;
    board_from_diagram(&b, RULE_FREESTYLE, STONE_BLACK, THREE_THREE);
    expect_no_vcf(&b);
    expect_vct(&b, 2, 4, 4);
    board_t copy = b;
    ck_assert(brute_vct(&copy, 2));
    /* the same stones in renju: (4,4) is a forbidden double-three */
    board_from_diagram(&b, RULE_RENJU, STONE_BLACK, THREE_THREE);
    ck_assert_int_eq(board_forbidden_kind(&b, xy(&b, 4, 4)), FORBID_DOUBLE_THREE);
    expect_no_vct(&b, 4, 3);   /* black wins in five threats another way */
}
END_TEST

/* (5,3) makes a four on row 3 and an open three in column 5: a
 * four-three, won in two threats (a VCF too). */
static const char FOUR_THREE[] =
    "O.......O\n"
    ".........\n"
    ".........\n"
    ".OXXX....\n"
    ".....X...\n"
    ".....X...\n"
    ".........\n"
    ".........\n"
    "O.......O\n";

START_TEST(test_four_three)
{
    board_t b;
    board_from_diagram(&b, RULE_FREESTYLE, STONE_BLACK, FOUR_THREE);
    expect_vct(&b, 2, 5, 3);
}
END_TEST

/* THREE_THREE's double three, but one of the threes is dead: its
 * extensions give only fours that white blocks. With a white stone at
 * each end of the column (O.XXX.O) and against the wall (|.XXX.O):
 * no VCT within three threats, where a solver that took any XXX with two
 * empty ends for a three would find one in two. The two are one position:
 * against the wall it stands a row higher, the wall in place of the top
 * white stone, which moves to the bottom row (the same stone counts). */
#define DEAD_THREE_ROWS \
    ".........\n"       \
    "....X....\n"       \
    "....X....\n"       \
    "..XX.....\n"       \
    ".........\n"       \
    "....O....\n"       \
    ".........\n"       \
    "O.......O\n"
static const char DEAD_BY_STONE[] = "....O....\n" DEAD_THREE_ROWS;
static const char DEAD_BY_WALL[] = DEAD_THREE_ROWS "O........\n";

START_TEST(test_dead_three_does_not_force)
{
    board_t b;
    board_from_diagram(&b, RULE_FREESTYLE, STONE_BLACK, DEAD_BY_STONE);
    expect_no_vct(&b, 3, 3);   /* on this open board black wins in four */
    board_from_diagram(&b, RULE_FREESTYLE, STONE_BLACK, DEAD_BY_WALL);
    expect_no_vct(&b, 3, 3);
}
END_TEST

/* THREE_THREE on 11x11 plus a white four-three ready at (8,8) (row 8
 * closed by black at (4,8), column 8 open): black's double three is
 * answered by white's four, and white's VCF wins first. Without white's
 * stone (7,8) the double three wins again. */
static const char COUNTER_FOUR[] =
    "...........\n"
    "...........\n"
    "....X......\n"
    "....X......\n"
    "..XX.......\n"
    "...........\n"
    "........O..\n"
    "........O..\n"
    "....XOOO...\n"
    "...........\n"
    "O.........O\n";

START_TEST(test_counter_four_refutes)
{
    board_t b;
    board_from_diagram(&b, RULE_FREESTYLE, STONE_BLACK, COUNTER_FOUR);
    expect_no_vct(&b, 6, 0);
    b.cells[xy(&b, 7, 8)] = STONE_EMPTY;
    b.hash = board_hash_full(&b);
    expect_vct(&b, 2, 4, 4);
}
END_TEST

/* Found by a randomized search over positions of greedy games (15x15,
 * freestyle, white to move), kept because its shortest VCT is long: seven
 * threats, three of them threes, and none in six. No VCF. */
static const char DEEP[] =
    "...............\n"
    "...............\n"
    ".....O.........\n"
    "...............\n"
    "...............\n"
    "...............\n"
    ".......X.......\n"
    ".......XOX.....\n"
    "........XO.....\n"
    ".........OO....\n"
    "...............\n"
    "...............\n"
    "...............\n"
    "...........X...\n"
    "..X............\n";

START_TEST(test_deep_line)
{
    board_t b;
    board_from_diagram(&b, RULE_FREESTYLE, STONE_WHITE, DEEP);
    expect_no_vcf(&b);
    expect_vct(&b, 7, -1, -1);
    vct_t *s = solver();
    vct_limits_t lim = {.algo = VCT_ALGO_DFS};
    vct_result_t r;
    ck_assert_int_eq(vct_solve(s, &b, &lim, &r), VCT_WIN);
    int threes = 0;
    board_t w = b;
    for (int i = 0; i < r.nline; i++) {
        board_play(&w, r.line[i]);
        threes += i % 2 == 0 && count_fives(&w, STONE_WHITE) == 0;
    }
    ck_assert_int_ge(threes, 3);
    vct_free(s);
}
END_TEST

/* Renju, white to move (found like DEEP): white's four at (3,6) forces
 * black's block at (4,7), which makes (4,10) a double-three for black;
 * then white's three (5,10) in row 10 cannot be blocked there, and black's
 * other block leaves the open four. Three threats. Under standard rules
 * (black may block anywhere) the same stones give white no VCT. */
static const char RENJU_TRAP[] =
    "...............\n"
    "...............\n"
    "...............\n"
    "...............\n"
    "...............\n"
    "...............\n"
    ".......O.......\n"
    "......OX.X.....\n"
    ".....OXX....O..\n"
    "....X.OX.O.....\n"
    "......OO...X...\n"
    ".......XX......\n"
    "...............\n"
    "...............\n"
    "...............\n";

START_TEST(test_renju_white_forces_forbidden)
{
    board_t b;
    board_from_diagram(&b, RULE_RENJU, STONE_WHITE, RENJU_TRAP);
    expect_vct(&b, 3, -1, -1);
    board_t w = b;
    ck_assert_int_eq(board_play(&w, xy(&w, 3, 6)), MOVE_OK);
    ck_assert_int_eq(count_fives(&w, STONE_WHITE), 1);
    ck_assert_int_eq(board_forbidden_kind(&w, xy(&w, 4, 10)), FORBID_NONE);
    ck_assert_int_eq(board_play(&w, xy(&w, 4, 7)), MOVE_OK);
    ck_assert_int_eq(board_play(&w, xy(&w, 5, 10)), MOVE_OK);
    ck_assert_int_eq(board_forbidden_kind(&w, xy(&w, 4, 10)), FORBID_DOUBLE_THREE);
    board_from_diagram(&b, RULE_STANDARD, STONE_WHITE, RENJU_TRAP);
    expect_no_vct(&b, 8, 0);
}
END_TEST

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
        random_clustered(&b, size, rule, 8 + (int)(util_rng_next(&rng) % 8), &rng);
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

/* The leaf's pruning after a VCF check, reusing the check's scan of the
 * board (vct_three_defences_vcf), answers as vct_three_defences does, on
 * random positions of each rule, after a VCF found, none, or the budget
 * spent; some of them face a three. */
START_TEST(test_three_defences_after_vcf)
{
    char err[256];
    vcf_t *vcf = vcf_create(1 << 20, err, sizeof err);
    ck_assert_msg(vcf != NULL, "%s", err);
    uint64_t rng = 91;
    int facing = 0, pruned = 0;
    for (int it = 0; it < 600; it++) {
        board_t b;
        rule_t rule = (rule_t)(it % RULE_COUNT);
        random_clustered(&b, it % 3 ? 15 : 9, rule, 6 + (int)(util_rng_next(&rng) % 20), &rng);
        vcf_limits_t lim = {.nodes = it % 4 == 0 ? 1 : it % 4 == 1 ? 200 : 100000};
        vcf_clear(vcf);
        vcf_solve(vcf, &b, &lim, NULL);
        int a[BOARD_CELLS], c[BOARD_CELLS];
        int na = vct_three_defences(&b, a), nc = vct_three_defences_vcf(vcf, c);
        ck_assert_int_eq(na, nc);
        for (int i = 0; i < na; i++)
            ck_assert_int_eq(a[i], c[i]);
        facing += na >= 0;
        pruned += na > 0;
    }
    ck_assert_int_ge(facing, 30);
    ck_assert_int_ge(pruned, 20);
    vcf_free(vcf);
}
END_TEST

START_TEST(test_random_freestyle)
{
    random_against_brute(RULE_FREESTYLE, 7, 3, 15, 105, 3);
}
END_TEST

START_TEST(test_random_standard)
{
    random_against_brute(RULE_STANDARD, 7, 3, 15, 101, 3);
}
END_TEST

START_TEST(test_random_renju)
{
    random_against_brute(RULE_RENJU, 7, 3, 15, 112, 3);
}
END_TEST

/* More positions, on 6x6: less room, so cheaper to search exhaustively. */
START_TEST(test_random_small)
{
    for (int rule = 0; rule < RULE_COUNT; rule++)
        random_against_brute((rule_t)rule, 6, 3, 25, 200 + (uint64_t)rule, 2);
}
END_TEST

/* White to move; black threatens the double three at (4,4) (row 4 and
 * the anti-diagonal through (5,3) and (3,5)). Found by a randomized
 * search: (4,4) is white's only move that leaves black no VCT. */
static const char ONE_DEFENCE[] =
    ".........\n"
    "..O......\n"
    "...O.....\n"
    ".....X.X.\n"
    "..XX.....\n"
    "..OX.....\n"
    ".........\n"
    ".......O.\n"
    ".........\n";

START_TEST(test_defend)
{
    vct_t *s = solver(), *check = solver();
    board_t b;
    board_from_diagram(&b, RULE_FREESTYLE, STONE_WHITE, ONE_DEFENCE);
    vct_limits_t lim = {.max_depth = 4};
    int moves[BOARD_CELLS];
    vct_result_t threat;
    ck_assert_int_eq(vct_defend(s, &b, &lim, moves, &threat), 1);
    ck_assert_int_eq(moves[0], xy(&b, 4, 4));
    ck_assert_int_eq(threat.status, VCT_WIN);
    ck_assert_int_eq(threat.nthreats, 2);
    check_defences(&b, moves, 1, &(threat_check_t){.vct = check, .vct_lim = &lim});
    /* black to move: white threatens nothing */
    board_pass(&b);
    ck_assert_int_eq(vct_defend(s, &b, &lim, moves, NULL), -1);
    vct_free(s);
    vct_free(check);
}
END_TEST

/* White to move (a game lost to PentaZen at 1 s, 2026-11-27, ply 23):
 * black has a VCT of five threats. White's four 12,9 (or the split four
 * 13,10) only puts it off: black blocks, and white is to move against
 * the same VCT with no defence. The defence used to list both fours,
 * because a plain solve after a four finds no VCT (the forced block is no
 * threat); vct_solve_reply plays the block and asks for white's defence. */
static const int FOUR_PUTS_OFF[23][2] = {
    {8, 7}, {9, 9}, {6, 5}, {10, 8}, {7, 7}, {9, 8}, {9, 7}, {6, 7}, {7, 8}, {7, 9}, {8, 10},
    {9, 6}, {8, 9}, {8, 8}, {7, 4}, {11, 8}, {12, 8}, {7, 5}, {8, 3}, {9, 2}, {5, 4}, {10, 7},
    {8, 5}};

START_TEST(test_counter_four_puts_off)
{
    board_t b;
    board_init(&b, 15, RULE_FREESTYLE);
    for (int i = 0; i < 23; i++)
        ck_assert_int_eq(board_play(&b, xy(&b, FOUR_PUTS_OFF[i][0], FOUR_PUTS_OFF[i][1])),
                         MOVE_OK);
    char err[128];
    vct_t *s = vct_create((size_t)16 << 20, err, sizeof err);   /* a pool for 50,000 nodes */
    ck_assert_msg(s != NULL, "%s", err);
    vct_limits_t lim = {.nodes = 50000};
    int moves[BOARD_CELLS];
    vct_result_t threat;
    int nd = vct_defend(s, &b, &lim, moves, &threat);
    ck_assert_msg(nd == 0, "%d defences, the first %d,%d", nd, moves[0] % 15, moves[0] / 15);
    ck_assert_int_eq(threat.nthreats, 5);
    const int four[2][2] = {{12, 9}, {13, 10}};
    for (int i = 0; i < 2; i++) {
        board_t after = b;
        ck_assert_int_eq(board_play(&after, xy(&b, four[i][0], four[i][1])), MOVE_OK);
        vct_result_t r;
        ck_assert_int_eq(vct_solve(s, &after, &lim, &r), VCT_NONE);
        ck_assert_int_eq(vct_solve_reply(s, &after, &lim, &r), VCT_WIN);
        ck_assert_int_eq(r.nline, 1);
        ck_assert_int_eq(r.line[0], xy(&b, four[1 - i][0], four[1 - i][1]));   /* the block */
    }
    /* a move that is no four is solved plainly */
    board_t after = b;
    ck_assert_int_eq(board_play(&after, xy(&b, 0, 0)), MOVE_OK);
    ck_assert_int_eq(vct_solve_reply(s, &after, &lim, NULL), VCT_WIN);
    vct_free(s);
}
END_TEST

/* White to move (a game lost to PentaZen, 2026-11-26, after black's 8,8):
 * white has no VCT, but the quiet 8,9 (no four, no three) leaves black
 * no defence against white's next VCT. Verified here over every black
 * reply, not the defence's candidates alone. */
static const char QUIET_WIN[] =
    "...............\n"
    "...............\n"
    "...............\n"
    ".......X.......\n"
    "....OOOXO......\n"
    ".....OXOX......\n"
    "....O.OXX......\n"
    ".....XOXX......\n"
    ".....X..XO.....\n"
    "...............\n"
    "...............\n"
    "...............\n"
    "...............\n"
    "...............\n"
    "...............\n";

/* Every legal reply of the side to move of after leaves the other side
 * a VCT (check_defences with no defence listed; a large budget, its own
 * solver). */
static void check_no_reply_holds(const board_t *after)
{
    vct_t *check = solver();
    vct_limits_t big = {.nodes = 2000000};
    check_defences(after, NULL, 0, &(threat_check_t){.vct = check, .vct_lim = &big});
    vct_free(check);
}

START_TEST(test_quiet_win)
{
    vct_t *s = solver();
    board_t b;
    board_from_diagram(&b, RULE_FREESTYLE, STONE_WHITE, QUIET_WIN);
    vct_limits_t lim = {.nodes = 2000};
    ck_assert_int_eq(vct_solve(s, &b, &(vct_limits_t){.nodes = 200000}, NULL), VCT_NONE);
    vct_result_t r;
    int tried = 0;
    int q = vct_quiet_win(s, &b, &lim, 0, &r, &tried);
    ck_assert_int_eq(q, xy(&b, 8, 9));
    ck_assert_int_gt(tried, 0);
    ck_assert_int_eq(r.status, VCT_WIN);
    board_t after = b;
    ck_assert_int_eq(board_play(&after, q), MOVE_OK);
    check_no_reply_holds(&after);
    /* the caller's candidates in its order: a stone (7,3) is passed over,
     * the quiet 0,0 is tried and leaves no VCT, then 8,9 wins */
    int among[3] = {xy(&b, 7, 3), xy(&b, 0, 0), q};
    ck_assert_int_eq(vct_quiet_win_among(s, &b, &lim, among, 3, NULL, &tried), q);
    ck_assert_int_eq(tried, 2);
    ck_assert_int_eq(vct_quiet_win_among(s, &b, &lim, among, 2, NULL, &tried), MOVE_NONE);
    ck_assert_int_eq(tried, 1);
    /* too small a budget proves nothing (with the table's proofs
     * forgotten): no claim */
    vct_clear(s);
    ck_assert_int_eq(vct_quiet_win(s, &b, &(vct_limits_t){.nodes = 1}, 0, NULL, NULL),
                     MOVE_NONE);
    /* black to move there: white's threats are not black's */
    vct_clear(s);
    board_pass(&b);
    int bq = vct_quiet_win(s, &b, &lim, 0, NULL, NULL);
    if (bq != MOVE_NONE) {
        board_t a = b;
        board_play(&a, bq);
        check_no_reply_holds(&a);
    }
    vct_free(s);
}
END_TEST

/* Random 9x9 positions (22 of these 120 claim one): every quiet win
 * claimed holds against every reply, and the candidate cap holds. */
START_TEST(test_quiet_win_random)
{
    vct_t *s = solver();
    uint64_t rng = 777;
    int claimed = 0, tried_total = 0;
    for (int it = 0; it < 120; it++) {
        board_t b;
        random_clustered(&b, 9, RULE_FREESTYLE, 8 + (int)(util_rng_next(&rng) % 10), &rng);
        if (board_over(&b))
            continue;
        int tried = 0;
        int q = vct_quiet_win(s, &b, &(vct_limits_t){.nodes = 2000, .max_depth = 4}, 8, NULL,
                              &tried);
        ck_assert_int_le(tried, 8);
        tried_total += tried;
        if (q == MOVE_NONE)
            continue;
        claimed++;
        board_t after = b;
        ck_assert_int_eq(board_play(&after, q), MOVE_OK);
        check_no_reply_holds(&after);
    }
    ck_assert_int_gt(tried_total, 100);
    fprintf(stderr, "quiet wins: %d claimed, each held against every reply (%d candidates "
            "solved)\n", claimed, tried_total);
    vct_free(s);
}
END_TEST

/* A 15x15 freestyle position from moves {x, y}, black first. */
static void board_from_xy(board_t *b, const int (*mv)[2], int n)
{
    board_init(b, 15, RULE_FREESTYLE);
    for (int i = 0; i < n; i++)
        ck_assert_int_eq(board_play(b, xy(b, mv[i][0], mv[i][1])), MOVE_OK);
}

/* Two quiet wins from our games against PentaZen that Rapfi calls mate
 * in 9 and 17 plies, and the first candidates missed. */
START_TEST(test_quiet_win_kinds)
{
    vct_t *s = solver();
    vct_limits_t lim = {.nodes = 200000};
    board_t b, after;
    /* Black's 8,7 touches none of its lines, but it stands on the row of
     * two of its four points (7,7 and 6,7): after it, 7,7 and 6,7 are
     * fours that leave an open three on that row. */
    static const int lines[][2] = {{5, 5}, {7, 5}, {6, 5}, {5, 6}, {6, 4}, {7, 3},
                                   {6, 6}, {6, 3}, {4, 4}, {3, 3}, {5, 3}, {3, 5}};
    board_from_xy(&b, lines, 12);
    ck_assert_int_ne(vct_solve(s, &b, &lim, NULL), VCT_WIN);
    int q = vct_quiet_win(s, &b, &lim, 0, NULL, NULL);
    ck_assert_int_eq(q, xy(&b, 8, 7));
    after = b;
    board_play(&after, q);
    check_no_reply_holds(&after);
    /* White faces black's three (6,4 made it): its quiet moves that do
     * not lose at once are the blocks, and one of them (9,7) leaves black
     * no defence against white's VCT. */
    static const int block[][2] = {{8, 5}, {8, 6}, {6, 6}, {6, 5}, {7, 8}, {7, 5}, {7, 7}, {6, 4}};
    board_from_xy(&b, block, 8);
    vct_clear(s);
    ck_assert_int_eq(vct_solve(s, &b, &lim, NULL), VCT_NONE);
    q = vct_quiet_win(s, &b, &lim, 0, NULL, NULL);
    ck_assert_int_eq(q, xy(&b, 9, 7));
    after = b;
    board_play(&after, q);
    check_no_reply_holds(&after);
    vct_free(s);
}
END_TEST

/* A random clustered position (random_clustered's arguments) in which
 * the side not to move has a VCT of at most depth threats, solved as if
 * it were to move: false when it has none (or the game is over). */
static bool threatened_position(vct_t *s, board_t *b, int size, rule_t rule, int nstones,
                                int depth, uint64_t *rng)
{
    random_clustered(b, size, rule, nstones, rng);
    if (board_over(b))
        return false;
    board_t flip = *b;
    board_pass(&flip);
    vct_limits_t lim = {.max_depth = depth};
    vct_clear(s);
    return vct_solve(s, &flip, &lim, NULL) == VCT_WIN;
}

/* The defence's passes (each candidate within N/16, N/4, then N nodes)
 * never drop a real defence: against the exact answer (no node limit) on
 * random 9x9 positions where the opponent has a VCT, a small budget keeps
 * every exact defence (and may keep undecided ones), a large one gives
 * the exact answer, and vct_defence_begin's candidates hold every exact
 * defence. vct_defend_proven's moves, where it drops undecided ones, are
 * all exact defences. */
START_TEST(test_defend_passes)
{
    vct_t *s = solver();
    uint64_t rng = 4242;
    int threatened = 0, narrowed = 0;   /* narrowed: vct_defend_proven found proven defences */
    for (int it = 0; it < 300 && threatened < 12; it++) {
        board_t b;
        vct_limits_t deep = {.max_depth = 3};
        if (!threatened_position(s, &b, 9, (rule_t)(it % RULE_COUNT),
                                 10 + (int)(util_rng_next(&rng) % 8), 3, &rng))
            continue;
        threatened++;
        int exact[BOARD_CELLS], small[BOARD_CELLS], large[BOARD_CELLS];
        int ne = vct_defend(s, &b, &deep, exact, NULL);
        vct_clear(s);
        int cand[BOARD_CELLS], nc = vct_defence_begin(s, &b, &deep, cand, NULL);
        uint8_t is_cand[BOARD_CELLS] = {0};
        for (int i = 0; i < nc; i++)
            is_cand[cand[i]] = 1;
        for (int i = 0; i < ne; i++)
            ck_assert_msg(is_cand[exact[i]], "position %d: defence %d is no candidate", it,
                          exact[i]);
        vct_clear(s);
        vct_limits_t lo = {.max_depth = 3, .nodes = 40};
        int ns = vct_defend(s, &b, &lo, small, NULL);
        vct_clear(s);
        vct_limits_t hi = {.max_depth = 3, .nodes = 1000000};
        int nl = vct_defend(s, &b, &hi, large, NULL);
        ck_assert_int_ge(ne, 0);
        ck_assert_int_eq(nl, ne);
        ck_assert_int_eq(memcmp(large, exact, (size_t)ne * sizeof *exact), 0);
        if (ns < 0)
            continue;   /* the threat itself was not found within 40 nodes: nothing pruned */
        for (int i = 0, j = 0; i < ne; i++) {   /* both ascending: exact within small */
            while (j < ns && small[j] < exact[i])
                j++;
            ck_assert_msg(j < ns && small[j] == exact[i], "position %d: defence %d dropped", it,
                          exact[i]);
        }
        /* the proven ones among them are real defences: within the exact answer */
        for (vct_limits_t mid = {.max_depth = 3, .nodes = 40}; mid.nodes <= 2560; mid.nodes *= 4) {
            int proven[BOARD_CELLS], all[BOARD_CELLS];
            vct_clear(s);
            int na = vct_defend(s, &b, &mid, all, NULL);
            vct_clear(s);
            bool any_proven;
            int np = vct_defend_proven(s, &b, &mid, proven, &any_proven, NULL);
            ck_assert_int_le(np, na);
            if (!any_proven) {
                ck_assert_int_eq(memcmp(proven, all, (size_t)na * sizeof *all), 0);
                continue;
            }
            narrowed++;
            for (int i = 0; i < np; i++) {
                bool real = false;
                for (int j = 0; j < ne; j++)
                    real |= exact[j] == proven[i];
                ck_assert_msg(real, "position %d: %d called proven, not a defence", it, proven[i]);
            }
        }
    }
    ck_assert_int_ge(threatened, 5);
    ck_assert_int_ge(narrowed, 1);
    fprintf(stderr, "defences: %d threatened positions, %d budgets with proven defences, each an "
            "exact one\n", threatened, narrowed);
    vct_free(s);
}
END_TEST

/* The whole defence is bounded in nodes, its nested ones too (a four in
 * reply is blocked and defended again, VCT_REPLY_CHAIN deep): on position
 * 608 of bench/vct-freestyle15.txt, at 500 nodes a solve, the defence
 * spent 1.66M nodes (3,310 budgets, 9 s) before the bound, and a 200-visit
 * match move with such a defence ran for minutes. Now it stops within
 * VCT_DEFEND_TOTAL budgets and a few solves begun before the end, and
 * still answers (the moves left unsolved count as defences). */
START_TEST(test_defend_total)
{
    static const char *moves =
        "j9 h10 f9 g9 f8 f7 i8 e8 g7 g6 h5 e10 e9 d10 c10 g11 g12 h8 f10 f12 i9 h9 h6 i5 h11 "
        "i10 j11 e13 d14 e11 c9 d13 f13 e14 e12 d11 d9 b9 c11 c12 b11 k10 j10 j12 k11 e6 g8 "
        "l11 j7 j8 k6 i6 l7 l5 m8 j5 l12 m13 n9 o10 m7";
    board_t b;
    board_init(&b, 15, RULE_FREESTYLE);
    char buf[512];
    snprintf(buf, sizeof buf, "%s", moves);
    for (char *tok = strtok(buf, " "); tok; tok = strtok(NULL, " ")) {
        int m;
        ck_assert_msg(move_parse(tok, 15, &m), "%s", tok);
        ck_assert_int_eq(board_play(&b, m), MOVE_OK);
    }
    char err[128];
    vct_t *s = vct_create((size_t)32 << 20, err, sizeof err);
    ck_assert_ptr_nonnull(s);
    vct_limits_t lim = {.nodes = 500};
    int def[BOARD_CELLS];
    bool proven;
    uint64_t before = vct_nodes(s);
    int n = vct_defend_proven(s, &b, &lim, def, &proven, NULL);
    uint64_t used = vct_nodes(s) - before;
    fprintf(stderr, "defence of position 608: %d moves, %llu nodes (%.1f budgets)\n", n,
            (unsigned long long)used, (double)used / (double)lim.nodes);
    ck_assert_int_gt(n, 0);
    ck_assert_uint_le(used, (VCT_DEFEND_TOTAL + 2 * (VCT_REPLY_CHAIN + 1)) * lim.nodes);
    ck_assert_uint_ge(used, VCT_DEFEND_TOTAL * lim.nodes);   /* the bound is what ended it */
    vct_free(s);
}
END_TEST

/* The relevance zones change no answer: on random positions (freestyle
 * and standard, 9x9 and 11x11) where the opponent has a VCT, the exact
 * defence (no node limit) is the same with the zones as when every
 * candidate is solved, and the zones save nodes. */
START_TEST(test_defend_zones)
{
    vct_t *s = solver();
    uint64_t rng = 777;
    int threatened = 0;
    uint64_t nodes[2] = {0, 0};
    for (int it = 0; it < 800 && threatened < 40; it++) {
        board_t b;
        rule_t rule = it % 4 < 2 ? RULE_FREESTYLE : RULE_STANDARD;
        if (!threatened_position(s, &b, it % 2 ? 11 : 9, rule,
                                 10 + (int)(util_rng_next(&rng) % 10), 3, &rng))
            continue;
        vct_limits_t lim = {.max_depth = 3};
        threatened++;
        int got[2][BOARD_CELLS], n[2];
        for (int z = 0; z < 2; z++) {
            lim.no_zones = z == 0;
            vct_clear(s);
            uint64_t before = vct_nodes(s);
            n[z] = vct_defend(s, &b, &lim, got[z], NULL);
            nodes[z] += vct_nodes(s) - before;
        }
        ck_assert_int_eq(n[1], n[0]);
        for (int i = 0; i < n[0]; i++)
            ck_assert_msg(got[1][i] == got[0][i], "position %d: zones give %d, every solve %d",
                          it, got[1][i], got[0][i]);
    }
    ck_assert_int_ge(threatened, 30);
    ck_assert_uint_lt(nodes[1], nodes[0]);
    fprintf(stderr, "zones: %d threatened positions, the same defences, %llu nodes against "
            "%llu\n", threatened, (unsigned long long)nodes[1], (unsigned long long)nodes[0]);
    vct_free(s);
}
END_TEST

/* The it-th try of a loop over random threatened positions (9x9 and 11x11
 * freestyle, 10-19 stones, the threat within 3 threats): false when it
 * gives none, else b. */
static bool threatened_try(vct_t *s, int it, uint64_t *rng, board_t *b)
{
    return threatened_position(s, b, it % 2 ? 11 : 9, RULE_FREESTYLE,
                               10 + (int)(util_rng_next(rng) % 10), 3, rng);
}

/* s's table: the proof of the threat against b's side to move alone (b's
 * opponent solved to move, with lim). */
static void threat_proof_alone(vct_t *s, const board_t *b, const vct_limits_t *lim)
{
    board_t flip = *b;
    board_pass(&flip);
    vct_clear(s);
    ck_assert_int_eq(vct_solve(s, &flip, lim, NULL), VCT_WIN);
}

/* A raised stop flag ends the walk of a proof's zone as it ends a solve
 * (a walk left to run made a move at 1 s take 2.9 s): on random threatened
 * positions, with the threat's proof in the table and the flag up, the
 * defence gets the threat from the table but no zone, so no move is
 * refuted without a solve: it lists what the defence without zones lists
 * from the same table (a walk that ignores the flag builds the zone, and
 * the moves outside it are refuted: the lists differ). */
START_TEST(test_zone_walk_stops)
{
    vct_t *s = solver();
    uint64_t rng = 4242;
    int asked = 0;
    for (int it = 0; it < 800 && asked < 30; it++) {
        board_t b;
        if (!threatened_try(s, it, &rng, &b))
            continue;
        int n[2], moves[2][BOARD_CELLS];
        volatile int up = 1;
        for (int z = 0; z < 2; z++) {
            vct_limits_t lim = {.max_depth = 3};
            threat_proof_alone(s, &b, &lim);
            lim.no_zones = z == 0;
            lim.stop = &up;
            n[z] = vct_defend(s, &b, &lim, moves[z], NULL);
        }
        if (n[0] < 0)
            continue;   /* the table could not give the threat's line with the flag up */
        asked++;
        ck_assert_msg(n[1] == n[0], "position %d: %d moves with zones, %d without", it, n[1],
                      n[0]);
        for (int i = 0; i < n[0]; i++)
            ck_assert_int_eq(moves[1][i], moves[0][i]);
    }
    ck_assert_int_ge(asked, 20);
    vct_free(s);
}
END_TEST

/* A raised stop flag ends the defence's solves of its candidates: each
 * one left begins no search (a defence round went on for 2.7 s past the
 * end of a 1 s move, its hundred candidates each starting a solve that
 * gave up at once: 2026-12-03, seed 15, game 29). On random threatened
 * positions with the threat's proof in the table and the flag up, the
 * defence gets the threat from the table and begins no solve more than
 * getting it alone does (vct_defence_begin, the same first step), and
 * its answer counts every candidate undecided: as many moves as the
 * candidates, none proven. */
START_TEST(test_defend_stops)
{
    vct_t *s = solver();
    uint64_t rng = 777;
    int asked = 0;
    for (int it = 0; it < 800 && asked < 20; it++) {
        board_t b;
        if (!threatened_try(s, it, &rng, &b))
            continue;
        vct_limits_t lim = {.max_depth = 3, .nodes = 100000};
        threat_proof_alone(s, &b, &lim);
        volatile int up = 1;
        lim.stop = &up;
        int cand[BOARD_CELLS], moves[BOARD_CELLS];
        uint64_t n0 = vct_solves(s);
        int nc = vct_defence_begin(s, &b, &lim, cand, NULL);
        uint64_t n1 = vct_solves(s);
        bool proven = true;
        int n = vct_defend_proven(s, &b, &lim, moves, &proven, NULL);
        uint64_t n2 = vct_solves(s);
        if (nc <= 0)
            continue;   /* the table could not give the threat's line with the flag up */
        asked++;
        ck_assert_uint_le(n2 - n1, n1 - n0);
        ck_assert_int_eq(n, nc);
        ck_assert(!proven);
    }
    ck_assert_int_ge(asked, 10);
    vct_free(s);
}
END_TEST

/* A proof larger than the node pool (position 357 of
 * bench/vct-freestyle15.txt, black to move): the solver of the least size
 * (64 KiB, a pool of 2,048 children) fills its pool and, with a node
 * budget, goes on in rounds that read what the last ones proved from the
 * table, and finds the VCT the large solver finds in one; with no budget
 * to bound the rounds it gives up when the pool fills. */
static const int POOL_ROUNDS[10][2] = {{9, 6}, {7, 7}, {5, 6}, {8, 5}, {6, 5},
                                       {7, 4}, {7, 8}, {6, 7}, {8, 7}, {6, 9}};

START_TEST(test_pool_rounds)
{
    board_t b;
    board_from_xy(&b, POOL_ROUNDS, 10);
    char err[128];
    vct_t *small = vct_create(0, err, sizeof err), *large = solver();
    ck_assert_msg(small != NULL, "%s", err);
    vct_limits_t lim = {.nodes = 20000};
    vct_result_t r;
    ck_assert_int_eq(vct_solve(large, &b, &lim, &r), VCT_WIN);
    ck_assert_int_eq(vct_solve(small, &b, NULL, &r), VCT_UNKNOWN);
    vct_clear(small);
    ck_assert_int_eq(vct_solve(small, &b, &lim, &r), VCT_WIN);
    ck_assert_uint_le(r.nodes, 20000);
    check_line(&b, &r, VCT_MAX_DEPTH);
    vct_free(small);
    vct_free(large);
}
END_TEST

START_TEST(test_limits)
{
    board_t b;
    board_from_diagram(&b, RULE_FREESTYLE, STONE_WHITE, DEEP);
    vct_t *s = solver();
    vct_result_t r;
    vct_limits_t tiny = {.nodes = 3};
    ck_assert_int_eq(vct_solve(s, &b, &tiny, &r), VCT_UNKNOWN);
    ck_assert_int_le(r.nodes, 3);
    ck_assert_int_eq(r.nline, 0);
    /* a raised stop flag ends a solve where the clock is read (every 16
     * nodes); a lowered one changes nothing (the table is still empty) */
    volatile int stop = 1;
    vct_limits_t stopped = {.nodes = 200000, .stop = &stop};
    ck_assert_int_eq(vct_solve(s, &b, &stopped, &r), VCT_UNKNOWN);
    ck_assert_int_le(r.nodes, 16);
    stop = 0;
    ck_assert_int_eq(vct_solve(s, &b, &stopped, &r), VCT_WIN);
    vct_clear(s);
    uint64_t before = vct_nodes(s);
    vct_limits_t ok = {.nodes = 200000};
    ck_assert_int_eq(vct_solve(s, &b, &ok, &r), VCT_WIN);
    ck_assert_uint_eq(vct_nodes(s), before + r.nodes);
    /* a table of proven results answers again at once */
    ck_assert_int_eq(vct_solve(s, &b, &ok, &r), VCT_WIN);
    ck_assert_int_le(r.nodes, 20);
    check_line(&b, &r, VCT_MAX_DEPTH);
    /* a finished game and an immediate five */
    board_t g;
    board_init(&g, 9, RULE_FREESTYLE);
    play_black_four(&g, 4, 4);
    ck_assert_int_eq(vct_solve(s, &g, NULL, &r), VCT_WIN);
    ck_assert_int_eq(r.nthreats, 0);
    ck_assert_int_eq(r.nline, 1);
    board_play(&g, r.line[0]);
    ck_assert(board_over(&g));
    ck_assert_int_eq(vct_solve(s, &g, NULL, &r), VCT_NONE);
    ck_assert_int_eq(vct_defend(s, &g, NULL, NULL, NULL), -1);
    vct_free(s);
    vct_free(NULL);
}
END_TEST

START_TEST(test_bot_vct)
{
    /* Wins a forced line that is no VCF: the double three, then the open
     * four, then the five (both sides bot:vct). */
    board_t b;
    board_from_diagram(&b, RULE_FREESTYLE, STONE_BLACK, THREE_THREE);
    check_bot_plays("vct", BOT_VCT, b, 5, RESULT_BLACK);
    uint64_t rng = 3;
    /* Stops the opponent's VCT with its only defence. */
    board_from_diagram(&b, RULE_FREESTYLE, STONE_WHITE, ONE_DEFENCE);
    ck_assert_int_eq(bot_vct_move(&b, &rng, NULL, NULL), xy(&b, 4, 4));
}
END_TEST

/* A short series on 15x15 from seeded random openings, both colours:
 * bot:vct wins at least as many games as bot:vcf. (`gomoku match bot:vct
 * bot:vcf --games 100 --openings 4 --seed 7`: 64-33-3. Over 15 such sets
 * of four games, 14 held.) */
START_TEST(test_bot_vct_against_vcf)
{
    int vct_wins = 0, vcf_wins = 0, games = 4;
    vcf_t *f = vcf_create((size_t)1 << 20, NULL, 0);
    vct_t *t = solver();
    for (int g = 0; g < games; g++) {
        board_t b;
        board_init(&b, 15, RULE_FREESTYLE);
        uint64_t rng = 40 + (uint64_t)(g / 2);
        for (int k = 0; k < 4; k++)   /* the same opening for both colourings */
            board_play(&b, board_xy(&b, 5 + (int)util_rng_below(&rng, 5),
                                    5 + (int)util_rng_below(&rng, 5)));
        int vct_color = g % 2 ? STONE_WHITE : STONE_BLACK;
        while (!board_over(&b)) {
            int m = b.to_move == vct_color ? bot_vct_move(&b, &rng, f, t)
                                           : bot_vcf_move(&b, &rng, f);
            if (m == MOVE_NONE)
                break;
            ck_assert_int_eq(board_play(&b, m), MOVE_OK);
        }
        int won = b.result == RESULT_BLACK ? STONE_BLACK : b.result == RESULT_WHITE ? STONE_WHITE : 0;
        vct_wins += won == vct_color;
        vcf_wins += won && won != vct_color;
    }
    ck_assert_msg(vct_wins >= vcf_wins, "bot:vct %d wins, bot:vcf %d", vct_wins, vcf_wins);
    vcf_free(f);
    vct_free(t);
}
END_TEST

static int run_bin(const char *args, char *out, size_t outlen)
{
    return run_gomoku(args, NULL, CAPTURE_BOTH, out, outlen);
}

/* THREE_THREE and ONE_DEFENCE as move lists on 9x9. */
#define THREE_THREE_MOVES "--size 9 --moves '4,2 0,7 4,3 8,7 2,4 0,8 3,4 8,8'"
#define QUIET_WIN_MOVES                                                                     \
    "--moves '5,8 6,7 8,5 6,6 6,5 5,5 7,7 4,6 7,6 6,4 7,3 7,5 8,7 9,8 8,6 8,4 5,7 4,4 7,4 5,4 "  \
    "8,8'"
#define ONE_DEFENCE_MOVES "--size 9 --moves '5,3 2,1 7,3 3,2 2,4 2,5 3,4 7,7 3,5'"

START_TEST(test_cli_rules_vct)
{
    char out[4096];
    ck_assert_int_eq(run_bin("rules --vct " THREE_THREE_MOVES, out, sizeof out), 0);
    ck_assert_msg(strstr(out, "vct: win 2: 4,4 ") != NULL, "%s", out);
    ck_assert_int_eq(run_bin("rules --vct --moves '7,7 0,0'", out, sizeof out), 0);
    ck_assert_msg(strstr(out, "vct: none\n") != NULL, "%s", out);
    /* white to move against black's double three: the one defence */
    ck_assert_int_eq(run_bin("rules --vct " ONE_DEFENCE_MOVES, out, sizeof out), 0);
    ck_assert_msg(strstr(out, "vct: none\nvct_opponent: win 2: ") != NULL, "%s", out);
    ck_assert_msg(strstr(out, "vct_defences: 4,4\n") != NULL, "%s", out);
    ck_assert_msg(strstr(out, "vct_quiet: none found\n") != NULL, "%s", out);
    /* the quiet win of test_quiet_win, and its line after it */
    ck_assert_int_eq(run_bin("rules --vct " QUIET_WIN_MOVES, out, sizeof out), 0);
    ck_assert_msg(strstr(out, "vct: none\n") != NULL, "%s", out);
    ck_assert_msg(strstr(out, "vct_quiet: 8,9 then win ") != NULL, "%s", out);
    /* with --vcf too: both sections, VCF first */
    ck_assert_int_eq(run_bin("rules --vcf --vct " THREE_THREE_MOVES, out, sizeof out), 0);
    char *vcf = strstr(out, "vcf: none\n"), *vct = strstr(out, "vct: win 2: ");
    ck_assert_msg(vcf && vct && vcf < vct, "%s", out);
    /* budget: 1 node is not enough */
    ck_assert_int_eq(run_bin("rules --vct --vct-nodes 1 " THREE_THREE_MOVES, out, sizeof out), 0);
    ck_assert_msg(strstr(out, "vct: unknown (node budget)\n") != NULL, "%s", out);
    /* malformed options: a line saying what is wrong (then the usage), exit 2 */
    ck_assert_int_eq(run_bin("rules --vct --vct-nodes abc --moves '7,7'", out, sizeof out), 2);
    ck_assert_msg(strncmp(out, "gomoku rules: --vct-nodes ", 26) == 0, "%s", out);
    ck_assert_msg(strchr(out, '\n') && strstr(strchr(out, '\n') + 1, "usage:") ==
                  strchr(out, '\n') + 1, "%s", out);
    ck_assert_int_eq(run_bin("rules --vct --vct-nodes 0 --moves '7,7'", out, sizeof out), 2);
    ck_assert_int_eq(run_bin("rules --vct --vct-nodes -3", out, sizeof out), 2);
    ck_assert_int_eq(run_bin("rules --vct-nodes 100 --moves '7,7'", out, sizeof out), 2);
    ck_assert_msg(strstr(out, "--vct-nodes needs --vct") != NULL, "%s", out);
    ck_assert_int_eq(run_bin("rules --vct --moves '7,7 zz'", out, sizeof out), 1);
    ck_assert_msg(strstr(out, "move 1 'zz' is not a move") != NULL, "%s", out);
}
END_TEST

/* A .psq of the moves (Gomocup 0-based "x,y" pairs, space-separated) on a
 * size board, at path. */
static void write_psq(const char *path, int size, const char *moves)
{
    char buf[2048];
    int n = snprintf(buf, sizeof buf, "Piskvork %dx%d, 11:11, 0\n", size, size);
    for (const char *s = moves; *s;) {
        int x, y, len;
        ck_assert_int_eq(sscanf(s, "%d,%d%n", &x, &y, &len), 2);
        n += snprintf(buf + n, sizeof buf - (size_t)n, "%d,%d,0\n", x + 1, y + 1);
        s += len;
        s += strspn(s, " ");
    }
    write_file(path, buf, (size_t)n, "wb");
}

/* The line `rules --vct --moves` prints for the side to move after the
 * first `plies` of moves (the "vct: ..." line, without "vct: "). */
static void vct_line_after(const char *moves, int plies, char *line, size_t len)
{
    char prefix[512] = "", out[4096], args[700];
    const char *s = moves;
    for (int i = 0; i < plies; i++) {
        size_t l = strcspn(s, " ");
        strncat(prefix, s, l);
        strcat(prefix, " ");
        s += l + strspn(s + l, " ");
    }
    snprintf(args, sizeof args, "rules --vct --size 9 --moves '%s'", prefix);
    ck_assert_int_eq(run_bin(args, out, sizeof out), 0);
    char *v = strstr(out, "\nvct: ");
    ck_assert_ptr_nonnull(v);
    v += 6;
    snprintf(line, len, "%.*s", (int)strcspn(v, "\n"), v);
}

/* gomoku rules --game: each ply's line is what --moves says of that
 * position; the winner's first win, the position before it, and the wins
 * a side held and did not turn into a win of the game. */
START_TEST(test_cli_rules_game)
{
    /* THREE_THREE, then black's double three played out to a five */
    static const char won[] = "4,2 0,7 4,3 8,7 2,4 0,8 3,4 8,8 4,4 4,1 1,4 0,4 5,4";
    char dir[256], path[300], out[16384], args[400];
    make_tmppath(dir, sizeof dir, path, sizeof path, "won.psq");
    write_psq(path, 9, won);
    snprintf(args, sizeof args, "rules --game %s --vct", path);
    ck_assert_int_eq(run_bin(args, out, sizeof out), 0);
    ck_assert_msg(strncmp(out, "game: 13 plies on 9x9, black wins\nply 0 black 4,2: vct: ", 56) == 0,
                  "%s", out);
    for (int ply = 0; ply < 13; ply++) {   /* every ply, as --moves answers it */
        char line[512], want[600];
        vct_line_after(won, ply, line, sizeof line);
        const char *m = won;
        for (int i = 0; i < ply; i++)
            m += strcspn(m, " ") + 1;
        snprintf(want, sizeof want, "ply %d %s %.*s: vct: %s\n", ply, ply % 2 ? "white" : "black",
                 (int)strcspn(m, " "), m, line);
        ck_assert_msg(strstr(out, want) != NULL, "no '%s' in:\n%s", want, out);
    }
    ck_assert_msg(strstr(out, "ply 8 black 4,4: vct: win 2: 4,4 4,1 1,4\n") != NULL, "%s", out);
    ck_assert_msg(strstr(out, "ply 12 black 5,4: vct: win 0: 5,4\n") != NULL, "%s", out);
    /* the first black ply with a win found, and white's move before it */
    char *first = strstr(out, "first_win: ply ");
    ck_assert_ptr_nonnull(first);
    int fp = atoi(first + 15);
    ck_assert_int_le(fp, 8);
    ck_assert_int_eq(fp % 2, 0);
    char want[64];
    snprintf(want, sizeof want, "first_win: ply %d black\nbefore: ply %d white ", fp, fp - 1);
    ck_assert_msg(strstr(out, want) != NULL, "%s", out);
    ck_assert_msg(strstr(first, "\nvct: none\nvct_opponent: win ") != NULL, "%s", out);
    ck_assert_msg(strstr(out, "\nmissed: none\n") != NULL, "%s", out);
    /* black leaves its win and the game is unfinished: a win not turned into one */
    snprintf(path + strlen(dir), sizeof path - strlen(dir), "/open.psq");
    write_psq(path, 9, "4,2 0,7 4,3 8,7 2,4 0,8 3,4 8,8 0,0 1,1");
    snprintf(args, sizeof args, "rules --game %s --vct", path);
    ck_assert_int_eq(run_bin(args, out, sizeof out), 0);
    ck_assert_msg(strncmp(out, "game: 10 plies on 9x9, unfinished\n", 34) == 0, "%s", out);
    ck_assert_msg(strstr(out, "first_win: none\nmissed: ") != NULL, "%s", out);
    ck_assert_msg(strstr(out, "ply 8 black\n") != NULL, "%s", out);
    ck_assert_msg(strstr(out, "before:") == NULL, "%s", out);
    /* a VCF audit, a budget too small, the rule, bad options: exit status and a line */
    snprintf(path + strlen(dir), sizeof path - strlen(dir), "/won.psq");
    static const struct {
        const char *opts;
        int rc;
        const char *want;
    } cases[] = {
        {"--vcf", 0, "ply 10 black 1,4: vcf: win 1 fours: 1,4\n"},
        {"--vcf", 0, "ply 8 black 4,4: vcf: none\n"},
        {"--vct --vct-nodes 1", 0, "ply 8 black 4,4: vct: unknown (node budget)\n"},
        /* black's double three is forbidden in renju */
        {"--vct --rule renju", 1, "won.psq: ply 8 4,4 is forbidden for black under renju\n"},
        {"--vct --moves '7,7'", 2, "--game and --moves: give one"},
        {"", 2, "--game takes one of --vct and --vcf"},
        {"--vct --vcf", 2, "--game takes one of --vct and --vcf"},
        {"--vct --size 9", 2, "the size comes from the file"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        snprintf(args, sizeof args, "rules --game %s %s", path, cases[i].opts);
        ck_assert_int_eq(run_bin(args, out, sizeof out), cases[i].rc);
        ck_assert_msg(strstr(out, cases[i].want) != NULL, "%s: %s", cases[i].opts, out);
    }
    snprintf(args, sizeof args, "rules --game %s/none.psq --vct", dir);
    ck_assert_int_eq(run_bin(args, out, sizeof out), 1);
    ck_assert_msg(strncmp(out, "gomoku rules: cannot open ", 26) == 0 && strchr(out, '\n') ==
                  out + strlen(out) - 1, "%s", out);
    snprintf(path + strlen(dir), sizeof path - strlen(dir), "/bad.psq");
    write_file(path, "Piskvork 9x9, 11:11, 0\n5,5,0\n5,5,0\n", 35, "wb");
    snprintf(args, sizeof args, "rules --game %s --vct", path);
    ck_assert_int_eq(run_bin(args, out, sizeof out), 1);
    ck_assert_msg(strstr(out, "bad.psq: ") != NULL && strchr(out, '\n') == out + strlen(out) - 1,
                  "%s", out);
    remove_tree(dir);
}
END_TEST

START_TEST(test_cli_bench_vct)
{
    char out[4096];
    ck_assert_int_eq(run_bin("bench vct --positions 10 --nodes 200 --runs 1", out, sizeof out), 0);
    ck_assert_msg(strstr(out, "{\"bench\":\"vct\"") == out, "%s", out);
    ck_assert_ptr_nonnull(strstr(out, "\"algo\":\"pn\""));
    ck_assert_ptr_nonnull(strstr(out, "\"positions_per_s\":"));
    ck_assert_ptr_nonnull(strstr(out, "\"nodes_per_s\":"));
    ck_assert_ptr_nonnull(strstr(out, "\"solved\":"));
    ck_assert_int_eq(run_bin("bench vct --positions 10 --nodes 200 --runs 1 --algo dfs", out,
                             sizeof out), 0);
    ck_assert_ptr_nonnull(strstr(out, "\"algo\":\"dfs\""));
    ck_assert_int_eq(run_bin("bench vct --positions 0", out, sizeof out), 2);
    ck_assert_int_eq(run_bin("bench vct --algo best", out, sizeof out), 2);
    ck_assert_msg(strstr(out, "--algo must be pn or dfs") != NULL, "%s", out);
    /* --file: its positions, in order (black's four-three first: a VCT at
     * once; then an opening with none), whatever --positions says */
    char dir[256], path[512], cmd[1024];
    make_tmppath(dir, sizeof dir, path, sizeof path, "pos.txt");
    const char *two = "# two positions\nh8 a1 i8 a3 j8 a5 h9 a7 h10 a9\nh8 h9 h10\n";
    write_file(path, two, strlen(two), "w");
    snprintf(cmd, sizeof cmd, "bench vct --file %s --positions 7 --nodes 2000 --runs 1", path);
    ck_assert_int_eq(run_bin(cmd, out, sizeof out), 0);
    ck_assert_msg(strstr(out, "\"positions\":2,") != NULL, "%s", out);
    ck_assert_msg(strstr(out, "\"won\":0.500") != NULL, "%s", out);
    ck_assert_msg(strstr(out, "\"solved\":1.000") != NULL, "%s", out);
    /* a bad file: one line that names it and the line */
    write_file(path, "h8 h8\n", 6, "w");
    ck_assert_int_eq(run_bin(cmd, out, sizeof out), 1);
    ck_assert_msg(strstr(out, "line 1: ") != NULL && strchr(out, '\n') == strrchr(out, '\n'),
                  "%s", out);
    write_file(path, "# only a comment\n\n", 18, "w");
    ck_assert_int_eq(run_bin(cmd, out, sizeof out), 1);
    ck_assert_msg(strstr(out, "no openings in it") != NULL, "%s", out);
    snprintf(cmd, sizeof cmd, "bench vct --file %s/missing.txt", dir);
    ck_assert_int_eq(run_bin(cmd, out, sizeof out), 1);
    remove_tree(dir);
}
END_TEST

int main(void)
{
    Suite *su = suite_create("vct");
    ADD_CASE(su, "vct", 60, test_three_three, test_four_three, test_dead_three_does_not_force,
             test_counter_four_refutes, test_counter_four_puts_off, test_deep_line,
             test_renju_white_forces_forbidden,
             test_defend, test_defend_passes, test_defend_total, test_defend_zones, test_zone_walk_stops, test_defend_stops,
             test_quiet_win, test_quiet_win_kinds, test_quiet_win_random, test_limits,
             test_pool_rounds, test_bot_vct, test_bot_vct_against_vcf,
             test_random_freestyle, test_random_standard, test_random_renju, test_random_small,
             test_three_defences_after_vcf, test_cli_rules_vct, test_cli_rules_game,
             test_cli_bench_vct);
    return run_suite(su);
}
