/* Training system: wire framing and the replay window in-process; the
 * trainer and its workers through the real binary ($GOMOKU_BIN) on a tiny
 * CPU net: a short run with checkpoints, a killed worker, SIGTERM and
 * resume, a worker sending garbage, a second trainer, a killed trainer. */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "engine/record.h"
#include "nn/nn.h"
#include "util/util.h"
#include "selfplay/checkpoint.h"
#include "selfplay/replay.h"
#include "selfplay/rundir.h"
#include "selfplay/wire.h"
#include "tests/testkit.h"
#include "tests/testkit_nn.h"

/* The file RUN SUFFIX (SUFFIX "/train.log", ".err", ...) as a string, or NULL. */
static char *run_slurp(const char *run, const char *suffix)
{
    char p[1024];
    snprintf(p, sizeof p, "%s%s", run, suffix);
    return slurp(p);
}

/* The file RUN SUFFIX contains NEEDLE. */
static bool run_has(const char *run, const char *suffix, const char *needle)
{
    char *s = run_slurp(run, suffix);
    bool r = s && strstr(s, needle);
    free(s);
    return r;
}

/* The workers' pids from status.json; returns how many. */
static int worker_pids(const char *run, long *pids, int max)
{
    char *s = run_slurp(run, "/status.json");
    if (!s)
        return 0;
    int n = 0;
    const char *q = strstr(s, "\"workers\"");
    while (q && n < max && (q = strstr(q, "\"pid\": "))) {
        q += 7;
        pids[n++] = atol(q);
    }
    free(s);
    return n;
}

/* A worker's numeric field (k-th worker's "key"). */
static long long worker_num(const char *run, int k, const char *key)
{
    char *s = run_slurp(run, "/status.json");
    if (!s)
        return -1;
    const char *q = strstr(s, "\"workers\"");
    for (int i = 0; q && i <= k; i++)
        q = strstr(q + 1, "{\"id\": ");
    long long v = q ? json_num(q, key) : -1;
    free(s);
    return v;
}

/* Polls until worker K's KEY is at least V: true, or false after
 * TIMEOUT_S * slow() seconds. */
static bool wait_worker_num(const char *run, int k, const char *key, long long v, double timeout_s)
{
    double end = now_s() + timeout_s * slow();
    while (now_s() < end) {
        if (worker_num(run, k, key) >= v)
            return true;
        usleep(50000);
    }
    return false;
}

/* Start `gomoku train RUN [args]` with the tiny test settings; stderr to RUN.err. */
static pid_t start_train(const char *run, const char *fmt, ...)
{
    char extra[512] = "";
    if (fmt) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(extra, sizeof extra, fmt, ap);
        va_end(ap);
    }
    char *argv[64];
    int ac = 0;
    argv[ac++] = (char *)bin();
    argv[ac++] = "train";
    argv[ac++] = (char *)run;
    char *base[] = {"--workers", "2", "--parallel", "4", "--visits", "8", "--blocks", "1",
                    "--channels", "8", "--size", "7", "--batch", "32", "--ratio", "8",
                    "--window", "4000", "--checkpoint-every", "25", "--device", "cpu",
                    "--metrics-every", "5", "--stop-timeout", "10"};
    for (size_t i = 0; i < sizeof base / sizeof base[0]; i++)
        argv[ac++] = base[i];
    char *save = NULL;
    for (char *tok = strtok_r(extra, " ", &save); tok && ac < 62; tok = strtok_r(NULL, " ", &save))
        argv[ac++] = tok;
    argv[ac] = NULL;
    char errp[512];
    snprintf(errp, sizeof errp, "%s.err", run);
    return spawn_logged(argv, errp);
}

/* RUN trained with ARGS (as for start_train) to its end; returns
 * wait_exit's answer after TIMEOUT_S. */
static int train_until(const char *run, double timeout_s, const char *args)
{
    return wait_exit(start_train(run, "%s", args), timeout_s);
}


static void assert_size7(void *user, const game_record_t *r)
{
    (void)user;
    ck_assert_int_eq(r->size, 7);
}

/* Frames in RUN/games: good and bad. */
static void count_frames(const char *run, long *good, long *bad)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/games", run);
    *good = read_records(dir, ".gzr", assert_size7, NULL, bad);
}

/* Every frame in RUN/games is whole, and the run counted them all;
 * returns how many. */
static long frames_whole(const char *run)
{
    long good, bad;
    count_frames(run, &good, &bad);
    ck_assert_int_eq(bad, 0);
    ck_assert_int_eq(good, status_num(run, "games"));
    return good;
}

/* Step of the newest checkpoint in RUN/models (from its file). */
static long long newest_step(const char *run)
{
    char dir[512];
    snprintf(dir, sizeof dir, "%s/models", run);
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    long long best = -1;
    struct dirent *de;
    while ((de = readdir(d))) {
        size_t l = strlen(de->d_name);
        if (l == 10 && strcmp(de->d_name + 6, ".gzm") == 0 && atoll(de->d_name) > best)
            best = atoll(de->d_name);
    }
    closedir(d);
    if (best < 0)
        return -1;
    char p[1024], err[256];
    snprintf(p, sizeof p, "%s/%06lld.gzm", dir, best);
    nn_model_t *m = nn_model_load(p, err, sizeof err);
    ck_assert_msg(m != NULL, "%s", err);
    long long step = (long long)m->step;
    ck_assert_int_eq(step, best);
    nn_model_free(m);
    return step;
}

static int process_alive(long pid)
{
    char p[64];
    snprintf(p, sizeof p, "/proc/%ld/stat", pid);
    FILE *f = fopen(p, "r");
    if (!f)
        return 0;
    char buf[512];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    const char *rp = strrchr(buf, ')');
    return rp && rp[1] == ' ' && rp[2] != 'Z' && rp[2] != 'X';
}

/* A run directory and the RUN.err log start_train writes beside it. */
static void rm_rf(const char *run)
{
    char err[600];
    snprintf(err, sizeof err, "%s.err", run);
    remove_tree(run);
    remove_tree(err);
}

/* The run directory of the tests of case "run": made fresh before each,
 * removed with its RUN.err after one that passed. */
static char run[64];
/* ---- games sent against games stored ------------------------------------ */

/* Every game the workers logged as sent (LOG) is stored in RUN/games
 * exactly once, or still held in a worker's spool (kept, not lost).
 * Prints TEST's line of counts; returns the number sent, *stored and
 * *spooled the others' counts. */
static size_t check_sent_stored(const char *test, const char *run, const char *log,
                                size_t *stored, size_t *spooled)
{
    game_ids_t st = {0}, sp = {0};
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/games", run);
    game_ids_add_dir(&st, dir, ".gzr");
    for (int k = 0; k < 16; k++) {
        snprintf(dir, sizeof dir, "%s/spool/worker-%d", run, k);
        game_ids_add_dir(&sp, dir, ".gzf");
    }
    game_ids_sort(&st);
    game_ids_sort(&sp);
    check_ids_once(&st, true);
    size_t nsent = check_sent_in(log, &st, &sp);
    *stored = st.n;
    *spooled = sp.n;
    fprintf(stderr, "%s: %zu games sent, %zu stored, %zu left in spools\n", test, nsent, st.n,
            sp.n);
    game_ids_free(&st);
    game_ids_free(&sp);
    return nsent;
}

/* A frame of a 7x7 game that black resigned after 3 plies, recorded as
 * black's win: CRC-valid, refused only by the rules. */
static size_t forged_frame(uint8_t **buf, size_t *cap, uint64_t seq)
{
    game_record_t r;
    record_init(&r);
    record_clear(&r, RULE_FREESTYLE, 7, 0);
    ck_assert_int_eq(record_add_ply(&r, 24, 1, 0.0f, NULL, 0), 0);
    ck_assert_int_eq(record_add_ply(&r, 25, 1, 0.0f, NULL, 0), 0);
    ck_assert_int_eq(record_add_ply(&r, 17, 1, 0.0f, NULL, 0), 0);
    r.flags = RECORD_FLAG_RESIGNED;
    r.result = RESULT_WHITE;   /* white was to move and resigned: white cannot win */
    r.worker_id = 0xf0f;
    r.game_seq = seq;
    char err[256];
    size_t n = record_encode(&r, buf, cap, err, sizeof err);
    ck_assert_msg(n > 0, "%s", err);
    record_free(&r);
    return n;
}

