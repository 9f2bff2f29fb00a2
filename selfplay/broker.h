/* The Redis broker between a trainer and self-play workers on other hosts.
 *
 * One run on the broker (NAME = the trainer's --run-name) uses these keys:
 *   gz:NAME:games     stream; each entry: run RUNID | w WORKERID | f FRAME
 *                     (FRAME: the same bytes a pipe or a .gzr file carries)
 *   gz:NAME:settings  hash: version, run_id, stream_max, config (the run's
 *                     RUN_DIR/config text)
 *   gz:NAME:model     hash: gen, crc (CRC32 of data), size, path, data (.gzm bytes)
 *   gz:NAME:workers   hash: worker id (hex) -> one-line state of that worker
 * The trainer reads the stream through the consumer group "trainer" and
 * acknowledges an entry only after the game is fsync'd in RUN_DIR/games
 * (at-least-once); the game id inside the record makes a redelivery harmless.
 *
 * A broker_t is one connection that can be lost and made again: every
 * call returns -1 with err on failure and, when the connection broke,
 * drops it; broker_ensure reconnects with exponential backoff. A refused
 * password or database is "fatal" (broker_fatal): retrying cannot help.
 * The password is never part of any message. Not thread safe. */
#ifndef GZ_SELFPLAY_BROKER_H
#define GZ_SELFPLAY_BROKER_H

#include <stddef.h>
#include <stdint.h>

#include "engine/board.h"
#include "engine/frame.h"
#include "selfplay/rundir.h"

#define BROKER_GROUP "trainer"
#define BROKER_RUN_MAX 64           /* run names: [A-Za-z0-9._-]{1,64} */
/* 1: a fixed list of self-play fields; 2: the run's config text (every
 * setting of the table). Version 1 still reads. */
#define BROKER_SETTINGS_VERSION 2

/* redis://[:password@]host[:port][/db]; port defaults to 6379, db to 0. */
typedef struct broker_url {
    char host[256];
    int port;
    int db;
    char password[256];   /* "" when none; never printed */
} broker_url_t;

/* Parse url into u; 0, or -1 with a one-line err that never holds the
 * password. */
int broker_url_parse(const char *url, broker_url_t *u, char *err, size_t errlen);

/* The URL a user gave: arg itself, or with "@FILE" the first line of FILE
 * (so the password need not appear in the process list). 0, or -1 with
 * err (naming the file, never its contents). */
int broker_url_arg(const char *arg, char *out, size_t outlen, char *err, size_t errlen);

/* u as text for messages and status: "redis://host:port/db", with
 * ":***@" where a password is set. */
void broker_url_show(const broker_url_t *u, char *out, size_t outlen);

/* Whether name is a valid run name (letters, digits, '.', '_', '-'). */
int broker_run_name_ok(const char *name);

/* Whether the program was built with Redis support (hiredis). Without it
 * broker_create fails with a message that says so. */
int broker_available(void);

typedef struct broker broker_t;

/* A connection to run `run` on the broker at u (copied). It connects at
 * once; when that fails, the handle still exists (disconnected) unless the
 * failure is fatal, and the first error is in err. Returns NULL only when
 * out of memory or built without hiredis (err says which), or on a fatal
 * refusal (bad password, bad db). */
broker_t *broker_create(const broker_url_t *u, const char *run, char *err, size_t errlen);
void broker_free(broker_t *b);

/* Connected now? */
int broker_connected(const broker_t *b);
/* The last error was one retrying cannot fix (auth, db). */
int broker_fatal(const broker_t *b);
/* Reconnect if disconnected and the backoff delay (1 s doubling to 30 s)
 * has passed. 1: connected (*fresh set to 1 when this call made the
 * connection), 0: not connected (not yet due, or the attempt failed: err
 * says why), -1: fatal (err says why). */
int broker_ensure(broker_t *b, int *fresh, char *err, size_t errlen);
/* One line: "connected to redis://h:p/db" or "disconnected (ERR) since Ns,
 * attempt K, next in Ms". */
void broker_state(const broker_t *b, char *out, size_t outlen);
/* Drop the connection (tests; a broken one is dropped by itself). */
void broker_disconnect(broker_t *b);

/* ---- run settings (trainer publishes, workers read) ---- */

typedef struct broker_settings {
    uint64_t run_id;      /* this run's identity; an old run has another */
    uint64_t stream_max;  /* workers hold games back while the stream is longer */
    run_config_t cfg;     /* the run's settings, the same table RUN_DIR/config holds */
} broker_settings_t;

int broker_publish_settings(broker_t *b, const broker_settings_t *s, char *err, size_t errlen);
/* 0: *s read and every field in range; 1: the run is not on the broker;
 * -1: error (a field out of range is one, naming it). */
int broker_fetch_settings(broker_t *b, broker_settings_t *s, char *err, size_t errlen);

/* The run id kept in RUN_DIR/broker-run-id, made (random) on first use:
 * 0 or -1 with err. */
int broker_run_id(const char *run_dir, uint64_t *id, char *err, size_t errlen);

/* ---- games ---- */

