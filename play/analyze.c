/* The analysis engine (see analyze.h): a reader, a bounded queue and a
 * pool of workers, one searcher each. */
#include "play/analyze.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "engine/gamefile.h"
#include "util/sjson.h"
#include "util/util.h"

typedef struct query {
    char id[ANALYZE_ID_MAX + 1];   /* the id's JSON text */
    board_t board;
    uint32_t visits;               /* 0: time only */
    double time_ms;                /* 0: visits only */
    int candidates;
    volatile int stop;             /* set by a terminate, read by the search */
} query_t;

typedef struct worker {
    analyze_t *a;
    pthread_t th;
    searcher_t *s;
    query_t *cur;                  /* the query being searched (a->lock), NULL when idle */
    /* the root and its candidates' positions, for the net's draw estimate */
    board_t boards[ANALYZE_MAX_CANDIDATES + 1];
    float wdl[3 * (ANALYZE_MAX_CANDIDATES + 1)];
    analyze_cand_t cand[ANALYZE_MAX_CANDIDATES];
} worker_t;

struct analyze {
    analyze_opts_t o;
    rule_t rule;                   /* a query's defaults */
    int size;
    int board_max;
    int nw;
    worker_t *w;
    pthread_mutex_t lock;          /* queue, eof, each worker's cur */
    pthread_cond_t nonempty, nonfull;
    query_t *queue[ANALYZE_QUEUE_MAX];
    int head, count;
    bool eof;
    pthread_mutex_t out_lock;      /* one answer line at a time */
    FILE *out;
};

void analyze_opts_default(analyze_opts_t *o)
{
    *o = (analyze_opts_t){.device = "auto", .precision = NN_PRECISION_AUTO, .rule = -1,
                          .visits = 400, .candidates = 5, .threads = 1, .workers = 2};
    search_settings_default(&o->search);
}

/* ------------------------------------------------------------ candidates */

int analyze_candidates(const mcts_t *t, const mcts_result_t *r, analyze_cand_t *out, int k)
{
    mcts_child_info_t ch[BOARD_CELLS];
    int n = mcts_root_children(t, ch, BOARD_CELLS), m = 0;
    for (int i = 0; i < n; i++) {
        if (r->proven < 0)
            ch[i].proven = -1;
        else if (r->proven > 0 && ch[i].move == r->best_move)
            ch[i].proven = 1;
        if (ch[i].proven)
            ch[i].q = (float)ch[i].proven;
    }
    mcts_rank_children(ch, n);
    for (int i = 0; i < n && m < k; i++) {
        if (ch[i].visits == 0 && ch[i].proven == 0)
            continue;
        out[m] = (analyze_cand_t){.move = ch[i].move, .visits = ch[i].visits, .q = ch[i].q,
                                  .prior = ch[i].prior, .proven = ch[i].proven};
        out[m].npv = mcts_root_child_pv(t, ch[i].move, out[m].pv, MCTS_PV_MAX);
        m++;
    }
    return m;
}

/* ---------------------------------------------------------------- create */

