/* The pattern net: a fast evaluator for the search, learned from a net.
 *
 * Each empty point p sees, along each of its 4 lines, the 8 cells within
 * four of it (empty, the side to move's, the opponent's, off the board):
 * a code of 16 bits. A code and its reversal are the same pattern, and
 * one table serves all 4 lines, so the evaluator sees the 8 symmetries
 * of the board alike by construction.
 *
 *   s_p  = b0 + sum over p's 4 lines of table[code]        (D)
 *   h_p  = relu(W1 relu(s_p) + b1)                          (D)
 *   pool = [mean_p h_p ; max_p h_p]                          (2D)
 *   z    = relu(V1 pool + c1)                                (H)
 *   value = tanh(v2 . z + c2)      side to move, in [-1, 1]
 *   logit_p = (wp + U pool + Uz z) . h_p + bp   policy over the legal empty points
 *
 * U (D x 2D) lets the whole board reweigh what a point's features are
 * worth to the policy (to defend or to attack, say), where wp alone
 * rates each point by its own 4 lines; Uz (D x H) does the same from the
 * value head's hidden units, a judgement of the whole board with a relu
 * in it (U's is linear in the pool). A net with U = 0 (every file before
 * version 3) has the policy of wp alone; one with Uz = 0 (every file
 * before version 4), that of wp and U.
 *
 * A forward is a few hundred thousand multiply-adds (a 4x48 net's is 79
 * million), so a search gets many times the playouts; its judgement is
 * what it learns from the net (patnet_distill in cli/cmd_model.c).
 *
 * File (.gzp): "GZPN", u32 version, u32 D, u32 H, u32 rule, u64 step,
 * then the parameters as little-endian f32: the table, b0 (D), W1 (D x D,
 * input-major: W1[j * D + i] takes input j to output i), b1 (D), wp (D),
 * bp, V1 (H x 2D, output-major), c1 (H), v2 (H), c2, U (D x 2D,
 * output-major; version 3 on), Uz (D x H, output-major; version 4 on);
 * then the CRC32 of everything before it. Version 4 (written) is
 * version 3 with Uz, version 3 version 2 with U. Version 2 holds the table
 * rows a board can read, in ascending code order: the canonical codes
 * (a code no larger than its reversal) whose off-board cells, on each
 * side of the point, run from some distance out to the fourth cell (121
 * ways a side, PATNET_STORED_ROWS rows, about 1 MB); the others read as
 * 0. Version 1 held all CODES rows. Versions 1 to 3 still read, with
 * the parts they lack 0. Read back checked: magic, version, dims, rule, length, CRC,
 * every number finite. */
#ifndef GZ_NN_PATNET_H
#define GZ_NN_PATNET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/board.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PATNET_VERSION 4      /* written; 1 to 3 still read */
#ifndef PATNET_D
#define PATNET_D 32          /* per-point features */
#endif
#define PATNET_H 32          /* value head's hidden units */
#define PATNET_CODES 65536   /* 8 cells of 4 states */
#define PATNET_STORED_ROWS 7381   /* (121 * 121 + 121) / 2: the rows a file holds */

typedef struct patnet patnet_t;

/* New random weights (small, seeded) for boards of rule. NULL on no memory. */
patnet_t *patnet_create(rule_t rule, uint64_t seed);
void patnet_free(patnet_t *pn);
rule_t patnet_rule(const patnet_t *pn);
uint64_t patnet_step(const patnet_t *pn);
/* The file version pn was read from (PATNET_VERSION when created here), and
 * the parameters a file of that version holds. */
uint32_t patnet_version(const patnet_t *pn);
size_t patnet_file_params(uint32_t version);

/* Load / save (atomic). NULL or -1 with a one-line err naming the path. */
patnet_t *patnet_load(const char *path, char *err, size_t errlen);
int patnet_save(const patnet_t *pn, const char *path, char *err, size_t errlen);

/* mcts_eval_fn with user = a patnet_t: policy rows of BOARD_CELLS (prior of
 * each point, 0 at illegal ones, side to move) and value[i] for the side to
 * move. Reads the net only, so any number of threads may share one.
 * Allocates nothing. */
void patnet_eval(void *user, const board_t *const *boards, int n, float *policy,
                 float *value);

/* A thread's evaluator over pn: patnet_eval's answers, with a table of the
 * points it has computed (a point's 4 lines' rows to its features and
 * logit, 8,192 slots, about 1.2 MB), so positions that differ in a few
 * stones, as a search's do, compute only the points those stones changed.
 * pn must outlive it and keep its weights (no training) while it lives; one
 * thread at a time. NULL on no memory. */
typedef struct patnet_ctx patnet_ctx_t;
patnet_ctx_t *patnet_ctx_create(const patnet_t *pn);
void patnet_ctx_free(patnet_ctx_t *c);
/* mcts_eval_fn with user = a patnet_ctx_t. Allocates nothing. */
void patnet_ctx_eval(void *user, const board_t *const *boards, int n, float *policy,
                     float *value);

/* A thread's evaluator over an ensemble of pattern nets: each position's
 * priors and value are the mean of the nets' (patnet_ctx_eval's answers, a
 * context a net). nets[0..n-1], 1 <= n <= PATNET_ENSEMBLE_MAX, must outlive
 * it and keep their weights; one net answers exactly as its context does.
 * One thread at a time. NULL on no memory or n out of range. */
#define PATNET_ENSEMBLE_MAX 4
typedef struct patnet_ens patnet_ens_t;
patnet_ens_t *patnet_ens_create(const patnet_t *const *nets, int n);
void patnet_ens_free(patnet_ens_t *e);
/* mcts_eval_fn with user = a patnet_ens_t. Allocates nothing. */
void patnet_ens_eval(void *user, const board_t *const *boards, int n, float *policy,
                     float *value);

/* Training. A trainer holds the gradients and Adam's moments of one net
 * (the net stays the caller's and must outlive it). */
typedef struct patnet_trainer patnet_trainer_t;
patnet_trainer_t *patnet_trainer_create(patnet_t *pn, float lr);
void patnet_trainer_free(patnet_trainer_t *tr);
void patnet_trainer_set_lr(patnet_trainer_t *tr, float lr);
/* One position into the batch's gradient: target policy (BOARD_CELLS, sums
 * to 1 over legal points) and value for b's side to move. Adds its losses
 * (cross-entropy, squared value error) to *lp, *lv. */
void patnet_trainer_add(patnet_trainer_t *tr, const board_t *b, const float *policy,
                        float value, double *lp, double *lv);
/* Adam step on the gradient of the positions added since the last step
 * (averaged over them); clears it. */
void patnet_trainer_step(patnet_trainer_t *tr);
/* The gradient of the positions added to from since its last step or
 * merge, added into tr's as if they had been added to tr; clears from's.
 * from and tr train the same net. So threads can share a minibatch: each
 * adds its own positions to its own trainer (patnet_trainer_add reads the
 * net only), then one merges the others' into its own and steps. */
void patnet_trainer_merge(patnet_trainer_t *tr, patnet_trainer_t *from);
/* The losses of one position without training (held-out figures). */
void patnet_loss(const patnet_t *pn, const board_t *b, const float *policy, float value,
                 double *lp, double *lv);

#ifdef __cplusplus
}
#endif
#endif
