/* Search: PUCT selection and backup checked by hand, visit bookkeeping,
 * tactics with a uniform evaluator, exact terminal values, determinism,
 * tree reuse and an evaluator's probe (its cache). */
#include <check.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <unistd.h>

#include "play/player.h"
#include "mcts/mcts.h"
#include "nn/gemm_bf16.h"
#include "nn/nn.h"
#include "engine/vct.h"
#include "tests/testkit.h"
#include "tests/testkit_nn.h"

/* Default parameters with a tree of mem bytes. */
static mcts_params_t params_mem(size_t mem)
{
    mcts_params_t p;
    mcts_params_default(&p);
    p.mem_bytes = mem;
    return p;
}

/* b: an empty size x size freestyle board, set as t's root. */
static void empty_root(mcts_t *t, board_t *b, int size)
{
    board_init(b, size, RULE_FREESTYLE);
    mcts_set_root(t, b);
}

/* A uniform-evaluator search of t from an empty 15x15 board (b) within
 * lim; the tree must not fill up. */
static void search_empty(mcts_t *t, board_t *b, mcts_limits_t lim, mcts_result_t *r)
{
    empty_root(t, b, 15);
    mcts_search(t, mcts_eval_uniform, NULL, &lim, r);
    ck_assert(!r->mem_full);
}

/* A tree with parameters p; the test fails with mcts_create's reason. */
static mcts_t *tree_of(const mcts_params_t *p)
{
    char err[128];
    mcts_t *t = mcts_create(p, err, sizeof err);
    ck_assert_msg(t != NULL, "%s", err);
    return t;
}

/* The sum of the root children's visits (a root of n visits has n - 1). */
static uint64_t children_visits(const mcts_t *t)
{
    mcts_child_info_t c[BOARD_CELLS];
    int k = mcts_root_children(t, c, BOARD_CELLS);
    uint64_t sum = 0;
    for (int i = 0; i < k; i++)
        sum += c[i].visits;
    return sum;
}

/* probe: NULL, or an mcts_probe_fn called with user NULL */
static mcts_t *make_tree(float fpu_root, size_t mem, mcts_probe_fn probe, uint64_t seed)
{
    mcts_params_t p = params_mem(mem);
    p.fpu_root = fpu_root;
    p.seed = seed;
    mcts_t *t = tree_of(&p);
    mcts_set_probe(t, probe, NULL);
    return t;
}

/* Place stones: black at bx/by, white at wx/wy (equal counts or one more
 * black), played alternately so the side to move follows. */
static void setup(board_t *b, int size, rule_t rule, const int (*black)[2], int nb,
                  const int (*white)[2], int nw)
{
    board_init(b, size, rule);
    for (int i = 0; i < nb || i < nw; i++) {
        if (i < nb)
            ck_assert_int_eq(board_play(b, board_xy(b, black[i][0], black[i][1])), MOVE_OK);
        if (i < nw)
            ck_assert_int_eq(board_play(b, board_xy(b, white[i][0], white[i][1])), MOVE_OK);
    }
}

/* A fresh tree of MEM bytes searched from B with the uniform evaluator for
 * VISITS visits into *R; the caller frees the tree. */
static mcts_t *search_uniform(const board_t *b, size_t mem, int visits, mcts_result_t *r)
{
    mcts_t *t = make_tree(0.0f, mem, NULL, 1);
    mcts_set_root(t, b);
    mcts_limits_t lim = {.visits = visits};
    mcts_search(t, mcts_eval_uniform, NULL, &lim, r);
    return t;
}

/* One scripted evaluation: the single gathered leaf gets `value` (side to
 * move there) and priors p[i] at moves m[i], 0 elsewhere. Returns the leaf's
 * last move. */
static int deliver_one(mcts_t *t, const int *m, const float *p, int k, float value)
{
    const board_t *leaf[1];
    ck_assert_int_eq(mcts_gather(t, 1, 0, leaf), 1);
    int last = leaf[0]->last;
    static float row[BOARD_CELLS];
    memset(row, 0, sizeof row);
    for (int i = 0; i < k; i++)
        row[m[i]] = p[i];
    mcts_deliver(t, row, &value);
    return last;
}

static float child_q(const mcts_t *t, int move, uint32_t *visits)
{
    mcts_child_info_t c[BOARD_CELLS];
    int n = mcts_root_children(t, c, BOARD_CELLS);
    for (int i = 0; i < n; i++)
        if (c[i].move == move) {
            *visits = c[i].visits;
            return c[i].q;
        }
    ck_abort_msg("move %d is not a root child", move);
    return 0.0f;
}

/* Root (black to move) gets priors A 0.5, B 0.3, C 0.2 and value 0.1; child
 * A gets value +0.6 for white. Then root: n 2, w(black) 0.1 - 0.6 = -0.5,
 * Q = -0.25; Q(A) = -0.6 for black. Next selection, c_puct 1.5, sqrt(N) =
 * sqrt(2): A scores -0.6 + 1.5*0.5*1.414/2 = -0.070; B (unvisited) scores
 * fpu + 1.5*0.3*1.414 = fpu + 0.636 with fpu = -0.25 - r*sqrt(0.5):
 * r = 0 -> 0.386 (B wins); r = 1.5 -> -0.675 (A wins). */
START_TEST(test_puct_by_hand)
{
    board_t b;
    board_init(&b, 15, RULE_FREESTYLE);
    int A = board_xy(&b, 7, 7), B = board_xy(&b, 8, 8), C = board_xy(&b, 6, 6);
    int m[3] = {A, B, C};
    float p[3] = {0.5f, 0.3f, 0.2f};
    for (int variant = 0; variant < 2; variant++) {
        mcts_t *t = make_tree(variant == 0 ? 0.0f : 1.5f, 8 << 20, NULL, 1);
        mcts_set_root(t, &b);
        ck_assert_int_eq(deliver_one(t, m, p, 3, 0.1f), MOVE_NONE);   /* the root itself */
        ck_assert_uint_eq(mcts_root_n(t), 1);
        ck_assert_float_eq_tol(mcts_root_value(t), 0.1f, 1e-6f);
        ck_assert_int_eq(deliver_one(t, m, p, 0, 0.6f), A);            /* highest prior first */
        ck_assert_uint_eq(mcts_root_n(t), 2);
        ck_assert_float_eq_tol(mcts_root_value(t), -0.25f, 1e-6f);
        uint32_t n;
        ck_assert_float_eq_tol(child_q(t, A, &n), -0.6f, 1e-6f);
        ck_assert_uint_eq(n, 1);
        const board_t *leaf[1];
        ck_assert_int_eq(mcts_gather(t, 1, 0, leaf), 1);
        if (variant == 0) {
            ck_assert_int_eq(leaf[0]->nmoves, 1);
            ck_assert_int_eq(leaf[0]->last, B);
        } else {
            ck_assert_int_eq(leaf[0]->nmoves, 2);   /* into A, then A's first child */
            ck_assert_int_eq(leaf[0]->moves[0], A);
        }
        float v = -0.2f, row[BOARD_CELLS] = {0};
        mcts_deliver(t, row, &v);
        /* root w(black) = -0.5 + v(leaf side) flipped per ply */
        float expect = variant == 0 ? (0.1f - 0.6f + 0.2f) / 3.0f : (0.1f - 0.6f - 0.2f) / 3.0f;
        ck_assert_float_eq_tol(mcts_root_value(t), expect, 1e-6f);
        mcts_free(t);
    }
}
END_TEST

START_TEST(test_visits_add_up)
{
    mcts_t *t = make_tree(0.0f, 32 << 20, NULL, 3);
    board_t b;
    board_init(&b, 9, RULE_STANDARD);
    board_play(&b, board_xy(&b, 4, 4));
    mcts_set_root(t, &b);
    for (int batch = 1; batch <= 8; batch *= 8) {
        mcts_limits_t lim = {.visits = 600, .batch = batch};
        mcts_result_t r;
        mcts_search(t, mcts_eval_uniform, NULL, &lim, &r);
        ck_assert_uint_eq(r.root_visits, 600);
        mcts_child_info_t c[BOARD_CELLS];
        int k = mcts_root_children(t, c, BOARD_CELLS);
        ck_assert_int_eq(k, 80);
        uint64_t sum = 0;
        for (int i = 0; i < k; i++)
            sum += c[i].visits;
        ck_assert_uint_eq(sum + 1, r.root_visits);   /* n = 1 + sum of children */
        record_visit_t rv[BOARD_CELLS];
        int nv = mcts_root_visits(t, rv, BOARD_CELLS);
        uint64_t sum2 = 0;
        for (int i = 0; i < nv; i++)
            sum2 += rv[i].count;
        ck_assert_uint_eq(sum2, sum);
        mcts_set_root(t, &b);
    }
    mcts_free(t);
}
END_TEST

static const int four_b[4][2] = {{3, 7}, {4, 7}, {5, 7}, {6, 7}};

/* A four on row 7 (3..6,7): the search plays one of its ends (7,7 or 2,7)
 * with an exact value, not an average: proven 1 (the four is ours) or -1. */
static mcts_t *search_four_ends(board_t *b, int visits, int proven, mcts_result_t *r)
{
    mcts_t *t = search_uniform(b, 8 << 20, visits, r);
    ck_assert(r->best_move == board_xy(b, 7, 7) || r->best_move == board_xy(b, 2, 7));
    ck_assert_int_eq(r->proven, proven);
    ck_assert_float_eq(r->value, (float)proven);
    return t;
}

START_TEST(test_takes_win)
{
    /* black four 3..6,7 (7,7 and 2,7 win); white has an open four too */
    const int w[4][2] = {{3, 2}, {4, 2}, {5, 2}, {6, 2}};
    board_t b;
    setup(&b, 15, RULE_FREESTYLE, four_b, 4, w, 4);
    mcts_result_t r;
    mcts_t *t = search_four_ends(&b, 200, 1, &r);
    ck_assert(board_is_winning_move(&b, r.best_move));
    ck_assert_int_eq(mcts_pick_move(t, 1.0), r.best_move);
    mcts_free(t);
}
END_TEST

/* Several threads on one tree: each thread has its own evaluator (here a
 * counting uniform one), the visit identity holds, every evaluation is
 * accounted for, and the tactics are the same. */
typedef struct counting_eval { uint64_t positions; } counting_eval_t;

static void eval_counting(void *user, const board_t *const *boards, int n, float *policy,
                          float *value)
{
    ((counting_eval_t *)user)->positions += (uint64_t)n;
    mcts_eval_uniform(NULL, boards, n, policy, value);
}

START_TEST(test_threads_one_tree)
{
    mcts_params_t p = params_mem(32 << 20);
    p.max_pending = 32;
    mcts_t *t = tree_of(&p);
    counting_eval_t ce[4] = {{0}};
    mcts_eval_fn evals[4] = {eval_counting, eval_counting, eval_counting, eval_counting};
    void *users[4] = {&ce[0], &ce[1], &ce[2], &ce[3]};

    board_t b;
    board_init(&b, 9, RULE_STANDARD);
    board_play(&b, board_xy(&b, 4, 4));
    mcts_set_root(t, &b);
    mcts_limits_t lim = {.visits = 3000, .batch = 8};
    mcts_result_t r;
    mcts_search_threads(t, 4, evals, users, &lim, &r);
    ck_assert_uint_eq(r.root_visits, 3000);
    ck_assert_uint_eq(children_visits(t) + 1, r.root_visits);
    ck_assert_uint_eq(ce[0].positions + ce[1].positions + ce[2].positions + ce[3].positions,
                      r.evals);
    ck_assert_uint_gt(r.evals, 0);

    /* the immediate win is found and proven with 4 threads too */
    const int w[4][2] = {{3, 2}, {4, 2}, {5, 2}, {6, 2}};
    setup(&b, 15, RULE_FREESTYLE, four_b, 4, w, 4);
    mcts_set_root(t, &b);
    lim.visits = 400;
    mcts_search_threads(t, 4, evals, users, &lim, &r);
    ck_assert(board_is_winning_move(&b, r.best_move));
    ck_assert_int_eq(r.proven, 1);
    mcts_free(t);
}
END_TEST

START_TEST(test_blocks_closed_four)
{
    for (int rule = 0; rule < RULE_COUNT; rule++) {
        /* white four 3..6,7 closed at 2,7 by black; black to move must take 7,7 */
        const int bl[5][2] = {{2, 7}, {10, 12}, {12, 1}, {1, 12}, {9, 3}};
        board_t b;
        setup(&b, 15, (rule_t)rule, bl, 4, four_b, 4);
        ck_assert_int_eq(b.to_move, STONE_BLACK);
        mcts_result_t r;
        mcts_t *t = search_uniform(&b, 8 << 20, 300, &r);
        ck_assert_int_eq(r.best_move, board_xy(&b, 7, 7));
        ck_assert_int_eq(r.proven, 0);
        mcts_free(t);
    }
}
END_TEST

START_TEST(test_blocks_open_four)
{
    /* white open four 3..6,7: black is lost, but still blocks one end */
    const int bl[4][2] = {{10, 12}, {12, 1}, {1, 12}, {9, 3}};
    board_t b;
    setup(&b, 15, RULE_FREESTYLE, bl, 4, four_b, 4);
    mcts_result_t r;
    mcts_t *t = search_four_ends(&b, 100, -1, &r);
    mcts_free(t);
}
END_TEST

START_TEST(test_finds_open_four)
{
    /* black open three 5..7,7, nothing for white: black wins by making an
     * open four at 4,7 or 8,7 (the reply position is a proven loss) */
    const int bl[3][2] = {{5, 7}, {6, 7}, {7, 7}};
    const int wh[3][2] = {{0, 0}, {14, 0}, {0, 14}};
    board_t b;
    setup(&b, 15, RULE_FREESTYLE, bl, 3, wh, 3);
    mcts_result_t r;
    mcts_t *t = search_uniform(&b, 32 << 20, 3000, &r);
    ck_assert_msg(r.best_move == board_xy(&b, 4, 7) || r.best_move == board_xy(&b, 8, 7),
                  "best move %d", r.best_move);
    ck_assert_int_eq(r.proven, 1);
    ck_assert_int_ge(r.npv, 1);
    ck_assert_int_eq(r.pv[0], r.best_move);
    mcts_free(t);
}
END_TEST

