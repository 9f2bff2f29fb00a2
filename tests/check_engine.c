/* Engine suite: rules (freestyle, standard, renju) on hand-verified
 * positions, win detection, draws, hash, symmetries, notation, bots, and
 * the `gomoku rules` / `gomoku play` commands through GOMOKU_BIN.
 *
 * Positions are ASCII diagrams placed at the top-left of a 15x15 board:
 * row i of the diagram is y = i, column j is x = j; 'X' black, 'O' white,
 * '.' empty, '*' the empty point under test. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/board.h"
#include "engine/bot.h"
#include "tests/testkit.h"

/* Set up a position with `to_move` to play; returns the '*' point or -1. */
static int setup(board_t *b, rule_t rule, int to_move, const char *diagram)
{
    board_init(b, BOARD_DEFAULT, rule);
    int star = -1, x = 0, y = 0;
    for (const char *s = diagram; *s; s++) {
        if (*s == '\n') {
            x = 0;
            y++;
            continue;
        }
        ck_assert_int_lt(x, b->size);
        int m = y * b->size + x++;
        if (*s == 'X' || *s == 'O') {
            b->cells[m] = *s == 'X' ? STONE_BLACK : STONE_WHITE;
            b->moves[b->nmoves++] = (int16_t)m;
        } else if (*s == '*') {
            star = m;
        }
    }
    b->to_move = (uint8_t)to_move;
    b->hash = board_hash_full(b);
    return star;
}

static forbid_t kind_of(const char *diagram)
{
    board_t b;
    int m = setup(&b, RULE_RENJU, STONE_BLACK, diagram);
    ck_assert_int_ge(m, 0);
    return board_forbidden_kind(&b, m);
}

/* Play "x,y x,y ..." from the empty board; asserts each move is legal. */
static void replay(board_t *b, rule_t rule, int size, const char *moves)
{
    board_init(b, size, rule);
    const char *s = moves;
    while (*s) {
        char tok[16];
        int n = 0, m;
        while (*s == ' ')
            s++;
        while (*s && *s != ' ' && n < 15)
            tok[n++] = *s++;
        tok[n] = '\0';
        if (!n)
            break;
        ck_assert_msg(move_parse(tok, size, &m), "bad move %s", tok);
        ck_assert_msg(board_play(b, m) == MOVE_OK, "move %s refused", tok);
    }
}

/* The '*' point of DIAGRAM, TO_MOVE to play, is a win: not forbidden, a
 * winning move, and playing it ends the game won by TO_MOVE. */
static void expect_win(rule_t rule, int to_move, const char *diagram)
{
    board_t b;
    int m = setup(&b, rule, to_move, diagram);
    ck_assert_int_eq(board_forbidden_kind(&b, m), FORBID_NONE);
    ck_assert(board_is_winning_move(&b, m));
    ck_assert_int_eq(board_play(&b, m), MOVE_OK);
    ck_assert_int_eq(b.result, to_move == STONE_BLACK ? RESULT_BLACK : RESULT_WHITE);
}

/* ---------- renju forbidden points ---------- */

START_TEST(renju_open_double_three)
{
    /* The point makes .XX*. on row 3 and X,X,* down column 3: two open threes, each can
     * become a straight four at a harmless point -> double-three. */
    ck_assert_int_eq(kind_of("..........\n"
                             "...X......\n"
                             "...X......\n"
                             ".XX*......\n"
                             "..........\n"
                             "..........\n"), FORBID_DOUBLE_THREE);
}
END_TEST

START_TEST(renju_three_blocked_one_end)
{
    /* Row 3: OXX* -- white closes the left end, so XXX can only become a
     * four closed on one side, never a straight four: not a three. The
     * column is a real three. One three: allowed. */
    ck_assert_int_eq(kind_of("..........\n"
                             "...X......\n"
                             "...X......\n"
                             "OXX*......\n"
                             "..........\n"
                             "..........\n"), FORBID_NONE);
    /* Both threes touch an edge (row 2 from x=0, column 2 from y=0): the
     * edge closes one end, so neither can become a straight four. */
    ck_assert_int_eq(kind_of("..X.......\n"
                             "..X.......\n"
                             "XX*.......\n"
                             "..........\n"
                             "..........\n"), FORBID_NONE);
}
END_TEST

START_TEST(renju_split_three)
{
    /* Row 4: .X.X*.. is a split three (B.BB): filling x=2 gives .XXXX. a
     * straight four. Column 4 is an open three. Double-three. */
    ck_assert_int_eq(kind_of("..........\n"
                             "..........\n"
                             "....X.....\n"
                             "....X.....\n"
                             ".X.X*.....\n"
                             "..........\n"
                             "..........\n"), FORBID_DOUBLE_THREE);
    /* Split with the gap on the other side: ..X*.X. on row 4 (fill x=4:
     * .XXXX.) plus the diagonal X(1,2) X(2,3) *: double-three. */
    ck_assert_int_eq(kind_of("..........\n"
                             "..........\n"
                             ".X........\n"
                             "..X.......\n"
                             "..X*.X....\n"
                             "..........\n"
                             "..........\n"), FORBID_DOUBLE_THREE);
}
END_TEST

START_TEST(renju_far_split_not_three)
{
    /* Row 4: X.X.* (x=1,3,5) is not a three: one more stone gives four
     * stones with a gap, never four in a row. With the open column three:
     * one three -> allowed. */
    ck_assert_int_eq(kind_of("..........\n"
                             "..........\n"
                             ".....X....\n"
                             ".....X....\n"
                             ".X.X.*....\n"
                             "..........\n"
                             "..........\n"), FORBID_NONE);
}
END_TEST