/* ---- in-process: wire and replay -------------------------------------- */

static void run_setup(void) { make_tmpdir(run, sizeof run); }
static void run_teardown(void) { rm_rf(run); }

/* ---- in-process: wire and replay -------------------------------------- */

START_TEST(test_wire_stream)
{
    game_record_t g, out;
    record_init(&g);
    record_init(&out);
    game_in_a_row(&g, 7);
    uint8_t *fb = NULL;
    size_t cap = 0;
    char err[256];
    size_t flen = record_encode(&g, &fb, &cap, err, sizeof err);
    ck_assert_msg(flen > 0, "%s", err);

    /* stream: good, junk, good with a flipped payload byte, good */
    size_t total = 0;
    uint8_t *stream = malloc(flen * 4 + 100);
    memcpy(stream, fb, flen);
    total += flen;
    memcpy(stream + total, "not a frame at all, just junk", 29);
    total += 29;
    memcpy(stream + total, fb, flen);
    stream[total + flen - 1] ^= 0x77;
    total += flen;
    memcpy(stream + total, fb, flen);
    total += flen;

    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    fcntl(fds[0], F_SETFL, O_NONBLOCK);
    frame_stream_t *fs = frame_stream_create();
    ck_assert_ptr_nonnull(fs);
    int good = 0, bad = 0;
    /* feed in odd-sized pieces: frames split across reads must still decode */
    for (size_t off = 0; off < total; off += 7) {
        size_t n = total - off < 7 ? total - off : 7;
        ck_assert_int_eq(write(fds[1], stream + off, n), (ssize_t)n);
        ck_assert_int_gt(frame_stream_fill(fs, fds[0]), 0);
        for (;;) {
            const uint8_t *f;
            size_t fl;
            int st = record_stream_next(fs, &out, &f, &fl, err, sizeof err);
            if (st == 0)
                break;
            if (st > 0) {
                good++;
                ck_assert(record_equal(&g, &out));
                ck_assert_int_eq(fl, flen);
                ck_assert(memcmp(f, fb, flen) == 0);
            } else {
                bad++;
            }
        }
    }
    /* the same count as a file reader: one per stretch of garbage, however
     * the bytes were cut (the pipe reader used to count more) */
    ck_assert_int_eq(good, 2);
    ck_assert_int_eq(bad, 2);
    char path[] = "/tmp/gz_wire_XXXXXX";
    int tfd = mkstemp(path);
    ck_assert_int_ge(tfd, 0);
    ck_assert_int_eq(write(tfd, stream, total), (ssize_t)total);
    close(tfd);
    record_reader_t *rr = record_reader_open(path, err, sizeof err);
    ck_assert_ptr_nonnull(rr);
    int fgood = 0, fbad = 0, rc;
    while ((rc = record_reader_next(rr, &out, err, sizeof err)) != 0)
        rc > 0 ? fgood++ : fbad++;
    record_reader_free(rr);
    unlink(path);
    ck_assert_int_eq(fgood, good);
    ck_assert_int_eq(fbad, bad);
    ck_assert_int_eq(frame_stream_pending(fs), 0);
    ck_assert_int_eq(frame_stream_fill(fs, fds[0]), -1); /* nothing more: would block */

    /* a writer that dies mid-frame leaves a pending partial frame */
    ck_assert_int_eq(write(fds[1], fb, flen / 2), (ssize_t)(flen / 2));
    close(fds[1]);
    ck_assert_int_gt(frame_stream_fill(fs, fds[0]), 0);
    const uint8_t *f;
    size_t fl;
    ck_assert_int_eq(record_stream_next(fs, &out, &f, &fl, err, sizeof err), 0);
    ck_assert_int_eq(frame_stream_fill(fs, fds[0]), 0);
    ck_assert_int_eq(frame_stream_pending(fs), flen / 2);

    /* a heartbeat is an empty frame: the stream passes it on, whole */
    uint8_t hb[FRAME_HEADER_BYTES];
    frame_heartbeat(hb);
    frame_stream_clear(fs);
    ck_assert_int_eq(frame_stream_put(fs, hb, sizeof hb), 0);
    ck_assert_int_eq(frame_stream_next(fs, &f, &fl, NULL, err, sizeof err), 1);
    ck_assert_int_eq(fl, FRAME_HEADER_BYTES);

    close(fds[0]);
    frame_stream_free(fs);
    free(stream);
    free(fb);
    record_free(&g);
    record_free(&out);
}
END_TEST

START_TEST(test_wire_lines)
{
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    fcntl(fds[0], F_SETFL, O_NONBLOCK);
    wire_lines_t l = {.len = 0};
    char line[256];
    ck_assert_int_eq(write(fds[1], "model 3 runs/x/models/000300.gzm\nst", 35), 35);
    ck_assert_int_eq(wire_lines_fill(&l, fds[0]), 0);
    ck_assert_int_eq(wire_lines_next(&l, line, sizeof line), 1);
    ck_assert_str_eq(line, "model 3 runs/x/models/000300.gzm");
    ck_assert_int_eq(wire_lines_next(&l, line, sizeof line), 0);
    ck_assert_int_eq(write(fds[1], "op\n", 3), 3);
    close(fds[1]);
    ck_assert_int_eq(wire_lines_fill(&l, fds[0]), -1); /* EOF after the data */
    ck_assert(l.eof);
    ck_assert_int_eq(wire_lines_next(&l, line, sizeof line), 1);
    ck_assert_str_eq(line, "stop");
    close(fds[0]);
}
END_TEST

/* Three policy channels (game_in_a_row: visits 30 on the move played, 10
 * on another point): channel 0 is 0.75 / 0.25; channel 1 the next move
 * of the game under the same symmetry (all zero at the last ply); channel
 * 2 the soft target 0.75^(1/4) : 0.25^(1/4), renormalized. */
START_TEST(test_replay_policy_outputs)
{
    const int size = 7, m = 9, K = 3;
    size_t mm = (size_t)m * m;
    replay_t *rp = replay_create(1000, RULE_FREESTYLE, size, m, K);
    game_record_t g;
    record_init(&g);
    game_in_a_row(&g, size);
    ck_assert_int_eq(replay_add(rp, &g), 8);
    replay_batch_t b;
    ck_assert_int_eq(replay_batch_alloc(&b, 200, m, K, NULL), 0);
    uint64_t rng = 7;
    ck_assert_int_eq(replay_sample(rp, &b, &rng), 0);
    double hi = pow(0.75, 0.25), lo = pow(0.25, 0.25);
    int last = 0;
    for (int i = 0; i < b.n; i++) {
        const float *in = b.in + (size_t)i * NN_PLANES * mm;
        const float *pt = b.policy + (size_t)i * K * mm;
        int ply = 0;
        for (size_t q = 0; q < mm; q++)
            ply += in[NN_PLANE_OWN * mm + q] != 0 || in[NN_PLANE_OPP * mm + q] != 0;
        int mv = ply % 2 == 0 ? ply / 2 : size + ply / 2;
        int next = (ply + 1) % 2 == 0 ? (ply + 1) / 2 : size + (ply + 1) / 2;
        bool is_last = (uint32_t)ply + 1 == g.nplies;
        last += is_last;
        double s1 = 0;
        for (size_t q = 0; q < mm; q++)
            s1 += pt[mm + q];
        ck_assert(s1 == (is_last ? 0.0 : 1.0));
        int found = 0;
        for (int sym = 0; sym < 8 && !found; sym++) {
            int a = nn_policy_index(sym_point(sym, mv, size), size, m);
            int o = nn_policy_index(sym_point(sym, 2 * size + ply, size), size, m);
            int r = nn_policy_index(sym_point(sym, next, size), size, m);
            found = fabsf(pt[a] - 0.75f) < 1e-6f && fabsf(pt[o] - 0.25f) < 1e-6f &&
                    (is_last || pt[mm + r] == 1.0f) &&
                    fabs(pt[2 * mm + a] - hi / (hi + lo)) < 1e-6 &&
                    fabs(pt[2 * mm + o] - lo / (hi + lo)) < 1e-6;
        }
        ck_assert_msg(found, "sample %d (ply %d): targets do not match the game", i, ply);
    }
    ck_assert_int_gt(last, 0);
    replay_batch_release_buffers(&b);
    record_free(&g);
    replay_free(rp);
}
END_TEST

