/* The Redis broker: URL parsing and redaction, the outage spool and the
 * game-id set in-process; then against a real redis-server started on a
 * free 127.0.0.1 port in a temporary directory: passwords, the stream's
 * at-least-once delivery (pending re-read, ack, trim), model publishing
 * with its CRC, a worker of an old run, and a whole cluster (trainer + 2
 * remote workers) through a killed worker, a broker restart and a killed
 * trainer, after which every game a worker sent is stored exactly once.
 * Every process a test starts dies with it (PR_SET_PDEATHSIG); main()
 * removes the temporary directory. Skips (77) without redis-server or
 * without broker support in the build. */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <hiredis/hiredis.h>

#include "engine/record.h"
#include "nn/nn.h"
#include "selfplay/broker.h"
#include "selfplay/spool.h"
#include "tests/testkit.h"
#include "tests/testkit_nn.h"

static char g_tmp[256];

static void subdir(char *out, size_t len, const char *name)
{
    snprintf(out, len, "%s/%s", g_tmp, name);
    mkdir(out, 0755);
}

/* ---- a real redis-server ---------------------------------------------- */

typedef struct redis {
    pid_t pid;
    int port;
    char dir[512], log[600], url[128], pass[32];
} redis_t;

static int free_port(void)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    ck_assert_int_ge(s, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = 0,
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    ck_assert_int_eq(bind(s, (struct sockaddr *)&a, sizeof a), 0);
    socklen_t l = sizeof a;
    ck_assert_int_eq(getsockname(s, (struct sockaddr *)&a, &l), 0);
    close(s);
    return ntohs(a.sin_port);
}

/* Start (or restart, same port and directory) and wait until it answers. */
static void redis_start(redis_t *r)
{
    char port[16];
    snprintf(port, sizeof port, "%d", r->port);
    char *argv[] = {"redis-server", "--port", port, "--bind", "127.0.0.1", "--dir", r->dir,
                    "--appendonly", "yes", "--appendfsync", "always", "--save", "",
                    r->pass[0] ? "--requirepass" : NULL, r->pass, NULL};
    r->pid = spawn_logged(argv, r->log);
    broker_url_t u;
    char err[512];
    ck_assert_int_eq(broker_url_parse(r->url, &u, err, sizeof err), 0);
    double end = now_s() + 10;
    for (;;) {
        broker_t *b = broker_create(&u, "probe", err, sizeof err);
        int up = b && broker_connected(b);
        broker_free(b);
        if (up)
            return;
        ck_assert_msg(now_s() < end, "redis-server did not start: %s", err);
        usleep(50000);
    }
}

static void redis_init(redis_t *r, const char *name, const char *pass)
{
    memset(r, 0, sizeof *r);
    subdir(r->dir, sizeof r->dir, name);
    snprintf(r->log, sizeof r->log, "%s/redis.log", r->dir);
    r->port = free_port();
    snprintf(r->pass, sizeof r->pass, "%s", pass ? pass : "");
    snprintf(r->url, sizeof r->url, "redis://%s%s%s127.0.0.1:%d/0", pass ? ":" : "",
             pass ? pass : "", pass ? "@" : "", r->port);
    redis_start(r);
}

static void redis_stop(redis_t *r)
{
    if (r->pid > 0) {
        kill(r->pid, SIGTERM);
        ck_assert_int_eq(wait_exit(r->pid, 10), 0);
        r->pid = 0;
    }
}

static broker_t *connect_run(const redis_t *r, const char *run)
{
    broker_url_t u;
    char err[512];
    ck_assert_int_eq(broker_url_parse(r->url, &u, err, sizeof err), 0);
    broker_t *b = broker_create(&u, run, err, sizeof err);
    ck_assert_msg(b && broker_connected(b), "%s", err);
    return b;
}

/* The settings of b's run, once its trainer has published a model (fails
 * the test after SECONDS, times slow(), without one). */
static broker_settings_t wait_run_settings(broker_t *b, double seconds)
{
    char err[512];
    uint64_t gen;
    double end = now_s() + seconds * slow();
    while (broker_model_gen(b, &gen, err, sizeof err) != 0)
        ck_assert_msg(now_s() < end, "trainer published no model"), usleep(50000);
    broker_settings_t s;
    ck_assert_int_eq(broker_fetch_settings(b, &s, err, sizeof err), 0);
    return s;
}

/* A fresh redis-server without a password in directory NAME, and a
 * connection for run RUN on it. */
static broker_t *redis_run(redis_t *r, const char *name, const char *run)
{
    redis_init(r, name, NULL);
    return connect_run(r, run);
}

/* testkit's game_in_a_row with a game id (worker id, sequence). */
static void game_with_id(game_record_t *r, int size, uint64_t wid, uint64_t seq)
{
    game_in_a_row(r, size);
    r->worker_id = wid;
    r->game_seq = seq;
}

/* ---- in-process ------------------------------------------------------- */

