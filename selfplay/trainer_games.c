/* The trainer's games on disk: the open shard, failed writes, loading. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "engine/frame.h"
#include "engine/record.h"
#include "util/util.h"
#include "selfplay/spool.h"
#include "selfplay/trainer_int.h"
#include "selfplay/wire.h"

/* ---- games on disk ---------------------------------------------------- */

int trainer_shard_open(trainer_t *t, char *err, size_t errlen)
{
    const char *p = trainer_path(t, "games/shard-%06" PRIu64 ".gzr", t->shard_index);
    t->shard_fd = open(p, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (t->shard_fd < 0) {
        snprintf(err, errlen, "cannot open %s: %s", p, strerror(errno));
        return -1;
    }
    t->shard_games = 0;
    util_fsync_dir(trainer_path(t, "games"));
    return 0;
}

void trainer_shard_sync(trainer_t *t)
{
    if (t->shard_fd >= 0 && fsync(t->shard_fd) != 0)
        trainer_log(t, "fsync of games shard %06" PRIu64 " failed: %s", t->shard_index,
             strerror(errno));
}

int trainer_shard_rotate(trainer_t *t, char *err, size_t errlen)
{
    trainer_shard_sync(t);
    close(t->shard_fd);
    t->shard_fd = -1;
    t->shard_index++;
    return trainer_shard_open(t, err, errlen);
}

/* The record belongs in this run and replays legally. */
int trainer_check_record(trainer_t *t, const game_record_t *r, char *why, size_t whylen)
{
    if (r->rule != (uint8_t)t->cfg.rule || r->size != t->cfg.size) {
        snprintf(why, whylen, "game is %dx%d %s, the run is %dx%d %s", r->size, r->size,
                 r->rule < RULE_COUNT ? rule_name((rule_t)r->rule) : "?", t->cfg.size,
                 t->cfg.size, rule_name(t->cfg.rule));
        return -1;
    }
    return record_validate(r, why, whylen);
}

int trainer_load_games(trainer_t *t, char *err, size_t errlen)
{
    char dir[3200];
    uint64_t *nums;
    size_t n;
    if (trainer_list_numbered(t, "games", "shard-", ".gzr", dir, sizeof dir, &nums, &n, err,
                              errlen) != 0)
        return -1;
    t->shard_index = n > 0 ? nums[0] + 1 : 0;
    /* oldest first, so the window ends with the newest games */
    for (size_t k = n; k-- > 0;) {
        char p[4200];
        snprintf(p, sizeof p, "%s/shard-%06" PRIu64 ".gzr", dir, nums[k]);
        char ferr[512];
        record_reader_t *fr = record_reader_open(p, ferr, sizeof ferr);
        if (!fr) {
            trainer_log(t, "skipping %s: %s", p, ferr);
            continue;
        }
        for (;;) {
            int rc = record_reader_next(fr, &t->rec, ferr, sizeof ferr);
            if (rc == 0)
                break;
            char why[256];
            if (rc < 0 || trainer_check_record(t, &t->rec, why, sizeof why) != 0) {
                t->load_bad++;
                if (t->load_bad <= 5)
                    trainer_log(t, "%s: dropped a bad frame: %s", p, rc < 0 ? ferr : why);
                continue;
            }
            if (t->ids && broker_ids_add(t->ids, t->rec.worker_id, t->rec.game_seq) < 0) {
                record_reader_free(fr);
                free(nums);
                snprintf(err, errlen, "out of memory loading %s", p);
                return -1;
            }
            int np = replay_add(t->replay, &t->rec);
            if (np < 0) {
                record_reader_free(fr);
                free(nums);
                snprintf(err, errlen, "out of memory loading %s", p);
                return -1;
            }
            t->games++;
            t->positions += (uint64_t)np;
        }
        record_reader_free(fr);
    }
    free(nums);
    if (t->load_bad > 0 && t->games == 0)
        trainer_log(t, "all %" PRIu64 " saved frames in %s are invalid: training waits for new games",
             t->load_bad, dir);
    else if (t->load_bad > 0)
        trainer_log(t, "dropped %" PRIu64 " bad or torn frames in %s (a torn last frame is what a "
             "killed trainer leaves)", t->load_bad, dir);
    if (n > 0)
        trainer_log(t, "loaded %" PRIu64 " games, %" PRIu64 " positions from %zu shards; window holds %"
             PRIu64 " positions", t->games, t->positions, n, replay_positions(t->replay));
    return 0;
}

int trainer_shard_append(trainer_t *t, const uint8_t *frame, size_t len)
{
    struct stat st;
    if (fstat(t->shard_fd, &st) != 0)
        return -1;
    int rc;
    if (t->fault_enospc_count > 0 && t->fault_enospc_after-- <= 0) {
        /* tests: half the frame reaches the disk, then the disk is full */
        t->fault_enospc_count--;
        rc = wire_write_all(t->shard_fd, frame, len / 2);
        if (rc == 0) {
            errno = ENOSPC;
            rc = -1;
        }
    } else {
        rc = wire_write_all(t->shard_fd, frame, len);
    }
    if (rc == 0)
        return 0;
    int e = errno;
    if (ftruncate(t->shard_fd, st.st_size) != 0)
        trainer_log(t, "games shard %06" PRIu64 ": cannot cut a failed write back to %lld bytes: %s",
             t->shard_index, (long long)st.st_size, strerror(errno));
    errno = e;
    return -1;
}

int trainer_store_game(trainer_t *t, const uint8_t *frame, size_t len)
{
    if (trainer_shard_append(t, frame, len) != 0) {
        trainer_disk_failed(t, errno);
        return -1;
    }
    if (t->disk_err[0]) {
        trainer_log(t, "games/ writable again after %.0f s: workers resumed (%" PRIu64
                    " games dropped)", util_now_ms() * 1e-3 - t->disk_since, t->games_dropped);
        t->disk_err[0] = '\0';
    }
    t->disk_full = 0;
    int np = replay_add(t->replay, &t->rec);
    if (np < 0) {
        trainer_log(t, "replay window: out of memory (game kept on disk only)");
        np = 0;
    }
    t->games++;
    t->session_games++;
    t->positions += (uint64_t)np;
    t->session_positions += (uint64_t)np;
    if (++t->shard_games >= SHARD_GAMES) {
        char err[512];
        if (trainer_shard_rotate(t, err, sizeof err) != 0)
            trainer_log(t, "%s", err);
    }
    return 0;
}

int trainer_store_once(trainer_t *t, const uint8_t *frame, size_t len)
{
    const game_record_t *r = &t->rec;
    if (r->worker_id != 0 && broker_ids_has(t->ids, r->worker_id, r->game_seq))
        return 0;
    if (trainer_store_game(t, frame, len) != 0)
        return -1;
    if (broker_ids_add(t->ids, r->worker_id, r->game_seq) < 0)
        trainer_log(t, "out of memory for the stored game ids (a game sent again may be stored "
                    "twice)");
    return 1;
}

/* A game could not be written: pause the workers, retry in a second. */
void trainer_disk_failed(trainer_t *t, int e)
{
    double now = util_now_ms() * 1e-3;
    t->disk_retry_at = now + 1.0;
    if (!t->disk_err[0]) {
        t->disk_since = now;
        trainer_log(t, "cannot write to %s/games: %s; the game is held and workers paused until "
                    "a write succeeds (retried every second)", t->dir, strerror(e));
    }
    t->disk_full = 1;
    snprintf(t->disk_err, sizeof t->disk_err, "%s", strerror(e));
}

/* ---- the workers' spools ---------------------------------------------- */

const char *trainer_spool_dir(const trainer_t *t, int k, char *buf, size_t len)
{
    snprintf(buf, len, "%s/spool/worker-%d", t->dir, k);
    return buf;
}

void trainer_spool_take(trainer_t *t, const char *dir)
{
    char e[512] = "";
    spool_t *s = NULL;
    /* a worker of a trainer killed a moment ago may still hold the lock */
    for (int i = 0; i < 50 && !(s = spool_open(dir, INT32_MAX, 0, e, sizeof e)); i++) {
        if (!strstr(e, "in use"))
            break;
        usleep(100000);
    }
    if (!s) {
        trainer_log(t, "worker spool: %s (its games are taken later)", e);
        return;
    }
    uint8_t *buf = NULL;
    size_t cap = 0, len = 0;
    uint64_t stored = 0, dups = 0, bad = 0;
    int r;
    while ((r = spool_peek(s, &buf, &cap, &len, e, sizeof e)) != 0) {
        if (r < 0) {   /* unreadable: spool_peek removed it */
            trainer_log(t, "worker spool: %s", e);
            bad++;
            continue;
        }
        size_t used = 0;
        char why[256] = "";
        if (record_decode(buf, len, &used, &t->rec, why, sizeof why) != FRAME_OK ||
            used != len || trainer_check_record(t, &t->rec, why, sizeof why) != 0) {
            if (bad++ < 3)
                trainer_log(t, "worker spool %s: a game refused: %s", dir,
                            why[0] ? why : "not one whole frame");
            t->rejected++;
            spool_pop(s);
            continue;
        }
        int st = trainer_store_once(t, buf, len);
        if (st < 0)
            break;   /* games/ is full: the rest stays for later */
        stored += st == 1;
        dups += st == 0;
        spool_pop(s);
    }
    t->spool_games += stored;
    t->spool_dups += dups;
    if (stored || dups || spool_count(s))
        trainer_log(t, "worker spool %s: %" PRIu64 " games stored, %" PRIu64 " already stored%s",
                    dir, stored, dups, spool_count(s) ? " (the rest when games/ takes writes)" : "");
    free(buf);
    spool_free(s);
}

void trainer_spools_take_all(trainer_t *t)
{
    char dir[3300];
    snprintf(dir, sizeof dir, "%s/spool", t->dir);
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *de;
    while ((de = readdir(d))) {
        int k;
        char tail;
        if (sscanf(de->d_name, "worker-%d%c", &k, &tail) != 1 || k < 0)
            continue;
        char p[3600];
        snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
        trainer_spool_take(t, p);
    }
    closedir(d);
}