START_TEST(renju_double_four_one_line)
{
    /* Row 2: X.X*X.X -- filling x=1 or x=5 each makes exactly five with
     * different stones: two fours in one line = double-four. */
    ck_assert_int_eq(kind_of("..........\n"
                             "..........\n"
                             ".X.X*X.X..\n"
                             "..........\n"), FORBID_DOUBLE_FOUR);
    /* XXX.*.XXX on row 2: both gaps make five -> double-four. */
    ck_assert_int_eq(kind_of("..........\n"
                             "..........\n"
                             "XXX.*.XXX.\n"
                             "..........\n"), FORBID_DOUBLE_FOUR);
    /* Row 1: XX.X*.XX: x=2 makes five at 0..4, x=5 makes five at 3..7.
     * Double-four. */
    ck_assert_int_eq(kind_of("..........\n"
                             "XX.X*.XX..\n"
                             "..........\n"), FORBID_DOUBLE_FOUR);
}
END_TEST

START_TEST(renju_straight_four_is_one_four)
{
    /* Row 3: .XXX*. is a straight four (two completions, one four): allowed. */
    ck_assert_int_eq(kind_of("..........\n"
                             "..........\n"
                             "..........\n"
                             ".XXX*.....\n"
                             "..........\n"), FORBID_NONE);
}
END_TEST

START_TEST(renju_double_four_two_lines)
{
    /* Row 3: OXXX* -> a four (completes at x=5). Column 4: X at y=0..2 with
     * * at y=3 -> a four (completes at y=4; the edge closes y=-1). Two fours. */
    ck_assert_int_eq(kind_of("....X.....\n"
                             "....X.....\n"
                             "....X.....\n"
                             "OXXX*.....\n"
                             "..........\n"), FORBID_DOUBLE_FOUR);
}
END_TEST

START_TEST(renju_four_three_allowed)
{
    /* Row 3: OXXX* is a four; column 4 X,X above * is an open three.
     * Four-three is black's legal winning shape. */
    ck_assert_int_eq(kind_of("..........\n"
                             "....X.....\n"
                             "....X.....\n"
                             "OXXX*.....\n"
                             "..........\n"
                             "..........\n"), FORBID_NONE);
}
END_TEST

START_TEST(renju_overline)
{
    /* Row 2: XXX*XX -> six in a row: overline, forbidden. */
    ck_assert_int_eq(kind_of("..........\n"
                             "..........\n"
                             ".XXX*XX...\n"
                             "..........\n"), FORBID_OVERLINE);
    /* Seven: XXX*XXX. */
    ck_assert_int_eq(kind_of("..........\n"
                             "XXX*XXX...\n"
                             "..........\n"), FORBID_OVERLINE);
}
END_TEST

START_TEST(renju_five_beats_forbidden)
{
    /* Row 3: .XX*XX. is exactly five. Column 3 (X at y=1,2) and diagonal
     * (X at (1,1),(2,2)) would make a double-three, but five wins. */
    expect_win(RULE_RENJU, STONE_BLACK, "..........\n"
                                        ".X.X......\n"
                                        "..XX......\n"
                                        ".XX*XX....\n"
                                        "..........\n"
                                        "..........\n");
}
END_TEST

START_TEST(renju_five_with_overline_elsewhere)
{
    /* Row 3 exactly five through *, column 3 a six through *: the five
     * wins (five takes precedence over the overline). */
    expect_win(RULE_RENJU, STONE_BLACK, "...X......\n"
                                        "...X......\n"
                                        "...X......\n"
                                        ".XX*XX....\n"
                                        "...X......\n"
                                        "...X......\n"
                                        "..........\n");
}
END_TEST

START_TEST(renju_double_four_with_five)
{
    /* Row 1: XXXX* makes five; column 4 XXX* is a four as well: five wins. */
    ck_assert_int_eq(kind_of("..........\n"
                             "XXXX*.....\n"
                             "....X.....\n"
                             "....X.....\n"
                             "....X.....\n"
                             "..........\n"), FORBID_NONE);
}
END_TEST

/* The false double-three whose straight-four point is an overline point,
 * a double-four or a five, and the real double-three control, are
 * check_renju's textbook diagrams (checked there against the engine, the
 * independent checker, the forbidden-point list and board_check_move). */
START_TEST(renju_white_unrestricted)
{
    /* White's double-three and overline are fine; white's overline wins. */
    board_t b;
    int m = setup(&b, RULE_RENJU, STONE_WHITE, "..........\n"
                                               "...O......\n"
                                               "...O......\n"
                                               ".OO*......\n"
                                               "..........\n");
    ck_assert(!board_is_forbidden(&b, m));
    ck_assert_int_eq(board_check_move(&b, m), MOVE_OK);
    expect_win(RULE_RENJU, STONE_WHITE, "..........\n"
                                        ".OOO*OO...\n"
                                        "..........\n");
}
END_TEST

