/* gomoku bench broker: frames/s of 15x15 self-play games through the Redis
 * broker (XADD by a producer thread, XREADGROUP + validate + XACK by the
 * worker's side, then XREADGROUP + validate + XACK, the trainer's side) against the same frames
 * through a pipe (write, then the frame stream reader + validate, as a local worker and
 * the trainer do), and the number of workers one trainer can take. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench/bench.h"
#include "selfplay/args.h"
#include "engine/frame.h"
#include "engine/record.h"
#include "selfplay/broker.h"
#include "selfplay/wire.h"
#include "util/rng.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* A legal game of random moves, cut at `plies` (or ended by a five), with
 * a self-play-like visit list per ply: `full_every`-th plies are full
 * searches with 48 children, the others cheap ones with 16. */
static int make_game(game_record_t *r, int size, int plies, uint64_t *seed, uint64_t seq)
{
    board_t b;
    board_init(&b, size, RULE_FREESTYLE);
    record_clear(r, RULE_FREESTYLE, size, 1);
    r->worker_id = 0xbe4c4;
    r->game_seq = seq;
    int n = size * size;
    record_visit_t v[64];
    while (!board_over(&b) && (int)r->nplies < plies) {
        int mv;
        do
            mv = (int)(util_rng_next(seed) % (uint64_t)n);
        while (board_check_move(&b, mv) != MOVE_OK);
        int full = r->nplies % 4 == 0;
        int nv = full ? 48 : 16, k = 0;
        for (int i = 0; i < n && k < nv; i++) {
            int p = (mv + i * 7) % n;
            if (board_check_move(&b, p) == MOVE_OK)
                v[k++] = (record_visit_t){(int16_t)p, (uint16_t)(1 + util_rng_next(seed) % 200)};
        }
        if (record_add_ply(r, mv, full, (float)((double)(util_rng_next(seed) % 2001) / 1000.0 - 1.0), v,
                           k) != 0)
            return -1;
        board_play(&b, mv);
    }
    r->result = b.result;
    return 0;
}

typedef struct frames {
    uint8_t **f;
    size_t *len;
    int n;
} frames_t;

typedef struct producer {
    const frames_t *fr;
    int fd;                     /* pipe: write end */
    broker_t *b;                /* broker: own connection */
    double seconds;
    int failed;
    char err[512];
} producer_t;

static void *pipe_writer(void *arg)
{
    producer_t *p = arg;
    for (int i = 0; i < p->fr->n; i++)
        if (wire_write_all(p->fd, p->fr->f[i], p->fr->len[i]) != 0) {
            p->failed = 1;
            break;
        }
    close(p->fd);
    return NULL;
}

static void *broker_writer(void *arg)
{
    producer_t *p = arg;
    double t0 = now_s();
    for (int i = 0; i < p->fr->n; i++)
        if (broker_add_game(p->b, 0x1, 0xbe4c4, p->fr->f[i], p->fr->len[i], p->err,
                            sizeof p->err) != 0) {
            p->failed = 1;
            break;
        }
    p->seconds = now_s() - t0;
    return NULL;
}

