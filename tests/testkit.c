/* Helpers shared by the Check suites; see testkit.h. */
#include "tests/testkit.h"

#include <dirent.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util/rng.h"

extern char **environ;

TCase *add_case(Suite *s, const char *name, double timeout_s, const TTest *const *tests)
{
    TCase *tc = tcase_create(name);
    if (timeout_s >= 0)
        tcase_set_timeout(tc, timeout_s);
    for (; *tests; tests++)
        tcase_add_test(tc, *tests);
    suite_add_tcase(s, tc);
    return tc;
}

int run_suite(Suite *s)
{
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}

bool asan(void)
{
    const char *a = getenv("GOMOKU_ASAN");
    return a && *a && strcmp(a, "0") != 0;
}

double slow(void) { return asan() ? 4.0 : 1.0; }

const char *bin(void)
{
    const char *b = getenv("GOMOKU_BIN");
    ck_assert_msg(b && *b, "GOMOKU_BIN is not set (run through meson test)");
    return b;
}

double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int exit_status(int st) { return WIFEXITED(st) ? WEXITSTATUS(st) : -1; }

int run_gomoku(const char *args, const char *input, int what, char *out, size_t outlen)
{
    static const char *redirect[] = {"", "2>/dev/null", "2>&1 >/dev/null", "2>&1"};
    size_t n = strlen(args) + (input ? strlen(input) : 0) + strlen(bin()) + 64;
    char *cmd = malloc(n);
    ck_assert_ptr_nonnull(cmd);
    if (input)
        snprintf(cmd, n, "printf '%s' | '%s' %s %s", input, bin(), redirect[what & 3], args);
    else
        snprintf(cmd, n, "'%s' </dev/null %s %s", bin(), redirect[what & 3], args);
    FILE *p = popen(cmd, "r");
    free(cmd);
    ck_assert_ptr_nonnull(p);
    size_t len = 0, r;
    while (len + 1 < outlen && (r = fread(out + len, 1, outlen - 1 - len, p)) > 0)
        len += r;
    out[len] = '\0';
    return exit_status(pclose(p));   /* pclose waits: a longer output is dropped by the pipe */
}

pid_t spawn_piped(char *const argv[], int what, int *fd)
{
    int p[2];
    ck_assert_int_eq(pipe(p), 0);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    if (what & CAPTURE_OUT)
        posix_spawn_file_actions_adddup2(&fa, p[1], 1);
    if (what & CAPTURE_ERR)
        posix_spawn_file_actions_adddup2(&fa, p[1], 2);
    posix_spawn_file_actions_addclose(&fa, p[0]);
    posix_spawn_file_actions_addclose(&fa, p[1]);
    pid_t pid;
    int rc = posix_spawn(&pid, argv[0], &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(p[1]);
    ck_assert_msg(rc == 0, "posix_spawn %s: %s", argv[0], strerror(rc));
    *fd = p[0];
    return pid;
}

int run_argv(char *const argv[], int what, char *out, size_t outlen, double timeout_s)
{
    int fd;
    pid_t pid = spawn_piped(argv, what, &fd);
    size_t len = 0;
    double deadline = now_s() + timeout_s;
    bool killed = false;
    for (;;) {
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, 1000) > 0) {
            char buf[4096];
            ssize_t r = read(fd, buf, sizeof buf);
            if (r <= 0)
                break;
            size_t room = outlen - 1 - len;   /* read on to the end: no SIGPIPE for it */
            size_t k = (size_t)r < room ? (size_t)r : room;
            memcpy(out + len, buf, k);
            len += k;
        }
        if (now_s() > deadline) {
            kill(pid, killed ? SIGKILL : SIGTERM);
            if (!killed)
                fprintf(stderr, "  %s: killed after %.0f s\n", argv[0], timeout_s);
            killed = true;
            deadline = now_s() + 30;
        }
    }
    out[len] = '\0';
    close(fd);
    int st;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    return exit_status(st);
}

pid_t spawn_logged(char *const argv[], const char *logpath)
{
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        int fd = open(logpath, O_WRONLY | O_CREAT | O_APPEND, 0644);
        dup2(fd, 2);
        dup2(fd, 1);
        execvp(argv[0], argv);
        _exit(127);
    }
    return pid;
}

