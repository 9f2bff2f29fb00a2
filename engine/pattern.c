/* Patterns: what a stone at a point makes, the per-line threat classifier
 * (used by the greedy bot's score and by the net's threat input planes). */
#include <string.h>

#include "engine/board.h"
#include "engine/line.h"

/* Points that make a five for colour c through the middle of l (middle
 * already set to c), among l[1..LINE_LEN-2]: only the two cells just off
 * the ends of the middle's run can lengthen it, so those two are tried. */
static int count_fives(const uint8_t l[LINE_LEN], int rule, int c)
{
    int a = LINE_MID, b = LINE_MID, n = 0;
    while (a > 0 && l[a - 1] == c)
        a--;
    while (b < LINE_LEN - 1 && l[b + 1] == c)
        b++;
    if (a - 1 >= 1 && l[a - 1] == STONE_EMPTY) {
        int run = b - a + 2;
        for (int i = a - 2; i >= 0 && l[i] == c; i--)
            run++;
        n += rule_is_five(rule, c, run);
    }
    if (b + 1 <= LINE_LEN - 2 && l[b + 1] == STONE_EMPTY) {
        int run = b - a + 2;
        for (int i = b + 2; i < LINE_LEN && l[i] == c; i++)
            run++;
        n += rule_is_five(rule, c, run);
    }
    return n;
}

threat_t line_classify(uint8_t l[LINE_LEN], int rule, int c, bool twos)
{
    if (rule_is_five(rule, c, line_run(l, c)))
        return THREAT_FIVE;
    int own = 0;
    for (int i = 1; i < LINE_LEN - 1; i++)
        own += l[i] == c;
    if (own >= 4) {
        int f = count_fives(l, rule, c);
        if (f >= 2)
            return THREAT_OPEN_FOUR;   /* straight four, or two fours in the line */
        if (f == 1)
            return THREAT_FOUR;
    }
    if (own >= 3) {
        threat_t best = THREAT_NONE;
        for (int q = 2; q < LINE_LEN - 2 && best != THREAT_OPEN_THREE; q++) {
            if (l[q] != STONE_EMPTY)
                continue;
            l[q] = (uint8_t)c;
            int f = count_fives(l, rule, c);
            l[q] = STONE_EMPTY;
            if (f >= 2)
                best = THREAT_OPEN_THREE;
            else if (f == 1)
                best = THREAT_THREE;
        }
        if (best != THREAT_NONE)
            return best;
    }
    if (!twos)
        return THREAT_NONE;
    /* Twos: 5-windows through the middle free of the opponent and walls
     * that hold two of ours; open when there are several. */
    int windows = 0;
    for (int s = LINE_MID - 4; s <= LINE_MID; s++) {
        int k = 0, ok = 1;
        for (int i = s; i < s + 5; i++) {
            if (l[i] == c)
                k++;
            else if (l[i] != STONE_EMPTY)
                ok = 0;
        }
        windows += ok && k >= 2;
    }
    return windows >= 3 ? THREAT_OPEN_TWO : windows >= 1 ? THREAT_TWO : THREAT_NONE;
}

void board_threat_lines(const board_t *b, int move, int color, int n[THREAT_COUNT])
{
    uint8_t l[LINE_LEN];
    for (int t = 0; t < THREAT_COUNT; t++)
        n[t] = 0;
    for (int d = 0; d < NDIRS; d++) {
        line_read(b->cells, b->size, move, d, l);
        l[LINE_MID] = (uint8_t)color;
        n[line_classify(l, b->rule, color, true)]++;
    }
}

/* board_threat_at over the directions in dirs (bit d: direction d); the
 * others are known to hold fewer than two other stones of color within
 * four of move, so they make less than a three. */
static threat_t threat_dirs(const board_t *b, int move, int color, unsigned dirs)
{
    uint8_t l[LINE_LEN];
    threat_t best = THREAT_NONE;
    int fours = 0;
    for (int d = 0; d < NDIRS; d++) {
        if (!(dirs >> d & 1))
            continue;
        line_read(b->cells, b->size, move, d, l);
        l[LINE_MID] = (uint8_t)color;
        threat_t t = line_classify(l, b->rule, color, false);
        fours += t == THREAT_FOUR;
        if (t > best)
            best = t;
    }
    if (best == THREAT_FOUR && fours >= 2)
        best = THREAT_OPEN_FOUR;   /* a double four: two five points, as an open four */
    if (best != THREAT_NONE && best != THREAT_FIVE && b->rule == RULE_RENJU &&
        color == STONE_BLACK && renju_black_forbidden(b->cells, b->size, move))
        return THREAT_NONE;
    return best;
}

threat_t board_threat_at(const board_t *b, int move, int color)
{
    if (b->cells[move] != STONE_EMPTY)
        return THREAT_NONE;
    return threat_dirs(b, move, color, (1u << NDIRS) - 1);
}

void board_threat_map(const board_t *b, int color, uint8_t *out)
{
    int size = b->size, n = size * size;
    /* near[d][q]: color's stones within four of q along direction d */
    uint8_t near[NDIRS][BOARD_CELLS];
    memset(near, 0, sizeof near);
    memset(out, THREAT_NONE, (size_t)n);
    for (int p = 0; p < n; p++) {
        if (b->cells[p] != color)
            continue;
        int px = p % size, py = p / size;
        for (int d = 0; d < NDIRS; d++)
            for (int k = -4; k <= 4; k++) {
                int x = px + k * line_dx[d], y = py + k * line_dy[d];
                if (k != 0 && x >= 0 && y >= 0 && x < size && y < size)
                    near[d][y * size + x]++;
            }
    }
    for (int q = 0; q < n; q++) {
        if (b->cells[q] != STONE_EMPTY)
            continue;
        unsigned dirs = 0;
        for (int d = 0; d < NDIRS; d++)
            dirs |= (unsigned)(near[d][q] >= 2) << d;
        if (dirs)
            out[q] = (uint8_t)threat_dirs(b, q, color, dirs);
    }
}