/* Black: (5,5) (6,5) (7,5) closed by white (4,5), and (8,6) (8,7): a VCF of
 * two fours starting at (8,5) (see check_vcf). */
static const int vcf_bl[5][2] = {{5, 5}, {6, 5}, {7, 5}, {8, 6}, {8, 7}};
static const int vcf_wh[5][2] = {{4, 5}, {0, 14}, {14, 14}, {14, 0}, {2, 12}};

static mcts_t *make_vcf_tree(uint32_t leaf, uint32_t root)
{
    mcts_params_t p = params_mem(32 << 20);
    p.vcf_nodes = leaf;
    p.vcf_root_nodes = root;
    p.vct_root_nodes = p.vct_defend_nodes = 0;   /* the VCF checks alone */
    mcts_t *t = tree_of(&p);
    return t;
}

/* A new tree with those VCF budgets searched from b with the uniform evaluator. */
static mcts_t *vcf_search(const board_t *b, uint32_t leaf, uint32_t root, uint32_t visits,
                          mcts_result_t *r)
{
    mcts_t *t = make_vcf_tree(leaf, root);
    mcts_set_root(t, b);
    mcts_limits_t lim = {.visits = visits};
    mcts_search(t, mcts_eval_uniform, NULL, &lim, r);
    return t;
}

/* With the VCF check the root is a proven win at once, its value exact,
 * its move the line's first; without it, 50 uniform playouts prove
 * nothing. */
START_TEST(test_vcf_root_proven)
{
    board_t b;
    setup(&b, 15, RULE_FREESTYLE, vcf_bl, 5, vcf_wh, 5);
    mcts_result_t r;
    mcts_t *t = vcf_search(&b, 200, 20000, 50, &r);
    ck_assert_int_eq(r.proven, 1);
    ck_assert_int_eq(r.best_move, board_xy(&b, 8, 5));
    ck_assert_float_eq(mcts_root_value(t), 1.0f);
    ck_assert_int_eq(mcts_pick_move(t, 1.0), board_xy(&b, 8, 5));
    ck_assert_uint_ge(mcts_vcf_wins(t), 1);
    /* the policy target: the winning move alone, though no playout went there */
    record_visit_t rv[BOARD_CELLS];
    ck_assert_int_eq(mcts_root_policy_visits(t, rv, BOARD_CELLS), 1);
    ck_assert_int_eq(rv[0].move, board_xy(&b, 8, 5));
    ck_assert_uint_ge(rv[0].count, 1);
    mcts_free(t);
    t = vcf_search(&b, 0, 0, 50, &r);
    ck_assert_int_eq(r.proven, 0);
    ck_assert_uint_eq(mcts_vcf_checks(t), 0);
    mcts_free(t);
}
END_TEST

/* Tree reuse: leaf checks off, root check on. The position before white's
 * move is searched (white has nothing); after white's far-away move the
 * reused root, expanded as an inner node, gets the root's check: proven. */
START_TEST(test_vcf_reused_root)
{
    board_t b;
    setup(&b, 15, RULE_FREESTYLE, vcf_bl, 5, vcf_wh, 4);   /* white to move */
    mcts_result_t r;
    mcts_t *t = vcf_search(&b, 0, 20000, 3000, &r);
    mcts_limits_t lim = {.visits = 3000};
    ck_assert_int_ne(r.proven, 1);
    int far = board_xy(&b, 2, 12);
    ck_assert(mcts_advance(t, far));
    ck_assert(mcts_root_expanded(t));   /* kept from the first search */
    mcts_search(t, mcts_eval_uniform, NULL, &lim, &r);
    ck_assert_int_eq(r.proven, 1);
    ck_assert_int_eq(r.best_move, board_xy(&b, 8, 5));
    /* the reused root's visits lie on other moves too; the policy target
     * is the winning move alone, with the root's visits */
    record_visit_t rv[BOARD_CELLS];
    ck_assert_int_gt(mcts_root_visits(t, rv, BOARD_CELLS), 1);
    ck_assert_int_eq(mcts_root_policy_visits(t, rv, BOARD_CELLS), 1);
    ck_assert_int_eq(rv[0].move, board_xy(&b, 8, 5));
    ck_assert_uint_eq(rv[0].count, mcts_root_n(t) > 65535 ? 65535 : mcts_root_n(t));
    /* playing the winning move keeps the tree usable: black's reply is searched */
    ck_assert(mcts_advance(t, r.best_move));
    mcts_search(t, mcts_eval_uniform, NULL, &lim, &r);
    ck_assert_int_eq(r.best_move, board_xy(&b, 9, 5));   /* white's only block */
    mcts_free(t);
}
END_TEST

/* White must block black's four at (14,12); after the block black still
 * has the VCF: white's only move leads into a proven win, so white's root
 * is a proven loss, value exactly -1. */
START_TEST(test_vcf_forced_block_proven_loss)
{
    static const int bl[9][2] = {{5, 5}, {6, 5}, {7, 5}, {8, 6}, {8, 7},
                                 {10, 12}, {11, 12}, {12, 12}, {13, 12}};
    static const int wh[9][2] = {{4, 5}, {0, 14}, {14, 14}, {14, 0}, {2, 12},
                                 {9, 12}, {0, 7}, {14, 7}, {2, 2}};
    board_t b;
    setup(&b, 15, RULE_FREESTYLE, bl, 9, wh, 8);   /* white to move */
    mcts_result_t r;
    mcts_t *t = vcf_search(&b, 200, 20000, 100, &r);
    ck_assert_int_eq(r.proven, -1);
    ck_assert_float_eq(mcts_root_value(t), -1.0f);
    ck_assert_int_eq(r.best_move, board_xy(&b, 14, 12));
    mcts_free(t);
}
END_TEST

/* Two threads analyse their new leaves outside the tree's lock (the VCF
 * and three checks of a leaf two plies down and deeper): with the root's
 * own check off and its moves filtered to the VCF's first and a quiet one,
 * black's VCF is found only by those deferred leaf checks (after 8,5 and
 * white's forced block), and the root is proven all the same; the visit identity holds, every
 * evaluation is counted, and an arena too small for the search ends it
 * cleanly with a valid tree. */
START_TEST(test_threads_deferred_leaves)
{
    board_t b;
    setup(&b, 15, RULE_FREESTYLE, vcf_bl, 5, vcf_wh, 5);
    for (int threads = 1; threads <= 2; threads++) {
        mcts_t *t = make_vcf_tree(200, 0);
        mcts_set_root(t, &b);
        const int allow[2] = {board_xy(&b, 8, 5), board_xy(&b, 11, 3)};
        mcts_set_root_filter(t, &b, allow, 2);
        counting_eval_t ce[2] = {{0}};
        mcts_eval_fn evals[2] = {eval_counting, eval_counting};
        void *users[2] = {&ce[0], &ce[1]};
        mcts_limits_t lim = {.visits = 2000, .batch = 4};
        mcts_result_t r;
        mcts_search_threads(t, threads, evals, users, &lim, &r);
        ck_assert_msg(r.proven == 1, "%d threads: proven %d after %llu visits, %llu vcf checks",
                      threads, r.proven, (unsigned long long)r.root_visits,
                      (unsigned long long)mcts_vcf_checks(t));
        ck_assert_int_eq(r.best_move, board_xy(&b, 8, 5));
        ck_assert_float_eq(mcts_root_value(t), 1.0f);
        ck_assert_uint_gt(mcts_vcf_checks(t), 0);
        ck_assert_uint_ge(mcts_vcf_wins(t), 1);
        ck_assert_uint_eq(ce[0].positions + ce[1].positions, r.evals);
        mcts_free(t);
    }

    /* a quiet middle game, 2 threads, all the default leaf checks on */
    mcts_params_t p = params_mem(32 << 20);
    p.max_pending = 16;
    mcts_t *t = tree_of(&p);
    board_init(&b, 15, RULE_FREESTYLE);
    const int mv[6][2] = {{7, 7}, {7, 8}, {3, 3}, {11, 11}, {8, 6}, {10, 4}};
    for (int i = 0; i < 6; i++)
        board_play(&b, board_xy(&b, mv[i][0], mv[i][1]));
    mcts_set_root(t, &b);
    counting_eval_t ce[2] = {{0}};
    mcts_eval_fn evals[2] = {eval_counting, eval_counting};
    void *users[2] = {&ce[0], &ce[1]};
    mcts_limits_t lim = {.visits = 3000, .batch = 8};
    mcts_result_t r;
    mcts_search_threads(t, 2, evals, users, &lim, &r);
    ck_assert_int_eq(r.proven, 0);
    ck_assert_uint_eq(r.root_visits, 3000);
    ck_assert_uint_eq(children_visits(t) + 1, r.root_visits);
    ck_assert_uint_eq(ce[0].positions + ce[1].positions, r.evals);
    ck_assert_uint_gt(mcts_vcf_checks(t), 0);
    mcts_free(t);

    /* an arena of 256 KB fills long before 100,000 visits */
    p = params_mem(256 << 10);
    t = tree_of(&p);
    mcts_set_root(t, &b);
    lim.visits = 100000;
    mcts_search_threads(t, 2, evals, users, &lim, &r);
    ck_assert_uint_lt(r.root_visits, 100000);
    ck_assert_uint_gt(r.root_visits, 1);
    ck_assert_uint_eq(children_visits(t) + 1, r.root_visits);
    ck_assert(r.best_move >= 0 && r.best_move < 15 * 15);
    ck_assert_int_eq(b.cells[r.best_move], STONE_EMPTY);
    mcts_free(t);
}
END_TEST

static void eval_const(void *user, const board_t *const *boards, int n, float *policy,
                       float *value)
{
    mcts_eval_uniform(NULL, boards, n, policy, value);
    for (int i = 0; i < n; i++)
        value[i] = 0.7f;
    if (user)
        *(int *)user += n;
}

START_TEST(test_terminal_exact)
{
    /* 5x5 filled in a pattern with no five, one black point left: the
     * only move ends the game in a draw, valued exactly 0 */
    int bl[13][2], wh[12][2], nb = 0, nw = 0;
    for (int y = 0; y < 5; y++)
        for (int x = 0; x < 5; x++) {
            if ((x + 2 * y) % 4 < 2) {
                bl[nb][0] = x;
                bl[nb++][1] = y;
            } else {
                wh[nw][0] = x;
                wh[nw++][1] = y;
            }
        }
    ck_assert_int_eq(nb, 13);
    board_t b;
    setup(&b, 5, RULE_FREESTYLE, bl, 12, wh, 12);
    ck_assert(!board_over(&b));
    int evals = 0;
    mcts_t *t = make_tree(0.0f, 4 << 20, NULL, 1);
    mcts_set_root(t, &b);
    mcts_limits_t lim = {.visits = 50};
    mcts_result_t r;
    mcts_search(t, eval_const, &evals, &lim, &r);
    ck_assert_int_eq(evals, 1);   /* only the root needed the net */
    uint32_t n;
    ck_assert_float_eq(child_q(t, board_xy(&b, bl[12][0], bl[12][1]), &n), 0.0f);
    ck_assert_uint_eq(n, 49);
    ck_assert_float_eq_tol(r.value, 0.7f / 50.0f, 1e-6f);

    /* a finished game: the side to move has lost, exactly */
    board_t w;
    const int five[5][2] = {{0, 0}, {1, 0}, {2, 0}, {3, 0}, {4, 0}};
    const int other[4][2] = {{0, 2}, {1, 2}, {2, 2}, {4, 3}};
    setup(&w, 9, RULE_FREESTYLE, five, 5, other, 4);
    ck_assert(board_over(&w));
    mcts_set_root(t, &w);
    mcts_search(t, eval_const, &evals, &lim, &r);
    ck_assert_int_eq(r.proven, -1);
    ck_assert_float_eq(r.value, -1.0f);
    ck_assert_int_eq(r.best_move, MOVE_NONE);
    mcts_free(t);
}
END_TEST

static void run_noisy(uint64_t seed, int *moves, record_visit_t *rv, int *nv)
{
    mcts_t *t = make_tree(0.0f, 16 << 20, NULL, seed);
    board_t b;
    empty_root(t, &b, 9);
    for (int ply = 0; ply < 6; ply++) {
        mcts_limits_t lim = {.visits = 1, .batch = 1};
        mcts_result_t r;
        mcts_search(t, mcts_eval_uniform, NULL, &lim, &r);
        mcts_add_noise(t, 0.3, 0.25);
        lim.visits = 200;
        lim.batch = 4;
        mcts_search(t, mcts_eval_uniform, NULL, &lim, &r);
        moves[ply] = mcts_pick_move(t, 1.0);
        ck_assert(mcts_advance(t, moves[ply]));
    }
    *nv = mcts_root_visits(t, rv, BOARD_CELLS);
    mcts_free(t);
}

START_TEST(test_same_seed_same_output)
{
    int m1[6], m2[6], nv1, nv2;
    record_visit_t v1[BOARD_CELLS], v2[BOARD_CELLS];
    run_noisy(42, m1, v1, &nv1);
    run_noisy(42, m2, v2, &nv2);
    ck_assert_mem_eq(m1, m2, sizeof m1);
    ck_assert_int_eq(nv1, nv2);
    ck_assert_mem_eq(v1, v2, (size_t)nv1 * sizeof v1[0]);
    int differ = 0;
    for (uint64_t s = 1; s <= 3; s++) {
        run_noisy(s, m2, v2, &nv2);
        differ += memcmp(m1, m2, sizeof m1) != 0;
    }
    ck_assert_int_gt(differ, 0);   /* the seed does matter */
}
END_TEST


/* Forced playouts (KataGo sec. 3.1). The crafted evaluator: priors fall
 * off geometrically with the point index (point p gets 0.5^(p % 8 + 1)
 * over the legal points), and the value (side to move) is -0.9 when the
 * side to move has a stone on point 40, the centre of 9x9, +0.9 when the
 * opponent has, else about -0.2: so the centre (prior about 0.04) is a
 * losing move that PUCT looks at once. */