/* XADD one frame; 0 or -1. */
int broker_add_game(broker_t *b, uint64_t run_id, uint64_t worker_id, const uint8_t *frame,
                    size_t len, char *err, size_t errlen);
/* Entries in the stream (XLEN): >= 0, or -1. */
long long broker_stream_len(broker_t *b, char *err, size_t errlen);

/* Create the consumer group (from the stream's start, so games added
 * before the trainer first ran are read). An existing group is fine. */
int broker_group_create(broker_t *b, char *err, size_t errlen);

/* An entry (all its fields and values) above this many bytes is refused
 * without being read: a frame is at most 4 MiB plus its header. */
#define BROKER_ENTRY_MAX ((size_t)FRAME_MAX_PAYLOAD + 1024)

typedef struct broker_entry {
    char id[48];            /* stream entry id "ms-seq" */
    uint64_t run_id;        /* 0 when the field is missing or malformed */
    uint64_t worker_id;
    const uint8_t *frame;   /* NULL when missing; points into the batch */
    size_t len;
    size_t oversized;       /* > 0: the entry's size; it was refused unread (acknowledged and
                             * deleted on the broker) */
    char why[192];          /* "" or why the entry is unusable (the field named) */
} broker_entry_t;

/* One XREADGROUP's entries; owns them until the next read or _free. */
typedef struct broker_batch {
    broker_entry_t *e;
    int n;
    int cap;
    uint8_t *bytes;         /* the frames the entries point into */
    size_t nbytes, cap_bytes;
    size_t *frame_off;      /* while reading: each entry's frame offset in bytes */
    int incomplete;         /* the read stopped at an oversized entry: entries after it were
                             * delivered and are pending (read them with pending = 1) */
} broker_batch_t;

void broker_batch_init(broker_batch_t *bt);
void broker_batch_free(broker_batch_t *bt);

/* Read up to count entries as consumer `consumer`: pending = 1 re-reads
 * entries delivered before but never acknowledged (after a crash), else
 * new ones. block_ms > 0 waits that long for new entries. Each length is
 * seen before its bytes are taken: at the first entry over
 * BROKER_ENTRY_MAX the read stops (the entry is the batch's last, with
 * e->oversized and e->why; its worker id kept when it came first), the
 * connection is dropped rather than the rest read, and a new one
 * acknowledges and deletes that entry on the broker; bt->incomplete then
 * says that entries after it may be pending. So a huge junk entry costs
 * neither its transfer nor memory. 0 (bt->n may be 0) or -1. */
int broker_read(broker_t *b, const char *consumer, int pending, int count, int block_ms,
                broker_batch_t *bt, char *err, size_t errlen);
/* Acknowledge every entry of bt (call only once their games are on disk)
 * and trim the stream of entries older than the oldest still pending,
 * never of an entry not yet delivered. 0 or -1. */
int broker_ack(broker_t *b, const broker_batch_t *bt, char *err, size_t errlen);
/* Entries delivered to the group and not yet acknowledged, or -1. */
long long broker_pending(broker_t *b, char *err, size_t errlen);

/* ---- models ---- */

/* Publish the checkpoint file at path as generation gen (its bytes and
 * path, with the CRC32 of the bytes). 0 or -1. */
int broker_publish_model(broker_t *b, uint64_t gen, const char *path, char *err, size_t errlen);
/* Generation of the published model: 0 with *gen, 1 when none, -1. */
int broker_model_gen(broker_t *b, uint64_t *gen, char *err, size_t errlen);

typedef struct broker_model {
    uint64_t gen;
    uint32_t crc;       /* as published */
    uint8_t *data;      /* malloc'd bytes, caller frees */
    size_t len;
    char path[1024];    /* the trainer's path (valid on a shared file system) */
} broker_model_t;

/* Fetch the published model. 0: *m filled and the bytes match their
 * CRC; 1: none published; -1: error, or a CRC mismatch (err says so and
 * m->gen says which generation). */
int broker_fetch_model(broker_t *b, broker_model_t *m, char *err, size_t errlen);

/* ---- worker states (for people and status) ---- */

/* Set this worker's one-line state (HSET gz:NAME:workers); 0 or -1. */
int broker_worker_state(broker_t *b, uint64_t worker_id, const char *state, char *err,
                        size_t errlen);

/* Delete every key of the run (benchmarks, tests); 0 or -1. */
int broker_drop_run(broker_t *b, char *err, size_t errlen);

/* ---- game ids already stored (so a redelivered game is stored once) ---- */

typedef struct broker_ids broker_ids_t;
broker_ids_t *broker_ids_create(void);
void broker_ids_free(broker_ids_t *s);
/* Add (worker_id, seq): 1 if it was new, 0 if already there, -1 when out
 * of memory. Id (0, any) is "no id" and is always new, never stored. */
int broker_ids_add(broker_ids_t *s, uint64_t worker_id, uint64_t seq);
/* Whether (worker_id, seq) is there; id (0, any) never is. */
int broker_ids_has(const broker_ids_t *s, uint64_t worker_id, uint64_t seq);
size_t broker_ids_count(const broker_ids_t *s);

#endif
