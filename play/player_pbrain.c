/* pbrain:COMMAND players: an external Gomocup engine as a player.
 *
 * The engine is started with posix_spawn through /bin/sh -c COMMAND in its
 * own process group, stdin/stdout on pipes. We play the manager's side of
 * the protocol: START, INFO (timeout_turn, rule, game_type), then BEGIN or
 * TURN for a game that follows what the engine knows, else RESTART and
 * BOARD ... DONE. MESSAGE / DEBUG lines are skipped, SUGGEST is answered
 * with PLAY. An engine that does not answer within timeout_turn + grace,
 * exits, or answers no legal move is killed and forfeits the game
 * (PLAYER_FORFEIT, with a one-line reason); the next game starts it again,
 * as Gomocup's manager does. At the end: END, a second to exit, then
 * SIGKILL to the group and reap. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "play/player.h"
#include "util/util.h"


#define START_TIMEOUT_MS 30000   /* START: the engine may be loading a model */
#define GRACE_MS 1000            /* on top of timeout_turn for a move */
#define END_WAIT_MS 1000
#define LINE_MAX_ENGINE 4096

typedef struct pbp {
    pid_t pid;              /* 0 once reaped */
    int to_fd;              /* engine's stdin, -1 when closed */
    int from_fd;            /* engine's stdout */
    char rbuf[LINE_MAX_ENGINE];
    size_t rlen;
    int skipping;           /* dropping the rest of an over-long line */
    int size;
    rule_t rule;
    int time_ms;
    int match_time_ms;      /* INFO timeout_match (0: none) */
    int16_t known[BOARD_CELLS];   /* moves the engine has, in order */
    int nknown;
    int in_game;            /* the engine has a game going (RESTART needed) */
    char err[256];          /* sticky until a restart: the engine is unusable */
    char cmd[96];           /* for messages */
    char command[4096];     /* what /bin/sh -c runs, kept for a restart */
    int quiet;              /* the engine's stderr to /dev/null */
} pbp_t;

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* Write all of buf with SIGPIPE blocked, so a dead engine is an error
 * (EPIPE) rather than the end of this process. */
