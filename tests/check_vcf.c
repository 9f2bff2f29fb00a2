/* VCF solver: hand-made positions with known answers (short, 15+ fours
 * deep, counter-fours, renju traps), random positions against a plain
 * brute-force solver, the defence, bot:vcf, the engine's five queries,
 * and `gomoku rules --vcf` / `gomoku bench vcf` from the command line. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "engine/board.h"
#include "engine/bot.h"
#include "util/util.h"
#include "engine/line.h"
#include "engine/threat.h"
#include "engine/vcf.h"
#include "tests/testkit.h"

static vcf_t *solver(void)
{
    char err[128];
    vcf_t *s = vcf_create((size_t)1 << 20, err, sizeof err);
    ck_assert_msg(s != NULL, "%s", err);
    return s;
}

/* A position from stone lists: cells, history (black's stones first, as
 * if played in that order, only the set matters here), hash and side to
 * move are set directly, so any stone counts can be written down. */
static void place(board_t *b, int size, rule_t rule, int to_move, const int (*black)[2], int nb,
                  const int (*white)[2], int nw)
{
    board_init(b, size, rule);
    for (int i = 0; i < nb + nw; i++) {
        int x = i < nb ? black[i][0] : white[i - nb][0];
        int y = i < nb ? black[i][1] : white[i - nb][1];
        int m = board_xy(b, x, y);
        ck_assert_int_eq(b->cells[m], STONE_EMPTY);
        b->cells[m] = (uint8_t)(i < nb ? STONE_BLACK : STONE_WHITE);
        b->moves[b->nmoves++] = (int16_t)m;
    }
    b->last = b->nmoves ? b->moves[b->nmoves - 1] : MOVE_NONE;
    b->to_move = (uint8_t)to_move;
    b->hash = board_hash_full(b);
}

#define PLACE(b, size, rule, side, B, W) \
    place(b, size, rule, side, B, (int)(sizeof B / sizeof B[0]), W, (int)(sizeof W / sizeof W[0]))
/* PLACE on a freestyle board with black to move, which must have a VCF, into r. */
#define PLACE_WIN(s, b, size, B, W, r)                                     \
    do {                                                                   \
        PLACE(b, size, RULE_FREESTYLE, STONE_BLACK, B, W);                 \
        ck_assert_int_eq(vcf_solve(s, b, NULL, r), VCF_WIN);               \
    } while (0)

static int count_fives(const board_t *b, int color)
{
    int pts[BOARD_CELLS];
    return board_five_points(b, color, pts);
}

/* Replay a winning line and check it is one: every attacker move legal and
 * a four (or the final five), every defender move the only block, and the
 * last attacker move a five or a four the defender cannot stop. */
static void check_line(const board_t *start, const vcf_result_t *r)
{
    ck_assert_int_eq(r->status, VCF_WIN);
    ck_assert_int_ge(r->nline, 1);
    board_t b = *start;
    int att = b.to_move, def = STONE_BLACK + STONE_WHITE - att;
    for (int i = 0; i < r->nline; i++) {
        int m = r->line[i];
        if (i % 2 == 1) {   /* the block: the attacker's only five point */
            int f[BOARD_CELLS];
            ck_assert_int_eq(board_five_points(&b, att, f), 1);
            ck_assert_int_eq(f[0], m);
            ck_assert_int_eq(board_play(&b, m), MOVE_OK);
            continue;
        }
        ck_assert_msg(board_check_move(&b, m) == MOVE_OK, "line move %d illegal", i);
        if (i == r->nline - 1 && board_is_winning_move(&b, m)) {
            ck_assert_int_eq(r->nfours, (r->nline - 1) / 2);
            return;
        }
        int before = count_fives(&b, def);
        ck_assert_int_le(before, 1);
        board_play(&b, m);
        ck_assert_int_eq(count_fives(&b, def), 0);   /* a defender's five was blocked */
        int f[BOARD_CELLS];
        int nf = board_five_points(&b, att, f);
        ck_assert_int_ge(nf, 1);   /* a four */
        if (i == r->nline - 1) {
            bool stoppable = nf == 1 && board_check_move(&b, f[0]) == MOVE_OK;
            ck_assert_msg(!stoppable, "the line ends in a four that can be blocked");
        }
    }
    ck_assert_int_eq(r->nfours, (r->nline + 1) / 2);
}

/* Plain brute force: all legal moves, full-board five scans, no table.
 * Has the side to move a VCF of at most depth fours? */
