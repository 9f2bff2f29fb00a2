#include "selfplay/rundir.h"
#include "util/util.h"
#include "selfplay/selfplay.h"

#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define F(field) offsetof(run_config_t, field)
#define ANY_INT 2147483647
const setting_t run_settings[] = {
    {"rule", SET_RULE, F(rule), 0, 0, "freestyle", 0, "R", "freestyle, standard or renju"},
    {"size", SET_INT, F(size), BOARD_MIN, BOARD_MAX, "15", 0, "N", "board size"},
    {"blocks", SET_INT, F(blocks), 0, 64, "6", 0, "B", "residual blocks"},
    {"channels", SET_INT, F(channels), 1, 1024, "64", 0, "C", "trunk channels"},
    {"workers", SET_INT, F(workers), 0, 256, "1", 1, "K", "self-play worker processes"},
    {"parallel", SET_INT, F(parallel), 1, 4096, "16", 0, "G", "concurrent games per worker"},
    {"visits", SET_INT, F(visits), 1, 1000000, "200", 0, "V", "playouts per full search"},
    {"cheap_visits", SET_INT, F(cheap_visits), 1, 1000000, "50", 0, "V",
     "playouts of a cheap search (at most visits: a larger value is capped, and said)"},
    {"full_frac", SET_DOUBLE, F(full_frac), 0.0001, 1, "0.25", 0, "F",
     "fraction of moves searched fully; only they train the policy"},
    {"resign", SET_DOUBLE, F(resign), 0, 1, "0.9", 0, "T",
     "self-play resigns below root value -T; 0: never"},
    {"dirichlet_alpha", SET_DOUBLE, F(dirichlet_alpha), 0, 10, "0", 0, "A",
     "root noise alpha; 0: 10 / board points, at most 0.5"},
    {"forced_k", SET_DOUBLE, F(forced_k), 0, 10, "0", 1, "K",
     "forced playouts in full searches: a root child gets sqrt(K * prior * visits) visits, "
     "pruned from the policy target (KataGo); 0: off"},
    {"policy_heads", SET_INT, F(policy_heads), 1, 3, "1", 0, "K",
     "policy outputs: 1 the policy, 2 also the opponent's reply, 3 also a soft policy (KataGo)"},
    {"opp_weight", SET_DOUBLE, F(opp_weight), 0, 100, "0.15", 1, "W",
     "loss weight of the opponent-reply output (policy_heads >= 2; KataGo's 0.15)"},
    {"soft_weight", SET_DOUBLE, F(soft_weight), 0, 100, "8", 1, "W",
     "loss weight of the soft policy output (policy_heads 3; KataGo's 8)"},
    {"batch", SET_INT, F(batch), 1, 65536, "256", 0, "N", "minibatch size"},
    {"lr", SET_DOUBLE, F(lr), 1e-7, 10, "0.02", 0, "X", "learning rate"},
    {"momentum", SET_DOUBLE, F(momentum), 0, 0.999, "0.9", 0, "M", "Nesterov momentum"},
    {"weight_decay", SET_DOUBLE, F(weight_decay), 0, 1, "0.0001", 0, "W", "L2 weight decay"},
    {"warmup", SET_INT, F(warmup), 0, 100000000, "100", 0, "N",
     "steps of linear learning-rate warmup"},
    {"checkpoint_every", SET_INT, F(checkpoint_every), 1, 100000000, "100", 0, "N",
     "steps between checkpoints"},
    {"keep_checkpoints", SET_INT, F(keep_checkpoints), 1, ANY_INT, "20", 1, "N",
     "newest checkpoints kept"},
    {"keep_every", SET_INT, F(keep_every), 0, ANY_INT, "1000", 1, "K",
     "also keep checkpoints at multiples of K steps; 0: none"},
    {"ratio", SET_DOUBLE, F(ratio), 0.01, 1e6, "4", 0, "R",
     "training samples per new self-play position"},
    {"window", SET_INT, F(window), 1, 2000000000, "250000", 0, "N", "replay window in positions"},
    {"nonfinite_limit", SET_INT, F(nonfinite_limit), 1, 1000000, "10", 1, "K",
     "stop after K training steps in a row with a non-finite loss"},
    {"stall_s", SET_INT, F(stall_s), 1, 86400, "120", 1, "S",
     "restart a worker silent (no game, no heartbeat) this many seconds"},
    {"seed", SET_U64, F(seed), 0, 0, "1", 0, "S", "random seed"},
    {"device", SET_STR, F(device), 1, sizeof(((run_config_t *)0)->device) - 1, "auto", 1, "D",
     "auto, cpu, cuda, cuda:N"},
};
const int run_nsettings = (int)(sizeof run_settings / sizeof run_settings[0]);
#undef F
#undef ANY_INT