static void eval_crafted(void *user, const board_t *const *boards, int n, float *policy,
                         float *value)
{
    (void)user;
    for (int i = 0; i < n; i++) {
        float *row = policy + (size_t)i * BOARD_CELLS;
        int np = board_npoints(boards[i]);
        for (int p = 0; p < np; p++)
            row[p] = ldexpf(1.0f, -(p % 8 + 1));
        int c40 = boards[i]->cells[40];
        value[i] = c40 == 0 ? -0.2f : c40 == boards[i]->to_move ? -0.9f : 0.9f;
        uint64_t h = boards[i]->hash;   /* a little position-dependent spread */
        value[i] += (float)(h % 7) * 0.01f;
    }
}

/* mcts_set_root_policy: nothing on a root not yet expanded; on a searched
 * one the priors follow the new row (normalised), the children keep their
 * visits, and the next playouts go where the new priors send them. */
START_TEST(test_set_root_policy)
{
    mcts_params_t p = params_mem(16 << 20);
    mcts_t *t = tree_of(&p);
    board_t b;
    empty_root(t, &b, 9);
    float row[BOARD_CELLS] = {0};
    int favourite = board_xy(&b, 7, 0);   /* point 7: the crafted net's lowest prior */
    row[favourite] = 3.0f;
    row[board_xy(&b, 4, 4)] = 1.0f;
    ck_assert(!mcts_set_root_policy(t, row));
    mcts_limits_t lim = {.visits = 50, .batch = 1};
    mcts_result_t r;
    mcts_search(t, eval_crafted, NULL, &lim, &r);
    mcts_child_info_t before[BOARD_CELLS], after[BOARD_CELLS];
    int n = mcts_root_children(t, before, BOARD_CELLS);
    uint32_t fav_before = 0;
    for (int i = 0; i < n; i++)
        if (before[i].move == favourite)
            fav_before = before[i].visits;
    ck_assert_uint_eq(fav_before, 0);
    ck_assert(mcts_set_root_policy(t, row));
    ck_assert_int_eq(mcts_root_children(t, after, BOARD_CELLS), n);
    for (int i = 0; i < n; i++) {
        float want = after[i].move == favourite ? 0.75f
                     : after[i].move == board_xy(&b, 4, 4) ? 0.25f : 0.0f;
        ck_assert_float_eq_tol(after[i].prior, want, 1e-4f);
        for (int j = 0; j < n; j++)
            if (before[j].move == after[i].move)
                ck_assert_uint_eq(after[i].visits, before[j].visits);
    }
    lim.visits = 150;
    mcts_search(t, eval_crafted, NULL, &lim, &r);
    n = mcts_root_children(t, after, BOARD_CELLS);
    for (int i = 0; i < n; i++)
        if (after[i].move == favourite)
            ck_assert_uint_ge(after[i].visits, fav_before + 40);
    mcts_free(t);
}
END_TEST

/* A noised 9x9 root searched for `visits` with forced playouts k (0: off);
 * the tree is the caller's. */
static mcts_t *forced_search(float k, uint32_t visits, uint64_t seed)
{
    mcts_params_t p = params_mem(16 << 20);
    p.seed = seed;
    p.forced_k = k;
    mcts_t *t = tree_of(&p);
    board_t b;
    empty_root(t, &b, 9);
    mcts_limits_t lim = {.visits = 1, .batch = 1};
    mcts_result_t r;
    mcts_search(t, eval_crafted, NULL, &lim, &r);
    mcts_add_noise(t, 0.3, 0.25);
    lim.visits = visits;
    lim.batch = 4;
    mcts_search(t, eval_crafted, NULL, &lim, &r);
    return t;
}

static uint64_t fnv_visits(const record_visit_t *v, int n, uint64_t h)
{
    for (int i = 0; i < n; i++) {
        h = (h ^ (uint64_t)(uint16_t)v[i].move) * 0x100000001b3ull;
        h = (h ^ v[i].count) * 0x100000001b3ull;
    }
    return h;
}

/* Root visits of `move` in v[0..n), 0 when absent. */
static uint32_t visits_of(const record_visit_t *v, int n, int move)
{
    for (int i = 0; i < n; i++)
        if (v[i].move == move)
            return v[i].count;
    return 0;
}

/* Off (k = 0) the search is the plain PUCT search of before the option
 * existed: these hashes of the root visits were taken with that build. */
START_TEST(test_forced_off_identical)
{
    const uint64_t golden[2] = {0xfe09814b68e71533ull, 0xaa29ac5b2219a865ull};
    for (int s = 1; s <= 2; s++) {
        mcts_t *t = forced_search(0.0f, 300, (uint64_t)s);
        record_visit_t v[BOARD_CELLS], pv[BOARD_CELLS];
        int n = mcts_root_visits(t, v, BOARD_CELLS);
        ck_assert_uint_eq(fnv_visits(v, n, 0xcbf29ce484222325ull), golden[s - 1]);
        ck_assert_uint_eq(visits_of(v, n, 40), 1);   /* the bad centre: one look */
        int np = mcts_root_policy_visits(t, pv, BOARD_CELLS);
        ck_assert_int_eq(np, n);
        ck_assert_mem_eq(pv, v, (size_t)n * sizeof v[0]);
        mcts_free(t);
    }
}
END_TEST

/* k = 2: the centre (prior about 0.04, a losing move for the mover) gets its
 * sqrt(2 P N) visits; so does every other child; no child is forced
 * without noise. */
START_TEST(test_forced_playouts_happen)
{
    mcts_t *t = forced_search(2.0f, 300, 1);
    mcts_child_info_t c[BOARD_CELLS];
    int k = mcts_root_children(t, c, BOARD_CELLS);
    double total = (double)mcts_root_n(t) - 1.0;
    int checked = 0;
    for (int i = 0; i < k; i++) {
        double forced = sqrt(2.0 * c[i].prior * total);
        /* the count is checked while the search runs (4 leaves in flight) */
        ck_assert_msg(c[i].visits + 1 >= (uint32_t)floor(forced * 0.98),
                      "move %d: %u visits, %.2f forced", c[i].move, c[i].visits, forced);
        if (c[i].move == 40) {
            ck_assert_uint_ge(c[i].visits, 4);
            checked = 1;
        }
    }
    ck_assert(checked);
    mcts_free(t);
    /* the same tree without noise searches as with k = 0 */
    mcts_params_t p = params_mem(16 << 20);
    char err[128];
    record_visit_t v[2][BOARD_CELLS];
    int n[2];
    for (int j = 0; j < 2; j++) {
        p.forced_k = j ? 2.0f : 0.0f;
        t = mcts_create(&p, err, sizeof err);
        ck_assert_msg(t != NULL, "%s", err);
        board_t b;
        empty_root(t, &b, 9);
        mcts_limits_t lim = {.visits = 200, .batch = 4};
        mcts_result_t r;
        mcts_search(t, eval_crafted, NULL, &lim, &r);
        n[j] = mcts_root_visits(t, v[j], BOARD_CELLS);
        mcts_free(t);
    }
    ck_assert_int_eq(n[0], n[1]);
    ck_assert_mem_eq(v[0], v[1], (size_t)n[0] * sizeof v[0][0]);
    p.forced_k = -1.0f;
    ck_assert_ptr_null(mcts_create(&p, err, sizeof err));
    ck_assert_ptr_nonnull(strstr(err, "forced_k"));
}
END_TEST

/* Pruning: the target loses the forced visits (the centre is dropped),
 * the best child keeps its count, no child is raised, none is left with
 * 1 visit. */
START_TEST(test_forced_pruned_from_target)
{
    mcts_t *t = forced_search(2.0f, 300, 1);
    record_visit_t v[BOARD_CELLS], pv[BOARD_CELLS];
    int n = mcts_root_visits(t, v, BOARD_CELLS);
    int np = mcts_root_policy_visits(t, pv, BOARD_CELLS);
    mcts_result_t r;
    mcts_get_result(t, &r);
    ck_assert_uint_ge(visits_of(v, n, 40), 4);
    ck_assert_uint_eq(visits_of(pv, np, 40), 0);
    ck_assert_uint_eq(visits_of(pv, np, r.best_move), visits_of(v, n, r.best_move));
    ck_assert_int_lt(np, n);
    uint32_t sum = 0, psum = 0;
    for (int i = 0; i < n; i++)
        sum += v[i].count;
    for (int i = 0; i < np; i++) {
        ck_assert_uint_gt(pv[i].count, 1);
        ck_assert_uint_le(pv[i].count, visits_of(v, n, pv[i].move));
        psum += pv[i].count;
    }
    ck_assert_uint_lt(psum, sum);
    mcts_free(t);
}
END_TEST

START_TEST(test_tree_reuse)
{
    /* small arena so that advancing compacts the subtree into the spare half */
    for (int small = 0; small < 2; small++) {
        mcts_t *t = make_tree(0.0f, small ? (size_t)10 << 20 : (size_t)64 << 20, NULL, 5);
        board_t b;
        mcts_result_t r;
        search_empty(t, &b, (mcts_limits_t){.visits = 2000}, &r);
        int mv = r.best_move;
        uint32_t n;
        child_q(t, mv, &n);
        ck_assert_uint_gt(n, 1);
        size_t used = mcts_edges_used(t);
        ck_assert(mcts_advance(t, mv));
        ck_assert_uint_eq(mcts_root_n(t), n);
        if (small)
            ck_assert_uint_lt(mcts_edges_used(t), used);   /* compacted */
        ck_assert_uint_eq(children_visits(t) + 1, n);
        /* sync_root to the position one ply ahead keeps that child's subtree */
        mcts_limits_t more = {.visits = n + 500};
        mcts_search(t, mcts_eval_uniform, NULL, &more, &r);
        ck_assert_uint_eq(r.root_visits, n + 500);
        int reply = r.best_move;
        board_t after = *mcts_root_board(t);
        board_play(&after, reply);
        uint32_t nr;
        child_q(t, reply, &nr);
        ck_assert(mcts_sync_root(t, &after));
        ck_assert_uint_eq(mcts_root_n(t), nr);
        ck_assert(!mcts_advance(t, mv));   /* occupied: refused, nothing changes */
        ck_assert_uint_eq(mcts_root_n(t), nr);
        mcts_free(t);
    }
}
END_TEST

/* A one-entry memo standing in for an evaluator's cache: memo_eval
 * remembers the last position it valued (0.7), memo_probe answers it. */
static struct {
    uint64_t hash;
    int rule, size;
    int evals, probes, hits;
} memo;

static void memo_eval(void *user, const board_t *const *boards, int n, float *policy,
                      float *value)
{
    eval_const(NULL, boards, n, policy, value);
    memo.evals += n;
    memo.hash = boards[n - 1]->hash;
    memo.rule = boards[n - 1]->rule;
    memo.size = boards[n - 1]->size;
    (void)user;
}

static bool memo_probe(void *user, const board_t *b, float *policy, float *value)
{
    (void)user;
    memo.probes++;
    if (b->hash != memo.hash || b->rule != memo.rule || b->size != memo.size)
        return false;
    memo.hits++;
    for (int p = 0; p < board_npoints(b); p++)
        policy[p] = 1.0f;
    *value = 0.7f;
    return true;
}

/* A transposition the probe knows is expanded at once: no evaluation, the
 * probe's value at the root. */
START_TEST(test_probe_transposition)
{
    memset(&memo, 0, sizeof memo);
    mcts_t *t = make_tree(0.0f, 8 << 20, memo_probe, 1);
    int a = 3 * 9 + 3, bm = 4 * 9 + 4, cm = 5 * 9 + 2;
    board_t b1, b2;
    board_init(&b1, 9, RULE_STANDARD);
    board_play(&b1, a);
    board_play(&b1, bm);
    board_play(&b1, cm);
    board_init(&b2, 9, RULE_STANDARD);
    board_play(&b2, cm);
    board_play(&b2, bm);
    board_play(&b2, a);
    ck_assert_uint_eq(b1.hash, b2.hash);
    mcts_limits_t lim = {.visits = 1};
    mcts_result_t r;
    mcts_set_root(t, &b1);
    mcts_search(t, memo_eval, NULL, &lim, &r);
    ck_assert_int_eq(memo.evals, 1);
    ck_assert_uint_eq(r.evals, 1);
    mcts_set_root(t, &b2);
    mcts_search(t, memo_eval, NULL, &lim, &r);
    ck_assert_int_eq(memo.evals, 1);                 /* answered by the probe */
    ck_assert_int_eq(memo.hits, 1);
    ck_assert_uint_eq(r.evals, 0);
    ck_assert_uint_eq(r.playouts, 1);
    ck_assert_float_eq_tol(r.value, 0.7f, 1e-6f);
    ck_assert(mcts_root_expanded(t));
    /* a probe hit costs no batch slot: a gather of 4 still brings 4 leaves */
    mcts_set_root(t, &b1);
    const board_t *leaves[4];
    ck_assert_int_eq(mcts_gather(t, 4, 0, leaves), 4);
    ck_assert_uint_eq(mcts_root_n(t), 1);            /* the root came from the probe */
    float pol[4 * BOARD_CELLS], val[4];
    memo_eval(NULL, leaves, 4, pol, val);
    mcts_deliver(t, pol, val);
    ck_assert_uint_eq(mcts_root_n(t), 5);
    /* another rule is another position */
    board_t b3;
    board_init(&b3, 9, RULE_FREESTYLE);
    board_play(&b3, a);
    board_play(&b3, bm);
    board_play(&b3, cm);
    mcts_set_root(t, &b3);
    int before = memo.evals;
    mcts_search(t, memo_eval, NULL, &lim, &r);
    ck_assert_int_eq(memo.evals, before + 1);
    mcts_free(t);
}
END_TEST

