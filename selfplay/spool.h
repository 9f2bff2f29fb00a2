/* A worker's outage buffer: finished games (frames) kept on disk while the
 * broker cannot take them, resent oldest first when it can.
 *
 * DIR/lock (flock: one worker per spool), DIR/NNNNNNNNNNNNNNNN.gzf (one
 * frame per file, written atomically and fsync'd, numbered in order). A
 * worker killed at any point leaves whole files only; the next worker on
 * DIR resends them. A resend after a crash between the send and the
 * unlink is a duplicate the trainer drops by the game id. At most max
 * frames are held. */
#ifndef GZ_SELFPLAY_SPOOL_H
#define GZ_SELFPLAY_SPOOL_H

#include <stddef.h>
#include <stdint.h>

typedef struct spool spool_t;

/* Open (creating) dir and take its lock; NULL with err ("DIR is in use by
 * pid N" when another worker holds it). */
spool_t *spool_open(const char *dir, int max, char *err, size_t errlen);
void spool_free(spool_t *s);

int spool_count(const spool_t *s);
int spool_max(const spool_t *s);

/* Store one frame: 0, or -1 with err (full, or a write error). */
int spool_put(spool_t *s, const uint8_t *frame, size_t len, char *err, size_t errlen);

/* The oldest frame into *buf (grown with realloc, caller frees): 1 with
 * *len, 0 when empty, -1 with err (an unreadable file: it is removed, so
 * the next call goes on). */
int spool_peek(spool_t *s, uint8_t **buf, size_t *cap, size_t *len, char *err, size_t errlen);

/* Remove the oldest frame (after it was sent). */
void spool_pop(spool_t *s);

#endif
