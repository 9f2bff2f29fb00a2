#include "selfplay/broker.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "util/util.h"
#include "selfplay/rundir.h"

#define BACKOFF_MIN_S 1.0
#define BACKOFF_MAX_S 30.0
#define CONNECT_TIMEOUT_S 3
#define COMMAND_TIMEOUT_S 10
#define MODEL_MAX_BYTES (512u << 20)

int broker_url_parse(const char *url, broker_url_t *u, char *err, size_t errlen)
{
    memset(u, 0, sizeof *u);
    u->port = 6379;
    const char *p = url;
    if (strncmp(p, "redis://", 8) != 0) {
        snprintf(err, errlen, "broker URL must start with redis:// (redis://[:password@]host:port[/db])");
        return -1;
    }
    p += 8;
    const char *at = strrchr(p, '@');
    if (at) {
        const char *slash = strchr(p, '/');
        if (slash && slash < at) {
            snprintf(err, errlen, "broker URL: '/' before the '@' of the password part");
            return -1;
        }
        if (*p != ':') {
            snprintf(err, errlen, "broker URL: the password part must be ':password@' "
                     "(Redis has no user names before 6.0)");
            return -1;
        }
        size_t n = (size_t)(at - p - 1);
        if (n == 0 || n >= sizeof u->password) {
            snprintf(err, errlen, "broker URL: password is %s", n ? "too long" : "empty");
            return -1;
        }
        memcpy(u->password, p + 1, n);
        u->password[n] = '\0';
        p = at + 1;
    }
    size_t hl = strcspn(p, ":/");
    if (hl == 0 || hl >= sizeof u->host) {
        snprintf(err, errlen, "broker URL: %s host", hl ? "overlong" : "missing");
        return -1;
    }
    for (size_t i = 0; i < hl; i++)
        if (!isalnum((unsigned char)p[i]) && p[i] != '.' && p[i] != '-' && p[i] != '_') {
            snprintf(err, errlen, "broker URL: bad character in host '%.*s'", (int)hl, p);
            return -1;
        }
    memcpy(u->host, p, hl);
    u->host[hl] = '\0';
    p += hl;
    if (*p == ':') {
        char *end;
        errno = 0;
        long v = strtol(p + 1, &end, 10);
        if (end == p + 1 || errno || v < 1 || v > 65535 || (*end && *end != '/')) {
            snprintf(err, errlen, "broker URL: port must be 1..65535");
            return -1;
        }
        u->port = (int)v;
        p = end;
    }
    if (*p == '/') {
        if (p[1] != '\0') {
            char *end;
            errno = 0;
            long v = strtol(p + 1, &end, 10);
            if (end == p + 1 || errno || *end || v < 0 || v > 1000000) {
                snprintf(err, errlen, "broker URL: database must be a number (e.g. /0)");
                return -1;
            }
            u->db = (int)v;
        }
    } else if (*p) {
        snprintf(err, errlen, "broker URL: unexpected text after the host");
        return -1;
    }
    return 0;
}

int broker_url_arg(const char *arg, char *out, size_t outlen, char *err, size_t errlen)
{
    if (arg[0] != '@') {
        if (strlen(arg) >= outlen) {
            snprintf(err, errlen, "broker URL too long");
            return -1;
        }
        snprintf(out, outlen, "%s", arg);
        return 0;
    }
    FILE *f = fopen(arg + 1, "re");
    if (!f) {
        snprintf(err, errlen, "cannot read the broker URL from %.200s: %s", arg + 1, strerror(errno));
        return -1;
    }
    int ok = fgets(out, (int)outlen, f) != NULL;
    fclose(f);
    size_t n = ok ? strcspn(out, "\r\n") : 0;
    if (!ok || n == 0 || n == outlen - 1) {
        snprintf(err, errlen, "%.200s: the first line must be the broker URL", arg + 1);
        return -1;
    }
    out[n] = '\0';
    return 0;
}

void broker_url_show(const broker_url_t *u, char *out, size_t outlen)
{
    snprintf(out, outlen, "redis://%s%s:%d/%d", u->password[0] ? ":***@" : "", u->host, u->port,
             u->db);
}

int broker_run_name_ok(const char *name)
{
    size_t n = strlen(name);
    if (n == 0 || n > BROKER_RUN_MAX)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)name[i]) && name[i] != '.' && name[i] != '_' &&
            name[i] != '-')
            return 0;
    return 1;
}

int broker_run_id(const char *run_dir, uint64_t *id, char *err, size_t errlen)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/broker-run-id", run_dir);
    FILE *f = fopen(path, "re");
    if (f) {
        char line[64] = "";
        int ok = fgets(line, sizeof line, f) != NULL;
        fclose(f);
        char *end;
        unsigned long long v = ok ? strtoull(line, &end, 16) : 0;
        if (!ok || v == 0 || (*end && *end != '\n')) {
            snprintf(err, errlen, "%s: not a run id (16 hex digits); delete it to make a new one",
                     path);
            return -1;
        }
        *id = v;
        return 0;
    }
    uint64_t v = util_random_u64();
    char text[32];
    int n = snprintf(text, sizeof text, "%016" PRIx64 "\n", v);
    if (util_write_atomic(path, text, (size_t)n, err, errlen) != 0)
        return -1;
    *id = v;
    return 0;
}

void broker_batch_init(broker_batch_t *bt) { memset(bt, 0, sizeof *bt); }

/* Open addressing, linear probing, kept at most half full. */
struct broker_ids {
    uint64_t *k;     /* 2 words per slot; worker id 0 marks an empty slot */
    size_t cap, n;
};

broker_ids_t *broker_ids_create(void) { return calloc(1, sizeof(broker_ids_t)); }

void broker_ids_free(broker_ids_t *s)
{
    if (!s)
        return;
    free(s->k);
    free(s);
}

size_t broker_ids_count(const broker_ids_t *s) { return s->n; }

static size_t ids_slot(uint64_t w, uint64_t q, size_t cap)
{
    uint64_t h = w * 0x9e3779b97f4a7c15ull ^ (q + 0x632be59bd9b4e019ull) * 0xbf58476d1ce4e5b9ull;
    return (size_t)(h ^ (h >> 29)) & (cap - 1);
}

