/* Games against the model for the page. A fixed table of games, each with
 * its own board and player; a new game takes a free slot or the least
 * recently used idle one. Searches run in the requesting HTTP thread (one
 * thread per connection, so watching never waits for them) with the table
 * unlocked and the game marked busy; at most max_searches run at once. */
#include <ctype.h>
#include <stdarg.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "engine/gamefile.h"
#include "play/player.h"
#include "web/serve.h"
#include "util/util.h"
#include "nn/nn.h"

#define PLAY_ID_LEN 16
#define PLAY_CACHE_BYTES ((size_t)16 << 20)

typedef struct play_game {
    bool used, busy;
    char id[PLAY_ID_LEN + 1];
    uint64_t last_used;
    board_t board;
    int human;                  /* STONE_BLACK or STONE_WHITE */
    player_t *player;
    char model[4300];           /* what the player is (for the page and .psq) */
    int model_rule;             /* the rule its net was trained for; -1: not a net */
    float black_wr[BOARD_CELLS];   /* black's win rate after each ply by the model's search
                                    * (the model's own moves); NAN after the person's */
    bool have_analysis;
    int analysis_ply;           /* the model's move the analysis belongs to (ply index) */
    player_analysis_t analysis;
} play_game_t;

#define PLAY_CHECKPOINTS 64   /* checkpoints tried, newest first, for one that loads */

struct serve_play {
    serve_play_opts_t o;
    char model_desc[4400];
    uint64_t newest_seen;       /* the run's newest checkpoint when good_model was chosen */
    bool have_good;
    char good_model[4300];      /* the newest checkpoint of the run that loads */
    int good_rule;              /* the rule it was trained for */
    int model_rule;             /* o->model's rule; -1 for a bot */
    bool have_start;            /* --load: the first game's position */
    psq_game_t start;
    rule_t start_rule;
    int max_size, default_size;
    pthread_mutex_t lock;
    pthread_cond_t idle;
    int searching;
    uint64_t tick, rng;
    play_game_t *games;
};

/* The newest checkpoint of the run that loads, as `gomoku train` resumes
 * from: one that does not (torn, corrupt) is skipped and named in note
 * (else note is ""). Each is loaded to check it, so the answer is kept
 * while the newest checkpoint stays the same. Under p->lock when the
 * server runs. */
static bool good_checkpoint(serve_play_t *p, char *spec, size_t len, int *rule, char *note,
                            size_t notelen, char *err, size_t errlen)
{
    uint64_t nums[PLAY_CHECKPOINTS];
    int n = serve_run_models(p->o.run_dir, nums, PLAY_CHECKPOINTS);
    note[0] = '\0';
    if (n <= 0) {
        snprintf(err, errlen, "the run %s has no checkpoint yet", p->o.run_dir);
        return false;
    }
    if (p->have_good && nums[0] == p->newest_seen) {
        snprintf(spec, len, "%s", p->good_model);
        *rule = p->good_rule;
        return true;
    }
    char first_err[300] = "";
    for (int i = 0; i < n; i++) {
        char path[4300], e[256];
        snprintf(path, sizeof path, "%s/models/%06" PRIu64 ".gzm", p->o.run_dir, nums[i]);
        nn_model_t *m = nn_model_load(path, e, sizeof e);
        if (!m) {
            if (!first_err[0])
                snprintf(first_err, sizeof first_err, "%s", e);
            continue;
        }
        p->good_rule = m->rule < RULE_COUNT ? (int)m->rule : -1;
        *rule = p->good_rule;
        nn_model_free(m);
        if (i > 0)
            snprintf(note, notelen, "%d newer checkpoint%s unusable (%s): using %06" PRIu64 ".gzm",
                     i, i > 1 ? "s" : "", first_err, nums[i]);
        snprintf(p->good_model, sizeof p->good_model, "%s", path);
        p->newest_seen = nums[0];
        p->have_good = true;
        snprintf(spec, len, "%s", path);
        return true;
    }
    snprintf(err, errlen, "none of the newest %d checkpoints of %s loads (newest: %s)", n,
             p->o.run_dir, first_err);
    return false;
}

/* The player spec for a new game and the rule its net was trained for (-1:
 * a bot); false with err when there is none. */
