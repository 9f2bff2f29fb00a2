/* Monte-Carlo tree search: PUCT with first-play-urgency reduction,
 * Dirichlet noise at the root, tree reuse between moves, exact values at
 * terminal positions, and a two-phase (gather / deliver) interface so that
 * a caller can batch the leaves of many trees into one NN call. The search
 * sees positions and an evaluation function only (mcts_eval_fn, and an
 * optional mcts_probe_fn for an evaluator's cache); the net, its encoding
 * and its cache live in nn/eval.h.
 *
 * Points of view: every value in this API is in [-1, 1] and is from the
 * point of view of the side to move of the position it belongs to
 * (+1: that side wins). Inside the tree a node's sum is kept from the
 * point of view of the player who made the move into the node, so that a
 * parent can compare its children directly.
 *
 * Visit counts: every playout adds one visit to each node on its path,
 * the leaf included. A node's first visit is its own evaluation, so for
 * an expanded node  n = 1 + sum of its children's n  (a terminal or
 * proven node absorbs its visits: it has no children to pass them on).
 * The root keeps this identity across tree reuse.
 *
 * Tactics the search knows without the net (so it plays sane moves even
 * with the uniform evaluator): a position where the side to move can make
 * five is a proven win whose only child is that move; one where the
 * opponent threatens five at one point has that block as its only child;
 * at two or more points it is a proven loss (children: the blocks).
 * With vcf_nodes / vcf_root_nodes set, a position where the side to move
 * has a VCF found within that budget is a proven win whose only child is
 * the line's first move (the root's check also runs on a reused root),
 * and a node whose every move leads into a proven win is a proven loss:
 * so forced wins and losses are exact values in the tree, and in
 * mcts_root_value (self-play records it per move). The threat search
 * (engine/vct.h) adds: a VCT at the root (vct_root_nodes, and a share of
 * a timed search) that proves the root; the root's defence against the
 * opponent's VCT (vct_defend_nodes: the root is searched among its
 * refutations only, as mcts_set_root_filter does; a timed search with a
 * watcher runs both beside its search threads and restricts the root in
 * place, mcts_restrict_root); threat pruning at every
 * node (facing a three and no four, only the moves that stop it and own
 * fours; none: a proven loss); and an optional VCT check at new leaves (vct_nodes).
 *
 * Memory: nodes and edges (move, prior, child) come from two fixed arenas
 * made by mcts_create; nothing is allocated while searching. Tree reuse
 * keeps the subtree under the played move and compacts it into the spare
 * arena when the live one runs low (mcts_tree_bytes says how much a search
 * of N visits needs). When the arena is full a search stops early
 * (mcts_result_t.mem_full).
 *
 * Threads: one thread drives a tree; mcts_search_threads runs several
 * search threads on it (it starts and joins them itself). Different trees
 * are independent. */
#ifndef GZ_MCTS_H
#define GZ_MCTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/board.h"
#include "engine/record.h"
#include "engine/vct.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Batched evaluator. For i < n: value[i] in [-1,1] for the side to move
 * of boards[i]; policy[i * BOARD_CELLS + p] a non-negative prior for point
 * p (p < size*size; any scale, illegal points are ignored, all-zero means
 * uniform). Must not keep the board pointers after returning. */
typedef void (*mcts_eval_fn)(void *user, const board_t *const *boards, int n, float *policy,
                             float *value);

/* Zero-cost evaluator for tests and benchmarks: uniform priors, value 0. */
void mcts_eval_uniform(void *user, const board_t *const *boards, int n, float *policy,
                       float *value);

/* An evaluator that may know a position already (its cache): true with
 * one row of policy (BOARD_CELLS floats, as for mcts_eval_fn) and *value
 * for b, or false with nothing written. The tree calls it while selecting
 * a leaf (under its lock when several threads search it), so a known
 * position is expanded at once and costs no batch slot. */
typedef bool (*mcts_probe_fn)(void *user, const board_t *b, float *policy, float *value);

