#include "selfplay/remote_worker.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "engine/record.h"
#include "nn/nn.h"
#include "selfplay/broker.h"
#include "util/util.h"
#include "selfplay/rundir.h"
#include "selfplay/selfplay.h"
#include "selfplay/spool.h"
#include "selfplay/worker.h"

#define CHECK_EVERY_S 2.0     /* settings and model generation */
#define STATE_EVERY_S 5.0     /* worker table entry */

typedef struct rworker {
    const remote_worker_opts_t *o;
    broker_t *b;
    spool_t *spool;
    broker_settings_t set;
    uint64_t wid, seq;
    uint64_t gen, bad_gen;    /* current model's generation; last one refused */
    nn_model_t *model;
    selfplay_t *sp;
    game_record_t rec;
    uint8_t *frame, *sbuf;
    size_t frame_cap, sbuf_cap;
    uint64_t sent, spooled;
    int full_noted;
    double t_check, t_state;
    char state[128];
    char fail[512];           /* a fatal error met inside the game callback */
} rworker_t;

static volatile sig_atomic_t g_stop;
static void on_stop(int sig) { g_stop = sig; }

static void say(const rworker_t *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(const rworker_t *w, const char *fmt, ...)
{
    char msg[768];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    time_t now = time(NULL);
    struct tm tm;
    char ts[32];
    strftime(ts, sizeof ts, "%H:%M:%S", localtime_r(&now, &tm));
    fprintf(stderr, "%s gomoku worker %016" PRIx64 ": %s\n", ts, w->wid, msg);
}

int remote_worker_args(arg_spec_t *out, remote_worker_opts_t *o)
{
    const arg_spec_t specs[] = {
        ARG(S_BROKER, &o->url), ARG(S_WORKER_RUN, &o->run), ARG(S_SPOOL_MAX, &o->spool_max),
        ARG(S_MAX_GAMES, &o->max_games), ARG(S_DEVICE, &o->device),
        ARG(S_WORKER_PARALLEL, &o->parallel), ARG(S_WORKER_THREADS, &o->threads),
        ARG(S_WORKER_SEED, &o->seed), ARG(S_GAMES_LOG, &o->games_log),
    };
    static_assert(ARGS_COUNT(specs) <= ARGS_GROUP_MAX, "a group fits");
    return args_append(out, specs, ARGS_COUNT(specs));
}

void remote_worker_opts_default(remote_worker_opts_t *o)
{
    memset(o, 0, sizeof *o);
    arg_spec_t specs[ARGS_GROUP_MAX];
    args_defaults(specs, remote_worker_args(specs, o));
}


static void set_state(rworker_t *w, const char *state)
{
    if (strcmp(w->state, state) == 0)
        return;
    snprintf(w->state, sizeof w->state, "%s", state);
    char bs[512];
    broker_state(w->b, bs, sizeof bs);
    say(w, "%s; %s; %d games in the spool", state, bs, spool_count(w->spool));
}

static void report(rworker_t *w, int force)
{
    double now = util_now_ms() * 1e-3;
    if (!force && now - w->t_state < STATE_EVERY_S)
        return;
    w->t_state = now;
    if (!broker_connected(w->b))
        return;
    char host[128] = "?", line[512], e[256];
    gethostname(host, sizeof host);
    host[sizeof host - 1] = '\0';
    snprintf(line, sizeof line, "{\"host\": \"%.100s\", \"pid\": %ld, \"state\": \"%s\", "
             "\"generation\": %" PRIu64 ", \"sent\": %" PRIu64 ", \"spooled\": %d, "
             "\"updated\": %ld}", host, (long)getpid(), w->state, w->gen, w->sent,
             spool_count(w->spool), (long)time(NULL));
    broker_worker_state(w->b, w->wid, line, e, sizeof e);
}

static void log_game(rworker_t *w, const uint8_t *frame, size_t len)
{
    if (!w->o->games_log)
        return;
    size_t used;
    char e[256];
    if (record_decode(frame, len, &used, &w->rec, e, sizeof e) != FRAME_OK)
        return;
    worker_log_game(w->o->games_log, &w->rec);
}

/* Whether the stream has room for more games now (bounded: the trainer
 * trims only what it acknowledged). */
static int stream_has_room(rworker_t *w)
{
    char e[256];
    long long n = broker_stream_len(w->b, e, sizeof e);
    if (n < 0)
        return 0;
    if ((uint64_t)n >= w->set.stream_max) {
        set_state(w, "holding games back: the run's stream is full (trainer behind or down)");
        return 0;
    }
    return 1;
}

/* Send spooled games while the broker takes them. */
static void flush_spool(rworker_t *w)
{
    while (spool_count(w->spool) > 0 && broker_connected(w->b) && !g_stop) {
        if (!stream_has_room(w))
            return;
        size_t len;
        char e[512];
        int r = spool_peek(w->spool, &w->sbuf, &w->sbuf_cap, &len, e, sizeof e);
        if (r < 0) {
            say(w, "%s", e);
            continue;
        }
        if (r == 0)
            return;
        if (broker_add_game(w->b, w->set.run_id, w->wid, w->sbuf, len, e, sizeof e) != 0)
            return;
        log_game(w, w->sbuf, len);
        spool_pop(w->spool);
        w->sent++;
        if (spool_count(w->spool) == 0)
            say(w, "spool sent: every buffered game is on the broker");
    }
}

static int on_game(void *user, const game_record_t *rec)
{
    rworker_t *w = user;
    char e[512];
    if (record_copy(&w->rec, rec) != 0) {
        snprintf(w->fail, sizeof w->fail, "out of memory");
        return 1;
    }
    w->rec.worker_id = w->wid;
    w->rec.game_seq = w->seq++;
    size_t len = record_encode(&w->rec, &w->frame, &w->frame_cap, e, sizeof e);
    if (len == 0) {
        snprintf(w->fail, sizeof w->fail, "%s", e);
        return 1;
    }
    if (spool_count(w->spool) == 0 && broker_connected(w->b) && stream_has_room(w) &&
        broker_add_game(w->b, w->set.run_id, w->wid, w->frame, len, e, sizeof e) == 0) {
        log_game(w, w->frame, len);
        w->sent++;
        return w->o->max_games && w->sent >= w->o->max_games;
    }
    if (spool_put(w->spool, w->frame, len, NULL, e, sizeof e) != 0) {
        /* cannot happen while play pauses before the spool fills; say so if it does */
        say(w, "game %" PRIu64 " lost: %s", w->rec.game_seq, e);
        return 0;
    }
    w->spooled++;
    return 0;
}

/* Load a fetched model: from the trainer's path when this host shares
 * its file system and the file there is the fetched one (the same
 * nn_weights_crc), else from the bytes (written to the spool directory
 * first). NULL with err. */
static nn_model_t *load_fetched(rworker_t *w, const broker_model_t *m, char *err, size_t errlen)
{
    uint32_t crc;
    char e[256];
    if (m->path[0] && access(m->path, R_OK) == 0 && nn_file_crc(m->path, &crc, e, sizeof e) == 0 &&
        crc == nn_weights_crc(m->data, m->len)) {
        nn_model_t *nm = nn_model_load(m->path, err, errlen);
        if (nm)
            return nm;
    }
    char p[3200];
    snprintf(p, sizeof p, "%s/model.gzm", w->o->spool_dir);
    if (util_write_atomic(p, m->data, m->len, err, errlen) != 0)
        return NULL;
    return nn_model_load(p, err, errlen);
}

/* Follow the run: its identity and its newest model. -1 with err when the
 * run was replaced (fatal); 0 otherwise (a bad model is reported, kept out). */
static int check_run(rworker_t *w, int force, char *err, size_t errlen)
{
    double now = util_now_ms() * 1e-3;
    if (!force && now - w->t_check < CHECK_EVERY_S)
        return 0;
    w->t_check = now;
    if (!broker_connected(w->b))
        return 0;
    char e[512];
    broker_settings_t s;
    int r = broker_fetch_settings(w->b, &s, e, sizeof e);
    if (r == 0 && s.run_id != w->set.run_id) {
        snprintf(err, errlen, "run '%s' on the broker is now another run (id %016" PRIx64
                 "; this worker joined %016" PRIx64 "): a worker of an old run stops; start it "
                 "again to join the new one", w->o->run, s.run_id, w->set.run_id);
        return -1;
    }
    uint64_t gen;
    if (broker_model_gen(w->b, &gen, e, sizeof e) != 0 || gen == w->gen || gen == w->bad_gen)
        return 0;
    broker_model_t m;
    if (broker_fetch_model(w->b, &m, e, sizeof e) != 0) {
        if (broker_connected(w->b)) {
            w->bad_gen = gen;
            say(w, "%s: keeping generation %" PRIu64, e, w->gen);
        }
        free(m.data);
        return 0;
    }
    nn_model_t *nm = load_fetched(w, &m, e, sizeof e);
    free(m.data);
    char e2[256];
    if (!nm || selfplay_set_model(w->sp, nm, m.gen, e2, sizeof e2) != 0) {
        w->bad_gen = m.gen;
        say(w, "model generation %" PRIu64 " unusable (%s): keeping generation %" PRIu64, m.gen,
            nm ? e2 : e, w->gen);
        nn_model_free(nm);
        return 0;
    }
    nn_model_free(w->model);
    w->model = nm;
    w->gen = m.gen;
    say(w, "switched to model generation %" PRIu64, w->gen);
    return 0;
}

/* Wait until connected (reporting), or a signal: 1 connected, 0 stopped, -1 fatal. */
static int wait_connected(rworker_t *w, char *err, size_t errlen)
{
    for (;;) {
        char e[512];
        int r = broker_ensure(w->b, NULL, e, sizeof e);
        if (r < 0) {
            snprintf(err, errlen, "%s", e);
            return -1;
        }
        if (r == 1)
            return 1;
        set_state(w, "waiting for the broker");
        if (g_stop)
            return 0;
        usleep(200000);
    }
}

int remote_worker_run(const remote_worker_opts_t *o, char *err, size_t errlen)
{
    broker_url_t u;
    if (broker_url_parse(o->url, &u, err, errlen) != 0)
        return -1;
    rworker_t *w = calloc(1, sizeof *w);
    if (!w) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    w->o = o;
    w->wid = util_random_u64();
    record_init(&w->rec);
    int rc = -1;
    util_catch_stop_signals(on_stop, NULL);
    signal(SIGPIPE, SIG_IGN);
    g_stop = 0;

    w->spool = spool_open(o->spool_dir, o->spool_max, 1, err, errlen);
    if (!w->spool)
        goto out_free;
    char e[512];
    w->b = broker_create(&u, o->run, e, sizeof e);
    if (!w->b) {
        snprintf(err, errlen, "%s", e);
        goto out_free;
    }
    char shown[400];
    broker_url_show(&u, shown, sizeof shown);
    say(w, "run '%s' on %s, spool %s (%d games held)", o->run, shown, o->spool_dir,
        spool_count(w->spool));
    int c = wait_connected(w, err, errlen);
    if (c <= 0) {
        rc = c == 0 ? 0 : -1;
        goto out_free;
    }
    int r = broker_fetch_settings(w->b, &w->set, err, errlen);
    if (r == 1)
        snprintf(err, errlen, "run '%s' is not on the broker %s: start its trainer with "
                 "--broker (and --run-name %s) first", o->run, shown, o->run);
    if (r != 0)
        goto out_free;
    broker_model_t m;
    r = broker_fetch_model(w->b, &m, err, errlen);
    if (r == 1)
        snprintf(err, errlen, "run '%s' has no model on the broker yet", o->run);
    if (r != 0) {
        free(m.data);
        goto out_free;
    }
    w->model = load_fetched(w, &m, err, errlen);
    free(m.data);
    if (!w->model)
        goto out_free;
    w->gen = m.gen;

    selfplay_opts_t so;
    selfplay_opts_default(&so);
    run_config_selfplay_opts(&w->set.cfg, &so);
    if (o->parallel > 0)
        so.parallel = o->parallel;
    so.device = o->device;
    so.threads = o->threads;
    so.seed = o->seed ? o->seed : w->wid;
    char note[256] = "";
    w->sp = selfplay_create(&so, w->model, w->gen, note, sizeof note, err, errlen);
    if (!w->sp)
        goto out_free;
    if (note[0])
        say(w, "%s", note);
    say(w, "playing %dx%d %s, %d games at once, %d visits, model generation %" PRIu64,
        so.size, so.size, rule_name(so.rule), so.parallel, so.visits, w->gen);
    set_state(w, "playing");
    report(w, 1);
    int parallel = so.parallel;
    while (!g_stop && !(o->max_games && w->sent >= o->max_games)) {
        int fresh = 0;
        r = broker_ensure(w->b, &fresh, e, sizeof e);
        if (r < 0) {
            snprintf(err, errlen, "%s", e);
            goto out_free;
        }
        if (check_run(w, fresh, err, errlen) != 0)
            goto out_free;
        flush_spool(w);
        if (r == 1 && spool_count(w->spool) == 0)
            set_state(w, "playing");
        else if (r == 0)
            set_state(w, "broker unreachable: buffering games on disk");
        report(w, fresh);
        /* play only while every game in flight still fits the spool */
        if (spool_count(w->spool) + parallel > spool_max(w->spool)) {
            set_state(w, "paused: spool full, waiting for the broker");
            usleep(200000);
            continue;
        }
        if (selfplay_step(w->sp, on_game, w, err, errlen) < 0)
            goto out_free;
        if (w->fail[0]) {
            snprintf(err, errlen, "%s", w->fail);
            goto out_free;
        }
    }
    flush_spool(w);
    set_state(w, "stopped");
    report(w, 1);
    say(w, "stopped: %" PRIu64 " games sent, %d left in the spool %s", w->sent,
        spool_count(w->spool), o->spool_dir);
    rc = 0;
out_free:
    selfplay_free(w->sp);
    nn_model_free(w->model);
    broker_free(w->b);
    spool_free(w->spool);
    record_free(&w->rec);
    free(w->frame);
    free(w->sbuf);
    free(w);
    return rc;
}