static int write_all(int fd, const char *buf, size_t len)
{
    sigset_t block, old, pending;
    sigemptyset(&block);
    sigaddset(&block, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &block, &old);
    sigpending(&pending);
    int was_pending = sigismember(&pending, SIGPIPE);
    int rc = 0;
    while (len > 0) {
        ssize_t n = write(fd, buf, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            rc = -1;
            break;
        }
        buf += n;
        len -= (size_t)n;
    }
    if (rc && errno == EPIPE && !was_pending) {
        struct timespec zero = {0, 0};
        sigtimedwait(&block, NULL, &zero);   /* consume our own SIGPIPE */
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return rc;
}

static int send_line(pbp_t *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int send_line(pbp_t *e, const char *fmt, ...)
{
    char buf[64];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(buf, sizeof buf - 2, fmt, ap);
    va_end(ap);
    if (n < 0 || n >= (int)sizeof buf - 2)
        n = (int)strlen(buf);
    buf[n++] = '\r';
    buf[n++] = '\n';
    if (e->to_fd < 0 || write_all(e->to_fd, buf, (size_t)n)) {
        if (!e->err[0])
            snprintf(e->err, sizeof e->err, "pbrain engine '%s' exited (its input is closed)",
                     e->cmd);
        return -1;
    }
    return 0;
}

/* Next non-empty line from the engine before deadline (ms, monotonic).
 * 1: a line in buf; 0: timeout; -1: the engine closed its output. */
static int read_line(pbp_t *e, char *buf, size_t len, double deadline)
{
    for (;;) {
        for (size_t i = 0; i < e->rlen; i++) {
            if (e->rbuf[i] != '\n' && e->rbuf[i] != '\r')
                continue;
            size_t n = i < len - 1 ? i : len - 1;
            memcpy(buf, e->rbuf, n);
            buf[n] = 0;
            memmove(e->rbuf, e->rbuf + i + 1, e->rlen - i - 1);
            e->rlen -= i + 1;
            int skipped = e->skipping;
            e->skipping = 0;
            if (n > 0 && !skipped)
                return 1;
            i = (size_t)-1;   /* rescan the rest */
        }
        if (e->rlen == sizeof e->rbuf) {
            e->rlen = 0;      /* over-long line: keep its first part only */
            e->skipping = 1;
        }
        double left = deadline - now_ms();
        if (left <= 0)
            return 0;
        struct pollfd pfd = {e->from_fd, POLLIN, 0};
        int pr = poll(&pfd, 1, left > 1e6 ? 1000000 : (int)left + 1);
        if (pr < 0 && errno == EINTR)
            continue;
        if (pr <= 0)
            continue;   /* the loop checks the deadline */
        ssize_t n = read(e->from_fd, e->rbuf + e->rlen, sizeof e->rbuf - e->rlen);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        e->rlen += (size_t)n;
    }
}

static void kill_engine(pbp_t *e)
{
    if (e->to_fd >= 0) {
        close(e->to_fd);
        e->to_fd = -1;
    }
    if (e->pid > 0) {
        kill(-e->pid, SIGKILL);
        kill(e->pid, SIGKILL);
        waitpid(e->pid, NULL, 0);
        e->pid = 0;
    }
}

static void fail(pbp_t *e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void fail(pbp_t *e, const char *fmt, ...)
{
    if (e->err[0])
        return;
    int n = snprintf(e->err, sizeof e->err, "pbrain engine '%s': ", e->cmd);
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->err + n, sizeof e->err - (size_t)n, fmt, ap);
    va_end(ap);
    for (char *c = e->err; *c; c++)
        if ((unsigned char)*c < 32 || (unsigned char)*c > 126)
            *c = '?';
}

/* Wait for a reply that is not MESSAGE/DEBUG; 0 with it in buf, or -1
 * (e->err set, the engine killed). */
static int get_reply(pbp_t *e, char *buf, size_t len, double timeout_ms, const char *what)
{
    double deadline = now_ms() + timeout_ms;
    for (;;) {
        int rc = read_line(e, buf, len, deadline);
        if (rc == 0) {
            fail(e, "no answer to %s within %.0f ms", what, timeout_ms);
            kill_engine(e);
            return -1;
        }
        if (rc < 0) {
            fail(e, "exited (no answer to %s)", what);
            kill_engine(e);
            return -1;
        }
        if (strncasecmp(buf, "MESSAGE", 7) == 0 || strncasecmp(buf, "DEBUG", 5) == 0)
            continue;
        return 0;
    }
}

static int expect_ok(pbp_t *e, const char *what, double timeout_ms)
{
    char line[LINE_MAX_ENGINE];
    if (get_reply(e, line, sizeof line, timeout_ms, what))
        return -1;
    if (strncasecmp(line, "OK", 2) != 0) {
        fail(e, "answered '%.80s' to %s", line, what);
        kill_engine(e);
        return -1;
    }
    return 0;
}

static int parse_move(const char *s, int size, int *move)
{
    int x, y, n = 0;
    if (sscanf(s, " %d , %d %n", &x, &y, &n) != 2 || s[n] != 0)
        return -1;
    if (x < 0 || y < 0 || x >= size || y >= size)
        return -1;
    *move = y * size + x;
    return 0;
}

static void send_info(pbp_t *e)
{
    int bits = e->rule == RULE_STANDARD ? 1 : e->rule == RULE_RENJU ? 4 : 0;
    send_line(e, "INFO timeout_turn %d", e->time_ms);
    send_line(e, "INFO timeout_match %d", e->match_time_ms);
    send_line(e, "INFO max_memory 0");
    send_line(e, "INFO game_type 1");
    send_line(e, "INFO rule %d", bits);
}

static int pbp_genmove(player_t *p, const board_t *b, int *move, char *err, size_t errlen)
{
    pbp_t *e = p->impl;
    char line[LINE_MAX_ENGINE];
    if (e->err[0]) {   /* it could not be started again: nothing to play with */
        snprintf(err, errlen, "%s", e->err);
        return -1;
    }
    int follows = e->nknown <= b->nmoves;
    for (int i = 0; follows && i < e->nknown; i++)
        follows = e->known[i] == b->moves[i];
    const char *what;
    bool clock = p->time_left < MOVETIME_UNLIMITED;
    if (clock)
        send_line(e, "INFO time_left %lld", p->time_left);
    if (b->nmoves == 0 && !e->in_game) {
        what = "BEGIN";
        send_line(e, "BEGIN");
    } else if (follows && e->in_game && b->nmoves == e->nknown + 1) {
        what = "TURN";
        int m = b->moves[b->nmoves - 1];
        send_line(e, "TURN %d,%d", m % b->size, m / b->size);
    } else {
        if (e->in_game) {
            send_line(e, "RESTART");
            if (expect_ok(e, "RESTART", START_TIMEOUT_MS))
                goto out_err;
            send_info(e);
            if (clock)
                send_line(e, "INFO time_left %lld", p->time_left);
        }
        what = "BOARD";
        send_line(e, "BOARD");
        for (int i = 0; i < b->nmoves; i++) {
            int m = b->moves[i];
            /* 1: the stone of the side to move (the engine), 2: the other's */
            int own = (i % 2 == 0) == (b->to_move == STONE_BLACK);
            send_line(e, "%d,%d,%d", m % b->size, m / b->size, own ? 1 : 2);
        }
        send_line(e, "DONE");
    }
    if (e->err[0])
        goto out_err;
    e->in_game = 1;
    double timeout = (clock && p->time_left < e->time_ms ? (double)p->time_left : e->time_ms) +
                     GRACE_MS;
    for (;;) {
        if (get_reply(e, line, sizeof line, timeout, what))
            goto out_err;
        if (strncasecmp(line, "SUGGEST ", 8) == 0) {
            int m;
            if (parse_move(line + 8, b->size, &m) == 0) {
                send_line(e, "PLAY %d,%d", m % b->size, m / b->size);
                what = "PLAY";
                continue;
            }
        }
        break;
    }
    int m;
    if (parse_move(line, b->size, &m)) {
        fail(e, "answered '%.80s' to %s, not a move X,Y on the %dx%d board", line, what,
             b->size, b->size);
        kill_engine(e);
        goto out_err;
    }
    move_status_t st = board_check_move(b, m);
    if (st != MOVE_OK) {
        fail(e, "played %d,%d: %s", m % b->size, m / b->size, move_status_str(st));
        kill_engine(e);
        goto out_err;
    }
    memcpy(e->known, b->moves, sizeof(int16_t) * (size_t)b->nmoves);
    e->known[b->nmoves] = (int16_t)m;
    e->nknown = b->nmoves + 1;
    *move = m;
    return 0;
out_err:   /* it failed at this move (and was killed): it loses the game */
    kill_engine(e);
    snprintf(err, errlen, "%s", e->err);
    return PLAYER_FORFEIT;
}

static int engine_start(pbp_t *e, char *err, size_t errlen);

/* A new game: START (another size or rule) or RESTART; an engine that
 * failed in the last game, or fails at this, is started again once. */
static void pbp_new_game(player_t *p, const board_t *b)
{
    pbp_t *e = p->impl;
    e->nknown = 0;
    if (!e->err[0]) {
        if (b->size != e->size || b->rule != e->rule) {
            e->size = b->size;
            e->rule = (rule_t)b->rule;
            send_line(e, "START %d", e->size);
            if (expect_ok(e, "START", START_TIMEOUT_MS) == 0)
                send_info(e);
            e->in_game = 0;
        } else if (e->in_game) {
            send_line(e, "RESTART");
            if (expect_ok(e, "RESTART", START_TIMEOUT_MS) == 0)
                e->in_game = 0;
        }
        if (!e->err[0])
            return;
    }
    kill_engine(e);
    if (e->from_fd >= 0)
        close(e->from_fd);
    e->from_fd = -1;
    e->rlen = 0;
    e->skipping = 0;
    e->err[0] = '\0';
    e->in_game = 0;
    e->size = b->size;
    e->rule = (rule_t)b->rule;
    char why[200];
    if (engine_start(e, why, sizeof why) != 0)
        snprintf(e->err, sizeof e->err, "%s (started again after a failure)", why);
}

static void pbp_release(player_t *p)
{
    pbp_t *e = p->impl;
    if (e->pid > 0 && e->to_fd >= 0) {
        send_line(e, "END");
        close(e->to_fd);
        e->to_fd = -1;
        double deadline = now_ms() + END_WAIT_MS;
        while (now_ms() < deadline) {
            pid_t r = waitpid(e->pid, NULL, WNOHANG);
            if (r == e->pid || (r < 0 && errno == ECHILD)) {
                kill(-e->pid, SIGKILL);   /* anything it left behind in its group */
                e->pid = 0;
                break;
            }
            struct timespec ts = {0, 5 * 1000 * 1000};
            nanosleep(&ts, NULL);
        }
    }
    kill_engine(e);
    if (e->from_fd >= 0)
        close(e->from_fd);
}

static const player_ops_t pbp_ops = {
    .genmove = pbp_genmove,
    .new_game = pbp_new_game,
    .release = pbp_release,
};

player_t *player_pbrain_create(const char *command, rule_t rule, int size, const player_opts_t *o,
                               char *err, size_t errlen)
{
    if (!command || !*command) {
        snprintf(err, errlen, "pbrain: needs a command, e.g. pbrain:./pbrain-engine");
        return NULL;
    }
    player_t *p = player_alloc(&pbp_ops, sizeof(pbp_t), err, errlen, "pbrain:%s", command);
    if (!p)
        return NULL;
    pbp_t *e = p->impl;
    snprintf(e->cmd, sizeof e->cmd, "%s", command);
    if (snprintf(e->command, sizeof e->command, "%s", command) >= (int)sizeof e->command) {
        snprintf(err, errlen, "pbrain: the command is longer than %zu bytes",
                 sizeof e->command - 1);
        goto out_free;
    }
    e->to_fd = e->from_fd = -1;
    e->size = size;
    e->rule = rule;
    e->quiet = o && o->quiet;
    e->match_time_ms = o ? o->match_time_ms : 0;
    e->time_ms = o && o->time_ms > 0 ? o->time_ms : e->match_time_ms > 0 ? e->match_time_ms : 1000;
    if (engine_start(e, err, errlen) != 0)
        goto out_free;
    return p;
out_free:
    player_free(p);
    return NULL;
}

/* Spawn the engine and open the session: START e->size, OK, the INFO
 * lines. 0, or -1 with a one-line err (the process is then gone). */
static int engine_start(pbp_t *e, char *err, size_t errlen)
{
    int in[2], out[2];
    if (pipe2(in, O_CLOEXEC)) {
        snprintf(err, errlen, "pbrain: pipe: %s", strerror(errno));
        return -1;
    }
    if (pipe2(out, O_CLOEXEC)) {
        snprintf(err, errlen, "pbrain: pipe: %s", strerror(errno));
        close(in[0]);
        close(in[1]);
        return -1;
    }
    util_spawn_fd_t fds[3] = {
        {0, in[0], NULL, 0},
        {1, out[1], NULL, 0},
        {2, -1, "/dev/null", O_WRONLY},
    };
    char *argv[] = {"sh", "-c", e->command, NULL};
    /* its own process group, so that a stop reaches whatever sh started */
    int rc = util_spawn(&e->pid, "/bin/sh", argv, fds, e->quiet ? 3 : 2, true);
    close(in[0]);
    close(out[1]);
    e->to_fd = in[1];
    e->from_fd = out[0];
    if (rc != 0) {
        e->pid = 0;
        snprintf(err, errlen, "pbrain: cannot start /bin/sh: %s", strerror(rc));
        return -1;
    }
    send_line(e, "START %d", e->size);
    if (expect_ok(e, "START", START_TIMEOUT_MS) == 0)
        send_info(e);
    if (e->err[0]) {
        snprintf(err, errlen, "%s", e->err);
        kill_engine(e);
        return -1;
    }
    return 0;
}