static bool brute_vcf(board_t *b, int depth)
{
    int att = b->to_move, def = STONE_BLACK + STONE_WHITE - att;
    if (board_over(b))
        return false;
    if (count_fives(b, att) > 0)
        return true;
    if (depth == 0)
        return false;
    for (int m = 0; m < board_npoints(b); m++) {
        if (board_check_move(b, m) != MOVE_OK)
            continue;
        board_play(b, m);
        int f[BOARD_CELLS];
        int nf = count_fives(b, def) ? 0 : board_five_points(b, att, f);
        bool win = false;
        if (nf >= 2 || (nf == 1 && board_check_move(b, f[0]) != MOVE_OK)) {
            win = true;
        } else if (nf == 1) {
            board_play(b, f[0]);
            win = brute_vcf(b, depth - 1);
            board_undo(b);
        }
        board_undo(b);
        if (win)
            return true;
    }
    return false;
}

/* The solver finds a VCF of NFOURS fours from B starting at (X,Y), and
 * the line checks out. */
static void expect_vcf(vcf_t *s, const board_t *b, int nfours, int x, int y)
{
    vcf_result_t r;
    ck_assert_int_eq(vcf_solve(s, b, NULL, &r), VCF_WIN);
    ck_assert_int_eq(r.nfours, nfours);
    ck_assert_int_eq(r.line[0], board_xy(b, x, y));
    check_line(b, &r);
}

/* Neither the solver nor brute force to DEPTH fours finds a VCF from B. */
static void expect_no_vcf(vcf_t *s, board_t *b, int depth)
{
    vcf_result_t r;
    ck_assert_int_eq(vcf_solve(s, b, NULL, &r), VCF_NONE);
    ck_assert(!brute_vcf(b, depth));
}

START_TEST(test_five_queries)
{
    board_t b;
    /* standard: B B B B . B  -> the gap would make six: no five point */
    static const int B1[][2] = {{2, 5}, {3, 5}, {4, 5}, {5, 5}, {7, 5}, {10, 10}};
    static const int W1[][2] = {{0, 0}, {0, 2}, {0, 4}, {0, 6}, {0, 8}};
    int pts[BOARD_CELLS];
    PLACE(&b, 15, RULE_STANDARD, STONE_WHITE, B1, W1);
    ck_assert_int_eq(board_five_points(&b, STONE_BLACK, pts), 1);
    ck_assert_int_eq(pts[0], board_xy(&b, 1, 5));
    PLACE(&b, 15, RULE_FREESTYLE, STONE_WHITE, B1, W1);
    ck_assert_int_eq(board_five_points(&b, STONE_BLACK, pts), 2);
    ck_assert_int_eq(pts[0], board_xy(&b, 1, 5));
    ck_assert_int_eq(pts[1], board_xy(&b, 6, 5));
    ck_assert(board_makes_five(&b, board_xy(&b, 6, 5), STONE_BLACK));
    ck_assert(!board_makes_five(&b, board_xy(&b, 6, 5), STONE_WHITE));
    /* near: only the lines through the centre */
    ck_assert_int_eq(board_five_points_near(&b, STONE_BLACK, board_xy(&b, 2, 5), pts), 2);
    ck_assert_int_eq(board_five_points_near(&b, STONE_BLACK, board_xy(&b, 10, 10), pts), 0);
    ck_assert_int_eq(board_five_points(&b, STONE_WHITE, pts), 0);
    /* renju: black's overline is no five, white's is */
    PLACE(&b, 15, RULE_RENJU, STONE_WHITE, B1, W1);
    ck_assert_int_eq(board_five_points(&b, STONE_BLACK, pts), 1);
    static const int W2[][2] = {{2, 5}, {3, 5}, {4, 5}, {5, 5}, {7, 5}};
    static const int B2[][2] = {{0, 0}, {0, 2}, {0, 4}, {0, 6}, {0, 8}, {9, 9}};
    PLACE(&b, 15, RULE_RENJU, STONE_WHITE, B2, W2);
    ck_assert_int_eq(board_five_points(&b, STONE_WHITE, pts), 2);
}
END_TEST