/* --value-mix: a sampled position's value target is (1 - mix) x the
 * game's result + mix x its root value as a win/loss split; replay_fill
 * (the window's losses) keeps the result alone. */
START_TEST(test_replay_value_mix)
{
    const int size = 7, m = 7;
    const double mix = 0.25, q = 0.6;   /* every ply's root value, side to move */
    replay_t *rp = replay_create(1000, RULE_FREESTYLE, size, m, 1);
    replay_set_value_mix(rp, mix);
    game_record_t g;
    record_init(&g);
    game_in_a_row(&g, size);   /* black wins */
    for (uint32_t i = 0; i < g.nplies; i++)
        g.plies[i].root_value = (float)q;
    ck_assert_int_gt(replay_add(rp, &g), 0);

    replay_batch_t b;
    ck_assert_int_eq(replay_batch_alloc(&b, 64, m, 1, NULL), 0);
    uint64_t rng = 7;
    ck_assert_int_eq(replay_sample(rp, &b, &rng), 0);
    int seen[2] = {0, 0};
    for (int i = 0; i < b.n; i++) {
        const float *vt = b.value + (size_t)i * 3;
        int black_to_move = b.in[(size_t)i * NN_PLANES * m * m + NN_PLANE_BLACK * m * m] == 1.0f;
        double z_win = black_to_move ? 1.0 : 0.0;   /* black won */
        ck_assert_msg(fabs(vt[0] - ((1 - mix) * z_win + mix * (1 + q) / 2)) < 1e-6 &&
                      vt[1] == 0.0f &&
                      fabs(vt[2] - ((1 - mix) * (1 - z_win) + mix * (1 - q) / 2)) < 1e-6,
                      "sample %d: value target %g %g %g", i, vt[0], vt[1], vt[2]);
        seen[black_to_move]++;
    }
    ck_assert(seen[0] > 0 && seen[1] > 0);

    int n = replay_fill(rp, &b, 0, b.n);
    ck_assert_int_gt(n, 0);
    for (int i = 0; i < n; i++) {
        const float *vt = b.value + (size_t)i * 3;
        ck_assert(vt[1] == 0.0f && (vt[0] == 1.0f || vt[2] == 1.0f) && vt[0] + vt[2] == 1.0f);
    }
    replay_batch_release_buffers(&b);
    record_free(&g);
    replay_free(rp);
}
END_TEST

START_TEST(test_replay_window_and_samples)
{
    const int size = 7, m = 9; /* a net for 9x9 serving 7x7 */
    replay_t *rp = replay_create(40, RULE_FREESTYLE, size, m, 1);
    game_record_t g;
    record_init(&g);
    game_in_a_row(&g, size);
    /* 9 plies, ply 1 is a cheap search: 8 training positions per game */
    ck_assert_int_eq(replay_add(rp, &g), 8);
    for (int i = 0; i < 9; i++)
        ck_assert_int_eq(replay_add(rp, &g), 8);
    /* window 40: the oldest games go once the rest hold 40 */
    ck_assert_int_le(replay_positions(rp), 47);
    ck_assert_int_ge(replay_positions(rp), 40);
    game_record_t other;
    record_init(&other);
    record_clear(&other, RULE_STANDARD, size, 0);
    ck_assert_int_eq(replay_add(rp, &other), -1); /* wrong rule */

    replay_batch_t b;
    ck_assert_int_eq(replay_batch_alloc(&b, 256, m, 1, NULL), 0);
    uint64_t rng = 99;
    ck_assert_int_eq(replay_sample(rp, &b, &rng), 0);
    int wins = 0, losses = 0, syms = 0;
    for (int i = 0; i < b.n; i++) {
        const float *in = b.in + (size_t)i * NN_PLANES * m * m;
        const float *pt = b.policy + (size_t)i * m * m;
        const float *vt = b.value + (size_t)i * 3;
        double sum = 0;
        int own = 0, opp = 0;
        for (int k = 0; k < m * m; k++) {
            sum += pt[k];
            if (pt[k] > 0) /* targets only on empty on-board points */
                ck_assert(in[NN_PLANE_ONBOARD * m * m + k] == 1.0f &&
                          in[NN_PLANE_OWN * m * m + k] == 0.0f &&
                          in[NN_PLANE_OPP * m * m + k] == 0.0f);
            own += in[NN_PLANE_OWN * m * m + k] != 0;
            opp += in[NN_PLANE_OPP * m * m + k] != 0;
        }
        ck_assert(fabs(sum - 1.0) < 1e-4);
        /* black to move (as many stones each) won; white to move lost */
        int black_to_move = in[NN_PLANE_BLACK * m * m] == 1.0f;
        ck_assert_int_eq(black_to_move, own == opp);
        ck_assert(vt[black_to_move ? 0 : 2] == 1.0f && vt[1] == 0.0f);
        wins += black_to_move;
        losses += !black_to_move;
        /* the untransformed game has black's stones on row 0 */
        int row0 = 1;
        for (int k = 0; k < m * m; k++) {
            float stone = black_to_move ? in[NN_PLANE_OWN * m * m + k] : in[NN_PLANE_OPP * m * m + k];
            if (stone != 0 && k / m != 0)
                row0 = 0;
        }
        syms += !row0;
    }
    ck_assert_int_gt(wins, 0);
    ck_assert_int_gt(losses, 0);
    ck_assert_int_gt(syms, 0); /* random symmetries were applied */
    replay_batch_release_buffers(&b);

    replay_batcher_t *bt = replay_batcher_create(rp, 64, 2, 3, 1, 5, NULL);
    ck_assert_ptr_nonnull(bt);
    for (int i = 0; i < 10; i++) {
        replay_batch_t *x = replay_batcher_take(bt);
        ck_assert_int_eq(x->n, 64);
        double s = 0;
        for (int k = 0; k < m * m; k++)
            s += x->policy[k];
        ck_assert(fabs(s - 1.0) < 1e-4);
        replay_batcher_release(bt, x);
        ck_assert_int_ge(replay_add(rp, &g), 0); /* writer alongside the readers */
    }
    uint64_t samples;
    double busy;
    replay_batcher_stats(bt, &samples, &busy);
    ck_assert_int_ge(samples, 640);
    replay_batcher_free(bt);
    record_free(&g);
    record_free(&other);
    replay_free(rp);
}
END_TEST

START_TEST(test_config_roundtrip)
{
    char dir[64], p[128], err[256];
    make_tmppath(dir, sizeof dir, p, sizeof p, "config");
    run_config_t c, d;
    run_config_default(&c);
    c.rule = RULE_RENJU;
    c.size = 15;
    c.lr = 0.0123;
    c.seed = 18446744073709551615ull;
    c.soft_weight = 1.5;
    snprintf(c.device, sizeof c.device, "cuda:1");
    ck_assert_int_eq(run_config_save(&c, p, err, sizeof err), 0);
    ck_assert_int_eq(run_config_load(&d, p, err, sizeof err), 0);
    ck_assert(d.soft_weight == 1.5 && d.opp_weight == 0.15);
    ck_assert_int_eq(d.rule, RULE_RENJU);
    ck_assert_int_eq(d.size, 15);
    ck_assert(d.lr == 0.0123);
    ck_assert(d.seed == c.seed);
    ck_assert_str_eq(d.device, "cuda:1");
    FILE *f = fopen(p, "a");
    fprintf(f, "size=99\n");
    fclose(f);
    ck_assert_int_eq(run_config_load(&d, p, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "size") != NULL, "%s", err);
    /* a version-3 config (no loss weights) trains with the weights it always had */
    const char *v3 = "version=3\npolicy_heads=3\n";
    ck_assert_int_eq(run_config_parse(&d, v3, strlen(v3), "v3", err, sizeof err), 0);
    ck_assert(d.policy_heads == 3 && d.opp_weight == 0.15 && d.soft_weight == 8.0);
    const char *bad = "version=4\nsoft_weight=-1\n";
    ck_assert_int_eq(run_config_parse(&d, bad, strlen(bad), "bad", err, sizeof err), -1);
    ck_assert_msg(strstr(err, "soft_weight") != NULL, "%s", err);
    /* a NUL byte, a line too long: refused with the line named */
    const char nul[] = "version=4\nlr=0.1\0\n";
    ck_assert_int_eq(run_config_parse(&d, nul, sizeof nul - 1, "nul", err, sizeof err), -1);
    ck_assert_str_eq(err, "nul:2: NUL byte");
    char longl[700] = "version=4\nlr=";
    memset(longl + strlen(longl), '1', 600);
    longl[sizeof longl - 1] = '\0';
    ck_assert_int_eq(run_config_parse(&d, longl, strlen(longl), "long", err, sizeof err), -1);
    ck_assert_str_eq(err, "long:2: line too long");

    int fd = run_lock(dir, err, sizeof err);
    ck_assert_int_ge(fd, 0);
    close(fd);
    rm_rf(dir);
}
END_TEST

