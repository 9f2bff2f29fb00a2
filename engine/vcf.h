/* VCF (victory by continuous fours) solver and its defence.
 *
 * A VCF for the side to move (the attacker) is a line of fours, each
 * answered by the defender's only block, that ends in a five or in a four
 * the defender cannot stop: two completion points, or (renju) one that is
 * forbidden for black, so white wins by forcing black onto it. Rules are
 * the board's: freestyle five or more, standard exactly five, renju exactly
 * five for black, and a black four on a forbidden point is not a move.
 * When the defender answers a block with a four of its own (its block made
 * a five threat), the attacker must block it with a four or the line fails.
 *
 * Counting: a line of k fours has 2k - 1 moves (attacker, block, ...,
 * attacker's last four); an immediate five is a line of one move and zero
 * fours. max_fours bounds k.
 *
 * The solver owns a transposition table of positions proven to have no VCF
 * within a number of fours; it stays valid across queries (any board size
 * and rule), so one solver serves a whole game or search tree. Queries do
 * no allocation. Not thread-safe: one solver per thread. */
#ifndef GZ_ENGINE_VCF_H
#define GZ_ENGINE_VCF_H

#include <stddef.h>
#include <stdint.h>

#include "engine/board.h"

#ifdef __cplusplus
extern "C" {
#endif

#define VCF_MAX_FOURS 64
#define VCF_LINE_MAX (2 * VCF_MAX_FOURS)

typedef enum {
    VCF_NONE = 0,      /* proven: no VCF of at most max_fours fours */
    VCF_WIN = 1,       /* a winning line was found (out->line) */
    VCF_UNKNOWN = 2,   /* the node or time budget ran out first */
} vcf_status_t;

typedef struct vcf_limits {
    uint64_t nodes;    /* attacker positions to visit at most (0: no limit) */
    double time_ms;    /* wall-clock budget (0: none); makes results machine-dependent */
    int max_fours;     /* longest line, 1..VCF_MAX_FOURS (0: VCF_MAX_FOURS) */
} vcf_limits_t;

typedef struct vcf_result {
    vcf_status_t status;
    int nfours;                /* fours in the line (0: an immediate five) */
    int nline;                 /* moves in line: 2 * nfours - 1, or 1 for a five */
    int line[VCF_LINE_MAX];    /* attacker, block, attacker, ..., attacker's last move */
    uint64_t nodes;            /* attacker positions visited by this query */
} vcf_result_t;

typedef struct vcf vcf_t;

/* A solver with a transposition table of about tt_bytes (at least one
 * entry, rounded down to a power of two). NULL with err when out of memory. */
vcf_t *vcf_create(size_t tt_bytes, char *err, size_t errlen);
void vcf_free(vcf_t *s);
/* Forget the table (results are valid forever; this is for measurements). */
void vcf_clear(vcf_t *s);

/* Search a VCF for the side to move of b. Deterministic for a given table
 * content and limits without time_ms. A finished game is VCF_NONE. out
 * may be NULL; returns the status. */
vcf_status_t vcf_solve(vcf_t *s, const board_t *b, const vcf_limits_t *lim, vcf_result_t *out);

/* vcf_solve for the side to move of `after`, the position after the
 * other side's move, as the defence asks it: when that move left the
 * other side a four (one five point, and the side to move has none), the
 * side to move blocks it and the other side moves again, so the side to
 * move wins only when the other side then has no defence against its VCF
 * (vcf_defend finds none). A plain vcf_solve would call the four a
 * refutation, since the block is no four. Fours in a chain are followed
 * VCF_REPLY_CHAIN deep, then solved plainly. The line of such a win is
 * the block alone (nfours 0). */
#define VCF_REPLY_CHAIN 3
vcf_status_t vcf_solve_reply(vcf_t *s, const board_t *after, const vcf_limits_t *lim,
                             vcf_result_t *out);

/* The defence: the side to move of b faces the opponent's VCF. When the
 * opponent (solved as if it were to move) has a VCF, writes to out the
 * legal moves m of the side to move after which the opponent has no VCF
 * found within lim (vcf_solve_reply after m, so a four is a defence only
 * when its side still has one after the block, is VCF_NONE or
 * VCF_UNKNOWN; use
 * budgets that prove it), ascending, and returns their count (0: lost to
 * the VCF whatever one plays; an own five counts as a defence). Returns -1
 * when the opponent has no VCF found (nothing to defend). threat (may be
 * NULL) gets the opponent's line. Candidates tried: the side to move's own
 * fives and fours (a four whose stone stops the line, or that wins) and every empty point within four
 * of a move of the opponent's line on one of its eight rays (a block of
 * any four, a completion point, or a point that makes one of the forced
 * blocks a counter-four); a move outside these leaves the line intact
 * (renju aside: there a distant stone can change whether a point of the
 * line is forbidden; such defences are not looked for). */
int vcf_defend(vcf_t *s, const board_t *b, const vcf_limits_t *lim, int *out,
               vcf_result_t *threat);

/* Points where colour `color` would make a four (exactly one or more new
 * five points through that point, no five) on b, ascending; returns the
 * count. Legality (renju forbidden points) is not checked. */
int vcf_four_points(const board_t *b, int color, int *out);

/* Attacker positions visited by all queries of s so far. */
uint64_t vcf_nodes(const vcf_t *s);

#ifdef __cplusplus
}
#endif
#endif
