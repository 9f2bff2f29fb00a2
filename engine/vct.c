/* VCT solver; see vct.h.
 *
 * Both searches walk the same AND/OR graph. An attacker position (OR)
 * with d moves left: a five wins; two defender fives lose; d = 0 loses;
 * then the VCF solver (max d fours, a small node budget) proves the fast
 * wins, and with it a VCF of one four settles d = 1 exactly. Otherwise
 * the children are the attacker's threats: when the defender has a four,
 * only its block; else every four (a child "four + forced block", d - 1)
 * and every three (a defender position, d - 1). Fours come from the VCF
 * module's window scan; threes from the cells that make a window of five
 * with three of the attacker's stones and two empty cells, kept when one
 * of those empty cells is a winning four. With no winning four on the
 * board before the move (the VCF check saw none), a new one must lie in
 * such a window with the move, so outside renju this finds every three.
 *
 * A defender position (AND) facing a three: the defender's VCF refutes
 * it at once; otherwise the children are its fours and the points that
 * leave the attacker no winning four (see vct.h for why that set is
 * complete). Outside renju a defender stone can only spoil the winning
 * fours it touches, so a point must lie on the lines through every one of
 * them and is checked on those points alone; in renju the lines of any
 * of them (and of their five points) are tried and the check is global.
 *
 * The table maps (position, attacker) to "won within w" (with the winning
 * move) and "not won within n" attacker moves, exact whatever the
 * budgets, so both searches and all queries share it. The proof-number
 * search keeps its tree in a node pool with the children of a node
 * contiguous; the depth-first search keeps its candidate lists on a
 * stack of one list per ply. The line is read from the tree where it has
 * one and from the table's winning moves elsewhere, rebuilt by a
 * depth-first re-solve where the table lost an entry. */
#include "engine/vct.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/line.h"
#include "engine/threat.h"
#include "util/util.h"
#include "engine/vcf.h"

#define PLY_MAX (2 * VCT_MAX_DEPTH + 4)
#define PN_INF 0x3fffffffu
#define MIN_BYTES ((size_t)64 << 10)

enum { EV_OPEN = 0, EV_WIN, EV_LOSS, EV_ABORT };
enum { KIND_FOUR, KIND_THREE, KIND_REPLY, KIND_COUNTER };   /* COUNTER: a defender's four */

typedef struct tt_entry {
    uint64_t key;
    uint8_t win;      /* won within this many attacker moves; 0: not known */
    uint8_t nowin;    /* not won within this many; 0: not known */
    int16_t best;     /* attacker positions won: the winning move */
    uint32_t pad;
} tt_entry_t;

/* A child: the attacker's four with the defender's forced block, the
 * attacker's three, or a defender's reply. */
typedef struct cand {
    int16_t move, block;
    uint8_t kind;
} cand_t;

typedef struct pn_node {
    uint32_t pn, dn;
    uint32_t child;     /* first child in the pool; 0: not expanded */
    uint16_t nchild;
    int16_t move, block;
    uint8_t depth;      /* attacker moves left */
    uint8_t and_node;   /* the defender is to move */
} pn_node_t;

struct vct {
    tt_entry_t *tt;
    size_t tt_mask;
    pn_node_t *pool;
    uint32_t pool_cap, pool_used;
    cand_t *stack;              /* PLY_MAX lists of BOARD_CELLS candidates */
    vcf_t *vcf;
    uint64_t vcf_nodes;         /* budget of each inner VCF check */
    threat_query_t q;           /* salt: also the attacker */
    int reply_depth;            /* vct_solve_reply calls in progress (a chain of fours) */
    uint64_t defend_end;        /* the outermost defence in progress stops solving once
                                 * q.total_nodes reaches this (0: no bound) */
    uint64_t learned;           /* table entries made or improved (pn_search's restarts) */
    uint64_t solves;            /* vct_solve calls so far (vct_solves) */
    /* the attacker's five points through each cell along each line, as
     * threat_four_at_dir counts them on the board of one expand_or (its
     * stamp), filled as makes_three asks */
    uint64_t dir_stamp;
    struct dir_fives {
        uint64_t stamp;
        int8_t nf[NDIRS];
    } dir_fives[BOARD_CELLS];
};

vct_t *vct_create(size_t tt_bytes, char *err, size_t errlen)
{
    if (tt_bytes < MIN_BYTES)
        tt_bytes = MIN_BYTES;
    vct_t *s = calloc(1, sizeof *s);
    if (!s)
        goto out_nomem;
    s->tt = threat_table_alloc(tt_bytes / 4, sizeof *s->tt, &s->tt_mask);
    size_t pool = tt_bytes / 2 / sizeof(pn_node_t);
    s->pool_cap = pool > UINT32_MAX ? UINT32_MAX : (uint32_t)pool;
    s->pool = malloc(sizeof *s->pool * s->pool_cap);
    s->stack = malloc(sizeof *s->stack * PLY_MAX * BOARD_CELLS);
    if (!s->tt || !s->pool || !s->stack)
        goto out_free_solver;
    s->vcf = vcf_create(tt_bytes / 4, err, errlen);
    if (!s->vcf)
        goto out_free_solver;
    return s;
out_free_solver:
    vct_free(s);
out_nomem:
    snprintf(err, errlen, "out of memory for a VCT solver of %zu bytes", tt_bytes);
    return NULL;
}

void vct_free(vct_t *s)
{
    if (!s)
        return;
    vcf_free(s->vcf);
    free(s->stack);
    free(s->pool);
    free(s->tt);
    free(s);
}

void vct_clear(vct_t *s)
{
    memset(s->tt, 0, (s->tt_mask + 1) * sizeof *s->tt);
    vcf_clear(s->vcf);
}

uint64_t vct_nodes(const vct_t *s) { return s->q.total_nodes; }
uint64_t vct_solves(const vct_t *s) { return s->solves; }

/* Table: two-way buckets, the newer entry first. */

static uint64_t key_after(const vct_t *s, int m1, int c1, int m2)
{
    int size = s->q.b.size;
    uint64_t h = s->q.b.hash ^ s->q.salt;
    if (m1 != MOVE_NONE)
        h ^= zobrist_stone(c1, m1 % size, m1 / size) ^ zobrist_side();
    if (m2 != MOVE_NONE)
        h ^= zobrist_stone(STONE_BLACK + STONE_WHITE - c1, m2 % size, m2 / size) ^ zobrist_side();
    return h;
}

static tt_entry_t *tt_find(vct_t *s, uint64_t key)
{
    tt_entry_t *e = &s->tt[key & s->tt_mask & ~(size_t)1];
    return e[0].key == key ? &e[0] : e[1].key == key ? &e[1] : NULL;
}

/* EV_WIN, EV_LOSS or EV_OPEN for `key` with depth attacker moves left. */
static int tt_probe(vct_t *s, uint64_t key, int depth)
{
    const tt_entry_t *e = tt_find(s, key);
    if (!e)
        return EV_OPEN;
    if (e->win && e->win <= depth)
        return EV_WIN;
    return e->nowin >= depth ? EV_LOSS : EV_OPEN;
}

static void tt_store(vct_t *s, uint64_t key, int depth, int result, int best)
{
    tt_entry_t *e = tt_find(s, key);
    if (!e) {
        e = &s->tt[key & s->tt_mask & ~(size_t)1];
        e[1] = e[0];
        memset(e, 0, sizeof *e);
        e->key = key;
        e->best = MOVE_NONE;
    }
    if (result == EV_WIN && (!e->win || depth < e->win)) {
        e->win = (uint8_t)depth;
        e->best = (int16_t)best;
        s->learned++;
    } else if (result == EV_LOSS && depth > e->nowin) {
        e->nowin = (uint8_t)depth;
        s->learned++;
    }
}

