/* Watching a run directory for the page, read only: status.json (rewritten
 * atomically by the trainer), metrics.csv and elo.csv (appended; may be
 * rewritten or truncated), games/shard-*.gzr (frames appended), models/
 * (checkpoints). One thread polls them about once a second; readers take
 * JSON deltas under the lock. Memory is bounded: at most CSV_MAX_ROWS rows
 * per table (thinned by half when full), RUN_GAMES games, RUN_MAX_CKPT
 * checkpoints, and one frame of shard bytes. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "web/serve.h"
#include "engine/record.h"
#include "play/match.h"
#include "selfplay/rundir.h"
#include "util/util.h"

#define CSV_MAX_COLS 10
#define CSV_MAX_ROWS 20000
#define CSV_MAX_LINE 4096
#define RUN_GAMES 24                 /* newest finished games kept */
#define RUN_MAX_CKPT 512             /* newest checkpoints listed */
#define STATUS_MAX (256u << 10)
#define SHARD_TAIL (1u << 20)        /* a run already going: start this far from a shard's end */
#define SHARD_READ (8u << 20)        /* bytes read from a shard per poll */

/* How a column we keep comes from the file's fields. */
typedef enum {
    CSV_NUM,                         /* a number the row must have */
    CSV_OPT,                         /* a number, or NaN when empty or not in the file */
    CSV_WLD_N,                       /* from a "W-L-D" field: its games; NaN when empty */
    CSV_WLD_LO, CSV_WLD_HI           /* ... the 95% interval of its Elo difference
                                      * (match_elo); NaN when empty or unbounded */
} csv_kind_t;

typedef struct csv_col {
    const char *name;                /* as sent to the page */
    const char *src;                 /* the file's column it is read from */
    csv_kind_t kind;
} csv_col_t;

/* A CSV file that grows by appended lines: the columns we want, by name. */
typedef struct csv_tail {
    const char *name;                /* "metrics.csv" */
    const csv_col_t *want;
    int nwant;
    bool have_header;
    int col[CSV_MAX_COLS];           /* index in the file's header, -1 when not there */
    off_t off;
    ino_t ino;
    double *rows;                    /* nrows x nwant */
    size_t nrows;
    uint64_t epoch;                  /* bumped when readers must start over */
    uint64_t bad;                    /* lines skipped */
} csv_tail_t;

typedef struct run_game {
    uint64_t id;
    char shard[32];
    uint8_t rule, size, result, flags;
    uint32_t gen, nplies;
    int16_t moves[BOARD_CELLS];
    float values[BOARD_CELLS];       /* search value at each ply, side to move at that ply */
} run_game_t;

typedef struct run_ckpt {
    uint64_t step;
    int64_t bytes;
    int64_t mtime;
} run_ckpt_t;

struct serve_run {
    char dir[4096];
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t changed;
    int stop;
    uint64_t version;

    char *status;                    /* last good status.json, on one line */
    uint64_t status_ver;
    csv_tail_t metrics, elo;

    run_game_t games[RUN_GAMES];     /* ring by id */
    uint64_t ngames;                 /* ids handed out: the newest game is ngames */
    uint64_t shard;                  /* number of the shard being read */
    bool have_shard;
    off_t shard_off;
    uint8_t *buf;                    /* shard bytes not yet decoded */
    size_t buf_n, buf_cap;
    bool resync;                     /* started inside a shard: skip to the first frame quietly */
    uint64_t bad_frames;

    run_ckpt_t ckpt[RUN_MAX_CKPT];
    int nckpt;
    uint64_t ckpt_ver;

    char notes[5][256];              /* what could not be read, latest per source (NOTE_*) */
    uint64_t notes_ver;
};

enum { NOTE_STATUS, NOTE_METRICS, NOTE_ELO, NOTE_GAMES, NOTE_MODELS, NOTE_COUNT };

