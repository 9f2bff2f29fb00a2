#include "selfplay/worker.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "selfplay/spool.h"
#include "selfplay/wire.h"
#include "util/util.h"

#define SPOOL_MAX 1000000     /* never reached: the pipe holds the worker back long before */
#define PENDING_MAX 100000    /* ids awaiting an ack we keep track of (the spool keeps the rest) */

/* A game sent and not yet acknowledged: its id and its spool file. */
typedef struct pending {
    uint64_t wid, seq;
    uint64_t no;          /* spool file number; UINT64_MAX: not in the spool */
} pending_t;

typedef struct worker_state {
    const worker_opts_t *o;
    spool_t *spool;
    uint64_t wid, seq;    /* this life's worker id, next game number */
    game_record_t rec;    /* the finished game with its id */
    uint8_t *frame;       /* reused frame buffer */
    size_t frame_cap;
    pending_t *pend;
    int npend, cappend;
    uint64_t games, unspooled;
    uint64_t rng;
    int failed;
    int spool_failing;    /* the last spool write failed (said once per outage) */
    double last_write_ms;
    char err[256];
} worker_state_t;

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "gomoku worker %ld: %s\n", (long)getpid(), msg);
}

/* Test mode: corrupt frames after each good one. The trainer must reject
 * them one by one and still accept the good frames around them. */
static int write_garbage(worker_state_t *w, size_t len)
{
    uint8_t junk[64];
    for (size_t i = 0; i < sizeof junk; i++)
        junk[i] = (uint8_t)util_rng_next(&w->rng);
    if (wire_write_all(w->o->records_fd, junk, sizeof junk) != 0)
        return -1;
    /* the good frame again with one payload byte flipped: its CRC fails */
    w->frame[len - 1] ^= 0x5a;
    return wire_write_all(w->o->records_fd, w->frame, len);
}

/* Test mode: the game cut before its last move and marked resigned, with
 * the side that resigned recorded as the winner; a valid frame (CRC and
 * all) that only the rules refuse. */
static int write_forged(worker_state_t *w)
{
    const game_record_t *g = &w->rec;
    if (g->nplies < 2)
        return 0;
    game_record_t f;
    record_init(&f);
    record_clear(&f, (rule_t)g->rule, g->size, g->model_gen);
    uint32_t n = g->nplies - 1;
    for (uint32_t i = 0; i < n; i++) {
        const record_ply_t *p = &g->plies[i];
        if (record_add_ply(&f, p->move, p->full, p->root_value, g->visits + p->visit_off,
                           p->nvisits) != 0)
            goto out_free;
    }
    f.flags = RECORD_FLAG_RESIGNED;
    f.result = n % 2 == 0 ? RESULT_BLACK : RESULT_WHITE;   /* the side to move "wins" */
    f.worker_id = w->wid;
    f.game_seq = w->seq++;
    char e[256];
    size_t len = record_encode(&f, &w->frame, &w->frame_cap, e, sizeof e);
    int rc = len == 0 ? 0 : wire_write_all(w->o->records_fd, w->frame, len);
    record_free(&f);
    return rc;
out_free:
    record_free(&f);
    return 0;
}

static void pending_add(worker_state_t *w, uint64_t no)
{
    if (w->npend == w->cappend) {
        if (w->npend >= PENDING_MAX)
            return;   /* the spool file stays until the trainer takes it */
        int ncap = w->cappend ? w->cappend * 2 : 64;
        pending_t *p = realloc(w->pend, (size_t)ncap * sizeof *p);
        if (!p)
            return;
        w->pend = p;
        w->cappend = ncap;
    }
    w->pend[w->npend++] = (pending_t){w->rec.worker_id, w->rec.game_seq, no};
}

/* "ack WID SEQ": the trainer has the game; drop it from the spool. Acks
 * come in the order the games were sent, so the match is near the front. */