START_TEST(test_url_parse_and_redaction)
{
    broker_url_t u;
    char err[512], shown[512];
    ck_assert_int_eq(broker_url_parse("redis://h.example:7000/3", &u, err, sizeof err), 0);
    ck_assert_str_eq(u.host, "h.example");
    ck_assert_int_eq(u.port, 7000);
    ck_assert_int_eq(u.db, 3);
    ck_assert_str_eq(u.password, "");
    ck_assert_int_eq(broker_url_parse("redis://:s3cr#t@10.0.0.2", &u, err, sizeof err), 0);
    ck_assert_str_eq(u.password, "s3cr#t");
    ck_assert_int_eq(u.port, 6379);
    ck_assert_int_eq(u.db, 0);
    broker_url_show(&u, shown, sizeof shown);
    ck_assert_str_eq(shown, "redis://:***@10.0.0.2:6379/0");
    const char *bad[] = {"http://h:1", "redis://", "redis://h:0", "redis://h:70000",
                         "redis://h:12x", "redis://h/db", "redis://user:pw@h:1",
                         "redis://:@h:1", "redis://h h:1", "redis://:pw@:1", "redis://h:1/2/3"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = '\0';
        ck_assert_msg(broker_url_parse(bad[i], &u, err, sizeof err) != 0, "%s accepted", bad[i]);
        ck_assert_msg(err[0] && strstr(err, "pw") == NULL, "%s: '%s'", bad[i], err);
    }
    ck_assert(broker_run_name_ok("run-1.b_2"));
    ck_assert(!broker_run_name_ok(""));
    ck_assert(!broker_run_name_ok("a:b"));
    ck_assert(!broker_run_name_ok("a b"));
}
END_TEST

START_TEST(test_spool_bounded_ordered_locked)
{
    char dir[512], err[512];
    subdir(dir, sizeof dir, "spool");
    spool_t *s = spool_open(dir, 3, 1, err, sizeof err);
    ck_assert_msg(s != NULL, "%s", err);
    for (int i = 0; i < 3; i++) {
        uint8_t b[8] = {(uint8_t)i, 1, 2, 3, 4, 5, 6, 7};
        ck_assert_int_eq(spool_put(s, b, sizeof b, NULL, err, sizeof err), 0);
    }
    uint8_t b[4] = {9, 9, 9, 9};
    ck_assert_int_eq(spool_put(s, b, sizeof b, NULL, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "full"), "%s", err);
    ck_assert_ptr_null(spool_open(dir, 3, 1, err, sizeof err));
    ck_assert_msg(strstr(err, "in use"), "%s", err);
    spool_free(s);
    /* a new worker on the same directory finds them, oldest first */
    s = spool_open(dir, 3, 1, err, sizeof err);
    ck_assert_ptr_nonnull(s);
    ck_assert_int_eq(spool_count(s), 3);
    uint8_t *buf = NULL;
    size_t cap = 0, len = 0;
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(spool_peek(s, &buf, &cap, &len, err, sizeof err), 1);
        ck_assert_uint_eq(len, 8);
        ck_assert_int_eq(buf[0], i);
        spool_pop(s);
    }
    ck_assert_int_eq(spool_peek(s, &buf, &cap, &len, err, sizeof err), 0);
    ck_assert_int_eq(spool_put(s, b, sizeof b, NULL, err, sizeof err), 0);
    ck_assert_int_eq(spool_count(s), 1);
    free(buf);
    spool_free(s);
}
END_TEST

START_TEST(test_game_id_set)
{
    broker_ids_t *s = broker_ids_create();
    ck_assert_ptr_nonnull(s);
    for (uint64_t i = 0; i < 20000; i++)
        ck_assert_int_eq(broker_ids_add(s, 1 + i % 7, i / 7), 1);
    for (uint64_t i = 0; i < 20000; i += 13)
        ck_assert_int_eq(broker_ids_add(s, 1 + i % 7, i / 7), 0);
    ck_assert_int_eq(broker_ids_add(s, 0, 5), 1);
    ck_assert_int_eq(broker_ids_add(s, 0, 5), 1); /* no id: never a duplicate */
    ck_assert_uint_eq(broker_ids_count(s), 20000);
    broker_ids_free(s);
    broker_ids_free(NULL);
}
END_TEST

/* Run the program; exit status, with its output in *out (caller frees). */
static int run_cmd(char **argv, char **out)
{
    char log[600];
    snprintf(log, sizeof log, "%s/cmd.log", g_tmp);
    unlink(log);
    int rc = wait_exit(spawn_logged(argv, log), 20);
    *out = slurp(log);
    if (!*out)
        *out = strdup("");
    return rc;
}

START_TEST(test_bad_arguments)
{
    char *out;
    char *a1[] = {(char *)bin(), "worker", "--broker", "http://h:1", "--run", "r", NULL};
    ck_assert_int_eq(run_cmd(a1, &out), 2);
    ck_assert_msg(strstr(out, "redis://"), "%s", out);
    free(out);
    char *a2[] = {(char *)bin(), "worker", "--broker", "redis://:pw9@h:1", NULL};
    ck_assert_int_eq(run_cmd(a2, &out), 2);
    ck_assert_msg(strstr(out, "--run") && !strstr(out, "pw9"), "%s", out);
    free(out);
    char *a3[] = {(char *)bin(), "worker", "--broker", "redis://h:1", "--run", "a:b", NULL};
    ck_assert_int_eq(run_cmd(a3, &out), 2);
    ck_assert_msg(strstr(out, "run name"), "%s", out);
    free(out);
    char *a4[] = {(char *)bin(), "worker", "--broker", "@/nonexistent/url", "--run", "r", NULL};
    ck_assert_int_eq(run_cmd(a4, &out), 2);
    ck_assert_msg(strstr(out, "/nonexistent/url"), "%s", out);
    free(out);
    char run[512];
    snprintf(run, sizeof run, "%s/badargs", g_tmp);
    char *a5[] = {(char *)bin(), "train", run, "--workers", "0", NULL};
    ck_assert_int_eq(run_cmd(a5, &out), 2);
    ck_assert_msg(strstr(out, "--workers 0 needs --broker"), "%s", out);
    free(out);
    char *a6[] = {(char *)bin(), "train", run, "--run-name", "x", NULL};
    ck_assert_int_eq(run_cmd(a6, &out), 2);
    ck_assert_msg(strstr(out, "--run-name needs --broker"), "%s", out);
    free(out);
    char *a7[] = {(char *)bin(), "train", run, "--broker", "redis://:pw9@h:99999", NULL};
    ck_assert_int_eq(run_cmd(a7, &out), 2);
    ck_assert_msg(strstr(out, "port") && !strstr(out, "pw9"), "%s", out);
    free(out);
    /* a spool path is one line (logs, messages): a newline in it is refused */
    char *a8[] = {(char *)bin(), "worker", "--broker", "redis://h:1", "--run", "r", "--spool",
                  "/tmp/sp\nool", NULL};
    ck_assert_int_eq(run_cmd(a8, &out), 2);
    ck_assert_msg(strstr(out, "--spool: the directory path holds control byte 0x0a at offset 7"),
                  "%s", out);
    ck_assert_msg(access("/tmp/sp\nool", F_OK) != 0, "the spool was created");
    free(out);
}
END_TEST