/* ---- the real program ------------------------------------------------- */

START_TEST(test_train_steps_and_checkpoint)
{
    pid_t pid = start_train(run, "--steps 50");
    int rc = wait_exit(pid, 50);
    char errp[128];
    snprintf(errp, sizeof errp, "%s.err", run);
    char *log = slurp(errp);
    ck_assert_msg(rc == 0, "train exited %d:\n%s", rc, log ? log : "");
    /* --visits 8 under the default cheap_visits 50: capped, and said */
    ck_assert_msg(strstr(log, "cheap_visits 50 is above visits 8: cheap searches use 8 visits") &&
                      strstr(log, "8 visits, 8 cheap"), "%s", log);
    free(log);
    ck_assert_int_eq(newest_step(run), 50);
    char p[256];
    snprintf(p, sizeof p, "%s/models/000025.gzm", run);
    ck_assert_int_eq(access(p, F_OK), 0);
    ck_assert_int_eq(status_num(run, "step"), 50);
    ck_assert_int_eq(status_num(run, "generation"), 2);
    long good, bad;
    count_frames(run, &good, &bad);
    ck_assert_int_gt(good, 0);
    ck_assert_int_eq(bad, 0);
    ck_assert_int_eq(status_num(run, "games"), good);
    /* both workers ran, and their game counts add up to what was stored.
     * (Not "both played": on a loaded machine one worker can supply every
     * game the 50 steps need before the other finishes its first.) */
    ck_assert_int_gt(worker_num(run, 0, "pid"), 0);
    ck_assert_int_gt(worker_num(run, 1, "pid"), 0);
    ck_assert_int_ne(worker_num(run, 0, "pid"), worker_num(run, 1, "pid"));
    ck_assert_int_eq(worker_num(run, 0, "restarts"), 0);
    ck_assert_int_eq(worker_num(run, 1, "restarts"), 0);
    ck_assert_int_eq(worker_num(run, 0, "games") + worker_num(run, 1, "games"), good);
    /* balance: never more than ratio samples per position */
    ck_assert_int_le(50 * 32, 8 * status_num(run, "positions"));
    snprintf(p, sizeof p, "%s/metrics.csv", run);
    char *m = slurp(p);
    ck_assert_ptr_nonnull(m);
    int rows = 0;
    for (char *q = m; (q = strchr(q, '\n')); q++)
        rows++;
    ck_assert_int_ge(rows, 1 + 50 / 5);
    free(m);
    /* the run's settings are fixed: a conflicting option is refused in one line */
    pid = start_train(run, "--steps +5 --size 9");
    ck_assert_int_eq(wait_exit(pid, 20), 1);
    ck_assert(file_contains(errp, "size=7"));
}
END_TEST

START_TEST(test_worker_killed_is_restarted)
{
    pid_t pid = start_train(run, NULL);
    ck_assert(wait_status(run, "games", 4, 40));
    long pids[2];
    ck_assert_int_eq(worker_pids(run, pids, 2), 2);
    long long games_at_kill = status_num(run, "games");
    ck_assert_int_eq(kill((pid_t)pids[0], SIGKILL), 0);
    /* restarted with a new pid, and games keep coming */
    ck_assert_msg(wait_worker_num(run, 0, "restarts", 1, 30), "worker 0: no restart");
    long npids[2];
    ck_assert_int_eq(worker_pids(run, npids, 2), 2);
    ck_assert_int_ne(npids[0], pids[0]);
    ck_assert(process_alive(npids[0]));
    ck_assert(wait_status(run, "games", games_at_kill + 4, 30));
    stop_child(pid, 40);
    frames_whole(run);
    ck_assert(!process_alive(npids[0]) && !process_alive(npids[1]));
}
END_TEST

START_TEST(test_sigterm_then_resume)
{
    pid_t pid = start_train(run, NULL);
    ck_assert(wait_status(run, "step", 10, 50));
    /* twice, as `timeout` and group kills deliver it: still a clean stop */
    ck_assert_int_eq(kill(pid, SIGTERM), 0);
    stop_child(pid, 40);
    long long s1 = newest_step(run);
    ck_assert_int_ge(s1, 10);
    ck_assert_int_eq(status_num(run, "step"), s1); /* checkpointed where it stopped */
    long g1, bad;
    count_frames(run, &g1, &bad);
    ck_assert_int_gt(g1, 0);
    ck_assert_int_eq(bad, 0);

    /* the learning rate may change on resume: said, and kept in the config
     * the session runs from (status.json's lr is the warmup schedule's
     * value at its step, a fraction of it this early in the run) */
    pid = start_train(run, "--steps +10 --lr 0.005");
    ck_assert_int_eq(wait_exit(pid, 50), 0);
    ck_assert_int_eq(newest_step(run), s1 + 10);
    ck_assert_int_ge(frames_whole(run), g1);   /* the saved games were counted in */
    ck_assert(run_has(run, ".err", "resuming from"));
    ck_assert(run_has(run, ".err", "using --lr 0.005"));
    ck_assert(run_has(run, "/config", "\nlr=0.005"));
}
END_TEST

START_TEST(test_garbage_frames_rejected)
{
    pid_t pid = start_train(run, "--worker-fault garbage --bad-frame-limit 0");
    ck_assert(wait_status(run, "games", 6, 40));
    stop_child(pid, 40);
    long long games = status_num(run, "games");
    long long rejected = status_num(run, "rejected_frames");
    /* each good frame is followed by junk and a corrupt copy: both rejected */
    ck_assert_int_ge(rejected, games);
    ck_assert_int_gt(worker_num(run, 0, "bad_frames") + worker_num(run, 1, "bad_frames"), 0);
    ck_assert_int_eq(frames_whole(run), games);

    /* with a limit the worker is restarted */
    char run2[64];
    make_tmpdir(run2, sizeof run2);
    pid = start_train(run2, "--worker-fault garbage --bad-frame-limit 4 --workers 1");
    ck_assert_msg(wait_worker_num(run2, 0, "restarts", 1, 40), "worker 0: no restart");
    stop_child(pid, 40);
    long good, bad;
    count_frames(run2, &good, &bad);
    ck_assert_int_eq(bad, 0);
    rm_rf(run2);
}
END_TEST

START_TEST(test_second_trainer_refused)
{
    pid_t pid = start_train(run, NULL);
    ck_assert(wait_status(run, "pid", 1, 30));
    char run2err[128];
    snprintf(run2err, sizeof run2err, "%s.err", run);
    /* the second one writes to the same .err file: look for its line */
    pid_t p2 = start_train(run, NULL);
    ck_assert_int_eq(wait_exit(p2, 20), 1);
    char want[128];
    snprintf(want, sizeof want, "%s is in use by pid %ld", run, (long)pid);
    ck_assert_msg(file_contains(run2err, want), "no '%s' in %s", want, run2err);
    /* the lock is on the directory: deleting RUN_DIR/lock lets nobody in */
    char lockp[128];
    snprintf(lockp, sizeof lockp, "%s/lock", run);
    ck_assert_int_eq(unlink(lockp), 0);
    p2 = start_train(run, NULL);
    ck_assert_int_eq(wait_exit(p2, 20), 1);
    snprintf(want, sizeof want, "%s is in use by another process", run);
    ck_assert_msg(file_contains(run2err, want), "no '%s' in %s", want, run2err);
    ck_assert(process_alive(pid));
    stop_child(pid, 40);
}
END_TEST

