/* The searcher: a model's net(s), the evaluator(s) in front of them with
 * their hash cache, and the search tree(s), built in one place and sized
 * by mcts. Self-play, the model players and the pbrain engine all search
 * through one.
 *
 * One object, two shapes:
 *  - play: one tree searched by T threads (searcher_search), each thread
 *    with its own net and evaluator, so their NN calls overlap;
 *  - self-play: G trees, one per game, advanced together by searcher_step:
 *    up to `batch` leaves from each tree, ONE batched NN call for all of
 *    them, then every tree gets its rows back.
 * Without a model it searches with the uniform evaluator (tests, benches,
 * pbrain's `mcts:uniform`).
 *
 * The NN cache (nn/eval.h) sits in front of the net: keyed by Zobrist hash,
 * rule and size, shared by every tree and search thread of the searcher,
 * cleared by searcher_set_model. A cache hit is answered while the leaf is
 * selected, so it costs no batch slot and no NN call.
 *
 * Ownership: the searcher copies the model's weights into its nets and owns
 * nets, evaluators, cache and trees; trees handed out by searcher_tree stay
 * the searcher's. One thread drives a searcher (searcher_search starts and
 * joins its own helper threads). */
#ifndef GZ_PLAY_SEARCHER_H
#define GZ_PLAY_SEARCHER_H

#include <stddef.h>
#include <stdint.h>

#include "engine/board.h"
#include "mcts/mcts.h"
#include "nn/nn.h"

#define SEARCHER_MAX_THREADS 16
#define SEARCHER_MAX_BATCH 64
#define SEARCH_BATCH_DEFAULT 8   /* leaves per net call of a player's search thread */

/* What a user may choose of a search (rows of the settings table); the
 * defaults are mcts_params_default's. */
typedef struct search_settings {
    double c_puct;        /* PUCT exploration */
    double fpu;           /* first-play-urgency reduction below the root */
    double fpu_root;      /* the same at the root */
    int vcf_nodes;        /* VCF check per new leaf, solver nodes (0: off) */
    int vcf_root_nodes;   /* the same once per root (0: off) */
    int vct_nodes;        /* VCT check per new leaf (0: off) */
    int vct_depth;        /* that check's threats at most (0: all) */
    int vct_root_nodes;   /* the root's VCT (0: off) */
    int vct_defend_nodes; /* each solve of the root's defence (0: off) */
    double vct_share;     /* of a timed search: the root's VCT */
    double vct_defend_share; /* of a timed search: the root's defence */
    int vct_verify_nodes; /* the end of a timed search: its move checked (0: off) */
    double vct_verify_share; /* of a timed search: that check */
    int vct_quiet_nodes;  /* that check's look for a quiet win, each solve (0: off) */
    int vct_watch_nodes;  /* a timed search's thread checking its best moves, each solve (0: off) */
    int vct_watch_quiet_nodes; /* that thread's look for the opponent's quiet win, each solve (0: off) */
    int threat_prune;     /* 1: facing a three, only its stops and own fours */
    double pattern_prior; /* the prior share given by line patterns (0: the net alone) */
    double policy_temp;   /* the policy raised to 1 / policy_temp for the priors (1: as it is) */
    double minimax_mix;   /* a child's Q: this share from the minimax of net values (0: mean) */
    double select_lcb;    /* the move played: value less K / sqrt(visits) (0: most visits) */
    int batch;            /* leaves per net call of each search thread (searcher_opts_t.batch) */
    int symmetry;         /* the net's view of each position (searcher_opts_t.symmetry) */
    int root_symmetry;    /* 1: the root's priors from all 8 views (searcher_opts_t) */
    const char *root_net; /* with a pattern net: the root's net (searcher_opts_t), NULL: none */
    int root_net_plies;   /* the root net's nodes: those within this many plies of the root */
    const char *ensemble; /* with a pattern net: more pattern nets, comma-separated (searcher_opts_t) */
} search_settings_t;

void search_settings_default(search_settings_t *s);
/* s into p's c_puct, fpu_reduction, fpu_root, VCF and VCT budgets, threat pruning. */
void search_settings_apply(const search_settings_t *s, mcts_params_t *p);

typedef struct searcher_opts {
    const char *device;     /* "auto", "cpu", "cpu-ref", "cuda", "cuda:N" (copied) */
    nn_precision_t precision; /* inference precision of the nets (nn_net_set_precision) */
    int search_threads;     /* T: threads on one tree, 1..SEARCHER_MAX_THREADS (1 when trees > 1) */
    int net_threads;        /* CPU backend threads per net (0: all cores) */
    int trees;              /* G: 1 for play, one per game for self-play */
    int batch;              /* leaves per tree (per thread) per NN call, virtual loss; 1..64 */
    int symmetry;           /* which of each position's symmetries the net sees: 0 none, 1 one
                             * fixed by its hash, 8 all averaged (nn/eval.h's NN_SYM_*) */
    int root_symmetry;      /* 1: each search of searcher_search first evaluates its root
                             * under all 8 symmetries, averaged: a new root is expanded
                             * with that policy, a kept one gets it (mcts_set_root_policy) */
    int size;               /* board size the trees are sized for; <= the model's board_max */
    uint32_t visits;        /* root visits one search aims at, for sizing (0: time-limited) */
    size_t tree_bytes;      /* per tree; 0: mcts_tree_bytes(visits, size), 1 GiB when visits is 0 */
    size_t cache_bytes;     /* NN cache for the whole searcher (0: no cache) */
    const char *patnet;     /* a pattern net file (nn/patnet.h) to evaluate with instead of a
                             * model's net (NULL: none); loaded by searcher_create */
    const char *root_net;   /* with patnet: a weights file (.gzm) whose net values each
                             * search's root under all 8 symmetries for its priors (the
                             * pattern net values the rest); loaded by searcher_create */
    int root_net_plies;     /* 0..2: the root net also values every node within this many
                             * plies of the root, its priors and value (one net a search
                             * thread; the pattern net values the deeper ones) */
    const char *ensemble;   /* with patnet: up to PATNET_ENSEMBLE_MAX - 1 more pattern net
                             * files, comma-separated, for patnet's rule; every position's
                             * priors and value are the mean of all the nets' (NULL: none);
                             * loaded by searcher_create */
    mcts_params_t mcts;     /* c_puct, fpu, seed (tree i gets seed + i); mem_bytes and
                             * max_pending are set by the searcher */
} searcher_opts_t;