static void ids_put(uint64_t *k, size_t cap, uint64_t w, uint64_t q)
{
    size_t i = ids_slot(w, q, cap);
    while (k[2 * i] != 0)
        i = (i + 1) & (cap - 1);
    k[2 * i] = w;
    k[2 * i + 1] = q;
}

int broker_ids_has(const broker_ids_t *s, uint64_t worker_id, uint64_t seq)
{
    if (worker_id == 0 || !s->cap)
        return 0;
    for (size_t i = ids_slot(worker_id, seq, s->cap); s->k[2 * i] != 0;
         i = (i + 1) & (s->cap - 1))
        if (s->k[2 * i] == worker_id && s->k[2 * i + 1] == seq)
            return 1;
    return 0;
}

int broker_ids_add(broker_ids_t *s, uint64_t worker_id, uint64_t seq)
{
    if (worker_id == 0)
        return 1;
    if (s->cap) {
        size_t i = ids_slot(worker_id, seq, s->cap);
        for (; s->k[2 * i] != 0; i = (i + 1) & (s->cap - 1))
            if (s->k[2 * i] == worker_id && s->k[2 * i + 1] == seq)
                return 0;
    }
    if (2 * (s->n + 1) > s->cap) {
        size_t ncap = s->cap ? s->cap * 2 : 4096;
        uint64_t *nk = calloc(ncap * 2, sizeof *nk);
        if (!nk)
            return -1;
        for (size_t i = 0; i < s->cap; i++)
            if (s->k[2 * i] != 0)
                ids_put(nk, ncap, s->k[2 * i], s->k[2 * i + 1]);
        free(s->k);
        s->k = nk;
        s->cap = ncap;
    }
    ids_put(s->k, s->cap, worker_id, seq);
    s->n++;
    return 1;
}

#ifdef GZ_HAVE_HIREDIS

#include <hiredis/hiredis.h>

struct broker {
    broker_url_t u;
    char run[BROKER_RUN_MAX + 1];
    char k_games[BROKER_RUN_MAX + 16], k_settings[BROKER_RUN_MAX + 16],
        k_model[BROKER_RUN_MAX + 16], k_workers[BROKER_RUN_MAX + 16];
    redisContext *c;
    int fatal;
    double down_since, next_try, backoff_s;
    int attempts;
    char last_err[256];
};

int broker_available(void) { return 1; }

static void set_last(broker_t *b, const char *msg)
{
    snprintf(b->last_err, sizeof b->last_err, "%s", msg);
}

static void drop(broker_t *b, const char *why)
{
    if (b->c) {
        redisFree(b->c);
        b->c = NULL;
        b->down_since = util_now_ms() * 1e-3;
        b->attempts = 0;
        b->backoff_s = 0;
        b->next_try = util_now_ms() * 1e-3;
    }
    set_last(b, why);
}

/* Run argv; returns the reply (caller frees) or NULL with err, dropping a
 * broken connection. An error reply is returned as NULL with its text. */
static redisReply *cmd(broker_t *b, int argc, const char **argv, const size_t *lens, char *err,
                       size_t errlen)
{
    if (!b->c) {
        snprintf(err, errlen, "broker %.64s is not connected (%.100s)", b->u.host, b->last_err);
        return NULL;
    }
    redisReply *r = redisCommandArgv(b->c, argc, argv, lens);
    if (!r) {
        char why[256];
        snprintf(why, sizeof why, "%s", b->c->errstr[0] ? b->c->errstr : "connection lost");
        snprintf(err, errlen, "broker %.64s:%d: %.12s: %.100s", b->u.host, b->u.port, argv[0], why);
        drop(b, why);
        return NULL;
    }
    if (r->type == REDIS_REPLY_ERROR) {
        snprintf(err, errlen, "broker %.64s:%d: %.12s: %.*s", b->u.host, b->u.port, argv[0],
                 r->len < 100 ? (int)r->len : 100, r->str);
        if (strncmp(r->str, "NOAUTH", 6) == 0 || strncmp(r->str, "WRONGPASS", 9) == 0) {
            b->fatal = 1;
            drop(b, "authentication");
        }
        freeReplyObject(r);
        return NULL;
    }
    return r;
}

static int connect_now(broker_t *b, char *err, size_t errlen)
{
    struct timeval ct = {CONNECT_TIMEOUT_S, 0}, tt = {COMMAND_TIMEOUT_S, 0};
    char shown[400];
    broker_url_show(&b->u, shown, sizeof shown);
    redisContext *c = redisConnectWithTimeout(b->u.host, b->u.port, ct);
    if (!c || c->err) {
        snprintf(err, errlen, "cannot connect to broker %s: %s", shown,
                 c ? c->errstr : "out of memory");
        set_last(b, c ? c->errstr : "out of memory");
        if (c)
            redisFree(c);
        return -1;
    }
    redisSetTimeout(c, tt);
    redisEnableKeepAlive(c);
    b->c = c;
    redisReply *r;
    if (b->u.password[0]) {
        const char *av[] = {"AUTH", b->u.password};
        r = redisCommandArgv(c, 2, av, NULL);
        if (!r || r->type == REDIS_REPLY_ERROR) {
            int refused = r != NULL;
            snprintf(err, errlen, "broker %s %s%.*s", shown,
                     refused ? "refused the password: " : "lost the connection during AUTH",
                     r ? (int)r->len : 0, r ? r->str : "");
            set_last(b, refused ? "password refused" : "connection lost");
            b->fatal = refused;
            goto out_drop;
        }
        freeReplyObject(r);
    }
    char db[16];
    snprintf(db, sizeof db, "%d", b->u.db);
    const char *sel[] = {"SELECT", db};
    const char *ping[] = {"PING"};
    r = redisCommandArgv(c, 2, sel, NULL);
    if (r && r->type != REDIS_REPLY_ERROR) {
        freeReplyObject(r);
        r = redisCommandArgv(c, 1, ping, NULL);
    }
    if (!r || r->type == REDIS_REPLY_ERROR) {
        if (r && strncmp(r->str, "NOAUTH", 6) == 0)
            snprintf(err, errlen, "broker %s requires a password: use redis://:PASSWORD@%s:%d",
                     shown, b->u.host, b->u.port);
        else if (r && strstr(r->str, "DB index"))
            snprintf(err, errlen, "broker %s refused database %d: %.*s", shown, b->u.db,
                     (int)r->len, r->str);
        else if (r)
            snprintf(err, errlen, "broker %s is not ready: %.*s", shown, (int)r->len, r->str);
        else
            snprintf(err, errlen, "broker %s: connection lost: %s", shown, c->errstr);
        /* a server still loading its data (LOADING) or busy is worth retrying */
        b->fatal = r && (strncmp(r->str, "NOAUTH", 6) == 0 || strstr(r->str, "DB index"));
        set_last(b, !r ? "connection lost" : b->fatal ? "refused" : r->str);
        goto out_drop;
    }
    freeReplyObject(r);
    b->attempts = 0;
    b->backoff_s = 0;
    b->last_err[0] = '\0';
    return 0;
out_drop:
    if (r)
        freeReplyObject(r);
    redisFree(c);
    b->c = NULL;
    return -1;
}

