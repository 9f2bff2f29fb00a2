/* The trainer's side of the broker (selfplay/broker.h): publish the run
 * and its checkpoints, take games from remote workers, store each once,
 * acknowledge only what is on disk. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/record.h"
#include "util/util.h"
#include "selfplay/trainer_int.h"

#define BROKER_READ_COUNT 64

/* What the trainer saw from one remote worker (by the worker id in its entries). */
typedef struct rstat {
    uint64_t id;
    uint64_t games, bad_frames, duplicates, other_run;
    double last_seen;
    double last_game;       /* s: when a game of this run from it last came (stored or a redelivery) */
} rstat_t;

/* The entry of worker id `id`. The table holds at most REMOTE_STATS_MAX:
 * a new id then takes the place of the one seen longest ago, whose counts
 * go into the sums of the evicted (junk entries with many ids cost a fixed
 * amount of memory and of status.json). NULL only when out of memory. */
static rstat_t *remote_stat(trainer_t *t, uint64_t id)
{
    for (int i = 0; i < t->nrs; i++)
        if (t->rs[i].id == id)
            return &t->rs[i];
    if (t->nrs == REMOTE_STATS_MAX) {
        if (!t->rs_evicted && !(t->rs_evicted = calloc(1, sizeof *t->rs_evicted)))
            return NULL;
        int old = 0;
        for (int i = 1; i < t->nrs; i++)
            if (t->rs[i].last_seen < t->rs[old].last_seen)
                old = i;
        rstat_t *o = &t->rs[old], *sum = t->rs_evicted;
        sum->games += o->games;
        sum->bad_frames += o->bad_frames;
        sum->duplicates += o->duplicates;
        sum->other_run += o->other_run;
        t->nrs_evicted++;
        memset(o, 0, sizeof *o);
        o->id = id;
        return o;
    }
    if (t->nrs == t->caprs) {
        int ncap = t->caprs ? t->caprs * 2 : 16;
        rstat_t *p = realloc(t->rs, (size_t)ncap * sizeof *p);
        if (!p)
            return NULL;
        t->rs = p;
        t->caprs = ncap;
    }
    rstat_t *r = &t->rs[t->nrs++];
    memset(r, 0, sizeof *r);
    r->id = id;
    return r;
}

int trainer_remote_active(const trainer_t *t, double now, double window_s)
{
    int n = 0;
    for (int i = 0; i < t->nrs; i++)
        n += t->rs[i].last_game > 0 && now - t->rs[i].last_game <= window_s;
    return n;
}

/* On every (re)connect: publish the run, make sure the group exists, and
 * re-read what was received but never acknowledged. */
static void on_connect(trainer_t *t)
{
    char e[512];
    broker_settings_t s = {.run_id = t->run_id, .stream_max = (uint64_t)t->o->stream_max,
                           .cfg = t->cfg};
    if (broker_publish_settings(t->broker, &s, e, sizeof e) != 0 ||
        broker_group_create(t->broker, e, sizeof e) != 0 ||
        broker_publish_model(t->broker, t->generation, t->model_path, e, sizeof e) != 0) {
        trainer_log(t, "broker: %s", e);
        return;
    }
    t->broker_rereading = 1;
    trainer_log(t, "broker: connected to %s; run '%s' (id %016" PRIx64 ") published with model "
                "generation %" PRIu64, t->broker_shown, t->o->run_name, t->run_id, t->generation);
}

/* One stream entry: validated like a pipe frame, stored once. Returns -1
 * when games/ cannot be written (the entry must not be acknowledged). */
static int take(trainer_t *t, const broker_entry_t *e)
{
    rstat_t *rs = remote_stat(t, e->worker_id);
    if (rs)
        rs->last_seen = util_now_ms() * 1e-3;
    char why[256];
    size_t used = 0;
    frame_status_t fst;
    if (e->why[0]) {
        snprintf(why, sizeof why, "%s", e->why);
        t->broker_oversized += e->oversized > 0;
    } else if (e->run_id != t->run_id) {
        t->broker_other_run++;
        if (rs && rs->other_run++ == 0)
            trainer_log(t, "broker: worker %016" PRIx64 " sends games of another run (id %016"
                        PRIx64 ", this run is %016" PRIx64 "): refused", e->worker_id, e->run_id,
                        t->run_id);
        return 0;
    } else if ((fst = record_decode(e->frame, e->len, &used, &t->rec, why, sizeof why)) !=
               FRAME_OK) {
        if (fst == FRAME_NEED_MORE)
            snprintf(why, sizeof why, "entry %s: field 'f' holds %zu bytes, not a whole frame",
                     e->id, e->len);
    } else if (used != e->len) {
        snprintf(why, sizeof why, "entry %s: %zu bytes after the frame", e->id, e->len - used);
    } else if (t->rec.worker_id == 0) {
        /* a redelivery of it could not be told from a new game */
        snprintf(why, sizeof why, "entry %s: the game has no id (worker id 0): refused, a "
                 "redelivery of it could not be recognised", e->id);
    } else if (trainer_check_record(t, &t->rec, why, sizeof why) == 0) {
        int st = trainer_store_once(t, e->frame, e->len);
        if (st < 0)
            return -1;
        if (rs)
            rs->last_game = rs->last_seen;
        if (st == 0) {
            t->broker_dups++;
            if (rs)
                rs->duplicates++;
            return 0;
        }
        if (rs)
            rs->games++;
        t->broker_games++;
        return 0;
    }
    t->broker_bad++;
    t->rejected++;
    if (rs) {
        rs->bad_frames++;
        if (rs->bad_frames <= 3 || rs->bad_frames % 1000 == 0)
            trainer_log(t, "broker: worker %016" PRIx64 ": rejected frame (%" PRIu64 " so far): %s",
                        e->worker_id, rs->bad_frames, why);
    }
    return 0;
}