START_TEST(test_killed_trainer_leaves_no_workers_and_resumes)
{
    pid_t pid = start_train(run, NULL);
    ck_assert(wait_status(run, "step", 26, 50)); /* past the first checkpoint */
    long pids[2];
    ck_assert_int_eq(worker_pids(run, pids, 2), 2);
    ck_assert(process_alive(pids[0]) && process_alive(pids[1]));
    ck_assert_int_eq(kill(pid, SIGKILL), 0);
    int st;
    waitpid(pid, &st, 0);
    double end = now_s() + 10;
    while (now_s() < end && (process_alive(pids[0]) || process_alive(pids[1])))
        usleep(20000);
    ck_assert_msg(!process_alive(pids[0]) && !process_alive(pids[1]),
                  "a worker outlived its trainer");

    /* a torn last frame, as a kill in the middle of a write leaves */
    char dir[128];
    snprintf(dir, sizeof dir, "%s/games", run);
    long good0, bad0;
    count_frames(run, &good0, &bad0);
    char shard[256];
    snprintf(shard, sizeof shard, "%s/shard-000000.gzr", dir);
    FILE *f = fopen(shard, "ab");
    ck_assert_ptr_nonnull(f);
    const unsigned char torn[] = {0x47, 0x5a, 0x46, 0x31, 200, 0, 0, 0, 1, 2, 3, 4, 5, 6};
    fwrite(torn, 1, sizeof torn, f);
    fclose(f);

    long long s0 = newest_step(run);
    ck_assert_int_ge(s0, 25);
    pid = start_train(run, "--steps +5");
    ck_assert_int_eq(wait_exit(pid, 50), 0);
    ck_assert_int_eq(newest_step(run), s0 + 5);
    ck_assert_int_eq(status_num(run, "bad_frames_on_load"), 1);
    ck_assert_int_ge(status_num(run, "games"), good0);
}
END_TEST

START_TEST(test_resume_with_only_invalid_games)
{
    ck_assert_int_eq(train_until(run, 50, "--steps 5"), 0);
    long good, bad;
    count_frames(run, &good, &bad);
    ck_assert_int_gt(good, 0);
    /* every saved frame corrupted: one byte flipped in each payload */
    char p[256];
    snprintf(p, sizeof p, "%s/games/shard-000000.gzr", run);
    FILE *f = fopen(p, "r+b");
    ck_assert_ptr_nonnull(f);
    unsigned char hdr[12];
    long off = 0;
    while (fseek(f, off, SEEK_SET) == 0 && fread(hdr, 1, 12, f) == 12) {
        unsigned len = hdr[4] | hdr[5] << 8 | hdr[6] << 16 | (unsigned)hdr[7] << 24;
        fseek(f, off + 12, SEEK_SET);
        int c = fgetc(f);
        fseek(f, off + 12, SEEK_SET);
        fputc(c ^ 0xff, f);
        off += 12 + (long)len;
    }
    fclose(f);
    count_frames(run, &good, &bad);
    ck_assert_int_eq(good, 0);
    /* the trainer says so and waits for new games instead of training on nothing */
    pid_t pid = start_train(run, "--steps +3");
    ck_assert_int_eq(wait_exit(pid, 50), 0);
    ck_assert(run_has(run, ".err", "saved frames in"));
    ck_assert(run_has(run, ".err", "are invalid: training waits for new games"));
    ck_assert_int_eq(newest_step(run), 8);
    ck_assert_int_ge(status_num(run, "bad_frames_on_load"), 1);
}
END_TEST

/* Exact resume: N steps, checkpoint (weights + momentum), a fresh process's
 * net from the files, M steps == N + M steps in one go, bit for bit (CPU,
 * one thread). Without the momentum the weights differ. */
#define RS_N 4
#define RS_M 3
#define RS_B 8
#define RS_S 7

static void resume_batch(int k, float *in, float *pol, float *val, const nn_config_t *cfg)
{
    uint64_t s = 1000 + (uint64_t)k;
    size_t nin = (size_t)RS_B * cfg->in_planes * cfg->board_max * cfg->board_max;
    for (size_t i = 0; i < nin; i++)
        in[i] = (float)(util_rng_next(&s) & 1);
    int hw = cfg->board_max * cfg->board_max;
    for (int b = 0; b < RS_B; b++) {
        float sum = 0;
        for (int j = 0; j < hw; j++)
            sum += pol[b * hw + j] = (float)util_rng_unit(&s);
        for (int j = 0; j < hw; j++)
            pol[b * hw + j] /= sum;
        for (int j = 0; j < 3; j++)
            val[b * 3 + j] = j == (int)util_rng_below(&s, 3);
    }
}

static void resume_train(nn_net_t *net, int from, int to, const nn_config_t *cfg)
{
    size_t hw = (size_t)cfg->board_max * cfg->board_max;
    float *in = malloc(RS_B * cfg->in_planes * hw * sizeof(float));
    float *pol = malloc(RS_B * hw * sizeof(float)), val[RS_B * 3];
    nn_train_opts_t o = {.lr = 0.05f, .momentum = 0.9f, .weight_decay = 1e-4f};
    char err[256];
    for (int k = from; k < to; k++) {
        resume_batch(k, in, pol, val, cfg);
        nn_losses_t l;
        ck_assert_msg(nn_net_train_step(net, in, pol, val, RS_B, &o, &l, err, sizeof err) == 0,
                      "%s", err);
    }
    free(in);
    free(pol);
}

START_TEST(test_exact_resume)
{
    char dir[64], p[128], err[512], note[128];
    make_tmppath(dir, sizeof dir, p, sizeof p, "%06d.gzm", RS_N);
    nn_config_t cfg;
    nn_config_default(&cfg, 1, 8, RS_S);
    nn_model_t *m = nn_model_create(&cfg, 5, err, sizeof err);
    ck_assert_ptr_nonnull(m);
    size_t np = m->nparams;

    nn_net_t *once = nn_net_create(m, "cpu", RS_B, 1, note, sizeof note, err, sizeof err);
    ck_assert_msg(once != NULL, "%s", err);
    resume_train(once, 0, RS_N + RS_M, &cfg);
    float *want = malloc(np * sizeof(float));
    nn_net_get_weights(once, want);
    nn_net_free(once);

    nn_net_t *a = nn_net_create(m, "cpu", RS_B, 1, note, sizeof note, err, sizeof err);
    resume_train(a, 0, RS_N, &cfg);
    m->step = RS_N;
    ck_assert_msg(ckpt_save(a, m, p, err, sizeof err) == 0, "%s", err);
    nn_net_free(a);
    nn_model_free(m);

    float *got = malloc(np * sizeof(float));
    for (int with_opt = 1; with_opt >= 0; with_opt--) {
        nn_model_t *r = nn_model_load(p, err, sizeof err);
        ck_assert_msg(r != NULL, "%s", err);
        ck_assert_int_eq(r->step, RS_N);
        nn_net_t *b = nn_net_create(r, "cpu", RS_B, 1, note, sizeof note, err, sizeof err);
        if (with_opt)
            ck_assert_msg(ckpt_load_optimizer(b, r, p, err, sizeof err) == 1, "%s", err);
        resume_train(b, RS_N, RS_N + RS_M, &cfg);
        nn_net_get_weights(b, got);
        int same = memcmp(got, want, np * sizeof(float)) == 0;
        ck_assert_msg(same == with_opt, "resumed %s momentum: weights %s", with_opt ? "with" : "without",
                      same ? "equal" : "differ");
        nn_net_free(b);
        nn_model_free(r);
    }
    /* a sidecar for another step is refused with a reason, not used */
    nn_model_t *r = nn_model_load(p, err, sizeof err);
    r->step = RS_N + 1;
    nn_net_t *b = nn_net_create(r, "cpu", RS_B, 1, note, sizeof note, err, sizeof err);
    ck_assert_int_eq(ckpt_load_optimizer(b, r, p, err, sizeof err), 0);
    ck_assert_msg(strstr(err, "for step 4"), "message '%s'", err);
    nn_net_free(b);
    nn_model_free(r);
    free(want);
    free(got);
    rm_rf(dir);
}
END_TEST

/* ---- failures under fault -------------------------------------------- */

