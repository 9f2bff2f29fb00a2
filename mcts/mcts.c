/* Monte-Carlo tree search (see mcts.h for the contract).
 *
 * Layout: nodes (24 bytes) and edges (8 bytes: child, prior, move) live in
 * two arenas; a node's edges are contiguous. Edges are sorted by prior,
 * best first, when a node is expanded, and the children that have a node
 * always form a prefix [0, nvisited) of the edge list: among unvisited
 * children every one has the same first-play-urgency Q, so the best
 * unvisited one is the first. Selection therefore scans the visited
 * prefix plus one edge, not every legal move. */
#include "mcts/mcts.h"

#include "engine/vcf.h"
#include "engine/vct.h"

#include <assert.h>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

#include "util/util.h"

enum { NS_NEW = 0, NS_PENDING, NS_EXPANDED, NS_TERMINAL };

typedef struct node {
    float w;            /* sum of values, view of the player who moved into this node */
    uint32_t n;         /* finished visits */
    uint32_t edge;      /* first edge (valid when nedges > 0) */
    uint16_t nedges;
    uint16_t nvisited;  /* edges [0, nvisited) have a child node */
    uint16_t vl;        /* visits in flight (virtual loss) */
    uint8_t state;      /* NS_* */
    int8_t exact;       /* NS_TERMINAL: value for the side to move here */
    float m;            /* minimax_mix > 0: the minimax of the net's values in this
                         * subtree, view of the player who moved into this node */
} node_t;

typedef struct edge {
    uint32_t child;     /* node index, 0: none yet */
    uint16_t prior;     /* prior * 65535 */
    int16_t move;
} edge_t;

typedef struct arena {
    node_t *nodes;
    edge_t *edges;
    size_t ncap, nused;   /* node 0 is the null node */
    size_t ecap, eused;
} arena_t;

typedef struct pending {
    board_t board;                   /* the leaf position */
    int depth;
    bool raw;                        /* a new leaf not analysed yet (select_leaf's defer) */
    uint32_t path[BOARD_CELLS + 2];  /* root .. leaf */
} pending_t;

/* The solvers a new leaf's checks run on, and what they found: the tree's
 * own (prepare_leaf, under the lock in a threaded search), or a search
 * thread's, whose counts join the tree's when its leaves are applied. */
typedef struct leaf_solvers {
    vcf_t *vcf;   /* NULL: no VCF checks */
    vct_t *vct;   /* NULL: no VCT checks */
    uint64_t vcf_checks, vcf_wins, vct_checks, vct_wins;
} leaf_solvers_t;

/* What a new leaf is, found from its board alone (analyse_leaf), before it
 * goes into the tree (apply_leaf). */
enum {
    LEAF_OPEN,    /* edges[0..n): its moves, priors still to be set */
    LEAF_WON,     /* edges[0].move wins (a five, a VCF, a VCT) */
    LEAF_LOST,    /* edges[0..n): the moves left to a lost side, uniform priors */
    LEAF_EXACT    /* no moves: `exact` (game over, or no legal move) */
};

typedef struct leaf {
    int kind;     /* LEAF_* */
    int exact;    /* LEAF_EXACT: the value for the side to move */
    int n;
    edge_t edges[BOARD_CELLS];
} leaf_t;

#define VERIFY_MAX 16   /* mcts_refute_best checks per root at most */
#define QUIET_CANDS 24  /* the opponent's quiet moves it solves at most */

struct mcts {
    mcts_params_t p;
    mcts_probe_fn probe;   /* may be NULL */
    void *probe_user;
    arena_t ar[2];
    int cur;               /* live arena */
    uint32_t root;
    board_t root_board;
    bool root_noised;
    bool mem_full;         /* an allocation failed since the last reset */
    uint64_t rng;
    uint64_t playouts;
    int npending;
    pending_t *pend;       /* max_pending */
    float *policy;         /* (max_pending, BOARD_CELLS) for mcts_search */
    float *value;          /* (max_pending) */
    vcf_t *vcf;            /* NULL when both VCF budgets are 0 */
    bool root_vcf_done;    /* the root's deeper VCF check ran for this root */
    int nallow;            /* root filter: only allow[0..nallow) are root children (0: all) */
    uint8_t allow[BOARD_CELLS];
    uint64_t vcf_checks, vcf_wins;
    vct_t *vct;            /* NULL when every VCT budget is 0 */
    bool root_vct_done;    /* the root's threat search ran for this root */
    int nverified;         /* root moves mcts_refute_best checked, for this root */
    int16_t verified[VERIFY_MAX];
    int nquiet;            /* root moves the watcher checked for a quiet win, for this root */
    int16_t quiet[VERIFY_MAX];
    uint64_t vct_checks, vct_wins, vct_defences;
    /* a threaded search's (nthreads > 1), made at its first: each search
     * thread's solvers for its new leaves, and a leaf per pending slot */
    leaf_solvers_t ws[MCTS_MAX_THREADS];
    leaf_t *leaf;          /* max_pending */
    /* the Gumbel root (p.gumbel_m > 0), for the search under way */
    bool g_noise;          /* the next draw adds Gumbel noise (mcts_gumbel_noise) */
    bool g_ready;          /* the candidates are drawn for this root and g_target */
    uint32_t g_target;     /* the visit target they were drawn for */
    uint32_t g_budget;     /* the playouts left at the draw */
    uint32_t g_goal;       /* each live candidate's visits in this phase */
    int g_phases;          /* ceil(log2(candidates)), at least 1 */
    int g_live;            /* g_move[0..g_live) are still in */
    int16_t g_move[MCTS_GUMBEL_M_MAX];
    double g_base[MCTS_GUMBEL_M_MAX];   /* the draw + log prior */
};

#define PRIOR_ONE 65535.0f

/* ------------------------------------------------------------ utilities */

static double rng_gamma(uint64_t *s, double alpha) /* Marsaglia-Tsang */
{
    if (alpha < 1.0)
        return rng_gamma(s, alpha + 1.0) * pow(util_rng_unit(s), 1.0 / alpha);
    double d = alpha - 1.0 / 3.0, c = 1.0 / sqrt(9.0 * d);
    for (;;) {
        double x, v;
        do {
            x = sqrt(-2.0 * log(util_rng_unit(s))) * cos(6.283185307179586 * util_rng_unit(s));
            v = 1.0 + c * x;
        } while (v <= 0.0);
        v = v * v * v;
        double u = util_rng_unit(s);
        if (log(u) < 0.5 * x * x + d - d * v + d * log(v))
            return d * v;
    }
}

static inline node_t *N(mcts_t *t, uint32_t i) { return &t->ar[t->cur].nodes[i]; }
static inline const node_t *CN(const mcts_t *t, uint32_t i) { return &t->ar[t->cur].nodes[i]; }
static inline edge_t *E(mcts_t *t, uint32_t i) { return &t->ar[t->cur].edges[i]; }
static inline const edge_t *CE(const mcts_t *t, uint32_t i) { return &t->ar[t->cur].edges[i]; }

static uint32_t node_alloc(mcts_t *t)
{
    arena_t *a = &t->ar[t->cur];
    if (a->nused >= a->ncap) {
        t->mem_full = true;
        return 0;
    }
    uint32_t i = (uint32_t)a->nused++;
    memset(&a->nodes[i], 0, sizeof(node_t));
    return i;
}

/* Reserve k edges; returns the first index, or UINT32_MAX when full. */
static uint32_t edges_alloc(mcts_t *t, int k)
{
    arena_t *a = &t->ar[t->cur];
    if (a->eused + (size_t)k > a->ecap) {
        t->mem_full = true;
        return UINT32_MAX;
    }
    uint32_t i = (uint32_t)a->eused;
    a->eused += (size_t)k;
    return i;
}

/* ---------------------------------------------------------------- rules */

/* Points where `color` makes five (the engine's rule). Full scan of the
 * board, or (local) only the lines through the stone `center`, which must
 * be color's. out holds BOARD_CELLS. */
static int five_points(const board_t *b, int color, int center, bool full, int *out)
{
    if (full)
        return board_five_points(b, color, out);
    if (center < 0 || b->cells[center] != color)
        return 0;
    return board_five_points_near(b, color, center, out);
}

/* Make ni a proven win whose only edge is `move`. false when the arena is full. */
static bool make_proven_win(mcts_t *t, uint32_t ni, int move)
{
    uint32_t e = edges_alloc(t, 1);
    if (e == UINT32_MAX)
        return false;
    node_t *nd = N(t, ni);
    *E(t, e) = (edge_t){.child = 0, .prior = 65535, .move = (int16_t)move};
    nd->edge = e;
    nd->nedges = 1;
    nd->state = NS_TERMINAL;
    nd->exact = 1;
    return true;
}

/* A bounded VCF search on s for the side to move of b; the first move of
 * the line found, or MOVE_NONE (none, out of budget, or no solver). */
static int leaf_vcf(leaf_solvers_t *s, const board_t *b, uint32_t budget)
{
    if (!budget || !s->vcf)
        return MOVE_NONE;
    vcf_limits_t lim = {.nodes = budget};
    vcf_result_t r;
    s->vcf_checks++;
    if (vcf_solve(s->vcf, b, &lim, &r) != VCF_WIN)
        return MOVE_NONE;
    s->vcf_wins++;
    return r.line[0];
}

/* A bounded VCT search on s for the side to move of b (nodes, threats at
 * most depth: 0 any, and when time_ms > 0 a time limit); the first move of
 * the line found, or MOVE_NONE (none, out of budget, or no solver). reply:
 * b follows a root move of ours that is checked, so a four of ours counts
 * only if we still have a defence after its block (vct_solve_reply). */
static int leaf_vct(leaf_solvers_t *s, const board_t *b, uint32_t nodes, int depth,
                    double time_ms, bool reply)
{
    if (!nodes || !s->vct)
        return MOVE_NONE;
    vct_limits_t lim = {.nodes = nodes, .time_ms = time_ms, .max_depth = depth};
    vct_result_t r;
    s->vct_checks++;
    if ((reply ? vct_solve_reply : vct_solve)(s->vct, b, &lim, &r) != VCT_WIN)
        return MOVE_NONE;
    s->vct_wins++;
    return r.line[0];
}

/* leaf_vcf on the tree's own solver, counted in the tree. */
static int vcf_first_move(mcts_t *t, const board_t *b, uint32_t budget)
{
    leaf_solvers_t s = {.vcf = t->vcf};
    int win = leaf_vcf(&s, b, budget);
    t->vcf_checks += s.vcf_checks;
    t->vcf_wins += s.vcf_wins;
    return win;
}

/* leaf_vct on solver (the tree's or the watcher's), counted in the tree. */
static int vct_first_move_on(mcts_t *t, vct_t *solver, const board_t *b, uint32_t nodes,
                             int depth, double time_ms, bool reply)
{
    leaf_solvers_t s = {.vct = solver};
    int win = leaf_vct(&s, b, nodes, depth, time_ms, reply);
    t->vct_checks += s.vct_checks;
    t->vct_wins += s.vct_wins;
    return win;
}

/* vct_first_move_on the tree's own solver. */
static int vct_first_move(mcts_t *t, const board_t *b, uint32_t nodes, int depth,
                          double time_ms, bool reply)
{
    return vct_first_move_on(t, t->vct, b, nodes, depth, time_ms, reply);
}

static void leaf_set(leaf_t *lf, int kind, const int *moves, int n)
{
    lf->kind = kind;
    lf->n = n;
    for (int i = 0; i < n; i++)
        lf->edges[i] = (edge_t){.child = 0, .prior = 0, .move = (int16_t)moves[i]};
    if (kind == LEAF_LOST)
        for (int i = 0; i < n; i++)
            lf->edges[i].prior = (uint16_t)(PRIOR_ONE / n);
}

/* Classify the new leaf b into lf, reading only b, the tree's parameters
 * and (is_root) its root filter: a known value (a five, a VCF within the
 * node budget, two fives of the opponent to block), else its moves. Runs
 * outside the tree's lock on a search thread's solvers s (not for the
 * root, whose filter the watcher may change). is_root: scan the whole
 * board for threats (a position from outside) and use the root's VCF
 * budget; deeper, threats can only come from the last two moves, since
 * every older threat was answered (forced) higher up. */