START_TEST(test_renju_forbidden_not_searched)
{
    /* black 5,7 6,7 7,5 7,6: 7,7 is a double three for black */
    const int bl[4][2] = {{5, 7}, {6, 7}, {7, 5}, {7, 6}};
    const int wh[4][2] = {{0, 0}, {2, 0}, {0, 14}, {14, 14}};
    board_t b;
    setup(&b, 15, RULE_RENJU, bl, 4, wh, 4);
    int x = board_xy(&b, 7, 7);
    ck_assert(board_is_forbidden(&b, x));
    mcts_result_t r;
    mcts_params_t p = params_mem(16 << 20);
    p.vct_root_nodes = p.vct_defend_nodes = 0;   /* black has a VCT here: search every move */
    p.threat_prune = false;
    mcts_t *t = tree_of(&p);
    mcts_set_root(t, &b);
    mcts_limits_t lim = {.visits = 500};
    mcts_search(t, mcts_eval_uniform, NULL, &lim, &r);
    int fp[BOARD_CELLS];
    int nf = board_forbidden_points(&b, fp);
    ck_assert_int_ge(nf, 1);
    mcts_child_info_t c[BOARD_CELLS];
    int k = mcts_root_children(t, c, BOARD_CELLS);
    ck_assert_int_eq(k, 225 - 8 - nf);
    for (int i = 0; i < k; i++)
        ck_assert_int_ne(c[i].move, x);
    mcts_free(t);
}
END_TEST

START_TEST(test_time_and_stop)
{
    mcts_t *t = make_tree(0.0f, (size_t)256 << 20, NULL, 1);
    board_t b;
    mcts_result_t r;
    /* stopped by its clock: not before 30 ms, and not by a full tree
     * (search_empty checks); the upper bound is generous, and how many
     * playouts fit in 30 ms is not asserted, for a loaded machine (it
     * can be a few dozen) */
    search_empty(t, &b, (mcts_limits_t){.time_ms = 30}, &r);
    ck_assert(r.seconds >= 0.03 && r.seconds < 10.0);
    ck_assert_uint_gt(r.playouts, 0);
    volatile int stop = 1;
    mcts_limits_t l2 = {.visits = 1000000, .stop = &stop};
    mcts_search(t, mcts_eval_uniform, NULL, &l2, &r);
    ck_assert_uint_eq(r.playouts, 0);
    mcts_free(t);
}
END_TEST

/* A model file as a player: loads, plays legal moves, blocks a four with a
 * random net, keeps its tree across notify, and refuses what it cannot do. */
START_TEST(test_model_player)
{
    char path[256], err[256];
    small_model_file(path, sizeof path, 1, 8, 9, 5);
    player_opts_t o;
    player_opts_default(&o);
    o.visits = 40;
    o.device = "cpu";
    o.quiet = 1;
    ck_assert(player_model_create(path, RULE_FREESTYLE, 11, &o, err, sizeof err) == NULL);
    ck_assert(strstr(err, "9x9") != NULL);
    ck_assert(player_model_create("/nonexistent/x.gzm", RULE_FREESTYLE, 9, &o, err,
                                  sizeof err) == NULL);
    player_t *p = player_create(path, RULE_FREESTYLE, 9, &o, err, sizeof err);
    ck_assert_msg(p != NULL, "%s", err);
    board_t b;
    int mv;
    /* the first stone goes to the centre, without a search (no analysis) */
    board_init(&b, 9, RULE_FREESTYLE);
    player_new_game(p, &b);
    ck_assert_int_eq(player_genmove(p, &b, &mv, err, sizeof err), 0);
    ck_assert_int_eq(mv, board_xy(&b, 4, 4));
    player_analysis_t an;
    ck_assert(!player_analysis(p, &an));
    /* white four 1..4,4 closed by black at 0,4: black must take 5,4 */
    board_init(&b, 9, RULE_FREESTYLE);
    player_new_game(p, &b);
    const int bl[4][2] = {{0, 4}, {8, 8}, {8, 0}, {0, 8}};
    for (int i = 0; i < 4; i++) {
        int mv = board_xy(&b, bl[i][0], bl[i][1]);
        board_play(&b, mv);
        player_notify(p, &b, mv);
        mv = board_xy(&b, 1 + i, 4);
        board_play(&b, mv);
        player_notify(p, &b, mv);
    }
    ck_assert_int_eq(player_genmove(p, &b, &mv, err, sizeof err), 0);
    ck_assert_int_eq(mv, board_xy(&b, 5, 4));
    ck_assert(player_analysis(p, &an));
    /* a whole game against itself stays legal, with the default batch of
     * leaves and with one leaf a call */
    player_free(p);
    const int batches[] = {SEARCH_BATCH_DEFAULT, 1};
    for (int i = 0; i < 2; i++) {
        o.search.batch = batches[i];
        p = player_create(path, RULE_FREESTYLE, 9, &o, err, sizeof err);
        ck_assert_msg(p != NULL, "%s", err);
        board_init(&b, 9, RULE_FREESTYLE);
        player_new_game(p, &b);
        while (!board_over(&b)) {
            ck_assert_int_eq(player_genmove(p, &b, &mv, err, sizeof err), 0);
            ck_assert_int_eq(board_play(&b, mv), MOVE_OK);
            player_notify(p, &b, mv);
        }
        player_free(p);
    }
    unlink(path);
}
END_TEST

/* Quiet position k of the bf16 agreement test: 2 + 3k stones scattered
 * near the centre (the side not to move has as many or one more), no
 * three in a row of one colour, so neither side has a forced win. */
static void quiet_position(board_t *b, int size, int k, uint64_t *st)
{
    int n = 2 + 3 * (k % 8), c = size / 2;
    board_init(b, size, RULE_FREESTYLE);
    if (n % 2 == 0)
        n++;   /* board_play alternates: an odd count leaves white to move, black one ahead */
    while (b->nmoves < n) {
        int r = 3 + b->nmoves / 3;
        *st = *st * 6364136223846793005ull + 1442695040888963407ull;
        int x = c - r + (int)((*st >> 33) % (uint64_t)(2 * r + 1));
        *st = *st * 6364136223846793005ull + 1442695040888963407ull;
        int y = c - r + (int)((*st >> 33) % (uint64_t)(2 * r + 1));
        x = x < 0 ? 0 : x >= size ? size - 1 : x;
        y = y < 0 ? 0 : y >= size ? size - 1 : y;
        int mv = board_xy(b, x, y);
        if (b->cells[mv] != STONE_EMPTY)
            continue;
        bool three = false;
        static const int dirs[4][2] = {{1, 0}, {0, 1}, {1, 1}, {1, -1}};
        for (int d = 0; d < 4 && !three; d++) {
            int run = 1;
            for (int sg = -1; sg <= 1; sg += 2)
                for (int j = 1;; j++) {
                    int xx = x + sg * j * dirs[d][0], yy = y + sg * j * dirs[d][1];
                    if (xx < 0 || yy < 0 || xx >= size || yy >= size ||
                        b->cells[board_xy(b, xx, yy)] != b->to_move)
                        break;
                    run++;
                }
            three = run >= 3;
        }
        if (!three)
            board_play(b, mv);
    }
}

/* The search-level check of the bf16 forward: the shipped 15x15 model at
 * 200 visits (1 thread, deterministic) picks the same move with bf16 as
 * with fp32 in most quiet positions (measured: see the printed line and
 * README). */
START_TEST(test_bf16_player_agrees)
{
    char why[128];
    if (!gemm_bf16_supported(why, sizeof why)) {
        printf("test_bf16_player_agrees: skipped: %s\n", why);
        return;
    }
    const char *src = getenv("GOMOKU_SRC");
    char path[1024], err[256];
    snprintf(path, sizeof path, "%s/models/freestyle15-4x48.gzm", src ? src : ".");
    player_opts_t o;
    player_opts_default(&o);
    o.visits = 200;
    o.device = "cpu";
    o.quiet = 1;
    player_t *pl[2];
    for (int i = 0; i < 2; i++) {
        o.precision = i ? NN_PRECISION_BF16 : NN_PRECISION_FP32;
        pl[i] = player_create(path, RULE_FREESTYLE, 15, &o, err, sizeof err);
        ck_assert_msg(pl[i] != NULL, "%s", err);
    }
    int n = asan() ? 6 : 24, same = 0;
    uint64_t st = 2026;
    for (int k = 0; k < n; k++) {
        board_t b;
        quiet_position(&b, 15, k, &st);
        int mv[2];
        for (int i = 0; i < 2; i++) {
            player_new_game(pl[i], &b);
            ck_assert_int_eq(player_genmove(pl[i], &b, &mv[i], err, sizeof err), 0);
        }
        same += mv[0] == mv[1];
    }
    printf("bf16 player vs fp32 player, freestyle15-4x48 at 200 visits: same move in %d of %d "
           "positions\n", same, n);
    ck_assert_msg(same * 4 >= n * 3, "bf16 agrees with fp32 in only %d of %d positions", same, n);
    player_free(pl[0]);
    player_free(pl[1]);
}
END_TEST

/* A small tree, and into b a 9x9 board with black's stone in the centre. */
static mcts_t *tree_with_center(board_t *b)
{
    board_init(b, 9, RULE_FREESTYLE);
    board_play(b, board_xy(b, 4, 4));
    return make_tree(0.0f, (size_t)8 << 20, NULL, 1);
}

/* A search of VISITS with uniform priors from t's root: the result into
 * *r, the root's children into ch; returns their count. */
static int search_children(mcts_t *t, uint32_t visits, mcts_result_t *r, mcts_child_info_t *ch)
{
    mcts_limits_t lim = {.visits = visits};
    mcts_search(t, mcts_eval_uniform, NULL, &lim, r);
    return mcts_root_children(t, ch, BOARD_CELLS);
}

/* A root filter: only the allowed moves are searched and played, it is
 * reported back, and it ends with the root (advance, set_root). */
START_TEST(test_root_filter)
{
    board_t b;
    mcts_t *t = tree_with_center(&b);
    int allow[3] = {board_xy(&b, 0, 0), board_xy(&b, 8, 8), board_xy(&b, 4, 4) /* occupied */};
    mcts_set_root_filter(t, &b, allow, 3);
    int got[BOARD_CELLS];
    ck_assert_int_eq(mcts_root_filter(t, got), 3);
    mcts_result_t r;
    mcts_child_info_t ch[BOARD_CELLS];
    int n = search_children(t, 200, &r, ch);
    ck_assert_int_eq(n, 2);
    uint32_t sum = 0;
    for (int i = 0; i < n; i++) {
        ck_assert(ch[i].move == allow[0] || ch[i].move == allow[1]);
        sum += ch[i].visits;
    }
    ck_assert_uint_eq(sum + 1, mcts_root_n(t));
    ck_assert(r.best_move == allow[0] || r.best_move == allow[1]);
    ck_assert(mcts_advance(t, r.best_move));
    ck_assert_int_eq(mcts_root_filter(t, got), 0);
    /* a filter of nothing legal is ignored: every empty point is a child */
    int bad[1] = {board_xy(&b, 4, 4)};
    mcts_set_root_filter(t, &b, bad, 1);
    ck_assert_int_eq(search_children(t, 200, &r, ch), 80);
    mcts_free(t);
}
END_TEST

/* A win proven outside the tree (a solver's line): the root becomes a
 * proven win through that move, fresh or after a search expanded it. */
START_TEST(test_root_prove_win)
{
    board_t b;
    mcts_t *t = tree_with_center(&b);
    mcts_set_root(t, &b);
    ck_assert(!mcts_root_prove_win(t, board_xy(&b, 4, 4)));   /* occupied */
    ck_assert(mcts_root_prove_win(t, board_xy(&b, 2, 3)));
    mcts_result_t r;
    mcts_limits_t lim = {.visits = 50};
    mcts_search(t, mcts_eval_uniform, NULL, &lim, &r);
    ck_assert_int_eq(r.proven, 1);
    ck_assert_int_eq(r.best_move, board_xy(&b, 2, 3));
    mcts_set_root(t, &b);
    mcts_search(t, mcts_eval_uniform, NULL, &lim, &r);
    ck_assert_int_eq(r.proven, 0);
    /* each visited child's line starts with it; the best one's is the result's pv */
    int pv[MCTS_PV_MAX];
    ck_assert_int_eq(mcts_root_child_pv(t, r.best_move, pv, MCTS_PV_MAX), r.npv);
    for (int i = 0; i < r.npv; i++)
        ck_assert_int_eq(pv[i], r.pv[i]);
    ck_assert_int_eq(mcts_root_child_pv(t, board_xy(&b, 4, 4), pv, MCTS_PV_MAX), 0);   /* occupied */
    ck_assert(mcts_root_prove_win(t, board_xy(&b, 7, 1)));
    mcts_child_info_t ch[BOARD_CELLS];
    int nch = mcts_root_children(t, ch, BOARD_CELLS), nproven = 0;
    for (int i = 0; i < nch; i++) {
        ck_assert_int_eq(ch[i].proven, ch[i].move == board_xy(&b, 7, 1) ? 1 : 0);
        nproven += ch[i].proven;
        if (ch[i].visits > 0 || ch[i].proven) {
            ck_assert_int_ge(mcts_root_child_pv(t, ch[i].move, pv, MCTS_PV_MAX), 1);
            ck_assert_int_eq(pv[0], ch[i].move);
        }
    }
    ck_assert_int_eq(nproven, 1);
    mcts_get_result(t, &r);
    ck_assert_int_eq(r.proven, 1);
    ck_assert_int_eq(mcts_pick_move(t, 1.0), board_xy(&b, 7, 1));
    ck_assert_float_eq(mcts_root_value(t), 1.0f);
    mcts_free(t);
}
END_TEST

/* Black's two crossing twos: (7,7) makes a double open three, a VCT but
 * no VCF. */
static const int vct_bl[4][2] = {{5, 7}, {6, 7}, {7, 5}, {7, 6}};
static const int vct_wh[4][2] = {{0, 0}, {2, 0}, {0, 14}, {14, 14}};

/* r: a search of root b proved its win by the threat search, through a
 * legal move. */
