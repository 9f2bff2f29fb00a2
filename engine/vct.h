/* VCT (victory by continuous threats) solver and its defence.
 *
 * A VCT for the side to move (the attacker) is a win in which every move
 * of the attacker leaves a threat to win at once on the board:
 *   - a four: a five point (the defender must block it), or
 *   - a three: a point where the attacker's next stone would make a
 *     winning four (two or more five points: an open four or a double
 *     four; or, renju, a four whose only block is forbidden for black),
 *     legal for the attacker (renju: not forbidden for black). Open threes
 *     _XXX_ and split threes _XX_X_ are the usual cases; a move that
 *     threatens a double four, or a block of a counter-four that keeps an
 *     earlier three standing, is a threat too.
 * The defender answers with any legal move. Against a four only the block
 * (or a five) matters. Against a three, the moves the solver tries are
 * all of those that can refute it, so that no false VCT is claimed:
 *   - the defender's own fours (the attacker must block them, and that
 *     block must itself leave a threat, or the attacker loses its tempo),
 *     and first of all the defender's VCF: if the defender has one after
 *     a three, the three does not force;
 *   - every point that, occupied by the defender, leaves the attacker no
 *     winning four: tried on the lines through each winning-four point
 *     (within four of it; five in renju, where the point's five points'
 *     lines are tried too) and kept only when the check after it holds.
 * Any other defender move leaves a winning four standing and loses.
 *
 * Rules are the board's, as in vcf.h: black never plays a forbidden point
 * (a three whose winning point is forbidden is no three), and white wins
 * by a four whose only block is forbidden for black. Renju's recursive
 * forbidden rule can let a stone far from a threat change whether a point
 * is forbidden; such far effects are not looked for (a far attacker move
 * that makes a threat only that way is not tried; a far defender move
 * that defuses one only that way is not tried). A full board (a draw) is
 * not considered.
 *
 * Depth counts attacker moves: a line of k threats has 2k - 1 moves
 * (attacker, reply, ..., the attacker's last threat, a four the defender
 * cannot stop); an immediate five is a line of one move and zero threats.
 * A block of the defender's counter-four is an attacker move and counts.
 *
 * The solver owns a transposition table of positions proven won or not
 * won within a depth, valid across queries (any board size and rule); a
 * node pool for the proof-number search's tree (reset by each query, and
 * by the query itself when it fills: the search then starts a new round
 * from the root, reading what the last proved from the table, while its
 * budget lasts);
 * and a VCF solver for the checks at each node (a VCF is a VCT). Queries
 * do no allocation. Not thread-safe: one solver per thread. */
#ifndef GZ_ENGINE_VCT_H
#define GZ_ENGINE_VCT_H

#include <stddef.h>
#include <stdint.h>

#include "engine/board.h"
#include "engine/vcf.h"