START_TEST(test_immediate_five_and_game_over)
{
    vcf_t *s = solver();
    board_t b;
    board_init(&b, 15, RULE_FREESTYLE);
    vcf_result_t r;
    ck_assert_int_eq(vcf_solve(s, &b, NULL, &r), VCF_NONE);   /* empty board */
    play_black_four(&b, 7, 7);
    ck_assert_int_eq(vcf_solve(s, &b, NULL, &r), VCF_WIN);
    ck_assert_int_eq(r.nfours, 0);
    ck_assert_int_eq(r.nline, 1);
    check_line(&b, &r);
    board_play(&b, r.line[0]);
    ck_assert(board_over(&b));
    ck_assert_int_eq(vcf_solve(s, &b, NULL, &r), VCF_NONE);
    vcf_free(s);
    vcf_free(NULL);
}
END_TEST

/* Black: (5,5) (6,5) (7,5) closed by white (4,5), and (8,6) (8,7). The four
 * at (8,5) forces white to (9,5) and leaves a three in column 8 that opens
 * to an open four: two fours, and none of one. */
static const int TWO_B[][2] = {{5, 5}, {6, 5}, {7, 5}, {8, 6}, {8, 7}};
static const int TWO_W[][2] = {{4, 5}, {0, 14}, {14, 14}, {14, 0}, {2, 12}};

START_TEST(test_two_fours)
{
    vcf_t *s = solver();
    board_t b;
    vcf_result_t r;
    PLACE_WIN(s, &b, 15, TWO_B, TWO_W, &r);
    check_line(&b, &r);
    ck_assert_int_eq(r.nfours, 2);
    ck_assert_int_eq(r.line[0], board_xy(&b, 8, 5));
    ck_assert_int_eq(r.line[1], board_xy(&b, 9, 5));
    vcf_limits_t one = {.max_fours = 1};
    ck_assert_int_eq(vcf_solve(s, &b, &one, &r), VCF_NONE);
    /* the same with a tiny node budget: unknown, not a wrong answer */
    vcf_t *fresh = solver();
    vcf_limits_t tiny = {.nodes = 1};
    ck_assert_int_eq(vcf_solve(fresh, &b, &tiny, &r), VCF_UNKNOWN);
    ck_assert_int_eq(r.nodes, 1);
    vcf_free(fresh);
    /* white to move has no fours at all */
    board_pass(&b);
    ck_assert_int_eq(vcf_solve(s, &b, NULL, &r), VCF_NONE);
    vcf_free(s);
}
END_TEST

/* vcf_solve_at on another query's position obeys that query's stop flag
 * (a VCT's sub-solves end when the search that owns the VCT ends): set,
 * it is unknown, not a wrong answer; clear, it wins. */
START_TEST(test_stop_flag_of_outer_query)
{
    board_t b;
    PLACE(&b, 15, RULE_FREESTYLE, STONE_BLACK, TWO_B, TWO_W);
    threat_query_t q;
    threat_begin(&q, &b, 0, 0.0);
    volatile int stop = 1;
    q.stop = &stop;
    vcf_t *s = solver();
    vcf_result_t r;
    ck_assert_int_eq(vcf_solve_at(s, &q, NULL, &r), VCF_UNKNOWN);
    stop = 0;
    ck_assert_int_eq(vcf_solve_at(s, &q, NULL, &r), VCF_WIN);
    ck_assert_int_eq(r.nfours, 2);
    vcf_free(s);
}
END_TEST

/* As above, but white's block at (9,5) completes an open four in column 9:
 * black's follow-up four does not stop it, so there is no VCF. */
START_TEST(test_counter_four_breaks_line)
{
    static const int W[][2] = {{4, 5}, {9, 6}, {9, 7}, {9, 8}, {0, 14}};
    vcf_t *s = solver();
    board_t b;
    PLACE(&b, 15, RULE_FREESTYLE, STONE_BLACK, TWO_B, W);
    expect_no_vcf(s, &b, 3);
    vcf_free(s);
}
END_TEST

/* Renju: (7,7) would give black two fours (row and column): a win in
 * freestyle, a forbidden double-four in renju, where the other fours are
 * blocked at (7,7) and nothing is left. */
START_TEST(test_renju_black_four_on_forbidden_point)
{
    static const int B[][2] = {{4, 7}, {5, 7}, {6, 7}, {7, 4}, {7, 5}, {7, 6}};
    static const int W[][2] = {{3, 7}, {7, 3}, {0, 14}, {14, 14}, {14, 0}, {0, 0}};
    vcf_t *s = solver();
    board_t b;
    PLACE(&b, 15, RULE_FREESTYLE, STONE_BLACK, B, W);
    expect_vcf(s, &b, 1, 7, 7);
    PLACE(&b, 15, RULE_RENJU, STONE_BLACK, B, W);
    ck_assert_int_eq(board_forbidden_kind(&b, board_xy(&b, 7, 7)), FORBID_DOUBLE_FOUR);
    expect_no_vcf(s, &b, 3);
    vcf_free(s);
}
END_TEST