/* frames/s through a pipe, decode and validation included; -1 on failure. */
static double run_pipe(const frames_t *fr, game_record_t *rec, char *err, size_t errlen)
{
    int fds[2];
    if (pipe(fds) != 0) {
        snprintf(err, errlen, "pipe: %s", strerror(errno));
        return -1;
    }
    fcntl(fds[0], F_SETFL, O_NONBLOCK);
    producer_t p = {.fr = fr, .fd = fds[1]};
    frame_stream_t *fs = frame_stream_create();
    if (!fs) {
        close(fds[0]);
        close(fds[1]);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    double t0 = now_s();
    pthread_t th;
    pthread_create(&th, NULL, pipe_writer, &p);
    int got = 0, bad = 0, eof = 0;
    while (!eof) {
        ssize_t r = frame_stream_fill(fs, fds[0]);
        if (r == 0 || r == -2) {
            eof = 1;
            frame_stream_set_eof(fs);
        } else if (r == -1) {
            usleep(50);
            continue;
        }
        for (;;) {
            const uint8_t *f;
            size_t flen;
            int st = frame_stream_next(fs, &f, &flen, NULL, err, errlen);
            if (st == 0)
                break;
            if (st > 0 && record_decode_payload(f + FRAME_HEADER_BYTES,
                                                (uint32_t)(flen - FRAME_HEADER_BYTES), rec, err,
                                                errlen) == 0 &&
                record_validate(rec, err, errlen) == 0)
                got++;
            else
                bad++;
        }
    }
    double dt = now_s() - t0;
    pthread_join(th, NULL);
    close(fds[0]);
    frame_stream_free(fs);
    if (got != fr->n || bad || p.failed) {
        snprintf(err, errlen, "pipe: %d of %d frames arrived intact", got, fr->n);
        return -1;
    }
    return fr->n / dt;
}

/* frames/s through the broker, end to end; *xadd_fps the producer's rate. */
static double run_broker(const broker_url_t *u, const char *run, const frames_t *fr,
                         game_record_t *rec, double *xadd_fps, char *err, size_t errlen)
{
    broker_t *prod = broker_create(u, run, err, errlen);
    broker_t *cons = prod ? broker_create(u, run, err, errlen) : NULL;
    double fps = -1;
    broker_batch_t bt;
    broker_batch_init(&bt);
    if (!prod || !cons || !broker_connected(prod) || !broker_connected(cons))
        goto out_free;
    if (broker_group_create(cons, err, errlen) != 0)
        goto out_free;
    /* the workers' side first (XADD, one round trip per game), then the
     * trainer's (read, decode, validate, ack): the trainer's rate is the ceiling */
    producer_t p = {.fr = fr, .b = prod};
    broker_writer(&p);
    if (p.failed) {
        snprintf(err, errlen, "%s", p.err);
        goto out_free;
    }
    double t0 = now_s();
    int got = 0, bad = 0;
    while (got + bad < fr->n) {
        if (broker_read(cons, "bench", 0, 256, 200, &bt, err, errlen) != 0)
            goto out_free;
        if (bt.n == 0)
            break;
        for (int i = 0; i < bt.n; i++) {
            size_t used;
            const broker_entry_t *e = &bt.e[i];
            if (e->frame && record_decode(e->frame, e->len, &used, rec, err, errlen) == FRAME_OK &&
                used == e->len && record_validate(rec, err, errlen) == 0)
                got++;
            else
                bad++;
        }
        if (broker_ack(cons, &bt, err, errlen) != 0)
            goto out_free;
    }
    double dt = now_s() - t0;
    if (got != fr->n) {
        snprintf(err, errlen, "broker: %d of %d frames arrived intact", got, fr->n);
        goto out_free;
    }
    fps = fr->n / dt;
    *xadd_fps = fr->n / p.seconds;
out_free:
    broker_batch_free(&bt);
    broker_free(prod);
    broker_free(cons);
    return fps;
}

/* A private redis-server on a free loopback port, without persistence. */
static pid_t start_redis(char *dir, size_t dirlen, int *port, char *err, size_t errlen)
{
    snprintf(dir, dirlen, "/tmp/gomoku_bench_broker_XXXXXX");
    if (!mkdtemp(dir)) {
        snprintf(err, errlen, "mkdtemp: %s", strerror(errno));
        return -1;
    }
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t l = sizeof a;
    if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof a) != 0 ||
        getsockname(s, (struct sockaddr *)&a, &l) != 0) {
        snprintf(err, errlen, "no free port: %s", strerror(errno));
        if (s >= 0)
            close(s);
        return -1;
    }
    close(s);
    *port = ntohs(a.sin_port);
    char ps[16];
    snprintf(ps, sizeof ps, "%d", *port);
    pid_t pid = fork();
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        int fd = open("/dev/null", O_WRONLY);
        dup2(fd, 1);
        execlp("redis-server", "redis-server", "--port", ps, "--bind", "127.0.0.1", "--dir", dir,
               "--save", "", "--appendonly", "no", (char *)NULL);
        _exit(127);
    }
    if (pid < 0)
        snprintf(err, errlen, "fork: %s", strerror(errno));
    return pid;
}

static const cmd_help_t help = {
    "bench broker", BY_BENCH_BROKER,
    "gomoku bench broker [--broker URL --frames N --size 15 --plies 60]",
    "Sends N game frames (random legal games, self-play-like visit lists)\n"
    "through a pipe (written by a thread, read, decoded and validated) and through\n"
    "the Redis broker (XADDed one by one as a worker does, then read by XREADGROUP,\n"
    "decoded, validated and XACKed as the trainer does), and prints one JSON line:\n"
    "frames/s of each side, and the workers one trainer can take =\n"
    "trainer-side broker frames/s * 3600 / (games/hour of one worker). Without --broker\n"
    "it starts its own redis-server (must be on PATH) and removes it after."};