#ifdef __cplusplus
extern "C" {
#endif

#define VCT_MAX_DEPTH 32
#define VCT_LINE_MAX (2 * VCT_MAX_DEPTH)

typedef enum {
    VCT_NONE = 0,      /* proven: no VCT of at most max_depth threats */
    VCT_WIN = 1,       /* a winning line was found (out->line) */
    VCT_UNKNOWN = 2,   /* the node or time budget ran out first, or the node pool
                          (a query with no budget; a round that proved nothing new) */
} vct_status_t;

typedef enum {
    VCT_ALGO_PN = 0,    /* best-first proof-number search over a node pool (default) */
    VCT_ALGO_DFS = 1,   /* iterative deepening depth-first search */
    VCT_ALGO_COUNT
} vct_algo_t;

typedef struct vct_limits {
    uint64_t nodes;      /* positions expanded at most (0: no limit) */
    double time_ms;      /* wall-clock budget (0: none); makes results machine-dependent */
    int max_depth;       /* attacker moves, 1..VCT_MAX_DEPTH (0: VCT_MAX_DEPTH) */
    uint64_t vcf_nodes;  /* budget of each inner VCF check (0: VCT_VCF_NODES) */
    vct_algo_t algo;
    const volatile int *stop; /* give up (VCT_UNKNOWN) once *stop != 0, read atomically
                                 with the clock (may be NULL) */
    bool no_zones;       /* the defence solves every candidate, no relevance zones (a
                            reference for tests and benches) */
} vct_limits_t;

#define VCT_VCF_NODES 200

typedef struct vct_result {
    vct_status_t status;
    int nthreats;              /* attacker threats in the line (0: an immediate five) */
    int nline;                 /* moves in line: 2 * nthreats - 1, or 1 for a five */
    int line[VCT_LINE_MAX];    /* attacker, reply, attacker, ..., attacker's last move */
    uint64_t nodes;            /* positions expanded by this query */
} vct_result_t;

typedef struct vct vct_t;

/* A solver using about tt_bytes in all (at least 64 KiB): a quarter for
 * the table, a quarter for the inner VCF solver's, half for the node
 * pool. NULL with err when out of memory. */
vct_t *vct_create(size_t tt_bytes, char *err, size_t errlen);
void vct_free(vct_t *s);
/* Forget the tables (results are valid forever; this is for measurements). */
void vct_clear(vct_t *s);

/* Search a VCT for the side to move of b. Deterministic for a given table
 * content and limits without time_ms. A finished game is VCT_NONE. out
 * may be NULL; returns the status. The line is the proof's principal
 * variation: at each reply, of the defender's moves the solver proved
 * lost, the one the table says holds out longest. It is rebuilt after
 * the search with a second budget as large as the first; should that run
 * out (the table lost much of the proof), the answer is VCT_UNKNOWN. The
 * depth-first search's line takes no more threats than the shortest VCT
 * needs against the best defence. */
vct_status_t vct_solve(vct_t *s, const board_t *b, const vct_limits_t *lim, vct_result_t *out);

/* vct_solve for the side to move of `after`, the position after the
 * other side's move, as the defence asks it: when that move left the
 * other side a four (one five point, and the side to move has none), the
 * side to move blocks it and the other side moves again, so the side to
 * move wins only when the other side then has no defence against its
 * threats (vct_defend within lim finds none; a defence left undecided by
 * the budget counts). A plain vct_solve would call the four a refutation,
 * since the block is no threat. Fours in a chain are followed
 * VCT_REPLY_CHAIN deep, then solved plainly. A four whose block is not
 * legal (renju) wins for the other side: VCT_NONE. The line of such a win
 * is the block alone (nthreats 0). */
#define VCT_REPLY_CHAIN 3
#define VCT_DEFEND_TOTAL 64   /* a defence's nodes at most, in units of each solve's */
vct_status_t vct_solve_reply(vct_t *s, const board_t *after, const vct_limits_t *lim,
                             vct_result_t *out);

/* The defence: the side to move of b faces the opponent's VCT. When the
 * opponent (solved as if it were to move) has a VCT, writes to out the
 * legal moves m of the side to move after which the opponent has no VCT
 * found within lim (vct_solve_reply after m, so a four of the side's is a
 * defence only when the side still has one after its block, is VCT_NONE
 * or VCT_UNKNOWN; use
 * budgets that prove it), ascending, and returns their count (0: lost to
 * the VCT whatever one plays; an own five counts as a defence). lim's
 * node budget N holds for each solve: each candidate is solved within
 * N/16 nodes, those left undecided then within N/4, then N (most
 * refutations are short, so the budget goes where it decides). Its time
 * holds for the whole call, candidates nearest the threat's first move
 * first: those left undecided when it runs out count as defences; so does
 * VCT_DEFEND_TOTAL * N nodes, for the whole call with the defences
 * nested in it (a four in reply is blocked and defended again, up to
 * VCT_REPLY_CHAIN deep: without a clock, tens of candidates at each of
 * those levels made one call last minutes). Returns -1
 * when the opponent has no VCT found (nothing to defend). threat (may be
 * NULL) gets the opponent's line. Candidates tried: the side to move's own
 * fives and fours, the points where it would make a window of three of
 * its stones (new counter-four resources), and every empty point within
 * four (renju: five) of a move of the opponent's line on one of its eight
 * rays; a move outside these leaves the line's threats and the defender's
 * fours as they were (deeper counterplay, e.g. a two that becomes a four
 * after later stones, and renju's far forbidden effects are not looked
 * for). Outside renju a candidate outside the relevance zone of the
 * threat's proof, or of the proof that refuted an earlier candidate, is
 * refuted by that proof without a solve of its own (the cells where a
 * defender stone could change the proof; vct.c), unless lim->no_zones:
 * the same answer for fewer nodes. */
int vct_defend(vct_t *s, const board_t *b, const vct_limits_t *lim, int *out,
               vct_result_t *threat);

/* vct_defend, and unproven (indexed by point, BOARD_CELLS) set to 1 at
 * each defence written that the budget or the time left undecided, 0
 * elsewhere: one solve gives both lists. */
int vct_defend_marked(vct_t *s, const board_t *b, const vct_limits_t *lim, int *out,
                      uint8_t *unproven, vct_result_t *threat);

/* vct_defend, keeping only the proven defences when there are any: the
 * moves after which the opponent's VCT is refuted within lim (VCT_NONE),
 * not those the budget or the time left undecided. With no proven one,
 * vct_defend's answer (the undecided moves, or 0, or -1). *proven (may be
 * NULL): whether the moves written are proven defences. */
int vct_defend_proven(vct_t *s, const board_t *b, const vct_limits_t *lim, int *out,
                      bool *proven, vct_result_t *threat);

/* vct_defend's first step, for a caller that checks the moves itself (a
 * search, its favourites first): when the opponent has a VCT within lim
 * (solved as if it were to move), writes vct_defend's candidates to cand
 * (legal, nearest the threat's first move first; any other move leaves
 * the threat standing, so it is lost) and returns their count; -1 when no
 * VCT is found. threat (may be NULL) gets the opponent's line. */
int vct_defence_begin(vct_t *s, const board_t *b, const vct_limits_t *lim, int *cand,
                      vct_result_t *threat);

/* A threat of a threat: a quiet move of the side to move of b (it makes
 * no five, four or three, so the other side is not forced) after which
 * the other side, to move, cannot stop the side's VCT: vct_defend finds
 * no defence. A VCT starting with a threat is vct_solve's; this is the
 * move one ply before it, e.g. a stone that makes two twos at once,
 * each ready to become a three. Candidates: facing the other side's
 * three, its quiet blocks (any other quiet move loses to it); else the
 * quiet points where the side's stone builds on two or more lines (a
 * window of five through it with some of its stones, or of its four
 * points, the stones it can place with tempo, and none of the other's),
 * the most such stones first; at most max_cands of them (0: all). Each
 * is kept when, with the side to move again, it has a VCT within lim's
 * nodes, and the other side's defence (each solve within lim's nodes)
 * finds none. lim's time holds for the
 * whole call (candidates not reached do not count). Returns the first
 * such move, with its VCT (the side moving twice) in threat (may be
 * NULL), or MOVE_NONE; *tried (may be NULL) gets the candidates solved.
 * As sound as vct_defend: a defence it does not look for (see there) is
 * missed, so a claimed win is proven only up to those. */
int vct_quiet_win(vct_t *s, const board_t *b, const vct_limits_t *lim, int max_cands,
                  vct_result_t *threat, int *tried);

/* vct_quiet_win over the caller's candidates, in its order (e.g. a net's
 * prior): those of moves[0..nmoves) that are legal and quiet (no five,
 * four or three) are tried, whatever lines they build on; no cap. */
int vct_quiet_win_among(vct_t *s, const board_t *b, const vct_limits_t *lim, const int *moves,
                        int nmoves, vct_result_t *threat, int *tried);

/* Forced-move pruning against a three, without a search: the side to
 * move of b faces the opponent's three (a point where the opponent's next
 * stone makes a winning four) while neither side has a five point. Writes
 * to out the moves that do not lose at once to it, ascending within two
 * groups: the points after which the opponent has no winning four, then
 * the side to move's own fours (a tempo); returns their count (0: every
 * move loses to it). Returns -1 when the opponent has no three, or a side
 * has a five point (nothing to prune by this rule). The side to move's own
 * VCF is not looked for: a caller that has one plays it first. */
int vct_three_defences(const board_t *b, int *out);
/* The same for the position of s's last vcf_solve, whose scan of the
 * board it reuses (a search's new leaf, checked for a VCF first, then
 * pruned, scans its stones once). */
int vct_three_defences_vcf(const vcf_t *s, int *out);

/* When vct_three_defences finds none (the side to move of b is lost to
 * the opponent's threes), the moves that still make the opponent show its
 * win: the opponent's winning-four points (each blocks a three), then the
 * side to move's own fours, each once, ascending within the two groups;
 * returns their count (0: none, or the game is over). Legality (renju's
 * forbidden points) is the caller's check. */
int vct_three_blocks(const board_t *b, int *out);

/* Positions expanded by all queries of s so far. */
uint64_t vct_nodes(const vct_t *s);
/* Solves begun by s so far: each vct_solve, and each inside the other
 * calls (a defence solves the threat, then its candidates). */
uint64_t vct_solves(const vct_t *s);

#ifdef __cplusplus
}
#endif
#endif