broker_t *broker_create(const broker_url_t *u, const char *run, char *err, size_t errlen)
{
    if (!broker_run_name_ok(run)) {
        snprintf(err, errlen, "run name '%.80s' must be 1-%d letters, digits, '.', '_' or '-'",
                 run, BROKER_RUN_MAX);
        return NULL;
    }
    broker_t *b = calloc(1, sizeof *b);
    if (!b) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    b->u = *u;
    snprintf(b->run, sizeof b->run, "%s", run);
    snprintf(b->k_games, sizeof b->k_games, "gz:%s:games", run);
    snprintf(b->k_settings, sizeof b->k_settings, "gz:%s:settings", run);
    snprintf(b->k_model, sizeof b->k_model, "gz:%s:model", run);
    snprintf(b->k_workers, sizeof b->k_workers, "gz:%s:workers", run);
    b->down_since = util_now_ms() * 1e-3;
    if (connect_now(b, err, errlen) != 0) {
        if (b->fatal) {
            free(b);
            return NULL;
        }
        b->attempts = 1;
        b->backoff_s = BACKOFF_MIN_S;
        b->next_try = util_now_ms() * 1e-3 + b->backoff_s;
    }
    return b;
}

void broker_free(broker_t *b)
{
    if (!b)
        return;
    if (b->c)
        redisFree(b->c);
    memset(b->u.password, 0, sizeof b->u.password);
    free(b);
}

int broker_connected(const broker_t *b) { return b->c != NULL; }
int broker_fatal(const broker_t *b) { return b->fatal; }

void broker_disconnect(broker_t *b) { drop(b, "disconnected"); }

int broker_ensure(broker_t *b, int *fresh, char *err, size_t errlen)
{
    if (fresh)
        *fresh = 0;
    if (b->fatal) {
        snprintf(err, errlen, "broker: %s", b->last_err);
        return -1;
    }
    if (b->c)
        return 1;
    double now = util_now_ms() * 1e-3;
    if (now < b->next_try) {
        snprintf(err, errlen, "broker unreachable: %s", b->last_err);
        return 0;
    }
    b->attempts++;
    if (connect_now(b, err, errlen) == 0) {
        if (fresh)
            *fresh = 1;
        return 1;
    }
    if (b->fatal)
        return -1;
    b->backoff_s = b->backoff_s <= 0 ? BACKOFF_MIN_S : fmin(b->backoff_s * 2, BACKOFF_MAX_S);
    b->next_try = util_now_ms() * 1e-3 + b->backoff_s;
    return 0;
}

void broker_state(const broker_t *b, char *out, size_t outlen)
{
    char shown[400];
    broker_url_show(&b->u, shown, sizeof shown);
    if (b->c) {
        snprintf(out, outlen, "connected to %s", shown);
        return;
    }
    double now = util_now_ms() * 1e-3;
    snprintf(out, outlen, "disconnected from %s (%s) for %.0f s, attempt %d, next in %.0f s",
             shown, b->last_err, now - b->down_since, b->attempts,
             b->next_try > now ? b->next_try - now : 0.0);
}

/* ---- settings ---- */

int broker_publish_settings(broker_t *b, const broker_settings_t *s, char *err, size_t errlen)
{
    char ver[24], rid[24], smax[24], text[RUN_CONFIG_TEXT_MAX];
    snprintf(ver, sizeof ver, "%d", BROKER_SETTINGS_VERSION);
    snprintf(rid, sizeof rid, "%016" PRIx64, s->run_id);
    snprintf(smax, sizeof smax, "%" PRIu64, s->stream_max);
    run_config_format(&s->cfg, text, sizeof text);
    const char *av[] = {"HSET", b->k_settings, "version", ver, "run_id", rid,
                        "stream_max", smax, "config", text};
    redisReply *r = cmd(b, 10, av, NULL, err, errlen);
    if (!r)
        return -1;
    freeReplyObject(r);
    return 0;
}

/* Version 1 kept a fixed list of fields: read them through the settings
 * table (same names and ranges) into s->cfg. f: the fields after run_id. */
static int settings_v1(broker_settings_t *s, const char *const *f, char *err, size_t errlen)
{
    static const char *const keys[] = {"rule", "size", "parallel", "visits", "cheap_visits",
                                       "full_frac", "resign"};
    char why[300];
    run_config_default(&s->cfg);
    for (int i = 0; i < 7; i++)
        if (!f[i] || run_setting_parse(run_setting_find(keys[i]), &s->cfg, f[i], why,
                                       sizeof why) != 0) {
            snprintf(err, errlen, "run settings on the broker: %s", f[i] ? why : keys[i]);
            return -1;
        }
    unsigned long long seed, smax;
    char tail;
    if (!f[7] || sscanf(f[7], "%llu:%llu%c", &seed, &smax, &tail) != 2 || smax == 0) {
        snprintf(err, errlen, "run settings on the broker: bad seed_streammax");
        return -1;
    }
    s->cfg.seed = seed;
    s->stream_max = smax;
    if (f[8] && run_setting_parse(run_setting_find("dirichlet_alpha"), &s->cfg, f[8], why,
                                  sizeof why) != 0) {
        snprintf(err, errlen, "run settings on the broker: %s", why);
        return -1;
    }
    return 0;
}