static uint64_t key_here(const vct_t *s) { return key_after(s, MOVE_NONE, 0, MOVE_NONE); }

/* Point queries on the working board; stones are put in and taken out
 * of cells directly (hash and history untouched) for one test. */

static bool black_forbidden(board_t *b, int p)
{
    uint8_t t = b->to_move;
    b->to_move = STONE_BLACK;
    bool f = board_is_forbidden(b, p);
    b->to_move = t;
    return f;
}

static bool may_play(board_t *b, int c, int p)
{
    if (b->cells[p] != STONE_EMPTY)
        return false;
    return b->rule != RULE_RENJU || c != STONE_BLACK || !black_forbidden(b, p);
}

/* Would c's stone at the empty point p make a four the opponent cannot
 * stop (two five points, or renju: one that black may not play)? c has
 * no five point on b. With `cell` (not MOVE_NONE; outside renju only), as
 * if a stone of `color` stood there too (threat_four_at_with). */
static bool winning_four_with(threat_query_t *q, int c, int p, int cell, int color)
{
    board_t *b = &q->b;
    /* each five point of the four is the gap of a window of three of c's
     * stones through p (with c's stone at cell, also of two): two need two
     * such windows, unless a single five point can win (renju: white's
     * four whose block is forbidden) */
    uint32_t cls = q->lines.cls[p];
    uint32_t threes = (cls & THREAT_FIELD_MASK(c, 3)) / THREAT_FIELD(c, 3);
    if (cell != MOVE_NONE && color == c)
        threes += (cls & THREAT_FIELD_MASK(c, 2)) / THREAT_FIELD(c, 2);
    bool one_wins = b->rule == RULE_RENJU && c == STONE_WHITE;
    assert(cell == MOVE_NONE || b->rule != RULE_RENJU);
    if (threes < (one_wins ? 1u : 2u) || p == cell || !may_play(b, c, p))
        return false;
    int f[8];
    int nf = threat_four_at_with(q, c, p, cell, color, f);
    if (nf != 1 || !one_wins)
        return nf >= 2;
    b->cells[p] = (uint8_t)c;
    bool win = black_forbidden(b, f[0]);
    b->cells[p] = STONE_EMPTY;
    return win;
}

static bool winning_four_at(threat_query_t *q, int c, int p)
{
    return winning_four_with(q, c, p, MOVE_NONE, 0);
}

/* c's winning-four points on the whole board; returns the count. */
static int winning_points(threat_query_t *q, int c, int *out)
{
    int cand[BOARD_CELLS];
    int n = threat_window_points(q, c, 3, cand), k = 0;
    for (int i = 0; i < n; i++)
        if (winning_four_at(q, c, cand[i]))
            out[k++] = cand[i];
    return k;
}

/* vcf_solve_at on the VCT's query, stopped by the VCT's stop flag too: a
 * VCF cut short by it aborts the VCT (its "no VCF" would be no answer). */
static vcf_status_t vcf_here(vct_t *s, const vcf_limits_t *vl, vcf_result_t *vr)
{
    vcf_status_t st = vcf_solve_at(s->vcf, &s->q, vl, vr);
    if (st != VCF_WIN && s->q.stop && __atomic_load_n(s->q.stop, __ATOMIC_RELAXED) != 0)
        s->q.aborted = true;
    return st;
}

/* c's four points, ascending (vcf_four_points on the query's board). */
static int four_points(threat_query_t *q, int c, int *out)
{
    threat_four_t f[BOARD_CELLS];
    int n = threat_fours(q, c, f);
    for (int i = 0; i < n; i++)
        out[i] = f[i].move;
    return n;
}

/* c's five points through the empty cell p on each line (threat_four_at_
 * dir), from s->dir_fives while the board is the one of its stamp. */
static const int8_t *dir_fives(vct_t *s, int c, int p)
{
    struct dir_fives *m = &s->dir_fives[p];
    if (m->stamp != s->dir_stamp) {
        int f[8];
        for (int d = 0; d < NDIRS; d++)
            m->nf[d] = (int8_t)threat_four_at_dir(&s->q, c, p, d, MOVE_NONE, 0, f);
        m->stamp = s->dir_stamp;
    }
    return m->nf;
}

/* Would c's stone at the empty point m make a three: a winning-four
 * point in a window of five through m holding three of c's stones (m's
 * among them) and two empty cells? Outside renju the stone is not put
 * in: the windows of two through m are read, and the four tests count
 * the stone as they read them, on m's line alone: the five points of the
 * other lines through such a point do not see m and come from
 * dir_fives (c is the attacker, the board that of the stamp). Renju's
 * forbidden checks need the stone in. */
static bool makes_three(vct_t *s, int c, int m)
{
    threat_query_t *q = &s->q;
    bool three = false;
    int e[80], ne, f[8];
    if (q->b.rule == RULE_RENJU) {
        threat_put(q, m, c);
        ne = threat_window_empties_at(q, m, c, 3, e);
        for (int i = 0; i < ne && !three; i++)
            three = winning_four_at(q, c, e[i]);
        threat_take(q, m);
        return three;
    }
    ne = threat_window_empties_at(q, m, c, 2, e);
    for (int i = 0; i < ne && !three; i++) {
        /* winning_four_with(q, c, e[i], m, c), its four counted line by line */
        uint32_t cls = q->lines.cls[e[i]];
        uint32_t threes = (cls & THREAT_FIELD_MASK(c, 3)) / THREAT_FIELD(c, 3) +
                          (cls & THREAT_FIELD_MASK(c, 2)) / THREAT_FIELD(c, 2);
        if (threes < 2)
            continue;
        int d0 = threat_dir_of(q->b.size, e[i], m);   /* e[i] shares a window with m */
        assert(d0 >= 0);
        int nf = threat_four_at_dir(q, c, e[i], d0, m, c, f);
        if (nf < 2) {
            const int8_t *nd = dir_fives(s, c, e[i]);
            for (int d = 0; d < NDIRS; d++)
                nf += d != d0 ? nd[d] : 0;
        }
        three = nf >= 2;
    }
    return three;
}

/* The attacker's move m (legal, not a five) as a child: a four (with the
 * block; *win when the block is impossible), a three, or no threat. The
 * check after a block of a counter-four is global: the three it keeps
 * may be an old one. Returns 0 for no threat, else 1 with *win set or,
 * when it is not a win at once, *out. */
static int classify(vct_t *s, int m, bool global, cand_t *out, bool *win)
{
    threat_query_t *q = &s->q;
    int f[BOARD_CELLS];
    *win = false;
    int nf = threat_four_at(q, q->att, m, f);
    int kind = -1;
    if (nf >= 2) {
        *win = true;
    } else if (nf == 1) {   /* renju: the block may be forbidden with m */
        threat_put(q, m, q->att);
        *win = !may_play(&q->b, q->def, f[0]);
        threat_take(q, m);
        kind = KIND_FOUR;
    } else if (global) {
        threat_put(q, m, q->att);
        kind = winning_points(q, q->att, f) > 0 ? KIND_THREE : -1;
        threat_take(q, m);
    } else if (makes_three(s, q->att, m)) {
        kind = KIND_THREE;
    }
    if (*win || kind < 0)
        return *win;
    *out = (cand_t){.move = (int16_t)m, .block = (int16_t)(nf ? f[0] : MOVE_NONE),
                    .kind = (uint8_t)kind};
    return 1;
}

