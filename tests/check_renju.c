/* Renju suite: an independent reference for black's forbidden points,
 * written straight from the rule text, cross-checked against the engine
 * (engine/renju.c through board_forbidden_kind / board_check_move) on
 * textbook diagrams, on random tactical positions and in random games.
 *
 * The rule, as the reference reads it (p: the point black plays):
 *   five       exactly five black in a row through p; never forbidden;
 *   overline   six or more in a row through p;
 *   four       a line through p where one more stone makes a five that
 *              contains p; fours are counted by their stones, so
 *              .XXXX. is one four and X.XXX.X two;
 *   straight four  four in a row with both ends empty, each end making
 *              exactly five;
 *   three      a line through p where one more stone q makes a straight
 *              four containing p and q, provided q makes no five and q is
 *              not itself forbidden, judged with p on the board (the
 *              reference recurses as deep as that takes);
 *   verdict    five beats everything; else overline; else two or more
 *              fours: double-four; else threes in two or more lines:
 *              double-three; else allowed.
 * It reads only board_t's cells and size and shares no code with the
 * engine's line scanner. */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/board.h"
#include "util/util.h"
#include "tests/testkit.h"

static const int ref_dx[4] = {1, 0, 1, 1};
static const int ref_dy[4] = {0, 1, 1, -1};

#define REF_FIVE (-1)   /* ref_verdict: p makes exactly five */
#define REF_OFF (-1)    /* ref_cell: off the board */

/* Counters the reference keeps for the closing figures. */
static long ref_deep_calls;   /* recursive checks of straight-four points */
static int ref_max_depth;

/* The cell k steps from p in direction d, or REF_OFF. */
static int ref_cell(const board_t *b, int p, int d, int k)
{
    int x = p % b->size + k * ref_dx[d], y = p / b->size + k * ref_dy[d];
    if (x < 0 || y < 0 || x >= b->size || y >= b->size)
        return REF_OFF;
    return b->cells[y * b->size + x];
}

static int ref_point(const board_t *b, int p, int d, int k)
{
    return p + k * (ref_dy[d] * b->size + ref_dx[d]);
}

static bool ref_black(const board_t *b, int p, int d, int k)
{
    return ref_cell(b, p, d, k) == STONE_BLACK;
}

/* Are the n cells from offset s on all black? */
static bool ref_all_black(const board_t *b, int p, int d, int s, int n)
{
    for (int k = s; k < s + n; k++)
        if (!ref_black(b, p, d, k))
            return false;
    return true;
}

/* With p black: is there exactly five (a window of five black cells
 * through p, the cells beside it not black) in direction d? */
static bool ref_five(const board_t *b, int p, int d)
{
    for (int s = -4; s <= 0; s++)
        if (ref_all_black(b, p, d, s, 5) && !ref_black(b, p, d, s - 1) &&
            !ref_black(b, p, d, s + 5))
            return true;
    return false;
}

static bool ref_overline(const board_t *b, int p, int d)
{
    for (int s = -5; s <= 0; s++)
        if (ref_all_black(b, p, d, s, 6))
            return true;
    return false;
}

/* With p black: the fours through p in direction d. Each five-window
 * through p holding four black and one empty cell, whose filling makes
 * exactly five, is a four; windows with the same four stones are one
 * four (the two ends of .XXXX.). */
static int ref_fours(const board_t *b, int p, int d)
{
    unsigned seen[5];
    int n = 0;
    for (int s = -4; s <= 0; s++) {
        int black = 0, empty = 0;
        unsigned stones = 0;   /* bit k+4: the cell at offset k is black */
        for (int k = s; k < s + 5; k++) {
            int c = ref_cell(b, p, d, k);
            black += c == STONE_BLACK;
            empty += c == STONE_EMPTY;
            if (c == STONE_BLACK)
                stones |= 1u << (k + 4);
        }
        if (black != 4 || empty != 1 || ref_black(b, p, d, s - 1) || ref_black(b, p, d, s + 5))
            continue;
        bool dup = false;
        for (int i = 0; i < n; i++)
            dup |= seen[i] == stones;
        if (!dup)
            seen[n++] = stones;
    }
    return n;
}

