/* VCF solver; see vcf.h.
 *
 * Depth-first over the attacker's fours with iterative widening of
 * nothing: at each attacker position, first every four that wins at once
 * (two completion points, or one the defender may not play), then each
 * other four followed by its forced block, deeper. Fours are found from
 * the attacker's stones: a window of five cells on a line holding three
 * of its stones and two empty cells (no opponent stone, no wall) makes
 * both empty cells four candidates; each is then checked exactly with the
 * rule's five test (fives likewise from windows of four stones). Positions proven to have no VCF within d fours are
 * stored in a direct-mapped table keyed by Zobrist hash, size and rule. */
#include "engine/vcf.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/line.h"
#include "util/util.h"

typedef struct tt_entry {
    uint64_t key;
    uint32_t depth;   /* no VCF within this many fours; 0: empty */
    uint32_t pad;
} tt_entry_t;

struct vcf {
    tt_entry_t *tt;
    size_t tt_mask;
    board_t b;                  /* working copy of the query position */
    int attacker, defender;
    uint64_t salt;              /* size and rule in the table key */
    uint64_t nodes, max_nodes, total_nodes;
    double deadline_ms;         /* 0: none */
    bool aborted;
    int line[VCF_LINE_MAX];
    int nline;
};

/* A four candidate with its completion points (the fives it threatens). */
typedef struct four {
    int move;
    int nf;
    int f[2];   /* the first two completion points; nf may be larger */
} four_t;

vcf_t *vcf_create(size_t tt_bytes, char *err, size_t errlen)
{
    size_t n = 1;
    while (n * 2 * sizeof(tt_entry_t) <= tt_bytes)
        n *= 2;
    vcf_t *s = calloc(1, sizeof *s);
    if (!s)
        goto out_nomem;
    s->tt = calloc(n, sizeof *s->tt);
    if (!s->tt)
        goto out_free_solver;
    s->tt_mask = n - 1;
    return s;
out_free_solver:
    vcf_free(s);
out_nomem:
    snprintf(err, errlen, "out of memory for a VCF solver of %zu bytes", tt_bytes);
    return NULL;
}

void vcf_free(vcf_t *s)
{
    if (!s)
        return;
    free(s->tt);
    free(s);
}

void vcf_clear(vcf_t *s)
{
    memset(s->tt, 0, (s->tt_mask + 1) * sizeof *s->tt);
}

uint64_t vcf_nodes(const vcf_t *s) { return s->total_nodes; }

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

/* Empty cells that make a four for colour c, each with its completion
 * points; a point that would make a five is not listed. Returns the count. */
static int gen_fours(board_t *b, int c, four_t *out)
{
    int cand[BOARD_CELLS];
    int n = line_window_points(b, c, 3, cand), kept = 0;
    for (int i = 0; i < n; i++) {
        int p = cand[i], f[32];
        if (board_makes_five(b, p, c))
            continue;
        b->cells[p] = (uint8_t)c;
        int nf = board_five_points_near(b, c, p, f);
        b->cells[p] = STONE_EMPTY;
        if (nf == 0)
            continue;
        out[kept].move = p;
        out[kept].nf = nf;
        out[kept].f[0] = f[0];
        out[kept].f[1] = nf > 1 ? f[1] : MOVE_NONE;
        kept++;
    }
    return kept;
}

int vcf_four_points(const board_t *b, int color, int *out)
{
    board_t w = *b;
    four_t f[BOARD_CELLS];
    int n = gen_fours(&w, color, f);
    uint8_t is[BOARD_CELLS] = {0};
    for (int i = 0; i < n; i++)
        is[f[i].move] = 1;
    int k = 0;
    for (int p = 0; p < board_npoints(b); p++)
        if (is[p])
            out[k++] = p;
    return k;
}

static uint64_t tt_key(const vcf_t *s)
{
    return s->b.hash ^ s->salt;
}

static bool tt_no_vcf(const vcf_t *s, int depth)
{
    uint64_t k = tt_key(s);
    const tt_entry_t *e = &s->tt[k & s->tt_mask];
    return e->key == k && e->depth >= (uint32_t)depth;
}

static void tt_store(vcf_t *s, int depth)
{
    uint64_t k = tt_key(s);
    tt_entry_t *e = &s->tt[k & s->tt_mask];
    if (e->key == k && e->depth >= (uint32_t)depth)
        return;
    e->key = k;
    e->depth = (uint32_t)depth;
}

/* Order fours by distance to `near` (the attacker's previous four):
 * follow-up fours sit next to the last one. Insertion sort, n is small. */
static void sort_fours(four_t *f, int n, int near, int size)
{
    if (near < 0)
        return;
    int nx = near % size, ny = near / size, key[BOARD_CELLS];
    for (int i = 0; i < n; i++) {
        int dx = abs(f[i].move % size - nx), dy = abs(f[i].move / size - ny);
        key[i] = dx > dy ? dx : dy;
    }
    for (int i = 1; i < n; i++) {
        four_t t = f[i];
        int k = key[i], j = i;
        for (; j > 0 && key[j - 1] > k; j--) {
            f[j] = f[j - 1];
            key[j] = key[j - 1];
        }
        f[j] = t;
        key[j] = k;
    }
}

/* Can the defender (to move after the four at f->move) not block it? */
static bool four_unstoppable(vcf_t *s, const four_t *f)
{
    if (f->nf >= 2)
        return true;
    if (s->b.rule != RULE_RENJU || s->defender != STONE_BLACK)
        return false;
    board_play(&s->b, f->move);
    bool forbidden = board_check_move(&s->b, f->f[0]) != MOVE_OK;
    board_undo(&s->b);
    return forbidden;
}