static void analyse_leaf(const mcts_t *t, leaf_solvers_t *s, const board_t *b, bool is_root,
                         leaf_t *lf)
{
    lf->n = 0;
    if (board_over(b)) {
        lf->kind = LEAF_EXACT;
        lf->exact = b->result == RESULT_DRAW ? 0 : -1;   /* the last mover made five */
        return;
    }
    int me = b->to_move, opp = 3 - me;
    int mine[BOARD_CELLS], theirs[BOARD_CELLS];
    bool full = is_root || b->nmoves < 2;
    int nmine = five_points(b, me, b->nmoves >= 2 ? b->moves[b->nmoves - 2] : -1, full, mine);
    if (nmine > 0) {
        leaf_set(lf, LEAF_WON, mine, 1);
        return;
    }
    int ntheirs = five_points(b, opp, b->last, full, theirs);
    uint32_t vcf_budget = is_root ? t->p.vcf_root_nodes : t->p.vcf_nodes;
    bool vcf_ran = ntheirs <= 1 && vcf_budget && s->vcf;   /* its solver is then at b */
    if (ntheirs <= 1) {   /* a forced line of fours is a win too */
        int win = leaf_vcf(s, b, vcf_budget);
        if (win != MOVE_NONE) {
            leaf_set(lf, LEAF_WON, &win, 1);
            return;
        }
    }
    if (ntheirs == 0 && !is_root) {   /* and a forced line of threats (the root's is deeper) */
        int win = leaf_vct(s, b, t->p.vct_nodes, t->p.vct_depth, 0.0, false);
        if (win != MOVE_NONE) {
            leaf_set(lf, LEAF_WON, &win, 1);
            return;
        }
    }
    int npts = board_npoints(b);
    int moves[BOARD_CELLS];
    int nmoves = 0;
    bool lost = false;
    if (ntheirs > 0) {
        for (int i = 0; i < ntheirs; i++)
            if (board_check_move(b, theirs[i]) == MOVE_OK)
                moves[nmoves++] = theirs[i];
        lost = ntheirs >= 2 || nmoves == 0;
    }
    if (ntheirs == 0 && t->p.threat_prune) {
        /* facing a three: only the moves that stop it, and our fours;
         * none (a double three, no four of ours): lost */
        int def[BOARD_CELLS];
        int nd = vcf_ran ? vct_three_defences_vcf(s->vcf, def) : vct_three_defences(b, def);
        for (int i = 0; i < nd; i++)
            if (board_check_move(b, def[i]) == MOVE_OK)
                moves[nmoves++] = def[i];
        lost = nd == 0;
        if (lost && is_root) {
            /* a move is still played here: one that blocks a three (or a
             * four of ours), so an opponent that errs can still lose its
             * win, not the board's first empty point */
            int res[BOARD_CELLS];
            int nr = vct_three_blocks(b, res);
            for (int i = 0; i < nr; i++)
                if (board_check_move(b, res[i]) == MOVE_OK)
                    moves[nmoves++] = res[i];
        }
    }
    if (nmoves == 0 && (ntheirs == 0 || lost)) {
        nmoves = 0;
        if (b->rule == RULE_RENJU && me == STONE_BLACK) {
            uint8_t forb[BOARD_CELLS] = {0};
            int fp[BOARD_CELLS];
            int nf = board_forbidden_points(b, fp);
            for (int i = 0; i < nf; i++)
                forb[fp[i]] = 1;
            for (int p = 0; p < npts; p++)
                if (b->cells[p] == STONE_EMPTY && !forb[p])
                    moves[nmoves++] = p;
        } else {
            for (int p = 0; p < npts; p++)
                if (b->cells[p] == STONE_EMPTY)
                    moves[nmoves++] = p;
        }
        if (lost && nmoves > 1)
            nmoves = 1;   /* lost anyway: one legal move to play */
    }
    if (is_root && t->nallow > 0 && !lost) {
        int k = 0;
        for (int i = 0; i < nmoves; i++)
            if (t->allow[moves[i]])
                moves[k++] = moves[i];
        if (k > 0)       /* a filter that allows nothing legal is ignored */
            nmoves = k;
    }
    if (nmoves == 0) {    /* no legal move (renju: all forbidden): call it a draw */
        lf->kind = LEAF_EXACT;
        lf->exact = 0;
        return;
    }
    leaf_set(lf, lost ? LEAF_LOST : LEAF_OPEN, moves, nmoves);
}

/* Put the analysed leaf lf into node ni: its edges (an open leaf's priors
 * as lf has them), its state (NS_TERMINAL with exact, or NS_NEW for an open
 * leaf). false when the arena is full (ni is left as it was). */
static bool apply_leaf(mcts_t *t, uint32_t ni, const leaf_t *lf)
{
    if (lf->kind == LEAF_EXACT) {
        node_t *nd = N(t, ni);
        nd->state = NS_TERMINAL;
        nd->exact = (int8_t)lf->exact;
        return true;
    }
    if (lf->kind == LEAF_WON)
        return make_proven_win(t, ni, lf->edges[0].move);
    uint32_t e = edges_alloc(t, lf->n);
    if (e == UINT32_MAX)
        return false;
    node_t *nd = N(t, ni);
    memcpy(E(t, e), lf->edges, (size_t)lf->n * sizeof(edge_t));
    nd->edge = e;
    nd->nedges = (uint16_t)lf->n;
    if (lf->kind == LEAF_LOST) {
        nd->state = NS_TERMINAL;
        nd->exact = -1;
    }
    return true;
}

static void solvers_count(mcts_t *t, leaf_solvers_t *s)
{
    t->vcf_checks += s->vcf_checks;
    t->vcf_wins += s->vcf_wins;
    t->vct_checks += s->vct_checks;
    t->vct_wins += s->vct_wins;
    s->vcf_checks = s->vcf_wins = s->vct_checks = s->vct_wins = 0;
}

/* A new leaf analysed and applied on the tree's own solvers: sets
 * node->state to NS_TERMINAL (with exact) when its value is known, else
 * leaves NS_NEW with edges whose priors are still to be set. Returns false
 * when the arena is full. */
static bool prepare_leaf(mcts_t *t, uint32_t ni, const board_t *b, bool is_root)
{
    leaf_solvers_t s = {.vcf = t->vcf, .vct = t->vct};
    leaf_t lf;
    analyse_leaf(t, &s, b, is_root, &lf);
    solvers_count(t, &s);
    return apply_leaf(t, ni, &lf);
}

static int cmp_edge_prior(const void *a, const void *b)
{
    const edge_t *x = a, *y = b;
    if (x->prior != y->prior)
        return x->prior > y->prior ? -1 : 1;
    return x->move - y->move;
}

/* Edges in cmp_edge_prior's order (prior highest first, then move), unless
 * their priors already fall: a stable counting sort on each byte of the key
 * (65535 - prior, move), the lowest first; a new leaf's sort, which ran
 * under the tree's lock, took 6% of a pattern net's search through qsort. */
static void sort_edges(edge_t *ed, int n)
{
    int i = 1;
    while (i < n && ed[i].prior <= ed[i - 1].prior)
        i++;
    if (i >= n)
        return;
    assert(n <= BOARD_CELLS);
    edge_t tmp[BOARD_CELLS];
    edge_t *from = ed, *to = tmp;
    for (int pass = 0; pass < 4; pass++) {
        int count[257] = {0}, shift = 8 * (pass & 1);
        for (int k = 0; k < n; k++) {
            uint32_t key = pass < 2 ? (uint16_t)from[k].move : 65535u - from[k].prior;
            count[((key >> shift) & 255u) + 1]++;
        }
        for (int b = 0; b < 256; b++)
            count[b + 1] += count[b];
        for (int k = 0; k < n; k++) {
            uint32_t key = pass < 2 ? (uint16_t)from[k].move : 65535u - from[k].prior;
            to[count[(key >> shift) & 255u]++] = from[k];
        }
        edge_t *t = from;
        from = to;
        to = t;
    }
    /* four passes: the sorted edges are back in ed */
}

/* The pattern prior's weights by threat_t (none, two, open two, three,
 * open three, four, open four, five): a stone of the side to move making
 * that threat, and one on a point where the opponent would make it (the
 * point taken from them). The classical engines' move ordering in its
 * simplest form; fives and fours matter less here, because the search
 * already forces them (threat_prune, the VCF check). */
static const float pattern_attack[THREAT_COUNT] = {0, 0, 0, 1.0f, 3.0f, 2.0f, 8.0f, 50.0f};
static const float pattern_block[THREAT_COUNT] = {0, 0, 0, 0.7f, 2.5f, 2.0f, 6.0f, 40.0f};

/* The pattern weights of the n moves at b into w; their sum (0: no move
 * makes or takes a three). */
static float pattern_weights(const board_t *b, const edge_t *ed, int n, float *w)
{
    uint8_t own[BOARD_CELLS], opp[BOARD_CELLS];
    board_threat_map(b, b->to_move, own);
    board_threat_map(b, 3 - b->to_move, opp);
    float sum = 0.0f;
    for (int i = 0; i < n; i++) {
        int m = ed[i].move;
        w[i] = pattern_attack[own[m]] + pattern_block[opp[m]];
        sum += w[i];
    }
    return sum;
}

/* Priors from a policy row indexed by point (any scale, each value raised
 * to 1 / policy_temp); with pattern_prior > 0 and a board, that share of
 * the prior mass goes to the moves by their pattern weights. The edges are
 * left in their order. */
static void fill_priors(const mcts_params_t *p, edge_t *ed, int k, const float *row,
                        const board_t *b)
{
    float sum = 0.0f, pv[BOARD_CELLS];   /* (k) the edges' policy values, tempered */
    float inv_temp = 1.0f / p->policy_temp;
    for (int i = 0; i < k; i++) {
        float v = row[ed[i].move];
        v = v > 0.0f ? v : 0.0f;
        if (inv_temp != 1.0f && v > 0.0f)
            v = powf(v, inv_temp);
        pv[i] = v;
        sum += v;
    }
    if (!(sum > 0.0f) || !isfinite(sum)) {
        uint16_t q = (uint16_t)(PRIOR_ONE / k);
        for (int i = 0; i < k; i++)
            ed[i].prior = q;
        return;
    }
    float net_share = 1.0f, w[BOARD_CELLS], wscale = 0.0f;
    if (p->pattern_prior > 0.0f && b && k > 1) {
        float wsum = pattern_weights(b, ed, k, w);
        if (wsum > 0.0f) {
            net_share = 1.0f - p->pattern_prior;
            wscale = p->pattern_prior * PRIOR_ONE / wsum;
        }
    }
    float scale = net_share * PRIOR_ONE / sum;
    for (int i = 0; i < k; i++) {
        float v = pv[i] * scale + (wscale > 0.0f ? w[i] * wscale : 0.0f);
        ed[i].prior = (uint16_t)(v > 0.0f ? (v < PRIOR_ONE ? v + 0.5f : PRIOR_ONE) : 0.0f);
    }
}

/* fill_priors for the k edges of a new leaf, then sorted by prior. */
static void set_edge_priors(const mcts_params_t *p, edge_t *ed, int k, const float *row,
                            const board_t *b)
{
    fill_priors(p, ed, k, row, b);
    sort_edges(ed, k);
}

/* set_edge_priors for a new node's edges. */
static void set_priors(mcts_t *t, node_t *nd, const float *row, const board_t *b)
{
    set_edge_priors(&t->p, E(t, nd->edge), nd->nedges, row, b);
}

/* A leaf the evaluator already knows (its cache): expand it now. */
static bool probe_leaf(mcts_t *t, const board_t *b, node_t *nd, float *value)
{
    float row[BOARD_CELLS];
    if (!t->probe(t->probe_user, b, row, value))
        return false;
    set_priors(t, nd, row, b);
    return true;
}

/* --------------------------------------------------------------- search */

/* An evaluator's value into [-1, 1] (NaN: -1). */
static float clamp_value(float v)
{
    if (!(v >= -1.0f))
        return -1.0f;
    return v > 1.0f ? 1.0f : v;
}

/* A child's minimax value (node_t.m), view of the side to move at its
 * parent: a proven child's is its proof. */
static inline float child_minimax(const node_t *c)
{
    return c->state == NS_TERMINAL ? -(float)c->exact : c->m;
}

/* Implicit minimax backups (Lanctot et al. 2014): the leaf's m is its own
 * value; each node above it takes the best of its valued children's, the
 * path's own child counted (its visit is not in n yet). */
static void backup_minimax(mcts_t *t, const uint32_t *path, int depth, float v)
{
    N(t, path[depth - 1])->m = -v;
    for (int i = depth - 2; i >= 0; i--) {
        node_t *nd = N(t, path[i]);
        const edge_t *ed = CE(t, nd->edge);
        float best = child_minimax(CN(t, path[i + 1]));
        for (int k = 0; k < nd->nvisited; k++) {
            const node_t *c = CN(t, ed[k].child);
            if ((c->n > 0 || c->state == NS_TERMINAL) && child_minimax(c) > best)
                best = child_minimax(c);
        }
        nd->m = -best;
    }
}

/* Back up `v` (side to move at the leaf) along path[0..depth-1]. */
static void backup(mcts_t *t, const uint32_t *path, int depth, float v, bool had_vl)
{
    if (t->p.minimax_mix > 0.0f)
        backup_minimax(t, path, depth, v);
    for (int i = depth - 1; i >= 0; i--) {
        node_t *nd = N(t, path[i]);
        nd->w -= v;   /* view of the player who moved into nd */
        nd->n++;
        if (had_vl)
            nd->vl--;
        v = -v;
    }
    t->playouts++;
}

/* Added to the PUCT score of a child below its forced playouts: such
 * children come first, in PUCT order among themselves. */
#define FORCED_BONUS 1e6f

