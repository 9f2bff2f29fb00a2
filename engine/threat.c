/* What a stone at a point makes: the per-line threat classifier (used by
 * the greedy bot's score and by the net's threat input planes). */
#include "engine/board.h"
#include "engine/line.h"

/* Points that make a five for colour c through the middle of l (middle
 * already set to c). */
static int count_fives(uint8_t l[LINE_LEN], int rule, int c)
{
    int n = 0;
    for (int q = 1; q < LINE_LEN - 1; q++) {
        if (l[q] != STONE_EMPTY)
            continue;
        l[q] = (uint8_t)c;
        n += rule_is_five(rule, c, line_run(l, c));
        l[q] = STONE_EMPTY;
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

threat_t board_threat_at(const board_t *b, int move, int color)
{
    if (b->cells[move] != STONE_EMPTY)
        return THREAT_NONE;
    uint8_t l[LINE_LEN];
    threat_t best = THREAT_NONE;
    int fours = 0;
    for (int d = 0; d < NDIRS; d++) {
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
