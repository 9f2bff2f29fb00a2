/* Shared parts of the threat solvers; see threat.h and line.h. */
#include "engine/threat.h"

#include <stdlib.h>
#include <string.h>

#include "engine/line.h"
#include "util/util.h"

void *threat_table_alloc(size_t bytes, size_t entry_size, size_t *mask)
{
    size_t n = 1;
    while (n * 2 * entry_size <= bytes)
        n *= 2;
    *mask = n - 1;
    return calloc(n, entry_size);
}

void threat_begin(threat_query_t *q, const board_t *b, uint64_t max_nodes, double time_ms)
{
    q->b = *b;
    q->att = b->to_move;
    q->def = STONE_BLACK + STONE_WHITE - b->to_move;
    q->salt = ((uint64_t)b->size * 0x9e3779b97f4a7c15ULL) ^
              ((uint64_t)(b->rule + 1) * 0xc2b2ae3d27d4eb4fULL);
    q->nodes = 0;
    q->max_nodes = max_nodes;
    q->deadline_ms = time_ms > 0.0 ? util_now_ms() + time_ms : 0.0;
    q->aborted = false;
    q->nline = 0;
}

int threat_line(const threat_query_t *q, const board_t *b, bool won, int *out_line,
                int *nthreats)
{
    int n = won ? q->nline : 0;
    *nthreats = (n + 1) / 2;
    if (n == 1 && board_makes_five(b, q->line[0], q->att))
        *nthreats = 0;
    memcpy(out_line, q->line, (size_t)n * sizeof *out_line);
    return n;
}

bool threat_flip(const board_t *b, board_t *flip)
{
    if (board_over(b))
        return false;
    *flip = *b;
    board_pass(flip);
    return true;
}

void threat_mark(uint8_t *cand, const int *pts, int n)
{
    for (int i = 0; i < n; i++)
        cand[pts[i]] = 1;
}

int threat_defences(const board_t *b, const int *line, int nline, int reach, uint8_t *cand,
                    threat_wins_fn wins, void *ctx, int *out)
{
    for (int i = 0; i < nline; i++)
        line_mark_rays(b, line[i], reach, cand);
    int k = 0;
    for (int m = 0; m < board_npoints(b); m++) {
        if (!cand[m] || board_check_move(b, m) != MOVE_OK)
            continue;
        board_t after = *b;
        board_play(&after, m);
        if (!wins(ctx, &after))
            out[k++] = m;
    }
    return k;
}

int line_window_points(const board_t *b, int c, int own, int *out)
{
    uint8_t seen[BOARD_CELLS];
    int size = b->size, n = 0;
    memset(seen, 0, (size_t)size * size);
    for (int m = 0; m < size * size; m++) {
        if (b->cells[m] != c)
            continue;
        int mx = m % size, my = m / size;
        for (int d = 0; d < NDIRS; d++) {
            int dx = line_dx[d], dy = line_dy[d];
            for (int s0 = -4; s0 <= 0; s0++) {
                int x0 = mx + s0 * dx, y0 = my + s0 * dy;
                int x4 = x0 + 4 * dx, y4 = y0 + 4 * dy;
                if (x0 < 0 || x0 >= size || y0 < 0 || y0 >= size || x4 < 0 || x4 >= size ||
                    y4 < 0 || y4 >= size)
                    continue;
                int k = 0, empty[5], ne = 0;
                for (int p = y0 * size + x0, step = dy * size + dx; k < 5; k++, p += step) {
                    if (b->cells[p] == STONE_EMPTY)
                        empty[ne++] = p;
                    else if (b->cells[p] != c)
                        break;
                }
                if (k < 5 || ne != 5 - own)
                    continue;
                for (int i = 0; i < ne; i++)
                    if (!seen[empty[i]]) {
                        seen[empty[i]] = 1;
                        out[n++] = empty[i];
                    }
            }
        }
    }
    return n;
}

int line_five_points(const board_t *b, int c, int *out)
{
    int n = line_window_points(b, c, 4, out), k = 0;
    for (int i = 0; i < n; i++)
        if (board_makes_five(b, out[i], c))
            out[k++] = out[i];
    return k;
}