static void assert_vct_proof(const mcts_t *t, const board_t *b, const mcts_result_t *r)
{
    ck_assert_int_eq(r->proven, 1);
    ck_assert_uint_ge(mcts_vct_wins(t), 1);
    board_t after = *b;
    ck_assert_int_eq(board_play(&after, r->best_move), MOVE_OK);
}

/* The root's VCT: black to move is a proven win found by the threat
 * search (no VCF exists), its move the line's first. */
START_TEST(test_vct_root_proven)
{
    board_t b;
    setup(&b, 15, RULE_FREESTYLE, vct_bl, 4, vct_wh, 4);
    mcts_t *t = make_tree(0.0f, (size_t)16 << 20, NULL, 1);
    mcts_set_root(t, &b);
    mcts_limits_t lim = {.visits = 50};
    mcts_result_t r;
    mcts_search(t, mcts_eval_uniform, NULL, &lim, &r);
    ck_assert_uint_eq(mcts_vcf_wins(t), 0);
    assert_vct_proof(t, &b, &r);
    mcts_free(t);
}
END_TEST

/* The VCT check at new leaves, and its depth: white to move leaves black's
 * double open three (two threats) standing with most moves, so leaves with
 * black to move are proven wins at depth 2 or any depth, never at depth 1
 * (the double is not one threat). */
static uint64_t leaf_vct_wins(const board_t *b, int depth)
{
    mcts_params_t p = params_mem((size_t)16 << 20);
    p.vct_root_nodes = p.vct_defend_nodes = 0;   /* the leaves' check alone */
    p.vct_nodes = 2000;
    p.vct_depth = depth;
    mcts_t *t = tree_of(&p);
    mcts_set_root(t, b);
    mcts_limits_t lim = {.visits = 400};
    mcts_result_t r;
    mcts_search(t, mcts_eval_uniform, NULL, &lim, &r);
    uint64_t wins = mcts_vct_wins(t);
    ck_assert_uint_ge(mcts_vct_checks(t), 1);
    mcts_free(t);
    return wins;
}

START_TEST(test_vct_leaf_depth)
{
    board_t b;
    setup(&b, 15, RULE_FREESTYLE, vct_bl, 4, vct_wh, 3);
    ck_assert_uint_ge(leaf_vct_wins(&b, 0), 1);
    ck_assert_uint_ge(leaf_vct_wins(&b, 2), 1);
    ck_assert_uint_eq(leaf_vct_wins(&b, 1), 0);
    mcts_params_t p = params_mem((size_t)16 << 20);
    char err[160];
    for (int bad = -1; bad <= VCT_MAX_DEPTH + 1; bad += VCT_MAX_DEPTH + 2) {
        p.vct_depth = bad;
        ck_assert_ptr_null(mcts_create(&p, err, sizeof err));
        ck_assert_msg(strstr(err, "vct_depth"), "%s", err);
    }
}
END_TEST

/* Proven losses: white to move facing black's double open three (no
 * four of its own) is lost at once; facing two separate doubles to come
 * (black's crossing twos at (7,7) and at (3,3)), every white move leads
 * to a proven win of black (the leaves' VCT), so the root is lost once
 * each has been visited, and the search stops there. */
static const int two_doubles_bl[8][2] = {{5, 7}, {6, 7}, {7, 5}, {7, 6},
                                         {1, 3}, {2, 3}, {3, 1}, {3, 2}};
static const int far_wh[7][2] = {{0, 14}, {14, 14}, {14, 0}, {11, 13}, {13, 9}, {9, 12},
                                 {2, 10}};   /* no two of them in a line of five */

START_TEST(test_proven_loss_propagates)
{
    static const int dbl_bl[5][2] = {{5, 7}, {6, 7}, {7, 5}, {7, 6}, {7, 7}};
    board_t b;
    setup(&b, 15, RULE_FREESTYLE, dbl_bl, 5, far_wh, 4);
    mcts_result_t r;
    mcts_t *t = search_uniform(&b, (size_t)16 << 20, 50, &r);
    ck_assert_int_eq(r.proven, -1);
    /* lost, but the move played blocks one of the threes at an end: not
     * the board's first empty point */
    const int ends[4][2] = {{4, 7}, {8, 7}, {7, 4}, {7, 8}};
    mcts_child_info_t ch[BOARD_CELLS];
    ck_assert_int_eq(mcts_root_children(t, ch, BOARD_CELLS), 4);
    for (int i = 0; i < 4; i++) {
        int k = 0;
        while (k < 4 && ch[i].move != board_xy(&b, ends[k][0], ends[k][1]))
            k++;
        ck_assert_msg(k < 4, "child %d at %d", i, ch[i].move);
    }
    ck_assert_int_eq(r.best_move, ch[0].move);
    mcts_free(t);

    setup(&b, 15, RULE_FREESTYLE, two_doubles_bl, 8, far_wh, 7);
    mcts_params_t p = params_mem((size_t)64 << 20);
    p.vct_root_nodes = p.vct_defend_nodes = 0;   /* the tree alone */
    p.vct_nodes = 2000;
    p.vct_depth = 2;
    t = tree_of(&p);
    mcts_set_root(t, &b);
    mcts_limits_t lim = {.visits = 20000};
    mcts_search(t, mcts_eval_uniform, NULL, &lim, &r);
    ck_assert_int_eq(r.proven, -1);
    ck_assert_uint_lt(r.root_visits, 20000);
    ck_assert_float_eq(mcts_root_value(t), -1.0f);
    mcts_free(t);
}
END_TEST

/* The root's defence: white to move against black's VCT is searched among
 * the refutations vct_defend finds, within a timed search too. */
START_TEST(test_vct_root_defence)
{
    const int wh[3][2] = {{8, 8}, {6, 6}, {0, 0}};   /* near enough to leave defences */
    board_t b;
    setup(&b, 15, RULE_FREESTYLE, vct_bl, 4, wh, 3);
    char err[128];
    vct_t *v = vct_create((size_t)1 << 20, err, sizeof err);
    ck_assert_msg(v != NULL, "%s", err);
    mcts_params_t p = params_mem((size_t)16 << 20);
    vct_limits_t lim = {.nodes = p.vct_defend_nodes};
    int def[BOARD_CELLS];
    int nd = vct_defend(v, &b, &lim, def, NULL);
    ck_assert_int_gt(nd, 0);
    ck_assert_int_lt(nd, 40);
    for (int timed = 0; timed < 2; timed++) {
        mcts_t *t = tree_of(&p);
        mcts_set_root(t, &b);
        /* timed: the threat search's share of 60 s is more than its node
         * budgets need, so the result does not hang on the machine's speed */
        mcts_limits_t sl = {.visits = 200, .time_ms = timed ? 60000.0 : 0.0};
        mcts_result_t r;
        mcts_search(t, mcts_eval_uniform, NULL, &sl, &r);
        ck_assert_uint_eq(mcts_vct_defences(t), 1);
        mcts_child_info_t ch[BOARD_CELLS];
        int n = mcts_root_children(t, ch, BOARD_CELLS);
        ck_assert_int_ge(n, 1);
        ck_assert_int_le(n, nd);
        for (int i = 0; i < n; i++) {
            int j = 0;
            while (j < nd && def[j] != ch[i].move)
                j++;
            ck_assert_msg(j < nd, "root child %d is no refutation", ch[i].move);
        }
        ck_assert_int_ne(r.best_move, MOVE_NONE);
        mcts_free(t);
    }
    vct_free(v);
}
END_TEST

/* An evaluator that favours two points, favour[0] (70%) and favour[1]
 * (20%), wherever they are empty; value 0. */
static void eval_favour(void *user, const board_t *const *boards, int n, float *policy,
                        float *value)
{
    const int *favour = user;
    for (int i = 0; i < n; i++) {
        float *row = policy + (size_t)i * BOARD_CELLS;
        for (int p = 0; p < board_npoints(boards[i]); p++)
            row[p] = 0.001f;
        row[favour[0]] = 0.7f;
        row[favour[1]] = 0.2f;
        value[i] = 0.0f;
    }
}

/* mcts_refute_best: black's four at 8,8 (a game lost to PentaZen) has no
 * VCT of white's behind it, but white's forced block at 8,9 leaves black
 * no defence against the VCT that follows (check_vct's test_quiet_win).
 * The check asks vct_solve_reply, which plays the block and looks for
 * black's defence, so the four is refuted with the quiet check
 * (vct_quiet_nodes) and without it; a plain vct_solve let it stand. */
START_TEST(test_refute_quiet)
{
    static const int moves[20][2] = {{5, 8}, {6, 7}, {8, 5}, {6, 6}, {6, 5}, {5, 5}, {7, 7},
                                     {4, 6}, {7, 6}, {6, 4}, {7, 3}, {7, 5}, {8, 7}, {9, 8},
                                     {8, 6}, {8, 4}, {5, 7}, {4, 4}, {7, 4}, {5, 4}};
    board_t b;
    board_init(&b, 15, RULE_FREESTYLE);
    for (int i = 0; i < 20; i++)
        ck_assert_int_eq(board_play(&b, board_xy(&b, moves[i][0], moves[i][1])), MOVE_OK);
    int favour[2] = {board_xy(&b, 8, 8), board_xy(&b, 10, 10)};
    for (int quiet = 0; quiet < 2; quiet++) {
        mcts_params_t p = params_mem((size_t)16 << 20);
        p.vct_root_nodes = p.vct_defend_nodes = 0;
        p.vct_quiet_nodes = quiet ? 2000 : 0;
        mcts_t *t = tree_of(&p);
        mcts_set_root(t, &b);
        mcts_limits_t sl = {.visits = 50};
        mcts_result_t r;
        mcts_search(t, eval_favour, favour, &sl, &r);
        ck_assert_int_eq(r.best_move, favour[0]);
        ck_assert_int_eq(mcts_refute_best(t, NULL, 50000, 0.0), favour[0]);
        ck_assert_int_ne(mcts_pick_move(t, 0.0), favour[0]);
        mcts_free(t);
    }
}
END_TEST

/* A root move of b that does not stop the opponent's VCT (def[0..nd): the
 * defences) and that a search of 100 visits led by eval_favour (favour,
 * set here: that move, then def[0]) plays; MOVE_NONE when there is none.
 * The VCF checks in the tree do not see the VCT behind it. */
static int favoured_refuted(const board_t *b, const mcts_params_t *p, const int *def, int nd,
                            int favour[2])
{
    mcts_t *t = tree_of(p);
    mcts_set_root(t, b);
    mcts_limits_t sl = {.visits = 100};
    mcts_result_t r;
    mcts_search(t, mcts_eval_uniform, NULL, &sl, &r);
    mcts_child_info_t ch[BOARD_CELLS];
    int n = mcts_root_children(t, ch, BOARD_CELLS), bad = MOVE_NONE;
    for (int i = 0; i < n && bad == MOVE_NONE; i++) {
        int j = 0;
        while (j < nd && def[j] != ch[i].move)
            j++;
        if (j < nd)
            continue;
        favour[0] = ch[i].move;
        favour[1] = def[0];
        mcts_free(t);
        t = tree_of(p);
        mcts_set_root(t, b);
        mcts_search(t, eval_favour, favour, &sl, &r);
        if (r.best_move == ch[i].move)
            bad = ch[i].move;
    }
    mcts_free(t);
    return bad;
}

/* The position of test_vct_defence with its defences (200,000 nodes a
 * solve) and a move the search favours there that the opponent's VCT
 * refutes (favoured_refuted); the root's own VCT and defence off. */
typedef struct refuted {
    board_t b;
    vct_t *v;              /* 16 MiB, for the caller's solves; vct_free it */
    int def[BOARD_CELLS], nd;
    mcts_params_t p;
    int favour[2], bad;
} refuted_t;

static void refuted_setup(refuted_t *x)
{
    const int wh[3][2] = {{8, 8}, {6, 6}, {0, 0}};
    setup(&x->b, 15, RULE_FREESTYLE, vct_bl, 4, wh, 3);
    char err[128];
    x->v = vct_create((size_t)16 << 20, err, sizeof err);
    ck_assert_msg(x->v != NULL, "%s", err);
    vct_limits_t lim = {.nodes = 200000};
    x->nd = vct_defend(x->v, &x->b, &lim, x->def, NULL);
    ck_assert_int_gt(x->nd, 0);
    x->p = params_mem((size_t)16 << 20);
    x->p.vct_root_nodes = x->p.vct_defend_nodes = 0;
    x->bad = favoured_refuted(&x->b, &x->p, x->def, x->nd, x->favour);
    ck_assert_int_ne(x->bad, MOVE_NONE);
}

/* refuted_setup, then a tree that searched x->b 100 visits and would play
 * the refuted favourite. */
static mcts_t *favoured_searched(refuted_t *x)
{
    refuted_setup(x);
    mcts_t *t = tree_of(&x->p);
    mcts_set_root(t, &x->b);
    mcts_limits_t sl = {.visits = 100};
    mcts_result_t r;
    mcts_search(t, eval_favour, x->favour, &sl, &r);
    ck_assert_int_eq(r.best_move, x->bad);
    return t;
}

/* mcts_refute_best: the move the search would play, refuted by the
 * opponent's VCT, becomes a proven loss and is no longer picked; a real
 * defence holds; each move is checked once per root. The root's own
 * defence is off, so only the check keeps the refuted move out. */