START_TEST(renju_black_overline_refused)
{
    board_t b;
    int m = setup(&b, RULE_RENJU, STONE_BLACK, "..........\n"
                                               ".XXX*XX...\n"
                                               "..........\n");
    ck_assert(!board_is_winning_move(&b, m));
    ck_assert_int_eq(board_check_move(&b, m), MOVE_FORBIDDEN);
    ck_assert_int_eq(board_play(&b, m), MOVE_FORBIDDEN);
    ck_assert_int_eq(b.cells[m], STONE_EMPTY);
    /* Occupied and other rules: never forbidden. */
    ck_assert(!board_is_forbidden(&b, 1 * 15 + 1));
    b.rule = RULE_STANDARD;
    ck_assert(!board_is_forbidden(&b, m));
}
END_TEST

START_TEST(renju_forbidden_list_by_replay)
{
    /* Black 7,7 8,7 7,8 8,9 (white far away): 6,7 completes the row three
     * .XXX and the diagonal 6,7-7,8-8,9: the only double-three point. */
    board_t b;
    replay(&b, RULE_RENJU, 15, "7,7 0,0 8,7 0,2 7,8 0,4 8,9 0,6");
    int pts[BOARD_CELLS];
    int n = board_forbidden_points(&b, pts);
    ck_assert_int_eq(n, 1);
    ck_assert_int_eq(pts[0], 7 * 15 + 6);
    ck_assert_int_eq(board_play(&b, pts[0]), MOVE_FORBIDDEN);
    /* white to move: no forbidden points */
    board_play(&b, 14 * 15 + 14);
    ck_assert_int_eq(board_forbidden_points(&b, pts), 0);
}
END_TEST

START_TEST(renju_split_four_shapes)
{
    /* Row 4: X.XX* -- filling x=1 makes five at 0..4: a four, not a
     * three. Column 4 is an open three. Four-three: allowed. */
    ck_assert_int_eq(kind_of("..........\n"
                             "..........\n"
                             "....X.....\n"
                             "....X.....\n"
                             "X.XX*.....\n"
                             "..........\n"
                             "..........\n"), FORBID_NONE);
    /* Row 4: X.XX*.X -- x=1 makes five at 0..4 and x=5 makes five at
     * 2..6: two fours in the row (B.BBB.B), a double-four. */
    ck_assert_int_eq(kind_of("..........\n"
                             "..........\n"
                             "....X.....\n"
                             "....X.....\n"
                             "X.XX*.X...\n"
                             "..........\n"
                             "..........\n"), FORBID_DOUBLE_FOUR);
}
END_TEST

START_TEST(renju_three_next_to_overline_end)
{
    /* Row 3: X.XX* alone: one four (x=1 makes 0..4), nothing else. */
    ck_assert_int_eq(kind_of("..........\n"
                             "..........\n"
                             "..........\n"
                             "X.XX*.....\n"
                             "..........\n"), FORBID_NONE);
    /* Row 3: X..XX* plus the column three. The X at x=0 spoils the
     * straight four 2..5 (its end x=1 would make six), but x=6 gives the
     * straight four 3..6 (ends 2 and 7, then 1 and 8 not black): the row is
     * a real three. Double-three. */
    ck_assert_int_eq(kind_of("..........\n"
                             ".....X....\n"
                             ".....X....\n"
                             "X..XX*....\n"
                             "..........\n"
                             "..........\n"), FORBID_DOUBLE_THREE);
    /* Row 3: XX.XX* plus the column three. x=2 makes six, not five, so
     * the row is no four; x=6 makes 3..6 whose end x=2 would make seven,
     * so no straight four either: not a three. One three: allowed. */
    ck_assert_int_eq(kind_of("..........\n"
                             ".....X....\n"
                             ".....X....\n"
                             "XX.XX*....\n"
                             "..........\n"
                             "..........\n"), FORBID_NONE);
}
END_TEST

/* ---------- freestyle / standard ---------- */

START_TEST(freestyle_five_and_six_win)
{
    expect_win(RULE_FREESTYLE, STONE_BLACK, ".XX*XX...\n");
    expect_win(RULE_FREESTYLE, STONE_BLACK, ".XXX*XX...\n");
    expect_win(RULE_FREESTYLE, STONE_WHITE, ".OOO*OO...\n");
    /* four is not five */
    board_t b;
    int m = setup(&b, RULE_FREESTYLE, STONE_BLACK, ".XX*X....\n");
    ck_assert(!board_is_winning_move(&b, m));
    /* double-three is fine in freestyle */
    m = setup(&b, RULE_FREESTYLE, STONE_BLACK, "..........\n...X......\n...X......\n.XX*......\n");
    ck_assert_int_eq(board_check_move(&b, m), MOVE_OK);
}
END_TEST

START_TEST(standard_exact_five)
{
    expect_win(RULE_STANDARD, STONE_BLACK, ".XX*XX...\n");
    /* overline does not win for black ... */
    board_t b;
    int m = setup(&b, RULE_STANDARD, STONE_BLACK, ".XXX*XX...\n");
    ck_assert(!board_is_winning_move(&b, m));
    ck_assert_int_eq(board_play(&b, m), MOVE_OK);
    ck_assert_int_eq(b.result, RESULT_NONE);
    /* ... nor for white */
    m = setup(&b, RULE_STANDARD, STONE_WHITE, "OOOOO*O...\n");
    ck_assert_int_eq(board_play(&b, m), MOVE_OK);
    ck_assert_int_eq(b.result, RESULT_NONE);
    /* six in one line, exactly five in another: the five wins */
    m = setup(&b, RULE_STANDARD, STONE_WHITE, "...O......\n"
                                              "...O......\n"
                                              "OOO*OO....\n"
                                              "...O......\n"
                                              "...O......\n");
    ck_assert_int_eq(board_play(&b, m), MOVE_OK);
    ck_assert_int_eq(b.result, RESULT_WHITE);
}
END_TEST