int bench_broker(int argc, char **argv)
{
    const char *url = NULL;
    int nframes, size, plies;
    double gph;
    arg_spec_t specs[] = {
        ARG(S_BENCH_BROKER, &url), ARG(S_FRAMES, &nframes), ARG(S_SIZE, &size),
        ARG(S_PLIES, &plies), ARG(S_WORKER_GAMES_PER_HOUR, &gph),
    };
    int rc = args_parse(&help, specs, ARGS_COUNT(specs), argc, argv, NULL, 0, NULL);
    if (rc != ARGS_OK)
        return args_exit_status(rc);
    char err[512];
    broker_url_t u;
    if (url && broker_url_parse(url, &u, err, sizeof err) != 0)
        return args_fail(&help, "%s", err);
    if (!broker_available()) {
        fprintf(stderr, "gomoku bench broker: this build has no Redis broker support "
                        "(install libhiredis-dev and reconfigure)\n");
        return 1;
    }
    frames_t fr = {calloc((size_t)nframes, sizeof(uint8_t *)), calloc((size_t)nframes, sizeof(size_t)),
                   nframes};
    game_record_t rec;
    record_init(&rec);
    uint64_t seed = 12345, bytes = 0, nplies = 0;
    char dir[256] = "";
    pid_t redis = 0;
    rc = 1;
    if (!fr.f || !fr.len)
        goto out_free;
    for (int i = 0; i < nframes; i++) {
        size_t cap = 0;
        if (make_game(&rec, size, plies, &seed, (uint64_t)i) != 0 ||
            (fr.len[i] = record_encode(&rec, &fr.f[i], &cap, err, sizeof err)) == 0) {
            fprintf(stderr, "gomoku bench broker: %s\n", err);
            goto out_free;
        }
        bytes += fr.len[i];
        nplies += rec.nplies;
    }
    if (!url) {
        int port;
        redis = start_redis(dir, sizeof dir, &port, err, sizeof err);
        if (redis < 0) {
            fprintf(stderr, "gomoku bench broker: %s\n", err);
            goto out_free;
        }
        memset(&u, 0, sizeof u);
        snprintf(u.host, sizeof u.host, "127.0.0.1");
        u.port = port;
        for (int i = 0; i < 200; i++) { /* up to 10 s for it to listen */
            broker_t *b = broker_create(&u, "probe", err, sizeof err);
            int up = b && broker_connected(b);
            broker_free(b);
            if (up)
                break;
            usleep(50000);
        }
    }
    char run[64];
    snprintf(run, sizeof run, "bench-%ld", (long)getpid());
    double pipe_fps = run_pipe(&fr, &rec, err, sizeof err);
    if (pipe_fps < 0) {
        fprintf(stderr, "gomoku bench broker: %s\n", err);
        goto out_free;
    }
    double xadd_fps = 0;
    double broker_fps = run_broker(&u, run, &fr, &rec, &xadd_fps, err, sizeof err);
    if (broker_fps < 0) {
        fprintf(stderr, "gomoku bench broker: %s\n", err);
        goto out_free;
    }
    if (url) {
        broker_t *b = broker_create(&u, run, err, sizeof err);
        if (b && broker_drop_run(b, err, sizeof err) != 0)
            fprintf(stderr, "gomoku bench broker: %s\n", err);
        broker_free(b);
    }
    printf("{\"bench\":\"broker\",\"size\":%d,\"frames\":%d,\"mean_plies\":%.1f,"
           "\"mean_frame_bytes\":%.0f,\"pipe_frames_per_s\":%.0f,\"broker_frames_per_s\":%.0f,"
           "\"broker_xadd_per_s\":%.0f,\"broker_vs_pipe\":%.3f,\"worker_games_per_hour\":%.0f,"
           "\"max_workers\":%.0f}\n",
           size, nframes, (double)nplies / nframes, (double)bytes / nframes, pipe_fps, broker_fps,
           xadd_fps, broker_fps / pipe_fps, gph, broker_fps * 3600.0 / gph);
    rc = 0;
out_free:
    if (redis > 0) {
        kill(redis, SIGTERM);
        waitpid(redis, NULL, 0);
    }
    if (dir[0]) {
        char cmd[400];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        if (system(cmd) != 0)
            fprintf(stderr, "gomoku bench broker: could not remove %s\n", dir);
    }
    for (int i = 0; fr.f && i < nframes; i++)
        free(fr.f[i]);
    free(fr.f);
    free(fr.len);
    record_free(&rec);
    return rc;
}
