#include "selfplay/worker.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "selfplay/wire.h"
#include "util/util.h"

typedef struct worker_state {
    const worker_opts_t *o;
    uint8_t *frame;       /* reused frame buffer */
    size_t frame_cap;
    uint64_t games;
    uint64_t rng;
    int failed;
    double last_write_ms;
    char err[256];
} worker_state_t;

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

static int on_game(void *user, const game_record_t *rec)
{
    worker_state_t *w = user;
    size_t len = record_encode(rec, &w->frame, &w->frame_cap, w->err, sizeof w->err);
    if (len == 0) {
        w->failed = 1;
        return 1;
    }
    if (wire_write_all(w->o->records_fd, w->frame, len) != 0 ||
        (w->o->fault == WORKER_FAULT_GARBAGE && write_garbage(w, len) != 0)) {
        snprintf(w->err, sizeof w->err, "records fd: %s", strerror(errno));
        w->failed = 1;
        return 1;
    }
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
static int control_line(selfplay_t *sp, nn_model_t **model, const char *line, char *err,
                        size_t errlen)
{
    if (strcmp(line, "stop") == 0)
        return 1;
    uint64_t gen;
    char path[4096];
    if (sscanf(line, "model %" SCNu64 " %4095[^\n]", &gen, path) == 2) {
        char lerr[256];
        nn_model_t *m = nn_model_load(path, lerr, sizeof lerr);
        if (!m) {
            /* a checkpoint we cannot read: keep playing with the current one */
            fprintf(stderr, "gomoku worker %ld: %s (keeping the current model)\n",
                    (long)getpid(), lerr);
            return 0;
        }
        if (selfplay_set_model(sp, m, gen, lerr, sizeof lerr) != 0) {
            fprintf(stderr, "gomoku worker %ld: %s\n", (long)getpid(), lerr);
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
    nn_model_t *model = nn_model_load(o->model_path, err, errlen);
    if (!model)
        return -1;
    char note[256] = "";
    selfplay_t *sp = selfplay_create(&o->sp, model, o->gen, note, sizeof note, err, errlen);
    if (!sp)
        goto out_free_model;
    if (note[0])
        fprintf(stderr, "gomoku worker %ld: %s\n", (long)getpid(), note);

    worker_state_t w = {.o = o, .rng = o->sp.seed ^ 0xabcdefull, .last_write_ms = util_now_ms()};
    if (o->fault == WORKER_FAULT_STALL)
        for (;;)
            pause(); /* tests: alive but silent, as a hung device would leave it */
    wire_lines_t lines = {.len = 0};
    char line[4200];
    for (;;) {
        int eof = wire_lines_fill(&lines, o->control_fd) != 0;
        int stop = 0;
        while (!stop && wire_lines_next(&lines, line, sizeof line)) {
            int c = control_line(sp, &model, line, err, errlen);
            if (c < 0)
                goto out_free_sp;
            stop = c == 1;
        }
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
    free(w.frame);
    selfplay_free(sp);
out_free_model:
    nn_model_free(model);
    return rc;
}