START_TEST(win_at_edges_and_corners)
{
    static const struct {
        rule_t rule;
        int size;
        const char *moves;
        result_t result;
    } games[] = {
        /* row 0 from the corner */
        {RULE_STANDARD, 15, "0,0 0,5 1,0 1,5 2,0 2,5 3,0 3,5 4,0", RESULT_BLACK},
        /* main diagonal into the corner (0,0) */
        {RULE_FREESTYLE, 15, "4,4 9,9 3,3 9,10 2,2 9,11 1,1 9,12 0,0", RESULT_BLACK},
        /* anti-diagonal into the corner (14,0), white wins */
        {RULE_RENJU, 15, "7,7 14,0 7,9 13,1 9,7 12,2 5,11 11,3 3,12 10,4", RESULT_WHITE},
        /* right edge column, bottom corner (14,14) */
        {RULE_FREESTYLE, 15, "14,14 0,0 14,13 0,2 14,12 0,4 14,11 0,6 14,10", RESULT_BLACK},
        /* bottom row of a 5x5 board, the whole row */
        {RULE_STANDARD, 5, "0,4 0,0 1,4 1,0 2,4 2,0 3,4 3,0 4,4", RESULT_BLACK},
        /* anti-diagonal of a 20x20 board through the lower-left corner */
        {RULE_FREESTYLE, 20, "0,19 10,10 1,18 10,11 2,17 10,12 3,16 10,13 4,15", RESULT_BLACK},
        /* four at the edge is not five */
        {RULE_FREESTYLE, 15, "0,0 5,5 0,1 5,6 0,2 5,7 0,3", RESULT_NONE},
    };
    board_t b;
    for (size_t i = 0; i < sizeof games / sizeof games[0]; i++) {
        replay(&b, games[i].rule, games[i].size, games[i].moves);
        ck_assert_msg(b.result == games[i].result, "%s: result %d, want %d", games[i].moves,
                      (int)b.result, (int)games[i].result);
    }
    /* a game that is over refuses moves */
    replay(&b, RULE_FREESTYLE, 15, "0,0 5,5 0,1 5,6 0,2 5,7 0,3 5,8 0,4");
    ck_assert_int_eq(board_check_move(&b, 100), MOVE_GAME_OVER);
}
END_TEST

START_TEST(draw_full_board)
{
    /* 5x5 filled as
     *   XXOOX / OOXXO / XXOOX / OOXXO / XXOOX
     * no line holds five of one colour (rows alternate, columns alternate,
     * diagonals X O O X X and X X O O X): the 25th move draws. */
    static const char *rows[5] = {"XXOOX", "OOXXO", "XXOOX", "OOXXO", "XXOOX"};
    for (int rule = RULE_FREESTYLE; rule <= RULE_STANDARD; rule++) {
        int xs[13], os[12], nx = 0, no = 0;
        for (int y = 0; y < 5; y++)
            for (int x = 0; x < 5; x++)
                *(rows[y][x] == 'X' ? &xs[nx++] : &os[no++]) = y * 5 + x;
        ck_assert_int_eq(nx, 13);
        board_t b;
        board_init(&b, 5, (rule_t)rule);
        for (int i = 0; i < 25; i++) {
            ck_assert_int_eq(b.result, RESULT_NONE);
            ck_assert_int_eq(board_play(&b, i % 2 ? os[i / 2] : xs[i / 2]), MOVE_OK);
        }
        ck_assert_int_eq(b.result, RESULT_DRAW);
        ck_assert_int_eq(board_check_move(&b, 0), MOVE_GAME_OVER);
    }
}
END_TEST

START_TEST(move_status_and_undo)
{
    board_t b;
    board_init(&b, 9, RULE_FREESTYLE);
    ck_assert_int_eq(board_play(&b, -1), MOVE_OFF_BOARD);
    ck_assert_int_eq(board_play(&b, 81), MOVE_OFF_BOARD);
    ck_assert_int_eq(board_play(&b, 40), MOVE_OK);
    ck_assert_int_eq(board_play(&b, 40), MOVE_OCCUPIED);
    ck_assert_int_eq(b.to_move, STONE_WHITE);
    ck_assert_int_eq(b.last, 40);
    ck_assert(board_undo(&b));
    ck_assert(!board_undo(&b));
    ck_assert_int_eq(b.to_move, STONE_BLACK);
    ck_assert_int_eq(b.last, MOVE_NONE);
    ck_assert_int_eq(b.hash, 0);
    /* undo after a win reopens the game */
    replay(&b, RULE_FREESTYLE, 9, "0,0 8,8 1,0 8,7 2,0 8,6 3,0 8,5 4,0");
    ck_assert_int_eq(b.result, RESULT_BLACK);
    board_undo(&b);
    ck_assert_int_eq(b.result, RESULT_NONE);
    ck_assert_int_eq(b.to_move, STONE_BLACK);
    ck_assert_int_eq(b.last, 5 * 9 + 8);
    ck_assert_str_eq(rule_name(RULE_RENJU), "renju");
    rule_t r;
    ck_assert(rule_parse("standard", &r) && r == RULE_STANDARD);
    ck_assert(!rule_parse("gomoku", &r));
}
END_TEST

/* ---------- hash and symmetries ---------- */