static bool play_spec(serve_play_t *p, char *spec, size_t len, int *rule, char *note,
                      size_t notelen, char *err, size_t errlen)
{
    note[0] = '\0';
    if (p->o.model) {
        snprintf(spec, len, "%s", p->o.model);
        *rule = p->model_rule;
        return true;
    }
    return good_checkpoint(p, spec, len, rule, note, notelen, err, errlen);
}

/* --load FILE: the first game's position, checked now under the rule the
 * page offers first (the model's). 0, or -1 with err. */
static int load_start(serve_play_t *p, const char *path, int model_rule, char *err, size_t errlen)
{
    char e[256];
    if (psq_load(path, &p->start, e, sizeof e) != 0) {
        snprintf(err, errlen, "--load %s: %s", path, e);
        return -1;
    }
    if (p->start.size > p->max_size) {
        snprintf(err, errlen, "--load %s: a %dx%d board; the model serves boards up to %dx%d",
                 path, p->start.size, p->start.size, p->max_size, p->max_size);
        return -1;
    }
    p->start_rule = model_rule >= 0 ? (rule_t)model_rule : RULE_FREESTYLE;
    board_t b;
    if (psq_to_board(&p->start, p->start_rule, &b, e, sizeof e) != 0) {
        snprintf(err, errlen, "--load %s: under %s: %s", path, rule_name(p->start_rule), e);
        return -1;
    }
    p->have_start = true;
    return 0;
}

serve_play_t *serve_play_create(const serve_play_opts_t *o, char *err, size_t errlen)
{
    serve_play_t *p = calloc(1, sizeof *p);
    if (!p) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    p->o = *o;
    p->games = calloc((size_t)o->max_games, sizeof *p->games);
    if (!p->games) {
        snprintf(err, errlen, "out of memory");
        goto out_free;
    }
    if (getrandom(&p->rng, sizeof p->rng, 0) != (ssize_t)sizeof p->rng)   /* ids hard to guess */
        p->rng = (uint64_t)time(NULL) ^ ((uint64_t)(uintptr_t)p << 16);
    p->max_size = BOARD_MAX;
    p->default_size = BOARD_DEFAULT;
    char spec[4300], note[600];
    int rule = -1;
    p->model_rule = -1;
    if (!play_spec(p, spec, sizeof spec, &rule, note, sizeof note, err, errlen)) {
        /* a run that has not checkpointed yet (or none loads yet): play once one does */
        if (strstr(err, "loads"))
            fprintf(stderr, "gomoku serve: %s: games start once a checkpoint loads\n", err);
        snprintf(p->model_desc, sizeof p->model_desc, "newest checkpoint of %s", o->run_dir);
    } else {
        if (note[0])
            fprintf(stderr, "gomoku serve: %s\n", note);
        snprintf(p->model_desc, sizeof p->model_desc, "%s%s", o->model ? "" : "newest checkpoint: ",
                 spec);
        if (strncmp(spec, "bot:", 4) != 0) {
            char e[256];
            nn_model_t *m = nn_model_load(spec, e, sizeof e);
            if (!m) {
                snprintf(err, errlen, "%s", e);
                goto out_free;
            }
            p->max_size = (int)m->cfg.board_max;
            if (p->max_size > BOARD_MAX)
                p->max_size = BOARD_MAX;
            p->default_size = p->max_size;
            if (o->model && m->rule < RULE_COUNT)
                p->model_rule = rule = (int)m->rule;
            nn_model_free(m);
        } else {
            char e[256];
            player_t *pl = player_bot_create(spec + 4, 1, e, sizeof e);
            if (!pl) {
                snprintf(err, errlen, "%s", e);
                goto out_free;
            }
            player_free(pl);
        }
    }
    if (o->load && load_start(p, o->load, rule, err, errlen) != 0)
        goto out_free;
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->idle, NULL);
    return p;
out_free:
    free(p->games);
    free(p);
    return NULL;
}

void serve_play_free(serve_play_t *p)
{
    if (!p)
        return;
    for (int i = 0; i < p->o.max_games; i++)
        player_free(p->games[i].player);
    pthread_cond_destroy(&p->idle);
    pthread_mutex_destroy(&p->lock);
    free(p->games);
    free(p);
}