/* Chebyshev distance, for ordering threats near the last one first. */
static int dist(int a, int b, int size)
{
    int dx = abs(a % size - b % size), dy = abs(a / size - b / size);
    return dx > dy ? dx : dy;
}

/* Insertion sort of c[lo..hi) by distance to the point `near`, stable. */
static void sort_near(cand_t *c, int lo, int hi, int near, int size)
{
    for (int i = lo + 1; i < hi; i++) {
        cand_t t = c[i];
        int key = dist(t.move, near, size), j = i;
        for (; j > lo && dist(c[j - 1].move, near, size) > key; j--)
            c[j] = c[j - 1];
        c[j] = t;
    }
}

/* Attacker to move with depth moves left: EV_WIN (*win_move: a five, the
 * first move of a VCF, or a winning four), EV_LOSS, or EV_OPEN with the
 * children in out[0..*n), fours first, each group nearest the last move
 * first. */
static int expand_or(vct_t *s, int depth, cand_t *out, int *n, int *win_move)
{
    board_t *b = &s->q.b;
    int pts[BOARD_CELLS];
    *n = 0;
    s->dir_stamp++;   /* a new board for makes_three's dir_fives */
    if (threat_five_points(&s->q, s->q.att, pts) > 0) {
        *win_move = pts[0];
        return EV_WIN;
    }
    int nt = threat_five_points(&s->q, s->q.def, pts);
    if (nt >= 2 || depth == 0)
        return EV_LOSS;
    int forced = nt ? pts[0] : MOVE_NONE, fours[BOARD_CELLS];
    int nfours = four_points(&s->q, s->q.att, fours);
    vcf_limits_t vl = {.nodes = s->vcf_nodes, .max_fours = depth};
    vcf_result_t vr;
    if (nfours > 0 && vcf_here(s, &vl, &vr) == VCF_WIN) {   /* no four, no VCF */
        *win_move = vr.line[0];
        return EV_WIN;
    }
    /* A VCF of one four is decided in the VCF solver's first node. */
    if (depth == 1)
        return EV_LOSS;
    bool win;
    if (forced != MOVE_NONE) {
        if (may_play(b, s->q.att, forced) && classify(s, forced, true, &out[0], &win)) {
            if (win) {
                *win_move = forced;
                return EV_WIN;
            }
            *n = 1;
        }
        return *n ? EV_OPEN : EV_LOSS;
    }
    uint8_t four[BOARD_CELLS] = {0};
    int k = 0;
    for (int i = 0; i < nfours; i++) {
        four[fours[i]] = 1;
        if (may_play(b, s->q.att, fours[i]) && classify(s, fours[i], false, &out[k], &win)) {
            if (win) {
                *win_move = fours[i];
                return EV_WIN;
            }
            k++;
        }
    }
    nfours = k;
    int nc = threat_window_points(&s->q, s->q.att, 2, pts);
    for (int i = 0; i < nc; i++) {
        if (four[pts[i]] || !may_play(b, s->q.att, pts[i]) ||
            !classify(s, pts[i], false, &out[k], &win))
            continue;
        if (win) {   /* not reached: no four point is left here */
            *win_move = pts[i];
            return EV_WIN;
        }
        k++;
    }
    int last = b->nmoves >= 2 ? b->moves[b->nmoves - 2] : MOVE_NONE;
    if (last != MOVE_NONE) {   /* each group nearest the attacker's last move first */
        sort_near(out, 0, nfours, last, b->size);
        sort_near(out, nfours, k, last, b->size);
    }
    *n = k;
    return k ? EV_OPEN : EV_LOSS;
}

/* The defender's replies to the attacker's winning-four points w[0..nw)
 * on b (defender to move, no five point for either side): the points
 * that leave the attacker no winning four, then the defender's own fours
 * fours[0..nf) it may play, into out; returns the count. */
static int three_replies(threat_query_t *tq, int att, int def, const int *w, int nw,
                         const int *fours, int nf, int *out, int *nblocks)
{
    board_t *b = &tq->b;
    int npts = board_npoints(b), pts[BOARD_CELLS];
    bool renju = b->rule == RULE_RENJU;
    uint8_t cnt[BOARD_CELLS] = {0}, taken[BOARD_CELLS] = {0};
    for (int i = 0; i < nw; i++) {
        if (!renju) {
            line_mark_rays(b, w[i], 4, cnt);
            continue;
        }
        line_mark_rays(b, w[i], 5, cnt);
        if (att == STONE_WHITE) {   /* black stones that make a five point playable */
            int f[32];
            int nfive = threat_four_at(tq, att, w[i], f);
            for (int j = 0; j < nfive; j++)
                line_mark_rays(b, f[j], 5, cnt);
        }
    }
    /* outside renju: the five points of each winning four, line by line */
    int8_t wdir[BOARD_CELLS][NDIRS];
    int wtot[BOARD_CELLS];
    for (int i = 0; i < nw && !renju; i++) {
        wtot[i] = 0;
        for (int d = 0; d < NDIRS; d++)
            wtot[i] += wdir[i][d] = (int8_t)threat_four_at_dir(tq, att, w[i], d, MOVE_NONE, 0, pts);
    }
    int need = renju ? 1 : nw < 255 ? nw : 255, k = 0;
    for (int q = 0; q < npts; q++) {
        if (cnt[q] < need || !may_play(b, def, q))
            continue;
        bool stops = true;
        if (renju) {
            threat_put(tq, q, def);
            stops = winning_points(tq, att, pts) == 0;
            threat_take(tq, q);
        } else {   /* winning_four_with(tq, att, w[i], q, def) for each i, the
                    * stone counted on its line through w[i] alone */
            for (int i = 0; i < nw && stops; i++) {
                if (q == w[i])
                    continue;   /* taken: that four is gone */
                int d = threat_dir_of(b->size, w[i], q), nf = wtot[i];
                if (d >= 0 && nf - wdir[i][d] < 2)
                    nf += threat_four_at_dir(tq, att, w[i], d, q, def, pts) - wdir[i][d];
                stops = nf < 2;
            }
        }
        if (stops) {
            out[k++] = q;
            taken[q] = 1;
        }
    }
    if (nblocks)
        *nblocks = k;
    for (int i = 0; i < nf; i++)
        if (!taken[fours[i]] && may_play(b, def, fours[i]))
            out[k++] = fours[i];
    return k;
}

/* Defender to move facing a three (the attacker has winning fours, no
 * five point): EV_LOSS (the defender's VCF, or no threat left), EV_WIN
 * (no reply stops it) or EV_OPEN with the replies in out[0..*n): the
 * points that leave no winning four, then the defender's other fours
 * (KIND_COUNTER), each group nearest the three first. */
static int expand_and(vct_t *s, cand_t *out, int *n)
{
    int w[BOARD_CELLS], fours[BOARD_CELLS], r[BOARD_CELLS];
    *n = 0;
    int nf = four_points(&s->q, s->q.def, fours);
    vcf_limits_t vl = {.nodes = s->vcf_nodes};
    if (nf > 0 && vcf_here(s, &vl, NULL) == VCF_WIN)
        return EV_LOSS;
    int nw = winning_points(&s->q, s->q.att, w);
    if (nw == 0)
        return EV_LOSS;
    int nb, k = three_replies(&s->q, s->q.att, s->q.def, w, nw, fours, nf, r, &nb);
    for (int i = 0; i < k; i++)
        out[i] = (cand_t){.move = (int16_t)r[i], .block = MOVE_NONE,
                          .kind = i < nb ? KIND_REPLY : KIND_COUNTER};
    const board_t *b = &s->q.b;
    sort_near(out, 0, nb, b->moves[b->nmoves - 1], b->size);   /* nearest the three first */
    sort_near(out, nb, k, b->moves[b->nmoves - 1], b->size);
    *n = k;
    return k ? EV_OPEN : EV_WIN;
}