START_TEST(hash_incremental_matches_full)
{
    int games = asan() ? 30 : 300;
    uint64_t rng = 42;
    for (int g = 0; g < games; g++) {
        board_t b;
        int size = BOARD_MIN + g % (BOARD_MAX - BOARD_MIN + 1);
        board_init(&b, size, (rule_t)(g % RULE_COUNT));
        while (!board_over(&b)) {
            int m = bot_random_move(&b, &rng);
            if (m == MOVE_NONE)
                break;
            ck_assert_int_eq(board_play(&b, m), MOVE_OK);
            ck_assert_uint_eq(b.hash, board_hash_full(&b));
        }
        while (board_undo(&b))
            ck_assert_uint_eq(b.hash, board_hash_full(&b));
        ck_assert_uint_eq(b.hash, 0);
    }
    /* transposition: same stones, same side to move -> same hash */
    board_t a, c;
    replay(&a, RULE_FREESTYLE, 15, "7,7 8,8 6,6 9,9");
    replay(&c, RULE_FREESTYLE, 15, "6,6 9,9 7,7 8,8");
    ck_assert_uint_eq(a.hash, c.hash);
    replay(&c, RULE_FREESTYLE, 15, "6,6 9,9 7,7");
    ck_assert_uint_ne(a.hash, c.hash);
}
END_TEST

START_TEST(symmetry_round_trips)
{
    for (int size = BOARD_MIN; size <= BOARD_MAX; size++)
        for (int s = 0; s < SYM_COUNT; s++) {
            int seen[BOARD_CELLS] = {0};
            for (int m = 0; m < size * size; m++) {
                int t = sym_point(s, m, size);
                ck_assert(t >= 0 && t < size * size);
                ck_assert_int_eq(sym_point(sym_inverse(s), t, size), m);
                seen[t]++;
            }
            for (int m = 0; m < size * size; m++)
                ck_assert_int_eq(seen[m], 1);   /* a permutation */
        }
    /* the 8 images of a generic point are distinct */
    int img[SYM_COUNT];
    for (int s = 0; s < SYM_COUNT; s++) {
        img[s] = sym_point(s, 1 * 15 + 3, 15);
        for (int k = 0; k < s; k++)
            ck_assert_int_ne(img[s], img[k]);
    }
    ck_assert_int_eq(sym_point(0, 17, 15), 17);
    ck_assert_int_eq(sym_point(2, 0, 15), 224);   /* 180 degrees: corner to corner */
    ck_assert_int_eq(sym_point(1, MOVE_NONE, 15), MOVE_NONE);
}
END_TEST

START_TEST(symmetry_transform_boards)
{
    uint64_t rng = 7;
    int games = asan() ? 6 : 30;
    for (int g = 0; g < games; g++) {
        board_t b;
        board_init(&b, 15, (rule_t)(g % RULE_COUNT));
        int plies = 20 + g * 3;
        for (int i = 0; i < plies && !board_over(&b); i++) {
            int m = bot_random_move(&b, &rng);
            if (m == MOVE_NONE)
                break;
            board_play(&b, m);
        }
        for (int s = 0; s < SYM_COUNT; s++) {
            board_t t, back;
            board_transform(&t, &b, s);
            ck_assert_int_eq(t.result, b.result);
            ck_assert_int_eq(t.to_move, b.to_move);
            ck_assert_int_eq(t.nmoves, b.nmoves);
            ck_assert_uint_eq(t.hash, board_hash_full(&t));
            for (int m = 0; m < 225; m++) {
                int tm = sym_point(s, m, 15);
                ck_assert_int_eq(t.cells[tm], b.cells[m]);
                ck_assert_int_eq(board_check_move(&t, tm), board_check_move(&b, m));
            }
            board_transform(&back, &t, sym_inverse(s));
            ck_assert_uint_eq(back.hash, b.hash);
            ck_assert(memcmp(back.cells, b.cells, sizeof b.cells) == 0);
        }
    }
    /* a renju forbidden point maps to a forbidden point */
    board_t b, t;
    replay(&b, RULE_RENJU, 15, "7,7 0,0 8,7 0,2 7,8 0,4 8,9 0,6");
    for (int s = 0; s < SYM_COUNT; s++) {
        board_transform(&t, &b, s);
        ck_assert(board_is_forbidden(&t, sym_point(s, 7 * 15 + 6, 15)));
    }
}
END_TEST

/* ---------- notation ---------- */

START_TEST(notation_round_trips)
{
    int m;
    ck_assert(move_parse("7,7", 15, &m) && m == 7 * 15 + 7);
    ck_assert(move_parse("h8", 15, &m) && m == 7 * 15 + 7);
    ck_assert(move_parse("H8", 15, &m) && m == 7 * 15 + 7);
    ck_assert(move_parse("a1", 15, &m) && m == 14 * 15);
    ck_assert(move_parse("o15", 15, &m) && m == 14);
    ck_assert(move_parse(" 3, 4 ", 15, &m) && m == 4 * 15 + 3);
    ck_assert(move_parse("t20", 20, &m) && m == 19);
    char buf[16];
    move_format_xy(7 * 15 + 7, 15, buf, sizeof buf);
    ck_assert_str_eq(buf, "7,7");
    move_format_alpha(14 * 15, 15, buf, sizeof buf);
    ck_assert_str_eq(buf, "a1");
    for (int size = BOARD_MIN; size <= BOARD_MAX; size++)
        for (int p = 0; p < size * size; p++) {
            move_format_xy(p, size, buf, sizeof buf);
            ck_assert(move_parse(buf, size, &m) && m == p);
            move_format_alpha(p, size, buf, sizeof buf);
            ck_assert(move_parse(buf, size, &m) && m == p);
        }
}
END_TEST

