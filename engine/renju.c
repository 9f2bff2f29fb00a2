/* Renju forbidden moves for black: double-three, double-four, overline.
 *
 * Order of the verdict, as in the renju rules: a move that makes exactly
 * five is never forbidden; otherwise a line of six or more is an overline;
 * two or more fours (two in one line count twice, e.g. B.BBB.B) are a
 * double-four; two or more threes are a double-three, where a three is a
 * line that one more stone turns into a straight four (.BBBB. with both
 * fives exact). That stone counts only if it makes no five (in any line:
 * then it is a five, not a straight four) and is not itself forbidden,
 * judged recursively on the board with the first stone placed.
 *
 * Only the four lines through the point are read; the board is copied
 * only when a double-three needs the recursive check. */
#include <assert.h>
#include <string.h>

#include "engine/board.h"
#include "engine/line.h"

#define B STONE_BLACK
#define E STONE_EMPTY

static int count_black(const uint8_t l[LINE_LEN], int lo, int hi)
{
    int n = 0;
    for (int i = lo; i <= hi; i++)
        n += l[i] == B;
    return n - (l[LINE_MID] == B);
}

/* Fours through the middle (which is black): how many distinct fives one
 * more stone can make. A straight four has two completing points but is
 * one four. */
static int line_fours(uint8_t l[LINE_LEN])
{
    if (count_black(l, 1, LINE_LEN - 2) < 3)
        return 0;
    int n = 0;
    for (int q = 1; q < LINE_LEN - 1; q++) {
        if (l[q] != E)
            continue;
        l[q] = B;
        n += line_run(l, B) == 5;
        l[q] = E;
    }
    if (n == 2 && line_run(l, B) == 4)
        n = 1;   /* .BBBB.: both completions extend the same four */
    return n;
}

/* Is the run through the middle a straight four: exactly four, both ends
 * empty, and each end makes exactly five (no overline)? */
static bool line_straight_four(const uint8_t l[LINE_LEN])
{
    int a = LINE_MID, b = LINE_MID;
    while (a > 0 && l[a - 1] == B)
        a--;
    while (b < LINE_LEN - 1 && l[b + 1] == B)
        b++;
    if (b - a + 1 != 4)
        return false;
    /* a run of 4 through the middle has a >= 2 and b <= LINE_LEN - 3 */
    return l[a - 1] == E && l[b + 1] == E && l[a - 2] != B && l[b + 2] != B;
}

/* Points (line indices) where one more stone turns this line into a
 * straight four through the middle; returns the count. */
static int line_three_points(uint8_t l[LINE_LEN], int pts[LINE_LEN])
{
    if (count_black(l, 2, LINE_LEN - 3) < 2)
        return 0;
    int n = 0;
    for (int q = 2; q < LINE_LEN - 2; q++) {
        if (q == LINE_MID || l[q] != E)
            continue;
        l[q] = B;
        if (line_straight_four(l))
            pts[n++] = q;
        l[q] = E;
    }
    return n;
}

/* kind_at's verdict when p makes exactly five: never forbidden, but no
 * three's straight-four point either. */
#define KIND_FIVE (-1)

/* Verdict for black on the empty point p of `cells`: a forbid_t or
 * KIND_FIVE. `scratch` is NULL or a writable copy of cells (then
 * cells == scratch); it is made on the first recursion and restored
 * before returning. */
static int kind_at(const uint8_t *cells, uint8_t *scratch, int size, int p, int depth)
{
    uint8_t l[NDIRS][LINE_LEN];
    bool over = false;
    assert(depth < BOARD_CELLS);
    for (int d = 0; d < NDIRS; d++) {
        line_read(cells, size, p, d, l[d]);
        l[d][LINE_MID] = B;
        int run = line_run(l[d], B);
        if (run == 5)
            return KIND_FIVE;
        over |= run > 5;
    }
    if (over)
        return FORBID_OVERLINE;

    int fours = 0, four_dir[NDIRS];
    for (int d = 0; d < NDIRS; d++) {
        four_dir[d] = line_fours(l[d]);
        fours += four_dir[d];
    }
    if (fours >= 2)
        return FORBID_DOUBLE_FOUR;

    int pts[NDIRS][LINE_LEN], npts[NDIRS], ndirs = 0;
    for (int d = 0; d < NDIRS; d++) {
        npts[d] = four_dir[d] ? 0 : line_three_points(l[d], pts[d]);
        ndirs += npts[d] > 0;
    }
    if (ndirs < 2)
        return FORBID_NONE;

    uint8_t local[BOARD_CELLS];
    if (!scratch) {
        memcpy(local, cells, (size_t)size * size);
        scratch = local;
    }
    scratch[p] = B;
    int threes = 0;
    for (int d = 0; d < NDIRS && threes < 2; d++) {
        int step = line_dy[d] * size + line_dx[d];
        for (int i = 0; i < npts[d]; i++) {
            int q = p + (pts[d][i] - LINE_MID) * step;
            if (kind_at(scratch, scratch, size, q, depth + 1) == FORBID_NONE) {
                threes++;
                break;
            }
        }
    }
    scratch[p] = E;
    return threes >= 2 ? FORBID_DOUBLE_THREE : FORBID_NONE;
}

forbid_t board_forbidden_kind(const board_t *b, int move)
{
    if (b->rule != RULE_RENJU || b->to_move != STONE_BLACK || move < 0 ||
        move >= b->size * b->size || b->cells[move] != STONE_EMPTY)
        return FORBID_NONE;
    int k = kind_at(b->cells, NULL, b->size, move, 0);
    return k == KIND_FIVE ? FORBID_NONE : (forbid_t)k;
}

bool renju_black_forbidden(const uint8_t *cells, int size, int move)
{
    int k = kind_at(cells, NULL, size, move, 0);
    return k != KIND_FIVE && k != FORBID_NONE;
}

bool board_is_forbidden(const board_t *b, int move)
{
    return board_forbidden_kind(b, move) != FORBID_NONE;
}

const char *forbid_str(forbid_t f)
{
    switch (f) {
    case FORBID_NONE: return "none";
    case FORBID_DOUBLE_THREE: return "double-three";
    case FORBID_DOUBLE_FOUR: return "double-four";
    case FORBID_OVERLINE: return "overline";
    }
    return "?";
}