START_TEST(test_refute_best)
{
    refuted_t x;
    mcts_t *t = favoured_searched(&x);
    mcts_limits_t sl = {.visits = 100};
    mcts_result_t r;
    vct_limits_t lim = {.nodes = 200000};
    ck_assert_int_eq(mcts_refute_best(t, NULL, 200000, 0.0), x.bad);
    ck_assert_int_ne(mcts_pick_move(t, 0.0), x.bad);
    ck_assert_int_eq(mcts_pick_move(t, 0.0), x.def[0]);
    ck_assert_int_eq(mcts_refute_best(t, NULL, 200000, 0.0), MOVE_NONE);   /* def[0] holds */
    ck_assert_int_eq(mcts_refute_best(t, NULL, 200000, 0.0), MOVE_NONE);   /* checked already */
    sl.visits = 300;
    mcts_search(t, eval_favour, x.favour, &sl, &r);
    ck_assert_int_ne(r.best_move, x.bad);
    board_t after = x.b;
    board_play(&after, x.bad);
    ck_assert_int_eq(vct_solve(x.v, &after, &lim, NULL), VCT_WIN);
    mcts_free(t);
    /* a budget of 0 nodes checks nothing */
    t = tree_of(&x.p);
    mcts_set_root(t, &x.b);
    sl.visits = 100;
    mcts_search(t, eval_favour, x.favour, &sl, &r);
    ck_assert_int_eq(mcts_refute_best(t, NULL, 0, 0.0), MOVE_NONE);
    ck_assert_int_eq(mcts_pick_move(t, 0.0), x.bad);
    mcts_free(t);
    vct_free(x.v);
}
END_TEST

/* eval_favour, slowed to 2 ms a call: a timed search that lasts. */
static void eval_favour_slow(void *user, const board_t *const *boards, int n, float *policy,
                             float *value)
{
    usleep(2000);
    eval_favour(user, boards, n, policy, value);
}

/* A search of t from b with one thread on eval_favour_slow (favour: its
 * two favourites), `visits` evaluations, the watcher on w (NULL: none);
 * returns the root child of `move`, which must have been visited. */
static mcts_child_info_t watched_search(mcts_t *t, const board_t *b, unsigned visits, vct_t *w,
                                        int *favour, int move, mcts_result_t *r)
{
    mcts_set_root(t, b);
    mcts_limits_t sl = {.visits = visits, .time_ms = 600000.0, .watch = w};
    mcts_eval_fn fn = eval_favour_slow;
    void *user = favour;
    mcts_search_threads(t, 1, &fn, &user, &sl, r);
    mcts_child_info_t ch[BOARD_CELLS];
    int n = mcts_root_children(t, ch, BOARD_CELLS), k = 0;
    while (k < n && ch[k].move != move)
        k++;
    ck_assert_int_lt(k, n);
    return ch[k];
}

/* The watcher (vct_watch_nodes): while a timed search runs, the thread
 * beside it checks the most visited root move, finds the opponent's VCT
 * behind the favoured move and makes it a proven loss, so the search
 * plays another. Without a solver for it (or with 0 nodes) the search
 * plays the favoured move. The search's visit target ends it (at 2 ms an
 * evaluation, a second or more: time for the solves, which take a few ms
 * here); its time limit is far out of reach. */
START_TEST(test_watch)
{
    refuted_t x;
    refuted_setup(&x);
    for (int mode = 0; mode < 3; mode++) {   /* watcher, no solver, 0 nodes */
        x.p.vct_watch_nodes = mode == 2 ? 0 : 200000;
        mcts_t *t = tree_of(&x.p);
        mcts_result_t r;
        mcts_child_info_t c = watched_search(t, &x.b, mode ? 150 : 600, mode == 1 ? NULL : x.v,
                                             x.favour, x.bad, &r);
        if (mode == 0) {
            ck_assert_int_ne(r.best_move, x.bad);
            ck_assert_int_eq(c.proven, -1);
            ck_assert_uint_ge(mcts_vct_checks(t), 1);
            ck_assert_uint_ge(mcts_vct_wins(t), 1);
        } else {
            ck_assert_int_eq(r.best_move, x.bad);
            ck_assert_int_eq(c.proven, 0);
        }
        mcts_free(t);
    }
    vct_free(x.v);
}
END_TEST

/* The watcher's quiet check (vct_watch_quiet_nodes), in a game lost to
 * PentaZen (2026-11-27, seed 7, game 12): white to move after 17 plies
 * played 6,4, and black's quiet 7,9 (no four, no three) then left white
 * no defence against black's VCT. The VCT check after 6,4, on a small
 * budget here, does not see black's win; the net's likeliest black reply
 * there (eval_favour's second move) is 7,9, which the quiet check tries
 * first, finds, and makes 6,4 a proven loss. With the quiet check off,
 * the search plays 6,4. */
START_TEST(test_watch_quiet)
{
    static const int moves[17][2] = {{8, 9}, {6, 7}, {6, 6}, {8, 8}, {9, 8}, {10, 7},
                                     {5, 7}, {8, 5}, {7, 6}, {8, 7}, {7, 5}, {8, 4},
                                     {8, 6}, {9, 6}, {7, 4}, {7, 7}, {9, 7}};
    board_t b;
    board_init(&b, 15, RULE_FREESTYLE);
    for (int i = 0; i < 17; i++)
        ck_assert_int_eq(board_play(&b, board_xy(&b, moves[i][0], moves[i][1])), MOVE_OK);
    char err[128];
    vct_t *w = vct_create((size_t)16 << 20, err, sizeof err);
    ck_assert_msg(w != NULL, "%s", err);
    int bad = board_xy(&b, 6, 4), favour[2] = {bad, board_xy(&b, 7, 9)};
    board_t after = b;
    ck_assert_int_eq(board_play(&after, bad), MOVE_OK);
    ck_assert_int_ne(vct_solve_reply(w, &after, &(vct_limits_t){.nodes = 2000}, NULL), VCT_WIN);
    vct_clear(w);
    for (int quiet = 0; quiet < 2; quiet++) {
        mcts_params_t p = params_mem((size_t)16 << 20);
        p.vct_root_nodes = p.vct_defend_nodes = 0;
        p.vct_watch_nodes = 2000;
        p.vct_watch_quiet_nodes = quiet ? 5000 : 0;
        mcts_t *t = tree_of(&p);
        mcts_result_t r;
        mcts_child_info_t c = watched_search(t, &b, quiet ? 600 : 150, w, favour, bad, &r);
        if (quiet) {
            ck_assert_int_ne(r.best_move, bad);
            ck_assert_int_eq(c.proven, -1);
            ck_assert_uint_ge(mcts_vct_wins(t), 1);
        } else {
            ck_assert_int_eq(r.best_move, bad);
            ck_assert_int_eq(c.proven, 0);
        }
        mcts_free(t);
    }
    vct_free(w);
}
END_TEST

/* Every root child of t is a move of def[0..nd) or a proven loss; the
 * best move is one of def. How many were proven losses. */
static int children_defend(const mcts_t *t, const int *def, int nd, int best)
{
    mcts_child_info_t ch[BOARD_CELLS];
    int n = mcts_root_children(t, ch, BOARD_CELLS), lost = 0;
    ck_assert_int_ge(n, 1);
    for (int i = 0; i < n; i++) {
        int j = 0;
        while (j < nd && def[j] != ch[i].move)
            j++;
        ck_assert_msg(j < nd || ch[i].proven == -1, "root child %d is no refutation", ch[i].move);
        lost += j == nd;
    }
    int j = 0;
    while (j < nd && def[j] != best)
        j++;
    ck_assert_msg(j < nd, "best move %d is no refutation", best);
    return lost;
}

/* mcts_restrict_root on a searched root: the favoured move, refuted by
 * the opponent's VCT, keeps its visits but becomes a proven loss; the
 * defences keep theirs; the search goes on among the defences only, and
 * gives the refuted move no further visit: select_edge values a proven
 * child by its proof (-1 here), not by the average of its earlier visits
 * (0 here, where its prior of 0.7 would keep drawing visits to it). */
START_TEST(test_restrict_root)
{
    refuted_t x;
    mcts_t *t = favoured_searched(&x);
    uint32_t n0 = mcts_root_n(t);
    ck_assert(mcts_restrict_root(t, x.def, x.nd));
    ck_assert_uint_eq(mcts_root_n(t), n0);   /* the tree is kept */
    int got[BOARD_CELLS];
    ck_assert_int_eq(mcts_root_filter(t, got), x.nd);
    ck_assert_int_ne(mcts_pick_move(t, 0.0), x.bad);
    uint32_t bad_n, bad_after;
    child_q(t, x.bad, &bad_n);
    mcts_limits_t sl = {.visits = 400};
    mcts_result_t r;
    mcts_search(t, eval_favour, x.favour, &sl, &r);
    child_q(t, x.bad, &bad_after);
    ck_assert_uint_eq(bad_after, bad_n);
    ck_assert_int_ge(children_defend(t, x.def, x.nd, r.best_move), 1);
    ck_assert_int_eq(r.best_move, x.def[0]);   /* the evaluator's second favourite */
    /* moves none of which is a root move change nothing */
    int none[1] = {board_xy(&x.b, 0, 0)};   /* a white stone */
    ck_assert(!mcts_restrict_root(t, none, 1));
    ck_assert_int_eq(mcts_root_filter(t, got), x.nd);
    mcts_free(t);
    vct_free(x.v);
}
END_TEST

/* The root's VCT and defence beside a timed search, on the watcher's
 * solver (one and two search threads): facing black's VCT, white ends up
 * searching the refutations alone (those a cold solver finds with the
 * same budget), the moves searched before the defence was known proven
 * losses; black to move proves its win through the watcher, which stops
 * the search short of its visit target. The searches last seconds (2 ms
 * an evaluation), far longer than the solves here, and the tree cannot
 * prove black's win itself (no VCF checks, no threat pruning), so the
 * results do not hang on the machine's speed. */
START_TEST(test_watch_root)
{
    refuted_t x;
    refuted_setup(&x);
    char err[128];
    vct_t *w = vct_create((size_t)16 << 20, err, sizeof err);
    ck_assert_msg(w != NULL, "%s", err);
    x.p.vct_root_nodes = 20000;
    x.p.vct_defend_nodes = 20000;
    x.p.vct_watch_nodes = 200000;
    vct_limits_t dl = {.nodes = x.p.vct_defend_nodes};
    int def[BOARD_CELLS];
    int nd = vct_defend(w, &x.b, &dl, def, NULL);
    ck_assert_int_gt(nd, 0);
    mcts_eval_fn fn[2] = {eval_favour_slow, eval_favour_slow};
    void *user[2] = {x.favour, x.favour};
    mcts_result_t r;
    for (int threads = 1; threads <= 2; threads++) {
        vct_clear(w);   /* the watcher's solve as cold as the one above */
        mcts_t *t = tree_of(&x.p);
        mcts_set_root(t, &x.b);
        mcts_limits_t sl = {.visits = 1500 * (unsigned)threads, .time_ms = 600000.0, .watch = w};
        mcts_search_threads(t, threads, fn, user, &sl, &r);
        ck_assert_uint_eq(mcts_vct_defences(t), 1);
        children_defend(t, def, nd, r.best_move);
        mcts_free(t);
    }
    board_t b;
    setup(&b, 15, RULE_FREESTYLE, vct_bl, 4, vct_wh, 4);
    x.p.vcf_nodes = x.p.vcf_root_nodes = 0;
    x.p.threat_prune = false;
    mcts_t *t = tree_of(&x.p);
    mcts_set_root(t, &b);
    mcts_limits_t sl = {.visits = 20000, .time_ms = 600000.0, .watch = w};
    mcts_search_threads(t, 2, fn, user, &sl, &r);
    assert_vct_proof(t, &b, &r);
    ck_assert_uint_lt(mcts_root_n(t), 20000);
    mcts_free(t);
    vct_free(w);
    vct_free(x.v);
}
END_TEST

/* The position of a game lost to PentaZen (2026-12-03, seed 14, game 2)
 * one point right and down of where it was played (the .psq's 1-based
 * points read as 0-based; in freestyle, with every stone at least five
 * points from each edge in both, much the same position), white to move after 9 plies, facing black's 9-threat VCT;
 * here 8,7 and 6,11 stop it, and after 5,8 (the move played) black's VCT
 * takes the solver about 30,000 nodes. Points below are of this copy.
 * Returns a solver of 32 MiB for the watcher. */
static vct_t *seed14_setup(board_t *b)
{
    const int bl[5][2] = {{10, 6}, {7, 9}, {10, 7}, {9, 8}, {6, 6}};
    const int wh[4][2] = {{8, 8}, {6, 7}, {6, 8}, {6, 9}};
    setup(b, 15, RULE_FREESTYLE, bl, 5, wh, 4);
    char err[128];
    vct_t *w = vct_create((size_t)32 << 20, err, sizeof err);
    ck_assert_msg(w != NULL, "%s", err);
    return w;
}

/* A watcher's check that the search's end cuts short leaves the move
 * unchecked, so the check at the end of a timed move (mcts_refute_best)
 * takes it up: before, such a move counted as checked, and the favourite
 * of a game lost to PentaZen (2026-12-03, seed 14, game 2: 6,7 there,
 * 7,8 in seed14_setup's copy) was played unrefuted after a check begun
 * 92 ms before the end. The check runs on the watcher's solver, as the
 * play layer's does. In seed14_setup's position, black's VCT after the favourite
 * 5,8 takes the watcher about 30,000 nodes (a few hundred ms); searches
 * of 8 ms to 4 s (2 ms an evaluation) end before, during and after that
 * solve, and whatever the machine's speed the favourite ends each one
 * refuted or open to the check. */
START_TEST(test_watch_cut_short)
{
    board_t b;
    vct_t *w = seed14_setup(&b);
    mcts_params_t p = params_mem((size_t)16 << 20);
    p.vct_root_nodes = p.vct_defend_nodes = 0;
    p.vct_watch_nodes = 100000;
    int favour[2] = {board_xy(&b, 5, 8), board_xy(&b, 8, 7)};   /* refuted; a defence */
    int cut = 0;
    for (unsigned visits = 4; visits <= 2048; visits *= 2) {
        vct_clear(w);   /* each solve cold */
        mcts_t *t = tree_of(&p);
        mcts_result_t r;
        if (watched_search(t, &b, visits, w, favour, favour[0], &r).proven != -1) {
            cut++;
            ck_assert_int_eq(mcts_refute_best(t, w, 200000, 0.0), favour[0]);   /* on the watcher's table */
        }
        mcts_free(t);
    }
    ck_assert_int_lt(cut, 10);   /* the longest search (4 s and more) sees the check through */
    vct_free(w);
}
END_TEST