int broker_fetch_settings(broker_t *b, broker_settings_t *s, char *err, size_t errlen)
{
    enum { NF = 13 };
    const char *av[2 + NF] = {"HMGET", b->k_settings, "version", "run_id", "stream_max",
                              "config", "rule", "size", "parallel", "visits", "cheap_visits",
                              "full_frac", "resign", "seed_streammax", "alpha"};
    redisReply *r = cmd(b, 2 + NF, av, NULL, err, errlen);
    if (!r)
        return -1;
    int rc = -1;
    const char *f[NF];
    size_t flen[NF];
    if (r->type != REDIS_REPLY_ARRAY || r->elements != NF) {
        snprintf(err, errlen, "broker: unexpected reply to HMGET %s", b->k_settings);
        goto out_free_reply;
    }
    int present = 0;
    for (int i = 0; i < NF; i++) {
        redisReply *e = r->element[i];
        f[i] = e->type == REDIS_REPLY_STRING ? e->str : NULL;
        flen[i] = f[i] ? e->len : 0;
        /* a text field with a NUL inside is not ours (the config is checked by length) */
        if (f[i] && i != 3 && strlen(f[i]) != e->len)
            f[i] = NULL;
        present += f[i] != NULL;
    }
    if (present == 0) {
        rc = 1;
        goto out_free_reply;
    }
    char *end;
    errno = 0;
    long v = f[0] ? strtol(f[0], &end, 10) : 0;
    if (!f[0] || end == f[0] || *end || errno || v < 1 || v > 1000000) {
        snprintf(err, errlen, "run settings on the broker: bad version '%.32s'",
                 f[0] ? f[0] : "(missing)");
        goto out_free_reply;
    }
    if (v > BROKER_SETTINGS_VERSION) {
        snprintf(err, errlen, "run settings on the broker are version %ld, this build reads "
                 "up to version %d: use the trainer's build for the worker", v,
                 BROKER_SETTINGS_VERSION);
        goto out_free_reply;
    }
    s->run_id = f[1] ? strtoull(f[1], &end, 16) : 0;
    if (!f[1] || *end || s->run_id == 0) {
        snprintf(err, errlen, "run settings on the broker: bad run_id");
        goto out_free_reply;
    }
    if (v == 1) {
        if (settings_v1(s, f + 4, err, errlen) != 0)
            goto out_free_reply;
    } else {
        errno = 0;
        s->stream_max = f[2] ? strtoull(f[2], &end, 10) : 0;
        if (!f[2] || *end || errno || s->stream_max == 0) {
            snprintf(err, errlen, "run settings on the broker: bad stream_max '%.32s'",
                     f[2] ? f[2] : "(missing)");
            goto out_free_reply;
        }
        if (!f[3]) {
            snprintf(err, errlen, "run settings on the broker: no config");
            goto out_free_reply;
        }
        if (run_config_parse(&s->cfg, f[3], flen[3], "run settings on the broker (config)",
                             err, errlen) != 0)
            goto out_free_reply;
    }
    rc = 0;
out_free_reply:
    freeReplyObject(r);
    return rc;
}

/* ---- games ---- */

int broker_add_game(broker_t *b, uint64_t run_id, uint64_t worker_id, const uint8_t *frame,
                    size_t len, char *err, size_t errlen)
{
    char rid[24], wid[24];
    snprintf(rid, sizeof rid, "%016" PRIx64, run_id);
    snprintf(wid, sizeof wid, "%016" PRIx64, worker_id);
    const char *av[] = {"XADD", b->k_games, "*", "run", rid, "w", wid, "f", (const char *)frame};
    size_t lens[] = {4, strlen(b->k_games), 1, 3, strlen(rid), 1, strlen(wid), 1, len};
    redisReply *r = cmd(b, 9, av, lens, err, errlen);
    if (!r)
        return -1;
    freeReplyObject(r);
    return 0;
}

long long broker_stream_len(broker_t *b, char *err, size_t errlen)
{
    const char *av[] = {"XLEN", b->k_games};
    redisReply *r = cmd(b, 2, av, NULL, err, errlen);
    if (!r)
        return -1;
    long long n = r->type == REDIS_REPLY_INTEGER ? r->integer : -1;
    if (n < 0)
        snprintf(err, errlen, "broker: unexpected reply to XLEN");
    freeReplyObject(r);
    return n;
}

int broker_group_create(broker_t *b, char *err, size_t errlen)
{
    const char *av[] = {"XGROUP", "CREATE", b->k_games, BROKER_GROUP, "0", "MKSTREAM"};
    char e[256];
    redisReply *r = cmd(b, 6, av, NULL, e, sizeof e);
    if (r) {
        freeReplyObject(r);
        return 0;
    }
    if (strstr(e, "BUSYGROUP"))
        return 0;
    snprintf(err, errlen, "%s", e);
    return -1;
}

void broker_batch_free(broker_batch_t *bt)
{
    free(bt->e);
    free(bt->frame_off);
    free(bt->bytes);
    memset(bt, 0, sizeof *bt);
}


/* ---- reading the stream with a bound on every entry ----
 *
 * XREADGROUP's reply is read here, off the connection's socket, instead of
 * by hiredis: hiredis would take a whole bulk string into memory before
 * anyone can look at its length (and grows its buffer in 1 MiB steps, so a
 * 64 MiB value costs seconds). Here each length is seen first: a value of
 * an entry past BROKER_ENTRY_MAX is read through a small buffer and thrown
 * away as it arrives, and the entry is refused (acknowledged and deleted
 * on the broker). The frames kept are copied into the batch's buffer. */

typedef struct rd {
    int fd;
    size_t at, len;
    char why[128];
    uint8_t buf[1 << 16];
} rd_t;

static int rd_fill(rd_t *r)
{
    if (r->at < r->len)
        return 0;
    r->at = r->len = 0;
    for (;;) {
        ssize_t n = recv(r->fd, r->buf, sizeof r->buf, 0);
        if (n > 0) {
            r->len = (size_t)n;
            return 0;
        }
        if (n < 0 && errno == EINTR)
            continue;
        snprintf(r->why, sizeof r->why, "%s", n == 0 ? "connection closed" :
                 errno == EAGAIN || errno == EWOULDBLOCK ? "timed out" : strerror(errno));
        return -1;
    }
}

/* One line without its CRLF into out (NUL-terminated); a longer one than
 * outlen - 1 is a protocol error. */
static int rd_line(rd_t *r, char *out, size_t outlen)
{
    size_t n = 0;
    for (;;) {
        if (rd_fill(r) != 0)
            return -1;
        char c = (char)r->buf[r->at++];
        if (c == '\n' && n > 0 && out[n - 1] == '\r') {
            out[n - 1] = '\0';
            return 0;
        }
        if (n + 1 >= outlen) {
            snprintf(r->why, sizeof r->why, "protocol error (a line too long)");
            return -1;
        }
        out[n++] = c;
    }
}