const setting_t *run_setting_find(const char *name)
{
    for (int i = 0; i < run_nsettings; i++) {
        const char *a = run_settings[i].name, *b = name;
        while (*a && (*a == *b || (*a == '_' && *b == '-'))) {
            a++;
            b++;
        }
        if (!*a && !*b)
            return &run_settings[i];
    }
    return NULL;
}

int run_setting_parse(const setting_t *s, run_config_t *c, const char *text, char *err,
                      size_t errlen)
{
    void *dst = (char *)c + s->offset;
    char *end;
    const char *why = NULL;
    errno = 0;
    switch (s->type) {
    case SET_INT: {
        long x = strtol(text, &end, 10);
        if (errno || end == text || *end)
            why = "not an integer";
        else if (x < (long)s->lo || x > (long)s->hi)
            why = "out of range";
        else
            *(int *)dst = (int)x;
        break;
    }
    case SET_DOUBLE: {
        double x = strtod(text, &end);
        if (errno || end == text || *end || !isfinite(x))
            why = "not a finite number";
        else if (!(x >= s->lo && x <= s->hi))
            why = "out of range";
        else
            *(double *)dst = x;
        break;
    }
    case SET_U64: {
        unsigned long long x = strtoull(text, &end, 10);
        if (errno || end == text || *end || text[0] == '-' || text[0] == '+')
            why = "not a non-negative integer";
        else
            *(uint64_t *)dst = x;
        break;
    }
    case SET_RULE:
        if (!rule_parse(text, (rule_t *)dst))
            why = "freestyle, standard or renju";
        break;
    case SET_STR:
        if (strlen(text) < (size_t)s->lo || strlen(text) > (size_t)s->hi)
            why = "length out of range";
        else
            snprintf(dst, (size_t)s->hi + 1, "%s", text);
        break;
    }
    if (!why)
        return 0;
    if (s->type == SET_INT || s->type == SET_DOUBLE)
        util_errf(err, errlen, "bad value for %s: '%s' (%s %g..%g)", s->name, text, why, s->lo,
                  s->hi);
    else
        util_errf(err, errlen, "bad value for %s: '%s' (%s)", s->name, text, why);
    return -1;
}

void run_setting_format(const setting_t *s, const run_config_t *c, char *buf, size_t len)
{
    const void *src = (const char *)c + s->offset;
    switch (s->type) {
    case SET_INT: snprintf(buf, len, "%d", *(const int *)src); break;
    case SET_DOUBLE: snprintf(buf, len, "%.17g", *(const double *)src); break;
    case SET_U64: snprintf(buf, len, "%llu", (unsigned long long)*(const uint64_t *)src); break;
    case SET_RULE: snprintf(buf, len, "%s", rule_name(*(const rule_t *)src)); break;
    case SET_STR: snprintf(buf, len, "%s", (const char *)src); break;
    }
}

void run_config_default(run_config_t *c)
{
    memset(c, 0, sizeof *c);
    c->version = RUN_CONFIG_VERSION;
    for (int i = 0; i < run_nsettings; i++) {
        int rc = run_setting_parse(&run_settings[i], c, run_settings[i].def, NULL, 0);
        assert(rc == 0);
        (void)rc;
    }
}

double run_config_alpha(const run_config_t *c)
{
    if (c->dirichlet_alpha > 0)
        return c->dirichlet_alpha;
    /* root noise scaled to the board, as for Go: about 10 / legal moves */
    double a = 10.0 / (c->size * c->size);
    return a > 0.5 ? 0.5 : a;
}