/* Pick the child to descend into; returns the edge index within the node. */
static int select_edge(mcts_t *t, const node_t *nd, bool is_root)
{
    const edge_t *ed = CE(t, nd->edge);
    float parent_n = (float)(nd->n + nd->vl);
    float sqrt_n = sqrtf(parent_n > 1.0f ? parent_n : 1.0f);
    float parent_q = nd->n ? -nd->w / (float)nd->n : 0.0f;  /* side to move at nd */
    float cp = t->p.c_puct * sqrt_n / PRIOR_ONE;
    float mix = t->p.minimax_mix;
    int best = 0;
    float best_score = -1e30f;
    float visited_prior = 0.0f;
    int nv = nd->nvisited;
    /* forced playouts: k * total child visits / PRIOR_ONE, so that a child
     * is forced while its visits^2 < kn * prior (0: none) */
    float kn = 0.0f;
    if (is_root && t->root_noised && t->p.forced_k > 0.0f)
        kn = t->p.forced_k * (parent_n - 1.0f) / PRIOR_ONE;
    for (int i = 0; i < nv; i++) {
        const node_t *c = CN(t, ed[i].child);
        float cn = (float)(c->n + c->vl);
        /* a proven child's value is its proof, not the average of the
         * visits it had before (the watcher and restrict_root mark
         * visited children; the MCTS-solver rule marks inner nodes) */
        float q = c->state == NS_TERMINAL ? -(float)c->exact
                  : cn > 0.0f             ? (c->w - (float)c->vl) / cn
                                          : parent_q;
        if (mix > 0.0f && c->n > 0 && c->state != NS_TERMINAL)
            q += mix * (c->m - q);
        float score = q + cp * (float)ed[i].prior / (1.0f + cn);
        visited_prior += (float)ed[i].prior;
        if (kn > 0.0f && cn * cn < kn * (float)ed[i].prior && c->state != NS_TERMINAL)
            score += FORCED_BONUS;
        if (score > best_score) {
            best_score = score;
            best = i;
        }
    }
    if (nv < nd->nedges) {
        float red = is_root ? t->p.fpu_root : t->p.fpu_reduction;
        float q = parent_q - red * sqrtf(visited_prior / PRIOR_ONE);
        float score = q + cp * (float)ed[nv].prior;
        if (kn > 0.0f && ed[nv].prior > 0)
            score += FORCED_BONUS;
        if (score > best_score)
            best = nv;
    }
    return best;
}

enum { SEL_EVAL, SEL_DONE, SEL_COLLISION, SEL_FULL };

/* ------------------------------------------------------- Gumbel root */

/* Gumbel AlphaZero's root (mcts_params_t.gumbel_m; Danihelka, Guez,
 * Schrittwieser and Silver, "Policy improvement by planning with Gumbel",
 * 2022): sequential halving among candidates drawn by Gumbel-top-k from
 * the priors; below the root the search is PUCT as everywhere. */

/* A root edge's log prior (a prior stored as 0: half the smallest step). */
static double edge_logit(const edge_t *e)
{
    double p = e->prior > 0 ? (double)e->prior : 0.5;
    return log(p / PRIOR_ONE);
}

/* The root's children's values, root side's view, by move into q[]
 * (completed: an unvisited child's is the paper's v_mix, the net's value
 * of the root mixed with the prior-weighted mean of the visited ones);
 * the proven ones' are their proofs. Returns sigma's factor,
 * (c_visit + most child visits) * c_scale. */
static double gumbel_values(const mcts_t *t, double *q)
{
    const node_t *r = CN(t, t->root);
    const edge_t *ed = CE(t, r->edge);
    double sum_n = 0.0, sum_w = 0.0, pmass = 0.0, pq = 0.0;
    uint32_t maxn = 0;
    for (int i = 0; i < r->nvisited; i++) {
        const node_t *c = CN(t, ed[i].child);
        sum_w += c->w;
        sum_n += c->n;
        maxn = c->n > maxn ? c->n : maxn;
        if (c->n == 0 && c->state != NS_TERMINAL)
            continue;
        double v = c->state == NS_TERMINAL ? -(double)c->exact : c->w / c->n;
        q[ed[i].move] = v;
        pmass += ed[i].prior / PRIOR_ONE;
        pq += ed[i].prior / PRIOR_ONE * v;
    }
    /* the root's own evaluations: its visits less its children's */
    double own_n = (double)r->n - sum_n, own_w = -(double)r->w - sum_w;
    double vhat = own_n > 0.5 ? own_w / own_n : r->n ? -(double)r->w / r->n : 0.0;
    double vmix = pmass > 0.0 ? (vhat + sum_n / pmass * pq) / (1.0 + sum_n) : vhat;
    vmix = vmix < -1.0 ? -1.0 : vmix > 1.0 ? 1.0 : vmix;
    for (int i = 0; i < r->nedges; i++) {
        const node_t *c = i < r->nvisited ? CN(t, ed[i].child) : NULL;
        if (!c || (c->n == 0 && c->state != NS_TERMINAL))
            q[ed[i].move] = vmix;
    }
    return (MCTS_GUMBEL_C_VISIT + maxn) * t->p.gumbel_scale;
}

static inline double gumbel_sigma(double factor, double q) { return factor * (q + 1.0) * 0.5; }

/* Draw the candidates for a search towards visit_target: the gumbel_m
 * root edges of highest log prior (+ a Gumbel draw with g_noise), best
 * first, and plan the playouts left by sequential halving. */
static void gumbel_draw(mcts_t *t, uint32_t visit_target)
{
    const node_t *r = CN(t, t->root);
    const edge_t *ed = CE(t, r->edge);
    int k = r->nedges, m = t->p.gumbel_m < k ? t->p.gumbel_m : k;
    double key[BOARD_CELLS];
    for (int i = 0; i < k; i++) {
        key[i] = edge_logit(&ed[i]);
        if (t->g_noise)
            key[i] -= log(-log(util_rng_unit(&t->rng)));
    }
    for (int j = 0; j < m; j++) {   /* the m best keys, best first */
        int b = -1;
        for (int i = 0; i < k; i++)
            if (key[i] > -HUGE_VAL && (b < 0 || key[i] > key[b]))
                b = i;
        t->g_move[j] = ed[b].move;
        t->g_base[j] = key[b];
        key[b] = -HUGE_VAL;
    }
    uint32_t have = r->n + r->vl;
    t->g_live = m;
    t->g_goal = 0;
    t->g_budget = visit_target > have ? visit_target - have : 1;
    t->g_phases = 1;
    while ((1 << t->g_phases) < m)
        t->g_phases++;
    t->g_target = visit_target;
    t->g_ready = true;
}

/* Before a gather: the candidates for this root and target (a search
 * with no visit target keeps PUCT). */
static void gumbel_prepare(mcts_t *t, uint32_t visit_target)
{
    if (t->p.gumbel_m <= 0 || visit_target == 0 || CN(t, t->root)->state != NS_EXPANDED ||
        (t->g_ready && t->g_target == visit_target))
        return;
    gumbel_draw(t, visit_target);
}

/* The live candidates best first by draw + log prior + sigma(Q), the
 * better half (rounded up) kept. */
static void gumbel_halve(mcts_t *t)
{
    double q[BOARD_CELLS], score[MCTS_GUMBEL_M_MAX];
    double f = gumbel_values(t, q);
    int n = t->g_live;
    for (int j = 0; j < n; j++)
        score[j] = t->g_base[j] + gumbel_sigma(f, q[t->g_move[j]]);
    for (int j = 1; j < n; j++)   /* insertion sort, stable */
        for (int i = j; i > 0 && score[i] > score[i - 1]; i--) {
            double s = score[i], b = t->g_base[i];
            int16_t mv = t->g_move[i];
            score[i] = score[i - 1], t->g_base[i] = t->g_base[i - 1];
            t->g_move[i] = t->g_move[i - 1];
            score[i - 1] = s, t->g_base[i - 1] = b, t->g_move[i - 1] = mv;
        }
    t->g_live = (n + 1) / 2;
}

/* The index of nd's edge (ed) of `move`; -1 if none. */
static int edge_of(const node_t *nd, const edge_t *ed, int move)
{
    for (int i = 0; i < nd->nedges; i++)
        if (ed[i].move == move)
            return i;
    return -1;
}

/* The root edge of `move`, brought to the visited prefix's end when it has
 * no child yet (so select_leaf makes it one); -1 if it left the root. */
static int root_edge_to_visit(mcts_t *t, int move)
{
    node_t *r = N(t, t->root);
    edge_t *ed = E(t, r->edge);
    int i = edge_of(r, ed, move), nv = r->nvisited;
    if (i > nv) {
        edge_t e = ed[i];
        ed[i] = ed[nv];
        ed[nv] = e;
        i = nv;
    }
    return i;
}

/* The root's child for the next playout: the live candidate with the
 * fewest visits under this phase's goal; when each has reached it, the
 * better half goes on with a goal raised by budget / (phases * live), and
 * the last one alone takes what is left. A candidate proven lost gets no
 * more. -1 when no candidate can take it (PUCT chooses). */
static int gumbel_select(mcts_t *t)
{
    for (int round = 0; round < 2 * MCTS_GUMBEL_M_MAX; round++) {
        const node_t *r = CN(t, t->root);
        const edge_t *ed = CE(t, r->edge);
        int best = -1;
        uint32_t best_n = UINT32_MAX;
        for (int j = 0; j < t->g_live; j++) {
            int i = edge_of(r, ed, t->g_move[j]);
            if (i < 0) {   /* restricted away: out */
                t->g_live--;
                t->g_move[j] = t->g_move[t->g_live];
                t->g_base[j] = t->g_base[t->g_live];
                j--;
                continue;
            }
            const node_t *c = i < r->nvisited ? CN(t, ed[i].child) : NULL;
            if (c && c->state == NS_TERMINAL && c->exact == 1)
                continue;
            uint32_t n = c ? c->n + c->vl : 0;
            if (n < t->g_goal && n < best_n) {
                best = j;
                best_n = n;
            }
        }
        if (best >= 0)
            return root_edge_to_visit(t, t->g_move[best]);
        if (t->g_live == 0 || t->g_goal == UINT32_MAX)
            return -1;
        if (t->g_goal > 0 && t->g_live > 1)
            gumbel_halve(t);
        uint32_t step = t->g_budget / (uint32_t)(t->g_phases * t->g_live);
        t->g_goal = t->g_live == 1 ? UINT32_MAX : t->g_goal + (step > 0 ? step : 1);
    }
    return -1;
}

/* The Gumbel root's move: the live candidate (every root move when no
 * draw was made for this root) of highest base + sigma(Q), not proven
 * lost; MOVE_NONE if none. */
static int gumbel_pick(const mcts_t *t)
{
    const node_t *r = CN(t, t->root);
    const edge_t *ed = CE(t, r->edge);
    double q[BOARD_CELLS], f = gumbel_values(t, q);
    int n = t->g_ready ? t->g_live : r->nedges, move = MOVE_NONE;
    double best = -HUGE_VAL;
    for (int j = 0; j < n; j++) {
        int mv = t->g_ready ? t->g_move[j] : ed[j].move, i = edge_of(r, ed, mv);
        if (i < 0)
            continue;
        const node_t *c = i < r->nvisited ? CN(t, ed[i].child) : NULL;
        if (c && c->state == NS_TERMINAL && c->exact == 1)
            continue;
        double s = (t->g_ready ? t->g_base[j] : edge_logit(&ed[i])) + gumbel_sigma(f, q[mv]);
        if (s > best) {
            best = s;
            move = mv;
        }
    }
    return move;
}

/* The Gumbel root's policy target, softmax(log prior + sigma(completed
 * Q)) over the root's moves, as counts (the largest 65535; zeros left
 * out). */
static int gumbel_policy(const mcts_t *t, record_visit_t *out, int max)
{
    const node_t *r = CN(t, t->root);
    const edge_t *ed = CE(t, r->edge);
    double q[BOARD_CELLS], z[BOARD_CELLS], f = gumbel_values(t, q), top = -HUGE_VAL;
    for (int i = 0; i < r->nedges; i++) {
        z[i] = edge_logit(&ed[i]) + gumbel_sigma(f, q[ed[i].move]);
        top = z[i] > top ? z[i] : top;
    }
    int k = 0;
    for (int i = 0; i < r->nedges && k < max; i++) {
        long c = lrint(65535.0 * exp(z[i] - top));
        if (c <= 0)
            continue;
        out[k].move = ed[i].move;
        out[k].count = (uint16_t)(c > 65535 ? 65535 : c);
        k++;
    }
    return k;
}

void mcts_gumbel_noise(mcts_t *t, bool on) { t->g_noise = on; }

/* Every move of the expanded node nd leads to a proven win of the
 * opponent (its side to move there). */
static bool all_children_won(const mcts_t *t, const node_t *nd)
{
    if (nd->state != NS_EXPANDED || nd->nvisited < nd->nedges)
        return false;
    const edge_t *ed = CE(t, nd->edge);
    for (int i = 0; i < nd->nedges; i++) {
        const node_t *c = CN(t, ed[i].child);
        if (c->state != NS_TERMINAL || c->exact != 1)
            return false;
    }
    return true;
}

/* A proven node (NS_TERMINAL) reached by the path pd->path[0..depth): what
 * it proves of its parent, and its value backed up. had_vl: the path holds
 * a virtual loss (a leaf that was pending). */
