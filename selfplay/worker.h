/* The self-play worker process (`gomoku worker`, started by the trainer).
 *
 * It plays batched self-play games (selfplay.h) and writes each finished
 * game as one frame to its records fd. Each game carries an id (a random
 * worker id for this process's life and a sequence number), and is first
 * kept in the worker's spool (spool.h, RUN_DIR/spool/worker-K): it is
 * removed from there when the trainer answers "ack WORKERID SEQ" on the
 * control fd, once the game is on disk (or refused, or a duplicate). What
 * a worker leaves in its spool (the trainer was killed, or the worker) the
 * trainer takes itself when that worker's life ends or when it starts, and
 * stores once by the id.
 *
 * Between selfplay steps it reads its control fd without blocking: "model
 * GEN PATH" switches to new weights without restarting, "stop" ends it
 * after the current step, and end of file (the trainer is gone) ends it at
 * once. It also asks the kernel to SIGKILL it when its parent dies
 * (PR_SET_PDEATHSIG), so no worker outlives its trainer. When no game has
 * finished for WORKER_HEARTBEAT_MS it writes an empty frame
 * (frame_heartbeat) between steps, so the trainer can tell a slow worker
 * from a stalled one. */
#ifndef GZ_SELFPLAY_WORKER_H
#define GZ_SELFPLAY_WORKER_H

#include <stddef.h>
#include <stdint.h>

#include "engine/record.h"
#include "selfplay/selfplay.h"

#define WORKER_HEARTBEAT_MS 5000.0

typedef enum {
    WORKER_FAULT_NONE = 0,
    WORKER_FAULT_GARBAGE,  /* tests: every good frame is followed by corrupt ones */
    WORKER_FAULT_STALL,    /* tests: never writes anything (a hung worker) */
    WORKER_FAULT_FORGE,    /* tests: every good game is followed by a forged copy (a resigned
                            * game won by the side that resigned) */
} worker_fault_t;

typedef struct worker_opts {
    int records_fd;          /* frames out (blocking writes) */
    int control_fd;          /* control lines in */
    const char *model_path;
    uint64_t gen;            /* generation of model_path */
    long parent_pid;         /* > 0: exit at once if our parent is not this pid */
    const char *spool_dir;   /* games kept until acknowledged (NULL: none) */
    const char *games_log;   /* tests: append "WORKERID SEQ" of each game sent (NULL: none) */
    selfplay_opts_t sp;
    worker_fault_t fault;
} worker_opts_t;

/* Run until "stop" or end of file on the control fd: 0. A failure (model
 * does not load, records fd closed, self-play error): -1 with err set. */
int worker_run(const worker_opts_t *o, char *err, size_t errlen);

/* Appends "WORKERID SEQ" (hex, decimal) of r to the games log at path
 * (NULL: nothing), the tests' record of the games sent; a log that cannot
 * be written is skipped. The remote worker's log too. */
void worker_log_game(const char *path, const game_record_t *r);

#endif