static int ref_verdict(board_t *b, int p, int depth);

/* With p black: is direction d a three, i.e. is there an empty q such
 * that p and q are in a straight four (four black in a row, both ends
 * empty, the cells past the ends not black) and q is no five and not
 * forbidden? Every four-window through p is tried. */
static bool ref_three(board_t *b, int p, int d, int depth)
{
    for (int s = -3; s <= 0; s++) {
        int q = -1, black = 0;
        for (int k = s; k < s + 4; k++) {
            int c = ref_cell(b, p, d, k);
            black += c == STONE_BLACK;
            if (c == STONE_EMPTY)
                q = ref_point(b, p, d, k);
        }
        if (black != 3 || q < 0 || ref_cell(b, p, d, s - 1) != STONE_EMPTY ||
            ref_cell(b, p, d, s + 4) != STONE_EMPTY || ref_black(b, p, d, s - 2) ||
            ref_black(b, p, d, s + 5))
            continue;
        ref_deep_calls++;
        if (ref_verdict(b, q, depth + 1) == FORBID_NONE)
            return true;
    }
    return false;
}

/* Black's verdict on the empty point p: REF_FIVE or a forbid_t. The
 * board is changed while it runs and restored before it returns. */
static int ref_verdict(board_t *b, int p, int depth)
{
    /* Check's passing ck_assert records its place on every call: too slow
     * here, so only failures call into Check. */
    if (b->cells[p] != STONE_EMPTY || depth >= BOARD_CELLS)
        ck_abort_msg("reference: point %d not empty or depth %d", p, depth);
    if (depth > ref_max_depth)
        ref_max_depth = depth;
    b->cells[p] = STONE_BLACK;
    int v = FORBID_NONE, fours = 0, threes = 0;
    bool five = false, over = false;
    for (int d = 0; d < 4; d++) {
        five |= ref_five(b, p, d);
        over |= ref_overline(b, p, d);
    }
    if (five) {
        v = REF_FIVE;
        goto out_restore;
    }
    if (over) {
        v = FORBID_OVERLINE;
        goto out_restore;
    }
    for (int d = 0; d < 4; d++)
        fours += ref_fours(b, p, d);
    if (fours >= 2) {
        v = FORBID_DOUBLE_FOUR;
        goto out_restore;
    }
    for (int d = 0; d < 4; d++)
        threes += ref_three(b, p, d, depth);
    if (threes >= 2)
        v = FORBID_DOUBLE_THREE;
out_restore:
    b->cells[p] = STONE_EMPTY;
    return v;
}

/* The reference's forbid_t for black on the empty point p. */
static forbid_t ref_kind(const board_t *b, int p)
{
    board_t c = *b;
    int v = ref_verdict(&c, p, 0);
    return v == REF_FIVE ? FORBID_NONE : (forbid_t)v;
}

static int rng_below(uint64_t *s, int n)
{
    return (int)util_rng_below(s, (uint32_t)n);
}

/* ---------- textbook diagrams ---------- */

/* A diagram is placed at the top-left of a 15x15 board: 'X' black, 'O'
 * white, '.' empty; every other character marks an empty point with the
 * verdict expected for black there: 'a' allowed, '5' a five (allowed and
 * winning), '3' double-three, '4' double-four, '6' overline. Each marked
 * point is checked alone (the other marks are empty), against both the
 * engine and the reference. */