static void resolve_terminal(mcts_t *t, const uint32_t *path, int depth, bool had_vl)
{
    node_t *nd = N(t, path[depth - 1]);
    assert(nd->state == NS_TERMINAL);
    node_t *par = depth >= 2 ? N(t, path[depth - 2]) : NULL;
    /* A known loss for the side to move here is a proven win for the
     * player who moved into it (MCTS-solver, one level). */
    if (nd->exact == -1 && par) {
        par->state = NS_TERMINAL;
        par->exact = 1;
    }
    /* A proven win for the side to move here: the parent is lost when
     * every one of its moves leads to one (a forced block's only move,
     * the few defences against a three); the grandparent learns it on
     * a later visit, by the rule above. */
    if (nd->exact == 1 && par && all_children_won(t, par)) {
        par->state = NS_TERMINAL;
        par->exact = -1;
    }
    backup(t, path, depth, (float)nd->exact, had_vl);
}

/* One descent from the root into pd. defer: a new leaf below the root is
 * only marked pending (pd->raw), for its thread to analyse outside the
 * tree's lock (deliver_leaves applies it); else it is prepared here. */
static int select_leaf(mcts_t *t, pending_t *pd, bool defer)
{
    pd->raw = false;
    board_t *b = &pd->board;
    memcpy(b, &t->root_board, sizeof *b);
    uint32_t ni = t->root;
    int depth = 0;
    pd->path[depth++] = ni;
    for (;;) {
        node_t *nd = N(t, ni);
        if (nd->state == NS_EXPANDED) {
            int i = depth == 1 && t->g_ready ? gumbel_select(t) : -1;
            if (i < 0)
                i = select_edge(t, nd, depth == 1);
            edge_t *e = E(t, nd->edge + (uint32_t)i);
            if (!e->child) {
                assert(i == nd->nvisited);
                uint32_t c = node_alloc(t);
                if (!c)
                    return SEL_FULL;
                e = E(t, N(t, ni)->edge + (uint32_t)i);
                e->child = c;
                N(t, ni)->nvisited++;
            }
            move_status_t st = board_play(b, e->move);
            assert(st == MOVE_OK);
            (void)st;
            ni = e->child;
            pd->path[depth++] = ni;
            continue;
        }
        if (nd->state == NS_PENDING)
            return SEL_COLLISION;
        if (nd->state == NS_NEW && defer && depth > 1) {
            nd->state = NS_PENDING;
            for (int i = 0; i < depth; i++)
                N(t, pd->path[i])->vl++;
            pd->depth = depth;
            pd->raw = true;
            return SEL_EVAL;
        }
        if (nd->state == NS_NEW) {
            if (!prepare_leaf(t, ni, b, depth == 1))
                return SEL_FULL;
            nd = N(t, ni);
            if (nd->state == NS_NEW) {
                float v;
                if (t->probe && probe_leaf(t, b, nd, &v)) {
                    nd->state = NS_EXPANDED;
                    backup(t, pd->path, depth, clamp_value(v), false);
                    return SEL_DONE;
                }
                nd->state = NS_PENDING;
                for (int i = 0; i < depth; i++)
                    N(t, pd->path[i])->vl++;
                pd->depth = depth;
                return SEL_EVAL;
            }
        }
        resolve_terminal(t, pd->path, depth, false);
        return SEL_DONE;
    }
}

bool mcts_search_done(const mcts_t *t, uint32_t visit_target)
{
    const node_t *r = CN(t, t->root);
    if (r->state == NS_TERMINAL || t->mem_full)
        return true;
    return visit_target > 0 && r->n + r->vl >= visit_target;
}

/* Make the root a proven win through `win` (a legal root move): its child
 * becomes proven lost for the opponent, which best_edge then picks. For a
 * root expanded as an inner node (tree reuse) or a solver's result from
 * outside. false when win is not a root child or the arena is full. */
static bool root_prove_win(mcts_t *t, int win)
{
    node_t *r = N(t, t->root);
    if (r->state != NS_EXPANDED && r->state != NS_TERMINAL)
        return false;
    if (r->state == NS_TERMINAL && r->exact == 1)
        return true;
    edge_t *ed = E(t, r->edge);
    int i = 0;
    while (i < r->nedges && ed[i].move != win)
        i++;
    if (i == r->nedges)
        return false;
    if (i >= r->nvisited) {   /* keep children a prefix of the edges */
        edge_t tmp = ed[i];
        ed[i] = ed[r->nvisited];
        ed[r->nvisited] = tmp;
        i = r->nvisited;
        uint32_t c = node_alloc(t);
        if (!c)
            return false;
        r = N(t, t->root);
        ed = E(t, r->edge);
        ed[i].child = c;
        r->nvisited++;
    }
    node_t *c = N(t, ed[i].child);
    if (c->state == NS_PENDING)
        return false;
    c->state = NS_TERMINAL;
    c->exact = -1;
    r->state = NS_TERMINAL;
    r->exact = 1;
    return true;
}

/* The root's deeper VCF check, once per root, for a root that was
 * expanded as an inner node (tree reuse; a new root gets it in
 * prepare_leaf). */
static void root_vcf_check(mcts_t *t)
{
    if (t->root_vcf_done)
        return;
    t->root_vcf_done = true;
    if (N(t, t->root)->state != NS_EXPANDED)
        return;
    int win = vcf_first_move(t, &t->root_board, t->p.vcf_root_nodes);
    if (win != MOVE_NONE)
        root_prove_win(t, win);
}

/* The root's threat search, once per root: the side to move's VCT (a
 * win proves the root), else the opponent's (the root is then searched
 * among its refutations only). root_ms > 0: the VCT gets vct_root_share
 * of it, the defence vct_defend_share and what the VCT left. */
static bool root_threats_due(mcts_t *t, const vct_t *solver)
{
    if (!solver || t->root_vct_done)
        return false;
    t->root_vct_done = true;
    const node_t *r = CN(t, t->root);
    if (board_over(&t->root_board) || (r->state == NS_TERMINAL && r->exact != 0))
        return false;
    /* else the solver is there for mcts_refute_best alone */
    return t->p.vct_root_nodes || t->p.vct_defend_nodes;
}

static void root_vct_check(mcts_t *t, double root_ms)
{
    double time_ms = root_ms * t->p.vct_root_share;
    if (!root_threats_due(t, t->vct))
        return;
    const board_t *b = &t->root_board;
    node_t *r = N(t, t->root);
    double t0 = util_now_ms();
    int win = MOVE_NONE;   /* a fours-only win is found first, and more cheaply */
    if (r->state == NS_NEW) {
        win = vcf_first_move(t, b, t->p.vcf_root_nodes);
        t->root_vcf_done = true;
    } else {
        root_vcf_check(t);
        if (N(t, t->root)->state == NS_TERMINAL)
            return;
    }
    if (win == MOVE_NONE)
        win = vct_first_move(t, b, t->p.vct_root_nodes, 0, time_ms, false);
    if (win != MOVE_NONE) {
        mcts_root_prove_win(t, win);
        return;
    }
    if (!t->p.vct_defend_nodes)
        return;
    double left = root_ms > 0.0 ? root_ms * (t->p.vct_root_share + t->p.vct_defend_share) -
                                      (util_now_ms() - t0)
                                : 0.0;
    if (root_ms > 0.0 && left < 1.0)
        return;
    /* each solve of the defence within vct_defend_nodes; the first (the
     * opponent's VCT) also within the time left */
    vct_limits_t lim = {.nodes = t->p.vct_defend_nodes, .time_ms = left};
    int def[BOARD_CELLS];
    int n = vct_defend_proven(t->vct, b, &lim, def, NULL, NULL);
    if (n <= 0)
        return;   /* no threat, or lost whatever we play: search everything */
    /* a caller's filter (mcts_set_root_filter) stays in force: the
     * defences it allows; none of them: lost anyway, search what it allows */
    int k = 0;
    for (int i = 0; i < n; i++)
        if (t->nallow == 0 || t->allow[def[i]])
            def[k++] = def[i];
    if (k == 0)
        return;
    n = k;
    t->vct_defences++;
    if (r->state == NS_NEW) {
        memset(t->allow, 0, sizeof t->allow);
        t->nallow = 0;
        for (int i = 0; i < n; i++) {
            t->allow[def[i]] = 1;
            t->nallow++;
        }
    } else {
        mcts_set_root_filter(t, b, def, n);   /* drops the reused tree */
        t->root_vct_done = true;
    }
}

bool mcts_root_prove_win(mcts_t *t, int move)
{
    assert(t->npending == 0);
    node_t *r = N(t, t->root);
    if (r->state == NS_NEW) {
        /* not expanded yet: expand it with this move as its only child */
        if (board_check_move(&t->root_board, move) != MOVE_OK)
            return false;
        return make_proven_win(t, t->root, move);
    }
    return root_prove_win(t, move);
}

/* Select up to max leaves into the pending slots pend[0..max-1] (virtual
 * loss on their paths); returns how many need the net. */
static int gather_into(mcts_t *t, pending_t *pend, int max, uint32_t visit_target,
                       const board_t **boards, bool defer)
{
    root_vcf_check(t);
    root_vct_check(t, 0.0);
    gumbel_prepare(t, visit_target);
    int got = 0, resolved = 0;
    while (got < max && resolved < 4 * max + 64 && !mcts_search_done(t, visit_target)) {
        pending_t *pd = &pend[got];
        int r = select_leaf(t, pd, defer);
        if (r == SEL_EVAL) {
            boards[got++] = &pd->board;
        } else if (r == SEL_DONE) {
            resolved++;
        } else {
            break;   /* collision or full */
        }
    }
    return got;
}

/* Expand the n leaves in pend[] with the net's rows and back them up. */
static void deliver_from(mcts_t *t, pending_t *pend, int n, const float *policy,
                         const float *value)
{
    for (int k = 0; k < n; k++) {
        pending_t *pd = &pend[k];
        node_t *nd = N(t, pd->path[pd->depth - 1]);
        assert(nd->state == NS_PENDING);
        set_priors(t, nd, policy + (size_t)k * BOARD_CELLS, &pd->board);
        nd->state = NS_EXPANDED;
        backup(t, pd->path, pd->depth, clamp_value(value[k]), true);
    }
}

/* A search thread's n pending leaves after its evaluation, into the tree.
 * A raw one was analysed outside the lock into leaf[k] (an open one's
 * priors set there too, from its row): it goes in now, its value its
 * proof or its row's; the others take their rows as deliver_from's do.
 * row[k]: leaf k's row of policy and value, -1 for none (a proven leaf). */
static void deliver_leaves(mcts_t *t, pending_t *pend, const leaf_t *leaf, const int *row,
                           int n, const float *policy, const float *value)
{
    for (int k = 0; k < n; k++) {
        pending_t *pd = &pend[k];
        uint32_t ni = pd->path[pd->depth - 1];
        assert(N(t, ni)->state == NS_PENDING);
        if (!pd->raw) {
            set_priors(t, N(t, ni), policy + (size_t)row[k] * BOARD_CELLS, &pd->board);
            N(t, ni)->state = NS_EXPANDED;
            backup(t, pd->path, pd->depth, clamp_value(value[row[k]]), true);
            continue;
        }
        N(t, ni)->state = NS_NEW;
        if (!apply_leaf(t, ni, &leaf[k])) {   /* the arena is full: the descent is undone */
            for (int i = 0; i < pd->depth; i++)
                N(t, pd->path[i])->vl--;
            continue;
        }
        node_t *nd = N(t, ni);
        if (nd->state == NS_TERMINAL) {
            resolve_terminal(t, pd->path, pd->depth, true);
            continue;
        }
        assert(row[k] >= 0);
        nd->state = NS_EXPANDED;
        backup(t, pd->path, pd->depth, clamp_value(value[row[k]]), true);
    }
}

int mcts_gather(mcts_t *t, int max, uint32_t visit_target, const board_t **boards)
{
    assert(t->npending == 0);
    if (max > t->p.max_pending)
        max = t->p.max_pending;
    t->npending = gather_into(t, t->pend, max, visit_target, boards, false);
    return t->npending;
}

void mcts_deliver(mcts_t *t, const float *policy, const float *value)
{
    deliver_from(t, t->pend, t->npending, policy, value);
    t->npending = 0;
}

void mcts_eval_uniform(void *user, const board_t *const *boards, int n, float *policy,
                       float *value)
{
    (void)user;
    for (int i = 0; i < n; i++) {
        int np = board_npoints(boards[i]);
        float *row = policy + (size_t)i * BOARD_CELLS;
        for (int p = 0; p < np; p++)
            row[p] = 1.0f;
        value[i] = 0.0f;
    }
}

/* ----------------------------------------------------------- lifecycle */

void mcts_params_default(mcts_params_t *p)
{
    *p = (mcts_params_t){.c_puct = (float)MCTS_C_PUCT, .fpu_reduction = (float)MCTS_FPU,
                         .fpu_root = (float)MCTS_FPU_ROOT,
                         .max_pending = 8, .mem_bytes = (size_t)64 << 20, .seed = 1,
                         .vcf_nodes = MCTS_VCF_NODES, .vcf_root_nodes = MCTS_VCF_ROOT_NODES,
                         .vcf_tt_bytes = (size_t)256 << 10, .vct_root_nodes = MCTS_VCT_ROOT_NODES,
                         .vct_defend_nodes = MCTS_VCT_DEFEND_NODES,
                         .vct_root_share = (float)MCTS_VCT_ROOT_SHARE,
                         .vct_defend_share = (float)MCTS_VCT_DEFEND_SHARE,
                         .vct_verify_nodes = MCTS_VCT_VERIFY_NODES,
                         .vct_verify_share = (float)MCTS_VCT_VERIFY_SHARE,
                         .vct_quiet_nodes = MCTS_VCT_QUIET_NODES,
                         .vct_watch_nodes = MCTS_VCT_WATCH_NODES,
                         .vct_watch_quiet_nodes = MCTS_VCT_WATCH_QUIET_NODES,
                         .vct_tt_bytes = MCTS_VCT_TT_BYTES, .threat_prune = true,
                         .select_lcb = (float)MCTS_SELECT_LCB,
                         .pattern_prior = (float)MCTS_PATTERN_PRIOR,
                         .policy_temp = (float)MCTS_POLICY_TEMP,
                         .minimax_mix = (float)MCTS_MINIMAX_MIX,
                         .gumbel_scale = (float)MCTS_GUMBEL_SCALE};
}

