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
#include "engine/threat.h"

typedef struct tt_entry {
    uint64_t key;
    uint32_t depth;   /* no VCF within this many fours; 0: empty */
    uint32_t pad;
} tt_entry_t;

struct vcf {
    tt_entry_t *tt;
    size_t tt_mask;
    threat_query_t q;
    int reply_depth;   /* vcf_solve_reply calls in progress (a chain of fours) */
};

typedef threat_four_t four_t;

vcf_t *vcf_create(size_t tt_bytes, char *err, size_t errlen)
{
    vcf_t *s = calloc(1, sizeof *s);
    if (!s)
        goto out_nomem;
    s->tt = threat_table_alloc(tt_bytes, sizeof *s->tt, &s->tt_mask);
    if (!s->tt)
        goto out_free_solver;
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

uint64_t vcf_nodes(const vcf_t *s) { return s->q.total_nodes; }
const threat_query_t *vcf_query(const vcf_t *s) { return &s->q; }

int vcf_four_points(const board_t *b, int color, int *out)
{
    threat_query_t q;
    threat_begin(&q, b, 0, 0.0);
    four_t f[BOARD_CELLS];
    int n = threat_fours(&q, color, f);   /* ascending */
    for (int i = 0; i < n; i++)
        out[i] = f[i].move;
    return n;
}

static uint64_t tt_key(const vcf_t *s)
{
    return s->q.b.hash ^ s->q.salt;
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
    if (s->q.b.rule != RULE_RENJU || s->q.def != STONE_BLACK)
        return false;
    board_play(&s->q.b, f->move);
    bool forbidden = board_check_move(&s->q.b, f->f[0]) != MOVE_OK;
    board_undo(&s->q.b);
    return forbidden;
}

/* Attacker to move in s->q.b with no five of its own; `threat` is the
 * defender's only five point (the attacker's four must take it) or
 * MOVE_NONE. Returns 1 with s->q.line[0..nline) from `ply` on, 0 when no
 * VCF within depth fours, -1 when the budget ran out. */
static int attack(vcf_t *s, int depth, int threat, int prev, int ply)
{
    if (threat_over_budget(&s->q, 255))
        return -1;
    s->q.nodes++;
    if (tt_no_vcf(s, depth))
        return 0;

    four_t fours[BOARD_CELLS];
    int n;
    if (threat != MOVE_NONE) {   /* the four must take it: no scan for the others */
        int f[8], nf = threat_four_at(&s->q, s->q.att, threat, f);
        n = nf > 0;
        if (n)
            fours[0] = (four_t){.move = threat, .nf = nf,
                                .f = {f[0], nf > 1 ? f[1] : MOVE_NONE}};
    } else {
        n = threat_fours(&s->q, s->q.att, fours);
    }
    /* Drop illegal fours (renju: black's forbidden points). */
    if (s->q.b.rule == RULE_RENJU && s->q.att == STONE_BLACK) {
        int k = 0;
        for (int i = 0; i < n; i++)
            if (!board_is_forbidden(&s->q.b, fours[i].move))
                fours[k++] = fours[i];
        n = k;
    }
    sort_fours(fours, n, prev, s->q.b.size);
    for (int i = 0; i < n; i++)
        if (four_unstoppable(s, &fours[i])) {
            s->q.line[ply] = fours[i].move;
            s->q.nline = ply + 1;
            return 1;
        }
    if (depth > 1) {
        for (int i = 0; i < n; i++) {
            int p = fours[i].move, q = fours[i].f[0];
            threat_play(&s->q, p);
            /* the fives the block makes: with none before it (the four took
             * the only one), each lies in a window with the block */
            int t[8];
            int nt = threat_four_at(&s->q, s->q.def, q, t);
            threat_play(&s->q, q);
            int r = 0;
            if (nt <= 1) {
                s->q.line[ply] = p;
                s->q.line[ply + 1] = q;
                r = attack(s, depth - 1, nt ? t[0] : MOVE_NONE, p, ply + 2);
            }
            threat_undo(&s->q);
            threat_undo(&s->q);
            if (r != 0)
                return r;
        }
    }
    tt_store(s, depth);
    return 0;
}

/* The query begun in s->q from the position b. */
static vcf_status_t solve(vcf_t *s, const board_t *b, const vcf_limits_t *lim, vcf_result_t *out)
{
    int max_fours = lim && lim->max_fours > 0 && lim->max_fours < VCF_MAX_FOURS
                        ? lim->max_fours : VCF_MAX_FOURS;
    vcf_status_t st = VCF_NONE;
    int five[BOARD_CELLS], threat[BOARD_CELLS];
    if (board_over(b))
        goto out_report;
    if (threat_five_points(&s->q, s->q.att, five) > 0) {
        s->q.line[0] = five[0];
        s->q.nline = 1;
        st = VCF_WIN;
        goto out_report;
    }
    int nt = threat_five_points(&s->q, s->q.def, threat);
    if (nt >= 2)
        goto out_report;
    int r = attack(s, max_fours, nt ? threat[0] : MOVE_NONE, MOVE_NONE, 0);
    st = r > 0 ? VCF_WIN : r < 0 ? VCF_UNKNOWN : VCF_NONE;
out_report:
    s->q.total_nodes += s->q.nodes;
    if (out) {
        out->status = st;
        out->nodes = s->q.nodes;
        out->nline = threat_line(&s->q, b, st == VCF_WIN, out->line, &out->nfours);
    }
    return st;
}

vcf_status_t vcf_solve(vcf_t *s, const board_t *b, const vcf_limits_t *lim, vcf_result_t *out)
{
    threat_begin(&s->q, b, lim ? lim->nodes : 0, lim ? lim->time_ms : 0.0);
    return solve(s, b, lim, out);
}

vcf_status_t vcf_solve_at(vcf_t *s, const threat_query_t *at, const vcf_limits_t *lim,
                          vcf_result_t *out)
{
    threat_begin_at(&s->q, at, lim ? lim->nodes : 0, lim ? lim->time_ms : 0.0);
    s->q.stop = at->stop;   /* the outer query's stop flag ends this one too */
    return solve(s, &at->b, lim, out);
}

/* threat_wins_fn of vcf_defend: has the attacker a VCF after the defence? */
struct vcf_threat {
    vcf_t *s;
    const vcf_limits_t *lim;
    bool any;        /* only whether a defence exists: once one is found, the rest are
                      * not solved (they count as defences) */
    bool defended;   /* a defence was found (any) */
};

static threat_verdict_t vcf_still_wins(void *ctx, const board_t *after, int pass)
{
    struct vcf_threat *t = ctx;
    (void)pass;   /* one pass: out of budget counts as a defence */
    if (t->defended)
        return THREAT_STOPPED;
    bool wins = vcf_solve_reply(t->s, after, t->lim, NULL) == VCF_WIN;
    t->defended = t->any && !wins;
    return wins ? THREAT_HOLDS : THREAT_STOPPED;
}

static int defend(vcf_t *s, const board_t *b, const vcf_limits_t *lim, bool any, int *out,
                  vcf_result_t *threat);

vcf_status_t vcf_solve_reply(vcf_t *s, const board_t *after, const vcf_limits_t *lim,
                             vcf_result_t *out)
{
    board_t blocked;
    int four = s->reply_depth < VCF_REPLY_CHAIN ? threat_block_four(after, &blocked) : -1;
    if (four < 0)
        return vcf_solve(s, after, lim, out);
    /* the four holds (four == 0), or the side that made it has a defence
     * after the block: no win */
    int def[BOARD_CELLS], ndef = 1;
    s->reply_depth++;
    if (four)
        ndef = defend(s, &blocked, lim, true, def, NULL);
    s->reply_depth--;
    vcf_result_t r = {.status = ndef == 0 ? VCF_WIN : VCF_NONE, .nline = ndef == 0};
    r.line[0] = blocked.moves[blocked.nmoves - 1];
    if (out)
        *out = r;
    return r.status;
}

/* vcf_defend; any: stop solving after the first defence (the count is
 * then 0 or not, not the number of defences). */
static int defend(vcf_t *s, const board_t *b, const vcf_limits_t *lim, bool any, int *out,
                  vcf_result_t *threat)
{
    vcf_result_t r;
    board_t flip;
    if (!threat_flip(b, &flip) || vcf_solve(s, &flip, lim, &r) != VCF_WIN)
        return -1;
    if (threat)
        *threat = r;
    uint8_t cand[BOARD_CELLS] = {0};
    int pts[BOARD_CELLS];
    threat_mark(cand, pts, board_five_points(b, b->to_move, pts));
    threat_mark(cand, pts, vcf_four_points(b, b->to_move, pts));
    struct vcf_threat t = {.s = s, .lim = lim, .any = any};
    return threat_defences(b, r.line, r.nline, 4, cand, 1, vcf_still_wins, &t, out, NULL);
}

int vcf_defend(vcf_t *s, const board_t *b, const vcf_limits_t *lim, int *out,
               vcf_result_t *threat)
{
    return defend(s, b, lim, false, out, threat);
}