typedef struct mcts_params {
    float c_puct;          /* exploration: Q + c_puct * P * sqrt(N) / (1 + n) */
    float fpu_reduction;   /* unvisited child Q = parent Q - r * sqrt(visited prior mass) */
    float fpu_root;        /* the same at the root (self-play with noise: 0 is usual) */
    int max_pending;       /* leaves in flight per gather (virtual loss), >= 1 */
    size_t mem_bytes;      /* node + edge arenas, both halves together */
    uint64_t seed;         /* noise and sampling */
    uint32_t vcf_nodes;    /* VCF check (engine/vcf.h) at each new leaf: solver node budget, 0: off */
    uint32_t vcf_root_nodes; /* the same once per root (deeper), 0: off */
    size_t vcf_tt_bytes;   /* the tree's VCF solver table (made only when a budget is set) */
    uint32_t vct_nodes;    /* VCT check (engine/vct.h) at each new leaf (not the root) that
                            * faces no four: solver node budget, 0: off */
    int vct_depth;         /* that check's threats at most, 1..VCT_MAX_DEPTH (0: all): a
                            * shallow check finds the doubles (four-three, three-three) and
                            * short lines for a fraction of a deep one's cost */
    uint32_t vct_root_nodes; /* the root's VCT: node budget (0: off); a time-limited search
                            * also gives it vct_root_share of its time */
    uint32_t vct_defend_nodes; /* the root's defence against the opponent's VCT: the budget
                            * of each solve (0: off); the root is then searched among the
                            * refutations found only */
    float vct_root_share;  /* of a time-limited search's time: the root's VCT */
    float vct_defend_share; /* of a time-limited search's time: the root's defence (and
                            * what the VCT left of its share) */
    uint32_t vct_verify_nodes; /* the play layer's check of the move it is about to play
                            * (mcts_refute_best): solver nodes (0: off) */
    float vct_verify_share; /* of a time-limited search's time: that check, at its end */
    uint32_t vct_quiet_nodes; /* that check also looks for the opponent's quiet win after
                            * the move (vct_quiet_win): nodes of each solve (0: off) */
    uint32_t vct_watch_nodes; /* a timed search given a solver of its own (mcts_limits_t.watch)
                            * runs it in a thread beside the search threads: the most visited
                            * root moves are checked against the opponent's VCT while the
                            * search runs, this many nodes each (0: off) */
    uint32_t vct_watch_quiet_nodes; /* that thread, once those checks are done, also looks
                            * after each of them for the opponent's quiet win among its
                            * replies of highest prior (vct_quiet_win_among): nodes of each
                            * solve (0: off) */
    size_t vct_tt_bytes;   /* the tree's VCT solver (made only when a VCT budget is set) */
    bool threat_prune;     /* facing the opponent's three (and no four), a node's children
                            * are only the moves that stop it and its own fours */
    float select_lcb;      /* the move played (and the line shown): 0 the most visited
                            * child; k > 0 among the children with at least
                            * SELECT_LCB_REACH of the most visited one's visits, the one
                            * whose value less k / sqrt(visits) is highest, so that a
                            * child whose value fell late (a refutation found deep in its
                            * subtree) gives way to one well searched and better */
    float pattern_prior;   /* the share of each node's prior mass given to its moves by
                            * their line patterns (the threes, fours and fives a stone
                            * there makes for the side to move or takes from the
                            * opponent), the net's policy keeping the rest; 0: off */
    float policy_temp;     /* the net's policy row raised to 1 / policy_temp before it
                            * becomes a node's priors (lc0's policy softmax temperature):
                            * above 1 flattens them, so that a move the net rates low
                            * gets visits sooner; 1: the net's policy as it is */
    float minimax_mix;     /* implicit minimax backups (Lanctot et al. 2014): each node
                            * also keeps the minimax of the net's values in its subtree,
                            * and a child's Q in selection is (1 - mix) * its mean value
                            * + mix * that minimax, so that a refutation found deep below
                            * a child lowers it at once; 0: the mean alone */
    int gumbel_m;          /* Gumbel AlphaZero's root (Danihelka et al. 2022), for self-play
                            * with a visit target: the search's playouts go by sequential
                            * halving to the gumbel_m root moves of highest log prior (+ a
                            * Gumbel draw, mcts_gumbel_noise); the move played is the
                            * one left with the highest draw + log prior + sigma(Q), and
                            * the policy target is softmax(log prior + sigma(completed
                            * Q)) over every root move (mcts_root_policy_visits), with
                            * sigma(q) = (MCTS_GUMBEL_C_VISIT + most child visits) *
                            * gumbel_scale * (q + 1) / 2; 0: PUCT at the root */
    float gumbel_scale;    /* the paper's c_scale (it used 1 with values in 0..1) */
    float forced_k;        /* forced playouts (KataGo): at a root with noise, a child with
                            * fewer than sqrt(k * P * total child visits) visits is selected
                            * first; 0: off (the search is then exactly plain PUCT) */
} mcts_params_t;