/* n bytes and the CRLF after them: into dst, or thrown away when dst is NULL. */
static int rd_body(rd_t *r, uint8_t *dst, size_t n)
{
    for (size_t left = n + 2; left > 0;) {
        if (rd_fill(r) != 0)
            return -1;
        size_t k = r->len - r->at < left ? r->len - r->at : left;
        if (dst) {
            size_t body = left > 2 ? left - 2 : 0, take = k < body ? k : body;
            memcpy(dst + (n - body), r->buf + r->at, take);
        }
        r->at += k;
        left -= k;
    }
    return 0;
}

/* The body of a bulk string of n bytes (nil: none to read) as text into
 * buf (cap bytes, NUL-terminated); one too long for it is skipped and
 * reads as "". */
static int rd_text(rd_t *r, char *buf, size_t cap, size_t n, bool nil)
{
    if (n >= cap) {
        buf[0] = '\0';
        return rd_body(r, NULL, n);
    }
    if (!nil && rd_body(r, (uint8_t *)buf, n) != 0)
        return -1;
    buf[n] = '\0';
    return 0;
}

/* A header line "<type><number>": the number, or -2 with why. -1 is nil. */
static long long rd_head(rd_t *r, char type, char *err, size_t errlen)
{
    char line[256];
    if (rd_line(r, line, sizeof line) != 0)
        return -2;
    if (line[0] == '-') {   /* an error reply: the connection is still in step */
        snprintf(err, errlen, "%.200s", line + 1);
        return -3;
    }
    char *end;
    long long v = line[0] == type ? strtoll(line + 1, &end, 10) : 0;
    if (line[0] != type || end == line + 1 || *end || v < -1) {
        snprintf(r->why, sizeof r->why, "protocol error (expected '%c', got '%.20s')", type, line);
        return -2;
    }
    return v;
}

/* A short bulk string into out (NUL-terminated; *len its length), or
 * thrown away (*len its length, out "") when longer than outlen - 1. */
static int rd_small(rd_t *r, char *out, size_t outlen, size_t *len, char *err, size_t errlen)
{
    *len = 0;
    out[0] = '\0';
    long long n = rd_head(r, '$', err, errlen);
    if (n < -1)
        return (int)n;
    *len = n < 0 ? 0 : (size_t)n;
    if (n < 0)
        return 0;
    if ((size_t)n < outlen) {
        if (rd_body(r, (uint8_t *)out, (size_t)n) != 0)
            return -2;
        out[n] = '\0';
        return 0;
    }
    return rd_body(r, NULL, (size_t)n) != 0 ? -2 : 0;
}

static uint64_t hex_str(const char *s, size_t len)
{
    if (len == 0 || len > 16)
        return 0;
    uint64_t x = 0;
    for (size_t i = 0; i < len; i++) {
        char c = s[i];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (d < 0)
            return 0;
        x = x << 4 | (uint64_t)d;
    }
    return x;
}

/* Why a field of an entry is unusable, into e->why (the first one found). */
static void entry_bad(broker_entry_t *e, const char *field, const char *what)
{
    if (!e->why[0])
        snprintf(e->why, sizeof e->why, "entry %s: field '%s' %s", e->id, field, what);
}

/* A field holding a hex id (1-16 hex digits, not 0): its value, or 0
 * with e marked bad by the field's message for empty or for malformed. */
static uint64_t entry_hex_id(broker_entry_t *e, const char *field, const char *val, size_t vl,
                             const char *empty, const char *malformed)
{
    uint64_t id = hex_str(val, vl);
    if (vl == 0)
        entry_bad(e, field, empty);
    else if (!id)
        entry_bad(e, field, malformed);
    return id;
}

/* Room for n more bytes in the batch's buffer; its offset, or -1. */
static long long batch_room(broker_batch_t *bt, size_t n)
{
    if (bt->cap_bytes - bt->nbytes < n) {
        size_t ncap = bt->cap_bytes ? bt->cap_bytes : 65536;
        while (ncap - bt->nbytes < n)
            ncap *= 2;
        uint8_t *p = realloc(bt->bytes, ncap);
        if (!p)
            return -1;
        bt->bytes = p;
        bt->cap_bytes = ncap;
    }
    long long off = (long long)bt->nbytes;
    bt->nbytes += n;
    return off;
}

/* The entries of one XREADGROUP reply. 0; -3 an error reply (err says it,
 * the connection is fine); -2 the connection is out of step (r->why). */