static void check_diagram(const char *name, const char *diagram)
{
    board_t b;
    int marks[64], nmarks = 0, x = 0, y = 0;
    char want[64];
    board_init(&b, BOARD_DEFAULT, RULE_RENJU);
    for (const char *s = diagram; *s; s++) {
        if (*s == '\n') {
            x = 0;
            y++;
            continue;
        }
        ck_assert_msg(x < b.size && y < b.size, "%s: diagram larger than the board", name);
        int m = y * b.size + x++;
        if (*s == 'X' || *s == 'O') {
            b.cells[m] = *s == 'X' ? STONE_BLACK : STONE_WHITE;
        } else if (*s != '.') {
            ck_assert_msg(strchr("a5346", *s), "%s: bad mark '%c'", name, *s);
            ck_assert_int_lt(nmarks, 64);
            want[nmarks] = *s;
            marks[nmarks++] = m;
        }
    }
    ck_assert_msg(nmarks > 0, "%s: no point marked", name);
    for (int i = 0; i < nmarks; i++) {
        int m = marks[i];
        forbid_t expect = want[i] == '3'   ? FORBID_DOUBLE_THREE
                          : want[i] == '4' ? FORBID_DOUBLE_FOUR
                          : want[i] == '6' ? FORBID_OVERLINE
                                           : FORBID_NONE;
        forbid_t eng = board_forbidden_kind(&b, m), ref = ref_kind(&b, m);
        ck_assert_msg(eng == expect && ref == expect,
                      "%s: point %d,%d ('%c'): engine says %s, reference %s, expected %s", name,
                      m % b.size, m / b.size, want[i], forbid_str(eng), forbid_str(ref),
                      forbid_str(expect));
        ck_assert_msg(board_is_winning_move(&b, m) == (want[i] == '5'),
                      "%s: point %d,%d: five expected %s", name, m % b.size, m / b.size,
                      want[i] == '5' ? "yes" : "no");
        /* the list of forbidden points and playing the point agree */
        int pts[BOARD_CELLS], n = board_forbidden_points(&b, pts), listed = 0;
        for (int k = 0; k < n; k++)
            listed |= pts[k] == m;
        ck_assert_msg(listed == (expect != FORBID_NONE), "%s: point %d,%d listed: %d", name,
                      m % b.size, m / b.size, listed);
        ck_assert_int_eq(board_check_move(&b, m),
                         expect != FORBID_NONE ? MOVE_FORBIDDEN : MOVE_OK);
    }
}

START_TEST(textbook_basic_shapes)
{
    /* Open double-three, split double-three, double-four in two lines,
     * four-three and a plain overline. */
    check_diagram("double-three", "...............\n"
                                  "...............\n"
                                  ".....X.........\n"
                                  ".....X.........\n"
                                  "...XX3.........\n");
    check_diagram("split double-three", "...............\n"
                                        "....X..........\n"
                                        "...............\n"
                                        "....X..........\n"
                                        "..X.3X.........\n");
    check_diagram("double-four", "...............\n"
                                 ".....X.........\n"
                                 ".....X.........\n"
                                 ".....X.........\n"
                                 "..XXX4.........\n");
    check_diagram("four-three", "...............\n"
                                "...............\n"
                                ".....X.........\n"
                                ".....X.........\n"
                                ".OXXXa.........\n");
    check_diagram("overline", "...............\n"
                              ".XXX6XX........\n");
}
END_TEST

START_TEST(textbook_false_three_five_point)
{
    /* (7,7) makes the column three (7,5)-(7,7) and the row three
     * O . X X (7,7): the row's only straight-four point is (8,7), which
     * makes a five on the anti-diagonal (8,7)-(12,3). One more stone
     * there is a five, not a straight four: the row is no three and
     * (7,7) is allowed. */
    check_diagram("three whose straight-four point is a five", "...............\n"
                                                               "...............\n"
                                                               "...............\n"
                                                               "............X..\n"
                                                               "...........X...\n"
                                                               ".......X..X....\n"
                                                               ".......X.X.....\n"
                                                               "...O.XXa5......\n");
    /* Control: without the anti-diagonal four both threes are real. */
    check_diagram("control: real double-three", "...............\n"
                                                "...............\n"
                                                "...............\n"
                                                "...............\n"
                                                "...............\n"
                                                ".......X.......\n"
                                                ".......X.......\n"
                                                "...O.XX3a......\n");
}
END_TEST