static void note(serve_run_t *r, int which, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void note(serve_run_t *r, int which, const char *fmt, ...)
{
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (strcmp(msg, r->notes[which]) != 0) {
        snprintf(r->notes[which], sizeof r->notes[which], "%s", msg);
        r->notes_ver++;
    }
}

/* ---- status.json ------------------------------------------------------ */

static bool poll_status(serve_run_t *r)
{
    char p[4200], err[160];
    snprintf(p, sizeof p, "%s/status.json", r->dir);
    FILE *f = fopen(p, "rb");
    if (!f) {
        if (errno != ENOENT)
            note(r, NOTE_STATUS, "status.json: %s", strerror(errno));
        return false;
    }
    char *buf = malloc(STATUS_MAX + 1);
    size_t n = buf ? fread(buf, 1, STATUS_MAX + 1, f) : 0;
    fclose(f);
    bool changed = false;
    if (!buf)
        return false;
    if (n > STATUS_MAX) {
        note(r, NOTE_STATUS, "status.json: larger than %u bytes, ignored", STATUS_MAX);
    } else if (sj_check(buf, n, err, sizeof err) != 0 || buf[0] != '{') {
        note(r, NOTE_STATUS, "status.json: %s", buf[0] != '{' ? "not a JSON object" : err);
    } else {
        /* newlines are whitespace between tokens in valid JSON: one line for SSE */
        for (size_t i = 0; i < n; i++)
            if (buf[i] == '\n' || buf[i] == '\r')
                buf[i] = ' ';
        buf[n] = '\0';
        note(r, NOTE_STATUS, "%s", "");
        if (!r->status || strcmp(r->status, buf) != 0) {
            free(r->status);
            r->status = buf;
            buf = NULL;
            r->status_ver++;
            changed = true;
        }
    }
    free(buf);
    return changed;
}

/* ---- CSV tables ------------------------------------------------------- */

static void csv_reset(csv_tail_t *t)
{
    t->off = 0;
    t->nrows = 0;
    t->epoch++;
    t->have_header = false;
    for (int i = 0; i < t->nwant; i++)
        t->col[i] = -1;
}

/* Split line into at most max fields in place; returns the count. */
static int csv_split(char *line, char **fields, int max)
{
    int n = 0;
    char *p = line;
    for (;;) {
        if (n == max)
            return max + 1;
        fields[n++] = p;
        char *c = strchr(p, ',');
        if (!c)
            return n;
        *c = '\0';
        p = c + 1;
    }
}

static bool csv_header(csv_tail_t *t, char *line)
{
    char *f[64];
    int nf = csv_split(line, f, 64);
    for (int i = 0; i < t->nwant; i++) {
        t->col[i] = -1;
        for (int k = 0; k < nf && k < 64; k++)
            if (strcmp(f[k], t->want[i].src) == 0)
                t->col[i] = k;
        if (t->col[i] < 0 && t->want[i].kind == CSV_NUM)
            return false;
    }
    t->have_header = true;
    return true;
}

/* One field of kind k into *v; false when a row cannot have it. */
static bool csv_value(csv_kind_t k, const char *s, double *v)
{
    char *end;
    if (!s || !*s) {
        *v = NAN;
        return k != CSV_NUM;
    }
    if (k == CSV_NUM || k == CSV_OPT) {
        *v = strtod(s, &end);
        return !*end && isfinite(*v);
    }
    unsigned w, l, d;
    int used = 0;
    if (sscanf(s, "%u-%u-%u%n", &w, &l, &d, &used) != 3 || s[used] || w + l + d == 0 ||
        w + l + d > 100000000u)
        return false;
    double elo, lo, hi;
    match_elo(w, l, d, &elo, &lo, &hi);
    *v = k == CSV_WLD_N ? (double)(w + l + d) : k == CSV_WLD_LO ? lo : hi;
    if (!isfinite(*v))
        *v = NAN;
    return true;
}

static void csv_row(csv_tail_t *t, char *line)
{
    char *f[64];
    int nf = csv_split(line, f, 64);
    double v[CSV_MAX_COLS];
    for (int i = 0; i < t->nwant; i++) {
        const char *s = t->col[i] >= 0 && t->col[i] < nf ? f[t->col[i]] : NULL;
        if (!csv_value(t->want[i].kind, s, &v[i])) {
            t->bad++;
            return;
        }
    }
    if (t->nrows == CSV_MAX_ROWS) {   /* thin out: keep every other row */
        for (size_t k = 0; k < CSV_MAX_ROWS / 2; k++)
            memcpy(t->rows + k * t->nwant, t->rows + 2 * k * t->nwant,
                   sizeof(double) * t->nwant);
        t->nrows = CSV_MAX_ROWS / 2;
        t->epoch++;
    }
    memcpy(t->rows + t->nrows * t->nwant, v, sizeof(double) * t->nwant);
    t->nrows++;
}

/* path opened read-only, with its status in st; -1 when either fails. */
static int open_stat(const char *path, struct stat *st)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd >= 0 && fstat(fd, st) != 0) {
        close(fd);
        fd = -1;
    }
    return fd;
}