START_TEST(notation_rejects_bad_text)
{
    static const char *bad[] = {"", " ", "7", "7,", ",7", "15,0", "0,15", "-1,2", "7,7,7",
                                "7;7", "zz", "p1", "a0", "a16", "h8x", "h", "8h", "7,7a",
                                "1234,1", "a 8", "\xff", "h-8"};
    int m = -5;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        ck_assert_msg(!move_parse(bad[i], 15, &m), "accepted '%s'", bad[i]);
    ck_assert_int_eq(m, -5);
    ck_assert(!move_parse(NULL, 15, &m));
    ck_assert(!move_parse("f1", 5, &m));   /* column f on a 5x5 board */
}
END_TEST

/* ---------- bots ---------- */

/* bot:greedy on the diagram (side to move given) plays point a, or b when
 * b >= 0 (either is right). */
static void expect_greedy(rule_t rule, stone_t side, const char *diagram, int a, int b2,
                          uint64_t seed)
{
    board_t b;
    setup(&b, rule, side, diagram);
    uint64_t rng = seed;
    int m = bot_greedy_move(&b, &rng);
    ck_assert_msg(m == a || (b2 >= 0 && m == b2), "greedy played %d, not %d or %d", m, a, b2);
}

START_TEST(bot_greedy_takes_win)
{
    /* black has an open three and a four: greedy completes the five. */
    expect_greedy(RULE_FREESTYLE, STONE_BLACK, "..........\n"
                                               ".OXXXX....\n"
                                               "..OOO.....\n"
                                               "..........\n", 1 * 15 + 6, -1, 3);
    /* renju, white to move with an open four: either end wins, although
     * black threatens five at (4,1). */
    expect_greedy(RULE_RENJU, STONE_WHITE, "..........\n"
                                           "..XX.XX...\n"
                                           "..OOOO....\n", 2 * 15 + 1, 2 * 15 + 6, 3);
}
END_TEST

START_TEST(bot_greedy_blocks_four)
{
    /* white (to move) must block black's four at (5,1). */
    expect_greedy(RULE_FREESTYLE, STONE_WHITE, "..........\n"
                                               "OXXXX.....\n"
                                               "...O......\n", 1 * 15 + 5, -1, 5);
    /* split four X.XXX: the gap */
    expect_greedy(RULE_STANDARD, STONE_WHITE, "..........\n"
                                              "..X.XXX...\n"
                                              "...O..O...\n", 1 * 15 + 3, -1, 5);
    /* blocks an open three before it becomes an open four */
    expect_greedy(RULE_FREESTYLE, STONE_WHITE, "...............\n"
                                               "...............\n"
                                               "....XXX........\n"
                                               "...............\n"
                                               "..O............\n", 2 * 15 + 3, 2 * 15 + 7, 5);
}
END_TEST

START_TEST(bot_renju_black_avoids_forbidden)
{
    /* Black's best-looking point 6,7 is a double-three: greedy must not
     * play it, and random never plays a forbidden point. */
    board_t b;
    replay(&b, RULE_RENJU, 15, "7,7 0,0 8,7 0,2 7,8 0,4 8,9 0,6");
    uint64_t rng = 1;
    for (int i = 0; i < 200; i++) {
        ck_assert(!board_is_forbidden(&b, bot_greedy_move(&b, &rng)));
        ck_assert(!board_is_forbidden(&b, bot_random_move(&b, &rng)));
    }
}
END_TEST

/* Plays greedy against random; returns greedy's wins. */
static int greedy_vs_random(int games, rule_t rule, uint64_t seed)
{
    int wins = 0;
    uint64_t rng = seed;
    for (int g = 0; g < games; g++) {
        board_t b;
        board_init(&b, 15, rule);
        int greedy_color = g % 2 ? STONE_WHITE : STONE_BLACK;
        while (!board_over(&b)) {
            int m = b.to_move == greedy_color ? bot_greedy_move(&b, &rng)
                                              : bot_random_move(&b, &rng);
            if (m == MOVE_NONE)
                break;
            ck_assert_int_eq(board_play(&b, m), MOVE_OK);
        }
        wins += b.result == (greedy_color == STONE_BLACK ? RESULT_BLACK : RESULT_WHITE);
    }
    return wins;
}

START_TEST(bot_greedy_beats_random)
{
    int games = asan() ? 20 : 100;
    for (int rule = 0; rule < RULE_COUNT; rule++) {
        int w = greedy_vs_random(games, (rule_t)rule, 11 + rule);
        ck_assert_msg(w * 100 >= 90 * games, "%s: greedy won only %d of %d",
                      rule_name((rule_t)rule), w, games);
    }
}
END_TEST

START_TEST(bot_deterministic_per_seed)
{
    board_t a, b;
    for (int k = 0; k < 2; k++) {
        board_t *p = k ? &b : &a;
        board_init(p, 15, RULE_STANDARD);
        uint64_t rng = 99;
        for (int i = 0; i < 30 && !board_over(p); i++)
            board_play(p, bot_greedy_move(p, &rng));
    }
    ck_assert_int_eq(a.nmoves, b.nmoves);
    ck_assert(memcmp(a.moves, b.moves, sizeof a.moves[0] * a.nmoves) == 0);
    bot_kind_t k;
    ck_assert(bot_parse("greedy", &k) && k == BOT_GREEDY);
    ck_assert(!bot_parse("smart", &k));
}
END_TEST