/* Renju: white's four at (6,7) has one completion, (7,7), where black
 * would make an overline (7,4)..(7,9): black may not block, white wins. In
 * standard black blocks there (an overline is legal, just no win). */
START_TEST(test_renju_white_forces_forbidden_block)
{
    static const int B[][2] = {{2, 7}, {7, 4}, {7, 5}, {7, 6}, {7, 8}, {7, 9}};
    static const int W[][2] = {{3, 7}, {4, 7}, {5, 7}, {0, 0}, {14, 14}};
    vcf_t *s = solver();
    board_t b;
    PLACE(&b, 15, RULE_RENJU, STONE_WHITE, B, W);
    board_t black_view = b;
    black_view.to_move = STONE_BLACK;
    ck_assert_int_eq(board_forbidden_kind(&black_view, board_xy(&b, 7, 7)), FORBID_OVERLINE);
    expect_vcf(s, &b, 1, 6, 7);
    PLACE(&b, 15, RULE_STANDARD, STONE_WHITE, B, W);
    expect_no_vcf(s, &b, 2);
    vcf_free(s);
}
END_TEST

/* A chain of fours on 20x20 (freestyle, black to move) where each four's
 * stone is part of the next four and only the last is open: built by a
 * randomized generator and kept because no shorter line exists. */
static const int LONG_B[][2] = {
    {8, 0}, {7, 3}, {8, 3}, {5, 4}, {6, 4}, {9, 4}, {11, 4}, {11, 5}, {12, 6}, {0, 7}, {5, 7},
    {6, 7}, {13, 8}, {2, 9}, {4, 9}, {12, 10}, {13, 10}, {7, 11}, {4, 12}, {6, 12}, {10, 12},
    {11, 12}, {4, 13}, {5, 13}, {18, 14}, {11, 15}, {12, 15}, {17, 15}, {15, 16}, {17, 16},
    {15, 18}};
static const int LONG_W[][2] = {
    {10, 0}, {5, 3}, {9, 3}, {7, 4}, {13, 4}, {8, 5}, {13, 5}, {4, 6}, {15, 7}, {5, 9}, {9, 9},
    {15, 9}, {4, 10}, {11, 10}, {2, 11}, {13, 11}, {5, 12}, {9, 13}, {10, 13}, {19, 13},
    {3, 15}, {4, 16}, {11, 16}, {12, 16}, {18, 16}, {13, 19}, {16, 19}};

START_TEST(test_long_vcf)
{
    vcf_t *s = solver();
    board_t b;
    vcf_result_t r;
    PLACE_WIN(s, &b, 20, LONG_B, LONG_W, &r);
    ck_assert_int_ge(r.nfours, 15);
    check_line(&b, &r);
    vcf_clear(s);
    vcf_limits_t short_ = {.max_fours = 14};
    ck_assert_int_eq(vcf_solve(s, &b, &short_, &r), VCF_NONE);
    /* standard rules: no overline anywhere in the line, same answer */
    PLACE(&b, 20, RULE_STANDARD, STONE_BLACK, LONG_B, LONG_W);
    ck_assert_int_eq(vcf_solve(s, &b, NULL, &r), VCF_WIN);
    check_line(&b, &r);
    vcf_free(s);
}
END_TEST

/* Random clustered positions on 9x9 under each rule: "a VCF of at most 3
 * fours" from the solver equals the brute force's answer, and every line
 * found replays as a VCF. */
START_TEST(test_random_against_brute_force)
{
    vcf_t *s = solver();
    uint64_t rng = 7;
    int wins = 0, nones = 0;
    for (int it = 0; it < 150; it++) {
        rule_t rule = (rule_t)(it % RULE_COUNT);
        board_t b;
        random_clustered(&b, 9, rule, 12 + (int)(util_rng_next(&rng) % 14), &rng);
        if (board_over(&b))
            continue;
        vcf_limits_t lim = {.max_fours = 3};
        vcf_result_t r;
        vcf_status_t st = vcf_solve(s, &b, &lim, &r);
        board_t copy = b;
        bool brute = brute_vcf(&copy, 3);
        ck_assert_msg((st == VCF_WIN) == brute, "position %d (%s): solver %d, brute force %d",
                      it, rule_name(rule), st, brute);
        ck_assert_int_ne(st, VCF_UNKNOWN);
        if (st == VCF_WIN) {
            check_line(&b, &r);
            ck_assert_int_le(r.nfours, 3);
            wins++;
        } else {
            nones++;
        }
    }
    ck_assert_int_ge(wins, 10);    /* both answers well represented */
    ck_assert_int_ge(nones, 10);
    vcf_free(s);
}
END_TEST