static void tree_clear(mcts_t *t)
{
    arena_t *a = &t->ar[t->cur];
    a->nused = 1;
    a->eused = 0;
    t->mem_full = false;
    t->root = node_alloc(t);
    t->root_noised = false;
    t->root_vcf_done = false;
    t->root_vct_done = false;
    t->nverified = 0;
    t->nquiet = 0;
    t->g_ready = false;
}

/* mcts_create gives each arena 64 edges per node: a node (24 bytes) and
 * 64 edges (8 bytes each) per 536 bytes. */
#define EDGES_PER_NODE 64

size_t mcts_tree_bytes(uint32_t visits, int size)
{
    /* A search of V visits makes at most V nodes with at most size^2 edges
     * each; an arena holds the subtree kept from the last search and the
     * next one (it compacts when half full), and there are two arenas. */
    size_t npts = (size_t)size * (size_t)size;
    size_t nodes = 2 * ((size_t)visits + 16);
    size_t edges = nodes * npts;
    size_t ncap = (edges + EDGES_PER_NODE - 1) / EDGES_PER_NODE;
    if (ncap < nodes)
        ncap = nodes;
    size_t bytes = 2 * ncap * (sizeof(node_t) + EDGES_PER_NODE * sizeof(edge_t));
    return bytes > ((size_t)1 << 20) ? bytes : (size_t)1 << 20;
}

void mcts_set_vct_root_nodes(mcts_t *t, uint32_t nodes) { t->p.vct_root_nodes = nodes; }

void mcts_set_probe(mcts_t *t, mcts_probe_fn probe, void *user)
{
    t->probe = probe;
    t->probe_user = user;
}

/* The first parameter of p out of its range, told in err; false if none. */
static bool params_refused(const mcts_params_t *p, char *err, size_t errlen)
{
    const struct {
        const char *name;
        double v, lo, hi;   /* lo <= v <= hi (hi infinite: v >= lo, or v > lo if open) */
        bool open;
    } r[] = {
        {"max_pending", p->max_pending, 1, 4096, false},
        {"c_puct", p->c_puct, 0, HUGE_VAL, true},
        {"fpu", p->fpu_reduction, 0, HUGE_VAL, false},
        {"fpu_root", p->fpu_root, 0, HUGE_VAL, false},
        {"forced_k", p->forced_k, 0, 100, false},
        {"gumbel_m", p->gumbel_m, 0, MCTS_GUMBEL_M_MAX, false},
        {"gumbel_scale", p->gumbel_scale, 0, MCTS_GUMBEL_SCALE_MAX, true},
        {"pattern_prior", p->pattern_prior, 0, 1, false},
        {"policy_temp", p->policy_temp, MCTS_POLICY_TEMP_MIN, MCTS_POLICY_TEMP_MAX, false},
        {"minimax_mix", p->minimax_mix, 0, 1, false},
        {"vct_depth", p->vct_depth, 0, VCT_MAX_DEPTH, false},
        {"vct_root_share", p->vct_root_share, 0, 1, false},
        {"vct_defend_share", p->vct_defend_share, 0, 1, false},
        {"vct_verify_share", p->vct_verify_share, 0, 1, false},
    };
    for (size_t i = 0; i < sizeof r / sizeof r[0]; i++) {
        double v = r[i].v;
        bool ok = r[i].open ? v > r[i].lo : v >= r[i].lo;   /* NaN: neither */
        if (ok && v <= r[i].hi)
            continue;
        if (r[i].hi == HUGE_VAL)
            snprintf(err, errlen, "bad search parameter: %s %g (%s %g)", r[i].name, v,
                     r[i].open ? ">" : ">=", r[i].lo);
        else
            snprintf(err, errlen, "bad search parameter: %s %g (%g <= %s <= %g)", r[i].name, v,
                     r[i].lo, r[i].name, r[i].hi);
        return true;
    }
    return false;
}

mcts_t *mcts_create(const mcts_params_t *p, char *err, size_t errlen)
{
    if (params_refused(p, err, errlen))
        return NULL;
    size_t half = p->mem_bytes / 2;
    size_t per = sizeof(node_t) + EDGES_PER_NODE * sizeof(edge_t);   /* a node and its edges */
    size_t ncap = half / per, ecap = ncap * EDGES_PER_NODE;
    if (ncap < 64) {
        snprintf(err, errlen, "search memory of %zu bytes is too small", p->mem_bytes);
        return NULL;
    }
    if (ncap > UINT32_MAX / 2) {
        ncap = UINT32_MAX / 2;
        ecap = (size_t)UINT32_MAX - 1;
    }
    mcts_t *t = calloc(1, sizeof *t);
    if (!t)
        goto out_nomem;
    t->p = *p;
    t->rng = p->seed ^ 0x5851f42d4c957f2dull;
    for (int i = 0; i < 2; i++) {
        t->ar[i].ncap = ncap;
        t->ar[i].ecap = ecap;
        t->ar[i].nodes = malloc(ncap * sizeof(node_t));
        t->ar[i].edges = malloc(ecap * sizeof(edge_t));
        if (!t->ar[i].nodes || !t->ar[i].edges)
            goto out_free_tree;
    }
    if (p->vcf_nodes || p->vcf_root_nodes) {
        t->vcf = vcf_create(p->vcf_tt_bytes, err, errlen);
        if (!t->vcf)
            goto out_free_tree;
    }
    if (p->vct_nodes || p->vct_root_nodes || p->vct_defend_nodes || p->vct_verify_nodes) {
        t->vct = vct_create(p->vct_tt_bytes, err, errlen);
        if (!t->vct)
            goto out_free_tree;
    }
    t->pend = malloc((size_t)p->max_pending * sizeof *t->pend);
    t->policy = malloc((size_t)p->max_pending * BOARD_CELLS * sizeof(float));
    t->value = malloc((size_t)p->max_pending * sizeof(float));
    if (!t->pend || !t->policy || !t->value)
        goto out_free_tree;
    board_t b;
    board_init(&b, BOARD_DEFAULT, RULE_FREESTYLE);
    mcts_set_root(t, &b);
    return t;
out_free_tree:
    mcts_free(t);
out_nomem:
    snprintf(err, errlen, "out of memory for a search tree of %zu bytes", p->mem_bytes);
    return NULL;
}

void mcts_free(mcts_t *t)
{
    if (!t)
        return;
    for (int i = 0; i < 2; i++) {
        free(t->ar[i].nodes);
        free(t->ar[i].edges);
    }
    vcf_free(t->vcf);
    vct_free(t->vct);
    for (int i = 0; i < MCTS_MAX_THREADS; i++) {
        vcf_free(t->ws[i].vcf);
        vct_free(t->ws[i].vct);
    }
    free(t->leaf);
    free(t->pend);
    free(t->policy);
    free(t->value);
    free(t);
}

void mcts_set_root(mcts_t *t, const board_t *b)
{
    assert(t->npending == 0);
    memcpy(&t->root_board, b, sizeof *b);
    t->nallow = 0;
    tree_clear(t);
}

void mcts_set_root_filter(mcts_t *t, const board_t *b, const int *moves, int n)
{
    mcts_set_root(t, b);
    memset(t->allow, 0, sizeof t->allow);
    for (int i = 0; i < n; i++)
        if (moves[i] >= 0 && moves[i] < board_npoints(b) && !t->allow[moves[i]]) {
            t->allow[moves[i]] = 1;
            t->nallow++;
        }
}

int mcts_root_filter(const mcts_t *t, int *moves)
{
    int n = 0;
    for (int p = 0; p < board_npoints(&t->root_board) && n < t->nallow; p++)
        if (t->allow[p])
            moves[n++] = p;
    return n;
}

const board_t *mcts_root_board(const mcts_t *t) { return &t->root_board; }

/* Search the root among allow[] from now on (a caller's filter still in
 * force), keeping its tree: each other visited child becomes a proven loss
 * (as the watcher's refutations do), and the other unvisited edges leave
 * the root, the allowed ones keeping their order. A new root gets the
 * filter, which prepare_leaf applies. 0: done; -1: nothing to do (allow[]
 * leaves no root move: lost anyway, or outside the caller's filter);
 * 1: try again, a node it must change is in flight in a search thread. */
static int restrict_root(mcts_t *t, uint8_t *allow)
{
    if (t->nallow > 0)
        for (int p = 0; p < BOARD_CELLS; p++)
            allow[p] &= t->allow[p];
    node_t *r = N(t, t->root);
    if (r->state == NS_PENDING)
        return 1;
    if (r->state != NS_NEW && r->state != NS_EXPANDED)
        return -1;
    int keep = 0;
    if (r->state == NS_NEW) {   /* prepare_leaf applies the filter when it expands the root */
        for (int p = 0; p < BOARD_CELLS; p++)
            keep += allow[p] && board_check_move(&t->root_board, p) == MOVE_OK;
    } else {
        const edge_t *ce = CE(t, r->edge);
        for (int i = 0; i < r->nedges; i++) {
            keep += allow[ce[i].move];
            if (i < r->nvisited && !allow[ce[i].move] && CN(t, ce[i].child)->state == NS_PENDING)
                return 1;
        }
    }
    if (keep == 0)
        return -1;
    memcpy(t->allow, allow, sizeof t->allow);
    t->nallow = 0;
    for (int p = 0; p < BOARD_CELLS; p++)
        t->nallow += allow[p];
    if (r->state == NS_NEW)
        return 0;
    edge_t *ed = E(t, r->edge);
    int nv = r->nvisited, k = nv;
    for (int i = 0; i < nv; i++) {
        node_t *c = N(t, ed[i].child);
        if (!allow[ed[i].move] && (c->state == NS_EXPANDED || c->state == NS_NEW)) {
            c->state = NS_TERMINAL;
            c->exact = 1;
        }
    }
    for (int i = nv; i < r->nedges; i++)
        if (allow[ed[i].move])
            ed[k++] = ed[i];
    r->nedges = (uint16_t)k;
    return 0;
}

bool mcts_restrict_root(mcts_t *t, const int *moves, int n)
{
    assert(t->npending == 0);
    uint8_t allow[BOARD_CELLS] = {0};
    for (int i = 0; i < n; i++)
        if (moves[i] >= 0 && moves[i] < board_npoints(&t->root_board))
            allow[moves[i]] = 1;
    return restrict_root(t, allow) == 0;
}

/* Copy the subtree under node `src` of arena `from` into the live arena;
 * returns its new index (0 when out of room). */
static uint32_t copy_subtree(mcts_t *t, const arena_t *from, uint32_t src)
{
    const node_t *s = &from->nodes[src];
    uint32_t d = node_alloc(t);
    if (!d)
        return 0;
    node_t *nd = N(t, d);
    *nd = *s;
    if (s->nedges == 0)
        return d;
    uint32_t e = edges_alloc(t, s->nedges);
    if (e == UINT32_MAX)
        return 0;
    memcpy(E(t, e), &from->edges[s->edge], s->nedges * sizeof(edge_t));
    N(t, d)->edge = e;
    for (int i = 0; i < s->nvisited; i++) {
        uint32_t c = copy_subtree(t, from, from->edges[s->edge + (uint32_t)i].child);
        if (!c)
            return 0;
        E(t, e + (uint32_t)i)->child = c;
    }
    return d;
}

bool mcts_advance(mcts_t *t, int move)
{
    assert(t->npending == 0);
    board_t nb = t->root_board;
    if (board_play(&nb, move) != MOVE_OK)
        return false;
    const node_t *r = CN(t, t->root);
    uint32_t child = 0;
    if (r->state == NS_EXPANDED || r->state == NS_TERMINAL)
        for (int i = 0; i < r->nvisited; i++)
            if (CE(t, r->edge + (uint32_t)i)->move == move)
                child = CE(t, r->edge + (uint32_t)i)->child;
    t->root_board = nb;
    t->root_noised = false;
    t->root_vcf_done = false;
    t->root_vct_done = false;
    t->nverified = 0;
    t->nquiet = 0;
    t->nallow = 0;
    t->g_ready = false;
    const node_t *c = child ? CN(t, child) : NULL;
    /* a child proven lost without its moves (marked by the root's VCF
     * check), or lost at its expansion (one move kept, the board's first
     * empty point when nothing resists), is searched afresh like a new
     * one: as the root it keeps the moves that resist */
    if (!c || c->state == NS_PENDING || c->state == NS_NEW ||
        (c->state == NS_TERMINAL && !board_over(&nb) &&
         (c->nedges == 0 || (c->exact == -1 && c->nvisited == 0)))) {
        tree_clear(t);
        return true;
    }
    t->root = child;
    /* Arena more than half used: compact the kept subtree into the spare
     * arena; if the subtree alone fills half of it, start afresh. */
    arena_t *a = &t->ar[t->cur];
    if (a->nused > a->ncap / 2 || a->eused > a->ecap / 2) {
        const arena_t *from = a;
        t->cur ^= 1;
        arena_t *to = &t->ar[t->cur];
        to->nused = 1;
        to->eused = 0;
        t->mem_full = false;
        uint32_t nr = copy_subtree(t, from, child);
        if (!nr || to->nused > to->ncap / 2 || to->eused > to->ecap / 2)
            tree_clear(t);
        else
            t->root = nr;
    }
    t->mem_full = false;
    return true;
}

