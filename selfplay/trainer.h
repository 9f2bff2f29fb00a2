/* The training process (`gomoku train RUN_DIR`).
 *
 * Spawns K self-play workers (posix_spawn of our own program, never
 * fork), reads their frames with poll(), validates each one and appends
 * the accepted ones to RUN_DIR/games/, keeps a replay window, trains on
 * minibatches built by CPU threads, checkpoints to RUN_DIR/models/ and
 * tells the workers about each new model. See selfplay/rundir.h for the
 * files of a run. Balance: it trains while
 *     (step + 1) * batch <= ratio * positions received (all time)
 * and waits for games otherwise.
 *
 * Faults: a worker that dies is restarted with exponential backoff (its
 * partial frame is dropped and counted); a worker past bad_frame_limit
 * corrupt frames is killed and restarted. SIGINT/SIGTERM: finish the
 * step, checkpoint, stop the workers ("stop", then SIGKILL after a
 * timeout), return 0. After a SIGKILL the same run resumes from the
 * newest checkpoint and the saved games.
 *
 * With a broker (selfplay/broker.h) it also publishes the run's settings
 * and each checkpoint there, and takes remote workers' games from the
 * run's stream: each batch is validated like pipe frames, stored once
 * (by game id), fsync'd, and only then acknowledged. After a crash it
 * first re-reads the entries it had received but not acknowledged. */
#ifndef GZ_SELFPLAY_TRAINER_H
#define GZ_SELFPLAY_TRAINER_H

#include <stddef.h>
#include <stdint.h>

#include "selfplay/rundir.h"

typedef struct trainer_opts {
    const char *run_dir;
    run_config_t cfg;          /* the run's settings (from RUN_DIR/config) */
    int lock_fd;               /* run_lock's fd, held by the caller */
    uint64_t steps;            /* stop at this step (0: until signalled) */
    int steps_relative;        /* steps counts from the step we resume at */
    int threads;               /* CPU backend threads for training (0: all cores) */
    int assemble_threads;      /* minibatch assembly threads */
    int metrics_every;         /* steps per metrics.csv row */
    int bad_frame_limit;       /* corrupt frames before a worker is restarted */
    int stop_timeout_s;        /* wait this long for workers after "stop" */
    const char *worker_fault;  /* tests: passed to workers as --fault */
    const char *games_log;     /* tests: passed to workers as --games-log */
    const char *fault;         /* tests: "nan-loss" poisons every minibatch */
    const char *init_model;    /* a new run starts from this model's weights (NULL: random) */
    const char *exe;           /* program to spawn; NULL: /proc/self/exe */
    const char *broker_url;    /* NULL: no broker; else also take games from remote workers */
    struct broker *broker;     /* its connection, made by the caller before it created anything
                                * (NULL: trainer_run makes it); trainer_run frees it */
    const char *run_name;      /* the run's name on the broker */
    int stream_max;            /* games the broker's stream may hold before workers hold back */
} trainer_opts_t;

/* cfg: run_config_default's; no lock. */
void trainer_opts_default(trainer_opts_t *o);
/* The options of o but cfg and steps, which gomoku train parses itself (a
 * group, selfplay/args.h). */
int trainer_args(arg_spec_t *out, trainer_opts_t *o);

/* Run until the step target or a signal. 0 on a clean stop; -1 with a
 * one-line message in err when the run cannot start or a fatal error
 * happens (it still stops its workers first). */
int trainer_run(const trainer_opts_t *o, char *err, size_t errlen);

#endif