static int read_entries(rd_t *r, broker_batch_t *bt, char *err, size_t errlen)
{
    long long ns = rd_head(r, '*', err, errlen);
    if (ns < -1)
        return (int)ns;
    if (ns <= 0)
        return 0;   /* nil: nothing new (BLOCK timed out) */
    for (long long si = 0; si < ns; si++) {
        if (rd_head(r, '*', err, errlen) != 2)
            return snprintf(r->why, sizeof r->why, "protocol error (a stream)"), -2;
        char key[256];
        size_t kl;
        if (rd_small(r, key, sizeof key, &kl, err, errlen) != 0)
            return -2;
        long long n = rd_head(r, '*', err, errlen);
        if (n < -1)
            return -2;
        if (n > 0 && bt->n + n > bt->cap) {
            int ncap = bt->n + (int)n;
            broker_entry_t *e = realloc(bt->e, (size_t)ncap * sizeof *e);
            if (e)
                bt->e = e;
            size_t *o = e ? realloc(bt->frame_off, (size_t)ncap * sizeof *o) : NULL;
            if (!o)
                return snprintf(r->why, sizeof r->why, "out of memory"), -2;
            bt->frame_off = o;
            bt->cap = ncap;
        }
        for (long long i = 0; i < n; i++) {
            if (rd_head(r, '*', err, errlen) != 2)
                return snprintf(r->why, sizeof r->why, "protocol error (an entry)"), -2;
            broker_entry_t *e = &bt->e[bt->n];
            memset(e, 0, sizeof *e);
            bt->frame_off[bt->n] = SIZE_MAX;
            bt->n++;
            size_t idl;
            if (rd_small(r, e->id, sizeof e->id, &idl, err, errlen) != 0 || idl >= sizeof e->id)
                return snprintf(r->why, sizeof r->why, "protocol error (an entry id)"), -2;
            long long nf = rd_head(r, '*', err, errlen);
            if (nf < -1 || nf % 2 != 0)
                return snprintf(r->why, sizeof r->why, "protocol error (entry fields)"), -2;
            if (nf < 0) {   /* a pending entry deleted meanwhile */
                snprintf(e->why, sizeof e->why, "entry %s has no fields (deleted from the stream)",
                         e->id);
                continue;
            }
            size_t total = 0;
            int have_run = 0, have_w = 0, have_f = 0;
            char name[16] = "";
            for (long long f = 0; f < nf; f++) {
                /* names and values alike: the length first; past the limit
                 * the entry is refused and nothing more of it is read */
                long long vn = rd_head(r, '$', err, errlen);
                if (vn < -1)
                    return -2;
                size_t vl = vn < 0 ? 0 : (size_t)vn;
                if (vl > BROKER_ENTRY_MAX - total) {
                    e->oversized = total + vl;
                    snprintf(e->why, sizeof e->why, "entry %s is over %zu bytes, the limit is %zu "
                             "(refused unread, deleted from the stream)", e->id, e->oversized,
                             BROKER_ENTRY_MAX);
                    return -4;
                }
                total += vl + 16;
                if (f % 2 == 0 && vn < 0)
                    return snprintf(r->why, sizeof r->why, "protocol error (a nil name)"), -2;
                if (f % 2 == 0) {   /* a name */
                    if (rd_text(r, name, sizeof name, vl, false) != 0)
                        return -2;
                    continue;
                }
                if (strcmp(name, "f") == 0) {
                    have_f = 1;
                    if (vl == 0) {
                        entry_bad(e, "f", "(frame) is empty");
                    } else {
                        long long off = batch_room(bt, vl);
                        if (off < 0)
                            return snprintf(r->why, sizeof r->why, "out of memory"), -2;
                        bt->frame_off[bt->n - 1] = (size_t)off;
                        e->len = vl;
                    }
                    if (vn > 0 && rd_body(r, bt->bytes + bt->frame_off[bt->n - 1], vl) != 0)
                        return -2;
                    if (vn == 0 && rd_body(r, NULL, 0) != 0)
                        return -2;
                    continue;
                }
                char val[64];
                if (rd_text(r, val, sizeof val, vl, vn < 0) != 0)
                    return -2;
                if (strcmp(name, "run") == 0) {
                    have_run = 1;
                    e->run_id = entry_hex_id(e, "run", val, vl, "is empty",
                                             "is not a run id (1-16 hex digits, not 0)");
                } else if (strcmp(name, "w") == 0) {
                    have_w = 1;
                    e->worker_id = entry_hex_id(e, "w", val, vl, "(worker id) is empty",
                                                "(worker id) is not 1-16 hex digits, not 0");
                }
            }
            if (!have_run)
                entry_bad(e, "run", "is missing");
            if (!have_w)
                entry_bad(e, "w", "(worker id) is missing");
            if (!have_f)
                entry_bad(e, "f", "(frame) is missing");
        }
    }
    return 0;
}

/* Acknowledge and delete the oversized entries of bt on the broker: they
 * are refused for good, and their bytes should not stay there. */
static void drop_oversized(broker_t *b, const broker_batch_t *bt)
{
    for (int i = 0; i < bt->n; i++) {
        if (!bt->e[i].oversized)
            continue;
        char e[256];
        const char *ack[] = {"XACK", b->k_games, BROKER_GROUP, bt->e[i].id};
        const char *del[] = {"XDEL", b->k_games, bt->e[i].id};
        redisReply *r = cmd(b, 4, ack, NULL, e, sizeof e);
        if (r)
            freeReplyObject(r);
        r = b->c ? cmd(b, 3, del, NULL, e, sizeof e) : NULL;
        if (r)
            freeReplyObject(r);
        /* not connected: it stays pending, and is refused again when read again */
    }
}

static int read_once(broker_t *b, const char *consumer, int pending, int count, int block_ms,
                     broker_batch_t *bt, char *err, size_t errlen)
{
    if (!b->c) {
        snprintf(err, errlen, "broker %.64s is not connected (%.100s)", b->u.host, b->last_err);
        return -1;
    }
    char cnt[16], blk[16];
    snprintf(cnt, sizeof cnt, "%d", count);
    snprintf(blk, sizeof blk, "%d", block_ms);
    const char *av[12];
    int ac = 0;
    av[ac++] = "XREADGROUP";
    av[ac++] = "GROUP";
    av[ac++] = BROKER_GROUP;
    av[ac++] = consumer;
    av[ac++] = "COUNT";
    av[ac++] = cnt;
    if (!pending && block_ms > 0) {
        av[ac++] = "BLOCK";
        av[ac++] = blk;
    }
    av[ac++] = "STREAMS";
    av[ac++] = b->k_games;
    av[ac++] = pending ? "0" : ">";
    /* hiredis sends it; the reply is read below, straight off the socket
     * (its own reader holds nothing between the replies of a blocking
     * connection) */
    int done = 0;
    if (b->c->reader->pos != b->c->reader->len ||
        redisAppendCommandArgv(b->c, ac, av, NULL) != REDIS_OK)
        goto out_broken;
    while (!done)
        if (redisBufferWrite(b->c, &done) != REDIS_OK)
            goto out_broken;
    rd_t *r = malloc(sizeof *r);
    if (!r) {
        snprintf(err, errlen, "out of memory");
        drop(b, "out of memory");
        return -1;
    }
    r->fd = b->c->fd;
    r->at = r->len = 0;
    r->why[0] = '\0';
    char rerr[256] = "";
    int rc = read_entries(r, bt, rerr, sizeof rerr);
    if (rc == 0 && r->at != r->len)
        rc = -2, snprintf(r->why, sizeof r->why, "protocol error (bytes after the reply)");
    if (rc == -2) {
        char why[200];
        snprintf(why, sizeof why, "%s", r->why);
        free(r);
        snprintf(err, errlen, "broker %.64s:%d: XREADGROUP: %.120s", b->u.host, b->u.port, why);
        drop(b, why);
        bt->n = 0;
        return -1;
    }
    free(r);
    if (rc == -4) {
        /* an entry past the limit: the rest of the reply is not read, the
         * connection goes (the cheapest way to skip the bytes on their
         * way) and a new one refuses the entry; what followed it in the
         * reply is pending now, for the caller's next pending read */
        redisFree(b->c);
        b->c = NULL;
        bt->incomplete = 1;
        char ce[256];
        if (connect_now(b, ce, sizeof ce) != 0) {
            b->down_since = util_now_ms() * 1e-3;
            b->attempts = 1;
            b->backoff_s = BACKOFF_MIN_S;
            b->next_try = b->down_since + b->backoff_s;
        }
        rc = 0;
    }
    if (rc == -3) {
        bt->n = 0;
        snprintf(err, errlen, "broker %.64s:%d: XREADGROUP: %.150s", b->u.host, b->u.port, rerr);
        if (strstr(rerr, "NOGROUP") && broker_group_create(b, err, errlen) == 0)
            return 0; /* the broker lost the group (restart without persistence): read again */
        if (strncmp(rerr, "NOAUTH", 6) == 0 || strncmp(rerr, "WRONGPASS", 9) == 0) {
            b->fatal = 1;
            drop(b, "authentication");
        }
        return -1;
    }
    for (int i = 0; i < bt->n; i++)
        bt->e[i].frame = bt->frame_off[i] == SIZE_MAX ? NULL : bt->bytes + bt->frame_off[i];
    drop_oversized(b, bt);
    return 0;
out_broken:
    snprintf(err, errlen, "broker %.64s:%d: XREADGROUP: %.100s", b->u.host, b->u.port,
             b->c->errstr[0] ? b->c->errstr : "cannot send");
    drop(b, "connection lost");
    return -1;
}