START_TEST(test_nonfinite_model_refused)
{
    char dir[64], p[128], err[512];
    make_tmppath(dir, sizeof dir, p, sizeof p, "nan.gzm");
    nn_model_t *m = small_model(1, 8, 7, 1);
    m->params[m->nparams / 2] = NAN;
    ck_assert_int_eq(nn_model_save(m, p, err, sizeof err), 0);
    ck_assert_ptr_null(nn_model_load(p, err, sizeof err));
    ck_assert_msg(strstr(err, "NaN") && strstr(err, "nan.gzm"), "message '%s'", err);
    m->params[m->nparams / 2] = INFINITY;
    ck_assert_int_eq(nn_model_save(m, p, err, sizeof err), 0);
    ck_assert_ptr_null(nn_model_load(p, err, sizeof err));
    ck_assert_msg(strstr(err, "infinite"), "message '%s'", err);
    nn_model_free(m);
    /* the shipped version-1 model still loads */
    const char *src = getenv("GOMOKU_SRC");
    if (src) {
        snprintf(p, sizeof p, "%s/models/freestyle9-2x32.gzm", src);
        nn_model_t *v1 = nn_model_load(p, err, sizeof err);
        ck_assert_msg(v1 != NULL, "%s", err);
        nn_model_free(v1);
    }
    rm_rf(dir);
}
END_TEST

/* No NaN, Infinity or inf anywhere in a JSON text (JSON has none). */
static int json_all_finite(const char *s)
{
    return s && !strstr(s, "nan") && !strstr(s, "NaN") && !strstr(s, "inf") &&
           !strstr(s, "Inf");
}

/* After a run with non-finite steps: SKIPPED of them skipped, status.json
 * valid JSON (no NaN/Inf) at STEP, and the newest checkpoint that step's. */
static void expect_nonfinite_outcome(const char *run, long long skipped, long long step)
{
    ck_assert_int_eq(status_num(run, "nonfinite_steps_skipped"), skipped);
    ck_assert_int_eq(status_num(run, "step"), step);
    char *s = run_slurp(run, "/status.json");
    ck_assert_msg(json_all_finite(s), "status.json is not valid JSON: %s", s);
    free(s);
    ck_assert_int_eq(newest_step(run), step);
}

START_TEST(test_nonfinite_loss_stops_run)
{
    ck_assert_int_eq(train_until(run, 90, "--fault nan-loss --nonfinite-limit 3 --steps 20"), 1);
    ck_assert_msg(run_has(run, ".err", "3 training steps in a row gave a non-finite loss"),
                  "no stop message in %s.err", run);
    /* the checkpoint left behind is the finite one */
    expect_nonfinite_outcome(run, 3, 0);
}
END_TEST

/* One poisoned step (step 6, between two weight snapshots) poisons the
 * weights; the rollback to the last snapshot proven finite lets the run go
 * on with finite losses to its target. */
START_TEST(test_nonfinite_step_rolled_back)
{
    ck_assert_int_eq(train_until(run, 120, "--fault nan-once --steps 30"), 0);
    expect_nonfinite_outcome(run, 1, 30);
}
END_TEST

/* --init-model: a new run starts from the given weights and takes the
 * model's shape; a contradicting setting is refused; a resumed run says it
 * ignores the option. */
START_TEST(test_init_model)
{
    char dir[64], run[128], mp[128];
    make_tmppath(dir, sizeof dir, run, sizeof run, "r");
    snprintf(mp, sizeof mp, "%s/init.gzm", dir);
    nn_model_t *m = small_model(1, 8, 7, 99);
    m->rule = RULE_STANDARD;
    m->step = 1234;
    save_model(m, mp);
    char err[512];

    expect_gomoku(1, "--blocks 2, but --init-model", "train %s --init-model %s --blocks 2 "
                  "--device cpu", run, mp);
    expect_gomoku(1, "trained for standard", "train %s --init-model %s --rule renju --device cpu",
                  run, mp);
    /* a model file that is not one: refused with the loader's reason */
    char junk[160];
    snprintf(junk, sizeof junk, "%s/junk.gzm", dir);
    write_file(junk, "not a model\n", 12, "wb");
    expect_gomoku(1, "junk.gzm", "train %s --init-model %s --device cpu", run, junk);

    pid_t pid = start_train(run, "--init-model %s --blocks 1 --steps 1", mp);
    ck_assert_int_eq(wait_exit(pid, 60), 0);
    char p[256];
    snprintf(p, sizeof p, "%s/config", run);
    ck_assert(file_contains(p, "rule=standard"));
    snprintf(p, sizeof p, "%s/models/000000.gzm", run);
    nn_model_t *first = nn_model_load(p, err, sizeof err);
    ck_assert_msg(first != NULL, "%s", err);
    ck_assert_uint_eq(first->step, 0);
    ck_assert_uint_eq(first->nparams, m->nparams);
    ck_assert_int_eq(memcmp(first->params, m->params, m->nparams * sizeof *m->params), 0);
    nn_model_free(first);
    snprintf(p, sizeof p, "%s/train.log", run);
    ck_assert(file_contains(p, "trained 1234 steps before"));

    expect_gomoku(0, "--init-model ignored", "train %s --init-model %s --steps +1 --device cpu",
                  run, mp);
    nn_model_free(m);
    rm_rf(dir);
}
END_TEST

START_TEST(test_bad_run_paths)
{
    char dir[64];
    make_tmpdir(dir, sizeof dir);
    /* a newline: the control protocol ("model GEN PATH\n") cannot carry it */
    expect_gomoku(2, "control byte 0x0a", "train '%s/a\nb' --device cpu", dir);
    /* too long: its files would not fit */
    char longp[3600];
    int n = snprintf(longp, sizeof longp, "%s/", dir);
    while (n < 3100)
        longp[n++] = 'x';
    longp[n] = '\0';
    expect_gomoku(2, "at most 3000", "train '%s' --device cpu", longp);
    /* nothing was created, here or in the parent */
    DIR *d = opendir(dir);
    struct dirent *de;
    int entries = 0;
    while ((de = readdir(d)))
        entries += de->d_name[0] != '.';
    closedir(d);
    ck_assert_int_eq(entries, 0);
    /* a bad setting names itself and its range */
    expect_gomoku(2, "bad value for momentum: '1.5' (out of range 0..0.999)",
                  "train %s/r --momentum 1.5", dir);
    expect_gomoku(2, "lr", "train %s/r --lr nan", dir);
    rm_rf(dir);
}
END_TEST

START_TEST(test_checkpoint_retention)
{
    ck_assert_int_eq(train_until(run, 90, "--checkpoint-every 1 --keep-checkpoints 3 "
                                                      "--keep-every 10 --steps 30 --workers 1"),
                     0);
    char models[128], p[256];
    snprintf(models, sizeof models, "%s/models", run);
    /* the newest 3 (28, 29, 30) and every 10th (0, 10, 20, 30) */
    ck_assert_int_eq(count_files(models, ".gzm"), 6);
    const int kept[] = {0, 10, 20, 28, 29, 30};
    for (int i = 0; i < 6; i++) {
        snprintf(p, sizeof p, "%s/%06d.gzm", models, kept[i]);
        ck_assert_msg(access(p, F_OK) == 0, "%s is missing", p);
    }
    /* a checkpoint killed mid-write leaves NAME.tmp.PID: removed at start */
    snprintf(p, sizeof p, "%s/000031.gzm.tmp.99999", models);
    FILE *f = fopen(p, "w");
    fputs("torn", f);
    fclose(f);
    pid_t pid = start_train(run, "--checkpoint-every 1 --keep-checkpoints 3 --keep-every 10 "
                                 "--steps +1 --workers 1");
    ck_assert_int_eq(wait_exit(pid, 90), 0);
    ck_assert_int_eq(access(p, F_OK), -1);
    ck_assert(run_has(run, "/train.log", "removed 1 stale temporary files"));
}
END_TEST

/* The games log beside RUN (outside it: RUN may be a full tmpfs). */
static const char *glog_of(const char *run, char *buf, size_t len)
{
    snprintf(buf, len, "%s.games", run);
    return buf;
}

static void rm_run(const char *run)
{
    char p[600];
    rm_rf(run);
    remove_tree(glog_of(run, p, sizeof p));
}

