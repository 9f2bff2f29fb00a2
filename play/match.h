/* Match play (gomoku match): paired openings (random stones, or the lines
 * of an openings file), one game between two players under an optional
 * game clock, and the Elo difference a score stands for. */
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

/* The openings in the file at path (engine/gamefile.h's opening lines: one
 * per line, letter moves or centre offsets; '#' comments), each played out
 * on a size board under rule into a malloc'ed array *out of *n boards.
 * 0, or -1 with err naming the line: a stone off the board, a line the
 * rule refuses (a forbidden point, an opening that already ends the game),
 * a file with no opening at all. */
int match_openings_load(const char *path, int size, rule_t rule, board_t **out, int *n,
                        char *err, size_t errlen);

/* One game from opening between black and white (both told of every move):
 * *result and *plies at the end. With match_time_ms > 0 each player has a
 * clock of that many ms for the game (Gomocup's timeout_match), told to it
 * before each move (player_t.time_left); the wall time of its genmove calls
 * comes off it. A player that answers an illegal move, runs out of its
 * clock, or fails at a move (PLAYER_FORFEIT: an engine that did not answer
 * in time or died, as Gomocup's manager scores it) loses the game:
 * *forfeit, and err says who and why. The game's last position goes to
 * *end when end is not NULL. 0, or -1 with err when a player cannot go on
 * (an engine that cannot be started again, a person quit). When move_ms is
 * not NULL (BOARD_CELLS entries), move_ms[i] is the wall time of ply i's
 * genmove in ms, 0 for the opening's plies; a game lost by forfeit also
 * has the time of the move that lost it, at ply *plies. */
int match_play(player_t *black, player_t *white, const board_t *opening, long long match_time_ms,
               result_t *result, int *plies, bool *forfeit, board_t *end, int *move_ms,
               char *err, size_t errlen);

/* The Elo difference of w wins, l losses and d draws, with a 95% interval:
 * the score +- 1.96 standard errors through the logistic curve; at a score
 * of 0 or 1 the Elo is infinite and the finite bound is the exact binomial
 * (Clopper-Pearson) one (all n won: score >= 0.025^(1/n)). */
void match_elo(double w, double l, double d, double *elo, double *lo, double *hi);

#endif