static int three_defences(threat_query_t *q, int *out);

int vct_three_defences(const board_t *b, int *out)
{
    if (board_over(b))
        return -1;
    threat_query_t q;
    threat_begin(&q, b, 0, 0.0);
    return three_defences(&q, out);
}

int vct_three_defences_vcf(const vcf_t *s, int *out)
{
    const threat_query_t *at = vcf_query(s);
    if (board_over(&at->b))
        return -1;
    threat_query_t q;
    threat_begin_at(&q, at, 0, 0.0);
    return three_defences(&q, out);
}

/* vct_three_defences on the position of q. */
static int three_defences(threat_query_t *q, int *out)
{
    const board_t *b = &q->b;
    int me = b->to_move, opp = 3 - me, pts[BOARD_CELLS], fours[BOARD_CELLS];
    if (threat_five_points(q, me, pts) > 0 || threat_five_points(q, opp, pts) > 0)
        return -1;
    int nw = winning_points(q, opp, pts);
    if (nw == 0)
        return -1;
    int nf = four_points(q, me, fours);
    return three_replies(q, opp, me, pts, nw, fours, nf, out, NULL);
}

int vct_three_blocks(const board_t *b, int *out)
{
    if (board_over(b))
        return 0;
    threat_query_t q;
    threat_begin(&q, b, 0, 0.0);
    int me = b->to_move, fours[BOARD_CELLS];
    int n = winning_points(&q, 3 - me, out), nf = four_points(&q, me, fours);
    uint8_t seen[BOARD_CELLS] = {0};
    for (int i = 0; i < n; i++)
        seen[out[i]] = 1;
    for (int i = 0; i < nf; i++)
        if (!seen[fours[i]]) {
            seen[fours[i]] = 1;
            out[n++] = fours[i];
        }
    return n;
}

/* Play a child's moves on the working board; returns how many. */
static int play_cand(vct_t *s, const cand_t *c)
{
    threat_play(&s->q, c->move);
    if (c->kind != KIND_FOUR)
        return 1;
    threat_play(&s->q, c->block);
    return 2;
}

static void undo_n(vct_t *s, int n)
{
    while (n-- > 0)
        threat_undo(&s->q);
}

/* Depth-first search of the working board, an attacker position (a
 * defender one when and_node) with depth attacker moves left. */
static int dfs(vct_t *s, int depth, bool and_node, int ply)
{
    uint64_t key = key_here(s);
    int r = tt_probe(s, key, depth);
    if (r != EV_OPEN)
        return r;
    if (threat_over_budget(&s->q, 15))
        return EV_ABORT;
    s->q.nodes++;
    cand_t *c = s->stack + (size_t)ply * BOARD_CELLS;
    int n, win = MOVE_NONE;
    assert(ply < PLY_MAX);
    r = and_node ? expand_and(s, c, &n) : expand_or(s, depth, c, &n, &win);
    if (r != EV_OPEN) {
        tt_store(s, key, depth, r, win);
        return r;
    }
    int decisive = and_node ? EV_LOSS : EV_WIN;   /* one such child decides */
    for (int i = 0; i < n; i++) {
        int played = play_cand(s, &c[i]);
        r = dfs(s, and_node ? depth : depth - 1, c[i].kind == KIND_THREE, ply + 1);
        undo_n(s, played);
        if (r == decisive) {
            tt_store(s, key, depth, r, and_node ? MOVE_NONE : c[i].move);
            return r;
        }
        if (r == EV_ABORT)
            return r;
    }
    r = and_node ? EV_WIN : EV_LOSS;
    tt_store(s, key, depth, r, MOVE_NONE);
    return r;
}

/* Iterative deepening from the working board (an attacker position, or
 * a defender one when and_node) up to depth. */
static int dfs_iterate(vct_t *s, int depth, bool and_node, int ply)
{
    int r = EV_LOSS;
    for (int d = 1; d <= depth && r == EV_LOSS; d++)
        r = dfs(s, d, and_node, ply);
    return r;
}

/* Proof-number search. */

static void pn_set(pn_node_t *v, int r)
{
    v->pn = r == EV_WIN ? 0 : PN_INF;
    v->dn = r == EV_WIN ? PN_INF : 0;
}

/* Expand the pool node v at the working board: solve it or give it
 * children, their numbers from the table when it knows them. Returns
 * EV_ABORT when the pool is full. */
static int pn_expand(vct_t *s, uint32_t v, int ply)
{
    pn_node_t *nd = &s->pool[v];
    cand_t *c = s->stack + (size_t)ply * BOARD_CELLS;
    int n, win = MOVE_NONE, depth = nd->depth;
    uint64_t key = key_here(s);
    s->q.nodes++;
    int r = nd->and_node ? expand_and(s, c, &n) : expand_or(s, depth, c, &n, &win);
    if (r != EV_OPEN) {
        tt_store(s, key, depth, r, win);
        pn_set(nd, r);
        return r;
    }
    if (s->pool_cap - s->pool_used < (uint32_t)n)
        return EV_ABORT;   /* the pool is full (pn_search) */
    nd->child = s->pool_used;
    nd->nchild = (uint16_t)n;
    s->pool_used += (uint32_t)n;
    for (int i = 0; i < n; i++) {
        pn_node_t *ch = &s->pool[nd->child + i];
        int cd = nd->and_node ? depth : depth - 1;
        /* An attacker's four starts at proof number 2, its threes at 1:
         * the VCF check at each attacker node has already followed lines
         * of fours, so a proof the check missed more often starts with a
         * three. Over 657 positions of our games against PentaZen this
         * finds 9% more VCTs within 20,000 nodes (docs/BENCHMARKS.md).
         * Likewise a defender's four that blocks nothing starts at
         * disproof number 2: it refutes a three less often than a block. */
        *ch = (pn_node_t){.pn = !nd->and_node && c[i].kind == KIND_FOUR ? 2 : 1,
                          .dn = c[i].kind == KIND_COUNTER ? 2 : 1,
                          .move = c[i].move, .block = c[i].block, .depth = (uint8_t)cd,
                          .and_node = c[i].kind == KIND_THREE};
        int mover = nd->and_node ? s->q.def : s->q.att;
        int tr = tt_probe(s, key_after(s, c[i].move, mover, c[i].block), cd);
        if (tr != EV_OPEN)
            pn_set(ch, tr);
    }
    return EV_OPEN;
}

/* Recompute an expanded node's numbers from its children. */
static void pn_update(vct_t *s, pn_node_t *v)
{
    uint32_t sum = 0, min = PN_INF;
    for (uint32_t i = v->child; i < v->child + v->nchild; i++) {
        const pn_node_t *c = &s->pool[i];
        uint32_t add = v->and_node ? c->pn : c->dn, mn = v->and_node ? c->dn : c->pn;
        sum = sum + add >= PN_INF ? PN_INF : sum + add;
        if (mn < min)
            min = mn;
    }
    v->pn = v->and_node ? sum : min;
    v->dn = v->and_node ? min : sum;
}

/* The child to descend into: least proof number at attacker nodes, least
 * disproof number at defender nodes (the first of equals). */
static uint32_t pn_select(const vct_t *s, const pn_node_t *v)
{
    uint32_t best = v->child, bv = PN_INF + 1;
    for (uint32_t i = v->child; i < v->child + v->nchild; i++) {
        uint32_t x = v->and_node ? s->pool[i].dn : s->pool[i].pn;
        if (x < bv) {
            bv = x;
            best = i;
        }
    }
    return best;
}