/* Read the complete lines appended since the last poll. */
static bool poll_csv(serve_run_t *r, csv_tail_t *t)
{
    char p[4200];
    snprintf(p, sizeof p, "%s/%s", r->dir, t->name);
    struct stat st;
    int fd = open_stat(p, &st);
    if (fd < 0)
        return false;
    bool changed = false;
    if (st.st_ino != t->ino || st.st_size < t->off) {   /* replaced or truncated */
        if (t->off > 0 || t->nrows > 0)
            changed = true;
        csv_reset(t);
        t->ino = st.st_ino;
    }
    char line[CSV_MAX_LINE + 1];
    size_t have = 0;
    off_t pos = t->off;
    uint64_t bad0 = t->bad;
    for (;;) {
        char *nl = memchr(line, '\n', have);
        if (!nl) {
            if (have == CSV_MAX_LINE) {    /* an absurdly long line: skip it */
                t->bad++;
                pos += (off_t)have;
                have = 0;
                t->off = pos;
                continue;
            }
            if (pos + (off_t)have >= st.st_size)
                break;                     /* the rest is a line still being written */
            ssize_t k = pread(fd, line + have, CSV_MAX_LINE - have, pos + (off_t)have);
            if (k <= 0)
                break;
            have += (size_t)k;
            continue;
        }
        *nl = '\0';
        size_t used = (size_t)(nl - line) + 1;
        if (nl > line && nl[-1] == '\r')
            nl[-1] = '\0';
        if (!t->have_header) {
            if (!csv_header(t, line))
                t->bad++;
        } else {
            size_t n0 = t->nrows;
            uint64_t e0 = t->epoch;
            csv_row(t, line);
            changed |= t->nrows != n0 || t->epoch != e0;
        }
        memmove(line, line + used, have - used);
        have -= used;
        pos += (off_t)used;
        t->off = pos;
    }
    if (t->bad != bad0)
        note(r, t == &r->elo ? NOTE_ELO : NOTE_METRICS, "%s: %" PRIu64 " unreadable lines skipped", t->name, t->bad);
    close(fd);
    return changed;
}

/* ---- game shards ------------------------------------------------------ */

/* Numbers NNNNNN of files PREFIX NNNNNN SUFFIX in dir, ascending; count or -1. */
static int list_numbered(const char *dir, const char *prefix, const char *suffix,
                         uint64_t *out, int max, int64_t *bytes, int64_t *mtime)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        uint64_t v;
        if (!run_numbered_name(e->d_name, prefix, suffix, &v))
            continue;
        int at = n < max ? n++ : -1;
        if (at < 0) {   /* full: replace the smallest if v is newer */
            int lo = 0;
            for (int k = 1; k < max; k++)
                if (out[k] < out[lo])
                    lo = k;
            if (out[lo] >= v)
                continue;
            at = lo;
        }
        out[at] = v;
        if (bytes || mtime) {
            struct stat st;
            char p[4480];   /* a dir of up to 4200 bytes, a name of up to 255 */
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            bool ok = stat(p, &st) == 0;
            if (bytes)
                bytes[at] = ok ? (int64_t)st.st_size : -1;
            if (mtime)
                mtime[at] = ok ? (int64_t)st.st_mtime : 0;
        }
    }
    closedir(d);
    /* insertion sort, carrying the stats along */
    for (int i = 1; i < n; i++)
        for (int k = i; k > 0 && out[k - 1] > out[k]; k--) {
            uint64_t t = out[k]; out[k] = out[k - 1]; out[k - 1] = t;
            if (bytes) { int64_t b = bytes[k]; bytes[k] = bytes[k - 1]; bytes[k - 1] = b; }
            if (mtime) { int64_t m = mtime[k]; mtime[k] = mtime[k - 1]; mtime[k - 1] = m; }
        }
    return n;
}