int trainer_broker_poll(trainer_t *t, int block_ms)
{
    if (!t->broker || t->disk_full)
        return 0;
    char e[512];
    int fresh = 0;
    int r = broker_ensure(t->broker, &fresh, e, sizeof e);
    if (r <= 0) {
        if (util_now_ms() * 1e-3 - t->broker_said > 30) {
            t->broker_said = util_now_ms() * 1e-3;
            char st[512];
            broker_state(t->broker, st, sizeof st);
            trainer_log(t, "broker: %s", st);
        }
        return 0;
    }
    if (fresh)
        on_connect(t);
    if (broker_read(t->broker, "trainer", t->broker_rereading, BROKER_READ_COUNT,
                    t->broker_rereading ? 0 : block_ms, &t->bt, e, sizeof e) != 0) {
        trainer_log(t, "broker: %s", e);
        return 0;
    }
    if (t->bt.n == 0) {
        if (t->broker_rereading)
            t->broker_rereading = 0;
        return 0;
    }
    for (int i = 0; i < t->bt.n; i++) {
        if (take(t, &t->bt.e[i]) != 0) {
            /* nothing of this batch is acknowledged: the stored ones come
             * again and are recognised by their id, the rest are stored then */
            t->broker_rereading = 1;
            return 0;
        }
    }
    trainer_shard_sync(t); /* on disk before the broker forgets them */
    if (broker_ack(t->broker, &t->bt, e, sizeof e) != 0)
        trainer_log(t, "broker: %s (the entries come again and are stored once)", e);
    if (t->bt.incomplete)
        t->broker_rereading = 1;   /* entries after an oversized one are pending */
    return t->bt.n;
}

int trainer_broker_start(trainer_t *t, char *err, size_t errlen)
{
    broker_url_t u;
    if (broker_url_parse(t->o->broker_url, &u, err, errlen) != 0)
        return -1;
    broker_url_show(&u, t->broker_shown, sizeof t->broker_shown);
    if (broker_run_id(t->dir, &t->run_id, err, errlen) != 0)
        return -1;
    char e[512] = "";
    if (!t->broker && !(t->broker = broker_create(&u, t->o->run_name, e, sizeof e))) {
        snprintf(err, errlen, "%s", e);
        return -1;
    }
    if (!broker_connected(t->broker)) {
        broker_state(t->broker, e, sizeof e);
        trainer_log(t, "broker: %s; retrying with backoff (local workers go on)", e);
    } else {
        on_connect(t);
    }
    return 0;
}

void trainer_broker_publish(trainer_t *t, const char *model_path)
{
    char err[512];
    if (t->broker && broker_connected(t->broker) &&
        broker_publish_model(t->broker, t->generation, model_path, err, sizeof err) != 0)
        trainer_log(t, "broker: %s (published again on reconnect)", err);
}

void trainer_broker_drain(trainer_t *t, int timeout_s)
{
    if (!t->broker)
        return;
    double until = util_now_ms() * 1e-3 + timeout_s;
    while (util_now_ms() * 1e-3 < until && broker_connected(t->broker) && !t->disk_full &&
           (trainer_broker_poll(t, 0) > 0 || t->broker_rereading))
        ;
}

void trainer_broker_status(trainer_t *t, FILE *f)
{
    if (!t->broker)
        return;
    char st[512], esc[1100];
    broker_state(t->broker, st, sizeof st);
    fprintf(f, ",\n  \"broker\": {\"state\": %s, \"run\": \"%s\", \"run_id\": \"%016" PRIx64
            "\", \"games\": %" PRIu64 ", \"duplicates\": %" PRIu64 ", \"bad_frames\": %" PRIu64
            ", \"oversized\": %" PRIu64 ", \"other_run\": %" PRIu64 "},\n  \"remote_workers\": [",
            util_json_str(st, esc, sizeof esc), t->o->run_name, t->run_id, t->broker_games,
            t->broker_dups, t->broker_bad, t->broker_oversized, t->broker_other_run);
    double now = util_now_ms() * 1e-3;
    for (int i = 0; i < t->nrs; i++) {
        const rstat_t *r = &t->rs[i];
        fprintf(f, "%s\n    {\"id\": \"%016" PRIx64 "\", \"games\": %" PRIu64 ", \"bad_frames\": %"
                PRIu64 ", \"duplicates\": %" PRIu64 ", \"other_run\": %" PRIu64
                ", \"seen_s_ago\": %.0f}", i ? "," : "", r->id, r->games, r->bad_frames,
                r->duplicates, r->other_run, now - r->last_seen);
    }
    fputs("\n  ]", f);
    /* the ids seen longest ago, past the table's bound: their sums */
    const rstat_t z = {0}, *e = t->rs_evicted ? t->rs_evicted : &z;
    fprintf(f, ",\n  \"remote_workers_evicted\": {\"workers\": %" PRIu64 ", \"games\": %" PRIu64
            ", \"bad_frames\": %" PRIu64 ", \"duplicates\": %" PRIu64 ", \"other_run\": %"
            PRIu64 "}", t->nrs_evicted, e->games, e->bad_frames, e->duplicates, e->other_run);
}

void trainer_broker_free(trainer_t *t)
{
    broker_batch_free(&t->bt);
    broker_free(t->broker);
    broker_ids_free(t->ids);
    free(t->rs);
    free(t->rs_evicted);
    t->broker = NULL;
    t->ids = NULL;
    t->rs = NULL;
    t->rs_evicted = NULL;
}