/* A fresh run directory RUN and the path of its games log GLOG. */
static void make_run(char *run, size_t runlen, char *glog, size_t gloglen)
{
    make_tmpdir(run, runlen);
    glog_of(run, glog, gloglen);
}

/* SIGTERM: the trainer checkpoints and exits 0 within 40 s. */
static void stop_train(pid_t pid)
{
    ck_assert_int_eq(kill(pid, SIGTERM), 0);
    ck_assert_int_eq(wait_exit(pid, 40), 0);
}

/* The end of a run that lost nothing: every frame on disk is whole, they
 * are the games status.json counts, none was dropped, and every game sent
 * (GLOG) is stored; prints TEST's counts. Returns the games left in the
 * workers' spools. */
static size_t check_nothing_lost(const char *test, const char *run, const char *glog)
{
    long good, bad;
    count_frames(run, &good, &bad);
    ck_assert_int_eq(bad, 0);
    ck_assert_int_eq(good, status_num(run, "games"));
    ck_assert_int_eq(status_num(run, "games_dropped"), 0);
    size_t stored, spooled, sent = check_sent_stored(test, run, glog, &stored, &spooled);
    ck_assert_uint_eq(sent, stored);
    return spooled;
}

START_TEST(test_disk_full_holds_games)
{
    char run[64], glog[128];
    make_run(run, sizeof run, glog, sizeof glog);
    /* after 2 games, 3 writes fail half-way (ENOSPC), then the disk recovers */
    setenv("GOMOKU_FAULT_ENOSPC", "2:3", 1);
    pid_t pid = start_train(run, "--steps 30 --games-log %s", glog);
    unsetenv("GOMOKU_FAULT_ENOSPC");
    ck_assert_int_eq(wait_exit(pid, 120), 0);
    /* the game whose write failed was held and written on a retry: none lost */
    ck_assert_int_eq(status_num(run, "games_dropped"), 0);
    ck_assert(run_has(run, "/status.json", "\"games_dir_writable\": true"));
    ck_assert(run_has(run, "/train.log", "No space left on device; the game is held"));
    ck_assert(run_has(run, "/train.log", "writable again"));
    ck_assert_msg(run_has(run, ".err", "disk full"), "the progress line never said 'disk full'");
    /* the torn halves were cut off: every saved frame is whole */
    ck_assert_uint_eq(check_nothing_lost("test_disk_full_holds_games", run, glog), 0);
    rm_run(run);
}
END_TEST

/* Mount a tmpfs of OPTS on DIR (RUN, or a directory in it) in this test's
 * own mount namespace (it goes away with the test whatever happens); false,
 * having said why and removed RUN, when the test may not (no CAP_SYS_ADMIN). */
static bool mount_tmpfs(const char *run, const char *dir, const char *opts, const char *test)
{
    if (unshare(CLONE_NEWNS) != 0 || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
        mount("tmpfs", dir, "tmpfs", 0, opts) != 0) {
        fprintf(stderr, "%s: cannot mount a tmpfs here (%s): not run\n", test, strerror(errno));
        rm_rf(run);
        return false;
    }
    return true;
}

/* rm_run of a run with mount_tmpfs's tmpfs on DIR. */
static void rm_tmpfs_run(const char *run, const char *dir)
{
    umount2(dir, MNT_DETACH);
    rm_run(run);
}

/* A real full disk: games/ is a 16 KiB tmpfs. The trainer holds the game
 * it could not write, pauses the workers, and status.json says so; when the
 * tmpfs grows it goes on, every frame on disk is whole and every game sent
 * is stored. */
START_TEST(test_real_disk_full_tmpfs)
{
    char run[64], games[128], glog[128];
    make_run(run, sizeof run, glog, sizeof glog);
    snprintf(games, sizeof games, "%s/games", run);
    ck_assert_int_eq(mkdir(games, 0755), 0);
    if (!mount_tmpfs(run, games, "size=16k", "test_real_disk_full_tmpfs"))
        return;
    pid_t pid = start_train(run, "--games-log %s", glog);
    char p[256];
    snprintf(p, sizeof p, "%s/train.log", run);
    double end = now_s() + 90 * slow();
    while (now_s() < end && !file_contains(p, "No space left on device; the game is held"))
        usleep(100000);
    ck_assert_msg(file_contains(p, "No space left on device; the game is held"), "never full");
    snprintf(p, sizeof p, "%s/status.json", run);
    end = now_s() + 10 * slow();
    while (now_s() < end && !file_contains(p, "\"state\": \"disk full\""))
        usleep(50000);
    char *st = must_slurp(p);
    ck_assert_msg(strstr(st, "\"state\": \"disk full\"") &&
                  strstr(st, "\"games_dir_writable\": false") &&
                  strstr(st, "\"games_dir_error\": \"No space left on device\"") &&
                  strstr(st, "\"games_held\": 1") && strstr(st, "\"games_dropped\": 0"), "%s", st);
    free(st);
    /* the progress line follows the status.json write by a moment */
    end = now_s() + 10 * slow();
    while (now_s() < end && !run_has(run, ".err", "disk full"))
        usleep(50000);
    ck_assert_msg(run_has(run, ".err", "disk full"), "no 'disk full' in the progress line");
    long long saved = status_num(run, "games");
    /* the disk gets room again: the run goes on */
    ck_assert_int_eq(mount("tmpfs", games, "tmpfs", MS_REMOUNT, "size=4m"), 0);
    ck_assert(wait_status(run, "games", saved + 20, 60));
    snprintf(p, sizeof p, "%s/train.log", run);
    ck_assert(file_contains(p, "writable again"));
    stop_train(pid);
    check_nothing_lost("test_real_disk_full_tmpfs", run, glog);
    rm_tmpfs_run(run, games);
}
END_TEST

/* The whole run directory on a tmpfs that fills up: status.json cannot be
 * written either. The last good one stays (valid JSON), the progress line
 * says it is not updated, and it is written again as soon as there is room;
 * no game is lost. */