static void keep_game(serve_run_t *r, const game_record_t *g)
{
    run_game_t *k = &r->games[r->ngames % RUN_GAMES];
    k->id = ++r->ngames;
    snprintf(k->shard, sizeof k->shard, "shard-%06" PRIu64 ".gzr", r->shard);
    k->rule = g->rule;
    k->size = g->size;
    k->result = g->result;
    k->flags = g->flags;
    k->gen = g->model_gen;
    k->nplies = g->nplies;
    for (uint32_t i = 0; i < g->nplies; i++) {
        k->moves[i] = g->plies[i].move;
        k->values[i] = g->plies[i].root_value;
    }
}

/* Decode what the buffer holds; returns whether a game was added. */
static bool decode_frames(serve_run_t *r, game_record_t *g)
{
    bool added = false;
    size_t at = 0;
    char err[256];
    while (at < r->buf_n) {
        size_t used = 0;
        frame_status_t st = record_decode(r->buf + at, r->buf_n - at, &used, g, err, sizeof err);
        if (st == FRAME_NEED_MORE)
            break;
        if (st == FRAME_OK && record_validate(g, err, sizeof err) == 0) {
            keep_game(r, g);
            added = true;
        } else if (!r->resync) {
            r->bad_frames++;
            note(r, NOTE_GAMES, "shard-%06" PRIu64 ".gzr: %s (%" PRIu64 " bad frames so far)",
                 r->shard, err, r->bad_frames);
        }
        if (st == FRAME_OK)
            r->resync = false;
        at += used ? used : 1;
    }
    memmove(r->buf, r->buf + at, r->buf_n - at);
    r->buf_n -= at;
    return added;
}

/* Read new bytes of the current shard; true when games were added. */
static bool read_shard(serve_run_t *r, game_record_t *g, off_t *size_out)
{
    char p[4400];
    snprintf(p, sizeof p, "%s/games/shard-%06" PRIu64 ".gzr", r->dir, r->shard);
    struct stat st;
    int fd = open_stat(p, &st);
    *size_out = 0;
    if (fd < 0)
        return false;
    bool added = false;
    *size_out = st.st_size;
    if (st.st_size < r->shard_off) {   /* truncated: start the shard over */
        r->shard_off = 0;
        r->buf_n = 0;
    }
    size_t budget = SHARD_READ;
    while (r->shard_off < st.st_size && budget > 0) {
        size_t want = FRAME_HEADER_BYTES + FRAME_MAX_PAYLOAD + 64 - r->buf_n;
        if (want > budget)
            want = budget;
        if (r->buf_cap < r->buf_n + want) {
            uint8_t *nb = realloc(r->buf, r->buf_n + want);
            if (!nb)
                break;
            r->buf = nb;
            r->buf_cap = r->buf_n + want;
        }
        ssize_t k = pread(fd, r->buf + r->buf_n, want, r->shard_off);
        if (k <= 0)
            break;
        r->buf_n += (size_t)k;
        r->shard_off += k;
        budget -= (size_t)k;
        added |= decode_frames(r, g);
    }
    close(fd);
    return added;
}

