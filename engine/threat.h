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

/* A solver's query in progress; it lives in the solver, reused by each
 * query. */
typedef struct threat_query {
    board_t b;                  /* working copy of the query position */
    int att, def;               /* the side to move of the query, the other side */
    uint64_t salt;              /* size and rule in the table key */
    uint64_t nodes, max_nodes;  /* this query's nodes, its budget (0: none) */
    uint64_t total_nodes;       /* all queries' nodes */
    double deadline_ms;         /* 0: none */
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

/* Has the budget run out? Sets and keeps q->aborted. The clock is read
 * when nodes & poll_mask is zero. */
static inline bool threat_over_budget(threat_query_t *q, uint64_t poll_mask)
{
    if (q->aborted)
        return true;
    if (q->max_nodes && q->nodes >= q->max_nodes)
        q->aborted = true;
    else if (q->deadline_ms > 0.0 && (q->nodes & poll_mask) == 0 &&
             util_now_ms() >= q->deadline_ms)
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

/* Set cand[p] for the n points p of pts. */
void threat_mark(uint8_t *cand, const int *pts, int n);

/* Does the threat still win after the defender's move (after is the
 * position after it)? */
typedef bool (*threat_wins_fn)(void *ctx, const board_t *after);

/* The defender to move in b against a threat line[0..nline): marks the
 * points within reach of a move of the line on its rays as candidates
 * too (cand holds the caller's own), then writes to out, ascending, the
 * legal candidates after which wins() says no, and returns their count. */
int threat_defences(const board_t *b, const int *line, int nline, int reach, uint8_t *cand,
                    threat_wins_fn wins, void *ctx, int *out);

#endif