/* The defaults a user sees (the settings table prints them). */
#define MCTS_C_PUCT 1.5
#define MCTS_FPU 0.2
#define MCTS_FPU_ROOT 0
#define MCTS_VCF_NODES 200
#define MCTS_VCF_ROOT_NODES 5000

#define MCTS_VCT_ROOT_NODES 20000
#define MCTS_VCT_DEFEND_NODES 20000
#define MCTS_VCT_ROOT_SHARE 0.1
#define MCTS_VCT_DEFEND_SHARE 0.3
#define MCTS_VCT_VERIFY_NODES 50000
#define MCTS_VCT_VERIFY_SHARE 0.2
#define MCTS_VCT_QUIET_NODES 0   /* off: no gain measured at 1 s (docs/BENCHMARKS.md) */
#define MCTS_VCT_WATCH_NODES 100000
#define MCTS_VCT_WATCH_QUIET_NODES 0   /* off: no gain measured at 1 s (docs/BENCHMARKS.md) */
#define MCTS_SELECT_LCB 0   /* off: no gain measured at 1 s (docs/BENCHMARKS.md) */
#define MCTS_POLICY_TEMP 1   /* the policy as it is: no measured gain at 1.5 (docs/BENCHMARKS.md) */
#define MCTS_POLICY_TEMP_MIN 0.1
#define MCTS_MINIMAX_MIX 0   /* the mean value alone */
#define MCTS_POLICY_TEMP_MAX 10
#define MCTS_PATTERN_PRIOR 0   /* off: no significant gain at 1 s over 240 games (docs/BENCHMARKS.md) */
#define SELECT_LCB_REACH 0.1   /* of the most visited child's visits */
#define MCTS_GUMBEL_M_MAX 64   /* candidates of the Gumbel root at most */
#define MCTS_GUMBEL_C_VISIT 50.0   /* the paper's c_visit */
/* c_scale: 0.3 gave targets closer to a deep search's than 1 (softer for
 * the same best move; docs/BENCHMARKS.md) */
#define MCTS_GUMBEL_SCALE 0.3
#define MCTS_GUMBEL_SCALE_MAX 10
/* The tree's VCT solver: room for the budgets above (its proof-number
 * search keeps every child it makes, tens per expanded node: a solver of
 * 1 MiB ran out of room after a few thousand nodes). */
#define MCTS_VCT_TT_BYTES ((size_t)32 << 20)

/* c MCTS_C_PUCT, fpu MCTS_FPU / MCTS_FPU_ROOT, 8 pending, 64 MiB, VCF
 * MCTS_VCF_NODES per leaf and MCTS_VCF_ROOT_NODES at the root, 256 KiB VCF
 * table, VCT off at leaves, MCTS_VCT_ROOT_NODES at the root (and
 * MCTS_VCT_ROOT_SHARE of a timed search), defence solves of
 * MCTS_VCT_DEFEND_NODES (and MCTS_VCT_DEFEND_SHARE of a timed search), a check of the
 * move a timed search picks (MCTS_VCT_VERIFY_NODES, MCTS_VCT_VERIFY_SHARE), a
 * MCTS_VCT_TT_BYTES VCT solver, threat pruning on, forced
 * playouts off. */
