/* A stand-alone self-play worker fed through the Redis broker
 * (`gomoku worker --broker URL --run NAME`), for any host.
 *
 * It reads the run's settings and newest model from the broker (not from a
 * run directory), plays batched self-play games, and XADDs each finished
 * game's frame with its game id (a random worker id for this process + a
 * sequence number). It follows new models: each is checked against its
 * CRC before the switch; a bad one is reported and the last good model
 * kept. During a broker outage, or while the run's stream is full, games
 * go to an on-disk spool (bounded: play pauses when it is full) and are
 * resent oldest first when the broker takes them again; reconnection uses
 * backoff, and every change of state is one line on stderr and in the
 * broker's worker table. A refused password, or a run whose identity
 * changed (a new run under the same name), ends it with a clear message.
 * SIGINT/SIGTERM: stop playing, try once to send the spool, exit 0. */
#ifndef GZ_SELFPLAY_REMOTE_WORKER_H
#define GZ_SELFPLAY_REMOTE_WORKER_H

#include <stddef.h>
#include <stdint.h>

#include "selfplay/args.h"

typedef struct remote_worker_opts {
    const char *url;        /* redis://[:password@]host:port[/db] */
    const char *run;        /* the run's name on the broker */
    const char *device;     /* "auto", "cpu", "cuda", "cuda:N" */
    int parallel;           /* concurrent games (0: the run's setting) */
    int threads;            /* CPU backend threads */
    const char *spool_dir;  /* outage buffer (and the fetched model) */
    int spool_max;          /* games it may hold */
    uint64_t seed;          /* 0: from the clock and pid */
    uint64_t max_games;     /* stop after this many games were sent (0: no limit) */
    const char *games_log;  /* tests: append "WORKERID SEQ" per game the broker took */
} remote_worker_opts_t;

void remote_worker_opts_default(remote_worker_opts_t *o);
/* Every option but spool_dir's (a group, selfplay/args.h). */
int remote_worker_args(arg_spec_t *out, remote_worker_opts_t *o);

/* Run until a signal or max_games: 0. -1 with a one-line err on a fatal
 * problem (bad URL, refused password, run not published or replaced by a
 * new run, unusable model, spool locked by another worker). */
int remote_worker_run(const remote_worker_opts_t *o, char *err, size_t errlen);

#endif
