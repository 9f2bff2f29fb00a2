/* Internal to engine/: what the two threat solvers (vcf.c, vct.c) share:
 * the state of one query (working board, sides, budget, the line found),
 * the sizing of their transposition tables, and the defence loop (try
 * each candidate move, keep those after which the threat is gone).
 * threat.c also holds the five-cell window scan declared in line.h. */
#ifndef GZ_ENGINE_THREAT_H
#define GZ_ENGINE_THREAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/board.h"
#include "engine/vcf.h"
#include "util/util.h"

#define THREAT_LINE_MAX VCF_LINE_MAX   /* the longer of the two solvers' lines */

/* The windows of five cells on a board, kept up to date stone by stone
 * (the classical engines' incremental line patterns, in their simplest
 * form): per window (the direction and its first cell) the stones of each
 * colour (one byte, valid windows only); per cell and colour, how many windows through it hold 2, 3 or 4
 * stones of that colour and none of the other. A point whose count for 4
 * is non-zero is a candidate five point, for 3 a candidate four point, for
 * 2 a candidate three point, found without scanning the board's stones. */
typedef struct threat_lines {
    uint8_t n[4][BOARD_CELLS];   /* [dir][first cell]: 6 * black + white stones */
    uint32_t cls[BOARD_CELLS];   /* per cell, six 5-bit counts: THREAT_FIELD(colour, own) */
} threat_lines_t;

/* The unit and the mask of the count of windows with `own` (2..4) stones
 * of colour c in threat_lines_t.cls (a cell lies in 20 windows at most). */
#define THREAT_FIELD(c, own) ((uint32_t)1 << (((c) - 1) * 15 + ((own) - 2) * 5))
#define THREAT_FIELD_MASK(c, own) (THREAT_FIELD(c, own) * 31u)

/* A solver's query in progress; it lives in the solver, reused by each
 * query. */
typedef struct threat_query {
    board_t b;                  /* working copy of the query position */
    threat_lines_t lines;       /* b's windows: every stone goes in through the calls below */
    int att, def;               /* the side to move of the query, the other side */
    uint64_t salt;              /* size and rule in the table key */
    uint64_t nodes, max_nodes;  /* this query's nodes, its budget (0: none) */
    uint64_t total_nodes;       /* all queries' nodes */
    double deadline_ms;         /* 0: none */
    const volatile int *stop;   /* give up once *stop != 0 (NULL: never) */
    bool aborted;               /* the budget ran out */
    int nline;
    int line[THREAT_LINE_MAX];  /* the winning line, from the attacker's first move */
} threat_query_t;

/* A zeroed table of entry_size-byte entries: the largest power-of-two
 * count (at least one) of which twice fits in bytes; *mask gets the count
 * minus one. NULL when out of memory; the caller frees it. */
void *threat_table_alloc(size_t bytes, size_t entry_size, size_t *mask);

/* Start a query on b: the side to move attacks; budgets max_nodes
 * (0: none) and time_ms from now (0: none). */
void threat_begin(threat_query_t *q, const board_t *b, uint64_t max_nodes, double time_ms);

/* Start a query at the position of another query (its board and its
 * windows copied, no rescan), the side to move of that board attacking. */
void threat_begin_at(threat_query_t *q, const threat_query_t *at, uint64_t max_nodes,
                     double time_ms);

/* Stones on the query's board. put/take change a cell alone (a stone put
 * in for one test, taken out after it: hash and history untouched);
 * play/undo are board_play and board_undo (the move must be legal). */
void threat_put(threat_query_t *q, int p, int c);
void threat_take(threat_query_t *q, int p);
void threat_play(threat_query_t *q, int m);
void threat_undo(threat_query_t *q);

/* line_window_points on the query's board, from its windows: the empty
 * cells in a window of five holding `own` (2..4) stones of c and no
 * other, ascending. */
int threat_window_points(const threat_query_t *q, int c, int own, int *out);
/* c's five points (exact under the rule), ascending. */
int threat_five_points(const threat_query_t *q, int c, int *out);

/* The five points c's stone at the empty point p would make through p
 * (board_five_points_near after the stone, where c has no five point
 * before it), from the windows; p is left empty. Returns the count (at
 * most 8). */
int threat_four_at(threat_query_t *q, int c, int p, int *out);
/* The same as if a stone of colour `color` stood at the cell `cell` (not
 * p) too, which the windows do not hold (it is empty, or the caller set
 * that stone in the cell alone; it is left as it was): the solvers'
 * "would this stone spoil, or make, that four" test, without putting the
 * stone in. */
int threat_four_at_with(threat_query_t *q, int c, int p, int cell, int color, int *out);

/* threat_four_at_with along the direction d (line_dx/line_dy) alone:
 * the five points of the four through p on that line. The four's five
 * points on the four lines through p are distinct cells, so the counts
 * of the four directions add up to threat_four_at_with's. */
