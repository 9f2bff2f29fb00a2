#include "selfplay/rundir.h"
#include "util/util.h"
#include "nn/nn.h"
#include "selfplay/selfplay.h"

#include <assert.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

const setting_t *run_setting_find(const char *key)
{
    const setting_t *s = settings_find(key);
    return s && (s->flags & SETTING_RUN) ? s : NULL;
}

int run_setting_parse(const setting_t *s, run_config_t *c, const char *text, char *err,
                      size_t errlen)
{
    void *dst = (char *)c + s->field;
    const char *why = NULL;
    if (s->type == SET_CHOICE) {   /* one of the row's choices, inline (at most 15 bytes) */
        const char *v;
        if (settings_parse(s, text, &v, &why) == 0) {
            if (strlen(text) >= 16)
                why = "too long";
            else
                memcpy(dst, text, strlen(text) + 1);
        }
    } else if (s->type == SET_STR) {   /* inline text: the config owns it */
        size_t n = strlen(text);
        if (n < (size_t)s->lo || n > (size_t)s->hi)
            why = "length out of range";
        else
            memcpy(dst, text, n + 1);
    } else {
        settings_parse(s, text, dst, &why);
    }
    if (!why)
        return 0;
    if (s->type == SET_INT || s->type == SET_DOUBLE)
        util_errf(err, errlen, "bad value for %s: '%s' (%s %g..%g)", s->key, text, why, s->lo,
                  s->hi);
    else
        util_errf(err, errlen, "bad value for %s: '%s' (%s)", s->key, text, why);
    return -1;
}

void run_setting_format(const setting_t *s, const run_config_t *c, char *buf, size_t len)
{
    const void *src = (const char *)c + s->field;
    switch (s->type) {
    case SET_INT: snprintf(buf, len, "%d", *(const int *)src); break;
    case SET_DOUBLE: snprintf(buf, len, "%.17g", *(const double *)src); break;
    case SET_U64: snprintf(buf, len, "%llu", (unsigned long long)*(const uint64_t *)src); break;
    case SET_RULE: snprintf(buf, len, "%s", rule_name(*(const rule_t *)src)); break;
    case SET_STR: snprintf(buf, len, "%s", (const char *)src); break;
    case SET_CHOICE: snprintf(buf, len, "%s", (const char *)src); break;
    default: assert(!"no run setting has this type");
    }
}

int run_config_args(arg_spec_t *out, const char **given)
{
    int n = 0;
    for (int i = 0; i < S_COUNT; i++)
        if (settings_table[i].flags & SETTING_RUN) {
            given[i] = NULL;
            out[n++] = (arg_spec_t)ARG_FLAGS(i, &given[i], ARG_TEXT);
        }
    return n;
}