/* The windows of a query by their definition: per window of five on the
 * board, 6 * black + white stones; per cell, the count of windows through
 * it holding 2, 3 or 4 stones of one colour and none of the other. */
static void lines_by_definition(const board_t *b, threat_lines_t *L)
{
    memset(L, 0, sizeof *L);
    int size = b->size;
    for (int d = 0; d < NDIRS; d++)
        for (int first = 0; first < size * size; first++) {
            int x = first % size, y = first / size;
            int ex = x + 4 * line_dx[d], ey = y + 4 * line_dy[d];   /* the window's last cell */
            if (ex < 0 || ex >= size || ey < 0 || ey >= size)
                continue;
            int nb = 0, nw = 0, step = line_dy[d] * size + line_dx[d];
            for (int k = 0; k < 5; k++) {
                nb += b->cells[first + k * step] == STONE_BLACK;
                nw += b->cells[first + k * step] == STONE_WHITE;
            }
            L->n[d][first] = (uint8_t)(6 * nb + nw);
            int own = nb ? nb : nw, c = nb ? STONE_BLACK : STONE_WHITE;
            if ((nb == 0) != (nw == 0) && own >= 2 && own <= 4)
                for (int k = 0; k < 5; k++)
                    L->cls[first + k * step] += THREAT_FIELD(c, own);
        }
}

/* The windows kept stone by stone (threat_play and threat_undo, threat_put
 * and threat_take) equal their definition after every change: random
 * games to the edge of 15x15 and 9x9 boards under each rule, played out,
 * a stone put in and taken out at each ply, and taken back to the empty
 * board. threat_play's board (its five read from the windows) is
 * board_play's: result, hash, side to move. */
START_TEST(test_lines_incremental)
{
    uint64_t rng = 5;
    threat_lines_t want;
    int compared = 0;
    for (int it = 0; it < 12; it++) {
        int size = it % 2 ? 9 : 15;
        board_t b;
        board_init(&b, size, (rule_t)(it % RULE_COUNT));
        threat_query_t q;
        threat_begin(&q, &b, 0, 0.0);
        board_t ref = b;
        int plies = 0;
        for (int tries = 0; tries < 4000 && !board_over(&q.b) && plies < size * size / 2; tries++) {
            int m = (int)(util_rng_next(&rng) % (uint64_t)(size * size));
            if (board_check_move(&q.b, m) != MOVE_OK)
                continue;
            threat_play(&q, m);
            ck_assert_int_eq(board_play(&ref, m), MOVE_OK);
            ck_assert_int_eq(q.b.result, ref.result);
            ck_assert(q.b.hash == ref.hash && q.b.to_move == ref.to_move);
            plies++;
            lines_by_definition(&q.b, &want);
            ck_assert_msg(memcmp(&q.lines, &want, sizeof want) == 0, "game %d ply %d", it, plies);
            int e = (int)(util_rng_next(&rng) % (uint64_t)(size * size));
            if (q.b.cells[e] == STONE_EMPTY) {
                threat_put(&q, e, 1 + (int)(util_rng_next(&rng) % 2));
                lines_by_definition(&q.b, &want);
                ck_assert(memcmp(&q.lines, &want, sizeof want) == 0);
                threat_take(&q, e);
            }
            compared++;
        }
        while (q.b.nmoves > 0)
            threat_undo(&q);
        lines_by_definition(&q.b, &want);
        ck_assert_msg(memcmp(&q.lines, &want, sizeof want) == 0, "game %d taken back", it);
    }
    ck_assert_int_gt(compared, 500);
}
END_TEST

/* The solvers' "as if a stone stood there" four test equals putting the
 * stone in and testing: on random clustered 9x9 positions under each
 * rule, for each colour, each empty point p and each empty cell on p's
 * lines within four of it, with a stone of either colour there; the
 * query's board and windows are left as they were. */
