/* The evaluator: what a search calls to value positions. It encodes board
 * rows (nn_encode), runs ONE batched forward call per batch, maps the
 * net's (M*M) policy back to board points, turns W/D/L into one value,
 * and keeps a hash cache in front of the net.
 *
 * Shapes match mcts_eval_fn / mcts_probe_fn (mcts/mcts.h), so a search
 * takes nn_eval_eval and nn_eval_probe with the evaluator as `user`, and
 * nn/ needs nothing from mcts/:
 *   policy[i * BOARD_CELLS + p]: prior of point p (p < size*size) for the
 *     side to move of boards[i], 0 at illegal points;
 *   value[i] = P(win) - P(loss) for the side to move of boards[i], in [-1, 1].
 *
 * The cache (nn_eval_cache_t): a fixed direct-mapped table keyed by the
 * Zobrist hash, rule and size of the position; a new entry replaces the
 * old one in its slot; priors kept as 16-bit fixed point. Every evaluation
 * the net makes is stored; nn_eval_probe answers from it. One cache may
 * serve several evaluators on several threads (a mutex guards it): a
 * searcher's trees and search threads share one. Clear it when the
 * weights change. */
#ifndef GZ_NN_EVAL_H
#define GZ_NN_EVAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/board.h"
#include "nn/nn.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct nn_eval_cache nn_eval_cache_t;

/* mem_bytes is the whole table; at least one entry is always made. NULL
 * with err when out of memory. */
nn_eval_cache_t *nn_eval_cache_create(size_t mem_bytes, char *err, size_t errlen);
void nn_eval_cache_free(nn_eval_cache_t *c);
void nn_eval_cache_clear(nn_eval_cache_t *c);   /* after new weights */
uint64_t nn_eval_cache_hits(const nn_eval_cache_t *c);
uint64_t nn_eval_cache_lookups(const nn_eval_cache_t *c);
size_t nn_eval_cache_entries(const nn_eval_cache_t *c);

typedef struct nn_eval nn_eval_t;

/* An evaluator over net for batches of up to max_batch boards (1..the
 * net's max batch; longer calls are cut into batches). Borrows net and
 * cache (NULL: no cache) until nn_eval_free. Boards must be no larger
 * than the net's board_max. One thread at a time per evaluator. NULL with
 * err on bad arguments or no memory. */
nn_eval_t *nn_eval_create(nn_net_t *net, nn_eval_cache_t *cache, int max_batch, char *err,
                          size_t errlen);
void nn_eval_free(nn_eval_t *e);

/* Which of the board's 8 symmetries the net sees (the net was trained on
 * all 8, so each is a fair question; their errors differ):
 *   NN_SYM_NONE: the board as it stands (the default);
 *   NN_SYM_ONE: one symmetry, fixed by the position's hash (the same
 *     position always gets the same answer; a tree's errors decorrelate
 *     at no cost);
 *   NN_SYM_ALL: all 8, policy and W/D/L averaged: 8 net rows a board, so
 *     the net's max batch must hold max_batch * 8 rows.
 * 0, or -1 with err (another value, or a net batch too small for 8). */
#define NN_SYM_NONE 0
#define NN_SYM_ONE 1
#define NN_SYM_ALL 8
int nn_eval_set_symmetry(nn_eval_t *e, int symmetry, char *err, size_t errlen);

/* mcts_eval_fn with user = the nn_eval_t: evaluate boards[0..n-1] with the
 * net (no cache lookup: the search has probed already) and store each
 * result in the cache. Allocates nothing. */
void nn_eval_eval(void *user, const board_t *const *boards, int n, float *policy,
                  float *value);
/* The net's own win/draw/loss probabilities for boards[0..n-1], side to
 * move of each: wdl[i * 3 + {0,1,2}]. No cache (it keeps one value, not
 * three). Allocates nothing. */
void nn_eval_wdl(nn_eval_t *e, const board_t *const *boards, int n, float *wdl);
/* mcts_probe_fn with user = the nn_eval_t: true and one row of policy /
 * value when the cache holds b; false (nothing written) otherwise, and
 * always without a cache. */
bool nn_eval_probe(void *user, const board_t *b, float *policy, float *value);

uint64_t nn_eval_calls(const nn_eval_t *e);   /* forward calls so far */
uint64_t nn_eval_evals(const nn_eval_t *e);   /* positions through the net so far (a
                                                * position's 8 copies count once) */

#ifdef __cplusplus
}
#endif
#endif