analyze_t *analyze_create(const analyze_opts_t *o, char *note, size_t notelen, char *err,
                          size_t errlen)
{
    char e[256], nn_note[512] = "";
    if (note && notelen)
        note[0] = '\0';
    if (o->workers < 1 || o->workers > ANALYZE_MAX_WORKERS || o->candidates < 1 ||
        o->candidates > ANALYZE_MAX_CANDIDATES || o->visits < 0 || o->time_ms < 0) {
        snprintf(err, errlen, "analyze options: workers 1..%d, candidates 1..%d, visits and "
                 "time >= 0", ANALYZE_MAX_WORKERS, ANALYZE_MAX_CANDIDATES);
        return NULL;
    }
    if (o->visits == 0 && o->time_ms == 0) {
        snprintf(err, errlen, "a search needs a budget: --visits N or --time MS");
        return NULL;
    }
    if (!o->model) {
        snprintf(err, errlen, "--model is required (a .gzm file, or mcts:uniform)");
        return NULL;
    }
    nn_model_t *m = NULL;
    bool patnet = strncmp(o->model, "patnet:", 7) == 0;
    if (strcmp(o->model, "mcts:uniform") != 0 && !patnet) {
        m = nn_model_load(o->model, e, sizeof e);
        if (!m) {
            snprintf(err, errlen, "%s", e);
            return NULL;
        }
    }
    analyze_t *a = calloc(1, sizeof *a);
    if (!a)
        goto out_free_model_nomem;
    pthread_mutex_init(&a->lock, NULL);
    pthread_mutex_init(&a->out_lock, NULL);
    pthread_cond_init(&a->nonempty, NULL);
    pthread_cond_init(&a->nonfull, NULL);
    a->o = *o;
    a->board_max = m ? m->cfg.board_max : BOARD_MAX;
    a->rule = o->rule >= 0 ? (rule_t)o->rule
              : m && m->rule < RULE_COUNT ? (rule_t)m->rule : RULE_FREESTYLE;
    a->size = o->size > 0 ? o->size : BOARD_DEFAULT < a->board_max ? BOARD_DEFAULT : a->board_max;
    if (a->size > a->board_max) {
        snprintf(err, errlen, "%s serves boards up to %dx%d, not %dx%d", o->model, a->board_max,
                 a->board_max, a->size, a->size);
        goto out_free_analyze;
    }
    a->w = calloc((size_t)o->workers, sizeof *a->w);
    if (!a->w)
        goto out_free_analyze_nomem;
    a->nw = o->workers;
    searcher_opts_t so;
    searcher_opts_default(&so);
    so.device = o->device ? o->device : "auto";
    so.precision = o->precision;
    so.search_threads = o->threads;
    so.net_threads = 1;   /* one CPU thread per net: workers x threads nets in all */
    so.size = a->size;
    so.patnet = patnet ? o->model + 7 : NULL;
    so.tree_bytes = o->tree_bytes ? o->tree_bytes
                    : o->visits > 0 ? mcts_tree_bytes((uint32_t)o->visits, a->board_max)
                    : (size_t)1 << 30;
    searcher_opts_apply(&so, &o->search);
    for (int i = 0; i < a->nw; i++) {
        a->w[i].a = a;
        a->w[i].s = searcher_create(m, &so, i == 0 ? nn_note : NULL, i == 0 ? sizeof nn_note : 0,
                                    e, sizeof e);
        if (!a->w[i].s) {
            snprintf(err, errlen, "%s: %s", o->model, e);
            goto out_free_analyze;
        }
    }
    if (note && notelen)
        snprintf(note, notelen, "rule %s, %dx%d by default%s%s", rule_name(a->rule), a->size,
                 a->size, nn_note[0] ? "; " : "", nn_note);
    nn_model_free(m);
    return a;
out_free_analyze_nomem:
    snprintf(err, errlen, "out of memory for %d analysis workers", o->workers);
out_free_analyze:
    analyze_free(a);
    nn_model_free(m);
    return NULL;
out_free_model_nomem:
    snprintf(err, errlen, "out of memory");
    nn_model_free(m);
    return NULL;
}

void analyze_free(analyze_t *a)
{
    if (!a)
        return;
    for (int i = 0; i < a->nw; i++)
        searcher_free(a->w[i].s);
    free(a->w);
    pthread_mutex_destroy(&a->lock);
    pthread_mutex_destroy(&a->out_lock);
    pthread_cond_destroy(&a->nonempty);
    pthread_cond_destroy(&a->nonfull);
    free(a);
}

rule_t analyze_rule(const analyze_t *a) { return a->rule; }
int analyze_size(const analyze_t *a) { return a->size; }

/* --------------------------------------------------------------- answers */

static void write_line(analyze_t *a, const char *text, size_t len)
{
    pthread_mutex_lock(&a->out_lock);
    fwrite(text, 1, len, a->out);
    fflush(a->out);
    pthread_mutex_unlock(&a->out_lock);
}

