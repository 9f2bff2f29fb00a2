/* Batched self-play: G concurrent games in one process, each with its own
 * MCTS tree; every step gathers one leaf per game (or several with virtual
 * loss) and evaluates them in ONE batched NN call. Used by `gomoku selfplay`
 * and by the training workers (`gomoku worker`).
 *
 * The caller owns the model; selfplay_t owns its searcher (net, cache,
 * one tree per game; play/searcher.h) and records. One thread drives it.
 *
 * The search sees threats as mcts.h describes (threat pruning, VCF at each
 * leaf, the root's VCT within vct_root_nodes solver nodes, by default
 * SELFPLAY_VCT_ROOT_NODES); the root's defence solve is off by default
 * (vct_defend_nodes 0), so a move costs about what its search does. */
#ifndef GZ_SELFPLAY_H
#define GZ_SELFPLAY_H

#include <stdint.h>

#include "engine/board.h"
#include "engine/record.h"
#include "nn/nn.h"
#include "play/searcher.h"
#include "selfplay/args.h"

#define SELFPLAY_VCT_ROOT_NODES 2000

/* Random balanced openings (selfplay_opts_t.open_*): at most this many
 * stones, within this many points (Chebyshev) of the centre; an opening
 * whose first search is too one-sided is redrawn this many times in all,
 * then the game starts from the empty board. */
#define SELFPLAY_OPEN_STONES_MAX 12
#define SELFPLAY_OPEN_RADIUS 3
#define SELFPLAY_OPEN_TRIES 8

typedef struct selfplay_opts {
    rule_t rule;
    int size;
    int parallel;            /* G: concurrent games */
    int visits;              /* full-search playouts */
    const char *patnet;      /* a pattern net file to search with instead of the model's net
                              * (NULL: the net); the model still fixes rule and size */
    int cheap_visits;        /* playout-cap randomization: cheap-search playouts */
    double full_frac;        /* fraction of moves that get a full search (1: all) */
    double dirichlet_alpha;  /* root noise (0.0 disables) */
    double noise_frac;       /* weight of the noise in the root priors */
    int temp_moves;          /* plies sampled with temperature 1, then argmax-ish */
    double temp_final;       /* temperature after temp_moves */
    double resign_threshold; /* resign when the root value < -threshold (0 disables) */
    double no_resign_frac;   /* fraction of games that never resign */
    uint64_t seed;
    const char *device;      /* "auto", "cpu", "cuda", ... */
    nn_precision_t precision; /* inference precision of the net */
    int threads;             /* CPU backend threads (0: all cores) */
    int cache_mb;            /* NN cache size */
    int quiet;               /* no device note on stderr */
    int leaves_per_game;     /* leaves per tree per step, with virtual loss (0: 1) */
    double forced_k;         /* forced playouts in full searches, pruned from the recorded
                              * policy target (mcts_params_t.forced_k); 0: off */
    int gumbel;              /* the Gumbel root's candidates (mcts_params_t.gumbel_m):
                              * its draw is noised for the temp_moves plies, in place
                              * of root noise and temperature; 0: PUCT at the root */
    double gumbel_scale;     /* its c_scale (mcts_params_t.gumbel_scale) */
    /* Asymmetric games: a fraction strong_frac of the games has a strong
     * side, black or white at even odds, whose full searches get
     * strong_visits playouts (at least visits) where the other side's get
     * visits; cheap searches stay cheap. The weak side meets attacks its
     * own search would not find, and the games' results say where its net
     * judged wrong. 0: every game symmetric. */
    double strong_frac;
    int strong_visits;
    /* League games: a fraction opponent_frac of the games (drawn before the
     * strong side; such a game has none) has one side, black or white at
     * even odds, played by another pattern net, the file `opponent` (an
     * earlier generation, say), with the same playouts and settings. Each
     * side searches its own tree. The opponent's plies are recorded as
     * cheap ones: no policy target, so the net learns its own moves, and
     * its value learns from games against a player that is not itself.
     * 0: none (and the opponent is not read). */
    const char *opponent;
    double opponent_frac;
    /* Balanced openings: a fraction open_frac of the games starts from
     * 1..open_stones random stones near the centre (plies recorded as
     * neither full nor cheap: no search, no visits; the record carries
     * RECORD_FLAG_OPENING). The first search of such a game is a cheap
     * one; when its root value is outside -open_balance..open_balance the
     * opening is drawn again. Gives the net positions where either side
     * can win, instead of the empty board's openings that black mostly
     * wins. */
    double open_frac;
    int open_stones;
    double open_balance;
    /* The threat search, in solver nodes (never time: the records stay a
     * function of the seed): the root's VCT, and each solve of the root's
     * defence against the opponent's VCT (mcts_params_t); 0: off. A
     * cheap search's root (playout-cap randomization) gets vct_cheap_nodes
     * instead, at most vct_root_nodes: a win it misses is usually still
     * there at the side's next move, most of whose searches may be full. */
    int vct_root_nodes;
    int vct_cheap_nodes;
    int vct_defend_nodes;
    search_settings_t search; /* c_puct, fpu, VCF checks */
} selfplay_opts_t;

