/* Shared parts of the threat solvers; see threat.h and line.h. */
#include "engine/threat.h"

#include <assert.h>
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

/* ---- the windows ---------------------------------------------------- */

/* A window's state is 6 * (black stones) + (white stones). Its weight:
 * the field of the cell counters (threat_lines_t.cls) it adds to each of
 * its five cells, that of its colour and stone count when it holds 2..4
 * stones of one colour alone, else 0. */
#define WSTATE(nb, nw) (6 * (nb) + (nw))
static const uint32_t window_weight[36] = {
    [WSTATE(2, 0)] = THREAT_FIELD(STONE_BLACK, 2), [WSTATE(3, 0)] = THREAT_FIELD(STONE_BLACK, 3),
    [WSTATE(4, 0)] = THREAT_FIELD(STONE_BLACK, 4), [WSTATE(0, 2)] = THREAT_FIELD(STONE_WHITE, 2),
    [WSTATE(0, 3)] = THREAT_FIELD(STONE_WHITE, 3), [WSTATE(0, 4)] = THREAT_FIELD(STONE_WHITE, 4),
};
static const int state_step[3] = {0, 6, 1};   /* a stone of black, of white */

/* The first-cell offsets s0 (-4..0) along (dx, dy) of the windows through
 * (px, py) that lie on the board: *lo..*hi. */
static inline void window_span(int size, int px, int py, int dx, int dy, int *lo, int *hi)
{
    int l = -4, h = 0;
    if (dx) {   /* dx is 1 */
        l = l > -px ? l : -px;
        h = h < size - 5 - px ? h : size - 5 - px;
    }
    if (dy == 1) {
        l = l > -py ? l : -py;
        h = h < size - 5 - py ? h : size - 5 - py;
    } else if (dy == -1) {
        l = l > py - size + 1 ? l : py - size + 1;
        h = h < py - 4 ? h : py - 4;
    }
    *lo = l;
    *hi = h;
}

/* A stone of c in (delta 1) or out of (delta -1) the cell p: each of the
 * up to 20 windows through p counts it, and the cells of those whose
 * class changes move from the old class to the new. Along a direction a
 * cell at offset j from p lies in the windows starting at j-4..j, so it
 * gets a running sum of their changes: nine cells written, not five per
 * window changed. */
static void lines_update(threat_query_t *q, int p, int c, int delta)
{
    threat_lines_t *L = &q->lines;
    int size = q->b.size, px = p % size, py = p / size, dstate = delta * state_step[c];
    for (int d = 0; d < NDIRS; d++) {
        int dx = line_dx[d], dy = line_dy[d], step = dy * size + dx, lo, hi;
        window_span(size, px, py, dx, dy, &lo, &hi);
        uint8_t *st = &L->n[d][p + lo * step];
        uint32_t *cell = &L->cls[p + lo * step];
        if (lo == -4 && hi == 0) {   /* all five windows on the board: unrolled */
            uint32_t w0 = window_weight[st[0] + dstate] - window_weight[st[0]];
            uint32_t w1 = window_weight[st[step] + dstate] - window_weight[st[step]];
            uint32_t w2 = window_weight[st[2 * step] + dstate] - window_weight[st[2 * step]];
            uint32_t w3 = window_weight[st[3 * step] + dstate] - window_weight[st[3 * step]];
            uint32_t w4 = window_weight[st[4 * step] + dstate] - window_weight[st[4 * step]];
            for (int i = 0; i < 5; i++)
                st[i * step] = (uint8_t)(st[i * step] + dstate);
            if (!(w0 | w1 | w2 | w3 | w4))
                continue;
            uint32_t w01 = w0 + w1, w34 = w3 + w4, all = w01 + w2 + w34;
            cell[0] += w0;
            cell[step] += w01;
            cell[2 * step] += w01 + w2;
            cell[3 * step] += all - w4;
            cell[4 * step] += all;
            cell[5 * step] += all - w0;
            cell[6 * step] += w2 + w34;
            cell[7 * step] += w34;
            cell[8 * step] += w4;
            continue;
        }
        uint32_t dw[5], any = 0;   /* [s0 - lo] */
        for (int i = 0; i <= hi - lo; i++, st += step) {
            /* fields never go below 0, so one wrapping add moves them all */
            dw[i] = window_weight[*st + dstate] - window_weight[*st];
            any |= dw[i];
            *st = (uint8_t)(*st + dstate);
        }
        if (!any)
            continue;
        uint32_t run = 0;
        for (int j = 0; j <= hi - lo + 4; j++, cell += step) {
            if (j <= hi - lo)
                run += dw[j];
            if (j >= 5)
                run -= dw[j - 5];
            *cell += run;
        }
    }
}