void run_config_default(run_config_t *c)
{
    memset(c, 0, sizeof *c);
    c->version = RUN_CONFIG_VERSION;
    for (int i = 0; i < S_COUNT; i++)
        if (settings_table[i].flags & SETTING_RUN) {
            int rc = run_setting_parse(&settings_table[i], c, settings_table[i].def, NULL, 0);
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
    for (int i = 0; i < S_COUNT && n < len; i++) {
        const setting_t *s = &settings_table[i];
        if (!(s->flags & SETTING_RUN))
            continue;
        run_setting_format(s, c, val, sizeof val);
        n += (size_t)snprintf(buf + n, len - n, "%s=%s\n", s->key, val);
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
    if (!st) {
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
    if (c->version < 7)   /* runs before balanced openings */
        c->open_frac = 0.0;
    if (c->version < 8)   /* runs before the mixed value target */
        c->value_mix = 0.0;
    if (c->version < 9) {   /* runs before self-play's threat budgets were settings */
        c->selfplay_vct_root_nodes = 2000;
        c->selfplay_vct_defend_nodes = 0;
    }
    if (c->version < 10)   /* runs before cheap searches had a budget of their own */
        c->selfplay_vct_cheap_nodes = c->selfplay_vct_root_nodes;
    if (c->version < 11) {   /* runs before the Gumbel root */
        c->gumbel = 0;
        c->gumbel_scale = MCTS_GUMBEL_SCALE;
    }
    if (c->version < 12) {   /* runs before asymmetric games */
        c->strong_frac = 0;
        c->strong_visits = 0;
    }
    if (c->version < 13)   /* runs before the value head's max */
        snprintf(c->value_pool, sizeof c->value_pool, "%s", nn_value_pool_name(NN_POOL_MEAN));
    if (c->version < 6)   /* runs before the threat planes (the default since) */
        snprintf(c->planes, sizeof c->planes, "%s", nn_features_name(NN_FEATURES_BASIC));
    if (c->version < 5) {   /* what runs before the search settings searched with */
        c->c_puct = 1.5;
        c->fpu = 0.2;
        c->fpu_root = 0.0;
        c->temp_moves = 8;
        c->vcf_nodes = 200;
        c->vcf_root_nodes = 5000;
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
    /* every option of self-play that is a run setting, through the table's
     * offsets, so a new one needs its row and its ARG alone; not the seed,
     * which each worker gets its own of */
    arg_spec_t specs[ARGS_GROUP_MAX];
    int n = selfplay_args(specs, so);
    for (int i = 0; i < n; i++) {
        const setting_t *s = specs[i].row;
        if (!(s->flags & SETTING_RUN) || s == &settings_table[S_SEED])
            continue;
        const void *src = (const char *)c + s->field;
        switch (s->type) {
        case SET_INT: *(int *)specs[i].dst = *(const int *)src; break;
        case SET_DOUBLE: *(double *)specs[i].dst = *(const double *)src; break;
        case SET_RULE: *(rule_t *)specs[i].dst = *(const rule_t *)src; break;
        default: assert(!"no self-play run setting has this type");
        }
    }
    so->dirichlet_alpha = run_config_alpha(c);   /* a row of its own: 0 scales to the board */
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

/* Whether ok(dir, name) holds for every entry of dir but "." and ".."; a
 * directory that cannot be opened gives if_missing. */
static int dir_all(const char *dir, int (*ok)(const char *dir, const char *name), int if_missing)
{
    DIR *d = opendir(dir);
    if (!d)
        return if_missing;
    struct dirent *de;
    int all = 1;
    while (all && (de = readdir(d)))
        all = !strcmp(de->d_name, ".") || !strcmp(de->d_name, "..") || ok(dir, de->d_name);
    closedir(d);
    return all;
}

static int is_lost_found(const char *dir, const char *name)
{
    (void)dir;
    return !strcmp(name, "lost+found");
}

/* An empty directory (a mount point, say): 1; anything else: 0. */
static int dir_is_empty(const char *path) { return dir_all(path, is_lost_found, 0); }

/* Our lock and log, or games/ or models/ while empty (a separate disk mounted there). */
static int may_be_in_new_run(const char *dir, const char *name)
{
    if (!strcmp(name, "lock") || !strcmp(name, "train.log"))
        return 1;
    if (strcmp(name, "games") && strcmp(name, "models"))
        return 0;
    char sub[4200];
    snprintf(sub, sizeof sub, "%s/%s", dir, name);
    return dir_is_empty(sub);
}

/* A directory a new run may be created in (or a missing one). */
static int dir_is_fresh(const char *dir) { return dir_all(dir, may_be_in_new_run, 1); }

/* A new run from an initial model takes the model's shape and rule; a
 * setting given on the command line must agree. 0, or -1 with err. */
static int take_model_shape(run_config_t *cfg, const char *const *given, const char *path,
                            char *err, size_t errlen)
{
    nn_model_t *m = nn_model_load(path, err, errlen);
    if (!m)
        return -1;
    const struct { setting_id_t id; int *field; int value; } dims[] = {
        {S_BLOCKS, &cfg->blocks, m->cfg.blocks},
        {S_CHANNELS, &cfg->channels, m->cfg.channels},
        {S_SIZE, &cfg->size, m->cfg.board_max},
        {S_POLICY_HEADS, &cfg->policy_heads, m->cfg.policy_outputs},
    };
    int rc = 0;
    for (size_t i = 0; i < sizeof dims / sizeof dims[0] && rc == 0; i++) {
        const char *opt = settings_table[dims[i].id].opt;
        if (given[dims[i].id] && *dims[i].field != dims[i].value) {
            snprintf(err, errlen, "--%s %d, but --init-model %s has %s %d", opt, *dims[i].field,
                     path, opt, dims[i].value);
            rc = -1;
        }
        *dims[i].field = dims[i].value;
    }
    /* --planes may widen the model's (basic -> threat: the trainer keeps
     * its filters and starts the new planes' at zero), never narrow them */
    const char *planes = nn_features_name(m->cfg.features);
    int want = m->cfg.features;
    if (rc == 0 && given[S_PLANES] && strcmp(cfg->planes, planes) != 0 &&
        (nn_features_parse(cfg->planes, &want, err, errlen) != 0 ||
         nn_feature_planes(want) < nn_feature_planes(m->cfg.features))) {
        snprintf(err, errlen, "--planes %s, but --init-model %s has %s planes (a net's planes "
                 "can be widened, not narrowed)", cfg->planes, path, planes);
        rc = -1;
    }
    if (rc == 0)
        snprintf(cfg->planes, sizeof cfg->planes, "%s", nn_features_name(want));
    /* --value-pool max may widen a mean model's value head (its new
     * weights start at zero), never narrow it */
    const char *pool = nn_value_pool_name(m->cfg.value_pool);
    int want_pool = m->cfg.value_pool;
    if (rc == 0 && given[S_VALUE_POOL] && strcmp(cfg->value_pool, pool) != 0 &&
        (nn_value_pool_parse(cfg->value_pool, &want_pool, err, errlen) != 0 ||
         want_pool < m->cfg.value_pool)) {
        snprintf(err, errlen, "--value-pool %s, but --init-model %s pools by %s (mean can "
                 "become max, not back)", cfg->value_pool, path, pool);
        rc = -1;
    }
    if (rc == 0)
        snprintf(cfg->value_pool, sizeof cfg->value_pool, "%s", nn_value_pool_name(want_pool));
    if (rc == 0 && given[S_RULE] && cfg->rule != (rule_t)m->rule) {
        snprintf(err, errlen, "--rule %s, but --init-model %s was trained for %s",
                 rule_name(cfg->rule), path, rule_name((rule_t)m->rule));
        rc = -1;
    }
    cfg->rule = (rule_t)m->rule;
    nn_model_free(m);
    return rc;
}

int run_config_open(const char *dir, const run_config_t *want, const char *const *given,
                    const char **init_model, run_config_t *cfg, char *err, size_t errlen)
{
    char cpath[4096];
    snprintf(cpath, sizeof cpath, "%s/config", dir);
    int fresh = access(cpath, F_OK) != 0;
    if (!fresh) {
        if (run_config_load(cfg, cpath, err, errlen) != 0)
            return -1;
        if (*init_model) {
            fprintf(stderr, "gomoku train: --init-model ignored: %s is a run already (it "
                            "resumes from its own models)\n", dir);
            *init_model = NULL;
        }
    } else {
        if (!dir_is_fresh(dir)) {
            snprintf(err, errlen, "%s is not empty and has no config: not a run directory (use "
                     "a new or empty one)", dir);
            return -1;
        }
        *cfg = *want;
        if (*init_model && take_model_shape(cfg, given, *init_model, err, errlen) != 0)
            return -1;
    }
    int changed = fresh;
    for (int i = 0; i < S_COUNT && !fresh; i++) {
        const setting_t *s = &settings_table[i];
        if (!given[i])
            continue;
        char have[256], val[256];
        run_setting_format(s, cfg, have, sizeof have);
        run_setting_format(s, want, val, sizeof val);
        if (strcmp(have, val) == 0)
            continue;
        if (!(s->flags & SETTING_RESUME)) {
            /* settings that define the experiment are fixed */
            snprintf(err, errlen, "%s: --%s %s but the run has %s=%s (settings are fixed when a "
                     "run is created; use a new RUN_DIR)", cpath, s->opt, val, s->key, have);
            return -1;
        }
        fprintf(stderr, "gomoku train: using --%s %s (the run had %s)\n", s->opt, val, have);
        run_setting_parse(s, cfg, val, NULL, 0);
        changed = 1;
    }
    /* what the workers would refuse is refused here, before anything is saved */
    selfplay_opts_t so;
    selfplay_opts_default(&so);
    run_config_selfplay_opts(cfg, &so);
    char why[256];
    if (selfplay_check_opts(&so, why, sizeof why) != 0) {
        snprintf(err, errlen, "%s", why);
        return -1;
    }
    /* the workers read the config themselves, so it holds what this session uses */
    if (changed) {
        if (run_config_save(cfg, cpath, err, errlen) != 0)
            return -1;
        util_fsync_dir(dir);
    }
    return 0;
}