START_TEST(test_four_at_with)
{
    uint64_t rng = 11;
    int checked = 0, fours = 0;
    for (int it = 0; it < 24; it++) {
        board_t b;
        random_clustered(&b, 9, (rule_t)(it % RULE_COUNT), 10 + (int)(util_rng_next(&rng) % 16), &rng);
        threat_query_t q;
        threat_begin(&q, &b, 0, 0.0);
        threat_lines_t before = q.lines;
        for (int c = STONE_BLACK; c <= STONE_WHITE; c++)
            for (int p = 0; p < 81; p++) {
                uint8_t near[BOARD_CELLS] = {0};
                if (b.cells[p] != STONE_EMPTY)
                    continue;
                line_mark_rays(&b, p, 4, near);
                for (int cell = 0; cell < 81; cell++)
                    ck_assert_int_eq(threat_dir_of(9, p, cell) >= 0, near[cell] && cell != p);
                for (int cell = 0; cell < 81; cell++)
                    for (int color = STONE_BLACK; color <= STONE_WHITE; color++) {
                        if (cell == p || !near[cell] || b.cells[cell] != STONE_EMPTY)
                            continue;
                        int f1[8], f2[8];
                        int n1 = threat_four_at_with(&q, c, p, cell, color, f1);
                        ck_assert(memcmp(&q.lines, &before, sizeof before) == 0);
                        /* line by line: the cell's line counts it, the others do not see it */
                        int d0 = threat_dir_of(9, p, cell), sum = 0, f3[8];
                        int k = line_dx[d0] ? cell % 9 - p % 9 : cell / 9 - p / 9;
                        ck_assert(d0 >= 0 && k != 0 && k >= -4 && k <= 4);
                        ck_assert_int_eq(cell, p + k * (line_dy[d0] * 9 + line_dx[d0]));
                        for (int d = 0; d < NDIRS; d++) {
                            int nd = threat_four_at_dir(&q, c, p, d, cell, color, f3);
                            if (d != d0)
                                ck_assert_int_eq(nd, threat_four_at_dir(&q, c, p, d, MOVE_NONE,
                                                                        0, f3));
                            sum += nd;
                        }
                        ck_assert_int_eq(sum, n1);
                        ck_assert(memcmp(q.b.cells, b.cells, sizeof b.cells) == 0);
                        threat_put(&q, cell, color);
                        int n2 = threat_four_at(&q, c, p, f2);
                        threat_take(&q, cell);
                        ck_assert_int_eq(n1, n2);
                        for (int i = 0; i < n1; i++) {
                            int j = 0;
                            while (j < n2 && f2[j] != f1[i])
                                j++;
                            ck_assert_msg(j < n2, "position %d: p %d cell %d: five point %d",
                                          it, p, cell, f1[i]);
                        }
                        checked++;
                        fours += n1 > 0;
                    }
            }
    }
    ck_assert_int_gt(checked, 10000);
    ck_assert_int_gt(fours, 100);   /* the fours are well represented */
}
END_TEST

/* The defence against the two-four VCF, white to move: every returned
 * move stops it (checked with a fresh solver), and it is exactly the set
 * of legal moves after which black has no VCF (all moves tried). */
START_TEST(test_defend)
{
    vcf_t *s = solver(), *check = solver();
    board_t b;
    PLACE(&b, 15, RULE_FREESTYLE, STONE_WHITE, TWO_B, TWO_W);
    b.cells[board_xy(&b, 2, 12)] = STONE_EMPTY;   /* white one stone fewer: white to move */
    b.hash = board_hash_full(&b);
    int moves[BOARD_CELLS];
    vcf_result_t threat;
    vcf_limits_t lim = {.nodes = 100000};
    int n = vcf_defend(s, &b, &lim, moves, &threat);
    ck_assert_int_gt(n, 0);
    ck_assert_int_eq(threat.status, VCF_WIN);
    bool first_four = false;
    for (int i = 0; i < n; i++)
        first_four |= moves[i] == board_xy(&b, 8, 5);
    ck_assert(first_four);
    check_defences(&b, moves, n, &(threat_check_t){.vcf = check, .vcf_lim = &lim});
    /* nothing to defend: black's turn with white to threaten nothing */
    board_pass(&b);
    ck_assert_int_eq(vcf_defend(s, &b, &lim, moves, NULL), -1);
    vcf_free(s);
    vcf_free(check);
}
END_TEST