void serve_play_info(serve_play_t *p, FILE *f)
{
    fputs("{\"model\": ", f);
    util_json_write(f, p->model_desc);
    fprintf(f, ", \"min_size\": %d, \"max_size\": %d, \"default_size\": %d, \"visits\": %d, "
               "\"rules\": [\"freestyle\", \"standard\", \"renju\"], \"max_games\": %d",
            BOARD_MIN, p->max_size, p->default_size, p->o.visits, p->o.max_games);
    pthread_mutex_lock(&p->lock);
    int rule = p->o.model ? p->model_rule : p->have_good ? p->good_rule : -1;
    pthread_mutex_unlock(&p->lock);
    if (rule >= 0)
        fprintf(f, ", \"model_rule\": \"%s\"", rule_name((rule_t)rule));
    if (p->have_start) {
        fprintf(f, ", \"start\": {\"size\": %d, \"rule\": \"%s\", \"moves\": [", p->start.size,
                rule_name(p->start_rule));
        for (int i = 0; i < p->start.nmoves; i++)
            fprintf(f, "%s%d", i ? "," : "", p->start.moves[i]);
        fputs("]}", f);
    }
    fputc('}', f);
}

static void state_json(const play_game_t *g, FILE *f)
{
    const board_t *b = &g->board;
    fprintf(f, "{\"id\": \"%s\", \"size\": %d, \"rule\": \"%s\", \"human\": \"%s\", "
               "\"to_move\": \"%s\", \"result\": \"%s\", \"model\": ",
            g->id, b->size, rule_name((rule_t)b->rule),
            g->human == STONE_BLACK ? "black" : "white",
            b->to_move == STONE_BLACK ? "black" : "white", result_str((result_t)b->result));
    util_json_write(f, g->model);
    fputs(", \"moves\": [", f);
    for (int i = 0; i < b->nmoves; i++)
        fprintf(f, "%s%d", i ? "," : "", b->moves[i]);
    fputs("], \"forbidden\": [", f);
    int pts[BOARD_CELLS];
    int nf = board_over(b) ? 0 : board_forbidden_points(b, pts);
    for (int i = 0; i < nf; i++)
        fprintf(f, "%s%d", i ? "," : "", pts[i]);
    fputs("], \"black_winrates\": [", f);
    for (int i = 0; i < b->nmoves; i++) {
        if (isfinite(g->black_wr[i]))
            fprintf(f, "%s%.4f", i ? "," : "", g->black_wr[i]);
        else
            fprintf(f, "%snull", i ? "," : "");
    }
    fputc(']', f);
    if (g->model_rule >= 0 && g->model_rule != b->rule) {
        /* as the terminal's note (player_model.c) */
        fprintf(f, ", \"note\": \"the model was trained for %s, playing %s\"",
                rule_name((rule_t)g->model_rule), rule_name((rule_t)b->rule));
    }
    if (g->have_analysis) {
        const player_analysis_t *a = &g->analysis;
        fprintf(f, ", \"analysis\": {\"ply\": %d, \"winrate\": %.4f, \"winrate_for\": \"%s\", "
                   "\"proven\": %d, \"visits\": %u, \"pv\": [", g->analysis_ply, a->winrate,
                g->human == STONE_BLACK ? "white" : "black", a->proven, (unsigned)a->visits);
        for (int i = 0; i < a->npv; i++)
            fprintf(f, "%s%d", i ? "," : "", a->pv[i]);
        fputs("], \"candidates\": [", f);
        for (int i = 0; i < a->ncand; i++)
            fprintf(f, "%s{\"move\": %d, \"visits\": %u, \"winrate\": %.4f}", i ? ", " : "",
                    a->cand[i].move, (unsigned)a->cand[i].visits, a->cand[i].winrate);
        fputs("]}", f);
    }
    fputc('}', f);
}

/* Find game id and mark it busy; NULL (and the status written to f) when
 * it does not exist or is busy. */
