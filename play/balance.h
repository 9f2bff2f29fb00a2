/* Balanced moves: the move, or the two moves (the side to move's, then the
 * opponent's), after which a position's value is closest to a target.
 * pbrain's YXBALANCEONE / YXBALANCETWO and swap2's "place two stones"
 * option use it.
 *
 * Method, in two rounds of the brain's MCTS (models only; bots have no
 * values):
 *  1. Estimates. One move: the position is searched (BALANCE_ROUND1 of the
 *     budget) and each root child with visits is estimated by its Q. Two
 *     moves: the position is searched (BALANCE_ROUND1 / 2), then the
 *     BALANCE_FIRST most visited first moves each get a search of their own
 *     (BALANCE_ROUND1 / 2 shared), whose root children with visits estimate
 *     the second move, BALANCE_SECOND pairs per first move at most.
 *  2. Checks. The BALANCE_CHECKS candidates whose estimates are closest to
 *     the target each get a search of the position after them (the rest of
 *     the budget, shared), and the candidate whose searched value is
 *     closest wins (ties: the earlier, closer estimate).
 * A stop ends the round at once: the best candidate checked so far wins,
 * else the closest estimate.
 *
 * Values are from the view of the side to move after the balancing moves,
 * in [-1, 1] (mcts.h). Points marked in avoid (may be NULL) are never
 * chosen (for either stone). */
#ifndef GZ_PLAY_BALANCE_H
#define GZ_PLAY_BALANCE_H

#include <stddef.h>
#include <stdint.h>

#include "engine/board.h"
#include "play/brain.h"

#define BALANCE_ROUND1 0.4   /* share of the budget for the estimates */
#define BALANCE_FIRST 3      /* two moves: first moves estimated further */
#define BALANCE_SECOND 2     /* two moves: second moves kept per first move */
#define BALANCE_CHECKS 6     /* candidates searched in round 2 */

typedef struct balance_result {
    int nmoves;           /* 1 or 2 */
    int moves[2];
    double value;         /* after the moves, side to move then */
    int checked;          /* candidates searched in round 2 (0: an estimate) */
} balance_result_t;

/* Told of each candidate checked in round 2: its moves and searched value. */
typedef void (*balance_note_fn)(void *user, const int *moves, int nmoves, double value);

/* Balance b (not over) by nmoves (1 or 2) moves towards target within
 * budget_ms (at least 1 ms), stopping early when *stop (may be NULL) is
 * set; note (may be NULL) hears of each check. 0 with out filled, or -1
 * with err (a bot, no legal move, a search's error). */
int balance_search(brain_t *br, const board_t *b, int nmoves, double target, double budget_ms,
                   const volatile int *stop, const uint8_t *avoid, balance_note_fn note,
                   void *user, balance_result_t *out, char *err, size_t errlen);

#endif