static bool poll_games(serve_run_t *r)
{
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/games", r->dir);
    uint64_t nums[2];
    int n = list_numbered(dir, "shard-", ".gzr", nums, 2, NULL, NULL);
    if (n <= 0)
        return false;
    game_record_t g;
    record_init(&g);
    bool added = false;
    off_t size;
    if (!r->have_shard || nums[n - 1] < r->shard) {   /* first look, or the shards were replaced */
        r->have_shard = true;
        r->shard = nums[n - 1];
        r->buf_n = 0;
        r->shard_off = 0;
        char p[4400];
        struct stat st;
        snprintf(p, sizeof p, "%s/shard-%06" PRIu64 ".gzr", dir, r->shard);
        if (stat(p, &st) == 0 && st.st_size > (off_t)SHARD_TAIL) {
            r->shard_off = st.st_size - (off_t)SHARD_TAIL;
            r->resync = true;
        }
    }
    added |= read_shard(r, &g, &size);
    if (nums[n - 1] > r->shard && r->shard_off >= size) {   /* rotated: on to the newest */
        r->shard = nums[n - 1];
        r->shard_off = 0;
        r->buf_n = 0;
        added |= read_shard(r, &g, &size);
    }
    record_free(&g);
    return added;
}

/* ---- checkpoints ------------------------------------------------------ */

static bool poll_models(serve_run_t *r)
{
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/models", r->dir);
    uint64_t nums[RUN_MAX_CKPT];
    int64_t bytes[RUN_MAX_CKPT], mtime[RUN_MAX_CKPT];
    int n = list_numbered(dir, "", ".gzm", nums, RUN_MAX_CKPT, bytes, mtime);
    if (n < 0)
        n = 0;
    bool same = n == r->nckpt;
    for (int i = 0; i < n && same; i++)
        same = r->ckpt[i].step == nums[i] && r->ckpt[i].bytes == bytes[i] &&
               r->ckpt[i].mtime == mtime[i];
    if (same)
        return false;
    for (int i = 0; i < n; i++)
        r->ckpt[i] = (run_ckpt_t){nums[i], bytes[i], mtime[i]};
    r->nckpt = n;
    r->ckpt_ver++;
    return true;
}

int serve_run_models(const char *dir, uint64_t *nums, int max)
{
    char d[4200];
    snprintf(d, sizeof d, "%s/models", dir);
    int n = list_numbered(d, "", ".gzm", nums, max, NULL, NULL);
    for (int i = 0; i < n / 2; i++) {   /* ascending from the list: newest first */
        uint64_t t = nums[i];
        nums[i] = nums[n - 1 - i];
        nums[n - 1 - i] = t;
    }
    return n;
}

/* ---- the thread and the readers --------------------------------------- */

static void *watch_main(void *arg)
{
    serve_run_t *r = arg;
    pthread_mutex_lock(&r->lock);
    while (!r->stop) {
        uint64_t nv = r->notes_ver;
        bool changed = poll_status(r);
        changed |= poll_csv(r, &r->metrics);
        changed |= poll_csv(r, &r->elo);
        changed |= poll_games(r);
        changed |= poll_models(r);
        if (changed || nv != r->notes_ver || r->version == 0) {
            r->version++;
            pthread_cond_broadcast(&r->changed);
        }
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += 1;
        pthread_cond_timedwait(&r->changed, &r->lock, &ts);
    }
    pthread_mutex_unlock(&r->lock);
    return NULL;
}

static void csv_init(csv_tail_t *t, const char *name, const csv_col_t *want, int nwant)
{
    t->name = name;
    t->want = want;
    t->nwant = nwant;
    csv_reset(t);
}

serve_run_t *serve_run_create(const char *dir, char *err, size_t errlen)
{
    struct stat st;
    if (strlen(dir) >= 4000) {
        snprintf(err, errlen, "run directory path too long");
        return NULL;
    }
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "%s: %s", dir, errno && stat(dir, &st) != 0 ? strerror(errno)
                                                                         : "not a directory");
        return NULL;
    }
    serve_run_t *r = calloc(1, sizeof *r);
    if (!r) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    snprintf(r->dir, sizeof r->dir, "%s", dir);
#define NUM(c) {c, c, CSV_NUM}
    static const csv_col_t mcols[] = {NUM("step"), NUM("loss_policy"), NUM("loss_value"),
                                      NUM("loss_total"), NUM("games"), NUM("games_per_s"),
                                      NUM("samples_per_s"), NUM("unix_time")};