static void reply_error(analyze_t *a, const char *id, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void reply_error(analyze_t *a, const char *id, const char *fmt, ...)
{
    char msg[600], js[700], line[ANALYZE_ID_MAX + 760];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    int n = snprintf(line, sizeof line, "{\"id\":%s,\"error\":%s}\n", id,
                     util_json_str(msg, js, sizeof js));
    write_line(a, line, (size_t)n);
}

/* W/D/L from the search's value q = W - L (side to move) and the net's
 * draw estimate, capped so that neither W nor L is negative. */
static void wdl_split(double q, double draw, double out[3])
{
    double cap = 1.0 - (q < 0 ? -q : q);
    if (draw > cap)
        draw = cap;
    if (draw < 0)
        draw = 0;
    out[0] = (1.0 - draw + q) / 2;
    out[1] = draw;
    out[2] = (1.0 - draw - q) / 2;
}

static void put_wdl(FILE *f, const double w[3])
{
    fprintf(f, "\"win\":%.4f,\"draw\":%.4f,\"loss\":%.4f", w[0], w[1], w[2]);
}

static void put_move(FILE *f, int mv, int size)
{
    char s[16];
    move_format_alpha(mv, size, s, sizeof s);
    fprintf(f, "\"%s\"", s);
}

static const char *proven_name(int p) { return p > 0 ? "win" : "loss"; }

static void write_answer(worker_t *w, const query_t *q, const mcts_result_t *r)
{
    const board_t *b = &q->board;
    mcts_t *t = searcher_tree(w->s, 0);
    int nc = analyze_candidates(t, r, w->cand, q->candidates);
    /* the net's draw estimate: the root, and each candidate's position */
    w->boards[0] = *b;
    const board_t *bp[ANALYZE_MAX_CANDIDATES + 1] = {&w->boards[0]};
    for (int i = 0; i < nc; i++) {
        w->boards[i + 1] = *b;
        board_play(&w->boards[i + 1], w->cand[i].move);
        bp[i + 1] = &w->boards[i + 1];
    }
    searcher_wdl(w->s, bp, nc + 1, w->wdl);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) {
        reply_error(w->a, q->id, "out of memory for an answer");
        return;
    }
    double v[3];
    float root_q = r->proven ? (float)r->proven : r->value;
    wdl_split(root_q, w->wdl[1], v);
    fprintf(f, "{\"id\":%s,\"to_move\":\"%s\",\"rule\":\"%s\",\"size\":%d,\"stones\":%d,"
            "\"visits\":%u,\"value\":{", q->id, b->to_move == STONE_BLACK ? "black" : "white",
            rule_name((rule_t)b->rule), b->size, b->nmoves, r->root_visits);
    put_wdl(f, v);
    fputs("},\"candidates\":[", f);
    for (int i = 0; i < nc; i++) {
        const analyze_cand_t *c = &w->cand[i];
        char xy[16];
        move_format_xy(c->move, b->size, xy, sizeof xy);
        fputs(i ? ",{\"move\":" : "{\"move\":", f);
        put_move(f, c->move, b->size);
        fprintf(f, ",\"xy\":\"%s\",\"visits\":%u,", xy, c->visits);
        wdl_split(c->q, w->wdl[3 * (i + 1) + 1], v);
        put_wdl(f, v);
        fprintf(f, ",\"prior\":%.4f,\"pv\":[", c->prior);
        for (int j = 0; j < c->npv; j++) {
            if (j)
                fputc(',', f);
            put_move(f, c->pv[j], b->size);
        }
        fputc(']', f);
        if (c->proven)
            fprintf(f, ",\"proven\":\"%s\"", proven_name(c->proven));
        fputc('}', f);
    }
    fputc(']', f);
    if (r->proven)
        fprintf(f, ",\"proven\":\"%s\"", proven_name(r->proven));
    if (__atomic_load_n(&q->stop, __ATOMIC_RELAXED))
        fputs(",\"terminated\":true", f);
    if (r->mem_full)
        fputs(",\"mem_full\":true", f);
    fprintf(f, ",\"time_ms\":%.0f}\n", r->seconds * 1e3);
    fclose(f);
    write_line(w->a, text, len);
    free(text);
}

static void *worker_main(void *arg)
{
    worker_t *w = arg;
    analyze_t *a = w->a;
    for (;;) {
        pthread_mutex_lock(&a->lock);
        while (a->count == 0 && !a->eof)
            pthread_cond_wait(&a->nonempty, &a->lock);
        if (a->count == 0) {
            pthread_mutex_unlock(&a->lock);
            return NULL;
        }
        query_t *q = a->queue[a->head];
        a->head = (a->head + 1) % ANALYZE_QUEUE_MAX;
        a->count--;
        w->cur = q;
        pthread_cond_signal(&a->nonfull);
        pthread_mutex_unlock(&a->lock);

        char err[256];
        mcts_result_t r;
        mcts_limits_t lim = {.visits = q->visits, .time_ms = q->time_ms, .stop = &q->stop};
        mcts_set_root(searcher_tree(w->s, 0), &q->board);   /* fresh: no reuse across queries */
        if (searcher_search(w->s, &q->board, &lim, &r, err, sizeof err) != 0)
            reply_error(a, q->id, "%s", err);
        else
            write_answer(w, q, &r);

        pthread_mutex_lock(&a->lock);
        w->cur = NULL;
        pthread_mutex_unlock(&a->lock);
        free(q);
    }
}