START_TEST(textbook_false_three_overline_point)
{
    /* The row three's only straight-four point (8,7) makes six in column
     * 8: forbidden, so the row is no three and (7,7) is allowed. */
    check_diagram("three whose straight-four point is an overline", "...............\n"
                                                                    "...............\n"
                                                                    "...............\n"
                                                                    "...............\n"
                                                                    "........X......\n"
                                                                    ".......XX......\n"
                                                                    ".......XX......\n"
                                                                    "...O.XXa6......\n"
                                                                    "........X......\n"
                                                                    "........X......\n");
}
END_TEST

/* Column 8 above (8,7): O X X X. With (7,7) black, (8,7) makes the row
 * straight four 5..8 and the column four 4..7: a double-four. */
static const char *df_point = "...............\n"
                              "...............\n"
                              "...............\n"
                              "........O......\n"
                              "........X......\n"
                              ".......XX......\n"
                              ".......XX......\n"
                              "...O.XX%c%c......\n";

START_TEST(textbook_false_three_double_four_point)
{
    char d[256];
    snprintf(d, sizeof d, df_point, 'a', '.');
    check_diagram("three whose straight-four point is a double-four", d);
    snprintf(d, sizeof d, df_point, 'X', '4');
    check_diagram("that point with (7,7) played", d);
}
END_TEST

/* (7,7) ('%c' below) makes the column three (7,7)-(7,9) and the row three
 * O . X X (7,7) whose only straight-four point is (8,7) ('%c'). With (7,7)
 * black, (8,7) makes the row straight four, the split three (8,4) (8,5) .
 * (8,7) in column 8 and the open three (8,7)-(10,9) on the diagonal. */
static const char *dt_point = "...............\n"
                              "...............\n"
                              "...............\n"
                              "...............\n"
                              "........X......\n"
                              "......O.X......\n"
                              "...............\n"
                              "...O.XX%c%c......\n"
                              ".......X.X...%c.\n"
                              ".......X..X.%c..\n"
                              "...........%c...\n"
                              "..........%c....\n"
                              ".........%c.....\n"
                              "........%c......\n";

/* check_diagram of dt_point with P at (7,7), Q at (8,7); DEEP: the
 * anti-diagonal stones that make (11,10) an overline point. */
static void check_dt(const char *what, char p, char q, bool deep)
{
    char d[512], s = deep ? 'X' : '.';
    snprintf(d, sizeof d, dt_point, p, q, s, s, deep ? '6' : '.', s, s, s);
    check_diagram(what, d);
}

START_TEST(textbook_false_three_double_three_point)
{
    /* The diagonal three is real ((11,10) is a harmless point), so (8,7)
     * is four-three-three, a double-three: the row is no three and (7,7)
     * is allowed. */
    check_dt("three whose straight-four point is a double-three", 'a', '.', false);
    check_dt("that point with (7,7) played", 'X', '3', false);
}
END_TEST

START_TEST(textbook_deeper_real_double_three)
{
    /* One level deeper: the diagonal three of (8,7) can become a straight
     * four only at (11,10) (O at (6,5) shuts the other end, and (7,6)
     * would be a double-four anyway), and (11,10) makes six on the
     * anti-diagonal (8,13)-(13,8). So (8,7) is a four-three, allowed; the
     * row three of (7,7) is real and (7,7) is a double-three. */
    check_dt("double-three two levels deep", '3', '.', true);
    check_dt("its straight-four point with (7,7) played", 'X', 'a', true);
}
END_TEST

/* (7,7) ('%c' below): the row four O X X X (7,7) and the column three;
 * with the diagonal stones (5,5) (6,6) ('%c') also the diagonal three. */