/* The search keeps the board at the node it expanded last and, after
 * backing its numbers up, stops at the first ancestor whose numbers did
 * not change (the "current node" of Allis's search): the ancestors above
 * it are unchanged, so selection from the root would walk down to it
 * again, and the next descent starts there instead of at the root.
 *
 * When the node pool fills, the search starts again from a fresh root:
 * what it proved and disproved is in the table, which the new tree reads
 * as it expands (pn_expand), so each round goes on from the last one's
 * results, and the node and time budgets, not the pool, bound a solve.
 * A round that added nothing to the table would only repeat itself, so
 * then the solve gives up (unknown), as it does when the query has no
 * node or time budget to bound the rounds. */
static int pn_round(vct_t *s, int depth, bool *full)
{
    uint32_t path[PLY_MAX];
    int played[PLY_MAX], ply = 0, r = EV_OPEN;
    s->pool_used = 1;
    s->pool[0] = (pn_node_t){.pn = 1, .dn = 1, .move = MOVE_NONE, .block = MOVE_NONE,
                             .depth = (uint8_t)depth};
    int known = tt_probe(s, key_here(s), depth);
    if (known != EV_OPEN) {
        pn_set(&s->pool[0], known);
        return known;
    }
    path[0] = 0;
    while (s->pool[0].pn && s->pool[0].dn) {
        if (threat_over_budget(&s->q, 15)) {
            r = EV_ABORT;
            break;
        }
        while (s->pool[path[ply]].child) {
            uint32_t c = pn_select(s, &s->pool[path[ply]]);
            cand_t cd = {.move = s->pool[c].move, .block = s->pool[c].block,
                         .kind = s->pool[c].block != MOVE_NONE ? KIND_FOUR : KIND_REPLY};
            played[ply] = play_cand(s, &cd);
            path[++ply] = c;
            assert(ply < PLY_MAX);
        }
        if (pn_expand(s, path[ply], ply) == EV_ABORT) {
            r = EV_ABORT;
            *full = true;
            break;
        }
        for (bool leaf = true;; leaf = false) {
            pn_node_t *v = &s->pool[path[ply]];
            uint32_t pn = v->pn, dn = v->dn;
            if (v->child)
                pn_update(s, v);
            if (v->child && (v->pn == 0 || v->dn == 0)) {
                int best = MOVE_NONE;
                for (uint32_t i = v->child; !v->and_node && i < v->child + v->nchild; i++)
                    if (s->pool[i].pn == 0) {
                        best = s->pool[i].move;
                        break;
                    }
                tt_store(s, key_here(s), v->depth, v->pn == 0 ? EV_WIN : EV_LOSS, best);
            }
            if (ply == 0 || (!leaf && v->pn == pn && v->dn == dn))
                break;
            undo_n(s, played[--ply]);
        }
    }
    while (ply > 0)   /* back to the root's board */
        undo_n(s, played[--ply]);
    if (r == EV_ABORT)
        return r;
    return s->pool[0].pn == 0 ? EV_WIN : EV_LOSS;
}

static int pn_search(vct_t *s, int depth)
{
    for (;;) {
        uint64_t learned = s->learned;
        bool full = false;
        int r = pn_round(s, depth, &full);
        if (!full || threat_over_budget(&s->q, 15))
            return r;
        if (s->learned == learned || (!s->q.max_nodes && s->q.deadline_ms <= 0.0)) {
            s->q.aborted = true;   /* a round would repeat itself, or nothing bounds them */
            return EV_ABORT;
        }
    }
}

/* Start a query on b, its side to move attacking (the table key's salt
 * names the attacker). */
static void query_begin(vct_t *s, const board_t *b, uint64_t nodes, double time_ms)
{
    threat_begin(&s->q, b, nodes, time_ms);
    s->q.salt ^= s->q.att == STONE_BLACK ? 0x165667b19e3779f9ULL : 0;
}

/* The line. */

static void line_add(vct_t *s, int m)
{
    assert(s->q.nline < VCT_LINE_MAX);
    s->q.line[s->q.nline++] = m;
}

/* Continue the line from the working board (an attacker position with
 * depth moves left, or a defender one when and_node) known won within
 * depth, from the table's winning moves; where the table lost one, a
 * depth-first re-solve finds it again. Returns false when that ran out
 * of budget. Leaves the board where the line ends. */
static bool line_from_table(vct_t *s, int depth, bool and_node, int ply)
{
    for (; ply < PLY_MAX - 2; ply += 2) {
        int pts[BOARD_CELLS];
        cand_t *c = s->stack + (size_t)ply * BOARD_CELLS;
        if (and_node) {   /* the reply that holds out longest, by the table */
            int n, longest = -1;
            int r = expand_and(s, c, &n), pick = n ? c[0].move : MOVE_NONE;
            if (r == EV_LOSS)
                return false;
            for (int i = 0; i < n; i++) {
                const tt_entry_t *e = tt_find(s, key_after(s, c[i].move, s->q.def, MOVE_NONE));
                if (e && e->win && e->win <= depth && e->win > longest) {
                    longest = e->win;
                    pick = c[i].move;
                }
            }
            if (pick == MOVE_NONE) {   /* nothing stops it: block one winning four */
                winning_points(&s->q, s->q.att, pts);
                pick = pts[0];
            }
            line_add(s, pick);
            threat_play(&s->q, pick);
            and_node = false;
        }
        if (threat_five_points(&s->q, s->q.att, pts) > 0) {
            line_add(s, pts[0]);
            return true;
        }
        uint64_t key = key_here(s);
        const tt_entry_t *e = tt_find(s, key);
        if (e && e->win && e->win < depth)
            depth = e->win;   /* keep the line as short as the proof */
        vcf_limits_t vl = {.nodes = 100 * s->vcf_nodes, .max_fours = depth};
        vcf_result_t vr;
        if (vcf_here(s, &vl, &vr) == VCF_WIN) {
            for (int i = 0; i < vr.nline; i++)
                line_add(s, vr.line[i]);
            return true;
        }
        if (tt_probe(s, key, depth) != EV_WIN && dfs_iterate(s, depth, false, ply) != EV_WIN)
            return false;
        e = tt_find(s, key);
        if (!e || e->best == MOVE_NONE)
            return false;
        depth = e->win;
        cand_t cd;
        bool win;
        int m = e->best;
        line_add(s, m);
        if (!classify(s, m, true, &cd, &win) || win) {
            threat_play(&s->q, m);
            return win;
        }
        play_cand(s, &cd);
        if (cd.kind == KIND_FOUR)
            line_add(s, cd.block);
        and_node = cd.kind == KIND_THREE;
        depth--;
    }
    return false;
}

/* The line of a proof-number search's proof: down the tree (a proven
 * attacker child; the first reply at defender nodes), then the table
 * where the tree stops. */
static bool line_from_tree(vct_t *s)
{
    uint32_t v = 0;
    int ply = 0;
    while (s->pool[v].child) {
        const pn_node_t *nd = &s->pool[v];
        uint32_t c = nd->child;
        if (!nd->and_node)
            while (s->pool[c].pn != 0)
                c++;
        line_add(s, s->pool[c].move);
        threat_play(&s->q, s->pool[c].move);
        if (s->pool[c].block != MOVE_NONE) {
            line_add(s, s->pool[c].block);
            threat_play(&s->q, s->pool[c].block);
        }
        v = c;
        ply++;
    }
    return line_from_table(s, s->pool[v].depth, s->pool[v].and_node, ply);
}