static void on_ack(worker_state_t *w, uint64_t wid, uint64_t seq)
{
    for (int i = 0; i < w->npend; i++) {
        if (w->pend[i].wid != wid || w->pend[i].seq != seq)
            continue;
        if (w->pend[i].no != UINT64_MAX)
            spool_remove(w->spool, w->pend[i].no);
        memmove(w->pend + i, w->pend + i + 1, (size_t)(w->npend - i - 1) * sizeof *w->pend);
        w->npend--;
        return;
    }
}

void worker_log_game(const char *path, const game_record_t *r)
{
    FILE *f = path ? fopen(path, "ae") : NULL;
    if (!f)
        return;
    fprintf(f, "%016" PRIx64 " %" PRIu64 "\n", r->worker_id, r->game_seq);
    fclose(f);
}

static int on_game(void *user, const game_record_t *rec)
{
    worker_state_t *w = user;
    if (record_copy(&w->rec, rec) != 0) {
        snprintf(w->err, sizeof w->err, "out of memory");
        w->failed = 1;
        return 1;
    }
    w->rec.worker_id = w->wid;
    w->rec.game_seq = w->seq++;
    size_t len = record_encode(&w->rec, &w->frame, &w->frame_cap, w->err, sizeof w->err);
    if (len == 0) {
        w->failed = 1;
        return 1;
    }
    /* kept before it is sent: a trainer killed with the game in the pipe
     * still gets it, from the spool */
    uint64_t no = UINT64_MAX;
    char e[512];
    if (w->spool && spool_put(w->spool, w->frame, len, &no, e, sizeof e) != 0) {
        no = UINT64_MAX;
        w->unspooled++;
        if (!w->spool_failing)
            say("%s: games are sent without a copy in the spool until it can be written (one "
                "the trainer has not stored when it is killed is lost)", e);
        w->spool_failing = 1;
    } else if (w->spool && w->spool_failing) {
        say("spool writable again (%" PRIu64 " games went without a copy)", w->unspooled);
        w->spool_failing = 0;
    }
    worker_log_game(w->o->games_log, &w->rec);
    if (wire_write_all(w->o->records_fd, w->frame, len) != 0 ||
        (w->o->fault == WORKER_FAULT_GARBAGE && write_garbage(w, len) != 0) ||
        (w->o->fault == WORKER_FAULT_FORGE && write_forged(w) != 0)) {
        snprintf(w->err, sizeof w->err, "records fd: %s", strerror(errno));
        w->failed = 1;
        return 1;
    }
    if (w->spool)
        pending_add(w, no);
    w->games++;
    w->last_write_ms = util_now_ms();
    return 0;
}

/* An empty frame (header only): "alive" for the trainer's stall check
 * when no game has finished for a while. */
static int heartbeat(worker_state_t *w)
{
    double now = util_now_ms();
    if (now - w->last_write_ms < WORKER_HEARTBEAT_MS)
        return 0;
    uint8_t h[FRAME_HEADER_BYTES];
    frame_heartbeat(h);
    if (wire_write_all(w->o->records_fd, h, sizeof h) != 0) {
        snprintf(w->err, sizeof w->err, "records fd: %s", strerror(errno));
        return -1;
    }
    w->last_write_ms = now;
    return 0;
}

/* Handle one control line; returns 1 on "stop", -1 on failure, else 0. */
static int control_line(worker_state_t *w, selfplay_t *sp, nn_model_t **model, const char *line,
                        char *err, size_t errlen)
{
    if (strcmp(line, "stop") == 0)
        return 1;
    uint64_t gen, wid, seq;
    char tail;
    if (sscanf(line, "ack %" SCNx64 " %" SCNu64 "%c", &wid, &seq, &tail) == 2) {
        on_ack(w, wid, seq);
        return 0;
    }
    char path[4096];
    if (sscanf(line, "model %" SCNu64 " %4095[^\n]", &gen, path) == 2) {
        char lerr[256];
        nn_model_t *m = nn_model_load(path, lerr, sizeof lerr);
        if (!m) {
            /* a checkpoint we cannot read: keep playing with the current one */
            say("%s (keeping the current model)", lerr);
            return 0;
        }
        if (selfplay_set_model(sp, m, gen, lerr, sizeof lerr) != 0) {
            say("%s", lerr);
            nn_model_free(m);
            return 0;
        }
        nn_model_free(*model);
        *model = m;
        return 0;
    }
    snprintf(err, errlen, "unknown control line '%.64s'", line);
    return -1;
}