/* --------------------------------------------------------------- queries */

static bool key_is(const sj_val_t *k, const char *name)
{
    size_t n = strlen(name);
    return k->n == n + 2 && memcmp(k->p + 1, name, n) == 0;
}

/* The board of a query: rule, size, then moves or psq. 0, or -1 with err. */
static int query_board(const analyze_t *a, const char *s, size_t n, board_t *b, char *err,
                       size_t errlen)
{
    sj_val_t v, mv;
    char buf[4096];
    rule_t rule = a->rule;
    long size = a->size;
    bool has_size = sj_get(s, n, "size", &v);
    if (has_size && !sj_int(&v, BOARD_MIN, a->board_max, &size))
        return snprintf(err, errlen, "size must be an integer from %d to %d", BOARD_MIN,
                        a->board_max), -1;
    if (sj_get(s, n, "rule", &v) && (!sj_str(&v, buf, 16) || !rule_parse(buf, &rule)))
        return snprintf(err, errlen, "rule must be freestyle, standard or renju"), -1;
    bool has_moves = sj_get(s, n, "moves", &mv);
    if (sj_get(s, n, "psq", &v)) {
        psq_game_t g;
        if (has_moves)
            return snprintf(err, errlen, "give moves or psq, not both"), -1;
        if (!sj_str(&v, buf, sizeof buf) || !buf[0])
            return snprintf(err, errlen, "psq must be a file path (printable ASCII)"), -1;
        if (psq_load(buf, &g, err, errlen) != 0)
            return -1;
        if (has_size && g.size != size)
            return snprintf(err, errlen, "%.200s is a %dx%d game, not %ldx%ld", buf, g.size, g.size,
                            size, size), -1;
        if (g.size > a->board_max)
            return snprintf(err, errlen, "%.200s is a %dx%d game: the model serves boards up to "
                            "%dx%d", buf, g.size, g.size, a->board_max, a->board_max), -1;
        return psq_to_board(&g, rule, b, err, errlen);
    }
    board_init(b, (int)size, rule);
    if (!has_moves)
        return 0;
    if (mv.kind != SJ_ARR)
        return snprintf(err, errlen, "moves must be an array of moves such as \"h8\" or "
                        "\"7,7\""), -1;
    const char *pos = NULL;
    for (int i = 0; sj_next(&mv, &pos, NULL, &v); i++) {
        int m;
        if (!sj_str(&v, buf, 16) || !move_parse(buf, (int)size, &m))
            return snprintf(err, errlen, "moves[%d] is not a point of the %ldx%ld board", i,
                            size, size), -1;
        move_status_t st = board_check_move(b, m);
        if (st != MOVE_OK)
            return snprintf(err, errlen, "moves[%d] %.16s: %s", i, buf,
                            st == MOVE_OCCUPIED ? "the point is taken"
                            : st == MOVE_FORBIDDEN ? "forbidden for black under renju"
                            : "the game is already over"), -1;
        board_play(b, m);
    }
    return 0;
}

/* The analysis fields of a query into q (its board, budget, candidates). */
static int query_parse(const analyze_t *a, const char *s, size_t n, query_t *q, char *err,
                       size_t errlen)
{
    sj_val_t v;
    long x;
    if (query_board(a, s, n, &q->board, err, errlen) != 0)
        return -1;
    if (board_over(&q->board))
        return snprintf(err, errlen, "the game is over (%s)",
                        q->board.result == RESULT_DRAW ? "the board is full"
                        : q->board.result == RESULT_BLACK ? "black won" : "white won"), -1;
    bool has_visits = sj_get(s, n, "visits", &v), has_time;
    if (has_visits && !sj_int(&v, 1, ANALYZE_MAX_VISITS, &x))
        return snprintf(err, errlen, "visits must be an integer from 1 to %d",
                        ANALYZE_MAX_VISITS), -1;
    q->visits = has_visits ? (uint32_t)x : 0;
    has_time = sj_get(s, n, "time_ms", &v);
    if (has_time && !sj_int(&v, 1, ANALYZE_MAX_TIME_MS, &x))
        return snprintf(err, errlen, "time_ms must be an integer from 1 to %d",
                        ANALYZE_MAX_TIME_MS), -1;
    q->time_ms = has_time ? (double)x : 0;
    if (!has_visits && !has_time) {
        q->visits = (uint32_t)a->o.visits;
        q->time_ms = a->o.visits > 0 ? 0 : a->o.time_ms;
    }
    q->candidates = a->o.candidates;
    if (sj_get(s, n, "candidates", &v)) {
        if (!sj_int(&v, 1, ANALYZE_MAX_CANDIDATES, &x))
            return snprintf(err, errlen, "candidates must be an integer from 1 to %d",
                            ANALYZE_MAX_CANDIDATES), -1;
        q->candidates = (int)x;
    }
    return 0;
}

