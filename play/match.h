/* Match play (gomoku match): paired random openings, one game between two
 * players, and the Elo difference a score stands for. */
#ifndef GZ_PLAY_MATCH_H
#define GZ_PLAY_MATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/board.h"
#include "play/player.h"

/* k random moves near the centre of an empty size x size board of rule
 * into b, none of them ending the game; the same seed gives the same
 * opening (each pair of games of a match shares one). */
void match_opening(board_t *b, int size, rule_t rule, int k, uint64_t seed);

/* One game from opening between black and white (both told of every move):
 * *result and *plies at the end. A player that answers an illegal move
 * loses the game: *forfeit, and err says who and why. 0, or -1 with err
 * when a player fails (an engine died, a person quit). */
int match_play(player_t *black, player_t *white, const board_t *opening, result_t *result,
               int *plies, bool *forfeit, char *err, size_t errlen);

/* The Elo difference of w wins, l losses and d draws, with a 95% interval:
 * the score +- 1.96 standard errors through the logistic curve; at a score
 * of 0 or 1 the Elo is infinite and the finite bound is the exact binomial
 * (Clopper-Pearson) one (all n won: score >= 0.025^(1/n)). */
void match_elo(double w, double l, double d, double *elo, double *lo, double *hi);

#endif