/* The spool, when the previous life of this worker slot still holds its
 * lock for a moment (its trainer was just killed); NULL after a few tries. */
static spool_t *open_spool(const char *dir)
{
    char e[512] = "";
    for (int i = 0; i < 50; i++) {
        spool_t *s = spool_open(dir, SPOOL_MAX, 0, e, sizeof e);
        if (s)
            return s;
        usleep(100000);
    }
    say("%s: playing without a spool (a game the trainer has not stored when it is killed "
        "is lost)", e);
    return NULL;
}

int worker_run(const worker_opts_t *o, char *err, size_t errlen)
{
    /* die with the trainer; if it is already gone, go at once */
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (o->parent_pid > 0 && getppid() != (pid_t)o->parent_pid) {
        snprintf(err, errlen, "parent %ld is gone", o->parent_pid);
        return -1;
    }
    /* Ctrl-C reaches the whole process group: the trainer decides when we stop */
    signal(SIGINT, SIG_IGN);
    signal(SIGPIPE, SIG_IGN);
    int fl = fcntl(o->control_fd, F_GETFL);
    if (fl < 0 || fcntl(o->control_fd, F_SETFL, fl | O_NONBLOCK) < 0) {
        snprintf(err, errlen, "control fd %d: %s", o->control_fd, strerror(errno));
        return -1;
    }
    fl = fcntl(o->records_fd, F_GETFL);
    if (fl < 0 || fcntl(o->records_fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
        snprintf(err, errlen, "records fd %d: %s", o->records_fd, strerror(errno));
        return -1;
    }

    int rc = -1;
    worker_state_t w = {.o = o, .rng = o->sp.seed ^ 0xabcdefull, .last_write_ms = util_now_ms(),
                        .wid = util_random_u64()};
    record_init(&w.rec);
    nn_model_t *model = nn_model_load(o->model_path, err, errlen);
    if (!model)
        goto out_free_state;
    char note[256] = "";
    selfplay_t *sp = selfplay_create(&o->sp, model, o->gen, note, sizeof note, err, errlen);
    if (!sp)
        goto out_free_model;
    if (note[0])
        say("%s", note);
    if (o->spool_dir)
        w.spool = open_spool(o->spool_dir);

    if (o->fault == WORKER_FAULT_STALL)
        for (;;)
            pause(); /* tests: alive but silent, as a hung device would leave it */
    wire_lines_t lines = {.len = 0};
    char line[4200];
    for (;;) {
        int eof = 0, stop = 0, full;
        do {   /* every line waiting (acks come one per game) */
            eof = wire_lines_fill(&lines, o->control_fd) != 0;
            full = lines.len == sizeof lines.buf;
            while (!stop && wire_lines_next(&lines, line, sizeof line)) {
                int c = control_line(&w, sp, &model, line, err, errlen);
                if (c < 0)
                    goto out_free_sp;
                stop = c == 1;
            }
        } while (full && !eof && !stop);
        if (stop || eof) {
            rc = 0;
            break;
        }
        if (selfplay_step(sp, on_game, &w, err, errlen) < 0)
            goto out_free_sp;
        if (w.failed || heartbeat(&w) != 0) {
            snprintf(err, errlen, "%s", w.err);
            goto out_free_sp;
        }
    }
out_free_sp:
    selfplay_free(sp);
out_free_model:
    nn_model_free(model);
out_free_state:
    spool_free(w.spool);   /* what is left there the trainer takes */
    free(w.pend);
    free(w.frame);
    record_free(&w.rec);
    return rc;
}