vct_status_t vct_solve(vct_t *s, const board_t *b, const vct_limits_t *lim, vct_result_t *out)
{
    int depth = lim && lim->max_depth > 0 && lim->max_depth < VCT_MAX_DEPTH
                    ? lim->max_depth : VCT_MAX_DEPTH;
    bool dfs = lim && lim->algo == VCT_ALGO_DFS;
    s->solves++;
    query_begin(s, b, lim ? lim->nodes : 0, lim ? lim->time_ms : 0.0);
    s->q.stop = lim ? lim->stop : NULL;
    s->vcf_nodes = lim && lim->vcf_nodes ? lim->vcf_nodes : VCT_VCF_NODES;
    vct_status_t st = VCT_NONE;
    if (board_over(b))
        goto out_report;
    int r = dfs ? dfs_iterate(s, depth, false, 0) : pn_search(s, depth);
    st = r == EV_WIN ? VCT_WIN : r == EV_LOSS ? VCT_NONE : VCT_UNKNOWN;
    if (st != VCT_WIN)
        goto out_report;
    /* The line gets a budget of its own: the search may have spent its. */
    s->q.aborted = false;
    if (s->q.max_nodes)
        s->q.max_nodes = s->q.nodes + s->q.max_nodes;
    if (s->q.deadline_ms > 0.0)
        s->q.deadline_ms = util_now_ms() + lim->time_ms;
    bool ok = dfs ? line_from_table(s, depth, false, 0) : line_from_tree(s);
    if (!ok)
        st = VCT_UNKNOWN;
out_report:
    s->q.total_nodes += s->q.nodes;
    if (out) {
        out->status = st;
        out->nodes = s->q.nodes;
        out->nline = threat_line(&s->q, b, st == VCT_WIN, out->line, &out->nthreats);
    }
    return st;
}

/* Relevance zones. A proof that the attacker wins after the defender's
 * move m refutes the defender's other moves m2 too, unless m2 lies in the
 * proof's zone: the cells whose occupation by a defender stone could
 * change a node of the proof. The zone holds, at each node of the proof:
 *   - the cells its moves take (threats, blocks, replies);
 *   - the attacker's five points, and those of each four it plays;
 *   - at a defender node, each winning-four point of the attacker and
 *     the five points of the four it would make (a stone elsewhere
 *     leaves every winning four standing, so the replies that stop them
 *     all are the same);
 *   - every empty cell of a window of five with two or more of the
 *     defender's stones and none of the attacker's (a stone elsewhere
 *     gives the defender no new five point and no new four).
 * With the defender's stone at m2 outside the zone instead of m, the
 * attacker plays the proof's moves: each threat stands, each defender
 * reply is one of the proof's, and the defender's new option, m itself,
 * is a pass at a node of the proof after which the attacker's winning
 * four wins. The threat's own proof (the defender passed) refutes every
 * move outside its zone the same way. Outside renju only: there an empty
 * cell far away can make a point forbidden. The walk follows the table's
 * winning moves, the VCF solver where the table has none; a proof it
 * cannot walk within its budget gives no zone. */
#define ZONE_WALK_NODES 4096

struct zone_walk {
    uint8_t *zone;
    int left;   /* nodes the walk may still visit */
};

/* The node's defender windows, and the walk's budget. */
static bool zone_node(vct_t *s, struct zone_walk *w)
{
    int pts[BOARD_CELLS];
    if (w->left-- <= 0 || threat_over_budget(&s->q, 0))
        return false;
    for (int own = 2; own <= 4; own++)
        threat_mark(w->zone, pts, threat_window_points(&s->q, s->q.def, own, pts));
    return true;
}

/* The attacker's five points after its move m, with m. */
static void zone_four(vct_t *s, struct zone_walk *w, int m)
{
    int pts[BOARD_CELLS];
    w->zone[m] = 1;
    threat_mark(w->zone, pts, threat_five_points(&s->q, s->q.att, pts));
}

static bool zone_or(vct_t *s, struct zone_walk *w, int depth, int ply);

/* An attacker node won by the VCF solver within depth fours: the line's
 * fours, blocks and nodes. */
static bool zone_vcf(vct_t *s, struct zone_walk *w, int depth)
{
    vcf_limits_t vl = {.nodes = 100 * s->vcf_nodes, .max_fours = depth};
    vcf_result_t vr;
    if (vcf_here(s, &vl, &vr) != VCF_WIN)
        return false;
    int played = 0;
    bool ok = true;
    for (int i = 0; i < vr.nline && ok; i += 2) {
        ok = zone_node(s, w);
        threat_play(&s->q, vr.line[i]);
        zone_four(s, w, vr.line[i]);
        played++;
        if (i + 1 < vr.nline) {
            w->zone[vr.line[i + 1]] = 1;
            threat_play(&s->q, vr.line[i + 1]);
            played++;
        }
    }
    undo_n(s, played);
    return ok;
}

/* A defender node (facing a three) won within depth: every reply. */
static bool zone_and(vct_t *s, struct zone_walk *w, int depth, int ply)
{
    cand_t *c = s->stack + (size_t)ply * BOARD_CELLS;
    int n, pts[BOARD_CELLS], f[BOARD_CELLS];
    if (ply >= PLY_MAX - 1 || !zone_node(s, w))
        return false;
    if (expand_and(s, c, &n) == EV_LOSS)
        return false;
    int nw = winning_points(&s->q, s->q.att, pts);
    threat_mark(w->zone, pts, nw);
    for (int i = 0; i < nw; i++)
        threat_mark(w->zone, f, threat_four_at(&s->q, s->q.att, pts[i], f));
    bool ok = true;
    for (int i = 0; i < n && ok; i++) {
        w->zone[c[i].move] = 1;
        threat_play(&s->q, c[i].move);
        ok = zone_or(s, w, depth, ply + 1);
        threat_undo(&s->q);
    }
    return ok;
}

/* An attacker node won within depth: its winning move from the table. */
static bool zone_or(vct_t *s, struct zone_walk *w, int depth, int ply)
{
    int pts[BOARD_CELLS];
    if (ply >= PLY_MAX - 1 || !zone_node(s, w))
        return false;
    if (threat_five_points(&s->q, s->q.att, pts) > 0) {
        w->zone[pts[0]] = 1;
        return true;
    }
    const tt_entry_t *e = tt_find(s, key_here(s));
    if (!e || !e->win || e->win > depth || e->best == MOVE_NONE)
        return zone_vcf(s, w, depth);
    depth = e->win;
    cand_t cd;
    bool win;
    int m = e->best;
    if (!may_play(&s->q.b, s->q.att, m) || !classify(s, m, true, &cd, &win))
        return false;
    if (win) {   /* a four with two five points */
        threat_play(&s->q, m);
        zone_four(s, w, m);
        threat_undo(&s->q);
        return true;
    }
    bool ok;
    threat_play(&s->q, m);
    if (cd.kind == KIND_FOUR) {
        zone_four(s, w, m);   /* its five point is the block */
        threat_play(&s->q, cd.block);
        ok = zone_or(s, w, depth - 1, ply + 1);
        threat_undo(&s->q);
    } else {
        w->zone[m] = 1;
        ok = zone_and(s, w, depth - 1, ply + 1);
    }
    threat_undo(&s->q);
    return ok;
}

/* The zone of the proof vct_solve just found for b's side to move (its
 * winning entry is in the table): false when the walk cannot give one,
 * or when the stop flag (may be NULL) or the deadline (0: none) ends it
 * first: a walk does an inner VCF solve at each node the table does not
 * answer, and unbounded it outlasted a whole move (a move at 1 s took
 * 2.9 s, docs/BENCHMARKS.md). */
