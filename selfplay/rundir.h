/* A training run directory: its config file, its lock, and small files
 * rewritten atomically.
 *
 *   RUN_DIR/config        settings fixed at creation (versioned key=value text)
 *   RUN_DIR/lock          flock'd by the trainer; holds its pid
 *   RUN_DIR/models/       checkpoints NNNNNN.gzm (NNNNNN = training step)
 *   RUN_DIR/games/        shard-NNNNNN.gzr, accepted self-play frames
 *   RUN_DIR/status.json   rewritten atomically about once a second
 *   RUN_DIR/metrics.csv   one row per few steps
 *   RUN_DIR/train.log     events (worker deaths, restarts, checkpoints)
 *   RUN_DIR/workers.log   the workers' stderr */
#ifndef GZ_SELFPLAY_RUNDIR_H
#define GZ_SELFPLAY_RUNDIR_H

#include <stddef.h>
#include <stdint.h>

#include "engine/board.h"

#define RUN_CONFIG_VERSION 1

/* Everything a run is created with. Strings are inline so a config read
 * from disk owns its text. */
typedef struct run_config {
    int version;
    rule_t rule;
    int size;
    int blocks, channels;
    int workers;        /* self-play worker processes */
    int parallel;       /* concurrent games per worker */
    int visits;         /* full-search playouts per move */
    int cheap_visits;   /* playout-cap randomization: playouts of a cheap search */
    double full_frac;   /* fraction of moves searched fully (only those train the policy) */
    double resign;      /* resign below -resign root value (0: never) */
    int batch;          /* training minibatch */
    double lr;
    int checkpoint_every;
    double ratio;       /* training samples per new self-play position */
    int window;         /* replay window, positions */
    uint64_t seed;
    char device[32];    /* "auto", "cpu", "cuda", "cuda:N" */
} run_config_t;

void run_config_default(run_config_t *c);

/* Write c to path atomically; 0 or -1 with err. */
int run_config_save(const run_config_t *c, const char *path, char *err, size_t errlen);
/* Read path into c (starting from defaults); 0 or -1 with a message that
 * names the file and line. Unknown keys and a newer version are errors. */
int run_config_load(run_config_t *c, const char *path, char *err, size_t errlen);

/* Take the run's lock (RUN_DIR/lock, flock, close-on-exec) and write our
 * pid into it. Returns the fd, or -1 with err: "RUN_DIR is in use by pid N"
 * when another process holds it. The lock lasts until the fd is closed or
 * the process dies. */
int run_lock(const char *dir, char *err, size_t errlen);

/* mkdir -p for one level under an existing parent; 0 if it exists. */
int run_mkdir(const char *path, char *err, size_t errlen);

#endif