void threat_put(threat_query_t *q, int p, int c)
{
    q->b.cells[p] = (uint8_t)c;
    lines_update(q, p, c, 1);
}

void threat_take(threat_query_t *q, int p)
{
    int c = q->b.cells[p];
    q->b.cells[p] = STONE_EMPTY;
    lines_update(q, p, c, -1);
}

/* Does a run of more than five win for c under the rule (so that any
 * window of four of c's stones and a gap is a five point)? */
static bool overline_wins(const board_t *b, int c)
{
    return b->rule == RULE_FREESTYLE || (b->rule == RULE_RENJU && c == STONE_WHITE);
}

/* board_play, its five read from the windows: a five through m fills a
 * window of four of c's stones, exactly so where overlines win. Legality
 * is the caller's (the renju forbidden test is too dear to repeat). */
void threat_play(threat_query_t *q, int m)
{
    board_t *b = &q->b;
    int c = b->to_move;
    assert(b->result == RESULT_NONE && m >= 0 && m < b->size * b->size &&
           b->cells[m] == STONE_EMPTY);
    bool five = (q->lines.cls[m] & THREAT_FIELD_MASK(c, 4)) != 0;
    if (five && !overline_wins(b, c))
        five = board_makes_five(b, m, c);
    board_place(b, m, five);
    lines_update(q, m, c, 1);
}

void threat_undo(threat_query_t *q)
{
    int m = q->b.moves[q->b.nmoves - 1], c = q->b.cells[m];
    board_undo(&q->b);
    lines_update(q, m, c, -1);
}

/* The scan goes eight cells at a time: whether any of the eight has the
 * field (an OR the compiler turns into vector instructions; most of the
 * board has none), then the cells of those that do. Cells past the board
 * have no windows, so their fields are 0. */
#define SCAN_STEP 8
_Static_assert(BOARD_CELLS % SCAN_STEP == 0, "the window scan reads whole steps");

int threat_window_points(const threat_query_t *q, int c, int own, int *out)
{
    const uint32_t *cls = q->lines.cls, mask = THREAT_FIELD_MASK(c, own);
    const uint8_t *cells = q->b.cells;
    int npts = q->b.size * q->b.size, n = 0;
    for (int p0 = 0; p0 < npts; p0 += SCAN_STEP) {
        uint32_t any = 0;
        for (int i = 0; i < SCAN_STEP; i++)
            any |= cls[p0 + i];
        if (!(any & mask))
            continue;
        for (int p = p0; p < p0 + SCAN_STEP; p++)
            if ((cls[p] & mask) && cells[p] == STONE_EMPTY)
                out[n++] = p;
    }
    return n;
}

int threat_five_points(const threat_query_t *q, int c, int *out)
{
    int n = threat_window_points(q, c, 4, out), k = 0;
    if (overline_wins(&q->b, c))   /* a window of four and a gap makes five or more */
        return n;
    for (int i = 0; i < n; i++)
        if (board_makes_five(&q->b, out[i], c))
            out[k++] = out[i];
    return k;
}

/* threat_four_at, with a stone of colour `color` at the empty cell `cell`
 * (MOVE_NONE: none) that the windows do not hold: the windows through
 * both cells count it as they are read. */