static bool proof_zone(vct_t *s, const board_t *b, uint8_t *zone, const volatile int *stop,
                       double deadline)
{
    if (b->rule == RULE_RENJU)
        return false;
    query_begin(s, b, 0, 0.0);
    s->q.deadline_ms = deadline;
    s->q.stop = stop;
    const tt_entry_t *e = tt_find(s, key_here(s));
    int depth = e && e->win ? e->win : VCT_MAX_DEPTH;
    struct zone_walk w = {.zone = zone, .left = ZONE_WALK_NODES};
    memset(zone, 0, BOARD_CELLS);
    return zone_or(s, &w, depth, 0);
}

/* threat_wins_fn of vct_defend: has the attacker a VCT after the
 * defence? Each candidate is solved with a growing node budget, pass by
 * pass, until a pass decides it; once the whole call's time is spent, the
 * rest count as defences. */
#define DEFEND_PASSES 3
#define DEFEND_MIN_NODES 64
#define DEFEND_ZONES 8
struct vct_threat {
    vct_t *s;
    vct_limits_t each;
    double deadline;   /* 0: none */
    bool any;          /* only whether a defence exists: once one is found, the rest are
                        * not solved (they count as defences) */
    bool defended;     /* a defence was found (any) */
    bool unsure;       /* a move counted as a defence without a proof (budget or time) */
    int nzones;        /* zones of the threat's proof and of refutations (proof_zone): a
                        * move outside one of them is refuted without a solve */
    uint8_t zone[DEFEND_ZONES][BOARD_CELLS];
};

static vct_status_t solve_reply(vct_t *s, const board_t *after, const vct_limits_t *lim,
                                vct_result_t *out, bool *plain);

static threat_verdict_t vct_verdict(struct vct_threat *t, const board_t *after, int pass)
{
    vct_limits_t lim = t->each;
    if (t->s->defend_end && t->s->q.total_nodes >= t->s->defend_end)
        return THREAT_OPEN;   /* the whole defence's nodes are spent */
    if (lim.stop && __atomic_load_n(lim.stop, __ATOMIC_RELAXED) != 0)
        return THREAT_OPEN;   /* the caller's stop: each solve would start only to give up */
    if (t->deadline > 0.0) {
        lim.time_ms = t->deadline - util_now_ms();
        if (lim.time_ms < 0.01)
            return THREAT_OPEN;
    }
    /* budgets of nodes/16, nodes/4, nodes: most refutations are short */
    int shift = 2 * (DEFEND_PASSES - 1 - pass);
    if (lim.nodes >> shift >= DEFEND_MIN_NODES)
        lim.nodes >>= shift;
    else if (lim.nodes > DEFEND_MIN_NODES)
        lim.nodes = DEFEND_MIN_NODES;
    bool plain;
    switch (solve_reply(t->s, after, &lim, NULL, &plain)) {
    case VCT_WIN:
        if (plain && !t->each.no_zones && t->nzones < DEFEND_ZONES &&
            proof_zone(t->s, after, t->zone[t->nzones], t->each.stop, t->deadline))
            t->nzones++;
        return THREAT_HOLDS;
    case VCT_NONE:
        return THREAT_STOPPED;
    default:
        if (lim.nodes)
            return THREAT_OPEN;
        t->unsure = true;
        return THREAT_UNSURE;
    }
}

static threat_verdict_t vct_still_wins(void *ctx, const board_t *after, int pass)
{
    struct vct_threat *t = ctx;
    int m = after->moves[after->nmoves - 1];
    for (int k = 0; k < t->nzones; k++)
        if (!t->zone[k][m])
            return THREAT_HOLDS;
    if (t->defended)
        return THREAT_UNSURE;   /* not solved: only whether a defence exists is asked */
    threat_verdict_t v = vct_verdict(t, after, pass);
    bool undecided = v == THREAT_OPEN && pass == DEFEND_PASSES - 1;
    t->unsure |= undecided;
    t->defended = t->any && (v == THREAT_STOPPED || v == THREAT_UNSURE || undecided);
    return v;
}

/* The defender's own candidates in b: its five points, and the points
 * where it would make a four or a three (counter-threats). */
static void own_candidates(const board_t *b, uint8_t *cand)
{
    int pts[BOARD_CELLS], me = b->to_move;
    threat_mark(cand, pts, line_five_points(b, me, pts));
    threat_mark(cand, pts, line_window_points(b, me, 2, pts));   /* new fours, threes */
    threat_mark(cand, pts, line_window_points(b, me, 3, pts));
}

static int defence_reach(const board_t *b) { return b->rule == RULE_RENJU ? 5 : 4; }

/* vct_defend_proven; any: stop looking after the first defence (the
 * count is then 0 or not, not the number of defences); *unsure (may be
 * NULL): the answer rests on a solve the budget cut short (the threat's,
 * or a move counted as a defence). */
static int defend_solved(vct_t *s, const board_t *b, struct vct_threat *t, int *out,
                         uint8_t *unproven, vct_result_t *threat, bool *unsure);

static int defend(vct_t *s, const board_t *b, const vct_limits_t *lim, bool any, int *out,
                  uint8_t *unproven, vct_result_t *threat, bool *unsure)
{
    struct vct_threat t = {
        .s = s,
        .each = lim ? *lim : (vct_limits_t){0},
        .deadline = lim && lim->time_ms > 0.0 ? util_now_ms() + lim->time_ms : 0.0,
        .any = any,
    };
    /* the outermost defence bounds itself and those nested in it */
    bool outer = s->defend_end == 0 && t.each.nodes > 0;
    if (outer)
        s->defend_end = s->q.total_nodes + VCT_DEFEND_TOTAL * t.each.nodes;
    int n = defend_solved(s, b, &t, out, unproven, threat, unsure);
    if (outer)
        s->defend_end = 0;
    return n;
}

/* defend's work, t made. */
static int defend_solved(vct_t *s, const board_t *b, struct vct_threat *t, int *out,
                         uint8_t *unproven, vct_result_t *threat, bool *unsure)
{
    vct_result_t r;
    board_t flip;
    vct_status_t st = threat_flip(b, &flip) ? vct_solve(s, &flip, &t->each, &r) : VCT_NONE;
    if (unsure)
        *unsure = st == VCT_UNKNOWN;
    if (st != VCT_WIN)
        return -1;
    if (threat)
        *threat = r;
    if (!t->each.no_zones && proof_zone(s, &flip, t->zone[0], t->each.stop, t->deadline))
        t->nzones = 1;
    uint8_t cand[BOARD_CELLS] = {0};
    own_candidates(b, cand);
    int n = threat_defences(b, r.line, r.nline, defence_reach(b), cand, DEFEND_PASSES,
                            vct_still_wins, t, out, unproven);
    if (unsure)
        *unsure = t->unsure;
    return n;
}

int vct_defend(vct_t *s, const board_t *b, const vct_limits_t *lim, int *out,
               vct_result_t *threat)
{
    return defend(s, b, lim, false, out, NULL, threat, NULL);
}

int vct_defend_marked(vct_t *s, const board_t *b, const vct_limits_t *lim, int *out,
                      uint8_t *unproven, vct_result_t *threat)
{
    return defend(s, b, lim, false, out, unproven, threat, NULL);
}

int vct_defend_proven(vct_t *s, const board_t *b, const vct_limits_t *lim, int *out,
                      bool *proven, vct_result_t *threat)
{
    uint8_t unproven[BOARD_CELLS];
    int n = vct_defend_marked(s, b, lim, out, unproven, threat), k = 0;
    for (int i = 0; i < n; i++)
        if (!unproven[out[i]])
            out[k++] = out[i];
    if (proven)
        *proven = k > 0;
    return n > 0 && k > 0 ? k : n;
}