/* 0 when o is a valid set of options, else -1 and "self-play options: why"
 * (what selfplay_create refuses; gomoku train asks before its workers do). */
int selfplay_check_opts(const selfplay_opts_t *o, char *err, size_t errlen);
/* The table's defaults, noise fraction 0.25, temperature 0 after temp_moves. */
void selfplay_opts_default(selfplay_opts_t *o);
/* Every option but device's (a group, selfplay/args.h): gomoku selfplay
 * and its bench take device with their own default. */
int selfplay_args(arg_spec_t *out, selfplay_opts_t *o);

typedef struct selfplay_stats {
    uint64_t games;          /* finished games */
    uint64_t moves;          /* plies played */
    uint64_t evals;          /* positions evaluated by the net */
    uint64_t batches;        /* NN calls */
    uint64_t cache_hits;
    uint64_t resigns;
    uint64_t false_resigns;  /* no-resign games the would-be resigner did not lose */
    uint64_t no_resign_games;
    uint64_t openings;          /* games started from a balanced random opening */
    uint64_t openings_redrawn;  /* openings drawn again (too one-sided) */
    uint64_t openings_given_up; /* games that fell back to the empty board */
    uint64_t vct_checks;     /* the threat search's VCT solves (root VCTs; mcts_vct_checks) */
    uint64_t vct_wins;       /* of them, wins found */
    uint64_t vct_defences;   /* roots searched among the refutations of the opponent's VCT */
    uint64_t results[4];     /* by result_t */
    uint64_t strong_games[2]; /* games with a strong side (strong_frac): [0] black's, [1] white's */
    uint64_t strong_wins[2];  /* of them, won by the strong side */
    uint64_t opponent_games[2]; /* league games (opponent_frac): [0] the opponent's as black, [1] as white */
    uint64_t opponent_wins[2];  /* of them, won by the opponent */
} selfplay_stats_t;

typedef struct selfplay selfplay_t;

/* model NULL: a freshly initialised random net is not made here; pass one.
 * gen is stored in each record. NULL with err set on failure (bad device,
 * model for a smaller board than opts->size, ...). */
selfplay_t *selfplay_create(const selfplay_opts_t *o, const nn_model_t *model, uint64_t gen,
                            char *note, size_t notelen, char *err, size_t errlen);
void selfplay_free(selfplay_t *sp);
/* The searcher options self-play searches with for o (one tree per game;
 * o's search settings, threat budgets, forced playouts and Gumbel root):
 * the same trees for another caller (gomoku bench targets). */
void selfplay_searcher_opts(const selfplay_opts_t *o, searcher_opts_t *out);
/* selfplay_create for a command: model m (its generation goes into the
 * records) is freed here; the device note goes to stderr, a failure as
 * "gomoku CMD: why". NULL on failure. */
selfplay_t *selfplay_start(const selfplay_opts_t *o, nn_model_t *m, const char *cmd);

/* Called for each finished game; the record is valid during the call only.
 * Return nonzero to make selfplay_step return early (after this game). */
typedef int (*selfplay_game_fn)(void *user, const game_record_t *rec);

/* Advance every game by one batched evaluation. Returns the number of
 * games finished in this step, or -1 with err set on failure. */
int selfplay_step(selfplay_t *sp, selfplay_game_fn on_game, void *user, char *err, size_t errlen);

/* Switch to new weights (same config): searches from now on use them,
 * the cache is cleared, new records carry gen. 0 or -1 with err. */
int selfplay_set_model(selfplay_t *sp, const nn_model_t *model, uint64_t gen, char *err,
                       size_t errlen);

void selfplay_get_stats(const selfplay_t *sp, selfplay_stats_t *out);

/* Start no new game once n games have been started in all (0: no limit);
 * games under way go on. With selfplay_active, lets a caller play exactly
 * n games, or wind down (stop starting games, finish those in flight). */
void selfplay_set_max_games(selfplay_t *sp, uint64_t n);
/* Games under way now. */
int selfplay_active(const selfplay_t *sp);

#endif
