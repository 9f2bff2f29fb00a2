/* Built-in bots: opponents that exist without a trained model.
 *
 *   random: uniform over the legal moves.
 *   greedy: one ply. Wins at once if it can; blocks the opponent's five;
 *           otherwise scores every legal point within two of a stone by the
 *           threats it makes for itself (five, open four, four, open three,
 *           three, twos) plus those it takes from the opponent, and plays
 *           the best, ties broken by the seeded generator.
 *   vcf:    greedy plus the VCF solver (engine/vcf.h): plays the first move
 *           of its own VCF when it finds one (BOT_VCF_NODES solver nodes).
 *           Otherwise its candidates are the defences when the opponent
 *           has a VCF (vcf_defend), else greedy's; of the BOT_VCF_TOP
 *           best by greedy score it plays the first that threatens a VCF
 *           of its own, else the first that leaves the opponent none
 *           (BOT_VCF_DEFEND_NODES per check), else the greedy move.
 *   vct:    vcf plus the VCT solver (engine/vct.h): after its own VCF, plays
 *           the first move of its own VCT when it finds one (BOT_VCT_NODES);
 *           when the opponent has no VCF but has a VCT, plays the best by
 *           greedy score of the moves that stop it: the first of greedy's
 *           BOT_VCF_TOP best that leaves the opponent no VCF or VCT
 *           (preferring one that threatens its own), else the best of all
 *           of vct_defend's (BOT_VCT_DEFEND_NODES per check); otherwise
 *           as vcf.
 *
 * All respect the rule of the board (renju: black never plays a
 * forbidden point). They read the board only; the caller owns the rng
 * state (any value is a valid seed). random and greedy allocate nothing;
 * vcf and vct use the caller's solvers or make them for the call (1 MiB
 * for VCF, 2 MiB for VCT). */
#ifndef GZ_ENGINE_BOT_H
#define GZ_ENGINE_BOT_H

#include <stdbool.h>
#include <stdint.h>

#include "engine/board.h"
#include "engine/vcf.h"
#include "engine/vct.h"

typedef enum { BOT_RANDOM = 0, BOT_GREEDY = 1, BOT_VCF = 2, BOT_VCT = 3, BOT_COUNT } bot_kind_t;

/* "random", "greedy", "vcf" or "vct" (without the "bot:" prefix). */
bool bot_parse(const char *name, bot_kind_t *out);
const char *bot_name(bot_kind_t k);
#define BOT_LIST "bot:random, bot:greedy, bot:vcf, bot:vct"
#define BOT_VCF_NODES 20000
#define BOT_VCF_DEFEND_NODES 2000
#define BOT_VCF_TOP 8
#define BOT_VCT_NODES 1000
#define BOT_VCT_DEFEND_NODES 100

/* A move for the side to move, or MOVE_NONE when there is no legal move
 * (the game is over, or renju black has only forbidden points left). */
int bot_random_move(const board_t *b, uint64_t *rng);
int bot_greedy_move(const board_t *b, uint64_t *rng);
/* solver: borrowed, or NULL to make one for this call. */
int bot_vcf_move(const board_t *b, uint64_t *rng, vcf_t *solver);
/* vcf, vct: borrowed, or NULL to make one for this call. */
int bot_vct_move(const board_t *b, uint64_t *rng, vcf_t *vcf, vct_t *vct);
int bot_move(bot_kind_t k, const board_t *b, uint64_t *rng);

/* The greedy bot's score of the empty point `move` for the side to move
 * (higher is better); exposed for tests and analysis. */
double bot_greedy_score(const board_t *b, int move);

#endif