int wait_exit(pid_t pid, double timeout_s)
{
    double end = now_s() + timeout_s * slow();
    int st;
    while (now_s() < end) {
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid)
            return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        usleep(2000);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &st, 0);
    return -1;
}

/* OUT = $TMPDIR/PROGRAM.XXXXXX (check_train.XXXXXX), for mkdtemp/mkstemp. */
static void tmp_template(char *out, size_t len)
{
    const char *base = getenv("TMPDIR");
    int n = snprintf(out, len, "%s/%s.XXXXXX", base && *base ? base : "/tmp",
                     program_invocation_short_name);
    ck_assert_msg(n > 0 && (size_t)n < len, "temporary path too long: %s", out);
}

void make_tmpdir(char *out, size_t len)
{
    tmp_template(out, len);
    ck_assert_msg(mkdtemp(out) != NULL, "mkdtemp %s failed", out);
}

void make_tmpfile(char *out, size_t len)
{
    tmp_template(out, len);
    int fd = mkstemp(out);
    ck_assert_msg(fd >= 0, "mkstemp %s failed", out);
    close(fd);
}

void remove_tree(const char *path)
{
    char cmd[1200];
    ck_assert_uint_lt((size_t)snprintf(cmd, sizeof cmd, "rm -rf '%s'", path), sizeof cmd);
    ck_assert_int_eq(system(cmd), 0);
}

char *slurp_len(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0, r;
    char *s = malloc(cap);
    ck_assert_ptr_nonnull(s);
    for (;;) {
        if (n + 1024 > cap) {
            s = realloc(s, cap *= 2);
            ck_assert_ptr_nonnull(s);
        }
        if ((r = fread(s + n, 1, cap - n - 1, f)) == 0)
            break;
        n += r;
    }
    s[n] = '\0';
    fclose(f);
    if (len)
        *len = n;
    return s;
}

char *must_slurp(const char *path)
{
    char *s = slurp(path);
    ck_assert_msg(s != NULL, "cannot open %s", path);
    return s;
}

bool file_contains(const char *path, const char *needle)
{
    char *s = slurp(path);
    bool r = s && strstr(s, needle) != NULL;
    free(s);
    return r;
}

void write_file(const char *path, const void *buf, size_t len, const char *mode)
{
    FILE *f = fopen(path, mode);
    ck_assert_msg(f != NULL, "cannot open %s", path);
    ck_assert_uint_eq(fwrite(buf, 1, len, f), len);
    ck_assert_int_eq(fclose(f), 0);
}

void board_from_diagram(board_t *b, rule_t rule, int to_move, const char *diagram)
{
    int size = 1;
    for (const char *s = diagram; *s; s++)
        size += *s == '\n' && s[1] != '\0';
    board_init(b, size, rule);
    int x = 0, y = 0;
    for (const char *s = diagram; *s; s++) {
        if (*s == '\n') {
            ck_assert_msg(x == size, "diagram row %d has %d points, not %d", y, x, size);
            x = 0;
            y++;
            continue;
        }
        ck_assert_msg(x < size, "diagram row %d is longer than %d", y, size);
        int m = y * size + x++;
        if (*s == 'X' || *s == 'O') {
            b->cells[m] = *s == 'X' ? STONE_BLACK : STONE_WHITE;
            b->moves[b->nmoves++] = (int16_t)m;
        }
    }
    b->last = b->nmoves ? b->moves[b->nmoves - 1] : MOVE_NONE;
    b->to_move = (uint8_t)to_move;
    b->hash = board_hash_full(b);
}

void play_black_four(board_t *b, int x, int y)
{
    for (int i = 0; i < 4; i++) {
        ck_assert_int_eq(board_play(b, board_xy(b, x + i, y)), MOVE_OK);
        ck_assert_int_eq(board_play(b, board_xy(b, 0, 2 * i)), MOVE_OK);
    }
}