/* White to move against two open threes of black (a VCF whichever one
 * white stops) has no defence. White's four at 3,8 (or 4,8) only puts the
 * VCF off: black blocks and white faces both threes again. A plain solve
 * after the four finds no VCF, since black's block is no four, so the
 * defence used to list both fours; vcf_solve_reply plays the block and
 * asks for white's defence. */
static const char TWO_THREES[] =
    ".........\n"
    ".........\n"
    "..XXX....\n"
    ".........\n"
    ".........\n"
    "..XXX....\n"
    ".........\n"
    ".........\n"
    "OOO......\n";

START_TEST(test_counter_four_puts_off)
{
    vcf_t *s = solver(), *check = solver();
    board_t b;
    board_from_diagram(&b, RULE_FREESTYLE, STONE_WHITE, TWO_THREES);
    int moves[BOARD_CELLS];
    vcf_limits_t lim = {.nodes = 100000};
    ck_assert_int_eq(vcf_defend(s, &b, &lim, moves, NULL), 0);
    check_defences(&b, moves, 0, &(threat_check_t){.vcf = check, .vcf_lim = &lim});
    for (int x = 3; x <= 4; x++) {
        board_t after = b;
        ck_assert_int_eq(board_play(&after, board_xy(&b, x, 8)), MOVE_OK);
        vcf_result_t r;
        ck_assert_int_eq(vcf_solve(s, &after, &lim, &r), VCF_NONE);
        ck_assert_int_eq(vcf_solve_reply(s, &after, &lim, &r), VCF_WIN);
        ck_assert_int_eq(r.nline, 1);
        ck_assert_int_eq(r.line[0], board_xy(&b, 7 - x, 8));   /* the block */
    }
    /* one three only: white stops it, and its four stays a defence too,
     * since white can still stop the three after black's block */
    b.cells[board_xy(&b, 2, 5)] = b.cells[board_xy(&b, 3, 5)] = b.cells[board_xy(&b, 4, 5)] =
        STONE_EMPTY;
    b.hash = board_hash_full(&b);
    int n = vcf_defend(s, &b, &lim, moves, NULL);
    ck_assert_int_gt(n, 0);
    bool four = false;
    for (int i = 0; i < n; i++)
        four |= moves[i] == board_xy(&b, 3, 8);
    ck_assert(four);
    check_defences(&b, moves, n, &(threat_check_t){.vcf = check, .vcf_lim = &lim});
    vcf_free(s);
    vcf_free(check);
}
END_TEST

START_TEST(test_bot_vcf)
{
    /* Wins a forced line: both sides bot:vcf from the two-four position,
     * black wins within the line's length (3 moves of black's). */
    board_t b;
    PLACE(&b, 15, RULE_FREESTYLE, STONE_BLACK, TWO_B, TWO_W);
    check_bot_plays("vcf", BOT_VCF, b, 6, RESULT_BLACK);
    uint64_t rng = 3;
    /* Blocks the opponent's VCF: white to move, its move leaves black none. */
    vcf_t *s = solver();
    PLACE(&b, 15, RULE_FREESTYLE, STONE_WHITE, TWO_B, TWO_W);
    b.cells[board_xy(&b, 2, 12)] = STONE_EMPTY;
    b.hash = board_hash_full(&b);
    int m = bot_vcf_move(&b, &rng, s);
    ck_assert_int_eq(board_play(&b, m), MOVE_OK);
    vcf_limits_t lim = {.nodes = 100000};
    ck_assert_int_eq(vcf_solve(s, &b, &lim, NULL), VCF_NONE);
    vcf_free(s);
}
END_TEST

/* Against greedy on 15x15 from the empty board the VCF bot wins most games
 * (it sees every forced line greedy walks into and blocks greedy's). */
START_TEST(test_bot_vcf_beats_greedy)
{
    int vcf_wins = 0, games = 6;
    for (int g = 0; g < games; g++) {
        board_t b;
        board_init(&b, 15, RULE_FREESTYLE);
        uint64_t rng = 100 + (uint64_t)g;
        int vcf_color = g % 2 ? STONE_WHITE : STONE_BLACK;
        while (!board_over(&b)) {
            bot_kind_t k = b.to_move == vcf_color ? BOT_VCF : BOT_GREEDY;
            int m = bot_move(k, &b, &rng);
            if (m == MOVE_NONE)
                break;
            ck_assert_int_eq(board_play(&b, m), MOVE_OK);
        }
        vcf_wins += b.result == (vcf_color == STONE_BLACK ? RESULT_BLACK : RESULT_WHITE);
    }
    ck_assert_int_ge(vcf_wins, 4);
}
END_TEST