int threat_four_at_dir(threat_query_t *q, int c, int p, int d, int cell, int color, int *out);
/* The direction (0..3, as line_dx/line_dy) of the line through p and
 * cell when cell lies on it within four of p; -1 otherwise (cell == p
 * too). */
int threat_dir_of(int size, int p, int cell);

/* The empty cells other than p of the windows of five through p that
 * hold exactly `own` stones of c and none of the other colour, as the
 * windows count them (a stone set in a cell alone is not counted), each
 * once; returns the count (at most 80). */
int threat_window_empties_at(const threat_query_t *q, int p, int c, int own, int *out);

/* A four of colour c: the empty cell that makes it and its completion
 * points (the fives it threatens). */
typedef struct threat_four {
    int move;
    int nf;
    int f[2];   /* the first two completion points; nf may be larger */
} threat_four_t;

/* c's fours on the query's board (a point that would make a five is not
 * one), ascending; returns the count. */
int threat_fours(threat_query_t *q, int c, threat_four_t *out);

/* The query of s's last solve, at its position again (vcf.c). */
const threat_query_t *vcf_query(const vcf_t *s);

/* vcf_solve at the position of another query (its windows reused).
 * vcf.c. */
vcf_status_t vcf_solve_at(vcf_t *s, const threat_query_t *at, const vcf_limits_t *lim,
                          vcf_result_t *out);

/* Has the budget run out? Sets and keeps q->aborted. The clock and the
 * stop flag are read when nodes & poll_mask is zero. */
static inline bool threat_over_budget(threat_query_t *q, uint64_t poll_mask)
{
    if (q->aborted)
        return true;
    if (q->max_nodes && q->nodes >= q->max_nodes)
        q->aborted = true;
    else if ((q->nodes & poll_mask) == 0 &&
             ((q->deadline_ms > 0.0 && util_now_ms() >= q->deadline_ms) ||
              (q->stop && __atomic_load_n(q->stop, __ATOMIC_RELAXED) != 0)))
        q->aborted = true;
    return q->aborted;
}

/* The line of the query on b (the query position) as a result: copies
 * it to out_line when won (else nothing), sets *nthreats to its attacker
 * moves (0: an immediate five, or not won), returns its length. */
int threat_line(const threat_query_t *q, const board_t *b, bool won, int *out_line,
                int *nthreats);

/* The position b with the other side to move (the threat to defend
 * against, solved for its attacker); false when the game is over. */
bool threat_flip(const board_t *b, board_t *flip);

/* after: the position after a move of the defender. When that move left
 * the defender a four (exactly one five point) and the attacker, to move,
 * has no five point, the block is forced and the defender moves again:
 * *blocked gets the position after the block and 1 is returned, or 0
 * when the block is not legal (renju) or ends the game (the four holds).
 * -1: no such four (a plain solve of after answers). The solvers' *_reply
 * queries start here. */
int threat_block_four(const board_t *after, board_t *blocked);

/* Set cand[p] for the n points p of pts. */
void threat_mark(uint8_t *cand, const int *pts, int n);

/* Does the threat still win after the defender's move (after is the
 * position after it), in pass `pass` of the defence? */
typedef enum {
    THREAT_STOPPED,   /* no: a defence */
    THREAT_HOLDS,     /* yes: the move is refuted */
    THREAT_OPEN,      /* not decided in this pass: tried again in the next */
    THREAT_UNSURE,    /* counted as a defence without a proof (a budget ran out) */
} threat_verdict_t;
typedef threat_verdict_t (*threat_wins_fn)(void *ctx, const board_t *after, int pass);

/* The defender to move in b against a threat line[0..nline): marks the
 * points within reach of a move of the line on its rays as candidates
 * too (cand holds the caller's own), and writes the legal candidates to
 * out, nearest the line's first move first; returns their count. A move
 * that is no candidate leaves the line's threats as they were. */
int threat_candidates(const board_t *b, const int *line, int nline, int reach, uint8_t *cand,
                      int *out);

/* The defender to move in b against a threat line[0..nline): marks the
 * points within reach of a move of the line on its rays as candidates
 * too (cand holds the caller's own); asks wins() of each legal candidate,
 * nearest the line's first move first, then, in passes 1..passes-1, again
 * of those still open; writes to out, ascending, the candidates it never
 * called refuted (open after the last pass counts as a defence), and
 * returns their count. unproven (may be NULL; indexed by point) gets 1 at
 * each defence not called THREAT_STOPPED (open, or THREAT_UNSURE), 0
 * elsewhere. */
int threat_defences(const board_t *b, const int *line, int nline, int reach, uint8_t *cand,
                    int passes, threat_wins_fn wins, void *ctx, int *out, uint8_t *unproven);

#endif
