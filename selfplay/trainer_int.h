/* Inside the trainer (selfplay/trainer.h): its state and the functions its
 * files share. trainer.c: the run, checkpoints, training steps;
 * trainer_pool.c: the worker processes; trainer_games.c: games on disk;
 * trainer_status.c: status.json, the progress line, metrics.csv. */
#ifndef GZ_SELFPLAY_TRAINER_INT_H
#define GZ_SELFPLAY_TRAINER_INT_H

#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "engine/frame.h"
#include "engine/record.h"
#include "nn/nn.h"
#include "selfplay/broker.h"
#include "selfplay/replay.h"
#include "selfplay/trainer.h"

#define SHARD_GAMES 2000      /* games per shard before rotation */
#define BACKOFF_MAX_S 30.0
#define HEALTHY_S 60.0        /* a worker that lived this long restarts without delay growth */
#define RATE_SNAPS 30         /* rates over the last ~30 s */
#define REMOTE_STATS_MAX 256  /* remote worker ids tracked in status.json (the rest summed) */
#define TRAINER_REMOTE_ACTIVE_S 60.0  /* the progress line counts remote workers heard from this recently */

typedef enum { W_RUNNING, W_BACKOFF, W_STOPPING, W_DONE } wstate_t;

typedef struct wslot {
    int id;
    wstate_t state;
    pid_t pid;
    int rec_fd;          /* read end of its records pipe (nonblocking) */
    int ctl_fd;          /* write end of its control pipe (nonblocking) */
    frame_stream_t *fs;  /* its records pipe, cut into frames */
    double started_at, restart_at, backoff_s;
    double last_seen;    /* last frame or heartbeat (seconds) */
    uint64_t stalls;     /* restarts for silence */
    uint64_t games;      /* accepted, all its lives */
    uint64_t bad_frames; /* rejected, all its lives */
    uint64_t bad_life;   /* rejected in this life (restart past the limit) */
    uint64_t restarts;
    uint64_t partial;    /* partial frames dropped at death */
    uint64_t duplicates; /* games it sent again that were stored already (its spool's) */
    char *acks;          /* "ack WID SEQ" lines not yet written to its control pipe */
    size_t nacks, capacks;
} wslot_t;

typedef struct snap { double t; uint64_t games, positions, samples; } snap_t;

typedef struct trainer {
    const trainer_opts_t *o;
    run_config_t cfg;
    char dir[3072];
    char path[4096];       /* scratch */
    FILE *log;
    int tty;

    nn_model_t *model;
    nn_net_t *net;
    char device[64];
    replay_t *replay;
    replay_batcher_t *batcher;
    nn_train_opts_t topts;
    nn_schedule_t sched;

    uint64_t step, start_step, target, ckpt_step;
    int ckpt_owed;         /* the last checkpoint failed: training waits for a retry */
    double ckpt_retry_at;
    uint64_t generation;
    char model_path[4096]; /* newest checkpoint */
    nn_losses_t last;      /* losses of the newest step */
    double loss_sum[6];   /* policy, value, l2, total, opponent reply, soft policy */
    int loss_n;
    uint64_t min_positions;

    uint64_t games, positions;        /* accepted, all time */
    uint64_t session_games, session_positions, session_samples;
    uint64_t rejected, partial, load_bad;
    uint64_t nonfinite_skipped;       /* steps skipped for a non-finite loss, all session */
    int nonfinite_run;                /* ... in a row */
    float *snapshot;                  /* weights before the current step */
    float *good;                      /* the newest weights proven finite (their l2 was) */
    int have_good;
    int stop_nonfinite;

    /* games/ writes: a failed write pauses the workers (their pipes fill
     * and they block) until a retry succeeds; the game that failed is held
     * here and written first */
    int disk_full;
    int stopping;   /* stopping the workers: read them even while games/ is full */
    double disk_retry_at, disk_since;
    double last_stall_check;  /* trainer_restart_due's last look (0: none yet) */
    uint64_t games_dropped;   /* read and given up: kept by no one we know of (see README) */
    uint64_t games_deferred;  /* read while stopping on a full disk: left in the workers' spools */
    uint8_t *held;            /* the frame that could not be written (held_len > 0) */
    size_t held_len, held_cap;
    int held_slot;            /* the worker it came from */
    char disk_err[256];
    char status_err[512];     /* why status.json could not be written ("" when it was) */
    uint64_t spool_games, spool_dups;  /* taken from workers' spools; of them already stored */
    long fault_enospc_after, fault_enospc_count;  /* tests: GOMOKU_FAULT_ENOSPC=N:M */

    int shard_fd;
    uint64_t shard_index, shard_games;

    wslot_t *w;
    int nw;
    game_record_t rec;
    char state[32];

    /* remote workers through the broker (trainer_broker.c) */
    broker_t *broker;
    broker_batch_t bt;
    broker_ids_t *ids;          /* game ids stored (every game with an id, any source) */
    uint64_t run_id;
    int broker_rereading;       /* re-reading entries received but not acknowledged */
    double broker_said;         /* when the broker's absence was last logged */
    char broker_shown[400];     /* the URL without its password */
    uint64_t broker_games, broker_dups, broker_bad, broker_other_run, broker_oversized;
    struct rstat *rs;           /* per remote worker id, at most REMOTE_STATS_MAX */
    int nrs, caprs;
    struct rstat *rs_evicted;   /* the sums of the entries evicted to keep that bound */
    uint64_t nrs_evicted;

    double t_start, t_status, t_progress;
    int shown_full;             /* disk_full as the last progress line showed it */
    snap_t snaps[RATE_SNAPS];
    int nsnaps;
    double rate_games, rate_positions, rate_samples;
} trainer_t;