int run_check_path(const char *dir, char *err, size_t errlen)
{
    if (!dir[0]) {
        util_errf(err, errlen, "run directory path is empty");
        return -1;
    }
    if (strlen(dir) > RUN_DIR_MAX) {
        util_errf(err, errlen, "run directory path is %zu bytes; at most %d are supported",
                  strlen(dir), RUN_DIR_MAX);
        return -1;
    }
    for (const unsigned char *p = (const unsigned char *)dir; *p; p++)
        if (*p < 0x20 || *p == 0x7f) {
            util_errf(err, errlen, "run directory path holds control byte 0x%02x at offset %zu "
                      "(the worker control protocol is line-based)", *p,
                      (size_t)(p - (const unsigned char *)dir));
            return -1;
        }
    return 0;
}

int run_mkdir(const char *path, char *err, size_t errlen)
{
    if (mkdir(path, 0755) == 0 || errno == EEXIST) {
        struct stat st;
        if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
            return 0;
        snprintf(err, errlen, "%s exists and is not a directory", path);
        return -1;
    }
    snprintf(err, errlen, "cannot create %s: %s", path, strerror(errno));
    return -1;
}

int run_lock(const char *dir, char *err, size_t errlen)
{
    /* The lock is on the directory itself: a file in it could be deleted
     * under a live trainer and let a second one in. RUN_DIR/lock only
     * tells a person (and the error below) which pid holds it. */
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "cannot open %s: %s", dir, strerror(errno));
        return -1;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/lock", dir);
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int e = errno;
        close(fd);
        char buf[32] = {0};
        long pid = 0;
        int pfd = open(path, O_RDONLY | O_CLOEXEC);
        if (pfd >= 0) {
            ssize_t n = read(pfd, buf, sizeof buf - 1);
            pid = n > 0 ? strtol(buf, NULL, 10) : 0;
            close(pfd);
        }
        if (e == EWOULDBLOCK && pid > 0)
            snprintf(err, errlen, "%s is in use by pid %ld", dir, pid);
        else if (e == EWOULDBLOCK)
            snprintf(err, errlen, "%s is in use by another process", dir);
        else
            snprintf(err, errlen, "cannot lock %s: %s", dir, strerror(e));
        return -1;
    }
    char buf[32];
    int n = snprintf(buf, sizeof buf, "%ld\n", (long)getpid());
    if (util_write_atomic(path, buf, (size_t)n, err, errlen) != 0) {
        close(fd);
        return -1;
    }
    return fd;
}

void run_unlock(int fd)
{
    if (fd >= 0)
        close(fd);
}

size_t run_config_format(const run_config_t *c, char *buf, size_t len)
{
    char val[256];
    size_t n = (size_t)snprintf(buf, len,
                                "# gomoku train run settings (see `gomoku train --help`)\n"
                                "version=%d\n", RUN_CONFIG_VERSION);
    for (int i = 0; i < run_nsettings && n < len; i++) {
        run_setting_format(&run_settings[i], c, val, sizeof val);
        n += (size_t)snprintf(buf + n, len - n, "%s=%s\n", run_settings[i].name, val);
    }
    assert(n < len);
    return n;
}

int run_config_save(const run_config_t *c, const char *path, char *err, size_t errlen)
{
    char buf[RUN_CONFIG_TEXT_MAX];
    size_t n = run_config_format(c, buf, sizeof buf);
    return util_write_atomic(path, buf, n, err, errlen);
}

/* One key=value line of a config text (line is NUL-terminated, no newline);
 * 0, or -1 with "ORIGIN:LINE: why". */