static play_game_t *play_acquire(serve_play_t *p, const char *id, FILE *f, int *status)
{
    size_t n = strlen(id);
    bool ok = n == PLAY_ID_LEN;
    for (size_t i = 0; ok && i < n; i++)
        ok = (id[i] >= '0' && id[i] <= '9') || (id[i] >= 'a' && id[i] <= 'f');
    if (!ok) {
        *status = serve_error(f, 404, "no game '%.40s' (a game id is 16 hex digits)", id);
        return NULL;
    }
    pthread_mutex_lock(&p->lock);
    play_game_t *g = NULL, *mine = NULL;
    for (int i = 0; i < p->o.max_games && !g; i++)
        if (p->games[i].used && strcmp(p->games[i].id, id) == 0)
            g = &p->games[i];
    if (!g)
        *status = serve_error(f, 404, "no game %s (finished games are dropped for new ones)", id);
    else if (g->busy)   /* another request has it: not ours to use or release */
        *status = serve_error(f, 409, "game %s is busy with a move", id);
    else {
        g->busy = true;
        g->last_used = ++p->tick;
        mine = g;
    }
    pthread_mutex_unlock(&p->lock);
    return mine;
}

static void play_release(serve_play_t *p, play_game_t *g)
{
    pthread_mutex_lock(&p->lock);
    g->busy = false;
    pthread_mutex_unlock(&p->lock);
}

/* Ends a request on game g and releases it: st 0 writes the game's state
 * as the 200 reply; any other st is an HTTP status whose error is written. */
static int reply_release(serve_play_t *p, play_game_t *g, FILE *f, int st)
{
    if (st == 0) {
        state_json(g, f);
        st = 200;
    }
    play_release(p, g);
    return st;
}

/* The model moves while it is to move and the game goes on. 0, or an HTTP
 * status with the error written. g is busy (owned by this thread). */
static int play_model(serve_play_t *p, play_game_t *g, FILE *f)
{
    while (!board_over(&g->board) && g->board.to_move != g->human) {
        pthread_mutex_lock(&p->lock);
        while (p->searching >= p->o.max_searches)
            pthread_cond_wait(&p->idle, &p->lock);
        p->searching++;
        pthread_mutex_unlock(&p->lock);
        int mv = MOVE_NONE;
        char err[256];
        int rc = player_genmove(g->player, &g->board, &mv, err, sizeof err);
        pthread_mutex_lock(&p->lock);
        p->searching--;
        pthread_cond_signal(&p->idle);
        pthread_mutex_unlock(&p->lock);
        if (rc != 0)
            return serve_error(f, 500, "the model failed to move: %s", err);
        if (board_play(&g->board, mv) != MOVE_OK)
            return serve_error(f, 500, "the model chose an illegal move %d", mv);
        g->have_analysis = player_analysis(g->player, &g->analysis);
        g->analysis_ply = g->board.nmoves - 1;
        float wr = g->have_analysis ? g->analysis.winrate : NAN;
        g->black_wr[g->analysis_ply] = g->human == STONE_BLACK ? 1.0f - wr : wr;
        player_notify(g->player, &g->board, mv);
    }
    return 0;
}

/* Why move may not be played on b: an HTTP status, and the reason in msg. */
static int play_refusal(const board_t *b, int move, char *msg, size_t len)
{
    move_status_t st = board_check_move(b, move);
    if (st == MOVE_FORBIDDEN) {
        snprintf(msg, len, "forbidden for black under renju: %s",
                 forbid_str(board_forbidden_kind(b, move)));
        return 422;
    }
    if (st == MOVE_OFF_BOARD) {
        snprintf(msg, len, "point %d is off the %dx%d board", move, b->size, b->size);
        return 400;
    }
    snprintf(msg, len, "%s", st == MOVE_OCCUPIED ? "that point is occupied" : "the game is over");
    return 409;
}

static int play_start(serve_play_t *p, const board_t *start, int human, FILE *f);