/* ---------- the program ---------- */

/* Runs `GOMOKU_BIN args` (with stdin from `input` when not NULL); returns
 * the exit status and fills out with stdout (and stderr when merge). */
static int run_bin(const char *args, const char *input, int merge, char *out, size_t outlen)
{
    return run_gomoku(args, input, merge ? CAPTURE_BOTH : CAPTURE_OUT, out, outlen);
}

START_TEST(program_rules_output)
{
    static char out[1 << 16];
    ck_assert_int_eq(run_bin("rules --rule renju --moves '7,7 0,0 8,7 0,2 7,8 0,4 8,9 0,6'",
                             NULL, 0, out, sizeof out), 0);
    ck_assert_str_eq(out, "to_move: black\nwinner: none\nforbidden: 6,7\n");
    ck_assert_int_eq(run_bin("rules --rule standard --moves 'h8 a1 i8 a2 j8 a3 k8 a4 l8'",
                             NULL, 0, out, sizeof out), 0);
    ck_assert_str_eq(out, "to_move: white\nwinner: black\nforbidden:\n");
    ck_assert_int_eq(run_bin("rules", NULL, 0, out, sizeof out), 0);
    ck_assert_str_eq(out, "to_move: black\nwinner: none\nforbidden:\n");
    ck_assert_int_eq(run_bin("rules --size 5 --moves '0,0 0,1 1,0 1,1 2,0 2,1 3,0 3,1 4,0'",
                             NULL, 0, out, sizeof out), 0);
    ck_assert_str_eq(out, "to_move: white\nwinner: black\nforbidden:\n");
}
END_TEST

START_TEST(program_rules_errors)
{
    static char out[1 << 16];
    ck_assert_int_eq(run_bin("rules --moves '7,7 8,8 7,7'", NULL, 1, out, sizeof out), 1);
    ck_assert_msg(strstr(out, "move 2") && strstr(out, "occupied"), "got: %s", out);
    ck_assert_ptr_eq(strchr(out, '\n'), out + strlen(out) - 1);   /* one line */
    ck_assert_int_eq(run_bin("rules --moves '7,7 15,0'", NULL, 1, out, sizeof out), 1);
    ck_assert_msg(strstr(out, "move 1"), "got: %s", out);
    ck_assert_int_eq(run_bin("rules --moves 'q99'", NULL, 1, out, sizeof out), 1);
    ck_assert_msg(strstr(out, "move 0"), "got: %s", out);
    ck_assert_int_eq(run_bin("rules --rule renju --moves '7,7 0,0 8,7 0,2 7,8 0,4 8,9 0,6 6,7'",
                             NULL, 1, out, sizeof out), 1);
    ck_assert_msg(strstr(out, "move 8") && strstr(out, "double-three"), "got: %s", out);
    ck_assert_int_eq(run_bin("rules --moves '0,0 1,0 0,1 1,1 0,2 1,2 0,3 1,3 0,4 5,5'",
                             NULL, 1, out, sizeof out), 1);
    ck_assert_msg(strstr(out, "move 9") && strstr(out, "over"), "got: %s", out);
    ck_assert_int_eq(run_bin("rules --rule gomoku", NULL, 1, out, sizeof out), 2);
    ck_assert_int_eq(run_bin("rules --size 4", NULL, 1, out, sizeof out), 2);
    ck_assert_int_eq(run_bin("rules --help", NULL, 0, out, sizeof out), 0);
    ck_assert(strstr(out, "usage:") != NULL);
}
END_TEST

START_TEST(program_play_scripted)
{
    static char out[1 << 18];
    /* bot against bot to the end */
    ck_assert_int_eq(run_bin("play --black bot:greedy --white bot:random --size 9 --seed 3",
                             NULL, 0, out, sizeof out), 0);
    ck_assert_msg(strstr(out, "result: black wins"), "got: %s", out);
    /* a person through a pipe: bad text, occupied, undo, then quit */
    ck_assert_int_eq(run_bin("play --white bot:greedy --size 9",
                             "e5\\nzz\\ne5\\nundo\\nundo\\nc3\\nquit\\n", 0, out, sizeof out), 0);
    ck_assert_msg(strstr(out, "move 1: black e5 (4,4)"), "got: %s", out);
    ck_assert_msg(strstr(out, "refused: 'zz' is not a move"), "got: %s", out);
    ck_assert_msg(strstr(out, "refused: e5 is occupied"), "got: %s", out);
    ck_assert_msg(strstr(out, "undone: back to move 1"), "got: %s", out);
    ck_assert_msg(strstr(out, "nothing to undo"), "got: %s", out);
    ck_assert_msg(strstr(out, "move 1: black c3 (2,6)"), "got: %s", out);
    ck_assert_msg(strstr(out, "result: none (quit)"), "got: %s", out);
    /* renju: a forbidden point is refused with its kind */
    ck_assert_int_eq(run_bin("play --black human --white human --rule renju",
                             "7,7\\n0,0\\n8,7\\n0,2\\n7,8\\n0,4\\n8,9\\n0,6\\n6,7\\nquit\\n",
                             0, out, sizeof out), 0);
    ck_assert_msg(strstr(out, "refused: 6,7 is forbidden for black in renju (double-three)"),
                  "got: %s", out);
    /* --hint: a suggestion before each of the person's moves, and their
     * winning line of fours once black has an open three (d5 or h5) */
    ck_assert_int_eq(run_bin("play --white bot:random --size 9 --hint --seed 1",
                             "e5\\nf5\\ng5\\nquit\\n", 0, out, sizeof out), 0);
    ck_assert_msg(strstr(out, "hint for you (black): e5"), "got: %s", out);
    ck_assert_msg(strstr(out, "your VCF (1 four): d5") || strstr(out, "your VCF (1 four): h5"),
                  "got: %s", out);
    /* a model player's view after its move: win rate, visits, best line */
    const char *src = getenv("GOMOKU_SRC");
    ck_assert(src != NULL);
    char args[1024];
    snprintf(args, sizeof args, "play --model %s/models/freestyle9-2x32.gzm --size 9 --visits 40 "
             "--device cpu --quiet", src);
    ck_assert_int_eq(run_bin(args, "e5\\nquit\\n", 0, out, sizeof out), 0);
    ck_assert_msg(strstr(out, "engine (white) ") && strstr(out, "% win, 40 visits, best line: "),
                  "got: %s", out);
    /* unknown bot: usage error */
    ck_assert_int_eq(run_bin("play --white bot:smart", NULL, 1, out, sizeof out), 2);
    ck_assert_msg(strstr(out, "bot:random, bot:greedy"), "got: %s", out);
}
END_TEST

