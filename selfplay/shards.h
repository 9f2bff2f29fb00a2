/* Rotating shards of game records, DIR/selfplay-<seed>-NNNN.gzr (gomoku
 * selfplay). A shard is written as NAME.tmp and renamed (after fsync) once
 * it holds per_shard games or is closed, so a finished .gzr never ends in a
 * half-written frame; a shard of an earlier run is never overwritten.
 *
 * The writer owns its open file; dir is borrowed and must outlive it. */
#ifndef GZ_SELFPLAY_SHARDS_H
#define GZ_SELFPLAY_SHARDS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "engine/record.h"

typedef struct shard_writer {
    const char *dir;
    uint64_t seed;
    int per_shard;
    int index;            /* next shard number */
    FILE *f;              /* open .tmp, or NULL */
    char tmp[1110], final[1100];
    int in_shard;         /* games in the open shard */
    int shards;           /* shards completed */
    uint64_t games;       /* games written */
    char err[2600];       /* first write error ("" while none) */
} shard_writer_t;

/* Write shards of per_shard games to dir, made if missing. 0, or -1 with
 * err (dir cannot be made, or is not a directory). */
int shard_writer_init(shard_writer_t *w, const char *dir, uint64_t seed, int per_shard,
                      char *err, size_t errlen);
/* Append rec (a selfplay_game_fn, user the writer): 0, or nonzero after a
 * write error (in w->err; later games are not written). */
int shard_writer_add(void *user, const game_record_t *rec);
/* Close the open shard: flush, fsync, rename .tmp to .gzr (or remove an
 * empty one). 0, or -1 with w->err set. */
int shard_writer_close(shard_writer_t *w);

#endif