void mcts_params_default(mcts_params_t *p);

typedef struct mcts mcts_t;

/* mem_bytes for a tree whose searches reach `visits` root visits on a
 * size x size board, with tree reuse between moves (the kept subtree and a
 * new search fit in one arena). At least 1 MiB. */
size_t mcts_tree_bytes(uint32_t visits, int size);

/* NULL with err on bad params or no memory. The root starts as an empty
 * 15x15 freestyle board: call mcts_set_root. */
mcts_t *mcts_create(const mcts_params_t *p, char *err, size_t errlen);
void mcts_free(mcts_t *t);
/* Consult probe(user, ...) for every new leaf from now on (NULL: none);
 * user is borrowed. With several search threads the probe must be safe
 * to call from any of them while evaluations run in the others. */
void mcts_set_probe(mcts_t *t, mcts_probe_fn probe, void *user);
/* The root's VCT budget (mcts_params_t.vct_root_nodes) from the next
 * root's threat search on: self-play gives a cheap search a smaller one.
 * The tree's solver is made at create, for the budgets set then (with
 * none set there is no root VCT whatever this says). */
void mcts_set_vct_root_nodes(mcts_t *t, uint32_t nodes);

/* Start over from position b (the tree is dropped). */
void mcts_set_root(mcts_t *t, const board_t *b);
/* Same as set_root, but keeps the tree when b is the root or follows it by
 * one or two moves (tree reuse). Returns true when the tree was kept. */
bool mcts_sync_root(mcts_t *t, const board_t *b);
/* Play `move` at the root and keep its subtree. false (and nothing changes)
 * when move is not legal at the root. */
bool mcts_advance(mcts_t *t, int move);
const board_t *mcts_root_board(const mcts_t *t);

/* Start over from b (as mcts_set_root) with only moves[0..n) as the
 * root's children: the defences a threat solver found, or moves a caller
 * must avoid left out. Moves that are not legal are dropped; a filter that
 * leaves no legal move is ignored; a root that is lost anyway keeps its
 * one move. The filter lasts until the root changes (set_root, advance,
 * a sync that moves on); the root's VCT defence then narrows it to the
 * defences it allows (none: it stays as it is). mcts_root_filter writes
 * the allowed moves, ascending, and returns their count (0: no filter). */
void mcts_set_root_filter(mcts_t *t, const board_t *b, const int *moves, int n);
int mcts_root_filter(const mcts_t *t, int *moves);
/* The same filter on the root as it stands, its tree kept: the root's
 * other visited children become proven losses, its other unvisited moves
 * leave it. What a timed search's watcher does with the root's defence
 * against the opponent's VCT, found while the search runs. false (nothing
 * changed) when no root move is among moves[0..n) or the root is decided. */
bool mcts_restrict_root(mcts_t *t, const int *moves, int n);
/* Mark the root a proven win by `move` (a solver's line from outside the
 * tree, e.g. a VCT): the move's child becomes proven lost for the
 * opponent, so the search stops and picks it. false (nothing changes)
 * when move is not a legal root move or the arena is full. */
bool mcts_root_prove_win(mcts_t *t, int move);

/* The root's most visited move, checked once per root: when the opponent,
 * after it, has a VCT found within nodes and time_ms (0: none), or else
 * (vct_quiet_nodes) a quiet move that leaves us no defence against the
 * VCT that follows (vct_quiet_win, within what is left of time_ms), the
 * move becomes a proven loss (best_edge and the search then avoid it) and is
 * returned. MOVE_NONE when it holds (or the solver ran out), was checked
 * before, or there is nothing to check (a proven or unexpanded root, a
 * proven child, no VCT solver, leaves in flight). The solves run on
 * solver, or with NULL on the tree's own: a timed search's watcher's
 * (mcts_limits_t.watch), between two searches, resumes from what its table
 * holds of the watcher's checks and of the root's defence. */
int mcts_refute_best(mcts_t *t, vct_t *solver, uint32_t nodes, double time_ms);