int broker_read(broker_t *b, const char *consumer, int pending, int count, int block_ms,
                broker_batch_t *bt, char *err, size_t errlen)
{
    bt->n = 0;
    bt->nbytes = 0;
    bt->incomplete = 0;
    return read_once(b, consumer, pending, count, block_ms, bt, err, errlen);
}

/* The id just after "ms-seq", for XTRIM MINID (which keeps ids >= it). */
static void id_next(const char *id, char *out, size_t outlen)
{
    unsigned long long ms = 0, seq = 0;
    if (sscanf(id, "%llu-%llu", &ms, &seq) != 2) {
        snprintf(out, outlen, "0-0");
        return;
    }
    if (seq == UINT64_MAX)
        snprintf(out, outlen, "%llu-0", ms + 1);
    else
        snprintf(out, outlen, "%llu-%llu", ms, seq + 1);
}

int broker_ack(broker_t *b, const broker_batch_t *bt, char *err, size_t errlen)
{
    if (bt->n == 0)
        return 0;
    const char **av = malloc(((size_t)bt->n + 3) * sizeof *av);
    if (!av) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int ac = 0;
    av[ac++] = "XACK";
    av[ac++] = b->k_games;
    av[ac++] = BROKER_GROUP;
    for (int i = 0; i < bt->n; i++)
        av[ac++] = bt->e[i].id;
    redisReply *r = cmd(b, ac, av, NULL, err, errlen);
    free(av);
    if (!r)
        return -1;
    freeReplyObject(r);
    /* Trim below the oldest entry still pending, or, with none pending,
     * up to the last entry delivered: nothing unread is ever trimmed. */
    const char *pv[] = {"XPENDING", b->k_games, BROKER_GROUP};
    r = cmd(b, 3, pv, NULL, err, errlen);
    if (!r)
        return -1;
    char minid[64];
    if (r->type == REDIS_REPLY_ARRAY && r->elements >= 2 && r->element[0]->type == REDIS_REPLY_INTEGER &&
        r->element[0]->integer > 0 && r->element[1]->type == REDIS_REPLY_STRING)
        snprintf(minid, sizeof minid, "%.*s", (int)r->element[1]->len, r->element[1]->str);
    else
        id_next(bt->e[bt->n - 1].id, minid, sizeof minid);
    freeReplyObject(r);
    const char *tv[] = {"XTRIM", b->k_games, "MINID", minid};
    r = cmd(b, 4, tv, NULL, err, errlen);
    if (!r)
        return -1;
    freeReplyObject(r);
    return 0;
}

long long broker_pending(broker_t *b, char *err, size_t errlen)
{
    const char *pv[] = {"XPENDING", b->k_games, BROKER_GROUP};
    redisReply *r = cmd(b, 3, pv, NULL, err, errlen);
    if (!r)
        return -1;
    long long n = -1;
    if (r->type == REDIS_REPLY_ARRAY && r->elements >= 1 &&
        r->element[0]->type == REDIS_REPLY_INTEGER)
        n = r->element[0]->integer;
    else
        snprintf(err, errlen, "broker: unexpected reply to XPENDING");
    freeReplyObject(r);
    return n;
}

/* ---- models ---- */

int broker_publish_model(broker_t *b, uint64_t gen, const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rbe");
    if (!f) {
        snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
        return -1;
    }
    int rc = -1;
    uint8_t *data = NULL;
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || st.st_size <= 0 || (uint64_t)st.st_size > MODEL_MAX_BYTES) {
        snprintf(err, errlen, "%s: unusable size for a model", path);
        goto out_close;
    }
    size_t len = (size_t)st.st_size;
    data = malloc(len);
    if (!data || fread(data, 1, len, f) != len) {
        snprintf(err, errlen, "cannot read %s", path);
        goto out_close;
    }
    char g[24], c[16], n[24];
    snprintf(g, sizeof g, "%" PRIu64, gen);
    snprintf(c, sizeof c, "%08" PRIx32, (uint32_t)crc32(0L, data, (uInt)len));
    snprintf(n, sizeof n, "%zu", len);
    /* data first, gen last: a reader that sees the new gen finds its data */
    const char *av[] = {"HSET", b->k_model, "data", (const char *)data, "crc", c, "size", n,
                        "path", path, "gen", g};
    size_t lens[12];
    for (int i = 0; i < 12; i++)
        lens[i] = strlen(av[i]);
    lens[3] = len;
    redisReply *r = cmd(b, 12, av, lens, err, errlen);
    if (r) {
        freeReplyObject(r);
        rc = 0;
    }
out_close:
    free(data);
    fclose(f);
    return rc;
}