/* The watcher checks the most visited root move before the root's
 * defence solves its candidates. A game lost to PentaZen (2026-12-03,
 * seed 14, game 2): white to move after 9 plies faces black's 9-threat
 * VCT; more than a hundred moves might stop it, and each round of the
 * defence solves them all (the 20,000 nodes of the first are too few for
 * 5,8, the favourite, and the 80,000 of the second take a minute here).
 * Black's VCT after 5,8 takes about 30,000 nodes, so the watcher's own
 * check (100,000) refutes it within a second. Before, the rounds came
 * first and the search played 5,8. The search lasts seconds (2 ms an
 * evaluation, 3,000 of them). */
START_TEST(test_watch_before_defence)
{
    board_t b;
    vct_t *w = seed14_setup(&b);
    mcts_params_t p = params_mem((size_t)64 << 20);
    p.vct_root_nodes = 20000;
    p.vct_defend_nodes = 20000;
    p.vct_watch_nodes = 100000;
    int favour[2] = {board_xy(&b, 5, 8), board_xy(&b, 8, 7)};   /* refuted; a defence */
    mcts_t *t = tree_of(&p);
    mcts_result_t r;
    mcts_child_info_t c = watched_search(t, &b, 3000, w, favour, favour[0], &r);
    ck_assert_uint_eq(mcts_vct_defences(t), 1);   /* the root's defence began */
    ck_assert_int_eq(c.proven, -1);
    ck_assert_int_ne(r.best_move, favour[0]);
    mcts_free(t);
    vct_free(w);
}
END_TEST

/* Threat pruning: facing an open three, the children are the moves that
 * stop it (and own fours), none of which leaves a winning four. */
START_TEST(test_threat_pruning)
{
    const int bl[3][2] = {{5, 7}, {6, 7}, {7, 7}};
    const int wh[2][2] = {{0, 0}, {14, 14}};
    board_t b;
    setup(&b, 15, RULE_FREESTYLE, bl, 3, wh, 2);
    mcts_params_t p = params_mem((size_t)16 << 20);
    p.vct_root_nodes = p.vct_defend_nodes = 0;
    mcts_t *t = tree_of(&p);
    mcts_set_root(t, &b);
    mcts_result_t r;
    mcts_child_info_t ch[BOARD_CELLS];
    int n = search_children(t, 100, &r, ch);
    ck_assert_int_ge(n, 2);
    ck_assert_int_le(n, 4);
    for (int i = 0; i < n; i++) {
        board_t a = b;
        ck_assert_int_eq(board_play(&a, ch[i].move), MOVE_OK);
        ck_assert_int_eq(board_play(&a, board_xy(&a, 8, 7)) == MOVE_OK &&
                         board_play(&a, board_xy(&a, 0, 1)) == MOVE_OK &&
                         board_five_points(&a, STONE_BLACK, (int[BOARD_CELLS]){0}) >= 2, 0);
    }
    mcts_free(t);
    p.threat_prune = false;
    t = tree_of(&p);
    mcts_set_root(t, &b);
    ck_assert_int_eq(search_children(t, 100, &r, ch), 225 - 5);
    mcts_free(t);
}
END_TEST

/* bench mcts from middle games: positions the tree proves at once are
 * replaced, so every figure is a real rate (none 0, no NaN ratio). */
START_TEST(test_bench_middle_games)
{
    char out[4096];
    ck_assert_int_eq(run_gomoku("bench mcts --stones 20 --visits 300 --runs 3 --vcf-nodes 50",
                                NULL, CAPTURE_OUT, out, sizeof out), 0);
    double pps = 0, pmin = 0, ratio = 0;
    int skipped = -1;
    const char *p = strstr(out, "\"playouts_per_s\":"), *q = strstr(out, "\"playouts_per_s_min\":");
    const char *v = strstr(out, "\"vcf_ratio\":"), *k = strstr(out, "\"skipped_decided\":");
    ck_assert_msg(p && q && v && k, "%s", out);
    ck_assert(sscanf(p, "\"playouts_per_s\":%lf", &pps) == 1 && pps > 0);
    ck_assert(sscanf(q, "\"playouts_per_s_min\":%lf", &pmin) == 1 && pmin > 0);
    ck_assert_msg(sscanf(v, "\"vcf_ratio\":%lf", &ratio) == 1 && isfinite(ratio) && ratio > 0,
                  "%s", out);
    ck_assert(sscanf(k, "\"skipped_decided\":%d", &skipped) == 1 && skipped >= 0);
}
END_TEST

/* select_lcb's scenario on 7x7: the root's prior favours A (9 to 1 over
 * B). A's subtree looks good (+0.3 for the root's side) for its first
 * `good` evaluations, then its refutation is found (-0.9); B is level (0).
 * A keeps the most visits, B the better value. */
typedef struct lcb_eval {
    int a, b, good, a_evals;
    float pb;   /* B's prior (A's is 1 - pb) */
} lcb_eval_t;

static void lcb_eval(void *user, const board_t *const *boards, int n, float *policy, float *value)
{
    lcb_eval_t *e = user;
    for (int i = 0; i < n; i++) {
        const board_t *bd = boards[i];
        float *row = policy + (size_t)i * BOARD_CELLS;
        memset(row, 0, BOARD_CELLS * sizeof *row);
        float r = 0.0f;   /* the root side's (black's) view */
        if (bd->nmoves == 0) {
            row[e->a] = 1.0f - e->pb;
            row[e->b] = e->pb;
        } else {
            for (int p = 0; p < board_npoints(bd); p++)
                row[p] = bd->cells[p] == STONE_EMPTY ? 1.0f : 0.0f;
            if (bd->moves[0] == e->a)
                r = e->a_evals++ < e->good ? 0.3f : -0.9f;
        }
        value[i] = bd->to_move == STONE_BLACK ? r : -r;
    }
}

/* A 7x7 tree searched 600 visits under lcb_eval with select_lcb k; the
 * caller frees it. */
static mcts_t *lcb_search(float k, int good, float pb, board_t *b, int *a, int *bb)
{
    mcts_params_t p = params_mem((size_t)16 << 20);
    p.select_lcb = k;
    p.vcf_nodes = p.vcf_root_nodes = p.vct_root_nodes = p.vct_defend_nodes = 0;
    mcts_t *t = tree_of(&p);
    board_init(b, 7, RULE_FREESTYLE);
    *a = board_xy(b, 3, 3);
    *bb = board_xy(b, 1, 1);
    lcb_eval_t e = {.a = *a, .b = *bb, .good = good, .pb = pb};
    mcts_set_root(t, b);
    mcts_limits_t lim = {.visits = 600};
    mcts_result_t r;
    mcts_search(t, lcb_eval, &e, &lim, &r);
    ck_assert_int_eq(r.best_move, mcts_pick_move(t, 0.0));
    return t;
}

START_TEST(test_select_lcb)
{
    int picked[2], a, bb;
    mcts_child_info_t ch[2][BOARD_CELLS];
    int nch[2];
    board_t b;
    for (int j = 0; j < 2; j++) {
        mcts_t *t = lcb_search(j ? 1.5f : 0.0f, 300, 0.1f, &b, &a, &bb);
        picked[j] = mcts_pick_move(t, 0.0);
        nch[j] = mcts_root_children(t, ch[j], BOARD_CELLS);
        mcts_rank_children(ch[j], nch[j]);
        ck_assert_int_eq(ch[j][0].move, picked[j]);   /* reports list the move played first */
        ck_assert(ch[j][0].chosen);
        mcts_free(t);
    }
    /* the same search both times: only the choice differs */
    ck_assert_int_eq(nch[0], nch[1]);
    uint32_t na = 0, nb = 0;
    float qa = 0, qb = 0;
    for (int i = 0; i < nch[1]; i++) {
        if (ch[1][i].move == a)
            na = ch[1][i].visits, qa = ch[1][i].q;
        if (ch[1][i].move == bb)
            nb = ch[1][i].visits, qb = ch[1][i].q;
    }
    ck_assert_msg(na > nb && qb > qa && nb >= SELECT_LCB_REACH * na,
                  "scenario: A %u visits q %.3f, B %u visits q %.3f", na, qa, nb, qb);
    ck_assert_msg(qb - 1.5 / sqrt(nb) > qa - 1.5 / sqrt(na), "B's bound is A's or lower");
    ck_assert_int_eq(picked[0], a);    /* the most visited */
    ck_assert_int_eq(picked[1], bb);   /* the better bound */

    /* A refuted late: B's better value on under a tenth of A's visits does
     * not count, even with a bound that hardly widens */
    mcts_t *t = lcb_search(0.01f, 420, 0.01f, &b, &a, &bb);
    nch[0] = mcts_root_children(t, ch[0], BOARD_CELLS);
    for (int i = 0; i < nch[0]; i++) {
        if (ch[0][i].move == a)
            na = ch[0][i].visits, qa = ch[0][i].q;
        if (ch[0][i].move == bb)
            nb = ch[0][i].visits, qb = ch[0][i].q;
    }
    ck_assert_msg(nb < SELECT_LCB_REACH * na && qb > qa,
                  "scenario: A %u visits q %.3f, B %u visits q %.3f", na, qa, nb, qb);
    ck_assert_int_eq(mcts_pick_move(t, 0.0), a);
    mcts_free(t);
}
END_TEST

/* mcts_create refuses p, and its message names `why`. */
static void expect_refused(const mcts_params_t *p, const char *why)
{
    char err[256];
    ck_assert_ptr_null(mcts_create(p, err, sizeof err));
    ck_assert_msg(strstr(err, why) != NULL, "%s", err);
}

/* The float field at offset `off` of mcts_params_t, a share: -0.1, 1.5
 * and NaN are each refused, and the message names `why`. */
static void expect_share_refused(size_t off, const char *why)
{
    const float bad[] = {-0.1f, 1.5f, NAN};
    for (int i = 0; i < 3; i++) {
        mcts_params_t p = params_mem((size_t)8 << 20);
        memcpy((char *)&p + off, &bad[i], sizeof bad[i]);
        expect_refused(&p, why);
    }
}

/* pattern_prior: the root's net prior all on a quiet corner; each side has
 * two in a row, so some points make a three (for the side to move) or take
 * one from the opponent. With a share of 0.25, the corner keeps 0.75, the
 * pattern points share the rest, every other point gets nothing, and a
 * point making an open three outweighs one making a closed three. With 0,
 * or on a board where no point makes a three, the net's prior stands. */
START_TEST(test_pattern_prior)
{
    static const int black[][2] = {{3, 10}, {4, 10}}, white[][2] = {{7, 7}, {8, 7}};
    for (int variant = 0; variant < 3; variant++) {
        mcts_params_t p = params_mem((size_t)8 << 20);
        p.pattern_prior = variant == 0 ? 0.0f : 0.25f;
        mcts_t *t = tree_of(&p);
        board_t b;
        if (variant == 2)
            board_init(&b, 15, RULE_FREESTYLE);
        else
            setup(&b, 15, RULE_FREESTYLE, black, 2, white, 2);
        mcts_set_root(t, &b);
        int corner = board_xy(&b, 14, 0);
        float one = 1.0f;
        ck_assert_int_eq(deliver_one(t, &corner, &one, 1, 0.0f), b.last);   /* the root */
        uint8_t own[BOARD_CELLS], opp[BOARD_CELLS];
        board_threat_map(&b, STONE_BLACK, own);
        board_threat_map(&b, STONE_WHITE, opp);
        mcts_child_info_t c[BOARD_CELLS];
        int n = mcts_root_children(t, c, BOARD_CELLS);
        ck_assert_int_eq(n, board_npoints(&b) - b.nmoves);
        double pattern_mass = 0.0, corner_prior = -1.0;
        int npattern = 0;
        for (int i = 0; i < n; i++) {
            int m = c[i].move;
            bool pat = own[m] >= THREAT_THREE || opp[m] >= THREAT_THREE;
            if (m == corner)
                corner_prior = c[i].prior;
            else if (pat && variant == 1)
                ck_assert_msg(c[i].prior > 0.0, "pattern point %d got no prior", m);
            else
                ck_assert_msg(c[i].prior == 0.0, "point %d: prior %g", m, c[i].prior);
            if (pat) {
                pattern_mass += c[i].prior;
                npattern++;
            }
        }
        ck_assert_int_eq(npattern > 0, variant != 2);
        ck_assert_double_eq_tol(corner_prior, variant == 1 ? 0.75 : 1.0, 1e-3);
        ck_assert_double_eq_tol(pattern_mass, variant == 1 ? 0.25 : 0.0, 1e-3);
        if (variant == 1) {   /* black's open three point beside its two outweighs a closed one */
            double open = -1.0, closed = -1.0;
            for (int i = 0; i < n; i++) {
                if (own[c[i].move] == THREAT_OPEN_THREE && opp[c[i].move] == THREAT_NONE)
                    open = c[i].prior;
                if (own[c[i].move] == THREAT_THREE && opp[c[i].move] == THREAT_NONE)
                    closed = c[i].prior;
            }
            ck_assert_msg(open > 0.0 && (closed < 0.0 || open > closed), "open %g closed %g",
                          open, closed);
        }
        mcts_free(t);
    }
    expect_share_refused(offsetof(mcts_params_t, pattern_prior), "0 <= pattern_prior <= 1");
}
END_TEST

/* policy_temp: the root's net policy 0.64 / 0.32 / 0.04 on three points.
 * At T = 2 the priors are the square roots, normalised: 0.8 : 0.566 : 0.2
 * (0.51, 0.36, 0.13), so the weak move gains; at T = 1 the policy stands;
 * at T = 0.5 it sharpens (the squares). The next playouts follow: at T = 2
 * the weak move is visited within 40 playouts of a value-0 evaluator, at
 * T = 1 it is visited less. A temperature outside 0.1..10 (or NaN) is
 * refused with the reason. */