/* Dirichlet(alpha) noise mixed into the root priors with weight frac; the
 * root must be expanded (mcts_root_expanded). Once per root. */
void mcts_add_noise(mcts_t *t, double alpha, double frac);
/* New priors for the root's moves from a policy row by point (as an
 * evaluator gives it), e.g. a better evaluation of a root kept from the
 * last search; its children and their visits stay. False (nothing done)
 * when the root is not expanded: a new root takes its priors from its
 * evaluation. */
bool mcts_set_root_policy(mcts_t *t, const float *row);
bool mcts_root_expanded(const mcts_t *t);

/* Two-phase search, for batching leaves outside the tree:
 * mcts_gather selects up to `max` leaves (<= max_pending) with virtual
 * loss; leaves that need no net (terminal, proven, known to the probe) are backed up
 * at once and do not count. Stops early when the root has `visit_target`
 * visits counting those in flight (0: no target) or on a collision.
 * Writes the positions to evaluate to boards[] (pointers into the tree,
 * valid until mcts_deliver) and returns their count. 0 means nothing to
 * evaluate: the target is reached, the tree is full, or the root is
 * terminal/proven (mcts_search_done says which). Then
 * mcts_deliver(policy, value) with rows laid out as for mcts_eval_fn
 * expands those leaves and backs the values up. */
int mcts_gather(mcts_t *t, int max, uint32_t visit_target, const board_t **boards);
void mcts_deliver(mcts_t *t, const float *policy, const float *value);
/* True when the root is terminal/proven, the tree is full, or the root
 * has visit_target visits (0: no target). */
bool mcts_search_done(const mcts_t *t, uint32_t visit_target);

/* A search in one call: batches of up to `batch` leaves (virtual loss), one
 * eval call each, until a limit is hit. */
typedef struct mcts_limits {
    uint32_t visits;          /* root visits to reach, reused ones count (0: none) */
    double time_ms;           /* wall-clock budget from the call (0: none) */
    const volatile int *stop; /* stop when *stop != 0, read atomically: another thread
                                 or a signal handler may set it (may be NULL) */
    int batch;                /* leaves per eval call (1..max_pending; 0: 1) */
    double root_time_ms;      /* the time the root's VCT gets vct_root_share of, when a
                                 search is cut in slices (0: time_ms) */
    vct_t *watch;             /* the solver of the thread beside a timed search
                                 (vct_watch_nodes; NULL: no such thread); the caller's,
                                 used by that thread alone */
} mcts_limits_t;

#define MCTS_PV_MAX 32
typedef struct mcts_result {
    int best_move;            /* most visited root child (a winning move when proven); MOVE_NONE when no legal move */
    float value;              /* root value, side to move at the root */
    float winrate;            /* (value + 1) / 2 */
    int proven;               /* +1 root side wins at once, -1 proven lost, 0 not proven */
    uint32_t root_visits;     /* root n after the search (reused visits included) */
    uint64_t playouts;        /* playouts done by this call */
    uint64_t evals;           /* positions sent to the evaluator by this call */
    double seconds;
    double threads_ms;        /* of seconds: until the search threads had ended (summed over a call's rounds) */
    double watch_ms;          /* of seconds: then the waits for the watcher (0 without one) */
    double playouts_per_s;
    bool mem_full;            /* stopped because the arena was full */
    int npv;
    int pv[MCTS_PV_MAX];      /* best line from the root, most visited child each step */
} mcts_result_t;

/* Search the root. Returns 0. The result describes the root afterwards. */
int mcts_search(mcts_t *t, mcts_eval_fn eval, void *user, const mcts_limits_t *lim,
                mcts_result_t *out);
/* The same search by nthreads threads (1..MCTS_MAX_THREADS) on this one
 * tree: thread i calls evals[i](users[i], ...) on its own batches of up to
 * lim->batch leaves, so evaluators need not be thread-safe, only separate
 * (e.g. one nn_eval_t and net each). Selection and backup hold the
 * tree's lock; evaluations run in parallel. nthreads * batch is capped at
 * max_pending (batch shrinks first). nthreads == 1 is mcts_search. */