static int four_at(threat_query_t *q, int c, int p, int cell, int color, unsigned dirs,
                   int *out)
{
    board_t *b = &q->b;
    int size = b->size, px = p % size, py = p / size, n = 0;
    int want = c == STONE_BLACK ? WSTATE(3, 0) : WSTATE(0, 3);
    bool exact = !overline_wins(b, c);
    uint32_t windows = q->lines.cls[p] & THREAT_FIELD_MASK(c, 3);
    if (cell != MOVE_NONE && color == c)   /* a window of two and that stone makes three */
        windows |= q->lines.cls[p] & THREAT_FIELD_MASK(c, 2);
    if (!windows)
        return 0;   /* no window of three of c's stones through p: no four */
    /* cell's offset from p, on no line through p when it is more than
     * four away (or MOVE_NONE) */
    int cdx = 99, cdy = 99;
    if (cell != MOVE_NONE) {
        cdx = cell % size - px;
        cdy = cell / size - py;
    }
    uint8_t was = cell != MOVE_NONE ? b->cells[cell] : STONE_EMPTY;
    if (cell != MOVE_NONE)
        b->cells[cell] = (uint8_t)color;   /* for the gaps and the run checks */
    if (exact)
        b->cells[p] = (uint8_t)c;   /* for the run checks */
    for (int d = 0; d < NDIRS; d++) {
        if (!(dirs >> d & 1))
            continue;
        int dx = line_dx[d], dy = line_dy[d], step = dy * size + dx;
        int lo, hi, k = dx ? cdx : cdy;   /* cell = p + k * step, when on this line */
        if (cdx != k * dx || cdy != k * dy || k < -4 || k > 4)
            k = 99;
        window_span(size, px, py, dx, dy, &lo, &hi);
        for (int s0 = lo, first = p + lo * step; s0 <= hi; s0++, first += step) {
            int st = q->lines.n[d][first];
            if (k >= s0 && k <= s0 + 4)
                st += state_step[color];
            if (st != want)
                continue;
            int e = first, j = 0;   /* the window's other empty cell */
            for (; j < 5 && (e == p || b->cells[e] != STONE_EMPTY); j++, e += step)
                ;
            if (j == 5)
                continue;
            if (exact && !rule_is_five(b->rule, c,
                                       board_run_length(b, e % size, e / size, dx, dy, c)))
                continue;
            int i = 0;   /* windows of one direction can share a gap (XXX_X_ and _XXX_X) */
            while (i < n && out[i] != e)
                i++;
            if (i == n)
                out[n++] = e;
        }
    }
    if (exact)
        b->cells[p] = STONE_EMPTY;
    if (cell != MOVE_NONE)
        b->cells[cell] = was;
    return n;
}

int threat_four_at(threat_query_t *q, int c, int p, int *out)
{
    return four_at(q, c, p, MOVE_NONE, 0, 15, out);
}

int threat_four_at_with(threat_query_t *q, int c, int p, int cell, int color, int *out)
{
    return four_at(q, c, p, cell, color, 15, out);
}

int threat_four_at_dir(threat_query_t *q, int c, int p, int d, int cell, int color, int *out)
{
    return four_at(q, c, p, cell, color, 1u << d, out);
}

int threat_dir_of(int size, int p, int cell)
{
    int dx = cell % size - p % size, dy = cell / size - p / size;
    if (cell == p || dx < -4 || dx > 4 || dy < -4 || dy > 4)
        return -1;
    if (dy == 0)
        return 0;
    if (dx == 0)
        return 1;
    return dx == dy ? 2 : dx == -dy ? 3 : -1;
}

int threat_window_empties_at(const threat_query_t *q, int p, int c, int own, int *out)
{
    const board_t *b = &q->b;
    int size = b->size, px = p % size, py = p / size, n = 0;
    int want = c == STONE_BLACK ? WSTATE(own, 0) : WSTATE(0, own);
    for (int d = 0; d < NDIRS; d++) {
        int dx = line_dx[d], dy = line_dy[d], step = dy * size + dx, lo, hi;
        window_span(size, px, py, dx, dy, &lo, &hi);
        for (int s0 = lo, first = p + lo * step; s0 <= hi; s0++, first += step) {
            if (q->lines.n[d][first] != want)
                continue;
            for (int k = 0, e = first; k < 5; k++, e += step) {
                if (e == p || b->cells[e] != STONE_EMPTY)
                    continue;
                int i = 0;
                while (i < n && out[i] != e)
                    i++;
                if (i == n)
                    out[n++] = e;
            }
        }
    }
    return n;
}

int threat_fours(threat_query_t *q, int c, threat_four_t *out)
{
    int cand[BOARD_CELLS], f[8];
    uint32_t fives = THREAT_FIELD_MASK(c, 4);
    int n = threat_window_points(q, c, 3, cand), kept = 0;
    for (int i = 0; i < n; i++) {
        int p = cand[i];
        if ((q->lines.cls[p] & fives) && board_makes_five(&q->b, p, c))
            continue;
        int nf = threat_four_at(q, c, p, f);
        if (nf == 0)
            continue;
        out[kept++] = (threat_four_t){.move = p, .nf = nf, .f = {f[0], nf > 1 ? f[1] : MOVE_NONE}};
    }
    return kept;
}