static const char *ftt_point = "...............\n"
                               "...............\n"
                               "...............\n"
                               "...............\n"
                               "...............\n"
                               ".....%c.........\n"
                               "......%c........\n"
                               "...OXXX%c.......\n"
                               ".......X.......\n"
                               ".......X.......\n";

START_TEST(textbook_four_three_three)
{
    /* With the diagonal, four-three-three holds a double-three. Without
     * it it is a four-three, allowed. */
    char d[256];
    snprintf(d, sizeof d, ftt_point, 'X', 'X', '3');
    check_diagram("four-three-three", d);
    snprintf(d, sizeof d, ftt_point, '.', '.', 'a');
    check_diagram("four-three", d);
}
END_TEST

START_TEST(textbook_double_four_one_line)
{
    /* X.XX*.X and XX.X*.XX: two fours in one line. X.XX*.XX holds a
     * single four: filling the right gap would make six. */
    check_diagram("X.XX*.X", "...............\n"
                             "..X.XX4.X......\n");
    check_diagram("XX.X*.XX at the edge", "...............\n"
                                          "XX.X4.XX.......\n");
    check_diagram("X.XX*.XX: one four", "...............\n"
                                        "X.XXa.XX.......\n");
}
END_TEST

START_TEST(textbook_five_beats_forbidden)
{
    /* Exactly five wins even when the same stone makes an overline, a
     * double-four or a double-three in other lines. */
    check_diagram("five and overline", "...............\n"
                                       ".XX5XX.........\n"
                                       "...X...........\n"
                                       "...X...........\n"
                                       "...X...........\n"
                                       "...X...........\n"
                                       "...X...........\n");
    check_diagram("five and double-four", "...............\n"
                                          "....X..........\n"
                                          "....X..........\n"
                                          "....X..........\n"
                                          "XXXX5..........\n"
                                          ".....X.........\n"
                                          "......X........\n"
                                          ".......X.......\n");
    check_diagram("five and double-three", "...............\n"
                                           "..........X....\n"
                                           "..........X....\n"
                                           "......XXXX5....\n"
                                           "...........X...\n"
                                           "............X..\n");
}
END_TEST

/* ---------- random tactical positions ---------- */

static const int step8[8][2] = {{1, 0}, {-1, 0}, {0, 1}, {0, -1}, {1, 1}, {-1, -1}, {1, -1}, {-1, 1}};

/* A point 1..reach steps from the stone at s along one of the eight
 * directions, or -1 when that falls off the board or on a stone. */
static int near_point(const board_t *b, int s, int reach, uint64_t *rng)
{
    const int *st = step8[rng_below(rng, 8)];
    int k = 1 + rng_below(rng, reach);
    int x = s % b->size + k * st[0], y = s / b->size + k * st[1];
    if (x < 0 || y < 0 || x >= b->size || y >= b->size || b->cells[y * b->size + x] != STONE_EMPTY)
        return -1;
    return y * b->size + x;
}

/* A random tactical position with black to move: 10..60 stones in a box
 * of 5..11 cells a side (anywhere, against an edge or in a corner) on a
 * board of 6..20 (mostly 15). Black stones mostly extend black lines;
 * some white stones sit next to black ones. Returns the box, one cell
 * wider each way where the board allows, for the points to test. */