#undef NUM
    /* scripts/train-loop's ladder: each round's match against the previous
     * model and against bot:greedy, with their W-L-D (the anchor row has none) */
    static const csv_col_t ecols[] = {
        {"step", "step", CSV_NUM}, {"elo", "elo", CSV_NUM},
        {"elo_vs_prev", "elo_vs_prev", CSV_OPT}, {"games_vs_prev", "wld_vs_prev", CSV_WLD_N},
        {"elo_vs_prev_lo", "wld_vs_prev", CSV_WLD_LO}, {"elo_vs_prev_hi", "wld_vs_prev", CSV_WLD_HI},
        {"elo_vs_greedy", "elo_vs_greedy", CSV_OPT}, {"games_vs_greedy", "wld_vs_greedy", CSV_WLD_N},
        {"elo_vs_greedy_lo", "wld_vs_greedy", CSV_WLD_LO},
        {"elo_vs_greedy_hi", "wld_vs_greedy", CSV_WLD_HI}};
    _Static_assert(sizeof mcols / sizeof mcols[0] <= CSV_MAX_COLS &&
                   sizeof ecols / sizeof ecols[0] <= CSV_MAX_COLS, "CSV_MAX_COLS");
    int nm = (int)(sizeof mcols / sizeof mcols[0]), ne = (int)(sizeof ecols / sizeof ecols[0]);
    csv_init(&r->metrics, "metrics.csv", mcols, nm);
    csv_init(&r->elo, "elo.csv", ecols, ne);
    r->metrics.rows = malloc(sizeof(double) * CSV_MAX_ROWS * (size_t)nm);
    r->elo.rows = malloc(sizeof(double) * CSV_MAX_ROWS * (size_t)ne);
    if (!r->metrics.rows || !r->elo.rows) {
        snprintf(err, errlen, "out of memory");
        goto out_free;
    }
    pthread_mutex_init(&r->lock, NULL);
    pthread_cond_init(&r->changed, NULL);
    if (pthread_create(&r->thread, NULL, watch_main, r) != 0) {
        snprintf(err, errlen, "cannot start the run watcher thread");
        pthread_cond_destroy(&r->changed);
        pthread_mutex_destroy(&r->lock);
        goto out_free;
    }
    return r;
out_free:
    free(r->metrics.rows);
    free(r->elo.rows);
    free(r);
    return NULL;
}

void serve_run_free(serve_run_t *r)
{
    if (!r)
        return;
    pthread_mutex_lock(&r->lock);
    r->stop = 1;
    pthread_cond_broadcast(&r->changed);
    pthread_mutex_unlock(&r->lock);
    pthread_join(r->thread, NULL);
    pthread_cond_destroy(&r->changed);
    pthread_mutex_destroy(&r->lock);
    free(r->status);
    free(r->metrics.rows);
    free(r->elo.rows);
    free(r->buf);
    free(r);
}

uint64_t serve_run_wait(serve_run_t *r, uint64_t seen, int timeout_ms)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += timeout_ms / 1000;
    ts.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    pthread_mutex_lock(&r->lock);
    while (r->version == seen && !r->stop)
        if (pthread_cond_timedwait(&r->changed, &r->lock, &ts) != 0)
            break;
    uint64_t v = r->version;
    pthread_mutex_unlock(&r->lock);
    return v;
}

/* "name": {"reset": b, "columns": [...], "rows": [[...], ...]} for rows not yet sent */
static void csv_delta(const csv_tail_t *t, uint64_t *epoch, uint64_t *sent, FILE *f)
{
    bool reset = *epoch != t->epoch;
    size_t from = reset ? 0 : (size_t)*sent;
    fprintf(f, "\"%.*s\": {\"reset\": %s, \"columns\": [", (int)(strlen(t->name) - 4), t->name,
            reset ? "true" : "false");
    for (int i = 0; i < t->nwant; i++)
        fprintf(f, "%s\"%s\"", i ? ", " : "", t->want[i].name);
    fputs("], \"rows\": [", f);
    for (size_t k = from; k < t->nrows; k++) {
        fputs(k > from ? ", [" : "[", f);
        for (int i = 0; i < t->nwant; i++) {
            double v = t->rows[k * t->nwant + i];
            if (isfinite(v))
                fprintf(f, "%s%.10g", i ? ", " : "", v);
            else
                fprintf(f, "%snull", i ? ", " : "");
        }
        fputc(']', f);
    }
    fputs("]}", f);
    *epoch = t->epoch;
    *sent = t->nrows;
}