/* ---- queries --------------------------------------------------------- */

static void query_start(threat_query_t *q, uint64_t max_nodes, double time_ms)
{
    const board_t *b = &q->b;
    q->att = b->to_move;
    q->def = STONE_BLACK + STONE_WHITE - b->to_move;
    q->salt = ((uint64_t)b->size * 0x9e3779b97f4a7c15ULL) ^
              ((uint64_t)(b->rule + 1) * 0xc2b2ae3d27d4eb4fULL);
    q->nodes = 0;
    q->max_nodes = max_nodes;
    q->deadline_ms = time_ms > 0.0 ? util_now_ms() + time_ms : 0.0;
    q->stop = NULL;
    q->aborted = false;
    q->nline = 0;
}

void threat_begin(threat_query_t *q, const board_t *b, uint64_t max_nodes, double time_ms)
{
    q->b = *b;
    memset(&q->lines, 0, sizeof q->lines);
    for (int p = 0; p < b->size * b->size; p++)
        if (b->cells[p] != STONE_EMPTY)
            lines_update(q, p, b->cells[p], 1);
    query_start(q, max_nodes, time_ms);
}

void threat_begin_at(threat_query_t *q, const threat_query_t *at, uint64_t max_nodes,
                     double time_ms)
{
    q->b = at->b;
    q->lines = at->lines;
    query_start(q, max_nodes, time_ms);
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

int threat_block_four(const board_t *after, board_t *blocked)
{
    int me = after->to_move, pts[BOARD_CELLS];
    if (board_over(after) || line_five_points(after, me, pts) > 0 ||
        line_five_points(after, 3 - me, pts) != 1)
        return -1;
    *blocked = *after;
    return board_play(blocked, pts[0]) == MOVE_OK && !board_over(blocked);
}

void threat_mark(uint8_t *cand, const int *pts, int n)
{
    for (int i = 0; i < n; i++)
        cand[pts[i]] = 1;
}

int threat_candidates(const board_t *b, const int *line, int nline, int reach, uint8_t *cand,
                      int *out)
{
    for (int i = 0; i < nline; i++)
        line_mark_rays(b, line[i], reach, cand);
    int size = b->size, fx = nline ? line[0] % size : 0, fy = nline ? line[0] / size : 0, n = 0;
    for (int dist = 0; dist < size; dist++)   /* rings around the first threat */
        for (int m = 0; m < board_npoints(b); m++) {
            int dx = abs(m % size - fx), dy = abs(m / size - fy);
            if ((dx > dy ? dx : dy) == dist && cand[m] && board_check_move(b, m) == MOVE_OK)
                out[n++] = m;
        }
    return n;
}

int threat_defences(const board_t *b, const int *line, int nline, int reach, uint8_t *cand,
                    int passes, threat_wins_fn wins, void *ctx, int *out, uint8_t *unproven)
{
    int order[BOARD_CELLS], n = threat_candidates(b, line, nline, reach, cand, order);
    uint8_t verdict[BOARD_CELLS];
    memset(verdict, THREAT_HOLDS, sizeof verdict);   /* not a candidate: not a defence */
    for (int i = 0; i < n; i++)
        verdict[order[i]] = THREAT_OPEN;
    for (int pass = 0; pass < passes; pass++)
        for (int i = 0; i < n; i++) {
            int m = order[i];
            if (verdict[m] != THREAT_OPEN)
                continue;
            board_t after = *b;
            board_play(&after, m);
            verdict[m] = (uint8_t)wins(ctx, &after, pass);
        }
    int k = 0;
    for (int m = 0; m < board_npoints(b); m++) {
        if (unproven)
            unproven[m] = verdict[m] != THREAT_HOLDS && verdict[m] != THREAT_STOPPED;
        if (verdict[m] != THREAT_HOLDS)
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
        for (int d = 0; d < NDIRS; d++)
            for (int s0 = -4; s0 <= 0; s0++) {
                int empty[5];
                if (line_window_empties(b, c, mx + s0 * line_dx[d], my + s0 * line_dy[d], d,
                                        empty) != 5 - own)
                    continue;
                for (int i = 0; i < 5 - own; i++)
                    if (!seen[empty[i]]) {
                        seen[empty[i]] = 1;
                        out[n++] = empty[i];
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
