/* Built-in bots: opponents that exist without a trained model.
 *
 *   random: uniform over the legal moves.
 *   greedy: one ply. Wins at once if it can; blocks the opponent's five;
 *           otherwise scores every legal point within two of a stone by the
 *           threats it makes for itself (five, open four, four, open three,
 *           three, twos) plus those it takes from the opponent, and plays
 *           the best, ties broken by the seeded generator.
 *
 * Both respect the rule of the board (renju: black never plays a
 * forbidden point). They read the board only; the caller owns the rng
 * state (any value is a valid seed) and nothing is allocated. */
#ifndef GZ_ENGINE_BOT_H
#define GZ_ENGINE_BOT_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/board.h"

typedef enum { BOT_RANDOM = 0, BOT_GREEDY = 1, BOT_COUNT } bot_kind_t;

/* "random" or "greedy" (without the "bot:" prefix). */
bool bot_parse(const char *name, bot_kind_t *out);
const char *bot_name(bot_kind_t k);
#define BOT_LIST "bot:random, bot:greedy"

/* A move for the side to move, or MOVE_NONE when there is no legal move
 * (the game is over, or renju black has only forbidden points left). */
int bot_random_move(const board_t *b, uint64_t *rng);
int bot_greedy_move(const board_t *b, uint64_t *rng);
int bot_move(bot_kind_t k, const board_t *b, uint64_t *rng);

/* The greedy bot's score of the empty point `move` for the side to move
 * (higher is better); exposed for tests and analysis. */
double bot_greedy_score(const board_t *b, int move);

#endif