int broker_model_gen(broker_t *b, uint64_t *gen, char *err, size_t errlen)
{
    const char *av[] = {"HGET", b->k_model, "gen"};
    redisReply *r = cmd(b, 3, av, NULL, err, errlen);
    if (!r)
        return -1;
    int rc = 1;
    if (r->type == REDIS_REPLY_STRING) {
        char *end;
        *gen = strtoull(r->str, &end, 10);
        rc = *end ? -1 : 0;
        if (rc)
            snprintf(err, errlen, "broker: model generation '%.20s' is not a number", r->str);
    }
    freeReplyObject(r);
    return rc;
}

int broker_fetch_model(broker_t *b, broker_model_t *m, char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    const char *av[] = {"HMGET", b->k_model, "gen", "crc", "path", "data"};
    redisReply *r = cmd(b, 6, av, NULL, err, errlen);
    if (!r)
        return -1;
    int rc = -1;
    if (r->type != REDIS_REPLY_ARRAY || r->elements != 4) {
        snprintf(err, errlen, "broker: unexpected reply to HMGET %s", b->k_model);
        goto out_free_reply;
    }
    redisReply **e = r->element;
    if (e[0]->type != REDIS_REPLY_STRING) {
        rc = 1;
        goto out_free_reply;
    }
    char *end;
    m->gen = strtoull(e[0]->str, &end, 10);
    unsigned long crc = e[1]->type == REDIS_REPLY_STRING ? strtoul(e[1]->str, &end, 16) : 0;
    if (e[1]->type != REDIS_REPLY_STRING || *end || e[3]->type != REDIS_REPLY_STRING ||
        e[3]->len == 0) {
        snprintf(err, errlen, "model generation %" PRIu64 " on the broker lacks its crc or data",
                 m->gen);
        goto out_free_reply;
    }
    m->crc = (uint32_t)crc;
    if (e[2]->type == REDIS_REPLY_STRING)
        snprintf(m->path, sizeof m->path, "%.*s", (int)e[2]->len, e[2]->str);
    uint32_t got = (uint32_t)crc32(0L, (const Bytef *)e[3]->str, (uInt)e[3]->len);
    if (got != m->crc) {
        snprintf(err, errlen, "model generation %" PRIu64 " from the broker fails its CRC "
                 "(published %08" PRIx32 ", bytes give %08" PRIx32 ")", m->gen, m->crc, got);
        goto out_free_reply;
    }
    m->data = malloc(e[3]->len);
    if (!m->data) {
        snprintf(err, errlen, "out of memory for a %zu-byte model", (size_t)e[3]->len);
        goto out_free_reply;
    }
    memcpy(m->data, e[3]->str, e[3]->len);
    m->len = e[3]->len;
    rc = 0;
out_free_reply:
    freeReplyObject(r);
    return rc;
}

int broker_worker_state(broker_t *b, uint64_t worker_id, const char *state, char *err,
                        size_t errlen)
{
    char wid[24];
    snprintf(wid, sizeof wid, "%016" PRIx64, worker_id);
    const char *av[] = {"HSET", b->k_workers, wid, state};
    redisReply *r = cmd(b, 4, av, NULL, err, errlen);
    if (!r)
        return -1;
    freeReplyObject(r);
    return 0;
}

int broker_drop_run(broker_t *b, char *err, size_t errlen)
{
    const char *av[] = {"DEL", b->k_games, b->k_settings, b->k_model, b->k_workers};
    redisReply *r = cmd(b, 5, av, NULL, err, errlen);
    if (!r)
        return -1;
    freeReplyObject(r);
    return 0;
}

#else /* no hiredis */

struct broker {
    int unused;
};

int broker_available(void) { return 0; }

#define NOT_BUILT(err, errlen) \
    snprintf(err, errlen, "this build has no Redis broker support (install libhiredis-dev and " \
             "reconfigure with -Dredis=enabled)")

broker_t *broker_create(const broker_url_t *u, const char *run, char *err, size_t errlen)
{
    (void)u;
    (void)run;
    NOT_BUILT(err, errlen);
    return NULL;
}
void broker_free(broker_t *b) { free(b); }
int broker_connected(const broker_t *b) { (void)b; return 0; }
int broker_fatal(const broker_t *b) { (void)b; return 1; }
void broker_disconnect(broker_t *b) { (void)b; }
int broker_ensure(broker_t *b, int *fresh, char *err, size_t errlen)
{
    (void)b;
    if (fresh)
        *fresh = 0;
    NOT_BUILT(err, errlen);
    return -1;
}
void broker_state(const broker_t *b, char *out, size_t outlen)
{
    (void)b;
    snprintf(out, outlen, "not built");
}
#pragma GCC diagnostic ignored "-Wunused-parameter"
#define STUB_ERR(...) { (void)b; NOT_BUILT(err, errlen); return -1; }
int broker_publish_settings(broker_t *b, const broker_settings_t *s, char *err, size_t errlen)
STUB_ERR(s)
int broker_fetch_settings(broker_t *b, broker_settings_t *s, char *err, size_t errlen) STUB_ERR()
int broker_add_game(broker_t *b, uint64_t r, uint64_t w, const uint8_t *f, size_t l, char *err,
                    size_t errlen) STUB_ERR()
long long broker_stream_len(broker_t *b, char *err, size_t errlen) STUB_ERR()
int broker_group_create(broker_t *b, char *err, size_t errlen) STUB_ERR()
void broker_batch_free(broker_batch_t *bt) { memset(bt, 0, sizeof *bt); }
int broker_read(broker_t *b, const char *c, int p, int n, int bl, broker_batch_t *bt, char *err,
                size_t errlen) STUB_ERR()
int broker_ack(broker_t *b, const broker_batch_t *bt, char *err, size_t errlen) STUB_ERR()
long long broker_pending(broker_t *b, char *err, size_t errlen) STUB_ERR()
int broker_publish_model(broker_t *b, uint64_t g, const char *p, char *err, size_t errlen)
STUB_ERR()
int broker_model_gen(broker_t *b, uint64_t *g, char *err, size_t errlen) STUB_ERR()
int broker_fetch_model(broker_t *b, broker_model_t *m, char *err, size_t errlen) STUB_ERR()
int broker_worker_state(broker_t *b, uint64_t w, const char *s, char *err, size_t errlen)
STUB_ERR()
int broker_drop_run(broker_t *b, char *err, size_t errlen) STUB_ERR()

#endif