bool mcts_sync_root(mcts_t *t, const board_t *b)
{
    const board_t *r = &t->root_board;
    int extra = b->nmoves - r->nmoves;
    if (b->size == r->size && b->rule == r->rule && extra >= 0 && extra <= 2 &&
        memcmp(b->moves, r->moves, (size_t)r->nmoves * sizeof r->moves[0]) == 0) {
        for (int i = 0; i < extra; i++)
            if (!mcts_advance(t, b->moves[r->nmoves]))
                goto reset;
        if (t->root_board.hash == b->hash)
            return true;
    }
reset:
    mcts_set_root(t, b);
    return false;
}

bool mcts_root_expanded(const mcts_t *t)
{
    const node_t *r = CN(t, t->root);
    return r->state == NS_EXPANDED || (r->state == NS_TERMINAL && r->nedges > 0);
}

void mcts_add_noise(mcts_t *t, double alpha, double frac)
{
    node_t *r = N(t, t->root);
    if (t->root_noised || r->state != NS_EXPANDED || r->nedges < 2 || !(alpha > 0.0) ||
        !(frac > 0.0))
        return;
    t->root_noised = true;
    edge_t *ed = E(t, r->edge);
    int k = r->nedges;
    double g[BOARD_CELLS], sum = 0.0;
    for (int i = 0; i < k; i++) {
        g[i] = rng_gamma(&t->rng, alpha);
        sum += g[i];
    }
    if (!(sum > 0.0))
        return;
    for (int i = 0; i < k; i++) {
        double p = (1.0 - frac) * ed[i].prior / PRIOR_ONE + frac * g[i] / sum;
        long q = lrint(p * PRIOR_ONE);
        ed[i].prior = (uint16_t)(q < 0 ? 0 : q > 65535 ? 65535 : q);
    }
    /* keep the visited prefix where it is; re-sort the unvisited rest */
    int nv = r->nvisited;
    qsort(ed + nv, (size_t)(k - nv), sizeof *ed, cmp_edge_prior);
}

bool mcts_set_root_policy(mcts_t *t, const float *row)
{
    node_t *r = N(t, t->root);
    if (r->state != NS_EXPANDED)
        return false;
    fill_priors(&t->p, E(t, r->edge), r->nedges, row, &t->root_board);
    /* keep the visited prefix where it is; re-sort the unvisited rest */
    int nv = r->nvisited;
    qsort(E(t, r->edge) + nv, (size_t)(r->nedges - nv), sizeof(edge_t), cmp_edge_prior);
    return true;
}

/* ------------------------------------------------------------- results */

uint32_t mcts_root_n(const mcts_t *t) { return CN(t, t->root)->n; }

float mcts_root_value(const mcts_t *t)
{
    const node_t *r = CN(t, t->root);
    if (r->state == NS_TERMINAL)
        return (float)r->exact;
    return r->n ? -r->w / (float)r->n : 0.0f;
}

int mcts_root_visits(const mcts_t *t, record_visit_t *out, int max)
{
    const node_t *r = CN(t, t->root);
    int k = 0;
    for (int i = 0; i < r->nvisited && k < max; i++) {
        const edge_t *e = CE(t, r->edge + (uint32_t)i);
        uint32_t n = CN(t, e->child)->n;
        if (n == 0)
            continue;
        out[k].move = e->move;
        out[k].count = (uint16_t)(n > 65535 ? 65535 : n);
        k++;
    }
    return k;
}

static int best_edge(const mcts_t *t, const node_t *nd);

int mcts_root_policy_visits(const mcts_t *t, record_visit_t *out, int max)
{
    const node_t *r = CN(t, t->root);
    /* a root proven won: the winning move alone. Its visits say nothing of
     * the win: a root the threat search proves before any playout has
     * none, or only those a reused tree left, often on other moves. */
    if (r->state == NS_TERMINAL && r->exact == 1) {
        int b = best_edge(t, r);
        if (b < 0 || max < 1)
            return 0;
        uint32_t n = r->n > 1 ? r->n : 1;
        out[0].move = CE(t, r->edge + (uint32_t)b)->move;
        out[0].count = (uint16_t)(n > 65535 ? 65535 : n);
        return 1;
    }
    /* a root the search proved lost after visiting its moves holds forced
     * visits too */
    if (t->p.gumbel_m > 0 && r->state == NS_EXPANDED)
        return gumbel_policy(t, out, max);
    bool searched = r->state == NS_EXPANDED ||
                    (r->state == NS_TERMINAL && r->exact == -1 && r->nvisited > 0);
    if (!(t->p.forced_k > 0.0f) || !t->root_noised || !searched)
        return mcts_root_visits(t, out, max);
    const edge_t *ed = CE(t, r->edge);
    int b = best_edge(t, r);
    const node_t *bc = ed[b].child ? CN(t, ed[b].child) : NULL;
    if (!bc || bc->n == 0)
        return mcts_root_visits(t, out, max);
    /* PUCT as select_edge scores it, with the root's final visit count */
    double cp = t->p.c_puct * sqrt((double)r->n) / PRIOR_ONE;
    double total = (double)r->n - 1.0;
    double best_u = bc->w / bc->n + cp * ed[b].prior / (1.0 + bc->n);
    int k = 0;
    for (int i = 0; i < r->nvisited && k < max; i++) {
        const node_t *c = CN(t, ed[i].child);
        uint32_t n = c->n;
        if (n == 0)
            continue;
        if (i != b) {
            double forced = sqrt(t->p.forced_k * ed[i].prior / PRIOR_ONE * total);
            double keep = ceil((double)n - forced);   /* at most the forced visits go */
            double gap = best_u - c->w / n;
            /* fewest visits whose PUCT value stays below the best child's:
             * q + a / (1 + n') < best_u  <=>  n' > a / gap - 1 */
            double a = cp * ed[i].prior;
            double puct_floor = gap > 0.0 ? floor(a / gap - 1.0) + 1.0 : (double)n;
            if (puct_floor > keep)
                keep = puct_floor;
            if (keep < (double)n)
                n = keep > 0.0 ? (uint32_t)keep : 0;
            if (n <= 1)
                continue;
        }
        out[k].move = ed[i].move;
        out[k].count = (uint16_t)(n > 65535 ? 65535 : n);
        k++;
    }
    return k;
}

int mcts_root_children(const mcts_t *t, mcts_child_info_t *out, int max)
{
    const node_t *r = CN(t, t->root);
    int k = 0, b = best_edge(t, r);
    for (int i = 0; i < r->nedges && k < max; i++) {
        const edge_t *e = CE(t, r->edge + (uint32_t)i);
        const node_t *c = e->child ? CN(t, e->child) : NULL;
        out[k].move = e->move;
        out[k].visits = c ? c->n : 0;
        out[k].prior = e->prior / PRIOR_ONE;
        /* a proven root's moves may have no node: a lost root's every move
         * loses; a won root's move wins when it is the only one (the root
         * was expanded with the winning move alone) */
        int root_exact = !c && r->state == NS_TERMINAL ? r->exact : 0;
        out[k].proven = c && c->state == NS_TERMINAL ? -c->exact
                        : root_exact < 0 || (root_exact > 0 && r->nedges == 1) ? root_exact : 0;
        out[k].q = c && c->n ? c->w / (float)c->n : (float)out[k].proven;
        out[k].chosen = i == b;
        k++;
    }
    return k;
}

static bool ranks_before(const mcts_child_info_t *x, const mcts_child_info_t *y)
{
    if (x->proven != y->proven)
        return x->proven > y->proven;
    if (x->chosen != y->chosen)
        return x->chosen;
    if (x->visits != y->visits)
        return x->visits > y->visits;
    return x->prior > y->prior;
}

/* Stable (an insertion sort: a report's few hundred children, once), so
 * full ties keep edge order as best_edge does: the move played comes first. */
void mcts_rank_children(mcts_child_info_t *ch, int n)
{
    for (int i = 1; i < n; i++) {
        mcts_child_info_t c = ch[i];
        int j = i;
        for (; j > 0 && ranks_before(&c, &ch[j - 1]); j--)
            ch[j] = ch[j - 1];
        ch[j] = c;
    }
}

/* Best child of node: a proven win if there is one, else most visits
 * (ties: higher prior) or, with select_lcb, the best bound; children
 * proven lost for the mover only when nothing else is left. */
static int best_edge(const mcts_t *t, const node_t *nd)
{
    if (nd->nedges == 0)
        return -1;
    const edge_t *ed = CE(t, nd->edge);
    /* select_lcb: the children within reach of the most visited one, by
     * their value less select_lcb / sqrt(visits) (a lower confidence
     * bound with one deviation for every value) */
    double k = t->p.select_lcb;
    double reach = 0.0;
    if (k > 0.0) {
        for (int i = 0; i < nd->nvisited; i++) {
            const node_t *c = CN(t, ed[i].child);
            if (c->state != NS_TERMINAL && c->n > reach)
                reach = c->n;
        }
        reach *= SELECT_LCB_REACH;
    }
    int best = 0;
    double best_key = -1e300;
    for (int i = 0; i < nd->nedges; i++) {
        const node_t *c = ed[i].child ? CN(t, ed[i].child) : NULL;
        double key = c ? (double)c->n : 0.0;
        double tie = ed[i].prior * 1e-6;   /* ties of visits: the prior */
        if (c && c->state == NS_TERMINAL && c->exact == -1)
            key += 1e12;            /* the opponent is lost there: take it */
        else if (c && c->state == NS_TERMINAL && c->exact == 1)
            key -= 1e12;            /* we would lose: only if nothing else */
        else if (k > 0.0 && c && c->state == NS_TERMINAL)
            key = 1e9, tie = 0.0;   /* a proven draw: its value, exactly */
        else if (k > 0.0 && c && c->n > 0 && c->n >= reach)
            key = 1e9 + c->w / c->n - k / sqrt((double)c->n), tie = 0.0;
        key += tie;
        if (key > best_key) {
            best_key = key;
            best = i;
        }
    }
    return best;
}

/* move is one of list[0..n): for t->verified, a root move checked against
 * the opponent's VCT for this root (by mcts_refute_best or the watcher);
 * for t->quiet, one the watcher checked for the opponent's quiet win. */
static bool listed(const int16_t *list, int n, int move)
{
    for (int i = 0; i < n; i++)
        if (list[i] == move)
            return true;
    return false;
}
static bool root_checked(const mcts_t *t, int move)
{
    return listed(t->verified, t->nverified, move);
}
/* A root move's check did not finish: it may be checked again. */
static void unverify(mcts_t *t, int move)
{
    for (int i = 0; i < t->nverified; i++)
        if (t->verified[i] == move) {
            t->verified[i] = t->verified[--t->nverified];
            return;
        }
}

int mcts_refute_best(mcts_t *t, vct_t *solver, uint32_t nodes, double time_ms)
{
    node_t *r = N(t, t->root);
    if (!solver)
        solver = t->vct;
    if (!solver || !nodes || t->npending || r->state != NS_EXPANDED ||
        t->nverified >= VERIFY_MAX)
        return MOVE_NONE;
    int b = best_edge(t, r);
    edge_t *ed = E(t, r->edge);
    if (b < 0 || !ed[b].child)
        return MOVE_NONE;
    int move = ed[b].move;
    node_t *c = N(t, ed[b].child);
    if (root_checked(t, move))
        return MOVE_NONE;
    if (c->state != NS_EXPANDED && c->state != NS_NEW)
        return MOVE_NONE;   /* proven already, or in flight */
    t->verified[t->nverified++] = (int16_t)move;
    board_t after = t->root_board;
    if (board_play(&after, move) != MOVE_OK || board_over(&after))
        return MOVE_NONE;
    double t0 = util_now_ms();
    int win = vct_first_move_on(t, solver, &after, nodes, 0, time_ms, true);
    double left = time_ms > 0.0 ? time_ms - (util_now_ms() - t0) : 0.0;
    if (win == MOVE_NONE && t->p.vct_quiet_nodes && (time_ms <= 0.0 || left >= 1.0)) {
        vct_limits_t lim = {.nodes = t->p.vct_quiet_nodes, .time_ms = left};
        t->vct_checks++;
        win = vct_quiet_win(solver, &after, &lim, QUIET_CANDS, NULL, NULL);
        t->vct_wins += win != MOVE_NONE;
    }
    if (win == MOVE_NONE)
        return MOVE_NONE;
    /* the opponent wins there: a proven win for the side to move at c,
     * below which nothing is searched again */
    c = N(t, ed[b].child);
    c->state = NS_TERMINAL;
    c->exact = 1;
    return move;
}

