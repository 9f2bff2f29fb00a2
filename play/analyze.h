/* The analysis engine (gomoku analyze), in the manner of KataGo's: JSON
 * queries in, one per line; JSON answers out, one line each, as each
 * search finishes. The format is in README ("gomoku analyze").
 *
 * Threads: the caller's thread reads and checks queries (analyze_run) and
 * puts good ones on a bounded queue (ANALYZE_QUEUE_MAX; the reader waits
 * when it is full); `workers` threads each take a query, search it on
 * their own searcher (play/searcher.h: its own trees, nets and NN cache;
 * `threads` search threads per query), and write the answer. A bad line is
 * answered at once by the reader with {"id":..., "error": "..."}; answers
 * are whole lines, written under one lock and flushed.
 *
 * Every query starts from a fresh tree, so an answer does not depend on
 * the queries before it (only the NN cache carries over: its priors are
 * rounded to 16 bits, so a repeated query may differ in the last digits). */
#ifndef GZ_PLAY_ANALYZE_H
#define GZ_PLAY_ANALYZE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "engine/board.h"
#include "mcts/mcts.h"
#include "nn/nn.h"
#include "play/searcher.h"

#define ANALYZE_LINE_MAX 65536     /* longer query lines are refused */
#define ANALYZE_QUEUE_MAX 1024     /* queries waiting for a worker */
#define ANALYZE_MAX_WORKERS 64
#define ANALYZE_MAX_CANDIDATES 64
#define ANALYZE_ID_MAX 256         /* an id's JSON text, in bytes */
#define ANALYZE_MAX_VISITS 10000000
#define ANALYZE_MAX_TIME_MS 86400000

/* A root move as analysis reports it (pbrain or serve could print the same). */
typedef struct analyze_cand {
    int move;
    uint32_t visits;
    float q;          /* mean value, root side's view; +-1 when proven */
    float prior;
    int proven;       /* +1: this move wins for the root side, -1: it loses, 0: not proven */
    int npv;
    int pv[MCTS_PV_MAX];   /* the move, then the best line after it */
} analyze_cand_t;

/* The root's best k moves after a search whose result is r: proven wins
 * first, then by visits (ties: prior; mcts_rank_children), proven losses
 * last; a move is
 * listed when it was visited or is proven (a root proven lost makes every
 * move a proven loss; a root proven won makes r->best_move a proven win).
 * Returns how many (<= k). */
int analyze_candidates(const mcts_t *t, const mcts_result_t *r, analyze_cand_t *out, int k);

typedef struct analyze_opts {
    const char *model;     /* a .gzm path, or "mcts:uniform" (no net: tactics only); not copied */
    const char *device;    /* "auto", "cpu", "cuda", ...; not copied */
    nn_precision_t precision;
    int rule;              /* a query's default rule (rule_t); -1: the model's (freestyle without) */
    int size;              /* a query's default size; 0: 15, or the model's board_max if smaller */
    int visits;            /* a query's default visits; 0: time_ms */
    int time_ms;           /* a query's default time when visits is 0 */
    int candidates;        /* a query's default count of candidates */
    int threads;           /* search threads per query, 1..SEARCHER_MAX_THREADS */
    int workers;           /* queries searched at once, 1..ANALYZE_MAX_WORKERS */
    size_t tree_bytes;     /* each worker's search tree; 0: enough for `visits` on the
                            * model's largest board (1 GiB when visits is 0) */
    search_settings_t search;
} analyze_opts_t;

/* device auto, precision auto, the model's rule and size, 400 visits, 5
 * candidates, 1 thread, 2 workers, search_settings_default. */
void analyze_opts_default(analyze_opts_t *o);

typedef struct analyze analyze_t;

/* Load the model and make one searcher per worker. *note (may be NULL)
 * gets what the device and precision choice said and the defaults taken
 * from the model ("" when nothing). NULL with err on a bad option, a model
 * that cannot be read, or a device that cannot run. The strings in o must
 * outlive the engine. */
analyze_t *analyze_create(const analyze_opts_t *o, char *note, size_t notelen, char *err,
                          size_t errlen);
void analyze_free(analyze_t *a);

/* The defaults queries get (after the model's were applied). */
rule_t analyze_rule(const analyze_t *a);
int analyze_size(const analyze_t *a);

/* Read queries from in until end of file and answer each on out; at end
 * of file wait for every query in flight to be answered. Returns 0, or -1
 * when a worker thread cannot be started (err set). */
int analyze_run(analyze_t *a, FILE *in, FILE *out, char *err, size_t errlen);

#endif