static void game_json(const run_game_t *g, FILE *f)
{
    fprintf(f, "{\"id\": %" PRIu64 ", \"shard\": \"%s\", \"rule\": \"%s\", \"size\": %d, "
               "\"result\": \"%s\", \"resigned\": %s, \"generation\": %u, \"moves\": [",
            g->id, g->shard, rule_name((rule_t)g->rule), g->size,
            result_str((result_t)g->result), g->flags & RECORD_FLAG_RESIGNED ? "true" : "false",
            (unsigned)g->gen);
    for (uint32_t i = 0; i < g->nplies; i++)
        fprintf(f, "%s%d", i ? "," : "", g->moves[i]);
    fputs("], \"values\": [", f);
    for (uint32_t i = 0; i < g->nplies; i++)
        fprintf(f, "%s%.3f", i ? "," : "", isfinite(g->values[i]) ? g->values[i] : 0.0);
    fputs("]}", f);
}

bool serve_run_delta(serve_run_t *r, serve_cursor_t *c, FILE *f)
{
    pthread_mutex_lock(&r->lock);
    bool any = false;
    fputc('{', f);
#define SEP() do { if (any) fputs(", ", f); any = true; } while (0)
    if (r->status && c->status_ver != r->status_ver) {
        SEP();
        fprintf(f, "\"status\": %s", r->status);
        c->status_ver = r->status_ver;
    }
    if (c->metrics_epoch != r->metrics.epoch || c->metrics_rows != r->metrics.nrows) {
        SEP();
        csv_delta(&r->metrics, &c->metrics_epoch, &c->metrics_rows, f);
    }
    if (c->elo_epoch != r->elo.epoch || c->elo_rows != r->elo.nrows) {
        SEP();
        csv_delta(&r->elo, &c->elo_epoch, &c->elo_rows, f);
    }
    if (c->last_game != r->ngames) {
        SEP();
        uint64_t from = c->last_game + 1;
        if (r->ngames >= RUN_GAMES && from <= r->ngames - RUN_GAMES)
            from = r->ngames - RUN_GAMES + 1;
        if (from > r->ngames + 1)   /* cannot happen for a cursor of this run */
            from = r->ngames + 1;
        fputs("\"games\": [", f);
        for (uint64_t id = from; id <= r->ngames; id++) {
            if (id > from)
                fputs(", ", f);
            game_json(&r->games[(id - 1) % RUN_GAMES], f);
        }
        fputc(']', f);
        c->last_game = r->ngames;
    }
    if (c->ckpt_ver != r->ckpt_ver) {
        SEP();
        fputs("\"checkpoints\": [", f);
        for (int i = r->nckpt - 1; i >= 0; i--)
            fprintf(f, "%s{\"name\": \"%06" PRIu64 ".gzm\", \"step\": %" PRIu64
                       ", \"bytes\": %" PRId64 ", \"mtime\": %" PRId64 "}",
                    i < r->nckpt - 1 ? ", " : "", r->ckpt[i].step, r->ckpt[i].step,
                    r->ckpt[i].bytes, r->ckpt[i].mtime);
        fputc(']', f);
        c->ckpt_ver = r->ckpt_ver;
    }
    if (c->notes_ver != r->notes_ver) {
        SEP();
        fputs("\"notes\": [", f);
        bool first = true;
        for (int i = 0; i < NOTE_COUNT; i++)
            if (r->notes[i][0]) {
                fputs(first ? "" : ", ", f);
                util_json_write(f, r->notes[i]);
                first = false;
            }
        fputc(']', f);
        c->notes_ver = r->notes_ver;
    }
#undef SEP
    fputc('}', f);
    pthread_mutex_unlock(&r->lock);
    return any;
}
