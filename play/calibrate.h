/* Calibration of a net's value head: how its win rate for the side to
 * move matches what happens, in buckets of predicted win rate.
 *
 * Two kinds of truth, from positions of saved games (.gzr):
 *  - exact: the position is solved by the threat solvers: the side to
 *    move has a VCF or VCT (a win, score 1), or the opponent has one and
 *    no move of the side to move refutes it (a loss, score 0);
 *  - outcome: the game's result from the side to move's view (1, 0.5, 0),
 *    for every sampled position.
 * The net's win rate is (value + 1) / 2 of its value head, side to move.
 *
 * Ownership: calibrate_run opens and frees everything it uses; the report
 * is a plain value. */
#ifndef GZ_PLAY_CALIBRATE_H
#define GZ_PLAY_CALIBRATE_H

#include <stddef.h>
#include <stdint.h>

#include "nn/nn.h"

#define CALIB_BUCKETS 10

typedef struct calib_opts {
    const char *model;          /* .gzm path */
    const char *const *files;   /* game record files */
    int nfiles;
    int max_positions;          /* stop after this many sampled positions (0: all) */
    int every;                  /* sample one ply in `every` of each game (>= 1) */
    int skip;                   /* plies skipped at the start of each game */
    uint32_t vct_nodes;         /* solver budget of the win query; a tenth (at least 200)
                                 * for each query of the loss check */
    const char *device;
    nn_precision_t precision;
    int symmetry;               /* the net's view of each position (nn_eval_set_symmetry) */
} calib_opts_t;

typedef struct calib_bucket {
    uint32_t n;                 /* positions whose predicted win rate fell here */
    double pred;                /* sum of predicted win rates */
    double score;               /* sum of outcome scores */
    uint32_t n_exact;           /* of those, solved ones */
    double pred_exact, score_exact;
} calib_bucket_t;

typedef struct calib_report {
    calib_bucket_t b[CALIB_BUCKETS];   /* [k/10, (k+1)/10) of predicted win rate */
    uint32_t positions, exact_wins, exact_losses;
    uint32_t games, bad_records;       /* records read, records skipped as invalid */
    double brier_outcome, brier_exact; /* mean squared error of win rate vs score */
    uint32_t wins_rated_low;           /* exact wins the net rated below 50% */
    uint32_t losses_rated_high;        /* exact losses the net rated above 50% */
} calib_report_t;

/* Sample positions of the games in o->files, solve and evaluate them, and
 * fill *out. 0, or -1 with err (a file or the model does not load; a bad
 * record inside a file is counted and skipped). */
int calibrate_run(const calib_opts_t *o, calib_report_t *out, char *err, size_t errlen);

#endif