/* Attacker to move in s->b with no five of its own; `threat` is the
 * defender's only five point (the attacker's four must take it) or
 * MOVE_NONE. Returns 1 with s->line[0..nline) from `ply` on, 0 when no
 * VCF within depth fours, -1 when the budget ran out. */
static int attack(vcf_t *s, int depth, int threat, int prev, int ply)
{
    if (s->max_nodes && s->nodes >= s->max_nodes) {
        s->aborted = true;
        return -1;
    }
    s->nodes++;
    if (s->deadline_ms > 0.0 && (s->nodes & 255) == 0 && util_now_ms() >= s->deadline_ms) {
        s->aborted = true;
        return -1;
    }
    if (tt_no_vcf(s, depth))
        return 0;

    four_t fours[BOARD_CELLS];
    int n = gen_fours(&s->b, s->attacker, fours);
    if (threat != MOVE_NONE) {
        int k = 0;
        for (int i = 0; i < n; i++)
            if (fours[i].move == threat)
                fours[k++] = fours[i];
        n = k;
    }
    /* Drop illegal fours (renju: black's forbidden points). */
    if (s->b.rule == RULE_RENJU && s->attacker == STONE_BLACK) {
        int k = 0;
        for (int i = 0; i < n; i++)
            if (!board_is_forbidden(&s->b, fours[i].move))
                fours[k++] = fours[i];
        n = k;
    }
    sort_fours(fours, n, prev, s->b.size);
    for (int i = 0; i < n; i++)
        if (four_unstoppable(s, &fours[i])) {
            s->line[ply] = fours[i].move;
            s->nline = ply + 1;
            return 1;
        }
    if (depth > 1) {
        for (int i = 0; i < n; i++) {
            int p = fours[i].move, q = fours[i].f[0];
            board_play(&s->b, p);
            board_play(&s->b, q);
            int t[32];
            int nt = board_five_points_near(&s->b, s->defender, q, t);
            int r = 0;
            if (nt <= 1) {
                s->line[ply] = p;
                s->line[ply + 1] = q;
                r = attack(s, depth - 1, nt ? t[0] : MOVE_NONE, p, ply + 2);
            }
            board_undo(&s->b);
            board_undo(&s->b);
            if (r != 0)
                return r;
        }
    }
    tt_store(s, depth);
    return 0;
}

static void begin(vcf_t *s, const board_t *b, const vcf_limits_t *lim)
{
    s->b = *b;
    s->attacker = b->to_move;
    s->defender = STONE_BLACK + STONE_WHITE - b->to_move;
    s->salt = ((uint64_t)b->size * 0x9e3779b97f4a7c15ULL) ^
              ((uint64_t)(b->rule + 1) * 0xc2b2ae3d27d4eb4fULL);
    s->nodes = 0;
    s->max_nodes = lim ? lim->nodes : 0;
    s->deadline_ms = lim && lim->time_ms > 0.0 ? util_now_ms() + lim->time_ms : 0.0;
    s->aborted = false;
    s->nline = 0;
}

vcf_status_t vcf_solve(vcf_t *s, const board_t *b, const vcf_limits_t *lim, vcf_result_t *out)
{
    int max_fours = lim && lim->max_fours > 0 && lim->max_fours < VCF_MAX_FOURS
                        ? lim->max_fours : VCF_MAX_FOURS;
    begin(s, b, lim);
    vcf_status_t st = VCF_NONE;
    int five[BOARD_CELLS], threat[BOARD_CELLS];
    if (board_over(b))
        goto out_report;
    if (line_five_points(b, s->attacker, five) > 0) {
        s->line[0] = five[0];
        s->nline = 1;
        st = VCF_WIN;
        goto out_report;
    }
    int nt = line_five_points(b, s->defender, threat);
    if (nt >= 2)
        goto out_report;
    int r = attack(s, max_fours, nt ? threat[0] : MOVE_NONE, MOVE_NONE, 0);
    st = r > 0 ? VCF_WIN : r < 0 ? VCF_UNKNOWN : VCF_NONE;
out_report:
    s->total_nodes += s->nodes;
    if (out) {
        out->status = st;
        out->nodes = s->nodes;
        out->nline = st == VCF_WIN ? s->nline : 0;
        out->nfours = st == VCF_WIN ? (s->nline + 1) / 2 : 0;
        if (st == VCF_WIN && s->nline == 1 && board_makes_five(b, s->line[0], s->attacker))
            out->nfours = 0;
        memcpy(out->line, s->line, (size_t)out->nline * sizeof out->line[0]);
    }
    return st;
}

int vcf_defend(vcf_t *s, const board_t *b, const vcf_limits_t *lim, int *out,
               vcf_result_t *threat)
{
    vcf_result_t r;
    if (board_over(b))
        return -1;
    board_t flip = *b;
    board_pass(&flip);
    if (vcf_solve(s, &flip, lim, &r) != VCF_WIN)
        return -1;
    if (threat)
        *threat = r;

    int npts = board_npoints(b);
    uint8_t cand[BOARD_CELLS] = {0};
    int pts[BOARD_CELLS];
    int n = board_five_points(b, b->to_move, pts);
    for (int i = 0; i < n; i++)
        cand[pts[i]] = 1;
    n = vcf_four_points(b, b->to_move, pts);
    for (int i = 0; i < n; i++)
        cand[pts[i]] = 1;
    for (int i = 0; i < r.nline; i++)
        line_mark_rays(b, r.line[i], 4, cand);
    int k = 0;
    for (int m = 0; m < npts; m++) {
        if (!cand[m] || board_check_move(b, m) != MOVE_OK)
            continue;
        board_t after = *b;
        board_play(&after, m);
        if (vcf_solve(s, &after, lim, NULL) != VCF_WIN)
            out[k++] = m;
    }
    return k;
}