/* One line to stderr (over the progress line) and to train.log. */
void trainer_log(trainer_t *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* RUN_DIR/<printf> in t's scratch buffer (valid until the next call). */
const char *trainer_path(trainer_t *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Numbers N of the files "<prefix>NNNNNN<suffix>" in RUN_DIR/sub (its path
 * into dir), sorted descending (*out malloc'd); 0, or -1 with errno and,
 * when err is not NULL, "cannot list DIR: why" in err. */
int trainer_list_numbered(const trainer_t *t, const char *sub, const char *prefix,
                          const char *suffix, char *dir, size_t dirlen, uint64_t **out, size_t *n,
                          char *err, size_t errlen);

/* trainer_games.c: the open shard of RUN_DIR/games, and loading saved games. */
int trainer_shard_open(trainer_t *t, char *err, size_t errlen);
void trainer_shard_sync(trainer_t *t);
int trainer_shard_rotate(trainer_t *t, char *err, size_t errlen);
/* Append one frame; a failed write is cut off again. 0 or -1 with errno. */
int trainer_shard_append(trainer_t *t, const uint8_t *frame, size_t len);
/* Store the frame whose decoded record is t->rec: append it to the shard
 * (a failed write pauses the workers: trainer_disk_failed), add it to the
 * replay window, count it, rotate the shard when full. 0, or -1 when it
 * could not be written (nothing is counted: the caller keeps the game). */
int trainer_store_game(trainer_t *t, const uint8_t *frame, size_t len);
/* Store t->rec's frame once: 1 stored (its id remembered), 0 a duplicate
 * of a stored game (by its id), -1 not written (disk full). */
int trainer_store_once(trainer_t *t, const uint8_t *frame, size_t len);
/* A game could not be written (errno e): pause the workers, retry in 1 s. */
void trainer_disk_failed(trainer_t *t, int e);
/* Take what the worker spool dir holds (its process is gone): store each
 * game once, remove it. Leaves the rest when games/ fills. */
void trainer_spool_take(trainer_t *t, const char *dir);
/* Take every worker spool under RUN_DIR/spool (at start, no worker running). */
void trainer_spools_take_all(trainer_t *t);
/* RUN_DIR/spool/worker-K into buf. */
const char *trainer_spool_dir(const trainer_t *t, int k, char *buf, size_t len);
/* The record belongs in this run and replays legally; 0 or -1 with why. */
int trainer_check_record(trainer_t *t, const game_record_t *r, char *why, size_t whylen);
int trainer_load_games(trainer_t *t, char *err, size_t errlen);

/* trainer_pool.c: the workers. */
const char *trainer_wstate_name(wstate_t s);
int trainer_spawn_worker(trainer_t *t, wslot_t *w);
void trainer_schedule_restart(wslot_t *w);
void trainer_worker_gone(trainer_t *t, wslot_t *w, int stopping);
void trainer_worker_send(trainer_t *t, wslot_t *w, const char *line);
/* Queue "ack WID SEQ" for w (written by trainer_acks_flush). */
void trainer_ack(trainer_t *t, wslot_t *w, uint64_t wid, uint64_t seq);
void trainer_acks_flush(trainer_t *t, wslot_t *w);
/* games/ is full: write the held game once its retry time has come. 1 when
 * games/ takes writes again (or there was nothing to retry), else 0. */
int trainer_disk_retry(trainer_t *t);
void trainer_worker_frames(trainer_t *t, wslot_t *w);
/* Read from every ready worker; wait up to timeout_ms for something. */
void trainer_poll_workers(trainer_t *t, int timeout_ms, int stopping);
/* Restart the workers whose backoff is over; kill the stalled ones. */
void trainer_restart_due(trainer_t *t);
void trainer_stop_workers(trainer_t *t);

/* trainer_broker.c: games from remote workers (t->o->broker_url set). */
int trainer_broker_start(trainer_t *t, char *err, size_t errlen);
/* Take what the stream holds (waiting up to block_ms when it is empty):
 * store, fsync, then acknowledge. Returns the entries handled. */
int trainer_broker_poll(trainer_t *t, int block_ms);
/* Remote workers (distinct worker ids) a game of this run came from in the
 * last window_s seconds before now (s, util_now_ms clock). */
int trainer_remote_active(const trainer_t *t, double now, double window_s);
/* Publish a new checkpoint to remote workers. */
void trainer_broker_publish(trainer_t *t, const char *model_path);
/* Before exit: take what remote workers already sent (up to timeout_s). */
void trainer_broker_drain(trainer_t *t, int timeout_s);
/* status.json's broker and remote_workers fields (nothing without a broker). */
void trainer_broker_status(trainer_t *t, FILE *f);
void trainer_broker_free(trainer_t *t);

/* trainer_status.c */
int trainer_workers_running(const trainer_t *t);
/* status.json about once a second (force: now), the progress line. */
void trainer_progress(trainer_t *t, int force);
void trainer_metrics_row(trainer_t *t);

#endif