static const char *const query_fields[] = {"id", "moves", "psq", "rule", "size", "visits",
                                           "time_ms", "candidates", NULL};
static const char *const action_fields[] = {"id", "action", "terminate_id", NULL};

/* Every member of obj is one of names[], given once: 0, or -1 with err. */
static int check_fields(const sj_val_t *obj, const char *const *names, char *err, size_t errlen)
{
    const char *pos = NULL;
    sj_val_t k, v;
    unsigned seen = 0;
    while (sj_next(obj, &pos, &k, &v)) {
        int i = 0;
        while (names[i] && !key_is(&k, names[i]))
            i++;
        if (!names[i] || seen & (1u << i))
            return snprintf(err, errlen, "%s field %.*s", names[i] ? "a repeated" : "an unknown",
                            k.n > 40 ? 40 : (int)k.n, k.p), -1;
        seen |= 1u << i;
    }
    return 0;
}

static void queue_push(analyze_t *a, query_t *q)
{
    pthread_mutex_lock(&a->lock);
    while (a->count == ANALYZE_QUEUE_MAX)
        pthread_cond_wait(&a->nonfull, &a->lock);
    a->queue[(a->head + a->count) % ANALYZE_QUEUE_MAX] = q;
    a->count++;
    pthread_cond_signal(&a->nonempty);
    pthread_mutex_unlock(&a->lock);
}

/* Drop the queued queries with id tid (each answered "terminated") and
 * stop the running ones (each answers with what it found). Returns how
 * many. */
static int terminate(analyze_t *a, const char *tid)
{
    query_t *dropped[ANALYZE_QUEUE_MAX];
    int nd = 0, stopped = 0, kept = 0;
    pthread_mutex_lock(&a->lock);
    for (int i = 0; i < a->count; i++) {
        query_t *q = a->queue[(a->head + i) % ANALYZE_QUEUE_MAX];
        if (strcmp(q->id, tid) == 0)
            dropped[nd++] = q;
        else
            a->queue[(a->head + kept++) % ANALYZE_QUEUE_MAX] = q;
    }
    a->count = kept;
    if (nd)
        pthread_cond_signal(&a->nonfull);
    for (int i = 0; i < a->nw; i++)
        if (a->w[i].cur && strcmp(a->w[i].cur->id, tid) == 0) {
            __atomic_store_n(&a->w[i].cur->stop, 1, __ATOMIC_RELAXED);
            stopped++;
        }
    pthread_mutex_unlock(&a->lock);
    for (int i = 0; i < nd; i++) {
        reply_error(a, tid, "terminated");
        free(dropped[i]);
    }
    return nd + stopped;
}

/* An id's JSON text into out: a string or a number of at most
 * ANALYZE_ID_MAX bytes. */
static bool take_id(const sj_val_t *v, char *out)
{
    if ((v->kind != SJ_STR && v->kind != SJ_NUM) || v->n > ANALYZE_ID_MAX)
        return false;
    memcpy(out, v->p, v->n);
    out[v->n] = '\0';
    return true;
}