void random_clustered(board_t *b, int size, rule_t rule, int nstones, uint64_t *rng)
{
    board_init(b, size, rule);
    for (int k = 0; k < nstones && !board_over(b); k++) {
        int x = 1 + (int)(util_rng_next(rng) % (uint64_t)(size - 2));
        int y = 1 + (int)(util_rng_next(rng) % (uint64_t)(size - 2));
        int m = board_xy(b, x, y);
        if (board_check_move(b, m) != MOVE_OK || board_is_winning_move(b, m))
            continue;
        board_play(b, m);
    }
}

void check_defences(const board_t *b, const int *moves, int n, const threat_check_t *t)
{
    bool listed[BOARD_CELLS] = {0};
    for (int i = 0; i < n; i++)
        listed[moves[i]] = true;
    int ngone = 0;
    for (int m = 0; m < board_npoints(b); m++) {
        if (board_check_move(b, m) != MOVE_OK)
            continue;
        board_t after = *b;
        board_play(&after, m);
        bool g = t->vcf ? vcf_solve_reply(t->vcf, &after, t->vcf_lim, NULL) == VCF_NONE
                        : vct_solve_reply(t->vct, &after, t->vct_lim, NULL) == VCT_NONE;
        ck_assert_msg(g == listed[m], "move %d,%d: threat gone %d, listed %d", m % b->size,
                      m / b->size, g, listed[m]);
        ngone += g;
    }
    ck_assert_int_eq(ngone, n);
}

void check_bot_plays(const char *name, bot_kind_t kind, board_t b, int plies, result_t result)
{
    bot_kind_t k;
    char listed[32];
    ck_assert(bot_parse(name, &k) && k == kind);
    ck_assert_str_eq(bot_name(kind), name);
    snprintf(listed, sizeof listed, "bot:%s", name);
    ck_assert_ptr_nonnull(strstr(BOT_LIST, listed));
    uint64_t rng = 3;
    for (int ply = 0; ply < plies && !board_over(&b); ply++)
        ck_assert_int_eq(board_play(&b, bot_move(kind, &b, &rng)), MOVE_OK);
    ck_assert_int_eq(b.result, result);
}

long long json_num(const char *s, const char *key)
{
    if (!s)
        return -1;
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\": ", key);
    const char *p = strstr(s, pat);
    return p ? atoll(p + strlen(pat)) : -1;
}

long long status_num(const char *run, const char *key)
{
    char p[1024];
    snprintf(p, sizeof p, "%s/status.json", run);
    char *s = slurp(p);
    long long v = json_num(s, key);
    free(s);
    return v;
}

bool wait_status(const char *run, const char *key, long long v, double timeout_s)
{
    double end = now_s() + timeout_s * slow();
    while (now_s() < end) {
        if (status_num(run, key) >= v)
            return true;
        usleep(50000);
    }
    return false;
}

void expect_gomoku(int status, const char *needle, const char *fmt, ...)
{
    char args[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    size_t len = 1 << 16;
    char *out = malloc(len);
    ck_assert_ptr_nonnull(out);
    int rc = run_gomoku(args, NULL, CAPTURE_BOTH, out, len);
    ck_assert_msg(rc == status, "gomoku %s: exit %d, not %d:\n%s", args, rc, status, out);
    ck_assert_msg(!needle || strstr(out, needle), "gomoku %s: no '%s' in:\n%s", args, needle,
                  out);
    free(out);
}

void stop_child(pid_t pid, double timeout_s)
{
    ck_assert_int_eq(kill(pid, SIGTERM), 0);
    ck_assert_int_eq(wait_exit(pid, timeout_s), 0);
}

void game_in_a_row(game_record_t *r, int size)
{
    board_t b;
    board_init(&b, size, RULE_FREESTYLE);
    record_clear(r, RULE_FREESTYLE, size, 3);
    for (int i = 0; !board_over(&b); i++) {
        int mv = (i % 2 == 0) ? i / 2 : size + i / 2;
        record_visit_t v[2] = {{(int16_t)mv, 30}, {(int16_t)(2 * size + i), 10}};
        ck_assert_int_eq(record_add_ply(r, mv, i != 1, 0.1f, v, 2), 0);
        ck_assert_int_eq(board_play(&b, mv), MOVE_OK);
    }
    r->result = b.result;
    ck_assert_int_eq(r->result, RESULT_BLACK);
}

static bool has_suffix(const char *name, const char *suffix)
{
    size_t l = strlen(name), sl = strlen(suffix);
    return l > sl && strcmp(name + l - sl, suffix) == 0;
}

long read_records(const char *dir, const char *suffix,
                  void (*fn)(void *user, const game_record_t *r), void *user, long *bad)
{
    DIR *d = opendir(dir);
    ck_assert_msg(d != NULL, "cannot open %s", dir);
    game_record_t r;
    record_init(&r);
    long good = 0, nbad = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (!has_suffix(de->d_name, suffix))
            continue;
        char p[4200], err[256];
        snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
        record_reader_t *fr = record_reader_open(p, err, sizeof err);
        ck_assert_msg(fr != NULL, "%s", err);
        int rc;
        while ((rc = record_reader_next(fr, &r, err, sizeof err)) != 0) {
            if (rc < 0 || record_validate(&r, err, sizeof err) != 0) {
                nbad++;
                continue;
            }
            good++;
            if (fn)
                fn(user, &r);
        }
        record_reader_free(fr);
    }
    closedir(d);
    record_free(&r);
    if (bad)
        *bad = nbad;
    return good;
}