static void random_position(board_t *b, uint64_t *rng, int box[4])
{
    int size = rng_below(rng, 4) ? 15 : 6 + rng_below(rng, 15);
    board_init(b, size, RULE_RENJU);
    int lim = size < 11 ? size : 11;
    int w = 5 + rng_below(rng, lim - 4), h = 5 + rng_below(rng, lim - 4);
    int x0 = rng_below(rng, size - w + 1), y0 = rng_below(rng, size - h + 1);
    int where = rng_below(rng, 3);   /* 0 anywhere, 1 an edge, 2 a corner */
    if (where >= 1)
        x0 = rng_below(rng, 2) ? 0 : size - w;
    if (where == 2)
        y0 = rng_below(rng, 2) ? 0 : size - h;
    int n = 10 + rng_below(rng, 51);
    if (n > w * h * 6 / 10)
        n = w * h * 6 / 10;
    int black[BOARD_CELLS], nblack = 0;
    for (int i = 0; i < n; i++) {
        bool is_black = i % 2 == 0;
        int m = -1;
        if (nblack && rng_below(rng, 4) < (is_black ? 3 : 1))
            m = near_point(b, black[rng_below(rng, nblack)], is_black ? 3 : 4, rng);
        if (m >= 0 && (m % size < x0 || m % size >= x0 + w || m / size < y0 || m / size >= y0 + h))
            m = -1;
        while (m < 0) {
            int c = (y0 + rng_below(rng, h)) * size + x0 + rng_below(rng, w);
            if (b->cells[c] == STONE_EMPTY)
                m = c;
        }
        b->cells[m] = is_black ? STONE_BLACK : STONE_WHITE;
        if (is_black)
            black[nblack++] = m;
    }
    b->to_move = STONE_BLACK;
    box[0] = x0 > 0 ? x0 - 1 : 0;
    box[1] = y0 > 0 ? y0 - 1 : 0;
    box[2] = x0 + w < size ? x0 + w + 1 : size;
    box[3] = y0 + h < size ? y0 + h + 1 : size;
}

/* The board as rows of .XO, mark drawn as '*'. */
static void diagram_of(const board_t *b, int mark, char *out, size_t len)
{
    size_t k = 0;
    for (int y = 0; y < b->size && k + b->size + 2 < len; y++) {
        for (int x = 0; x < b->size; x++) {
            int m = y * b->size + x;
            out[k++] = m == mark ? '*' : ".XO"[b->cells[m]];
        }
        out[k++] = '\n';
    }
    out[k] = '\0';
}

/* Compare engine and reference on the empty point m; on a disagreement,
 * fail with the position drawn. */
static forbid_t cross_check_point(const board_t *b, int m)
{
    forbid_t eng = board_forbidden_kind(b, m), ref = ref_kind(b, m);
    if (eng != ref) {
        char d[BOARD_CELLS + BOARD_MAX + 1];
        diagram_of(b, m, d, sizeof d);
        ck_abort_msg("size %d, point %d,%d: engine says %s, reference %s\n%s", b->size,
                     m % b->size, m / b->size, forbid_str(eng), forbid_str(ref), d);
    }
    return eng;
}

START_TEST(cross_check_random_positions)
{
    const int npos = 50000;
    long points = 0, kinds[4] = {0};
    uint64_t rng = 0x5eed0fa11;
    ref_deep_calls = 0;
    ref_max_depth = 0;
    for (int i = 0; i < npos; i++) {
        board_t b;
        int box[4];
        random_position(&b, &rng, box);
        for (int y = box[1]; y < box[3]; y++)
            for (int x = box[0]; x < box[2]; x++) {
                int m = y * b.size + x;
                if (b.cells[m] != STONE_EMPTY)
                    continue;
                kinds[cross_check_point(&b, m)]++;
                points++;
            }
    }
    printf("renju cross-check: %d positions, %ld points, 0 disagreements (allowed %ld, "
           "double-three %ld, double-four %ld, overline %ld; reference: %ld straight-four "
           "points checked recursively, depth up to %d)\n",
           npos, points, kinds[FORBID_NONE], kinds[FORBID_DOUBLE_THREE],
           kinds[FORBID_DOUBLE_FOUR], kinds[FORBID_OVERLINE], ref_deep_calls, ref_max_depth);
    ck_assert_int_gt(kinds[FORBID_DOUBLE_THREE], 1000);
    ck_assert_int_gt(kinds[FORBID_DOUBLE_FOUR], 1000);
    ck_assert_int_gt(kinds[FORBID_OVERLINE], 1000);
    ck_assert_int_ge(ref_max_depth, 2);
}
END_TEST

/* Random renju games on 15x15 where black prefers to extend its lines:
 * before every black move, every empty point near the stones is offered
 * to board_check_move, which must accept exactly the points the
 * reference finds allowed; the game goes on with one of those. */