/* ---- against redis-server --------------------------------------------- */

START_TEST(test_password_refused_clearly)
{
    redis_t r;
    redis_init(&r, "auth", "Tr1ckyPass");
    broker_url_t u;
    char err[512];
    ck_assert_int_eq(broker_url_parse(r.url, &u, err, sizeof err), 0);
    broker_t *b = broker_create(&u, "run", err, sizeof err);
    ck_assert(b && broker_connected(b));
    broker_free(b);
    snprintf(u.password, sizeof u.password, "WrongPass9");
    ck_assert_ptr_null(broker_create(&u, "run", err, sizeof err));
    ck_assert_msg(strstr(err, "refused the password") && !strstr(err, "WrongPass9"), "%s", err);
    u.password[0] = '\0';
    ck_assert_ptr_null(broker_create(&u, "run", err, sizeof err));
    ck_assert_msg(strstr(err, "requires a password"), "%s", err);
    snprintf(u.password, sizeof u.password, "Tr1ckyPass");
    u.db = 999;
    ck_assert_ptr_null(broker_create(&u, "run", err, sizeof err));
    ck_assert_msg(strstr(err, "refused database 999"), "%s", err);
    /* the program says the same and never prints the password */
    char url[128], log[600];
    snprintf(url, sizeof url, "redis://:WrongPass9@127.0.0.1:%d", r.port);
    snprintf(log, sizeof log, "%s/worker.log", r.dir);
    char spool[600];
    snprintf(spool, sizeof spool, "%s/spool", r.dir);
    /* the URL from a file, so the password is not in the process list */
    char urlfile[600], at[610];
    snprintf(urlfile, sizeof urlfile, "%s/url", r.dir);
    FILE *uf = fopen(urlfile, "w");
    fprintf(uf, "%s\n", url);
    fclose(uf);
    snprintf(at, sizeof at, "@%s", urlfile);
    char *argv[] = {(char *)bin(), "worker", "--broker", at, "--run", "run", "--spool", spool,
                    NULL};
    ck_assert_int_eq(wait_exit(spawn_logged(argv, log), 20), 1);
    ck_assert(file_contains(log, "refused the password"));
    ck_assert(!file_contains(log, "WrongPass9"));
    /* a trainer with a wrong password fails before it creates the run */
    char run[600], tlog[600];
    snprintf(run, sizeof run, "%s/newrun", r.dir);
    snprintf(tlog, sizeof tlog, "%s/train.log", r.dir);
    char *targv[] = {(char *)bin(), "train", run, "--workers", "0", "--broker", at, "--size", "7",
                     "--device", "cpu", NULL};
    ck_assert_int_eq(wait_exit(spawn_logged(targv, tlog), 20), 1);
    ck_assert_msg(file_contains(tlog, "refused the password"), "no refusal in the trainer's log");
    ck_assert(!file_contains(tlog, "WrongPass9"));
    ck_assert_msg(access(run, F_OK) != 0, "the run %s was created before the broker refused", run);
    redis_stop(&r);
}
END_TEST