int serve_play_new(serve_play_t *p, const char *body, size_t n, FILE *f)
{
    char err[256], rule_s[16] = "freestyle", color[8] = "black";
    long size = p->default_size;
    sj_val_t v;
    if (sj_check(body, n, err, sizeof err) != 0)
        return serve_error(f, 400, "%s", err);
    if (body[strspn(body, " \t\r\n")] != '{')
        return serve_error(f, 400, "the body must be a JSON object");
    if (sj_get(body, n, "size", &v) && !sj_int(&v, BOARD_MIN, p->max_size, &size))
        return serve_error(f, 400, "size must be an integer from %d to %d", BOARD_MIN,
                           p->max_size);
    rule_t rule;
    if (sj_get(body, n, "rule", &v) && !sj_str(&v, rule_s, sizeof rule_s))
        return serve_error(f, 400, "rule must be freestyle, standard or renju");
    if (!rule_parse(rule_s, &rule))
        return serve_error(f, 400, "unknown rule '%s' (freestyle, standard or renju)", rule_s);
    if (sj_get(body, n, "color", &v) &&
        (!sj_str(&v, color, sizeof color) || (strcmp(color, "black") && strcmp(color, "white"))))
        return serve_error(f, 400, "color must be \"black\" or \"white\"");
    board_t b;
    board_init(&b, (int)size, rule);
    if (sj_get(body, n, "moves", &v)) {
        if (v.kind != SJ_ARR)
            return serve_error(f, 400, "moves must be an array of points y*size+x");
        const char *q = v.p + 1, *end = v.p + v.n - 1;
        int i = 0;
        while (q < end) {
            char *e;
            q += strspn(q, " \t\r\n,");
            if (q >= end)
                break;
            long mv = strtol(q, &e, 10);
            if (e == q || mv < 0 || mv >= (long)size * size ||
                (*e != ',' && *e != ']' && !isspace((unsigned char)*e)))
                return serve_error(f, 400, "moves[%d] is not a point of the %ldx%ld board", i,
                                   size, size);
            if (board_check_move(&b, (int)mv) != MOVE_OK) {
                play_refusal(&b, (int)mv, err, sizeof err);
                return serve_error(f, 400, "moves[%d]: %s", i, err);
            }
            board_play(&b, (int)mv);
            q = e;
            i++;
        }
    }
    return play_start(p, &b, color[0] == 'b' ? STONE_BLACK : STONE_WHITE, f);
}

int serve_play_load(serve_play_t *p, const char *rule_s, const char *color, const char *text,
                    size_t n, FILE *f)
{
    char err[256];
    rule_t rule = RULE_FREESTYLE;
    if (rule_s && !rule_parse(rule_s, &rule))
        return serve_error(f, 400, "unknown rule '%.40s' (freestyle, standard or renju)", rule_s);
    if (color && strcmp(color, "black") && strcmp(color, "white"))
        return serve_error(f, 400, "color must be black or white");
    psq_game_t pg;
    board_t b;
    if (text[strspn(text, " \t\r\n")] == '\0')
        return serve_error(f, 400, "the body is empty: send the .psq file's text");
    if (psq_parse(text, n, &pg, err, sizeof err) != 0)
        return serve_error(f, 400, "not a .psq game: %s", err);
    if (pg.size > p->max_size)
        return serve_error(f, 400, "a %dx%d board; the model serves boards up to %dx%d", pg.size,
                           pg.size, p->max_size, p->max_size);
    if (psq_to_board(&pg, rule, &b, err, sizeof err) != 0)
        return serve_error(f, 400, "under %s: %s", rule_name(rule), err);
    int human = color ? (color[0] == 'b' ? STONE_BLACK : STONE_WHITE) : b.to_move;
    return play_start(p, &b, human, f);
}

/* A new game from position b with the person playing human: the model
 * moves when it is to move. 200 with its state, or an error status. */
static int play_start(serve_play_t *p, const board_t *start, int human, FILE *f)
{
    char spec[4300], note[600], err[256];
    const board_t b = *start;
    int size = b.size;
    rule_t rule = (rule_t)b.rule;
    int model_rule;
    pthread_mutex_lock(&p->lock);
    bool have = play_spec(p, spec, sizeof spec, &model_rule, note, sizeof note, err, sizeof err);
    pthread_mutex_unlock(&p->lock);
    if (!have)
        return serve_error(f, 503, "%s", err);
    player_opts_t po;
    player_opts_default(&po);
    po.visits = p->o.visits;
    po.device = p->o.device;
    po.precision = p->o.precision;
    po.search = p->o.search;
    po.quiet = 1;
    po.cache_bytes = PLAY_CACHE_BYTES;
    po.stop = p->o.stop;
    player_t *pl = player_create(spec, rule, size, &po, err, sizeof err);
    if (!pl)
        return serve_error(f, 400, "%s", err);
    player_new_game(pl, &b);

    /* a slot: a free one, else the least recently used idle one */
    pthread_mutex_lock(&p->lock);
    play_game_t *g = NULL;
    for (int i = 0; i < p->o.max_games; i++) {
        play_game_t *c = &p->games[i];
        if (c->busy)
            continue;
        if (!c->used) {
            g = c;
            break;
        }
        if (!g || c->last_used < g->last_used)
            g = c;
    }
    player_t *old = NULL;
    if (g) {
        old = g->player;
        memset(g, 0, sizeof *g);
        g->used = g->busy = true;
        g->last_used = ++p->tick;
        snprintf(g->id, sizeof g->id, "%016" PRIx64, util_rng_next(&p->rng));
        g->board = b;
        g->human = human;
        g->player = pl;
        snprintf(g->model, sizeof g->model, "%s", spec);
        g->model_rule = model_rule;
        for (int i = 0; i < BOARD_CELLS; i++)
            g->black_wr[i] = NAN;
    }
    pthread_mutex_unlock(&p->lock);
    player_free(old);
    if (!g) {
        player_free(pl);
        return serve_error(f, 503, "all %d games are busy; try again", p->o.max_games);
    }
    return reply_release(p, g, f, play_model(p, g, f));
}