START_TEST(test_policy_temp)
{
    static const float pol[3] = {0.64f, 0.32f, 0.04f};
    const float temps[3] = {1.0f, 2.0f, 0.5f};
    uint32_t weak_visits[3];
    for (int v = 0; v < 3; v++) {
        mcts_params_t p = params_mem((size_t)8 << 20);
        p.policy_temp = temps[v];
        mcts_t *t = tree_of(&p);
        board_t b;
        board_init(&b, 15, RULE_FREESTYLE);
        mcts_set_root(t, &b);
        int m[3] = {board_xy(&b, 7, 7), board_xy(&b, 3, 3), board_xy(&b, 11, 4)};
        ck_assert_int_eq(deliver_one(t, m, pol, 3, 0.0f), b.last);
        double want[3], wsum = 0.0;
        for (int i = 0; i < 3; i++)
            wsum += want[i] = pow(pol[i], 1.0 / temps[v]);
        mcts_child_info_t c[BOARD_CELLS];
        int n = mcts_root_children(t, c, BOARD_CELLS);
        for (int i = 0; i < n; i++) {
            int k = 0;
            while (k < 3 && m[k] != c[i].move)
                k++;
            double expect = k < 3 ? want[k] / wsum : 0.0;
            ck_assert_msg(fabs(c[i].prior - expect) < 1e-3, "T %g move %d: prior %g, want %g",
                          temps[v], c[i].move, c[i].prior, expect);
        }
        for (int i = 0; i < 40; i++)
            deliver_one(t, m, pol, 3, 0.0f);
        child_q(t, m[2], &weak_visits[v]);
        mcts_free(t);
    }
    ck_assert_msg(weak_visits[1] > weak_visits[0] && weak_visits[0] >= weak_visits[2],
                  "weak move's visits: T 1 %u, T 2 %u, T 0.5 %u", weak_visits[0], weak_visits[1],
                  weak_visits[2]);
    ck_assert_uint_gt(weak_visits[1], 0);
    const float bad[] = {0.05f, 11.0f, 0.0f, NAN};
    for (int i = 0; i < 4; i++) {
        mcts_params_t p = params_mem((size_t)8 << 20);
        p.policy_temp = bad[i];
        expect_refused(&p, "0.1 <= policy_temp <= 10");
    }
}
END_TEST

/* minimax_mix, step by step on a 7x7 board (no threat searches, c_puct
 * 0.01 so that the choice goes by Q): the root (value -0.3 for black)
 * has priors A 0.6, B 0.4. A looks good for black (+0.5), and so does
 * white's reply R1 below it (+0.5), but black's only reply S1 below that
 * loses (white +0.9). Means then: A +0.033 for black, the root -0.05
 * (B's first-play urgency). Without the mix the search goes on under A
 * (to a black reply beside S1); with 0.5, A's minimax (-0.9) makes its Q
 * -0.43 and the search turns to B. Then a full search under lcb_eval (A
 * refuted after 60 evaluations): the mix gives A fewer visits. Values
 * outside 0..1 are refused. */
START_TEST(test_minimax_mix)
{
    int last[2];
    board_t b;
    board_init(&b, 7, RULE_FREESTYLE);
    int a = board_xy(&b, 3, 3), bb = board_xy(&b, 1, 1), r1 = board_xy(&b, 4, 4),
        r2 = board_xy(&b, 2, 2), s1 = board_xy(&b, 5, 5), t1 = board_xy(&b, 0, 6);
    for (int j = 0; j < 2; j++) {
        mcts_params_t p = params_mem((size_t)8 << 20);
        p.minimax_mix = j ? 0.5f : 0.0f;
        p.c_puct = 0.01f;
        p.vcf_nodes = p.vcf_root_nodes = p.vct_root_nodes = p.vct_defend_nodes = 0;
        mcts_t *t = tree_of(&p);
        mcts_set_root(t, &b);
        const int root_m[2] = {a, bb}, a_m[2] = {r1, r2};
        const float root_p[2] = {0.6f, 0.4f}, a_p[2] = {0.9f, 0.1f}, one = 1.0f;
        ck_assert_int_eq(deliver_one(t, root_m, root_p, 2, -0.3f), b.last);
        ck_assert_int_eq(deliver_one(t, a_m, a_p, 2, -0.5f), a);     /* white's view */
        ck_assert_int_eq(deliver_one(t, &s1, &one, 1, 0.5f), r1);    /* black's */
        ck_assert_int_eq(deliver_one(t, &t1, &one, 1, 0.9f), s1);    /* white's */
        uint32_t n;
        ck_assert_float_eq_tol(child_q(t, a, &n), 0.1f / 3.0f, 1e-5f);   /* the mean */
        last[j] = deliver_one(t, &t1, &one, 1, 0.0f);
        mcts_free(t);
    }
    ck_assert_int_ne(last[0], bb);
    ck_assert_int_ne(last[0], t1);   /* not below S1: R1's other replies first */
    ck_assert_int_eq(last[1], bb);

    uint32_t visits_a[2];
    for (int j = 0; j < 2; j++) {
        mcts_params_t p = params_mem((size_t)16 << 20);
        p.minimax_mix = j ? 0.3f : 0.0f;
        p.vcf_nodes = p.vcf_root_nodes = p.vct_root_nodes = p.vct_defend_nodes = 0;
        mcts_t *t = tree_of(&p);
        board_t bd;
        board_init(&bd, 7, RULE_FREESTYLE);
        lcb_eval_t e = {.a = a, .b = bb, .good = 60, .pb = 0.1f};
        mcts_set_root(t, &bd);
        mcts_limits_t lim = {.visits = 600};
        mcts_result_t r;
        mcts_search(t, lcb_eval, &e, &lim, &r);
        ck_assert(!r.mem_full);
        child_q(t, a, &visits_a[j]);
        ck_assert(mcts_advance(t, a));   /* the kept subtree keeps its minimax */
        lim.visits = 200;
        mcts_search(t, lcb_eval, &e, &lim, &r);
        mcts_free(t);
    }
    ck_assert_msg(visits_a[1] < visits_a[0], "A's visits: mean %u, mix 0.3 %u", visits_a[0],
                  visits_a[1]);
    expect_share_refused(offsetof(mcts_params_t, minimax_mix), "0 <= minimax_mix <= 1");
}
END_TEST

/* The Gumbel root's evaluator: at the root, priors 0.4, 0.3, 0.2, 0.1 on
 * four points (none elsewhere); below it, uniform priors and a value that
 * is the first move's q[] for the root side (black). */
typedef struct gumbel_eval {
    int m[4];
    float q[4];
} gumbel_eval_t;

static void gumbel_eval(void *user, const board_t *const *boards, int n, float *policy,
                        float *value)
{
    const gumbel_eval_t *e = user;
    static const float prior[4] = {0.4f, 0.3f, 0.2f, 0.1f};
    for (int i = 0; i < n; i++) {
        const board_t *bd = boards[i];
        float *row = policy + (size_t)i * BOARD_CELLS, r = 0.0f;
        memset(row, 0, BOARD_CELLS * sizeof *row);
        for (int p = 0; p < board_npoints(bd); p++)
            row[p] = bd->nmoves == 0 ? 0.0f : bd->cells[p] == STONE_EMPTY ? 1.0f : 0.0f;
        for (int k = 0; k < 4; k++) {
            if (bd->nmoves == 0)
                row[e->m[k]] = prior[k];
            else if (bd->moves[0] == e->m[k])
                r = e->q[k];
        }
        value[i] = bd->to_move == STONE_BLACK ? r : -r;
    }
}

static uint32_t gumbel_visits(const mcts_t *t, int move)
{
    uint32_t n = 0;
    child_q(t, move, &n);
    return n;
}

/* t: gumbel_m 4 and c_scale `scale` (the rest as params_mem, no threat
 * search) searched 17 visits from b under e; its policy target's counts
 * by e's moves into c[]. The caller frees t. */
static mcts_t *gumbel_search(float scale, const board_t *b, gumbel_eval_t *e, uint32_t *c)
{
    mcts_params_t p = params_mem((size_t)16 << 20);
    p.vcf_nodes = p.vcf_root_nodes = p.vct_root_nodes = p.vct_defend_nodes = 0;
    p.gumbel_m = 4;
    p.gumbel_scale = scale;
    mcts_t *t = tree_of(&p);
    mcts_set_root(t, b);
    mcts_limits_t lim = {.visits = 17};
    mcts_result_t r;
    mcts_search(t, gumbel_eval, e, &lim, &r);
    record_visit_t rv[BOARD_CELLS];
    int n = mcts_root_policy_visits(t, rv, BOARD_CELLS);
    for (int k = 0; k < 4; k++) {
        c[k] = 0;
        for (int i = 0; i < n; i++)
            if (rv[i].move == e->m[k])
                c[k] = rv[i].count;
    }
    ck_assert_int_eq(n, 4);   /* the moves of no prior are left out */
    return t;
}

/* gumbel_m 4 over the evaluator's four moves A..D (priors 0.4..0.1, values
 * -0.1, 0.2, 0.1, 0), 17 visits: the root's own, then 16 by sequential
 * halving in 2 phases of 8: 2 each, then the better two by log prior +
 * sigma(Q) (B and C: at c_scale 1 sigma's factor is 52, so a tenth of
 * value is worth 2.6 in the score, more than the priors' log ratios) 4
 * more each. The move is B, the policy target ranks B, C, D, A (A's prior
 * does not save its value) and its largest count is 65535. At the default
 * c_scale the target is softer: C's share is larger. With PUCT the same
 * search gives A more visits. */
START_TEST(test_gumbel)
{
    board_t b;
    board_init(&b, 7, RULE_FREESTYLE);
    gumbel_eval_t e = {.m = {board_xy(&b, 3, 3), board_xy(&b, 1, 1), board_xy(&b, 5, 5),
                             board_xy(&b, 1, 5)},
                       .q = {-0.1f, 0.2f, 0.1f, 0.0f}};
    uint32_t c[4], soft[4];
    mcts_free(gumbel_search((float)MCTS_GUMBEL_SCALE, &b, &e, soft));
    mcts_t *t = gumbel_search(1.0f, &b, &e, c);
    const uint32_t want[4] = {2, 6, 6, 2};
    for (int k = 0; k < 4; k++)
        ck_assert_uint_eq(gumbel_visits(t, e.m[k]), want[k]);
    ck_assert_int_eq(mcts_pick_move(t, 1.0), e.m[1]);   /* the temperature is not read */
    ck_assert_uint_eq(c[1], 65535);
    ck_assert(c[1] > c[2] && c[2] > c[3] && c[3] > c[0] && c[0] > 0);
    ck_assert_uint_eq(soft[1], 65535);
    ck_assert_uint_gt(soft[2], c[2]);

    mcts_limits_t lim;
    mcts_result_t r;
    /* a kept subtree: the next search draws for its own root */
    ck_assert(mcts_advance(t, e.m[1]));
    lim = (mcts_limits_t){.visits = 12};
    mcts_search(t, gumbel_eval, &e, &lim, &r);
    ck_assert_uint_eq(mcts_root_n(t), 12);
    mcts_free(t);

    mcts_params_t p = params_mem((size_t)16 << 20);
    p.vcf_nodes = p.vcf_root_nodes = p.vct_root_nodes = p.vct_defend_nodes = 0;
    t = tree_of(&p);   /* PUCT: the prior's favourite gets visits too */
    mcts_set_root(t, &b);
    lim.visits = 17;
    mcts_search(t, gumbel_eval, &e, &lim, &r);
    ck_assert_uint_gt(gumbel_visits(t, e.m[0]), want[0]);
    mcts_free(t);

    /* the draw's noise: two candidates; without it always A and B, with
     * it other pairs too (the same seed, the same pair) */
    int other = 0;
    for (uint64_t seed = 1; seed <= 40; seed++)
        for (int noise = 0; noise < 2; noise++) {
            p.gumbel_m = 2;
            p.seed = seed;
            t = tree_of(&p);
            mcts_gumbel_noise(t, noise);
            mcts_set_root(t, &b);
            lim.visits = 9;
            mcts_search(t, gumbel_eval, &e, &lim, &r);
            uint32_t na = gumbel_visits(t, e.m[0]), nb = 0;
            mcts_child_info_t ch[BOARD_CELLS];
            int k = mcts_root_children(t, ch, BOARD_CELLS);
            for (int i = 0; i < k; i++)
                nb += ch[i].move == e.m[1] ? ch[i].visits : 0;
            if (!noise)
                ck_assert_uint_eq(na + nb, 8);
            else
                other += na + nb < 8;
            mcts_free(t);
        }
    ck_assert_int_gt(other, 0);

    p = params_mem((size_t)8 << 20);
    p.gumbel_m = MCTS_GUMBEL_M_MAX + 1;
    expect_refused(&p, "0 <= gumbel_m <= 64");
    p.gumbel_m = -1;
    expect_refused(&p, "0 <= gumbel_m <= 64");
    p.gumbel_m = 4;
    p.gumbel_scale = 0.0f;
    expect_refused(&p, "bad search parameter: gumbel_scale 0");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("mcts");
    ADD_CASE(s, "search", 30, test_puct_by_hand, test_visits_add_up, test_takes_win,
             test_threads_one_tree, test_threads_deferred_leaves, test_blocks_closed_four,
             test_blocks_open_four, test_finds_open_four, test_vcf_root_proven, test_vcf_reused_root,
             test_vcf_forced_block_proven_loss, test_terminal_exact, test_same_seed_same_output,
             test_tree_reuse, test_forced_off_identical, test_forced_playouts_happen,
             test_forced_pruned_from_target, test_probe_transposition, test_renju_forbidden_not_searched,
             test_time_and_stop, test_model_player, test_root_filter, test_root_prove_win,
             test_vct_root_proven, test_vct_leaf_depth, test_proven_loss_propagates, test_vct_root_defence, test_refute_best, test_watch, test_watch_quiet, test_restrict_root, test_watch_root, test_watch_before_defence, test_watch_cut_short, test_refute_quiet,
             test_threat_pruning, test_select_lcb, test_pattern_prior, test_policy_temp,
             test_minimax_mix, test_gumbel, test_set_root_policy);
    ADD_CASE(s, "bf16", 240, test_bf16_player_agrees);
    ADD_CASE(s, "bench", 60, test_bench_middle_games);
    return run_suite(s);
}
