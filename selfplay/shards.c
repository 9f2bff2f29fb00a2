#include "selfplay/shards.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "util/util.h"

int shard_writer_init(shard_writer_t *w, const char *dir, uint64_t seed, int per_shard,
                      char *err, size_t errlen)
{
    *w = (shard_writer_t){.dir = dir, .seed = seed, .per_shard = per_shard};
    return util_mkdir(dir, err, errlen);
}

int shard_writer_close(shard_writer_t *w)
{
    if (!w->f)
        return 0;
    FILE *f = w->f;
    w->f = NULL;
    int bad = fflush(f) != 0 || fsync(fileno(f)) != 0;
    bad |= fclose(f) != 0;
    if (bad) {
        snprintf(w->err, sizeof w->err, "cannot write %s: %s", w->tmp, strerror(errno));
        return -1;
    }
    if (w->in_shard == 0) {
        unlink(w->tmp);
        return 0;
    }
    if (rename(w->tmp, w->final) != 0) {
        snprintf(w->err, sizeof w->err, "cannot rename %s to %s: %s", w->tmp, w->final,
                 strerror(errno));
        return -1;
    }
    util_fsync_dir(w->dir);
    w->shards++;
    w->in_shard = 0;
    return 0;
}

static int shard_open(shard_writer_t *w)
{
    for (;; w->index++) {
        snprintf(w->final, sizeof w->final, "%s/selfplay-%llu-%04d.gzr", w->dir,
                 (unsigned long long)w->seed, w->index);
        if (access(w->final, F_OK) != 0)
            break;   /* never overwrite an earlier run's shard */
    }
    snprintf(w->tmp, sizeof w->tmp, "%s.tmp", w->final);
    w->index++;
    w->f = fopen(w->tmp, "wb");
    if (!w->f) {
        snprintf(w->err, sizeof w->err, "cannot create %s: %s", w->tmp, strerror(errno));
        return -1;
    }
    w->in_shard = 0;
    return 0;
}

int shard_writer_add(void *user, const game_record_t *rec)
{
    shard_writer_t *w = user;
    if (w->err[0])
        return 1;
    if (!w->f && shard_open(w) < 0)
        return 1;
    char e[256];
    if (record_write(w->f, rec, e, sizeof e) < 0) {
        snprintf(w->err, sizeof w->err, "%s: %s", w->tmp, e);
        return 1;
    }
    w->in_shard++;
    w->games++;
    if (w->in_shard >= w->per_shard && shard_writer_close(w) < 0)
        return 1;
    return 0;
}