static void game_ids_add(void *user, const game_record_t *r)
{
    game_ids_t *g = user;
    if (g->n == g->cap) {
        g->cap = g->cap ? 2 * g->cap : 256;
        g->v = realloc(g->v, g->cap * sizeof *g->v);
        ck_assert_ptr_nonnull(g->v);
    }
    g->v[g->n++] = (game_id_t){r->worker_id, r->game_seq};
}

void game_ids_add_dir(game_ids_t *g, const char *dir, const char *suffix)
{
    struct stat st;
    if (stat(dir, &st) == 0)
        read_records(dir, suffix, game_ids_add, g, NULL);
}

static int game_id_cmp(const void *a, const void *b)
{
    const game_id_t *x = a, *y = b;
    if (x->worker != y->worker)
        return x->worker < y->worker ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

void game_ids_sort(game_ids_t *g)
{
    if (g->n)
        qsort(g->v, g->n, sizeof *g->v, game_id_cmp);
}

void check_ids_once(const game_ids_t *g, bool anon_ok)
{
    for (size_t i = 1; i < g->n; i++)
        ck_assert_msg(game_id_cmp(&g->v[i - 1], &g->v[i]) != 0 ||
                          (anon_ok && g->v[i].worker == 0),
                      "game %016" PRIx64 ":%" PRIu64 " stored twice", g->v[i].worker,
                      g->v[i].seq);
}

bool game_ids_has(const game_ids_t *g, uint64_t worker, uint64_t seq)
{
    game_id_t key = {worker, seq};
    return g->n && bsearch(&key, g->v, g->n, sizeof *g->v, game_id_cmp);
}

void game_ids_free(game_ids_t *g)
{
    free(g->v);
    *g = (game_ids_t){0};
}

size_t check_sent_in(const char *log, const game_ids_t *a, const game_ids_t *b)
{
    FILE *f = fopen(log, "r");
    ck_assert_msg(f != NULL, "no games log %s", log);
    unsigned long long w, q;
    size_t nsent = 0;
    while (fscanf(f, "%llx %llu", &w, &q) == 2) {
        ck_assert_msg(game_ids_has(a, w, q) || (b && game_ids_has(b, w, q)),
                      "game %016llx:%llu was sent but is not stored%s", w, q,
                      b ? " nor spooled" : "");
        nsent++;
    }
    fclose(f);
    return nsent;
}

int count_files(const char *dir, const char *suffix)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)))
        n += has_suffix(de->d_name, suffix);
    closedir(d);
    return n;
}

void make_tmppath(char *dir, size_t dirlen, char *path, size_t pathlen, const char *fmt, ...)
{
    make_tmpdir(dir, dirlen);
    int n = snprintf(path, pathlen, "%s/", dir);
    ck_assert(n > 0 && (size_t)n < pathlen);
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(path + n, pathlen - (size_t)n, fmt, ap);
    va_end(ap);
    ck_assert_msg(m >= 0 && (size_t)(n + m) < pathlen, "path too long for its buffer");
}