int serve_play_get(serve_play_t *p, const char *id, bool psq, FILE *f)
{
    int st;
    play_game_t *g = play_acquire(p, id, f, &st);
    if (!g)
        return st;
    if (!psq)
        return reply_release(p, g, f, 0);
    const char *base = strrchr(g->model, '/');
    base = base ? base + 1 : g->model;
    psq_write_board(f, &g->board, g->human == STONE_BLACK ? "human" : base,
                    g->human == STONE_BLACK ? base : "human");
    play_release(p, g);
    return 200;
}

int serve_play_move(serve_play_t *p, const char *id, const char *body, size_t n, FILE *f)
{
    char err[256];
    sj_val_t vx, vy;
    long x, y;
    if (sj_check(body, n, err, sizeof err) != 0)
        return serve_error(f, 400, "%s", err);
    if (!sj_get(body, n, "x", &vx) || !sj_get(body, n, "y", &vy))
        return serve_error(f, 400, "the body must be a JSON object {\"x\": X, \"y\": Y}");
    if (!sj_int(&vx, -1000000, 1000000, &x) || !sj_int(&vy, -1000000, 1000000, &y))
        return serve_error(f, 400, "x and y must be integers");
    int st;
    play_game_t *g = play_acquire(p, id, f, &st);
    if (!g)
        return st;
    board_t *b = &g->board;
    if (x < 0 || y < 0 || x >= b->size || y >= b->size) {
        st = serve_error(f, 400, "(%ld,%ld) is off the %dx%d board (x and y are 0..%d)", x, y,
                         b->size, b->size, b->size - 1);
        goto out_release;
    }
    int mv = (int)y * b->size + (int)x;
    if (!board_over(b) && b->to_move != g->human) {
        st = serve_error(f, 409, "it is the model's turn");
        goto out_release;
    }
    if (board_check_move(b, mv) != MOVE_OK) {
        st = play_refusal(b, mv, err, sizeof err);
        serve_error(f, st, "%s", err);
        goto out_release;
    }
    board_play(b, mv);
    g->black_wr[b->nmoves - 1] = NAN;
    player_notify(g->player, b, mv);
    st = play_model(p, g, f);
out_release:
    return reply_release(p, g, f, st);
}

int serve_play_undo(serve_play_t *p, const char *id, FILE *f)
{
    int st;
    play_game_t *g = play_acquire(p, id, f, &st);
    if (!g)
        return st;
    board_t *b = &g->board;
    if (b->nmoves == 0) {
        st = serve_error(f, 409, "no move to take back");
    } else {
        /* back to the person's previous turn: at least one ply */
        do
            board_undo(b);
        while (b->nmoves > 0 && b->to_move != g->human);
        if (b->to_move != g->human) {   /* the model opened the game: it moves again */
            player_new_game(g->player, b);
            st = play_model(p, g, f);
        } else {
            player_new_game(g->player, b);
            st = 0;
        }
        g->have_analysis = g->have_analysis && g->analysis_ply < b->nmoves;
    }
    return reply_release(p, g, f, st);
}

int serve_error(FILE *f, int status, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    fputs("{\"error\": ", f);
    util_json_write(f, msg);
    fputs("}", f);
    return status;
}
