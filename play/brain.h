/* The move chooser behind a protocol engine (gomoku pbrain): a model
 * searched with MCTS on the searcher's one tree, or a built-in bot, with
 * its memory sized from the manager's max_memory, searches bounded by a
 * time budget and a stop flag, tree reuse between moves, and a value for
 * any position (swap2 decisions).
 *
 * Ownership: the brain owns its searcher (nets, cache, tree) and copies
 * the strings of its options. One thread drives it; only *stop may be
 * written by another thread (it is read atomically). */
#ifndef GZ_PLAY_BRAIN_H
#define GZ_PLAY_BRAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/board.h"
#include "mcts/mcts.h"
#include "nn/nn.h"
#include "play/searcher.h"

#define BRAIN_MAX_THREADS 16

typedef struct brain_opts {
    const char *model;    /* "bot:NAME", "mcts:uniform" (no net) or a .gzm path */
    int threads;          /* search threads, 1..BRAIN_MAX_THREADS (each with its own net) */
    const char *device;   /* "auto", "cpu", "cuda", ... */
    nn_precision_t precision;
    uint64_t seed;
    search_settings_t search;   /* c_puct, fpu, VCF checks */
    const char *who;      /* prefix of notes on stderr ("gomoku pbrain"); NULL: quiet */
} brain_opts_t;

typedef struct brain brain_t;

/* What brain_genmove chose, and the search behind it. */
typedef struct brain_move {
    int move;
    int searched;           /* 1: r holds a search's analysis */
    mcts_result_t r;
} brain_move_t;

/* Load the model or bot and warm the nets up (off any move's clock).
 * NULL with a one-line message in err. */
brain_t *brain_create(const brain_opts_t *o, char *err, size_t errlen);
void brain_free(brain_t *br);

bool brain_is_bot(const brain_t *br);
/* Largest board it serves (the model's board_max; BOARD_MAX for bots). */
int brain_board_max(const brain_t *br);

/* The manager's memory limit in bytes (0: none). Tree and cache are
 * resized at once: -1 with err when the limit is too small for a search
 * (moves are then refused until it grows), else 0. Bots need none. */
int brain_set_max_memory(brain_t *br, long long bytes, char *err, size_t errlen);
/* Bytes for tree + cache under the current limit (0 for bots, and when
 * the limit is too small: then err, when not NULL, says why). */
size_t brain_memory_budget(const brain_t *br, char *err, size_t errlen);

/* A search's progress: r holds the root's analysis so far, with playouts,
 * evals and seconds counted from the start of the search. Called on the
 * searching thread between slices of the search; it may read the tree
 * (brain_root_children, brain_child_pv) but not search. */
typedef void (*brain_progress_fn)(void *user, const mcts_result_t *r);
/* From now on, timed model searches of at least 1 ms are cut into slices
 * of interval_ms (>= 1) with fn(user, ...) called after each slice but
 * the last (fn NULL: no slices, no calls). The root's VCT still gets its
 * share of the whole budget. */
void brain_set_progress(brain_t *br, double interval_ms, brain_progress_fn fn, void *user);

/* Search b for budget_ms (below 1 ms: one more visit, the policy's best
 * move or the search's tactics), stopping early when *stop (may be NULL)
 * becomes nonzero. Fills r. 0, or -1 with err. Models only. */
int brain_search(brain_t *br, const board_t *b, double budget_ms, const volatile int *stop,
                 mcts_result_t *r, char *err, size_t errlen);
/* A move for the side to move of b (not over). blocked (may be NULL) marks
 * points it must not play (a continuous game's fixed stones, moves a GUI
 * excluded): a model's search has only the other legal moves as root
 * children (mcts_set_root_filter; all of them when none is left), and the
 * move is the winning point, else the most visited root child, else the
 * free point nearest the centre that is not blocked. 0, or -1 with err
 * ("no legal move", or the search's error). */
int brain_genmove(brain_t *br, const board_t *b, const uint8_t *blocked, double budget_ms,
                  const volatile int *stop, brain_move_t *m, char *err, size_t errlen);
/* The value of b for its side to move after a search of budget_ms; NAN
 * for bots (they have none). *failed is set when the search failed (err). */
double brain_value(brain_t *br, const board_t *b, double budget_ms, const volatile int *stop,
                   int *failed, char *err, size_t errlen);

/* After a model's search: the root's children (mcts_root_children) and
 * the line that starts with a root child (mcts_root_child_pv); 0 for bots. */
int brain_root_children(const brain_t *br, mcts_child_info_t *out, int max);
int brain_child_pv(const brain_t *br, int move, int *pv, int max);

/* The move was played after the brain's genmove: keep its subtree. */
void brain_played(brain_t *br, int move);
/* The game was set to b some other way (a new game, a taken-back move). */
void brain_set_position(brain_t *br, const board_t *b);
/* The brain's generator, for choices a caller makes by seed (bots). */
uint64_t *brain_rng(brain_t *br);

#endif