#define MCTS_MAX_THREADS 64
int mcts_search_threads(mcts_t *t, int nthreads, mcts_eval_fn const *evals, void *const *users,
                        const mcts_limits_t *lim, mcts_result_t *out);
/* Fill out with the root analysis (no search). */
void mcts_get_result(const mcts_t *t, mcts_result_t *out);

/* Root children with visits > 0 as (move, count), in edge order; returns
 * the count (<= max). Counts above 65535 are clipped. */
int mcts_root_visits(const mcts_t *t, record_visit_t *out, int max);
/* The policy training target: mcts_root_visits, less the forced playouts
 * PUCT would not have given (KataGo's policy target pruning). When the
 * root had forced playouts (forced_k > 0 and noise; a root proven lost
 * after its moves were visited too), every child but the
 * most visited one loses up to its sqrt(k * P * N) forced visits, as long
 * as its PUCT value stays below the best child's; a child left with 1
 * visit or fewer is dropped. With the Gumbel root (gumbel_m > 0) and an
 * expanded root: its policy target (see gumbel_m) as counts, the largest
 * 65535, zeros left out. A root proven won: its winning move (the one
 * mcts_pick_move plays) alone, with the root's visits (at least 1) as its
 * count. Otherwise exactly mcts_root_visits. */
int mcts_root_policy_visits(const mcts_t *t, record_visit_t *out, int max);
/* Root child statistics for analysis, in edge order: move, visits, Q (root
 * side's view; a proven value when the move has no visits), prior, and
 * proven: +1 the move wins for the root side, -1 it loses, 0 not proven
 * (or a proven draw); chosen: the move mcts_pick_move plays at temperature 0. */
typedef struct mcts_child_info {
    int move;
    uint32_t visits;
    float q;
    float prior;
    int proven;
    bool chosen;
} mcts_child_info_t;
int mcts_root_children(const mcts_t *t, mcts_child_info_t *out, int max);
/* Sort ch[0..n) (mcts_root_children's order) best first, the one order
 * every report of candidates uses: proven wins, then the move chosen, then
 * visits, then prior, full ties in edge order; proven losses last. */
void mcts_rank_children(mcts_child_info_t *ch, int n);
/* The line from the root that starts with root child `move`, then the most
 * visited child (or select_lcb's) at each step (as mcts_result_t.pv): writes up to max moves
 * to pv and returns their count (0 when move is not a root child). */
int mcts_root_child_pv(const mcts_t *t, int move, int *pv, int max);
/* Root value from the root side's view (0 before any visit). */
float mcts_root_value(const mcts_t *t);
uint32_t mcts_root_n(const mcts_t *t);

/* Whether the Gumbel root's next draw of candidates (gumbel_m > 0) adds
 * Gumbel noise to their log priors: self-play's plies sampled at
 * temperature; without it the candidates are the moves of highest prior
 * and the move played is the argmax of the policy target. */
void mcts_gumbel_noise(mcts_t *t, bool on);

/* Choose a move at the root: temperature 0 = most visits (ties: prior), or
 * by select_lcb when it is set;
 * otherwise sample visits^(1/temperature). Proven wins are always taken.
 * With the Gumbel root (gumbel_m > 0) after a search that drew its
 * candidates, the temperature is not read: the move is the Gumbel
 * root's (see gumbel_m). MOVE_NONE when the root has no children. */
int mcts_pick_move(mcts_t *t, double temperature);

/* VCF checks run and wins found by this tree so far (0 when VCF is off). */
uint64_t mcts_vcf_checks(const mcts_t *t);
uint64_t mcts_vcf_wins(const mcts_t *t);
/* The same for VCT (leaves and roots), and the roots searched among the
 * refutations of the opponent's VCT only. */
uint64_t mcts_vct_checks(const mcts_t *t);
uint64_t mcts_vct_wins(const mcts_t *t);
uint64_t mcts_vct_defences(const mcts_t *t);

/* Edges in use in the live arena, for tests. */
size_t mcts_edges_used(const mcts_t *t);

#ifdef __cplusplus
}
#endif
#endif
