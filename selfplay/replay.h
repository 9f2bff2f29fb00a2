/* Replay window and minibatch assembly.
 *
 * replay_t keeps the most recent self-play games whose training positions
 * (the plies with a full search) add up to about `window`; older games are
 * dropped as new ones arrive. A sample is a uniformly drawn position of the
 * window under a random one of the 8 symmetries: the game is replayed up
 * to that ply with every move transformed, encoded with nn_encode, and
 * paired with its targets (the visit distribution, transformed; the game's
 * result for the side to move as win/draw/loss, mixed with the ply's root
 * value when replay_set_value_mix says so). With K policy outputs
 * (nn.h) the policy target has K channels: the visit distribution; the
 * opponent's reply, the game's next move (all zero after the last ply);
 * the soft target, the visit distribution ^ NN_SOFT_POWER renormalized.
 *
 * replay_batcher_t runs CPU threads that keep a few minibatches ready in
 * host buffers it allocates up front, from the caller's allocator (the
 * trainer's: its net's host memory, pinned on CUDA, so the copy to the
 * device reads them directly). The threads never touch a device (design
 * rule 4): the caller's training thread copies a taken batch to its device.
 *
 * Thread safety: replay_add and the batcher's threads may run at once
 * (a reader-writer lock inside replay_t); everything else is for one thread. */
#ifndef GZ_SELFPLAY_REPLAY_H
#define GZ_SELFPLAY_REPLAY_H

#include <stddef.h>
#include <stdint.h>

#include "engine/board.h"
#include "engine/record.h"
#include "nn/nn.h"

typedef struct replay replay_t;

/* window: positions kept. board_max: the net's input size M (>= size).
 * policy_outputs: K, channels of the policy target (1..NN_MAX_POLICY_OUTPUTS).
 * Samples are encoded with the basic feature set until
 * replay_set_features says otherwise. */
replay_t *replay_create(int window, rule_t rule, int size, int board_max, int policy_outputs);
/* The net's input feature set (nn_features_t): samples are encoded with
 * it, batches have its planes. Call before making batches or a batcher. */
void replay_set_features(replay_t *r, int features);
/* The value target of a sampled position (replay_sample) becomes
 * (1 - mix) x the game's result + mix x the root value q of its search,
 * q as win (1 + q) / 2, loss (1 - q) / 2, no draw; mix in 0..1, 0 (the
 * default): the result alone. replay_fill and the losses over a window
 * keep the result alone, so their figures compare across settings. */
void replay_set_value_mix(replay_t *r, double mix);
void replay_free(replay_t *r);

/* Copy rec into the window (the caller keeps rec). Returns the training
 * positions it adds (0 for a game with none, which is not kept), or -1
 * when rec's rule or size is not the window's or memory runs out. */
int replay_add(replay_t *r, const game_record_t *rec);

/* Positions and games now in the window. */
uint64_t replay_positions(replay_t *r);
uint64_t replay_games(replay_t *r);

/* Where a batch's buffers come from: alloc(ctx, bytes), NULL when out of
 * memory, and free(ctx, p). A NULL replay_alloc_t: malloc and free. The
 * allocator must outlive the buffers. */
typedef struct replay_alloc {
    void *(*alloc)(void *ctx, size_t bytes);
    void (*free)(void *ctx, void *p);
    void *ctx;
} replay_alloc_t;

/* One minibatch in host memory; buffers owned by whoever made it. */
typedef struct replay_batch {
    int n;           /* samples */
    int board_max;   /* M */
    int policy_outputs;  /* K */
    int features;    /* input feature set (nn_features_t) */
    float *in;       /* (n, P, M, M), P = nn_feature_planes(features) */
    float *policy;   /* (n, K, M*M): visit distribution (sums to 1), opponent's reply
                      * (one-hot or all zero), soft target (sums to 1) */
    float *value;    /* (n, 3) win/draw/loss for the side to move */
    replay_alloc_t alloc;   /* what the buffers came from (all NULL: malloc) */
} replay_batch_t;

/* Allocate / free the buffers of a batch of n with K policy channels and
 * the basic feature set's planes, from a (NULL: malloc); _features: those
 * of feature set f. 0 or -1 (out of memory). */
int replay_batch_alloc(replay_batch_t *b, int n, int board_max, int policy_outputs,
                       const replay_alloc_t *a);
int replay_batch_alloc_features(replay_batch_t *b, int n, int board_max, int policy_outputs,
                                int features, const replay_alloc_t *a);
void replay_batch_release_buffers(replay_batch_t *b);

/* Fill b->n samples drawn from the window, with random symmetries, using
 * and advancing *rng. Returns 0, or -1 when the window is empty. */
int replay_sample(replay_t *r, replay_batch_t *b, uint64_t *rng);

/* Fill samples 0..n-1 of b (n <= b->n) with the window's positions
 * first..first+n-1 in order (oldest game first, its full plies in order),
 * untransformed. Returns how many it filled (fewer past the end). */
int replay_fill(replay_t *r, replay_batch_t *b, uint64_t first, int n);

/* Mean policy and value loss (channel 0 and the value head; no L2: total =
 * policy + value) of net over every position of the window, untransformed,
 * in batches of the net's max batch. The net's board max, feature set and
 * policy outputs must be the window's. 0, or -1 with err. Allocates one
 * batch. */
int replay_loss(replay_t *r, nn_net_t *net, nn_losses_t *out, char *err, size_t errlen);

/* Held-out loss of model m on every training position (full search) of
 * the games in files (its rule; games of another rule or size are
 * skipped and counted, as are bad frames): replay_loss on a CPU net of
 * `threads` (0: all cores). 0, or -1 with err (a file or the net). */
typedef struct replay_loss_report {
    nn_losses_t loss;
    uint64_t games, positions, skipped;
} replay_loss_report_t;
int replay_model_loss(const nn_model_t *m, const char *const *files, int nfiles, int threads,
                      replay_loss_report_t *out, char *err, size_t errlen);

typedef struct replay_batcher replay_batcher_t;

/* threads >= 1 assembler threads keep up to nbuf >= 2 batches of `batch`
 * ready once the window holds at least min_positions, in buffers from a
 * (NULL: malloc). NULL when out of memory or a thread cannot start. */
replay_batcher_t *replay_batcher_create(replay_t *r, int batch, int threads, int nbuf,
                                        uint64_t min_positions, uint64_t seed,
                                        const replay_alloc_t *a);
/* Stops and joins the threads, frees the buffers. */
void replay_batcher_free(replay_batcher_t *bt);

/* A ready batch, waiting for one if needed (call only once the window
 * holds min_positions, or it waits until it does). Hand it back with
 * replay_batcher_release before taking the next. */
replay_batch_t *replay_batcher_take(replay_batcher_t *bt);
void replay_batcher_release(replay_batcher_t *bt, replay_batch_t *b);

/* Samples assembled so far, and the threads' busy seconds (for bench). */
void replay_batcher_stats(replay_batcher_t *bt, uint64_t *samples, double *busy_s);

/* Wake the threads after replay_add (they sleep while the window is short). */
void replay_batcher_notify(replay_batcher_t *bt);

#endif