START_TEST(test_stream_pending_ack_trim)
{
    redis_t r;
    broker_t *b = redis_run(&r, "stream", "s1");
    char err[512];
    ck_assert_int_eq(broker_group_create(b, err, sizeof err), 0);
    ck_assert_int_eq(broker_group_create(b, err, sizeof err), 0); /* exists: fine */
    game_record_t g;
    record_init(&g);
    uint8_t *f = NULL;
    size_t cap = 0;
    for (int i = 0; i < 5; i++) {
        game_with_id(&g, 9, 77, (uint64_t)i);
        size_t n = record_encode(&g, &f, &cap, err, sizeof err);
        ck_assert_uint_gt(n, 0);
        ck_assert_int_eq(broker_add_game(b, 0xabc, 77, f, n, err, sizeof err), 0);
    }
    ck_assert_int_eq(broker_stream_len(b, err, sizeof err), 5);
    broker_batch_t bt;
    broker_batch_init(&bt);
    ck_assert_int_eq(broker_read(b, "trainer", 0, 3, 0, &bt, err, sizeof err), 0);
    ck_assert_int_eq(bt.n, 3);
    char first[48];
    snprintf(first, sizeof first, "%s", bt.e[0].id);
    ck_assert_uint_eq(bt.e[0].run_id, 0xabc);
    ck_assert_uint_eq(bt.e[0].worker_id, 77);
    size_t used;
    ck_assert_int_eq(record_decode(bt.e[2].frame, bt.e[2].len, &used, &g, err, sizeof err),
                     FRAME_OK);
    ck_assert_uint_eq(g.game_seq, 2);
    /* "crash": a new connection re-reads the 3 unacknowledged entries first */
    broker_free(b);
    b = connect_run(&r, "s1");
    ck_assert_int_eq(broker_pending(b, err, sizeof err), 3);
    ck_assert_int_eq(broker_read(b, "trainer", 1, 100, 0, &bt, err, sizeof err), 0);
    ck_assert_int_eq(bt.n, 3);
    ck_assert_str_eq(bt.e[0].id, first);
    ck_assert_int_eq(broker_ack(b, &bt, err, sizeof err), 0);
    ck_assert_int_eq(broker_pending(b, err, sizeof err), 0);
    /* trimmed up to what was acknowledged, the 2 unread entries kept */
    ck_assert_int_eq(broker_stream_len(b, err, sizeof err), 2);
    ck_assert_int_eq(broker_read(b, "trainer", 1, 100, 0, &bt, err, sizeof err), 0);
    ck_assert_int_eq(bt.n, 0);
    ck_assert_int_eq(broker_read(b, "trainer", 0, 100, 50, &bt, err, sizeof err), 0);
    ck_assert_int_eq(bt.n, 2);
    ck_assert_int_eq(broker_ack(b, &bt, err, sizeof err), 0);
    ck_assert_int_eq(broker_stream_len(b, err, sizeof err), 0);
    /* a broker restart (appendonly) keeps the group and its position */
    game_with_id(&g, 9, 77, 9);
    size_t n = record_encode(&g, &f, &cap, err, sizeof err);
    ck_assert_int_eq(broker_add_game(b, 0xabc, 77, f, n, err, sizeof err), 0);
    redis_stop(&r);
    ck_assert_int_eq(broker_read(b, "trainer", 0, 100, 0, &bt, err, sizeof err), -1);
    ck_assert(!broker_connected(b));
    redis_start(&r);
    int fresh = 0;
    double end = now_s() + 40;
    while (broker_ensure(b, &fresh, err, sizeof err) != 1)
        ck_assert(now_s() < end), usleep(100000);
    ck_assert(fresh);
    ck_assert_int_eq(broker_read(b, "trainer", 0, 100, 0, &bt, err, sizeof err), 0);
    ck_assert_int_eq(bt.n, 1);
    broker_batch_free(&bt);
    free(f);
    record_free(&g);
    broker_free(b);
    redis_stop(&r);
}
END_TEST

static void tiny_model(const char *path, uint64_t gen)
{
    nn_model_t *m = small_model(1, 8, 7, 7);
    m->generation = gen;
    save_model(m, path);
    nn_model_free(m);
}

/* Settings: every setting of the run's table travels (version 2); a
 * version 1 hash an older trainer wrote still reads; a newer version, a bad
 * config line or a missing field is refused with a message naming it. */