START_TEST(test_status_json_on_full_disk)
{
    char run[64], glog[128];
    make_run(run, sizeof run, glog, sizeof glog);
    if (!mount_tmpfs(run, run, "size=4m", "test_status_json_on_full_disk"))
        return;
    pid_t pid = start_train(run, "--games-log %s", glog);
    ck_assert(wait_status(run, "games", 4, 60));
    /* fill the disk */
    char filler[128];
    snprintf(filler, sizeof filler, "%s/filler", run);
    int fd = open(filler, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ck_assert_int_ge(fd, 0);
    static char chunk[65536];
    while (write(fd, chunk, sizeof chunk) > 0)
        ;
    while (write(fd, chunk, 512) > 0)
        ;
    close(fd);
    char errp[128];
    snprintf(errp, sizeof errp, "%s.err", run);
    double end = now_s() + 60 * slow();
    while (now_s() < end && !(file_contains(errp, "status.json not updated") &&
                               file_contains(errp, "disk full")))
        usleep(100000);
    ck_assert_msg(file_contains(errp, "status.json not updated"), "the progress line never said so");
    ck_assert_msg(file_contains(errp, "disk full"), "the progress line never said 'disk full'");
    char sp[128], why[256];
    snprintf(sp, sizeof sp, "%s/status.json", run);
    char *st = must_slurp(sp);
    ck_assert_msg(json_valid(st, why, sizeof why), "status.json while full: %s", why);
    long long updated = json_num(st, "updated");
    free(st);
    /* room again: status.json is fresh, and games come again */
    long long saved = status_num(run, "games");
    ck_assert_int_eq(unlink(filler), 0);
    end = now_s() + 30 * slow();
    while (now_s() < end && status_num(run, "updated") <= updated + 1)
        usleep(100000);
    ck_assert_int_gt(status_num(run, "updated"), updated + 1);
    ck_assert(wait_status(run, "games", saved + 4, 60));
    ck_assert(file_contains(errp, "status.json written again"));
    stop_train(pid);
    st = must_slurp(sp);
    ck_assert_msg(json_valid(st, why, sizeof why), "status.json: %s", why);
    ck_assert_msg(strstr(st, "\"games_dir_writable\": true") && strstr(st, "\"games_dropped\": 0"),
                  "%s", st);
    free(st);
    size_t stored, spooled,
        sent = check_sent_stored("test_status_json_on_full_disk", run, glog, &stored, &spooled);
    ck_assert_uint_eq(sent, stored);
    rm_tmpfs_run(run, run);
}
END_TEST

/* Ten SIGKILLs of the trainer with local workers at work: the games in
 * their pipes come to the next trainer from the workers' spools, and every
 * game sent is stored exactly once. */
START_TEST(test_killed_trainer_loses_no_game)
{
    char run[64], glog[128];
    make_run(run, sizeof run, glog, sizeof glog);
    for (int k = 0; k <= 10; k++) {
        pid_t pid = start_train(run, "--games-log %s", glog);
        long long before = status_num(run, "games");
        double end = now_s() + 60 * slow();
        while (now_s() < end && !(status_num(run, "pid") == pid &&
                                  status_num(run, "games") >= before + 6))
            usleep(20000);
        ck_assert_msg(status_num(run, "pid") == pid, "trainer %d never wrote its status", k);
        if (k == 10) {   /* the last one stops cleanly */
            stop_train(pid);
            break;
        }
        long pids[2];
        int np = worker_pids(run, pids, 2);
        ck_assert_int_eq(kill(pid, SIGKILL), 0);
        ck_assert_int_eq(wait_exit(pid, 10), 128 + SIGKILL);
        end = now_s() + 10;
        for (int i = 0; i < np; i++)
            while (process_alive(pids[i]) && now_s() < end)
                usleep(10000);
    }
    size_t stored, spooled,
        sent = check_sent_stored("test_killed_trainer_loses_no_game", run, glog, &stored,
                                 &spooled);
    /* what the trainers took from the spools (what the pipes held at each kill) */
    long taken = 0, dups = 0;
    char *log = run_slurp(run, "/train.log");
    for (const char *q = log; q && (q = strstr(q, "worker spool ")); q++) {
        long a, b;
        const char *c = strstr(q, ": ");
        if (c && sscanf(c, ": %ld games stored, %ld already stored", &a, &b) == 2) {
            taken += a;
            dups += b;
        }
    }
    free(log);
    fprintf(stderr, "test_killed_trainer_loses_no_game: 10 SIGKILLs; %ld games came from the "
            "spools (%ld more were there and stored already)\n", taken, dups);
    ck_assert_uint_eq(spooled, 0);
    /* every game sent is stored (check_sent_stored); a worker killed between
     * keeping a game and logging it as sent adds a stored game not logged */
    ck_assert_uint_ge(stored, sent);
    ck_assert_uint_le(stored, sent + 2 * 10);
    ck_assert(run_has(run, "/train.log", "worker spool"));
    rm_run(run);
}
END_TEST

/* A CRC-valid resigned game won by the side that resigned is refused with
 * its reason from a worker's pipe and from a saved file. */
START_TEST(test_forged_result_refused)
{
    char run[64];
    make_tmpdir(run, sizeof run);
    ck_assert_int_eq(train_until(run, 60, "--steps 5 --workers 1 --worker-fault forge"), 0);
    long long games = status_num(run, "games");
    ck_assert_int_gt(games, 0);
    ck_assert_int_ge(status_num(run, "rejected_frames"), games);
    ck_assert_msg(run_has(run, "/train.log", "resigned game records"), "no reason in train.log");
    long good, bad;
    count_frames(run, &good, &bad);
    ck_assert_int_eq(bad, 0);
    ck_assert_int_eq(good, games);
    /* a forged frame in a saved shard: dropped on load, with the reason */
    uint8_t *buf = NULL;
    size_t cap = 0, n = forged_frame(&buf, &cap, 1);
    char p[256];
    snprintf(p, sizeof p, "%s/games/shard-000000.gzr", run);
    write_file(p, buf, n, "ab");
    free(buf);
    pid_t pid = start_train(run, "--steps +1 --workers 1");
    ck_assert_int_eq(wait_exit(pid, 60), 0);
    ck_assert_int_eq(status_num(run, "bad_frames_on_load"), 1);
    ck_assert_msg(run_has(run, ".err", "dropped a bad frame: resigned game records white as the "
                                       "winner, but white was to move"), "no reason on load");
    rm_rf(run);
}
END_TEST

START_TEST(test_stalled_worker_restarted)
{
    pid_t pid = start_train(run, "--worker-fault stall --stall-s 1 --workers 1 "
                                 "--stop-timeout 1");
    ck_assert(wait_status(run, "pid", 1, 30));
    ck_assert_msg(wait_worker_num(run, 0, "stalls", 1, 30), "worker 0: no stall");
    ck_assert_msg(wait_worker_num(run, 0, "restarts", 1, 30), "worker 0: no restart");
    ck_assert(run_has(run, "/train.log", "stalled: no game and no heartbeat"));
    stop_child(pid, 40);
}
END_TEST

/* The trainer and its workers stopped together (SIGSTOP, as one pauses a
 * background run to measure) for longer than --stall-s (10 s, far above any
 * real silence of the tiny test run): once resumed, no
 * worker is taken for stalled and none restarts. */
START_TEST(test_paused_run_not_stalled)
{
    pid_t pid = start_train(run, "--stall-s 10 --workers 1 --stop-timeout 1");
    ck_assert(wait_status(run, "games", 1, 60));
    long pids[1];
    ck_assert_int_eq(worker_pids(run, pids, 1), 1);
    ck_assert_int_eq(kill((pid_t)pids[0], SIGSTOP), 0);
    ck_assert_int_eq(kill(pid, SIGSTOP), 0);
    sleep(12);
    ck_assert_int_eq(kill(pid, SIGCONT), 0);
    ck_assert_int_eq(kill((pid_t)pids[0], SIGCONT), 0);
    long long games = status_num(run, "games");
    ck_assert_msg(wait_status(run, "games", games + 1, 60), "no game after the pause");
    ck_assert_int_eq(worker_num(run, 0, "stalls"), 0);
    ck_assert_int_eq(worker_num(run, 0, "restarts"), 0);
    ck_assert(!run_has(run, "/train.log", "stalled"));
    stop_child(pid, 40);
}
END_TEST

START_TEST(test_bad_arguments)
{
    expect_gomoku(2, "missing RUN_DIR", "train");
    expect_gomoku(2, "--steps wants S or +N", "train /tmp/x --steps +0");
    expect_gomoku(2, "bad value for rule: 'go'", "train /tmp/x --rule go");
    expect_gomoku(2, "bad value for value_mix: 'nan'", "train /tmp/x --value-mix nan");
    expect_gomoku(2, "bad value for value_mix: '1.5' (out of range 0..1)",
                  "train /tmp/x --value-mix 1.5");
    expect_gomoku(0, "usage: gomoku train", "train --help");
    expect_gomoku(2, "are required", "worker --records-fd 1");
    /* a directory with other things in it is not taken for a run */
    char dir[64], p[128];
    make_tmppath(dir, sizeof dir, p, sizeof p, "notes.txt");
    FILE *f = fopen(p, "w");
    fputs("mine\n", f);
    fclose(f);
    expect_gomoku(1, "not a run directory", "train %s --device cpu", dir);
    rm_rf(dir);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("train");
    ADD_CASE(s, "unit", 30, test_wire_stream, test_wire_lines, test_replay_window_and_samples,
             test_replay_policy_outputs, test_replay_value_mix,
             test_config_roundtrip, test_nonfinite_model_refused, test_exact_resume);
    ADD_CASE(s, "process", asan() ? 240 : 120, test_bad_arguments, test_init_model,
             test_bad_run_paths, test_disk_full_holds_games, test_real_disk_full_tmpfs,
             test_status_json_on_full_disk, test_killed_trainer_loses_no_game,
             test_forged_result_refused);
    TCase *tc = ADD_CASE(s, "run", asan() ? 240 : 120, test_train_steps_and_checkpoint,
                         test_worker_killed_is_restarted, test_sigterm_then_resume,
                         test_garbage_frames_rejected, test_second_trainer_refused,
                         test_killed_trainer_leaves_no_workers_and_resumes,
                         test_resume_with_only_invalid_games, test_nonfinite_loss_stops_run,
                         test_nonfinite_step_rolled_back, test_checkpoint_retention,
                         test_stalled_worker_restarted, test_paused_run_not_stalled);
    tcase_add_checked_fixture(tc, run_setup, run_teardown);
    return run_suite(s);
}