START_TEST(random_games_refuse_only_forbidden)
{
    const int ngames = 300;
    long checked = 0, refused = 0, moves = 0;
    uint64_t rng = 0x9a3e5;
    for (int g = 0; g < ngames; g++) {
        board_t b;
        board_init(&b, BOARD_DEFAULT, RULE_RENJU);
        ck_assert_int_eq(board_play(&b, 7 * 15 + 7), MOVE_OK);
        while (!board_over(&b)) {
            int cand[BOARD_CELLS], legal[BOARD_CELLS], nc = 0, nl = 0;
            for (int m = 0; m < BOARD_DEFAULT * BOARD_DEFAULT; m++) {
                if (b.cells[m] != STONE_EMPTY)
                    continue;
                bool near = false;
                for (int dy = -2; dy <= 2; dy++)
                    for (int dx = -2; dx <= 2; dx++) {
                        int x = m % 15 + dx, y = m / 15 + dy;
                        near |= x >= 0 && y >= 0 && x < 15 && y < 15 &&
                                b.cells[y * 15 + x] != STONE_EMPTY;
                    }
                if (near)
                    cand[nc++] = m;
            }
            if (nc == 0)
                break;
            for (int i = 0; i < nc; i++) {
                int m = cand[i];
                bool ok = board_check_move(&b, m) == MOVE_OK;
                bool ref_ok = b.to_move == STONE_WHITE || ref_kind(&b, m) == FORBID_NONE;
                if (ok != ref_ok) {
                    char d[BOARD_CELLS + BOARD_MAX + 1];
                    diagram_of(&b, m, d, sizeof d);
                    ck_abort_msg("game %d move %d: point %d,%d %s by the engine, %s by the "
                                 "reference\n%s",
                                 g, b.nmoves, m % 15, m / 15, ok ? "accepted" : "refused",
                                 ref_ok ? "allowed" : "forbidden", d);
                }
                checked += b.to_move == STONE_BLACK;
                refused += !ok;
                if (ok)
                    legal[nl++] = m;
            }
            if (nl == 0)
                break;   /* black with only forbidden points nearby: stop here */
            int m = legal[rng_below(&rng, nl)];
            if (b.to_move == STONE_BLACK && rng_below(&rng, 3)) {
                for (int t = 0; t < 8; t++) {   /* prefer a point next to a black line */
                    int c = legal[rng_below(&rng, nl)], x = c % 15, y = c / 15, nb = 0;
                    for (int k = 0; k < 8; k++) {
                        int xx = x + step8[k][0], yy = y + step8[k][1];
                        nb += xx >= 0 && yy >= 0 && xx < 15 && yy < 15 &&
                              b.cells[yy * 15 + xx] == STONE_BLACK;
                    }
                    if (nb >= 1) {
                        m = c;
                        break;
                    }
                }
            }
            ck_assert_int_eq(board_play(&b, m), MOVE_OK);
            moves++;
        }
    }
    printf("renju games: %d games, %ld moves, %ld black points checked, %ld refused as "
           "forbidden, 0 disagreements\n",
           ngames, moves, checked, refused);
    ck_assert_int_gt(refused, 100);
}
END_TEST

static Suite *renju_suite(void)
{
    Suite *s = suite_create("renju");
    ADD_CASE(s, "textbook", -1, textbook_basic_shapes, textbook_false_three_five_point,
             textbook_false_three_overline_point, textbook_false_three_double_four_point,
             textbook_false_three_double_three_point, textbook_deeper_real_double_three,
             textbook_four_three_three, textbook_double_four_one_line,
             textbook_five_beats_forbidden);
    /* meson's timeout applies */
    ADD_CASE(s, "cross-check", 0, cross_check_random_positions, random_games_refuse_only_forbidden);
    return s;
}

int main(void)
{
    return run_suite(renju_suite());
}