/* ---- JSON ---------------------------------------------------------------- */

typedef struct jp {
    const char *p;
    int depth;
    const char *why;
} jp_t;

static void jp_ws(jp_t *j)
{
    while (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r')
        j->p++;
}

static bool jp_value(jp_t *j);

static bool jp_string(jp_t *j)
{
    if (*j->p != '"')
        return j->why = "a string expected", false;
    for (j->p++; *j->p != '"'; j->p++) {
        unsigned char c = (unsigned char)*j->p;
        if (c == '\0')
            return j->why = "an unterminated string", false;
        if (c < 0x20)
            return j->why = "a control byte in a string", false;
        if (c == '\\') {
            j->p++;
            if (*j->p == 'u') {
                for (int k = 1; k <= 4; k++)
                    if (!isxdigit((unsigned char)j->p[k]))
                        return j->why = "a bad \\u escape", false;
                j->p += 4;
            } else if (!strchr("\"\\/bfnrt", *j->p) || !*j->p) {
                return j->why = "a bad escape", false;
            }
        }
    }
    j->p++;
    return true;
}

static bool jp_number(jp_t *j)
{
    const char *s = j->p;
    if (*j->p == '-')
        j->p++;
    if (*j->p == '0')
        j->p++;
    else if (*j->p >= '1' && *j->p <= '9')
        while (isdigit((unsigned char)*j->p))
            j->p++;
    else
        return j->why = "a value expected", false;
    if (*j->p == '.') {
        j->p++;
        if (!isdigit((unsigned char)*j->p))
            return j->why = "digits expected after '.'", false;
        while (isdigit((unsigned char)*j->p))
            j->p++;
    }
    if (*j->p == 'e' || *j->p == 'E') {
        j->p++;
        if (*j->p == '+' || *j->p == '-')
            j->p++;
        if (!isdigit((unsigned char)*j->p))
            return j->why = "an exponent expected", false;
        while (isdigit((unsigned char)*j->p))
            j->p++;
    }
    return j->p > s;
}

static bool jp_list(jp_t *j, char close, bool object)
{
    j->p++;
    if (++j->depth > 64)
        return j->why = "nested too deep", false;
    jp_ws(j);
    if (*j->p == close) {
        j->p++;
        j->depth--;
        return true;
    }
    for (;;) {
        jp_ws(j);
        if (object) {
            if (!jp_string(j))
                return false;
            jp_ws(j);
            if (*j->p != ':')
                return j->why = "':' expected", false;
            j->p++;
        }
        if (!jp_value(j))
            return false;
        jp_ws(j);
        if (*j->p == ',') {
            j->p++;
            continue;
        }
        if (*j->p != close)
            return j->why = object ? "',' or '}' expected" : "',' or ']' expected", false;
        j->p++;
        j->depth--;
        return true;
    }
}

static bool jp_value(jp_t *j)
{
    jp_ws(j);
    switch (*j->p) {
    case '{': return jp_list(j, '}', true);
    case '[': return jp_list(j, ']', false);
    case '"': return jp_string(j);
    case 't': return strncmp(j->p, "true", 4) == 0 ? (j->p += 4, true) : (j->why = "bad word", false);
    case 'f': return strncmp(j->p, "false", 5) == 0 ? (j->p += 5, true) : (j->why = "bad word", false);
    case 'n': return strncmp(j->p, "null", 4) == 0 ? (j->p += 4, true) : (j->why = "bad word", false);
    default: return jp_number(j);
    }
}

bool json_valid(const char *s, char *why, size_t whylen)
{
    if (!s) {
        snprintf(why, whylen, "no text");
        return false;
    }
    jp_t j = {.p = s, .why = "trailing text"};
    bool ok = jp_value(&j);
    if (ok) {
        jp_ws(&j);
        ok = *j.p == '\0';
    }
    if (!ok)
        snprintf(why, whylen, "%s at byte %zu of %zu", j.why, (size_t)(j.p - s), strlen(s));
    return ok;
}