/* An action (query_version, terminate): answered here. 0, or -1 with err. */
static int handle_action(analyze_t *a, const char *s, size_t n, const sj_val_t *obj,
                         const char *id, char *err, size_t errlen)
{
    char act[32], tid[ANALYZE_ID_MAX + 1], line[2 * ANALYZE_ID_MAX + 128];
    sj_val_t v;
    int len;
    if (check_fields(obj, action_fields, err, errlen) != 0)
        return -1;
    if (!sj_get(s, n, "action", &v) || !sj_str(&v, act, sizeof act))
        act[0] = '\0';
    if (strcmp(act, "query_version") == 0) {
        len = snprintf(line, sizeof line, "{\"id\":%s,\"action\":\"query_version\","
                       "\"name\":\"gomoku-zero\",\"version\":\"%s\"}\n", id, GZ_VERSION);
    } else if (strcmp(act, "terminate") == 0) {
        if (!sj_get(s, n, "terminate_id", &v) || !take_id(&v, tid))
            return snprintf(err, errlen, "terminate needs terminate_id: the id of a query"), -1;
        int found = terminate(a, tid);
        len = snprintf(line, sizeof line, "{\"id\":%s,\"action\":\"terminate\","
                       "\"terminate_id\":%s,\"found\":%d}\n", id, tid, found);
    } else {
        return snprintf(err, errlen, "action must be terminate or query_version"), -1;
    }
    write_line(a, line, (size_t)len);
    return 0;
}

/* One line: an action is answered, a good query queued. 0, or -1 with err
 * and *id (the query's id text, "null" when it has none). */
static int handle_line(analyze_t *a, const char *s, size_t n, char *id, char *err,
                       size_t errlen)
{
    sj_val_t v;
    if (sj_check(s, n, err, errlen) != 0)
        return -1;
    size_t lead = 0;
    while (lead < n && strchr(" \t\r\n", s[lead]))
        lead++;
    while (n > lead && strchr(" \t\r\n", s[n - 1]))
        n--;
    if (s[lead] != '{')
        return snprintf(err, errlen, "a query is a JSON object"), -1;
    sj_val_t obj = {SJ_OBJ, s + lead, n - lead};
    if (!sj_get(s, n, "id", &v))
        return snprintf(err, errlen, "the query has no id"), -1;
    if (!take_id(&v, id)) {
        snprintf(id, ANALYZE_ID_MAX + 1, "null");
        return snprintf(err, errlen, "id must be a string or a number (at most %d bytes)",
                        ANALYZE_ID_MAX), -1;
    }
    if (sj_get(s, n, "action", &v))
        return handle_action(a, s, n, &obj, id, err, errlen);
    if (check_fields(&obj, query_fields, err, errlen) != 0)
        return -1;
    query_t *q = calloc(1, sizeof *q);
    if (!q)
        return snprintf(err, errlen, "out of memory for a query"), -1;
    snprintf(q->id, sizeof q->id, "%s", id);
    if (query_parse(a, s, n, q, err, errlen) != 0) {
        free(q);
        return -1;
    }
    queue_push(a, q);
    return 0;
}

int analyze_run(analyze_t *a, FILE *in, FILE *out, char *err, size_t errlen)
{
    a->out = out;
    a->eof = false;
    int started = 0;
    while (started < a->nw &&
           pthread_create(&a->w[started].th, NULL, worker_main, &a->w[started]) == 0)
        started++;
    char *line = started == a->nw ? malloc(ANALYZE_LINE_MAX + 1) : NULL;
    bool ok = line != NULL;
    if (line) {
        size_t n = 0;
        bool long_line = false;
        for (;;) {
            int c = getc(in);
            if (c != EOF && c != '\n') {
                if (n < ANALYZE_LINE_MAX)
                    line[n++] = (char)c;
                else
                    long_line = true;
                continue;
            }
            line[n] = '\0';
            char id[ANALYZE_ID_MAX + 1] = "null", msg[600];
            if (long_line)
                reply_error(a, id, "a query line longer than %d bytes", ANALYZE_LINE_MAX);
            else if (n > 0 && strspn(line, " \t\r") < n &&
                     handle_line(a, line, n, id, msg, sizeof msg) != 0)
                reply_error(a, id, "%s", msg);
            n = 0;
            long_line = false;
            if (c == EOF)
                break;
        }
        free(line);
    }
    pthread_mutex_lock(&a->lock);
    a->eof = true;
    pthread_cond_broadcast(&a->nonempty);
    pthread_mutex_unlock(&a->lock);
    for (int i = 0; i < started; i++)
        pthread_join(a->w[i].th, NULL);
    if (!ok) {
        snprintf(err, errlen, "cannot start %d analysis workers", a->nw);
        return -1;
    }
    return 0;
}
