/* Internal to engine/: a line of 11 cells through a point in one of the
 * four directions, the point itself at index LINE_MID, used by the renju
 * forbidden-move check and by the greedy bot; and the threat solvers'
 * scan of five-cell windows (threat.c). */
#ifndef GZ_ENGINE_LINE_H
#define GZ_ENGINE_LINE_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/board.h"

#define LINE_MID 5
#define LINE_LEN 11
#define LINE_WALL 3   /* off the board */
#define NDIRS 4

static const int line_dx[NDIRS] = {1, 0, 1, 1};
static const int line_dy[NDIRS] = {0, 1, 1, -1};

/* l[i] = cell at offset i - LINE_MID along direction dir from move;
 * off-board cells read LINE_WALL. The middle cell is read as it is. */
static inline void line_read(const uint8_t *cells, int size, int move, int dir,
                             uint8_t l[LINE_LEN])
{
    int x0 = move % size, y0 = move / size, dx = line_dx[dir], dy = line_dy[dir];
    for (int i = 0; i < LINE_LEN; i++) {
        int x = x0 + (i - LINE_MID) * dx, y = y0 + (i - LINE_MID) * dy;
        l[i] = (x >= 0 && x < size && y >= 0 && y < size) ? cells[y * size + x] : LINE_WALL;
    }
}

/* Length of the run of colour c through the middle (the middle counts as c). */
static inline int line_run(const uint8_t l[LINE_LEN], int c)
{
    int n = 1;
    for (int i = LINE_MID - 1; i >= 0 && l[i] == c; i--)
        n++;
    for (int i = LINE_MID + 1; i < LINE_LEN && l[i] == c; i++)
        n++;
    return n;
}

/* Does a run of `run` stones of colour c win under rule? */
static inline int rule_is_five(int rule, int c, int run)
{
    if (rule == RULE_FREESTYLE || (rule == RULE_RENJU && c == STONE_WHITE))
        return run >= 5;
    return run == 5;
}

/* Length of the run of colour c through (x, y) along (dx, dy); the point
 * itself counts as c. board.c. */
int board_run_length(const board_t *b, int x, int y, int dx, int dy, int c);

/* board_play of a legal move (board_check_move: MOVE_OK) whose five the
 * caller knows: five is board_makes_five(b, move, b->to_move). For the
 * threat solvers, whose windows answer that without reading the lines.
 * board.c. */
void board_place(board_t *b, int move, bool five);

/* Count in mark[] (saturating at 255) the points on the four lines
 * through p within `reach` of it, and p itself once: the points that can
 * touch a threat at p. */
static inline void line_mark_rays(const board_t *b, int p, int reach, uint8_t *mark)
{
    int size = b->size, px = p % size, py = p / size;
    mark[p] += mark[p] < 255;
    for (int d = 0; d < NDIRS; d++)
        for (int k = -reach; k <= reach; k++) {
            int x = px + k * line_dx[d], y = py + k * line_dy[d], q = y * size + x;
            if (k != 0 && x >= 0 && y >= 0 && x < size && y < size)
                mark[q] += mark[q] < 255;
        }
}

/* The window of five cells from (x0, y0) along direction dir: writes its
 * empty cells to empty[] in line order and returns their count, or -1
 * when the window leaves the board or holds a stone not of colour c. */
static inline int line_window_empties(const board_t *b, int c, int x0, int y0, int dir,
                                      int empty[5])
{
    int size = b->size, dx = line_dx[dir], dy = line_dy[dir];
    int x4 = x0 + 4 * dx, y4 = y0 + 4 * dy, ne = 0;
    if (x0 < 0 || x0 >= size || y0 < 0 || y0 >= size || x4 < 0 || x4 >= size || y4 < 0 ||
        y4 >= size)
        return -1;
    for (int k = 0, p = y0 * size + x0; k < 5; k++, p += dy * size + dx) {
        if (b->cells[p] == STONE_EMPTY)
            empty[ne++] = p;
        else if (b->cells[p] != c)
            return -1;
    }
    return ne;
}

/* Empty cells in a window of five on a line that holds `own` stones of
 * colour c and no other stone or wall (the rest empty), found from c's
 * stones; each cell once, in board order of the stones. own 4: candidate
 * five points; own 3: candidate four points; own 2: the cells where one
 * stone makes such a window of three (candidate threes). Returns the
 * count. Defined in threat.c. */
int line_window_points(const board_t *b, int c, int own, int *out);

/* Five points of colour c, each once: the own-4 window candidates checked
 * exactly with the rule's five test. The same set as board_five_points
 * (not in its order), found from c's stones instead of every point.
 * threat.c. */
int line_five_points(const board_t *b, int c, int *out);

/* Threat class of the line l through its middle (already set to c), for
 * colour c under rule; twos only when `twos`, else THREAT_NONE below a
 * three. l is scratch (restored on return). pattern.c. */
threat_t line_classify(uint8_t l[LINE_LEN], int rule, int c, bool twos);
/* n[t] = how many of the four lines through the empty point move a stone
 * of color makes class t in (twos included). pattern.c. */
void board_threat_lines(const board_t *b, int move, int color, int n[THREAT_COUNT]);
/* Renju: is the empty point move of cells forbidden to black, whoever is
 * to move? renju.c. */
bool renju_black_forbidden(const uint8_t *cells, int size, int move);

#endif
