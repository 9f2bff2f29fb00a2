/* Time per move; see movetime.h. */
#include "play/movetime.h"

#include "util/util.h"

#define FIRST_LATENCY_MS 5.0          /* prior before anything is measured */
#define LATENCY_DECAY 0.9             /* per move: a stall's latency fades */
#define MARGIN_MAX_SHARE 0.45         /* the margin never takes more of a move's limit */

void movetime_init(movetime_t *mt)
{
    *mt = (movetime_t){.timeout_turn = -1, .time_left = MOVETIME_UNLIMITED};
}

/* Our moves left, roughly: games rarely go past 70 stones. */
static int moves_left(const board_t *b)
{
    int est = (70 - b->nmoves) / 2;
    int free_pts = (board_npoints(b) - b->nmoves + 1) / 2;
    if (est > free_pts)
        est = free_pts;
    return est < 6 ? 6 : est;
}

/* The time the rules let this move take, before the margin (ms). */
static double move_limit_ms(const movetime_t *mt, const board_t *b)
{
    double limit = mt->timeout_turn >= 0 ? (double)mt->timeout_turn : MOVETIME_DEFAULT_TURN_MS;
    if (mt->time_left < MOVETIME_UNLIMITED) {
        double share = mt->time_left > 0 ? (double)mt->time_left / moves_left(b) : 0;
        if (share < limit)
            limit = share;
    }
    return limit;
}

/* A floor for what we cannot see from inside (pipe and scheduling
 * latency) plus the latency measured lately, the whole at most
 * MARGIN_MAX_SHARE of the limit: a stall (a paused process, a slow
 * pipe) costs the next moves some search time, never all of it. */
static double margin_of(const movetime_t *mt, double limit)
{
    double floor_ms = 5.0 + 0.2 * limit;
    if (floor_ms > 100.0)
        floor_ms = 100.0;
    double lat = mt->nlat ? mt->lat_est : FIRST_LATENCY_MS;
    double room = MARGIN_MAX_SHARE * limit - floor_ms;
    if (lat > room)
        lat = room > 0 ? room : 0;
    return floor_ms + lat;
}

double movetime_budget_ms(const movetime_t *mt, const board_t *b)
{
    if (mt->timeout_turn == 0)
        return 0;
    double limit = move_limit_ms(mt, b);
    double budget = limit - margin_of(mt, limit);
    return budget < 1.0 ? 0.0 : budget;
}

double movetime_margin_ms(const movetime_t *mt, const board_t *b)
{
    return margin_of(mt, move_limit_ms(mt, b));
}

void movetime_record(movetime_t *mt, double t0, double budget)
{
    double excess = util_now_ms() - t0 - budget;
    double decayed = mt->lat_est * LATENCY_DECAY;
    mt->lat_est = excess > decayed ? excess : decayed;
    mt->nlat++;
}
