/* Balanced moves; see balance.h. */
#include "play/balance.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "mcts/mcts.h"

typedef struct cand {
    int moves[2];
    double est;       /* estimated value after the moves, side to move then */
    double dist;      /* |est - target| */
    uint32_t visits;  /* of the estimate */
} cand_t;

static int by_dist(const void *a, const void *b)
{
    const cand_t *x = a, *y = b;
    if (x->dist != y->dist)
        return x->dist < y->dist ? -1 : 1;
    return (x->visits < y->visits) - (x->visits > y->visits);
}

static int by_visits(const void *a, const void *b)
{
    const mcts_child_info_t *x = a, *y = b;
    if (x->visits != y->visits)
        return x->visits > y->visits ? -1 : 1;
    return (x->prior < y->prior) - (x->prior > y->prior);
}

static bool stopped(const volatile int *stop)
{
    return stop && __atomic_load_n(stop, __ATOMIC_RELAXED) != 0;
}

static bool allowed(const board_t *b, const uint8_t *avoid, int m)
{
    return (!avoid || !avoid[m]) && board_check_move(b, m) == MOVE_OK;
}

/* The searched root's children as candidates after `first` (MOVE_NONE: the
 * root is the position itself): est = -Q, the view of the side to move
 * after the child. Appends at most max of them, closest first. */
static int children_as_cands(const brain_t *br, const board_t *root, const uint8_t *avoid,
                             int first, double target, cand_t *out, int max)
{
    mcts_child_info_t ch[BOARD_CELLS];
    cand_t tmp[BOARD_CELLS];
    int n = brain_root_children(br, ch, BOARD_CELLS), k = 0;
    for (int i = 0; i < n; i++) {
        if (ch[i].visits == 0 || !allowed(root, avoid, ch[i].move))
            continue;
        cand_t *c = &tmp[k++];
        c->moves[0] = first == MOVE_NONE ? ch[i].move : first;
        c->moves[1] = first == MOVE_NONE ? MOVE_NONE : ch[i].move;
        c->est = -ch[i].q;
        c->dist = fabs(c->est - target);
        c->visits = ch[i].visits;
    }
    qsort(tmp, (size_t)k, sizeof tmp[0], by_dist);
    if (k > max)
        k = max;
    for (int i = 0; i < k; i++)
        out[i] = tmp[i];
    return k;
}

/* b after the candidate's moves; false when one is not legal. */
static bool play_cand(const board_t *b, const cand_t *c, int nmoves, board_t *after)
{
    *after = *b;
    for (int i = 0; i < nmoves; i++)
        if (board_play(after, c->moves[i]) != MOVE_OK)
            return false;
    return true;
}

int balance_search(brain_t *br, const board_t *b, int nmoves, double target, double budget_ms,
                   const volatile int *stop, const uint8_t *avoid, balance_note_fn note,
                   void *user, balance_result_t *out, char *err, size_t errlen)
{
    if (brain_is_bot(br)) {
        snprintf(err, errlen, "a bot has no values to balance by");
        return -1;
    }
    if (nmoves != 1 && nmoves != 2) {
        snprintf(err, errlen, "balancing takes 1 or 2 moves, not %d", nmoves);
        return -1;
    }
    if (budget_ms < 1.0)
        budget_ms = 1.0;
    double round1 = budget_ms * BALANCE_ROUND1;
    cand_t cands[BALANCE_FIRST * BALANCE_SECOND + BALANCE_CHECKS];
    int nc = 0;
    brain_move_t m;
    /* the position's own search: its children estimate one move, its most
     * visited children are the first moves of two */
    if (brain_genmove(br, b, avoid, nmoves == 1 ? round1 : round1 / 2, stop, &m, err, errlen))
        return -1;
    if (nmoves == 1) {
        nc = children_as_cands(br, b, avoid, MOVE_NONE, target, cands, BALANCE_CHECKS);
    } else {
        mcts_child_info_t ch[BOARD_CELLS];
        int n = brain_root_children(br, ch, BOARD_CELLS), nfirst = 0;
        qsort(ch, (size_t)n, sizeof ch[0], by_visits);
        int first[BALANCE_FIRST];
        for (int i = 0; i < n && nfirst < BALANCE_FIRST; i++)
            if (allowed(b, avoid, ch[i].move))
                first[nfirst++] = ch[i].move;
        for (int i = 0; i < nfirst && !stopped(stop); i++) {
            board_t after = *b;
            board_play(&after, first[i]);
            if (board_over(&after))
                continue;
            int failed;
            brain_value(br, &after, round1 / 2 / nfirst, stop, &failed, err, errlen);
            if (failed)
                return -1;
            nc += children_as_cands(br, &after, avoid, first[i], target, cands + nc,
                                    BALANCE_SECOND);
        }
        qsort(cands, (size_t)nc, sizeof cands[0], by_dist);
        if (nc > BALANCE_CHECKS)
            nc = BALANCE_CHECKS;
    }
    if (nc == 0) {
        /* nothing estimated (stopped at once, or nothing legal beyond the
         * first move): the move the search chose, unchecked */
        out->nmoves = 1;
        out->moves[0] = m.move;
        out->moves[1] = MOVE_NONE;
        out->value = NAN;
        out->checked = 0;
        if (nmoves == 2) {
            snprintf(err, errlen, "no second move to balance with was found");
            return -1;
        }
        return 0;
    }
    int best = 0;
    double best_dist = INFINITY;
    out->checked = 0;
    double each = (budget_ms - round1) / nc;
    for (int i = 0; i < nc && !stopped(stop); i++) {
        board_t after;
        if (!play_cand(b, &cands[i], nmoves, &after))
            continue;
        int failed;
        double v = board_over(&after) ? -1.0 : brain_value(br, &after, each, stop, &failed,
                                                            err, errlen);
        if (!board_over(&after) && failed)
            return -1;
        if (stopped(stop) && i > 0)
            break;   /* cut short: its value is worth less than the others' */
        out->checked++;
        if (note)
            note(user, cands[i].moves, nmoves, v);
        if (fabs(v - target) < best_dist) {
            best_dist = fabs(v - target);
            best = i;
            cands[i].est = v;
        }
    }
    out->nmoves = nmoves;
    out->moves[0] = cands[best].moves[0];
    out->moves[1] = nmoves == 2 ? cands[best].moves[1] : MOVE_NONE;
    out->value = cands[best].est;
    return 0;
}