START_TEST(test_settings_versions)
{
    redis_t r;
    broker_t *b = redis_run(&r, "settings", "st");
    char err[512];
    broker_settings_t s = {.run_id = 0x5eed, .stream_max = 777};
    run_config_default(&s.cfg);
    s.cfg.size = 11;
    s.cfg.lr = 0.003;
    s.cfg.dirichlet_alpha = 0.11;
    ck_assert_int_eq(broker_publish_settings(b, &s, err, sizeof err), 0);
    broker_settings_t g;
    ck_assert_int_eq(broker_fetch_settings(b, &g, err, sizeof err), 0);
    ck_assert_uint_eq(g.run_id, 0x5eed);
    ck_assert_uint_eq(g.stream_max, 777);
    ck_assert_int_eq(g.cfg.size, 11);
    ck_assert_double_eq(g.cfg.lr, 0.003);
    ck_assert_double_eq(g.cfg.dirichlet_alpha, 0.11);

    redisContext *rc = redisConnect("127.0.0.1", r.port);
    ck_assert(rc && !rc->err);
    redisReply *rep = redisCommand(rc, "DEL gz:st:settings");
    freeReplyObject(rep);
    rep = redisCommand(rc, "HSET gz:st:settings version 1 run_id 00000000000000aa rule renju "
                           "size 13 parallel 5 visits 40 cheap_visits 10 full_frac 0.5 "
                           "resign 0.8 seed_streammax 9:1234 alpha 0.07");
    freeReplyObject(rep);
    ck_assert_int_eq(broker_fetch_settings(b, &g, err, sizeof err), 0);
    ck_assert_uint_eq(g.run_id, 0xaa);
    ck_assert_uint_eq(g.stream_max, 1234);
    ck_assert_int_eq(g.cfg.rule, RULE_RENJU);
    ck_assert_int_eq(g.cfg.size, 13);
    ck_assert_int_eq(g.cfg.parallel, 5);
    ck_assert_int_eq(g.cfg.visits, 40);
    ck_assert_int_eq(g.cfg.cheap_visits, 10);
    ck_assert_uint_eq(g.cfg.seed, 9);
    ck_assert_double_eq(g.cfg.dirichlet_alpha, 0.07);

    static const struct { const char *cmd, *want; } bad[] = {
        {"HSET gz:st:settings size 99", "size"},
        {"HSET gz:st:settings size 13 version 3", "version 3"},
        {"HSET gz:st:settings version 2 stream_max 5 config version=2\nvisits=-4\n",
         "visits"},
        {"HSET gz:st:settings config version=2\nnosuch=1\n", "unknown key 'nosuch'"},
        {"HDEL gz:st:settings config", "no config"},
        {"HSET gz:st:settings config version=2 stream_max 0", "stream_max"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        rep = redisCommand(rc, bad[i].cmd);
        ck_assert_ptr_nonnull(rep);
        freeReplyObject(rep);
        ck_assert_int_eq(broker_fetch_settings(b, &g, err, sizeof err), -1);
        ck_assert_msg(strstr(err, bad[i].want) && strstr(err, "run settings on the broker"),
                      "case %zu: %s", i, err);
        ck_assert(!strchr(err, '\n'));
    }
    redisFree(rc);
    broker_free(b);
    redis_stop(&r);
}
END_TEST

/* A worker verifies each model's CRC (keeps the last good one and says so)
 * and stops when its run is replaced by a new run under the same name. */
START_TEST(test_worker_bad_model_and_old_run)
{
    redis_t r;
    broker_t *b = redis_run(&r, "oldrun", "r2");
    char err[512], mp[600], log[600], spool[600];
    snprintf(mp, sizeof mp, "%s/m0.gzm", r.dir);
    snprintf(log, sizeof log, "%s/worker.log", r.dir);
    snprintf(spool, sizeof spool, "%s/spool", r.dir);
    tiny_model(mp, 0);
    broker_settings_t s = {.run_id = 0x1111, .stream_max = 100000};
    run_config_default(&s.cfg);
    s.cfg.size = 7;
    s.cfg.parallel = 2;
    s.cfg.visits = 4;
    s.cfg.cheap_visits = 2;
    s.cfg.full_frac = 0.5;
    s.cfg.resign = 0;
    ck_assert_int_eq(broker_publish_settings(b, &s, err, sizeof err), 0);
    ck_assert_int_eq(broker_publish_model(b, 0, mp, err, sizeof err), 0);
    broker_model_t m;
    ck_assert_int_eq(broker_fetch_model(b, &m, err, sizeof err), 0);
    ck_assert_uint_eq(m.gen, 0);
    ck_assert_str_eq(m.path, mp);
    free(m.data);
    char *argv[] = {(char *)bin(), "worker", "--broker", r.url, "--run", "r2", "--spool", spool,
                    "--device", "cpu", NULL};
    pid_t w = spawn_logged(argv, log);
    double end = now_s() + 30 * slow();
    while (broker_stream_len(b, err, sizeof err) < 3)
        ck_assert_msg(now_s() < end, "no games from the worker"), usleep(50000);
    /* generation 1 arrives with a CRC its bytes do not match (a broken transfer) */
    tiny_model(mp, 1);
    ck_assert_int_eq(broker_publish_model(b, 1, mp, err, sizeof err), 0);
    redisContext *rc = redisConnect("127.0.0.1", r.port);
    ck_assert(rc && !rc->err);
    redisReply *rep = redisCommand(rc, "HSET gz:r2:model crc 0badc0de");
    ck_assert_ptr_nonnull(rep);
    freeReplyObject(rep);
    redisFree(rc);
    ck_assert_int_eq(broker_fetch_model(b, &m, err, sizeof err), -1);
    ck_assert_msg(strstr(err, "fails its CRC"), "%s", err);
    free(m.data);
    end = now_s() + 20 * slow();
    while (!file_contains(log, "switched to model generation 1") &&
           !file_contains(log, "keeping generation 0"))
        ck_assert_msg(now_s() < end, "worker did not look at generation 1"), usleep(50000);
    ck_assert_msg(file_contains(log, "fails its CRC"), "worker log has no refusal");
    ck_assert(!file_contains(log, "switched to model generation 1"));
    /* the same name now holds a new run: the old run's worker stops */
    s.run_id = 0x2222;
    ck_assert_int_eq(broker_publish_settings(b, &s, err, sizeof err), 0);
    ck_assert_int_eq(wait_exit(w, 20), 1);
    ck_assert(file_contains(log, "another run"));
    broker_free(b);
    redis_stop(&r);
}
END_TEST

/* XADD argv through ctx; fails the test on an error reply. */
static void xadd(redisContext *ctx, int argc, const char **argv, const size_t *lens)
{
    redisReply *rep = redisCommandArgv(ctx, argc, argv, lens);
    ck_assert_msg(rep && rep->type != REDIS_REPLY_ERROR, "XADD: %s",
                  rep ? rep->str : ctx->errstr);
    freeReplyObject(rep);
}

/* The read measures entries on the broker: a 64 MiB junk entry is refused
 * there (acknowledged, deleted) without crossing the wire, and fields that
 * are missing or empty are named. */
START_TEST(test_read_refuses_oversized_unread)
{
    redis_t r;
    redis_init(&r, "oversized", NULL);
    broker_t *b = connect_run(&r, "big");
    char err[512];
    ck_assert_int_eq(broker_group_create(b, err, sizeof err), 0);
    redisContext *ctx = redisConnect("127.0.0.1", r.port);
    ck_assert(ctx && !ctx->err);
    size_t big = (size_t)64 << 20;
    char *junk = malloc(big);
    ck_assert_ptr_nonnull(junk);
    memset(junk, 'j', big);
    const char *a1[] = {"XADD", "gz:big:games", "*", "run", "abc", "w", "0000000000000bbb", "f",
                        junk};
    size_t l1[] = {4, 12, 1, 3, 3, 1, 16, 1, big};
    xadd(ctx, 9, a1, l1);
    free(junk);
    game_record_t g;
    record_init(&g);
    game_with_id(&g, 9, 77, 1);
    uint8_t *f = NULL;
    size_t cap = 0, n = record_encode(&g, &f, &cap, err, sizeof err);
    ck_assert_int_eq(broker_add_game(b, 0xabc, 77, f, n, err, sizeof err), 0);
    const char *a2[] = {"XADD", "gz:big:games", "*", "run", "abc", "w", "4d", "f", ""};
    xadd(ctx, 9, a2, NULL);
    const char *a3[] = {"XADD", "gz:big:games", "*", "run", "abc", "f", "x"};
    xadd(ctx, 7, a3, NULL);
    const char *a4[] = {"XADD", "gz:big:games", "*", "run", "", "w", "4d", "f", "x"};
    xadd(ctx, 9, a4, NULL);
    broker_batch_t bt;
    broker_batch_init(&bt);
    double t0 = now_s();
    ck_assert_int_eq(broker_read(b, "trainer", 0, 64, 0, &bt, err, sizeof err), 0);
    double dt = now_s() - t0;
    fprintf(stderr, "test_read_refuses_oversized_unread: a read with a 64 MiB entry took %.3f s\n",
            dt);
    /* the read stops at the big entry, refused by its size alone */
    ck_assert_int_eq(bt.n, 1);
    ck_assert_int_eq(bt.incomplete, 1);
    ck_assert_uint_ge(bt.e[0].oversized, big);
    ck_assert_ptr_null(bt.e[0].frame);
    ck_assert_uint_eq(bt.e[0].worker_id, 0xbbb);
    ck_assert_msg(strstr(bt.e[0].why, "the limit is") && strstr(bt.e[0].why, "refused unread"),
                  "%s", bt.e[0].why);
    ck_assert(broker_connected(b));
    /* on the broker: the big entry is gone and acknowledged; the four after
     * it were delivered in the same reply and are pending */
    ck_assert_int_eq(broker_stream_len(b, err, sizeof err), 4);
    ck_assert_int_eq(broker_pending(b, err, sizeof err), 4);
    /* the pending re-read sees them, in order, each bad field named */
    ck_assert_int_eq(broker_read(b, "trainer", 1, 64, 0, &bt, err, sizeof err), 0);
    ck_assert_int_eq(bt.n, 4);
    ck_assert_int_eq(bt.incomplete, 0);
    ck_assert_str_eq(bt.e[0].why, "");
    ck_assert_uint_eq(bt.e[0].len, n);
    ck_assert_int_eq(memcmp(bt.e[0].frame, f, n), 0);
    ck_assert_msg(strstr(bt.e[1].why, "field 'f' (frame) is empty"), "'%s'", bt.e[1].why);
    ck_assert_msg(strstr(bt.e[2].why, "field 'w' (worker id) is missing"), "'%s'", bt.e[2].why);
    ck_assert_msg(strstr(bt.e[3].why, "field 'run' is empty"), "'%s'", bt.e[3].why);
    ck_assert_int_eq(broker_ack(b, &bt, err, sizeof err), 0);
    ck_assert_int_eq(broker_stream_len(b, err, sizeof err), 0);
    broker_batch_free(&bt);
    free(f);
    record_free(&g);
    redisFree(ctx);
    broker_free(b);
    redis_stop(&r);
}
END_TEST

/* A trainer fed junk through the broker: 5,000 entries from 5,000 worker
 * ids, one entry over the size limit, an id-less game sent three times, a
 * forged result, an empty frame, and a good game delivered three times.
 * It stores the good game once, refuses the rest with their reasons, and
 * status.json stays valid JSON with a bounded worker table. */
START_TEST(test_trainer_refuses_broker_junk)
{
    redis_t r;
    redis_init(&r, "junk", NULL);
    char run[600], log[600];
    snprintf(run, sizeof run, "%s/junkrun", g_tmp);
    snprintf(log, sizeof log, "%s/junk-trainer.log", g_tmp);
    char *targv[] = {(char *)bin(), "train", run, "--workers", "0", "--broker", r.url,
                     "--run-name", "junk", "--parallel", "2", "--visits", "4", "--blocks", "1",
                     "--channels", "8", "--size", "7", "--device", "cpu", NULL};
    pid_t t = spawn_logged(targv, log);
    broker_t *b = connect_run(&r, "junk");
    char err[512];
    broker_settings_t s = wait_run_settings(b, 30);
    char rid[24];
    snprintf(rid, sizeof rid, "%016" PRIx64, s.run_id);

    redisContext *ctx = redisConnect("127.0.0.1", r.port);
    ck_assert(ctx && !ctx->err);
    enum { NJUNK = 5000 };
    for (int i = 0; i < NJUNK; i++) {
        char wid[24];
        snprintf(wid, sizeof wid, "%016x", 0x100000 + i);
        const char *av[] = {"XADD", "gz:junk:games", "*", "run", rid, "w", wid, "f", "junkjunk"};
        redisAppendCommandArgv(ctx, 9, av, NULL);
    }
    for (int i = 0; i < NJUNK; i++) {
        redisReply *rep;
        ck_assert_int_eq(redisGetReply(ctx, (void **)&rep), REDIS_OK);
        freeReplyObject(rep);
    }
    size_t big = (size_t)5 << 20;
    char *bigf = calloc(1, big);
    const char *ab[] = {"XADD", "gz:junk:games", "*", "run", rid, "w", "0000000000000b16", "f",
                        bigf};
    size_t lb[] = {4, 13, 1, 3, strlen(rid), 1, 16, 1, big};
    xadd(ctx, 9, ab, lb);
    free(bigf);
    game_record_t g;
    record_init(&g);
    uint8_t *f = NULL;
    size_t cap = 0, n;
    game_with_id(&g, 7, 0, 0);   /* no id */
    n = record_encode(&g, &f, &cap, err, sizeof err);
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(broker_add_game(b, s.run_id, 0x1d1e55, f, n, err, sizeof err), 0);
    /* forged: black played 3, white was to move and resigned, "white won" */
    record_clear(&g, RULE_FREESTYLE, 7, 0);
    ck_assert_int_eq(record_add_ply(&g, 24, 1, 0.0f, NULL, 0), 0);
    ck_assert_int_eq(record_add_ply(&g, 25, 1, 0.0f, NULL, 0), 0);
    ck_assert_int_eq(record_add_ply(&g, 17, 1, 0.0f, NULL, 0), 0);
    g.flags = RECORD_FLAG_RESIGNED;
    g.result = RESULT_WHITE;
    g.worker_id = 0xf0f;
    g.game_seq = 1;
    n = record_encode(&g, &f, &cap, err, sizeof err);
    ck_assert_int_eq(broker_add_game(b, s.run_id, 0xf0f, f, n, err, sizeof err), 0);
    const char *ae[] = {"XADD", "gz:junk:games", "*", "run", rid, "w", "0000000000000e00", "f", ""};
    xadd(ctx, 9, ae, NULL);
    game_with_id(&g, 7, 0x600d, 7);
    n = record_encode(&g, &f, &cap, err, sizeof err);
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(broker_add_game(b, s.run_id, 0x600d, f, n, err, sizeof err), 0);
    free(f);
    record_free(&g);
    redisFree(ctx);

    /* every entry taken: the stream drains */
    double end = now_s() + 60 * slow();
    while (broker_stream_len(b, err, sizeof err) > 0 || broker_pending(b, err, sizeof err) > 0)
        ck_assert_msg(now_s() < end, "the trainer did not take the stream"), usleep(100000);
    ck_assert(wait_status(run, "duplicates", 2, 10));
    char sp[700], why[256];
    snprintf(sp, sizeof sp, "%s/status.json", run);
    char *st = must_slurp(sp);
    ck_assert_msg(json_valid(st, why, sizeof why), "status.json: %s", why);
    ck_assert_int_eq(json_num(st, "games"), 1);
    const char *bs = strstr(st, "\"broker\": ");
    ck_assert_ptr_nonnull(bs);
    ck_assert_int_eq(json_num(bs, "games"), 1);
    ck_assert_int_eq(json_num(bs, "duplicates"), 2);
    ck_assert_int_eq(json_num(bs, "oversized"), 1);
    ck_assert_int_eq(json_num(bs, "bad_frames"), NJUNK + 1 + 3 + 1 + 1);
    int listed = 0;
    for (const char *q = st; (q = strstr(q, "\"seen_s_ago\"")); q++)
        listed++;
    ck_assert_int_le(listed, 256);
    const char *ev = strstr(st, "\"remote_workers_evicted\": ");
    ck_assert_ptr_nonnull(ev);
    ck_assert_int_ge(json_num(ev, "workers"), NJUNK + 5 - 256);
    fprintf(stderr, "test_trainer_refuses_broker_junk: status.json %zu bytes, %d workers listed, "
            "%lld summed as evicted\n", strlen(st), listed, json_num(ev, "workers"));
    free(st);
    ck_assert_msg(file_contains(log, "the game has no id"), "no reason for the id-less game");
    ck_assert_msg(file_contains(log, "resigned game records white as the winner"),
                  "no reason for the forged game");
    ck_assert_msg(file_contains(log, "field 'f' (frame) is empty"), "no reason for the empty field");
    ck_assert_msg(file_contains(log, "the limit is 4195328"), "no reason for the big entry");
    kill(t, SIGTERM);
    ck_assert_int_eq(wait_exit(t, 40), 0);
    /* the progress line counts the remote worker a game came from (0x600d),
     * not the ids that sent only junk */
    ck_assert_msg(file_contains(log, "workers 0/0 local, 1 remote"), "no remote count in the "
                  "trainer's progress line");
    broker_free(b);
    redis_stop(&r);
}
END_TEST

/* ---- the cluster ------------------------------------------------------ */

typedef struct cluster {
    redis_t r;
    char run[512], log[600];
    char *targv[48];
} cluster_t;

static pid_t start_trainer(cluster_t *c)
{
    return spawn_logged(c->targv, c->log);
}

static pid_t start_worker(cluster_t *c, int k)
{
    static char spool[2][600], glog[2][600], wlog[2][600];
    snprintf(spool[k], sizeof spool[k], "%s/spool%d", g_tmp, k);
    snprintf(glog[k], sizeof glog[k], "%s/games%d.log", g_tmp, k);
    snprintf(wlog[k], sizeof wlog[k], "%s/worker%d.log", g_tmp, k);
    char *argv[] = {(char *)bin(), "worker", "--broker", c->r.url, "--run", "clu", "--spool",
                    spool[k], "--games-log", glog[k], "--device", "cpu", "--parallel", "3", NULL};
    return spawn_logged(argv, wlog[k]);
}

START_TEST(test_cluster_survives_faults_exactly_once)
{
    cluster_t c;
    memset(&c, 0, sizeof c);
    redis_init(&c.r, "redis", NULL);
    snprintf(c.run, sizeof c.run, "%s/clu", g_tmp);
    snprintf(c.log, sizeof c.log, "%s/trainer.log", g_tmp);
    char *targs[] = {(char *)bin(), "train", c.run, "--workers", "0", "--broker", c.r.url,
                     "--parallel", "3", "--visits", "8", "--cheap-visits", "4", "--blocks", "1",
                     "--channels", "8", "--size", "7", "--batch", "32", "--ratio", "4",
                     "--window", "4000", "--checkpoint-every", "20", "--device", "cpu",
                     "--stop-timeout", "20", NULL};
    memcpy(c.targv, targs, sizeof targs);
    pid_t t = start_trainer(&c);
    ck_assert(wait_status(c.run, "generation", 0, 30));
    broker_t *b = connect_run(&c.r, "clu");
    char err[512];
    broker_settings_t s = wait_run_settings(b, 20);

    /* bad entries: garbage from one worker id, a game of another run */
    /* remote workers get every setting of the run's table, its own root
     * noise (7x7: 0 = 10 / 49) among them */
    ck_assert_int_eq(s.cfg.size, 7);
    ck_assert_int_eq(s.cfg.visits, 8);
    ck_assert_int_eq(s.cfg.cheap_visits, 4);
    ck_assert_int_eq(s.cfg.batch, 32);
    double alpha = run_config_alpha(&s.cfg);
    ck_assert_msg(alpha > 0.2040 && alpha < 0.2041, "alpha %g", alpha);
    uint8_t junk[40];
    memset(junk, 0x5a, sizeof junk);
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(broker_add_game(b, s.run_id, 0xbad, junk, sizeof junk, err, sizeof err), 0);
    game_record_t g;
    record_init(&g);
    game_with_id(&g, 7, 0x01d, 1);
    uint8_t *f = NULL;
    size_t cap = 0, n = record_encode(&g, &f, &cap, err, sizeof err);
    ck_assert_int_eq(broker_add_game(b, s.run_id ^ 1, 0x01d, f, n, err, sizeof err), 0);
    free(f);

    pid_t w0 = start_worker(&c, 0), w1 = start_worker(&c, 1);
    ck_assert(wait_status(c.run, "games", 10, 60));
    char *st = NULL;
    {
        char p[600];
        snprintf(p, sizeof p, "%s/status.json", c.run);
        st = slurp(p);
        ck_assert_ptr_nonnull(strstr(st, "\"id\": \"0000000000000bad\", \"games\": 0, \"bad_frames\": 3"));
        ck_assert_ptr_nonnull(strstr(st, "\"other_run\": 1"));
        ck_assert_ptr_null(strstr(st, "redis://:"));
        free(st);
    }

    /* kill -9 a remote worker; its replacement uses the same spool */
    kill(w0, SIGKILL);
    ck_assert_int_eq(wait_exit(w0, 5), 128 + SIGKILL);
    w0 = start_worker(&c, 0);
    long long games = status_num(c.run, "games");
    ck_assert(wait_status(c.run, "games", games + 10, 60));

    /* restart the broker mid-run (the workers spool, then resend) */
    redis_stop(&c.r);
    usleep(1500000);
    redis_start(&c.r);
    games = status_num(c.run, "games");
    ck_assert(wait_status(c.run, "games", games + 10, 90));

    /* SIGKILL the trainer and resume it */
    kill(t, SIGKILL);
    ck_assert_int_eq(wait_exit(t, 5), 128 + SIGKILL);
    usleep(500000);
    games = status_num(c.run, "games");
    t = start_trainer(&c);
    ck_assert(wait_status(c.run, "games", games + 10, 60));

    /* stop the workers (they send their spools), then the trainer (it drains) */
    kill(w0, SIGTERM);
    kill(w1, SIGTERM);
    int rc0 = wait_exit(w0, 30), rc1 = wait_exit(w1, 30);
    if (rc0 != 0 || rc1 != 0) {
        char p[600];
        snprintf(p, sizeof p, "%s/worker%d.log", g_tmp, rc0 != 0 ? 0 : 1);
        char *wl = slurp(p);
        ck_assert_msg(0, "worker exit %d/%d; its log:\n%s", rc0, rc1, wl ? wl : "(none)");
    }
    stop_child(t, 60);
    broker_free(b);
    b = connect_run(&c.r, "clu");
    ck_assert_int_eq(broker_pending(b, err, sizeof err), 0);
    ck_assert_int_eq(broker_stream_len(b, err, sizeof err), 0);
    broker_free(b);

    /* every game a worker sent is stored exactly once (a torn tail from the
     * SIGKILL is a bad frame, not a game) */
    game_ids_t stored = {0};
    char gdir[600];
    snprintf(gdir, sizeof gdir, "%s/games", c.run);
    game_ids_add_dir(&stored, gdir, ".gzr");
    game_ids_sort(&stored);
    check_ids_once(&stored, false);
    size_t nsent = 0;
    for (int k = 0; k < 2; k++) {
        char p[600];
        snprintf(p, sizeof p, "%s/games%d.log", g_tmp, k);
        nsent += check_sent_in(p, &stored, NULL);
    }
    ck_assert_uint_ge(nsent, 40);
    ck_assert_uint_ge(stored.n, nsent);
    game_ids_free(&stored);
    record_free(&g);
    redis_stop(&c.r);
}
END_TEST

int main(void)
{
    if (!broker_available()) {
        fprintf(stderr, "check_broker: built without hiredis: skipped\n");
        return 77;
    }
    if (system("command -v redis-server >/dev/null 2>&1") != 0) {
        fprintf(stderr, "check_broker: no redis-server on PATH: skipped\n");
        return 77;
    }
    snprintf(g_tmp, sizeof g_tmp, "/tmp/check_broker_XXXXXX");
    if (!mkdtemp(g_tmp)) {
        perror("mkdtemp");
        return 1;
    }
    Suite *s = suite_create("broker");
    ADD_CASE(s, "unit", 30, test_url_parse_and_redaction, test_spool_bounded_ordered_locked,
             test_game_id_set, test_bad_arguments);
    ADD_CASE(s, "redis", asan() ? 600 : 150, test_password_refused_clearly,
             test_stream_pending_ack_trim, test_settings_versions,
             test_worker_bad_model_and_old_run, test_read_refuses_oversized_unread,
             test_trainer_refuses_broker_junk, test_cluster_survives_faults_exactly_once);
    int rc = run_suite(s);
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_tmp);
    if (system(cmd) != 0)
        fprintf(stderr, "check_broker: could not remove %s\n", g_tmp);
    return rc;
}
