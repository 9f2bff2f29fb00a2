/* Time management for a move under a Gomocup-style clock: a limit per
 * move (timeout_turn), a limit per game (timeout_match) with the time
 * left, and a safety margin learned from the latency seen so far.
 *
 * A move gets min(timeout_turn, time_left / max(moves left, 6)) minus a
 * margin = a floor (5 ms + 20% of the limit, at most 100 ms) + the largest
 * latency measured lately (reply time minus search budget: queueing,
 * parsing, setup, search overrun and output; it decays by 10% a move), the
 * whole margin at most 45% of the limit, so a stall costs the next moves
 * part of their search, never all of it. timeout_turn 0, or a budget under
 * 1 ms, means: play at once (budget 0).
 *
 * A plain value: the caller owns it and sets the clock fields as the
 * manager reports them. */
#ifndef GZ_PLAY_MOVETIME_H
#define GZ_PLAY_MOVETIME_H

#include "engine/board.h"

#define MOVETIME_UNLIMITED 2147483647LL   /* time_left when the match time is unlimited */
#define MOVETIME_DEFAULT_TURN_MS 5000     /* no timeout_turn given: a human is playing */

typedef struct movetime {
    long long timeout_turn;     /* ms per move, -1 not given */
    long long timeout_match;    /* ms per game, 0 no limit */
    long long time_left;        /* ms, MOVETIME_UNLIMITED when not given */
    double lat_est;             /* the largest recent latency, decaying each move (ms) */
    int nlat;                   /* latencies recorded */
} movetime_t;

/* No limits given yet, nothing measured. */
void movetime_init(movetime_t *mt);
/* The search budget of the next move on b (ms; 0: play at once). */
double movetime_budget_ms(const movetime_t *mt, const board_t *b);
/* The margin inside that figure (ms). */
double movetime_margin_ms(const movetime_t *mt, const board_t *b);
/* A move was answered: it started at t0 (util_now_ms) with `budget` ms of
 * search; what went beyond the budget is this move's latency. */
void movetime_record(movetime_t *mt, double t0, double budget);

#endif