int mcts_pick_move(mcts_t *t, double temperature)
{
    const node_t *r = CN(t, t->root);
    if (t->p.gumbel_m > 0 && r->state == NS_EXPANDED) {
        int move = gumbel_pick(t);
        if (move != MOVE_NONE)
            return move;
    }
    int b = best_edge(t, r);
    if (b < 0)
        return MOVE_NONE;
    const edge_t *ed = CE(t, r->edge);
    const node_t *bc = ed[b].child ? CN(t, ed[b].child) : NULL;
    if (!(temperature > 0.0) || r->state == NS_TERMINAL || !bc || bc->n == 0 ||
        (bc->state == NS_TERMINAL && bc->exact == -1))
        return ed[b].move;
    double w[BOARD_CELLS], sum = 0.0, maxn = bc->n;
    for (int i = 0; i < r->nvisited; i++) {
        const node_t *c = CN(t, ed[i].child);
        w[i] = c->n ? pow(c->n / maxn, 1.0 / temperature) : 0.0;
        if (c->state == NS_TERMINAL && c->exact == 1)
            w[i] = 0.0;
        sum += w[i];
    }
    if (!(sum > 0.0))
        return ed[b].move;
    double u = util_rng_unit(&t->rng) * sum;
    for (int i = 0; i < r->nvisited; i++) {
        u -= w[i];
        if (u <= 0.0 && w[i] > 0.0)
            return ed[i].move;
    }
    return ed[b].move;
}

/* The most visited line below nd (best_edge at each step), up to max moves. */
static int pv_from(const mcts_t *t, const node_t *nd, int *pv, int max)
{
    int n = 0;
    while (n < max && nd->nedges > 0) {
        int i = best_edge(t, nd);
        const edge_t *e = CE(t, nd->edge + (uint32_t)i);
        pv[n++] = e->move;
        if (!e->child)
            break;
        nd = CN(t, e->child);
        if (nd->n == 0)
            break;
    }
    return n;
}

void mcts_get_result(const mcts_t *t, mcts_result_t *out)
{
    const node_t *r = CN(t, t->root);
    out->value = mcts_root_value(t);
    out->winrate = (out->value + 1.0f) * 0.5f;
    out->proven = r->state == NS_TERMINAL ? r->exact : 0;
    if (r->state == NS_TERMINAL && r->exact == 0)
        out->proven = 0;
    out->root_visits = r->n;
    out->mem_full = t->mem_full;
    int b = best_edge(t, r);
    out->best_move = b < 0 ? MOVE_NONE : CE(t, r->edge + (uint32_t)b)->move;
    out->npv = pv_from(t, r, out->pv, MCTS_PV_MAX);
}

int mcts_root_child_pv(const mcts_t *t, int move, int *pv, int max)
{
    const node_t *r = CN(t, t->root);
    if (max < 1)
        return 0;
    for (int i = 0; i < r->nedges; i++) {
        const edge_t *e = CE(t, r->edge + (uint32_t)i);
        if (e->move != move)
            continue;
        pv[0] = move;
        if (!e->child || CN(t, e->child)->n == 0)
            return 1;
        return 1 + pv_from(t, CN(t, e->child), pv + 1, max - 1);
    }
    return 0;
}

/* An atomic load: *stop is set by another thread (a protocol reader) or a
 * signal handler while the search runs. */
/* Whether the root has a move to pick: a time limit never ends a search
 * before this (the root's threat search may have used the time up). */
static bool root_has_move(const mcts_t *t)
{
    const node_t *r = CN(t, t->root);
    return r->nedges > 0 || r->state == NS_TERMINAL;
}

/* The time the root's threat search takes its share of. */
static double root_time_ms(const mcts_limits_t *lim)
{
    return lim->root_time_ms > 0.0 ? lim->root_time_ms : lim->time_ms;
}

static bool stop_requested(const mcts_limits_t *lim)
{
    return lim->stop && __atomic_load_n(lim->stop, __ATOMIC_RELAXED) != 0;
}

int mcts_search(mcts_t *t, mcts_eval_fn eval, void *user, const mcts_limits_t *lim,
                mcts_result_t *out)
{
    double t0 = util_now_ms();
    uint64_t p0 = t->playouts, evals = 0;
    int batch = lim->batch < 1 ? 1 : lim->batch > t->p.max_pending ? t->p.max_pending : lim->batch;
    uint32_t target = lim->visits;
    if (target == 0 && !(lim->time_ms > 0.0) && !lim->stop)
        target = 1;   /* no limit given: expand the root only */
    root_vct_check(t, root_time_ms(lim));
    const board_t *boards[4096];
    for (;;) {
        if (stop_requested(lim))
            break;
        if (lim->time_ms > 0.0 && util_now_ms() - t0 >= lim->time_ms && root_has_move(t))
            break;
        if (mcts_search_done(t, target))
            break;
        int n = mcts_gather(t, batch, target, boards);
        if (n > 0) {
            eval(user, boards, n, t->policy, t->value);
            mcts_deliver(t, t->policy, t->value);
            evals += (uint64_t)n;
        }
    }
    mcts_get_result(t, out);
    out->playouts = t->playouts - p0;
    out->evals = evals;
    out->seconds = (util_now_ms() - t0) / 1e3;
    out->threads_ms = out->seconds * 1e3;
    out->watch_ms = 0.0;
    out->playouts_per_s = out->seconds > 0.0 ? out->playouts / out->seconds : 0.0;
    return 0;
}

/* Several threads on one tree: each owns a slice of the pending slots and
 * of the policy/value rows, selects its leaves and backs them up under the
 * tree's lock, and runs its evaluator outside it, so the evaluations of
 * different threads overlap. */
typedef struct search_shared {
    mcts_t *t;
    const mcts_limits_t *lim;
    pthread_mutex_t lock;
    double t0;
    uint32_t target;
    int batch;
    uint64_t evals;
    bool defer;          /* new leaves are analysed outside the lock (t->ws, t->leaf) */
    volatile int done;   /* the search threads have stopped (the watcher's solve gives up) */
} search_shared_t;

typedef struct search_thread {
    search_shared_t *sh;
    int index;
    mcts_eval_fn eval;
    void *user;
} search_thread_t;

static bool search_should_stop(const search_shared_t *sh)
{
    const mcts_limits_t *lim = sh->lim;
    if (stop_requested(lim))
        return true;
    if (lim->time_ms > 0.0 && util_now_ms() - sh->t0 >= lim->time_ms && root_has_move(sh->t))
        return true;
    return mcts_search_done(sh->t, sh->target);
}

static void *search_thread_main(void *arg)
{
    search_thread_t *st = arg;
    search_shared_t *sh = st->sh;
    mcts_t *t = sh->t;
    size_t base = (size_t)st->index * (size_t)sh->batch;
    pending_t *pend = t->pend + base;
    float *policy = t->policy + base * BOARD_CELLS;
    float *value = t->value + base;
    leaf_t *leaf = sh->defer ? t->leaf + base : NULL;
    leaf_solvers_t *ws = &t->ws[st->index];
    const board_t *boards[4096];
    int row[4096];
    for (;;) {
        pthread_mutex_lock(&sh->lock);
        if (search_should_stop(sh)) {
            pthread_mutex_unlock(&sh->lock);
            break;
        }
        int n = gather_into(t, pend, sh->batch, sh->target, boards, sh->defer);
        pthread_mutex_unlock(&sh->lock);
        if (n == 0) {
            sched_yield();   /* every leaf in reach is in flight in another thread */
            continue;
        }
        /* the new leaves' threat checks, then the net for those still open */
        int ne = 0;
        for (int k = 0; k < n; k++) {
            if (pend[k].raw) {
                analyse_leaf(t, ws, &pend[k].board, false, &leaf[k]);
                if (leaf[k].kind != LEAF_OPEN) {
                    row[k] = -1;
                    continue;
                }
            }
            row[k] = ne;
            boards[ne++] = &pend[k].board;
        }
        if (ne > 0)
            st->eval(st->user, boards, ne, policy, value);
        for (int k = 0; k < n; k++)
            if (pend[k].raw && row[k] >= 0)
                set_edge_priors(&t->p, leaf[k].edges, leaf[k].n,
                                policy + (size_t)row[k] * BOARD_CELLS, &pend[k].board);
        pthread_mutex_lock(&sh->lock);
        deliver_leaves(t, pend, leaf, row, n, policy, value);
        solvers_count(t, ws);
        sh->evals += (uint64_t)ne;
        pthread_mutex_unlock(&sh->lock);
    }
    return NULL;
}

/* The search threads' own solvers and leaves (t->ws, t->leaf), made for
 * the first threaded search and kept; false when there is no memory for
 * them (the search then prepares its leaves under the lock). */
static bool threads_ready(mcts_t *t, int nthreads)
{
    if (!t->leaf) {
        t->leaf = malloc((size_t)t->p.max_pending * sizeof *t->leaf);
        if (!t->leaf)
            return false;
    }
    char err[128];
    for (int i = 0; i < nthreads; i++) {
        leaf_solvers_t *s = &t->ws[i];
        if (t->p.vcf_nodes && !s->vcf && !(s->vcf = vcf_create(t->p.vcf_tt_bytes, err, sizeof err)))
            return false;
        if (t->p.vct_nodes && !s->vct && !(s->vct = vct_create(t->p.vct_tt_bytes, err, sizeof err)))
            return false;
    }
    return true;
}

/* The watcher (vct_watch_nodes): a thread beside the search threads of a
 * timed search that checks the most visited root moves against the
 * opponent's VCT while they search, and makes each refuted one a proven
 * loss, so that the search turns to the others. It holds the tree's lock
 * only to pick a move and to mark it; its solves run outside it, on the
 * caller's solver. A root move is checked once per root (t->verified,
 * shared with mcts_refute_best), unless the search's end cut its check
 * short: the next slice of the move (the check at its end) may take it
 * up again. */
#define WATCH_TOP 3        /* it checks the WATCH_TOP most visited root moves ... */
#define WATCH_SHARE 4      /* ... with at least 1/WATCH_SHARE of the first one's visits */
#define WATCH_IDLE_US 2000 /* nothing to check: it looks again after this */
#define WATCH_QUIET_K 6    /* the opponent's replies tried for a quiet win, by prior */

typedef struct watch_thread {
    search_shared_t *sh;
    vct_t *vct;
    uint32_t nodes;
    uint32_t quiet_nodes;   /* vct_watch_quiet_nodes (0: no quiet checks) */
    bool root;   /* first the root's threat search (root_vct_check's work) */
    int defend_round;        /* the root's defence: the next proving round (-1: none due) */
    vct_limits_t defend_lim; /* its budget, grown each round */
} watch_thread_t;

#define WATCH_RETRY_US 500 /* the root, or a root child, is being evaluated: try again after this */

/* Under the lock: make the root a proven win through `win`. 1: try again
 * (the root or that child is in flight in a search thread). */
static int watch_prove(mcts_t *t, int win)
{
    node_t *r = N(t, t->root);
    if (r->state == NS_PENDING)
        return 1;
    if (r->state == NS_NEW) {
        if (board_check_move(&t->root_board, win) == MOVE_OK)
            make_proven_win(t, t->root, win);
        return 0;
    }
    if (r->state != NS_EXPANDED)
        return 0;
    const edge_t *ed = CE(t, r->edge);
    for (int i = 0; i < r->nvisited; i++)
        if (ed[i].move == win && CN(t, ed[i].child)->state == NS_PENDING)
            return 1;
    root_prove_win(t, win);
    return 0;
}

/* Run fn(t, arg) under the lock until it is done (0) or the search stops. */
static void watch_apply(search_shared_t *sh, int (*fn)(mcts_t *, void *), void *arg)
{
    for (;;) {
        pthread_mutex_lock(&sh->lock);
        int again = !search_should_stop(sh) && fn(sh->t, arg);
        pthread_mutex_unlock(&sh->lock);
        if (!again)
            return;
        usleep(WATCH_RETRY_US);
    }
}

static int apply_prove(mcts_t *t, void *arg) { return watch_prove(t, *(int *)arg); }
static int apply_restrict(mcts_t *t, void *arg)
{
    int r = restrict_root(t, arg);
    t->vct_defences += r == 0;
    return r == 1;
}
/* apply_restrict again on a root it restricted: not counted twice */
static int apply_narrow(mcts_t *t, void *arg) { return restrict_root(t, arg) == 1; }

/* The root's defence against the opponent's VCT, beside the search: the
 * root is first restricted to the moves that might stop it (the others
 * leave the threat standing: they are lost), so the search spends its
 * visits among them while each is solved (vct_defend_proven), then to the
 * refutations found: the proven ones, or, with none proven, those the
 * budget left undecided, which are solved again with WATCH_DEFEND_GROWTH
 * times the nodes, up to WATCH_DEFEND_ROUNDS rounds, while the search
 * lasts (the solver's table keeps what the earlier rounds proved). In a
 * sharp position those solves can take more than the move; the last
 * restriction is then what holds. So the rounds come one at a time from
 * the watcher's loop, only when none of the most visited root moves waits
 * for its own check (watch_pick): a round solves every candidate left, a
 * hundred or more in a sharp position, and the move about to be played
 * must not wait behind them (a 9-threat VCT after the most visited move
 * went unseen for a whole 1 s move while round 0 ran). */