int vct_defence_begin(vct_t *s, const board_t *b, const vct_limits_t *lim, int *cand,
                      vct_result_t *threat)
{
    vct_result_t r;
    board_t flip;
    if (!threat_flip(b, &flip) || vct_solve(s, &flip, lim, &r) != VCT_WIN)
        return -1;
    if (threat)
        *threat = r;
    uint8_t mark[BOARD_CELLS] = {0};
    own_candidates(b, mark);
    return threat_candidates(b, r.line, r.nline, defence_reach(b), mark, cand);
}

vct_status_t vct_solve_reply(vct_t *s, const board_t *after, const vct_limits_t *lim,
                             vct_result_t *out)
{
    bool plain;
    return solve_reply(s, after, lim, out, &plain);
}

/* vct_solve_reply; *plain: the answer is vct_solve's of after (no four to
 * block first). */
static vct_status_t solve_reply(vct_t *s, const board_t *after, const vct_limits_t *lim,
                                vct_result_t *out, bool *plain)
{
    board_t blocked;
    int four = s->reply_depth < VCT_REPLY_CHAIN ? threat_block_four(after, &blocked) : -1;
    *plain = four < 0;
    if (four < 0)
        return vct_solve(s, after, lim, out);
    /* the other side's four: the block is forced (or the four wins), and
     * the other side moves again against what the side to move threatens */
    vct_status_t st = VCT_NONE;
    if (four) {
        int def[BOARD_CELLS];
        bool unsure;
        s->reply_depth++;
        int n = defend(s, &blocked, lim, true, def, NULL, NULL, &unsure);
        s->reply_depth--;
        st = n == 0 ? VCT_WIN : unsure ? VCT_UNKNOWN : VCT_NONE;
    }
    if (out) {
        *out = (vct_result_t){.status = st};
        if (st == VCT_WIN) {
            out->nline = 1;
            out->line[0] = blocked.moves[blocked.nmoves - 1];
        }
    }
    return st;
}

/* The lines through the empty point p on which c's stone there would
 * build: those with a window of five through p holding some of c's stones
 * and none of the other side's. Returns their count; *weight gets the sum
 * over them of the most of c's stones such a window holds. */
static int quiet_lines(const board_t *b, int c, int p, int *weight)
{
    int size = b->size, px = p % size, py = p / size, lines = 0, empty[5];
    *weight = 0;
    for (int d = 0; d < NDIRS; d++) {
        int best = 0;
        for (int s0 = -4; s0 <= 0; s0++) {
            int ne = line_window_empties(b, c, px + s0 * line_dx[d], py + s0 * line_dy[d], d,
                                         empty);
            if (ne >= 0 && 5 - ne > best)
                best = 5 - ne;
        }
        lines += best > 0;
        *weight += best;
    }
    return lines;
}

/* Does c's stone at p make a five point or a winning-four point that c
 * had not before (a four or a three: a threat, not a quiet move)? */
static bool makes_threat(threat_query_t *q, int c, int p, int nfive, int nwin)
{
    int pts[BOARD_CELLS];
    threat_put(q, p, c);
    bool threat = threat_five_points(q, c, pts) > nfive || winning_points(q, c, pts) > nwin;
    threat_take(q, p);
    return threat;
}

/* vct_quiet_win's candidates, best first (by weight, then board order);
 * returns their count. */
static int quiet_candidates(vct_t *s, const board_t *b, int *cand)
{
    threat_query_t *q = &s->q;
    int me = b->to_move, size = b->size, pts[BOARD_CELLS], weight[BOARD_CELLS], n = 0;
    threat_begin(q, b, 0, 0.0);
    int nfive = threat_five_points(q, me, pts), nwin = winning_points(q, me, pts);
    int blocks[BOARD_CELLS], nb = vct_three_defences(b, blocks);
    if (nb >= 0) {   /* facing a three, the quiet moves that do not lose at once are its blocks */
        for (int i = 0; i < nb; i++)
            if (may_play(&q->b, me, blocks[i]) && !makes_threat(q, me, blocks[i], nfive, nwin))
                cand[n++] = blocks[i];
        return n;
    }
    /* The lines are read with me's stones also on its four points: a
     * quiet move that builds on the line of two later fours (stones the
     * attacker will place with tempo) counts as building on stones. The
     * copy is for reading lines only. */
    board_t lines = q->b;
    int nf = four_points(q, me, pts);
    for (int i = 0; i < nf; i++)
        lines.cells[pts[i]] = (uint8_t)me;
    for (int p = 0; p < size * size; p++) {
        int w;
        if (!may_play(&q->b, me, p) || lines.cells[p] != STONE_EMPTY ||
            quiet_lines(&lines, me, p, &w) < 2 || makes_threat(q, me, p, nfive, nwin))
            continue;
        int j = n++;
        for (; j > 0 && weight[j - 1] < w; j--) {
            cand[j] = cand[j - 1];
            weight[j] = weight[j - 1];
        }
        cand[j] = p;
        weight[j] = w;
    }
    return n;
}

/* vct_quiet_win's loop over cand (in order, legal quiet moves). */
static int quiet_win_among(vct_t *s, const board_t *b, const vct_limits_t *lim, const int *cand,
                           int ncand, vct_result_t *threat, int *tried)
{
    vct_limits_t each = lim ? *lim : (vct_limits_t){0};
    double deadline = each.time_ms > 0.0 ? util_now_ms() + each.time_ms : 0.0;
    int ntried = 0, found = MOVE_NONE;
    for (int i = 0; i < ncand && found == MOVE_NONE; i++) {
        if (deadline > 0.0 && (each.time_ms = deadline - util_now_ms()) < 0.01)
            break;
        board_t after = *b, again;
        if (board_play(&after, cand[i]) != MOVE_OK || !threat_flip(&after, &again))
            continue;
        ntried++;
        vct_result_t r;
        if (vct_solve(s, &again, &each, &r) != VCT_WIN)
            continue;
        int def[BOARD_CELLS];
        if (deadline > 0.0 && (each.time_ms = deadline - util_now_ms()) < 0.01)
            break;
        if (defend(s, &after, &each, true, def, NULL, NULL, NULL) != 0)
            continue;
        found = cand[i];
        if (threat)
            *threat = r;
    }
    if (tried)
        *tried = ntried;
    return found;
}

int vct_quiet_win(vct_t *s, const board_t *b, const vct_limits_t *lim, int max_cands,
                  vct_result_t *threat, int *tried)
{
    int cand[BOARD_CELLS], ncand = board_over(b) ? 0 : quiet_candidates(s, b, cand);
    if (max_cands > 0 && ncand > max_cands)
        ncand = max_cands;
    return quiet_win_among(s, b, lim, cand, ncand, threat, tried);
}

int vct_quiet_win_among(vct_t *s, const board_t *b, const vct_limits_t *lim, const int *moves,
                        int nmoves, vct_result_t *threat, int *tried)
{
    int cand[BOARD_CELLS], ncand = 0;
    if (!board_over(b)) {
        threat_query_t *q = &s->q;
        int me = b->to_move, pts[BOARD_CELLS];
        threat_begin(q, b, 0, 0.0);
        int nfive = threat_five_points(q, me, pts), nwin = winning_points(q, me, pts);
        for (int i = 0; i < nmoves; i++)
            if (may_play(&q->b, me, moves[i]) && !makes_threat(q, me, moves[i], nfive, nwin))
                cand[ncand++] = moves[i];
    }
    return quiet_win_among(s, b, lim, cand, ncand, threat, tried);
}