/* ------------------------------------------------------ command line */

static int run_bin(const char *args, char *out, size_t outlen)
{
    return run_gomoku(args, NULL, CAPTURE_BOTH, out, outlen);
}

START_TEST(test_cli_rules_vcf)
{
    char out[4096];
    /* the two-four position as a move list, black to move */
    ck_assert_int_eq(run_bin("rules --vcf --moves '5,5 4,5 6,5 0,14 7,5 14,14 8,6 14,0 "
                             "8,7 2,12'", out, sizeof out), 0);
    ck_assert_msg(strstr(out, "vcf: win 2 fours: 8,5 9,5 ") != NULL, "%s", out);
    ck_assert_int_eq(run_bin("rules --vcf --moves '7,7 0,0'", out, sizeof out), 0);
    ck_assert_msg(strstr(out, "vcf: none\n") != NULL, "%s", out);
    /* white to move against it: the defences are listed */
    ck_assert_int_eq(run_bin("rules --vcf --moves '5,5 4,5 6,5 0,14 7,5 14,14 8,6 14,0 8,7'",
                             out, sizeof out), 0);
    ck_assert_msg(strstr(out, "vcf_opponent: win 2 fours") != NULL, "%s", out);
    ck_assert_msg(strstr(out, "vcf_defences: ") != NULL && strstr(out, " 8,5") != NULL, "%s",
                  out);
    /* budget: 1 node is not enough */
    ck_assert_int_eq(run_bin("rules --vcf --vcf-nodes 1 --moves '5,5 4,5 6,5 0,14 7,5 14,14 "
                             "8,6 14,0 8,7 2,12'", out, sizeof out), 0);
    ck_assert_msg(strstr(out, "vcf: unknown") != NULL, "%s", out);
    /* malformed positions and options: one clear line, exit 1 or 2 */
    ck_assert_int_eq(run_bin("rules --vcf --moves '7,7 zz'", out, sizeof out), 1);
    ck_assert_msg(strstr(out, "move 1 'zz' is not a move") != NULL, "%s", out);
    ck_assert_int_eq(run_bin("rules --vcf --moves '7,7 7,7'", out, sizeof out), 1);
    ck_assert_msg(strstr(out, "occupied") != NULL, "%s", out);
    ck_assert_int_eq(run_bin("rules --vcf --moves '7,7 99,1'", out, sizeof out), 1);
    ck_assert_int_eq(run_bin("rules --vcf --vcf-nodes -5 --moves '7,7'", out, sizeof out), 2);
    ck_assert_int_eq(run_bin("rules --vcf --vcf-nodes abc", out, sizeof out), 2);
    ck_assert_int_eq(run_bin("rules --vcf-nodes 100 --moves '7,7'", out, sizeof out), 2);
    ck_assert_msg(strstr(out, "--vcf-nodes needs --vcf") != NULL, "%s", out);
}
END_TEST

START_TEST(test_cli_bench_vcf)
{
    char out[4096];
    ck_assert_int_eq(run_bin("bench vcf --positions 20 --nodes 2000 --runs 1", out, sizeof out),
                     0);
    ck_assert_msg(strstr(out, "{\"bench\":\"vcf\"") == out, "%s", out);
    ck_assert_ptr_nonnull(strstr(out, "\"positions_per_s\":"));
    ck_assert_ptr_nonnull(strstr(out, "\"nodes_per_s\":"));
    ck_assert_ptr_nonnull(strstr(out, "\"solved\":"));
    ck_assert_int_eq(run_bin("bench vcf --positions 0", out, sizeof out), 2);
}
END_TEST

int main(void)
{
    Suite *su = suite_create("vcf");
    ADD_CASE(su, "vcf", 60, test_five_queries, test_immediate_five_and_game_over, test_two_fours,
             test_stop_flag_of_outer_query,
             test_counter_four_breaks_line, test_renju_black_four_on_forbidden_point,
             test_renju_white_forces_forbidden_block, test_long_vcf,
             test_random_against_brute_force, test_lines_incremental, test_four_at_with,
             test_defend, test_counter_four_puts_off,
             test_bot_vcf,
             test_bot_vcf_beats_greedy,
             test_cli_rules_vcf, test_cli_bench_vcf);
    return run_suite(su);
}