static int parse_line(run_config_t *c, char *line, const char *origin, int lineno, char *err,
                      size_t errlen)
{
    size_t len = strlen(line);
    if (len > 0 && line[len - 1] == '\r')
        line[--len] = '\0';
    if (len == 0 || line[0] == '#')
        return 0;
    char *eq = strchr(line, '=');
    if (!eq) {
        snprintf(err, errlen, "%s:%d: expected key=value", origin, lineno);
        return -1;
    }
    *eq = '\0';
    const char *k = line, *val = eq + 1;
    if (strcmp(k, "version") == 0) {
        char *end;
        errno = 0;
        long v = strtol(val, &end, 10);
        if (errno || end == val || *end || v < 1) {
            snprintf(err, errlen, "%s:%d: bad version '%.32s'", origin, lineno, val);
            return -1;
        }
        if (v > RUN_CONFIG_VERSION) {
            snprintf(err, errlen, "%s: config version %ld is newer than this program's %d",
                     origin, v, RUN_CONFIG_VERSION);
            return -1;
        }
        c->version = (int)v;
        return 0;
    }
    const setting_t *st = run_setting_find(k);
    if (!st || strchr(k, '-')) {
        snprintf(err, errlen, "%s:%d: unknown key '%.64s'", origin, lineno, k);
        return -1;
    }
    char why[256];
    if (run_setting_parse(st, c, val, why, sizeof why) != 0) {
        snprintf(err, errlen, "%s:%d: %s", origin, lineno, why);
        return -1;
    }
    return 0;
}

int run_config_parse(run_config_t *c, const char *text, size_t len, const char *origin,
                     char *err, size_t errlen)
{
    run_config_default(c);
    c->version = 0;
    char line[512];
    int lineno = 0;
    size_t i = 0;
    while (i < len) {
        size_t j = i;
        while (j < len && text[j] != '\n')
            j++;
        lineno++;
        if (j - i >= sizeof line) {
            snprintf(err, errlen, "%s:%d: line too long", origin, lineno);
            return -1;
        }
        if (memchr(text + i, '\0', j - i)) {
            snprintf(err, errlen, "%s:%d: NUL byte", origin, lineno);
            return -1;
        }
        memcpy(line, text + i, j - i);
        line[j - i] = '\0';
        if (parse_line(c, line, origin, lineno, err, errlen) != 0)
            return -1;
        i = j + 1;
    }
    if (c->version == 0) {
        snprintf(err, errlen, "%s: no version line (not a gomoku run config?)", origin);
        return -1;
    }
    if (c->version < 3) {   /* runs made before these methods existed */
        c->forced_k = 0.0;
        c->policy_heads = 1;
    }
    return 0;
}

int run_config_load(run_config_t *c, const char *path, char *err, size_t errlen)
{
    char buf[RUN_CONFIG_TEXT_MAX];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
        return -1;
    }
    size_t n = 0;
    ssize_t r;
    while (n < sizeof buf && (r = read(fd, buf + n, sizeof buf - n)) != 0) {
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            snprintf(err, errlen, "%s: read error: %s", path, strerror(errno));
            close(fd);
            return -1;
        }
        n += (size_t)r;
    }
    close(fd);
    if (n == sizeof buf) {
        snprintf(err, errlen, "%s: larger than %d bytes (not a gomoku run config?)", path,
                 RUN_CONFIG_TEXT_MAX - 1);
        return -1;
    }
    return run_config_parse(c, buf, n, path, err, errlen);
}

void run_config_selfplay_opts(const run_config_t *c, selfplay_opts_t *so)
{
    so->rule = c->rule;
    so->size = c->size;
    so->parallel = c->parallel;
    so->visits = c->visits;
    so->cheap_visits = c->cheap_visits;
    so->full_frac = c->full_frac;
    so->resign_threshold = c->resign;
    so->dirichlet_alpha = run_config_alpha(c);
    so->forced_k = c->forced_k;
}

bool run_numbered_name(const char *name, const char *prefix, const char *suffix, uint64_t *n)
{
    size_t len = strlen(name), pl = strlen(prefix), sl = strlen(suffix);
    if (len <= pl + sl || len > pl + sl + 18 || strncmp(name, prefix, pl) != 0 ||
        strcmp(name + len - sl, suffix) != 0)
        return false;
    uint64_t v = 0;
    for (size_t i = pl; i < len - sl; i++) {
        if (name[i] < '0' || name[i] > '9')
            return false;
        v = v * 10 + (uint64_t)(name[i] - '0');
    }
    *n = v;
    return true;
}