#define WATCH_DEFEND_GROWTH 4
#define WATCH_DEFEND_ROUNDS 3
static void watch_defend_begin(watch_thread_t *w)
{
    search_shared_t *sh = w->sh;
    w->defend_lim = (vct_limits_t){.nodes = sh->t->p.vct_defend_nodes, .stop = &sh->done};
    int moves[BOARD_CELLS];
    int n = vct_defence_begin(w->vct, &sh->t->root_board, &w->defend_lim, moves, NULL);
    if (n <= 0)
        return;   /* no threat (or none found), or no move to try */
    uint8_t allow[BOARD_CELLS] = {0};
    for (int i = 0; i < n; i++)
        allow[moves[i]] = 1;
    watch_apply(sh, apply_restrict, allow);
    w->defend_round = 0;
}

/* One proving round of the defence that watch_defend_begin started. */
static void watch_defend_round(watch_thread_t *w)
{
    search_shared_t *sh = w->sh;
    int moves[BOARD_CELLS];
    bool proven = false;
    int n = vct_defend_proven(w->vct, &sh->t->root_board, &w->defend_lim, moves, &proven, NULL);
    w->defend_round++;
    if (proven || w->defend_round >= WATCH_DEFEND_ROUNDS)
        w->defend_round = -1;
    if (n <= 0 || __atomic_load_n(&sh->done, __ATOMIC_RELAXED)) {
        w->defend_round = -1;   /* lost whatever we play, or cut short: the last restriction stays */
        return;
    }
    uint8_t allow[BOARD_CELLS] = {0};
    for (int i = 0; i < n; i++)
        allow[moves[i]] = 1;
    watch_apply(sh, apply_narrow, allow);
    w->defend_lim.nodes *= WATCH_DEFEND_GROWTH;
}

/* The root's threat search beside the search threads, on the watcher's
 * solver, with root_vct_check's node budgets: the side to move's VCT (a
 * win proves the root, and the search stops), else the opponent's, whose
 * refutations the root is then searched among. The time shares that
 * bound them in series do not apply: the search does not wait for them,
 * and on a third of the cores they would cut the solves short of their
 * nodes. The search's end stops them. */
static void watch_root(watch_thread_t *w)
{
    search_shared_t *sh = w->sh;
    mcts_t *t = sh->t;
    const board_t *b = &t->root_board;   /* fixed while the search runs */
    if (t->p.vct_root_nodes) {
        vct_limits_t vl = {.nodes = t->p.vct_root_nodes, .stop = &sh->done};
        vct_result_t res;
        vct_status_t st = vct_solve(w->vct, b, &vl, &res);
        pthread_mutex_lock(&sh->lock);
        t->vct_checks++;
        t->vct_wins += st == VCT_WIN;
        pthread_mutex_unlock(&sh->lock);
        if (st == VCT_WIN) {
            int win = res.line[0];
            watch_apply(sh, apply_prove, &win);
            return;
        }
    }
    if (t->p.vct_defend_nodes)
        watch_defend_begin(w);
}

/* Under the lock: the edge indices of the root's WATCH_TOP most visited
 * children still open (evaluated, not proven), most visits first, each
 * with at least 1/WATCH_SHARE of the first one's visits; returns their
 * count. */
static int watch_top(const mcts_t *t, int *top)
{
    const node_t *r = CN(t, t->root);
    if (r->state != NS_EXPANDED)
        return 0;
    const edge_t *ed = CE(t, r->edge);
    int ntop = 0;
    for (int i = 0; i < r->nvisited; i++) {
        const node_t *c = CN(t, ed[i].child);
        if (c->state != NS_EXPANDED)
            continue;   /* proven already, or not evaluated yet */
        uint32_t n = c->n;
        int k = ntop;
        if (k == WATCH_TOP) {
            if (n <= CN(t, ed[top[k - 1]].child)->n)
                continue;
            k--;
        } else {
            ntop++;
        }
        for (; k > 0 && CN(t, ed[top[k - 1]].child)->n < n; k--)
            top[k] = top[k - 1];
        top[k] = i;
    }
    int j = 1;
    while (j < ntop &&
           (uint64_t)CN(t, ed[top[j]].child)->n * WATCH_SHARE >= CN(t, ed[top[0]].child)->n)
        j++;
    return ntop ? j : 0;
}

/* The WATCH_QUIET_K replies of highest prior at node c into cand (most
 * likely first); returns their count. */
static int top_prior_replies(const mcts_t *t, const node_t *c, int *cand)
{
    const edge_t *ce = CE(t, c->edge);
    uint16_t prior[WATCH_QUIET_K];
    int n = 0;
    for (int i = 0; i < c->nedges; i++) {
        if (n == WATCH_QUIET_K && ce[i].prior <= prior[n - 1])
            continue;
        int k = n < WATCH_QUIET_K ? n++ : n - 1;
        for (; k > 0 && prior[k - 1] < ce[i].prior; k--) {
            prior[k] = prior[k - 1];
            cand[k] = cand[k - 1];
        }
        prior[k] = ce[i].prior;
        cand[k] = ce[i].move;
    }
    return n;
}

/* Under the lock: the next root move to check, the position after it in
 * *after, MOVE_NONE when none is due. First each top move against the
 * opponent's VCT (*ncand 0); then, with quiet set, each of them so
 * checked and not refuted for the opponent's quiet win (vct_watch_quiet_
 * nodes), with the opponent's WATCH_QUIET_K replies of highest prior
 * there in cand, *ncand of them (the net's guess at its best moves, which
 * a quiet win's first move usually is). */
static int watch_pick(mcts_t *t, bool quiet, board_t *after, int *cand, int *ncand)
{
    int top[WATCH_TOP], ntop = watch_top(t, top);
    const edge_t *ed = CE(t, CN(t, t->root)->edge);
    for (int pass = 0; pass < 1 + quiet; pass++) {
        for (int j = 0; j < ntop; j++) {
            int move = ed[top[j]].move;
            const node_t *c = CN(t, ed[top[j]].child);
            bool due = pass == 0 ? t->nverified < VERIFY_MAX && !root_checked(t, move)
                                 : t->nquiet < VERIFY_MAX && root_checked(t, move) &&
                                       !listed(t->quiet, t->nquiet, move) && c->nedges > 0;
            if (!due)
                continue;
            if (pass == 0) {
                t->verified[t->nverified++] = (int16_t)move;
                *ncand = 0;
            } else {
                t->quiet[t->nquiet++] = (int16_t)move;
                *ncand = top_prior_replies(t, c, cand);
            }
            *after = t->root_board;
            if (board_play(after, move) == MOVE_OK && !board_over(after))
                return move;
        }
    }
    return MOVE_NONE;
}

/* Under the lock: the opponent wins after root move `move`. */
static void watch_refute(mcts_t *t, int move)
{
    node_t *r = N(t, t->root);
    if (r->state != NS_EXPANDED)
        return;
    edge_t *ed = E(t, r->edge);
    for (int i = 0; i < r->nvisited; i++) {
        if (ed[i].move != move)
            continue;
        node_t *c = N(t, ed[i].child);
        if (c->state == NS_EXPANDED) {
            c->state = NS_TERMINAL;
            c->exact = 1;
        }
        return;
    }
}

static void *watch_thread_main(void *arg)
{
    watch_thread_t *w = arg;
    search_shared_t *sh = w->sh;
    mcts_t *t = sh->t;
    if (w->root)
        watch_root(w);
    for (;;) {
        board_t after;
        int cand[WATCH_QUIET_K], ncand = 0;
        pthread_mutex_lock(&sh->lock);
        bool stop = search_should_stop(sh);
        int move = stop ? MOVE_NONE : watch_pick(t, w->quiet_nodes > 0, &after, cand, &ncand);
        bool quiet = ncand > 0;
        pthread_mutex_unlock(&sh->lock);
        if (stop)
            break;
        double left = sh->lim->time_ms - (util_now_ms() - sh->t0);
        if (left < 1.0)
            break;
        if (move == MOVE_NONE) {
            if (w->defend_round >= 0)
                watch_defend_round(w);
            else
                usleep(WATCH_IDLE_US);
            continue;
        }
        vct_limits_t vl = {.nodes = quiet ? w->quiet_nodes : w->nodes, .time_ms = left,
                           .stop = &sh->done};
        vct_status_t st = !quiet ? vct_solve_reply(w->vct, &after, &vl, NULL)
                          : vct_quiet_win_among(w->vct, &after, &vl, cand, ncand, NULL, NULL) !=
                                    MOVE_NONE
                              ? VCT_WIN
                              : VCT_NONE;
        bool cut = st == VCT_UNKNOWN && (__atomic_load_n(&sh->done, __ATOMIC_RELAXED) ||
                                         util_now_ms() - sh->t0 >= sh->lim->time_ms - 1.0);
        pthread_mutex_lock(&sh->lock);
        t->vct_checks++;
        if (st == VCT_WIN) {
            t->vct_wins++;
            watch_refute(t, move);
        }
        if (cut && !quiet)
            unverify(t, move);   /* the search's end cut it short: the next slice checks it again */
        pthread_mutex_unlock(&sh->lock);
    }
    return NULL;
}

int mcts_search_threads(mcts_t *t, int nthreads, mcts_eval_fn const *evals, void *const *users,
                        const mcts_limits_t *lim, mcts_result_t *out)
{
    assert(t->npending == 0);
    bool watch = lim->watch && t->p.vct_watch_nodes && lim->time_ms > 0.0;
    if (nthreads <= 1 && !watch)
        return mcts_search(t, evals[0], users[0], lim, out);
    if (nthreads > MCTS_MAX_THREADS)
        nthreads = MCTS_MAX_THREADS;
    search_shared_t sh = {.t = t, .lim = lim, .t0 = util_now_ms(), .target = lim->visits};
    /* the watcher does the root's VCT and defence beside the search threads */
    if (watch)
        root_vcf_check(t);   /* a reused root's; a new one's comes with its expansion */
    bool root_beside = watch && root_threats_due(t, lim->watch);
    if (!watch)
        root_vct_check(t, root_time_ms(lim));
    int batch = lim->batch < 1 ? 1 : lim->batch;
    if (batch * nthreads > t->p.max_pending)
        batch = t->p.max_pending / nthreads;
    if (batch < 1) {
        batch = 1;
        nthreads = t->p.max_pending;
    }
    sh.batch = batch;
    /* a cache probe (t->probe) is the caller's, not the threads': with one,
     * leaves are prepared under the lock */
    sh.defer = nthreads > 1 && !t->probe && threads_ready(t, nthreads);
    if (sh.target == 0 && !(lim->time_ms > 0.0) && !lim->stop)
        sh.target = 1;
    uint64_t p0 = t->playouts;
    pthread_mutex_init(&sh.lock, NULL);
    search_thread_t st[MCTS_MAX_THREADS];
    pthread_t tid[MCTS_MAX_THREADS];
    int started = 0;
    for (int i = 0; i < nthreads; i++) {
        st[i] = (search_thread_t){.sh = &sh, .index = i, .eval = evals[i], .user = users[i]};
        if (i > 0 && pthread_create(&tid[i], NULL, search_thread_main, &st[i]) != 0)
            break;   /* fewer threads: the search still completes */
        started = i + 1;
    }
    watch_thread_t wt = {.sh = &sh, .vct = lim->watch, .nodes = t->p.vct_watch_nodes,
                          .quiet_nodes = t->p.vct_watch_quiet_nodes,
                         .root = root_beside, .defend_round = -1};
    pthread_t wtid;
    watch = watch && pthread_create(&wtid, NULL, watch_thread_main, &wt) == 0;
    if (!watch && wt.root) {   /* no thread for it: this one does the root's solves, then searches */
        watch_root(&wt);
        while (wt.defend_round >= 0)
            watch_defend_round(&wt);
    }
    search_thread_main(&st[0]);
    for (int i = 1; i < started; i++)
        pthread_join(tid[i], NULL);
    double t_threads = util_now_ms();
    if (watch) {
        __atomic_store_n(&sh.done, 1, __ATOMIC_RELAXED);
        pthread_join(wtid, NULL);
    }
    double t_watch = util_now_ms();
    pthread_mutex_destroy(&sh.lock);
    mcts_get_result(t, out);
    out->threads_ms = t_threads - sh.t0;
    out->watch_ms = t_watch - t_threads;
    out->playouts = t->playouts - p0;
    out->evals = sh.evals;
    out->seconds = (util_now_ms() - sh.t0) / 1e3;
    out->playouts_per_s = out->seconds > 0.0 ? out->playouts / out->seconds : 0.0;
    return 0;
}

uint64_t mcts_vcf_checks(const mcts_t *t) { return t->vcf_checks; }
uint64_t mcts_vct_checks(const mcts_t *t) { return t->vct_checks; }
uint64_t mcts_vct_wins(const mcts_t *t) { return t->vct_wins; }
uint64_t mcts_vct_defences(const mcts_t *t) { return t->vct_defences; }
uint64_t mcts_vcf_wins(const mcts_t *t) { return t->vcf_wins; }
size_t mcts_edges_used(const mcts_t *t) { return t->ar[t->cur].eused; }