/* device auto, precision auto, 1 search thread, all cores per net, 1 tree, batch SEARCH_BATCH_DEFAULT, 15x15,
 * visits 0, tree_bytes 0, 64 MiB cache, mcts_params_default. */
void searcher_opts_default(searcher_opts_t *o);
/* A player's settings into o: s's batch and symmetries, and the rest into
 * o->mcts (search_settings_apply). */
void searcher_opts_apply(searcher_opts_t *o, const search_settings_t *s);

typedef struct searcher searcher_t;

/* Nets (one per search thread; max batch trees * batch, 8 times that
 * under symmetry 8), evaluators, cache
 * and trees, each tree's root an empty board of o->size, freestyle.
 * model NULL: the uniform evaluator, no net. *note (may be NULL) gets the
 * device choice line of nn_net_create and the precision one of
 * nn_net_set_precision, joined by "; " ("" when there is nothing to say).
 * NULL with err set on a bad option, a model for boards smaller than
 * o->size, a device that cannot run, or no memory. */
searcher_t *searcher_create(const nn_model_t *model, const searcher_opts_t *o, char *note,
                            size_t notelen, char *err, size_t errlen);
void searcher_free(searcher_t *s);

/* New weights of the same shape for every net; the cache is cleared (the
 * trees are kept: the caller decides whether to restart them); precision
 * auto is decided again for the new weights. 0, or -1 with err (another
 * shape, or the searcher has no net). */
int searcher_set_model(searcher_t *s, const nn_model_t *model, char *err, size_t errlen);

/* Remake the trees with tree_bytes each and the cache with cache_bytes (0:
 * none); the trees start over from an empty board. For a memory limit that
 * changes during a session (pbrain INFO max_memory). 0, or -1 with err:
 * then the searcher has no trees until a call succeeds. */
int searcher_set_memory(searcher_t *s, size_t tree_bytes, size_t cache_bytes, char *err,
                        size_t errlen);

/* Search position b on tree 0 with the searcher's T threads: the tree is
 * kept when b is its root or follows it by one or two moves (mcts_sync_root),
 * else restarted. lim as for mcts_search; lim->batch 0 means o->batch.
 * out describes the root afterwards (best move, value, PV, visits).
 * 0, or -1 with err (b larger than the net serves, no trees). */
int searcher_search(searcher_t *s, const board_t *b, const mcts_limits_t *lim,
                    mcts_result_t *out, char *err, size_t errlen);

/* Self-play step: for each tree i with targets[i] > 0, select up to batch
 * leaves towards targets[i] root visits (mcts_gather), evaluate the leaves
 * of all trees in one batched call, and deliver each tree its rows.
 * targets[i] == 0 leaves tree i alone. Returns the positions evaluated. */
int searcher_step(searcher_t *s, const uint32_t *targets);

/* Tree i (0 <= i < searcher_trees), for root set-up, noise, moves and
 * analysis between searches; owned by the searcher. */
int searcher_trees(const searcher_t *s);
mcts_t *searcher_tree(searcher_t *s, int i);

/* Win/draw/loss probabilities of the net for boards[0..n-1] (side to move
 * of each) into wdl[i * 3 + {0,1,2}]; without a net, {0.5, 0, 0.5}. Runs
 * on the first search thread's net: call it between searches, from the
 * thread that drives the searcher. */
void searcher_wdl(searcher_t *s, const board_t *const *boards, int n, float *wdl);

/* Largest board the evaluator serves (the model's board_max; BOARD_MAX
 * without a model), and the device of the nets ("uniform" without). */
int searcher_board_max(const searcher_t *s);
const char *searcher_device(const searcher_t *s);
/* The rule the pattern net in use was trained for (searcher_opts_t.patnet);
 * -1 when a net or nothing evaluates. */
int searcher_patnet_rule(const searcher_t *s);

/* The first stone of a game, which a model's players (the pbrain
 * engine's plain moves, match and play) put down without a search: the
 * centre of an empty board; MOVE_NONE once a stone is down. A pattern net
 * sees no pattern on an empty board, so it cannot rank the first stone's
 * points (the shipped ones put it near the edge), and the centre is where
 * strong players put it (renju's rules demand it). */
int searcher_first_move(const board_t *b);

typedef struct searcher_stats {
    uint64_t evals;          /* positions the net evaluated */
    uint64_t nn_calls;       /* batched forward calls */
    uint64_t cache_hits;     /* leaves answered by the cache */
    uint64_t cache_lookups;
} searcher_stats_t;
void searcher_get_stats(const searcher_t *s, searcher_stats_t *out);

#endif