START_TEST(program_bench_rules)
{
    static char out[1 << 14];
    ck_assert_int_eq(run_bin("bench rules --runs 1 --seconds 0.05", NULL, 0, out, sizeof out), 0);
    for (int r = 0; r < RULE_COUNT; r++) {
        char key[64];
        snprintf(key, sizeof key, "\"rule\":\"%s\"", rule_name((rule_t)r));
        ck_assert_msg(strstr(out, key), "no %s in %s", key, out);
    }
    ck_assert(strstr(out, "\"moves_per_s\":") != NULL);
}
END_TEST

/* The threat map (only the lines with two other stones near) is
 * board_threat_at at every point, for both colours, under each rule, on
 * positions of random moves near the centre; and each threat class shows
 * up somewhere in them. */
START_TEST(threat_map_matches_point_query)
{
    uint64_t st = 4242;
    int seen[THREAT_COUNT] = {0};
    for (int g = 0; g < 60; g++) {
        board_t b;
        int size = g % 5 == 4 ? 9 : 15;
        board_init(&b, size, (rule_t)(g % RULE_COUNT));
        int want = 8 + g;
        for (int tries = 0; b.nmoves < want && tries < 40 * want && !board_over(&b); tries++) {
            st = st * 6364136223846793005ull + 1442695040888963407ull;
            int r = 2 + b.nmoves / 4, c = size / 2;
            int x = c - r + (int)((st >> 33) % (uint64_t)(2 * r + 1));
            int y = c - r + (int)((st >> 45) % (uint64_t)(2 * r + 1));
            if (x >= 0 && y >= 0 && x < size && y < size)
                board_play(&b, board_xy(&b, x, y));
        }
        for (int color = STONE_BLACK; color <= STONE_WHITE; color++) {
            uint8_t map[BOARD_CELLS];
            board_threat_map(&b, color, map);
            for (int m = 0; m < size * size; m++) {
                threat_t t = board_threat_at(&b, m, color);
                ck_assert_msg(map[m] == t, "game %d colour %d point %d: map %d, query %d", g,
                              color, m, map[m], t);
                seen[t]++;
            }
        }
    }
    for (int t = THREAT_THREE; t <= THREAT_FIVE; t++)
        ck_assert_msg(seen[t] > 0, "class %d never seen", t);
    ck_assert_int_eq(seen[THREAT_TWO] + seen[THREAT_OPEN_TWO], 0);   /* twos are not looked for */
}
END_TEST

static Suite *engine_suite(void)
{
    Suite *s = suite_create("engine");
    ADD_CASE(s, "renju", -1, renju_open_double_three, renju_three_blocked_one_end,
             renju_split_three, renju_far_split_not_three, renju_double_four_one_line,
             renju_straight_four_is_one_four, renju_double_four_two_lines, renju_four_three_allowed,
             renju_overline, renju_five_beats_forbidden, renju_five_with_overline_elsewhere,
             renju_double_four_with_five,
             renju_white_unrestricted, renju_black_overline_refused, renju_forbidden_list_by_replay,
             renju_split_four_shapes, renju_three_next_to_overline_end);

    ADD_CASE(s, "board", 60, freestyle_five_and_six_win, standard_exact_five,
             win_at_edges_and_corners, draw_full_board, move_status_and_undo,
             hash_incremental_matches_full, symmetry_round_trips, symmetry_transform_boards,
             notation_round_trips, notation_rejects_bad_text);

    ADD_CASE(s, "bots", 120, bot_greedy_takes_win, bot_greedy_blocks_four,
             bot_renju_black_avoids_forbidden, bot_greedy_beats_random, bot_deterministic_per_seed,
             threat_map_matches_point_query);

    ADD_CASE(s, "program", 60, program_rules_output, program_rules_errors, program_play_scripted,
             program_bench_rules);
    return s;
}

int main(void)
{
    return run_suite(engine_suite());
}
