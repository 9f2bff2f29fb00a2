#include "selfplay/trainer.h"

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

#include "engine/record.h"
#include "nn/nn.h"
#include "selfplay/replay.h"
#include "selfplay/wire.h"
#include "engine/util.h"

extern char **environ;

#define SHARD_GAMES 2000      /* games per shard before rotation */
#define BACKOFF_MAX_S 30.0
#define HEALTHY_S 60.0        /* a worker that lived this long restarts without delay growth */
#define RATE_SNAPS 30         /* rates over the last ~30 s */

typedef enum { W_RUNNING, W_BACKOFF, W_STOPPING, W_DONE } wstate_t;

static const char *wstate_name(wstate_t s)
{
    switch (s) {
    case W_RUNNING: return "running";
    case W_BACKOFF: return "restarting";
    case W_STOPPING: return "stopping";
    case W_DONE: return "stopped";
    }
    return "?";
}

typedef struct wslot {
    int id;
    wstate_t state;
    pid_t pid;
    int rec_fd;          /* read end of its records pipe (nonblocking) */
    int ctl_fd;          /* write end of its control pipe (nonblocking) */
    wire_buf_t buf;
    double started_at, restart_at, backoff_s;
    uint64_t games;      /* accepted, all its lives */
    uint64_t bad_frames; /* rejected, all its lives */
    uint64_t bad_life;   /* rejected in this life (restart past the limit) */
    uint64_t restarts;
    uint64_t partial;    /* partial frames dropped at death */
} wslot_t;

typedef struct snap { double t; uint64_t games, positions, samples; } snap_t;

typedef struct trainer {
    const trainer_opts_t *o;
    run_config_t cfg;
    char dir[3072];
    char path[4096];       /* scratch */
    FILE *log;
    int tty;

    nn_model_t *model;
    nn_net_t *net;
    char device[64];
    replay_t *replay;
    replay_batcher_t *batcher;
    nn_train_opts_t topts;
    nn_schedule_t sched;

    uint64_t step, start_step, target, ckpt_step;
    uint64_t generation;
    char model_path[4096]; /* newest checkpoint */
    nn_losses_t last;      /* losses of the newest step */
    double loss_sum[4];
    int loss_n;
    uint64_t min_positions;

    uint64_t games, positions;        /* accepted, all time */
    uint64_t session_games, session_positions, session_samples;
    uint64_t rejected, partial, load_bad;

    int shard_fd;
    uint64_t shard_index, shard_games;

    wslot_t *w;
    int nw;
    game_record_t rec;
    char state[32];

    double t_start, t_status, t_progress;
    snap_t snaps[RATE_SNAPS];
    int nsnaps;
    double rate_games, rate_positions, rate_samples;
} trainer_t;

static volatile sig_atomic_t g_stop_signal;

/* A repeated signal changes nothing: `timeout` and process-group kills
 * deliver the same signal twice, and the checkpoint must still happen. */
static void on_stop_signal(int sig) { g_stop_signal = sig; }

