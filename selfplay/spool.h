/* A worker's outage buffer: finished games (frames) kept on disk until
 * they are safe elsewhere.
 *
 * A remote worker (remote_worker.c) keeps there what the broker cannot
 * take, resent oldest first when it can. A local worker of `gomoku train`
 * keeps there every game until the trainer acknowledges it; the trainer
 * takes what is left when the worker's life ends or at its own start.
 *
 * DIR/lock (flock: one process per spool), DIR/NNNNNNNNNNNNNNNN.gzf (one
 * frame per file, written to a temporary and renamed, numbered in order;
 * fsync'd too when the spool is durable). A process killed at any point
 * leaves whole files only; the next one on DIR takes them. A game sent
 * twice (a crash between the send and the removal) is a duplicate the
 * trainer drops by the game id. At most max frames are held. */
#ifndef GZ_SELFPLAY_SPOOL_H
#define GZ_SELFPLAY_SPOOL_H

#include <stddef.h>
#include <stdint.h>

typedef struct spool spool_t;

/* Open (creating) dir and take its lock; NULL with err ("DIR is in use by
 * pid N" when another process holds it). durable: fsync every file and the
 * directory (a power cut keeps them); else a rename alone (a killed
 * process keeps them). Temporaries a killed write left are removed. */
spool_t *spool_open(const char *dir, int max, int durable, char *err, size_t errlen);
void spool_free(spool_t *s);

int spool_count(const spool_t *s);
int spool_max(const spool_t *s);

/* Store one frame: 0 with its number in *no (when no is not NULL), or -1
 * with err (full, or a write error). */
int spool_put(spool_t *s, const uint8_t *frame, size_t len, uint64_t *no, char *err,
              size_t errlen);

/* The oldest frame into *buf (grown with realloc, caller frees): 1 with
 * *len, 0 when empty, -1 with err (an unreadable file: it is removed, so
 * the next call goes on). */
int spool_peek(spool_t *s, uint8_t **buf, size_t *cap, size_t *len, char *err, size_t errlen);

/* Remove the oldest frame (after it was sent). */
void spool_pop(spool_t *s);
/* Remove frame number no (spool_put's), wherever it is in the order. */
void spool_remove(spool_t *s, uint64_t no);

#endif
