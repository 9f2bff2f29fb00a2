/* The trainer's worker processes: spawn, read, restart, stop. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
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
#include "selfplay/trainer_int.h"
#include "selfplay/wire.h"


const char *trainer_wstate_name(wstate_t s)
{
    switch (s) {
    case W_RUNNING: return "running";
    case W_BACKOFF: return "restarting";
    case W_STOPPING: return "stopping";
    case W_DONE: return "stopped";
    }
    return "?";
}

/* ---- workers ---------------------------------------------------------- */

int trainer_spawn_worker(trainer_t *t, wslot_t *w)
{
    int rec[2] = {-1, -1}, ctl[2] = {-1, -1}, child_rec = -1, child_ctl = -1;
    if (pipe2(rec, O_CLOEXEC) != 0 || pipe2(ctl, O_CLOEXEC) != 0)
        goto out_fail;
    /* above 10, so the dup2 onto 3 and 4 in the child cannot clobber them */
    child_rec = fcntl(rec[1], F_DUPFD_CLOEXEC, 10);
    child_ctl = fcntl(ctl[0], F_DUPFD_CLOEXEC, 10);
    if (child_rec < 0 || child_ctl < 0)
        goto out_fail;
    fcntl(rec[0], F_SETFL, O_NONBLOCK);
    fcntl(ctl[1], F_SETFL, O_NONBLOCK);

    char a_gen[32], a_ppid[32], a_seed[32];
    snprintf(a_gen, sizeof a_gen, "%" PRIu64, t->generation);
    snprintf(a_ppid, sizeof a_ppid, "%ld", (long)getpid());
    snprintf(a_seed, sizeof a_seed, "%" PRIu64,
             t->cfg.seed * 1000003u + (uint64_t)w->id * 7919u + w->restarts * 104729u +
                 t->step * 31u + (uint64_t)time(NULL));
    /* send paths, not data: the worker reads the settings from RUN_DIR/config */
    char *argv[28];
    int ac = 0;
    argv[ac++] = "gomoku";
    argv[ac++] = "worker";
    argv[ac++] = "--run-dir";
    argv[ac++] = t->dir;
    argv[ac++] = "--records-fd";
    argv[ac++] = "3";
    argv[ac++] = "--control-fd";
    argv[ac++] = "4";
    argv[ac++] = "--model";
    argv[ac++] = t->model_path;
    argv[ac++] = "--gen";
    argv[ac++] = a_gen;
    argv[ac++] = "--parent-pid";
    argv[ac++] = a_ppid;
    argv[ac++] = "--threads";
    argv[ac++] = "1";
    argv[ac++] = "--seed";
    argv[ac++] = a_seed;
    char spool[3300];
    argv[ac++] = "--spool";
    argv[ac++] = (char *)trainer_spool_dir(t, w->id, spool, sizeof spool);
    if (t->o->worker_fault) {
        argv[ac++] = "--fault";
        argv[ac++] = (char *)t->o->worker_fault;
    }
    if (t->o->games_log) {
        argv[ac++] = "--games-log";
        argv[ac++] = (char *)t->o->games_log;
    }
    argv[ac] = NULL;

    char logp[4096];
    snprintf(logp, sizeof logp, "%s/workers.log", t->dir);
    const util_spawn_fd_t sfds[] = {
        {0, -1, "/dev/null", O_RDONLY},
        {2, -1, logp, O_WRONLY | O_CREAT | O_APPEND},
        {1, 2, NULL, 0},
        {3, child_rec, NULL, 0},
        {4, child_ctl, NULL, 0},
    };
    const char *exe = t->o->exe ? t->o->exe : "/proc/self/exe";
    pid_t pid;
    int rc = util_spawn(&pid, exe, argv, sfds, (int)(sizeof sfds / sizeof sfds[0]), false);
    if (rc != 0) {
        errno = rc;
        goto out_fail;
    }
    close(child_rec);
    close(child_ctl);
    close(rec[1]);
    close(ctl[0]);
    w->pid = pid;
    w->rec_fd = rec[0];
    w->ctl_fd = ctl[1];
    w->state = W_RUNNING;
    w->started_at = util_now_ms() * 1e-3;
    w->last_seen = w->started_at;
    w->bad_life = 0;
    w->nacks = 0;
    frame_stream_clear(w->fs);
    return 0;
out_fail:;
    int e = errno;
    int fds[] = {rec[0], rec[1], ctl[0], ctl[1], child_rec, child_ctl};
    for (int i = 0; i < 6; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    trainer_log(t, "cannot start worker %d: %s", w->id, strerror(e));
    return -1;
}

void trainer_schedule_restart(wslot_t *w)
{
    double lived = util_now_ms() * 1e-3 - w->started_at;
    w->backoff_s = lived >= HEALTHY_S || w->backoff_s <= 0 ? 1.0 : fmin(w->backoff_s * 2, BACKOFF_MAX_S);
    w->restart_at = util_now_ms() * 1e-3 + w->backoff_s;
    w->state = W_BACKOFF;
}

/* The worker's records fd reached end of file (or it is being killed):
 * reap it, drop its partial frame, and restart it unless we are stopping. */
void trainer_worker_gone(trainer_t *t, wslot_t *w, int stopping)
{
    int st = 0;
    pid_t r = 0;
    for (int i = 0; i < 100 && (r = waitpid(w->pid, &st, WNOHANG)) == 0; i++)
        usleep(10000);
    if (r == 0) {
        kill(w->pid, SIGKILL);
        r = waitpid(w->pid, &st, 0);
    }
    trainer_worker_frames(t, w); /* whole frames still held are games, not a partial one */
    size_t pend = frame_stream_pending(w->fs);
    if (pend > 0 && t->disk_full && !t->stopping) {
        trainer_log(t, "worker %d: %zu bytes not yet taken while games/ is full: its games stay "
                    "in its spool", w->id, pend);
    } else if (pend > 0) {
        w->partial++;
        t->partial++;
        t->rejected++;
        trainer_log(t, "worker %d: dropped a partial frame of %zu bytes", w->id, pend);
    }
    frame_stream_clear(w->fs);
    close(w->rec_fd);
    close(w->ctl_fd);
    w->rec_fd = w->ctl_fd = -1;
    w->nacks = 0;   /* its spool is read now, acknowledged or not */
    if (!t->disk_full) {
        char spool[3300];
        trainer_spool_take(t, trainer_spool_dir(t, w->id, spool, sizeof spool));
    }
    char how[64];
    if (r > 0 && WIFSIGNALED(st))
        snprintf(how, sizeof how, "was killed by signal %d", WTERMSIG(st));
    else if (r > 0 && WIFEXITED(st))
        snprintf(how, sizeof how, "exited with status %d", WEXITSTATUS(st));
    else
        snprintf(how, sizeof how, "is gone");
    if (stopping || w->state == W_STOPPING) {
        w->state = W_DONE;
        if (!(r > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0))
            trainer_log(t, "worker %d (pid %ld) %s while stopping", w->id, (long)w->pid, how);
        return;
    }
    trainer_schedule_restart(w);
    trainer_log(t, "worker %d (pid %ld) %s; restarting in %.0f s (see %s/workers.log)", w->id,
         (long)w->pid, how, w->backoff_s, t->dir);
}

void trainer_worker_send(trainer_t *t, wslot_t *w, const char *line)
{
    if (w->state != W_RUNNING)
        return;
    size_t len = strlen(line);
    ssize_t n = write(w->ctl_fd, line, len);
    if (n != (ssize_t)len && !(n < 0 && errno == EPIPE))
        trainer_log(t, "worker %d: control message not sent (%s)", w->id,
             n < 0 ? strerror(errno) : "pipe full");
}

void trainer_ack(trainer_t *t, wslot_t *w, uint64_t wid, uint64_t seq)
{
    (void)t;
    if (wid == 0 || w->state != W_RUNNING)
        return;
    if (w->capacks - w->nacks < 64) {
        size_t ncap = w->capacks ? w->capacks * 2 : 4096;
        char *p = realloc(w->acks, ncap);
        if (!p)
            return;   /* the game stays in its spool; the trainer takes it there later */
        w->acks = p;
        w->capacks = ncap;
    }
    w->nacks += (size_t)snprintf(w->acks + w->nacks, w->capacks - w->nacks,
                                 "ack %016" PRIx64 " %" PRIu64 "\n", wid, seq);
}

/* Whole lines, at most PIPE_BUF bytes a write (so a write is all or
 * nothing); what the pipe has no room for waits for the next call. */
void trainer_acks_flush(trainer_t *t, wslot_t *w)
{
    (void)t;
    if (w->nacks == 0)
        return;
    size_t at = 0;
    while (at < w->nacks && w->state == W_RUNNING) {
        size_t n = w->nacks - at;
        if (n > 4096) {
            n = 4096;
            while (n > 0 && w->acks[at + n - 1] != '\n')
                n--;
        }
        ssize_t k = write(w->ctl_fd, w->acks + at, n);
        if (k <= 0)
            break;   /* full (or gone): later */
        at += (size_t)k;
    }
    if (w->state != W_RUNNING)
        at = w->nacks;
    memmove(w->acks, w->acks + at, w->nacks - at);
    w->nacks -= at;
}

/* The frame failed to write: keep it (the worker's pipe is left unread
 * until it is written). */
static void hold(trainer_t *t, wslot_t *w, const uint8_t *frame, size_t len)
{
    if (t->held_cap < len) {
        uint8_t *p = realloc(t->held, len);
        if (!p) {
            /* still in the worker's spool: the trainer takes it from there */
            t->games_dropped++;
            trainer_log(t, "out of memory holding a game while games/ is full (it stays in "
                        "worker %d's spool)", w->id);
            return;
        }
        t->held = p;
        t->held_cap = len;
    }
    memcpy(t->held, frame, len);
    t->held_len = len;
    t->held_slot = w->id;
}

int trainer_disk_retry(trainer_t *t)
{
    if (!t->disk_full)
        return 1;
    if (util_now_ms() * 1e-3 < t->disk_retry_at && !t->stopping)
        return 0;
    if (t->held_len == 0) {
        t->disk_full = 0;   /* the next write (or the broker's re-read) tells */
        return 1;
    }
    char why[256];
    if (record_decode_payload(t->held + FRAME_HEADER_BYTES,
                              (uint32_t)(t->held_len - FRAME_HEADER_BYTES), &t->rec, why,
                              sizeof why) != 0) {
        trainer_log(t, "the held game no longer decodes (%s): dropped", why);   /* cannot be */
        t->games_dropped++;
        t->held_len = 0;
        t->disk_full = 0;
        return 1;
    }
    int st = trainer_store_once(t, t->held, t->held_len);
    if (st < 0)
        return 0;
    wslot_t *w = &t->w[t->held_slot];
    if (st == 1)
        w->games++;
    else
        w->duplicates++;
    trainer_ack(t, w, t->rec.worker_id, t->rec.game_seq);
    t->held_len = 0;
    t->disk_full = 0;
    return 1;
}

/* Take every whole frame the worker has sent (none while games/ cannot be
 * written: the worker blocks once its pipe is full). */
void trainer_worker_frames(trainer_t *t, wslot_t *w)
{
    for (;;) {
        if (t->disk_full && !t->stopping)
            return;
        const uint8_t *frame;
        size_t flen;
        uint64_t off;
        char why[256];
        int st = frame_stream_next(w->fs, &frame, &flen, &off, why, sizeof why);
        if (st == 0)
            return;
        if (st > 0) {
            w->last_seen = util_now_ms() * 1e-3;
            if (flen == FRAME_HEADER_BYTES)
                continue; /* heartbeat */
            char rwhy[200];
            if (record_decode_payload(frame + FRAME_HEADER_BYTES,
                                      (uint32_t)(flen - FRAME_HEADER_BYTES), &t->rec, rwhy,
                                      sizeof rwhy) != 0) {
                frame_stream_mark_bad(w->fs);
                snprintf(why, sizeof why, "bad frame at byte %" PRIu64 ": %s", off, rwhy);
                st = -1;
            } else if (trainer_check_record(t, &t->rec, rwhy, sizeof rwhy) != 0) {
                snprintf(why, sizeof why, "%s", rwhy);
                /* refused for good: a resend cannot change that */
                trainer_ack(t, w, t->rec.worker_id, t->rec.game_seq);
                st = -1;
            }
        }
        if (st > 0) {
            int r = t->disk_full ? -1 : trainer_store_once(t, frame, flen);
            if (r < 0 && t->stopping && t->disk_full) {
                /* stopping on a full disk: the worker must be read to its end;
                 * the game stays in its spool for the next trainer */
                t->games_deferred++;
                continue;
            }
            if (r < 0) {
                hold(t, w, frame, flen);
                return;
            }
            if (r == 1)
                w->games++;
            else
                w->duplicates++;
            trainer_ack(t, w, t->rec.worker_id, t->rec.game_seq);
            continue;
        }
        w->bad_frames++;
        w->bad_life++;
        t->rejected++;
        if (w->bad_frames <= 3 || w->bad_frames % 1000 == 0)
            trainer_log(t, "worker %d: rejected frame (%" PRIu64 " so far): %s", w->id, w->bad_frames,
                 why);
        if (t->o->bad_frame_limit > 0 && w->bad_life == (uint64_t)t->o->bad_frame_limit &&
            w->state == W_RUNNING) {
            /* the good frames it sent before dying are still taken; its EOF follows */
            trainer_log(t, "worker %d: %" PRIu64 " corrupt frames, restarting it", w->id, w->bad_life);
            kill(w->pid, SIGKILL);
        }
    }
}

/* Read from every ready worker; wait up to timeout_ms for something. */
void trainer_poll_workers(trainer_t *t, int timeout_ms, int stopping)
{
    struct pollfd pf[512];
    int idx[512], n = 0;
    if (t->disk_full && trainer_disk_retry(t)) {
        /* written: take what the workers sent meanwhile */
        for (int i = 0; i < t->nw; i++)
            if (t->w[i].rec_fd >= 0) {
                trainer_worker_frames(t, &t->w[i]);
                trainer_acks_flush(t, &t->w[i]);
            }
    }
    if (t->disk_full && !t->stopping) {
        /* paused: leave the pipes unread, so the workers block on them (not
         * while stopping: a worker blocked on its pipe cannot hear "stop",
         * and a killed one's EOF must be read; what cannot be written then
         * stays in the workers' spools) */
        if (timeout_ms > 0)
            usleep((useconds_t)timeout_ms * 1000);
        return;
    }
    for (int i = 0; i < t->nw && n < 512; i++)
        if (t->w[i].state == W_RUNNING || t->w[i].state == W_STOPPING) {
            pf[n].fd = t->w[i].rec_fd;
            pf[n].events = POLLIN;
            pf[n].revents = 0;
            idx[n++] = i;
        }
    if (n == 0) {
        if (timeout_ms > 0)
            usleep((useconds_t)timeout_ms * 1000);
        return;
    }
    int rc = poll(pf, (nfds_t)n, timeout_ms);
    if (rc <= 0)
        return;
    for (int k = 0; k < n; k++) {
        if (!pf[k].revents)
            continue;
        wslot_t *w = &t->w[idx[k]];
        for (;;) {
            ssize_t r = frame_stream_fill(w->fs, w->rec_fd);
            if (r > 0) {
                trainer_worker_frames(t, w);
                if (t->disk_full && !t->stopping)
                    break;
                continue;
            }
            if (r == 0 || r == -2)
                trainer_worker_gone(t, w, stopping);
            break;
        }
        trainer_acks_flush(t, w);
    }
}

/* A gap between two looks for stalled workers longer than this is the
 * trainer's own: it did not run (its process group stopped with SIGSTOP
 * while someone measures, as docs/ and README advise, or the machine
 * suspended), so it read no frames either. */
#define OWN_GAP_S 5.0

void trainer_restart_due(trainer_t *t)
{
    double now = util_now_ms() * 1e-3;
    double gap = t->last_stall_check > 0.0 ? now - t->last_stall_check : 0.0;
    t->last_stall_check = now;
    /* the workers' silence in that gap is not theirs: a resumed group
     * used to lose its workers' games in progress to a "stall" */
    if (gap > OWN_GAP_S)
        for (int i = 0; i < t->nw; i++)
            if (t->w[i].state == W_RUNNING)
                t->w[i].last_seen += gap;
    for (int i = 0; i < t->nw; i++) {
        wslot_t *w = &t->w[i];
        /* paused workers are silent because we do not read them */
        if (w->state == W_RUNNING && !t->disk_full && now - w->last_seen > t->cfg.stall_s) {
            w->stalls++;
            trainer_log(t, "worker %d (pid %ld) stalled: no game and no heartbeat for %.0f s; "
                 "restarting it", w->id, (long)w->pid, now - w->last_seen);
            kill(w->pid, SIGKILL);
            w->last_seen = now; /* its EOF follows the kill */
        }
        if (w->state == W_BACKOFF && now >= w->restart_at) {
            w->restarts++;
            if (trainer_spawn_worker(t, w) != 0)
                trainer_schedule_restart(w);
            else
                trainer_log(t, "worker %d restarted (pid %ld, restart %" PRIu64 ")", w->id,
                     (long)w->pid, w->restarts);
        }
    }
}

void trainer_stop_workers(trainer_t *t)
{
    t->stopping = 1;
    for (int i = 0; i < t->nw; i++)
        if (t->w[i].state == W_RUNNING) {
            trainer_worker_send(t, &t->w[i], "stop\n");
            t->w[i].state = W_STOPPING;
        } else if (t->w[i].state == W_BACKOFF) {
            t->w[i].state = W_DONE;
        }
    /* keep reading: the games they finish on the way out are kept */
    double deadline = util_now_ms() * 1e-3 + t->o->stop_timeout_s;
    for (;;) {
        int left = 0;
        for (int i = 0; i < t->nw; i++)
            left += t->w[i].state == W_STOPPING;
        if (left == 0)
            break;
        if (util_now_ms() * 1e-3 > deadline) {
            for (int i = 0; i < t->nw; i++)
                if (t->w[i].state == W_STOPPING) {
                    trainer_log(t, "worker %d did not stop in %d s: killing it", i,
                         t->o->stop_timeout_s);
                    kill(t->w[i].pid, SIGKILL);
                }
            deadline = util_now_ms() * 1e-3 + 3600; /* their EOF follows the kill */
        }
        trainer_poll_workers(t, 100, 1);
    }
}