static void tlog(trainer_t *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void tlog(trainer_t *t, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fprintf(stderr, "%sgomoku train: %s\n", t->tty ? "\r\033[K" : "", msg);
    if (t->log) {
        time_t now = time(NULL);
        struct tm tm;
        char ts[32];
        strftime(ts, sizeof ts, "%Y-%m-%d %H:%M:%S", localtime_r(&now, &tm));
        fprintf(t->log, "%s %s\n", ts, msg);
        fflush(t->log);
    }
}

static const char *run_path(trainer_t *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static const char *run_path(trainer_t *t, const char *fmt, ...)
{
    char rel[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(rel, sizeof rel, fmt, ap);
    va_end(ap);
    snprintf(t->path, sizeof t->path, "%s/%s", t->dir, rel);
    return t->path;
}

/* ---- checkpoints ------------------------------------------------------ */

static int cmp_u64_desc(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* Numbers N of the files "<prefix>NNNNNN<suffix>" in dir, sorted descending. */
static int list_numbered(const char *dir, const char *prefix, const char *suffix,
                         uint64_t **out, size_t *n)
{
    *out = NULL;
    *n = 0;
    DIR *d = opendir(dir);
    if (!d)
        return errno == ENOENT ? 0 : -1;
    size_t cap = 0;
    size_t pl = strlen(prefix), sl = strlen(suffix);
    struct dirent *de;
    while ((de = readdir(d))) {
        const char *nm = de->d_name;
        size_t l = strlen(nm);
        if (l <= pl + sl || strncmp(nm, prefix, pl) != 0 || strcmp(nm + l - sl, suffix) != 0)
            continue;
        uint64_t v = 0;
        size_t i = pl;
        for (; i < l - sl && nm[i] >= '0' && nm[i] <= '9'; i++)
            v = v * 10 + (uint64_t)(nm[i] - '0');
        if (i != l - sl)
            continue;
        if (*n == cap) {
            cap = cap ? cap * 2 : 64;
            uint64_t *p = realloc(*out, cap * sizeof *p);
            if (!p) {
                closedir(d);
                return -1;
            }
            *out = p;
        }
        (*out)[(*n)++] = v;
    }
    closedir(d);
    if (*n > 0)
        qsort(*out, *n, sizeof **out, cmp_u64_desc);
    return 0;
}

static int load_or_create_model(trainer_t *t, char *err, size_t errlen)
{
    nn_config_t want;
    nn_config_default(&want, t->cfg.blocks, t->cfg.channels, t->cfg.size);
    char dir[3200];
    snprintf(dir, sizeof dir, "%s/models", t->dir);
    uint64_t *nums;
    size_t n;
    if (list_numbered(dir, "", ".gzm", &nums, &n) != 0) {
        snprintf(err, errlen, "cannot list %s: %s", dir, strerror(errno));
        return -1;
    }
    for (size_t i = 0; i < n && !t->model; i++) {
        char lerr[512];
        snprintf(t->model_path, sizeof t->model_path, "%s/%06" PRIu64 ".gzm", dir, nums[i]);
        nn_model_t *m = nn_model_load(t->model_path, lerr, sizeof lerr);
        if (!m) {
            tlog(t, "skipping checkpoint %s: %s", t->model_path, lerr);
            continue;
        }
        if (m->cfg.blocks != want.blocks || m->cfg.channels != want.channels ||
            m->cfg.board_max != want.board_max || m->rule != (uint32_t)t->cfg.rule) {
            snprintf(err, errlen, "%s is a %dx%d net for %dx%d %s, but the run's config says "
                     "%dx%d for %dx%d %s", t->model_path, m->cfg.blocks, m->cfg.channels,
                     m->cfg.board_max, m->cfg.board_max, rule_name((rule_t)m->rule),
                     want.blocks, want.channels, want.board_max, want.board_max,
                     rule_name(t->cfg.rule));
            nn_model_free(m);
            free(nums);
            return -1;
        }
        t->model = m;
    }
    if (!t->model && n > 0) {
        snprintf(err, errlen, "none of the %zu checkpoints in %s loads (see above)", n, dir);
        free(nums);
        return -1;
    }
    free(nums);
    if (t->model) {
        t->step = t->model->step;
        t->generation = t->model->generation;
        tlog(t, "resuming from %s (step %" PRIu64 ", generation %" PRIu64 ")", t->model_path,
             t->step, t->generation);
        return 0;
    }
    t->model = nn_model_create(&want, t->cfg.seed, err, errlen);
    if (!t->model)
        return -1;
    t->model->rule = (uint32_t)t->cfg.rule;
    t->model->step = 0;
    t->model->generation = 0;
    snprintf(t->model_path, sizeof t->model_path, "%s/%06d.gzm", dir, 0);
    if (nn_model_save(t->model, t->model_path, err, errlen) != 0)
        return -1;
    tlog(t, "new run: %d blocks x %d channels, %dx%d %s, initial model %s", want.blocks,
         want.channels, t->cfg.size, t->cfg.size, rule_name(t->cfg.rule), t->model_path);
    return 0;
}

/* ---- games on disk ---------------------------------------------------- */

static int open_shard(trainer_t *t, char *err, size_t errlen)
{
    const char *p = run_path(t, "games/shard-%06" PRIu64 ".gzr", t->shard_index);
    t->shard_fd = open(p, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (t->shard_fd < 0) {
        snprintf(err, errlen, "cannot open %s: %s", p, strerror(errno));
        return -1;
    }
    t->shard_games = 0;
    util_fsync_dir(run_path(t, "games"));
    return 0;
}

static void sync_shard(trainer_t *t)
{
    if (t->shard_fd >= 0 && fsync(t->shard_fd) != 0)
        tlog(t, "fsync of games shard %06" PRIu64 " failed: %s", t->shard_index,
             strerror(errno));
}

static int rotate_shard(trainer_t *t, char *err, size_t errlen)
{
    sync_shard(t);
    close(t->shard_fd);
    t->shard_fd = -1;
    t->shard_index++;
    return open_shard(t, err, errlen);
}

/* The record belongs in this run and replays legally. */
static int check_record(trainer_t *t, const game_record_t *r, char *why, size_t whylen)
{
    if (r->rule != (uint8_t)t->cfg.rule || r->size != t->cfg.size) {
        snprintf(why, whylen, "game is %dx%d %s, the run is %dx%d %s", r->size, r->size,
                 r->rule < RULE_COUNT ? rule_name((rule_t)r->rule) : "?", t->cfg.size,
                 t->cfg.size, rule_name(t->cfg.rule));
        return -1;
    }
    return record_validate(r, why, whylen);
}

static int load_games(trainer_t *t, char *err, size_t errlen)
{
    char dir[3200];
    snprintf(dir, sizeof dir, "%s/games", t->dir);
    uint64_t *nums;
    size_t n;
    if (list_numbered(dir, "shard-", ".gzr", &nums, &n) != 0) {
        snprintf(err, errlen, "cannot list %s: %s", dir, strerror(errno));
        return -1;
    }
    t->shard_index = n > 0 ? nums[0] + 1 : 0;
    /* oldest first, so the window ends with the newest games */
    for (size_t k = n; k-- > 0;) {
        char p[4200];
        snprintf(p, sizeof p, "%s/shard-%06" PRIu64 ".gzr", dir, nums[k]);
        char ferr[512];
        record_reader_t *fr = record_reader_open(p, ferr, sizeof ferr);
        if (!fr) {
            tlog(t, "skipping %s: %s", p, ferr);
            continue;
        }
        for (;;) {
            int rc = record_reader_next(fr, &t->rec, ferr, sizeof ferr);
            if (rc == 0)
                break;
            char why[256];
            if (rc < 0 || check_record(t, &t->rec, why, sizeof why) != 0) {
                t->load_bad++;
                if (t->load_bad <= 5)
                    tlog(t, "%s: dropped a bad frame: %s", p, rc < 0 ? ferr : why);
                continue;
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
        tlog(t, "all %" PRIu64 " saved frames in %s are invalid: training waits for new games",
             t->load_bad, dir);
    else if (t->load_bad > 0)
        tlog(t, "dropped %" PRIu64 " bad or torn frames in %s (a torn last frame is what a "
             "killed trainer leaves)", t->load_bad, dir);
    if (n > 0)
        tlog(t, "loaded %" PRIu64 " games, %" PRIu64 " positions from %zu shards; window holds %"
             PRIu64 " positions", t->games, t->positions, n, replay_positions(t->replay));
    return 0;
}

/* ---- workers ---------------------------------------------------------- */

static int spawn_worker(trainer_t *t, wslot_t *w)
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

    char a_gen[32], a_ppid[32], a_size[16], a_par[16], a_vis[16], a_seed[32], a_cheap[16],
        a_frac[32], a_resign[32];
    snprintf(a_resign, sizeof a_resign, "%.9g", t->cfg.resign);
    snprintf(a_cheap, sizeof a_cheap, "%d", t->cfg.cheap_visits);
    snprintf(a_frac, sizeof a_frac, "%.9g", t->cfg.full_frac);
    snprintf(a_gen, sizeof a_gen, "%" PRIu64, t->generation);
    snprintf(a_ppid, sizeof a_ppid, "%ld", (long)getpid());
    snprintf(a_size, sizeof a_size, "%d", t->cfg.size);
    snprintf(a_par, sizeof a_par, "%d", t->cfg.parallel);
    snprintf(a_vis, sizeof a_vis, "%d", t->cfg.visits);
    snprintf(a_seed, sizeof a_seed, "%" PRIu64,
             t->cfg.seed * 1000003u + (uint64_t)w->id * 7919u + w->restarts * 104729u +
                 t->step * 31u + (uint64_t)time(NULL));
    char *argv[40];
    int ac = 0;
    argv[ac++] = "gomoku";
    argv[ac++] = "worker";
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
    argv[ac++] = "--rule";
    argv[ac++] = (char *)rule_name(t->cfg.rule);
    argv[ac++] = "--size";
    argv[ac++] = a_size;
    argv[ac++] = "--parallel";
    argv[ac++] = a_par;
    argv[ac++] = "--visits";
    argv[ac++] = a_vis;
    argv[ac++] = "--cheap-visits";
    argv[ac++] = a_cheap;
    argv[ac++] = "--full-frac";
    argv[ac++] = a_frac;
    argv[ac++] = "--resign";
    argv[ac++] = a_resign;
    argv[ac++] = "--device";
    argv[ac++] = t->cfg.device;
    argv[ac++] = "--threads";
    argv[ac++] = "1";
    argv[ac++] = "--seed";
    argv[ac++] = a_seed;
    if (t->o->worker_fault) {
        argv[ac++] = "--fault";
        argv[ac++] = (char *)t->o->worker_fault;
    }
    argv[ac] = NULL;

    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    posix_spawn_file_actions_init(&fa);
    posix_spawnattr_init(&attr);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    char logp[4096];
    snprintf(logp, sizeof logp, "%s/workers.log", t->dir);
    posix_spawn_file_actions_addopen(&fa, 2, logp, O_WRONLY | O_CREAT | O_APPEND, 0644);
    posix_spawn_file_actions_adddup2(&fa, 2, 1);
    posix_spawn_file_actions_adddup2(&fa, child_rec, 3);
    posix_spawn_file_actions_adddup2(&fa, child_ctl, 4);
    sigset_t none, deflt;
    sigemptyset(&none);
    sigemptyset(&deflt);
    sigaddset(&deflt, SIGPIPE);
    sigaddset(&deflt, SIGTERM);
    sigaddset(&deflt, SIGINT);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &deflt);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    const char *exe = t->o->exe ? t->o->exe : "/proc/self/exe";
    pid_t pid;
    int rc = posix_spawn(&pid, exe, &fa, &attr, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
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
    w->bad_life = 0;
    wire_buf_clear(&w->buf);
    return 0;
out_fail:;
    int e = errno;
    int fds[] = {rec[0], rec[1], ctl[0], ctl[1], child_rec, child_ctl};
    for (int i = 0; i < 6; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    tlog(t, "cannot start worker %d: %s", w->id, strerror(e));
    return -1;
}

static void schedule_restart(wslot_t *w)
{
    double lived = util_now_ms() * 1e-3 - w->started_at;
    w->backoff_s = lived >= HEALTHY_S || w->backoff_s <= 0 ? 1.0 : fmin(w->backoff_s * 2, BACKOFF_MAX_S);
    w->restart_at = util_now_ms() * 1e-3 + w->backoff_s;
    w->state = W_BACKOFF;
}

/* The worker's records fd reached end of file (or it is being killed):
 * reap it, drop its partial frame, and restart it unless we are stopping. */
static void worker_gone(trainer_t *t, wslot_t *w, int stopping)
{
    int st = 0;
    pid_t r = 0;
    for (int i = 0; i < 100 && (r = waitpid(w->pid, &st, WNOHANG)) == 0; i++)
        usleep(10000);
    if (r == 0) {
        kill(w->pid, SIGKILL);
        r = waitpid(w->pid, &st, 0);
    }
    size_t pend = wire_buf_pending(&w->buf);
    if (pend > 0) {
        w->partial++;
        t->partial++;
        t->rejected++;
        tlog(t, "worker %d: dropped a partial frame of %zu bytes", w->id, pend);
    }
    wire_buf_clear(&w->buf);
    close(w->rec_fd);
    close(w->ctl_fd);
    w->rec_fd = w->ctl_fd = -1;
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
            tlog(t, "worker %d (pid %ld) %s while stopping", w->id, (long)w->pid, how);
        return;
    }
    schedule_restart(w);
    tlog(t, "worker %d (pid %ld) %s; restarting in %.0f s (see %s/workers.log)", w->id,
         (long)w->pid, how, w->backoff_s, t->dir);
}

static void worker_send(trainer_t *t, wslot_t *w, const char *line)
{
    if (w->state != W_RUNNING)
        return;
    size_t len = strlen(line);
    ssize_t n = write(w->ctl_fd, line, len);
    if (n != (ssize_t)len && !(n < 0 && errno == EPIPE))
        tlog(t, "worker %d: control message not sent (%s)", w->id,
             n < 0 ? strerror(errno) : "pipe full");
}

/* Take every whole frame the worker has sent. */
static void worker_frames(trainer_t *t, wslot_t *w)
{
    for (;;) {
        const uint8_t *frame;
        size_t flen;
        char why[256];
        wire_status_t st = wire_buf_next(&w->buf, &t->rec, &frame, &flen, why, sizeof why);
        if (st == WIRE_NEED_MORE)
            return;
        if (st == WIRE_FRAME && check_record(t, &t->rec, why, sizeof why) == 0) {
            if (wire_write_all(t->shard_fd, frame, flen) != 0) {
                tlog(t, "cannot write games shard: %s (game dropped)", strerror(errno));
                continue;
            }
            int np = replay_add(t->replay, &t->rec);
            if (np < 0) {
                tlog(t, "replay window: out of memory (game kept on disk only)");
                np = 0;
            }
            w->games++;
            t->games++;
            t->session_games++;
            t->positions += (uint64_t)np;
            t->session_positions += (uint64_t)np;
            if (++t->shard_games >= SHARD_GAMES) {
                char err[512];
                if (rotate_shard(t, err, sizeof err) != 0)
                    tlog(t, "%s", err);
            }
            continue;
        }
        w->bad_frames++;
        w->bad_life++;
        t->rejected++;
        if (w->bad_frames <= 3 || w->bad_frames % 1000 == 0)
            tlog(t, "worker %d: rejected frame (%" PRIu64 " so far): %s", w->id, w->bad_frames,
                 why);
        if (t->o->bad_frame_limit > 0 && w->bad_life == (uint64_t)t->o->bad_frame_limit &&
            w->state == W_RUNNING) {
            /* the good frames it sent before dying are still taken; its EOF follows */
            tlog(t, "worker %d: %" PRIu64 " corrupt frames, restarting it", w->id, w->bad_life);
            kill(w->pid, SIGKILL);
        }
    }
}

/* Read from every ready worker; wait up to timeout_ms for something. */
static void poll_workers(trainer_t *t, int timeout_ms, int stopping)
{
    struct pollfd pf[512];
    int idx[512], n = 0;
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
            ssize_t r = wire_buf_fill(&w->buf, w->rec_fd);
            if (r > 0) {
                worker_frames(t, w);
                continue;
            }
            if (r == 0 || r == -2)
                worker_gone(t, w, stopping);
            break;
        }
    }
}

static void restart_due(trainer_t *t)
{
    double now = util_now_ms() * 1e-3;
    for (int i = 0; i < t->nw; i++) {
        wslot_t *w = &t->w[i];
        if (w->state == W_BACKOFF && now >= w->restart_at) {
            w->restarts++;
            if (spawn_worker(t, w) != 0)
                schedule_restart(w);
            else
                tlog(t, "worker %d restarted (pid %ld, restart %" PRIu64 ")", w->id,
                     (long)w->pid, w->restarts);
        }
    }
}

static void stop_workers(trainer_t *t)
{
    for (int i = 0; i < t->nw; i++)
        if (t->w[i].state == W_RUNNING) {
            worker_send(t, &t->w[i], "stop\n");
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
                    tlog(t, "worker %d did not stop in %d s: killing it", i,
                         t->o->stop_timeout_s);
                    kill(t->w[i].pid, SIGKILL);
                }
            deadline = util_now_ms() * 1e-3 + 3600; /* their EOF follows the kill */
        }
        poll_workers(t, 100, 1);
    }
}

/* ---- status ----------------------------------------------------------- */

static int workers_running(const trainer_t *t)
{
    int n = 0;
    for (int i = 0; i < t->nw; i++)
        n += t->w[i].state == W_RUNNING;
    return n;
}

static void update_rates(trainer_t *t, double now)
{
    snap_t s = {now, t->session_games, t->session_positions, t->session_samples};
    if (t->nsnaps == RATE_SNAPS) {
        memmove(t->snaps, t->snaps + 1, (RATE_SNAPS - 1) * sizeof(snap_t));
        t->nsnaps--;
    }
    t->snaps[t->nsnaps++] = s;
    const snap_t *a = &t->snaps[0];
    double dt = now - a->t;
    if (dt > 0.5) {
        t->rate_games = (double)(s.games - a->games) / dt;
        t->rate_positions = (double)(s.positions - a->positions) / dt;
        t->rate_samples = (double)(s.samples - a->samples) / dt;
    }
}

static void write_status(trainer_t *t)
{
    char esc[8192];
    static char buf[65536];
    size_t cap = sizeof buf, n = 0;
#define PUT(...) do { int k_ = snprintf(buf + n, cap - n, __VA_ARGS__); \
                      if (k_ > 0) n = n + (size_t)k_ < cap ? n + (size_t)k_ : cap - 1; } while (0)
    PUT("{\n  \"state\": \"%s\",\n  \"pid\": %ld,\n  \"step\": %" PRIu64 ",\n", t->state,
        (long)getpid(), t->step);
    PUT("  \"target_step\": %" PRIu64 ",\n  \"generation\": %" PRIu64 ",\n", t->target,
        t->generation);
    PUT("  \"model\": %s,\n", util_json_str(t->model_path, esc, sizeof esc));
    PUT("  \"device\": \"%s\",\n", t->device);
    PUT("  \"losses\": {\"policy\": %.5f, \"value\": %.5f, \"l2\": %.5f, \"total\": %.5f},\n",
        t->last.policy, t->last.value, t->last.l2, t->last.total);
    PUT("  \"lr\": %.6g,\n", nn_schedule_lr(&t->sched, t->step));
    PUT("  \"games\": %" PRIu64 ",\n  \"positions\": %" PRIu64 ",\n", t->games, t->positions);
    PUT("  \"window_positions\": %" PRIu64 ",\n  \"window_games\": %" PRIu64 ",\n",
        replay_positions(t->replay), replay_games(t->replay));
    PUT("  \"games_per_s\": %.3f,\n  \"positions_per_s\": %.2f,\n  \"samples_per_s\": %.1f,\n",
        t->rate_games, t->rate_positions, t->rate_samples);
    PUT("  \"ratio\": %.3g,\n  \"rejected_frames\": %" PRIu64 ",\n", t->cfg.ratio, t->rejected);
    PUT("  \"partial_frames_dropped\": %" PRIu64 ",\n  \"bad_frames_on_load\": %" PRIu64 ",\n",
        t->partial, t->load_bad);
    PUT("  \"elapsed_s\": %.1f,\n  \"updated\": %ld,\n  \"workers\": [", util_now_ms() * 1e-3 - t->t_start,
        (long)time(NULL));
    for (int i = 0; i < t->nw; i++) {
        const wslot_t *w = &t->w[i];
        PUT("%s\n    {\"id\": %d, \"pid\": %ld, \"state\": \"%s\", \"restarts\": %" PRIu64
            ", \"games\": %" PRIu64 ", \"bad_frames\": %" PRIu64 ", \"partial_frames\": %"
            PRIu64 "}", i ? "," : "", i, (long)w->pid, wstate_name(w->state), w->restarts,
            w->games, w->bad_frames, w->partial);
    }
    PUT("\n  ]\n}\n");
#undef PUT
    char err[512];
    if (util_write_atomic(run_path(t, "status.json"), buf, n, err, sizeof err) != 0)
        tlog(t, "%s", err);
}

static void progress(trainer_t *t, int force)
{
    double now = util_now_ms() * 1e-3;
    if (!force && now - t->t_status < 1.0)
        return;
    t->t_status = now;
    update_rates(t, now);
    write_status(t);
    if (!force && !t->tty && now - t->t_progress < 10.0)
        return;
    t->t_progress = now;
    char tgt[32] = "";
    if (t->target)
        snprintf(tgt, sizeof tgt, "/%" PRIu64, t->target);
    fprintf(stderr, "%sstep %" PRIu64 "%s  loss p %.3f v %.3f  games %" PRIu64
            " (%.2f/s)  pos %" PRIu64 "  %.0f samples/s  workers %d/%d  rejected %" PRIu64
            "  %s%s", t->tty ? "\r\033[K" : "", t->step, tgt, t->last.policy, t->last.value,
            t->games, t->rate_games, t->positions, t->rate_samples, workers_running(t), t->nw,
            t->rejected, t->state, t->tty ? "" : "\n");
    fflush(stderr);
}

static void metrics_row(trainer_t *t)
{
    if (t->loss_n == 0)
        return;
    const char *p = run_path(t, "metrics.csv");
    struct stat st;
    int fresh = stat(p, &st) != 0 || st.st_size == 0;
    FILE *f = fopen(p, "ae");
    if (!f) {
        tlog(t, "cannot append to %s: %s", p, strerror(errno));
        return;
    }
    if (fresh)
        fprintf(f, "unix_time,step,generation,lr,loss_policy,loss_value,loss_l2,loss_total,"
                   "games,positions,games_per_s,samples_per_s,rejected_frames\n");
    double k = 1.0 / t->loss_n;
    fprintf(f, "%ld,%" PRIu64 ",%" PRIu64 ",%.6g,%.5f,%.5f,%.5f,%.5f,%" PRIu64 ",%" PRIu64
            ",%.3f,%.1f,%" PRIu64 "\n", (long)time(NULL), t->step, t->generation,
            nn_schedule_lr(&t->sched, t->step), t->loss_sum[0] * k, t->loss_sum[1] * k,
            t->loss_sum[2] * k, t->loss_sum[3] * k, t->games, t->positions, t->rate_games,
            t->rate_samples, t->rejected);
    fclose(f);
    memset(t->loss_sum, 0, sizeof t->loss_sum);
    t->loss_n = 0;
}

/* ---- training --------------------------------------------------------- */

static int checkpoint(trainer_t *t, char *err, size_t errlen)
{
    if (t->step == t->ckpt_step)
        return 0;
    nn_net_get_weights(t->net, t->model->params);
    t->model->step = t->step;
    t->model->generation = t->generation + 1;
    char p[4096];
    snprintf(p, sizeof p, "%s/models/%06" PRIu64 ".gzm", t->dir, t->step);
    if (nn_model_save(t->model, p, err, errlen) != 0)
        return -1;
    t->generation++;
    t->ckpt_step = t->step;
    snprintf(t->model_path, sizeof t->model_path, "%s", p);
    sync_shard(t);
    char line[4200];
    snprintf(line, sizeof line, "model %" PRIu64 " %s\n", t->generation, p);
    for (int i = 0; i < t->nw; i++)
        worker_send(t, &t->w[i], line);
    tlog(t, "checkpoint %s (generation %" PRIu64 ", %" PRIu64 " games)", p, t->generation,
         t->games);
    return 0;
}

static int can_train(trainer_t *t)
{
    if (replay_positions(t->replay) < t->min_positions)
        return 0;
    return (double)(t->step + 1) * t->cfg.batch <= t->cfg.ratio * (double)t->positions;
}

static int train_one(trainer_t *t, char *err, size_t errlen)
{
    replay_batch_t *b = replay_batcher_take(t->batcher);
    nn_train_opts_t o = t->topts;
    o.lr = nn_schedule_lr(&t->sched, t->step);
    nn_losses_t l;
    int rc = nn_net_train_step(t->net, b->in, b->policy, b->value, b->n, &o, &l, err, errlen);
    replay_batcher_release(t->batcher, b);
    if (rc != 0)
        return -1;
    t->last = l;
    t->loss_sum[0] += l.policy;
    t->loss_sum[1] += l.value;
    t->loss_sum[2] += l.l2;
    t->loss_sum[3] += l.total;
    t->loss_n++;
    t->step++;
    t->session_samples += (uint64_t)t->cfg.batch;
    return 0;
}

/* ---- the run ---------------------------------------------------------- */

static int setup(trainer_t *t, char *err, size_t errlen)
{
    const char *subdirs[] = {"models", "games"};
    for (int i = 0; i < 2; i++)
        if (run_mkdir(run_path(t, "%s", subdirs[i]), err, errlen) != 0)
            return -1;
    t->log = fopen(run_path(t, "train.log"), "ae");
    if (load_or_create_model(t, err, errlen) != 0)
        return -1;
    t->ckpt_step = t->step;
    t->start_step = t->step;
    t->target = t->o->steps_relative ? t->step + t->o->steps : t->o->steps;

    char note[256] = "";
    t->net = nn_net_create(t->model, t->cfg.device, t->cfg.batch, t->o->threads, note,
                           sizeof note, err, errlen);
    if (!t->net)
        return -1;
    snprintf(t->device, sizeof t->device, "%s", nn_net_device_name(t->net));
    if (note[0])
        tlog(t, "%s", note);

    t->replay = replay_create(t->cfg.window, t->cfg.rule, t->cfg.size, t->cfg.size);
    if (!t->replay) {
        snprintf(err, errlen, "out of memory for the replay window");
        return -1;
    }
    if (load_games(t, err, errlen) != 0)
        return -1;
    if (open_shard(t, err, errlen) != 0)
        return -1;
    t->min_positions = (uint64_t)t->cfg.batch * 2;
    if (t->min_positions > (uint64_t)t->cfg.window)
        t->min_positions = (uint64_t)t->cfg.window;
    t->batcher = replay_batcher_create(t->replay, t->cfg.batch, t->o->assemble_threads, 3,
                                       t->min_positions, t->cfg.seed ^ (t->step * 0x9e37u));
    if (!t->batcher) {
        snprintf(err, errlen, "cannot start the minibatch threads");
        return -1;
    }
    t->topts.lr = (float)t->cfg.lr;
    t->topts.momentum = 0.9f;
    t->topts.weight_decay = 1e-4f;
    t->sched.lr = (float)t->cfg.lr;
    t->sched.final_frac = 1.0f;
    t->sched.warmup_steps = 100;
    t->sched.total_steps = 0;
    return 0;
}

void trainer_opts_default(trainer_opts_t *o)
{
    memset(o, 0, sizeof *o);
    run_config_default(&o->cfg);
    o->lock_fd = -1;
    o->threads = 1;
    o->assemble_threads = 1;
    o->metrics_every = 10;
    o->bad_frame_limit = 50;
    o->stop_timeout_s = 20;
}

int trainer_run(const trainer_opts_t *o, char *err, size_t errlen)
{
    trainer_t *t = calloc(1, sizeof *t);
    if (!t) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    t->o = o;
    t->cfg = o->cfg;
    snprintf(t->dir, sizeof t->dir, "%s", o->run_dir);
    t->tty = isatty(2);
    t->shard_fd = -1;
    t->t_start = util_now_ms() * 1e-3;
    record_init(&t->rec);
    snprintf(t->state, sizeof t->state, "starting");
    int rc = -1;

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    g_stop_signal = 0;

    if (setup(t, err, errlen) != 0)
        goto out;
    if (t->target && t->step >= t->target) {
        tlog(t, "already at step %" PRIu64 " (target %" PRIu64 "): nothing to do", t->step,
             t->target);
        rc = 0;
        goto out;
    }

    t->nw = t->cfg.workers;
    t->w = calloc((size_t)t->nw, sizeof *t->w);
    if (!t->w) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    for (int i = 0; i < t->nw; i++) {
        t->w[i].id = i;
        t->w[i].rec_fd = t->w[i].ctl_fd = -1;
        wire_buf_init(&t->w[i].buf);
        if (spawn_worker(t, &t->w[i]) != 0)
            schedule_restart(&t->w[i]);
    }
    tlog(t, "%d workers (%d games each, %d visits, %d cheap for %.0f%% of moves), training on %s, batch %d, ratio %.3g, "
         "window %d positions%s", t->nw, t->cfg.parallel, t->cfg.visits, t->cfg.cheap_visits,
         100.0 * (1 - t->cfg.full_frac), t->device,
         t->cfg.batch, t->cfg.ratio, t->cfg.window, t->target ? "" : "; Ctrl-C stops");

    while (!g_stop_signal && !(t->target && t->step >= t->target)) {
        restart_due(t);
        int train = can_train(t);
        poll_workers(t, train ? 0 : 100, 0);
        train = can_train(t);
        if (train) {
            snprintf(t->state, sizeof t->state, "training");
            if (train_one(t, err, errlen) != 0)
                goto out_stop;
            if (t->step % (uint64_t)o->metrics_every == 0)
                metrics_row(t);
            if (t->step % (uint64_t)t->cfg.checkpoint_every == 0 &&
                checkpoint(t, err, errlen) != 0)
                goto out_stop;
        } else {
            snprintf(t->state, sizeof t->state, "waiting for games");
        }
        progress(t, 0);
    }
    if (g_stop_signal)
        tlog(t, "%s: finishing: checkpoint, then stopping the workers",
             g_stop_signal == SIGINT ? "SIGINT" : "SIGTERM");
    snprintf(t->state, sizeof t->state, "stopping");
    metrics_row(t);
    if (checkpoint(t, err, errlen) != 0)
        goto out_stop;
    rc = 0;
out_stop:
    if (rc != 0)
        tlog(t, "%s", err);
    snprintf(t->state, sizeof t->state, "stopping");
    progress(t, 1);
    stop_workers(t);
    sync_shard(t);
    snprintf(t->state, sizeof t->state, "stopped");
    progress(t, 1);
    if (t->tty)
        fprintf(stderr, "\n");
    tlog(t, "stopped at step %" PRIu64 ", generation %" PRIu64 ", %" PRIu64 " games (%" PRIu64
         " this session), %" PRIu64 " rejected frames", t->step, t->generation, t->games,
         t->session_games, t->rejected);
out:
    replay_batcher_free(t->batcher);
    for (int i = 0; i < t->nw; i++) {
        if (t->w[i].rec_fd >= 0)
            close(t->w[i].rec_fd);
        if (t->w[i].ctl_fd >= 0)
            close(t->w[i].ctl_fd);
        wire_buf_free(&t->w[i].buf);
    }
    free(t->w);
    if (t->shard_fd >= 0)
        close(t->shard_fd);
    replay_free(t->replay);
    nn_net_free(t->net);
    nn_model_free(t->model);
    record_free(&t->rec);
    if (t->log)
        fclose(t->log);
    free(t);
    return rc;
}
